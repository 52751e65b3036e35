"""The agent-input decoders: every rule of SPEC §2.4–§2.6."""

from __future__ import annotations

from typing import Any

import pytest

from semledger.runtime import _wire
from semledger.runtime._actions import (
    ByNodeId,
    ByPath,
    BySemanticId,
    Exact,
    Latest,
    PathStep,
    Scroll,
    SetNumericValue,
    SetSelection,
    SetText,
    SimpleAction,
)
from semledger.runtime._enums import ActionKind, Role, ScrollDirection
from semledger.runtime._ids import SemanticId
from semledger.runtime._wire import (
    WireError,
    decode_action,
    decode_perform_action,
    decode_precondition,
    decode_read_arguments,
    decode_target,
)

U64_MAX = "18446744073709551615"
U64_OVER = "18446744073709551616"

LATEST = {"kind": "latest"}
ACTIVATE = {"kind": "activate"}
BY_ID = {"kind": "semantic_id", "id": "counter.increment"}


def _message(call: Any, value: object) -> str:
    with pytest.raises(WireError) as info:
        call(value)
    return str(info.value)


def test_wire_error_is_a_value_error() -> None:
    assert issubclass(WireError, ValueError)


# --- generations and node ids -------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"), [("0", 0), ("1", 1), ("42", 42), (U64_MAX, 2**64 - 1)]
)
def test_since_accepts_canonical_u64_strings(text: str, expected: int) -> None:
    assert decode_read_arguments({"since": text}) == expected


@pytest.mark.parametrize(
    "since",
    [
        U64_OVER,
        "99999999999999999999",
        "00",
        "01",
        "+1",
        "-1",
        "1.0",
        "1e3",
        " 1",
        "1 ",
        "",
        "0x1",
        "١",
        1,
        0,
        True,
        None,
        1.0,
        [],
        {},
    ],
)
def test_since_rejects_anything_but_a_canonical_u64_string(since: object) -> None:
    message = _message(decode_read_arguments, {"since": since})
    assert message.startswith("since: expected a generation")


def test_no_since_is_none() -> None:
    assert decode_read_arguments({}) is None


def test_read_arguments_reject_other_keys() -> None:
    assert _message(decode_read_arguments, {"since": "1", "full": True}) == ("full: unknown field")


@pytest.mark.parametrize("args", [None, [], "since", 3])
def test_read_arguments_must_be_an_object(args: object) -> None:
    assert _message(decode_read_arguments, args) == "arguments: expected an object"


def test_generation_zero_is_valid_but_node_id_zero_is_not() -> None:
    assert decode_precondition({"kind": "exact", "generation": "0"}) == Exact(0)
    message = _message(decode_target, {"kind": "node_id", "id": "0"})
    assert message.startswith("target.id: expected a node id")


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("1", True),
        (U64_MAX, True),
        (U64_OVER, False),
        ("01", False),
        ("-1", False),
        ("+5", False),
        (" 5", False),
        ("5.0", False),
    ],
)
def test_node_id_target_bounds(text: str, ok: bool) -> None:
    if ok:
        assert decode_target({"kind": "node_id", "id": text}) == ByNodeId(int(text))
    else:
        with pytest.raises(WireError, match=r"^target\.id: "):
            decode_target({"kind": "node_id", "id": text})


def test_node_id_must_be_a_string_not_an_integer() -> None:
    with pytest.raises(WireError, match=r"^target\.id: "):
        decode_target({"kind": "node_id", "id": 5})


# --- semantic ids -------------------------------------------------------------------------


def test_semantic_id_target_keeps_the_exact_text() -> None:
    target = decode_target({"kind": "semantic_id", "id": "Counter.Increment"})
    assert target == BySemanticId(SemanticId("Counter.Increment"))
    assert isinstance(target, BySemanticId)
    assert isinstance(target.id, SemanticId)


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "a b",
        "tab\there",
        "nl\n",
        "\u00a0x",
        "x\u3000",
        "\u2028",
        "\u200a",
        "\x7f",
        "\x9f",
        "é" * 128,
    ],
)
def test_semantic_id_target_uses_the_runtime_rules(bad: str) -> None:
    from semledger.runtime._ids import semantic_id_problem

    problem = semantic_id_problem(bad)
    assert problem is not None
    message = _message(decode_target, {"kind": "semantic_id", "id": bad})
    assert message == f"target.id: expected a semantic id: {problem}"


def test_semantic_id_of_255_bytes_is_accepted() -> None:
    text = "é" * 127 + "x"
    assert len(text.encode()) == 255
    assert decode_target({"kind": "semantic_id", "id": text}) == BySemanticId(SemanticId(text))


def test_decoder_delegates_semantic_id_checks_to_the_runtime(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_wire, "semantic_id_problem", lambda text: "vetoed by the runtime")
    message = _message(decode_target, {"kind": "semantic_id", "id": "fine"})
    assert message == "target.id: expected a semantic id: vetoed by the runtime"


@pytest.mark.parametrize("bad", [5, None, True, ["a"]])
def test_semantic_id_must_be_a_string(bad: object) -> None:
    with pytest.raises(WireError, match=r"^target\.id: expected a semantic id"):
        decode_target({"kind": "semantic_id", "id": bad})


# --- targets ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ({"id": "x"}, "target.kind: required"),
        ({"kind": "ref", "id": "x"}, "target.kind: expected one of semantic_id, node_id, path"),
        ({"kind": "semantic_id"}, "target.id: required"),
        ({"kind": "semantic_id", "id": "x", "extra": 1}, "target.extra: unknown field"),
        ({"kind": "node_id", "id": "1", "path": []}, "target.path: unknown field"),
        ({"kind": "path"}, "target.path: required"),
        ({"kind": "path", "path": []}, "target.path: expected at least one path step"),
        (
            {"kind": "path", "path": {"role": "button"}},
            "target.path: expected an array of path steps",
        ),
        ("x", "target: expected an object"),
    ],
)
def test_target_shape_rules(target: object, message: str) -> None:
    assert _message(decode_target, target) == message


def _path(*steps: object) -> dict[str, Any]:
    return {"kind": "path", "path": list(steps)}


def test_path_steps_decode_with_defaults() -> None:
    target = decode_target(
        _path(
            {"role": "list"},
            {"index": 2, "label": "Buy milk", "value": None},
            {"semantic_id": "todo.item.1.done", "role": None, "label": None},
            {"value": ""},
        )
    )
    assert target == ByPath(
        (
            PathStep(role=Role.LIST),
            PathStep(index=2, label="Buy milk"),
            PathStep(semantic_id=SemanticId("todo.item.1.done")),
            PathStep(value=""),
        )
    )


@pytest.mark.parametrize(
    ("step", "message"),
    [
        ({}, "target.path[1]: expected at least one filter of role, label, value, semantic_id"),
        (
            {"index": 3},
            "target.path[1]: expected at least one filter of role, label, value, semantic_id",
        ),
        (
            {"role": None, "label": None, "value": None, "semantic_id": None, "index": 0},
            "target.path[1]: expected at least one filter of role, label, value, semantic_id",
        ),
        ({"role": "button", "name": "x"}, "target.path[1].name: unknown field"),
        ({"role": "none"}, "target.path[1].role: expected a role other than none"),
        ({"role": "Button"}, "target.path[1].role: expected a role: "),
        ({"role": "textbox"}, "target.path[1].role: expected a role: "),
        ({"role": 3}, "target.path[1].role: expected a role: "),
        ({"role": "button", "index": -1}, "target.path[1].index: expected an integer >= 0"),
        ({"role": "button", "index": True}, "target.path[1].index: expected an integer >= 0"),
        ({"role": "button", "index": False}, "target.path[1].index: expected an integer >= 0"),
        ({"role": "button", "index": 1.5}, "target.path[1].index: expected an integer >= 0"),
        ({"role": "button", "index": "1"}, "target.path[1].index: expected an integer >= 0"),
        ({"role": "button", "index": None}, "target.path[1].index: expected an integer >= 0"),
        ({"label": 5}, "target.path[1].label: expected a string"),
        ({"value": False}, "target.path[1].value: expected a string"),
        ({"semantic_id": "has space"}, "target.path[1].semantic_id: expected a semantic id: "),
        ("button", "target.path[1]: expected an object"),
    ],
)
def test_path_step_rules(step: object, message: str) -> None:
    assert _message(decode_target, _path({"role": "list"}, step)).startswith(message)


def test_a_number_with_no_fraction_is_an_integer_as_the_input_schema_says() -> None:
    """JSON Schema's "integer" (the tools' input schemas) takes 1.0: so does the decoder."""
    target = decode_target(_path({"role": "button", "index": 1.0}))
    assert target == ByPath((PathStep(index=1, role=Role.BUTTON),))
    assert isinstance(target, ByPath)
    assert type(target.steps[0].index) is int
    action = decode_action({"kind": "set_selection", "start": 0.0, "end": 2.0})
    assert action == SetSelection(0, 2)


def test_role_filter_lists_the_roles_but_not_none() -> None:
    message = _message(decode_target, _path({"role": "bogus"}))
    listed = message.split(": ", 2)[2].split(", ")
    assert "none" not in listed
    assert set(listed) == {r.value for r in Role} - {"none"}


@pytest.mark.parametrize("role", [r for r in Role if r is not Role.NONE])
def test_every_role_but_none_is_a_path_filter(role: Role) -> None:
    assert decode_target(_path({"role": role.value})) == ByPath((PathStep(role=role),))


def test_large_path_index_is_kept_for_resolution_to_reject() -> None:
    """Past 2**64 - 1 it is taken as that, which the log can hold: out of range either way."""
    target = decode_target(_path({"role": "button", "index": 10**30}))
    assert target == ByPath((PathStep(index=2**64 - 1, role=Role.BUTTON),))
    assert decode_target(_path({"role": "button", "index": 2**64 - 2})) == ByPath(
        (PathStep(index=2**64 - 2, role=Role.BUTTON),)
    )


@pytest.mark.parametrize(
    ("index", "taken"), [(2.0, 2), (1e30, 2**64 - 1), (float("inf"), 2**64 - 1)]
)
def test_a_path_index_written_as_a_float_with_no_fraction_is_an_integer(
    index: float, taken: int
) -> None:
    """``1e400`` reads as infinite: past a double's range, and so past 2**64 - 1 too."""
    target = decode_target(_path({"role": "button", "index": index}))
    assert target == ByPath((PathStep(index=taken, role=Role.BUTTON),))


# --- actions ------------------------------------------------------------------------------

SIMPLE = [
    "activate",
    "focus",
    "submit",
    "select",
    "expand",
    "collapse",
    "dismiss",
    "increment",
    "decrement",
    "show_menu",
]


@pytest.mark.parametrize("kind", SIMPLE)
def test_simple_actions(kind: str) -> None:
    assert decode_action({"kind": kind}) == SimpleAction(ActionKind(kind))
    assert _message(decode_action, {"kind": kind, "value": "x"}) == "action.value: unknown field"


def test_payload_actions() -> None:
    assert decode_action({"kind": "set_text", "value": ""}) == SetText("")
    assert decode_action({"kind": "set_text", "value": "héllo"}) == SetText("héllo")
    for direction in ScrollDirection:
        action = {"kind": "scroll", "direction": direction.value}
        assert decode_action(action) == Scroll(direction)
    assert decode_action({"kind": "set_numeric_value", "value": 3}) == SetNumericValue(3.0)
    assert decode_action({"kind": "set_numeric_value", "value": -2.5}) == SetNumericValue(-2.5)
    assert decode_action({"kind": "set_selection", "start": 0, "end": 4}) == SetSelection(0, 4)


def test_set_numeric_value_holds_a_float() -> None:
    action = decode_action({"kind": "set_numeric_value", "value": 7})
    assert isinstance(action, SetNumericValue)
    assert type(action.value) is float


@pytest.mark.parametrize(
    ("action", "message"),
    [
        ({}, "action.kind: required"),
        ({"kind": "click"}, "action.kind: expected an action kind: "),
        ({"kind": "Activate"}, "action.kind: expected an action kind: "),
        ({"kind": None}, "action.kind: expected an action kind: "),
        ({"kind": "set_text"}, "action.value: required"),
        ({"kind": "set_text", "value": 5}, "action.value: expected a string"),
        ({"kind": "set_text", "value": None}, "action.value: expected a string"),
        ({"kind": "set_text", "value": "x", "text": "y"}, "action.text: unknown field"),
        ({"kind": "scroll"}, "action.direction: required"),
        (
            {"kind": "scroll", "direction": "sideways"},
            "action.direction: expected a scroll direction: ",
        ),
        ({"kind": "scroll", "direction": "Up"}, "action.direction: expected a scroll direction: "),
        ({"kind": "scroll", "direction": "up", "amount": 1}, "action.amount: unknown field"),
        ({"kind": "set_numeric_value"}, "action.value: required"),
        ({"kind": "set_numeric_value", "value": True}, "action.value: expected a finite number"),
        ({"kind": "set_numeric_value", "value": "3"}, "action.value: expected a finite number"),
        (
            {"kind": "set_numeric_value", "value": float("nan")},
            "action.value: expected a finite number",
        ),
        (
            {"kind": "set_numeric_value", "value": float("inf")},
            "action.value: expected a finite number",
        ),
        (
            {"kind": "set_numeric_value", "value": -float("inf")},
            "action.value: expected a finite number",
        ),
        ({"kind": "set_numeric_value", "value": 10**400}, "action.value: expected a finite number"),
        ({"kind": "set_selection", "start": 0}, "action.end: required"),
        (
            {"kind": "set_selection", "start": -1, "end": 0},
            "action.start: expected an integer >= 0",
        ),
        (
            {"kind": "set_selection", "start": 0, "end": True},
            "action.end: expected an integer >= 0",
        ),
        (
            {"kind": "set_selection", "start": 0.5, "end": 1},
            "action.start: expected an integer >= 0",
        ),
        (
            {"kind": "set_selection", "start": 0, "end": 1, "caret": 1},
            "action.caret: unknown field",
        ),
        (["activate"], "action: expected an object"),
    ],
)
def test_action_rules(action: object, message: str) -> None:
    assert _message(decode_action, action).startswith(message)


# --- preconditions ------------------------------------------------------------------------


def test_preconditions() -> None:
    assert decode_precondition({"kind": "latest"}) == Latest()
    assert decode_precondition({"kind": "exact", "generation": "7"}) == Exact(7)
    assert decode_precondition({"kind": "exact", "generation": U64_MAX}) == Exact(2**64 - 1)


@pytest.mark.parametrize(
    ("precondition", "message"),
    [
        ({}, "precondition.kind: required"),
        ({"kind": "any"}, "precondition.kind: expected one of latest, exact"),
        ({"kind": "latest", "generation": "1"}, "precondition.generation: unknown field"),
        ({"kind": "exact"}, "precondition.generation: required"),
        ({"kind": "exact", "generation": 7}, "precondition.generation: expected a generation"),
        (
            {"kind": "exact", "generation": U64_OVER},
            "precondition.generation: expected a generation",
        ),
        ({"kind": "exact", "generation": "07"}, "precondition.generation: expected a generation"),
        (None, "precondition: expected an object"),
    ],
)
def test_precondition_rules(precondition: object, message: str) -> None:
    assert _message(decode_precondition, precondition).startswith(message)


# --- perform_action as a whole ------------------------------------------------------------


def test_perform_action_decodes_all_three() -> None:
    assert decode_perform_action(
        {"target": BY_ID, "action": {"kind": "set_text", "value": "3"}, "precondition": LATEST}
    ) == (BySemanticId(SemanticId("counter.increment")), SetText("3"), Latest())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"action": ACTIVATE, "precondition": LATEST}, "target: required"),
        ({"target": BY_ID, "precondition": LATEST}, "action: required"),
        ({"target": BY_ID, "action": ACTIVATE}, "precondition: required"),
        ({"target": BY_ID, "action": ACTIVATE, "precondition": LATEST, "x": 1}, "x: unknown field"),
        (
            {"target": BY_ID, "action": ACTIVATE, "precondition": None},
            "precondition: expected an object",
        ),
        (
            {"target": None, "action": ACTIVATE, "precondition": LATEST},
            "target: expected an object",
        ),
        ([], "arguments: expected an object"),
    ],
)
def test_perform_action_argument_rules(args: object, message: str) -> None:
    assert _message(decode_perform_action, args) == message


def test_perform_action_reports_the_first_bad_part_with_its_path() -> None:
    args = {
        "target": _path({"role": "list"}, {"role": "button", "index": -1}),
        "action": ACTIVATE,
        "precondition": LATEST,
    }
    assert _message(decode_perform_action, args) == (
        "target.path[1].index: expected an integer >= 0"
    )
