"""A text field's value is its text: None is refused where the field is built."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from semledger.runtime import text_field


@attrs.frozen
class Typed:
    text: str


def test_a_text_field_without_text_is_refused_where_it_is_built() -> None:
    """Before, `text_field("Name", None, on_set_text=Typed)` was served, and the first
    `set_selection` an agent sent crashed the session ("object of type 'NoneType' has no
    len()", raised in the runtime's own handler)."""
    value: Any = None
    with pytest.raises(TypeError) as raised:
        text_field("Name", value, on_set_text=Typed)
    assert str(raised.value) == (
        "text_field.value: expected a str (its text: '' when it is empty), got None"
    )


def test_an_empty_text_field_is_built() -> None:
    assert text_field("Name", "", on_set_text=Typed).value == ""
