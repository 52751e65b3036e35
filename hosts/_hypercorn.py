"""hypercorn's Trio server as `serve_http` runs it: a connection it takes for idle, and
closes as it stops, is one that has no request under way.

hypercorn closes a connection whose keep-alive timer fires (its server stopping wakes the
timer at once), and a request it reads stops that timer. Woken by the stop, the timer
could go on to close the connection after a request came on it: its answer went out cut
off, its headers sent (``content-length`` included) and its body not. Here the timer
leaves such a connection alone: it is closed after its answer, as hypercorn closes every
connection once its server stops.

A connection closed after its answer (its server stopping, or the answer saying
``Connection: close``) with the next request already read in part is one whose reader
waits for hypercorn to take that request up (h11's ``PAUSED``), which it never does: the
stop waited out its grace for it. Here closing the connection ends its reader too.

A connection speaks HTTP/1.1 only, all MCP's Streamable HTTP needs: hypercorn's HTTP/2,
taken up by a client that assumes it (h2c prior knowledge), raised on a stream it had
reset as its server stopped (``KeyError``), which took the whole server down with a
traceback, the sessions' ends unlogged. Such a client is told to use HTTP/1.1 (a
``GOAWAY`` with ``HTTP_1_1_REQUIRED``); a request asking to upgrade to it is answered in
HTTP/1.1, as the upgrade lets a server do.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable

import h2.config
import h2.connection
import h2.errors
import h11
import trio
from hypercorn.config import Config
from hypercorn.events import Closed, Event, RawData, Updated
from hypercorn.protocol.h11 import H11Protocol
from hypercorn.trio import run as hypercorn_run
from hypercorn.trio import serve as hypercorn_serve
from hypercorn.trio.tcp_server import MAX_RECV, TCPServer
from hypercorn.trio.worker_context import WorkerContext
from hypercorn.typing import AppWrapper, Framework, LifespanState


def _http2_refusal() -> bytes:
    """What a client that assumes HTTP/2 (h2c prior knowledge) is answered, in HTTP/2: the
    server's preface, then a ``GOAWAY`` that takes no stream, with ``HTTP_1_1_REQUIRED``."""
    connection = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False))
    connection.initiate_connection()
    connection.close_connection(
        error_code=h2.errors.ErrorCodes.HTTP_1_1_REQUIRED,
        additional_data=b"this server speaks HTTP/1.1 only",
    )
    return connection.data_to_send()


REFUSAL_LINGER = 1.0
"""Seconds a connection refused HTTP/2 reads on, until its client closes it: closed with
what the client sent still unread, it would be reset, its refusal thrown away."""


class _Http2RefusedError(Exception):
    """Raised on a connection opened with HTTP/2's preface, once it is refused."""


class _Http11Protocol(H11Protocol):
    """hypercorn's HTTP/1.1, never switching to its HTTP/2."""

    async def _check_protocol(self, event: h11.Request) -> None:
        if event.method == b"PRI" and event.target == b"*" and event.http_version == b"2.0":
            await self.send(RawData(_http2_refusal()))
            raise _Http2RefusedError


class IdleClosingTCPServer(TCPServer):
    """hypercorn's connection, closed by its keep-alive timer only while it is idle."""

    _answering = False
    """Whether a request has been read that is not answered yet (hypercorn says so by
    ``Updated(idle=False)``, before the application is called)."""

    def __init__(
        self,
        app: AppWrapper,
        config: Config,
        context: WorkerContext,
        state: LifespanState,
        stream: trio.SSLStream[trio.SocketStream],
    ) -> None:
        super().__init__(app, config, context, state, stream)
        self._reading = trio.CancelScope()

    async def run(self) -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._closed_once_cancelled)
            await super().run()
            nursery.cancel_scope.cancel()

    async def _closed_once_cancelled(self) -> None:
        """hypercorn writes with cancellation shielded (a write cut off would garble the
        stream), so an answer its client does not read held its server, stopping, past
        its grace and without limit. Cancelled (the grace is over), its socket is closed,
        which ends such a write; otherwise it is closed already."""
        try:
            await trio.sleep_forever()
        finally:
            with trio.CancelScope(shield=True):
                await self.stream.aclose()

    async def protocol_send(self, event: Event) -> None:
        if isinstance(event, Updated):
            self._answering = not event.idle
        await super().protocol_send(event)
        if isinstance(event, Closed):
            # Sent once the last answer went out whole (or on a request h11 refused):
            # what its reader would take next is never answered.
            self._reading.cancel()

    async def _read_data(self) -> None:
        wrapper = self.protocol  # made by hypercorn before it reads (with no TLS, HTTP/1.1)
        wrapper.protocol = _Http11Protocol(
            wrapper.app,
            wrapper.config,
            wrapper.context,
            wrapper.task_group,
            wrapper.state,
            wrapper.ssl,
            wrapper.client,
            wrapper.server,
            wrapper.send,
        )
        with self._reading:
            try:
                await super()._read_data()
            except _Http2RefusedError:
                await self._linger()

    async def _linger(self) -> None:
        with trio.move_on_after(REFUSAL_LINGER):
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                await self.stream.send_eof()
                while await self.stream.receive_some(MAX_RECV):
                    pass

    async def _initiate_server_close(self) -> None:
        # With no request under way, hypercorn's close does not yield until the socket is
        # closed: a request read before it is answered whole, one read after gets nothing.
        if not self._answering:
            await super()._initiate_server_close()


async def serve(
    app: Framework,
    config: Config,
    *,
    shutdown_trigger: Callable[[], Awaitable[None]],
    task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """`hypercorn.trio.serve`, its connections `IdleClosingTCPServer`: hypercorn makes
    them from its module's ``TCPServer``, which is set to it, for every server of this
    process (it is no change but this fix)."""
    hypercorn_run.TCPServer = IdleClosingTCPServer  # type: ignore[attr-defined]
    await hypercorn_serve(app, config, shutdown_trigger=shutdown_trigger, task_status=task_status)
