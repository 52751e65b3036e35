"""The AgentSurface protocol and its optional methods."""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import get_args

import pytest

from semledger.adapters import (
    OPTIONAL_METHODS,
    SURFACE_KINDS,
    ActArgsLike,
    ActResult,
    AgentSurface,
    CandidateLike,
    Capabilities,
    CheckResult,
    ElementDescription,
    ObserveHandler,
    PredicateLike,
    RoleCandidate,
    SessionInitLike,
    SessionState,
    SessionStateLike,
    Snapshot,
    SnapshotNode,
    SupportsObserve,
    SupportsPick,
    SupportsTrace,
    SurfaceKind,
    build_snapshot,
    candidate_from_dict,
    has_optional,
)

REQUIRED = (
    "capabilities", "open", "close", "snapshot", "act", "read", "check", "locate",
    "describe", "screenshot", "state", "restore",
)  # fmt: skip


class MinimalSurface:
    """Every required method, none of the optional ones."""

    kind: SurfaceKind = "web"

    def __init__(self) -> None:
        self.closed = 0

    def capabilities(self) -> Capabilities:
        return Capabilities()

    async def open(self, session: SessionInitLike) -> None:
        return None

    async def close(self) -> None:
        self.closed += 1

    async def snapshot(
        self, *, root: str | None = None, max_nodes: int | None = None,
        interactive_only: bool = False,
    ) -> Snapshot:  # fmt: skip
        return build_snapshot("r0", [SnapshotNode(ref="r0", role="generic", depth=0)])

    async def act(
        self, action: str, ref: str | None = None, args: ActArgsLike | None = None,
        ref2: str | None = None,
    ) -> ActResult:  # fmt: skip
        return ActResult()

    async def read(self, kind: str, ref: str | None = None, name: str | None = None) -> object:
        return None

    async def check(
        self, predicate: PredicateLike, subject: str, ref: str | None = None
    ) -> CheckResult:
        return CheckResult(ok=True)

    async def locate(self, candidate: CandidateLike) -> list[str]:
        found = candidate_from_dict(candidate)
        return ["r1"] if isinstance(found, RoleCandidate) else []

    async def describe(self, ref: str) -> ElementDescription:
        return ElementDescription(ref=ref, role="button")

    async def screenshot(self, path: str, mask: Sequence[str] | None = None) -> None:
        return None

    async def state(self) -> SessionState:
        return SessionState()

    async def restore(self, state: SessionStateLike) -> None:
        return None


class PickingSurface(MinimalSurface):
    def capabilities(self) -> Capabilities:
        return Capabilities(pick=True, observe=True)

    async def pick(
        self, phrase: str, *, element_id: str | None = None, timeout_ms: int | None = None
    ) -> str | None:
        return None

    async def observe(self, handler: ObserveHandler) -> None:
        return None


def test_protocol_methods_are_the_seeds_required_methods_in_snake_case() -> None:
    members = {
        name for name, _ in inspect.getmembers(AgentSurface)
        if not name.startswith("_")
    }  # fmt: skip
    assert members == {*REQUIRED, "kind"}
    for name in REQUIRED:
        method = getattr(AgentSurface, name)
        assert inspect.iscoroutinefunction(method) == (name != "capabilities"), name


def test_optional_methods_are_not_part_of_the_protocol() -> None:
    for name in OPTIONAL_METHODS:
        assert not hasattr(AgentSurface, name)
    assert set(OPTIONAL_METHODS) == {"trace", "request", "pick", "observe"}


def test_snapshot_options_are_keyword_only() -> None:
    parameters = inspect.signature(AgentSurface.snapshot).parameters
    assert [p.kind for n, p in parameters.items() if n != "self"] == [
        inspect.Parameter.KEYWORD_ONLY
    ] * 3


def test_kinds_are_web_mobile_desktop_and_http() -> None:
    assert SURFACE_KINDS == ("web", "mobile", "desktop", "http")
    assert get_args(SurfaceKind) == SURFACE_KINDS


def test_a_complete_adapter_is_an_agent_surface() -> None:
    assert isinstance(MinimalSurface(), AgentSurface)


def test_an_adapter_missing_a_required_method_is_not() -> None:
    class NoRestore:
        kind = "web"

        def capabilities(self) -> Capabilities:
            return Capabilities()

    assert not isinstance(NoRestore(), AgentSurface)


def test_has_optional_reports_presence_not_stubs() -> None:
    minimal, picking = MinimalSurface(), PickingSurface()
    assert [has_optional(minimal, name) for name in OPTIONAL_METHODS] == [False] * 4
    assert has_optional(picking, "pick")
    assert has_optional(picking, "observe")
    assert not has_optional(picking, "trace")
    assert isinstance(picking, SupportsPick)
    assert isinstance(picking, SupportsObserve)
    assert not isinstance(picking, SupportsTrace)


def test_has_optional_rejects_a_name_that_is_not_optional() -> None:
    with pytest.raises(ValueError, match="not an optional method"):
        has_optional(MinimalSurface(), "click")  # type: ignore[arg-type]


def test_capabilities_is_callable_before_open() -> None:
    assert MinimalSurface().capabilities() == Capabilities()


async def test_locate_takes_a_dict_of_the_candidates_fields() -> None:
    surface = MinimalSurface()
    assert await surface.locate({"by": "role", "role": "button"}) == ["r1"]
    assert await surface.locate({"by": "text", "value": "Save"}) == []


def test_like_aliases_accept_mappings() -> None:
    for alias in (CandidateLike, PredicateLike, SessionInitLike, SessionStateLike, ActArgsLike):
        assert Mapping[str, object] in get_args(alias)
