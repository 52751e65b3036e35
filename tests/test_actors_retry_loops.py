"""A caller that retries on `ActorClosedError` lets the rest of the program run: every
refusal, and every `SessionRegistry` call, is a Trio checkpoint."""

from __future__ import annotations

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
        make = lambda: SessionActor("s", counter.app, COUNTER_REF, writer, recorder)  # noqa: E731
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
            make = lambda: SessionActor("s", counter.app, COUNTER_REF, writer, recorder)  # noqa: E731
            await registry.open("s", make)
            nursery.start_soon(registry.close, "s")
            answers = []
            for _ in range(TRIES):
                session = await registry.open("s", make)
                try:
                    answers.append(await session.perform_action(INCREMENT, ACTIVATE, Latest()))
                except ActorClosedError:
                    continue
                if len(answers) == 3:
                    break
            assert [type(answer) for answer in answers] == [Receipt] * 3
            await registry.close_all()
            writer.close()


async def test_refused_calls_and_registry_calls_are_checkpoints() -> None:
    """As Trio's own calls are, even when they answer at once."""
    recorder = MemoryRecorder()
    async with trio.open_nursery() as nursery:
        writer: LogWriter = await nursery.start(LogWriter(recorder).run)
        registry = SessionRegistry(nursery, writer, recorder)
        make = lambda: SessionActor("s", counter.app, COUNTER_REF, writer, recorder)  # noqa: E731
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
