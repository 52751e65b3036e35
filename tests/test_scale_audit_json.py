"""`semledger audit --json` of a long session is written as it is made: each action's
object at a time, never the whole document in memory first."""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

import pytest

from semledger._cli import main

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from tests_record import COUNTER, INCREMENT, record

_CALLS = 60


class _Writes(io.StringIO):
    """Standard output that keeps the length of each write."""

    def __init__(self) -> None:
        super().__init__()
        self.sizes: list[int] = []

    def write(self, text: str) -> int:
        self.sizes.append(len(text))
        return super().write(text)


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("audit-json") / "log.db"
    record(db, "s", COUNTER, [INCREMENT] * _CALLS)
    return db


@pytest.mark.parametrize("flags", [(), ("--verify",)])
def test_audit_json_writes_each_action_as_it_comes(log: Path, flags: tuple[str, ...]) -> None:
    """It held every action as JSON objects, then as one string, before printing a byte:
    some 8 KB an action, 285 MB for a 100,000-event session."""
    out, err = _Writes(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["audit", "s", "--db", str(log), "--json", *flags])
    assert status == 0, err.getvalue()
    text = out.getvalue()
    document = json.loads(text)
    assert len(document["actions"]) == _CALLS
    one = len(json.dumps(document["actions"][0], indent=4))
    assert max(out.sizes) < 2 * one < len(text) // 10
    # The same text as one dump of the whole document.
    assert text == json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def test_audit_json_of_a_session_with_no_actions_has_an_empty_list(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    record(db, "s", COUNTER, [])
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["audit", "s", "--db", str(db), "--json"])
    assert status == 0, err.getvalue()
    assert '"actions": [],' in out.getvalue()
    assert json.loads(out.getvalue())["actions"] == []
