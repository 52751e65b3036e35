"""The journal a session's log holds: its committed deltas folded onto a read checkpoint.

Every commit is logged with its delta, so folding the deltas rebuilds each snapshot exactly,
and a journal rebuilt alongside answers ``since`` reads as the live runtime did. A session
logs its committed semantics now and then (``SemanticsTaken``), and the fold starts at the
latest of those that still lets it answer the read asked for.

Log-served reads (``semledger.replay``) are built on it, and so is recovery from a
checkpoint: the restored runtime holds only the generations since the checkpoint, the log
also those before it that a live journal would still hold.
"""

from __future__ import annotations

import contextlib

import attrs

from semledger.eventlog import (
    CONVERTER,
    GENESIS,
    Committed,
    CorruptEventError,
    Event,
    InconsistentLogError,
    Recorder,
    SemanticsTaken,
    SessionCrashed,
    SessionEnded,
    StoredEvent,
    UnknownTopicError,
    UnsupportedVersionError,
    chain_step,
    checked_end,
    gap,
    past_end,
    repeated,
    topic_of,
    twice,
)
from semledger.runtime import (
    JOURNAL_SIZE,
    Delta,
    Full,
    Journal,
    SemanticsSnapshot,
    Unchanged,
    apply_delta,
)
from semledger.runtime._wire import decode_read

__all__ = ["logged_event", "logged_journal", "logged_read"]

_COMMITTED = topic_of(Committed)
_CHECKPOINT = topic_of(SemanticsTaken)
_ENDS = frozenset({topic_of(SessionEnded), topic_of(SessionCrashed)})
_CHANGED = (
    "the log was changed (audit --verify names the first event changed, unless the chain was"
    " recomputed too, which only an audit --anchor taken earlier shows)"
)
"""Where to look for an edit that a fold catches: the chain, unless it was rewritten too."""


def logged_event(record: StoredEvent) -> Event:
    """`record`'s event. One that does not decode is damage named by its session and event
    (``InconsistentLogError``), as replay and audit name it: the codec's error names
    neither."""
    try:
        return CONVERTER.decode(record.topic, record.version, record.body)
    except (CorruptEventError, UnknownTopicError, UnsupportedVersionError) as error:
        raise InconsistentLogError(record.session, record.seq, str(error)) from error


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
    and the seq after it; else the empty snapshot, seq 1.

    Checkpoints are logged in generation order, so that one is found by bisecting their
    seqs (an index seek), reading only the generation of each checkpoint tried, not its
    tree: a read costs its tree and the fold after it, not the checkpoints after it. One
    whose tree does not serve (a damaged log) is passed over for the one before it; one
    that serves a tree its generation's commit does not name is damage.
    """
    checkpoints = recorder.seqs_of(session, _CHECKPOINT)
    low, high = 0, len(checkpoints)
    while low < high:
        middle = (low + high) // 2
        generation = _generation_at(recorder, session, checkpoints[middle])
        if generation is not None and generation <= bound:
            low = middle + 1
        else:
            high = middle
    for seq in reversed(checkpoints[:low]):
        record = _record_at(recorder, session, seq)
        if record is None:
            continue
        event = logged_event(record)
        assert isinstance(event, SemanticsTaken)
        snapshot = _rebuilt(event) if event.generation <= bound else None
        if snapshot is not None:
            _check_checkpoint(recorder, session, seq, snapshot)
            return snapshot, seq + 1
    return SemanticsSnapshot.empty(), 1


def _check_checkpoint(
    recorder: Recorder, session: str, seq: int, snapshot: SemanticsSnapshot
) -> None:
    """Raise ``InconsistentLogError`` naming the read checkpoint at `seq` unless its tree,
    `snapshot`, is the one the commit of its generation names by its hash.

    A fold checks each commit it applies against its hash, not the tree it starts from: a
    checkpoint edited so that it still decodes was served as it read. It is logged after the
    commit of its generation, with no commit between them: the last one before it.
    """
    why = _unlike_its_commit(recorder.last_of(session, _COMMITTED, before=seq), snapshot)
    if why is not None:
        reason = f"{why}: {_CHANGED}"
        raise InconsistentLogError(session, seq, reason)


def _unlike_its_commit(record: StoredEvent | None, snapshot: SemanticsSnapshot) -> str | None:
    """How a read checkpoint's tree, `snapshot`, differs from the last commit before it,
    `record`; None if it is the snapshot that commit made."""
    generation = snapshot.generation
    if record is None:
        return f"the read checkpoint holds generation {generation}, which no commit before it made"
    commit = logged_event(record)
    assert isinstance(commit, Committed)
    if commit.generation != generation:
        return (
            f"the read checkpoint holds generation {generation}, but the last commit before"
            f" it (event {record.seq}) made generation {commit.generation}"
        )
    if commit.snapshot_hash != snapshot.hash:
        return (
            "the read checkpoint's tree is not the snapshot the commit of generation"
            f" {generation} (event {record.seq}) names by its hash"
        )
    return None


def _record_at(recorder: Recorder, session: str, seq: int) -> StoredEvent | None:
    """The read checkpoint at `seq`, found as the last one below the next seq: an index
    seek (and not a read, which is what a fold makes)."""
    record = recorder.last_of(session, _CHECKPOINT, before=seq + 1)
    return record if record is not None and record.seq == seq else None


def _generation_at(recorder: Recorder, session: str, seq: int) -> int | None:
    """The generation of the read checkpoint at `seq`; None if it has no row."""
    record = _record_at(recorder, session, seq)
    return None if record is None else _generation_of(record)


def _generation_of(record: StoredEvent) -> int:
    """The generation a stored commit or read checkpoint names, its delta or tree left
    undecoded where its version allows (one of an older version is decoded); raises
    ``InconsistentLogError`` for a body that does not decode."""
    generation = CONVERTER.peek(record.topic, record.version, record.body, "generation")
    if type(generation) is int:
        return generation
    event = logged_event(record)
    assert isinstance(event, Committed | SemanticsTaken)
    return event.generation


def fold_commit(
    session: str, seq: int, snapshot: SemanticsSnapshot, commit: Committed, *, missing: str = ""
) -> tuple[SemanticsSnapshot, Delta]:
    """`snapshot` with the logged `commit` (event `seq`) applied, and its delta. A delta that
    does not apply, or makes another generation than the commit says or another snapshot
    than the hash logged with it names, is damage to the log (``InconsistentLogError``;
    `missing` adds why it may not apply: an event before it is gone)."""
    try:
        delta = decode_read(commit.delta)
        if not isinstance(delta, Delta):
            raise ValueError(f"its delta is a {type(delta).__name__} read")
        folded = apply_delta(snapshot, delta)
    except ValueError as error:
        reason = f"the commit does not apply: {error}{missing}"
        raise InconsistentLogError(session, seq, reason) from None
    if folded.generation != commit.generation:
        raise InconsistentLogError(
            session,
            seq,
            f"it says generation {commit.generation}, its delta makes {folded.generation}:"
            f" {_CHANGED}",
        )
    if folded.hash != commit.snapshot_hash:
        raise InconsistentLogError(
            session,
            seq,
            f"its delta does not make the snapshot its hash names: {_CHANGED}",
        )
    return folded, delta


def logged_journal(
    recorder: Recorder, session: str, *, until: int, since: int | None = None
) -> Journal:
    """The journal of `session` as of generation `until`, which answers
    ``read_semantics(since)`` as the live runtime did then.

    Raises ``InconsistentLogError`` where the log's commits do not follow each other (an
    event missing, a delta that does not apply, or one that makes another snapshot than the
    hash logged with it names) or do not reach `until`, and where an event it reads comes
    after the session's end where nothing logs one (`past_end`).
    """
    # A delta from `since` needs the journal to hold it; otherwise any start will do.
    bound = since if since is not None and until - JOURNAL_SIZE <= since < until else until
    snapshot, start = _start(recorder, session, bound)
    journal = Journal(snapshot)
    expected = max(start, 1)
    missing: tuple[int, str] | None = None
    closed: tuple[int, SessionEnded | SessionCrashed] | None = None  # the end just folded past
    # Generations follow each other: once `until` is folded, what comes after is not read.
    records = recorder.read(session, start=start) if snapshot.generation != until else ()
    for record in records:
        if record.seq != expected and missing is None:
            if repeated(record.seq, expected):
                raise InconsistentLogError(session, record.seq, f"it {twice(record.seq)}")
            missing = (expected, gap(expected - 1, record.seq))
        expected = record.seq + 1
        if closed is not None or record.topic in _ENDS:
            closed = None if missing is not None else _past_an_end(closed, record)
        if record.topic != _COMMITTED:
            continue  # (not decoded: a fold reads past inputs and checkpoints it never uses)
        try:
            event = logged_event(record)
        except InconsistentLogError:
            if missing is None:
                raise
            break  # the event missing before it is named, first
        assert isinstance(event, Committed)
        if event.generation > until:
            break
        why = "" if missing is None else f" (event {missing[0]} is missing: {missing[1]})"
        snapshot, delta = fold_commit(session, record.seq, snapshot, event, missing=why)
        journal.record(
            snapshot,
            touched=[*delta.removed, *(n.node_id for n in delta.upserted)],
            removed=delta.removed,
            announcements=delta.announcements,
        )
        if snapshot.generation == until:
            break
    if missing is not None:
        raise InconsistentLogError(session, missing[0], f"missing: {missing[1]}")
    if snapshot.generation != until:
        raise InconsistentLogError(
            session, expected, f"its commits reach generation {snapshot.generation}, not {until}"
        )
    return journal


def logged_read(
    recorder: Recorder, session: str, *, until: int, since: int
) -> Delta | Unchanged | None:
    """What ``read_semantics(since)`` answered at generation `until`, for `since` of `until`
    or the generation before it, from the commit of `until` alone: a read of a one-row
    change costs that row, not the tree a fold rebuilds. None where the log holds no commit
    of `until` with a delta from `since` (the fold then names the damage).

    The delta a commit logs is the live journal's delta from the generation before
    (`committed_since`), which is what the live runtime answered a read since then: its
    journal always holds the generation before the current one. A delta from further back
    is not composed from the logged ones: which nodes it upserts depends on what they were
    at `since` (one changed and changed back is left out) and their order on the whole tree.
    """
    found = _commit_of(recorder, session, until)
    if found is None:
        return None
    if since == until:
        return Unchanged(until)
    try:
        delta = decode_read(found.delta)
    except ValueError:
        return None
    if not isinstance(delta, Delta) or (delta.from_generation, delta.to_generation) != (
        since,
        until,
    ):
        return None
    return delta


def _commit_of(recorder: Recorder, session: str, generation: int) -> Committed | None:
    """The commit of `generation`, found by bisecting the session's seqs (commits are logged
    in generation order, one each): an index seek a step, reading the generation of the
    commit found, not its delta. None where the log holds no such commit, or one that a
    step reads does not decode, or one whose chain link does not verify. The last commit,
    the one most reads ask for, is taken as it is found."""
    last = recorder.last_of(session, _COMMITTED)
    low, high = 1, 0 if last is None else last.seq
    with contextlib.suppress(InconsistentLogError):
        if last is not None and _generation_of(last) == generation:
            low = high
    while low < high:
        middle = (low + high) // 2
        record = recorder.last_of(session, _COMMITTED, before=middle + 1)
        if record is None:
            low = middle + 1
            continue
        try:
            made = _generation_of(record)
        except InconsistentLogError:
            return None
        if made < generation:
            low = middle + 1
        else:
            high = record.seq
    record = last if last is not None and last.seq == high else None
    record = record or recorder.last_of(session, _COMMITTED, before=high + 1)
    if record is None or record.seq != high or not _linked(recorder, record):
        return None
    try:
        commit = logged_event(record)
    except InconsistentLogError:
        return None
    if not isinstance(commit, Committed) or commit.generation != generation:
        return None
    return commit


def _linked(recorder: Recorder, record: StoredEvent) -> bool:
    """Whether `record` is the event its chain value says, after the one before it: a read
    served from one commit, with no fold to check its delta against its hash, checks that
    no one edited it (and left the chain as it was)."""
    before = GENESIS
    if record.seq > 1:
        rows = recorder.read(record.session, start=record.seq - 1, stop=record.seq)
        previous = next(iter(rows), None)
        if previous is None or previous.seq != record.seq - 1:
            return False
        before = previous.chain
    made = chain_step(
        before, record.session, record.seq, record.topic, record.version, record.body
    )
    return made == record.chain


def _past_an_end(
    closed: tuple[int, SessionEnded | SessionCrashed] | None, record: StoredEvent
) -> tuple[int, SessionEnded | SessionCrashed] | None:
    """The end `record` is, if it is one (None otherwise); raises ``InconsistentLogError``
    if it comes right after the end `closed` where nothing logs it (`past_end`). Only an
    end and the event after it are decoded: one of those that does not decode is left to
    what reads it (a fold reads past what it never uses)."""
    try:
        event = logged_event(record)
    except InconsistentLogError:
        return None
    if closed is not None and (why := past_end(*closed, event)) is not None:
        raise InconsistentLogError(record.session, record.seq, f"it {why}")
    return checked_end(record.seq, record.version, event)
