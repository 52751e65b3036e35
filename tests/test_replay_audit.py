"""The audit, the integrity check against a tampered SQLite file, `sessions` and `read` from
the log, and password redaction in the stored bytes."""

from __future__ import annotations

import datetime
import json
import re
import shutil
import sqlite3
import sys
from pathlib import Path
from typing import Any

import attrs
import msgpack
import pytest
import trio

from semledger.actors import LogWriter, SessionActor
from semledger.eventlog import (
    GENESIS,
    ActionRejected,
    ActionRequested,
    Committed,
    MemoryRecorder,
    NewEvent,
    SemanticsTaken,
    SessionStarted,
    SessionSummary,
    SnapshotTaken,
    SqliteRecorder,
    chain_step,
)
from semledger.examples import gallery
from semledger.replay import UnreadableEventError, audit_report, reexecute, verify
from semledger.runtime import BySemanticId, Latest, Rejection, SemanticId, SetText
from semledger.runtime._wire import encode_read

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp
from tests_record import COUNTER, INCREMENT, record

SCRIPT = [
    INCREMENT,
    ("counter.step", {"kind": "set_text", "value": "2"}),
    INCREMENT,
    ("counter.nowhere", {"kind": "activate"}),  # target_not_found
    ("counter.value", {"kind": "activate"}),  # action_unavailable
    ("counter.reset", {"kind": "activate"}),
    ("counter.decrement", {"kind": "activate"}),  # target_disabled at 0
]


@pytest.fixture(scope="module")
def logged(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[int, Any]]:
    db = tmp_path_factory.mktemp("audit") / "log.db"
    _outcomes, fulls = record(db, "agent", COUNTER, SCRIPT)
    return db, fulls


def copy_of(db: Path, tmp_path: Path) -> Path:
    target = tmp_path / "copy.db"
    shutil.copy(db, target)
    return target


def test_audit_lists_every_perform_action_with_its_outcome_and_generations(
    logged: tuple[Path, dict[int, Any]],
) -> None:
    db, _fulls = logged
    done = mcp.cli_in_process("audit", "agent", "--db", str(db), "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["session"] == "agent"
    actions = out["actions"]
    assert [a["outcome"] for a in actions] == [
        "receipt",
        "receipt",
        "receipt",
        "target_not_found",
        "action_unavailable",
        "receipt",
        "target_disabled",
    ]
    for entry, (semantic_id, action) in zip(actions, SCRIPT, strict=True):
        assert entry["target"] == {"kind": "semantic_id", "id": semantic_id}
        assert entry["action"] == action
        assert entry["precondition"] == {"kind": "latest"}
        assert isinstance(entry["at"], float)
    first = actions[0]
    assert (first["generation"], first["before"], first["after"]) == ("1", "1", "2")
    assert actions[3]["details"] == {
        "target": {"kind": "semantic_id", "id": "counter.nowhere"},
        "message": "no node has that semantic id",
    }
    assert actions[3]["before"] is None
    assert actions[3]["generation"] == actions[2]["after"]
    assert [a["request_id"] for a in actions] == list(range(1, 8))
    assert out["incidents"] == []


def test_the_audit_says_under_its_table_why_each_rejected_call_was_rejected(
    logged: tuple[Path, dict[int, Any]],
) -> None:
    """The log held each rejection's message; the audit showed only its code."""
    db, _fulls = logged
    done = mcp.cli_in_process("audit", "agent", "--db", str(db), columns=200)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    start = lines.index("why the calls above were not carried out:")
    assert lines[start + 1 : -1] == [
        "  #4 target_not_found: no node has that semantic id",
        "  #5 action_unavailable: the target does not offer activate",
        "  #7 target_disabled: the target is disabled",
    ]
    assert lines[-1].startswith("the session ")  # how it ended, last


def test_verify_passes_on_an_untouched_log(logged: tuple[Path, dict[int, Any]]) -> None:
    db, _ = logged
    done = mcp.cli_in_process("audit", "agent", "--db", str(db), "--json", "--verify")
    assert done.returncode == 0, done.stderr
    conn = sqlite3.connect(db)
    (count,) = conn.execute("SELECT COUNT(*) FROM events WHERE session = 'agent'").fetchone()
    conn.close()
    with SqliteRecorder(db) as recorder:
        head = recorder.head("agent")
    assert head is not None
    assert json.loads(done.stdout)["verify"] == {
        "ok": True,
        "verified": count,
        "problem": None,
        "head": f"{count}:{head.chain.hex()}",
        "times": None,
    }
    table = mcp.cli_in_process("audit", "agent", "--db", str(db), "--verify")
    assert table.stdout.splitlines()[-2:] == [
        f"integrity chain: session 'agent': ok, {count} events",
        f"chain head (a later audit --anchor checks against it): {count}:{head.chain.hex()}",
    ]
    assert "event times" not in table.stdout


def tamper(db: Path, *statements: tuple[str, tuple[Any, ...]]) -> None:
    conn = sqlite3.connect(db)
    with conn:
        for sql, params in statements:
            conn.execute(sql, params)
    conn.close()


def verify_problem(db: Path) -> str:
    done = mcp.cli_in_process("audit", "agent", "--db", str(db), "--json", "--verify")
    assert done.returncode == 1, done.stdout + done.stderr
    problem = json.loads(done.stdout)["verify"]["problem"]
    assert isinstance(problem, str)
    return problem


def test_verify_names_an_event_whose_body_had_one_byte_changed(
    logged: tuple[Path, dict[int, Any]], tmp_path: Path
) -> None:
    db = copy_of(logged[0], tmp_path)
    conn = sqlite3.connect(db)
    seq, body = conn.execute(
        "SELECT seq, body FROM events WHERE session = 'agent' AND topic = 'ActionRequested'"
        " ORDER BY seq LIMIT 1 OFFSET 2"
    ).fetchone()
    conn.close()
    at = body.index(b"increment")
    changed = body[:at] + b"I" + body[at + 1 :]
    tamper(db, ("UPDATE events SET body = ? WHERE session = 'agent' AND seq = ?", (changed, seq)))
    assert verify_problem(db).startswith(f"event {seq} changed")


def test_verify_names_the_first_event_after_a_deleted_one(
    logged: tuple[Path, dict[int, Any]], tmp_path: Path
) -> None:
    db = copy_of(logged[0], tmp_path)
    tamper(db, ("DELETE FROM events WHERE session = 'agent' AND seq = 9", ()))
    assert verify_problem(db).startswith("event 9 missing")


def test_verify_names_a_deleted_last_event(
    logged: tuple[Path, dict[int, Any]], tmp_path: Path
) -> None:
    db = copy_of(logged[0], tmp_path)
    conn = sqlite3.connect(db)
    (last,) = conn.execute("SELECT MAX(seq) FROM events WHERE session = 'agent'").fetchone()
    conn.close()
    tamper(db, ("DELETE FROM events WHERE session = 'agent' AND seq = ?", (last,)))
    assert verify_problem(db).startswith(f"event {last} missing")


def test_verify_names_the_first_of_two_swapped_events(
    logged: tuple[Path, dict[int, Any]], tmp_path: Path
) -> None:
    db = copy_of(logged[0], tmp_path)
    move = "UPDATE events SET seq = ? WHERE session = 'agent' AND seq = ?"
    tamper(db, (move, (-1, 6)), (move, (6, 7)), (move, (7, -1)))
    assert verify_problem(db).startswith("event 6 out of order")


@pytest.mark.parametrize("seq", [0, -1, -(2**63)])
def test_verify_and_replay_name_a_row_labelled_below_seq_1(
    logged: tuple[Path, dict[int, Any]], tmp_path: Path, seq: int
) -> None:
    """A copy of an event inserted below seq 1: seq 0 was named, a negative seq read past
    (`audit --verify` said ok, replay was identical), since reads started at seq 0; then
    replay named it "missing: the session's events start at event -1"."""
    db = copy_of(logged[0], tmp_path)
    copy = (
        "INSERT INTO events SELECT session, ?, topic, version, at, body, chain FROM events"
        " WHERE session = 'agent' AND seq = 4"
    )
    tamper(db, (copy, (seq,)))
    assert verify_problem(db) == (
        "event 1 out of order: it is further on, in the record labelled seq 1; the record in"
        f" its place is labelled seq {seq}"
    )
    done = mcp.cli_in_process("replay", "agent", "--db", str(db))
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"event 1: the record in its place is labelled seq {seq}\n" in done.stderr


def test_an_event_repeated_in_a_table_without_its_primary_key_is_said_to_appear_twice(
    logged: tuple[Path, dict[int, Any]], tmp_path: Path
) -> None:
    """Event 7 was named out of order (`--verify`) or missing, "the session's events go
    from event 6 to event 6" (audit, replay): events 6 and 7 are intact, 6 is there twice."""
    db = copy_of(logged[0], tmp_path)
    tamper(
        db,
        ("CREATE TABLE copy AS SELECT * FROM events", ()),
        ("DROP TABLE events", ()),
        ("ALTER TABLE copy RENAME TO events", ()),
        ("INSERT INTO events SELECT * FROM events WHERE session = 'agent' AND seq = 6", ()),
    )
    assert verify_problem(db) == "event 6 appears twice: the record after it is a copy of it"
    said = "a second record labelled seq 6 follows it"
    audit = mcp.cli_in_process("audit", "agent", "--db", str(db))
    assert audit.returncode == 1, audit.stdout + audit.stderr
    assert f"event 6 of session 'agent' appears twice: {said}\n" in audit.stderr
    for command in ("replay", "read"):
        done = mcp.cli_in_process(command, "agent", "--db", str(db))
        assert done.returncode == 1, done.stdout + done.stderr
        assert f"session 'agent', event 6: it appears twice: {said}\n" in done.stderr, command


def test_a_log_of_version_1_whose_deltas_name_generations_as_ints_audits_clean(
    tmp_path: Path,
) -> None:
    """Its deltas say `"from": 0, "to": 1`: the check of a commit's delta against its
    generation called it damaged, "says generation 1, its delta makes 1"."""
    db = tmp_path / "v1.db"
    shutil.copy(Path(__file__).parent / "fixtures" / "eventlog_v1.db", db)
    with SqliteRecorder(db) as recorder:
        for summary in recorder.sessions():
            audit_report(recorder, summary.name)  # raises for damage


@pytest.mark.parametrize(
    "forged", ["an old commit again", "a delta to another generation", "a delta from another"]
)
def test_a_log_rewritten_with_a_commit_out_of_turn_and_its_chain_recomputed_is_damage(
    logged: tuple[Path, dict[int, Any]], forged: str
) -> None:
    """Its chain whole, `audit --verify` said ok and listed generations going back (4 -> 5,
    then 3 -> 4) without a word, or a commit whose delta made another generation than it
    said, which `read` called damage; only an anchor, or a replay, told."""
    with SqliteRecorder.to_inspect(str(logged[0])) as recorder:
        stored = list(recorder.events("agent"))
    commits = [(r, e) for r, e in stored if isinstance(e, Committed)]
    assert len(commits) >= 3
    last = commits[-1][1]
    if forged == "an old commit again":  # logged again before the session's end
        *before_end, end = stored
        events = [e for _r, e in before_end] + [commits[0][1], end[1]]
        at, says = len(stored), f"commits generation 1 after generation {last.generation}"
    elif forged == "a delta to another generation":
        made = str(last.generation + 2)
        moved = {**last.delta, "to": made}
        events = [attrs.evolve(e, delta=moved) if e is last else e for _r, e in stored]
        at, says = commits[-1][0].seq, f"says generation {last.generation}, its delta makes {made}"
    else:
        since = str(last.generation - 2)
        moved = {**last.delta, "from": since}
        events = [attrs.evolve(e, delta=moved) if e is last else e for _r, e in stored]
        at = commits[-1][0].seq
        says = f"has a delta from generation {since}, after generation {last.generation - 1}"
    rewritten = MemoryRecorder()
    rewritten.append([NewEvent("agent", n, e, 0.0) for n, e in enumerate(events, 1)])
    assert verify(rewritten, "agent").ok
    with pytest.raises(UnreadableEventError) as raised:
        audit_report(rewritten, "agent")
    assert [(d.seq, d.what) for d in raised.value.damage] == [(at, says)]


@pytest.mark.parametrize(
    ("named", "says"),
    [
        (9, "answers request #9, which no event before it made"),
        (1, "answers request #1 again: event {first} answered it"),
    ],
    ids=["never requested", "answered already"],
)
def test_an_answer_to_no_request_awaiting_one_is_damage_the_audit_names(
    logged: tuple[Path, dict[int, Any]], tmp_path: Path, named: int, says: str
) -> None:
    """A receipt re-encoded to name another request (its body still decodes) left request
    #2 `unanswered` in a session that ended normally, said nothing of the receipt, exit 0."""
    db = copy_of(logged[0], tmp_path)
    conn = sqlite3.connect(db)
    rows = conn.execute(
        "SELECT seq, body FROM events WHERE session = 'agent' AND topic = 'ActionReceipt'"
    ).fetchall()
    conn.close()
    receipts = {msgpack.unpackb(body)["request_id"]: (seq, body) for seq, body in rows}
    seq, body = receipts[2]
    edited = {**msgpack.unpackb(body), "request_id": named}
    update = "UPDATE events SET body = ? WHERE session = 'agent' AND seq = ?"
    tamper(db, (update, (msgpack.packb(edited), seq)))
    done = mcp.cli_in_process("audit", "agent", "--db", str(db), "--json")
    assert done.returncode == 1, done.stdout + done.stderr
    out = json.loads(done.stdout)
    expected = f"event {seq} of session 'agent' " + says.format(first=receipts[1][0])
    assert out["unreadable"] == expected
    assert done.stderr == f"semledger: the log {db} is damaged: {expected}\n"
    assert [a["request_id"] for a in out["actions"]] == list(range(1, 8))  # the rest listed


def cut_tail_and_fix_summary(db: Path) -> None:
    tamper(
        db,
        (
            "DELETE FROM events WHERE session = 'agent'"
            " AND seq > (SELECT MAX(seq) - 2 FROM events WHERE session = 'agent')",
            (),
        ),
        (
            "UPDATE sessions SET events = events - 2, ended = 0, end_reason = NULL"
            " WHERE name = 'agent'",
            (),
        ),
    )


def rewrite_an_action_and_recompute_the_chain(db: Path) -> None:
    with SqliteRecorder(db) as recorder:
        records = list(recorder.read("agent"))
    forged = next(r for r in records if b"increment" in r.body)
    previous = GENESIS if forged.seq == 1 else records[forged.seq - 2].chain
    updates = []
    for stored in records[forged.seq - 1 :]:
        body = stored.body.replace(b"increment", b"decrement") if stored is forged else stored.body
        previous = chain_step(
            previous, stored.session, stored.seq, stored.topic, stored.version, body
        )
        updates.append(
            (
                "UPDATE events SET body = ?, chain = ? WHERE session = 'agent' AND seq = ?",
                (body, previous, stored.seq),
            )
        )
    tamper(db, *updates)


@pytest.mark.parametrize(
    ("forge", "problem"),
    [
        (cut_tail_and_fix_summary, "missing: the log ends before the anchor seq"),
        (
            rewrite_an_action_and_recompute_the_chain,
            "events verifies, but does not lead to the anchor's head at event",
        ),
    ],
    ids=["tail cut, summary fixed", "chain recomputed"],
)
def test_an_anchor_from_an_earlier_audit_catches_what_verify_alone_cannot(
    logged: tuple[Path, dict[int, Any]], tmp_path: Path, forge: Any, problem: str
) -> None:
    db = copy_of(logged[0], tmp_path)
    earlier = mcp.cli_in_process("audit", "agent", "--db", str(db), "--verify", "--json")
    anchor = json.loads(earlier.stdout)["verify"]["head"]
    forge(db)
    assert mcp.cli_in_process("audit", "agent", "--db", str(db), "--verify").returncode == 0
    done = mcp.cli_in_process("audit", "agent", "--db", str(db), "--anchor", anchor, "--json")
    assert done.returncode == 1, done.stdout + done.stderr
    verdict = json.loads(done.stdout)["verify"]
    assert problem in verdict["problem"]
    assert verdict["head"] is None


UNCHAINED_TIMES = (
    "times are not covered by the chain, so they may have been edited or the clock set back"
)


@pytest.mark.parametrize(
    ("at", "said"),
    [
        ("at - 400 * 86400", "is timed before event 3"),
        ("-1e20", "is timed before event 3"),
        ("0", "is timed before event 3"),
        ("1e999", "has no finite time"),
        ("-1e999", "has no finite time"),
    ],
    ids=["400 days back", "-1e20", "0", "inf", "-inf"],
)
def test_verify_and_an_anchor_warn_of_an_event_whose_time_is_impossible(
    logged: tuple[Path, dict[int, Any]], tmp_path: Path, at: str, said: str
) -> None:
    """An action timed before its own session started, or at no finite time, verified as
    a bare "ok": the chain does not cover times. The verdict stays ok; a line warns."""
    db = copy_of(logged[0], tmp_path)
    earlier = mcp.cli_in_process("audit", "agent", "--db", str(db), "--verify", "--json")
    anchor = json.loads(earlier.stdout)["verify"]["head"]
    tamper(db, (f"UPDATE events SET at = {at} WHERE session = 'agent' AND seq = 4", ()))
    warning = f"event times: session 'agent': event 4 {said}; {UNCHAINED_TIMES}"
    head_line = f"chain head (a later audit --anchor checks against it): {anchor}"
    for check in (["--verify"], ["--anchor", anchor]):
        done = mcp.cli_in_process("audit", "agent", "--db", str(db), *check)
        assert done.returncode == 0, (check, done.stdout, done.stderr)
        verdict, line, head = done.stdout.splitlines()[-3:]
        assert verdict.startswith("integrity chain: session 'agent': ok, "), check
        assert (line, head) == (warning, head_line), check
        as_json = mcp.cli_in_process("audit", "agent", "--db", str(db), *check, "--json")
        verified = json.loads(as_json.stdout)
        assert (verified["verify"]["ok"], verified["verify"]["times"]) == (True, 4), check


def test_the_chain_head_is_printed_whole_on_a_colour_terminal(
    logged: tuple[Path, dict[int, Any]],
) -> None:
    """Highlighting took its leading ``40:4b97`` for a time and coloured it apart: the
    anchor to copy was split by escape codes."""
    as_json = mcp.cli_in_process("audit", "agent", "--db", str(logged[0]), "--verify", "--json")
    anchor = json.loads(as_json.stdout)["verify"]["head"]
    done = mcp.cli("audit", "agent", "--db", str(logged[0]), "--verify", FORCE_COLOR="1")
    assert done.returncode == 0, done.stderr
    assert f"chain head (a later audit --anchor checks against it): {anchor}\n" in done.stdout


def test_a_mistyped_anchor_is_not_told_as_proof_of_a_rewrite(
    logged: tuple[Path, dict[int, Any]],
) -> None:
    """The verdict said only that an event was rewritten and the chain recomputed."""
    db, _ = logged
    earlier = mcp.cli_in_process("audit", "agent", "--db", str(db), "--verify", "--json")
    anchor = json.loads(earlier.stdout)["verify"]["head"]
    mistyped = anchor[:-1] + ("0" if anchor[-1] != "0" else "1")
    done = mcp.cli_in_process("audit", "agent", "--db", str(db), "--anchor", mistyped, "--json")
    assert done.returncode == 1
    assert json.loads(done.stdout)["verify"]["problem"].endswith(
        "or the anchor is not this session's (mistyped, or another session's or log's)"
    )


def test_a_verdict_that_reaches_the_anchor_says_so(logged: tuple[Path, dict[int, Any]]) -> None:
    """It read "ok, N events", as a plain --verify does: nothing said the anchor was met."""
    db, _ = logged
    with SqliteRecorder(db) as recorder:
        records = list(recorder.read("agent"))
    for at in (3, len(records)):
        anchor = f"{at}:{records[at - 1].chain.hex()}"
        done = mcp.cli_in_process("audit", "agent", "--db", str(db), "--anchor", anchor)
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stdout.splitlines()[-2] == (
            f"integrity chain: session 'agent': ok, {len(records)} events, through the anchor"
            f" at event {at}"
        )


def _append_a_start(recorder: Any, session: str) -> None:
    head = recorder.head(session)
    start = SessionStarted(COUNTER, "runtime", {}, True)
    recorder.append([NewEvent(session, head.seq + 1, start, 0.0)])


class _WrittenAfterItsSummary(MemoryRecorder):
    """A server appends to the session just after its summary is read."""

    def summary(self, session: str) -> SessionSummary | None:
        found = super().summary(session)
        _append_a_start(self, session)
        return found


class _SqliteWrittenAfterItsSummary(SqliteRecorder):
    def summary(self, session: str) -> SessionSummary | None:
        found = super().summary(session)
        _append_a_start(self, session)
        return found


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_verify_of_a_session_being_written_reads_its_summary_and_events_at_one_moment(
    logged: tuple[Path, dict[int, Any]], tmp_path: Path, kind: str
) -> None:
    """Between the summary's read and the events' read a server appends: what verify sees
    is still one moment of a healthy log, not a summary that disagrees with its events."""
    db = copy_of(logged[0], tmp_path)
    recorder: MemoryRecorder | SqliteRecorder
    if kind == "memory":
        recorder = _WrittenAfterItsSummary()
        with SqliteRecorder(db) as source:
            records = [NewEvent("agent", r.seq, e, r.at) for r, e in source.events("agent")]
        recorder.append(records)
    else:
        recorder = _SqliteWrittenAfterItsSummary(db)
    try:
        count = len(list(recorder.read("agent")))
        report = verify(recorder, "agent")
        assert (report.ok, report.verified) == (True, count), report
        assert verify(recorder, "agent").verified == count + 1
    finally:
        recorder.close()


@pytest.mark.parametrize("seq", ["last", "first"])
def test_a_wrong_anchor_on_an_intact_log_says_the_chain_verifies_but_not_to_the_anchor(
    logged: tuple[Path, dict[int, Any]], seq: str
) -> None:
    """It said "event N changed ... (after 0 verified events)": neither is known, and the
    chain of every event verifies."""
    db, _ = logged
    earlier = mcp.cli_in_process("audit", "agent", "--db", str(db), "--verify", "--json")
    head = json.loads(earlier.stdout)["verify"]["head"]
    count = int(head.split(":")[0])
    at = count if seq == "last" else 1
    anchor = f"{at}:{'00' * 32}"
    expected = (
        f"event {at} not as the anchor says: the chain of its {count} events verifies, but does"
        f" not lead to the anchor's head at event {at}: either the log was changed after the"
        f" anchor was taken (an event up to {at} rewritten and the chain recomputed), or the"
        " anchor is not this session's (mistyped, or another session's or log's)"
    )
    done = mcp.cli_in_process("audit", "agent", "--db", str(db), "--anchor", anchor, columns=1000)
    assert done.returncode == 1
    assert done.stdout.splitlines()[-1] == f"integrity chain: session 'agent': {expected}"
    as_json = mcp.cli_in_process("audit", "agent", "--db", str(db), "--anchor", anchor, "--json")
    assert as_json.returncode == 1
    verdict = json.loads(as_json.stdout)["verify"]
    assert verdict == {
        "ok": False,
        "verified": count,
        "problem": expected,
        "head": None,
        "times": None,
    }


@pytest.mark.parametrize(
    "anchor",
    ["12", "x:ab", "0:" + "00" * 32, "3:abcd", "", " 3:" + "00" * 32, "3:" + "00" * 32 + " ",
     "3:" + "00 " * 32, "3: " + "00" * 32, "+3:" + "00" * 32],
)
def test_an_anchor_that_is_no_chain_head_is_a_usage_error(
    logged: tuple[Path, dict[int, Any]], anchor: str
) -> None:
    # One case as a child: a usage error's exit status from a real process.
    run = mcp.cli if anchor == "12" else mcp.cli_in_process
    done = run("audit", "agent", "--db", str(logged[0]), "--anchor", anchor)
    assert done.returncode == 2
    assert "--anchor" in done.stderr
    assert "expected SEQ:HEX" in done.stderr


@pytest.mark.parametrize(
    ("anchor", "wrong"),
    [
        ("0:" + "00" * 32, "its SEQ is 0: events are numbered from 1"),
        ("3:" + "0" * 63, "its HEX has 63 digits, not the 64 of a chain value"),
        ("3:" + "0" * 65, "its HEX has 65 digits, not the 64 of a chain value"),
        ("3:" + "0" * 63 + "g", "its HEX holds 'g', which is no hex digit"),
        ("x:" + "00" * 32, "its SEQ 'x' is no whole number"),
        ("12", "it has no ':' between SEQ and HEX"),
    ],
    ids=["seq-0", "63-digits", "65-digits", "not-hex", "seq-not-a-number", "no-colon"],
)
def test_an_anchor_that_is_no_chain_head_is_refused_saying_what_is_wrong_with_it(
    logged: tuple[Path, dict[int, Any]], anchor: str, wrong: str
) -> None:
    """Each was answered `expected SEQ:HEX` alone: a seq of 0, or a hash a digit short,
    reads as that."""
    done = mcp.cli_in_process("audit", "agent", "--db", str(logged[0]), "--anchor", anchor)
    assert done.returncode == 2
    assert f"--anchor: {anchor!r}: {wrong}; expected SEQ:HEX" in done.stderr, done.stderr
    assert "SEQ an event number from 1, HEX the 64 hex digits of its chain" in done.stderr


def test_sessions_lists_each_session_as_json(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    record(db, "one", COUNTER, [INCREMENT])
    record(db, "two", "tests_crashy:app", [INCREMENT] * 3)
    done = mcp.cli_in_process("sessions", "--db", str(db), "--json")
    assert done.returncode == 0, done.stderr
    listed = {s["name"]: s for s in json.loads(done.stdout)}
    assert sorted(listed) == ["one", "two"]
    assert (listed["one"]["app"], listed["one"]["surface"]) == (COUNTER, "runtime")
    assert (listed["one"]["ended"], listed["one"]["crashed"]) == (True, False)
    assert listed["two"]["crashed"] is True
    assert listed["one"]["events"] == 6  # started, commit, request, commit, receipt, ended
    assert listed["one"]["end_reason"] == "script over"  # what the recording closed with
    assert listed["two"]["end_reason"].startswith("crashed: ")
    table = mcp.cli_in_process("sessions", "--db", str(db), columns=200)
    assert "ended for now: script over" in table.stdout
    assert listed["two"]["end_reason"] in table.stdout


def test_sessions_tells_a_session_being_served_from_one_whose_server_was_killed(
    tmp_path: Path,
) -> None:
    """Both were "open" forever: a killed server writes no end."""
    db = tmp_path / "log.db"
    server = mcp.start(COUNTER, db, "k")
    try:
        assert server.stdin is not None
        assert server.stdout is not None
        server.stdin.write(mcp.initialize() + mcp.perform(1, "counter.increment"))
        server.stdin.flush()
        for line in server.stdout:  # until the action's answer: the session is under way
            if json.loads(line).get("id") == 1:
                break
        [live] = json.loads(mcp.cli_in_process("sessions", "--db", str(db), "--json").stdout)
        assert (live["ended"], live["served"]) == (False, True)
        assert "│ open " in mcp.cli_in_process("sessions", "--db", str(db), columns=200).stdout
    finally:
        server.kill()
        server.wait(timeout=30)
    [dead] = json.loads(mcp.cli_in_process("sessions", "--db", str(db), "--json").stdout)
    assert (dead["ended"], dead["served"]) == (False, False)
    table = mcp.cli_in_process("sessions", "--db", str(db), columns=200)
    assert "│ open, not served " in table.stdout


def test_read_from_the_log_at_a_generation_equals_the_live_full_read(
    logged: tuple[Path, dict[int, Any]],
) -> None:
    db, fulls = logged
    assert len(fulls) >= 4
    for generation, full in fulls.items():
        done = mcp.cli_in_process(
            "read", "agent", "--db", str(db), "--generation", str(generation), "--json"
        )
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == encode_read(full)
    latest = mcp.cli_in_process("read", "agent", "--db", str(db), "--json")
    assert json.loads(latest.stdout) == encode_read(fulls[max(fulls)])


SECRET = "correct-horse-battery-7"
MISADDRESSED = "tr0ub4dor-and-3"


def stored_bytes(db: Path) -> bytes:
    return b"".join(p.read_bytes() for p in db.parent.glob(db.name + "*") if p.is_file())


@pytest.mark.parametrize("log_passwords", [False, True])
def test_passwords_typed_into_the_gallery_are_redacted_in_the_log(
    tmp_path: Path, log_passwords: bool
) -> None:
    db = tmp_path / "log.db"
    answers = mcp.serve(
        "semledger.examples.gallery:app",
        db,
        "g",
        [
            mcp.perform(1, "gallery.username", "set_text", value="ada-lovelace"),
            mcp.perform(2, "gallery.password", "set_text", value=SECRET),
            mcp.perform(3, "gallery.sign_in"),
            mcp.perform(4, "gallery.pasword", "set_text", value=MISADDRESSED),
        ],
        *(["--log-passwords"] if log_passwords else []),
    )
    assert all(answers[i]["ok"] for i in (1, 2, 3)), answers
    assert answers[4]["error"]["code"] == "target_not_found", answers[4]
    raw = stored_bytes(db)
    assert b"ada-lovelace" in raw
    assert (SECRET.encode() in raw) is log_passwords
    # A target that names no node may have been meant for the password field.
    assert (MISADDRESSED.encode() in raw) is log_passwords
    audit = mcp.cli_in_process("audit", "g", "--db", str(db), "--json")
    entries = json.loads(audit.stdout)["actions"]
    redacted = not log_passwords
    assert [e["redacted"] for e in entries] == [False, redacted, False, redacted]
    replayed = mcp.cli_in_process("replay", "g", "--db", str(db))
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr


@pytest.mark.parametrize("redact", [True, False])
def test_a_redacted_password_stays_out_of_the_recovery_checkpoints_and_recovery_still_works(
    tmp_path: Path, redact: bool
) -> None:
    """The live model holds what was typed; a checkpoint encodes the model. Checkpoints stop
    once a password was redacted, unless the operator opted in to logging passwords."""
    db = tmp_path / "log.db"
    password = BySemanticId(SemanticId("gallery.password"))
    username = BySemanticId(SemanticId("gallery.username"))

    async def session(first_run: bool) -> tuple[int, bool]:
        with SqliteRecorder(db) as recorder:
            async with trio.open_nursery() as nursery:
                writer: LogWriter = await nursery.start(LogWriter(recorder).run)
                actor = SessionActor(
                    "g",
                    gallery.app,
                    "semledger.examples.gallery:app",
                    writer,
                    recorder,
                    redact_passwords=redact,
                    checkpoint_every=1,
                )
                await nursery.start(actor.run)
                if first_run:
                    await actor.perform_action(username, SetText("ada-lovelace"), Latest())
                    await actor.perform_action(password, SetText(SECRET), Latest())
                name = "ada" if first_run else "ada-byron"
                await actor.perform_action(username, SetText(name), Latest())
                generation, recovered = actor.core.runtime.generation, actor.recovered
                nursery.cancel_scope.cancel()  # gone without ending: recoverable
        return generation, recovered

    before, _ = trio.run(session, True)
    assert (SECRET.encode() in stored_bytes(db)) is not redact
    after, recovered = trio.run(session, False)
    assert recovered
    assert after == before + 1
    assert (SECRET.encode() in stored_bytes(db)) is not redact
    with SqliteRecorder(db) as recorder:
        events = [e for _r, e in recorder.events("g")]
    checkpoints = [e for e in events if isinstance(e, SnapshotTaken)]
    # Read checkpoints hold only the committed semantics, which show bullets: each run's
    # first is logged either way. With redaction the second run resumes one input past its
    # last checkpoint, which is due then (every input here), so it checkpoints as it resumes.
    assert [e.generation for e in events if isinstance(e, SemanticsTaken)] == [
        before - 2,
        before if redact else before + 1,
    ]
    # One before the password; without redaction, after each input; once recovered, again.
    assert [c.generation for c in checkpoints] == (
        [before - 2, before, before + 1]
        if redact
        else [before - 2, before - 1, before, before + 1]
    )


async def _secret_typed_at(missed: list[str], **options: Any) -> MemoryRecorder:
    """A gallery session where the secret is typed at each of `missed` (each refused), then
    ``ada`` into the username field."""
    recorder = MemoryRecorder()
    async with trio.open_nursery() as nursery:
        writer: LogWriter = await nursery.start(LogWriter(recorder).run)
        actor = SessionActor(
            "g", gallery.app, "semledger.examples.gallery:app", writer, recorder, **options
        )
        async with trio.open_nursery() as sessions:
            await sessions.start(actor.run)
            for semantic_id in missed:
                target = BySemanticId(SemanticId(semantic_id))
                refused = await actor.perform_action(target, SetText(SECRET), Latest())
                assert isinstance(refused, Rejection)
            username = BySemanticId(SemanticId("gallery.username"))
            await actor.perform_action(username, SetText("ada"), Latest())
            actor.close()
        writer.close()
    return recorder


async def test_a_password_sent_to_a_mistyped_id_is_redacted_and_recovery_checkpoints_go_on(
) -> None:
    """It never reached the application, so the model cannot hold it."""
    recorder = await _secret_typed_at(["gallery.pasword"], checkpoint_every=1)
    events = [e for _r, e in recorder.events("g")]
    assert SECRET not in repr(events)
    assert sum(isinstance(e, SnapshotTaken) for e in events) == 2


async def test_a_password_typed_at_a_node_that_takes_no_text_is_redacted_and_replays() -> None:
    """Sent to the password's label beside its field, or to the form, it was refused
    action_unavailable and logged in clear. Text a field does take is logged as typed."""
    recorder = await _secret_typed_at(["gallery.password.label", "gallery.form"])
    events = [e for _r, e in recorder.events("g")]
    assert SECRET not in repr(events)
    typed = [e for e in events if isinstance(e, ActionRequested)]
    assert [e.redacted for e in typed] == [True, True, False]
    assert typed[-1].action == {"kind": "set_text", "value": "ada"}
    rejected = [e for e in events if isinstance(e, ActionRejected)]
    assert [e.code for e in rejected] == ["action_unavailable", "action_unavailable"]
    report = reexecute(recorder, "g", gallery.app)
    assert report.ok, report.divergence


def test_verify_names_an_event_whose_changed_body_no_longer_decodes(
    logged: tuple[Path, dict[int, Any]], tmp_path: Path
) -> None:
    db = copy_of(logged[0], tmp_path)
    conn = sqlite3.connect(db)
    (body,) = conn.execute("SELECT body FROM events WHERE session = 'agent' AND seq = 5").fetchone()
    conn.close()
    broken = b"\xc1" + body[1:]  # 0xc1 is never valid msgpack
    tamper(db, ("UPDATE events SET body = ? WHERE session = 'agent' AND seq = 5", (broken,)))
    assert verify_problem(db).startswith("event 5 changed")


def test_the_audit_table_gives_utc_times_with_the_date_wherever_it_changes() -> None:
    from rich.console import Console

    from semledger._render import audit_table
    from semledger.replay import AuditEntry

    def entry(request_id: int, at: str) -> AuditEntry:
        when = datetime.datetime.fromisoformat(at).replace(tzinfo=datetime.UTC).timestamp()
        target = {"kind": "semantic_id", "id": "counter.increment"}
        return AuditEntry(
            request_id, request_id, when, target, {"kind": "activate"}, {"kind": "latest"},
            1, "receipt", 1, 2, False,
        )  # fmt: skip

    console = Console(record=True, width=200)
    console.print(audit_table("s", [
        entry(1, "2026-12-01 23:59:58"), entry(2, "2026-12-01 23:59:59"),
        entry(3, "2026-12-02 00:00:01"),
    ]))  # fmt: skip
    text = console.export_text()
    assert "time (UTC)" in text
    rows = [line for line in text.splitlines() if "counter.increment" in line]
    assert ["2026-12-01 23:59:58" in rows[0], "2026-12-01" in rows[1]] == [True, False]
    assert "23:59:59" in rows[1]
    assert "2026-12-02 00:00:01" in rows[2]


def test_an_audit_table_too_wide_for_the_terminal_shows_each_date_above_its_time() -> None:
    from rich.console import Console

    from semledger._render import audit_table
    from semledger.replay import AuditEntry

    when = datetime.datetime(2026, 12, 1, 23, 59, 58, tzinfo=datetime.UTC).timestamp()
    typed = {"kind": "set_text", "value": "a long line of text typed into the field"}
    entry = AuditEntry(
        1, 3, when, {"kind": "semantic_id", "id": "todo.new"}, typed, {"kind": "latest"},
        1, "receipt", 1, 2, False,
    )  # fmt: skip
    console = Console(record=True, width=80)
    console.print(audit_table("s", [entry], width=80))
    lines = console.export_text().splitlines()
    first = next(i for i, line in enumerate(lines) if "todo.new" in line)
    assert "│ 2026-12-01 │" in lines[first]
    assert "│ 23:59:58   │" in lines[first + 1]
    assert max(map(len, lines)) <= 80
    wide = Console(record=True, width=200)
    wide.print(audit_table("s", [entry], width=200))
    assert "2026-12-01 23:59:58" in wide.export_text()


def test_the_audit_table_shows_a_long_typed_value_cut_and_its_length() -> None:
    """A pasted document is one row, not pages of folded text; --json keeps it whole."""
    from rich.console import Console

    from semledger._render import audit_table
    from semledger.replay import AuditEntry

    typed = {"kind": "set_text", "value": "x" * 2_000_000}
    entry = AuditEntry(
        1, 3, 0.0, {"kind": "semantic_id", "id": "todo.new"}, typed, {"kind": "latest"},
        1, "receipt", 1, 2, False,
    )  # fmt: skip
    console = Console(record=True, width=400)
    console.print(audit_table("s", [entry], width=400))
    [row] = [line for line in console.export_text().splitlines() if "todo.new" in line]
    assert "set_text(value='" + "x" * 79 + "… (2,000,000 characters; --json has it whole))" in row


@pytest.mark.parametrize(
    ("precondition", "cell"),
    [
        ({"kind": "latest"}, "latest"),
        ({"kind": "exact", "generation": "7"}, "exact 7"),
        ({"kind": "exact"}, '{"kind":"exact"}'),
        ({"kind": "exact", "generation": 7}, '{"kind":"exact","generation":7}'),
        ({"kind": "latest", "generation": "7"}, '{"kind":"latest","generation":"7"}'),
    ],
)
def test_the_audit_table_shows_a_precondition_of_no_known_shape_as_it_was_sent(
    precondition: dict[str, Any], cell: str
) -> None:
    """A refused call's precondition: `exact` with no generation was shown as `exact None`."""
    from semledger._render import audit_lines
    from semledger.replay import AuditEntry

    entry = AuditEntry(
        None, 3, 0.0, {"kind": "semantic_id", "id": "a"}, {"kind": "activate"}, precondition,
        1, "invalid_arguments",
    )  # fmt: skip
    *_, row = audit_lines("s", [entry])
    assert f"  {cell}  " in row


@pytest.mark.parametrize(
    ("target", "action", "cell"),
    [
        ({"kind": "semantic_id", "id": "a"}, {"kind": "\x1b[1A\x1b[2K"}, r"'\x1b[1A\x1b[2K'"),
        (
            {"kind": "semantic_id", "id": "a"},
            {"kind": "activate", "K\x1b[31m": 1},
            r"activate('K\x1b[31m'=1)",
        ),
        (
            {"kind": "node_id", "id": "N\x1b]0;owned\x07"},
            {"kind": "activate"},
            r"node 'N\x1b]0;owned\x07'",
        ),
    ],
)
def test_an_action_kind_a_field_name_or_a_node_id_sent_with_escapes_is_shown_escaped(
    target: dict[str, Any], action: dict[str, Any], cell: str
) -> None:
    """A refused call's action kind, action field names and node-id target reached every
    layout of the audit as sent: an agent could move the cursor and erase rows above."""
    import io

    from rich.console import Console

    from semledger._render import audit_lines, audit_records, audit_table
    from semledger.replay import AuditEntry

    entry = AuditEntry(None, 3, 0.0, target, action, {"kind": "latest"}, 1, "invalid_arguments")
    out = io.StringIO()
    Console(file=out, width=300, markup=False).print(audit_table("s", [entry], width=300))
    layouts = {
        "table": out.getvalue(),
        "narrow": "\n".join(audit_records("s", [entry])),
        "plain": "\n".join(audit_lines("s", [entry])),
    }
    for layout, text in layouts.items():
        assert not {"\x1b", "\x07"} & set(text), layout
        assert cell in text, layout


def test_an_audit_too_wide_for_the_terminal_prints_each_call_on_two_unfolded_lines(
    logged: tuple[Path, dict[int, Any]],
) -> None:
    """At 80 columns and less the table folded ids and actions mid-word into columns a few
    cells wide (`todo.inp` / `ut`), its headers letter by letter."""
    db, _ = logged
    done = mcp.cli_in_process("audit", "agent", "--db", str(db), columns=60)
    assert done.returncode == 0, done.stderr
    title, first, first_call, second, second_call, *_ = done.stdout.splitlines()
    assert title == "perform_action in session agent"
    assert re.fullmatch(r"#1  event 3  \d{4}-\d\d-\d\d \d\d:\d\d:\d\d  receipt  1 → 2", first)
    assert first_call == "    counter.increment  activate  latest"
    assert re.fullmatch(r"#2  event 6  \d\d:\d\d:\d\d  receipt  2 → 3", second)
    assert second_call == "    counter.step  set_text(value='2')  latest"
    assert "┃" not in done.stdout
    wide = mcp.cli_in_process("audit", "agent", "--db", str(db), columns=200)
    assert "┃ precondition ┃" in wide.stdout


def test_an_anchor_that_is_not_a_head_is_refused_naming_it(
    logged: tuple[Path, dict[int, Any]],
) -> None:
    """A (seq, chain) pair failed inside the check as "'tuple' object has no attribute"."""
    db, _ = logged
    refused = r"^anchor: expected a Head \(a report's head\), got tuple"
    with SqliteRecorder(db) as recorder, pytest.raises(TypeError, match=refused):
        verify(recorder, "agent", anchor=(3, "ab"))  # type: ignore[arg-type]


def test_each_row_of_the_text_audit_names_its_event_so_that_it_is_matched_to_its_agent(
    tmp_path: Path,
) -> None:
    """The agents were listed with their events, the rows by request number and time to the
    second: once a session had two connections, which agent made a row could not be told."""
    db = tmp_path / "log.db"
    for request_id in (1, 2):  # the second resumes the session: another connection
        mcp.serve(COUNTER, db, "s", [mcp.perform(request_id, "counter.increment")])
    audit = mcp.cli_in_process("audit", "s", "--db", str(db), "--json")
    actions = json.loads(audit.stdout)["actions"]
    first, second = (a["seq"] for a in actions)
    shown = mcp.cli_in_process("audit", "s", "--db", str(db), columns=200).stdout.splitlines()
    connected = [int(re.findall(r"\(event (\d+)\)$", line)[0])
                 for line in shown if line.startswith("agent: ")]  # fmt: skip
    assert connected[0] < first < connected[1] < second
    rows = [[cell.strip() for cell in line.split("│")[1:3]] for line in shown if "│" in line]
    assert rows == [["1", str(first)], ["2", str(second)]]
    header = next(line for line in shown if line.startswith("┃"))
    assert [cell.strip() for cell in header.split("┃")[1:4]] == ["#", "event", "time (UTC)"]
    narrow = mcp.cli_in_process("audit", "s", "--db", str(db), columns=50).stdout.splitlines()
    assert [line.split("  ")[:2] for line in narrow if line.startswith("#")] == [
        ["#1", f"event {first}"], ["#2", f"event {second}"]
    ]


@pytest.mark.parametrize(
    ("recorder", "session", "error"),
    [
        ("k.db", "k", "recorder: expected a Recorder (SqliteRecorder(path) or MemoryRecorder())"),
        (MemoryRecorder(), None, "session: expected a str, got NoneType None"),
        (MemoryRecorder(), 5, "session: expected a str, got int 5"),
    ],
)
def test_the_log_tools_refuse_a_path_for_a_recorder_or_a_name_that_is_no_str(
    recorder: object, session: object, error: str
) -> None:
    """A path failed inside with AttributeError ('pinned'), and a name of None or 5 was
    "the log has no session None"."""
    from semledger.examples import counter
    from semledger.replay import audit_report, read_at, reexecute

    for call in (
        lambda: audit_report(recorder, session),  # type: ignore[arg-type]
        lambda: read_at(recorder, session),  # type: ignore[arg-type]
        lambda: reexecute(recorder, session, counter.app),  # type: ignore[arg-type]
    ):
        with pytest.raises(TypeError, match=re.escape(error)):
            call()


@pytest.mark.parametrize(
    ("recorder", "session", "error"),
    [
        ("k.db", "k", "recorder: expected a Recorder (SqliteRecorder(path) or MemoryRecorder())"),
        (MemoryRecorder(), 5, "session: expected a str, got int 5"),
    ],
)
def test_verify_refuses_a_path_for_a_recorder_or_a_name_that_is_no_str_as_the_others_do(
    recorder: object, session: object, error: str
) -> None:
    """A path failed inside with AttributeError ('pinned'), and a name of 5 was refused as
    "sessions: expected strs", an argument verify has not."""
    from semledger.replay import verify

    with pytest.raises(TypeError, match=f"^{re.escape(error)}"):
        verify(recorder, session)  # type: ignore[arg-type]


def test_the_log_tools_refuse_an_on_progress_that_is_no_function_before_reading(
    logged: tuple[Path, dict[int, Any]],
) -> None:
    """It was called only once a thousand events were read, or the last: the audit, the
    verification or the replay was done, then lost to "'int' object is not callable"."""
    from semledger.examples import counter
    from semledger.replay import audit_report, reexecute, verify

    db, _ = logged
    said = "on_progress: expected a function called as on_progress(done, total), or None, got"
    with SqliteRecorder(db) as recorder:
        for call in (
            lambda: audit_report(recorder, "agent", on_progress=5),  # type: ignore[arg-type]
            lambda: verify(recorder, "agent", on_progress=5),  # type: ignore[arg-type]
            lambda: reexecute(recorder, "agent", counter.app, on_progress=5),  # type: ignore[arg-type]
        ):
            with pytest.raises(TypeError, match=f"^{re.escape(said)} int 5$"):
                call()


@pytest.mark.parametrize(
    ("client", "said"),
    [
        ({"name": None}, "null"),
        ({"version": "1"}, "(no name) 1"),
        ({"name": {"a": [1, None]}, "version": 3}, '{"a":[1,null]} 3'),
        ({"name": 1e308, "version": True}, "1e+308 true"),
        ({"name": "claude-code", "version": "1.0"}, "claude-code 1.0"),
        ({"name": "(no name)"}, "'(no name)'"),
        ({"name": "", "version": "1"}, "'' 1"),  # it read "agent:  1", as if no name
        ({"name": "x" * 100_000}, "x" * 80 + "… (100,000 characters; --json has it whole)"),
    ],
)
def test_the_agent_line_shows_a_client_info_part_that_is_no_str_as_json_and_cuts_long_text(
    client: dict[str, Any], said: str
) -> None:
    """A null name read ``None``, a version with no name read as the name, a number or a
    dict as Python prints it, and a name of 100,000 characters was printed whole."""
    from semledger._render import connection_lines
    from semledger.replay import Connection

    connection = Connection(3, 0.0, client, "2025-03-26", "stdio", None, False)
    (line,) = connection_lines([connection])
    assert line.plain.startswith(f"agent: {said} (MCP 2025-03-26, over stdio)"), line.plain
