"""The wire shapes: their decoders, their encoder and their generated JSON Schemas.

``schema/surface.<shape>.schema.json`` at the repository root is written from
``schema_files()`` by ``scripts/generate.py``; a test fails when the committed files drift.
A decoder accepts exactly the documents its schema accepts and raises DataError, naming
the field, for everything else. Decoders also take an instance of the class, returned as is.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final, cast

from ._calls import (
    ActArgs,
    ActRequest,
    ActResult,
    ApiRequest,
    ApiResponse,
    CheckRequest,
    CheckResult,
    ElementDescription,
    ObservedEvent,
    Predicate,
    ReadRequest,
)
from ._candidates import Candidate
from ._capabilities import Capabilities
from ._errors import DataError
from ._session import SessionInit, SessionState
from ._snapshot import Snapshot, SnapshotNode
from ._wire import JSONValue, decode_value, encode_value, schema_document

WIRE_SHAPES: Final[Mapping[str, Any]] = MappingProxyType({
    "capabilities": Capabilities,
    "session-init": SessionInit,
    "snapshot": Snapshot,
    "act": ActRequest,
    "act-result": ActResult,
    "read": ReadRequest,
    "check": CheckRequest,
    "check-result": CheckResult,
    "locate": Candidate,
    "element-description": ElementDescription,
    "session-state": SessionState,
    "api-request": ApiRequest,
    "api-response": ApiResponse,
    "observed-event": ObservedEvent,
})
"""Shape name (``surface.<name>.schema.json``) -> its attrs class or tagged union."""

_TITLES: Final[Mapping[str, str]] = MappingProxyType({"locate": "Candidate"})


def _root(shape: str) -> str:
    return "candidate" if shape == "locate" else shape.replace("-", "_")


def schema_file_name(shape: str) -> str:
    return f"surface.{shape}.schema.json"


def wire_schema(shape: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one wire shape."""
    tp = WIRE_SHAPES[shape]
    title = _TITLES.get(shape) or tp.__name__
    return schema_document(tp, title=title)


def schema_files() -> dict[str, str]:
    """File name -> text of every generated schema, as committed under ``schema/``."""
    return {
        schema_file_name(shape): json.dumps(wire_schema(shape), indent=2, ensure_ascii=False)
        + "\n"
        for shape in WIRE_SHAPES
    }


def decode(shape: str, obj: object) -> Any:
    """Decode ``obj`` as the wire shape ``shape``; DataError (path rooted at the shape's
    name, ``candidate.by``) when it is invalid."""
    return decode_value(WIRE_SHAPES[shape], obj, _root(shape))


def config_ms(config: Mapping[str, Any], key: str, default: int) -> int:
    """A duration in an adapter's config: a non-negative whole number of milliseconds."""
    value = config.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise DataError("expected a non-negative integer", path=f"config.{key}")
    return value


def encode(value: object) -> JSONValue:
    """The JSON form of any wire value (what the schemas describe)."""
    return encode_value(value)


def decode_capabilities(obj: object) -> Capabilities:
    return cast(Capabilities, decode("capabilities", obj))


def decode_session_init(obj: object) -> SessionInit:
    return cast(SessionInit, decode("session-init", obj))


def decode_snapshot(obj: object) -> Snapshot:
    """A Snapshot exactly as sent; ``snapshot_problems`` says whether it is consistent."""
    return cast(Snapshot, decode("snapshot", obj))


def decode_snapshot_node(obj: object) -> SnapshotNode:
    return cast(SnapshotNode, decode_value(SnapshotNode, obj, "node"))


def decode_act_request(obj: object) -> ActRequest:
    return cast(ActRequest, decode("act", obj))


def decode_act_args(obj: object) -> ActArgs:
    return cast(ActArgs, decode_value(ActArgs, obj, "args"))


def decode_act_result(obj: object) -> ActResult:
    return cast(ActResult, decode("act-result", obj))


def decode_read_request(obj: object) -> ReadRequest:
    return cast(ReadRequest, decode("read", obj))


def decode_check_request(obj: object) -> CheckRequest:
    return cast(CheckRequest, decode("check", obj))


def decode_check_result(obj: object) -> CheckResult:
    return cast(CheckResult, decode("check-result", obj))


def decode_predicate(obj: object) -> Predicate:
    return cast(Predicate, decode_value(Predicate, obj, "predicate"))


def decode_candidate(obj: object) -> Candidate:
    return cast(Candidate, decode("locate", obj))


def decode_element_description(obj: object) -> ElementDescription:
    return cast(ElementDescription, decode("element-description", obj))


def decode_session_state(obj: object) -> SessionState:
    return cast(SessionState, decode("session-state", obj))


def decode_api_request(obj: object) -> ApiRequest:
    return cast(ApiRequest, decode("api-request", obj))


def decode_api_response(obj: object) -> ApiResponse:
    return cast(ApiResponse, decode("api-response", obj))


def decode_observed_event(obj: object) -> ObservedEvent:
    return cast(ObservedEvent, decode("observed-event", obj))


candidate_from_dict = decode_candidate
predicate_from_dict = decode_predicate
session_init_from_dict = decode_session_init
session_state_from_dict = decode_session_state
act_args_from_dict = decode_act_args
