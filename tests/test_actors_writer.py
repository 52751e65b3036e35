"""The log writer: group commit across sessions, conflict isolation, durability before replies."""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from semledger.actors import ActorClosedError, LogWriter, SessionActor, SessionRegistry
from semledger.eventlog import (
    ActionReceipt,
    EventTooLargeError,
    MemoryRecorder,
    NewEvent,
    SequenceConflict,
    SessionEnded,
    SqliteRecorder,
    StoredEvent,
    verify_chain,
)
from semledger.examples import counter
from semledger.runtime import ActionKind, BySemanticId, Latest, Receipt, SemanticId, SimpleAction


def note(text: str, seq: int) -> NewEvent:
    return NewEvent(text, seq, SessionEnded(f"{text} {seq}"), 0.0)


class GatedRecorder(MemoryRecorder):
    """A memory recorder whose appends wait for `gate` (so a test can queue requests up)."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.gate.set()
        self.calls = 0

    def append(self, events: Sequence[NewEvent]) -> list[StoredEvent]:
        self.calls += 1
        self.gate.wait(timeout=30)
        return super().append(events)


class MarkingRecorder(MemoryRecorder):
    """Records, the moment each append returns, what it made durable."""

    def __init__(self, marks: list[tuple[str, Any]]) -> None:
        super().__init__()
        self.marks = marks

    def append(self, events: Sequence[NewEvent]) -> list[StoredEvent]:
        stored = super().append(events)
        self.marks.append(("durable", [(e.session, e.event) for e in events]))
        return stored


async def run_agents(
    nursery: trio.Nursery, writer: LogWriter, recorder: MemoryRecorder, marks: list[Any]
) -> None:
    """Four counter sessions, each incremented five times by its own agent, then closed."""
    increment = BySemanticId(SemanticId.new("counter.increment"))
    activate = SimpleAction(ActionKind.ACTIVATE)
    actors = []
    for i in range(4):
        actor = SessionActor(
            f"s{i}", counter.app, "semledger.examples.counter:app", writer, recorder
        )
        await nursery.start(actor.run)
        actors.append(actor)

    async def agent(actor: SessionActor) -> None:
        for _ in range(5):
            receipt = await actor.perform_action(increment, activate, Latest())
            assert isinstance(receipt, Receipt)
            marks.append(("reply", (actor.name, receipt.after)))

    async with trio.open_nursery() as agents:
        for actor in actors:
            agents.start_soon(agent, actor)
    for actor in actors:
        actor.close()


async def test_appends_from_many_concurrent_sessions_are_group_committed() -> None:
    recorder = MemoryRecorder()
    sessions, batches = 20, 5
    async with trio.open_nursery() as nursery:
        writer: LogWriter = await nursery.start(LogWriter(recorder).run)

        async def session(name: str) -> None:
            for seq in range(1, batches + 1):
                stored = await writer.append([note(name, seq)])
                assert [s.seq for s in stored] == [seq]

        async with trio.open_nursery() as sessions_nursery:
            for i in range(sessions):
                sessions_nursery.start_soon(session, f"s{i}")
        writer.close()
    appends = sessions * batches
    assert writer.appended == appends
    assert writer.transactions < appends
    for i in range(sessions):
        assert [r.seq for r in recorder.read(f"s{i}")] == list(range(1, batches + 1))
        assert verify_chain(recorder.read(f"s{i}")).ok


async def test_a_transaction_holds_at_most_max_batch_batches() -> None:
    recorder = MemoryRecorder()
    async with trio.open_nursery() as nursery:
        writer: LogWriter = await nursery.start(LogWriter(recorder, max_batch=2).run)
        queued = [writer.submit([note(f"s{i}", 1)]) for i in range(5)]
        for pending in queued:
            await pending.durable()
        writer.close()
    assert (writer.transactions, writer.appended) == (3, 5)


async def test_one_sessions_sequence_conflict_fails_only_that_sessions_append() -> None:
    recorder = GatedRecorder()
    recorder.append([note("b", 1)])  # someone else already wrote b's next event
    results: dict[str, object] = {}
    async with trio.open_nursery() as nursery:
        writer: LogWriter = await nursery.start(LogWriter(recorder).run)

        async def append(name: str, seq: int) -> None:
            try:
                results[name] = await writer.append([note(name, seq)])
            except SequenceConflict as conflict:
                results[name] = conflict

        recorder.gate.clear()
        nursery.start_soon(append, "warm-up", 1)
        await trio.testing.wait_all_tasks_blocked()
        for name in ("a", "b", "c"):
            nursery.start_soon(append, name, 1)
        await trio.testing.wait_all_tasks_blocked()
        assert writer.queue_depth == 3  # a, b and c wait together: one batch
        recorder.gate.set()
        await trio.testing.wait_all_tasks_blocked()
        writer.close()
    conflict = results["b"]
    assert isinstance(conflict, SequenceConflict)
    assert (conflict.session, conflict.seq, conflict.expected) == ("b", 1, 2)
    for name in ("a", "c", "warm-up"):
        stored = results[name]
        assert isinstance(stored, list)
        assert [(s.session, s.seq) for s in stored] == [(name, 1)]
        assert recorder.head(name) is not None
    b_head = recorder.head("b")
    assert b_head is not None
    assert b_head.seq == 1  # the conflicting event was not written
    # The set-up, the warm-up, the batch of three, then a and c together.
    assert recorder.calls == 4
    assert writer.transactions == 2


async def test_a_head_moved_by_another_process_refuses_only_that_session(tmp_path: Path) -> None:
    """The SQLite recorder trusts its cached heads; another writer's append shows up as a
    primary-key clash, and the conflict must name the session it hit, not the first one."""
    path = tmp_path / "log.db"
    ours, theirs = SqliteRecorder(path), SqliteRecorder(path)
    try:
        ours.append([note(name, 1) for name in ("a", "b", "c")])
        theirs.append([note("b", 2)])
        with pytest.raises(SequenceConflict) as caught:
            ours.append([note("a", 2), note("b", 2), note("c", 2)])
        assert (caught.value.session, caught.value.seq, caught.value.expected) == ("b", 2, 3)

        ours.append([note(name, 1) for name in "xyz"])  # their heads are now cached
        theirs.append([note("y", 2)])
        results: dict[str, object] = {}
        async with trio.open_nursery() as nursery:
            writer: LogWriter = await nursery.start(LogWriter(ours).run)
            pendings = {name: writer.submit([note(name, 2)]) for name in "xyz"}
            pendings["y3"] = writer.submit([note("y", 3)], after=pendings["y"])
            for name, pending in pendings.items():
                try:
                    results[name] = [r.seq for r in await pending.durable()]
                except SequenceConflict as conflict:
                    results[name] = (conflict.session, conflict.seq, conflict.expected)
            writer.close()
        assert results == {"x": [2], "z": [2], "y": ("y", 2, 3), "y3": ("y", 2, 3)}
        assert writer.transactions == 1  # x and z together, after the one failed try
        assert [r.seq for r in ours.read("y")] == [1, 2]
        assert all(verify_chain(ours.read(name)).ok for name in "abcxyz")
    finally:
        ours.close()
        theirs.close()


async def test_an_event_too_large_for_the_log_refuses_only_its_sessions_batches() -> None:
    """Written together with other sessions' batches, it failed them all: their agents were
    told the log could not be written, for an event they did not send."""
    recorder = MemoryRecorder()
    recorder.size_limit = 2_000
    huge = NewEvent("b", 1, SessionEnded("x" * 5_000), 0.0)
    results: dict[str, object] = {}
    async with trio.open_nursery() as nursery:
        writer: LogWriter = await nursery.start(LogWriter(recorder).run)
        pendings = {"a": writer.submit([note("a", 1)]), "b": writer.submit([huge])}
        pendings["b2"] = writer.submit([note("b", 2)], after=pendings["b"])
        pendings["c"] = writer.submit([note("c", 1)])
        for name, pending in pendings.items():
            try:
                results[name] = [r.seq for r in await pending.durable()]
            except EventTooLargeError as error:
                results[name] = (error.session, error.seq)
        writer.close()
    assert results == {"a": [1], "b": ("b", 1), "b2": ("b", 1), "c": [1]}
    assert recorder.head("b") is None


async def test_an_event_the_log_cannot_encode_refuses_only_its_sessions_batches() -> None:
    """Written together with other sessions' batches, it failed them all: a session whose
    effect failed with a file name in its message ended every session sharing the writer."""
    recorder = GatedRecorder()
    recorder.gate.clear()
    unencodable = NewEvent("b", 1, SessionEnded("cannot read report-\udcff.csv"), 0.0)
    results: dict[str, object] = {}
    async with trio.open_nursery() as nursery:
        writer: LogWriter = await nursery.start(LogWriter(recorder).run)
        first = writer.submit([note("z", 1)])  # the writer waits on it while the rest queue
        await trio.testing.wait_all_tasks_blocked()
        pendings = {"a": writer.submit([note("a", 1)]), "b": writer.submit([unencodable])}
        pendings["b2"] = writer.submit([note("b", 2)], after=pendings["b"])
        pendings["a2"] = writer.submit([note("a", 2)], after=pendings["a"])
        pendings["c"] = writer.submit([note("c", 1)])
        recorder.gate.set()
        await first.durable()
        for name, pending in pendings.items():
            try:
                results[name] = [r.seq for r in await pending.durable()]
            except ValueError as error:
                results[name] = type(error).__name__
        writer.close()
    assert results == {"a": [1], "a2": [2], "b": "ValueError", "b2": "ValueError", "c": [1]}
    assert recorder.head("b") is None
    assert writer.transactions == 3  # z; then a's, then c's, once the whole batch failed


async def test_a_failing_recorder_fails_every_append_of_the_batch() -> None:
    class Broken(MemoryRecorder):
        def append(self, events: Sequence[NewEvent]) -> list[StoredEvent]:
            raise OSError("disk full")

    async with trio.open_nursery() as nursery:
        writer: LogWriter = await nursery.start(LogWriter(Broken()).run)
        with pytest.raises(OSError, match="disk full"):
            await writer.append([note("a", 1)])
        writer.close()
    assert writer.transactions == 0


async def test_a_recorder_that_raises_no_exception_fails_the_batch_and_ends_the_writer() -> None:
    """A ``KeyboardInterrupt`` in its thread, say: the writer stops, not writes on."""

    class Interrupted(BaseException):
        pass

    class Halting(MemoryRecorder):
        def append(self, events: Sequence[NewEvent]) -> list[StoredEvent]:
            raise Interrupted

    with trio.move_on_after(10), pytest.RaisesGroup(Interrupted):
        async with trio.open_nursery() as nursery:
            writer: LogWriter = await nursery.start(LogWriter(Halting()).run)
            pending = writer.submit([note("a", 1)])
            await pending.settled_now()
            await trio.sleep_forever()  # (until the writer's error ends the nursery)
    assert not pending.succeeded


async def test_an_empty_batch_is_durable_at_once_without_a_transaction() -> None:
    async with trio.open_nursery() as nursery:
        writer: LogWriter = await nursery.start(LogWriter(MemoryRecorder()).run)
        pending = writer.submit([])
        assert pending.succeeded
        assert await pending.durable() == []
        writer.close()
    assert writer.transactions == 0


async def test_a_session_actors_reply_comes_only_after_its_events_are_durable() -> None:
    marks: list[tuple[str, Any]] = []
    recorder = MarkingRecorder(marks)
    async with trio.open_nursery() as nursery:
        writer: LogWriter = await nursery.start(LogWriter(recorder).run)
        async with trio.open_nursery() as sessions:
            await run_agents(sessions, writer, recorder, marks)
        writer.close()
    replies = [(i, m[1]) for i, m in enumerate(marks) if m[0] == "reply"]
    assert len(replies) == 20
    for index, (session, after) in replies:
        durable_at = next(
            i
            for i, (kind, payload) in enumerate(marks)
            if kind == "durable"
            and any(
                s == session and isinstance(e, ActionReceipt) and e.after == after
                for s, e in payload
            )
        )
        assert durable_at < index, (session, after)
    assert writer.transactions < writer.appended


@contextmanager
def _write_locked(path: Path) -> Iterator[None]:
    """Another connection holds the log's write lock for the block, as another process's
    write transaction (a maintenance script) does."""
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        holder.execute("COMMIT")
        holder.close()


async def test_a_log_locked_by_another_process_is_waited_out_and_the_session_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A lock held past the busy timeout (an ``sqlite3`` shell in ``BEGIN IMMEDIATE``)
    delays the receipt until its events are written; it does not end the session."""
    path = tmp_path / "log.db"
    increment = BySemanticId(SemanticId.new("counter.increment"))
    activate = SimpleAction(ActionKind.ACTIVATE)
    caplog.set_level(logging.WARNING, logger="semledger")
    with SqliteRecorder(path, busy_timeout=0.1) as recorder:
        async with trio.open_nursery() as nursery:
            writer: LogWriter = await nursery.start(LogWriter(recorder, warn_every=0.2).run)
            async with trio.open_nursery() as sessions:
                actor = SessionActor(
                    "s", counter.app, "semledger.examples.counter:app", writer, recorder
                )
                await sessions.start(actor.run)
                first = await actor.perform_action(increment, activate, Latest())
                assert isinstance(first, Receipt)
                receipts: list[object] = []
                with _write_locked(path):

                    async def act() -> None:
                        receipts.append(await actor.perform_action(increment, activate, Latest()))

                    sessions.start_soon(act)
                    await trio.sleep(0.6)  # several busy timeouts, and more than one warning
                    assert receipts == []  # no receipt before its events are durable
                    assert writer.stalled.is_set()
                with trio.fail_after(5):
                    while not receipts:
                        await trio.sleep(0.01)
                (receipt,) = receipts
                assert isinstance(receipt, Receipt)
                assert not writer.stalled.is_set()  # a session stopping now need not wait
                logged = [e for _, e in recorder.events("s") if isinstance(e, ActionReceipt)]
                assert [e.after for e in logged] == [first.after, receipt.after]
                assert not actor.ended
                assert actor.failure is None
                again = await actor.perform_action(increment, activate, Latest())
                assert isinstance(again, Receipt)
                actor.close()
            writer.close()
        assert verify_chain(recorder.read("s")).ok
    said = [r.getMessage() for r in caplog.records if r.name.startswith("semledger")]
    waiting = [line for line in said if "locked by another process; waiting to write" in line]
    assert len(waiting) >= 2, said
    assert sum(f"the log {path} is no longer locked: wrote" in line for line in said) == 1, said


@pytest.mark.parametrize("stop", ["closed", "cancelled"])
async def test_a_writer_stopped_while_the_log_is_locked_fails_what_it_holds_and_ends(
    tmp_path: Path, stop: str
) -> None:
    path = tmp_path / "log.db"
    with SqliteRecorder(path, busy_timeout=0.1) as recorder:
        with _write_locked(path), trio.fail_after(5):
            async with trio.open_nursery() as nursery:
                writer: LogWriter = await nursery.start(LogWriter(recorder).run)
                first = writer.submit([note("a", 1)])
                queued = writer.submit([note("b", 1)])
                await trio.sleep(0.3)
                assert not first.settled
                late = writer.submit([note("c", 1)])  # queued behind the stalled transaction
                attempts: list[object] = []
                append = recorder.append

                def counted(events: Sequence[NewEvent]) -> list[StoredEvent]:
                    attempts.append(events)
                    return append(events)

                recorder.append = counted  # type: ignore[method-assign]
                if stop == "closed":
                    writer.close()
                else:
                    nursery.cancel_scope.cancel()
            for pending in (first, queued, late):
                with pytest.raises(ActorClosedError):
                    await pending.durable()
            # Closed, it gave up: not one more attempt, each of which waits out a busy timeout.
            assert attempts == []
        for session in ("a", "b", "c"):
            assert recorder.head(session) is None


def test_a_log_writer_given_a_path_instead_of_a_recorder_is_refused_as_it_is_made() -> None:
    """LogWriter("log.db") started, and failed only at the first write, inside it."""
    with pytest.raises(TypeError, match=r"^recorder: expected a Recorder .*got str 'log.db'"):
        LogWriter("log.db")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"max_batch": "5"}, TypeError, r"^max_batch: expected an int, got str '5'$"),
        ({"max_batch": True}, TypeError, r"^max_batch: expected an int, got bool True$"),
        ({"max_batch": 0}, ValueError, r"^max_batch: expected at least 1, got 0$"),
        ({"warn_every": "30"}, TypeError, r"^warn_every: expected a number of seconds, got str"),
        ({"warn_every": False}, TypeError, r"^warn_every: expected a number of seconds, got bool"),
        ({"warn_every": 0}, ValueError, r"^warn_every: expected a finite number above 0, got 0$"),
        (
            {"warn_every": float("nan")},
            ValueError,
            r"^warn_every: expected a finite number above 0, got nan$",
        ),
    ],
)
def test_a_log_writer_refuses_a_bad_option_as_it_is_made(
    options: dict[str, Any], error: type[Exception], message: str
) -> None:
    """LogWriter(recorder, max_batch="5") was taken, and failed at the first batch inside
    the writer's task, naming neither the option nor the writer."""
    with pytest.raises(error, match=message):
        LogWriter(MemoryRecorder(), **options)


async def test_a_writer_never_started_refuses_a_batch_instead_of_leaving_it_waiting() -> None:
    """A registry given a LogWriter nobody started waited forever to open a session."""
    recorder = MemoryRecorder()
    writer = LogWriter(recorder)
    with pytest.raises(RuntimeError, match=r"^the log writer has not been started: start it"):
        writer.submit([NewEvent("s", 1, SessionEnded("x"), 1.0)])
    ref = "semledger.examples.counter:app"
    async with trio.open_nursery() as nursery:
        registry = SessionRegistry(nursery, writer, recorder)
        with trio.fail_after(5), pytest.raises(RuntimeError, match="has not been started"):
            await registry.open("s", lambda: SessionActor("s", counter.app, ref, writer, recorder))
    assert recorder.head("s") is None
