"""One contract suite, run against every recorder."""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from semledger.eventlog import (
    DAMAGED_LOG_ERRORS,
    GENESIS,
    SCHEMA_VERSION,
    ActionReceipt,
    ActionRequested,
    Committed,
    CorruptEventError,
    CorruptSummaryError,
    EffectCompleted,
    EndedBy,
    Event,
    EventTooLargeError,
    Head,
    InconsistentLogError,
    LogBusyError,
    LogMovedError,
    LogOpenError,
    MalformedRowError,
    MemoryRecorder,
    NewEvent,
    Recorder,
    RecorderClosedError,
    SemanticsTaken,
    SequenceConflict,
    SessionClaimedError,
    SessionCrashed,
    SessionEnded,
    SessionOverError,
    SessionResumed,
    SessionStarted,
    SessionSummary,
    SqliteRecorder,
    UnknownSessionError,
    UnsupportedSchemaError,
    chain_step,
    checked_sessions,
    encode,
    ended_for_good,
    inspect_log,
    log_final_end,
    session_end,
    session_start,
    unstarted,
    verify_chain,
    verify_log,
)
from semledger.eventlog._sqlite import _CHECKPOINT_SEQS, _LAST_CHECKPOINT

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from tests_record import schema_version_only

Factory = Callable[[], Recorder]


@pytest.fixture(params=["memory", "sqlite"])
def new_recorder(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Factory]:
    """Makes fresh, empty recorders of one kind; closes them afterwards."""
    made: list[Recorder] = []

    def make() -> Recorder:
        recorder: Recorder
        if request.param == "memory":
            recorder = MemoryRecorder()
        else:
            recorder = SqliteRecorder(tmp_path / f"log{len(made)}.db", synchronous="NORMAL")
        made.append(recorder)
        return recorder

    yield make
    for recorder in made:
        recorder.close()


@pytest.fixture
def recorder(new_recorder: Factory) -> Recorder:
    return new_recorder()


def started(app: str = "semledger.examples.counter:app", surface: str = "runtime") -> Event:
    return SessionStarted(app=app, surface=surface, params={}, redact_passwords=True)


def story() -> list[Event]:
    """A small, typical session: start, commit, action, commit, receipt, end."""
    return [
        started(),
        Committed(1, {"from": 0, "to": 1}, "aa" * 32),
        ActionRequested(1, {"kind": "semantic_id", "id": "counter.increment"},
                        {"kind": "activate"}, {"kind": "latest"}, False),
        Committed(2, {"from": 1, "to": 2}, "bb" * 32),
        ActionReceipt(1, 1, 2, False),
        SessionEnded("closed"),
    ]


def batch(session: str, events: list[Event], first: int = 1, at: float = 100.0) -> list[NewEvent]:
    return [NewEvent(session, first + i, e, at + i) for i, e in enumerate(events)]


def test_an_unknown_session_has_no_head_and_no_events(recorder: Recorder) -> None:
    assert recorder.head("nobody") is None
    assert list(recorder.read("nobody")) == []
    assert list(recorder.events("nobody")) == []
    assert recorder.sessions() == []


def test_append_stores_encoded_and_chained_records(recorder: Recorder) -> None:
    events = story()
    stored = recorder.append(batch("s", events))
    previous = GENESIS
    for i, (record, event) in enumerate(zip(stored, events, strict=True)):
        encoded = encode(event)
        assert (record.session, record.seq, record.at) == ("s", i + 1, 100.0 + i)
        assert (record.topic, record.version, record.body) == (
            encoded.topic, encoded.version, encoded.body,
        )
        previous = chain_step(previous, "s", i + 1, encoded.topic, encoded.version, encoded.body)
        assert record.chain == previous
    assert recorder.head("s") == Head(len(events), previous)


def test_read_returns_what_append_stored_and_events_decode_it(recorder: Recorder) -> None:
    events = story()
    stored = recorder.append(batch("s", events))
    assert list(recorder.read("s")) == stored
    assert list(recorder.events("s")) == list(zip(stored, events, strict=True))


def test_replay_yields_the_decoded_events_from_start(recorder: Recorder) -> None:
    events = story()
    recorder.append(batch("s", events))
    assert list(recorder.replay("s")) == events
    assert list(recorder.replay("s", start=3)) == events[2:]
    assert list(recorder.replay("nobody")) == []


def test_last_of_finds_the_latest_record_of_a_topic(recorder: Recorder) -> None:
    stored = recorder.append(batch("s", story()))
    last = recorder.last_of("s", stored[1].topic)
    assert last == max((r for r in stored if r.topic == stored[1].topic), key=lambda r: r.seq)
    assert recorder.last_of("s", "NoSuchTopic") is None


def test_last_of_before_a_seq_finds_the_latest_record_of_a_topic_below_it(
    recorder: Recorder,
) -> None:
    stored = recorder.append(batch("s", story()))
    topic = stored[1].topic
    for before in range(len(stored) + 3):
        below = [r for r in stored if r.topic == topic and r.seq < before]
        assert recorder.last_of("s", topic, before=before) == (below[-1] if below else None)
    assert recorder.last_of("nobody", topic, before=5) is None


def test_seqs_of_lists_the_seqs_of_a_topics_records_in_order(recorder: Recorder) -> None:
    checkpoints = [SemanticsTaken(1, {"generation": "1"}, 2), SemanticsTaken(2, {}, 3)]
    events = [*story()[:-1], checkpoints[0], *story()[1:4], checkpoints[1]]
    stored = recorder.append(batch("s", events))
    recorder.append(batch("t", story()))
    for topic in {record.topic for record in stored}:
        assert recorder.seqs_of("s", topic) == [r.seq for r in stored if r.topic == topic]
    assert recorder.seqs_of("s", "SemanticsTaken") == [6, 10]
    assert recorder.seqs_of("t", "SemanticsTaken") == []
    assert recorder.seqs_of("s", "NoSuchTopic") == []
    assert recorder.seqs_of("nobody", "SemanticsTaken") == []


@pytest.mark.parametrize("topic", ["SemanticsTaken", "Committed"])
def test_seqs_of_leaves_out_a_seq_edited_into_text(tmp_path: Path, topic: str) -> None:
    db = tmp_path / "log.db"
    events = [story()[0], SemanticsTaken(0, {}, 1), *story()[1:2], SemanticsTaken(1, {}, 2),
              *story()[1:2]]
    with SqliteRecorder(db) as recorder:
        recorder.append(batch("s", events))
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE events SET seq = 'two' WHERE seq = 2")
        conn.execute("UPDATE events SET seq = 'three' WHERE seq = 3")
    conn.close()
    with SqliteRecorder(db) as recorder:
        assert recorder.seqs_of("s", topic) == [4 if topic == "SemanticsTaken" else 5]


@pytest.mark.parametrize(
    ("start", "stop", "seqs"),
    [(0, None, [1, 2, 3, 4, 5, 6]), (3, None, [3, 4, 5, 6]), (2, 4, [2, 3]),
     (0, 1, []), (5, 99, [5, 6]), (7, None, []), (4, 4, []), (4, 2, [])],
)
def test_read_selects_start_inclusive_stop_exclusive(
    recorder: Recorder, start: int, stop: int | None, seqs: list[int]
) -> None:
    recorder.append(batch("s", story()))
    assert [r.seq for r in recorder.read("s", start=start, stop=stop)] == seqs
    assert [r.seq for r, _ in recorder.events("s", start=start, stop=stop)] == seqs


@pytest.mark.parametrize(
    ("read", "said"),
    [
        (lambda r: r.read("s", start="2"), "start: expected an int seq, got str '2'"),
        (lambda r: r.events("s", stop=2.0), "stop: expected an int seq, got float 2.0"),
        (lambda r: r.replay("s", start=None), "start: expected an int seq, got NoneType None"),
        (lambda r: r.last_of("s", "Committed", before="9"), "before: expected an int seq"),
        (lambda r: r.read("s", start=True), "start: expected an int seq, got bool True"),
    ],
)
def test_a_read_bound_that_is_not_an_int_is_refused_by_every_recorder(
    recorder: Recorder, read: Callable[[Recorder], object], said: str
) -> None:
    """SQLite compared ``start="2"`` as 2 and a memory log raised only when iterated: the
    same call gave events on one recorder and a TypeError deep in a loop on the other."""
    recorder.append(batch("s", story()))
    with pytest.raises(TypeError, match=re.escape(said)):
        read(recorder)


def test_a_read_bound_beyond_64_bits_reads_as_one_past_every_seq(recorder: Recorder) -> None:
    """SQLite raised OverflowError (its integers are of 64 bits) where a memory log read."""
    recorder.append(batch("s", story()))
    every = [r.seq for r in recorder.read("s")]
    assert [r.seq for r in recorder.read("s", start=-(2**70), stop=2**64)] == every
    assert list(recorder.read("s", start=2**63)) == []
    assert [r.seq for r, _ in recorder.events("s", stop=2**70)] == every
    assert len(list(recorder.replay("s", start=-(2**64)))) == len(every)
    last = recorder.last_of("s", "SessionStarted", before=2**64)
    assert last is not None
    assert last.seq == 1


def test_the_chain_continues_across_appends(new_recorder: Factory) -> None:
    one_by_one, all_at_once = new_recorder(), new_recorder()
    for new in batch("s", story()):
        one_by_one.append([new])
    all_at_once.append(batch("s", story()))
    assert list(one_by_one.read("s")) == list(all_at_once.read("s"))
    assert verify_chain(one_by_one.read("s")).ok


@pytest.mark.parametrize("seq", [1, 4, 6, 10], ids=["taken", "just-taken", "gap", "far"])
def test_a_conflicting_seq_writes_nothing(recorder: Recorder, seq: int) -> None:
    recorder.append(batch("s", story()[:2]))
    before = (list(recorder.read("s")), recorder.head("s"), recorder.sessions())
    # Valid events of two sessions first, then the conflict: the whole batch is refused.
    attempt = [
        NewEvent("s", 3, story()[2], 1.0),
        NewEvent("other", 1, started(), 1.0),
        NewEvent("s", 4, story()[3], 1.0),
        NewEvent("s", seq, SessionEnded("x"), 1.0),
    ]
    with pytest.raises(SequenceConflict) as caught:
        recorder.append(attempt)
    assert (caught.value.session, caught.value.seq, caught.value.expected) == ("s", seq, 5)
    assert (list(recorder.read("s")), recorder.head("s"), recorder.sessions()) == before
    assert recorder.head("other") is None
    assert list(recorder.read("other")) == []


@pytest.mark.parametrize("size", [1, 2, 3, 255, 256, 257, 600])
def test_a_batch_of_any_size_is_stored_whole_and_in_order(recorder: Recorder, size: int) -> None:
    """The SQLite recorder inserts a batch in statements of many rows: every count must
    come out whole, in order and chained, however it splits."""
    recorder.append([NewEvent("s", 1, started(), 0.0)])
    requests = [story()[2]] * size
    stored = recorder.append(batch("s", requests, first=2))
    assert [record.seq for record in stored] == list(range(2, size + 2))
    assert list(recorder.read("s", start=2)) == stored
    assert verify_chain(recorder.read("s")).ok
    summary = recorder.summary("s")
    assert summary is not None
    assert summary.events == size + 1


def test_a_first_event_must_have_seq_1(recorder: Recorder) -> None:
    with pytest.raises(SequenceConflict, match="'s': seq 2 is not the next one"):
        recorder.append([NewEvent("s", 2, started(), 0.0)])
    assert recorder.sessions() == []


def test_a_seq_below_1_is_said_to_be_out_of_range_not_taken(recorder: Recorder) -> None:
    """Seq 0 of a new session was "taken (expected 1)", though nothing had taken it."""
    below = "seq 0 is out of range: sequence numbers start at 1 (expected 1)"
    with pytest.raises(SequenceConflict, match=rf"^session 's': {re.escape(below)}$"):
        recorder.append([NewEvent("s", 0, started(), 0.0)])
    recorder.append([NewEvent("s", 1, started(), 0.0)])
    with pytest.raises(SequenceConflict, match="'s': seq -1 is out of range"):
        recorder.append([NewEvent("s", -1, started(), 0.0)])
    with pytest.raises(SequenceConflict, match="'s': seq 1 is taken"):
        recorder.append([NewEvent("s", 1, started(), 0.0)])
    assert recorder.summary("s") is not None


def test_a_seq_repeated_inside_one_batch_conflicts(recorder: Recorder) -> None:
    with pytest.raises(SequenceConflict):
        recorder.append([NewEvent("s", 1, started(), 0.0), NewEvent("s", 1, started(), 0.0)])
    assert recorder.head("s") is None


def lower_size_limit(recorder: Recorder, limit: int) -> None:
    """As a log built with a smaller SQLITE_MAX_LENGTH holds: a billion bytes, the default,
    are not allocated in a test."""
    if isinstance(recorder, SqliteRecorder):
        recorder._writer.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, limit)
    else:
        assert isinstance(recorder, MemoryRecorder)
        recorder.size_limit = limit


def test_an_event_too_large_for_the_log_is_refused_naming_it_and_writes_nothing(
    recorder: Recorder,
) -> None:
    """SQLite's `string or blob too big` came out raw, a DatabaseError: what the commands
    and the HTTP server take for a damaged log."""
    lower_size_limit(recorder, 4000)
    recorder.append([NewEvent("s", 1, started(), 0.0)])
    before = (list(recorder.read("s")), recorder.sessions())
    huge = EffectCompleted(1, "x" * 4000)
    with pytest.raises(EventTooLargeError) as caught:
        recorder.append([NewEvent("s", 2, story()[1], 1.0), NewEvent("s", 3, huge, 2.0)])
    error = caught.value
    assert (error.session, error.seq, error.topic, error.limit) == ("s", 3, "EffectCompleted", 4000)
    assert error.size > 4000
    assert str(error).startswith(
        "session 's', event 3 (EffectCompleted) is too large for the log: its row would take "
    )
    assert str(error).endswith(" bytes, more than the 4,000 it holds in one")
    assert not isinstance(error, DAMAGED_LOG_ERRORS)
    assert (list(recorder.read("s")), recorder.sessions()) == before
    recorder.append([NewEvent("s", 2, story()[1], 1.0)])  # the recorder goes on


def test_no_event_near_the_size_limit_reaches_sqlite_too_large(tmp_path: Path) -> None:
    """Each is stored or refused as too large: SQLite never raises `string or blob too big`
    (it limits the whole row, which holds more than the body)."""
    with SqliteRecorder(tmp_path / "log.db", synchronous="OFF") as recorder:
        lower_size_limit(recorder, 2000)
        session = "a-session-name-that-takes-room-in-the-row"
        recorder.append([NewEvent(session, 1, started(), 0.0)])
        seq, refused = 2, 0
        for length in range(1700, 2000):
            try:
                recorder.append([NewEvent(session, seq, EffectCompleted(1, "x" * length), 0.5)])
                seq += 1
            except EventTooLargeError:
                refused += 1
        assert 0 < refused < 300


def test_an_unencodable_event_writes_nothing(recorder: Recorder) -> None:
    with pytest.raises(TypeError):
        recorder.append([NewEvent("s", 1, started(), 0.0),
                         NewEvent("s", 2, EffectCompleted(1, object()), 0.0)])
    assert recorder.head("s") is None
    recorder.append([NewEvent("s", 1, started(), 0.0)])
    assert recorder.head("s") is not None


@pytest.mark.parametrize(
    ("field", "kind", "cause"),
    [
        ({"a": object()}, TypeError, "TypeError: can not serialize 'object' object"),
        ({"a": {1, 2}}, TypeError, "TypeError: can not serialize 'set' object"),
        ({"a": 2**64}, ValueError, "OverflowError: Integer value out of range"),
    ],
)
def test_an_unencodable_event_is_refused_naming_it_and_its_cause_and_writes_nothing(
    recorder: Recorder, field: dict[str, object], kind: type[Exception], cause: str
) -> None:
    """msgpack's bare "can not serialize 'object' object" (or an OverflowError) named no
    event: which of a batch's events, of which session, failed was left to guess."""
    said = f"session 's', event 2 (ActionRequested) cannot be encoded for the log: {cause}"
    with pytest.raises(kind, match=f"^{re.escape(said)}$") as raised:
        recorder.append([
            NewEvent("s", 1, started(), 0.0),
            NewEvent("s", 2, ActionRequested(1, field, {}, {}, False), 0.0),
        ])  # fmt: skip
    assert raised.value.__cause__ is not None
    assert f"{type(raised.value.__cause__).__name__}: {raised.value.__cause__}" == cause
    assert recorder.head("s") is None
    assert recorder.sessions() == []


def test_an_empty_append_does_nothing(recorder: Recorder) -> None:
    assert recorder.append([]) == []
    assert recorder.sessions() == []


def test_interleaved_sessions_keep_their_own_sequences_and_chains(recorder: Recorder) -> None:
    a, b = story(), [started("semledger.examples.form:app", "web"), SessionCrashed("E", "tb")]
    interleaved = [NewEvent("a", 1, a[0], 1.0), NewEvent("b", 1, b[0], 2.0),
                   NewEvent("a", 2, a[1], 3.0), NewEvent("b", 2, b[1], 4.0)]
    recorder.append(interleaved)
    recorder.append(batch("a", a[2:], first=3, at=10.0))
    assert [e for _, e in recorder.events("a")] == a
    assert [e for _, e in recorder.events("b")] == b
    assert verify_chain(recorder.read("a")).ok
    assert verify_chain(recorder.read("b")).ok
    assert recorder.sessions() == [
        SessionSummary("a", "semledger.examples.counter:app", "runtime", 1.0, 13.0, 6, True,
                       False, "closed"),
        SessionSummary("b", "semledger.examples.form:app", "web", 2.0, 4.0, 2, True, True,
                       "crashed: E"),
    ]


def test_session_start_is_the_chained_first_event_when_it_is_a_start(recorder: Recorder) -> None:
    recorder.append(batch("s", story()))
    recorder.append(batch("headless", story()[1:]))
    assert recorder.summary("s") is not None
    assert session_start(recorder, "s") == story()[0]
    assert session_start(recorder, "headless") is None
    assert session_start(recorder, "nobody") is None


def test_a_session_without_its_start_is_damage_naming_what_is_in_its_place(
    recorder: Recorder,
) -> None:
    recorder.append([*batch("headless", story()[1:3]), *batch("s", story())])
    said = "session 'headless', event 1: it is a Committed, not the SessionStarted"
    assert str(unstarted(recorder, "headless")).startswith(said)
    assert str(unstarted(recorder, "nobody")) == "session 'nobody', event 1: missing"


def test_a_session_whose_first_events_are_gone_is_missing_its_start(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    with SqliteRecorder(db) as recorder:
        recorder.append(batch("s", story()))
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM events WHERE seq < 3")
    conn.close()
    with SqliteRecorder(db) as recorder:
        assert str(unstarted(recorder, "s")) == (
            "session 's', event 1: missing: the session's events start at event 3"
        )


@pytest.mark.parametrize(
    ("by", "refused"), [("server", False), ("client", True), ("operator", True), ("fuzzer", True)]
)
def test_a_session_ended_for_good_is_refused_again_and_one_ended_for_now_is_not(
    recorder: Recorder, by: EndedBy, refused: bool
) -> None:
    recorder.append(batch("s", [started(), SessionEnded("stop", by)]))
    refusal = ended_for_good(recorder, "s")
    assert (refusal is not None) == refused
    if refusal is not None:
        assert refusal.startswith("session 's' was ended for good (stop) and is not served again")
    recorder.append(batch("open", story()[:2]))
    assert ended_for_good(recorder, "open") is None
    assert ended_for_good(recorder, "nobody") is None


def test_a_session_without_a_start_has_no_app(recorder: Recorder) -> None:
    recorder.append([NewEvent("s", 1, ActionReceipt(1, 1, 1, False), 5.0)])
    assert recorder.sessions() == [SessionSummary("s", None, None, 5.0, 5.0, 1, False, False)]




def test_sessions_are_listed_by_name_whatever_order_they_began_in(recorder: Recorder) -> None:
    for name in ("b", "ab", "a"):
        recorder.append(batch(name, story()[:1]))
    assert [summary.name for summary in recorder.sessions()] == ["a", "ab", "b"]


def test_summary_is_the_one_session_sessions_lists(recorder: Recorder) -> None:
    recorder.append([*batch("a", story()), *batch("b", story()[:2])])
    assert recorder.summary("nobody") is None
    assert [recorder.summary("a"), recorder.summary("b")] == recorder.sessions()

def test_a_session_resumed_after_it_ended_is_live_until_it_ends_again(
    recorder: Recorder,
) -> None:
    def state() -> tuple[bool, str | None]:
        [summary] = recorder.sessions()
        return summary.ended, summary.end_reason

    recorder.append(batch("s", story()))  # ends "closed"
    assert state() == (True, "closed")
    recorder.append(batch("s", [Committed(3, {"from": 2, "to": 3}, "cc" * 32)], first=7))
    assert state() == (False, None)
    recorder.append(batch("s", [SessionEnded("signal SIGINT")], first=8))
    assert state() == (True, "signal SIGINT")


@pytest.mark.parametrize("batches", [[4], [1, 3], [2, 2]], ids=["one", "start-second", "two"])
def test_a_summary_names_the_app_and_surface_of_the_first_start(
    recorder: Recorder, batches: list[int]
) -> None:
    events = [
        ActionReceipt(1, 1, 1, False),  # (a log edited: its start is not event 1)
        started(),
        SessionEnded("parked"),
        started("semledger.examples.form:app", "web"),
    ]
    first = 1
    for size in batches:
        recorder.append(batch("s", events[first - 1 : first - 1 + size], first=first))
        first += size
    summary = recorder.summary("s")
    assert summary is not None
    assert (summary.app, summary.surface) == ("semledger.examples.counter:app", "runtime")


@pytest.mark.parametrize("batches", [[3], [2, 1]], ids=["one-batch", "two-batches"])
def test_a_summary_says_a_session_crashed_after_events_follow_the_crash(
    recorder: Recorder, batches: list[int]
) -> None:
    events = [started(), SessionCrashed("E", "tb"), SessionEnded("edited in")]
    first = 1
    for size in batches:
        recorder.append(batch("s", events[first - 1 : first - 1 + size], first=first))
        first += size
    summary = recorder.summary("s")
    assert summary is not None
    assert (summary.crashed, summary.ended, summary.end_reason) == (True, True, "edited in")
    assert verify_log(recorder)["s"].ok

def test_a_read_sees_the_events_committed_when_it_started(recorder: Recorder) -> None:
    recorder.append(batch("s", story()[:3]))
    reading = recorder.read("s")
    assert next(reading).seq == 1
    recorder.append(batch("s", story()[3:], first=4))
    assert [r.seq for r in reading] == [2, 3]
    assert [r.seq for r in recorder.read("s")] == [1, 2, 3, 4, 5, 6]


def test_an_append_made_during_a_pinned_read_is_not_seen_by_it(recorder: Recorder) -> None:
    events = story()
    recorder.append(batch("s", events[:3]))
    seen: dict[str, object] = {}
    with recorder.pinned():
        before = recorder.summary("s")
        recorder.append(batch("s", events[3:], first=4))
        recorder.append(batch("t", events[:1]))
        with recorder.pinned():
            seen["head"] = recorder.head("s")
        seen["summary"] = recorder.summary("s")
        seen["seqs"] = [r.seq for r in recorder.read("s")]
        seen["events"] = len(list(recorder.events("s")))
        seen["replayed"] = len(list(recorder.replay("s")))
        seen["last"] = recorder.last_of("s", events[-1].__class__.__name__)
        seen["sessions"] = [summary.name for summary in recorder.sessions()]
        seen["t"] = (recorder.head("t"), list(recorder.read("t")))
    assert before is not None
    assert seen == {
        "head": Head(3, list(recorder.read("s"))[2].chain),
        "summary": before,
        "seqs": [1, 2, 3],
        "events": 3,
        "replayed": 3,
        "last": None,
        "sessions": ["s"],
        "t": (None, []),
    }
    after = recorder.summary("s")
    assert after is not None
    assert after.events == 6
    assert [summary.name for summary in recorder.sessions()] == ["s", "t"]


@pytest.mark.parametrize("reading", ["read", "events", "replay"])
def test_a_read_left_unfinished_as_its_pin_ends_holds_no_later_read_at_the_pins_moment(
    recorder: Recorder, reading: str
) -> None:
    """An exception's traceback kept such a read alive: its pooled connection stayed in the
    pin's read transaction, and every later reader of it saw the log as it was then."""
    recorder.append(batch("s", story()[:3]))
    with recorder.pinned():
        unfinished = getattr(recorder, reading)("s")
        next(unfinished)
    recorder.append(batch("s", story()[3:], first=4))
    head = recorder.head("s")
    assert head is not None
    assert head.seq == 6
    assert [r.seq for r in recorder.read("s")] == [1, 2, 3, 4, 5, 6]
    del unfinished


def test_a_pinned_read_holds_only_for_the_thread_that_pinned_it(recorder: Recorder) -> None:
    recorder.append(batch("s", story()[:3]))
    heads: list[Head | None] = []
    with recorder.pinned():
        recorder.append(batch("s", story()[3:], first=4))
        other = threading.Thread(target=lambda: heads.append(recorder.head("s")))
        other.start()
        other.join()
        heads.append(recorder.head("s"))
    assert [head and head.seq for head in heads] == [6, 3]


def test_session_names_are_the_sessions_with_events_in_order(recorder: Recorder) -> None:
    assert list(recorder.session_names()) == []
    for name in ("b", " ", "a", "ab"):  # (" ": the first name a log takes, '' refused)
        recorder.append(batch(name, story()[:2]))
    assert list(recorder.session_names()) == [" ", "a", "ab", "b"]
    with recorder.pinned():
        recorder.append(batch("c", story()[:1]))
        assert list(recorder.session_names()) == [" ", "a", "ab", "b"]


def test_session_names_leave_out_a_session_name_edited_into_another_type(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.db"
    with SqliteRecorder(db) as recorder:
        recorder.append([*batch("a", story()[:2]), *batch("b", story()[:2])])
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE events SET session = x'61' WHERE session = 'a' AND seq = 2")
    conn.close()
    with SqliteRecorder(db) as recorder:
        assert list(recorder.session_names()) == ["a", "b"]


@pytest.mark.parametrize(
    ("column", "value"),
    [("events", "'six'"), ("app", "x'37'"), ("first_at", "'noon'"), ("ended", "0.5")],
)
def test_a_summary_row_edited_into_another_type_is_malformed(
    tmp_path: Path, column: str, value: str
) -> None:
    db = tmp_path / "log.db"
    with SqliteRecorder(db) as recorder:
        recorder.append(batch("a", story()))
    with sqlite3.connect(db) as conn:
        conn.execute(f"UPDATE sessions SET {column} = {value}")
    conn.close()
    said = f"the summary of session 'a' is malformed: its {column} is "
    with SqliteRecorder(db) as recorder:
        with pytest.raises(CorruptSummaryError, match=said):
            recorder.summary("a")
        with pytest.raises(CorruptSummaryError, match=said):
            recorder.sessions()


def test_checked_sessions_of_a_log_being_written_find_nothing_wrong(recorder: Recorder) -> None:
    """A writer appends between the read of the summary rows and the lookups of the
    events: both are read at one moment, so a healthy log is not reported damaged."""
    recorder.append(batch("s", story()[:3]))
    recorder.append(batch("t", story()[:3]))
    rows = recorder.sessions

    def rows_then_appends() -> list[SessionSummary]:
        found = rows()
        recorder.append(batch("s", story()[3:], first=4))
        recorder.append(batch("u", story()[:1]))
        return found

    recorder.sessions = rows_then_appends  # type: ignore[method-assign]
    summaries, problems = checked_sessions(recorder)
    assert problems == []
    assert [(s.name, s.events, s.ended) for s in summaries] == [("s", 3, False), ("t", 3, False)]
    del recorder.sessions
    assert checked_sessions(recorder)[1] == []


def test_checked_sessions_names_a_session_its_index_lists_but_cannot_find() -> None:
    """What a malformed SQLite index does (rows out of order): `sessions` asserted, and
    ended in a traceback."""

    class DamagedIndex(MemoryRecorder):
        def head(self, session: str) -> Head | None:
            return None

    recorder = DamagedIndex()
    recorder.append(batch("a", story()))
    found, problems = checked_sessions(recorder)
    assert found == [recorder.summary("a")]  # listed as its summary row has it
    assert [str(problem) for problem in problems] == [
        "session 'a': the log's index lists events of it that it cannot find by their seq"
        " (SQLite's `PRAGMA integrity_check` names the damage)"
    ]


def test_checked_sessions_names_a_last_event_that_appears_twice(tmp_path: Path) -> None:
    """In a table whose primary key was dropped and its last row copied, `sessions` ended
    in a traceback (too many values to unpack) where every other command names the copy."""
    db = tmp_path / "log.db"
    with SqliteRecorder(db) as recorder:
        recorder.append(batch("a", story()))
    with sqlite3.connect(db) as conn:
        conn.executescript(
            "CREATE TABLE copy AS SELECT * FROM events;"
            " INSERT INTO copy SELECT * FROM events WHERE seq = (SELECT max(seq) FROM events);"
            " DROP TABLE events; ALTER TABLE copy RENAME TO events;"
        )
    conn.close()
    with SqliteRecorder(db) as recorder:
        _found, problems = checked_sessions(recorder)
    assert [str(problem) for problem in problems] == [
        f"session 'a': its last event, {len(story())}, appears 2 times"
    ]


def test_checked_sessions_lists_a_session_without_a_summary_row_as_its_events_say(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.db"
    with SqliteRecorder(db) as recorder:
        recorder.append(batch("a", [started(), SessionCrashed("E", "tb")], at=5.0))
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM sessions")
    conn.close()
    with SqliteRecorder(db) as recorder:
        found, problems = checked_sessions(recorder)
    assert found == [
        SessionSummary("a", "semledger.examples.counter:app", "runtime", 5.0, 6.0, 2, True, True,
                       "crashed: E")
    ]
    assert [str(problem) for problem in problems] == [
        "session 'a': it has 2 events and no row in the log's summary"
    ]


def test_checked_sessions_names_a_last_event_labelled_the_largest_seq(tmp_path: Path) -> None:
    """A last seq edited to 2**63-1: `sessions` read from it to one past it, which SQLite
    cannot hold, found no row and ended in a traceback."""
    db = tmp_path / "log.db"
    with SqliteRecorder(db) as recorder:
        recorder.append(batch("a", story()))
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE events SET seq = ? WHERE seq = ?", (2**63 - 1, len(story())))
    conn.close()
    with SqliteRecorder(db) as recorder:
        _found, problems = checked_sessions(recorder)
    assert [str(problem) for problem in problems] == [
        f"session 'a': event {len(story())} is missing: the next record is labelled seq"
        f" {2**63 - 1}"
    ]


def test_an_abandoned_read_does_not_block_appends(recorder: Recorder) -> None:
    recorder.append(batch("s", story()[:3]))
    reading = recorder.read("s")
    next(reading)
    recorder.append(batch("s", story()[3:], first=4))
    reading.close()
    assert recorder.head("s") is not None
    assert recorder.head("s") == Head(6, list(recorder.read("s"))[-1].chain)


def test_a_closed_recorder_refuses_everything(recorder: Recorder) -> None:
    recorder.close()
    recorder.close()
    with pytest.raises(RecorderClosedError):
        recorder.append(batch("s", story()))
    with pytest.raises(RecorderClosedError):
        recorder.append([])
    with pytest.raises(RecorderClosedError):
        recorder.read("s")
    with pytest.raises(RecorderClosedError):
        recorder.events("s")
    with pytest.raises(RecorderClosedError):
        recorder.head("s")
    with pytest.raises(RecorderClosedError):
        recorder.sessions()


def test_a_final_end_is_logged_after_the_last_event_unless_a_server_serves_the_session(
    recorder: Recorder,
) -> None:
    recorder.append([NewEvent("s", 1, started(), 1.0)])
    with recorder.claim("s"), pytest.raises(SessionClaimedError):
        log_final_end(recorder, "s", "retired", "operator", 2.0)
    assert log_final_end(recorder, "s", "retired", "operator", 2.0).seq == 2
    assert session_end(recorder, "s") == SessionEnded("retired", by="operator")
    with pytest.raises(UnknownSessionError):
        log_final_end(recorder, "t", "retired", "client", 2.0)
    with pytest.raises(ValueError, match=r"^by: expected 'client' or 'operator'"):
        log_final_end(recorder, "s", "over", "server", 3.0)
    with pytest.raises(TypeError, match=r"^session: expected a str, got int 5"):
        log_final_end(recorder, 5, "over", "client", 3.0)  # type: ignore[arg-type]
    assert len(list(recorder.read("s"))) == 2


def test_a_final_end_is_refused_after_a_crash_or_another_final_end(recorder: Recorder) -> None:
    """Ending a crashed session hid its crash from the audit, and a second final end was
    logged after the first."""
    recorder.append([
        NewEvent("crashed", 1, started(), 1.0),
        NewEvent("crashed", 2, SessionCrashed("ZeroDivisionError", "Traceback …"), 2.0),
        NewEvent("ended", 1, started(), 1.0),
    ])  # fmt: skip
    log_final_end(recorder, "ended", "retired", "operator", 2.0)
    with pytest.raises(SessionOverError, match=r"'crashed' is over already: it crashed \(Zero"):
        log_final_end(recorder, "crashed", "retired", "operator", 3.0)
    with pytest.raises(SessionOverError, match=r"it was ended for good \(retired\)"):
        log_final_end(recorder, "ended", "again", "client", 3.0)
    assert [recorder.head(s).seq for s in ("crashed", "ended")] == [2, 2]  # type: ignore[union-attr]


def test_a_final_end_is_refused_after_events_that_no_server_logs_in_that_order(
    recorder: Recorder,
) -> None:
    recorder.append([
        *batch("past-end", [started(), SessionEnded("parked"), ActionReceipt(1, 1, 1, False)]),
        *batch("headless", [ActionReceipt(1, 1, 1, False)]),
    ])  # fmt: skip
    with pytest.raises(InconsistentLogError, match="event 3: it follows the session's end at"):
        log_final_end(recorder, "past-end", "retired", "operator", 9.0)
    with pytest.raises(InconsistentLogError, match="event 1: it is a ActionReceipt, not the"):
        log_final_end(recorder, "headless", "retired", "operator", 9.0)
    assert [recorder.head(s).seq for s in ("past-end", "headless")] == [3, 1]  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("session", "seq", "at", "error"),
    [
        ("s", 1, "now", "at: expected a finite time in seconds (time.time()), got 'now'"),
        ("s", 1, float("nan"), "at: expected a finite time in seconds (time.time()), got nan"),
        ("s", 1, True, "at: expected a finite time in seconds (time.time()), got True"),
        (5, 1, 1.0, "session: expected a str, got int 5"),
        ("s", True, 1.0, "seq: expected an int, got bool True"),
        ("s", 1.0, 1.0, "seq: expected an int, got float 1.0"),
        ("s", "1", 1.0, "seq: expected an int, got str '1'"),
        ("ok", "3", 1.0, "seq: expected an int, got str '3'"),
        ("ok", 3.0, 1.0, "seq: expected an int, got float 3.0"),
    ],
)
def test_an_event_the_log_could_not_read_back_is_refused_and_nothing_is_written(
    recorder: Recorder, session: object, seq: object, at: object, error: str
) -> None:
    """SQLite kept an `at` of 'now' (a clock returning text), and every read of the session
    then failed: the log was damaged by one bad argument. A seq of True was stored as such,
    one of '1' failed comparing it ("'<' not supported"), and a float one in struct."""
    recorder.append([NewEvent("ok", 1, started(), 1.0)])
    with pytest.raises(TypeError, match=re.escape(error)):
        recorder.append([
            NewEvent("ok", 2, SessionEnded("x"), 2.0),
            NewEvent(session, seq, started(), at),  # type: ignore[arg-type]
        ])  # fmt: skip
    assert [r.seq for r in recorder.read("ok")] == [1]
    assert recorder.head(str(session)) is None or session == "ok"


def test_a_session_named_nothing_is_refused_and_nothing_is_written(recorder: Recorder) -> None:
    """A session named '' was logged, and `semledger sessions` listed it as a blank row."""
    with pytest.raises(ValueError, match=r"^session: expected a session name, got ''$"):
        recorder.append([NewEvent("ok", 1, started(), 1.0), NewEvent("", 1, started(), 1.0)])
    assert recorder.head("ok") is None
    assert recorder.sessions() == []


@pytest.mark.parametrize(
    ("events", "error"),
    [
        (None, "events: expected a sequence of NewEvents, got NoneType None"),
        ("junk", "events: expected a sequence of NewEvents, got str 'junk'"),
        (
            NewEvent("s", 1, started(), 1.0),
            "events: expected a sequence of NewEvents, got NewEvent NewEvent(session='s'",
        ),
        (["junk"], "events: expected NewEvents, got str 'junk'"),
        ([NewEvent("s", 1, started(), 1.0), None], "events: expected NewEvents, got NoneType"),
    ],
)
def test_a_batch_that_is_no_sequence_of_new_events_is_refused_alike_by_every_recorder(
    recorder: Recorder, events: object, error: str
) -> None:
    """append(None) returned [] from SQLite and raised "not iterable" from memory; a batch
    holding a str failed with AttributeError ('str' object has no attribute 'session')."""
    with pytest.raises(TypeError, match=f"^{re.escape(error)}"):
        recorder.append(events)  # type: ignore[arg-type]
    assert recorder.head("s") is None
    assert recorder.append([]) == []


# SQLite only: what lives on disk.


def test_a_session_has_one_claim_at_a_time_and_a_released_one_can_be_taken_again(
    recorder: Recorder,
) -> None:
    with (
        recorder.claim("s"),
        recorder.claim("t"),
        pytest.raises(SessionClaimedError, match="'s' is already being served"),
        recorder.claim("s"),
    ):
        pass
    with recorder.claim("s"):
        pass
    with pytest.raises(RuntimeError), recorder.claim("s"):
        raise RuntimeError("the owner failed")
    with recorder.claim("s"):
        pass


def test_served_says_whether_each_session_is_being_served_and_takes_no_claim(
    recorder: Recorder,
) -> None:
    """A session with no claim file beside a SQLite log (a copy's) cannot be told: None."""
    unclaimed = None if isinstance(recorder, SqliteRecorder) else False
    assert recorder.served(["s", "t"]) == {"s": unclaimed, "t": unclaimed}
    with recorder.claim("s"):
        assert recorder.served(["s", "t", "u"]) == {"s": True, "t": unclaimed, "u": unclaimed}
        with recorder.claim("t"):
            pass
    assert recorder.served(["s", "t"]) == {"s": unclaimed, "t": unclaimed}
    with recorder.claim("s"):  # asking took nothing
        pass


@pytest.mark.parametrize("session", [5, None, b"s"])
@pytest.mark.parametrize(
    "use",
    [
        lambda r, s: r.read(s),
        lambda r, s: r.events(s),
        lambda r, s: r.replay(s),
        lambda r, s: r.head(s),
        lambda r, s: r.last_of(s, "SessionStarted"),
        lambda r, s: r.seqs_of(s, "SessionStarted"),
        lambda r, s: r.summary(s),
        lambda r, s: r.claim(s).__enter__(),
    ],
)
def test_a_session_that_is_not_a_str_is_refused_naming_it_by_every_recorder(
    recorder: Recorder, use: Callable[[Recorder, object], object], session: object
) -> None:
    """SQLite's claim(5) raised AttributeError ('int' object has no attribute 'encode')
    where a memory log's took it, and read(5), head(5), summary(5) answered as for an
    unknown session: a wrong argument passed for a session with no events."""
    recorder.append(batch("s", story()))
    said = f"session: expected a str, got {type(session).__name__} {session!r}"
    with pytest.raises(TypeError, match=f"^{re.escape(said)}$"):
        use(recorder, session)
    with pytest.raises(TypeError, match=r"^sessions: expected session names \(str\), got int 5"):
        recorder.served(["s", 5])  # type: ignore[list-item]
    with recorder.claim("s"):  # nothing was claimed
        assert recorder.served(["s"]) == {"s": True}


@pytest.mark.parametrize(
    ("topic", "said"),
    [
        (SessionStarted, "got type <class 'semledger.eventlog._events.SessionStarted'>: give"
         " its name, 'SessionStarted'"),
        (None, "got NoneType None"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("use", ["last_of", "seqs_of"])
def test_a_topic_that_is_not_a_str_is_refused_naming_it_by_every_recorder(
    recorder: Recorder, use: str, topic: object, said: str
) -> None:
    """`last_of("s", SessionStarted)`, the class for its name, answered None as for a
    topic never logged."""
    recorder.append(batch("s", story()))
    expected = f"topic: expected an event class's name (a str), {said}"
    with pytest.raises(TypeError, match=f"^{re.escape(expected)}$"):
        getattr(recorder, use)("s", topic)


def test_served_of_one_name_given_as_a_str_raises(recorder: Recorder) -> None:
    """served("s1x") answered for sessions 's', '1' and 'x'."""
    with pytest.raises(TypeError, match=r"^sessions: expected a sequence of session names"):
        recorder.served("s1x")


def _holding_s(path: Path) -> subprocess.Popen[str]:
    """Another process, holding the claim of session ``s`` on the log at `path`."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from semledger.eventlog import SqliteRecorder\n"
            "claim = SqliteRecorder(sys.argv[1]).claim('s')\n"
            "claim.__enter__()\n"
            "print('held', flush=True)\n"
            "time.sleep(600)\n",
            str(path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None
    said = holder.stdout.readline()
    holder.stdout.close()
    if said != "held\n":
        holder.kill()
        holder.wait(timeout=30)
        raise AssertionError(f"the claim holder said {said!r}")
    return holder


def test_an_sqlite_claim_holds_across_recorders_and_processes_until_its_holder_dies(
    tmp_path: Path,
) -> None:
    """A second recorder on the file is refused, as is another process; once that process
    is killed (no chance to release anything) the claim is free."""
    path = tmp_path / "log.db"
    holder = _holding_s(path)
    try:
        with SqliteRecorder(path) as recorder:
            assert recorder.served(["s", "another session"]) == {"s": True, "another session": None}
            with pytest.raises(SessionClaimedError), recorder.claim("s"):
                pass
            with recorder.claim("another session"):
                pass
            holder.kill()
            holder.wait(timeout=30)
            # Its claim file is still there, and unlocked: the owner was killed.
            assert (tmp_path / "log.db-claims").exists()
            assert recorder.served(["s"]) == {"s": False}
            with recorder.claim("s"):
                pass
    finally:
        holder.kill()
        holder.wait(timeout=30)


def test_a_claim_that_logs_nothing_leaves_a_killed_owners_claim_file_telling_so(
    tmp_path: Path,
) -> None:
    """A resume refused before it logged anything (another app, say) released the claim
    and removed the file the killed server had left: the session then read as "cannot be
    told" (open) where it had read as not served, its server killed."""
    path = tmp_path / "log.db"
    holder = _holding_s(path)
    holder.kill()
    holder.wait(timeout=30)
    with SqliteRecorder(path) as recorder:
        assert recorder.served(["s"]) == {"s": False}
        with recorder.claim("s"):  # refused before it logged anything
            pass
        assert recorder.served(["s"]) == {"s": False}
        with recorder.claim("s"):  # resumed and ended: the killed server's file is done with
            end = SessionEnded("end of input")
            recorder.append([NewEvent("s", 1, started(), 0.0), NewEvent("s", 2, end, 0.0)])
        assert recorder.served(["s"]) == {"s": None}
        assert not (tmp_path / "log.db-claims").exists()


def test_a_claim_taken_again_after_another_process_served_the_session_appends_at_its_head(
    tmp_path: Path,
) -> None:
    """A server whose session another server served (and parked) meanwhile kept the head it
    had written: its next resume read the log's head and was refused as "seq 5 is not the
    next one (expected 3)", a 409 to the agent; its DELETE a 503."""
    db = tmp_path / "log.db"
    with SqliteRecorder(db) as first, SqliteRecorder(db) as second:
        for recorder in (first, second, first):
            with recorder.claim("s"):
                head = recorder.head("s")
                seq = 1 if head is None else head.seq + 1
                begun = started() if head is None else SessionResumed(())
                parked = SessionEnded("parked", "server")
                batch = [NewEvent("s", seq, begun, 0.0), NewEvent("s", seq + 1, parked, 0.0)]
                recorder.append(batch)
        assert [r.seq for r in first.read("s")] == [1, 2, 3, 4, 5, 6]


def test_released_sqlite_claims_leave_no_file_or_directory_behind(tmp_path: Path) -> None:
    claims = tmp_path / "log.db-claims"
    with SqliteRecorder(tmp_path / "log.db") as recorder:
        for name in ("s", "t", "s"):
            with recorder.claim(name):
                assert len(list(claims.iterdir())) == 1
            assert not claims.exists()
        with recorder.claim("s"):
            with recorder.claim("t"):
                assert len(list(claims.iterdir())) == 2
            assert len(list(claims.iterdir())) == 1  # s is still claimed
        with pytest.raises(RuntimeError), recorder.claim("s"):
            raise RuntimeError("the owner failed")
    assert not claims.exists()


def test_a_claim_whose_directory_the_last_release_removed_makes_it_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """B makes the claims directory, A releases the last claim in it (removing it), then B
    creates its file: B makes the directory again and owns the session."""
    from semledger.eventlog import _claims

    with SqliteRecorder(tmp_path / "log.db") as recorder:
        first = contextlib.ExitStack()
        first.enter_context(recorder.claim("s"))
        real_open = os.open
        calls = 0

        def open_after_the_release(path: str, flags: int, mode: int = 0o777) -> int:
            nonlocal calls
            calls += 1
            if calls == 1:
                first.close()  # A lets go between B's makedirs and B's open
            return real_open(path, flags, mode)

        monkeypatch.setattr(_claims.os, "open", open_after_the_release)
        with recorder.claim("t"):
            monkeypatch.setattr(_claims.os, "open", real_open)
            assert calls == 2
            with pytest.raises(SessionClaimedError), recorder.claim("t"):
                pass


def test_a_claim_that_locked_the_file_a_release_removed_takes_the_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race of a removing release: B opens the claim file, A releases (removes it and
    unlocks), B locks the removed file. B must not count as the owner: C would then take a
    new file and serve the session too."""
    from semledger.eventlog import _claims

    with SqliteRecorder(tmp_path / "log.db") as recorder:
        first = contextlib.ExitStack()
        first.enter_context(recorder.claim("s"))
        real_flock = fcntl.flock
        calls = 0

        def flock_after_the_release(fd: int, operation: int) -> None:
            nonlocal calls
            calls += 1
            if calls == 1:
                first.close()  # A lets go between B's open and B's lock
            real_flock(fd, operation)

        monkeypatch.setattr(_claims.fcntl, "flock", flock_after_the_release)
        with recorder.claim("s"):
            monkeypatch.setattr(_claims.fcntl, "flock", real_flock)
            assert calls == 2  # B locked the removed file, saw it, and took the new one
            with pytest.raises(SessionClaimedError), recorder.claim("s"):
                pass


def test_a_claim_whose_folder_cannot_be_made_raises_log_open_error_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It raised the bare OSError (FileExistsError, PermissionError), which `serve` and
    `end` over stdio showed as a traceback (exit 1) instead of the one line of a log that
    cannot be opened."""
    import errno

    from semledger.eventlog import _claims

    path = tmp_path / "log.db"
    folder = f"{os.path.realpath(path)}-claims"
    with SqliteRecorder(path) as recorder:
        Path(folder).write_text("not a folder")
        with pytest.raises(LogOpenError) as in_its_place, recorder.claim("s"):
            pass
        assert str(in_its_place.value) == (
            f"cannot open the log {path}: its session claims folder {folder} is a file, not"
            " a folder: move it away"
        )
        Path(folder).unlink()

        def denied(name: str, mode: int = 0o777, exist_ok: bool = False) -> None:
            raise PermissionError(errno.EACCES, "Permission denied", name)

        monkeypatch.setattr(_claims.os, "makedirs", denied)
        with pytest.raises(LogOpenError) as unwritable, recorder.claim("s"):
            pass
        assert str(unwritable.value) == (
            f"cannot open the log {path}: its session claims folder {folder} cannot be made"
            " or written: Permission denied"
        )


@pytest.mark.parametrize(
    ("code", "says"),
    [
        (
            "EMFILE",
            "this process is out of file descriptors (Too many open files), and a session's"
            " claim in {folder} needs one: raise its limit (ulimit -n), or serve fewer"
            " sessions at once",
        ),
        (
            "ENFILE",
            "the system is out of file descriptors (Too many open files in system), and a"
            " session's claim in {folder} needs one: close files elsewhere, or raise the"
            " system's limit",
        ),
    ],
)
def test_a_claim_with_no_file_descriptor_left_says_so_not_that_its_folder_is_unwritable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: str, says: str
) -> None:
    """Out of file descriptors, a claim said "its session claims folder ... cannot be made
    or written: Too many open files", which reads as a path or permission problem."""
    import errno

    from semledger.eventlog import _claims

    path = tmp_path / "log.db"
    folder = f"{os.path.realpath(path)}-claims"

    def exhausted(name: str, flags: int, mode: int = 0o777) -> int:
        number = getattr(errno, code)
        raise OSError(number, os.strerror(number), name)

    with SqliteRecorder(path) as recorder:
        monkeypatch.setattr(_claims.os, "open", exhausted)
        with pytest.raises(LogOpenError) as out, recorder.claim("s"):
            pass
    assert str(out.value) == f"cannot open the log {path}: " + says.format(folder=folder)


def test_reopening_an_sqlite_log_keeps_everything(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    with SqliteRecorder(path) as first:
        stored = first.append(batch("a", story()))
        stored += first.append(batch("b", story()[:2]))
        sessions = first.sessions()
    with SqliteRecorder(path) as again:
        assert again.found_schema_version == SCHEMA_VERSION
        assert list(again.read("a")) + list(again.read("b")) == stored
        assert again.sessions() == sessions
        again.append(batch("b", story()[2:], first=3))
        assert verify_chain(again.read("b")).ok


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        ("seq = '3a'", "an event is malformed: its seq is '3a', not an integer"),
        ("seq = X'33'", "an event is malformed: its seq is b'3', not an integer"),
        (
            "at = 'yesterday'",
            "event 3 is malformed: its at is 'yesterday', not a number of seconds",
        ),
        ("version = '1a'", "event 3 is malformed: its version is '1a', not an integer"),
        ("topic = X'41'", "event 3 is malformed: its topic is b'A', not text"),
    ],
)
def test_an_event_row_edited_into_another_type_is_malformed_wherever_it_is_read(
    tmp_path: Path, edit: str, says: str
) -> None:
    """Read as it was, it failed far away: a TypeError adding 1 to a seq of '3a', or a time
    of 'yesterday' printed and verified as a time."""
    path = tmp_path / "log.db"
    with SqliteRecorder(path) as recorder:
        recorder.append(batch("s", story()[:5]))
    with sqlite3.connect(path) as conn:
        conn.execute(f"UPDATE events SET {edit} WHERE session = 's' AND seq = 3")
    conn.close()
    with SqliteRecorder(path) as recorder:
        reads: list[Callable[[], object]] = [
            lambda: list(recorder.read("s")),
            lambda: list(recorder.events("s")),
        ]
        if "seq" in edit:  # a text seq sorts after every number: it is the head
            reads.append(lambda: recorder.head("s"))
        else:
            reads.append(lambda: list(recorder.read("s", start=3, stop=4)))
        if "seq" not in edit and "topic" not in edit:
            reads.append(lambda: recorder.last_of("s", "ActionRequested"))
        for read in reads:
            with pytest.raises(MalformedRowError) as raised:
                read()
            assert str(raised.value) == f"session 's': {says}"
        assert [str(problem) for problem in checked_sessions(recorder)[1]] == (
            [f"session 's': {says}"] if "seq" in edit else []
        )
        if "version" in edit:  # replay reads no seq: the event is named by its topic
            with pytest.raises(CorruptEventError, match=r"its version is '1a', not an integer$"):
                list(recorder.replay("s"))


@pytest.mark.parametrize(
    ("suffix", "replace", "says"),
    [
        ("", False, "log.db was deleted while this recorder wrote to it"),
        ("", True, "log.db was replaced by another file while this recorder wrote to it"),
        ("-wal", False, "log.db-wal was deleted while this recorder wrote to it"),
    ],
)
def test_an_append_after_the_log_file_was_deleted_or_replaced_fails_though_sqlite_commits(
    tmp_path: Path, suffix: str, replace: bool, says: str
) -> None:
    """SQLite goes on committing into files it holds open after they are unlinked: every
    receipt given then would be for events no one opening the log will ever find."""
    path = tmp_path / "log.db"
    with SqliteRecorder(path) as recorder:
        recorder.append(batch("a", story()[:2]))
        gone = Path(f"{path}{suffix}")
        gone.unlink()
        if replace:
            gone.write_bytes(b"")
        with pytest.raises(LogMovedError, match=f"{tmp_path}/{says}"):
            recorder.append(batch("a", story()[2:4], first=3))
        with pytest.raises(LogMovedError):
            recorder.append(batch("b", story()[:1]))


def test_a_log_renamed_under_its_writer_is_said_to_be_moved_where_not_deleted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`mv log.db log.db.bak` under a server was reported as "log.db was deleted", though
    every event was in log.db.bak. The file the writer holds open still has a name: it was
    moved, and that is where its events are. Where the system does not say (no
    /proc/self/fd), the error says it cannot tell."""
    path, moved, other = tmp_path / "log.db", tmp_path / "log.db.bak", tmp_path / "old.db"
    with SqliteRecorder(path) as recorder:
        kept = recorder.append(batch("a", story()[:2]))
        path.rename(moved)
        with pytest.raises(LogMovedError) as renamed:
            recorder.append(batch("a", story()[2:4], first=3))
        assert str(renamed.value) == (
            f"{path} was moved to {moved} while this recorder wrote to it; its events are there"
        )
    with SqliteRecorder(moved, read_only=True) as there:
        assert list(there.read("a")) == kept

    moved.rename(path)
    with SqliteRecorder(path) as recorder:
        path.rename(other)
        path.write_bytes(b"")
        with pytest.raises(LogMovedError) as replaced:
            recorder.append(batch("a", story()[2:4], first=3))
        assert str(replaced.value) == (
            f"{path} was replaced by another file while this recorder wrote to it; its events"
            f" are in {other}"
        )
    path.unlink()

    other.rename(path)
    listdir = os.listdir

    def no_proc(folder: str) -> list[str]:
        if str(folder).startswith("/proc"):
            raise FileNotFoundError(folder)
        return listdir(folder)

    with SqliteRecorder(path) as recorder:
        path.rename(moved)
        monkeypatch.setattr(os, "listdir", no_proc)
        with pytest.raises(LogMovedError) as unknown:
            recorder.append(batch("a", story()[2:4], first=3))
        monkeypatch.setattr(os, "listdir", listdir)
        assert str(unknown.value) == (
            f"{path} was moved or deleted while this recorder wrote to it; its events are in"
            " the file it was moved to, if it was moved"
        )


@pytest.mark.parametrize("read_first", [False, True])
def test_a_log_replaced_while_written_keeps_its_events_and_leaves_the_replacement_as_it_was(
    tmp_path: Path, read_first: bool
) -> None:
    """SQLite does not checkpoint into a log file renamed under it as it closes: the
    writer's -wal stayed at the path, laid over the file put there (which then read as the
    old log), and the moved file held none of its events; a reader opened after the swap
    folded that -wal into the replacement for good."""
    path, moved, other = tmp_path / "log.db", tmp_path / "log.db.bak", tmp_path / "other.db"
    with SqliteRecorder(other) as theirs:
        replacement = theirs.append(batch("other", story()))
    recorder = SqliteRecorder(path)
    kept = recorder.append(batch("a", story()[:2]))
    path.rename(moved)
    shutil.copy(other, path)
    if read_first:
        with pytest.raises(LogMovedError, match=r"log\.db was replaced by another file"):
            recorder.sessions()
    with pytest.raises(LogMovedError, match=r"log\.db was replaced by another file"):
        recorder.append(batch("a", story()[2:4], first=3))
    recorder.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log.db", "log.db.bak", "other.db"]
    assert path.read_bytes() == other.read_bytes()
    with SqliteRecorder(path, read_only=True) as now:
        assert [summary.name for summary in now.sessions()] == ["other"]
        assert list(now.read("other")) == replacement
    with SqliteRecorder(moved, read_only=True) as before:
        assert [summary.name for summary in before.sessions()] == ["a"]
        assert list(before.read("a")) == kept


def test_a_batch_refused_because_the_wal_was_deleted_is_not_written_to_the_log(
    tmp_path: Path,
) -> None:
    """The check came after the COMMIT: the refused batch was in the deleted -wal, which
    SQLite folds into the log file as the last connection closes, so the log held events
    the writer had said were not written."""
    path = tmp_path / "log.db"
    with SqliteRecorder(path) as recorder:
        kept = recorder.append(batch("a", story()[:2]))
        Path(f"{path}-wal").unlink()
        with pytest.raises(LogMovedError):
            recorder.append(batch("a", story()[2:4], first=3))
        with pytest.raises(LogMovedError):
            recorder.append(batch("b", story()[:1]))
    with SqliteRecorder(path, read_only=True) as again:
        assert list(again.read("a")) == kept
        assert [summary.name for summary in again.sessions()] == ["a"]


def test_a_log_on_a_full_disk_is_inspected_without_making_files_and_not_opened_to_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Opened read-write to inspect, a cleanly closed log needed a -wal and a -shm: on a
    full disk SQLite made them empty and failed with "disk I/O error"."""
    path = tmp_path / "log.db"
    with SqliteRecorder(path) as recorder:
        stored = recorder.append(batch("a", story()))
    real = os.statvfs(tmp_path)
    full = os.statvfs_result((*real[:3], 0, 0, *real[5:]))
    monkeypatch.setattr(os, "statvfs", lambda _path: full)
    with SqliteRecorder.to_inspect(path) as inspecting:
        assert list(inspecting.read("a")) == stored
        assert sorted(p.name for p in tmp_path.iterdir()) == ["log.db"]
    with pytest.raises(LogOpenError, match=f"{tmp_path}/log.db: the disk is full \\(0 bytes"):
        SqliteRecorder(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log.db"]


def test_files_an_inspection_that_failed_left_are_removed_unless_another_process_uses_them(
    tmp_path: Path,
) -> None:
    """Under a quota or a file size limit, opening a cleanly closed log to inspect it made
    a -wal and a -shm it could not fill, and left them beside the log. They are removed,
    but not a -wal and -shm a server that started meanwhile uses (it holds a lock on the
    -shm), even an empty -wal."""
    from semledger.eventlog._sqlite import _remove_made

    path = tmp_path / "log.db"
    wal, shm = Path(f"{path}-wal"), Path(f"{path}-shm")
    sqlite3.connect(path).close()
    wal.touch()
    shm.write_bytes(b"\0\0\0")
    _remove_made(str(path), set())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log.db"]

    server = subprocess.Popen(
        [sys.executable, "-c", (
            "import sqlite3, sys\n"
            "conn = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
            "conn.execute('PRAGMA journal_mode=WAL')\n"
            "conn.execute('CREATE TABLE t (x)')\n"
            "conn.execute('PRAGMA wal_checkpoint(TRUNCATE)')\n"
            "print('using it', flush=True)\n"
            "sys.stdin.read()\n"
        ), str(path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert server.stdout is not None
        assert server.stdout.readline() == "using it\n"
        assert wal.stat().st_size == 0
        _remove_made(str(path), set())
        assert sorted(p.name for p in tmp_path.iterdir()) == ["log.db", "log.db-shm", "log.db-wal"]
    finally:
        server.communicate("", timeout=30)


def test_an_append_while_another_connection_holds_the_write_lock_is_busy_and_writes_nothing(
    tmp_path: Path,
) -> None:
    """A maintenance script or an ``sqlite3`` shell inside ``BEGIN IMMEDIATE``: after the
    busy timeout the append says the log is locked, and the same batch can be written once
    the lock is released."""
    path = tmp_path / "log.db"
    with SqliteRecorder(path, busy_timeout=0.2) as recorder:
        recorder.append(batch("a", story()[:2]))
        holder = sqlite3.connect(path, isolation_level=None)
        try:
            holder.execute("BEGIN IMMEDIATE")
            began = time.monotonic()
            with pytest.raises(LogBusyError, match="locked by another process") as caught:
                recorder.append(batch("a", story()[2:4], first=3))
            assert time.monotonic() - began >= 0.15  # it waited for the lock first
            assert (caught.value.path, caught.value.timeout) == (str(path), 0.2)
            holder.execute("COMMIT")
        finally:
            holder.close()
        stored = recorder.append(batch("a", story()[2:4], first=3))
        assert [record.seq for record in stored] == [3, 4]
        assert [record.seq for record in recorder.read("a")] == [1, 2, 3, 4]
        assert verify_chain(recorder.read("a")).ok
        summary = recorder.summary("a")
        assert summary is not None
        assert summary.events == 4


def test_a_log_opened_through_a_symlink_is_written_and_claimed_as_the_file_itself(
    tmp_path: Path,
) -> None:
    """SQLite follows the link, and keeps the -wal beside the file it names: the in-place
    check looked for one beside the link and failed every append, and a claim taken through
    the link did not keep a server on the real path from taking the session too."""
    real, link = tmp_path / "real.db", tmp_path / "link.db"
    with SqliteRecorder(real):
        pass
    link.symlink_to(real)
    with SqliteRecorder(link) as through_link, SqliteRecorder(real) as direct:
        through_link.append(batch("a", story()[:2]))
        through_link.append(batch("a", story()[2:], first=3))
        assert len(list(direct.read("a"))) == len(story())
        with through_link.claim("a"), pytest.raises(SessionClaimedError):
            direct.claim("a").__enter__()


@pytest.mark.parametrize("read_only", [False, True])
def test_a_log_file_with_a_second_name_is_refused_by_either_name(
    tmp_path: Path, read_only: bool
) -> None:
    """A hard link is not a symlink: SQLite keeps a -wal beside each name, so two servers
    owned one session, and a read through the other name replayed a stale -wal over the
    log, which lost most of its events and still verified."""
    first, second = tmp_path / "a.db", tmp_path / "b.db"
    with SqliteRecorder(first) as recorder:
        recorder.append(batch("a", story()))
    os.link(first, second)
    for name in (first, second):
        with pytest.raises(LogOpenError, match="the file has 2 names \\(hard links\\)"):
            SqliteRecorder(name, read_only=read_only)
    second.unlink()
    with SqliteRecorder(first, read_only=read_only) as again:
        assert len(list(again.read("a"))) == len(story())


def _without_write_rights(code: str, path: Path) -> subprocess.CompletedProcess[str]:
    """Python's `code` (``%r`` given `path`) unable to write where permissions say it may
    not (root ignores them unless it drops the capabilities that let it)."""
    drop = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search,-fowner", "--"]
    return subprocess.run(
        [*(drop if os.geteuid() == 0 else []), sys.executable, "-c", code % str(path)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


_OPEN = "from semledger.eventlog import SqliteRecorder as R; R(%r).close()"


def test_a_log_file_that_may_only_be_read_is_refused_as_it_opens_leaving_nothing_beside_it(
    tmp_path: Path,
) -> None:
    """Refused by the write probe, the open left the -wal and -shm SQLite had made with the
    log's mode (0444), and the -shm still refused every open once the log's mode was set
    back to 0644."""
    path = tmp_path / "log.db"
    with SqliteRecorder(path) as recorder:
        recorder.append(batch("a", story()))
    path.chmod(0o444)
    done = _without_write_rights(_OPEN, path)
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines()[-1] == (
        f"semledger.eventlog._errors.LogOpenError: cannot open the log {path}: attempt to"
        " write a readonly database"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log.db"]
    with SqliteRecorder.to_inspect(path) as reader:
        assert len(list(reader.read("a"))) == len(story())
    path.chmod(0o644)
    done = _without_write_rights(_OPEN, path)
    assert done.returncode == 0, done.stderr


def test_a_wal_or_shm_of_this_users_own_it_may_not_write_is_named_by_its_mode_not_its_owner(
    tmp_path: Path,
) -> None:
    """A -shm left with mode 0444 (by an older semledger refused on a 0444 log) was said to
    belong to the user, who "may not write it", as if another user owned it."""
    path = tmp_path / "log.db"
    SqliteRecorder(path).close()
    shm = Path(f"{path}-shm")
    shm.write_bytes(bytes(32768))
    shm.chmod(0o444)
    done = _without_write_rights(_OPEN, path)
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines()[-1].endswith(
        f"cannot open the log {path}: attempt to write a readonly database (its -shm file is"
        f" read-only (mode 0444): with no server running on the log, remove {shm})"
    ), done.stderr


@pytest.mark.parametrize(
    ("name", "code", "said"),
    [
        ("log.db", _OPEN, "attempt to write a readonly database"),
        ("log.db", _OPEN.replace("%r", "%r, create=False"), "attempt to write a readonly database"),
        ("new.db", _OPEN, "unable to open database file"),
    ],
    ids=["served", "ended", "new"],
)
def test_a_log_in_a_folder_this_user_may_not_write_is_refused_naming_the_folder(
    tmp_path: Path, name: str, code: str, said: str
) -> None:
    """SQLite makes a log's -wal and -shm, and a new log, in its folder: where this user may
    not write it, a log it may write was said to be "a readonly database", and a new one
    "unable to open database file"; the folder was not named."""
    folder = tmp_path / "folder"
    folder.mkdir()
    SqliteRecorder(folder / "log.db").close()
    folder.chmod(0o555)
    try:
        done = _without_write_rights(code, folder / name)
    finally:
        folder.chmod(0o755)
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines()[-1] == (
        f"semledger.eventlog._errors.LogOpenError: cannot open the log {folder / name}: this"
        f" user may not write in its folder {os.path.realpath(folder)}, where the log and its"
        f" -wal and -shm are kept: {said}"
    )
    assert sorted(p.name for p in folder.iterdir()) == ["log.db"]


def test_a_clash_in_a_later_insert_statement_writes_nothing_of_the_batch(
    tmp_path: Path,
) -> None:
    """Rows go in several statements; a clash in the last must undo the earlier ones."""
    path = tmp_path / "log.db"
    with SqliteRecorder(path) as ours, SqliteRecorder(path) as theirs:
        ours.append([NewEvent("late", 1, started(), 0.0)])
        theirs.append([NewEvent("late", 2, SessionEnded("theirs"), 0.0)])
        early = batch("early", [started()] + [story()[2]] * 299)
        with pytest.raises(SequenceConflict) as caught:
            ours.append([*early, NewEvent("late", 2, SessionEnded("ours"), 0.0)])
        assert (caught.value.session, caught.value.seq, caught.value.expected) == ("late", 2, 3)
        assert list(ours.read("early")) == []
        assert ours.head("early") is None
        assert ours.summary("early") is None
        assert [s.name for s in ours.sessions()] == ["late"]
        assert len(ours.append(early)) == 300


def test_a_writer_refused_as_another_moved_a_head_appends_after_the_new_head(
    tmp_path: Path,
) -> None:
    """The head a writer keeps of a session it wrote is dropped when the log refuses it."""
    path = tmp_path / "log.db"
    with SqliteRecorder(path) as ours, SqliteRecorder(path) as theirs:
        ours.append([NewEvent("s", 1, started(), 0.0)])
        theirs.append([NewEvent("s", 2, SessionEnded("theirs"), 0.0)])
        with pytest.raises(SequenceConflict, match="seq 2 is taken"):
            ours.append([NewEvent("s", 2, SessionEnded("ours"), 0.0)])
        [stored] = ours.append([NewEvent("s", 3, SessionResumed(()), 0.0)])
        assert ours.head("s") == Head(3, stored.chain)
        assert verify_chain(ours.read("s")).ok



def test_a_read_only_sqlite_recorder_reads_and_never_writes(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    with SqliteRecorder(path) as writer:
        stored = writer.append(batch("s", story()))
    before = path.read_bytes()
    with SqliteRecorder(path, read_only=True) as reader:
        assert list(reader.read("s")) == stored
        assert [s.name for s in reader.sessions()] == ["s"]
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            reader.append(batch("t", story()[:1]))
    assert path.read_bytes() == before
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    with pytest.raises(LogOpenError, match="it holds no semledger log"):
        SqliteRecorder(empty, read_only=True)


@pytest.mark.parametrize("options", [{"create": False}, {"read_only": True}])
def test_a_log_that_is_not_there_is_said_not_to_exist(
    tmp_path: Path, options: dict[str, bool]
) -> None:
    """Opened without creating it, a missing log was "unable to open database file"."""
    path = tmp_path / "missing.db"
    with pytest.raises(LogOpenError, match=f"^cannot open the log {path}: it does not exist$"):
        SqliteRecorder(path, **options)
    assert sorted(tmp_path.iterdir()) == []
    link = tmp_path / "link.db"
    link.symlink_to(path)
    said = f"^cannot open the log {link}: it links to {path}, which does not exist$"
    with pytest.raises(LogOpenError, match=said):
        SqliteRecorder(link, **options)
    assert sorted(tmp_path.iterdir()) == [link]


@pytest.mark.parametrize("options", [{}, {"create": False}, {"read_only": True}])
def test_a_loop_of_symbolic_links_is_said_to_be_one(
    tmp_path: Path, options: dict[str, bool]
) -> None:
    """`serve --db` of a link to itself ended in a traceback: "Too many levels of symbolic
    links" from a check before SQLite's open."""
    link = tmp_path / "loop.db"
    link.symlink_to(link)
    said = f"^cannot open the log {link}: it is a loop of symbolic links, which leads to no file$"
    with pytest.raises(LogOpenError, match=said):
        SqliteRecorder(link, **options)
    assert sorted(tmp_path.iterdir()) == [link]


def test_a_read_only_recorder_leaves_at_close_the_files_a_writer_of_its_process_uses(
    tmp_path: Path,
) -> None:
    """A read-only recorder's reads make a -wal and -shm beside a cleanly closed log, which
    it leaves (docs/log.md): removed at its close, as a failed open's are, they were those
    of a writer this process opened meanwhile, which found its -wal deleted. To leave
    nothing beside the log, to_inspect."""
    path = tmp_path / "log.db"
    with SqliteRecorder(path) as writer:
        writer.append(batch("s", story()))
    clean = sorted(tmp_path.iterdir())
    reader = SqliteRecorder(path, read_only=True)
    assert [s.name for s in reader.sessions()] == ["s"]
    with SqliteRecorder(path) as writer:
        reader.close()
        writer.append(batch("t", story()))
    with SqliteRecorder.to_inspect(path) as inspected:
        assert [s.name for s in inspected.sessions()] == ["s", "t"]
    assert sorted(tmp_path.iterdir()) == clean


def test_the_sqlite_log_is_wal_with_the_chosen_synchronous_level(tmp_path: Path) -> None:
    with SqliteRecorder(tmp_path / "full.db") as full:
        assert full._writer.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert full._writer.execute("PRAGMA synchronous").fetchone() == (2,)
    with SqliteRecorder(tmp_path / "normal.db", synchronous="NORMAL") as normal:
        assert normal._writer.execute("PRAGMA synchronous").fetchone() == (1,)
    with pytest.raises(ValueError, match="synchronous"):
        SqliteRecorder(tmp_path / "bad.db", synchronous="SOMETIMES")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="MemoryRecorder"):
        SqliteRecorder(":memory:")


@pytest.mark.parametrize(
    ("path", "options", "error", "message"),
    [
        (None, {}, TypeError, "path: expected a file path .* got NoneType None"),
        (5, {}, TypeError, "path: expected a file path .* got int 5"),
        (b"log.db", {}, TypeError, r"path: .* got bytes b'log.db': decode it first \(os.fsdecode"),
        ("", {}, ValueError, "path: expected a file path, got '': use MemoryRecorder"),
        ("log.db", {"busy_timeout": "5"}, TypeError, "busy_timeout: expected a number of seconds"),
        ("log.db", {"busy_timeout": -1}, ValueError, "busy_timeout: expected a finite number"),
        ("log.db", {"busy_timeout": float("nan")}, ValueError, "busy_timeout: .* got nan"),
        ("log.db", {"read_only": "yes"}, TypeError, "read_only: expected a bool, got str 'yes'"),
        ("log.db", {"create": "no"}, TypeError, "create: expected a bool, got str 'no'"),
        ("log.db", {"synchronous": 2}, TypeError, "synchronous: expected one of"),
    ],
)
def test_a_sqlite_recorder_refuses_a_wrong_argument_by_name_and_makes_no_file(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    path: object,
    options: dict[str, object],
    error: type[Exception],
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(error, match=message):
        SqliteRecorder(path, **options)  # type: ignore[arg-type]
    if not options:
        with pytest.raises(error, match=message):
            SqliteRecorder.to_inspect(path)  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []


def test_a_schema_newer_than_the_code_is_refused_leaving_the_file_as_it_was(
    tmp_path: Path,
) -> None:
    """The file was switched to WAL, its header rewritten, before it was refused."""
    path = schema_version_only(tmp_path / "future.db", 99)
    before = path.read_bytes()
    for opened in (SqliteRecorder, SqliteRecorder.to_inspect):
        with pytest.raises(UnsupportedSchemaError, match="schema version 99"):
            opened(path)
        assert path.read_bytes() == before
        assert sorted(p.name for p in tmp_path.iterdir()) == ["future.db"]


def _checkpointed_log(path: Path) -> None:
    """A log of two sessions, each with read checkpoints between its other events."""
    with SqliteRecorder(path) as recorder:
        for session in ("a", "b"):
            events = [*story()[:-1], SemanticsTaken(2, {}, 3), *story()[1:4]]
            recorder.append(batch(session, events))


def _plan(path: Path, sql: str, *parameters: object) -> str:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        rows = conn.execute(f"EXPLAIN QUERY PLAN {sql}", parameters).fetchall()
    return " / ".join(row[-1] for row in rows)


def test_read_checkpoints_are_found_by_an_index_seek_not_a_scan_of_the_session(
    tmp_path: Path,
) -> None:
    """An early read walked back over every read checkpoint with a scan of the rows between
    them: nothing indexed the topic, so finding them cost the whole session."""
    path = tmp_path / "log.db"
    _checkpointed_log(path)
    for sql, parameters in [(_CHECKPOINT_SEQS, ("a",)), (_LAST_CHECKPOINT, ("a", 9))]:
        assert "USING INDEX events_read_checkpoints (session=?" in _plan(path, sql, *parameters)
    with SqliteRecorder(path) as recorder:
        assert recorder.seqs_of("a", "SemanticsTaken") == [6]
        assert recorder.last_of("b", "SemanticsTaken", before=6) is None
        last = recorder.last_of("b", "SemanticsTaken")
        assert last is not None
        assert (last.session, last.seq) == ("b", 6)


def _set_back_to_version_4(path: Path) -> None:
    """The log as schema version 4 left it: without the index of read checkpoints."""
    with contextlib.closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("DROP INDEX events_read_checkpoints")
        conn.execute("UPDATE schema_version SET version = 4")


def test_a_log_of_schema_version_4_is_migrated_to_index_its_read_checkpoints(
    tmp_path: Path,
) -> None:
    path = tmp_path / "log.db"
    _checkpointed_log(path)
    _set_back_to_version_4(path)
    with SqliteRecorder(path) as recorder:
        assert recorder.found_schema_version == 4
        assert recorder.seqs_of("b", "SemanticsTaken") == [6]
    assert inspect_log(path).schema_version == SCHEMA_VERSION
    assert "USING INDEX events_read_checkpoints" in _plan(path, _LAST_CHECKPOINT, "a", 9)


def test_a_log_of_schema_version_4_is_read_read_only_as_it_is(tmp_path: Path) -> None:
    """Version 5 adds only an index: a read-only open reads version 4 without it."""
    path = tmp_path / "log.db"
    _checkpointed_log(path)
    _set_back_to_version_4(path)
    before = path.read_bytes()
    with SqliteRecorder(path, read_only=True) as recorder:
        assert recorder.found_schema_version == 4
        assert recorder.seqs_of("a", "SemanticsTaken") == [6]
        last = recorder.last_of("a", "SemanticsTaken")
        assert last is not None
        assert last.seq == 6
    assert path.read_bytes() == before
    assert inspect_log(path).schema_version == 4


def test_inspect_log_describes_without_migrating(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    with SqliteRecorder(path) as recorder:
        recorder.append(batch("a", story()) + batch("b", story()[:1]))
    info = inspect_log(path)
    assert (info.schema_version, info.sessions, info.events) == (SCHEMA_VERSION, 2, 7)
    assert {"events", "schema_version", "sessions"} <= set(info.tables)


def test_a_creation_cut_short_leaves_no_file_that_holds_no_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Ctrl-C as a new log was made left a 4 KiB file that every later command refused
    ("it holds no semledger log"), fuzz included."""
    from semledger.eventlog import _sqlite

    migrate = _sqlite._migrate

    def interrupted(*args: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(_sqlite, "_migrate", interrupted)
    db = tmp_path / "new.db"
    with pytest.raises(KeyboardInterrupt):
        SqliteRecorder(db)
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    monkeypatch.setattr(_sqlite, "_migrate", migrate)
    with SqliteRecorder(db) as made:
        assert made.found_schema_version == 0
    with SqliteRecorder(db, create=False) as opened:
        assert opened.found_schema_version == SCHEMA_VERSION
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".new")]


def test_a_new_log_that_could_not_be_written_leaves_nothing_and_is_made_next_time(
    tmp_path: Path,
) -> None:
    """Where no room was left to make a new log (a full disk, a quota, a file size limit),
    an empty file was left at the path, which the inspection commands refused, or a log
    whose schema was still in the -wal it was built with, which every command called
    malformed; that -wal and its -shm were left beside it."""
    db = tmp_path / "new.db"
    probe = f"from semledger.eventlog import SqliteRecorder as R; R({str(db)!r})"
    done = subprocess.run(
        ["sh", "-c", 'ulimit -f 1 && exec "$@"', "sh", sys.executable, "-c", probe],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines()[-1] == (
        f"semledger.eventlog._errors.LogOpenError: cannot open the log {db}: it could not be"
        f" written in {tmp_path} (a full disk, a quota or a file size limit leaves no room for"
        " it): disk I/O error"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    with SqliteRecorder(db) as made:
        assert made.found_schema_version == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.db"]


def test_a_path_that_is_not_a_file_is_refused_before_it_is_opened_naming_what_it_is(
    tmp_path: Path,
) -> None:
    """The inspection commands waited forever on a named pipe (opening it to write waits for
    a reader); serve called it, or /dev/null, a "disk I/O error", and made /dev/null-journal
    beside /dev/null."""
    fifo = tmp_path / "fifo.db"
    os.mkfifo(fifo)
    probe = f"from semledger.eventlog import SqliteRecorder as R; R.to_inspect({str(fifo)!r})"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=20, check=False
    )
    assert done.stderr.splitlines()[-1] == (
        f"semledger.eventlog._errors.LogOpenError: cannot open the log {fifo}: it is a named"
        " pipe (FIFO), not a file"
    )
    for path, kind in ((str(fifo), "a named pipe (FIFO)"), (os.devnull, "a character device")):
        for read_only in (False, True):
            with pytest.raises(LogOpenError) as refused:
                SqliteRecorder(path, read_only=read_only)
            assert str(refused.value) == f"cannot open the log {path}: it is {kind}, not a file"
    assert not os.path.lexists(f"{os.devnull}-journal")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo.db"]


def test_a_claim_released_with_its_session_logged_but_unended_leaves_its_file_telling_so(
    tmp_path: Path,
) -> None:
    """A server that stopped because its log could not be written released its claim as
    after a clean end: its session read as `served` null (as on a copied log), where a
    killed server's reads False."""
    claims = tmp_path / "log.db-claims"
    with SqliteRecorder(tmp_path / "log.db") as recorder:
        with recorder.claim("s"):
            recorder.append([NewEvent("s", 1, started(), 0.0)])  # and no end: the disk filled
        assert recorder.served(["s"]) == {"s": False}
        with recorder.claim("s"):  # served again, and ended this time
            recorder.append([NewEvent("s", 2, SessionEnded("end of input"), 0.0)])
        assert recorder.served(["s"]) == {"s": None}
    assert not claims.exists()
