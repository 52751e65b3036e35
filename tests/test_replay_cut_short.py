"""A log that ends after an input, before its outputs (its server killed mid-step), replays
to a divergence naming the first output the log lacks."""

from __future__ import annotations

from semledger.actors import SessionCore
from semledger.eventlog import ActionRequested, Event, MemoryRecorder, NewEvent, SessionStarted
from semledger.examples import counter
from semledger.replay import reexecute

COUNTER = "semledger.examples.counter:app"


def test_an_input_whose_outputs_the_log_lacks_diverges_at_its_step_naming_what_it_made() -> None:
    core = SessionCore(counter.app)
    events: list[Event] = [SessionStarted(COUNTER, "runtime", {}, True), *core.initial_outputs()]
    request = ActionRequested(
        1, {"kind": "semantic_id", "id": "counter.increment"}, {"kind": "activate"},
        {"kind": "latest"}, False,
    )  # fmt: skip
    events.append(request)
    recorder = MemoryRecorder()
    recorder.append([NewEvent("c", seq, e, 0.0) for seq, e in enumerate(events, 1)])
    report = reexecute(recorder, "c", counter.app)
    divergence = report.divergence
    assert divergence is not None
    assert (divergence.step, divergence.seq) == (1, len(events))
    assert divergence.expected == "nothing more"
    assert divergence.actual.startswith("commit of generation 2 (hash ")
    assert divergence.input == "perform_action activate on 'counter.increment'"
