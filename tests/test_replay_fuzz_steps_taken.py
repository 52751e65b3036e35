"""What the fuzzer's steps do and check: an action the twin answers otherwise, a timer the
app stops subscribing to, reads and preconditions of generations several inputs old, an
action left unanswered."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from semledger.actors import SessionCore
from semledger.eventlog import ActionRequested, Event, MemoryRecorder, TimerFired
from semledger.examples import counter
from semledger.replay import _fuzz, fuzz_app
from semledger.runtime import (
    ActionKind,
    App,
    AppRuntime,
    Every,
    Reject,
    SemanticsAction,
    View,
    button,
    group,
    text,
)

UNIMPORTABLE = "no_such_module_here:app"
"""An app ref whose module does not import here: fuzz_app takes the App it is given."""


def test_an_action_the_twin_answers_otherwise_on_the_same_screen_is_a_counterexample() -> None:
    """The handler's refusal counts its calls: both sessions stay on one screen, and only
    the answers tell them apart."""
    calls = itertools.count()

    def refuse(_action: SemanticsAction) -> Reject:
        return Reject(f"refusal number {next(calls)}")

    def view(_model: int) -> View[str]:
        return group(button("Go", handlers={ActionKind.ACTIVATE: refuse}), label="form")

    app: App[int, str] = App(init=lambda: 0, update=lambda model, _msg: model, view=view)
    result = fuzz_app(app, UNIMPORTABLE, MemoryRecorder, examples=50, seed=1)
    assert result.failure is not None, result
    assert result.failure.startswith(
        "the app is not deterministic: at input 1, the same input was answered Rejection("
    ), result.failure
    assert not result.deterministic


def test_a_timer_the_app_stops_subscribing_to_is_ticked_no_more_nor_a_counterexample() -> None:
    """The timer goes after its second tick; a step drawn to tick it ten times stops there."""
    app: App[int, str] = App(
        init=lambda: 0,
        update=lambda ticks, _msg: ticks + 1,
        view=lambda ticks: group(text("ticks", str(ticks)), label="clock"),
        subscriptions=lambda ticks: [Every(1.0, "tick")] if ticks < 2 else [],
    )
    result = fuzz_app(app, UNIMPORTABLE, MemoryRecorder, examples=50, seed=1)
    assert result.failure is None, result.failure


def test_reads_and_exact_preconditions_name_generations_several_inputs_old(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A read since an old generation is what checks the runtime's journal of deltas, and
    a precondition naming one is what checks its stale_generation refusal."""
    reads: list[tuple[int, int | None]] = []
    preconditions: list[tuple[int, int]] = []
    check_read, take_input = _fuzz.check_read, _fuzz._Example._input

    def reading(runtime: AppRuntime[Any, Any], since: int | None) -> None:
        reads.append((runtime.generation, since))
        check_read(runtime, since)

    def taking(example: Any, event: Event) -> None:
        if isinstance(event, ActionRequested) and event.precondition["kind"] == "exact":
            named = int(event.precondition["generation"])
            preconditions.append((example.core.runtime.generation, named))
        take_input(example, event)

    monkeypatch.setattr(_fuzz, "check_read", reading)
    monkeypatch.setattr(_fuzz._Example, "_input", taking)
    result = fuzz_app(counter.app, "semledger.examples.counter:app", MemoryRecorder, seed=1)
    assert result.failure is None, result.failure
    assert any(since is not None and 1 <= since <= now - 3 for now, since in reads)
    assert any(1 <= named < now for now, named in preconditions)


def test_an_action_the_runtime_leaves_unanswered_is_a_counterexample(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every action is answered with a receipt or a rejection (SPEC); the generation
    checks take no answer for a message's, and pass it."""
    monkeypatch.setattr(AppRuntime, "perform", lambda _runtime, *_request: None)
    result = fuzz_app(
        counter.app, "semledger.examples.counter:app", MemoryRecorder, examples=20, seed=1
    )
    assert result.failure == "InvariantViolation: an action answered None", result


def test_a_tick_is_saved_under_the_number_a_live_session_gives_its_timer() -> None:
    """A live session numbers each timer as it starts, 1 and up, and keeps the number while
    the model subscribes to it: "a" stays timer 2 once "b", listed before it, is dropped."""

    def update(ticks: int, msg: str) -> int:
        if ticks == 1 and msg == "a":
            raise RuntimeError("a second tick")
        return ticks + 1

    app: App[int, str] = App(
        init=lambda: 0,
        update=update,
        view=lambda ticks: group(text("ticks", str(ticks)), label="clock"),
        subscriptions=lambda ticks: [*[Every(2.0, "b")] * (ticks == 0), Every(1.0, "a")],
    )
    recorder = MemoryRecorder()
    result = fuzz_app(app, UNIMPORTABLE, lambda: recorder, examples=50, seed=1)
    assert result.failure == "RuntimeError: a second tick", result
    assert result.session is not None
    codec = SessionCore(app).codec
    ticks = [e for _r, e in recorder.events(result.session) if isinstance(e, TimerFired)]
    said = [(codec.decode(e.message), e.timer_id) for e in ticks]
    assert said[-1] == ("a", 2), said
    assert all(number == {"b": 1, "a": 2}[message] for message, number in said), said


def test_a_timer_subscribed_again_between_ticks_is_saved_under_a_new_number() -> None:
    """Two clicks stop the timer and start it again: a live session starts a new one, 2."""

    def update(toggles: int, msg: str) -> int:
        if msg == "tick" and toggles == 2:
            raise RuntimeError("a tick after two toggles")
        return toggles + (msg == "toggle")

    app: App[int, str] = App(
        init=lambda: 0,
        update=update,
        view=lambda toggles: group(button("Toggle", "toggle"), label=f"toggled {toggles}"),
        subscriptions=lambda toggles: [Every(1.0, "tick")] * (toggles % 2 == 0),
    )
    recorder = MemoryRecorder()
    result = fuzz_app(app, UNIMPORTABLE, lambda: recorder, examples=100, seed=1)
    assert result.failure == "RuntimeError: a tick after two toggles", result
    assert result.session is not None
    ticks = [e for _r, e in recorder.events(result.session) if isinstance(e, TimerFired)]
    assert ticks[-1].timer_id == 2, ticks
