"""A builder refuses, where it is called, an argument that failed only later, deep in the
runtime, with a message that named neither the argument nor what it should have been."""

from __future__ import annotations

import pytest

from semledger.runtime import lazy, text

_GIVE = " (give one: lambda: [views], called only when cache_key changes)"


@pytest.mark.parametrize(
    ("build", "said"),
    [
        (None, "build: expected a function that returns the children, got NoneType None"),
        ("abc", "build: expected a function that returns the children, got str 'abc'"),
        ([1], "build: expected a function that returns the children, got list [1]"),
    ],
    ids=["none", "str", "list"],
)
def test_lazy_refuses_a_build_that_is_not_a_function(build: object, said: str) -> None:
    """Before, `lazy` took it, and mounting the view failed with "'NoneType' object is not
    iterable" (a str: "'str' object has no attribute 'key'"), outside the app's code."""
    with pytest.raises(TypeError) as raised:
        lazy("k", build)  # type: ignore[arg-type]
    assert str(raised.value) == said + _GIVE


def test_lazy_refuses_children_given_in_place_of_their_build() -> None:
    """Before, a list of views was mounted without a check of its own (an int among them
    failed as "'int' object has no attribute 'key'")."""
    with pytest.raises(TypeError, match=r"^build: expected a function .* got list \[View"):
        lazy("k", [text("a")])  # type: ignore[arg-type]
