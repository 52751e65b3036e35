"""A log this user may not read, as an operator meets one (another user's, or a copy made
with the wrong mode): each command says so, naming the log, exit 2."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp
from stdio_client import cli_in_process as cli
from tests_record import COUNTER, INCREMENT, record


def _as_a_user(*args: str) -> subprocess.CompletedProcess[str]:
    """``semledger ARGS`` held to the file permissions (root ignores them unless it drops
    the capabilities that let it)."""
    drop = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search,-fowner", "--"]
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        pytest.skip("root, with no setpriv to drop the capabilities that ignore permissions")
    return subprocess.run(
        [*(drop if os.geteuid() == 0 else []), *mcp.COMMAND, *args],
        capture_output=True, text=True, env=mcp.env(), timeout=120, check=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def unreadable(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("unreadable") / "log.db"
    record(db, "counter", COUNTER, [INCREMENT])
    db.chmod(0)
    return db


@pytest.mark.parametrize(
    "command",
    [
        ["sessions"],
        ["read", "counter"],
        ["audit", "counter", "--verify"],
        ["replay", "counter"],
        ["end", "counter"],
        ["fuzz", COUNTER, "--examples", "1"],
    ],
    ids=" ".join,
)
def test_a_log_this_user_may_not_read_is_said_to_be_so(
    unreadable: Path, command: list[str]
) -> None:
    """It was "unable to open database file" (SQLite's words), or "attempt to write a
    readonly database" for end and fuzz, of a file not read-only but unreadable."""
    done = _as_a_user(*command, "--db", str(unreadable))
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert done.stderr == (
        f"semledger: cannot open the log {unreadable}: permission denied: this user may not"
        " read it\n"
    )


def test_a_fifo_given_as_the_log_is_refused_without_being_opened(tmp_path: Path) -> None:
    """Checking that the log could be read opened it, and so let a program that waited to
    write into the FIFO go on, into a reader that was gone."""
    fifo = tmp_path / "log.db"
    os.mkfifo(fifo)
    opened = threading.Event()

    def writer() -> None:
        with open(fifo, "wb"):  # waits for a reader
            opened.set()

    waiting = threading.Thread(target=writer, daemon=True)
    waiting.start()
    try:
        done = cli("sessions", "--db", str(fifo))
        assert done.returncode == 2, done.stderr
        assert done.stderr.endswith("it is a named pipe (FIFO), not a file\n")
        assert not opened.wait(0.5)
    finally:
        os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))  # the writer's reader, at last
        waiting.join(5)
