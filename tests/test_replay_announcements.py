"""A commit is compared by what it announced too, which its snapshot hash does not cover."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import attrs

from semledger.eventlog import GENESIS, Committed, SqliteRecorder, chain_step, encode
from semledger.examples import todo
from semledger.replay import reexecute

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from tests_record import Call, record

SCRIPT: list[Call] = [
    ("todo.input", {"kind": "set_text", "value": "milk"}),
    ("todo.input", {"kind": "submit"}),
]


def _rewritten(db: Path, seq: int, event: Committed) -> None:
    """Event `seq` of session 'todo' replaced by `event`, the chain made again, as an app
    that committed it would have logged it (else the edit is damage)."""
    with sqlite3.connect(db) as conn:
        conn.execute(
            "UPDATE events SET body = ? WHERE session = 'todo' AND seq = ?",
            (encode(event).body, seq),
        )
        chain = GENESIS
        for at, topic, version, body in conn.execute(
            "SELECT seq, topic, version, body FROM events WHERE session = 'todo' ORDER BY seq"
        ).fetchall():
            chain = chain_step(chain, "todo", at, topic, version, body)
            conn.execute(
                "UPDATE events SET chain = ? WHERE session = 'todo' AND seq = ?", (chain, at)
            )
    conn.close()


def test_a_commit_that_announced_other_text_diverges_naming_both_announcements(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.db"
    record(db, "todo", "semledger.examples.todo:app", SCRIPT)
    with SqliteRecorder(db) as recorder:
        record_, logged = next(
            (r, e)
            for r, e in recorder.events("todo")
            if isinstance(e, Committed) and e.delta.get("announcements")
        )
    (announced,) = logged.delta["announcements"]
    older = {**announced, "text": "an older wording"}
    edited = attrs.evolve(logged, delta={**logged.delta, "announcements": [older]})
    _rewritten(db, record_.seq, edited)
    with SqliteRecorder(db) as recorder:
        divergence = reexecute(recorder, "todo", todo.app).divergence
    assert divergence is not None
    assert divergence.seq == record_.seq
    assert divergence.expected.endswith("announcing ['an older wording']")
    assert divergence.actual.endswith(f"announcing [{announced['text']!r}]")
