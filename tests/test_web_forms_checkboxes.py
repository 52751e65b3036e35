"""setChecked on a web page's checkbox (a test plan's step on the surface) as a person ticks it:
one hidden in its label, drawn by the label's own box, is ticked through the label, as a click
is (Playwright's own set_checked found it covered and waited out its timeout), and a page
that keeps the box as it was is said to have."""

from __future__ import annotations

import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from semledger.adapters import ActionabilityError
from semledger.adapters._web import WebBrowser, WebSurface

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from served_pages import opened, ref_of, served

BOXES = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Boxes</title>
<style>
  .visually-hidden { position: absolute; width: 1px; height: 1px; margin: -1px; padding: 0;
    overflow: hidden; clip: rect(0 0 0 0); border: 0; }
  .box { display: inline-block; width: 16px; height: 16px; border: 1px solid #333; }
</style></head>
<body>
<p><label><input type="checkbox" class="visually-hidden" id="news"><span class="box"></span>
  Send me the newsletter</label></p>
<p><label><input type="checkbox" id="locked" onclick="event.preventDefault()"> Locked</label></p>
<p><label><input type="checkbox" id="some"> Some</label></p>
<div role="checkbox" aria-checked="mixed" tabindex="0" id="partly">Partly</div>
<div id="agree"></div>
<div id="stubborn"></div>
<script>
  // Pages that render the box anew on each change: one from the state the change set, one
  // from a state it never sets.
  let ticked = false;
  function render() {
    agree.innerHTML = '<label><input type="checkbox" id="agreed"' + (ticked ? " checked" : "")
      + "> Agree</label>";
    document.getElementById("agreed").addEventListener("change", (e) => {
      ticked = e.target.checked;
      render();
    });
  }
  function renderStubborn() {
    stubborn.innerHTML = '<label><input type="checkbox" id="kept"> Kept</label>';
    document.getElementById("kept").addEventListener("change", renderStubborn);
  }
  render();
  renderStubborn();
  document.getElementById("some").indeterminate = true;
</script>
</body></html>
"""


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served(tmp_path_factory.mktemp("boxes"), {"boxes.html": BOXES}) as url:
        yield url


@pytest.fixture
async def surface(browser: WebBrowser, pages: str) -> AsyncIterator[WebSurface]:
    async with opened(browser, pages + "boxes.html", timeout_ms=3000) as surface:
        yield surface


async def _checked(surface: WebSurface, id_: str) -> object:
    done = await surface.act("evaluate", args={"script": f"() => {id_}.checked"})
    return done.result


async def test_set_checked_ticks_a_checkbox_hidden_in_its_label_and_unticks_it(
    surface: WebSurface,
) -> None:
    news = await ref_of(surface, "news")
    for checked, shown in ((True, "true"), (True, "true"), (False, "false")):
        await surface.act("setChecked", news, {"checked": checked})
        assert await _checked(surface, "news") == shown


async def test_set_checked_on_a_box_the_page_keeps_as_it_was_is_refused_saying_so(
    surface: WebSurface,
) -> None:
    with pytest.raises(ActionabilityError) as refused:
        await surface.act("setChecked", await ref_of(surface, "locked"), {"checked": True})
    assert refused.value.message == (
        "the click did not change its state: the page kept it unchecked"
    )


async def test_set_checked_on_a_box_the_page_renders_anew_answers_at_once_as_the_page_shows_it(
    surface: WebSurface,
) -> None:
    """The box the click changed is gone: the one in its place says how the page holds it."""
    agreed = await ref_of(surface, "agreed")
    started = time.monotonic()
    await surface.act("setChecked", agreed, {"checked": True})
    assert await _checked(surface, "agreed") == "true"
    with pytest.raises(ActionabilityError) as refused:
        await surface.act("setChecked", await ref_of(surface, "kept"), {"checked": True})
    assert refused.value.message == (
        "the click did not change its state: the page kept it unchecked"
    )
    assert refused.value.details["replaced"] is True
    assert time.monotonic() - started < 2  # the surface's timeout is 3 s


@pytest.mark.parametrize("id_", ["some", "partly"])
async def test_a_mixed_checkbox_checks_neither_checked_nor_unchecked(
    surface: WebSurface, id_: str
) -> None:
    """An indeterminate box (or `aria-checked="mixed"`): `unchecked` said yes to it."""
    box = await ref_of(surface, id_)
    answers = [await surface.check({"kind": k}, "ref", box) for k in ("checked", "unchecked")]
    assert [(a.ok, a.actual) for a in answers] == [(False, "mixed"), (False, "mixed")]
