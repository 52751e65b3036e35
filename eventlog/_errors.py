"""The typed errors of the semantics log."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._records import StoredEvent

__all__ = [
    "DAMAGED_LOG_ERRORS",
    "CorruptEventError",
    "CorruptSchemaError",
    "CorruptSummaryError",
    "EventLogError",
    "EventTooLargeError",
    "InconsistentLogError",
    "LogBusyError",
    "LogMovedError",
    "MalformedRowError",
    "OutdatedSchemaError",
    "RecorderClosedError",
    "SequenceConflict",
    "SessionClaimedError",
    "SessionOverError",
    "UnknownSessionError",
    "UnknownTopicError",
    "UnsupportedSchemaError",
    "UnsupportedVersionError",
]


class EventLogError(Exception):
    """Base class of every error the log raises on purpose."""


class UnknownTopicError(EventLogError):
    """Raised when decoding an event whose topic this code has no class for."""

    def __init__(self, topic: str) -> None:
        super().__init__(f"unknown event topic {topic!r}")
        self.topic = topic


class UnsupportedVersionError(EventLogError):
    """Raised when an event's stored version cannot be brought to the current one.

    Either the version is newer than the code knows (the log was written by a later
    semledger) or no upcaster is registered for one step of the way.
    """

    def __init__(self, topic: str, version: int, current: int, reason: str) -> None:
        super().__init__(f"{topic} version {version} (current {current}): {reason}")
        self.topic = topic
        self.version = version
        self.current = current


class CorruptEventError(EventLogError):
    """Raised when a stored body is not a valid encoding of the event its row names."""

    def __init__(self, topic: str, version: int, reason: str) -> None:
        super().__init__(f"cannot decode {topic} version {version}: {reason}")
        self.topic = topic
        self.version = version


class InconsistentLogError(EventLogError):
    """Raised when an event decodes but does not follow from the ones before it (a commit
    whose delta starts at another generation): the log was edited or damaged, and
    ``audit --verify`` names where, unless the chain was recomputed too (which only an
    anchor taken earlier shows)."""

    def __init__(self, session: str, seq: int, reason: str) -> None:
        super().__init__(f"session {session!r}, event {seq}: {reason}")
        self.session = session
        self.seq = seq


class CorruptSummaryError(EventLogError):
    """Raised when a session's row in the log's summary table does not hold what the
    recorder writes there (someone edited it)."""

    def __init__(self, session: str, reason: str) -> None:
        super().__init__(f"the summary of session {session!r} is malformed: {reason}")
        self.session = session
        self.reason = reason


class MalformedRowError(EventLogError):
    """Raised when a row of the log's events holds a value of another type than the recorder
    writes in one of its columns (a seq edited into text, a time that is no number): SQLite
    keeps whatever a hand edit puts there. ``seq`` is the row's seq as stored, ``column``
    the first column found wrong. ``record``: when its time alone is wrong, the row with
    ``at`` NaN, which the chain does not cover, so that a reader may go past it (None
    otherwise)."""

    def __init__(
        self,
        session: str,
        seq: object,
        column: str,
        value: object,
        expected: str,
        record: StoredEvent | None = None,
    ):
        event = "an event" if column == "seq" else f"event {seq}"
        self.what = f"{event} is malformed: its {column} is {value!r}, not {expected}"
        """What is wrong, without the session's name."""
        super().__init__(f"session {session!r}: {self.what}")
        self.session = session
        self.seq = seq
        self.column = column
        self.record = record


class SequenceConflict(EventLogError):  # noqa: N818 - the name the log's users know
    """Raised by ``append`` when a ``(session, seq)`` is taken, is not the next one, or is
    below 1.

    The whole batch is refused: nothing of it is written.
    """

    def __init__(self, session: str, seq: int, expected: int) -> None:
        if seq < 1:
            taken = "is out of range: sequence numbers start at 1"
        else:
            taken = "is taken" if seq < expected else "is not the next one"
        super().__init__(f"session {session!r}: seq {seq} {taken} (expected {expected})")
        self.session = session
        self.seq = seq
        self.expected = expected


class EventTooLargeError(EventLogError):
    """Raised by ``append`` for an event whose row would be larger than the log holds in one
    (SQLite's length limit, a billion bytes unless lowered). The whole batch is refused:
    nothing of it is written, and the log is as it was, not damaged."""

    def __init__(self, session: str, seq: int, topic: str, size: int, limit: int) -> None:
        super().__init__(
            f"session {session!r}, event {seq} ({topic}) is too large for the log: its row"
            f" would take {size:,} bytes, more than the {limit:,} it holds in one"
        )
        self.session = session
        self.seq = seq
        self.topic = topic
        self.size = size
        self.limit = limit


class LogOpenError(EventLogError):
    """Raised when a log file cannot be opened or created (a missing folder, no permission,
    not an SQLite file); and by a claim, when the log's session claims folder cannot be made
    or written."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"cannot open the log {path}: {reason}")
        self.path = path
        self.reason = reason


class LogUnreadableError(LogOpenError):
    """Raised by ``SqliteRecorder.to_inspect`` when a log is there but cannot be read for an
    I/O error: a failing disk, or no room for the ``-shm`` that reading the ``-wal`` beside
    it needs (a full disk, a quota, a file size limit). Not bad usage: the commands report
    it as a log that cannot be read (exit 1)."""

    def __init__(self, path: str, reason: str) -> None:
        EventLogError.__init__(self, f"the log {path} cannot be read: {reason}")
        self.path = path
        self.reason = reason


class CorruptSchemaError(LogOpenError):
    """Raised when a log's schema version is not a version, or says less than its tables
    hold (it says 1, and it has the summary table of version 2): the log was edited, and
    migrating over it would fail or overwrite what it holds. A damaged log, not a file that
    holds no log."""


class OutdatedSchemaError(LogOpenError):
    """Raised when a log opened read-only has an older schema, which only a recorder that
    may write can migrate (once; the log is read as it is from then on)."""


class LogMovedError(EventLogError):
    """Raised by ``append`` when the log file or its write-ahead log is no longer the file
    the recorder opened at its path (deleted, renamed, replaced): what it committed would
    go where no one opening the path will find it, so it is not durable in any sense an
    agent's receipt may promise. The batch is rolled back (unless the files moved while it
    was committed). Raised by a read, too, that finds the file gone.

    `what` says what became of the file (``"was moved to /srv/log.db.bak"``), `where` where
    its events are (``"; its events are there"``), `reading` that the recorder only reads."""

    def __init__(self, path: str, what: str, *, where: str = "", reading: bool = False) -> None:
        doing = "read" if reading else "wrote to"
        super().__init__(f"{path} {what} while this recorder {doing} it{where}")
        self.path = path


class LogBusyError(EventLogError):
    """Raised by ``append`` when another connection held the log's write lock for longer
    than the recorder's busy timeout (a maintenance script, an ``sqlite3`` shell inside
    ``BEGIN IMMEDIATE``). Nothing of the batch is written, so the same batch may be
    appended again; the log writer does so until the lock is released."""

    def __init__(self, path: str, timeout: float) -> None:
        super().__init__(
            f"the log {path} is locked by another process (its write lock was held for more"
            f" than the busy timeout of {timeout:g} s)"
        )
        self.path = path
        self.timeout = timeout


class RecorderClosedError(EventLogError):
    """Raised when a recorder is used after ``close()``."""


class UnsupportedSchemaError(EventLogError):
    """Raised when an SQLite log's schema version is newer than this code knows."""

    def __init__(self, path: str, version: int, known: int) -> None:
        super().__init__(f"{path}: schema version {version}, this semledger knows {known}")
        self.path = path
        self.version = version
        self.known = known


class SessionClaimedError(EventLogError):
    """Raised by ``Recorder.claim`` when the session already has an owner: a live session
    actor in this process or in another one using the same log."""

    def __init__(self, session: str) -> None:
        super().__init__(
            f"session {session!r} is already being served (by this process or another one "
            "using the same log); a session has one owner at a time"
        )
        self.session = session


class SessionOverError(EventLogError):
    """Raised by ``log_final_end`` for a session that is over already: ended for good, or
    crashed (never resumed, and an end after the crash would hide it)."""

    def __init__(self, session: str, why: str) -> None:
        super().__init__(f"session {session!r} is over already: {why}")
        self.session = session


class UnknownSessionError(LookupError):
    """Raised when the log has no session of that name."""


DAMAGED_LOG_ERRORS: tuple[type[Exception], ...] = (
    CorruptEventError,
    CorruptSummaryError,
    InconsistentLogError,
    MalformedRowError,
    UnknownTopicError,
    UnsupportedVersionError,
    sqlite3.DatabaseError,
)
"""What reading a damaged log raises: a body that does not decode, events that do not
follow from each other, a row edited into another type (a seq into text), a summary row
edited by hand, a page SQLite finds malformed. The commands report them as "the log cannot
be read" (exit 1); an HTTP server answers 500 for the session concerned and goes on."""
