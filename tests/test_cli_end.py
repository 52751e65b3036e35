"""`semledger end SESSION`: an operator ends a session that must not be resumed (its server
was killed and its app changed, its resume is refused, an effect of it must not run twice),
so it no longer reads as open and no server takes it up again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

import pytest

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp

APP = "semledger.examples.todo:app"


@contextmanager
def _serving(db: Path, session: str) -> Iterator[subprocess.Popen[str]]:
    """`session` served, and answering, until the block ends; then killed (SIGKILL), so
    the log holds no end of it."""
    server = mcp.start(APP, db, session)
    try:
        assert mcp.ask(server, mcp.read(1))["ok"]
        yield server
    finally:
        server.kill()
        server.wait(timeout=30)


def _state(db: Path, session: str) -> dict[str, object]:
    listed = mcp.cli_in_process("sessions", "--db", str(db), "--json")
    assert listed.returncode == 0, listed.stderr
    (found,) = [s for s in json.loads(listed.stdout) if s["name"] == session]
    return {key: found[key] for key in ("ended", "end_reason", "served")}


def test_an_ended_session_says_why_verifies_and_is_not_served_again(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    with _serving(db, "killed"):
        pass
    assert _state(db, "killed") == {"ended": False, "end_reason": None, "served": False}

    ended = mcp.cli_in_process("end", "killed", "--db", str(db), "--reason", "its app changed")
    assert ended.returncode == 0, ended.stderr
    assert ended.stdout.strip() == "session 'killed' ended by the operator: its app changed"
    reason = "ended by the operator: its app changed"
    assert _state(db, "killed") == {"ended": True, "end_reason": reason, "served": False}
    verified = mcp.cli_in_process("audit", "killed", "--db", str(db), "--verify")
    assert verified.returncode == 0, verified.stdout + verified.stderr

    served = subprocess.run(
        [*mcp.COMMAND, "serve", APP, "--db", str(db), "--session", "killed"],
        input=mcp.initialize() + mcp.read(1), capture_output=True, text=True, env=mcp.env(),
        timeout=60, check=False,
    )  # fmt: skip
    assert served.returncode == 2
    assert served.stderr.strip() == (
        f"semledger: session 'killed' was ended for good ({reason}) and is not served"
        " again: serve a session of another name"
    )
    assert _state(db, "killed")["end_reason"] == reason

    again = mcp.cli_in_process("end", "killed", "--db", str(db))
    assert (again.returncode, again.stderr.strip()) == (
        2, f"semledger: session 'killed' is over already: it was ended for good ({reason})"
    )  # fmt: skip


def test_a_reason_with_a_newline_or_an_escape_is_said_escaped_on_one_line(tmp_path: Path) -> None:
    """It was printed raw: the confirmation spanned two lines and turned the terminal red,
    and the error of ending it again was two lines on stderr."""
    db = tmp_path / "log.db"
    with _serving(db, "odd"):
        pass
    ended = mcp.cli_in_process("end", "odd", "--db", str(db), "--reason", "one\ntwo \x1b[31mred\a")
    assert ended.returncode == 0, ended.stderr
    assert ended.stdout == "session 'odd' ended by the operator: one\\ntwo \\x1b[31mred\\x07\n"
    again = mcp.cli_in_process("end", "odd", "--db", str(db))
    assert again.returncode == 2
    assert again.stderr == (
        "semledger: session 'odd' is over already: it was ended for good"
        " (ended by the operator: one\\ntwo \\x1b[31mred\\x07)\n"
    )


def test_a_session_that_ended_for_now_is_ended_for_good(tmp_path: Path) -> None:
    """Its client went away (end of input): serving it again would resume it."""
    db = tmp_path / "log.db"
    mcp.serve(APP, db, "gone", [mcp.read(1)])
    assert _state(db, "gone") == {"ended": True, "end_reason": "end of input", "served": False}
    ended = mcp.cli_in_process("end", "gone", "--db", str(db))
    assert ended.returncode == 0, ended.stderr
    reason = "ended by the operator"
    assert _state(db, "gone") == {"ended": True, "end_reason": reason, "served": False}


def test_a_session_being_served_or_not_in_the_log_is_not_ended(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    with _serving(db, "live"):
        refused = mcp.cli_in_process("end", "live", "--db", str(db))
        assert (refused.returncode, refused.stderr.strip()) == (
            2, "semledger: session 'live' is being served now: stop its server first"
        )  # fmt: skip
    assert _state(db, "live")["ended"] is False

    unknown = mcp.cli_in_process("end", "nobody", "--db", str(db))
    assert (unknown.returncode, unknown.stderr.strip()) == (
        2, f"semledger: the log has no session 'nobody' (semledger sessions --db {db} lists"
        " its sessions)"
    )  # fmt: skip
    missing = mcp.cli_in_process("end", "live", "--db", str(tmp_path / "none.db"))
    assert missing.returncode == 2
    assert not (tmp_path / "none.db").exists()


def test_a_crashed_session_is_not_ended_over_its_crash(tmp_path: Path) -> None:
    """It was: `sessions` then showed 'ended by the operator', the crash out of sight."""
    from tests_record import crashed_as_it_started

    from semledger.eventlog import SqliteRecorder

    db = tmp_path / "log.db"
    with SqliteRecorder(db) as recorder:
        crashed_as_it_started(recorder, "cr", "ZeroDivisionError")
    before = _state(db, "cr")
    done = mcp.cli_in_process("end", "cr", "--db", str(db), "--reason", "cover-up")
    assert (done.returncode, done.stderr.strip()) == (
        2,
        "semledger: session 'cr' is over already: it crashed (ZeroDivisionError); a crashed"
        " session is never resumed, so there is nothing to end (`semledger audit` shows why)",
    )
    assert _state(db, "cr") == before == {
        "ended": True, "end_reason": "crashed: ZeroDivisionError", "served": False
    }  # fmt: skip


def test_a_log_locked_by_another_process_as_the_session_is_ended_is_said_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The lock taken after the log opened (opening it waits for the lock, too): the
    append waits out the busy timeout and writes nothing."""
    from semledger._cli import main
    from semledger.eventlog import LogBusyError, SqliteRecorder

    db = tmp_path / "log.db"
    with _serving(db, "killed"):
        pass

    def locked(self: SqliteRecorder, events: object) -> NoReturn:
        raise LogBusyError(self.path, 5.0)

    monkeypatch.setattr(SqliteRecorder, "append", locked)
    assert main(["end", "killed", "--db", str(db)]) == 2
    said = capsys.readouterr().err
    assert said == (
        f"semledger: the log {db} is locked by another process (its write lock was held for"
        " more than the busy timeout of 5 s)\n"
    )
    monkeypatch.undo()
    assert _state(db, "killed")["ended"] is False


def test_serve_and_end_say_in_one_line_that_the_claims_folder_cannot_be_made(
    tmp_path: Path,
) -> None:
    """A file where `<db>-claims` goes (or a folder the user may not write): both crashed
    with a traceback, exit 1, where a log that cannot be opened is one line, exit 2."""
    db = tmp_path / "log.db"
    mcp.serve(APP, db, "s", [mcp.read(1)])
    claims = Path(f"{os.path.realpath(db)}-claims")
    claims.write_text("")
    said = (
        f"semledger: cannot open the log {db}: its session claims folder {claims} is a file,"
        " not a folder: move it away"
    )
    served = subprocess.run(
        [*mcp.COMMAND, "serve", APP, "--db", str(db), "--session", "t"],
        input=mcp.initialize(), capture_output=True, text=True, env=mcp.env(),
        timeout=60, check=False,
    )  # fmt: skip
    assert (served.returncode, served.stderr.strip(), served.stdout) == (2, said, "")
    ended = mcp.cli_in_process("end", "s", "--db", str(db))
    assert (ended.returncode, ended.stderr.strip()) == (2, said)
    assert _state(db, "s")["end_reason"] == "end of input"


def test_a_session_with_an_event_logged_past_its_end_is_named_damaged_not_ended(
    tmp_path: Path,
) -> None:
    """It was ended for good over the damage (exit 0, the end appended after it), where
    audit, replay, read and serve name it: ``end`` names damage, as resuming would."""
    from semledger.eventlog import AgentConnected, NewEvent, SqliteRecorder

    db = tmp_path / "log.db"
    mcp.serve(APP, db, "gone", [mcp.read(1)])
    with SqliteRecorder(db) as recorder:
        head = recorder.head("gone")
        assert head is not None
        past = AgentConnected(None, None, "stdio", None)
        recorder.append([NewEvent("gone", head.seq + 1, past, 0.0)])
    done = mcp.cli_in_process("end", "gone", "--db", str(db))
    assert (done.returncode, done.stderr) == (
        1,
        f"semledger: the log {db} cannot be read: session 'gone', event {head.seq + 1}: it"
        f" follows the session's end at event {head.seq} with no resume\n",
    )
    with SqliteRecorder(db) as recorder:
        assert recorder.head("gone").seq == head.seq + 1  # type: ignore[union-attr]
