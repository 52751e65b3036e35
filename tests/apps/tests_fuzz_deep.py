"""A counter whose seventh increment crashes: a bug seven clicks deep. The Increment button
comes last, after controls that undo the progress (Reset, Decrement) or do nothing to it
(Note, Refresh), so a fuzzer that always picks the first control never gets there."""

from __future__ import annotations

import attrs

from semledger.runtime import App, View, button, checkbox, column, text, text_field

DEPTH = 7


class SeventhClickError(RuntimeError):
    """What the deep counter raises when its count would reach `DEPTH`."""


@attrs.frozen
class Model:
    count: int = 0
    note: str = ""
    refreshed: bool = False


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
class Refresh:
    pass


@attrs.frozen
class SetNote:
    text: str


Msg = Increment | Decrement | Reset | Refresh | SetNote


def update(model: Model, msg: Msg) -> Model:
    if isinstance(msg, Increment):
        if model.count + 1 >= DEPTH:
            raise SeventhClickError(f"the count reached {model.count + 1}")
        return attrs.evolve(model, count=model.count + 1)
    if isinstance(msg, Decrement):
        return attrs.evolve(model, count=max(model.count - 1, 0))
    if isinstance(msg, Reset):
        return attrs.evolve(model, count=0)
    if isinstance(msg, Refresh):
        return attrs.evolve(model, refreshed=not model.refreshed)
    return attrs.evolve(model, note=msg.text)


def view(model: Model) -> View[Msg]:
    return column(
        button("Reset", Reset(), semantic_id="deep.reset"),
        button("Decrement", Decrement(), semantic_id="deep.decrement"),
        text_field("Note", model.note, on_set_text=SetNote, semantic_id="deep.note"),
        checkbox("Refreshed", model.refreshed, Refresh(), semantic_id="deep.refresh"),
        text("Count", str(model.count), semantic_id="deep.count"),
        button("Increment", Increment(), semantic_id="deep.increment"),
    )


app: App[Model, Msg] = App(
    init=lambda: Model(),
    update=update,
    view=view,
    name="counter-deep",
    message_types=(Increment, Decrement, Reset, Refresh, SetNote),
    model_type=Model,
)
