"""Declarations: per-channel cache proofs that let reconcile skip unchanged subtrees."""

from __future__ import annotations

from collections.abc import Hashable
from enum import Enum
from typing import Final

import attrs


class _Marker(Enum):
    CONSTANT = "constant"
    UNCACHEABLE = "uncacheable"


CONSTANT: Final = _Marker.CONSTANT
"""The channel's output never changes for this node's subtree."""
UNCACHEABLE: Final = _Marker.UNCACHEABLE
"""The channel is recomputed on every build (the safe default)."""


@attrs.frozen
class Key:
    """An exact canonical key: the channel's output for the subtree is a function of it alone."""

    value: Hashable


ChannelKey = _Marker | Key


def _same(old: ChannelKey, new: ChannelKey) -> bool:
    return old is not UNCACHEABLE and new is not UNCACHEABLE and old == new


@attrs.frozen
class Declaration:
    """What a view node promises about its subtree on each of the four channels.

    Each channel is `CONSTANT`, an exact `Key`, or `UNCACHEABLE`. A key covers the node's whole
    subtree for that channel, so an equal key on all four lets reconcile skip the subtree
    without building it. A layout change invalidates the other three channels.
    """

    layout: ChannelKey = UNCACHEABLE
    paint: ChannelKey = UNCACHEABLE
    semantics: ChannelKey = UNCACHEABLE
    platform: ChannelKey = UNCACHEABLE

    @classmethod
    def constant(cls) -> Declaration:
        return cls(CONSTANT, CONSTANT, CONSTANT, CONSTANT)

    @classmethod
    def keyed(cls, key: Hashable) -> Declaration:
        k = Key(key)
        return cls(k, k, k, k)

    def _one_key(self) -> ChannelKey | None:
        """The key of every channel, if they have one; reconcile compares a wide list's
        every child each time the app's view is built."""
        key = self.layout
        return key if key is self.paint is self.semantics is self.platform else None

    def dirty_channels(self, previous: Declaration) -> DirtyChannels:
        key, old = self._one_key(), previous._one_key()
        if key is not None and old is not None:  # (`keyed`, `constant`): one comparison
            return NO_DIRTY if _same(old, key) else ALL_DIRTY
        layout = not _same(previous.layout, self.layout)
        return DirtyChannels(
            layout=layout,
            paint=layout or not _same(previous.paint, self.paint),
            semantics=layout or not _same(previous.semantics, self.semantics),
            platform=layout or not _same(previous.platform, self.platform),
        )


@attrs.frozen
class DirtyChannels:
    layout: bool
    paint: bool
    semantics: bool
    platform: bool

    @property
    def any(self) -> bool:
        return self.layout or self.paint or self.semantics or self.platform


ALL_DIRTY: Final = DirtyChannels(True, True, True, True)
NO_DIRTY: Final = DirtyChannels(False, False, False, False)
