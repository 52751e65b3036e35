"""Pages served to agents through the MCP bridge whose server, or whose own script, keeps
them waiting: a link to a page the server has not answered yet, a handler that has not
returned. Each wait is held open by the test until it releases it, so nothing depends on
how long anything takes."""

from __future__ import annotations

import json
import select
import signal
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio

from semledger.adapters._web import WebBrowser, WebSurface
from semledger.hosts import SurfaceAgentHost
from semledger.runtime import (
    ActionKind,
    ByNodeId,
    ErrorCode,
    Full,
    Latest,
    Receipt,
    Rejection,
    Role,
    SemanticsNode,
    SetText,
    SimpleAction,
)

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp
from served_pages import HANG_GUARD_S, full_read, open_host, surface_on

ACTION_TIMEOUT_MS = 2000
"""The surface's action timeout, kept short so a click given up on is given up on soon,
and long enough for a click a loaded machine is slow to carry out."""

START = (
    "<!doctype html><title>Start</title><h1>Start</h1>"
    "<a href='/held'>Away</a>"
    "<button onclick=\"this.textContent = 'Pressed'\">Press</button>"
    "<button onclick=\"fetch('/held').then((r) => r.text())"
    ".then(() => { this.textContent = 'Fetched' })\">Fetch</button>"
    # A synchronous request holds the page's script, as a busy loop would, until released.
    "<button onclick=\"const r = new XMLHttpRequest(); r.open('GET', '/held', false);"
    " r.send(); this.textContent = 'Held and done'\">Hold</button>"
    "<div style='position: relative'>"
    "<button onclick=\"this.textContent = 'Reached'\">Covered</button>"
    "<div style='position: absolute; inset: 0'></div></div>"
)
ARRIVED = "<!doctype html><title>Arrived</title><h1>Arrived</h1>"
PICTURED = "<!doctype html><title>Pictured</title><h1>Pictured</h1><img src='/held' alt='Late'>"
DATED = (
    "<!doctype html><title>Dated</title>"
    "<label>Due <input type='date' value='2024-01-05' onchange=\"fetch('/held')\"></label>"
)


@attrs.frozen
class Site:
    url: str
    release: threading.Event
    """Set to let the server answer ``/held``."""


@pytest.fixture
def site() -> Iterator[Site]:
    release = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/held":
                release.wait()
                body = ARRIVED
            elif self.path == "/pictured":
                body = PICTURED
            elif self.path == "/dated":
                body = DATED
            else:
                body = START
            data = body.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Site(f"http://127.0.0.1:{server.server_address[1]}/", release)
    finally:
        release.set()
        server.shutdown()
        server.server_close()


@pytest.fixture
async def surface(browser: WebBrowser) -> AsyncIterator[WebSurface]:
    async with surface_on(browser, timeout_ms=ACTION_TIMEOUT_MS) as opened:
        yield opened


async def _activate(host: SurfaceAgentHost, node: SemanticsNode) -> Receipt | Rejection:
    with trio.fail_after(HANG_GUARD_S):
        return await host.perform_action(
            ByNodeId(node.node_id), SimpleAction(ActionKind.ACTIVATE), Latest()
        )


def _one(full: Full, role: Role, label: str) -> SemanticsNode:
    (node,) = [n for n in full.nodes if n.role is role and n.label == label]
    return node


def _root(full: Full) -> SemanticsNode:
    (root,) = [n for n in full.nodes if n.node_id == full.root]
    return root


async def _read_until(host: SurfaceAgentHost, label: str) -> Full:
    """Read again until a node labelled `label` shows (the page the server let through)."""
    with trio.fail_after(HANG_GUARD_S):
        while True:
            read = await host.read_semantics(None)
            if isinstance(read, Full) and any(n.label == label for n in read.nodes):
                return read
            await trio.sleep(0.05)


async def test_a_read_while_a_link_waits_on_its_server_shows_the_page_as_it_is_busy(
    surface: WebSurface, site: Site
) -> None:
    host = await open_host(surface, site.url)
    start = await full_read(host)
    await _activate(host, _one(start, Role.LINK, "Away"))

    loading = await full_read(host)
    assert _root(loading).state.busy
    assert _one(loading, Role.LINK, "Away").node_id == _one(start, Role.LINK, "Away").node_id
    refused = await _activate(host, _one(loading, Role.BUTTON, "Press"))
    assert isinstance(refused, Rejection), refused
    assert refused.code is ErrorCode.HANDLER_REJECTED
    assert "loading" in refused.message
    assert host.generation == loading.generation

    site.release.set()
    arrived = await _read_until(host, "Arrived")
    assert not _root(arrived).state.busy
    assert _root(arrived).label == "Arrived"


async def test_activating_a_link_the_server_has_not_answered_is_a_receipt_with_pending_work(
    surface: WebSurface, site: Site
) -> None:
    host = await open_host(surface, site.url)
    done = await _activate(host, _one(await full_read(host), Role.LINK, "Away"))
    assert isinstance(done, Receipt), done
    assert done.pending_work
    site.release.set()
    await _read_until(host, "Arrived")


async def test_activating_a_button_whose_handler_has_not_returned_is_a_receipt_with_pending_work(
    surface: WebSurface, site: Site
) -> None:
    host = await open_host(surface, site.url)
    done = await _activate(host, _one(await full_read(host), Role.BUTTON, "Hold"))
    assert isinstance(done, Receipt), done
    assert done.pending_work
    with trio.fail_after(HANG_GUARD_S):
        busy = await host.read_semantics(None)
    assert isinstance(busy, Rejection), busy
    assert busy.details["failure"] == "timeout"
    site.release.set()
    await _read_until(host, "Held and done")


async def test_activating_a_button_whose_fetch_is_unanswered_is_a_receipt_with_pending_work(
    surface: WebSurface, site: Site
) -> None:
    host = await open_host(surface, site.url)
    start = await full_read(host)
    pressed = await _activate(host, _one(start, Role.BUTTON, "Press"))
    assert isinstance(pressed, Receipt), pressed
    assert not pressed.pending_work
    fetching = await _activate(host, _one(start, Role.BUTTON, "Fetch"))
    assert isinstance(fetching, Receipt), fetching
    assert fetching.pending_work
    assert not _root(await full_read(host)).state.busy  # the page is not loading a document
    site.release.set()
    await _read_until(host, "Fetched")


async def test_set_text_on_a_date_field_whose_change_fetches_is_a_receipt_with_pending_work(
    surface: WebSurface, site: Site
) -> None:
    """What a date field's change handler started (a request, a navigation) is the action's,
    as for any field: set_text "" once held its clear back until the next call, the snapshot
    after it, which did the clear and dropped what it tracked."""
    host = await open_host(surface, site.url + "dated")
    for text in ("", "2024-03-03"):
        due = _one(await full_read(host), Role.TEXT_FIELD, "Due")
        with trio.fail_after(HANG_GUARD_S):
            done = await host.perform_action(ByNodeId(due.node_id), SetText(text), Latest())
        assert isinstance(done, Receipt), (text, done)
        assert done.pending_work, text
        assert _one(await full_read(host), Role.TEXT_FIELD, "Due").value == (text or None)


async def test_activating_a_covered_button_is_a_rejection_and_nothing_happens(
    surface: WebSurface, site: Site
) -> None:
    host = await open_host(surface, site.url)
    start = await full_read(host)
    refused = await _activate(host, _one(start, Role.BUTTON, "Covered"))
    assert isinstance(refused, Rejection), refused
    assert refused.code is ErrorCode.HANDLER_REJECTED
    after = await full_read(host)
    assert after.generation == start.generation
    assert _one(after, Role.BUTTON, "Covered")


async def test_a_page_whose_image_waits_on_the_server_opens_and_is_navigated_to(
    surface: WebSurface, site: Site
) -> None:
    host = await open_host(surface, site.url + "pictured")
    opened = await full_read(host)
    assert _root(opened).label == "Pictured"
    assert _one(opened, Role.IMAGE, "Late")
    with trio.fail_after(HANG_GUARD_S):
        again = await surface.act("navigate", args={"url": site.url + "pictured"})
    assert again.navigated


def _answer(server: subprocess.Popen[str], request: str) -> dict[str, Any]:
    """Send `request` to a running ``semledger serve`` and read the envelope it answers,
    failing (not hanging) when no answer comes."""
    assert server.stdin is not None
    assert server.stdout is not None
    server.stdin.write(request)
    server.stdin.flush()
    ready, _, _ = select.select([server.stdout], [], [], HANG_GUARD_S)
    assert ready, f"no answer to {request!r}"
    reply = json.loads(server.stdout.readline())
    envelope: dict[str, Any] = reply["result"]["structuredContent"]
    return envelope


def test_serve_answers_and_stops_on_sigterm_while_a_link_waits_on_its_server(
    tmp_path: Path, site: Site
) -> None:
    db = str(tmp_path / "web.db")
    command = [sys.executable, "-m", "semledger", "serve", "--adapter", "web",
               "--url", site.url, "--db", db, "--session", "slow"]  # fmt: skip
    server = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert server.stdin is not None
        assert server.stdout is not None
        server.stdin.write(mcp.initialize())
        server.stdin.flush()
        server.stdout.readline()
        page = _answer(server, mcp.read(1))["value"]
        (away,) = [n["node_id"] for n in page["nodes"] if n["label"] == "Away"]
        activate = {"target": {"kind": "node_id", "id": away}, "action": {"kind": "activate"},
                    "precondition": {"kind": "latest"}}  # fmt: skip
        receipt = _answer(server, mcp.call(2, "perform_action", activate))
        assert receipt["value"]["pending_work"], receipt
        loading = _answer(server, mcp.read(3))["value"]
        (root,) = [n for n in loading["nodes"] if n["node_id"] == loading["root"]]
        assert root["state"]["busy"]
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=HANG_GUARD_S) == 0
    finally:
        if server.poll() is None:
            server.kill()
        server.wait()
        for stream in (server.stdin, server.stdout, server.stderr):
            if stream is not None:
                stream.close()
