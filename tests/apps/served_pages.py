"""Driving a web page through the MCP bridge in tests, each call under a hang guard."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import trio

from semledger.adapters import SessionInit, SnapshotNode
from semledger.adapters._cases_web import serve_directory
from semledger.adapters._web import WebBrowser, WebSurface
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


def written(directory: Path, pages: Mapping[str, str]) -> str:
    """`pages` (file name: HTML) written to `directory`; the file URL they are under."""
    for name, html in pages.items():
        (directory / name).write_text(html, encoding="utf-8")
    return directory.as_uri() + "/"


@contextmanager
def served(directory: Path, pages: Mapping[str, str]) -> Iterator[str]:
    """`pages` (file name: HTML) written to `directory` and served; yields the base URL."""
    written(directory, pages)
    with serve_directory(directory) as url:
        yield url


@asynccontextmanager
async def surface_on(browser: WebBrowser, **config: object) -> AsyncIterator[WebSurface]:
    """A surface of its own on `browser` with `config`, closed after (even when cancelled)."""
    surface = WebSurface({"browser": browser, **config})
    try:
        yield surface
    finally:
        with trio.CancelScope(shield=True):
            await surface.close()


@asynccontextmanager
async def opened(browser: WebBrowser, url: str, **config: object) -> AsyncIterator[WebSurface]:
    """A surface of its own on `browser` with `config`, opened on `url`, closed after."""
    async with surface_on(browser, **config) as surface:
        with trio.fail_after(HANG_GUARD_S):
            await surface.open(SessionInit(base_url=url))
        yield surface


@asynccontextmanager
async def hosted(
    browser: WebBrowser, url: str, **config: object
) -> AsyncIterator[SurfaceAgentHost]:
    """The bridge to a surface of its own on `browser` with `config`, opened on `url`,
    closed after."""
    async with opened(browser, url, **config) as surface:
        yield SurfaceAgentHost(surface)


async def node_of(surface: WebSurface, id_: str) -> SnapshotNode:
    """The node, in a fresh snapshot of `surface`, of the element whose native id is `id_`."""
    snapshot = await surface.snapshot()
    return next(n for n in snapshot.nodes if n.native.get("id") == id_)


async def ref_of(surface: WebSurface, id_: str) -> str:
    """The ref, in a fresh snapshot of `surface`, of the element whose native id is `id_`."""
    return (await node_of(surface, id_)).ref
