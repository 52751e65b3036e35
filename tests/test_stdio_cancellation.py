"""Cancelling the stdio loop (as `stop_on_signals` does on SIGTERM) while calls it read ahead
are still in flight.

The host allows overlapping calls, so `run_stdio` starts each tool call as its line is read
and answers in line order. Each of the host's actions waits for the test to let it finish.
What is pinned: the cancellation is all that comes out of the loop, and it comes out as soon
as the calls already started are finished; each of those is answered (a call that reached
the host always has its answer written, whole and in line order); a call not started when
the loop was cancelled never reaches the host; and the host's calls are never cancelled
halfway.

Each test runs its Trio loop on a thread of its own and fails, instead of hanging, if the
loop is not done within `WATCHDOG` seconds: a `trio.fail_after` cannot end code that is
shielded from cancellation, as the loop's calls and writer are.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import attrs
import trio
import trio.testing

from semledger.hosts import Router
from semledger.hosts._stdio import MAX_OUTSTANDING, run_stdio
from semledger.runtime import (
    ErrorCode,
    Exact,
    Precondition,
    ReadResult,
    Receipt,
    Rejection,
    SemanticsAction,
    Target,
)

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp
from trio_thread import run_watched

WATCHDOG = 10.0
"""Real seconds a test's Trio loop may take before the test fails as hung."""

PROMPTLY = 5.0
"""Seconds the loop may take to return once cancelled and its started calls can finish."""


class HeldHost:
    """Allows overlapping calls, like the session host. An action's index is the generation
    its precondition names; it waits until the test releases that index."""

    overlapping_calls = True

    def __init__(self, calls: int) -> None:
        self.gates = {index: trio.Event() for index in range(1, calls + 1)}
        self.started: list[int] = []
        self.finished: list[int] = []
        self.cancelled: list[int] = []

    def release(self, *indexes: int) -> None:
        for index in indexes:
            self.gates[index].set()

    async def read_semantics(self, since: int | None) -> ReadResult | Rejection:
        return Rejection(ErrorCode.HOST_CLOSED, "this host only performs actions", {})

    async def perform_action(
        self, target: Target, action: SemanticsAction, precondition: Precondition
    ) -> Receipt | Rejection:
        assert isinstance(precondition, Exact)
        index = precondition.generation
        self.started.append(index)
        try:
            await self.gates[index].wait()
        except trio.Cancelled:
            self.cancelled.append(index)
            raise
        self.finished.append(index)
        return Receipt(index, index + 1, False)


class Output(trio.abc.SendStream):
    """The loop's stdout. Each write lands in two halves with a checkpoint between them; with
    `hold` set, the next write stops after its first half until `go_on` is set."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.hold = False
        self.halfway = trio.Event()
        self.go_on = trio.Event()

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        chunk = bytes(data)
        half = len(chunk) // 2
        self.data += chunk[:half]
        if self.hold:
            self.hold = False
            self.halfway.set()
            await self.go_on.wait()
        else:
            await trio.lowlevel.checkpoint()
        self.data += chunk[half:]

    async def wait_send_all_might_not_block(self) -> None:
        await trio.lowlevel.checkpoint()

    async def aclose(self) -> None:
        await trio.lowlevel.checkpoint()


@attrs.define
class Served:
    """`run_stdio` over a `HeldHost`, inside `scope`; its input stays open (the client is
    still there), so only cancelling `scope` ends it."""

    host: HeldHost
    output: Output
    to_loop: trio.testing.MemorySendStream
    scope: trio.CancelScope = attrs.Factory(trio.CancelScope)
    done: trio.Event = attrs.Factory(trio.Event)
    reason: str | None = None

    async def send(self, lines: list[bytes]) -> None:
        """Send `lines` and wait until the loop has done all it can with them."""
        await self.to_loop.send_all(b"".join(line + b"\n" for line in lines))
        await trio.testing.wait_all_tasks_blocked()

    async def stopped(self) -> None:
        """Wait for the cancelled loop to end: by the cancellation, and nothing else."""
        with trio.fail_after(PROMPTLY):
            await self.done.wait()
        assert self.scope.cancelled_caught
        assert self.reason is None  # it did not return a reason: it was cancelled


async def _serve(nursery: trio.Nursery, host: HeldHost, lines: list[bytes]) -> Served:
    to_loop, loop_input = trio.testing.memory_stream_one_way_pair()
    served = Served(host, Output(), to_loop)

    async def run() -> None:
        # Anything but the cancellation raised here ends the test with that exception.
        with served.scope:
            served.reason = await run_stdio(Router(), host, receive=loop_input, send=served.output)
        served.done.set()

    nursery.start_soon(run)
    await served.send(lines)
    return served


def _action(index: int) -> bytes:
    """A tool call, id `index`, that `HeldHost` knows by `index`."""
    return mcp.perform(index, "counter.increment", generation=str(index)).rstrip("\n").encode()


PING = b'{"jsonrpc": "2.0", "id": "ping", "method": "ping"}'


def _replies(data: bytes | bytearray) -> list[dict[str, Any]]:
    """The replies written: each one JSON-RPC object on one whole line."""
    assert not data or data.endswith(b"\n"), f"a half line was written: {bytes(data[-80:])!r}"
    replies = []
    for line in bytes(data).split(b"\n")[:-1]:
        reply = json.loads(line)
        assert isinstance(reply, dict), line
        assert reply["jsonrpc"] == "2.0", reply
        replies.append(reply)
    return replies


def _check_receipt(reply: dict[str, Any]) -> None:
    """`reply` is the receipt `HeldHost` gave the action with the reply's id."""
    index = reply["id"]
    result = reply["result"]
    assert result["isError"] is False, reply
    assert result["structuredContent"]["value"] == {
        "before": str(index),
        "after": str(index + 1),
        "pending_work": False,
    }


def test_cancelled_with_calls_in_flight_it_answers_each_started_call_in_line_order() -> None:
    """Two calls answered, four in flight, a ping and a malformed line queued behind them:
    cancelled, the loop reads no more lines, finishes the four (released in reverse order),
    writes every answer whole and in the order of the lines, and ends with the cancellation
    only."""
    host = HeldHost(7)
    output: list[dict[str, Any]] = []

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            lines = [_action(1), _action(2), PING, _action(3), _action(4), b"not json"]
            served = await _serve(nursery, host, [*lines, _action(5), _action(6)])
            assert host.started == [1, 2, 3, 4, 5, 6]  # read ahead, in line order
            for index in (1, 2):
                host.release(index)
                await trio.testing.wait_all_tasks_blocked()
            assert [r["id"] for r in _replies(served.output.data)] == [1, 2, "ping"]

            served.scope.cancel()
            await trio.testing.wait_all_tasks_blocked()
            await served.send([_action(7)])  # sent after the cancellation: never read
            for index in (7, 6, 5, 4, 3):  # answers ready out of line order
                host.release(index)
                await trio.testing.wait_all_tasks_blocked()
            await served.stopped()
            output.extend(_replies(served.output.data))

    run_watched(main, seconds=WATCHDOG, what="the stdio loop")
    assert host.cancelled == []  # no call was cancelled halfway
    assert host.started == [1, 2, 3, 4, 5, 6]
    assert host.finished == [1, 2, 6, 5, 4, 3]
    assert [reply["id"] for reply in output] == [1, 2, "ping", 3, 4, None, 5, 6]
    for reply in output:
        if isinstance(reply["id"], int):
            _check_receipt(reply)
    assert output[2]["result"] == {}
    assert output[5]["error"]["code"] == -32700


def test_cancelled_with_the_most_calls_outstanding_lines_not_started_never_reach_the_host() -> None:
    """`MAX_OUTSTANDING` calls in flight and more lines read: once cancelled, the loop answers
    exactly the calls it started, and the lines waiting for a slot are never run."""
    calls = MAX_OUTSTANDING + 4
    host = HeldHost(calls)
    output: list[dict[str, Any]] = []

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            served = await _serve(nursery, host, [_action(i) for i in range(1, calls + 1)])
            assert host.started == list(range(1, MAX_OUTSTANDING + 1))
            served.scope.cancel()
            await trio.testing.wait_all_tasks_blocked()
            host.release(*range(1, calls + 1))
            await served.stopped()
            output.extend(_replies(served.output.data))

    run_watched(main, seconds=WATCHDOG, what="the stdio loop")
    assert host.started == list(range(1, MAX_OUTSTANDING + 1))
    assert host.cancelled == []
    assert [reply["id"] for reply in output] == list(range(1, MAX_OUTSTANDING + 1))
    for reply in output:
        _check_receipt(reply)


def test_a_reply_being_written_when_the_loop_is_cancelled_is_written_whole() -> None:
    """Cancelled while stdout has taken half of a reply (and two calls are in flight): that
    reply is finished, the two calls are answered after it, and nothing else is written."""
    host = HeldHost(3)
    output: list[dict[str, Any]] = []

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            served = await _serve(nursery, host, [_action(1), _action(2), _action(3)])
            served.output.hold = True
            host.release(1)
            with trio.fail_after(PROMPTLY):
                await served.output.halfway.wait()
            assert not served.output.data.endswith(b"\n")  # halfway through reply 1
            served.scope.cancel()
            await trio.testing.wait_all_tasks_blocked()
            host.release(3, 2)
            await trio.testing.wait_all_tasks_blocked()
            served.output.go_on.set()
            await served.stopped()
            output.extend(_replies(served.output.data))

    run_watched(main, seconds=WATCHDOG, what="the stdio loop")
    assert [reply["id"] for reply in output] == [1, 2, 3]
    for reply in output:
        _check_receipt(reply)


def test_cancelled_when_every_call_is_answered_it_returns_at_once() -> None:
    host = HeldHost(2)
    output: list[dict[str, Any]] = []

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            host.release(1, 2)
            served = await _serve(nursery, host, [_action(1), PING, _action(2)])
            served.scope.cancel()
            await served.stopped()
            output.extend(_replies(served.output.data))

    run_watched(main, seconds=WATCHDOG, what="the stdio loop")
    assert [reply["id"] for reply in output] == [1, "ping", 2]
