"""The gallery example driven through `AppRuntime` exactly as an agent would (SPEC §5).

Every role, every action kind and every composition mode must be observable in committed
semantics, and every action kind must do something through a real handler.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from semledger.examples.gallery import app
from semledger.runtime import (
    ActionKind,
    AppRuntime,
    ByNodeId,
    BySemanticId,
    Checked,
    Delta,
    DuplicateSemanticId,
    ErrorCode,
    Full,
    Latest,
    Live,
    Receipt,
    Rejection,
    Relation,
    Role,
    Scroll,
    ScrollDirection,
    SemanticId,
    SemanticsAction,
    SemanticsNode,
    SetNumericValue,
    SetSelection,
    SetText,
    SimpleAction,
    TextSelection,
    Unchanged,
)

Runtime = AppRuntime[Any, Any]
ACTIVATE = SimpleAction(ActionKind.ACTIVATE)
FOCUS = SimpleAction(ActionKind.FOCUS)
SUBMIT = SimpleAction(ActionKind.SUBMIT)
SELECT = SimpleAction(ActionKind.SELECT)
EXPAND = SimpleAction(ActionKind.EXPAND)
COLLAPSE = SimpleAction(ActionKind.COLLAPSE)
DISMISS = SimpleAction(ActionKind.DISMISS)
INCREMENT = SimpleAction(ActionKind.INCREMENT)
DECREMENT = SimpleAction(ActionKind.DECREMENT)
SHOW_MENU = SimpleAction(ActionKind.SHOW_MENU)
BULLET = "\u2022"

# Roles that only exist while something is open: the combo box's options, the menu, the dialog.
OPENED_ROLES = {Role.OPTION, Role.MENU, Role.DIALOG}


def perform(rt: Runtime, sid: str, action: SemanticsAction) -> Receipt | Rejection:
    return rt.perform(BySemanticId(SemanticId.new(sid)), action, Latest())


def accepted(rt: Runtime, sid: str, action: SemanticsAction) -> Receipt:
    outcome = perform(rt, sid, action)
    assert isinstance(outcome, Receipt), outcome
    return outcome


def rejected(rt: Runtime, sid: str, action: SemanticsAction) -> Rejection:
    outcome = perform(rt, sid, action)
    assert isinstance(outcome, Rejection), outcome
    return outcome


def find(rt: Runtime, sid: str) -> SemanticsNode:
    found = rt.snapshot.find(sid)
    assert len(found) == 1, (sid, found)
    return rt.snapshot.nodes[found[0]]


def absent(rt: Runtime, sid: str) -> bool:
    return rt.snapshot.find(sid) == ()


def children(rt: Runtime, node: SemanticsNode) -> list[SemanticsNode]:
    return [rt.snapshot.nodes[c] for c in node.children]


def nodes(rt: Runtime) -> list[SemanticsNode]:
    return list(rt.snapshot.ordered())


def ids_by_semantic_id(rt: Runtime) -> dict[str, tuple[int, ...]]:
    return {str(k): v for k, v in rt.snapshot.by_semantic_id.items()}


def full(rt: Runtime) -> Full:
    result = rt.read()
    assert isinstance(result, Full)
    return result


def delta_since(rt: Runtime, generation: int) -> Delta:
    result = rt.read(generation)
    assert isinstance(result, Delta), result
    return result


def status(rt: Runtime) -> str | None:
    return find(rt, "gallery.status").value


def states(rt: Runtime) -> Iterator[list[SemanticsNode]]:
    """The gallery's nodes at rest, with the menu and combo box open, and with the dialog open."""
    yield nodes(rt)
    accepted(rt, "gallery.more", SHOW_MENU)
    accepted(rt, "gallery.fruit", EXPAND)
    yield nodes(rt)
    accepted(rt, "gallery.dialog.open", ACTIVATE)
    yield nodes(rt)


@pytest.fixture
def rt() -> Runtime:
    return AppRuntime(app)


# ---- coverage of the vocabulary -------------------------------------------------------------


def test_every_role_other_than_the_opened_ones_is_present_at_rest(rt: Runtime) -> None:
    assert {n.role for n in nodes(rt)} == set(Role) - OPENED_ROLES


def test_every_role_appears(rt: Runtime) -> None:
    seen = {n.role for state in states(rt) for n in state}
    assert seen == set(Role)


def test_every_action_kind_is_offered_somewhere(rt: Runtime) -> None:
    offered = {kind for state in states(rt) for n in state for kind in n.actions}
    assert offered == set(ActionKind)


def test_every_interactive_node_has_a_gallery_semantic_id(rt: Runtime) -> None:
    interactive = [n for state in states(rt) for n in state if n.actions]
    assert interactive
    for node in interactive:
        assert node.semantic_id is not None, node
        assert node.semantic_id.startswith("gallery."), node


def test_reads_do_not_advance_the_generation(rt: Runtime) -> None:
    generation = rt.generation
    full(rt)
    full(rt)
    assert rt.generation == generation
    assert rt.read(generation) == Unchanged(generation)


# ---- every action kind, through a real handler ----------------------------------------------


def test_activate_toggles_the_switch(rt: Runtime) -> None:
    assert find(rt, "gallery.dark_mode").role is Role.SWITCH
    assert find(rt, "gallery.dark_mode").state.checked is Checked.UNCHECKED
    accepted(rt, "gallery.dark_mode", ACTIVATE)
    assert find(rt, "gallery.dark_mode").state.checked is Checked.CHECKED
    assert status(rt) == "Dark mode on"


def test_activate_checks_exactly_one_radio(rt: Runtime) -> None:
    accepted(rt, "gallery.size.large", ACTIVATE)
    group = find(rt, "gallery.size")
    checked = {n.label: n.state.checked for n in children(rt, group)}
    assert checked == {
        "Small": Checked.UNCHECKED, "Medium": Checked.UNCHECKED, "Large": Checked.CHECKED,
    }
    assert [n.collection.set_position for n in children(rt, group) if n.collection] == [1, 2, 3]


def test_activate_presses_one_button_of_the_button_group(rt: Runtime) -> None:
    accepted(rt, "gallery.align.right", ACTIVATE)
    pressed = {n.label: n.state.pressed for n in children(rt, find(rt, "gallery.align"))}
    assert pressed == {"Left": False, "Center": False, "Right": True}


def test_activate_toggles_the_checkbox(rt: Runtime) -> None:
    assert find(rt, "gallery.remember").state.checked is Checked.UNCHECKED
    accepted(rt, "gallery.remember", ACTIVATE)
    assert find(rt, "gallery.remember").state.checked is Checked.CHECKED


def test_link_carries_a_url_and_activating_follows_it(rt: Runtime) -> None:
    link = find(rt, "gallery.link.docs")
    assert link.role is Role.LINK
    assert link.url == "https://example.com/docs"
    assert find(rt, "gallery.nav").role is Role.NAVIGATION
    accepted(rt, "gallery.link.docs", ACTIVATE)
    assert find(rt, "gallery.link.docs").state.selected
    assert status(rt) == "Opened https://example.com/docs"


def test_focus_moves_the_runtime_focus(rt: Runtime) -> None:
    assert rt.snapshot.focused is None
    receipt = accepted(rt, "gallery.username", FOCUS)
    field = find(rt, "gallery.username")
    assert rt.snapshot.focused == field.node_id
    assert field.state.focused
    again = accepted(rt, "gallery.username", FOCUS)
    assert again.before == again.after == receipt.after


def test_submit_is_rejected_until_the_form_is_valid(rt: Runtime) -> None:
    generation = rt.generation
    rejection = rejected(rt, "gallery.form", SUBMIT)
    assert rejection.code is ErrorCode.HANDLER_REJECTED
    assert rejection.details["action"] == "submit"
    assert rt.generation == generation
    accepted(rt, "gallery.username", SetText("ada"))
    accepted(rt, "gallery.password", SetText("short"))
    assert rejected(rt, "gallery.password", SUBMIT).code is ErrorCode.HANDLER_REJECTED
    accepted(rt, "gallery.password", SetText("correct horse"))
    accepted(rt, "gallery.form", SUBMIT)
    assert status(rt) == "Signed in as ada"


def test_the_sign_in_button_and_the_password_field_submit_too(rt: Runtime) -> None:
    assert rejected(rt, "gallery.sign_in", ACTIVATE).code is ErrorCode.HANDLER_REJECTED
    accepted(rt, "gallery.username", SetText("grace"))
    accepted(rt, "gallery.password", SetText("long enough"))
    accepted(rt, "gallery.password", SUBMIT)
    assert status(rt) == "Signed in as grace"
    progress = find(rt, "gallery.progress")
    assert progress.role is Role.PROGRESS
    assert progress.numeric is not None
    assert (progress.numeric.current, progress.numeric.value_text) == (75.0, "75%")


def test_select_a_tab_selects_it_and_relabels_the_panel_it_controls(rt: Runtime) -> None:
    panel = find(rt, "gallery.tabpanel")
    for tab in children(rt, find(rt, "gallery.tabs")):
        assert tab.role is Role.TAB
        assert tab.relation(Relation.CONTROLS) == (panel.node_id,)
    accepted(rt, "gallery.tab.history", SELECT)
    selected = {t.label for t in children(rt, find(rt, "gallery.tabs")) if t.state.selected}
    assert selected == {"History"}
    panel = find(rt, "gallery.tabpanel")
    assert panel.label == "History"
    assert panel.relation(Relation.LABELLED_BY) == (find(rt, "gallery.tab.history").node_id,)


def test_select_toggles_a_grid_cell(rt: Runtime) -> None:
    grid = find(rt, "gallery.seats")
    assert grid.role is Role.GRID
    assert grid.collection is not None
    assert (grid.collection.row_count, grid.collection.column_count) == (2, 3)
    accepted(rt, "gallery.seat.b2", SELECT)
    cell = find(rt, "gallery.seat.b2")
    assert cell.state.selected
    assert cell.collection is not None
    assert (cell.collection.row_index, cell.collection.column_index) == (1, 1)
    accepted(rt, "gallery.seat.b2", SELECT)
    assert not find(rt, "gallery.seat.b2").state.selected


def test_combo_box_expands_to_options_and_select_chooses_and_collapses(rt: Runtime) -> None:
    combo = find(rt, "gallery.fruit")
    assert combo.role is Role.COMBO_BOX
    assert combo.state.expanded is False
    assert ActionKind.COLLAPSE not in combo.actions
    assert absent(rt, "gallery.fruit.banana")
    accepted(rt, "gallery.fruit", EXPAND)
    combo = find(rt, "gallery.fruit")
    assert combo.state.expanded is True
    options = children(rt, combo)
    assert [(o.role, o.label) for o in options] == [
        (Role.OPTION, "Apple"), (Role.OPTION, "Banana"), (Role.OPTION, "Cherry"),
    ]
    positions = [(o.collection.set_position, o.collection.set_size)
                 for o in options if o.collection]
    assert positions == [(1, 3), (2, 3), (3, 3)]
    unavailable = rejected(rt, "gallery.fruit", EXPAND)
    assert unavailable.code is ErrorCode.ACTION_UNAVAILABLE
    assert unavailable.details["action"] == "expand"
    accepted(rt, "gallery.fruit.banana", SELECT)
    combo = find(rt, "gallery.fruit")
    assert (combo.value, combo.state.expanded, combo.children) == ("Banana", False, ())
    accepted(rt, "gallery.fruit", EXPAND)
    banana = find(rt, "gallery.fruit.banana")
    assert banana.state.selected
    assert find(rt, "gallery.fruit").relation(Relation.ACTIVE_DESCENDANT) == (banana.node_id,)
    accepted(rt, "gallery.fruit", COLLAPSE)
    assert find(rt, "gallery.fruit").state.expanded is False
    assert absent(rt, "gallery.fruit.banana")


def test_tree_items_expand_and_collapse(rt: Runtime) -> None:
    tree = find(rt, "gallery.tree")
    assert tree.role is Role.TREE
    assert [n.label for n in children(rt, tree)] == ["src", "docs", "readme"]
    src = find(rt, "gallery.tree.src")
    assert (src.role, src.level, src.state.expanded, src.children) == (
        Role.TREE_ITEM, 1, False, (),
    )
    leaf = find(rt, "gallery.tree.readme")
    assert leaf.state.expanded is None
    assert not {ActionKind.EXPAND, ActionKind.COLLAPSE} & set(leaf.actions)
    accepted(rt, "gallery.tree.src", EXPAND)
    src = find(rt, "gallery.tree.src")
    assert src.state.expanded is True
    assert [(n.role, n.label, n.level) for n in children(rt, src)] == [
        (Role.TREE_ITEM, "app", 2), (Role.TREE_ITEM, "view", 2),
    ]
    assert find(rt, "gallery.tree.src.app").node_id in src.children
    accepted(rt, "gallery.tree.src", COLLAPSE)
    assert find(rt, "gallery.tree.src").children == ()
    assert absent(rt, "gallery.tree.src.app")


def test_show_menu_opens_the_menu_and_dismiss_closes_it(rt: Runtime) -> None:
    assert absent(rt, "gallery.menu")
    accepted(rt, "gallery.more", SHOW_MENU)
    menu = find(rt, "gallery.menu")
    assert menu.role is Role.MENU
    assert find(rt, "gallery.more").state.expanded is True
    assert [n.label for n in children(rt, menu)] == ["Copy", "Paste"]
    accepted(rt, "gallery.menu", DISMISS)
    assert absent(rt, "gallery.menu")
    assert find(rt, "gallery.more").state.expanded is False


def test_a_menu_command_runs_and_closes_the_menu(rt: Runtime) -> None:
    accepted(rt, "gallery.more", ACTIVATE)
    accepted(rt, "gallery.menu.paste", ACTIVATE)
    assert absent(rt, "gallery.menu")
    assert status(rt) == "Paste chosen"


def test_slider_publishes_numeric_current_min_max_step_and_value_text(rt: Runtime) -> None:
    slider = find(rt, "gallery.volume")
    assert slider.role is Role.SLIDER
    assert slider.numeric is not None
    numeric = slider.numeric
    assert (numeric.current, numeric.min, numeric.max, numeric.step, numeric.value_text) == (
        50.0, 0.0, 100.0, 10.0, "50%",
    )


def test_increment_and_decrement_move_the_slider_by_its_step(rt: Runtime) -> None:
    accepted(rt, "gallery.volume", INCREMENT)
    numeric = find(rt, "gallery.volume").numeric
    assert numeric is not None
    assert (numeric.current, numeric.value_text) == (60.0, "60%")
    accepted(rt, "gallery.volume", DECREMENT)
    accepted(rt, "gallery.volume", DECREMENT)
    numeric = find(rt, "gallery.volume").numeric
    assert numeric is not None
    assert numeric.current == 40.0


def test_increment_at_the_maximum_is_accepted_and_changes_nothing(rt: Runtime) -> None:
    accepted(rt, "gallery.volume", SetNumericValue(100.0))
    receipt = accepted(rt, "gallery.volume", INCREMENT)
    assert receipt.before == receipt.after
    numeric = find(rt, "gallery.volume").numeric
    assert numeric is not None
    assert numeric.current == 100.0


def test_set_numeric_value_sets_the_slider(rt: Runtime) -> None:
    accepted(rt, "gallery.volume", SetNumericValue(35.0))
    numeric = find(rt, "gallery.volume").numeric
    assert numeric is not None
    assert (numeric.current, numeric.value_text) == (35.0, "35%")
    assert status(rt) == "Volume 35%"


@pytest.mark.parametrize("value", [-1.0, 100.5])
def test_set_numeric_value_outside_the_range_is_handler_rejected(rt: Runtime, value: float) -> None:
    generation = rt.generation
    rejection = rejected(rt, "gallery.volume", SetNumericValue(value))
    assert rejection.code is ErrorCode.HANDLER_REJECTED
    assert rejection.details["action"] == "set_numeric_value"
    assert rt.generation == generation


def test_set_text_and_set_selection_on_a_text_field(rt: Runtime) -> None:
    accepted(rt, "gallery.username", SetText("ada lovelace"))
    assert find(rt, "gallery.username").value == "ada lovelace"
    accepted(rt, "gallery.username", SetSelection(4, 12))
    info = find(rt, "gallery.username").text
    assert info is not None
    assert (info.selection, info.caret, info.editable) == (TextSelection(4, 12), 12, True)


def test_set_selection_outside_the_text_is_handler_rejected_and_keeps_the_selection(
    rt: Runtime,
) -> None:
    accepted(rt, "gallery.username", SetText("ada"))
    accepted(rt, "gallery.username", SetSelection(0, 2))
    generation = rt.generation
    rejection = rejected(rt, "gallery.username", SetSelection(1, 9))
    assert rejection.code is ErrorCode.HANDLER_REJECTED
    assert rejection.details["action"] == "set_selection"
    assert rt.generation == generation
    info = find(rt, "gallery.username").text
    assert info is not None
    assert info.selection == TextSelection(0, 2)


def test_scroll_view_holds_more_content_than_its_height(rt: Runtime) -> None:
    view = find(rt, "gallery.scroll")
    assert view.role is Role.SCROLL_VIEW
    [content] = children(rt, view)
    assert content.role is Role.LIST
    assert content.frame.size.height > view.frame.size.height
    assert [n.role for n in children(rt, content)] == [Role.LIST_ITEM] * 12


def test_scroll_moves_the_content_and_stops_at_both_ends(rt: Runtime) -> None:
    def first_y() -> float:
        return find(rt, "gallery.scroll.item.1").frame.origin.y

    top = first_y()
    at_top = accepted(rt, "gallery.scroll", Scroll(ScrollDirection.BACKWARD))
    assert at_top.before == at_top.after
    moved = accepted(rt, "gallery.scroll", Scroll(ScrollDirection.FORWARD))
    assert moved.after == moved.before + 1
    assert first_y() == top - 48.0
    for _ in range(10):
        accepted(rt, "gallery.scroll", Scroll(ScrollDirection.DOWN))
    view = find(rt, "gallery.scroll")
    last = find(rt, "gallery.scroll.item.12").frame
    assert last.origin.y + last.size.height == view.frame.origin.y + view.frame.size.height
    accepted(rt, "gallery.scroll", Scroll(ScrollDirection.UP))
    assert first_y() == top - (12 * 24.0 - 96.0) + 48.0


def test_dismiss_and_activate_in_the_dialog_close_it(rt: Runtime) -> None:
    accepted(rt, "gallery.dialog.open", ACTIVATE)
    accepted(rt, "gallery.dialog", DISMISS)
    assert absent(rt, "gallery.dialog")
    assert status(rt) == "Ready"
    accepted(rt, "gallery.dialog.open", ACTIVATE)
    accepted(rt, "gallery.dialog.confirm", ACTIVATE)
    assert absent(rt, "gallery.dialog")
    assert status(rt) == "Changes discarded"


# ---- composition modes ------------------------------------------------------------------------


def test_transparent_wrapper_lifts_its_children_into_the_parent(rt: Runtime) -> None:
    group = find(rt, "gallery.align")
    assert group.role is Role.BUTTON_GROUP
    assert [(n.role, n.label) for n in children(rt, group)] == [
        (Role.BUTTON, "Left"), (Role.BUTTON, "Center"), (Role.BUTTON, "Right"),
    ]


def test_boundary_keeps_a_role_none_node_grouping_its_children(rt: Runtime) -> None:
    boundary = find(rt, "gallery.boundary")
    assert boundary.role is Role.NONE
    assert [n.label for n in children(rt, boundary)] == ["Boundary line one", "Boundary line two"]
    assert [n for n in nodes(rt) if n.role is Role.NONE] == [boundary]


def test_merge_descendants_card_joins_title_and_body_without_children(rt: Runtime) -> None:
    card = find(rt, "gallery.card")
    assert card.label == "Release notes Version 1.0 is out"
    assert card.children == ()
    labels = [n.label for n in nodes(rt)]
    assert "Release notes" not in labels
    assert "Version 1.0 is out" not in labels
    accepted(rt, "gallery.card", ACTIVATE)
    assert status(rt) == "Release notes opened"


def test_hidden_section_hides_and_shows_keeping_its_node_ids(rt: Runtime) -> None:
    section_ids = ("gallery.section", "gallery.section.ping")
    assert all(absent(rt, sid) for sid in section_ids)
    assert rejected(rt, "gallery.section.ping", ACTIVATE).code is ErrorCode.TARGET_NOT_FOUND
    accepted(rt, "gallery.section.toggle", ACTIVATE)
    assert find(rt, "gallery.section.toggle").state.expanded is True
    shown = {sid: find(rt, sid).node_id for sid in section_ids}
    inner = {c for sid in section_ids for c in find(rt, sid).children}
    accepted(rt, "gallery.section.ping", ACTIVATE)
    hidden = accepted(rt, "gallery.section.toggle", ACTIVATE)
    assert all(absent(rt, sid) for sid in section_ids)
    assert set(delta_since(rt, hidden.before).removed) >= set(shown.values()) | inner
    accepted(rt, "gallery.section.toggle", ACTIVATE)
    assert {sid: find(rt, sid).node_id for sid in section_ids} == shown
    assert {c for sid in section_ids for c in find(rt, sid).children} == inner
    assert children(rt, find(rt, "gallery.section"))[0].value == "Pinged 1 times"


# ---- modal dialog -----------------------------------------------------------------------------


def test_open_dialog_becomes_the_root_and_scopes_the_tree(rt: Runtime) -> None:
    outside = nodes(rt)
    accepted(rt, "gallery.username", FOCUS)
    accepted(rt, "gallery.dialog.open", ACTIVATE)
    dialog = find(rt, "gallery.dialog")
    assert dialog.role is Role.DIALOG
    assert dialog.state.modal
    read = full(rt)
    assert read.root == dialog.node_id
    assert read.focused is None
    assert {n.semantic_id for n in read.nodes} == {
        "gallery.dialog", "gallery.dialog.confirm", "gallery.dialog.cancel", None,
    }
    assert read.issues == ()
    assert not {n.node_id for n in outside} & {n.node_id for n in read.nodes}
    blocked = rejected(rt, "gallery.volume", INCREMENT)
    assert blocked.code is ErrorCode.TARGET_NOT_FOUND


def test_after_the_dialog_closes_root_ids_and_issues_come_back(rt: Runtime) -> None:
    before = full(rt)
    accepted(rt, "gallery.dialog.open", ACTIVATE)
    closed = accepted(rt, "gallery.dialog", DISMISS)
    after = full(rt)
    assert after.root == before.root
    assert {n.node_id: n.semantic_id for n in after.nodes} == {
        n.node_id: n.semantic_id for n in before.nodes
    }
    assert after.issues == before.issues
    assert after.generation == closed.after


def test_discard_announces_the_status_it_sets_as_the_dialog_closes(rt: Runtime) -> None:
    accepted(rt, "gallery.dialog.open", ACTIVATE)
    discarded = accepted(rt, "gallery.dialog.confirm", ACTIVATE)
    node = find(rt, "gallery.status")
    delta = delta_since(rt, discarded.before)
    assert [(a.node_id, a.live, a.text) for a in delta.announcements] == [
        (node.node_id, Live.POLITE, "Changes discarded"),
    ]
    # Back saying what it said when the dialog opened: nothing new to announce.
    accepted(rt, "gallery.dialog.open", ACTIVATE)
    again = accepted(rt, "gallery.dialog.confirm", ACTIVATE)
    assert delta_since(rt, again.before).announcements == ()
    accepted(rt, "gallery.help", ACTIVATE)
    accepted(rt, "gallery.dialog.open", ACTIVATE)
    kept = accepted(rt, "gallery.dialog.cancel", ACTIVATE)
    assert status(rt) == "Help: every widget explains itself"
    assert delta_since(rt, kept.before).announcements == ()


# ---- duplicates, relations, password, live regions ------------------------------------------


def test_the_duplicate_pair_is_the_only_issue(rt: Runtime) -> None:
    pair = rt.snapshot.find("gallery.duplicate")
    assert len(pair) == 2
    assert full(rt).issues == (DuplicateSemanticId(SemanticId.new("gallery.duplicate"), pair),)


def test_acting_on_the_duplicate_semantic_id_is_target_ambiguous(rt: Runtime) -> None:
    generation = rt.generation
    rejection = rejected(rt, "gallery.duplicate", ACTIVATE)
    assert rejection.code is ErrorCode.TARGET_AMBIGUOUS
    assert rejection.details == {"semantic_id": "gallery.duplicate"}
    assert rt.generation == generation


def test_each_duplicate_is_still_reachable_by_node_id(rt: Runtime) -> None:
    first, second = rt.snapshot.find("gallery.duplicate")
    outcome = rt.perform(ByNodeId(second), ACTIVATE, Latest())
    assert isinstance(outcome, Receipt)
    assert status(rt) == "Duplicate 2 pressed"
    outcome = rt.perform(ByNodeId(first), ACTIVATE, Latest())
    assert isinstance(outcome, Receipt)
    assert status(rt) == "Duplicate 1 pressed"


def test_password_value_is_masked_in_semantics(rt: Runtime) -> None:
    accepted(rt, "gallery.password", SetText("hunter2hunter2"))
    field = find(rt, "gallery.password")
    assert field.state.password
    assert field.value == BULLET * len("hunter2hunter2")
    read = full(rt)
    assert all("hunter2" not in (n.value or "") + (n.label or "") for n in read.nodes)


def test_password_relations_resolve_to_semantic_ids(rt: Runtime) -> None:
    field = find(rt, "gallery.password")
    assert field.relation(Relation.LABELLED_BY) == (find(rt, "gallery.password.label").node_id,)
    assert field.relation(Relation.DESCRIBED_BY) == (find(rt, "gallery.password.hint").node_id,)
    assert field.relation(Relation.ERROR_MESSAGE) == ()
    assert not field.state.invalid
    help_button = find(rt, "gallery.help")
    tooltip = find(rt, "gallery.help.tooltip")
    assert tooltip.role is Role.TOOLTIP
    assert help_button.relation(Relation.DESCRIBED_BY) == (tooltip.node_id,)


def test_short_password_is_invalid_with_an_error_message_alert(rt: Runtime) -> None:
    receipt = accepted(rt, "gallery.password", SetText("abc"))
    field = find(rt, "gallery.password")
    alert = find(rt, "gallery.password.error")
    assert field.state.invalid
    assert field.relation(Relation.ERROR_MESSAGE) == (alert.node_id,)
    assert (alert.role, alert.live) == (Role.ALERT, Live.ASSERTIVE)
    assert alert.value == "Password must be at least 8 characters"
    delta = delta_since(rt, receipt.before)
    assert [(a.node_id, a.live, a.text) for a in delta.announcements] == [
        (alert.node_id, Live.ASSERTIVE, "Password must be at least 8 characters"),
    ]
    assert delta.issues == full(rt).issues
    accepted(rt, "gallery.password", SetText("long enough"))
    assert not find(rt, "gallery.password").state.invalid
    assert find(rt, "gallery.password").relation(Relation.ERROR_MESSAGE) == ()
    assert find(rt, "gallery.password.error").value is None


def test_status_is_polite_and_its_changes_are_announced(rt: Runtime) -> None:
    node = find(rt, "gallery.status")
    assert (node.role, node.live, node.value) == (Role.STATUS, Live.POLITE, "Ready")
    receipt = accepted(rt, "gallery.help", ACTIVATE)
    delta = delta_since(rt, receipt.before)
    [announcement] = delta.announcements
    assert (announcement.node_id, announcement.live, announcement.generation) == (
        node.node_id, Live.POLITE, receipt.after,
    )
    assert announcement.text == "Help: every widget explains itself"


def test_heading_levels_image_web_view_and_separator(rt: Runtime) -> None:
    headings = {n.label: n.level for n in nodes(rt) if n.role is Role.HEADING}
    assert headings["Semantics gallery"] == 1
    assert headings["Controls"] == 2
    assert all(level is not None for level in headings.values())
    [image] = [n for n in nodes(rt) if n.role is Role.IMAGE]
    assert image.label == "Gallery logo"
    assert image.description
    assert find(rt, "gallery.web").role is Role.WEB_VIEW
    assert find(rt, "gallery.web").url == "https://example.com/embed"
    assert find(rt, "gallery.main").role is Role.MAIN


def test_table_rows_and_cells_carry_collection_info(rt: Runtime) -> None:
    table = find(rt, "gallery.table")
    assert table.collection is not None
    assert (table.collection.row_count, table.collection.column_count) == (3, 2)
    rows = children(rt, table)
    assert [r.role for r in rows] == [Role.ROW] * 3
    grid = []
    for r, row in enumerate(rows):
        assert row.collection is not None
        assert row.collection.row_index == r
        cells = children(rt, row)
        assert [c.role for c in cells] == [Role.CELL, Role.CELL]
        for c, cell in enumerate(cells):
            assert cell.collection is not None
            assert (cell.collection.row_index, cell.collection.column_index) == (r, c)
        grid.append([c.label for c in cells])
    assert grid == [["Player", "Score"], ["Ada", "12"], ["Grace", "9"]]
