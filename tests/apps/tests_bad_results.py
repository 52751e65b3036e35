"""Counters with a newcomer's mistakes in what they return: `effects` asks for an effect
with a string instead of an `Effect` on the first increment, `bare_message` has its
button's handler return the message itself instead of a `Proposal` of it, and `nan_scroll`
has a scroll view whose activate handler proposes ``ScrollBy(nan)``."""

from __future__ import annotations

from typing import Any

import attrs

from semledger.examples import counter
from semledger.runtime import (
    ActionKind,
    App,
    Next,
    Proposal,
    Role,
    ScrollBy,
    View,
    column,
    node,
    scroll_view,
    text,
)


def update(model: counter.Model, msg: counter.Msg) -> Any:
    if isinstance(msg, counter.Increment):
        return Next(counter.update(model, msg), ("save",))  # type: ignore[arg-type]
    return counter.update(model, msg)


def view(model: counter.Model) -> View[counter.Msg]:
    return column(
        text("Count", str(model.count), semantic_id="counter.value"),
        node(
            Role.BUTTON,
            label="Increment",
            semantic_id="counter.increment",
            handlers={ActionKind.ACTIVATE: lambda _action: counter.Increment()},
        ),
    )


effects: App[counter.Model, counter.Msg] = attrs.evolve(
    counter.app, update=update, name="counter-bad-effects"
)
bare_message: App[counter.Model, counter.Msg] = attrs.evolve(
    counter.app, view=view, name="counter-bare-message"
)


def scroll_by_nan(_action: object) -> Proposal[counter.Msg]:
    return Proposal(commits=(ScrollBy(float("nan")),))


def nan_view(model: counter.Model) -> View[counter.Msg]:
    rows = [text(f"row {number}") for number in range(20)]
    return column(
        text("Count", str(model.count), semantic_id="counter.value"),
        scroll_view(*rows, semantic_id="nan.scroll", handlers={ActionKind.ACTIVATE: scroll_by_nan}),
    )


nan_scroll: App[counter.Model, counter.Msg] = attrs.evolve(
    counter.app, view=nan_view, name="counter-nan-scroll"
)
