"""What replay reads from a fuzzer counterexample's params about the checks it made."""

from __future__ import annotations

from typing import Any

import pytest

from semledger.replay._invariants import (
    RecordedViolation,
    recorded_issue_check,
    recorded_reads,
    recorded_violation,
)


@pytest.mark.parametrize(
    ("params", "allowed"),
    [
        ({}, None),
        ({"fuzz": "garbage"}, None),
        ({"fuzz": {"seed": 0, "failure": "ZeroDivisionError: by zero"}}, None),
        ({"fuzz": {"issues": False}}, None),
        ({"fuzz": {"issues": True}}, frozenset()),
        (
            {"fuzz": {"issues": True, "allowed_issues": ["duplicate_semantic_id", 5]}},
            frozenset({"duplicate_semantic_id"}),
        ),
    ],
)
def test_only_a_counterexample_whose_view_was_checked_for_issues_is_held_to_none(
    params: dict[str, Any], allowed: frozenset[str] | None
) -> None:
    """A counterexample saved before the fuzzer checked the view (no ``issues`` in its
    params) is not held to a check it never made."""
    assert recorded_issue_check(params) == allowed


def test_reads_and_a_failure_after_no_input_are_recorded_at_step_0() -> None:
    """A counterexample reads, and may fail a check, before its first input."""
    reads = {"fuzz": {"reads": [[0, None], [0, 0], [2, 1]]}}
    assert recorded_reads(reads) == {0: [None, 0], 2: [1]}
    violated = {"fuzz": {"violated": {"step": 0, "check": "issues"}, "failure": "two ids"}}
    assert recorded_violation(violated) == RecordedViolation(0, "issues", "two ids")
