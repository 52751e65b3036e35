"""MCP lifecycle through the router (SPEC §2.1): initialize, negotiation, ping, notifications."""

from __future__ import annotations

import json
from typing import Any

import mcp.types
import pytest

from semledger.hosts import (
    DEFAULT_INSTRUCTIONS,
    INVALID_PARAMS,
    INVALID_REQUEST,
    LATEST_PROTOCOL_VERSION,
    SUPPORTED_PROTOCOL_VERSIONS,
    TRANSITIONS,
    LifecycleEvent,
    LifecycleState,
    Reply,
    Router,
    ToolCall,
)


def _line(message: dict[str, Any]) -> str:
    return json.dumps(message)


def _request(request_id: object, method: str, params: object = None) -> str:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return _line(message)


def _notify(method: str, params: object = None) -> str:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return _line(message)


def _initialize(request_id: object = 1, version: object = "2025-06-18") -> str:
    return _request(
        request_id,
        "initialize",
        {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    )


def _reply(events: list[Any]) -> dict[str, Any]:
    assert len(events) == 1
    assert isinstance(events[0], Reply)
    message: dict[str, Any] = events[0].message
    return message


def test_supported_versions_include_the_four_of_the_spec() -> None:
    assert set(SUPPORTED_PROTOCOL_VERSIONS) >= {
        "2024-11-05",
        "2025-03-26",
        "2025-06-18",
        "2025-11-25",
    }
    assert LATEST_PROTOCOL_VERSION == "2025-11-25"


@pytest.mark.parametrize("version", SUPPORTED_PROTOCOL_VERSIONS)
def test_initialize_echoes_a_supported_version(version: str) -> None:
    router = Router()
    reply = _reply(router.receive_line(_initialize(7, version)))
    assert reply["id"] == 7
    assert reply["result"]["protocolVersion"] == version
    assert router.protocol_version == version


@pytest.mark.parametrize("version", ["2023-01-01", "2099-12-31", "", "latest"])
def test_initialize_answers_the_latest_for_an_unsupported_version(version: str) -> None:
    reply = _reply(Router().receive_line(_initialize(1, version)))
    assert reply["result"]["protocolVersion"] == LATEST_PROTOCOL_VERSION


def test_initialize_result_names_semledger_and_its_tools_capability() -> None:
    router = Router(version="9.9.9")
    result = _reply(router.receive_line(_initialize()))["result"]
    assert result["serverInfo"] == {"name": "semledger", "version": "9.9.9"}
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    mcp.types.InitializeResult.model_validate(result)
    assert router.client_info == {"name": "t", "version": "1"}


@pytest.mark.parametrize(
    ("instructions", "expected"),
    [(DEFAULT_INSTRUCTIONS, DEFAULT_INSTRUCTIONS), ("Be brief.", "Be brief."), (None, None)],
)
def test_initialize_result_carries_the_instructions_given_and_none_when_there_are_none(
    instructions: str | None, expected: str | None
) -> None:
    result = _reply(Router(instructions=instructions).receive_line(_initialize()))["result"]
    assert result.get("instructions") == expected
    assert ("instructions" in result) is (expected is not None)


def test_a_router_gives_the_default_instructions_unless_told_otherwise() -> None:
    result = _reply(Router().receive_line(_initialize()))["result"]
    assert result["instructions"] == DEFAULT_INSTRUCTIONS


def test_lifecycle_states_advance_on_initialize_then_initialized() -> None:
    router = Router()
    states = [router.state]
    router.receive_line(_initialize())
    states.append(router.state)
    assert router.receive_line(_notify("notifications/initialized")) == []
    states.append(router.state)
    assert states == [
        LifecycleState.AWAITING_INITIALIZE,
        LifecycleState.INITIALIZING,
        LifecycleState.READY,
    ]


def test_initialized_before_initialize_is_ignored() -> None:
    router = Router()
    assert router.receive_line(_notify("notifications/initialized")) == []
    assert router.state is LifecycleState.AWAITING_INITIALIZE


@pytest.mark.parametrize("confirm", [False, True])
def test_a_second_initialize_is_refused_and_changes_nothing(confirm: bool) -> None:
    router = Router()
    router.receive_line(_initialize(1, "2025-03-26"))
    if confirm:
        router.receive_line(_notify("notifications/initialized"))
    state = router.state
    reply = _reply(router.receive_line(_initialize("again", "2025-06-18")))
    assert reply["id"] == "again"
    assert reply["error"]["code"] == INVALID_REQUEST
    assert router.protocol_version == "2025-03-26"
    assert router.state is state


@pytest.mark.parametrize("confirm", [False, True])
def test_a_malformed_initialize_once_initialized_is_refused_as_a_second_one(
    confirm: bool,
) -> None:
    """Not -32602, which tells the client to fix its params and try again."""
    router = Router()
    router.receive_line(_initialize(1, "2025-03-26"))
    if confirm:
        router.receive_line(_notify("notifications/initialized"))
    state = router.state
    reply = _reply(router.receive_line(_request("again", "initialize", {"capabilities": {}})))
    assert (reply["id"], reply["error"]["code"]) == ("again", INVALID_REQUEST)
    assert (router.protocol_version, router.state) == ("2025-03-26", state)


@pytest.mark.parametrize(
    "params",
    [None, [], "2025-06-18", {}, {"protocolVersion": 20250618}, {"protocolVersion": None}],
)
def test_malformed_initialize_is_invalid_params_and_can_be_retried(params: object) -> None:
    router = Router()
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": "initialize"}
    if params is not None:
        message["params"] = params
    reply = _reply(router.receive_message(message))
    assert reply["id"] == 1
    assert reply["error"]["code"] == INVALID_PARAMS
    assert router.state is LifecycleState.AWAITING_INITIALIZE
    assert "result" in _reply(router.receive_line(_initialize(2)))


@pytest.mark.parametrize("initialized", [False, True])
def test_ping_answers_an_empty_object_in_any_state(initialized: bool) -> None:
    router = Router()
    if initialized:
        router.receive_line(_initialize())
    assert _reply(router.receive_line(_request(5, "ping"))) == {
        "jsonrpc": "2.0",
        "id": 5,
        "result": {},
    }


def test_tools_list_and_calls_before_initialize_are_answered_normally() -> None:
    router = Router()
    tools = _reply(router.receive_line(_request(1, "tools/list")))["result"]["tools"]
    assert [t["name"] for t in tools] == ["read_semantics", "perform_action"]
    events = router.receive_line(
        _request(2, "tools/call", {"name": "read_semantics", "arguments": {}})
    )
    assert len(events) == 1
    assert isinstance(events[0], ToolCall)
    assert router.state is LifecycleState.AWAITING_INITIALIZE


@pytest.mark.parametrize(
    "line",
    [
        _notify("notifications/initialized"),
        _notify("notifications/cancelled", {"requestId": 1, "reason": "user"}),
        _notify("notifications/progress", {"progressToken": 1, "progress": 1}),
        _notify("notifications/roots/list_changed"),
        _notify("no/such/notification", [1, 2]),
        _notify("tools/call", {"name": "read_semantics"}),
        _notify("ping"),
    ],
)
def test_notifications_never_get_a_response(line: str) -> None:
    router = Router()
    router.receive_line(_initialize())
    assert router.receive_line(line) == []


def test_cancelled_is_understood_but_the_request_is_still_answered() -> None:
    from semledger.runtime._reads import Unchanged

    router = Router()
    (call,) = router.receive_line(
        _request(9, "tools/call", {"name": "read_semantics", "arguments": {"since": "1"}})
    )
    assert isinstance(call, ToolCall)
    assert router.receive_line(_notify("notifications/cancelled", {"requestId": 9})) == []
    reply = router.complete(call, Unchanged(1)).message
    assert reply["id"] == 9
    assert reply["result"]["isError"] is False


def test_the_transition_table_is_total() -> None:
    assert set(TRANSITIONS) == {(s, e) for s in LifecycleState for e in LifecycleEvent}
