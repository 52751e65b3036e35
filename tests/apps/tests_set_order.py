"""A counter that takes a tag from a set of str, whose order follows the str hash seed
(PYTHONHASHSEED): where "work" comes first, an increment adds 2, and a reset raises."""

from __future__ import annotations

import attrs

from semledger.examples import counter
from semledger.runtime import App


def first_tag() -> str:
    return next(iter({"home", "work"}))


def update(model: counter.Model, msg: counter.Msg) -> counter.Model:
    if first_tag() == "work":
        if isinstance(msg, counter.Reset):
            raise RuntimeError("the work tag came first")
        if isinstance(msg, counter.Increment):
            return attrs.evolve(model, count=model.count + 2)
    return counter.update(model, msg)


app: App[counter.Model, counter.Msg] = attrs.evolve(
    counter.app, update=update, name="counter-set-order"
)
