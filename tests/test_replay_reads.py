"""Log-served reads equal live reads: whatever a live session answered to read_semantics,
`read_at` on its log answers identically, for random sessions of the todo and gallery apps,
whether the fold starts at a checkpoint or at generation 0."""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from semledger.actors import LogWriter, SessionActor
from semledger.actors._core import SessionCore
from semledger.eventlog import (
    Event,
    MemoryRecorder,
    NewEvent,
    Recorder,
    SessionStarted,
    SqliteRecorder,
)
from semledger.examples import counter, gallery, todo
from semledger.replay import SurfaceSessionError, read_at
from semledger.runtime import (
    JOURNAL_SIZE,
    ActionKind,
    App,
    BySemanticId,
    Latest,
    Rejection,
    SemanticId,
    SemanticsSnapshot,
    SimpleAction,
)
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
        every = data.draw(st.sampled_from([None, 1, 2, 5]), label="checkpoint_every")
        actor = SessionActor("s", APPS[app_ref], app_ref, writer, recorder, checkpoint_every=every)
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


class CountingRecorder(MemoryRecorder):
    """Counts the events replayed, so a test sees how much of the log a read folded."""

    replayed = 0

    def replay(self, session: str, *, start: int = 0) -> Iterator[Event]:
        for event in super().replay(session, start=start):
            self.replayed += 1
            yield event


async def run_counter(
    recorder: Recorder, increments: int, *, checkpoint_every: int | None, at: Iterable[int] = ()
) -> dict[int, dict[int | None, dict[str, Any]]]:
    """Click increment `increments` times; at each generation in `at`, every live answer."""
    wanted = set(at)
    answers: dict[int, dict[int | None, dict[str, Any]]] = {}
    increment = BySemanticId(SemanticId("counter.increment"))
    async with trio.open_nursery() as nursery:
        writer: LogWriter = await nursery.start(LogWriter(recorder).run)
        app, ref = counter.app, "semledger.examples.counter:app"
        actor = SessionActor("c", app, ref, writer, recorder, checkpoint_every=checkpoint_every)
        async with trio.open_nursery() as sessions:
            await sessions.start(actor.run)
            for _ in range(increments):
                await actor.perform_action(increment, SimpleAction(ActionKind.ACTIVATE), Latest())
                runtime = actor.core.runtime
                if runtime.generation in wanted:
                    answers[runtime.generation] = {
                        since: encode_read(runtime.read(since))
                        for since in [None, *range(runtime.generation + 2)]
                    }
            actor.close()
        writer.close()
    return answers


def test_a_read_folds_only_the_commits_after_the_latest_checkpoint_that_serves_it() -> None:
    recorder = CountingRecorder()
    trio.run(partial(run_counter, recorder, 200, checkpoint_every=10))
    events = len(list(recorder.read("c")))
    plain = MemoryRecorder()
    trio.run(partial(run_counter, plain, 200, checkpoint_every=None))
    for generation, since in [(None, None), (150, None), (150, 140), (150, 20), (5, None)]:
        recorder.replayed = 0
        read = read_at(recorder, "c", generation=generation, since=since)
        assert encode_read(read) == encode_read(
            read_at(plain, "c", generation=generation, since=since)
        )
        # (three events an input: at most two checkpoint intervals of 10 inputs)
        assert recorder.replayed <= 70 < events, (generation, since)
    recorder.replayed = 0
    read_at(recorder, "c", generation=150, since=100)  # a delta from 100 needs 100 on
    assert 100 < recorder.replayed < 200


def test_reads_at_the_edge_of_the_journal_equal_the_live_ones_from_any_checkpoint() -> None:
    """Live, a delta is possible from the last JOURNAL_SIZE generations only; a fold that
    starts at a checkpoint answers each `since` exactly as the live runtime did."""
    at = [JOURNAL_SIZE - 1, JOURNAL_SIZE + 1, 2 * JOURNAL_SIZE + 7]
    for every in (None, 1, 7, JOURNAL_SIZE):
        recorder = MemoryRecorder()
        live = trio.run(
            partial(run_counter, recorder, 2 * JOURNAL_SIZE + 10, checkpoint_every=every, at=at)
        )
        assert sorted(live) == at
        for generation, answers in live.items():
            for since, answer in answers.items():
                logged = read_at(recorder, "c", generation=generation, since=since)
                assert encode_read(logged) == answer, (every, generation, since)


def test_a_checkpoint_without_the_semantics_is_passed_over_for_the_full_fold(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Logs written before checkpoints carried the semantics; and one that does not
    rebuild its recorded hash (damaged) is not trusted either."""
    original = SessionCore.checkpoint
    for damage in (
        lambda state: state.pop("semantics"),
        lambda state: state["semantics"]["nodes"].pop(),
    ):

        def checkpoint(core: SessionCore, damage: Any = damage) -> dict[str, Any]:
            state = original(core)
            damage(state)
            return state

        monkeypatch.setattr(SessionCore, "checkpoint", checkpoint)
        recorder = CountingRecorder()
        trio.run(partial(run_counter, recorder, 30, checkpoint_every=5))
        monkeypatch.undo()
        plain = MemoryRecorder()
        trio.run(partial(run_counter, plain, 30, checkpoint_every=None))
        assert encode_read(read_at(recorder, "c")) == encode_read(read_at(plain, "c"))
        assert recorder.replayed == len(list(recorder.read("c")))
