"""The recorder interface, the batch preparation every recorder shares, and redaction."""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from math import isfinite, nan
from typing import Any, Final, Protocol

import attrs

from semledger.runtime._ids import LOGGABLE_INTS

from ._chain import (
    GENESIS,
    ChainProblem,
    ChainReport,
    Problem,
    TimeProblem,
    chain_step_prefixed,
    length_prefixed,
    verify_chain,
)
from ._codec import CONVERTER
from ._errors import (
    CorruptSummaryError,
    EventLogError,
    EventTooLargeError,
    InconsistentLogError,
    MalformedRowError,
    SequenceConflict,
    SessionOverError,
    UnknownSessionError,
)
from ._events import TOPICS, EndedBy, Event, SessionCrashed, SessionEnded, SessionStarted
from ._order import LogOrder
from ._records import (
    Head,
    NewEvent,
    SessionSummary,
    StoredEvent,
    SummaryDelta,
    end_reason,
    stored_event,
)

__all__ = [
    "EVENT_SIZE_LIMIT",
    "REDACTED",
    "Recorder",
    "SessionProblem",
    "check_counted",
    "checked_sessions",
    "known_head",
    "loggable_json",
    "loggable_text",
    "not_a_start",
    "redact_action",
    "refused_arguments",
    "session_start",
    "uncounted_gap",
    "unstarted",
    "verify_log",
]

REDACTED = "[redacted]"

EVERY_SEQ: Final = -(2**63)
"""A read's default start, SQLite's smallest integer: a read from it returns every row of
the session, seq 1 on, and also a row an edit labelled 0 or below, which then is damage
where a command reads the session from its start (a start of 0 left out those below 0)."""


class Recorder(Protocol):
    """Where a log lives. Implementations: ``SqliteRecorder``, ``MemoryRecorder``.

    Sequence numbers start at 1 per session and have no gaps. A recorder never reads a
    clock: ``at`` is whatever the appender put in ``NewEvent``. Reads are lazy and see the
    events committed when iteration starts, or, inside ``pinned``, when it was entered.
    """

    def append(self, events: Sequence[NewEvent]) -> list[StoredEvent]:
        """Encode, chain and write every event atomically; return what was stored.

        Raises ``SequenceConflict`` (and writes nothing) if any ``(session, seq)`` is
        taken or is not the next one after the session's head.
        """
        ...

    def read(
        self, session: str, *, start: int = EVERY_SEQ, stop: int | None = None
    ) -> Iterator[StoredEvent]:
        """The session's records with ``start <= seq < stop``, in seq order, streamed."""
        ...

    def events(
        self, session: str, *, start: int = EVERY_SEQ, stop: int | None = None
    ) -> Iterator[tuple[StoredEvent, Event]]:
        """Like ``read``, each record with its decoded (upcast) event."""
        ...

    def replay(self, session: str, *, start: int = EVERY_SEQ) -> Iterator[Event]:
        """Just the session's decoded events from ``start``: the fast path for replaying."""
        ...

    def head(self, session: str) -> Head | None:
        """The session's last seq and chain value; None for a session with no events."""
        ...

    def last_of(self, session: str, topic: str, *, before: int | None = None) -> StoredEvent | None:
        """The session's last record of `topic` (its latest checkpoint, say), or None;
        with `before`, the last one whose seq is below it."""
        ...

    def seqs_of(self, session: str, topic: str) -> list[int]:
        """The seqs of the session's records of `topic`, in order, without reading them:
        where its read checkpoints are (``SemanticsTaken``, which the SQLite log indexes;
        any other topic is found by a scan of the session's records)."""
        ...

    def pinned(self) -> AbstractContextManager[None]:
        """Read the log at one moment: every read this thread makes inside the context
        (summaries, heads, records) sees the log as it was when it was entered, and none
        of the appends made since, by this recorder or another writer.

        What a check that compares two reads needs (a summary row and the events it
        counts) while a server appends. Nested, it keeps the outer moment. A read must be
        consumed inside the context.
        """
        ...

    def claim(self, session: str) -> AbstractContextManager[None]:
        """Own `session` while the context is open; raises ``SessionClaimedError`` if it
        already has an owner. Session actors hold it from their start to their end."""
        ...

    def served(self, sessions: Iterable[str]) -> dict[str, bool | None]:
        """Whether each of `sessions` has an owner now (is being served, in this process or
        another); None where that cannot be told here (a copy of a SQLite log has no claims
        beside it). Takes no claim. Raises ``TypeError`` for a str `sessions`."""
        ...

    def sessions(self) -> list[SessionSummary]:
        """Every session in the log, ordered by name."""
        ...

    def summary(self, session: str) -> SessionSummary | None:
        """One session's summary (None for a session with no events), however many
        sessions the log holds."""
        ...

    def session_names(self) -> Iterator[str]:
        """The name of every session that has events, in order, found from the events
        themselves (not the summary) at one index lookup a session, without reading them."""
        ...

    def close(self) -> None:
        """Release the recorder; any later use raises ``RecorderClosedError``. Idempotent."""
        ...


def check_not_one_name(sessions: object) -> None:
    """Raise ``TypeError`` for a str `sessions`: its letters would be taken as names."""
    if isinstance(sessions, str):
        raise TypeError(
            f"sessions: expected a sequence of session names, got the str {sessions!r:.80}"
            f" (one session: [{sessions!r:.80}])"
        )


def checked_names(sessions: Iterable[str]) -> list[str]:
    """`sessions` as a list, after `check_not_one_name`; ``TypeError`` naming the first
    name that is not a str (SQLite's claims failed hashing it, a memory log's answered)."""
    check_not_one_name(sessions)
    names = list(sessions)
    for name in names:
        if not isinstance(name, str):
            raise TypeError(
                f"sessions: expected session names (str), got {type(name).__name__}"
                f" {name!r:.80} among them"
            )
    return names


def check_session(session: object) -> None:
    """Raise ``TypeError`` unless `session` is a str: SQLite found no rows for ``5`` and
    hashed no claim file for it, a memory log found none either, so a wrong argument read
    as an unknown session on one recorder and failed deep inside the other."""
    if not isinstance(session, str):
        raise TypeError(f"session: expected a str, got {type(session).__name__} {session!r:.80}")


def check_topic(topic: object) -> None:
    """Raise ``TypeError`` unless `topic` is a str: given the event class itself
    (``last_of(s, SnapshotTaken)``), every recorder answered as for a topic never logged."""
    if not isinstance(topic, str):
        hint = f": give its name, {topic.__name__!r}" if isinstance(topic, type) else ""
        raise TypeError(
            f"topic: expected an event class's name (a str), got {type(topic).__name__}"
            f" {topic!r:.80}{hint}"
        )


def check_seq(name: str, value: object, *, optional: bool = False) -> None:
    """Raise `TypeError` unless `value`, the read argument `name`, is an int (or None if
    `optional`): SQLite would compare a str such as ``"2"`` as the number, a memory log
    would not compare it at all."""
    if optional and value is None:
        return
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name}: expected an int seq, got {type(value).__name__} {value!r:.80}")


def check_range(start: object, stop: object) -> None:
    """`check_seq` for a read's `start` and optional `stop`."""
    check_seq("start", start)
    check_seq("stop", stop, optional=True)


_TOPIC_FIELDS: dict[str, bytes] = {}
"""Each topic `length_prefixed`, made once: there are only as many as event classes."""


EVENT_SIZE_LIMIT: Final = 1_000_000_000
"""The most bytes a row of the log holds: SQLite's ``SQLITE_MAX_LENGTH`` as built, which a
connection may lower (``SQLITE_LIMIT_LENGTH``); a memory log holds as much."""
_ROW_OVERHEAD: Final = 128
"""What a row holds besides its body, session and topic, generously: the chain (32 bytes),
three numbers and the row's header; SQLite refuses a row, not a body, over its limit."""


def prepare_batch(
    batch: Sequence[NewEvent],
    head_of: Callable[[str], Head | None],
    encode: Callable[[Event], tuple[str, int, bytes]],
    limit: int = EVENT_SIZE_LIMIT,
) -> tuple[list[StoredEvent], dict[str, SummaryDelta]]:
    """Check a batch's sequence numbers, encode it and chain it, writing nothing.

    ``head_of`` is asked once per session in the batch, for the head before it. Raises
    ``SequenceConflict`` for the first event that is not the next of its session,
    ``EventTooLargeError`` for one whose row would take more than `limit` bytes, and
    ``TypeError`` for a session that is not a str or an ``at`` that is no finite number
    (what the log would keep but never read back), as it does for a `seq` that is no int or
    an event that is no ``NewEvent``, and ``ValueError`` for a session named ''. An event
    that cannot be encoded raises ``TypeError`` (a field of a type msgpack has no form for,
    or no log event) or ``ValueError`` (an int beyond 64 bits), naming the event by session,
    seq and topic, with the encoder's error as its cause.
    """
    try:
        return _prepared(batch, head_of, encode, limit)
    except (AttributeError, struct.error) as error:
        refusal = _refusal(batch)
        if refusal is None:
            raise
        raise refusal from error


def _prepared(
    batch: Sequence[NewEvent],
    head_of: Callable[[str], Head | None],
    encode: Callable[[Event], tuple[str, int, bytes]],
    limit: int,
) -> tuple[list[StoredEvent], dict[str, SummaryDelta]]:
    """`prepare_batch`, trusting its events to be ``NewEvent``s. This is most of what an
    append costs in Python, so it keeps to tuples and locals, and checks a type only where
    a wrong one would pass otherwise: an event that is no ``NewEvent``, or a float seq past
    a session's first, fails further on, and `_refusal` then finds it."""
    tips: dict[str, tuple[int, bytes]] = {}
    prefixed: dict[str, bytes] = {}
    deltas: dict[str, SummaryDelta] = {}
    stored: list[StoredEvent] = []
    for new in batch:
        session = new.session
        at = new.at
        if (type(at) is not float and type(at) is not int) or not isfinite(at):
            # SQLite would keep it, and every read of the session would then fail.
            raise TypeError(f"at: expected a finite time in seconds (time.time()), got {at!r:.80}")
        seq = new.seq
        tip = tips.get(session)
        if tip is None:
            if type(seq) is not int:  # (True is 1: only a session's first event may be it)
                raise _not_an_int(seq)
            check_session(session)
            if not session:  # tables would show it as no session
                raise ValueError("session: expected a session name, got ''")
            head = head_of(session)
            tip = (0, GENESIS) if head is None else (head.seq, head.chain)
            deltas[session] = SummaryDelta(session, new.at, new.at)
            prefixed[session] = length_prefixed(session)
        if seq != tip[0] + 1:
            if type(seq) is not int:
                raise _not_an_int(seq)
            raise SequenceConflict(session, seq, tip[0] + 1)
        try:
            topic, version, body = encode(new.event)
        except (TypeError, ValueError, OverflowError) as error:
            raise _unencodable(session, seq, new.event, error) from error
        topic_field = _TOPIC_FIELDS.get(topic)
        if topic_field is None:
            topic_field = _TOPIC_FIELDS[topic] = length_prefixed(topic)
        size = len(body) + len(prefixed[session]) + len(topic_field) + _ROW_OVERHEAD
        if size > limit:
            raise EventTooLargeError(session, seq, topic, size, limit)
        chain = chain_step_prefixed(tip[1], prefixed[session], seq, topic_field, version, body)
        stored.append(stored_event((session, seq, topic, version, new.at, body, chain)))
        tips[session] = (seq, chain)
        deltas[session].add(new.event, new.at)
    return stored, deltas


def check_batch(events: object) -> None:
    """Raise ``TypeError`` unless `events` can be a batch to append: SQLite took None for
    an empty one, a memory log raised "not iterable"."""
    if type(events) is list or type(events) is tuple:
        return
    if isinstance(events, str | bytes) or not isinstance(events, Iterable):
        raise TypeError(
            "events: expected a sequence of NewEvents,"
            f" got {type(events).__name__} {events!r:.80}"
        )


def _unencodable(session: str, seq: int, event: object, error: Exception) -> Exception:
    """The error of an event the codec could not encode, naming which event it is: msgpack
    names neither the event nor the field ("can not serialize 'set' object")."""
    said = (  # (a topic is its class's name)
        f"session {session!r}, event {seq} ({type(event).__name__}) cannot be encoded for the log:"
        f" {type(error).__name__}: {error}"
    )
    return TypeError(said) if isinstance(error, TypeError) else ValueError(said)


def _not_an_int(seq: object) -> TypeError:
    return TypeError(f"seq: expected an int, got {type(seq).__name__} {seq!r:.80}")


def _refusal(batch: Iterable[object]) -> TypeError | None:
    """What a batch that failed to prepare holds that is not an event to append, if it
    holds one: looked for once it failed, so that a good batch pays nothing for it."""
    for new in batch:
        if not isinstance(new, NewEvent):
            return TypeError(f"events: expected NewEvents, got {type(new).__name__} {new!r:.80}")
        if type(new.seq) is not int:
            return _not_an_int(new.seq)
    return None


_CRASHED = TOPICS[SessionCrashed]
_ENDINGS = frozenset({TOPICS[SessionEnded], _CRASHED})


@attrs.define
class _Ends:
    """What a verification read of a session's records saw of its start and its end."""

    first: StoredEvent | None = None
    last: StoredEvent | None = None
    crashed: bool = False
    times: TimeProblem | None = None

    def watch(self, records: Iterable[StoredEvent]) -> Iterator[StoredEvent]:
        for record in records:
            if self.first is None:
                self.first = record
            if self.times is None:
                self.times = _out_of_time(self.last, record)
            self.last = record
            if record.topic == _CRASHED:
                self.crashed = True
            yield record


def _out_of_time(before: StoredEvent | None, record: StoredEvent) -> TimeProblem | None:
    """What is wrong with the time of `record`, read after `before`: no finite number (a
    time that is no number is read as NaN), or earlier than the one before it."""
    if not isfinite(record.at):
        return TimeProblem(record.seq, "has no finite time")
    if before is not None and record.at < before.at:
        return TimeProblem(record.seq, f"is timed before event {before.seq}")
    return None


def _against_summary(
    summary: SessionSummary | None, verified: int, ends: _Ends
) -> ChainProblem | None:
    """What the summary of a session whose `verified` events all verify (`ends`, read in
    order) says otherwise."""
    if summary is None:
        if verified == 0:
            return None  # no such session
        return ChainProblem(1, Problem.NOT_SUMMARISED, "the log's summary has no row for it")
    if verified < summary.events:
        detail = f"the log's summary counts {summary.events} events"
        return ChainProblem(verified + 1, Problem.MISSING, detail)
    if verified > summary.events:
        detail = f"the log's summary counts {summary.events} events, {verified} verify"
        return ChainProblem(summary.events + 1, Problem.NOT_SUMMARISED, detail)
    assert ends.first is not None
    assert ends.last is not None
    started = CONVERTER.decode(ends.first.topic, ends.first.version, ends.first.body)
    if isinstance(started, SessionStarted) and (started.app, started.surface) != (
        summary.app,
        summary.surface,
    ):
        detail = (
            f"the log's summary says {summary.app!r} on {summary.surface!r}, the session's"
            f" start {started.app!r} on {started.surface!r}"
        )
        return ChainProblem(1, Problem.NOT_SUMMARISED, detail)
    last = ends.last
    reason = None
    if last.topic in _ENDINGS:
        ending = CONVERTER.decode(last.topic, last.version, last.body)
        assert isinstance(ending, (SessionEnded, SessionCrashed))
        reason = end_reason(ending)
    said = (summary.ended, summary.crashed, summary.end_reason if summary.ended else None)
    found = (reason is not None, ends.crashed, reason)
    if said != found:
        detail = f"the log's summary says {_ending(*said)}, its events {_ending(*found)}"
        return ChainProblem(last.seq, Problem.NOT_SUMMARISED, detail)
    return None


def _ending(ended: bool, crashed: bool, reason: str | None) -> str:
    state = f"ended ({reason})" if ended else "open"
    return f"{state}, {'having crashed' if crashed else 'never crashed'}"


@attrs.frozen
class SessionProblem:
    """How the log's summary disagrees with a session's events, as `checked_sessions`
    finds it; as text, ``session 'NAME': WHAT``."""

    session: str
    what: str

    def __str__(self) -> str:
        return f"session {self.session!r}: {self.what}"


def checked_sessions(recorder: Recorder) -> tuple[list[SessionSummary], list[SessionProblem]]:
    """Every session, as its events say, and each way the log's summary disagrees with
    them, naming the session: what `semledger sessions` shows. A session whose events
    cannot say what it is (it has none, or its head, first or last row is malformed) is
    listed as far as the summary says it, and its problem says why.

    The summary is not chained and may have been edited: each row is checked against its
    session's events, cheaply, with indexed lookups of its head (the count), its first
    event (the app and surface) and its last (whether and why it ended), plus one lookup a
    session for sessions that have events and no row; no scan of the events. ``crashed``
    (whether any event crashed it) would need one, so it is the row's, unchecked. The
    summaries and the events are read at one moment (``Recorder.pinned``).
    """
    with recorder.pinned():
        logged = set(recorder.session_names())
        found: list[SessionSummary] = []
        problems: list[SessionProblem] = []
        malformed: set[str] = set()
        rows = _summary_rows(recorder, logged, problems, malformed)
        for name in sorted(logged | set(rows) | malformed):
            row = rows.get(name)
            if name not in logged:
                if row is None:  # its row is malformed, its problem noted
                    found.append(_unchecked(recorder, name, None))
                    continue
                problems.append(
                    SessionProblem(name, "the log's summary lists it; it has no events")
                )
                found.append(attrs.evolve(row, events=0))
                continue
            try:
                logged_as = _as_logged(recorder, name, row)
            except MalformedRowError as error:  # its head, first or last row was edited
                problems.append(SessionProblem(name, error.what))
                found.append(_unchecked(recorder, name, row))
                continue
            if logged_as is None:
                problems.append(
                    SessionProblem(
                        name,
                        "the log's index lists events of it that it cannot find by their seq"
                        " (SQLite's `PRAGMA integrity_check` names the damage)",
                    )
                )
                found.append(_unchecked(recorder, name, row))
                continue
            summary, differences = logged_as
            if row is None and name not in malformed:
                missing = f"it has {summary.events} events and no row in the log's summary"
                differences.insert(0, missing)
            if differences:
                problems.append(SessionProblem(name, "; ".join(differences)))
            found.append(summary)
    return found, problems


def _unchecked(recorder: Recorder, name: str, row: SessionSummary | None) -> SessionSummary:
    """What is listed of a session whose events cannot say what it is (its problem says
    why): its summary row, unchecked; without one, its name and its count if its head can
    be read, its times NaN (unknown)."""
    if row is not None:
        return row
    try:
        head = recorder.head(name)
    except MalformedRowError:
        head = None
    events = 0 if head is None else head.seq
    return SessionSummary(name, None, None, nan, nan, events, False, False)


def _summary_rows(
    recorder: Recorder, logged: set[str], problems: list[SessionProblem], malformed: set[str]
) -> dict[str, SessionSummary]:
    """The summary's rows by name. If one is malformed, the rows of the sessions that have
    events, one by one, the malformed ones noted in `problems` and `malformed`: one bad row
    must not hide the others. (Rows of sessions without events are then not found, but for
    the first malformed one, whose events were deleted too: it is noted as such.)"""
    try:
        return {row.name: row for row in recorder.sessions()}
    except CorruptSummaryError as error:
        if error.session not in logged:
            problems.append(
                SessionProblem(
                    error.session,
                    f"its row in the log's summary is malformed: {error.reason}; it has no events",
                )
            )
            malformed.add(error.session)
    rows: dict[str, SessionSummary] = {}
    for name in logged:
        try:
            row = recorder.summary(name)
        except CorruptSummaryError as error:
            problems.append(
                SessionProblem(name, f"its row in the log's summary is malformed: {error.reason}")
            )
            malformed.add(name)
            continue
        if row is not None:
            rows[name] = row
    return rows


def _as_logged(
    recorder: Recorder, name: str, row: SessionSummary | None
) -> tuple[SessionSummary, list[str]] | None:
    """The session's summary as its head, first and last events say (what they cannot say
    taken from `row`), and where `row` says otherwise; None if it has no head, though it
    was found to have events (a damaged index)."""
    head = recorder.head(name)
    if head is None:
        return None
    differences: list[str] = []
    first = next(iter(recorder.read(name, start=1, stop=2)), None)
    last, *copies = recorder.read(name, start=head.seq)  # (no stop: one past 2**63-1 is none)
    if copies:  # a table whose primary key was dropped, then the row copied
        differences.append(f"its last event, {head.seq}, appears {len(copies) + 1} times")
    if row is not None and row.events != head.seq:
        differences.append(_miscounted(recorder, name, row.events, head.seq))
    app, surface = (None, None) if row is None else (row.app, row.surface)
    started = _decoded(first, "first", differences)
    if started is not None and not isinstance(started, SessionStarted):
        assert first is not None
        differences.append(f"its first event is {not_a_start(first.topic)}")
    if isinstance(started, SessionStarted):
        if row is not None and (app, surface) != (started.app, started.surface):
            differences.append(
                f"its summary says {app!r} on {surface!r}, its start {started.app!r}"
                f" on {started.surface!r}"
            )
        app, surface = started.app, started.surface
    ended, reason = False, None
    if row is not None:
        ended, reason = row.ended, row.end_reason if row.ended else None
    if last.topic in _ENDINGS:
        ending = _decoded(last, "last", differences)
        found = end_reason(ending) if isinstance(ending, SessionEnded | SessionCrashed) else reason
    else:
        found = None
    if row is not None and (ended, reason) != (found is not None, found):
        differences.append(
            f"its summary says {_state(ended, reason)}, its last event"
            f" {_state(found is not None, found)}"
        )
    ended, reason = found is not None, found
    crashed = last.topic == _CRASHED or (row is not None and row.crashed)
    first_at = last.at if first is None else first.at
    return (
        SessionSummary(name, app, surface, first_at, last.at, head.seq, ended, crashed, reason),
        differences,
    )


def _miscounted(recorder: Recorder, session: str, counted: int, held: int) -> str:
    """How a session's summary, counting `counted` events, and its head, labelled `held`,
    disagree: the counted event missing if there is one (`uncounted_gap`)."""
    if (skipped := _relabelled(recorder, session, counted, held)) is not None:
        return f"event {skipped[0]} is missing: {skipped[1]}"
    return f"its summary counts {counted} events, the log holds {held}"


def _relabelled(
    recorder: Recorder, session: str, counted: int, held: int
) -> tuple[int, str] | None:
    """Of a session whose summary counts `counted` events and whose head is labelled
    `held`: the counted event missing, and what is in its place (`uncounted_gap`)."""
    skipped = uncounted_gap(recorder, session, counted) if counted < held else None
    if skipped is None:
        return None
    return skipped[0], f"the next record is labelled seq {skipped[1]}"


def _decoded(record: StoredEvent | None, which: str, differences: list[str]) -> Event | None:
    """`record`'s event; None, noted in `differences`, if it is missing or does not decode."""
    if record is None:
        differences.append(f"its {which} event is missing")
        return None
    try:
        return CONVERTER.decode(record.topic, record.version, record.body)
    except EventLogError as error:
        differences.append(f"its {which} event cannot be read: {error}")
        return None


def _state(ended: bool, reason: str | None) -> str:
    return f"ended ({reason})" if ended else "open"


def check_counted(recorder: Recorder, session: str) -> None:
    """Raise ``CorruptSummaryError`` if the session's summary counts other events than its
    log holds: its tail was cut (or events were added by hand), and what is read of it
    would not be what its agent was shown. Two indexed lookups while the two agree. A
    session the summary lists and the log holds no event of has had them all deleted:
    damage too. Where an event the summary counts is missing (`uncounted_gap`: relabelled
    past the end), ``InconsistentLogError`` names it instead."""
    head = recorder.head(session)
    summary = recorder.summary(session)
    held = 0 if head is None else head.seq
    if summary is None or summary.events == held:
        return
    if (skipped := _relabelled(recorder, session, summary.events, held)) is not None:
        missing, instead = skipped  # the count is right, a label is not
        raise InconsistentLogError(
            session,
            missing,
            f"missing: {instead}; `semledger audit --verify` names the first damage",
        )
    why = "removed" if summary.events > held else "added"
    raise CorruptSummaryError(
        session,
        f"it counts {summary.events} events where the log holds {held or 'none'} (events"
        f" were {why}, or the row edited): `semledger audit --verify` names the damage",
    )


def uncounted_gap(recorder: Recorder, session: str, counted: int) -> tuple[int, int] | None:
    """Of a session whose last record is labelled past the `counted` events its summary
    counts: the first event missing among its records and the label of the record in its
    place, where that event is one the summary counts or the next (an event relabelled, say
    as seq 40: its label is no sign of events added); None where the records go on one by
    one past the count (events were added). Reads the session's records without decoding
    them: it is asked only of a log already found damaged."""
    expected = 1
    for record in recorder.read(session):
        if record.seq != expected:
            return (expected, record.seq) if expected <= counted + 1 else None
        expected += 1
    return None


def known_head(recorder: Recorder, session: str) -> Head:
    """The session's head. Raises ``UnknownSessionError`` if the log has no session of that
    name, and ``CorruptSummaryError`` if its summary lists one whose events are all gone:
    they were deleted, which is damage (exit 1), not a name mistyped (exit 2)."""
    head = recorder.head(session)
    if head is None:
        check_counted(recorder, session)
        raise UnknownSessionError(f"the log has no session {session!r}")
    return head


def session_start(recorder: Recorder, session: str) -> SessionStarted | None:
    """The session's first event if it is its start (None otherwise, or for no session).

    What the session was recorded with (its app, its surface), as the chain vouches for it:
    the summary row says the same, but nothing verifies that row.
    """
    first = next(iter(recorder.events(session, start=1, stop=2)), None)
    if first is None or not isinstance(first[1], SessionStarted):
        return None
    return first[1]


def not_a_start(topic: str) -> str:
    """What is wrong with a session's event 1 of `topic`."""
    return f"a {topic}, not the {TOPICS[SessionStarted]} a session begins with"


def unstarted(recorder: Recorder, session: str) -> InconsistentLogError:
    """The damage of a session that has events, and whose event 1 is missing or is not its
    start (``session_start`` is None): an edited log, not a session of another kind."""
    first = next(iter(recorder.read(session)), None)
    if first is not None and first.seq == 1:
        return InconsistentLogError(session, 1, f"it is {not_a_start(first.topic)}")
    where = "" if first is None else f": the session's events start at event {first.seq}"
    return InconsistentLogError(session, 1, f"missing{where}")


def session_end(recorder: Recorder, session: str) -> SessionEnded | None:
    """The session's last event if it is its end (None otherwise, or for no session)."""
    head = recorder.head(session)
    if head is None:
        return None
    last = next(iter(recorder.events(session, start=head.seq, stop=head.seq + 1)), None)
    return last[1] if last is not None and isinstance(last[1], SessionEnded) else None


def ended_for_good(recorder: Recorder, session: str) -> str | None:
    """Why `session` is not taken up again, if it was ended for good (``semledger end``, an
    HTTP ``DELETE``): the refusal every server gives, whatever it serves."""
    end = session_end(recorder, session)
    if end is None or not end.final:
        return None
    return (
        f"session {session!r} was ended for good ({end.reason}) and is not served"
        " again: serve a session of another name"
    )


def log_final_end(
    recorder: Recorder, session: str, reason: str, by: EndedBy, at: float
) -> StoredEvent:
    """End `session` for good in the log, as no server serves it now: ``semledger end``, or
    an HTTP ``DELETE`` of a session its server does not hold (parked, or left by a server
    that stopped). It is not resumed to be ended, so nothing it left unfinished (an effect)
    starts again. Claimed meanwhile: raises ``SessionClaimedError`` while a server serves
    it, ``UnknownSessionError`` if the log has no such session, ``SessionOverError`` if it
    was ended for good or crashed, and what reading it raises (``CorruptSummaryError``,
    ``CorruptEventError``, …) if its events cannot all be read, or `InconsistentLogError`
    if they are out of order (`LogOrder`), as resuming it would: damage is named, not
    ended after."""
    check_session(session)
    if by not in ("client", "operator"):
        raise ValueError("by: expected 'client' or 'operator', who end a session for good")
    SessionEnded(reason, by)  # checked before anything is done, as the log needs them
    with recorder.claim(session):
        head = known_head(recorder, session)
        check_counted(recorder, session)
        if session_start(recorder, session) is None:
            raise unstarted(recorder, session)
        order = LogOrder(session)
        last: Event | None = None
        for record, last in recorder.events(session):
            order.check(record, last)
        if isinstance(last, SessionEnded) and last.final:
            raise SessionOverError(session, f"it was ended for good ({last.reason})")
        if isinstance(last, SessionCrashed):
            raise SessionOverError(
                session,
                f"it crashed ({last.exception_type}); a crashed session is never resumed, so"
                " there is nothing to end (`semledger audit` shows why)",
            )
        (ended,) = recorder.append([NewEvent(session, head.seq + 1, SessionEnded(reason, by), at)])
    return ended


def password_policy_refusal(
    session: str, started: SessionStarted, redact_passwords: bool
) -> str | None:
    """Why `session`, begun with `started`, is not taken up again by a server that redacts
    typed passwords as `redact_passwords` says, if it is not: the policy its start records is
    the session's, and its audit says it; a resume under the other one would change what the
    log keeps with nothing to say so. The refusal every server gives, whatever it serves."""
    if started.redact_passwords == redact_passwords:
        return None
    if started.redact_passwords:
        return (
            f"session {session!r} was started redacting typed passwords in its log (its start"
            " records redact_passwords: true): it is not resumed with --log-passwords"
            " (redact_passwords=False), which would log them in clear from here on; resume it"
            " without --log-passwords (redact_passwords=True), or serve a session of another"
            " name"
        )
    return (
        f"session {session!r} was started logging typed passwords in clear (its start records"
        " redact_passwords: false): it is not resumed without --log-passwords"
        " (redact_passwords=True), which would mask typed passwords from here on while its log"
        " keeps the earlier ones in clear; resume it with --log-passwords"
        " (redact_passwords=False), or serve a session of another name"
    )


def redact_action(action: dict[str, Any], *, keep_length: bool = False) -> dict[str, Any]:
    """The wire action with a ``set_text`` value replaced by ``REDACTED``.

    For values typed into password fields (SPEC §4). With ``keep_length`` the value becomes
    one bullet per character instead: runtime sessions use it, because the committed
    semantics already show a password field as that many bullets, and replay then types a
    value of the same length, so the replayed snapshots still match. Any other action is
    returned as is; the input is never modified.
    """
    if action.get("kind") == "set_text" and isinstance(action.get("value"), str):
        value = "\u2022" * len(action["value"]) if keep_length else REDACTED
        return {**action, "value": value}
    return action


def refused_arguments(arguments: dict[str, Any], *, redact: bool) -> tuple[dict[str, Any], bool]:
    """The arguments of a refused ``perform_action`` as the log holds them, and whether
    anything was redacted.

    A refused call never resolved its target, so a typed value in it cannot be known not to
    be a password: with `redact`, every field of its action but the kind is replaced by
    ``REDACTED``, and so is any argument but ``target`` and ``precondition`` (a misspelt
    ``action`` key, say). Text the log cannot hold (a lone surrogate, which JSON can carry
    and UTF-8 cannot) is kept as its backslash escape.
    """
    if not redact:
        return loggable_json(arguments), False
    out: dict[str, Any] = {}
    redacted = False
    for key, value in arguments.items():
        if key in ("target", "precondition"):
            out[key] = value
        elif key == "action" and isinstance(value, dict):
            out[key] = {k: v if k == "kind" else REDACTED for k, v in value.items()}
            redacted = redacted or len(value) > ("kind" in value)
        else:
            out[key] = REDACTED
            redacted = True
    return loggable_json(out), redacted


LOGGED_DEPTH: Final = 64
"""How many levels of a client's own JSON are logged: JSON is read some 1000 levels deep,
msgpack writes at most 511, and one client nesting 600 made the session's log unwritable."""

NESTED_TOO_DEEP: Final = "[nested too deep]"


def loggable_text(text: str) -> str:
    """`text`, with each lone surrogate UTF-8 cannot encode replaced by its escape: an
    exception's message or traceback may quote a file name as ``os.listdir`` decodes it,
    and the event that logs it must not make the session's log unwritable."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode()
    return text


def loggable_json(value: Any, depth: int = LOGGED_DEPTH) -> Any:
    """`value` (decoded JSON) with each string UTF-8 cannot encode replaced by its escape,
    each integer msgpack cannot hold (JSON's have no bound) by its decimal text, and each
    object or array nested more than `depth` levels in by `NESTED_TOO_DEEP`: one call's
    argument must not make the session's log unwritable."""
    if isinstance(value, str):
        return loggable_text(value)
    if isinstance(value, int) and not isinstance(value, bool) and value not in LOGGABLE_INTS:
        return str(value)
    if isinstance(value, dict | list) and depth == 0:
        return NESTED_TOO_DEEP
    if isinstance(value, dict):
        return {loggable_json(k): loggable_json(v, depth - 1) for k, v in value.items()}
    if isinstance(value, list):
        return [loggable_json(v, depth - 1) for v in value]
    return value


def _past_malformed_times(recorder: Recorder, session: str) -> Iterator[StoredEvent]:
    """The session's records, one whose time alone is malformed read with its time unknown
    (`MalformedRowError.record`): the chain does not cover the time, so it verifies past it."""
    start = EVERY_SEQ
    while True:
        try:
            for record in recorder.read(session, start=start):
                start = record.seq + 1
                yield record
            return
        except MalformedRowError as error:
            if error.record is None:
                raise
            start = error.record.seq + 1
            yield error.record


def verify_log(
    recorder: Recorder,
    sessions: Sequence[str] | None = None,
    *,
    anchors: Mapping[str, Head] | None = None,
    on_progress: Callable[[int, int | None], None] | None = None,
) -> dict[str, ChainReport]:
    """Verify the chain of each session (default: all), reporting overall progress.

    The shape ``semledger audit --verify`` needs: one report per session, and
    ``on_progress(done, total)`` counted over all of them. A session whose chain verifies
    but has fewer events than its summary counts lost its tail: reported ``MISSING``.
    (The summary is not chained, so this only catches a careless truncation; a session's
    head recorded earlier and given in ``anchors`` catches any, and a rewrite that
    recomputed the chain.) One whose summary counts fewer events, names another app or
    surface than its chained start, or says otherwise whether and why it ended or crashed,
    has an edited summary: ``NOT_SUMMARISED``.

    The summaries and the events are read at one moment (``Recorder.pinned``): a session
    a server is still writing is not reported to disagree with its own summary.

    Raises ``TypeError`` for a str `sessions` (its letters are not names: give
    ``[name]``) or a name that is no str, an anchor that is no `Head` of an int and bytes
    (a head kept as text would be read as a log changed since), and
    `UnknownSessionError` for one of them the log has neither events nor a summary of,
    unless ``anchors`` holds a head of it (then its events are gone).
    """
    check_not_one_name(sessions)
    if sessions is not None:
        sessions = list(sessions)
        for name in sessions:
            if not isinstance(name, str):
                raise TypeError(
                    f"sessions: expected strs, got {type(name).__name__} {name!r:.80}"
                )
    if anchors is not None and not isinstance(anchors, Mapping):
        raise TypeError(
            f"anchors: expected a mapping of session names to heads, got {anchors!r:.80}"
        )
    for name, head in (anchors or {}).items():
        if not (
            isinstance(head, Head) and type(head.seq) is int and isinstance(head.chain, bytes)
        ):
            raise TypeError(
                f"anchors[{name!r:.80}]: expected a Head(seq: int, chain: bytes), as"
                f" recorder.head() returns it, got {head!r:.80}"
            )
    with recorder.pinned():
        return _verified(recorder, sessions, anchors, on_progress)


def _verified(
    recorder: Recorder,
    sessions: Sequence[str] | None,
    anchors: Mapping[str, Head] | None,
    on_progress: Callable[[int, int | None], None] | None,
) -> dict[str, ChainReport]:
    if sessions is None:
        summaries = {summary.name: summary for summary in recorder.sessions()}
        names = sorted(summaries)
    else:  # (looked up one by one: a log may hold many more sessions than these)
        names = list(sessions)
        summaries = {
            name: summary for name in names if (summary := recorder.summary(name)) is not None
        }
        for name in names:
            anchored = anchors is not None and name in anchors
            if name not in summaries and not anchored and recorder.head(name) is None:
                raise UnknownSessionError(f"the log has no session {name!r}")
    total = sum(summaries[name].events for name in names if name in summaries)
    reports: dict[str, ChainReport] = {}
    finished = 0
    for name in names:
        seen = [0]

        def relay(
            done: int, _total: int | None, _seen: list[int] = seen, _finished: int = finished
        ) -> None:
            _seen[0] = done
            if on_progress is not None:
                on_progress(_finished + done, total)

        anchor = None if anchors is None else anchors.get(name)
        ends = _Ends()
        read = _past_malformed_times(recorder, name)
        report = verify_chain(ends.watch(read), anchor=anchor, on_progress=relay)
        # (no events: verify_chain cannot name the session)
        report = attrs.evolve(report, session=name, times=ends.times)
        finished += seen[0]
        if report.problem is None:
            problem = _against_summary(summaries.get(name), report.verified, ends)
            report = attrs.evolve(report, problem=problem)
        reports[name] = report
    return reports
