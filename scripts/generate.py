"""Regenerate what is generated from ``semledger.adapters``: the wire schemas under
``schema/`` and the tables of ``docs/surface.md``.

    .venv/bin/python scripts/generate.py           # write
    .venv/bin/python scripts/generate.py --check   # exit 1 and list what drifted
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from semledger.adapters import schema_files
from semledger.adapters._docs import apply_generated

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_DIR = ROOT / "schema"
DOC = ROOT / "docs" / "surface.md"


def expected_files() -> dict[Path, str]:
    files = {SCHEMA_DIR / name: text for name, text in schema_files().items()}
    files[DOC] = apply_generated(DOC.read_text(encoding="utf-8"))
    return files


def stale_schemas(expected: dict[Path, str]) -> list[Path]:
    return [p for p in sorted(SCHEMA_DIR.glob("surface.*.schema.json")) if p not in expected]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="report drift, write nothing")
    options = parser.parse_args(argv)
    expected = expected_files()
    drifted = [
        path
        for path, text in expected.items()
        if not path.exists() or path.read_text(encoding="utf-8") != text
    ]
    stale = stale_schemas(expected)
    if options.check:
        for path in drifted:
            print(f"drifted: {path.relative_to(ROOT)}", file=sys.stderr)
        for path in stale:
            print(f"stale: {path.relative_to(ROOT)}", file=sys.stderr)
        return 1 if drifted or stale else 0
    SCHEMA_DIR.mkdir(exist_ok=True)
    for path in drifted:
        path.write_text(expected[path], encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    for path in stale:
        path.unlink()
        print(f"removed {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
