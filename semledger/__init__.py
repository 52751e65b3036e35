"""semledger: agent-operable UIs on committed semantics, every action on the record.

Its parts are subpackages: `semledger.runtime`, `semledger.eventlog`, `semledger.actors`,
`semledger.hosts`, `semledger.adapters`, `semledger.replay` and `semledger.examples`."""

from __future__ import annotations

__all__ = ["__version__"]


def __getattr__(name: str) -> str:
    """``__version__``, the installed package's, looked up only when asked for: the
    package metadata takes tens of milliseconds to find, which every import would pay."""
    if name != "__version__":
        raise AttributeError(f"module 'semledger' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("semledger")
    except PackageNotFoundError:  # a source tree that was never installed
        return "unknown (not installed)"
