"""What `semledger audit` shows while it reads a long session: its walk over the events,
after the chain's with ``--verify``, with ``--json`` too, on stderr."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from semledger.eventlog import SqliteRecorder
from semledger.replay import audit_report

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp
from tests_record import COUNTER, INCREMENT, record

_LINE = re.compile(r"semledger: (verifying|auditing): (\d+)/(\d+) events")


@pytest.fixture(scope="module")
def long_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A session of more than a thousand events: the audit reports progress mid-walk."""
    db = tmp_path_factory.mktemp("progress") / "log.db"
    record(db, "s", COUNTER, [INCREMENT] * 400)
    return db


def test_audit_report_reports_its_progress_over_the_events(long_log: Path) -> None:
    seen: list[tuple[int, int]] = []
    with SqliteRecorder.to_inspect(long_log) as recorder:
        head = recorder.head("s")
        audit_report(recorder, "s", on_progress=lambda seq, last: seen.append((seq, last)))
    assert head is not None
    assert head.seq > 1000
    assert seen[0] == (1000, head.seq)
    assert seen[-1] == (head.seq, head.seq)
    assert [seq for seq, _ in seen] == sorted(seq for seq, _ in seen)


_WRONG_ANCHOR = f"1:{'00' * 32}"


@pytest.mark.parametrize(
    "flags", [(), ("--json",), ("--verify",), ("--verify", "--json"), ("--anchor", _WRONG_ANCHOR)]
)
def test_off_a_terminal_audit_prints_progress_lines_on_stderr_json_or_not(
    long_log: Path,
    flags: tuple[str, ...],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`semledger audit big [--verify] [--json] 2>err` printed nothing on stderr for the
    many seconds the audit read the events; with --json, not even the chain's progress."""
    from semledger import _cli

    monkeypatch.setattr(_cli, "_PLAIN_EVERY", 0.0)
    _cli.main(["audit", "s", "--db", str(long_log), *flags])
    out, err = capsys.readouterr()
    if "--json" in flags:
        assert json.loads(out)["session"] == "s"  # the lines are not in it
    lines = err.splitlines()
    found = [_LINE.fullmatch(line) for line in lines]
    assert all(found), err
    labels = [m.group(1) for m in found if m is not None]
    checked = "--verify" in flags or "--anchor" in flags
    assert labels == sorted(labels, reverse=True)  # the chain's first, then the audit's
    assert ("verifying" in labels) == checked
    assert lines[-1].startswith("semledger: auditing: ")
    done, total = map(int, lines[-1].split()[-2].split("/"))
    assert done == total > 1000


def test_at_a_terminal_audit_json_draws_its_bar_on_stderr_not_into_the_json(
    long_log: Path,
) -> None:
    """Its standard output a terminal, ``audit --json`` must write only the JSON there: a
    bar goes where the lines would, to stderr (a pipe here, so none is drawn)."""
    status, shown = mcp.at_a_terminal(
        "audit", "s", "--db", str(long_log), "--verify", "--json", columns=100,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    assert status == 0
    assert json.loads(shown.replace("\r\n", "\n"))["verify"]["ok"] is True


def test_at_a_terminal_audit_verify_shows_one_bar_verifying_then_auditing() -> None:
    from semledger._cli import _progress

    console = Console(file=io.StringIO(), force_terminal=True, width=100)
    with _progress(console, "verifying", True) as progress:
        progress(600, 600)
        progress.relabel("auditing")
        progress(300, 600)
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", console.file.getvalue())  # type: ignore[attr-defined]
    after = shown[shown.index("auditing") :]
    assert "verifying" not in after
    assert "100%" not in after
