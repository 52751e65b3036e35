"""An app whose start runs three readings that come back as NaN, infinity and minus
infinity: plain floats as effect results, logged as they are."""

from __future__ import annotations

import attrs

from semledger.runtime import App, Effect, Next, View, button, column, text


@attrs.frozen
class Model:
    readings: tuple[str, ...] = ()
    taps: int = 0


@attrs.frozen
class Tap:
    pass


def _reading(value: float) -> Effect[float]:
    async def run() -> float:
        return value

    return Effect(run, name="nan.read")


def init() -> Next[Model, float | Tap]:
    return Next(Model(), tuple(_reading(v) for v in (float("nan"), float("inf"), -float("inf"))))


def update(model: Model, msg: float | Tap) -> Model:
    if isinstance(msg, Tap):
        return attrs.evolve(model, taps=model.taps + 1)
    return attrs.evolve(model, readings=(*model.readings, repr(msg)))


def view(model: Model) -> View[float | Tap]:
    return column(
        text("Readings", " ".join(sorted(model.readings)), semantic_id="nan.readings"),
        button("Tap", Tap(), semantic_id="nan.tap"),
    )


app: App[Model, float | Tap] = App(
    init=init, update=update, view=view, name="nan", message_types=(Tap,), model_type=Model
)
