"""The log writer: one actor that group-commits every session's appends.

Sessions hand it batches and wait; it takes every batch already waiting, writes them in one
transaction on a worker thread, and only then answers each. One fsync serves them all, so
durable throughput grows with the number of concurrent sessions.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import outcome
import trio

from semledger.eventlog import NewEvent, Recorder, SequenceConflict, StoredEvent

from ._actor import Actor, ActorClosedError, _Envelope


@attrs.define(eq=False)
class _Append:
    events: tuple[NewEvent, ...]
    done: trio.Event = attrs.Factory(trio.Event)
    result: outcome.Outcome[list[StoredEvent]] | None = None


class LogWriter(Actor[_Append]):
    """Owns the recorder's write side. `append` returns once the events are durable."""

    def __init__(self, recorder: Recorder, *, max_batch: int = 4096) -> None:
        super().__init__()
        self.recorder = recorder
        self.max_batch = max_batch
        self.transactions = 0
        self.appended = 0

    async def append(self, events: Sequence[NewEvent]) -> list[StoredEvent]:
        """Write `events` (one session's, in order); raises `SequenceConflict` if taken."""
        if not events:
            return []
        request = _Append(tuple(events))
        self.tell_nowait(request)
        await request.done.wait()
        if request.result is None:
            raise ActorClosedError("the log writer stopped before writing")
        return request.result.unwrap()

    async def run(
        self, *, task_status: trio.TaskStatus[LogWriter] = trio.TASK_STATUS_IGNORED
    ) -> None:
        try:
            task_status.started(self)
            while True:
                try:
                    first = await self._inbox.receive()
                except trio.EndOfChannel:
                    break
                batch = [first.message]
                while len(batch) < self.max_batch:
                    try:
                        batch.append(self._inbox.receive_nowait().message)
                    except (trio.WouldBlock, trio.EndOfChannel):
                        break
                await self._commit(batch)
        finally:
            self._refuse_waiting()

    async def _commit(self, batch: list[_Append]) -> None:
        events = [event for request in batch for event in request.events]
        try:
            stored = await trio.to_thread.run_sync(self.recorder.append, events)
        except SequenceConflict as conflict:
            # Someone else wrote one of these sessions: isolate the offender, keep the rest.
            if len(batch) > 1:
                for request in batch:
                    await self._commit([request])
            else:
                self._answer(batch[0], outcome.Error(conflict))
            return
        except BaseException as error:
            for request in batch:
                self._answer(request, outcome.Error(error))
            if not isinstance(error, Exception):
                raise
            return
        self.transactions += 1
        self.appended += len(stored)
        offset = 0
        for request in batch:
            count = len(request.events)
            self._answer(request, outcome.Value(stored[offset : offset + count]))
            offset += count

    def _refuse(self, envelope: _Envelope[_Append]) -> None:
        envelope.message.done.set()

    @staticmethod
    def _answer(request: _Append, result: outcome.Outcome[list[StoredEvent]]) -> None:
        request.result = result
        request.done.set()
