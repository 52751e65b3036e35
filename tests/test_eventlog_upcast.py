"""Reading a log written by the first version of the log (tests/fixtures/eventlog_v1.db).

The fixture was made by tests/fixtures/make_eventlog_v1.py: schema version 1 (no
``sessions`` table) and ``SessionStarted`` at event version 1 (no ``surface``).
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from pathlib import Path

import msgpack  # type: ignore[import-untyped, unused-ignore]
import pytest

from semledger.eventlog import (
    CONVERTER,
    SCHEMA_VERSION,
    ActionReceipt,
    AgentConnected,
    CorruptEventError,
    EffectFailed,
    NewEvent,
    SemanticsTaken,
    SessionEnded,
    SessionResumed,
    SessionStarted,
    SessionSummary,
    SqliteRecorder,
    inspect_log,
    verify_chain,
)

FIXTURE = Path(__file__).parent / "fixtures" / "eventlog_v1.db"


@pytest.fixture
def v1_copy(tmp_path: Path) -> Path:
    """A copy of the fixture: opening a log migrates it, and the fixture must not change."""
    copy = tmp_path / "v1.db"
    shutil.copyfile(FIXTURE, copy)
    return copy


def test_the_fixture_is_a_version_1_log() -> None:
    before = hashlib.sha256(FIXTURE.read_bytes()).hexdigest()
    info = inspect_log(FIXTURE)
    assert (info.schema_version, info.sessions, info.events) == (1, 2, 8)
    assert "sessions" not in info.tables
    assert hashlib.sha256(FIXTURE.read_bytes()).hexdigest() == before


def test_opening_migrates_the_schema_and_fills_the_summaries(v1_copy: Path) -> None:
    with SqliteRecorder(v1_copy) as recorder:
        assert recorder.found_schema_version == 1
        assert recorder.sessions() == [
            SessionSummary("counter-1", "semledger.examples.counter:app", "runtime",
                           1000.0, 1002.0, 6, True, False, "closed"),
            SessionSummary("form-1", "semledger.examples.form:app", "runtime",
                           2000.0, 2000.75, 2, True, True, "crashed: ZeroDivisionError"),
        ]
    assert inspect_log(v1_copy).schema_version == SCHEMA_VERSION
    with SqliteRecorder(v1_copy) as again:
        assert again.found_schema_version == SCHEMA_VERSION


def test_version_1_events_are_upcast_when_read(v1_copy: Path) -> None:
    with SqliteRecorder(v1_copy) as recorder:
        decoded = list(recorder.events("counter-1"))
    record, first = decoded[0]
    assert (record.topic, record.version) == ("SessionStarted", 1)
    assert first == SessionStarted(
        app="semledger.examples.counter:app", surface="runtime", params={},
        redact_passwords=True,
    )
    assert [type(e).__name__ for _, e in decoded] == [
        "SessionStarted", "Committed", "ActionRequested", "Committed", "ActionReceipt",
        "SessionEnded",
    ]
    assert decoded[4][1] == ActionReceipt(request_id=1, before=1, after=2, pending_work=False)
    assert decoded[5][1] == SessionEnded("closed", by="server")  # v1: every end resumable


def test_the_old_chain_verifies_and_new_events_continue_it(v1_copy: Path) -> None:
    with SqliteRecorder(v1_copy) as recorder:
        assert verify_chain(recorder.read("counter-1")).ok
        assert verify_chain(recorder.read("form-1")).ok
        recorder.append([NewEvent("form-1", 3, SessionEnded("restarted"), 3000.0)])
        stored = list(recorder.read("form-1"))
        assert [r.version for r in stored] == [1, 1, SessionEnded.VERSION]
        assert verify_chain(stored).ok
        assert recorder.sessions()[1].events == 3


def test_a_version_2_log_gets_its_end_reasons_from_its_events(tmp_path: Path) -> None:
    path = tmp_path / "v2.db"
    with SqliteRecorder(path) as recorder:
        recorder.append([
            NewEvent("done", 1, SessionStarted("a:app", "runtime", {}, True), 1.0),
            NewEvent("done", 2, SessionEnded("client went away"), 2.0),
            NewEvent("open", 1, SessionStarted("a:app", "runtime", {}, True), 3.0),
            NewEvent("again", 1, SessionStarted("a:app", "runtime", {}, True), 4.0),
            NewEvent("again", 2, SessionEnded("end of input"), 5.0),
            NewEvent("again", 3, SessionResumed(()), 6.0),
            NewEvent("again", 4, SessionEnded("signal SIGTERM"), 7.0),
        ])
    with sqlite3.connect(path) as conn:  # back to version 2: no end_reason column
        conn.execute("ALTER TABLE sessions DROP COLUMN end_reason")
        conn.execute("UPDATE schema_version SET version = 2")
    conn.close()
    with SqliteRecorder(path) as recorder:
        assert recorder.found_schema_version == 2
        reasons = {s.name: s.end_reason for s in recorder.sessions()}
    assert reasons == {"done": "client went away", "open": None, "again": "signal SIGTERM"}


def test_a_damaged_ending_event_does_not_keep_a_version_2_log_from_opening(
    tmp_path: Path,
) -> None:
    path = tmp_path / "v2.db"
    with SqliteRecorder(path) as recorder:
        recorder.append([
            NewEvent("done", 1, SessionStarted("a:app", "runtime", {}, True), 1.0),
            NewEvent("done", 2, SessionEnded("closed"), 2.0),
        ])
    with sqlite3.connect(path) as conn:
        conn.execute("ALTER TABLE sessions DROP COLUMN end_reason")
        conn.execute("UPDATE schema_version SET version = 2")
        conn.execute("UPDATE events SET body = x'c1' WHERE seq = 2")  # not msgpack
    conn.close()
    with SqliteRecorder(path) as recorder:
        [summary] = recorder.sessions()
        assert (summary.ended, summary.end_reason) == (True, None)
        assert not verify_chain(recorder.read("done")).ok  # and the damage shows


def test_a_version_3_log_no_longer_counts_a_resumed_session_as_ended(tmp_path: Path) -> None:
    path = tmp_path / "v3.db"
    started = SessionStarted("a:app", "runtime", {}, True)
    with SqliteRecorder(path) as recorder:
        recorder.append([
            NewEvent("done", 1, started, 1.0),
            NewEvent("done", 2, SessionEnded("end of input"), 2.0),
            NewEvent("resumed", 1, started, 1.0),
            NewEvent("resumed", 2, SessionEnded("end of input"), 2.0),
            NewEvent("resumed", 3, ActionReceipt(1, 1, 2, False), 3.0),  # it went on
        ])
    with sqlite3.connect(path) as conn:  # what version 3 kept: ended from the first ending on
        conn.execute("UPDATE sessions SET ended = 1, end_reason = 'end of input'")
        conn.execute("UPDATE schema_version SET version = 3")
    conn.close()
    with SqliteRecorder(path) as recorder:
        assert recorder.found_schema_version == 3
        states = {s.name: (s.ended, s.end_reason) for s in recorder.sessions()}
        assert states == {"done": (True, "end of input"), "resumed": (False, None)}
        recorder.append([NewEvent("resumed", 4, SessionEnded("signal SIGTERM"), 4.0)])
        ended = {s.name: (s.ended, s.end_reason) for s in recorder.sessions()}["resumed"]
    assert ended == (True, "signal SIGTERM")


def test_a_version_1_read_checkpoint_is_upcast_with_no_next_node_id() -> None:
    semantics = {"kind": "full", "generation": "4", "root": "1", "nodes": []}
    body = msgpack.packb({"_type": "SemanticsTaken", "generation": 4, "semantics": semantics})
    assert CONVERTER.decode("SemanticsTaken", 1, body) == SemanticsTaken(4, semantics, None)


def test_a_version_1_connection_is_upcast_as_one_that_began_with_an_initialize() -> None:
    client = {"name": "agent", "version": "1"}
    body = msgpack.packb(
        {
            "_type": "AgentConnected",
            "client": client,
            "protocol_version": "2025-06-18",
            "transport": "stdio",
            "peer": None,
        }
    )
    assert CONVERTER.decode("AgentConnected", 1, body) == AgentConnected(
        client, "2025-06-18", "stdio", None, resumed=False
    )


def test_a_version_1_failed_effect_is_upcast_without_a_traceback() -> None:
    body = msgpack.packb({"_type": "EffectFailed", "effect_id": 3, "error": "OSError: down"})
    assert CONVERTER.decode("EffectFailed", 1, body) == EffectFailed(3, "OSError: down", None)


@pytest.mark.parametrize(
    ("reason", "final", "by"),
    [
        ("end of input", False, "server"),
        ("ended by the operator", False, "server"),
        ("ended by the operator", True, "operator"),
        ("ended by the operator: its app changed", True, "operator"),
        ("ended by the operatorless", True, "client"),
        ("deleted by the client", True, "client"),
        ("fuzz counterexample: at input 2: the view reports …", False, "fuzzer"),
    ],
)
def test_a_version_2_end_is_upcast_saying_who_ended_it(reason: str, final: bool, by: str) -> None:
    body = msgpack.packb({"_type": "SessionEnded", "reason": reason, "final": final})
    ended = CONVERTER.decode("SessionEnded", 2, body)
    assert ended == SessionEnded(reason, by)  # type: ignore[arg-type]
    assert ended.final is (final or by == "fuzzer")


def test_an_end_by_anyone_else_does_not_decode() -> None:
    body = msgpack.packb({"_type": "SessionEnded", "reason": "x", "by": "the janitor"})
    with pytest.raises(CorruptEventError, match="the janitor"):
        CONVERTER.decode("SessionEnded", SessionEnded.VERSION, body)
