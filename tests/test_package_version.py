"""The top-level package: its version, and what it exports."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version

import pytest

import semledger


def test_the_package_version_is_the_installed_one_as_semledger_version_says() -> None:
    """The package had no __version__, while `semledger --version` printed one."""
    said = subprocess.run(
        [sys.executable, "-m", "semledger", "--version"], capture_output=True, text=True, check=True
    ).stdout
    assert semledger.__version__ == version("semledger")
    assert said == f"semledger {semledger.__version__}\n"
    assert semledger.__all__ == ["__version__"]
    namespace: dict[str, object] = {}
    exec("from semledger import *", namespace)
    assert namespace["__version__"] == semledger.__version__


def test_an_attribute_the_package_lacks_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="module 'semledger' has no attribute 'nope'"):
        _ = semledger.nope
    assert not hasattr(semledger, "nope")
