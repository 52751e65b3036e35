"""Control paths: the desktop kind of locator, one grammar for every adapter that answers it.

A path names an element by its ancestors, from the surface's top-level elements down::

    Window[Main]/Pane[2]/Button["2"]

Each step is a role, then in brackets a name, or ``N`` (1-based) among the siblings of that
role, or nothing (every such sibling). Roles match without regard to case. A name is
quoted when it is all digits (``"2"`` is a name, ``2`` a position), empty or padded, or
holds ``[``, ``]``, ``"`` or ``\\``; within quotes ``\\`` escapes ``"`` and ``\\``.
`format_control_path` writes what `parse_control_path` reads back.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

import attrs

from ._calls import PathStep
from ._errors import DataError

__all__ = ["ControlStep", "follow_control_path", "format_control_path", "parse_control_path"]

T = TypeVar("T")


@attrs.frozen
class ControlStep:
    """One step of a parsed control path (`index` is 1-based)."""

    role: str
    name: str | None = None
    index: int | None = None

    def matches_role(self, *roles: str) -> bool:
        """Whether any of the element's role names (ARIA, or a platform's) is this step's."""
        wanted = self.role.strip().lower()
        return any(wanted == role.lower() for role in roles)


_STEP = re.compile(r'^\s*(?P<role>[^\[\]/]+?)\s*(?:\[(?P<arg>"(?:[^"\\]|\\.)*"|[^\]]*)\])?\s*$')
_BARE = re.compile(r'[^\[\]"\\]*')
"""What a name may hold to be written without quotes."""


def _split(path: str) -> list[str]:
    """The steps of `path`: split at each ``/`` outside brackets and quotes."""
    parts: list[str] = []
    current: list[str] = []
    depth, quoted, escaped = 0, False, False
    for char in path:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"' and depth:
            quoted = not quoted
        elif char == "[" and not quoted:
            depth += 1
        elif char == "]" and not quoted:
            depth = max(0, depth - 1)
        elif char == "/" and not depth and not quoted:
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return parts


def parse_control_path(path: str) -> list[ControlStep]:
    """The steps of `path`; `DataError` naming ``controlPath[i]`` for a step that does not
    parse."""
    steps = []
    for index, part in enumerate(_split(path)):
        match = _STEP.match(part)
        if match is None:
            raise DataError(f"cannot parse step {part!r}", path=f"controlPath[{index}]")
        role, arg = match.group("role"), match.group("arg")
        if not arg:
            steps.append(ControlStep(role))
        elif arg.startswith('"'):
            steps.append(ControlStep(role, name=re.sub(r"\\(.)", r"\1", arg[1:-1])))
        elif arg.isdigit():
            steps.append(ControlStep(role, index=int(arg)))
        else:
            steps.append(ControlStep(role, name=arg))
    return steps


def _name(name: str) -> str:
    if name and not name.isdigit() and _BARE.fullmatch(name) and name == name.strip():
        return name
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def format_control_path(steps: Iterable[PathStep | ControlStep]) -> str:
    """The control path of `steps`: an element's description (`ElementDescription.path`,
    each step by its name, or by its position among the siblings of its role without one),
    or the steps `parse_control_path` read, written back as they were read.

    Positions in the text are 1-based: a `PathStep`'s ``index`` counts from 0, a
    `ControlStep`'s from 1, so each is written by its own count."""
    return "/".join(_step(step) for step in steps)


def _step(step: PathStep | ControlStep) -> str:
    if isinstance(step, PathStep):
        return f"{step.role}[{_name(step.name)}]" if step.name else f"{step.role}[{step.index + 1}]"
    if step.name is not None:
        return f"{step.role}[{_name(step.name)}]"
    return step.role if step.index is None else f"{step.role}[{step.index}]"


def follow_control_path(
    steps: Sequence[ControlStep],
    top: Sequence[T],
    children: Callable[[T], Sequence[T]],
    roles: Callable[[T], Iterable[str]],
    name: Callable[[T], str | None],
) -> list[T]:
    """The elements `steps` lead to: the first step picks among the `top` elements, each
    later one among the children of every element the step before picked."""
    level: list[T] = []
    for depth, step in enumerate(steps):
        groups = [top] if depth == 0 else [children(element) for element in level]
        level = []
        for siblings in groups:
            same = [element for element in siblings if step.matches_role(*roles(element))]
            if step.index is not None:
                level += same[step.index - 1 : step.index] if step.index >= 1 else []
            elif step.name is not None:
                level += [element for element in same if name(element) == step.name]
            else:
                level += same
        if not level:
            break
    return level
