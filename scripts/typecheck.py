"""Run ``mypy --strict`` over the package as it installs.

The package's subpackages live in top-level folders (setuptools ``package-dir``), a layout
mypy cannot map from paths. This stages ``semledger/`` with each folder linked in under its
import name and checks that tree, so module names and errors match the installed package.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUBPACKAGES = ("runtime", "eventlog", "actors", "hosts", "adapters", "replay")


def stage(into: Path) -> Path:
    package = into / "semledger"
    package.mkdir()
    for entry in (ROOT / "semledger").iterdir():
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    for name in SUBPACKAGES:
        (package / name).symlink_to(ROOT / name)
    return into


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        staged = stage(Path(tmp))
        command = [
            sys.executable, "-m", "mypy",
            "--config-file", str(ROOT / "pyproject.toml"),
            "--cache-dir", str(ROOT / ".mypy_cache"),
            "-p", "semledger",
        ]
        return subprocess.run(command, cwd=staged, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
