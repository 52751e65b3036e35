"""The actor base: request/reply, its timeout, closing, and errors reaching the caller."""

from __future__ import annotations

from typing import Any

import pytest
import trio
import trio.testing

from semledger.actors import Actor, ActorClosedError, RequestTimeoutError


class Calculator(Actor[tuple[str, int]]):
    """Doubles numbers, fails on demand, or never answers."""

    def __init__(self) -> None:
        super().__init__()
        self.ready = False
        self.handled: list[tuple[str, int]] = []

    async def started(self) -> None:
        await trio.sleep(0)
        self.ready = True

    async def handle(self, message: tuple[str, int]) -> Any:
        verb, value = message
        self.handled.append(message)
        if verb == "fail":
            raise ValueError(f"cannot handle {value}")
        if verb == "hang":
            await trio.sleep_forever()
        return value * 2


async def test_nursery_start_returns_the_actor_once_its_setup_has_finished() -> None:
    async with trio.open_nursery() as nursery:
        actor = Calculator()
        started = await nursery.start(actor.run)
        assert started is actor
        assert actor.ready
        actor.close()


async def test_request_returns_the_handlers_reply() -> None:
    async with trio.open_nursery() as nursery:
        actor: Calculator = await nursery.start(Calculator().run)
        assert await actor.request(("double", 21)) == 42
        assert await actor.request(("double", 5)) == 10
        actor.close()


async def test_the_handlers_exception_is_raised_to_the_caller_and_the_actor_goes_on() -> None:
    async with trio.open_nursery() as nursery:
        actor: Calculator = await nursery.start(Calculator().run)
        with pytest.raises(ValueError, match="cannot handle 7"):
            await actor.request(("fail", 7))
        assert await actor.request(("double", 1)) == 2
        actor.close()


async def test_a_request_without_reply_in_time_raises_request_timeout(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with trio.open_nursery() as nursery:
        actor: Calculator = await nursery.start(Calculator().run)
        with pytest.raises(RequestTimeoutError, match="no reply to tuple in 5"):
            await actor.request(("hang", 0), timeout=5)
        nursery.cancel_scope.cancel()


async def test_requests_are_handled_one_at_a_time_in_the_order_sent() -> None:
    async with trio.open_nursery() as nursery:
        actor: Calculator = await nursery.start(Calculator().run)
        results: dict[int, int] = {}

        async def ask(value: int) -> None:
            results[value] = await actor.request(("double", value))

        async with trio.open_nursery() as callers:
            for value in range(10):
                callers.start_soon(ask, value)
                await trio.testing.wait_all_tasks_blocked()
        assert results == {v: 2 * v for v in range(10)}
        assert [v for _verb, v in actor.handled] == list(range(10))
        actor.close()


async def test_a_closed_actor_refuses_requests_and_tells() -> None:
    async with trio.open_nursery() as nursery:
        actor: Calculator = await nursery.start(Calculator().run)
        actor.close()
        with pytest.raises(ActorClosedError):
            await actor.request(("double", 1))
        with pytest.raises(ActorClosedError):
            await actor.tell(("double", 1))
        with pytest.raises(ActorClosedError):
            actor.tell_nowait(("double", 1))


async def test_messages_sent_before_close_are_still_handled() -> None:
    actor = Calculator()
    async with trio.open_nursery() as nursery:
        await nursery.start(actor.run)
        for value in range(3):
            actor.tell_nowait(("double", value))
        actor.close()
    assert actor.handled == [("double", 0), ("double", 1), ("double", 2)]


async def _cancelled_while(
    actor: Calculator, first: tuple[str, int], queued: tuple[str, int]
) -> dict[str, BaseException]:
    """The errors of two requests: `first`, being handled, and `queued` behind it, when the
    actor's own task is cancelled (its callers' are not)."""
    errors: dict[str, BaseException] = {}

    async def ask(key: str, message: tuple[str, int]) -> None:
        try:
            await actor.request(message)
        except ActorClosedError as error:
            errors[key] = error

    async with trio.open_nursery() as callers:
        with trio.CancelScope() as actor_scope:
            async with trio.open_nursery() as running:
                await running.start(actor.run)
                callers.start_soon(ask, "first", first)
                await trio.testing.wait_all_tasks_blocked()
                callers.start_soon(ask, "queued", queued)
                await trio.testing.wait_all_tasks_blocked()
                actor_scope.cancel()
    return errors


async def test_requests_of_an_actor_that_is_cancelled_are_told_it_ended(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Neither waits for its timeout, and the one being handled is not handed the cancel
    of the actor's task, which ended its caller's task without a word."""
    errors = await _cancelled_while(Calculator(), ("hang", 0), ("double", 1))
    assert {key: str(error) for key, error in errors.items()} == {
        "first": "Calculator ended before answering",
        "queued": "Calculator ended before answering",
    }


async def test_a_told_message_whose_handler_raises_ends_the_actor_with_that_error() -> None:
    actor = Calculator()
    with pytest.RaisesGroup(pytest.RaisesExc(ValueError, match="cannot handle 3")):
        async with trio.open_nursery() as nursery:
            await nursery.start(actor.run)
            await actor.tell(("fail", 3))
            await actor.tell(("double", 4))
            actor.close()
    assert actor.handled == [("fail", 3)]
