"""The counter: the smallest agent-operable app (SPEC §5)."""

from __future__ import annotations

import attrs

from semledger.runtime import App, View, button, column, text, text_field


@attrs.frozen
class Model:
    count: int = 0
    step: int = 1
    step_text: str = "1"
    step_invalid: bool = False


@attrs.frozen
class Increment:
    pass


@attrs.frozen
class Decrement:
    pass


@attrs.frozen
class Reset:
    pass


@attrs.frozen
class SetStep:
    text: str


Msg = Increment | Decrement | Reset | SetStep

_STEP_LIMIT = 10**100
"""A step is below this in size: a count of over 4300 digits could not be shown (Python's
int-to-str limit), and no step so far from it takes the count there."""


def init() -> Model:
    return Model()


def update(model: Model, msg: Msg) -> Model:
    if isinstance(msg, Increment):
        return attrs.evolve(model, count=model.count + model.step)
    if isinstance(msg, Decrement):
        return attrs.evolve(model, count=max(model.count - model.step, 0))
    if isinstance(msg, Reset):
        return attrs.evolve(model, count=0)
    try:
        step = int(msg.text)
    except ValueError:
        step = _STEP_LIMIT
    if abs(step) >= _STEP_LIMIT:
        return attrs.evolve(model, step_text=msg.text, step_invalid=True)
    return attrs.evolve(model, step=step, step_text=msg.text, step_invalid=False)


def view(model: Model) -> View[Msg]:
    return column(
        text("Count", str(model.count), semantic_id="counter.value"),
        button("Increment", Increment(), semantic_id="counter.increment"),
        button(
            "Decrement", Decrement(), semantic_id="counter.decrement", disabled=model.count == 0
        ),
        button("Reset", Reset(), semantic_id="counter.reset"),
        text_field(
            "Step",
            model.step_text,
            on_set_text=SetStep,
            invalid=model.step_invalid,
            semantic_id="counter.step",
        ),
    )


app: App[Model, Msg] = App(
    init=init,
    update=update,
    view=view,
    name="counter",
    message_types=(Increment, Decrement, Reset, SetStep),
    model_type=Model,
)

__all__ = ["Decrement", "Increment", "Model", "Reset", "SetStep", "app", "init", "update", "view"]
