"""What a node of a web page served to agents offers, and where the keys its actions press
go: into the node, never to whatever element has the focus."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import trio

from semledger.adapters import ActionabilityError
from semledger.adapters._web import WebBrowser, WebSurface
from semledger.hosts import SurfaceAgentHost
from semledger.runtime import (
    ActionKind,
    BySemanticId,
    Checked,
    ErrorCode,
    Full,
    Latest,
    Receipt,
    Rejection,
    SemanticId,
    SemanticsAction,
    SemanticsNode,
    SetText,
    SimpleAction,
)

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from served_pages import HANG_GUARD_S, full_read, open_host, surface_on, written

PAGES = {
    "keys.html": """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Keys</title></head><body>
<input type="search" id="q" aria-label="Search">
<input type="number" id="qty" aria-label="Quantity" value="5">
<div role="dialog" id="banner" aria-label="Cookie banner">
  <p>We use cookies</p><a href="#details">Details</a>
</div>
<div role="dialog" id="notice" aria-label="Notice"><p>Nothing to focus in here</p></div>
<div role="slider" id="vol" aria-label="Volume" aria-valuemin="0" aria-valuemax="10"
     aria-valuenow="3"></div>
<div role="slider" id="zoom" tabindex="0" aria-label="Zoom" aria-valuemin="0"
     aria-valuemax="10" aria-valuenow="3"></div>
<script>
  for (const id of ["banner", "notice"]) document.getElementById(id).addEventListener(
    "keydown", (e) => { if (e.key === "Escape") e.currentTarget.remove(); });
  for (const id of ["vol", "zoom"]) document.getElementById(id).addEventListener(
    "keydown", (e) => {
      const step = {ArrowUp: 1, ArrowDown: -1}[e.key];
      if (step === undefined) return;
      const s = e.currentTarget;
      s.setAttribute("aria-valuenow", String(+s.getAttribute("aria-valuenow") + step));
      e.preventDefault();
    });
</script>
</body></html>
""",
    "widgets.html": """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Widgets</title></head><body>
<label for="city">City</label>
<input id="city" role="combobox" aria-autocomplete="list" aria-expanded="false"
       aria-controls="cities">
<ul role="listbox" id="cities" hidden></ul>
<table aria-label="Fruit"><tr id="head"><th>Name</th><th>Qty</th></tr>
  <tr id="apples"><td id="apple">Apples</td><td>3</td></tr></table>
<div role="grid" aria-label="Orders">
  <div role="row" id="order1" aria-selected="false">
    <span role="gridcell" id="order1-id">A-1</span>
  </div>
</div>
<div role="listbox" id="fruit" aria-label="Fruit choice" tabindex="0">
  <div role="option" id="pear" aria-selected="true">Pear</div>
</div>
<div role="tablist" aria-label="Sections">
  <button role="tab" id="tab1" aria-selected="true">First</button>
  <button role="tab" id="tab2" aria-selected="false" tabindex="-1">Second</button>
</div>
<div role="slider" id="vol" aria-label="Volume" aria-valuenow="3"></div>
<div role="button" id="fake" aria-label="Not focusable"></div>
<button id="gone" disabled>Disabled</button>
<iframe id="frame" title="Inner" srcdoc="<button data-testid='inner'>Inside</button>"></iframe>
<script>
  const city = document.getElementById("city"), cities = document.getElementById("cities");
  function show(open) { cities.hidden = !open; city.setAttribute("aria-expanded", String(open)); }
  city.addEventListener("input", () => {
    cities.innerHTML = "";
    const shown = ["Berlin", "Bern", "Boston"].filter((c) => c.startsWith(city.value));
    for (const c of shown) {
      const li = document.createElement("li");
      li.setAttribute("role", "option");
      li.textContent = c;
      cities.append(li);
    }
    show(cities.children.length > 0);
  });
  city.addEventListener("keydown", (e) => { if (e.key === "Escape") show(false); });
</script>
</body></html>
""",
    "checks.html": """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Checks</title><style>
.visually-hidden { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px;
  overflow: hidden; clip: rect(0, 0, 0, 0); white-space: nowrap; border: 0; }
.btn-check { position: absolute; clip: rect(0, 0, 0, 0); pointer-events: none; }
.btn { display: inline-block; padding: 6px 12px; border: 1px solid #333; }
</style></head><body>
<label><input type="checkbox" id="news" class="visually-hidden"><span>Newsletter</span></label>
<p><input type="checkbox" class="btn-check" id="bold"><label class="btn" for="bold">Bold</label></p>
</body></html>
""",
    "combo.html": """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Combo</title></head><body>
<label for="town">Town</label>
<input id="town" role="combobox" aria-autocomplete="list" aria-expanded="false"
       aria-controls="towns">
<ul role="listbox" id="towns" aria-label="Towns" hidden>
  <li role="option" id="paris" aria-selected="false">Paris</li></ul>
<script>
  const town = document.getElementById("town"), towns = document.getElementById("towns");
  town.addEventListener("keydown", (e) => {
    if (e.key !== "ArrowDown") return;
    towns.hidden = false;
    town.setAttribute("aria-expanded", "true");
  });
</script>
</body></html>
""",
}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> str:
    return written(tmp_path_factory.mktemp("offers"), PAGES)


@pytest.fixture
async def surface(browser: WebBrowser) -> AsyncIterator[WebSurface]:
    async with surface_on(browser) as opened:
        yield opened


@pytest.fixture
async def widgets(surface: WebSurface, site: str) -> SurfaceAgentHost:
    return await open_host(surface, site + "widgets.html")


@pytest.fixture
async def keys(surface: WebSurface, site: str) -> SurfaceAgentHost:
    return await open_host(surface, site + "keys.html")


def _node(full: Full, semantic_id: str) -> SemanticsNode | None:
    return next((n for n in full.nodes if n.semantic_id == semantic_id), None)


def _shown(full: Full, semantic_id: str) -> SemanticsNode:
    node = _node(full, semantic_id)
    assert node is not None, f"no node {semantic_id} in {[n.semantic_id for n in full.nodes]}"
    return node


async def _perform(
    host: SurfaceAgentHost, semantic_id: str, action: SemanticsAction
) -> Receipt | Rejection:
    with trio.fail_after(HANG_GUARD_S):
        return await host.perform_action(BySemanticId(SemanticId(semantic_id)), action, Latest())


async def _done(host: SurfaceAgentHost, semantic_id: str, action: SemanticsAction) -> Receipt:
    outcome = await _perform(host, semantic_id, action)
    assert isinstance(outcome, Receipt), outcome
    return outcome


async def test_dismiss_presses_escape_in_a_dialog_that_takes_no_focus_not_in_the_focused_field(
    keys: SurfaceAgentHost,
) -> None:
    await _done(keys, "q", SetText("my query"))
    await _done(keys, "banner", SimpleAction(ActionKind.DISMISS))
    after = await full_read(keys)
    assert _node(after, "banner") is None  # its Escape handler heard the key
    assert _shown(after, "q").value == "my query"  # a search field Escape reaches is cleared


async def test_dismiss_on_a_dialog_nothing_in_which_takes_the_focus_is_refused_and_moves_no_key(
    keys: SurfaceAgentHost,
) -> None:
    await _done(keys, "q", SetText("my query"))
    before = await full_read(keys)
    refused = await _perform(keys, "notice", SimpleAction(ActionKind.DISMISS))
    assert isinstance(refused, Rejection), refused
    assert refused.code is ErrorCode.HANDLER_REJECTED
    notice = _shown(before, "notice").node_id
    assert refused.message == (
        f"node {notice} takes no keyboard focus, nor does anything in it: Escape would reach"
        " another element"
    )
    after = await full_read(keys)
    assert after.generation == before.generation
    assert _shown(after, "q").value == "my query"
    assert _shown(after, "q").state.focused


async def test_a_slider_that_takes_no_focus_offers_no_increment_and_the_focused_field_keeps_it(
    keys: SurfaceAgentHost,
) -> None:
    await _done(keys, "qty", SimpleAction(ActionKind.FOCUS))
    shown = await full_read(keys)
    volume = _shown(shown, "vol")
    assert ActionKind.INCREMENT not in volume.actions
    assert ActionKind.DECREMENT not in volume.actions
    refused = await _perform(keys, "vol", SimpleAction(ActionKind.INCREMENT))
    assert isinstance(refused, Rejection), refused
    assert refused.code is ErrorCode.ACTION_UNAVAILABLE
    after = await full_read(keys)
    assert _shown(after, "qty").value == "5"
    assert _shown(after, "vol").numeric == volume.numeric


async def test_increment_on_a_slider_reaches_it_while_another_field_has_the_focus(
    keys: SurfaceAgentHost,
) -> None:
    await _done(keys, "qty", SimpleAction(ActionKind.FOCUS))
    await _done(keys, "zoom", SimpleAction(ActionKind.INCREMENT))
    after = await full_read(keys)
    zoom = _shown(after, "zoom")
    assert zoom.numeric is not None
    assert zoom.numeric.current == 4.0
    assert _shown(after, "qty").value == "5"


async def test_press_on_an_element_that_takes_no_focus_is_refused_not_sent_to_the_focused_one(
    surface: WebSurface, site: str
) -> None:
    host = await open_host(surface, site + "keys.html")
    await _done(host, "qty", SimpleAction(ActionKind.FOCUS))
    refs = {n.native.get("id"): n.ref for n in (await surface.snapshot()).nodes}
    with pytest.raises(ActionabilityError, match="takes no keyboard focus"):
        await surface.act("press", refs["vol"], {"key": "ArrowUp"})
    assert await surface.read("value", refs["qty"]) == "5"


async def test_collapse_on_a_combo_box_presses_escape_in_it_and_closes_its_list(
    widgets: SurfaceAgentHost,
) -> None:
    await _done(widgets, "city", SetText("Ber"))
    shown = await full_read(widgets)
    city = _shown(shown, "city")
    assert city.state.expanded is True
    assert ActionKind.COLLAPSE in city.actions
    await _done(widgets, "city", SimpleAction(ActionKind.COLLAPSE))
    after = await full_read(widgets)
    assert _shown(after, "city").state.expanded is False  # a click lands in its text
    assert _node(after, "cities") is None
    assert _shown(after, "city").value == "Ber"


@pytest.mark.parametrize("box", ["news", "bold"])
async def test_activate_on_a_checkbox_hidden_under_its_label_clicks_the_label_and_checks_it(
    surface: WebSurface, site: str, box: str
) -> None:
    checks = await open_host(surface, site + "checks.html")
    assert ActionKind.ACTIVATE in _shown(await full_read(checks), box).actions
    await _done(checks, box, SimpleAction(ActionKind.ACTIVATE))
    assert _shown(await full_read(checks), box).state.checked is Checked.CHECKED


async def test_expand_on_a_combo_box_one_types_into_presses_arrow_down_and_opens_its_list(
    surface: WebSurface, site: str
) -> None:
    combo = await open_host(surface, site + "combo.html")
    town = _shown(await full_read(combo), "town")
    assert town.state.expanded is False
    assert ActionKind.EXPAND in town.actions
    await _done(combo, "town", SimpleAction(ActionKind.EXPAND))
    after = await full_read(combo)
    assert _shown(after, "town").state.expanded is True
    assert _shown(after, "paris").label == "Paris"


async def test_expand_on_a_combo_box_the_keys_do_not_open_is_refused_not_a_receipt(
    widgets: SurfaceAgentHost,
) -> None:
    assert ActionKind.EXPAND in _shown(await full_read(widgets), "city").actions
    refused = await _perform(widgets, "city", SimpleAction(ActionKind.EXPAND))
    assert isinstance(refused, Rejection), refused
    assert refused.code is ErrorCode.HANDLER_REJECTED
    assert "did not expand" in refused.message
    assert _shown(await full_read(widgets), "city").state.expanded is False


async def test_a_static_tables_rows_and_cells_offer_no_select_and_a_grids_do(
    widgets: SurfaceAgentHost,
) -> None:
    full = await full_read(widgets)
    for static in ("head", "apples", "apple"):
        assert ActionKind.SELECT not in _shown(full, static).actions, static
    refused = await _perform(widgets, "apple", SimpleAction(ActionKind.SELECT))
    assert isinstance(refused, Rejection), refused
    assert refused.code is ErrorCode.ACTION_UNAVAILABLE
    for selectable in ("order1", "order1-id", "pear", "tab1"):
        assert ActionKind.SELECT in _shown(full, selectable).actions, selectable


async def test_focus_is_offered_exactly_on_the_elements_that_take_the_focus(
    widgets: SurfaceAgentHost,
) -> None:
    full = await full_read(widgets)
    offered = {
        semantic_id: ActionKind.FOCUS in _shown(full, semantic_id).actions
        for semantic_id in (
            "city", "fruit", "tab1", "tab2", "vol", "fake", "gone", "apple", "frame", "inner"
        )
    }
    assert offered == {
        "city": True,
        "fruit": True,  # a listbox with a tabindex
        "tab1": True,
        "tab2": True,  # tabindex -1: out of the tab order, focused by its tab list
        "vol": False,  # no tabindex: focus() leaves the focus where it is
        "fake": False,
        "gone": False,
        "apple": False,
        "frame": False,  # focus() puts it in the frame's document, on no element of it
        "inner": True,
    }
    await _done(widgets, "tab2", SimpleAction(ActionKind.FOCUS))
    assert _shown(await full_read(widgets), "tab2").state.focused
    refused = await _perform(widgets, "vol", SimpleAction(ActionKind.FOCUS))
    assert isinstance(refused, Rejection), refused
    assert refused.code is ErrorCode.ACTION_UNAVAILABLE


async def test_focus_on_an_element_that_cannot_take_it_is_refused_not_answered_as_done(
    surface: WebSurface, site: str
) -> None:
    await open_host(surface, site + "widgets.html")
    refs = {n.native.get("id"): n.ref for n in (await surface.snapshot()).nodes}
    with pytest.raises(ActionabilityError, match="cannot take the keyboard focus"):
        await surface.act("focus", refs["vol"])
    await surface.act("focus", refs["fruit"])
