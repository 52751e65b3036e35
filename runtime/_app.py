"""An application in The Elm Architecture: init, update, view, and the effects update asks for."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Generic, TypeVar

import attrs

from ._view import View

Model = TypeVar("Model")
Msg = TypeVar("Msg")


@attrs.frozen
class Effect(Generic[Msg]):
    """An asynchronous command run as a Trio task; its message (if any) is an ordinary input."""

    run: Callable[[], Awaitable[Msg | None]]
    name: str = "effect"


@attrs.frozen
class Next(Generic[Model, Msg]):
    """A new model together with the effects to start."""

    model: Model
    effects: tuple[Effect[Msg], ...] = ()


@attrs.frozen
class App(Generic[Model, Msg]):
    """The three functions of a TEA application. ``update`` and ``view`` must be pure."""

    init: Callable[[], Any]
    update: Callable[[Model, Msg], Any]
    view: Callable[[Model], View[Msg]]
    name: str = "app"
    message_types: Sequence[type] = ()
    """Types of the messages effects deliver, so the log can encode and decode them."""
    model_type: type | None = None
    """The model's type, so recovery checkpoints can encode and decode it."""


def split_step(step: object) -> tuple[Any, tuple[Effect[Any], ...]]:
    if isinstance(step, Next):
        return step.model, tuple(step.effects)
    return step, ()
