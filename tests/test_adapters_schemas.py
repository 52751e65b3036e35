"""Generated wire schemas, the decoders and the encoder.

Schema-valid documents (hypothesis-jsonschema) decode and re-encode equal, defaults filled
in; documents made invalid in one place raise DataError naming that field."""

from __future__ import annotations

import copy
import functools
import json
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.internal.conjecture import utils as conjecture_utils
from hypothesis_jsonschema import _from_schema, from_schema

from semledger.adapters import (
    CANDIDATE_CLASSES,
    CANDIDATE_GROUPS,
    WIRE_SHAPES,
    ActArgs,
    Count,
    DataError,
    RoleCandidate,
    SessionInit,
    SessionState,
    SnapshotNode,
    TestIdCandidate,
    TextEquals,
    build_snapshot,
    candidate_from_dict,
    decode,
    decode_act_args,
    decode_candidate,
    decode_check_request,
    decode_session_init,
    decode_snapshot,
    encode,
    predicate_from_dict,
    schema_files,
    session_init_from_dict,
    wire_schema,
)

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schema"
ROOTS = {shape: shape.replace("-", "_") for shape in WIRE_SHAPES} | {"locate": "candidate"}
SEED_SCHEMAS = {
    "capabilities", "session-init", "snapshot", "act", "read", "check", "locate",
    "element-description", "session-state", "api-request", "api-response",
}  # fmt: skip
FUZZ = settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


class _SteppedMany:
    """hypothesis-jsonschema 0.23.1 (the latest) drives Hypothesis' private ``many`` with
    ``more()``, which newer Hypothesis replaced by ``with many(...) as m: for _ in m``. This
    steps the new form by hand; it is installed only when ``more`` is missing."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._many = conjecture_utils.many(*args, **kwargs)
        self._steps: Iterator[None] | None = None

    def more(self) -> bool:
        if self._steps is None:
            self._steps = iter(self._many.__enter__())
        try:
            next(self._steps)
        except StopIteration:
            self._many.__exit__(None, None, None)
            return False
        return True

    def reject(self, why: str | None = None) -> None:
        self._many.reject(why)


@pytest.fixture(autouse=True)
def _hypothesis_jsonschema_compat(monkeypatch: pytest.MonkeyPatch) -> None:
    if not hasattr(conjecture_utils.many, "more"):
        monkeypatch.setattr(_from_schema, "cu", types.SimpleNamespace(many=_SteppedMany))


@functools.cache
def documents(shape: str) -> st.SearchStrategy[Any]:
    """Schema-valid documents of ``shape``; from_schema canonicalises the schema it is given
    in place, so it gets a copy."""
    return from_schema(copy.deepcopy(wire_schema(shape)))


def resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = root["$defs"][schema["$ref"].split("/")[-1]]
    return schema


def branch(schema: dict[str, Any], doc: Any, root: dict[str, Any]) -> dict[str, Any]:
    """The object schema ``doc`` is an instance of (the tagged branch of a union)."""
    schema = resolve(schema, root)
    if "oneOf" not in schema:
        return schema
    for option in schema["oneOf"]:
        option = resolve(option, root)
        tag, prop = next(iter(option["properties"].items()))
        if doc.get(tag) == prop["const"]:
            return option
    raise AssertionError(f"no branch for {doc!r}")


def with_defaults(schema: dict[str, Any], doc: Any, root: dict[str, Any]) -> Any:
    schema = resolve(schema, root)
    if isinstance(doc, dict) and ("properties" in schema or "oneOf" in schema):
        obj = branch(schema, doc, root)
        out = {}
        for name, prop in obj["properties"].items():
            if name in doc:
                out[name] = with_defaults(prop, doc[name], root)
            elif "default" in prop:
                out[name] = prop["default"]
        return out
    if isinstance(doc, dict) and isinstance(schema.get("additionalProperties"), dict):
        return {k: with_defaults(schema["additionalProperties"], v, root) for k, v in doc.items()}
    if isinstance(doc, list):
        return [with_defaults(schema.get("items", {}), item, root) for item in doc]
    return doc


def wrong_value(prop: dict[str, Any], root: dict[str, Any]) -> Any:
    prop = resolve(prop, root)
    kind = prop.get("type")
    if kind in ("integer", "number"):
        return "not a number"
    if kind == "boolean":
        return "yes"
    if kind == "array":
        return "not an array"
    if kind == "object" or "oneOf" in prop:
        return ["not", "an", "object"]
    return 12345  # strings, enums and consts


# -- the committed files --------------------------------------------------------------


def test_committed_schema_files_match_the_classes() -> None:
    expected = schema_files()
    committed = {p.name: p.read_text(encoding="utf-8") for p in SCHEMA_DIR.glob("*.json")}
    assert committed == expected, "run .venv/bin/python scripts/generate.py"


def test_the_seeds_schemas_are_all_there() -> None:
    assert set(WIRE_SHAPES) >= SEED_SCHEMAS
    assert {f"surface.{shape}.schema.json" for shape in SEED_SCHEMAS} <= set(schema_files())


@pytest.mark.parametrize("shape", WIRE_SHAPES)
def test_schemas_are_draft_2020_12_and_closed(shape: str) -> None:
    schema = wire_schema(shape)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
    objects: list[dict[str, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "properties" in node:
                objects.append(node)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    assert objects
    for obj in objects:
        assert obj["type"] == "object"
        assert obj["additionalProperties"] is False
        assert isinstance(obj["required"], list)
        assert set(obj["required"]) <= set(obj["properties"])


def test_snapshot_schema_lists_required_fields_and_defaults() -> None:
    node = wire_schema("snapshot")["$defs"]["SnapshotNode"]
    assert node["required"] == ["ref", "role", "depth"]
    assert node["properties"]["states"]["default"] == []
    assert node["properties"]["box"] == {
        "type": "array", "items": {"type": "number"}, "minItems": 4, "maxItems": 4,
    }  # fmt: skip


# -- generated documents ----------------------------------------------------------------


@pytest.mark.parametrize("shape", WIRE_SHAPES)
def test_schema_valid_documents_decode_and_reencode_equal(shape: str) -> None:
    schema = wire_schema(shape)
    validator = jsonschema.Draft202012Validator(schema)

    @FUZZ
    @given(documents(shape))
    def check(doc: Any) -> None:
        value = decode(shape, copy.deepcopy(doc))
        encoded = encode(value)
        assert encoded == with_defaults(schema, doc, schema)
        assert validator.is_valid(encoded)
        assert decode(shape, encoded) == value

    check()


@pytest.mark.parametrize("shape", WIRE_SHAPES)
def test_invalid_documents_raise_data_error_naming_the_field(shape: str) -> None:
    schema = wire_schema(shape)
    validator = jsonschema.Draft202012Validator(schema)
    root = ROOTS[shape]

    @FUZZ
    @given(documents(shape), st.sampled_from(["drop", "add", "wrong"]), st.data())
    def check(doc: Any, mutation: str, data: st.DataObject) -> None:
        obj = branch(schema, doc, schema)
        bad = copy.deepcopy(doc)
        if mutation == "drop":
            if not obj["required"]:
                return
            field = data.draw(st.sampled_from(obj["required"]))
            del bad[field]
        elif mutation == "add":
            field = "zz_unknown"
            bad[field] = 1
        else:
            if not doc:
                return
            field = data.draw(st.sampled_from(sorted(doc)))
            bad[field] = wrong_value(obj["properties"][field], schema)
        assert not validator.is_valid(bad)
        with pytest.raises(DataError) as info:
            decode(shape, bad)
        assert info.value.path == f"{root}.{field}"

    check()


# -- decoders by hand -------------------------------------------------------------------


def test_every_candidate_kind_of_the_seed_exists() -> None:
    kinds = {kind for group in CANDIDATE_GROUPS.values() for kind in group}
    assert kinds == set(CANDIDATE_CLASSES)
    assert kinds == {
        "role", "label", "placeholder", "testid", "text", "altText", "title", "css",
        "xpath", "id", "name", "accessibilityId", "resourceId", "automationId",
        "controlPath", "webmcp", "coords",
    }  # fmt: skip


def test_candidates_encode_with_their_tag_first() -> None:
    assert encode(RoleCandidate("button", name="Save", exact=True)) == {
        "by": "role", "role": "button", "name": "Save", "exact": True,
    }  # fmt: skip
    assert encode(TestIdCandidate("submit")) == {
        "by": "testid", "value": "submit", "attribute": "data-testid",
    }  # fmt: skip


def test_testid_attribute_is_configurable() -> None:
    candidate = candidate_from_dict({"by": "testid", "value": "go", "attribute": "data-qa"})
    assert candidate == TestIdCandidate("go", attribute="data-qa")


def test_dicts_and_instances_are_both_accepted() -> None:
    role = RoleCandidate("button")
    assert candidate_from_dict(role) == role
    assert candidate_from_dict({"by": "role", "role": "button"}) == role
    assert predicate_from_dict({"kind": "textEquals", "text": "Hi"}) == TextEquals("Hi")
    init = session_init_from_dict({"base_url": "http://127.0.0.1:8000/"})
    assert init == SessionInit(base_url="http://127.0.0.1:8000/")


@pytest.mark.parametrize(
    ("given", "path", "message"),
    [
        (ActArgs(ms=-1), "args.ms", "must be at least 0"),
        (ActArgs(ms="5"), "args.ms", "expected integer, got string"),  # type: ignore[arg-type]
        (ActArgs(ms=object()), "args", "cannot encode object"),  # type: ignore[arg-type]
        (ActArgs(ms=2**53), "args.ms", "expected an integer from -9007199254740991 to"),
        ({"ms": 10**400}, "args.ms", "got one beyond"),
    ],
)
def test_an_instance_is_checked_as_its_json_is(given: object, path: str, message: str) -> None:
    """attrs checks no types or limits: a caller's ActArgs(ms=-1) reached the adapter, which
    raised a bare ValueError, and a huge integer overflowed a float there."""
    with pytest.raises(DataError, match=message) as info:
        decode_act_args(given)
    assert info.value.path == path
    assert decode_act_args(ActArgs(ms=2**53 - 1)) == ActArgs(ms=2**53 - 1)


def test_a_number_beyond_a_float_is_refused_and_an_instance_in_a_union_checked() -> None:
    with pytest.raises(DataError, match="expected a finite number") as info:
        decode_candidate({"by": "coords", "x": 10**400, "y": 0})
    assert info.value.path == "candidate.x"
    with pytest.raises(DataError, match="must be at least 0") as info:
        predicate_from_dict(Count(RoleCandidate("button"), -1))
    assert info.value.path == "predicate.count"


@pytest.mark.parametrize(
    ("doc", "path"),
    [
        ({"role": "button"}, "candidate.by"),
        ({"by": "nope"}, "candidate.by"),
        ({"by": 3}, "candidate.by"),
        ({"by": "role"}, "candidate.role"),
        ({"by": "role", "role": ""}, "candidate.role"),
        ({"by": "role", "role": "button", "exact": "yes"}, "candidate.exact"),
        ({"by": "role", "role": "button", "name": None}, "candidate.name"),
        ({"by": "role", "role": "button", "colour": "red"}, "candidate.colour"),
        ({"by": "coords", "x": 1, "y": True}, "candidate.y"),
        ({"by": "coords", "x": float("nan"), "y": 0}, "candidate.x"),
        ("role=button", "candidate"),
    ],
)
def test_decode_candidate_names_the_offending_field(doc: Any, path: str) -> None:
    with pytest.raises(DataError) as info:
        decode_candidate(doc)
    assert info.value.path == path


def test_nested_paths_name_the_item() -> None:
    doc = {
        "ref": "r1", "text": "", "tokens_estimate": 0, "hash": "h",
        "nodes": [
            {"ref": "r1", "role": "main", "depth": 0},
            {"ref": "r2", "role": "button", "depth": 1, "states": ["focused", "pressed"]},
        ],
    }  # fmt: skip
    with pytest.raises(DataError) as info:
        decode_snapshot(doc)
    assert info.value.path == "snapshot.nodes[1].states[1]"


def test_duplicate_states_are_refused() -> None:
    with pytest.raises(DataError) as info:
        decode("snapshot", {
            "ref": "r1", "text": "", "tokens_estimate": 0, "hash": "h",
            "nodes": [{"ref": "r1", "role": "main", "depth": 0, "states": ["hidden", "hidden"]}],
        })  # fmt: skip
    assert info.value.path == "snapshot.nodes[0].states[1]"


def test_box_needs_exactly_four_numbers() -> None:
    node = {"ref": "r1", "role": "main", "depth": 0, "box": [0, 0, 10]}
    with pytest.raises(DataError) as info:
        decode("snapshot", {"ref": "r1", "text": "", "tokens_estimate": 0, "hash": "h",
                            "nodes": [node]})  # fmt: skip
    assert info.value.path == "snapshot.nodes[0].box"


def test_session_init_decodes_nested_launch_and_storage_state() -> None:
    init = decode_session_init({
        "process_name": "Calculator",
        "launch": {"path": "/usr/bin/calc", "args": ["--fresh"]},
        "storage_state": {"url": "http://127.0.0.1/", "cookies": [
            {"name": "sid", "value": "1", "domain": "127.0.0.1"},
        ]},
    })  # fmt: skip
    assert init.launch is not None
    assert init.launch.args == ("--fresh",)
    assert isinstance(init.storage_state, SessionState)
    assert init.storage_state.cookies[0].path == "/"
    with pytest.raises(DataError) as info:
        decode_session_init({"launch": {"path": "x", "args": ["ok", 2]}})
    assert info.value.path == "session_init.launch.args[1]"


def test_check_request_decodes_a_count_with_its_candidate() -> None:
    request = decode_check_request({
        "predicate": {"kind": "count", "candidate": {"by": "css", "value": "li"}, "count": 3},
        "subject": "page",
    })  # fmt: skip
    assert isinstance(request.predicate, Count)
    assert request.predicate.count == 3
    with pytest.raises(DataError) as info:
        decode_check_request({
            "predicate": {"kind": "count", "candidate": {"by": "css", "value": "li"},
                          "count": -1},
            "subject": "page",
        })  # fmt: skip
    assert info.value.path == "check.predicate.count"


def test_act_args_omit_what_is_not_given() -> None:
    assert encode(ActArgs(text="hello")) == {"text": "hello"}
    assert encode(decode("act", {"action": "type", "ref": "r2", "args": {"text": "x"}})) == {
        "action": "type", "ref": "r2", "args": {"text": "x"},
    }  # fmt: skip
    with pytest.raises(DataError) as info:
        decode("act", {"action": "teleport"})
    assert info.value.path == "act.action"


def test_a_built_snapshot_round_trips_through_json() -> None:
    nodes = [
        SnapshotNode(ref="r1", role="form", name="Sign in", depth=0, box=(0, 0, 100, 50)),
        SnapshotNode(
            ref="r2", role="textbox", name="User", value="a", depth=1, parent="r1",
            states=("required",), native={"data-testid": "user"},
        ),
    ]  # fmt: skip
    snapshot = build_snapshot("r1", nodes)
    wire = json.loads(json.dumps(encode(snapshot)))
    jsonschema.validate(wire, wire_schema("snapshot"))
    assert decode_snapshot(wire) == snapshot
