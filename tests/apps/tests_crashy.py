"""The counter whose update raises on the third increment (step 3 of an increments-only run)."""

from __future__ import annotations

import attrs

from semledger.examples import counter
from semledger.runtime import App

CRASH_AT = 3


class ThirdIncrementError(RuntimeError):
    """What the crashy counter raises."""


def update(model: counter.Model, msg: counter.Msg) -> counter.Model:
    if isinstance(msg, counter.Increment) and model.count + model.step >= CRASH_AT:
        raise ThirdIncrementError(f"the count may not reach {CRASH_AT}")
    return counter.update(model, msg)


app: App[counter.Model, counter.Msg] = attrs.evolve(
    counter.app, update=update, name="counter-crashy"
)
