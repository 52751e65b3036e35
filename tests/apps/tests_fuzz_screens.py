"""A counter whose buttons differ from one pair of sessions to the next: the same inputs
lead to different screens, and no one sequence of inputs fails every time."""

import itertools
from typing import Any

import attrs

from semledger.examples import counter
from semledger.runtime import View, button, column, text

_started = itertools.count()
_buttons = 1


def init() -> counter.Model:
    global _buttons
    _buttons = 1 + next(_started) // 2 % 3  # an example and its twin start one after another
    return counter.init()


def view(model: counter.Model) -> View[Any]:
    buttons = [button(f"B{i}", counter.Increment(), semantic_id=f"b{i}") for i in range(_buttons)]
    return column(text("Count", str(model.count), semantic_id="v"), *buttons)


app = attrs.evolve(counter.app, init=init, view=view)
