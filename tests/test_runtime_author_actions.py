"""An action built from a string says what to write instead."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from semledger.runtime import ActionKind, PathStep, Scroll, SimpleAction


@pytest.mark.parametrize(
    ("build", "said"),
    [
        (
            lambda: SimpleAction("activate"),
            "kind: expected ActionKind, got str 'activate' (give ActionKind.ACTIVATE)",
        ),
        (
            lambda: SimpleAction("set_text"),
            "kind: expected ActionKind, got str 'set_text' (a set_text action is a"
            " SetText(value))",
        ),
        (
            lambda: Scroll("down"),
            "direction: expected ScrollDirection, got str 'down' (give ScrollDirection.DOWN)",
        ),
        (
            lambda: PathStep(role="button"),
            "role: expected Role, got str 'button' (give Role.BUTTON)",
        ),
        (lambda: SimpleAction("bogus"), "kind: expected ActionKind, got str 'bogus'"),
    ],
)
def test_a_member_given_as_its_string_is_named(build: Callable[[], object], said: str) -> None:
    with pytest.raises(TypeError) as raised:
        build()
    assert str(raised.value) == said


@pytest.mark.parametrize(
    ("kind", "made_by"),
    [
        (ActionKind.SET_TEXT, "SetText(value)"),
        (ActionKind.SCROLL, "Scroll(direction)"),
        (ActionKind.SET_NUMERIC_VALUE, "SetNumericValue(value)"),
        (ActionKind.SET_SELECTION, "SetSelection(start, end)"),
    ],
)
def test_a_simple_action_of_a_kind_with_a_payload_names_its_class(
    kind: ActionKind, made_by: str
) -> None:
    """Before, it said only that the kind "has a class of its own", not which."""
    with pytest.raises(ValueError, match="carries a payload") as raised:
        SimpleAction(kind)
    assert str(raised.value) == (
        f"kind: {kind.value} carries a payload, so it has a class of its own: {made_by}"
    )
