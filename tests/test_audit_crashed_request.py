"""The request a session crashed on is listed as crashed, not as one still awaiting its
answer."""

from __future__ import annotations

import sys
from pathlib import Path

from semledger.eventlog import MemoryRecorder
from semledger.replay import audit_report

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from tests_logged import logged

BUGGY = "tests_buggy:app"
"""Its Reset divides by zero."""
INCREMENT, RESET = "3", "5"


def test_the_request_a_session_crashed_on_is_listed_as_crashed() -> None:
    recorder = MemoryRecorder()
    session = logged(recorder, BUGGY, [INCREMENT, RESET])
    report = audit_report(recorder, session)
    assert [entry.outcome for entry in report.entries] == ["receipt", "crashed"]
    assert (report.ending.state, report.ending.reason) == ("crashed", "ZeroDivisionError")
