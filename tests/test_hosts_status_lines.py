"""What a session's log holds but no answer shows is said on serve's stderr as it happens."""

from __future__ import annotations

import logging
import queue
import subprocess
import sys
import threading
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp

HANG_GUARD_S = 60
"""Not a measurement: a bound on a wait that, broken, never ends."""


def test_an_effect_that_fails_is_said_on_stderr_as_it_happens(tmp_path: Path) -> None:
    """The app gets no message for it and its receipt only said pending_work: before, the
    operator learnt of the failure from nowhere."""
    server = subprocess.Popen(
        [*mcp.COMMAND, "serve", "tests_failing_effect:app", "--db", str(tmp_path / "log.db"),
         "--session", "fx"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=mcp.env(),
    )
    assert server.stdin is not None
    assert server.stderr is not None
    stderr = server.stderr
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in stderr], daemon=True).start()
    try:
        server.stdin.write(mcp.initialize() + mcp.perform(1, "load"))
        server.stdin.flush()
        said = [lines.get(timeout=HANG_GUARD_S) for _ in range(2)]
    finally:
        server.stdin.close()
        server.wait(timeout=HANG_GUARD_S)
    assert said[0].startswith("semledger: started session 'fx'")
    assert said[1] == (
        "semledger: session 'fx': effect 1 (backend.fetch) failed: ConnectionError: backend down"
        " (logged as EffectFailed; the app gets no message for it)\n"
    )
    assert server.returncode == 0


def test_a_status_line_shows_an_error_s_control_characters_escaped(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An effect's error text is the app's: its escape sequences reached the terminal raw,
    and a newline in it split the status line in two."""
    from semledger._cli import _StatusLines

    message = "effect 1 (fx.bad) failed: ValueError: disk on fire \x1b[31m!\nsecond line"
    record = logging.LogRecord("semledger.actors", logging.WARNING, __file__, 1, message, (), None)
    _StatusLines().emit(record)
    assert capsys.readouterr().err == (
        "semledger: effect 1 (fx.bad) failed: ValueError: disk on fire \\x1b[31m!\\nsecond line\n"
    )


def test_a_fault_of_semledgers_own_code_shows_its_traceback_above_its_status_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A call that failed inside the server (answered -32603) was logged with its traceback
    for a handler to show, and serve's showed one line: the operator had nothing to report
    the bug with."""
    from semledger._cli import _StatusLines

    try:
        raise RuntimeError("a bug inside the server \x1b[31m\nsecond line")
    except RuntimeError as error:
        fault = error
    message = "session 's': a call failed inside the server, answered -32603 (Internal error)"
    record = logging.LogRecord(
        "semledger.hosts", logging.ERROR, __file__, 1, message, (), (RuntimeError, fault, None)
    )
    _StatusLines().emit(record)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert "test_a_fault_of_semledgers_own_code_shows_its_traceback" in "\n".join(lines)
    assert lines[-3:] == [
        "RuntimeError: a bug inside the server \\x1b[31m",
        "second line",
        f"semledger: {message}",
    ]


def test_an_apps_failure_logged_with_its_error_is_its_status_line_alone(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An effect runner logs the app's failed effect as a warning with its error: the
    traceback is for faults of semledger's own code, and the app's is in its log."""
    from semledger._cli import _StatusLines

    fault = ValueError("disk on fire")
    message = "effect 1 (fx.bad) failed: the app gets no message for it"
    record = logging.LogRecord(
        "semledger.runtime", logging.WARNING, __file__, 1, message, (), (ValueError, fault, None)
    )
    _StatusLines().emit(record)
    assert capsys.readouterr().err == f"semledger: {message}\n"
