"""Logging a session as a live one logs it, without serving it: for tests of what is done
with a log."""

from __future__ import annotations

from typing import Any

from semledger.actors import SessionCore, crash_event
from semledger.eventlog import (
    ActionRequested,
    Event,
    MemoryRecorder,
    NewEvent,
    SessionEnded,
    SessionStarted,
)
from semledger.replay import load_app


def logged(
    recorder: MemoryRecorder,
    app_ref: str,
    clicks: list[str],
    params: dict[str, Any] | None = None,
) -> str:
    """Log a session of `app_ref` clicking the nodes `clicks`, each at the generation it
    saw (as the fuzzer acts), as a live session logs it; its name."""
    core = SessionCore(load_app(app_ref))
    events: list[Event] = [SessionStarted(app_ref, "runtime", params or {}, False)]
    events += core.initial_outputs()
    for request_id, node in enumerate(clicks, start=1):
        precondition = {"kind": "exact", "generation": str(core.runtime.generation)}
        action = ActionRequested(
            request_id, {"kind": "node_id", "id": node}, {"kind": "activate"}, precondition, False
        )
        events.append(action)
        try:
            events += core.step(action).outputs
        except Exception as error:
            events.append(crash_event(error))
            break
    else:
        events.append(SessionEnded("over", by="fuzzer"))
    recorder.append([NewEvent("run", seq, e, 0.0) for seq, e in enumerate(events, start=1)])
    return "run"
