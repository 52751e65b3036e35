"""The order a session's records come in, which an edited log may break: each the next
seq, and after an end only what a server logs there."""

from __future__ import annotations

from ._errors import InconsistentLogError
from ._events import Event, SessionCrashed, SessionEnded, checked_end, past_end
from ._records import StoredEvent

__all__ = ["LogOrder", "gap", "repeated", "twice"]


class LogOrder:
    """The order a session's records, read by seq from `start`, must come in: each the next
    seq, and nothing right after an end that no server logs there (`past_end`). Where one
    does not, ``check`` raises ``InconsistentLogError`` naming the event, so that a reader
    (replay, recovery) names an edited log as such, not as the app's divergence."""

    def __init__(self, session: str, start: int = 1) -> None:
        self.session = session
        self.expected = max(start, 1)
        """The seq the next record must have."""
        self._closed: tuple[int, SessionEnded | SessionCrashed] | None = None

    def check_seq(self, seq: int) -> None:
        """Raise if a record labelled `seq` is not the next one."""
        if repeated(seq, self.expected):
            raise InconsistentLogError(self.session, seq, f"it {twice(seq)}")
        if seq < self.expected:  # (below seq 1: reads start there, to see such an edit)
            wrong = f"the record in its place is labelled seq {seq}"
            raise InconsistentLogError(self.session, self.expected, wrong)
        if seq != self.expected:
            missing = f"missing: {gap(self.expected - 1, seq)}"
            raise InconsistentLogError(self.session, self.expected, missing)

    def check(self, record: StoredEvent, event: Event) -> None:
        """Raise if `record` (holding `event`) is not the next one, or is past an end."""
        self.check_seq(record.seq)
        self.expected += 1
        if self._closed is not None and (why := past_end(*self._closed, event)) is not None:
            raise InconsistentLogError(self.session, record.seq, f"it {why}")
        self._closed = checked_end(record.seq, record.version, event)


def gap(before: int, after: int) -> str:
    """Where a session's events go from seq `before` straight to `after` (`before` 0: they
    start at `after`): events are missing, which a log never has unless it was edited."""
    if before == 0:
        return f"the session's events start at event {after}"
    return f"the session's events go from event {before} to event {after}"


def repeated(seq: int, expected: int) -> bool:
    """Whether a record labelled `seq`, read in seq order where event `expected` was next,
    is a second event `seq`: one of a table that lost its primary key. (A seq below 1 is
    not that: it comes before event 1.)"""
    return 0 < seq < expected


def twice(seq: int) -> str:
    """What is wrong with event `seq` where a second record labelled `seq` follows it."""
    return f"appears twice: a second record labelled seq {seq} follows it"
