"""A counter whose increment adds 1 and 2 by turns, whatever the model: global state, which a
test resets (a fresh `_calls`) to make the app do in one run what it did in another."""

from __future__ import annotations

import itertools

import attrs

from semledger.examples import counter
from semledger.runtime import App

_calls = itertools.count()


def update(model: counter.Model, msg: counter.Msg) -> counter.Model:
    if isinstance(msg, counter.Increment):
        return attrs.evolve(model, count=model.count + 1 + next(_calls) % 2)
    return counter.update(model, msg)


app: App[counter.Model, counter.Msg] = attrs.evolve(
    counter.app, update=update, name="counter-alternating"
)
