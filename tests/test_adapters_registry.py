"""The adapter registry: double registration, unknown names, lazy built-ins."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from semledger.adapters import (
    AdapterLoadError,
    AdapterRegistry,
    AgentSurface,
    DataError,
    DuplicateAdapterError,
    UnknownAdapterError,
    create_surface,
    register_adapter,
    registered_adapters,
)

FAKE_MODULE = '''
from semledger.adapters import ActResult, Capabilities, CheckResult, ElementDescription
from semledger.adapters import SessionState, SnapshotNode, build_snapshot

CREATED = []


class Fake:
    kind = "desktop"

    def __init__(self, config):
        self.config = config

    def capabilities(self):
        return Capabilities()

    async def open(self, session): ...
    async def close(self): ...
    async def snapshot(self, *, root=None, max_nodes=None, interactive_only=False):
        return build_snapshot("r0", [SnapshotNode(ref="r0", role="generic", depth=0)])
    async def act(self, action, ref=None, args=None, ref2=None): return ActResult()
    async def read(self, kind, ref=None, name=None): return None
    async def check(self, predicate, subject, ref=None): return CheckResult(ok=True)
    async def locate(self, candidate): return []
    async def describe(self, ref): return ElementDescription(ref=ref, role="button")
    async def screenshot(self, path, mask=None): ...
    async def state(self): return SessionState()
    async def restore(self, state): ...


def create(config):
    CREATED.append(config)
    return Fake(config)


def not_a_surface(config):
    return object()
'''


@pytest.fixture
def fake_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    name = f"fake_adapter_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(FAKE_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


def test_registering_a_name_twice_is_an_error(fake_module: str) -> None:
    registry = AdapterRegistry()
    factory = __import__(fake_module).create
    registry.register("fake", factory)
    with pytest.raises(DuplicateAdapterError, match="'fake'"):
        registry.register("fake", factory)


def test_registering_a_built_in_name_is_an_error_too() -> None:
    registry = AdapterRegistry({"web": "nowhere:create"})
    with pytest.raises(DuplicateAdapterError):
        registry.register("web", lambda config: None)  # type: ignore[arg-type,return-value]


def test_create_builds_the_adapter_named_by_config_adapter(fake_module: str) -> None:
    registry = AdapterRegistry()
    registry.register("fake", __import__(fake_module).create)
    config = {"adapter": "fake", "app": "x:y"}
    surface = registry.create(config)
    assert isinstance(surface, AgentSurface)
    assert surface.kind == "desktop"
    assert surface.config == config  # type: ignore[attr-defined]


def test_an_unknown_name_lists_the_registered_ones() -> None:
    registry = AdapterRegistry({"web": "nowhere:create"})
    registry.register("beta", lambda config: None)  # type: ignore[arg-type,return-value]
    with pytest.raises(UnknownAdapterError) as info:
        registry.create({"adapter": "alpha"})
    assert "'alpha'" in str(info.value)
    assert "beta, web" in str(info.value)
    assert isinstance(info.value, LookupError)


@pytest.mark.parametrize(
    ("config", "path"),
    [({}, "config.adapter"), ({"adapter": 3}, "config.adapter"), ([], "config")],
)
def test_a_config_without_an_adapter_name_is_a_data_error(config: Any, path: str) -> None:
    with pytest.raises(DataError) as info:
        AdapterRegistry().create(config)
    assert info.value.path == path


def test_built_ins_are_imported_only_when_first_created(fake_module: str) -> None:
    registry = AdapterRegistry({"lazy": f"{fake_module}:create"})
    assert fake_module not in sys.modules
    assert registry.names() == ("lazy",)
    assert fake_module not in sys.modules
    surface = registry.create({"adapter": "lazy"})
    assert fake_module in sys.modules
    assert isinstance(surface, AgentSurface)
    assert len(sys.modules[fake_module].CREATED) == 1


def test_a_built_in_that_cannot_be_loaded_says_which() -> None:
    registry = AdapterRegistry({"broken": "semledger_no_such_module:create"})
    with pytest.raises(AdapterLoadError, match="broken"):
        registry.create({"adapter": "broken"})


def test_a_factory_that_returns_no_surface_is_refused(fake_module: str) -> None:
    registry = AdapterRegistry({"odd": f"{fake_module}:not_a_surface"})
    with pytest.raises(AdapterLoadError, match="odd"):
        registry.create({"adapter": "odd"})


def test_module_level_registry_refuses_a_second_registration() -> None:
    def factory(config: Mapping[str, Any]) -> AgentSurface:
        raise AssertionError("not called")

    name = "test-adapters-registry-double"
    register_adapter(name, factory)
    assert name in registered_adapters()
    with pytest.raises(DuplicateAdapterError):
        register_adapter(name, factory)
    with pytest.raises(UnknownAdapterError):
        create_surface({"adapter": "test-adapters-registry-nobody"})


CONTRACT_MODULES = {
    f"semledger.adapters.{name}"
    for name in (
        "_actions", "_calls", "_candidates", "_capabilities", "_control_path", "_errors",
        "_registry",
        "_roles", "_schemas", "_session", "_snapshot", "_surface", "_wire",
    )
}  # fmt: skip


def test_importing_the_package_imports_no_adapter_and_no_schema_tooling() -> None:
    code = textwrap.dedent("""
        import json, sys
        import semledger.adapters
        print(json.dumps([m for m in sys.modules if m.startswith("semledger.adapters.")]))
        print(sorted({"jsonschema", "hypothesis", "hypothesis_jsonschema"} & set(sys.modules)))
    """)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert set(json.loads(out[0])) <= CONTRACT_MODULES
    assert out[1] == "[]"


@pytest.mark.parametrize("adapter", ["web", "atspi"])
@pytest.mark.parametrize(("key", "value"), [("timeout_ms", "soon"), ("timeout_ms", -1)])
def test_a_bad_duration_in_the_config_names_its_key(adapter: str, key: str, value: Any) -> None:
    with pytest.raises(DataError, match=rf"config\.{key}: expected a non-negative integer"):
        create_surface({"adapter": adapter, key: value})


def test_a_bad_settle_time_for_the_desktop_adapter_names_its_key() -> None:
    with pytest.raises(DataError, match=r"config\.settle_ms"):
        create_surface({"adapter": "atspi", "settle_ms": 1.5})
