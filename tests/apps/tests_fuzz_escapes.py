"""An app whose first click raises an error whose text holds markup and a terminal escape
sequence, as text from anywhere may."""

from __future__ import annotations

import attrs

from semledger.runtime import App, View, button, column


@attrs.frozen
class Go:
    pass


def update(_model: int, _msg: Go) -> int:
    raise ValueError("[bold]not bold[/bold] \x1b[31mred\x1b[0m\nsecond line")


def view(_model: int) -> View[Go]:
    return column(button("Go", Go(), semantic_id="escapes.go"))


app: App[int, Go] = App(
    init=lambda: 0, update=update, view=view, name="escapes", message_types=(Go,), model_type=int
)
