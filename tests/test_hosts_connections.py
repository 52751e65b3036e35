"""The log holds who drove a session: each connection's clientInfo, for the audit."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp
import trio
import trio.testing

import semledger.hosts
from semledger.actors import LogWriter, SessionActor
from semledger.eventlog import ActionRequested, AgentConnected, MemoryRecorder, SqliteRecorder
from semledger.examples import counter
from semledger.hosts import Router, RuntimeAgentHost, announce, handle, run_stdio
from semledger.runtime._outcomes import Rejection

COUNTER = "semledger.examples.counter:app"
CLIENT = {"name": "myagent", "version": "9"}


def _initialize(client: Any) -> str:
    params = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client}
    return mcp.line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})


def test_each_run_of_a_session_logs_the_client_that_connected_and_the_audit_names_it(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.db"
    mcp.serve(COUNTER, db, "s", [mcp.perform(1, "counter.increment")])
    mcp.serve(COUNTER, db, "s", [mcp.perform(2, "counter.increment")])  # resumed

    with SqliteRecorder(db) as recorder:
        events = [(r.seq, e) for r, e in recorder.events("s")]
    connected = [(seq, e) for seq, e in events if isinstance(e, AgentConnected)]
    assert [e for _seq, e in connected] == [
        AgentConnected({"name": "semledger-tests", "version": "0"}, "2025-06-18", "stdio", None)
    ] * 2
    # Logged before the action that followed the initialize.
    requests = [seq for seq, e in events if type(e).__name__ == "ActionRequested"]
    assert connected[0][0] < requests[0] < connected[1][0] < requests[1]

    shown = mcp.cli("audit", "s", "--db", str(db), COLUMNS="200")
    assert shown.returncode == 0, shown.stderr
    agents = [line for line in shown.stdout.splitlines() if line.startswith("agent: ")]
    assert len(agents) == 2
    assert agents[0].startswith("agent: semledger-tests 0 (MCP 2025-06-18, over stdio), connected")
    assert agents[0].endswith(f"(event {connected[0][0]})")
    as_json = json.loads(mcp.cli("audit", "s", "--db", str(db), "--json").stdout)
    assert [c["seq"] for c in as_json["connections"]] == [seq for seq, _e in connected]

    replayed = mcp.cli("replay", "s", "--db", str(db))
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "identical — 2 inputs" in replayed.stdout


def test_a_client_info_of_any_shape_is_logged_as_sent_and_the_session_goes_on(
    tmp_path: Path,
) -> None:
    """clientInfo is not validated: an integer msgpack cannot hold would have made the
    session's log unwritable."""
    db = tmp_path / "log.db"
    client = {"name": "odd agent", "build": 2**70, "tags": ["a", None]}
    done = subprocess.run(
        [*mcp.COMMAND, "serve", COUNTER, "--db", str(db), "--session", "odd"],
        input=_initialize(client) + mcp.perform(1, "counter.increment"),
        capture_output=True, text=True, env=mcp.env(), timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert mcp.envelopes(done.stdout)[1]["ok"] is True
    as_json = json.loads(mcp.cli("audit", "odd", "--db", str(db), "--json").stdout)
    [connection] = as_json["connections"]
    assert connection["client"] == {**client, "build": str(2**70)}
    shown = mcp.cli("audit", "odd", "--db", str(db), COLUMNS="300").stdout
    said = '{"name":"odd agent","build":"1180591620717411303424","tags":["a",null]}'
    assert f"agent: {said} (MCP 2025-06-18, over stdio)" in shown


def test_a_client_info_nested_deeper_than_the_log_holds_is_logged_cut_and_the_session_goes_on(
    tmp_path: Path,
) -> None:
    """clientInfo nested 600 levels: logging it raised RecursionError and serve died with a
    traceback before answering the initialize."""
    db = tmp_path / "log.db"
    deep: Any = "x"
    for _ in range(600):
        deep = [deep]
    done = subprocess.run(
        [*mcp.COMMAND, "serve", COUNTER, "--db", str(db), "--session", "deep"],
        input=_initialize({"name": "deep", "x": deep}) + mcp.perform(1, "counter.increment"),
        capture_output=True, text=True, env=mcp.env(), timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert mcp.envelopes(done.stdout)[1]["ok"] is True
    as_json = json.loads(mcp.cli("audit", "deep", "--db", str(db), "--json").stdout)
    [connection] = as_json["connections"]
    assert connection["client"]["name"] == "deep"
    assert "[nested too deep]" in json.dumps(connection["client"]["x"])


def test_a_surface_served_over_mcp_logs_who_connected_too(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    mcp.serve(COUNTER, db, "page", [mcp.perform(1, "counter.increment")], "--adapter", "runtime")
    as_json = json.loads(mcp.cli("audit", "page", "--db", str(db), "--json").stdout)
    [connection] = as_json["connections"]
    assert (connection["client"]["name"], connection["transport"]) == ("semledger-tests", "stdio")


def _lines() -> list[str]:
    return [
        _initialize(CLIENT).rstrip("\n"),
        '{"jsonrpc": "2.0", "method": "notifications/initialized"}',
        mcp.perform(1, "counter.increment").rstrip("\n"),
    ]


def _connected_then_requested(recorder: MemoryRecorder) -> list[object]:
    """The session's connections and actions, in the log's order."""
    kinds = (AgentConnected, ActionRequested)
    return [e for _r, e in recorder.events("own") if isinstance(e, kinds)]


async def test_a_transport_of_ones_own_feeding_handle_logs_the_connection_with_announce() -> (
    None
):
    """Everything the embedding needs is public: handle() answered the initialize, and
    the connection was logged by no public name (announce was only in hosts._dispatch)."""
    recorder = MemoryRecorder()
    async with trio.open_nursery() as nursery:
        writer = await nursery.start(LogWriter(recorder).run)
        actor = SessionActor("own", counter.app, COUNTER, writer, recorder)
        await nursery.start(actor.run)
        router, host = Router(), RuntimeAgentHost(actor)
        announced = False
        for line in _lines():
            replies = await handle(router, host, line)
            if not announced and router.protocol_version is not None:
                announced = True
                await announce(router, host, "tcp", "10.0.0.7:4242")
            assert all("error" not in reply for reply in replies), replies
        nursery.cancel_scope.cancel()
    connected, requested = _connected_then_requested(recorder)
    assert connected == AgentConnected(CLIENT, "2025-06-18", "tcp", "10.0.0.7:4242")
    assert isinstance(requested, ActionRequested)


async def test_run_stdio_over_a_stream_of_ones_own_logs_the_transport_and_peer_given() -> None:
    """run_stdio(receive=, send=) over a socket logged the connection as over stdio."""
    recorder = MemoryRecorder()
    to_loop, loop_input = trio.testing.memory_stream_one_way_pair()
    loop_output, from_loop = trio.testing.memory_stream_one_way_pair()
    await to_loop.send_all("".join(line + "\n" for line in _lines()).encode())
    await to_loop.aclose()
    async with trio.open_nursery() as nursery:
        writer = await nursery.start(LogWriter(recorder).run)
        actor = SessionActor("own", counter.app, COUNTER, writer, recorder)
        await nursery.start(actor.run)
        reason = await run_stdio(
            Router(), RuntimeAgentHost(actor), receive=loop_input, send=loop_output,
            transport="tcp", peer="10.0.0.7:4242",
        )  # fmt: skip
        nursery.cancel_scope.cancel()
    assert reason == "end of input"
    assert await from_loop.receive_some()  # answered
    connected, requested = _connected_then_requested(recorder)
    assert connected == AgentConnected(CLIENT, "2025-06-18", "tcp", "10.0.0.7:4242")
    assert isinstance(requested, ActionRequested)


class _ConnectionsOnly:
    """A host that logs connections and is asked nothing else."""

    def __init__(self) -> None:
        self.connections: list[AgentConnected] = []

    async def read_semantics(self, since: int | None) -> Rejection:
        raise AssertionError("not asked")

    async def perform_action(self, *args: object) -> Rejection:
        raise AssertionError("not asked")

    async def connected(self, connection: AgentConnected) -> None:
        self.connections.append(connection)


async def test_announce_logs_nothing_until_the_router_has_answered_an_initialize() -> None:
    router, host = Router(), _ConnectionsOnly()
    await announce(router, host, "tcp", None)
    assert host.connections == []
    await handle(router, host, _initialize(CLIENT))
    await announce(router, host, "tcp", None)
    assert host.connections == [AgentConnected(CLIENT, "2025-06-18", "tcp", None)]


def test_the_router_s_public_names_and_announce_are_public_names_of_semledger_hosts() -> None:
    """encode_json, parse_json and error_reply were in the router's __all__ only."""
    import semledger.hosts._router as router_module

    public = set(semledger.hosts.__all__)
    assert set(router_module.__all__) <= public
    assert {"announce", "handle", "handle_message", "run_stdio"} <= public
    assert all(hasattr(semledger.hosts, name) for name in public)
