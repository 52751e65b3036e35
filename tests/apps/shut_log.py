"""A memory log that can be shut: its appends wait, on the log writer's worker thread, as
they would on a disk that stopped answering."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import trio

from semledger.eventlog import MemoryRecorder, NewEvent, StoredEvent


class ShutLog(MemoryRecorder):
    """A log whose appends wait (on the log writer's worker thread) until `open` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.open = threading.Event()
        self.open.set()

    def append(self, events: Sequence[NewEvent]) -> list[StoredEvent]:
        self.open.wait()
        return super().append(events)

    def shut_for_a_while(self, nursery: trio.Nursery, seconds: float) -> None:
        """Shut the log now; open it again after `seconds` of the run's clock."""
        self.open.clear()

        async def open_later() -> None:
            await trio.sleep(seconds)
            self.open.set()

        nursery.start_soon(open_later)
