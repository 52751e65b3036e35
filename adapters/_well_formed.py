"""Page text made valid Unicode before it goes further than the web adapter.

A page can hold a lone UTF-16 surrogate (``'😀'.slice(0, 1)``, a title cut mid-emoji);
Playwright hands it to Python as is, and no UTF-8 log, digest or reply can hold it.
Chromium draws such a surrogate as U+FFFD, so that is what the agent reads too.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final, TypeVar, cast

import attrs

from ._errors import SurfaceError
from ._snapshot import Snapshot, SnapshotNode, build_snapshot

T = TypeVar("T")

_SURROGATE: Final = re.compile(r"[\ud800-\udfff]")


def well_formed_text(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD (a pair split in two code points
    is joined into the character it stands for)."""
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def well_formed(value: T) -> T:
    """`value` with `well_formed_text` applied to every string it holds, in strings, lists,
    tuples, mappings and attrs instances; `value` itself when it holds no lone surrogate.
    A Snapshot is built again from its nodes, so its text and hash match them."""
    return cast(T, _clean(value))


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return well_formed_text(value)
    if isinstance(value, Snapshot):
        if not any(map(_node_has_surrogate, value.nodes)):  # the usual case: no copy at all
            return value
        return build_snapshot(value.ref, [_clean(node) for node in value.nodes])
    if isinstance(value, list | tuple):
        items = [_clean(item) for item in value]
        if _unchanged(items, value):
            return value
        return items if isinstance(value, list) else tuple(items)
    if isinstance(value, Mapping):
        keys, items = list(value), list(value.values())
        new_keys, new_items = [_clean(key) for key in keys], [_clean(item) for item in items]
        if _unchanged(new_keys, keys) and _unchanged(new_items, items):
            return value
        return dict(zip(new_keys, new_items, strict=True))
    if attrs.has(type(value)):
        changes = {}
        for field in attrs.fields(type(value)):
            if field.init:
                old = getattr(value, field.name)
                new = _clean(old)
                if new is not old:
                    changes[field.alias] = new
        return attrs.evolve(value, **changes) if changes else value
    return value


def _unchanged(new: Sequence[Any], old: Sequence[Any]) -> bool:
    return all(a is b for a, b in zip(new, old, strict=True))


def _node_has_surrogate(node: SnapshotNode) -> bool:
    texts = (node.name or "", node.value or "", node.description or "", *node.native.values())
    return _SURROGATE.search("".join(texts)) is not None


def well_formed_error(exc: SurfaceError) -> SurfaceError:
    """`exc` with its message, arguments and details made well formed, in place."""
    exc.args = well_formed(exc.args)
    for name, old in list(vars(exc).items()):
        setattr(exc, name, well_formed(old))
    return exc
