"""A memory log whose disk fills up: for tests of what a session does when it cannot write."""

from __future__ import annotations

from collections.abc import Sequence

from semledger.eventlog import MemoryRecorder, NewEvent, StoredEvent


class FullRecorder(MemoryRecorder):
    """Refuses every append while `full` is set, as a full disk does."""

    full = False

    def append(self, events: Sequence[NewEvent]) -> list[StoredEvent]:
        if self.full:
            raise OSError(28, "No space left on device")
        return super().append(events)
