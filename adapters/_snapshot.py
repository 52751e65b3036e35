"""The snapshot model, its rendering and its structural hash (seed §2, SPEC §7)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Final, Literal, get_args

import attrs

from ._errors import DataError
from ._roles import ARIA_ROLES
from ._wire import limits

NodeState = Literal[
    "disabled", "checked", "unchecked", "selected", "expanded",
    "collapsed", "focused", "required", "hidden", "readonly",
]  # fmt: skip
NODE_STATES: Final[tuple[str, ...]] = get_args(NodeState)

MAX_RENDERED_CHARS: Final = 120
ELLIPSIS: Final = "…"


@attrs.frozen(kw_only=True)
class SnapshotNode:
    """One element of the normalised semantic tree.

    ``role`` is an ARIA role (see ``to_aria``); ``ref`` is opaque above the surface;
    ``native`` carries adapter extras only candidate synthesis reads."""

    ref: str = attrs.field(metadata=limits(minLength=1))
    role: str = attrs.field(metadata=limits(minLength=1))
    name: str | None = None
    value: str | None = None
    description: str | None = None
    states: tuple[NodeState, ...] = attrs.field(default=(), metadata=limits(uniqueItems=True))
    box: tuple[float, float, float, float] | None = None
    depth: int = attrs.field(metadata=limits(minimum=0))
    parent: str | None = None
    native: Mapping[str, str] = attrs.field(factory=dict, hash=False)


@attrs.frozen
class Snapshot:
    """The tree ``snapshot()`` returns: nodes in document order, their rendering, a token
    estimate and the structural hash. Build it with ``build_snapshot``."""

    ref: str
    nodes: tuple[SnapshotNode, ...]
    text: str
    tokens_estimate: int = attrs.field(metadata=limits(minimum=0))
    hash: str


def _cut(text: str) -> str:
    if len(text) <= MAX_RENDERED_CHARS:
        return text
    return text[: MAX_RENDERED_CHARS - 1] + ELLIPSIS


def _escape_name(name: str) -> str:
    return name.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _escape_value(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n")


def visible_nodes(nodes: Sequence[SnapshotNode]) -> Iterator[SnapshotNode]:
    """The nodes a reader sees: each hidden node and everything below it are left out."""
    hidden_depth: int | None = None
    for node in nodes:
        if hidden_depth is not None:
            if node.depth > hidden_depth:
                continue
            hidden_depth = None
        if "hidden" in node.states:
            hidden_depth = node.depth
            continue
        yield node


def render_node(node: SnapshotNode) -> str:
    """One line of the rendering, without the check for hidden ancestors."""
    parts = ["  " * node.depth, "- ", node.role]
    if node.name:
        parts.append(f' "{_escape_name(_cut(node.name))}"')
    if node.value:
        parts.append(f": {_escape_value(_cut(node.value))}")
    if node.states:
        parts.append(f" [{', '.join(sorted(set(node.states)))}]")
    parts.append(f" [ref={node.ref}]")
    return "".join(parts)


def render_snapshot(nodes: Sequence[SnapshotNode]) -> str:
    """The text every adapter's prompt input reads the same way.

    One line per node: two spaces per depth, ``- role``, `` "name"`` when the name is
    non-empty (``\\``, ``"`` and newline escaped), ``: value`` when non-empty (``\\`` and
    newline escaped, so a node stays one line), `` [states]`` sorted and joined by ``, ``,
    then `` [ref=R]``. Names and values longer than 120 characters are cut to 120, the last
    being ``…``; the cut counts characters before escaping. A node with the ``hidden``
    state leaves the text, and so does everything below it (the nodes after it that are
    deeper). Lines are joined by ``\\n`` with none trailing."""
    return "\n".join(render_node(node) for node in visible_nodes(nodes))


def name_bucket(name: str | None) -> str:
    """The name-length bucket the structural hash keeps instead of the name."""
    length = len(name or "")
    if length == 0:
        return "0"
    if length <= 8:
        return "1-8"
    if length <= 32:
        return "9-32"
    return "33+"


def structural_hash(nodes: Sequence[SnapshotNode]) -> str:
    """sha256 (hex) of the tree's structure (LLD §6.2), adapter-neutral.

    One line per node: two spaces per depth, the role, a space, the name-length bucket
    (``0``, ``1-8``, ``9-32``, ``33+``) and `` [states]`` sorted and joined by ``,`` when
    there are states; lines joined by ``\\n``. Values, descriptions, boxes, refs, parents and
    native extras are left out, so a value change keeps the hash. Hidden nodes and their
    descendants ARE included: hiding is structure (the ``hidden`` state is in the line),
    unlike the rendering, which is about what an agent can see."""
    lines = []
    for node in nodes:
        line = f"{'  ' * node.depth}{node.role} {name_bucket(node.name)}"
        if node.states:
            line += f" [{','.join(sorted(set(node.states)))}]"
        lines.append(line)
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()


def tokens_estimate(text: str) -> int:
    """ceil(len(text) / 4)."""
    return (len(text) + 3) // 4


_STATES: Final = frozenset(NODE_STATES)
_OPPOSED: Final = (("checked", "unchecked"), ("expanded", "collapsed"))


def structure_problems(
    root_ref: str, nodes: Sequence[SnapshotNode], *, changed: Iterable[int] | None = None
) -> list[DataError]:
    """What is wrong with the tree (surface.md §3), each naming the node by index and ref:
    no nodes at all; a first node that is not the root, or not at depth 0; an empty or
    duplicate ref; a role that is not an ARIA one; a state that is not one of the ten, is
    repeated, or contradicts another (``checked`` with ``unchecked``, ``expanded`` with
    ``collapsed``); a depth that is not 1 to one more than the node's before it (a second
    node at depth 0 makes a forest, of which a reader sees the first tree alone); a parent
    that is not the nearest shallower node before the child, or none given for a node other
    than the root (a reader going by parents would lose the node and all below it).

    `changed` says the tree is one found to have no problems, with the same root, but for
    the nodes at those indices, each with the ref, depth and parent it had there: only
    their own role and states can be wrong, and only they are checked (a read of a large
    page checks what changed on it)."""
    if changed is not None and nodes and nodes[0].ref == root_ref:
        return [p for i in changed for p in _node_problems(nodes[i], f"nodes[{i}]")]
    if not nodes:
        empty = f"is empty: a snapshot holds at least its root {root_ref!r}"
        return [DataError(empty, path="nodes")]
    problems: list[DataError] = []
    if nodes[0].ref != root_ref:
        problems.append(
            DataError(f"first node is {nodes[0].ref!r}, not the root {root_ref!r}", path="ref")
        )
    seen: set[str] = set()
    ancestors: list[SnapshotNode] = []
    for index, node in enumerate(nodes):
        at = f"nodes[{index}]"
        problems.extend(_node_problems(node, at))
        if node.ref in seen:
            problems.append(DataError(f"duplicate ref {node.ref!r}", path=f"{at}.ref"))
        seen.add(node.ref)
        depth = _depth_problem(node, nodes[index - 1] if index else None)
        if depth is not None:
            problems.append(DataError(depth, path=f"{at}.depth"))
        while ancestors and ancestors[-1].depth >= node.depth:
            ancestors.pop()
        expected = ancestors[-1].ref if ancestors else None
        if node.parent is None and expected is not None:
            problems.append(
                DataError(
                    f"node {node.ref!r} names no parent: every node but the root names its own"
                    f" (here {expected!r})",
                    path=f"{at}.parent",
                )
            )
        elif node.parent != expected:
            problems.append(
                DataError(
                    f"parent {node.parent!r} is not the nearest shallower node before it"
                    f" ({expected!r})",
                    path=f"{at}.parent",
                )
            )
        ancestors.append(node)
    return problems


def _node_problems(node: SnapshotNode, at: str) -> Iterator[DataError]:
    """What is wrong with `node` on its own: its ref, its role, its states."""
    if not isinstance(node.ref, str) or not node.ref:
        yield DataError(f"expected a non-empty string, got {node.ref!r}", path=f"{at}.ref")
    if not isinstance(node.role, str) or node.role not in ARIA_ROLES:
        yield DataError(
            f"node {node.ref!r}: {node.role!r} is not an ARIA role (map the platform's role"
            " with to_aria, which makes one it does not know 'generic')",
            path=f"{at}.role",
        )
    states = node.states
    if not states:
        return
    for i, state in enumerate(states):
        if state not in _STATES:
            yield DataError(
                f"node {node.ref!r}: {state!r} is not a state; expected one of"
                f" {', '.join(NODE_STATES)}",
                path=f"{at}.states[{i}]",
            )
        elif state in states[:i]:
            yield DataError(f"node {node.ref!r}: {state!r} is repeated", path=f"{at}.states[{i}]")
    for one, other in _OPPOSED:
        if one in states and other in states:
            yield DataError(
                f"node {node.ref!r} is both {one!r} and {other!r}", path=f"{at}.states"
            )


def _depth_problem(node: SnapshotNode, before: SnapshotNode | None) -> str | None:
    """Why `node`, after `before` (None for the root), is at a depth it cannot be."""
    depth = node.depth
    if before is None:
        if depth != 0:
            return f"the root {node.ref!r} is at depth {depth!r}, not 0"
        return None
    if not isinstance(depth, int) or depth < 1:
        return (
            f"node {node.ref!r} is at depth {depth!r}, beside the root: a snapshot is one tree,"
            " every node below its first"
        )
    if depth > before.depth + 1:
        return (
            f"node {node.ref!r} is at depth {depth}, more than one below the node before it"
            f" ({before.ref!r}, at {before.depth})"
        )
    return None


def build_snapshot(root_ref: str, nodes: Iterable[SnapshotNode]) -> Snapshot:
    """A Snapshot with its text, token estimate and hash computed from ``nodes``.

    Raises DataError for a malformed tree (see ``structure_problems``)."""
    node_tuple = tuple(nodes)
    problems = structure_problems(root_ref, node_tuple)
    if problems:
        raise problems[0]
    text = render_snapshot(node_tuple)
    return Snapshot(
        ref=root_ref,
        nodes=node_tuple,
        text=text,
        tokens_estimate=tokens_estimate(text),
        hash=structural_hash(node_tuple),
    )


def snapshot_problems(snapshot: Snapshot) -> list[DataError]:
    """Everything in ``snapshot`` that ``build_snapshot`` would have computed differently:
    the structure, the text, the token estimate and the hash. Empty when it is sound."""
    problems = structure_problems(snapshot.ref, snapshot.nodes)
    text = render_snapshot(snapshot.nodes)
    if snapshot.text != text:
        problems.append(DataError("does not match render_snapshot(nodes)", path="text"))
    if snapshot.tokens_estimate != tokens_estimate(snapshot.text):
        problems.append(DataError("is not ceil(len(text) / 4)", path="tokens_estimate"))
    if snapshot.hash != structural_hash(snapshot.nodes):
        problems.append(DataError("does not match structural_hash(nodes)", path="hash"))
    return problems
