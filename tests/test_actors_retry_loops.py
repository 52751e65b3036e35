"""A caller that retries on `ActorClosedError` lets the rest of the program run: every
refusal, and every `SessionRegistry` call, is a Trio checkpoint."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import trio
import trio.testing

from semledger.actors import (
    ActorClosedError,
    ActorError,
    Close,
    LogWriter,
    SessionActor,
    SessionRegistry,
)
from semledger.eventlog import MemoryRecorder
from semledger.examples import counter
from semledger.runtime import (
    ActionKind,
    BySemanticId,
    Latest,
    Receipt,
    SemanticId,
    SimpleAction,
)

INCREMENT = BySemanticId(SemanticId.new("counter.increment"))
ACTIVATE = SimpleAction(ActionKind.ACTIVATE)
COUNTER_REF = "semledger.examples.counter:app"
TRIES = 1000
"""More than a loop that lets other tasks run needs, by far: a bound, not a timing."""


def _counter(writer: LogWriter, recorder: MemoryRecorder) -> Callable[[], SessionActor]:
    """What makes session "s" of the counter, as `SessionRegistry.open` takes it."""
    return lambda: SessionActor("s", counter.app, COUNTER_REF, writer, recorder)


async def test_a_retry_loop_on_a_closed_session_ends_at_its_deadline(
    mock_clock: trio.testing.MockClock,
) -> None:
    """A closed session's `perform_action` raised without a schedule point: a loop that
    retried it under ``trio.fail_after(1)`` ran ~190,000 times in 5 s, its deadline never
    checked. Here the deadline passes as soon as another task runs."""
    recorder = MemoryRecorder()
    async with trio.open_nursery() as nursery:
        writer: LogWriter = await nursery.start(LogWriter(recorder).run)
        registry = SessionRegistry(nursery, writer, recorder)
        make = _counter(writer, recorder)
        session = await registry.open("s", make)
        await registry.close("s")

        async def pass_the_deadline() -> None:
            mock_clock.jump(2)

        nursery.start_soon(pass_the_deadline)
        tries = 0

        async def retry() -> None:
            nonlocal tries
            with trio.fail_after(1):
                while tries < TRIES:
                    with pytest.raises(ActorClosedError):
                        await session.perform_action(INCREMENT, ACTIVATE, Latest())
                    tries += 1

        with pytest.raises(trio.TooSlowError):
            await retry()
        assert tries < TRIES
        writer.close()


async def test_reopening_after_actor_closed_gets_the_session_back() -> None:
    """`SessionRegistry.open` handed back the closed actor without a checkpoint, and its
    refusal had none either: the registry's task that forgets a stopped actor never ran,
    so a loop reopening and retrying got the closed actor back for good (and the writer
    and every other session starved)."""
    recorder = MemoryRecorder()
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            writer: LogWriter = await nursery.start(LogWriter(recorder).run)
            registry = SessionRegistry(nursery, writer, recorder)
            make = _counter(writer, recorder)
            await registry.open("s", make)
            nursery.start_soon(registry.close, "s")
            receipts = 0
            for _ in range(TRIES):
                session = await registry.open("s", make)
                try:
                    answer = await session.perform_action(INCREMENT, ACTIVATE, Latest())
                except ActorClosedError:
                    continue
                # (host_closed: sent as the close was handled, it came after it)
                receipts += isinstance(answer, Receipt)
                if receipts == 3:
                    break
            assert receipts == 3
            await registry.close_all()
            writer.close()


class _FirstStep(trio.abc.Instrument):
    """Whether `made` held anything when the task named `name` first yielded."""

    def __init__(self, name: str, made: list[SessionActor]) -> None:
        self.name = name
        self.made = made
        self.made_before_yielding: bool | None = None

    def after_task_step(self, task: trio.lowlevel.Task) -> None:
        if task.name == self.name and self.made_before_yielding is None:
            self.made_before_yielding = bool(self.made)


async def test_open_marks_the_session_starting_before_another_task_runs() -> None:
    """`open` let other tasks run before it marked the session starting: the HTTP host's
    requests that came together after a park each found the session `settled` and not
    running, each opened it, and the session logged its client as back more than once."""
    recorder = MemoryRecorder()
    made: list[SessionActor] = []

    def make() -> SessionActor:  # called once the session is marked starting
        made.append(SessionActor("s", counter.app, COUNTER_REF, writer, recorder))
        return made[-1]

    async with trio.open_nursery() as nursery:
        writer: LogWriter = await nursery.start(LogWriter(recorder).run)
        registry = SessionRegistry(nursery, writer, recorder)
        first_step = _FirstStep("opener", made)
        trio.lowlevel.add_instrument(first_step)
        try:
            async with trio.open_nursery() as opening:
                opening.start_soon(registry.open, "s", make, name="opener")
        finally:
            trio.lowlevel.remove_instrument(first_step)
        assert first_step.made_before_yielding
        await registry.close_all()
        writer.close()


async def test_refused_calls_and_registry_calls_are_checkpoints() -> None:
    """As Trio's own calls are, even when they answer at once."""
    recorder = MemoryRecorder()
    async with trio.open_nursery() as nursery:
        writer: LogWriter = await nursery.start(LogWriter(recorder).run)
        registry = SessionRegistry(nursery, writer, recorder)
        make = _counter(writer, recorder)
        session = await registry.open("s", make)
        with trio.testing.assert_checkpoints():
            assert await registry.open("s", make) is session
        with trio.testing.assert_checkpoints():
            await registry.settled("s")
        await registry.close("s")
        with trio.testing.assert_checkpoints(), pytest.raises(KeyError):
            await registry.open("s")
        with trio.testing.assert_checkpoints():
            await registry.close_all()
        with trio.testing.assert_checkpoints():
            await registry.park_all("parked")
        with trio.testing.assert_checkpoints(), pytest.raises(ActorClosedError):
            await session.read_semantics(None)
        with trio.testing.assert_checkpoints(), pytest.raises(ActorClosedError):
            await session.tell(Close())
        unstarted = SessionActor("t", counter.app, COUNTER_REF, writer, recorder)
        with trio.testing.assert_checkpoints(), pytest.raises(ActorError, match="not been started"):
            await unstarted.perform_action(INCREMENT, ACTIVATE, Latest())
        writer.close()
