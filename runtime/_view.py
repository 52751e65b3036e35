"""Views: the immutable description of a user interface that `view(model)` returns."""

from __future__ import annotations

import functools
import math
import reprlib
import types
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any, Final, Generic, Literal, TypeVar

import attrs

from ._actions import SemanticsAction
from ._declaration import Declaration
from ._enums import ActionKind, Checked, Composition, Live, Relation, Role, member_hint
from ._errors import (
    ApplicationError,
    DuplicateKeyError,
    NonFiniteNumberError,
    NotAProposalError,
    NotAViewError,
    app_failed,
)
from ._ids import LOGGABLE_INTS, SemanticId
from ._node import Collection, Numeric, SemanticsNode
from ._text import a_or_an

Msg = TypeVar("Msg")
Out = TypeVar("Out")


def _reason(_instance: object, _attribute: object, reason: object) -> None:
    if not isinstance(reason, str) or not reason.strip():  # the agent is told it, as a message
        kind = type(reason).__name__
        raise TypeError(f"Reject.reason: expected a non-blank str, got {kind} {reason!r:.80}")


def _several(_instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """Refuse one value where a sequence of them is meant: a str was taken for its
    characters (``Proposal("inc")`` proposed three messages), a bare message not at all."""
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        what = attribute.name.rstrip("s")
        one = f"{value.__qualname__}()" if isinstance(value, type) else f"{value!r:.40}"
        raise TypeError(
            f"Proposal.{attribute.name}: expected a tuple of {what}s, got"
            f" {type(value).__name__} {value!r:.80} (one {what}: ({one},))"
        )


@attrs.frozen
class Reject:
    """A handler's refusal: the action is answered `handler_rejected` and nothing changes."""

    reason: str = attrs.field(default="the handler rejected the action", validator=_reason)


@attrs.frozen
class SelectText:
    """Deferred commit: set the runtime-owned text selection of the proposing node."""

    start: int
    end: int


@attrs.frozen
class ScrollBy:
    """Deferred commit: move the runtime-owned scroll offset of the proposing node."""

    delta: float


DeferredCommit = SelectText | ScrollBy


@attrs.frozen
class Proposal(Generic[Msg]):
    """What an accepted action does: messages to enqueue and UI-state commits to apply.

    Handlers only propose. Nothing is mutated while a proposal is built; the runtime applies it
    after every check has passed.
    """

    messages: tuple[Msg, ...] = attrs.field(default=(), validator=_several)
    commits: tuple[DeferredCommit, ...] = attrs.field(default=(), validator=_several)


Outcome = Proposal[Msg] | Reject | None
Handler = Callable[[SemanticsAction], Outcome[Msg]]


@attrs.frozen
class State:
    """The application-owned states of a node (focus is owned by the runtime)."""

    disabled: bool = False
    selected: bool = False
    pressed: bool = False
    checked: Checked | None = None
    expanded: bool | None = None
    invalid: bool = False
    required: bool = False
    read_only: bool = False
    busy: bool = False
    multiline: bool = False
    password: bool = False
    modal: bool = False


@attrs.frozen
class LayoutSpec:
    """A simple stack layout: children in a column or a row; leaves have a fixed height."""

    direction: Literal["column", "row"] = "column"
    height: float | None = None
    """Fixed height; for a scroll view, the viewport's height."""
    padding: float = 0.0


_DEFAULT_LAYOUT: Final = LayoutSpec()


@attrs.frozen
class PaintSpec:
    background: str | None = None
    foreground: str = "#202020"
    hover_background: str | None = None
    border: str | None = None


@attrs.frozen(eq=False)
class View(Generic[Msg]):
    """One node of a view tree. Build them with `node` and the widget functions.

    ``key`` identifies the node among its siblings across builds (default: its position and
    role); ``children`` may be a zero-argument callable, called only when reconcile cannot
    skip the node (see `Declaration`).
    """

    role: Role = Role.NONE
    key: Hashable | None = None
    semantic_id: SemanticId | None = None
    label: str | None = None
    value: str | None = None
    description: str | None = None
    url: str | None = None
    level: int | None = None
    state: State = State()
    numeric: Numeric | None = None
    collection: Collection | None = None
    relations: Mapping[Relation, tuple[SemanticId, ...]] = attrs.field(factory=dict)
    live: Live = Live.OFF
    atomic: bool = False
    handlers: Mapping[ActionKind, Handler[Msg]] = attrs.field(factory=dict)
    focusable: bool | None = None
    focus_order: int | None = None
    editable: bool = False
    composition: Composition = Composition.TRANSPARENT
    declaration: Declaration = attrs.field(factory=Declaration)
    layout: LayoutSpec = _DEFAULT_LAYOUT
    paint: PaintSpec = PaintSpec()
    children: tuple[View[Msg], ...] | Callable[[], Sequence[View[Msg]]] = ()
    mapper: Callable[[Any], Msg] | None = None
    _fields_checked: bool = attrs.field(default=False, init=False, repr=False)
    """Whether the fields were checked as the view was built (by `node` or `lazy`: an
    `attrs.evolve` of it is unchecked again), so that the tree checks only the views made
    otherwise, as it mounts them."""

    def map(self, f: Callable[[Msg], Out]) -> View[Out]:
        """The same view, with every message its handlers propose passed through `f`."""
        if not callable(f):  # (it failed only as an action's message was mapped)
            raise _refuse("map", "a function of a message", f)
        inner = self.mapper
        mapper: Callable[[Any], Out] = f if inner is None else (lambda m: f(inner(m)))
        mapped = attrs.evolve(self, mapper=mapper)  # type: ignore[arg-type]
        object.__setattr__(mapped, "_fields_checked", self._fields_checked)
        return mapped  # type: ignore[return-value]

    def child_views(self) -> tuple[View[Msg], ...]:
        """The children; a lazy build is the application's code, so what it raises, or a
        child it builds that is not a `View`, is an `ApplicationError`."""
        children = self.children
        if not callable(children):
            return children
        try:
            returned = children()
            refused: Exception | None = _not_views(returned)
            built = () if refused else tuple(returned)  # (a generator runs the build's code)
        except BaseException as error:
            if not app_failed(error):
                raise
            raise ApplicationError("a lazy view's build raised") from error
        if refused is None:
            try:
                _check_children(built)
            except (TypeError, DuplicateKeyError) as error:  # (a NotAViewError, or a key)
                refused = error
        if refused is not None:
            raise ApplicationError(
                "a lazy view's build returned children no view can have"
            ) from refused
        return built


def _not_views(returned: object) -> NotAViewError | None:
    """Why what a lazy build returned is no sequence of children, if it is not: one View
    or None failed as "'View' object is not iterable", as though the build had raised it."""
    if isinstance(returned, View):
        return NotAViewError("a lazy build returned one View, not a sequence of them: [view]")
    if isinstance(returned, str | bytes) or not isinstance(returned, Iterable):
        kind = a_or_an(type(returned).__name__)
        return NotAViewError(
            f"a lazy build returned {kind} ({reprlib.repr(returned)}), not a sequence of"
            " semledger Views"
        )
    return None


def _check_children(children: Sequence[object]) -> None:
    keys: dict[Hashable, int] = {}
    for position, child in enumerate(children):
        if not isinstance(child, View):
            kind = a_or_an(type(child).__name__)
            if isinstance(child, list | tuple):
                raise NotAViewError(
                    f"child {position} is {kind} of {len(child)} items, not a semledger View"
                    " (pass children one by one: column(*views))"
                )
            raise NotAViewError(
                f"child {position} is {kind} ({reprlib.repr(child)}), not a semledger View"
            )
        key = child.key
        if key is not None:
            try:
                first = keys.setdefault(key, position)
            except TypeError:
                raise _unhashable(f"child {position}: key", key) from None
            if first != position:
                raise DuplicateKeyError(
                    f"children {first} and {position} share the key {key!r}: keys tell"
                    " siblings apart, so each must be unique among them"
                )


def _check_key(name: str, key: object) -> None:
    """Refuse a key reconcile cannot look up (a list, a dict, a set), which failed as a
    bare "unhashable type" where its parent was built, naming neither."""
    try:
        hash(key)
    except TypeError:
        raise _unhashable(name, key) from None


def _unhashable(name: str, key: object) -> TypeError:
    return TypeError(
        f"{name}: expected a hashable value (a str, an int, a tuple or frozen attrs value"
        f" of them), got {type(key).__name__} {reprlib.repr(key)}"
    )


def _sid(semantic_id: str | SemanticId | None) -> SemanticId | None:
    return None if semantic_id is None else SemanticId.new(semantic_id)


_TEXT_FIELDS = ("label", "value", "description", "url")
_MAX_LENGTH: Final = 2.0**53
"""The longest layout length (a height, a padding): far beyond any screen, and short
enough that no sum of them the layout makes reaches an infinity (two of 1e308 did)."""


def _refuse(
    name: str, expected: str, value: object, field: str = "", hint: str = ""
) -> TypeError:
    where = f"{name}.{field}" if field else name
    return TypeError(
        f"{where}: expected {expected}, got {type(value).__name__} {reprlib.repr(value)}{hint}"
    )


# Each check takes the field of a compound value (`state`'s ``busy``) apart from its name,
# so that a view that is right builds no text: they run for every node of every build.


def _check_int(name: str, value: object, field: str = "", *, optional: bool = True) -> None:
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise _refuse(name, "an int" + (" or None" if optional else ""), value, field)
    if value not in LOGGABLE_INTS:
        where = f"{name}.{field}" if field else name
        raise ValueError(f"{where}: {value} does not fit in 64 bits, which the log carries")


def _check_number(name: str, value: object, field: str = "", *, optional: bool = True) -> None:
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _refuse(name, "a number" + (" or None" if optional else ""), value, field)
    if not (math.isfinite(value) if isinstance(value, float) else value in LOGGABLE_INTS):
        where = f"{name}.{field}" if field else name
        error = NonFiniteNumberError if isinstance(value, float) else ValueError
        raise error(f"{where}: expected a finite number that fits in 64 bits, got {value!r}")


def _check_bool(name: str, value: object, field: str = "", *, optional: bool = False) -> None:
    if not isinstance(value, bool) and not (optional and value is None):
        raise _refuse(name, "True or False" + (" or None" if optional else ""), value, field)


def _check_instance(kind: type, optional: bool = False) -> Callable[..., None]:
    expected = f"a {kind.__name__}" + (" or None" if optional else "")

    def check(name: str, value: object, field: str = "") -> None:
        if not isinstance(value, kind) and not (optional and value is None):
            raise _refuse(name, expected, value, field, member_hint(kind, value))

    return check


_check_checked = _check_instance(Checked, optional=True)
_check_text = _check_instance(str, optional=True)
_STATE_FLAGS: Final = tuple(
    field.name for field in attrs.fields(State) if field.name not in ("checked", "expanded")
)
_COLLECTION_FIELDS: Final = tuple(field.name for field in attrs.fields(Collection))


def _check_state(name: str, state: object) -> None:
    if not isinstance(state, State):
        raise _refuse(name, "a State", state)
    for flag in _STATE_FLAGS:
        _check_bool(name, getattr(state, flag), flag)
    _check_bool(name, state.expanded, "expanded", optional=True)
    _check_checked(name, state.checked, "checked")


def _check_numeric(name: str, numeric: object) -> None:
    if numeric is None:
        return
    if not isinstance(numeric, Numeric):
        raise _refuse(name, "a Numeric or None", numeric)
    for field in ("current", "min", "max", "step"):
        _check_number(name, getattr(numeric, field), field)
    _check_text(name, numeric.value_text, "value_text")
    if numeric.min is not None and numeric.max is not None and numeric.min > numeric.max:
        raise ValueError(
            f"{name}: expected min at most max, got min {numeric.min!r} and max {numeric.max!r}"
        )


def _check_collection(name: str, collection: object) -> None:
    if collection is None:
        return
    if not isinstance(collection, Collection):
        raise _refuse(name, "a Collection or None", collection)
    for field in _COLLECTION_FIELDS:
        _check_int(name, getattr(collection, field), field)


def _check_mapper(name: str, mapper: object) -> None:
    if mapper is not None and not callable(mapper):
        raise _refuse(name, "a function of a message or None", mapper)


def _check_layout(name: str, layout: object) -> None:
    if not isinstance(layout, LayoutSpec):
        raise _refuse(name, "a LayoutSpec", layout)
    if layout.direction not in ("column", "row"):
        raise ValueError(f"{name}.direction: expected 'column' or 'row', got {layout.direction!r}")
    for field in ("height", "padding"):
        value = getattr(layout, field)
        _check_number(name, value, field)
        if value is not None and value < 0:
            raise ValueError(f"{name}.{field}: expected a number of at least 0, got {value!r}")
        if value is not None and value > _MAX_LENGTH:
            raise NonFiniteNumberError(
                f"{name}.{field}: expected a number of at most 2**53, got {value!r} (the layout"
                " adds lengths up, and ones that long reach an infinity)"
            )


_FIELD_CHECKS: dict[str, Callable[[str, object], None]] = {
    "key": _check_key,
    **dict.fromkeys(_TEXT_FIELDS, _check_text),
    "level": _check_int,
    "focus_order": _check_int,
    "state": _check_state,
    "numeric": _check_numeric,
    "collection": _check_collection,
    "layout": _check_layout,
    "declaration": _check_instance(Declaration),  # (a str failed as the tree rebuilt it)
    "paint": _check_instance(PaintSpec),
    "mapper": _check_mapper,
    "live": _check_instance(Live),
    "composition": _check_instance(Composition),
    "atomic": _check_bool,
    "editable": _check_bool,
    "focusable": functools.partial(_check_bool, optional=True),
}
"""What `node` checks of the fields it is given: what the log and the wire carry."""


def _described(view: View[Any]) -> str:
    """``the scroll_view 'c.list'``, for an error to say where the app gave what."""
    role = view.role.value if isinstance(view.role, Role) and view.role is not Role.NONE else "view"
    sid = view.semantic_id
    return f"the {role}" + (f" {str(sid)!r}" if isinstance(sid, SemanticId) else "")


def check_view_fields(view: View[Any]) -> None:
    """Refuse, as `node` does, what `view` holds that the snapshot cannot carry: a
    ``View(...)``, or an ``attrs.evolve`` of one, is not built by `node` (a string role
    failed inside the tree's passes, a NaN made every read fail). Raises
    `ApplicationError`, its cause naming the node: the tree calls it, outside the app's
    code."""
    if view._fields_checked:
        return
    try:
        _check_fields(view)
    except (TypeError, ValueError) as error:
        where = _described(view)
        try:
            located = type(error)(f"{where}: {error}")
        except TypeError:  # an error class of other arguments: as it was
            located = error
        raise ApplicationError(f"view gave {where} what the snapshot cannot carry") from located
    object.__setattr__(view, "_fields_checked", True)  # (a view the app keeps: checked once)


def _check_fields(view: View[Any]) -> None:
    if not isinstance(view.role, Role):
        raise _refuse("role", "a Role", view.role, hint=member_hint(Role, view.role))
    for name, check in _FIELD_CHECKS.items():
        check(name, getattr(view, name))
    if view.semantic_id is not None and not isinstance(view.semantic_id, SemanticId):
        SemanticId.new(view.semantic_id)
    _check_handlers(view.handlers)
    _check_relations(view.relations)
    if not callable(view.children):
        _check_children(view.children)


def check_node_text(node: SemanticsNode, view: View[Any] | None) -> None:
    """Refuse text of `node` (built from `view`) that UTF-8 cannot encode: a lone
    surrogate, as a file name from ``os.listdir`` decodes to, which the log and the wire
    cannot carry. Called only once packing the snapshot failed, so a commit whose text is
    valid pays nothing for it. Raises `ApplicationError`, naming the node and the field."""
    numeric = node.numeric
    texts = (
        ("label", node.label),
        ("value", node.value),
        ("description", node.description),
        ("url", node.url),
        ("numeric.value_text", None if numeric is None else numeric.value_text),
    )
    for field, text in texts:
        try:
            (text or "").encode("utf-8")
        except UnicodeEncodeError as error:
            where = f"node {node.node_id}" if view is None else _described(view)
            lone = ord(error.object[error.start])
            raise ApplicationError(f"view gave {where} what the snapshot cannot carry") from (
                ValueError(
                    f"{where}: {field}: expected valid UTF-8 text (it contains a lone"
                    f" surrogate U+{lone:04X} at index {error.start})"
                )
            )


def check_commit(kind: ActionKind, view: View[Any], commit: object) -> None:
    """Refuse a commit the handler of `kind` on `view` proposed that holds what the snapshot
    cannot carry: ``ScrollBy(nan)`` put NaN in the frames of the children, which equals
    nothing, so every repeat was a change. Raises `ApplicationError`: the runtime applies
    commits outside the app's code."""
    where = f"the {kind.value} handler of {_described(view)}: {type(commit).__name__}"
    try:
        if isinstance(commit, ScrollBy):
            _check_number(where, commit.delta, "delta", optional=False)
        elif isinstance(commit, SelectText):
            _check_int(where, commit.start, "start", optional=False)
            _check_int(where, commit.end, "end", optional=False)
            if commit.start < 0:
                raise ValueError(f"{where}.start: expected at least 0, got {commit.start}")
            if commit.end < commit.start:
                raise ValueError(
                    f"{where}.end: expected at least start ({commit.start}), got {commit.end}"
                )
        else:
            # Ignored, the action would be answered with a receipt for what it never did.
            raise NotAProposalError(
                f"the {kind.value} handler of {_described(view)} proposed {commit!r:.80},"
                " which is not a commit: commits are ScrollBy(delta) or SelectText(start, end)"
                " values"
            )
    except (TypeError, ValueError) as error:
        raise ApplicationError(f"the {kind.value} handler proposed {commit!r:.80}") from error


def node(
    role: Role = Role.NONE,
    *children: View[Msg],
    semantic_id: str | None = None,
    handlers: Mapping[ActionKind, Handler[Msg]] | None = None,
    relations: Mapping[Relation, Sequence[str]] | None = None,
    **fields: Any,
) -> View[Msg]:
    """A view node of any role. Its fields are checked here, where the app's author sees the
    mistake: an invalid ``semantic_id`` literal, text that is not a str (an int value would
    be served, then found unreadable in the log), a string where a `Role` or a `State` flag
    belongs, a number the log or the wire cannot carry (too large, NaN, infinite)."""
    if not isinstance(role, Role):
        raise _refuse("role", "a Role", role, hint=member_hint(Role, role))
    for name, given in fields.items():
        check = _FIELD_CHECKS.get(name)
        if check is not None:
            check(name, given)
    _check_children(children)
    if handlers:  # (none given: nothing to check, for the many nodes that have none)
        _check_handlers(handlers)
    rel = {}
    if relations:
        _check_relations(relations)
        rel = {kind: tuple(SemanticId.new(s) for s in ids) for kind, ids in relations.items()}
    try:
        built: View[Msg] = View(
            role=role,
            semantic_id=_sid(semantic_id),
            handlers=dict(handlers or {}),
            relations=rel,
            children=children,
            **fields,
        )
    except TypeError:
        unknown = [name for name in fields if name not in attrs.fields_dict(View)]
        if not unknown:
            raise
        raise _unknown_field(unknown[0]) from None
    object.__setattr__(built, "_fields_checked", True)
    return built


_HANDLERS_ARE: Final = "a mapping of ActionKind to a function of the action"


_ACTION_KIND_VALUES: Final = frozenset(kind.value for kind in ActionKind)


def _check_handlers(handlers: object) -> None:
    if type(handlers) is not dict and not isinstance(handlers, Mapping):  # (a dict: fast)
        raise _refuse("handlers", _HANDLERS_ARE, handlers)
    for offered, handler in handlers.items():
        if not isinstance(offered, ActionKind) and offered not in _ACTION_KIND_VALUES:
            # (one no kind has was never offered, silently; a kind's str is its member's key)
            raise _refuse("handlers", "ActionKind keys", offered)
        if not callable(handler):
            raise TypeError(
                f"the {ActionKind(offered).value} handler: expected a function of the action, got"
                f" {reprlib.repr(handler)} (send(message) makes a handler of a message)"
            )


def _given_handlers(fields: dict[str, Any]) -> dict[ActionKind, Handler[Any]]:
    """The ``handlers`` given a widget builder, copied for it to add its own to."""
    given = fields.pop("handlers", None)
    if given is None:
        return {}
    if type(given) is not dict and not isinstance(given, Mapping):
        raise _refuse("handlers", _HANDLERS_ARE, given)
    return dict(given)


def _check_relations(relations: object) -> None:
    if type(relations) is not dict and not isinstance(relations, Mapping):
        raise _refuse("relations", "a mapping of Relation to semantic ids", relations)
    for kind, ids in relations.items():
        if not isinstance(kind, Relation):  # a str was resolved, then crashed an issue's sort
            raise _refuse("relations", "Relation keys", kind, hint=member_hint(Relation, kind))
        if isinstance(ids, str):  # a lone id would be taken apart letter by letter
            raise TypeError(f"relations[{kind}]: expected a sequence of semantic ids, not a str")
        if not isinstance(ids, Iterable):
            raise _refuse(f"relations[{kind}]", "a sequence of semantic ids", ids)


def _unknown_field(name: str) -> TypeError:
    """The error of a keyword no view node has (attrs said only "unexpected keyword
    argument"), saying where a state flag given as one belongs."""
    if name in attrs.fields_dict(State):
        where = f"a state flag: give state=State({name}=True)"
    else:
        internal = ("role", "children", "declaration", "mapper", "_fields_checked")  # not an app's
        where = "fields: " + ", ".join(f for f in attrs.fields_dict(View) if f not in internal)
    return TypeError(f"{name}: a view node has no such field ({where})")


def send(msg: Msg) -> Handler[Msg]:
    """A handler that proposes one fixed message. Raises `TypeError` for a message class
    or a handler given as `msg` (see `_send`)."""
    return _send("send", msg)


_HANDLERS: Final = (
    types.FunctionType,
    types.MethodType,
    types.BuiltinFunctionType,
    functools.partial,
)


def _send(builder: str, msg: Msg) -> Handler[Msg]:
    """`send` for `builder`. Raises `TypeError` for a class given where its instance was
    meant (``button("Save", Save)``), which update's ``case Save():`` would not match, and
    for a handler given where its message was meant (``button("Save", send(Save()))``),
    which update would get as the message: the action would do nothing without a word."""
    if isinstance(msg, type):
        name = msg.__qualname__
        raise TypeError(f"{name} is a message class, not a message: give one, {name}()")
    refuse_handler(builder, msg, f"{builder} makes the handler that proposes it")
    proposal: Proposal[Msg] = Proposal((msg,))
    return lambda _action: proposal


def refuse_handler(where: str, msg: object, why: str) -> None:
    """Raise `TypeError` if `msg` is a handler (``send(Tick())``, a function) given to
    `where` in place of the message it would propose."""
    if isinstance(msg, _HANDLERS):
        made_by_send = getattr(msg, "__qualname__", "") == "_send.<locals>.<lambda>"
        name = "send(...)" if made_by_send else getattr(msg, "__name__", "partial")
        raise TypeError(
            f"{where}: expected a message, got a handler ({name}): pass the message itself"
            f" ({why})"
        )


def lazy(
    cache_key: Hashable, build: Callable[[], Sequence[View[Msg]]], *, key: Hashable = None
) -> View[Msg]:
    """A transparent group whose children are built only when `cache_key` changes."""
    if not callable(build):  # (a list of views failed only as the tree mounted it)
        raise _refuse("build", "a function that returns the children", build, hint=_LAZY_HINT)
    if key is not None:
        _check_key("key", key)
    built: View[Msg] = View(key=key, declaration=Declaration.keyed(cache_key), children=build)
    object.__setattr__(built, "_fields_checked", True)  # its other fields are View's defaults
    return built


_LAZY_HINT: Final = " (give one: lambda: [views], called only when cache_key changes)"


def text(label: str | None = None, value: str | None = None, **fields: Any) -> View[Any]:
    """Read-only text: a node of role ``text`` showing `value` under `label`."""
    return node(Role.TEXT, label=label, value=value, **fields)


def _state(builder: str, fields: dict[str, Any], **flags: bool) -> State:
    """A builder's state: the ``state`` given (a pressed button, say), with the flags the
    builder's own arguments set on it (one left False changes nothing). A flag that is not
    a bool is refused: taken for its truth, ``disabled="no"`` disabled and ``0`` did not."""
    given = fields.pop("state", None)
    if given is None:
        given = State()
    elif not isinstance(given, State):
        raise TypeError(f"state: expected a State, got {reprlib.repr(given)}")
    setting: dict[str, Any] = {}
    for name, value in flags.items():
        if value is True:
            setting[name] = True
        elif value is not False:
            raise _refuse(builder, "True or False", value, name)
    return attrs.evolve(given, **setting) if setting else given


def button(
    label: str, on_activate: Msg | None = None, *, disabled: bool = False, **fields: Any
) -> View[Msg]:
    """A button: activating it delivers the message `on_activate` (None: it offers only the
    ``handlers`` given). A `disabled` one refuses every action."""
    handlers: dict[ActionKind, Handler[Msg]] = _given_handlers(fields)
    if on_activate is not None:
        handlers[ActionKind.ACTIVATE] = _send("button", on_activate)
    state = _state("button", fields, disabled=disabled)
    return node(Role.BUTTON, label=label, handlers=handlers, state=state, **fields)


def text_field(
    label: str,
    value: str,
    *,
    on_set_text: Callable[[str], Msg] | None = None,
    on_submit: Handler[Msg] | None = None,
    password: bool = False,
    invalid: bool = False,
    disabled: bool = False,
    required: bool = False,
    read_only: bool = False,
    **fields: Any,
) -> View[Msg]:
    """A text field showing `value`: set_text delivers ``on_set_text(text)`` (without it the
    field is not editable), and submit is handled by `on_submit`."""
    if value is None:  # its set_selection handler measures the text: an agent's crashed it
        raise TypeError(
            "text_field.value: expected a str (its text: '' when it is empty), got None"
        )
    handlers: dict[ActionKind, Handler[Msg]] = _given_handlers(fields)
    state = _state(
        "text_field",
        fields,
        password=password,
        invalid=invalid,
        disabled=disabled,
        required=required,
        read_only=read_only,
    )
    if on_set_text is not None:
        if not callable(on_set_text):
            raise TypeError(
                "on_set_text: expected a function of the typed text that returns a message,"
                f" got {reprlib.repr(on_set_text)}"
            )
        set_text = on_set_text

        def handle_set_text(action: SemanticsAction) -> Outcome[Msg]:
            assert action.kind is ActionKind.SET_TEXT
            return Proposal((set_text(action.value),))  # type: ignore[union-attr]

        # A read-only field (by `read_only` or by its `state`) is not offered set_text (the
        # tree's rule for any node), but its text can still be selected.
        handlers[ActionKind.SET_TEXT] = handle_set_text
        handlers[ActionKind.SET_SELECTION] = select_within(value)
    if on_submit is not None:
        handlers[ActionKind.SUBMIT] = on_submit
    return node(
        Role.TEXT_FIELD,
        label=label,
        value=value,
        editable=on_set_text is not None,
        handlers=handlers,
        state=state,
        **fields,
    )


def select_within(value: str) -> Handler[Any]:
    """The default set_selection handler: a runtime-owned selection inside the current text."""

    def handle(action: SemanticsAction) -> Outcome[Any]:
        start, end = getattr(action, "start", -1), getattr(action, "end", -1)
        if not 0 <= start <= end <= len(value):
            return Reject(f"selection {start}..{end} is outside the text (length {len(value)})")
        return Proposal(commits=(SelectText(start, end),))

    return handle


def checkbox(
    label: str,
    checked: bool | Checked,
    on_toggle: Msg | None = None,
    *,
    disabled: bool = False,
    **fields: Any,
) -> View[Msg]:
    """A checkbox, checked as `checked` says (True, False, or a `Checked`: ``MIXED`` for a
    "select all" box over a partial selection): activating it delivers the message
    `on_toggle`, and the model's update decides what is checked next."""
    mark = _checked(checked)
    handlers: dict[ActionKind, Handler[Msg]] = _given_handlers(fields)
    if on_toggle is not None:
        handlers[ActionKind.ACTIVATE] = _send("checkbox", on_toggle)
    state = _state("checkbox", fields, disabled=disabled)
    if state.checked is not None and state.checked is not mark:
        raise ValueError(
            f"checkbox: checked={_shown(checked)} and"
            f" state=State(checked={_shown(state.checked)}) disagree: say it once, as checked"
        )
    state = attrs.evolve(state, checked=mark)
    return node(Role.CHECKBOX, label=label, handlers=handlers, state=state, **fields)


def _shown(checked: object) -> str:
    return f"Checked.{checked.name}" if isinstance(checked, Checked) else repr(checked)


def _checked(checked: object) -> Checked:
    """`checkbox`'s `checked` as a `Checked`. Taken for its truth, ``"no"``,
    ``Checked.UNCHECKED`` and ``Checked.MIXED`` were all checked."""
    if isinstance(checked, bool):
        return Checked.CHECKED if checked else Checked.UNCHECKED
    if isinstance(checked, Checked):
        return checked
    raise _refuse("checkbox", "True, False or a Checked", checked, "checked")


def column(*children: View[Msg], **fields: Any) -> View[Msg]:
    """Children stacked top to bottom, in a node of no role of its own (agents see them as
    its parent's)."""
    return node(Role.NONE, *children, **fields)


def row(*children: View[Msg], **fields: Any) -> View[Msg]:
    """Children side by side, left to right; otherwise a `column`."""
    return node(Role.NONE, *children, layout=LayoutSpec(direction="row"), **fields)


def group(*children: View[Msg], **fields: Any) -> View[Msg]:
    """Children stacked in a node of role ``group``, which agents see (name it with
    ``label=``)."""
    return node(Role.GROUP, *children, **fields)


def scroll_view(
    *children: View[Msg], height: float = 240.0, step: float = 48.0, **fields: Any
) -> View[Msg]:
    """A viewport of fixed height whose scroll offset is runtime-owned UI state."""
    _check_number("step", step, optional=False)

    def handle_scroll(action: SemanticsAction) -> Outcome[Msg]:
        direction = getattr(action, "direction", None)
        sign = -1.0 if direction in ("backward", "up", "left") else 1.0
        return Proposal(commits=(ScrollBy(sign * step),))

    handlers: dict[ActionKind, Handler[Msg]] = _given_handlers(fields)
    handlers.setdefault(ActionKind.SCROLL, handle_scroll)
    return node(
        Role.SCROLL_VIEW,
        *children,
        handlers=handlers,
        layout=LayoutSpec(height=height),
        composition=Composition.BOUNDARY,
        **fields,
    )
