"""Servers started together on one log: each opens it, whoever makes it and whoever writes."""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from semledger.eventlog import (
    LogBusyError,
    LogOpenError,
    NewEvent,
    SessionStarted,
    SqliteRecorder,
)


def _started(session: str) -> list[NewEvent]:
    event = SessionStarted(
        app="semledger.examples.counter:app", surface="runtime", params={},
        redact_passwords=True,
    )  # fmt: skip
    return [NewEvent(session, 1, event, 100.0)]


def test_a_log_opened_as_another_process_links_it_into_place_is_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new log is built under a temporary name and linked into place, and the temporary
    name removed after: an open in between saw two names, and refused the log as one with a
    hard link, telling its operator to keep one name."""
    path = tmp_path / "log.db"
    link = os.link
    opened: list[int] = []

    def linked_then_opened(source: Any, target: Any, *args: Any, **kwargs: Any) -> None:
        link(source, target, *args, **kwargs)
        with SqliteRecorder(path) as other:  # before the maker removes its temporary name
            opened.append(other.found_schema_version)
            other.append(_started("other"))

    monkeypatch.setattr(os, "link", linked_then_opened)
    with SqliteRecorder(path) as maker:
        maker.append(_started("maker"))
        assert {summary.name for summary in maker.sessions()} == {"maker", "other"}
    assert len(opened) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log.db"]


def test_a_second_name_like_a_temporary_one_but_of_another_file_is_no_excuse(
    tmp_path: Path,
) -> None:
    """Only the maker's temporary name of the same file is passed over."""
    path = tmp_path / "log.db"
    SqliteRecorder(path).close()
    other = tmp_path / "other.db"
    SqliteRecorder(other).close()
    os.link(other, tmp_path / ".log.db.0123abcd.new")  # a name of another file
    os.link(path, tmp_path / "copy.db")
    with pytest.raises(LogOpenError, match="the file has 2 names \\(hard links\\)"):
        SqliteRecorder(path)


def test_a_log_whose_write_lock_another_process_holds_opens_and_its_writes_wait(
    tmp_path: Path,
) -> None:
    """Opening a log took its write lock (a probe that writes nothing): servers started
    together, the later ones starved behind the earlier ones' writes past the busy timeout
    and stopped with a bare "database is locked". The lock is another's, not a log that
    cannot be written: the open succeeds, and its appends wait the lock out as any does."""
    path = tmp_path / "log.db"
    SqliteRecorder(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        with SqliteRecorder(path, busy_timeout=0.1) as recorder:
            with pytest.raises(LogBusyError):
                recorder.append(_started("a"))
            holder.execute("COMMIT")
            assert [record.seq for record in recorder.append(_started("a"))] == [1]
        holder.execute("BEGIN IMMEDIATE")
        with SqliteRecorder(path, busy_timeout=0.1, create=False) as ending:
            assert ending.head("a") is not None
    finally:
        holder.close()


def test_opening_a_log_whose_write_lock_another_process_holds_does_not_wait_for_it(
    tmp_path: Path,
) -> None:
    """The open's write probe waited out the busy timeout for a lock it then let pass:
    `semledger end` on a log being written waited twice as long as it said. The open does
    not wait, and its appends still wait the whole busy timeout."""
    path = tmp_path / "log.db"
    SqliteRecorder(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    opened: list[SqliteRecorder] = []
    try:
        holder.execute("BEGIN IMMEDIATE")
        opening = threading.Thread(
            target=lambda: opened.append(SqliteRecorder(path, busy_timeout=600)), daemon=True
        )
        opening.start()
        opening.join(timeout=30)
        assert opened, "the open waited for the lock another process holds"
        with opened[0] as recorder:
            busy = recorder._writer.execute("PRAGMA busy_timeout").fetchone()[0]
            assert busy == 600_000
    finally:
        holder.close()


def test_a_log_to_migrate_whose_write_lock_another_process_holds_is_said_to_be_locked(
    tmp_path: Path,
) -> None:
    """Migrating needs the lock: the open is refused, saying so, not a bare SQLite error."""
    path = tmp_path / "log.db"
    SqliteRecorder(path).close()
    # (version 5 adds an index)
    caught = _refused_under(path, "UPDATE schema_version SET version = 4", "BEGIN IMMEDIATE")
    assert caught == (
        f"cannot open the log {path}: it is locked by another process, and opening it must"
        " first bring its schema or journal up to date: database is locked"
    )


def test_a_version_1_log_opened_under_another_process_s_read_lock_claims_no_wait(
    tmp_path: Path,
) -> None:
    """A log of before WAL is switched to it as it opens, which SQLite may not wait for:
    refused at once under a write lock, the open said the lock was held past the busy
    timeout."""
    path = tmp_path / "log.db"
    path.write_bytes((Path(__file__).parent / "fixtures" / "eventlog_v1.db").read_bytes())
    caught = _refused_under(path, "BEGIN", "SELECT count(*) FROM events")
    assert caught == (
        f"cannot open the log {path}: it is locked by another process, and opening it must"
        " first bring its schema or journal up to date: database is locked"
    )


def _refused_under(path: Path, *statements: str) -> str:
    """Why opening the log at `path` is refused while another connection, having run
    `statements`, holds it."""
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        for statement in statements:
            holder.execute(statement).fetchall()
        with pytest.raises(LogOpenError) as caught:
            SqliteRecorder(path, busy_timeout=0.1)
    finally:
        holder.close()
    return str(caught.value)
