"""Fixtures shared across test modules."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from semledger.adapters._web import WebBrowser

ROOT = Path(__file__).resolve().parent.parent


def pytest_configure(config: pytest.Config) -> None:
    """The commands the tests run print as they do piped, whatever terminal size the run
    inherited (a shell's ``COLUMNS``, pytest-xdist's workers): a test that wants a width
    gives ``COLUMNS`` itself."""
    for name in ("COLUMNS", "LINES"):
        os.environ.pop(name, None)


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


@pytest.fixture(scope="module")
def browser() -> Iterator[WebBrowser]:
    """One Chromium for a test module's web surfaces (each opens a context of its own)."""
    from semledger.adapters._web import WebBrowser, default_executable

    if not os.path.exists(default_executable()):
        pytest.fail(f"no Chromium at {default_executable()}: scripts/test.sh installs it")
    shared = WebBrowser()
    shared.start()
    yield shared
    shared.stop()
