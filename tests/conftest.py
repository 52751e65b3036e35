"""Fixtures shared across test modules."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def fresh_checkout(tmp_path: Path) -> Path:
    """A copy of the files git tracks, as a fresh clone would have them."""
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    checkout = tmp_path / "semledger"
    for name in filter(None, tracked.split("\0")):
        source = ROOT / name
        if source.is_file():
            target = checkout / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return checkout
