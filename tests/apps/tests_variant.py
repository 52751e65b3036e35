"""The counter with a different view from a count of 2 on (its value says more, its step
field reads invalid): replay must diverge there."""

from __future__ import annotations

import attrs

from semledger.examples import counter
from semledger.runtime import App, View, button, column, text, text_field


def view(model: counter.Model) -> View[counter.Msg]:
    shown = str(model.count) if model.count < 2 else f"{model.count} (two or more)"
    return column(
        text("Count", shown, semantic_id="counter.value"),
        button("Increment", counter.Increment(), semantic_id="counter.increment"),
        button(
            "Decrement",
            counter.Decrement(),
            semantic_id="counter.decrement",
            disabled=model.count == 0,
        ),
        button("Reset", counter.Reset(), semantic_id="counter.reset"),
        text_field(
            "Step",
            model.step_text,
            on_set_text=counter.SetStep,
            invalid=model.step_invalid or model.count >= 2,
            semantic_id="counter.step",
        ),
    )


app: App[counter.Model, counter.Msg] = attrs.evolve(counter.app, view=view, name="counter-variant")
