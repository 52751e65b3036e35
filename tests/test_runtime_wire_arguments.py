"""What the agent-input decoders say of arguments they refuse: bounded, and naming what came."""

from __future__ import annotations

import pytest

from semledger.runtime._actions import ByPath, PathStep
from semledger.runtime._enums import Role
from semledger.runtime._wire import (
    MAX_PATH_STEPS,
    WireError,
    decode_perform_action,
    decode_read_arguments,
    decode_target,
)

BUTTON = {"role": "button"}
BY_ID = {"kind": "semantic_id", "id": "counter.increment"}


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


# --- what came instead of a string --------------------------------------------------------

NODE_ID = 'expected a node id: a canonical decimal string from "1" to "18446744073709551615"'
GENERATION = 'expected a generation: a canonical decimal string from "0" to "18446744073709551615"'


@pytest.mark.parametrize(
    ("since", "got"),
    [
        (2, 'got the number 2: send it as a string, "2"'),
        (2.0, 'got the number 2.0: send it as a string, "2"'),
        (0, 'got the number 0: send it as a string, "0"'),
        (-1, "got the number -1"),
        (2.5, "got the number 2.5"),
        (2**64, "got the number 18446744073709551616"),
        (10**40, "got a number of over 30 digits"),
        (float("inf"), "got a number past a double's range"),
        (None, "got null"),
        (True, "got true"),
        ([], "got an array"),
        ({}, "got an object"),
    ],
)
def test_a_generation_that_is_no_string_says_what_came(since: object, got: str) -> None:
    """An MCP Inspector's `--tool-arg since=2` sends the number 2: the message said only
    what was expected, read as if 2 were the wrong generation."""
    with pytest.raises(WireError) as raised:
        decode_read_arguments({"since": since})
    assert str(raised.value) == f"since: {GENERATION}, {got}"


def test_a_node_id_typed_as_a_number_is_told_to_be_sent_as_a_string() -> None:
    assert _message(_act({"kind": "node_id", "id": 3})) == (
        f'target.id: {NODE_ID}, got the number 3: send it as a string, "3"'
    )
    # "0" is no node id: no string is suggested.
    assert _message(_act({"kind": "node_id", "id": 0})) == f"target.id: {NODE_ID}, got the number 0"


def test_an_exact_generation_typed_as_a_number_is_told_to_be_sent_as_a_string() -> None:
    arguments = {**_act(BY_ID), "precondition": {"kind": "exact", "generation": 1}}
    assert _message(arguments) == (
        f'precondition.generation: {GENERATION}, got the number 1: send it as a string, "1"'
    )


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            _act({"kind": "semantic_id", "id": 5}),
            "target.id: expected a semantic id (a string), got the number 5: "
            'send it as a string, "5"',
        ),
        (
            _act({"kind": "semantic_id", "id": None}),
            "target.id: expected a semantic id (a string), got null",
        ),
        (
            _act({"kind": "path", "path": [{"role": "button", "label": 5}]}),
            'target.path[0].label: expected a string, got the number 5: send it as a string, "5"',
        ),
        (
            {**_act(BY_ID), "action": {"kind": "set_text", "value": False}},
            "action.value: expected a string, got false",
        ),
    ],
)
def test_other_strings_say_what_came_too(arguments: object, message: str) -> None:
    assert _message(arguments) == message


@pytest.mark.parametrize("since", ["01", "-1", "", "18446744073709551616"])
def test_a_string_that_is_no_generation_is_not_echoed(since: str) -> None:
    with pytest.raises(WireError) as raised:
        decode_read_arguments({"since": since})
    assert str(raised.value) == f"since: {GENERATION}"
