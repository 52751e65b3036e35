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
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import trio
from hypercorn.config import Config
from hypercorn.events import Closed, Event, Updated
from hypercorn.trio import run as hypercorn_run
from hypercorn.trio import serve as hypercorn_serve
from hypercorn.trio.tcp_server import TCPServer
from hypercorn.trio.worker_context import WorkerContext
from hypercorn.typing import AppWrapper, Framework, LifespanState


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

    async def protocol_send(self, event: Event) -> None:
        if isinstance(event, Updated):
            self._answering = not event.idle
        await super().protocol_send(event)
        if isinstance(event, Closed):
            # Sent once the last answer went out whole (or on a request h11 refused):
            # what its reader would take next is never answered.
            self._reading.cancel()

    async def _read_data(self) -> None:
        with self._reading:
            await super()._read_data()

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
