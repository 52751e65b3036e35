"""Package attributes imported on first use (PEP 562), for names whose modules bring costly
imports that most users of the package never need."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_attributes(
    namespace: dict[str, Any], modules: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__``: `modules` maps each lazy name to the
    relative module defining it; a name is imported when first asked for and then kept in
    the package's `namespace` (its ``globals()``)."""
    package = namespace["__name__"]

    def attribute(name: str) -> Any:
        module = modules.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value
        return value

    def names() -> list[str]:
        return sorted({*namespace, *modules})

    return attribute, names
