"""Encoders' exact shapes, and decode(encode(x)) == x over generated values."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from semledger.hosts import PERFORM_ACTION, READ_SEMANTICS
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
from semledger.runtime._enums import (
    ActionKind,
    Checked,
    ErrorCode,
    Live,
    Relation,
    Role,
    ScrollDirection,
)
from semledger.runtime._ids import U64_MAX, SemanticId
from semledger.runtime._node import (
    AmbiguousRelationTarget,
    Announcement,
    Collection,
    DuplicateSemanticId,
    Frame,
    MissingRelationTarget,
    NodeState,
    Numeric,
    Point,
    SemanticsNode,
    Size,
    TextInfo,
    TextSelection,
)
from semledger.runtime._outcomes import Receipt, Rejection
from semledger.runtime._reads import Delta, Full, Unchanged
from semledger.runtime._wire import (
    WireError,
    decode_action,
    decode_announcement,
    decode_issue,
    decode_node,
    decode_precondition,
    decode_read,
    decode_target,
    encode_action,
    encode_announcement,
    encode_issue,
    encode_node,
    encode_precondition,
    encode_read,
    encode_receipt,
    encode_rejection,
    encode_target,
)

# --- strategies ---------------------------------------------------------------------------

node_ids = st.integers(1, U64_MAX)
generations = st.integers(0, U64_MAX)
semantic_ids = st.text(min_size=1, max_size=12).map(SemanticId.parse).filter(bool)
short_text = st.text(max_size=12)
numbers = st.integers(-(10**6), 10**6) | st.floats(allow_nan=False, allow_infinity=False)
small_ints = st.integers(-5, 10**6)
nonneg = st.integers(0, 10**6)


def _opt(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.none() | strategy


states = st.builds(
    NodeState,
    focused=st.booleans(),
    disabled=st.booleans(),
    selected=st.booleans(),
    pressed=st.booleans(),
    checked=_opt(st.sampled_from(Checked)),
    expanded=_opt(st.booleans()),
    invalid=st.booleans(),
    required=st.booleans(),
    read_only=st.booleans(),
    busy=st.booleans(),
    multiline=st.booleans(),
    password=st.booleans(),
    modal=st.booleans(),
)
relations = st.dictionaries(
    st.sampled_from(Relation), st.lists(node_ids, min_size=1, max_size=3).map(tuple)
).map(lambda d: tuple((r, d[r]) for r in Relation if r in d))
nodes = st.builds(
    SemanticsNode,
    node_id=node_ids,
    semantic_id=_opt(semantic_ids),
    role=st.sampled_from(Role),
    children=st.lists(node_ids, max_size=4).map(tuple),
    level=_opt(small_ints),
    url=_opt(short_text),
    label=_opt(short_text),
    value=_opt(short_text),
    description=_opt(short_text),
    state=states,
    numeric=_opt(
        st.builds(
            Numeric,
            current=_opt(numbers),
            min=_opt(numbers),
            max=_opt(numbers),
            step=_opt(numbers),
            value_text=_opt(short_text),
        )
    ),
    text=_opt(
        st.builds(
            TextInfo,
            selection=_opt(st.builds(TextSelection, nonneg, nonneg)),
            caret=_opt(nonneg),
            editable=st.booleans(),
        )
    ),
    collection=_opt(
        st.builds(
            Collection,
            row_index=_opt(small_ints),
            row_count=_opt(small_ints),
            row_span=_opt(small_ints),
            column_index=_opt(small_ints),
            column_count=_opt(small_ints),
            column_span=_opt(small_ints),
            set_size=_opt(small_ints),
            set_position=_opt(small_ints),
        )
    ),
    relations=relations,
    live=st.sampled_from(Live),
    atomic=st.booleans(),
    actions=st.lists(st.sampled_from(ActionKind), unique=True).map(tuple),
    focus_order=_opt(small_ints),
    frame=st.builds(Frame, st.builds(Point, numbers, numbers), st.builds(Size, numbers, numbers)),
)
issues = st.one_of(
    st.builds(DuplicateSemanticId, semantic_ids, st.lists(node_ids, max_size=3).map(tuple)),
    st.builds(MissingRelationTarget, node_ids, st.sampled_from(Relation), semantic_ids),
    st.builds(
        AmbiguousRelationTarget,
        node_ids,
        st.sampled_from(Relation),
        semantic_ids,
        st.lists(node_ids, max_size=3).map(tuple),
    ),
)
announcements = st.builds(
    Announcement, node_ids, generations, st.sampled_from(Live), st.booleans(), short_text
)
fulls = st.builds(
    Full,
    generation=generations,
    root=_opt(node_ids),
    focused=_opt(node_ids),
    nodes=st.lists(nodes, max_size=3).map(tuple),
    issues=st.lists(issues, max_size=3).map(tuple),
)
deltas = st.builds(
    Delta,
    from_generation=generations,
    to_generation=generations,
    root=_opt(node_ids),
    focused=_opt(node_ids),
    upserted=st.lists(nodes, max_size=3).map(tuple),
    removed=st.lists(node_ids, max_size=3).map(tuple),
    issues=st.lists(issues, max_size=3).map(tuple),
    announcements=st.lists(announcements, max_size=3).map(tuple),
)
reads = st.one_of(fulls, deltas, st.builds(Unchanged, generations))

steps = st.builds(
    PathStep,
    index=nonneg,
    role=_opt(st.sampled_from([r for r in Role if r is not Role.NONE])),
    label=_opt(short_text),
    value=_opt(short_text),
    semantic_id=_opt(semantic_ids),
).filter(PathStep.has_filter)
targets = st.one_of(
    st.builds(BySemanticId, semantic_ids),
    st.builds(ByNodeId, node_ids),
    st.builds(ByPath, st.lists(steps, min_size=1, max_size=4).map(tuple)),
)
actions = st.one_of(
    st.builds(
        SimpleAction,
        st.sampled_from(
            [
                k
                for k in ActionKind
                if k.value not in {"set_text", "scroll", "set_numeric_value", "set_selection"}
            ]
        ),
    ),
    st.builds(SetText, st.text()),
    st.builds(Scroll, st.sampled_from(ScrollDirection)),
    st.builds(SetNumericValue, st.floats(allow_nan=False, allow_infinity=False)),
    st.builds(SetSelection, nonneg, nonneg),
)
preconditions = st.one_of(st.just(Latest()), st.builds(Exact, generations))


def _via_json(value: object) -> Any:
    return json.loads(json.dumps(value, allow_nan=False))


READ_VALIDATOR = jsonschema.Draft202012Validator(READ_SEMANTICS.output_schema)

# --- round trips --------------------------------------------------------------------------


@settings(max_examples=300)
@given(nodes)
def test_node_round_trips_through_json(node: SemanticsNode) -> None:
    assert decode_node(_via_json(encode_node(node))) == node


@given(issues)
def test_issue_round_trips(issue: Any) -> None:
    assert decode_issue(_via_json(encode_issue(issue))) == issue


@given(announcements)
def test_announcement_round_trips(announcement: Announcement) -> None:
    assert decode_announcement(_via_json(encode_announcement(announcement))) == announcement


@settings(max_examples=100)
@given(reads)
def test_read_round_trips_and_validates_against_the_output_schema(read: Any) -> None:
    wire = _via_json(encode_read(read))
    assert decode_read(wire) == read
    READ_VALIDATOR.validate({"ok": True, "value": wire})


@given(targets)
def test_target_round_trips(target: Any) -> None:
    assert decode_target(_via_json(encode_target(target))) == target


@given(actions)
def test_action_round_trips(action: Any) -> None:
    assert decode_action(_via_json(encode_action(action))) == action


@given(preconditions)
def test_precondition_round_trips(precondition: Any) -> None:
    assert decode_precondition(_via_json(encode_precondition(precondition))) == precondition


# --- exact shapes -------------------------------------------------------------------------

BUTTON = SemanticsNode(
    node_id=7,
    semantic_id=SemanticId("counter.increment"),
    role=Role.BUTTON,
    label="Increment",
    actions=(ActionKind.ACTIVATE, ActionKind.FOCUS),
    relations=((Relation.CONTROLS, (3,)),),
    frame=Frame(Point(1, 2.5), Size(80, 24)),
)

BUTTON_WIRE = {
    "node_id": "7",
    "semantic_id": "counter.increment",
    "role": "button",
    "level": None,
    "url": None,
    "label": "Increment",
    "value": None,
    "description": None,
    "state": {
        "focused": False,
        "disabled": False,
        "selected": False,
        "pressed": False,
        "checked": None,
        "expanded": None,
        "invalid": False,
        "required": False,
        "read_only": False,
        "busy": False,
        "multiline": False,
        "password": False,
        "modal": False,
    },
    "numeric": None,
    "text": None,
    "collection": None,
    "relations": {
        "labelled_by": [],
        "described_by": [],
        "controls": ["3"],
        "error_message": [],
        "active_descendant": [],
    },
    "live": "off",
    "atomic": False,
    "actions": ["activate", "focus"],
    "focus_order": None,
    "frame": {"origin": {"x": 1, "y": 2.5}, "size": {"width": 80, "height": 24}},
    "children": [],
}


def test_node_encodes_to_the_exact_wire_shape() -> None:
    wire = encode_node(BUTTON)
    assert wire == BUTTON_WIRE
    assert list(wire) == list(BUTTON_WIRE)
    assert json.dumps(wire)  # plain JSON types only


def test_node_with_every_part_present() -> None:
    node = SemanticsNode(
        node_id=2,
        semantic_id=None,
        role=Role.TEXT_FIELD,
        children=(3, 4),
        state=NodeState(checked=Checked.MIXED, expanded=True),
        numeric=Numeric(current=1.5, min=0, max=10, step=0.5, value_text="1.5 kg"),
        text=TextInfo(selection=TextSelection(1, 3), caret=3, editable=True),
        collection=Collection(row_index=1, row_count=4, set_size=4, set_position=2),
        live=Live.POLITE,
    )
    wire = encode_node(node)
    assert wire["state"]["checked"] == "mixed"
    assert wire["state"]["expanded"] is True
    assert wire["numeric"] == {
        "current": 1.5,
        "min": 0,
        "max": 10,
        "step": 0.5,
        "value_text": "1.5 kg",
    }
    assert wire["text"] == {"selection": {"start": 1, "end": 3}, "caret": 3, "editable": True}
    assert wire["collection"] == {
        "row_index": 1,
        "row_count": 4,
        "row_span": None,
        "column_index": None,
        "column_count": None,
        "column_span": None,
        "set_size": 4,
        "set_position": 2,
    }
    assert wire["children"] == ["3", "4"]
    assert wire["live"] == "polite"
    assert len(wire["state"]) == 13
    assert decode_node(wire) == node


def test_read_shapes() -> None:
    full = encode_read(Full(3, 1, None, (BUTTON,), ()))
    assert full == {
        "kind": "full",
        "generation": "3",
        "root": "1",
        "focused": None,
        "nodes": [BUTTON_WIRE],
        "issues": [],
    }
    delta = encode_read(
        Delta(3, 4, 1, 7, (BUTTON,), (9, 8), (), (Announcement(7, 4, Live.POLITE, True, "hi"),))
    )
    assert delta == {
        "kind": "delta",
        "from": "3",
        "to": "4",
        "root": "1",
        "focused": "7",
        "upserted": [BUTTON_WIRE],
        "removed": ["9", "8"],
        "issues": [],
        "announcements": [
            {"node_id": "7", "generation": "4", "live": "polite", "atomic": True, "text": "hi"}
        ],
    }
    assert encode_read(Unchanged(0)) == {"kind": "unchanged", "generation": "0"}


def test_issue_shapes() -> None:
    sid = SemanticId("gallery.duplicate")
    assert encode_issue(DuplicateSemanticId(sid, (4, 5))) == {
        "kind": "duplicate_semantic_id",
        "semantic_id": "gallery.duplicate",
        "nodes": ["4", "5"],
    }
    assert encode_issue(MissingRelationTarget(4, Relation.LABELLED_BY, sid)) == {
        "kind": "missing_relation_target",
        "source": "4",
        "relation": "labelled_by",
        "semantic_id": "gallery.duplicate",
    }
    assert encode_issue(AmbiguousRelationTarget(4, Relation.CONTROLS, sid, (5, 6))) == {
        "kind": "ambiguous_relation_target",
        "source": "4",
        "relation": "controls",
        "semantic_id": "gallery.duplicate",
        "nodes": ["5", "6"],
    }


def test_u64_ids_stay_exact_on_the_wire() -> None:
    node = SemanticsNode(node_id=U64_MAX, semantic_id=None, role=Role.GROUP)
    assert encode_node(node)["node_id"] == "18446744073709551615"
    assert encode_read(Unchanged(U64_MAX))["generation"] == "18446744073709551615"


def test_path_target_echo_has_every_filter_and_the_index() -> None:
    target = ByPath((PathStep(role=Role.LIST), PathStep(index=2, label="Buy milk")))
    assert encode_target(target) == {
        "kind": "path",
        "path": [
            {"index": 0, "role": "list", "label": None, "value": None, "semantic_id": None},
            {"index": 2, "role": None, "label": "Buy milk", "value": None, "semantic_id": None},
        ],
    }
    assert encode_target(BySemanticId(SemanticId("a.b"))) == {"kind": "semantic_id", "id": "a.b"}
    assert encode_target(ByNodeId(12)) == {"kind": "node_id", "id": "12"}


def test_action_and_precondition_shapes() -> None:
    assert encode_action(SimpleAction(ActionKind.SHOW_MENU)) == {"kind": "show_menu"}
    assert encode_action(SetText("x")) == {"kind": "set_text", "value": "x"}
    assert encode_action(Scroll(ScrollDirection.UP)) == {"kind": "scroll", "direction": "up"}
    assert encode_action(SetNumericValue(2.0)) == {"kind": "set_numeric_value", "value": 2.0}
    assert encode_action(SetSelection(1, 2)) == {"kind": "set_selection", "start": 1, "end": 2}
    assert encode_precondition(Latest()) == {"kind": "latest"}
    assert encode_precondition(Exact(9)) == {"kind": "exact", "generation": "9"}


@pytest.mark.parametrize("pending_work", [True, False])
def test_receipt_shape(pending_work: bool) -> None:
    assert encode_receipt(Receipt(4, 5, pending_work)) == {
        "before": "4",
        "after": "5",
        "pending_work": pending_work,
    }


def test_rejection_details_are_put_in_wire_form() -> None:
    target = ByPath((PathStep(role=Role.BUTTON),))
    assert encode_rejection(
        Rejection(ErrorCode.STALE_GENERATION, "stale", {"expected": 3, "current": 5})
    ) == {
        "code": "stale_generation",
        "message": "stale",
        "details": {"expected": "3", "current": "5"},
    }
    wire = encode_rejection(
        Rejection(
            ErrorCode.ACTION_UNAVAILABLE,
            "no",
            {"target": target, "action": SetText("x")},
        )
    )
    assert wire["details"] == {"target": encode_target(target), "action": "set_text"}
    assert encode_rejection(
        Rejection(
            ErrorCode.HANDLER_REJECTED,
            "no",
            {"target": encode_target(target), "action": ActionKind.SUBMIT},
        )
    )["details"] == {"target": encode_target(target), "action": "submit"}
    assert encode_rejection(Rejection(ErrorCode.HOST_CLOSED, "closed")) == {
        "code": "host_closed",
        "message": "closed",
        "details": {},
    }
    ambiguous = Rejection(
        ErrorCode.TARGET_AMBIGUOUS, "two", {"semantic_id": SemanticId("gallery.duplicate")}
    )
    assert encode_rejection(ambiguous)["details"] == {"semantic_id": "gallery.duplicate"}
    assert type(encode_rejection(ambiguous)["details"]["semantic_id"]) is str


def test_encode_read_validates_and_wrong_shapes_do_not() -> None:
    good = {"ok": True, "value": encode_read(Full(1, 7, None, (BUTTON,), ()))}
    READ_VALIDATOR.validate(good)

    def broken(change: Any) -> dict[str, Any]:
        value: dict[str, Any] = json.loads(json.dumps(good))
        change(value["value"]["nodes"][0])
        return value

    wrongs = [
        broken(lambda n: n.pop("state")),
        broken(lambda n: n["state"].pop("modal")),
        broken(lambda n: n.update(node_id=7)),
        broken(lambda n: n.update(node_id="07")),
        broken(lambda n: n.update(role="textbox")),
        broken(lambda n: n.update(extra=1)),
        broken(lambda n: n["relations"].pop("controls")),
        broken(lambda n: n.update(children=[7])),
        broken(lambda n: n["state"].update(checked=True)),
        broken(lambda n: n.update(actions=["click"])),
        broken(lambda n: n["frame"]["origin"].pop("x")),
        {"ok": True, "value": {"kind": "unchanged", "generation": 1}},
        {"ok": True, "value": {"kind": "unchanged"}},
        {"ok": True, "value": {"kind": "partial", "generation": "1"}},
        {"ok": True},
        {"ok": False, "value": {"kind": "unchanged", "generation": "1"}},
        {"ok": True, "value": {"kind": "unchanged", "generation": "1"}, "error": None},
    ]
    for wrong in wrongs:
        assert not READ_VALIDATOR.is_valid(wrong), wrong


def test_receipt_validates_against_the_perform_action_schema() -> None:
    validator = jsonschema.Draft202012Validator(PERFORM_ACTION.output_schema)
    validator.validate({"ok": True, "value": encode_receipt(Receipt(1, 2, False))})
    assert not validator.is_valid(
        {"ok": True, "value": {"before": 1, "after": 2, "pending_work": False}}
    )
    assert not validator.is_valid({"ok": True, "value": {"before": "1", "after": "2"}})


# --- inverse decoders reject what is not a wire read --------------------------------------


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda n: n.pop("live"), "node.live: required"),
        (lambda n: n.update(extra=1), "node.extra: unknown field"),
        (lambda n: n.update(node_id="0"), "node.node_id: expected a node id"),
        (lambda n: n.update(role="textbox"), "node.role: expected a role"),
        (lambda n: n["state"].update(busy=None), "node.state.busy: expected a boolean"),
        (lambda n: n.update(children=["1", "x"]), "node.children[1]: expected a node id"),
        (
            lambda n: n["relations"].update(controls="3"),
            "node.relations.controls: expected an array",
        ),
        (
            lambda n: n["frame"]["size"].update(width="8"),
            "node.frame.size.width: expected a number",
        ),
    ],
)
def test_decode_node_rejects_malformed_nodes(change: Any, message: str) -> None:
    wire = json.loads(json.dumps(BUTTON_WIRE))
    change(wire)
    with pytest.raises(WireError) as info:
        decode_node(wire)
    assert str(info.value).startswith(message)


def test_decode_read_rejects_unknown_kinds() -> None:
    with pytest.raises(WireError, match=r"^read\.kind: expected one of full, delta, unchanged"):
        decode_read({"kind": "partial"})


@pytest.mark.parametrize(
    "wire",
    [
        {"kind": "unchanged", "generation": "1"},
        {"kind": "full", "generation": "1", "root": None, "focused": None, "nodes": [],
         "issues": []},
        {"kind": "delta", "from": "1", "to": "2", "root": None, "focused": None, "upserted": [],
         "removed": [], "issues": [], "announcements": []},
    ],
    ids=["unchanged", "full", "delta"],
)  # fmt: skip
def test_decode_read_rejects_a_field_its_kind_does_not_have(wire: dict[str, Any]) -> None:
    decode_read(wire)
    with pytest.raises(WireError, match=r"^read\.extra: unknown field"):
        decode_read({**wire, "extra": 1})
