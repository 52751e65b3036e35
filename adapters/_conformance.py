"""The conformance suite: fixed scripts of surface calls with expected invariants, effects
and error types, run against any adapter (`semledger surface conform --adapter NAME`).

Cases belong to a suite (``runtime`` for desktop adapters over semledger apps, ``web`` for
browser adapters over the sample pages, ``atspi`` for Linux desktop adapters over the GTK
fixture). A suite knows how to prepare its fixtures; a case gets a fresh, opened surface
on its fixture and fails by raising `CaseFailure` naming the fault.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, suppress
from typing import Any, Literal, Protocol

import attrs

from ._registry import create_surface
from ._session import SessionInit
from ._surface import AgentSurface


class CaseFailure(AssertionError):  # noqa: N818 - a failed case, as the report says
    """Raised by a case when the adapter broke one of its expectations; says which."""


@attrs.frozen
class CaseContext:
    """What a case works with: the opened surface, its fixture's details, and the suite's."""

    surface: AgentSurface
    adapter: str
    fixture: str
    details: Mapping[str, Any] = attrs.field(factory=dict)


CaseBody = Callable[[CaseContext], Awaitable[None]]


@attrs.frozen
class Case:
    id: str
    """``page.case``: the fixture (sample page or app), then what is checked."""
    suite: str
    fixture: str
    requires: frozenset[str]
    """Capability flags the case needs; an adapter without one skips it, with the reason."""
    description: str
    body: CaseBody


CASES: list[Case] = []


def case(
    case_id: str, *, suite: str, fixture: str, requires: Iterable[str] = (), description: str = ""
) -> Callable[[CaseBody], CaseBody]:
    """Register a case (decorator)."""

    def register(body: CaseBody) -> CaseBody:
        if any(c.id == case_id and c.suite == suite for c in CASES):
            raise ValueError(f"case {case_id!r} is registered twice in suite {suite!r}")
        doc = description or (body.__doc__ or "").strip().splitlines()[0:1]
        CASES.append(Case(case_id, suite, fixture, frozenset(requires), "".join(doc), body))
        return body

    return register


class Environment(Protocol):
    """A suite's prepared fixtures (servers started, processes launched) for one run."""

    async def open(
        self, adapter: str, fixture: str
    ) -> tuple[AgentSurface, SessionInit, dict[str, Any]]:
        """A fresh surface for `fixture`, the SessionInit to open it with, and case details."""
        ...


SuiteSetup = Callable[[], AbstractAsyncContextManager[Environment]]
SUITES: dict[str, SuiteSetup] = {}
"""Suite name -> how to prepare its environment. Suites register on import."""

ADAPTER_SUITES: dict[str, str] = {"runtime": "runtime", "web": "web", "atspi": "atspi"}
"""Which suite a built-in adapter is checked with."""

_SUITE_MODULES = {
    "runtime": "semledger.adapters._cases_runtime",
    "web": "semledger.adapters._cases_web",
    "atspi": "semledger.adapters._cases_atspi",
}


def load_suite(name: str) -> SuiteSetup:
    if name not in SUITES:
        module = _SUITE_MODULES.get(name)
        if module is None:
            known = ", ".join(sorted(_SUITE_MODULES))
            raise KeyError(f"no conformance suite {name!r}; known: {known}")
        __import__(module)
    return SUITES[name]


@attrs.frozen
class CaseResult:
    id: str
    status: Literal["passed", "failed", "skipped"]
    reason: str | None = None
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)


@attrs.frozen
class ConformanceReport:
    adapter: str
    suite: str
    results: tuple[CaseResult, ...]

    @property
    def conformant(self) -> bool:
        """Nothing failed and something passed."""
        statuses = [r.status for r in self.results]
        return "failed" not in statuses and "passed" in statuses

    def counts(self) -> dict[str, int]:
        out = {"passed": 0, "failed": 0, "skipped": 0}
        for result in self.results:
            out[result.status] += 1
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "adapter": self.adapter,
            "suite": self.suite,
            "conformant": self.conformant,
            "counts": self.counts(),
            "results": [r.to_json() for r in self.results],
        }

    def to_markdown(self) -> str:
        verdict = "conformant" if self.conformant else "NOT conformant"
        c = self.counts()
        lines = [
            f"# Conformance of `{self.adapter}` ({self.suite} suite): {verdict}",
            "",
            f"{c['passed']} passed, {c['failed']} failed, {c['skipped']} skipped.",
            "",
            "| case | result | reason |",
            "|---|---|---|",
        ]
        for r in self.results:
            reason = (r.reason or "").replace("|", "\\|").replace("\n", " ")
            lines.append(f"| `{r.id}` | {r.status} | {reason} |")
        return "\n".join(lines) + "\n"


async def run_conformance(
    adapter: str,
    *,
    suite: str | None = None,
    only: Sequence[str] | None = None,
    on_result: Callable[[CaseResult], None] | None = None,
) -> ConformanceReport:
    """Run every case of the adapter's suite (or `only` those ids) against `adapter`."""
    suite_name = suite or ADAPTER_SUITES.get(adapter)
    if suite_name is None:
        raise KeyError(
            f"adapter {adapter!r} has no default suite: name one (suite= in Python, --suite"
            f" on the command line), one of {', '.join(sorted(set(ADAPTER_SUITES.values())))}"
        )
    setup = load_suite(suite_name)
    cases = [c for c in CASES if c.suite == suite_name]
    if only:
        unknown = set(only) - {c.id for c in cases}
        if unknown:
            named = ", ".join(repr(case) for case in sorted(unknown))
            known = ", ".join(c.id for c in cases)
            raise KeyError(f"no case {named} in suite {suite_name!r}; its cases: {known}")
        cases = [c for c in cases if c.id in only]
    results: list[CaseResult] = []
    async with setup() as environment:
        for item in cases:
            result = await _run_case(environment, adapter, item)
            results.append(result)
            if on_result is not None:
                on_result(result)
    return ConformanceReport(adapter, suite_name, tuple(results))


async def _run_case(environment: Environment, adapter: str, item: Case) -> CaseResult:
    started = time.perf_counter()
    surface: AgentSurface | None = None
    try:
        surface, init, details = await environment.open(adapter, item.fixture)
        missing = sorted(f for f in item.requires if not getattr(surface.capabilities(), f))
        if missing:
            return CaseResult(item.id, "skipped", f"the adapter lacks {', '.join(missing)}")
        await surface.open(init)
        await item.body(CaseContext(surface, adapter, item.fixture, details))
    except CaseFailure as failure:
        return CaseResult(item.id, "failed", str(failure), time.perf_counter() - started)
    except Exception as error:
        where = traceback.extract_tb(error.__traceback__)[-1]
        reason = f"{type(error).__name__}: {error} (at {where.filename}:{where.lineno})"
        return CaseResult(item.id, "failed", reason, time.perf_counter() - started)
    finally:
        if surface is not None:
            with suppress(Exception):
                await surface.close()
    return CaseResult(item.id, "passed", None, time.perf_counter() - started)


def default_environment(
    make: Callable[[str, str], Awaitable[tuple[AgentSurface, SessionInit, dict[str, Any]]]],
) -> SuiteSetup:
    """A suite setup with nothing to prepare: `make(adapter, fixture)` builds each surface."""
    from contextlib import asynccontextmanager

    class _Env:
        async def open(
            self, adapter: str, fixture: str
        ) -> tuple[AgentSurface, SessionInit, dict[str, Any]]:
            return await make(adapter, fixture)

    @asynccontextmanager
    async def setup() -> AsyncIterator[Environment]:
        yield _Env()

    return setup


def surface_for(adapter: str, config: Mapping[str, Any]) -> AgentSurface:
    """`create_surface` for `adapter` with extra config."""
    return create_surface({"adapter": adapter, **config})
