"""Log-served reads equal live reads: whatever a live session answered to read_semantics,
`read_at` on its log answers identically, for random sessions of the todo and gallery apps."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from semledger.actors import LogWriter, SessionActor
from semledger.eventlog import MemoryRecorder, NewEvent, Recorder, SessionStarted, SqliteRecorder
from semledger.examples import gallery, todo
from semledger.replay import SurfaceSessionError, read_at
from semledger.runtime import ActionKind, App, Rejection, SemanticsSnapshot
from semledger.runtime._wire import (
    decode_action,
    decode_precondition,
    decode_target,
    encode_read,
)

APPS: dict[str, App[Any, Any]] = {
    "semledger.examples.todo:app": todo.app,
    "semledger.examples.gallery:app": gallery.app,
}
KINDS = [k.value for k in ActionKind]
PAYLOAD = {
    "set_text": lambda d: {"value": d.draw(st.sampled_from(["", "milk", "hunter2!!", "x y"]))},
    "scroll": lambda d: {"direction": d.draw(st.sampled_from(["forward", "backward", "down"]))},
    "set_numeric_value": lambda d: {"value": d.draw(st.integers(-10, 120))},
    "set_selection": lambda d: {
        "start": d.draw(st.integers(0, 4)),
        "end": d.draw(st.integers(0, 4)),
    },
}


def random_action(data: Any, snapshot: SemanticsSnapshot) -> dict[str, Any]:
    """A perform_action call: mostly on a real node with an action it offers, sometimes not."""
    node = snapshot.nodes[data.draw(st.sampled_from(sorted(snapshot.nodes)))]
    if data.draw(st.integers(0, 3)) > 0 and node.actions:
        kind = data.draw(st.sampled_from(sorted(k.value for k in node.actions)))
    else:
        kind = data.draw(st.sampled_from(KINDS))
    if node.semantic_id is not None and data.draw(st.booleans()):
        target = {"kind": "semantic_id", "id": str(node.semantic_id)}
    else:
        target = {"kind": "node_id", "id": str(data.draw(st.sampled_from([node.node_id, 9999])))}
    generation = snapshot.generation - data.draw(st.sampled_from([0, 0, 1]))
    precondition = data.draw(
        st.sampled_from([{"kind": "latest"}, {"kind": "exact", "generation": str(generation)}])
    )
    payload = PAYLOAD[kind](data) if kind in PAYLOAD else {}
    return {"target": target, "action": {"kind": kind, **payload}, "precondition": precondition}


async def record_live_reads(
    data: Any, recorder: Recorder, app_ref: str
) -> list[tuple[int, int | None, dict[str, Any]]]:
    """Drive a session at random; every read answered, with its generation and since."""
    answers: list[tuple[int, int | None, dict[str, Any]]] = []
    async with trio.open_nursery() as nursery:
        writer: LogWriter = await nursery.start(LogWriter(recorder).run)
        actor = SessionActor("s", APPS[app_ref], app_ref, writer, recorder)
        async with trio.open_nursery() as sessions:
            await sessions.start(actor.run)
            for _ in range(data.draw(st.integers(1, 14))):
                runtime = actor.core.runtime
                current = runtime.generation
                if data.draw(st.integers(0, 2)) == 0:
                    since = data.draw(
                        st.sampled_from([None, current, 0, current + 3])
                        | st.integers(0, max(current, 0))
                    )
                    result = await actor.read_semantics(since)
                    assert not isinstance(result, Rejection)
                    answers.append((runtime.generation, since, encode_read(result)))
                else:
                    call = random_action(data, runtime.snapshot)
                    await actor.perform_action(
                        decode_target(call["target"]),
                        decode_action(call["action"]),
                        decode_precondition(call["precondition"]),
                    )
            answers.append(
                (actor.core.runtime.generation, None, encode_read(actor.core.runtime.read(None)))
            )
            actor.close()
        writer.close()
    return answers


def check_log_reads(data: Any, recorder: Recorder) -> None:
    app_ref = data.draw(st.sampled_from(sorted(APPS)))
    answers = trio.run(record_live_reads, data, recorder, app_ref)
    for generation, since, live in answers:
        logged = read_at(recorder, "s", generation=generation, since=since)
        assert encode_read(logged) == live, (generation, since)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_reads_served_from_a_memory_log_equal_the_live_reads(data: Any) -> None:
    check_log_reads(data, MemoryRecorder())


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_reads_served_from_an_sqlite_log_equal_the_live_reads(data: Any) -> None:
    with (
        tempfile.TemporaryDirectory() as tmp,
        SqliteRecorder(Path(tmp) / "log.db", synchronous="OFF") as recorder,
    ):
        check_log_reads(data, recorder)


def test_a_read_of_a_session_that_drove_a_surface_says_so_instead_of_an_empty_tree() -> None:
    recorder = MemoryRecorder()
    started = SessionStarted("https://example.com/", "web", {"adapter": "web"}, True)
    recorder.append([NewEvent("page", 1, started, 0.0)])
    with pytest.raises(SurfaceSessionError, match="drove a surface"):
        read_at(recorder, "page")
