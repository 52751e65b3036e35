"""Log-served reads: `read_semantics` for any session at any generation, without app code.

Every commit is logged with its delta, so folding the deltas rebuilds each snapshot exactly,
and a journal rebuilt alongside answers `since` reads as the live runtime did. A session
logs its committed semantics now and then (`SemanticsTaken`), and the fold starts at the
latest of those that serves the read.
"""

from __future__ import annotations

import attrs

from semledger.eventlog import (
    CONVERTER,
    Committed,
    InconsistentLogError,
    Recorder,
    SemanticsTaken,
    SessionStarted,
    topic_of,
)
from semledger.runtime import (
    JOURNAL_SIZE,
    Delta,
    Full,
    Journal,
    ReadResult,
    SemanticsSnapshot,
    apply_delta,
)
from semledger.runtime._wire import decode_read


class UnknownSessionError(LookupError):
    """Raised when the log has no session of that name."""


class UnknownGenerationError(LookupError):
    """Raised when a session never reached the generation asked for."""


class SurfaceSessionError(LookupError):
    """Raised when a read is asked of a session that drove a surface (a web page, a desktop
    application) through the Python API alone: its log holds the surface's calls, not
    generations to read. (One served over MCP logs the generations its agent was shown.)"""


def _last_generation(recorder: Recorder, session: str) -> int:
    """The session's last committed generation; raises unless it exists and commits
    generations."""
    record = recorder.last_of(session, topic_of(Committed))
    if record is None:
        opening = list(recorder.events(session, start=1, stop=2))
        if not opening:
            raise UnknownSessionError(f"the log has no session {session!r}")
        first = opening[0][1]
        if isinstance(first, SessionStarted) and first.drives_a_surface:
            raise SurfaceSessionError(
                f"session {session!r} drove a surface and was not served over MCP: its log"
                " holds the surface's calls, not generations to read"
            )
        return 0
    last = CONVERTER.decode(record.topic, record.version, record.body)
    assert isinstance(last, Committed)
    return last.generation


def _rebuilt(checkpoint: SemanticsTaken) -> SemanticsSnapshot | None:
    """The snapshot a read checkpoint holds, or None if it is not a Full read of its
    generation (a damaged log: the fold then starts further back)."""
    try:
        full = decode_read(checkpoint.semantics)
    except ValueError:
        return None
    if not isinstance(full, Full) or full.generation != checkpoint.generation:
        return None
    whole = SemanticsSnapshot.empty().derive(
        upserted=full.nodes, removed=(), root=full.root, focused=full.focused, issues=full.issues
    )
    return attrs.evolve(whole, generation=full.generation)


def _start(recorder: Recorder, session: str, bound: int) -> tuple[SemanticsSnapshot, int]:
    """Where folding starts: the latest read checkpoint at or before generation `bound`
    and the seq after it, walking back from the last one; else the empty snapshot, seq 1."""
    topic = topic_of(SemanticsTaken)
    record = recorder.last_of(session, topic)
    while record is not None:
        event = CONVERTER.decode(record.topic, record.version, record.body)
        assert isinstance(event, SemanticsTaken)
        if event.generation <= bound:
            snapshot = _rebuilt(event)
            if snapshot is not None:
                return snapshot, record.seq + 1
        record = recorder.last_of(session, topic, before=record.seq)
    return SemanticsSnapshot.empty(), 1


def fold(
    recorder: Recorder, session: str, *, until: int | None = None, since: int | None = None
) -> Journal:
    """The journal as of generation `until` (default: the last), which answers
    `read_semantics(since)` as the live runtime did then.

    Folding starts at the latest read checkpoint that still lets the journal answer
    `since` as the live one did (at or before `since`, when a delta from it was possible)
    and applies the logged deltas after it: a read costs the commits since that
    checkpoint, not the whole session. The log is read at one moment (``Recorder.pinned``).
    """
    with recorder.pinned():
        return _fold(recorder, session, until, since)


def _fold(recorder: Recorder, session: str, until: int | None, since: int | None) -> Journal:
    last = _last_generation(recorder, session)
    if until is None:
        until = last
    elif until > last:
        raise UnknownGenerationError(f"session {session!r} reached generation {last}, not {until}")
    # A delta from `since` needs the journal to hold it; otherwise any start will do.
    bound = since if since is not None and until - JOURNAL_SIZE <= since < until else until
    snapshot, start = _start(recorder, session, bound)
    journal = Journal(snapshot)
    expected = max(start, 1)
    missing: tuple[int, str] | None = None
    for record, event in recorder.events(session, start=start):
        if record.seq != expected and missing is None:
            missing = (expected, gap(expected - 1, record.seq))
        expected = record.seq + 1
        if not isinstance(event, Committed):
            continue
        if event.generation > until:
            break
        try:
            delta = decode_read(event.delta)
            if not isinstance(delta, Delta):
                raise ValueError(f"its delta is a {type(delta).__name__} read")
            snapshot = apply_delta(snapshot, delta)
        except ValueError as error:
            reason = f"the commit does not apply: {error}"
            if missing is not None:
                reason += f" (event {missing[0]} is missing: {missing[1]})"
            raise InconsistentLogError(session, record.seq, reason) from None
        journal.record(
            snapshot,
            touched=[*delta.removed, *(n.node_id for n in delta.upserted)],
            removed=delta.removed,
            announcements=delta.announcements,
        )
    if missing is not None:
        raise InconsistentLogError(session, missing[0], f"missing: {missing[1]}")
    if snapshot.generation != until:
        raise UnknownGenerationError(
            f"session {session!r} reached generation {snapshot.generation}, not {until}"
        )
    return journal


def gap(before: int, after: int) -> str:
    """Where a session's events go from seq `before` straight to `after` (`before` 0: they
    start at `after`): events are missing, which a log never has unless it was edited."""
    if before == 0:
        return f"the session's events start at event {after}"
    return f"the session's events go from event {before} to event {after}"


def read_at(
    recorder: Recorder, session: str, *, generation: int | None = None, since: int | None = None
) -> ReadResult:
    """What `read_semantics(since)` answered when the session was at `generation` (or last)."""
    return fold(recorder, session, until=generation, since=since).read(since)


def full_at(recorder: Recorder, session: str, generation: int | None = None) -> Full:
    result = read_at(recorder, session, generation=generation)
    assert isinstance(result, Full)
    return result
