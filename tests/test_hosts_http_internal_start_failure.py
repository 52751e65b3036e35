"""A fault of semledger's own code as an HTTP server opens a session: its client gets a
JSON-RPC error saying semledger failed (it got an empty ``500``), its operator the error's
traceback and one line naming the session (it got hypercorn's "Error in ASGI Framework"),
and the failure is counted as the server stops (it said "0 session(s) failed"). The server
goes on serving."""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
import trio

from semledger.hosts import serve_http
from semledger.runtime._tree import ElementTree

COUNTER = "semledger.examples.counter:app"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {}},
}
READ = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "read_semantics"}}
BROKEN = "RuntimeError('the runtime is broken')"
CLIENT_TOLD = (
    f"semledger itself failed, not the application: {BROKEN} (a bug in semledger; the"
    " server's operator has its traceback)"
)
OPERATOR_TOLD = (
    f"semledger itself failed, not the application: {BROKEN} (a bug in semledger; its"
    " traceback, above, is for a bug report)"
)


class _Runtime:
    """`ElementTree.build`, broken while `broken` is set."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.broken = True
        build = ElementTree.build

        def building(tree: ElementTree, view: Any) -> Any:
            if self.broken:
                raise RuntimeError("the runtime is broken")
            return build(tree, view)

        monkeypatch.setattr(ElementTree, "build", building)


async def _served(db: Path, client: Callable[[str], Awaitable[None]]) -> int:
    """How many sessions the server on `db` said failed, once `client` has used it and a
    SIGTERM stopped it."""
    failed: list[int] = []
    async with trio.open_nursery() as nursery:

        async def serve(task_status: trio.TaskStatus[list[str]]) -> None:
            failed.append(await serve_http(COUNTER, port=0, db=db, task_status=task_status))

        (url,) = await nursery.start(serve)
        await client(url)
        os.kill(os.getpid(), signal.SIGTERM)
    return failed[0]


def _said_once(err: str, line: str) -> None:
    """`err` holds the traceback of the broken runtime once, followed by `line`."""
    lines = err.splitlines()
    assert "Error in ASGI Framework" not in err
    assert lines.count("Traceback (most recent call last):") == 1, err
    said = lines.index(line)
    assert lines[said - 1] == "RuntimeError: the runtime is broken"


async def test_an_initialize_semledger_fails_to_open_is_an_internal_error_said_and_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    runtime = _Runtime(monkeypatch)
    answers: list[httpx.Response] = []

    async def client(url: str) -> None:
        async with httpx.AsyncClient(timeout=30) as http:
            answers.append(await http.post(url, json=INITIALIZE))
            runtime.broken = False
            answers.append(await http.post(url, json=INITIALIZE))

    failed = await _served(tmp_path / "log.db", client)
    refused, opened = answers
    assert refused.status_code == 200, refused.text
    assert "mcp-session-id" not in refused.headers
    assert refused.json() == {
        "jsonrpc": "2.0",
        "id": 0,
        "error": {
            "code": -32603,
            "message": (
                "no session: semledger itself failed to open it, not the application:"
                f" {BROKEN} (a bug in semledger; the server's operator has its traceback)"
            ),
        },
    }
    assert opened.status_code == 200, opened.text  # the server went on serving
    assert "mcp-session-id" in opened.headers
    err = capsys.readouterr().err
    line = re.search(r"^semledger: session '([0-9a-f]{32})' could not start: (.*)$", err, re.M)
    assert line is not None, err
    assert line[2] == OPERATOR_TOLD
    _said_once(err, line[0])
    assert err.splitlines()[-1] == f"semledger: stopped serving {COUNTER}; 1 session(s) failed"
    assert failed == 1


async def test_a_resume_semledger_fails_is_a_500_said_and_counted_and_leaves_the_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "log.db"
    session: list[str] = []

    async def first(url: str) -> None:
        async with httpx.AsyncClient(timeout=30) as http:
            opened = await http.post(url, json=INITIALIZE)
            session.append(opened.headers["mcp-session-id"])

    assert await _served(db, first) == 0  # the session ended for now, to be resumed
    (session_id,) = session
    capsys.readouterr()
    runtime = _Runtime(monkeypatch)
    answers: list[httpx.Response] = []

    async def coming_back(url: str) -> None:
        async with httpx.AsyncClient(timeout=30) as http:
            headers = {"mcp-session-id": session_id}
            answers.append(await http.post(url, json=READ, headers=headers))
            runtime.broken = False
            answers.append(await http.post(url, json=READ, headers=headers))

    failed = await _served(db, coming_back)
    refused, resumed = answers
    assert refused.status_code == 500, refused.text
    assert refused.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32000,
            "message": f"session {session_id!r} could not be resumed: {CLIENT_TOLD}",
        },
    }
    assert resumed.status_code == 200, resumed.text  # left resumable, as it was
    assert resumed.json()["result"]["structuredContent"]["ok"] is True
    err = capsys.readouterr().err
    _said_once(err, f"semledger: session {session_id!r} could not be resumed: {OPERATOR_TOLD}")
    assert err.splitlines()[-1] == f"semledger: stopped serving {COUNTER}; 1 session(s) failed"
    assert failed == 1
