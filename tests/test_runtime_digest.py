"""The snapshot hash covers every part of every node: it lists the node's fields by hand
(to keep their order fixed for logs already written), so a field added to a node class and
left out of that list would let replay miss a divergence in it."""

from __future__ import annotations

import enum
from collections.abc import Iterator
from typing import Any

import attrs
import pytest

from semledger.runtime import SemanticId
from semledger.runtime._node import (
    ActionKind,
    Checked,
    Collection,
    DuplicateSemanticId,
    Frame,
    Live,
    NodeState,
    Numeric,
    Point,
    Relation,
    Role,
    SemanticsNode,
    Size,
    TextInfo,
    TextSelection,
)
from semledger.runtime._snapshot import SemanticsSnapshot, node_digest

FULL = SemanticsNode(
    node_id=1,
    semantic_id=SemanticId("form.name"),
    role=Role.TEXT_FIELD,
    children=(2,),
    level=1,
    url="https://example.org/",
    label="Name",
    value="Ada",
    description="Your name",
    state=NodeState(checked=Checked.MIXED, expanded=True),
    numeric=Numeric(1.0, 0.0, 2.0, 0.5, "one"),
    text=TextInfo(TextSelection(0, 1), 1, True),
    collection=Collection(1, 2, 3, 4, 5, 6, 7, 8),
    relations=((Relation.LABELLED_BY, (3,)),),
    live=Live.POLITE,
    atomic=True,
    actions=(ActionKind.ACTIVATE,),
    focus_order=1,
    frame=Frame(Point(1.0, 2.0), Size(3.0, 4.0)),
)
"""A node with every optional part present, so that every leaf field has a value."""


def _other(value: Any) -> Any:
    """A value of the same kind that differs from `value`."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, enum.Enum):
        members = list(type(value))
        return members[(members.index(value) + 1) % len(members)]
    if isinstance(value, SemanticId):
        return SemanticId(value + ".other")
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str):
        return value + " (other)"
    if isinstance(value, tuple):
        return (*value, *value[:1]) if value else (7,)
    raise AssertionError(f"no other value for {value!r}")


def _variants(obj: Any) -> Iterator[tuple[str, Any]]:
    """Each copy of `obj` with one leaf field changed (or an optional part left out),
    named by the field's dotted path."""
    for field in attrs.fields(type(obj)):
        value = getattr(obj, field.name)
        if field.default is None:
            yield field.name, attrs.evolve(obj, **{field.name: None})
        if attrs.has(type(value)):
            for path, changed in _variants(value):
                yield f"{field.name}.{path}", attrs.evolve(obj, **{field.name: changed})
        else:
            yield field.name, attrs.evolve(obj, **{field.name: _other(value)})


VARIANTS = list(_variants(FULL))


def test_every_leaf_field_of_a_node_is_varied() -> None:
    paths = {path for path, _ in VARIANTS}
    assert {"state.modal", "frame.size.height", "text.selection.end"} <= paths
    assert len(paths) > 50


@pytest.mark.parametrize(("path", "variant"), VARIANTS, ids=[path for path, _ in VARIANTS])
def test_changing_any_field_of_a_node_changes_its_digest(path: str, variant: Any) -> None:
    assert variant != FULL
    assert node_digest(variant) != node_digest(FULL), path


def _snapshot() -> SemanticsSnapshot:
    leaf = SemanticsNode(node_id=2, semantic_id=None, role=Role.TEXT)
    return SemanticsSnapshot.empty().derive(
        upserted=[FULL, leaf], removed=[], root=1, focused=None, issues=()
    )


@pytest.mark.parametrize(
    "changes",
    [
        {"root": 2},
        {"focused": 1},
        {"issues": (DuplicateSemanticId(SemanticId("form.name"), (1, 2)),)},
    ],
    ids=["root", "focused", "issues"],
)
def test_the_snapshot_hash_covers_its_root_focus_and_issues(changes: dict[str, Any]) -> None:
    snapshot = _snapshot()
    assert attrs.evolve(snapshot, **changes).hash != snapshot.hash


def test_the_snapshot_hash_of_a_known_tree_and_its_issues_never_changes() -> None:
    """Replay compares every commit's hash with the one logged (SPEC 4): a hash computed
    otherwise by a later version (its issues' node ids hashed another way, say) would make
    every older log diverge. These are the hashes semledger has always given."""
    from semledger.examples import todo
    from semledger.runtime import (
        AmbiguousRelationTarget,
        AppRuntime,
        DuplicateSemanticId,
        MissingRelationTarget,
        Relation,
    )

    runtime = AppRuntime(todo.app)
    for text in ("milk", "eggs"):
        runtime.deliver(todo.EditDraft(text))
        runtime.deliver(todo.Add())
    snapshot = runtime.snapshot
    assert snapshot.issues == (DuplicateSemanticId(SemanticId("todo.item"), (10, 14)),)
    assert snapshot.hash == "874c1104e30303500466c25abd656e7eaa597f9e3238a6d2366afb6aed1c3db5"
    related = attrs.evolve(
        snapshot,
        issues=(
            *snapshot.issues,
            MissingRelationTarget(3, Relation.CONTROLS, SemanticId("a.b")),
            AmbiguousRelationTarget(3, Relation.LABELLED_BY, SemanticId("todo.item"), (10, 14)),
        ),
    )
    assert related.hash == "bd5748aa45a7042bcf2e65753a4a8b142106ded8e28a5bff82c7a33995697224"
