"""Interoperability: the official `mcp` Python SDK client against `semledger serve`.

Nothing on the client side of the wire is ours: the SDK's `ClientSession` spawns the server
over its stdio client, or talks to a server subprocess over its Streamable HTTP client.
Every structured result is validated against the output schema the server listed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

COUNTER = "semledger.examples.counter:app"
SEMLEDGER = Path(sys.executable).with_name("semledger")
URL_LINE = re.compile(r"semledger: serving \S+ at (http://\S+/mcp)")
DIAGNOSTICS = [
    "diagnostics_read_state",
    "diagnostics_read_paint",
    "diagnostics_dispatch_event",
    "diagnostics_dispatch_command",
]


def _command(*args: str) -> list[str]:
    if SEMLEDGER.exists():
        return [str(SEMLEDGER), *args]
    return [sys.executable, "-m", "semledger", *args]


@contextmanager
def http_server(tmp_path: Path, *extra: str) -> Iterator[str]:
    """`semledger serve COUNTER --http 127.0.0.1:0` in a subprocess; yields its /mcp URL."""
    errors = tmp_path / f"http-{time.monotonic_ns()}.err"
    with errors.open("wb") as err:
        process = subprocess.Popen(
            _command("serve", COUNTER, "--db", str(tmp_path / "log.db"),
                     "--http", "127.0.0.1:0", *extra),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
        )
    try:
        deadline = time.monotonic() + 30
        while (match := URL_LINE.search(errors.read_text())) is None:
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the HTTP server did not come up:\n{errors.read_text()}")
            time.sleep(0.05)
        yield match.group(1)
    finally:
        process.terminate()
        assert process.wait(timeout=30) == 0, errors.read_text()


@asynccontextmanager
async def stdio_session(tmp_path: Path, *extra: str) -> AsyncIterator[ClientSession]:
    command, *args = _command("serve", COUNTER, "--db", str(tmp_path / "log.db"), *extra)
    params = StdioServerParameters(command=command, args=args, env=dict(os.environ))
    with (tmp_path / "stdio.err").open("w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            yield session


@asynccontextmanager
async def http_session(tmp_path: Path, *extra: str) -> AsyncIterator[ClientSession]:
    with http_server(tmp_path, *extra) as url:
        async with (
            streamable_http_client(url) as (read, write),
            ClientSession(read, write) as session,
        ):
            yield session


@asynccontextmanager
async def open_session(transport: str, tmp_path: Path, *extra: str) -> AsyncIterator[ClientSession]:
    opener = stdio_session if transport == "stdio" else http_session
    async with opener(tmp_path, *extra) as session:
        yield session


class Agent:
    """Calls tools through the SDK and checks every result against the listed schemas."""

    def __init__(self, session: ClientSession) -> None:
        self.session = session
        self.validators: dict[str, jsonschema.Draft202012Validator] = {}

    async def start(self) -> list[str]:
        init = await self.session.initialize()
        assert init.server_info.name == "semledger"
        listed = await self.session.list_tools()
        for tool in listed.tools:
            assert tool.description
            assert tool.output_schema is not None
            jsonschema.Draft202012Validator.check_schema(tool.input_schema)
            jsonschema.Draft202012Validator.check_schema(tool.output_schema)
            assert tool.input_schema["additionalProperties"] is False
            self.validators[tool.name] = jsonschema.Draft202012Validator(tool.output_schema)
        return [tool.name for tool in listed.tools]

    async def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = await self.session.call_tool(tool, arguments)
        envelope = result.structured_content
        assert isinstance(envelope, dict)
        if tool in self.validators:
            self.validators[tool].validate(envelope)
        assert result.is_error is (not envelope["ok"])
        assert len(result.content) == 1
        assert json.loads(result.content[0].text) == envelope
        return envelope

    async def ok(self, tool: str, arguments: dict[str, Any]) -> Any:
        envelope = await self.call(tool, arguments)
        assert envelope["ok"] is True, envelope
        return envelope["value"]

    async def error(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        envelope = await self.call(tool, arguments)
        assert envelope["ok"] is False, envelope
        error: dict[str, Any] = envelope["error"]
        assert set(error) == {"code", "message", "details"}
        return error


def increment(generation: str) -> dict[str, Any]:
    return {
        "target": {"kind": "semantic_id", "id": "counter.increment"},
        "action": {"kind": "activate"},
        "precondition": {"kind": "exact", "generation": generation},
    }


def by_semantic_id(nodes: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {node["semantic_id"]: node for node in nodes if node["semantic_id"] is not None}


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_sdk_client_reads_acts_and_sees_rejections(transport: str, tmp_path: Path) -> None:
    async with open_session(transport, tmp_path) as session:
        agent = Agent(session)
        assert sorted(await agent.start()) == ["perform_action", "read_semantics"]

        full = await agent.ok("read_semantics", {})
        assert full["kind"] == "full"
        g0 = full["generation"]
        nodes = by_semantic_id(full["nodes"])
        assert nodes["counter.value"]["value"] == "0"
        assert await agent.ok("read_semantics", {"since": g0}) == {
            "kind": "unchanged", "generation": g0,
        }

        first = await agent.ok("perform_action", increment(g0))
        g1 = first["after"]
        assert first == {"before": g0, "after": str(int(g0) + 1), "pending_work": False}
        delta = await agent.ok("read_semantics", {"since": g0})
        assert (delta["kind"], delta["from"], delta["to"]) == ("delta", g0, g1)
        upserted = by_semantic_id(delta["upserted"])
        assert upserted["counter.value"]["value"] == "1"
        assert upserted["counter.value"]["node_id"] == nodes["counter.value"]["node_id"]

        second = await agent.ok("perform_action", increment(g1))
        g2 = second["after"]
        assert (second["before"], g2) == (g1, str(int(g1) + 1))
        after = await agent.ok("read_semantics", {})
        assert after["generation"] == g2
        assert by_semantic_id(after["nodes"])["counter.value"]["value"] == "2"

        stale = await agent.error("perform_action", increment(g0))
        assert stale["code"] == "stale_generation"
        assert stale["details"] == {"expected": g0, "current": g2}

        missing = await agent.error(
            "perform_action",
            {**increment(g2), "target": {"kind": "semantic_id", "id": "counter.nope"}},
        )
        assert missing["code"] == "target_not_found"
        assert missing["details"] == {"target": {"kind": "semantic_id", "id": "counter.nope"}}

        for bad in (
            {**increment(g2), "precondition": {"kind": "exact", "generation": "01"}},
            {**increment(g2), "extra": True},
            {"target": increment(g2)["target"], "action": {"kind": "activate"}},
        ):
            invalid = await agent.error("perform_action", bad)
            assert (invalid["code"], invalid["details"]) == ("invalid_arguments", {})
        invalid = await agent.error("read_semantics", {"since": "-1"})
        assert invalid["code"] == "invalid_arguments"

        unknown = await agent.error("diagnostics_read_state", {})
        assert unknown["code"] == "unknown_tool"
        assert await agent.ok("read_semantics", {"since": g2}) == {
            "kind": "unchanged", "generation": g2,
        }


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_sdk_client_uses_the_diagnostics_profile(transport: str, tmp_path: Path) -> None:
    async with open_session(transport, tmp_path, "--diagnostics") as session:
        agent = Agent(session)
        assert await agent.start() == ["read_semantics", "perform_action", *DIAGNOSTICS]

        state = await agent.ok("diagnostics_read_state", {})
        assert {"layout_passes", "paint_passes", "semantics_passes", "commits", "generation",
                "queue_depth"} <= set(state)
        assert state["generation"] == "1"
        paint = await agent.ok("diagnostics_read_paint", {})
        assert paint["ops"] >= 1

        full = await agent.ok("read_semantics", {})
        button = by_semantic_id(full["nodes"])["counter.increment"]
        frame = button["frame"]
        x = frame["origin"]["x"] + frame["size"]["width"] / 2
        y = frame["origin"]["y"] + frame["size"]["height"] / 2
        for phase in ("Down", "Up"):
            event = {"kind": "Pointer", "position": {"x": x, "y": y}, "phase": phase}
            handled = await agent.ok("diagnostics_dispatch_event", {"event": event})
            assert handled["handled"] is True
            assert handled["node_id"] == button["node_id"]
        read = await agent.ok("read_semantics", {})
        assert by_semantic_id(read["nodes"])["counter.value"]["value"] == "1"
        assert by_semantic_id(read["nodes"])["counter.increment"]["state"]["focused"] is True

        command = await agent.ok("diagnostics_dispatch_command", {"intent": "Activate"})
        assert command["handled"] is True
        assert int(command["after"]) == int(command["before"]) + 1
        read = await agent.ok("read_semantics", {})
        assert by_semantic_id(read["nodes"])["counter.value"]["value"] == "2"
        assert (await agent.ok("diagnostics_read_state", {}))["generation"] == read["generation"]

        bad = await agent.error("diagnostics_dispatch_command", {"intent": "Explode"})
        assert bad["code"] == "invalid_arguments"


async def test_sdk_client_is_told_why_an_http_request_is_refused(tmp_path: Path) -> None:
    """The server's reason rode in a body of its own shape, which the SDK does not read: its
    user saw "Server returned an error response" for a wrong token, a stopping server, a
    body too large, and a bare "Session terminated" for a session ended for good."""
    from mcp.shared.exceptions import MCPError

    with http_server(tmp_path, "--token", "s3cret") as url:
        async with (
            streamable_http_client(url) as (read, write),
            ClientSession(read, write) as session,
        ):
            with pytest.raises(MCPError, match=r"^missing or wrong bearer token$"):
                await session.initialize()


async def test_sdk_client_comes_back_to_its_session_on_a_new_server_as_the_readme_says(
    tmp_path: Path,
) -> None:
    """The README said `terminate_on_close=False` lets a client come back later, but not how
    with an SDK that keeps the session id to itself: read it from the response header with
    the HTTP client's hook, send it back as that client's header, without `initialize`."""
    import httpx2

    ids: list[str] = []

    async def remember(response: httpx2.Response) -> None:
        if "mcp-session-id" in response.headers:
            ids.append(response.headers["mcp-session-id"])

    with http_server(tmp_path, "--token", "s3cret") as url:
        token = {"Authorization": "Bearer s3cret"}
        async with (
            httpx2.AsyncClient(headers=token, event_hooks={"response": [remember]}) as http,
            streamable_http_client(url, http_client=http, terminate_on_close=False) as (r, w),
            ClientSession(r, w) as session,
        ):
            agent = Agent(session)
            await agent.start()
            assert (await agent.ok("perform_action", increment("1")))["after"] == "2"
    with http_server(tmp_path, "--token", "s3cret") as url:  # a new server, the same log
        async with (
            httpx2.AsyncClient(headers={**token, "Mcp-Session-Id": ids[0]}) as http,
            streamable_http_client(url, http_client=http) as (r, w),
            ClientSession(r, w) as session,
        ):
            read = (await session.call_tool("read_semantics", {})).structured_content
            assert read is not None
            assert read["value"]["generation"] == "2", read
