"""How `semledger serve` stops: on signals (SIGHUP included, a second one at once), with
requests arriving as an HTTP server stops, and when a session's end cannot be logged."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from hypercorn.config import Config
from hypercorn.trio import run as hypercorn_run
from hypercorn.trio.tcp_server import TCPServer
from hypercorn.trio.worker_context import WorkerContext
from hypercorn.typing import ConnectionState
from hypercorn.utils import wrap_app

from semledger.eventlog import (
    ActionRequested,
    LogMovedError,
    NewEvent,
    SessionEnded,
    SqliteRecorder,
    StoredEvent,
)
from semledger.examples import counter
from semledger.hosts import RuntimeAgentHost, _http, serve_http, serve_stdio
from semledger.hosts._http import McpHttpApp
from semledger.replay import audit_report

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from asgi_mcp import asgi as _asgi
from asgi_mcp import request as _request
from stdio_client import http_post, refusal

COUNTER = "semledger.examples.counter:app"
SEMLEDGER = Path(sys.executable).with_name("semledger")
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {}},
}
INCREMENT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {
        "name": "perform_action",
        "arguments": {
            "target": {"kind": "semantic_id", "id": "counter.increment"},
            "action": {"kind": "activate"},
            "precondition": {"kind": "latest"},
        },
    },
}


def _semledger(*args: str) -> list[str]:
    if SEMLEDGER.exists():
        return [str(SEMLEDGER), *args]
    return [sys.executable, "-m", "semledger", *args]


def _line(message: object) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _events(db: Path, session: str) -> list[Any]:
    with SqliteRecorder(db) as recorder:
        return [event for _record, event in recorder.events(session)]


def test_sighup_ends_a_stdio_session_on_the_record(tmp_path: Path) -> None:
    """A terminal that goes away sends SIGHUP: the session ends as on SIGTERM."""
    db = tmp_path / "log.db"
    process = subprocess.Popen(
        _semledger("serve", COUNTER, "--db", str(db), "--session", "hung-up"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    try:
        process.stdin.write(_line(INCREMENT))
        process.stdin.flush()
        reply = json.loads(process.stdout.readline())
        assert reply["result"]["structuredContent"]["ok"] is True
        process.send_signal(signal.SIGHUP)
        process.wait(timeout=30)  # stdin left open: its end would be a reason to stop too
        assert process.stderr is not None
        stderr = process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stdin.close()
    assert process.returncode == 0, stderr.decode()
    assert "session 'hung-up' ended: signal SIGHUP" in stderr.decode()
    assert _events(db, "hung-up")[-1] == SessionEnded("signal SIGHUP")


@contextmanager
def _http_server(db: Path) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    process = subprocess.Popen(
        _semledger("serve", COUNTER, "--db", str(db), "--http", "127.0.0.1:0"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert process.stderr is not None
    try:
        line = process.stderr.readline().decode()
        assert "semledger: serving" in line, line + process.stderr.read().decode()
        yield process, int(line.rsplit(":", 1)[1].split("/")[0])
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_sighup_stops_an_http_server_as_sigterm_does(tmp_path: Path) -> None:
    with _http_server(tmp_path / "log.db") as (process, _port):
        process.send_signal(signal.SIGHUP)
        _, stderr = process.communicate(timeout=30)
    assert process.returncode == 0, stderr.decode()
    assert stderr.decode().splitlines()[-1].startswith("semledger: stopped serving")


def _refused(port: int) -> bool:
    """Whether the server no longer takes connections: refused, reset as its listener
    closes, or left unaccepted (the stopping server's window is short, so ask briefly)."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
    except (ConnectionRefusedError, ConnectionResetError, TimeoutError):
        return True
    return False


def test_a_second_signal_stops_a_stopping_http_server_at_once_without_a_traceback(
    tmp_path: Path,
) -> None:
    """A call waiting for the log (another process holds it) keeps the server stopping,
    for up to its grace period; a second signal then ends it as over stdio, with one line."""
    db = tmp_path / "log.db"
    with _http_server(db) as (process, port):
        session = _initialized(port)
        holder = sqlite3.connect(db, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # the server's next write waits for it
        stuck = socket.create_connection(("127.0.0.1", port))
        stuck.sendall(http_post(INCREMENT, session))
        time.sleep(0.5)  # the call is waiting for the log
        process.send_signal(signal.SIGINT)
        deadline = time.monotonic() + 30
        while not _refused(port):  # the first signal was taken: it no longer listens
            assert time.monotonic() < deadline
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30)
        stuck.close()
        holder.close()
    assert process.returncode == -signal.SIGINT, stderr.decode()
    assert "SIGINT again: stopping at once" in stderr.decode()
    assert "Traceback" not in stderr.decode()


def _initialized(port: int) -> str:
    """A new session's id."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as client:
        client.sendall(http_post(INITIALIZE))
        answer = client.recv(65536).decode()
    (session,) = re.findall(r"(?im)^mcp-session-id: (\w+)", answer)
    return str(session)


def test_a_request_whose_body_never_comes_does_not_hold_up_a_stop_and_is_a_503(
    tmp_path: Path,
) -> None:
    """Headers then one byte of a 100-byte body: SIGTERM waited for the rest for the whole
    grace period (30 s), and the client got no answer."""
    with _http_server(tmp_path / "log.db") as (process, port):
        stuck = socket.create_connection(("127.0.0.1", port), timeout=30)
        stuck.sendall(http_post(INITIALIZE)[:-1].replace(b"Length: ", b"Length: 1"))
        time.sleep(0.5)  # the body is being read
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=60)
        took = time.monotonic() - started
        answer = stuck.recv(65536)
        stuck.close()
    assert process.returncode == 0, stderr.decode()
    assert took < 10, took
    assert answer.startswith(b"HTTP/1.1 503 "), answer
    assert b"\r\nconnection: close\r\n" in answer.lower()


# --- in process: the ASGI app and the stdio composition root -----------------------------


class _FullDisk:
    """Makes every append to the log fail once ``full`` is set, as a full disk does."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.full = False
        append = SqliteRecorder.append

        def failing(recorder: SqliteRecorder, events: Sequence[NewEvent]) -> list[StoredEvent]:
            if self.full:
                raise sqlite3.OperationalError("database or disk is full")
            return append(recorder, events)

        monkeypatch.setattr(SqliteRecorder, "append", failing)


async def test_a_request_once_the_http_server_is_stopping_is_a_503_that_changes_nothing(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.db"
    async with _asgi(db) as app:
        _, headers, _ = await _request(app, "POST", INITIALIZE)
        session = headers["mcp-session-id"]
        app.stopping = True
        status, headers, answer = await _request(app, "POST", INCREMENT, session)
    assert status == 503
    assert headers["connection"] == "close"
    assert "stopping" in refusal(answer)
    assert not any(isinstance(e, ActionRequested) for e in _events(db, session))


async def _sent_after(
    app: McpHttpApp,
    session: str,
    body: bytes,
    then: dict[str, Any] | None,
    *,
    extra: Sequence[tuple[bytes, bytes]] = (),
) -> list[dict[str, Any]]:
    """What `app` sends for a POST whose body starts with `body` and does not end there,
    its client sending `then` next (None: nothing ever)."""
    headers = [(b"mcp-session-id", session.encode()), *extra]
    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers}
    received = [{"type": "http.request", "body": body, "more_body": True}]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if received:
            return received.pop()
        if then is None:
            await trio.sleep_forever()
        return then

    async def send(event: dict[str, Any]) -> None:
        sent.append(event)

    with trio.fail_after(10):
        await app(scope, receive, send)
    return sent


async def test_a_request_whose_body_stalls_is_a_408_that_closes_its_connection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It held its connection, a file descriptor, for as long as its client stalled."""
    monkeypatch.setattr(_http, "BODY_TIMEOUT", 0.2)
    db = tmp_path / "log.db"
    async with _asgi(db) as app:
        _, headers, _ = await _request(app, "POST", INITIALIZE)
        session = headers["mcp-session-id"]
        start, end = await _sent_after(app, session, json.dumps(INCREMENT).encode(), None)
    assert start["status"] == 408
    assert (b"connection", b"close") in start["headers"]
    assert refusal(json.loads(end["body"])) == "the request body did not arrive within 0.2 seconds"
    assert not any(isinstance(e, ActionRequested) for e in _events(db, session))


async def test_a_stalled_body_declared_over_the_limit_is_told_it_is_too_large(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client on a slow link was told its body was late (408), never that its size,
    which its Content-Length said, was the problem: it would send the same body again."""
    monkeypatch.setattr(_http, "BODY_TIMEOUT", 0.2)
    async with _asgi(tmp_path / "log.db") as app:
        _, headers, _ = await _request(app, "POST", INITIALIZE)
        declared = [(b"content-length", str((4 << 20) + 1).encode())]
        start, end = await _sent_after(
            app, headers["mcp-session-id"], b" " * 1000, None, extra=declared
        )
    assert start["status"] == 413
    assert (b"connection", b"close") in start["headers"]
    assert refusal(json.loads(end["body"])) == f"request body over {4 << 20} bytes"


async def test_a_refusal_whose_body_stalls_closes_its_connection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A refusal reads its request's body first; one not whole in time leaves the rest
    unread, which the connection cannot be used after."""
    monkeypatch.setattr(_http, "BODY_TIMEOUT", 0.2)
    async with _asgi(tmp_path / "log.db") as app:
        _, headers, _ = await _request(app, "POST", INITIALIZE)
        elsewhere = [(b"origin", b"https://elsewhere.example")]
        start, end = await _sent_after(
            app, headers["mcp-session-id"], b" " * 1000, None, extra=elsewhere
        )
    assert start["status"] == 403
    assert (b"connection", b"close") in start["headers"]
    assert refusal(json.loads(end["body"])) == (
        "origin not allowed: 'https://elsewhere.example' is no local page (the server's"
        " operator may allow it with --allow-origin)"
    )


async def test_a_request_whose_client_left_before_its_body_ended_is_not_applied(
    tmp_path: Path,
) -> None:
    """What had come of its body was taken for all of it: a whole JSON message, sent with
    a longer Content-Length, was applied for a client that was gone."""
    db = tmp_path / "log.db"
    async with _asgi(db) as app:
        _, headers, _ = await _request(app, "POST", INITIALIZE)
        session = headers["mcp-session-id"]
        gone = {"type": "http.disconnect"}
        sent = await _sent_after(app, session, json.dumps(INCREMENT).encode(), gone)
    assert sent == []
    assert not any(isinstance(e, ActionRequested) for e in _events(db, session))


async def test_a_request_whose_body_is_still_coming_as_the_server_stops_is_a_503_at_once(
    tmp_path: Path,
) -> None:
    answers: list[list[dict[str, Any]]] = []
    async with _asgi(tmp_path / "log.db") as app:
        _, headers, _ = await _request(app, "POST", INITIALIZE)
        session = headers["mcp-session-id"]

        async def stalled() -> None:
            answers.append(await _sent_after(app, session, b"{", None))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(stalled)
            await trio.sleep(0.1)  # its body is being read
            app.stop()
    ((start, end),) = answers
    assert start["status"] == 503
    assert (b"connection", b"close") in start["headers"]
    assert "stopping" in refusal(json.loads(end["body"]))


async def test_a_signal_sets_the_http_app_stopping_before_hypercorn_stops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What makes the 503 above happen: the signal, before any connection is closed."""
    apps: list[McpHttpApp] = []
    monkeypatch.setattr(McpHttpApp, "__init__", _recording_init(McpHttpApp.__init__, apps))
    async with trio.open_nursery() as nursery:
        endpoints = await nursery.start(
            lambda task_status: serve_http(
                COUNTER, port=0, db=tmp_path / "log.db", task_status=task_status
            )
        )
        # What a client connects to (they were base URLs, while stderr named /mcp).
        assert re.fullmatch(r"http://127\.0\.0\.1:[1-9][0-9]*/mcp", endpoints[0]), endpoints
        (app,) = apps
        assert app.stopping is False
        os.kill(os.getpid(), signal.SIGTERM)
    assert app.stopping is True


async def _read_back_as_hypercorn_stops(
    app: McpHttpApp, connection: type[TCPServer], turns: int
) -> bytes:
    """All a client reads back of a POST waiting in its connection's socket, which
    hypercorn serves as a `connection` and, `turns` scheduler turns later, tells that its
    server is stopping."""
    context = WorkerContext(None)
    served, client = socket.socketpair()
    client.sendall(http_post(INCREMENT, "0" * 32))

    async def stop() -> None:
        for _ in range(turns):
            await trio.lowlevel.checkpoint()
        await context.terminated.set()

    stream = trio.SocketStream(trio.socket.from_stdlib_socket(served))
    server = connection(wrap_app(app, 0, None), Config(), context, ConnectionState({}), stream)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(stop)
        await server.run()
    answer = b""
    with client, contextlib.suppress(ConnectionResetError):  # closed with the POST unread
        while chunk := client.recv(65536):
            answer += chunk
    return answer


def _whole_503(answer: bytes) -> bool:
    head, _, body = answer.partition(b"\r\n\r\n")
    length = re.search(rb"(?im)^content-length: (\d+)\r?$", head)
    return (
        head.startswith(b"HTTP/1.1 503 ")
        and b"\r\nconnection: close" in head.lower()
        and length is not None
        and int(length.group(1)) == len(body)
        and "stopping" in refusal(json.loads(body))
    )


async def test_a_request_read_as_the_http_server_stops_is_answered_whole_or_not_at_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A request that came as SIGTERM did got, 1 time in 3, its 503's headers
    (``content-length: 132``) and then its connection closed, with no body: hypercorn's
    keep-alive timer, woken by the stop, closed a connection it had taken for idle just
    after it read the request. Whatever the turn the stop comes on, the answer is whole or
    there is none."""
    monkeypatch.setattr(hypercorn_run, "TCPServer", TCPServer)
    async with trio.open_nursery() as nursery:  # serve_http makes hypercorn's connections
        await nursery.start(
            lambda task_status: serve_http(
                COUNTER, port=0, db=tmp_path / "served.db", task_status=task_status
            )
        )
        os.kill(os.getpid(), signal.SIGTERM)
    connection = hypercorn_run.TCPServer
    answers: list[bytes] = []
    async with _asgi(tmp_path / "log.db") as app:
        app.stop()
        for _ in range(50):
            for turns in range(12):  # the request is being read after 4 or so
                answers.append(await _read_back_as_hypercorn_stops(app, connection, turns))
    assert [answer for answer in answers if answer and not _whole_503(answer)] == []
    assert b"" in answers  # the stop came before the request was read
    assert any(answers)


async def test_an_http_session_whose_end_a_locked_log_does_not_take_as_it_stops_has_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Stopped while another process held the log's write lock, the server exited 0, "0
    session(s) failed", with the session's end (and an action's events) given up; the same
    stop on a full disk exits 1."""
    from functools import partial
    from urllib.request import Request, urlopen

    from semledger.hosts import _serve

    monkeypatch.setattr(_serve, "ENDING_GRACE", 0.5)
    monkeypatch.setattr(_serve, "SqliteRecorder", partial(SqliteRecorder, busy_timeout=0.1))
    db = tmp_path / "log.db"

    def post(url: str) -> str:
        headers = {"content-type": "application/json"}
        request = Request(url, json.dumps(INITIALIZE).encode(), headers, method="POST")
        with urlopen(request, timeout=10) as answer:
            return str(answer.headers["mcp-session-id"])

    failed: list[int] = []
    async with trio.open_nursery() as nursery:

        async def serve(task_status: trio.TaskStatus[list[str]]) -> None:
            failed.append(await serve_http(COUNTER, port=0, db=db, task_status=task_status))

        (url,) = await nursery.start(serve)
        session = await trio.to_thread.run_sync(post, url)
        lock = sqlite3.connect(db, isolation_level=None)
        lock.execute("BEGIN IMMEDIATE")
        os.kill(os.getpid(), signal.SIGTERM)
    lock.close()
    assert failed == [1]
    said = [line for line in capsys.readouterr().err.splitlines() if "locked" not in line]
    assert said[-2:] == [
        f"semledger: session {session!r} stopped with no end logged: the log did not take it"
        " within 0.5 s (as after a kill, it resumes from its last logged event)",
        f"semledger: stopped serving {COUNTER}; 1 session(s) failed",
    ]
    assert not any(isinstance(event, SessionEnded) for event in _events(db, session))


async def test_an_http_server_out_of_file_descriptors_says_so_once_not_in_tracebacks(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """trio's accept loop logged a traceback each time accept failed, every 0.1 s while
    the process had no file descriptor left: hundreds of them flooded stderr."""
    import errno

    real_accept = trio.SocketListener.accept
    failures = 5

    async def accept(listener: trio.SocketListener) -> trio.SocketStream:
        nonlocal failures
        if failures:
            failures -= 1
            raise OSError(errno.EMFILE, os.strerror(errno.EMFILE))
        return await real_accept(listener)

    monkeypatch.setattr(trio.SocketListener, "accept", accept)
    async with trio.open_nursery() as nursery:
        await nursery.start(
            lambda task_status: serve_http(
                COUNTER, port=0, db=tmp_path / "log.db", task_status=task_status
            )
        )
        with trio.fail_after(10):
            while failures:
                await trio.sleep(0.05)
        os.kill(os.getpid(), signal.SIGTERM)
    said = capsys.readouterr().err.splitlines()
    assert said[1:] == [
        "semledger: cannot accept connections: Too many open files (this process is out of"
        " file descriptors: raise its limit (ulimit -n)); retrying until it can",
        f"semledger: stopped serving {COUNTER}; 0 session(s) failed",
    ]


def _recording_init(init: Any, apps: list[McpHttpApp]) -> Any:
    def recording(app: McpHttpApp, *args: Any, **kwargs: Any) -> None:
        init(app, *args, **kwargs)
        apps.append(app)

    return recording


async def test_deleting_a_session_whose_end_cannot_be_logged_is_a_500_naming_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    disk = _FullDisk(monkeypatch)
    async with _asgi(tmp_path / "log.db") as app:
        _, headers, _ = await _request(app, "POST", INITIALIZE)
        session = headers["mcp-session-id"]
        disk.full = True
        status, _, answer = await _request(app, "DELETE", session=session)
        again, _, _ = await _request(app, "POST", INCREMENT, session)
    assert status == 500
    assert refusal(answer) == (
        f"session {session!r}: its log could not be written"
        " (OperationalError('database or disk is full'))"
    )
    assert again == 404  # over, and not brought back by this server


@asynccontextmanager
async def _stdio_session(
    db: Path,
) -> AsyncIterator[tuple[trio.abc.SendStream, trio.abc.ReceiveStream, list[Any]]]:
    """Session "s" of the counter served over stdio in memory for the block: its input,
    its output, and what `serve_stdio` returned, once the block has closed the input."""
    to_server, stdin = trio.testing.memory_stream_one_way_pair()
    stdout, from_server = trio.testing.memory_stream_one_way_pair()
    served: list[Any] = []

    async def serve() -> None:
        served.append(await serve_stdio(COUNTER, db=db, session="s", receive=stdin, send=stdout))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(serve)
        yield to_server, from_server, served


async def test_a_stdio_session_whose_end_cannot_be_logged_fails_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    disk = _FullDisk(monkeypatch)
    async with _stdio_session(tmp_path / "log.db") as (to_server, from_server, served):
        await to_server.send_all(_line(INCREMENT))
        reply = json.loads(await from_server.receive_some())
        assert reply["result"]["structuredContent"]["ok"] is True
        disk.full = True
        await to_server.aclose()  # end of input: the session ends, or tries to
    (ended,) = served
    assert ended.failed is True
    assert ended.reason == (
        "its log could not be written (OperationalError('database or disk is full'))"
    )


def test_a_session_that_cannot_be_started_for_a_full_disk_fails_in_one_line_not_as_usage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit 1, as for a session that fails later: 2 is for bad usage, and nothing about the
    command was wrong."""
    from semledger._cli import main

    _FullDisk(monkeypatch).full = True
    status = main(["serve", COUNTER, "--db", str(tmp_path / "log.db"), "--session", "s"])
    assert status == 1
    assert capsys.readouterr().err.splitlines() == [
        "semledger: session 's': its log could not be written"
        " (OperationalError('database or disk is full'))"
    ]


async def test_a_second_signal_once_the_sessions_end_is_written_is_ignored_not_fatal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A second SIGTERM that came as the server was about to exit 0 made it die by that
    signal, and say it was stopping at once, though nothing was left to stop."""
    from semledger.hosts import _stdio

    died: list[int] = []
    monkeypatch.setattr(_stdio, "_die_of", died.append)
    async with _stdio.stop_on_signals() as stop:
        os.kill(os.getpid(), signal.SIGHUP)
        await stop.requested.wait()
        assert stop.reason == "signal SIGHUP"
        os.kill(os.getpid(), signal.SIGINT)
        await trio.testing.wait_all_tasks_blocked()
        assert died == [signal.SIGINT]  # still stopping: the second signal ends it at once
        stop.settled = True
        os.kill(os.getpid(), signal.SIGTERM)
        await trio.testing.wait_all_tasks_blocked()
        assert died == [signal.SIGINT]


async def test_a_signal_taken_once_the_end_is_written_but_not_yet_read_is_ignored() -> None:
    """trio hands a signal its receiver took but no task read, as it closes, to the handler
    it found: by default SIGTERM's, which killed a server whose session had just ended. It
    is ignored; the handler found is put back for the signals after the block."""
    from semledger.hosts import _stdio

    handled: list[int] = []
    found = signal.signal(signal.SIGTERM, lambda signum, _frame: handled.append(signum))
    try:
        async with _stdio.stop_on_signals() as stop:
            os.kill(os.getpid(), signal.SIGHUP)
            await stop.requested.wait()
            stop.settled = True
            signal.raise_signal(signal.SIGTERM)  # taken, and the block ends before it is read
        assert handled == []
        signal.raise_signal(signal.SIGTERM)
        assert handled == [signal.SIGTERM]
    finally:
        signal.signal(signal.SIGTERM, found)


@pytest.mark.parametrize(
    ("transport", "signum"),
    [("stdio", signal.SIGINT), ("stdio", signal.SIGTERM), ("http", signal.SIGTERM)],
)
def test_signals_after_the_end_is_written_until_the_process_exits_are_ignored(
    tmp_path: Path, transport: str, signum: signal.Signals
) -> None:
    """A second signal 10 to 40 ms after the first, once the session's end was written and
    said, killed `serve` by that signal (exit 130 or 143 in a shell) instead of 0: trio put
    the default handlers back as it stopped listening, before the process exited."""
    db = str(tmp_path / "log.db")
    over = ["--session", "s"] if transport == "stdio" else ["--http", "127.0.0.1:0"]
    process = subprocess.Popen(
        _semledger("serve", COUNTER, "--db", db, *over),
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as at a terminal
    )  # fmt: skip
    assert process.stderr is not None
    said = [process.stderr.readline().decode()]  # started, or serving
    try:
        process.send_signal(signum)
        said.append(process.stderr.readline().decode())  # ended, or stopped serving
        while process.poll() is None:  # as the process exits
            process.send_signal(signum)
            time.sleep(0.001)
        said.append(process.stderr.read().decode())
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        assert process.stdin is not None
        process.stdin.close()
    assert process.returncode == 0, said
    if transport == "stdio":
        assert said[1:] == [f"semledger: session 's' ended: signal {signum.name}\n", ""]
    else:
        assert said[1:] == ["semledger: stopped serving " + COUNTER + "; 0 session(s) failed\n", ""]


async def test_an_http_session_that_cannot_be_opened_for_its_log_is_a_503_its_operator_hears_of(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It was a -32603 ("a bug inside the server") and nothing was said on stderr."""
    disk = _FullDisk(monkeypatch)
    told: list[str] = []
    async with _asgi(tmp_path / "log.db") as app:
        app.on_failure = told.append
        disk.full = True
        status, headers, answer = await _request(app, "POST", INITIALIZE)
    assert status == 503
    assert "mcp-session-id" not in headers
    assert refusal(answer) == told[0]
    assert told[0].startswith("could not open a session: session '")
    assert told[0].endswith(
        "its log could not be written (OperationalError('database or disk is full'))"
    )


async def test_a_parked_http_session_whose_claim_cannot_be_taken_is_a_503_its_operator_hears_of(
    tmp_path: Path,
) -> None:
    """Its resume was an empty 500 and an "Error in ASGI Framework" traceback (out of file
    descriptors, as a file where the claims folder goes is), where a new session's
    ``initialize`` was a 503 that said why. The session stays resumable once it can be."""
    db = tmp_path / "log.db"
    claims = tmp_path / "log.db-claims"
    told: list[str] = []
    async with _asgi(db) as app:
        app.on_failure = told.append
        _, headers, _ = await _request(app, "POST", INITIALIZE)
        session = headers["mcp-session-id"]
        for before in ("1", "2"):
            await app.registry.park(session, "parked by my program")
            claims.write_text("")
            status, headers, answer = await _request(app, "POST", INCREMENT, session)
            assert status == 503, answer
            assert refusal(answer) == told[-1]
            assert told[-1] == (
                f"could not resume session {session!r}: its log: cannot open the log {db}:"
                f" its session claims folder {claims} is a file, not a folder: move it away"
            )
            claims.unlink()
            status, _, answer = await _request(app, "POST", INCREMENT, session)
            assert status == 200, answer
            assert _tool_result(answer)["value"]["before"] == before
    assert len(told) == 2


@pytest.mark.parametrize("method", ["POST", "DELETE"])
async def test_a_session_id_that_is_not_ascii_is_refused_as_sent_not_garbled(
    tmp_path: Path, method: str
) -> None:
    """``Mcp-Session-Id: é`` was a 404 for the unknown session 'Ã©': its UTF-8 bytes read
    as Latin-1."""
    async with _asgi(tmp_path / "log.db") as app:
        status, _, answer = await _request(app, method, INCREMENT, "é")
    assert status == 400
    assert refusal(answer) == "Mcp-Session-Id 'é' is not ASCII: send the id the server gave"


@pytest.mark.parametrize("blocked", ["claims-folder-a-file", "full-disk"])
async def test_deleting_a_parked_session_its_log_cannot_end_is_a_503_that_ends_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, blocked: str
) -> None:
    """It was a 500 (over all the same, by docs/wire.md) that its operator never heard of
    (for a full disk, one saying the log "cannot be read"), and the session it had not
    ended answered the next request once the log could be written. It stays as it was,
    and the DELETE sent again ends it."""
    db = tmp_path / "log.db"
    claims = tmp_path / "log.db-claims"
    disk = _FullDisk(monkeypatch)
    told: list[str] = []
    async with _asgi(db) as app:
        app.on_failure = told.append
        _, headers, _ = await _request(app, "POST", INITIALIZE)
        session = headers["mcp-session-id"]
        await app.registry.park(session, "parked by my program")
        if blocked == "full-disk":
            disk.full = True
            why = "database or disk is full"
        else:
            claims.write_text("")
            why = (
                f"cannot open the log {db}: its session claims folder {claims} is a file,"
                " not a folder: move it away"
            )
        status, _, answer = await _request(app, "DELETE", session=session)
        assert status == 503, answer
        assert refusal(answer) == told[-1] == f"could not end session {session!r}: its log: {why}"
        disk.full = False
        claims.unlink(missing_ok=True)
        status, _, answer = await _request(app, "DELETE", session=session)
        assert status == 204, answer
        again, _, answer = await _request(app, "POST", INCREMENT, session)
    assert again == 404
    assert refusal(answer) == _http._for_good(session, "deleted by the client")
    assert len(told) == 1


@pytest.mark.parametrize(
    ("header", "value", "says"),
    [
        ("mcp-protocol-version", "é".encode(), "unsupported MCP-Protocol-Version 'é'"),
        (
            "content-type",
            "application/jsoné".encode(),
            "Content-Type must be application/json, not 'application/jsoné'",
        ),
        (
            "content-encoding",
            "GZIPé".encode(),
            "Content-Encoding 'GZIPé' is not supported: send the body as it is",
        ),
        (
            "accept",
            "text/é".encode(),
            "the answer is application/json, which Accept 'text/é' does not take",
        ),
        (
            "mcp-session-id",
            b"\xe9",
            "Mcp-Session-Id '\\xe9' is not ASCII: send the id the server gave",
        ),
    ],
    ids=["protocol-version", "content-type", "content-encoding", "accept", "session-id-byte"],
)
async def test_a_header_that_is_not_ascii_is_shown_as_sent_not_garbled(
    tmp_path: Path, header: str, value: bytes, says: str
) -> None:
    """Each was echoed as its bytes read as Latin-1 (``'Ã©'`` for ``'é'``), and a byte that
    is no UTF-8 with its backslash doubled (``'\\\\xe9'``): only the session id's UTF-8 was
    read as such."""
    async with _asgi(tmp_path / "log.db") as app:
        status, _, answer = await _request(app, "POST", INCREMENT, extra=[(header.encode(), value)])
    assert status in (400, 406, 415)
    assert refusal(answer) == says


@pytest.mark.parametrize(
    ("header", "value", "says"),
    [
        ("mcp-session-id", "a" * 20_000, f"unknown session {'a' * 200!r}… (20000 bytes)"),
        (
            "content-type",
            "é" * 300,
            f"Content-Type must be application/json, not {'é' * 200!r}… (600 bytes)",
        ),
    ],
    ids=["session-id", "content-type"],
)
async def test_a_long_header_is_shown_cut_with_its_length_not_whole(
    tmp_path: Path, header: str, value: str, says: str
) -> None:
    """A 20 KB unknown session id came back whole in the 404's message."""
    extra = [(header.encode(), value.encode())]
    async with _asgi(tmp_path / "log.db") as app:
        _, _, answer = await _request(app, "POST", INCREMENT, extra=extra)
    assert refusal(answer) == says


@pytest.mark.parametrize(
    ("header", "name", "first"),
    [
        ("mcp-protocol-version", "MCP-Protocol-Version", "2025-06-18"),
        ("content-type", "Content-Type", "application/json"),
        ("content-encoding", "Content-Encoding", "identity"),
        ("origin", "Origin", "http://localhost"),
        ("authorization", "Authorization", "Bearer secret"),
    ],
)
async def test_a_header_sent_once_sent_again_with_another_value_is_a_400_naming_both(
    tmp_path: Path, header: str, name: str, first: str
) -> None:
    """The last of them was taken, silently: which one counted was the client's guess.
    (A credential's values are not shown.)"""
    async with _asgi(tmp_path / "log.db") as app:
        _, headers, _ = await _request(app, "POST", INITIALIZE)
        session = headers["mcp-session-id"]
        sent = [first.encode(), first.encode(), b"x"]
        twice = [(header.encode(), value) for value in sent]
        status, headers, answer = await _request(app, "POST", INCREMENT, session, extra=twice)
    shown = "" if header == "authorization" else f", {first!r} and 'x'"
    assert status == 400
    assert refusal(answer) == f"the request sends 2 different {name} headers{shown}: send one"
    assert "access-control-allow-origin" not in headers
    assert not any(isinstance(e, ActionRequested) for e in _events(tmp_path / "log.db", session))


async def test_a_list_header_sent_more_than_once_is_read_as_one_list(tmp_path: Path) -> None:
    """Only the last Accept header was read: a client taking JSON in its first one was
    refused with a 406."""
    accepts = [(b"accept", b"application/json"), (b"accept", b"text/event-stream")]
    async with _asgi(tmp_path / "log.db") as app:
        status, _, answer = await _request(app, "POST", INITIALIZE, extra=accepts)
    assert status == 200, answer


async def test_an_initialize_with_a_session_id_that_is_not_ascii_is_told_to_leave_it_out(
    tmp_path: Path,
) -> None:
    """It was told to "send the id the server gave", where no server gave one."""
    async with _asgi(tmp_path / "log.db") as app:
        status, headers, answer = await _request(app, "POST", INITIALIZE, "é")
    assert status == 400
    assert "mcp-session-id" not in headers
    assert refusal(answer) == (
        "Mcp-Session-Id 'é' is not ASCII, so no server gave it: to open a session, send"
        " initialize without it"
    )


def test_a_log_deleted_under_its_recorder_is_not_made_again_by_a_read(tmp_path: Path) -> None:
    """A server whose log was deleted answered the next initialize with a 500 and a
    traceback ('no such table: events'), having made an empty file at its path."""
    db = tmp_path / "log.db"
    with SqliteRecorder(db) as recorder:
        for path in tmp_path.glob("log.db*"):
            if path.is_file():
                path.unlink()
        with pytest.raises(LogMovedError, match=r"log\.db was deleted"):
            recorder.head("s")
        assert not db.exists()


def test_a_stopping_http_server_answers_a_call_that_waits_longer_than_hypercorns_grace(
    tmp_path: Path,
) -> None:
    """A call waiting for the log (another process held it for 4 s) as SIGTERM came was
    applied and logged, then dropped unanswered after hypercorn's default 3 s grace: a
    client retrying with a latest precondition would apply it twice."""
    import httpx2 as httpx

    db = tmp_path / "log.db"
    with _http_server(db) as (process, port), httpx.Client(timeout=60) as http:
        url = f"http://127.0.0.1:{port}/mcp"
        session = http.post(url, json=INITIALIZE).headers["mcp-session-id"]
        headers = {"Mcp-Session-Id": session}
        http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                  headers=headers)  # fmt: skip
        holder = sqlite3.connect(db, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # the server's next write waits for it
        answers: list[httpx.Response] = []
        sending = threading.Thread(
            target=lambda: answers.append(http.post(url, json=INCREMENT, headers=headers))
        )
        sending.start()
        time.sleep(0.5)
        process.send_signal(signal.SIGTERM)
        time.sleep(4.0)
        holder.execute("ROLLBACK")
        holder.close()
        sending.join(timeout=60)
        _, stderr = process.communicate(timeout=30)
    assert process.returncode == 0, stderr.decode()
    (answer,) = answers
    assert answer.status_code == 200, answer.text
    assert answer.json()["result"]["structuredContent"]["ok"] is True
    assert any(isinstance(e, ActionRequested) for e in _events(db, session))


async def test_an_answer_its_client_does_not_read_holds_a_stopping_server_for_its_grace_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client that asked for a large answer (a todo item of 3 MB: a tree of 6 MB) and
    read none of it held the stopping server past its grace for as long as it kept its
    connection open: hypercorn writes with cancellation shielded. Killed then, the server
    logged no session's end."""
    from urllib.request import Request, urlopen

    from semledger.hosts import _serve

    monkeypatch.setattr(_serve, "STOPPING_GRACE", 1.0)
    todo = "semledger.examples.todo:app"
    db = tmp_path / "log.db"

    def filled(url: str) -> str:
        def post(message: object, session: str | None = None) -> str:
            headers = {"content-type": "application/json"}
            if session is not None:
                headers["mcp-session-id"] = session
            request = Request(url, json.dumps(message).encode(), headers, method="POST")
            with urlopen(request, timeout=30) as answer:
                return str(answer.headers["mcp-session-id"])

        session = post(INITIALIZE)
        for action in ({"kind": "set_text", "value": "x" * 3_000_000}, {"kind": "submit"}):
            target = {"kind": "semantic_id", "id": "todo.input"}
            arguments = {"target": target, "action": action, "precondition": {"kind": "latest"}}
            post(_call("perform_action", arguments), session)
        return session

    unread = socket.socket()
    unread.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    without_limit = threading.Timer(30, unread.close)  # without the fix, only this ends it
    failed: list[int] = []
    try:
        async with trio.open_nursery() as nursery:

            async def serve(task_status: trio.TaskStatus[list[str]]) -> None:
                failed.append(await serve_http(todo, port=0, db=db, task_status=task_status))

            (url,) = await nursery.start(serve)
            session = await trio.to_thread.run_sync(filled, url)
            unread.connect(("127.0.0.1", int(url.rsplit(":", 1)[1].split("/")[0])))
            unread.sendall(http_post(_call("read_semantics", {}), session))
            await trio.sleep(1.0)  # the answer is being written: more than the socket holds
            without_limit.start()
            signalled = trio.current_time()
            os.kill(os.getpid(), signal.SIGTERM)
        took = trio.current_time() - signalled
    finally:
        without_limit.cancel()
        unread.close()
    assert took < 10, f"stopped {took:.1f} s after the signal, its grace 1 s"
    assert failed == [0]
    assert _events(db, session)[-1] == SessionEnded("the server stopped (signal SIGTERM)")


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


# --- parked sessions: stopped for being idle, resumed by their next request ----------------


def _tool_result(answer: Any) -> Any:
    return answer["result"]["structuredContent"]


IDLE = 0.2
"""Seconds of idleness the parking tests allow (in real time: a mock clock jumps ahead
while the log is written on its worker thread)."""


async def _until_parked(app: McpHttpApp, session: str) -> None:
    with trio.fail_after(30):
        while session in app.registry:
            await trio.sleep(IDLE / 4)
        await app.registry.park(session)  # returns once the parking actor has stopped


@asynccontextmanager
async def _parking(app: McpHttpApp, after: float) -> AsyncIterator[None]:
    async with trio.open_nursery() as nursery:
        nursery.start_soon(app.park_idle, after)
        try:
            yield
        finally:
            nursery.cancel_scope.cancel()


async def test_an_http_session_left_idle_is_parked_and_its_next_request_resumes_it(
    tmp_path: Path,
) -> None:
    """A client that never sent DELETE held a session actor, its memory and its claim's
    file descriptor for as long as the server ran: about a thousand of them and every new
    session was a 500 (too many open files)."""
    db = tmp_path / "log.db"
    async with _asgi(db) as app:
        _, headers, _ = await _request(app, "POST", INITIALIZE)
        session = headers["mcp-session-id"]
        status, _, answer = await _request(app, "POST", INCREMENT, session)
        assert (status, _tool_result(answer)["ok"]) == (200, True)
        async with _parking(app, IDLE):
            assert session in app.registry  # just used: not idle yet
            await _until_parked(app, session)
            logged = len(_events(db, session))
            claim = SqliteRecorder(db)
            with claim.claim(session):  # released: another process could take it up
                pass
            claim.close()
            status, _, answer = await _request(app, "POST", INCREMENT, session)
            assert status == 200, answer
            assert _tool_result(answer)["value"]["before"] == "2"  # where it was: the log's
            assert session in app.registry
    events = _events(db, session)
    assert events[logged - 1] == SessionEnded(f"parked: no request for {IDLE:g} s")  # for now
    assert [type(e).__name__ for e in events[logged:logged + 2]] == [
        "SessionResumed", "AgentConnected"
    ]  # fmt: skip


@pytest.mark.parametrize("by", ["server", "registry"])
async def test_a_session_parked_and_resumed_by_its_server_keeps_its_negotiated_version(
    tmp_path: Path, by: str
) -> None:
    """After a park its router had forgotten the 2025-06-18 it negotiated: a request sent
    without the header was taken as 2025-03-26, and its batch was accepted. So too for a
    park by the program that embeds the server, through its registry."""
    batch = [{"jsonrpc": "2.0", "id": 5, "method": "ping"}]
    async with _asgi(tmp_path / "log.db") as app:
        _, headers, _ = await _request(app, "POST", INITIALIZE)  # 2025-06-18
        session = headers["mcp-session-id"]
        if by == "registry":
            await app.registry.park(session)
            status, _, answer = await _request(app, "POST", batch, session)
        else:
            async with _parking(app, IDLE):
                await _until_parked(app, session)
                status, _, answer = await _request(app, "POST", batch, session)
    assert status == 200
    assert answer["error"]["code"] == -32600
    assert "2025-06-18 removed batching" in answer["error"]["message"]


async def test_a_parked_session_is_not_audited_as_if_its_server_was_killed(
    tmp_path: Path,
) -> None:
    """Parking logged nothing: every park read in the audit as a server killed under the
    session (a `stopped` incident, its answers perhaps lost), false alarms that hid real
    kills. Its end is logged for now, and a session parked last is ended for now."""
    db = tmp_path / "log.db"
    async with _asgi(db) as app:
        _, headers, _ = await _request(app, "POST", INITIALIZE)
        session = headers["mcp-session-id"]
        async with _parking(app, IDLE):
            for _ in range(2):  # parked, resumed by a request, parked again
                await _request(app, "POST", INCREMENT, session)
                await _until_parked(app, session)
    with SqliteRecorder(db) as recorder:
        report = audit_report(recorder, session)
    assert [i.kind for i in report.incidents] == ["resumed"]
    assert (report.ending.state, report.ending.reason, report.ending.final) == (
        "ended", f"parked: no request for {IDLE:g} s", False
    )


async def test_a_session_answering_a_request_is_not_parked_however_long_it_takes(
    tmp_path: Path,
) -> None:
    async with _asgi(tmp_path / "log.db") as app:
        _, headers, _ = await _request(app, "POST", INITIALIZE)
        session = headers["mcp-session-id"]
        app._connections[session].busy += 1  # as while a request waits for its answer
        async with _parking(app, IDLE):
            await trio.sleep(10 * IDLE)
            assert session in app.registry
            app._connections[session].busy -= 1
            await _until_parked(app, session)


async def test_an_idle_session_that_is_over_is_forgotten_but_stays_over(tmp_path: Path) -> None:
    """Its connection (router, host) was kept for as long as the server ran."""
    async with _asgi(tmp_path / "log.db") as app:
        _, headers, _ = await _request(app, "POST", INITIALIZE)
        session = headers["mcp-session-id"]
        app._connections[session].host.close("the session ended: it was closed for the test")
        async with _parking(app, IDLE):
            with trio.fail_after(30):
                while session in app._connections:
                    await trio.sleep(IDLE / 4)
        status, _, answer = await _request(app, "POST", INCREMENT, session)
    assert status == 404
    assert refusal(answer) == (
        f"session {session!r} is over on this server: the session ended: it was closed for"
        " the test"
    )


@pytest.mark.parametrize("ending", ["deleted", "ended"])
async def test_a_session_that_ends_while_another_is_parked_does_not_stop_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ending: str
) -> None:
    """The server died (KeyError, exit 1, every session dropped) when a client deleted an
    idle session, or a request found it over, while an earlier one was being parked: the
    parking went on through the sessions as they were before it."""
    async with _asgi(tmp_path / "log.db") as app:
        sessions = []
        for _ in range(2):
            _, headers, _ = await _request(app, "POST", INITIALIZE)
            sessions.append(headers["mcp-session-id"])
            app._connections[sessions[-1]].used -= 10 * IDLE  # both idle in the same round
        first, second = sessions
        parking, parked = trio.Event(), trio.Event()
        park = app.registry.park

        async def held(name: str, reason: str = "parked") -> None:
            if name == first:
                parking.set()
                await parked.wait()
            await park(name, reason)

        monkeypatch.setattr(app.registry, "park", held)
        async with _parking(app, IDLE):
            with trio.fail_after(30):
                await parking.wait()
            if ending == "deleted":
                status, _, _ = await _request(app, "DELETE", session=second)
                assert status == 204
            else:
                app._connections[second].host.close("the session ended: closed for the test")
                status, _, _ = await _request(app, "POST", INCREMENT, second)
                assert status == 404
            parked.set()
            await _until_parked(app, first)
            await trio.sleep(2 * IDLE)  # the parking goes on, with no error
        status, _, answer = await _request(app, "POST", INCREMENT, second)
        assert status == 404, answer
        status, _, answer = await _request(app, "POST", INCREMENT, first)
        assert status == 200, answer


# --- sessions parked or closed by the embedder, through the registry it gave the app -------


@pytest.mark.parametrize("how", ["parked", "closed"])
async def test_a_session_its_program_parks_or_closes_for_now_is_resumed_by_its_next_request(
    tmp_path: Path, how: str
) -> None:
    """Parked or closed through the `SessionRegistry` the app was given, a session was
    stranded: its next request a ``host_closed`` result, every later one a 404 "over on
    this server", while `semledger sessions` listed it as resumable."""
    db = tmp_path / "log.db"
    async with _asgi(db) as app:
        _, headers, _ = await _request(app, "POST", INITIALIZE)
        session = headers["mcp-session-id"]
        if how == "parked":
            await app.registry.park(session, "parked by my program")
        else:
            await app.registry.close(session)
        for before in ("1", "2"):
            status, _, answer = await _request(app, "POST", INCREMENT, session)
            assert status == 200, answer
            assert _tool_result(answer)["value"]["before"] == before
        assert session in app.registry
    kinds = [type(e).__name__ for e in _events(db, session)]
    resumed = kinds.index("SessionResumed")
    assert kinds[resumed - 1 : resumed + 2] == ["SessionEnded", "SessionResumed", "AgentConnected"]


async def test_requests_that_come_together_after_a_park_resume_the_session_once(
    tmp_path: Path,
) -> None:
    """Each request that came while the first resumed the session opened a connection of
    its own, with a router of its own, and logged its client as resumed again."""
    db = tmp_path / "log.db"
    async with _asgi(db) as app:
        _, headers, _ = await _request(app, "POST", INITIALIZE)
        session = headers["mcp-session-id"]
        await app.registry.park(session)
        answers: list[Any] = []

        async def increment(request_id: int) -> None:
            message = {**INCREMENT, "id": request_id}
            answers.append(await _request(app, "POST", message, session))

        async with trio.open_nursery() as nursery:
            for request_id in (1, 2, 3):
                nursery.start_soon(increment, request_id)
    assert [status for status, _, _ in answers] == [200, 200, 200]
    assert sorted(_tool_result(answer)["value"]["before"] for *_, answer in answers) == [
        "1", "2", "3",
    ]
    kinds = [type(e).__name__ for e in _events(db, session)]
    resumed = kinds.index("SessionResumed")
    assert kinds.count("SessionResumed") == 1
    assert kinds[resumed:].count("AgentConnected") == 1


async def test_a_request_that_found_its_session_parked_under_it_leaves_it_resumable(
    tmp_path: Path,
) -> None:
    """A call the session was parked under answers ``host_closed``; the next one is not
    told the session is over, but resumes it."""
    async with _asgi(tmp_path / "log.db") as app:
        _, headers, _ = await _request(app, "POST", INITIALIZE)
        session = headers["mcp-session-id"]
        host = app._connections[session].host
        await app.registry.park(session)
        assert (await host.read_semantics(None)).code == "host_closed"  # as a call in flight
        status, _, answer = await _request(app, "POST", INCREMENT, session)
    assert status == 200, answer
    assert _tool_result(answer)["value"]["before"] == "1"


async def test_a_session_its_program_ends_for_good_is_a_404_saying_it_was_and_why(
    tmp_path: Path,
) -> None:
    """Ended for good by its operator through the registry, it was a ``host_closed``
    result, then a 404 "over on this server: the session is closed", the reason lost."""
    async with _asgi(tmp_path / "log.db") as app:
        _, headers, _ = await _request(app, "POST", INITIALIZE)
        session = headers["mcp-session-id"]
        await app.registry.close(session, "maintenance", by="operator")
        ended = f"session {session!r} was ended for good (maintenance): no server takes it up again"
        for method in ("POST", "DELETE", "POST"):
            status, _, answer = await _request(app, method, INCREMENT, session)
            assert (status, refusal(answer)) == (404, ended), method


async def test_an_http_app_made_with_a_wrong_argument_is_refused_naming_it(
    tmp_path: Path,
) -> None:
    """Each was accepted, and every request was then an empty 500 with a traceback in the
    server's log (an app_ref of ``module.app`` only when a session's start was logged)."""
    async with _asgi(tmp_path / "log.db") as made:
        registry, app = made.registry, counter.app
        refused = {
            "registry": lambda: McpHttpApp(None, app, COUNTER),  # type: ignore[arg-type]
            "app": lambda: McpHttpApp(registry, None, COUNTER),  # type: ignore[arg-type]
            "app_ref": lambda: McpHttpApp(registry, app, "semledger.examples.counter.app"),
            "allowed_origins": lambda: McpHttpApp(
                registry, app, COUNTER, allowed_origins="http://x"
            ),
            "session": lambda: RuntimeAgentHost(None),  # type: ignore[arg-type]
        }
        for argument, make in refused.items():
            with pytest.raises((TypeError, ValueError)) as raised:
                make()
            assert str(raised.value).startswith(f"{argument}: expected"), raised.value


async def test_a_stdio_session_whose_log_could_not_be_written_reads_as_not_served(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its server, stopped for a full disk, released its claim as after a clean end: the
    session read as `open` (served: null, as a live one on a copy of the log) and its audit
    blamed a copied log, where a killed server's reads `open, not served`."""
    db = tmp_path / "log.db"
    disk = _FullDisk(monkeypatch)
    async with _stdio_session(db) as (to_server, from_server, served):
        await to_server.send_all(_line(INCREMENT))
        await from_server.receive_some()
        disk.full = True
        await to_server.send_all(_line(INCREMENT))
        await from_server.receive_some()  # host_closed: its log could not be written
        await to_server.aclose()
    assert served[0].failed is True
    disk.full = False
    with SqliteRecorder(db) as recorder:
        assert recorder.served(["s"]) == {"s": False}
    # Served again, it resumes and ends: its claim goes with its end.
    async with _stdio_session(db) as (to_server, _from_server, again_served):
        await to_server.aclose()
    (again,) = again_served
    assert again.failed is False
    with SqliteRecorder(db) as recorder:
        assert recorder.served(["s"]) == {"s": None}
    assert not (tmp_path / "log.db-claims").exists()
