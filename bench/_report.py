"""Shared plumbing for the bench scripts: the machine, and the section each writes in docs/."""

from __future__ import annotations

import datetime
import json
import os
import platform
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "benchmarks.md"
HEADER = """# Benchmarks

Written by the scripts in `bench/`; each owns one section and rewrites only that section.
Figures are ratios against a peer measured in the same run wherever the issue names one,
because the machines are shared and noisy. Goals come from the issues.
"""


def machine() -> str:
    cpus = os.cpu_count()
    return (
        f"{platform.machine()}, {cpus} cores, Python {sys.version.split()[0]}, {platform.system()}"
    )


def emit(
    name: str,
    figures: Mapping[str, float | int | None],
    goals: Mapping[str, str],
    notes: Sequence[str] = (),
    *,
    as_json: bool,
) -> None:
    """Print the figures (one JSON object with --json) and rewrite this script's section."""
    if as_json:
        print(json.dumps(dict(figures), sort_keys=False))
    else:
        for key, value in figures.items():
            shown = "null" if value is None else value
            print(f"{key:48} {shown:>14}  {goals.get(key, 'reported')}")
    today = datetime.date.today().isoformat()
    lines = [
        f"## {name}",
        "",
        f"`python bench/{name}.py --json`, {today}, {machine()}.",
        "",
        "| figure | measured | goal |",
        "|---|---|---|",
        *(f"| `{k}` | {_fmt(v)} | {goals.get(k, 'reported')} |" for k, v in figures.items()),
    ]
    if notes:
        lines += ["", *notes]
    section = "\n".join(lines) + "\n"
    text = PAGE.read_text() if PAGE.exists() else HEADER
    pattern = re.compile(rf"^## {re.escape(name)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _m: section + "\n", text)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    PAGE.parent.mkdir(exist_ok=True)
    PAGE.write_text(text.rstrip("\n") + "\n")


def _fmt(value: float | int | None) -> str:
    """A figure for the table; None (a figure that could not be measured) is `null`."""
    if value is None:
        return "null"
    if isinstance(value, int):
        return str(value)
    return f"{value:.4g}"
