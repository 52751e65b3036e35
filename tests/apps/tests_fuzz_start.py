"""A counter whose view changes with how often it was built, not with its model: now and
then the same inputs (none, at the start) give another first screen, and the example that
showed it passes when it is run again."""

from __future__ import annotations

import itertools
from typing import Any

import attrs

from semledger.examples import counter
from semledger.runtime import App, column, text

_builds = itertools.count()


def view(model: counter.Model) -> Any:
    mark = "!" if next(_builds) % 7 == 3 else ""
    return column(text("Count", f"{model.count}{mark}", semantic_id="counter.value"))


app: App[counter.Model, counter.Msg] = attrs.evolve(
    counter.app, view=view, name="counter-start"
)
