"""The generated parts of ``docs/surface.md``: tables rendered from the modules that own
the data, placed between ``<!-- BEGIN GENERATED name -->`` and ``<!-- END GENERATED name -->``
markers by ``scripts/generate.py``."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ._candidates import CANDIDATE_CLASSES, CANDIDATE_GROUPS
from ._capabilities import CAPABILITY_FLAGS, CAPABILITY_GATES, CAPABILITY_MEANINGS
from ._roles import ROLE_TABLES
from ._schemas import WIRE_SHAPES, schema_file_name, wire_schema


def _table(headings: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> list[str]:
    lines = ["| " + " | ".join(headings) + " |", "|" + "---|" * len(headings)]
    lines.extend("| " + " | ".join(row) + " |" for row in rows)
    return lines


def _roles() -> str:
    lines: list[str] = []
    for table in ROLE_TABLES:
        if lines:
            lines.append("")
        lines += [f"### {table.title}", ""]
        rows = [(f"`{native}`", f"`{aria}`") for native, aria in table.roles.items()]
        lines += _table((table.native_heading, "Surface role"), rows)
    return "\n".join(lines)


def _capabilities() -> str:
    rows = [
        (
            f"`{flag}`",
            CAPABILITY_MEANINGS[flag],
            ", ".join(f"`{a}`" for a in CAPABILITY_GATES[flag]) or "—",
        )
        for flag in CAPABILITY_FLAGS
    ]
    return "\n".join(_table(("Flag", "Meaning", "Actions it gates"), rows))


def _candidates() -> str:
    rows = []
    for group, kinds in CANDIDATE_GROUPS.items():
        for kind in kinds:
            cls = CANDIDATE_CLASSES[kind]
            summary = " ".join((cls.__doc__ or "").split()).replace("``", "`")
            rows.append((group, f"`{kind}`", f"`{cls.__name__}`", summary))
    return "\n".join(_table(("Group", "`by`", "Class", "Matches"), rows))


def _schemas() -> str:
    rows = [
        (f"`schema/{schema_file_name(shape)}`", f"`{wire_schema(shape)['title']}`")
        for shape in WIRE_SHAPES
    ]
    return "\n".join(_table(("File", "Shape"), rows))


def generated_blocks() -> dict[str, str]:
    """Marker name -> the Markdown that belongs between its markers."""
    return {
        "roles": _roles(),
        "capabilities": _capabilities(),
        "candidates": _candidates(),
        "schemas": _schemas(),
    }


def apply_generated(text: str) -> str:
    """``text`` with every generated block replaced by its current rendering.

    Raises ValueError when a block's markers are missing."""
    for name, body in generated_blocks().items():
        begin, end = f"<!-- BEGIN GENERATED {name} -->\n", f"<!-- END GENERATED {name} -->"
        match = re.search(re.escape(begin) + ".*?" + re.escape(end), text, re.DOTALL)
        if match is None:
            raise ValueError(f"docs/surface.md lacks the markers of the {name!r} block")
        text = f"{text[: match.start()]}{begin}{body}\n{end}{text[match.end() :]}"
    return text
