"""JSON-RPC error handling through the router (SPEC §2.1): each code, with the right id."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from semledger.hosts import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    PerformActionArguments,
    RefusedArguments,
    Reply,
    Router,
    RouterUsageError,
    ToolCall,
    handle,
)
from semledger.hosts._router import encode_json, parse_error_reply, parse_json
from semledger.runtime._actions import ByPath
from semledger.runtime._reads import Unchanged


def _only(events: list[Any]) -> dict[str, Any]:
    assert len(events) == 1
    assert isinstance(events[0], Reply)
    message: dict[str, Any] = events[0].message
    json.dumps(message)
    return message


def _error(events: list[Any]) -> tuple[object, int]:
    message = _only(events)
    assert message["jsonrpc"] == "2.0"
    assert set(message) == {"jsonrpc", "id", "error"}
    assert isinstance(message["error"]["message"], str)
    return message["id"], message["error"]["code"]


@pytest.mark.parametrize(
    "line",
    [
        "garbage",
        "{",
        '{"jsonrpc": "2.0", "id": 1,',
        "NaN",
        "Infinity",
        '{"a": -Infinity}',
        "'single'",
        "{'jsonrpc': '2.0'}",
        b"\xff\xfe{}",
        "[" * 100_000,
    ],
)
def test_a_line_that_is_not_json_is_a_parse_error_with_a_null_id(line: str | bytes) -> None:
    assert _error(Router().receive_line(line)) == (None, PARSE_ERROR)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-32-be", "utf-8-sig"])
def test_parse_json_reads_bytes_as_utf8_only_as_a_line_is_read(encoding: str) -> None:
    """The HTTP transport parses its body with parse_json: json.loads alone would guess
    UTF-16 or UTF-32 and skip a byte-order mark, where a stdio line is not JSON."""
    data = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "ping"}).encode(encoding)
    with pytest.raises((UnicodeDecodeError, json.JSONDecodeError)) as raised:
        parse_json(data)
    assert _only([Reply(parse_error_reply(raised.value))]) == _only(Router().receive_line(data))


def test_a_json_line_nested_too_deep_to_read_says_so_not_that_it_is_not_json() -> None:
    line = "[" * 100_000 + "]" * 100_000
    message = _only(Router().receive_line(line))
    assert message["error"] == {
        "code": PARSE_ERROR, "message": "Parse error: the line nests too deep to read",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("line", "request_id"),
    [
        ('{"jsonrpc": "2.0", "id": 3, "method": "ping", "params": {"a": DEEP}}', 3),
        (b'{"id": "r", "method": "tools/call", "params": DEEP}', "r"),
        ('{"method": "ping", "params": DEEP, "id": 3}', None),  # the id behind it: unread
    ],
)
def test_a_line_nested_too_deep_to_read_is_answered_with_the_id_it_leads_with(
    line: str | bytes, request_id: object
) -> None:
    """The line is JSON, its id readable: it was answered with a null id, and a client
    waited for its request's answer forever."""
    deep = "[" * 100_000 + "]" * 100_000
    if isinstance(line, bytes):
        line = line.replace(b"DEEP", deep.encode())
    else:
        line = line.replace("DEEP", deep)
    message = _only(Router().receive_line(line))
    assert message["id"] == request_id
    assert message["error"]["message"] == "Parse error: the line nests too deep to read"


@pytest.mark.parametrize("line", ["", "\n", "   \t ", "\r\n", b"", b"  \n"])
def test_blank_lines_are_skipped(line: str | bytes) -> None:
    assert Router().receive_line(line) == []


def test_bytes_and_surrounding_whitespace_are_accepted() -> None:
    line = b'  {"jsonrpc": "2.0", "id": 3, "method": "ping"}\r\n'
    assert _only(Router().receive_line(line)) == {"jsonrpc": "2.0", "id": 3, "result": {}}


@pytest.mark.parametrize("value", [1, "ping", None, True, 2.5])
def test_json_that_is_not_an_object_is_an_invalid_request(value: object) -> None:
    assert _error(Router().receive_line(json.dumps(value))) == (None, INVALID_REQUEST)


@pytest.mark.parametrize(
    "batch",
    [
        [],
        [{"jsonrpc": "2.0", "id": 1, "method": "ping"}],
        [{"jsonrpc": "2.0", "method": "notifications/initialized"}],
        [1, 2],
    ],
)
def test_a_batch_before_initialize_gets_one_invalid_request_with_a_null_id(
    batch: list[Any],
) -> None:
    assert _error(Router().receive_line(json.dumps(batch))) == (None, INVALID_REQUEST)


@pytest.mark.parametrize(
    ("message", "expected_id"),
    [
        ({"id": 1, "method": "ping"}, 1),
        ({"jsonrpc": "1.0", "id": "a", "method": "ping"}, "a"),
        ({"jsonrpc": 2.0, "id": 2, "method": "ping"}, 2),
        ({"jsonrpc": "2.0", "id": 3}, 3),
        ({"jsonrpc": "2.0", "id": 4, "result": {}, "error": {"code": 1, "message": "x"}}, 4),
        ({"jsonrpc": "2.0", "id": None, "result": {}}, None),
        ({"jsonrpc": "2.0", "id": True, "result": {}}, None),
        ({"jsonrpc": "2.0", "result": {}}, None),
        ({"jsonrpc": "1.0", "id": 4, "result": {}}, 4),
        ({"jsonrpc": "2.0", "id": 7, "method": "ping", "result": {}}, 7),
        ({"jsonrpc": "2.0", "id": 7, "method": "ping", "error": {}}, 7),
        ({"jsonrpc": "2.0", "method": "notifications/x", "result": {}}, None),
        ({"jsonrpc": "2.0", "id": 5, "method": 5}, 5),
        ({"jsonrpc": "2.0", "id": 6, "method": None}, 6),
        ({"jsonrpc": "2.0", "method": 1, "params": "bar"}, None),
        ({"foo": "bar"}, None),
        ({}, None),
        ({"jsonrpc": "2.0", "id": None, "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": True, "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": False, "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, 1.5),
        ({"jsonrpc": "1.0", "id": 1.0, "method": "ping"}, 1.0),
        ({"jsonrpc": "2.0", "id": float("inf"), "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": [1], "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}, None),
        ({"jsonrpc": "1.0", "id": None, "method": "ping"}, None),
    ],
)
def test_invalid_requests_are_answered_with_the_readable_id(
    message: dict[str, Any], expected_id: object
) -> None:
    assert _error(Router().receive_message(message)) == (expected_id, INVALID_REQUEST)


_FAILED = {"code": 1, "message": "x"}
_NOT_BOTH = 'a response has a "result" or an "error", not both'
_RESPONSE_ID = (
    'a response needs an "id" that is a string or an integer (or null, beside an "error")'
)


@pytest.mark.parametrize(
    ("message", "why"),
    [
        ({"jsonrpc": "2.0", "id": 4, "result": {}, "error": _FAILED}, _NOT_BOTH),
        ({"jsonrpc": "2.0", "result": {}, "error": _FAILED}, _NOT_BOTH),
        ({"jsonrpc": "2.0", "id": None, "result": {}}, _RESPONSE_ID),
        ({"jsonrpc": "2.0", "id": 1.5, "error": _FAILED}, _RESPONSE_ID),
        ({"jsonrpc": "2.0", "result": {}}, _RESPONSE_ID),
        ({"jsonrpc": "2.0", "id": 3}, '"method" must be a string'),
        ({"jsonrpc": "2.0", "id": 5, "method": 5, "result": {}}, '"method" must be a string'),
        (
            {"jsonrpc": "2.0", "id": 7, "method": "ping", "result": {}},
            'a request must not carry a "result" or an "error"',
        ),
    ],
)
def test_a_message_meant_as_a_response_is_told_what_makes_it_none(
    message: dict[str, Any], why: str
) -> None:
    """One with both a result and an error was told that its method must be a string."""
    answer = _only(Router().receive_message(message))
    assert answer["error"]["message"] == f"Invalid Request: {why}"


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": 34, "result": {}},
        {"jsonrpc": "2.0", "id": "a", "result": None},
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}},
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
    ],
)
def test_a_response_is_answered_with_nothing_and_changes_nothing(message: object) -> None:
    router = Router()
    assert router.receive_message(message) == []
    assert router.receive_line(json.dumps(message)) == []
    assert router.state.value == "awaiting_initialize"
    assert _only(router.receive_message({"jsonrpc": "2.0", "id": 34, "method": "ping"})) == {
        "jsonrpc": "2.0",
        "id": 34,
        "result": {},
    }


@pytest.mark.parametrize("request_id", [0, -1, 2**70, "", "x", "💡", "1"])
def test_string_and_integer_ids_are_echoed_exactly(request_id: object) -> None:
    line = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "ping"})
    message = _only(Router().receive_line(line))
    assert message["id"] == request_id
    assert type(message["id"]) is type(request_id)


def _with_id(written: str, rest: str) -> str:
    """A request line whose id is `written` as is (json.dumps would write 1e2 as 100.0)."""
    return '{"jsonrpc": "2.0", "id": ' + written + ", " + rest + "}"


_READ = '"method": "tools/call", "params": {"name": "read_semantics"}'


@pytest.mark.parametrize(
    ("written", "request_id"), [("1.0", 1.0), ("1e2", 100.0), ("-0.0", -0.0), ("2E+0", 2.0)]
)
def test_an_integer_id_written_as_a_float_is_accepted_and_answered_as_read(
    written: str, request_id: float
) -> None:
    """JSON has one number type: 1.0 is an integer (JSON Schema's, so MCP's). Its answer
    carries the number as read (1e2 as 100.0), which the client matches to its request."""
    message = _only(Router().receive_line(_with_id(written, '"method": "ping"')))
    assert message == {"jsonrpc": "2.0", "id": request_id, "result": {}}
    assert type(message["id"]) is float
    assert json.loads(encode_json(message))["id"] == json.loads(written)


def test_a_tool_call_with_an_integer_id_written_as_a_float_is_completed_with_it() -> None:
    router = Router()
    (call,) = router.receive_line(_with_id("7.0", _READ))
    assert isinstance(call, ToolCall)
    reply = router.complete(call, Unchanged(0))
    assert reply is not None
    assert isinstance(reply.message, dict)
    assert reply.message["id"] == 7.0
    assert type(reply.message["id"]) is float


@pytest.mark.parametrize(("first", "second"), [("1", "1.0"), ("1.0", "1"), ("1e1", "10")])
def test_an_integer_id_and_the_same_number_written_as_a_float_are_one_id(
    first: str, second: str
) -> None:
    """A client could not tell their answers apart: the second is refused while the first
    is in progress, with its id as sent."""
    router = Router()
    (pending,) = router.receive_line(_with_id(first, _READ))
    assert isinstance(pending, ToolCall)
    again = _only(router.receive_line(_with_id(second, _READ)))
    assert again["id"] == json.loads(second)
    assert type(again["id"]) is type(json.loads(second))
    assert "still in progress" in again["error"]["message"]
    assert isinstance(router.receive_line(_with_id('"1"', '"method": "ping"'))[0], Reply)


@pytest.mark.parametrize("written", ["2.5", "-0.5", "1e-3"])
def test_a_fractional_id_is_refused_with_that_id_so_the_client_can_match_the_error(
    written: str,
) -> None:
    line = _with_id(written, '"method": "tools/list"')
    assert _error(Router().receive_line(line)) == (json.loads(written), INVALID_REQUEST)


_LONG = "9" * 5000
"""An integer of more digits than Python reads from text (4300): valid JSON all the same."""
ACTIVATE = {"kind": "activate"}


def _long(message: object) -> str:
    """`message` as a line, each string "LONG" in it written as the integer `_LONG`."""
    return json.dumps(message).replace('"LONG"', _LONG)


def _perform(action: dict[str, Any], step: dict[str, Any] | None = None) -> str:
    target = {"kind": "path", "path": [step or {"role": "button"}]}
    arguments = {"target": target, "action": action, "precondition": {"kind": "latest"}}
    params = {"name": "perform_action", "arguments": arguments}
    return _long({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": params})


@pytest.mark.parametrize("written", [_LONG, "-" + _LONG, "1e400"])
def test_an_id_too_large_to_write_back_is_an_invalid_request_that_says_so(written: str) -> None:
    """It was "Parse error: the line is not JSON" for an integer of over 4300 digits."""
    message = _only(Router().receive_line(_with_id(written, '"method": "ping"')))
    assert message["id"] is None
    assert message["error"] == {
        "code": INVALID_REQUEST,
        "message": 'Invalid Request: "id" is a number too large to write back: '
        "send a string or an integer of at most 4300 digits",
    }


def test_an_over_long_integer_anywhere_else_is_read_as_a_number_past_a_doubles_range() -> None:
    """As 1e400 is: the request is answered with its id, its arguments judged by the rules
    of the tool (one past 2**64-1 is an index out of range, not a double a value)."""
    ping = _long({"jsonrpc": "2.0", "id": 3, "method": "ping", "params": {"_meta": "LONG"}})
    assert _only(Router().receive_line(ping)) == {"jsonrpc": "2.0", "id": 3, "result": {}}
    (call,) = Router().receive_line(_perform(ACTIVATE, {"index": "LONG", "role": "button"}))
    assert isinstance(call, ToolCall)
    assert isinstance(call.arguments, PerformActionArguments)
    assert isinstance(call.arguments.target, ByPath)
    assert call.arguments.target.steps[0].index == 2**64 - 1
    for action, why in [
        ({"kind": "set_numeric_value", "value": "LONG"}, "action.value: expected a finite number"),
        ({"kind": "set_selection", "start": 0, "end": "LONG"}, None),
    ]:
        (call,) = Router().receive_line(_perform(action))
        assert isinstance(call, ToolCall)
        assert call.request_id == 5
        if why is None:
            assert isinstance(call.arguments, PerformActionArguments)
        else:
            assert isinstance(call.arguments, RefusedArguments)
            assert call.arguments.rejection.message.startswith(why)


def test_parse_json_reads_an_over_long_integer_as_infinite_with_its_sign() -> None:
    """The HTTP transport reads its bodies so, as the router reads a line."""
    assert parse_json("[" + _LONG + ", -" + _LONG + ", 12]") == [math.inf, -math.inf, 12]


@pytest.mark.parametrize(
    "method", ["resources/list", "prompts/list", "logging/setLevel", "tools/run", "", "PING"]
)
def test_unknown_method_is_method_not_found(method: str) -> None:
    message = {"jsonrpc": "2.0", "id": 11, "method": method}
    assert _error(Router().receive_message(message)) == (11, METHOD_NOT_FOUND)


@pytest.mark.parametrize("method", ["notifications/initialized", "notifications/cancelled"])
def test_a_notification_sent_with_an_id_is_told_to_drop_it_not_that_it_is_unknown(
    method: str,
) -> None:
    router = Router()
    params = {"protocolVersion": "2025-06-18", "capabilities": {}}
    router.receive_message({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
    answer = _only(router.receive_message({"jsonrpc": "2.0", "id": 9, "method": method}))
    assert answer["error"] == {
        "code": INVALID_REQUEST,
        "message": f'Invalid Request: {method} is a notification: send it without an "id"',
    }
    assert router.state.value == "initializing"


@pytest.mark.parametrize(
    "params",
    [
        "absent",
        None,
        [],
        ["read_semantics"],
        "read_semantics",
        {},
        {"name": 5},
        {"name": None},
        {"arguments": {}},
        {"name": "read_semantics", "arguments": []},
        {"name": "read_semantics", "arguments": None},
        {"name": "read_semantics", "arguments": "{}"},
        {"name": "perform_action", "arguments": 1},
    ],
)
def test_malformed_tools_call_envelope_is_invalid_params(params: object) -> None:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": "c", "method": "tools/call"}
    if params != "absent":
        message["params"] = params
    assert _error(Router().receive_message(message)) == ("c", INVALID_PARAMS)


@pytest.mark.parametrize("method", ["ping", "tools/list"])
@pytest.mark.parametrize("params", [[], 3, "x", None])
def test_params_that_are_not_an_object_are_invalid_params(method: str, params: object) -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    assert _error(Router().receive_message(message)) == (1, INVALID_PARAMS)


@pytest.mark.parametrize("cursor", ["bogus", 5, ""])
def test_a_tools_list_cursor_is_invalid_params_as_none_was_handed_out(cursor: object) -> None:
    """MCP's pagination: an invalid cursor SHOULD be ``-32602``; the whole list was given
    on the first page, with no ``nextCursor``."""
    router = Router()
    listed = router.receive_message({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert isinstance(listed[0], Reply)
    assert "nextCursor" not in listed[0].message["result"]
    message = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"cursor": cursor}}
    assert _error(router.receive_message(message)) == (2, INVALID_PARAMS)


def test_a_null_tools_list_cursor_is_no_cursor() -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"cursor": None}}
    (listed,) = Router().receive_message(message)
    assert isinstance(listed, Reply)
    assert [tool["name"] for tool in listed.message["result"]["tools"]] == [
        "read_semantics",
        "perform_action",
    ]


def test_absent_arguments_mean_an_empty_object() -> None:
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "read_semantics", "_meta": {"progressToken": 1}},
    }
    (call,) = Router().receive_message(message)
    assert isinstance(call, ToolCall)
    assert call.raw_arguments == {}


class _ExplodingHost:
    def __init__(self) -> None:
        self.calls = 0

    async def read_semantics(self, since: int | None) -> Unchanged:
        self.calls += 1
        if self.calls == 1:
            raise RuntimeError("bug in the host")
        return Unchanged(3)

    async def perform_action(self, target: object, action: object, precondition: object) -> Any:
        raise AssertionError("not called")


async def test_an_exception_in_the_host_is_an_internal_error_and_the_router_keeps_going() -> None:
    router = Router()
    host = _ExplodingHost()
    call = json.dumps(
        {"jsonrpc": "2.0", "id": "r1", "method": "tools/call", "params": {"name": "read_semantics"}}
    )
    (first,) = await handle(router, host, call)
    assert first["id"] == "r1"
    assert first["error"]["code"] == INTERNAL_ERROR
    (second,) = await handle(router, host, call.replace("r1", "r2"))
    assert second["id"] == "r2"
    assert second["result"]["structuredContent"] == {
        "ok": True,
        "value": {"kind": "unchanged", "generation": "3"},
    }
    assert router.pending_calls == 0


@pytest.mark.parametrize("outcome", [None, "full", {"kind": "full"}, 3, Unchanged])
def test_a_host_answer_of_the_wrong_type_is_an_internal_error(outcome: object) -> None:
    router = Router()
    (call,) = router.receive_message(
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "read_semantics"}}
    )
    assert isinstance(call, ToolCall)
    reply = router.complete(call, outcome).message
    assert (reply["id"], reply["error"]["code"]) == (4, INTERNAL_ERROR)


def test_a_diagnostics_value_that_is_not_json_is_an_internal_error() -> None:
    router = Router(profile="diagnostics")
    (call,) = router.receive_message(
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "diagnostics_read_state"},
        }
    )
    assert isinstance(call, ToolCall)
    reply = router.complete(call, {"commits": float("nan"), "x": object()}).message
    assert (reply["id"], reply["error"]["code"]) == (4, INTERNAL_ERROR)


def test_a_bug_inside_the_router_is_an_internal_error_with_the_id(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    router = Router()

    def broken(*args: object) -> None:
        raise KeyError("bug")

    monkeypatch.setattr(router, "_request", broken)
    message = {"jsonrpc": "2.0", "id": 8, "method": "ping"}
    assert _error(router.receive_message(message)) == (8, INTERNAL_ERROR)
    monkeypatch.setattr(router, "_notification", broken)
    assert router.receive_message({"jsonrpc": "2.0", "method": "notifications/x"}) == []
    monkeypatch.undo()
    assert _only(router.receive_message(message))["result"] == {}


def test_completing_a_call_twice_is_a_usage_error() -> None:
    router = Router()
    (call,) = router.receive_message(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "read_semantics"}}
    )
    assert isinstance(call, ToolCall)
    router.complete(call, Unchanged(0))
    with pytest.raises(RouterUsageError):
        router.complete(call, Unchanged(0))
    with pytest.raises(RouterUsageError):
        Router().complete(call, Unchanged(0))


@pytest.mark.parametrize(
    ("head", "request_id"),
    [
        (b'{"jsonrpc": "2.0", "id": 41, "method": "tools/call", "params": {"a": "xxx', 41),
        (b' {"id":"a\\u00e9", "params": "x', "a\u00e9"),
        (b'{"jsonrpc":"2.0","method":"tools/call","params":{"id": 5, "v": "xx', None),
        (b'{"jsonrpc":"2.0","method":"tools/call","params":{"v":"x"},"id":9', None),
        (b'{"id": true, "params": "x', None),
        (b'{"id": null, "params": "x', None),
        (b'{"id": 1.5, "params": "x', 1.5),
        (b'{"id": 1e400, "params": "x', None),
        (b'[{"id": 3}, "x', None),
        (b'not json at all', None),
        (b"", None),
        (b'{"id" 3, "x', None),
        (b'{"id": 3}' + b"z" * 20, None),  # not JSON: SPEC answers it with a null id
        (b'{"id": 3 zz', None),
        (b'{"params": ' + b"[" * 100_000, None),  # too deep for the decoder: no id, no crash
        (b'{"id": 4, "params": ' + b"[" * 100_000, 4),
        ('{"id": "caf\u00e9", "x": "'.encode()[:-3] + b"\xc3", "caf\u00e9"),
    ],
)
def test_an_oversized_line_is_answered_with_the_id_its_head_names(
    head: bytes, request_id: object
) -> None:
    """Only a top-level id read whole before the cut: never one inside params, never one
    that may be cut itself (the last member read is a value cut short: not taken)."""
    [reply] = Router().receive_oversized_line(10, head)
    assert _error([reply]) == (request_id, PARSE_ERROR)
