"""`semledger serve --adapter atspi --launch CMD`: a real GTK application, on a private
desktop, brought to agents over MCP and logged like every other surface."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from semledger.adapters._atspi_desktop import (
    GTK_FIXTURE,
    SYSTEM_PYTHON,
    PrivateDesktop,
    require,
    require_gtk_python,
)
from semledger.eventlog import SessionEnded, SqliteRecorder, SurfaceCalled
from semledger.replay import audit, verify

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp

LATEST = {"kind": "latest"}


def _serve_fixture(desktop: PrivateDesktop, db: Path, session: str) -> subprocess.Popen[str]:
    """`semledger serve --adapter atspi` of the GTK fixture app on `desktop`."""
    launch = shlex.join([SYSTEM_PYTHON, str(GTK_FIXTURE)])
    return subprocess.Popen(
        [
            *(sys.executable, "-m", "semledger", "serve", "--adapter", "atspi"),
            *("--launch", launch, "--db", str(db), "--session", session),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **desktop.env},
    )


def _launched_by(server: subprocess.Popen[str]) -> list[int]:
    """The pids of the GTK fixture apps `server` launched."""
    found = subprocess.run(
        ["pgrep", "-P", str(server.pid), "-f", GTK_FIXTURE.name],
        capture_output=True,
        text=True,
    )
    return [int(pid) for pid in found.stdout.split()]


def _running(pid: int) -> bool:
    """Whether `pid` is a process that has not exited (a zombie has)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_an_agent_clicks_and_types_a_redacted_password_through_serve_atspi(tmp_path: Path) -> None:
    require({SYSTEM_PYTHON: "python3"})
    require_gtk_python()
    db = tmp_path / "desktop.db"
    with PrivateDesktop() as desktop:
        server = _serve_fixture(desktop, db, "gtk-1")

        def ask(line: str) -> dict[str, Any]:
            return mcp.ask(server, line)

        try:
            full = ask(mcp.call(1, "read_semantics", {}))["value"]
            greet = next(n for n in full["nodes"] if n["label"] == "Greet")
            done = ask(
                mcp.call(
                    2,
                    "perform_action",
                    {
                        "target": {"kind": "node_id", "id": greet["node_id"]},
                        "action": {"kind": "activate"},
                        "precondition": {"kind": "exact", "generation": full["generation"]},
                    },
                )
            )
            assert done["ok"], done
            after = ask(mcp.call(3, "read_semantics", {"since": full["generation"]}))["value"]
            assert after["kind"] == "delta", after
            password = next(n for n in full["nodes"] if n["semantic_id"] == "password")
            typed = ask(
                mcp.call(
                    4,
                    "perform_action",
                    {
                        "target": {"kind": "node_id", "id": password["node_id"]},
                        "action": {"kind": "set_text", "value": "hunter2-secret"},
                        "precondition": {"kind": "latest"},
                    },
                )
            )
            assert typed["ok"], typed
        finally:
            assert server.stdin is not None
            server.stdin.close()
            server.wait(timeout=60)
    assert server.returncode == 0, server.stderr.read() if server.stderr else ""
    recorder = SqliteRecorder(db)
    calls = [e for _r, e in recorder.events("gtk-1") if isinstance(e, SurfaceCalled)]
    assert {"open", "snapshot", "act", "close"} <= {c.method for c in calls}
    assert [e for e in audit(recorder, "gtk-1") if e.outcome == "receipt"]
    assert verify(recorder, "gtk-1").ok
    assert b"hunter2-secret" not in db.read_bytes()  # a GTK password entry is redacted


def test_an_application_that_dies_ends_its_session_with_why(tmp_path: Path) -> None:
    """The app is killed under a served session: the agent's next calls are host_closed
    and logged as such, the server says why and exits 1, and the log ends the session with
    the surface's reason (it said "end of input", as if the client had hung up)."""
    require({SYSTEM_PYTHON: "python3"})
    require_gtk_python()
    db = tmp_path / "desktop.db"
    with PrivateDesktop() as desktop:
        server = _serve_fixture(desktop, db, "gtk-dies")
        try:
            assert mcp.ask(server, mcp.call(1, "read_semantics", {}))["ok"]
            [app] = _launched_by(server)
            os.kill(app, signal.SIGKILL)
            closed = mcp.ask(server, mcp.call(2, "read_semantics", {}))
            assert closed["error"]["code"] == "host_closed", closed
            target = {"kind": "semantic_id", "id": "greet"}
            after = {"target": target, "action": {"kind": "activate"}, "precondition": LATEST}
            late = mcp.ask(server, mcp.call(3, "perform_action", after))
            assert late["error"]["code"] == "host_closed", late
        finally:
            assert server.stdin is not None
            server.stdin.close()
            server.wait(timeout=60)
    stderr = server.stderr.read() if server.stderr else ""
    assert server.returncode == 1, stderr
    assert "its surface's session ended" in stderr
    recorder = SqliteRecorder(db)
    # The agent's call after the death is on the record, with what it was answered.
    assert [(e.target, e.outcome) for e in audit(recorder, "gtk-dies")] == [
        (target, "host_closed")
    ]
    [ended] = [e for _r, e in recorder.events("gtk-dies") if isinstance(e, SessionEnded)]
    assert "its surface's session ended" in ended.reason, ended
    assert "semledger-gtk-fixture was killed by SIGKILL" in ended.reason, ended


def test_a_launch_that_fails_is_named_with_what_the_application_said(tmp_path: Path) -> None:
    """The command as given and the last of its stderr, in the one line `serve` prints;
    and a window that never comes is waited for as long as `--timeout` says."""
    with PrivateDesktop() as desktop:

        def serve(launch: str, *more: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [
                    *(sys.executable, "-m", "semledger", "serve", "--adapter", "atspi"),
                    *("--launch", launch, "--db", str(tmp_path / "log.db"), *more),
                ],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                env={**os.environ, **desktop.env},
                timeout=60,
            )

        failed = serve("sh -c 'echo Gtk-WARNING: cannot open display >&2; exit 3'")
        assert failed.returncode == 2
        assert failed.stderr.splitlines()[-1] == (
            "semledger: adapter 'atspi' could not open: sh -c 'echo Gtk-WARNING: cannot open"
            " display >&2; exit 3' exited with status 3 before it owned a window; it said:"
            " Gtk-WARNING: cannot open display"
        )
        windowless = serve("sleep 30", "--timeout", "0.5")
        assert windowless.returncode == 2
        assert windowless.stderr.splitlines()[-1].endswith(
            "sleep 30 did not show a window on the AT-SPI registry within 0.5s"
        )


def test_a_killed_server_takes_the_application_it_launched_with_it(tmp_path: Path) -> None:
    """The app runs in a process group of its own, so nothing ended it when the server was
    killed: it ran on, unowned, and resuming the session launched a second copy."""
    require({SYSTEM_PYTHON: "python3"})
    require_gtk_python()
    with PrivateDesktop() as desktop:
        server = _serve_fixture(desktop, tmp_path / "desktop.db", "gtk-killed")
        try:
            assert mcp.ask(server, mcp.call(1, "read_semantics", {}))["ok"]
            [app] = _launched_by(server)
        finally:
            server.kill()
            server.wait(timeout=60)
        deadline = time.monotonic() + 10
        while _running(app) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _running(app)


STUBBORN_APP = """
import signal
import gi
gi.require_version("Gtk", "3.0")
from gi.repository import Gtk
signal.signal(signal.SIGTERM, signal.SIG_IGN)
window = Gtk.Window(title="Stubborn")
window.connect("destroy", Gtk.main_quit)
window.add(Gtk.Button(label={label!r}))
window.show_all()
Gtk.main()
"""
"""A GTK app that ignores SIGTERM (as one busy in a modal loop does), with one button."""


@pytest.mark.parametrize(
    ("button", "grace"),
    [("Hello", 2.0), ("Quit", 4.0)],
    ids=["no-quit-control", "a-quit-control-that-does-nothing"],
)
def test_an_mcp_clients_shutdown_leaves_serve_time_to_log_the_sessions_end(
    tmp_path: Path, button: str, grace: float
) -> None:
    """The MCP SDK's stdio client closes stdin, waits 2 s, sends SIGTERM to the server's
    process group, waits 2 s more and sends SIGKILL. Closing waited 3 s for a quit even
    when the app had no Quit control, then 3 s after SIGTERM: the server was killed before
    it logged the session's end. Without a Quit control, SIGTERM comes at once."""
    require({SYSTEM_PYTHON: "python3"})
    require_gtk_python()
    app = tmp_path / "stubborn.py"
    app.write_text(STUBBORN_APP.format(label=button))
    db = tmp_path / "desktop.db"
    with PrivateDesktop() as desktop:
        server = subprocess.Popen(
            [
                *(sys.executable, "-m", "semledger", "serve", "--adapter", "atspi"),
                *("--launch", shlex.join([SYSTEM_PYTHON, str(app)])),
                *("--db", str(db), "--session", "stubborn"),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **desktop.env},
            start_new_session=True,
        )
        try:
            assert server.stdin is not None
            assert server.stdout is not None
            server.stdin.write(mcp.initialize())
            server.stdin.flush()
            assert "result" in json.loads(server.stdout.readline())
            assert mcp.ask(server, mcp.call(1, "read_semantics", {}))["ok"]
        finally:
            assert server.stdin is not None
            server.stdin.close()
        started = time.monotonic()
        try:
            server.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(timeout=2.0)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait()
        took = time.monotonic() - started
    stderr = server.stderr.read() if server.stderr else ""
    assert server.returncode == 0, stderr
    assert took < grace, (took, stderr)
    ended = [e for _r, e in SqliteRecorder(db).events("stubborn") if isinstance(e, SessionEnded)]
    assert len(ended) == 1, stderr


def test_the_readmes_recipe_without_a_desktop_writes_only_json_rpc_to_stdout(
    tmp_path: Path,
) -> None:
    """`Xvfb :99 & DISPLAY=:99 dbus-run-session -- semledger serve --adapter atspi ...`:
    the new session bus started the AT-SPI bus launcher on its own stdout, which is the
    MCP pipe, and the registry the launcher started printed a banner there ahead of the
    first answer."""
    require({SYSTEM_PYTHON: "python3", "dbus-run-session": "dbus-daemon"})
    require_gtk_python()
    with PrivateDesktop(bus=False) as display:
        done = subprocess.run(
            [
                *("dbus-run-session", "--", sys.executable, "-m", "semledger", "serve"),
                *("--adapter", "atspi", "--launch", shlex.join([SYSTEM_PYTHON, str(GTK_FIXTURE)])),
                *("--db", str(tmp_path / "desktop.db")),
            ],
            input=mcp.initialize() + mcp.call(1, "read_semantics", {}),
            capture_output=True,
            text=True,
            env={**os.environ, **display.env},
            timeout=60,
        )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line for line in lines if not line.startswith("{")] == []
    assert [json.loads(line).get("id") for line in lines] == [0, 1]
