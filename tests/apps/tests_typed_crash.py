"""A counter whose update raises with the step text the agent typed in its message, as an
app that says what it could not parse does."""

from __future__ import annotations

import attrs

from semledger.examples import counter
from semledger.runtime import App


def update(model: counter.Model, msg: counter.Msg) -> counter.Model:
    if isinstance(msg, counter.SetStep) and not msg.text.isdigit():
        raise ValueError(f"not a step: {msg.text}")
    return counter.update(model, msg)


app: App[counter.Model, counter.Msg] = attrs.evolve(
    counter.app, update=update, name="counter-typed-crash"
)
