"""A PIN field and an Unlock button: the PIN is typed into a password field, which the log
redacts (one bullet per character), and only the later Unlock shows whether it was right,
so re-executing its log diverges one input after the redacted one."""

from __future__ import annotations

import attrs

from semledger.runtime import App, View, button, column, text, text_field

PIN = "2468"


@attrs.frozen
class Model:
    pin: str = ""
    unlocked: bool = False


@attrs.frozen
class SetPin:
    text: str


@attrs.frozen
class Unlock:
    pass


Msg = SetPin | Unlock


def init() -> Model:
    return Model()


def update(model: Model, msg: Msg) -> Model:
    if isinstance(msg, SetPin):
        return attrs.evolve(model, pin=msg.text)
    return attrs.evolve(model, unlocked=model.pin == PIN)


def view(model: Model) -> View[Msg]:
    return column(
        text_field("PIN", model.pin, on_set_text=SetPin, password=True, semantic_id="pin.field"),
        button("Unlock", Unlock(), semantic_id="pin.unlock"),
        text("State", "unlocked" if model.unlocked else "locked", semantic_id="pin.state"),
    )


app: App[Model, Msg] = App(
    init=init,
    update=update,
    view=view,
    name="pin",
    message_types=(SetPin, Unlock),
    model_type=Model,
)
