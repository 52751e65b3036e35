"""Audit entries and incidents at the edges: a request whose answer cannot be read, the act
calls of a surface driven through the Python API, effects that finished before the end."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from semledger.eventlog import (
    ActionReceipt,
    ActionRequested,
    CallRefused,
    Committed,
    EffectCompleted,
    EffectStarted,
    Event,
    MemoryRecorder,
    NewEvent,
    SessionEnded,
    SessionStarted,
    SqliteRecorder,
    SurfaceCalled,
)
from semledger.replay import AuditEntry, UnreadableEventError, audit_report

COUNTER = "semledger.examples.counter:app"
TARGET = {"kind": "semantic_id", "id": "counter.increment"}


def _asked(request_id: int) -> ActionRequested:
    return ActionRequested(request_id, TARGET, {"kind": "activate"}, {"kind": "latest"}, False)


def _audited_with_a_body_unreadable(db: Path, events: list[Event], seq: int) -> list[AuditEntry]:
    """The entries the audit of session ``s`` of `events` gives up with, once the body of
    its event `seq` is no msgpack."""
    with SqliteRecorder(db) as recorder:
        recorder.append([NewEvent("s", i, e, 1.7e9 + i) for i, e in enumerate(events, 1)])
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE events SET body = X'c1' WHERE session = 's' AND seq = ?", (seq,))
    conn.close()
    with SqliteRecorder(db) as recorder, pytest.raises(UnreadableEventError) as raised:
        audit_report(recorder, "s")
    return list(raised.value.entries)


def test_a_request_whose_answer_cannot_be_read_is_unreadable_and_one_after_it_unanswered(
    tmp_path: Path,
) -> None:
    events: list[Event] = [
        SessionStarted(COUNTER, "runtime", {}, True),
        Committed(1, {}, "0" * 64),
        _asked(1),
        ActionReceipt(1, 1, 1, False),  # unreadable
        _asked(2),
    ]
    entries = _audited_with_a_body_unreadable(tmp_path / "log.db", events, seq=4)
    outcomes = [(entry.request_id, entry.outcome) for entry in entries]
    assert outcomes == [(1, "unreadable"), (2, "unanswered")]


def _called(method: str, arguments: dict[str, object], error: str | None = None) -> SurfaceCalled:
    return SurfaceCalled(method, arguments, None, error, None, None)


def test_a_surface_s_act_calls_are_entries_judged_at_the_snapshots_taken_before_them() -> None:
    """A snapshot that failed is none taken."""
    recorder = MemoryRecorder()
    events: list[Event] = [
        SessionStarted("https://example.com/", "web", {"adapter": "web"}, True),
        _called("snapshot", {}),
        _called("act", {"action": "click", "ref": "e1"}),
        _called("snapshot", {}, "SessionError"),
        _called("snapshot", {}),
        _called("act", {"action": "fill", "ref": "e2", "args": {"value": "x"}}, "LocateError"),
    ]
    recorder.append([NewEvent("page", seq, e, 0.0) for seq, e in enumerate(events, 1)])
    entries = audit_report(recorder, "page").entries
    seen = [(e.request_id, e.generation, e.outcome, e.target, e.action) for e in entries]
    assert seen == [
        (2, 1, "ok", {"kind": "ref", "id": "e1"}, {"kind": "click"}),
        (5, 2, "LocateError", {"kind": "ref", "id": "e2"}, {"kind": "fill", "value": "x"}),
    ]


def test_only_the_effects_still_running_as_the_session_ended_are_unfinished() -> None:
    recorder = MemoryRecorder()
    events: list[Event] = [
        SessionStarted(COUNTER, "runtime", {}, True),
        Committed(1, {}, "0" * 64),
        EffectStarted(1, "save"),
        EffectStarted(2, "load"),
        EffectCompleted(1, {"type": "Saved"}),
        SessionEnded("closed"),
    ]
    recorder.append([NewEvent("s", seq, e, 0.0) for seq, e in enumerate(events, 1)])
    incidents = audit_report(recorder, "s").incidents
    assert [(i.kind, i.effect_id, i.effect) for i in incidents] == [
        ("effect_unfinished", 2, "load")
    ]


@pytest.mark.parametrize(
    ("params", "fuzzed"), [({"fuzz": {"seed": 0}}, True), ({"str_hash": "0"}, False)]
)
def test_an_audit_says_whether_the_session_is_a_fuzz_counterexample(
    params: dict[str, object], fuzzed: bool
) -> None:
    """Its texts, passwords among them, are the fuzzer's own, logged in clear."""
    recorder = MemoryRecorder()
    started = SessionStarted(COUNTER, "runtime", params, redact_passwords=False)
    recorder.append([NewEvent("s", 1, started, 0.0)])
    report = audit_report(recorder, "s")
    assert (report.fuzzed, report.redact_passwords, report.adapter) == (fuzzed, False, None)


def test_a_request_known_only_from_its_receipt_is_judged_at_the_receipt_s_before(
    tmp_path: Path,
) -> None:
    events: list[Event] = [
        SessionStarted(COUNTER, "runtime", {}, True),
        Committed(1, {}, "0" * 64),
        _asked(1),  # unreadable
        Committed(2, {}, "0" * 64),
        ActionReceipt(1, 1, 2, False),
    ]
    (entry,) = _audited_with_a_body_unreadable(tmp_path / "log.db", events, seq=3)
    assert (entry.unread, entry.seq, entry.outcome) == (True, 3, "receipt")
    assert (entry.generation, entry.before, entry.after) == (1, 1, 2)


def test_a_refused_call_s_entry_names_the_parts_it_did_not_send() -> None:
    """A part not sent shows as ``{}``, as one sent as ``{}`` does: `unsent` tells them apart."""
    recorder = MemoryRecorder()
    refused = CallRefused(
        "perform_action", {"target": TARGET, "action": {}}, "invalid_arguments", "no", False
    )
    events: list[Event] = [SessionStarted(COUNTER, "runtime", {}, True), refused]
    recorder.append([NewEvent("s", seq, e, 0.0) for seq, e in enumerate(events, 1)])
    (entry,) = audit_report(recorder, "s").entries
    assert (entry.target, entry.action, entry.precondition) == (TARGET, {}, {})
    assert entry.unsent == ("precondition",)
