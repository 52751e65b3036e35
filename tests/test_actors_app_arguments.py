"""`load_app` given something that is no reference."""

from __future__ import annotations

import pytest

from semledger.actors import load_app
from semledger.examples import counter


@pytest.mark.parametrize(
    ("reference", "says"),
    [
        (5, "got int 5"),
        (None, "got NoneType None"),
        (counter.app, "(the App itself: it needs no loading)"),
    ],
)
def test_load_app_given_no_str_names_its_argument_and_the_form_it_takes(
    reference: object, says: str
) -> None:
    """load_app(5) failed with AttributeError: 'int' object has no attribute 'partition'."""
    with pytest.raises(TypeError, match=r'^reference: expected a "module:attribute" str') as caught:
        load_app(reference)  # type: ignore[arg-type]
    assert says in str(caught.value)
