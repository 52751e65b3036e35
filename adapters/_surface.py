"""The AgentSurface protocol: the whole boundary between semledger and a driven UI (seed §1).

Everything above the surface calls these methods and addresses elements by ref or by a
stored candidate; it knows nothing of locators, protocols or platforms.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Final, Literal, Protocol, get_args, runtime_checkable

from ._calls import (
    ActArgs,
    ActResult,
    ApiRequest,
    ApiResponse,
    CheckResult,
    CheckSubject,
    ElementDescription,
    ObservedEvent,
    Predicate,
    ReadKind,
)
from ._candidates import Candidate
from ._capabilities import Capabilities
from ._session import SessionInit, SessionState
from ._snapshot import Snapshot

SurfaceKind = Literal["web", "mobile", "desktop", "http"]
SURFACE_KINDS: Final[tuple[str, ...]] = get_args(SurfaceKind)

OptionalMethod = Literal["trace", "request", "pick", "observe"]
OPTIONAL_METHODS: Final[tuple[str, ...]] = get_args(OptionalMethod)

CandidateLike = Candidate | Mapping[str, object]
PredicateLike = Predicate | Mapping[str, object]
SessionInitLike = SessionInit | Mapping[str, object]
SessionStateLike = SessionState | Mapping[str, object]
ActArgsLike = ActArgs | Mapping[str, object]


@runtime_checkable
class AgentSurface(Protocol):
    """The contract every adapter implements.

    Parameters typed ``...Like`` take the attrs class or a dict of the same fields; an
    adapter normalises them with ``candidate_from_dict`` and friends, which raise DataError.
    Errors are the typed ones of ``semledger.adapters`` (never a bare exception), and the
    optional methods (``trace``, ``request``, ``pick``, ``observe``) are absent from an
    adapter that lacks them, never stubs: callers test with ``has_optional``."""

    @property
    def kind(self) -> SurfaceKind:
        """web, mobile, desktop or http."""
        ...

    def capabilities(self) -> Capabilities:
        """Which optional features this adapter has; cheap, and callable before ``open``."""
        ...

    async def open(self, session: SessionInitLike) -> None:
        """Start a session (launch or attach, apply the SessionInit); SessionError on failure."""
        ...

    async def close(self) -> None:
        """End the session and release the driver; safe to call twice."""
        ...

    async def snapshot(
        self,
        *,
        root: str | None = None,
        max_nodes: int | None = None,
        interactive_only: bool = False,
    ) -> Snapshot:
        """The normalised semantic tree with stable refs, built with ``build_snapshot``."""
        ...

    async def act(
        self,
        action: str,
        ref: str | None = None,
        args: ActArgsLike | None = None,
        ref2: str | None = None,
    ) -> ActResult:
        """Perform one action by reference; ``ref2`` only for two-element actions."""
        ...

    async def read(self, kind: ReadKind, ref: str | None = None, name: str | None = None) -> object:
        """Read one value: element text or value, an attribute, the title or URL, or the
        last action's result."""
        ...

    async def check(
        self, predicate: PredicateLike, subject: CheckSubject, ref: str | None = None
    ) -> CheckResult:
        """Evaluate one predicate; a false predicate is ``ok=False``, not an error."""
        ...

    async def locate(self, candidate: CandidateLike) -> list[str]:
        """Every ref the candidate matches (0, 1 or many); never raises for no match and
        never falls back to another kind; ``[]`` for a kind the platform lacks."""
        ...

    async def describe(self, ref: str) -> ElementDescription:
        """Everything candidate synthesis and fingerprinting need for one element."""
        ...

    async def screenshot(self, path: str, mask: Sequence[str] | None = None) -> None:
        """Write a screenshot to ``path`` with the boxes of the ``mask`` refs blanked."""
        ...

    async def state(self) -> SessionState:
        """The restorable subset of session state; what a checkpoint stores."""
        ...

    async def restore(self, state: SessionStateLike) -> None:
        """Put the session back into a state ``state()`` returned."""
        ...


@runtime_checkable
class SupportsTrace(Protocol):
    """``trace``: present only when ``capabilities().trace``."""

    async def trace(self, start: bool, path: str | None = None) -> None:
        """Start or stop adapter tracing, writing the trace to ``path`` on stop."""
        ...


@runtime_checkable
class SupportsRequest(Protocol):
    """``request``: a named HTTP request, optionally with the web session's cookies."""

    async def request(self, req: ApiRequest, *, with_session_cookies: bool) -> ApiResponse:
        """Execute ``req``."""
        ...


@runtime_checkable
class SupportsPick(Protocol):
    """``pick``: present only when ``capabilities().pick``. Cancellation is Trio's: cancel
    the enclosing scope instead of passing the seed's abort signal."""

    async def pick(
        self, phrase: str, *, element_id: str | None = None, timeout_ms: int | None = None
    ) -> str | None:
        """Overlay the application naming ``phrase`` and return the ref a person clicked,
        or None when they cancelled; ``element_id`` lets a scripted pick answer it."""
        ...


ObserveHandler = Callable[[ObservedEvent], Awaitable[None] | None]


@runtime_checkable
class SupportsObserve(Protocol):
    """``observe``: present only when ``capabilities().observe``."""

    async def observe(self, handler: ObserveHandler) -> None:
        """Report each thing a person does as an ObservedEvent, as it happens; return when
        the session closes (or the caller's cancel scope is cancelled)."""
        ...


def has_optional(surface: object, name: OptionalMethod) -> bool:
    """Whether ``surface`` implements the optional method ``name``.

    Presence is the contract: an adapter without the feature omits the method."""
    if name not in OPTIONAL_METHODS:
        raise ValueError(f"{name!r} is not an optional method; expected one of {OPTIONAL_METHODS}")
    return callable(getattr(surface, name, None))
