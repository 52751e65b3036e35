"""A page that moves without changing: a spinner spinning, the page scrolled. Node frames
are in the document's coordinates and an element an animation moves keeps the frame it had
as it began, so neither makes a new generation (which would leave every `exact`
precondition stale) nor sends the whole tree again."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import trio

from semledger.adapters._web import WebBrowser
from semledger.hosts import SurfaceAgentHost
from semledger.runtime import (
    ActionKind,
    ByNodeId,
    Delta,
    Full,
    Latest,
    Receipt,
    Role,
    SimpleAction,
    Unchanged,
)

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from served_pages import hosted, served

ROWS = 200

PAGE = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Motion</title>
<style>
  @keyframes spin {{ to {{ transform: rotate(360deg); }} }}
  .spinner {{ width: 40px; height: 40px; border: 4px solid #888; border-top-color: transparent;
             animation: spin 0.5s linear infinite; }}
</style></head>
<body>
<div class="spinner" role="progressbar" aria-label="Loading"></div>
<p id="said">nothing</p>
{"".join(f'<p><button onclick="said.textContent = {i}">Row {i}</button></p>' for i in range(ROWS))}
</body></html>
"""


RENDERED = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Rendered</title></head>
<body><ul id="list"></ul>
<script>
  const done = new Set();
  function render() {  // as a framework without keys does: every item made anew
    list.replaceChildren(...["milk", "eggs", "tea"].map((item) => {
      const li = document.createElement("li");
      li.innerHTML = `<input type="checkbox" data-testid="done-${item}"
        aria-label="${item}" ${done.has(item) ? "checked" : ""}>`;
      li.firstChild.onclick = () => {
        done.has(item) ? done.delete(item) : done.add(item);
        render();
      };
      return li;
    }));
  }
  render();
</script>
</body></html>
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    pages = {"motion.html": PAGE, "rendered.html": RENDERED}
    with served(tmp_path_factory.mktemp("motion"), pages) as url:
        yield url


@pytest.fixture
async def host(browser: WebBrowser, site: str) -> AsyncIterator[SurfaceAgentHost]:
    async with hosted(browser, site + "motion.html") as opened:
        yield opened


async def test_a_spinning_spinner_makes_no_new_generation(host: SurfaceAgentHost) -> None:
    first = await host.read_semantics(None)
    assert isinstance(first, Full)
    for _ in range(4):
        await trio.sleep(0.12)  # a quarter turn: the spinner's box is another each time
        assert isinstance(await host.read_semantics(first.generation), Unchanged)


async def test_a_click_that_scrolls_the_page_changes_only_what_the_click_changed(
    host: SurfaceAgentHost,
) -> None:
    first = await host.read_semantics(None)
    assert isinstance(first, Full)
    (last,) = [n for n in first.nodes if n.role is Role.BUTTON and n.label == f"Row {ROWS - 1}"]
    done = await host.perform_action(
        ByNodeId(last.node_id), SimpleAction(ActionKind.ACTIVATE), Latest()
    )
    assert isinstance(done, Receipt), done
    delta = await host.read_semantics(first.generation)
    assert isinstance(delta, Delta)
    assert len(delta.upserted) <= 4, [(n.role, n.label) for n in delta.upserted]
    (moved,) = [n for n in delta.upserted if n.node_id == last.node_id]
    assert (moved.frame, moved.state.focused) == (last.frame, True)


async def test_an_element_rendered_anew_keeps_the_node_id_of_its_semantic_id(
    browser: WebBrowser, site: str
) -> None:
    """A list rendered again after each change: the agent's ids stay good, and the delta is
    the change."""
    async with hosted(browser, site + "rendered.html") as host:
        first = await host.read_semantics(None)
        assert isinstance(first, Full)
        boxes = {n.semantic_id: n.node_id for n in first.nodes if n.role is Role.CHECKBOX}
        done = await host.perform_action(
            ByNodeId(boxes["done-eggs"]), SimpleAction(ActionKind.ACTIVATE), Latest()
        )
        assert isinstance(done, Receipt), done
        delta = await host.read_semantics(first.generation)
        assert isinstance(delta, Delta)
        after = {n.semantic_id: n.node_id for n in delta.upserted if n.role is Role.CHECKBOX}
        assert after == {"done-eggs": boxes["done-eggs"]}
        assert not any(node_id in boxes.values() for node_id in delta.removed)
