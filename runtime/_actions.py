"""Typed actions, targets and preconditions: what an agent asks the runtime to do.

Each is checked as it is built: ``TypeError`` for a value of the wrong type, ``ValueError``
for an id, a generation or a number no wire message can hold. ``Exact("3")`` was refused as
stale live, logged as the text ``"3"``, and acted on by replay. What the wire refuses for
its shape (a path with no step, a step with no filter or a negative index) can be built,
and a runtime or a session refuses it as ``invalid_arguments``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, Final, Literal

import attrs

from ._enums import ActionKind, Role, ScrollDirection, member_hint
from ._ids import LOGGABLE_INTS, U64_MAX, SemanticId
from ._text import shown_int


def _int(_instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{attribute.name}: expected an int, got {_shown(value)}")


def _u64(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    _int(instance, attribute, value)
    if not 0 <= value <= U64_MAX:
        raise ValueError(f"{attribute.name}: expected an int from 0 to 2**64-1, got {value}")


def _of(kind: type) -> Any:
    def check(_instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
        if not isinstance(value, kind):
            raise TypeError(
                f"{attribute.name}: expected {kind.__name__}, got {_shown(value)}"
                f"{_member_hint(kind, value)}"
            )

    return check


def _member_hint(kind: type, value: object) -> str:
    """`member_hint`, but for a kind of action with a payload, which has a class of its own."""
    if kind is ActionKind and isinstance(value, str) and value in PAYLOAD_KINDS:
        return f" (a {value} action is a {_PAYLOAD_CLASSES[ActionKind(value)]})"
    return member_hint(kind, value)


def _optional_text(_instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{attribute.name}: expected a str or None, got {_shown(value)}")


def _shown(value: object) -> str:
    return f"{type(value).__name__} {value!r}"


def _no_payload(_instance: object, _attribute: attrs.Attribute[Any], value: object) -> None:
    if isinstance(value, ActionKind) and value in PAYLOAD_KINDS:
        raise ValueError(
            f"kind: {value} carries a payload, so it has a class of its own:"
            f" {_PAYLOAD_CLASSES[value]}"
        )


def _finite(_instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{attribute.name}: expected a number, got {_shown(value)}")
    if isinstance(value, int):
        # The log cannot hold a larger int: the session that logged it ended.
        if value not in LOGGABLE_INTS:
            raise ValueError(
                f"{attribute.name}: expected a finite number, and an int from -2**63 to"
                f" 2**64-1, got {shown_int(value)}"
            )
    elif not math.isfinite(value):
        raise ValueError(f"{attribute.name}: expected a finite number, got {value}")


def _tuple_of_steps(steps: Iterable[PathStep]) -> tuple[PathStep, ...]:
    """`steps` as a tuple; ``TypeError`` naming them unless they are a sequence (None failed
    as "'NoneType' object is not iterable", a str was taken for steps of its letters)."""
    if isinstance(steps, str | bytes | PathStep) or not isinstance(steps, Iterable):
        one = " (a path of one step: ByPath([step]))" if isinstance(steps, PathStep) else ""
        raise TypeError(
            f"steps: expected a sequence of PathSteps, got {type(steps).__name__}"
            f" {steps!r:.80}{one}"
        )
    return tuple(steps)


def _optional_semantic_id(value: str | None) -> SemanticId | None:
    return None if value is None else SemanticId(value)


@attrs.frozen
class SimpleAction:
    """An action that carries no payload (activate, focus, submit, …)."""

    kind: ActionKind = attrs.field(validator=[_of(ActionKind), _no_payload])


@attrs.frozen
class SetText:
    value: str = attrs.field(validator=_of(str))
    kind: Literal[ActionKind.SET_TEXT] = ActionKind.SET_TEXT


@attrs.frozen
class Scroll:
    direction: ScrollDirection = attrs.field(validator=_of(ScrollDirection))
    kind: Literal[ActionKind.SCROLL] = ActionKind.SCROLL


@attrs.frozen
class SetNumericValue:
    value: float = attrs.field(validator=_finite)
    kind: Literal[ActionKind.SET_NUMERIC_VALUE] = ActionKind.SET_NUMERIC_VALUE


@attrs.frozen
class SetSelection:
    start: int = attrs.field(validator=_u64)
    end: int = attrs.field(validator=_u64)
    kind: Literal[ActionKind.SET_SELECTION] = ActionKind.SET_SELECTION


SemanticsAction = SimpleAction | SetText | Scroll | SetNumericValue | SetSelection

_PAYLOAD_CLASSES: Final = {
    ActionKind.SET_TEXT: "SetText(value)",
    ActionKind.SCROLL: "Scroll(direction)",
    ActionKind.SET_NUMERIC_VALUE: "SetNumericValue(value)",
    ActionKind.SET_SELECTION: "SetSelection(start, end)",
}
PAYLOAD_KINDS = frozenset(_PAYLOAD_CLASSES)


@attrs.frozen
class BySemanticId:
    id: SemanticId = attrs.field(converter=SemanticId)


@attrs.frozen
class ByNodeId:
    id: int = attrs.field(validator=_u64)


@attrs.frozen
class PathStep:
    """One step of a path: the ``index``-th child matching every filter given (at least one)."""

    index: int = attrs.field(default=0, validator=_int)
    role: Role | None = attrs.field(
        default=None, validator=attrs.validators.optional(_of(Role))
    )
    label: str | None = attrs.field(default=None, validator=_optional_text)
    value: str | None = attrs.field(default=None, validator=_optional_text)
    semantic_id: SemanticId | None = attrs.field(default=None, converter=_optional_semantic_id)

    def has_filter(self) -> bool:
        return any(f is not None for f in (self.role, self.label, self.value, self.semantic_id))


@attrs.frozen
class ByPath:
    steps: tuple[PathStep, ...] = attrs.field(converter=_tuple_of_steps)

    def __attrs_post_init__(self) -> None:
        for number, step in enumerate(self.steps):
            if not isinstance(step, PathStep):
                raise TypeError(f"steps[{number}]: expected a PathStep, got {_shown(step)}")


Target = BySemanticId | ByNodeId | ByPath


@attrs.frozen
class Latest:
    """Act on whatever generation is current."""


@attrs.frozen
class Exact:
    """Act only if the current generation is exactly this one."""

    generation: int = attrs.field(validator=_u64)


Precondition = Latest | Exact


def check_request(target: object, action: object, precondition: object) -> None:
    """Raise ``TypeError`` naming the argument that is not a `Target`, a `SemanticsAction`
    or a `Precondition`: an int given as a precondition was taken for `Latest`."""
    for name, value, expected in (
        ("target", target, (BySemanticId, ByNodeId, ByPath)),
        ("action", action, (SimpleAction, SetText, Scroll, SetNumericValue, SetSelection)),
        ("precondition", precondition, (Latest, Exact)),
    ):
        if not isinstance(value, expected):
            names = " or ".join(kind.__name__ for kind in expected)
            raise TypeError(f"{name}: expected {names}, got {_shown(value)}")


def check_optional_int(value: object, name: str) -> None:
    """Raise ``TypeError`` unless `value` is None or an int (not a bool)."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise TypeError(f"{name}: expected an int or None, got {_shown(value)}")


def check_generation(generation: object, name: str) -> None:
    """Raise ``TypeError`` unless `generation`, the argument `name`, is an int (not a bool):
    a str failed deep inside as "unsupported operand type(s) for -", and True read as 1."""
    if isinstance(generation, bool) or not isinstance(generation, int):
        raise TypeError(f"{name}: expected an int, got {_shown(generation)}")


def check_point(x: object, y: object) -> None:
    """Raise ``TypeError`` unless `x` and `y` are numbers (an int or a float, not a bool):
    a str failed deep inside as "'<=' not supported between instances of 'float' and
    'str'"."""
    for name, value in (("x", x), ("y", y)):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TypeError(f"{name}: expected a number (an int or a float), got {_shown(value)}")


def check_since(since: object, name: str = "since") -> None:
    """Raise ``TypeError`` unless `since` (a generation, called `name`) is None or an int
    (not a bool), ``ValueError`` unless it is a u64, as ``Exact`` checks."""
    check_optional_int(since, name)
    if isinstance(since, int) and not 0 <= since <= U64_MAX:
        raise ValueError(f"{name}: expected an int from 0 to 2**64-1, got {since}")
