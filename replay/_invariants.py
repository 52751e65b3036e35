"""The generation invariants every session must keep, checked step by step.

Cheap enough to run on every step of a replay: snapshot hashes are maintained incrementally,
so "advanced exactly when the snapshot changed" costs two hash comparisons.
"""

from __future__ import annotations

import attrs

from semledger.runtime import Rejection, SemanticsSnapshot


class InvariantViolation(AssertionError):  # noqa: N818 - it reads as what it reports
    """Raised when a step broke a generation invariant."""


@attrs.define
class GenerationChecker:
    """Feed it the snapshot after each step (and the step's outcome)."""

    previous: SemanticsSnapshot
    steps: int = 0

    def check(self, current: SemanticsSnapshot, outcome: object = None) -> None:
        self.steps += 1
        before, after = self.previous, current
        where = f"step {self.steps}"
        if after.generation < before.generation:
            raise InvariantViolation(
                f"{where}: the generation went back from {before.generation} to {after.generation}"
            )
        advanced = after.generation != before.generation
        changed = after.hash != before.hash
        if advanced and not changed:
            raise InvariantViolation(
                f"{where}: generation {after.generation} but nothing public changed"
            )
        if changed and not advanced:
            raise InvariantViolation(f"{where}: the snapshot changed without a new generation")
        if isinstance(outcome, Rejection) and advanced:
            raise InvariantViolation(
                f"{where}: a {outcome.code.value} rejection advanced the generation"
            )
        self.previous = current
