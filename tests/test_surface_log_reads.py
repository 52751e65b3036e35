"""A surface served over MCP, read from its log: whatever the bridge answered to
read_semantics, `read_at` on the log answers identically, for random sessions of the todo
and gallery apps through the runtime adapter, resumed on a fresh surface now and then. Across
resumes generations never go back and node ids are never reused."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from semledger.adapters import LoggedSurface, create_surface
from semledger.eventlog import (
    Committed,
    MemoryRecorder,
    SemanticsTaken,
    SessionStarted,
    StoredEvent,
)
from semledger.hosts import LoggedSurfaceHost
from semledger.replay import audit, read_at, verify
from semledger.runtime import JOURNAL_SIZE, Full, Rejection
from semledger.runtime._wire import (
    decode_action,
    decode_precondition,
    decode_target,
    encode_read,
)

APPS = ("semledger.examples.todo:app", "semledger.examples.gallery:app")
LATEST = {"kind": "latest"}
ACTIONS = {
    "activate": lambda d: {},
    "focus": lambda d: {},
    "submit": lambda d: {},
    "set_text": lambda d: {"value": d.draw(st.sampled_from(["", "milk", "x y"]))},
}


def _call(data: Any, host: LoggedSurfaceHost) -> dict[str, Any]:
    """A perform_action on a node of the bridge's current tree (or a stale one)."""
    current = host.bridge.journal.current
    node_id = data.draw(st.sampled_from([*sorted(current.nodes), 9999]))
    kind = data.draw(st.sampled_from(sorted(ACTIONS)))
    generation = max(current.generation - data.draw(st.sampled_from([0, 0, 1])), 0)
    precondition = data.draw(
        st.sampled_from([{"kind": "latest"}, {"kind": "exact", "generation": str(generation)}])
    )
    return {
        "target": {"kind": "node_id", "id": str(node_id)},
        "action": {"kind": kind, **ACTIONS[kind](data)},
        "precondition": precondition,
    }


async def _served(
    data: Any, recorder: MemoryRecorder, app: str
) -> list[tuple[int, int | None, dict[str, Any]]]:
    """Drive the surface session at random over one or more servers; every read answered,
    with the generation and since it was answered at."""
    answers: list[tuple[int, int | None, dict[str, Any]]] = []
    config = {"adapter": "runtime", "app": app}
    for _server in range(data.draw(st.integers(1, 3), label="servers")):
        logged = LoggedSurface(create_surface(config), recorder, "s", "runtime", config=config)
        await logged.open({})
        host = LoggedSurfaceHost(logged)
        for _ in range(data.draw(st.integers(1, 8))):
            current = host.bridge.generation
            if data.draw(st.integers(0, 2)) == 0:
                since = data.draw(st.sampled_from([None, current, 0, current + 3]))
                result = await host.read_semantics(since)
                assert not isinstance(result, Rejection)
                answers.append((host.bridge.generation, since, encode_read(result)))
            else:
                call = _call(data, host)
                await host.perform_action(
                    decode_target(call["target"]),
                    decode_action(call["action"]),
                    decode_precondition(call["precondition"]),
                )
        host.close()
        await logged.close()
    return answers


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_reads_of_a_served_surface_from_its_log_equal_the_live_reads(data: Any) -> None:
    recorder = MemoryRecorder()
    app = data.draw(st.sampled_from(APPS))
    answers = trio.run(_served, data, recorder, app)
    for generation, since, live in answers:
        assert encode_read(read_at(recorder, "s", generation=generation, since=since)) == live
    events = [event for _r, event in recorder.events("s")]
    commits = [e for e in events if isinstance(e, Committed)]
    assert [c.generation for c in commits] == list(range(1, len(commits) + 1))
    given_out, resumed = 0, False
    named: dict[int, tuple[str, str | None]] = {}  # each id's element: role and semantic id
    for event in events:
        if isinstance(event, SessionStarted):
            resumed = given_out > 0
        elif isinstance(event, Committed):
            upserted = {int(node["node_id"]) for node in event.delta["upserted"]}
            for node in event.delta["upserted"]:  # an element back (a modal closed) keeps its id
                element = (node["role"], node["semantic_id"])
                assert named.setdefault(int(node["node_id"]), element) == element
            if resumed:  # a fresh surface: every node is new to the session
                assert all(node_id > given_out for node_id in upserted)
                resumed = False
            given_out = max([given_out, *upserted])
    assert verify(recorder, "s").ok
    assert all(entry.request_id is not None for entry in audit(recorder, "s"))


async def _increments(recorder: MemoryRecorder, times: int) -> LoggedSurfaceHost:
    config = {"adapter": "runtime", "app": "semledger.examples.counter:app"}
    logged = LoggedSurface(create_surface(config), recorder, "c", "runtime", config=config)
    await logged.open({})
    host = LoggedSurfaceHost(logged)
    increment = decode_target({"kind": "semantic_id", "id": "counter.increment"})
    for _ in range(times):
        await host.perform_action(
            increment, decode_action({"kind": "activate"}), decode_precondition(LATEST)
        )
    return host



def test_a_bridge_resumed_past_the_journal_reads_as_the_log_does_and_checkpoints() -> None:
    """More generations than the journal holds, read checkpoints among them: the resumed
    bridge answers each `since` as the log does, and a read folds from a checkpoint."""
    recorder = MemoryRecorder()

    async def run() -> list[tuple[int, int, dict[str, Any]]]:
        first = await _increments(recorder, 3 * JOURNAL_SIZE)
        first.close()
        await first.logged.close()
        second = await _increments(recorder, 2)
        last = second.bridge.generation
        answers = []
        for since in (0, 1, last - JOURNAL_SIZE - 1, last - JOURNAL_SIZE, last - 5, last):
            answers.append((last, since, encode_read(await second.read_semantics(since))))
        second.close()
        await second.logged.close()
        return answers

    for generation, since, live in trio.run(run):
        assert encode_read(read_at(recorder, "c", generation=generation, since=since)) == live
    checkpoints = [e for _r, e in recorder.events("c") if isinstance(e, SemanticsTaken)]
    assert len(checkpoints) > 10  # the counter's few nodes: one every few commits


class _Watched(MemoryRecorder):
    """A memory log that notes the seq of every record it is read for."""

    def __init__(self) -> None:
        super().__init__()
        self.seqs_read: list[int] = []

    def _stream(self, session: str, start: int, stop: int | None) -> Iterator[StoredEvent]:
        for record in super()._stream(session, start, stop):
            self.seqs_read.append(record.seq)
            yield record


def _given_out(recorder: MemoryRecorder, session: str) -> int:
    """The highest node id any commit of the session upserted or removed."""
    commits = [e for _r, e in recorder.events(session) if isinstance(e, Committed)]
    return max(
        int(node_id)
        for c in commits
        for node_id in [*c.delta["removed"], *(n["node_id"] for n in c.delta["upserted"])]
    )


async def _resumed(recorder: MemoryRecorder) -> LoggedSurfaceHost:
    config = {"adapter": "runtime", "app": "semledger.examples.counter:app"}
    logged = LoggedSurface(create_surface(config), recorder, "c", "runtime", config=config)
    logged.claim({})
    if isinstance(recorder, _Watched):
        recorder.seqs_read.clear()
    return LoggedSurfaceHost(logged)


def test_a_resumed_bridge_reads_the_log_from_a_read_checkpoint_on() -> None:
    """Node ids come from the last read checkpoint and the commits after it, the journal
    from the checkpoint the fold starts at: resuming a long session reads its end only
    (and its start, which says what the session is)."""
    recorder = _Watched()

    async def run() -> LoggedSurfaceHost:
        first = await _increments(recorder, 4 * JOURNAL_SIZE)
        first.close()
        await first.logged.close()
        return await _resumed(recorder)

    host = trio.run(run)
    head = recorder.head("c")
    assert head is not None
    assert min(seq for seq in recorder.seqs_read if seq != 1) > head.seq // 2  # and its start
    assert host.bridge.next_node_id == _given_out(recorder, "c") + 1


def test_a_bridge_resumed_after_a_checkpoint_without_node_ids_reads_every_commit() -> None:
    """A version-1 read checkpoint did not record the next node id (it upcasts to None):
    the ids given out before it are found in the commits."""
    recorder = MemoryRecorder()

    async def run() -> LoggedSurfaceHost:
        first = await _increments(recorder, 5)
        current = first.bridge.journal.current
        await first.logged.append(
            SemanticsTaken(current.generation, encode_read(current.full()), None)
        )
        first.close()
        await first.logged.close()
        return await _resumed(recorder)

    host = trio.run(run)
    assert host.bridge.next_node_id == _given_out(recorder, "c") + 1


async def test_the_audit_gives_a_rejected_call_the_generation_it_was_judged_at() -> None:
    """The bridge reads the surface afresh (committing what changed) before it checks a
    call: the audit row says the generation the rejection's message names."""
    recorder = MemoryRecorder()
    config = {"adapter": "runtime", "app": "semledger.examples.counter:app"}
    logged = LoggedSurface(create_surface(config), recorder, "c", "runtime", config=config)
    await logged.open({})
    host = LoggedSurfaceHost(logged)
    stale = await host.perform_action(
        decode_target({"kind": "semantic_id", "id": "counter.increment"}),
        decode_action({"kind": "activate"}),
        decode_precondition({"kind": "exact", "generation": "7"}),
    )
    assert isinstance(stale, Rejection)
    assert stale.message == "expected generation 7, current is 1"
    [entry] = audit(recorder, "c")
    assert (entry.outcome, entry.generation) == ("stale_generation", 1)
    host.close()
    await logged.close()


async def test_the_log_serves_a_page_back_from_behind_a_modal_with_its_node_ids() -> None:
    """The gallery's dialog, opened and closed through the bridge: the page comes back with
    the ids it had, and the log reads it, audits the calls and re-runs them as served."""
    from semledger.hosts import rerun_surface

    recorder = MemoryRecorder()
    config = {"adapter": "runtime", "app": "semledger.examples.gallery:app"}
    logged = LoggedSurface(create_surface(config), recorder, "g", "runtime", config=config)
    await logged.open({})
    host = LoggedSurfaceHost(logged)
    page = await host.read_semantics(None)
    answers = [(host.bridge.generation, None, page)]
    for clicked in ("gallery.dialog.open", "gallery.dialog.cancel"):
        await host.perform_action(
            decode_target({"kind": "semantic_id", "id": clicked}),
            decode_action({"kind": "activate"}),
            decode_precondition(LATEST),
        )
        for since in (None, 1):
            answers.append((host.bridge.generation, since, await host.read_semantics(since)))
    back = answers[-2][2]
    host.close()
    await logged.close()
    assert isinstance(page, Full)
    assert isinstance(back, Full)
    assert {n.node_id: n.semantic_id for n in back.nodes} == {
        n.node_id: n.semantic_id for n in page.nodes
    }
    for generation, since, live in answers:
        assert not isinstance(live, Rejection)
        logged_read = read_at(recorder, "g", generation=generation, since=since)
        assert encode_read(logged_read) == encode_read(live)
    assert [entry.outcome for entry in audit(recorder, "g")] == ["receipt", "receipt"]
    assert (await rerun_surface(recorder, "g")).ok
