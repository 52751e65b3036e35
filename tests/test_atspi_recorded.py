"""The atspi adapter over recorded AT-SPI trees: mapping, refs, state inversion, action
choice and refusals, with no display (the trees are in adapters/fixtures/)."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from semledger.adapters import (
    ARIA_ROLES,
    ActionabilityError,
    DataError,
    LocateError,
    NavigationError,
    SessionError,
    SessionInit,
    snapshot_problems,
)
from semledger.adapters import _atspi_map as amap
from semledger.adapters._atspi import KEYSYMS, AtspiSurface
from semledger.adapters._atspi_dbus import ApplicationGoneError, BusCallError
from semledger.adapters._atspi_recorded import RecordedBackend, load_recording
from semledger.hosts import SurfaceAgentHost
from semledger.hosts._surface_host import _node as _bridge_node
from semledger.runtime import (
    ActionKind,
    ByNodeId,
    Checked,
    Full,
    Latest,
    Receipt,
    Rejection,
    Role,
    SemanticsNode,
    SetNumericValue,
    SetText,
    SimpleAction,
)

FIXTURE_APP = "semledger-gtk-fixture"


async def _open(name: str = "gtk_fixture") -> tuple[AtspiSurface, RecordedBackend]:
    recording = load_recording(name)
    backend = RecordedBackend(recording)
    surface = AtspiSurface({"settle_ms": 0}, backend=backend)
    await surface.open(SessionInit(process_name=recording["application"]["name"]))
    return surface, backend


async def _ref(surface: AtspiSurface, ident: str) -> str:
    [ref] = await surface.locate({"by": "automationId", "value": ident})
    return ref


def _path(backend: RecordedBackend, ident: str) -> str:
    return next(n.path for n in backend.nodes if n.accessible_id == ident)


@given(st.sets(st.sampled_from(amap.STATE_NAMES[1:])))
def test_state_words_round_trip_through_the_wire_form(names: set[str]) -> None:
    assert amap.state_names(amap.state_words(names)) == names


def test_role_numbers_map_through_the_atspi_enum_to_aria() -> None:
    assert amap.role_name(43) == "push button"
    assert amap.role_name(amap.role_number("check box")) == "check box"
    assert amap.role_name(10_000) == "unknown"
    raw = amap.RawNode(path="/p", role=amap.role_number("push button"), depth=0)
    assert amap.aria_role(raw) == "button"
    assert amap.aria_role(amap.RawNode(path="/p", role=amap.role_number("canvas"), depth=0)) == (
        "generic"
    )


def test_a_gtk_text_with_editable_text_is_a_textbox_and_a_status_bar_a_status() -> None:
    text = amap.role_number("text")
    entry = amap.RawNode(path="/e", role=text, depth=0, interfaces=("EditableText", "Text"))
    label_like = amap.RawNode(path="/t", role=text, depth=0, interfaces=("Text",))
    status = amap.RawNode(path="/s", role=amap.role_number("status bar"), depth=0)
    assert (amap.aria_role(entry), amap.aria_role(label_like)) == ("textbox", "text")
    assert amap.aria_role(status) == "status"


def _raw(role: str, states: set[str], interfaces: tuple[str, ...] = ()) -> amap.RawNode:
    return amap.RawNode(
        path="/n",
        role=amap.role_number(role),
        depth=1,
        states=amap.state_words(states),
        interfaces=interfaces,
    )


SHOWN = {"showing", "visible", "sensitive", "enabled"}


def test_inverted_states_are_normalised() -> None:
    assert amap.node_states(_raw("push button", {"showing", "visible"})) == ("disabled",)
    entry = _raw("entry", SHOWN, ("EditableText", "Text"))
    assert amap.node_states(entry) == ("readonly",)
    assert amap.node_states(_raw("entry", SHOWN | {"editable"}, ("EditableText",))) == ()
    assert amap.node_states(_raw("check box", SHOWN)) == ("unchecked",)
    assert amap.node_states(_raw("check box", SHOWN | {"checked"})) == ("checked",)
    assert amap.node_states(_raw("toggle button", SHOWN | {"pressed"})) == ("checked",)
    assert amap.node_states(_raw("tree item", SHOWN | {"expandable"})) == ("collapsed",)
    assert amap.node_states(_raw("tree item", SHOWN | {"expandable", "expanded"})) == ("expanded",)
    assert amap.node_states(_raw("label", {"sensitive", "visible"})) == ("hidden",)
    assert amap.node_states(
        _raw("entry", SHOWN | {"editable", "focused", "required"}, ("EditableText",))
    ) == ("focused", "required")
    assert amap.node_states(_raw("application", set())) == ()


def _agents_node(raw: amap.RawNode) -> SemanticsNode:
    return _bridge_node(amap.to_snapshot_node(raw, "a1", None, 0), 1, ())


def test_an_agent_sees_what_the_state_words_cannot_say() -> None:
    password = _agents_node(_raw("password text", SHOWN | {"editable"}, ("EditableText",)))
    assert password.state.password  # so the log redacts what is typed into it
    # GTK's inconsistent check box or radio, drawn as a dash, whether or not also checked
    for states in (set(), {"checked"}):
        mixed = _agents_node(_raw("radio button", SHOWN | {"indeterminate"} | states))
        assert mixed.state.checked is Checked.MIXED
    notes = _agents_node(
        _raw("text", SHOWN | {"editable", "multi-line"}, ("EditableText", "Text"))
    )
    assert notes.state.multiline
    assert ActionKind.SUBMIT not in notes.actions  # Enter starts a new line
    assert ActionKind.SET_TEXT in notes.actions
    line = _agents_node(_raw("text", SHOWN | {"editable", "single-line"}, ("EditableText",)))
    assert not line.state.multiline
    assert ActionKind.SUBMIT in line.actions
    assert _agents_node(_raw("dialog", SHOWN | {"modal"})).state.modal
    assert _agents_node(_raw("entry", SHOWN | {"invalid-entry"}, ("EditableText",))).state.invalid


def test_a_message_dialog_or_a_file_chooser_window_is_a_dialog_and_a_menu_bar_a_group() -> None:
    """GTK gives a message dialog the role ``alert`` and a file chooser dialog ``file
    chooser``: the agent saw a plain group, with no dismiss, in front of the window it
    hides; a menu bar was a menu offering activate and dismiss, which it has not."""
    for role in ("alert", "file chooser"):
        window = attrs.evolve(_raw(role, SHOWN | {"modal"}), parent=amap.ROOT_PATH)
        dialog = _agents_node(window)
        assert (dialog.role, dialog.state.modal) == (Role.DIALOG, True)
        assert ActionKind.DISMISS in dialog.actions
        embedded = _agents_node(attrs.evolve(window, parent="/a/window"))
        assert embedded.role is not Role.DIALOG  # a file chooser widget in a form
    menubar = _agents_node(_raw("menu bar", SHOWN))
    assert (menubar.role, menubar.actions) == (Role.GROUP, ())


def test_a_scroll_pane_is_a_scroll_view_offering_scroll() -> None:
    """ARIA has no role for a scroll pane: it came through as a group offering nothing."""
    pane = _agents_node(_raw("scroll pane", SHOWN))
    assert (pane.role, pane.actions) == (Role.SCROLL_VIEW, (ActionKind.SCROLL,))


def test_a_row_of_a_list_scrolled_partly_out_of_view_is_counted_among_all_its_rows() -> None:
    """GTK keeps the rows scrolled out of a list's view in the tree, not showing: the agent,
    shown only the others, read the first shown row as ``[1 of 5]`` of a list of 30."""
    scrolled_out = {"visible", "sensitive", "enabled"}
    rows = [
        ("list item", scrolled_out),
        ("list item", SHOWN),
        ("list item", SHOWN),
        ("list item", scrolled_out),
        ("list item", {"sensitive", "enabled"}),  # a row its application hid: not in the set
    ]
    pane = attrs.evolve(_raw("scroll pane", SHOWN), path="/pane", depth=0)
    listbox = attrs.evolve(_raw("list box", SHOWN), path="/list", depth=1)
    raws = [pane, listbox] + [
        attrs.evolve(_raw(role, states), path=f"/row{i}", depth=2)
        for i, (role, states) in enumerate(rows)
    ]
    places = amap.set_places(raws)
    assert places == {"/row1": (2, 4), "/row2": (3, 4)}
    shown = amap.to_snapshot_node(raws[4], "a4", "a1", 1, places["/row2"])
    row = _bridge_node(shown, 4, (), in_set=(2, 2))  # what the bridge counts: 2 of 2 shown
    assert row.collection is not None
    assert (row.collection.set_position, row.collection.set_size) == (3, 4)
    assert amap.set_places([pane, listbox, raws[3], raws[4]]) == {}  # all shown: the bridge's


def test_rows_a_list_filtered_out_outside_a_scroll_pane_are_no_members_of_its_set() -> None:
    """A list box's filter leaves its other rows visible but not showing, as scrolled-out
    ones are: a list showing 3 of 30 rows said [1 of 30], [11 of 30], [21 of 30]."""
    filtered = {"visible", "sensitive", "enabled"}
    listbox = attrs.evolve(_raw("list box", SHOWN), path="/list", depth=0)
    raws = [listbox] + [
        attrs.evolve(_raw("list item", SHOWN if i % 2 else filtered), path=f"/row{i}", depth=1)
        for i in range(6)
    ]
    assert amap.set_places(raws) == {}  # the bridge counts the shown ones: 1 to 3 of 3


def test_a_combo_box_is_not_named_by_its_selection() -> None:
    """GTK and Qt name a combo box by the item it shows: with no label, the agent read
    the value twice, as label and as value."""
    combo = attrs.evolve(_raw("combo box", SHOWN, ("Selection",)), name="Boston")
    node = _agents_node(combo)
    assert (node.label, node.value) == (None, "Boston")


def test_names_fall_back_to_the_description_then_the_text_but_never_an_inputs_value() -> None:
    label = amap.RawNode(path="/l", role=amap.role_number("label"), depth=0, text="Hi")
    described = amap.RawNode(path="/d", role=amap.role_number("icon"), depth=0, description="Logo")
    entry = amap.RawNode(
        path="/e",
        role=amap.role_number("entry"),
        depth=0,
        text="typed",
        interfaces=("EditableText",),
    )
    assert amap.display_name(label) == "Hi"
    assert amap.display_name(described) == "Logo"
    assert (amap.display_name(entry), amap.value_of(entry)) == (None, "typed")


def test_automation_id_prefers_the_accessible_id_then_the_gtk_then_the_qt_attribute() -> None:
    base = amap.RawNode(path="/n", role=1, depth=0)
    assert amap.automation_id(base) is None
    qt = amap.RawNode(path="/n", role=1, depth=0, attributes={"id": "qt-id"})
    gtk = amap.RawNode(path="/n", role=1, depth=0, attributes={"accessible-id": "g", "id": "q"})
    assert (amap.automation_id(qt), amap.automation_id(gtk)) == ("qt-id", "g")


def test_action_choice_prefers_the_fitting_name_case_insensitively() -> None:
    assert amap.choose_action(["Press", "Click"], "click") == 1
    assert amap.choose_action(["activate"], "click") == 0
    assert amap.choose_action(["Activate", "click"], "submit") == 0
    assert amap.choose_action(["toggle", "click"], "setChecked") == 0
    assert amap.choose_action(["menu"], "click") is None


async def test_recorded_fixture_snapshot_maps_roles_ids_and_states() -> None:
    surface, _backend = await _open()
    snap = await surface.snapshot()
    assert snapshot_problems(snap) == []
    by_id = {n.native.get("automationId"): n for n in snap.nodes}
    assert by_id["greet"].role == "button"
    assert by_id["greet"].name == "Greet"
    assert by_id["disabled-button"].states == ("disabled",)
    assert by_id["code"].role == "textbox"
    assert by_id["code"].states == ("readonly",)
    assert by_id["code"].value == "XK-42"
    assert by_id["agree"].states == ("unchecked",)
    assert by_id["count"].role == "spinbutton"
    assert by_id["count"].value == "3"
    assert by_id["colour"].role == "combobox"
    assert by_id["main-window"].role == "window"
    menu_items = [n for n in snap.nodes if n.role == "menuitem"]
    assert [n.name for n in menu_items] == ["Red", "Green", "Blue"]
    assert all("hidden" in n.states and f"ref={n.ref}]" not in snap.text for n in menu_items)
    assert snap.text.splitlines()[0] == f'- application "{FIXTURE_APP}" [ref={snap.ref}]'


async def test_the_widget_factory_tree_keeps_every_node_with_aria_roles_only() -> None:
    surface, backend = await _open("widget_factory")
    snap = await surface.snapshot()
    assert len(snap.nodes) == len(backend.nodes) > 200
    assert {n.role for n in snap.nodes} <= set(ARIA_ROLES)
    assert snapshot_problems(snap) == []


async def test_refs_are_stable_across_snapshots_and_opaque() -> None:
    surface, _backend = await _open()
    first = await surface.snapshot()
    second = await surface.snapshot()
    assert [n.ref for n in first.nodes] == [n.ref for n in second.nodes]
    assert first.hash == second.hash
    assert not any("/" in n.ref for n in first.nodes)


async def test_a_value_change_keeps_the_hash_and_a_state_change_does_not() -> None:
    surface, _backend = await _open()
    before = await surface.snapshot()
    await surface.act("type", await _ref(surface, "name"), {"text": "Ada"})
    typed = await surface.snapshot()
    assert typed.hash == before.hash
    assert typed.text != before.text
    await surface.act("click", await _ref(surface, "agree"))
    assert (await surface.snapshot()).hash != before.hash


async def test_click_presses_a_push_button_with_the_keyboard_focus_on_it() -> None:
    surface, backend = await _open()
    await surface.act("click", await _ref(surface, "greet"))
    assert backend.calls == [("GrabFocus", _path(backend, "greet"))]
    assert backend.keys == [KEYSYMS["space"]]


async def test_click_does_the_action_of_a_push_button_that_takes_no_focus() -> None:
    surface, backend = await _open()
    backend.set_states(_path(backend, "greet"), drop=("focusable",))
    await surface.act("click", await _ref(surface, "greet"))
    assert backend.calls == [("DoAction", _path(backend, "greet"), 0, "Click")]
    assert backend.keys == []


async def test_set_checked_toggles_only_when_the_state_differs() -> None:
    surface, backend = await _open()
    agree = await _ref(surface, "agree")
    await surface.act("setChecked", agree, {"checked": False})
    assert backend.calls == []
    await surface.act("setChecked", agree, {"checked": True})
    assert backend.calls == [("DoAction", _path(backend, "agree"), 0, "Click")]
    assert (await surface.check({"kind": "checked"}, "ref", agree)).ok


async def test_a_check_box_in_the_inconsistent_state_checks_neither_checked_nor_unchecked(
) -> None:
    """GTK's inconsistent box is drawn half-checked: `unchecked` said yes to it."""
    surface, backend = await _open()
    agree = await _ref(surface, "agree")
    backend.set_states(_path(backend, "agree"), add=("indeterminate",))
    answers = [await surface.check({"kind": k}, "ref", agree) for k in ("checked", "unchecked")]
    assert [(a.ok, a.actual) for a in answers] == [(False, "mixed"), (False, "mixed")]


async def test_type_appends_through_insert_text_and_clear_empties() -> None:
    surface, backend = await _open()
    entry = await _ref(surface, "name")
    await surface.act("type", entry, {"text": "Ada"})
    await surface.act("type", entry, {"text": "!"})
    await surface.act("clear", entry)
    path = _path(backend, "name")
    assert backend.calls == [
        ("InsertText", path, 0, "Ada"),
        ("InsertText", path, 3, "!"),
        ("SetTextContents", path, ""),
    ]


async def test_type_on_a_spin_button_sets_its_value() -> None:
    surface, backend = await _open()
    count = await _ref(surface, "count")
    await surface.act("type", count, {"text": "7"})
    assert backend.calls == [("SetCurrentValue", _path(backend, "count"), 7.0)]
    with pytest.raises(DataError):
        await surface.act("type", count, {"text": "seven"})


async def test_type_on_a_progress_or_level_bar_is_refused_it_only_shows_a_value() -> None:
    """type set the Value of any node without editable text: on a progress bar GTK ignored
    it, and the action answered as done."""
    surface, backend = await _open("widget_factory")
    snap = await surface.snapshot()
    for role in ("progress bar", "level bar"):
        raw = next(n for n in backend.nodes if n.role_name == role and "showing" in n.state_set)
        ref = surface._refs[raw.path]
        assert ref in {n.ref for n in snap.nodes}
        with pytest.raises(ActionabilityError, match="cannot be set"):
            await surface.act("type", ref, {"text": "0.9"})
    assert backend.calls == []


async def test_an_agent_sees_a_spin_buttons_value_and_sets_it_with_set_numeric_value() -> None:
    surface, backend = await _open()
    host = SurfaceAgentHost(surface)
    full = await host.read_semantics(None)
    assert isinstance(full, Full)
    [count] = [n for n in full.nodes if n.semantic_id == "count"]
    assert count.numeric is not None
    assert count.numeric.current == float(count.value or "nan")
    assert ActionKind.SET_NUMERIC_VALUE in count.actions
    receipt = await host.perform_action(ByNodeId(count.node_id), SetNumericValue(7.5), Latest())
    assert isinstance(receipt, Receipt), receipt
    assert backend.calls == [("SetCurrentValue", _path(backend, "count"), 7.5)]


async def test_a_form_control_is_named_by_the_label_it_is_labelled_by() -> None:
    """GTK leaves an entry its mnemonic label points at nameless and names a combo box by
    its selection: the label is only a relation, and the agent saw a nameless field."""
    surface, _backend = await _open()
    full = await SurfaceAgentHost(surface).read_semantics(None)
    assert isinstance(full, Full)
    by_id = {n.semantic_id: (n.label, n.value) for n in full.nodes if n.semantic_id}
    assert by_id["name"] == ("Name", "")
    assert by_id["colour"] == ("Colour", "Red")
    assert by_id["count"] == ("Count", "3")


async def test_a_click_on_a_tree_cell_replaces_the_trees_selection_with_its_row() -> None:
    """AddRowSelection adds to a multiple selection; a click replaces it."""
    surface, backend = await _open("widget_factory")
    [andrea] = [n for n in backend.nodes if n.name == "Andrea" and n.has("TableCell")]
    table = andrea.parent
    [ref] = await surface.locate({"by": "text", "value": "Andrea", "exact": True})
    await surface.act("click", ref)
    index = await backend.index_in_parent(backend.app, andrea.path)
    assert backend.calls == [("ClearSelection", table), ("AddRowSelection", table, index)]


async def test_a_refusal_names_the_target_by_the_node_id_the_agent_knows() -> None:
    surface, backend = await _open()
    host = SurfaceAgentHost(surface)
    full = await host.read_semantics(None)
    assert isinstance(full, Full)
    [agree] = [n for n in full.nodes if n.semantic_id == "agree"]

    async def refuse(*_args: object) -> bool:
        return False

    backend.do_action = refuse  # type: ignore[method-assign]
    refused = await host.perform_action(
        ByNodeId(agree.node_id), SimpleAction(ActionKind.ACTIVATE), Latest()
    )
    assert isinstance(refused, Rejection)
    assert refused.message == f"node {agree.node_id} refused the 'Click' action"


async def test_text_with_a_nul_is_refused_before_it_reaches_the_bus() -> None:
    """The bus drops a connection whose message holds U+0000: the session ended."""
    surface, backend = await _open()
    name = await _ref(surface, "name")
    with pytest.raises(DataError, match="U\\+0000"):
        await surface.act("type", name, {"text": "a\x00b"})
    assert backend.calls == []


async def test_text_with_a_lone_surrogate_is_refused_before_it_reaches_the_bus() -> None:
    """It cannot be encoded as UTF-8: the UnicodeEncodeError ended the session."""
    surface, backend = await _open()
    with pytest.raises(DataError, match="surrogate") as refused:
        await surface.act("type", await _ref(surface, "name"), {"text": "a\ud800b"})
    assert refused.value.path == "args.text"
    assert backend.calls == []


@pytest.mark.parametrize("text", ["x\ud800", "a\x00b"])
async def test_set_text_a_field_cannot_hold_leaves_it_as_it_was(text: str) -> None:
    """The bridge's set_text is clear, then type: clear emptied the field, then type refused
    the text, and the agent was told nothing had changed."""
    surface, backend = await _open()
    host = SurfaceAgentHost(surface)
    full = await host.read_semantics(None)
    assert isinstance(full, Full)
    [node] = [n for n in full.nodes if n.semantic_id == "name"]
    refused = await host.perform_action(ByNodeId(node.node_id), SetText(text), Latest())
    assert isinstance(refused, Rejection), refused
    assert backend.calls == []


async def test_select_option_selects_the_combo_child_by_name() -> None:
    surface, backend = await _open()
    colour = await _ref(surface, "colour")
    await surface.act("selectOption", colour, {"values": ["Blue"]})
    assert backend.calls == [("SelectChild", _path(backend, "colour"), 2)]
    with pytest.raises(ActionabilityError):
        await surface.act("selectOption", colour, {"values": ["Mauve"]})


async def test_press_enter_activates_and_other_keys_go_to_the_focused_element() -> None:
    surface, backend = await _open()
    entry = await _ref(surface, "name")
    await surface.act("press", entry, {"key": "Enter"})
    await surface.act("press", entry, {"key": "a"})
    path = _path(backend, "name")
    assert backend.calls == [("DoAction", path, 0, "Activate"), ("GrabFocus", path)]
    assert backend.keys == [ord("a")]


async def test_a_key_pressed_on_an_element_that_does_not_take_the_focus_is_refused() -> None:
    """The key went to whatever had the focus: an agent's dismiss of a dialog that did not
    become active sent Escape to the main window, and got a receipt. A window that is the
    active one takes the key."""
    surface, backend = await _open()
    with pytest.raises(ActionabilityError, match="did not take the keyboard focus"):
        await surface.act("press", await _ref(surface, "status"), {"key": "x"})
    window = await _ref(surface, "main-window")
    with pytest.raises(ActionabilityError, match="did not take the keyboard focus"):
        await surface.act("press", window, {"key": "Escape"})
    assert backend.keys == []
    backend.set_states(_path(backend, "main-window"), add=("active",))
    await surface.act("press", window, {"key": "Escape"})
    assert backend.keys == [KEYSYMS["escape"]]


async def test_focus_grabs_the_focus_of_the_element() -> None:
    surface, backend = await _open()
    await surface.act("focus", await _ref(surface, "name"))
    assert backend.calls == [("GrabFocus", _path(backend, "name"))]


async def test_refusals_are_typed_and_touch_nothing() -> None:
    surface, backend = await _open()
    with pytest.raises(NavigationError):
        await surface.act("navigate", None, {"url": "https://example.invalid"})
    with pytest.raises(NavigationError):
        await surface.read("url")
    with pytest.raises(ActionabilityError):
        await surface.act("click", await _ref(surface, "disabled-button"))
    with pytest.raises(ActionabilityError):
        await surface.act("type", await _ref(surface, "code"), {"text": "x"})
    with pytest.raises(ActionabilityError):
        await surface.act("dragTo", await _ref(surface, "greet"), None, await _ref(surface, "quit"))
    with pytest.raises(LocateError):
        await surface.act("click", "a999")
    snap = await surface.snapshot()
    hidden_item = next(n.ref for n in snap.nodes if n.role == "menuitem")
    with pytest.raises(ActionabilityError):
        await surface.act("click", hidden_item)
    assert backend.calls == []


async def test_a_ref_whose_element_is_gone_is_a_locate_error() -> None:
    surface, backend = await _open()
    greet = await _ref(surface, "greet")
    backend.remove(_path(backend, "greet"))
    with pytest.raises(LocateError):
        await surface.act("click", greet)
    assert (await surface.check({"kind": "hidden"}, "ref", greet)).ok


async def test_an_element_gone_during_an_action_is_a_stale_ref_not_the_sessions_end() -> None:
    """An element destroyed between being read and being acted on (a UI that rebuilds)
    raised the backend's StaleObjectError, a SessionError: the session closed."""
    surface, backend = await _open()
    agree, greet = await _ref(surface, "agree"), await _ref(surface, "greet")
    read_node = backend.read_node

    async def vanishing(app: Any, path: str, *, actions: bool = False) -> amap.RawNode | None:
        raw = await read_node(app, path, actions=actions)
        if actions:
            backend.remove(path)
        return raw

    backend.read_node = vanishing  # type: ignore[method-assign]
    with pytest.raises(LocateError, match="is stale"):
        await surface.act("setChecked", agree, {"checked": True})
    with pytest.raises(LocateError, match="is stale"):
        await surface.act("click", greet)
    backend.read_node = read_node  # type: ignore[method-assign]
    assert '- button "Quit"' in (await surface.snapshot()).text


async def test_a_call_the_application_refuses_is_an_actionability_error() -> None:
    surface, backend = await _open()

    async def refusing(app: Any, path: str, index: int) -> bool:
        raise BusCallError("org.freedesktop.DBus.Error.Failed: no")

    backend.do_action = refusing  # type: ignore[method-assign]
    with pytest.raises(ActionabilityError, match="refused the call"):
        await surface.act("setChecked", await _ref(surface, "agree"), {"checked": True})
    assert '- button "Quit"' in (await surface.snapshot()).text


async def test_an_application_gone_from_the_bus_ends_the_session_it_is_no_stale_ref() -> None:
    """A snapshot under a ref turned every SessionError into a LocateError: an application
    that had died read as one element gone, and the agent was sent to look for it again."""
    surface, backend = await _open()
    status = await _ref(surface, "status")

    async def gone(*args: Any, **kwargs: Any) -> Any:
        raise ApplicationGoneError("its bus name :1.1 has no owner")

    backend.read_tree = gone  # type: ignore[method-assign]
    backend.read_node = gone  # type: ignore[method-assign]
    with pytest.raises(SessionError, match="is gone") as ended:
        await surface.snapshot(root=status)
    assert not isinstance(ended.value, LocateError)
    for call in (surface.read("text", status), surface.act("click", status), surface.snapshot()):
        with pytest.raises(SessionError, match="has quit"):
            await call


async def test_without_a_session_bus_the_error_says_how_to_get_one_from_the_command_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`semledger serve --adapter atspi` with no desktop session was told to pass
    session_bus in the adapter config, which the command line has no way to do."""
    from semledger.adapters._atspi_dbus import A11yBus

    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    monkeypatch.delenv("AT_SPI_BUS_ADDRESS", raising=False)
    with pytest.raises(SessionError) as raised:
        await A11yBus.connect(timeout=5)
    said = str(raised.value)
    assert said.startswith("no D-Bus session bus: run semledger inside a desktop session,")
    assert "`dbus-run-session`" in said
    assert "set DBUS_SESSION_BUS_ADDRESS" in said
    assert said.endswith("(from Python, pass session_bus in the adapter config)")


async def test_an_attached_session_never_quits_its_application() -> None:
    surface, _backend = await _open()
    with pytest.raises(SessionError):
        await surface.act("quit")
    await surface.snapshot()


async def test_locate_answers_each_desktop_kind_and_nothing_for_the_rest() -> None:
    surface, _backend = await _open()
    greet = await _ref(surface, "greet")
    entry = await _ref(surface, "name")
    assert await surface.locate({"by": "role", "role": "button", "name": "gre"}) == [greet]
    assert (
        await surface.locate({"by": "role", "role": "button", "name": "gre", "exact": True}) == []
    )
    assert await surface.locate({"by": "name", "value": "Greet"}) == [greet]
    assert await surface.locate({"by": "text", "value": "Greet"}) == [greet]
    assert await surface.locate({"by": "label", "value": "Name", "exact": True}) == [entry]
    assert await surface.locate({"by": "controlPath", "value": "window/group/button[3]"}) == [greet]
    assert await surface.locate(
        {"by": "controlPath", "value": "frame/panel/push button[Greet]"}
    ) == [greet]
    assert await surface.locate({"by": "coords", "x": 20, "y": 210}) == [greet]
    assert len(await surface.locate({"by": "role", "role": "button"})) == 3
    assert await surface.locate({"by": "role", "role": "menuitem"}) == []
    for other in (
        {"by": "css", "value": "x"},
        {"by": "testid", "value": "greet"},
        {"by": "webmcp", "tool": "t"},
        {"by": "automationId", "value": "nope"},
    ):
        assert await surface.locate(other) == []


async def test_describe_gives_the_path_native_and_box() -> None:
    surface, _backend = await _open()
    description = await surface.describe(await _ref(surface, "greet"))
    assert description.native["automationId"] == "greet"
    assert description.native["atspiRole"] == "push button"
    assert description.box is not None
    assert [(s.role, s.name, s.index) for s in description.path] == [
        ("window", "semledger GTK fixture", 0),
        ("group", None, 0),
        ("button", "Greet", 2),
    ]


async def test_interactive_only_and_max_nodes_keep_a_well_formed_tree() -> None:
    surface, _backend = await _open()
    interactive = await surface.snapshot(interactive_only=True)
    assert snapshot_problems(interactive) == []
    assert {n.role for n in interactive.nodes[1:]} <= {
        "button",
        "checkbox",
        "spinbutton",
        "combobox",
        "menu",
        "menuitem",
        "textbox",
    }
    assert len((await surface.snapshot(max_nodes=5)).nodes) == 5


async def test_capabilities_are_all_false_and_the_kind_is_desktop() -> None:
    surface = AtspiSurface()
    assert surface.kind == "desktop"
    assert not any(
        getattr(surface.capabilities(), f)
        for f in (
            "dialogs",
            "frames",
            "windows",
            "upload",
            "drag",
            "trace",
            "pick",
            "observe",
            "webmcp",
            "screenshot",
            "restore",
        )
    )
    assert not hasattr(surface, "trace")
    assert not hasattr(surface, "observe")


def test_a_node_holding_a_shown_one_is_shown_though_gtk_says_it_is_not() -> None:
    """GTK stops saying a scrolled window's viewport is showing two pages down, though its
    list and rows are: the viewport, and all it held, were left out as hidden. A node the
    application hid (not visible) stays hidden, whatever it holds."""
    viewport = attrs.evolve(_raw("viewport", {"visible"}), path="/v", depth=0)
    row = attrs.evolve(_raw("list item", SHOWN), path="/v/r", depth=1)
    hidden = attrs.evolve(_raw("panel", set()), path="/h", depth=0)
    inside = attrs.evolve(_raw("list item", SHOWN), path="/h/r", depth=1)
    raws = amap.showing_holders([viewport, row, hidden, inside])
    assert [amap.is_hidden(raw) for raw in raws] == [False, False, True, False]
