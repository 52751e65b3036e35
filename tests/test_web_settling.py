"""An input's receipt shows what the page did with it: what a handler left for the next
frame, what a modal ``<dialog>`` does as it closes. The page runs those a moment after the
input; the snapshot after an action waits for them, so the agent sees them at once and a
re-run of the session sees them at the same step."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from semledger.adapters._web import WebBrowser
from semledger.hosts import SurfaceAgentHost
from semledger.runtime import ActionKind, ByNodeId, Full, Latest, Receipt, SimpleAction

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp
from served_pages import hosted, served

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Settling</title></head>
<body>
<button id="later" onclick="requestAnimationFrame(() => { said.textContent = 'drawn' })">
  Later</button>
<button id="open" onclick="settings.showModal()">Open</button>
<p id="said">nothing yet</p>
<dialog id="settings" aria-label="Settings">
  <form method="dialog"><button id="ok" value="ok">OK</button></form>
</dialog>
<script>
  settings.onclose = () => { said.textContent = "closed " + settings.returnValue; };
</script>
</body></html>
"""


SAVING = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Saving</title></head>
<body>
<button id="save" onclick="said.textContent = 'Saving'; setTimeout(() => { said.textContent =
  'Saved' }, 600)">Save</button>
<p id="said">Not saved</p>
</body></html>
"""


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    pages = {"settling.html": PAGE, "saving.html": SAVING}
    with served(tmp_path_factory.mktemp("settling"), pages) as url:
        yield url + "settling.html"


@pytest.fixture
async def host(browser: WebBrowser, page: str) -> AsyncIterator[SurfaceAgentHost]:
    async with hosted(browser, page) as opened:
        yield opened


async def _activate(host: SurfaceAgentHost, semantic_id: str) -> Receipt:
    full = await host.read_semantics(None)
    assert isinstance(full, Full)
    (node,) = [n for n in full.nodes if n.semantic_id == semantic_id]
    receipt = await host.perform_action(
        ByNodeId(node.node_id), SimpleAction(ActionKind.ACTIVATE), Latest()
    )
    assert isinstance(receipt, Receipt), receipt
    return receipt


async def _labels(host: SurfaceAgentHost, generation: str) -> set[str | None]:
    """The labels the page shows at `generation`, which must still be the current one."""
    full = await host.read_semantics(None)
    assert isinstance(full, Full)
    assert full.generation == generation, "the page changed after the receipt"
    return {n.label for n in full.nodes}


async def test_what_a_handler_draws_in_the_next_frame_is_in_the_receipts_generation(
    host: SurfaceAgentHost,
) -> None:
    receipt = await _activate(host, "later")
    assert "drawn" in await _labels(host, receipt.after)


async def test_what_a_modal_dialog_does_as_it_closes_is_in_the_receipts_generation(
    host: SurfaceAgentHost,
) -> None:
    for _ in range(3):
        await _activate(host, "open")
        receipt = await _activate(host, "ok")
        assert "closed ok" in await _labels(host, receipt.after)


@contextmanager
def _serving(url: str, db: Path, session: str) -> Iterator[subprocess.Popen[str]]:
    """`semledger serve --adapter web` on `url` as `session`, to the end of the block."""
    server = subprocess.Popen(
        [*mcp.COMMAND, "serve", "--adapter", "web", "--url", url,
         "--db", str(db), "--session", session],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env=mcp.env(),
    )  # fmt: skip
    try:
        yield server
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=60)


def test_a_rerun_of_a_session_with_dialogs_and_frames_does_not_diverge(
    page: str, tmp_path: Path
) -> None:
    db = tmp_path / "settling.db"
    with _serving(page, db, "settling") as server:
        for n, semantic_id in enumerate(["open", "ok", "later", "open", "ok", "open", "ok"]):
            assert mcp.ask(server, mcp.perform(n, semantic_id))["ok"]
    replayed = mcp.cli("replay", "settling", "--db", str(db))
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr


def test_a_rerun_waits_between_calls_as_the_agent_did(page: str, tmp_path: Path) -> None:
    """The page's timer runs while the agent waits: re-run back to back, the read after the
    wait would find the page still saving."""
    db = tmp_path / "saving.db"
    with _serving(page.replace("settling", "saving"), db, "saving") as server:
        assert mcp.ask(server, mcp.perform(1, "save"))["ok"]
        time.sleep(1.0)
        shown = mcp.ask(server, mcp.read(2))["value"]["nodes"]
        assert any(n["label"] == "Saved" for n in shown)
    replayed = mcp.cli("replay", "saving", "--db", str(db))
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
