"""A surface served over MCP keeps the agent's side on the record: every perform_action as an
ActionRequested and its receipt or rejection, the bridge's generations as commits, audited
as an app session is."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import attrs
import trio
import trio.testing

from semledger.eventlog import (
    CONVERTER,
    REDACTED,
    ActionReceipt,
    ActionRejected,
    ActionRequested,
    CallRefused,
    Committed,
    SqliteRecorder,
    SurfaceCalled,
)
from semledger.hosts import rerun_surface, serve_surface
from semledger.replay import audit, verify

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from stdio_client import cli_in_process

ROOT = Path(__file__).resolve().parent.parent
COUNTER = "semledger.examples.counter:app"
GALLERY = "semledger.examples.gallery:app"
LATEST = {"kind": "latest"}

Ask = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]


def _exact(generation: str) -> dict[str, Any]:
    return {"kind": "exact", "generation": generation}


def _act(
    semantic_id: str, precondition: dict[str, Any], action: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "target": {"kind": "semantic_id", "id": semantic_id},
        "action": action or {"kind": "activate"},
        "precondition": precondition,
    }


@asynccontextmanager
async def _served(db: Path, app: str, session: str = "s") -> AsyncIterator[Ask]:
    """`serve --adapter runtime --app APP` in this process, over memory streams; `ask` sends
    one tool call and returns its envelope. Leaving the block is the end of input."""
    to_loop, loop_input = trio.testing.memory_stream_one_way_pair()
    loop_output, from_loop = trio.testing.memory_stream_one_way_pair()
    pending = b""
    ids = iter(range(1, 1000))

    async def ask(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        nonlocal pending
        call = {
            "jsonrpc": "2.0", "id": next(ids), "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        }  # fmt: skip
        await to_loop.send_all(json.dumps(call).encode() + b"\n")
        while b"\n" not in pending:
            pending += await from_loop.receive_some()
        line, _, pending = pending.partition(b"\n")
        envelope: dict[str, Any] = json.loads(line)["result"]["structuredContent"]
        return envelope

    config = {"adapter": "runtime", "app": app}

    async def serve() -> None:
        await serve_surface(
            config, {}, db=str(db), session=session, label=app,
            receive=loop_input, send=loop_output,
        )  # fmt: skip
        await loop_output.aclose()

    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve)
            yield ask
            await to_loop.aclose()
            while await from_loop.receive_some():
                pass


async def _counter_session(db: Path) -> list[dict[str, Any]]:
    async with _served(db, COUNTER) as ask:
        full = await ask("read_semantics", {})
        assert full["value"]["generation"] == "1"
        return [
            await ask("perform_action", _act("counter.increment", _exact("1"))),
            await ask("perform_action", _act("counter.increment", _exact("1"))),
            await ask("perform_action", _act("counter.nothing", LATEST)),
            await ask("perform_action", _act("counter.value", LATEST)),
            await ask(
                "perform_action",
                _act("counter.step", LATEST, {"kind": "set_text", "value": "3"}),
            ),
        ]


async def test_the_audit_of_a_served_surface_lists_the_agents_actions(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    replies = await _counter_session(db)
    assert [r["ok"] or r["error"]["code"] for r in replies] == [
        True, "stale_generation", "target_not_found", "action_unavailable", True,
    ]  # fmt: skip
    with SqliteRecorder(db) as recorder:
        entries = audit(recorder, "s")
    assert [
        (e.request_id, e.action["kind"], e.precondition, e.generation, e.outcome)
        for e in entries
    ] == [
        (1, "activate", _exact("1"), 1, "receipt"),
        (2, "activate", _exact("1"), 2, "stale_generation"),
        (3, "activate", LATEST, 2, "target_not_found"),
        (4, "activate", LATEST, 2, "action_unavailable"),
        (5, "set_text", LATEST, 2, "receipt"),
    ]
    assert entries[0].target == {"kind": "semantic_id", "id": "counter.increment"}
    assert (entries[0].before, entries[0].after) == (1, 2)
    assert entries[1].details == {
        "expected": "1", "current": "2", "message": "expected generation 1, current is 2",
    }  # fmt: skip
    assert entries[2].details == {
        "target": {"kind": "semantic_id", "id": "counter.nothing"},
        "message": "no node has that semantic id",
    }
    assert entries[4].action == {"kind": "set_text", "value": "3"}
    assert (entries[4].before, entries[4].after) == (2, 3)


async def test_a_served_action_is_logged_around_the_surface_calls_that_carried_it_out(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.db"
    await _counter_session(db)
    with SqliteRecorder(db) as recorder:
        events = [event for _r, event in recorder.events("s")]
    requested = next(i for i, e in enumerate(events) if isinstance(e, ActionRequested))
    answered = next(i for i, e in enumerate(events) if isinstance(e, ActionReceipt))
    between = events[requested + 1 : answered]
    # Logged once the tree it is done on is read (its redaction is judged there), before
    # the act that carries it out.
    read = events[requested - 1]
    assert isinstance(read, SurfaceCalled)
    assert read.method == "snapshot"
    assert [e.method for e in between if isinstance(e, SurfaceCalled)] == ["act", "snapshot"]
    assert [e.generation for e in between if isinstance(e, Committed)] == [2]
    commits = [e.generation for e in events if isinstance(e, Committed)]
    assert commits == [1, 2, 3]  # every generation the agent was shown, once


async def test_a_receipt_is_in_the_log_before_the_agent_has_it(tmp_path: Path) -> None:
    db = tmp_path / "log.db"

    def outcomes() -> list[object]:
        with SqliteRecorder(db) as reader:  # another connection: what is durable
            return [
                (type(e).__name__, e.request_id)
                for _r, e in reader.events("s")
                if isinstance(e, ActionReceipt | ActionRejected)
            ]

    async with _served(db, COUNTER) as ask:
        await ask("read_semantics", {})
        assert (await ask("perform_action", _act("counter.increment", LATEST)))["ok"]
        assert outcomes() == [("ActionReceipt", 1)]
        assert not (await ask("perform_action", _act("counter.increment", _exact("1"))))["ok"]
        assert outcomes() == [("ActionReceipt", 1), ("ActionRejected", 2)]


async def test_text_typed_into_a_password_field_through_the_bridge_is_redacted(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.db"
    typed = {"kind": "set_text", "value": "hunter22"}
    async with _served(db, GALLERY) as ask:
        await ask("read_semantics", {})
        assert (await ask("perform_action", _act("gallery.password", LATEST, typed)))["ok"]
        name = {"kind": "set_text", "value": "ada"}
        assert (await ask("perform_action", _act("gallery.username", LATEST, name)))["ok"]
        missing = await ask("perform_action", _act("gallery.pasword", LATEST, typed))
        assert missing["error"]["code"] == "target_not_found"
    with SqliteRecorder(db) as recorder:
        events = [event for _r, event in recorder.events("s")]
    requested = [e for e in events if isinstance(e, ActionRequested)]
    assert [(e.action["value"], e.redacted) for e in requested] == [
        (REDACTED, True), ("ada", False), (REDACTED, True),
    ]  # fmt: skip
    assert "hunter22" not in repr(events)


async def test_a_call_refused_for_its_arguments_is_logged_and_audited(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    bad = {"target": {"kind": "semantic_id", "id": "counter.step"}, "action": "set_text"}
    async with _served(db, COUNTER) as ask:
        await ask("read_semantics", {})
        refused = await ask("perform_action", {**bad, "precondition": LATEST})
        assert refused["error"]["code"] == "invalid_arguments"
        assert (await ask("perform_action", _act("counter.increment", LATEST)))["ok"]
    with SqliteRecorder(db) as recorder:
        (logged,) = [e for _r, e in recorder.events("s") if isinstance(e, CallRefused)]
        entries = audit(recorder, "s")
        assert verify(recorder, "s").ok
        assert (await rerun_surface(recorder, "s")).ok
    assert logged.message == refused["error"]["message"]
    assert (logged.arguments["action"], logged.redacted) == (REDACTED, True)
    assert [(e.request_id, e.outcome) for e in entries] == [
        (None, "invalid_arguments"), (1, "receipt"),
    ]  # fmt: skip


async def test_a_served_surface_session_verifies_and_re_runs(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    await _counter_session(db)
    with SqliteRecorder(db) as recorder:
        assert verify(recorder, "s").ok
        report = await rerun_surface(recorder, "s")
        assert report.ok, report.divergence
        (summary,) = recorder.sessions()
        assert (summary.surface, summary.ended) == ("runtime", True)


def _semledger(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``semledger ARGS --db DB`` (replay, audit, read, sessions) run in this process."""
    return cli_in_process(*args, "--db", str(db))


def test_a_served_surface_session_killed_and_resumed_replays_and_audits(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    serve = [
        sys.executable, "-m", "semledger", "serve", "--adapter", "runtime", "--app", COUNTER,
        "--db", str(db), "--session", "k",
    ]  # fmt: skip

    def line(request_id: int, arguments: dict[str, Any]) -> str:
        params = {"name": "perform_action", "arguments": arguments}
        call = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
        return json.dumps(call) + "\n"

    first = subprocess.Popen(
        serve, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    assert first.stdin is not None
    assert first.stdout is not None
    first.stdin.write(line(1, _act("counter.increment", LATEST)))
    first.stdin.flush()
    assert json.loads(first.stdout.readline())["result"]["structuredContent"]["ok"]
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=60)

    # What the agent saw last was generation 2; the resumed bridge's fresh surface is 3.
    read = json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                       "params": {"name": "read_semantics", "arguments": {}}}) + "\n"  # fmt: skip
    again = line(1, _act("counter.increment", _exact("2"))) + read
    again += line(2, _act("counter.increment", _exact("3")))
    resumed = subprocess.run(
        serve, cwd=ROOT, input=again, capture_output=True, text=True, check=False, timeout=120
    )
    assert resumed.returncode == 0, resumed.stderr
    stale, shown, receipt = (json.loads(r)["result"]["structuredContent"]
                             for r in resumed.stdout.splitlines())  # fmt: skip
    assert stale["error"]["code"] == "stale_generation"
    assert stale["error"]["details"] == {"expected": "2", "current": "3"}
    assert receipt["value"]["before"] == "3"

    replayed = _semledger(db, "replay", "k")
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "identical" in replayed.stdout
    audited = _semledger(db, "audit", "k", "--json", "--verify")
    assert audited.returncode == 0, audited.stderr
    out = json.loads(audited.stdout)
    assert out["verify"]["ok"]
    # Each at the generation it was judged at: #1 once the bridge had read the surface afresh.
    assert [
        (a["request_id"], a["generation"], a["outcome"]) for a in out["actions"]
    ] == [(1, "1", "receipt"), (2, "3", "stale_generation"), (3, "3", "receipt")]
    assert (out["end"]["state"], out["end"]["final"]) == ("ended", False)  # resumed, then ended
    before = json.loads(_semledger(db, "read", "k", "--generation", "2", "--json").stdout)
    after = json.loads(_semledger(db, "read", "k", "--generation", "3", "--json").stdout)
    assert after == shown["value"]  # the log serves what the live bridge answered
    old_ids = {int(n["node_id"]) for n in before["nodes"]}
    new_ids = {int(n["node_id"]) for n in after["nodes"]}
    assert len(new_ids) == len(old_ids)
    assert min(new_ids) > max(old_ids)  # never reused: an old id finds no element
    listed = _semledger(db, "sessions", "--json")
    assert listed.returncode == 0, listed.stderr
    assert "k" in listed.stdout


def test_a_log_whose_commits_do_not_follow_is_reported_in_one_line_and_left_as_it_was(
    tmp_path: Path,
) -> None:
    """A commit edited to start at another generation: read and a resuming serve say the
    log cannot be read, naming the event, instead of a traceback."""
    db = tmp_path / "log.db"
    trio.run(_counter_session, db)
    with SqliteRecorder(db) as recorder:
        record, commit = [(r, e) for r, e in recorder.events("s") if isinstance(e, Committed)][-1]
        edited = attrs.evolve(commit, delta={**commit.delta, "from": "7"})
        _topic, _version, body = CONVERTER.encode_parts(edited)
        head = recorder.head("s")
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE events SET body = ? WHERE seq = ?", (body, record.seq))
    said = f"the log {db} cannot be read: session 's', event {record.seq}: the commit does"
    read = _semledger(db, "read", "s")
    assert (read.returncode, read.stderr.startswith(f"semledger: {said}")) == (1, True), read
    serve = [sys.executable, "-m", "semledger", "serve", "--adapter", "runtime", "--app",
             COUNTER, "--db", str(db), "--session", "s"]  # fmt: skip
    resumed = subprocess.run(
        serve, cwd=ROOT, input="", capture_output=True, text=True, timeout=120, check=False
    )
    assert resumed.returncode == 1, resumed.stderr
    assert resumed.stderr.splitlines()[-1].startswith(f"semledger: {said}")
    assert "Traceback" not in resumed.stderr
    with SqliteRecorder(db) as recorder:
        assert recorder.head("s") == head  # not resumed: nothing was written
