"""The package installs as the single import package `semledger`, whatever its folders."""

from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SUBPACKAGE_FOLDERS = ("runtime", "eventlog", "actors", "hosts", "adapters", "replay")


def _config() -> dict[str, object]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def _package_folders() -> dict[str, Path]:
    """Every folder holding an __init__.py, by the import name the layout gives it."""
    found: dict[str, Path] = {}
    roots = {"semledger": ROOT / "semledger"} | {
        f"semledger.{name}": ROOT / name for name in SUBPACKAGE_FOLDERS
    }
    for prefix, folder in roots.items():
        for init in folder.rglob("__init__.py"):
            relative = init.parent.relative_to(folder)
            if "__pycache__" in relative.parts:
                continue
            found[".".join((prefix, *relative.parts))] = init.parent
    return found


def test_every_package_folder_is_listed_and_mapped() -> None:
    config = _config()
    listed = set(config["packages"])  # type: ignore[call-overload]
    assert set(_package_folders()) == listed
    mapping = config["package-dir"]
    for name in SUBPACKAGE_FOLDERS:
        assert mapping[f"semledger.{name}"] == name  # type: ignore[index]


@pytest.fixture
def wheel(fresh_checkout: Path, tmp_path: Path) -> Path:
    """The wheel built from a copy of the checkout, so no build/ lands in the work tree."""
    out = tmp_path / "wheel"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(out),
            str(fresh_checkout),
        ],
        check=True,
    )
    (built,) = out.glob("semledger-*.whl")
    return built


def test_every_package_lands_in_the_wheel(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    for package in _package_folders():
        assert f"{package.replace('.', '/')}/__init__.py" in names, package


def test_nothing_but_semledger_lands_in_site_packages(wheel: Path) -> None:
    tops = {name.split("/", 1)[0] for name in zipfile.ZipFile(wheel).namelist()}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"semledger"}


ALLOWED_BELOW = {
    "runtime": set(),
    "eventlog": {"runtime"},
    "actors": {"runtime", "eventlog"},
    "replay": {"runtime", "eventlog", "actors"},
    "adapters": {"runtime", "eventlog", "actors"},
    "hosts": {"runtime", "eventlog", "actors", "replay", "adapters"},
}
"""SPEC §1: which folders each folder may import (lazy imports inside functions included)."""


def _imports(path: Path) -> set[str]:
    import ast

    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def _imports_of(folder: str) -> dict[str, set[str]]:
    return {
        str(path.relative_to(ROOT)): _imports(path)
        for path in sorted((ROOT / folder).rglob("*.py"))
        if "__pycache__" not in path.parts
    }


@pytest.mark.parametrize("folder", SUBPACKAGE_FOLDERS)
def test_imports_run_one_way(folder: str) -> None:
    wrong = {
        module: sorted(
            name
            for name in names
            if name == "semledger"
            or (
                name.startswith("semledger.")
                and name.split(".")[1] not in ALLOWED_BELOW[folder] | {folder}
            )
        )
        for module, names in _imports_of(folder).items()
    }
    assert {module: names for module, names in wrong.items() if names} == {}


def test_the_runtime_is_pure_and_the_router_needs_no_event_loop() -> None:
    impure = {"time", "datetime", "random", "os", "io", "socket", "trio", "asyncio", "threading"}
    for module, names in _imports_of("runtime").items():
        if module == "runtime/_effects.py":  # EffectRunner: the one documented Trio part
            continue
        assert not {name.split(".")[0] for name in names} & impure, module
    for module in ("_router.py", "_tools.py", "_lifecycle.py", "_dispatch.py"):
        names = _imports(ROOT / "hosts" / module)
        assert not {n for n in names if n.split(".")[0] in {"trio", "asyncio", "anyio"}}, module
        assert not {n for n in names if n.endswith(("._stdio", "._http"))}, module
