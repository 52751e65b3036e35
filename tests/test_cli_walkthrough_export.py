"""`replay --export-test` to a path that cannot be written, as an operator first meets it:
refused at once, before the export's work, in a line naming the option and what is wrong."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import semledger.replay

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from stdio_client import cli_in_process as cli
from tests_record import COUNTER, INCREMENT, record


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("export-walkthrough") / "log.db"
    record(db, "counter", COUNTER, [INCREMENT])
    return db


def _not_exported(*_: object, **__: object) -> str:
    raise AssertionError("the export was made before its path was checked")


@pytest.mark.parametrize(
    ("where", "reason"),
    [
        ("missing/test_out.py", "there is no folder {tmp}/missing"),
        ("missing/deeper/test_out.py", "there is no folder {tmp}/missing/deeper"),
        ("a_file/test_out.py", "{tmp}/a_file is not a folder"),
    ],
)
def test_an_export_into_no_folder_is_refused_before_the_export_naming_the_folder(
    log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str, reason: str
) -> None:
    """It exported the whole session first (3 s of an 8,000-call one) and then said only
    "cannot write '...': No such file or directory", naming neither the option nor which
    folder was missing."""
    (tmp_path / "a_file").write_text("", encoding="utf-8")
    monkeypatch.setattr(semledger.replay, "export_test", _not_exported)
    path = f"{tmp_path}/{where}"
    done = cli("replay", "counter", "--db", str(log), "--export-test", path)
    assert done.returncode == 2, done.stdout + done.stderr
    said = reason.format(tmp=tmp_path)
    assert done.stderr == f"semledger: cannot write --export-test {path!r}: {said}\n"
    assert done.stdout == ""


@pytest.mark.parametrize("where", ["sub.py/", "a_directory.py/"])
def test_an_export_path_ending_in_a_slash_is_refused_as_a_folders_path(
    log: Path, tmp_path: Path, where: str
) -> None:
    """`Path` drops the slash, so 'sub.py/' passed for a .py file, and was refused later as
    "Is a directory", of a folder that is not there."""
    (tmp_path / "a_directory.py").mkdir()
    path = f"{tmp_path}/{where}"
    done = cli("replay", "counter", "--db", str(log), "--export-test", path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "semledger: argument --export-test: expected a path ending in .py (pytest runs no"
        f" other file), got {path!r}, a folder's path (it ends in '/') (see 'semledger replay"
        " --help')\n"
    )
