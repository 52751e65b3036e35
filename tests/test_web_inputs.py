"""Inputs on a web page beyond plain fields: ranges (sliders, spin buttons, progress bars and
meters show their `numeric` value, and a native range or number input takes
`set_numeric_value`), editable elements (`contenteditable`), which are text fields, and
the relations between a field and what labels, describes or explains it."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from semledger.adapters import SessionInit
from semledger.adapters._web import WebBrowser, WebSurface
from semledger.hosts import SurfaceAgentHost
from semledger.runtime import (
    ActionKind,
    ByNodeId,
    Collection,
    ErrorCode,
    Full,
    Latest,
    Numeric,
    Receipt,
    Rejection,
    Relation,
    Role,
    SemanticsNode,
    SetNumericValue,
    SetText,
    SimpleAction,
)

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp
from served_pages import served

RANGES = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Ranges</title></head>
<body>
<label>Volume <input type="range" id="volume" min="0" max="10" step="2" value="4"></label>
<label>Guests <input type="number" id="guests" min="1" max="5" value="2"></label>
<label>Plain <input type="range" id="plain"></label>
<label>Locked <input type="range" id="locked" disabled value="30"></label>
<label>Upload <progress id="upload" max="200" value="50"></progress></label>
<label>Disk <meter id="disk" min="0" max="1" value="0.25"></meter></label>
<div role="slider" id="zoom" tabindex="0" aria-label="Zoom" aria-valuenow="150"
     aria-valuemin="50" aria-valuemax="400" aria-valuetext="150 %"></div>
<output id="said"></output>
<script>
  document.getElementById("volume").addEventListener("change", (e) => {
    document.getElementById("said").textContent = "volume changed to " + e.target.value;
  });
</script>
</body></html>
"""


EDITABLE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Editable</title></head>
<body>
<div contenteditable id="draft">Dear <b>Ada</b>,<div>see you soon</div></div>
<div contenteditable="plaintext-only" role="textbox" aria-label="Notes" aria-multiline="false"
     id="notes">one line</div>
<p id="typed">0 characters</p>
<script>
  document.getElementById("draft").addEventListener("input", (e) => {
    document.getElementById("typed").textContent = e.target.innerText.length + " characters";
  });
</script>
</body></html>
"""


RELATED = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Related</title></head>
<body>
<label for="email">Email</label>
<input id="email" aria-describedby="hint gone" aria-invalid="true" aria-errormessage="err"
       aria-controls="suggestions">
<span id="hint">We never share it</span>
<span id="err">Enter a whole address</span>
<ul id="suggestions" role="listbox" aria-label="Suggestions">
  <li role="option" id="first">ada@example.org</li>
</ul>
<div role="combobox" tabindex="0" aria-label="Pick" aria-activedescendant="first"></div>
<button aria-labelledby="save draft">x</button>
<span id="save">Save</span> <span id="draft">draft</span>
</body></html>
"""


COMBOS = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Combos</title></head>
<body>
<label>Search <input role="combobox" aria-expanded="false" aria-autocomplete="list"></label>
<label>City <input list="cities"></label>
<datalist id="cities"><option>Paris</option><option>Rome</option></datalist>
<label>Fixed <input role="combobox" readonly value="Oslo"></label>
<label>Size <select><option>S</option><option>M</option></select></label>
<div role="combobox" tabindex="0" aria-label="Picker">none</div>
<p id="typed">nothing typed</p>
<script>
  document.addEventListener("input", (e) => {
    document.getElementById("typed").textContent = "typed " + e.target.value;
  });
</script>
</body></html>
"""


TREE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Tree</title></head>
<body>
<ul role="tree" aria-label="Files">
  <li role="treeitem" id="src" aria-expanded="false"><span>src</span>
    <ul role="group" hidden><li role="treeitem" id="main">main.py</li>
      <li role="treeitem" id="util">util.py</li></ul></li>
  <li role="treeitem" id="readme">README</li>
</ul>
<script>
  src.addEventListener("click", (e) => {
    if (e.target.closest('[role="treeitem"]') !== src) return;  // a child item's click
    const open = src.getAttribute("aria-expanded") === "true";
    src.setAttribute("aria-expanded", String(!open));
    src.querySelector('[role="group"]').hidden = open;
  });
</script>
</body></html>
"""


SETS = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sets</title></head>
<body>
<ul aria-label="Steps"><li>Plan</li><li>Build</li><li>Ship</li></ul>
<div role="listbox" aria-label="Results">
  <div role="option" aria-setsize="100" aria-posinset="41">Result 41</div>
  <div role="option" aria-setsize="-1" aria-posinset="42">Result 42</div>
</div>
<div role="grid" aria-label="Sheet" aria-rowcount="500"><div role="row" aria-rowindex="7">
  <div role="gridcell" aria-colindex="3" aria-colspan="2">C7</div></div></div>
</body></html>
"""


CHOICES = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Choices</title></head>
<body>
<label>Toppings <select multiple>
  <option>Cheese</option><option>Olives</option><option>Basil</option></select></label>
<label>Size <select><option>S</option><option>M</option><option>L</option></select></label>
</body></html>
"""


GROUPED = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Grouped</title></head>
<body>
<label>Produce <select>
  <optgroup label="Fruits"><option>Apple</option><option>Pear</option></optgroup>
  <optgroup label="Veg"><option label="Kale">Kale (curly, from the farm)</option></optgroup>
</select></label>
</body></html>
"""


DATES = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Dates</title></head>
<body>
<label>Born <input type="date" value="1990-05-04"></label>
<label>At <input type="time" value="10:30"></label>
<label>Starts <input type="datetime-local" value="2024-01-02T09:00"></label>
<label>Month <input type="month" value="2024-01"></label>
<label>Week <input type="week" value="2024-W05"></label>
<label>Colour <input type="color" value="#336699"></label>
</body></html>
"""


DUE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Due date</title></head>
<body>
<button>First</button>
<label>Due <input type="date" id="due" value="2024-01-05"
  onchange="log.textContent += ' change:' + (this.value || 'EMPTY')"></label>
<p id="log">log:</p>
</body></html>
"""


SERVED = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Served</title></head>
<body>
<label>Volume <input type="range" id="volume" min="0" max="10" value="4"></label>
<label>Email <input id="email" aria-describedby="hint"></label>
<span id="hint">We never share it</span>
<button id="save" onclick="document.getElementById('n').textContent = '3'">Save</button>
<div role="status" id="saved">Saved <span id="n">0</span> items</div>
<iframe src="editable.html" title="Editor"></iframe>
</body></html>
"""
PAGES = {
    "ranges.html": RANGES,
    "editable.html": EDITABLE,
    "related.html": RELATED,
    "combos.html": COMBOS,
    "tree.html": TREE,
    "sets.html": SETS,
    "choices.html": CHOICES,
    "grouped.html": GROUPED,
    "dates.html": DATES,
    "due.html": DUE,
    "served.html": SERVED,
}


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served(tmp_path_factory.mktemp("inputs"), PAGES) as url:
        yield url


async def _host(browser: WebBrowser, url: str) -> AsyncIterator[SurfaceAgentHost]:
    surface = WebSurface({"browser": browser})
    await surface.open(SessionInit(base_url=url))
    yield SurfaceAgentHost(surface)
    await surface.close()


@pytest.fixture
async def ranges(browser: WebBrowser, pages: str) -> AsyncIterator[SurfaceAgentHost]:
    async for host in _host(browser, pages + "ranges.html"):
        yield host


@pytest.fixture
async def related(browser: WebBrowser, pages: str) -> AsyncIterator[SurfaceAgentHost]:
    async for host in _host(browser, pages + "related.html"):
        yield host


@pytest.fixture
async def editable(browser: WebBrowser, pages: str) -> AsyncIterator[SurfaceAgentHost]:
    async for host in _host(browser, pages + "editable.html"):
        yield host


async def _full(host: SurfaceAgentHost) -> Full:
    read = await host.read_semantics(None)
    assert isinstance(read, Full)
    return read


def _labelled(full: Full, label: str) -> SemanticsNode:
    """The control labelled `label`, not the text of its label."""
    return next(n for n in full.nodes if n.label == label and n.role is not Role.TEXT)


async def test_ranges_show_their_current_value_and_bounds(ranges: SurfaceAgentHost) -> None:
    full = await _full(ranges)
    numeric = {label: _labelled(full, label).numeric for label in ("Volume", "Guests", "Plain")}
    assert numeric == {
        "Volume": Numeric(4.0, 0.0, 10.0, 2.0, None),
        "Guests": Numeric(2.0, 1.0, 5.0, 1.0, None),
        "Plain": Numeric(50.0, 0.0, 100.0, 1.0, None),  # a range input's defaults
    }
    assert _labelled(full, "Upload").numeric == Numeric(50.0, 0.0, 200.0, None, None)
    assert _labelled(full, "Disk").numeric == Numeric(0.25, 0.0, 1.0, None, None)
    zoom = _labelled(full, "Zoom")
    assert zoom.role is Role.SLIDER
    assert zoom.numeric == Numeric(150.0, 50.0, 400.0, None, "150 %")


async def test_set_numeric_value_sets_a_native_range_as_a_user_would(
    ranges: SurfaceAgentHost,
) -> None:
    full = await _full(ranges)
    volume = _labelled(full, "Volume")
    assert ActionKind.SET_NUMERIC_VALUE in volume.actions
    receipt = await ranges.perform_action(ByNodeId(volume.node_id), SetNumericValue(8), Latest())
    assert isinstance(receipt, Receipt), receipt
    assert receipt.after == receipt.before + 1
    after = await _full(ranges)
    assert _labelled(after, "Volume").numeric == Numeric(8.0, 0.0, 10.0, 2.0, None)
    assert _labelled(after, "Volume").value == "8"
    assert any(n.value == "volume changed to 8" or n.label == "volume changed to 8"
               for n in after.nodes)  # fmt: skip

    guests = _labelled(after, "Guests")
    done = await ranges.perform_action(ByNodeId(guests.node_id), SetNumericValue(3), Latest())
    assert isinstance(done, Receipt), done
    assert _labelled(await _full(ranges), "Guests").numeric == Numeric(3.0, 1.0, 5.0, 1.0, None)


async def test_a_value_outside_the_range_is_rejected_and_nothing_changes(
    ranges: SurfaceAgentHost,
) -> None:
    full = await _full(ranges)
    guests = _labelled(full, "Guests")
    for value, why in ((9, "9 is above the maximum, 5"), (0.5, "0.5 is below the minimum, 1")):
        refused = await ranges.perform_action(
            ByNodeId(guests.node_id), SetNumericValue(value), Latest()
        )
        assert isinstance(refused, Rejection)
        assert (refused.code, refused.message) == (ErrorCode.HANDLER_REJECTED, why)
    after = await _full(ranges)
    assert after.generation == full.generation
    assert _labelled(after, "Guests").numeric == guests.numeric


async def test_a_value_between_the_steps_is_rejected_naming_the_nearest_allowed_values(
    ranges: SurfaceAgentHost,
) -> None:
    """A range would move to the nearer step unseen (the receipt would be for another value),
    a number input would hold an invalid value its form refuses."""
    full = await _full(ranges)
    volume, guests = _labelled(full, "Volume"), _labelled(full, "Guests")
    cases = (
        (volume, 5, "5 is between the range's steps: the nearest values are 4 and 6"),
        (guests, 2.5, "2.5 is between the number's steps: the nearest values are 2 and 3"),
    )
    for node, value, why in cases:
        refused = await ranges.perform_action(
            ByNodeId(node.node_id), SetNumericValue(value), Latest()
        )
        assert isinstance(refused, Rejection)
        assert (refused.code, refused.message) == (ErrorCode.HANDLER_REJECTED, why)
    after = await _full(ranges)
    assert after.generation == full.generation
    assert _labelled(after, "Volume").numeric == volume.numeric
    assert _labelled(after, "Guests").numeric == guests.numeric


async def test_only_a_range_the_page_lets_one_type_into_is_offered_set_numeric_value(
    ranges: SurfaceAgentHost,
) -> None:
    """An ARIA slider moves by its keys alone (increment, decrement); a disabled range
    input by none."""
    full = await _full(ranges)
    zoom, locked = _labelled(full, "Zoom"), _labelled(full, "Locked")
    assert ActionKind.SET_NUMERIC_VALUE not in zoom.actions
    assert ActionKind.INCREMENT in zoom.actions
    unavailable = await ranges.perform_action(
        ByNodeId(zoom.node_id), SetNumericValue(200), Latest()
    )
    assert isinstance(unavailable, Rejection)
    assert unavailable.code is ErrorCode.ACTION_UNAVAILABLE
    assert locked.state.disabled
    disabled = await ranges.perform_action(ByNodeId(locked.node_id), SetNumericValue(5), Latest())
    assert isinstance(disabled, Rejection)
    assert disabled.code is ErrorCode.TARGET_DISABLED
    assert ActionKind.SET_NUMERIC_VALUE not in _labelled(full, "Upload").actions
    stepped = await ranges.perform_action(
        ByNodeId(_labelled(full, "Volume").node_id), SimpleAction(ActionKind.INCREMENT), Latest()
    )
    assert isinstance(stepped, Receipt), stepped
    assert _labelled(await _full(ranges), "Volume").numeric == Numeric(6.0, 0.0, 10.0, 2.0, None)


async def test_an_editable_element_is_a_text_field_holding_its_text(
    editable: SurfaceAgentHost,
) -> None:
    """Its content is its value, not nodes of their own: what an agent edits is one field."""
    full = await _full(editable)
    fields = [n for n in full.nodes if n.role is Role.TEXT_FIELD]
    assert [(n.label, n.value, n.state.multiline) for n in fields] == [
        (None, "Dear Ada,\nsee you soon", True),
        ("Notes", "one line", False),
    ]
    assert all(ActionKind.SET_TEXT in n.actions for n in fields)
    assert not any(n.label in ("Ada", "see you soon") for n in full.nodes)


async def test_set_text_replaces_an_editable_elements_content_as_typing_would(
    editable: SurfaceAgentHost,
) -> None:
    full = await _full(editable)
    draft = next(n for n in full.nodes if n.role is Role.TEXT_FIELD and n.label is None)
    receipt = await editable.perform_action(ByNodeId(draft.node_id), SetText("Hi Bo"), Latest())
    assert isinstance(receipt, Receipt), receipt
    after = await _full(editable)
    kept = next(n for n in after.nodes if n.node_id == draft.node_id)
    assert (kept.role, kept.value) == (Role.TEXT_FIELD, "Hi Bo")
    assert any(n.label == "5 characters" for n in after.nodes)  # the page saw input events


async def test_a_combo_box_one_types_into_takes_set_text_and_a_list_of_choices_does_not(
    browser: WebBrowser, pages: str
) -> None:
    async for combos in _host(browser, pages + "combos.html"):
        full = await _full(combos)
        boxes = {n.label: n for n in full.nodes if n.role is Role.COMBO_BOX}
        offered = {label: ActionKind.SET_TEXT in n.actions for label, n in boxes.items()}
        assert offered == {
            "Search": True, "City": True, "Fixed": False, "Size": False, "Picker": False,
        }  # fmt: skip
        for label in ("Search", "City"):
            receipt = await combos.perform_action(
                ByNodeId(boxes[label].node_id), SetText("Par"), Latest()
            )
            assert isinstance(receipt, Receipt), receipt
            after = await _full(combos)
            assert next(n for n in after.nodes if n.node_id == boxes[label].node_id).value == "Par"
            assert any(n.label == "typed Par" for n in after.nodes)


async def test_a_tree_item_is_named_by_its_own_text_and_a_click_collapses_it_again(
    browser: WebBrowser, pages: str
) -> None:
    """An expanded item's centre is over its children: the click lands on its own text."""
    async for tree in _host(browser, pages + "tree.html"):
        (src,) = [n for n in (await _full(tree)).nodes if n.semantic_id == "src"]
        for kind in (ActionKind.EXPAND, ActionKind.COLLAPSE, ActionKind.EXPAND):
            receipt = await tree.perform_action(ByNodeId(src.node_id), SimpleAction(kind), Latest())
            assert isinstance(receipt, Receipt), receipt
            full = await _full(tree)
            item = next(n for n in full.nodes if n.node_id == src.node_id)
            assert (item.label, item.state.expanded) == ("src", kind is ActionKind.EXPAND)
        shown = [n for n in full.nodes if n.role is Role.TREE_ITEM]
        assert [(n.label, n.collection) for n in shown] == [
            ("src", Collection(set_size=2, set_position=1)),
            ("main.py", Collection(set_size=2, set_position=1)),
            ("util.py", Collection(set_size=2, set_position=2)),
            ("README", Collection(set_size=2, set_position=2)),
        ]


async def test_items_say_where_they_sit_in_their_set_and_cells_in_their_table(
    browser: WebBrowser, pages: str
) -> None:
    """Implicitly among their siblings, or as the page says (a list loaded as it scrolls
    shows a few of many, or does not know how many)."""
    async for sets in _host(browser, pages + "sets.html"):
        full = await _full(sets)
    by_label = {n.label: n.collection for n in full.nodes if n.label}
    assert [n.collection for n in full.nodes if n.role is Role.LIST_ITEM] == [
        Collection(set_size=3, set_position=1),
        Collection(set_size=3, set_position=2),
        Collection(set_size=3, set_position=3),
    ]
    assert by_label["Result 41"] == Collection(set_size=100, set_position=41)
    assert by_label["Result 42"] == Collection(set_size=None, set_position=42)
    assert by_label["Sheet"] == Collection(row_count=500)
    assert by_label["C7"] == Collection(column_index=3, column_span=2)
    assert by_label["Steps"] is None


async def test_select_adds_an_option_to_a_multiple_selects_choice_and_replaces_a_single_ones(
    browser: WebBrowser, pages: str
) -> None:
    async for choices in _host(browser, pages + "choices.html"):
        for label in ("Cheese", "Basil", "Basil", "S", "L"):
            full = await _full(choices)
            (option,) = [n for n in full.nodes if n.role is Role.OPTION and n.label == label]
            done = await choices.perform_action(
                ByNodeId(option.node_id), SimpleAction(ActionKind.SELECT), Latest()
            )
            assert isinstance(done, Receipt), done
        full = await _full(choices)
    chosen = [n.label for n in full.nodes if n.role is Role.OPTION and n.state.selected]
    assert chosen == ["Cheese", "Basil", "L"]


async def test_activate_toggles_an_option_of_a_multiple_select_where_select_only_adds(
    browser: WebBrowser, pages: str
) -> None:
    """An option once selected could never be deselected: select only adds (so a retry of
    it is safe). Activate, offered on an option of a multiple select alone, toggles it."""
    async for choices in _host(browser, pages + "choices.html"):
        found = await _options(choices)
        assert ActionKind.ACTIVATE in found["Cheese"].actions
        assert ActionKind.ACTIVATE not in found["S"].actions  # a single select's option
        for kind, label in ((ActionKind.SELECT, "Cheese"), (ActionKind.SELECT, "Olives"),
                            (ActionKind.ACTIVATE, "Cheese"), (ActionKind.ACTIVATE, "Basil")):
            option = (await _options(choices))[label]
            done = await choices.perform_action(
                ByNodeId(option.node_id), SimpleAction(kind), Latest()
            )
            assert isinstance(done, Receipt), done
        found = await _options(choices)
    toppings = ("Cheese", "Olives", "Basil")
    chosen = [label for label, n in found.items() if n.state.selected and label in toppings]
    assert chosen == ["Olives", "Basil"]


async def _options(host: SurfaceAgentHost) -> dict[str, SemanticsNode]:
    full = await _full(host)
    return {n.label: n for n in full.nodes if n.role is Role.OPTION}


async def test_an_option_group_and_an_option_are_named_by_their_label_attribute(
    browser: WebBrowser, pages: str
) -> None:
    """An <optgroup> has no name but its `label`; an <option>'s `label` is what its select
    shows for it, in place of its text."""
    async for grouped in _host(browser, pages + "grouped.html"):
        full = await _full(grouped)
        by_id = {n.node_id: n for n in full.nodes}
        produce = _labelled(full, "Produce")
        groups = [by_id[kid] for kid in produce.children]
        assert [(g.role, g.label) for g in groups] == [(Role.GROUP, "Fruits"), (Role.GROUP, "Veg")]
        assert [[by_id[kid].label for kid in g.children] for g in groups] == [
            ["Apple", "Pear"], ["Kale"]
        ]
        kale = by_id[groups[1].children[0]]
        done = await grouped.perform_action(
            ByNodeId(kale.node_id), SimpleAction(ActionKind.SELECT), Latest()
        )
        assert isinstance(done, Receipt), done
        assert _labelled(await _full(grouped), "Produce").value == "Kale"


async def test_text_a_date_or_time_field_cannot_hold_is_refused_naming_its_format(
    browser: WebBrowser, pages: str
) -> None:
    """The browser empties a date or time input given text not in its format (a color
    input turns black): a receipt would have the form sent without the value."""
    cases = (
        (
            "Born",
            "31/01/2000",
            "'31/01/2000' does not fit the date field: it takes a date as YYYY-MM-DD",
        ),
        ("At", "7pm", "'7pm' does not fit the time field: it takes a time as HH:MM or HH:MM:SS"),
        (
            "Starts",
            "tomorrow",
            "'tomorrow' does not fit the datetime-local field: it takes a"
            " date and time as YYYY-MM-DDTHH:MM or YYYY-MM-DDTHH:MM:SS",
        ),
        (
            "Month",
            "Jan 2024",
            "'Jan 2024' does not fit the month field: it takes a month as YYYY-MM",
        ),
        ("Week", "2024-05", "'2024-05' does not fit the week field: it takes a week as YYYY-Www"),
        ("Colour", "blue", "'blue' does not fit the color field: it takes a color as #rrggbb"),
    )
    async for dates in _host(browser, pages + "dates.html"):
        full = await _full(dates)
        for label, text, why in cases:
            refused = await dates.perform_action(
                ByNodeId(_labelled(full, label).node_id), SetText(text), Latest()
            )
            assert isinstance(refused, Rejection), (label, refused)
            assert (refused.code, refused.message) == (ErrorCode.HANDLER_REJECTED, why)
        after = await _full(dates)
        for label, _, _ in cases:
            assert _labelled(after, label).value == _labelled(full, label).value, label
        born = _labelled(after, "Born")
        done = await dates.perform_action(ByNodeId(born.node_id), SetText("2000-01-31"), Latest())
        assert isinstance(done, Receipt), done
        assert _labelled(await _full(dates), "Born").value == "2000-01-31"


async def test_a_date_or_time_in_its_fields_format_that_does_not_exist_is_refused_saying_so(
    browser: WebBrowser, pages: str
) -> None:
    """2024-02-30 is written as a date field takes it: naming the format would send the
    agent looking for a fault the text does not have."""
    cases = (
        ("Born", "2024-02-30", "date"),
        ("At", "24:00", "time"),
        ("Starts", "2024-02-28T24:00", "date and time"),
        ("Month", "2024-13", "month"),
        ("Week", "2023-W53", "week"),
    )
    async for dates in _host(browser, pages + "dates.html"):
        full = await _full(dates)
        for label, text, noun in cases:
            field = _labelled(full, label)
            refused = await dates.perform_action(ByNodeId(field.node_id), SetText(text), Latest())
            assert isinstance(refused, Rejection), (label, refused)
            kind = "datetime-local" if noun == "date and time" else noun
            why = f"{text!r} does not fit the {kind} field: there is no such {noun}"
            assert (refused.code, refused.message) == (ErrorCode.HANDLER_REJECTED, why)
        after = await _full(dates)
        for label, _, _ in cases:
            assert _labelled(after, label).value == _labelled(full, label).value, label


async def test_a_refused_date_leaves_the_field_its_focus_and_the_generation_as_they_were(
    browser: WebBrowser, pages: str
) -> None:
    """SPEC 2.6: a rejection changes nothing. set_text clears, then types: a date field
    emptied before the text was found not to fit had its change handler see it empty (a
    page saving on change saved no date), and took the focus."""
    async for due in _host(browser, pages + "due.html"):
        full = await _full(due)
        first = _labelled(full, "First")
        await due.perform_action(ByNodeId(first.node_id), SimpleAction(ActionKind.FOCUS), Latest())
        before = await _full(due)
        field = _labelled(before, "Due")
        refused = await due.perform_action(ByNodeId(field.node_id), SetText("2024-13-01"), Latest())
        assert isinstance(refused, Rejection), refused
        after = await _full(due)
        assert (after.generation, after.focused) == (before.generation, first.node_id)
        assert [n.label for n in after.nodes if n.label and n.label.startswith("log")] == ["log:"]
        for text in ("2024-02-01", ""):
            done = await due.perform_action(ByNodeId(field.node_id), SetText(text), Latest())
            assert isinstance(done, Receipt), done
        after = await _full(due)
    assert _labelled(after, "Due").value is None
    assert after.focused == field.node_id
    said = [n.label for n in after.nodes if n.label and n.label.startswith("log")]
    assert said == ["log: change:2024-02-01 change:EMPTY"]


async def test_a_date_field_cleared_reads_empty_to_whatever_asks_next(
    browser: WebBrowser, pages: str
) -> None:
    """A clear with no text to set after it (set_text "", a direct caller) empties a date
    field then and there."""
    surface = WebSurface({"browser": browser})
    await surface.open(SessionInit(base_url=pages + "due.html"))
    try:
        (due,) = await surface.locate({"by": "id", "value": "due"})
        await surface.act("clear", due)
        assert await surface.read("value", due) == ""
    finally:
        await surface.close()


async def test_a_fields_relations_point_at_the_nodes_holding_its_hint_and_error(
    related: SurfaceAgentHost,
) -> None:
    """aria-describedby, -errormessage, -controls, -activedescendant and -labelledby become
    the node's relations; an element one points at is a node of its own, holding its text;
    an id naming nothing is left out."""
    full = await _full(related)
    by_id = {n.node_id: n for n in full.nodes}

    def holding(text: str) -> int:
        """The node whose text child says `text`."""
        return next(
            n.node_id for n in full.nodes if any(by_id[c].label == text for c in n.children)
        )

    email = next(n for n in full.nodes if n.role is Role.TEXT_FIELD)
    suggestions = next(n for n in full.nodes if n.label == "Suggestions")
    assert email.relations == (
        (Relation.DESCRIBED_BY, (holding("We never share it"),)),
        (Relation.CONTROLS, (suggestions.node_id,)),
        (Relation.ERROR_MESSAGE, (holding("Enter a whole address"),)),
    )
    option = next(n for n in full.nodes if n.role is Role.OPTION)
    pick = next(n for n in full.nodes if n.label == "Pick")
    assert pick.relations == ((Relation.ACTIVE_DESCENDANT, (option.node_id,)),)
    button = next(n for n in full.nodes if n.role is Role.BUTTON)
    assert button.label == "Save draft"
    assert button.relations == ((Relation.LABELLED_BY, (holding("Save"), holding("draft"))),)


def test_the_log_serves_ranges_relations_frames_and_announcements_as_the_page_showed_them(
    pages: str, tmp_path: Path
) -> None:
    """SPEC 4: read_semantics from the log alone is what the live bridge answered, with
    what the page now tells an agent (numeric, relations, an iframe's content, an atomic
    region's announcement)."""
    db = tmp_path / "web.db"
    server = subprocess.Popen(
        [*mcp.COMMAND, "serve", "--adapter", "web", "--url", pages + "served.html",
         "--db", str(db), "--session", "web"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env=mcp.env(),
    )  # fmt: skip
    try:
        first = mcp.ask(server, mcp.read(1))["value"]
        assert mcp.ask(server, mcp.perform(2, "save"))["ok"]
        delta = mcp.ask(server, mcp.read(3, first["generation"]))["value"]
        last = mcp.ask(server, mcp.read(4))["value"]
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=60)
    by_id = {n["semantic_id"]: n for n in first["nodes"]}
    assert by_id["volume"]["numeric"]["max"] == 10
    assert by_id["email"]["relations"]["described_by"]
    assert any("Dear Ada" in (n["value"] or "") for n in first["nodes"])  # in the iframe
    assert [(a["atomic"], a["text"]) for a in delta["announcements"]] == [(True, "Saved 3 items")]
    for read, generation in ((first, first["generation"]), (last, last["generation"])):
        logged = mcp.cli_in_process(
            "read", "web", "--db", str(db), "--generation", generation, "--json"
        )
        assert logged.returncode == 0, logged.stderr
        assert json.loads(logged.stdout) == read
