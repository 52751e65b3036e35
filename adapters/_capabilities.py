"""Capabilities and the plan check that refuses a run before it starts (seed §1, LLD §2.4)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Final

import attrs

from ._actions import EXECUTOR_ACTIONS, SURFACE_ACTIONS
from ._errors import DataError


@attrs.frozen
class Capabilities:
    """Which optional features an adapter has; every flag false unless it really has it."""

    dialogs: bool = False
    frames: bool = False
    windows: bool = False
    upload: bool = False
    drag: bool = False
    trace: bool = False
    pick: bool = False
    observe: bool = False
    webmcp: bool = False
    screenshot: bool = False
    restore: bool = False


CAPABILITY_FLAGS: Final[tuple[str, ...]] = tuple(f.name for f in attrs.fields(Capabilities))

CAPABILITY_MEANINGS: Final[Mapping[str, str]] = MappingProxyType({
    "dialogs": "Native dialogs can be observed and answered.",
    "frames": "The session has addressable frames.",
    "windows": "The session can have more than one window or page.",
    "upload": "Files can be attached to a file control.",
    "drag": "One element can be dragged onto another.",
    "trace": "trace() is implemented.",
    "pick": "The adapter can overlay the application and take a person's click as an element.",
    "observe": "The adapter can report what a person does in the session as events on elements.",
    "webmcp": "The adapter can read a page's declared tools and call one.",
    "screenshot": "screenshot() produces an image.",
    "restore": "restore() can put the session back into a stored state.",
})

CAPABILITY_GATES: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType({
    "dialogs": ("dialog",),
    "frames": ("switchFrame",),
    "windows": ("switchWindow", "closeOtherWindows", "resizeWindow"),
    "upload": ("upload",),
    "drag": ("dragTo",),
    "trace": (),
    "pick": (),
    "observe": (),
    "webmcp": (),
    "screenshot": ("screenshot",),
    "restore": (),
})
"""Flag -> the actions it gates. An action gated by no flag every adapter must support."""

ACTION_GATES: Final[Mapping[str, str]] = MappingProxyType(
    {action: flag for flag, actions in CAPABILITY_GATES.items() for action in actions}
)
"""Action -> the flag it needs."""


@attrs.frozen
class MissingCapability:
    """One plan step that needs a flag the adapter does not have."""

    index: int
    action: str
    flag: str

    def __str__(self) -> str:
        return f"step {self.index} ({self.action}) needs capability {self.flag!r}"


class CapabilityError(Exception):
    """Raised by ``check_plan`` before anything runs, when a plan needs a capability the
    adapter lacks; ``missing`` names each step, its action and the flag.

    Not a SurfaceError: no step failed, the run never started."""

    def __init__(self, missing: Iterable[MissingCapability]) -> None:
        self.missing = tuple(missing)
        super().__init__("plan refused: " + "; ".join(str(m) for m in self.missing))


def missing_capabilities(
    capabilities: Capabilities, actions: Iterable[str]
) -> list[MissingCapability]:
    """Every step of ``actions`` whose gating flag is false, in plan order.

    Raises DataError (path ``plan[i]``) for a name that is neither a surface action nor one
    the executor handles itself, so a typo is not mistaken for an ungated action."""
    missing: list[MissingCapability] = []
    for index, action in enumerate(actions):
        if action not in SURFACE_ACTIONS and action not in EXECUTOR_ACTIONS:
            raise DataError(f"unknown action {action!r}", path=f"plan[{index}]")
        flag = ACTION_GATES.get(action)
        if flag is not None and not getattr(capabilities, flag):
            missing.append(MissingCapability(index, action, flag))
    return missing


def check_plan(capabilities: Capabilities, actions: Iterable[str]) -> None:
    """Refuse a plan before it starts: raise CapabilityError when any step needs a
    capability ``capabilities`` does not have."""
    missing = missing_capabilities(capabilities, actions)
    if missing:
        raise CapabilityError(missing)
