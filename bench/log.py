"""Throughput of the semantics log against its peers (issue: the log, replay and audit).

Every figure is a ratio against a peer measured in the same run, on the same file system
(one temporary directory): raw ``sqlite3``, and the ``eventsourcing`` library's SQLite
recorder and application. Durable means ``synchronous=FULL`` in WAL mode on both sides.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import gc
import os
import shutil
import sqlite3
import statistics
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import msgpack
import trio
from _report import emit

from semledger.actors import LogWriter, Pending, Perform, SessionActor
from semledger.eventlog import (
    CONVERTER,
    ActionRequested,
    NewEvent,
    SessionStarted,
    SqliteRecorder,
    StoredEvent,
)
from semledger.examples import counter
from semledger.replay import read_at
from semledger.runtime import ActionKind, BySemanticId, Latest, SemanticId, SimpleAction

COUNTER = counter.app
COUNTER_REF = "semledger.examples.counter:app"
TARGET = {"kind": "semantic_id", "id": "counter.increment"}
ACTION = {"kind": "activate"}
LATEST = {"kind": "latest"}


def _request(request_id: int) -> ActionRequested:
    """The input a live session logs for one perform_action: one event per receipt."""
    return ActionRequested(request_id, TARGET, ACTION, LATEST, False)


def _best(rates: Sequence[float]) -> float:
    return max(rates)


# ---- semledger: durable appends through the log writer --------------------------------------


async def _ours_appends(
    path: str, sessions: int, per_session: int, window: int
) -> tuple[float, int, int]:
    """Seconds for `sessions` concurrent tasks to append `per_session` events each, one
    event per receipt, with up to `window` of each session's receipts outstanding (1: each
    append awaited before the next); with the writer's transactions and events.

    A window is what a session actor does for an agent that sends its next request before
    the previous answer came: each step's batch goes to the writer at once, chained after
    the session's previous one, and each answer waits for its own batch. Like the session's
    replier, a task waits for its oldest outstanding batch, then releases every answer whose
    batch is durable by then without waiting again.
    """
    recorder = SqliteRecorder(path, synchronous="FULL")
    try:
        async with trio.open_nursery() as nursery:
            writer: LogWriter = await nursery.start(LogWriter(recorder).run)
            names = [f"s{i:03d}" for i in range(sessions)]
            for name in names:
                await writer.append(
                    [NewEvent(name, 1, SessionStarted(COUNTER_REF, "runtime", {}, True), 0.0)]
                )
            transactions, appended = writer.transactions, writer.appended

            async def one(name: str) -> None:
                outstanding: collections.deque[Pending] = collections.deque()
                last: Pending | None = None

                async def receipts() -> None:
                    await outstanding.popleft().durable()
                    while outstanding and outstanding[0].succeeded:
                        outstanding.popleft()

                for i in range(per_session):
                    if len(outstanding) >= window:
                        await receipts()
                    event = NewEvent(name, i + 2, _request(i + 1), time.time())
                    last = writer.submit([event], after=last)
                    outstanding.append(last)
                while outstanding:
                    await receipts()

            start = time.perf_counter()
            async with trio.open_nursery() as tasks:
                for name in names:
                    tasks.start_soon(one, name)
            elapsed = time.perf_counter() - start
            transactions = writer.transactions - transactions
            appended = writer.appended - appended
            writer.close()
    finally:
        recorder.close()
    return elapsed, transactions, appended


# ---- eventsourcing: its SQLite application recorder -----------------------------------------


def _es_recorder(path: str) -> Any:
    from eventsourcing.sqlite import SQLiteApplicationRecorder, SQLiteDatastore

    datastore = SQLiteDatastore(path)
    recorder = SQLiteApplicationRecorder(datastore)
    recorder.create_table()
    return recorder


def _es_synchronous(recorder: Any) -> str:
    with recorder.datastore.transaction(commit=False) as cursor:
        cursor.execute("PRAGMA synchronous")
        level = cursor.fetchone()[0]
        cursor.execute("PRAGMA journal_mode")
        mode = cursor.fetchone()[0]
    return f"synchronous={['OFF', 'NORMAL', 'FULL', 'EXTRA'][level]}, journal_mode={mode}"


def _es_appends(path: str, sessions: int, per_session: int) -> tuple[float, str]:
    """Seconds for `sessions` threads, each inserting one event per transaction."""
    from eventsourcing.persistence import StoredEvent as EsStoredEvent

    recorder = _es_recorder(path)
    body = CONVERTER.encode(_request(1)).body
    ids = [uuid.uuid4() for _ in range(sessions)]
    errors: list[BaseException] = []
    barrier = threading.Barrier(sessions + 1)

    def one(originator: uuid.UUID) -> None:
        barrier.wait()
        try:
            for version in range(1, per_session + 1):
                recorder.insert_events(
                    [EsStoredEvent(originator, version, "ActionRequested", body)]
                )
        except BaseException as error:
            errors.append(error)

    if sessions == 1:
        start = time.perf_counter()
        for version in range(1, per_session + 1):
            recorder.insert_events([EsStoredEvent(ids[0], version, "ActionRequested", body)])
        elapsed = time.perf_counter() - start
    else:
        threads = [threading.Thread(target=one, args=(i,)) for i in ids]
        for thread in threads:
            thread.start()
        barrier.wait()
        start = time.perf_counter()
        for thread in threads:
            thread.join()
        elapsed = time.perf_counter() - start
        if errors:
            raise errors[0]
    settings = _es_synchronous(recorder)
    recorder.datastore.close()
    return elapsed, settings


# ---- raw sqlite3 --------------------------------------------------------------------------

_RAW_SCHEMA = """
CREATE TABLE events (
    session TEXT NOT NULL, seq INTEGER NOT NULL, topic TEXT NOT NULL, version INTEGER NOT NULL,
    at FLOAT NOT NULL, body BLOB NOT NULL, chain BLOB NOT NULL, PRIMARY KEY (session, seq)
)
"""


def _raw_txn_per_event(path: str, rows: list[tuple[Any, ...]]) -> float:
    """Seconds to insert the rows one durable transaction each: the ceiling of one session."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute(_RAW_SCHEMA)
    insert = "INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?)"
    start = time.perf_counter()
    for row in rows:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(insert, row)
        conn.execute("COMMIT")
    elapsed = time.perf_counter() - start
    conn.close()
    return elapsed


def _raw_single_txn(path: str, rows: list[tuple[Any, ...]]) -> float:
    """Events/s of one ``executemany`` of every row in one durable transaction."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute(_RAW_SCHEMA)
    start = time.perf_counter()
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    conn.execute("COMMIT")
    elapsed = time.perf_counter() - start
    conn.close()
    return len(rows) / elapsed


def _ours_single_append(path: str, sessions: int, per_session: int) -> float:
    """Events/s of one ``SqliteRecorder.append`` of the group-commit events: the recorder's
    own ceiling for group commit (encoding, chaining and the summary included)."""
    names = [f"s{i:03d}" for i in range(sessions)]
    with SqliteRecorder(path, synchronous="FULL") as recorder:
        started = SessionStarted(COUNTER_REF, "runtime", {}, True)
        recorder.append([NewEvent(name, 1, started, 0.0) for name in names])
        events = [
            NewEvent(name, i + 2, _request(i + 1), time.time())
            for i in range(per_session)
            for name in names
        ]
        start = time.perf_counter()
        recorder.append(events)
        elapsed = time.perf_counter() - start
    return len(events) / elapsed


def _timed_read(
    recorder: SqliteRecorder,
    session: str,
    generation: int | None = None,
    since: int | None = None,
) -> float:
    """Seconds of a log-served read of the session's `generation` (default: its last),
    since `since` (default: a Full read)."""
    gc.collect()
    start = time.perf_counter()
    read_at(recorder, session, generation=generation, since=since)
    return time.perf_counter() - start


def _raw_decode(path: str, session: str) -> tuple[float, int]:
    conn = sqlite3.connect(path, isolation_level=None)
    unpackb = msgpack.unpackb
    start = time.perf_counter()
    count = 0
    for (body,) in conn.execute(
        "SELECT body FROM events WHERE session = ? ORDER BY seq", (session,)
    ):
        unpackb(body)
        count += 1
    elapsed = time.perf_counter() - start
    conn.close()
    return count / elapsed, count


def _ours_replay(recorder: SqliteRecorder, session: str) -> tuple[float, int]:
    start = time.perf_counter()
    count = 0
    for _event in recorder.replay(session):
        count += 1
    elapsed = time.perf_counter() - start
    return count / elapsed, count


# ---- eventsourcing: aggregate replay ------------------------------------------------------


def _es_application(path: str) -> tuple[Any, Any]:
    from eventsourcing.application import Application
    from eventsourcing.domain import Aggregate, event

    class Ledger(Aggregate):
        """One aggregate per session; each logged event becomes one of its events."""

        def __init__(self) -> None:
            self.count = 0

        @event("Recorded")
        def record(self, payload: dict[str, Any]) -> None:
            self.count += 1

    class LedgerApp(Application[uuid.UUID]):
        pass

    env = {"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": path}
    return LedgerApp(env=env), Ledger


def _es_replay(path: str, payloads: list[dict[str, Any]]) -> tuple[Callable[[], float], str]:
    """Store one aggregate with an event per payload; return a timed reconstruction."""
    application, ledger_class = _es_application(path)
    ledger = ledger_class()
    created = 1  # the aggregate's own Created event
    chunk = 20_000
    for offset in range(0, len(payloads) - created, chunk):
        for payload in payloads[offset : min(offset + chunk, len(payloads) - created)]:
            ledger.record(payload)
        application.save(ledger)
    ledger_id = ledger.id
    expected = len(payloads) - created

    def timed() -> float:
        gc.collect()
        start = time.perf_counter()
        rebuilt = application.repository.get(ledger_id)
        elapsed = time.perf_counter() - start
        assert rebuilt.count == expected, (rebuilt.count, expected)
        return len(payloads) / elapsed

    settings = _es_synchronous(application.recorder)
    return timed, settings


# ---- recovery: a 100,000-event counter session -------------------------------------------


class _Buffered:
    """What `_BulkWriter.submit` returns in place of a `Pending`: settled at once."""

    settled = succeeded = True

    async def durable(self) -> list[StoredEvent]:
        return []


class _BulkWriter:
    """Stands in for the log writer while a long session is built: it buffers the events
    the live session actor produced and writes them in large transactions (the events are
    exactly those a live session logs; only the transaction sizes differ)."""

    def __init__(self, recorder: SqliteRecorder, flush_every: int = 20_000) -> None:
        self.recorder = recorder
        self.flush_every = flush_every
        self.buffer: list[NewEvent] = []
        self.appended = 0

    def submit(self, events: Sequence[NewEvent], *, after: object = None) -> _Buffered:
        self.buffer.extend(events)
        self.appended += len(events)
        if len(self.buffer) >= self.flush_every:
            self.flush()
        return _Buffered()

    def flush(self) -> None:
        if self.buffer:
            self.recorder.append(self.buffer)
            self.buffer = []


async def _build_session(
    recorder: SqliteRecorder,
    name: str,
    *,
    events: int | None,
    inputs: int | None,
    checkpoint_every: int | None,
) -> int:
    """Drive the counter through a live session actor; returns how many inputs it took."""
    writer = _BulkWriter(recorder)
    actor = SessionActor(
        name,
        COUNTER,
        COUNTER_REF,
        writer,
        recorder,
        checkpoint_every=checkpoint_every,  # type: ignore[arg-type]
    )
    perform = Perform(
        BySemanticId(SemanticId("counter.increment")), SimpleAction(ActionKind.ACTIVATE), Latest()
    )
    done = 0
    async with trio.open_nursery() as nursery:
        await nursery.start(actor.run)
        while (events is not None and writer.appended < events) or (
            inputs is not None and done < inputs
        ):
            await actor.request(perform)
            done += 1
        nursery.cancel_scope.cancel()  # no SessionEnded: the session stays open, recoverable
    writer.flush()
    return done


async def _start_timed(path: str, name: str, checkpoint_every: int | None) -> tuple[float, int]:
    """Seconds to start (recover) a session actor on an existing session; its generation."""
    recorder = SqliteRecorder(path)
    try:
        async with trio.open_nursery() as nursery:
            writer: LogWriter = await nursery.start(LogWriter(recorder).run)
            actor = SessionActor(
                name, COUNTER, COUNTER_REF, writer, recorder, checkpoint_every=checkpoint_every
            )
            gc.collect()
            start = time.perf_counter()
            await nursery.start(actor.run)
            elapsed = time.perf_counter() - start
            assert actor.recovered
            generation = actor.core.runtime.generation
            nursery.cancel_scope.cancel()
    finally:
        recorder.close()
    return elapsed, generation


# ---- the run ------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--rounds", type=int, default=5, help="turns each append side takes")
    parser.add_argument("--single", type=int, default=600, help="events per round, one session")
    parser.add_argument("--sessions", type=int, default=64)
    parser.add_argument("--per-session", type=int, default=40, help="events per round")
    parser.add_argument(
        "--window", type=int, default=32, help="receipts a pipelining agent has outstanding"
    )
    parser.add_argument("--recovery-events", type=int, default=100_000)
    parser.add_argument("--checkpoint-every", type=int, default=1000, help="inputs")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="semledger-bench-log-")
    notes: list[str] = []
    try:
        figures = _run(args, tmp, notes)
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    goals = {
        "durable_appends_1_session_over_eventsourcing": "at least 3",
        "durable_appends_64_sessions_over_eventsourcing": "at least 10",
        "group_commit_over_raw_single_txn": "at least 0.5",
        "replay_over_raw_decode": "at least 0.6",
        "replay_over_eventsourcing": "at least 5",
        "recovery_100k_over_replay_100k": "at most 0.1",
        "read_early_of_long_session_over_short": "at most 2",
    }
    emit("log", figures, goals, notes, as_json=args.json)


def _run(args: argparse.Namespace, tmp: str, notes: list[str]) -> dict[str, Any]:
    path = lambda name: os.path.join(tmp, name)  # noqa: E731

    # 1. One session, one durable transaction per event, awaited before the next; and
    # 2. 64 sessions, concurrently, each one durable append at a time. The machine is
    # shared and its fsync latency drifts, so the sides take turns, round after round.
    body = CONVERTER.encode(_request(1)).body
    raw_rows = [
        ("s", i + 2, "ActionRequested", 1, 0.0, body, os.urandom(32)) for i in range(args.single)
    ]
    ours_1 = ours_1_seq = es_1 = raw_1 = ours_n = ours_n_seq = es_n = 0.0
    transactions = appended = 0
    es_settings = ""
    for r in range(args.rounds):
        ours_1 += trio.run(_ours_appends, path(f"ours-1-{r}.db"), 1, args.single, args.window)[0]
        ours_1_seq += trio.run(_ours_appends, path(f"ours-1s-{r}.db"), 1, args.single, 1)[0]
        elapsed, es_settings = _es_appends(path(f"es-1-{r}.db"), 1, args.single)
        es_1 += elapsed
        raw_1 += _raw_txn_per_event(path(f"raw-1-{r}.db"), raw_rows)
        elapsed, txns, events = trio.run(
            _ours_appends, path(f"ours-n-{r}.db"), args.sessions, args.per_session, args.window
        )
        ours_n += elapsed
        transactions += txns
        appended += events
        ours_n_seq += trio.run(
            _ours_appends, path(f"ours-ns-{r}.db"), args.sessions, args.per_session, 1
        )[0]
        es_n += _es_appends(path(f"es-n-{r}.db"), args.sessions, args.per_session)[0]
    single_events = args.rounds * args.single
    many_events = args.rounds * args.sessions * args.per_session
    ours_1, ours_1_seq = single_events / ours_1, single_events / ours_1_seq
    es_1, raw_1 = single_events / es_1, single_events / raw_1
    ours_n, ours_n_seq, es_n = many_events / ours_n, many_events / ours_n_seq, many_events / es_n

    # 3. The same rows in one raw transaction (median of three fresh files).
    with SqliteRecorder(path(f"ours-n-{args.rounds - 1}.db")) as recorder:
        rows = [
            tuple(record)
            for name in (f"s{i:03d}" for i in range(args.sessions))
            for record in recorder.read(name, start=2)
        ]
    assert len(rows) == args.sessions * args.per_session
    raw_txn = statistics.median(_raw_single_txn(path(f"raw-{i}.db"), rows) for i in range(3))
    one_append = statistics.median(
        _ours_single_append(path(f"one-{i}.db"), args.sessions, args.per_session)
        for i in range(3)
    )

    # 4. A 100,000-event counter session with checkpoints, and its twin without.
    db = path("recovery.db")
    with SqliteRecorder(db, synchronous="OFF") as recorder:
        build = time.perf_counter()
        inputs = trio.run(
            lambda: _build_session(
                recorder,
                "counter-checkpointed",
                events=args.recovery_events,
                inputs=None,
                checkpoint_every=args.checkpoint_every,
            )
        )
        trio.run(
            lambda: _build_session(
                recorder, "counter-plain", events=None, inputs=inputs, checkpoint_every=None
            )
        )
        build = time.perf_counter() - build
        short_inputs = 2 * args.checkpoint_every
        trio.run(
            lambda: _build_session(
                recorder,
                "counter-short",
                events=None,
                inputs=short_inputs,
                checkpoint_every=args.checkpoint_every,
            )
        )
        heads = {name: recorder.head(name) for name in ("counter-checkpointed", "counter-plain")}
        snapshots = sum(
            1 for record in recorder.read("counter-checkpointed") if record.topic == "SnapshotTaken"
        )
    checkpointed_events = heads["counter-checkpointed"].seq  # type: ignore[union-attr]
    plain_events = heads["counter-plain"].seq  # type: ignore[union-attr]

    # 5. Replay of the plain session: ours, raw decode, eventsourcing's aggregate.
    # Taking turns too, each after a full collection.
    del rows, raw_rows
    ours_runs: list[float] = []
    raw_runs: list[float] = []
    with SqliteRecorder(db) as recorder:
        for _ in range(3):
            gc.collect()
            ours_runs.append(_ours_replay(recorder, "counter-plain")[0])
            gc.collect()
            raw_runs.append(_raw_decode(db, "counter-plain")[0])
        payloads = [CONVERTER.unstructure(event) for _r, event in recorder.events("counter-plain")]
    replay, raw_decode = _best(ours_runs), _best(raw_runs)
    es_timed, es_app_settings = _es_replay(path("es-replay.db"), payloads)
    es_replay = _best([es_timed() for _ in range(3)])

    # 6. Recovery with checkpoints against re-execution from zero of the same inputs.
    reexecute_s, plain_generation = trio.run(_start_timed, db, "counter-plain", None)
    recovery_s, generation = trio.run(
        _start_timed, db, "counter-checkpointed", args.checkpoint_every
    )
    assert generation == plain_generation, (generation, plain_generation)

    # 7. A log-served read of the last generation: from the last read checkpoint, and
    # folded from generation 0 (the twin has no checkpoints).
    with SqliteRecorder(db) as recorder:
        read_s = {
            name: min(_timed_read(recorder, name) for _ in range(3))
            for name in ("counter-checkpointed", "counter-plain")
        }
        # 8. A read of an early generation (past the first read checkpoint) of that long
        # session, and of a short one of the same inputs that ends soon after it.
        early = args.checkpoint_every * 3 // 2
        early_runs: dict[str, list[float]] = {"counter-checkpointed": [], "counter-short": []}
        for _ in range(5):  # (taking turns: the machine is shared)
            for name, runs in early_runs.items():
                runs.append(_timed_read(recorder, name, early))
        early_s = {name: min(runs) for name, runs in early_runs.items()}
        # 9. A read since the generation before the last, of the session without read
        # checkpoints: answered from the last commit's delta, not folded from generation 0.
        delta_s = min(
            _timed_read(recorder, "counter-plain", plain_generation, plain_generation - 1)
            for _ in range(3)
        )

    figures: dict[str, Any] = {
        "durable_appends_1_session_over_eventsourcing": ours_1 / es_1,
        "durable_appends_64_sessions_over_eventsourcing": ours_n / es_n,
        "durable_appends_1_session_sequential_over_eventsourcing": ours_1_seq / es_1,
        "durable_appends_64_sessions_sequential_over_eventsourcing": ours_n_seq / es_n,
        "group_commit_over_raw_single_txn": ours_n / raw_txn,
        "recorder_one_append_over_raw_single_txn": one_append / raw_txn,
        "replay_over_raw_decode": replay / raw_decode,
        "replay_over_eventsourcing": replay / es_replay,
        "recovery_100k_over_replay_100k": recovery_s / reexecute_s,
        "read_last_with_checkpoints_over_fold_from_zero": read_s["counter-checkpointed"]
        / read_s["counter-plain"],
        "read_early_of_long_session_over_short": early_s["counter-checkpointed"]
        / early_s["counter-short"],
        "ours_1_session_events_per_s": round(ours_1),
        "ours_1_session_sequential_events_per_s": round(ours_1_seq),
        "eventsourcing_1_session_events_per_s": round(es_1),
        "raw_txn_per_event_events_per_s": round(raw_1),
        "ours_64_sessions_events_per_s": round(ours_n),
        "ours_64_sessions_sequential_events_per_s": round(ours_n_seq),
        "eventsourcing_64_sessions_events_per_s": round(es_n),
        "group_commit_events_per_transaction": appended / transactions,
        "raw_single_txn_events_per_s": round(raw_txn),
        "recorder_one_append_events_per_s": round(one_append),
        "replay_events_per_s": round(replay),
        "raw_decode_events_per_s": round(raw_decode),
        "eventsourcing_replay_events_per_s": round(es_replay),
        "recovery_with_checkpoints_ms": recovery_s * 1000,
        "reexecute_from_zero_ms": reexecute_s * 1000,
        "read_last_with_checkpoints_ms": read_s["counter-checkpointed"] * 1000,
        "read_last_folded_from_zero_ms": read_s["counter-plain"] * 1000,
        "read_early_of_long_session_ms": early_s["counter-checkpointed"] * 1000,
        "read_early_of_short_session_ms": early_s["counter-short"] * 1000,
        "read_delta_of_last_without_checkpoints_ms": delta_s * 1000,
        "recovery_session_events": checkpointed_events,
        "recovery_session_inputs": inputs,
    }
    notes += [
        f"- Peers: `eventsourcing` {_version('eventsourcing')} (its `SQLiteApplicationRecorder`"
        f" over `SQLiteDatastore` on a file, defaults: {es_settings}, pool 5 + 10 overflow,"
        " one `insert_events` per event); raw `sqlite3` with `journal_mode=WAL`,"
        ' `synchronous=FULL`. semledger: `SqliteRecorder(path, synchronous="FULL")` (WAL)'
        " behind one `LogWriter`. All files in one temporary directory.",
        f"- Appends, {args.rounds} rounds taking turns (fresh files each): {args.single}"
        " `ActionRequested` events in one session (and the raw ceiling: the same rows, one"
        f" raw `sqlite3` transaction each); then {args.sessions} sessions x {args.per_session}"
        " events, as Trio tasks on our side and as threads on eventsourcing's (its body is"
        " our msgpack body, byte for byte). One event per receipt on both sides: each"
        " eventsourcing `insert_events` is one event and one transaction, each of ours one"
        " `LogWriter.submit` of one event awaited with `Pending.durable()`.",
        f"- The headline append figures are for agents that send ahead, with {args.window}"
        " receipts outstanding per session: what `SessionActor` does when requests arrive"
        " before earlier answers (the stdio loop reads ahead; concurrent HTTP requests), each"
        " step's batch chained after the previous one and each answer waiting for its own."
        " eventsourcing's recorder commits one caller's events one transaction at a time"
        " either way. The `*_sequential_*` figures are for agents that wait for every answer"
        " (window 1): one durable transaction per event, bound by fsync on both sides, so"
        " the raw ceiling for one session is `raw_txn_per_event_events_per_s`.",
        f"- Group commit: {args.sessions * args.per_session} rows against the same rows in one"
        " raw `executemany` transaction (median of 3 fresh files). `recorder_one_append_*`:"
        " the same events in one `SqliteRecorder.append` (median of 3 fresh files), what"
        " group commit would reach with no writer, no sessions and one transaction: the"
        " recorder's encoding (cattrs + msgpack), chaining (sha256) and summary over raw.",
        f"- Replay: the {plain_events}-event counter session (no checkpoints), best of 3 each:"
        " `recorder.replay()` decoded to event objects; raw `SELECT body` + `msgpack.unpackb`"
        " on the same file; eventsourcing's `Application.repository.get` of one `Aggregate`"
        " holding one event per logged event with the same payload (JSON transcoder, defaults:"
        f" {es_app_settings}).",
        f"- Recovery: {inputs} `activate counter.increment` inputs (latest precondition) driven"
        f" through a live `SessionActor`; the checkpointed session has {checkpointed_events}"
        f" events incl. {snapshots} checkpoints (`checkpoint_every={args.checkpoint_every}`"
        " inputs); re-execution from zero is a `SessionActor` start on the twin session with the"
        f" same inputs and no checkpoints. Building both took {build:.1f} s.",
        "- Reads: `replay.full_at` of the last generation of each of those two sessions (best"
        " of 3): from the last read checkpoint (`SemanticsTaken`), and folded from"
        " generation 0 on the twin without checkpoints.",
        f"- Early reads: `replay.full_at` of generation {early} (best of 5, taking turns),"
        f" past the first read checkpoint, of the {checkpointed_events}-event checkpointed"
        f" session and of a short one of its first {short_inputs} inputs: the read starts at"
        " the checkpoint before it, found without reading those after it.",
        "- Delta read: `replay.read_at` of the last generation since the one before it, on"
        " the session without checkpoints (best of 3): the last commit's logged delta, where"
        " the Full read of the same generation folds from generation 0.",
    ]
    return figures


def _version(name: str) -> str:
    from importlib.metadata import version

    with contextlib.suppress(Exception):
        return version(name)
    return "?"


if __name__ == "__main__":
    main()
