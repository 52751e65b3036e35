"""A node id read before its node left the tree is told apart from one that never named a
node: node ids are never reused, so the first is stale, not a typo."""

from __future__ import annotations

from semledger.examples import todo
from semledger.runtime import (
    ActionKind,
    AppRuntime,
    ByNodeId,
    BySemanticId,
    ErrorCode,
    Full,
    Latest,
    Receipt,
    Rejection,
    SemanticId,
    SetText,
    SimpleAction,
)

ACTIVATE = SimpleAction(ActionKind.ACTIVATE)


def _node_id(runtime: AppRuntime, semantic_id: str) -> int:
    read = runtime.read(None)
    assert isinstance(read, Full)
    return next(n.node_id for n in read.nodes if n.semantic_id == semantic_id)


def _refused(runtime: AppRuntime, node_id: int) -> Rejection:
    refused = runtime.perform(ByNodeId(node_id), ACTIVATE, Latest())
    assert isinstance(refused, Rejection), refused
    assert refused.code is ErrorCode.TARGET_NOT_FOUND
    assert refused.details == {"target": {"kind": "node_id", "id": str(node_id)}}
    return refused


def test_a_node_id_whose_node_was_removed_is_said_to_have_left_the_tree() -> None:
    runtime = AppRuntime(todo.app)
    field = BySemanticId(SemanticId("todo.input"))
    for text in ("milk", "bread"):
        assert isinstance(runtime.perform(field, SetText(text), Latest()), Receipt)
        submit = SimpleAction(ActionKind.SUBMIT)
        assert isinstance(runtime.perform(field, submit, Latest()), Receipt)
    delete = _node_id(runtime, "todo.item.1.delete")
    assert isinstance(runtime.perform(ByNodeId(delete), ACTIVATE, Latest()), Receipt)

    stale = _refused(runtime, delete)
    assert stale.message == (
        f"no node has that id now: if node {delete} was read before, it was removed or hidden"
        " since (node ids are never reused); read again"
    )
    assert runtime.resolve(ByNodeId(delete)) == stale
    never = _refused(runtime, delete + 10_000)
    assert never.message == "no node has that id"
    # The root column's id was given out, though no read showed it: "if it was read".
    assert _refused(runtime, 1).message.startswith("no node has that id now: if node 1 was")
