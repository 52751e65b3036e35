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
    handle_signals: bool = True,
) -> str:
    """Serve until end of input, SIGINT/SIGTERM or the output closing; returns why it stopped."""
    receive = receive if receive is not None else trio.lowlevel.FdStream(os.dup(0))
    send = send if send is not None else trio.lowlevel.FdStream(os.dup(1))
    reason = "end of input"

    async def answer(line: bytes) -> bool:
        """Handle one line; False once nobody reads the output (the client closed it)."""
        nonlocal reason
        replies = await handle(router, host, line, diagnostics)
        if replies:
            try:
                await send.send_all(b"".join(_encode(reply) for reply in replies))
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                reason = "output closed"
                return False
        return True

    async def pump(cancel: trio.CancelScope) -> None:
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
                    cancel.cancel()
                    return
            del buffer[:start]
        if buffer.strip():
            with trio.CancelScope(shield=True):
                await answer(bytes(buffer))
        cancel.cancel()

    async def watch_signals(cancel: trio.CancelScope) -> None:
        nonlocal reason
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for signum in signals:
                reason = f"signal {signal.Signals(signum).name}"
                cancel.cancel()
                return

    async with trio.open_nursery() as nursery:
        nursery.start_soon(pump, nursery.cancel_scope)
        if handle_signals:
            nursery.start_soon(watch_signals, nursery.cancel_scope)
    return reason
