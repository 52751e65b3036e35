"""An input whose handling the app's code failed leaves nothing behind: not the messages
proposed with the one that failed, nor those a view's map function was mapping."""

from __future__ import annotations

from typing import Any

import pytest

from semledger.runtime import (
    ActionKind,
    App,
    ApplicationError,
    AppRuntime,
    BySemanticId,
    Latest,
    Proposal,
    Receipt,
    SimpleAction,
    View,
    button,
    column,
    text,
)

ACTIVATE = SimpleAction(ActionKind.ACTIVATE)


def _update(model: list[str], message: str) -> list[str]:
    if message == "boom":
        raise RuntimeError("boom")
    return [*model, message]


def _runtime(*proposed: str, mapper: Any = None) -> AppRuntime[list[str], str]:
    def view(model: list[str]) -> View[str]:
        go = button(
            "Go",
            handlers={ActionKind.ACTIVATE: lambda _action: Proposal(proposed)},
            semantic_id="go",
        )
        return column(
            text("Log", " ".join(model) or "-", semantic_id="log"),
            go if mapper is None else go.map(mapper),
        )

    return AppRuntime(App(init=list, update=_update, view=view))


def test_messages_proposed_after_one_update_failed_on_are_not_applied_by_the_next_input() -> None:
    """They stayed queued, and the next input (a timer's tick) applied them ahead of its own
    message: the model became ['inc', 'tick']."""
    runtime = _runtime("before", "boom", "inc")
    with pytest.raises(ApplicationError):
        runtime.perform(BySemanticId("go"), ACTIVATE, Latest())
    assert runtime.model == ["before"]  # (drained before it: applied, as documented)
    runtime.deliver("tick")
    assert runtime.model == ["before", "tick"]


def test_a_view_s_map_function_that_raises_is_the_app_s_error_and_applies_nothing() -> None:
    """It escaped as the raw error, which a session logs as a fault of semledger's own."""

    def mapper(message: str) -> str:
        if message == "boom":
            raise KeyError(message)
        return message.upper()

    runtime = _runtime("one", "boom", mapper=mapper)
    with pytest.raises(ApplicationError, match=r"^a view's map function raised$") as raised:
        runtime.perform(BySemanticId("go"), ACTIVATE, Latest())
    assert isinstance(raised.value.__cause__, KeyError)
    assert runtime.model == []
    runtime.deliver("tick")
    assert runtime.model == ["tick"]
    mapped = _runtime("one", "two", mapper=str.upper)
    assert isinstance(mapped.perform(BySemanticId("go"), ACTIVATE, Latest()), Receipt)
    assert mapped.model == ["ONE", "TWO"]
