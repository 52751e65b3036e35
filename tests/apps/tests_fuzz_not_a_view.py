"""A counter whose view forgot its column: it returns a list of widgets, not a View."""

from __future__ import annotations

from typing import Any

import attrs

from semledger.examples import counter
from semledger.runtime import App, button, text


def view(model: counter.Model) -> Any:
    return [text("Count", str(model.count)), button("Increment", counter.Increment())]


app: App[counter.Model, counter.Msg] = attrs.evolve(
    counter.app, view=view, name="counter-not-a-view"
)
