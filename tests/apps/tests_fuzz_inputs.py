"""A slider from 0 to 100,000 in steps of 0.5 and a text field, which note every value the
fuzzer sends them (in `SENT`) and otherwise do nothing with it."""

from __future__ import annotations

import attrs

from semledger.runtime import (
    ActionKind,
    App,
    Numeric,
    Proposal,
    Role,
    SemanticsAction,
    SetNumericValue,
    View,
    column,
    node,
    text_field,
)

SENT: list[float | str] = []


@attrs.frozen
class Model:
    value: float = 0.0
    text: str = ""


@attrs.frozen
class SetValue:
    value: float


@attrs.frozen
class SetText:
    text: str


def update(model: Model, msg: SetValue | SetText) -> Model:
    if isinstance(msg, SetValue):
        SENT.append(msg.value)
        return attrs.evolve(model, value=msg.value)
    SENT.append(msg.text)
    return attrs.evolve(model, text=msg.text)


def _set_value(action: SemanticsAction) -> Proposal[SetValue | SetText]:
    assert isinstance(action, SetNumericValue)
    return Proposal((SetValue(action.value),))


def view(model: Model) -> View[SetValue | SetText]:
    numeric = Numeric(current=model.value, min=0.0, max=100_000.0, step=0.5)
    return column(
        node(
            Role.SLIDER,
            semantic_id="inputs.slider",
            label="Volume",
            numeric=numeric,
            handlers={ActionKind.SET_NUMERIC_VALUE: _set_value},
        ),
        text_field("Text", model.text, on_set_text=SetText, semantic_id="inputs.text"),
    )


app: App[Model, SetValue | SetText] = App(
    init=Model,
    update=update,
    view=view,
    name="inputs",
    message_types=(SetValue, SetText),
    model_type=Model,
)
