"""A log file cut short (a copy or a transfer that did not finish) is said to be."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from semledger.eventlog import DAMAGED_LOG_ERRORS, NewEvent, SessionStarted, SqliteRecorder


def _log(path: Path) -> None:
    """A log of many pages, all in the file (no -wal)."""
    event = SessionStarted(
        app="semledger.examples.counter:app", surface="runtime", params={"pad": "x" * 2000},
        redact_passwords=True,
    )  # fmt: skip
    with SqliteRecorder(path) as recorder:
        for n in range(40):
            recorder.append([NewEvent(f"s{n:02}", 1, event, 100.0)])
    assert not os.path.exists(f"{path}-wal")


def _read_all(path: Path) -> None:
    with SqliteRecorder.to_inspect(path) as reader:
        for summary in reader.sessions():
            list(reader.read(summary.name))


@pytest.mark.parametrize("cut", [0.5, 0.5001], ids=["at-a-page", "mid-page"])
def test_a_log_file_cut_short_is_said_to_be_and_what_to_do(tmp_path: Path, cut: float) -> None:
    """SQLite said only "database disk image is malformed"."""
    path = tmp_path / "log.db"
    _log(path)
    size = os.path.getsize(path)
    os.truncate(path, int(size * cut))
    with pytest.raises(DAMAGED_LOG_ERRORS) as caught:
        _read_all(path)
    assert isinstance(caught.value, sqlite3.DatabaseError)
    assert caught.value.sqlite_errorcode == sqlite3.SQLITE_CORRUPT
    assert str(caught.value) == (
        f"database disk image is malformed: the file is {int(size * cut):,} bytes, but its"
        f" header counts {size // 4096:,} pages of 4,096, so it was cut short (a copy or a"
        " transfer that did not finish, a full disk): copy it again from where it came from,"
        " or restore it from a backup"
    )


def test_a_log_file_damaged_otherwise_is_not_said_to_be_cut_short(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    _log(path)
    with open(path, "r+b") as file:
        file.seek(4096)  # the schema's root page
        file.write(b"\xff" * 4096)
    with pytest.raises(sqlite3.DatabaseError) as caught:
        _read_all(path)
    assert "cut short" not in str(caught.value)


def test_a_text_column_that_is_not_utf8_is_the_sqlite3_module_s_error_not_a_crash(
    tmp_path: Path,
) -> None:
    """The sqlite3 module's own errors carry no SQLite code: asking one whether it was a
    malformed page raised AttributeError, and every command ended in a traceback."""
    path = tmp_path / "log.db"
    _log(path)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE sessions SET app = CAST(x'ff41' AS TEXT)")
    conn.close()
    with pytest.raises(DAMAGED_LOG_ERRORS) as caught:
        _read_all(path)
    assert str(caught.value) == "Could not decode to UTF-8 column 'app' with text '\ufffdA'"
