"""Fixes of tests_buggy's Reset (it divides by zero) that also change what recorded inputs
meet: a test exported from its crash must not pass them by never reaching the Reset."""

from __future__ import annotations

import attrs
import tests_buggy

from semledger.examples import counter
from semledger.runtime import App, View, button, column, text, text_field


def _view(
    model: counter.Model,
    *,
    shown: str,
    reset: bool,
    help_first: bool = False,
    reset_disabled: bool = False,
) -> View[counter.Msg]:
    return column(
        text("Count", shown, semantic_id="counter.value"),
        button("Increment", counter.Increment(), semantic_id="counter.increment"),
        button(
            "Decrement",
            counter.Decrement(),
            semantic_id="counter.decrement",
            disabled=model.count == 0,
        ),
        *([button("Help", counter.Increment(), semantic_id="counter.help")] if help_first else []),
        *(
            [button("Reset", counter.Reset(), semantic_id="counter.reset", disabled=reset_disabled)]
            if reset
            else []
        ),
        text_field(
            "Step", model.step_text, on_set_text=counter.SetStep, semantic_id="counter.step"
        ),
    )


def _hidden(model: counter.Model) -> View[counter.Msg]:
    return _view(model, shown="some", reset=True)


def _help_first(model: counter.Model) -> View[counter.Msg]:
    return _view(model, shown=str(model.count), reset=True, help_first=True)


def _reset_disabled(model: counter.Model) -> View[counter.Msg]:
    return _view(model, shown=str(model.count), reset=True, reset_disabled=True)


def _no_reset(model: counter.Model) -> View[counter.Msg]:
    return _view(model, shown=str(model.count), reset=False)


hidden: App[counter.Model, counter.Msg] = attrs.evolve(counter.app, view=_hidden, name="hidden")
"""Reset fixed, and the count no longer shown: an increment commits nothing, so the
generations the recorded inputs name run ahead of the app's."""

no_reset: App[counter.Model, counter.Msg] = attrs.evolve(
    counter.app, view=_no_reset, name="no-reset"
)
""""Fixed" by dropping the Reset button: the recorded Reset targets a node no longer there."""

help_first: App[counter.Model, counter.Msg] = attrs.evolve(
    tests_buggy.app, view=_help_first, name="help-first"
)
"""Not fixed (Reset still divides by zero), but a Help button now comes before Reset: the
node id the recorded Reset named is now Help's, which does not crash."""

reset_disabled: App[counter.Model, counter.Msg] = attrs.evolve(
    tests_buggy.app, view=_reset_disabled, name="reset-disabled"
)
"""Not fixed, but Reset is disabled: the recorded Reset is refused before its handler."""
