"""`semledger serve --adapter web --url URL`: a real page in Chromium, served to agents through
the same two tools, logged and audited like a runtime session."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from semledger.adapters._cases_web import serve_directory
from semledger.eventlog import SqliteRecorder, SurfaceCalled
from semledger.replay import audit, verify

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp


def _node(full: dict[str, Any], **match: Any) -> dict[str, Any]:
    return next(n for n in full["nodes"] if all(n.get(k) == v for k, v in match.items()))


def test_an_agent_signs_in_on_a_web_page_and_the_session_is_audited(tmp_path: Path) -> None:
    db = tmp_path / "web.db"
    with serve_directory() as base:
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "semledger",
                "serve",
                "--adapter",
                "web",
                "--url",
                f"{base}login.html",
                "--db",
                str(db),
                "--session",
                "web-1",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

        def ask(line: str) -> dict[str, Any]:
            return mcp.ask(server, line)

        try:
            full = ask(mcp.call(1, "read_semantics", {}))["value"]
            assert full["kind"] == "full"
            field = _node(full, role="text_field", label="Username")
            button = _node(full, role="button", label="Sign in")
            generation = full["generation"]
            typed = ask(
                mcp.call(
                    2,
                    "perform_action",
                    {
                        "target": {"kind": "node_id", "id": field["node_id"]},
                        "action": {"kind": "set_text", "value": "ada"},
                        "precondition": {"kind": "exact", "generation": generation},
                    },
                )
            )
            assert typed["ok"], typed
            stale = ask(
                mcp.call(
                    3,
                    "perform_action",
                    {
                        "target": {"kind": "node_id", "id": button["node_id"]},
                        "action": {"kind": "activate"},
                        "precondition": {"kind": "exact", "generation": generation},
                    },
                )
            )
            assert stale["error"]["code"] == "stale_generation"
            signed_in = ask(
                mcp.call(
                    4,
                    "perform_action",
                    {
                        "target": {"kind": "node_id", "id": button["node_id"]},
                        "action": {"kind": "activate"},
                        "precondition": {"kind": "latest"},
                    },
                )
            )
            assert signed_in["ok"], signed_in
            after = ask(mcp.call(5, "read_semantics", {}))["value"]
            assert any("ada" in (n["label"] or "") + (n["value"] or "") for n in after["nodes"])
        finally:
            assert server.stdin is not None
            server.stdin.close()
            server.wait(timeout=60)
    assert server.returncode == 0, server.stderr.read() if server.stderr else ""
    recorder = SqliteRecorder(db)
    calls = [e for _r, e in recorder.events("web-1") if isinstance(e, SurfaceCalled)]
    assert {"open", "snapshot", "act"} <= {c.method for c in calls}
    assert any(c.snapshot_hash for c in calls if c.method == "snapshot")
    entries = audit(recorder, "web-1")
    assert [(e.request_id, e.action["kind"], e.outcome) for e in entries] == [
        (1, "set_text", "receipt"), (2, "activate", "stale_generation"), (3, "activate", "receipt"),
    ]  # fmt: skip
    assert verify(recorder, "web-1").ok
