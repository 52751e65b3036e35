"""The conformance suite: fixed scripts of surface calls with expected invariants, effects
and error types, run against any adapter (`semledger surface conform --adapter NAME`).

Cases belong to a suite (``runtime`` for desktop adapters over semledger apps, ``web`` for
browser adapters over the sample pages, ``atspi`` for Linux desktop adapters over the GTK
fixture). A suite knows how to prepare its fixtures; a case gets a fresh, opened surface
on its fixture and fails by raising `CaseFailure` naming the fault. Each case has a time
limit (`DEFAULT_TIMEOUT` seconds unless the run names another): one that exceeds it fails,
naming the surface call it was waiting for, and the run goes on with the next case.
"""

from __future__ import annotations

import inspect
import math
import time
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, suppress
from typing import Any, Literal, Protocol, cast

import attrs
import trio

from ._calls import ActResult
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


DEFAULT_TIMEOUT = 60.0
"""Seconds a case may take (and, apart, the closing of its surface) unless a run says."""


async def run_conformance(
    adapter: str,
    *,
    suite: str | None = None,
    only: Sequence[str] | None = None,
    on_result: Callable[[CaseResult], None] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> ConformanceReport:
    """Run every case of the adapter's suite (or `only` those ids) against `adapter`, each
    within `timeout` seconds (``math.inf`` for no limit)."""
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        raise ValueError(f"timeout must be a number of seconds above 0, got {timeout!r}")
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
            result = await _run_case(environment, adapter, item, timeout)
            results.append(result)
            if on_result is not None:
                on_result(result)
    return ConformanceReport(adapter, suite_name, tuple(results))


class _Watched:
    """The surface a case drives: every call passes through; an `act` that answers anything
    but an ActResult fails the case, and the calls a time limit interrupted are remembered,
    so a case that ran out of time names what it waited for."""

    def __init__(self, surface: AgentSurface) -> None:
        self._surface = surface
        self.deadline = math.inf
        self.interrupted: list[str] = []

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._surface, name)
        if name.startswith("_") or not callable(attribute):
            return attribute

        def call(*args: Any, **kwargs: Any) -> Any:
            result = attribute(*args, **kwargs)
            if inspect.isawaitable(result):
                return self._watch(name, _call_label(name, args, kwargs), result)
            return result

        return call

    async def _watch(self, name: str, label: str, pending: Awaitable[Any]) -> Any:
        try:
            result = await pending
        except trio.Cancelled:
            if trio.current_time() >= self.deadline:
                self.interrupted.append(label)
            raise
        if name == "act" and not isinstance(result, ActResult):
            raise CaseFailure(f"{label} returned {_short(result)}, not an ActResult")
        return result


def _call_label(name: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> str:
    """``act('click', 'r3')``: a call as a reason names it, each argument cut short."""
    shown = [_short(a) for a in args]
    shown += [f"{key}={_short(value)}" for key, value in kwargs.items()]
    return f"{name}({', '.join(shown)})"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:59] + "…"


@attrs.define
class _Outcome:
    status: Literal["passed", "failed", "skipped"] = "passed"
    reason: str | None = None

    def fail(self, reason: str) -> None:
        if self.status == "failed":
            self.reason = f"{self.reason}; {reason}"
        else:
            self.status, self.reason = "failed", reason


async def _run_case(
    environment: Environment, adapter: str, item: Case, timeout: float
) -> CaseResult:
    started = time.perf_counter()
    outcome = _Outcome()
    watched: _Watched | None = None
    opened = False
    with trio.move_on_after(timeout) as limit:
        try:
            surface, init, details = await environment.open(adapter, item.fixture)
            watched = _Watched(surface)
            watched.deadline = limit.deadline
            missing = sorted(f for f in item.requires if not getattr(surface.capabilities(), f))
            if missing:
                outcome.status = "skipped"
                outcome.reason = f"the adapter lacks {', '.join(missing)}"
            else:
                checked = cast(AgentSurface, watched)
                await checked.open(init)
                opened = True
                await item.body(CaseContext(checked, adapter, item.fixture, details))
        except CaseFailure as failure:
            outcome.fail(str(failure))
        except Exception as error:
            outcome.fail(_unexpected(error))
    if limit.cancelled_caught:
        outcome.fail(_timed_out(item.id, timeout, watched))
    elif trio.current_time() >= limit.deadline:
        # Over its limit in a call that blocked the thread, which no cancellation reaches.
        took = time.perf_counter() - started
        outcome.fail(
            f"{item.id} took {took:.3f} s, past its limit of"
            f" {timeout:g} s, in work that never awaited, which cannot be cut off (a call"
            " that blocks the thread, or a loop that never yields)"
        )
    if opened and watched is not None:
        problem = await _close_twice(watched, timeout)
        if problem is not None:
            outcome.fail(problem)
    elif watched is not None:
        await _close(watched, timeout)
    seconds = time.perf_counter() - started
    if outcome.status == "skipped":
        seconds = 0.0
    return CaseResult(item.id, outcome.status, outcome.reason, seconds)


def _unexpected(error: Exception) -> str:
    where = traceback.extract_tb(error.__traceback__)[-1]
    return f"{type(error).__name__}: {error} (at {where.filename}:{where.lineno})"


def _timed_out(case_id: str, timeout: float, watched: _Watched | None) -> str:
    waiting = watched.interrupted if watched is not None else []
    if waiting:
        where = f": {' and '.join(waiting)} had not returned"
    elif watched is None:
        where = ", while the suite prepared the fixture and created the surface"
    else:
        where = ", outside any surface call (in the case's own waiting)"
    return f"{case_id} did not finish within {timeout:g} s{where}"


async def _close(watched: _Watched, timeout: float) -> None:
    """Close a surface that never opened: no rule says how that must go."""
    with trio.move_on_after(timeout), suppress(Exception):
        await cast(AgentSurface, watched).close()


async def _close_twice(watched: _Watched, timeout: float) -> str | None:
    """What went wrong closing an opened surface twice (surface.md: close is safe to call
    twice), or None."""
    surface = cast(AgentSurface, watched)
    call = "close()"
    with trio.move_on_after(timeout) as limit:
        watched.deadline = limit.deadline
        for call in ("close()", "close() called a second time"):
            try:
                await surface.close()
            except Exception as error:
                return f"{call} raised {_unexpected(error)}"
    if limit.cancelled_caught:
        return f"{call} did not return within {timeout:g} s"
    return None


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
