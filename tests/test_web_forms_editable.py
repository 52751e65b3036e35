"""An editable element (``contenteditable``) read and checked on the web surface: its value is
its text, as its node's value shows it, not the empty string of an element without a
``value`` property."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from semledger.adapters import ValueEquals
from semledger.adapters._web import WebBrowser, WebSurface

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from served_pages import node_of, opened, served

EDITOR = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Editor</title></head>
<body>
<div contenteditable id="comment" aria-label="Comment">Looks <b>good</b><div>to me</div></div>
<label>Title <input id="title" value="Draft"></label>
</body></html>
"""


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served(tmp_path_factory.mktemp("editable"), {"editor.html": EDITOR}) as url:
        yield url


@pytest.fixture
async def surface(browser: WebBrowser, pages: str) -> AsyncIterator[WebSurface]:
    async with opened(browser, pages + "editor.html") as surface:
        yield surface


async def test_read_value_of_an_editable_element_is_its_text_as_its_node_shows_it(
    surface: WebSurface,
) -> None:
    comment = await node_of(surface, "comment")
    assert comment.value == "Looks good\nto me"
    assert await surface.read("value", comment.ref) == "Looks good\nto me"
    assert await surface.read("value", (await node_of(surface, "title")).ref) == "Draft"


async def test_text_typed_into_an_editable_element_reads_and_checks_back_as_typed(
    surface: WebSurface,
) -> None:
    comment = await node_of(surface, "comment")
    await surface.act("type", comment.ref, {"text": "Ship it"})
    assert await surface.read("value", comment.ref) == "Ship it"
    assert (await surface.check(ValueEquals("Ship it"), "ref", comment.ref)).ok
    assert not (await surface.check(ValueEquals(""), "ref", comment.ref)).ok
