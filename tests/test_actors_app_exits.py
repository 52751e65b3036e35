"""App code that calls ``sys.exit()`` fails as the app's own error: the server goes on."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp

from semledger.eventlog import EffectFailed, SessionCrashed, SqliteRecorder

EXITING = Path(__file__).parent / "apps" / "tests_exiting.py"

HANG_GUARD_S = 60
"""Not a measurement: a bound on a wait that, broken, never ends."""


def _line_of(path: Path, code: str) -> int:
    """The number of the line of `path` that holds `code`."""
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if code in line)


def _stop(server: subprocess.Popen[str]) -> tuple[int, str]:
    assert server.stdin is not None
    assert server.stderr is not None
    server.stdin.close()
    server.wait(timeout=HANG_GUARD_S)
    return server.returncode, server.stderr.read()


@pytest.mark.parametrize(
    ("button", "failure"),
    [
        ("load", "effect 1 (cli.fetch) failed: SystemExit: 3"),
        (
            "wrap",
            "effect 1 (asyncio.wrapped) failed: CancelledError: the wrapped loop was cancelled",
        ),
        ("mute", "effect 1 (unprintable) failed: UnprintableError: <str() raised ValueError>"),
    ],
)
def test_an_effect_that_raises_no_exception_is_logged_as_failed_and_the_session_goes_on(
    tmp_path: Path, button: str, failure: str
) -> None:
    """SystemExit, or asyncio's CancelledError, is no Exception: it went past the effect's
    handler and stopped the whole server, nothing logged, and again on every resume, which
    starts the effect again. An exception whose ``__str__`` raises did the same: logging its
    failure raised."""
    db = tmp_path / "log.db"
    server = mcp.start("tests_exiting:app", db, "fx")
    try:
        assert mcp.ask(server, mcp.perform(1, button))["ok"]
        deadline = time.monotonic() + HANG_GUARD_S
        with SqliteRecorder(db) as recorder:
            while not any(isinstance(e, EffectFailed) for _r, e in recorder.events("fx")):
                assert time.monotonic() < deadline
                time.sleep(0.05)
            failed = next(e for _r, e in recorder.events("fx") if isinstance(e, EffectFailed))
        assert failure.endswith(failed.error)
        assert mcp.ask(server, mcp.perform(2, "bump"))["ok"]
    finally:
        status, stderr = _stop(server)
    assert status == 0, stderr
    assert failure in stderr


def test_an_update_that_calls_sys_exit_crashes_its_session_on_the_record(tmp_path: Path) -> None:
    """The crash was an internal error for the agent and a traceback of the server's own,
    with no SessionCrashed logged: nothing for replay or the audit to pin."""
    db = tmp_path / "log.db"
    done = subprocess.run(
        [*mcp.COMMAND, "serve", "tests_exiting:app", "--db", str(db), "--session", "quit"],
        input=mcp.initialize() + mcp.perform(1, "quit"), capture_output=True, text=True,
        env=mcp.env(), timeout=HANG_GUARD_S, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    line = _line_of(EXITING, 'sys.exit("the library gave up")')
    assert done.stderr.splitlines()[-1] == (
        "semledger: session 'quit' ended: its application raised"
        f" SystemExit('the library gave up') (at {EXITING}, line {line})"
    )
    assert mcp.envelopes(done.stdout)[1]["error"]["code"] == "host_closed", done.stdout
    with SqliteRecorder(db) as recorder:
        last = [e for _r, e in recorder.events("quit")][-1]
    assert isinstance(last, SessionCrashed)
    assert last.exception_type == "SystemExit"
    replayed = mcp.cli("replay", "quit", "--db", str(db), COLUMNS="200")
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "raised again at step 1" in replayed.stdout
