"""Sessions checkpoint periodically and recover from the last checkpoint plus the tail."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import trio

from semledger.actors import LogWriter, SessionActor, SessionCore, SessionRegistry
from semledger.eventlog import (
    MemoryRecorder,
    SemanticsTaken,
    SessionStarted,
    SnapshotTaken,
    SqliteRecorder,
)
from semledger.examples import counter, todo
from semledger.replay import read_at, reexecute
from semledger.runtime import (
    JOURNAL_SIZE,
    ActionKind,
    App,
    BySemanticId,
    Delta,
    Latest,
    Receipt,
    SemanticId,
    SetText,
    SimpleAction,
    button,
    column,
    text,
)
from semledger.runtime._wire import encode_read

APP = "semledger.examples.todo:app"


def _target(semantic_id: str) -> BySemanticId:
    return BySemanticId(SemanticId(semantic_id))


async def _run(
    path: Path, *, every: int | None, items: int, crash: bool, app: App[Any, Any] = todo.app
) -> object:
    recorder = SqliteRecorder(path)
    async with trio.open_nursery() as nursery:
        writer = await nursery.start(LogWriter(recorder).run)
        registry = SessionRegistry(nursery, writer, recorder)
        session = await registry.open(
            "s", lambda: SessionActor("s", app, APP, writer, recorder, checkpoint_every=every)
        )
        for i in range(items):
            await session.perform_action(_target("todo.input"), SetText(f"item {i}"), Latest())
            await session.perform_action(
                _target("todo.input"), SimpleAction(ActionKind.SUBMIT), Latest()
            )
        read = await session.read_semantics(None)
        if crash:
            nursery.cancel_scope.cancel()
        else:
            await registry.close_all()
            writer.close()
    recorder.close()
    return read


async def _recover(
    path: Path, every: int | None, app: App[Any, Any] = todo.app
) -> tuple[object, bool]:
    recorder = SqliteRecorder(path)
    async with trio.open_nursery() as nursery:
        writer = await nursery.start(LogWriter(recorder).run)
        registry = SessionRegistry(nursery, writer, recorder)
        session = await registry.open(
            "s", lambda: SessionActor("s", app, APP, writer, recorder, checkpoint_every=every)
        )
        read = await session.read_semantics(None)
        recovered = session.recovered
        await registry.close_all()
        writer.close()
    recorder.close()
    return read, recovered


async def test_checkpoints_are_logged_every_n_inputs(tmp_path: Path) -> None:
    await _run(tmp_path / "log.db", every=5, items=10, crash=False)
    recorder = SqliteRecorder(tmp_path / "log.db")
    checkpoints = [e for _r, e in recorder.events("s") if isinstance(e, SnapshotTaken)]
    assert len(checkpoints) == 4
    assert all(c.state["runtime"]["generation"] == c.generation for c in checkpoints)


def _checkpoints(path: Path) -> list[SnapshotTaken]:
    with SqliteRecorder(path) as recorder:
        return [e for _r, e in recorder.events("s") if isinstance(e, SnapshotTaken)]


async def test_inputs_count_toward_a_checkpoint_across_restarts(tmp_path: Path) -> None:
    """A session restarted more often than every N inputs still checkpoints every N: its
    count goes on from the log, not from the restart."""
    for _ in range(3):  # 4 inputs a run, 12 in all
        await _run(tmp_path / "log.db", every=5, items=2, crash=True)
    assert [c.generation for c in _checkpoints(tmp_path / "log.db")] == [6, 11]


async def test_a_session_resumed_past_its_checkpoint_interval_checkpoints_as_it_resumes(
    tmp_path: Path,
) -> None:
    """So the next recovery is bounded even if no input comes in this run."""
    await _run(tmp_path / "log.db", every=None, items=6, crash=True)
    assert _checkpoints(tmp_path / "log.db") == []
    await _recover(tmp_path / "log.db", every=5)
    assert [c.generation for c in _checkpoints(tmp_path / "log.db")] == [13]
    _read, recovered = await _recover(tmp_path / "log.db", every=5)
    assert recovered
    assert len(_checkpoints(tmp_path / "log.db")) == 1  # nothing due since


async def test_recovery_from_a_checkpoint_matches_the_session_before_the_crash(
    tmp_path: Path,
) -> None:
    before = await _run(tmp_path / "log.db", every=3, items=7, crash=True)
    after, recovered = await _recover(tmp_path / "log.db", every=3)
    assert recovered
    assert after == before


async def test_recovery_ignores_checkpoints_when_they_are_disabled(tmp_path: Path) -> None:
    before = await _run(tmp_path / "log.db", every=3, items=4, crash=True)
    after, _ = await _recover(tmp_path / "log.db", every=None)
    assert after == before


async def test_a_session_with_checkpoints_still_replays_from_zero(tmp_path: Path) -> None:
    await _run(tmp_path / "log.db", every=2, items=5, crash=False)
    recorder = SqliteRecorder(tmp_path / "log.db")
    report = reexecute(recorder, "s", todo.app)
    assert report.ok, report.divergence
    first = next(e for _r, e in recorder.events("s"))
    assert isinstance(first, SessionStarted)


async def test_a_model_type_the_model_does_not_encode_as_only_means_no_checkpoints(
    tmp_path: Path,
) -> None:
    """cattrs passes a model declared as an `object` through as it is; the checkpoint must
    be skipped, not handed to the log writer, which would fail the step's whole batch and end
    the session. (A model of another class than its model_type, an int, is the app's
    NotAModelError as init returns it.)"""
    wrong = attrs.evolve(todo.app, model_type=object)
    before = await _run(tmp_path / "log.db", every=3, items=4, crash=True, app=wrong)
    with SqliteRecorder(tmp_path / "log.db") as recorder:
        assert not any(isinstance(e, SnapshotTaken) for _r, e in recorder.events("s"))
        summary = recorder.summary("s")
    assert summary is not None
    assert summary.events > 8 * 2
    after, recovered = await _recover(tmp_path / "log.db", every=3, app=wrong)
    assert recovered
    assert after == before


@attrs.frozen
class _History:
    """A model whose history is a tuple under ``Any``: msgpack reads it back as a list."""

    pushed: Any = ()


@attrs.frozen
class _Push:
    pass


def _push(model: _History, _msg: _Push) -> _History:
    return _History((*model.pushed, "x"))


HISTORY: App[_History, _Push] = App(
    init=_History,
    update=_push,
    view=lambda m: column(
        text("Pushed", str(len(m.pushed)), semantic_id="pushed"),
        button("Push", _Push(), semantic_id="push"),
    ),
    name="history",
    message_types=(_Push,),
    model_type=_History,
)


async def test_a_model_that_reads_back_as_another_value_gets_no_checkpoint_and_recovers_as_it_was(
    tmp_path: Path,
) -> None:
    """Resumed from a checkpoint, its model would hold a list where the live one held a
    tuple; the view shows neither, so only the next update would fail."""
    push = (_target("push"), SimpleAction(ActionKind.ACTIVATE), Latest())
    async with trio.open_nursery() as nursery:
        for round_ in range(2):
            with SqliteRecorder(tmp_path / "log.db") as recorder:
                writer = await nursery.start(LogWriter(recorder).run)
                registry = SessionRegistry(nursery, writer, recorder)
                actor = SessionActor(
                    "s", HISTORY, "tests:history", writer, recorder, checkpoint_every=2
                )
                session = await registry.open("s", lambda: actor)  # noqa: B023
                assert session.recovered == (round_ == 1)
                for _ in range(5):
                    assert isinstance(await session.perform_action(*push), Receipt)
                assert session.core.runtime.model == _History(("x",) * 5 * (round_ + 1))
                await registry.close_all()
                writer.close()
    with SqliteRecorder(tmp_path / "log.db") as recorder:
        assert not any(isinstance(e, SnapshotTaken) for _r, e in recorder.events("s"))
        assert reexecute(recorder, "s", HISTORY).ok


async def test_a_session_recovered_from_a_checkpoint_answers_deltas_from_before_it(
    tmp_path: Path,
) -> None:
    """Restored at the checkpoint, its journal began there: a `since` of the 64 generations
    before was answered in full, where the live session and the log-served read answer a
    delta."""
    path = tmp_path / "log.db"
    await _run(path, every=7, items=10, crash=True)
    with SqliteRecorder(path) as recorder:
        checkpoint = recorder.last_of("s", "SnapshotTaken")
        assert checkpoint is not None
        (_r, taken), = recorder.events("s", start=checkpoint.seq, stop=checkpoint.seq + 1)
        assert isinstance(taken, SnapshotTaken)
        async with trio.open_nursery() as nursery:
            writer = await nursery.start(LogWriter(recorder).run)
            registry = SessionRegistry(nursery, writer, recorder)
            session = await registry.open(
                "s", lambda: SessionActor("s", todo.app, APP, writer, recorder, checkpoint_every=7)
            )
            assert session.recovered
            current = session.core.runtime.generation
            since = taken.generation - 2
            assert current - since < JOURNAL_SIZE
            live = await session.read_semantics(since)
            await registry.close_all()
            writer.close()
        assert isinstance(live, Delta)
        assert encode_read(live) == encode_read(read_at(recorder, "s", since=since))


def test_a_checkpoint_keeps_that_the_model_may_hold_text_the_log_redacted() -> None:
    """So that a session recovered from it still starts no effect made after that text."""
    core = SessionCore(todo.app)
    assert not SessionCore.from_checkpoint(todo.app, core.checkpoint()).redacted
    core.redacted = True
    assert SessionCore.from_checkpoint(todo.app, core.checkpoint()).redacted


async def test_a_read_checkpoint_comes_once_the_commits_since_the_last_add_up_to_the_tree() -> None:
    """Each commit adds one, and one a node it changed: an increment of the counter (a tree
    of 6 nodes) adds 2, so a read checkpoint comes every third increment after the first."""
    recorder = MemoryRecorder()
    increment = BySemanticId(SemanticId.new("counter.increment"))
    async with trio.open_nursery() as nursery:
        writer: LogWriter = await nursery.start(LogWriter(recorder).run)
        actor = SessionActor(
            "s", counter.app, "semledger.examples.counter:app", writer, recorder,
            checkpoint_every=1,
        )  # fmt: skip
        async with trio.open_nursery() as sessions:
            await sessions.start(actor.run)
            for _ in range(8):
                await actor.perform_action(increment, SimpleAction(ActionKind.ACTIVATE), Latest())
            assert len(actor.core.runtime.snapshot.nodes) == 6
            actor.close()
        writer.close()
    taken = [e.generation for _r, e in recorder.events("s") if isinstance(e, SemanticsTaken)]
    assert taken == [2, 5, 8]
