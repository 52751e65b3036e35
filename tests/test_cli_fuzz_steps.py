"""What `semledger fuzz` prints of a counterexample's steps, and how the audit names the
nodes its steps targeted by id."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

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


@pytest.mark.parametrize(
    ("message", "said"),
    [
        (None, "timer 1 fired (a message the log could not record)"),
        ({"type": "Tick", "value": {}}, "timer 1 fired (Tick)"),
        ({"type": None, "value": 5}, "timer 1 fired (5)"),
        ({"type": None, "value": None}, "timer 1 fired (None)"),  # an app's message None
        ({"type": 5, "value": None}, "timer 1 fired ({'type': 5, 'value': None})"),
        ({"value": 1}, "timer 1 fired ({'value': 1})"),
    ],
)
def test_a_timers_message_in_a_step_reads_as_what_the_log_holds(message: Any, said: str) -> None:
    """A message the log could not record (logged as None), or one whose type is no text,
    read as ``(None)``, as an app's message None does."""
    from semledger._render import step_line
    from semledger.eventlog import TimerFired

    assert step_line(TimerFired(1, message), None) == said


@pytest.mark.parametrize(
    ("known_as", "said"),
    [
        ("button '" + "L" * 5000 + "'", "button '" + "L" * 32 + "… (5,000 characters)"),
        ("x" * 5000, "x" * 40 + "… (5,000 characters)"),
        ("button 'Save'", "button 'Save'"),
        ("text_field 'a\\nb'", "text_field 'a\\nb'"),
    ],
)
def test_a_long_node_name_counts_its_label_with_thousands_separated(
    known_as: str, said: str
) -> None:
    """A 5,000-character label was said to be of ``5009 characters``: its role, a space and
    quotes counted in, with no separator, unlike a typed value's."""
    from semledger._render import node_name

    assert node_name(known_as) == said


def test_a_long_message_in_a_step_says_how_long_it_is_alone() -> None:
    """No command prints a timer's message whole: no hint names one."""
    from semledger._render import step_line
    from semledger.eventlog import TimerFired

    line = step_line(TimerFired(1, {"type": None, "value": "m" * 150}), None)
    assert line == f"timer 1 fired ('{'m' * 79}… (150 characters))"


def test_the_replay_command_fuzz_prints_quotes_a_log_path_as_a_shell_reads_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--db "my logs/it's.db"` printed `semledger replay fuzz-… --db my logs/it's.db`, which
    pasted into a shell named no log (or another one)."""
    import shlex

    from semledger import _cli

    folder = tmp_path / "my logs"
    folder.mkdir()
    db = folder / "it's.db"
    assert _cli.main(["fuzz", "tests_buggy:app", "--db", str(db), "--seed", "3"]) == 1
    out = capsys.readouterr().out
    found = re.search(r"^saved as session '([^']+)': (.*)$", out, flags=re.MULTILINE)
    assert found is not None, out
    assert shlex.split(found.group(2)) == ["semledger", "replay", found.group(1), "--db", str(db)]


def test_the_replay_command_fuzz_prints_for_a_log_path_starting_with_a_dash_parses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--db -x.db` was printed as given: argparse takes `-x.db` for an option."""
    import shlex

    from semledger import _cli

    monkeypatch.chdir(tmp_path)
    assert _cli.main(["fuzz", "tests_buggy:app", "--db=-x.db", "--seed", "3"]) == 1
    out = capsys.readouterr().out
    found = re.search(r"^saved as session '([^']+)': (.*)$", out, flags=re.MULTILINE)
    assert found is not None, out
    words = shlex.split(found.group(2))
    assert words == ["semledger", "replay", found.group(1), "--db=-x.db"]
    assert _cli.main(words[1:]) == 0
    assert "the recorded crash at step 1 reproduced" in capsys.readouterr().out
