"""A sign-in form whose effect takes the typed password to a backend, which answers only
once the test lets it: what each run of the effect was given is in `SENT`."""

from __future__ import annotations

import attrs
import trio

from semledger.runtime import App, Effect, Next, View, button, column, text, text_field

SENT: list[str] = []
"""The password each run of the sign-in effect took to the backend."""
ANSWER = trio.Event()


@attrs.frozen
class Model:
    password: str = ""
    status: str = "signed out"


@attrs.frozen
class SetPassword:
    text: str


@attrs.frozen
class SignIn:
    pass


@attrs.frozen
class SignedIn:
    ok: bool


def _sign_in(password: str) -> Effect[SignedIn]:
    async def call() -> SignedIn:
        SENT.append(password)
        await ANSWER.wait()
        return SignedIn(password == "hunter22")

    return Effect(call, name="auth.sign_in")


def update(model: Model, msg: SetPassword | SignIn | SignedIn) -> Model | Next[Model, SignedIn]:
    if isinstance(msg, SetPassword):
        return attrs.evolve(model, password=msg.text)
    if isinstance(msg, SignIn):
        return Next(attrs.evolve(model, status="signing in"), (_sign_in(model.password),))
    return attrs.evolve(model, status="welcome" if msg.ok else "wrong password")


def view(model: Model) -> View[SetPassword | SignIn]:
    return column(
        text_field(
            "Password", model.password, on_set_text=SetPassword, password=True,
            semantic_id="password",
        ),
        button("Sign in", SignIn(), semantic_id="sign_in"),
        text("Status", model.status, semantic_id="status"),
    )  # fmt: skip


app = App(
    init=Model, update=update, view=view, name="login",
    message_types=(SetPassword, SignIn, SignedIn), model_type=Model,
)  # fmt: skip
