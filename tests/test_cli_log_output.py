"""What `sessions`, `read` and `audit` print: the log's text as it is, and a damaged log
named in one line instead of a traceback."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.cells import cell_len

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp
from tests_record import COUNTER, INCREMENT, damaged, record, schema_version_only

from semledger.eventlog import NewEvent, SessionEnded, SessionStarted, SqliteRecorder

MARKUP = "[bold]x[/bold][/]:smile:"
"""Text an agent may send (as a target id, as typed text) that rich would take for markup
and an emoji code."""
LONG_NAME = "a-session-name-longer-than-an-eighty-column-table-would-leave-it"


@pytest.fixture(scope="module")
def logged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("output") / "log.db"
    record(db, "agent", COUNTER, [INCREMENT, ("counter.step", {"kind": "set_text", "value": "2"})])
    typed = ("counter.step", {"kind": "set_text", "value": MARKUP})
    record(db, "[/]", COUNTER, [(MARKUP, {"kind": "activate"}), typed])
    record(db, LONG_NAME, COUNTER, [])
    with SqliteRecorder(db) as recorder:  # made before sessions refused control characters
        started = SessionStarted(COUNTER, "runtime", {}, True)
        recorder.append([NewEvent("two\nlines", 1, started, 0.0)])
    return db


def test_text_from_the_log_is_printed_as_it_is_never_as_markup(logged: Path) -> None:
    done = mcp.cli_in_process("audit", "[/]", "--db", str(logged), "--verify", columns=200)
    assert done.returncode == 0, done.stderr
    assert "perform_action in session [/]" in done.stdout
    rows = [line.replace(" ", "") for line in done.stdout.splitlines()]
    assert any(f"│{MARKUP}│activate│latest│target_not_found│" in row for row in rows)
    assert any(f"│set_text(value='{MARKUP}')│latest│receipt│" in row for row in rows)
    assert "integrity chain: session '[/]': ok" in done.stdout
    listed = mcp.cli_in_process("sessions", "--db", str(logged))
    assert listed.returncode == 0, listed.stderr
    assert "│ [/]" in listed.stdout


def test_the_sessions_table_shows_every_name_whole_and_on_one_line(logged: Path) -> None:
    done = mcp.cli_in_process("sessions", "--db", str(logged))  # not a terminal: 80 columns
    assert done.returncode == 0, done.stderr
    assert LONG_NAME in done.stdout
    assert "'two\\nlines'" in done.stdout


def test_sessions_of_a_log_with_none_says_so_rather_than_drawing_an_empty_table(
    tmp_path: Path,
) -> None:
    db = tmp_path / "empty [log].db"
    SqliteRecorder(db).close()
    done = mcp.cli_in_process("sessions", "--db", str(db))
    assert (done.returncode, done.stdout, done.stderr) == (0, f"no sessions in {db}\n", "")
    listed = mcp.cli_in_process("sessions", "--db", str(db), "--json")
    assert json.loads(listed.stdout) == []


def test_the_sessions_table_shows_a_long_end_reason_cut_with_its_length(tmp_path: Path) -> None:
    """A fuzz counterexample's end carries the app's message, printed whole: a payload of an
    error buried the table."""
    db = tmp_path / "log.db"
    reason = "fuzz counterexample: " + "x" * 2000
    with SqliteRecorder(db) as recorder:
        started = SessionStarted(COUNTER, "runtime", {}, True)
        ended = SessionEnded(reason)
        recorder.append([NewEvent("f", 1, started, 0.0), NewEvent("f", 2, ended, 1.0)])
    listed = mcp.cli_in_process("sessions", "--db", str(db), columns=2000)
    assert listed.returncode == 0, listed.stderr
    assert f"… ({len('ended for now: ' + reason)} characters)" in listed.stdout
    assert "x" * 1000 not in listed.stdout


def test_a_name_with_a_space_at_an_end_is_shown_quoted_not_as_another(tmp_path: Path) -> None:
    """Made before serve refused such names: 'agent ' passed for 'agent', and ' ' for none.
    (Sessions refuse them now, so the old sessions are written as their starts.)"""
    db = tmp_path / "log.db"
    record(db, "agent", COUNTER, [INCREMENT])
    with SqliteRecorder(db) as recorder:
        started = SessionStarted(COUNTER, "runtime", {}, True)
        recorder.append([NewEvent(name, 1, started, 0.0) for name in ("agent ", " ")])
    listed = mcp.cli_in_process("sessions", "--db", str(db)).stdout
    names = [line.split("│")[1].strip() for line in listed.splitlines() if "counter" in line]
    assert names == ["' '", "agent", "'agent '"]
    audited = mcp.cli_in_process("audit", "agent ", "--db", str(db)).stdout
    assert audited.splitlines()[0].strip() == "perform_action in session 'agent '"


def _sessions(db: Path, columns: str | None) -> list[str]:
    """`semledger sessions` at a terminal's width of `columns` (run in-process), or piped
    with no COLUMNS (None: a child, so)."""
    if columns is not None:
        done = mcp.cli_in_process("sessions", "--db", str(db), columns=int(columns))
        assert done.returncode == 0, done.stderr
        return done.stdout.splitlines()
    env = {k: v for k, v in mcp.env().items() if k != "COLUMNS"}
    done = subprocess.run(
        [*mcp.COMMAND, "sessions", "--db", str(db)],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


@pytest.mark.parametrize("columns", ["80", None], ids=["terminal", "piped"])
def test_a_name_too_long_for_the_table_is_listed_whole_on_a_line_of_its_own(
    logged: Path, tmp_path: Path, columns: str | None
) -> None:
    db = tmp_path / "long.db"
    shutil.copy(logged, db)
    longest = "x" * 5000
    record(db, longest, COUNTER, [])
    title, *lines = _sessions(db, columns)
    assert title == f"sessions in {db}"
    assert not any("│" in line for line in lines)
    at = lines.index(longest)  # never folded: a terminal wraps it, and copies it whole
    assert lines[at + 1 : at + 3] == [f"    {COUNTER}  runtime  3 events",
                                      "    ended for now: script over"]  # fmt: skip
    assert LONG_NAME in (line.split()[0] for line in lines)
    assert any(line.startswith(f"agent  {COUNTER}  runtime  ") for line in lines)


DEMO = "demo-20261206-193748-17331"
FUZZ_REASON = (
    "fuzz counterexample: at input 4: the view reports duplicate_semantic_id"
    " (semantic_id='todo.item', nodes=['10', '14']) (if the app means it, allow it:"
    " duplicate_semantic_id:todo.item)"
)


def _ended(db: Path, ends: dict[str, tuple[str, SessionEnded]]) -> None:
    """Sessions of these names, each of its app, started and ended so."""
    with SqliteRecorder(db) as recorder:
        for name, (app, end) in ends.items():
            started = SessionStarted(app, "runtime", {}, True)
            recorder.append([NewEvent(name, 1, started, 0.0), NewEvent(name, 2, end, 1.0)])


def _words(lines: list[str]) -> set[str]:
    return {word for line in lines for word in line.replace("│", " ").split()}


def test_at_80_columns_the_sessions_list_folds_no_word(tmp_path: Path) -> None:
    """The table folded the app mid-word over three lines (``semledger.e / xamples.tod /
    o:app``) and a fuzz counterexample's state over twenty, a few letters a line."""
    db = tmp_path / "log.db"
    todo = "semledger.examples.todo:app"
    fuzz = "fuzz-20261206-193824-0-474dc6"
    _ended(db, {DEMO: (todo, SessionEnded("end of input")),
                fuzz: (todo, SessionEnded(FUZZ_REASON, "fuzzer"))})  # fmt: skip
    lines = _sessions(db, "80")
    assert max(map(cell_len, lines[1:])) <= 80  # (the title names the log, however long)
    assert lines[1:3] == [f"{DEMO}     {todo}  runtime  2 events",  # aligned
                          "    ended for now: end of input"]  # fmt: skip
    state = f"ended for good: {FUZZ_REASON}"
    assert " ".join(line.strip() for line in lines[4:]) == state
    assert _words(lines) >= set(state.split())


@pytest.mark.parametrize("columns", ["56", "40"])
def test_on_a_narrow_terminal_each_session_breaks_between_its_cells_not_in_them(
    tmp_path: Path, columns: str
) -> None:
    db = tmp_path / "log.db"
    record(db, "agent", COUNTER, [])
    _ended(db, {DEMO: (COUNTER, SessionEnded("deleted by the client", "client"))})
    lines = _sessions(db, columns)
    assert max(map(cell_len, lines[1:])) <= int(columns)
    assert _words(lines) >= {"agent", DEMO, COUNTER, "runtime", "deleted", "client"}
    assert not any("│" in line for line in lines)


def test_a_wide_terminal_wraps_a_long_app_and_state_at_spaces_only(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    app = "an.application.under.test.with_a_long_module_path.for_the_sessions_table:make_app"
    _ended(db, {DEMO: (app, SessionEnded(FUZZ_REASON * 2, "fuzzer")), "agent":
                (COUNTER, SessionEnded("end of input"))})  # fmt: skip
    lines = _sessions(db, "200")
    assert max(map(cell_len, lines)) <= 200
    assert any(line.startswith("┃ session") for line in lines)  # a table still
    state = f"ended for good: {FUZZ_REASON * 2}"
    assert _words(lines) >= {*state.split(), app, DEMO, COUNTER}
    cells = [line.split("│")[5].strip() for line in lines if line.startswith("│")]
    assert " ".join(cell for cell in cells if cell) == f"ended for now: end of input {state}"


def test_a_body_that_does_not_decode_is_named_in_one_line(logged: Path, tmp_path: Path) -> None:
    db = damaged(logged, tmp_path, "UPDATE events SET body = X'c1' WHERE session = 'agent'")
    done = mcp.cli_in_process("read", "agent", "--db", str(db))
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1, done.stderr
    # (The last commit, read first, is the one named.)
    says = "session 'agent', event 7: cannot decode "
    assert done.stderr.startswith(f"semledger: the log {db} cannot be read: {says}")
    assert "not msgpack (FormatError)" in done.stderr


def test_a_body_edited_into_text_is_named_as_a_bad_body_not_dumped(
    logged: Path, tmp_path: Path
) -> None:
    """`body || x'00'` stores TEXT: read back as such, sqlite3 fails to decode it as UTF-8
    with the raw event bytes in its message."""
    edit = "UPDATE events SET body = body || x'00' WHERE session = 'agent' AND seq = 2"
    db = damaged(logged, tmp_path, edit)
    done = mcp.cli_in_process("read", "agent", "--db", str(db))
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1, done.stderr
    says = "session 'agent', event 2: cannot decode "
    assert done.stderr.startswith(f"semledger: the log {db} cannot be read: {says}")
    verified = mcp.cli_in_process("audit", "agent", "--db", str(db), "--verify", columns=200)
    assert verified.returncode == 1, verified.stdout + verified.stderr
    assert "event 2 changed" in verified.stdout


def test_a_malformed_database_page_is_named_in_one_line(logged: Path, tmp_path: Path) -> None:
    db = tmp_path / "damaged.db"
    shutil.copy(logged, db)
    with sqlite3.connect(db) as conn:
        (size,) = conn.execute("PRAGMA page_size").fetchone()
        (root,) = conn.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'events'"
        ).fetchone()
    conn.close()
    data = bytearray(db.read_bytes())
    start = (root - 1) * size  # the events table's first page: its header and cells
    data[start : start + 512] = bytes(range(256)) * 2
    db.write_bytes(bytes(data))
    for command in (["read", "agent"], ["audit", "agent", "--verify"]):
        done = mcp.cli_in_process(*command, "--db", str(db))
        assert done.returncode == 1, (command, done.stdout, done.stderr)
        assert done.stderr.count("\n") == 1, done.stderr
        assert "cannot be read: " in done.stderr


def test_an_audit_shows_a_time_the_log_holds_that_is_no_time(
    logged: Path, tmp_path: Path
) -> None:
    # `at` is not chained: the chain still verifies, and the verdict must still be printed.
    db = damaged(logged, tmp_path, "UPDATE events SET at = 1e20 WHERE session = 'agent'")
    done = mcp.cli_in_process("audit", "agent", "--db", str(db), "--verify")
    assert done.returncode == 0, done.stderr
    assert "1e+20" in done.stdout
    assert "integrity chain: session 'agent': ok" in done.stdout


def test_a_verified_audit_read_by_head_ends_with_its_verdict(tmp_path: Path) -> None:
    """A reader that stops early is no failed check: exit 0 for a chain that verifies."""
    db = tmp_path / "long.db"
    record(db, "long", COUNTER, [INCREMENT] * 600)  # a table larger than a pipe holds
    process = subprocess.Popen(
        [*mcp.COMMAND, "audit", "long", "--db", str(db), "--verify"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=mcp.env(),
    )
    assert process.stdout is not None
    assert process.stderr is not None
    assert b"perform_action in session long" in process.stdout.readline()
    process.stdout.close()
    assert process.wait(timeout=60) == 0
    assert process.stderr.read() == b""


def test_a_json_audit_read_by_head_keeps_its_failed_status_and_damage_line(
    tmp_path: Path,
) -> None:
    """A reader that stops early hid a failed check: `--json | head -1` exited 0, and the
    line naming the damage, printed after the JSON, was lost."""
    logged = tmp_path / "long.db"
    record(logged, "long", COUNTER, [INCREMENT] * 600)  # more JSON than a pipe holds
    db = damaged(
        logged, tmp_path, "UPDATE events SET body = X'c1' WHERE session = 'long' AND seq = 5"
    )
    process = subprocess.Popen(
        [*mcp.COMMAND, "audit", "long", "--db", str(db), "--verify", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=mcp.env(),
    )
    assert process.stdout is not None
    assert process.stderr is not None
    assert process.stdout.readline() == b"{\n"
    process.stdout.close()
    assert process.wait(timeout=60) == 1
    said = process.stderr.read().decode()
    assert said.startswith(f"semledger: the log {db} is damaged: event 5 of session 'long'")
    assert said.count("\n") == 1, said


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        ("events = 'many'", "its events is 'many'"),
        ("surface = X'01'", "its surface is b'\\x01'"),
        ("last_at = X'00'", "its last_at is b'\\x00'"),
    ],
)
def test_a_summary_row_edited_by_hand_is_named_in_one_line(
    logged: Path, tmp_path: Path, edit: str, says: str
) -> None:
    db = damaged(logged, tmp_path, f"UPDATE sessions SET {edit} WHERE name = 'agent'")
    done = mcp.cli_in_process("audit", "agent", "--verify", "--db", str(db))
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert done.stderr == (
        f"semledger: the log {db} cannot be read: "
        f"the summary of session 'agent' is malformed: {says}\n"
    )


def test_a_seq_edited_into_text_is_named_in_one_line_by_every_command(
    logged: Path, tmp_path: Path
) -> None:
    """sessions, audit (with --verify, with --json), read and replay each ended in a
    TypeError traceback."""
    edit = "UPDATE events SET seq = '3a' WHERE session = 'agent' AND seq = 3"
    db = damaged(logged, tmp_path, edit)
    says = "session 'agent': an event is malformed: its seq is '3a', not an integer"
    for command in (
        ["audit", "agent"],
        ["audit", "agent", "--verify"],
        ["audit", "agent", "--json"],
        ["read", "agent"],
        ["replay", "agent"],
    ):
        done = mcp.cli_in_process(*command, "--db", str(db))
        assert (done.returncode, done.stdout, done.stderr) == (
            1,
            "",
            f"semledger: the log {db} cannot be read: {says}\n",
        ), command
    listed = mcp.cli_in_process("sessions", "--json", "--db", str(db))
    assert listed.returncode == 1, listed.stderr
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    assert set(rows) == {"agent", "[/]", LONG_NAME, "two\nlines"}
    assert f"session 'agent': {rows['agent']['problem']}" == says
    assert listed.stderr == f"semledger: the log {db} is damaged: {says}\n"


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        ("version = '1a'", "its version is '1a', not an integer"),
        ("topic = X'41'", "its topic is b'A', not text"),
    ],
)
def test_an_event_column_edited_into_another_type_is_damage_in_one_line(
    logged: Path, tmp_path: Path, edit: str, says: str
) -> None:
    """A text version or a bytes topic ended in a traceback."""
    db = damaged(logged, tmp_path, f"UPDATE events SET {edit} WHERE session = 'agent' AND seq = 3")
    for command in (["audit", "agent", "--verify"], ["audit", "agent", "--json"]):
        done = mcp.cli_in_process(*command, "--db", str(db))
        assert (done.returncode, done.stdout, done.stderr) == (
            1,
            "",
            f"semledger: the log {db} cannot be read: session 'agent': event 3 is malformed:"
            f" {says}\n",
        ), command


def test_an_audit_lists_every_action_and_verifies_the_chain_past_a_time_edited_into_text(
    logged: Path, tmp_path: Path
) -> None:
    """`audit --verify --json` printed no JSON, no action and no verdict, only the event
    malformed (exit 1): the time, which the chain does not cover, stopped the whole audit.
    (Session 'agent': 3 request 1, 5 its receipt, 6 request 2, 8 its receipt.)"""
    edit = "UPDATE events SET at = 'yesterday' WHERE session = 'agent' AND seq = 6"
    db = damaged(logged, tmp_path, edit)
    says = (
        "event 6 of session 'agent' cannot be read: session 'agent': event 6 is malformed:"
        " its at is 'yesterday', not a number of seconds"
    )
    done = mcp.cli_in_process("audit", "agent", "--db", str(db), "--verify", "--json")
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr == f"semledger: the log {db} is damaged: {says}\n"
    out = json.loads(done.stdout)
    assert out["unreadable"] == says
    assert out["verify"]["ok"] is True, out["verify"]
    first, second = out["actions"]
    assert (first["request_id"], first["outcome"], first["unread"]) == (1, "receipt", False)
    assert (second["request_id"], second["seq"], second["unread"]) == (2, 6, True)
    assert second["outcome"] == "receipt"
    table = mcp.cli_in_process("audit", "agent", "--db", str(db), "--verify")
    assert (table.returncode, table.stderr) == (1, done.stderr)
    assert "integrity chain: session 'agent': ok" in table.stdout


@pytest.mark.parametrize(
    ("edit", "says"),
    [("events = 'many'", "its events is 'many'"), ("last_at = X'00'", "its last_at is b'\\x00'")],
)
def test_sessions_lists_every_session_past_a_malformed_summary_row(
    logged: Path, tmp_path: Path, edit: str, says: str
) -> None:
    db = damaged(logged, tmp_path, f"UPDATE sessions SET {edit} WHERE name = 'agent'")
    done = mcp.cli_in_process("sessions", "--json", "--db", str(db))
    assert done.returncode == 1, done.stderr
    listed = {row["name"]: row for row in json.loads(done.stdout)}
    assert set(listed) == {"agent", "[/]", LONG_NAME, "two\nlines"}
    assert listed["agent"]["events"] == 9  # as the log's events say
    assert done.stderr == (
        f"semledger: the log {db} is damaged: session 'agent': its row in the log's summary"
        f" is malformed: {says}\n"
    )


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (
            "DELETE FROM sessions WHERE name = 'agent'",
            ["session 'agent': it has 9 events and no row in the log's summary"],
        ),
        (
            "UPDATE sessions SET name = 'ghost' WHERE name = 'agent'",
            [
                "session 'agent': it has 9 events and no row in the log's summary",
                "session 'ghost': the log's summary lists it; it has no events",
            ],
        ),
        (
            "UPDATE sessions SET events = 4 WHERE name = 'agent'",
            ["session 'agent': its summary counts 4 events, the log holds 9"],
        ),
        (
            "UPDATE sessions SET app = 'evil:app' WHERE name = 'agent'",
            [f"session 'agent': its summary says 'evil:app' on 'runtime', its start {COUNTER!r}"
             " on 'runtime'"],
        ),
        (
            "UPDATE sessions SET ended = 0, end_reason = NULL WHERE name = 'agent'",
            ["session 'agent': its summary says open, its last event ended (script over)"],
        ),
    ],
    ids=["row deleted", "row renamed", "count", "app", "ended"],
)
def test_sessions_names_a_summary_row_that_disagrees_with_the_events_and_lists_them(
    logged: Path, tmp_path: Path, edit: str, says: list[str]
) -> None:
    db = damaged(logged, tmp_path, edit)
    done = mcp.cli_in_process("sessions", "--db", str(db), "--json")
    assert done.returncode == 1, done.stderr
    assert done.stderr == "".join(f"semledger: the log {db} is damaged: {line}\n" for line in says)
    listed = {s["name"]: s for s in json.loads(done.stdout)}
    ghosts = ["ghost"] if "ghost" in edit else []
    assert sorted(listed) == sorted(["agent", "[/]", "two\nlines", LONG_NAME, *ghosts])
    agent = listed["agent"]
    assert (agent["app"], agent["surface"], agent["events"]) == (COUNTER, "runtime", 9)
    assert (agent["ended"], agent["end_reason"]) == (True, "script over")
    # The JSON says it too, for a script that reads no stderr (the row of the session
    # that has events, not of one that exists only in the summary).
    agents = [line.removeprefix("session 'agent': ") for line in says if "'agent'" in line]
    assert agent["problem"] == ("; ".join(agents) or None)
    assert listed["[/]"]["problem"] is None
    table = mcp.cli_in_process("sessions", "--db", str(db))
    assert (table.returncode, table.stderr) == (1, done.stderr)
    assert "│ agent " in table.stdout
    if "ghost" in listed:  # a row of no events: listed as the summary has it, with no events
        assert listed["ghost"]["events"] == 0
        assert listed["ghost"]["problem"] == "the log's summary lists it; it has no events"
        assert "│ ghost " in table.stdout


@pytest.mark.parametrize(
    ("edit", "events", "final", "says"),
    [
        ("DELETE FROM events WHERE session = 'agent'", 0, None,
         "the log's summary lists it; it has no events"),
        ("UPDATE events SET at = 'yesterday' WHERE session = 'agent' AND seq = 9", 9, None,
         "event 9 is malformed: its at is 'yesterday', not a number of seconds"),
        ("UPDATE events SET at = 'yesterday' WHERE session = 'agent' AND seq = 1", 9, False,
         "event 1 is malformed: its at is 'yesterday', not a number of seconds"),
    ],
    ids=["events deleted", "last at", "first at"],
)  # fmt: skip
def test_sessions_lists_a_session_whose_events_cannot_say_what_it_is_with_its_problem(
    logged: Path, tmp_path: Path, edit: str, events: int, final: bool | None, says: str
) -> None:
    """It was named on stderr alone, left out of the table and of the JSON."""
    db = damaged(logged, tmp_path, edit)
    done = mcp.cli_in_process("sessions", "--json", "--db", str(db))
    assert done.returncode == 1, done.stderr
    assert done.stderr == f"semledger: the log {db} is damaged: session 'agent': {says}\n"
    listed = {row["name"]: row for row in json.loads(done.stdout)}
    assert set(listed) == {"agent", "[/]", LONG_NAME, "two\nlines"}
    agent = listed["agent"]
    assert (agent["app"], agent["events"], agent["problem"]) == (COUNTER, events, says)
    assert (agent["ended"], agent["end_reason"], agent["final"]) == (True, "script over", final)
    table = mcp.cli_in_process("sessions", "--db", str(db))
    assert (table.returncode, table.stderr) == (1, done.stderr)
    assert "│ agent " in table.stdout


def test_sessions_json_lists_a_session_without_a_summary_row_or_readable_events_by_name(
    logged: Path, tmp_path: Path
) -> None:
    db = damaged(
        logged,
        tmp_path,
        "DELETE FROM sessions WHERE name = 'agent'",
        "UPDATE events SET at = 'yesterday' WHERE session = 'agent' AND seq = 9",
    )
    done = mcp.cli_in_process("sessions", "--json", "--db", str(db))
    assert done.returncode == 1, done.stderr
    agent = {row["name"]: row for row in json.loads(done.stdout)}["agent"]
    assert (agent["app"], agent["events"], agent["first_at"], agent["last_at"]) == (
        None, 9, None, None,
    )  # fmt: skip
    says = "event 9 is malformed: its at is 'yesterday', not a number of seconds"
    assert agent["problem"] == says


def test_sessions_lists_a_session_whose_row_is_malformed_and_events_all_deleted(
    logged: Path, tmp_path: Path
) -> None:
    """With both kinds of damage it was left out of the table and the JSON, exit 0."""
    db = damaged(
        logged,
        tmp_path,
        "UPDATE sessions SET first_at = 'x' WHERE name = 'agent'",
        "DELETE FROM events WHERE session = 'agent'",
    )
    done = mcp.cli_in_process("sessions", "--json", "--db", str(db))
    assert done.returncode == 1, done.stderr
    says = "its row in the log's summary is malformed: its first_at is 'x'; it has no events"
    assert done.stderr == f"semledger: the log {db} is damaged: session 'agent': {says}\n"
    agent = {row["name"]: row for row in json.loads(done.stdout)}["agent"]
    assert (agent["events"], agent["problem"]) == (0, says)


def test_sessions_names_an_event_1_that_is_not_the_start_as_damage(
    logged: Path, tmp_path: Path
) -> None:
    """It was listed with no problem, exit 0, while replay refused the log as damaged."""
    db = damaged(
        logged,
        tmp_path,
        "UPDATE events SET seq = -1 WHERE session = 'agent' AND seq = 1",
        "UPDATE events SET seq = 1 WHERE session = 'agent' AND seq = 2",
        "UPDATE events SET seq = 2 WHERE session = 'agent' AND seq = -1",
    )
    done = mcp.cli_in_process("sessions", "--json", "--db", str(db))
    assert done.returncode == 1, done.stderr
    agent = {row["name"]: row for row in json.loads(done.stdout)}["agent"]
    assert agent["problem"].startswith("its first event is a "), agent["problem"]
    assert agent["problem"].endswith(", not the SessionStarted a session begins with")


def test_audit_json_has_every_key_null_when_it_has_nothing_to_say(logged: Path) -> None:
    """`unreadable` and `verify` were left out then: a strict schema could not be written."""
    done = mcp.cli_in_process("audit", "agent", "--db", str(logged), "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert list(out) == [
        "session", "redact_passwords", "actions", "incidents", "diagnostics_inputs",
        "connections", "end", "unreadable", "verify",
    ]  # fmt: skip
    assert (out["unreadable"], out["verify"]) == (None, None)
    checked = mcp.cli_in_process("audit", "agent", "--db", str(logged), "--json", "--verify")
    verified = json.loads(checked.stdout)
    assert list(verified) == list(out)
    assert verified["verify"]["ok"] is True


def test_an_audit_lists_every_action_past_an_event_that_does_not_decode(
    logged: Path, tmp_path: Path
) -> None:
    """Session 'agent': 3 request 1, 5 its receipt, 6 request 2, 8 its receipt."""
    db = damaged(
        logged, tmp_path, "UPDATE events SET body = X'c1' WHERE session = 'agent' AND seq = 5"
    )
    done = mcp.cli_in_process("audit", "agent", "--db", str(db), "--json")
    assert done.returncode == 1
    out = json.loads(done.stdout)
    assert [entry["outcome"] for entry in out["actions"]] == ["unreadable", "receipt"]
    assert out["unreadable"].startswith("event 5 of session 'agent' cannot be read: ")
    assert done.stderr == f"semledger: the log {db} is damaged: {out['unreadable']}\n"
    table = mcp.cli_in_process("audit", "agent", "--db", str(db))
    assert table.returncode == 1
    assert table.stderr == done.stderr
    assert "cannot be read" not in table.stdout
    assert [row.split("│")[7].strip() for row in table.stdout.splitlines() if "│" in row] == [
        "unreadable",
        "receipt",
    ]


def test_an_audit_shows_a_request_that_does_not_decode_by_its_answer(
    logged: Path, tmp_path: Path
) -> None:
    db = damaged(
        logged, tmp_path, "UPDATE events SET body = X'c1' WHERE session = 'agent' AND seq IN (3, 8)"
    )
    done = mcp.cli_in_process("audit", "agent", "--db", str(db), "--json")
    assert done.returncode == 1
    first, second = json.loads(done.stdout)["actions"]
    assert (first["request_id"], first["seq"], first["unread"]) == (1, 3, True)
    assert (first["target"], first["action"], first["precondition"]) == (None, None, None)
    assert (first["outcome"], first["before"], first["after"]) == ("receipt", "1", "2")
    assert (second["request_id"], second["outcome"], second["unread"]) == (2, "unreadable", False)
    assert done.stderr.count("\n") == 1
    assert done.stderr.endswith(" (damaged too: event 8)\n")


def test_an_audit_and_a_read_name_a_deleted_event_and_fail(logged: Path, tmp_path: Path) -> None:
    """Session 'agent': 3 request 1, 5 its receipt, 6 request 2, 8 its receipt."""
    db = damaged(logged, tmp_path, "DELETE FROM events WHERE session = 'agent' AND seq = 6")
    says = "event 6 of session 'agent' is missing: the session's events go from event 5 to event 7"
    done = mcp.cli_in_process("audit", "agent", "--db", str(db), "--json")
    assert done.returncode == 1
    assert done.stderr == f"semledger: the log {db} is damaged: {says}\n"
    first, second = json.loads(done.stdout)["actions"]
    assert (first["request_id"], first["outcome"], first["unread"]) == (1, "receipt", False)
    assert (second["request_id"], second["outcome"], second["unread"]) == (2, "receipt", True)
    read = mcp.cli_in_process("read", "agent", "--db", str(db))
    assert read.returncode == 1
    assert read.stderr == (
        f"semledger: the log {db} cannot be read: session 'agent', event 6: missing:"
        " the session's events go from event 5 to event 7\n"
    )


def test_a_cut_tail_is_damage_to_audit_read_and_replay_not_a_shorter_session(
    logged: Path, tmp_path: Path
) -> None:
    """With the summary still counting them, the events from 8 on were gone: read served
    generation 2 as the last (exit 0) and refused the third the agent was shown as bad
    usage, audit showed request 2 unanswered, replay said identical."""
    db = damaged(logged, tmp_path, "DELETE FROM events WHERE session = 'agent' AND seq >= 8")
    audited = mcp.cli_in_process("audit", "agent", "--db", str(db), "--json")
    assert audited.returncode == 1, audited.stdout + audited.stderr
    assert "event 8 of session 'agent' is missing: the log's summary counts" in audited.stderr
    counted = "the summary of session 'agent' is malformed: it counts"
    for command in (["read", "agent"], ["replay", "agent"]):
        done = mcp.cli_in_process(*command, "--db", str(db))
        assert done.returncode == 1, (command, done.stdout, done.stderr)
        assert done.stderr.startswith(f"semledger: the log {db} cannot be read: {counted}")


@pytest.mark.parametrize(
    ("statement", "asked", "says"),
    [
        (
            "UPDATE events SET body = x'c1' WHERE session = 'agent' AND seq = 7",
            2,
            "session 'agent', event 7: cannot decode Committed version 1: not msgpack",
        ),
        (
            "DELETE FROM events WHERE session = 'agent' AND seq >= 8",
            3,
            "the summary of session 'agent' is malformed: it counts",
        ),
    ],
    ids=["a-later-commit-does-not-decode", "a-cut-tail"],
)
def test_a_read_of_a_generation_before_the_damage_is_printed_and_fails_naming_it(
    logged: Path, tmp_path: Path, statement: str, asked: int, says: str
) -> None:
    """Session 'agent' commits generation 3 at event 7. What the agent was shown at a
    generation the damage comes after is still in the log: before, the read printed
    nothing."""
    db = damaged(logged, tmp_path, statement)
    done = mcp.cli_in_process(
        "read", "agent", "--db", str(db), "--generation", str(asked), "--json"
    )
    assert done.returncode == 1
    assert json.loads(done.stdout)["generation"] == str(asked)
    assert done.stderr.startswith(
        f"semledger: the log {db} is damaged after generation {asked}: {says}"
    )
    assert done.stderr.endswith("; the read above comes from the events before the damage\n")


def test_a_read_of_the_generation_whose_commit_does_not_decode_prints_nothing(
    logged: Path, tmp_path: Path
) -> None:
    statement = "UPDATE events SET body = x'c1' WHERE session = 'agent' AND seq = 7"
    db = damaged(logged, tmp_path, statement)
    done = mcp.cli_in_process("read", "agent", "--db", str(db), "--generation", "3")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"semledger: the log {db} cannot be read: session 'agent', event 7: cannot decode"
        " Committed version 1: not msgpack (FormatError)\n"
    )


def test_a_read_of_a_generation_after_a_missing_event_prints_nothing(
    logged: Path, tmp_path: Path
) -> None:
    db = damaged(logged, tmp_path, "DELETE FROM events WHERE session = 'agent' AND seq = 6")
    done = mcp.cli_in_process("read", "agent", "--db", str(db), "--generation", "3")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith(f"semledger: the log {db} cannot be read: session 'agent'")


def test_a_gap_is_damage_to_replay_not_a_divergence(logged: Path, tmp_path: Path) -> None:
    db = damaged(logged, tmp_path, "DELETE FROM events WHERE session = 'agent' AND seq = 6")
    done = mcp.cli_in_process("replay", "agent", "--db", str(db))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "DIVERGED" not in done.stdout
    assert done.stderr == (
        f"semledger: the log {db} cannot be read: session 'agent', event 6: missing:"
        " the session's events go from event 5 to event 7\n"
    )


def test_an_anchored_audit_of_a_session_whose_events_are_all_gone_fails_the_check(
    logged: Path, tmp_path: Path
) -> None:
    """It was 'the log has no session', exit 2: bad usage, where the anchor proves the
    session was there."""
    verified = mcp.cli_in_process("audit", "agent", "--db", str(logged), "--verify")
    anchor = re.search(r"[0-9]+:[0-9a-f]{64}", verified.stdout)
    assert anchor is not None, verified.stdout
    db = damaged(logged, tmp_path, "DELETE FROM events WHERE session = 'agent'")
    done = mcp.cli_in_process("audit", "agent", "--db", str(db), "--anchor", anchor.group())
    assert done.returncode == 1, done.stdout + done.stderr
    assert "event 1 missing: the log ends before the anchor seq" in done.stdout


def test_a_malformed_page_read_as_the_log_opens_is_damage_not_bad_usage(
    logged: Path, tmp_path: Path
) -> None:
    """The schema version is read first: a damaged page there is a damaged log (exit 1),
    not a file that holds no log (exit 2)."""
    db = tmp_path / "damaged.db"
    shutil.copy(logged, db)
    with sqlite3.connect(db) as conn:
        (size,) = conn.execute("PRAGMA page_size").fetchone()
        (root,) = conn.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'schema_version'"
        ).fetchone()
    conn.close()
    data = bytearray(db.read_bytes())
    start = (root - 1) * size
    data[start : start + 8] = b"\x0d" + b"\xff" * 7
    db.write_bytes(bytes(data))
    for command in (["sessions"], ["audit", "agent", "--verify"]):
        done = mcp.cli_in_process(*command, "--db", str(db))
        assert done.returncode == 1, (command, done.stdout, done.stderr)
        assert done.stderr == (
            f"semledger: the log {db} cannot be read: database disk image is malformed\n"
        )
    not_a_log = tmp_path / "text.db"
    not_a_log.write_text("hello, this is not a database at all, just some text\n" * 100)
    done = mcp.cli_in_process("sessions", "--db", str(not_a_log))
    assert done.returncode == 2, done.stderr
    assert "file is not a database" in done.stderr


@pytest.mark.parametrize(
    ("version", "holds"),
    [(1, "the sessions table of version 2"), (2, "the sessions.end_reason column of version 3")],
)
def test_a_schema_version_set_back_by_hand_is_damage_and_the_log_is_left_as_it_is(
    logged: Path, tmp_path: Path, version: int, holds: str
) -> None:
    db = damaged(logged, tmp_path, f"UPDATE schema_version SET version = {version}")
    before = db.read_bytes()
    done = mcp.cli("sessions", "--db", str(db))
    assert (done.returncode, done.stderr) == (
        1,
        f"semledger: cannot open the log {db}: its schema version says {version},"
        f" but it holds {holds}: it was edited\n",
    )
    assert db.read_bytes() == before


def test_a_schema_version_without_an_events_table_is_damage_named_as_such(
    tmp_path: Path,
) -> None:
    """It failed as SQLite's "no such table: events", as though the user had mistyped."""
    db = schema_version_only(tmp_path / "edited.db", 1)
    done = mcp.cli_in_process("sessions", "--db", str(db))
    assert (done.returncode, done.stderr) == (
        1,
        f"semledger: cannot open the log {db}: its schema version says 1,"
        " but it has no events table: it was edited\n",
    )


@pytest.mark.parametrize("version", ["'x'", "''", "4.5", "0", "-1", "X'01'"])
@pytest.mark.parametrize("command", [["sessions"], ["serve", COUNTER]], ids=" ".join)
def test_a_schema_version_that_is_no_version_is_damage_and_the_log_is_left_as_it_is(
    logged: Path, tmp_path: Path, version: str, command: list[str]
) -> None:
    db = damaged(logged, tmp_path, f"UPDATE schema_version SET version = {version}")
    with sqlite3.connect(db) as conn:
        (held,) = conn.execute("SELECT version FROM schema_version").fetchone()
    conn.close()
    before = db.read_bytes()
    done = mcp.cli(*command, "--db", str(db))
    assert (done.returncode, done.stderr) == (
        1,
        f"semledger: cannot open the log {db}: its schema_version table holds {held!r},"
        " not a version\n",
    )
    assert db.read_bytes() == before


def test_piped_output_keeps_each_line_whole(tmp_path: Path) -> None:
    """Not a terminal and no COLUMNS: rich would wrap at 80 columns, splitting the verdict
    and the command it gives to replay the counterexample."""
    db = tmp_path / "log.db"
    env = {k: v for k, v in mcp.env().items() if k != "COLUMNS"}
    done = subprocess.run(
        [*mcp.COMMAND, "fuzz", "tests_fuzz_random:app", "--db", str(db), "--examples", "5"],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    first, found, saved, caveat, steps, *shown = done.stdout.splitlines()
    assert first.startswith("counterexample: the app is not deterministic: ")
    assert first.endswith("must depend on their arguments alone)")
    assert re.fullmatch(r"found by example [1-5] of 5, then shrunk", found), found
    assert saved.startswith("saved as session 'fuzz-")
    assert saved.endswith(f"--db {db}")
    assert caveat.endswith("replay it a few times")
    assert steps.startswith("its steps ("), done.stdout
    assert shown, done.stdout


def _run_with(db: Path, command: tuple[str, ...], **sizes: str) -> subprocess.CompletedProcess[str]:
    """`command` on `db` as a child with neither COLUMNS nor LINES, but for `sizes`."""
    unset = {k: v for k, v in mcp.env().items() if k not in ("COLUMNS", "LINES")}
    return subprocess.run(
        [*mcp.COMMAND, *command, "--db", str(db)], capture_output=True, text=True,
        env={**unset, **sizes}, timeout=120, check=False,
    )


_unsized = functools.cache(_run_with)


@pytest.mark.parametrize(
    ("name", "value"),
    [("COLUMNS", "0"), ("COLUMNS", "00"), ("COLUMNS", "²"), ("COLUMNS", "wide"), ("LINES", "²")],
)
def test_a_columns_or_lines_that_is_no_positive_number_is_as_if_unset(
    logged: Path, name: str, value: str
) -> None:
    """Rich took COLUMNS=0 for a width of nothing: every command printed nothing at all,
    `audit --verify` no verdict, and exited 0; a digit that is no decimal one (²) in either
    was a traceback."""
    for command in (("sessions",), ("audit", "agent", "--verify")):
        done = _run_with(logged, command, **{name: value})
        assert (done.returncode, done.stderr) == (0, ""), (command, done.stderr)
        assert done.stdout == _unsized(logged, command).stdout != "", command


@pytest.mark.parametrize("command", [["replay", "agent"], ["audit", "agent", "--verify"]])
def test_output_a_locale_cannot_encode_is_escaped_not_a_crash(
    logged: Path, command: list[str]
) -> None:
    """Where output is not UTF-8 (a Latin-1 locale), the verdict's dash and the audit's
    arrows raised UnicodeEncodeError: a traceback, and exit 1, which reads as a failed
    check."""
    done = subprocess.run(
        [*mcp.COMMAND, *command, "--db", str(logged)],
        capture_output=True, text=True, timeout=120, check=False,
        env=mcp.env(PYTHONIOENCODING="latin-1", PYTHONUTF8="0"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "\\u2014" in done.stdout or "\\u2192" in done.stdout, done.stdout


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize(
    "command",
    [["sessions"], ["sessions", "--json"], ["read", "agent"], ["read", "agent", "--json"],
     ["audit", "agent", "--verify"], ["audit", "agent", "--json"], ["--help"],
     ["audit", "--help"]],
    ids=" ".join,
)
@pytest.mark.parametrize("unbuffered", ["", "1"], ids=["buffered", "unbuffered"])
def test_output_that_cannot_be_written_is_one_line_on_stderr(
    logged: Path, command: list[str], unbuffered: str
) -> None:
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [*mcp.COMMAND, *command, "--db", str(logged)],
            stdout=full, stderr=subprocess.PIPE, text=True, timeout=120, check=False,
            env=mcp.env(PYTHONUNBUFFERED=unbuffered),
        )
    assert (done.returncode, done.stderr) == (
        1, "semledger: cannot write to standard output: No space left on device\n"
    )


def test_a_closed_standard_output_is_one_line_on_stderr(logged: Path) -> None:
    done = subprocess.run(
        ["sh", "-c", 'exec "$@" >&-', "sh", *mcp.COMMAND, "sessions", "--db", str(logged)],
        capture_output=True, text=True, env=mcp.env(), timeout=120, check=False,
    )
    assert (done.returncode, done.stderr) == (
        1, "semledger: standard output is closed: nowhere to print to\n"
    )


@pytest.mark.parametrize("asked", [["--help"], ["--version"], ["sessions", "--help"]])
def test_help_or_the_version_over_a_closed_standard_output_is_one_line_on_stderr(
    asked: list[str],
) -> None:
    """They ended in an AttributeError's traceback: sys.stdout is None."""
    done = subprocess.run(
        ["sh", "-c", 'exec "$@" >&-', "sh", *mcp.COMMAND, *asked],
        capture_output=True, text=True, env=mcp.env(), timeout=120, check=False,
    )
    assert (done.returncode, done.stderr) == (
        1, "semledger: standard output is closed: nowhere to print to\n"
    )


@pytest.mark.parametrize(
    "serving",
    [["serve", "semledger.examples.counter:app"],
     ["serve", "--adapter", "runtime", "--app", "semledger.examples.counter:app"]],
    ids=["app", "runtime-adapter"],
)
def test_serving_over_a_closed_standard_output_is_one_line_on_stderr(
    tmp_path: Path, serving: list[str]
) -> None:
    """It printed an OSError's traceback (the app), or a served session's failure followed by
    Trio's complaints of a run abandoned (the adapter)."""
    done = subprocess.run(
        ["sh", "-c", 'exec "$@" >&-', "sh", *mcp.COMMAND, *serving, "--db",
         str(tmp_path / "log.db")],
        capture_output=True, text=True, env=mcp.env(), timeout=120, check=False,
        stdin=subprocess.DEVNULL,
    )
    assert (done.returncode, done.stderr) == (
        1,
        "semledger: standard output is closed: nowhere to send the session's answers (serve"
        " over --http HOST:PORT, or give it an output)\n",
    )


def _with_stderr_closed(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """``semledger ARGS`` started with its standard error closed (``2>&-``)."""
    return subprocess.run(
        ["sh", "-c", 'exec "$@" 2>&-', "sh", *mcp.COMMAND, *args],
        input=stdin, capture_output=True, text=True, env=mcp.env(), timeout=120, check=False,
    )


def test_serve_with_standard_error_closed_writes_nothing_but_json_rpc_to_stdout(
    tmp_path: Path,
) -> None:
    """Its status lines went to stdout, between the answers an MCP client reads there."""
    done = _with_stderr_closed(
        "serve", "semledger.examples.counter:app", "--db", str(tmp_path / "log.db"),
        stdin=mcp.initialize() + mcp.read(1),
    )  # fmt: skip
    assert done.returncode == 0
    assert [json.loads(line)["id"] for line in done.stdout.splitlines()] == [0, 1]


def test_an_error_with_standard_error_closed_is_not_written_to_stdout(tmp_path: Path) -> None:
    done = _with_stderr_closed("read", "s", "--json", "--db", str(tmp_path / "none.db"))
    assert (done.returncode, done.stdout) == (2, "")


def _without_write_rights(*args: str) -> subprocess.CompletedProcess[str]:
    """``semledger ARGS`` unable to write where permissions say it may not (root ignores
    them unless it drops the capabilities that let it)."""
    drop = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search,-fowner", "--"]
    return subprocess.run(
        [*(drop if os.geteuid() == 0 else []), *mcp.COMMAND, *args],
        capture_output=True, text=True, env=mcp.env(), timeout=120, check=False,
    )


def test_a_log_in_a_read_only_folder_is_inspected_as_it_is(logged: Path, tmp_path: Path) -> None:
    """Inspecting writes nothing, so an archived log (a read-only folder, where SQLite
    cannot make the -shm a WAL read needs) is read; one that would need migrating is
    refused with the reason, not migrated."""
    folder = tmp_path / "archive"
    folder.mkdir()
    shutil.copy(logged, folder / "log.db")
    shutil.copy(Path(__file__).parent / "fixtures" / "eventlog_v1.db", folder / "old.db")
    before = (folder / "log.db").read_bytes()
    folder.chmod(0o555)
    try:
        db = str(folder / "log.db")
        for command in (
            ["sessions"], ["read", "agent"], ["audit", "agent", "--verify"], ["replay", "agent"]
        ):
            done = _without_write_rights(*command, "--db", db)
            assert done.returncode == 0, (command, done.stdout, done.stderr)
        old = _without_write_rights("sessions", "--db", str(folder / "old.db"))
        assert old.returncode == 2, old.stdout + old.stderr
        assert "it is read-only and its schema version 1 needs migrating to" in old.stderr
    finally:
        folder.chmod(0o755)
    assert (folder / "log.db").read_bytes() == before
    assert sorted(p.name for p in folder.iterdir()) == ["log.db", "old.db"]


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A folder on a 512 KiB tmpfs (root only), to be filled by the test."""
    folder = tmp_path / "full"
    folder.mkdir()
    if os.geteuid() != 0 or subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(folder)],
        capture_output=True, check=False,
    ).returncode:
        pytest.skip("mounting a small tmpfs needs root")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def _fill(folder: Path, leaving: int = 0) -> None:
    """Fill the disk of `folder` up to `leaving` bytes free."""
    filler = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        with contextlib.suppress(OSError):
            while _free(folder) > leaving and os.write(filler, b"\0" * 4096):
                pass
    finally:
        os.close(filler)


def _free(folder: Path) -> int:
    stats = os.statvfs(folder)
    return stats.f_bavail * stats.f_frsize


def test_a_log_on_a_full_disk_is_inspected_and_serve_says_the_disk_is_full(
    logged: Path, full_disk: Path
) -> None:
    """The inspection commands opened a cleanly closed log read-write, which needs a -wal
    and a -shm: on a full disk they failed with "disk I/O error" and left a 0-byte -wal
    and a 3-byte -shm; serve said "disk I/O error" too."""
    db = full_disk / "log.db"
    shutil.copy(logged, db)
    before = db.read_bytes()
    _fill(full_disk)
    for command in (
        ["sessions"], ["read", "agent"], ["audit", "agent", "--verify"], ["replay", "agent"]
    ):
        done = subprocess.run(
            [*mcp.COMMAND, *command, "--db", str(db)],
            capture_output=True, text=True, env=mcp.env(), timeout=120, check=False,
        )
        assert done.returncode == 0, (command, done.stdout, done.stderr)
    served = subprocess.run(
        [*mcp.COMMAND, "serve", COUNTER, "--db", str(db), "--session", "agent"],
        input="", capture_output=True, text=True, env=mcp.env(), timeout=120, check=False,
    )
    assert served.returncode == 2, served.stderr
    assert f"cannot open the log {db}: the disk is full (" in served.stderr
    assert db.read_bytes() == before
    assert sorted(p.name for p in full_disk.iterdir()) == ["filler", "log.db"]


def test_a_new_log_on_a_nearly_full_disk_is_made_whole_and_served_once_there_is_room(
    full_disk: Path,
) -> None:
    """With 90 KiB free (more than the 64 KiB checked for), the new log was linked into
    place before its -wal, which closing could not fold into it on the full disk, held its
    schema: every command then called the log malformed, and the -wal and -shm it was built
    with were left beside it."""
    db = full_disk / "log.db"
    _fill(full_disk, leaving=90 * 1024)
    served = subprocess.run(
        [*mcp.COMMAND, "serve", COUNTER, "--db", str(db), "--session", "agent"],
        input="", capture_output=True, text=True, env=mcp.env(), timeout=120, check=False,
    )  # fmt: skip
    assert "malformed" not in served.stderr
    # its session started, then its log filled: its claim tells it is not served
    assert sorted(p.name for p in full_disk.iterdir()) == ["filler", "log.db", "log.db-claims"]
    (full_disk / "filler").unlink()
    for command in (["sessions"], ["serve", COUNTER, "--session", "agent"]):
        done = subprocess.run(
            [*mcp.COMMAND, *command, "--db", str(db)],
            input="", capture_output=True, text=True, env=mcp.env(), timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0, (command, done.stderr)
    assert sorted(p.name for p in full_disk.iterdir()) == ["log.db"]


def _under_a_write_limit(*args: str) -> subprocess.CompletedProcess[str]:
    """`semledger ARGS` allowed to write files of at most 1 KiB (``ulimit -f 1``), as an
    exhausted disk quota allows nothing: free space (statvfs) shows neither."""
    return subprocess.run(
        ["sh", "-c", 'ulimit -f 1 && exec "$@"', "sh", *mcp.COMMAND, *args],
        capture_output=True, text=True, env=mcp.env(), timeout=120, check=False,
    )  # fmt: skip


def _files(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def test_a_log_under_a_write_limit_is_inspected_and_nothing_is_made_beside_it(
    logged: Path, tmp_path: Path
) -> None:
    """Opened read-write to inspect, a cleanly closed log needs a -wal and a -shm, which a
    quota or a file size limit leaves no room for: the commands said "cannot open the log:
    disk I/O error" (exit 2) and left a 0-byte -wal and a 3-byte -shm beside it."""
    db = tmp_path / "log.db"
    shutil.copy(logged, db)
    before = _files(tmp_path)
    for command in (
        ["sessions"], ["read", "agent"], ["audit", "agent", "--verify"], ["replay", "agent"]
    ):
        done = _under_a_write_limit(*command, "--db", str(db))
        assert done.returncode == 0, (command, done.stdout, done.stderr)
        assert _files(tmp_path) == before, command
    Path(f"{db}-wal").touch()  # empty: what a server left that folded it and was killed
    before = _files(tmp_path)
    done = _under_a_write_limit("sessions", "--db", str(db))
    assert done.returncode == 0, done.stderr
    assert _files(tmp_path) == before


def test_serve_refused_under_a_write_limit_leaves_the_log_as_it_found_it(
    logged: Path, tmp_path: Path
) -> None:
    """SQLite made a -wal and a -shm it could not fill, failed with "disk I/O error", and
    the refused open left them beside the log."""
    db = tmp_path / "log.db"
    shutil.copy(logged, db)
    before = _files(tmp_path)
    done = _under_a_write_limit("serve", COUNTER, "--db", str(db), "--session", "agent")
    assert done.returncode == 2, done.stderr
    assert _files(tmp_path) == before


def test_a_wal_that_cannot_be_read_under_a_write_limit_is_a_log_that_cannot_be_read(
    tmp_path: Path,
) -> None:
    """A killed server's -wal with events in it, with no -shm (which reading it needs) and
    no room to make one: an I/O error, not bad usage (exit 1, not 2), and nothing made."""
    db, copy = tmp_path / "log.db", tmp_path / "copy" / "log.db"
    copy.parent.mkdir()
    record(db, "agent", COUNTER, [INCREMENT])
    with SqliteRecorder(db) as recorder:
        recorder.append([NewEvent("other", 1, SessionStarted(COUNTER, "runtime", {}, True), 0.0)])
        shutil.copy(db, copy)
        shutil.copy(f"{db}-wal", f"{copy}-wal")
    before = _files(copy.parent)
    done = _under_a_write_limit("sessions", "--db", str(copy))
    assert (done.returncode, done.stdout, done.stderr) == (
        1,
        "",
        f"semledger: the log {copy} cannot be read: disk I/O error: reading the -wal beside it"
        " needs a -shm, which could not be made (a full disk, a quota or a file size limit"
        " leaves no room for it)\n",
    )
    assert _files(copy.parent) == before
    done = mcp.cli_in_process("sessions", "--db", str(copy))
    assert done.returncode == 0, done.stderr
    assert "other" in done.stdout


def test_fuzz_on_a_disk_filled_meanwhile_says_the_counterexample_it_could_not_save(
    full_disk: Path,
) -> None:
    """The log is made only once there is a counterexample to save; on a disk that had
    filled up by then, fuzz said only that it could not open the log, and exited 2 (bad
    usage) though it had found a bug."""
    db = full_disk / "log.db"
    _fill(full_disk)
    done = subprocess.run(
        [*mcp.COMMAND, "fuzz", "tests_buggy:app", "--db", str(db), "--seed", "3"],
        capture_output=True, text=True, env=mcp.env(), timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    said = done.stderr.splitlines()[-1]
    assert said.startswith(
        f"semledger: the log could not be opened (LogOpenError: cannot open the log {db}: the"
        " disk is full ("
    ), said
    assert "so the counterexample found is not saved. It was ZeroDivisionError" in said, said
    assert "fuzzing again with seed=3 and the same examples" in said, said


def test_a_log_file_that_may_only_be_read_is_refused_by_serve_and_inspected_as_it_is(
    logged: Path, tmp_path: Path
) -> None:
    """In a folder it may write, serve used to start, answer initialize, then end its
    session at the first append (over HTTP, fail every initialize) instead of refusing."""
    db = tmp_path / "readonly.db"
    shutil.copy(logged, db)
    db.chmod(0o444)
    served = _without_write_rights(
        "serve", "semledger.examples.counter:app", "--db", str(db), "--session", "agent"
    )
    assert served.returncode == 2, served.stdout + served.stderr
    assert served.stderr == (
        f"semledger: cannot open the log {db}: attempt to write a readonly database\n"
    )
    assert served.stdout == ""
    ended = _without_write_rights("end", "agent", "--db", str(db))
    assert (ended.returncode, ended.stderr) == (2, served.stderr)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["readonly.db"]
    listed = _without_write_rights("sessions", "--db", str(db))
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert "agent" in listed.stdout
    db.chmod(0o644)  # the operator sets its mode right: nothing left beside it refuses it
    served = _without_write_rights(
        "serve", "semledger.examples.counter:app", "--db", str(db), "--session", "agent"
    )
    assert served.returncode == 0, served.stdout + served.stderr


def test_a_long_audit_prints_every_row_in_plain_columns(tmp_path: Path) -> None:
    """Past PLAIN_AUDIT_ROWS a rich table would lay out every row before printing one."""
    from semledger._render import PLAIN_AUDIT_ROWS
    from semledger.eventlog import (
        ActionReceipt,
        ActionRejected,
        ActionRequested,
        NewEvent,
        SessionStarted,
        SqliteRecorder,
    )

    count = PLAIN_AUDIT_ROWS + 1
    events: list[object] = [SessionStarted(COUNTER, "runtime", {}, True)]
    for i in range(1, count + 1):
        target = {"kind": "semantic_id", "id": f"row.{i}"}
        precondition = {"kind": "exact", "generation": str(i)}
        events.append(ActionRequested(i, target, {"kind": "activate"}, precondition, False))
        if i == count:
            events.append(ActionRejected(i, "stale_generation", "stale", {}))
        else:
            events.append(ActionReceipt(i, i, i + 1, False))
    db = tmp_path / "log.db"
    with SqliteRecorder(db, synchronous="OFF") as recorder:
        recorder.append([NewEvent("long", seq, e, 1.7e9 + seq) for seq, e in enumerate(events, 1)])
    done = mcp.cli_in_process("audit", "long", "--db", str(db))
    assert done.returncode == 0, done.stderr
    title, header, rule, *rows, passwords, why, stale, stopped, end = done.stdout.splitlines()
    assert passwords.startswith("passwords typed in the session are masked in the log")
    assert (why, stale) == (
        "why the calls above were not carried out:", f"  #{count} stale_generation: stale"
    )
    assert stopped.startswith(f"the session's server stopped after event {len(events)} ")
    assert end.startswith(f"the session has no end in the log, whose last event is {len(events)}")
    assert title == "perform_action in session long"
    assert header.split() == ["#", "event", "time", "(UTC)", "target", "action", "precondition",
                              "outcome", "generations"]
    assert set(rule.replace("  ", "")) == {"-"}
    assert len(rows) == count
    assert rows[0].split()[:2] == ["1", "2"]
    assert rows[0].split()[4:] == ["row.1", "activate", "exact", "1", "receipt", "1", "→", "2"]
    assert rows[-1].split()[:2] == [str(count), str(len(events) - 1)]
    assert rows[-1].split()[3:] == [
        f"row.{count}", "activate", "exact", str(count), "stale_generation", "at", str(count)
    ]
    assert len({row.index("activate") for row in rows}) == 1  # aligned


def test_inspecting_the_log_of_a_killed_server_leaves_its_files_as_they_were(
    tmp_path: Path,
) -> None:
    """Its last events are in the -wal it left: they are read, and neither the -wal nor the
    log is changed (an auditor's copy stays the evidence it was)."""
    db = tmp_path / "log.db"
    server = mcp.start(COUNTER, db, "s")
    try:
        for request_id in (1, 2, 3):
            assert mcp.ask(server, mcp.perform(request_id, "counter.increment"))["ok"]
    finally:
        server.kill()
        server.wait()

    def files() -> dict[str, bytes]:
        kept = (".db", ".db-wal")
        return {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.suffix in kept}

    before = files()
    assert before["log.db-wal"]
    for command in (["sessions"], ["read", "s"], ["audit", "s", "--verify"], ["replay", "s"]):
        done = mcp.cli(*command, "--db", str(db))
        assert done.returncode == 0, (command, done.stdout, done.stderr)
    audited = json.loads(mcp.cli("audit", "s", "--db", str(db), "--json").stdout)
    assert [a["outcome"] for a in audited["actions"]] == ["receipt"] * 3
    assert files() == before


@pytest.fixture
def shared() -> Iterator[Path]:
    """A folder every user may write, where every user can reach it."""
    folder = Path(tempfile.mkdtemp(prefix="semledger-shared-"))
    folder.chmod(0o777)
    yield folder
    shutil.rmtree(folder)


AS_NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
AS_OWNER = ["setpriv", "--reuid=1000", "--regid=1000", "--clear-groups", "--"]


def _as_other_users() -> None:
    """Skip unless root here, and other users may run semledger from this checkout (not
    where a private folder holds it, as a fresh clone in a mktemp folder does)."""
    if os.geteuid() != 0:
        pytest.skip("needs root to act as two users")
    for user in (AS_NOBODY, AS_OWNER):
        probe = [*user, *mcp.COMMAND, "--help"]
        if subprocess.run(probe, capture_output=True, env=mcp.env(), check=False).returncode:
            pytest.skip("another user cannot run semledger from this checkout")


def test_another_users_inspection_leaves_nothing_the_logs_owner_cannot_write(
    logged: Path, shared: Path
) -> None:
    """In a folder both may write, SQLite would make the -wal and -shm a read needs as the
    inspecting user, and the owner's server could then not open its own log; a server that
    meets such files (an older semledger's, sqlite3's) names them."""
    _as_other_users()
    db = shared / "log.db"
    shutil.copy(logged, db)
    os.chown(db, 1000, 1000)
    for command in (["sessions"], ["audit", "agent", "--verify"]):
        done = subprocess.run(
            [*AS_NOBODY, *mcp.COMMAND, *command, "--db", str(db)],
            capture_output=True, text=True, env=mcp.env(), timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0, (command, done.stdout, done.stderr)
    assert sorted(p.name for p in shared.iterdir()) == ["log.db"]

    sqlite3.connect(f"file:{db}?mode=ro", uri=True).execute("PRAGMA user_version").close()
    for beside in ("-wal", "-shm"):
        os.chown(f"{db}{beside}", 65534, 65534)
        os.chmod(f"{db}{beside}", 0o644)
    served = subprocess.run(
        [*AS_OWNER, *mcp.COMMAND, "serve", COUNTER, "--db", str(db), "--session", "next"],
        input="", capture_output=True, text=True, env=mcp.env(), timeout=120, check=False,
    )  # fmt: skip
    assert served.returncode == 2, served.stdout + served.stderr
    assert (
        "(its -wal file belongs to nobody, and this user may not write it: with no server"
        f" running on the log, remove {db}-wal)"
    ) in served.stderr


def _strict_json(text: str) -> object:
    def refuse(constant: str) -> None:
        raise AssertionError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("at", ["1e999", "-1e999"])
def test_json_output_of_a_time_that_is_not_finite_is_null_not_infinity(
    logged: Path, tmp_path: Path, at: str
) -> None:
    """An edited time printed as `Infinity` in audit's JSON, which strict parsers (jq,
    JavaScript's JSON.parse) refuse: the auditor's tooling lost the whole report."""
    edit = f"UPDATE events SET at = {at} WHERE session = 'agent' AND seq = 3"
    db = damaged(logged, tmp_path, edit)
    audit = mcp.cli_in_process("audit", "agent", "--db", str(db), "--json", "--verify")
    assert audit.returncode == 0, audit.stderr
    out = _strict_json(audit.stdout)
    assert isinstance(out, dict)
    (action,) = [row for row in out["actions"] if row["seq"] == 3]
    assert action["at"] is None


@pytest.mark.parametrize(
    "command",
    [["sessions"], ["read", "agent"], ["audit", "agent", "--verify"], ["replay", "agent"]],
)
def test_a_command_a_program_runs_closes_the_log_it_opened(
    tmp_path: Path, command: list[str]
) -> None:
    """`semledger._cli.main` called by a program (a test, a tool that embeds it) leaves the
    log as the command's own process would once it exits: no connection open, so no -wal or
    -shm beside it."""
    db = tmp_path / "log.db"
    record(db, "agent", COUNTER, [INCREMENT])
    assert [p.name for p in tmp_path.iterdir()] == ["log.db"]
    done = mcp.cli_in_process(*command, "--db", str(db))
    assert done.returncode == 0, done.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["log.db"]


def test_a_log_path_with_an_escape_or_a_newline_is_printed_escaped(
    logged: Path, tmp_path: Path
) -> None:
    """The operator's paths reached the terminal as they are, as no name from the log does:
    ``sessions in <db>`` and ``wrote <file>`` printed an escape sequence in them, which
    recoloured the terminal, and a newline, which split the line in two; the damage named
    after a read or an audit too."""
    odd = "e\x1b[31m\nx"
    db = tmp_path / f"{odd}.db"
    shutil.copy(logged, db)
    shown = f"{tmp_path}/e\\x1b[31m\\nx.db"
    listed = mcp.cli_in_process("sessions", "--db", str(db))
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines()[0].rstrip() == f"sessions in {shown}"
    test = tmp_path / f"test_{odd}.py"
    done = mcp.cli_in_process("replay", "agent", "--db", str(db), "--export-test", str(test))
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"wrote {tmp_path}/test_e\\x1b[31m\\nx.py: run it with pytest\n"
    assert test.is_file()
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM events WHERE session = 'agent' AND seq = 6")
    conn.close()
    audited = mcp.cli_in_process("audit", "agent", "--db", str(db))
    assert audited.returncode == 1
    assert audited.stderr == (
        f"semledger: the log {shown} is damaged: event 6 of session 'agent' is missing: the"
        " session's events go from event 5 to event 7\n"
    )
