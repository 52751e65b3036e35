"""GenerationChecker: the generation rules of SPEC §3, input by input."""

from __future__ import annotations

import re

import attrs
import pytest

from semledger.examples import counter
from semledger.replay import GenerationChecker, InvariantViolation
from semledger.runtime import (
    ActionKind,
    AppRuntime,
    BySemanticId,
    Exact,
    Latest,
    Receipt,
    Rejection,
    SemanticsSnapshot,
    SimpleAction,
)

ACTIVATE = SimpleAction(ActionKind.ACTIVATE)


def _pressed(runtime: AppRuntime[object, object], semantic_id: str) -> object:
    return runtime.perform(BySemanticId(semantic_id), ACTIVATE, Latest())


def _one_step() -> tuple[SemanticsSnapshot, SemanticsSnapshot, object]:
    runtime = AppRuntime(counter.app)
    before = runtime.snapshot
    outcome = _pressed(runtime, "counter.increment")
    return before, runtime.snapshot, outcome


def _violation(checker: GenerationChecker, current: object, outcome: object = None) -> str:
    with pytest.raises(InvariantViolation) as raised:
        checker.check(current, outcome)  # type: ignore[arg-type]
    assert raised.value.check == "generation"
    return str(raised.value)


def test_every_input_of_a_session_that_keeps_the_rules_passes() -> None:
    runtime = AppRuntime(counter.app)
    checker = GenerationChecker(runtime.snapshot)
    pressed = _pressed(runtime, "counter.increment")
    checker.check(runtime.snapshot, pressed)
    stale = runtime.perform(BySemanticId("counter.reset"), ACTIVATE, Exact(0))
    checker.check(runtime.snapshot, stale)
    runtime.deliver(counter.Increment())
    checker.check(runtime.snapshot)
    answered = runtime.dispatch_command("Activate")
    checker.check(runtime.snapshot, answered)
    assert checker.steps == 4


@pytest.mark.parametrize("generation", [3, 6])
def test_a_generation_that_advances_by_several_in_one_input_is_a_violation(
    generation: int,
) -> None:
    """1 -> 6 in one step passed: an input commits once, and a commit advances by one."""
    before, after, _ = _one_step()
    said = _violation(GenerationChecker(before), attrs.evolve(after, generation=generation))
    assert said == (
        f"step 1: the generation advanced by {generation - 1}, from 1 to {generation},"
        " in one input"
    )


@pytest.mark.parametrize(
    "receipt", [Receipt(7, 9, False), Receipt(1, 1, False), Receipt(0, 2, False)]
)
def test_a_receipt_that_contradicts_the_snapshots_is_a_violation(receipt: Receipt) -> None:
    """Receipt(7, 9) passed for snapshots that went from generation 1 to 2."""
    before, after, _ = _one_step()
    said = _violation(GenerationChecker(before), after, receipt)
    assert said == (
        f"step 1: the receipt says generation {receipt.before} to {receipt.after}, but the"
        " snapshot went from 1 to 2"
    )


def test_a_snapshot_that_changed_without_a_new_generation_names_the_changed_nodes() -> None:
    before, after, _ = _one_step()
    (value,) = after.find("counter.value")
    said = _violation(GenerationChecker(before), attrs.evolve(after, generation=1))
    assert re.fullmatch(
        r"step 1: the snapshot changed without a new generation \(nodes ([\d, ]+) changed;"
        r" still generation 1\)",
        said,
    ), said
    assert str(value) in re.findall(r"\d+", said.split("(nodes ")[1].split(" changed")[0])


@pytest.mark.parametrize(
    ("call", "says"),
    [
        (
            lambda s: GenerationChecker(None),  # type: ignore[arg-type]
            "previous: expected a SemanticsSnapshot (runtime.snapshot), got NoneType None",
        ),
        (
            lambda s: GenerationChecker(s).check(None),  # type: ignore[arg-type]
            "current: expected a SemanticsSnapshot (runtime.snapshot), got NoneType None",
        ),
        (
            lambda s: GenerationChecker(s).check(s, "hello"),  # type: ignore[arg-type]
            "outcome: expected a Receipt, a Rejection, a diagnostics answer (a dict) or None,"
            " got str 'hello'",
        ),
    ],
)
def test_an_argument_of_another_kind_is_a_type_error_that_names_it(
    call: object, says: str
) -> None:
    """None for a snapshot raised a bare AttributeError, and an outcome "hello" passed."""
    snapshot = AppRuntime(counter.app).snapshot
    with pytest.raises(TypeError, match=f"^{re.escape(says)}$"):
        call(snapshot)  # type: ignore[operator]


def test_a_generation_that_goes_back_is_a_violation() -> None:
    """2 -> 1 with the snapshot changed passed: a generation never goes back."""
    before, after, _ = _one_step()
    said = _violation(GenerationChecker(after), before)
    assert said == "step 1: the generation went back from 2 to 1"


def test_a_new_generation_with_nothing_public_changed_is_a_violation() -> None:
    before, _, _ = _one_step()
    said = _violation(GenerationChecker(before), attrs.evolve(before, generation=2))
    assert said == "step 1: generation 2 but nothing public changed"


def test_a_rejection_that_advanced_the_generation_is_a_violation() -> None:
    runtime = AppRuntime(counter.app)
    before = runtime.snapshot
    rejected = runtime.perform(BySemanticId("counter.decrement"), ACTIVATE, Latest())
    assert isinstance(rejected, Rejection)
    _, after, _ = _one_step()
    said = _violation(GenerationChecker(before), after, rejected)
    assert said == "step 1: a target_disabled rejection advanced the generation"

