"""A counter whose fifth increment crashes. Once it has, each step takes 20 ms, and the
first step after the crash touches the file named by the environment's
``SEMLEDGER_TEST_READY``: hypothesis is then shrinking the counterexample, which the fuzzer
has recorded, slowly enough for a test to interrupt it there. (Touched as the crash is
raised, a Ctrl-C could come before the fuzzer had recorded it.)"""

from __future__ import annotations

import os
import time
from pathlib import Path

import attrs

from semledger.runtime import App, View, button, column, text

CRASHED = False


class FifthClickError(RuntimeError):
    pass


@attrs.frozen
class Increment:
    pass


def update(model: int, _msg: Increment) -> int:
    global CRASHED
    if CRASHED:
        Path(os.environ["SEMLEDGER_TEST_READY"]).touch()
        time.sleep(0.02)
    if model + 1 < 5:
        return model + 1
    CRASHED = True
    raise FifthClickError(f"the count reached {model + 1}")


def view(model: int) -> View[Increment]:
    return column(
        text("Count", str(model), semantic_id="slow.count"),
        button("Increment", Increment(), semantic_id="slow.increment"),
    )


app: App[int, Increment] = App(
    init=lambda: 0,
    update=update,
    view=view,
    name="slow-shrink",
    message_types=(Increment,),
    model_type=int,
)
