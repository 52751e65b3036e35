"""Talking to `semledger serve` over stdio from tests: JSON-RPC lines in, envelopes out."""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

APPS = Path(__file__).resolve().parent
ROOT = APPS.parent.parent
COMMAND = (sys.executable, "-m", "semledger")


def env(**extra: str) -> dict[str, str]:
    """The environment of a child: tests/apps importable, plus `extra`."""
    out = dict(os.environ)
    out["PYTHONPATH"] = os.pathsep.join(p for p in (str(APPS), out.get("PYTHONPATH")) if p)
    out.update(extra)
    return out


def http_post(message: object, session: str | None = None) -> bytes:
    """`message` as a raw HTTP request to /mcp, for a test that writes to the socket itself."""
    body = json.dumps(message).encode()
    named = b"" if session is None else f"Mcp-Session-Id: {session}\r\n".encode()
    return (
        b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        + named
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
    )


def refusal(body: Any) -> str:
    """The reason an HTTP refusal's body gives: a JSON-RPC error with a null id, which MCP
    clients show their user."""
    assert isinstance(body, dict), body
    assert (body.get("jsonrpc"), body.get("id")) == ("2.0", None), body
    message = body["error"]["message"]
    assert isinstance(message, str), body
    return message


def cli(*args: str, stdin: str = "", **extra: str) -> subprocess.CompletedProcess[str]:
    """Run ``semledger ARGS`` to completion, given `stdin` (a server's requests; it reads
    to the end of its input, and never waits on the test runner's)."""
    return subprocess.run(
        [*COMMAND, *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env(**extra),
        timeout=120,
        check=False,
    )


def cli_in_process(*args: str, columns: int | None = None) -> subprocess.CompletedProcess[str]:
    """``semledger ARGS`` run by this process, answered as `cli` answers.

    For tests of what a command prints and its exit status: a child spends half a second on
    imports before it reads an argument. What only a process shows (its signals, its streams'
    encoding, PYTHONHASHSEED, apps found on its PYTHONPATH or in its working directory) needs
    `cli`. `columns` is the terminal width a child would be given as COLUMNS. The command
    must leave SIGINT's handler and the "semledger" logger as it found them; the status
    lines `serve` gives that logger, kept for the process's next serve, are taken off again.
    """
    from semledger._cli import main

    logger = logging.getLogger("semledger")
    interrupt, handlers, level = signal.getsignal(signal.SIGINT), logger.handlers[:], logger.level
    out, err = io.StringIO(), io.StringIO()
    width = os.environ.pop("COLUMNS", None)
    if columns is not None:
        os.environ["COLUMNS"] = str(columns)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status: object = main(list(args))
            except SystemExit as exit:  # argparse's usage errors and --help
                status = exit.code
    finally:
        os.environ.pop("COLUMNS", None)
        if width is not None:
            os.environ["COLUMNS"] = width
        if args[:1] == ("serve",):
            logger.handlers[:] = handlers
            logger.setLevel(level)
    left = (signal.getsignal(signal.SIGINT), logger.handlers, logger.level)
    assert left == (interrupt, handlers, level), f"{args} changed SIGINT or the logger"
    if status is None:
        status = 0
    elif not isinstance(status, int):  # sys.exit("message") prints it and exits 1
        err.write(f"{status}\n")
        status = 1
    return subprocess.CompletedProcess([*COMMAND, *args], status, out.getvalue(), err.getvalue())


def line(message: dict[str, Any]) -> str:
    return json.dumps(message) + "\n"


def initialize(request_id: int = 0) -> str:
    params = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "semledger-tests", "version": "0"},
    }
    return line(
        {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}
    ) + line({"jsonrpc": "2.0", "method": "notifications/initialized"})


def call(request_id: int, tool: str, arguments: dict[str, Any]) -> str:
    return line(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        }
    )


def read(request_id: int, since: str | None = None) -> str:
    return call(request_id, "read_semantics", {} if since is None else {"since": since})


def perform(
    request_id: int,
    semantic_id: str,
    kind: str = "activate",
    generation: str | None = None,
    **payload: Any,
) -> str:
    precondition = (
        {"kind": "latest"} if generation is None else {"kind": "exact", "generation": generation}
    )
    return call(
        request_id,
        "perform_action",
        {
            "target": {"kind": "semantic_id", "id": semantic_id},
            "action": {"kind": kind, **payload},
            "precondition": precondition,
        },
    )


def envelopes(stdout: str) -> dict[int, dict[str, Any]]:
    """Every complete tool-call answer on `stdout`, by JSON-RPC id (the envelope itself)."""
    out: dict[int, dict[str, Any]] = {}
    for text in stdout.splitlines():
        try:
            message = json.loads(text)
        except json.JSONDecodeError:
            continue
        result = message.get("result")
        if isinstance(result, dict) and "structuredContent" in result:
            out[message["id"]] = result["structuredContent"]
    return out


def serve(
    app: str, db: Path, session: str, requests: Sequence[str], *extra_args: str, **extra_env: str
) -> dict[int, dict[str, Any]]:
    """Serve `app` as `session` for the given request lines, to the end of input."""
    done = subprocess.run(
        [*COMMAND, "serve", app, "--db", str(db), "--session", session, *extra_args],
        input=initialize() + "".join(requests),
        capture_output=True,
        text=True,
        env=env(**extra_env),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return envelopes(done.stdout)


def start(app: str, db: Path, session: str) -> subprocess.Popen[str]:
    """`semledger serve` of `app` as `session`, running: its pipes are text, for `ask`."""
    return subprocess.Popen(
        [*COMMAND, "serve", app, "--db", str(db), "--session", session],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env(),
    )


def ask(server: subprocess.Popen[str], request: str) -> dict[str, Any]:
    """Send one request line to a running `semledger serve` and read its reply: the tool
    call's envelope (``structuredContent``)."""
    assert server.stdin is not None
    assert server.stdout is not None
    server.stdin.write(request if request.endswith("\n") else request + "\n")
    server.stdin.flush()
    reply: dict[str, Any] = json.loads(server.stdout.readline())
    assert "result" in reply, reply
    envelope: dict[str, Any] = reply["result"]["structuredContent"]
    return envelope


def at_a_terminal(
    *args: str, columns: int, stderr: int | None = None
) -> tuple[int, str]:
    """Run ``semledger ARGS`` with a terminal `columns` wide as its standard output (and its
    standard error, unless `stderr` says where else it goes); its exit status and what it
    wrote to the terminal, its escapes left in."""
    import pty

    leader, follower = pty.openpty()
    with subprocess.Popen(
        [*COMMAND, *args], stdin=subprocess.DEVNULL, stdout=follower,
        stderr=follower if stderr is None else stderr,
        env=env(COLUMNS=str(columns), TERM="xterm-256color"),
    ) as running:  # fmt: skip
        os.close(follower)
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the child is gone and the terminal closed
                break
            if not chunk:
                break
            shown += chunk
        running.wait(timeout=60)
    os.close(leader)
    return running.returncode, shown.decode()
