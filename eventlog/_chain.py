"""The integrity chain over each session's events, and its verification.

``chain_n = sha256(chain_{n-1} + canonical(session, seq, topic, version, body))`` with a
genesis of 32 zero bytes. The canonical bytes are length-prefixed big-endian fields, so no
two different tuples share an encoding::

    u32 len(session) | session (UTF-8) | u64 seq | u32 len(topic) | topic (UTF-8)
    | u32 version | u64 len(body) | body

``at`` (the appender's wall time) is not covered: the chain proves what happened and in
which order, not when.
"""

from __future__ import annotations

import enum
import hashlib
import struct
from collections.abc import Callable, Iterable, Iterator, Sized

import attrs

from ._records import Head, StoredEvent

__all__ = [
    "GENESIS",
    "ChainProblem",
    "ChainReport",
    "Problem",
    "TimeProblem",
    "canonical_bytes",
    "chain_step",
    "verify_chain",
]

GENESIS = bytes(32)

_U32 = struct.Struct(">I")
_U64 = struct.Struct(">Q")
_U32_U64 = struct.Struct(">IQ")
"""A u32 version and a u64 body length, which follow each other in the canonical bytes."""


def length_prefixed(text: str) -> bytes:
    """A text field of the canonical bytes: its UTF-8 length as a u32, then the UTF-8."""
    data = text.encode("utf-8")
    return _U32.pack(len(data)) + data


def canonical_bytes(session: str, seq: int, topic: str, version: int, body: bytes) -> bytes:
    """The bytes of one event that the chain hashes (see the module docstring)."""
    return b"".join(
        (
            length_prefixed(session),
            _U64.pack(seq),
            length_prefixed(topic),
            _U32_U64.pack(version, len(body)),
            body,
        )
    )


def chain_step(
    previous: bytes, session: str, seq: int, topic: str, version: int, body: bytes
) -> bytes:
    """The chain value after an event, given the value before it."""
    return chain_step_prefixed(
        previous, length_prefixed(session), seq, length_prefixed(topic), version, body
    )


def chain_step_prefixed(
    previous: bytes, session: bytes, seq: int, topic: bytes, version: int, body: bytes
) -> bytes:
    """`chain_step` with `session` and `topic` already `length_prefixed`: appending a batch
    prefixes each session and topic once, not once per event."""
    fields = (previous, session, _U64.pack(seq), topic, _U32_U64.pack(version, len(body)), body)
    return hashlib.sha256(b"".join(fields)).digest()


class Problem(enum.Enum):
    CHANGED = "changed"
    """The event at ``seq`` is not what was chained there (its content or chain altered)."""
    MISSING = "missing"
    """No event at ``seq`` verifies there, and none later does either: it was removed."""
    OUT_OF_ORDER = "out of order"
    """The genuine event ``seq`` is present, but not where it belongs."""
    REPEATED = "appears twice"
    """Event ``seq`` verifies, and the record after it is labelled ``seq`` too (a copy of
    it, or another record: the table lost its primary key)."""
    NOT_SUMMARISED = "not as the summary says"
    """The events verify, but the log's summary row disagrees with them from ``seq`` on (it
    counts fewer events, or names another app or surface): the row was edited."""
    NOT_ANCHORED = "not as the anchor says"
    """The events verify, but the chain at ``seq`` is not the anchor's: an event up to it
    was rewritten and the chain recomputed, or the anchor is not this session's."""


@attrs.frozen
class ChainProblem:
    seq: int
    problem: Problem
    detail: str

    def __str__(self) -> str:
        return f"event {self.seq} {self.problem.value}: {self.detail}"


@attrs.frozen
class TimeProblem:
    """The first event whose time is no finite number, or is earlier than the time of the
    event before it. The chain does not cover times: not a verdict, since a clock set back
    does this too, but a time that may have been edited."""

    seq: int
    detail: str

    def __str__(self) -> str:
        return f"event {self.seq} {self.detail}"


@attrs.frozen
class ChainReport:
    """The outcome of ``verify_chain``: ``problem`` is the FIRST thing found wrong.

    ``verified`` counts the events verified before it (all of them when the chain verifies
    but does not lead to the anchor); ``head`` is the last verified event (None if none was).
    ``times`` is what ``verify_log`` saw of the session's times (``verify_chain`` leaves it
    None): they are not chained, so it is no part of the verdict.
    """

    session: str | None
    verified: int
    head: Head | None
    problem: ChainProblem | None
    times: TimeProblem | None = None

    @property
    def ok(self) -> bool:
        return self.problem is None

    def __str__(self) -> str:
        name = "(no events)" if self.session is None else f"session {self.session!r}"
        if self.problem is None:
            return f"{name}: ok, {self.verified} events"
        if self.problem.problem is Problem.NOT_ANCHORED:
            return f"{name}: {self.problem}"  # (it says how many events verify)
        return f"{name}: {self.problem} (after {self.verified} verified events)"


def _not_anchored(verified: int, seq: int) -> ChainProblem:
    """What is known when the chain verifies but its value at `seq` is not the anchor's: not
    which of the two it is, nor (for a rewrite) which event."""
    events = "1 event" if verified == 1 else f"{verified} events"
    return ChainProblem(
        seq,
        Problem.NOT_ANCHORED,
        f"the chain of its {events} verifies, but does not lead to the anchor's head at event"
        f" {seq}: either the log was changed after the anchor was taken (an event up to {seq}"
        " rewritten and the chain recomputed), or the anchor is not this session's (mistyped,"
        " or another session's or log's)",
    )


def _chain_of(previous: bytes, seq: int, record: StoredEvent) -> bytes:
    return chain_step(previous, record.session, seq, record.topic, record.version, record.body)


def _repeated(record: StoredEvent, last: StoredEvent) -> str:
    """How `record` follows the verified event `last`, whose seq it is labelled with."""
    if record == last:
        return "the record after it is a copy of it"
    return f"the record after it is labelled seq {last.seq} too"


def _found(later: StoredEvent, label: int, expected: int) -> str:
    """Where an event out of order was found (`later`), and, when the record in its place
    is labelled otherwise, that record's label."""
    found = f"it is further on, in the record labelled seq {later.seq}"
    if label == expected:
        return found
    return f"{found}; the record in its place is labelled seq {label}"


def verify_chain(
    records: Iterable[StoredEvent],
    *,
    anchor: Head | None = None,
    on_progress: Callable[[int, int | None], None] | None = None,
    total: int | None = None,
    progress_every: int = 1000,
) -> ChainReport:
    """Verify one session's records, in the order given (a recorder's ``read`` order).

    Streams: memory stays constant however long the session. At the first record that
    does not verify as event ``k`` (the next expected seq), the rest is scanned for a
    record that verifies as event ``k`` in its place: if one does, event ``k`` is
    ``OUT_OF_ORDER``; if not, it is ``MISSING`` when the record found there is labelled
    later than ``k`` and ``CHANGED`` otherwise. A record labelled with the seq of the event
    verified before it is that event ``REPEATED``.

    ``anchor``, a head recorded elsewhere (e.g. printed by an earlier audit), also catches
    a rewrite that recomputed the whole chain, and a truncated tail.

    ``on_progress(done, total)`` is called every ``progress_every`` records and at the
    end; ``total`` defaults to ``len(records)`` when it has one.
    """
    if total is None and isinstance(records, Sized):
        total = len(records)
    session: str | None = None
    previous = GENESIS
    expected = 1
    done = 0
    reported = -1
    problem: ChainProblem | None = None
    anchor_chain: bytes | None = None
    iterator: Iterator[StoredEvent] = iter(records)

    def counted(record: StoredEvent) -> StoredEvent:
        nonlocal done, reported, session
        if session is None:
            session = record.session
        elif record.session != session:
            raise ValueError(
                f"verify_chain checks one session: got {record.session!r} in {session!r}"
            )
        done += 1
        if on_progress is not None and done % progress_every == 0:
            on_progress(done, total)
            reported = done
        return record

    last: StoredEvent | None = None
    for record in map(counted, iterator):
        if record.seq == expected and _chain_of(previous, expected, record) == record.chain:
            previous = record.chain
            if anchor is not None and expected == anchor.seq:
                anchor_chain = previous
            expected += 1
            last = record
            continue
        label = record.seq
        if last is not None and label == last.seq:
            problem = ChainProblem(label, Problem.REPEATED, _repeated(record, last))
        else:
            for later in map(counted, iterator):
                if _chain_of(previous, expected, later) == later.chain:
                    found = _found(later, label, expected)
                    problem = ChainProblem(expected, Problem.OUT_OF_ORDER, found)
                    break
        if problem is None:
            if label > expected:
                problem = ChainProblem(
                    expected, Problem.MISSING, f"the next record is labelled seq {label}"
                )
            else:
                what = "its content or chain" if label == expected else f"labelled seq {label}"
                problem = ChainProblem(
                    expected, Problem.CHANGED, f"the record there ({what}) does not verify"
                )
        for _ in map(counted, iterator):
            pass
        break
    verified = expected - 1
    if problem is None and anchor is not None:
        if verified < anchor.seq:
            problem = ChainProblem(
                verified + 1, Problem.MISSING, f"the log ends before the anchor seq {anchor.seq}"
            )
        elif anchor_chain != anchor.chain:
            problem = _not_anchored(verified, anchor.seq)
    if on_progress is not None and reported != done:
        on_progress(done, total)
    head = Head(verified, previous) if verified else None
    return ChainReport(session, verified, head, problem)
