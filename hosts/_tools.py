"""Tool definitions for ``tools/list``: names, descriptions and JSON Schemas (draft 2020-12).

Every object schema sets ``"additionalProperties": false``. The output schemas describe the
envelope: ``{"ok": true, "value": ...}`` with the tool's value shape, or ``{"ok": false,
"error": {"code", "message", "details"}}`` with the details of each error code (SPEC §2.7).
The schemas are data built once at import; `ToolDefinition.to_wire` hands out copies.
"""

from __future__ import annotations

import copy
from typing import Any, Final, Literal

import attrs

from semledger.runtime._actions import PAYLOAD_KINDS
from semledger.runtime._enums import (
    ActionKind,
    Checked,
    ErrorCode,
    Live,
    Relation,
    Role,
    ScrollDirection,
)
from semledger.runtime._ids import U64_MAX
from semledger.runtime._wire import MAX_PATH_STEPS

from ._host import CommandIntent, PointerPhase

__all__ = [
    "DEFAULT_TOOLS",
    "DIAGNOSTICS_DISPATCH_COMMAND",
    "DIAGNOSTICS_DISPATCH_EVENT",
    "DIAGNOSTICS_READ_PAINT",
    "DIAGNOSTICS_READ_STATE",
    "DIAGNOSTICS_TOOLS",
    "PERFORM_ACTION",
    "READ_SEMANTICS",
    "Profile",
    "ToolDefinition",
    "tools_for_profile",
]

Profile = Literal["default", "diagnostics"]

_DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"

Schema = dict[str, Any]


@attrs.frozen(eq=False)
class ToolDefinition:
    """One tool as ``tools/list`` lists it."""

    name: str
    title: str
    description: str
    input_schema: Schema
    output_schema: Schema
    read_only: bool

    def to_wire(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": copy.deepcopy(self.input_schema),
            "outputSchema": copy.deepcopy(self.output_schema),
            "annotations": {
                "title": self.title,
                "readOnlyHint": self.read_only,
                "destructiveHint": not self.read_only,
                "idempotentHint": self.read_only,
                "openWorldHint": False,
            },
        }


# --- building blocks ----------------------------------------------------------------------


def _obj(properties: Schema, required: list[str] | None = None, **extra: Any) -> Schema:
    """An object schema with exactly these properties (all required unless told)."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties) if required is None else required,
        "additionalProperties": False,
        **extra,
    }


def _nullable(schema: Schema) -> Schema:
    """`schema` or null, as a type list or an enum where one says it: a validator checks
    those in one step where it descends into each branch of an ``anyOf``, and a client that
    validates every result (the official SDK does) checks a large tree's nodes sooner."""
    if isinstance(schema.get("type"), str):  # other keywords constrain only their own type
        return {**schema, "type": [schema["type"], "null"]}
    if set(schema) == {"enum"}:
        return {"enum": [*schema["enum"], None]}
    return {"anyOf": [schema, {"type": "null"}]}


def _array(items: Schema) -> Schema:
    return {"type": "array", "items": items}


def _canonical_decimal_up_to(limit: int) -> str:
    """A regular expression for the canonical decimals from 1 to `limit` (no sign, no
    leading zero): a schema pattern cannot compare numbers, so it spells out the digits."""
    digits = str(limit)
    n = len(digits)
    shorter = [f"[1-9][0-9]{{0,{n - 2}}}"] if n > 1 else []
    same_length = []
    for i, d in enumerate(map(int, digits)):
        low = 1 if i == 0 else 0
        if d > low:  # this digit lower than the limit's, any digits after it
            lower = str(low) if d - 1 == low else f"[{low}-{d - 1}]"
            after = n - i - 1
            rest = "" if not after else "[0-9]" if after == 1 else f"[0-9]{{{after}}}"
            same_length.append(f"{digits[:i]}{lower}{rest}")
    return "|".join([*shorter, *same_length, digits])


_U64_DECIMAL: Final = _canonical_decimal_up_to(U64_MAX)
_GENERATION: Final = {
    "type": "string",
    "pattern": f"^(0|{_U64_DECIMAL})$",
    "description": "A generation: canonical decimal string of an unsigned 64-bit integer "
    '(no sign, no leading zeros, at most "18446744073709551615").',
}
_NODE_ID: Final = {
    "type": "string",
    "pattern": f"^({_U64_DECIMAL})$",
    "description": 'A node id: canonical decimal string from "1" to "18446744073709551615".',
}
_SEMANTIC_ID: Final = {
    "type": "string",
    "minLength": 1,
    "maxLength": 255,
    "pattern": "^[^\\u0000-\\u0020\\u007f-\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029"
    "\\u202f\\u205f\\u3000]+$",
    "description": "An application-owned stable id: 1 to 255 UTF-8 bytes, exact and "
    "case-sensitive, no whitespace or control characters.",
}
_INDEX: Final = {"type": "integer", "minimum": 0}
_COUNT: Final = {"type": "integer", "minimum": 0}
_NUMBER: Final = {"type": "number"}
_STRING: Final = {"type": "string"}
_BOOL: Final = {"type": "boolean"}
_ROLES: Final = [r.value for r in Role]
_PATH_ROLES: Final = [r.value for r in Role if r is not Role.NONE]
_ACTION_KINDS: Final = [k.value for k in ActionKind]
_SIMPLE_KINDS: Final = [k.value for k in ActionKind if k not in PAYLOAD_KINDS]
_FRAME: Final = _obj(
    {
        "origin": _obj({"x": _NUMBER, "y": _NUMBER}),
        "size": _obj({"width": _NUMBER, "height": _NUMBER}),
    }
)


def _const_kind(value: str) -> Schema:
    return {"const": value}


# --- agent input --------------------------------------------------------------------------

_PATH_FILTERS: Final = ("role", "label", "value", "semantic_id")

_PATH_STEP_INPUT: Final = _obj(
    {
        "index": {**_INDEX, "default": 0, "description": "Which match among the children."},
        "role": _nullable({"enum": _PATH_ROLES}),
        "label": _nullable(_STRING),
        "value": _nullable(_STRING),
        "semantic_id": _nullable(_SEMANTIC_ID),
    },
    required=[],
    anyOf=[{"required": [f], "properties": {f: {"not": {"type": "null"}}}} for f in _PATH_FILTERS],
    description="The index-th child (default 0) matching every filter given; at least one of "
    "role, label, value, semantic_id must be given (null counts as absent).",
)

_TARGET_INPUT: Final = {
    "type": "object",
    "oneOf": [
        _obj({"kind": _const_kind("semantic_id"), "id": _SEMANTIC_ID}),
        _obj({"kind": _const_kind("node_id"), "id": _NODE_ID}),
        _obj(
            {
                "kind": _const_kind("path"),
                "path": {
                    **_array(_PATH_STEP_INPUT),
                    "minItems": 1,
                    "maxItems": MAX_PATH_STEPS,
                },
            }
        ),
    ],
    "description": "What to act on: a semantic id (preferred, stable across commits), a node "
    "id from a read, or a path of filtered steps walked from the root's children.",
}

_ACTION_INPUT: Final = {
    "type": "object",
    "oneOf": [
        _obj({"kind": {"enum": _SIMPLE_KINDS}}),
        _obj({"kind": _const_kind("set_text"), "value": _STRING}),
        _obj(
            {
                "kind": _const_kind("scroll"),
                "direction": {"enum": [d.value for d in ScrollDirection]},
            }
        ),
        _obj({"kind": _const_kind("set_numeric_value"), "value": _NUMBER}),
        _obj({"kind": _const_kind("set_selection"), "start": _INDEX, "end": _INDEX}),
    ],
    "description": "The typed action; the node's `actions` list says which kinds it offers.",
}

_PRECONDITION_INPUT: Final = {
    "type": "object",
    "oneOf": [
        _obj({"kind": _const_kind("latest")}),
        _obj({"kind": _const_kind("exact"), "generation": _GENERATION}),
    ],
    "description": 'Either {"kind": "exact", "generation": G} to act only if the tree is still '
    'at generation G (recommended), or an explicit {"kind": "latest"}.',
}

# --- agent output (refs into each output schema's $defs, to keep tools/list small) ---------

_GEN_REF: Final = {"$ref": "#/$defs/generation"}
_ID_REF: Final = {"$ref": "#/$defs/node_id"}
_SID_REF: Final = {"$ref": "#/$defs/semantic_id"}

_STATE: Final = _obj(
    {
        "focused": _BOOL,
        "disabled": _BOOL,
        "selected": _BOOL,
        "pressed": _BOOL,
        "checked": {"enum": [None, *(c.value for c in Checked)]},
        "expanded": _nullable(_BOOL),
        "invalid": _BOOL,
        "required": _BOOL,
        "read_only": _BOOL,
        "busy": _BOOL,
        "multiline": _BOOL,
        "password": _BOOL,
        "modal": _BOOL,
    }
)

_COLLECTION_KEYS: Final = (
    "row_index", "row_count", "row_span", "column_index", "column_count", "column_span",
    "set_size", "set_position",
)  # fmt: skip

_NODE: Final = _obj(
    {
        "node_id": _ID_REF,
        "semantic_id": _nullable(_SID_REF),
        "role": {"enum": _ROLES},
        "level": _nullable({"type": "integer"}),
        "url": _nullable(_STRING),
        "label": _nullable(_STRING),
        "value": _nullable(_STRING),
        "description": _nullable(_STRING),
        "state": _STATE,
        "numeric": _nullable(
            _obj(
                {
                    "current": _nullable(_NUMBER),
                    "min": _nullable(_NUMBER),
                    "max": _nullable(_NUMBER),
                    "step": _nullable(_NUMBER),
                    "value_text": _nullable(_STRING),
                }
            )
        ),
        "text": _nullable(
            _obj(
                {
                    "selection": _nullable(_obj({"start": _INDEX, "end": _INDEX})),
                    "caret": _nullable(_INDEX),
                    "editable": _BOOL,
                }
            )
        ),
        "collection": _nullable(
            _obj({key: _nullable({"type": "integer"}) for key in _COLLECTION_KEYS})
        ),
        "relations": _obj({r.value: _array(_ID_REF) for r in Relation}),
        "live": {"enum": [v.value for v in Live]},
        "atomic": _BOOL,
        "actions": {**_array({"enum": _ACTION_KINDS}), "uniqueItems": True},
        "focus_order": _nullable({"type": "integer"}),
        "frame": _FRAME,
        "children": _array(_ID_REF),
    }
)

_ISSUE: Final = {
    "oneOf": [
        _obj(
            {
                "kind": _const_kind("duplicate_semantic_id"),
                "semantic_id": _SID_REF,
                "nodes": _array(_ID_REF),
            }
        ),
        _obj(
            {
                "kind": _const_kind("missing_relation_target"),
                "source": _ID_REF,
                "relation": {"enum": [r.value for r in Relation]},
                "semantic_id": _SID_REF,
            }
        ),
        _obj(
            {
                "kind": _const_kind("ambiguous_relation_target"),
                "source": _ID_REF,
                "relation": {"enum": [r.value for r in Relation]},
                "semantic_id": _SID_REF,
                "nodes": _array(_ID_REF),
            }
        ),
    ]
}

_ANNOUNCEMENT: Final = _obj(
    {
        "node_id": _ID_REF,
        "generation": _GEN_REF,
        "live": {"enum": [v.value for v in Live]},
        "atomic": _BOOL,
        "text": _STRING,
    }
)

_NODE_REF: Final = {"$ref": "#/$defs/node"}
_ID_OR_NULL: Final = _nullable(_ID_REF)

_READ_VALUE: Final = {
    "oneOf": [
        _obj(
            {
                "kind": _const_kind("full"),
                "generation": _GEN_REF,
                "root": _ID_OR_NULL,
                "focused": _ID_OR_NULL,
                "nodes": _array(_NODE_REF),
                "issues": _array({"$ref": "#/$defs/issue"}),
            }
        ),
        _obj(
            {
                "kind": _const_kind("delta"),
                "from": _GEN_REF,
                "to": _GEN_REF,
                "root": _ID_OR_NULL,
                "focused": _ID_OR_NULL,
                "upserted": _array(_NODE_REF),
                "removed": _array(_ID_REF),
                "issues": _array({"$ref": "#/$defs/issue"}),
                "announcements": _array(_ANNOUNCEMENT),
            }
        ),
        _obj({"kind": _const_kind("unchanged"), "generation": _GEN_REF}),
    ]
}

_RECEIPT: Final = _obj({"before": _GEN_REF, "after": _GEN_REF, "pending_work": _BOOL})

_STEP_ECHO: Final = _obj(
    {
        "index": _INDEX,
        "role": _nullable({"enum": _PATH_ROLES}),
        "label": _nullable(_STRING),
        "value": _nullable(_STRING),
        "semantic_id": _nullable(_SID_REF),
    }
)

_TARGET_ECHO: Final = {
    "oneOf": [
        _obj({"kind": _const_kind("semantic_id"), "id": _SID_REF}),
        _obj({"kind": _const_kind("node_id"), "id": _ID_REF}),
        _obj({"kind": _const_kind("path"), "path": {**_array(_STEP_ECHO), "minItems": 1}}),
    ]
}
_TARGET_REF: Final = {"$ref": "#/$defs/target"}
_ACTION_KIND: Final = {"enum": _ACTION_KINDS}

_ERROR_SHAPES: Final[tuple[tuple[tuple[str, ...], Schema], ...]] = (
    (("invalid_arguments", "unknown_tool", "host_closed", "reentrant_dispatch"), {}),
    (("stale_generation",), {"expected": _GEN_REF, "current": _GEN_REF}),
    (("target_not_found", "target_disabled"), {"target": _TARGET_REF}),
    (("target_ambiguous",), {"semantic_id": _SID_REF}),
    (("action_unavailable", "handler_rejected"), {"target": _TARGET_REF, "action": _ACTION_KIND}),
    (("handler_rejected",), {"failure": _STRING}),
    (("confirmation_required",), {"request_id": _STRING}),
    (("policy_denied",), {"reason": _STRING}),
)
"""The §2.7 error codes grouped by the shape of their ``details``."""

_ERROR: Final = {
    "oneOf": [
        _obj({"code": {"enum": list(codes)}, "message": _STRING, "details": _obj(details)})
        for codes, details in _ERROR_SHAPES
    ]
}


def _envelope(value: Schema, defs: Schema | None = None) -> Schema:
    return {
        "$schema": _DIALECT,
        "type": "object",
        # What value and error hold is checked once, by the branch of the oneOf that applies.
        "properties": {
            "ok": _BOOL,
            "value": {"description": "The tool's answer, when ok is true."},
            "error": {"description": "Why there is no answer, when ok is false."},
        },
        "required": ["ok"],
        "additionalProperties": False,
        "oneOf": [
            _obj({"ok": {"const": True}, "value": {"$ref": "#/$defs/value"}}),
            _obj({"ok": {"const": False}, "error": {"$ref": "#/$defs/error"}}),
        ],
        "$defs": {
            "value": value,
            "error": _ERROR,
            "target": _TARGET_ECHO,
            "generation": _GENERATION,
            "node_id": _NODE_ID,
            "semantic_id": _SEMANTIC_ID,
            **(defs or {}),
        },
    }


def _input(properties: Schema, required: list[str] | None = None) -> Schema:
    return {"$schema": _DIALECT, **_obj(properties, required)}


# --- the tools ----------------------------------------------------------------------------

_ENVELOPE_TEXT: Final = (
    ' Every result is an envelope: {"ok": true, "value": ...} or {"ok": false, "error": '
    '{"code", "message", "details"}}; argument problems are the error code invalid_arguments.'
)

READ_SEMANTICS: Final = ToolDefinition(
    name="read_semantics",
    title="Read the semantics tree",
    description=(
        "Read the application's committed semantics tree: the nodes an agent can see and act "
        "on (role, label, value, state, actions, children), never pixels. Every commit that "
        "changes the tree advances its generation (a decimal string) by one; reads never do. "
        'Without "since" the answer is {"kind": "full", "generation", "root", "focused", '
        '"nodes", "issues"} with every node in tree order. With "since": G (a generation you '
        'saw): {"kind": "unchanged"} if G is current; {"kind": "delta", "from", "to", '
        '"upserted", "removed", "issues", "announcements"} if G is recent (nodes added or '
        "changed since G, node ids removed, the whole current issue list, live-region "
        "announcements); otherwise a full read. Node ids are decimal strings, stable while a "
        "node lives and never reused; semantic_id is the application's stable name for a node."
        + _ENVELOPE_TEXT
    ),
    input_schema=_input(
        {
            "since": {
                **_GENERATION,
                "description": "A generation from an earlier read, to get only what changed.",
            }
        },
        required=[],
    ),
    output_schema=_envelope(_READ_VALUE, {"node": _NODE, "issue": _ISSUE}),
    read_only=True,
)

PERFORM_ACTION: Final = ToolDefinition(
    name="perform_action",
    title="Perform a semantic action",
    description=(
        "Perform one typed action on one node of the semantics tree, as a transaction. "
        'target: {"kind": "semantic_id", "id"} (preferred), {"kind": "node_id", "id"} or '
        '{"kind": "path", "path": [{"index"?, "role"?, "label"?, "value"?, "semantic_id"?}]} '
        "(each step picks the index-th child matching its filters; at least one filter per "
        'step). action: {"kind": "activate"|"focus"|"submit"|"select"|"expand"|"collapse"|'
        '"dismiss"|"increment"|"decrement"|"show_menu"}, {"kind": "set_text", "value"}, '
        '{"kind": "scroll", "direction"}, {"kind": "set_numeric_value", "value"} or '
        '{"kind": "set_selection", "start", "end"}. precondition: {"kind": "exact", '
        '"generation"} (act only if the tree is still what you read; otherwise '
        'stale_generation) or {"kind": "latest"}. Success is a receipt {"before", "after", '
        '"pending_work"}: generations before and after (equal is valid) and whether an '
        "asynchronous effect is still running (read again later). A rejection (stale_generation, "
        "target_not_found, target_ambiguous, target_disabled, action_unavailable, "
        "handler_rejected, host_closed, …) changed nothing." + _ENVELOPE_TEXT
    ),
    input_schema=_input(
        {"target": _TARGET_INPUT, "action": _ACTION_INPUT, "precondition": _PRECONDITION_INPUT}
    ),
    output_schema=_envelope(_RECEIPT),
    read_only=False,
)

_NO_INPUT: Final = _input({}, required=[])
_ERROR_CODE: Final = {"enum": [code.value for code in ErrorCode]}
_DIAGNOSTIC_OUTCOME: Final = _obj(
    {
        "handled": _BOOL,
        "node_id": _nullable(_ID_REF),
        "before": _GEN_REF,
        "after": _GEN_REF,
        "error": _ERROR_CODE,
        "reason": _STRING,
    },
    required=["handled"],
    description="handled says whether anything took the input; node_id is the hit-tested "
    "(event) or focused (command) node; before/after are present when it became an action "
    "that was accepted, error (a rejection code) when that action was rejected, reason when "
    "nothing handles the input there.",
)

DIAGNOSTICS_READ_STATE: Final = ToolDefinition(
    name="diagnostics_read_state",
    title="Diagnostics: runtime counters",
    description=(
        "Diagnostics only. The runtime's counters: layout, paint, semantics (and platform) "
        "passes, commits, the current generation, the input queue depth and the outstanding "
        "effects." + _ENVELOPE_TEXT
    ),
    input_schema=_NO_INPUT,
    output_schema=_envelope(
        _obj(
            {
                "layout_passes": _COUNT,
                "paint_passes": _COUNT,
                "semantics_passes": _COUNT,
                "platform_passes": _COUNT,
                "commits": _COUNT,
                "generation": _GEN_REF,
                "queue_depth": _COUNT,
                "pending_effects": _COUNT,
            },
            required=[
                "layout_passes",
                "paint_passes",
                "semantics_passes",
                "commits",
                "generation",
                "queue_depth",
            ],
        )
    ),
    read_only=True,
)

DIAGNOSTICS_READ_PAINT: Final = ToolDefinition(
    name="diagnostics_read_paint",
    title="Diagnostics: paint summary",
    description=(
        "Diagnostics only. A summary of the current display list: the number of paint ops, "
        "their count by kind, the hovered node (or null) and the number of paint passes."
        + _ENVELOPE_TEXT
    ),
    input_schema=_NO_INPUT,
    output_schema=_envelope(
        _obj(
            {
                "ops": _COUNT,
                "by_kind": {
                    "type": "object",
                    "patternProperties": {"^[a-z][a-z0-9_]*$": _COUNT},
                    "additionalProperties": False,
                },
                "hovered": _nullable(_ID_REF),
                "paint_passes": _COUNT,
            }
        )
    ),
    read_only=True,
)

DIAGNOSTICS_DISPATCH_EVENT: Final = ToolDefinition(
    name="diagnostics_dispatch_event",
    title="Diagnostics: dispatch a pointer event",
    description=(
        "Diagnostics only; agents act through perform_action. Dispatch a coordinate pointer "
        "event, hit-tested against the committed frames (an Up on the node that got the Down "
        "activates it). The value says whether it was handled, the hit node (or null) and, "
        "when it became an action, the generations before and after or the rejection code."
        + _ENVELOPE_TEXT
    ),
    input_schema=_input(
        {
            "event": _obj(
                {
                    "kind": _const_kind("Pointer"),
                    "position": _obj({"x": _NUMBER, "y": _NUMBER}),
                    "phase": {"enum": [p.value for p in PointerPhase]},
                }
            )
        }
    ),
    output_schema=_envelope(_DIAGNOSTIC_OUTCOME),
    read_only=False,
)

DIAGNOSTICS_DISPATCH_COMMAND: Final = ToolDefinition(
    name="diagnostics_dispatch_command",
    title="Diagnostics: dispatch a global command",
    description=(
        "Diagnostics only; agents act through perform_action. Dispatch a global command "
        "intent to the focused node. The value says whether it was handled, the node it went "
        "to and, when it became an action, the generations before and after or the rejection "
        "code." + _ENVELOPE_TEXT
    ),
    input_schema=_input({"intent": {"enum": [i.value for i in CommandIntent]}}),
    output_schema=_envelope(_DIAGNOSTIC_OUTCOME),
    read_only=False,
)

DEFAULT_TOOLS: Final = (READ_SEMANTICS, PERFORM_ACTION)
DIAGNOSTICS_TOOLS: Final = (
    *DEFAULT_TOOLS,
    DIAGNOSTICS_READ_STATE,
    DIAGNOSTICS_READ_PAINT,
    DIAGNOSTICS_DISPATCH_EVENT,
    DIAGNOSTICS_DISPATCH_COMMAND,
)


def tools_for_profile(profile: Profile) -> tuple[ToolDefinition, ...]:
    return DIAGNOSTICS_TOOLS if profile == "diagnostics" else DEFAULT_TOOLS
