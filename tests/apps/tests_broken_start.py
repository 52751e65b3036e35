"""A counter whose first view raises: the application cannot start at all."""

from __future__ import annotations

from typing import Any

import attrs

from semledger.examples import counter
from semledger.runtime import App, Every, View


class BrokenViewError(RuntimeError):
    """What the broken counter's view raises."""


def view(model: counter.Model) -> View[Any]:
    raise BrokenViewError("the view is broken")


app: App[counter.Model, counter.Msg] = attrs.evolve(
    counter.app, view=view, name="counter-broken-start"
)


def _no_timer(model: counter.Model) -> Any:
    return [Every(0, counter.Increment())]  # no period: Every refuses it


subscribing: App[counter.Model, counter.Msg] = attrs.evolve(
    counter.app, subscriptions=_no_timer, name="counter-broken-subscriptions"
)
"""A counter whose subscriptions raise from the first model on."""


def _bare_timer(model: counter.Model) -> Any:
    return Every(1.0, counter.Increment())  # not in a sequence: the runtime refuses it


bare_timer: App[counter.Model, counter.Msg] = attrs.evolve(
    counter.app, subscriptions=_bare_timer, name="counter-bare-timer"
)
"""A counter whose subscriptions return what the runtime refuses (an error with no cause)."""
