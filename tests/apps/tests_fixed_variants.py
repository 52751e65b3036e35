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
    reset_counts: bool = False,
    help_unnamed: bool = False,
    twin: str | None = None,
) -> View[counter.Msg]:
    reset_button = (
        button(f"Reset ({model.count})", counter.Reset())
        if reset_counts
        else button("Reset", counter.Reset(), semantic_id="counter.reset", disabled=reset_disabled)
    )
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
        *([button("Help", counter.Increment())] if help_unnamed else []),
        *([reset_button] if reset else []),
        *([button(twin, counter.Increment())] if twin is not None else []),
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


def _reset_counts(model: counter.Model) -> View[counter.Msg]:
    return _view(model, shown=str(model.count), reset=True, reset_counts=True)


def _reset_counts_after_help(model: counter.Model) -> View[counter.Msg]:
    return _view(model, shown=str(model.count), reset=True, reset_counts=True, help_unnamed=True)


def _reset_counts_with_twin(model: counter.Model) -> View[counter.Msg]:
    return _view(model, shown=str(model.count), reset=True, reset_counts=True, twin="Reset (1)")


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

counting_reset: App[counter.Model, counter.Msg] = attrs.evolve(
    tests_buggy.app, view=_reset_counts, name="counting-reset"
)
"""Reset, with no semantic id, shows the count in its label; still divides by zero."""


def _twice(model: counter.Model, message: counter.Msg) -> counter.Model:
    model = counter.app.update(model, message)
    return counter.app.update(model, message) if isinstance(message, counter.Increment) else model


counting_reset_fixed: App[counter.Model, counter.Msg] = attrs.evolve(
    counter.app, view=_reset_counts, update=_twice, name="counting-reset-fixed"
)
"""The fix, which also counts otherwise (an increment adds the step twice): the same nodes,
Reset's label showing another count."""


counting_reset_after_help: App[counter.Model, counter.Msg] = attrs.evolve(
    tests_buggy.app, view=_reset_counts_after_help, name="counting-reset-after-help"
)
"""Not fixed, but a Help button with no semantic id now comes before the counting Reset:
the node id the recorded Reset named is now Help's, another button."""

counting_reset_with_twin: App[counter.Model, counter.Msg] = attrs.evolve(
    tests_buggy.app, view=_reset_counts_with_twin, name="counting-reset-with-twin"
)
"""The counting Reset, followed by another button always labelled as Reset is at a count of
1; still divides by zero."""

counting_reset_with_twin_fixed: App[counter.Model, counter.Msg] = attrs.evolve(
    counting_reset_fixed, view=_reset_counts_with_twin, name="counting-reset-with-twin-fixed"
)
"""Fixed, counting otherwise: Reset shows another count, its twin what Reset showed."""
