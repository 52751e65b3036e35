"""Pipelining: a session takes its next input while the log writes the last one, and answers
only once what it answers with is durable; a batch that cannot be written takes every later
batch of its session with it."""

from __future__ import annotations

import math
import threading
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
import trio.testing

from semledger.actors import (
    ActorClosedError,
    Close,
    LogWriter,
    SessionActor,
    SessionConflictError,
)
from semledger.eventlog import (
    ActionReceipt,
    ActionRequested,
    EffectCompleted,
    MemoryRecorder,
    NewEvent,
    SequenceConflict,
    SessionEnded,
    StoredEvent,
    verify_chain,
)
from semledger.examples import counter, todo
from semledger.hosts._session_host import RuntimeAgentHost
from semledger.runtime import (
    ActionKind,
    BySemanticId,
    ErrorCode,
    Full,
    Latest,
    Receipt,
    Rejection,
    SemanticId,
    SetText,
    SimpleAction,
)

COUNTER = "semledger.examples.counter:app"
INCREMENT = BySemanticId(SemanticId.new("counter.increment"))
ACTIVATE = SimpleAction(ActionKind.ACTIVATE)


class GatedRecorder(MemoryRecorder):
    """Appends wait while the gate is shut; each append is counted and its events kept."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.gate.set()
        self.batches: list[list[tuple[str, int]]] = []

    def append(self, events: Sequence[NewEvent]) -> list[StoredEvent]:
        self.gate.wait(timeout=30)
        stored = super().append(events)
        self.batches.append([(e.session, e.seq) for e in events])
        return stored


@asynccontextmanager
async def session(
    recorder: GatedRecorder, app: Any = counter.app, app_ref: str = COUNTER
) -> AsyncIterator[tuple[trio.Nursery, SessionActor]]:
    """A writer and session ``s`` on `recorder`; both closed, in order, at the end."""
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            writer: LogWriter = await nursery.start(LogWriter(recorder).run)
            actor = SessionActor("s", app, app_ref, writer, recorder)
            async with trio.open_nursery() as sessions:
                await sessions.start(actor.run)
                yield nursery, actor
                actor.close()
            writer.close()



async def action_then_read(
    nursery: trio.Nursery, target: SessionActor | RuntimeAgentHost, recorder: GatedRecorder
) -> list[Any]:
    """An action, then a read queued behind it, while the log holds the action's events;
    checks that neither is answered before the log lets go, and returns both answers."""
    got: list[Any] = []

    async def act() -> None:
        got.append(await target.perform_action(INCREMENT, ACTIVATE, Latest()))

    async def read() -> None:
        got.append(await target.read_semantics(None))

    recorder.gate.clear()
    nursery.start_soon(act)
    await trio.testing.wait_all_tasks_blocked()
    nursery.start_soon(read)
    await trio.testing.wait_all_tasks_blocked()
    assert got == []  # the read would show the action's generation, not durable yet
    recorder.gate.set()
    with trio.fail_after(10):
        while len(got) < 2:
            await trio.sleep(0.001)
    return got

async def test_requests_sent_without_waiting_share_transactions_answered_after_them() -> None:
    recorder = GatedRecorder()
    answers: list[int] = []
    async with session(recorder) as (_nursery, actor):
        started_batches = len(recorder.batches)
        first = actor.core.runtime.generation + 1
        recorder.gate.clear()

        async def agent() -> None:
            receipt = await actor.perform_action(INCREMENT, ACTIVATE, Latest())
            assert isinstance(receipt, Receipt)
            answers.append(receipt.after)

        async with trio.open_nursery() as agents:
            for _ in range(20):
                agents.start_soon(agent)
            await trio.testing.wait_all_tasks_blocked()
            # The actor handled every request and queued its events; nothing is answered
            # while the log has not written them.
            assert actor.queue_depth == 0
            assert answers == []
            recorder.gate.set()
    assert sorted(answers) == list(range(first, first + 20))
    batches = recorder.batches[started_batches:]
    # The first step's batch was alone in the writer; the other 19 waited behind it together.
    assert len(batches) < 20
    records = list(recorder.read("s"))
    assert verify_chain(records).ok
    receipts = [e for _r, e in recorder.events("s") if isinstance(e, ActionReceipt)]
    assert [r.after for r in receipts] == list(range(first, first + 20))


async def test_a_read_behind_a_pending_action_waits_for_that_action_to_be_durable() -> None:
    recorder = GatedRecorder()
    async with session(recorder) as (nursery, actor):
        got = await action_then_read(nursery, actor, recorder)
    receipt, full = sorted(got, key=lambda x: isinstance(x, Full))
    assert isinstance(receipt, Receipt)
    assert isinstance(full, Full)
    assert full.generation == receipt.after


async def test_an_effect_starts_only_once_the_step_that_started_it_is_durable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(todo, "SAVE_SECONDS", 0.0)
    recorder = GatedRecorder()
    async with session(recorder, todo.app, "semledger.examples.todo:app") as (nursery, actor):
        field = BySemanticId(SemanticId.new("todo.input"))
        await actor.perform_action(field, SetText("milk"), Latest())
        await actor.perform_action(field, SimpleAction(ActionKind.SUBMIT), Latest())
        recorder.gate.clear()
        save = BySemanticId(SemanticId.new("todo.save"))
        nursery.start_soon(actor.perform_action, save, ACTIVATE, Latest())
        await trio.testing.wait_all_tasks_blocked()
        await trio.sleep(0.05)
        await trio.testing.wait_all_tasks_blocked()
        # The save takes no time, yet it has not run: its step is not in the log.
        assert actor.core.runtime.pending_effects
        recorder.gate.set()
        with trio.fail_after(10):
            while actor.core.runtime.pending_effects:
                await trio.sleep(0.001)
    completed = [e for _r, e in recorder.events("s") if isinstance(e, EffectCompleted)]
    assert len(completed) == 1


async def test_a_conflict_mid_pipeline_fails_every_later_answer_and_ends_the_session() -> None:
    recorder = GatedRecorder()
    outcomes: list[object] = []
    async with session(recorder) as (_nursery, actor):
        head = recorder.head("s")
        assert head is not None
        recorder.gate.clear()

        async def agent() -> None:
            try:
                outcomes.append(await actor.perform_action(INCREMENT, ACTIVATE, Latest()))
            except SessionConflictError as error:
                outcomes.append(error)

        async with trio.open_nursery() as agents:
            for _ in range(5):
                agents.start_soon(agent)
            await trio.testing.wait_all_tasks_blocked()
            # Another process takes the session's next sequence number meanwhile.
            MemoryRecorder.append(recorder, [NewEvent("s", head.seq + 1, SessionEnded("x"), 0)])
            recorder.gate.set()
    assert len(outcomes) == 5
    assert all(isinstance(o, SessionConflictError) for o in outcomes)
    assert actor.ended
    # Nothing of this session's was written after the foreign event (the next test covers
    # a batch whose sequence numbers would fit after it).
    records = list(recorder.read("s"))
    assert records[-1].seq == head.seq + 1
    assert not any(isinstance(e, ActionRequested) for _r, e in recorder.events("s"))


async def test_a_batch_submitted_after_a_failed_one_fails_with_it_and_is_not_written() -> None:
    recorder = GatedRecorder()
    recorder.append([NewEvent("s", 1, SessionEnded("someone else"), 0.0)])
    async with trio.open_nursery() as nursery:
        writer: LogWriter = await nursery.start(LogWriter(recorder).run)
        recorder.gate.clear()
        first = writer.submit([NewEvent("s", 1, SessionEnded("a"), 0.0)])
        # seq 2 would fit after the other writer's event, but it belongs after `first`.
        second = writer.submit([NewEvent("s", 2, SessionEnded("b"), 0.0)], after=first)
        other = writer.submit([NewEvent("t", 1, SessionEnded("c"), 0.0)])
        recorder.gate.set()
        with pytest.raises(SequenceConflict):
            await first.durable()
        with pytest.raises(SequenceConflict):
            await second.durable()
        assert [s.seq for s in await other.durable()] == [1]
        writer.close()
    assert [r.seq for r in recorder.read("s")] == [1]
    assert second.settled
    assert not second.succeeded


async def test_a_batch_after_one_that_already_failed_fails_with_it_unwritten() -> None:
    recorder = MemoryRecorder()
    recorder.append([NewEvent("s", 1, SessionEnded("someone else"), 0.0)])
    async with trio.open_nursery() as nursery:
        writer: LogWriter = await nursery.start(LogWriter(recorder).run)
        first = writer.submit([NewEvent("s", 1, SessionEnded("a"), 0.0)])
        with pytest.raises(SequenceConflict):
            await first.durable()
        # Its own transaction: seq 2 would fit after the other writer's event.
        second = writer.submit([NewEvent("s", 2, SessionEnded("b"), 0.0)], after=first)
        with pytest.raises(SequenceConflict):
            await second.durable()
        writer.close()
    assert [r.seq for r in recorder.read("s")] == [1]


async def test_batches_still_queued_when_the_writer_stops_fail_instead_of_hanging() -> None:
    recorder = GatedRecorder()
    async with trio.open_nursery() as nursery:
        writer: LogWriter = await nursery.start(LogWriter(recorder).run)
        recorder.gate.clear()
        first = writer.submit([NewEvent("s", 1, SessionEnded("a"), 0.0)])
        await trio.testing.wait_all_tasks_blocked()
        queued = writer.submit([NewEvent("s", 2, SessionEnded("b"), 0.0)], after=first)
        nursery.cancel_scope.cancel()
        recorder.gate.set()
    assert first.succeeded  # it was being written: the writer saw it through
    assert queued.settled
    assert not queued.succeeded


async def test_a_write_that_fails_ends_the_session_and_the_host_answers_host_closed() -> None:
    class FillsUp(GatedRecorder):
        full = False

        def append(self, events: Sequence[NewEvent]) -> list[StoredEvent]:
            if self.full:
                self.gate.wait(timeout=30)
                raise OSError(28, "No space left on device")
            return super().append(events)

    recorder = FillsUp()
    async with session(recorder) as (nursery, actor):
        host = RuntimeAgentHost(actor)
        recorder.full = True
        got = await action_then_read(nursery, host, recorder)
        later = await host.read_semantics(None)
    assert actor.ended
    for answer in [*got, later]:
        assert isinstance(answer, Rejection)
        assert answer.code is ErrorCode.HOST_CLOSED
        assert "its log could not be written" in answer.message


async def test_answers_held_for_the_log_end_at_once_when_the_session_is_cancelled() -> None:
    """At once: while the log is still stuck (the session's own end waits for it)."""
    recorder = GatedRecorder()
    refused: list[BaseException] = []
    async with trio.open_nursery() as nursery:
        writer: LogWriter = await nursery.start(LogWriter(recorder).run)
        actor = SessionActor("s", counter.app, COUNTER, writer, recorder)

        async def act() -> None:
            try:
                await actor.perform_action(INCREMENT, ACTIVATE, Latest())
            except ActorClosedError as error:
                refused.append(error)

        async def unstick_once_refused() -> None:
            try:
                with trio.fail_after(5):  # requests have no timeout: only the cancel answers
                    while len(refused) < 3:
                        await trio.sleep(0.01)
            finally:
                recorder.gate.set()

        async with trio.open_nursery() as sessions:
            await sessions.start(actor.run)
            recorder.gate.clear()
            for _ in range(3):
                nursery.start_soon(act)
            await trio.testing.wait_all_tasks_blocked()
            nursery.start_soon(unstick_once_refused)
            sessions.cancel_scope.cancel()
        writer.close()
    assert all("ended before answering" in str(error) for error in refused)


async def test_a_close_being_handled_when_the_session_is_cancelled_is_told_it_ended() -> None:
    """Not handed the cancel of the session's task, which ended the closer's own task (and
    its nursery's others) without a word."""
    recorder = GatedRecorder()
    refused: list[BaseException] = []
    with trio.move_on_after(20):  # (the closer's task, ended so, left the session waiting)
        await _close_when_cancelled(recorder, refused)
    assert [str(error) for error in refused] == ["session 's' ended before answering"]


async def _close_when_cancelled(recorder: GatedRecorder, refused: list[BaseException]) -> None:
    async with trio.open_nursery() as nursery:
        writer: LogWriter = await nursery.start(LogWriter(recorder).run)
        actor = SessionActor("s", counter.app, COUNTER, writer, recorder)

        async def close() -> None:
            try:
                await actor.request(Close(), timeout=math.inf)
            except ActorClosedError as error:
                refused.append(error)

        async with trio.open_nursery() as sessions:
            await sessions.start(actor.run)
            recorder.gate.clear()
            nursery.start_soon(close)
            await trio.testing.wait_all_tasks_blocked()  # its end waits for the log
            sessions.cancel_scope.cancel()
            recorder.gate.set()
        writer.close()
