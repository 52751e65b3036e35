"""The counter whose view gives two nodes one semantic id from a count of 2 on: a bug the
fuzzer must report, though no generation invariant breaks."""

from __future__ import annotations

import attrs

from semledger.examples import counter
from semledger.runtime import App, View, column, text


def view(model: counter.Model) -> View[counter.Msg]:
    shown = counter.view(model)
    if model.count < 2:
        return shown
    return column(shown, text("Again", str(model.count), semantic_id="counter.value"))


app: App[counter.Model, counter.Msg] = attrs.evolve(counter.app, view=view, name="duplicated")
