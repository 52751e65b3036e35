"""The fuzzer: a buggy app yields a counterexample, saved as a session that replay reproduces."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from semledger.eventlog import SessionCrashed, SqliteRecorder

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp


def test_a_buggy_app_gets_a_counterexample_that_replay_reproduces(tmp_path: Path) -> None:
    db = tmp_path / "fuzz.db"
    done = mcp.cli(
        "fuzz",
        "tests_buggy:app",
        "--db",
        str(db),
        "--examples",
        "200",
        "--seed",
        "3",
        COLUMNS="200",
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "counterexample:" in done.stdout
    found = re.search(r"saved as session '([^']+)'", done.stdout)
    assert found is not None, done.stdout
    session = found.group(1)
    with SqliteRecorder(db) as recorder:
        events = [e for _r, e in recorder.events(session)]
    assert isinstance(events[-1], SessionCrashed)
    replayed = mcp.cli("replay", session, "--db", str(db), COLUMNS="200")
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "raised again at step" in replayed.stdout


def test_an_app_without_bugs_gets_no_counterexample(tmp_path: Path) -> None:
    done = mcp.cli(
        "fuzz",
        "semledger.examples.counter:app",
        "--db",
        str(tmp_path / "f.db"),
        "--examples",
        "30",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no counterexample" in done.stdout
