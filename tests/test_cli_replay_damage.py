"""`replay` (and `replay --export-test`) on a damaged log: refused as `read` refuses it, in
one line naming the log, the session and the event (exit 1), never a verdict on the app."""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgpack
import pytest
import trio

from semledger.adapters import LoggedSurface, create_surface
from semledger.eventlog import (
    GENESIS,
    InconsistentLogError,
    NewEvent,
    SessionEnded,
    SessionStarted,
    SqliteRecorder,
    chain_step,
)
from semledger.replay import reexecute

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp
import tests_variant
from tests_record import COUNTER, INCREMENT, damaged, record

# Session 'agent': 1 start, 2 commit of generation 1, 3 request 1, 4 commit of generation 2,
# 5 its receipt, 6 request 2, 7 commit of generation 3, 8 its receipt, 9 its end.


@pytest.fixture(scope="module")
def logged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("replay-damage") / "log.db"
    record(db, "agent", COUNTER, [INCREMENT, ("counter.step", {"kind": "set_text", "value": "2"})])
    return db


def rewritten(
    logged: Path,
    tmp_path: Path,
    seq: int,
    edit: Callable[[Any], None],
    *,
    session: str = "agent",
) -> Path:
    """A copy of the log whose event `seq` of `session` is edited and encoded again: its body
    still decodes (the chain no longer verifies)."""
    db = damaged(logged, tmp_path)
    with sqlite3.connect(db) as conn:
        where = "WHERE session = ? AND seq = ?"
        (body,) = conn.execute(f"SELECT body FROM events {where}", (session, seq)).fetchone()
        data = msgpack.unpackb(body)
        edit(data)
        conn.execute(f"UPDATE events SET body = ? {where}", (msgpack.packb(data), session, seq))
    conn.close()
    return db


def _from_generation(data: Any) -> None:
    data["delta"]["from"] = "1"


def test_replay_names_a_commit_whose_delta_does_not_apply_as_damage(
    logged: Path, tmp_path: Path
) -> None:
    """It exited 2, as for bad usage, with the delta's error alone: no log, no event."""
    db = rewritten(logged, tmp_path, 7, _from_generation)
    done = mcp.cli_in_process("replay", "agent", "--db", str(db))
    assert (done.returncode, done.stdout) == (1, ""), done.stdout + done.stderr
    says = "session 'agent', event 7: the commit does not apply: delta from generation 1"
    assert done.stderr == f"semledger: the log {db} cannot be read: {says} applied to 2\n"
    read = mcp.cli_in_process("read", "agent", "--db", str(db))
    assert read.stderr == done.stderr


def test_replay_names_the_session_and_event_of_a_body_that_does_not_decode(
    logged: Path, tmp_path: Path
) -> None:
    edit = "UPDATE events SET body = X'c1' WHERE session = 'agent' AND seq = 5"
    db = damaged(logged, tmp_path, edit)
    done = mcp.cli_in_process("replay", "agent", "--db", str(db))
    assert (done.returncode, done.stdout) == (1, ""), done.stdout + done.stderr
    assert done.stderr == (
        f"semledger: the log {db} cannot be read: session 'agent', event 5: cannot decode"
        " ActionReceipt version 1: not msgpack (FormatError)\n"
    )


@pytest.mark.parametrize("seq", [4, 7], ids=["a-commit-before-the-last", "the-last-commit"])
def test_every_command_names_the_session_and_event_of_a_commit_that_does_not_decode(
    logged: Path, tmp_path: Path, seq: int
) -> None:
    """read said "cannot decode Committed version 1: not msgpack (FormatError)" alone,
    where replay and audit named the session and the event."""
    edit = f"UPDATE events SET body = X'c1' WHERE session = 'agent' AND seq = {seq}"
    db = damaged(logged, tmp_path, edit)
    says = "cannot decode Committed version 1: not msgpack (FormatError)"
    for command in (["read", "agent"], ["replay", "agent"]):
        done = mcp.cli_in_process(*command, "--db", str(db))
        assert (done.returncode, done.stdout) == (1, ""), (command, done.stdout, done.stderr)
        assert done.stderr == (
            f"semledger: the log {db} cannot be read: session 'agent', event {seq}: {says}\n"
        )
    audited = mcp.cli_in_process("audit", "agent", "--db", str(db), "--json")
    assert audited.returncode == 1, audited.stdout + audited.stderr
    assert audited.stderr == (
        f"semledger: the log {db} is damaged: event {seq} of session 'agent' cannot be read:"
        f" {says}\n"
    )


def test_replay_names_a_gap_before_a_body_that_does_not_decode(
    logged: Path, tmp_path: Path
) -> None:
    db = damaged(
        logged,
        tmp_path,
        "DELETE FROM events WHERE session = 'agent' AND seq = 5",
        "UPDATE events SET body = X'c1' WHERE session = 'agent' AND seq = 6",
    )
    done = mcp.cli_in_process("replay", "agent", "--db", str(db))
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr == (
        f"semledger: the log {db} cannot be read: session 'agent', event 5: missing:"
        " the session's events go from event 4 to event 6\n"
    )


def _counted_to_seven(data: Any) -> None:
    (node,) = [n for n in data["delta"]["upserted"] if n["semantic_id"] == "counter.value"]
    node["value"] = "7"


def test_replay_refuses_a_commit_whose_delta_was_edited_under_its_hash(
    logged: Path, tmp_path: Path
) -> None:
    """Replay compared hashes alone: a delta edited to show another count (what a read of
    the log serves) replayed as identical, exit 0."""
    db = rewritten(logged, tmp_path, 4, _counted_to_seven)
    done = mcp.cli_in_process("replay", "agent", "--db", str(db))
    assert (done.returncode, done.stdout) == (1, ""), done.stdout + done.stderr
    assert done.stderr == (
        f"semledger: the log {db} cannot be read: session 'agent', event 4: its delta does not"
        f" make the snapshot its hash names: {CHANGED}\n"
    )
    read = mcp.cli_in_process("read", "agent", "--db", str(db))
    assert read.stderr == done.stderr


CHANGED = (
    "the log was changed (audit --verify names the first event changed, unless the chain was"
    " recomputed too, which only an audit --anchor taken earlier shows)"
)


def _rechained(db: Path, session: str) -> None:
    """Recompute the chain of every event of `session` in `db`, as an editor of the log
    who knows the chain's formula can."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT seq, topic, version, body FROM events WHERE session = ? ORDER BY seq",
            (session,),
        ).fetchall()
        chain = GENESIS
        for seq, topic, version, body in rows:
            chain = chain_step(chain, session, seq, topic, version, body)
            conn.execute(
                "UPDATE events SET chain = ? WHERE session = ? AND seq = ?", (chain, session, seq)
            )
    conn.close()


def _hash_of_zeros(data: Any) -> None:
    data["snapshot_hash"] = "0" * 64


def test_a_commit_edited_with_its_chain_recomputed_is_not_sent_to_verify_alone(
    logged: Path, tmp_path: Path
) -> None:
    """read and replay said "audit --verify names the first event changed", and
    audit --verify said ok: a recomputed chain verifies, only an anchor taken before
    shows the edit."""
    db = rewritten(logged, tmp_path, 7, _hash_of_zeros)
    _rechained(db, "agent")
    for command in ("read", "replay"):
        done = mcp.cli_in_process(command, "agent", "--db", str(db))
        assert (done.returncode, done.stdout) == (1, ""), (command, done.stdout, done.stderr)
        assert done.stderr == (
            f"semledger: the log {db} cannot be read: session 'agent', event 7: its delta does"
            f" not make the snapshot its hash names: {CHANGED}\n"
        ), command
    verified = mcp.cli_in_process("audit", "agent", "--db", str(db), "--verify")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "integrity chain: session 'agent': ok, 9 events" in verified.stdout


TODO = "semledger.examples.todo:app"


def test_replay_diverges_on_a_commit_logged_announcing_what_it_did_not(tmp_path: Path) -> None:
    """What a commit announces is not in its snapshot's hash: an edited announcement
    replayed as identical."""
    db = tmp_path / "todo.db"
    record(
        db,
        "todo",
        TODO,
        [("todo.input", {"kind": "set_text", "value": "milk"}), ("todo.input", {"kind": "submit"})],
    )
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT seq, body FROM events WHERE topic = 'Committed'").fetchall()
        (seq, body), *_ = [(s, b) for s, b in rows if msgpack.unpackb(b)["delta"]["announcements"]]
        data = msgpack.unpackb(body)
        data["delta"]["announcements"][0]["text"] = "9 items left"
        conn.execute("UPDATE events SET body = ? WHERE seq = ?", (msgpack.packb(data), seq))
    conn.close()
    _rechained(db, "todo")  # as an app that announced otherwise would have logged it
    done = mcp.cli_in_process("replay", "todo", "--db", str(db))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "DIVERGED" in done.stdout
    assert "announcing ['9 items left']" in done.stdout
    assert "announcing ['1 items left']" in done.stdout


@pytest.mark.parametrize(
    "statements",
    [
        ["DELETE FROM events WHERE session = 'agent' AND seq = 6"],
        [
            "UPDATE events SET seq = -1 WHERE session = 'agent' AND seq = 4",
            "UPDATE events SET seq = 4 WHERE session = 'agent' AND seq = 7",
            "UPDATE events SET seq = 7 WHERE session = 'agent' AND seq = -1",
        ],
        ["UPDATE events SET body = X'c1' WHERE session = 'agent' AND seq = 8"],
        ["UPDATE sessions SET events = 50 WHERE name = 'agent'"],
        ["UPDATE sessions SET events = 5 WHERE name = 'agent'"],
    ],
    ids=["event deleted", "commits swapped", "body undecodable", "counts more", "counts fewer"],
)
def test_export_refuses_a_damaged_log_as_replay_does_and_writes_nothing(
    logged: Path, tmp_path: Path, statements: list[str]
) -> None:
    """It wrote a test from each (exit 0): one that re-drove what the agent never did and
    failed, or that passed on a log replay refuses."""
    db = damaged(logged, tmp_path, *statements)
    replayed = mcp.cli_in_process("replay", "agent", "--db", str(db))
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert replayed.stderr.startswith(f"semledger: the log {db} cannot be read: ")
    exported = tmp_path / "test_agent.py"
    done = mcp.cli_in_process("replay", "agent", "--db", str(db), "--export-test", str(exported))
    assert (done.returncode, done.stdout, done.stderr) == (1, "", replayed.stderr)
    assert list(tmp_path.iterdir()) == [db]


def test_a_session_whose_events_were_all_deleted_is_damage_not_an_unknown_name(
    logged: Path, tmp_path: Path
) -> None:
    """Its summary row kept, read, replay and audit --verify said "the log has no session",
    exit 2 (bad usage), and audit --json printed no JSON."""
    db = damaged(logged, tmp_path, "DELETE FROM events WHERE session = 'agent'")
    exported = tmp_path / "test_agent.py"
    counted = (
        "the summary of session 'agent' is malformed: it counts 9 events where the log holds"
        " none (events were removed, or the row edited)"
    )
    for command in (
        ["read", "agent"],
        ["replay", "agent"],
        ["replay", "agent", "--export-test", str(exported)],
        ["end", "agent"],
    ):
        done = mcp.cli_in_process(*command, "--db", str(db))
        assert (done.returncode, done.stdout) == (1, ""), (command, done.stdout, done.stderr)
        assert done.stderr.startswith(f"semledger: the log {db} cannot be read: {counted}")
    assert not exported.exists()
    says = (
        "event 1 of session 'agent' is missing: the log's summary counts 9 events, the log"
        " holds none"
    )
    audited = mcp.cli_in_process("audit", "agent", "--db", str(db), "--verify", "--json")
    assert audited.returncode == 1, audited.stdout + audited.stderr
    assert audited.stderr == f"semledger: the log {db} is damaged: {says}\n"
    out = json.loads(audited.stdout)
    assert (out["unreadable"], out["actions"]) == (says, [])
    assert out["verify"]["ok"] is False
    assert out["verify"]["problem"] == "event 1 missing: the log's summary counts 9 events"
    table = mcp.cli_in_process("audit", "agent", "--db", str(db), "--verify")
    assert (table.returncode, table.stderr) == (1, audited.stderr)
    verdict = "integrity chain: session 'agent': event 1 missing: the log's summary counts 9"
    assert verdict in table.stdout
    unknown = mcp.cli_in_process("audit", "nobody", "--db", str(db), "--verify")
    assert unknown.returncode == 2, unknown.stderr
    assert unknown.stderr == (
        f"semledger: the log has no session 'nobody' (semledger sessions --db {db} lists its"
        " sessions)\n"
    )


@pytest.mark.parametrize(
    ("statement", "says"),
    [
        (
            "DELETE FROM events WHERE session = 'agent' AND seq = 1",
            "missing: the session's events start at event 2",
        ),
        (
            "UPDATE events SET body = X'c1' WHERE session = 'agent' AND seq = 1",
            "cannot decode SessionStarted version 2: not msgpack (FormatError)",
        ),
    ],
    ids=["deleted", "undecodable"],
)
def test_replay_names_a_start_missing_or_undecodable_as_damage(
    logged: Path, tmp_path: Path, statement: str, says: str
) -> None:
    """A deleted start was "session 'agent' names no app: give --app" (exit 2), bad usage;
    one that does not decode was named by neither its session nor its event."""
    db = damaged(logged, tmp_path, statement)
    exported = tmp_path / "test_agent.py"
    for command in (["replay", "agent"], ["replay", "agent", "--export-test", str(exported)]):
        done = mcp.cli_in_process(*command, "--db", str(db))
        assert (done.returncode, done.stdout) == (1, ""), (command, done.stdout, done.stderr)
        assert done.stderr == (
            f"semledger: the log {db} cannot be read: session 'agent', event 1: {says}\n"
        )
    assert not exported.exists()


def test_read_names_a_deleted_start_of_a_session_that_committed_nothing_as_damage(
    tmp_path: Path,
) -> None:
    """With no commit to read, read looked at event 1 and raised IndexError: a traceback."""
    db = tmp_path / "log.db"
    with SqliteRecorder(db) as recorder:
        recorder.append(
            [
                NewEvent("s", 1, SessionStarted(COUNTER, "runtime", {}, True), 1.0),
                NewEvent("s", 2, SessionEnded("its server stopped", "server"), 2.0),
            ]
        )
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM events WHERE seq = 1")
    conn.close()
    done = mcp.cli_in_process("read", "s", "--db", str(db))
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"semledger: the log {db} cannot be read: session 's', event 1: missing: the"
        " session's events start at event 2\n"
    )


SWAP_1_AND_2 = (
    "CREATE TEMP TABLE two AS SELECT seq, topic, version, at, body, chain FROM events"
    " WHERE session = 'agent' AND seq IN (1, 2)",
    "UPDATE events SET (topic, version, at, body, chain) = (SELECT topic, version, at, body,"
    " chain FROM two WHERE two.seq = 3 - events.seq) WHERE session = 'agent' AND seq IN (1, 2)",
)
"""Events 1 and 2 of 'agent' swapped in content: its event 1 is a commit, its start event 2."""


def test_every_command_names_an_event_1_that_is_not_the_start_as_damage(
    logged: Path, tmp_path: Path
) -> None:
    """replay and --export-test said "names no app: give --app" (exit 2); replay --app named
    the session twice (exit 2), serve exited 2; a plain audit exited 0 and told of a server
    that stopped after event 1; read printed the tree and end ended the session, exit 0."""
    db = damaged(logged, tmp_path, *SWAP_1_AND_2)
    wrong = "a Committed, not the SessionStarted a session begins with"
    says = f"session 'agent', event 1: it is {wrong}"
    exported = tmp_path / "test_agent.py"
    for command in (
        ["replay", "agent"],
        ["replay", "agent", "--export-test", str(exported)],
        ["replay", "agent", "--app", COUNTER],
        ["serve", COUNTER, "--session", "agent"],
        ["read", "agent"],
        ["end", "agent"],
    ):
        run = mcp.cli if command[0] == "serve" else mcp.cli_in_process  # serve: a child
        done = run(*command, "--db", str(db))
        assert (done.returncode, done.stdout) == (1, ""), (command, done.stdout, done.stderr)
        assert done.stderr == f"semledger: the log {db} cannot be read: {says}\n", command
    assert not exported.exists()
    audited = f"event 1 of session 'agent' is {wrong}"
    for command in (["audit", "agent"], ["audit", "agent", "--verify"]):
        done = mcp.cli_in_process(*command, "--db", str(db))
        assert done.returncode == 1, (command, done.stdout, done.stderr)
        assert done.stderr == f"semledger: the log {db} is damaged: {audited}\n", command
        assert "stopped after event 1" not in done.stdout


def test_export_refuses_a_commit_whose_delta_was_edited_under_its_hash(
    logged: Path, tmp_path: Path
) -> None:
    db = rewritten(logged, tmp_path, 4, _counted_to_seven)
    exported = tmp_path / "test_agent.py"
    done = mcp.cli_in_process("replay", "agent", "--db", str(db), "--export-test", str(exported))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "event 4: its delta does not make the snapshot its hash names" in done.stderr
    assert not exported.exists()


def test_a_summary_counting_fewer_events_is_damage_to_audit_too_and_said_so(
    logged: Path, tmp_path: Path
) -> None:
    """read and replay refused it saying events were removed; a plain audit passed it
    (exit 0) in silence."""
    db = damaged(logged, tmp_path, "UPDATE sessions SET events = 5 WHERE name = 'agent'")
    counted = (
        "the summary of session 'agent' is malformed: it counts 5 events where the log holds 9"
        " (events were added, or the row edited)"
    )
    for command in (["read", "agent"], ["replay", "agent"]):
        done = mcp.cli_in_process(*command, "--db", str(db))
        assert done.returncode == 1, (command, done.stdout, done.stderr)
        assert done.stderr.startswith(f"semledger: the log {db} cannot be read: {counted}")
    says = (
        "event 6 of session 'agent' is not counted: the log's summary counts 5 events, the log"
        " holds 9 (events were added, or the row edited)"
    )
    audited = mcp.cli_in_process("audit", "agent", "--db", str(db), "--json")
    assert audited.returncode == 1, audited.stdout + audited.stderr
    assert audited.stderr == f"semledger: the log {db} is damaged: {says}\n"
    out = json.loads(audited.stdout)
    assert out["unreadable"] == says
    assert [entry["outcome"] for entry in out["actions"]] == ["receipt", "receipt"]
    table = mcp.cli_in_process("audit", "agent", "--db", str(db))
    assert (table.returncode, table.stderr) == (1, audited.stderr)


@pytest.mark.parametrize(
    ("relabelled", "next_label", "verified"),
    [
        (9, 40, "event 9 missing: the next record is labelled seq 40"),
        (4, 5, "event 4 out of order: it is further on, in the record labelled seq 40"),
        (1, 2, "event 1 out of order: it is further on, in the record labelled seq 40"),
    ],
    ids=["last", "middle", "first"],
)
def test_an_event_relabelled_past_the_end_is_named_missing_not_the_summary(
    logged: Path, tmp_path: Path, relabelled: int, next_label: int, verified: str
) -> None:
    """With event 9 relabelled seq 40 (the summary untouched, counting 9 events, as many as
    the log holds), read, replay and end said the summary "counts 9 events where the log
    holds 40 (events were added)", sessions that the log holds 40, and audit named an
    event 10 that no record holds as damaged too; with event 4 relabelled, they named that
    event 10 as missing, which the session never had."""
    db = damaged(
        logged,
        tmp_path,
        f"UPDATE events SET seq = 40 WHERE session = 'agent' AND seq = {relabelled}",
    )
    says = f"session 'agent', event {relabelled}: missing: "
    for command in (["read", "agent"], ["replay", "agent"], ["end", "agent"]):
        done = mcp.cli_in_process(*command, "--db", str(db))
        assert (done.returncode, done.stdout) == (1, ""), (command, done.stdout, done.stderr)
        assert done.stderr.startswith(f"semledger: the log {db} cannot be read: {says}"), command
    listed = mcp.cli_in_process("sessions", "--db", str(db))
    assert listed.returncode == 1, listed.stdout + listed.stderr
    assert listed.stderr.startswith(
        f"semledger: the log {db} is damaged: session 'agent': event {relabelled} is missing:"
        f" the next record is labelled seq {next_label}"
    )
    audited = mcp.cli_in_process("audit", "agent", "--db", str(db), "--verify")
    assert audited.returncode == 1, audited.stdout + audited.stderr
    went = "start at event 2" if relabelled == 1 else f"go from event {relabelled - 1} to event"
    assert audited.stderr.startswith(
        f"semledger: the log {db} is damaged: event {relabelled} of session 'agent' is"
        f" missing: the session's events {went}"
    )
    assert "damaged too" not in audited.stderr
    assert verified in audited.stdout


def _answers_request_seven(data: Any) -> None:
    data["request_id"] = 7


def test_replay_names_the_field_a_receipt_diverges_in_when_it_reads_alike(
    logged: Path, tmp_path: Path
) -> None:
    """A receipt edited to answer another request diverged with two identical lines."""
    db = rewritten(logged, tmp_path, 5, _answers_request_seven)
    _rechained(db, "agent")  # else the edit is damage, not a divergence
    done = mcp.cli_in_process("replay", "agent", "--db", str(db))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "DIVERGED at step 1 (log seq 5)" in done.stdout
    logged_line, replayed_line = [
        line.split(":", 1)[1].strip()
        for line in done.stdout.splitlines()
        if line.lstrip().startswith(("logged:", "replayed:"))
    ]
    assert logged_line.endswith("request_id=7"), done.stdout
    assert replayed_line.endswith("request_id=1"), done.stdout


def _replay_and_export_refuse_it_as_edited(db: Path, said: str, exported: Path) -> None:
    """Both say `said` and that an edited log is not used (exit 1); no test is written."""
    for command, refused in (
        (["replay", "agent"], "an edited log is not replayed"),
        (
            ["replay", "agent", "--export-test", str(exported)],
            "no test is written of an edited log",
        ),
    ):
        done = mcp.cli_in_process(*command, "--db", str(db))
        assert (done.returncode, done.stdout) == (1, ""), (command, done.stdout, done.stderr)
        assert done.stderr == f"{said}{EDITED(refused)}\n", command
    assert not exported.exists()


def _receipt_after_seven(data: Any) -> None:
    data["after"] = 7


SWAP_5_AND_6 = (
    "UPDATE events SET seq = -1 WHERE session = 'agent' AND seq = 5",
    "UPDATE events SET seq = 5 WHERE session = 'agent' AND seq = 6",
    "UPDATE events SET seq = 6 WHERE session = 'agent' AND seq = -1",
)
"""Request 2 (event 6) and the receipt of request 1 (event 5) of 'agent' relabelled: each
still decodes, in the other's place."""
EDITED = (
    "; its integrity chain breaks there: the log was edited after it was written, which"
    " `semledger audit --verify` shows, and {}"
).format


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        ("receipt", "event 5: changed: the record there (its content or chain) does not verify"),
        ("swap", "event 5: out of order: it is further on, in the record labelled seq 6"),
    ],
    ids=["receipt-edited-still-decoding", "request-and-answer-swapped"],
)
def test_replay_and_export_refuse_an_edited_log_naming_the_first_event_that_does_not_verify(
    logged: Path, tmp_path: Path, edit: str, says: str
) -> None:
    """Replay said `DIVERGED at step 1`, logged `receipt 1 -> 7` against replayed `1 -> 2`
    (or a rejection logged where it replayed nothing), noted as if the app, a redaction or
    the hash seed could explain it; --export-test wrote a test of either (exit 0)."""
    if edit == "receipt":
        db = rewritten(logged, tmp_path, 5, _receipt_after_seven)
    else:
        db = damaged(logged, tmp_path, *SWAP_5_AND_6)
    said = f"semledger: the log {db} cannot be read: session 'agent', {says}"
    _replay_and_export_refuse_it_as_edited(db, said, tmp_path / "test_agent.py")
    verified = mcp.cli_in_process("audit", "agent", "--db", str(db), "--verify")
    assert f"integrity chain: session 'agent': {says.replace(':', '', 1)}" in verified.stdout


def _ended_otherwise(data: Any) -> None:
    data["reason"] = "an edited reason"


def test_replay_that_stops_early_still_checks_the_chain_to_the_end(tmp_path: Path) -> None:
    """A divergence (or a crash raised again) ends the replay before the log's last events:
    an edit past it was not seen, and the log called fit to replay."""
    db = tmp_path / "log.db"
    record(db, "counter", COUNTER, [INCREMENT] * 3)  # its end is event 12
    edited = rewritten(db, tmp_path, 12, _ended_otherwise, session="counter")
    variant = ("--app", "tests_variant:app")
    done = mcp.cli_in_process("replay", "counter", "--db", str(edited), *variant)
    assert (done.returncode, done.stdout) == (1, ""), done.stdout + done.stderr
    changed = "event 12: changed: the record there (its content or chain) does not verify"
    assert done.stderr == (
        f"semledger: the log {edited} cannot be read: session 'counter', {changed}"
        f"{EDITED('an edited log is not replayed')}\n"
    )
    with SqliteRecorder(edited) as recorder, pytest.raises(InconsistentLogError) as raised:
        reexecute(recorder, "counter", tests_variant.app)
    assert raised.value.seq == 12
    plain = mcp.cli_in_process("replay", "counter", "--db", str(db), *variant)
    assert "DIVERGED at step 2" in plain.stdout, plain.stdout + plain.stderr


async def _surface_session(db: Path) -> None:
    config = {"adapter": "runtime", "app": COUNTER}
    with SqliteRecorder(db) as recorder:
        logged = LoggedSurface(create_surface(config), recorder, "page", "runtime", config=config)
        await logged.open({})
        for _ in range(2):
            snapshot = await logged.snapshot()
            increment = next(n.ref for n in snapshot.nodes if n.name == "Increment")
            await logged.act("click", increment)
        await logged.snapshot()
        await logged.close()


def test_replay_refuses_a_surface_session_whose_log_was_edited(tmp_path: Path) -> None:
    """Its re-run diverged at the edited snapshot, as if the surface now answered otherwise."""
    db = tmp_path / "log.db"
    trio.run(_surface_session, db)
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT seq, body FROM events WHERE topic = 'SurfaceCalled'")
        seq, data = [(s, d) for s, b in rows if (d := msgpack.unpackb(b))["snapshot_hash"]][-1]
        data["snapshot_hash"] = "0" * 64
        conn.execute("UPDATE events SET body = ? WHERE seq = ?", (msgpack.packb(data), seq))
    conn.close()
    done = mcp.cli_in_process("replay", "page", "--db", str(db))
    assert (done.returncode, done.stdout) == (1, ""), done.stdout + done.stderr
    changed = f"event {seq}: changed: the record there (its content or chain) does not verify"
    assert done.stderr == (
        f"semledger: the log {db} cannot be read: session 'page', {changed}"
        f"{EDITED('an edited log is not replayed')}\n"
    )


def _reads_garbage(data: Any) -> None:
    data["params"]["fuzz"] = {"reads": "garbage"}


def _violated_malformed(data: Any) -> None:
    data["params"]["fuzz"] = {"violated": {"step": "x"}}


def _app_that_does_not_load(data: Any) -> None:
    data["app"] = "no_such_module_here:app"


@pytest.mark.parametrize(
    "edit",
    [_reads_garbage, _violated_malformed, _app_that_does_not_load],
    ids=["reads", "violated", "app"],
)
def test_export_names_an_edited_start_as_damage_as_replay_does(
    logged: Path, tmp_path: Path, edit: Callable[[Any], None]
) -> None:
    """With what a fuzzer saves in the start (params['fuzz']) edited, replay named the edit
    (exit 1), and --export-test took the edit for a malformed session: "params['fuzz']
    ['reads']: expected [after, since] pairs" (exit 2, bad usage). With its app edited to one
    that does not load, both said "cannot import" (exit 2)."""
    db = rewritten(logged, tmp_path, 1, edit)
    said = (
        f"semledger: the log {db} cannot be read: session 'agent', event 1: changed: the"
        " record there (its content or chain) does not verify"
    )
    _replay_and_export_refuse_it_as_edited(db, said, tmp_path / "test_agent.py")


@pytest.mark.parametrize(("more", "why"), [(2, "removed"), (-2, "added")])
def test_a_surface_session_whose_summary_row_was_edited_is_refused_as_an_app_session_is(
    logged: Path, tmp_path: Path, more: int, why: str
) -> None:
    """A surface session's re-run said of a summary counting more events than the log holds
    that "its integrity chain breaks there", which it does not, and re-ran one counting
    fewer as identical; an app session's replay refuses either, saying the summary row
    disagrees with the events."""
    surface = tmp_path / "surface.db"
    trio.run(_surface_session, surface)
    for db, session in ((surface, "page"), (damaged(logged, tmp_path), "agent")):
        with sqlite3.connect(db) as conn:
            conn.execute("UPDATE sessions SET events = events + ? WHERE name = ?", (more, session))
            (held,) = conn.execute("SELECT max(seq) FROM events WHERE session = ?", (session,))
        conn.close()
        done = mcp.cli_in_process("replay", session, "--db", str(db))
        assert (done.returncode, done.stdout) == (1, ""), (session, done.stdout, done.stderr)
        assert done.stderr == (
            f"semledger: the log {db} cannot be read: the summary of session {session!r} is"
            f" malformed: it counts {held[0] + more} events where the log holds {held[0]}"
            f" (events were {why}, or the row edited): `semledger audit --verify` names the"
            " damage\n"
        ), session
