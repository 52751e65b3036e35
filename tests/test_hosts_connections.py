"""The log holds who drove a session: each connection's clientInfo, for the audit."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp

from semledger.eventlog import AgentConnected, SqliteRecorder

COUNTER = "semledger.examples.counter:app"


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


def test_a_surface_served_over_mcp_logs_who_connected_too(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    mcp.serve(COUNTER, db, "page", [mcp.perform(1, "counter.increment")], "--adapter", "runtime")
    as_json = json.loads(mcp.cli("audit", "page", "--db", str(db), "--json").stdout)
    [connection] = as_json["connections"]
    assert (connection["client"]["name"], connection["transport"]) == ("semledger-tests", "stdio")
