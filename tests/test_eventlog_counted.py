"""check_counted and known_head: a session's summary counts other events than its log
holds, and which damage that is."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from semledger.eventlog import (
    ActionReceipt,
    CorruptSummaryError,
    InconsistentLogError,
    NewEvent,
    SessionStarted,
    SqliteRecorder,
    UnknownSessionError,
    check_counted,
    known_head,
)

EVENTS = 6


@pytest.fixture
def log(tmp_path: Path) -> Iterator[tuple[SqliteRecorder, Path]]:
    path = tmp_path / "log.db"
    with SqliteRecorder(path, synchronous="OFF") as recorder:
        start = SessionStarted("m:app", "runtime", {}, True)
        recorder.append([
            NewEvent("s", 1, start, 1.0),
            *(NewEvent("s", seq, ActionReceipt(seq, seq, seq, False), float(seq))
              for seq in range(2, EVENTS + 1)),
        ])  # fmt: skip
        yield recorder, path


def edit(path: Path, statement: str) -> None:
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(statement)
    conn.close()


def test_a_session_whose_summary_counts_its_events_passes(
    log: tuple[SqliteRecorder, Path],
) -> None:
    recorder, _ = log
    check_counted(recorder, "s")
    check_counted(recorder, "nobody")
    assert known_head(recorder, "s").seq == EVENTS


def test_a_cut_tail_is_said_to_have_removed_events(log: tuple[SqliteRecorder, Path]) -> None:
    recorder, path = log
    edit(path, f"DELETE FROM events WHERE seq = {EVENTS}")
    said = r"counts 6 events where the log holds 5 \(events were removed"
    with pytest.raises(CorruptSummaryError, match=said):
        check_counted(recorder, "s")


def test_events_past_the_count_are_said_to_have_been_added(
    log: tuple[SqliteRecorder, Path],
) -> None:
    recorder, path = log
    edit(path, "UPDATE sessions SET events = 4")
    said = r"counts 4 events where the log holds 6 \(events were added"
    with pytest.raises(CorruptSummaryError, match=said):
        check_counted(recorder, "s")


def test_a_record_labelled_far_past_the_count_names_the_event_missing_in_its_place(
    log: tuple[SqliteRecorder, Path],
) -> None:
    """One record past the count, labelled 40: the label is no sign of 34 events added."""
    recorder, path = log
    edit(
        path,
        "INSERT INTO events SELECT session, 40, topic, version, at, body, chain FROM events"
        f" WHERE seq = {EVENTS}",
    )
    said = "missing: the next record is labelled seq 40"
    with pytest.raises(InconsistentLogError, match=said) as caught:
        check_counted(recorder, "s")
    assert caught.value.seq == EVENTS + 1


def test_a_session_whose_events_are_all_gone_is_damage_not_an_unknown_name(
    log: tuple[SqliteRecorder, Path],
) -> None:
    recorder, path = log
    edit(path, "DELETE FROM events")
    with pytest.raises(CorruptSummaryError, match="where the log holds none"):
        known_head(recorder, "s")
    with pytest.raises(UnknownSessionError, match="no session 'nobody'"):
        known_head(recorder, "nobody")
