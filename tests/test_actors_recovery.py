"""Recovery: a session started again on its log comes back with the same generations, node ids
and outstanding effects, in the same process or in a new one."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import trio

from semledger.actors import Close, LogWriter, SessionActor
from semledger.eventlog import EffectCompleted, EffectStarted, Recorder, SqliteRecorder
from semledger.examples import todo
from semledger.runtime import (
    ActionKind,
    AppRuntime,
    BySemanticId,
    Exact,
    Full,
    Latest,
    Precondition,
    Receipt,
    SemanticId,
    SemanticsAction,
    SetText,
    SimpleAction,
)
from semledger.runtime._wire import encode_read

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp
import tests_boot

TODO = "semledger.examples.todo:app"
SUBMIT = SimpleAction(ActionKind.SUBMIT)
ACTIVATE = SimpleAction(ActionKind.ACTIVATE)
LATEST = Latest()

Script = list[tuple[str, SemanticsAction]]

BEFORE: Script = [
    ("todo.input", SetText("milk")),
    ("todo.input", SUBMIT),
    ("todo.input", SetText("eggs")),
    ("todo.input", SUBMIT),
    ("todo.input", SetText("bread")),
    ("todo.input", SUBMIT),
    ("todo.item.1.done", ACTIVATE),
    ("todo.item.2.delete", ACTIVATE),
]
AFTER: Script = [
    ("todo.input", SUBMIT),
    ("todo.input", SetText("jam")),
    ("todo.input", SUBMIT),
    ("todo.clear_completed", ACTIVATE),
]


def target(semantic_id: str) -> BySemanticId:
    return BySemanticId(SemanticId.new(semantic_id))


async def in_session(
    recorder: Recorder,
    name: str,
    body: Callable[[SessionActor], Awaitable[Any]],
    app: Any = todo.app,
    app_ref: str = TODO,
) -> tuple[SessionActor, Any]:
    """Start (or recover) session `name`, run `body` against it, then close it."""
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            writer: LogWriter = await nursery.start(LogWriter(recorder).run)
            actor = SessionActor(name, app, app_ref, writer, recorder)
            async with trio.open_nursery() as sessions:
                await sessions.start(actor.run)
                result = await body(actor)
                await actor.request(Close("test over"))
            writer.close()
    return actor, result


async def drive(actor: SessionActor, script: Script, first: Precondition = LATEST) -> None:
    for index, (semantic_id, action) in enumerate(script):
        outcome = await actor.perform_action(
            target(semantic_id), action, first if index == 0 else Latest()
        )
        assert isinstance(outcome, Receipt), (semantic_id, outcome)


async def full(actor: SessionActor) -> Full:
    result = await actor.read_semantics(None)
    assert isinstance(result, Full)
    return result


def reference(script: Script) -> Full:
    """The same actions on one uninterrupted runtime."""
    runtime = AppRuntime(todo.app)
    for semantic_id, action in script:
        assert isinstance(runtime.perform(target(semantic_id), action, Latest()), Receipt)
    result = runtime.read(None)
    assert isinstance(result, Full)
    return result


async def test_a_recovered_session_keeps_generation_and_node_ids_and_goes_on(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.db"

    async def first(actor: SessionActor) -> Full:
        await drive(actor, BEFORE)
        return await full(actor)

    async def second(actor: SessionActor) -> tuple[Full, Full]:
        recovered = await full(actor)
        # The old generation is still current, so an exact precondition on it is accepted.
        await drive(actor, [("todo.input", SetText("oats")), *AFTER], Exact(recovered.generation))
        return recovered, await full(actor)

    with SqliteRecorder(db) as recorder:
        live, before_close = await in_session(recorder, "s", first)
    assert not live.recovered
    with SqliteRecorder(db) as recorder:
        again, (recovered, final) = await in_session(recorder, "s", second)
    assert again.recovered
    assert encode_read(recovered) == encode_read(before_close)
    expected = reference([*BEFORE, ("todo.input", SetText("oats")), *AFTER])
    assert encode_read(final) == encode_read(expected)


async def test_an_effect_started_and_never_finished_is_started_again_after_recovery(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "log.db"

    async def save(actor: SessionActor) -> Receipt:
        await drive(actor, BEFORE[:2])
        receipt = await actor.perform_action(target("todo.save"), ACTIVATE, Latest())
        assert isinstance(receipt, Receipt)
        return receipt

    async def wait_saved(actor: SessionActor) -> str | None:
        while True:
            status = (await full(actor)).nodes
            values = [n.value for n in status if n.semantic_id == "todo.save_status"]
            if values != ["Saving…"]:
                return values[0]
            await trio.sleep(0.01)

    monkeypatch.setattr(todo, "SAVE_SECONDS", 3600.0)  # the save never finishes live
    with SqliteRecorder(db) as recorder:
        _live, receipt = await in_session(recorder, "s", save)
        assert receipt.pending_work
        topics = [type(e) for _r, e in recorder.events("s")]
        assert EffectStarted in topics
        assert EffectCompleted not in topics
    monkeypatch.setattr(todo, "SAVE_SECONDS", 0.0)
    with SqliteRecorder(db) as recorder:
        again, status = await in_session(recorder, "s", wait_saved)
        assert again.recovered
        assert status == "Saved 1 items"
        completed = [e for _r, e in recorder.events("s") if isinstance(e, EffectCompleted)]
        assert len(completed) == 1


async def test_an_effect_started_by_init_and_never_finished_is_started_again_after_recovery(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "log.db"

    async def status(actor: SessionActor) -> str | None:
        while True:
            nodes = (await full(actor)).nodes
            value = next(n.value for n in nodes if n.semantic_id == "boot.status")
            if value != "Loading" or tests_boot.GATE is not None:
                return value
            await trio.sleep(0.01)

    monkeypatch.setattr(tests_boot, "GATE", trio.Event())  # held back: never finishes live
    with SqliteRecorder(db) as recorder:
        _live, first = await in_session(recorder, "s", status, tests_boot.app, "tests_boot:app")
    assert first == "Loading"
    monkeypatch.setattr(tests_boot, "GATE", None)
    with SqliteRecorder(db) as recorder:
        again, second = await in_session(recorder, "s", status, tests_boot.app, "tests_boot:app")
    assert again.recovered
    assert second == "Loaded 3 items"


def test_a_session_resumed_in_a_new_process_keeps_generation_and_node_ids(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.db"
    first = mcp.serve(
        TODO,
        db,
        "agent",
        [
            mcp.perform(1, "todo.input", "set_text", value="milk"),
            mcp.perform(2, "todo.input", "submit"),
            mcp.perform(3, "todo.input", "set_text", value="eggs"),
            mcp.perform(4, "todo.input", "submit"),
            mcp.perform(5, "todo.item.1.delete"),
            mcp.read(6),
        ],
    )
    assert all(first[i]["ok"] for i in range(1, 7)), first
    before = first[6]["value"]
    generation = before["generation"]
    assert generation == first[5]["value"]["after"]

    second = mcp.serve(
        TODO,
        db,
        "agent",
        [
            mcp.read(1),
            mcp.perform(2, "todo.input", "set_text", generation, value="jam"),
            mcp.perform(3, "todo.input", "submit"),
            mcp.read(4),
        ],
    )
    assert second[1]["value"] == before
    assert second[2]["ok"], second[2]
    assert second[2]["value"]["before"] == generation
    after = second[4]["value"]
    ids = {n["semantic_id"]: n["node_id"] for n in after["nodes"]}
    old_ids = {n["semantic_id"]: n["node_id"] for n in before["nodes"]}
    for semantic_id in ("todo.input", "todo.items", "todo.item.2.done", "todo.save"):
        assert ids[semantic_id] == old_ids[semantic_id]
    # A new item gets fresh ids, larger than any the first process allocated.
    assert int(ids["todo.item.3.done"]) > max(int(n["node_id"]) for n in before["nodes"])
