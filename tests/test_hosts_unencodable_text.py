"""Text UTF-8 cannot encode, as JSON's ``"\\ud800"`` escape decodes to: a lone surrogate.

Echoed back (in an id, a method, a tool name) it is written escaped, as valid UTF-8 JSON,
by both transports, and the session goes on. As a free-text argument (a ``set_text``
value, a path step's label or value) it is ``invalid_arguments``, as in a semantic id:
the log could not hold it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio

from semledger.actors import LogWriter, SessionRegistry
from semledger.eventlog import CallRefused, MemoryRecorder, SessionEnded, SqliteRecorder
from semledger.examples import counter
from semledger.hosts import RefusedArguments, Router, ToolCall
from semledger.hosts._http import McpHttpApp
from semledger.hosts._router import encode_json
from semledger.runtime._wire import WireError, decode_action, decode_target

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp

COUNTER = "semledger.examples.counter:app"
SURROGATE = "a\ud800"
ESCAPED = rb"a\ud800"
"""`SURROGATE` as a reply carries it: escaped, in JSON."""

INCREMENT = {"kind": "semantic_id", "id": "counter.increment"}
LATEST = {"kind": "latest"}
PING_NEXT = {"jsonrpc": "2.0", "id": 99, "method": "ping"}


def _raw(message: dict[str, Any]) -> str:
    """A request line with every non-ASCII character escaped, as a peer may send it."""
    return json.dumps(message) + "\n"


def _tool_call(request_id: int | str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def _serve(db: Path, session: str, lines: list[str]) -> list[dict[str, Any]]:
    """Every reply `semledger serve` writes for `lines` after initialize, each checked to
    be one valid UTF-8 JSON line; the process must exit 0."""
    done = subprocess.run(
        [*mcp.COMMAND, "serve", COUNTER, "--db", str(db), "--session", session],
        input=(mcp.initialize() + "".join(lines)).encode(),
        capture_output=True,
        env=mcp.env(),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    replies = [json.loads(line.decode("utf-8")) for line in done.stdout.splitlines()]
    assert replies[0]["id"] == 0  # initialize
    return replies[1:]


def _ended(db: Path, session: str) -> object:
    with SqliteRecorder(db) as recorder:
        return [event for _record, event in recorder.events(session)][-1]


# --- echoed back --------------------------------------------------------------------------


def test_a_reply_keeps_non_ascii_text_as_utf8_and_escapes_only_a_lone_surrogate() -> None:
    assert encode_json({"id": "é✓", "method": "ping"}) == '{"id":"é✓","method":"ping"}'.encode()
    escaped = encode_json({"id": "é" + SURROGATE})
    assert escaped == b'{"id":"\\u00e9a\\ud800"}'
    assert json.loads(escaped) == {"id": "é" + SURROGATE}


def test_a_reply_escapes_the_line_breaks_json_allows_raw() -> None:
    """U+2028 in a todo's title went out raw: a client reading with `str.splitlines` got
    half a message, then the other half."""
    message = {"id": "a\x85b\u2028c\u2029d\u2027é"}
    written = encode_json(message).decode()
    assert written == '{"id":"a\\u0085b\\u2028c\\u2029d\u2027é"}'
    [line] = written.splitlines()
    assert json.loads(line) == message


@pytest.mark.parametrize(
    ("request_line", "check"),
    [
        pytest.param(
            {"jsonrpc": "2.0", "id": SURROGATE, "method": "ping"},
            lambda reply: reply == {"jsonrpc": "2.0", "id": SURROGATE, "result": {}},
            id="id",
        ),
        pytest.param(
            {"jsonrpc": "2.0", "id": 1, "method": SURROGATE},
            lambda reply: (
                reply["error"] == {"code": -32601, "message": f"Method not found: {SURROGATE}"}
            ),
            id="method",
        ),
        pytest.param(
            _tool_call(1, SURROGATE, {}),
            lambda reply: (
                reply["result"]["structuredContent"]["error"]["message"]
                == f"unknown tool: {SURROGATE}"
            ),
            id="tool name",
        ),
    ],
)
def test_a_lone_surrogate_echoed_over_stdio_is_escaped_and_the_session_goes_on(
    tmp_path: Path, request_line: dict[str, Any], check: Callable[[dict[str, Any]], bool]
) -> None:
    db = tmp_path / "log.db"
    lines = [_raw(request_line), _raw(PING_NEXT)]
    done = subprocess.run(
        [*mcp.COMMAND, "serve", COUNTER, "--db", str(db), "--session", "echo"],
        input="".join(lines).encode(),
        capture_output=True,
        env=mcp.env(),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    first, second = done.stdout.splitlines()
    assert ESCAPED in first
    reply = json.loads(first.decode("utf-8"))
    assert check(reply), reply
    assert json.loads(second.decode("utf-8")) == {"jsonrpc": "2.0", "id": 99, "result": {}}
    assert _ended(db, "echo") == SessionEnded("end of input")


async def _http_exchange(messages: list[dict[str, Any]]) -> list[tuple[int, bytes]]:
    """Each message POSTed in turn to an in-process `McpHttpApp` (the first one opens the
    session); every status and body."""
    recorder = MemoryRecorder()
    out: list[tuple[int, bytes]] = []
    session: str | None = None
    async with trio.open_nursery() as logging:
        writer = await logging.start(LogWriter(recorder).run)
        async with trio.open_nursery() as nursery:
            app = McpHttpApp(SessionRegistry(nursery, writer, recorder), counter.app, COUNTER)
            for message in messages:
                headers = [(b"content-type", b"application/json")]
                if session is not None:
                    headers.append((b"mcp-session-id", session.encode()))
                scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers}
                body = _raw(message).encode()
                sent: list[dict[str, Any]] = []

                async def receive(body: bytes = body) -> dict[str, Any]:
                    return {"type": "http.request", "body": body, "more_body": False}

                async def send(event: dict[str, Any], sent: list[dict[str, Any]] = sent) -> None:
                    sent.append(event)

                await app(scope, receive, send)
                start, content = sent
                for name, value in start["headers"]:
                    if name == b"mcp-session-id":
                        session = value.decode()
                out.append((start["status"], content["body"]))
            nursery.cancel_scope.cancel()
        writer.close()
    return out


async def test_a_lone_surrogate_echoed_over_http_is_escaped_and_the_session_goes_on() -> None:
    initialize = json.loads(mcp.initialize().splitlines()[0])
    exchanged = await _http_exchange(
        [
            initialize,
            {"jsonrpc": "2.0", "id": SURROGATE, "method": "ping"},
            {"jsonrpc": "2.0", "id": 1, "method": SURROGATE},
            PING_NEXT,
        ]
    )
    statuses = [status for status, _body in exchanged]
    assert statuses == [200, 200, 200, 200]
    (_, ping), (_, unknown), (_, after) = exchanged[1:]
    assert ESCAPED in ping
    assert ESCAPED in unknown
    assert json.loads(ping.decode("utf-8")) == {"jsonrpc": "2.0", "id": SURROGATE, "result": {}}
    assert json.loads(unknown.decode("utf-8"))["error"]["code"] == -32601
    assert json.loads(after.decode("utf-8")) == {"jsonrpc": "2.0", "id": 99, "result": {}}


# --- free-text arguments ------------------------------------------------------------------

SURROGATE_PROBLEM = "expected valid UTF-8 text (it contains a lone surrogate)"


def test_a_set_text_value_with_a_lone_surrogate_is_refused_by_the_decoder() -> None:
    with pytest.raises(WireError) as info:
        decode_action({"kind": "set_text", "value": SURROGATE})
    assert str(info.value) == f"action.value: {SURROGATE_PROBLEM}"


@pytest.mark.parametrize("key", ["label", "value"])
def test_a_path_step_filter_with_a_lone_surrogate_is_refused_by_the_decoder(key: str) -> None:
    with pytest.raises(WireError) as info:
        decode_target({"kind": "path", "path": [{"role": "button"}, {key: SURROGATE}]})
    assert str(info.value) == f"target.path[1].{key}: {SURROGATE_PROBLEM}"


FREE_TEXT_SURROGATES = [
    pytest.param(
        {"target": INCREMENT, "action": {"kind": "set_text", "value": SURROGATE}},
        "action.value",
        id="set_text value",
    ),
    pytest.param(
        {
            "target": {"kind": "path", "path": [{"label": SURROGATE}]},
            "action": {"kind": "activate"},
        },
        "target.path[0].label",
        id="path label",
    ),
]
"""perform_action arguments with a lone surrogate in free text, and where it is."""


@pytest.mark.parametrize(("arguments", "where"), FREE_TEXT_SURROGATES)
def test_a_free_text_argument_with_a_lone_surrogate_is_invalid_arguments_like_a_target_id(
    arguments: dict[str, Any], where: str
) -> None:
    router = Router()
    router.receive_message(json.loads(mcp.initialize().splitlines()[0]))

    def envelope(arguments: dict[str, Any]) -> dict[str, Any]:
        (call,) = router.receive_message(
            _tool_call(1, "perform_action", {**arguments, "precondition": LATEST})
        )
        assert isinstance(call, ToolCall)
        assert isinstance(call.arguments, RefusedArguments)  # for the host to log
        reply = router.complete(call, call.arguments.rejection)
        assert encode_json(reply.message)  # never a UnicodeEncodeError
        result: dict[str, Any] = reply.message["result"]["structuredContent"]
        return result

    by_id = envelope(
        {"target": {"kind": "semantic_id", "id": SURROGATE}, "action": {"kind": "activate"}}
    )
    assert by_id["ok"] is False
    assert by_id["error"]["code"] == "invalid_arguments"
    assert "lone surrogate" in by_id["error"]["message"]
    assert envelope(arguments)["error"] == {
        "code": "invalid_arguments",
        "message": f"{where}: {SURROGATE_PROBLEM}",
        "details": {},
    }
    assert router.pending_calls == 0


UNKNOWN_FIELDS_NAMED_WITH_A_SURROGATE = [
    pytest.param(
        {"target": INCREMENT, "action": {"kind": "activate"}, SURROGATE: 1},
        f"{SURROGATE}: unknown field",
        id="unknown argument",
    ),
    pytest.param(
        {"target": INCREMENT, "action": {"kind": "activate", SURROGATE: 1}},
        f"action.{SURROGATE}: unknown field",
        id="unknown action field",
    ),
]
"""perform_action arguments with a lone surrogate in a key, and the refusal's message,
which quotes it: the log holds it escaped, as it holds the arguments."""


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        *(
            pytest.param(p.values[0], f"{p.values[1]}: {SURROGATE_PROBLEM}", id=p.id)
            for p in FREE_TEXT_SURROGATES
        ),
        *UNKNOWN_FIELDS_NAMED_WITH_A_SURROGATE,
    ],
)
def test_a_lone_surrogate_over_stdio_is_refused_logged_and_the_session_goes_on(
    tmp_path: Path, arguments: dict[str, Any], message: str
) -> None:
    db = tmp_path / "log.db"
    replies = _serve(
        db,
        "typed",
        [
            _raw(_tool_call(1, "perform_action", {**arguments, "precondition": LATEST})),
            mcp.perform(2, "counter.increment"),
        ],
    )
    assert [reply["id"] for reply in replies] == [1, 2]
    refused, incremented = (reply["result"]["structuredContent"] for reply in replies)
    assert refused["error"] == {"code": "invalid_arguments", "message": message, "details": {}}
    assert incremented["ok"] is True
    with SqliteRecorder(db) as recorder:
        (logged,) = [e for _r, e in recorder.events("typed") if isinstance(e, CallRefused)]
    assert logged.code == "invalid_arguments"
    assert SURROGATE not in repr(logged.arguments)  # the log holds only encodable text
    assert logged.message == message.encode("utf-8", "backslashreplace").decode()
    assert _ended(db, "typed") == SessionEnded("end of input")
