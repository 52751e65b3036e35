"""Hypothesis strategies for the log's events (for tests; needs hypothesis installed).

Values are exactly what msgpack gives back (lists, not tuples; no NaN, which is not equal
to itself), so encode -> decode can be checked for equality.
"""

from __future__ import annotations

import types
import typing
from typing import Any

import attrs
from hypothesis import strategies as st

from ._events import EVENT_CLASSES, Event

__all__ = ["events", "events_of", "msgpack_values", "wire_dicts"]

_u64 = st.integers(min_value=0, max_value=2**64 - 1)


def _scalars(*, infinity: bool) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**63), max_value=2**64 - 1),
        st.floats(allow_nan=False, allow_infinity=infinity),
        st.text(max_size=12),
    )


def _nested(leaves: st.SearchStrategy[Any], max_leaves: int) -> st.SearchStrategy[Any]:
    return st.recursive(
        leaves,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4),
            st.dictionaries(st.text(max_size=8), inner, max_size=4),
        ),
        max_leaves=max_leaves,
    )


def msgpack_values(*, binary: bool = True, max_leaves: int = 12) -> st.SearchStrategy[Any]:
    """Nested msgpack data: scalars (and bytes), lists, string-keyed maps."""
    scalars = _scalars(infinity=True)
    leaves = st.one_of(scalars, st.binary(max_size=12)) if binary else scalars
    return _nested(leaves, max_leaves)


def wire_dicts(*, max_leaves: int = 12) -> st.SearchStrategy[dict[str, Any]]:
    """JSON-shaped objects, like the wire payloads of SPEC §2 (so no infinities either)."""
    values = _nested(_scalars(infinity=False), max_leaves)
    return st.dictionaries(st.text(max_size=8), values, max_size=min(5, max_leaves))


def _for_type(tp: Any, leaves: int) -> st.SearchStrategy[Any]:
    if tp is int:
        return _u64
    if tp is str:
        return st.text(max_size=24)
    if tp is bool:
        return st.booleans()
    if tp is float:
        return st.floats(allow_nan=False)
    if tp is Any:
        return msgpack_values(max_leaves=leaves)
    if tp == dict[str, Any]:
        return wire_dicts(max_leaves=leaves)
    if tp == tuple[int, ...]:
        return st.lists(_u64, max_size=leaves).map(tuple)
    if isinstance(tp, types.UnionType) or typing.get_origin(tp) is typing.Union:
        return st.one_of(*(_for_type(arg, leaves) for arg in typing.get_args(tp)))
    if tp is type(None):
        return st.none()
    if typing.get_origin(tp) is typing.Literal:
        return st.sampled_from(typing.get_args(tp))
    raise TypeError(f"no strategy for field type {tp!r}")


def events_of(cls: type[Event], *, max_leaves: int = 12) -> st.SearchStrategy[Event]:
    """Instances of one event class, every field drawn from its annotated type.

    ``max_leaves`` bounds each payload; a small one keeps stateful tests fast.
    """
    hints = typing.get_type_hints(cls)
    fields = {field.name: _for_type(hints[field.name], max_leaves) for field in attrs.fields(cls)}
    return st.builds(cls, **fields)


def events(*, max_leaves: int = 12) -> st.SearchStrategy[Event]:
    """Instances of any event class."""
    return st.one_of(*(events_of(cls, max_leaves=max_leaves) for cls in EVENT_CLASSES))
