"""The integrity chain: tampering is detected and the first damaged event is named."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from semledger.eventlog import (
    GENESIS,
    ActionReceipt,
    Committed,
    Head,
    MemoryRecorder,
    NewEvent,
    Problem,
    SessionCrashed,
    SessionEnded,
    SessionStarted,
    SqliteRecorder,
    StoredEvent,
    UnknownSessionError,
    canonical_bytes,
    chain_step,
    verify_chain,
    verify_log,
)

SEQS = 6


@pytest.fixture
def log(tmp_path: Path) -> Iterator[tuple[SqliteRecorder, Path]]:
    path = tmp_path / "log.db"
    recorder = SqliteRecorder(path, synchronous="OFF")
    events = [SessionStarted("m:app", "runtime", {}, True)] + [
        Committed(g, {"to": g}, f"{g:064x}") if g % 2 else ActionReceipt(g, g, g + 1, False)
        for g in range(1, SEQS)
    ]
    recorder.append([NewEvent("s", i + 1, e, float(i)) for i, e in enumerate(events)])
    recorder.append([NewEvent("t", 1, events[0], 0.0)])
    yield recorder, path
    recorder.close()


def tamper(path: Path, *statements: str) -> None:
    conn = sqlite3.connect(path)
    with conn:
        for statement in statements:
            conn.execute(statement)
    conn.close()


def test_an_untouched_log_verifies(log: tuple[SqliteRecorder, Path]) -> None:
    recorder, _ = log
    report = verify_chain(recorder.read("s"))
    assert report.ok
    assert (report.session, report.verified, report.problem) == ("s", SEQS, None)
    assert report.head == recorder.head("s")
    assert str(report) == "session 's': ok, 6 events"


def test_a_changed_byte_in_a_body_is_named(log: tuple[SqliteRecorder, Path]) -> None:
    recorder, path = log
    body = next(r.body for r in recorder.read("s") if r.seq == 3)
    changed = body[:-1] + bytes([body[-1] ^ 1])
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE events SET body = ? WHERE session = 's' AND seq = 3", (changed,))
    conn.close()
    report = verify_chain(recorder.read("s"))
    assert report.problem is not None
    assert (report.problem.seq, report.problem.problem) == (3, Problem.CHANGED)
    assert report.verified == 2
    assert "event 3 changed" in str(report)
    assert verify_chain(recorder.read("t")).ok


def test_a_deleted_event_is_named(log: tuple[SqliteRecorder, Path]) -> None:
    recorder, path = log
    tamper(path, "DELETE FROM events WHERE session = 's' AND seq = 3")
    report = verify_chain(recorder.read("s"))
    assert report.problem is not None
    assert (report.problem.seq, report.problem.problem) == (3, Problem.MISSING)


def test_two_swapped_events_are_named(log: tuple[SqliteRecorder, Path]) -> None:
    recorder, path = log
    tamper(
        path,
        "UPDATE events SET seq = -1 WHERE session = 's' AND seq = 2",
        "UPDATE events SET seq = 2 WHERE session = 's' AND seq = 4",
        "UPDATE events SET seq = 4 WHERE session = 's' AND seq = -1",
    )
    report = verify_chain(recorder.read("s"))
    assert report.problem is not None
    assert (report.problem.seq, report.problem.problem) == (2, Problem.OUT_OF_ORDER)
    assert report.verified == 1


def test_an_event_out_of_order_is_said_to_be_further_on_where_its_record_is(
    log: tuple[SqliteRecorder, Path],
) -> None:
    """It read "found labelled seq 4 after a record labelled seq 2": which record was found
    where, and which one is event 2, was left to be worked out."""
    recorder, path = log
    conn = sqlite3.connect(path)
    with conn:
        where = "WHERE session = 's' AND seq = ?"
        second, fourth = (
            conn.execute(f"SELECT body, chain FROM events {where}", (seq,)).fetchone()
            for seq in (2, 4)
        )
        conn.execute(f"UPDATE events SET body = ?, chain = ? {where}", (*fourth, 2))
        conn.execute(f"UPDATE events SET body = ?, chain = ? {where}", (*second, 4))
    conn.close()
    assert str(verify_chain(recorder.read("s")).problem) == (
        "event 2 out of order: it is further on, in the record labelled seq 4"
    )
    memory = MemoryRecorder()
    memory.append([NewEvent("s", i, ActionReceipt(i, i, i, False), 0.0) for i in (1, 2, 3, 4)])
    shuffled = list(memory.read("s"))
    shuffled[1], shuffled[2] = shuffled[2], shuffled[1]
    assert str(verify_chain(shuffled).problem) == (
        "event 2 out of order: it is further on, in the record labelled seq 2; the record in"
        " its place is labelled seq 3"
    )


def test_records_given_out_of_order_are_named() -> None:
    recorder = MemoryRecorder()
    recorder.append([NewEvent("s", i, ActionReceipt(i, i, i, False), 0.0) for i in (1, 2, 3, 4)])
    records = list(recorder.read("s"))
    records[1], records[2] = records[2], records[1]
    report = verify_chain(records)
    assert report.problem is not None
    assert (report.problem.seq, report.problem.problem) == (2, Problem.OUT_OF_ORDER)
    duplicated = list(recorder.read("s"))
    duplicated.insert(2, duplicated[0])
    report = verify_chain(duplicated)
    assert report.problem is not None
    assert (report.problem.seq, report.problem.problem) == (3, Problem.OUT_OF_ORDER)


def test_an_event_whose_record_is_repeated_after_it_is_said_to_appear_twice() -> None:
    """It read "event 3 out of order: it is further on, in the record labelled seq 3; the
    record in its place is labelled seq 2": events 2 and 3 are intact, the copy is extra."""
    recorder = MemoryRecorder()
    recorder.append([NewEvent("s", i, ActionReceipt(i, i, i, False), 0.0) for i in (1, 2, 3, 4)])
    records = list(recorder.read("s"))
    copied = [*records[:2], records[1], *records[2:]]
    report = verify_chain(copied)
    assert str(report.problem) == "event 2 appears twice: the record after it is a copy of it"
    assert report.verified == 2
    other = records[2]._replace(seq=2)
    report = verify_chain([*records[:2], other, *records[2:]])
    assert str(report.problem) == (
        "event 2 appears twice: the record after it is labelled seq 2 too"
    )


def test_a_changed_chain_value_is_named(log: tuple[SqliteRecorder, Path]) -> None:
    recorder, path = log
    tamper(path, "UPDATE events SET chain = zeroblob(32) WHERE session = 's' AND seq = 5")
    report = verify_chain(recorder.read("s"))
    assert report.problem is not None
    assert (report.problem.seq, report.problem.problem) == (5, Problem.CHANGED)


def test_an_anchor_catches_a_truncated_tail_and_a_recomputed_chain(
    log: tuple[SqliteRecorder, Path],
) -> None:
    recorder, _ = log
    anchor = recorder.head("s")
    assert anchor is not None
    assert verify_chain(recorder.read("s"), anchor=anchor).ok
    records = list(recorder.read("s"))
    report = verify_chain(records[:-1], anchor=anchor)
    assert report.problem is not None
    assert (report.problem.seq, report.problem.problem) == (SEQS, Problem.MISSING)
    assert verify_chain(records[:-1]).ok  # without an anchor a cut tail looks complete
    # Rewrite event 2 and recompute every chain value after it.
    rewritten: list[StoredEvent] = []
    previous = GENESIS
    for record in records:
        body = record.body if record.seq != 2 else record.body.replace(b"\x01", b"\x02")
        previous = chain_step(previous, "s", record.seq, record.topic, record.version, body)
        rewritten.append(record._replace(body=body, chain=previous))
    assert verify_chain(rewritten).ok
    report = verify_chain(rewritten, anchor=anchor)
    assert report.problem is not None
    assert (report.problem.seq, report.problem.problem) == (SEQS, Problem.NOT_ANCHORED)
    assert report.verified == SEQS  # every event verifies; the chain is not the anchor's
    assert verify_chain(rewritten, anchor=Head(1, records[0].chain)).ok


def test_progress_is_reported(log: tuple[SqliteRecorder, Path]) -> None:
    recorder, _ = log
    calls: list[tuple[int, int | None]] = []
    verify_chain(list(recorder.read("s")), on_progress=lambda d, t: calls.append((d, t)),
                 progress_every=4)
    assert calls == [(4, 6), (6, 6)]
    calls.clear()
    verify_chain(recorder.read("s"), on_progress=lambda d, t: calls.append((d, t)), total=6,
                 progress_every=3)
    assert calls == [(3, 6), (6, 6)]
    calls.clear()
    verify_chain([], on_progress=lambda d, t: calls.append((d, t)))
    assert calls == [(0, 0)]


def test_progress_reaches_every_record_past_the_first_damage(
    log: tuple[SqliteRecorder, Path],
) -> None:
    recorder, _ = log
    records = list(recorder.read("s"))
    swapped = [records[0], records[2], records[1], *records[3:]]
    calls: list[tuple[int, int | None]] = []
    report = verify_chain(swapped, on_progress=lambda d, t: calls.append((d, t)))
    assert report.problem is not None
    assert (report.problem.seq, report.problem.problem) == (2, Problem.OUT_OF_ORDER)
    assert calls == [(6, 6)]


def test_verify_log_reports_each_session_with_overall_progress(
    log: tuple[SqliteRecorder, Path],
) -> None:
    recorder, path = log
    tamper(path, "DELETE FROM events WHERE session = 's' AND seq = 6")
    calls: list[tuple[int, int | None]] = []
    reports = verify_log(recorder, on_progress=lambda d, t: calls.append((d, t)))
    assert sorted(reports) == ["s", "t"]
    problem = reports["s"].problem
    assert problem is not None  # the chain verifies, but the summary still counts 6
    assert (problem.seq, problem.problem) == (6, Problem.MISSING)
    assert reports["t"].ok
    assert calls[-1] == (6, 7)
    assert verify_log(MemoryRecorder()) == {}



def test_verify_log_notes_the_first_event_timed_before_the_one_before_it() -> None:
    recorder = MemoryRecorder()
    start = SessionStarted("m:app", "runtime", {}, True)
    times = [5.0, 5.0, 7.0, 6.0, 1.0]
    recorder.append([
        NewEvent("s", 1, start, times[0]),
        *(NewEvent("s", i + 1, ActionReceipt(i, i, i, False), at)
          for i, at in enumerate(times[1:], start=1)),
    ])  # fmt: skip
    report = verify_log(recorder)["s"]
    assert report.ok
    assert report.times is not None
    assert str(report.times) == "event 4 is timed before event 3"


def test_verify_log_verifies_past_a_time_edited_into_no_number_and_notes_it(
    log: tuple[SqliteRecorder, Path],
) -> None:
    recorder, path = log
    tamper(path, "UPDATE events SET at = 'noon' WHERE session = 's' AND seq = 3")
    report = verify_log(recorder)["s"]
    assert (report.ok, report.verified) == (True, SEQS)
    assert str(report.times) == "event 3 has no finite time"


def test_verify_log_notes_no_time_where_each_event_is_timed_as_or_after_the_one_before(
    log: tuple[SqliteRecorder, Path],
) -> None:
    recorder, path = log
    tamper(path, "UPDATE events SET at = 0.0 WHERE session = 's' AND seq <= 3")
    report = verify_log(recorder)["s"]
    assert report.ok
    assert report.times is None


def test_verify_log_of_named_sessions_looks_up_only_their_summaries(
    log: tuple[SqliteRecorder, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    recorder, path = log
    tamper(path, "DELETE FROM events WHERE session = 's' AND seq = 6")

    def every_summary() -> None:
        raise AssertionError("read every session's summary to verify one")

    monkeypatch.setattr(recorder, "sessions", every_summary)
    reports = verify_log(recorder, ["s", "t"])
    problem = reports["s"].problem
    assert problem is not None
    assert (problem.seq, problem.problem) == (6, Problem.MISSING)
    assert reports["t"].ok


def test_verify_log_of_a_session_the_log_does_not_hold_raises() -> None:
    """A mistyped name was reported ok, 0 events, as replay.verify refuses it."""
    recorder = MemoryRecorder()
    recorder.append([NewEvent("orders", 1, SessionStarted("m:app", "runtime", {}, True), 0.0)])
    with pytest.raises(UnknownSessionError, match="the log has no session 'ordrs'"):
        verify_log(recorder, ["orders", "ordrs"])


def test_verify_log_of_one_name_given_as_a_str_raises() -> None:
    """verify_log(recorder, "orders") verified sessions 'o', 'r', 'd', 'e' and 's': ok."""
    recorder = MemoryRecorder()
    recorder.append([NewEvent("orders", 1, SessionStarted("m:app", "runtime", {}, True), 0.0)])
    with pytest.raises(TypeError, match=r"^sessions: expected a sequence of session names"):
        verify_log(recorder, "orders")


@pytest.mark.parametrize(
    ("sessions", "anchors", "error"),
    [
        ([5], None, "sessions: expected strs, got int 5"),
        (None, ["orders"], "anchors: expected a mapping of session names to heads"),
        (None, {"orders": "1:ab12"}, "anchors['orders']: expected a Head(seq: int, chain: bytes)"),
        (None, {"orders": Head(1, "ab12")}, "anchors['orders']: expected a Head(seq: int,"),
    ],
)
def test_verify_log_refuses_names_and_anchors_of_the_wrong_shape(
    sessions: object, anchors: object, error: str
) -> None:
    """A head kept as text, `Head(1, "<hex>")`, was reported as a log changed since the
    anchor was taken: a false alarm of tampering. Others failed inside with AttributeError."""
    recorder = MemoryRecorder()
    recorder.append([NewEvent("orders", 1, SessionStarted("m:app", "runtime", {}, True), 0.0)])
    with pytest.raises(TypeError, match=re.escape(error)):
        verify_log(recorder, sessions, anchors=anchors)  # type: ignore[arg-type]


def test_verify_log_of_an_anchored_session_whose_events_are_gone_reports_them_missing() -> None:
    """An anchor says the session was there: its events were removed, not mistyped."""
    recorder = MemoryRecorder()
    recorder.append([NewEvent("s", 1, SessionStarted("m:app", "runtime", {}, True), 0.0)])
    head = recorder.head("s")
    assert head is not None
    report = verify_log(MemoryRecorder(), ["s"], anchors={"s": head})["s"]
    assert report.problem is not None
    assert report.problem.problem is Problem.MISSING

@pytest.mark.parametrize(
    ("edit", "seq", "says"),
    [
        ("events = 4", 5, "event 5 not as the summary says: the log's summary counts 4 events,"),
        ("app = 'evil:app'", 1, "event 1 not as the summary says: the log's summary says 'evil"),
        ("surface = 'web'", 1, "on 'web', the session's start 'm:app' on 'runtime'"),
    ],
    ids=["undercounted", "another-app", "another-surface"],
)
def test_a_summary_edited_against_its_verified_events_is_reported(
    log: tuple[SqliteRecorder, Path], edit: str, seq: int, says: str
) -> None:
    """The summary is not chained, but what it says can be checked against what is: replay
    would otherwise run the app an edited row names while --verify said all was well."""
    recorder, path = log
    tamper(path, f"UPDATE sessions SET {edit} WHERE name = 's'")
    reports = verify_log(recorder)
    problem = reports["s"].problem
    assert problem is not None
    assert (problem.seq, problem.problem) == (seq, Problem.NOT_SUMMARISED)
    assert says in str(problem)
    assert reports["t"].ok


@pytest.mark.parametrize(
    ("session", "edit", "says"),
    [
        ("s", "ended = 1, end_reason = 'end of input'",
         "says ended (end of input), never crashed, its events open, never crashed"),
        ("s", "crashed = 1", "says open, having crashed, its events open, never crashed"),
        ("e", "ended = 0", "says open, never crashed, its events ended (end of input),"),
        ("e", "end_reason = 'SIGTERM'", "says ended (SIGTERM), never crashed, its events ended"
         " (end of input)"),
        ("c", "crashed = 0", "says ended (crashed: KeyError), never crashed, its events ended"
         " (crashed: KeyError), having crashed"),
    ],
    ids=["open-said-ended", "said-crashed", "ended-said-open", "another-reason", "crash-hidden"],
)
def test_a_summary_edited_against_how_the_session_ended_is_reported(
    log: tuple[SqliteRecorder, Path], session: str, edit: str, says: str
) -> None:
    """`sessions` shows the row: a crash edited out of it, or an open session shown as
    ended, must not verify as all well."""
    recorder, path = log
    start = SessionStarted("m:app", "runtime", {}, True)
    recorder.append(
        [NewEvent("e", 1, start, 0.0), NewEvent("e", 2, SessionEnded("end of input"), 1.0)]
    )
    recorder.append(
        [NewEvent("c", 1, start, 0.0), NewEvent("c", 2, SessionCrashed("KeyError", "tb"), 1.0)]
    )
    assert all(report.ok for report in verify_log(recorder).values())
    tamper(path, f"UPDATE sessions SET {edit} WHERE name = '{session}'")
    reports = verify_log(recorder)
    problem = reports[session].problem
    assert problem is not None
    assert (problem.seq, problem.problem) == (
        recorder.head(session).seq,  # type: ignore[union-attr]
        Problem.NOT_SUMMARISED,
    )
    assert says in str(problem)
    assert sum(not report.ok for report in reports.values()) == 1


def test_a_session_whose_summary_row_was_deleted_is_reported(
    log: tuple[SqliteRecorder, Path],
) -> None:
    recorder, path = log
    tamper(path, "DELETE FROM sessions WHERE name = 's'")
    reports = verify_log(recorder, ["s"])
    problem = reports["s"].problem
    assert problem is not None
    assert (problem.seq, problem.problem) == (1, Problem.NOT_SUMMARISED)
    assert "the log's summary has no row for it" in str(problem)


def test_an_empty_session_verifies() -> None:
    report = verify_chain([])
    assert report.ok
    assert (report.session, report.verified, report.head) == (None, 0, None)


def test_one_session_at_a_time() -> None:
    recorder = MemoryRecorder()
    recorder.append([NewEvent(s, 1, ActionReceipt(1, 1, 1, False), 0.0) for s in ("a", "b")])
    with pytest.raises(ValueError, match="one session"):
        verify_chain([*recorder.read("a"), *recorder.read("b")])


def test_canonical_bytes_are_length_prefixed() -> None:
    assert canonical_bytes("ab", 1, "T", 2, b"xy") == (
        b"\x00\x00\x00\x02ab" + (1).to_bytes(8, "big") + b"\x00\x00\x00\x01T"
        + b"\x00\x00\x00\x02" + (2).to_bytes(8, "big") + b"xy"
    )
    import hashlib

    assert chain_step(GENESIS, "ab", 1, "T", 2, b"xy") == hashlib.sha256(
        GENESIS + canonical_bytes("ab", 1, "T", 2, b"xy")
    ).digest()
    assert canonical_bytes("a", 1, "bT", 2, b"") != canonical_bytes("ab", 1, "T", 2, b"")


def test_a_text_field_is_prefixed_with_its_length_in_utf8_bytes_not_characters() -> None:
    """SPEC's canonical bytes count UTF-8 bytes: counted in characters, a log of a session
    named café-… written before would fail verification as changed at event 1."""
    assert canonical_bytes("café", 1, "Tö", 1, b"") == (
        b"\x00\x00\x00\x05caf\xc3\xa9" + (1).to_bytes(8, "big") + b"\x00\x00\x00\x03T\xc3\xb6"
        + b"\x00\x00\x00\x01" + (0).to_bytes(8, "big")
    )
    assert chain_step(GENESIS, "café-session", 1, "SessionStarted", 1, b"\x80").hex() == (
        "f3a5e6570cc2592a89aa908b9eb1eeaeb5243b34a86fc410195d2d4c24fe5c1e"
    )
