"""The stdio loop under a stop and a faulty host: a batch one of whose calls started is
answered whole, and a host whose connection log raises does not take the loop down."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
import trio
import trio.testing

from semledger.hosts import Router, run_stdio
from semledger.runtime import Unchanged

_INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"capabilities": {}, "clientInfo": {"name": "agent", "version": "1"}},
}


def _initialize(version: str) -> dict[str, Any]:
    return {**_INIT, "params": {**_INIT["params"], "protocolVersion": version}}


def _read(request_id: int) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "read_semantics", "arguments": {}},
    }


class _SlowHost:
    """Reads answer once released; the first one says it started."""

    def __init__(self) -> None:
        self.started = trio.Event()
        self.release = trio.Event()
        self.calls = 0

    async def read_semantics(self, since: int | None) -> Unchanged:
        self.calls += 1
        self.started.set()
        await self.release.wait()
        return Unchanged(0)

    async def perform_action(self, *arguments: Any) -> Any:
        raise AssertionError("not called")


async def _served(
    host: Any, lines: list[object], *, stop_when: trio.Event | None = None
) -> list[Any]:
    """What run_stdio writes for `lines`, its loop cancelled (as a stop signal cancels it)
    once `stop_when` is set."""
    send_in, receive_in = trio.testing.memory_stream_one_way_pair()
    send_out, receive_out = trio.testing.memory_stream_one_way_pair()
    await send_in.send_all(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
    if stop_when is None:
        await send_in.aclose()
    out = bytearray()
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            stop = trio.CancelScope()

            async def serve() -> None:
                with stop:
                    await run_stdio(Router(), host, receive=receive_in, send=send_out)
                await send_out.aclose()

            nursery.start_soon(serve)
            if stop_when is not None:
                await stop_when.wait()
                stop.cancel()
                await trio.sleep(0.05)
                host.release.set()
            while chunk := await receive_out.receive_some():
                out += chunk
    return [json.loads(line) for line in out.decode().splitlines()]


async def test_a_batch_stopped_after_its_first_call_started_is_answered_whole() -> None:
    """Its first call ran (a perform_action would be in the log), the stop cancelled the
    start of the second (a host takes one call at a time), and the batch's array, written
    once every call is answered, never was."""
    host = _SlowHost()
    written = await _served(
        host, [_initialize("2025-03-26"), [_read(2), _read(3)]], stop_when=host.started
    )
    assert host.calls == 2
    assert [answer["id"] for answer in written[1]] == [2, 3]
    assert all("result" in answer for answer in written[1])


class _UnloggedHost(_SlowHost):
    async def connected(self, connection: object) -> None:
        raise RuntimeError("the connection could not be logged")


async def test_a_host_whose_connection_log_raises_still_answers_and_the_loop_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The error went up out of the reading loop: nothing was written, not even the
    initialize's answer, and run_stdio raised."""
    caplog.set_level(logging.ERROR, logger="semledger.hosts")
    written = await _served(
        _UnloggedHost(), [_initialize("2025-06-18"), {"jsonrpc": "2.0", "id": 2, "method": "ping"}]
    )
    assert [answer["id"] for answer in written] == [1, 2]
    assert "result" in written[1]
    [record] = caplog.records
    assert record.getMessage().startswith("the agent's connection could not be logged")
