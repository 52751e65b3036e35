"""A field whose app crashes on any text with an ``@`` in it."""

from __future__ import annotations

import attrs

from semledger.runtime import App, View, column, text_field


@attrs.frozen
class Model:
    email: str = ""


@attrs.frozen
class SetEmail:
    text: str


def update(model: Model, msg: SetEmail) -> Model:
    if "@" in msg.text:
        raise ValueError(f"cannot take {msg.text!r}")
    return Model(msg.text)


def view(model: Model) -> View[SetEmail]:
    return column(text_field("Email", model.email, on_set_text=SetEmail, semantic_id="email"))


app: App[Model, SetEmail] = App(
    Model, update, view, name="fuzz-at-sign", message_types=(SetEmail,), model_type=Model
)
