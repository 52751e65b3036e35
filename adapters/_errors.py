"""Typed surface errors and their failure classes (seed §6).

Each error carries the failure class the executor records, so the mapping from an error to a
result category is data on the error rather than a switch above the surface.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, Literal

FailureClass = Literal[
    "locator",
    "timeout",
    "assertion",
    "dialog",
    "navigation",
    "script",
    "infrastructure",
    "data",
    "unknown",
]


class SurfaceError(Exception):
    """Base of every error an adapter raises; never raised itself.

    ``failure_class`` is what the executor records for the step. ``details`` carries
    structured context (a ref, a candidate kind) for the results.
    """

    failure_class: ClassVar[FailureClass] = "unknown"

    def __init__(self, message: str, *, details: Mapping[str, object] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details: Mapping[str, object] = dict(details or {})


class LocateError(SurfaceError):
    """Raised when a reference is unknown (stale or never issued), or when a candidate
    matched the wrong number of elements where exactly one was required.

    ``locate`` itself never raises it for zero or many matches: it returns them all."""

    failure_class: ClassVar[FailureClass] = "locator"


class ActionabilityError(SurfaceError):
    """Raised when the element exists but is not in a state that permits the action
    (disabled, covered, detached, not editable)."""

    failure_class: ClassVar[FailureClass] = "timeout"


class SurfaceTimeoutError(SurfaceError):
    """Raised when an operation exceeded its timeout.

    The seed calls it ``TimeoutError``; ``semledger.adapters.TimeoutError`` is an alias, kept
    out of ``__all__`` so a star import never shadows the builtin."""

    failure_class: ClassVar[FailureClass] = "timeout"


class CheckError(SurfaceError):
    """Raised when a predicate could not be evaluated (no such subject, a predicate that
    does not apply to it). A predicate that is simply false is ``CheckResult(ok=False)``."""

    failure_class: ClassVar[FailureClass] = "assertion"


class DialogError(SurfaceError):
    """Raised when a dialog was expected and absent, unexpected and present, or could
    not be answered."""

    failure_class: ClassVar[FailureClass] = "dialog"


class NavigationError(SurfaceError):
    """Raised when navigation failed, timed out, or landed somewhere unexpected."""

    failure_class: ClassVar[FailureClass] = "navigation"


class ScriptError(SurfaceError):
    """Raised when an injected or evaluated script threw."""

    failure_class: ClassVar[FailureClass] = "script"


class SessionError(SurfaceError):
    """Raised when the session could not be opened, was lost, or the driven process
    crashed; also when a method needing an open session is called without one."""

    failure_class: ClassVar[FailureClass] = "infrastructure"


class SurfaceGoneError(SessionError):
    """Raised when what the session drives went away under it: the browser crashed, was
    killed or closed its page; the application was killed by a signal from outside
    (SIGKILL, SIGTERM, ...), or its accessibility bus connection was lost. A re-run of the
    session finds its own surface there. (An application that exits, aborts or crashes by
    itself raises a plain `SessionError`: a re-run repeats that.)"""


class DataError(SurfaceError):
    """Raised when a value is missing or of the wrong type: every decoder raises it for an
    invalid document, with ``path`` naming the offending field (``candidate.by``,
    ``snapshot.nodes[2].states[0]``)."""

    failure_class: ClassVar[FailureClass] = "data"

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        details: Mapping[str, object] | None = None,
    ) -> None:
        super().__init__(f"{path}: {message}" if path else message, details=details)
        self.path = path
        self.reason = message


def classify(exc: BaseException) -> FailureClass:
    """The failure class of ``exc``; ``"unknown"`` for anything that is not a SurfaceError,
    so a leaked native error shows up in the results instead of being miscategorised."""
    if isinstance(exc, SurfaceError):
        return exc.failure_class
    return "unknown"
