"""Logs where nothing can be written: a read-only folder or file system, an archive."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from semledger.eventlog import NewEvent, SessionStarted, SqliteRecorder


def _started(session: str) -> list[NewEvent]:
    event = SessionStarted(
        app="semledger.examples.counter:app", surface="runtime", params={},
        redact_passwords=True,
    )  # fmt: skip
    return [NewEvent(session, 1, event, 100.0)]


def _as_a_user(code: str, path: Path) -> subprocess.CompletedProcess[str]:
    """Python's `code` (``%r`` given `path`) with the rights permissions give (root ignores
    them unless it drops the capabilities that let it)."""
    drop = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search,-fowner", "--"]
    return subprocess.run(
        [*(drop if os.geteuid() == 0 else []), sys.executable, "-c", code % str(path)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


_INSPECT = (
    "from semledger.eventlog import SqliteRecorder as R;"
    " print(len(R.to_inspect(%r).sessions()))"
)
_SERVE = "from semledger.eventlog import SqliteRecorder as R; R(%r).close()"


def _killed_servers_files(tmp_path: Path, folder: Path) -> None:
    """A log and its -wal, which holds its events, as a killed server left them, copied
    into `folder` without the -shm."""
    log = tmp_path / "log.db"
    with SqliteRecorder(log) as recorder:
        recorder.append(_started("a"))
        shutil.copy(log, folder / "log.db")
        shutil.copy(f"{log}-wal", folder / "log.db-wal")
    assert os.path.getsize(folder / "log.db-wal") > 0


def test_a_log_and_its_wal_copied_without_the_shm_into_a_read_only_folder_says_what_to_do(
    tmp_path: Path,
) -> None:
    """Reading the -wal needs a -shm, which SQLite cannot make there: every command said
    only that this user may not write in the folder, not that the -shm was missing or what
    to do about it."""
    folder = tmp_path / "archive"
    folder.mkdir()
    _killed_servers_files(tmp_path, folder)
    folder.chmod(0o555)
    try:
        done = _as_a_user(_INSPECT, folder / "log.db")
    finally:
        folder.chmod(0o755)
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines()[-1] == (
        f"semledger.eventlog._errors.LogOpenError: cannot open the log {folder / 'log.db'}:"
        " its -wal holds events not yet in the log file, and reading them needs a -shm beside"
        " it, which is not there and cannot be made (this user may not write in its folder"
        f" {os.path.realpath(folder)}): copy the log and its -wal to a folder this user may"
        " write and read them there, or copy the -shm with them (unable to open database file)"
    )
    assert sorted(p.name for p in folder.iterdir()) == ["log.db", "log.db-wal"]
    done = _as_a_user(_INSPECT, folder / "log.db")  # the folder may be written again
    assert (done.returncode, done.stdout) == (0, "1\n"), done.stderr


@pytest.fixture
def read_only_mount(tmp_path: Path) -> Iterator[Path]:
    """A folder on a file system mounted read-only, holding a log (``ok.db``) and a killed
    server's log and -wal (``killed.db``); skipped where this user may not mount one."""
    folder = tmp_path / "mount"
    folder.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(folder)],
        capture_output=True, check=False,
    )  # fmt: skip
    if mounted.returncode:
        pytest.skip("this user may not mount a file system")
    try:
        SqliteRecorder(folder / "ok.db").close()
        killed = tmp_path / "killed"
        killed.mkdir()
        _killed_servers_files(killed, folder)
        (folder / "log.db").rename(folder / "killed.db")
        (folder / "log.db-wal").rename(folder / "killed.db-wal")
        subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=False)


@pytest.mark.parametrize(
    ("name", "code", "said"),
    [
        ("ok.db", _SERVE, "it is on a read-only file system, where it cannot be written"
         " (attempt to write a readonly database)"),
        ("new.db", _SERVE, "its folder {folder} is on a read-only file system, where the log"
         " and its -wal and -shm are kept: unable to open database file"),
        ("killed.db", _INSPECT, "its -wal holds events not yet in the log file, and reading"
         " them needs a -shm beside it, which is not there and cannot be made (its folder"
         " {folder} is on a read-only file system): copy the log and its -wal to a folder this"
         " user may write and read them there, or copy the -shm with them (unable to open"
         " database file)"),
    ],
    ids=["served", "new", "killed"],
)  # fmt: skip
def test_a_log_on_a_read_only_file_system_is_said_to_be_there_not_a_permission(
    read_only_mount: Path, name: str, code: str, said: str
) -> None:
    """Root on a file system mounted read-only was told it may not write in the folder."""
    done = subprocess.run(
        [sys.executable, "-c", code % str(read_only_mount / name)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines()[-1] == (
        f"semledger.eventlog._errors.LogOpenError: cannot open the log {read_only_mount / name}:"
        f" {said.format(folder=read_only_mount)}"
    )
    done = subprocess.run(
        [sys.executable, "-c", _INSPECT % str(read_only_mount / "ok.db")],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (0, "0\n"), done.stderr  # it is read as it is
