"""The log writer: one actor that group-commits every session's appends.

Sessions hand it batches; it takes every batch already waiting, writes them in one
transaction on a worker thread, and only then settles each. One fsync serves them all, so
durable throughput grows with the number of batches waiting: from many sessions, or from one
session that keeps working while its earlier batches are being written (`LogWriter.submit`).

A log another process holds locked (`LogBusyError`) is waited out: the same batch is written
again until the lock is released, and the operator is told (`logging`, as a warning) while
it lasts and when it is written.
"""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Sequence

import attrs
import outcome
import trio

from semledger.eventlog import (
    EventTooLargeError,
    LogBusyError,
    NewEvent,
    Recorder,
    SequenceConflict,
    StoredEvent,
)

from ._actor import Actor, ActorClosedError, _Envelope

_log = logging.getLogger("semledger.actors")


@attrs.define(eq=False)
class Pending:
    """A batch handed to the log writer. `durable` waits until it is committed.

    Batches are committed in the order they were submitted. A batch submitted ``after``
    another is written only if that one was: a session's batches form one chain, and a
    batch whose predecessor failed fails with the same error instead of leaving a gap.
    """

    events: tuple[NewEvent, ...]
    after: Pending | None = None
    _stored: list[StoredEvent] | None = attrs.field(default=None, init=False)
    _error: BaseException | None = attrs.field(default=None, init=False)
    _settled: bool = attrs.field(default=False, init=False)
    _wakeup: trio.Event | None = attrs.field(default=None, init=False)
    """Made only for a waiter that comes before the batch is settled: most come after."""

    @property
    def settled(self) -> bool:
        return self._settled

    @property
    def succeeded(self) -> bool:
        return self._stored is not None

    async def durable(self) -> list[StoredEvent]:
        """The stored records; raises what the write raised (`SequenceConflict`, an I/O
        error), or `ActorClosedError` if the writer stopped before writing (it was closed
        or cancelled while the log was locked by another process, among others). A lock
        is not an error: it waits until the lock is released."""
        if self._settled:
            await trio.lowlevel.checkpoint()
        else:
            await self.settled_now()
        if self._stored is not None:
            return self._stored
        assert self._error is not None
        raise self._error

    async def settled_now(self) -> None:
        """Wait until the batch is settled, however."""
        if not self._settled:
            if self._wakeup is None:
                self._wakeup = trio.Event()
            await self._wakeup.wait()

    def _succeed(self, stored: list[StoredEvent]) -> None:
        self._stored = stored
        self._settle()

    def _fail(self, error: BaseException) -> None:
        self._error = error
        self._settle()

    def _settle(self) -> None:
        self._settled = True
        self.after = None  # settled: later batches only ask this one, never further back
        if self._wakeup is not None:
            self._wakeup.set()


_RECORDER_METHODS = ("append", "read", "claim")


def check_recorder(recorder: object, argument: str = "recorder") -> None:
    """Raise ``TypeError`` unless `recorder` has a `Recorder`'s methods: a path or a
    `LogWriter` given instead failed only once a session started, inside its registry."""
    if not all(callable(getattr(recorder, method, None)) for method in _RECORDER_METHODS):
        raise TypeError(
            f"{argument}: expected a Recorder (SqliteRecorder(path) or MemoryRecorder()),"
            f" got {type(recorder).__name__} {recorder!r:.80}"
        )


def check_writer(writer: object) -> None:
    """Raise ``TypeError`` unless `writer` submits batches, as a `LogWriter` does (a
    stand-in that batches will do)."""
    if not callable(getattr(writer, "submit", None)):
        raise TypeError(
            "writer: expected a LogWriter (started: await nursery.start(LogWriter(recorder)"
            f".run)), got {type(writer).__name__} {writer!r:.80}"
        )


def check_same_log(writer: object, recorder: object) -> None:
    """Raise ``ValueError`` unless `recorder` is the one `writer` writes to (a stand-in
    writer that names none is taken at its word). Given another, a session took its claim
    and read its past in one log and wrote its events to the other: the next run started
    it afresh there and failed, blaming "another process"."""
    written = getattr(writer, "recorder", recorder)
    if written is not recorder:
        raise ValueError(
            f"recorder: expected the log writer's own (writer.recorder, {_named(written)}),"
            f" got {_named(recorder)}: a session's claim and resume reads would go to one"
            " log and its events to the other"
        )


def _named(recorder: object) -> str:
    path = getattr(recorder, "path", None)
    where = f"({str(path)!r})" if path is not None else f" at {id(recorder):#x}"
    return f"{type(recorder).__name__}{where}"


def _check_options(max_batch: object, warn_every: object) -> None:
    """Checked as the writer is made: found at the first batch, it failed inside its task."""
    if isinstance(max_batch, bool) or not isinstance(max_batch, int):
        kind = type(max_batch).__name__
        raise TypeError(f"max_batch: expected an int, got {kind} {max_batch!r:.80}")
    if max_batch < 1:
        raise ValueError(f"max_batch: expected at least 1, got {max_batch}")
    if isinstance(warn_every, bool) or not isinstance(warn_every, int | float):
        kind = type(warn_every).__name__
        raise TypeError(f"warn_every: expected a number of seconds, got {kind} {warn_every!r:.80}")
    if not (math.isfinite(warn_every) and warn_every > 0):
        raise ValueError(f"warn_every: expected a finite number above 0, got {warn_every}")


class LogWriter(Actor[Pending]):
    """Owns the recorder's write side.

    While the log is locked by another process it says so every `warn_every` seconds.
    Closed while it waits, it gives up: the batch it was writing and those queued after it
    fail with `ActorClosedError` (a lock may last longer than a server should take to stop).
    """

    busy_pause = 0.1
    """Seconds between attempts at a locked log; each attempt itself waits for the lock
    as long as the recorder's busy timeout."""

    def __init__(
        self, recorder: Recorder, *, max_batch: int = 4096, warn_every: float = 30.0
    ) -> None:
        super().__init__()
        check_recorder(recorder)
        _check_options(max_batch, warn_every)
        self.recorder = recorder
        self.max_batch = max_batch
        self.warn_every = warn_every
        self.transactions = 0
        self.appended = 0
        self._closing = trio.Event()
        self._started = False
        self.stalled = trio.Event()
        """Set while the writer waits out a lock another process holds on the log: a batch
        may then wait as long as the lock lasts."""

    def close(self) -> None:
        super().close()
        self._closing.set()

    def submit(self, events: Sequence[NewEvent], *, after: Pending | None = None) -> Pending:
        """Queue `events` (one session's, in order) without waiting for them.

        Raises `ActorClosedError` if the writer has stopped, `RuntimeError` if it was never
        started: the batch would wait for it, and its session with it, forever, and
        `TypeError` for an `after` that is no `Pending`, which the writer's task would
        otherwise trip on, failing every session's batches with it.
        """
        if after is not None and not isinstance(after, Pending):
            raise TypeError(
                "after: expected the Pending a previous submit returned, or None,"
                f" got {type(after).__name__} {after!r:.80}"
            )
        if not self._started:
            raise RuntimeError(
                "the log writer has not been started: start it with"
                " `writer = await nursery.start(LogWriter(recorder).run)`"
            )
        pending = Pending(tuple(events), after)
        if not pending.events:
            pending._succeed([])
            return pending
        self.tell_nowait(pending)
        return pending

    async def append(self, events: Sequence[NewEvent]) -> list[StoredEvent]:
        """Write `events` and return once they are durable; raises `SequenceConflict` if
        one of their sequence numbers is taken (nothing of them is written then)."""
        return await self.submit(events).durable()

    async def run(
        self, *, task_status: trio.TaskStatus[LogWriter] = trio.TASK_STATUS_IGNORED
    ) -> None:
        self._run_token = trio.lowlevel.current_trio_token()
        try:
            self._started = True
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
                try:
                    written = await self._write_out(batch)
                finally:
                    for pending in batch:
                        if not pending.settled:  # the commit raised, or the wait was ended
                            pending._fail(ActorClosedError("the log writer stopped writing"))
                if not written:
                    break
        finally:
            self._refuse_waiting()

    async def _write_out(self, batch: list[Pending]) -> bool:
        """Commit `batch`, waiting out a lock another process holds on the log; False if
        the writer was closed while it waited, with what is left of `batch` unsettled.

        Only the wait between attempts can be cancelled: an attempt is settled whatever
        happens to the writer.
        """
        with trio.CancelScope(shield=True):
            busy = await self._commit(batch)
        if busy is None:  # the log was not locked: nothing more to do, or to count
            return True
        self.stalled.set()
        try:
            return await self._wait_out_lock(batch, busy)
        finally:
            self.stalled = trio.Event()

    async def _wait_out_lock(self, batch: list[Pending], busy: LogBusyError | None) -> bool:
        assert busy is not None
        since = trio.current_time() - busy.timeout  # the attempt waited that long already
        warned = -math.inf
        while busy is not None:
            batch = [pending for pending in batch if not pending.settled]
            count = sum(len(pending.events) for pending in batch)
            now = trio.current_time()
            if now - warned >= self.warn_every:
                warned = now
                _log.warning(
                    "the log %s is locked by another process; waiting to write %d event(s)"
                    " (%.1f s so far)",
                    busy.path, count, now - since,
                )
            with trio.move_on_after(self.busy_pause):
                await self._closing.wait()
            if self._closing.is_set():
                _log.warning(
                    "the log %s is locked by another process; closed, the log writer gives up"
                    " writing %d event(s)",
                    busy.path, count,
                )
                return False
            path = busy.path
            with trio.CancelScope(shield=True):
                busy = await self._commit(batch)
        _log.warning(
            "the log %s is no longer locked: wrote %d event(s) after waiting %.1f s",
            path, count, trio.current_time() - since,
        )
        return True

    async def _commit(self, batch: list[Pending]) -> LogBusyError | None:
        """Write `batch`, settling each of its batches; if the log is locked by another
        process, the `LogBusyError`, with what it did not write left unsettled."""
        batch = [pending for pending in batch if self._predecessor_ok(pending)]
        if not batch:
            return None
        result = await self._write([event for pending in batch for event in pending.events])
        if isinstance(result, outcome.Error):
            error = result.error
            if isinstance(error, LogBusyError):
                return error  # nothing of it is written: it may be written again
            if isinstance(error, Exception) and len(batch) > 1:
                # One session's batch must not fail the others'. Someone else wrote that
                # session, or it sent an event too large for the log: refuse its batches,
                # write the rest together.
                if isinstance(error, SequenceConflict | EventTooLargeError):
                    refused = [p for p in batch if p.events[0].session == error.session]
                    for pending in refused:
                        pending._fail(error)
                    if refused:
                        return await self._commit([p for p in batch if not p.settled])
                # An event the log cannot encode, a recorder that names no session, a disk
                # that failed: isolate by trying each session's batches, then each batch.
                sessions: dict[str, list[Pending]] = {}
                for pending in batch:
                    sessions.setdefault(pending.events[0].session, []).append(pending)
                parts = list(sessions.values()) if len(sessions) > 1 else [[p] for p in batch]
                for part in parts:
                    busy = await self._commit(part)
                    if busy is not None:
                        return busy
                return None
            for pending in batch:
                pending._fail(error)
            if not isinstance(error, Exception):
                raise error
            return None
        stored = result.unwrap()
        self.transactions += 1
        self.appended += len(stored)
        offset = 0
        for pending in batch:
            count = len(pending.events)
            pending._succeed(stored[offset : offset + count])
            offset += count
        return None

    @staticmethod
    def _predecessor_ok(pending: Pending) -> bool:
        """False (and `pending` settled with its predecessor's failure) if that one failed.

        An unsettled predecessor is ahead in this very batch: batches are taken in order.
        """
        before = pending.after
        if before is None or not before._settled or before._stored is not None:
            return True
        assert before._error is not None
        pending._fail(before._error)
        return False

    async def _write(self, events: list[NewEvent]) -> outcome.Outcome[list[StoredEvent]]:
        """``recorder.append`` on a thread from Trio's thread cache.

        Not ``trio.to_thread.run_sync``: its capacity limiter and context copy double the
        hand-off cost, which is most of a small batch's cost on a fast disk.
        """
        token = trio.lowlevel.current_trio_token()
        done = trio.Event()
        box: list[outcome.Outcome[list[StoredEvent]]] = []

        def deliver(result: outcome.Outcome[list[StoredEvent]]) -> None:
            box.append(result)
            token.run_sync_soon(done.set)

        trio.lowlevel.start_thread_soon(functools.partial(self.recorder.append, events), deliver)
        await done.wait()
        return box[0]

    def _refuse(self, envelope: _Envelope[Pending]) -> None:
        envelope.message._fail(ActorClosedError("the log writer stopped before writing"))
