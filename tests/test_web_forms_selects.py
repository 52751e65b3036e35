"""selectOption on a web page's ``<select>`` (a test plan's step on the surface) refuses at once
what the select cannot hold, with nothing chosen: several values for a select of one choice,
which would hold only one of them, and a disabled option, which Playwright waited for until
its timeout and then said only that the element "did not become ready"."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import trio

from semledger.adapters import ActionabilityError
from semledger.adapters._web import WebBrowser, WebSurface

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from served_pages import opened, ref_of, served

SELECTS = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Selects</title></head>
<body>
<label>Size <select id="size"><option>S</option><option>M</option><option>L</option></select>
</label>
<label>Toppings <select id="toppings" multiple>
  <option value="c">Cheese</option><option value="b" disabled>Basil</option>
  <optgroup label="Sold out" disabled><option value="t">Truffle</option></optgroup>
</select></label>
</body></html>
"""


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served(tmp_path_factory.mktemp("selects"), {"selects.html": SELECTS}) as url:
        yield url


@pytest.fixture
async def surface(browser: WebBrowser, pages: str) -> AsyncIterator[WebSurface]:
    async with opened(browser, pages + "selects.html", timeout_ms=20_000) as surface:
        yield surface


async def test_a_select_of_one_choice_given_several_values_is_refused(
    surface: WebSurface,
) -> None:
    size = await ref_of(surface, "size")
    with pytest.raises(ActionabilityError) as refused:
        await surface.act("selectOption", size, {"values": ["M", "L"]})
    assert refused.value.message == "the select takes one choice, and 2 were given: ['M', 'L']"
    assert await surface.read("value", size) == "S"
    await surface.act("selectOption", size, {"values": ["L", "L"]})  # one option, named twice
    assert await surface.read("value", size) == "L"


async def test_a_disabled_option_is_refused_at_once_naming_it(surface: WebSurface) -> None:
    toppings = await ref_of(surface, "toppings")
    for values, why in (
        (["c", "b"], "the option 'Basil' is disabled"),
        (["Basil", "Truffle"], "the options 'Basil', 'Truffle' are disabled"),
    ):
        with trio.fail_after(10), pytest.raises(ActionabilityError) as refused:
            await surface.act("selectOption", toppings, {"values": values})
        assert refused.value.message == why
    assert await surface.read("value", toppings) == ""
