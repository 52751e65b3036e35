"""The MCP boundary over real subprocesses (issue: the agent wire contract).

``semledger serve`` against the same runtime behind the official SDK's stdio server
(bench/_sdk_server.py), both driven by one raw NDJSON client (write a line, read lines;
sequential round trips), so the client is the same on both sides; then the latency of a
durable action, a 200-session Streamable HTTP load, and server start-up.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import anyio
from _report import emit

HERE = Path(__file__).resolve().parent
COUNTER = "semledger.examples.counter:app"
TODO = "semledger.examples.todo:app"
PROTOCOL = "2025-06-18"
INITIALIZE = {
    "protocolVersion": PROTOCOL,
    "capabilities": {},
    "clientInfo": {"name": "semledger-bench", "version": "0"},
}
LATEST = {"kind": "latest"}
AHEAD = 32
"""Requests a sending-ahead client has outstanding."""


def _ours(app: str, db: str) -> list[str]:
    return [sys.executable, "-m", "semledger", "serve", app, "--db", db]


def _sdk(app: str, db: str) -> list[str]:
    return [sys.executable, str(HERE / "_sdk_server.py"), app, "--db", db]


class Client:
    """A raw NDJSON JSON-RPC client over a subprocess's stdin and stdout."""

    def __init__(self, argv: list[str], stderr: IO[bytes]) -> None:
        self.spawned = time.perf_counter()
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr
        )
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        self._in = self.proc.stdin
        self._out = self.proc.stdout
        self._id = 0

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self._id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._id, "method": method}
        if params is not None:
            message["params"] = params
        self._in.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        self._in.flush()
        while True:
            line = self._out.readline()
            if not line:
                raise RuntimeError(f"{method}: the server closed its output")
            reply: dict[str, Any] = json.loads(line)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                result: dict[str, Any] = reply["result"]
                return result

    def notify(self, method: str) -> None:
        self._in.write(json.dumps({"jsonrpc": "2.0", "method": method}).encode() + b"\n")
        self._in.flush()

    def initialize(self) -> float:
        """Initialize; the seconds from spawn to the answer."""
        self.request("initialize", INITIALIZE)
        elapsed = time.perf_counter() - self.spawned
        self.notify("notifications/initialized")
        return elapsed

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = self.request("tools/call", {"name": tool, "arguments": arguments})
        envelope: dict[str, Any] = result["structuredContent"]
        if result["isError"] or not envelope["ok"]:
            raise RuntimeError(f"{tool} failed: {envelope}")
        value: dict[str, Any] = envelope["value"]
        return value

    def call_ahead(self, tool: str, arguments: dict[str, Any], calls: int, window: int) -> None:
        """`calls` calls, each sent while up to `window` earlier ones are still unanswered."""
        line = {"jsonrpc": "2.0", "method": "tools/call"}
        params = {"name": tool, "arguments": arguments}

        def send(count: int) -> None:
            for _ in range(count):
                self._id += 1
                message = {**line, "id": self._id, "params": params}
                self._in.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
            self._in.flush()

        expected = set(range(self._id + 1, self._id + 1 + calls))
        sent = min(window, calls)
        send(sent)
        for _ in range(calls):
            reply = json.loads(self._out.readline())
            if reply.get("id") not in expected or reply["result"]["isError"]:
                raise RuntimeError(f"{tool} sent ahead: {reply}")
            expected.discard(reply["id"])
            if sent < calls:
                send(1)
                sent += 1

    def close(self) -> None:
        self._in.close()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _rate(calls: int, fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return calls / (time.perf_counter() - start)


def _increment() -> dict[str, Any]:
    return {
        "target": {"kind": "semantic_id", "id": "counter.increment"},
        "action": {"kind": "activate"},
        "precondition": LATEST,
    }


def _stdio_rates(tmp: str, rounds: int, calls: int, stderr: IO[bytes]) -> dict[str, float]:
    """Calls/s of each kind on each server, the two servers taking turns round by round."""
    clients = {
        "ours": Client(_ours(COUNTER, os.path.join(tmp, "ours.db")), stderr),
        "sdk": Client(_sdk(COUNTER, os.path.join(tmp, "sdk.db")), stderr),
    }
    try:
        for client in clients.values():
            client.initialize()
        first = {side: client.call("read_semantics", {}) for side, client in clients.items()}
        assert first["ours"] == first["sdk"], "the two servers answer different envelopes"
        seconds: dict[str, float] = {}
        for _ in range(rounds):
            for side, client in clients.items():
                generation = client.call("read_semantics", {})["generation"]
                since = {"since": generation}
                kinds: dict[str, Callable[[], object]] = {
                    "read_unchanged": lambda c=client, s=since: c.call("read_semantics", s),
                    "read_full": lambda c=client: c.call("read_semantics", {}),
                    "perform_action": lambda c=client: c.call("perform_action", _increment()),
                    "perform_action_ahead": lambda c=client: c.call_ahead(
                        "perform_action", _increment(), calls, AHEAD
                    ),
                }
                for kind, fn in kinds.items():
                    start = time.perf_counter()
                    for _ in range(1 if kind.endswith("_ahead") else calls):
                        fn()
                    key = f"{side}_{kind}"
                    seconds[key] = seconds.get(key, 0.0) + time.perf_counter() - start
        return {key: rounds * calls / value for key, value in seconds.items()}
    finally:
        for client in clients.values():
            client.close()


def _todo_latencies(tmp: str, calls: int, stderr: IO[bytes]) -> list[float]:
    """Seconds of each durable perform_action (toggling an item) on the todo app."""
    client = Client(_ours(TODO, os.path.join(tmp, "todo.db")), stderr)
    try:
        client.initialize()
        client.call(
            "perform_action",
            {
                "target": {"kind": "semantic_id", "id": "todo.input"},
                "action": {"kind": "set_text", "value": "buy milk"},
                "precondition": LATEST,
            },
        )
        client.call(
            "perform_action",
            {
                "target": {"kind": "semantic_id", "id": "todo.input"},
                "action": {"kind": "submit"},
                "precondition": LATEST,
            },
        )
        toggle = {
            "target": {"kind": "semantic_id", "id": "todo.item.1.done"},
            "action": {"kind": "activate"},
            "precondition": LATEST,
        }
        latencies = []
        for _ in range(calls):
            start = time.perf_counter()
            receipt = client.call("perform_action", toggle)
            latencies.append(time.perf_counter() - start)
            assert receipt["after"] != receipt["before"], receipt
        return latencies
    finally:
        client.close()


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def _http_load(url: str, sessions: int, actions: int) -> tuple[int, int, float, list[str]]:
    """`sessions` concurrent MCP sessions, each `actions` durable perform_action calls."""
    import httpx2 as httpx

    errors = 0
    done = 0
    samples: list[str] = []
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": PROTOCOL,
    }

    def failed(why: str) -> None:
        nonlocal errors
        errors += 1
        if len(samples) < 5:
            samples.append(why)

    async def post(client: Any, body: dict[str, Any], extra: dict[str, str]) -> Any:
        return await client.post(url, json=body, headers={**headers, **extra})

    async def session(client: Any, index: int) -> None:
        nonlocal done
        try:
            init = await post(
                client,
                {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INITIALIZE},
                {},
            )
            session_id = init.headers.get("mcp-session-id")
            if init.status_code != 200 or session_id is None:
                failed(f"initialize: HTTP {init.status_code}")
                return
            extra = {"mcp-session-id": session_id}
            await post(client, {"jsonrpc": "2.0", "method": "notifications/initialized"}, extra)
        except Exception as error:
            failed(f"initialize: {type(error).__name__}: {error}")
            return
        for i in range(actions):
            # Add one item, then toggle it: the view stays the same size all along.
            if i == 0:
                target, action = "todo.input", {"kind": "set_text", "value": f"task {index}"}
            elif i == 1:
                target, action = "todo.input", {"kind": "submit"}
            else:
                target, action = "todo.item.1.done", {"kind": "activate"}
            body = {
                "jsonrpc": "2.0",
                "id": i + 1,
                "method": "tools/call",
                "params": {
                    "name": "perform_action",
                    "arguments": {
                        "target": {"kind": "semantic_id", "id": target},
                        "action": action,
                        "precondition": LATEST,
                    },
                },
            }
            try:
                response = await post(client, body, extra)
                reply = response.json()
                if response.status_code != 200 or "error" in reply:
                    failed(f"HTTP {response.status_code}: {reply.get('error')}")
                elif reply["result"]["isError"]:
                    failed(f"tool error: {reply['result']['structuredContent']}")
                else:
                    done += 1
            except Exception as error:
                failed(f"{type(error).__name__}: {error}")

    limits = httpx.Limits(max_connections=sessions, max_keepalive_connections=sessions)
    async with httpx.AsyncClient(limits=limits, timeout=120.0) as client:
        start = time.perf_counter()
        async with anyio.create_task_group() as group:
            for index in range(sessions):
                group.start_soon(session, client, index)
        elapsed = time.perf_counter() - start
    return errors, done, elapsed, samples


def _http(
    tmp: str, sessions: int, actions: int, stderr: IO[bytes]
) -> tuple[int, int, float, list[str]]:
    port = _free_port()
    argv = [*_ours(TODO, os.path.join(tmp, "http.db")), "--http", f"127.0.0.1:{port}"]
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=stderr, stderr=stderr)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("the HTTP server did not start") from None
                time.sleep(0.05)
        return anyio.run(_http_load, f"http://127.0.0.1:{port}/mcp", sessions, actions)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _starts(tmp: str, starts: int, stderr: IO[bytes]) -> dict[str, float]:
    """Median seconds from spawn to the initialize answer, each side taking turns."""
    times: dict[str, list[float]] = {"ours": [], "sdk": []}
    for i in range(starts):
        for side, argv in (
            ("ours", _ours(COUNTER, os.path.join(tmp, f"start-ours-{i}.db"))),
            ("sdk", _sdk(COUNTER, os.path.join(tmp, f"start-sdk-{i}.db"))),
        ):
            client = Client(argv, stderr)
            times[side].append(client.initialize())
            client.close()
    return {side: statistics.median(values) for side, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--rounds", type=int, default=6, help="turns each stdio server takes")
    parser.add_argument("--calls", type=int, default=150, help="calls per kind per round")
    parser.add_argument("--latency-calls", type=int, default=1000)
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--actions", type=int, default=100)
    parser.add_argument("--starts", type=int, default=7)
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="semledger-bench-mcp-")
    try:
        with open(os.path.join(tmp, "stderr.log"), "wb") as stderr:
            rates = _stdio_rates(tmp, args.rounds, args.calls, stderr)
            latencies = _todo_latencies(tmp, args.latency_calls, stderr)
            errors, done, elapsed, samples = _http(tmp, args.sessions, args.actions, stderr)
            starts = _starts(tmp, args.starts, stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    figures: dict[str, Any] = {
        "stdio_calls_per_s_over_sdk": rates["ours_read_unchanged"] / rates["sdk_read_unchanged"],
        "stdio_full_read_calls_per_s_over_sdk": rates["ours_read_full"] / rates["sdk_read_full"],
        "stdio_perform_action_calls_per_s_over_sdk": (
            rates["ours_perform_action"] / rates["sdk_perform_action"]
        ),
        "stdio_perform_action_sent_ahead_over_one_at_a_time": (
            rates["ours_perform_action_ahead"] / rates["ours_perform_action"]
        ),
        "stdio_perform_action_sent_ahead_calls_per_s_over_sdk": (
            rates["ours_perform_action_ahead"] / rates["sdk_perform_action_ahead"]
        ),
        "p99_perform_action_ms": _percentile(latencies, 0.99) * 1000,
        "http_200_sessions_errors": errors,
        "server_start_ms_over_sdk": starts["ours"] / starts["sdk"],
        **{f"{key}_calls_per_s": round(value) for key, value in rates.items()},
        "p50_perform_action_ms": statistics.median(latencies) * 1000,
        "http_actions_ok": done,
        "http_actions_per_s": round(done / elapsed),
        "ours_server_start_ms": starts["ours"] * 1000,
        "sdk_server_start_ms": starts["sdk"] * 1000,
    }
    goals = {
        "stdio_calls_per_s_over_sdk": "at least 2",
        "http_200_sessions_errors": "exactly 0",
        "server_start_ms_over_sdk": "at most 0.5",
    }
    notes = [
        "- stdio: `semledger serve semledger.examples.counter:app` against"
        " `bench/_sdk_server.py` (the SDK's low-level `Server` on its stdio transport, run by"
        " anyio on Trio, calling the same `SessionActor` + `LogWriter` + durable"
        " `SqliteRecorder` through `RuntimeAgentHost`, same envelopes; checked equal on a"
        " full read). One raw NDJSON client, sequential round trips, the servers taking"
        f" turns for {args.rounds} rounds of {args.calls} calls per kind.",
        "- Headline `stdio_calls_per_s_over_sdk`: `read_semantics` with `since` = the current"
        " generation (an `unchanged` answer, so the MCP layer is what is measured);"
        " `stdio_full_read_*` is a plain full read of the counter; `stdio_perform_action_*`"
        " a durable `activate counter.increment` with a latest precondition;"
        f" `*_perform_action_ahead` the same calls sent {AHEAD} ahead of their answers (each"
        " next request written as soon as an answer arrives; the SDK's server may answer"
        " out of order, ours answers in order).",
        f"- Latency: {args.latency_calls} durable `activate todo.item.1.done` (a toggle) on"
        " `semledger serve semledger.examples.todo:app`, one at a time.",
        f"- HTTP: `semledger serve semledger.examples.todo:app --http`, {args.sessions}"
        f" concurrent sessions x {args.actions} `perform_action` (set_text and submit on"
        " `todo.input`, then toggles of `todo.item.1.done`) with httpx2 (one `AsyncClient`,"
        " a connection per session); an error is a transport failure, a non-200 answer, a"
        " JSON-RPC error or a tool result with `isError`."
        + (f" First errors: {'; '.join(samples)}" if samples else ""),
        f"- Start: spawn to the `initialize` answer, median of {args.starts} starts each,"
        " taking turns, each on a fresh log file.",
    ]
    emit("mcp", figures, goals, notes, as_json=args.json)


if __name__ == "__main__":
    main()
