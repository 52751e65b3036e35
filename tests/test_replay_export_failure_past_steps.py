"""Steps whose recorded failure comes after the last of them (a hand-edited CRASH or
VIOLATION) fail: they pass only where the failure happens again."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from semledger.eventlog import MemoryRecorder
from semledger.replay import check_recorded_steps, export_test

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from tests_logged import logged

COUNTER = "semledger.examples.counter:app"
INCREMENT = "3"


def _module() -> dict[str, Any]:
    recorder = MemoryRecorder()
    module: dict[str, Any] = {}
    source = export_test(recorder, logged(recorder, COUNTER, [INCREMENT, INCREMENT]))
    exec(compile(source, "exported", "exec"), module)
    return module


def test_a_crash_recorded_after_the_last_step_fails_saying_so() -> None:
    module = _module()
    with pytest.raises(AssertionError) as failed:
        check_recorded_steps(
            COUNTER, module["INITIAL"], module["STEPS"], crash=(3, "ZeroDivisionError")
        )
    assert str(failed.value) == "the recorded session crashed at step 3, after the last step"


def test_a_violation_recorded_after_the_last_step_fails_saying_so() -> None:
    module = _module()
    with pytest.raises(AssertionError) as failed:
        check_recorded_steps(COUNTER, module["INITIAL"], module["STEPS"], violation=(3, "read"))
    assert str(failed.value) == (
        "the recorded session failed its read check at step 3, after the last step"
    )
