"""set_text over a web field's text replaces it as a user typing over it all does: the page
never sees the field empty on the way (a search-as-you-type page runs no search for nothing,
a date's change handler is not told the date is gone)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from semledger.adapters._web import WebBrowser
from semledger.hosts import SurfaceAgentHost
from semledger.runtime import ByNodeId, Full, Latest, Receipt, Role, SetText

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from served_pages import full_read, hosted, opened, served

SEARCH = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Search as you type</title></head>
<body>
<label>Query <input id="q" value="ada"></label>
<label>Notes <textarea id="notes">old notes</textarea></label>
<p id="searched">searched:</p>
<script>
  document.addEventListener("input", (e) => {
    searched.textContent += " [" + e.target.value + "]";
  });
</script>
</body></html>
"""


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served(tmp_path_factory.mktemp("over"), {"search.html": SEARCH}) as url:
        yield url


@pytest.fixture
async def search(browser: WebBrowser, pages: str) -> AsyncIterator[SurfaceAgentHost]:
    async with hosted(browser, pages + "search.html") as host:
        yield host


def _searched(full: Full) -> str:
    return next(n.label for n in full.nodes if n.label and n.label.startswith("searched:"))


async def test_set_text_over_a_fields_text_never_shows_the_page_the_field_empty(
    search: SurfaceAgentHost,
) -> None:
    full = await full_read(search)
    for label, text in (("Query", "grace"), ("Notes", "new notes")):
        field = next(n for n in full.nodes if n.label == label and n.role is Role.TEXT_FIELD)
        receipt = await search.perform_action(ByNodeId(field.node_id), SetText(text), Latest())
        assert isinstance(receipt, Receipt), receipt
        full = await full_read(search)
        assert next(n.value for n in full.nodes if n.node_id == field.node_id) == text
    assert "[]" not in _searched(full)
    assert _searched(full).endswith("[grace] [new note] [new notes]")


async def test_one_character_typed_over_a_fields_text_replaces_it_at_once(
    search: SurfaceAgentHost,
) -> None:
    full = await full_read(search)
    query = next(n for n in full.nodes if n.label == "Query" and n.role is Role.TEXT_FIELD)
    receipt = await search.perform_action(ByNodeId(query.node_id), SetText("z"), Latest())
    assert isinstance(receipt, Receipt), receipt
    after = await full_read(search)
    assert next(n.value for n in after.nodes if n.node_id == query.node_id) == "z"
    assert _searched(after) == "searched: [z]"


async def test_typing_nothing_into_a_field_empties_it(browser: WebBrowser, pages: str) -> None:
    """A test plan's ``type`` of "" on the surface: the field holds nothing after it, as
    set_text's clear makes it."""
    async with opened(browser, pages + "search.html") as surface:
        snapshot = await surface.snapshot()
        for id_ in ("q", "notes"):
            ref = next(n.ref for n in snapshot.nodes if n.native.get("id") == id_)
            await surface.act("type", ref, {"text": ""})
            assert await surface.read("value", ref) == ""
