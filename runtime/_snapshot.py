"""The immutable committed snapshot, its indices, and the journal that serves deltas.

Snapshots are persistent maps (HAMTs from `immutables`): committing a change of k nodes
creates O(k log n) new structure and shares the rest with the previous snapshot, so keeping
the last 64 snapshots for delta reads costs little more than keeping one.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Final, TypeVar

import attrs
import immutables
import msgpack

from ._enums import Live
from ._ids import SemanticId
from ._node import (
    AmbiguousRelationTarget,
    Announcement,
    DuplicateSemanticId,
    Issue,
    MissingRelationTarget,
    SemanticsNode,
)
from ._reads import Delta, Full, ReadResult, Unchanged

JOURNAL_SIZE: Final = 64
_HASH_MODULUS: Final = 2**256

H = TypeVar("H", bound=Hashable)


class KeptPositions:
    """Where each child sits in its parent's children, for sorting into tree order, kept from
    one sort to the next.

    A children sequence is indexed the first time one of its children is asked for, so sorting
    k nodes under a parent of n children costs O(n + k), not the O(n k) of a
    ``children.index`` per node. The index is kept while that same sequence object is asked
    about again: a parent that did not change keeps its children from one commit to the next,
    so a change to two rows of a wide list costs a walk up from each row, not a scan of the
    list. Each entry holds its sequence, so no other sequence takes its id while it is kept;
    the sequences are never mutated (a changed parent gets new children).
    """

    def __init__(self, keep: int = 64) -> None:
        self._keep = keep
        self._kept: dict[int, tuple[Sequence[Hashable], dict[Hashable, int]]] = {}

    def of(self, children: Sequence[H], child: H) -> int:
        kept = self._kept
        entry = kept.pop(id(children), None)
        if entry is None:
            entry = (children, self._index(children))
            if len(kept) >= self._keep:
                kept.pop(next(iter(kept), 0), None)
        kept[id(children)] = entry  # (last: the least recently asked goes first)
        return entry[1][child]

    def clear(self) -> None:
        """Forget every index, and the sequences they hold."""
        self._kept.clear()

    @staticmethod
    def _index(children: Sequence[Hashable]) -> dict[Hashable, int]:
        return {c: i for i, c in enumerate(children)}


def _plain(value: object) -> object:
    """Issues and node parts as plain msgpack data, for hashing."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, tuple):  # (node ids, many of them in an issue: taken as they are)
        return [v if type(v) is int else _plain(v) for v in value]
    assert attrs.has(type(value))
    cls: Any = type(value)
    return [_plain(getattr(value, a.name)) for a in attrs.fields(cls)]


def _node_fields(n: SemanticsNode) -> list[object]:
    s, f = n.state, n.frame
    return [
        n.node_id,
        n.semantic_id,
        n.role,
        n.children,
        n.level,
        n.url,
        n.label,
        n.value,
        n.description,
        (
            s.focused,
            s.disabled,
            s.selected,
            s.pressed,
            s.checked,
            s.expanded,
            s.invalid,
            s.required,
            s.read_only,
            s.busy,
            s.multiline,
            s.password,
            s.modal,
        ),
        None if n.numeric is None else _plain(n.numeric),
        None if n.text is None else _plain(n.text),
        None if n.collection is None else _plain(n.collection),
        [(kind, targets) for kind, targets in n.relations],
        n.live,
        n.atomic,
        n.actions,
        n.focus_order,
        (f.origin.x, f.origin.y, f.size.width, f.size.height),
    ]


def node_digest(node: SemanticsNode) -> int:
    """A content digest of one node, combined order-independently into the snapshot hash."""
    packed = msgpack.packb(_node_fields(node))
    return int.from_bytes(hashlib.blake2b(packed, digest_size=32).digest(), "big")


def _issue_key(issue: Issue) -> object:
    return [type(issue).__name__, _plain(issue)]


@attrs.frozen
class SemanticsSnapshot:
    """One committed, immutable view of the semantics tree."""

    generation: int
    root: int | None
    focused: int | None
    nodes: immutables.Map[int, SemanticsNode]
    parents: immutables.Map[int, int]
    by_semantic_id: immutables.Map[SemanticId, tuple[int, ...]]
    issues: tuple[Issue, ...]
    _digest_sum: int = 0

    @classmethod
    def empty(cls) -> SemanticsSnapshot:
        return cls(0, None, None, immutables.Map(), immutables.Map(), immutables.Map(), ())

    def node(self, node_id: int) -> SemanticsNode | None:
        return self.nodes.get(node_id)

    def find(self, semantic_id: str) -> tuple[int, ...]:
        return self.by_semantic_id.get(SemanticId(semantic_id), ()) if semantic_id else ()

    def ordered(self) -> Iterator[SemanticsNode]:
        """Every node in tree order: parents before children, children in order."""
        if self.root is None:
            return
        stack = [self.root]
        nodes = self.nodes
        while stack:
            node = nodes[stack.pop()]
            yield node
            stack.extend(reversed(node.children))

    def sort_in_tree_order(
        self, nodes: list[SemanticsNode], positions: KeptPositions | None = None
    ) -> None:
        """Sort nodes of this snapshot into tree order (parents first, children in order).

        Each node's key is its path of child indices from the root, looked up in
        `positions` (kept by the caller from one sort to the next, see `KeptPositions`).
        """
        if len(nodes) < 2:
            return  # (one node: its key would index every ancestor's children)
        parents, all_nodes = self.parents, self.nodes
        if positions is None:
            positions = KeptPositions()

        def key(node: SemanticsNode) -> tuple[int, ...]:
            path: list[int] = []
            current = node.node_id
            while (parent := parents.get(current)) is not None:
                path.append(positions.of(all_nodes[parent].children, current))
                current = parent
            path.reverse()
            return tuple(path)

        nodes.sort(key=key)

    @property
    def hash(self) -> str:
        """A sha256 over the public content (root, focus, nodes, issues), not the generation."""
        header = msgpack.packb([self.root, self.focused, [_issue_key(i) for i in self.issues]])
        return hashlib.sha256(self._digest_sum.to_bytes(32, "big") + header).hexdigest()

    def full(self) -> Full:
        return Full(self.generation, self.root, self.focused, tuple(self.ordered()), self.issues)

    def derive(
        self,
        *,
        upserted: Iterable[SemanticsNode],
        removed: Iterable[int],
        root: int | None,
        focused: int | None,
        issues: tuple[Issue, ...],
    ) -> SemanticsSnapshot:
        """The next snapshot (generation + 1) after upserting and removing nodes."""
        nodes = self.nodes.mutate()
        parents = self.parents.mutate()
        by_sid = self.by_semantic_id.mutate()
        digest = self._digest_sum

        def drop_sid(node: SemanticsNode) -> None:
            if node.semantic_id is not None:
                remaining = tuple(n for n in by_sid.get(node.semantic_id, ()) if n != node.node_id)
                if remaining:
                    by_sid[node.semantic_id] = remaining
                else:
                    by_sid.pop(node.semantic_id, None)

        for node_id in removed:
            old = nodes.get(node_id)
            if old is None:
                continue
            digest -= node_digest(old)
            drop_sid(old)
            for child in old.children:
                if parents.get(child) == node_id:
                    del parents[child]
            del nodes[node_id]
            parents.pop(node_id, None)
        for node in upserted:
            old = nodes.get(node.node_id)
            if old is not None:
                digest -= node_digest(old)
                if old.semantic_id != node.semantic_id:
                    drop_sid(old)
                for child in old.children:
                    if parents.get(child) == node.node_id:
                        del parents[child]
            if node.semantic_id is not None and (
                old is None or old.semantic_id != node.semantic_id
            ):
                by_sid[node.semantic_id] = tuple(
                    sorted((*by_sid.get(node.semantic_id, ()), node.node_id))
                )
            for child in node.children:
                parents[child] = node.node_id
            nodes[node.node_id] = node
            digest += node_digest(node)
        return SemanticsSnapshot(
            generation=self.generation + 1,
            root=root,
            focused=focused,
            nodes=nodes.finish(),
            parents=parents.finish(),
            by_semantic_id=by_sid.finish(),
            issues=issues,
            digest_sum=digest % _HASH_MODULUS,
        )


def duplicate_issues(
    by_semantic_id: Mapping[SemanticId, tuple[int, ...]], semantic_ids: Iterable[SemanticId]
) -> list[DuplicateSemanticId]:
    out = []
    for sid in semantic_ids:
        nodes = by_semantic_id.get(sid, ())
        if len(nodes) > 1:
            out.append(DuplicateSemanticId(sid, nodes))
    return out


def sort_issues(issues: Iterable[Issue]) -> tuple[Issue, ...]:
    def key(issue: Issue) -> tuple[object, ...]:
        if isinstance(issue, DuplicateSemanticId):
            return (0, issue.semantic_id, 0, "")
        assert isinstance(issue, MissingRelationTarget | AmbiguousRelationTarget)
        return (1, "", issue.source, issue.relation.value)

    return tuple(sorted(issues, key=key))


@attrs.frozen
class JournalEntry:
    snapshot: SemanticsSnapshot
    touched: tuple[int, ...]
    """Ids upserted or removed by the commit that produced `snapshot`, removals first, in order."""
    removed: tuple[int, ...]
    announcements: tuple[Announcement, ...]


class Journal:
    """The current snapshot and the commits of the last 64 generations, for `read(since)`."""

    def __init__(self, initial: SemanticsSnapshot) -> None:
        self._entries: deque[JournalEntry] = deque(maxlen=JOURNAL_SIZE)
        self._current = initial
        self._base = initial
        self._positions = KeptPositions()

    @property
    def current(self) -> SemanticsSnapshot:
        return self._current

    def record(
        self,
        snapshot: SemanticsSnapshot,
        *,
        touched: Iterable[int],
        removed: Iterable[int],
        announcements: Iterable[Announcement],
    ) -> None:
        if len(self._entries) == JOURNAL_SIZE:
            self._base = self._entries[0].snapshot
        self._entries.append(
            JournalEntry(snapshot, tuple(touched), tuple(removed), tuple(announcements))
        )
        self._current = snapshot

    def snapshot_at(self, generation: int) -> SemanticsSnapshot | None:
        """The snapshot of `generation` while it is the base or within the journal, else None."""
        if generation == self._base.generation:
            return self._base
        offset = generation - self._current.generation + len(self._entries) - 1
        if 0 <= offset < len(self._entries):
            return self._entries[offset].snapshot
        return None

    def read(self, since: int | None) -> ReadResult:
        current = self._current
        if since is None:
            return current.full()
        if since == current.generation:
            return Unchanged(since)
        start = self.snapshot_at(since)
        if start is None or since > current.generation:
            return current.full()
        return self._delta(start, current)

    def between(self, start: int, end: int) -> Delta | None:
        """The delta from generation `start` to `end`, while both are in the journal."""
        first, last = self.snapshot_at(start), self.snapshot_at(end)
        if first is None or last is None or start > end:
            return None
        return self._delta(first, last)

    def _delta(self, start: SemanticsSnapshot, end: SemanticsSnapshot) -> Delta:
        last = len(self._entries) - (self._current.generation - end.generation)
        first = last - (end.generation - start.generation)
        entries = list(self._entries)[first:last]
        touched: dict[int, None] = {}
        removal_order: dict[int, None] = {}
        announcements: list[Announcement] = []
        for entry in entries:
            touched.update(dict.fromkeys(entry.touched))
            removal_order.update(dict.fromkeys(entry.removed))
            announcements.extend(entry.announcements)
        old_nodes, new_nodes = start.nodes, end.nodes
        removed = tuple(n for n in removal_order if n in old_nodes and n not in new_nodes)
        upserted = [
            node
            for n in touched
            if (node := new_nodes.get(n)) is not None and old_nodes.get(n) != node
        ]
        end.sort_in_tree_order(upserted, self._positions)
        return Delta(
            from_generation=start.generation,
            to_generation=end.generation,
            root=end.root,
            focused=end.focused,
            upserted=tuple(upserted),
            removed=removed,
            issues=end.issues,
            announcements=tuple(announcements),
        )


def apply_delta(snapshot: SemanticsSnapshot, delta: Delta) -> SemanticsSnapshot:
    """The snapshot a delta leads to from the one at its ``from`` generation."""
    if delta.from_generation != snapshot.generation:
        raise ValueError(
            f"delta from generation {delta.from_generation} applied to {snapshot.generation}"
        )
    derived = snapshot.derive(
        upserted=delta.upserted,
        removed=delta.removed,
        root=delta.root,
        focused=delta.focused,
        issues=delta.issues,
    )
    return attrs.evolve(derived, generation=delta.to_generation)


def announcements_of(
    previous: SemanticsSnapshot,
    generation: int,
    upserted: Iterable[SemanticsNode],
    *,
    added_within: SemanticsSnapshot | None = None,
    left: Mapping[int, SemanticsNode] | None = None,
) -> list[Announcement]:
    """What the commit of `upserted` at `generation` announces: each node whose ``live`` is
    not off and whose label or value changed since `previous` says its new text (the label
    and value together when ``atomic``). Given the snapshot committed (`added_within`), so
    does a node added under one that was there (a web page replaces a text node in its live
    region rather than change it). Given the live nodes that left the tree before
    `previous`, as they were when they did (`left`), one of them back in the tree counts as
    there: it is compared with what it said then (a status that changed behind a modal)."""
    before: Mapping[int, SemanticsNode] = previous.nodes
    out = []
    for node in upserted:
        if node.live is Live.OFF:
            continue
        old = before.get(node.node_id)
        if old is None and left is not None:
            old = left.get(node.node_id)
        if old is not None:
            old_value = old.value
            if (old.label, old_value) == (node.label, node.value):
                continue
        elif added_within is not None and _was_there(
            added_within.parents.get(node.node_id), before, left
        ):
            old_value = None
        else:
            continue
        if node.atomic:
            words = " ".join(part for part in (node.label, node.value) if part)
        else:
            words = node.value if node.value != old_value and node.value else (node.label or "")
        if words:
            out.append(Announcement(node.node_id, generation, node.live, node.atomic, words))
    return out


def _was_there(
    node_id: int | None,
    before: Mapping[int, SemanticsNode],
    left: Mapping[int, SemanticsNode] | None,
) -> bool:
    return node_id is not None and (node_id in before or (left is not None and node_id in left))
