"""How `semledger serve` stops while what it waits for does not return: an application
stuck in synchronous code (which blocks the event loop) or a log another process holds.

The first signal says on stderr what the server is waiting for; a second one stops the
process at once, the log keeping every event it had committed."""

from __future__ import annotations

import json
import os
import queue
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import pytest

from semledger.eventlog import ActionRequested, SqliteRecorder

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from stdio_client import http_post

SEMLEDGER = Path(sys.executable).with_name("semledger")
APPS = Path(__file__).parent / "apps"
STUCK_APP = """
import os
import time
from pathlib import Path

import attrs

from semledger.runtime import App, View, button, column


@attrs.frozen
class Press:
    pass


@attrs.frozen
class Stick:
    pass


def update(model: int, message: object) -> int:
    if os.environ.get("PRESS_SLEEP"):  # each press slow: a resume re-runs them
        Path(os.environ["SEMLEDGER_TEST_READY"]).touch()
        time.sleep(float(os.environ["PRESS_SLEEP"]))
    if isinstance(message, Stick):
        Path(os.environ["SEMLEDGER_TEST_READY"]).touch()
        if os.environ["STUCK_HOW"] == "sleep":
            time.sleep(3600)
        while True:
            pass
    return model + 1


def view(model: int) -> View[Press | Stick]:
    return column(
        button(f"Pressed {model}", Press(), semantic_id="press"),
        button("Stick", Stick(), semantic_id="stick"),
    )


app = App(init=lambda: 0, update=update, view=view, name="stuck",
          message_types=(Press, Stick), model_type=int)
"""
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {}},
}
DEADLINE = 30.0
"""Seconds after which a test gives up waiting: only there to avoid a hang."""


def _semledger(*args: str) -> list[str]:
    if SEMLEDGER.exists():
        return [str(SEMLEDGER), *args]
    return [sys.executable, "-m", "semledger", *args]


def _call(request_id: int, semantic_id: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {
            "name": "perform_action",
            "arguments": {
                "target": {"kind": "semantic_id", "id": semantic_id},
                "action": {"kind": "activate"},
                "precondition": {"kind": "latest"},
            },
        },
    }


def _line(message: object) -> bytes:
    return json.dumps(message).encode() + b"\n"


class _Lines:
    """A process's stderr, read by a thread as it comes."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.said: list[str] = []
        self._lines: queue.Queue[str] = queue.Queue()

        def read() -> None:
            for line in stream:
                self._lines.put(line.decode())
            self._lines.put("")

        threading.Thread(target=read, daemon=True).start()

    def until(self, part: str) -> str:
        """The first line from now on holding `part`."""
        deadline = time.monotonic() + DEADLINE
        while True:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                pytest.fail(f"no line holding {part!r} within {DEADLINE:g} s: {self.said}")
            self.said.append(line)
            assert line, f"no line holding {part!r}: {self.said}"
            if part in line:
                return line

    def rest(self) -> str:
        while (line := self._lines.get(timeout=DEADLINE)) != "":
            self.said.append(line)
        return "".join(self.said)


@contextmanager
def _serving(
    tmp_path: Path, app_ref: str, *args: str, how: str = "busy", **more: str
) -> Iterator[tuple[subprocess.Popen[bytes], _Lines]]:
    (tmp_path / "stuck_app.py").write_text(STUCK_APP)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tmp_path), str(APPS)]),
        "SEMLEDGER_TEST_READY": str(tmp_path / "ready"),
        "STUCK_HOW": how,
        **more,
    }
    process = subprocess.Popen(
        _semledger("serve", app_ref, "--db", str(tmp_path / "log.db"), *args),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as at a terminal
    )  # fmt: skip
    assert process.stderr is not None
    try:
        yield process, _Lines(process.stderr)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def _until_stuck(tmp_path: Path) -> None:
    deadline = time.monotonic() + DEADLINE
    while not (tmp_path / "ready").exists():
        assert time.monotonic() < deadline, "the app never got stuck"
        time.sleep(0.05)


def _stopped_by_a_second(
    process: subprocess.Popen[bytes], stderr: _Lines, signum: signal.Signals, waiting_for: str
) -> str:
    """Signal `process` once, expecting a line saying what it waits for, then again; all
    it said."""
    process.send_signal(signum)
    assert waiting_for in stderr.until(f"semledger: {signum.name}: stopping once")
    process.send_signal(signum)
    process.wait(timeout=DEADLINE)
    said = stderr.rest()
    assert process.returncode == -signum, said
    assert f"semledger: {signum.name} again: stopping at once" in said
    assert "Traceback" not in said
    return said


def _pressed(db: Path, session: str) -> list[dict[str, Any]]:
    with SqliteRecorder(db) as recorder:
        return [
            event.target
            for _record, event in recorder.events(session)
            if isinstance(event, ActionRequested)
        ]


@pytest.mark.parametrize(
    ("how", "signum"),
    [("busy", signal.SIGTERM), ("busy", signal.SIGINT), ("sleep", signal.SIGTERM)],
    ids=["busy-SIGTERM", "busy-SIGINT", "sleep-SIGTERM"],
)
def test_a_second_signal_stops_a_stdio_server_whose_app_is_stuck_in_its_update(
    tmp_path: Path, how: str, signum: signal.Signals
) -> None:
    """An update looping (or sleeping) in synchronous code blocks the event loop, which
    the second signal waited for: no number of signals stopped the server, and nothing
    was said. The press answered before is still in the log."""
    with _serving(tmp_path, "stuck_app:app", "--session", "s", how=how) as (process, stderr):
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write(_line(_call(1, "press")))
        process.stdin.flush()
        assert json.loads(process.stdout.readline())["id"] == 1
        process.stdin.write(_line(_call(2, "stick")))
        process.stdin.flush()
        _until_stuck(tmp_path)
        _stopped_by_a_second(process, stderr, signum, "the application")
    assert {"kind": "semantic_id", "id": "press"} in _pressed(tmp_path / "log.db", "s")


def test_a_second_signal_stops_a_stdio_server_whose_app_is_stuck_as_it_starts(
    tmp_path: Path,
) -> None:
    """An init that never returns: the server cannot even start its session."""
    with _serving(tmp_path, "tests_hung:app", "--session", "s") as (process, stderr):
        _until_stuck(tmp_path)
        _stopped_by_a_second(process, stderr, signal.SIGTERM, "the application")


def test_a_signal_while_a_resumed_session_is_re_run_says_it_waits_for_that(
    tmp_path: Path,
) -> None:
    """It said it waited for "the calls in flight", while none was made yet: the resume
    re-runs the session's inputs from the log. The session is then ended by the signal."""
    with _serving(tmp_path, "stuck_app:app", "--session", "s") as (process, stderr):
        assert process.stdin is not None
        process.stdin.write(b"".join(_line(_call(i, "press")) for i in range(1, 7)))
        process.stdin.close()
        assert process.wait(timeout=DEADLINE) == 0, stderr.rest()
    with _serving(tmp_path, "stuck_app:app", "--session", "s", PRESS_SLEEP="0.6") as (
        process,
        stderr,
    ):
        _until_stuck(tmp_path)
        process.send_signal(signal.SIGTERM)
        said = stderr.until("semledger: SIGTERM: stopping once")
        assert "stopping once the session is open (a resumed one re-runs its inputs" in said
        process.wait(timeout=DEADLINE)
        assert "ended: signal SIGTERM" in stderr.rest()
    assert process.returncode == 0


def test_a_second_signal_stops_an_http_server_whose_app_is_stuck_in_its_update(
    tmp_path: Path,
) -> None:
    with _serving(tmp_path, "stuck_app:app", "--http", "127.0.0.1:0") as (process, stderr):
        line = stderr.until("semledger: serving")
        port = int(line.rsplit(":", 1)[1].split("/")[0])
        with socket.create_connection(("127.0.0.1", port), timeout=DEADLINE) as client:
            client.sendall(http_post(INITIALIZE))
            answer = client.recv(65536).decode()
        session = next(
            line.split(":", 1)[1].strip()
            for line in answer.splitlines()
            if line.lower().startswith("mcp-session-id:")
        )  # fmt: skip
        with socket.create_connection(("127.0.0.1", port), timeout=DEADLINE) as stuck:
            stuck.sendall(http_post(_call(1, "stick"), session))
            _until_stuck(tmp_path)
            _stopped_by_a_second(process, stderr, signal.SIGTERM, "the application")


def test_a_stdio_server_stopping_on_a_log_another_process_holds_says_so(
    tmp_path: Path,
) -> None:
    """A call waiting for a log locked by another process held the stop for as long as
    the lock, with nothing said after the signal; a second signal stops it at once."""
    db = tmp_path / "log.db"
    with _serving(tmp_path, "stuck_app:app", "--session", "s") as (process, stderr):
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write(_line(_call(1, "press")))
        process.stdin.flush()
        assert json.loads(process.stdout.readline())["id"] == 1
        holder = sqlite3.connect(db, isolation_level=None)
        try:
            holder.execute("BEGIN IMMEDIATE")  # the server's next write waits for it
            process.stdin.write(_line(_call(2, "press")))
            process.stdin.flush()
            time.sleep(0.5)  # the call is waiting for the log
            _stopped_by_a_second(process, stderr, signal.SIGTERM, "the log")
        finally:
            holder.close()
    assert _pressed(db, "s")[:1] == [{"kind": "semantic_id", "id": "press"}]
