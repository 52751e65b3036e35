"""How a process hashes str, as a session's start records it (``params["str_hash"]``).

Python keys the hash of str (and bytes) with a seed it draws per process unless
PYTHONHASHSEED fixes it, and a set or dict of str iterates in the order of those hashes: an
app that takes a path from that order may take another in another process. Replay and an
exported test run in another process than the run they check, so a divergence may be that
and not a change of the app; the start records how its process hashed, so that they can
say so.
"""

from __future__ import annotations

import os
import sys
from typing import Any

PARAM = "str_hash"
"""The key of a session's start params that holds its process's `str_hashing`."""

_PROBE = "semledger: how this process hashes str"

_AGAIN = "replay it (or run a test exported from it)"

_SEED = os.environ.get("PYTHONHASHSEED")
"""As the process started (before an app could change ``os.environ``, which then changes
nothing of how the process hashes)."""


def str_hashing() -> dict[str, Any]:
    """How this process hashes str: ``seed``, the PYTHONHASHSEED it runs under (None: one
    drawn at random as it started), and ``probe``, the hash of a fixed str, equal in another
    process only if that one hashes alike (the same seed on another Python version or build
    may not)."""
    return {"seed": _seed(), "probe": hash(_PROBE)}


def _seed() -> int | None:
    if not sys.flags.hash_randomization:
        return 0  # PYTHONHASHSEED=0: randomization is off
    if sys.flags.ignore_environment or _SEED is None:
        return None
    try:
        seed = int(_SEED)
    except ValueError:  # "random", Python's own value for unset
        return None
    return seed if seed > 0 else None


def str_hashing_note(recorded: object) -> str | None:
    """What a divergence of a run whose start recorded `recorded` (its ``params["str_hash"]``)
    notes, when this process may hash str otherwise; None when it hashes alike, and when the
    log does not say (a session started before this was recorded, or not by an app)."""
    if not isinstance(recorded, dict) or not _a_seed(recorded.get("seed", False)):
        return None
    now, was, probe = str_hashing(), recorded["seed"], recorded.get("probe")
    if probe == now["probe"] or (probe is None and was is not None and was == now["seed"]):
        return None
    if was is not None and was == now["seed"]:
        where = (
            f"PYTHONHASHSEED={was}, as this one does, but on another Python (its version or"
            " build), which hashes str otherwise"
        )
        advice = f"{_AGAIN} on the Python that recorded it"
    else:
        both_random = was is None and now["seed"] is None
        this = "another random seed" if both_random else _hashed(now["seed"])
        where = f"{_hashed(was)} and this one with {this}"
        advice = (
            f"{_AGAIN} under PYTHONHASHSEED={was}"
            if was is not None
            else "a random seed cannot be given again: set PYTHONHASHSEED for the runs you"
            " want to reproduce"
        )
    return (
        f"the recorded run hashed str with {where}: if the app iterates a set or dict of str,"
        f" that alone may explain this divergence; {advice}"
    )


def seed_recorded(recorded: object) -> bool:
    """Whether `recorded` (a start's ``params["str_hash"]``) names a seed a run can be given
    again: its note is the first thing to try, where a random seed's is only a caveat."""
    return isinstance(recorded, dict) and isinstance(recorded.get("seed"), int)


def _a_seed(value: object) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool))


def _hashed(seed: int | None) -> str:
    return "a random seed (PYTHONHASHSEED unset)" if seed is None else f"PYTHONHASHSEED={seed}"
