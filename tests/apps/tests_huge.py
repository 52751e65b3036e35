"""An app whose effect delivers a message msgpack cannot encode (an int of 71 bits): cattrs
unstructures it, and only packing it for the log fails."""

from __future__ import annotations

import attrs

from semledger.runtime import App, Effect, Next, View, button, column, text


@attrs.frozen
class Go:
    pass


@attrs.frozen
class Got:
    value: int


async def fetch() -> Got:
    return Got(2**70)


def update(model: int, msg: Go | Got) -> int | Next[int, Go | Got]:
    if isinstance(msg, Go):
        return Next(model + 1, (Effect(fetch, name="fetch"),))
    return msg.value


def view(model: int) -> View[Go | Got]:
    return column(text("Value", str(model)), button("Go", Go(), semantic_id="go"))


app: App[int, Go | Got] = App(
    init=lambda: 0, update=update, view=view, message_types=(Go, Got), model_type=int
)
