"""What `semledger fuzz` prints of a counterexample's steps, and how the audit names the
nodes its steps targeted by id."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    db = tmp_path_factory.mktemp("fuzz") / "log.db"
    done = mcp.cli("fuzz", "tests_buggy:app", "--db", str(db), "--seed", "3")
    assert done.returncode == 1, done.stderr
    return db, done.stdout


def test_fuzz_prints_the_counterexamples_steps_naming_each_node_by_its_semantic_id(
    fuzzed: tuple[Path, str],
) -> None:
    """It printed the failure and the session's name alone: what was done took an audit,
    which named the node only as ``node 5``."""
    _db, out = fuzzed
    lines = out.splitlines()
    saved = next(i for i, line in enumerate(lines) if line.startswith("saved as session"))
    assert lines[saved + 1] == "its steps (1), as the log holds them:", out
    assert re.fullmatch(r"  1\. activate node \d+ \(counter\.reset\), exact 1", lines[saved + 2])


def test_the_audit_names_a_node_targeted_by_id_by_its_semantic_id(
    fuzzed: tuple[Path, str],
) -> None:
    db, _out = fuzzed
    listed = mcp.cli("sessions", "--db", str(db), "--json")
    session = json.loads(listed.stdout)[0]["name"]
    done = mcp.cli("audit", session, "--db", str(db), COLUMNS="200")
    assert re.search(r"│ node \d+ \(counter\.reset\) +│ activate", done.stdout), done.stdout
    as_json = json.loads(mcp.cli("audit", session, "--db", str(db), "--json").stdout)
    assert as_json["actions"][0]["target_node"] == "counter.reset"


LATEST = {"kind": "latest"}


def test_a_long_value_in_a_step_says_the_audits_json_has_it_whole() -> None:
    """fuzz has no --json, which the step line said had the whole value."""
    from semledger._render import step_line
    from semledger.eventlog import ActionRequested

    typed = ActionRequested(
        1, {"kind": "node_id", "id": "4"}, {"kind": "set_text", "value": "L" * 150}, LATEST, False
    )
    line = step_line(typed, "text_field 'T'")
    assert line.endswith("… (150 characters; audit --json has it whole)) node 4 (text_field 'T'),"
                         " latest"), line  # fmt: skip


def test_a_long_message_in_a_step_says_how_long_it_is_alone() -> None:
    """No command prints a timer's message whole: no hint names one."""
    from semledger._render import step_line
    from semledger.eventlog import TimerFired

    line = step_line(TimerFired(1, {"type": None, "value": "m" * 150}), None)
    assert line == f"timer 1 fired ('{'m' * 79}… (150 characters))"
