"""Tools through the router (SPEC §2.2, §2.3, §2.7) against fake in-test hosts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import jsonschema
import mcp.types
import pytest

from semledger.hosts import (
    DEFAULT_TOOLS,
    DIAGNOSTICS_TOOLS,
    AgentDiagnosticsHost,
    AgentHost,
    CommandIntent,
    PerformActionArguments,
    PointerEvent,
    PointerPhase,
    ReadSemanticsArguments,
    Router,
    ToolCall,
    handle,
)
from semledger.runtime._actions import (
    ByNodeId,
    ByPath,
    BySemanticId,
    Exact,
    Latest,
    PathStep,
    Precondition,
    SemanticsAction,
    SetText,
    SimpleAction,
    Target,
)
from semledger.runtime._enums import ActionKind, ErrorCode, Live, Relation, Role
from semledger.runtime._ids import SemanticId
from semledger.runtime._node import (
    Announcement,
    DuplicateSemanticId,
    Frame,
    NodeState,
    Point,
    SemanticsNode,
    Size,
    TextInfo,
)
from semledger.runtime._outcomes import Receipt, Rejection
from semledger.runtime._reads import Delta, Full, ReadResult, Unchanged
from semledger.runtime._wire import MAX_PATH_STEPS, encode_target

ROOT = SemanticsNode(node_id=1, semantic_id=None, role=Role.GROUP, children=(2, 3))
COUNT = SemanticsNode(
    node_id=2,
    semantic_id=SemanticId("counter.value"),
    role=Role.TEXT,
    label="Count",
    value="0",
    live=Live.POLITE,
    frame=Frame(Point(0, 0), Size(100, 20)),
)
INCREMENT = SemanticsNode(
    node_id=3,
    semantic_id=SemanticId("counter.increment"),
    role=Role.BUTTON,
    label="Increment",
    state=NodeState(focused=True),
    actions=(ActionKind.ACTIVATE, ActionKind.FOCUS),
    relations=((Relation.CONTROLS, (2,)),),
    focus_order=0,
    frame=Frame(Point(0, 20), Size(100, 20.5)),
)
STEP = SemanticsNode(
    node_id=4,
    semantic_id=SemanticId("counter.step"),
    role=Role.TEXT_FIELD,
    label="Step",
    value="1",
    text=TextInfo(caret=1, editable=True),
    actions=(ActionKind.SET_TEXT, ActionKind.FOCUS),
)
FULL = Full(
    5, 1, 3, (ROOT, COUNT, INCREMENT, STEP), (DuplicateSemanticId(SemanticId("x.y"), (7, 8)),)
)
DELTA = Delta(4, 5, 1, 3, (COUNT,), (9,), (), (Announcement(2, 5, Live.POLITE, False, "1"),))

PATH = ByPath((PathStep(role=Role.BUTTON, label="Increment"),))
REJECTIONS = [
    Rejection(ErrorCode.HOST_CLOSED, "the host is closed"),
    Rejection(ErrorCode.REENTRANT_DISPATCH, "re-entrant"),
    Rejection(ErrorCode.STALE_GENERATION, "stale", {"expected": 4, "current": 5}),
    Rejection(ErrorCode.STALE_GENERATION, "stale", {"expected": "4", "current": "5"}),
    Rejection(ErrorCode.TARGET_NOT_FOUND, "no such node", {"target": PATH}),
    Rejection(ErrorCode.TARGET_NOT_FOUND, "no such node", {"target": ByNodeId(99)}),
    Rejection(ErrorCode.TARGET_DISABLED, "disabled", {"target": encode_target(PATH)}),
    Rejection(ErrorCode.TARGET_AMBIGUOUS, "two", {"semantic_id": SemanticId("gallery.duplicate")}),
    Rejection(
        ErrorCode.ACTION_UNAVAILABLE,
        "cannot",
        {"target": BySemanticId(SemanticId("counter.value")), "action": SetText("3")},
    ),
    Rejection(
        ErrorCode.HANDLER_REJECTED,
        "empty",
        {"target": BySemanticId(SemanticId("todo.input")), "action": ActionKind.SUBMIT},
    ),
    Rejection(ErrorCode.CONFIRMATION_REQUIRED, "confirm", {"request_id": "abc"}),
    Rejection(ErrorCode.POLICY_DENIED, "no", {"reason": "deleting is not allowed"}),
]


RECEIPT = Receipt(5, 6, False)


class FakeHost:
    """Canned answers; records what it was asked."""

    def __init__(
        self,
        read: ReadResult | Rejection = FULL,
        act: Receipt | Rejection = RECEIPT,
    ) -> None:
        self.read = read
        self.act = act
        self.reads: list[int | None] = []
        self.actions: list[tuple[Target, SemanticsAction, Precondition]] = []

    async def read_semantics(self, since: int | None) -> ReadResult | Rejection:
        self.reads.append(since)
        return self.read

    async def perform_action(
        self, target: Target, action: SemanticsAction, precondition: Precondition
    ) -> Receipt | Rejection:
        self.actions.append((target, action, precondition))
        return self.act


class FakeDiagnostics:
    def __init__(self) -> None:
        self.events: list[PointerEvent] = []
        self.intents: list[CommandIntent] = []

    async def read_state(self) -> dict[str, Any]:
        return {
            "layout_passes": 3,
            "paint_passes": 4,
            "semantics_passes": 3,
            "platform_passes": 3,
            "commits": 5,
            "generation": 5,
            "queue_depth": 0,
            "pending_effects": 0,
        }

    async def read_paint(self) -> dict[str, Any]:
        return {"ops": 3, "by_kind": {"rect": 2, "text": 1}, "hovered": "3", "paint_passes": 4}

    async def dispatch_event(self, event: PointerEvent) -> dict[str, Any]:
        self.events.append(event)
        return {"handled": True, "node_id": 3, "before": 5, "after": 6}

    async def dispatch_command(self, intent: CommandIntent) -> dict[str, Any]:
        self.intents.append(intent)
        return {"handled": False, "node_id": None, "reason": "nothing handles it"}


class FakeBoth(FakeHost, FakeDiagnostics):
    def __init__(self) -> None:
        FakeHost.__init__(self)
        FakeDiagnostics.__init__(self)


def _call(name: str, arguments: object = None, request_id: object = 1) -> str:
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    return json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    )


def _schema(router: Router, name: str) -> dict[str, Any]:
    (tool,) = [t for t in _tools_list(router) if t["name"] == name]
    schema: dict[str, Any] = tool["outputSchema"]
    return schema


def _tools_list(router: Router) -> list[dict[str, Any]]:
    (reply,) = router.receive_line('{"jsonrpc": "2.0", "id": "l", "method": "tools/list"}')
    assert not isinstance(reply, ToolCall)
    tools: list[dict[str, Any]] = reply.message["result"]["tools"]
    return tools


def _result(messages: list[dict[str, Any]], request_id: object = 1) -> dict[str, Any]:
    (message,) = messages
    assert message["id"] == request_id
    result: dict[str, Any] = message["result"]
    assert set(result) == {"content", "structuredContent", "isError"}
    assert result["content"] == [
        {
            "type": "text",
            "text": json.dumps(
                result["structuredContent"], separators=(",", ":"), ensure_ascii=False
            ),
        }
    ]
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    assert result["isError"] is (not result["structuredContent"]["ok"])
    mcp.types.CallToolResult.model_validate(result)
    return result


def _validate(router: Router, tool: str, result: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator(_schema(router, tool)).validate(result["structuredContent"])


# --- tools/list ---------------------------------------------------------------------------


def test_default_profile_lists_exactly_the_two_tools() -> None:
    assert [t["name"] for t in _tools_list(Router())] == ["read_semantics", "perform_action"]


def test_diagnostics_profile_adds_the_four_diagnostics_tools() -> None:
    assert [t["name"] for t in _tools_list(Router(profile="diagnostics"))] == [
        "read_semantics",
        "perform_action",
        "diagnostics_read_state",
        "diagnostics_read_paint",
        "diagnostics_dispatch_event",
        "diagnostics_dispatch_command",
    ]


def test_unknown_profile_is_refused() -> None:
    with pytest.raises(ValueError, match="profile"):
        Router(profile="everything")  # type: ignore[arg-type]


def _object_schemas(schema: object) -> Iterator[dict[str, Any]]:
    if isinstance(schema, dict):
        if schema.get("type") == "object" or ("properties" in schema and "type" in schema):
            yield schema
        for value in schema.values():
            yield from _object_schemas(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _object_schemas(value)


@pytest.mark.parametrize("tool", DIAGNOSTICS_TOOLS, ids=lambda t: t.name)
def test_every_tool_is_complete_and_its_schemas_are_closed(tool: Any) -> None:
    wire = tool.to_wire()
    assert {"name", "description", "inputSchema", "outputSchema"} <= set(wire)
    assert len(wire["description"]) > 80
    mcp.types.Tool.model_validate(wire)
    for schema in (wire["inputSchema"], wire["outputSchema"]):
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object"
        objects = list(_object_schemas(schema))
        assert objects
        for obj in objects:
            # A union of objects (``type: object`` for clients that look only there) is
            # closed by each of its alternatives.
            alternatives = obj.get("oneOf", [obj])
            assert all(alt["additionalProperties"] is False for alt in alternatives), obj


def test_read_semantics_description_explains_generations_and_reads() -> None:
    text = DEFAULT_TOOLS[0].description
    for word in ("generation", "full", "delta", "unchanged", "since"):
        assert word in text
    text = DEFAULT_TOOLS[1].description
    for word in ("target", "precondition", "exact", "latest", "semantic_id", "path", "receipt"):
        assert word in text


def test_tools_list_hands_out_copies() -> None:
    router = Router()
    _tools_list(router)[0]["inputSchema"]["properties"].clear()
    assert _tools_list(router)[0]["inputSchema"]["properties"]


def test_input_schemas_agree_with_the_decoder_on_samples() -> None:
    schema = _tools_list(Router())[1]["inputSchema"]
    validator = jsonschema.Draft202012Validator(schema)
    good = {
        "target": {"kind": "path", "path": [{"role": "button", "label": None}]},
        "action": {"kind": "set_selection", "start": 0, "end": 2},
        "precondition": {"kind": "exact", "generation": "0"},
    }
    assert validator.is_valid(good)
    assert validator.is_valid({**good, "target": {"kind": "semantic_id", "id": "a" * 255}})
    for bad in [
        {**good, "extra": 1},
        {**good, "target": {"kind": "semantic_id", "id": "a" * 256}},
        {**good, "target": {"kind": "path", "path": []}},
        {**good, "target": {"kind": "path", "path": [{"index": 1}]}},
        {**good, "target": {"kind": "path", "path": [{"role": None}]}},
        {**good, "target": {"kind": "path", "path": [{"role": "none"}]}},
        {**good, "target": {"kind": "path", "path": [{"role": "button", "index": -1}]}},
        {**good, "target": {"kind": "node_id", "id": "0"}},
        {**good, "action": {"kind": "activate", "value": "x"}},
        {**good, "precondition": {"kind": "exact", "generation": "01"}},
        {"target": good["target"], "action": good["action"]},
    ]:
        assert not validator.is_valid(bad), bad


# --- read_semantics -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("since", "read"),
    [(None, FULL), ("4", DELTA), ("5", Unchanged(5)), ("18446744073709551615", FULL)],
)
async def test_read_results_validate_against_the_output_schema(
    since: str | None, read: ReadResult
) -> None:
    router = Router()
    host = FakeHost(read=read)
    arguments = {} if since is None else {"since": since}
    result = _result(await handle(router, host, _call("read_semantics", arguments)))
    assert result["isError"] is False
    assert result["structuredContent"]["value"]["kind"] == type(read).__name__.lower()
    _validate(router, "read_semantics", result)
    assert host.reads == [None if since is None else int(since)]


async def test_full_read_value_on_the_wire() -> None:
    result = _result(await handle(Router(), FakeHost(), _call("read_semantics")))
    value = result["structuredContent"]["value"]
    assert value["generation"] == "5"
    assert (value["root"], value["focused"]) == ("1", "3")
    assert [n["node_id"] for n in value["nodes"]] == ["1", "2", "3", "4"]
    assert value["nodes"][2]["relations"]["controls"] == ["2"]
    assert value["issues"] == [
        {"kind": "duplicate_semantic_id", "semantic_id": "x.y", "nodes": ["7", "8"]}
    ]


@pytest.mark.parametrize(
    "arguments",
    [
        {"since": 4},
        {"since": "04"},
        {"since": "-1"},
        {"since": "18446744073709551616"},
        {"since": None},
        {"generation": "4"},
        {"since": "4", "full": True},
    ],
)
async def test_invalid_read_arguments_are_a_tool_result_and_reach_no_host(
    arguments: dict[str, Any],
) -> None:
    router = Router()
    host = FakeHost()
    result = _result(await handle(router, host, _call("read_semantics", arguments)))
    assert result["isError"] is True
    error = result["structuredContent"]["error"]
    assert error["code"] == "invalid_arguments"
    assert error["details"] == {}
    assert error["message"]
    _validate(router, "read_semantics", result)
    assert host.reads == []


# --- perform_action -----------------------------------------------------------------------

ACT = {
    "target": {"kind": "semantic_id", "id": "counter.increment"},
    "action": {"kind": "activate"},
    "precondition": {"kind": "exact", "generation": "5"},
}


async def test_perform_action_decodes_and_answers_the_receipt() -> None:
    router = Router()
    host = FakeHost(act=Receipt(5, 5, True))
    result = _result(await handle(router, host, _call("perform_action", ACT, "a")), "a")
    assert result["structuredContent"] == {
        "ok": True,
        "value": {"before": "5", "after": "5", "pending_work": True},
    }
    _validate(router, "perform_action", result)
    assert host.actions == [
        (BySemanticId(SemanticId("counter.increment")), SimpleAction(ActionKind.ACTIVATE), Exact(5))
    ]


def test_an_id_still_in_progress_is_refused_and_free_again_once_answered() -> None:
    router = Router()
    (first,) = router.receive_line(_call("perform_action", ACT, 7))
    assert isinstance(first, ToolCall)
    (again,) = router.receive_line(_call("read_semantics", {}, 7))
    assert not isinstance(again, ToolCall)
    assert again.message["id"] == 7
    assert again.message["error"]["code"] == -32600
    assert "still in progress" in again.message["error"]["message"]
    (other_type,) = router.receive_line(_call("read_semantics", {}, "7"))
    assert isinstance(other_type, ToolCall)  # "7" is not 7
    for line in (
        _call("no_such_tool", {}, 7),
        _call("perform_action", {"target": 5}, 7),
        json.dumps({"jsonrpc": "2.0", "id": 7, "method": "ping"}),
        json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/list"}),
    ):
        (refused,) = router.receive_line(line)
        assert not isinstance(refused, ToolCall)
        assert refused.message["error"]["code"] == -32600, line
    router.complete(first, Receipt(1, 2, False))
    (later,) = router.receive_line(_call("read_semantics", {}, 7))
    assert isinstance(later, ToolCall)


def test_the_tool_call_event_carries_decoded_and_raw_arguments() -> None:
    (call,) = Router().receive_line(_call("perform_action", ACT, 12))
    assert isinstance(call, ToolCall)
    assert call.request_id == 12
    assert call.tool == "perform_action"
    assert call.arguments == PerformActionArguments(
        BySemanticId(SemanticId("counter.increment")), SimpleAction(ActionKind.ACTIVATE), Exact(5)
    )
    assert call.raw_arguments == ACT
    (call,) = Router().receive_line(_call("read_semantics", {"since": "0"}))
    assert isinstance(call, ToolCall)
    assert call.arguments == ReadSemanticsArguments(0)


@pytest.mark.parametrize("rejection", REJECTIONS, ids=lambda r: str(r.code))
async def test_rejections_are_tool_results_that_validate(rejection: Rejection) -> None:
    router = Router()
    result = _result(await handle(router, FakeHost(act=rejection), _call("perform_action", ACT)))
    assert result["isError"] is True
    error = result["structuredContent"]["error"]
    assert error["code"] == rejection.code.value
    assert error["message"] == rejection.message
    _validate(router, "perform_action", result)


async def test_rejection_details_echo_the_target_in_input_form() -> None:
    result = _result(
        await handle(Router(), FakeHost(act=REJECTIONS[4]), _call("perform_action", ACT))
    )
    assert result["structuredContent"]["error"]["details"] == {
        "target": {
            "kind": "path",
            "path": [
                {
                    "index": 0,
                    "role": "button",
                    "label": "Increment",
                    "value": None,
                    "semantic_id": None,
                }
            ],
        }
    }
    result = _result(
        await handle(Router(), FakeHost(act=REJECTIONS[2]), _call("perform_action", ACT))
    )
    assert result["structuredContent"]["error"]["details"] == {"expected": "4", "current": "5"}


async def test_read_can_be_rejected_too() -> None:
    router = Router()
    result = _result(await handle(router, FakeHost(read=REJECTIONS[0]), _call("read_semantics")))
    assert result["structuredContent"]["error"]["code"] == "host_closed"
    _validate(router, "read_semantics", result)


def test_wrong_error_shapes_do_not_validate() -> None:
    validator = jsonschema.Draft202012Validator(_schema(Router(), "perform_action"))
    for wrong in [
        {
            "ok": False,
            "error": {
                "code": "stale_generation",
                "message": "m",
                "details": {"expected": 4, "current": 5},
            },
        },
        {"ok": False, "error": {"code": "stale_generation", "message": "m", "details": {}}},
        {"ok": False, "error": {"code": "host_closed", "message": "m", "details": {"x": 1}}},
        {
            "ok": False,
            "error": {
                "code": "target_not_found",
                "message": "m",
                "details": {"target": {"kind": "path", "path": [{"role": "button"}]}},
            },
        },
        {"ok": False, "error": {"code": "exploded", "message": "m", "details": {}}},
        {"ok": False, "error": {"code": "host_closed", "details": {}}},
        {"ok": False},
    ]:
        assert not validator.is_valid(wrong), wrong


@pytest.mark.parametrize(
    "arguments",
    [
        {},
        {**ACT, "extra": 1},
        {**ACT, "target": {"kind": "path", "path": []}},
        {**ACT, "target": {"kind": "path", "path": [{"index": 0}]}},
        {**ACT, "target": {"kind": "path", "path": [{"role": "none"}]}},
        {**ACT, "target": {"kind": "path", "path": [{"role": "bogus"}]}},
        {**ACT, "target": {"kind": "path", "path": [{"role": "button", "index": -1}]}},
        {**ACT, "target": {"kind": "path", "path": [{"role": "button", "idx": 1}]}},
        {**ACT, "target": {"kind": "node_id", "id": "0"}},
        {**ACT, "target": {"kind": "semantic_id", "id": "has space"}},
        {**ACT, "action": {"kind": "set_text"}},
        {**ACT, "action": {"kind": "set_numeric_value", "value": True}},
        {**ACT, "action": {"kind": "set_selection", "start": -1, "end": 0}},
        {**ACT, "precondition": {"kind": "exact", "generation": 5}},
        {"target": ACT["target"], "action": ACT["action"]},
    ],
)
async def test_invalid_action_arguments_are_a_tool_result_and_reach_no_host(
    arguments: dict[str, Any],
) -> None:
    router = Router()
    host = FakeHost()
    result = _result(await handle(router, host, _call("perform_action", arguments)))
    assert result["structuredContent"]["error"]["code"] == "invalid_arguments"
    _validate(router, "perform_action", result)
    assert host.actions == []


# --- unknown tools and profiles -----------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "diagnostics_read_state",
        "diagnostics_read_paint",
        "diagnostics_dispatch_event",
        "diagnostics_dispatch_command",
        "click",
        "",
        "Read_Semantics",
    ],
)
async def test_unknown_tools_and_diagnostics_on_the_default_profile_are_unknown_tool(
    name: str,
) -> None:
    host = FakeBoth()
    result = _result(await handle(Router(), host, _call(name, {"intent": "Activate"})))
    assert result["isError"] is True
    error = result["structuredContent"]["error"]
    assert (error["code"], error["details"]) == ("unknown_tool", {})
    assert host.intents == []
    assert host.reads == []


async def test_diagnostics_tools_on_the_diagnostics_profile() -> None:
    router = Router(profile="diagnostics")
    host = FakeHost()
    diagnostics = FakeDiagnostics()

    async def call(name: str, arguments: object = None) -> dict[str, Any]:
        result = _result(await handle(router, host, _call(name, arguments), diagnostics))
        _validate(router, name, result)
        return result["structuredContent"]  # type: ignore[no-any-return]

    state = await call("diagnostics_read_state")
    assert state["value"]["generation"] == "5"
    assert state["value"]["commits"] == 5
    paint = await call("diagnostics_read_paint", {})
    assert paint["value"] == {
        "ops": 3,
        "by_kind": {"rect": 2, "text": 1},
        "hovered": "3",
        "paint_passes": 4,
    }
    event = {"event": {"kind": "Pointer", "position": {"x": 10, "y": 25.5}, "phase": "Down"}}
    dispatched = await call("diagnostics_dispatch_event", event)
    assert dispatched["value"] == {"handled": True, "node_id": "3", "before": "5", "after": "6"}
    assert diagnostics.events == [PointerEvent(10.0, 25.5, PointerPhase.DOWN)]
    command = await call("diagnostics_dispatch_command", {"intent": "SelectAll"})
    assert command["value"] == {"handled": False, "node_id": None, "reason": "nothing handles it"}
    assert diagnostics.intents == [CommandIntent.SELECT_ALL]
    assert (await call("read_semantics"))["ok"] is True


def test_wrong_diagnostics_values_do_not_validate() -> None:
    router = Router(profile="diagnostics")
    state = jsonschema.Draft202012Validator(_schema(router, "diagnostics_read_state"))
    paint = jsonschema.Draft202012Validator(_schema(router, "diagnostics_read_paint"))
    event = jsonschema.Draft202012Validator(_schema(router, "diagnostics_dispatch_event"))
    counters = {
        "layout_passes": 1,
        "paint_passes": 1,
        "semantics_passes": 1,
        "commits": 1,
        "generation": "1",
        "queue_depth": 0,
    }
    assert state.is_valid({"ok": True, "value": counters})
    assert not state.is_valid({"ok": True, "value": {**counters, "generation": 1}})
    assert not state.is_valid({"ok": True, "value": {**counters, "frames": 1}})
    assert not state.is_valid({"ok": True, "value": {"error": "host_closed"}})
    summary = {"ops": 1, "by_kind": {"rect": 1}, "hovered": None, "paint_passes": 1}
    assert paint.is_valid({"ok": True, "value": summary})
    assert not paint.is_valid({"ok": True, "value": {**summary, "by_kind": {"rect": "1"}}})
    assert not paint.is_valid({"ok": True, "value": {**summary, "by_kind": {"Rect!": 1}}})
    assert not paint.is_valid({"ok": True, "value": {**summary, "hovered": 3}})
    assert event.is_valid(
        {"ok": True, "value": {"handled": False, "node_id": "2", "error": "target_disabled"}}
    )
    assert not event.is_valid(
        {"ok": True, "value": {"handled": False, "node_id": "2", "error": "exploded"}}
    )
    assert not event.is_valid({"ok": True, "value": {"node_id": "2"}})
    assert not event.is_valid({"ok": True, "value": {"handled": True, "x": 1}})


async def test_a_host_implementing_both_protocols_serves_diagnostics() -> None:
    host = FakeBoth()
    assert isinstance(host, AgentHost)
    assert isinstance(host, AgentDiagnosticsHost)
    router = Router(profile="diagnostics")
    result = _result(
        await handle(router, host, _call("diagnostics_dispatch_command", {"intent": "Undo"}))
    )
    assert result["structuredContent"]["ok"] is True
    assert host.intents == [CommandIntent.UNDO]


async def test_diagnostics_without_a_diagnostics_host_is_unknown_tool() -> None:
    router = Router(profile="diagnostics")
    result = _result(await handle(router, FakeHost(), _call("diagnostics_read_state")))
    assert result["structuredContent"]["error"]["code"] == "unknown_tool"


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("diagnostics_read_state", {"verbose": True}),
        ("diagnostics_read_paint", {"x": 1}),
        ("diagnostics_dispatch_event", {}),
        (
            "diagnostics_dispatch_event",
            {"event": {"kind": "Key", "position": {"x": 1, "y": 1}, "phase": "Down"}},
        ),
        (
            "diagnostics_dispatch_event",
            {"event": {"kind": "Pointer", "position": {"x": 1}, "phase": "Down"}},
        ),
        (
            "diagnostics_dispatch_event",
            {"event": {"kind": "Pointer", "position": {"x": True, "y": 1}, "phase": "Down"}},
        ),
        (
            "diagnostics_dispatch_event",
            {"event": {"kind": "Pointer", "position": {"x": 1, "y": 1}, "phase": "down"}},
        ),
        (
            "diagnostics_dispatch_event",
            {
                "event": {
                    "kind": "Pointer",
                    "position": {"x": 1, "y": 1},
                    "phase": "Down",
                    "button": 0,
                }
            },
        ),
        ("diagnostics_dispatch_command", {"intent": "activate"}),
        ("diagnostics_dispatch_command", {"intent": "Activate", "x": 1}),
        ("diagnostics_dispatch_command", {}),
    ],
)
async def test_invalid_diagnostics_arguments_are_invalid_arguments(
    name: str, arguments: dict[str, Any]
) -> None:
    router = Router(profile="diagnostics")
    diagnostics = FakeDiagnostics()
    result = _result(await handle(router, FakeHost(), _call(name, arguments), diagnostics))
    assert result["structuredContent"]["error"]["code"] == "invalid_arguments"
    _validate(router, name, result)
    assert diagnostics.events == []
    assert diagnostics.intents == []


@pytest.mark.parametrize("x", ["1e400", "-1e400", "1" + "0" * 400, "9" * 5000])
async def test_a_pointer_position_past_a_double_s_range_is_invalid_arguments(x: str) -> None:
    """JSON has no such limit: 1e400, and an integer too large for a double, are numbers
    the arguments are refused for, not a bug in the router."""
    arguments = {"event": {"kind": "Pointer", "position": {"x": "X", "y": 1}, "phase": "Down"}}
    line = _call("diagnostics_dispatch_event", arguments).replace('"X"', x)
    router = Router(profile="diagnostics")
    diagnostics = FakeDiagnostics()
    result = _result(await handle(router, FakeHost(), line, diagnostics))
    assert result["structuredContent"]["error"]["code"] == "invalid_arguments"
    assert diagnostics.events == []


async def test_diagnostics_go_to_the_diagnostics_host_given_over_a_host_that_offers_them() -> None:
    host, diagnostics = FakeBoth(), FakeDiagnostics()
    arguments = {"intent": "Undo"}
    router = Router(profile="diagnostics")
    await handle(router, host, _call("diagnostics_dispatch_command", arguments), diagnostics)
    assert (diagnostics.intents, host.intents) == ([CommandIntent.UNDO], [])


async def test_ids_and_generations_nested_in_a_diagnostics_answer_are_decimal_strings() -> None:
    class Nested(FakeDiagnostics):
        async def read_state(self) -> dict[str, Any]:
            return {"generation": 5, "nodes": [{"node_id": 3, "depth": 1}], "pairs": [(4, 6)]}

    router = Router(profile="diagnostics")
    result = _result(await handle(router, FakeHost(), _call("diagnostics_read_state"), Nested()))
    assert result["structuredContent"]["value"] == {
        "generation": "5",
        "nodes": [{"node_id": "3", "depth": 1}],
        "pairs": [[4, 6]],
    }


@pytest.mark.parametrize("intent", list(CommandIntent))
async def test_every_command_intent_is_accepted(intent: CommandIntent) -> None:
    router = Router(profile="diagnostics")
    diagnostics = FakeDiagnostics()
    arguments = {"intent": intent.value}
    await handle(router, FakeHost(), _call("diagnostics_dispatch_command", arguments), diagnostics)
    assert diagnostics.intents == [intent]


def test_latest_precondition_and_node_id_targets_reach_the_tool_call() -> None:
    arguments = {
        "target": {"kind": "node_id", "id": "3"},
        "action": {"kind": "focus"},
        "precondition": {"kind": "latest"},
    }
    (call,) = Router().receive_line(_call("perform_action", arguments))
    assert isinstance(call, ToolCall)
    assert call.arguments == PerformActionArguments(
        ByNodeId(3), SimpleAction(ActionKind.FOCUS), Latest()
    )


def _decimals() -> Any:
    from hypothesis import strategies as st

    near_edges = st.sampled_from([0, 1, 9, 10, 2**64 - 2, 2**64 - 1, 2**64, 10**19, 10**20])
    numbers = st.one_of(st.integers(0, 2**66), near_edges).map(str)
    return st.one_of(numbers, numbers.map(lambda t: "0" + t), st.text("0123456789-+ ", max_size=22))


@pytest.mark.parametrize(("schema", "smallest"), [("generation", 0), ("node_id", 1)])
def test_the_id_patterns_accept_exactly_what_the_server_takes(schema: str, smallest: int) -> None:
    """They accepted 20 digits past 2**64-1, which the server refuses: a client that checks
    its arguments against the schema was told nothing."""
    import re

    from hypothesis import given, settings

    from semledger.hosts import _tools
    from semledger.runtime._ids import parse_u64

    pattern = re.compile(
        (_tools._GENERATION if schema == "generation" else _tools._NODE_ID)["pattern"]
    )

    @settings(max_examples=500, deadline=None)
    @given(_decimals())
    def check(text: str) -> None:
        value = parse_u64(text)
        taken = value is not None and value >= smallest
        assert (pattern.fullmatch(text) is not None) == taken, text

    check()


async def test_a_path_over_the_step_limit_is_refused_in_a_short_answer() -> None:
    """The refusal names the argument and the count: it does not echo the path."""
    router = Router()
    host = FakeHost()
    steps = [{"role": "button"}] * 200_000
    messages = await handle(
        router, host, _call("perform_action", {**ACT, "target": {"kind": "path", "path": steps}})
    )
    assert len(json.dumps(messages)) < 1_000
    assert _result(messages)["structuredContent"]["error"] == {
        "code": "invalid_arguments",
        "message": f"target.path: expected at most {MAX_PATH_STEPS} path steps, got 200000",
        "details": {},
    }
    assert host.actions == []


def test_the_input_schema_bounds_a_path_as_the_decoder_does() -> None:
    validator = jsonschema.Draft202012Validator(_tools_list(Router())[1]["inputSchema"])
    for steps, valid in [(MAX_PATH_STEPS, True), (MAX_PATH_STEPS + 1, False)]:
        target = {"kind": "path", "path": [{"role": "button"}] * steps}
        assert validator.is_valid({**ACT, "target": target}) is valid
