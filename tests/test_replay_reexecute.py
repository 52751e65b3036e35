"""Re-execution: identical replays, divergences with node-level diffs, crashes reproduced at
their step, hash-seed independence, and exported regression tests."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import attrs
import pytest
from rich.console import Console

from semledger._render import replay_verdict
from semledger.actors import MessageCodecError
from semledger.eventlog import (
    GENESIS,
    ActionRejected,
    ActionRequested,
    Committed,
    NewEvent,
    SessionCrashed,
    SessionStarted,
    SqliteRecorder,
    chain_step,
    encode,
)
from semledger.examples import gallery, todo
from semledger.replay import Divergence, ReplayReport, node_diff, reexecute
from semledger.runtime import ApplicationError, AppRuntime, Receipt

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp
import tests_broken_start
import tests_crashy
from tests_record import COUNTER, INCREMENT, record

TODO_SCRIPT = [
    ("todo.input", {"kind": "set_text", "value": "milk"}),
    ("todo.input", {"kind": "submit"}),
    ("todo.input", {"kind": "submit"}),  # handler_rejected: empty text
    ("todo.input", {"kind": "set_text", "value": "eggs"}),
    ("todo.input", {"kind": "submit"}),
    ("todo.item.1.done", {"kind": "activate"}),
    ("todo.clear_completed", {"kind": "activate"}),
]
WIDE = {"COLUMNS": "200"}


def test_an_unchanged_app_replays_identical(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    record(db, "todo", "semledger.examples.todo:app", TODO_SCRIPT)
    record(db, "counter", COUNTER, [INCREMENT] * 3)
    for session in ("todo", "counter"):
        done = mcp.cli("replay", session, "--db", str(db), **WIDE)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "identical" in done.stdout
        assert "every snapshot hash matched" in done.stdout


def test_a_variant_app_diverges_at_the_first_changed_commit_with_a_node_diff(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.db"
    record(db, "counter", COUNTER, [INCREMENT] * 3)
    done = mcp.cli_in_process(
        "replay", "counter", "--db", str(db), "--app", "tests_variant:app", columns=200
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "DIVERGED at step 2" in done.stdout  # the second increment makes the count 2
    assert "after:    perform_action activate on 'counter.increment'" in done.stdout
    # Each node named by its semantic id too, which the app's author knows it by.
    assert "~ node 2 'counter.value' value: '2' -> '2 (two or more)'" in done.stdout
    assert "~ node 6 'counter.step' state.invalid: False -> True" in done.stdout
    assert done.stdout.count("DIVERGED") == 1  # the first divergence only


def _pytest_on(path: Path) -> subprocess.CompletedProcess[str]:
    """pytest on the exported test `path` as its user runs it: with the plugins installed
    beside it (pytest-trio, hypothesis, …), which the other exported tests go without."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(path)],
        cwd=path.parent,
        capture_output=True,
        text=True,
        env=mcp.env(),
        timeout=120,
        check=False,
    )


def _reworded(db: Path, session: str, code: str, message: str) -> ActionRejected:
    """Give the first rejection of `code` in `session`'s log `message`, chained as if it
    were logged so (else the edit is damage); the rejection as it was."""
    with SqliteRecorder(db) as recorder:
        record_, logged = next(
            (r, e)
            for r, e in recorder.events(session)
            if isinstance(e, ActionRejected) and e.code == code
        )
    edited = attrs.evolve(logged, message=message)
    with sqlite3.connect(db) as conn:
        conn.execute(
            "UPDATE events SET body = ? WHERE session = ? AND seq = ?",
            (encode(edited).body, session, record_.seq),
        )
        chain = GENESIS
        for seq, topic, version, body in conn.execute(
            "SELECT seq, topic, version, body FROM events WHERE session = ? ORDER BY seq",
            (session,),
        ).fetchall():
            chain = chain_step(chain, session, seq, topic, version, body)
            conn.execute(
                "UPDATE events SET chain = ? WHERE session = ? AND seq = ?", (chain, session, seq)
            )
    conn.close()
    return logged


def test_a_rejection_whose_message_changed_diverges_showing_both_messages(
    tmp_path: Path,
) -> None:
    """Both sides printed `rejection handler_rejected` alone, so the report showed no
    difference at all. The message is the app's reason: an app of that wording logged it."""
    db = tmp_path / "log.db"
    record(db, "todo", "semledger.examples.todo:app", TODO_SCRIPT)
    logged = _reworded(db, "todo", "handler_rejected", "an older wording")
    with SqliteRecorder(db) as recorder:
        divergence = reexecute(recorder, "todo", todo.app).divergence
    assert divergence is not None
    details = f" {logged.details}"
    assert divergence.expected == f"rejection handler_rejected: 'an older wording'{details}"
    assert divergence.actual == f"rejection handler_rejected: {logged.message!r}{details}"


def test_only_the_app_s_and_a_policy_s_rejections_are_compared_by_their_words() -> None:
    from semledger.replay._reexecute import app_worded
    from semledger.runtime import ErrorCode

    assert [code for code in ErrorCode if app_worded(code)] == [
        ErrorCode.HANDLER_REJECTED,
        ErrorCode.CONFIRMATION_REQUIRED,
        ErrorCode.POLICY_DENIED,
    ]


def test_a_rejection_in_semledgers_words_replays_the_same_however_a_later_version_words_it(
    tmp_path: Path,
) -> None:
    """A log recorded before semledger reworded a rejection (target_not_found, say) replayed
    as diverging there, and a test exported from it failed, though the app was the same."""
    db = tmp_path / "log.db"
    script = [*TODO_SCRIPT, ("todo.nothing", {"kind": "activate"})]
    record(db, "todo", "semledger.examples.todo:app", script)
    _reworded(db, "todo", "target_not_found", "an older version's wording")
    with SqliteRecorder(db) as recorder:
        report = reexecute(recorder, "todo", todo.app)
    assert report.divergence is None
    exported = tmp_path / "test_exported_todo.py"
    done = mcp.cli_in_process("replay", "todo", "--db", str(db), "--export-test", str(exported))
    assert done.returncode == 0, done.stderr
    assert "an older version's wording" in exported.read_text()
    ran = _pytest_on(exported)
    assert ran.returncode == 0, ran.stdout + ran.stderr


def test_an_application_crash_is_raised_again_at_the_same_step(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    outcomes, _fulls = record(db, "crashy", "tests_crashy:app", [INCREMENT] * 5)
    step = tests_crashy.CRASH_AT
    assert [isinstance(o, Receipt) for o in outcomes] == [True] * (step - 1) + [False]
    assert outcomes[-1] is None  # the live session crashed at that step
    with SqliteRecorder(db) as recorder:
        report = reexecute(recorder, "crashy", tests_crashy.app)
    assert report.ok
    assert report.crash_step == step
    assert report.crash is not None
    assert isinstance(report.crash.__cause__, tests_crashy.ThirdIncrementError)
    done = mcp.cli_in_process("replay", "crashy", "--db", str(db), columns=200)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"raised again at step {step}" in done.stdout
    # Where in the app, as a debugger would start: not in the runtime that called it.
    crashy = Path(tests_crashy.__file__)
    line = next(
        number
        for number, text in enumerate(crashy.read_text().splitlines(), 1)
        if "raise ThirdIncrementError" in text
    )
    said = f"ThirdIncrementError('the count may not reach {step}') (at {crashy}, line {line})"
    assert said in " ".join(done.stdout.split())


def gallery_script() -> list[str]:
    """One perform_action for every gallery node's first action, then a read."""
    snapshot = AppRuntime(gallery.app).snapshot
    lines = []
    for number, node_id in enumerate(sorted(snapshot.nodes), start=1):
        node = snapshot.nodes[node_id]
        if not node.actions:
            continue
        kind = sorted(k.value for k in node.actions)[0]
        payload = {
            "set_text": {"value": "abc"},
            "scroll": {"direction": "down"},
            "set_numeric_value": {"value": 40},
            "set_selection": {"start": 0, "end": 1},
        }.get(kind, {})
        lines.append(
            mcp.call(
                number,
                "perform_action",
                {
                    "target": {"kind": "node_id", "id": str(node_id)},
                    "action": {"kind": kind, **payload},
                    "precondition": {"kind": "latest"},
                },
            )
        )
    return lines


def committed_hashes(db: Path, session: str) -> list[tuple[int, str]]:
    with SqliteRecorder(db) as recorder:
        return [
            (e.generation, e.snapshot_hash)
            for _r, e in recorder.events(session)
            if isinstance(e, Committed)
        ]


def test_a_scripted_session_commits_the_same_hashes_under_any_hash_seed(tmp_path: Path) -> None:
    script = gallery_script()
    answers = {}
    for seed in ("1", "2"):
        db = tmp_path / f"seed{seed}.db"
        answers[seed] = mcp.serve(
            "semledger.examples.gallery:app", db, "g", script, PYTHONHASHSEED=seed
        )
    first = committed_hashes(tmp_path / "seed1.db", "g")
    second = committed_hashes(tmp_path / "seed2.db", "g")
    assert len(first) > 10
    assert first == second
    assert answers["1"] == answers["2"]


def test_an_exported_test_passes_and_fails_against_a_divergent_app(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    record(db, "counter", COUNTER, [INCREMENT] * 3)
    exported = tmp_path / "test_exported_counter.py"
    done = mcp.cli_in_process("replay", "counter", "--db", str(db), "--export-test", str(exported))
    assert done.returncode == 0, done.stderr
    source = exported.read_text()
    assert f"APP = {COUNTER!r}" in source

    passed = _pytest_on(exported)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "1 passed" in passed.stdout
    exported.write_text(source.replace(f"APP = {COUNTER!r}", "APP = 'tests_variant:app'"))
    failed = _pytest_on(exported)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "step 2 (ActionRequested) differs: output 1 was recorded as {'generation': 3" in (
        failed.stdout
    )
    assert "and is now {'generation': 3, 'snapshot_hash': '" in failed.stdout


def test_a_crash_as_the_app_started_replays_as_one_and_any_change_of_it_diverges(
    tmp_path: Path,
) -> None:
    """Step 0 is the app starting (init and the first view): a log that crashed there and an
    app that now starts diverge, and so do a log that started and an app that now raises."""
    with SqliteRecorder(tmp_path / "log.db") as recorder:
        recorder.append(
            [
                NewEvent(
                    "broke", 1, SessionStarted("tests_broken_start:app", "runtime", {}, True), 0.0
                ),
                NewEvent("broke", 2, SessionCrashed("BrokenViewError", "..."), 0.0),
            ]
        )
        record(tmp_path / "log.db", "started", COUNTER, [INCREMENT])
        report = reexecute(recorder, "broke", tests_broken_start.app)
        assert (report.ok, report.crash_step) == (True, 0)
        now_starts = reexecute(recorder, "broke", tests_crashy.app).divergence
        assert now_starts is not None
        assert (now_starts.step, now_starts.expected, now_starts.actual) == (
            0, "the app to raise BrokenViewError",
            "it started: the recorded crash no longer happens",
        )  # fmt: skip
        now_raises = reexecute(recorder, "started", tests_broken_start.app).divergence
        assert now_raises is not None
        assert (now_raises.step, now_raises.expected) == (0, "the app to start")
        assert "BrokenViewError" in now_raises.actual


@pytest.mark.parametrize(
    ("app_ref", "cause"),
    [
        ("tests_bad_results:effects", "NotAnEffectError"),
        ("tests_bad_results:bare_message", "NotAProposalError"),
    ],
)
def test_an_app_returning_no_effect_or_no_proposal_crashes_on_the_record_and_replays_so(
    tmp_path: Path, app_ref: str, cause: str
) -> None:
    """Such a step used to change the live state while the log never held it."""
    db = tmp_path / "log.db"
    outcomes, _fulls = record(db, "bad", app_ref, [INCREMENT])
    assert outcomes == [None]
    with SqliteRecorder(db) as recorder:
        events = [event for _record, event in recorder.events("bad")]
    assert isinstance(events[-2], ActionRequested)
    assert isinstance(events[-1], SessionCrashed)
    assert events[-1].exception_type == cause
    done = mcp.cli_in_process("replay", "bad", "--db", str(db), columns=200)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"raised again at step 1, as it did live: {cause}(" in done.stdout


def test_a_handler_scrolling_by_nan_crashes_the_session_on_the_record_and_replays_so(
    tmp_path: Path,
) -> None:
    """``ScrollBy(nan)`` was applied: NaN in the snapshot, the generation advanced on every
    repeat with nothing changed, and every later read_semantics answered -32603."""
    db = tmp_path / "log.db"
    scroll = ("nan.scroll", {"kind": "activate"})
    outcomes, _fulls = record(db, "nan", "tests_bad_results:nan_scroll", [scroll])
    assert outcomes == [None]
    with SqliteRecorder(db) as recorder:
        events = [event for _record, event in recorder.events("nan")]
    assert isinstance(events[-2], ActionRequested)
    assert isinstance(events[-1], SessionCrashed)
    assert events[-1].exception_type == "NonFiniteNumberError"
    assert "ScrollBy.delta: expected a finite number" in events[-1].traceback
    done = mcp.cli_in_process("replay", "nan", "--db", str(db), columns=200)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "raised again at step 1, as it did live: NonFiniteNumberError(" in done.stdout


def _applications_error(cause: Exception) -> ApplicationError:
    try:
        raise ApplicationError("update raised") from cause
    except ApplicationError as error:
        return error


@pytest.mark.parametrize(
    ("crash", "shown"),
    [
        (MessageCodecError("Tick is not among the message_types"), "MessageCodecError('Tick"),
        (_applications_error(ZeroDivisionError("division by zero")), "ZeroDivisionError('div"),
    ],
    ids=["a-message-the-log-cannot-hold", "the-app-raised"],
)
def test_a_reproduced_crash_names_what_was_raised(crash: BaseException, shown: str) -> None:
    """A message the log cannot record crashes a session with no application error behind
    it: the verdict must name that error, not print None."""
    report = ReplayReport("s", 2, 1, None, crash, 2)
    console = Console(record=True, width=200)
    console.print(replay_verdict(report))
    assert f"raised again at step 2, as it did live: {shown}" in console.export_text()


@pytest.mark.parametrize(
    ("inputs", "commits", "says"),
    [(1, 1, "1 input, 1 commit,"), (2, 0, "2 inputs, 0 commits,"), (0, 2, "0 inputs, 2 commits,")],
)
def test_an_identical_replay_counts_its_inputs_and_commits_in_words(
    inputs: int, commits: int, says: str
) -> None:
    console = Console(record=True, width=200)
    console.print(replay_verdict(ReplayReport("s", inputs, commits, None, None, None)))
    assert f"identical — {says} every snapshot hash matched" in console.export_text()


def test_a_divergences_note_is_printed_whole_however_long() -> None:
    """Notes are replay's own advice, joined: cut at 500 characters as an app's message is,
    the common str-hashing and crash-ahead pair lost its last words."""
    note = "; ".join(f"note part {i} " + "x" * 90 for i in range(6))
    divergence = Divergence(3, 9, "generation 4", "generation 5", note=note)
    console = Console(record=True, width=2000)
    console.print(replay_verdict(ReplayReport("s", 3, 3, divergence, None, None)))
    assert f"note: {note}" in console.export_text()


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        ("UPDATE sessions SET app = 'semledger.examples.todo:app'", "the log's summary says"),
        ("DELETE FROM sessions", "the log's summary has no row for it"),
    ],
    ids=["another-app", "no-row"],
)
def test_a_session_whose_summary_row_was_edited_replays_as_recorded_and_fails_verify(
    tmp_path: Path, edit: str, says: str
) -> None:
    """The summary is not chained: replay must run the app the chained start names (never
    one written into the row by hand) and find the session by its events, and --verify
    must report the row."""
    db = tmp_path / "log.db"
    record(db, "counted", COUNTER, [INCREMENT])
    with sqlite3.connect(db) as conn:
        conn.execute(edit)
    conn.close()
    done = mcp.cli_in_process("replay", "counted", "--db", str(db), columns=200)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "identical" in done.stdout
    verified = mcp.cli_in_process("audit", "counted", "--db", str(db), "--verify", columns=200)
    assert verified.returncode == 1, verified.stdout + verified.stderr
    assert f"event 1 not as the summary says: {says}" in verified.stdout


def test_reexecute_given_an_app_s_reference_for_the_app_says_so(tmp_path: Path) -> None:
    """reexecute(recorder, session, "module:app") raised AttributeError: 'str' object has
    no attribute 'message_types', from inside the session core."""
    db = tmp_path / "log.db"
    record(db, "s", COUNTER, [INCREMENT])
    with SqliteRecorder(db) as recorder, pytest.raises(TypeError) as raised:
        reexecute(recorder, "s", COUNTER)  # type: ignore[arg-type]
    assert str(raised.value) == (
        f"app: expected an App, got str {COUNTER!r} (an App's reference: load_app loads the"
        " App it names)"
    )


def test_a_node_diff_of_something_other_than_a_snapshot_is_refused_naming_the_argument() -> None:
    """node_diff(None, snapshot) failed with AttributeError ('NoneType' object has no
    attribute 'root')."""
    snapshot = AppRuntime(gallery.app).snapshot
    assert node_diff(snapshot, snapshot) == []
    with pytest.raises(TypeError, match=r"^expected: expected a SemanticsSnapshot, got NoneType"):
        node_diff(None, snapshot)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^actual: expected a SemanticsSnapshot, got AppRunt"):
        node_diff(snapshot, AppRuntime(gallery.app))  # type: ignore[arg-type]
