"""Driving `McpHttpApp` in process over ASGI: the counter app served, one request at a time."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import trio

from semledger.actors import LogWriter, SessionRegistry
from semledger.eventlog import SqliteRecorder
from semledger.examples import counter
from semledger.hosts._http import McpHttpApp

COUNTER = "semledger.examples.counter:app"


@asynccontextmanager
async def asgi(db: Path) -> AsyncIterator[McpHttpApp]:
    """The counter app served over ASGI, logging to `db`."""
    with SqliteRecorder(db) as recorder:
        async with trio.open_nursery() as logging:
            writer = await logging.start(LogWriter(recorder).run)
            async with trio.open_nursery() as nursery:
                try:
                    yield McpHttpApp(
                        SessionRegistry(nursery, writer, recorder), counter.app, COUNTER
                    )
                finally:  # a failed assertion too: the sessions would keep the test waiting
                    nursery.cancel_scope.cancel()
            writer.close()


async def request(
    app: McpHttpApp,
    method: str,
    message: object = None,
    session: str | None = None,
    *,
    headers: Sequence[tuple[bytes, bytes]] = (),
    extra: Sequence[tuple[bytes, bytes]] = (),
) -> tuple[int, dict[str, str], Any]:
    """One request to /mcp: `headers`, then the session's, then `extra`. The status, the
    response headers and the JSON answer (None for an empty body)."""
    sent_headers = [
        *headers,
        *([] if session is None else [(b"mcp-session-id", session.encode())]),
        *extra,
    ]
    scope = {"type": "http", "method": method, "path": "/mcp", "headers": sent_headers}
    body = b"" if message is None else json.dumps(message).encode()
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(event: dict[str, Any]) -> None:
        sent.append(event)

    await app(scope, receive, send)
    start, end = sent
    answer = json.loads(end["body"]) if end["body"] else None
    return start["status"], {k.decode(): v.decode() for k, v in start["headers"]}, answer
