"""What befell the application besides the agent's calls is in its audit: each failed effect
and the crash, with the tracebacks the log holds (before, only `replay --pdb` reached them)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp


def served(app: str, db: Path, session: str, requests: list[str]) -> None:
    """Serve `app` for `requests` to the end of input, however the session ends."""
    subprocess.run(
        [*mcp.COMMAND, "serve", app, "--db", str(db), "--session", session],
        input=mcp.initialize() + "".join(requests),
        capture_output=True,
        text=True,
        env=mcp.env(),
        timeout=120,
        check=False,
    )


def test_an_audit_names_each_failed_effect_which_the_app_got_no_message_for(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.db"
    served("tests_failing_effect:app", db, "fx", [mcp.perform(1, "load")])

    shown = mcp.cli("audit", "fx", "--db", str(db), COLUMNS="200")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    [failed] = [n for n, line in enumerate(lines) if line.startswith("effect 1 (backend.fetch)")]
    assert lines[failed].startswith("effect 1 (backend.fetch) failed at ")
    assert lines[failed].endswith(
        ", generation 2 (event 8): ConnectionError: backend down (the app got no message for it)"
    )
    # ... and where it raised, in the app's code
    assert lines[failed + 1] == "  Traceback (most recent call last):"
    assert any('tests_failing_effect.py", line' in line for line in lines[failed + 1 :])
    assert lines[-2] == "  ConnectionError: backend down"
    assert lines[-1].startswith("the session ended for now at ")

    as_json = json.loads(mcp.cli("audit", "fx", "--db", str(db), "--json").stdout)
    [incident] = as_json["incidents"]
    assert isinstance(incident.pop("at"), float)
    assert incident.pop("traceback").endswith("ConnectionError: backend down\n")
    assert incident == {
        "seq": 8,
        "generation": "2",
        "kind": "effect_failed",
        "error": "ConnectionError: backend down",
        "effect_id": 1,
        "effect": "backend.fetch",
    }


def test_an_audit_of_a_crashed_session_ends_with_the_crash_and_its_logged_traceback(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.db"
    served("tests_crashy:app", db, "cr", [mcp.perform(i, "counter.increment") for i in (1, 2, 3)])

    shown = mcp.cli("audit", "cr", "--db", str(db), COLUMNS="200")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    crash = next(i for i, line in enumerate(lines) if line.startswith("the application crashed"))
    assert lines[crash].endswith(", generation 3 (event 11): ThirdIncrementError")
    traceback = lines[crash + 1 :]
    assert traceback[0] == "  Traceback (most recent call last):"
    assert "  tests_crashy.ThirdIncrementError: the count may not reach 3" in traceback
    assert any('tests_crashy.py", line' in line for line in traceback)

    [incident] = json.loads(mcp.cli("audit", "cr", "--db", str(db), "--json").stdout)["incidents"]
    assert (incident["kind"], incident["error"], incident["seq"]) == (
        "crashed",
        "ThirdIncrementError",
        11,
    )
    assert "ThirdIncrementError: the count may not reach 3" in incident["traceback"]


def test_an_audit_counts_the_inputs_sent_through_the_diagnostics_tools(tmp_path: Path) -> None:
    """They are no perform_action, so they have no row: the generations they made jumped
    between rows with nothing said."""
    db = tmp_path / "log.db"
    command = mcp.call(1, "diagnostics_dispatch_command", {"intent": "Activate"})
    again = mcp.call(2, "diagnostics_dispatch_command", {"intent": "Activate"})
    requests = [command, again, mcp.perform(3, "counter.reset")]
    replies = mcp.serve("semledger.examples.counter:app", db, "d", requests, "--diagnostics")
    assert replies[3]["ok"] is True
    shown = mcp.cli("audit", "d", "--db", str(db), COLUMNS="200")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[-2] == (
        "and 2 inputs sent through the diagnostics tools, which are no perform_action and not"
        " listed above"
    )
    as_json = json.loads(mcp.cli("audit", "d", "--db", str(db), "--json").stdout)
    assert (len(as_json["actions"]), as_json["diagnostics_inputs"]) == (1, 2)


def test_an_audit_names_each_effect_still_running_when_the_session_ended(tmp_path: Path) -> None:
    """Its receipt said pending_work, and nothing after it told that the message never came:
    a completed effect and one cut off looked the same."""
    db = tmp_path / "log.db"
    replies = mcp.serve("tests_fuzz_effects:app", db, "t", [mcp.perform(1, "up.stuck")])
    assert replies[1]["value"]["pending_work"] is True
    shown = mcp.cli("audit", "t", "--db", str(db), COLUMNS="200")
    assert shown.returncode == 0, shown.stderr
    last = shown.stdout.splitlines()[-2]
    assert last.startswith("effect 1 (stuck) at ")
    assert last.endswith(": still running when the session ended: end of input; its message"
                         " never came")  # fmt: skip
    [incident] = json.loads(mcp.cli("audit", "t", "--db", str(db), "--json").stdout)["incidents"]
    assert (incident["kind"], incident["effect_id"]) == ("effect_unfinished", 1)
