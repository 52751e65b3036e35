"""A view field given the wire's string for a member says which member to give."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from semledger.runtime import Role, State, column, node, text


@pytest.mark.parametrize(
    ("build", "said"),
    [
        (
            lambda: node(Role.STATUS, live="polite"),
            "live: expected a Live, got str 'polite' (give Live.POLITE)",
        ),
        (
            lambda: column(text("a"), composition="boundary"),
            "composition: expected a Composition, got str 'boundary' (give"
            " Composition.BOUNDARY)",
        ),
        (
            lambda: node(Role.CHECKBOX, label="a", state=State(checked="mixed")),
            "state.checked: expected a Checked or None, got str 'mixed' (give Checked.MIXED)",
        ),
        (
            lambda: node("list_item"),
            "role: expected a Role, got str 'list_item' (give Role.LIST_ITEM)",
        ),
    ],
)
def test_a_member_given_as_its_string_is_named(build: Callable[[], Any], said: str) -> None:
    """Before, `live` and `composition` said only what they expected, not which member the
    string was, though `role` did (in a form of its own)."""
    with pytest.raises(TypeError) as raised:
        build()
    assert str(raised.value) == said


@pytest.mark.parametrize(
    ("build", "said"),
    [
        (lambda: node(Role.STATUS, live="loud"), "live: expected a Live, got str 'loud'"),
        (lambda: node(["button"]), "role: expected a Role, got list ['button']"),
    ],
)
def test_a_value_no_member_has_is_named_alone(build: Callable[[], Any], said: str) -> None:
    with pytest.raises(TypeError) as raised:
        build()
    assert str(raised.value) == said
