"""The session host waits for its session's answer however long the log takes.

A call queued behind many sent-ahead calls can wait for the log longer than an actor
request's `DEFAULT_TIMEOUT`. It is still going to be applied and logged, so it must be
answered with its receipt, never with JSON-RPC ``-32603`` (which a request timeout in
`RuntimeAgentHost` turned it into).

The log here stays shut for twice `DEFAULT_TIMEOUT` of Trio's mock clock, which jumps ahead
whenever every task is waiting, so the test takes no real time. The Trio loop runs on a
thread of its own, and the test fails instead of hanging if it has not ended within
`WATCHDOG` real seconds: the mock clock makes every `trio.fail_after` expire at once while
the log is written on a worker thread.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from semledger.actors import (
    ActorError,
    LogWriter,
    SessionActor,
    SessionLogError,
    SessionRegistry,
)
from semledger.actors._actor import DEFAULT_TIMEOUT
from semledger.eventlog import (
    ActionRequested,
    MemoryRecorder,
    SessionEnded,
)
from semledger.examples import counter
from semledger.hosts import Router
from semledger.hosts._session_host import RuntimeAgentHost
from semledger.hosts._stdio import run_stdio
from semledger.runtime import (
    ActionKind,
    BySemanticId,
    Latest,
    Receipt,
    SemanticId,
    SimpleAction,
)

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp
from shut_log import ShutLog
from trio_thread import run_watched

COUNTER = "semledger.examples.counter:app"
WATCHDOG = 10.0
CALLS = 20
SHUT_FOR = 2 * DEFAULT_TIMEOUT
INCREMENT = BySemanticId(SemanticId.new("counter.increment"))
ACTIVATE = SimpleAction(ActionKind.ACTIVATE)


class Output(trio.abc.SendStream):
    """The loop's stdout, kept so the test can look at it at any time."""

    def __init__(self) -> None:
        self.data = b""

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await trio.lowlevel.checkpoint()
        self.data += bytes(data)

    async def wait_send_all_might_not_block(self) -> None:
        await trio.lowlevel.checkpoint()

    async def aclose(self) -> None:
        await trio.lowlevel.checkpoint()


def _run_on_mock_clock(main: Callable[[], Awaitable[None]], log: ShutLog) -> None:
    try:
        run_watched(
            main,
            seconds=WATCHDOG,
            what="the session",
            clock=trio.testing.MockClock(autojump_threshold=0),
        )
    finally:
        log.open.set()  # never leave the log writer's thread waiting


def _increment(request_id: int) -> bytes:
    return mcp.perform(request_id, "counter.increment").rstrip("\n").encode()


def test_a_call_that_waits_longer_than_the_actor_timeout_is_answered_with_its_receipt() -> None:
    """`CALLS` actions sent ahead over stdio while the log is shut: the session applies them
    all and each waits for the log. After twice `DEFAULT_TIMEOUT` the log opens, and every
    call, the last one queued behind all the others too, is answered with its receipt."""
    log = ShutLog()
    output = Output()
    seen: dict[str, Any] = {}

    async def main() -> None:
        to_loop, loop_input = trio.testing.memory_stream_one_way_pair()
        async with trio.open_nursery() as nursery:
            writer = await nursery.start(LogWriter(log).run)
            actor = SessionActor("slow", counter.app, COUNTER, writer, log)
            await nursery.start(actor.run)
            log.open.clear()
            await to_loop.send_all(b"".join(_increment(i) + b"\n" for i in range(1, CALLS + 1)))
            await to_loop.aclose()

            opened = trio.Event()

            async def open_the_log_later() -> None:
                await trio.sleep(SHUT_FOR)
                seen["written while shut"] = output.data
                log.open.set()
                opened.set()

            nursery.start_soon(open_the_log_later)
            start = trio.current_time()
            seen["reason"] = await run_stdio(
                Router(), RuntimeAgentHost(actor), receive=loop_input, send=output
            )
            seen["waited"] = trio.current_time() - start
            await opened.wait()  # so the log takes what the session sent it
            nursery.cancel_scope.cancel()

    _run_on_mock_clock(main, log)
    assert seen["reason"] == "end of input"
    lines = output.data.split(b"\n")
    assert lines[-1] == b""
    replies = [json.loads(line) for line in lines[:-1]]
    assert [reply["id"] for reply in replies] == list(range(1, CALLS + 1))
    for generation, reply in enumerate(replies, start=1):
        assert "error" not in reply, reply  # not -32603
        assert reply["result"]["isError"] is False, reply
        assert reply["result"]["structuredContent"]["value"] == {
            "before": str(generation),
            "after": str(generation + 1),
            "pending_work": False,
        }
    assert seen["written while shut"] == b""  # nothing was answered before the log took it
    assert seen["waited"] >= SHUT_FOR > DEFAULT_TIMEOUT
    requested = [e for _r, e in log.events("slow") if isinstance(e, ActionRequested)]
    assert len(requested) == CALLS


def test_a_session_actors_own_perform_action_waits_for_the_log_as_the_host_does() -> None:
    """Called by a program embedding the actor, it gave up after `DEFAULT_TIMEOUT` with a
    `RequestTimeoutError` while the action was applied and logged: a retry applied it twice."""
    log = ShutLog()
    seen: dict[str, Any] = {}

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            writer = await nursery.start(LogWriter(log).run)
            actor = SessionActor("direct", counter.app, COUNTER, writer, log)
            await nursery.start(actor.run)
            log.shut_for_a_while(nursery, SHUT_FOR)
            start = trio.current_time()
            seen["answer"] = await actor.perform_action(INCREMENT, ACTIVATE, Latest())
            seen["waited"] = trio.current_time() - start
            nursery.cancel_scope.cancel()

    _run_on_mock_clock(main, log)
    assert isinstance(seen["answer"], Receipt), seen["answer"]
    assert seen["waited"] >= SHUT_FOR > DEFAULT_TIMEOUT


@pytest.mark.parametrize("end", ["close", "park"])
def test_ending_a_session_waits_for_the_log_however_long_it_takes(end: str) -> None:
    """`SessionRegistry.close` raised `RequestTimeoutError` after `DEFAULT_TIMEOUT` while
    the end was logged all the same, and `park` cut the actor off; under the mock clock
    pytest-trio's ``autojump_clock`` gives, any write on the log writer's thread could take
    that long, so a test's teardown failed at random."""
    log = ShutLog()
    seen: dict[str, Any] = {}

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            writer = await nursery.start(LogWriter(log).run)
            registry = SessionRegistry(nursery, writer, log)
            await registry.open(
                "s", lambda: SessionActor("s", counter.app, COUNTER, writer, log)
            )
            log.shut_for_a_while(nursery, SHUT_FOR)
            start = trio.current_time()
            await (registry.close("s", "done") if end == "close" else registry.park("s", "done"))
            seen["waited"] = trio.current_time() - start
            writer.close()

    _run_on_mock_clock(main, log)
    assert seen["waited"] >= SHUT_FOR > DEFAULT_TIMEOUT
    *_, (_record, last) = log.events("s")
    assert isinstance(last, SessionEnded)
    assert last.reason == "done"


async def test_a_session_actor_that_was_never_started_refuses_calls_at_once() -> None:
    """With no timeout, a call to an actor nobody started would wait for good (it waited
    `DEFAULT_TIMEOUT`, then said only that no reply came)."""
    log = MemoryRecorder()
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            writer = await nursery.start(LogWriter(log).run)
            actor = SessionActor("idle", counter.app, COUNTER, writer, log)
            with pytest.raises(ActorError, match=r"'idle' has not been started: start it with"):
                await actor.perform_action(INCREMENT, ACTIVATE, Latest())
            with pytest.raises(ActorError, match="has not been started"):
                await actor.read_semantics(None)
            writer.close()
    assert log.head("idle") is None


@pytest.mark.parametrize(
    ("name", "error", "says"),
    [
        ("", ValueError, "expected a session name, got ''"),
        (" s", ValueError, "expected a session name with no space at either end, got ' s'"),
        (3, TypeError, "expected a session name (a str), got int 3"),
    ],
)
def test_a_session_actor_refuses_a_name_the_cli_refuses(
    name: Any, error: type[Exception], says: str
) -> None:
    """An empty name was logged as a session named '' that tables show as blank."""
    with pytest.raises(error, match=re.escape(says)):
        SessionActor(name, counter.app, COUNTER, LogWriter(MemoryRecorder()), MemoryRecorder())


async def test_a_call_after_the_log_writer_closed_is_a_session_log_error() -> None:
    """docs/log.md promises `SessionLogError` for a write that failed; a writer closed
    before its sessions raised the writer's own `ActorClosedError` to the caller."""
    log = MemoryRecorder()
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            writer = await nursery.start(LogWriter(log).run)
            actor = SessionActor("s", counter.app, COUNTER, writer, log)
            await nursery.start(actor.run)
            writer.close()
            with pytest.raises(SessionLogError, match=r"^session 's': the log writer stopped"):
                await actor.perform_action(INCREMENT, ACTIVATE, Latest())
    assert actor.ended
