"""The counter example driven through `AppRuntime` exactly as an agent would (SPEC §5)."""

from __future__ import annotations

from typing import Any

import pytest

from semledger.examples.counter import app
from semledger.runtime import (
    ActionKind,
    AppRuntime,
    BySemanticId,
    ErrorCode,
    Exact,
    Latest,
    Receipt,
    Rejection,
    Role,
    SemanticId,
    SemanticsAction,
    SemanticsNode,
    SetText,
    SimpleAction,
)

Runtime = AppRuntime[Any, Any]
ACTIVATE = SimpleAction(ActionKind.ACTIVATE)


def perform(rt: Runtime, sid: str, action: SemanticsAction) -> Receipt | Rejection:
    return rt.perform(BySemanticId(SemanticId.new(sid)), action, Latest())


def accepted(rt: Runtime, sid: str, action: SemanticsAction) -> Receipt:
    outcome = perform(rt, sid, action)
    assert isinstance(outcome, Receipt), outcome
    return outcome


def rejected(rt: Runtime, sid: str, action: SemanticsAction) -> Rejection:
    outcome = perform(rt, sid, action)
    assert isinstance(outcome, Rejection), outcome
    return outcome


def find(rt: Runtime, sid: str) -> SemanticsNode:
    found = rt.snapshot.find(sid)
    assert len(found) == 1, (sid, found)
    return rt.snapshot.nodes[found[0]]


@pytest.fixture
def rt() -> Runtime:
    return AppRuntime(app)


def test_initial_tree_has_the_documented_nodes(rt: Runtime) -> None:
    value = find(rt, "counter.value")
    assert (value.role, value.label, value.value) == (Role.TEXT, "Count", "0")
    for sid, label in (
        ("counter.increment", "Increment"),
        ("counter.decrement", "Decrement"),
        ("counter.reset", "Reset"),
    ):
        node = find(rt, sid)
        assert (node.role, node.label) == (Role.BUTTON, label)
        assert ActionKind.ACTIVATE in node.actions
    step = find(rt, "counter.step")
    assert (step.role, step.label, step.value) == (Role.TEXT_FIELD, "Step", "1")
    assert not step.state.invalid
    assert rt.snapshot.issues == ()


def test_increment_shows_the_count_as_a_decimal_string(rt: Runtime) -> None:
    receipt = accepted(rt, "counter.increment", ACTIVATE)
    assert receipt.after == receipt.before + 1
    assert not receipt.pending_work
    accepted(rt, "counter.increment", ACTIVATE)
    assert find(rt, "counter.value").value == "2"


def test_decrement_is_disabled_at_zero_and_rejects_without_a_new_generation(
    rt: Runtime,
) -> None:
    assert find(rt, "counter.decrement").state.disabled
    generation = rt.generation
    rejection = rejected(rt, "counter.decrement", ACTIVATE)
    assert rejection.code is ErrorCode.TARGET_DISABLED
    assert rejection.details == {"target": {"kind": "semantic_id", "id": "counter.decrement"}}
    assert rt.generation == generation
    assert find(rt, "counter.value").value == "0"


def test_decrement_enabled_after_increment_and_disabled_again_at_zero(
    rt: Runtime,
) -> None:
    accepted(rt, "counter.increment", ACTIVATE)
    assert not find(rt, "counter.decrement").state.disabled
    accepted(rt, "counter.decrement", ACTIVATE)
    assert find(rt, "counter.value").value == "0"
    assert find(rt, "counter.decrement").state.disabled


def test_reset_returns_to_zero(rt: Runtime) -> None:
    for _ in range(3):
        accepted(rt, "counter.increment", ACTIVATE)
    accepted(rt, "counter.reset", ACTIVATE)
    assert find(rt, "counter.value").value == "0"


def test_increment_uses_the_step(rt: Runtime) -> None:
    accepted(rt, "counter.step", SetText("5"))
    step = find(rt, "counter.step")
    assert (step.value, step.state.invalid) == ("5", False)
    accepted(rt, "counter.increment", ACTIVATE)
    accepted(rt, "counter.increment", ACTIVATE)
    assert find(rt, "counter.value").value == "10"


@pytest.mark.parametrize("text", ["abc", "", "1.5", "two"])
def test_non_integer_step_marks_invalid_and_keeps_the_old_step(
    rt: Runtime, text: str
) -> None:
    accepted(rt, "counter.step", SetText("3"))
    accepted(rt, "counter.step", SetText(text))
    step = find(rt, "counter.step")
    assert step.state.invalid
    assert step.value == text
    accepted(rt, "counter.increment", ACTIVATE)
    assert find(rt, "counter.value").value == "3"


@pytest.mark.parametrize("text", ["9" * 4300, "-1" + "0" * 100, "1" + "0" * 100])
def test_a_step_of_a_hundred_digits_or_more_is_invalid_and_keeps_the_old_step(
    rt: Runtime, text: str
) -> None:
    """A step of 4,300 nines was taken: two increments made a count Python will not turn
    into a decimal string, and the app crashed, ending its session."""
    accepted(rt, "counter.step", SetText("3"))
    accepted(rt, "counter.step", SetText(text))
    assert find(rt, "counter.step").state.invalid
    accepted(rt, "counter.increment", ACTIVATE)
    accepted(rt, "counter.increment", ACTIVATE)
    assert find(rt, "counter.value").value == "6"


def test_a_step_of_ninety_nine_digits_is_taken(rt: Runtime) -> None:
    accepted(rt, "counter.step", SetText("9" * 99))
    assert not find(rt, "counter.step").state.invalid
    accepted(rt, "counter.increment", ACTIVATE)
    assert find(rt, "counter.value").value == "9" * 99


def test_valid_step_after_an_invalid_one_clears_invalid(rt: Runtime) -> None:
    accepted(rt, "counter.step", SetText("x"))
    accepted(rt, "counter.step", SetText("2"))
    assert not find(rt, "counter.step").state.invalid
    accepted(rt, "counter.increment", ACTIVATE)
    assert find(rt, "counter.value").value == "2"


def test_exact_precondition_on_a_stale_generation_changes_nothing(
    rt: Runtime,
) -> None:
    stale = rt.generation
    accepted(rt, "counter.increment", ACTIVATE)
    outcome = rt.perform(
        BySemanticId(SemanticId.new("counter.increment")), ACTIVATE, Exact(stale)
    )
    assert isinstance(outcome, Rejection)
    assert outcome.code is ErrorCode.STALE_GENERATION
    assert find(rt, "counter.value").value == "1"
