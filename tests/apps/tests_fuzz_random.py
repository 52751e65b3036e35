"""A counter whose increment adds a random amount: it never raises, but the same inputs do
not give the same screens."""

from __future__ import annotations

import random

import attrs

from semledger.examples import counter
from semledger.runtime import App


def update(model: counter.Model, msg: counter.Msg) -> counter.Model:
    if isinstance(msg, counter.Increment):
        return attrs.evolve(model, count=model.count + random.randint(1, 10**9))
    return counter.update(model, msg)


app: App[counter.Model, counter.Msg] = attrs.evolve(
    counter.app, update=update, name="counter-random"
)
