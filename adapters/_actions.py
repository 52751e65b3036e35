"""The action set ``act`` takes (seed §4): the IR's actions minus ``api``, ``custom`` and
``expect``, which the executor handles itself."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final, Literal, get_args

SurfaceAction = Literal[
    "navigate", "back", "forward", "refresh",
    "click", "doubleClick", "rightClick", "hover", "hoverAndClick", "pressAndHold",
    "release", "dragTo",
    "type", "clear", "press", "keyDown", "keyUp", "submit", "upload",
    "selectOption", "deselectOption", "deselectAll", "setChecked",
    "scrollIntoView", "scrollToTop", "scrollToBottom",
    "sleep", "waitFor",
    "switchWindow", "closeOtherWindows", "switchFrame", "resizeWindow",
    "quit",
    "dialog",
    "read", "evaluate", "screenshot",
    "invoke",
]  # fmt: skip

SURFACE_ACTIONS: Final[tuple[str, ...]] = get_args(SurfaceAction)

ACTION_GROUPS: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType({
    "Navigation": ("navigate", "back", "forward", "refresh"),
    "Pointer": (
        "click", "doubleClick", "rightClick", "hover", "hoverAndClick", "pressAndHold",
        "release", "dragTo",
    ),
    "Keyboard and input": ("type", "clear", "press", "keyDown", "keyUp", "submit", "upload"),
    "Selection": ("selectOption", "deselectOption", "deselectAll", "setChecked"),
    "Scrolling": ("scrollIntoView", "scrollToTop", "scrollToBottom"),
    "Waiting": ("sleep", "waitFor"),
    "Windows and frames": ("switchWindow", "closeOtherWindows", "switchFrame", "resizeWindow"),
    "Application lifecycle": ("quit",),
    "Dialogs": ("dialog",),
    "Reading and diagnostics": ("read", "evaluate", "screenshot"),
    "Story composition": ("invoke",),
})  # fmt: skip

EXECUTOR_ACTIONS: Final[tuple[str, ...]] = ("api", "custom", "expect")
"""Plan actions the executor performs itself; they never reach ``act``."""

TWO_ELEMENT_ACTIONS: Final[frozenset[str]] = frozenset({"dragTo"})
"""Actions that take ``ref2``."""
