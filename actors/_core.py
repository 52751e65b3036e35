"""A session's step function: one logged input in, the outputs it produced out.

The live session actor and re-execution (recovery, `semledger replay`) run the very same
code, so what replay compares is exactly what the live session logged.
"""

from __future__ import annotations

import traceback
from typing import Any

import attrs
import msgpack  # type: ignore[import-untyped, unused-ignore]

from semledger.eventlog import (
    ActionRequested,
    Committed,
    DiagnosticsDispatched,
    EffectCompleted,
    EffectFailed,
    EffectStarted,
    Event,
    SessionCrashed,
    TimerFired,
    loggable_text,
)
from semledger.runtime import (
    App,
    ApplicationError,
    AppRuntime,
    Effect,
    ErrorCode,
    Every,
    Journal,
    Receipt,
    Rejection,
)
from semledger.runtime._wire import (
    decode_action,
    decode_precondition,
    decode_target,
    encode_read,
)

from ._messages import MessageCodec, MessageCodecError, check_loggable
from ._requests import answered


class UnsubscribedTimerError(Exception):
    """Raised by `SessionCore.step` for a logged timer tick when the model subscribes to no
    timer of its message: the app re-executing the log is not the one that ran it."""


def app_raised(error: BaseException) -> BaseException:
    """What ended a session, as its operator is told: the exception the application raised
    (the cause of an `ApplicationError`), or else `error` itself, whatever it was raised
    from (the runtime refusing what the app returned has no cause; replay raises it again,
    not its cause)."""
    cause = error.__cause__ if isinstance(error, ApplicationError) else None
    return error if cause is None else cause


def crash_event(error: BaseException, about: str = "") -> SessionCrashed:
    """The event that logs `error` ending a session: what `app_raised` names, and the whole
    traceback, headed by `about` when given (a line saying where the error came from that
    the traceback does not show: ``effect 1 (todo.save) returned a message:``)."""
    raised = app_raised(error)
    head = f"{about}\n" if about else ""
    return SessionCrashed(type(raised).__qualname__, loggable_text(head) + traceback_text(error))


def traceback_text(error: BaseException) -> str:
    """`error`'s traceback as the log keeps it (`loggable_text`: it may quote a file name
    as ``os.listdir`` decodes it)."""
    return loggable_text("".join(traceback.format_exception(error)))


def str_of(error: BaseException) -> str:
    """``str(error)``, or what it raised: an app's exception may have a ``__str__`` that
    raises, and logging or describing the failure must not lose it."""
    try:
        return str(error)
    except Exception as failure:
        return f"<str() raised {type(failure).__name__}>"


def effect_failure(error: BaseException) -> str:
    """How an effect that raised `error` is logged (``EffectFailed.error``)."""
    return loggable_text(f"{type(error).__qualname__}: {str_of(error)}")


def commit_size(commit: Committed) -> int:
    """What a commit adds to a fold: one step, each node it upserted or removed, and each
    node id its issues name (every delta carries the whole issues list, SPEC 2.5, which a
    fold decodes however few nodes the commit changed). A read checkpoint is due once the
    commits since the last one add up to the tree's size."""
    delta = commit.delta
    named = sum(len(issue.get("nodes") or ()) + ("source" in issue) for issue in delta["issues"])
    return 1 + len(delta["upserted"]) + len(delta["removed"]) + named


def committed_since(journal: Journal, before: int) -> list[Committed]:
    """A ``Committed`` for each generation `journal` committed after `before`, as logged."""
    out = []
    for generation in range(before + 1, journal.current.generation + 1):
        delta = journal.between(generation - 1, generation)
        snapshot = journal.snapshot_at(generation)
        assert delta is not None
        assert snapshot is not None
        out.append(Committed(generation, encode_read(delta), snapshot.hash))
    return out


@attrs.frozen
class StepResult:
    """What one input produced: the outputs to log, and effects to start once they are durable."""

    outputs: tuple[Event, ...]
    outcome: Receipt | Rejection | dict[str, Any] | None
    effects: tuple[tuple[int, Effect[Any]], ...]
    timers: tuple[Every[Any], ...] = ()
    """The timers the model subscribes to after this input."""

    @property
    def reached_the_app(self) -> bool:
        """Whether the input can have reached the application: anything but an action refused
        before its handler was asked (a target not found, ambiguous or disabled, an action not
        offered, a stale generation). Text the log redacted in an action refused so was never
        typed anywhere, and cannot be why re-executing differs later."""
        outcome = self.outcome
        return not isinstance(outcome, Rejection) or outcome.code is ErrorCode.HANDLER_REJECTED


class SessionCore:
    """A runtime plus the bookkeeping that turns inputs into loggable outputs."""

    def __init__(self, app: App[Any, Any], runtime: AppRuntime[Any, Any] | None = None) -> None:
        self.app = app
        self.codec = MessageCodec(app.message_types, app.model_type)
        if runtime is None:
            runtime = AppRuntime(app)
            # Asked as the session starts, live and re-executed alike, as on every input:
            # an app whose subscriptions raise from the start crashes there everywhere.
            runtime.subscriptions()
        self.runtime = runtime
        self.effects: dict[int, Effect[Any]] = {}
        self._next_request = 1
        self.redacted = False
        """Whether the model may hold text the log redacted: set by recovery once it
        re-executes a redacted input, where the model takes the log's bullets instead of
        the password typed; kept in checkpoints."""

    def checkpoint(self) -> dict[str, Any]:
        """Everything recovery needs to resume here; raises `MessageCodecError` if the app
        declares no model type the log can encode, or keys its views with a value msgpack
        cannot pack (a UUID, a frozenset): the runtime's state holds every element's key."""
        runtime = self.runtime.checkpoint()
        check_loggable(runtime["elements"], "the view's keys")
        state = {
            "runtime": runtime,
            "model": self.codec.encode_model(self.runtime.model),
            "next_request": self._next_request,
        }
        if self.redacted:
            state["redacted"] = True
        return state

    @classmethod
    def from_checkpoint(cls, app: App[Any, Any], state: dict[str, Any]) -> SessionCore:
        """The core as it was at a checkpoint (raises `CheckpointMismatchError` if it is not)."""
        codec = MessageCodec(app.message_types, app.model_type)
        runtime = AppRuntime.restore(app, codec.decode_model(state["model"]), state["runtime"])
        core = cls(app, runtime)
        core._next_request = int(state["next_request"])
        core.redacted = state.get("redacted") is True
        return core

    def initial_outputs(self) -> tuple[Event, ...]:
        """The commits of the first build (generation 0 to the current one)."""
        return tuple(self._commits(0)) + tuple(self._started(self._take()))

    def next_request_id(self) -> int:
        request_id = self._next_request
        self._next_request += 1
        return request_id

    def step(self, event: Event, *, decoded: tuple[Any, Any, Any] | None = None) -> StepResult:
        """Apply one input event; raises `ApplicationError` if the application raised.

        A live action passes its ``decoded`` target, action and precondition: the logged
        form may be redacted, and the application must still see what the agent typed.
        """
        runtime = self.runtime
        before = runtime.generation
        outputs: list[Event] = []
        outcome: Receipt | Rejection | dict[str, Any] | None = None
        if isinstance(event, ActionRequested):
            self._next_request = max(self._next_request, event.request_id + 1)
            target, action, precondition = decoded or (
                decode_target(event.target),
                decode_action(event.action),
                decode_precondition(event.precondition),
            )
            outcome = runtime.perform(target, action, precondition)
        elif isinstance(event, EffectCompleted):
            self.effects.pop(event.effect_id, None)
            runtime.complete_effect(event.effect_id, self.codec.decode(event.message))
        elif isinstance(event, EffectFailed):
            self.effects.pop(event.effect_id, None)
            runtime.complete_effect(event.effect_id, None)
        elif isinstance(event, TimerFired):
            message = self.codec.decode(event.message)
            self._check_subscribed(event)
            runtime.deliver(message)
        elif isinstance(event, DiagnosticsDispatched):
            outcome = self._diagnostics(event.event)
        else:
            raise TypeError(f"{type(event).__name__} is not an input")
        outputs.extend(self._commits(before))
        started = self._take()
        outputs.extend(self._started(started))
        if isinstance(event, ActionRequested) and isinstance(outcome, Receipt | Rejection):
            outputs.append(answered(event.request_id, outcome))
        # Asked on every input, live and re-executed alike, so an app whose subscriptions
        # raise crashes at the same step everywhere.
        return StepResult(tuple(outputs), outcome, tuple(started), runtime.subscriptions())

    def _check_subscribed(self, tick: TimerFired) -> None:
        """Raise `UnsubscribedTimerError` unless the model subscribes to a timer of the
        tick's message: a live session only ticks the timers the model subscribes to, so
        a logged tick the re-executed app has no timer for is where it differs."""
        logged = msgpack.packb(tick.message)
        for timer in self.runtime.subscriptions():
            try:
                if msgpack.packb(self.codec.encode(timer.message)) == logged:
                    return
            except MessageCodecError:
                continue
        raise UnsubscribedTimerError(
            f"timer {tick.timer_id} ticked with {tick.message!r:.80}, and the model"
            " subscribes to no timer of that message"
        )

    def _diagnostics(self, event: dict[str, Any]) -> dict[str, Any]:
        if event.get("kind") == "Pointer":
            position = event["position"]
            return self.runtime.dispatch_pointer(
                float(position["x"]), float(position["y"]), str(event["phase"])
            )
        return self.runtime.dispatch_command(str(event["intent"]))

    def _take(self) -> list[tuple[int, Effect[Any]]]:
        started = self.runtime.take_effects()
        self.effects.update(started)
        return started

    @staticmethod
    def _started(started: list[tuple[int, Effect[Any]]]) -> list[Event]:
        return [EffectStarted(effect_id, effect.name) for effect_id, effect in started]

    def _commits(self, before: int) -> list[Committed]:
        return committed_since(self.runtime.journal, before)
