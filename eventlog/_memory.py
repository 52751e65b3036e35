"""An in-memory recorder with the same behaviour as the SQLite one (for tests, replay)."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager

import attrs

from ._claims import ProcessClaims
from ._codec import CONVERTER, LogConverter
from ._errors import RecorderClosedError
from ._events import Event
from ._recorder import (
    EVENT_SIZE_LIMIT,
    EVERY_SEQ,
    check_batch,
    check_range,
    check_seq,
    check_session,
    check_topic,
    checked_names,
    prepare_batch,
)
from ._records import Head, NewEvent, SessionSummary, StoredEvent

__all__ = ["MemoryRecorder"]


@attrs.frozen
class _Moment:
    """The log as a pinned read sees it: each session's length and summary then. Records
    are only ever appended to a session's list, so a length is enough."""

    lengths: dict[str, int]
    summaries: dict[str, SessionSummary]


class _Pins(threading.local):
    moment: _Moment | None = None


class MemoryRecorder:
    """A ``Recorder`` over Python lists; bodies are encoded and chained exactly as stored.

    Safe to read from one thread while another appends: a read sees the events that were
    committed when its iteration started.
    """

    size_limit: int = EVENT_SIZE_LIMIT
    """The most bytes an event's row may take, as in the SQLite log (a test may lower it)."""

    def __init__(self, *, converter: LogConverter = CONVERTER) -> None:
        self._converter = converter
        self._events: dict[str, list[StoredEvent]] = {}
        self._summaries: dict[str, SessionSummary] = {}
        self._lock = threading.Lock()
        self._closed = False
        self._claims = ProcessClaims()
        self._pins = _Pins()

    @contextmanager
    def pinned(self) -> Iterator[None]:
        """Copies each session's length and summary: as costly as the log has sessions,
        which a recorder for tests can afford."""
        self._check_open()
        if self._pins.moment is not None:
            yield
            return
        with self._lock:
            lengths = {name: len(records) for name, records in self._events.items()}
            moment = _Moment(lengths, dict(self._summaries))
        self._pins.moment = moment
        try:
            yield
        finally:
            self._pins.moment = None

    def _length(self, session: str, records: list[StoredEvent]) -> int:
        """How many of the session's records this thread's reads see."""
        moment = self._pins.moment
        return len(records) if moment is None else moment.lengths.get(session, 0)

    def served(self, sessions: Iterable[str]) -> dict[str, bool | None]:
        return self._claims.served(checked_names(sessions))

    def claim(self, session: str) -> AbstractContextManager[None]:
        check_session(session)
        return self._claims.claim(session)

    def _check_open(self) -> None:
        if self._closed:
            raise RecorderClosedError("the recorder is closed")

    def _head_unlocked(self, session: str) -> Head | None:
        records = self._events.get(session)
        if not records:
            return None
        last = records[-1]
        return Head(last.seq, last.chain)

    def append(self, events: Sequence[NewEvent]) -> list[StoredEvent]:
        check_batch(events)
        with self._lock:
            self._check_open()
            encode = self._converter.encode_parts
            stored, deltas = prepare_batch(events, self._head_unlocked, encode, self.size_limit)
            for record in stored:
                self._events.setdefault(record.session, []).append(record)
            for name, delta in deltas.items():
                self._summaries[name] = delta.merged_into(self._summaries.get(name))
            return stored

    def read(
        self, session: str, *, start: int = EVERY_SEQ, stop: int | None = None
    ) -> Iterator[StoredEvent]:
        self._check_open()
        check_session(session)
        check_range(start, stop)
        return self._stream(session, start, stop)

    def _stream(self, session: str, start: int, stop: int | None) -> Iterator[StoredEvent]:
        with self._lock:
            records = self._events.get(session, [])
            end = self._length(session, records)
        if stop is not None:
            end = min(end, max(stop - 1, 0))
        for index in range(max(start - 1, 0), end):
            yield records[index]

    def events(
        self, session: str, *, start: int = EVERY_SEQ, stop: int | None = None
    ) -> Iterator[tuple[StoredEvent, Event]]:
        self._check_open()
        check_session(session)
        check_range(start, stop)
        return self._decoded(session, start, stop)

    def _decoded(
        self, session: str, start: int, stop: int | None
    ) -> Iterator[tuple[StoredEvent, Event]]:
        yield from self._converter.decode_records(self._stream(session, start, stop))

    def replay(self, session: str, *, start: int = EVERY_SEQ) -> Iterator[Event]:
        self._check_open()
        check_session(session)
        check_seq("start", start)
        return self._converter.decode_rows(
            (r.topic, r.version, r.body) for r in self._stream(session, start, None)
        )

    def head(self, session: str) -> Head | None:
        with self._lock:
            self._check_open()
            check_session(session)
            records = self._events.get(session, [])
            end = self._length(session, records)
            return Head(records[end - 1].seq, records[end - 1].chain) if end else None

    def last_of(
        self, session: str, topic: str, *, before: int | None = None
    ) -> StoredEvent | None:
        with self._lock:
            self._check_open()
            check_session(session)
            check_topic(topic)
            check_seq("before", before, optional=True)
            records = self._events.get(session, [])
            end = self._length(session, records)
            if before is not None:
                end = max(0, min(end, before - 1))
            # Backwards from `end` without copying: a checkpoint is near the end.
            return next(
                (records[i] for i in range(end - 1, -1, -1) if records[i].topic == topic), None
            )

    def seqs_of(self, session: str, topic: str) -> list[int]:
        with self._lock:
            self._check_open()
            check_session(session)
            check_topic(topic)
            records = self._events.get(session, [])
            end = self._length(session, records)
            return [records[i].seq for i in range(end) if records[i].topic == topic]

    def sessions(self) -> list[SessionSummary]:
        with self._lock:
            self._check_open()
            summaries = self._summaries_seen()
            return [summaries[name] for name in sorted(summaries)]

    def summary(self, session: str) -> SessionSummary | None:
        with self._lock:
            self._check_open()
            check_session(session)
            return self._summaries_seen().get(session)

    def session_names(self) -> Iterator[str]:
        with self._lock:
            self._check_open()
            names = [name for name, records in self._events.items() if self._length(name, records)]
        return iter(sorted(names))

    def _summaries_seen(self) -> dict[str, SessionSummary]:
        moment = self._pins.moment
        return self._summaries if moment is None else moment.summaries

    def close(self) -> None:
        self._closed = True
