"""A counter with bugs for the fuzzer to find: Reset divides by zero, and so does a bad step."""

from __future__ import annotations

from semledger.examples import counter
from semledger.runtime import App


def update(model: counter.Model, msg: counter.Msg) -> counter.Model:
    if isinstance(msg, counter.Reset):
        return counter.Model(count=model.count // 0)
    if isinstance(msg, counter.SetStep) and msg.text == "":
        raise KeyError("an empty step")
    return counter.update(model, msg)


app: App[counter.Model, counter.Msg] = App(
    init=counter.init,
    update=update,
    view=counter.view,
    name="counter-buggy",
    message_types=counter.app.message_types,
    model_type=counter.Model,
)
