"""The snapshot model, its rendering and its structural hash (seed §2, SPEC §7)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Final, Literal, get_args

import attrs

from ._errors import DataError
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


def structure_problems(root_ref: str, nodes: Sequence[SnapshotNode]) -> list[DataError]:
    """What is wrong with the tree's shape: duplicate refs, a first node that is not the
    root, a parent that is not the nearest shallower node before the child."""
    problems: list[DataError] = []
    if nodes and nodes[0].ref != root_ref:
        problems.append(
            DataError(f"first node is {nodes[0].ref!r}, not the root {root_ref!r}", path="ref")
        )
    seen: set[str] = set()
    ancestors: list[SnapshotNode] = []
    for index, node in enumerate(nodes):
        if node.ref in seen:
            problems.append(DataError(f"duplicate ref {node.ref!r}", path=f"nodes[{index}].ref"))
        seen.add(node.ref)
        while ancestors and ancestors[-1].depth >= node.depth:
            ancestors.pop()
        if node.parent is not None:
            expected = ancestors[-1].ref if ancestors else None
            if node.parent != expected:
                problems.append(
                    DataError(
                        f"parent {node.parent!r} is not the nearest shallower node before it"
                        f" ({expected!r})",
                        path=f"nodes[{index}].parent",
                    )
                )
        ancestors.append(node)
    return problems


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
