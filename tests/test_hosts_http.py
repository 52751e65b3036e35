"""Streamable HTTP end to end: `semledger serve APP --http HOST:PORT` in a subprocess.

The transport rules (session ids, status codes, Origin, bearer token, default bind), the
isolation of sessions, a restart on the same log after SIGKILL, and a load test.
"""

from __future__ import annotations

import errno
import gzip
import io
import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import attrs
import h11
import httpx2 as httpx
import pytest
import trio

from semledger.adapters._cases_web import serve_directory
from semledger.eventlog import (
    ActionReceipt,
    ActionRequested,
    AgentConnected,
    CallRefused,
    EffectStarted,
    NewEvent,
    SessionEnded,
    SqliteRecorder,
    session_end,
)
from semledger.hosts import Reply, Router
from semledger.hosts._http import SERVER_ERROR

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from stdio_client import refusal

if TYPE_CHECKING:
    from semledger.adapters._web import WebBrowser

COUNTER = "semledger.examples.counter:app"
APPS = Path(__file__).parent / "apps"
SEMLEDGER = Path(sys.executable).with_name("semledger")
URL_LINE = re.compile(r"semledger: serving \S+ at (http://\S+/mcp)")
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test_hosts_http", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def _semledger(*args: str) -> list[str]:
    if SEMLEDGER.exists():
        return [str(SEMLEDGER), *args]
    return [sys.executable, "-m", "semledger", *args]


@attrs.define
class Server:
    process: subprocess.Popen[bytes]
    url: str
    db: Path
    errors: Path
    killed: bool = False

    def kill(self) -> None:
        """SIGKILL: no clean-up of any kind, as in a crash of the machine."""
        self.killed = True
        self.process.send_signal(signal.SIGKILL)
        assert self.process.wait(timeout=30) == -signal.SIGKILL

    @property
    def port(self) -> int:
        port = urlsplit(self.url).port
        assert port is not None
        return port


@contextmanager
def serving(
    db: Path,
    *extra: str,
    bind: str = "127.0.0.1:0",
    env: dict[str, str] | None = None,
    app: str = COUNTER,
    exits: int = 0,
    cwd: Path | None = None,
) -> Iterator[Server]:
    """`app` (the counter) served over HTTP on `db`; terminated (and checked to exit with
    `exits`: 1 once a session failed) afterwards. The test apps (tests/apps) are
    importable."""
    errors = db.with_name(f"{db.stem}-{time.monotonic_ns()}.err")
    with errors.open("wb") as err:
        process = subprocess.Popen(
            _semledger("serve", app, "--db", str(db), "--http", bind, *extra),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            env={**os.environ, "PYTHONPATH": str(APPS), **(env or {})},
            cwd=cwd,
        )
    server: Server | None = None
    try:
        deadline = time.monotonic() + 30
        while (match := URL_LINE.search(errors.read_text())) is None:
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the HTTP server did not come up:\n{errors.read_text()}")
            time.sleep(0.05)
        server = Server(process, match.group(1), db, errors)
        yield server
    finally:
        if process.poll() is None:
            process.terminate()
        returncode = process.wait(timeout=30)
    killed = server is not None and server.killed
    assert returncode == (-signal.SIGKILL if killed else exits), errors.read_text()


def call(request_id: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


def increment(precondition: dict[str, Any]) -> dict[str, Any]:
    return {
        "target": {"kind": "semantic_id", "id": "counter.increment"},
        "action": {"kind": "activate"},
        "precondition": precondition,
    }


def exact(generation: str) -> dict[str, Any]:
    return {"kind": "exact", "generation": generation}


class McpClient:
    """A bare Streamable HTTP client: JSON-RPC over POST, the session id in a header."""

    def __init__(self, http: httpx.Client, url: str, headers: dict[str, str] | None = None) -> None:
        self.http = http
        self.url = url
        self.headers = dict(headers or {})
        self.session_id: str | None = None
        self.next_id = 0

    def post(self, message: object, **headers: str) -> httpx.Response:
        sent = {**self.headers, **headers}
        if self.session_id is not None:
            sent.setdefault("Mcp-Session-Id", self.session_id)
        return self.http.post(self.url, json=message, headers=sent)

    def initialize(self) -> str:
        response = self.post(INITIALIZE)
        assert response.status_code == 200, response.text
        assert response.json()["result"]["serverInfo"]["name"] == "semledger"
        self.session_id = response.headers["mcp-session-id"]
        assert self.post(INITIALIZED).status_code == 202
        return self.session_id

    def tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        response = self.post(call(self.next_id, name, arguments))
        assert response.status_code == 200, response.text
        assert response.headers["mcp-session-id"] == self.session_id
        reply = response.json()
        assert reply["id"] == self.next_id
        envelope: dict[str, Any] = reply["result"]["structuredContent"]
        return envelope

    def read(self) -> dict[str, Any]:
        envelope = self.tool("read_semantics", {})
        assert envelope["ok"] is True
        value: dict[str, Any] = envelope["value"]
        return value

    def count(self) -> str:
        node = next(n for n in self.read()["nodes"] if n["semantic_id"] == "counter.value")
        value: str = node["value"]
        return value


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=30) as client:
        yield client


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    with serving(tmp_path / "log.db") as running:
        yield running


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One plain server (the counter, no options) for the tests that only send it requests:
    each looks at its own sessions alone, found by their ids, and none stops the server or
    makes a session fail. Its exit status is checked once, when the module is done."""
    with serving(tmp_path_factory.mktemp("shared") / "log.db") as running:
        yield running


def _session_names(db: Path) -> set[str]:
    with SqliteRecorder(db) as recorder:
        return {summary.name for summary in recorder.sessions()}


def test_initialize_issues_a_session_id_that_later_requests_need(
    shared_server: Server, http: httpx.Client
) -> None:
    client = McpClient(http, shared_server.url)
    session_id = client.initialize()
    assert re.fullmatch(r"[0-9a-f]{32}", session_id)
    assert McpClient(http, shared_server.url).initialize() != session_id

    listed = client.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert listed.status_code == 200
    assert listed.headers["content-type"] == "application/json"
    assert [t["name"] for t in listed.json()["result"]["tools"]] == [
        "read_semantics",
        "perform_action",
    ]

    anonymous = McpClient(http, shared_server.url)
    assert anonymous.post({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).status_code == 400
    assert anonymous.post(INITIALIZED).status_code == 400
    unknown = anonymous.post(
        {"jsonrpc": "2.0", "id": 3, "method": "ping"}, **{"Mcp-Session-Id": "0" * 32}
    )
    assert unknown.status_code == 404


@pytest.mark.parametrize(
    ("message", "status", "code"),
    [
        ({**INITIALIZE, "jsonrpc": "1.0"}, 200, -32600),
        ({**INITIALIZE, "id": None}, 200, -32600),
        ({**INITIALIZE, "id": 1.5}, 200, -32600),
        ({**INITIALIZE, "result": {}}, 200, -32600),
        ({k: v for k, v in INITIALIZE.items() if k != "id"}, 400, None),
        ({**INITIALIZE, "params": {}}, 200, -32602),
    ],
    ids=["jsonrpc-1.0", "null-id", "fractional-id", "with-result", "notification", "bad-params"],
)
def test_an_initialize_the_router_does_not_accept_opens_no_session(
    tmp_path: Path, http: httpx.Client, message: dict[str, Any], status: int, code: int | None
) -> None:
    db = tmp_path / "log.db"
    with serving(db) as running:
        refused = http.post(running.url, json=message)
        assert refused.status_code == status, refused.text
        assert "mcp-session-id" not in refused.headers
        if code is None:
            assert refusal(refused.json()) == "initialize must be a request, with an id"
        else:
            assert refused.json()["error"]["code"] == code
        if code == -32602:  # may be retried: by an initialize that opens the session
            assert refused.json()["id"] == INITIALIZE["id"]
            McpClient(http, running.url).initialize()
    with SqliteRecorder(db) as recorder:
        assert len(recorder.sessions()) == (1 if code == -32602 else 0)


@pytest.mark.parametrize(
    "batch", [[INITIALIZE], [INITIALIZE, {"jsonrpc": "2.0", "id": 1, "method": "ping"}]]
)
def test_a_batch_holding_initialize_without_a_session_id_is_told_to_send_initialize_alone(
    shared_server: Server, http: httpx.Client, batch: list[dict[str, Any]]
) -> None:
    """It was a 400 "Mcp-Session-Id header required", which no client sends with an
    initialize: the router's refusal says what to do, as it does over stdio."""
    sessions = _session_names(shared_server.db)
    refused = http.post(shared_server.url, json=batch)
    assert refused.status_code == 200, refused.text
    assert "mcp-session-id" not in refused.headers
    error = refused.json()
    assert (error["id"], error["error"]["code"]) == (None, -32600)
    assert "a JSON-RPC batch before initialize; send initialize alone" in error["error"]["message"]
    assert _session_names(shared_server.db) == sessions  # no session opened


def test_notifications_and_responses_are_accepted_with_202_and_no_body(
    shared_server: Server, http: httpx.Client
) -> None:
    client = McpClient(http, shared_server.url)
    client.initialize()
    for method in ("notifications/initialized", "notifications/cancelled", "notifications/x"):
        response = client.post({"jsonrpc": "2.0", "method": method, "params": {"requestId": 1}})
        assert (response.status_code, response.content) == (202, b"")
    for answer in ({"result": {}}, {"error": {"code": -32601, "message": "Method not found"}}):
        response = client.post({"jsonrpc": "2.0", "id": 34, **answer})
        assert (response.status_code, response.content) == (202, b"")
    both = client.post({"jsonrpc": "2.0", "id": 35, "method": "ping", "result": {}})
    assert (both.status_code, both.json()["error"]["code"]) == (200, -32600)
    assert client.tool("read_semantics", {"since": "1"})["value"]["kind"] == "unchanged"


def _initialize_as(client: McpClient, version: str) -> str:
    """Open a session that negotiates `version`."""
    params = {**INITIALIZE["params"], "protocolVersion": version}  # type: ignore[dict-item]
    opened = client.post({**INITIALIZE, "params": params})
    assert opened.json()["result"]["protocolVersion"] == version, opened.text
    client.session_id = opened.headers["mcp-session-id"]
    return client.session_id


def test_a_batch_on_a_2025_03_26_session_is_answered_in_one_array_and_the_audit_lists_each_call(
    shared_server: Server, http: httpx.Client
) -> None:
    """A batch was answered with one -32600 on every session, also on those whose version
    says a server MUST take batches. Now: one array in the order of the members (a
    notification has no entry, an invalid member an error of its own), its calls applied
    in order, each on the record; a batch of notifications is a 202 with no body."""
    client = McpClient(http, shared_server.url)
    session_id = _initialize_as(client, "2025-03-26")
    notified = client.post([INITIALIZED])
    assert (notified.status_code, notified.content) == (202, b"")
    actions = [call(g, "perform_action", increment(exact(str(g)))) for g in range(1, 21)]
    batch = [
        *actions[:10],
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
        {"jsonrpc": "2.0", "id": "bad", "method": 5},
        call(30, "read_semantics", {}),
        *actions[10:],
        {"jsonrpc": "2.0", "id": 31, "method": "ping"},
        call(32, "perform_action", increment(exact("1"))),
    ]
    answered = client.post(batch)
    assert answered.status_code == 200, answered.text
    assert answered.headers["content-type"] == "application/json"
    assert answered.headers["mcp-session-id"] == session_id
    answers = answered.json()
    assert [a["id"] for a in answers] == [*range(1, 11), "bad", 30, *range(11, 21), 31, 32]
    assert answers[10]["error"]["code"] == -32600
    receipts = [a["result"]["structuredContent"]["value"] for a in answers if a["id"] in range(21)]
    assert [r["after"] for r in receipts] == [str(g) for g in range(2, 22)]
    assert answers[11]["result"]["structuredContent"]["value"]["generation"] == "11"
    assert answers[-2]["result"] == {}
    assert answers[-1]["result"]["structuredContent"]["error"]["code"] == "stale_generation"
    audited = subprocess.run(
        _semledger("audit", session_id, "--db", str(shared_server.db), "--json"),
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    logged = json.loads(audited.stdout)["actions"]
    assert [a["outcome"] for a in logged] == ["receipt"] * 20 + ["stale_generation"]
    assert [a["after"] for a in logged[:20]] == [str(g) for g in range(2, 22)]

    later = McpClient(http, shared_server.url)
    _initialize_as(later, "2025-06-18")
    refused = later.post([{"jsonrpc": "2.0", "id": 1, "method": "ping"}])
    assert refused.status_code == 200
    assert refused.json()["id"] is None
    assert refused.json()["error"]["code"] == -32600
    assert "2025-06-18 removed batching" in refused.json()["error"]["message"]


def test_a_client_that_comes_back_after_a_restart_sends_batches_as_its_version_allows(
    tmp_path: Path, http: httpx.Client
) -> None:
    """The new server's router never negotiated with it: one without an MCP-Protocol-Version
    header is taken to speak 2025-03-26, as MCP says (2025-06-18 clients send the header),
    not refused as if it had sent a batch before initialize."""
    db = tmp_path / "log.db"
    with serving(db) as before:
        old = McpClient(http, before.url)
        _initialize_as(old, "2025-03-26")
        new = McpClient(http, before.url, {"MCP-Protocol-Version": "2025-06-18"})
        new.initialize()
        before.kill()
    with serving(db) as after:
        old.url = new.url = after.url
        batch = [
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            call(2, "perform_action", increment({"kind": "latest"})),
        ]
        answers = old.post(batch).json()
        assert [a["id"] for a in answers] == [1, 2]
        assert answers[1]["result"]["structuredContent"]["value"]["after"] == "2"
        refused = new.post(batch).json()
        assert (refused["id"], refused["error"]["code"]) == (None, -32600)
        assert "2025-06-18" in refused["error"]["message"]


def test_bodies_that_are_not_one_json_message_are_refused(
    shared_server: Server, http: httpx.Client
) -> None:
    client = McpClient(http, shared_server.url)
    client.initialize()
    headers = {"Mcp-Session-Id": client.session_id or "", "content-type": "application/json"}
    for body, why in (
        (b"{not json", "is not JSON"),
        (b"\xff\xfe", "is not UTF-8"),
        (b'{"jsonrpc": "2.0", "id": 1, "x": NaN}', "is not JSON"),
        (b"[" * 100_000, "nests too deep to read"),
    ):
        refused = http.post(shared_server.url, content=body, headers=headers)
        assert refused.status_code == 400, body
        assert refused.json() == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32700, "message": f"Parse error: the body {why}"},
        }
    too_big = http.post(shared_server.url, content=b" " * ((4 << 20) + 1), headers=headers)
    assert too_big.status_code == 413
    # The rest of the body is never read: the client is told not to reuse the connection.
    assert too_big.headers["connection"] == "close"
    ping = b'{"jsonrpc": "2.0", "id": 7, "method": "ping"}'
    at_the_limit = http.post(shared_server.url, content=ping.rjust(4 << 20), headers=headers)
    assert (at_the_limit.status_code, at_the_limit.json()["result"]) == (200, {})
    wrong_version = client.post(
        {"jsonrpc": "2.0", "id": 9, "method": "ping"}, **{"MCP-Protocol-Version": "1999-01-01"}
    )
    assert wrong_version.status_code == 400
    assert "1999-01-01" in refusal(wrong_version.json())
    assert client.tool("read_semantics", {})["ok"] is True  # the session is unharmed


def _posted_whole_first(
    url: str, body: bytes | AsyncIterator[bytes], headers: dict[str, str]
) -> httpx.Response:
    """A POST by httpx's async client (the MCP SDK's), which writes its whole body before
    it reads the answer."""
    import asyncio

    async def post() -> httpx.Response:
        async with httpx.AsyncClient(timeout=60) as client:
            return await client.post(url, content=body, headers=headers)

    return asyncio.run(post())


async def _chunked(body: bytes) -> AsyncIterator[bytes]:
    """`body` sent chunked (no Content-Length), a MiB at a time."""
    for start in range(0, len(body), 1 << 20):
        yield body[start : start + (1 << 20)]


@pytest.mark.parametrize(
    ("size", "sent"),
    [((4 << 20) + 1, bytes), (16 << 20, bytes), (16 << 20, _chunked)],
    ids=["4MiB+1", "16MiB", "16MiB-chunked"],
)
def test_a_body_over_the_limit_is_answered_413_to_a_client_that_writes_it_all_first(
    shared_server: Server, size: int, sent: Callable[[bytes], Any]
) -> None:
    """Closed with the body's rest unread, the connection was reset, and the reset lost
    the 413: a ReadError for the client, all its session's calls gone for the SDK."""
    headers = {"content-type": "application/json"}
    refused = _posted_whole_first(shared_server.url, sent(b" " * size), headers)
    assert refused.status_code == 413
    assert refused.headers["connection"] == "close"
    assert refusal(refused.json()) == f"request body over {4 << 20} bytes"


def test_a_refusal_before_the_body_is_read_reaches_a_client_that_writes_it_all_first(
    tmp_path: Path,
) -> None:
    """A wrong token's 401 (or a 404, a 400) was sent before the body was read: the reset
    of the connection closed with the body unread lost it, and the MCP SDK lost its whole
    session instead of showing "missing or wrong bearer token"."""
    with serving(tmp_path / "log.db", "--token", "s3cret") as running:
        wrong = {"content-type": "application/json", "authorization": "Bearer wrong"}
        refused = _posted_whole_first(running.url, b" " * (4 << 20), wrong)
        assert refused.status_code == 401
        assert refusal(refused.json()) == "missing or wrong bearer token"
        right = {"content-type": "application/json", "authorization": "Bearer s3cret"}
        elsewhere = _posted_whole_first(running.url + "/x", b" " * (4 << 20), right)
        assert elsewhere.status_code == 404


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-32", "utf-8-sig"])
def test_a_body_not_in_plain_utf8_is_refused_as_the_same_bytes_on_a_stdio_line_are(
    shared_server: Server, http: httpx.Client, encoding: str
) -> None:
    """json.loads on bytes guesses UTF-16 and UTF-32 and skips a byte-order mark: over
    HTTP these bodies were answered while the same bytes on a stdio line were not JSON."""
    client = McpClient(http, shared_server.url)
    client.initialize()
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "ping"}).encode(encoding)
    headers = {"Mcp-Session-Id": client.session_id or "", "content-type": "application/json"}
    refused = http.post(shared_server.url, content=body, headers=headers)
    assert refused.status_code == 400, refused.text
    (as_a_line,) = Router().receive_line(body)
    assert isinstance(as_a_line, Reply)
    assert isinstance(as_a_line.message, dict)
    line_error = as_a_line.message["error"]
    assert refused.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {**line_error, "message": line_error["message"].replace("line", "body")},
    }
    assert line_error["code"] == -32700


_LATEST = increment({"kind": "latest"})


def test_a_post_whose_body_is_not_plain_json_or_whose_client_takes_no_json_is_refused(
    shared_server: Server, http: httpx.Client
) -> None:
    """Content-Type text/plain, a gzip body, Accept: text/html were all answered as if the
    client had sent JSON and taken it (the gzip body as a parse error). A header left out
    is taken as the clients that leave it out mean it."""
    client = McpClient(http, shared_server.url)
    session = client.initialize()
    cases: list[tuple[dict[str, str | None], int]] = [
        ({"Content-Type": "text/plain"}, 415),
        ({"Content-Type": "application/x-www-form-urlencoded"}, 415),
        ({"Content-Encoding": "gzip"}, 415),
        ({"Accept": "text/html"}, 406),
        ({"Accept": "text/event-stream"}, 406),
        ({"Accept": "application/json;q=0, */*"}, 406),
        ({"Content-Type": None, "Accept": None}, 200),
        ({"Content-Type": "Application/JSON; charset=utf-8"}, 200),
        ({"Accept": "application/json, text/event-stream"}, 200),
        ({"Accept": "text/event-stream, application/*;q=0.5"}, 200),
        ({"Accept": "application/json;q=high"}, 200),
        ({"Content-Encoding": "identity"}, 200),
    ]
    applied = 0
    for number, (headers, status) in enumerate(cases, start=1):
        body = json.dumps(call(number, "perform_action", _LATEST)).encode()
        if headers.get("Content-Encoding") == "gzip":
            body = gzip.compress(body)
        request = http.build_request(
            "POST",
            shared_server.url,
            content=body,
            headers={"Content-Type": "application/json", "Mcp-Session-Id": session},
        )
        for name, value in headers.items():
            if value is None:
                del request.headers[name]
            else:
                request.headers[name] = value
        answer = http.send(request)
        assert answer.status_code == status, (headers, answer.text)
        if status == 200:
            applied += 1
            assert answer.json()["result"]["structuredContent"]["ok"] is True
        else:
            assert answer.headers["content-type"] == "application/json"
            assert refusal(answer.json())
    assert client.count() == str(applied)  # nothing refused was applied


def test_a_notification_or_response_the_server_cannot_accept_is_a_400_with_its_error(
    shared_server: Server, http: httpx.Client
) -> None:
    """MCP: a notification or a response the server cannot accept gets an HTTP error
    status. They were answered 200, as a request's error is."""
    client = McpClient(http, shared_server.url)
    client.initialize()
    failed = {"code": -32601, "message": "Method not found"}
    for message in (
        {"jsonrpc": "1.0", "method": "notifications/x"},
        {"jsonrpc": "2.0", "method": 5},
        {"jsonrpc": "2.0", "method": "notifications/x", "result": {}},
        {"jsonrpc": "2.0", "result": {}, "error": failed},
        {"jsonrpc": "2.0", "result": {}},
    ):
        refused = client.post(message)
        assert refused.status_code == 400, message
        assert refused.json()["id"] is None
        assert refused.json()["error"]["code"] == -32600
    both = client.post({"jsonrpc": "2.0", "id": 36, "result": {}, "error": failed})
    assert both.status_code == 200  # a request's error, for all the client can tell
    assert "not both" in both.json()["error"]["message"]


def test_a_request_naming_two_sessions_is_a_400_that_applies_nothing(
    shared_server: Server, http: httpx.Client
) -> None:
    """Two Mcp-Session-Id headers, each a live session's: the call was applied to the last
    one, silently."""
    first, second = McpClient(http, shared_server.url), McpClient(http, shared_server.url)
    named = [first.initialize(), second.initialize()]
    sent = call(1, "perform_action", increment({"kind": "latest"}))
    both = [("Mcp-Session-Id", session_id) for session_id in named]
    for method, body in (("POST", json.dumps(sent)), ("DELETE", None)):
        answer = http.request(method, shared_server.url, content=body, headers=both)
        assert answer.status_code == 400, answer.text
        assert refusal(answer.json()) == (
            f"the request sends 2 different Mcp-Session-Id headers, {named[0]!r} and"
            f" {named[1]!r}: send one"
        )
    assert first.count() == second.count() == "0"


def test_get_is_405_and_delete_ends_the_session(server: Server, http: httpx.Client) -> None:
    client = McpClient(http, server.url)
    session_id = client.initialize()
    got = http.get(server.url, headers={"Mcp-Session-Id": session_id})
    assert got.status_code == 405
    assert "POST" in got.headers["allow"]
    assert client.count() == "0"

    deleted = http.delete(server.url, headers={"Mcp-Session-Id": session_id})
    assert deleted.status_code == 204
    assert client.post({"jsonrpc": "2.0", "id": 9, "method": "ping"}).status_code == 404
    assert http.delete(server.url, headers={"Mcp-Session-Id": session_id}).status_code == 404
    anonymous = http.delete(server.url)
    assert anonymous.status_code == 400
    assert refusal(anonymous.json()) == "Mcp-Session-Id header required"

    server.process.terminate()
    assert server.process.wait(timeout=30) == 0
    with SqliteRecorder(server.db) as recorder:
        events = [event for _record, event in recorder.events(session_id)]
    assert events[-1] == SessionEnded("deleted by the client", by="client")


def test_a_client_that_assumes_http2_is_told_to_use_http_1_1(shared_server: Server) -> None:
    """hypercorn spoke HTTP/2 to a client that assumed it (h2c prior knowledge, as httpx's
    ``http2=True`` does): stopped under its load, the server crashed with a traceback
    (``KeyError`` on a stream it had reset), exit 1, its sessions' ends unlogged."""
    with (
        httpx.Client(http1=False, http2=True, timeout=10) as http2,
        pytest.raises(httpx.RemoteProtocolError, match="error_code:13"),  # HTTP_1_1_REQUIRED
    ):
        http2.post(shared_server.url, json=INITIALIZE)
    preface = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes.fromhex("000000040000000000")
    with socket.create_connection(("127.0.0.1", shared_server.port), timeout=10) as client:
        client.sendall(preface)
        answer = b""
        while chunk := client.recv(65536):  # the server closes the connection
            answer += chunk
    goaway = bytes.fromhex("07" "00" "00000000" "00000000" "0000000d")
    assert goaway in answer
    assert answer.endswith(b"this server speaks HTTP/1.1 only")


def test_a_request_to_upgrade_to_http2_is_answered_in_http_1_1(shared_server: Server) -> None:
    with socket.create_connection(("127.0.0.1", shared_server.port), timeout=10) as client:
        client.sendall(
            b"OPTIONS /mcp HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\n"
            b"Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n"
        )
        assert client.recv(65536).startswith(b"HTTP/1.1 204 ")


def test_a_deleted_session_is_ended_for_good_on_its_own_server_too(
    shared_server: Server, http: httpx.Client
) -> None:
    """The server it was deleted on said it "is over on this server: deleted by the
    client", as if another server could take it up; a restarted one said it had ended."""
    client = McpClient(http, shared_server.url)
    session_id = client.initialize()
    assert http.delete(shared_server.url, headers={"Mcp-Session-Id": session_id}).status_code == 204
    answer = client.post({"jsonrpc": "2.0", "id": 9, "method": "ping"})
    assert answer.status_code == 404
    assert refusal(answer.json()) == (
        f"session {session_id!r} was ended for good (deleted by the client): no server takes"
        " it up again"
    )


def test_a_session_its_client_deleted_is_over_for_every_server(
    server: Server, http: httpx.Client
) -> None:
    """A DELETE was a 404 for HTTP clients afterwards, while the audit said "serving it
    again resumes it" and `serve --session` over stdio did: the client's end is for good."""
    sys.path.insert(0, str(APPS))
    import stdio_client

    session_id = McpClient(http, server.url).initialize()
    assert http.delete(server.url, headers={"Mcp-Session-Id": session_id}).status_code == 204
    server.process.terminate()
    assert server.process.wait(timeout=30) == 0

    audited = stdio_client.cli("audit", session_id, "--db", str(server.db))
    assert "the session was ended for good by its HTTP client" in audited.stdout, audited.stdout
    assert "deleted by the client; no server takes it up again" in audited.stdout
    resumed = stdio_client.cli("serve", COUNTER, "--db", str(server.db), "--session", session_id)
    assert resumed.returncode == 2
    assert resumed.stderr.strip() == (
        f"semledger: session {session_id!r} was ended for good (deleted by the client) and is"
        " not served again: serve a session of another name"
    )


STUCK = {
    "target": {"kind": "semantic_id", "id": "up.stuck"},
    "action": {"kind": "activate"},
    "precondition": {"kind": "latest"},
}


def _parked(db: Path, session_id: str) -> bool:
    with SqliteRecorder(db) as recorder:
        last = session_end(recorder, session_id)
    return last is not None and last.reason.startswith("parked")


@pytest.mark.parametrize("left", ["killed", "parked"])
def test_a_delete_of_a_session_no_server_holds_ends_it_in_the_log_without_resuming_it(
    tmp_path: Path, http: httpx.Client, left: str
) -> None:
    """A DELETE resumed such a session only to end it: the effect it left running started
    a second time, and a connection nobody made was logged (and one whose resume is
    refused, its app changed, could not be deleted at all)."""
    db = tmp_path / "log.db"
    effects = "tests_fuzz_effects:app"
    with serving(db, "--idle-timeout", "0.5", app=effects) as before:
        client = McpClient(http, before.url)
        session_id = client.initialize()
        assert client.tool("perform_action", STUCK)["ok"] is True
        if left == "killed":
            before.kill()
        else:
            deadline = time.monotonic() + 30
            while not _parked(db, session_id):
                assert time.monotonic() < deadline, "the session was not parked"
                time.sleep(0.1)
            with SqliteRecorder(db) as recorder:
                head = recorder.head(session_id)
            deleted = http.delete(before.url, headers={"Mcp-Session-Id": session_id})
            assert deleted.status_code == 204, deleted.text
    if left == "killed":
        with SqliteRecorder(db) as recorder:
            head = recorder.head(session_id)
        with serving(db, app=effects) as after:
            deleted = http.delete(after.url, headers={"Mcp-Session-Id": session_id})
            assert deleted.status_code == 204, deleted.text
            again = http.delete(after.url, headers={"Mcp-Session-Id": session_id})
            assert again.status_code == 404

    assert head is not None
    with SqliteRecorder(db) as recorder:
        records = list(recorder.events(session_id))
    *_, (record, last) = records
    assert record.seq == head.seq + 1
    assert last == SessionEnded("deleted by the client", by="client")
    assert sum(isinstance(event, EffectStarted) for _, event in records) == 1


def test_origin_must_be_local(shared_server: Server, http: httpx.Client) -> None:
    evil = McpClient(http, shared_server.url, {"Origin": "http://evil.example"})
    assert evil.post(INITIALIZE).status_code == 403
    for host in ("localhost", "127.0.0.1", "[::1]"):
        origin = f"http://{host}:{shared_server.port}"
        local = McpClient(http, shared_server.url, {"Origin": origin})
        local.initialize()
        assert local.count() == "0"
        assert (
            local.post(
                {"jsonrpc": "2.0", "id": 5, "method": "ping"}, Origin="http://evil.example"
            ).status_code
            == 403
        )


def test_an_allowed_origin_may_call_and_others_still_may_not(
    tmp_path: Path, http: httpx.Client
) -> None:
    with serving(tmp_path / "log.db", "--allow-origin", "https://app.example") as running:
        allowed = McpClient(http, running.url, {"Origin": "https://app.example"})
        allowed.initialize()
        assert allowed.count() == "0"
        evil = McpClient(http, running.url, {"Origin": "http://evil.example"})
        assert evil.post(INITIALIZE).status_code == 403


def test_origins_are_compared_normalised(tmp_path: Path, http: httpx.Client) -> None:
    """Scheme and host are case-insensitive and a default port is no port, in the
    --allow-origin value and in the Origin header alike."""
    allow = ("--allow-origin", "HTTPS://App.Example:443", "--allow-origin", "http://b.example")
    with serving(tmp_path / "log.db", *allow) as running:
        for origin in ("https://app.example", "https://APP.example:443", "HTTP://B.EXAMPLE:80"):
            McpClient(http, running.url, {"Origin": origin}).initialize()
        for origin in ("https://app.example:8443", "http://app.example", "https://b.example"):
            refused = McpClient(http, running.url, {"Origin": origin}).post(INITIALIZE)
            assert refused.status_code == 403, origin


PREFLIGHT = {
    "Access-Control-Request-Method": "POST",
    "Access-Control-Request-Headers": "authorization,content-type,mcp-session-id",
}


def _preflight_status(http: httpx.Client, url: str, origin: str) -> int:
    return http.options(url, headers={"Origin": origin, **PREFLIGHT}).status_code


def test_every_spelling_of_a_loopback_address_is_a_local_origin(
    shared_server: Server, http: httpx.Client
) -> None:
    """Hosts compare as addresses: ``[0:0::1]`` was refused where ``[::1]`` was not. A
    name other than localhost, or an address that is not loopback, stays refused."""
    port = shared_server.port
    for host in (
        "[::1]",
        "[0:0::1]",
        "[0:0:0:0:0:0:0:1]",
        "[::ffff:127.0.0.1]",
        "[::FFFF:7f00:1]",
        "127.0.0.2",
    ):
        origin = f"http://{host}:{port}"
        assert _preflight_status(http, shared_server.url, origin) == 204, origin
    for host in ("[::2]", "[::127.0.0.1]", "[::ffff:10.0.0.1]", "10.0.0.1", "127.1", "[v1.x]"):
        origin = f"http://{host}:{port}"
        assert _preflight_status(http, shared_server.url, origin) == 403, origin


def test_an_allowed_address_allows_its_origin_in_every_spelling_of_that_address(
    tmp_path: Path, http: httpx.Client
) -> None:
    """An IPv4-mapped address is another origin than its IPv4 address, as browsers take it:
    allowing one does not allow the other."""
    allow = (
        *("--allow-origin", "http://[2001:DB8:0:0::1]:8080"),
        *("--allow-origin", "http://[::ffff:192.0.2.1]"),
    )
    with serving(tmp_path / "log.db", *allow) as running:
        for origin in (
            "http://[2001:db8::1]:8080",
            "http://[2001:0db8:0000:0000:0000:0000:0000:0001]:8080",
            "http://[::ffff:c000:201]:80",
        ):
            assert _preflight_status(http, running.url, origin) == 204, origin
        for origin in ("http://[2001:db8::2]:8080", "http://[2001:db8::1]", "http://192.0.2.1"):
            assert _preflight_status(http, running.url, origin) == 403, origin


def _header_set(value: str) -> set[str]:
    return {item.strip().lower() for item in value.split(",")}


def test_a_preflight_from_an_allowed_origin_is_answered_without_the_token_or_a_session(
    tmp_path: Path, http: httpx.Client
) -> None:
    """Browsers send no Authorization header on a preflight: it is answered all the same,
    and opens, resumes or touches no session."""
    db = tmp_path / "log.db"
    with serving(db, "--token", "s3cret", "--allow-origin", "https://app.example") as running:
        for origin in (f"http://localhost:{running.port + 1}", "https://app.example"):
            for session in ({}, {"Mcp-Session-Id": "0" * 32}):
                answered = http.options(
                    running.url, headers={"Origin": origin, **PREFLIGHT, **session}
                )
                assert (answered.status_code, answered.content) == (204, b""), answered.text
                assert answered.headers["access-control-allow-origin"] == origin
                assert "origin" in _header_set(answered.headers["vary"])
                methods = _header_set(answered.headers["access-control-allow-methods"])
                assert {"post", "delete"} <= methods
                assert _header_set(answered.headers["access-control-allow-headers"]) >= {
                    "content-type",
                    "accept",
                    "authorization",
                    "mcp-session-id",
                    "mcp-protocol-version",
                    "last-event-id",
                }
                assert int(answered.headers["access-control-max-age"]) > 0
                assert "mcp-session-id" not in answered.headers
    with SqliteRecorder(db) as recorder:
        assert recorder.sessions() == []


def test_a_refused_origin_is_refused_with_no_cors_headers(
    shared_server: Server, http: httpx.Client
) -> None:
    for origin in ("http://evil.example", "null", f"http://localhost.evil.example:{shared_server.port}"):
        preflight = http.options(shared_server.url, headers={"Origin": origin, **PREFLIGHT})
        posted = http.post(shared_server.url, json=INITIALIZE, headers={"Origin": origin})
        for refused in (preflight, posted):
            assert refused.status_code == 403, origin
            assert "access-control-allow-origin" not in refused.headers
            assert "mcp-session-id" not in refused.headers


def test_a_refused_origin_is_named_with_the_option_that_allows_it(
    shared_server: Server, http: httpx.Client
) -> None:
    """The refusal said only "origin not allowed": a page's developer could not tell which
    origin the browser sent, nor that the server may be told to allow it."""
    for origin, shown in (
        ("http://evil.example", "'http://evil.example'"),
        ("null", "'null'"),
        ("http://" + "a" * 200, repr("http://" + "a" * 93 + "…")),
    ):
        refused = http.post(shared_server.url, json=INITIALIZE, headers={"Origin": origin})
        assert refused.status_code == 403, origin
        assert refusal(refused.json()) == (
            f"origin not allowed: {shown} is no local page (the server's operator may allow it"
            " with --allow-origin)"
        )


def test_every_answer_to_an_allowed_origin_can_be_read_by_its_page(
    tmp_path: Path, http: httpx.Client
) -> None:
    """Its errors too (401, 404, 405, 413, ...): each carries the origin and exposes the
    headers a page needs (the session id, the authentication scheme)."""
    origin = "http://127.0.0.1:8801"
    token = "s3cret"
    with serving(tmp_path / "log.db", "--token", token) as running:
        headers = {"Origin": origin, "Authorization": f"Bearer {token}"}
        session_id = McpClient(http, running.url, headers).initialize()
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        session = {**headers, "Mcp-Session-Id": session_id}
        answers = {
            "initialize": http.post(running.url, json=INITIALIZE, headers=headers),
            "ping": http.post(running.url, json=ping, headers=session),
            "wrong token": http.post(
                running.url, json=ping, headers={**session, "Authorization": "Bearer wrong"}
            ),
            "no session id": http.post(running.url, json=ping, headers=headers),
            "unknown session": http.post(
                running.url, json=ping, headers={**headers, "Mcp-Session-Id": "0" * 32}
            ),
            "other path": http.post(running.url + "/x", json=ping, headers=session),
            "GET": http.get(running.url, headers=session),
            "too big": http.post(running.url, content=b" " * ((4 << 20) + 1), headers=session),
            "DELETE": http.delete(running.url, headers=session),
        }
        assert {name: answer.status_code for name, answer in answers.items()} == {
            "initialize": 200,
            "ping": 200,
            "wrong token": 401,
            "no session id": 400,
            "unknown session": 404,
            "other path": 404,
            "GET": 405,
            "too big": 413,
            "DELETE": 204,
        }
        for name, answer in answers.items():
            assert answer.headers.get("access-control-allow-origin") == origin, name
            assert "origin" in _header_set(answer.headers["vary"]), name
            exposed = _header_set(answer.headers["access-control-expose-headers"])
            assert {"mcp-session-id", "www-authenticate"} <= exposed, name
        without_origin = http.post(
            running.url, json=INITIALIZE, headers={"Authorization": f"Bearer {token}"}
        )
        assert without_origin.status_code == 200
        assert "access-control-allow-origin" not in without_origin.headers


def test_options_without_a_preflight_is_answered_with_the_methods_the_endpoint_serves(
    shared_server: Server, http: httpx.Client
) -> None:
    """RFC 9110 §9.3.7: OPTIONS asks what the resource supports; GET is still a 405."""
    for headers in ({}, {"Origin": f"http://localhost:{shared_server.port}"}):
        answered = http.options(shared_server.url, headers=headers)
        assert (answered.status_code, answered.content) == (204, b"")
        assert _header_set(answered.headers["allow"]) == {"post", "delete", "options"}
        assert "access-control-allow-methods" not in answered.headers
    got = http.get(shared_server.url)
    assert got.status_code == 405
    assert _header_set(got.headers["allow"]) == {"post", "delete", "options"}


BROWSER_CLIENT = """
async ({url, token, initialize, call}) => {
    const headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "authorization": "Bearer " + token,
    };
    const post = (message, extra) => fetch(url, {
        method: "POST", headers: {...headers, ...extra}, body: JSON.stringify(message),
    });
    const opened = await post(initialize, {});
    const sessionId = opened.headers.get("mcp-session-id");
    const server = (await opened.json()).result.serverInfo.name;
    const session = {"mcp-session-id": sessionId, "mcp-protocol-version": "2025-06-18"};
    const initialized = await post({jsonrpc: "2.0", method: "notifications/initialized"}, session);
    const read = await (await post(call, session)).json();
    const unauthorized = await post(call, {...session, authorization: "Bearer wrong"});
    const unknown = await post(call, {...session, "mcp-session-id": "0".repeat(32)});
    return {
        sessionId, server, initialized: initialized.status, read,
        unauthorized: [unauthorized.status, unauthorized.headers.get("www-authenticate")],
        unknown: [unknown.status, (await unknown.json()).error.message],
    };
}
"""

REFUSED_CLIENT = """
async ({url, initialize}) => {
    try {
        await fetch(url, {
            method: "POST",
            headers: {"content-type": "application/json"},
            body: JSON.stringify(initialize),
        });
        return "fetched";
    } catch (error) {
        return error.name;
    }
}
"""


async def _run_in_page(
    browser: WebBrowser, page_url: str, script: str, argument: dict[str, Any], *, fake: bool
) -> Any:
    """`script` evaluated in a page at `page_url`, in a browser context of its own; with
    `fake`, the page is made up by the browser (no server) so it can have any origin, and
    is let reach local addresses (Chromium asks the user before a page of a public origin
    does; the page must be https)."""

    async def run() -> Any:
        context = await browser.browser.new_context(
            permissions=["local-network-access"] if fake else []
        )
        try:
            page = await context.new_page()
            if fake:

                async def fulfill(route: Any) -> None:
                    await route.fulfill(content_type="text/html", body="<!doctype html><p>x")

                await page.route(page_url, fulfill)
            await page.goto(page_url)
            return await page.evaluate(script, argument)
        finally:
            await context.close()

    with trio.fail_after(120):  # a hang guard, not a measurement
        return await browser.call(run)


async def test_a_page_on_a_localhost_port_can_use_the_server_from_a_browser(
    tmp_path: Path, browser: WebBrowser
) -> None:
    db = tmp_path / "log.db"
    token = "s3cret"
    with serving(db, "--token", token) as running, serve_directory(tmp_path) as pages:
        (tmp_path / "page.html").write_text("<!doctype html><title>agent</title>")
        page_url = pages.replace("127.0.0.1", "localhost") + "page.html"
        argument = {
            "url": running.url,
            "token": token,
            "initialize": INITIALIZE,
            "call": call(1, "read_semantics", {}),
        }
        seen = await _run_in_page(browser, page_url, BROWSER_CLIENT, argument, fake=False)
    assert re.fullmatch(r"[0-9a-f]{32}", seen["sessionId"]), seen
    assert (seen["server"], seen["initialized"]) == ("semledger", 202)
    envelope = seen["read"]["result"]["structuredContent"]
    assert envelope["ok"] is True
    assert "counter.value" in {n["semantic_id"] for n in envelope["value"]["nodes"]}
    assert seen["unauthorized"] == [401, "Bearer"]
    assert seen["unknown"] == [404, f"unknown session {'0' * 32!r}"]
    with SqliteRecorder(db) as recorder:
        events = [event for _record, event in recorder.events(seen["sessionId"])]
    (connected,) = [event for event in events if isinstance(event, AgentConnected)]
    assert connected.client == INITIALIZE["params"]["clientInfo"]  # type: ignore[index]


@pytest.mark.parametrize(
    ("page_origin", "outcome"),
    [("https://app.example", "fetched"), ("https://evil.example", "TypeError")],
)
async def test_a_page_of_another_origin_can_use_the_server_only_if_allowed(
    tmp_path: Path, browser: WebBrowser, page_origin: str, outcome: str
) -> None:
    db = tmp_path / "log.db"
    with serving(db, "--allow-origin", "https://app.example") as running:
        argument = {"url": running.url, "initialize": INITIALIZE}
        seen = await _run_in_page(
            browser, f"{page_origin}/page.html", REFUSED_CLIENT, argument, fake=True
        )
    assert seen == outcome
    with SqliteRecorder(db) as recorder:
        assert len(recorder.sessions()) == (1 if outcome == "fetched" else 0)


@pytest.mark.parametrize("given_by", ["--token", "SEMLEDGER_TOKEN"])
def test_a_bearer_token_is_required_when_configured(
    given_by: str, tmp_path: Path, http: httpx.Client
) -> None:
    token = "s3cret-token"
    extra = ("--token", token) if given_by == "--token" else ()
    env = {"SEMLEDGER_TOKEN": token} if given_by == "SEMLEDGER_TOKEN" else {}
    with serving(tmp_path / "log.db", *extra, env=env) as running:
        for headers in (
            {},
            {"Authorization": "Bearer wrong"},
            {"Authorization": token},
            {"Authorization": f"Basic {token}"},
        ):
            refused = McpClient(http, running.url, headers).post(INITIALIZE)
            assert refused.status_code == 401, headers
            assert refused.headers["www-authenticate"] == "Bearer"
        client = McpClient(http, running.url, {"Authorization": f"Bearer {token}"})
        client.initialize()
        assert client.count() == "0"
        assert (
            client.post(
                {"jsonrpc": "2.0", "id": 7, "method": "ping"}, Authorization="Bearer wrong"
            ).status_code
            == 401
        )


def test_the_bearer_scheme_is_matched_case_insensitively(
    tmp_path: Path, http: httpx.Client
) -> None:
    token = "s3cret-token"
    with serving(tmp_path / "log.db", "--token", token) as running:
        for scheme in ("bearer", "BEARER", "bEaReR", "Bearer "):
            McpClient(http, running.url, {"Authorization": f"{scheme} {token}"}).initialize()
        for header in (f"bearer {token.upper()}", f"bearer{token}", f"Bearers {token}"):
            refused = McpClient(http, running.url, {"Authorization": header}).post(INITIALIZE)
            assert refused.status_code == 401, header


def test_binds_loopback_only_by_default(tmp_path: Path, http: httpx.Client) -> None:
    with serving(tmp_path / "log.db", bind=":0") as running:
        assert urlsplit(running.url).hostname == "127.0.0.1"
        McpClient(http, running.url).initialize()
        with (
            pytest.raises(ConnectionRefusedError),
            socket.create_connection(("127.0.0.2", running.port), timeout=10),
        ):
            pass


def test_each_session_has_its_own_app_instance(shared_server: Server, http: httpx.Client) -> None:
    first, second = McpClient(http, shared_server.url), McpClient(http, shared_server.url)
    first.initialize()
    second.initialize()
    generation = first.read()["generation"]
    for _ in range(3):
        receipt = first.tool("perform_action", increment(exact(generation)))
        generation = receipt["value"]["after"]
    assert second.tool("perform_action", increment(exact("1")))["value"]["after"] == "2"
    assert (first.count(), second.count()) == ("3", "1")
    assert (first.read()["generation"], second.read()["generation"]) == ("4", "2")


def test_a_perform_action_refused_for_its_arguments_is_logged(
    shared_server: Server, http: httpx.Client
) -> None:
    client = McpClient(http, shared_server.url)
    session_id = client.initialize()
    refused = client.tool("perform_action", {**increment(exact("1")), "action": "activate"})
    assert refused["error"]["code"] == "invalid_arguments"
    assert client.tool("perform_action", increment(exact("1")))["ok"]
    with SqliteRecorder(shared_server.db) as recorder:
        events = [event for _record, event in recorder.events(session_id)]
    (logged,) = [event for event in events if isinstance(event, CallRefused)]
    assert (logged.code, logged.message) == ("invalid_arguments", refused["error"]["message"])
    assert logged.arguments["target"] == increment(exact("1"))["target"]


def test_the_log_holds_who_connected_and_from_where(
    shared_server: Server, http: httpx.Client
) -> None:
    """The audit's "which agent": the clientInfo of the initialize, and the peer's address."""
    client = McpClient(http, shared_server.url)
    session_id = client.initialize()
    assert client.tool("perform_action", increment(exact("1")))["ok"]
    audited = subprocess.run(
        _semledger("audit", session_id, "--db", str(shared_server.db), "--json"),
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    [connection] = json.loads(audited.stdout)["connections"]
    assert connection["client"] == INITIALIZE["params"]["clientInfo"]
    assert (connection["transport"], connection["protocol_version"]) == (
        "http",
        INITIALIZE["params"]["protocolVersion"],
    )
    assert re.fullmatch(r"127\.0\.0\.1:\d+", connection["peer"])


def _has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.skipif(not _has_ipv6_loopback(), reason="this machine has no IPv6 loopback (::1)")
def test_a_server_on_ipv6_loopback_names_itself_and_its_clients_with_brackets(
    tmp_path: Path, http: httpx.Client
) -> None:
    with serving(tmp_path / "log.db", bind="[::1]:0") as running:
        assert re.fullmatch(r"http://\[::1\]:\d+/mcp", running.url)
        client = McpClient(http, running.url, {"Origin": f"http://[0:0::1]:{running.port}"})
        session_id = client.initialize()
        audited = subprocess.run(
            _semledger("audit", session_id, "--db", str(running.db), "--json"),
            capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
    [connection] = json.loads(audited.stdout)["connections"]
    assert re.fullmatch(r"\[::1\]:\d+", connection["peer"])


def test_a_session_continues_after_the_server_is_killed_and_restarted(
    tmp_path: Path, http: httpx.Client
) -> None:
    db = tmp_path / "log.db"
    with serving(db) as before:
        client = McpClient(http, before.url)
        session_id = client.initialize()
        generation = client.read()["generation"]
        for _ in range(2):
            receipt = client.tool("perform_action", increment(exact(generation)))
            generation = receipt["value"]["after"]
        nodes = {n["semantic_id"]: n["node_id"] for n in client.read()["nodes"]}
        before.kill()

    with serving(db) as after:
        client.url = after.url
        receipt = client.tool("perform_action", increment(exact(generation)))
        assert receipt == {
            "ok": True,
            "value": {
                "before": generation,
                "after": str(int(generation) + 1),
                "pending_work": False,
            },
        }
        full = client.read()
        assert {n["semantic_id"]: n["node_id"] for n in full["nodes"]} == nodes
        assert client.count() == "3"
        stale = client.tool("perform_action", increment(exact(generation)))
        assert stale["error"]["code"] == "stale_generation"
        assert stale["error"]["details"] == {"expected": generation, "current": full["generation"]}
        assert (
            McpClient(http, after.url)
            .post({"jsonrpc": "2.0", "id": 1, "method": "ping"}, **{"Mcp-Session-Id": "f" * 32})
            .status_code
            == 404
        )

    with SqliteRecorder(db) as recorder:
        events = [event for _record, event in recorder.events(session_id)]
    assert sum(isinstance(e, ActionReceipt) for e in events) == 3
    *run, stopped = events  # the kill logged no end; the second server's stop did
    assert not any(isinstance(e, SessionEnded) for e in run)
    assert stopped == SessionEnded("the server stopped (signal SIGTERM)")


def _audit(db: Path, session_id: str) -> dict[str, Any]:
    audited = subprocess.run(
        _semledger("audit", session_id, "--db", str(db), "--json"), capture_output=True
    )
    assert audited.returncode == 0, audited.stderr
    result: dict[str, Any] = json.loads(audited.stdout)
    return result


def test_a_session_its_server_stopped_cleanly_is_ended_for_now_not_audited_as_killed(
    tmp_path: Path, http: httpx.Client
) -> None:
    """A SIGTERM logged no end: the audit said the server was killed and its answers may
    not have reached the agent, as after a SIGKILL. Its end is now logged for now, and the
    client's next request to a new server resumes the session; a kill is still said."""
    db = tmp_path / "log.db"
    with serving(db) as before:
        client = McpClient(http, before.url)
        session_id = client.initialize()
        assert client.tool("perform_action", increment({"kind": "latest"}))["ok"]
    audited = _audit(db, session_id)
    assert [i["kind"] for i in audited["incidents"]] == []
    assert audited["end"]["state"] == "ended"
    assert (audited["end"]["reason"], audited["end"]["final"]) == (
        "the server stopped (signal SIGTERM)", False
    )
    with serving(db) as after:
        client.url = after.url
        assert client.tool("perform_action", increment({"kind": "latest"}))["ok"]
        assert client.count() == "2"
        after.kill()
    assert [i["kind"] for i in _audit(db, session_id)["incidents"]] == ["resumed", "stopped"]


def _raw_post(message: object, session_id: str) -> bytes:
    body = json.dumps(message).encode()
    return (
        b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        + f"Mcp-Session-Id: {session_id}\r\nContent-Length: {len(body)}\r\n\r\n".encode()
        + body
    )


def test_a_stop_does_not_wait_for_a_request_sent_behind_the_last_answer_of_its_connection(
    tmp_path: Path, http: httpx.Client
) -> None:
    """Stopped while clients sent on keep-alive connections, the server often sat out its
    whole 30 s grace with every request answered: a connection closed after its answer,
    the next request on it already read, kept hypercorn waiting to take that request up.
    The answer being sent as the server stops still goes out whole; the request behind it
    gets none, and the session's end is logged."""
    db = tmp_path / "log.db"
    with serving(db) as server:
        session_id = McpClient(http, server.url).initialize()
        holder = sqlite3.connect(db, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # the action waits for the log: it is being answered
        with socket.create_connection(("127.0.0.1", server.port), timeout=30) as conn:
            post = _raw_post(call(1, "perform_action", increment({"kind": "latest"})), session_id)
            conn.sendall(post + post)  # the second is read behind the first
            time.sleep(1)  # the first is read, its action waiting for the log
            server.process.send_signal(signal.SIGTERM)
            time.sleep(0.5)
            holder.close()
            answer = b"".join(iter(lambda: conn.recv(65536), b""))  # until it closes
        try:
            server.process.wait(timeout=15)  # the grace is 30 s; none of it is needed
        except subprocess.TimeoutExpired:
            server.kill()
            pytest.fail("the server waited out its grace with every request answered")
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 "), answer
    length = re.search(rb"(?im)^content-length: (\d+)\r?$", head)
    assert length is not None, answer
    assert int(length.group(1)) == len(body), answer  # one answer, whole
    assert json.loads(body)["result"]["structuredContent"]["ok"] is True
    assert _audit(db, session_id)["end"]["reason"] == "the server stopped (signal SIGTERM)"


def test_a_client_that_comes_back_after_a_restart_is_logged_as_resumed_and_audited(
    tmp_path: Path, http: httpx.Client
) -> None:
    """Its calls after the restart are not left to the connection before it: it sent no
    initialize to the new server, and the audit says so, with where it came from."""
    db = tmp_path / "log.db"
    with serving(db) as before:
        client = McpClient(http, before.url, {"MCP-Protocol-Version": "2025-06-18"})
        session_id = client.initialize()
        assert client.tool("perform_action", increment({"kind": "latest"}))["ok"]
        before.kill()
    with serving(db) as after:
        client.url = after.url
        assert client.tool("perform_action", increment({"kind": "latest"}))["ok"]
        assert client.tool("perform_action", increment({"kind": "latest"}))["ok"]

    with SqliteRecorder(db) as recorder:
        events = [(record.seq, event) for record, event in recorder.events(session_id)]
    connected = [(seq, e) for seq, e in events if isinstance(e, AgentConnected)]
    assert [(e.client, e.protocol_version, e.resumed) for _seq, e in connected] == [
        (INITIALIZE["params"]["clientInfo"], "2025-06-18", False),  # type: ignore[index]
        (None, "2025-06-18", True),
    ]
    assert re.fullmatch(r"127\.0\.0\.1:\d+", connected[1][1].peer or "")
    receipts = [seq for seq, e in events if isinstance(e, ActionReceipt)]
    assert receipts[0] < connected[1][0] < receipts[1]  # once, before its first call there

    agents = _audited_agents(session_id, db)
    assert agents[0].startswith("agent: test_hosts_http 1 (MCP 2025-06-18, over http from ")
    assert agents[1].startswith(
        "agent: a client that came back with the session id (no initialize) (MCP 2025-06-18,"
        " over http from 127.0.0.1:"
    )
    assert "resumed at " in agents[1]
    assert agents[1].endswith(f"(event {connected[1][0]})")


def _audited_agents(session_id: str, db: Path) -> list[str]:
    """The ``agent:`` lines of the session's audit."""
    audited = subprocess.run(
        _semledger("audit", session_id, "--db", str(db)),
        capture_output=True, text=True, timeout=60, check=True,
        env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip
    return [line for line in audited.stdout.splitlines() if line.startswith("agent: ")]


@pytest.mark.parametrize(
    "first",
    [None, {"jsonrpc": "2.0", "id": 1, "method": "ping"}, {**INITIALIZE, "params": {}}],
    ids=["initialize-first", "ping-first", "malformed-initialize-first"],
)
def test_an_initialize_sent_with_the_session_id_after_a_restart_is_logged_as_a_connection(
    tmp_path: Path, http: httpx.Client, first: dict[str, Any] | None
) -> None:
    """The new server's router answers it: the log holds its clientInfo, as for a first
    connection. Only a client that sent something else first is logged as resumed."""
    db = tmp_path / "log.db"
    again = {"name": "came-back", "version": "2"}
    with serving(db) as before:
        client = McpClient(http, before.url)
        session_id = client.initialize()
        before.kill()
    with serving(db) as after:
        client.url = after.url
        if first is not None:
            assert client.post(first).status_code == 200
        params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": again}
        answered = client.post({**INITIALIZE, "params": params})
        assert answered.status_code == 200, answered.text
        assert answered.json()["result"]["protocolVersion"] == "2025-11-25"
        assert answered.headers["mcp-session-id"] == session_id
        reinitialized = client.post({**INITIALIZE, "id": 2})
        assert reinitialized.json()["error"]["code"] == -32600
        assert client.tool("perform_action", increment({"kind": "latest"}))["ok"]

    with SqliteRecorder(db) as recorder:
        events = [(record.seq, event) for record, event in recorder.events(session_id)]
    connected = [(seq, e) for seq, e in events if isinstance(e, AgentConnected)]
    resumed = [] if first is None else [(None, None, True)]
    assert [(e.client, e.protocol_version, e.resumed) for _seq, e in connected] == [
        (INITIALIZE["params"]["clientInfo"], "2025-06-18", False),  # type: ignore[index]
        *resumed,
        (again, "2025-11-25", False),
    ]
    assert re.fullmatch(r"127\.0\.0\.1:\d+", connected[-1][1].peer or "")
    (receipt,) = [seq for seq, e in events if isinstance(e, ActionReceipt)]
    assert connected[-1][0] < receipt

    agents = _audited_agents(session_id, db)
    assert agents[-1].startswith("agent: came-back 2 (MCP 2025-11-25, over http from ")


def test_a_second_initialize_on_a_live_session_is_refused_and_logs_nothing(
    shared_server: Server, http: httpx.Client
) -> None:
    client = McpClient(http, shared_server.url)
    session_id = client.initialize()
    refused = client.post({**INITIALIZE, "id": 1})
    assert refused.json()["error"] == {
        "code": -32600,
        "message": "Invalid Request: already initialized",
    }
    assert client.tool("read_semantics", {})["ok"] is True
    with SqliteRecorder(shared_server.db) as recorder:
        connected = [e for _r, e in recorder.events(session_id) if isinstance(e, AgentConnected)]
    assert [e.client for e in connected] == [INITIALIZE["params"]["clientInfo"]]  # type: ignore[index]


SESSIONS = 200
ACTIONS = 100


@attrs.define
class _KeptAlive:
    """One keep-alive HTTP/1.1 connection spoken with h11, opened again once the server
    closes it (hypercorn does after 1000 requests): the load test's client must cost far
    less than the server it loads, and httpx took half the server's CPU on the same cores."""

    host: str
    port: int
    stream: trio.SocketStream | None = None
    connection: h11.Connection = attrs.field(factory=lambda: h11.Connection(h11.CLIENT))

    async def post(self, path: str, message: dict[str, Any], session: str | None) -> tuple[
        int, dict[bytes, bytes], bytes
    ]:
        if self.stream is None:
            self.stream = await trio.open_tcp_stream(self.host, self.port)
            self.connection = h11.Connection(h11.CLIENT)
        body = json.dumps(message).encode()
        headers = [("Host", f"{self.host}:{self.port}"), ("Content-Type", "application/json")]
        headers += [("Content-Length", str(len(body)))]
        if session is not None:
            headers.append(("Mcp-Session-Id", session))
        request = h11.Request(method="POST", target=path, headers=headers)
        await self.stream.send_all(
            self.connection.send(request)
            + self.connection.send(h11.Data(data=body))
            + self.connection.send(h11.EndOfMessage())
        )
        status, answered, chunks = 0, {}, []
        while not isinstance(event := self.connection.next_event(), h11.EndOfMessage):
            if event is h11.NEED_DATA:
                self.connection.receive_data(await self.stream.receive_some())
            elif isinstance(event, h11.Response):
                status, answered = event.status_code, dict(event.headers)
            elif isinstance(event, h11.Data):
                chunks.append(event.data)
            else:
                raise AssertionError(f"the server answered {event!r}")
        if self.connection.our_state is h11.MUST_CLOSE:
            await self.aclose()
        else:
            self.connection.start_next_cycle()
        return status, answered, b"".join(chunks)

    async def aclose(self) -> None:
        if self.stream is not None:
            await self.stream.aclose()
            self.stream = None


async def test_200_concurrent_sessions_of_100_exact_actions_each(tmp_path: Path) -> None:
    db = tmp_path / "load.db"
    with serving(db) as running:
        url = urlsplit(running.url)
        assert url.hostname is not None
        assert url.port is not None
        kept = [_KeptAlive(url.hostname, url.port) for _ in range(16)]
        free_send, free = trio.open_memory_channel[_KeptAlive](len(kept))
        for connection in kept:
            free_send.send_nowait(connection)
        finals: dict[str, str] = {}

        async def post(session_id: str | None, message: dict[str, Any]) -> tuple[
            int, dict[bytes, bytes], bytes
        ]:
            connection = await free.receive()
            try:
                return await connection.post(url.path, message, session_id)
            finally:
                free_send.send_nowait(connection)

        async def agent() -> None:
            status, headers, body = await post(None, INITIALIZE)
            assert status == 200, body
            session_id = headers[b"mcp-session-id"].decode()
            assert (await post(session_id, INITIALIZED))[0] == 202
            generation = "1"
            for n in range(1, ACTIONS + 1):
                status, _headers, body = await post(
                    session_id, call(n, "perform_action", increment(exact(generation)))
                )
                assert status == 200, body
                envelope = json.loads(body)["result"]["structuredContent"]
                assert envelope["ok"] is True, envelope
                assert envelope["value"]["before"] == generation
                generation = envelope["value"]["after"]
            _status, _headers, read = await post(session_id, call(0, "read_semantics", {}))
            nodes = json.loads(read)["result"]["structuredContent"]["value"]["nodes"]
            finals[session_id] = next(
                n["value"] for n in nodes if n["semantic_id"] == "counter.value"
            )

        async with trio.open_nursery() as nursery:
            for _ in range(SESSIONS):
                nursery.start_soon(agent)
        for connection in kept:
            await connection.aclose()
        assert len(finals) == SESSIONS
        assert set(finals.values()) == {str(ACTIONS)}

    with SqliteRecorder(db) as recorder:
        for session_id in finals:
            events = [event for _record, event in recorder.events(session_id)]
            assert sum(isinstance(e, ActionRequested) for e in events) == ACTIONS
            assert sum(isinstance(e, ActionReceipt) for e in events) == ACTIONS


async def test_concurrent_requests_on_one_session_are_each_applied_once_and_logged(
    shared_server: Server,
) -> None:
    db, running = shared_server.db, shared_server
    requests = 30
    async with httpx.AsyncClient(timeout=60) as http:
        opened = await http.post(running.url, json=INITIALIZE)
        session_id = opened.headers["mcp-session-id"]
        headers = {"Mcp-Session-Id": session_id}
        initialized = await http.post(running.url, json=INITIALIZED, headers=headers)
        assert initialized.status_code == 202
        receipts: list[dict[str, Any]] = []

        async def act(n: int) -> None:
            message = call(n, "perform_action", increment({"kind": "latest"}))
            response = await http.post(running.url, json=message, headers=headers)
            assert response.status_code == 200, response.text
            assert response.json()["id"] == n
            envelope = response.json()["result"]["structuredContent"]
            assert envelope["ok"] is True, envelope
            receipts.append(envelope["value"])

        async with trio.open_nursery() as nursery:
            for n in range(1, requests + 1):
                nursery.start_soon(act, n)
        read = await http.post(running.url, json=call(0, "read_semantics", {}), headers=headers)
        nodes = read.json()["result"]["structuredContent"]["value"]["nodes"]
    # Applied one after another, in some order: each took the generation the last one made.
    befores = sorted(int(r["before"]) for r in receipts)
    assert befores == list(range(befores[0], befores[0] + requests))
    assert all(int(r["after"]) == int(r["before"]) + 1 for r in receipts)
    assert next(n["value"] for n in nodes if n["semantic_id"] == "counter.value") == "30"
    with SqliteRecorder(db) as recorder:
        logged = [e for _r, e in recorder.events(session_id) if isinstance(e, ActionReceipt)]
    assert sorted(e.after for e in logged) == sorted(int(r["after"]) for r in receipts)


def test_a_session_that_lost_its_log_to_another_writer_is_not_brought_back(
    tmp_path: Path,
) -> None:
    """Another process wrote the session: it ended without a SessionEnded, and must not be
    recovered by this server's next request (it would write the session again)."""
    from semledger.eventlog import EffectStarted, NewEvent

    db = tmp_path / "shared.db"
    with serving(db, exits=1) as running, httpx.Client(timeout=30) as http:
        opened = http.post(running.url, json=INITIALIZE)
        headers = {"Mcp-Session-Id": opened.headers["mcp-session-id"]}
        http.post(running.url, json=INITIALIZED, headers=headers)

        def act(n: int) -> httpx.Response:
            message = call(n, "perform_action", increment({"kind": "latest"}))
            return http.post(running.url, json=message, headers=headers)

        first = act(1)
        assert first.json()["result"]["structuredContent"]["ok"] is True
        session = headers["Mcp-Session-Id"]
        with SqliteRecorder(db) as other:
            head = other.head(session)
            assert head is not None
            other.append([NewEvent(session, head.seq + 1, EffectStarted(99, "foreign"), 0.0)])
        clash = act(2)
        assert clash.json()["result"]["structuredContent"]["ok"] is False
        after = act(3)
        assert after.status_code == 404, after.text
        assert refusal(after.json()).startswith(
            f"session {session!r} is over on this server: the session ended: session"
            f" {session!r} is being written by another process"
        )
    with SqliteRecorder(db) as recorder:
        receipts = [e for _r, e in recorder.events(session) if isinstance(e, ActionReceipt)]
    assert len(receipts) == 1


async def test_a_port_in_use_is_a_serve_error_naming_the_address_and_the_reason(
    tmp_path: Path,
) -> None:
    from semledger.hosts import ServeError, serve_http

    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        with pytest.raises(ServeError) as raised:
            await serve_http(COUNTER, host="127.0.0.1", port=port, db=tmp_path / "log.db")
    in_use = f"[Errno {errno.EADDRINUSE}] {os.strerror(errno.EADDRINUSE)}"
    assert str(raised.value) == f"cannot listen on 127.0.0.1:{port}: {in_use}"
    assert list(tmp_path.iterdir()) == []  # the log it made for the run is not left behind


async def test_a_port_in_use_leaves_a_log_that_was_there_as_it_was(tmp_path: Path) -> None:
    from semledger.hosts import ServeError, serve_http

    db = tmp_path / "log.db"
    SqliteRecorder(db).close()
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        with pytest.raises(ServeError, match="cannot listen on"):
            await serve_http(COUNTER, host="127.0.0.1", port=held.getsockname()[1], db=db)
    with SqliteRecorder(db) as recorder:
        assert recorder.sessions() == []


@pytest.mark.parametrize("port", [-1, 65536, 99999])
async def test_a_port_out_of_range_is_a_serve_error_naming_the_range(
    tmp_path: Path, port: int
) -> None:
    from semledger.hosts import ServeError, serve_http

    with pytest.raises(ServeError) as raised:
        await serve_http(COUNTER, host="127.0.0.1", port=port, db=tmp_path / "log.db")
    assert str(raised.value) == (
        f"cannot listen on 127.0.0.1:{port}: the port must be from 0 to 65535"
    )
    assert not (tmp_path / "log.db").exists()


def test_an_os_error_once_listening_is_a_failure_not_a_cannot_listen_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The port is bound, then announcing it fails (the terminal went away): that OSError
    propagates with its traceback, rather than becoming "cannot listen on ..." (exit 2)."""
    from semledger._cli import main

    class LostTerminal(io.StringIO):
        def write(self, text: str) -> int:
            if "serving" in text:
                raise OSError(errno.EIO, os.strerror(errno.EIO))
            return super().write(text)

    stderr = LostTerminal()
    monkeypatch.setattr(sys, "stderr", stderr)
    lost = pytest.RaisesExc(OSError, check=lambda error: error.errno == errno.EIO)
    with pytest.RaisesGroup(lost, flatten_subgroups=True):
        main(["serve", COUNTER, "--db", str(tmp_path / "log.db"), "--http", "127.0.0.1:0"])
    assert "cannot listen" not in stderr.getvalue()


def test_initialize_of_an_app_that_raises_as_it_starts_is_an_error_reply_not_a_500(
    tmp_path: Path, http: httpx.Client
) -> None:
    """... and its operator hears of each, and where the app raised (it was the client
    alone, and the server exited 0, '0 session(s) failed')."""
    db = tmp_path / "log.db"
    with serving(db, app="tests_broken_start:app", exits=1) as server:
        for _ in range(2):  # and the server goes on serving
            response = http.post(server.url, json=INITIALIZE)
            assert response.status_code == 200, response.text
            assert "mcp-session-id" not in response.headers
            reply = response.json()
            assert (reply["id"], reply["error"]["code"]) == (0, -32603)
            message = reply["error"]["message"]
            assert "the application raised as it started: BrokenViewError" in message
    with SqliteRecorder(db) as recorder:
        summaries = recorder.sessions()
    assert [(s.ended, s.end_reason) for s in summaries] == [(True, "crashed: BrokenViewError")] * 2
    said = server.errors.read_text().splitlines()
    failed = [line for line in said if "could not start" in line]
    assert sorted(line.split("'")[1] for line in failed) == sorted(s.name for s in summaries)
    assert all("BrokenViewError" in line and "the view is broken" in line for line in failed)
    assert all(line.endswith("tests_broken_start.py, line 18)") for line in failed)
    assert said[-1] == "semledger: stopped serving tests_broken_start:app; 2 session(s) failed"


def test_after_a_restart_only_live_sessions_of_the_same_app_resume(
    tmp_path: Path, http: httpx.Client
) -> None:
    """A restarted server resumes a session its log holds unless it was ended by its
    client, crashed, or belongs to another app: those are 404."""
    db = tmp_path / "log.db"
    crashy = "tests_crashy:app"
    with serving(db, app=crashy) as before:
        live, ended, crashed = (McpClient(http, before.url) for _ in range(3))
        for client in (live, ended, crashed):
            client.initialize()
        assert (
            http.delete(before.url, headers={"Mcp-Session-Id": ended.session_id or ""}).status_code
            == 204
        )
        for _ in range(3):  # the crashy counter raises on its third increment
            crashed.post(call(1, "perform_action", increment({"kind": "latest"})))
        before.kill()

    said: list[str] = []

    def status(client: McpClient, url: str) -> int:
        client.url = url
        answer = client.post({"jsonrpc": "2.0", "id": 1, "method": "ping"})
        if answer.status_code == 404:
            said.append(refusal(answer.json()))
        return answer.status_code

    with serving(db, app=crashy) as after:
        assert [status(c, after.url) for c in (live, ended, crashed)] == [200, 404, 404]
    with serving(db) as other_app:
        fresh = McpClient(http, other_app.url)
        fresh.session_id = live.session_id
        assert status(fresh, other_app.url) == 404
    # Why, rather than "unknown session" for a session the log plainly holds.
    assert said == [
        f"session {ended.session_id!r} was ended for good (deleted by the client): no server"
        " takes it up again",
        f"session {crashed.session_id!r} crashed (crashed: ThirdIncrementError): it cannot be"
        " resumed",
        f"session {live.session_id!r} is a session of {crashy}, not of {COUNTER}",
    ]


def test_a_session_another_live_server_owns_is_refused_with_409_and_left_to_it(
    tmp_path: Path,
) -> None:
    """Two servers on one log: the second must not resume a session the first still serves
    (its effects would run twice), and the first goes on serving it."""
    db = tmp_path / "shared.db"
    with serving(db) as first, serving(db) as second, httpx.Client(timeout=30) as http:
        client = McpClient(http, first.url)
        client.initialize()
        assert client.tool("perform_action", increment({"kind": "latest"}))["ok"] is True
        with SqliteRecorder(db) as recorder:
            before = list(recorder.read(client.session_id or ""))
        stolen = McpClient(http, second.url)
        stolen.session_id = client.session_id
        refused = stolen.post(call(1, "read_semantics", {}))
        assert refused.status_code == 409, refused.text
        assert "is already being served" in refusal(refused.json())
        with SqliteRecorder(db) as recorder:
            assert list(recorder.read(client.session_id or "")) == before
        assert client.count() == "1"


def test_a_session_started_redacting_is_refused_with_409_by_a_server_logging_passwords(
    tmp_path: Path,
) -> None:
    """It was resumed, and the passwords typed from then on logged in clear, while its start
    still said redact_passwords: true."""
    db = tmp_path / "log.db"
    gallery = "semledger.examples.gallery:app"
    with serving(db, app=gallery) as first, httpx.Client(timeout=30) as http:
        client = McpClient(http, first.url)
        session = client.initialize()
    with SqliteRecorder(db) as recorder:
        before = list(recorder.read(session))
    with (
        serving(db, "--log-passwords", app=gallery) as logging,
        httpx.Client(timeout=30) as http,
    ):
        client.http, client.url = http, logging.url
        refused = client.post(call(1, "read_semantics", {}))
        assert refused.status_code == 409, refused.text
        assert refusal(refused.json()).startswith(
            f"session {session!r} was started redacting typed passwords in its log (its start"
            " records redact_passwords: true): it is not resumed with --log-passwords"
        )
    with SqliteRecorder(db) as recorder:
        assert list(recorder.read(session)) == before


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        ("UPDATE sessions SET events = 'many' WHERE name = ?", "summary"),
        ("UPDATE events SET body = x'c1' WHERE session = ? AND seq = 2", "cannot decode"),
        ("UPDATE sessions SET events = events + 5 WHERE name = ?", "where the log holds"),
        (
            "DELETE FROM events WHERE session = ? AND seq = 1",
            "event 1: missing: the session's events start at event 2",
        ),
    ],
    ids=["summary-row", "event-body", "tail-cut", "start-deleted"],
)
def test_a_session_whose_log_is_damaged_is_a_500_naming_the_damage_and_others_go_on(
    tmp_path: Path, http: httpx.Client, damage: str, says: str
) -> None:
    """Resuming reads the session's summary and events: a hand-edited row must be one
    JSON error for that session, not a server traceback, and the server keeps serving.
    (A session without its start was a 404 "unknown session", though the log holds it.)"""
    db = tmp_path / "log.db"
    with serving(db) as before:
        client = McpClient(http, before.url)
        client.initialize()
        assert client.tool("perform_action", increment({"kind": "latest"}))["ok"] is True
        before.kill()
    with sqlite3.connect(db) as conn:
        assert conn.execute(damage, (client.session_id,)).rowcount == 1
    conn.close()
    with serving(db) as after:
        client.url = after.url
        refused = client.post(call(1, "read_semantics", {}))
        assert refused.status_code == 500, refused.text
        error = refusal(refused.json())
        assert client.session_id in error
        assert "cannot be read" in error
        assert says in error
        deleted = http.delete(after.url, headers={"Mcp-Session-Id": client.session_id or ""})
        assert deleted.status_code == 500
        assert refusal(deleted.json()) == error
        assert "Traceback" not in after.errors.read_text()
        fresh = McpClient(http, after.url)
        fresh.initialize()
        assert fresh.count() == "0"


def test_resuming_a_session_with_an_event_logged_past_its_end_is_a_500_naming_the_damage(
    tmp_path: Path, http: httpx.Client
) -> None:
    """An event appended after the end its server logged as it stopped, the chain carried
    on: recovery re-executed past the end and resumed the session over it."""
    db = tmp_path / "log.db"
    with serving(db) as before:
        client = McpClient(http, before.url)
        session = client.initialize()
        assert client.tool("perform_action", increment({"kind": "latest"}))["ok"] is True
    with SqliteRecorder(db) as recorder:
        head = recorder.head(session)
        assert head is not None
        forged = AgentConnected(None, None, "http", None)
        recorder.append([NewEvent(session, head.seq + 1, forged, time.time())])
        before_resume = list(recorder.read(session))
    with serving(db) as after:
        client.url = after.url
        refused = client.post(call(1, "read_semantics", {}))
        assert refused.status_code == 500, refused.text
        assert refused.json()["error"]["code"] == SERVER_ERROR  # not the client's fault
        assert refusal(refused.json()) == (
            f"session {session!r} cannot be resumed: its log cannot be read: session"
            f" {session!r}, event {head.seq + 1}: it follows the session's end at event"
            f" {head.seq} with no resume"
        )
    with SqliteRecorder(db) as recorder:
        assert list(recorder.read(session)) == before_resume


def test_the_operator_is_told_of_each_session_that_failed_and_of_the_stop(
    tmp_path: Path, http: httpx.Client
) -> None:
    # ... and the server exits 1, as over stdio: a supervisor learns of it too.
    with serving(tmp_path / "log.db", app="tests_crashy:app", exits=1) as server:
        crashed, fine = McpClient(http, server.url), McpClient(http, server.url)
        crashed.initialize()
        fine.initialize()
        for _ in range(3):  # the crashy counter raises on its third increment
            crashed.post(call(1, "perform_action", increment({"kind": "latest"})))
        assert fine.tool("perform_action", increment({"kind": "latest"}))["ok"] is True
    said = server.errors.read_text().splitlines()
    assert (
        f"semledger: session '{crashed.session_id}' ended: its application raised"
        " ThirdIncrementError('the count may not reach 3')"
        f" (at {Path(__file__).parent / 'apps' / 'tests_crashy.py'}, line 19)"
    ) in said
    assert said[-1] == "semledger: stopped serving tests_crashy:app; 1 session(s) failed"


def _said_about(server: Server, session: str | None) -> list[str]:
    """The server's stderr lines that name `session`."""
    return [line for line in server.errors.read_text().splitlines() if f"'{session}'" in line]


def test_the_operator_is_told_of_each_session_parked_resumed_or_ended_by_its_client(
    tmp_path: Path, http: httpx.Client
) -> None:
    """Only the sessions that ended on their own were said: a session parked for being idle,
    resumed by its client's next request, or deleted by it left no line on stderr."""
    token = "not-for-stderr"
    bearer = {"Authorization": f"Bearer {token}"}
    with serving(tmp_path / "log.db", "--idle-timeout", "1", "--token", token) as server:
        served, parked = McpClient(http, server.url, bearer), McpClient(http, server.url, bearer)
        served.initialize()
        parked.initialize()
        deadline = time.monotonic() + 30
        while not all(_said_about(server, c.session_id) for c in (served, parked)):  # parked
            assert time.monotonic() < deadline, server.errors.read_text()
            time.sleep(0.05)
        assert served.count() == "0"  # resumed
        for client in (served, parked):  # the one it serves, then the one it parked
            named = {**bearer, "Mcp-Session-Id": client.session_id or ""}
            assert http.delete(server.url, headers=named).status_code == 204
    for client in (served, parked):
        said = _said_about(server, client.session_id)
        line = f"semledger: session '{client.session_id}'"
        lines = {
            "parked": f"{line} parked: no request for 1 s",
            "resumed": f"{line} resumed (from its log)",
            "ended": f"{line} ended by its client",
        }
        assert said[0] == lines["parked"]
        assert said[-1] == lines["ended"]
        assert set(said) <= set(lines.values())  # parked again, on a slow machine
        assert (lines["resumed"] in said) is (client is served)
    assert token not in server.errors.read_text()


def test_the_operator_is_told_of_each_request_refused_for_its_session_s_owner_or_log(
    tmp_path: Path, http: httpx.Client
) -> None:
    """A 409 (another server on the log serves the session) and a 500 (its log is damaged)
    reached the client alone: the operator of the server that refused heard nothing."""
    db = tmp_path / "log.db"
    with serving(db) as first:
        client = McpClient(http, first.url)
        session = client.initialize()
        with serving(db) as second:
            stolen = McpClient(http, second.url)
            stolen.session_id = session
            assert stolen.post(call(1, "read_semantics", {})).status_code == 409
    with SqliteRecorder(db) as recorder:  # an event past the end its server logged as it stopped
        head = recorder.head(session)
        assert head is not None
        forged = AgentConnected(None, None, "http", None)
        recorder.append([NewEvent(session, head.seq + 1, forged, time.time())])
    with serving(db) as third:
        client.url = third.url
        refused = client.post(call(1, "read_semantics", {}))
        assert refused.status_code == 500, refused.text
    assert _said_about(second, session) == [
        f"semledger: session {session!r} refused (409): session {session!r} is already being"
        " served (by this process or another one using the same log); a session has one owner"
        " at a time"
    ]
    assert _said_about(third, session) == [
        f"semledger: session {session!r} refused (500): {refusal(refused.json())}"
    ]


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        ("pässwort", "visible ASCII characters (it travels in a header), got others too"),
        ("two words\t", "visible ASCII characters (it travels in a header), got others too"),
        (" ", "visible ASCII characters (it travels in a header), got none"),
        (" secret", "no space at its start or end (a header's value loses them), got some"),
        ("secret ", "no space at its start or end (a header's value loses them), got some"),
    ],
)
def test_a_token_no_header_can_carry_is_refused_at_start(
    tmp_path: Path, token: str, expected: str
) -> None:
    """A token ending in a space was taken, and then no request could ever match it: a
    header's value loses its spaces at the ends."""
    done = subprocess.run(
        _semledger("serve", COUNTER, "--db", str(tmp_path / "log.db"), "--http", "127.0.0.1:0"),
        capture_output=True,
        text=True,
        env={**os.environ, "SEMLEDGER_TOKEN": token},
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"semledger: token: expected {expected}\n"
    assert not (tmp_path / "log.db").exists()


@pytest.mark.parametrize(
    ("token", "error", "message"),
    [
        ("", ValueError, r"^token: expected visible ASCII characters \(.*\), got none$"),
        (" ", ValueError, r"^token: expected visible ASCII characters \(.*\), got none$"),
        ("pässwort", ValueError, r"^token: expected visible ASCII characters \(.*\), got others"),
        (" secret", ValueError, r"^token: expected no space at its start or end \(.*\), got some$"),
        (5, TypeError, r"^token: expected a str or None, got int$"),
    ],
)
async def test_an_embedded_http_app_refuses_a_token_no_header_can_carry(
    token: object, error: type[Exception], message: str
) -> None:
    """McpHttpApp(token="") let in a request whose Authorization was a bare "Bearer", and
    token=5 answered every request with a 500: refused as `serve_http` refuses them."""
    from semledger.actors import LogWriter, SessionRegistry
    from semledger.eventlog import MemoryRecorder
    from semledger.examples import counter
    from semledger.hosts import McpHttpApp

    recorder = MemoryRecorder()
    async with trio.open_nursery() as nursery:
        writer = await nursery.start(LogWriter(recorder).run)
        registry = SessionRegistry(nursery, writer, recorder)
        with pytest.raises(error, match=message):
            McpHttpApp(registry, counter.app, COUNTER, token=token)  # type: ignore[arg-type]
        writer.close()


def test_a_session_not_opened_over_http_is_unknown_to_an_http_client(
    shared_server: Server, http: httpx.Client
) -> None:
    """A stdio session's name is chosen by its operator or made from the clock: sent as a
    session id it resumed the session for whoever guessed it, and the 404s of other names
    said which existed and which app they ran."""
    sys.path.insert(0, str(APPS))
    import stdio_client

    db = shared_server.db  # the stdio session is served on the log the HTTP server uses
    stdio_client.serve(COUNTER, db, "payroll-agent", [stdio_client.perform(1, "counter.increment")])
    with SqliteRecorder(db) as recorder:
        before = recorder.head("payroll-agent")
    for name in ("payroll-agent", "no-such-session"):
        answered = McpClient(http, shared_server.url).post(
            {"jsonrpc": "2.0", "id": 1, "method": "ping"}, **{"Mcp-Session-Id": name}
        )
        assert answered.status_code == 404
        assert refusal(answered.json()) == f"unknown session {name!r}"
    with SqliteRecorder(db) as recorder:
        assert recorder.head("payroll-agent") == before


@pytest.mark.parametrize(
    ("host", "local"),
    [
        *((host, True) for host in ("localhost", "LocalHost", "127.0.0.1", "127.0.0.2", "::1",
                                    "[::1]", "[0:0::1]", "::ffff:127.0.0.1", "[::ffff:127.0.0.1]")),
        *((host, False) for host in ("0.0.0.0", "::", "10.0.0.1", "::ffff:10.0.0.1", "::2",
                                     "example.invalid", "localhost.example", "", None)),
    ],
)  # fmt: skip
def test_a_bind_address_and_an_origin_host_are_local_by_one_rule(
    host: str | None, local: bool
) -> None:
    """The bind check called `::ffff:127.0.0.1` beyond this machine (demanding a token)
    where the Origin check called it local: two functions, one question."""
    from semledger.hosts._loopback import on_loopback

    assert on_loopback(host) is local


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "example.invalid"])
def test_serving_beyond_loopback_without_a_token_is_refused_from_python_too(
    tmp_path: Path, host: str
) -> None:
    """The command refused it; a server started from Python answered any host."""
    from semledger.hosts import ServeError, serve_http

    async def serve() -> None:
        with trio.fail_after(30):  # a bound on a server that, broken, serves on
            await serve_http(COUNTER, host=host, port=0, db=tmp_path / "log.db")

    with pytest.raises(ServeError, match="with no token: anyone who reaches the port"):
        trio.run(serve)
    assert not (tmp_path / "log.db").exists()


def test_an_empty_session_id_is_refused_as_none_not_looked_up(
    shared_server: Server, http: httpx.Client
) -> None:
    """It was a 404 "unknown session ''", as if a server could have given that id."""
    McpClient(http, shared_server.url).initialize()
    for method in ("POST", "DELETE"):
        body = {"jsonrpc": "2.0", "id": 2, "method": "ping"} if method == "POST" else None
        refused = http.request(method, shared_server.url, json=body, headers={"Mcp-Session-Id": ""})
        assert refused.status_code == 400, refused.text
        assert refusal(refused.json()) == "Mcp-Session-Id header required"
    opening = http.post(shared_server.url, json=INITIALIZE, headers={"Mcp-Session-Id": ""})
    assert opening.status_code == 400, opening.text
    assert refusal(opening.json()) == (
        "Mcp-Session-Id is empty: to open a session, send initialize without it"
    )


def test_serve_http_in_a_folder_holding_files_named_as_the_servers_modules_serves_its_app(
    tmp_path: Path, http: httpx.Client
) -> None:
    """The working directory goes first on sys.path for the app's import: an ``h2.py``
    there was imported for the server's own h2, and serve died with a traceback."""
    here = tmp_path / "work"
    here.mkdir()
    for name in ("h2", "h11", "hypercorn", "wsproto", "priority", "hpack", "hyperframe"):
        (here / f"{name}.py").write_text(f"raise ImportError('the {name}.py of the folder')\n")
    (here / "myapp.py").write_text("from semledger.examples.counter import app\n")
    with serving(tmp_path / "log.db", app="myapp:app", cwd=here) as running:
        client = McpClient(http, running.url)
        client.initialize()
        assert client.tool("perform_action", increment({"kind": "latest"}))["ok"] is True
        assert client.count() == "1"
