"""Ctrl-C as an operator presses it: at any moment, a command says "interrupted" on one
line and exits 130, with no traceback, whatever Python made of the KeyboardInterrupt."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import semledger.replay

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from stdio_client import cli_in_process as cli
from tests_record import COUNTER, INCREMENT, record

_LANDS_IN_A_CLASS = '''
class _Lands:
    def __set_name__(self, owner, name):
        raise KeyboardInterrupt  # a Ctrl-C pressed as the class below is made


class Model:
    field = _Lands()
'''
"""A module Ctrl-C interrupts as it is imported: Python 3.11 raises a RuntimeError
("Error calling __set_name__") from the KeyboardInterrupt."""


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("interrupt-walkthrough") / "log.db"
    record(db, "counter", COUNTER, [INCREMENT])
    return db


@pytest.mark.parametrize(
    "command", [["replay", "counter", "--app"], ["fuzz"]], ids=["replay --app", "fuzz"]
)
def test_ctrl_c_as_the_app_is_imported_is_an_interrupt_not_an_app_that_cannot_load(
    log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    """It said "'interrupted_app:app': importing interrupted_app raised RuntimeError: Error
    calling __set_name__ ...", exit 2, as if the app were broken."""
    (tmp_path / "interrupted_app.py").write_text(_LANDS_IN_A_CLASS, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "interrupted_app", raising=False)
    done = cli(*command, "interrupted_app:app", "--db", str(log))
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "semledger: interrupted\n")


def test_ctrl_c_as_a_command_imports_a_module_of_its_own_is_an_interrupt_not_a_traceback(
    log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pressed half a second into `fuzz`, as it imported pytest's modules for hypothesis, it
    printed a traceback ending in "RuntimeError: Error calling __set_name__", exit 1."""

    def importing(*_: object, **__: object) -> None:
        exec(compile(_LANDS_IN_A_CLASS, "imported", "exec"), {})

    monkeypatch.setattr(semledger.replay, "audit_report", importing)
    done = cli("audit", "counter", "--db", str(log))
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "semledger: interrupted\n")
