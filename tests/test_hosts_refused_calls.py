"""A perform_action refused for its arguments is on the record: logged, audited, and never
re-executed by replay or recovery."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp

from semledger.eventlog import REDACTED, CallRefused, SqliteRecorder, encode, refused_arguments

COUNTER = "semledger.examples.counter:app"


def _refused(request_id: int) -> str:
    return mcp.call(
        request_id,
        "perform_action",
        {"target": {"kind": "semantic_id", "id": "counter.increment"}, "action": "activate"},
    )


def test_a_refused_call_is_audited_and_the_session_replays_and_resumes(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    first = mcp.serve(COUNTER, db, "r", [_refused(1), mcp.perform(2, "counter.increment")])
    assert first[1]["error"]["code"] == "invalid_arguments"
    assert first[2]["ok"] is True
    again = mcp.serve(COUNTER, db, "r", [mcp.perform(3, "counter.increment"), mcp.read(4)])
    assert again[3]["value"] == {"before": "2", "after": "3", "pending_work": False}
    replayed = mcp.cli_in_process("replay", "r", "--db", str(db))
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "identical — 2 inputs" in replayed.stdout
    audited = mcp.cli_in_process("audit", "r", "--db", str(db), "--verify", "--json")
    assert audited.returncode == 0, audited.stderr
    report = json.loads(audited.stdout)
    rows: list[dict[str, Any]] = report["actions"]
    assert [(row["request_id"], row["outcome"]) for row in rows] == [
        (None, "invalid_arguments"),
        (1, "receipt"),
        (2, "receipt"),
    ]
    assert rows[0]["target"] == {"kind": "semantic_id", "id": "counter.increment"}
    assert rows[0]["action"] == REDACTED  # not an object: it may be a password
    assert rows[0]["redacted"] is True
    assert rows[0]["details"]["message"] == first[1]["error"]["message"]
    assert report["verify"]["ok"] is True
    table = mcp.cli_in_process("audit", "r", "--db", str(db), columns=200)
    assert "invalid_arguments" in table.stdout
    with SqliteRecorder(db) as recorder:
        (refused,) = [e for _r, e in recorder.events("r") if isinstance(e, CallRefused)]
    assert refused.arguments["action"] == "[redacted]"


def test_a_refused_call_missing_its_parts_is_audited_with_none_shown(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    replies = mcp.serve(COUNTER, db, "m", [mcp.call(1, "perform_action", {"target": "x"})])
    assert replies[1]["error"]["message"] == "action: required"
    audited = mcp.cli_in_process("audit", "m", "--db", str(db), "--json")
    (row,) = json.loads(audited.stdout)["actions"]
    assert (row["target"], row["action"], row["precondition"]) == ("x", {}, {})  # as sent
    table = mcp.cli_in_process("audit", "m", "--db", str(db), columns=200)
    line, why = [line for line in table.stdout.splitlines() if "invalid_arguments" in line]
    assert [cell.strip() for cell in line.strip("│ ").split("│")][3:6] == [
        '"x"', "-", "-",
    ]  # fmt: skip
    assert why == f"  event {row['seq']} invalid_arguments: action: required"


def test_a_refused_call_s_part_sent_as_an_empty_object_is_shown_apart_from_one_not_sent(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.db"
    replies = mcp.serve(COUNTER, db, "m", [mcp.call(1, "perform_action", {"target": {}})])
    assert replies[1]["ok"] is False
    audited = json.loads(mcp.cli_in_process("audit", "m", "--db", str(db), "--json").stdout)
    (row,) = audited["actions"]
    assert row["unsent"] == ["action", "precondition"]
    table = mcp.cli_in_process("audit", "m", "--db", str(db), columns=200)
    (line,) = [line for line in table.stdout.splitlines() if "invalid_arguments" in line][:1]
    assert [cell.strip() for cell in line.strip("│ ").split("│")][3:6] == ["{}", "-", "-"]


def test_a_refused_call_whose_event_does_not_decode_keeps_its_row_in_the_audit(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.db"
    mcp.serve(COUNTER, db, "r", [mcp.perform(1, "counter.increment"), _refused(2)])
    with sqlite3.connect(db) as conn:
        (seq,) = conn.execute("SELECT seq FROM events WHERE topic = 'CallRefused'").fetchone()
        conn.execute("UPDATE events SET body = X'c1' WHERE seq = ?", (seq,))
    conn.close()
    audited = mcp.cli_in_process("audit", "r", "--db", str(db), "--json")
    assert audited.returncode == 1
    assert audited.stderr.startswith(f"semledger: the log {db} is damaged: event {seq} ")
    rows = json.loads(audited.stdout)["actions"]
    assert [(row["request_id"], row["outcome"], row["unread"]) for row in rows] == [
        (1, "receipt", False),
        (None, "unreadable", True),
    ]
    assert rows[1]["seq"] == seq
    table = mcp.cli_in_process("audit", "r", "--db", str(db), columns=200)
    (line,) = [line for line in table.stdout.splitlines() if line.startswith("│ -")]
    assert [cell.strip() for cell in line.strip("│ ").split("│")][3:7] == ["unreadable"] * 4


@pytest.mark.parametrize(
    ("redact", "expected"),
    [
        (
            True,
            {
                "target": {"kind": "path", "path": [{"label": "a\\ud800"}]},
                "action": {"kind": "set_text", "value": REDACTED},
                "note\\udc00": REDACTED,
            },
        ),
        (
            False,
            {
                "target": {"kind": "path", "path": [{"label": "a\\ud800"}]},
                "action": {"kind": "set_text", "value": "b\\udfff"},
                "note\\udc00": ["c\\ud800"],
            },
        ),
    ],
    ids=["redacted", "passwords logged"],
)
def test_refused_arguments_keep_text_utf8_cannot_encode_as_its_escape(
    redact: bool, expected: dict[str, Any]
) -> None:
    arguments = {
        "target": {"kind": "path", "path": [{"label": "a\ud800"}]},
        "action": {"kind": "set_text", "value": "b\udfff"},
        "note\udc00": ["c\ud800"],
    }
    logged, redacted = refused_arguments(arguments, redact=redact)
    assert (logged, redacted) == (expected, redact)
    assert encode(CallRefused("perform_action", logged, "invalid_arguments", "m", redacted))


@pytest.mark.parametrize("flags", [(), ("--log-passwords",)], ids=["redacting", "not"])
def test_a_refused_call_holding_an_integer_msgpack_cannot_hold_is_logged_and_the_session_goes_on(
    tmp_path: Path, flags: tuple[str, ...]
) -> None:
    """JSON's integers have no bound: one call with 2**70 in it made the log unwritable, and
    the session ended (every later call answered host_closed)."""
    db = tmp_path / "log.db"
    huge = 2**70
    call = mcp.call(
        1,
        "perform_action",
        {"target": {"kind": "node_id", "id": huge}, "action": {"kind": "activate", "n": -huge},
         "precondition": {"kind": "latest"}},
    )  # fmt: skip
    replies = mcp.serve(COUNTER, db, "h", [call, mcp.perform(2, "counter.increment")], *flags)
    assert replies[1]["error"]["code"] == "invalid_arguments"
    assert replies[2]["ok"] is True
    audited = mcp.cli_in_process("audit", "h", "--db", str(db), "--json")
    [row, _] = json.loads(audited.stdout)["actions"]
    assert row["target"] == {"kind": "node_id", "id": str(huge)}
    if flags:
        assert row["action"] == {"kind": "activate", "n": str(-huge)}


@pytest.mark.parametrize("flags", [(), ("--log-passwords",)], ids=["redacting", "not"])
def test_a_refused_call_nested_deeper_than_the_log_holds_is_logged_and_the_session_goes_on(
    tmp_path: Path, flags: tuple[str, ...]
) -> None:
    """JSON read at 600 levels: logging the refused call's arguments raised RecursionError,
    and the session ended (this call and every later one answered host_closed)."""
    db = tmp_path / "log.db"
    deep: Any = "x"
    for _ in range(600):
        deep = [deep]
    call = mcp.call(
        1,
        "perform_action",
        {"target": {"kind": "path", "path": [{"role": "button", "extra": deep}]},
         "action": {"kind": "activate"}, "precondition": {"kind": "latest"}},
    )  # fmt: skip
    replies = mcp.serve(COUNTER, db, "deep", [call, mcp.perform(2, "counter.increment")], *flags)
    assert replies[1]["error"]["message"] == "target.path[0].extra: unknown field"
    assert replies[2]["ok"] is True
    audited = mcp.cli_in_process("audit", "deep", "--db", str(db), "--json")
    [row, _] = json.loads(audited.stdout)["actions"]
    kept = row["target"]["path"][0]["extra"]
    for _ in range(60):
        [kept] = kept
    assert "[nested too deep]" in json.dumps(kept)


def test_an_index_or_offset_past_what_the_log_holds_is_answered_and_the_session_goes_on(
    tmp_path: Path,
) -> None:
    """A path index or a selection offset of 2**70 was taken as sent: its rejection could
    not be logged, and the session ended for every later call."""
    db = tmp_path / "log.db"
    todo = "semledger.examples.todo:app"
    far = mcp.call(
        1,
        "perform_action",
        {"target": {"kind": "path", "path": [{"role": "button", "index": 2**70}]},
         "action": {"kind": "activate"}, "precondition": {"kind": "latest"}},
    )  # fmt: skip
    past = mcp.perform(2, "todo.input", "set_selection", start=2**70, end=2**70)
    replies = mcp.serve(todo, db, "far", [far, past, mcp.perform(3, "todo.input", "submit")])
    assert replies[1]["error"]["code"] == "target_not_found"
    assert replies[2]["error"]["code"] == "handler_rejected"
    assert replies[3]["error"]["code"] == "handler_rejected"  # no text: answered, not closed
    replayed = mcp.cli_in_process("replay", "far", "--db", str(db))
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
