"""An application in The Elm Architecture: init, update, view, and the effects update asks for."""

from __future__ import annotations

import dataclasses
import enum
import inspect
import math
import typing
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Generic, TypeVar, cast

import attrs

from ._view import View, refuse_handler

Model = TypeVar("Model")
Msg = TypeVar("Msg")


def _effect_run(_instance: object, _attribute: object, run: Any) -> None:
    if not callable(run):
        raise TypeError(f"Effect.run: expected an async function of no arguments, got {run!r:.80}")
    required = _required_parameters(run)
    if required:
        raise TypeError(
            f"Effect.run: expected an async function of no arguments, got {run!r:.80}, which"
            f" needs {', '.join(required)} (bind them: lambda: fetch(url), functools.partial)"
        )


def _required_parameters(function: Callable[..., Any]) -> list[str]:
    """The parameters a call without arguments would miss: it would fail only once the
    effect ran, logged as the effect's failure, which tests and the fuzzer take in stride."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):  # a callable whose signature cannot be told
        return []
    variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    return [p.name for p in parameters if p.default is p.empty and p.kind not in variadic]


def _effect_name(_instance: object, _attribute: object, name: Any) -> None:
    if not isinstance(name, str):
        raise TypeError(f"Effect.name: expected a str, got {type(name).__name__} {name!r:.80}")


@attrs.frozen
class Effect(Generic[Msg]):
    """An asynchronous command run as a Trio task; its message (if any) is an ordinary input."""

    run: Callable[[], Awaitable[Msg | None]] = attrs.field(validator=_effect_run)
    name: str = attrs.field(default="effect", validator=_effect_name)

    async def result(self) -> Msg | None:
        """Run it; its message. A `run` that is not async (a plain function, a lambda
        returning the message) fails saying so, not as an await of a message."""
        awaitable = self.run()
        if not inspect.isawaitable(awaitable):
            raise TypeError(
                f"effect {self.name!r}: run returned {awaitable!r:.80}, not an awaitable"
                " (Effect.run must be an async function)"
            )
        return await awaitable


@attrs.frozen
class Next(Generic[Model, Msg]):
    """A new model together with the effects to start."""

    model: Model
    effects: tuple[Effect[Msg], ...] = ()


def _positive(_instance: object, _attribute: object, seconds: float) -> None:
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        raise TypeError(
            f"Every.seconds: expected a number of seconds, got {type(seconds).__name__}"
            f" {seconds!r:.80}"
        )
    if not 0 < seconds < math.inf:
        raise ValueError(
            f"Every.seconds: expected a positive finite number of seconds, got {seconds!r}"
        )


def _hashable(_instance: object, _attribute: object, message: Any) -> None:
    if isinstance(message, type):  # as `send` refuses it: update's `case Tick():` misses it
        name = message.__qualname__
        raise TypeError(
            f"Every.message: {name} is a message class, not a message: give one, {name}()"
        )
    refuse_handler("Every.message", message, "each tick delivers it to update as it is")
    try:
        hash(message)
    except TypeError:
        raise TypeError(
            f"Every.message must be hashable (equal timers are one timer), got {message!r}"
        ) from None


@attrs.frozen
class Every(Generic[Msg]):
    """A timer subscription: `message` is delivered every `seconds` for as long as the
    model's subscriptions include this value (equal values are the same timer, so the
    message must be hashable). Each tick is an input like any other and is logged."""

    seconds: float = attrs.field(validator=_positive)
    message: Msg = attrs.field(validator=_hashable)


def _message_types(
    _instance: object, _attribute: object, message_types: Sequence[type]
) -> None:
    """The log names a message by its class's ``__qualname__``: each must be a class, and
    no two may share that name."""
    if isinstance(message_types, type | str) or not isinstance(message_types, Sequence):
        raise TypeError(
            f"App.message_types: expected a tuple of message classes, got {message_types!r:.80}"
        )
    named: dict[str, type] = {}
    for cls in message_types:
        if not isinstance(cls, type):
            raise TypeError(f"App.message_types: {cls!r:.80} is not a class")
        if cls.__module__ == "builtins" and cls not in _PACKED_BUILTINS:
            raise TypeError(
                f"App.message_types: {cls.__qualname__} is a built-in type whose values the log"
                " cannot record (it records None, bool, int, float, str, bytes, and lists,"
                " tuples and dicts of them): list the classes of the messages themselves"
            )
        if not _recordable(cls):
            raise TypeError(
                f"App.message_types: {cls.__module__}.{cls.__qualname__} is a plain class,"
                " whose messages the log cannot record: make it an attrs class"
                " (@attrs.frozen), a dataclass, an Enum or a NamedTuple"
            )
        other = named.setdefault(cls.__qualname__, cls)
        if other is not cls:
            raise ValueError(
                f"App.message_types: {other.__module__}.{other.__qualname__} and"
                f" {cls.__module__}.{cls.__qualname__} share the name {cls.__qualname__!r},"
                " which is how the log names a message: rename one"
            )


_PACKED_BUILTINS = (type(None), bool, int, float, str, bytes, list, tuple, dict)
"""The built-in types msgpack packs as they are."""


def _recordable(cls: type) -> bool:
    """Whether the log's converter (cattrs) can take a message of `cls` apart and back: a
    class of one's own that is none of these it passes through whole, which msgpack cannot
    pack. (A built-in type msgpack packs, such as str or dict, is left to the codec.)"""
    return (
        cls.__module__ == "builtins"
        or attrs.has(cls)
        or dataclasses.is_dataclass(cls)
        or issubclass(cls, enum.Enum)
        or (issubclass(cls, tuple) and hasattr(cls, "_fields"))
    )


def _model_type(_instance: object, _attribute: object, model_type: Any) -> None:
    """A model type the log's converter can encode and decode a model by: a class it can
    take apart (an attrs class, a dataclass, a built-in type, ...) or a type built of them
    (``list[int]``, ``Model | None``)."""
    if model_type is None or model_type is Any or typing.get_origin(model_type) is not None:
        return
    if not isinstance(model_type, type):
        raise TypeError(
            f"App.model_type: expected the model's class (or a type such as list[int]),"
            f" got {model_type!r:.80}"
        )
    if not _recordable(model_type):
        raise TypeError(
            f"App.model_type: {model_type.__module__}.{model_type.__qualname__} is a plain"
            " class, whose models the log cannot record, so no recovery checkpoint would be"
            " taken: make it an attrs class (@attrs.frozen), a dataclass or a NamedTuple,"
            " or leave model_type out"
        )


def _function(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not callable(value):
        raise TypeError(f"App.{attribute.name}: expected a function, got {value!r:.80}")


def _optional_function(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is not None:
        _function(instance, attribute, value)


def _name(_instance: object, _attribute: object, name: object) -> None:
    if not isinstance(name, str) or not name:
        raise TypeError(f"App.name: expected a non-empty string, got {name!r:.80}")


@attrs.frozen
class App(Generic[Model, Msg]):
    """The three functions of a TEA application. ``update`` and ``view`` must be pure."""

    init: Callable[[], Any] = attrs.field(validator=_function)
    update: Callable[[Model, Msg], Any] = attrs.field(validator=_function)
    view: Callable[[Model], View[Msg]] = attrs.field(validator=_function)
    name: str = attrs.field(default="app", validator=_name)
    message_types: Sequence[type] = attrs.field(default=(), validator=_message_types)
    """Classes of the messages effects and timers deliver, so the log can encode them;
    their ``__qualname__`` names them in the log, so no two may share one."""
    model_type: type | None = attrs.field(default=None, validator=_model_type)
    """The model's type, so recovery checkpoints can encode and decode it."""
    subscriptions: Callable[[Model], Sequence[Every[Msg]]] | None = attrs.field(
        default=None, validator=_optional_function
    )
    """The timers the model wants running (pure, like ``view``); asked after each input."""


def check_app(app: object) -> None:
    """Raise ``TypeError`` unless `app` is an `App` (its ``module:attribute`` reference, a
    str, is not one: ``load_app`` loads the App it names)."""
    if not isinstance(app, App):
        shown = f"{type(app).__name__} {app!r:.80}"
        if isinstance(app, str):
            shown += " (an App's reference: load_app loads the App it names)"
        raise TypeError(f"app: expected an App, got {shown}")


class NotAnEffectError(TypeError):
    """The cause of the `ApplicationError` raised when init or update returns a `Next` whose
    effects are not a sequence of `Effect` values (a bare Effect, a coroutine, a message):
    the session could not start them, or log that it did."""


def split_step(step: object) -> tuple[Any, tuple[Effect[Any], ...]]:
    """The model and the effects of what init or update returned; raises `NotAnEffectError`."""
    if not isinstance(step, Next):
        return step, ()
    effects: Any = step.effects
    if isinstance(effects, Effect):
        raise NotAnEffectError("Next.effects is one Effect, not a tuple of them: (effect,)")
    try:
        listed: tuple[object, ...] = tuple(effects)
    except TypeError:
        raise NotAnEffectError(
            f"Next.effects is {effects!r:.80}, not a tuple of Effect values"
        ) from None
    for effect in listed:
        if not isinstance(effect, Effect):
            raise NotAnEffectError(
                f"Next.effects holds a {type(effect).__name__}, not an Effect: {effect!r:.80}"
            )
    return step.model, cast("tuple[Effect[Any], ...]", listed)
