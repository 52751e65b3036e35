"""The audit says how the session stands at the end of the log: ended for good by its
operator, ended for now (it may be resumed), crashed, or open with no end recorded. It said
none of it: `end --reason` wrote a reason "for the audit" that the audit never showed, and a
killed server's session looked like one that ended."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import attrs
import pytest

from semledger.eventlog import (
    ActionRejected,
    ActionRequested,
    AgentConnected,
    Committed,
    InconsistentLogError,
    MemoryRecorder,
    NewEvent,
    SessionCrashed,
    SessionEnded,
    SessionResumed,
    SessionStarted,
    SqliteRecorder,
)
from semledger.replay import Ending, UnreadableEventError, audit_report, full_at

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp

TODO = "semledger.examples.todo:app"
END_KEYS = {"state", "seq", "at", "reason", "final", "by", "step", "served"}


def _audit(db: Path, session: str) -> tuple[str, dict[str, Any]]:
    """The audit's last line, and its JSON's ``end``."""
    shown = mcp.cli_in_process("audit", session, "--db", str(db), columns=200)
    assert shown.returncode == 0, shown.stderr
    as_json = mcp.cli_in_process("audit", session, "--db", str(db), "--json")
    assert as_json.returncode == 0, as_json.stderr
    end = json.loads(as_json.stdout)["end"]
    assert set(end) == END_KEYS
    return shown.stdout.splitlines()[-1], end


def _serve(db: Path, session: str, app: str, requests: list[str]) -> None:
    subprocess.run(
        [*mcp.COMMAND, "serve", app, "--db", str(db), "--session", session],
        input=mcp.initialize() + "".join(requests),
        capture_output=True, text=True, env=mcp.env(), timeout=120, check=False,
    )  # fmt: skip


def test_an_audit_says_whether_the_session_ended_for_now_is_served_or_was_left_open(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.db"
    _serve(db, "s", TODO, [mcp.read(1)])
    line, end = _audit(db, "s")
    assert line.startswith("the session ended for now at ")
    assert line.endswith(" (event 4): end of input; serving it again resumes it")
    assert isinstance(end.pop("at"), float)
    assert end == {
        "state": "ended", "seq": 4, "reason": "end of input", "final": False, "by": "server",
        "step": None, "served": None,
    }  # fmt: skip

    server = mcp.start(TODO, db, "s")
    try:
        assert mcp.ask(server, mcp.read(1))["ok"]
        line, end = _audit(db, "s")  # resumed: its end is no longer how it stands
        assert line.startswith("the session has no end in the log, whose last event is ")
        assert line.endswith(": it is being served now")
        assert (end["state"], end["reason"], end["served"]) == ("open", None, True)
    finally:
        server.kill()
        server.wait(timeout=30)

    line, end = _audit(db, "s")
    with SqliteRecorder(db) as recorder:
        head = recorder.head("s")
    assert head is not None
    assert line.endswith(": its server stopped without one (serving it again resumes it)")
    assert (end["state"], end["seq"], end["served"]) == ("open", head.seq, False)

    ended = mcp.cli_in_process("end", "s", "--db", str(db), "--reason", "its app changed")
    assert ended.returncode == 0, ended.stderr
    line, end = _audit(db, "s")
    assert line.startswith("the session was ended for good by its operator at ")
    assert line.endswith(
        f" (event {head.seq + 1}): ended by the operator: its app changed; no server takes it"
        " up again"
    )
    assert (end["state"], end["seq"], end["reason"], end["final"], end["by"]) == (
        "ended", head.seq + 1, "ended by the operator: its app changed", True, "operator"
    )
    assert end["served"] is None


def test_an_audit_of_a_crashed_session_ends_saying_at_which_step_it_crashed(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.db"
    _serve(db, "cr", "tests_crashy:app", [mcp.perform(i, "counter.increment") for i in (1, 2, 3)])
    line, end = _audit(db, "cr")
    assert line.startswith("the session crashed at ")
    assert line.endswith(
        " (event 11), at step 3: ThirdIncrementError (its traceback is above); a crashed"
        " session is never resumed"
    )
    assert (end["state"], end["seq"], end["reason"], end["step"]) == (
        "crashed", 11, "ThirdIncrementError", 3
    )
    replayed = mcp.cli_in_process("replay", "cr", "--db", str(db))
    assert "the application raised again at step 3" in replayed.stdout


def _recorded(*events: Any) -> MemoryRecorder:
    recorder = MemoryRecorder()
    recorder.append([NewEvent("s", seq, e, 1.7e9 + seq) for seq, e in enumerate(events, 1)])
    return recorder


START = SessionStarted(TODO, "runtime", {}, True)


def test_the_last_end_after_the_last_resume_is_how_a_session_stands() -> None:
    once = _recorded(START, SessionEnded("end of input"), SessionResumed(()))
    assert audit_report(once, "s").ending == Ending("open", 3, 1.7e9 + 3, served=False)

    final = SessionEnded("ended by the operator: x", by="operator")
    again = _recorded(START, SessionEnded("end of input"), SessionResumed(()),
                      SessionEnded("closed"), final)  # fmt: skip
    assert audit_report(again, "s").ending == Ending(
        "ended", 5, 1.7e9 + 5, "ended by the operator: x", final=True, by="operator"
    )


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        ("UPDATE events SET body = X'c1' WHERE seq = 2", Ending("unknown", 2, 1.7e9 + 2,
                                                                "cannot be read", final=None)),
        ("DELETE FROM events WHERE seq = 2", Ending("unknown", 2, None, "is missing", final=None)),
    ],
)  # fmt: skip
def test_a_session_whose_last_event_is_damaged_is_not_said_to_be_open_or_ended(
    tmp_path: Path, edit: str, expected: Ending
) -> None:
    db = tmp_path / "log.db"
    with SqliteRecorder(db) as recorder:
        recorder.append([NewEvent("s", 1, START, 1.7e9 + 1),
                         NewEvent("s", 2, SessionEnded("end of input"), 1.7e9 + 2)])  # fmt: skip
    with sqlite3.connect(db) as conn:
        conn.execute(edit)
    conn.close()
    with SqliteRecorder(db) as recorder, pytest.raises(UnreadableEventError) as raised:
        audit_report(recorder, "s")
    assert raised.value.report.ending == expected
    shown = mcp.cli_in_process("audit", "s", "--db", str(db))
    assert shown.returncode == 1
    assert shown.stdout.splitlines()[-1] == (
        f"how the session stands cannot be told: event 2, at the end of the log, {expected.reason}"
    )


def _listed(db: Path) -> dict[str, dict[str, Any]]:
    done = mcp.cli_in_process("sessions", "--db", str(db), "--json")
    return {s["name"]: s for s in json.loads(done.stdout)}


def test_sessions_json_says_whether_each_session_was_ended_for_good_as_its_audit_does(
    tmp_path: Path,
) -> None:
    """An operator's end for good and an end of input, which serving the session again
    resumes, differed in `sessions --json` only by a prefix of `end_reason`."""
    db = tmp_path / "log.db"
    for name in ("for-now", "for-good"):
        _serve(db, name, TODO, [mcp.read(1)])
    assert mcp.cli_in_process("end", "for-good", "--db", str(db)).returncode == 0
    _serve(db, "crashed", "tests_crashy:app", [mcp.perform(i, "counter.increment")
                                                for i in (1, 2, 3)])  # fmt: skip
    with SqliteRecorder(db) as recorder:
        recorder.append([NewEvent("open", 1, START, 1.7e9)])
    listed = _listed(db)
    assert {name: s["final"] for name, s in listed.items()} == {
        "for-now": False, "for-good": True, "crashed": False, "open": False
    }  # fmt: skip
    for name, listing in listed.items():
        audited = json.loads(mcp.cli_in_process("audit", name, "--db", str(db), "--json").stdout)
        assert audited["end"]["final"] == listing["final"], name


def test_the_sessions_table_tells_an_end_for_now_from_an_end_for_good(tmp_path: Path) -> None:
    """Both read `ended: <reason>`: only `--json` had `final`."""
    db = tmp_path / "log.db"
    ends = {
        "parked": SessionEnded("parked: no request for 2 s"),
        "deleted": SessionEnded("deleted by the client", by="client"),
        "retired": SessionEnded("ended by the operator: done", by="operator"),
        "unreadable": SessionEnded("end of input"),
    }
    with SqliteRecorder(db) as recorder:
        for name, end in ends.items():
            recorder.append([NewEvent(name, 1, START, 1.7e9 + 1),
                             NewEvent(name, 2, end, 1.7e9 + 2)])  # fmt: skip
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE events SET body = X'c1' WHERE session = 'unreadable' AND seq = 2")
    conn.close()
    shown = mcp.cli_in_process("sessions", "--db", str(db), columns=200).stdout
    rows = [line.split("│") for line in shown.splitlines() if line.startswith("│")]
    assert {row[1].strip(): row[5].strip() for row in rows} == {
        "deleted": "ended for good: deleted by the client",
        "parked": "ended for now: parked: no request for 2 s",
        "retired": "ended for good: ended by the operator: done",
        "unreadable": "ended: end of input",  # which end it was cannot be read
    }


def test_sessions_json_cannot_say_a_session_ended_for_good_when_its_end_cannot_be_read(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.db"
    with SqliteRecorder(db) as recorder:
        recorder.append([NewEvent("s", 1, START, 1.7e9 + 1),
                         NewEvent("s", 2, SessionEnded("end of input"), 1.7e9 + 2)])  # fmt: skip
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE events SET body = X'c1' WHERE seq = 2")
    conn.close()
    listing = _listed(db)["s"]
    assert (listing["ended"], listing["final"]) == (True, None)
    assert "its last event cannot be read" in listing["problem"]


def test_the_logs_page_names_every_key_of_sessions_json_and_audit_json(tmp_path: Path) -> None:
    """`sessions --json` had `served`, `problem`, `first_at`, … documented nowhere."""
    db = tmp_path / "log.db"
    _serve(db, "s", "tests_crashy:app", [mcp.perform(i, "counter.increment") for i in (1, 2, 3)])
    audit = mcp.cli_in_process("audit", "s", "--db", str(db), "--json", "--verify")
    audited = json.loads(audit.stdout)
    keys = set(_listed(db)["s"]) | set(audited) | set(audited["end"]) | set(audited["verify"])
    for part in ("actions", "incidents", "connections"):
        keys |= set(audited[part][0])
    page = (Path(__file__).parent.parent / "docs" / "log.md").read_text()
    assert sorted(key for key in keys if f"`{key}`" not in page) == []


# What follows an end: a resume, or an end for good logged without one; nothing else.


def _past_the_end(db: Path, session: str, *events: Any) -> int:
    """Append `events` after the session's last event, the chain carried on over them as
    any append carries it: what no server logs after an end. The end's seq."""
    with SqliteRecorder(db) as recorder:
        head = recorder.head(session)
        assert head is not None
        at = time.time()
        recorder.append([NewEvent(session, head.seq + n, e, at) for n, e in enumerate(events, 1)])
    return head.seq


def test_a_call_logged_after_the_session_ended_with_no_resume_is_damage_and_the_end_stands(
    tmp_path: Path,
) -> None:
    """Events added after an end for now, the chain carried on, verified, and the audit
    credited the call to the agent whose session had ended, said its server was killed
    after the last of them, and named the end nowhere (exit 0)."""
    db = tmp_path / "log.db"
    _serve(db, "s", TODO, [mcp.read(1)])
    target = {"kind": "semantic_id", "id": "todo.input"}
    end = _past_the_end(
        db,
        "s",
        ActionRequested(3, target, {"kind": "submit"}, {"kind": "latest"}, redacted=False),
        ActionRejected(3, "handler_rejected", "the todo text is empty", {}),
    )
    why = f"follows the session's end at event {end} with no resume"
    for verify in ((), ("--verify",)):
        shown = mcp.cli_in_process("audit", "s", "--db", str(db), *verify, columns=200)
        assert shown.returncode == 1
        assert f"event {end + 1} of session 's' {why}" in shown.stderr
        assert "the session ended for now at " in shown.stdout
        assert f"(event {end}): end of input; serving it again resumes it" in shown.stdout
        assert "server stopped" not in shown.stdout
    as_json = json.loads(mcp.cli_in_process("audit", "s", "--db", str(db), "--json").stdout)
    assert (as_json["end"]["state"], as_json["end"]["seq"]) == ("ended", end)
    assert as_json["incidents"] == []
    replayed = mcp.cli_in_process("replay", "s", "--db", str(db))
    assert replayed.returncode == 1
    assert f"session 's', event {end + 1}: it {why}" in replayed.stderr


CRASH = SessionCrashed("ZeroDivisionError", "Traceback …")


@pytest.mark.parametrize(
    ("end", "after", "why"),
    [
        (SessionEnded("end of input"), AgentConnected(None, None, "stdio", None),
         "follows the session's end at event 2 with no resume"),
        (SessionEnded("end of input"), SessionEnded("closed"),
         "follows the session's end at event 2 with no resume"),
        (SessionEnded("its app changed", by="operator"), SessionResumed(()),
         "follows the session's end for good at event 2, after which nothing is logged"),
        (SessionEnded("deleted by the client", by="client"), SessionEnded("closed"),
         "follows the session's end for good at event 2, after which nothing is logged"),
        (CRASH, SessionResumed(()),
         "follows the session's crash at event 2, after which nothing is logged"),
    ],
)  # fmt: skip
def test_what_no_server_logs_after_an_end_is_damage_named_by_the_end_it_follows(
    end: Any, after: Any, why: str
) -> None:
    """Named once, at the first event past the end: those after it are past it too."""
    more = AgentConnected(None, None, "stdio", None)
    recorder = _recorded(START, end, after, more)
    with pytest.raises(UnreadableEventError) as raised:
        audit_report(recorder, "s")
    assert [(d.seq, d.what) for d in raised.value.damage] == [(3, why)]


@pytest.mark.parametrize(
    "after",
    [
        SessionResumed(()),
        SessionStarted(TODO, "web", {"adapter": "web"}, True),  # a surface session's resume
        SessionEnded("ended by the operator: x", by="operator"),  # `semledger end`
        SessionEnded("deleted by the client", by="client"),  # a DELETE of a parked session
    ],
)
def test_a_resume_or_an_end_for_good_may_follow_an_end_for_now(after: Any) -> None:
    recorder = _recorded(START, SessionEnded("parked: no request for 1 s"), after)
    assert audit_report(recorder, "s").ending.seq == 3


def test_a_session_stopped_resumed_and_ended_by_its_operator_audits_replays_and_reads_clean(
    tmp_path: Path,
) -> None:
    """What a server logs first as it resumes a session that ended for now, over stdio, is
    its `SessionResumed` (over HTTP, test_hosts_http's restarts audit clean too)."""
    db = tmp_path / "log.db"
    for _ in range(2):
        _serve(db, "s", TODO, [mcp.perform(1, "todo.input", "set_text", value="milk")])
    assert mcp.cli_in_process("end", "s", "--db", str(db)).returncode == 0
    with SqliteRecorder(db) as recorder:
        events = [event for _record, event in recorder.events("s")]
    ends = [n for n, event in enumerate(events) if isinstance(event, SessionEnded)]
    assert [type(events[n + 1]) for n in ends[:-1]] == [SessionResumed, SessionEnded]
    for command in ("audit", "replay", "read"):
        done = mcp.cli_in_process(command, "s", "--db", str(db))
        assert (done.returncode, done.stderr) == (0, ""), command


def test_a_read_that_folds_past_an_end_with_no_resume_names_the_event_as_replay_does(
    tmp_path: Path,
) -> None:
    """A generation committed after the end, the chain carried on, was served as the
    session's last."""
    db = tmp_path / "log.db"
    _serve(db, "s", TODO, [mcp.perform(1, "todo.input", "set_text", value="milk")])
    with SqliteRecorder(db) as recorder:
        record = recorder.last_of("s", "Committed")
        assert record is not None
        [(_record, commit)] = recorder.events("s", start=record.seq, stop=record.seq + 1)
    assert isinstance(commit, Committed)
    target = {"kind": "semantic_id", "id": "todo.input"}
    forged = attrs.evolve(commit, generation=commit.generation + 1)
    end = _past_the_end(
        db, "s", ActionRequested(2, target, {"kind": "submit"}, {"kind": "latest"}, False), forged
    )
    why = f"event {end + 1}: it follows the session's end at event {end} with no resume"
    for command in ("read", "replay"):
        done = mcp.cli_in_process(command, "s", "--db", str(db))
        assert done.returncode == 1, command
        assert why in done.stderr, command
    with SqliteRecorder(db) as recorder, pytest.raises(InconsistentLogError, match=re.escape(why)):
        full_at(recorder, "s")
    with SqliteRecorder(db) as recorder:  # one before the end is read as it was
        assert full_at(recorder, "s", commit.generation).generation == commit.generation


def _copied(db: Path, copy: Path) -> None:
    """`db` copied as the log's page advises while a server writes it: SQLite's backup."""
    source, target = sqlite3.connect(db), sqlite3.connect(copy)
    try:
        source.backup(target)
    finally:
        source.close()
        target.close()


def test_a_copy_of_a_live_sessions_log_cannot_tell_whether_it_is_served_its_original_can(
    tmp_path: Path,
) -> None:
    """A copy has no claims beside it: its audit said the live session's server "was
    killed", `served` false, as `sessions` had it "open, not served"."""
    db, copy = tmp_path / "log.db", tmp_path / "copy.db"
    server = mcp.start(TODO, db, "s")
    try:
        assert mcp.ask(server, mcp.read(1))["ok"]
        _copied(db, copy)
        line, end = _audit(db, "s")
        assert (line.endswith(": it is being served now"), end["served"]) == (True, True)
        line, end = _audit(copy, "s")
        assert end["served"] is None
        assert line.endswith(
            ": it is being served, or its server stopped without one (which cannot be told"
            " here: a copied log, say, has no claims beside it)"
        )
        shown = mcp.cli_in_process("audit", "s", "--db", str(copy), columns=200).stdout
        assert "unless it is serving the session still (this system cannot tell)" in shown
        [listed] = json.loads(mcp.cli_in_process("sessions", "--db", str(copy), "--json").stdout)
        assert listed["served"] is None
        assert "│ open " in mcp.cli_in_process("sessions", "--db", str(copy), columns=200).stdout
    finally:
        server.kill()
        server.wait(timeout=30)
    # Killed, its claim file is left unlocked beside the original: that one is told.
    line, end = _audit(db, "s")
    assert end["served"] is False
    assert line.endswith(": its server stopped without one (serving it again resumes it)")
    assert _audit(copy, "s")[1]["served"] is None


def test_a_log_resumed_before_resumes_were_logged_is_no_damage(tmp_path: Path) -> None:
    """The fixture was written by semledger at c581882: a counter session served, ended by
    the end of its input and served again, whose resume logged no SessionResumed. Its
    AgentConnected right after the end was named as damage ("follows the session's end at
    event 7 with no resume"): audit, read and replay refused it, and serve would not
    resume it."""
    import shutil

    db = tmp_path / "old.db"
    shutil.copy(Path(__file__).parent / "fixtures" / "resumed_before_session_resumed.db", db)
    audit = mcp.cli_in_process("audit", "old", "--db", str(db), "--verify")
    assert audit.returncode == 0, audit.stdout + audit.stderr
    assert "follows" not in audit.stdout + audit.stderr
    assert mcp.cli_in_process("read", "old", "--db", str(db)).returncode == 0
    replayed = mcp.cli_in_process("replay", "old", "--db", str(db))
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "identical" in replayed.stdout
    counter = "semledger.examples.counter:app"
    resumed = mcp.cli("serve", counter, "--db", str(db), "--session", "old")
    assert resumed.returncode == 0, resumed.stderr
    assert "resumed session 'old'" in resumed.stderr
