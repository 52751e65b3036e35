"""An app whose code calls ``sys.exit()``, as a library it calls might: its effect does on
Load, its update on Quit. Its effect on Wrap raises asyncio's ``CancelledError``, as asyncio
code an effect wraps may: no ``Exception`` either. Its effect on Mute raises an exception
that cannot be turned into text (its ``__str__`` raises)."""

from __future__ import annotations

import asyncio
import sys

import attrs

from semledger.runtime import App, Effect, Next, View, button, column, text


@attrs.frozen
class Load:
    pass


@attrs.frozen
class Quit:
    pass


@attrs.frozen
class Bump:
    pass


@attrs.frozen
class Wrap:
    pass


@attrs.frozen
class Loaded:
    pass


async def _fetch() -> Loaded:
    sys.exit(3)


async def _wrapped() -> Loaded:
    raise asyncio.CancelledError("the wrapped loop was cancelled")


def update(
    model: int, msg: Load | Wrap | Quit | Bump | Mute | Loaded
) -> int | Next[int, Loaded]:
    if isinstance(msg, Load):
        return Next(model, (Effect(_fetch, name="cli.fetch"),))
    if isinstance(msg, Wrap):
        return Next(model, (Effect(_wrapped, name="asyncio.wrapped"),))
    if isinstance(msg, Quit):
        sys.exit("the library gave up")
    if isinstance(msg, Mute):
        return Next(model, (Effect(_unprintable, name="unprintable"),))
    return model + 1


def view(model: int) -> View[Load | Wrap | Quit | Bump | Mute]:
    return column(
        text("Bumps", str(model), semantic_id="bumps"),
        button("Load", Load(), semantic_id="load"),
        button("Wrap", Wrap(), semantic_id="wrap"),
        button("Bump", Bump(), semantic_id="bump"),
        button("Quit", Quit(), semantic_id="quit"),
        button("Mute", Mute(), semantic_id="mute"),
    )


@attrs.frozen
class Mute:
    pass


class UnprintableError(Exception):
    def __str__(self) -> str:
        raise ValueError("no text for this one")


async def _unprintable() -> Loaded:
    raise UnprintableError


app = App(init=lambda: 0, update=update, view=view, name="exiting",
          message_types=(Load, Wrap, Quit, Bump, Mute, Loaded), model_type=int)
