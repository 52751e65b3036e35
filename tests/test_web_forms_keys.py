"""Pages that follow typing by its keys: set_text on a web page ends with a keystroke, as a
user's typing does, so a Search button a page enables on ``keyup`` is enabled once the text is
in, and the page's key handlers see the whole text."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from semledger.adapters._web import WebBrowser
from semledger.hosts import SurfaceAgentHost
from semledger.runtime import ActionKind, ByNodeId, Full, Latest, Receipt, Role, SetText

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from served_pages import full_read, open_host, served, surface_on

SEARCH = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Search</title></head>
<body>
<label>Query <input id="q"></label>
<button id="go" disabled>Search</button>
<label>Message <textarea id="msg"></textarea></label>
<p id="heard">no key heard</p>
<script>
  for (const field of [q, msg]) {
    field.addEventListener("keyup", () => {
      go.disabled = !q.value;
      heard.textContent = "keyup in " + field.id + " saw " + JSON.stringify(field.value);
    });
  }
</script>
</body></html>
"""


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served(tmp_path_factory.mktemp("keys"), {"search.html": SEARCH}) as url:
        yield url


@pytest.fixture
async def search(browser: WebBrowser, pages: str) -> AsyncIterator[SurfaceAgentHost]:
    async with surface_on(browser) as surface:
        yield await open_host(surface, pages + "search.html")


def _labelled(full: Full, label: str) -> int:
    return next(n.node_id for n in full.nodes if n.label == label and n.role is not Role.TEXT)


async def test_set_text_ends_with_a_key_so_a_button_enabled_on_keyup_is_enabled(
    search: SurfaceAgentHost,
) -> None:
    full = await full_read(search)
    button = next(n for n in full.nodes if n.role is Role.BUTTON)
    assert button.state.disabled
    query = _labelled(full, "Query")
    receipt = await search.perform_action(ByNodeId(query), SetText("semledger"), Latest())
    assert isinstance(receipt, Receipt), receipt
    after = await full_read(search)
    button = next(n for n in after.nodes if n.role is Role.BUTTON)
    assert not button.state.disabled
    assert ActionKind.ACTIVATE in button.actions
    assert any(n.label == 'keyup in q saw "semledger"' for n in after.nodes)


async def test_the_key_handler_sees_the_whole_text_of_several_lines(
    search: SurfaceAgentHost,
) -> None:
    message = _labelled(await full_read(search), "Message")
    receipt = await search.perform_action(ByNodeId(message), SetText("Hi,\nsee you"), Latest())
    assert isinstance(receipt, Receipt), receipt
    after = await full_read(search)
    assert next(n.value for n in after.nodes if n.node_id == message) == "Hi,\nsee you"
    assert any(n.label == 'keyup in msg saw "Hi,\\nsee you"' for n in after.nodes)
