"""Surface sessions re-run call by call: the same snapshots and the same failures, or the
first call that differs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio
import trio.testing
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from semledger._render import replay_verdict
from semledger.adapters import (
    AgentSurface,
    LocateError,
    LoggedSurface,
    NavigationError,
    SessionError,
    create_surface,
    snapshot_lines,
)
from semledger.adapters._surface_log import _line_changes
from semledger.eventlog import (
    MemoryRecorder,
    NewEvent,
    Recorder,
    SessionStarted,
    SqliteRecorder,
    SurfaceCalled,
)
from semledger.hosts import _surface_rerun, rerun_surface

ROOT = Path(__file__).resolve().parent.parent
COUNTER = "semledger.examples.counter:app"


async def _record(recorder: Recorder, name: str) -> None:
    config = {"adapter": "runtime", "app": COUNTER}
    logged = LoggedSurface(create_surface(config), recorder, name, "runtime", config=config)
    await logged.open({})
    for _ in range(3):
        snapshot = await logged.snapshot()
        increment = next(n.ref for n in snapshot.nodes if n.name == "Increment")
        await logged.act("click", increment)
    with pytest.raises(NavigationError):
        await logged.act("navigate", None, {"url": "https://example.com/"})
    with pytest.raises(LocateError):
        await logged.describe("r999")
    await logged.snapshot()
    await logged.close()


async def test_a_recorded_surface_session_re_runs_identically(tmp_path: Path) -> None:
    recorder = SqliteRecorder(tmp_path / "log.db")
    await _record(recorder, "s")
    report = await rerun_surface(recorder, "s")
    assert report.ok, report.divergence
    assert report.inputs >= 9


async def test_a_surface_that_answers_differently_is_reported_at_the_first_snapshot(
    tmp_path: Path,
) -> None:
    recorder = SqliteRecorder(tmp_path / "log.db")
    await _record(recorder, "s")
    sys.path.insert(0, str(ROOT / "tests" / "apps"))
    try:
        variant = {"adapter": "runtime", "app": "tests_variant:app"}
        report = await rerun_surface(recorder, "s", config=variant)
    finally:
        sys.path.remove(str(ROOT / "tests" / "apps"))
    assert not report.ok
    assert report.divergence is not None
    assert report.divergence.expected.startswith("snapshot with structural hash")
    # The renderings, line by line: the one count the variant shows differently.
    diff = report.divergence.diff
    assert diff[:2] == ("--- logged", "+++ replayed")
    assert [line for line in diff if line[:1] in "-+" and line[1:2] == " "] == [
        '-  - text "Count": 2 [ref=r2]',
        '+  - text "Count": 2 (two or more) [ref=r2]',
    ]


@given(
    st.lists(st.lists(st.sampled_from(["- a", "- b", "  - c", "", "- d [ref=1]"]), max_size=12))
)
def test_a_logged_snapshot_rendering_is_rebuilt_from_the_lines_changed(
    renderings: list[list[str]],
) -> None:
    lines: list[str] | None = None
    for number, rendering in enumerate(renderings):
        logged = (
            {"lines": rendering}
            if number == 0
            else {"lines_changed": _line_changes(renderings[number - 1], rendering)}
        )
        lines = snapshot_lines(logged, lines)
        assert lines == rendering


def test_semledger_replay_re_runs_a_surface_session(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    recorder = SqliteRecorder(db)
    trio.run(_record, recorder, "surface-1")
    recorder.close()
    result = subprocess.run(
        [sys.executable, "-m", "semledger", "replay", "surface-1", "--db", str(db)],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("replay of 'surface-1': identical — ")
    assert "calls made again, each answered as logged" in result.stdout
    assert "commits" not in result.stdout  # a surface session has calls, not commits


async def test_a_re_run_waits_as_the_agent_did_without_adding_up_every_call_s_own_time(
    monkeypatch: pytest.MonkeyPatch, autojump_clock: trio.testing.MockClock
) -> None:
    """Each call waited the whole logged gap from the end of the re-run's call before, which
    holds the call's own time too, so every call's time added up: after twenty clicks a page
    showing the seconds since it loaded read 9.2 where the agent had read 5.6."""
    recorded = MemoryRecorder()
    await _record(recorded, "s")
    # Logged a second and a half apart: the agent waited a second, each call took half.
    recorder = MemoryRecorder()
    recorder.append([NewEvent("s", r.seq, e, 1000 + 1.5 * r.seq) for r, e in recorded.events("s")])
    calls = [(r.at, e) for r, e in recorder.events("s") if isinstance(e, SurfaceCalled)]
    logged = [at for at, _ in calls]
    kinds = {(e.method, e.arguments.get("action")) for _, e in calls}
    made: list[tuple[float, float]] = []  # each call's start and end in the re-run
    call = _surface_rerun._call

    async def half_a_second(surface: AgentSurface, event: SurfaceCalled) -> Any:
        began = trio.current_time()
        await trio.sleep(0.5)
        try:
            return await call(surface, event)
        finally:
            made.append((began, trio.current_time()))

    monkeypatch.setattr(_surface_rerun, "_call", half_a_second)
    report = await rerun_surface(recorder, "s")
    assert report.ok, report.divergence
    assert len(made) == len(logged) > len(kinds) + 3
    pauses = [began - made[i][1] for i, (began, _) in enumerate(made[1:])]
    assert min(pauses) >= 1.0 - 1e-9  # the agent's wait, always
    behind = (made[-1][1] - made[0][1]) - (logged[-1] - logged[0])
    assert behind <= 0.5 * len(kinds) + 1e-9  # the first call of each kind, not every call


async def test_a_resumed_segment_waits_as_the_agent_did_whatever_the_one_before_took(
    monkeypatch: pytest.MonkeyPatch, autojump_clock: trio.testing.MockClock
) -> None:
    """The times of the first segment's calls were taken off the second's waits: after a
    slow read on one page, the read on the resumed page came before its timer fired."""
    logged = MemoryRecorder()
    await _killed_then_resumed(logged, "s")
    recorder = MemoryRecorder()  # its events logged a second and a half apart
    recorder.append([NewEvent("s", r.seq, e, 1000 + 1.5 * r.seq) for r, e in logged.events("s")])
    made: list[tuple[str, float, float]] = []  # each call: its method, start and end
    call = _surface_rerun._call

    async def slow_then_fast(surface: AgentSurface, event: SurfaceCalled) -> Any:
        began = trio.current_time()
        opened = sum(method == "open" for method, _, _ in made) + (event.method == "open")
        await trio.sleep(1.0 if opened == 1 else 0.0)  # the first segment's calls are slow
        try:
            return await call(surface, event)
        finally:
            made.append((event.method, began, trio.current_time()))

    monkeypatch.setattr(_surface_rerun, "_call", slow_then_fast)
    report = await rerun_surface(recorder, "s")
    assert report.ok, report.divergence
    second = [i for i, (method, _, _) in enumerate(made) if method == "open"][1]
    pause = made[second + 1][1] - made[second][2]
    assert pause == pytest.approx(1.5)  # the whole gap: this segment has timed nothing yet


async def test_an_open_that_fails_only_in_the_re_run_says_it_may_be_from_outside(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A page whose server was not running made the replay say DIVERGED at step 1, as if
    the page had changed."""
    recorder = MemoryRecorder()
    await _record(recorder, "s")
    call = _surface_rerun._call

    async def unreachable(surface: AgentSurface, event: SurfaceCalled) -> Any:
        if event.method == "open":
            raise SessionError("cannot open http://127.0.0.1:9/: net::ERR_CONNECTION_REFUSED")
        return await call(surface, event)

    monkeypatch.setattr(_surface_rerun, "_call", unreachable)
    report = await rerun_surface(recorder, "s")
    assert report.divergence is not None
    assert report.divergence.step == 1
    assert report.divergence.note == (
        "the re-run could not open what the session opened: a page whose server is not"
        " running, or an application that is not installed here, fails here, not what it"
        " does; start it and replay again"
    )


async def _segment(logged: LoggedSurface, clicks: int) -> None:
    await logged.open({})
    for _ in range(clicks):
        snapshot = await logged.snapshot()
        increment = next(n.ref for n in snapshot.nodes if n.name == "Increment")
        await logged.act("click", increment)
    await logged.snapshot()


async def _killed_then_resumed(recorder: MemoryRecorder, name: str) -> None:
    """A session whose first server was killed before it closed its surface, resumed by a
    second one that ran to the end."""
    config = {"adapter": "runtime", "app": COUNTER}
    scratch = MemoryRecorder()
    killed = LoggedSurface(create_surface(config), scratch, name, "runtime", config=config)
    await _segment(killed, 2)
    recorder.append([NewEvent(name, r.seq, event, r.at) for r, event in scratch.events(name)])
    resumed = LoggedSurface(create_surface(config), recorder, name, "runtime", config=config)
    await _segment(resumed, 1)
    await resumed.close()


async def test_a_resumed_surface_session_re_runs_each_segment_on_a_fresh_surface() -> None:
    recorder = MemoryRecorder()
    await _killed_then_resumed(recorder, "s")
    topics = [record.topic for record in recorder.read("s")]
    assert topics.count("SessionStarted") == 2
    report = await rerun_surface(recorder, "s")
    assert report.ok, report.divergence
    assert report.inputs == 11  # open, 2 x (snapshot, act), snapshot; open, snapshot, act, ...


async def test_a_resumed_surface_session_that_differs_is_reported_in_its_segment() -> None:
    recorder = MemoryRecorder()
    await _killed_then_resumed(recorder, "s")
    stored = list(recorder.events("s"))
    second = max(r.seq for r, event in stored if isinstance(event, SessionStarted))
    edited = MemoryRecorder()
    for record, event in stored:
        if record.seq == second:
            assert isinstance(event, SessionStarted)
            todo = {"adapter": "runtime", "app": "semledger.examples.todo:app"}
            event = attrs.evolve(event, params={**event.params, "config": todo})
        edited.append([NewEvent("s", record.seq, event, record.at)])
    report = await rerun_surface(edited, "s")
    assert report.divergence is not None
    # The second segment opened its own surface (the todo app), whose first snapshot differs.
    assert report.divergence.seq == second + 2
    assert report.divergence.expected.startswith("snapshot with structural hash")


GALLERY = {"adapter": "runtime", "app": "semledger.examples.gallery:app"}


async def _typed_password(recorder: MemoryRecorder) -> None:
    """A gallery session that types a password, then shows the field (one bullet a
    character)."""
    logged = LoggedSurface(create_surface(GALLERY), recorder, "g", "runtime", config=GALLERY)
    await logged.open({})
    snapshot = await logged.snapshot()
    password = next(n.ref for n in snapshot.nodes if n.native.get("password") == "true")
    await logged.act("type", password, {"text": "hunter22"})
    await logged.snapshot()
    await logged.close()


async def test_a_session_that_typed_a_password_re_runs_identically() -> None:
    """The log masks the typed text one bullet a character: typing "[redacted]" instead
    showed ten bullets where the live field showed eight."""
    recorder = MemoryRecorder()
    await _typed_password(recorder)
    report = await rerun_surface(recorder, "g")
    assert report.ok, report.divergence


def _last_snapshot_altered(recorder: MemoryRecorder) -> MemoryRecorder:
    """Session "g" of `recorder` with its last snapshot's hash changed: a divergence there."""
    events = [event for _r, event in recorder.events("g")]
    last = max(i for i, e in enumerate(events) if getattr(e, "method", None) == "snapshot")
    events[last] = attrs.evolve(events[last], snapshot_hash="0" * 64)
    altered = MemoryRecorder()
    altered.append([NewEvent("g", i + 1, event, 0.0) for i, event in enumerate(events)])
    return altered


async def test_a_divergence_after_a_redacted_call_names_that_call() -> None:
    recorder = MemoryRecorder()
    await _typed_password(recorder)
    report = await rerun_surface(_last_snapshot_altered(recorder), "g")
    assert report.divergence is not None
    assert report.divergence.note is not None
    assert report.divergence.note.startswith("call 3 typed text the log redacted")


async def test_a_divergence_after_a_password_read_blames_no_redacted_typing() -> None:
    """An act that read a password field is logged with its answer redacted; the note
    blamed it for a later divergence as "typed text the log redacted", though it typed
    nothing and the re-run sends the page what it sent."""
    recorder = MemoryRecorder()
    logged = LoggedSurface(create_surface(GALLERY), recorder, "g", "runtime", config=GALLERY)
    await logged.open({})
    snapshot = await logged.snapshot()
    password = next(n.ref for n in snapshot.nodes if n.native.get("password") == "true")
    await logged.act("read", password)
    await logged.snapshot()
    await logged.close()
    acts = [e for _r, e in recorder.events("g") if getattr(e, "method", "") == "act"]
    assert [e.arguments.get("redacted") for e in acts] == [True]
    report = await rerun_surface(_last_snapshot_altered(recorder), "g")
    assert report.divergence is not None
    assert report.divergence.note is None


def _ended_in_first_segment(
    recorder: MemoryRecorder,
    error_class: str = "SurfaceGoneError",
    error_message: str = "Target page, context or browser has been closed",
) -> tuple[MemoryRecorder, int]:
    """`recorder`'s session with the first segment's last snapshot failed (by default as a
    killed browser fails it); and that call's seq."""
    stored = list(recorder.events("s"))
    second = max(r.seq for r, event in stored if isinstance(event, SessionStarted))
    snapshots = [r.seq for r, e in stored if getattr(e, "method", "") == "snapshot"]
    last = max(seq for seq in snapshots if seq < second)
    edited = MemoryRecorder()
    for record, event in stored:
        if record.seq == last:
            event = attrs.evolve(
                event,
                result=None,
                error_class=error_class,
                error_message=error_message,
                snapshot_hash=None,
            )
        edited.append([NewEvent("s", record.seq, event, record.at)])
    return edited, last


async def test_a_surface_ended_from_outside_is_said_and_the_next_segment_is_re_run() -> None:
    """A session that lived through a killed browser was reported as diverged at the call
    that found it gone, and what the next server did was never re-run."""
    recorder = MemoryRecorder()
    await _killed_then_resumed(recorder, "s")
    edited, seq = _ended_in_first_segment(recorder)
    report = await rerun_surface(edited, "s")
    assert report.ok, report.divergence
    assert report.inputs == 11
    (said,) = report.unrepeated
    assert said.startswith(f"call 6 (log seq {seq}, snapshot) found what the session drove gone")
    assert "(Target page, context or browser has been closed)" in said
    console = Console(width=300, record=True)
    console.print(replay_verdict(report))
    shown = console.export_text()
    assert shown.startswith("replay of 's': identical — 11 calls made again")
    assert f"  note: call 6 (log seq {seq}, snapshot) found" in shown


async def test_after_a_surface_ended_from_outside_a_later_difference_is_reported() -> None:
    recorder = MemoryRecorder()
    await _killed_then_resumed(recorder, "s")
    edited, _seq = _ended_in_first_segment(recorder)
    events = [(r, e) for r, e in edited.events("s")]
    last = max(r.seq for r, e in events if getattr(e, "method", "") == "snapshot")
    altered = MemoryRecorder()
    for record, event in events:
        if record.seq == last:
            event = attrs.evolve(event, snapshot_hash="0" * 64)
        altered.append([NewEvent("s", record.seq, event, record.at)])
    report = await rerun_surface(altered, "s")
    assert report.divergence is not None
    assert report.divergence.seq == last
    assert len(report.unrepeated) == 1


@pytest.mark.parametrize(
    ("error_class", "error_message"),
    [
        ("SessionError", "the application shows nothing: its tree is empty"),
        ("LocateError", "no element has that ref"),
    ],
)
async def test_a_failure_of_the_surface_itself_that_the_re_run_does_not_repeat_diverges(
    error_class: str, error_message: str
) -> None:
    """An app or a page that ended its own session (an empty tree), then changed: a re-run
    that does not end there differs, however the session ended."""
    recorder = MemoryRecorder()
    await _killed_then_resumed(recorder, "s")
    edited, seq = _ended_in_first_segment(recorder, error_class, error_message)
    report = await rerun_surface(edited, "s")
    assert report.divergence is not None
    assert report.divergence.seq == seq
    assert report.divergence.expected == f"snapshot to fail with {error_class}"
    assert not report.unrepeated


async def test_a_call_that_found_the_surface_gone_and_fails_otherwise_in_a_re_run() -> None:
    """A browser killed with a native dialog open: the live snapshot found it gone, the
    re-run's, on a page showing that dialog, fails with a DialogError as such a snapshot
    always does; it was reported as a divergence, though what the live call would have
    answered cannot be known."""
    recorder = MemoryRecorder()
    await _record(recorder, "s")
    stored = list(recorder.events("s"))
    (seq,) = [r.seq for r, e in stored if getattr(e, "method", "") == "describe"]
    edited = MemoryRecorder()
    for record, event in stored:
        if record.seq == seq:
            event = attrs.evolve(
                event,
                error_class="SurfaceGoneError",
                error_message="the browser is gone: Chromium crashed or was killed",
            )
        edited.append([NewEvent("s", record.seq, event, record.at)])
    report = await rerun_surface(edited, "s")
    assert report.ok, report.divergence
    (said,) = report.unrepeated
    assert said.startswith(f"call 9 (log seq {seq}, describe) found what the session drove gone")
    assert "; in the re-run it was there, and the call failed with LocateError (" in said


async def test_a_segment_that_could_not_open_and_opens_in_the_re_run_is_said() -> None:
    """A session whose page server was down when a server took it up ('could not open', and
    served again once the server was back): its re-run, with the page served, reported
    DIVERGED at that open, so no such session ever re-ran identically."""
    recorder = MemoryRecorder()
    await _killed_then_resumed(recorder, "s")
    stored = list(recorder.events("s"))
    second = max(r.seq for r, event in stored if isinstance(event, SessionStarted))
    refused = "cannot open http://127.0.0.1:8765/: net::ERR_CONNECTION_REFUSED"
    edited = MemoryRecorder()
    kept = []
    for record, event in stored:
        if record.seq < second and isinstance(event, SurfaceCalled):
            if event.method != "open":
                continue  # the first server served nothing
            event = attrs.evolve(
                event, result=None, error_class="SessionError", error_message=refused
            )
        kept.append((record, event))
    edited.append([NewEvent("s", i + 1, event, r.at) for i, (r, event) in enumerate(kept)])
    report = await rerun_surface(edited, "s")
    assert report.ok, report.divergence
    (said,) = report.unrepeated
    assert said.startswith(f"call 1 (log seq 2, open) could not open in the session ({refused})")
