"""Surface sessions re-run call by call: the same snapshots and the same failures, or the
first call that differs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from semledger.adapters import LocateError, LoggedSurface, NavigationError, create_surface
from semledger.eventlog import SqliteRecorder
from semledger.hosts import rerun_surface

ROOT = Path(__file__).resolve().parent.parent
COUNTER = "semledger.examples.counter:app"


async def _record(recorder: SqliteRecorder, name: str) -> None:
    config = {"adapter": "runtime", "app": COUNTER}
    logged = LoggedSurface(create_surface(config), recorder, name, "runtime", config=config)
    await logged.open({})
    for _ in range(3):
        snapshot = await logged.snapshot()
        increment = next(n.ref for n in snapshot.nodes if n.name == "Increment")
        await logged.act("click", increment)
    with pytest.raises(NavigationError):
        await logged.act("navigate", None, {"url": "https://example.com/"})
    with pytest.raises(LocateError):
        await logged.describe("r999")
    await logged.snapshot()
    await logged.close()


async def test_a_recorded_surface_session_re_runs_identically(tmp_path: Path) -> None:
    recorder = SqliteRecorder(tmp_path / "log.db")
    await _record(recorder, "s")
    report = await rerun_surface(recorder, "s")
    assert report.ok, report.divergence
    assert report.inputs >= 9


async def test_a_surface_that_answers_differently_is_reported_at_the_first_snapshot(
    tmp_path: Path,
) -> None:
    recorder = SqliteRecorder(tmp_path / "log.db")
    await _record(recorder, "s")
    sys.path.insert(0, str(ROOT / "tests" / "apps"))
    try:
        variant = {"adapter": "runtime", "app": "tests_variant:app"}
        report = await rerun_surface(recorder, "s", config=variant)
    finally:
        sys.path.remove(str(ROOT / "tests" / "apps"))
    assert not report.ok
    assert report.divergence is not None
    assert (
        "structural hash" in report.divergence.expected or "snapshot" in report.divergence.expected
    )


def test_semledger_replay_re_runs_a_surface_session(tmp_path: Path) -> None:
    import trio

    db = tmp_path / "log.db"
    recorder = SqliteRecorder(db)
    trio.run(_record, recorder, "surface-1")
    recorder.close()
    result = subprocess.run(
        [sys.executable, "-m", "semledger", "replay", "surface-1", "--db", str(db)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "identical" in result.stdout
    assert "calls, each answered as logged" in result.stdout
    assert "commits" not in result.stdout  # a surface session has calls, not commits
