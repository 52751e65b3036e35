"""A counter whose subscriptions flip a global on every call: a timer one call, none the
next, whatever the model."""

from __future__ import annotations

import itertools

import attrs

from semledger.examples import counter
from semledger.runtime import App, Every

_calls = itertools.count()


def subscriptions(model: counter.Model) -> list[Every[counter.Msg]]:
    return [Every(1.0, counter.Increment())] if next(_calls) % 2 else []


app: App[counter.Model, counter.Msg] = attrs.evolve(
    counter.app, subscriptions=subscriptions, name="counter-flipping-timers"
)
