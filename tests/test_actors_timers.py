"""Timer subscriptions: the model says which timers run; every tick is a logged input that
replay re-delivers, and a subscription that raises crashes the session at that step. A
tick or an effect result the log cannot record crashes the session as replay does."""

from __future__ import annotations

import math
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import attrs
import pytest
import trio

from semledger.actors import LogWriter, MessageCodecError, SessionActor, SessionRegistry
from semledger.actors._session import _TimerTick
from semledger.eventlog import MemoryRecorder, SessionCrashed, TimerFired
from semledger.replay import reexecute
from semledger.runtime import (
    ActionKind,
    App,
    ApplicationError,
    AppRuntime,
    BySemanticId,
    Effect,
    Every,
    Latest,
    Next,
    Receipt,
    SemanticId,
    SimpleAction,
    View,
    button,
    group,
    text,
)

TOGGLE = BySemanticId(SemanticId.new("clock.toggle"))
ACTIVATE = SimpleAction(ActionKind.ACTIVATE)


def update(model: tuple[bool, int], msg: str) -> tuple[bool, int]:
    running, ticks = model
    return (not running, ticks) if msg == "toggle" else (running, ticks + 1)


def view(model: tuple[bool, int]) -> View[str]:
    return group(
        text("ticks", str(model[1]), semantic_id="clock.ticks"),
        button("start/stop", "toggle", semantic_id="clock.toggle"),
        label="clock",
    )


PERIOD = 0.02


def ticking(model: tuple[bool, int]) -> list[Every[str]]:
    return [Every(PERIOD, "tick")] if model[0] else []


CLOCK: App[tuple[bool, int], str] = App(
    init=lambda: (True, 0), update=update, view=view, subscriptions=ticking
)


def ticks_of(actor: SessionActor) -> int:
    model: tuple[bool, int] = actor.core.runtime.model
    return model[1]


@asynccontextmanager
async def log_writer(recorder: MemoryRecorder) -> AsyncIterator[tuple[trio.Nursery, LogWriter]]:
    """A nursery with a log writer on `recorder`, closed (after writing) at the end."""
    async with trio.open_nursery() as nursery:
        writer: LogWriter = await nursery.start(LogWriter(recorder).run)
        yield nursery, writer
        writer.close()


async def until(condition: Any) -> None:
    with trio.fail_after(10):
        while not condition():
            await trio.sleep(PERIOD / 2)


async def test_a_subscribed_timer_ticks_as_logged_inputs_until_the_model_drops_it() -> None:
    recorder = MemoryRecorder()
    async with log_writer(recorder) as (_, writer):
        actor = SessionActor("clock", CLOCK, "tests:clock", writer, recorder)
        async with trio.open_nursery() as sessions:
            await sessions.start(actor.run)
            await until(lambda: ticks_of(actor) >= 3)
            receipt = await actor.perform_action(TOGGLE, ACTIVATE, Latest())
            assert isinstance(receipt, Receipt)
            stopped_at = ticks_of(actor)
            await trio.sleep(PERIOD * 10)
            assert ticks_of(actor) == stopped_at  # no tick once the model dropped the timer
            assert actor._nursery is not None
            assert [t.name for t in actor._nursery.child_tasks] == []  # its task ended
            await actor.perform_action(TOGGLE, ACTIVATE, Latest())
            await until(lambda: ticks_of(actor) >= stopped_at + 2)
            actor.close()
    ticks = ticks_of(actor)
    fired = [e for _r, e in recorder.events("clock") if isinstance(e, TimerFired)]
    assert len(fired) == ticks
    # A new subscription is a new timer.
    assert [f.timer_id for f in fired] == [1] * stopped_at + [2] * (ticks - stopped_at)
    report = reexecute(recorder, "clock", CLOCK)
    assert report.ok, report
    assert report.inputs == ticks + 2


@pytest.mark.parametrize(
    ("subscriptions", "why"),
    [
        pytest.param(lambda _m: [], "subscribes to no timer", id="no-timer"),
        pytest.param(lambda _m: [Every(PERIOD, "tock")], "subscribes to no timer", id="other"),
    ],
)
async def test_a_logged_tick_the_replayed_app_does_not_subscribe_to_is_a_divergence(
    subscriptions: Any, why: str
) -> None:
    """Its update would take the tick all the same; replay said identical, and so did the
    test --export-test wrote, for an app that no longer starts the timer."""
    recorder = MemoryRecorder()
    async with log_writer(recorder) as (_, writer):
        actor = SessionActor("clock", CLOCK, "tests:clock", writer, recorder)
        async with trio.open_nursery() as sessions:
            await sessions.start(actor.run)
            await until(lambda: ticks_of(actor) >= 2)
            actor.close()
    changed = attrs.evolve(CLOCK, subscriptions=subscriptions)
    report = reexecute(recorder, "clock", changed)
    assert report.divergence is not None
    assert report.divergence.step == 1
    assert why in report.divergence.actual
    assert reexecute(recorder, "clock", CLOCK).ok


def broken_subscriptions(model: tuple[bool, int]) -> Any:
    if model[1] >= 2:
        raise RuntimeError("no more timers")
    return ticking(model)


async def test_subscriptions_that_raise_crash_the_session_at_that_step_and_replay_again() -> None:
    app = App(init=lambda: (True, 0), update=update, view=view, subscriptions=broken_subscriptions)
    recorder = MemoryRecorder()
    async with log_writer(recorder) as (nursery, writer):
        registry = SessionRegistry(nursery, writer, recorder)  # supervises: a crash is logged
        actor = await registry.open(
            "clock", lambda: SessionActor("clock", app, "tests:clock", writer, recorder)
        )
        await until(lambda: actor.ended)
        await until(lambda: "clock" not in registry)
    events = [e for _r, e in recorder.events("clock")]
    assert isinstance(events[-1], SessionCrashed)
    assert sum(isinstance(e, TimerFired) for e in events) == 2
    report = reexecute(recorder, "clock", app)
    assert report.ok
    assert report.crash_step == 2


@pytest.mark.parametrize("seconds", [0, -1, math.inf, math.nan])
def test_a_timer_needs_a_positive_finite_period(seconds: Any) -> None:
    with pytest.raises(ValueError, match=r"Every\.seconds: expected a positive finite number"):
        Every(seconds, "tick")


@pytest.mark.parametrize(
    ("seconds", "shown"), [(True, "bool True"), ("1", "str '1'"), (None, "NoneType None")]
)
def test_a_timer_period_that_is_no_number_is_a_type_error(seconds: Any, shown: str) -> None:
    """Every("1", message) raised ValueError, as for a number out of range."""
    says = f"Every.seconds: expected a number of seconds, got {shown}"
    with pytest.raises(TypeError, match=f"^{re.escape(says)}$"):
        Every(seconds, "tick")


def test_a_timer_message_must_be_hashable() -> None:
    with pytest.raises(TypeError, match=r"Every\.message must be hashable"):
        Every(1.0, ["tick"])


@pytest.mark.parametrize(
    ("returned", "says"),
    [
        (Every(1.0, "tick"), "a sequence of Every values, got Every"),
        (None, "a sequence of Every values, got None"),
        (["tick"], "Every values only, got 'tick'"),
    ],
)
def test_subscriptions_that_return_something_else_say_what_they_returned(
    returned: Any, says: str
) -> None:
    app = App(init=lambda: (True, 0), update=update, view=view, subscriptions=lambda _m: returned)
    with pytest.raises(ApplicationError, match=says):
        AppRuntime(app).subscriptions()


async def test_a_tick_of_a_dropped_timer_run_is_discarded_even_after_resubscribing() -> None:
    slow = Every(1000.0, "tick")  # never fires by itself in this test
    app = App(
        init=lambda: (True, 0),
        update=update,
        view=view,
        subscriptions=lambda model: [slow] if model[0] else [],
    )
    recorder = MemoryRecorder()
    async with log_writer(recorder) as (_, writer):
        actor = SessionActor("clock", app, "tests:clock", writer, recorder)
        async with trio.open_nursery() as sessions:
            await sessions.start(actor.run)
            dropped = actor._timers[slow][1]
            await actor.perform_action(TOGGLE, ACTIVATE, Latest())
            await actor.perform_action(TOGGLE, ACTIVATE, Latest())  # subscribed again
            await actor.tell(_TimerTick(slow, dropped))
            await actor.read_semantics(None)
            assert ticks_of(actor) == 0
            await actor.tell(_TimerTick(slow, actor._timers[slow][1]))
            await actor.read_semantics(None)
            assert ticks_of(actor) == 1
            actor.close()


async def test_a_recovered_session_runs_the_timers_its_model_subscribes_to() -> None:
    recorder = MemoryRecorder()
    async with log_writer(recorder) as (_, writer):
        first = SessionActor("clock", CLOCK, "tests:clock", writer, recorder)
        async with trio.open_nursery() as sessions:
            await sessions.start(first.run)
            await until(lambda: ticks_of(first) >= 2)
            sessions.cancel_scope.cancel()  # gone without ending: recoverable
        await trio.sleep(PERIOD)  # the writer finishes what it was handed
        before = sum(isinstance(e, TimerFired) for _r, e in recorder.events("clock"))
        again = SessionActor("clock", CLOCK, "tests:clock", writer, recorder)
        async with trio.open_nursery() as sessions:
            await sessions.start(again.run)
            assert again.recovered
            assert ticks_of(again) >= before >= 2  # the logged ticks, re-delivered
            await until(lambda: ticks_of(again) >= before + 2)
            again.close()
    assert reexecute(recorder, "clock", CLOCK).ok


@attrs.frozen
class Unlisted:
    """Not in the app's message_types: the log cannot record it."""


async def _crashed_on_an_unrecordable_message(
    app: App[Any, Any], session: str, act: Callable[[SessionActor], Awaitable[None]] | None = None
) -> MemoryRecorder:
    """The log of `app` run as `session` (after `act`) until it crashes on a message the log
    cannot record."""
    recorder = MemoryRecorder()
    async with log_writer(recorder) as (nursery, writer):
        registry = SessionRegistry(nursery, writer, recorder)
        actor = await registry.open(
            session, lambda: SessionActor(session, app, f"tests:{session}", writer, recorder)
        )
        if act is not None:
            await act(actor)
        await until(lambda: actor.ended)
        await until(lambda: session not in registry)
    events = [e for _r, e in recorder.events(session)]
    assert isinstance(events[-1], SessionCrashed)
    assert events[-1].exception_type == "MessageCodecError"
    return recorder


async def test_a_tick_the_log_cannot_record_crashes_the_session_and_replays_as_that_crash() -> None:
    app = App(
        init=lambda: (True, 0),
        update=update,
        view=view,
        subscriptions=lambda _m: [Every(PERIOD, Unlisted())],
    )
    recorder = await _crashed_on_an_unrecordable_message(app, "clock")
    report = reexecute(recorder, "clock", app)
    assert report.ok, report
    assert report.crash_step == 1


BIG = 2**70
"""An int msgpack cannot pack: the log carries ints of 64 bits."""
BIG_REASON = (
    f"an int message cannot be logged: {BIG} does not fit in 64 bits, which the log carries"
)


@pytest.mark.parametrize(
    ("result", "reason"),
    [
        (Unlisted(), "Unlisted is not among the app's message_types, so the log cannot record it"),
        (BIG, BIG_REASON),
    ],
    ids=["unlisted-class", "int-beyond-64-bits"],
)
async def test_an_unrecordable_effect_result_crashes_the_session_and_replays_naming_its_cause(
    result: object, reason: str
) -> None:
    """The log holds None for the message it could not record; replay, failing on that None,
    said "not an encoded message: None" where the live session named the unlisted class. A
    bare int was not checked at all: the writer failed on it, and the session ended as one
    whose log could not be written, with no crash logged."""

    async def unrecordable() -> object:
        return result

    def start(model: tuple[bool, int], msg: str) -> Next[tuple[bool, int], Any]:
        return Next(update(model, msg), (Effect(unrecordable),) if msg == "toggle" else ())

    async def toggle(actor: SessionActor) -> None:
        assert isinstance(await actor.perform_action(TOGGLE, ACTIVATE, Latest()), Receipt)

    app = App(init=lambda: (False, 0), update=start, view=view)
    recorder = await _crashed_on_an_unrecordable_message(app, "fx", toggle)
    report = reexecute(recorder, "fx", app)
    assert report.ok, report
    assert report.crash_step == 2
    assert isinstance(report.crash, MessageCodecError)
    assert str(report.crash) == reason


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        (BIG, BIG_REASON),
        (
            10**5000,
            "an int message cannot be logged: an int of 16610 bits does not fit in 64 bits,"
            " which the log carries",
        ),
    ],
    ids=["int-beyond-64-bits", "int-with-no-repr"],
)
async def test_a_tick_the_log_cannot_record_crashes_the_session_as_a_message_it_cannot_log(
    message: int, reason: str
) -> None:
    """A bare int was logged unchecked: the writer failed on it, and the session ended as one
    whose log could not be written, with no crash logged, resumed (and failed) every time.
    The timer's task was named by its repr, which raised for an int str() refuses (over
    4300 digits): the session stopped as it started, with no crash logged."""
    app = App(
        init=lambda: (True, 0),
        update=update,
        view=view,
        subscriptions=lambda _m: [Every(PERIOD, message)],
    )
    recorder = await _crashed_on_an_unrecordable_message(app, "clock")
    report = reexecute(recorder, "clock", app)
    assert report.ok, report
    assert report.crash_step == 1
    assert str(report.crash) == reason


async def test_new_timers_are_numbered_in_the_order_the_model_lists_them() -> None:
    """Not in set order, which for string messages changes with PYTHONHASHSEED."""
    listed = [Every(PERIOD, f"tick {name}") for name in "kdqavmzbt"]
    app = App(init=lambda: (True, 0), update=update, view=view, subscriptions=lambda _m: listed)
    recorder = MemoryRecorder()
    async with log_writer(recorder) as (_, writer):
        actor = SessionActor("clock", app, "tests:clock", writer, recorder)
        async with trio.open_nursery() as sessions:
            await sessions.start(actor.run)
            await until(lambda: ticks_of(actor) >= 3 * len(listed))
            actor.close()
    decode = actor.core.codec.decode
    fired = {
        decode(e.message): e.timer_id
        for _r, e in recorder.events("clock")
        if isinstance(e, TimerFired)
    }
    assert fired == {timer.message: number for number, timer in enumerate(listed, 1)}


def test_subscriptions_are_the_listed_timers_in_order_each_once() -> None:
    first, second = Every(1.0, "b"), Every(2.0, "a")
    app = App(
        init=lambda: (True, 0),
        update=update,
        view=view,
        subscriptions=lambda _m: [first, second, Every(1.0, "b")],
    )
    assert AppRuntime(app).subscriptions() == (first, second)
