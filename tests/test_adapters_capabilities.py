"""Capabilities and the refusal of a plan before it starts."""

from __future__ import annotations

import attrs
import pytest

from semledger.adapters import (
    ACTION_GATES,
    CAPABILITY_FLAGS,
    CAPABILITY_GATES,
    EXECUTOR_ACTIONS,
    SURFACE_ACTIONS,
    Capabilities,
    CapabilityError,
    DataError,
    MissingCapability,
    check_plan,
    missing_capabilities,
)

SEED_FLAGS = (
    "dialogs", "frames", "windows", "upload", "drag", "trace", "pick", "observe", "webmcp",
    "screenshot", "restore",
)  # fmt: skip


def test_there_are_exactly_the_seeds_eleven_flags_all_false_by_default() -> None:
    assert CAPABILITY_FLAGS == SEED_FLAGS
    assert attrs.asdict(Capabilities()) == dict.fromkeys(SEED_FLAGS, False)


def test_gates_are_the_seeds_table() -> None:
    assert dict(ACTION_GATES) == {
        "dialog": "dialogs",
        "switchFrame": "frames",
        "switchWindow": "windows",
        "closeOtherWindows": "windows",
        "resizeWindow": "windows",
        "upload": "upload",
        "dragTo": "drag",
        "screenshot": "screenshot",
    }
    assert set(CAPABILITY_GATES) == set(SEED_FLAGS)
    assert set(ACTION_GATES) <= set(SURFACE_ACTIONS)


def test_ungated_actions_pass_with_no_capabilities() -> None:
    ungated = [a for a in SURFACE_ACTIONS if a not in ACTION_GATES]
    assert "click" in ungated
    assert "navigate" in ungated
    check_plan(Capabilities(), [*ungated, *EXECUTOR_ACTIONS])


def test_a_plan_needing_a_missing_capability_is_refused_naming_each_step_and_flag() -> None:
    plan = ["navigate", "upload", "click", "dragTo", "switchWindow"]
    with pytest.raises(CapabilityError) as info:
        check_plan(Capabilities(drag=True), plan)
    assert info.value.missing == (
        MissingCapability(1, "upload", "upload"),
        MissingCapability(4, "switchWindow", "windows"),
    )
    message = str(info.value)
    assert "upload" in message
    assert "switchWindow" in message
    assert "'windows'" in message


def test_a_capability_that_is_present_lets_its_actions_through() -> None:
    full = Capabilities(**dict.fromkeys(SEED_FLAGS, True))
    assert missing_capabilities(full, list(ACTION_GATES)) == []


def test_refusal_happens_before_anything_runs() -> None:
    performed: list[str] = []

    def run(capabilities: Capabilities, plan: list[str]) -> None:
        check_plan(capabilities, plan)
        performed.extend(plan)

    with pytest.raises(CapabilityError):
        run(Capabilities(), ["click", "click", "dialog"])
    assert performed == []


def test_an_unknown_action_is_a_data_error_not_an_ungated_action() -> None:
    with pytest.raises(DataError) as info:
        check_plan(Capabilities(), ["click", "clikc"])
    assert info.value.path == "plan[1]"
