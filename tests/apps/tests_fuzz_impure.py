"""A counter whose update is impure: every other call raises, whatever the model and message."""

from __future__ import annotations

import itertools

import attrs

from semledger.examples import counter
from semledger.runtime import App

_calls = itertools.count()


class EveryOtherCallError(RuntimeError):
    """What the impure counter's update raises on every other call."""


def update(model: counter.Model, msg: counter.Msg) -> counter.Model:
    if next(_calls) % 2:
        raise EveryOtherCallError("update was called an even number of times")
    return counter.update(model, msg)


app: App[counter.Model, counter.Msg] = attrs.evolve(
    counter.app, update=update, name="counter-impure"
)
