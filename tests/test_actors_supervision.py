"""Supervision: an application crash ends only its own session, logged with its traceback."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import trio
import trio.testing

from semledger.actors import (
    ActorClosedError,
    LogWriter,
    SessionActor,
    SessionCrashedError,
    SessionRegistry,
)
from semledger.eventlog import ActionRequested, MemoryRecorder, SessionCrashed
from semledger.examples import counter
from semledger.replay import reexecute
from semledger.runtime import ActionKind, BySemanticId, Latest, Receipt, SemanticId, SimpleAction

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import tests_broken_start
import tests_crashy

INCREMENT = BySemanticId(SemanticId.new("counter.increment"))
ACTIVATE = SimpleAction(ActionKind.ACTIVATE)


async def test_a_crashing_session_is_logged_and_ended_while_another_carries_on() -> None:
    recorder = MemoryRecorder()
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            writer: LogWriter = await nursery.start(LogWriter(recorder).run)
            registry = SessionRegistry(nursery, writer, recorder)
            crashy = await registry.open(
                "crashy",
                lambda: SessionActor(
                    "crashy", tests_crashy.app, "tests_crashy:app", writer, recorder
                ),
            )
            steady = await registry.open(
                "steady",
                lambda: SessionActor(
                    "steady", counter.app, "semledger.examples.counter:app", writer, recorder
                ),
            )
            for _ in range(tests_crashy.CRASH_AT - 1):
                assert isinstance(
                    await crashy.perform_action(INCREMENT, ACTIVATE, Latest()), Receipt
                )
            with pytest.raises(SessionCrashedError, match="ThirdIncrementError"):
                await crashy.perform_action(INCREMENT, ACTIVATE, Latest())
            await trio.testing.wait_all_tasks_blocked()
            assert "crashy" not in registry
            assert registry.names == ["steady"]
            with pytest.raises(ActorClosedError):
                await crashy.perform_action(INCREMENT, ACTIVATE, Latest())

            for _ in range(5):
                receipt = await steady.perform_action(INCREMENT, ACTIVATE, Latest())
                assert isinstance(receipt, Receipt)
            assert receipt.after == 6
            await registry.close_all()
            writer.close()

    events = [event for _record, event in recorder.events("crashy")]
    crash = events[-1]
    assert isinstance(crash, SessionCrashed)
    assert crash.exception_type == "ThirdIncrementError"
    assert "Traceback (most recent call last)" in crash.traceback
    assert "the count may not reach 3" in crash.traceback
    assert "tests_crashy.py" in crash.traceback
    assert isinstance(events[-2], ActionRequested)  # the input that made it crash is logged
    summaries = {s.name: s for s in recorder.sessions()}
    assert summaries["crashy"].crashed
    assert summaries["steady"].ended
    assert not summaries["steady"].crashed


async def test_an_app_that_raises_as_it_starts_is_logged_as_crashed_and_replays_so() -> None:
    recorder = MemoryRecorder()
    app, ref = tests_broken_start.app, "tests_broken_start:app"
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            writer: LogWriter = await nursery.start(LogWriter(recorder).run)
            registry = SessionRegistry(nursery, writer, recorder)
            with pytest.raises(SessionCrashedError, match="raised as it started: BrokenViewError"):
                await registry.open(
                    "broken", lambda: SessionActor("broken", app, ref, writer, recorder)
                )
            assert "broken" not in registry
            with pytest.raises(SessionCrashedError, match="cannot be resumed"):
                await registry.open(
                    "broken", lambda: SessionActor("broken", app, ref, writer, recorder)
                )
            writer.close()
    events = [e for _r, e in recorder.events("broken")]
    assert [type(e).__name__ for e in events] == ["SessionStarted", "SessionCrashed"]
    assert isinstance(events[1], SessionCrashed)
    assert events[1].exception_type == "BrokenViewError"
    report = reexecute(recorder, "broken", app)
    assert report.ok, report
    assert report.crash_step == 0
    assert repr(report.crash.__cause__) == "BrokenViewError('the view is broken')"
