"""Log-served reads equal live reads: whatever a live session answered to read_semantics,
`read_at` on its log answers identically, for random sessions of the todo and gallery apps,
whether the fold starts at a checkpoint or at generation 0."""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from semledger.actors import LogWriter, SessionActor
from semledger.eventlog import (
    CONVERTER,
    Committed,
    InconsistentLogError,
    MemoryRecorder,
    NewEvent,
    Recorder,
    SemanticsTaken,
    SessionStarted,
    SnapshotTaken,
    SqliteRecorder,
    StoredEvent,
    SurfaceCalled,
)
from semledger.examples import counter, gallery, todo
from semledger.replay import SurfaceSessionError, UnknownGenerationError, fold, full_at, read_at
from semledger.runtime import (
    JOURNAL_SIZE,
    ActionKind,
    App,
    BySemanticId,
    Delta,
    Latest,
    Rejection,
    SemanticId,
    SemanticsSnapshot,
    SimpleAction,
    View,
    button,
    group,
    text,
)
from semledger.runtime import _wire as wire
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
                    # The answer's own generation: an effect's result (the todo's save) may
                    # be committed between the answer and this task going on.
                    answered = (
                        result.to_generation if isinstance(result, Delta) else result.generation
                    )
                    answers.append((answered, since, encode_read(result)))
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


def _surface_session(*methods: str) -> MemoryRecorder:
    """A log of surface session ``page`` whose surface was called with `methods`."""
    recorder = MemoryRecorder()
    started = SessionStarted("https://example.com/", "web", {"adapter": "web"}, True)
    calls = [SurfaceCalled(method, {}, None, None, None, None) for method in methods]
    recorder.append([NewEvent("page", seq, event, 0.0)
                     for seq, event in enumerate([started, *calls], start=1)])  # fmt: skip
    return recorder


def test_a_read_of_a_session_that_drove_a_surface_says_so_instead_of_an_empty_tree() -> None:
    with pytest.raises(SurfaceSessionError) as raised:
        read_at(_surface_session("open", "snapshot", "act", "close"), "page")
    assert str(raised.value) == (
        "surface session 'page': its log holds the surface's calls but no generation an agent"
        " was shown over MCP, so there is nothing to read"
    )
    assert raised.value.called


@pytest.mark.parametrize("methods", [(), ("open",), ("open", "close")])
def test_a_read_of_a_surface_session_with_no_call_says_none_was_made(
    methods: tuple[str, ...],
) -> None:
    """Served over MCP and closed before the agent read, it was told it was not served over
    MCP and that its audit listed its actions, of which it had none."""
    with pytest.raises(SurfaceSessionError) as raised:
        read_at(_surface_session(*methods), "page")
    assert str(raised.value) == (
        "surface session 'page': no read or action was made in it, so it has no generation"
        " yet (a surface session has the generations its agent was shown over MCP to read)"
    )
    assert not raised.value.called


class CountingRecorder(MemoryRecorder):
    """Counts the events read, so a test sees how much of the log a read folded."""

    replayed = 0

    def read(
        self, session: str, *, start: int = 0, stop: int | None = None
    ) -> Iterator[StoredEvent]:
        for record in super().read(session, start=start, stop=stop):
            self.replayed += 1
            yield record


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


class CheckpointCountingRecorder(MemoryRecorder):
    """Counts the read checkpoints (``SemanticsTaken`` rows) it hands out, however asked."""

    checkpoints = 0

    def read(
        self, session: str, *, start: int = 0, stop: int | None = None
    ) -> Iterator[StoredEvent]:
        for record in super().read(session, start=start, stop=stop):
            self.checkpoints += record.topic == "SemanticsTaken"
            yield record

    def last_of(self, session: str, topic: str, *, before: int | None = None) -> StoredEvent | None:
        record = super().last_of(session, topic, before=before)
        self.checkpoints += record is not None and record.topic == "SemanticsTaken"
        return record


def test_an_early_read_reads_few_of_the_read_checkpoints_after_it() -> None:
    """Reading an early generation walked back over every later read checkpoint, decoding
    each: its cost grew with the rest of the session, not with its tree."""
    recorder = CheckpointCountingRecorder()
    trio.run(partial(run_counter, recorder, 240, checkpoint_every=2))
    checkpoints = len(recorder.seqs_of("c", "SemanticsTaken"))
    plain = MemoryRecorder()
    trio.run(partial(run_counter, plain, 240, checkpoint_every=None))
    assert checkpoints >= 50
    for generation in [*range(9, 241, 9), 1, 2, 239, 240]:
        for since in [None, *(s for s in (generation - 1, generation - 70) if s >= 0)]:
            recorder.checkpoints = 0
            read = read_at(recorder, "c", generation=generation, since=since)
            assert encode_read(read) == encode_read(
                read_at(plain, "c", generation=generation, since=since)
            ), (generation, since)
            # (a bisection of the checkpoints, then the one chosen, read whole)
            assert recorder.checkpoints <= checkpoints.bit_length() + 2, (generation, since)


def test_a_commit_that_does_not_apply_is_named_by_its_seq_after_a_deleted_event(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.db"
    with SqliteRecorder(db) as recorder:
        trio.run(partial(run_counter, recorder, 3, checkpoint_every=None))
        commits = [r.seq for r in recorder.read("c") if r.topic == Committed.__name__]
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM events WHERE session = 'c' AND seq = ?", (commits[-2],))
    conn.close()
    with SqliteRecorder(db) as recorder, pytest.raises(InconsistentLogError) as caught:
        read_at(recorder, "c")
    assert caught.value.seq == commits[-1]
    assert f"event {commits[-1]}: the commit does not apply" in str(caught.value)


def _forged_label(event: Committed) -> Committed:
    node = event.delta["upserted"][0]
    return attrs.evolve(event, delta={**event.delta, "upserted": [{**node, "label": "forged"}]})


@pytest.mark.parametrize(
    ("forge", "says"),
    [
        # Its delta still applies; the hash logged with it says it made another snapshot.
        (_forged_label, "its delta does not make the snapshot its hash names"),
        # It says another generation than its delta makes: the read named event "29" of a
        # session of 28, "its commits reach generation 5, not 7".
        (
            lambda event: attrs.evolve(event, generation=event.generation + 2),
            "it says generation {forged}, its delta makes {generation}",
        ),
    ],
    ids=["delta", "generation"],
)
def test_a_commit_changed_so_that_its_delta_still_applies_is_named_instead_of_read(
    tmp_path: Path, forge: Callable[[Committed], Committed], says: str
) -> None:
    db = tmp_path / "log.db"
    with SqliteRecorder(db) as recorder:
        trio.run(partial(run_counter, recorder, 3, checkpoint_every=None))
        (last,) = [r for r in recorder.read("c") if r.topic == Committed.__name__][-1:]
    event = CONVERTER.decode(last.topic, last.version, last.body)
    assert isinstance(event, Committed)
    forged = forge(event)
    body = CONVERTER.encode(forged).body
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE events SET body = ? WHERE session = 'c' AND seq = ?", (body, last.seq))
    conn.close()
    with SqliteRecorder(db) as recorder, pytest.raises(InconsistentLogError) as caught:
        full_at(recorder, "c")
    assert caught.value.seq == last.seq
    said = says.format(forged=forged.generation, generation=event.generation)
    assert f"'c', event {last.seq}: {said}: the log was changed (audit" in str(caught.value)


def test_a_read_of_the_last_change_served_from_its_commit_names_a_changed_commit(
    tmp_path: Path,
) -> None:
    """A read since the generation before is answered from the commit's logged delta
    alone, with no fold to check it against its hash: a delta whose labels were rewritten
    was served as the agent's answer, while a Full read named the damage."""
    db = tmp_path / "log.db"
    with SqliteRecorder(db) as recorder:
        trio.run(partial(run_counter, recorder, 3, checkpoint_every=None))
        last = [r for r in recorder.read("c") if r.topic == Committed.__name__][-1]
    event = CONVERTER.decode(last.topic, last.version, last.body)
    assert isinstance(event, Committed)
    upserted = [{**n, "label": "forged"} for n in event.delta["upserted"]]
    body = CONVERTER.encode(attrs.evolve(event, delta={**event.delta, "upserted": upserted}))
    with sqlite3.connect(db) as conn:
        conn.execute(
            "UPDATE events SET body = ? WHERE session = 'c' AND seq = ?", (body.body, last.seq)
        )
    conn.close()
    with SqliteRecorder(db) as recorder:
        for since in (event.generation - 1, event.generation):
            with pytest.raises(InconsistentLogError) as caught:
                read_at(recorder, "c", generation=event.generation, since=since)
            assert caught.value.seq == last.seq, since
            assert "the log was changed" in str(caught.value)


def test_a_read_checkpoint_whose_tree_was_changed_is_named_instead_of_read(
    tmp_path: Path,
) -> None:
    """Its tree still decodes; the commit of its generation names another snapshot. A read
    at its generation served the changed tree, and one after it blamed the next commit."""
    db = tmp_path / "log.db"
    with SqliteRecorder(db) as recorder:
        trio.run(partial(run_counter, recorder, 12, checkpoint_every=5))
        checkpoint = [r for r in recorder.read("c") if r.topic == SemanticsTaken.__name__][-1]
    event = CONVERTER.decode(checkpoint.topic, checkpoint.version, checkpoint.body)
    assert isinstance(event, SemanticsTaken)
    nodes = [{**n, "label": "forged"} for n in event.semantics["nodes"]]
    body = CONVERTER.encode(attrs.evolve(event, semantics={**event.semantics, "nodes": nodes}))
    with sqlite3.connect(db) as conn:
        conn.execute(
            "UPDATE events SET body = ? WHERE session = 'c' AND seq = ?",
            (body.body, checkpoint.seq),
        )
    conn.close()
    with SqliteRecorder(db) as recorder:
        for generation in (event.generation, event.generation + 1, None):
            with pytest.raises(InconsistentLogError) as caught:
                read_at(recorder, "c", generation=generation)
            assert caught.value.seq == checkpoint.seq, generation
            assert "the read checkpoint's tree is not the snapshot the commit" in str(caught.value)
        assert read_at(recorder, "c", generation=event.generation - 1)  # before it: intact


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


def test_a_read_checkpoint_that_is_not_a_full_read_of_its_generation_is_passed_over(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A damaged log: the fold starts at an earlier checkpoint, or at generation 0."""
    recorder = CountingRecorder()
    trio.run(partial(run_counter, recorder, 30, checkpoint_every=5))
    plain = MemoryRecorder()
    trio.run(partial(run_counter, plain, 30, checkpoint_every=None))
    original = SemanticsTaken.__init__

    def damaged(self: SemanticsTaken, generation: int, semantics: dict[str, Any], ids: Any) -> None:
        original(self, generation, {**semantics, "generation": generation + 1}, ids)

    monkeypatch.setattr(SemanticsTaken, "__init__", damaged)
    damaged_log = CountingRecorder()
    trio.run(partial(run_counter, damaged_log, 30, checkpoint_every=5))
    monkeypatch.undo()
    whole = _through_last_commit(damaged_log)
    recorder.replayed = damaged_log.replayed = 0
    for log in (recorder, damaged_log):
        assert encode_read(read_at(log, "c")) == encode_read(read_at(plain, "c"))
    assert recorder.replayed < 30 < damaged_log.replayed == whole


@pytest.mark.parametrize(
    ("asked", "error", "said"),
    [
        ({"generation": -1}, ValueError, "generation: expected an int from 0 to 2**64-1, got -1"),
        ({"generation": 2**64}, ValueError, "generation: expected an int from 0 to 2**64-1"),
        ({"since": -1}, ValueError, "since: expected an int from 0 to 2**64-1, got -1"),
        ({"generation": 0}, UnknownGenerationError, "session 'c' has no generation 0"),
        ({"generation": 5}, UnknownGenerationError, "session 'c' reached generation 4, not 5"),
        ({"generation": "2"}, TypeError, "generation: expected an int or None, got str"),
        ({"since": "1"}, TypeError, "since: expected an int or None, got str '1'"),
    ],
)
def test_a_read_at_a_generation_no_session_has_is_the_caller_s_error_not_a_damaged_log(
    asked: dict[str, Any], error: type[Exception], said: str
) -> None:
    """Generation -1 was reported as a log whose commits do not reach it, then as
    UnknownGenerationError where since=-1 is a ValueError: a number no generation can be
    is refused as Exact(-1) refuses it."""
    recorder = CountingRecorder()
    trio.run(partial(run_counter, recorder, 3, checkpoint_every=None))
    with pytest.raises(error) as refused:
        read_at(recorder, "c", **asked)
    assert str(refused.value).startswith(said)


def test_generation_0_is_no_generation_a_session_reached() -> None:
    """full_at(recorder, s, 0) answered an empty tree no agent was shown, where `semledger
    read --generation 0` refuses it: a session's first commit is generation 1."""
    recorder = MemoryRecorder()
    trio.run(partial(run_counter, recorder, 1, checkpoint_every=None))
    for read in (partial(full_at, recorder, "c", 0), partial(fold, recorder, "c", until=0)):
        with pytest.raises(UnknownGenerationError, match="its first commit is generation 1"):
            read()
    assert full_at(recorder, "c", 1).generation == 1


def test_a_fold_refused_for_its_until_names_until() -> None:
    """fold(until="2") named an argument `generation` it does not have."""
    recorder = MemoryRecorder()
    trio.run(partial(run_counter, recorder, 1, checkpoint_every=None))
    with pytest.raises(TypeError, match=r"^until: expected an int or None, got str '2'$"):
        fold(recorder, "c", until="2")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^until: expected an int from 0 to 2\*\*64-1, got -1$"):
        fold(recorder, "c", until=-1)


def test_a_session_without_checkpoints_is_read_by_folding_from_generation_0() -> None:
    """As every log written before sessions logged their semantics."""
    recorder = CountingRecorder()
    trio.run(partial(run_counter, recorder, 30, checkpoint_every=None))
    assert not [e for _r, e in recorder.events("c") if isinstance(e, SemanticsTaken)]
    whole = _through_last_commit(recorder)
    recorder.replayed = 0
    full_at(recorder, "c")
    assert recorder.replayed == whole


def _through_last_commit(recorder: Recorder) -> int:
    """How many events a fold from generation 0 to the last reads: those up to the last
    commit (what follows it, a receipt and the end, it does not need)."""
    return max(r.seq for r in recorder.read("c") if r.topic == "Committed")


WIDTH = 60


def wide_view(model: int) -> View[int]:
    """WIDTH rows, one of which changes at each click: one commit of one node."""
    rows = [text(f"row {i}", str(model if i == model % WIDTH else 0)) for i in range(WIDTH)]
    return group(button("next", 1, semantic_id="next"), *rows, label="rows")


WIDE: App[int, int] = App(init=lambda: 0, update=lambda model, _msg: model + 1, view=wide_view)


async def run_wide(
    recorder: Recorder, clicks: int, checkpoint_every: int | None, app: App[int, int] = WIDE
) -> None:
    async with trio.open_nursery() as nursery:
        writer: LogWriter = await nursery.start(LogWriter(recorder).run)
        actor = SessionActor(
            "w", app, "tests:wide", writer, recorder, checkpoint_every=checkpoint_every
        )
        async with trio.open_nursery() as sessions:
            await sessions.start(actor.run)
            target = BySemanticId(SemanticId("next"))
            for _ in range(clicks):
                await actor.perform_action(target, SimpleAction(ActionKind.ACTIVATE), Latest())
            actor.close()
        writer.close()


def test_a_wide_tree_logs_its_semantics_only_once_as_much_has_changed_as_it_holds() -> None:
    """Each read checkpoint is paid for by the commits since the last: what a read folds
    after one, and what they add to the log, stay within the size of the tree. The app
    has no model type, so it has no recovery checkpoints, and still has read ones."""
    recorder = CountingRecorder()
    trio.run(partial(run_wide, recorder, 200, 5))
    events = [e for _r, e in recorder.events("w")]
    assert not [e for e in events if isinstance(e, SnapshotTaken)]
    taken = [e.generation for e in events if isinstance(e, SemanticsTaken)]
    nodes = WIDTH + 2
    # The first at the first checkpoint; then one per checkpoint whose 5 clicks (a commit
    # of 2 nodes each: the row that changed back to 0 and the one that changed) reach it.
    due = -(-nodes // (5 * 3))
    assert taken == list(range(6, 202, 5 * due))
    recorder.replayed = 0
    full = full_at(recorder, "w")
    assert recorder.replayed <= 3 * 5 * due + 5
    assert encode_read(full) == encode_read(read_at(recorder, "w", generation=201))


def _rows(width: int) -> App[int, int]:
    """`width` rows, of which each click changes two (as WIDE's)."""

    def view(model: int) -> View[int]:
        rows = [text(f"row {i}", str(model if i == model % width else 0)) for i in range(width)]
        return group(button("next", 1, semantic_id="next"), *rows, label="rows")

    return App(init=lambda: 0, update=lambda model, _msg: model + 1, view=view)


@pytest.mark.parametrize("checkpoint_every", [None, 3])
def test_a_read_since_the_generation_before_decodes_the_change_not_the_tree(
    monkeypatch: pytest.MonkeyPatch, checkpoint_every: int | None
) -> None:
    """A delta of one commit, and Unchanged, were answered by folding the whole tree from a
    read checkpoint or generation 0: each node of it decoded, for a change of two rows."""
    decoded = 0
    decode_node = wire.decode_node

    def counted(value: object, where: str = "node") -> Any:
        nonlocal decoded
        decoded += 1
        return decode_node(value, where)

    counts: dict[int, list[int]] = {}
    for width in (20, 400):
        recorder = MemoryRecorder()
        trio.run(partial(run_wide, recorder, 12, checkpoint_every, _rows(width)))
        counts[width] = []
        for generation, since in [(13, 12), (13, 13), (7, 6), (7, 7), (1, 0)]:
            monkeypatch.setattr(wire, "decode_node", counted)
            decoded = 0
            read = read_at(recorder, "w", generation=generation, since=since)
            counts[width].append(decoded)
            monkeypatch.undo()
            folded = fold(recorder, "w", until=generation, since=since).read(since)
            assert encode_read(read) == encode_read(folded), (width, generation, since)
            assert type(read).__name__ == ("Unchanged" if since == generation else "Delta")
    assert counts[20][:4] == counts[400][:4] == [2, 0, 2, 0], counts
