"""Pages that hold what a browser copes with and the web adapter once did not: text that is
not valid Unicode, elements that only look editable, a modal in a frame."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import trio

from semledger.adapters import SessionError, SessionInit
from semledger.adapters._web import WebBrowser, WebSurface
from semledger.hosts import SurfaceAgentHost
from semledger.runtime import (
    ActionKind,
    ByNodeId,
    ErrorCode,
    Frame,
    Full,
    Latest,
    Receipt,
    Rejection,
    SemanticsAction,
    SemanticsNode,
    SetText,
    SimpleAction,
)

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from served_pages import HANG_GUARD_S, full_read, open_host, surface_on, written

PAGES = {
    "cut.html": """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Cut</title></head><body>
<p id="msg">Ready</p>
<button onclick="msg.textContent = 'Great job \\u{1F600}!'.slice(0, 11);
  document.title = 'Half \\uD83D'">Preview</button>
<button onclick="alert('Cut \\uDE00 here')">Warn</button>
</body></html>
""",
    "boxes.html": """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Boxes</title></head><body>
<div role="textbox" aria-label="Shown only">x</div>
<div role="textbox" contenteditable="false" aria-label="Switched off">y</div>
<div role="textbox" contenteditable="true" aria-label="Typed into">z</div>
</body></html>
""",
    "inputs.html": """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Inputs</title></head><body>
<input type="checkbox" role="textbox" aria-label="Checkbox">
<input type="radio" role="textbox" aria-label="Radio">
<input type="button" role="textbox" aria-label="Button" value="b">
<input type="file" role="textbox" aria-label="File">
<input type="submit" role="searchbox" aria-label="Submit">
<input type="text" role="textbox" aria-label="Text">
<input type="range" role="textbox" aria-label="Range">
<input type="color" role="textbox" aria-label="Colour">
</body></html>
""",
    "editor.html": """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Editing</title></head><body>
<div contenteditable="true" aria-label="Editor"></div>
<div contenteditable="true" aria-label="Paragraphs"
  onfocus="document.execCommand('defaultParagraphSeparator', false, 'p')"></div>
<div contenteditable="true" aria-label="Written">
  <p>Hello   there</p>
  <p>x<br></p><div style="white-space: pre">  kept  </div>
</div>
</body></html>
""",
    "words.html": """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Words</title></head><body>
<p>Before error</p>
<label>Name <input aria-label="Field"></label>
<iframe title="Inset" style="margin-left: 50px" srcdoc="<p>Framed words</p>"></iframe>
</body></html>
""",
    "framed.html": """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Framed</title></head><body>
<iframe title="Widget" srcdoc="<button onclick=&quot;d.showModal()&quot;>Open</button>
  <button>Behind</button><dialog id='d'><p>Inside the frame</p></dialog>"></iframe>
<button onclick="this.textContent = 'Top clicked'">Top</button>
</body></html>
""",
    "stuck.html": """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Stuck</title></head><body><p>Loading</p>
<script>const until = Date.now() + 6000; while (Date.now() < until) {}</script>
</body></html>
""",
}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> str:
    return written(tmp_path_factory.mktemp("quirks"), PAGES)


@pytest.fixture
async def surface(browser: WebBrowser) -> AsyncIterator[WebSurface]:
    async with surface_on(browser) as opened:
        yield opened


def _labelled(full: Full, label: str) -> SemanticsNode:
    found = [n for n in full.nodes if n.label == label]
    assert len(found) == 1, f"no single node {label!r} in {[n.label for n in full.nodes]}"
    return found[0]


async def _perform(
    host: SurfaceAgentHost, node: SemanticsNode, action: SemanticsAction
) -> Receipt | Rejection:
    with trio.fail_after(HANG_GUARD_S):
        return await host.perform_action(ByNodeId(node.node_id), action, Latest())


async def test_lone_surrogates_in_page_text_title_and_dialog_read_as_replacement_characters(
    surface: WebSurface, site: str
) -> None:
    host = await open_host(surface, site + "cut.html")
    page = await full_read(host)
    shown = await _perform(host, _labelled(page, "Preview"), SimpleAction(ActionKind.ACTIVATE))
    assert isinstance(shown, Receipt), shown
    after = await full_read(host)
    assert next(n for n in after.nodes if n.node_id == after.root).label == "Half \ufffd"
    assert _labelled(after, "Great job \ufffd")
    warned = await _perform(host, _labelled(after, "Warn"), SimpleAction(ActionKind.ACTIVATE))
    assert isinstance(warned, Receipt), warned
    (dialog,) = (await full_read(host)).nodes
    assert dialog.label == "Cut \ufffd here"


async def test_a_textbox_role_on_an_element_that_takes_no_text_is_read_only_without_set_text(
    surface: WebSurface, site: str
) -> None:
    host = await open_host(surface, site + "boxes.html")
    page = await full_read(host)
    for label in ("Shown only", "Switched off"):
        box = _labelled(page, label)
        assert box.state.read_only, box
        assert ActionKind.SET_TEXT not in box.actions, box
        refused = await _perform(host, box, SetText("zz"))
        assert isinstance(refused, Rejection), refused
        assert refused.code is ErrorCode.ACTION_UNAVAILABLE, refused
    typed_into = _labelled(page, "Typed into")
    assert not typed_into.state.read_only
    assert isinstance(await _perform(host, typed_into, SetText("zz")), Receipt)
    assert _labelled(await full_read(host), "Typed into").value == "zz"


async def test_a_textbox_role_on_an_input_that_takes_no_text_is_read_only_without_set_text(
    surface: WebSurface, site: str
) -> None:
    host = await open_host(surface, site + "inputs.html")
    page = await full_read(host)
    for label in ("Checkbox", "Radio", "Button", "File", "Submit"):
        box = _labelled(page, label)
        assert box.state.read_only, box
        assert ActionKind.SET_TEXT not in box.actions, box
        refused = await _perform(host, box, SetText("7"))
        assert isinstance(refused, Rejection), refused
        assert refused.code is ErrorCode.ACTION_UNAVAILABLE, refused
    for label, text in (("Text", "7"), ("Range", "7"), ("Colour", "#123456")):
        field = _labelled(page, label)
        assert not field.state.read_only, field
        assert isinstance(await _perform(host, field, SetText(text)), Receipt)
        assert _labelled(await full_read(host), label).value == text


async def test_text_typed_into_an_editable_element_reads_back_as_typed_blank_lines_and_all(
    surface: WebSurface, site: str
) -> None:
    host = await open_host(surface, site + "editor.html")
    page = await full_read(host)
    assert _labelled(page, "Written").value == "Hello there\nx\n  kept  "
    for label in ("Editor", "Paragraphs"):
        for text in ("a\nb\n\nc", "\n\nlead", "x\n\n", "\n", "one", ""):
            typed = await _perform(host, _labelled(page, label), SetText(text))
            assert isinstance(typed, Receipt), typed
            assert _labelled(await full_read(host), label).value == (text or None), (label, text)


def _within(inner: Frame, outer: Frame) -> bool:
    return (
        outer.origin.x <= inner.origin.x
        and outer.origin.y <= inner.origin.y
        and inner.origin.x + inner.size.width <= outer.origin.x + outer.size.width
        and inner.origin.y + inner.size.height <= outer.origin.y + outer.size.height
    )


async def test_page_text_has_the_box_it_is_drawn_in_not_a_zero_frame(
    surface: WebSurface, site: str
) -> None:
    host = await open_host(surface, site + "words.html")
    page = await full_read(host)
    held: dict[str, tuple[Frame, Frame]] = {}
    for label in ("Before error", "Name", "Framed words"):
        text = _labelled(page, label)
        assert text.frame.size.width > 0, text
        assert text.frame.size.height > 0, text
        (holder,) = [n for n in page.nodes if text.node_id in n.children]
        assert _within(text.frame, holder.frame), (text.frame, holder.frame)
        held[label] = (text.frame, holder.frame)
    words, paragraph = held["Before error"]
    assert words.size.width < paragraph.size.width / 2  # the words' box, not the paragraph's
    assert held["Framed words"][0].origin.x > _labelled(page, "Inset").frame.origin.x


async def test_a_modal_dialog_in_a_frame_confines_the_frame_and_the_page_stays_in_reach(
    surface: WebSurface, site: str
) -> None:
    host = await open_host(surface, site + "framed.html")
    page = await full_read(host)
    opened = await _perform(host, _labelled(page, "Open"), SimpleAction(ActionKind.ACTIVATE))
    assert isinstance(opened, Receipt), opened
    shown = await full_read(host)
    labels = [n.label for n in shown.nodes]
    assert "Inside the frame" in labels
    assert "Behind" not in labels
    assert "Open" not in labels
    assert shown.root == page.root
    clicked = await _perform(host, _labelled(shown, "Top"), SimpleAction(ActionKind.ACTIVATE))
    assert isinstance(clicked, Receipt), clicked
    assert _labelled(await full_read(host), "Top clicked")


async def test_a_page_load_gives_up_after_the_sessions_timeout_not_a_longer_hidden_one(
    surface: WebSurface, site: str
) -> None:
    """The page's script holds its document back for 6 s; the session waits 1 s for it
    (and a loaded machine takes a while more to start and to stop the load). The error
    names the setting to change: Playwright's "Timeout 1000ms exceeded." named none."""
    started = trio.current_time()
    with pytest.raises(SessionError) as opened:
        with trio.fail_after(HANG_GUARD_S):
            await surface.open(SessionInit(base_url=site + "stuck.html", timeout_ms=1000))
    assert trio.current_time() - started < 5
    assert opened.value.message == (
        f"cannot open {site}stuck.html: it did not load within 1000 ms (timeout_ms; serve's"
        " --timeout, in seconds)"
    )
