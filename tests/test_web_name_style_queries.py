"""A snapshot asks the browser whether an element is shown once per element, however many
names read it: a row's name reads its cells, and each cell's name reads them again."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from semledger.adapters import SessionInit
from semledger.adapters._web import WebBrowser

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from served_pages import HANG_GUARD_S, served, surface_on

ROWS = "".join(
    f"<tr><td><span><b>Item {i}</b> <i>desc {i}</i></span></td>"
    f"<td><a href='#'>Edit <span>{i}</span></a></td><td>{i * 3}</td></tr>"
    for i in range(40)
)

# Counts the page's calls that ask about an element's box or style.
COUNTING = """<script>
window.styleQueries = 0;
const checkVisibility = Element.prototype.checkVisibility;
Element.prototype.checkVisibility = function (...a) {
  window.styleQueries++; return checkVisibility.apply(this, a);
};
const computed = window.getComputedStyle;
window.getComputedStyle = function (...a) {
  window.styleQueries++; return computed.apply(this, a);
};
</script>"""

PAGES = {
    "table.html": f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Items</title>{COUNTING}</head><body><table>{ROWS}</table></body></html>""",
}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served(tmp_path_factory.mktemp("style_queries"), PAGES) as url:
        yield url


async def test_a_table_snapshot_asks_about_each_element_once(
    browser: WebBrowser, site: str
) -> None:
    """Each name from content asked again about every element under it (whether it has a
    box, its visibility), so a table's cells were asked about for their row's name, then
    for their own: a 3,000-row table's names took twice as long as before names left out
    hidden parts."""
    async with surface_on(browser) as surface:
        with trio.fail_after(HANG_GUARD_S):
            await surface.open(SessionInit(base_url=site + "table.html"))
            await surface.act("evaluate", args={"script": "window.styleQueries = 0"})
            snapshot = await surface.snapshot()
            asked = await surface.act("evaluate", args={"script": "window.styleQueries"})
            elements = await surface.act(
                "evaluate", args={"script": "document.querySelectorAll('*').length"}
            )
    rows = [n.name for n in snapshot.nodes if n.role == "row"]
    assert rows[:2] == ["Item 0 desc 0 Edit 0 0", "Item 1 desc 1 Edit 1 3"]
    assert int(asked.result or "") <= int(elements.result or ""), (asked, elements)
