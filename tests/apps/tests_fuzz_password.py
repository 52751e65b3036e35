"""A sign-in form for the fuzzer: a password with a digit in it crashes its submit."""

from __future__ import annotations

import attrs

from semledger.runtime import App, Proposal, Reject, SemanticsAction, View, column, text_field


@attrs.frozen
class Model:
    password: str = ""


@attrs.frozen
class SetPassword:
    text: str


@attrs.frozen
class SignIn:
    pass


def update(model: Model, msg: SetPassword | SignIn) -> Model:
    if isinstance(msg, SetPassword):
        return Model(msg.text)
    if any(c.isdigit() for c in model.password):
        raise ValueError("a digit in the password")
    return model


def view(model: Model) -> View[SetPassword | SignIn]:
    def submit(_action: SemanticsAction) -> Proposal[SignIn] | Reject:
        return Proposal((SignIn(),)) if model.password else Reject("enter a password")

    return column(
        text_field(
            "Password", model.password, on_set_text=SetPassword, on_submit=submit,
            password=True, semantic_id="password",
        ),
    )


app: App[Model, SetPassword | SignIn] = App(
    Model, update, view, name="fuzz-password", message_types=(SetPassword, SignIn),
    model_type=Model,
)
