"""An app whose init starts an effect (a load) that a test can hold back with `GATE`."""

from __future__ import annotations

import attrs
import trio

from semledger.runtime import App, Effect, Next, View, column, text

GATE: trio.Event | None = None
"""While set to an Event, the load waits for it; None lets it finish at once."""


@attrs.frozen
class Model:
    status: str = "Loading"


@attrs.frozen
class Loaded:
    items: int


def _load() -> Effect[Loaded]:
    async def run() -> Loaded:
        if GATE is not None:
            await GATE.wait()
        return Loaded(3)

    return Effect(run, name="boot.load")


def init() -> Next[Model, Loaded]:
    return Next(Model(), (_load(),))


def update(model: Model, msg: Loaded) -> Model:
    return Model(f"Loaded {msg.items} items")


def view(model: Model) -> View[Loaded]:
    return column(text("Status", model.status, semantic_id="boot.status"))


app: App[Model, Loaded] = App(
    init=init,
    update=update,
    view=view,
    name="boot",
    message_types=(Loaded,),
    model_type=Model,
)
