"""The records a recorder stores and returns."""

from __future__ import annotations

import functools
from typing import NamedTuple

import attrs

from ._events import Event, SessionCrashed, SessionEnded, SessionStarted

__all__ = ["Head", "NewEvent", "SessionSummary", "StoredEvent", "stored_event"]


class StoredEvent(NamedTuple):
    """One row of the log. ``at`` is the wall time the appender gave (seconds).

    A NamedTuple rather than an attrs class because it is built once per row on the read
    path, straight from the SQLite row: a frozen attrs ``__init__`` costs about four
    times as much, which showed in decoding throughput.
    """

    session: str
    seq: int
    topic: str
    version: int
    at: float
    body: bytes
    chain: bytes



stored_event = functools.partial(tuple.__new__, StoredEvent)
"""A `StoredEvent` from a row in column order, skipping NamedTuple's per-field ``__new__``."""

@attrs.frozen
class NewEvent:
    """An event to append: ``seq`` must be the next one of ``session`` (1 for a new one)."""

    session: str
    seq: int
    event: Event
    at: float


@attrs.frozen
class Head:
    """The last event of a session: its seq and the chain value after it."""

    seq: int
    chain: bytes


@attrs.frozen
class SessionSummary:
    """What the log knows about a session without reading its events.

    ``app`` and ``surface`` come from its ``SessionStarted`` (None if it has none);
    ``ended`` is true while its last event is a ``SessionEnded`` or ``SessionCrashed`` (a
    session resumed after it ended is not ended again until it ends again), and
    ``end_reason`` says why: the ``SessionEnded`` reason, or ``crashed: <exception type>``.
    ``crashed`` stays true once the session crashed.
    """

    name: str
    app: str | None
    surface: str | None
    first_at: float
    last_at: float
    events: int
    ended: bool
    crashed: bool
    end_reason: str | None = None


def end_reason(event: SessionEnded | SessionCrashed) -> str:
    """What a session summary says of the event that ended the session."""
    if isinstance(event, SessionCrashed):
        return f"crashed: {event.exception_type}"
    return event.reason


@attrs.define
class SummaryDelta:
    """What one batch adds to a session's summary."""

    name: str
    first_at: float
    last_at: float
    events: int = 0
    app: str | None = None
    surface: str | None = None
    ended: bool = False
    crashed: bool = False
    end_reason: str | None = None

    def add(self, event: Event, at: float) -> None:
        self.events += 1
        self.last_at = at
        if isinstance(event, SessionStarted) and self.app is None:
            self.app, self.surface = event.app, event.surface
        if isinstance(event, SessionEnded | SessionCrashed):
            self.ended, self.end_reason = True, end_reason(event)
            self.crashed = self.crashed or isinstance(event, SessionCrashed)
        else:  # the session goes on (or was resumed after it ended)
            self.ended, self.end_reason = False, None

    def merged_into(self, old: SessionSummary | None) -> SessionSummary:
        if old is None:
            return SessionSummary(
                self.name,
                self.app,
                self.surface,
                self.first_at,
                self.last_at,
                self.events,
                self.ended,
                self.crashed,
                self.end_reason,
            )
        first_app = old.app is not None
        return SessionSummary(
            self.name,
            old.app if first_app else self.app,
            old.surface if first_app else self.surface,
            old.first_at,
            self.last_at,
            old.events + self.events,
            self.ended,
            old.crashed or self.crashed,
            self.end_reason,
        )
