"""Upcasters: bring an old stored event up to its class's current ``VERSION``.

An upcaster works on the unstructured dict (the msgpack body, tag included), one version
step at a time: ``(topic, from_version)`` maps a version-``n`` dict to a version-``n + 1``
dict. Decoding chains them, so each change to a class needs exactly one new upcaster and
old ones never have to be rewritten. Stored bodies are never modified; the chain keeps
hashing the bytes as they were written.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._errors import UnsupportedVersionError

__all__ = ["UPCASTERS", "Upcaster", "Upcasters"]

Upcaster = Callable[[dict[str, Any]], dict[str, Any]]


class Upcasters:
    """A registry of upcasters keyed by ``(topic, from_version)``."""

    def __init__(self) -> None:
        self._steps: dict[tuple[str, int], Upcaster] = {}

    def register(self, topic: str, from_version: int) -> Callable[[Upcaster], Upcaster]:
        """Decorator: register ``fn`` as the step from ``from_version`` to the next."""

        def decorate(fn: Upcaster) -> Upcaster:
            self.add(topic, from_version, fn)
            return fn

        return decorate

    def add(self, topic: str, from_version: int, fn: Upcaster) -> None:
        key = (topic, from_version)
        if key in self._steps:
            raise ValueError(f"an upcaster for {topic} version {from_version} is registered")
        self._steps[key] = fn

    def copy(self) -> Upcasters:
        other = Upcasters()
        other._steps = dict(self._steps)
        return other

    def upcast(
        self, topic: str, version: int, current: int, data: dict[str, Any]
    ) -> dict[str, Any]:
        """Apply the steps from ``version`` up to ``current``.

        Raises ``UnsupportedVersionError`` for a version newer than ``current``, below 1, or
        with a step missing.
        """
        if version > current:
            raise UnsupportedVersionError(topic, version, current, "newer than this code knows")
        if version < 1:
            raise UnsupportedVersionError(topic, version, current, "versions start at 1")
        while version < current:
            step = self._steps.get((topic, version))
            if step is None:
                raise UnsupportedVersionError(
                    topic, version, current, f"no upcaster from version {version}"
                )
            data = step(data)
            version += 1
        return data


UPCASTERS = Upcasters()
"""The upcasters of the log's own event classes; the default for ``LogConverter``."""


@UPCASTERS.register("SessionStarted", 1)
def _session_started_add_surface(data: dict[str, Any]) -> dict[str, Any]:
    """Version 1 predates adapters: every session ran on the runtime."""
    return {**data, "surface": "runtime"}


@UPCASTERS.register("SemanticsTaken", 1)
def _semantics_taken_add_next_node_id(data: dict[str, Any]) -> dict[str, Any]:
    """Version 1 did not record which node ids had been given out."""
    return {**data, "next_node_id": None}


@UPCASTERS.register("EffectFailed", 1)
def _effect_failed_add_traceback(data: dict[str, Any]) -> dict[str, Any]:
    """Version 1 logged what the effect raised without where."""
    return {**data, "traceback": None}


@UPCASTERS.register("AgentConnected", 1)
def _agent_connected_add_resumed(data: dict[str, Any]) -> dict[str, Any]:
    """Version 1 logged only connections that began with an ``initialize``."""
    return {**data, "resumed": False}


@UPCASTERS.register("SessionEnded", 1)
def _session_ended_add_final(data: dict[str, Any]) -> dict[str, Any]:
    """Version 1 predates ``semledger end``: every end could be resumed."""
    return {**data, "final": False}


@UPCASTERS.register("SessionEnded", 2)
def _session_ended_say_who(data: dict[str, Any]) -> dict[str, Any]:
    """Version 2 said only whether an end was final. Its final ends were an HTTP client's
    ``DELETE`` or ``semledger end``, whose reasons were ``ended by the operator``, then
    ``: <its --reason>`` when given; the fuzzer ended the counterexamples it saved, not
    final then, with ``fuzz counterexample: <the failure>``."""
    upcast = {key: value for key, value in data.items() if key != "final"}
    reason = data.get("reason")
    said = reason if isinstance(reason, str) else ""
    if not data.get("final"):
        upcast["by"] = "fuzzer" if said.startswith("fuzz counterexample: ") else "server"
    elif said == "ended by the operator" or said.startswith("ended by the operator: "):
        upcast["by"] = "operator"
    else:
        upcast["by"] = "client"
    return upcast
