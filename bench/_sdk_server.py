"""The peer of ``semledger serve`` in bench/mcp.py: the same runtime behind the official SDK.

A low-level ``mcp.server.Server`` on the SDK's stdio transport, run by anyio on its Trio
backend so semledger's Trio actors run unchanged. Its two tools call the same session
machinery as ``semledger serve`` (a ``SessionActor`` behind a ``LogWriter`` over a durable
``SqliteRecorder``, through ``RuntimeAgentHost``) and answer with the same envelopes; only
the MCP layer (framing, JSON-RPC, validation, dispatch) is the SDK's.

    python bench/_sdk_server.py APP --db PATH [--session NAME]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

# Run as a script, this folder comes first on sys.path, and its bench/mcp.py would shadow
# the SDK's ``mcp`` package.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import anyio  # noqa: E402
import mcp_types as types  # noqa: E402
import trio  # noqa: E402
from mcp.server import Server  # noqa: E402
from mcp.server.stdio import stdio_server  # noqa: E402

from semledger.actors import LogWriter, SessionActor, SessionRegistry  # noqa: E402
from semledger.eventlog import SqliteRecorder  # noqa: E402
from semledger.hosts import DEFAULT_TOOLS, RuntimeAgentHost, new_session_name  # noqa: E402
from semledger.replay import load_app  # noqa: E402
from semledger.runtime import ErrorCode, Receipt, Rejection  # noqa: E402
from semledger.runtime._wire import (  # noqa: E402
    WireError,
    decode_perform_action,
    decode_read_arguments,
    encode_read,
    encode_receipt,
    encode_rejection,
)


def _failed(rejection: Rejection) -> dict[str, Any]:
    return {"ok": False, "error": encode_rejection(rejection)}


def _result(envelope: dict[str, Any]) -> types.CallToolResult:
    text = json.dumps(envelope, ensure_ascii=False, separators=(",", ":"))
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=envelope,
        is_error=not envelope["ok"],
    )


async def _envelope(host: RuntimeAgentHost, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    try:
        if name == "read_semantics":
            since = decode_read_arguments(arguments)
            read = await host.read_semantics(since)
            return (
                _failed(read)
                if isinstance(read, Rejection)
                else {"ok": True, "value": encode_read(read)}
            )
        if name == "perform_action":
            target, action, precondition = decode_perform_action(arguments)
            outcome = await host.perform_action(target, action, precondition)
            if isinstance(outcome, Receipt):
                return {"ok": True, "value": encode_receipt(outcome)}
            return _failed(outcome)
    except WireError as exc:
        return _failed(Rejection(ErrorCode.INVALID_ARGUMENTS, str(exc)))
    return _failed(Rejection(ErrorCode.UNKNOWN_TOOL, f"unknown tool: {name}"))


async def serve(app_ref: str, db: str, session: str | None) -> None:
    app = load_app(app_ref)
    recorder = SqliteRecorder(db, synchronous="FULL")
    name = session or new_session_name("sdk")
    tools = [types.Tool.model_validate(tool.to_wire()) for tool in DEFAULT_TOOLS]
    try:
        async with trio.open_nursery() as nursery:
            writer = await nursery.start(LogWriter(recorder).run)
            registry = SessionRegistry(nursery, writer, recorder)
            actor = await registry.open(
                name, lambda: SessionActor(name, app, app_ref, writer, recorder)
            )
            host = RuntimeAgentHost(actor)

            async def list_tools(
                _ctx: Any, _params: types.PaginatedRequestParams | None
            ) -> types.ListToolsResult:
                return types.ListToolsResult(tools=tools)

            async def call_tool(
                _ctx: Any, params: types.CallToolRequestParams
            ) -> types.CallToolResult:
                return _result(await _envelope(host, params.name, params.arguments or {}))

            server: Server[Any] = Server(
                "semledger-sdk-peer", on_list_tools=list_tools, on_call_tool=call_tool
            )
            async with stdio_server() as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())
            with trio.CancelScope(shield=True):
                await registry.close(name, "end of input")
                writer.close()
    finally:
        recorder.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("app", metavar="APP")
    parser.add_argument("--db", required=True)
    parser.add_argument("--session")
    args = parser.parse_args()
    anyio.run(serve, args.app, args.db, args.session, backend="trio")


if __name__ == "__main__":
    main()
