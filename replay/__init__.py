"""Replay: log-served reads, deterministic re-execution, audit, export and fuzzing.

The fuzzer needs hypothesis, which takes a quarter of a second to import: it is loaded on
first use, so serving and auditing start without it.
"""

from typing import TYPE_CHECKING, Any

from semledger.actors import AppLoadError, load_app
from semledger.eventlog import UnknownSessionError

from ._audit import (
    AuditEntry,
    AuditReport,
    Connection,
    Damage,
    Ending,
    Incident,
    UnreadableEventError,
    audit,
    audit_report,
    verify,
)
from ._export import check_recorded_steps, check_writable, export_test, write_whole
from ._invariants import GenerationChecker, InvariantViolation
from ._reads import (
    SurfaceSessionError,
    UnknownGenerationError,
    fold,
    full_at,
    read_at,
)
from ._reexecute import Divergence, ReplayReport, node_diff, reexecute

__all__ = [
    "SEEDS",
    "AppLoadError",
    "AuditEntry",
    "AuditReport",
    "Connection",
    "CounterexampleNotSavedError",
    "Damage",
    "Divergence",
    "Ending",
    "FuzzInterrupted",
    "FuzzResult",
    "GenerationChecker",
    "Incident",
    "InvariantViolation",
    "ReplayReport",
    "SurfaceSessionError",
    "UnknownGenerationError",
    "UnknownSessionError",
    "UnreadableEventError",
    "audit",
    "audit_report",
    "check_recorded_steps",
    "check_writable",
    "export_test",
    "fold",
    "full_at",
    "fuzz_app",
    "load_app",
    "node_diff",
    "read_at",
    "reexecute",
    "verify",
    "write_whole",
]

if TYPE_CHECKING:
    from ._fuzz import SEEDS, CounterexampleNotSavedError, FuzzInterrupted, FuzzResult, fuzz_app


_FUZZ = frozenset(
    {"SEEDS", "CounterexampleNotSavedError", "FuzzInterrupted", "FuzzResult", "fuzz_app"}
)


def __getattr__(name: str) -> Any:
    if name in _FUZZ:
        from . import _fuzz

        return getattr(_fuzz, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
