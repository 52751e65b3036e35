"""`semledger sessions` of a log with many sessions prints plain columns a chunk at a time,
as a long audit does, not a rich table laid out whole before its first line."""

from __future__ import annotations

import sys
from pathlib import Path

from semledger.eventlog import NewEvent, SessionEnded, SessionStarted, SqliteRecorder

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp

_COUNTER = "semledger.examples.counter:app"


def _log(db: Path, count: int) -> None:
    started = SessionStarted(_COUNTER, "runtime", {}, True)
    ended = SessionEnded("script over", "client")
    events = [NewEvent(f"s{i:05d}", 1, started, 1.7e9 + i) for i in range(count)]
    events.append(NewEvent("s00000", 2, ended, 1.7e9 + count))
    with SqliteRecorder(db, synchronous="OFF") as recorder:
        recorder.append(events)


def test_many_sessions_are_listed_in_plain_columns(tmp_path: Path) -> None:
    """A rich table took 15 s to lay out 40,000 sessions, and printed nothing until then."""
    db = tmp_path / "log.db"
    count = 1001  # past PLAIN_SESSION_ROWS
    _log(db, count)
    done = mcp.cli_in_process("sessions", "--db", str(db))
    assert done.returncode == 0, done.stderr
    title, header, rule, *rows = done.stdout.splitlines()
    assert title == f"sessions in {db}"
    assert header.split() == ["session", "app", "surface", "events", "state"]
    assert set(rule.replace("  ", "")) == {"-"}
    assert len(rows) == count
    assert rows[0].split() == ["s00000", _COUNTER, "runtime", "2", "ended", "for", "good:",
                               "script", "over"]
    assert rows[-1].split() == [f"s{count - 1:05d}", _COUNTER, "runtime", "1", "open"]
    assert len({row.index(_COUNTER) for row in rows}) == 1  # aligned
    assert not set(done.stdout) & set("┃━│─┏┡└")


def test_a_few_sessions_are_still_a_table(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    _log(db, 3)
    done = mcp.cli_in_process("sessions", "--db", str(db))
    assert done.returncode == 0, done.stderr
    assert "┃" in done.stdout
