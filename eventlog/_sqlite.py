"""The SQLite recorder.

The append path is raw ``sqlite3``: one ``BEGIN IMMEDIATE`` transaction per batch, the
heads read inside it, the rows inserted many to a statement (see ``_insert_rows``) over
cached prepared statements. sqlite-utils only
creates and migrates the schema and backs the inspection helper. The database runs in WAL
mode, so readers (each ``read`` takes a pooled connection of its own) never block the
writer and see a consistent snapshot while they stream.
"""

from __future__ import annotations

import errno
import fcntl
import functools
import itertools
import math
import os
import re
import secrets
import sqlite3
import stat
import threading
import urllib.parse
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import attrs

from ._claims import FileClaims
from ._codec import CONVERTER, LogConverter
from ._errors import (
    CorruptSchemaError,
    CorruptSummaryError,
    EventLogError,
    LogBusyError,
    LogMovedError,
    LogOpenError,
    LogUnreadableError,
    MalformedRowError,
    OutdatedSchemaError,
    RecorderClosedError,
    SequenceConflict,
    UnsupportedSchemaError,
)
from ._events import TOPICS, Event, SemanticsTaken, SessionCrashed, SessionEnded, SessionStarted
from ._recorder import (
    EVERY_SEQ,
    check_batch,
    check_range,
    check_seq,
    check_session,
    check_topic,
    checked_names,
    prepare_batch,
)
from ._records import Head, NewEvent, SessionSummary, StoredEvent, end_reason, stored_event

if TYPE_CHECKING:
    import sqlite_utils

__all__ = ["SCHEMA_VERSION", "LogInfo", "SqliteRecorder", "inspect_log"]


Synchronous = Literal["OFF", "NORMAL", "FULL", "EXTRA"]
_SYNCHRONOUS = ("OFF", "NORMAL", "FULL", "EXTRA")

SCHEMA_VERSION = 5
"""1: ``schema_version`` and ``events``. 2: adds ``sessions``, the per-session summary.
3: adds ``sessions.end_reason``. 4: a session resumed after it ended is not ended.
5: adds ``events_read_checkpoints``, an index of the read checkpoints."""
_READABLE_FROM = 4
"""The oldest schema a read-only open reads as it is: version 5 adds only an index, which
reads use where it exists and do without (scanning) where it does not."""

_COLUMNS = "session, seq, topic, version, at, body, chain"
_SELECTED = "session, seq, topic, version, at, CAST(body AS BLOB), CAST(chain AS BLOB)"
"""The columns as read. A body or chain edited into TEXT comes back as its bytes, which
then fail to decode or to verify at their seq, instead of failing in sqlite3's UTF-8
decoding with the raw bytes in its message."""
_ROWS_PER_INSERT = 256
"""The most rows one ``INSERT`` carries (fewer if SQLite allows fewer parameters)."""
_HEAD = (
    "SELECT seq, CAST(chain AS BLOB) FROM events WHERE session = ? ORDER BY seq DESC LIMIT 1"
)
_READ = f"SELECT {_SELECTED} FROM events WHERE session = ? AND seq >= ? ORDER BY seq"
_REPLAY = (
    "SELECT topic, version, CAST(body AS BLOB) FROM events WHERE session = ? AND seq >= ?"
    " ORDER BY seq"
)
_LAST_OF = (
    f"SELECT {_SELECTED} FROM events WHERE session = ? AND topic = ? AND seq < ?"
    " ORDER BY seq DESC LIMIT 1"
)
_CHECKPOINT = TOPICS[SemanticsTaken]
_CHECKPOINTS_INDEX = (
    "CREATE INDEX IF NOT EXISTS events_read_checkpoints ON events (session, seq)"
    f" WHERE topic = '{_CHECKPOINT}'"
)
"""Read checkpoints by session and seq. Partial: an append of any other event (nearly all
of them) leaves it as it was. A query uses it only where it names the topic as a literal."""
_LAST_CHECKPOINT = (
    f"SELECT {_SELECTED} FROM events WHERE session = ? AND topic = '{_CHECKPOINT}'"
    " AND seq < ? ORDER BY seq DESC LIMIT 1"
)
_SEQS_OF = "SELECT seq FROM events WHERE session = ? AND topic = ? ORDER BY seq"
_CHECKPOINT_SEQS = (
    f"SELECT seq FROM events WHERE session = ? AND topic = '{_CHECKPOINT}' ORDER BY seq"
)
_PIN = "SELECT version FROM schema_version"
"""A read that starts a read transaction (a ``BEGIN`` alone takes no snapshot)."""
_NO_SEQ_BOUND = 2**63 - 1
"""Above every seq: SQLite's largest integer."""


def _in_range(bound: int) -> int:
    """A read's seq bound as SQLite can take it: one past its integers (which no seq is)
    reads as its end, as a memory log reads it, not an ``OverflowError``."""
    return min(max(bound, EVERY_SEQ), _NO_SEQ_BOUND)

_READ_STOP = (
    f"SELECT {_SELECTED} FROM events WHERE session = ? AND seq >= ? AND seq < ? ORDER BY seq"
)
_FIRST_SESSION = "SELECT session FROM events ORDER BY session LIMIT 1"
_NEXT_SESSION = "SELECT session FROM events WHERE session > ? ORDER BY session LIMIT 1"
"""The session after a name: a seek in the primary key's index (a skip-scan of the
sessions that have events), not a scan of their events."""
_SUMMARY_COLUMNS = "name, app, surface, first_at, last_at, events, ended, crashed, end_reason"
_SESSIONS = f"SELECT {_SUMMARY_COLUMNS} FROM sessions ORDER BY name"
_SUMMARY = f"SELECT {_SUMMARY_COLUMNS} FROM sessions WHERE name = ?"
_UPSERT_SESSION = """
INSERT INTO sessions (name, app, surface, first_at, last_at, events, ended, crashed, end_reason)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (name) DO UPDATE SET
    app = CASE WHEN sessions.app IS NULL THEN excluded.app ELSE sessions.app END,
    surface = CASE WHEN sessions.app IS NULL THEN excluded.surface ELSE sessions.surface END,
    last_at = excluded.last_at,
    events = sessions.events + excluded.events,
    ended = excluded.ended,
    crashed = MAX(sessions.crashed, excluded.crashed),
    end_reason = excluded.end_reason
"""


@functools.cache
def _insert_sql(rows: int) -> str:
    values = ", ".join(["(?, ?, ?, ?, ?, ?, ?)"] * rows)
    return f"INSERT INTO events ({_COLUMNS}) VALUES {values}"


def _create_events(db: sqlite_utils.Database, _converter: LogConverter) -> None:
    db.table("schema_version").create({"version": int}, not_null=["version"])
    db.table("events").create(
        {
            "session": str,
            "seq": int,
            "topic": str,
            "version": int,
            "at": float,
            "body": bytes,
            "chain": bytes,
        },
        pk=("session", "seq"),
        not_null=["session", "seq", "topic", "version", "at", "body", "chain"],
    )


def _create_sessions(db: sqlite_utils.Database, converter: LogConverter) -> None:
    """Add the summary table, filled from the events already logged (upcast as read)."""
    db.table("sessions").create(
        {
            "name": str,
            "app": str,
            "surface": str,
            "first_at": float,
            "last_at": float,
            "events": int,
            "ended": int,
            "crashed": int,
        },
        pk="name",
        not_null=["name", "first_at", "last_at", "events", "ended", "crashed"],
    )
    rows = db.execute(
        "SELECT session, COUNT(*), MIN(seq), MAX(seq),"
        " MAX(topic IN ('SessionEnded', 'SessionCrashed')), MAX(topic = 'SessionCrashed')"
        " FROM events GROUP BY session"
    ).fetchall()
    for session, count, first, last, ended, crashed in rows:
        (first_at,) = db.execute(
            "SELECT at FROM events WHERE session = ? AND seq = ?", (session, first)
        ).fetchone()
        (last_at,) = db.execute(
            "SELECT at FROM events WHERE session = ? AND seq = ?", (session, last)
        ).fetchone()
        app = surface = None
        started = db.execute(
            "SELECT version, body FROM events WHERE session = ? AND topic = 'SessionStarted'"
            " ORDER BY seq LIMIT 1",
            (session,),
        ).fetchone()
        if started is not None:
            event = converter.decode("SessionStarted", started[0], started[1])
            assert isinstance(event, SessionStarted)
            app, surface = event.app, event.surface
        db.execute(
            "INSERT INTO sessions (name, app, surface, first_at, last_at, events, ended, crashed)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (session, app, surface, first_at, last_at, count, ended, crashed),
        )


def _add_end_reasons(db: sqlite_utils.Database, converter: LogConverter) -> None:
    """Add ``end_reason``, filled from each ended session's last ending event.

    One indexed lookup per ended session, not a scan of the events. An ending event that
    does not decode (a damaged log) leaves the reason empty rather than refusing to open
    the log, so `semledger audit --verify` can still say what is wrong with it.
    """
    db.table("sessions").add_column("end_reason", str)
    for (session,) in db.execute("SELECT name FROM sessions WHERE ended").fetchall():
        row = db.execute(
            "SELECT topic, version, body FROM events WHERE session = ?"
            " AND topic IN ('SessionEnded', 'SessionCrashed') ORDER BY seq DESC LIMIT 1",
            (session,),
        ).fetchone()
        if row is None:
            continue
        try:
            event = converter.decode(*row)
        except EventLogError:
            continue
        assert isinstance(event, SessionEnded | SessionCrashed)
        db.execute(
            "UPDATE sessions SET end_reason = ? WHERE name = ?", (end_reason(event), session)
        )


def _reopen_resumed(db: sqlite_utils.Database, _converter: LogConverter) -> None:
    """A session resumed after it ended is not ended: versions 2 and 3 kept it ended (with
    its old reason) from its first ending on. One indexed lookup per ended session."""
    db.execute(
        "UPDATE sessions SET ended = 0, end_reason = NULL WHERE ended AND ("
        "SELECT topic FROM events WHERE session = sessions.name ORDER BY seq DESC LIMIT 1"
        ") NOT IN ('SessionEnded', 'SessionCrashed')"
    )


def _index_checkpoints(db: sqlite_utils.Database, _converter: LogConverter) -> None:
    """Index the read checkpoints, so that a read finds them by an index seek, not by a
    scan of the session's events (one pass over the events, once)."""
    db.execute(_CHECKPOINTS_INDEX)


_MIGRATIONS: dict[int, Callable[[sqlite_utils.Database, LogConverter], None]] = {
    1: _create_events,
    2: _create_sessions,
    3: _add_end_reasons,
    4: _reopen_resumed,
    5: _index_checkpoints,
}


def _schema_version(db: sqlite_utils.Database) -> int:
    if not db.table("schema_version").exists():
        return 0
    row = db.execute("SELECT MAX(version) FROM schema_version").fetchone()
    return 0 if row is None or row[0] is None else int(row[0])


def _current_version(conn: sqlite3.Connection, path: str) -> int:
    """The schema version of the log; 0 for a file that holds none (a new log)."""
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
    ).fetchone()
    if exists is None:
        return 0
    (version,) = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
    if type(version) is not int or version < 1:  # a damaged log: never migrate over it
        held = "nothing" if version is None else repr(version)
        raise CorruptSchemaError(path, f"its schema_version table holds {held}, not a version")
    return version


_OURS = ("schema_version", "events", "sessions")


def _refuse_foreign(conn: sqlite3.Connection, path: str) -> None:
    """Raise `LogOpenError` for a database that holds tables, none of them a log's: another
    program's, which creating a log in it would add tables to and switch to WAL."""
    rows = conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        " ORDER BY name"
    ).fetchall()
    names = [name for (name,) in rows]
    if names and not set(names) & set(_OURS):
        shown = ", ".join(names[:5]) + (", …" if len(names) > 5 else "")
        raise LogOpenError(
            path,
            f"it is another program's SQLite database (it holds {shown}), not a semledger"
            " log: give a file of its own",
        )


def _check_tables(db: sqlite_utils.Database, found: int, path: str) -> None:
    """Refuse to migrate a log holding what a later version than `found` made, or lacking
    the events table every version has."""
    later = None
    if found < 1 and db.table("events").exists():
        later = "the events table of version 1"
    elif found < 2 and db.table("sessions").exists():
        later = "the sessions table of version 2"
    elif found < 3 and "end_reason" in db.table("sessions").columns_dict:
        later = "the sessions.end_reason column of version 3"
    if later is not None:
        said = f"says {found}" if found else "is missing"
        raise CorruptSchemaError(
            path, f"its schema version {said}, but it holds {later}: it was edited"
        )
    if found >= 1 and not db.table("events").exists():
        raise CorruptSchemaError(
            path, f"its schema version says {found}, but it has no events table: it was edited"
        )


def _migrate(conn: sqlite3.Connection, path: str, converter: LogConverter) -> int:
    """Bring the schema to ``SCHEMA_VERSION`` in one transaction; return the version found.

    A log already at the current version is opened without loading sqlite-utils, which
    only creates and migrates, so a server starts quickly on an existing log.
    """
    found = _current_version(conn, path)
    if found == SCHEMA_VERSION:
        return found
    import sqlite_utils

    db = sqlite_utils.Database(conn, execute_plugins=False)
    conn.execute("BEGIN IMMEDIATE")
    try:
        found = _schema_version(db)
        if found > SCHEMA_VERSION:
            raise UnsupportedSchemaError(path, found, SCHEMA_VERSION)
        _check_tables(db, found, path)
        for version in range(found + 1, SCHEMA_VERSION + 1):
            _MIGRATIONS[version](db, converter)
        if found != SCHEMA_VERSION:
            conn.execute("DELETE FROM schema_version")
            conn.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:  # a COMMIT that failed to write may have rolled back
            conn.execute("ROLLBACK")
        raise
    return found


def _made_whole(path: str, converter: LogConverter) -> bool:
    """Make the new log at `path` whole or not at all, and say whether this did: built in a
    file beside it, then linked into place, so that a creation cut short (a Ctrl-C, a full
    disk) leaves no file there that holds no log, which every later open but a creating one
    would refuse. One that could not be written whole raises `LogOpenError`, leaving nothing.

    If another process makes the log first, its log is kept. Where the new file cannot be
    made or linked (a read-only folder, a file system without hard links), nothing is done:
    opening the path makes the log there, or says why it cannot.
    """
    folder, name = os.path.split(os.path.abspath(path))
    building = os.path.join(folder, f".{name}.{secrets.token_hex(4)}.new")
    try:
        os.close(os.open(building, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))  # as SQLite
    except OSError:
        return False
    try:
        _build(building, converter)
        os.link(building, path)
    except sqlite3.Error as error:
        raise LogOpenError(path, _not_built(folder, error)) from error
    except OSError:  # FileExistsError: another process made it first
        return False
    finally:
        for made in (building, f"{building}-journal", f"{building}-wal", f"{building}-shm"):
            with suppress(FileNotFoundError):
                os.unlink(made)
    return True


def _build(building: str, converter: LogConverter) -> None:
    """Write a new log's schema into the file `building`, then set it to WAL mode in place.

    Its journal is kept in memory, so the schema is in the file itself once committed, or
    the commit fails. Built in WAL mode, the schema stayed in a ``-wal`` until the last
    connection closed, and a close that cannot fold it in (no room left) raises nothing."""
    conn = sqlite3.connect(building, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode=MEMORY")
        _migrate(conn, building, converter)
        conn.execute("PRAGMA journal_mode=WAL")
    finally:
        conn.close()


def _not_built(folder: str, error: sqlite3.Error) -> str:
    if not _io_error(error):
        return str(error)
    return (
        f"it could not be written in {folder} (a full disk, a quota or a file size limit"
        f" leaves no room for it): {error}"
    )


def _read_write_uri(path: str) -> str:
    return f"file:{urllib.parse.quote(os.path.abspath(path))}?mode=rw"


def _read_only_uri(path: str, *, no_room: bool = False) -> str:
    """Read-only; also ``immutable`` when the write-ahead log holds nothing (there is none,
    or an empty one: every event is in the file) and SQLite should make none: where nothing
    beside the log can be written (a read-only folder, a full disk, or `no_room`: writing
    there failed, under a quota or a file size limit), SQLite could neither make the
    ``-shm`` a WAL read needs nor lock; as a user other than the log's owner, the ``-wal``
    and ``-shm`` it made would be theirs, which the owner's server could not write, and it
    would fail to open the log; and beside a log we may not write (mode 0444), they would
    have its mode, and fail the server opening it once its mode is set back."""
    absolute = os.path.abspath(path)
    uri = f"file:{urllib.parse.quote(absolute)}?mode=ro"
    if _no_frames(absolute) and (
        no_room
        or not os.access(os.path.dirname(absolute), os.W_OK)
        or not _owned_by_us(absolute)
        or not _writable(absolute)
        or _full(absolute)
    ):
        uri += "&immutable=1"
    return uri


def _no_frames(path: str) -> bool:
    """Whether the log at `path` has no ``-wal`` beside it, or an empty one."""
    try:
        return os.stat(f"{path}-wal").st_size == 0
    except FileNotFoundError:
        return True


_ROOM = 64 * 1024
"""The free bytes a log's folder needs for SQLite to open it in WAL mode: its ``-shm``
alone takes 32 KiB. With less, SQLite fails with a "disk I/O error" after making a
``-wal`` and a ``-shm`` it cannot fill."""


def _free_bytes(path: str) -> int | None:
    """The bytes this process may still write in the folder of `path` (None if unknown)."""
    try:
        stats = os.statvfs(os.path.dirname(os.path.abspath(path)))
    except OSError:
        return None
    return stats.f_bavail * stats.f_frsize


def _full(path: str) -> bool:
    free = _free_bytes(path)
    return free is not None and free < _ROOM


def _no_room(path: str) -> str:
    folder = os.path.dirname(os.path.abspath(path))
    return (
        f"the disk is full ({_free_bytes(path)} bytes free in {folder}, and writing the log"
        f" needs {_ROOM // 1024} KiB)"
    )


def _code(error: BaseException | None) -> int:
    """SQLite's extended result code of `error`; 0 for an error the ``sqlite3`` module
    raised itself (a text column that is not UTF-8, a closed connection), which has none."""
    return getattr(error, "sqlite_errorcode", 0) if isinstance(error, sqlite3.Error) else 0


def _disk_full_reason(path: str, error: sqlite3.Error) -> str:
    """What to say for an error SQLite gave on a full disk (it says "disk I/O error" when
    it cannot make its ``-shm``); "" if the disk is not full or the error is another."""
    codes = (sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL)
    if _code(error) & 0xFF not in codes or not _full(path):
        return ""
    return f"{_no_room(path)}: {error}"


def _owned_by_us(path: str) -> bool:
    """Whether files SQLite makes beside `path` will belong to its owner: we are the owner,
    or root (SQLite gives what root makes to the log's owner)."""
    try:
        owner = os.stat(path).st_uid
    except OSError:
        return True
    return os.geteuid() in (0, owner)


def _busy(error: BaseException) -> bool:
    """Whether `error` is SQLite giving up on a lock another connection held past the busy
    timeout (``SQLITE_BUSY`` and its extended codes)."""
    busy = _code(error) & 0xFF == sqlite3.SQLITE_BUSY
    return busy and isinstance(error, sqlite3.OperationalError)


def _cannot_write(error: BaseException | None) -> bool:
    """Whether `error` is SQLite, or the check before it (an `OSError`), refusing to write
    the log."""
    codes = (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN)
    if isinstance(error, OSError):
        return True
    return _code(error) & 0xFF in codes


def _io_error(error: BaseException | None) -> bool:
    """Whether `error` is SQLite failing to read or write a file: as it does making the
    ``-shm`` of a log where the disk is full or a quota or a file size limit (EDQUOT,
    EFBIG) leaves no room, which free space (`_full`) does not show."""
    codes = (sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL)
    return _code(error) & 0xFF in codes


_MAKING_SHM = (
    sqlite3.SQLITE_IOERR_SHMOPEN,
    sqlite3.SQLITE_IOERR_SHMSIZE,
    sqlite3.SQLITE_IOERR_SHMMAP,
)


def _unread(error: LogOpenError) -> str:
    """Why a log opened read-only cannot be read, for an I/O error (`error.__cause__`)."""
    cause = error.__cause__
    if _code(cause) in _MAKING_SHM:
        return (
            f"{error.reason}: reading the -wal beside it needs a -shm, which could not be"
            " made (a full disk, a quota or a file size limit leaves no room for it)"
        )
    return error.reason


def _beside(path: str) -> set[str]:
    """Which of the ``-wal`` and ``-shm`` of the log at `path` are there."""
    return {name for name in (f"{path}-wal", f"{path}-shm") if os.path.lexists(name)}


def _remove_made(path: str, before: set[str]) -> None:
    """Remove the ``-wal`` (if empty) and ``-shm`` beside the log at `path` that are not in
    `before`: those an open that failed made (SQLite leaves them when it cannot fill the
    ``-shm``), unless another process uses them (holds the lock on the ``-shm`` SQLite takes
    to use it; a ``-wal`` with no ``-shm`` is used by none)."""
    wal, shm = f"{path}-wal", f"{path}-shm"
    made = [name for name in (wal, shm) if name not in before and os.path.lexists(name)]
    if not made:
        return
    try:
        held = os.open(shm, os.O_RDWR) if os.path.lexists(shm) else None
    except OSError:
        return
    try:
        if held is not None:
            fcntl.lockf(held, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, _SHM_IN_USE)
        for name in made:
            if name == shm or not os.stat(name).st_size:
                os.unlink(name)
    except OSError:
        pass
    finally:
        if held is not None:
            os.close(held)


def _unwritable_beside(path: str) -> str:
    """Why a log we may write cannot be written, when the cause is a file beside it: the
    ``-wal`` or ``-shm`` another user's read made, which are theirs, or one of ours whose
    mode does not let us write it (made beside a log that was read-only then)."""
    import pwd  # POSIX only, and needed only here

    if not _writable(path):
        return ""
    for suffix in ("-wal", "-shm"):
        beside = f"{path}{suffix}"
        if os.path.exists(beside) and not _writable(beside):
            try:
                status = os.stat(beside)
            except OSError:
                continue
            if status.st_uid == os.geteuid():  # ours: the mode it was made with
                why = f"is read-only (mode {stat.S_IMODE(status.st_mode):04o})"
            else:
                owner = "another user"
                with suppress(KeyError):
                    owner = pwd.getpwuid(status.st_uid).pw_name
                why = f"belongs to {owner}, and this user may not write it"
            return (
                f" (its {suffix} file {why}: with no server running on the log, remove"
                f" {beside})"
            )
    return ""


def _unwritable_reason(path: str, error: sqlite3.Error) -> str:
    """Why SQLite could not write the log at `path`, for an error that says it could not
    ("" for another error, or no cause found): a file beside it this user may not write,
    or its folder, where SQLite makes the log's ``-wal`` and ``-shm`` (and a new log)."""
    if not _cannot_write(error):
        return ""
    beside = _unwritable_beside(path)
    if beside:
        return f"{error}{beside}"
    folder = _unwritable_folder(path)
    if not folder:
        return ""
    return f"{folder}, where the log and its -wal and -shm are kept: {error}"


def _unwritable_folder(path: str) -> str:
    """Why nothing can be made in the folder of the log at `path` ("" if it can)."""
    folder = os.path.dirname(os.path.realpath(path))
    if _read_only_file_system(folder):
        return f"its folder {folder} is on a read-only file system"
    effective = os.access in os.supports_effective_ids  # the rights SQLite gets
    if os.access(folder, os.W_OK | os.X_OK, effective_ids=effective):
        return ""
    return f"this user may not write in its folder {folder}"


def _read_only_file_system(path: str) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _unread_wal(path: str, error: sqlite3.Error) -> str:
    """Why a log opened read-only cannot be read, when SQLite could not open it because
    of a ``-wal`` with events and no ``-shm`` beside it (a killed server's log copied
    without it), which SQLite needs to read the ``-wal`` and cannot make in its folder
    ("" for another error or cause). Opened ``immutable`` instead, the events in the
    ``-wal`` would be silently left out."""
    real = os.path.realpath(path)
    if (
        _code(error) & 0xFF != sqlite3.SQLITE_CANTOPEN
        or _no_frames(real)
        or os.path.lexists(f"{real}-shm")
    ):
        return ""
    folder = _unwritable_folder(path)
    if not folder:
        return ""
    return (
        f"its -wal holds events not yet in the log file, and reading them needs a -shm beside"
        f" it, which is not there and cannot be made ({folder}): copy the log and its -wal to"
        f" a folder this user may write and read them there, or copy the -shm with them"
        f" ({error})"
    )


def _writable(path: str) -> bool:
    return _write_refusal(path) is None


def _write_refusal(path: str) -> OSError | None:
    """Why this process may not open `path` to write (None if it may, or if trying failed
    otherwise: SQLite then says why), found by trying (``os.access`` asks with the real
    user's rights, which is not what SQLite gets)."""
    try:
        os.close(os.open(path, os.O_WRONLY))
    except OSError as error:
        if error.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            return error
    return None


_HEADER = b"SQLite format 3\0"


def _cut_short(error: sqlite3.DatabaseError, path: str) -> sqlite3.DatabaseError | None:
    """SQLite's `error` for a malformed page, saying that the log file at `path` was cut
    short, where its size shows it (not a whole number of pages, or fewer than its header
    counts, or where it keeps no count); None for another error, or a file that does not
    look cut short. Not said with events in the ``-wal``, which may hold the pages the file
    lacks."""
    if _code(error) & 0xFF != sqlite3.SQLITE_CORRUPT or not _no_frames(path):
        return None
    try:
        with open(path, "rb") as file:
            header = file.read(100)
            size = os.fstat(file.fileno()).st_size
    except OSError:
        return None
    if len(header) < 100 or not header.startswith(_HEADER):
        return None
    page = int.from_bytes(header[16:18], "big")
    page = 65536 if page == 1 else page
    pages = int.from_bytes(header[28:32], "big")
    counted = pages > 0 and header[24:28] == header[92:96]  # else the count is stale
    if counted and size < pages * page:
        said = f"the file is {size:,} bytes, but its header counts {pages:,} pages of {page:,}"
    elif not counted and size % page:
        said = f"the file is {size:,} bytes, not a whole number of its {page:,}-byte pages"
    else:
        return None
    described = sqlite3.DatabaseError(
        f"{error}: {said}, so it was cut short (a copy or a transfer that did not finish, a"
        " full disk): copy it again from where it came from, or restore it from a backup"
    )
    described.sqlite_errorcode = error.sqlite_errorcode
    described.sqlite_errorname = error.sqlite_errorname
    return described


def _readable_version(conn: sqlite3.Connection, path: str) -> int:
    """The schema version of a log opened read-only, which cannot be migrated."""
    found = _current_version(conn, path)
    if found == 0:
        raise LogOpenError(path, "it holds no semledger log")
    if found > SCHEMA_VERSION:
        raise UnsupportedSchemaError(path, found, SCHEMA_VERSION)
    if found < _READABLE_FROM:
        raise OutdatedSchemaError(
            path,
            f"it is read-only and its schema version {found} needs migrating to"
            f" {SCHEMA_VERSION}: open it once where it can be written",
        )
    return found


_SUMMARY_TYPES: tuple[tuple[str, tuple[type, ...]], ...] = (
    ("name", (str,)),
    ("app", (str, type(None))),
    ("surface", (str, type(None))),
    ("first_at", (int, float)),
    ("last_at", (int, float)),
    ("events", (int,)),
    ("ended", (int,)),
    ("crashed", (int,)),
    ("end_reason", (str, type(None))),
)


def _summary(row: tuple[Any, ...]) -> SessionSummary:
    """The summary a ``sessions`` row holds. SQLite keeps whatever was written into a
    column, so a row edited by hand is refused here rather than failing where it is used."""
    for value, (column, types) in zip(row, _SUMMARY_TYPES, strict=True):
        if not isinstance(value, types):
            raise CorruptSummaryError(str(row[0]), f"its {column} is {value!r}")
    name, app, surface, first_at, last_at, count, ended, crashed, reason = row
    return SessionSummary(
        name, app, surface, first_at, last_at, count, bool(ended), bool(crashed), reason
    )


_ROW_TYPES: tuple[tuple[int, str, tuple[type, ...], str], ...] = (
    (1, "seq", (int,), "an integer"),
    (2, "topic", (str,), "text"),
    (3, "version", (int,), "an integer"),
    (4, "at", (float, int), "a number of seconds"),
)
"""The columns of an event's row whose type a hand edit can change under the recorder:
its position in a row as read, its name, what it may hold and what to say it should be.
(``body`` and ``chain`` are read cast to bytes; ``session`` is what rows are looked up by.)"""


def _checked(row: tuple[Any, ...]) -> StoredEvent:
    """The record of a row, or `MalformedRowError` for one whose seq, topic, version or time
    is not of the type the recorder writes: SQLite keeps whatever an edit puts into a column,
    and the value would fail far from here (a TypeError adding 1 to a text seq)."""
    for index, column, types, expected in _ROW_TYPES:
        if not isinstance(row[index], types):
            timeless = None if column != "at" else stored_event((*row[:4], math.nan, *row[5:]))
            raise MalformedRowError(row[0], row[1], column, row[index], expected, timeless)
    return stored_event(row)


def _checked_rows(rows: Iterable[tuple[Any, ...]]) -> Iterator[StoredEvent]:
    """`_checked` over a read's rows, its test inlined: it runs for every record a read
    returns, and costs about 50 ns a row (1% of reading and decoding an event, up to 4% of
    a bare `read`). ``replay`` reads no seq or time and checks nothing more: a topic or
    version of another type fails there as an event that does not decode (see
    ``LogConverter.decode``)."""
    for row in rows:
        if (
            type(row[1]) is not int
            or type(row[2]) is not str
            or type(row[3]) is not int
            or type(row[4]) is not float
        ):
            yield _checked(row)  # raises, unless the time is an int
        else:
            yield stored_event(row)


def _head(session: str, row: tuple[Any, ...]) -> Head:
    """The head a ``_HEAD`` row gives: the session's highest seq, which a text seq is (SQLite
    orders text after every number), so a seq edited into text is found here."""
    seq = row[0]
    if type(seq) is not int:
        raise MalformedRowError(session, seq, "seq", seq, "an integer")
    return Head(seq, row[1])


def _moved_head(conn: sqlite3.Connection, stored: list[StoredEvent]) -> SequenceConflict:
    """The conflict of the session whose head another writer moved since we cached it:
    the one to refuse, so that a log writer can keep the rest of the batch."""
    firsts: dict[str, int] = {}
    for record in stored:
        firsts.setdefault(record.session, record.seq)
    for session, seq in firsts.items():
        row = conn.execute(_HEAD, (session,)).fetchone()
        head = 0 if row is None else _head(session, row).seq
        if head != seq - 1:
            return SequenceConflict(session, seq, head + 1)
    first = stored[0]  # no head moved: the batch repeats a (session, seq) of its own
    return SequenceConflict(first.session, first.seq, first.seq)


_NOT_FILES = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _checked_path(path: object) -> str:
    """`path` as a str, or ``TypeError``/``ValueError`` naming it before any file is made.
    SQLite takes ``""`` and ``":memory:"`` for a log that vanishes on close and a
    ``file:`` name for a URI."""
    where = os.fspath(path) if isinstance(path, str | os.PathLike) else path
    if not isinstance(where, str):
        hint = ": decode it first (os.fsdecode)" if isinstance(where, bytes) else ""
        raise TypeError(
            f"path: expected a file path (a str or os.PathLike), got"
            f" {type(path).__name__} {path!r:.80}{hint}"
        )
    if where in ("", ":memory:"):
        raise ValueError(
            f"path: expected a file path, got {where!r}: use MemoryRecorder() for a log in memory"
        )
    if where.startswith("file:"):
        raise ValueError(f"path: expected a file path, not an SQLite URI, got {where!r:.80}")
    if "\0" in where:
        raise ValueError(f"path: expected a file path with no NUL character, got {where!r:.80}")
    return where


def _check_options(synchronous: object, create: object, read_only: object, timeout: object) -> None:
    """Checked before any file is made: SQLite took a wrong type, a negative or NaN
    timeout, and any object for a flag (as true or false) without a word."""
    if synchronous not in _SYNCHRONOUS:
        error = ValueError if isinstance(synchronous, str) else TypeError
        raise error(f"synchronous: expected one of {_SYNCHRONOUS}, got {synchronous!r:.80}")
    for name, flag in (("create", create), ("read_only", read_only)):
        if not isinstance(flag, bool):
            raise TypeError(f"{name}: expected a bool, got {type(flag).__name__} {flag!r:.80}")
    if isinstance(timeout, bool) or not isinstance(timeout, int | float):
        kind = type(timeout).__name__
        raise TypeError(f"busy_timeout: expected a number of seconds, got {kind} {timeout!r:.80}")
    if not (math.isfinite(timeout) and timeout >= 0):
        raise ValueError(f"busy_timeout: expected a finite number of at least 0, got {timeout}")


def _refuse_unless_file(path: str) -> None:
    """Raise `LogOpenError` where `path` is there and is not a file, before anything opens
    it: SQLite calls a directory or a device a disk I/O error (and makes its journal beside
    a device, in /dev), and opening a named pipe waits for its other end, forever."""
    try:
        mode = os.stat(path).st_mode
    except OSError as error:
        if error.errno == errno.ELOOP:  # SQLite's open says only "unable to open"
            raise LogOpenError(
                path, "it is a loop of symbolic links, which leads to no file"
            ) from error
        return  # not there (or not to be looked at): opening it says why
    if not stat.S_ISREG(mode):
        kind = next((kind for is_kind, kind in _NOT_FILES if is_kind(mode)), None)
        raise LogOpenError(path, f"it is {kind}, not a file" if kind else "it is not a file")


def _hard_links(path: str) -> int:
    """How many names the file at `path` has (0 for none yet), not counting the temporary
    name another process building the log links it into place from (`_made_whole`), which
    that process removes right after: an open in between must not take it for a second
    name the operator gave."""
    links = _names(path)
    while links > 1:
        building = _building_names(path)
        now = _names(path)
        if now == links:  # else a name was removed while looking: look again
            return links - building
        links = now
    return links


def _names(path: str) -> int:
    try:
        return os.stat(path).st_nlink
    except FileNotFoundError:
        return 0


def _building_names(path: str) -> int:
    """How many of the temporary names `_made_whole` gives a new log name the file at
    `path`."""
    folder, name = os.path.split(os.path.abspath(path))
    pattern = re.compile(rf"\.{re.escape(name)}\.[0-9a-f]{{8}}\.new")
    try:
        status = os.stat(path)
        entries = [entry for entry in os.scandir(folder) if pattern.fullmatch(entry.name)]
    except OSError:
        return 0
    found = 0
    for entry in entries:
        with suppress(OSError):
            named = entry.stat(follow_symlinks=False)
            found += (named.st_dev, named.st_ino) == (status.st_dev, status.st_ino)
    return found


def _probe_write(conn: sqlite3.Connection) -> None:
    """Raise SQLite's ``SQLITE_READONLY`` error now if the log cannot be written: SQLite
    opens a file it may only read (mode 0444 in a folder it may write) read-only without a
    word, and only the first append would fail. The probe writes nothing.

    A write lock another connection holds past the busy timeout passes: SQLite refuses a
    log it cannot write before it asks for the lock, and servers started together would
    otherwise starve behind each other's appends. Their appends wait the lock out; the
    probe does not wait for it (`semledger end` waited out the busy timeout twice)."""
    (timeout,) = conn.execute("PRAGMA busy_timeout").fetchone()
    conn.execute("PRAGMA busy_timeout=0")
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as error:
        if _code(error) == sqlite3.SQLITE_BUSY:
            return
        raise
    finally:
        conn.execute(f"PRAGMA busy_timeout={int(timeout)}")
    try:
        conn.execute("DELETE FROM schema_version WHERE 0")
    finally:
        conn.execute("ROLLBACK")


class _InPlace:
    """The files a writer commits to: the log and, in WAL mode, its write-ahead log, as the
    writer opened them. Deleted, renamed or replaced while the writer holds them open, its
    commits still succeed, into files no one else can reach; `check` says so instead.

    ``append`` checks before its ``COMMIT``, and rolls back, so a batch it refuses is not
    written. It checks again after, for files moved while SQLite committed: that batch is
    in the write-ahead log the writer holds, and `SqliteRecorder._salvage` folds it into
    the log file the writer holds, with the events before it, though no receipt is given."""

    def __init__(self, path: str, *, wal: bool) -> None:
        real = os.path.realpath(path)  # SQLite follows a symlink, and keeps its -wal beside
        self._paths = (real, *((f"{real}-wal",) if wal else ()))
        self._seen: dict[str, tuple[int, int] | None] = {}

    def check(self) -> None:
        """Raise `LogMovedError` unless each file is still the one first seen at its path."""
        for path in self._paths:
            try:
                status = os.stat(path)
            except FileNotFoundError:
                found = None
            else:
                found = (status.st_dev, status.st_ino)
            seen = self._seen.setdefault(path, found)
            if found is None or seen != found:
                raise _moved(path, seen, replaced=found is not None, log=path == self._paths[0])

    def leave(self) -> None:
        """Remove the ``-wal`` (emptied by `SqliteRecorder._salvage`) and ``-shm`` a writer
        whose log file moved leaves at the path, unless another process uses them (holds
        the lock on the ``-shm`` SQLite takes to use it): SQLite removes them as it closes
        only for a log file still in place, and they would lie beside another file."""
        if len(self._paths) < 2:
            return
        wal, shm = self._paths[1], f"{self._paths[0]}-shm"
        try:
            status = os.stat(wal)
            held = os.open(shm, os.O_RDWR)
        except OSError:
            return
        try:
            if self._seen.get(wal) == (status.st_dev, status.st_ino) and not status.st_size:
                fcntl.lockf(held, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, _SHM_IN_USE)
                os.unlink(wal)
                os.unlink(shm)
        except OSError:
            pass
        finally:
            os.close(held)


def _moved(
    path: str, seen: tuple[int, int] | None, *, replaced: bool, log: bool
) -> LogMovedError:
    """The error of the file first seen at `path` as `seen` (device, inode), no longer
    there: what became of it, where the descriptor SQLite holds on it says (renamed: it
    still has a name; deleted: it has none). A log file's events are where it went; a
    ``-wal``'s go into the log file (`SqliteRecorder._salvage`)."""
    now = "was replaced by another file" if replaced else ""
    named = None if seen is None else _held_open(seen)
    if named is None:
        gone = "was moved or deleted"
        where = "; its events are in the file it was moved to, if it was moved" if log else ""
        return LogMovedError(path, now or gone, where=where)
    name, links = named
    if not links:
        return LogMovedError(path, now or "was deleted")
    if name is None:
        where = "; its events are in that file, under its other name" if log else ""
        return LogMovedError(path, now or "was moved", where=where)
    where = (f"; its events are in {name}" if now else "; its events are there") if log else ""
    return LogMovedError(path, now or f"was moved to {name}", where=where)


def _held_open(identity: tuple[int, int]) -> tuple[str | None, int] | None:
    """The name (None if not found) and the number of names of the file this process holds
    open as `identity` (device, inode), from the descriptors ``/proc/self/fd`` lists; None
    where there is no such list (not Linux) or no such descriptor."""
    try:
        descriptors = os.listdir("/proc/self/fd")
    except OSError:
        return None
    for descriptor in descriptors:
        link = f"/proc/self/fd/{descriptor}"
        try:
            status = os.stat(link)
            if (status.st_dev, status.st_ino) != identity:
                continue
            name = os.readlink(link)
        except OSError:
            continue
        with suppress(OSError):
            named = os.stat(name)
            if (named.st_dev, named.st_ino) == identity:
                return name, status.st_nlink
        return None, status.st_nlink
    return None


_SHM_IN_USE = 128
"""The byte of a ``-shm`` every process using it holds a shared lock on (SQLite's
``UNIX_SHM_DMS``)."""


class _Pins(threading.local):
    conn: sqlite3.Connection | None = None
    """The reader connection this thread pinned, inside its read transaction."""
    reads: weakref.WeakSet[sqlite3.Cursor] | None = None
    """The reads begun on it: one left unfinished as the pin ends (kept alive by an
    exception's traceback, say) would keep the pin's snapshot on the pooled connection,
    and every later reader of it would see the log as it was then."""


class SqliteRecorder:
    """A ``Recorder`` over one SQLite file, created or migrated on open.

    ``synchronous`` is SQLite's durability level: ``"FULL"`` (the default) makes every
    committed batch survive a power loss, which the session actor relies on before it
    answers with a receipt. The writer connection is ``check_same_thread=False`` because
    the log-writer actor calls from worker threads; calls are serialised by a lock.

    With ``create=False`` a file that holds no log yet (an empty file, another program's
    database) is refused with ``LogOpenError`` and left as it is, and a missing one is not
    made: what the inspection commands open must already be a log.

    With ``read_only=True`` the log is only read, so it may sit where nothing can be
    written (a read-only file or folder, an archive); appending fails, and a log whose
    schema would need migrating is refused with ``LogOpenError``. Where SQLite may write
    beside a cleanly closed log, its reads make an empty ``-wal`` and a ``-shm`` there and
    leave them at ``close``: a read-only connection cannot remove them, and removing them
    here is unsafe, as another connection of this process may use them unseen (POSIX locks
    are per process; see docs/log.md). ``to_inspect`` reads a log leaving nothing beside it.

    ``busy_timeout`` is how many seconds a write waits for a lock another connection holds
    (SQLite's busy timeout) before ``append`` raises ``LogBusyError``, having written nothing.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: Synchronous = "FULL",
        converter: LogConverter = CONVERTER,
        create: bool = True,
        read_only: bool = False,
        busy_timeout: float = 5.0,
        _make_nothing: bool = False,
    ) -> None:
        self.path = _checked_path(path)
        _check_options(synchronous, create, read_only, busy_timeout)
        _refuse_unless_file(self.path)
        links = _hard_links(self.path)
        if links > 1:
            raise LogOpenError(
                self.path,
                f"the file has {links} names (hard links): SQLite keeps a log's -wal beside the"
                " name it was opened by, so each name would keep its own and damage the log,"
                " and a session claimed by one name would not be by another; keep one name",
            )
        refused = None if read_only or not links else _write_refusal(self.path)
        if refused is not None:  # before SQLite makes a -wal and -shm with the log's mode
            said = "attempt to write a readonly database"
            if refused.errno == errno.EROFS:
                said = f"it is on a read-only file system, where it cannot be written ({said})"
            raise LogOpenError(self.path, said) from refused
        if not read_only and _full(self.path):  # before SQLite makes files it cannot fill
            raise LogOpenError(self.path, _no_room(self.path))
        made = create and not read_only and links == 0 and _made_whole(self.path, converter)
        self.synchronous = synchronous
        self.busy_timeout = busy_timeout
        self._converter = converter
        self._lock = threading.Lock()
        self._heads: dict[str, Head] = {}
        """Heads this recorder wrote. Safe to trust: if another process appended since, the
        next seq we write collides with the primary key, the batch fails as a
        SequenceConflict and the cache entry is dropped."""
        self._pool: list[sqlite3.Connection] = []
        self._pool_lock = threading.Lock()
        self._pins = _Pins()
        self._closed = False
        self._read_only = read_only
        # Beside the file itself: two paths to one log (a symlink) must share its claims.
        self._claims = FileClaims(os.path.realpath(self.path) + "-claims", self.path)
        self._files = _InPlace(self.path, wal=False)
        # Without create, a missing file stays missing (SQLite would make an empty one).
        self._where, self._uri = (self.path, False)
        if read_only:
            self._where, self._uri = _read_only_uri(self.path, no_room=_make_nothing), True
        elif not create:
            self._where, self._uri = _read_write_uri(self.path), True
        real = os.path.realpath(self.path)
        beside = _beside(real)
        try:
            self._connect(busy_timeout, create, read_only, made, synchronous, converter)
        except (LogOpenError, sqlite3.DatabaseError):  # SQLite follows a symlink
            _remove_made(real, beside)  # what it made beside the log, and could not remove
            raise

    def _connect(
        self,
        busy_timeout: float,
        create: bool,
        read_only: bool,
        made: bool,
        synchronous: str,
        converter: LogConverter,
    ) -> None:
        try:
            self._writer = sqlite3.connect(
                self._where,
                timeout=busy_timeout,
                isolation_level=None,
                check_same_thread=False,
                uri=self._uri,
            )
        except sqlite3.Error as error:
            folder = os.path.dirname(os.path.abspath(self.path))
            why = f"its folder {folder} does not exist" if not os.path.isdir(folder) else ""
            if not why and (read_only or not create) and not os.path.exists(self.path):
                why = "it does not exist"
                if os.path.islink(self.path):
                    why = f"it links to {os.readlink(self.path)}, which does not exist"
            why = why or _disk_full_reason(self.path, error) or _unwritable_reason(self.path, error)
            raise LogOpenError(self.path, why or str(error)) from error
        try:
            if create:
                _refuse_foreign(self._writer, self.path)
            if read_only:
                self.found_schema_version = _readable_version(self._writer, self.path)
            else:
                # Refused before the switch to WAL, which rewrites the file's header.
                version = _current_version(self._writer, self.path)
                if version == 0 and not create:
                    raise LogOpenError(self.path, "it holds no semledger log")
                if version > SCHEMA_VERSION:
                    raise UnsupportedSchemaError(self.path, version, SCHEMA_VERSION)
                (mode,) = self._writer.execute("PRAGMA journal_mode=WAL").fetchone()
                self._writer.execute(f"PRAGMA synchronous={synchronous}")
                found = _migrate(self._writer, self.path, converter)
                self.found_schema_version = 0 if made else found
                _probe_write(self._writer)
                self._files = _InPlace(self.path, wal=mode == "wal")
                self._files.check()  # the files as opened, not as the first append finds them
            limit = self._writer.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) // 7
            self._rows_per_insert = 1 << (min(limit, _ROWS_PER_INSERT).bit_length() - 1)
        except sqlite3.DatabaseError as error:
            self._writer.close()
            if _code(error) & 0xFF == sqlite3.SQLITE_CORRUPT:
                described = _cut_short(error, self.path)
                if described is None:
                    raise  # a log whose pages are damaged, not a file that is no log
                raise described from error
            reason = _disk_full_reason(self.path, error) or (
                _unread_wal(self.path, error) if read_only else ""
            )
            reason = reason or _unwritable_reason(self.path, error)
            if not reason and _busy(error):
                # Not "held past the busy timeout": SQLite does not wait to switch a log to
                # WAL, the first open of a log written before it used WAL.
                reason = (
                    "it is locked by another process, and opening it must first bring its"
                    f" schema or journal up to date: {error}"
                )
            raise LogOpenError(self.path, reason or str(error)) from error
        except BaseException:
            self._writer.close()
            raise

    @classmethod
    def to_inspect(cls, path: str | os.PathLike[str]) -> SqliteRecorder:
        """A recorder for reading a log that must already be one, leaving its files as they
        were, byte for byte.

        With a ``-wal`` beside the log (its server is running, or was killed), read-only:
        a connection that may write would fold that ``-wal`` into the file as it closed,
        the last one. Without one, read-write if we may, which makes and then removes the
        ``-wal`` and ``-shm`` SQLite needs and writes nothing; else (the disk is full, say)
        read-only (``_read_only_uri``), which makes nothing. Where making them fails though
        the disk has room (a quota, a file size limit), what the attempt made is removed
        and the log is read as on a full disk. A log of an older schema is migrated
        (written) once, if it can be; raises `OutdatedSchemaError` if it cannot.
        """
        where = _checked_path(path)
        _refuse_unless_file(where)
        clean = not os.path.exists(f"{where}-wal")
        absolute = os.path.abspath(where)
        no_room = False
        if clean and _writable(where) and _owned_by_us(absolute) and not _full(absolute):
            try:
                return cls(where, create=False)
            except LogOpenError as error:
                no_room = _io_error(error.__cause__)
                if not (no_room or _cannot_write(error.__cause__) or _full(absolute)):
                    raise
        try:
            return cls._opened_read_only(where, no_room=no_room)
        except OutdatedSchemaError as outdated:
            try:
                return cls(where, create=False)
            except LogOpenError as error:
                if _cannot_write(error.__cause__) or _io_error(error.__cause__):
                    raise outdated from None
                raise

    @classmethod
    def _opened_read_only(cls, where: str, *, no_room: bool) -> SqliteRecorder:
        """`where` opened read-only for `to_inspect`: again as on a full disk (making nothing)
        where SQLite failed to write what it made beside the log; `LogUnreadableError` where
        it cannot be read even so."""
        absolute = os.path.abspath(where)
        while True:
            try:
                return cls(where, read_only=True, _make_nothing=no_room)
            except LogOpenError as error:
                if not _io_error(error.__cause__):
                    raise
                if no_room or not _no_frames(absolute):
                    raise LogUnreadableError(where, _unread(error)) from error.__cause__
                no_room = True

    def __enter__(self) -> SqliteRecorder:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise RecorderClosedError(f"the recorder of {self.path} is closed")

    def served(self, sessions: Iterable[str]) -> dict[str, bool | None]:
        return self._claims.served(checked_names(sessions))

    def claim(self, session: str) -> AbstractContextManager[None]:
        """A ``flock`` on a file under ``<path>-claims/``, so the claim holds across
        processes and ends with the process that holds it (see ``FileClaims``).

        The session's head this recorder wrote last is forgotten as the claim is taken:
        another process may have served the session since, and the next seq its claimer
        reads from the log would be refused against that head as not the next one."""
        check_session(session)
        return self._claim(session)

    @contextmanager
    def _claim(self, session: str) -> Iterator[None]:
        before: list[Head | None] = []  # (none where the head cannot be read: touched)

        def untouched() -> bool:
            with suppress(EventLogError, sqlite3.Error):
                return bool(before) and self.head(session) == before[0]
            return False

        def unended() -> bool:
            with suppress(EventLogError, sqlite3.Error):
                summary = self.summary(session)
                return summary is not None and not summary.ended
            return False

        with self._claims.claim(session, untouched=untouched, unended=unended):
            with self._lock:
                self._heads.pop(session, None)
            with suppress(EventLogError, sqlite3.Error):
                before.append(self.head(session))
            yield

    def append(self, events: Sequence[NewEvent]) -> list[StoredEvent]:
        check_batch(events)
        if not events:
            self._check_open()
            return []
        with self._lock:
            self._check_open()
            conn = self._writer

            heads = self._heads

            def head_of(session: str) -> Head | None:
                cached = heads.get(session)
                if cached is not None:
                    return cached
                row = conn.execute(_HEAD, (session,)).fetchone()
                return None if row is None else _head(session, row)

            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as error:
                if _busy(error):
                    raise LogBusyError(self.path, self.busy_timeout) from error
                raise
            try:
                limit = conn.getlimit(sqlite3.SQLITE_LIMIT_LENGTH)
                stored, deltas = prepare_batch(events, head_of, self._converter.encode_parts, limit)
                try:
                    self._insert_rows(stored)
                except sqlite3.IntegrityError as exc:  # only if a head moved under us
                    conn.execute("ROLLBACK")  # so the heads read next are the committed ones
                    raise _moved_head(conn, stored) from exc
                conn.executemany(
                    _UPSERT_SESSION,
                    [
                        (
                            d.name,
                            d.app,
                            d.surface,
                            d.first_at,
                            d.last_at,
                            d.events,
                            d.ended,
                            d.crashed,
                            d.end_reason,
                        )
                        for d in deltas.values()
                    ],
                )
                self._files.check()  # moved before the commit: write nothing
                conn.execute("COMMIT")
                self._files.check()  # moved while committing: see `_InPlace`
            except BaseException as error:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                if isinstance(error, LogMovedError):
                    self._salvage()
                for new in events:
                    session = getattr(new, "session", None)  # (refused, it may have none)
                    if type(session) is str:
                        heads.pop(session, None)
                if _busy(error):  # rolled back: nothing of the batch is written
                    raise LogBusyError(self.path, self.busy_timeout) from error
                raise
            for name, last in {record.session: record for record in stored}.items():
                heads[name] = Head(last.seq, last.chain)
            return stored

    def _salvage(self) -> None:
        """Fold the write-ahead log into the log file the writer still holds open, and
        empty it: SQLite's own checkpoint as the last connection closes skips a log file
        renamed or deleted under it, which left the ``-wal`` at the path laid over whatever
        file took the log's place, and the moved file without the events it received.
        A ``-wal`` deleted under the writer is folded into the log file it belongs to."""
        with suppress(sqlite3.Error):
            self._writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def _insert_rows(self, stored: list[StoredEvent]) -> None:
        """Insert the rows with as few statements as their count allows.

        One ``INSERT`` of many rows costs about 30% less a row than ``executemany`` of
        one-row inserts (one bind and one step for all of them), and SQLite does the whole
        statement without holding the GIL. Counts are taken in powers of two, so at most a
        handful of statement texts exist, each prepared once and then cached.
        """
        conn, size, start, total = self._writer, self._rows_per_insert, 0, len(stored)
        while start < total:
            while total - start < size:
                size //= 2
            sql = _insert_sql(size)
            stop = start + size
            conn.execute(sql, list(itertools.chain.from_iterable(stored[start:stop])))
            start = stop

    @contextmanager
    def pinned(self) -> Iterator[None]:
        """One pooled reader connection, held by this thread inside one read transaction:
        in WAL mode its snapshot is taken by the transaction's first read, and every later
        read in it sees that snapshot whatever is committed meanwhile."""
        self._check_open()
        if self._pins.conn is not None:
            yield
            return
        with self._reader() as conn:
            conn.execute("BEGIN")
            try:
                conn.execute(_PIN).fetchall()
                self._pins.conn = conn
                reads: weakref.WeakSet[sqlite3.Cursor] = weakref.WeakSet()
                self._pins.reads = reads
                try:
                    yield
                finally:
                    self._pins.conn = self._pins.reads = None
                    for cursor in reads:
                        cursor.close()
            finally:
                conn.execute("COMMIT")

    def _pinned_read(self, conn: sqlite3.Connection, cursor: sqlite3.Cursor) -> None:
        """Note `cursor`, a read of many rows, for the pin to end if it is on its connection."""
        reads = self._pins.reads
        if reads is not None and conn is self._pins.conn:
            reads.add(cursor)

    @contextmanager
    def _reader(self) -> Iterator[sqlite3.Connection]:
        try:
            with self._pooled() as conn:
                yield conn
        except sqlite3.DatabaseError as error:
            described = _cut_short(error, self.path)
            if described is None:
                raise
            raise described from error

    @contextmanager
    def _pooled(self) -> Iterator[sqlite3.Connection]:
        pinned = self._pins.conn
        if pinned is not None:
            yield pinned
            return
        with self._pool_lock:
            conn = self._pool.pop() if self._pool else None
        if conn is None:
            if not self._read_only:
                # Opened by path, a reader of a log replaced under the writer would read the
                # other file with the writer's -wal laid over it, and fold that in as it closed.
                self._files.check()
            # Never `create`: a reader of a log deleted under the server would make an empty
            # file, which the next reader took for a log with no tables.
            where = self._where if self._uri else _read_write_uri(self.path)
            try:
                conn = sqlite3.connect(
                    where,
                    timeout=self.busy_timeout,
                    isolation_level=None,
                    check_same_thread=False,
                    uri=True,
                )
            except sqlite3.OperationalError:
                if not os.path.exists(self.path):
                    raise LogMovedError(
                        self.path, "was moved or deleted", reading=self._read_only
                    ) from None
                raise
            conn.execute("PRAGMA query_only=ON")
        try:
            yield conn
        finally:
            with self._pool_lock:
                if self._closed:
                    conn.close()
                else:
                    self._pool.append(conn)

    def read(
        self, session: str, *, start: int = EVERY_SEQ, stop: int | None = None
    ) -> Iterator[StoredEvent]:
        self._check_open()
        check_session(session)
        check_range(start, stop)
        return self._read(session, start, stop)

    def _read(self, session: str, start: int, stop: int | None) -> Iterator[StoredEvent]:
        with self._reader() as conn:
            if stop is None:
                cursor = conn.execute(_READ, (session, _in_range(start)))
            else:
                cursor = conn.execute(_READ_STOP, (session, _in_range(start), _in_range(stop)))
            self._pinned_read(conn, cursor)
            try:
                yield from _checked_rows(cursor)
            finally:
                # A reader that stopped early may be finalized after the recorder closed
                # (an exception's traceback kept it): its connection is gone with it.
                with suppress(sqlite3.ProgrammingError):
                    cursor.close()

    def events(
        self, session: str, *, start: int = EVERY_SEQ, stop: int | None = None
    ) -> Iterator[tuple[StoredEvent, Event]]:
        self._check_open()
        check_session(session)
        check_range(start, stop)
        return self._events(session, start, stop)

    def _events(
        self, session: str, start: int, stop: int | None
    ) -> Iterator[tuple[StoredEvent, Event]]:
        yield from self._converter.decode_records(self._read(session, start, stop))

    def replay(self, session: str, *, start: int = EVERY_SEQ) -> Iterator[Event]:
        self._check_open()
        check_session(session)
        check_seq("start", start)
        return self._replay(session, start)

    def _replay(self, session: str, start: int) -> Iterator[Event]:
        with self._reader() as conn:
            cursor = conn.execute(_REPLAY, (session, _in_range(start)))
            self._pinned_read(conn, cursor)
            try:
                yield from self._converter.decode_rows(cursor)
            finally:
                cursor.close()

    def head(self, session: str) -> Head | None:
        self._check_open()
        check_session(session)
        with self._reader() as conn:
            row = conn.execute(_HEAD, (session,)).fetchone()
        return None if row is None else _head(session, row)

    def last_of(
        self, session: str, topic: str, *, before: int | None = None
    ) -> StoredEvent | None:
        self._check_open()
        check_session(session)
        check_topic(topic)
        check_seq("before", before, optional=True)
        bound = _NO_SEQ_BOUND if before is None else _in_range(before)
        with self._reader() as conn:
            if topic == _CHECKPOINT:
                row = conn.execute(_LAST_CHECKPOINT, (session, bound)).fetchone()
            else:
                row = conn.execute(_LAST_OF, (session, topic, bound)).fetchone()
        return None if row is None else _checked(row)

    def seqs_of(self, session: str, topic: str) -> list[int]:
        """An index seek for read checkpoints (``SemanticsTaken``); for any other topic,
        a scan of the session's rows. A seq edited into another type is left out: reading
        its row names the damage."""
        self._check_open()
        check_session(session)
        check_topic(topic)
        with self._reader() as conn:
            if topic == _CHECKPOINT:
                rows = conn.execute(_CHECKPOINT_SEQS, (session,)).fetchall()
            else:
                rows = conn.execute(_SEQS_OF, (session, topic)).fetchall()
        return [seq for (seq,) in rows if type(seq) is int]

    def sessions(self) -> list[SessionSummary]:
        self._check_open()
        with self._reader() as conn:
            rows = conn.execute(_SESSIONS).fetchall()
        return [_summary(row) for row in rows]

    def summary(self, session: str) -> SessionSummary | None:
        self._check_open()
        check_session(session)
        with self._reader() as conn:
            row = conn.execute(_SUMMARY, (session,)).fetchone()
        return None if row is None else _summary(row)

    def session_names(self) -> Iterator[str]:
        self._check_open()
        return self._session_names()

    def _session_names(self) -> Iterator[str]:
        with self._reader() as conn:
            row = conn.execute(_FIRST_SESSION).fetchone()
            while row is not None:
                if isinstance(row[0], str):
                    yield row[0]
                row = conn.execute(_NEXT_SESSION, (row[0],)).fetchone()

    def close(self) -> None:
        with self._lock, self._pool_lock:
            if self._closed:
                return
            self._closed = True
            pool, self._pool = self._pool, []
            moved = False
            if not self._read_only:
                try:
                    self._files.check()
                except LogMovedError:
                    moved = True
                    self._salvage()
            self._writer.close()
        for conn in pool:
            conn.close()
        if moved:
            self._files.leave()


@attrs.frozen
class LogInfo:
    """What ``inspect_log`` found in a database file."""

    path: str
    schema_version: int
    tables: tuple[str, ...]
    sessions: int
    events: int


def inspect_log(path: str | os.PathLike[str]) -> LogInfo:
    """Describe a log file without opening a recorder (so without migrating it)."""
    name = os.fspath(path)
    conn = sqlite3.connect(Path(name).resolve().as_uri() + "?mode=ro", uri=True)
    try:
        import sqlite_utils

        db = sqlite_utils.Database(conn, execute_plugins=False)
        tables = tuple(sorted(db.table_names()))
        events = db.table("events").count if "events" in tables else 0
        if "sessions" in tables:
            sessions = db.table("sessions").count
        elif "events" in tables:
            sessions = db.execute("SELECT COUNT(DISTINCT session) FROM events").fetchone()[0]
        else:
            sessions = 0
        return LogInfo(name, _schema_version(db), tables, sessions, events)
    finally:
        conn.close()
