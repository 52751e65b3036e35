"""Pages that follow typing by its keys: set_text on a web page ends with a keystroke, as a
user's typing does, so a Search button a page enables on ``keyup`` is enabled once the text is
in, and the page's key handlers see the whole text; on a page that renders its form anew on each
input, that key goes where a user's would, to the field that took the old one's place."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import trio

from semledger.adapters import ActionabilityError
from semledger.adapters._web import WebBrowser
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
    SetText,
)

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from served_pages import full_read, hosted, opened, ref_of, served

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


RENDERED = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Rendered</title></head>
<body>
<div id="app"></div>
<script>
  const focusBack = new URLSearchParams(location.search).has("focus");
  let name = "";
  function render() {
    app.innerHTML = '<label>Name <input id="name"></label><p>Hello ' + (name || "nobody") + '</p>';
    const field = document.getElementById("name");
    field.value = name;
    field.addEventListener("input", () => {
      name = field.value;
      render();
      if (focusBack) setTimeout(() => document.getElementById("name").focus(), 0);
    });
  }
  render();
</script>
</body></html>
"""


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    served_pages = {"search.html": SEARCH, "rendered.html": RENDERED}
    with served(tmp_path_factory.mktemp("keys"), served_pages) as url:
        yield url


@pytest.fixture
async def search(browser: WebBrowser, pages: str) -> AsyncIterator[SurfaceAgentHost]:
    async with hosted(browser, pages + "search.html") as host:
        yield host


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


async def test_a_last_character_no_us_key_types_is_inserted_and_the_page_hears_no_key(
    search: SurfaceAgentHost,
) -> None:
    """The limit the docs state: Playwright types a character that is not on a US keyboard
    (é, CJK, an emoji) as inserted text, with no keydown or keyup, so a page that follows
    typing by its keys does not hear the text end with it."""
    query = _labelled(await full_read(search), "Query")
    receipt = await search.perform_action(ByNodeId(query), SetText("café"), Latest())
    assert isinstance(receipt, Receipt), receipt
    after = await full_read(search)
    assert next(n.value for n in after.nodes if n.node_id == query) == "café"
    assert any(n.label == "no key heard" for n in after.nodes)


async def test_the_last_key_goes_to_the_field_a_page_rendered_in_place_of_the_old_one(
    browser: WebBrowser, pages: str
) -> None:
    async with hosted(browser, pages + "rendered.html?focus") as rendered:
        for text in ("Ada", "Bo", "Z"):
            name = _labelled(await full_read(rendered), "Name")
            receipt = await rendered.perform_action(ByNodeId(name), SetText(text), Latest())
            assert isinstance(receipt, Receipt), (text, receipt)
            after = await full_read(rendered)
            assert next(n.value for n in after.nodes if n.node_id == name) == text
            assert any(n.label == f"Hello {text}" for n in after.nodes)


async def test_a_page_that_replaced_the_field_and_left_the_focus_nowhere_is_said_so(
    browser: WebBrowser, pages: str
) -> None:
    """No key is typed into whatever has the focus, and no wait for the old field."""
    async with hosted(browser, pages + "rendered.html", timeout_ms=20_000) as rendered:
        name = _labelled(await full_read(rendered), "Name")
        with trio.fail_after(10):
            refused = await rendered.perform_action(ByNodeId(name), SetText("Ada"), Latest())
        assert isinstance(refused, Rejection), refused
        assert (refused.code, refused.message) == (
            ErrorCode.HANDLER_REJECTED,
            "the page replaced the field as the text went in, and the focus is on no field"
            " holding what went in so far: read again",
        )
        assert any(n.label == "Hello Ad" for n in (await full_read(rendered)).nodes)


async def test_typing_into_a_field_the_page_replaced_says_the_field_was_replaced(
    browser: WebBrowser, pages: str
) -> None:
    """A test plan's ``type`` on the surface: the refusal's details name what happened."""
    async with opened(browser, pages + "rendered.html") as surface:
        name = await ref_of(surface, "name")
        with pytest.raises(ActionabilityError) as refused:
            await surface.act("type", name, {"text": "Ada"})
        assert refused.value.details == {"ref": name, "field_replaced": True}
