"""The counter as its code might have changed between a crash and the restart: its view is
the counter's, so a checkpoint of the counter restores, but its update differs."""

from __future__ import annotations

import attrs

from semledger.examples import counter
from semledger.runtime import App


def _by_two_from_five(model: counter.Model, msg: counter.Msg) -> counter.Model:
    if isinstance(msg, counter.Increment) and model.count >= 5:
        return attrs.evolve(model, count=model.count + 2)
    return counter.update(model, msg)


def _no_reset(model: counter.Model, msg: counter.Msg) -> counter.Model:
    return model if isinstance(msg, counter.Reset) else counter.update(model, msg)


class ResetError(Exception):
    pass


def _raising_reset(model: counter.Model, msg: counter.Msg) -> counter.Model:
    if isinstance(msg, counter.Reset):
        raise ResetError("reset is gone")
    return counter.update(model, msg)


app: App[counter.Model, counter.Msg] = attrs.evolve(
    counter.app, update=_by_two_from_five, name="counter-by-two"
)
"""Increment adds two from a count of five on."""

no_reset: App[counter.Model, counter.Msg] = attrs.evolve(
    counter.app, update=_no_reset, name="counter-no-reset"
)
"""Reset does nothing, so it commits nothing."""

raising_reset: App[counter.Model, counter.Msg] = attrs.evolve(
    counter.app, update=_raising_reset, name="counter-raising-reset"
)
"""Reset raises."""
