"""The counter whose update raises, on an increment, an exception that cannot be turned into
text: its ``__str__`` raises."""

from __future__ import annotations

import attrs

from semledger.examples import counter
from semledger.runtime import App


class UnprintableError(Exception):
    """What the counter raises; ``str()`` of it raises in turn."""

    def __str__(self) -> str:
        raise ValueError("no text for this one")


def update(model: counter.Model, msg: counter.Msg) -> counter.Model:
    if isinstance(msg, counter.Increment):
        raise UnprintableError
    return counter.update(model, msg)


app: App[counter.Model, counter.Msg] = attrs.evolve(
    counter.app, update=update, name="counter-unprintable"
)
