"""`type` into a web page's range or number input (a test plan's step on the surface; an
agent's set_numeric_value is checked against the node's bounds before it gets there) refuses
what the input would not hold as given, with nothing set: a range would clamp a value past its
bounds, or take its default for text that is no number, unseen."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from semledger.adapters import ActionabilityError
from semledger.adapters._web import WebBrowser, WebSurface

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from served_pages import opened, ref_of, served

RANGES = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Ranges</title></head>
<body>
<label>Volume <input type="range" id="volume" min="0" max="10" value="4"></label>
<label>Guests <input type="number" id="guests" min="1" max="5" value="2"></label>
<label>Budget <input type="range" id="budget" min="0.5" max="1e6" step="0.5" value="1"></label>
</body></html>
"""


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served(tmp_path_factory.mktemp("numbers"), {"ranges.html": RANGES}) as url:
        yield url


@pytest.fixture
async def surface(browser: WebBrowser, pages: str) -> AsyncIterator[WebSurface]:
    async with opened(browser, pages + "ranges.html") as surface:
        yield surface


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("50", "50 is above the maximum, 10"),
        ("-3", "-3 is below the minimum, 0"),
        ("loud", "'loud' does not fit the range field: it takes a number"),
        ("", "'' does not fit the range field: it takes a number"),
    ],
)
async def test_a_range_refuses_a_value_it_would_clamp_or_replace_and_keeps_its_own(
    surface: WebSurface, text: str, why: str
) -> None:
    volume = await ref_of(surface, "volume")
    with pytest.raises(ActionabilityError) as refused:
        await surface.act("type", volume, {"text": text})
    assert refused.value.message == why
    assert await surface.read("value", volume) == "4"


async def test_a_number_input_refuses_text_that_is_no_number_and_holds_one_past_its_bounds(
    surface: WebSurface,
) -> None:
    """Past its bounds it holds the value, invalid, as a user typing it makes it."""
    guests = await ref_of(surface, "guests")
    with pytest.raises(ActionabilityError) as refused:
        await surface.act("type", guests, {"text": "many"})
    assert refused.value.message == "'many' does not fit the number field: it takes a number"
    assert await surface.read("value", guests) == "2"
    await surface.act("type", guests, {"text": "9"})
    assert await surface.read("value", guests) == "9"


async def test_a_number_input_takes_a_number_typed_with_spaces_around_it_as_the_number(
    surface: WebSurface,
) -> None:
    """As a number input's fill trims what it is given: the spaces are no part of the value."""
    guests = await ref_of(surface, "guests")
    await surface.act("type", guests, {"text": " 3\t"})
    assert await surface.read("value", guests) == "3"
    with pytest.raises(ActionabilityError) as refused:
        await surface.act("type", guests, {"text": " 2.5 "})
    assert refused.value.message == (
        "2.5 is between the number's steps: the nearest values are 2 and 3"
    )
    assert await surface.read("value", guests) == "3"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("2000000", "2000000 is above the maximum, 1000000"),
        ("0.25", "0.25 is below the minimum, 0.5"),
    ],
)
async def test_a_ranges_refusal_names_its_bound_as_the_page_writes_it(
    surface: WebSurface, text: str, why: str
) -> None:
    with pytest.raises(ActionabilityError) as refused:
        await surface.act("type", await ref_of(surface, "budget"), {"text": text})
    assert refused.value.message == why
