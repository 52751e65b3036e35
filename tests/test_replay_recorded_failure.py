"""Replay of a fuzzer counterexample that failed a check: only that check failing again at
its step reproduces it, and only the check holding there says it no longer happens; an
event 1 that is no start is damage to export as to replay."""

from __future__ import annotations

import time
from typing import Any

import pytest

from semledger.actors import SessionCore
from semledger.eventlog import (
    ActionRequested,
    Event,
    InconsistentLogError,
    MemoryRecorder,
    NewEvent,
    SessionEnded,
    SessionStarted,
)
from semledger.examples import counter
from semledger.replay import export_test, reexecute
from semledger.runtime import App, View, button, group, text

ADD = ActionRequested(
    1, {"kind": "semantic_id", "id": "add"}, {"kind": "activate"}, {"kind": "latest"}, False
)


def _rows_app(label: str) -> App[int, str]:
    """Each click of Add shows two rows of one semantic id: a view issue from the first."""

    def view(clicks: int) -> View[str]:
        rows = [text(label, str(i), semantic_id="row") for i in range(2 * clicks)]
        return group(button("Add", "add", semantic_id="add"), *rows, label="rows")

    return App(init=lambda: 0, update=lambda clicks, _msg: clicks + 1, view=view)


def _counterexample(app: App[Any, Any], check: str) -> MemoryRecorder:
    """A log of session 'fuzzed': `app` clicked Add once, saved as a fuzzer saves a
    counterexample that failed `check` after that input."""
    fuzzed = {
        "seed": 0,
        "failure": "the view reports two nodes with semantic id 'row'",
        "reads": [],
        "issues": True,
        "allowed_issues": [],
        "violated": {"step": 1, "check": check},
    }
    core = SessionCore(app)
    events: list[Event] = [
        SessionStarted("rows_app:app", "runtime", {"fuzz": fuzzed}, redact_passwords=False),
        *core.initial_outputs(),
        ADD,
        *core.step(ADD).outputs,
        SessionEnded("fuzz counterexample", by="fuzzer"),
    ]
    recorder = MemoryRecorder()
    now = time.time()
    recorder.append([NewEvent("fuzzed", i, e, now) for i, e in enumerate(events, 1)])
    return recorder


def test_a_recorded_view_issue_that_happens_again_at_its_step_is_reproduced() -> None:
    app = _rows_app("row")
    report = reexecute(_counterexample(app, "issues"), "fuzzed", app)
    assert report.ok, report.divergence
    assert (report.reproduced, report.violation_step) == ("view issue", 1)


def test_another_check_failing_at_the_recorded_step_does_not_reproduce_it() -> None:
    """The counterexample failed a read at step 1; the view's issue there now is another
    bug, which must not pass for the recorded one."""
    app = _rows_app("row")
    report = reexecute(_counterexample(app, "read"), "fuzzed", app)
    assert report.violation is None
    assert report.divergence is not None
    assert (report.divergence.step, report.divergence.expected) == (
        1, "the view to report no issues"
    )  # fmt: skip
    assert "duplicate_semantic_id" in report.divergence.actual


def test_outputs_differing_where_the_recorded_check_still_fails_are_not_the_fix() -> None:
    """The rows are labelled otherwise now (the commit's hash differs) and their ids are
    still the same: the divergence is the commit, not the recorded issue gone."""
    report = reexecute(_counterexample(_rows_app("row"), "issues"), "fuzzed", _rows_app("line"))
    divergence = report.divergence
    assert divergence is not None
    assert divergence.step == 1
    assert divergence.expected.startswith("commit of generation 2"), divergence
    assert "no longer happens" not in divergence.actual
    assert any("'row' -> 'line'" in line for line in divergence.diff), divergence.diff


def test_outputs_that_differ_at_the_recorded_step_where_its_check_now_holds_are_the_fix() -> None:
    def fixed_view(clicks: int) -> View[str]:
        rows = [text("row", str(i), semantic_id=f"row.{i}") for i in range(2 * clicks)]
        return group(button("Add", "add", semantic_id="add"), *rows, label="rows")

    fixed = App(init=lambda: 0, update=lambda clicks, _msg: clicks + 1, view=fixed_view)
    report = reexecute(_counterexample(_rows_app("row"), "issues"), "fuzzed", fixed)
    divergence = report.divergence
    assert divergence is not None
    assert divergence.actual == "the view reports none: the recorded view issue no longer happens"


def test_export_refuses_an_event_1_that_is_not_the_start_though_its_chain_holds() -> None:
    """Written so, the chain verifies: only event 1 itself shows the damage."""
    start = SessionStarted("semledger.examples.counter:app", "runtime", {}, redact_passwords=False)
    events = [*SessionCore(counter.app).initial_outputs(), start]
    recorder = MemoryRecorder()
    now = time.time()
    recorder.append([NewEvent("s", i, e, now) for i, e in enumerate(events, 1)])
    with pytest.raises(InconsistentLogError) as raised:
        export_test(recorder, "s")
    assert str(raised.value) == (
        "session 's', event 1: it is a Committed, not the SessionStarted a session begins with"
    )
