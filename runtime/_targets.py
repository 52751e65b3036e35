"""Resolving a target against a committed snapshot: the same rules wherever a tree is served."""

from __future__ import annotations

from typing import Any

from ._actions import (
    ByNodeId,
    ByPath,
    BySemanticId,
    Exact,
    Latest,
    PathStep,
    Precondition,
    Target,
    _shown,
    check_generation,
)
from ._enums import ErrorCode, Role
from ._node import SemanticsNode
from ._outcomes import Rejection
from ._snapshot import SemanticsSnapshot
from ._wire import encode_target


def _reject(code: ErrorCode, message: str, **details: Any) -> Rejection:
    return Rejection(code, message, details)


def _matches(node: SemanticsNode, step: PathStep) -> bool:
    return (
        (step.role is None or node.role is step.role)
        and (step.label is None or node.label == step.label)
        and (step.value is None or node.value == step.value)
        and (step.semantic_id is None or node.semantic_id == step.semantic_id)
    )


def check_precondition(precondition: Precondition, generation: int) -> Rejection | None:
    """``stale_generation`` when an exact precondition names another generation.

    Raises ``TypeError`` for a `precondition` that is no `Latest` or `Exact` (an int given
    for ``Exact(n)`` passed as latest) or a `generation` that is no int."""
    if not isinstance(precondition, Latest | Exact):
        raise TypeError(f"precondition: expected Latest or Exact, got {_shown(precondition)}")
    check_generation(generation, "generation")
    if isinstance(precondition, Exact) and precondition.generation != generation:
        return _reject(
            ErrorCode.STALE_GENERATION,
            f"expected generation {precondition.generation}, current is {generation}",
            expected=str(precondition.generation),
            current=str(generation),
        )
    return None


def resolve_target(
    target: Target, snapshot: SemanticsSnapshot, next_node_id: int | None = None
) -> SemanticsNode | Rejection:
    """The node `target` names in `snapshot`, or the rejection that says why none.

    Ambiguity is checked before absence; a path never wraps or clamps an index. With
    `next_node_id`, the id the session gives out next, a node id below it that is not in
    the tree was given out: node ids are never reused, so if the agent read it, its node
    was removed or hidden since, and it is no typo (an element no read shows, a layout
    wrapper, has an id too, so "if"). Raises
    ``TypeError`` for a `target` that is no `BySemanticId`, `ByNodeId` or `ByPath` (a str
    failed as "'str' object has no attribute 'steps'"), a `snapshot` that is no
    `SemanticsSnapshot` or a `next_node_id` that is no int.
    """
    if not isinstance(target, BySemanticId | ByNodeId | ByPath):
        raise TypeError(
            f"target: expected BySemanticId or ByNodeId or ByPath, got {_shown(target)}"
        )
    if not isinstance(snapshot, SemanticsSnapshot):
        raise TypeError(f"snapshot: expected a SemanticsSnapshot, got {_shown(snapshot)}")
    if next_node_id is not None:
        check_generation(next_node_id, "next_node_id")
    echoed = encode_target(target)
    if isinstance(target, BySemanticId):
        found = snapshot.find(target.id)
        if len(found) > 1:
            return _reject(
                ErrorCode.TARGET_AMBIGUOUS,
                f"{len(found)} nodes carry the semantic id {target.id!r}",
                semantic_id=str(target.id),
            )
        if not found:
            return _not_found("no node has that semantic id", snapshot, echoed)
        return snapshot.nodes[found[0]]
    if isinstance(target, ByNodeId):
        node = snapshot.node(target.id)
        if node is None:
            given_out = next_node_id is not None and target.id < next_node_id
            left = target.id if given_out else None
            return _not_found("no node has that id", snapshot, echoed, left)
        return node
    return _resolve_path(target, snapshot, echoed)


def _not_found(
    message: str, snapshot: SemanticsSnapshot, echoed: dict[str, Any], left: int | None = None
) -> Rejection:
    """``target_not_found``, saying so when a modal is the tree: what is behind it is out
    of the tree until it closes, so an id the agent read before may be there still; else,
    for `left`, a node id given out before, that if it was read its node left the tree."""
    root = None if snapshot.root is None else snapshot.nodes[snapshot.root]
    if root is not None and root.state.modal:
        message += (
            f" in the tree: a modal {root.role.value} (node {root.node_id}) is open, and only"
            " what it holds can be targeted until it closes"
        )
    elif left is not None:
        message = (
            f"no node has that id now: if node {left} was read before, it was removed or"
            " hidden since (node ids are never reused); read again"
        )
    return _reject(ErrorCode.TARGET_NOT_FOUND, message, target=echoed)


def path_refusal(target: ByPath) -> Rejection | None:
    """``invalid_arguments`` for a path no tree could resolve (no steps, a step with no
    filter, a negative index, a filter on role none): decided before anything else about
    the request, whatever the generation or the session's state."""
    if not target.steps:
        return _reject(ErrorCode.INVALID_ARGUMENTS, "a path needs at least one step")
    for number, step in enumerate(target.steps):
        if not step.has_filter():
            return _reject(ErrorCode.INVALID_ARGUMENTS, f"path step {number} has no filter")
        if step.index < 0:
            return _reject(ErrorCode.INVALID_ARGUMENTS, f"path step {number} has a negative index")
        if step.role is Role.NONE:
            return _reject(ErrorCode.INVALID_ARGUMENTS, f"path step {number} filters on role none")
    return None


def _resolve_path(
    target: ByPath, snapshot: SemanticsSnapshot, echoed: dict[str, Any]
) -> SemanticsNode | Rejection:
    refused = path_refusal(target)
    if refused is not None:
        return refused
    if snapshot.root is None:
        return _reject(ErrorCode.TARGET_NOT_FOUND, "the tree is empty", target=echoed)
    current = snapshot.nodes[snapshot.root]
    for number, step in enumerate(target.steps):
        matches = [
            child
            for child_id in current.children
            if _matches(child := snapshot.nodes[child_id], step)
        ]
        if step.index >= len(matches):
            return _not_found(
                f"path step {number} matched {len(matches)} node(s), index {step.index}",
                snapshot,
                echoed,
            )
        current = matches[step.index]
    return current
