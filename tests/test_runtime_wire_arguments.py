"""What the agent-input decoders say of arguments they refuse: bounded, and naming what came."""

from __future__ import annotations

import pytest

from semledger.runtime._actions import ByPath, PathStep
from semledger.runtime._enums import Role
from semledger.runtime._wire import (
    MAX_PATH_STEPS,
    WireError,
    decode_perform_action,
    decode_target,
)

BUTTON = {"role": "button"}


def _message(arguments: object) -> str:
    with pytest.raises(WireError) as raised:
        decode_perform_action(arguments)
    return str(raised.value)


def _act(target: object) -> dict[str, object]:
    return {"target": target, "action": {"kind": "activate"}, "precondition": {"kind": "latest"}}


# --- the number of path steps -------------------------------------------------------------


def test_a_path_of_the_most_steps_allowed_decodes() -> None:
    target, _, _ = decode_perform_action(_act({"kind": "path", "path": [BUTTON] * MAX_PATH_STEPS}))
    assert target == ByPath((PathStep(role=Role.BUTTON),) * MAX_PATH_STEPS)


@pytest.mark.parametrize("steps", [MAX_PATH_STEPS + 1, 200_000])
def test_a_longer_path_is_refused_by_its_length_without_echoing_it(steps: int) -> None:
    """No tree is that deep (a view nests at most 256 levels), and a path echoed in a
    rejection's details repeats every step with every filter: a 3.6 MB call got 31 MB."""
    message = _message(_act({"kind": "path", "path": [BUTTON] * steps}))
    assert message == f"target.path: expected at most {MAX_PATH_STEPS} path steps, got {steps}"


def test_a_too_long_path_is_refused_before_its_steps_are_read() -> None:
    message = _message(_act({"kind": "path", "path": ["not a step"] * (MAX_PATH_STEPS + 1)}))
    assert message.startswith("target.path: expected at most")


def test_a_logged_target_is_read_whole_as_it_was_carried_out() -> None:
    """Re-execution (and a resume) decodes the log's targets alone: a longer path logged
    before the bound was set is still read, its session not made unreadable."""
    steps = MAX_PATH_STEPS + 1
    target = decode_target({"kind": "path", "path": [BUTTON] * steps})
    assert target == ByPath((PathStep(role=Role.BUTTON),) * steps)
    with pytest.raises(WireError, match="at most"):
        decode_target({"kind": "path", "path": [BUTTON] * steps}, max_steps=MAX_PATH_STEPS)
