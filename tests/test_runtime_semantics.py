"""Semantics composition, roots, modals, relations, live regions, masking and focus."""

from __future__ import annotations

import re
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from semledger.runtime import ActionKind as K
from semledger.runtime import (
    AmbiguousRelationTarget,
    Announcement,
    App,
    AppRuntime,
    ByNodeId,
    BySemanticId,
    Checked,
    Composition,
    Delta,
    DuplicateSemanticId,
    ErrorCode,
    Full,
    Latest,
    Live,
    MissingRelationTarget,
    Receipt,
    Rejection,
    Relation,
    Role,
    SemanticsNode,
    SemanticsSnapshot,
    SetText,
    SimpleAction,
    State,
    View,
    button,
    checkbox,
    column,
    group,
    lazy,
    node,
    send,
    text,
    text_field,
)
from semledger.runtime._snapshot import announcements_of

FOCUS = SimpleAction(K.FOCUS)
NOW = Latest()


def make(view: Any, init: Any = None) -> AppRuntime[Any, Any]:
    return AppRuntime(App(init=lambda: init, update=lambda m, msg: msg, view=view))


def full(rt: AppRuntime[Any, Any]) -> Full:
    result = rt.read()
    assert isinstance(result, Full)
    return result


def by_label(f: Full, label: str) -> SemanticsNode:
    [found] = [n for n in f.nodes if n.label == label]
    return found


def root(f: Full) -> SemanticsNode:
    [found] = [n for n in f.nodes if n.node_id == f.root]
    return found


def test_transparent_nodes_lift_their_children() -> None:
    rt = make(lambda _: group(column(text("a"), column(text("b"))), text("c"), label="g"))
    f = full(rt)
    assert [n.label for n in f.nodes] == ["g", "a", "b", "c"]
    assert root(f).children == tuple(n.node_id for n in f.nodes[1:])


def test_boundary_keeps_a_group_even_without_semantics() -> None:
    view = group(node(Role.NONE, text("a"), text("b"), composition=Composition.BOUNDARY), label="g")
    f = full(make(lambda _: view))
    assert [(n.role, n.label) for n in f.nodes] == [
        (Role.GROUP, "g"),
        (Role.NONE, None),
        (Role.TEXT, "a"),
        (Role.TEXT, "b"),
    ]
    assert len(root(f).children) == 1


def test_merge_descendants_joins_labels_merges_states_and_has_no_children() -> None:
    view = group(
        node(
            Role.BUTTON,
            text("Save"),
            node(Role.NONE, text("the"), text("file")),
            node(Role.TEXT, label="disabled", state=State(disabled=True)),
            label="Press",
            composition=Composition.MERGE_DESCENDANTS,
        ),
        label="g",
    )
    f = full(make(lambda _: view))
    assert len(f.nodes) == 2
    merged = f.nodes[1]
    assert merged.label == "Press Save the file disabled"
    assert merged.children == ()
    assert merged.role is Role.BUTTON
    assert merged.state.disabled


def test_merge_descendants_conflicting_checked_is_mixed() -> None:
    def view(states: tuple[bool, ...]) -> View[Any]:
        boxes = [checkbox(f"c{i}", s) for i, s in enumerate(states)]
        return group(node(Role.GROUP, *boxes, composition=Composition.MERGE_DESCENDANTS), label="g")

    rt = make(view, (True, False))
    assert full(rt).nodes[1].state.checked is Checked.MIXED
    rt.deliver((True, True))
    assert full(rt).nodes[1].state.checked is Checked.CHECKED
    rt.deliver((False,))
    assert full(rt).nodes[1].state.checked is Checked.UNCHECKED


def test_merge_descendants_skips_hidden_subtrees() -> None:
    hidden = node(
        Role.NONE, text("secret"), node(Role.NONE, text("deep")), composition=Composition.HIDDEN
    )
    view = group(
        node(Role.BUTTON, hidden, text("shown"), composition=Composition.MERGE_DESCENDANTS),
        label="g",
    )
    f = full(make(lambda _: view))
    assert f.nodes[1].label == "shown"


def test_merge_descendants_updates_when_a_descendant_changes() -> None:
    def view(word: str) -> View[Any]:
        inner = node(Role.NONE, text(word))
        return group(node(Role.BUTTON, inner, composition=Composition.MERGE_DESCENDANTS), label="g")

    rt = make(view, "one")
    before = full(rt).nodes[1]
    rt.deliver("two")
    after = full(rt).nodes[1]
    assert after.label == "two"
    assert after.node_id == before.node_id


def test_hidden_removes_the_subtree() -> None:
    view = group(
        text("a"), group(text("b"), button("c", "m"), composition=Composition.HIDDEN), label="g"
    )
    f = full(make(lambda _: view))
    assert [n.label for n in f.nodes] == ["g", "a"]


def test_a_wrapper_never_inherits_a_childs_semantics() -> None:
    view = group(
        node(Role.NONE, button("inner", "m", semantic_id="child")),
        label="outer",
        semantic_id="wrap",
    )
    f = full(make(lambda _: view))
    outer, inner = f.nodes
    assert (outer.role, outer.label, outer.semantic_id, outer.actions) == (
        Role.GROUP,
        "outer",
        "wrap",
        (),
    )
    assert inner.semantic_id == "child"


def test_several_top_level_roots_get_a_synthetic_group_root() -> None:
    rt = make(lambda n: column(*(text(f"t{i}", key=i) for i in range(n))), 2)
    f = full(rt)
    top = root(f)
    assert top.role is Role.GROUP
    assert top.semantic_id is None
    assert top.label is None
    assert top.children == tuple(n.node_id for n in f.nodes[1:])
    rt.deliver(1)
    f1 = full(rt)
    assert f1.root == f1.nodes[0].node_id
    assert f1.nodes[0].label == "t0"
    assert len(f1.nodes) == 1
    rt.deliver(0)
    f0 = full(rt)
    assert (f0.root, f0.nodes) == (None, ())


def test_the_synthetic_root_offers_no_action() -> None:
    rt = make(lambda _: column(button("a", 1), button("b", 2)))
    f = full(rt)
    result = rt.perform(ByNodeId(f.root or 0), SimpleAction(K.ACTIVATE), NOW)
    assert isinstance(result, Rejection)
    assert result.code is ErrorCode.ACTION_UNAVAILABLE


def modal_view(model: tuple[bool, bool]) -> View[Any]:
    open_outer, open_inner = model
    dialog_children: list[View[Any]] = [button("ok", "ok", semantic_id="ok", key="ok")]
    if open_inner:
        dialog_children.append(
            node(
                Role.DIALOG,
                button("inner-ok", "x", key="iok"),
                label="inner",
                state=State(modal=True),
                key="in",
            )
        )
    parts: list[View[Any]] = [button("behind", "b", semantic_id="behind", key="behind")]
    if open_outer:
        parts.append(
            node(Role.DIALOG, *dialog_children, label="dialog", state=State(modal=True), key="dlg")
        )
    return group(*parts, label="app")


def test_the_modal_node_becomes_the_root_while_open() -> None:
    rt = make(modal_view, (False, False))
    closed = full(rt)
    rt.deliver((True, False))
    opened = full(rt)
    assert root(opened).label == "dialog"
    assert [n.label for n in opened.nodes] == ["dialog", "ok"]
    result = rt.perform(BySemanticId("behind"), FOCUS, NOW)  # type: ignore[arg-type]
    assert isinstance(result, Rejection)
    assert result.code is ErrorCode.TARGET_NOT_FOUND
    assert result.message == (
        f"no node has that semantic id in the tree: a modal dialog (node {root(opened).node_id})"
        " is open, and only what it holds can be targeted until it closes"
    )
    rt.deliver((False, False))
    again = full(rt)
    assert again.nodes == closed.nodes
    assert again.root == closed.root


def test_the_deepest_modal_wins() -> None:
    rt = make(modal_view, (True, True))
    f = full(rt)
    assert root(f).label == "inner"
    assert [n.label for n in f.nodes] == ["inner", "inner-ok"]
    rt.deliver((True, False))
    assert root(full(rt)).label == "dialog"


def test_focus_outside_an_opening_modal_is_cleared_and_trapped_inside() -> None:
    rt = make(modal_view, (False, False))
    assert isinstance(rt.perform(BySemanticId("behind"), FOCUS, NOW), Receipt)  # type: ignore[arg-type]
    behind = by_label(full(rt), "behind")
    assert full(rt).focused == behind.node_id
    rt.deliver((True, False))
    opened = full(rt)
    assert opened.focused is None
    assert isinstance(rt.perform(BySemanticId("ok"), FOCUS, NOW), Receipt)  # type: ignore[arg-type]
    assert full(rt).focused == by_label(full(rt), "ok").node_id
    rt.deliver((False, False))
    after = full(rt)
    assert by_label(after, "behind").node_id == behind.node_id
    assert not by_label(after, "behind").state.focused


def test_delta_across_modal_open_and_close_applies() -> None:
    from semledger.runtime import apply_delta

    rt = make(modal_view, (False, False))
    snapshots = [rt.snapshot]
    for model in [(True, False), (True, True), (False, False), (True, True), (False, True)]:
        rt.deliver(model)
        snapshots.append(rt.snapshot)
    for old in snapshots:
        result = rt.read(old.generation)
        if isinstance(result, Delta):
            assert apply_delta(old, result).nodes == rt.snapshot.nodes


def relation_view(model: tuple[str, ...]) -> View[Any]:
    fields = [text(f"label {i}", semantic_id=sid, key=i) for i, sid in enumerate(model)]
    return group(
        *fields,
        button(
            "go",
            "m",
            relations={Relation.LABELLED_BY: ["lbl"], Relation.CONTROLS: ["ctl"]},
            key="go",
        ),
        label="form",
    )


def test_relations_resolve_to_node_ids() -> None:
    rt = make(relation_view, ("lbl", "ctl"))
    f = full(rt)
    go = by_label(f, "go")
    assert go.relation(Relation.LABELLED_BY) == (by_label(f, "label 0").node_id,)
    assert go.relation(Relation.CONTROLS) == (by_label(f, "label 1").node_id,)
    assert f.issues == ()


def test_missing_and_ambiguous_relation_targets_are_issues() -> None:
    rt = make(relation_view, ("lbl", "lbl"))
    f = full(rt)
    go = by_label(f, "go")
    twins = (by_label(f, "label 0").node_id, by_label(f, "label 1").node_id)
    assert go.relation(Relation.LABELLED_BY) == ()
    assert set(f.issues) == {
        DuplicateSemanticId("lbl", twins),  # type: ignore[arg-type]
        AmbiguousRelationTarget(go.node_id, Relation.LABELLED_BY, "lbl", twins),  # type: ignore[arg-type]
        MissingRelationTarget(go.node_id, Relation.CONTROLS, "ctl"),  # type: ignore[arg-type]
    }
    rt.deliver(("lbl", "ctl"))
    assert full(rt).issues == ()


def test_a_relation_target_appearing_later_resolves() -> None:
    rt = make(relation_view, ())
    assert len(full(rt).issues) == 2
    rt.deliver(("ctl", "lbl"))
    f = full(rt)
    assert by_label(f, "go").relation(Relation.CONTROLS) == (by_label(f, "label 0").node_id,)
    assert f.issues == ()


def test_a_relation_whose_target_goes_away_is_resolved_again() -> None:
    rt = make(relation_view, ("lbl", "ctl"))
    rt.deliver(("lbl",))
    f = full(rt)
    assert by_label(f, "go").relation(Relation.CONTROLS) == ()
    assert by_label(f, "go").relation(Relation.LABELLED_BY) == (by_label(f, "label 0").node_id,)


def test_a_relation_given_one_id_as_a_str_is_refused() -> None:
    with pytest.raises(TypeError, match="expected a sequence of semantic ids"):
        button("go", "m", relations={Relation.LABELLED_BY: "lbl"})  # type: ignore[dict-item]


def test_duplicate_semantic_ids_give_one_issue() -> None:
    rt = make(
        lambda n: group(*(text(f"t{i}", semantic_id="same", key=i) for i in range(n)), label="g"), 3
    )
    f = full(rt)
    assert f.issues == (DuplicateSemanticId("same", tuple(n.node_id for n in f.nodes[1:])),)  # type: ignore[arg-type]
    rt.deliver(1)
    assert full(rt).issues == ()


def live_view(status: str) -> View[Any]:
    return group(
        text("Status", status, live=Live.POLITE, key="s"),
        text("Alert", status, live=Live.ASSERTIVE, atomic=True, key="a"),
        text("Quiet", status, key="q"),
        label="g",
    )


def test_live_regions_give_announcements_in_deltas() -> None:
    rt = make(live_view, "idle")
    start = rt.generation
    rt.deliver("saved")
    delta = rt.read(start)
    assert isinstance(delta, Delta)
    f = full(rt)
    assert delta.announcements == (
        Announcement(by_label(f, "Status").node_id, start + 1, Live.POLITE, False, "saved"),
        Announcement(by_label(f, "Alert").node_id, start + 1, Live.ASSERTIVE, True, "Alert saved"),
    )
    rt.deliver("done")
    later = rt.read(start)
    assert isinstance(later, Delta)
    assert [a.text for a in later.announcements] == ["saved", "Alert saved", "done", "Alert done"]


def test_a_live_node_emptied_announces_its_label_alone() -> None:
    rt = make(live_view, "saved")
    start = rt.generation
    rt.deliver("")
    delta = rt.read(start)
    assert isinstance(delta, Delta)
    assert [a.text for a in delta.announcements] == ["Status", "Alert"]


def test_a_live_node_added_under_one_that_was_there_is_announced_given_the_commit() -> None:
    """A web page replaces the text node in its live region instead of changing it."""
    region = SemanticsNode(node_id=1, semantic_id=None, role=Role.GROUP, live=Live.POLITE)
    before = SemanticsSnapshot.empty().derive(
        upserted=[region], removed=[], root=1, focused=None, issues=()
    )
    added = SemanticsNode(
        node_id=2, semantic_id=None, role=Role.TEXT, value="Saved", live=Live.POLITE
    )
    upserted = [attrs.evolve(region, children=(2,)), added]
    after = before.derive(upserted=upserted, removed=[], root=1, focused=None, issues=())
    assert announcements_of(before, after.generation, upserted, added_within=after) == [
        Announcement(2, after.generation, Live.POLITE, False, "Saved")
    ]
    assert announcements_of(before, after.generation, upserted) == []


def labelled_count(label: str) -> View[Any]:
    return group(text(label, "3 items", live=Live.POLITE, key="s"), label="g")


def test_a_live_node_whose_label_alone_changed_announces_its_label() -> None:
    rt = make(labelled_count, "Cart")
    start = rt.generation
    rt.deliver("Basket")
    delta = rt.read(start)
    assert isinstance(delta, Delta)
    assert [a.text for a in delta.announcements] == ["Basket"]


def hideable_status(model: tuple[bool, bool, str]) -> View[Any]:
    """The model: whether the status is mounted, whether it is shown, and what it says."""
    mounted, shown, status = model
    hidden = Composition.TRANSPARENT if shown else Composition.HIDDEN
    live = text("Status", status, live=Live.POLITE, composition=hidden, key="s")
    return group(*((live,) if mounted else ()), text("Quiet", status, key="q"), label="g")


def test_a_live_node_shown_again_saying_something_else_is_announced() -> None:
    rt = make(hideable_status, (True, True, "idle"))
    status_id = by_label(full(rt), "Status").node_id
    rt.deliver((True, False, "saved"))
    hidden = rt.generation
    rt.deliver((True, True, "saved"))
    assert by_label(full(rt), "Status").node_id == status_id
    delta = rt.read(hidden)
    assert isinstance(delta, Delta)
    assert delta.announcements == (
        Announcement(status_id, rt.generation, Live.POLITE, False, "saved"),
    )
    rt.deliver((True, False, "saved"))
    hidden = rt.generation
    rt.deliver((True, True, "saved"))
    again = rt.read(hidden)
    assert isinstance(again, Delta)
    assert again.announcements == ()


def test_a_live_node_is_remembered_out_of_the_tree_only_while_its_element_is_mounted() -> None:
    rt = make(hideable_status, (True, False, "idle"))
    rt.deliver((True, True, "idle"))
    rt.deliver((True, False, "idle"))
    [kept] = rt.checkpoint()["left"]
    assert kept["label"] == "Status"
    rt.deliver((False, False, "idle"))
    assert rt.checkpoint()["left"] == []


def hideable_pair(shown: bool) -> View[Any]:
    hidden = Composition.TRANSPARENT if shown else Composition.HIDDEN
    return group(
        group(
            text("Status", "idle", live=Live.POLITE, key="s"),
            text("Quiet", "idle", key="q"),
            composition=hidden,
            key="pair",
        ),
        label="g",
    )


def test_only_live_nodes_out_of_the_tree_are_remembered() -> None:
    rt = make(hideable_pair, True)
    rt.deliver(False)
    assert [kept["label"] for kept in rt.checkpoint()["left"]] == ["Status"]
    rt.deliver((True, True, "idle"))
    rt.deliver((False, True, "gone"))
    assert rt.checkpoint()["left"] == []


def test_password_values_are_masked() -> None:
    view = group(
        text_field("Password", "hunter2", password=True, on_set_text=lambda s: s), label="g"
    )
    rt = make(lambda _: view)
    field = by_label(full(rt), "Password")
    assert field.value is not None
    assert "hunter2" not in field.value
    assert len(field.value) == 7
    assert field.state.password
    assert all("hunter2" not in (op.text or "") for op in rt.display_list())


def test_focus_is_runtime_owned_and_set_by_the_focus_action() -> None:
    rt = make(
        lambda _: group(
            button("a", "m", semantic_id="a"), button("b", "m", semantic_id="b"), label="g"
        )
    )
    assert full(rt).focused is None
    result = rt.perform(BySemanticId("a"), FOCUS, NOW)  # type: ignore[arg-type]
    assert isinstance(result, Receipt)
    assert result.after == result.before + 1
    f = full(rt)
    a = by_label(f, "a")
    assert f.focused == a.node_id
    assert a.state.focused
    assert [n.label for n in f.nodes if n.state.focused] == ["a"]
    rt.perform(BySemanticId("b"), FOCUS, NOW)  # type: ignore[arg-type]
    f = full(rt)
    assert [n.label for n in f.nodes if n.state.focused] == ["b"]
    again = rt.perform(BySemanticId("b"), FOCUS, NOW)  # type: ignore[arg-type]
    assert isinstance(again, Receipt)
    assert again.before == again.after


def test_focus_is_cleared_when_the_focused_node_goes_away() -> None:
    def view(show: str) -> View[Any]:
        if show == "gone":
            return group(text("empty"), label="g")
        comp = Composition.HIDDEN if show == "hidden" else Composition.TRANSPARENT
        return group(
            node(Role.NONE, button("a", "m", semantic_id="a"), composition=comp), label="g"
        )

    for how in ("gone", "hidden"):
        rt = make(view, "shown")
        rt.perform(BySemanticId("a"), FOCUS, NOW)  # type: ignore[arg-type]
        assert full(rt).focused is not None
        rt.deliver(how)
        assert full(rt).focused is None
        rt.deliver("shown")
        assert full(rt).focused is None


def test_focus_is_cleared_when_the_focused_node_becomes_disabled() -> None:
    rt = make(lambda d: group(button("a", "m", semantic_id="a", disabled=d), label="g"), False)
    rt.perform(BySemanticId("a"), FOCUS, NOW)  # type: ignore[arg-type]
    rt.deliver(True)
    f = full(rt)
    assert f.focused is None
    assert not by_label(f, "a").state.focused


def test_focus_is_cleared_when_the_focused_node_no_longer_takes_the_focus() -> None:
    """It stayed: the snapshot said the focus was on a node that offered no focus action."""
    rt = make(
        lambda taking: group(
            node(Role.GROUP, label="card", semantic_id="card", focusable=taking), label="g"
        ),
        True,
    )
    rt.perform(BySemanticId("card"), FOCUS, NOW)  # type: ignore[arg-type]
    assert full(rt).focused is not None
    rt.deliver(False)
    f = full(rt)
    assert f.focused is None
    assert not by_label(f, "card").state.focused


SIDS = ("a", "b", "c")
Item = tuple[int, str | None, tuple[str, ...], bool]
"""(key, its semantic id, the ids it is labelled by, whether it sits in the modal)."""


def relations_forest(model: tuple[tuple[Item, ...], bool]) -> View[Any]:
    items, modal_open = model

    def item(key: int, sid: str | None, labelled_by: tuple[str, ...]) -> View[Any]:
        relations = {Relation.LABELLED_BY: list(labelled_by)} if labelled_by else None
        return text(f"item {key}", semantic_id=sid, relations=relations, key=key)

    outside = [item(k, s, r) for k, s, r, inside in items if not (inside and modal_open)]
    inside = [item(k, s, r) for k, s, r, inside in items if inside and modal_open]
    dialog = [node(Role.DIALOG, *inside, label="dialog", state=State(modal=True), key="dlg")]
    return group(*outside, *(dialog if modal_open else []), label="form")


ITEMS = st.tuples(
    st.integers(0, 6),
    st.none() | st.sampled_from(SIDS),
    st.lists(st.sampled_from(SIDS), max_size=2).map(tuple),
    st.booleans(),
)
Model = tuple[tuple[Item, ...], bool]
Edit = tuple[str, Any]
EDITS: st.SearchStrategy[Edit] = st.one_of(
    ITEMS.map(lambda item: ("put", item)),
    st.integers(0, 6).map(lambda key: ("drop", key)),
    st.tuples(st.integers(0, 6), st.none() | st.sampled_from(SIDS)).map(lambda a: ("sid", a)),
    st.just(("modal", None)),
)


def edited(model: Model, edit: Edit) -> Model:
    """`model` with one item put, dropped or given another id, or the modal toggled: most
    commits change one thing, and what a commit leaves alone is what a cache can get wrong."""
    items, modal_open = model
    by_key = {item[0]: item for item in items}
    kind, argument = edit
    if kind == "put":
        by_key[argument[0]] = argument
    elif kind == "drop":
        by_key.pop(argument, None)
    elif kind == "sid" and argument[0] in by_key:
        key, _sid, labelled_by, inside = by_key[argument[0]]
        by_key[key] = (key, argument[1], labelled_by, inside)
    elif kind == "modal":
        modal_open = not modal_open
    return tuple(by_key.values()), modal_open


@settings(max_examples=200, deadline=None)
@given(
    st.lists(ITEMS, max_size=6, unique_by=lambda i: i[0]).map(tuple),
    st.booleans(),
    st.lists(EDITS, min_size=1, max_size=12),
)
def test_relation_issues_after_any_commit_equal_a_fresh_scan(
    items: tuple[Item, ...], modal_open: bool, edits: list[Edit]
) -> None:
    """Commits re-resolve and rescan only the relations they can have changed; whatever the
    changes (sources coming and going, ids moving, a modal scoping the tree), the published
    relation issues are those a full scan finds, and every relation resolves as it does in
    a runtime that starts from the same model."""

    def resolved(rt: AppRuntime[Any, Any]) -> dict[str | None, object]:
        nodes = rt.snapshot.nodes
        label = {n.node_id: n.label for n in nodes.values()}
        return {
            n.label: [(kind, [label.get(t, "outside") for t in ts]) for kind, ts in n.relations]
            for n in nodes.values()
            if n.relations
        }

    def app(init: tuple[tuple[Item, ...], bool]) -> App[Any, Any]:
        return App(init=lambda: init, update=lambda _m, new: new, view=relations_forest)

    models = [(items, modal_open)]
    for edit in edits:
        models.append(edited(models[-1], edit))
    rt = AppRuntime(app(models[0]))
    for model in models[1:] + models[:1]:
        rt.deliver(model)
        published = [
            i
            for i in rt.snapshot.issues
            if isinstance(i, MissingRelationTarget | AmbiguousRelationTarget)
        ]
        assert sorted(map(repr, published)) == sorted(map(repr, rt.relation_issues(rt.snapshot)))
        assert resolved(rt) == resolved(AppRuntime(app(model)))
        assert "outside" not in repr(resolved(rt))


@pytest.mark.parametrize(
    ("behind", "inside", "expected"),
    [
        ((1, "a", (), False), (), {"item 2": []}),
        ((1, "a", (), False), ((3, "a", (), True),), {"item 2": [("labelled_by", ["item 3"])]}),
    ],
    ids=["target-behind-the-modal", "target-inside-and-a-twin-behind"],
)
def test_relations_in_an_open_modal_resolve_among_the_nodes_it_shows(
    behind: Item, inside: tuple[Item, ...], expected: dict[str, object]
) -> None:
    """They resolved among every element, those behind the modal too: a relation named a
    node id the snapshot did not hold, or none where the one target shown has a twin behind
    the modal."""
    model = ((behind, (2, None, ("a",), True), *inside), True)
    rt = AppRuntime(App(init=lambda: model, update=lambda _m, new: new, view=relations_forest))
    nodes = rt.snapshot.nodes
    label = {n.node_id: n.label for n in nodes.values()}
    got = {
        n.label: [(kind.value, [label.get(t, "not in the snapshot") for t in ts])
                  for kind, ts in n.relations]
        for n in nodes.values()
        if n.label == "item 2"
    }
    assert got == expected
    missing = [i for i in rt.snapshot.issues if isinstance(i, MissingRelationTarget)]
    assert len(missing) == (0 if inside else 1)


def labelled_by_in_the_open_modal(rt: AppRuntime[Any, Any]) -> list[str | None]:
    """The labels of the nodes item 2 is labelled by, in the published snapshot."""
    nodes = rt.snapshot.nodes
    [source] = [n for n in nodes.values() if n.label == "item 2"]
    return [nodes[t].label for kind, ts in source.relations for t in ts]


@pytest.mark.parametrize(
    ("before", "after", "labels"),
    [
        (  # what the source names changes; among every element it resolves to none both times
            ((1, "a", (), False), (3, "a", (), True), (2, None, ("a",), True)),
            ((1, "a", (), False), (3, "a", (), True), (2, None, ("b",), True)),
            (["item 3"], []),
        ),
        (  # a twin of the id it names comes into the modal; among every element, still several
            ((1, "a", (), False), (4, "a", (), False), (2, None, ("a",), True)),
            ((1, "a", (), False), (4, "a", (), False), (2, None, ("a",), True), (3, "a", (), True)),
            ([], ["item 3"]),
        ),
    ],
    ids=["source-names-another-id", "target-comes-into-the-modal"],
)
def test_a_commit_inside_an_open_modal_resolves_its_relations_again_among_the_nodes_it_shows(
    before: tuple[Item, ...], after: tuple[Item, ...], labels: tuple[list[str], list[str]]
) -> None:
    """A commit while the same modal stays open looks only at what changed inside it: a
    relation whose resolution among every element did not change is still resolved again
    among the modal's nodes when what it names, or what holds those ids there, changed."""
    rt = AppRuntime(
        App(init=lambda: (before, True), update=lambda _m, new: new, view=relations_forest)
    )
    assert labelled_by_in_the_open_modal(rt) == labels[0]
    rt.deliver((after, True))
    assert labelled_by_in_the_open_modal(rt) == labels[1]


def modal_list(model: tuple[int, int]) -> View[Any]:
    """A list of `width` lazy rows in an open modal dialog, the first row's label counting."""
    width, count = model

    def row(i: int, c: int) -> View[Any]:
        return lazy(c, lambda: (text(f"row {i} #{c}"),), key=i)

    rows = [row(i, count if i == 0 else 0) for i in range(width)]
    dialog = node(
        Role.DIALOG, node(Role.LIST, *rows, label="rows"), label="pick", state=State(modal=True)
    )
    return group(button("behind", "b"), dialog, label="app")


def test_a_commit_inside_an_open_modal_compares_the_nodes_it_changed_not_the_whole_modal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """It compared every node the modal shows with the last snapshot's: a commit changing
    one row of a long list in a dialog cost as much as the list."""
    compared = [0]
    real = SemanticsNode.__eq__

    def counting(self: SemanticsNode, other: object) -> bool:
        compared[0] += 1
        return real(self, other)  # type: ignore[no-any-return]

    counts = []
    for width in (20, 400):
        rt = make(modal_list, (width, 0))
        assert root(full(rt)).label == "pick"
        with monkeypatch.context() as patch:
            patch.setattr(SemanticsNode, "__eq__", counting)
            compared[0] = 0
            rt.deliver((width, 1))
            counts.append(compared[0])
        assert by_label(full(rt), "row 0 #1").role is Role.TEXT
    assert counts[0] == counts[1]


def test_builders_take_a_state_and_a_text_field_can_be_disabled_required_or_read_only() -> None:
    def view(_model: Any) -> View[Any]:
        return group(
            button("Bold", "b", state=State(pressed=True)),
            checkbox("Agree", True, "a", state=State(required=True), disabled=True),
            text_field("Code", "AB-1", on_set_text=lambda t: t, read_only=True, required=True),
            text_field("Name", "", on_set_text=lambda t: t, disabled=True),
            label="form",
        )

    f = full(make(view))
    bold, agree = by_label(f, "Bold").state, by_label(f, "Agree").state
    assert (bold.pressed, agree.required, agree.disabled, agree.checked) == (
        True, True, True, Checked.CHECKED
    )  # fmt: skip
    code, name = by_label(f, "Code"), by_label(f, "Name")
    assert (code.state.read_only, code.state.required, K.SET_TEXT in code.actions) == (
        True, True, False
    )  # fmt: skip
    assert name.state.disabled
    with pytest.raises(TypeError, match="state: expected a State, got 'pressed'"):
        button("Bold", "b", state="pressed")


@pytest.mark.parametrize(
    ("build", "says"),
    [
        (lambda: text("x", disabled=True), r"disabled: .* \(a state flag: give state=State\("),
        (lambda: node(Role.GROUP, labl="x"), r"labl: a view node has no such field \(fields: key,"),
    ],
    ids=["state-flag", "misspelt"],
)
def test_a_keyword_no_view_node_has_is_refused_naming_it_and_where_it_belongs(
    build: Any, says: str
) -> None:
    """attrs said "View.__init__() got an unexpected keyword argument 'disabled'": neither
    the builder's mistake nor that a state flag goes in state=State(...)."""
    with pytest.raises(TypeError, match=says):
        build()


def test_a_checkbox_is_checked_unchecked_or_mixed_as_its_checked_says() -> None:
    """Taken for its truth, checked=Checked.UNCHECKED and Checked.MIXED were both served as
    checked: a "select all" box over a partial selection could not be made at all."""
    given = (True, False, Checked.CHECKED, Checked.UNCHECKED, Checked.MIXED)

    def view(_model: Any) -> View[Any]:
        return group(*(checkbox(f"c{i}", c) for i, c in enumerate(given)), label="g")

    f = full(make(view))
    served = [by_label(f, f"c{i}").state.checked for i in range(len(given))]
    assert served == [Checked.CHECKED, Checked.UNCHECKED, *given[2:]]
    mixed = checkbox("All", Checked.MIXED, state=State(checked=Checked.MIXED, required=True))
    assert (mixed.state.checked, mixed.state.required) == (Checked.MIXED, True)


@pytest.mark.parametrize(
    ("build", "says"),
    [
        (lambda: checkbox("C", "no"), "checkbox.checked: expected True, False or a Checked, got"),
        (lambda: checkbox("C", "false"), "checkbox.checked: expected True, False or a Checked"),
        (lambda: checkbox("C", None), "checkbox.checked: expected True, False or a Checked"),
        (lambda: checkbox("C", 2.5), "checkbox.checked: expected True, False or a Checked"),
        (lambda: checkbox("C", 1), "checkbox.checked: expected True, False or a Checked"),
        (lambda: checkbox("C", True, disabled=1), "checkbox.disabled: expected True or False"),
        (lambda: button("B", "b", disabled=0), "button.disabled: expected True or False, got int"),
        (lambda: button("B", "b", disabled=None), "button.disabled: expected True or False"),
        (lambda: text_field("T", "", read_only=""), "text_field.read_only: expected True or"),
        (lambda: text_field("T", "", password="no"), "text_field.password: expected True or"),
    ],
    ids=[
        *(f"checked-{v}" for v in ("no", "false", "None", "2.5", "1")),
        "checkbox-disabled-1",
        "button-disabled-0",
        "button-disabled-None",
        "text_field-read_only-empty",
        "text_field-password-no",
    ],
)
def test_a_builder_flag_that_is_not_a_bool_is_refused_naming_the_builder_and_argument(
    build: Any, says: str
) -> None:
    """A builder took its flags for their truth: checkbox("C", "no") was checked, a falsy
    disabled=0 or None passed unnoticed, while node refuses a State flag that is no bool."""
    with pytest.raises(TypeError, match=re.escape(says)):
        build()


def test_a_checkbox_whose_checked_and_state_disagree_is_refused() -> None:
    """state=State(checked=Checked.MIXED) was silently overridden by checked=False."""
    with pytest.raises(ValueError, match=re.escape("checked=False and state=State(checked=Ch")):
        checkbox("C", False, state=State(checked=Checked.MIXED))


def test_a_field_read_only_by_its_state_is_not_offered_set_text_and_refuses_it() -> None:
    typed = send("typed")

    def view(_model: Any) -> View[Any]:
        return group(
            text_field("Arg", "a", on_set_text=lambda t: t, read_only=True),
            text_field("State", "s", on_set_text=lambda t: t, state=State(read_only=True)),
            node(
                Role.TEXT_FIELD,
                label="Node",
                value="n",
                editable=True,
                handlers={K.SET_TEXT: typed},
                state=State(read_only=True),
            ),
            label="form",
        )

    rt = make(view, init="")
    f = full(rt)
    for label in ("Arg", "State", "Node"):
        field = by_label(f, label)
        assert field.state.read_only, label
        assert field.text is not None, label
        assert not field.text.editable, label
        assert K.SET_TEXT not in field.actions, label
        refused = rt.perform(ByNodeId(field.node_id), SetText("changed"), NOW)
        assert isinstance(refused, Rejection), label
        assert refused.code is ErrorCode.ACTION_UNAVAILABLE, label
    assert K.SET_SELECTION in by_label(f, "State").actions  # its text can still be selected
    assert rt.generation == f.generation


@pytest.mark.parametrize("declared", ["argument", "state"])
def test_a_field_disabled_by_its_state_refuses_set_text_as_one_disabled_by_argument(
    declared: str,
) -> None:
    disabled = {"disabled": True} if declared == "argument" else {"state": State(disabled=True)}
    rt = make(lambda _: text_field("Name", "", on_set_text=lambda t: t, **disabled), init="")
    name = by_label(full(rt), "Name")
    assert name.state.disabled
    assert (name.focus_order, K.FOCUS in name.actions) == (None, False)
    refused = rt.perform(ByNodeId(name.node_id), SetText("x"), NOW)
    assert isinstance(refused, Rejection)
    assert refused.code is ErrorCode.TARGET_DISABLED
