"""A stateful property test: random views, random mutations, actions and reads (SPEC §2.5–§3).

The oracle for every commit is a fresh runtime built from the same model: incremental reconcile
must publish the same tree (up to node ids and focus) as a from-scratch build.
"""

from __future__ import annotations

import itertools
from typing import Any

import attrs
import hypothesis.strategies as st
from hypothesis import settings
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from semledger.runtime import (
    ActionKind,
    App,
    AppRuntime,
    ByNodeId,
    ByPath,
    BySemanticId,
    Composition,
    Delta,
    DuplicateSemanticId,
    ErrorCode,
    Exact,
    Full,
    Latest,
    PathStep,
    Proposal,
    Receipt,
    Rejection,
    Role,
    SemanticId,
    SemanticsAction,
    SemanticsNode,
    SemanticsSnapshot,
    SetText,
    SimpleAction,
    State,
    Unchanged,
    View,
    apply_delta,
    column,
    lazy,
    node,
)

ROLES = [Role.NONE, Role.GROUP, Role.BUTTON, Role.TEXT, Role.CHECKBOX, Role.TEXT_FIELD, Role.LIST]
LABELS = [None, "a", "b", "c", "a b"]
SIDS = [None, "x", "y", "z", "漢"]
COMPOSITIONS = [
    Composition.TRANSPARENT,
    Composition.BOUNDARY,
    Composition.BOUNDARY,
    Composition.BOUNDARY,
    Composition.MERGE_DESCENDANTS,
    Composition.HIDDEN,
]
ACTIONS = [ActionKind.ACTIVATE, ActionKind.FOCUS, ActionKind.EXPAND, ActionKind.SET_TEXT]


@attrs.frozen
class MNode:
    uid: int
    role: Role = Role.GROUP
    label: str | None = None
    value: str | None = None
    sid: str | None = None
    comp: Composition = Composition.TRANSPARENT
    modal: bool = False
    disabled: bool = False
    children: tuple[MNode, ...] = ()


Forest = tuple[MNode, ...]


@attrs.frozen
class Replace:
    model: Forest


@attrs.frozen
class Toggle:
    uid: int


@attrs.frozen
class Typed:
    uid: int
    value: str


@attrs.frozen
class At:
    """A top-level node's message, mapped by the node's position, as a list maps its rows."""

    index: int
    msg: Toggle | Typed


def edit(forest: Forest, uid: int, f: Any) -> Forest:
    out = []
    for n in forest:
        if n.uid == uid:
            out.append(f(n))
        else:
            out.append(attrs.evolve(n, children=edit(n.children, uid, f)))
    return tuple(out)


def update(model: Forest, msg: Any) -> Forest:
    if isinstance(msg, At):
        owner = model[msg.index]
        assert msg.msg.uid in uids((owner,)), f"{msg} reached the subtree of {owner.uid}"
        msg = msg.msg
    if isinstance(msg, Replace):
        return msg.model
    if isinstance(msg, Toggle):
        return edit(
            model, msg.uid, lambda n: attrs.evolve(n, value="on" if n.value != "on" else "off")
        )
    assert isinstance(msg, Typed)
    return edit(model, msg.uid, lambda n: attrs.evolve(n, value=msg.value))


def typed(uid: int) -> Any:
    def handle(action: SemanticsAction) -> Proposal[Any] | None:
        if isinstance(action, SetText):
            return Proposal((Typed(uid, action.value),))
        return None

    return handle


def build(n: MNode, path: str) -> View[Any]:
    here = f"{path}/{n.uid}"
    handlers: dict[ActionKind, Any] = {}
    if n.role in (Role.BUTTON, Role.CHECKBOX):
        handlers[ActionKind.ACTIVATE] = lambda _a: Proposal((Toggle(n.uid),))
    if n.role is Role.TEXT_FIELD:
        handlers[ActionKind.SET_TEXT] = typed(n.uid)
    return node(
        n.role,
        *(build(c, here) for c in n.children),
        key=n.uid,
        label=n.label,
        value=n.value,
        semantic_id=n.sid,
        description=here,
        composition=n.comp,
        state=State(modal=n.modal, disabled=n.disabled),
        handlers=handlers,
    )


def top(n: MNode, index: int) -> View[Any]:
    """A top-level node, mapped by its position; every other one is lazy, so that a move
    keeps its subtree, and must not keep the mapping of where it was."""
    built = build(n, "") if n.uid % 2 else lazy(n, lambda: (build(n, ""),), key=n.uid)
    return built.map(lambda msg: At(index, msg))


def view(model: Forest) -> View[Any]:
    return column(*(top(n, index) for index, n in enumerate(model)))


def make(model: Forest) -> AppRuntime[Forest, Any]:
    return AppRuntime(App(init=lambda: model, update=update, view=view))


def canonical(f: Full) -> tuple[Any, ...]:
    """The published tree without node ids or focus: what a fresh build must reproduce."""
    by_id = {n.node_id: n for n in f.nodes}

    def name(node_id: int) -> str:
        return by_id[node_id].description or "<synthetic>"

    def shape(n: SemanticsNode) -> tuple[Any, ...]:
        state = attrs.evolve(n.state, focused=False)
        return (
            n.description,
            n.role,
            n.label,
            n.value,
            n.semantic_id,
            state,
            n.actions,
            n.frame,
            n.text,
            tuple(shape(by_id[c]) for c in n.children),
        )

    issues = sorted(
        (i.semantic_id, tuple(sorted(name(x) for x in i.nodes)))
        for i in f.issues
        if isinstance(i, DuplicateSemanticId)
    )
    return (None if f.root is None else shape(by_id[f.root]), issues, len(f.issues))


def content(f: Full) -> tuple[Any, ...]:
    return (f.root, f.focused, f.nodes, f.issues)


def uids(forest: Forest) -> list[int]:
    return [u for n in forest for u in (n.uid, *uids(n.children))]


def find(forest: Forest, uid: int) -> MNode:
    for n in forest:
        if n.uid == uid:
            return n
        for m in (find((c,), uid) for c in n.children):
            if m is not None:
                return m
    return None  # type: ignore[return-value]


def detach(forest: Forest, uid: int) -> Forest:
    return tuple(attrs.evolve(n, children=detach(n.children, uid)) for n in forest if n.uid != uid)


def insert(forest: Forest, parent: int | None, index: int, new: MNode) -> Forest:
    if parent is None:
        items = list(forest)
        items.insert(index % (len(items) + 1), new)
        return tuple(items)
    return edit(
        forest, parent, lambda n: attrs.evolve(n, children=insert(n.children, None, index, new))
    )


node_fields = st.fixed_dictionaries(
    {
        "role": st.sampled_from(ROLES),
        "label": st.sampled_from(LABELS),
        "value": st.sampled_from([None, "1", "on"]),
        "sid": st.sampled_from(SIDS),
        "comp": st.sampled_from(COMPOSITIONS),
    }
)


def _shapes() -> st.SearchStrategy[Any]:
    leaf = node_fields.map(lambda f: (f, ()))
    return st.recursive(
        leaf,
        lambda kids: st.tuples(node_fields, st.lists(kids, max_size=4).map(tuple)),
        max_leaves=14,
    )


forests = st.lists(_shapes(), min_size=1, max_size=3)


class RuntimeMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.next_uid = itertools.count(1)
        first = MNode(next(self.next_uid), Role.GROUP, label="root", comp=Composition.BOUNDARY)
        self.rt = make((first,))
        self.history: dict[int, SemanticsSnapshot] = {0: SemanticsSnapshot.empty()}
        self.last: Full = self.full()
        self.history[self.last.generation] = self.rt.snapshot
        self.identity: dict[int, str] = {}
        self.latest_for_path: dict[str, int] = {}
        self.record_ids(self.last)

    @initialize(shapes=forests)
    def start_from_a_random_forest(self, shapes: list[Any]) -> None:
        def grow(shape: Any) -> MNode:
            fields, kids = shape
            uid = next(self.next_uid)
            return MNode(uid, **fields, children=tuple(grow(k) for k in kids))

        self.replace(tuple(grow(shape) for shape in shapes))

    # ---- helpers -------------------------------------------------------------------------

    def full(self) -> Full:
        result = self.rt.read()
        assert isinstance(result, Full)
        return result

    def record_ids(self, f: Full) -> None:
        for n in f.nodes:
            who = n.description or "<synthetic>"
            assert self.identity.setdefault(n.node_id, who) == who, (n.node_id, who)
            if n.description is not None:
                newest = self.latest_for_path.get(who, 0)
                assert n.node_id >= newest, f"old id {n.node_id} came back for {who}"
                self.latest_for_path[who] = n.node_id

    def replace(self, model: Forest) -> None:
        self.rt.deliver(Replace(model))

    def pick(self, data: st.DataObject) -> int | None:
        all_uids = uids(self.rt.model)
        if not all_uids:
            return None
        return data.draw(st.sampled_from(all_uids))

    # ---- mutations -----------------------------------------------------------------------

    @rule(data=st.data(), fields=node_fields)
    def change_node(self, data: st.DataObject, fields: dict[str, Any]) -> None:
        uid = self.pick(data)
        if uid is None:
            return
        key = data.draw(st.sampled_from(sorted(fields)))
        self.replace(edit(self.rt.model, uid, lambda n: attrs.evolve(n, **{key: fields[key]})))

    @rule(data=st.data())
    def toggle_flag(self, data: st.DataObject) -> None:
        uid = self.pick(data)
        if uid is None:
            return
        flag = data.draw(st.sampled_from(["modal", "disabled", "hidden"]))
        if flag == "hidden":

            def f(n: MNode) -> MNode:
                hidden = n.comp is Composition.HIDDEN
                return attrs.evolve(n, comp=Composition.BOUNDARY if hidden else Composition.HIDDEN)
        else:

            def f(n: MNode) -> MNode:
                return attrs.evolve(n, **{flag: not getattr(n, flag)})

        self.replace(edit(self.rt.model, uid, f))

    @rule(data=st.data(), fields=node_fields, index=st.integers(0, 5))
    def insert_node(self, data: st.DataObject, fields: dict[str, Any], index: int) -> None:
        if len(uids(self.rt.model)) > 25:
            return
        parent = data.draw(st.none() | st.sampled_from(uids(self.rt.model) or [0]))
        parent = None if parent == 0 else parent
        new = MNode(next(self.next_uid), **fields)
        self.replace(insert(self.rt.model, parent, index, new))

    @rule(data=st.data())
    def remove_node(self, data: st.DataObject) -> None:
        uid = self.pick(data)
        if uid is not None:
            self.replace(detach(self.rt.model, uid))

    @rule(data=st.data(), index=st.integers(0, 5))
    def move_node(self, data: st.DataObject, index: int) -> None:
        uid = self.pick(data)
        if uid is None:
            return
        moving = find(self.rt.model, uid)
        rest = detach(self.rt.model, uid)
        inside = set(uids((moving,)))
        targets = [u for u in uids(rest) if u not in inside]
        parent = data.draw(st.none() | st.sampled_from(targets or [0]))
        self.replace(insert(rest, None if parent == 0 else parent, index, moving))

    @rule(data=st.data())
    def reorder_children(self, data: st.DataObject) -> None:
        uid = self.pick(data)
        model = self.rt.model
        if uid is None or data.draw(st.booleans()):
            self.replace(tuple(data.draw(st.permutations(model))))
            return
        self.replace(
            edit(
                model,
                uid,
                lambda n: attrs.evolve(n, children=tuple(data.draw(st.permutations(n.children)))),
            )
        )

    # ---- actions and reads ---------------------------------------------------------------

    @rule(
        data=st.data(),
        kind=st.sampled_from(ACTIONS),
        offset=st.none() | st.just(0) | st.integers(-2, 1),
    )
    def act(self, data: st.DataObject, kind: ActionKind, offset: int | None) -> None:
        before = self.full()
        ids = [n.node_id for n in before.nodes]
        target_kind = data.draw(st.sampled_from(["offered", "node", "sid", "path"]))
        target: Any
        action: SemanticsAction = (
            SetText("typed") if kind is ActionKind.SET_TEXT else SimpleAction(kind)
        )
        if target_kind == "offered" and any(n.actions for n in before.nodes):
            chosen = data.draw(st.sampled_from([n for n in before.nodes if n.actions]))
            kind = data.draw(st.sampled_from(chosen.actions))
            action = SetText("typed") if kind is ActionKind.SET_TEXT else SimpleAction(kind)
            target = ByNodeId(chosen.node_id)
        elif target_kind in ("node", "offered"):
            target = ByNodeId(data.draw(st.sampled_from([*ids, self.rt.next_node_id + 3])))
        elif target_kind == "sid":
            target = BySemanticId(SemanticId(data.draw(st.sampled_from([s for s in SIDS if s]))))
        else:
            steps = data.draw(
                st.lists(
                    st.builds(
                        PathStep,
                        index=st.integers(0, 2),
                        role=st.none() | st.sampled_from(ROLES[1:]),
                        label=st.none() | st.sampled_from(LABELS[1:]),
                        semantic_id=st.none() | st.sampled_from([SemanticId(s) for s in SIDS if s]),
                    ).filter(PathStep.has_filter),
                    min_size=1,
                    max_size=3,
                )
            )
            target = ByPath(tuple(steps))
        precondition = Latest() if offset is None else Exact(max(before.generation + offset, 0))
        model = self.rt.model
        result = self.rt.perform(target, action, precondition)
        if isinstance(result, Rejection):
            assert result.code in set(ErrorCode) - {
                ErrorCode.HOST_CLOSED,
                ErrorCode.REENTRANT_DISPATCH,
            }
            if result.code is ErrorCode.STALE_GENERATION:
                assert result.details == {
                    "expected": str(precondition.generation),  # type: ignore[union-attr]
                    "current": str(before.generation),
                }
            assert self.rt.model == model
            assert content(self.full()) == content(before)
            assert self.rt.generation == before.generation
        else:
            assert isinstance(result, Receipt)
            assert result.before == before.generation
            assert result.after == self.rt.generation
            assert not result.pending_work
            if offset is not None:
                assert precondition.generation == before.generation  # type: ignore[union-attr]

    @rule(data=st.data())
    def read_since(self, data: st.DataObject) -> None:
        current = self.rt.generation
        since = data.draw(st.integers(0, current + 3) | st.sampled_from([current, 2**64 - 1]))
        result = self.rt.read(since)
        if since == current:
            assert result == Unchanged(current)
        elif since < current and current - since <= 64:
            assert isinstance(result, Delta)
            self.check_delta(result, self.history[since])
        else:
            assert isinstance(result, Full)
            assert content(result) == content(self.full())
        assert self.rt.generation == current

    def check_delta(self, delta: Delta, old: SemanticsSnapshot) -> None:
        now = self.full()
        assert (delta.from_generation, delta.to_generation) == (old.generation, now.generation)
        assert (delta.root, delta.focused, delta.issues) == (now.root, now.focused, now.issues)
        old_nodes = {n.node_id: n for n in old.full().nodes}
        new_nodes = {n.node_id: n for n in now.nodes}
        assert set(delta.removed) == set(old_nodes) - set(new_nodes)
        assert len(delta.removed) == len(set(delta.removed))
        expected_upserts = [n for n in now.nodes if old_nodes.get(n.node_id) != n]
        assert list(delta.upserted) == expected_upserts
        rebuilt = dict(old_nodes)
        for gone in delta.removed:
            del rebuilt[gone]
        rebuilt.update((n.node_id, n) for n in delta.upserted)
        assert rebuilt == new_nodes
        applied = apply_delta(old, delta)
        assert content(applied.full()) == content(now)
        assert dict(applied.nodes.items()) == new_nodes

    # ---- invariants ----------------------------------------------------------------------

    @invariant()
    def generation_advances_exactly_when_the_snapshot_changes(self) -> None:
        now = self.full()
        changed = content(now) != content(self.last)
        assert now.generation == self.last.generation + (1 if changed else 0)
        self.last = now
        self.history[now.generation] = self.rt.snapshot

    @invariant()
    def the_full_is_a_well_formed_tree(self) -> None:
        f = self.full()
        ids = [n.node_id for n in f.nodes]
        assert len(ids) == len(set(ids))
        if f.root is None:
            assert f.nodes == ()
            assert f.focused is None
            return
        assert f.nodes[0].node_id == f.root
        children = [c for n in f.nodes for c in n.children]
        assert sorted(children) == sorted(ids[1:])
        focused = [n.node_id for n in f.nodes if n.state.focused]
        assert focused == ([] if f.focused is None else [f.focused])
        sids: dict[str, list[int]] = {}
        for n in f.nodes:
            if n.semantic_id is not None:
                sids.setdefault(n.semantic_id, []).append(n.node_id)
        duplicates = {(s, tuple(sorted(v))) for s, v in sids.items() if len(v) > 1}
        assert {
            (i.semantic_id, i.nodes) for i in f.issues if isinstance(i, DuplicateSemanticId)
        } == duplicates
        self.record_ids(f)

    @invariant()
    def incremental_reconcile_matches_a_fresh_build(self) -> None:
        fresh = make(self.rt.model).read()
        assert isinstance(fresh, Full)
        assert canonical(self.full()) == canonical(fresh)


RuntimeMachine.TestCase.settings = settings(max_examples=40, stateful_step_count=30, deadline=None)
test_runtime_state_machine = RuntimeMachine.TestCase
