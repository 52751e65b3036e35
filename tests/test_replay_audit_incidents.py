"""What befell the application besides the agent's calls is in its audit: each failed effect
and the crash, with the tracebacks the log holds (before, only `replay --pdb` reached them)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from semledger.eventlog import (
    ActionRequested,
    CallRefused,
    EffectStarted,
    MemoryRecorder,
    NewEvent,
    SessionEnded,
    SessionResumed,
    SessionStarted,
    SqliteRecorder,
)
from semledger.replay import audit_report

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


def test_an_audit_escapes_what_an_agent_typed_into_a_crash_traceback(tmp_path: Path) -> None:
    """The traceback lines were printed as the log holds them: an agent that typed escape
    sequences the app put in its error could clear the reviewer's screen, or recolour and
    overwrite the audit's earlier rows."""
    db = tmp_path / "log.db"
    typed = "\x1b]0;owned\x07\x1b[2J\x1b[31mALL CLEAR\x1b[0m"
    typing = mcp.perform(1, "counter.step", "set_text", value=typed)
    served("tests_typed_crash:app", db, "s", [typing])

    shown = mcp.cli_in_process("audit", "s", "--db", str(db), columns=200)
    assert shown.returncode == 0, shown.stderr
    assert "\x1b" not in shown.stdout
    escaped = r"not a step: \x1b]0;owned\x07\x1b[2J\x1b[31mALL CLEAR\x1b[0m"
    assert f"  ValueError: {escaped}" in shown.stdout.splitlines()


def test_an_audit_names_each_failed_effect_which_the_app_got_no_message_for(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.db"
    served("tests_failing_effect:app", db, "fx", [mcp.perform(1, "load")])

    shown = mcp.cli_in_process("audit", "fx", "--db", str(db), columns=200)
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

    as_json = json.loads(mcp.cli_in_process("audit", "fx", "--db", str(db), "--json").stdout)
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
        "answers_from": None,
    }


def test_an_audit_of_a_crashed_session_ends_with_the_crash_and_its_logged_traceback(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.db"
    served("tests_crashy:app", db, "cr", [mcp.perform(i, "counter.increment") for i in (1, 2, 3)])

    shown = mcp.cli_in_process("audit", "cr", "--db", str(db), columns=200)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    crash = next(i for i, line in enumerate(lines) if line.startswith("the application crashed"))
    assert lines[crash].endswith(", generation 3 (event 11): ThirdIncrementError")
    traceback = lines[crash + 1 :]
    assert traceback[0] == "  Traceback (most recent call last):"
    assert "  tests_crashy.ThirdIncrementError: the count may not reach 3" in traceback
    assert any('tests_crashy.py", line' in line for line in traceback)

    as_json = json.loads(mcp.cli_in_process("audit", "cr", "--db", str(db), "--json").stdout)
    [incident] = as_json["incidents"]
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
    shown = mcp.cli_in_process("audit", "d", "--db", str(db), columns=200)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[-2] == (
        "and 2 inputs sent through the diagnostics tools, which are no perform_action and not"
        " listed above"
    )
    as_json = json.loads(mcp.cli_in_process("audit", "d", "--db", str(db), "--json").stdout)
    assert (len(as_json["actions"]), as_json["diagnostics_inputs"]) == (1, 2)


def test_an_audit_names_each_effect_still_running_when_the_session_ended(tmp_path: Path) -> None:
    """Its receipt said pending_work, and nothing after it told that the message never came:
    a completed effect and one cut off looked the same."""
    db = tmp_path / "log.db"
    replies = mcp.serve("tests_fuzz_effects:app", db, "t", [mcp.perform(1, "up.stuck")])
    assert replies[1]["value"]["pending_work"] is True
    shown = mcp.cli_in_process("audit", "t", "--db", str(db), columns=200)
    assert shown.returncode == 0, shown.stderr
    last = shown.stdout.splitlines()[-2]
    assert last.startswith("effect 1 (stuck) at ")
    assert last.endswith(": still running when the session ended: end of input; its message"
                         " never came")  # fmt: skip
    as_json = json.loads(mcp.cli_in_process("audit", "t", "--db", str(db), "--json").stdout)
    [incident] = as_json["incidents"]
    assert (incident["kind"], incident["effect_id"]) == ("effect_unfinished", 1)


STOPPED_RUNNING = (
    "still running when its server stopped without logging an end: its outcome is unknown (it"
    " may or may not have run)"
)


def _unfinished(db: Path, session: str) -> tuple[list[dict[str, Any]], list[str]]:
    """The audit's `effect_unfinished` incidents, and its text's lines saying them."""
    as_json = mcp.cli_in_process("audit", session, "--db", str(db), "--json")
    assert as_json.returncode == 0, as_json.stderr
    incidents = json.loads(as_json.stdout)["incidents"]
    shown = mcp.cli_in_process("audit", session, "--db", str(db), columns=200)
    assert shown.returncode == 0, shown.stderr
    lines = [line for line in shown.stdout.splitlines() if line.startswith("effect ")]
    return [i for i in incidents if i["kind"] == "effect_unfinished"], lines


def _killed_with_a_stuck_effect(db: Path, session: str) -> int:
    """Serve `session`, start an effect that never finishes, and SIGKILL the server; the
    last event its run logged."""
    server = mcp.start("tests_fuzz_effects:app", db, session)
    try:
        assert mcp.ask(server, mcp.perform(1, "up.stuck"))["value"]["pending_work"] is True
    finally:
        server.kill()
        server.wait(timeout=30)
    with SqliteRecorder(db) as recorder:
        head = recorder.head(session)
    assert head is not None
    return head.seq


def test_an_effect_running_as_its_server_was_killed_is_of_unknown_outcome_as_of_its_last_event(
    tmp_path: Path,
) -> None:
    """The audit of the open session said nothing of it; once `semledger end` ended the
    session, it read 'still running when the session ended: ended by the operator', dated
    at that end, as if the effect had run until the operator came."""
    db = tmp_path / "log.db"
    last = _killed_with_a_stuck_effect(db, "k")
    for ended in (False, True):
        if ended:
            done = mcp.cli_in_process("end", "k", "--db", str(db), "--reason", "no rerun")
            assert done.returncode == 0, done.stderr
        [incident], [line] = _unfinished(db, "k")
        assert (incident["seq"], incident["effect_id"], incident["error"]) == (
            last, 1, STOPPED_RUNNING
        )
        assert line.startswith("effect 1 (stuck) at ")
        assert line.endswith(f"(event {last}): {STOPPED_RUNNING}; its message never came")


def test_an_effect_running_as_its_server_was_killed_then_started_again_says_both(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.db"
    last = _killed_with_a_stuck_effect(db, "k")
    served("tests_fuzz_effects:app", db, "k", [mcp.read(1)])  # resumed, to the end of input
    with SqliteRecorder(db) as recorder:
        report = audit_report(recorder, "k")
    said = [(i.seq, i.kind, i.effect_id) for i in report.incidents]
    assert said == [
        (last, "stopped", None),
        (last, "effect_unfinished", 1),
        (last + 1, "resumed", None),
        (last + 1, "effect_restarted", 1),
        (report.ending.seq, "effect_unfinished", 1),  # stuck again, to the end of input
    ]
    assert report.incidents[1].error == STOPPED_RUNNING
    assert report.incidents[-1].error == "still running when the session ended: end of input"


def _log(recorder: MemoryRecorder, *events: Any) -> None:
    recorder.append([NewEvent("s", seq, e, 1.7e9 + seq) for seq, e in enumerate(events, 1)])


START = SessionStarted("tests_fuzz_effects:app", "runtime", {}, True)


@pytest.mark.parametrize(
    ("end", "expected"),
    [
        (SessionEnded("ended by the operator", by="operator"), (2, STOPPED_RUNNING)),
        # An HTTP client's DELETE is final too, logged by the server that ran the effect.
        (SessionEnded("deleted by the client", by="client"),
         (3, "still running when the session ended: deleted by the client")),
        (SessionEnded("end of input"), (3, "still running when the session ended: end of input")),
        # Who ended it says it, whatever its reason.
        (SessionEnded("retired", by="operator"), (2, STOPPED_RUNNING)),
        (SessionEnded("ended by the operator", by="client"),
         (3, "still running when the session ended: ended by the operator")),
    ],
)  # fmt: skip
def test_only_an_operators_end_comes_after_a_server_that_stopped_without_one(
    end: SessionEnded, expected: tuple[int, str]
) -> None:
    recorder = MemoryRecorder()
    _log(recorder, START, EffectStarted(1, "stuck"), end)
    *_, incident = audit_report(recorder, "s").incidents
    assert (incident.seq, incident.error) == expected


class _Unlisted(MemoryRecorder):
    """A recorder on a system that does not list its locks."""

    def served(self, sessions: Iterable[str]) -> dict[str, bool | None]:
        return dict.fromkeys(sessions)


def test_an_effect_running_at_the_end_of_an_open_log_is_unknown_unless_it_is_served() -> None:
    recorder = MemoryRecorder()
    _log(recorder, START, EffectStarted(1, "stuck"))
    [_, incident] = audit_report(recorder, "s").incidents
    assert (incident.seq, incident.kind, incident.error) == (2, "effect_unfinished",
                                                             STOPPED_RUNNING)  # fmt: skip
    with recorder.claim("s"):
        report = audit_report(recorder, "s")
    assert (report.incidents, report.ending.served) == ([], True)

    unlisted = _Unlisted()
    _log(unlisted, START, EffectStarted(1, "stuck"))
    report = audit_report(unlisted, "s")
    assert report.ending.served is None
    [stopped, incident] = report.incidents
    assert stopped.error.startswith(
        "it logged no end (it was killed, or could not log one),"
        " unless it is serving the session still (this system cannot tell); "
    )
    assert incident.error == (
        "still running when its server stopped without logging an end, unless it is serving"
        " the session still (this system cannot tell): its outcome is unknown (it may or may"
        " not have run)"
    )


NO_END = "it logged no end (it was killed, or could not log one)"


def test_a_killed_server_is_said_to_have_stopped_after_its_last_event_and_its_answers_unsure(
    tmp_path: Path,
) -> None:
    """Its receipts were plain rows, the last of them perhaps never sent: an answer is
    logged before it is sent, and nothing in the log said the server was killed. (Resumed,
    the run that was killed still says it.)"""
    db = tmp_path / "log.db"
    server = mcp.start("semledger.examples.counter:app", db, "k")
    try:
        for request_id in (1, 2, 3):
            assert mcp.ask(server, mcp.perform(request_id, "counter.increment"))["ok"]
    finally:
        server.kill()
        server.wait(timeout=30)
    with SqliteRecorder(db) as recorder:
        head = recorder.head("k")
    assert head is not None
    served("semledger.examples.counter:app", db, "k", [mcp.perform(4, "counter.increment")])
    as_json = json.loads(mcp.cli_in_process("audit", "k", "--db", str(db), "--json").stdout)
    first = as_json["actions"][0]
    assert first["request_id"] == 1
    stopped = [i for i in as_json["incidents"] if i["kind"] == "stopped"]
    said = (
        f"{NO_END}; answers are logged before they are sent, so those logged from #1 (event"
        f" {first['seq']}) on may not all have reached the agent (the log cannot tell)"
    )
    assert [(i["seq"], i["answers_from"], i["error"]) for i in stopped] == [
        (head.seq, first["seq"], said)
    ]
    shown = mcp.cli_in_process("audit", "k", "--db", str(db), columns=200)
    assert shown.returncode == 0, shown.stderr
    [line] = [line for line in shown.stdout.splitlines() if "server stopped" in line]
    assert line.startswith(f"the session's server stopped after event {head.seq} (at ")
    assert line.endswith(f", generation 4): {said}")


def test_a_stopped_run_names_its_own_first_answer_whatever_it_was() -> None:
    refused = CallRefused("perform_action", {}, "invalid_arguments", "no target", False)
    asked = ActionRequested(1, {"kind": "semantic_id", "id": "x"}, {"kind": "activate"},
                            {"kind": "latest"}, False)  # fmt: skip
    recorder = MemoryRecorder()
    _log(recorder, START, asked, SessionResumed(()), refused, ActionRequested(
        2, {"kind": "semantic_id", "id": "x"}, {"kind": "activate"}, {"kind": "latest"}, False
    ))  # fmt: skip
    first, second = (i for i in audit_report(recorder, "s").incidents if i.kind == "stopped")
    assert (first.seq, first.answers_from) == (2, None)
    assert first.error == f"{NO_END}; it answered no call"  # #1 is unanswered
    assert (second.seq, second.answers_from) == (5, 4)
    assert "from the call refused at event 4 on" in second.error
