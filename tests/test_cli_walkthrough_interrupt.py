"""Ctrl-C as an operator presses it: at any moment, a command says "interrupted" on one
line and exits 130, with no traceback, whatever Python made of the KeyboardInterrupt."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import semledger.replay

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp
from stdio_client import cli_in_process as cli
from tests_record import COUNTER, INCREMENT, record


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`args` run as a process of their own, as an operator's shell runs a command."""
    return subprocess.run(
        args, capture_output=True, text=True, cwd=cwd, env=mcp.env(), timeout=120, check=False
    )


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


_SWALLOWED_AS_FUZZ_STARTS = """
import signal
import sys

import semledger.replay
from semledger._cli import main

fuzz_app = semledger.replay.fuzz_app


def swallowing(*args, **kwargs):
    # Ctrl-C pressed as fuzz imports its modules, where Python may swallow the interrupt
    # ("Exception ignored in: <function _get_module_lock.<locals>.cb>").
    try:
        signal.raise_signal(signal.SIGINT)
    except KeyboardInterrupt:
        pass
    return fuzz_app(*args, **kwargs)


semledger.replay.fuzz_app = swallowing
sys.exit(main(sys.argv[1:]))
"""


def test_a_ctrl_c_python_swallowed_as_fuzz_started_still_stops_it(tmp_path: Path) -> None:
    """Swallowed, it was the one Ctrl-C fuzz takes: every later one was ignored, and the run
    went on to its last example (minutes of a long one), then said it found nothing, exit 0."""
    done = _run(
        sys.executable, "-c", _SWALLOWED_AS_FUZZ_STARTS, "fuzz", COUNTER, "--examples", "300",
        "--db", str(tmp_path / "log.db"),
    )
    assert (done.returncode, done.stdout) == (130, ""), done.stdout + done.stderr
    assert done.stderr == (
        "semledger: interrupted: 0 of 300 examples passed, no counterexample\n"
    )


_INTERRUPTED_TWICE = """
import atexit
import signal
import sys

import semledger.replay
from semledger._cli import main


def interrupted(*args, **kwargs):
    # The second Ctrl-C comes as the process exits: held down, or sent to the process
    # group by the terminal and again by a wrapper that forwards it.
    atexit.register(signal.raise_signal, signal.SIGINT)
    raise KeyboardInterrupt


semledger.replay.audit_report = interrupted
sys.argv[0] = "semledger"
sys.exit(main())
"""


def test_a_second_ctrl_c_as_an_interrupted_command_exits_is_ignored(log: Path) -> None:
    """It printed "Exception ignored in: ..." and a KeyboardInterrupt traceback under the
    "interrupted" line (landing in threading's shutdown), or killed the process by SIGINT."""
    done = _run(sys.executable, "-c", _INTERRUPTED_TWICE, "audit", "counter", "--db", str(log))
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "semledger: interrupted\n")


_LANDS_IN_A_DEL = """
import signal
import sys

import semledger.replay
from semledger._cli import main

fuzz_app = semledger.replay.fuzz_app


class Dropped:
    def __del__(self):
        # Ctrl-C as the garbage is collected (a Trio nursery's, say), where Python swallows
        # the interrupt and prints "Exception ignored in: <function ...__del__>".
        signal.raise_signal(signal.SIGINT)


def collecting(*args, **kwargs):
    Dropped()
    return fuzz_app(*args, **kwargs)


semledger.replay.fuzz_app = collecting
sys.exit(main(sys.argv[1:]))
"""


def test_a_ctrl_c_that_lands_in_a_del_stops_fuzz_with_no_traceback(tmp_path: Path) -> None:
    """Pressed as fuzz ran an app's effects, it could land in a Trio nursery's __del__: the
    run stopped, but under a traceback, "Exception ignored in: <function Nursery.__del__>"
    and a KeyboardInterrupt raised in semledger's signal handler."""
    done = _run(
        sys.executable, "-c", _LANDS_IN_A_DEL, "fuzz", COUNTER, "--examples", "300",
        "--db", str(tmp_path / "log.db"),
    )
    assert (done.returncode, done.stdout) == (130, ""), done.stdout + done.stderr
    assert done.stderr == (
        "semledger: interrupted: 0 of 300 examples passed, no counterexample\n"
    )


_CUT_SHORT_APP = '''
import signal

import attrs

from semledger.examples import counter


def update(model, msg):
    if isinstance(msg, counter.Increment):
        try:
            signal.raise_signal(signal.SIGINT)  # Ctrl-C as the update runs
        except KeyboardInterrupt as interrupt:
            # As Trio does when it lands in its own code: TrioInternalError from it.
            raise RuntimeError("cut short") from interrupt
    return counter.update(model, msg)


app = attrs.evolve(counter.app, update=update, name="counter-cut-short")
'''


def test_a_failure_a_ctrl_c_caused_is_the_interrupt_not_a_counterexample(tmp_path: Path) -> None:
    """Pressed as fuzz ran the todo app, 2 times in 30 it landed in Trio's own code as an
    effect ran, which raised TrioInternalError from it: that was saved to the log as the
    app's counterexample ("internal error in Trio - please file a bug!"), and printed as one,
    "interrupted while shrinking"."""
    (tmp_path / "cut_short.py").write_text(_CUT_SHORT_APP, encoding="utf-8")
    done = _run(
        *mcp.COMMAND, "fuzz", "cut_short:app", "--examples", "300", "--seed", "1",
        "--db", "log.db", cwd=tmp_path,
    )
    assert (done.returncode, done.stdout) == (130, ""), done.stdout + done.stderr
    assert re.fullmatch(
        r"semledger: interrupted: \d+ of 300 examples passed, no counterexample\n", done.stderr
    ), done.stderr
    assert not (tmp_path / "log.db").exists()


_BEFORE_AN_EFFECT_STARTS = """
import signal
import sys

import trio

from semledger._cli import main
from semledger.replay import _fuzz

run = trio.run


def interrupted(fn, *args, **kwargs):
    if fn is _fuzz._outcome:  # an effect's run
        trio.run = run
        coroutine = fn(*args)  # made as Trio makes it: Ctrl-C comes before its first step
        signal.raise_signal(signal.SIGINT)
    return run(fn, *args, **kwargs)


trio.run = interrupted
sys.argv[0] = "semledger"
sys.exit(main())
"""


def test_an_effect_a_ctrl_c_left_unstarted_is_not_warned_of_as_fuzz_exits(
    tmp_path: Path,
) -> None:
    """Under the interrupted line it printed "sys:1: RuntimeWarning: coroutine '_outcome' was
    never awaited" and "Enable tracemalloc to get the object allocation traceback"."""
    done = _run(
        sys.executable, "-c", _BEFORE_AN_EFFECT_STARTS, "fuzz", "semledger.examples.todo:app",
        "--examples", "300", "--allow-issue", "duplicate_semantic_id:todo.item",
        "--db", str(tmp_path / "log.db"),
    )
    assert (done.returncode, done.stdout) == (130, ""), done.stdout + done.stderr
    assert re.fullmatch(
        r"semledger: interrupted: \d+ of 300 examples passed, no counterexample\n", done.stderr
    ), done.stderr
