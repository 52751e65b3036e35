"""Driving a web page through the MCP bridge in tests, each call under a hang guard."""

from __future__ import annotations

import trio

from semledger.adapters import SessionInit
from semledger.adapters._web import WebSurface
from semledger.hosts import SurfaceAgentHost
from semledger.runtime import Full

HANG_GUARD_S = 60
"""Not a measurement: a bound on a call that, broken, never returns, so the test fails
instead of hanging the suite."""


async def open_host(surface: WebSurface, url: str) -> SurfaceAgentHost:
    """The bridge to `surface`, opened on `url`."""
    with trio.fail_after(HANG_GUARD_S):
        await surface.open(SessionInit(base_url=url))
    return SurfaceAgentHost(surface)


async def full_read(host: SurfaceAgentHost) -> Full:
    with trio.fail_after(HANG_GUARD_S):
        read = await host.read_semantics(None)
    assert isinstance(read, Full), read
    return read
