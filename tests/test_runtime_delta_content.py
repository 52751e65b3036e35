"""What a commit publishes and what a delta carries: tree order, removal order, the end's
focus and issues, nothing left behind (SPEC §2.5, §3). Each case is one the state machine
of test_runtime_stateful finds only after a long search."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from semledger.runtime import ActionKind as K
from semledger.runtime import (
    App,
    AppRuntime,
    ByNodeId,
    BySemanticId,
    Composition,
    Delta,
    DuplicateSemanticId,
    ErrorCode,
    Latest,
    Live,
    MissingRelationTarget,
    Receipt,
    Rejection,
    Relation,
    Role,
    SemanticsNode,
    SimpleAction,
    State,
    View,
    apply_delta,
    button,
    column,
    group,
    lazy,
    node,
    text,
)

NOW = Latest()
FOCUS = SimpleAction(K.FOCUS)


def make(view: Callable[[Any], View[Any]], init: Any) -> AppRuntime[Any, Any]:
    return AppRuntime(App(init=lambda: init, update=lambda _model, msg: msg, view=view))


def delta(rt: AppRuntime[Any, Any], since: int) -> Delta:
    result = rt.read(since)
    assert isinstance(result, Delta)
    return result


def by_label(rt: AppRuntime[Any, Any], label: str) -> SemanticsNode:
    return next(n for n in rt.snapshot.ordered() if n.label == label)


def assert_only_the_tree_is_published(rt: AppRuntime[Any, Any]) -> None:
    """Every node of the snapshot is reachable from its root, and the parents say so."""
    snapshot = rt.snapshot
    reachable = {n.node_id for n in snapshot.ordered()}
    assert set(snapshot.nodes) == reachable
    assert dict(snapshot.parents) == {
        child: n.node_id for n in snapshot.ordered() for child in n.children
    }


def items(model: tuple[str, ...]) -> View[Any]:
    return group(*(text(f"item {i}", v, key=i) for i, v in enumerate(model)), label="items")


def test_a_delta_over_several_commits_upserts_in_tree_order() -> None:
    rt = make(items, ("a", "b", "c"))
    rt.deliver(("a", "b", "C"))
    rt.deliver(("A", "b", "C"))
    assert [n.label for n in delta(rt, 1).upserted] == ["item 0", "item 2"]


def test_a_node_added_and_removed_within_a_delta_is_not_listed() -> None:
    rt = make(items, ("a", "b"))
    rt.deliver(("a", "b", "c"))
    added = by_label(rt, "item 2").node_id
    rt.deliver(("a", "b"))
    d = delta(rt, 1)
    assert added not in d.removed
    assert d.removed == ()
    assert d.upserted == ()


def live_region(model: int) -> View[Any]:
    return group(
        text("count", str(model), live=Live.POLITE, key="count"),
        label=f"region {model}",
        live=Live.POLITE,
    )


def test_the_announcements_of_one_commit_come_in_tree_order() -> None:
    rt = make(live_region, 1)
    rt.deliver(2)
    region, count = by_label(rt, "region 2"), by_label(rt, "count")
    assert [(a.node_id, a.text) for a in delta(rt, 1).announcements] == [
        (region.node_id, "region 2"),
        (count.node_id, "2"),
    ]


def pair(model: tuple[str | None, str | None]) -> View[Any]:
    first, second = model
    return group(
        text("first", semantic_id=first, key="first"),
        text("second", semantic_id=second, key="second"),
        label="pair",
    )


def test_nodes_sharing_a_semantic_id_are_listed_by_node_id() -> None:
    rt = make(pair, (None, "dup"))
    first, second = by_label(rt, "first").node_id, by_label(rt, "second").node_id
    assert first < second
    rt.deliver(("dup", "dup"))  # the later node held the id first
    assert rt.snapshot.find("dup") == (first, second)
    (issue,) = rt.snapshot.issues
    assert isinstance(issue, DuplicateSemanticId)
    assert issue.nodes == (first, second)


def focusable(model: tuple[str | None, str | None]) -> View[Any]:
    return group(button("go", "m", key="go"), pair(model), label="app")


def test_a_delta_carries_the_focus_and_issues_of_its_end() -> None:
    rt = make(focusable, (None, None))
    start = rt.generation
    go = by_label(rt, "go").node_id
    assert isinstance(rt.perform(ByNodeId(go), FOCUS, NOW), Receipt)
    rt.deliver(("dup", "dup"))
    d = delta(rt, start)
    assert d.focused == go == rt.snapshot.focused
    assert d.issues == rt.snapshot.issues != ()


def dialog(model: tuple[bool, bool, bool]) -> View[Any]:
    """A box (a modal dialog when `modal`) holding a, hidden when `hide_a`, and b, unless
    `drop_b`; building drops b before the semantics pass hides a."""
    modal, hide_a, drop_b = model
    a = text("a", composition=Composition.HIDDEN if hide_a else Composition.BOUNDARY, key="a")
    inside = [a] if drop_b else [a, text("b", key="b")]
    box = node(Role.DIALOG, *inside, label="box", state=State(modal=modal), key="box")
    return group(button("behind", "m", key="behind"), box, label="app")


@pytest.mark.parametrize("modal", [False, True], ids=["whole tree", "modal open"])
def test_removed_lists_one_commits_removals_in_removal_order(modal: bool) -> None:
    rt = make(dialog, (modal, False, False))
    start = rt.generation
    a, b = by_label(rt, "a").node_id, by_label(rt, "b").node_id
    rt.deliver((modal, True, True))
    assert delta(rt, start).removed == (b, a)
    assert_only_the_tree_is_published(rt)


def test_a_delta_over_several_commits_lists_removals_in_the_order_they_happened() -> None:
    rt = make(dialog, (True, False, False))
    start = rt.generation
    a, b = by_label(rt, "a").node_id, by_label(rt, "b").node_id
    rt.deliver((True, False, True))
    rt.deliver((True, True, True))
    assert delta(rt, start).removed == (b, a)


def test_a_box_that_becomes_modal_is_the_root_with_no_parent() -> None:
    rt = make(dialog, (False, False, False))
    rt.deliver((True, False, False))
    opened = rt.snapshot
    assert opened.root == by_label(rt, "box").node_id
    assert_only_the_tree_is_published(rt)
    rt.deliver((True, True, True))  # two changes under the root: sorted by their paths
    d = delta(rt, opened.generation)
    assert apply_delta(opened, d).nodes == rt.snapshot.nodes


def tops(model: int) -> View[Any]:
    return column(*(button(f"top {i}", "m", key=i) for i in range(model)))


def test_the_synthetic_root_leaves_when_one_top_level_node_is_left() -> None:
    rt = make(tops, 2)
    start = rt.snapshot
    synthetic = start.root
    assert synthetic is not None
    assert start.nodes[synthetic].role is Role.GROUP
    assert start.nodes[synthetic].label is None
    rt.deliver(1)
    assert rt.snapshot.root == by_label(rt, "top 0").node_id
    assert synthetic in delta(rt, start.generation).removed
    assert rt.snapshot.node(synthetic) is None
    assert_only_the_tree_is_published(rt)


def hideable(model: bool) -> View[Any]:
    """A box, hidden when `model`, over a lazy subtree that no build marks dirty."""

    def build() -> tuple[View[Any], ...]:
        return (group(text("inner", semantic_id="inner", key="inner"), key="wrap"),)

    comp = Composition.HIDDEN if model else Composition.BOUNDARY
    box = node(Role.GROUP, lazy("same", build), label="box", composition=comp, key="box")
    return group(box, label="app")


def test_hiding_a_shown_subtree_unpublishes_every_node_in_it() -> None:
    rt = make(hideable, False)
    start = rt.generation
    gone = [n.node_id for n in rt.snapshot.ordered() if n.label != "app"]
    rt.deliver(True)
    assert sorted(delta(rt, start).removed) == sorted(gone)
    assert_only_the_tree_is_published(rt)
    refused = rt.perform(BySemanticId("inner"), FOCUS, NOW)  # type: ignore[arg-type]
    assert isinstance(refused, Rejection)
    assert refused.code is ErrorCode.TARGET_NOT_FOUND


def labelled_behind(model: bool) -> View[Any]:
    """A button labelled by an id no node has, behind a dialog that is modal when `model`."""
    go = button("go", "m", relations={Relation.LABELLED_BY: ["nothing"]}, key="go")
    box = node(Role.DIALOG, text("ok", key="ok"), label="box", state=State(modal=model), key="d")
    return group(go, box, label="app")


def test_a_relation_source_behind_an_open_modal_reports_no_issue() -> None:
    rt = make(labelled_behind, False)
    (missing,) = rt.snapshot.issues
    assert isinstance(missing, MissingRelationTarget)
    rt.deliver(True)
    assert rt.snapshot.issues == ()
    assert delta(rt, rt.generation - 1).issues == ()
    rt.deliver(False)
    assert rt.snapshot.issues == (missing,)
