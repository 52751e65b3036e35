"""A key reconcile cannot look up is refused where the view is built, naming the key."""

from __future__ import annotations

from typing import Any

import pytest

from semledger.runtime import (
    App,
    ApplicationError,
    AppRuntime,
    View,
    column,
    lazy,
    text,
)

UNHASHABLE = "expected a hashable value (a str, an int, a tuple or frozen attrs value of them)"


def test_an_unhashable_key_is_refused_by_the_builder_naming_it() -> None:
    """Before, `text(key=[1])` was taken, and its parent failed with a bare
    "unhashable type: 'list'" that named neither the key nor the node."""
    with pytest.raises(TypeError) as raised:
        text("a", key=["notes.txt"])
    assert str(raised.value) == f"key: {UNHASHABLE}, got list ['notes.txt']"


def test_an_unhashable_key_of_a_view_made_without_a_builder_names_its_child() -> None:
    with pytest.raises(TypeError) as raised:
        column(text("a"), View(key={"id": 1}))
    assert str(raised.value) == f"child 1: key: {UNHASHABLE}, got dict {{'id': 1}}"


def test_an_unhashable_key_in_a_lazy_build_is_the_application_s_error() -> None:
    def view(_model: Any) -> View[Any]:
        return column(lazy(0, lambda: [View(key=[0]), text("b")]))

    with pytest.raises(ApplicationError) as raised:
        AppRuntime(App(init=lambda: 0, update=lambda model, _msg: model, view=view))
    assert str(raised.value.__cause__) == f"child 0: key: {UNHASHABLE}, got list [0]"
