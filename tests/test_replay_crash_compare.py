"""Replay's comparisons beyond outputs: a logged crash must come again with the same
exception type, and a divergence after a redacted input says that input may be the cause."""

from __future__ import annotations

import sys
from pathlib import Path

from semledger.eventlog import (
    ActionRequested,
    SessionCrashed,
    SqliteRecorder,
)
from semledger.replay import reexecute

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp
import tests_broken_start
import tests_buggy
import tests_drifted
import tests_pin
import tests_strength
from tests_record import COUNTER, INCREMENT, Call, crashed_as_it_started, record

RESET: Call = ("counter.reset", {"kind": "activate"})
BUGGY = "tests_buggy:app"
"""Its Reset divides by zero: an increment and a reset crash it at step 2."""
WIDE = {"COLUMNS": "200"}
PIN_SCRIPT: list[Call] = [
    ("pin.field", {"kind": "set_text", "value": tests_pin.PIN}),
    ("pin.unlock", {"kind": "activate"}),
]


def crashed_on_reset(db: Path) -> None:
    outcomes, _fulls = record(db, "crashed", BUGGY, [INCREMENT, RESET, INCREMENT])
    assert outcomes[-1] is None
    with SqliteRecorder(db) as recorder:
        crash = [e for _r, e in recorder.events("crashed")][-1]
    assert crash == SessionCrashed("ZeroDivisionError", crash.traceback)


def test_a_crash_replayed_with_the_same_exception_type_is_identical(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    crashed_on_reset(db)
    with SqliteRecorder(db) as recorder:
        report = reexecute(recorder, "crashed", tests_buggy.app)
    assert report.ok, report.divergence
    assert report.crash_step == 2


def test_a_crash_replayed_as_another_exception_type_diverges_at_that_step(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.db"
    crashed_on_reset(db)
    with SqliteRecorder(db) as recorder:
        report = reexecute(recorder, "crashed", tests_drifted.raising_reset)
        crash_seq = [r.seq for r, _e in recorder.events("crashed")][-1]
    divergence = report.divergence
    assert divergence is not None
    assert (divergence.step, divergence.seq) == (2, crash_seq)
    assert divergence.expected == "the app to raise ZeroDivisionError"
    assert divergence.actual == "the app raised ResetError('reset is gone')"
    assert report.crash_step == 2
    done = mcp.cli(
        "replay", "crashed", "--db", str(db), "--app", "tests_drifted:raising_reset", **WIDE
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "DIVERGED at step 2" in done.stdout
    assert "logged:   the app to raise ZeroDivisionError" in done.stdout
    assert "replayed: the app raised ResetError('reset is gone')" in done.stdout


def test_a_crash_that_no_longer_happens_diverges_naming_the_logged_exception_type(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.db"
    crashed_on_reset(db)
    done = mcp.cli("replay", "crashed", "--db", str(db), "--app", COUNTER, **WIDE)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "DIVERGED at step 2" in done.stdout
    assert "logged:   the app to raise ZeroDivisionError" in done.stdout
    assert "replayed: the step succeeded" in done.stdout


def test_replay_of_a_crash_says_it_reproduced_it_and_once_fixed_that_it_no_longer_happens(
    tmp_path: Path,
) -> None:
    """A replay pins the recorded run, crash included: identical (exit 0) while the bug is
    there, diverging (exit 1) once it is fixed. It said only "identical" and "the step
    succeeded", which read as the bug being gone and as a regression."""
    db = tmp_path / "log.db"
    crashed_on_reset(db)
    present = mcp.cli("replay", "crashed", "--db", str(db), **WIDE)
    assert present.returncode == 0, present.stdout + present.stderr
    assert present.stdout.startswith(
        "replay of 'crashed': identical — 2 inputs, 2 commits, every snapshot hash matched;"
        " the recorded crash at step 2 reproduced\n"
    )
    assert (
        "a replay pins the recorded run, failure included: once the bug is fixed, this replay"
        " diverges there and a test exported from the session fails (set its FIXED = True,"
        " where its docstring says it has one)"
    ) in " ".join(present.stdout.split())
    fixed = mcp.cli("replay", "crashed", "--db", str(db), "--app", COUNTER, **WIDE)
    assert fixed.returncode == 1, fixed.stdout + fixed.stderr
    assert "replayed: the step succeeded: the recorded crash no longer happens\n" in fixed.stdout
    said = " ".join(fixed.stdout.split())  # (the console wraps the note)
    assert (
        "note: a replay pins the recorded run, failure included: if the bug is fixed, this"
        " divergence is the fix working (a test exported from this session fails too: set its"
        " FIXED = True, where its docstring says it has one)"
    ) in said


def test_a_crash_as_the_app_started_replayed_as_another_exception_type_diverges(
    tmp_path: Path,
) -> None:
    with SqliteRecorder(tmp_path / "log.db") as recorder:
        crashed_as_it_started(recorder, "broke", "MissingConfigError")
        report = reexecute(recorder, "broke", tests_broken_start.app)
    divergence = report.divergence
    assert divergence is not None
    assert (divergence.step, divergence.seq) == (0, 2)
    assert divergence.expected == "the app to raise MissingConfigError"
    assert "BrokenViewError" in divergence.actual


def test_a_divergence_after_a_redacted_input_names_that_input_as_a_possible_cause(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.db"
    record(db, "pin", "tests_pin:app", PIN_SCRIPT)
    with SqliteRecorder(db) as recorder:
        pin_seq = next(
            r.seq
            for r, e in recorder.events("pin")
            if isinstance(e, ActionRequested) and e.redacted
        )
        report = reexecute(recorder, "pin", tests_pin.app)
    divergence = report.divergence
    assert divergence is not None
    assert divergence.step == 2  # the unlock; the PIN itself commits the same bullets
    assert divergence.note is not None
    assert f"step 1 (log seq {pin_seq})" in divergence.note
    assert "redacted" in divergence.note
    assert "--log-passwords" in divergence.note
    done = mcp.cli("replay", "pin", "--db", str(db), **WIDE)
    assert done.returncode == 1, done.stdout + done.stderr
    said = " ".join(done.stdout.split())
    assert f"note: an input earlier in the session, step 1 (log seq {pin_seq})" in said


def test_a_session_recorded_with_passwords_logged_replays_identical(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    record(db, "pin", "tests_pin:app", PIN_SCRIPT, redact_passwords=False)
    with SqliteRecorder(db) as recorder:
        assert reexecute(recorder, "pin", tests_pin.app).ok


def test_a_divergence_at_a_redacted_input_keeps_its_own_note(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    script: list[Call] = [("strength.password", {"kind": "set_text", "value": "hunter22"})]
    record(db, "strength", "tests_strength:app", script)
    with SqliteRecorder(db) as recorder:
        divergence = reexecute(recorder, "strength", tests_strength.app).divergence
    assert divergence is not None
    assert (divergence.step, divergence.note) == (1, "this input was redacted in the log")
