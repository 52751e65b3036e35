"""What the tree passes put in a node: frames of rows and scrolled views, focus order, the
text selection, the order of relations, a composition change (SPEC §2.5, §3)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from semledger.runtime import (
    CONSTANT,
    UNCACHEABLE,
    App,
    AppRuntime,
    BySemanticId,
    Composition,
    Declaration,
    Full,
    Latest,
    Receipt,
    Relation,
    Role,
    Scroll,
    ScrollDirection,
    SemanticId,
    SemanticsNode,
    SetSelection,
    View,
    group,
    node,
    row,
    scroll_view,
    text,
    text_field,
)
from semledger.runtime._tree import LEAF_HEIGHT

NOW = Latest()


def make(view: Callable[[Any], View[Any]], init: Any) -> AppRuntime[Any, Any]:
    return AppRuntime(App(init=lambda: init, update=lambda _model, msg: msg, view=view))


def by_label(rt: AppRuntime[Any, Any], label: str) -> SemanticsNode:
    f = rt.read()
    assert isinstance(f, Full)
    return next(n for n in f.nodes if n.label == label)


def test_a_row_is_as_tall_as_its_tallest_child() -> None:
    view = group(row(text("a"), text("b"), text("c"), label="row"), label="app")
    rt = make(lambda _: view, 0)
    assert by_label(rt, "row").frame.size.height == LEAF_HEIGHT
    assert by_label(rt, "c").frame.origin.y == by_label(rt, "a").frame.origin.y


def test_scrolling_stops_where_the_last_child_reaches_the_bottom() -> None:
    items = [text(f"item {i}", key=i) for i in range(10)]
    view = group(scroll_view(*items, height=100.0, step=48.0, semantic_id="list"), label="g")
    rt = make(lambda _: view, 0)
    top = by_label(rt, "item 0").frame.origin.y
    limit = 10 * LEAF_HEIGHT - 100.0
    down = Scroll(ScrollDirection.DOWN)
    for _ in range(6):
        assert isinstance(rt.perform(BySemanticId(SemanticId("list")), down, NOW), Receipt)
    assert by_label(rt, "item 0").frame.origin.y == top - limit
    last = rt.perform(BySemanticId(SemanticId("list")), down, NOW)
    assert isinstance(last, Receipt)
    assert last.before == last.after


def test_only_a_focusable_node_carries_its_focus_order() -> None:
    view = group(
        text("plain", focus_order=1),
        node(Role.GROUP, label="taken", focusable=True, focus_order=2),
        label="app",
    )
    rt = make(lambda _: view, 0)
    assert by_label(rt, "plain").focus_order is None
    assert by_label(rt, "taken").focus_order == 2


def field(value: str) -> View[Any]:
    return group(text_field("Name", value, on_set_text=lambda s: s, semantic_id="f"), label="app")


def test_a_selection_past_the_end_of_shortened_text_is_dropped() -> None:
    rt = make(field, "abcdef")
    selected = rt.perform(BySemanticId(SemanticId("f")), SetSelection(1, 5), NOW)
    assert isinstance(selected, Receipt)
    info = by_label(rt, "Name").text
    assert info is not None
    assert info.selection is not None
    assert (info.selection.start, info.selection.end, info.caret) == (1, 5, 5)
    rt.deliver("ab")
    info = by_label(rt, "Name").text
    assert info is not None
    assert (info.selection, info.caret) == (None, 2)


def test_relations_are_listed_in_relation_order_whatever_order_they_were_declared_in() -> None:
    view = group(
        text("target", semantic_id="t"),
        node(
            Role.BUTTON,
            label="source",
            relations={Relation.CONTROLS: ["t"], Relation.LABELLED_BY: ["t"]},
        ),
        label="app",
    )
    rt = make(lambda _: view, 0)
    kinds = [kind for kind, _targets in by_label(rt, "source").relations]
    assert kinds == [Relation.LABELLED_BY, Relation.CONTROLS]


def boxed(hidden: bool) -> View[Any]:
    """A box whose keys say only its paint may change, though its composition does."""
    return group(
        node(
            Role.GROUP,
            label="box",
            composition=Composition.HIDDEN if hidden else Composition.BOUNDARY,
            declaration=Declaration(CONSTANT, UNCACHEABLE, CONSTANT, CONSTANT),
            key="box",
        ),
        label="app",
    )


def test_a_composition_change_rebuilds_a_node_its_keys_call_unchanged() -> None:
    rt = make(boxed, False)
    rt.deliver(True)
    f = rt.read()
    assert isinstance(f, Full)
    assert [n.label for n in f.nodes] == ["app"]


def ordered(names: tuple[str, ...]) -> View[Any]:
    """Children whose keys say nothing changes, under a parent whose keys say the same but
    for its paint: only their order does."""
    children = [text(name, key=name, declaration=Declaration.constant()) for name in names]
    paint_only = Declaration(CONSTANT, UNCACHEABLE, CONSTANT, CONSTANT)
    return group(group(*children, label="list", declaration=paint_only, key="l"), label="app")


def test_children_moved_under_keys_that_call_them_unchanged_are_listed_in_their_new_order() -> None:
    rt = make(ordered, ("a", "b"))
    rt.deliver(("b", "a"))
    f = rt.read()
    assert isinstance(f, Full)
    assert [n.label for n in f.nodes] == ["app", "list", "b", "a"]
    assert by_label(rt, "b").frame.origin.y < by_label(rt, "a").frame.origin.y
