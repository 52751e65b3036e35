"""A password field with a strength meter: its semantics depend on the password's content,
which the log redacts (one bullet per character), so re-executing its log shows another
strength than the live session did."""

from __future__ import annotations

import attrs

from semledger.runtime import App, View, column, text, text_field


@attrs.frozen
class Model:
    password: str = ""


@attrs.frozen
class SetPassword:
    text: str


def strength(password: str) -> str:
    if any(c.isdigit() for c in password) and any(c.isalpha() for c in password):
        return "strong"
    return "weak" if password else "empty"


def init() -> Model:
    return Model()


def update(model: Model, msg: SetPassword) -> Model:
    return Model(msg.text)


def view(model: Model) -> View[SetPassword]:
    return column(
        text_field(
            "Password",
            model.password,
            on_set_text=SetPassword,
            password=True,
            semantic_id="strength.password",
        ),
        text("Strength", strength(model.password), semantic_id="strength.meter"),
    )


app: App[Model, SetPassword] = App(
    init=init,
    update=update,
    view=view,
    name="strength",
    message_types=(SetPassword,),
    model_type=Model,
)
