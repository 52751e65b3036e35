"""A web form's own limits on what a field holds, met by set_text: text longer than a field's
``maxlength``, which the browser would cut short unseen, is refused before anything is typed,
naming the limit, and so is a line break in a one-line input, which it would type as a
space, so a receipt is never for text the field does not hold."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from semledger.adapters import ActionabilityError
from semledger.adapters._web import WebBrowser, WebSurface
from semledger.hosts import SurfaceAgentHost
from semledger.runtime import (
    ByNodeId,
    ErrorCode,
    Full,
    Latest,
    Receipt,
    Rejection,
    Role,
    SemanticsNode,
    SetText,
)

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from served_pages import full_read, node_of, open_host, served, surface_on

LIMITED = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Limited</title></head>
<body>
<label>Code <input id="code" maxlength="5" value="old"></label>
<label>Bio <textarea id="bio" maxlength="10"></textarea></label>
<label>Born <input type="date" id="born" maxlength="3"></label>
<label>Street <input id="street" value="1 Main St"></label>
<label>Mail <input type="email" id="mail"></label>
<p id="heard">nothing heard</p>
<script>
  document.addEventListener("input", (e) => { heard.textContent = "heard " + e.target.id; });
</script>
</body></html>
"""


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served(tmp_path_factory.mktemp("limits"), {"limited.html": LIMITED}) as url:
        yield url


@pytest.fixture
async def surface(browser: WebBrowser) -> AsyncIterator[WebSurface]:
    async with surface_on(browser) as surface:
        yield surface


@pytest.fixture
async def limited(surface: WebSurface, pages: str) -> SurfaceAgentHost:
    return await open_host(surface, pages + "limited.html")


def _field(full: Full, label: str) -> SemanticsNode:
    return next(n for n in full.nodes if n.label == label and n.role is Role.TEXT_FIELD)


async def _set_text(host: SurfaceAgentHost, label: str, text: str) -> Receipt | Rejection:
    field = _field(await full_read(host), label)
    return await host.perform_action(ByNodeId(field.node_id), SetText(text), Latest())


async def test_set_text_longer_than_the_fields_maxlength_is_refused_naming_the_limit(
    limited: SurfaceAgentHost,
) -> None:
    """Nothing is typed: the field keeps its value, the page hears no input, and the
    generation stays."""
    before = await full_read(limited)
    refused = await _set_text(limited, "Code", "abcdefgh")
    assert isinstance(refused, Rejection), refused
    assert (refused.code, refused.message) == (
        ErrorCode.HANDLER_REJECTED,
        "the text is 8 characters, and the field takes at most 5 (its maxlength)",
    )
    after = await full_read(limited)
    assert after.generation == before.generation
    assert _field(after, "Code").value == "old"
    assert any(n.label == "nothing heard" for n in after.nodes)


async def test_set_text_within_the_maxlength_is_typed_whole(limited: SurfaceAgentHost) -> None:
    receipt = await _set_text(limited, "Code", "abcde")
    assert isinstance(receipt, Receipt), receipt
    assert _field(await full_read(limited), "Code").value == "abcde"


async def test_a_textareas_maxlength_counts_a_line_break_as_one_character(
    limited: SurfaceAgentHost,
) -> None:
    """As the browser does, a CRLF included: ten characters fit, eleven do not."""
    fits = await _set_text(limited, "Bio", "abcd\r\nefgh")
    assert isinstance(fits, Receipt), fits
    assert _field(await full_read(limited), "Bio").value == "abcd\nefgh"
    refused = await _set_text(limited, "Bio", "abcd\nefgh\nij")
    assert isinstance(refused, Rejection), refused
    assert refused.message == (
        "the text is 12 characters, and the field takes at most 10 (its maxlength)"
    )


async def test_the_maxlength_counts_as_the_browser_does_an_emoji_as_two(
    limited: SurfaceAgentHost,
) -> None:
    """Three emoji are six UTF-16 code units: Chromium would keep two of them."""
    refused = await _set_text(limited, "Code", "😀😀😀")
    assert isinstance(refused, Rejection), refused
    assert refused.message == (
        "the text is 6 characters as the browser counts them (UTF-16 code units),"
        " and the field takes at most 5 (its maxlength)"
    )


async def test_a_maxlength_on_a_type_that_ignores_it_refuses_nothing(
    limited: SurfaceAgentHost,
) -> None:
    receipt = await _set_text(limited, "Born", "2024-02-03")
    assert isinstance(receipt, Receipt), receipt
    assert _field(await full_read(limited), "Born").value == "2024-02-03"


async def test_type_on_the_surface_refuses_text_past_the_maxlength(
    surface: WebSurface, limited: SurfaceAgentHost
) -> None:
    code = await node_of(surface, "code")
    with pytest.raises(ActionabilityError) as refused:
        await surface.act("type", code.ref, {"text": "abcdefgh"})
    assert refused.value.details == {"ref": code.ref, "maxlength": 5, "length": 8}
    assert await surface.read("value", code.ref) == "old"


async def test_set_text_with_a_line_break_into_a_one_line_input_is_refused(
    limited: SurfaceAgentHost,
) -> None:
    """Chromium would type the break as a space ('1 High St Flat 2'); nothing is typed."""
    before = await full_read(limited)
    for label, text in (("Street", "1 High St\nFlat 2"), ("Mail", "ada@example.org\r\n")):
        refused = await _set_text(limited, label, text)
        assert isinstance(refused, Rejection), refused
        assert (refused.code, refused.message) == (
            ErrorCode.HANDLER_REJECTED,
            "the field takes one line, and the text has a line break (the browser would type"
            " it as a space)",
        )
    after = await full_read(limited)
    assert after.generation == before.generation
    assert _field(after, "Street").value == "1 Main St"
    assert any(n.label == "nothing heard" for n in after.nodes)
