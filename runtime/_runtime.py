"""The application runtime: the TEA loop, atomic commits and the checked action transaction.

`AppRuntime` is synchronous and pure: no I/O, no clock, no randomness. Effects are handed out
through `take_effects` and their messages come back through `complete_effect`; the Trio
`EffectRunner` (or a session actor) does the waiting.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import math
import types
import typing
from collections import deque
from collections.abc import Iterable, Iterator
from typing import Any, Generic, TypeVar

import attrs

from ._actions import (
    ByNodeId,
    ByPath,
    Latest,
    Precondition,
    SemanticsAction,
    SetSelection,
    SimpleAction,
    Target,
    check_generation,
    check_point,
    check_request,
    check_since,
)
from ._app import App, Effect, Every, NotAnEffectError, check_app, split_step
from ._enums import ActionKind, ErrorCode, Live, Role
from ._errors import (
    ApplicationError,
    NotAModelError,
    NotAProposalError,
    NotAViewError,
    app_failed,
)
from ._ids import SemanticId
from ._node import (
    AmbiguousRelationTarget,
    Issue,
    MissingRelationTarget,
    SemanticsNode,
)
from ._outcomes import Receipt, Rejection
from ._reads import Delta, ReadResult
from ._snapshot import (
    Journal,
    KeptPositions,
    SemanticsSnapshot,
    announcements_of,
    duplicate_issues,
    sort_issues,
)
from ._targets import check_precondition, path_refusal, resolve_target
from ._text import a_or_an
from ._tree import Counters, Element, ElementTree, PaintOp, is_focusable, resolve_relations
from ._view import Proposal, Reject, ScrollBy, SelectText, View, check_commit, check_node_text
from ._wire import decode_node, encode_node, encode_target

Model = TypeVar("Model")
Msg = TypeVar("Msg")

POINTER_PHASES = ("Down", "Up", "Move", "Cancel", "Exit")
"""The phases `AppRuntime.dispatch_pointer` takes (the diagnostics tools' wire values)."""
COMMAND_INTENTS = (
    "Activate", "Submit", "Cancel", "Copy", "Cut", "Paste", "Undo", "Redo", "SelectAll",
    "OpenContextMenu",
)  # fmt: skip
"""The intents `AppRuntime.dispatch_command` takes; those it has nothing to do for (the
clipboard, undo) are answered as not handled."""


class CheckpointMismatchError(Exception):
    """Raised by `AppRuntime.restore` when the rebuilt snapshot is not the one checkpointed.

    The application's view is then not a pure function of its model (or the model did not
    survive encoding); recovery falls back to re-executing from the first input.
    """


def _reject(code: ErrorCode, message: str, **details: Any) -> Rejection:
    return Rejection(code, message, details)


def _is_model(model: object, model_type: Any) -> bool:
    """Whether `model` is of `model_type` as far as its class tells: a union takes a model of
    any of its members, ``list[int]`` any list (its items are not looked at), ``float`` an
    int too (as type checkers take it); ``Any`` and what no class tells (a ``Literal``) take
    any model."""
    origin = typing.get_origin(model_type)
    if origin is typing.Union or origin is types.UnionType:
        return any(_is_model(model, member) for member in typing.get_args(model_type))
    if isinstance(origin, type):
        return isinstance(model, origin)
    if model_type is Any or not isinstance(model_type, type):
        return True
    if model_type is float:
        return isinstance(model, int | float)
    return isinstance(model, model_type)


def _type_name(model_type: Any) -> str:
    return model_type.__qualname__ if isinstance(model_type, type) else repr(model_type)


def _not_a_model(caller: str, model: object, model_type: Any) -> NotAModelError:
    expected = f"not {a_or_an(_type_name(model_type))} (its model_type)"
    if model is None:
        return NotAModelError(f"the app's {caller} returned None, {expected}: a missing return?")
    kind = a_or_an(type(model).__qualname__)
    if isinstance(model, tuple) and len(model) == 2 and _is_model(model[0], model_type):
        return NotAModelError(
            f"the app's {caller} returned a tuple, {expected}: it returns the model, or"
            " Next(model, effects) to start effects, not (model, effects)"
        )
    return NotAModelError(f"the app's {caller} returned {kind} {model!r:.80}, {expected}")


def _holds_effects(model: object) -> bool:
    """Whether `model` is a ``(model, effects)`` pair, the Elm habit: no model holds an
    Effect (the log could not record it), so without a model_type it is told apart."""
    if not isinstance(model, tuple) or len(model) != 2:
        return False
    effects = model[1]
    return isinstance(effects, Effect) or (
        isinstance(effects, tuple | list) and any(isinstance(e, Effect) for e in effects)
    )


def _check_messages(kind: ActionKind, proposal: Proposal[Any]) -> None:
    """Raise for a message class a handler proposed for a message (``Proposal((Go,))``):
    update's ``case Go():`` would not match it, and the action would do nothing, unseen."""
    for message in proposal.messages:
        if isinstance(message, type):
            name = message.__qualname__
            raise ApplicationError(f"the {kind.value} handler proposed a message class") from (
                NotAProposalError(
                    f"the {kind.value} handler proposed {name}, a message class, not a message:"
                    f" give one, Proposal(({name}(),))"
                )
            )


class AppRuntime(Generic[Model, Msg]):
    """One session of an application: its model, its mounted tree and its committed semantics."""

    def __init__(self, app: App[Model, Msg], *, width: float = 800.0) -> None:
        self._setup(app, width)
        model, effects = self._split(self._call(app.init), "init")
        self._model: Model = model
        self._schedule(effects)
        self._commit()

    def _setup(self, app: App[Model, Msg], width: float) -> None:
        check_app(app)
        if isinstance(width, bool) or not isinstance(width, int | float):
            raise TypeError(f"width: expected a number, got {type(width).__name__} {width!r}")
        if not (math.isfinite(width) and width > 0):
            raise ValueError(f"width: expected a finite number above 0, got {width}")
        self.app = app
        self._tree = ElementTree(width)
        self._journal = Journal(SemanticsSnapshot.empty())
        self._queue: deque[Msg] = deque()
        self._outbox: list[tuple[int, Effect[Msg]]] = []
        self._pending: set[int] = set()
        self._next_effect_id = 1
        self._closed = False
        self._busy = False
        self._view_stale = True
        self._dup_candidates: set[SemanticId] = set()
        self._relation_issues: tuple[Issue, ...] = ()
        self._source_issues: dict[Element, tuple[Issue, ...]] = {}
        """The relation issues of each source that has any, as of the last commit."""
        self._subscribed: tuple[object, tuple[Every[Msg], ...]] | None = None
        """The last model asked for its subscriptions, and their answer."""
        self._pressed: Element | None = None
        self._synthetic_id: int | None = None
        self._scoped = False
        self._positions = KeptPositions()
        """Element children indexed for tree-order sorts (`ElementTree` replaces an
        element's children list when it reconciles them, never changes it in place)."""
        self._left: dict[int, SemanticsNode] = {}
        """The live nodes out of the public tree whose elements are still mounted (behind a
        modal, hidden), as they were when they left it: one back announces what it says
        unless it says what it said then."""

    # ---- checkpoints ----------------------------------------------------------------------

    def checkpoint(self) -> dict[str, Any]:
        """The runtime's own state as plain data (the model is the caller's to encode).

        With the model, `restore` rebuilds a runtime that commits the same snapshot with the
        same node ids, and announces what this one would (a status that changed behind a
        modal), so recovery can start here instead of at the first input.
        """
        tree = self._tree
        focused = tree.focused
        return {
            "generation": self.generation,
            "hash": self.snapshot.hash,
            "next_node_id": tree.next_node_id,
            "next_effect_id": self._next_effect_id,
            "pending_effects": sorted(self._pending),
            "synthetic_id": self._synthetic_id,
            "elements": tree.export_elements(),
            "focused": None if focused is None else focused.node_id,
            "left": [encode_node(node) for node in self._left.values()],
        }

    @classmethod
    def restore(
        cls, app: App[Model, Msg], model: Model, state: dict[str, Any], *, width: float = 800.0
    ) -> AppRuntime[Model, Msg]:
        """A runtime at a checkpoint; raises `CheckpointMismatchError` if it commits differently."""
        runtime = cls.__new__(cls)
        runtime._setup(app, width)
        runtime._model = model
        runtime._next_effect_id = int(state["next_effect_id"])
        runtime._pending = set(state["pending_effects"])
        runtime._synthetic_id = state["synthetic_id"]
        generation = int(state["generation"])
        runtime._journal = Journal(
            attrs.evolve(SemanticsSnapshot.empty(), generation=generation - 1)
        )
        tree = runtime._tree
        tree.restore(runtime._view(model), state["elements"], int(state["next_node_id"]))
        runtime._view_stale = False
        focused = state["focused"]
        if focused is not None:
            tree.set_focus(
                next((e for e in tree.root.walk() if e.node_id == focused), None)
                if tree.root is not None
                else None
            )
        runtime._commit()
        snapshot = runtime.snapshot
        if snapshot.generation == generation - 1 and snapshot.root is None:
            # An empty tree commits nothing over the empty journal it started from.
            snapshot = attrs.evolve(snapshot, generation=generation)
        if snapshot.generation != generation or snapshot.hash != state["hash"]:
            raise CheckpointMismatchError(
                f"the checkpoint of generation {generation} rebuilt as generation "
                f"{snapshot.generation} with a different snapshot"
            )
        runtime._journal = Journal(snapshot)
        # (A checkpoint taken before live nodes were kept has none.)
        left = (decode_node(node, "left") for node in state.get("left", ()))
        runtime._left = {node.node_id: node for node in left}
        runtime._dup_candidates = {
            sid for sid, nodes in snapshot.by_semantic_id.items() if len(nodes) > 1
        }
        return runtime

    def adopt_journal(self, journal: Journal) -> None:
        """Answer reads from `journal`, which must end at this runtime's current snapshot.

        A runtime restored from a checkpoint holds only the generations committed since;
        the session's log holds those before it that a runtime that never stopped would
        still answer deltas from. Raises ``ValueError`` if `journal` ends elsewhere.
        """
        if journal.current != self._journal.current:
            raise ValueError(
                f"the journal ends at generation {journal.current.generation} with another"
                f" snapshot than this runtime's generation {self.generation}"
            )
        self._journal = journal

    # ---- reading --------------------------------------------------------------------------

    @property
    def snapshot(self) -> SemanticsSnapshot:
        return self._journal.current

    @property
    def generation(self) -> int:
        return self._journal.current.generation

    @property
    def model(self) -> Model:
        return self._model

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def journal(self) -> Journal:
        """The commits `read` answers from: the current snapshot and the last generations."""
        return self._journal

    @property
    def pending_work(self) -> bool:
        return bool(self._pending)

    @property
    def pending_effects(self) -> frozenset[int]:
        """Ids of effects handed out and not yet completed."""
        return frozenset(self._pending)

    @property
    def counters(self) -> Counters:
        return self._tree.counters

    @property
    def next_node_id(self) -> int:
        return self._tree.next_node_id

    def read(self, since: int | None = None) -> ReadResult | Rejection:
        """Full, Delta or Unchanged against the last commit (never forces a build or paint).

        Raises ``TypeError`` unless `since` is None or an int, ``ValueError`` unless it is
        from 0 to 2**64-1 (as ``Exact`` checks a generation)."""
        check_since(since)
        if self._closed:
            return _reject(ErrorCode.HOST_CLOSED, "the session is closed")
        return self._journal.read(since)

    def snapshot_at(self, generation: int) -> SemanticsSnapshot | None:
        """The snapshot of `generation` while the journal holds it (None once expired).
        Raises ``TypeError`` unless `generation` is an int."""
        check_generation(generation, "generation")
        return self._journal.snapshot_at(generation)

    def delta(self, start: int, end: int) -> Delta | None:
        """The delta between two generations still in the journal (None once expired).
        Raises ``TypeError`` unless `start` and `end` are ints."""
        check_generation(start, "start")
        check_generation(end, "end")
        return self._journal.between(start, end)

    def resolve(self, target: Target) -> SemanticsNode | Rejection:
        """The node `target` names in the current snapshot, or why it names none."""
        return resolve_target(target, self._journal.current, self._tree.next_node_id)

    def display_list(self) -> list[PaintOp]:
        return self._tree.display_list()

    def state_counters(self) -> dict[str, int]:
        c = self._tree.counters
        return {
            "layout_passes": c.layout_passes,
            "paint_passes": c.paint_passes,
            "semantics_passes": c.semantics_passes,
            "platform_passes": c.platform_passes,
            "commits": c.commits,
            "generation": self.generation,
            "queue_depth": len(self._queue),
            "pending_effects": len(self._pending),
        }

    def paint_summary(self) -> dict[str, Any]:
        ops = self._tree.display_list()
        kinds: dict[str, int] = {}
        for op in ops:
            kinds[op.kind] = kinds.get(op.kind, 0) + 1
        hovered = self._tree.hovered
        return {
            "ops": len(ops),
            "by_kind": kinds,
            "hovered": None if hovered is None else str(hovered.node_id),
            "paint_passes": self._tree.counters.paint_passes,
        }

    # ---- acting ---------------------------------------------------------------------------

    def perform(
        self, target: Target, action: SemanticsAction, precondition: Precondition
    ) -> Receipt | Rejection:
        """The action transaction: check in order, then apply, drain and commit atomically.

        Raises ``TypeError`` for an argument of the wrong type (see `check_request`)."""
        check_request(target, action, precondition)
        if isinstance(target, ByPath) and (refused := path_refusal(target)) is not None:
            return refused
        if self._closed:
            return _reject(ErrorCode.HOST_CLOSED, "the session is closed")
        if self._busy:
            return _reject(
                ErrorCode.REENTRANT_DISPATCH, "an action was dispatched while another is delivered"
            )
        self._commit()
        snapshot = self._journal.current
        stale = check_precondition(precondition, snapshot.generation)
        if stale is not None:
            return stale
        resolved = resolve_target(target, snapshot, self._tree.next_node_id)
        if isinstance(resolved, Rejection):
            return resolved
        node = resolved
        echoed = encode_target(target)
        if node.state.disabled:
            return _reject(ErrorCode.TARGET_DISABLED, "the target is disabled", target=echoed)
        # The synthetic group root has no element and offers no action.
        element = self._tree.by_node.get(node.node_id)
        if element is None or action.kind not in node.actions:
            return _reject(
                ErrorCode.ACTION_UNAVAILABLE,
                f"the target does not offer {action.kind.value}",
                target=echoed,
                action=action.kind.value,
            )
        handler = element.view.handlers.get(action.kind)
        if handler is None:
            outcome: object = Proposal(commits=())
        else:
            self._busy = True
            try:
                outcome = handler(action)
            except BaseException as error:
                if not app_failed(error):
                    raise
                raise ApplicationError(f"the {action.kind.value} handler raised") from error
            finally:
                self._busy = False
        if outcome is not None and not isinstance(outcome, Proposal | Reject):
            kind = action.kind.value
            raise ApplicationError(f"the {kind} handler returned no Proposal") from (
                NotAProposalError(
                    f"the {kind} handler returned {outcome!r:.80}, not a Proposal, a Reject or"
                    " None (a message is proposed as Proposal((message,)))"
                )
            )
        if isinstance(outcome, Reject):
            return _reject(
                ErrorCode.HANDLER_REJECTED, outcome.reason, target=echoed, action=action.kind.value
            )
        proposal: Proposal[Any] = outcome if isinstance(outcome, Proposal) else Proposal()
        _check_messages(action.kind, proposal)
        for commit in proposal.commits:
            check_commit(action.kind, element.view, commit)
        messages = self._mapped(element, proposal.messages)
        before = snapshot.generation
        if action.kind is ActionKind.FOCUS:
            self._tree.set_focus(element)
        for commit in proposal.commits:
            if isinstance(commit, SelectText):
                self._tree.select_text(element, commit.start, commit.end)
            elif isinstance(commit, ScrollBy):
                self._tree.scroll_by(element, commit.delta)
        self._queue.extend(messages)
        self._drain()
        self._commit()
        return Receipt(before, self.generation, bool(self._pending))

    def deliver(self, message: Msg) -> int:
        """Deliver one message from outside (a timer, a subscription); returns the generation."""
        if self._closed:
            return self.generation
        self._queue.append(message)
        if self._busy:
            # Called from inside update, view or a handler: the message waits its turn in the
            # FIFO queue instead of starting a nested drain that would lose the outer update.
            return self.generation
        self._drain()
        self._commit()
        return self.generation

    def take_effects(self) -> list[tuple[int, Effect[Msg]]]:
        """Effects that update asked for since the last call, with their session-unique ids."""
        out, self._outbox = self._outbox, []
        return out

    def complete_effect(self, effect_id: int, message: Msg | None) -> int:
        """An effect finished: its message (if any) enters the queue like any other input.

        Raises ``TypeError`` for an `effect_id` that is no int, ``ValueError`` for an effect
        that is not outstanding (never started, or finished already): its message would be
        delivered as if it had run."""
        if isinstance(effect_id, bool) or not isinstance(effect_id, int):
            raise TypeError(
                "effect_id: expected an int (an id take_effects handed out), got"
                f" {type(effect_id).__name__} {effect_id!r:.80}"
            )
        if effect_id not in self._pending:
            outstanding = ", ".join(map(str, sorted(self._pending))) or "none"
            raise ValueError(
                f"effect {effect_id!r} is not outstanding (outstanding: {outstanding})"
            )
        self._pending.discard(effect_id)
        if message is not None and not self._closed:
            self._queue.append(message)
        if self._busy or self._closed:
            return self.generation
        self._drain()
        self._commit()
        return self.generation

    def close(self) -> None:
        """End the session: every later read and action answers `host_closed`."""
        self._closed = True
        self._queue.clear()
        self._outbox.clear()

    # ---- diagnostics ----------------------------------------------------------------------

    def hit_test(self, x: float, y: float) -> SemanticsNode | None:
        """The innermost node whose frame holds the point, or None. Raises ``TypeError``
        unless `x` and `y` are numbers."""
        check_point(x, y)
        snapshot = self._journal.current
        if snapshot.root is None:
            return None
        node = snapshot.nodes[snapshot.root]
        if not node.frame.contains(x, y):
            return None
        while True:
            inside = [
                child
                for child_id in node.children
                if (child := snapshot.nodes[child_id]).frame.contains(x, y)
            ]
            if not inside:
                return node
            node = inside[-1]

    def dispatch_pointer(self, x: float, y: float, phase: str) -> dict[str, Any]:
        check_point(x, y)
        if phase not in POINTER_PHASES:  # else it would count as a Cancel, silently
            raise ValueError(f"phase: expected one of {', '.join(POINTER_PHASES)}, got {phase!r}")
        if self._closed:
            return {"handled": False, "error": "host_closed"}
        hit = self.hit_test(x, y)
        element = None if hit is None else self._tree.by_node.get(hit.node_id)
        result: dict[str, Any] = {
            "handled": False,
            "node_id": None if hit is None else str(hit.node_id),
        }
        before = self.generation
        if phase == "Move":
            self._tree.set_hover(element)
            result["handled"] = True
        elif phase == "Down":
            self._pressed = element
            if hit is not None and ActionKind.FOCUS in hit.actions:
                self._tree.set_focus(element)
            result["handled"] = element is not None
        elif phase == "Up":
            pressed, self._pressed = self._pressed, None
            if hit is not None and element is pressed and ActionKind.ACTIVATE in hit.actions:
                outcome = self.perform(
                    ByNodeId(hit.node_id), SimpleAction(ActionKind.ACTIVATE), Latest()
                )
                return self._diagnostic_outcome(result, outcome)
        else:
            self._pressed = None
            self._tree.set_hover(None)
            result["handled"] = True
        self._commit()
        if self.generation != before:  # it moved the focus, which agents see
            result.update(before=str(before), after=str(self.generation))
        return result

    def dispatch_command(self, intent: str) -> dict[str, Any]:
        if intent not in COMMAND_INTENTS:  # else it would read as unhandled, silently
            raise ValueError(
                f"intent: expected one of {', '.join(COMMAND_INTENTS)}, got {intent!r}"
            )
        if self._closed:
            return {"handled": False, "error": "host_closed"}
        self._commit()
        snapshot = self._journal.current
        target_id = snapshot.focused
        result: dict[str, Any] = {
            "handled": False,
            "node_id": None if target_id is None else str(target_id),
        }
        action: SemanticsAction | None = None
        if intent == "Activate":
            action = SimpleAction(ActionKind.ACTIVATE)
        elif intent == "Submit":
            action = SimpleAction(ActionKind.SUBMIT)
        elif intent == "Cancel":
            action = SimpleAction(ActionKind.DISMISS)
            if target_id is None or ActionKind.DISMISS not in snapshot.nodes[target_id].actions:
                target_id = snapshot.root
        elif intent == "OpenContextMenu":
            action = SimpleAction(ActionKind.SHOW_MENU)
        elif intent == "SelectAll" and target_id is not None:
            length = len(self._tree.by_node[target_id].view.value or "")
            action = SetSelection(0, length)
        if action is None or target_id is None:
            result["reason"] = f"nothing in the runtime handles {intent} here"
            return result
        outcome = self.perform(ByNodeId(target_id), action, Latest())
        return self._diagnostic_outcome(result, outcome)

    @staticmethod
    def _diagnostic_outcome(result: dict[str, Any], outcome: Receipt | Rejection) -> dict[str, Any]:
        if isinstance(outcome, Receipt):
            result.update(handled=True, before=str(outcome.before), after=str(outcome.after))
        else:
            result.update(handled=False, error=outcome.code.value)
        return result

    def subscriptions(self) -> tuple[Every[Msg], ...]:
        """The timers the current model subscribes to (none for an app without any), in
        the order the app listed them, each once: a session numbers new timers in this
        order, so their ids do not depend on hashing.

        Raises `ApplicationError` if the app's ``subscriptions`` raises or returns
        something other than `Every` values.
        """
        if self.app.subscriptions is None:
            return ()
        cached = self._subscribed
        if cached is not None and cached[0] is self._model:
            return cached[1]  # the same model: a pure function gives the same timers
        wanted = self._call(self.app.subscriptions, self._model)
        if isinstance(wanted, Every) or not isinstance(wanted, Iterable):
            raise ApplicationError(
                f"subscriptions must return a sequence of Every values, got {wanted!r}"
            )
        listed = tuple(wanted)
        strays = [timer for timer in listed if not isinstance(timer, Every)]
        if strays:
            raise ApplicationError(
                f"subscriptions must return Every values only, got {strays[0]!r}"
            )
        timers = tuple(dict.fromkeys(listed))
        self._subscribed = (self._model, timers)
        return timers

    # ---- internals ------------------------------------------------------------------------

    def _call(self, fn: Any, *args: Any, name: str | None = None) -> Any:
        """`fn(*args)`, the app's code (`name` says which in the error, if not its name)."""
        self._busy = True
        try:
            return fn(*args)
        except BaseException as error:
            if not app_failed(error):
                raise
            said = name or getattr(fn, "__name__", "the application")
            raise ApplicationError(f"{said} raised") from error
        finally:
            self._busy = False

    def _split(self, step: object, caller: str) -> tuple[Any, tuple[Effect[Any], ...]]:
        try:
            model, effects = split_step(step)
        except NotAnEffectError as error:
            raise ApplicationError(f"{caller} returned effects that are not Effects") from error
        declared = self.app.model_type
        if declared is None and _holds_effects(model):
            raise ApplicationError(f"{caller} returned (model, effects)") from NotAModelError(
                f"the app's {caller} returned a tuple holding Effects, taken for the model, its"
                " effects never started: it returns the model, or Next(model, effects) to start"
                " effects, not (model, effects)"
            )
        if declared is not None and not _is_model(model, declared):
            returned = "no model" if model is None else a_or_an(type(model).__qualname__)
            raise ApplicationError(f"{caller} returned {returned}, not its model_type") from (
                _not_a_model(caller, model, declared)
            )
        return model, effects

    def _view(self, model: Model) -> View[Any]:
        view = self._call(self.app.view, model)
        if not isinstance(view, View):
            error = NotAViewError(
                f"the app's view returned a {type(view).__name__}, not a semledger View"
            )
            raise ApplicationError("view returned no View") from error
        return view

    def _schedule(self, effects: Iterable[Effect[Msg]]) -> None:
        for effect in effects:
            effect_id = self._next_effect_id
            self._next_effect_id += 1
            self._pending.add(effect_id)
            self._outbox.append((effect_id, effect))

    def _mapped(self, element: Element, messages: Iterable[Any]) -> list[Any]:
        """`messages`, proposed at `element`, through the ``View.map`` functions of it and
        its ancestors, innermost first; what one of them raises is the app's error."""
        mappers = [
            owner.view.mapper
            for owner in (element, *element.ancestors())
            if owner.view.mapper is not None
        ]
        mapped = []
        for message in messages:
            for mapper in mappers:
                message = self._call(mapper, message, name="a view's map function")
            mapped.append(message)
        return mapped

    def _drain(self) -> None:
        try:
            while self._queue:
                message = self._queue.popleft()
                step = self._call(self.app.update, self._model, message)
                model, effects = self._split(step, "update")
                self._model = model
                self._schedule(effects)
                self._view_stale = True
        except BaseException:
            self._queue.clear()  # what came with the message that failed is not applied
            raise

    def _commit(self) -> None:
        """Rebuild what is stale, and publish a new snapshot if anything public changed."""
        with _cycle_collection_paused():
            self._commit_now()

    def _commit_now(self) -> None:
        tree = self._tree
        if self._view_stale:
            tree.build(self._view(self._model))
            self._view_stale = False
        tree.layout()
        tree.paint()
        tree.platform()
        top = tree.semantics()
        tree.refresh_relations()
        root, scoped = self._root(top)
        focus = tree.focused
        if focus is not None and (
            focus.node is None
            or not is_focusable(focus.view)  # (disabled, or no longer taking the focus)
            or (scoped and not self._within(focus, root))
        ):
            tree.set_focus(None)
            top = tree.semantics()
            root, scoped = self._root(top)
        synthetic = self._synthetic(top, root)
        changes, removal_order = tree.take_changes()
        previous = self._journal.current
        if scoped and self._scoped and root is not None and root == previous.root:
            upserted, removed = self._modal_changes(previous, root, changes, removal_order)
        elif scoped or self._scoped:
            upserted, removed = self._scoped_changes(previous, root, synthetic, removal_order)
        else:
            upserted, removed = self._tree_changes(previous, synthetic, changes, removal_order)
        self._scoped = scoped
        focused = None if tree.focused is None else tree.focused.node_id
        try:
            derived = previous.derive(
                upserted=upserted,
                removed=removed,
                root=root,
                focused=focused,
                issues=previous.issues,
            )
        except UnicodeEncodeError:
            # Packing the nodes found text UTF-8 cannot encode: the app's, at some node.
            for node in upserted:
                element = tree.by_node.get(node.node_id)
                check_node_text(node, None if element is None else element.view)
            raise
        issues = self._issues(derived, previous, upserted, removed)
        announcements = announcements_of(previous, derived.generation, upserted, left=self._left)
        unmounted = tree.take_unmounted()
        if unmounted:
            self._positions.clear()  # its children lists would keep the elements alive
        self._note_left(previous, upserted, removed, unmounted)
        if (
            not upserted
            and not removed
            and root == previous.root
            and focused == previous.focused
            and issues == previous.issues
        ):
            return
        snapshot = attrs.evolve(derived, issues=issues)
        self._journal.record(
            snapshot,
            touched=[*removed, *(n.node_id for n in upserted)],
            removed=removed,
            announcements=announcements,
        )
        tree.counters.commits += 1

    def _note_left(
        self,
        previous: SemanticsSnapshot,
        upserted: Iterable[SemanticsNode],
        removed: Iterable[int],
        unmounted: Iterable[int],
    ) -> None:
        """Keep the live nodes that left the public tree as they were, for when they come
        back; forget those back, and those whose element is gone for good."""
        left = self._left
        for node in upserted:
            left.pop(node.node_id, None)
        for node_id in removed:
            old = previous.nodes.get(node_id)
            if old is not None and old.live is not Live.OFF:
                left[node_id] = old
        if left:
            for node_id in unmounted:
                left.pop(node_id, None)

    def _root(self, top: tuple[int, ...]) -> tuple[int | None, bool]:
        """The public root and whether it is an open modal (the deepest one) scoping the tree."""
        modals = [e for e in self._tree.modal_elements if e.node is not None]
        if modals:
            deepest = modals[0]
            if len(modals) > 1:
                positions = self._positions
                deepest = max(modals, key=lambda e: (e.depth, _element_path(e, positions)))
            return deepest.node_id, True
        if len(top) == 1:
            return top[0], False
        if not top:
            return None, False
        if self._synthetic_id is None:
            self._synthetic_id = self._tree.allocate_node_id()
        return self._synthetic_id, False

    def _synthetic(self, top: tuple[int, ...], root: int | None) -> SemanticsNode | None:
        """The synthetic group root over several top-level nodes, while there are several."""
        if len(top) <= 1:
            self._synthetic_id = None
            return None
        if self._synthetic_id is None:
            self._synthetic_id = self._tree.allocate_node_id()
        root_element = self._tree.root
        assert root_element is not None
        return SemanticsNode(
            node_id=self._synthetic_id,
            semantic_id=None,
            role=Role.GROUP,
            children=top,
            frame=root_element.frame,
        )

    def _within(self, element: Element, root_id: int | None) -> bool:
        return element.node_id == root_id or any(a.node_id == root_id for a in element.ancestors())

    def _tree_changes(
        self,
        previous: SemanticsSnapshot,
        synthetic: SemanticsNode | None,
        changes: dict[int, SemanticsNode | None],
        removal_order: list[int],
    ) -> tuple[list[SemanticsNode], list[int]]:
        """Public changes when the whole tree is public: exactly the nodes the passes touched."""
        if synthetic is not None:
            changes[synthetic.node_id] = synthetic
        upserted = [
            node
            for node_id, node in changes.items()
            if node is not None and previous.nodes.get(node_id) != node
        ]
        removed = [
            node_id
            for node_id in dict.fromkeys(removal_order)
            if node_id in changes and changes[node_id] is None and node_id in previous.nodes
        ]
        old_root = previous.root
        if (
            old_root is not None
            and old_root not in self._tree.by_node
            and (synthetic is None or synthetic.node_id != old_root)
            and old_root not in removed
        ):
            removed.append(old_root)
        self._sort_in_tree_order(upserted)
        return upserted, removed

    def _scoped_changes(
        self,
        previous: SemanticsSnapshot,
        root: int | None,
        synthetic: SemanticsNode | None,
        removal_order: list[int],
    ) -> tuple[list[SemanticsNode], list[int]]:
        """Public changes when a modal scopes the tree (now or before): compare the subtrees."""
        public = self._collect(root, synthetic)
        if self._scoped_by_modal(root):
            self._relations_within(public)
        upserted = [node for node in public.values() if previous.nodes.get(node.node_id) != node]
        self._sort_in_tree_order(upserted)
        removed = [
            n for n in dict.fromkeys(removal_order) if n in previous.nodes and n not in public
        ]
        seen = set(removed)
        removed.extend(
            node.node_id
            for node in previous.ordered()
            if node.node_id not in public and node.node_id not in seen
        )
        return upserted, removed

    def _modal_changes(
        self,
        previous: SemanticsSnapshot,
        root: int,
        changes: dict[int, SemanticsNode | None],
        removal_order: list[int],
    ) -> tuple[list[SemanticsNode], list[int]]:
        """Public changes while the modal that scoped the last commit still does: what
        `_scoped_changes` finds comparing the modal's whole subtree, from the nodes the passes
        touched inside it and the relations inside it those can resolve otherwise.

        A node enters or leaves the modal's subtree only as the passes touch it (an element
        keeps its ancestors), and a relation resolves otherwise among its nodes only when a
        node with an id it names came, went or changed its id there, or it changed itself.
        """
        tree = self._tree
        by_node, sources = tree.by_node, tree.relation_sources
        top = by_node[root]

        def inside(element: Element) -> bool:
            return element is top or any(a is top for a in element.ancestors())

        public: dict[int, SemanticsNode] = {}
        stale: dict[Element, None] = dict.fromkeys(tree.relations_changed)
        moved: set[SemanticId] = set()
        for node_id, node in changes.items():
            old = previous.nodes.get(node_id)
            if node is None:
                if old is not None and old.semantic_id is not None:
                    moved.add(old.semantic_id)
                continue
            element = by_node[node_id]
            if not inside(element):
                continue
            public[node_id] = node
            if element in sources:
                stale[element] = None
            if old is None or old.semantic_id != node.semantic_id:
                if node.semantic_id is not None:
                    moved.add(node.semantic_id)
                if old is not None and old.semantic_id is not None:
                    moved.add(old.semantic_id)
        for sid in moved:
            stale.update(tree.relation_referrers.get(sid, {}))
        within: dict[SemanticId, list[int]] = {}
        for element in stale:
            node = element.node
            if node is None or not inside(element):
                continue
            relations = sources.get(element, {})
            for sid in itertools.chain.from_iterable(relations.values()):
                if sid not in within:
                    within[sid] = [
                        n
                        for n in tree.sid_index.get(sid, ())
                        if (e := by_node.get(n)) is not None and inside(e)
                    ]
            resolved = resolve_relations(relations, within)
            if resolved != node.relations:
                node = attrs.evolve(node, relations=resolved)
            public[node.node_id] = node
        upserted = [node for node in public.values() if previous.nodes.get(node.node_id) != node]
        self._sort_in_tree_order(upserted)
        removed = [
            n
            for n in dict.fromkeys(removal_order)
            if n in previous.nodes and changes.get(n) is None
        ]
        return upserted, removed

    def _scoped_by_modal(self, root: int | None) -> bool:
        element = None if root is None else self._tree.by_node.get(root)
        return element is not None and element in self._tree.modal_elements

    def _relations_within(self, public: dict[int, SemanticsNode]) -> None:
        """Resolve again, among the nodes of `public` alone, the relations of its nodes that
        declare any: the tree resolves them among every element, those behind an open modal
        too, and a relation named a node the snapshot does not hold, or none where the one
        target in it has a twin behind the modal."""
        by_node = self._tree.by_node
        sources = [
            (node_id, relations)
            for node_id in public
            if (element := by_node.get(node_id)) is not None
            and (relations := self._tree.relation_sources.get(element))
        ]
        if not sources:
            return
        within: dict[SemanticId, list[int]] = {}
        for node in public.values():
            if node.semantic_id is not None:
                within.setdefault(node.semantic_id, []).append(node.node_id)
        for node_id, relations in sources:
            resolved = resolve_relations(relations, within)
            node = public[node_id]
            if resolved != node.relations:
                public[node_id] = attrs.evolve(node, relations=resolved)

    def _collect(
        self, root: int | None, synthetic: SemanticsNode | None
    ) -> dict[int, SemanticsNode]:
        out: dict[int, SemanticsNode] = {}
        stack = [] if root is None else [root]
        by_node = self._tree.by_node
        while stack:
            node_id = stack.pop()
            node: SemanticsNode | None
            if synthetic is not None and node_id == synthetic.node_id:
                node = synthetic
            else:
                element = by_node.get(node_id)
                node = None if element is None else element.node
            if node is not None:
                out[node_id] = node
                stack.extend(reversed(node.children))
        return out

    def _sort_in_tree_order(self, nodes: list[SemanticsNode]) -> None:
        """Sort nodes into element-tree order; a node without an element (the synthetic
        root) comes first."""
        if len(nodes) < 2:
            return  # (a one-leaf commit: its key would index every ancestor's children)
        by_node = self._tree.by_node
        positions = self._positions

        def key(node: SemanticsNode) -> tuple[int, ...]:
            element = by_node.get(node.node_id)
            return () if element is None else (0, *_element_path(element, positions))

        nodes.sort(key=key)

    def _issues(
        self,
        snapshot: SemanticsSnapshot,
        previous: SemanticsSnapshot,
        upserted: Iterable[SemanticsNode] = (),
        removed: Iterable[int] = (),
    ) -> tuple[Issue, ...]:
        for node in upserted:
            if node.semantic_id is not None:
                self._dup_candidates.add(node.semantic_id)
        for node_id in removed:
            old = previous.nodes.get(node_id)
            if old is not None and old.semantic_id is not None:
                self._dup_candidates.add(old.semantic_id)
        duplicates = duplicate_issues(snapshot.by_semantic_id, self._dup_candidates)
        self._dup_candidates = {d.semantic_id for d in duplicates}
        self._rescan_relations(snapshot, previous, upserted, removed)
        # Duplicates sort before every relation issue, so the two sort apart.
        return sort_issues(duplicates) + self._relation_issues

    def _rescan_relations(
        self,
        snapshot: SemanticsSnapshot,
        previous: SemanticsSnapshot,
        upserted: Iterable[SemanticsNode],
        removed: Iterable[int],
    ) -> None:
        """Scan again the relation sources a commit can have changed the issues of: those
        that came, went or changed, those whose own node entered or left the snapshot, and
        those naming an id a node entered or left the snapshot with. The rest keep their
        last issues, so a commit pays for the relations it touched, not for all of them."""
        tree = self._tree
        affected = tree.take_relations_changed()
        sources, referrers, by_node = tree.relation_sources, tree.relation_referrers, tree.by_node

        def moved(sid: SemanticId | None) -> None:
            if sid is not None:
                affected.update(referrers.get(sid, {}))

        def entered_or_left(node_id: int) -> None:
            element = by_node.get(node_id)
            if element is not None and element in sources:
                affected[element] = None

        for node in upserted:
            old = previous.nodes.get(node.node_id)
            if old is None:
                moved(node.semantic_id)
                entered_or_left(node.node_id)
            elif old.semantic_id != node.semantic_id:
                moved(old.semantic_id)
                moved(node.semantic_id)
        for node_id in removed:
            old = previous.nodes.get(node_id)
            if old is not None:
                moved(old.semantic_id)
            entered_or_left(node_id)
        known, changed = self._source_issues, False
        for element in affected:
            issues = self._issues_of(element, snapshot)
            if issues:
                if known.get(element) != issues:
                    known[element], changed = issues, True
            elif known.pop(element, None) is not None:
                changed = True
        if changed:
            self._relation_issues = sort_issues(
                issue for issues in known.values() for issue in issues
            )

    def relation_issues(self, snapshot: SemanticsSnapshot) -> list[Issue]:
        """The missing and ambiguous relation targets of the public sources in `snapshot`,
        scanned afresh (commits scan again only the sources they can have changed)."""
        return [
            issue
            for element in self._tree.relation_sources
            for issue in self._issues_of(element, snapshot)
        ]

    def _issues_of(self, element: Element, snapshot: SemanticsSnapshot) -> tuple[Issue, ...]:
        """The relation issues of `element` in `snapshot`: none unless it is a source there."""
        relations = self._tree.relation_sources.get(element)
        source = element.node
        if relations is None or source is None or source.node_id not in snapshot.nodes:
            return ()
        issues: list[Issue] = []
        for kind, sids in relations.items():
            for sid in sids:
                found = snapshot.by_semantic_id.get(sid, ())
                if not found:
                    issues.append(MissingRelationTarget(source.node_id, kind, sid))
                elif len(found) > 1:
                    issues.append(AmbiguousRelationTarget(source.node_id, kind, sid, found))
        return tuple(issues)


@contextlib.contextmanager
def _cycle_collection_paused() -> Iterator[None]:
    """Python's cycle collector held off for the block, and let be again after it (unless
    it was off already).

    A commit builds the app's whole view, some objects a row, which live until reconcile
    has compared them with the tree: long enough to be promoted to the oldest generation,
    every commit, and that makes the collector walk every object of the process every few
    commits. In a 3,000-item todo list that was more than half of each commit's time. The
    view's objects hold no cycles, so reference counting frees them as the commit ends.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _element_path(element: Element, positions: KeptPositions) -> tuple[int, ...]:
    """The element's child indices from the root."""
    path: list[int] = []
    current = element
    while (parent := current.parent) is not None:
        path.append(positions.of(parent.children, current))
        current = parent
    path.reverse()
    return tuple(path)
