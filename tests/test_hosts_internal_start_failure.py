"""A fault of semledger's own code as `serve` starts a session is said in one last line,
after the error's traceback (for a bug report): not a whole exception group, and not
blamed on the application."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from semledger.eventlog import LogBusyError, SqliteRecorder
from semledger.runtime._tree import ElementTree

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp


def test_a_runtime_fault_as_a_session_starts_is_one_line_naming_semledger(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: ElementTree, view: object) -> None:
        raise RuntimeError("the runtime is broken")

    monkeypatch.setattr(ElementTree, "build", broken)
    db = str(tmp_path / "log.db")
    served = mcp.cli_in_process(
        "serve", "semledger.examples.counter:app", "--db", db, "--session", "s"
    )
    assert served.returncode == 1, served.stderr
    assert served.stdout == ""
    lines = served.stderr.splitlines()
    assert lines[-1] == (
        "semledger: session 's' could not start: semledger itself failed, not the"
        " application: RuntimeError('the runtime is broken') (a bug in semledger; its"
        " traceback, above, is for a bug report)"
    )
    assert lines[0] == "Traceback (most recent call last):"
    assert lines[-2] == "RuntimeError: the runtime is broken"
    assert not any("ExceptionGroup" in line or "sub-exception" in line for line in lines)


def test_a_log_fault_as_a_session_starts_is_the_logs_line_not_a_bug_of_semledger(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = str(tmp_path / "log.db")

    def locked(self: SqliteRecorder, session: str) -> None:
        raise LogBusyError(db, 5)

    monkeypatch.setattr(SqliteRecorder, "head", locked)
    served = mcp.cli_in_process(
        "serve", "semledger.examples.counter:app", "--db", db, "--session", "s"
    )
    assert served.stderr.splitlines() == [
        f"semledger: the log {db} is locked by another process (its write lock was held for"
        " more than the busy timeout of 5 s)"
    ]
    assert served.returncode == 2


def test_a_system_fault_as_a_session_starts_is_one_line_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An `OSError` (too many open files) is no bug of semledger's and no bad usage: it
    left `main` as an uncaught traceback."""
    db = str(tmp_path / "log.db")

    def exhausted(self: SqliteRecorder, session: str) -> None:
        raise OSError(24, "Too many open files")

    monkeypatch.setattr(SqliteRecorder, "head", exhausted)
    served = mcp.cli_in_process(
        "serve", "semledger.examples.counter:app", "--db", db, "--session", "s"
    )
    assert served.stderr.splitlines() == [
        "semledger: the session could not be served: [Errno 24] Too many open files"
    ]
    assert served.returncode == 1
