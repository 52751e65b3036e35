"""The stdio NDJSON loop (`run_stdio`), in process over memory streams and as `semledger serve`.

In process, the loop runs over a real `SessionActor` (the counter app, logged to a
`MemoryRecorder`) in a Trio loop of its own thread, so a hypothesis state machine can feed it
bytes step by step: requests, notifications, blank lines and garbage, cut at random byte
positions (inside multi-byte characters too).
"""

from __future__ import annotations

import collections
import functools
import itertools
import json
import logging
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio
import trio.testing
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule

from semledger.actors import LogWriter, SessionActor
from semledger.eventlog import (
    ActionRequested,
    CallRefused,
    MemoryRecorder,
    SessionEnded,
    SqliteRecorder,
)
from semledger.examples import counter
from semledger.hosts import Router, handle
from semledger.hosts._session_host import RuntimeAgentHost
from semledger.hosts._stdio import run_stdio
from semledger.runtime._reads import Unchanged

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from stdio_client import cli_in_process

COUNTER = "semledger.examples.counter:app"
LATEST_WIRE = {"kind": "latest"}
SEMLEDGER = Path(sys.executable).with_name("semledger")

Check = Callable[[dict[str, Any]], None]


def _semledger(*args: str) -> list[str]:
    if SEMLEDGER.exists():
        return [str(SEMLEDGER), *args]
    return [sys.executable, "-m", "semledger", *args]


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message, ensure_ascii=False).encode()


def _tool_call(request_id: int | str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


def _act(semantic_id: str, precondition: dict[str, Any]) -> dict[str, Any]:
    return {
        "target": {"kind": "semantic_id", "id": semantic_id},
        "action": {"kind": "activate"},
        "precondition": precondition,
    }


def _envelope(reply: dict[str, Any]) -> dict[str, Any]:
    result = reply["result"]
    envelope: dict[str, Any] = result["structuredContent"]
    assert result["isError"] is (not envelope["ok"])
    return envelope


class StdioServer:
    """`run_stdio` over a session actor, in a Trio loop on a thread of its own."""

    def __init__(self) -> None:
        self.recorder = MemoryRecorder()
        self.reason: str | None = None
        self.crash: BaseException | None = None
        self._pending = b""
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        assert self._ready.wait(30), "the stdio loop did not start"
        if self.crash is not None:
            raise self.crash

    def _run(self) -> None:
        try:
            trio.run(self._main)
        except BaseException as error:
            self.crash = error
            self._ready.set()

    async def _main(self) -> None:
        self.token = trio.lowlevel.current_trio_token()
        self.to_loop, loop_input = trio.testing.memory_stream_one_way_pair()
        loop_output, self.from_loop = trio.testing.memory_stream_one_way_pair()
        async with trio.open_nursery() as nursery:
            writer = await nursery.start(LogWriter(self.recorder).run)
            actor = SessionActor("stdio", counter.app, COUNTER, writer, self.recorder)
            await nursery.start(actor.run)
            self._ready.set()
            self.reason = await run_stdio(
                Router(),
                RuntimeAgentHost(actor),
                receive=loop_input,
                send=loop_output,
            )
            await loop_output.aclose()
            nursery.cancel_scope.cancel()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive() and self.reason is None

    def write(self, chunks: list[bytes]) -> None:
        """Send each chunk and let the loop digest it before the next one."""

        async def go() -> None:
            for chunk in chunks:
                await self.to_loop.send_all(chunk)
                await trio.testing.wait_all_tasks_blocked()

        trio.from_thread.run(go, trio_token=self.token)

    def read(self, count: int) -> list[dict[str, Any]]:
        """The next `count` replies (each must be one JSON object on one line)."""

        async def go() -> list[dict[str, Any]]:
            with trio.fail_after(20):
                while self._pending.count(b"\n") < count:
                    chunk = await self.from_loop.receive_some()
                    assert chunk, f"output ended with {count} replies expected"
                    self._pending += chunk
            *lines, self._pending = self._pending.split(b"\n", count)
            return [json.loads(line) for line in lines]

        return trio.from_thread.run(go, trio_token=self.token)

    def end_of_input(self) -> bytes:
        """Close the loop's input; everything it wrote, read once `run_stdio` has returned."""

        async def go() -> bytes:
            await self.to_loop.aclose()
            rest = self._pending
            with trio.fail_after(20):
                while chunk := await self.from_loop.receive_some():
                    rest += chunk
            return rest

        rest = trio.from_thread.run(go, trio_token=self.token)
        self._thread.join(30)
        assert not self._thread.is_alive(), "run_stdio did not return at end of input"
        if self.crash is not None:
            raise self.crash
        return rest


GARBAGE: list[tuple[bytes, int]] = [
    (b"not json", -32700),
    (b"{", -32700),
    (b'{"jsonrpc": "2.0", "id": 1,', -32700),
    (b"\xff\xfe not utf-8", -32700),
    (b"NaN", -32700),
    (b"[]", -32600),
    (b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]', -32600),
    (b"42", -32600),
    (b'"a string"', -32600),
    (b'{"jsonrpc": "2.0"}', -32600),
    (b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', -32600),
    (b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', -32600),
]
NOTIFICATIONS = [
    b'{"jsonrpc": "2.0", "method": "notifications/initialized"}',
    b'{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}',
    b'{"jsonrpc": "2.0", "method": "notifications/unknown \xe2\x9c\x93"}',
    b'{"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "perform_action"}}',
]
BLANKS = [b"", b"   ", b"\t", b"\r"]
REQUESTS = [
    "ping",
    "tools/list",
    "initialize",
    "unknown",
    "read",
    "read_since",
    "increment",
    "increment_stale",
    "decrement",
]
ITEM = st.one_of(
    st.sampled_from(REQUESTS).map(lambda kind: ("request", kind)),
    st.sampled_from(range(len(GARBAGE))).map(lambda index: ("garbage", index)),
    st.sampled_from(NOTIFICATIONS).map(lambda line: ("notification", line)),
    st.sampled_from(BLANKS).map(lambda line: ("blank", line)),
)


class StdioLoopMachine(RuleBasedStateMachine):
    """Every request answered exactly once, with its id, in order; nothing else ever."""

    def __init__(self) -> None:
        super().__init__()
        self.server = StdioServer()
        self.generation = 1
        self.count = 0
        self.initialized = False
        self.next_id = 0
        self.actions = 0
        self.ended = False
        self.sends = 0

    def _request(self, kind: str) -> tuple[bytes, Check]:
        self.next_id += 1
        request_id: int | str = self.next_id if self.next_id % 2 else f"req-{self.next_id}-é✓"
        generation = self.generation

        def answers(reply: dict[str, Any]) -> None:
            assert reply["jsonrpc"] == "2.0"
            assert reply["id"] == request_id, reply

        def result(reply: dict[str, Any]) -> dict[str, Any]:
            answers(reply)
            assert "result" in reply, reply
            outcome: dict[str, Any] = reply["result"]
            return outcome

        def error(code: int) -> Check:
            def check(reply: dict[str, Any]) -> None:
                answers(reply)
                assert reply["error"]["code"] == code, reply

            return check

        def envelope(reply: dict[str, Any]) -> dict[str, Any]:
            result(reply)
            return _envelope(reply)

        def receipt(before: int) -> Check:
            def check(reply: dict[str, Any]) -> None:
                value = envelope(reply)["value"]
                assert value == {
                    "before": str(before),
                    "after": str(before + 1),
                    "pending_work": False,
                }

            return check

        def rejected(code: str) -> Check:
            def check(reply: dict[str, Any]) -> None:
                assert envelope(reply)["error"]["code"] == code

            return check

        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
        check: Check
        if kind == "ping":
            message["method"] = "ping"

            def check(reply: dict[str, Any]) -> None:
                assert result(reply) == {}

        elif kind == "tools/list":
            message["method"] = "tools/list"

            def check(reply: dict[str, Any]) -> None:
                names = [tool["name"] for tool in result(reply)["tools"]]
                assert names == ["read_semantics", "perform_action"]

        elif kind == "initialize":
            message.update(
                method="initialize",
                params={
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "hypothesis", "version": "1"},
                },
            )
            if self.initialized:
                check = error(-32600)
            else:
                self.initialized = True

                def check(reply: dict[str, Any]) -> None:
                    assert result(reply)["protocolVersion"] == "2025-06-18"

        elif kind == "unknown":
            message["method"] = "resources/list"
            check = error(-32601)
        elif kind == "read":
            message = _tool_call(request_id, "read_semantics", {})

            expected_count = str(self.count)

            def check(reply: dict[str, Any]) -> None:
                value = envelope(reply)["value"]
                assert (value["kind"], value["generation"]) == ("full", str(generation))
                count = next(n for n in value["nodes"] if n["semantic_id"] == "counter.value")
                assert count["value"] == expected_count
        elif kind == "read_since":
            message = _tool_call(request_id, "read_semantics", {"since": str(generation)})

            def check(reply: dict[str, Any]) -> None:
                assert envelope(reply)["value"] == {
                    "kind": "unchanged",
                    "generation": str(generation),
                }

        elif kind == "increment":
            message = _tool_call(
                request_id, "perform_action", _act("counter.increment", {"kind": "latest"})
            )
            check = receipt(generation)
            self.actions += 1
            self.generation += 1
            self.count += 1
        elif kind == "increment_stale":
            stale = {"kind": "exact", "generation": str(generation - 1)}
            message = _tool_call(request_id, "perform_action", _act("counter.increment", stale))
            check = rejected("stale_generation")
            self.actions += 1
        else:
            message = _tool_call(
                request_id, "perform_action", _act("counter.decrement", {"kind": "latest"})
            )
            self.actions += 1
            if self.count == 0:
                check = rejected("target_disabled")
            else:
                check = receipt(generation)
                self.generation += 1
                self.count -= 1
        return _line(message), check

    def _item(self, item: tuple[str, Any]) -> tuple[bytes, Check | None]:
        kind, what = item
        if kind == "request":
            return self._request(what)
        if kind == "garbage":
            line, code = GARBAGE[what]

            def check(reply: dict[str, Any]) -> None:
                assert reply["id"] is None, reply
                assert reply["error"]["code"] == code, reply

            return line, check
        return what, None

    def _script(
        self, data: st.DataObject, items: list[tuple[str, Any]]
    ) -> tuple[bytes, list[Check]]:
        payload = b""
        checks: list[Check] = []
        for item in items:
            line, check = self._item(item)
            payload += line + data.draw(st.sampled_from([b"\n", b"\r\n"]))
            if check is not None:
                checks.append(check)
        return payload, checks

    @staticmethod
    def _cut(data: st.DataObject, payload: bytes) -> list[bytes]:
        cuts = sorted(
            set(data.draw(st.lists(st.integers(1, max(len(payload) - 1, 1)), max_size=4)))
        )
        bounds = [0, *cuts, len(payload)]
        return [payload[a:b] for a, b in itertools.pairwise(bounds) if a < b]

    @precondition(lambda self: not self.ended)
    @rule(data=st.data(), items=st.lists(ITEM, min_size=1, max_size=6))
    def send(self, data: st.DataObject, items: list[tuple[str, Any]]) -> None:
        payload, checks = self._script(data, items)
        self.server.write(self._cut(data, payload))
        for check, reply in zip(checks, self.server.read(len(checks)), strict=True):
            check(reply)
        assert self.server.alive
        self.sends += 1

    @precondition(lambda self: not self.ended and self.sends >= 3)
    @rule(data=st.data(), items=st.lists(ITEM, max_size=6), last=st.sampled_from(REQUESTS))
    def end_of_input(self, data: st.DataObject, items: list[tuple[str, Any]], last: str) -> None:
        """Lines still unanswered and an unterminated last request, then end of input."""
        payload, checks = self._script(data, items)
        line, check = self._request(last)
        self.server.write(self._cut(data, payload + line))
        self._finish([*checks, check])

    @precondition(lambda self: self.ended)
    @rule()
    def stays_ended(self) -> None:
        assert not self.server.alive
        assert self.server.reason == "end of input"

    def _finish(self, checks: list[Check]) -> None:
        self.ended = True
        rest = self.server.end_of_input()
        assert self.server.reason == "end of input"
        assert rest.endswith(b"\n") or not rest
        replies = [json.loads(line) for line in rest.splitlines()]
        assert len(replies) == len(checks), replies
        for check, reply in zip(checks, replies, strict=True):
            check(reply)
        requested = [
            e for _r, e in self.server.recorder.events("stdio") if isinstance(e, ActionRequested)
        ]
        assert len(requested) == self.actions

    def teardown(self) -> None:
        if not self.ended:
            self._finish([])


StdioLoopMachine.TestCase.settings = settings(
    max_examples=50,
    stateful_step_count=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_stdio_loop_answers_every_request_once_in_order = StdioLoopMachine.TestCase


class CountingWriter(LogWriter):
    """Counts the actions sessions hand it."""

    actions = 0

    def submit(self, events: Any, *, after: Any = None) -> Any:
        self.actions += sum(isinstance(e.event, ActionRequested) for e in events)
        return super().submit(events, after=after)


class CountingRecorder(MemoryRecorder):
    """Counts its transactions. With ``hold_first_action``, the first one that holds an
    action is held until the session has handed the writer a second action: a session
    that answers one call at a time never does, since it waits for the first to be durable.
    The count is of actions handed, not of batches handed after this transaction began: on
    a busy machine the second may be handed before it begins, or be in it."""

    def __init__(self, *, hold_first_action: bool = False) -> None:
        super().__init__()
        self.appends = 0
        self.writer: CountingWriter | None = None
        self.hold = hold_first_action
        self.overlapped: bool | None = None

    def append(self, events: Any) -> Any:
        self.appends += 1
        actions = sum(isinstance(e.event, ActionRequested) for e in events)
        if self.hold and actions:
            self.hold = False
            assert self.writer is not None
            deadline = time.monotonic() + 30
            while actions == 1 and self.writer.actions == 1 and time.monotonic() < deadline:
                time.sleep(0.001)
            self.overlapped = self.writer.actions > 1
        return super().append(events)


async def _serve(
    data: bytes, host_for: Callable[[SessionActor], Any], *, hold_first_action: bool = False
) -> Any:
    """The replies `run_stdio` writes for `data` (sent at once, then end of input), and the
    recorder that logged them (see `CountingRecorder`)."""
    recorder = CountingRecorder(hold_first_action=hold_first_action)
    to_loop, loop_input = trio.testing.memory_stream_one_way_pair()
    loop_output, from_loop = trio.testing.memory_stream_one_way_pair()
    await to_loop.send_all(data)
    await to_loop.aclose()
    async with trio.open_nursery() as nursery:
        writer = recorder.writer = await nursery.start(CountingWriter(recorder).run)
        actor = SessionActor("ahead", counter.app, COUNTER, writer, recorder)
        await nursery.start(actor.run)
        before = recorder.appends
        reason = await run_stdio(Router(), host_for(actor), receive=loop_input, send=loop_output)
        recorder.appends -= before
        nursery.cancel_scope.cancel()
    assert reason == "end of input"
    await loop_output.aclose()
    output = b""
    while chunk := await from_loop.receive_some():
        output += chunk
    return [json.loads(line) for line in output.splitlines()], recorder


async def test_end_of_input_answers_and_flushes_every_line_already_read() -> None:
    lines = [
        _line(_tool_call(i, "perform_action", _act("counter.increment", {"kind": "latest"})))
        for i in range(1, 51)
    ]
    replies, _ = await _serve(b"\n".join(lines), RuntimeAgentHost)  # the last line unended
    assert [reply["id"] for reply in replies] == list(range(1, 51))
    assert [_envelope(r)["value"]["after"] for r in replies] == [str(g) for g in range(2, 52)]


async def test_a_line_over_the_limit_is_a_parse_error_and_the_next_line_is_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A line longer than MAX_LINE is answered once with -32700 and skipped to its end
    without being held; lines under the limit that span many reads are read whole. The
    answer carries the line's id when it comes before the member that made it too long
    (before, always null: an SDK client waited for its answer forever)."""
    import semledger.hosts._stdio as stdio

    monkeypatch.setattr(stdio, "MAX_LINE", 100_000)
    long_ping = {"jsonrpc": "2.0", "id": "long", "method": "ping", "params": {"_": "x" * 90_000}}
    lines = [
        b'{"jsonrpc": "2.0", "id": "huge", "method": "ping", "params": "' + b"y" * 350_000,
        _line({"jsonrpc": "2.0", "id": "after", "method": "ping"}),
        _line(long_ping),
        _line({"jsonrpc": "2.0", "id": "just over", "method": "ping", "params": "w" * 99_990}),
        b'{"jsonrpc": "2.0", "method": "ping", "params": "' + b"v" * 200_000 + b'", "id": 7}',
        b'{"id": "unended and huge"' + b"z" * 250_000,
    ]
    replies, _ = await _serve(b"\n".join(lines), RuntimeAgentHost)
    too_long = {"code": -32700, "message": "Parse error: the line is over 100000 bytes"}
    assert replies == [
        {"jsonrpc": "2.0", "id": "huge", "error": too_long},
        {"jsonrpc": "2.0", "id": "after", "result": {}},
        {"jsonrpc": "2.0", "id": "long", "result": {}},
        {"jsonrpc": "2.0", "id": "just over", "error": too_long},
        {"jsonrpc": "2.0", "id": None, "error": too_long},  # its id comes after the cut
        {"jsonrpc": "2.0", "id": None, "error": too_long},  # not JSON by its head: SPEC
    ]


async def test_a_crlf_line_of_exactly_the_limit_is_read_whole_however_it_arrives(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The CR of a CRLF line end is not part of the line: a line of exactly MAX_LINE bytes
    was refused as "over" the limit when it ended in CRLF, and accepted when it ended in LF
    (and over HTTP). The first line here arrives cut between its CR and its LF."""
    import semledger.hosts._stdio as stdio

    monkeypatch.setattr(stdio, "MAX_LINE", 1000)

    def ping(request_id: str) -> bytes:
        head = _line({"jsonrpc": "2.0", "id": request_id, "method": "ping", "params": {"_": ""}})
        line = head.replace(b'"_": ""', b'"_": "' + b"x" * (1000 - len(head)) + b'"')
        assert len(line) == 1000
        return line

    monkeypatch.setattr(stdio, "_CHUNK", 1001)  # the first read ends on the first line's CR
    replies, _ = await _serve(ping("cut") + b"\r\n" + ping("whole") + b"\r\n", RuntimeAgentHost)
    assert replies == [
        {"jsonrpc": "2.0", "id": "cut", "result": {}},
        {"jsonrpc": "2.0", "id": "whole", "result": {}},
    ]


async def test_the_loop_stops_when_nobody_reads_its_output() -> None:
    recorder = MemoryRecorder()
    to_loop, loop_input = trio.testing.memory_stream_one_way_pair()
    loop_output, from_loop = trio.testing.memory_stream_one_way_pair()
    await from_loop.aclose()
    await to_loop.send_all(_line({"jsonrpc": "2.0", "id": 1, "method": "ping"}) + b"\n")
    async with trio.open_nursery() as nursery:
        writer = await nursery.start(LogWriter(recorder).run)
        actor = SessionActor("gone", counter.app, COUNTER, writer, recorder)
        await nursery.start(actor.run)
        reason = await run_stdio(
            Router(), RuntimeAgentHost(actor), receive=loop_input, send=loop_output
        )
        nursery.cancel_scope.cancel()
    assert reason == "output closed"


def test_serve_ends_the_session_when_its_stdout_is_closed(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    process = subprocess.Popen(
        _semledger("serve", COUNTER, "--db", str(db), "--session", "deaf"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None
    process.stdout.close()
    request = _tool_call(1, "perform_action", _act("counter.increment", {"kind": "latest"}))
    try:
        _stdout, stderr = process.communicate(_line(request) + b"\n", timeout=60)
    except BrokenPipeError:
        stderr = b""
        process.wait(timeout=60)
    assert process.returncode == 0, stderr.decode()
    with SqliteRecorder(db) as recorder:
        events = [event for _record, event in recorder.events("deaf")]
    assert events[-1] == SessionEnded("output closed")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_serve_logs_why_its_output_failed_not_that_it_was_closed_and_exits_1(
    tmp_path: Path,
) -> None:
    # A stdout on a full disk (/dev/full: every write is ENOSPC) was logged as "output
    # closed", blaming a client that never went away, and serve exited 0.
    db = tmp_path / "log.db"
    request = _tool_call(1, "perform_action", _act("counter.increment", {"kind": "latest"}))
    with open("/dev/full", "wb") as full:
        process = subprocess.run(
            _semledger("serve", COUNTER, "--db", str(db), "--session", "full"),
            input=_line(request) + b"\n",
            stdout=full,
            stderr=subprocess.PIPE,
            timeout=60,
        )
    stderr = process.stderr.decode()
    reason = "output could not be written: No space left on device"
    assert f"session 'full' ended: {reason}" in stderr, stderr
    assert process.returncode == 1  # the agent may have missed answers: the session failed
    with SqliteRecorder(db) as recorder:
        events = [event for _record, event in recorder.events("full")]
    assert events[-1] == SessionEnded(reason)


def test_serve_answers_200_piped_requests_then_exits_0(tmp_path: Path) -> None:
    messages: list[dict[str, Any]] = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "pipe", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    for i in range(2, 201):
        if i % 2:
            messages.append(_tool_call(i, "read_semantics", {}))
        else:
            messages.append(
                _tool_call(i, "perform_action", _act("counter.increment", {"kind": "latest"}))
            )
    stdin = b"".join(_line(m) + b"\n" for m in messages)
    done = subprocess.run(
        _semledger("serve", COUNTER, "--db", str(tmp_path / "log.db"), "--session", "piped"),
        input=stdin,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    lines = done.stdout.split(b"\n")
    assert lines[-1] == b""
    replies = [json.loads(line) for line in lines[:-1]]
    assert all(isinstance(reply, dict) and reply["jsonrpc"] == "2.0" for reply in replies)
    assert [reply["id"] for reply in replies] == list(range(1, 201))
    receipts = [_envelope(reply)["value"] for reply in replies[1::2]]
    assert [r["after"] for r in receipts] == [str(g) for g in range(2, 102)]
    last_read = _envelope(replies[-2])["value"]
    count = next(n for n in last_read["nodes"] if n["semantic_id"] == "counter.value")
    assert count["value"] == "99"
    with SqliteRecorder(tmp_path / "log.db") as recorder:
        events = [event for _record, event in recorder.events("piped")]
    assert sum(isinstance(e, ActionRequested) for e in events) == 100
    assert events[-1] == SessionEnded("end of input")


def _lines_of(stream: Any) -> queue.Queue[bytes]:
    """Each line `stream` gives, as it comes, read on a thread of its own (b"" at its end).

    Blocking ``readline`` calls on a thread, not ``select`` then ``readline``: a select on
    the pipe misses the lines a ``readline`` already took into its buffer with the first."""
    lines: queue.Queue[bytes] = queue.Queue()

    def read() -> None:
        for line in iter(stream.readline, b""):
            lines.put(line)
        lines.put(b"")

    threading.Thread(target=read, daemon=True).start()
    return lines


@pytest.mark.parametrize("writes", ["one write", "a write a line"])
def test_serve_answers_calls_sent_ahead_while_its_input_stays_open(
    writes: str, tmp_path: Path
) -> None:
    """Calls sent ahead without waiting are each answered once durable, with nothing more
    to read: no answer waits for another line, or for the end of input (the test above)."""
    db = tmp_path / "log.db"
    process = subprocess.Popen(
        _semledger("serve", COUNTER, "--db", str(db), "--session", "ahead"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    assert process.stderr is not None
    replies = _lines_of(process.stdout)
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "ahead", "version": "1"},
        },
    }
    # Each action names the generation the one before it makes.
    calls = [
        _tool_call(
            g, "perform_action", _act("counter.increment", {"kind": "exact", "generation": str(g)})
        )
        for g in range(1, 9)
    ]
    calls.append(_tool_call(9, "read_semantics", {}))
    try:
        process.stdin.write(_line(initialize) + b"\n")
        process.stdin.flush()
        assert json.loads(replies.get(timeout=60))["id"] == 0
        lines = [_line({"jsonrpc": "2.0", "method": "notifications/initialized"})]
        lines += [_line(call) for call in calls]
        if writes == "one write":
            process.stdin.write(b"".join(line + b"\n" for line in lines))
            process.stdin.flush()
        else:
            for line in lines:
                process.stdin.write(line + b"\n")
                process.stdin.flush()
        answered = []
        for _ in calls:  # stdin stays open all the while
            try:
                answered.append(json.loads(replies.get(timeout=60)))
            except queue.Empty:
                pytest.fail(f"answered {[a['id'] for a in answered]}, then nothing for 60 s")
        process.stdin.close()
        process.wait(timeout=60)
        stderr = process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, stderr.decode()
    assert [reply["id"] for reply in answered] == list(range(1, 10))
    receipts = [_envelope(reply)["value"] for reply in answered[:-1]]
    assert [r["after"] for r in receipts] == [str(g) for g in range(2, 10)]
    read = _envelope(answered[-1])["value"]
    count = next(n for n in read["nodes"] if n["semantic_id"] == "counter.value")
    assert count["value"] == "8"
    with SqliteRecorder(db) as recorder:
        events = [event for _record, event in recorder.events("ahead")]
    assert sum(isinstance(e, ActionRequested) for e in events) == 8
    assert events[-1] == SessionEnded("end of input")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_ends_the_serving_process_cleanly(signum: signal.Signals, tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    process = subprocess.Popen(
        _semledger("serve", COUNTER, "--db", str(db), "--session", "signalled"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    assert process.stderr is not None
    try:
        request = _tool_call(1, "perform_action", _act("counter.increment", {"kind": "latest"}))
        process.stdin.write(_line(request) + b"\n")
        process.stdin.flush()
        reply = json.loads(process.stdout.readline())
        assert _envelope(reply)["ok"] is True
        process.send_signal(signum)
        process.wait(timeout=30)
        stdout, stderr = process.stdout.read(), process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, stderr.decode()
    assert stdout == b""
    with SqliteRecorder(db) as recorder:
        events = [event for _record, event in recorder.events("signalled")]
    assert events[-1] == SessionEnded(f"signal {signum.name}")


HUNG_SERVER = """
import sys
import trio
from semledger.hosts import Router, handle
from semledger.hosts._stdio import run_stdio, stop_on_signals

class Hung:
    async def read_semantics(self, since):
        print("reading", file=sys.stderr, flush=True)
        await trio.sleep_forever()

    async def perform_action(self, *args):
        await trio.sleep_forever()

async def main():
    async with stop_on_signals() as stop:
        with stop.scope:
            await run_stdio(Router(), Hung())

trio.run(main)
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_second_signal_stops_a_process_whose_call_never_finishes(
    signum: signal.Signals,
) -> None:
    """The first signal waits for the calls in flight to be answered; when one never is
    (a surface whose browser hangs), a second ends the process as the signal would."""
    process = subprocess.Popen(
        [sys.executable, "-c", HUNG_SERVER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None
    assert process.stderr is not None
    try:
        process.stdin.write(_line(_tool_call(1, "read_semantics", {})) + b"\n")
        process.stdin.flush()
        assert process.stderr.readline() == b"reading\n"  # the call is in flight
        process.send_signal(signum)
        with pytest.raises(subprocess.TimeoutExpired):
            process.wait(timeout=0.5)  # still waiting for that call, as it should
        process.send_signal(signum)
        process.wait(timeout=30)
        stderr = process.stderr.read().decode()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == -signum, stderr
    assert f"{signum.name} again: stopping at once" in stderr


async def test_lines_sent_ahead_reach_the_session_in_order_and_share_log_transactions() -> None:
    # Each action names the exact generation the one before it makes: any reordering of the
    # calls would make one of them stale.
    exact = [{"kind": "exact", "generation": str(g)} for g in range(1, 41)]
    lines = [
        _line(_tool_call(g, "perform_action", _act("counter.increment", exact[g - 1])))
        for g in range(1, 41)
    ]
    lines.insert(20, _line({"jsonrpc": "2.0", "id": "ping", "method": "ping"}))
    lines.insert(30, b"not json")
    replies, recorder = await _serve(
        b"\n".join(lines) + b"\n", RuntimeAgentHost, hold_first_action=True
    )
    ids = [reply.get("id") for reply in replies]
    assert ids == [*range(1, 21), "ping", *range(21, 30), None, *range(30, 41)]
    actions = [r for r in replies if isinstance(r.get("id"), int)]
    assert [_envelope(r)["value"]["after"] for r in actions] == [str(g) for g in range(2, 42)]
    # While the first action was being written, the next call was already handled.
    assert recorder.overlapped


class _OneAtATime:
    """A host that does not allow overlapping calls: delegates to the session, and notes
    how many of its calls ever ran at once."""

    def __init__(self, actor: SessionActor) -> None:
        self.inner = RuntimeAgentHost(actor)
        self.running = self.most = 0

    async def read_semantics(self, since: int | None) -> Any:
        return await self.inner.read_semantics(since)

    async def perform_action(self, *args: Any) -> Any:
        self.running += 1
        self.most = max(self.most, self.running)
        try:
            await trio.sleep(0.001)
            return await self.inner.perform_action(*args)
        finally:
            self.running -= 1


async def test_a_host_that_does_not_allow_overlapping_calls_gets_one_call_at_a_time() -> None:
    hosts: list[_OneAtATime] = []

    def make(actor: SessionActor) -> _OneAtATime:
        hosts.append(_OneAtATime(actor))
        return hosts[-1]

    lines = [
        _line(_tool_call(i, "perform_action", _act("counter.increment", {"kind": "latest"})))
        for i in range(1, 21)
    ]
    replies, recorder = await _serve(b"\n".join(lines) + b"\n", make)
    assert [reply["id"] for reply in replies] == list(range(1, 21))
    assert hosts[0].most == 1
    assert recorder.appends == 20


def _initialize(version: str, request_id: int | str = 0) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "batching", "version": "1"},
        },
    }


async def test_a_batch_s_calls_reach_the_session_in_order_and_share_log_transactions() -> None:
    """As calls sent ahead on lines of their own do; the batch's one array is written in
    its place, before the answer to the line after it, which needs no call."""
    exact = [{"kind": "exact", "generation": str(g)} for g in range(1, 41)]
    batch: list[object] = [
        _tool_call(g, "perform_action", _act("counter.increment", exact[g - 1]))
        for g in range(1, 41)
    ]
    batch.insert(20, {"jsonrpc": "2.0", "id": "ping", "method": "ping"})
    batch.insert(25, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    batch.insert(30, 7)
    lines = [
        _line(_initialize("2025-03-26")),
        json.dumps(batch).encode(),
        _line({"jsonrpc": "2.0", "id": "after", "method": "ping"}),
    ]
    replies, recorder = await _serve(
        b"\n".join(lines) + b"\n", RuntimeAgentHost, hold_first_action=True
    )
    initialized, answers, after = replies
    assert initialized["result"]["protocolVersion"] == "2025-03-26"
    assert after == {"jsonrpc": "2.0", "id": "after", "result": {}}
    ids = [answer["id"] for answer in answers]
    assert ids == [*range(1, 21), "ping", *range(21, 29), None, *range(29, 41)]
    assert answers[29]["error"]["code"] == -32600
    actions = [a for a in answers if isinstance(a["id"], int)]
    assert [_envelope(a)["value"]["after"] for a in actions] == [str(g) for g in range(2, 42)]
    assert recorder.overlapped


async def test_a_batch_s_calls_reach_a_host_without_overlapping_calls_one_at_a_time() -> None:
    hosts: list[_OneAtATime] = []

    def make(actor: SessionActor) -> _OneAtATime:
        hosts.append(_OneAtATime(actor))
        return hosts[-1]

    batch = [
        _tool_call(i, "perform_action", _act("counter.increment", {"kind": "latest"}))
        for i in range(1, 21)
    ]
    lines = [_line(_initialize("2024-11-05")), json.dumps(batch).encode()]
    replies, recorder = await _serve(b"\n".join(lines) + b"\n", make)
    assert [answer["id"] for answer in replies[1]] == list(range(1, 21))
    assert hosts[0].most == 1
    assert recorder.appends == 20


def test_serve_answers_a_2025_03_26_batch_in_one_line_and_the_audit_lists_each_call(
    tmp_path: Path,
) -> None:
    """A batch was answered with one -32600 on every session, also on those whose version
    says a server MUST take batches. Requests, a notification and an invalid member: one
    array, in the order of the members; each perform_action in it is on the record."""
    db = tmp_path / "log.db"
    first = {"kind": "exact", "generation": "1"}
    batch = [
        _tool_call(1, "perform_action", _act("counter.increment", first)),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2},
        _tool_call(3, "read_semantics", {}),
        _tool_call(4, "perform_action", _act("counter.increment", first)),  # stale by then
        {"jsonrpc": "2.0", "id": 5, "method": "ping"},
    ]
    lines = [
        _line(_initialize("2025-03-26")),
        json.dumps(batch).encode(),
        json.dumps([{"jsonrpc": "2.0", "method": "notifications/cancelled"}]).encode(),
        _line({"jsonrpc": "2.0", "id": 6, "method": "ping"}),
    ]
    done = subprocess.run(
        _semledger("serve", COUNTER, "--db", str(db), "--session", "batched"),
        input=b"".join(line + b"\n" for line in lines),
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    initialized, answers, ping = [json.loads(line) for line in done.stdout.splitlines()]
    assert initialized["id"] == 0
    assert ping == {"jsonrpc": "2.0", "id": 6, "result": {}}
    assert [(a["id"], a.get("error", {}).get("code")) for a in answers] == [
        (1, None),
        (2, -32600),
        (3, None),
        (4, None),
        (5, None),
    ]
    assert _envelope(answers[0])["value"]["after"] == "2"
    assert _envelope(answers[2])["value"]["generation"] == "2"
    assert _envelope(answers[3])["error"]["code"] == "stale_generation"
    audited = cli_in_process("audit", "batched", "--db", str(db), "--json")
    assert audited.returncode == 0, audited.stderr
    report = json.loads(audited.stdout)
    assert [(a["outcome"], a["precondition"]) for a in report["actions"]] == [
        ("receipt", first),
        ("stale_generation", first),
    ]
    assert report["connections"][0]["protocol_version"] == "2025-03-26"


async def test_a_sent_ahead_call_whose_host_raises_is_internal_error_and_the_loop_goes_on() -> (
    None
):
    class Flaky:
        """Sent ahead like the session host; its second action raises (a bug in it)."""

        overlapping_calls = True

        def __init__(self, actor: SessionActor) -> None:
            self.inner = RuntimeAgentHost(actor)
            self.actions = 0

        async def read_semantics(self, since: int | None) -> Any:
            return await self.inner.read_semantics(since)

        async def perform_action(self, *args: Any) -> Any:
            self.actions += 1
            if self.actions == 2:
                raise RuntimeError("a bug in the host")
            return await self.inner.perform_action(*args)

    lines = [
        _line(_tool_call(i, "perform_action", _act("counter.increment", {"kind": "latest"})))
        for i in range(1, 5)
    ]
    replies, _recorder = await _serve(b"\n".join(lines) + b"\n", Flaky)
    assert [reply["id"] for reply in replies] == [1, 2, 3, 4]
    assert replies[1]["error"]["code"] == -32603
    assert [_envelope(replies[i])["ok"] for i in (0, 2, 3)] == [True, True, True]


async def test_answers_written_together_each_give_back_the_slot_they_held(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Calls read ahead fill the three slots; the second and third are answered at once,
    in one write, behind the first: the two calls behind them must then both start."""

    class Held:
        """Each read (by its `since`) is answered once the test lets it."""

        overlapping_calls = True

        def __init__(self) -> None:
            self.started: list[int | None] = []
            self.gates: collections.defaultdict[int | None, trio.Event]
            self.gates = collections.defaultdict(trio.Event)

        async def read_semantics(self, since: int | None) -> Unchanged:
            self.started.append(since)
            await self.gates[since].wait()
            return Unchanged(0)

        async def perform_action(self, *args: Any) -> Any:
            raise AssertionError("not sent")

    import semledger.hosts._stdio as stdio

    monkeypatch.setattr(stdio, "MAX_OUTSTANDING", 3)
    host = Held()
    to_loop, loop_input = trio.testing.memory_stream_one_way_pair()
    loop_output, from_loop = trio.testing.memory_stream_one_way_pair()
    calls = [_tool_call(i, "read_semantics", {"since": str(i)}) for i in range(1, 7)]
    await to_loop.send_all(b"".join(_line(call) + b"\n" for call in calls))
    await to_loop.aclose()

    async def answered(*since: int) -> list[int | None]:
        for each in since:
            host.gates[each].set()
        await trio.testing.wait_all_tasks_blocked()
        return host.started

    async with trio.open_nursery() as nursery:
        serve = functools.partial(run_stdio, receive=loop_input, send=loop_output)
        nursery.start_soon(serve, Router(), host)
        try:
            assert await answered() == [1, 2, 3]
            assert await answered(1) == [1, 2, 3, 4]
            assert await answered(2, 3) == [1, 2, 3, 4, 5, 6]
        finally:
            await answered(*range(1, 7))  # a started call is answered before the loop ends
    await loop_output.aclose()
    output = b""
    while chunk := await from_loop.receive_some():
        output += chunk
    assert [json.loads(line)["id"] for line in output.splitlines()] == [1, 2, 3, 4, 5, 6]


def test_serving_refuses_a_session_it_cannot_resume_or_a_surface_that_cannot_open(
    tmp_path: Path,
) -> None:
    """Each is a usage error with the reason on stderr, and the log is left as it was."""
    sys.path.insert(0, str(Path(__file__).parent / "apps"))
    import stdio_client as client

    def serve(*args: str) -> subprocess.CompletedProcess[str]:
        return client.cli("serve", *args, "--db", str(db))

    db = tmp_path / "log.db"
    first = serve(COUNTER, "--session", "s")
    assert first.returncode == 0, first.stderr
    with SqliteRecorder(db) as recorder:
        before = list(recorder.read("s"))
    other = serve("semledger.examples.todo:app", "--session", "s")
    assert other.returncode == 2, other.stderr
    assert f"was recorded with {COUNTER}" in other.stderr
    surface = serve("--adapter", "web", "--url", "http://127.0.0.1:9/")
    assert surface.returncode == 2, surface.stderr
    assert "could not open" in surface.stderr
    with SqliteRecorder(db) as recorder:
        assert list(recorder.read("s")) == before


def test_serve_exits_1_naming_the_crash_when_its_application_raised(tmp_path: Path) -> None:
    lines = [
        _line(_tool_call(i, "perform_action", _act("counter.increment", {"kind": "latest"})))
        for i in (1, 2, 3)
    ]
    done = subprocess.run(
        _semledger("serve", "tests_crashy:app", "--db", str(tmp_path / "log.db"), "--session", "c"),
        input=b"\n".join(lines) + b"\n",
        capture_output=True,
        timeout=120,
        check=False,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parent / "apps")},
    )
    stderr = done.stderr.decode()
    assert done.returncode == 1, stderr
    crashy = Path(__file__).parent / "apps" / "tests_crashy.py"
    assert stderr.splitlines()[-1] == (
        "semledger: session 'c' ended: its application raised "
        f"ThirdIncrementError('the count may not reach 3') (at {crashy}, line 19)"
    )  # where in the app, for its operator (the agent is told what, not where)


def test_serve_exits_1_when_its_application_raises_as_it_starts(tmp_path: Path) -> None:
    """It exited 2, as for bad usage, where over HTTP such a session is a failure (exit 1).
    Nothing is served: the session is over before its first line is read. The line ends
    with where the app raised, as it does for a session that crashes later."""
    db = tmp_path / "log.db"
    done = subprocess.run(
        _semledger("serve", "tests_broken_start:app", "--db", str(db), "--session", "b"),
        input=_line(_tool_call(1, "read_semantics", {})) + b"\n",
        capture_output=True,
        timeout=120,
        check=False,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parent / "apps")},
    )
    stderr = done.stderr.decode()
    assert done.returncode == 1, stderr
    assert stderr == (
        "semledger: session 'b': the application raised as it started: BrokenViewError('the"
        f" view is broken') (`semledger replay b --db {db}` raises it again)"
        f" (at {Path(__file__).parent / 'apps' / 'tests_broken_start.py'}, line 18)\n"
    )
    assert done.stdout == b""
    with SqliteRecorder(db) as recorder:
        summary = recorder.summary("b")
    assert summary is not None
    assert summary.crashed
    resumed = subprocess.run(  # refused: a crashed session is never served again
        _semledger("serve", "tests_broken_start:app", "--db", str(db), "--session", "b"),
        input=b"",
        capture_output=True,
        timeout=120,
        check=False,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parent / "apps")},
    )
    assert resumed.returncode == 2, resumed.stderr


@attrs.define
class _InProcess:
    """`semledger serve semledger.examples.counter:app --session s`, run in this process
    over memory streams: `act` increments and returns the answer's envelope; `result` is
    what serving returned, once it has."""

    to_loop: trio.testing.MemorySendStream
    from_loop: trio.testing.MemoryReceiveStream
    buffered: bytes = b""
    result: Any = None

    async def act(self, request_id: int) -> dict[str, Any]:
        call = _tool_call(request_id, "perform_action", _act("counter.increment", LATEST_WIRE))
        await self.to_loop.send_all(_line(call) + b"\n")
        while b"\n" not in self.buffered:
            self.buffered += await self.from_loop.receive_some()
        line, _, self.buffered = self.buffered.partition(b"\n")
        return _envelope(json.loads(line))


@asynccontextmanager
async def _serving_counter(db: Path) -> AsyncIterator[_InProcess]:
    """Serving ends (end of input) as the block does."""
    from semledger.hosts import serve_stdio

    to_loop, loop_input = trio.testing.memory_stream_one_way_pair()
    loop_output, from_loop = trio.testing.memory_stream_one_way_pair()
    served = _InProcess(to_loop, from_loop)

    async def serve() -> None:
        served.result = await serve_stdio(
            COUNTER, db=db, session="s", receive=loop_input, send=loop_output
        )

    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve)
            yield served
            await to_loop.aclose()


async def test_serve_reports_a_session_that_lost_its_log_to_another_writer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from semledger.eventlog import EffectStarted, NewEvent

    db = tmp_path / "log.db"
    async with _serving_counter(db) as served:
        assert (await served.act(1))["ok"] is True
        with SqliteRecorder(db) as other:
            head = other.head("s")
            assert head is not None
            other.append([NewEvent("s", head.seq + 1, EffectStarted(99, "foreign"), 0.0)])
        assert (await served.act(2))["ok"] is False
        await trio.testing.wait_all_tasks_blocked()
        # Said at once, not only at the end of input, which may be long in coming.
        at_once = capsys.readouterr().err.splitlines()[-1]
    result = served.result
    assert result.failed
    assert result.reason.startswith("another writer appended to its log (session 's': seq ")
    assert at_once == (
        f"semledger: session 's' ended: {result.reason}; answering host_closed until end of input"
    )
    last = capsys.readouterr().err.splitlines()[-1]
    assert last == f"semledger: session 's' ended: {result.reason}"


async def test_a_log_deleted_while_serving_ends_the_session_instead_of_answering_receipts(
    tmp_path: Path,
) -> None:
    """SQLite kept committing into the unlinked file: the agent got receipts for events
    that were gone, serve exited 0, and the next serve of the name started it over at
    generation 1."""
    db = tmp_path / "log.db"
    async with _serving_counter(db) as served:
        assert (await served.act(1))["ok"] is True
        db.unlink()
        refused = await served.act(2)
        assert refused["error"]["code"] == "host_closed", refused
    result = served.result
    assert result.failed
    assert result.reason == (
        f"its log could not be written (LogMovedError('{db} was deleted while this recorder"
        " wrote to it'))"
    )


async def test_a_call_refused_because_the_wal_was_deleted_is_not_in_the_log_as_a_receipt(
    tmp_path: Path,
) -> None:
    """The batch was committed into the deleted -wal, and SQLite folded it into the log as
    the server closed: the agent was answered host_closed, but an audit listed the call as
    a receipt and a resumed session started past it."""
    from semledger.eventlog import ActionReceipt

    db = tmp_path / "log.db"
    async with _serving_counter(db) as served:
        assert (await served.act(1))["ok"] is True
        Path(f"{db}-wal").unlink()
        refused = await served.act(2)
        assert refused["error"]["code"] == "host_closed", refused
    assert "-wal was deleted" in served.result.reason
    with SqliteRecorder(db, read_only=True) as log:
        receipts = [e for _, e in log.events("s") if isinstance(e, ActionReceipt)]
    assert [(r.before, r.after) for r in receipts] == [(1, 2)]


async def test_a_perform_action_whose_arguments_do_not_decode_is_logged_as_refused() -> None:
    """SPEC §2.4: invalid_arguments is decided before dispatch, so the session never steps
    with the call (it takes no request id); the refusal is still on the record, with any
    value that may be a password redacted, so an audit shows every perform_action sent."""
    bad = _act("counter.increment", {"kind": "exact", "generation": "01"})
    typed = {
        "target": {"kind": "semantic_id", "id": "login.password"},
        "action": {"kind": "set_text", "value": "hunter2", "extra": 1},
        "precondition": {"kind": "latest"},
    }
    good = _act("counter.increment", LATEST_WIRE)
    lines = [
        _line(_tool_call(1, "perform_action", bad)),
        _line(_tool_call(2, "perform_action", typed)),
        _line(_tool_call(3, "perform_action", good)),
        _line(_tool_call(4, "read_semantics", {"since": "x"})),
    ]
    replies, recorder = await _serve(b"\n".join(lines) + b"\n", RuntimeAgentHost)
    assert [_envelope(r)["ok"] or _envelope(r)["error"]["code"] for r in replies] == [
        "invalid_arguments", "invalid_arguments", True, "invalid_arguments"
    ]
    events = [e for _r, e in recorder.events("ahead")]
    requested = [e for e in events if isinstance(e, ActionRequested)]
    assert [(e.request_id, e.precondition) for e in requested] == [(1, LATEST_WIRE)]
    refused = [e for e in events if isinstance(e, CallRefused)]
    assert [(e.tool, e.code, e.redacted) for e in refused] == [
        ("perform_action", "invalid_arguments", False),
        ("perform_action", "invalid_arguments", True),
    ]
    assert refused[0].arguments == bad
    assert refused[0].message == _envelope(replies[0])["error"]["message"]
    assert refused[1].arguments == {
        **typed, "action": {"kind": "set_text", "value": "[redacted]", "extra": "[redacted]"}
    }
    assert "hunter2" not in repr(events)


async def test_serve_refuses_an_empty_session_name_instead_of_making_one_up(
    tmp_path: Path,
) -> None:
    """``session=""`` served a session named ``stdio-…``: the name given was dropped."""
    from semledger.hosts import serve_stdio

    with pytest.raises(ValueError, match="expected a session name, got ''"):
        await serve_stdio(COUNTER, db=tmp_path / "log.db", session="")
    assert not (tmp_path / "log.db").exists()


async def test_a_call_that_fails_inside_the_server_is_a_32603_its_operator_hears_of(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A call the session host failed on for a reason it did not foresee was answered
    ``-32603`` with nothing on stderr: if it happens, its operator has no trace of it."""
    caplog.set_level(logging.WARNING, logger="semledger")
    recorder = MemoryRecorder()
    async with trio.open_nursery() as nursery:
        writer = await nursery.start(LogWriter(recorder).run)
        actor = SessionActor("s", counter.app, COUNTER, writer, recorder)
        await nursery.start(actor.run)

        async def failing(message: object, timeout: float) -> None:
            raise RuntimeError("a bug inside the server")

        monkeypatch.setattr(actor, "request", failing)
        router, host = Router(), RuntimeAgentHost(actor)
        await handle(router, host, _line(_initialize("2025-06-18")))
        (reply,) = await handle(router, host, _line(_tool_call(1, "read_semantics", {})))
        nursery.cancel_scope.cancel()
    assert reply["error"] == {"code": -32603, "message": "Internal error"}
    (record,) = caplog.records
    assert record.levelno == logging.ERROR
    assert record.getMessage() == (
        "session 's': a call failed inside the server, answered -32603 (Internal error):"
        " RuntimeError('a bug inside the server')"
    )
    assert record.exc_info is not None
    assert isinstance(record.exc_info[1], RuntimeError)  # its traceback, for a handler to show
    assert not host.closed  # the next call is tried: the session itself is whole
