"""A test exported from a counterexample of nondeterminism drives the steps on two fresh
instances of the app, as the fuzzer did: run alone in a fresh process, one run does as the
log says, and the test passed with the bug in place."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path
from typing import Any

import pytest

from semledger.eventlog import MemoryRecorder
from semledger.replay import check_recorded_steps, export_test

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import tests_alternating
from tests_logged import logged

INCREMENT = "3"
COUNTER = "semledger.examples.counter:app"
NONDETERMINISTIC = {"fuzz": {"deterministic": False, "failure": "the app is not deterministic"}}


def exported_test(params: dict[str, Any]) -> Any:
    """The test exported from two increments of the alternating counter, as a fresh process
    runs it (its calls counted from 0 again)."""
    recorder = MemoryRecorder()
    tests_alternating._calls = itertools.count()
    source = export_test(
        recorder, logged(recorder, "tests_alternating:app", [INCREMENT, INCREMENT], params)
    )
    tests_alternating._calls = itertools.count()
    module: dict[str, Any] = {}
    exec(compile(source, "exported", "exec"), module)
    (test,) = (v for k, v in module.items() if k.startswith("test_"))
    return test


def test_an_exported_nondeterminism_counterexample_fails_where_two_runs_differ() -> None:
    with pytest.raises(
        AssertionError, match=r"^step 1 \(ActionRequested\) did not do the same"
    ) as failed:
        exported_test(NONDETERMINISTIC)()
    said = str(failed.value)
    assert "on two fresh instances of the app" in said
    assert "the app is not deterministic" in said
    notes = getattr(failed.value, "__notes__", [])
    assert notes[0].startswith("note: the fuzzer recorded this session as nondeterministic")


def test_a_session_not_recorded_as_nondeterministic_is_driven_once() -> None:
    exported_test({})()


def test_the_docstring_says_the_steps_are_driven_on_two_instances() -> None:
    recorder = MemoryRecorder()
    session = logged(recorder, "semledger.examples.counter:app", [INCREMENT], NONDETERMINISTIC)
    source = export_test(recorder, session)
    docstring = " ".join(source.split('"""')[1].split())
    assert "drives the steps on two fresh instances of the app side by side" in docstring
    module: dict[str, Any] = {}
    exec(compile(source, "exported", "exec"), module)
    (test,) = (v for k, v in module.items() if k.startswith("test_"))
    test()  # a deterministic app passes


def test_a_nondeterministic_crash_exports_no_fixed_switch_nor_suggests_one() -> None:
    """A bug that fires on the Nth call in a process may not fire in the test at all: it
    failed saying "set FIXED = True", and with it set passed, the bug still there."""
    recorder = MemoryRecorder()
    session = logged(recorder, "tests_buggy:app", [INCREMENT, "5"], NONDETERMINISTIC)
    source = export_test(recorder, session)
    assert "CRASH = (2, 'ZeroDivisionError')" in source
    assert "FIXED =" not in source
    assert "fixed=" not in source
    docstring = " ".join(source.split('"""')[1].split())
    assert "set FIXED" not in docstring
    assert "this test may pass while the bug is there" in docstring
    assert "fuzz the app again to check one" in docstring
    module: dict[str, Any] = {}
    exec(compile(source.replace("tests_buggy:app", COUNTER), "exported", "exec"), module)
    (test,) = (v for k, v in module.items() if k.startswith("test_"))
    with pytest.raises(AssertionError, match="the recorded crash no longer happens") as gone:
        test()
    assert "FIXED = True" not in str(gone.value)
    assert "This test cannot check a fix" in str(gone.value)
    steps, crash = module["STEPS"], module["CRASH"]
    with pytest.raises(AssertionError, match=r"^fixed=True cannot check a fix") as refused:
        check_recorded_steps(
            COUNTER, module["INITIAL"], steps, crash=crash, nondeterministic=True, fixed=True
        )
    assert "fuzz the app again to check one" in str(refused.value)
