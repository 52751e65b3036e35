"""A counter with bugs for the fuzzer to find: Reset divides by zero, and so does a bad step."""

from __future__ import annotations

import attrs

from semledger.examples import counter
from semledger.runtime import App


def update(model: counter.Model, msg: counter.Msg) -> counter.Model:
    if isinstance(msg, counter.Reset):
        return counter.Model(count=model.count // 0)
    if isinstance(msg, counter.SetStep) and msg.text == "":
        raise KeyError("an empty step")
    return counter.update(model, msg)


app: App[counter.Model, counter.Msg] = attrs.evolve(
    counter.app, update=update, name="counter-buggy"
)
