"""The agent wire codec (SPEC §2.4–§2.7): JSON-shaped dicts to runtime values and back.

Pure functions, no I/O. Decoders of agent input (`decode_read_arguments`,
`decode_perform_action` and the three parts it is made of) validate exactly and raise
`WireError` naming the offending argument; encoders turn runtime values into the wire shapes.
The inverse decoders (`decode_node`, `decode_read`, …) serve reads from the log:
``decode_read(encode_read(r)) == r`` for every canonical read (see `decode_node` on relations).

Node ids and generations are ``int`` inside the runtime and canonical decimal strings here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, NoReturn, TypeVar

from ._actions import (
    PAYLOAD_KINDS,
    ByNodeId,
    ByPath,
    BySemanticId,
    Exact,
    Latest,
    PathStep,
    Precondition,
    Scroll,
    SemanticsAction,
    SetNumericValue,
    SetSelection,
    SetText,
    SimpleAction,
    Target,
)
from ._enums import ActionKind, Checked, Live, Relation, Role, ScrollDirection
from ._ids import (
    U64_MAX,
    SemanticId,
    has_lone_surrogate,
    parse_node_id,
    parse_node_ids,
    parse_u64,
    semantic_id_problem,
)
from ._node import (
    AmbiguousRelationTarget,
    Announcement,
    Collection,
    DuplicateSemanticId,
    Frame,
    Issue,
    MissingRelationTarget,
    NodeState,
    Numeric,
    Point,
    SemanticsNode,
    Size,
    TextInfo,
    TextSelection,
)
from ._outcomes import Receipt, Rejection
from ._reads import Delta, Full, ReadResult, Unchanged

__all__ = [
    "MAX_PATH_STEPS",
    "WireError",
    "decode_action",
    "decode_announcement",
    "decode_issue",
    "decode_node",
    "decode_perform_action",
    "decode_precondition",
    "decode_read",
    "decode_read_arguments",
    "decode_target",
    "encode_action",
    "encode_announcement",
    "encode_issue",
    "encode_node",
    "encode_precondition",
    "encode_read",
    "encode_receipt",
    "encode_rejection",
    "encode_target",
]


class WireError(ValueError):
    """Raised by a decoder for a wire value that breaks the contract.

    The message names the argument and what was expected, for example
    ``target.path[1].index: expected an integer >= 0``; the router turns it into an
    ``invalid_arguments`` tool result.
    """


# --- vocabularies -------------------------------------------------------------------------

_ROLES: Final = {r.value: r for r in Role}
_PATH_ROLES: Final = {r.value: r for r in Role if r is not Role.NONE}
_ACTION_KINDS: Final = {k.value: k for k in ActionKind}
_SIMPLE_KINDS: Final = frozenset(k for k in ActionKind if k not in PAYLOAD_KINDS)
ISSUE_KINDS: Final = (
    "duplicate_semantic_id",
    "missing_relation_target",
    "ambiguous_relation_target",
)
"""The ``kind`` of each issue a snapshot reports, as the wire names them."""
_DIRECTIONS: Final = {d.value: d for d in ScrollDirection}
_CHECKED: Final = {c.value: c for c in Checked}
_LIVE: Final = {v.value: v for v in Live}
_RELATIONS: Final = {r.value: r for r in Relation}

_ROLE_OUT: Final = {r: r.value for r in Role}
_ACTION_OUT: Final = {k: k.value for k in ActionKind}
_LIVE_OUT: Final = {v: v.value for v in Live}
_CHECKED_OUT: Final[dict[Checked | None, str | None]] = {None: None}
_CHECKED_OUT.update({c: c.value for c in Checked})

_GENERATION_EXPECTED: Final = (
    'expected a generation: a canonical decimal string from "0" to "18446744073709551615"'
)
_NODE_ID_EXPECTED: Final = (
    'expected a node id: a canonical decimal string from "1" to "18446744073709551615"'
)

MAX_PATH_STEPS: Final = 1024
"""The most steps a path target may have: four times the deepest view (`MAX_VIEW_DEPTH`),
and room for a served page's or desktop app's deeper tree. A rejection echoes its target
with every filter of every step, so an unbounded path made a call's answer (and its log
record) many times the call's size."""

_TARGET_KINDS: Final = ("semantic_id", "node_id", "path")
_STEP_KEYS: Final = frozenset({"index", "role", "label", "value", "semantic_id"})


# --- decoding helpers ---------------------------------------------------------------------


def _at(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _fail(where: str, expected: str) -> NoReturn:
    raise WireError(f"{where or 'arguments'}: {expected}")


def _received(value: object) -> str:
    """What came where a string was wanted, for a message (a string never is: it is told
    what it should have been, and the log holds it)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):  # shown only if short: Python writes no int of 4300 digits
        return f"the number {value}" if abs(value) < 10**30 else "a number of over 30 digits"
    if isinstance(value, float):
        return f"the number {value!r}" if math.isfinite(value) else "a number past a double's range"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list | tuple):
        return "an array"
    return f"a {type(value).__name__}"


def _not_a_string(
    where: str, expected: str, value: object, takes: Callable[[str], bool] = lambda _: True
) -> NoReturn:
    """`expected` and what came instead, with the string to send when a number came that
    `takes` as that string (an MCP client's ``since=2`` sends the number 2)."""
    message = f"{expected}, got {_received(value)}"
    number = int(value) if isinstance(value, float) and value.is_integer() else value
    if isinstance(number, int) and not isinstance(number, bool) and abs(number) < 10**30:
        text = str(number)
        if takes(text):
            message += f': send it as a string, "{text}"'
    _fail(where, message)


def _object(value: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        _fail(where, "expected an object")
    return value


def _exact_keys(
    obj: Mapping[str, Any], where: str, required: Iterable[str], optional: Iterable[str] = ()
) -> None:
    """Unknown keys first (in the input's order), then the first missing required key."""
    required = tuple(required)
    allowed = frozenset(required) | frozenset(optional)
    for key in obj:
        if key not in allowed:
            raise WireError(f"{_at(where, str(key))}: unknown field")
    for key in required:
        if key not in obj:
            raise WireError(f"{_at(where, key)}: required")


def exact_object(value: object, keys: Iterable[str], where: str = "") -> Mapping[str, Any]:
    """`value` as an object with exactly `keys`; WireError naming the field otherwise."""
    obj = _object(value, where)
    _exact_keys(obj, where, keys)
    return obj


def _nonneg_int(value: object, where: str) -> int:
    """An index or an offset. One past ``U64_MAX`` is taken as ``U64_MAX``: out of range
    either way (no node has that many children, no text that many characters), and the log
    (msgpack) holds every request with its integers, which JSON does not bound.

    A number with no fraction (``1.0``) is an integer, as JSON Schema's ``"integer"`` in
    the tools' input schemas says: clients that write every number as a float pass it. So
    is one past a double's range (``1e400``, or more digits than Python reads, which the
    router reads as infinite): past ``U64_MAX`` too.
    """
    if value == math.inf:
        return U64_MAX
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        _fail(where, "expected an integer >= 0")
    return min(value, U64_MAX)


def _string(value: object, where: str) -> str:
    if not isinstance(value, str):
        _not_a_string(where, "expected a string", value)
    return value


def _free_text(value: object, where: str) -> str:
    """A free-text argument of the agent's: a string the log can hold."""
    text = _string(value, where)
    if has_lone_surrogate(text):
        _fail(where, "expected valid UTF-8 text (it contains a lone surrogate)")
    return text


def _generation(value: object, where: str) -> int:
    parsed = parse_u64(value)
    if parsed is None:
        if not isinstance(value, str):
            _not_a_string(where, _GENERATION_EXPECTED, value, lambda t: parse_u64(t) is not None)
        _fail(where, _GENERATION_EXPECTED)
    return parsed


def _node_id(value: object, where: str) -> int:
    parsed = parse_node_id(value)
    if parsed is None:
        if not isinstance(value, str):
            _not_a_string(where, _NODE_ID_EXPECTED, value, lambda t: parse_node_id(t) is not None)
        _fail(where, _NODE_ID_EXPECTED)
    return parsed


def _semantic_id(value: object, where: str) -> SemanticId:
    if not isinstance(value, str):
        _not_a_string(
            where,
            "expected a semantic id (a string)",
            value,
            lambda t: semantic_id_problem(t) is None,
        )
    problem = semantic_id_problem(value)
    if problem is not None:
        _fail(where, f"expected a semantic id: {problem}")
    return SemanticId(value)


_E = TypeVar("_E")


def _enum_value(table: Mapping[str, _E], value: object, where: str, what: str) -> _E:
    if isinstance(value, str):
        found = table.get(value)
        if found is not None:
            return found
    _fail(where, f"expected {what}: {', '.join(table)}")


def _finite_number(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        _fail(where, "expected a finite number")
    try:
        number = float(value)
    except OverflowError:
        _fail(where, "expected a finite number")
    if not math.isfinite(number):
        _fail(where, "expected a finite number")
    return number


# --- agent input: read_semantics and perform_action ---------------------------------------


def decode_read_arguments(args: object) -> int | None:
    """The ``since`` generation of a ``read_semantics`` call, or None when absent."""
    obj = _object(args, "")
    _exact_keys(obj, "", (), ("since",))
    if "since" not in obj:
        return None
    return _generation(obj["since"], "since")


def decode_perform_action(args: object) -> tuple[Target, SemanticsAction, Precondition]:
    """The three required parts of a ``perform_action`` call (no other key is allowed)."""
    obj = _object(args, "")
    _exact_keys(obj, "", ("target", "action", "precondition"))
    return (
        decode_target(obj["target"], max_steps=MAX_PATH_STEPS),
        decode_action(obj["action"]),
        decode_precondition(obj["precondition"]),
    )


def decode_target(value: object, where: str = "target", *, max_steps: int | None = None) -> Target:
    """A target; a path of more than `max_steps` steps is refused unread. Unbounded by
    default, as a log's targets are read: one logged before `MAX_PATH_STEPS` was set is
    re-executed (and its session resumed) as it was first carried out."""
    obj = _object(value, where)
    if "kind" not in obj:
        _fail(_at(where, "kind"), "required")
    kind = obj["kind"]
    if kind == "semantic_id":
        _exact_keys(obj, where, ("kind", "id"))
        return BySemanticId(_semantic_id(obj["id"], _at(where, "id")))
    if kind == "node_id":
        _exact_keys(obj, where, ("kind", "id"))
        return ByNodeId(_node_id(obj["id"], _at(where, "id")))
    if kind == "path":
        _exact_keys(obj, where, ("kind", "path"))
        return ByPath(_path(obj["path"], _at(where, "path"), max_steps))
    _fail(_at(where, "kind"), f"expected one of {', '.join(_TARGET_KINDS)}")


def _path(value: object, where: str, max_steps: int | None) -> tuple[PathStep, ...]:
    if not isinstance(value, list):
        _fail(where, "expected an array of path steps")
    if not value:
        _fail(where, "expected at least one path step")
    if max_steps is not None and len(value) > max_steps:
        _fail(where, f"expected at most {max_steps} path steps, got {len(value)}")
    return tuple(_step(step, f"{where}[{i}]") for i, step in enumerate(value))


def _step(value: object, where: str) -> PathStep:
    obj = _object(value, where)
    for key in obj:
        if key not in _STEP_KEYS:
            raise WireError(f"{_at(where, str(key))}: unknown field")
    index = _nonneg_int(obj["index"], _at(where, "index")) if "index" in obj else 0
    role_value = obj.get("role")
    role: Role | None = None
    if role_value is not None:
        if role_value == "none":
            _fail(_at(where, "role"), "expected a role other than none")
        role = _enum_value(_PATH_ROLES, role_value, _at(where, "role"), "a role")
    label_value = obj.get("label")
    label = None if label_value is None else _free_text(label_value, _at(where, "label"))
    value_value = obj.get("value")
    text = None if value_value is None else _free_text(value_value, _at(where, "value"))
    sid_value = obj.get("semantic_id")
    sid = None if sid_value is None else _semantic_id(sid_value, _at(where, "semantic_id"))
    if role is None and label is None and text is None and sid is None:
        _fail(where, "expected at least one filter of role, label, value, semantic_id")
    return PathStep(index=index, role=role, label=label, value=text, semantic_id=sid)


def decode_action(value: object, where: str = "action") -> SemanticsAction:
    obj = _object(value, where)
    if "kind" not in obj:
        _fail(_at(where, "kind"), "required")
    kind = _enum_value(_ACTION_KINDS, obj["kind"], _at(where, "kind"), "an action kind")
    if kind in _SIMPLE_KINDS:
        _exact_keys(obj, where, ("kind",))
        return SimpleAction(kind)
    if kind is ActionKind.SET_TEXT:
        _exact_keys(obj, where, ("kind", "value"))
        return SetText(_free_text(obj["value"], _at(where, "value")))
    if kind is ActionKind.SCROLL:
        _exact_keys(obj, where, ("kind", "direction"))
        direction = _enum_value(
            _DIRECTIONS, obj["direction"], _at(where, "direction"), "a scroll direction"
        )
        return Scroll(direction)
    if kind is ActionKind.SET_NUMERIC_VALUE:
        _exact_keys(obj, where, ("kind", "value"))
        return SetNumericValue(_finite_number(obj["value"], _at(where, "value")))
    _exact_keys(obj, where, ("kind", "start", "end"))
    return SetSelection(
        _nonneg_int(obj["start"], _at(where, "start")), _nonneg_int(obj["end"], _at(where, "end"))
    )


def decode_precondition(value: object, where: str = "precondition") -> Precondition:
    obj = _object(value, where)
    if "kind" not in obj:
        _fail(_at(where, "kind"), "required")
    kind = obj["kind"]
    if kind == "latest":
        _exact_keys(obj, where, ("kind",))
        return Latest()
    if kind == "exact":
        _exact_keys(obj, where, ("kind", "generation"))
        return Exact(_generation(obj["generation"], _at(where, "generation")))
    _fail(_at(where, "kind"), "expected one of latest, exact")


# --- encoders of agent input (for logs and echoed targets) --------------------------------


def encode_target(target: Target) -> dict[str, Any]:
    """The input's form; path steps carry every filter (null when absent) and the index."""
    if isinstance(target, BySemanticId):
        return {"kind": "semantic_id", "id": str(target.id)}
    if isinstance(target, ByNodeId):
        return {"kind": "node_id", "id": str(target.id)}
    return {
        "kind": "path",
        "path": [
            {
                "index": step.index,
                "role": None if step.role is None else step.role.value,
                "label": step.label,
                "value": step.value,
                "semantic_id": None if step.semantic_id is None else str(step.semantic_id),
            }
            for step in target.steps
        ],
    }


def encode_action(action: SemanticsAction) -> dict[str, Any]:
    if isinstance(action, SimpleAction):
        return {"kind": action.kind.value}
    if isinstance(action, SetText):
        return {"kind": "set_text", "value": action.value}
    if isinstance(action, Scroll):
        return {"kind": "scroll", "direction": action.direction.value}
    if isinstance(action, SetNumericValue):
        return {"kind": "set_numeric_value", "value": action.value}
    return {"kind": "set_selection", "start": action.start, "end": action.end}


def encode_precondition(precondition: Precondition) -> dict[str, Any]:
    if isinstance(precondition, Exact):
        return {"kind": "exact", "generation": str(precondition.generation)}
    return {"kind": "latest"}


# --- encoders of results ------------------------------------------------------------------


def _ids(values: Iterable[int]) -> list[str]:
    return list(map(str, values))


def _opt_id(value: int | None) -> str | None:
    return None if value is None else str(value)


def _encode_relations(
    relations: tuple[tuple[Relation, tuple[int, ...]], ...],
) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {
        "labelled_by": [],
        "described_by": [],
        "controls": [],
        "error_message": [],
        "active_descendant": [],
    }
    for kind, targets in relations:
        out[kind.value] = list(map(str, targets))
    return out


def encode_node(node: SemanticsNode) -> dict[str, Any]:
    """The §2.5 node shape. Hot path (10,000-node Full reads): plain literals, no reflection.

    The value is emitted as the node holds it; masking a password field's value is the
    runtime's job when it builds the node.
    """
    s = node.state
    n = node.numeric
    t = node.text
    c = node.collection
    f = node.frame
    sel = None if t is None else t.selection
    return {
        "node_id": str(node.node_id),
        "semantic_id": None if node.semantic_id is None else str(node.semantic_id),
        "role": _ROLE_OUT[node.role],
        "level": node.level,
        "url": node.url,
        "label": node.label,
        "value": node.value,
        "description": node.description,
        "state": {
            "focused": s.focused,
            "disabled": s.disabled,
            "selected": s.selected,
            "pressed": s.pressed,
            "checked": _CHECKED_OUT[s.checked],
            "expanded": s.expanded,
            "invalid": s.invalid,
            "required": s.required,
            "read_only": s.read_only,
            "busy": s.busy,
            "multiline": s.multiline,
            "password": s.password,
            "modal": s.modal,
        },
        "numeric": None
        if n is None
        else {
            "current": n.current,
            "min": n.min,
            "max": n.max,
            "step": n.step,
            "value_text": n.value_text,
        },
        "text": None
        if t is None
        else {
            "selection": None if sel is None else {"start": sel.start, "end": sel.end},
            "caret": t.caret,
            "editable": t.editable,
        },
        "collection": None
        if c is None
        else {
            "row_index": c.row_index,
            "row_count": c.row_count,
            "row_span": c.row_span,
            "column_index": c.column_index,
            "column_count": c.column_count,
            "column_span": c.column_span,
            "set_size": c.set_size,
            "set_position": c.set_position,
        },
        "relations": _encode_relations(node.relations),
        "live": _LIVE_OUT[node.live],
        "atomic": node.atomic,
        "actions": list(map(_ACTION_OUT.__getitem__, node.actions)),
        "focus_order": node.focus_order,
        "frame": {
            "origin": {"x": f.origin.x, "y": f.origin.y},
            "size": {"width": f.size.width, "height": f.size.height},
        },
        "children": list(map(str, node.children)),
    }


def encode_issue(issue: Issue) -> dict[str, Any]:
    if isinstance(issue, DuplicateSemanticId):
        return {
            "kind": "duplicate_semantic_id",
            "semantic_id": str(issue.semantic_id),
            "nodes": _ids(issue.nodes),
        }
    if isinstance(issue, MissingRelationTarget):
        return {
            "kind": "missing_relation_target",
            "source": str(issue.source),
            "relation": issue.relation.value,
            "semantic_id": str(issue.semantic_id),
        }
    return {
        "kind": "ambiguous_relation_target",
        "source": str(issue.source),
        "relation": issue.relation.value,
        "semantic_id": str(issue.semantic_id),
        "nodes": _ids(issue.nodes),
    }


def encode_announcement(announcement: Announcement) -> dict[str, Any]:
    return {
        "node_id": str(announcement.node_id),
        "generation": str(announcement.generation),
        "live": announcement.live.value,
        "atomic": announcement.atomic,
        "text": announcement.text,
    }


def encode_read(result: ReadResult) -> dict[str, Any]:
    if isinstance(result, Full):
        return {
            "kind": "full",
            "generation": str(result.generation),
            "root": _opt_id(result.root),
            "focused": _opt_id(result.focused),
            "nodes": [encode_node(node) for node in result.nodes],
            "issues": [encode_issue(issue) for issue in result.issues],
        }
    if isinstance(result, Delta):
        return {
            "kind": "delta",
            "from": str(result.from_generation),
            "to": str(result.to_generation),
            "root": _opt_id(result.root),
            "focused": _opt_id(result.focused),
            "upserted": [encode_node(node) for node in result.upserted],
            "removed": _ids(result.removed),
            "issues": [encode_issue(issue) for issue in result.issues],
            "announcements": [encode_announcement(a) for a in result.announcements],
        }
    return {"kind": "unchanged", "generation": str(result.generation)}


def encode_receipt(receipt: Receipt) -> dict[str, Any]:
    return {
        "before": str(receipt.before),
        "after": str(receipt.after),
        "pending_work": receipt.pending_work,
    }


def encode_rejection(rejection: Rejection) -> dict[str, Any]:
    """``{"code", "message", "details"}`` with the details in wire form (SPEC §2.7).

    Details may hold runtime values or wire values: a Target becomes its input form, an
    action (or ActionKind) its kind string, an int a canonical decimal string (the only
    integers of §2.7 are the generations of ``stale_generation``), a str subclass (an enum, a
    SemanticId) a plain string. Booleans, None and dicts and lists (taken to be wire form
    already, such as an encoded target) pass through unchanged. Only top-level values convert.
    """
    return {
        "code": str(rejection.code),
        "message": rejection.message,
        "details": {str(k): _detail(v) for k, v in rejection.details.items()},
    }


def _detail(value: object) -> Any:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, BySemanticId | ByNodeId | ByPath):
        return encode_target(value)
    if isinstance(value, SimpleAction | SetText | Scroll | SetNumericValue | SetSelection):
        return value.kind.value
    if isinstance(value, int | str):
        return str(value)
    return value


# --- inverse decoders (log-served reads) --------------------------------------------------


def _opt_string(value: object, where: str) -> str | None:
    return None if value is None else _string(value, where)


def _opt_nonneg_int(value: object, where: str) -> int | None:
    return None if value is None else _nonneg_int(value, where)


def _opt_int(value: object, where: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        _fail(where, "expected an integer or null")
    return value


def _bool(value: object, where: str) -> bool:
    if not isinstance(value, bool):
        _fail(where, "expected a boolean")
    return value


def _opt_bool(value: object, where: str) -> bool | None:
    return None if value is None else _bool(value, where)


def _number(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        _fail(where, "expected a number")
    return value


def _opt_number(value: object, where: str) -> float | None:
    return None if value is None else _number(value, where)


def _list(value: object, where: str) -> list[Any]:
    if not isinstance(value, list):
        _fail(where, "expected an array")
    return value


def _node_ids(value: object, where: str) -> tuple[int, ...]:
    """Each id parsed (`parse_node_ids`), the path of one that fails made only then."""
    items = _list(value, where)
    ids = parse_node_ids(items)
    if ids is None:
        for i, item in enumerate(items):
            _node_id(item, f"{where}[{i}]")  # (raises at the first that is no node id)
        raise AssertionError("parse_node_ids refused node ids that parse_node_id takes")
    return ids


def _opt_node_id(value: object, where: str) -> int | None:
    return None if value is None else _node_id(value, where)


_NODE_KEYS: Final = (
    "node_id", "semantic_id", "role", "level", "url", "label", "value", "description", "state",
    "numeric", "text", "collection", "relations", "live", "atomic", "actions", "focus_order",
    "frame", "children",
)  # fmt: skip
_STATE_KEYS: Final = (
    "focused", "disabled", "selected", "pressed", "checked", "expanded", "invalid", "required",
    "read_only", "busy", "multiline", "password", "modal",
)  # fmt: skip
_NUMERIC_KEYS: Final = ("current", "min", "max", "step", "value_text")
_COLLECTION_KEYS: Final = (
    "row_index", "row_count", "row_span", "column_index", "column_count", "column_span",
    "set_size", "set_position",
)  # fmt: skip


def decode_node(value: object, where: str = "node") -> SemanticsNode:
    """The inverse of `encode_node`.

    Relations come back in `Relation` declaration order with empty ones left out, so
    ``decode_node(encode_node(n)) == n`` holds for nodes whose ``relations`` are in that
    canonical form.
    """
    obj = _object(value, where)
    _exact_keys(obj, where, _NODE_KEYS)
    sid = obj["semantic_id"]
    return SemanticsNode(
        node_id=_node_id(obj["node_id"], _at(where, "node_id")),
        semantic_id=None if sid is None else _semantic_id(sid, _at(where, "semantic_id")),
        role=_enum_value(_ROLES, obj["role"], _at(where, "role"), "a role"),
        children=_node_ids(obj["children"], _at(where, "children")),
        level=_opt_int(obj["level"], _at(where, "level")),
        url=_opt_string(obj["url"], _at(where, "url")),
        label=_opt_string(obj["label"], _at(where, "label")),
        value=_opt_string(obj["value"], _at(where, "value")),
        description=_opt_string(obj["description"], _at(where, "description")),
        state=_state(obj["state"], _at(where, "state")),
        numeric=_numeric(obj["numeric"], _at(where, "numeric")),
        text=_text(obj["text"], _at(where, "text")),
        collection=_collection(obj["collection"], _at(where, "collection")),
        relations=_relations(obj["relations"], _at(where, "relations")),
        live=_enum_value(_LIVE, obj["live"], _at(where, "live"), "a live setting"),
        atomic=_bool(obj["atomic"], _at(where, "atomic")),
        actions=tuple(
            _enum_value(_ACTION_KINDS, a, f"{where}.actions[{i}]", "an action kind")
            for i, a in enumerate(_list(obj["actions"], _at(where, "actions")))
        ),
        focus_order=_opt_int(obj["focus_order"], _at(where, "focus_order")),
        frame=_frame(obj["frame"], _at(where, "frame")),
    )


def _state(value: object, where: str) -> NodeState:
    obj = _object(value, where)
    _exact_keys(obj, where, _STATE_KEYS)
    checked = obj["checked"]
    return NodeState(
        focused=_bool(obj["focused"], _at(where, "focused")),
        disabled=_bool(obj["disabled"], _at(where, "disabled")),
        selected=_bool(obj["selected"], _at(where, "selected")),
        pressed=_bool(obj["pressed"], _at(where, "pressed")),
        checked=None
        if checked is None
        else _enum_value(_CHECKED, checked, _at(where, "checked"), "null or one of"),
        expanded=_opt_bool(obj["expanded"], _at(where, "expanded")),
        invalid=_bool(obj["invalid"], _at(where, "invalid")),
        required=_bool(obj["required"], _at(where, "required")),
        read_only=_bool(obj["read_only"], _at(where, "read_only")),
        busy=_bool(obj["busy"], _at(where, "busy")),
        multiline=_bool(obj["multiline"], _at(where, "multiline")),
        password=_bool(obj["password"], _at(where, "password")),
        modal=_bool(obj["modal"], _at(where, "modal")),
    )


def _numeric(value: object, where: str) -> Numeric | None:
    if value is None:
        return None
    obj = _object(value, where)
    _exact_keys(obj, where, _NUMERIC_KEYS)
    return Numeric(
        current=_opt_number(obj["current"], _at(where, "current")),
        min=_opt_number(obj["min"], _at(where, "min")),
        max=_opt_number(obj["max"], _at(where, "max")),
        step=_opt_number(obj["step"], _at(where, "step")),
        value_text=_opt_string(obj["value_text"], _at(where, "value_text")),
    )


def _text(value: object, where: str) -> TextInfo | None:
    if value is None:
        return None
    obj = _object(value, where)
    _exact_keys(obj, where, ("selection", "caret", "editable"))
    selection = None
    if obj["selection"] is not None:
        sel_where = _at(where, "selection")
        sel = _object(obj["selection"], sel_where)
        _exact_keys(sel, sel_where, ("start", "end"))
        selection = TextSelection(
            _nonneg_int(sel["start"], _at(sel_where, "start")),
            _nonneg_int(sel["end"], _at(sel_where, "end")),
        )
    return TextInfo(
        selection=selection,
        caret=_opt_nonneg_int(obj["caret"], _at(where, "caret")),
        editable=_bool(obj["editable"], _at(where, "editable")),
    )


def _collection(value: object, where: str) -> Collection | None:
    if value is None:
        return None
    obj = _object(value, where)
    _exact_keys(obj, where, _COLLECTION_KEYS)
    return Collection(
        row_index=_opt_int(obj["row_index"], _at(where, "row_index")),
        row_count=_opt_int(obj["row_count"], _at(where, "row_count")),
        row_span=_opt_int(obj["row_span"], _at(where, "row_span")),
        column_index=_opt_int(obj["column_index"], _at(where, "column_index")),
        column_count=_opt_int(obj["column_count"], _at(where, "column_count")),
        column_span=_opt_int(obj["column_span"], _at(where, "column_span")),
        set_size=_opt_int(obj["set_size"], _at(where, "set_size")),
        set_position=_opt_int(obj["set_position"], _at(where, "set_position")),
    )


def _relations(value: object, where: str) -> tuple[tuple[Relation, tuple[int, ...]], ...]:
    obj = _object(value, where)
    _exact_keys(obj, where, _RELATIONS)
    out = []
    for name, kind in _RELATIONS.items():
        targets = _node_ids(obj[name], _at(where, name))
        if targets:
            out.append((kind, targets))
    return tuple(out)


def _frame(value: object, where: str) -> Frame:
    obj = _object(value, where)
    _exact_keys(obj, where, ("origin", "size"))
    ow, sw = _at(where, "origin"), _at(where, "size")
    origin = _object(obj["origin"], ow)
    _exact_keys(origin, ow, ("x", "y"))
    size = _object(obj["size"], sw)
    _exact_keys(size, sw, ("width", "height"))
    return Frame(
        Point(_number(origin["x"], _at(ow, "x")), _number(origin["y"], _at(ow, "y"))),
        Size(_number(size["width"], _at(sw, "width")), _number(size["height"], _at(sw, "height"))),
    )


def decode_issue(value: object, where: str = "issue") -> Issue:
    obj = _object(value, where)
    if "kind" not in obj:
        _fail(_at(where, "kind"), "required")
    kind = obj["kind"]
    if kind == "duplicate_semantic_id":
        _exact_keys(obj, where, ("kind", "semantic_id", "nodes"))
        return DuplicateSemanticId(
            _semantic_id(obj["semantic_id"], _at(where, "semantic_id")),
            _node_ids(obj["nodes"], _at(where, "nodes")),
        )
    if kind == "missing_relation_target":
        _exact_keys(obj, where, ("kind", "source", "relation", "semantic_id"))
        return MissingRelationTarget(
            _node_id(obj["source"], _at(where, "source")),
            _enum_value(_RELATIONS, obj["relation"], _at(where, "relation"), "a relation"),
            _semantic_id(obj["semantic_id"], _at(where, "semantic_id")),
        )
    if kind == "ambiguous_relation_target":
        _exact_keys(obj, where, ("kind", "source", "relation", "semantic_id", "nodes"))
        return AmbiguousRelationTarget(
            _node_id(obj["source"], _at(where, "source")),
            _enum_value(_RELATIONS, obj["relation"], _at(where, "relation"), "a relation"),
            _semantic_id(obj["semantic_id"], _at(where, "semantic_id")),
            _node_ids(obj["nodes"], _at(where, "nodes")),
        )
    _fail(_at(where, "kind"), f"expected one of {', '.join(ISSUE_KINDS)}")


def decode_announcement(value: object, where: str = "announcement") -> Announcement:
    obj = _object(value, where)
    _exact_keys(obj, where, ("node_id", "generation", "live", "atomic", "text"))
    return Announcement(
        node_id=_node_id(obj["node_id"], _at(where, "node_id")),
        generation=_generation(obj["generation"], _at(where, "generation")),
        live=_enum_value(_LIVE, obj["live"], _at(where, "live"), "a live setting"),
        atomic=_bool(obj["atomic"], _at(where, "atomic")),
        text=_string(obj["text"], _at(where, "text")),
    )


def _issues(value: object, where: str) -> tuple[Issue, ...]:
    return tuple(decode_issue(v, f"{where}[{i}]") for i, v in enumerate(_list(value, where)))


def _nodes(value: object, where: str) -> tuple[SemanticsNode, ...]:
    return tuple(decode_node(v, f"{where}[{i}]") for i, v in enumerate(_list(value, where)))


def decode_read(value: object, where: str = "read") -> ReadResult:
    """The inverse of `encode_read`."""
    obj = _object(value, where)
    if "kind" not in obj:
        _fail(_at(where, "kind"), "required")
    kind = obj["kind"]
    if kind == "full":
        _exact_keys(obj, where, ("kind", "generation", "root", "focused", "nodes", "issues"))
        return Full(
            generation=_generation(obj["generation"], _at(where, "generation")),
            root=_opt_node_id(obj["root"], _at(where, "root")),
            focused=_opt_node_id(obj["focused"], _at(where, "focused")),
            nodes=_nodes(obj["nodes"], _at(where, "nodes")),
            issues=_issues(obj["issues"], _at(where, "issues")),
        )
    if kind == "delta":
        _exact_keys(
            obj,
            where,
            ("kind", "from", "to", "root", "focused", "upserted", "removed", "issues",
             "announcements"),
        )  # fmt: skip
        announcements = _list(obj["announcements"], _at(where, "announcements"))
        return Delta(
            from_generation=_generation(obj["from"], _at(where, "from")),
            to_generation=_generation(obj["to"], _at(where, "to")),
            root=_opt_node_id(obj["root"], _at(where, "root")),
            focused=_opt_node_id(obj["focused"], _at(where, "focused")),
            upserted=_nodes(obj["upserted"], _at(where, "upserted")),
            removed=_node_ids(obj["removed"], _at(where, "removed")),
            issues=_issues(obj["issues"], _at(where, "issues")),
            announcements=tuple(
                decode_announcement(a, f"{where}.announcements[{i}]")
                for i, a in enumerate(announcements)
            ),
        )
    if kind == "unchanged":
        _exact_keys(obj, where, ("kind", "generation"))
        return Unchanged(_generation(obj["generation"], _at(where, "generation")))
    _fail(_at(where, "kind"), "expected one of full, delta, unchanged")
