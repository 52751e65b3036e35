"""MCP conformance of the Streamable HTTP transport (`McpHttpApp`, in process over ASGI):
what a client that follows the spec, or a common client that bends it, gets."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from semledger.eventlog import AgentConnected, SqliteRecorder
from semledger.hosts import _http
from semledger.hosts._http import McpHttpApp

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from asgi_mcp import asgi as _asgi
from asgi_mcp import request
from stdio_client import refusal

NEWER = "2099-01-01"
"""A protocol version newer than any this server speaks."""


def _initialize(version: str, params: object = None) -> dict[str, Any]:
    if params is None:
        params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {}}
    return {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}


PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


CLIENT_HEADERS = [
    (b"content-type", b"application/json"),
    (b"accept", b"application/json, text/event-stream"),
]
"""What a client that follows the spec sends on every request."""


async def _request(
    app: McpHttpApp,
    method: str,
    message: object = None,
    session: str | None = None,
    *,
    version: str | None = None,
) -> tuple[int, dict[str, str], Any]:
    extra = [] if version is None else [(b"mcp-protocol-version", version.encode())]
    return await request(app, method, message, session, headers=CLIENT_HEADERS, extra=extra)


async def test_an_initialize_whose_header_names_a_newer_version_is_negotiated(
    tmp_path: Path,
) -> None:
    """The header is for the requests after initialize; on an initialize a client may send
    the newest version it speaks (the Java SDK's client does), and the body negotiates. It
    was a 400, and such a client could never open a session."""
    async with _asgi(tmp_path / "log.db") as app:
        status, headers, answer = await _request(
            app, "POST", _initialize(NEWER), version=NEWER
        )
        assert status == 200, answer
        assert answer["result"]["protocolVersion"] == "2025-11-25"
        session = headers["mcp-session-id"]
        status, _, answer = await _request(app, "POST", PING, session, version="2025-11-25")
        assert (status, answer["result"]) == (200, {})


async def test_a_request_after_initialize_with_an_unsupported_version_is_still_a_400(
    tmp_path: Path,
) -> None:
    async with _asgi(tmp_path / "log.db") as app:
        _, headers, _ = await _request(app, "POST", _initialize("2025-06-18"))
        session = headers["mcp-session-id"]
        for method, message in (("POST", PING), ("DELETE", None), ("GET", None)):
            status, _, answer = await _request(app, method, message, session, version=NEWER)
            assert status == 400, (method, answer)
            assert refusal(answer) == f"unsupported MCP-Protocol-Version {NEWER!r}"
        for message in ([PING], {"jsonrpc": "2.0", "method": "notifications/initialized"}):
            status, _, answer = await _request(app, "POST", message, session, version=NEWER)
            assert status == 400, (message, answer)
        status, _, answer = await _request(app, "POST", PING, session, version="2025-06-18")
        assert (status, answer["result"]) == (200, {})  # the session is unharmed


async def test_a_resumed_session_takes_no_unsupported_version_from_a_refused_initialize(
    tmp_path: Path,
) -> None:
    """A client back at a resumed session is taken to speak the version its header names:
    one this server does not speak, sent on an initialize its router refused, would have
    been logged as the client's and judged its batches."""
    db = tmp_path / "log.db"
    async with _asgi(db) as app:
        _, headers, _ = await _request(app, "POST", _initialize("2025-06-18"))
        session = headers["mcp-session-id"]
        await app.registry.park(session)
        malformed = _initialize(NEWER, params={"protocolVersion": 2099})
        status, _, answer = await _request(app, "POST", malformed, session, version=NEWER)
        assert (status, answer["error"]["code"]) == (200, -32602)
        status, _, answer = await _request(app, "POST", [PING], session)
    assert status == 200
    assert "negotiated 2025-06-18" in answer["error"]["message"]  # as the client spoke
    with SqliteRecorder(db) as recorder:
        connected = [e for _, e in recorder.events(session) if isinstance(e, AgentConnected)]
    assert [(c.protocol_version, c.resumed) for c in connected] == [
        ("2025-06-18", False),
        (None, True),
    ]


async def test_a_server_keeps_a_bounded_memory_of_ended_sessions_and_reads_older_ones_from_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every session its clients deleted stayed in memory for the server's life; the oldest
    ones now go, and a request for one is still refused, from its end in the log."""
    monkeypatch.setattr(_http, "REMEMBERED_SESSIONS", 2)
    async with _asgi(tmp_path / "log.db") as app:
        sessions = []
        for _ in range(3):
            _, headers, _ = await _request(app, "POST", _initialize("2025-06-18"))
            sessions.append(headers["mcp-session-id"])
            status, _, _ = await _request(app, "DELETE", None, sessions[-1], version="2025-06-18")
            assert status == 204
        assert list(app._over) == sessions[1:]
        for session in sessions:
            status, _, answer = await _request(app, "POST", PING, session, version="2025-06-18")
            assert status == 404
            assert refusal(answer) == (
                f"session {session!r} was ended for good (deleted by the client): no server"
                " takes it up again"
            )
