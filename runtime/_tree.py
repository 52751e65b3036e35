"""The element tree: reconcile, layout, paint, platform and semantics passes.

Elements are the runtime's private, mutable counterpart of view nodes. Each pass touches only
elements that are dirty (or have dirty descendants), so committing one changed leaf costs
O(depth) rather than O(tree). Dirty flags always hold up the tree: an element marked on a
channel has every ancestor marked "something below is dirty" on that channel.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Iterable, Iterator, Mapping
from enum import Enum
from typing import Any, Final

import attrs

from ._declaration import ALL_DIRTY, DirtyChannels
from ._enums import ActionKind, Checked, Composition, Relation, Role
from ._errors import ApplicationError, ViewTooDeepError
from ._ids import SemanticId
from ._node import Frame, NodeState, Point, SemanticsNode, Size, TextInfo, TextSelection
from ._view import View, check_view_fields

MAX_VIEW_DEPTH: Final = 256
"""The most levels a view nests (its root is level 0), well within what the tree's
recursive passes take under the interpreter's default recursion limit."""
LEAF_HEIGHT: Final = 24.0
MULTILINE_HEIGHT: Final = 72.0
FOCUSABLE_ROLES: Final = frozenset(
    {
        Role.BUTTON,
        Role.CHECKBOX,
        Role.TEXT_FIELD,
        Role.LINK,
        Role.SWITCH,
        Role.RADIO,
        Role.SLIDER,
        Role.TAB,
        Role.COMBO_BOX,
        Role.OPTION,
        Role.TREE_ITEM,
        Role.LIST_ITEM,
    }
)
_ZERO_FRAME: Final = Frame(Point(0.0, 0.0), Size(0.0, 0.0))
_MASK: Final = "\u2022"
_ACTION_ORDER: Final = tuple(ActionKind)


@attrs.define
class Counters:
    """Work done by each pass, for the diagnostics profile."""

    layout_passes: int = 0
    paint_passes: int = 0
    semantics_passes: int = 0
    platform_passes: int = 0
    layout_nodes: int = 0
    paint_nodes: int = 0
    semantics_nodes: int = 0
    platform_nodes: int = 0
    commits: int = 0


@attrs.frozen
class PaintOp:
    kind: str
    frame: Frame
    color: str
    text: str | None = None
    element: int = 0


@attrs.frozen
class PlatformNode:
    """What a native accessibility bridge would publish for the element."""

    role: str
    name: str | None


class Element:
    __slots__ = (
        "children",
        "depth",
        "frame",
        "height",
        "identity",
        "layout_dirty",
        "layout_subtree",
        "lifted",
        "node",
        "node_id",
        "paint_dirty",
        "paint_ops",
        "parent",
        "platform",
        "platform_dirty",
        "scroll",
        "selection",
        "sem_dirty",
        "sem_subtree",
        "shown",
        "view",
    )

    def __init__(
        self, view: View[Any], parent: Element | None, identity: Hashable, node_id: int
    ) -> None:
        self.view = view
        self.parent = parent
        self.identity = identity
        self.node_id = node_id
        self.depth: int = 0 if parent is None else parent.depth + 1
        self.children: list[Element] = []
        self.height = 0.0
        self.frame = _ZERO_FRAME
        self.paint_ops: tuple[PaintOp, ...] = ()
        self.platform: PlatformNode | None = None
        self.node: SemanticsNode | None = None
        self.lifted: tuple[int, ...] = ()
        self.shown = False
        self.scroll = 0.0
        self.selection: TextSelection | None = None
        self.layout_dirty = self.layout_subtree = True
        self.sem_dirty = self.sem_subtree = True
        self.paint_dirty = self.platform_dirty = True

    def ancestors(self) -> Iterator[Element]:
        current = self.parent
        while current is not None:
            yield current
            current = current.parent

    def walk(self) -> Iterator[Element]:
        stack = [self]
        while stack:
            element = stack.pop()
            yield element
            stack.extend(reversed(element.children))


def _identities(views: tuple[View[Any], ...]) -> list[Hashable]:
    out: list[Hashable] = []
    position = 0
    for view in views:
        if view.key is not None:
            out.append(("key", view.key))
        else:
            out.append(("at", position, view.role))
            position += 1
    return out


def plain_identity(identity: Any) -> Any:
    """An identity as plain data (enums by value), equal across a msgpack round trip."""
    if isinstance(identity, Enum):
        return identity.value
    if isinstance(identity, tuple | list):
        return tuple(plain_identity(part) for part in identity)
    return identity


def _frozen(path: Any) -> tuple[Any, ...]:
    return tuple(plain_identity(step) for step in path)


def is_focusable(view: View[Any]) -> bool:
    if view.state.disabled:
        return False
    if view.focusable is not None:
        return view.focusable
    return bool(view.handlers) or view.role in FOCUSABLE_ROLES


def resolve_relations(
    relations: Mapping[Relation, Iterable[SemanticId]],
    index: Mapping[SemanticId, Collection[int]],
) -> tuple[tuple[Relation, tuple[int, ...]], ...]:
    """`relations`, each semantic id resolved to the node id `index` holds for it: only
    where it holds one (none is a missing target, several an ambiguous one)."""
    out = []
    for kind in Relation:
        targets = [
            node_id
            for sid in relations.get(kind, ())
            if len(found := index.get(sid, ())) == 1
            for node_id in found
        ]
        if targets:
            out.append((kind, tuple(targets)))
    return tuple(out)


def _carries_semantics(view: View[Any]) -> bool:
    return (
        view.role is not Role.NONE
        or view.semantic_id is not None
        or view.label is not None
        or view.value is not None
        or bool(view.handlers)
        or view.state.modal
    )


class ElementTree:
    """The mounted elements of one runtime session and the passes over them."""

    def __init__(self, width: float = 800.0) -> None:
        self.width = width
        self.root: Element | None = None
        self.counters = Counters()
        self.by_node: dict[int, Element] = {}
        self.focused: Element | None = None
        self.hovered: Element | None = None
        self.relation_sources: dict[Element, Mapping[Relation, tuple[SemanticId, ...]]] = {}
        """The elements that declare relations, with the relations they declared."""
        self.relation_referrers: dict[SemanticId, dict[Element, None]] = {}
        """For each semantic id that relations name, the sources naming it (ordered, so
        that what is re-resolved from it goes in the same order in every run)."""
        self._relations_changed: dict[Element, None] = {}
        """The sources that came, went or changed what they declare since
        `take_relations_changed` was last asked."""
        self.modal_elements: set[Element] = set()
        self.sid_index: dict[SemanticId, set[int]] = {}
        self._sids_touched: dict[SemanticId, None] = {}
        """The ids whose entry in `sid_index` changed since relations were re-resolved."""
        self._next_node_id = 1
        self._preassigned: dict[tuple[Any, ...], int] | None = None
        self._changes: dict[int, SemanticsNode | None] = {}
        self._removal_order: list[int] = []
        self._unmounted: list[int] = []
        """The node ids of the elements unmounted since `take_unmounted` was last asked."""
        self._paint_queue: list[Element] = []
        self._platform_queue: list[Element] = []

    # ---- identity -------------------------------------------------------------------------

    def allocate_node_id(self) -> int:
        node_id = self._next_node_id
        self._next_node_id += 1
        return node_id

    @property
    def next_node_id(self) -> int:
        return self._next_node_id

    # ---- marking --------------------------------------------------------------------------

    def mark_semantics(self, element: Element) -> None:
        element.sem_dirty = True
        for ancestor in element.ancestors():
            if ancestor.sem_subtree:
                break
            ancestor.sem_subtree = True

    def mark_layout(self, element: Element) -> None:
        element.layout_dirty = True
        for ancestor in element.ancestors():
            if ancestor.layout_subtree:
                break
            ancestor.layout_subtree = True

    def mark_paint(self, element: Element) -> None:
        if not element.paint_dirty:
            element.paint_dirty = True
            self._paint_queue.append(element)

    def _mark(self, element: Element, dirty: DirtyChannels) -> None:
        if dirty.layout:
            element.layout_dirty = True
        if dirty.semantics:
            element.sem_dirty = True
        if dirty.paint:
            self.mark_paint(element)
        if dirty.platform and not element.platform_dirty:
            element.platform_dirty = True
            self._platform_queue.append(element)

    # ---- reconcile ------------------------------------------------------------------------

    def build(self, view: View[Any]) -> None:
        """Reconcile the mounted tree against a freshly built view."""
        root = self.root
        if root is not None and root.identity == _identities((view,))[0]:
            if self._update(root, view):
                root.sem_subtree = root.layout_subtree = True
            return
        if root is not None:
            self._unmount(root)
        self.root = self._mount(view, None, _identities((view,))[0])

    def _mount(
        self,
        view: View[Any],
        parent: Element | None,
        identity: Hashable,
        path: tuple[Any, ...] = (),
    ) -> Element:
        if parent is not None and parent.depth >= MAX_VIEW_DEPTH:
            deep = ViewTooDeepError(
                f"the view nests deeper than {MAX_VIEW_DEPTH} levels: flatten it (a list's"
                " rows need not nest in one another)"
            )
            raise ApplicationError(f"view nests deeper than {MAX_VIEW_DEPTH} levels") from deep
        check_view_fields(view)
        preassigned = self._preassigned
        if preassigned is None:
            node_id = self.allocate_node_id()
        else:
            path = (*path, plain_identity(identity))
            node_id = preassigned.get(path) or self.allocate_node_id()
        element = Element(view, parent, identity, node_id)
        self._paint_queue.append(element)
        self._platform_queue.append(element)
        child_views = view.child_views()
        element.children = [
            self._mount(child, element, ident, path)
            for child, ident in zip(child_views, _identities(child_views), strict=True)
        ]
        self._measure(element)
        return element

    # ---- checkpoints ----------------------------------------------------------------------

    def export_elements(self) -> list[list[Any]]:
        """Every mounted element as ``[identity path, node id, scroll, selection]``."""
        out: list[list[Any]] = []
        if self.root is None:
            return out
        stack: list[tuple[Element, tuple[Any, ...]]] = [
            (self.root, (plain_identity(self.root.identity),))
        ]
        while stack:
            element, path = stack.pop()
            selection = element.selection
            out.append(
                [
                    list(path),
                    element.node_id,
                    element.scroll,
                    None if selection is None else [selection.start, selection.end],
                ]
            )
            stack.extend(
                (child, (*path, plain_identity(child.identity)))
                for child in reversed(element.children)
            )
        return out

    def element_at(self, path: tuple[Any, ...]) -> Element | None:
        if self.root is None or not path or plain_identity(self.root.identity) != path[0]:
            return None
        element: Element | None = self.root
        for step in path[1:]:
            assert element is not None
            element = next(
                (c for c in element.children if plain_identity(c.identity) == step), None
            )
            if element is None:
                return None
        return element

    def restore(self, view: View[Any], elements: list[list[Any]], next_node_id: int) -> None:
        """Mount `view` giving each element the node id it had when `elements` was exported."""
        self._preassigned = {_frozen(path): node_id for path, node_id, _s, _sel in elements}
        try:
            self.build(view)
        finally:
            self._preassigned = None
        self._next_node_id = max(self._next_node_id, next_node_id)
        for path, _node_id, scroll, selection in elements:
            if not scroll and selection is None:
                continue  # (looked up, every element of a wide list cost a scan of it)
            element = self.element_at(_frozen(path))
            if element is None:
                continue
            if scroll:
                element.scroll = scroll
                self.mark_layout(element)
            if selection is not None:
                self.select_text(element, selection[0], selection[1])

    def _update(self, element: Element, view: View[Any]) -> bool:
        """Bring `element` up to `view`; True when anything in its subtree changed."""
        dirty = view.declaration.dirty_channels(element.view.declaration)
        if not dirty.any:
            if view.mapper is not element.view.mapper:
                # `.map(f)` on the node is its embedder's, which the node's keys do not
                # cover (a row mapped by its position, moved): the subtree is kept, the
                # mapping is the latest.
                element.view = attrs.evolve(element.view, mapper=view.mapper)
            return False
        check_view_fields(view)
        old_composition = element.view.composition
        element.view = view
        self._mark(element, dirty)
        if view.composition is not old_composition:
            self._mark(element, ALL_DIRTY)
        child_views = view.child_views()
        old = {child.identity: child for child in element.children}
        changed = dirty.layout or dirty.semantics
        children: list[Element] = []
        for child_view, ident in zip(child_views, _identities(child_views), strict=True):
            existing = old.pop(ident, None)
            if existing is None:
                children.append(self._mount(child_view, element, ident))
                changed = True
            else:
                if self._update(existing, child_view):
                    changed = True
                children.append(existing)
        if old:
            for gone in element.children:
                if gone.identity in old:
                    self._unmount(gone)
            changed = True
        if [c.identity for c in children] != [c.identity for c in element.children]:
            changed = True
        element.children = children
        if changed:
            element.sem_dirty = element.layout_dirty = True
            element.sem_subtree = element.layout_subtree = True
            self._measure(element)
        return changed

    def _unmount(self, element: Element) -> None:
        for gone in element.walk():
            self._unmounted.append(gone.node_id)
            if gone.node is not None:
                self._remove_node(gone)
            if self.focused is gone:
                self.focused = None
            if self.hovered is gone:
                self.hovered = None
            self._drop_relation_source(gone)
            self.modal_elements.discard(gone)

    # ---- layout ---------------------------------------------------------------------------

    def _measure(self, element: Element) -> None:
        spec = element.view.layout
        if spec.height is not None:
            element.height = spec.height
        elif not element.children:
            element.height = MULTILINE_HEIGHT if element.view.state.multiline else LEAF_HEIGHT
        elif spec.direction == "row":
            element.height = max(c.height for c in element.children) + 2 * spec.padding
        else:
            element.height = sum(c.height for c in element.children) + 2 * spec.padding

    def layout(self) -> None:
        root = self.root
        if root is not None and (root.layout_dirty or root.layout_subtree):
            self.counters.layout_passes += 1
            self._place(root, 0.0, 0.0, self.width)

    def _place(self, element: Element, x: float, y: float, width: float) -> None:
        origin, size, height = element.frame.origin, element.frame.size, element.height
        # (compared field by field: a wide list places every child each time one changes)
        moved = origin.x != x or origin.y != y or size.width != width or size.height != height
        if moved:
            element.frame = Frame(Point(x, y), Size(width, height))
            self.mark_semantics(element)
            self.mark_paint(element)
        if not (moved or element.layout_dirty or element.layout_subtree):
            return
        self.counters.layout_nodes += 1
        element.layout_dirty = element.layout_subtree = False
        children = element.children
        if not children:
            return
        spec = element.view.layout
        pad = spec.padding
        inner = max(width - 2 * pad, 0.0)
        if spec.direction == "row":
            share = inner / len(children)
            for index, child in enumerate(children):
                self._place(child, x + pad + index * share, y + pad, share)
        else:
            cursor = y + pad - element.scroll
            for child in children:
                self._place(child, x + pad, cursor, inner)
                cursor += child.height

    def content_height(self, element: Element) -> float:
        return sum(c.height for c in element.children)

    # ---- paint and platform ---------------------------------------------------------------

    def paint(self) -> None:
        queue, self._paint_queue = self._paint_queue, []
        if not queue:
            return
        self.counters.paint_passes += 1
        for element in queue:
            element.paint_dirty = False
            view = element.view
            spec = view.paint
            background = spec.background
            if element is self.hovered and spec.hover_background is not None:
                background = spec.hover_background
            ops: list[PaintOp] = []
            if background is not None:
                ops.append(PaintOp("rect", element.frame, background, element=element.node_id))
            if spec.border is not None:
                ops.append(PaintOp("border", element.frame, spec.border, element=element.node_id))
            label = view.label if view.value is None else view.value
            if view.state.password and view.value is not None:
                label = _MASK * len(view.value)
            if label and not element.children:
                ops.append(PaintOp("text", element.frame, spec.foreground, label, element.node_id))
            element.paint_ops = tuple(ops)
            self.counters.paint_nodes += 1

    def platform(self) -> None:
        queue, self._platform_queue = self._platform_queue, []
        if not queue:
            return
        self.counters.platform_passes += 1
        for element in queue:
            element.platform_dirty = False
            element.platform = PlatformNode(element.view.role.value, element.view.label)
            self.counters.platform_nodes += 1

    def display_list(self) -> list[PaintOp]:
        """Every paint op in painter's order, skipping semantically hidden subtrees."""
        out: list[PaintOp] = []
        if self.root is None:
            return out
        stack = [self.root]
        while stack:
            element = stack.pop()
            if element.view.composition is Composition.HIDDEN:
                continue
            out.extend(element.paint_ops)
            stack.extend(reversed(element.children))
        return out

    # ---- semantics ------------------------------------------------------------------------

    def semantics(self) -> tuple[int, ...]:
        """Recompute dirty semantics; returns the node ids the root lifts to the top level."""
        root = self.root
        if root is None:
            return ()
        if root.sem_dirty or root.sem_subtree or not root.shown:
            self.counters.semantics_passes += 1
            self._semantics(root, force=False)
        return root.lifted

    def take_changes(self) -> tuple[dict[int, SemanticsNode | None], list[int]]:
        changes, order = self._changes, self._removal_order
        self._changes, self._removal_order = {}, []
        return changes, order

    def take_unmounted(self) -> list[int]:
        """The node ids of the elements unmounted since last asked: gone for good (a hidden
        element keeps its id, and a remounted one gets a new one)."""
        unmounted, self._unmounted = self._unmounted, []
        return unmounted

    def _semantics(self, element: Element, *, force: bool) -> tuple[int, ...]:
        if not (force or element.sem_dirty or element.sem_subtree or not element.shown):
            return element.lifted
        view = element.view
        composition = view.composition
        if composition is Composition.HIDDEN:
            self._hide(element)
            return ()
        self.counters.semantics_nodes += 1
        if composition is Composition.MERGE_DESCENDANTS:
            for child in element.children:
                self._hide(child)
            self._set_node(element, self._merged_node(element))
            element.lifted = (element.node_id,)
        else:
            child_force = force or not element.shown
            ids: list[int] = []
            for child in element.children:
                ids.extend(self._semantics(child, force=child_force))
            if composition is Composition.BOUNDARY or _carries_semantics(view):
                self._set_node(element, self._build_node(element, tuple(ids)))
                element.lifted = (element.node_id,)
            else:
                if element.node is not None:
                    self._remove_node(element)
                element.lifted = tuple(ids)
        element.shown = True
        element.sem_dirty = element.sem_subtree = False
        return element.lifted

    def _hide(self, element: Element) -> None:
        was_shown = element.shown
        if element.node is not None:
            self._remove_node(element)
        element.lifted = ()
        for child in element.children:
            if was_shown or child.sem_dirty or child.sem_subtree:
                self._hide(child)
        element.shown = False
        element.sem_dirty = element.sem_subtree = False

    def _state(self, element: Element, view: View[Any]) -> NodeState:
        s = view.state
        return NodeState(
            focused=element is self.focused,
            disabled=s.disabled,
            selected=s.selected,
            pressed=s.pressed,
            checked=s.checked,
            expanded=s.expanded,
            invalid=s.invalid,
            required=s.required,
            read_only=s.read_only,
            busy=s.busy,
            multiline=s.multiline,
            password=s.password,
            modal=s.modal,
        )

    def _actions(self, view: View[Any]) -> tuple[ActionKind, ...]:
        kinds = set(view.handlers)
        if view.state.read_only:  # however it was declared: a builder's argument or its state
            kinds.discard(ActionKind.SET_TEXT)
        if is_focusable(view):
            kinds.add(ActionKind.FOCUS)
        return tuple(k for k in _ACTION_ORDER if k in kinds)

    def _build_node(self, element: Element, children: tuple[int, ...]) -> SemanticsNode:
        view = element.view
        value = view.value
        if view.state.password and value is not None:
            value = _MASK * len(value)
        text = None
        if view.editable or view.role is Role.TEXT_FIELD:
            length = len(view.value or "")
            selection = element.selection
            if selection is not None and selection.end > length:
                selection = None
            text = TextInfo(
                selection=selection,
                caret=length if selection is None else selection.end,
                editable=view.editable and not view.state.read_only,
            )
        self._set_relation_source(element, view.relations)
        if view.state.modal:
            self.modal_elements.add(element)
        else:
            self.modal_elements.discard(element)
        return SemanticsNode(
            node_id=element.node_id,
            semantic_id=view.semantic_id,
            role=view.role,
            children=children,
            level=view.level,
            url=view.url,
            label=view.label,
            value=value,
            description=view.description,
            state=self._state(element, view),
            numeric=view.numeric,
            text=text,
            collection=view.collection,
            relations=self._resolve_relations(view),
            live=view.live,
            atomic=view.atomic,
            actions=self._actions(view),
            focus_order=view.focus_order if is_focusable(view) else None,
            frame=element.frame,
        )

    def _resolve_relations(self, view: View[Any]) -> tuple[tuple[Relation, tuple[int, ...]], ...]:
        return resolve_relations(view.relations, self.sid_index) if view.relations else ()

    def refresh_relations(self) -> None:
        """Re-resolve the relations that name an id whose entry in the index changed (its
        target may have come, gone or become ambiguous).

        Every other relation still resolves as it did, so a commit pays for the relations
        naming the ids it moved, however many relations there are.
        """
        touched, self._sids_touched = self._sids_touched, {}
        referrers = self.relation_referrers
        stale: dict[Element, None] = {}
        for sid in touched:
            stale.update(referrers.get(sid, {}))
        for element in stale:
            node = element.node
            if node is None:
                continue
            resolved = self._resolve_relations(element.view)
            if resolved != node.relations:
                self._set_node(element, attrs.evolve(node, relations=resolved))

    def _merged_node(self, element: Element) -> SemanticsNode:
        labels: list[str] = []
        merged = {
            "disabled": False,
            "selected": False,
            "pressed": False,
            "invalid": False,
            "required": False,
            "read_only": False,
            "busy": False,
        }
        checked: set[Checked] = set()
        expanded: bool | None = None
        stack = [element]
        while stack:
            inner = stack.pop()
            view = inner.view
            if inner is not element and view.composition is Composition.HIDDEN:
                continue
            stack.extend(reversed(inner.children))
            if view.label:
                labels.append(view.label)
            for name in merged:
                merged[name] = merged[name] or getattr(view.state, name)
            if view.state.checked is not None:
                checked.add(view.state.checked)
            if view.state.expanded is not None:
                expanded = bool(expanded) or view.state.expanded
        state = attrs.evolve(
            self._state(element, element.view),
            checked=None
            if not checked
            else (checked.pop() if len(checked) == 1 else Checked.MIXED),
            expanded=expanded,
            **merged,
        )
        base = self._build_node(element, ())
        return attrs.evolve(base, label=" ".join(labels) or None, state=state)

    def _set_node(self, element: Element, node: SemanticsNode) -> None:
        old = element.node
        if old == node:
            return
        if old is not None and old.semantic_id != node.semantic_id:
            self._unindex(old)
        if node.semantic_id is not None and (old is None or old.semantic_id != node.semantic_id):
            self.sid_index.setdefault(node.semantic_id, set()).add(node.node_id)
            self._sids_touched[node.semantic_id] = None
        element.node = node
        self.by_node[node.node_id] = element
        self._changes[node.node_id] = node

    def _remove_node(self, element: Element) -> None:
        node = element.node
        assert node is not None
        self._unindex(node)
        element.node = None
        self.by_node.pop(node.node_id, None)
        self._changes[node.node_id] = None
        self._removal_order.append(node.node_id)
        self._drop_relation_source(element)
        self.modal_elements.discard(element)

    def _drop_relation_source(self, element: Element) -> None:
        self._set_relation_source(element, {})

    def _set_relation_source(
        self, element: Element, relations: Mapping[Relation, tuple[SemanticId, ...]]
    ) -> None:
        """Record what `element` declares (nothing: it is no source), and which ids it names."""
        old = self.relation_sources.get(element)
        if (old or {}) == relations:
            return
        referrers = self.relation_referrers
        if old is not None:
            del self.relation_sources[element]
            for sids in old.values():
                for sid in sids:
                    named = referrers.get(sid)
                    if named is not None:
                        named.pop(element, None)
                        if not named:
                            del referrers[sid]
        if relations:
            self.relation_sources[element] = relations
            for sids in relations.values():
                for sid in sids:
                    referrers.setdefault(sid, {})[element] = None
        self._relations_changed[element] = None

    @property
    def relations_changed(self) -> Mapping[Element, None]:
        """The sources `take_relations_changed` hands over next, left to it."""
        return self._relations_changed

    def take_relations_changed(self) -> dict[Element, None]:
        """The relation sources that came, went or changed their relations since the last
        call."""
        changed, self._relations_changed = self._relations_changed, {}
        return changed

    def _unindex(self, node: SemanticsNode) -> None:
        if node.semantic_id is not None:
            ids = self.sid_index.get(node.semantic_id)
            if ids is not None:
                ids.discard(node.node_id)
                self._sids_touched[node.semantic_id] = None
                if not ids:
                    del self.sid_index[node.semantic_id]

    # ---- runtime-owned UI state -----------------------------------------------------------

    def set_focus(self, element: Element | None) -> None:
        if element is self.focused:
            return
        for changed in (self.focused, element):
            if changed is not None:
                self.mark_semantics(changed)
        self.focused = element

    def set_hover(self, element: Element | None) -> None:
        if element is self.hovered:
            return
        for changed in (self.hovered, element):
            if changed is not None:
                self.mark_paint(changed)
        self.hovered = element

    def select_text(self, element: Element, start: int, end: int) -> None:
        element.selection = TextSelection(start, end)
        self.mark_semantics(element)

    def scroll_by(self, element: Element, delta: float) -> None:
        limit = max(self.content_height(element) - element.height, 0.0)
        offset = min(max(element.scroll + delta, 0.0), limit)
        if offset != element.scroll:
            element.scroll = offset
            self.mark_layout(element)
