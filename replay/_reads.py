"""Log-served reads: `read_semantics` for any session at any generation, without app code.

Every commit is logged with its delta, so folding the deltas rebuilds each snapshot exactly,
and a journal rebuilt alongside answers `since` reads as the live runtime did.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import attrs

from semledger.eventlog import Committed, Recorder, SessionStarted
from semledger.runtime import (
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
    application): its log holds the surface's calls, not generations to read."""


@attrs.frozen
class Generations:
    """A session's snapshots folded from its log, and the journal as of the last one."""

    journal: Journal
    hashes: dict[int, str]


def _commits(recorder: Recorder, session: str) -> Iterator[Committed]:
    events = recorder.replay(session)
    first = next(events, None)
    if isinstance(first, SessionStarted) and first.drives_a_surface:
        raise SurfaceSessionError(
            f"session {session!r} drove a surface: its log holds the surface's calls,"
            " not generations to read"
        )
    for event in itertools.chain([first], events):
        if isinstance(event, Committed):
            yield event


def fold(recorder: Recorder, session: str, *, until: int | None = None) -> Generations:
    """Apply the session's logged deltas in order, up to generation `until` (default: all)."""
    if recorder.head(session) is None:
        raise UnknownSessionError(f"the log has no session {session!r}")
    snapshot = SemanticsSnapshot.empty()
    journal = Journal(snapshot)
    hashes: dict[int, str] = {}
    for commit in _commits(recorder, session):
        if until is not None and commit.generation > until:
            break
        delta = decode_read(commit.delta)
        assert isinstance(delta, Delta)
        snapshot = apply_delta(snapshot, delta)
        journal.record(
            snapshot,
            touched=[*delta.removed, *(n.node_id for n in delta.upserted)],
            removed=delta.removed,
            announcements=delta.announcements,
        )
        hashes[commit.generation] = commit.snapshot_hash
    if until is not None and snapshot.generation != until:
        raise UnknownGenerationError(
            f"session {session!r} reached generation {snapshot.generation}, not {until}"
        )
    return Generations(journal, hashes)


def read_at(
    recorder: Recorder, session: str, *, generation: int | None = None, since: int | None = None
) -> ReadResult:
    """What `read_semantics(since)` answered when the session was at `generation` (or last)."""
    return fold(recorder, session, until=generation).journal.read(since)


def full_at(recorder: Recorder, session: str, generation: int | None = None) -> Full:
    result = read_at(recorder, session, generation=generation)
    assert isinstance(result, Full)
    return result
