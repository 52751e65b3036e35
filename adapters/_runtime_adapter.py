"""The runtime adapter: any semledger app driven through its committed semantics (kind desktop).

``create_surface({"adapter": "runtime", "app": "module:attribute"})``. Everything goes through
the committed tree and typed semantic actions, never coordinates (except ``coords``
candidates, answered by hit-testing the committed frames).

Decisions this adapter documents:

- A ref is ``r<node id>``. The runtime keeps node ids for the life of an element, so a ref
  maps back to the same element while the snapshot is current, and later too as long as the
  element exists. Above the surface it is opaque.
- Every ``act`` carries an exact precondition on the generation the adapter last observed
  (its last snapshot, or the receipt of its own last action). A change the adapter did not
  make (an effect finishing) makes that precondition stale: the action is refused with
  ``LocateError`` (``details["reason"] == "stale"``) and changes nothing; take a snapshot.
- Runtime rejections map to the seed's errors: ``target_not_found``/``target_ambiguous`` and
  ``stale_generation`` are ``LocateError``; ``target_disabled``, ``action_unavailable`` and
  ``handler_rejected`` are ``ActionabilityError``; ``host_closed`` is ``SessionError``;
  ``invalid_arguments`` is ``DataError``. ``details["code"]`` keeps the runtime's code.
- What the runtime cannot express is refused: navigation (``navigate``, ``back``,
  ``forward``, ``refresh``, ``read("url")``) with ``NavigationError``; pointer gestures with
  no semantic meaning (``hover``, ``doubleClick``, ``pressAndHold``, ``release``) and the
  actions of capabilities it lacks with ``ActionabilityError``; ``dialog`` with
  ``DialogError``; ``evaluate`` with ``ScriptError``.
- A live node says so in ``native`` (``live``, and ``atomic`` ``"true"``), and a node that is
  not live inside one says ``live`` ``"off"``: a surface's reader takes the region's setting
  for what is inside it, where a runtime node's own is all it has. The MCP bridge serving
  the surface announces their changes (an atomic one with all of its text, its children's
  too, as it does a web page's).
- A node says the actions it offers in ``native["runtime_actions"]`` (their kinds,
  space-separated): the MCP bridge serving the surface offers those, not what its role
  would imply.
- ``type`` appends to the field's value (``clear`` empties it); a password field's value is
  masked in the semantics, so typing into a non-empty one is refused: clear it first. Given
  the text that follows (the MCP bridge's ``set_text``), ``clear`` does nothing and the
  ``type`` right after it on the same node sets the text whole: one SetText, so an app that
  refuses an empty value takes it and a refused text leaves the field as it was. On a
  node that takes a number and no text (a slider), ``type`` sets the number. Escape on a
  node that offers collapse and not dismiss (an open combo box) collapses it.
- ``state()`` is a log position: the generation, the snapshot hash and the inputs accepted so
  far (``extras``). ``restore`` re-executes those inputs on a fresh runtime and checks it
  lands on the same generation and hash. The inputs travel in ``extras["log"]`` (JSON) when
  the app's messages can be encoded, so a state restores in another session of the app too.
"""

from __future__ import annotations

import json
import math
import re
import secrets
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Final

import attrs
import trio

from semledger.actors import AppLoadError, load_app
from semledger.runtime import (
    ActionKind,
    App,
    AppRuntime,
    ByNodeId,
    Checked,
    Effect,
    ErrorCode,
    Exact,
    Latest,
    Live,
    Numeric,
    PaintOp,
    Receipt,
    Rejection,
    Role,
    Scroll,
    ScrollDirection,
    SemanticsAction,
    SemanticsNode,
    SemanticsSnapshot,
    SetNumericValue,
    SetText,
    SimpleAction,
    check_precondition,
)
from semledger.runtime._ids import semantic_id_problem
from semledger.runtime._wire import WireError, decode_action, encode_action

from ._calls import (
    PREDICATE_SUBJECTS,
    ActArgs,
    ActResult,
    CheckResult,
    CheckSubject,
    Count,
    ElementDescription,
    Hidden,
    PathStep,
    Predicate,
    ReadKind,
    TextContains,
    TextEquals,
    TitleMatches,
    UrlMatches,
    Visible,
)
from ._candidates import (
    AutomationIdCandidate,
    ControlPathCandidate,
    CoordsCandidate,
    LabelCandidate,
    RoleCandidate,
    TextCandidate,
)
from ._capabilities import ACTION_GATES, Capabilities
from ._check import check_element, check_pattern, check_text, text_matches
from ._control_path import follow_control_path, parse_control_path
from ._errors import (
    ActionabilityError,
    CheckError,
    DataError,
    DialogError,
    LocateError,
    NavigationError,
    ScriptError,
    SessionError,
    SurfaceError,
    SurfaceTimeoutError,
)
from ._roles import RUNTIME_ROLES
from ._schemas import (
    act_args_from_dict,
    candidate_from_dict,
    predicate_from_dict,
    session_init_from_dict,
    session_state_from_dict,
)
from ._session import SessionInit, SessionState
from ._snapshot import NodeState, Snapshot, SnapshotNode, build_snapshot
from ._surface import (
    ActArgsLike,
    CandidateLike,
    PredicateLike,
    SessionInitLike,
    SessionStateLike,
    SurfaceKind,
)

__all__ = ["RuntimeSurface", "create_runtime_surface", "node_ref", "ref_node_id"]

_ROLE_TO_ARIA: Final[dict[str, str]] = {role.value: RUNTIME_ROLES.get(role.value, "generic")
                                        for role in Role}
_ROLE_BY_NODE: Final[dict[Role, str]] = {role: _ROLE_TO_ARIA[role.value] for role in Role}
_CHECKABLE: Final = frozenset({Role.CHECKBOX, Role.RADIO, Role.SWITCH})
_REF = re.compile(r"r([1-9][0-9]*)")
_NAVIGATION: Final = frozenset({"navigate", "back", "forward", "refresh"})
_NO_SEMANTICS: Final = frozenset({"hover", "doubleClick", "pressAndHold", "release"})
_CLICK_ORDER: Final = (
    ActionKind.ACTIVATE, ActionKind.SELECT, ActionKind.EXPAND, ActionKind.COLLAPSE,
    ActionKind.FOCUS,
)  # fmt: skip
_KEYS: Final[Mapping[str, SemanticsAction]] = {
    "Enter": SimpleAction(ActionKind.SUBMIT),
    "Escape": SimpleAction(ActionKind.DISMISS),
    "ArrowUp": SimpleAction(ActionKind.INCREMENT),
    "ArrowRight": SimpleAction(ActionKind.INCREMENT),
    "ArrowDown": SimpleAction(ActionKind.DECREMENT),
    "ArrowLeft": SimpleAction(ActionKind.DECREMENT),
    "PageDown": Scroll(ScrollDirection.FORWARD),
    "PageUp": Scroll(ScrollDirection.BACKWARD),
}
"""Keys with a semantic meaning; Space and " " activate (see ``_press``)."""
_SCROLL_LIMIT: Final = 1000
_DEFAULT_WAIT_MS: Final = 5000
_MASK_COLOUR: Final = "#000000"

_REJECTION_ERRORS: Final[Mapping[ErrorCode, type[SurfaceError]]] = {
    ErrorCode.TARGET_NOT_FOUND: LocateError,
    ErrorCode.TARGET_AMBIGUOUS: LocateError,
    ErrorCode.STALE_GENERATION: LocateError,
    ErrorCode.TARGET_DISABLED: ActionabilityError,
    ErrorCode.ACTION_UNAVAILABLE: ActionabilityError,
    ErrorCode.HANDLER_REJECTED: ActionabilityError,
    ErrorCode.HOST_CLOSED: SessionError,
    ErrorCode.REENTRANT_DISPATCH: SessionError,
    ErrorCode.INVALID_ARGUMENTS: DataError,
}


def node_ref(node_id: int) -> str:
    """The ref of a runtime node."""
    return f"r{node_id}"


def ref_node_id(ref: str) -> int | None:
    """The node id a ref names, or None for something this adapter never issued."""
    match = _REF.fullmatch(ref) if isinstance(ref, str) else None
    return None if match is None else int(match.group(1))


def rejection_error(rejection: Rejection, ref: str | None = None) -> SurfaceError:
    """The typed surface error for a runtime rejection."""
    cls = _REJECTION_ERRORS.get(rejection.code, ActionabilityError)
    details: dict[str, object] = {"code": rejection.code.value, **rejection.details}
    if rejection.code is ErrorCode.STALE_GENERATION:
        details["reason"] = "stale"
    if ref is not None:
        details["ref"] = ref
    return cls(rejection.message, details=details)


def _states(node: SemanticsNode) -> tuple[NodeState, ...]:
    s = node.state
    out: list[NodeState] = []
    if s.disabled:
        out.append("disabled")
    if s.checked is not None or node.role in _CHECKABLE:
        if s.checked is Checked.CHECKED:
            out.append("checked")
        elif s.checked is not Checked.MIXED:
            out.append("unchecked")
    if s.selected:
        out.append("selected")
    if s.expanded is True:
        out.append("expanded")
    elif s.expanded is False:
        out.append("collapsed")
    if s.focused:
        out.append("focused")
    if s.required:
        out.append("required")
    if s.read_only:
        out.append("readonly")
    return tuple(out)


def _value(node: SemanticsNode) -> str | None:
    if node.value is not None:
        return node.value
    numeric = node.numeric
    if numeric is not None:
        if numeric.value_text is not None:
            return numeric.value_text
        if numeric.current is not None:
            return f"{numeric.current:g}"
    return None


_FLAGS: Final = ("pressed", "invalid", "busy", "multiline", "password", "modal")
"""The node's states the ten of a surface cannot say, each ``"true"`` in ``native``."""
_COLLECTION_KEYS: Final = (
    ("row_index", "rowindex"), ("row_count", "rowcount"), ("row_span", "rowspan"),
    ("column_index", "colindex"), ("column_count", "colcount"), ("column_span", "colspan"),
    ("set_size", "setsize"), ("set_position", "posinset"),
)  # fmt: skip
_NUMERIC_KEYS: Final = (
    ("current", "valuenow"), ("min", "valuemin"), ("max", "valuemax"), ("step", "valuestep"),
)  # fmt: skip


def _native(node: SemanticsNode, inherited: Live = Live.OFF) -> dict[str, str]:
    """The node's extras: all it says that the states of a surface cannot (surface.md §3,
    rule 5), so that the MCP bridge serving the surface gives an agent the node the app
    committed. `inherited` is the ``live`` of its parent in the snapshot, which a surface's
    node not saying otherwise takes (a runtime node's own is all it has)."""
    native = {"runtime_role": node.role.value, "runtime_actions": " ".join(node.actions)}
    if node.semantic_id is not None:
        native["automationId"] = str(node.semantic_id)
    state = node.state
    native.update((flag, "true") for flag in _FLAGS if getattr(state, flag))
    if state.checked is Checked.MIXED:
        native["checked"] = "mixed"
    if node.level is not None:
        native["level"] = str(node.level)
    if node.url is not None:
        native["url"] = node.url
    if node.numeric is not None:
        native.update(_numeric_native(node.numeric))
    if node.collection is not None:
        native.update(
            (key, str(value)) for field, key in _COLLECTION_KEYS
            if (value := getattr(node.collection, field)) is not None
        )
    native.update(
        (f"rel:{relation.value}", " ".join(node_ref(target) for target in targets))
        for relation, targets in node.relations if targets
    )
    if node.live is not inherited:
        native["live"] = node.live.value
    if node.atomic:
        native["atomic"] = "true"
    return native


def _number(text: str) -> float:
    """The number `text` types into a node that takes one; a DataError if it is none."""
    try:
        number = float(text)
    except ValueError:
        number = math.nan
    if not math.isfinite(number):
        raise DataError(f"expected a finite number, got {text!r}", path="args.text")
    return number


def _numeric_native(numeric: Numeric) -> Iterator[tuple[str, str]]:
    for field, key in _NUMERIC_KEYS:
        value = getattr(numeric, field)
        if value is not None:
            yield key, repr(float(value))
    if numeric.value_text is not None:
        yield "valuetext", numeric.value_text


def _snapshot_node(
    node: SemanticsNode, depth: int, parent: SemanticsNode | None
) -> SnapshotNode:
    f = node.frame
    return SnapshotNode(
        ref=f"r{node.node_id}",
        role=_ROLE_BY_NODE[node.role],
        name=node.label,
        value=_value(node),
        description=node.description,
        states=_states(node),
        box=(f.origin.x, f.origin.y, f.size.width, f.size.height),
        depth=depth,
        parent=None if parent is None else f"r{parent.node_id}",
        native=_native(node, Live.OFF if parent is None else parent.live),
    )


def _walk(
    snapshot: SemanticsSnapshot, start: int
) -> Iterator[tuple[SemanticsNode, int, int | None]]:
    """Nodes below ``start`` (inclusive) in document order, with depth and parent id."""
    nodes = snapshot.nodes
    stack: list[tuple[int, int, int | None]] = [(start, 0, None)]
    while stack:
        node_id, depth, parent = stack.pop()
        node = nodes[node_id]
        yield node, depth, parent
        children = node.children
        for child in reversed(children):
            stack.append((child, depth + 1, node_id))


def _own_text(node: SemanticsNode) -> str | None:
    """What the runtime paints for the node: its value when it has one, else its label."""
    value = _value(node)
    return value if value else node.label


@attrs.define
class _Input:
    """One accepted input of the session, as ``restore`` re-executes it."""

    kind: str  # "perform" | "effect"
    node_id: int = 0
    action: SemanticsAction | None = None
    effect_id: int = 0
    message: Any = None


class RuntimeSurface:
    """The AgentSurface over one ``AppRuntime`` session."""

    def __init__(self, app: App[Any, Any], app_ref: str, *, width: float = 800.0) -> None:
        self.app = app
        self.app_ref = app_ref
        self.width = width
        self._runtime: AppRuntime[Any, Any] | None = None
        self._closed = False
        self._observed = 0
        self._replacing: int | None = None
        self._inputs: list[_Input] = []
        self._token = secrets.token_hex(8)
        self._effects: dict[int, trio.CancelScope] = {}
        self._last_result: str | None = None
        self._codec: Any = None

    # ---- lifecycle ----------------------------------------------------------------------

    @property
    def kind(self) -> SurfaceKind:
        return "desktop"

    def capabilities(self) -> Capabilities:
        return Capabilities(screenshot=True, restore=True)

    @property
    def runtime(self) -> AppRuntime[Any, Any]:
        """The open session's runtime; SessionError before ``open`` and after ``close``."""
        return self._live()

    async def open(self, session: SessionInitLike | None = None) -> None:
        init = self._init(session)
        if self._runtime is not None or self._closed:
            raise SessionError("this surface already has a session; create another")
        try:
            runtime = AppRuntime(self.app, width=self.width)
        except Exception as error:
            raise SessionError(
                f"the application {self.app_ref} failed to start: {error}"
            ) from error
        self._install(runtime, [], completed=set())
        if init.storage_state is not None:
            await self.restore(init.storage_state)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._cancel_effects()
        if self._runtime is not None:
            self._runtime.close()

    @staticmethod
    def _init(session: SessionInitLike | None) -> SessionInit:
        return SessionInit() if session is None else session_init_from_dict(session)

    def _live(self) -> AppRuntime[Any, Any]:
        if self._closed:
            raise SessionError("the session is closed")
        if self._runtime is None:
            raise SessionError("the surface is not open: call open() first")
        return self._runtime

    # ---- effects ------------------------------------------------------------------------

    def _install(
        self, runtime: AppRuntime[Any, Any], inputs: list[_Input], *, completed: set[int]
    ) -> None:
        self._cancel_effects()
        self._runtime = runtime
        self._inputs = inputs
        self._observed = runtime.generation
        self._replacing = None
        self._start_effects(runtime, skip=completed)

    def _start_effects(
        self, runtime: AppRuntime[Any, Any], skip: frozenset[int] | set[int] = frozenset()
    ) -> None:
        for effect_id, effect in runtime.take_effects():
            if effect_id in skip:
                continue
            scope = trio.CancelScope()
            self._effects[effect_id] = scope
            trio.lowlevel.spawn_system_task(self._run_effect, runtime, effect_id, effect, scope)

    async def _run_effect(
        self,
        runtime: AppRuntime[Any, Any],
        effect_id: int,
        effect: Effect[Any],
        scope: trio.CancelScope,
    ) -> None:
        message: Any = None
        with scope:
            try:
                message = await effect.run()
            except Exception:
                message = None
            if runtime is not self._runtime or self._closed:
                return
            self._effects.pop(effect_id, None)
            self._inputs.append(_Input("effect", effect_id=effect_id, message=message))
            try:
                runtime.complete_effect(effect_id, message)
            except Exception:
                # The application raised on the effect's message: the session is over.
                self._closed = True
                runtime.close()
                return
            self._start_effects(runtime)

    def _cancel_effects(self) -> None:
        for scope in self._effects.values():
            scope.cancel()
        self._effects.clear()

    # ---- snapshot -----------------------------------------------------------------------

    async def snapshot(
        self,
        *,
        root: str | None = None,
        max_nodes: int | None = None,
        interactive_only: bool = False,
    ) -> Snapshot:
        runtime = self._live()
        committed = runtime.snapshot
        self._observed = committed.generation
        return self.build(committed, root=root, max_nodes=max_nodes,
                          interactive_only=interactive_only)

    def build(
        self,
        committed: SemanticsSnapshot,
        *,
        root: str | None = None,
        max_nodes: int | None = None,
        interactive_only: bool = False,
    ) -> Snapshot:
        """The surface snapshot of a committed runtime snapshot."""
        if root is None:
            start = committed.root
        else:
            start = ref_node_id(root)
            if start is None or start not in committed.nodes:
                raise LocateError(f"unknown ref {root!r}", details={"ref": root})
        if start is None:
            raise SessionError("the application shows nothing: its tree is empty")
        if max_nodes is not None and max_nodes < 1:
            raise DataError("max_nodes must be at least 1", path="max_nodes")
        limit = math.inf if max_nodes is None else max_nodes
        out: list[SnapshotNode] = []
        nodes = committed.nodes
        if not interactive_only:
            for node, depth, parent in _walk(committed, start):
                if len(out) >= limit:
                    break
                out.append(_snapshot_node(node, depth, None if parent is None else nodes[parent]))
        else:
            kept_depth: dict[int, int] = {}
            nearest: dict[int, int] = {}
            for node, _depth, parent in _walk(committed, start):
                if len(out) >= limit:
                    break
                above = None if parent is None else nearest[parent]
                if above is None or node.actions:
                    depth = 0 if above is None else kept_depth[above] + 1
                    kept_depth[node.node_id] = depth
                    nearest[node.node_id] = node.node_id
                    out.append(
                        _snapshot_node(node, depth, None if above is None else nodes[above])
                    )
                else:
                    nearest[node.node_id] = above
        return build_snapshot(f"r{start}", out)

    # ---- act ----------------------------------------------------------------------------

    async def act(
        self,
        action: str,
        ref: str | None = None,
        args: ActArgsLike | None = None,
        ref2: str | None = None,
    ) -> ActResult:
        replacing, self._replacing = self._replacing, None
        runtime = self._live()
        given = self._args(args)
        if action in _NAVIGATION:
            raise NavigationError(
                f"{action}: a semledger application has no pages to navigate",
                details={"action": action},
            )
        if action == "dialog":
            raise DialogError("a semledger application has no native dialogs to answer")
        if action == "evaluate":
            raise ScriptError("a semledger application runs no injected scripts")
        if action == "quit":
            await self.close()
            return ActResult()
        if action in ACTION_GATES and not getattr(self.capabilities(), ACTION_GATES[action]):
            raise ActionabilityError(
                f"{action} needs the {ACTION_GATES[action]!r} capability, which the runtime "
                "adapter does not have",
                details={"action": action, "capability": ACTION_GATES[action]},
            )
        if action in _NO_SEMANTICS or action == "invoke":
            raise ActionabilityError(
                f"{action} has no semantic meaning in a semledger application",
                details={"action": action},
            )
        if action == "sleep":
            await trio.sleep((given.ms or 0) / 1000)
            return ActResult()
        if action == "waitFor":
            await self._wait_for(ref, given)
            return ActResult()
        if action == "screenshot":
            if not given.path:
                raise DataError("screenshot needs args.path", path="args.path")
            await self.screenshot(given.path)
            return ActResult()
        if action in ("scrollToTop", "scrollToBottom") and ref is None:
            node = self._first_scrollable(runtime)
            if node is None:
                return ActResult()
            ref = node_ref(node.node_id)
        if action == "press" and ref is None:
            focused = runtime.snapshot.focused
            if focused is None:
                raise ActionabilityError("press: nothing has focus; give a ref")
            ref = node_ref(focused)
        if action == "read":
            node = self._node(runtime, ref)
            self._last_result = self._text(runtime.snapshot, node)
            return ActResult(result=self._last_result)
        node = self._node(runtime, ref)
        if action == "type" and node.node_id == replacing and given.text is not None:
            self._perform(runtime, node, SetText(given.text))
            return ActResult()
        handler = _ACTIONS.get(action)
        if handler is None:
            raise DataError(f"unknown action {action!r}", path="action")
        await handler(self, runtime, node, given)
        return ActResult()

    @staticmethod
    def _args(args: ActArgsLike | None) -> ActArgs:
        return ActArgs() if args is None else act_args_from_dict(args)

    def _node(self, runtime: AppRuntime[Any, Any], ref: str | None) -> SemanticsNode:
        if ref is None:
            raise DataError("this call needs a ref", path="ref")
        node_id = ref_node_id(ref)
        node = None if node_id is None else runtime.snapshot.node(node_id)
        if node is None:
            raise LocateError(f"unknown ref {ref!r}", details={"ref": ref})
        return node

    def _perform(
        self, runtime: AppRuntime[Any, Any], node: SemanticsNode, action: SemanticsAction
    ) -> Receipt:
        """One typed action on ``node`` at the generation the adapter last observed."""
        outcome = runtime.perform(ByNodeId(node.node_id), action, Exact(self._observed))
        if isinstance(outcome, Rejection):
            raise rejection_error(outcome, node_ref(node.node_id))
        self._inputs.append(_Input("perform", node_id=node.node_id, action=action))
        self._observed = outcome.after
        self._start_effects(runtime)
        return outcome

    def _current(self, runtime: AppRuntime[Any, Any], node: SemanticsNode) -> SemanticsNode:
        found = runtime.snapshot.node(node.node_id)
        if found is None:
            raise LocateError(
                f"{node_ref(node.node_id)} left the tree", details={"ref": node_ref(node.node_id)}
            )
        return found

    async def _click(
        self, runtime: AppRuntime[Any, Any], node: SemanticsNode, args: ActArgs
    ) -> None:
        for kind in _CLICK_ORDER:
            if kind in node.actions:
                self._perform(runtime, node, SimpleAction(kind))
                return
        # Let the runtime say why (disabled, or nothing offered), in its order of checks.
        self._perform(runtime, node, SimpleAction(ActionKind.ACTIVATE))

    async def _right_click(
        self, runtime: AppRuntime[Any, Any], node: SemanticsNode, args: ActArgs
    ) -> None:
        self._perform(runtime, node, SimpleAction(ActionKind.SHOW_MENU))

    async def _hover_and_click(
        self, runtime: AppRuntime[Any, Any], node: SemanticsNode, args: ActArgs
    ) -> None:
        await self._click(runtime, node, args)

    async def _focus(
        self, runtime: AppRuntime[Any, Any], node: SemanticsNode, args: ActArgs
    ) -> None:
        self._perform(runtime, node, SimpleAction(ActionKind.FOCUS))

    async def _type(
        self, runtime: AppRuntime[Any, Any], node: SemanticsNode, args: ActArgs
    ) -> None:
        if args.text is None:
            raise DataError("type needs args.text", path="args.text")
        if ActionKind.SET_NUMERIC_VALUE in node.actions and ActionKind.SET_TEXT not in node.actions:
            self._perform(runtime, node, SetNumericValue(_number(args.text)))
            return
        current = node.value or ""
        if node.state.password and current:
            raise ActionabilityError(
                "the password field's value is masked, so typing cannot append to it: clear it "
                "first",
                details={"ref": node_ref(node.node_id)},
            )
        self._perform(runtime, node, SetText(current + args.text))

    async def _clear(
        self, runtime: AppRuntime[Any, Any], node: SemanticsNode, args: ActArgs
    ) -> None:
        if args.text and ActionKind.SET_TEXT in node.actions:
            # Refused as stale now, as the step that empties it would be: nothing is done yet.
            stale = check_precondition(Exact(self._observed), runtime.generation)
            if stale is not None:
                raise rejection_error(stale, node_ref(node.node_id))
            self._replacing = node.node_id  # the type that follows sets the text whole
            return
        self._perform(runtime, node, SetText(""))

    async def _submit(
        self, runtime: AppRuntime[Any, Any], node: SemanticsNode, args: ActArgs
    ) -> None:
        target = node
        snapshot = runtime.snapshot
        while ActionKind.SUBMIT not in target.actions:
            parent = snapshot.parents.get(target.node_id)
            if parent is None:
                target = node
                break
            target = snapshot.nodes[parent]
        self._perform(runtime, target, SimpleAction(ActionKind.SUBMIT))

    async def _press(
        self, runtime: AppRuntime[Any, Any], node: SemanticsNode, args: ActArgs
    ) -> None:
        key = args.key
        if not key:
            raise DataError("press needs args.key", path="args.key")
        if key in ("Space", " "):
            await self._click(runtime, node, args)
            return
        if key == "Enter":
            await self._submit(runtime, node, args)
            return
        action = _KEYS.get(key)
        if action is None:
            raise ActionabilityError(
                f"the key {key!r} has no semantic action in a semledger application",
                details={"key": key},
            )
        if action.kind is ActionKind.DISMISS and ActionKind.DISMISS not in node.actions:
            if ActionKind.COLLAPSE in node.actions:
                self._perform(runtime, node, SimpleAction(ActionKind.COLLAPSE))
                return
            root = runtime.snapshot.root
            if root is not None:
                node = runtime.snapshot.nodes[root]
        self._perform(runtime, node, action)

    async def _key_up(
        self, runtime: AppRuntime[Any, Any], node: SemanticsNode, args: ActArgs
    ) -> None:
        """keyDown performed the key's action; releasing it does nothing more."""

    async def _set_checked(
        self, runtime: AppRuntime[Any, Any], node: SemanticsNode, args: ActArgs
    ) -> None:
        want = True if args.checked is None else args.checked
        if (node.state.checked is Checked.CHECKED) == want:
            return
        self._perform(runtime, node, SimpleAction(ActionKind.ACTIVATE))
        after = self._current(runtime, node)
        if (after.state.checked is Checked.CHECKED) != want:
            raise ActionabilityError(
                "activating the element did not set its checked state",
                details={"ref": node_ref(node.node_id)},
            )

    def _descendants(
        self, runtime: AppRuntime[Any, Any], node: SemanticsNode
    ) -> list[SemanticsNode]:
        return [n for n, _d, _p in _walk(runtime.snapshot, node.node_id)][1:]

    async def _select_option(
        self, runtime: AppRuntime[Any, Any], node: SemanticsNode, args: ActArgs
    ) -> None:
        values = args.values
        if not values:
            if ActionKind.SELECT in node.actions:
                self._perform(runtime, node, SimpleAction(ActionKind.SELECT))
                return
            raise DataError("selectOption needs args.values", path="args.values")
        if ActionKind.EXPAND in node.actions and node.state.expanded is False:
            self._perform(runtime, node, SimpleAction(ActionKind.EXPAND))
            node = self._current(runtime, node)
        for wanted in values:
            options = [
                n
                for n in self._descendants(runtime, node)
                if ActionKind.SELECT in n.actions and wanted in (n.label, n.value)
            ]
            if not options:
                raise LocateError(
                    f"{node_ref(node.node_id)} has no option {wanted!r}",
                    details={"ref": node_ref(node.node_id), "value": wanted},
                )
            if not options[0].state.selected:
                self._perform(runtime, options[0], SimpleAction(ActionKind.SELECT))
            node = self._current(runtime, node)

    async def _deselect(
        self, runtime: AppRuntime[Any, Any], node: SemanticsNode, values: Sequence[str] | None
    ) -> None:
        chosen = [
            n
            for n in self._descendants(runtime, node)
            if n.state.selected and (values is None or n.label in values or n.value in values)
        ]
        for option in chosen:
            self._perform(runtime, option, SimpleAction(ActionKind.SELECT))
            if self._current(runtime, option).state.selected:
                raise ActionabilityError(
                    "selecting a selected element did not deselect it: the application has no "
                    "deselection",
                    details={"ref": node_ref(option.node_id)},
                )

    async def _deselect_option(
        self, runtime: AppRuntime[Any, Any], node: SemanticsNode, args: ActArgs
    ) -> None:
        if not args.values:
            raise DataError("deselectOption needs args.values", path="args.values")
        await self._deselect(runtime, node, args.values)

    async def _deselect_all(
        self, runtime: AppRuntime[Any, Any], node: SemanticsNode, args: ActArgs
    ) -> None:
        await self._deselect(runtime, node, None)

    def _scroller(self, runtime: AppRuntime[Any, Any], node: SemanticsNode) -> SemanticsNode | None:
        snapshot = runtime.snapshot
        current: int | None = node.node_id
        while current is not None:
            candidate = snapshot.nodes[current]
            if ActionKind.SCROLL in candidate.actions:
                return candidate
            current = snapshot.parents.get(current)
        return None

    def _first_scrollable(self, runtime: AppRuntime[Any, Any]) -> SemanticsNode | None:
        return next((n for n in runtime.snapshot.ordered() if ActionKind.SCROLL in n.actions), None)

    def _scroll_until(
        self,
        runtime: AppRuntime[Any, Any],
        scroller: SemanticsNode,
        direction: ScrollDirection,
        done: Callable[[], bool],
    ) -> None:
        for _ in range(_SCROLL_LIMIT):
            if done():
                return
            receipt = self._perform(runtime, scroller, Scroll(direction))
            if receipt.before == receipt.after:
                return

    async def _scroll_into_view(
        self, runtime: AppRuntime[Any, Any], node: SemanticsNode, args: ActArgs
    ) -> None:
        scroller = self._scroller(runtime, node)
        if scroller is None or scroller.node_id == node.node_id:
            return
        scroller_id = scroller.node_id

        def position() -> int:
            view = runtime.snapshot.nodes[scroller_id].frame
            frame = self._current(runtime, node).frame
            if frame.origin.y < view.origin.y:
                return -1
            if frame.origin.y + frame.size.height > view.origin.y + view.size.height:
                return 1
            return 0

        where = position()
        if where == 0:
            return
        direction = ScrollDirection.DOWN if where > 0 else ScrollDirection.UP
        self._scroll_until(runtime, scroller, direction, lambda: position() != where)

    async def _scroll_to(
        self, runtime: AppRuntime[Any, Any], node: SemanticsNode, direction: ScrollDirection
    ) -> None:
        scroller = self._scroller(runtime, node)
        if scroller is None:
            return
        self._scroll_until(runtime, scroller, direction, lambda: False)

    async def _scroll_to_top(
        self, runtime: AppRuntime[Any, Any], node: SemanticsNode, args: ActArgs
    ) -> None:
        await self._scroll_to(runtime, node, ScrollDirection.UP)

    async def _scroll_to_bottom(
        self, runtime: AppRuntime[Any, Any], node: SemanticsNode, args: ActArgs
    ) -> None:
        await self._scroll_to(runtime, node, ScrollDirection.DOWN)

    async def _wait_for(self, ref: str | None, args: ActArgs) -> None:
        timeout = (args.timeout_ms if args.timeout_ms is not None else _DEFAULT_WAIT_MS) / 1000
        state = args.wait_state or "visible"

        def satisfied() -> bool:
            runtime = self._live()
            if ref is None:
                return not runtime.pending_work
            node_id = ref_node_id(ref)
            present = node_id is not None and node_id in runtime.snapshot.nodes
            return present if state in ("visible", "attached") else not present

        with trio.move_on_after(timeout):
            while not satisfied():
                await trio.sleep(0.005)
            return
        what = "pending work to finish" if ref is None else f"{ref} to be {state}"
        raise SurfaceTimeoutError(f"waited {timeout:g} s for {what}")

    # ---- read and check -----------------------------------------------------------------

    def _text(self, snapshot: SemanticsSnapshot, node: SemanticsNode) -> str:
        own = _own_text(node)
        if own or not node.children:
            return own or ""
        parts = [t for n, _d, _p in _walk(snapshot, node.node_id) if (t := _own_text(n))]
        return " ".join(parts)

    async def read(self, kind: ReadKind, ref: str | None = None, name: str | None = None) -> object:
        runtime = self._live()
        snapshot = runtime.snapshot
        if kind == "url":
            raise NavigationError("a semledger application has no URL")
        if kind == "title":
            return None if snapshot.root is None else snapshot.nodes[snapshot.root].label
        if kind == "result":
            return self._last_result
        node = self._node(runtime, ref)
        if kind == "text":
            return self._text(snapshot, node)
        if kind == "value":
            return _value(node)
        if kind == "attribute":
            if not name:
                raise DataError("read('attribute') needs a name", path="name")
            return self._attribute(node, name)
        raise DataError(f"unknown read kind {kind!r}", path="kind")

    @staticmethod
    def _attribute(node: SemanticsNode, name: str) -> str | None:
        from semledger.runtime._wire import encode_node

        wire = encode_node(node)
        value = wire.get(name, wire["state"].get(name))
        if value is None or isinstance(value, dict | list):
            return None if value is None else json.dumps(value, sort_keys=True)
        return str(value).lower() if isinstance(value, bool) else str(value)

    async def check(
        self, predicate: PredicateLike, subject: CheckSubject, ref: str | None = None
    ) -> CheckResult:
        runtime = self._live()
        pred = predicate_from_dict(predicate)
        if subject not in PREDICATE_SUBJECTS.get(pred.kind, ()):
            raise CheckError(f"{pred.kind} cannot be evaluated against the {subject}")
        snapshot = runtime.snapshot
        if subject == "page":
            return await self._check_page(snapshot, pred)
        if subject == "dialog":
            dialog = next((n for n in snapshot.ordered() if n.role is Role.DIALOG), None)
            if isinstance(pred, Visible | Hidden):
                shown = dialog is not None
                return CheckResult(ok=shown == isinstance(pred, Visible),
                                   actual="shown" if shown else "absent")
            if dialog is None:
                raise DialogError("no dialog is open")
            if not isinstance(pred, TextEquals | TextContains):
                raise CheckError(f"{pred.kind} cannot be evaluated against a dialog")
            return check_text(pred, self._text(snapshot, dialog))
        if ref is None:
            raise CheckError(f"{pred.kind} against an element needs a ref")
        node_id = ref_node_id(ref)
        node = None if node_id is None else snapshot.node(node_id)
        if isinstance(pred, Visible | Hidden):
            shown = node is not None
            return CheckResult(ok=shown == isinstance(pred, Visible),
                               actual="shown" if shown else "absent")
        if node is None:
            raise CheckError(f"unknown ref {ref!r}: there is no element to check")
        return check_element(
            pred,
            states=_states(node),
            text=self._text(snapshot, node),
            value=_value(node),
            checkable=node.state.checked is not None,
        )

    async def _check_page(self, snapshot: SemanticsSnapshot, pred: Predicate) -> CheckResult:
        if isinstance(pred, Count):
            refs = await self.locate(pred.candidate)
            return CheckResult(ok=len(refs) == pred.count, actual=str(len(refs)))
        if isinstance(pred, TitleMatches):
            title = "" if snapshot.root is None else snapshot.nodes[snapshot.root].label or ""
            return check_pattern(pred.pattern, title)
        if isinstance(pred, UrlMatches):
            raise CheckError("a semledger application has no URL to match")
        if not isinstance(pred, TextEquals | TextContains):
            raise CheckError(f"{pred.kind} cannot be evaluated against the page")
        if snapshot.root is None:
            return check_text(pred, "")
        return check_text(pred, self._text(snapshot, snapshot.nodes[snapshot.root]))

    # ---- locate and describe ------------------------------------------------------------

    async def locate(self, candidate: CandidateLike) -> list[str]:
        runtime = self._live()
        found = candidate_from_dict(candidate)
        snapshot = runtime.snapshot
        if isinstance(found, CoordsCandidate):
            hit = runtime.hit_test(found.x, found.y)
            return [] if hit is None else [node_ref(hit.node_id)]
        if isinstance(found, ControlPathCandidate):
            return [node_ref(n) for n in self._control_path(snapshot, found.value)]
        test: Callable[[SemanticsNode], bool]
        if isinstance(found, RoleCandidate):
            role, name, exact = found.role, found.name, found.exact
            def test(n: SemanticsNode) -> bool:
                return _ROLE_BY_NODE[n.role] == role and (
                    name is None or text_matches(n.label, name, exact)
                )
        elif isinstance(found, LabelCandidate):
            label, exact = found.value, found.exact
            def test(n: SemanticsNode) -> bool:
                return text_matches(n.label, label, exact)
        elif isinstance(found, TextCandidate):
            text, exact = found.value, found.exact
            def test(n: SemanticsNode) -> bool:
                return text_matches(_own_text(n), text, exact)
        elif isinstance(found, AutomationIdCandidate):
            if semantic_id_problem(found.value) is not None:
                return []  # no node can have it
            return [node_ref(n) for n in snapshot.find(found.value) if n in snapshot.nodes]
        else:
            return []
        return [node_ref(n.node_id) for n in snapshot.ordered() if test(n)]

    @staticmethod
    def _control_path(snapshot: SemanticsSnapshot, path: str) -> list[int]:
        """The nodes `path` names; its first step matches the root itself. Roles are ARIA
        role names."""
        steps = parse_control_path(path)
        if snapshot.root is None:
            return []
        nodes = snapshot.nodes
        return follow_control_path(
            steps,
            [snapshot.root],
            lambda n: nodes[n].children,
            lambda n: (_ROLE_BY_NODE[nodes[n].role],),
            lambda n: nodes[n].label,
        )

    async def describe(self, ref: str) -> ElementDescription:
        runtime = self._live()
        node = self._node(runtime, ref)
        snapshot = runtime.snapshot
        path: list[PathStep] = []
        current: int | None = node.node_id
        while current is not None:
            item = snapshot.nodes[current]
            parent = snapshot.parents.get(current)
            index = 0
            if parent is not None:
                siblings = [
                    c for c in snapshot.nodes[parent].children
                    if snapshot.nodes[c].role is item.role
                ]
                index = siblings.index(current)
            path.append(PathStep(_ROLE_BY_NODE[item.role], item.label, index))
            current = parent
        path.reverse()
        f = node.frame
        return ElementDescription(
            ref=ref,
            role=_ROLE_BY_NODE[node.role],
            name=node.label,
            value=_value(node),
            description=node.description,
            text=self._text(snapshot, node),
            states=_states(node),
            box=(f.origin.x, f.origin.y, f.size.width, f.size.height),
            native=_native(node),
            path=tuple(path),
        )

    # ---- screenshot ---------------------------------------------------------------------

    async def screenshot(self, path: str, mask: Sequence[str] | None = None) -> None:
        runtime = self._live()
        boxes = [self._node(runtime, ref).frame for ref in mask or ()]
        ops = runtime.display_list()
        snapshot = runtime.snapshot
        await trio.to_thread.run_sync(_paint, path, ops, snapshot, boxes, self.width)

    # ---- state and restore --------------------------------------------------------------

    async def state(self) -> SessionState:
        runtime = self._live()
        extras = {
            "app": self.app_ref,
            "generation": str(runtime.generation),
            "hash": runtime.snapshot.hash,
            "inputs": str(len(self._inputs)),
            "session": self._token,
        }
        log = self._encode_inputs(self._inputs)
        if log is not None:
            extras["log"] = log
        return SessionState(extras=extras)

    async def restore(self, state: SessionStateLike) -> None:
        self._live()
        given = session_state_from_dict(state)
        extras = given.extras
        try:
            generation = int(extras["generation"])
            count = int(extras["inputs"])
            expected_hash = extras["hash"]
        except (KeyError, ValueError) as error:
            raise DataError(
                "not a runtime adapter state: extras need generation, inputs and hash",
                path="state.extras",
            ) from error
        if extras.get("app", self.app_ref) != self.app_ref:
            raise SessionError(f"the state is of {extras['app']}, not {self.app_ref}")
        if extras.get("session") == self._token and count <= len(self._inputs):
            inputs = list(self._inputs[:count])
        elif "log" in extras:
            inputs = self._decode_inputs(extras["log"])[:count]
        else:
            raise SessionError("the state is of another session and carries no input log")
        runtime, completed = self._reexecute(inputs)
        if runtime.generation != generation or runtime.snapshot.hash != expected_hash:
            raise SessionError(
                f"re-executing {count} inputs reached generation {runtime.generation}, not "
                f"{generation} with the recorded snapshot: the application is not deterministic"
            )
        old = self._runtime
        self._install(runtime, inputs, completed=completed)
        if old is not None:
            old.close()

    def _reexecute(self, inputs: Sequence[_Input]) -> tuple[AppRuntime[Any, Any], set[int]]:
        """A fresh runtime with ``inputs`` applied; returns it with its effects left queued
        (``take_effects``) and the ids of effects whose completion the inputs contain."""
        try:
            runtime = AppRuntime(self.app, width=self.width)
            issued: list[tuple[int, Effect[Any]]] = []
            completed: set[int] = set()
            for item in inputs:
                if item.kind == "perform":
                    assert item.action is not None
                    runtime.perform(ByNodeId(item.node_id), item.action, _LATEST)
                else:
                    completed.add(item.effect_id)
                    runtime.complete_effect(item.effect_id, item.message)
            issued.extend(runtime.take_effects())
        except Exception as error:
            raise SessionError(f"re-executing the session failed: {error}") from error
        runtime._outbox = [e for e in issued if e[0] not in completed]
        return runtime, completed

    def _message_codec(self) -> Any:
        if self._codec is None:
            from semledger.actors import MessageCodec

            self._codec = MessageCodec(self.app.message_types, self.app.model_type)
        return self._codec

    def _encode_inputs(self, inputs: Sequence[_Input]) -> str | None:
        out: list[dict[str, Any]] = []
        try:
            for item in inputs:
                if item.kind == "perform":
                    assert item.action is not None
                    out.append({"node": item.node_id, "action": encode_action(item.action)})
                else:
                    message = (
                        None if item.message is None
                        else self._message_codec().encode(item.message)
                    )
                    out.append({"effect": item.effect_id, "message": message})
            return json.dumps(out, separators=(",", ":"), ensure_ascii=False)
        except (ValueError, TypeError):
            return None

    def _decode_inputs(self, log: str) -> list[_Input]:
        try:
            items = json.loads(log)
            out = []
            for item in items:
                if "action" in item:
                    out.append(_Input("perform", node_id=int(item["node"]),
                                      action=decode_action(item["action"])))
                else:
                    message = item["message"]
                    decoded = None if message is None else self._message_codec().decode(message)
                    out.append(_Input("effect", effect_id=int(item["effect"]), message=decoded))
            return out
        except (ValueError, TypeError, KeyError, WireError) as error:
            raise DataError(f"the state's input log is unreadable: {error}",
                            path="state.extras.log") from error


_LATEST: Final = Latest()

def _colour(value: str, fallback: str) -> str:
    from PIL import ImageColor

    try:
        ImageColor.getrgb(value)
    except ValueError:
        return fallback
    return value


def _paint(
    path: str,
    ops: Sequence[PaintOp],
    snapshot: SemanticsSnapshot,
    masked: Sequence[Any],
    width: float,
) -> None:
    """Render the display list to a PNG at ``path``, then blank the ``masked`` frames."""
    from PIL import Image, ImageDraw

    height = 1.0
    if snapshot.root is not None:
        root = snapshot.nodes[snapshot.root].frame
        width = max(width, root.origin.x + root.size.width)
        height = root.origin.y + root.size.height
    for op in ops:
        height = max(height, op.frame.origin.y + op.frame.size.height)
    image = Image.new("RGB", (max(1, math.ceil(width)), max(1, math.ceil(height))), "#ffffff")
    draw = ImageDraw.Draw(image)

    def box(frame: Any) -> tuple[float, float, float, float]:
        x, y = frame.origin.x, frame.origin.y
        return (x, y, x + max(frame.size.width - 1, 0), y + max(frame.size.height - 1, 0))

    for op in ops:
        if op.kind == "rect":
            draw.rectangle(box(op.frame), fill=_colour(op.color, "#ffffff"))
        elif op.kind == "border":
            draw.rectangle(box(op.frame), outline=_colour(op.color, "#000000"))
        elif op.kind == "text" and op.text:
            draw.text(
                (op.frame.origin.x + 4, op.frame.origin.y + 4),
                op.text,
                fill=_colour(op.color, "#000000"),
            )
    for frame in masked:
        draw.rectangle(box(frame), fill=_MASK_COLOUR)
    try:
        image.save(path, format="PNG")
    except OSError as error:
        raise DataError(f"cannot write the screenshot: {error}", path="path") from error


_ActHandler = Callable[[RuntimeSurface, AppRuntime[Any, Any], SemanticsNode, ActArgs], Any]
_ACTIONS: Final[Mapping[str, _ActHandler]] = {
    "click": RuntimeSurface._click,
    "hoverAndClick": RuntimeSurface._hover_and_click,
    "rightClick": RuntimeSurface._right_click,
    "focus": RuntimeSurface._focus,
    "type": RuntimeSurface._type,
    "clear": RuntimeSurface._clear,
    "submit": RuntimeSurface._submit,
    "press": RuntimeSurface._press,
    "keyDown": RuntimeSurface._press,
    "keyUp": RuntimeSurface._key_up,
    "setChecked": RuntimeSurface._set_checked,
    "selectOption": RuntimeSurface._select_option,
    "deselectOption": RuntimeSurface._deselect_option,
    "deselectAll": RuntimeSurface._deselect_all,
    "scrollIntoView": RuntimeSurface._scroll_into_view,
    "scrollToTop": RuntimeSurface._scroll_to_top,
    "scrollToBottom": RuntimeSurface._scroll_to_bottom,
}


def create_runtime_surface(config: Mapping[str, Any]) -> RuntimeSurface:
    """The registry's factory: ``{"adapter": "runtime", "app": "module:attribute"}`` (or
    ``"app"`` an ``App`` itself), optionally ``"width"``. DataError for a config without an
    app; SessionError when the reference names no importable App."""
    app = config.get("app")
    width = config.get("width", 800.0)
    if not isinstance(width, int | float) or isinstance(width, bool) or width <= 0:
        raise DataError("expected a positive number", path="config.width")
    if isinstance(app, App):
        return RuntimeSurface(app, config.get("app_ref") or app.name, width=float(width))
    if not isinstance(app, str):
        raise DataError("expected the app as module:attribute", path="config.app")
    try:
        loaded = load_app(app)
    except AppLoadError as error:
        raise SessionError(str(error)) from error
    return RuntimeSurface(loaded, app, width=float(width))
