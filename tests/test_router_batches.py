"""JSON-RPC batches through the router: taken apart on a session that negotiated 2024-11-05
or 2025-03-26 (whose transports MUST take them), refused whole before initialize and from
2025-06-18 on (which removed them)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from semledger.hosts import (
    BATCHING_PROTOCOL_VERSIONS,
    INTERNAL_ERROR,
    INVALID_REQUEST,
    Reply,
    Router,
    ToolCall,
    handle,
)
from semledger.runtime._outcomes import Receipt
from semledger.runtime._reads import Unchanged

PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
NOTIFICATION = {"jsonrpc": "2.0", "method": "notifications/initialized"}
RESPONSE = {"jsonrpc": "2.0", "id": 77, "result": {}}


def _initialized(version: str) -> Router:
    router = Router()
    params = {"protocolVersion": version, "capabilities": {}}
    (reply,) = router.receive_message(
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
    )
    assert isinstance(reply, Reply)
    assert router.protocol_version is not None
    return router


def _read(request_id: object) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "read_semantics", "arguments": {}},
    }


def _array(events: list[Any]) -> list[dict[str, Any]]:
    (reply,) = events
    assert isinstance(reply, Reply)
    assert isinstance(reply.message, list)
    json.dumps(reply.message, allow_nan=False)
    return reply.message


def _refused(events: list[Any]) -> str:
    (reply,) = events
    assert isinstance(reply, Reply)
    assert isinstance(reply.message, dict)
    assert reply.message["id"] is None
    assert reply.message["error"]["code"] == INVALID_REQUEST
    why: str = reply.message["error"]["message"]
    return why


@pytest.mark.parametrize("version", sorted(BATCHING_PROTOCOL_VERSIONS))
def test_a_batch_on_a_session_that_negotiated_a_version_with_batches_is_answered_in_one_array(
    version: str,
) -> None:
    """Each member as a message of its own, in the order of the members: a notification and
    a response get no entry, an invalid member an error of its own."""
    router = _initialized(version)
    batch = [
        PING,
        NOTIFICATION,
        5,
        {"jsonrpc": "2.0", "id": "list", "method": "tools/list"},
        RESPONSE,
        {"jsonrpc": "1.0", "id": 3, "method": "ping"},
        {"jsonrpc": "2.0", "id": 4, "method": "no/such"},
    ]
    answers = _array(router.receive_line(json.dumps(batch)))
    assert [(a["id"], a.get("error", {}).get("code")) for a in answers] == [
        (1, None),
        (None, INVALID_REQUEST),
        ("list", None),
        (3, INVALID_REQUEST),
        (4, -32601),
    ]
    assert answers[0]["result"] == {}
    assert [t["name"] for t in answers[2]["result"]["tools"]] == [
        "read_semantics",
        "perform_action",
    ]
    assert router.state.value == "ready"  # the notification in it was handled


def test_a_batch_with_calls_is_answered_once_its_last_call_is_complete() -> None:
    router = _initialized("2025-03-26")
    act = {
        "jsonrpc": "2.0",
        "id": "act",
        "method": "tools/call",
        "params": {
            "name": "perform_action",
            "arguments": {
                "target": {"kind": "semantic_id", "id": "a.b"},
                "action": {"kind": "activate"},
                "precondition": {"kind": "latest"},
            },
        },
    }
    events = router.receive_message([_read(1), PING | {"id": 2}, act, 9])
    read, action = events
    assert isinstance(read, ToolCall)
    assert isinstance(action, ToolCall)
    assert (read.request_id, action.request_id) == (1, "act")
    assert router.pending_calls == 2
    assert router.complete(action, Receipt(3, 4, False)) is None
    answers = _array([router.complete(read, Unchanged(3))])
    assert [a["id"] for a in answers] == [1, 2, "act", None]
    assert answers[0]["result"]["structuredContent"]["value"] == {
        "kind": "unchanged",
        "generation": "3",
    }
    assert answers[2]["result"]["structuredContent"]["value"]["after"] == "4"
    assert router.pending_calls == 0


def test_a_batch_of_notifications_and_responses_is_answered_with_nothing() -> None:
    router = _initialized("2024-11-05")
    assert router.receive_message([NOTIFICATION, RESPONSE, {"jsonrpc": "2.0", "method": "x"}]) == []
    assert router.state.value == "ready"


@pytest.mark.parametrize("version", [None, "2025-06-18", "2025-11-25", "1999-01-01"])
def test_a_batch_before_initialize_or_from_2025_06_18_on_is_refused_whole(
    version: str | None,
) -> None:
    """One -32600 with a null id, and no member handled: no call, no state change."""
    router = Router() if version is None else _initialized(version)
    state = router.state
    why = _refused(router.receive_message([_read(1), NOTIFICATION, PING]))
    assert router.pending_calls == 0
    assert router.state is state
    if version is None:
        assert "before initialize" in why
    else:
        assert router.protocol_version in why
        assert "2025-06-18 removed batching" in why


def test_an_empty_batch_is_one_invalid_request_with_a_null_id() -> None:
    assert "empty" in _refused(_initialized("2025-03-26").receive_line("[]"))


def test_an_initialize_in_a_batch_is_refused_in_the_array_and_negotiates_nothing() -> None:
    router = _initialized("2025-03-26")
    initialize = {
        "jsonrpc": "2.0",
        "id": "again",
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}},
    }
    answers = _array(router.receive_message([initialize, PING]))
    assert answers[0] == {
        "jsonrpc": "2.0",
        "id": "again",
        "error": {
            "code": INVALID_REQUEST,
            "message": "Invalid Request: initialize must not be part of a JSON-RPC batch",
        },
    }
    assert answers[1] == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert router.protocol_version == "2025-03-26"


def test_a_batch_inside_a_batch_is_an_invalid_member() -> None:
    answers = _array(_initialized("2025-03-26").receive_message([[PING], PING]))
    assert [(a["id"], a.get("error", {}).get("code")) for a in answers] == [
        (None, INVALID_REQUEST),
        (1, None),
    ]


def test_a_member_with_the_id_of_a_call_in_progress_is_refused_in_the_array() -> None:
    """In the same batch or an earlier one: its answer could not be told from the call's."""
    router = _initialized("2025-03-26")
    (first,) = router.receive_message([_read(1)])
    assert isinstance(first, ToolCall)
    (second,) = router.receive_message([_read(2), _read(2), PING])  # PING's id is 1
    assert isinstance(second, ToolCall)
    assert router.complete(first, Unchanged(1)) is not None
    answers = _array([router.complete(second, Unchanged(1))])
    assert [(a["id"], a.get("error", {}).get("code")) for a in answers] == [
        (2, None),
        (2, INVALID_REQUEST),
        (1, INVALID_REQUEST),
    ]


def test_a_bug_inside_the_router_is_an_internal_error_for_that_member_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    router = _initialized("2025-03-26")
    original = router._request

    def broken(request_id: Any, *args: Any) -> Any:
        if request_id == "bug":
            raise KeyError("bug")
        return original(request_id, *args)

    monkeypatch.setattr(router, "_request", broken)
    answers = _array(router.receive_message([PING | {"id": "bug"}, PING]))
    assert [(a["id"], a.get("error", {}).get("code")) for a in answers] == [
        ("bug", INTERNAL_ERROR),
        (1, None),
    ]


def test_a_notification_member_that_meets_a_bug_inside_the_router_is_not_answered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A notification gets no response, even an error: its sender matches none."""
    router = _initialized("2025-03-26")

    def broken(*args: Any) -> Any:
        raise KeyError("bug")

    monkeypatch.setattr(router, "_notification", broken)
    answers = _array(router.receive_message([NOTIFICATION, PING]))
    assert [(a["id"], a.get("error")) for a in answers] == [(1, None)]


@pytest.mark.parametrize(
    ("assumed", "taken"), [("2025-03-26", True), ("2024-11-05", True), ("2025-06-18", False)]
)
def test_a_router_that_never_negotiated_judges_batches_by_the_version_its_transport_assumes(
    assumed: str, taken: bool
) -> None:
    """A session resumed by a new server: its client sends no initialize to it."""
    router = Router()
    router.assumed_version = assumed
    events = router.receive_message([PING])
    if taken:
        assert _array(events) == [{"jsonrpc": "2.0", "id": 1, "result": {}}]
    else:
        assert assumed in _refused(events)


def test_an_initialize_answered_outranks_the_version_assumed() -> None:
    router = Router()
    router.assumed_version = "2025-03-26"
    params = {"protocolVersion": "2025-11-25", "capabilities": {}}
    router.receive_message({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
    assert "2025-11-25" in _refused(router.receive_message([PING]))


class _Host:
    def __init__(self) -> None:
        self.reads = 0

    async def read_semantics(self, since: int | None) -> Unchanged:
        self.reads += 1
        return Unchanged(self.reads)

    async def perform_action(self, target: object, action: object, precondition: object) -> Any:
        raise AssertionError("not called")


async def test_handle_answers_a_batch_with_one_array() -> None:
    router = _initialized("2025-03-26")
    host = _Host()
    (answers,) = await handle(router, host, json.dumps([_read("a"), NOTIFICATION, _read("b")]))
    assert isinstance(answers, list)
    assert [a["id"] for a in answers] == ["a", "b"]
    assert [a["result"]["structuredContent"]["value"]["generation"] for a in answers] == [
        "1",
        "2",
    ]
    assert await handle(router, host, json.dumps([NOTIFICATION])) == []
