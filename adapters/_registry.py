"""The adapter registry: names to factories, with built-ins imported only when used.

A built-in adapter is an entry in ``BUILTIN_ADAPTERS`` naming ``"module:function"``; its
module is imported the first time ``create_surface`` asks for it, so importing
``semledger.adapters`` never imports a browser driver. Registering a name twice (a
built-in's included) is an error: which implementation ran must not depend on import order.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Final

from ._errors import DataError
from ._surface import AgentSurface

AdapterFactory = Callable[[Mapping[str, Any]], AgentSurface]

BUILTIN_ADAPTERS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "runtime": "semledger.adapters._runtime_adapter:create_runtime_surface",
        "web": "semledger.adapters._web:create_web_surface",
        "atspi": "semledger.adapters._atspi:create_atspi_surface",
    }
)
"""Built-in adapter name -> ``"module:function"`` of its factory (lazily imported)."""


class AdapterRegistryError(Exception):
    """Base of the registry's errors; never raised itself."""


class DuplicateAdapterError(AdapterRegistryError):
    """Raised by ``register_adapter`` when the name is already registered or built in."""


class UnknownAdapterError(AdapterRegistryError, LookupError):
    """Raised by ``create_surface`` for a name nobody registered; the message lists the
    registered names."""


class AdapterLoadError(AdapterRegistryError):
    """Raised when a built-in's ``module:function`` cannot be imported, or a factory returns
    something that is not an AgentSurface."""


class AdapterRegistry:
    """A set of named adapter factories. The module-level functions use one shared
    instance; tests build their own."""

    def __init__(self, builtins: Mapping[str, str] | None = None) -> None:
        self._lazy: dict[str, str] = dict(builtins or {})
        self._factories: dict[str, AdapterFactory] = {}

    def register(self, name: str, factory: AdapterFactory) -> None:
        """Register ``factory`` under ``name``; DuplicateAdapterError when taken."""
        if not isinstance(name, str) or not name:
            raise DataError("an adapter name must be a non-empty string", path="name")
        if name in self._factories or name in self._lazy:
            raise DuplicateAdapterError(f"adapter {name!r} is already registered")
        self._factories[name] = factory

    def names(self) -> tuple[str, ...]:
        """Every registered name, built-ins included, sorted."""
        return tuple(sorted({*self._factories, *self._lazy}))

    def factory(self, name: str) -> AdapterFactory:
        """The factory for ``name``, importing a built-in's module on first use."""
        if name in self._factories:
            return self._factories[name]
        target = self._lazy.get(name)
        if target is None:
            known = ", ".join(self.names()) or "none"
            raise UnknownAdapterError(f"unknown adapter {name!r}; registered: {known}")
        module_name, _, attribute = target.partition(":")
        try:
            factory = getattr(importlib.import_module(module_name), attribute)
        except (ImportError, AttributeError) as exc:
            raise AdapterLoadError(f"adapter {name!r}: cannot load {target!r}: {exc}") from exc
        if not callable(factory):
            raise AdapterLoadError(f"adapter {name!r}: {target!r} is not callable")
        self._factories[name] = factory
        return factory  # type: ignore[no-any-return]

    def create(self, config: Mapping[str, Any]) -> AgentSurface:
        """Build the adapter named by ``config["adapter"]``, passing it the whole config."""
        if not isinstance(config, Mapping):
            raise DataError("expected a mapping", path="config")
        name = config.get("adapter")
        if not isinstance(name, str):
            raise DataError("expected the adapter's name, a string", path="config.adapter")
        surface = self.factory(name)(config)
        if not isinstance(surface, AgentSurface):
            raise AdapterLoadError(f"adapter {name!r} returned {type(surface).__name__}")
        return surface


_REGISTRY: Final = AdapterRegistry(BUILTIN_ADAPTERS)


def register_adapter(name: str, factory: AdapterFactory) -> None:
    """Register ``factory`` under ``name``, for `create_surface`, ``serve --adapter`` and
    `run_conformance` to find; a second registration raises DuplicateAdapterError."""
    _REGISTRY.register(name, factory)


def registered_adapters() -> tuple[str, ...]:
    """Every adapter name ``create_surface`` accepts, sorted."""
    return _REGISTRY.names()


def create_surface(config: Mapping[str, Any]) -> AgentSurface:
    """Build the adapter named by ``config["adapter"]``; UnknownAdapterError (listing the
    registered names) when nobody registered it."""
    return _REGISTRY.create(config)
