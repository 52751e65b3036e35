"""The stdio transport: NDJSON over stdin and stdout, on Trio. It only moves bytes.

One request per line, answered in order; blank lines are skipped; a malformed line is
answered by the router and the loop goes on. At end of input every line already read is
answered and flushed before the loop returns. When the client stops reading (stdout closed)
the loop stops too, with the reason "output closed". Nothing but JSON-RPC is written to stdout.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import attrs
import trio

from ._dispatch import handle
from ._host import AgentDiagnosticsHost, AgentHost
from ._router import Router

_CHUNK = 1 << 16


def _encode(message: object) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


async def run_stdio(
    router: Router,
    host: AgentHost,
    diagnostics: AgentDiagnosticsHost | None = None,
    *,
    receive: trio.abc.ReceiveStream | None = None,
    send: trio.abc.SendStream | None = None,
) -> str:
    """Serve until end of input or the output closing; returns why it stopped.

    Signals are the composition root's business (`stop_on_signals`): cancel this to stop.
    A line being answered when that happens is still answered and flushed.
    """
    receive = receive if receive is not None else trio.lowlevel.FdStream(os.dup(0))
    send = send if send is not None else trio.lowlevel.FdStream(os.dup(1))

    async def answer(line: bytes) -> bool:
        """Handle one line; False once nobody reads the output (the client closed it)."""
        replies = await handle(router, host, line, diagnostics)
        if replies:
            try:
                await send.send_all(b"".join(_encode(reply) for reply in replies))
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return False
        return True

    buffer = bytearray()
    while True:
        chunk = await receive.receive_some(_CHUNK)
        if not chunk:
            break
        buffer += chunk
        start = 0
        while (end := buffer.find(b"\n", start)) >= 0:
            line = bytes(buffer[start:end])
            start = end + 1
            with trio.CancelScope(shield=True):
                answered = await answer(line)
            if not answered:
                return "output closed"
        del buffer[:start]
    if buffer.strip():
        with trio.CancelScope(shield=True):
            if not await answer(bytes(buffer)):
                return "output closed"
    return "end of input"


@attrs.define
class SignalStop:
    """Filled in by `stop_on_signals`: wrap the serving loop in ``scope``."""

    scope: trio.CancelScope = attrs.Factory(trio.CancelScope)
    reason: str | None = None


@asynccontextmanager
async def stop_on_signals() -> AsyncIterator[SignalStop]:
    """SIGINT and SIGTERM cancel ``stop.scope`` (the first one names the reason) and are
    absorbed until the block ends, clean-up included, so a signal never kills the process
    halfway through ending its session."""
    stop = SignalStop()
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:

            async def watch() -> None:
                async for signum in signals:
                    if stop.reason is None:
                        stop.reason = f"signal {signal.Signals(signum).name}"
                        stop.scope.cancel()

            nursery.start_soon(watch)
            try:
                yield stop
            finally:
                nursery.cancel_scope.cancel()
