"""The audit of a damaged log goes on past each damaged event, and what it lists after one
is what the events that are there say."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from semledger.eventlog import (
    ActionReceipt,
    ActionRejected,
    ActionRequested,
    Committed,
    Event,
    NewEvent,
    SessionStarted,
    SqliteRecorder,
)
from semledger.replay import UnreadableEventError, audit_report

TARGET = {"kind": "semantic_id", "id": "counter.increment"}
ACTIVATE = {"kind": "activate"}
LATEST = {"kind": "latest"}


def _commit(generation: int) -> Committed:
    return Committed(generation, {}, "0" * 64)


def _asked(request_id: int, target: dict[str, str], precondition: dict[str, str]) -> Event:
    return ActionRequested(request_id, target, ACTIVATE, precondition, False)


def _judged_at(db: Path, events: list[Event], unreadable: list[int]) -> list[int]:
    """The generation of each entry of the audit of `events`, logged as session 's' with
    the bodies of the events `unreadable` (their seqs) garbled."""
    with SqliteRecorder(db) as recorder:
        recorder.append([NewEvent("s", seq, e, 1.7e9 + seq) for seq, e in enumerate(events, 1)])
    with sqlite3.connect(db) as conn:
        for seq in unreadable:
            conn.execute("UPDATE events SET body = X'c1' WHERE session = 's' AND seq = ?", (seq,))
    conn.close()
    with SqliteRecorder(db) as recorder, pytest.raises(UnreadableEventError) as raised:
        audit_report(recorder, "s")
    assert [d.seq for d in raised.value.damage] == unreadable
    return [entry.generation for entry in raised.value.entries]


def test_the_rows_after_an_unreadable_commit_have_the_generation_the_receipts_name(
    tmp_path: Path,
) -> None:
    """With the commit of generation 2 unreadable, request 2 (answered 2 -> 3) was listed at
    generation 1, and so was every row after it up to the next commit that can be read."""
    events: list[Event] = [
        SessionStarted("semledger.examples.counter:app", "runtime", {}, True),
        _commit(1),
        _asked(1, TARGET, LATEST),
        _commit(2),  # unreadable
        ActionReceipt(1, 1, 2, False),
        _asked(2, TARGET, LATEST),
        _commit(3),
        ActionReceipt(2, 2, 3, False),
        _commit(4),  # unreadable: an effect's message, say
        _asked(3, TARGET, LATEST),
        _commit(5),
        ActionReceipt(3, 4, 5, False),
    ]
    assert _judged_at(tmp_path / "log.db", events, [4, 9]) == [1, 2, 4]


def test_a_stale_rejection_after_an_unreadable_commit_is_listed_at_the_generation_it_names(
    tmp_path: Path,
) -> None:
    """A request `exact 1` rejected as stale ("current is 2") was listed at generation 1, a
    rejection that contradicts its own details, and so was the request after it."""
    events: list[Event] = [
        SessionStarted("semledger.examples.counter:app", "runtime", {}, True),
        _commit(1),
        _commit(2),  # unreadable
        _asked(1, TARGET, {"kind": "exact", "generation": "1"}),
        ActionRejected(
            1,
            "stale_generation",
            "expected generation 1, current is 2",
            {"expected": "1", "current": "2"},
        ),
        _asked(2, {"kind": "semantic_id", "id": "nope"}, LATEST),
        ActionRejected(2, "target_not_found", "no node has that semantic id", {"target": {}}),
    ]
    assert _judged_at(tmp_path / "log.db", events, [3]) == [2, 2]
