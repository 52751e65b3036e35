"""`tests_duplicated`, whose update also raises from a count of 4 on: a fuzzer that allows
the duplicate finds the crash, after steps that report it."""

from __future__ import annotations

import attrs
import tests_duplicated

from semledger.examples import counter
from semledger.runtime import App


def update(model: counter.Model, msg: counter.Msg) -> counter.Model:
    if model.count >= 4:
        raise RuntimeError("four is too many")
    return counter.update(model, msg)


app: App[counter.Model, counter.Msg] = attrs.evolve(
    tests_duplicated.app, update=update, name="duplicated_crash"
)
