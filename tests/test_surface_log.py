"""Logged surface sessions: every call of any adapter on the record, and in the audit."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio

from semledger.actors import LogWriter, SessionEndedError, SessionMismatchError
from semledger.adapters import (
    ActResult,
    CheckResult,
    LocateError,
    LoggedSurface,
    NavigationError,
    SessionError,
    Snapshot,
    create_surface,
)
from semledger.eventlog import (
    REDACTED,
    CorruptSummaryError,
    InconsistentLogError,
    MemoryRecorder,
    NewEvent,
    SessionClaimedError,
    SessionEnded,
    SessionStarted,
    SqliteRecorder,
    SurfaceCalled,
)
from semledger.replay import audit

ROOT = Path(__file__).resolve().parent.parent
COUNTER = "semledger.examples.counter:app"


def _surface(app: str = COUNTER) -> object:
    return create_surface({"adapter": "runtime", "app": app})


async def _drive(logged: LoggedSurface) -> None:
    await logged.open({})
    snapshot = await logged.snapshot()
    increment = next(n.ref for n in snapshot.nodes if n.name == "Increment")
    await logged.act("click", increment)
    with pytest.raises(NavigationError):
        await logged.act("navigate", None, {"url": "https://example.com/"})
    with pytest.raises(LocateError):
        await logged.describe("r999")
    assert await logged.locate({"by": "role", "role": "button", "name": "Reset"})
    await logged.snapshot()
    await logged.close()
    await logged.close()


async def test_a_surface_session_is_a_session_of_the_log() -> None:
    recorder = MemoryRecorder()
    logged = LoggedSurface(_surface(), recorder, "s1", "runtime", app=COUNTER)  # type: ignore[arg-type]
    await _drive(logged)
    events = [event for _record, event in recorder.events("s1")]
    assert isinstance(events[0], SessionStarted)
    assert (events[0].app, events[0].surface) == (COUNTER, "runtime")
    assert isinstance(events[-1], SessionEnded)
    calls = [e for e in events if isinstance(e, SurfaceCalled)]
    assert [c.method for c in calls] == [
        "open", "snapshot", "act", "act", "describe", "locate", "snapshot", "close",
    ]  # fmt: skip
    snapshots = [c for c in calls if c.method == "snapshot"]
    assert all(
        c.snapshot_hash and c.result and c.result["hash"] == c.snapshot_hash for c in snapshots
    )
    navigate = calls[3]
    assert navigate.arguments["args"] == {"url": "https://example.com/"}
    assert (navigate.error_class, navigate.result) == ("NavigationError", None)
    assert calls[4].error_class == "LocateError"
    assert calls[5].result is not None
    assert len(calls[5].result["refs"]) == 1
    summary = recorder.sessions()[0]
    assert (summary.surface, summary.ended) == ("runtime", True)


async def test_the_audit_lists_a_surface_sessions_acts() -> None:
    recorder = MemoryRecorder()
    logged = LoggedSurface(_surface(), recorder, "s1", "runtime")  # type: ignore[arg-type]
    await _drive(logged)
    entries = audit(recorder, "s1")
    assert [(e.action["kind"], e.outcome) for e in entries] == [
        ("click", "ok"), ("navigate", "NavigationError"),
    ]  # fmt: skip
    assert entries[0].target["kind"] == "ref"
    assert entries[0].generation == 1
    assert entries[1].details["message"]


async def test_a_second_logged_surface_for_a_live_session_is_refused_until_it_closes() -> None:
    recorder = MemoryRecorder()
    first = LoggedSurface(_surface(), recorder, "s1", "runtime")  # type: ignore[arg-type]
    await first.open({})
    second = LoggedSurface(_surface(), recorder, "s1", "runtime")  # type: ignore[arg-type]
    with pytest.raises(SessionClaimedError):
        await second.open({})
    before = list(recorder.read("s1"))
    await first.snapshot()
    await first.close()
    assert len(list(recorder.read("s1"))) == len(before) + 3  # snapshot, close, SessionEnded
    third = LoggedSurface(_surface(), recorder, "s1", "runtime")  # type: ignore[arg-type]
    await third.open({})
    await third.close()
    events = [event for _record, event in recorder.events("s1")]
    assert sum(isinstance(e, SessionStarted) for e in events) == 2
    assert isinstance(events[-1], SessionEnded)


async def test_a_session_through_the_log_writer_continues_after_its_events(tmp_path: Path) -> None:
    recorder = SqliteRecorder(tmp_path / "log.db")
    try:
        async with trio.open_nursery() as nursery:
            writer = await nursery.start(LogWriter(recorder).run)
            await _drive(LoggedSurface(_surface(), writer, "w", "runtime"))  # type: ignore[arg-type]
            again = LoggedSurface(_surface(), writer, "w", "runtime")  # type: ignore[arg-type]
            await again.open({})
            await again.close()
            writer.close()
        topics = [record.topic for record in recorder.read("w")]
        assert topics.count("SessionStarted") == 2
        assert topics[-1] == "SessionEnded"
    finally:
        recorder.close()


async def _gallery(recorder: MemoryRecorder) -> tuple[LoggedSurface, Snapshot, str]:
    """A logged gallery session, its first snapshot and the ref of its password field."""
    logged = LoggedSurface(
        _surface("semledger.examples.gallery:app"),
        recorder,
        "g",
        "runtime",  # type: ignore[arg-type]
    )
    await logged.open({})
    snapshot = await logged.snapshot()
    password = next(n.ref for n in snapshot.nodes if n.native.get("password") == "true")
    return logged, snapshot, password


async def test_text_typed_into_a_password_field_is_redacted() -> None:
    recorder = MemoryRecorder()
    logged, snapshot, password = await _gallery(recorder)
    username = next(
        n.ref for n in snapshot.nodes if n.native.get("automationId") == "gallery.username"
    )
    await logged.act("type", password, {"text": "hunter22"})
    await logged.act("type", username, {"text": "ada"})
    await logged.close()
    events = [e for _r, e in recorder.events("g")]
    acts = [e for e in events if isinstance(e, SurfaceCalled) and e.method == "act"]
    assert acts[0].arguments["args"]["text"] == "\u2022" * 8  # as long as what was typed
    assert acts[0].arguments["redacted"] is True
    assert acts[1].arguments["args"]["text"] == "ada"
    assert "hunter22" not in repr([e for _r, e in recorder.events("g")])


def test_semledger_audit_shows_a_surface_session(tmp_path: Path) -> None:
    db = tmp_path / "log.db"

    async def record() -> None:
        recorder = SqliteRecorder(db)
        try:
            await _drive(LoggedSurface(_surface(), recorder, "surf", "runtime"))  # type: ignore[arg-type]
        finally:
            recorder.close()

    trio.run(record)
    result = subprocess.run(
        [sys.executable, "-m", "semledger", "audit", "surf", "--db", str(db), "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    audited = json.loads(result.stdout)
    actions = audited["actions"]
    assert [a["action"]["kind"] for a in actions] == ["click", "navigate"]
    assert actions[1]["outcome"] == "NavigationError"
    assert (audited["end"]["state"], audited["end"]["reason"]) == ("ended", "closed")


async def test_a_partial_snapshot_does_not_forget_a_password_field_it_left_out() -> None:
    recorder = MemoryRecorder()
    logged, snapshot, password = await _gallery(recorder)
    first = [n.ref for n in snapshot.nodes].index(password)
    assert first > 1
    await logged.snapshot(max_nodes=1)  # the field is beyond the limit
    await logged.act("type", password, {"text": "hunter22"})
    await logged.close()
    assert "hunter22" not in repr([e for _r, e in recorder.events("g")])


async def test_an_interactive_only_snapshot_does_not_forget_a_password_field_it_left_out() -> None:
    """Filtered is partial too: a field the filter leaves out stays redacted."""
    recorder = MemoryRecorder()
    logged, _, password = await _gallery(recorder)
    surface: Any = logged.surface
    whole = surface.snapshot

    async def filtered(**options: Any) -> Snapshot:
        taken = await whole(**options)
        if options.get("interactive_only"):
            kept = tuple(n for n in taken.nodes if n.ref != password)
            return attrs.evolve(taken, nodes=kept)
        return taken

    surface.snapshot = filtered
    await logged.snapshot(interactive_only=True)  # a surface that leaves the field out
    await logged.act("type", password, {"text": "hunter22"})
    await logged.close()
    assert "hunter22" not in repr([e for _r, e in recorder.events("g")])


async def test_what_a_read_or_a_check_sees_of_a_password_field_is_redacted() -> None:
    """A web page's input answers a read with what was typed: the log keeps it out."""
    recorder = MemoryRecorder()
    logged, snapshot, password = await _gallery(recorder)
    username = next(
        n.ref for n in snapshot.nodes if n.native.get("automationId") == "gallery.username"
    )
    typed: dict[str, str] = {}
    surface: Any = logged.surface

    async def read(kind: str, ref: str | None = None, name: str | None = None) -> str:
        return typed.get(ref or "", "")

    async def check(predicate: Any, subject: str, ref: str | None = None) -> CheckResult:
        value = typed.get(ref or "", "")
        return CheckResult(ok=value == predicate["value"], actual=value, message=f"is {value}")

    surface.read, surface.check = read, check
    typed.update({password: "hunter22", username: "ada"})
    assert await logged.read("value", password) == "hunter22"  # the agent still sees it
    assert await logged.read("value", username) == "ada"
    checked = await logged.check({"kind": "valueEquals", "value": "hunter22"}, "ref", password)
    assert checked.ok
    assert (await logged.check({"kind": "valueEquals", "value": "ada"}, "ref", username)).ok
    await logged.close()
    calls = [e for _r, e in recorder.events("g") if isinstance(e, SurfaceCalled)]
    assert "hunter22" not in repr(calls)
    reads = [c for c in calls if c.method == "read"]
    checks = [c for c in calls if c.method == "check"]
    assert [c.result for c in reads] == [{"value": REDACTED}, {"value": "ada"}]
    assert [c.arguments.get("redacted") for c in reads + checks] == [True, None, True, None]
    assert checks[0].arguments["predicate"] == {"kind": "valueEquals", "value": REDACTED}
    assert checks[0].result == {"ok": True, "actual": REDACTED, "message": None}
    assert checks[1].result == {"ok": True, "actual": "ada", "message": "is ada"}


async def test_an_operator_who_opts_in_logs_what_is_read_of_a_password_field() -> None:
    recorder = MemoryRecorder()
    logged, _, password = await _gallery(recorder)
    logged.redact_passwords = False
    surface: Any = logged.surface

    async def read(kind: str, ref: str | None = None, name: str | None = None) -> str:
        return "hunter22"

    surface.read = read
    await logged.read("value", password)
    await logged.close()
    assert "hunter22" in repr([e for _r, e in recorder.events("g")])


async def _keyboard_session() -> tuple[LoggedSurface, MemoryRecorder, str, str, Any]:
    """A logged gallery session whose acts do nothing, for what they log."""
    recorder = MemoryRecorder()
    logged, snapshot, password = await _gallery(recorder)
    username = next(
        n.ref for n in snapshot.nodes if n.native.get("automationId") == "gallery.username"
    )
    surface: Any = logged.surface

    async def act(*_args: Any) -> None:
        return None

    surface.act = act
    return logged, recorder, password, username, surface


@pytest.mark.parametrize(
    ("key", "logged"),
    [("h", REDACTED), ("Shift+U", REDACTED), ("+", REDACTED), ("Enter", "Enter"),
     ("Control+Enter", "Control+Enter")],
)  # fmt: skip
async def test_a_character_key_pressed_into_a_password_field_is_redacted(
    key: str, logged: str
) -> None:
    logged_surface, recorder, password, username, _ = await _keyboard_session()
    await logged_surface.act("press", password, {"key": key})
    await logged_surface.act("press", username, {"key": key})
    await logged_surface.close()
    acts = [e for _r, e in recorder.events("g") if isinstance(e, SurfaceCalled)][2:4]
    assert [a.arguments["args"]["key"] for a in acts] == [logged, key]
    assert [a.arguments.get("redacted") for a in acts] == [logged == REDACTED or None, None]


BULLETS_8 = "\u2022" * 8
"""How "hunter22" typed where it may be a password is logged: one bullet a character."""


def _typed(recorder: MemoryRecorder) -> list[Any]:
    """What each ref-less act was logged as typing."""
    acts = [e for _r, e in recorder.events("g") if isinstance(e, SurfaceCalled)]
    return [
        a.arguments["args"].get("text", a.arguments["args"].get("key"))
        for a in acts
        if a.method == "act" and a.arguments["ref"] is None
    ]


async def test_keys_sent_without_a_ref_after_focusing_a_password_field_are_redacted() -> None:
    logged, recorder, password, username, _ = await _keyboard_session()
    await logged.act("click", password)
    await logged.act("type", None, {"text": "hunter22"})
    await logged.act("press", None, {"key": "x"})
    await logged.act("click", username)
    await logged.act("type", None, {"text": "ada"})
    await logged.act("press", None, {"key": "Tab"})  # the focus may now be anywhere
    await logged.act("type", None, {"text": "hunter22"})
    await logged.close()
    assert _typed(recorder) == [BULLETS_8, REDACTED, "ada", "Tab", BULLETS_8]


async def test_keys_sent_without_a_ref_follow_a_focus_action() -> None:
    logged, recorder, password, username, _ = await _keyboard_session()
    await logged.act("focus", password)
    await logged.act("type", None, {"text": "hunter22"})
    await logged.act("focus", username)
    await logged.act("type", None, {"text": "ada"})
    await logged.close()
    assert _typed(recorder) == [BULLETS_8, "ada"]


async def test_a_snapshot_that_shows_the_focus_elsewhere_lets_keys_be_logged_again() -> None:
    logged, recorder, password, username, surface = await _keyboard_session()
    whole = surface.snapshot

    async def focused_on_username(**options: Any) -> Snapshot:
        taken = await whole(**options)
        nodes = tuple(
            attrs.evolve(n, states=(*n.states, "focused")) if n.ref == username else n
            for n in taken.nodes
        )
        return attrs.evolve(taken, nodes=nodes)

    await logged.act("click", password)
    await logged.act("press", None, {"key": "Tab"})
    await logged.act("type", None, {"text": "secret"})
    surface.snapshot = focused_on_username
    await logged.snapshot()
    await logged.act("type", None, {"text": "ada"})
    await logged.close()
    assert _typed(recorder) == ["Tab", "\u2022" * 6, "ada"]


async def test_typing_a_host_judges_later_is_masked_if_the_snapshot_after_shows_a_password() -> (
    None
):
    """A page can make a field a password field as it is typed into: the typing was logged as
    judged on the snapshot before it, in clear. Within ``typing_judged_later`` it is logged
    with the next snapshot's event, before it, masked if that snapshot shows a password."""
    logged, recorder, _password, username, surface = await _keyboard_session()
    whole = surface.snapshot

    async def username_a_password(**options: Any) -> Snapshot:
        taken = await whole(**options)
        nodes = tuple(
            attrs.evolve(n, native={**n.native, "password": "true"}) if n.ref == username else n
            for n in taken.nodes
        )
        return attrs.evolve(taken, nodes=nodes)

    def calls() -> list[tuple[str, Any]]:
        return [
            (e.method, e.arguments["args"].get("text") if e.method == "act" else None)
            for _r, e in recorder.events("g")
            if isinstance(e, SurfaceCalled)
        ][2:]  # after the open and the first snapshot

    with logged.typing_judged_later():
        await logged.act("type", username, {"text": "ada"})
        assert calls() == []  # answered, logged with the next event
        await logged.snapshot()
        await logged.act("type", username, {"text": "hunter22"})
        surface.snapshot = username_a_password
        await logged.snapshot()
    await logged.act("type", username, {"text": "hunter22"})  # known now: masked at once
    await logged.close()
    assert calls() == [
        ("act", "ada"), ("snapshot", None), ("act", BULLETS_8), ("snapshot", None),
        ("act", BULLETS_8), ("close", None),
    ]  # fmt: skip
    assert "hunter22" not in repr([e for _r, e in recorder.events("g")])


@pytest.mark.parametrize(
    ("action", "key"), [("press", "Tab"), ("keyDown", "Tab"), ("press", "Enter")]
)
async def test_keys_sent_without_a_ref_after_a_key_that_moves_on_from_a_field_are_redacted(
    action: str, key: str
) -> None:
    """A Tab (an Enter, an arrow) pressed in a field by its ref may move the focus on, into
    the password field; a character key pressed there keeps it in the field."""
    logged, recorder, _password, username, _ = await _keyboard_session()
    await logged.act("type", username, {"text": "ad"})
    await logged.act("press", username, {"key": "a"})
    await logged.act("type", None, {"text": "-lovelace"})
    await logged.act(action, username, {"key": key})
    await logged.act("type", None, {"text": "hunter22"})
    await logged.close()
    assert _typed(recorder) == ["-lovelace", BULLETS_8]


async def test_what_an_act_reads_of_a_password_field_is_redacted_and_so_is_the_result_after() -> (
    None
):
    """A web page answers ``act("read")`` of an input with its value, and keeps the answer
    for ``read("result")``: both stay out of the log until an act answers anew."""
    recorder = MemoryRecorder()
    logged, snapshot, password = await _gallery(recorder)
    username = next(
        n.ref for n in snapshot.nodes if n.native.get("automationId") == "gallery.username"
    )
    values = {password: "hunter22", username: "ada", None: "2"}
    answered: list[object] = [None]
    surface: Any = logged.surface

    async def act(action: str, ref: str | None = None, *_args: Any) -> ActResult:
        if action in ("read", "evaluate"):
            answered[0] = values[ref]
            return ActResult(result=values[ref])
        return ActResult()

    async def read(kind: str, ref: str | None = None, name: str | None = None) -> object:
        return answered[0]

    surface.act, surface.read = act, read
    assert (await logged.act("read", password)).result == "hunter22"  # the agent sees it
    assert await logged.read("result") == "hunter22"
    await logged.act("click", username)  # answers nothing: the result is still the password
    await logged.read("result")
    await logged.act("read", username)
    await logged.read("result")
    await logged.act("evaluate", password, {"script": "(field) => field.value"})
    await logged.read("result")
    await logged.act("evaluate", None, {"script": "1 + 1"})
    await logged.read("result")
    await logged.close()
    calls = [e for _r, e in recorder.events("g") if isinstance(e, SurfaceCalled)][2:-1]
    assert "hunter22" not in repr(calls)
    assert [
        (c.result or {}).get("result" if c.method == "act" else "value")
        for c in calls
        if c.method == "read" or c.arguments["action"] != "click"
    ] == [REDACTED, REDACTED, REDACTED, "ada", "ada", REDACTED, REDACTED, "2", "2"]
    assert [c.arguments.get("redacted") for c in calls] == [
        True, True, None, True, None, None, True, True, None, None,
    ]  # fmt: skip


GALLERY = "semledger.examples.gallery:app"


async def test_what_is_typed_into_or_read_of_a_located_field_no_snapshot_showed_is_redacted() -> (
    None
):
    """A ref `locate` found may be a password field: until a snapshot or a description
    shows it is not one, what is typed into it or read of it, and typed without a ref once
    it has the focus, stays out of the log."""
    recorder = MemoryRecorder()
    logged = LoggedSurface(_surface(GALLERY), recorder, "g", "runtime")  # type: ignore[arg-type]
    await logged.open({})
    [password] = await logged.locate({"by": "automationId", "value": "gallery.password"})
    [username] = await logged.locate({"by": "automationId", "value": "gallery.username"})
    surface: Any = logged.surface

    async def act(*_args: Any) -> None:
        return None

    async def read(kind: str, ref: str | None = None, name: str | None = None) -> str:
        return "hunter22"

    surface.act, surface.read = act, read
    await logged.act("type", password, {"text": "hunter22"})
    await logged.read("value", password)
    await logged.act("click", password)
    await logged.act("type", None, {"text": "hunter22"})
    await logged.describe(password)  # a password field, as described
    await logged.act("type", password, {"text": "hunter22"})
    await logged.describe(username)  # a plain field, as described
    await logged.act("type", username, {"text": "ada"})
    await logged.act("type", None, {"text": "-lovelace"})
    await logged.close()
    calls = [e for _r, e in recorder.events("g") if isinstance(e, SurfaceCalled)]
    assert "hunter22" not in repr(calls)
    typing = [c for c in calls if c.method == "act" and c.arguments["action"] == "type"]
    typed = [c.arguments["args"]["text"] for c in typing]
    assert typed == [BULLETS_8, BULLETS_8, BULLETS_8, "ada", "-lovelace"]


async def test_keys_sent_without_a_ref_on_a_page_without_password_fields_are_logged() -> None:
    recorder = MemoryRecorder()
    logged = LoggedSurface(_surface(), recorder, "c", "runtime")  # type: ignore[arg-type]
    await logged.open({})
    await logged.snapshot()
    surface: Any = logged.surface

    async def act(*_args: Any) -> None:
        return None

    surface.act = act
    await logged.act("navigate", None, {"url": "https://example.com/"})
    await logged.act("type", None, {"text": "hello"})
    await logged.close()
    acts = [e for _r, e in recorder.events("c") if isinstance(e, SurfaceCalled)]
    assert acts[-2].arguments["args"]["text"] == "hello"


async def test_after_a_button_keys_sent_without_a_ref_are_redacted_on_a_page_with_a_password() -> (
    None
):
    """A button's handler may move the focus anywhere, into the password field too."""
    logged, recorder, _password, username, _ = await _keyboard_session()
    snapshot = await logged.snapshot()
    button = next(n.ref for n in snapshot.nodes if n.role == "button")
    await logged.act("click", username)
    await logged.act("type", None, {"text": "ada"})
    await logged.act("click", button)
    await logged.act("type", None, {"text": "hunter22"})
    await logged.close()
    assert _typed(recorder) == ["ada", BULLETS_8]


async def test_after_a_restore_keys_sent_without_a_ref_are_redacted_until_the_focus_is_known() -> (
    None
):
    logged, recorder, _password, username, surface = await _keyboard_session()

    async def restore(_state: Any) -> None:
        return None

    surface.restore = restore
    await logged.act("click", username)
    await logged.restore({"url": "about:blank"})
    await logged.act("type", None, {"text": "hunter22"})
    await logged.act("click", username)
    await logged.act("type", None, {"text": "ada"})
    await logged.close()
    assert _typed(recorder) == [BULLETS_8, "ada"]


TODO = "semledger.examples.todo:app"


async def _recorded(recorder: MemoryRecorder, name: str, adapter: str, app: str) -> None:
    """A closed surface session `name` of `adapter` on `app`, as a first server left it."""
    logged = LoggedSurface(_surface(), recorder, name, adapter, app=app)  # type: ignore[arg-type]
    await logged.open({})
    await logged.close()


async def _refusal(recorder: MemoryRecorder, app: str) -> str:
    """Why serving session ``s`` as a runtime surface on `app` is refused; nothing written."""
    before = list(recorder.read("s"))
    logged = LoggedSurface(_surface(), recorder, "s", "runtime", app=app)  # type: ignore[arg-type]
    with pytest.raises(SessionMismatchError) as refused:
        await logged.open({})
    assert list(recorder.read("s")) == before
    return str(refused.value)


@pytest.mark.parametrize(
    ("adapter", "app", "was"),
    [
        ("web", COUNTER, f"a web surface session of {COUNTER}"),
        ("runtime", TODO, f"a runtime surface session of {TODO}"),
    ],
)
async def test_a_surface_session_is_not_resumed_as_another_adapters_or_apps(
    adapter: str, app: str, was: str
) -> None:
    recorder = MemoryRecorder()
    await _recorded(recorder, "s", adapter, app)
    assert await _refusal(recorder, COUNTER) == (
        f"session 's' was started as {was}; it cannot be resumed as a runtime surface"
        f" session of {COUNTER}"
    )
    again = LoggedSurface(_surface(), recorder, "s", adapter, app=app)  # type: ignore[arg-type]
    await again.open({})  # the refusal let go of the session
    await again.close()


class _Unopenable:
    """A surface whose application cannot be started: open raises, as a wrong --launch."""

    def __init__(self) -> None:
        self._inner = _surface()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def open(self, init: object) -> None:
        raise SessionError("no such program")


async def _unopened(recorder: MemoryRecorder, app: str) -> None:
    """A start of session ``s`` on `app` whose surface could not open."""
    logged = LoggedSurface(_Unopenable(), recorder, "s", "runtime", app=app)  # type: ignore[arg-type]
    with pytest.raises(SessionError):
        await logged.open({})
    await logged.close()


async def test_a_surface_session_that_could_not_open_is_served_again_with_its_command_put_right(
) -> None:
    """Its first start named the command that failed, and every other was refused as
    another application's: the session could only be ended and another named."""
    recorder = MemoryRecorder()
    await _unopened(recorder, TODO)
    await _recorded(recorder, "s", "runtime", COUNTER)  # put right: it opens
    await _recorded(recorder, "s", "runtime", COUNTER)  # and is resumed as that one
    other = "semledger.examples.gallery:app"
    assert await _refusal(recorder, other) == (
        f"session 's' was last opened as a runtime surface session of {COUNTER}; it cannot"
        f" be resumed as a runtime surface session of {other}"
    )
    opened = [e for _r, e in recorder.events("s") if getattr(e, "method", "") == "open"]
    assert [e.error_class for e in opened] == ["SessionError", None, None]


@pytest.mark.parametrize(("cut_from", "holds"), [(3, "2"), (1, "none")])
async def test_a_surface_session_whose_log_was_cut_is_not_resumed_and_nothing_is_written(
    tmp_path: Path, cut_from: int, holds: str
) -> None:
    """Its next call was logged under a seq the log had used; with every event cut, the
    session was started again as a new one over what its summary still listed."""
    db = tmp_path / "log.db"
    with SqliteRecorder(db) as recorder:
        logged = LoggedSurface(_surface(), recorder, "s", "runtime", app=COUNTER)  # type: ignore[arg-type]
        await _drive(logged)
        await logged.close()
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM events WHERE seq >= ?", (cut_from,))
    conn.close()
    with SqliteRecorder(db) as recorder:
        counted = recorder.summary("s")
        before = list(recorder.read("s"))
        again = LoggedSurface(_surface(), recorder, "s", "runtime", app=COUNTER)  # type: ignore[arg-type]
        with pytest.raises(CorruptSummaryError, match=f"where the log holds {holds} "):
            await again.open({})
        assert list(recorder.read("s")) == before
        assert recorder.summary("s") == counted
        with recorder.claim("s"):  # the refusal let go of the session
            pass


async def test_a_surface_session_whose_last_event_was_relabelled_is_refused_and_let_go(
    tmp_path: Path,
) -> None:
    """Refused for the missing event, the claim was kept: the session stayed claimed by a
    surface that would never serve it."""
    db = tmp_path / "log.db"
    with SqliteRecorder(db) as recorder:
        logged = LoggedSurface(_surface(), recorder, "s", "runtime", app=COUNTER)  # type: ignore[arg-type]
        await _drive(logged)
        await logged.close()
        last = recorder.summary("s").events  # type: ignore[union-attr]
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE events SET seq = 40 WHERE session = 's' AND seq = ?", (last,))
    conn.close()
    with SqliteRecorder(db) as recorder:
        again = LoggedSurface(_surface(), recorder, "s", "runtime", app=COUNTER)  # type: ignore[arg-type]
        with pytest.raises(InconsistentLogError, match=f"event {last}: missing"):
            again.claim()
        with recorder.claim("s"):  # the refusal let go of the session
            pass


async def test_an_app_session_is_not_resumed_as_a_surface_session() -> None:
    recorder = MemoryRecorder()
    app_start = SessionStarted(COUNTER, "runtime", {}, True)  # what an app session begins with
    recorder.append([NewEvent("s", 1, app_start, 0.0)])
    logged = LoggedSurface(_surface(), recorder, "s", "runtime", app=COUNTER)  # type: ignore[arg-type]
    with pytest.raises(SessionMismatchError, match=f"started as an app session of {COUNTER}"):
        await logged.snapshot()
    assert [event for _r, event in recorder.events("s")] == [app_start]


async def test_a_surface_session_its_operator_ended_is_not_resumed() -> None:
    """As an app session is not (`semledger end`): the same refusal, nothing written."""
    recorder = MemoryRecorder()
    await _recorded(recorder, "s", "runtime", COUNTER)
    head = recorder.head("s")
    assert head is not None
    ended = SessionEnded("ended by the operator", by="operator")
    recorder.append([NewEvent("s", head.seq + 1, ended, 0.0)])
    before = list(recorder.read("s"))
    logged = LoggedSurface(_surface(), recorder, "s", "runtime", app=COUNTER)  # type: ignore[arg-type]
    with pytest.raises(SessionEndedError) as refused:
        await logged.open({})
    assert str(refused.value) == (
        "session 's' was ended for good (ended by the operator) and is not served"
        " again: serve a session of another name"
    )
    assert list(recorder.read("s")) == before


async def test_a_surface_session_of_the_same_adapter_and_app_resumes_as_a_new_segment() -> None:
    recorder = MemoryRecorder()
    await _recorded(recorder, "s", "runtime", COUNTER)
    logged = LoggedSurface(_surface(), recorder, "s", "runtime", app=COUNTER)  # type: ignore[arg-type]
    await logged.open({})
    await logged.close()
    events = [event for _r, event in recorder.events("s")]
    starts = [i for i, event in enumerate(events) if isinstance(event, SessionStarted)]
    assert starts == [0, 4]
    assert isinstance(events[5], SurfaceCalled)
    assert events[5].method == "open"


def test_serve_adapter_refuses_a_session_an_app_recorded_and_logs_nothing(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.db"

    def serve(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "semledger", "serve", *args, "--db", str(db), "--session", "s"],
            cwd=ROOT, input="", capture_output=True, text=True, check=False, timeout=60,
        )  # fmt: skip

    assert serve(COUNTER).returncode == 0
    recorder = SqliteRecorder(db)
    try:
        before = list(recorder.read("s"))
    finally:
        recorder.close()
    refused = serve("--adapter", "runtime", "--app", COUNTER)
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.strip().splitlines() == [
        f"semledger: session 's' was started as an app session of {COUNTER}; it cannot be"
        f" resumed as a runtime surface session of {COUNTER}"
    ]
    recorder = SqliteRecorder(db)
    try:
        assert list(recorder.read("s")) == before
    finally:
        recorder.close()
