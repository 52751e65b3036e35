"""The counter whose update raises, on an increment, an error with a message of 200,000
characters (a whole payload put into it, say)."""

from __future__ import annotations

import attrs

from semledger.examples import counter
from semledger.runtime import App

LENGTH = 200_000


def update(model: counter.Model, msg: counter.Msg) -> counter.Model:
    if isinstance(msg, counter.Increment):
        raise ValueError("x" * LENGTH)
    return counter.update(model, msg)


app: App[counter.Model, counter.Msg] = attrs.evolve(
    counter.app, update=update, name="counter-long-error"
)
