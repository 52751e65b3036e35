"""`semledger fuzz`: drive any app with random valid and invalid actions, reads, ticks of
the timers it subscribes to and the completion of the effects it starts, and check the
generation invariants; a counterexample is shrunk by hypothesis and saved in the log as a
session, so `semledger replay` reproduces it."""

from __future__ import annotations

import functools
import math
import secrets
import signal
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from decimal import Decimal
from typing import Any, TypeVar

import attrs
import trio
import trio.testing
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as fixed_seed
from hypothesis import strategies as st
from hypothesis.errors import Flaky, HypothesisException

from semledger.actors import (
    MessageCodecError,
    SessionCore,
    StepResult,
    check_app_ref,
    check_recorder,
    check_same_app,
    crash_event,
    effect_failure,
    str_of,
)
from semledger.actors._str_hash import PARAM as STR_HASH
from semledger.actors._str_hash import str_hashing
from semledger.eventlog import (
    LOGGABLE_INTS,
    ActionRequested,
    EffectCompleted,
    EffectFailed,
    Event,
    NewEvent,
    Recorder,
    SequenceConflict,
    SessionCrashed,
    SessionEnded,
    SessionStarted,
    TimerFired,
)
from semledger.runtime import (
    ActionKind,
    App,
    ApplicationError,
    Effect,
    Every,
    Numeric,
    Role,
    SemanticsNode,
    SemanticsSnapshot,
)
from semledger.runtime._app import check_app
from semledger.runtime._errors import app_failed
from semledger.runtime._ids import has_lone_surrogate

from ._invariants import (
    JOURNAL,
    GenerationChecker,
    InvariantViolation,
    NodeIdChecker,
    allowed_issue,
    check_answer,
    check_issues,
    check_read,
    mounted_node_ids,
)
from ._reads import check_progress

SEEDS = LOGGABLE_INTS
"""The seeds a counterexample's session can record (the integers msgpack encodes)."""

_MAX_REPEATS = 10
"""The most times one step repeats its input. A bug seven clicks of one button deep is out
of reach when each click is a separate one-in-twenty draw; one step that clicks seven
times reaches it."""

_KINDS = tuple(k.value for k in ActionKind)
_ROLES = tuple(r.value for r in Role if r is not Role.NONE)
_DIRECTIONS = ("forward", "backward", "up", "down", "left", "right")
_BOGUS_IDS = ("nope", "x.y")
_STEPS = ("read", *("act",) * 6, "invalid")
"""What a step does: mostly an action the snapshot offers, which is what goes deep into an
app, and (`_steps`) ticks while the app has timers and effect completions while it has
effects outstanding. A read comes first: it takes the fewest draws, so the shrinker turns a
step that does not matter into a read, which it can then delete."""
_LONG_RUN = JOURNAL + 2
"""The repeats of a long run: past the read journal's span (SPEC 2.5), so a read since its
start is expired. Drawn only with a step budget past it (``--steps``), so the default runs'
draws are unchanged."""
_EFFECT_SECONDS = 3600.0
"""How long (on the fuzzer's virtual clock, where sleeps take no time) an effect may run."""
_REPEATABLE = frozenset(
    {
        ActionKind.ACTIVATE,
        ActionKind.SUBMIT,
        ActionKind.INCREMENT,
        ActionKind.DECREMENT,
        ActionKind.SCROLL,
    }
)
"""The kinds whose repeats can add up; repeating a focus or a set_text does nothing new
(but typing and submitting again does)."""
_VALUES = frozenset({ActionKind.SET_TEXT, ActionKind.SET_NUMERIC_VALUE})
_QUARTERS = st.integers(0, 3)
_NAME_TRIES = 5
_LONG_TEXT = 300
_BLANKS = " \t\n\r\u00a0\u2028\u3000"
_ASCII_AND_EMOJI = st.characters(max_codepoint=0x7F) | st.characters(
    min_codepoint=0x1F300, max_codepoint=0x1FAFF
)
_TEXTS = st.one_of(
    st.text(max_size=12),
    st.integers(0, _LONG_TEXT).flatmap(lambda size: st.text(min_size=size, max_size=_LONG_TEXT)),
    st.text(_BLANKS, min_size=1, max_size=4),
    st.one_of(st.integers(), st.floats(allow_nan=False)).map(str),
    st.text(_ASCII_AND_EMOJI, max_size=12),
)
"""What a set_text types, each one time in five: short text; long text, past a field's width
or length limit; blank text (spaces, tabs, line breaks); a number; ASCII mixed with emoji.
Hypothesis's text takes any character but surrogates, but seldom the last three.

A long text is at least a drawn length (from 0), not exactly it: the shrinker lowers that
length to 0, then shortens the text, so a bug any text with an ``@`` shows is reported as
``'@'``. (Drawn 13 to 300 long, it came out as ``'000000000000@'``: the shrinker does not
move a value to another branch whose draws do not line up with it.)"""
_ANY_NUMBER = st.integers(-1000, 1000) | st.floats(allow_nan=False, allow_infinity=False)
"""A number for a node that gives no range."""
_EXACT_INTS = 2**53
"""Past it, a float: the log records no int past 64 bits, and a float has no other."""

_T = TypeVar("_T")


@attrs.frozen
class FuzzResult:
    examples: int
    """The examples run: all those asked for when none failed, else those up to and with
    the first that failed (hypothesis's tries at shrinking it are not counted)."""
    failure: str | None = None
    session: str | None = None
    """The counterexample's session; None when there is none, or nothing to save (an app
    that behaves differently on the same inputs may fail on none of them again)."""
    deterministic: bool = True
    """False when the app did not do the same on the same inputs: one replay of the saved
    session may then do as the log says, and show nothing."""


class FuzzInterrupted(KeyboardInterrupt):
    """Raised when the run is interrupted (Ctrl-C) after a counterexample was found, while
    hypothesis shrinks it: the smallest one so far is saved, and `result` names it."""

    def __init__(self, result: FuzzResult) -> None:
        super().__init__(
            f"interrupted while shrinking a counterexample: the smallest so far is saved as"
            f" session {result.session!r}"
        )
        self.result = result


@attrs.define
class _Trail:
    """What one example did: its inputs and the reads it checked between them, so the final
    (shrunk) one can be saved."""

    inputs: list[Event] = attrs.Factory(list)
    reads: list[tuple[int, int | None]] = attrs.Factory(list)
    """``(inputs before it, since)`` of each read."""
    unrecorded: SessionCrashed | None = None
    """The crash on the last input, a message the log cannot record, as a live session logs
    it: the encoder's error, raised where the message was delivered. Stepping the logged
    input (its message None) would fail on the None instead."""


class _ProgressError(KeyboardInterrupt):
    """The caller's `on_progress` raised `error`: the run stops. A KeyboardInterrupt, the
    one exception hypothesis lets through at once; it takes any other for a failure of the
    example and runs that again, which passes, and the app looks not deterministic."""

    def __init__(self, error: Exception) -> None:
        super().__init__(error)
        self.error = error


class CounterexampleNotSavedError(Exception):
    """Raised by `fuzz_app` when it found a counterexample but could not save it: opening
    the log (``save_to``) or writing to it failed, with that error as the ``__cause__``.
    The message says the failure, its inputs, and the seed that finds it again."""


@attrs.define
class _State:
    """What the examples of one run leave for after it."""

    ran: int = 0
    """The examples run to their end. Hypothesis also starts examples it discards (their
    data ran out) and does not count: counted, the run showed all its examples done while a
    fifth of it was still to run."""
    last: _Trail = attrs.Factory(_Trail)
    """The last example run: after a failure, the shrunk counterexample."""
    failed: tuple[_Trail, Exception] | None = None
    """The last example that failed, and how."""
    found_at: int | None = None
    """The examples run as the first failed, that one included."""
    shrinking: int = 0
    """The examples run since one failed: hypothesis's tries at shrinking it."""
    smallest: tuple[_Trail, Exception] | None = None
    """The example with the fewest inputs (then reads) that failed, the later of equals:
    what hypothesis's shrinking has got to, saved when it is interrupted."""
    stopping: bool = False
    """A Ctrl-C was taken: the run stops, and saves the smallest counterexample if any."""

    def failing(self, trail: _Trail, error: Exception) -> None:
        if self.failed is None:
            self.found_at = self.ran + 1
        self.failed = (trail, error)
        if self.smallest is None or _size(trail) <= _size(self.smallest[0]):
            self.smallest = (trail, error)

    def examples(self, asked: int) -> int:
        """The examples run, as `FuzzResult.examples` counts them."""
        return min(self.ran, asked) if self.found_at is None else self.found_at


def _size(trail: _Trail) -> tuple[int, int]:
    return len(trail.inputs), len(trail.reads)


@attrs.frozen
class _Read:
    since: int | None


@attrs.frozen
class _Tick:
    timer: Every[Any]
    times: int


@attrs.frozen
class _Finish:
    effect_id: int


@attrs.frozen
class _Act:
    target: dict[str, Any]
    action: dict[str, Any]
    latest: bool
    generation: int | None = None
    """What an exact precondition names (maybe stale); None: the generation current when
    the action is performed, each time it is."""
    times: int = 1
    submit: bool = False
    """Submit the node after each action: typing and pressing Enter is one step for a
    person, and two entries of a form are then one or two draws deep, not four."""
    long: bool = False
    """A long run (`_LONG_RUN` repeats): read since its start after it, then expired, and
    since the last generation a delta answers."""


_Plan = _Read | _Tick | _Finish | _Act

_MORE = st.integers(0, 9)
"""Another step unless it draws 0: ten steps on average, and a step the shrinker drops
leaves the rest in place (a count drawn up front would not)."""


def _pick(draw: Any, items: Sequence[_T]) -> _T:
    """One of `items` (not empty) by its index: shrinks toward the first, and builds no new
    strategy per call as ``sampled_from(list)`` does (which dominated the run time)."""
    index: int = draw(st.integers(0, len(items) - 1))
    return items[index]


@st.composite
def _plan(
    draw: Any,
    snapshot: SemanticsSnapshot,
    timers: tuple[Every[Any], ...],
    effects: tuple[int, ...],
    stale: tuple[int, ...],
    budget: int,
    texts: tuple[str, ...],
) -> _Plan | None:
    """The next step, or None to stop. One strategy per step, so a step is one span: the
    shrinker can drop it whole, and hypothesis's mutator can copy it over another (one more
    click)."""
    if not draw(_MORE):
        return None
    step = _pick(draw, _steps(bool(timers), bool(effects), budget >= _LONG_RUN + 2))
    if step == "read":
        current = snapshot.generation
        # The last a delta answers, and the first expired: only in runs that long.
        edges = [since for since in (current - JOURNAL, current - JOURNAL - 1) if since > 0]
        return _Read(_pick(draw, [None, current, 0, *stale, current + 1, *edges]))
    if step == "tick":
        return _Tick(_pick(draw, timers), _times(draw, budget))
    if step == "finish":  # any outstanding one: effects run concurrently, finish in any order
        return _Finish(_pick(draw, effects))
    offered = _offered(draw, snapshot, budget, texts) if step != "invalid" else None
    if offered is not None and step == "long" and ActionKind(offered.action["kind"]) in _REPEATABLE:
        offered = attrs.evolve(offered, times=_LONG_RUN, submit=False, long=True)
    return offered or _invalid(draw, snapshot, stale[-3:], texts)


@functools.cache
def _steps(timers: bool, effects: bool, long: bool = False) -> tuple[str, ...]:
    """The step kinds; a long run only when the example has room for one after it."""
    return (
        *_STEPS,
        *("tick", "tick") * timers,
        *("finish", "finish") * effects,
        *("long",) * long,
    )


def _times(draw: Any, budget: int) -> int:
    if budget < 2 or not draw(st.booleans()):
        return 1
    times: int = draw(st.integers(2, min(budget, _MAX_REPEATS)))
    return times


def _offered(
    draw: Any, snapshot: SemanticsSnapshot, budget: int, texts: tuple[str, ...]
) -> _Act | None:
    """An action an enabled node offers (None when there is none)."""
    enabled = _enabled(snapshot)
    if not enabled:
        return None
    node = _pick(draw, enabled)
    kind = _kind(draw, node.actions)
    if node.semantic_id is not None and draw(st.booleans()):
        target = {"kind": "semantic_id", "id": str(node.semantic_id)}
    else:
        target = {"kind": "node_id", "id": str(node.node_id)}
    action = {"kind": kind.value, **_payload(draw, kind.value, texts, node)}
    submit = kind is ActionKind.SET_TEXT and ActionKind.SUBMIT in node.actions
    submit = submit and budget > 1 and draw(st.booleans())
    times = _times(draw, budget // (1 + submit)) if kind in _REPEATABLE or submit else 1
    return _Act(target, action, draw(st.booleans()), times=times, submit=submit)


def _enabled(snapshot: SemanticsSnapshot) -> list[SemanticsNode]:
    """The enabled nodes that offer an action, those with a semantic id first, each part in
    node id order. A step draws one by its place in this list, so a step that adds or
    removes nodes before another shifts which node a later step's draw names: an app's
    controls mostly have semantic ids and its rows mostly not, and rows first (in tree
    order) made a select before a delete undeletable by the shrinker, as the Undo drawn
    after it was then a row. (A file list's bug, select, delete, confirm, undo, undo, was
    shrunk to 5 to 14 steps; controls first, to 5.)"""
    nodes = [snapshot.nodes[i] for i in sorted(snapshot.nodes)]
    enabled = [n for n in nodes if n.actions and not n.state.disabled]
    return sorted(enabled, key=lambda n: n.semantic_id is None)  # (stable: id order kept)


def _kind(draw: Any, offered: Sequence[ActionKind]) -> ActionKind:
    """Focus one time in four when the node offers more: nearly every node offers it, and
    it seldom leads anywhere new. Of the rest, a value (set_text, set_numeric_value) half
    the time when the node takes one: it is what a field is for, and its submit or
    selection does little without it."""
    others = [kind for kind in offered if kind is not ActionKind.FOCUS]
    if not others or (len(others) < len(offered) and draw(_QUARTERS) == 3):
        return ActionKind.FOCUS
    values = [kind for kind in others if kind in _VALUES]
    if values and len(values) < len(others) and draw(st.booleans()):
        return _pick(draw, values)
    return _pick(draw, others)


def _invalid(
    draw: Any, snapshot: SemanticsSnapshot, stale: tuple[int, ...], texts: tuple[str, ...]
) -> _Act:
    """Mostly an action on a target that resolves to nothing, or to a node that is disabled
    or does not offer it, or at a stale generation."""
    kind = _pick(draw, _KINDS)
    action = {"kind": kind, **_payload(draw, kind, texts)}
    target = _any_target(draw, snapshot)
    generation = _pick(draw, [snapshot.generation, *stale])
    return _Act(target, action, draw(st.booleans()), generation)


def _any_target(draw: Any, snapshot: SemanticsSnapshot) -> dict[str, Any]:
    how = draw(st.integers(0, 3))
    if how == 0:
        return {"kind": "node_id", "id": str(draw(st.integers(1, 10_000)))}
    if how == 1:
        return {"kind": "node_id", "id": str(_pick(draw, sorted(snapshot.nodes)))}
    if how == 2:
        # Sorted: a Map's order follows the str hash, which PYTHONHASHSEED changes.
        known = sorted(str(sid) for sid in snapshot.by_semantic_id)
        return {"kind": "semantic_id", "id": _pick(draw, [*_BOGUS_IDS, *known])}
    return {
        "kind": "path",
        "path": [{"role": _pick(draw, _ROLES), "index": draw(st.integers(0, 3))}],
    }


def _payload(
    draw: Any, kind: str, texts: tuple[str, ...], node: SemanticsNode | None = None
) -> dict[str, Any]:
    """The action's payload; a number for `node` from its own min, max and step."""
    if kind == "set_text":
        return {"value": _text(draw, texts)}
    if kind == "scroll":
        return {"direction": _pick(draw, _DIRECTIONS)}
    if kind == "set_numeric_value":
        return {"value": _number(draw, None if node is None else node.numeric)}
    if kind == "set_selection":
        return {"start": draw(st.integers(0, 20)), "end": draw(st.integers(0, 20))}
    return {}


def _text(draw: Any, texts: tuple[str, ...]) -> str:
    """One of the user's `texts` half the time, when there are any: the values that pass
    an app's validation (an email, an age in range, a confirmation word), which generated
    text all but never does. The shrinker goes toward the first of them."""
    if texts and not draw(st.booleans()):
        return _pick(draw, texts)
    text: str = draw(_TEXTS)
    return text


def _number(draw: Any, numeric: Numeric | None) -> int | float:
    """Mostly a value on the node's step between its min and max (an end one time in six);
    one time in four, one it does not allow: off the step or out of range."""
    grid = None if numeric is None else _grid(numeric.min, numeric.max, numeric.step)
    if grid is None:
        value: int | float = draw(_ANY_NUMBER)
        return value
    how = draw(st.integers(0, 11))
    if how < 7:
        return grid.at(draw(st.integers(0, grid.count)))
    if how < 9:
        return grid.at(grid.count * (how - 7))
    if how < 11 and grid.count:
        return grid.off(draw(st.integers(0, grid.count - 1)))
    return grid.outside(draw(st.integers(1, 1000)), below=draw(st.booleans()))


@attrs.frozen
class _Grid:
    """The values a numeric node allows: `low` and each `step` up to `low + count * step`,
    reckoned in decimal, so that 0.1 * 3 is sent as 0.3, as a person types it."""

    low: Decimal
    step: Decimal
    count: int
    whole: bool
    """Every value on it is an integer: send ints."""

    def at(self, index: int) -> int | float:
        return self._number(self.low + index * self.step)

    def off(self, index: int) -> int | float:
        """Halfway between two values it allows."""
        return self._number(self.low + (index + Decimal("0.5")) * self.step, whole=False)

    def outside(self, steps: int, *, below: bool) -> int | float:
        end = self.low if below else self.low + self.count * self.step
        return self._number(end - steps * self.step if below else end + steps * self.step)

    def _number(self, value: Decimal, *, whole: bool = True) -> int | float:
        if whole and self.whole and abs(value) <= _EXACT_INTS:
            return int(value)
        number = float(value)
        return number if math.isfinite(number) else float(self.low)


@functools.lru_cache(maxsize=256)
def _grid(low: float | None, high: float | None, step: float | None) -> _Grid | None:
    """None when the node gives no range, or one that cannot be walked. Without a step, a
    hundredth of the range is one."""
    if low is None or high is None or not math.isfinite(low) or not math.isfinite(high):
        return None
    if high < low:
        return None
    first, last = Decimal(repr(low)), Decimal(repr(high))
    if step is None or not math.isfinite(step) or step <= 0:
        size = (last - first) / 100 or Decimal(1)
    else:
        size = Decimal(repr(step))
    count = int((last - first) / size)
    whole = first == first.to_integral_value() and size == size.to_integral_value()
    return _Grid(first, size, count, whole)


_RULE = "its update, view, handlers and subscriptions must depend on their arguments alone"


class _NondeterminismError(Exception):
    """Raised when the example's twin, given the same inputs, did not do the same."""


class _EffectFailedError(Exception):
    """Raised when an effect the app started raised: a live session logs an `EffectFailed`
    and the app gets no message for it, so a screen that waits for one waits for good. An
    effect whose outside world may fail catches that and returns a message saying so."""


class _Example:
    """One example: a fresh session of the app driven by hypothesis's draws.

    A twin session takes the same inputs and must commit the same snapshots and answer the
    same: an app that reads a clock or draws random numbers is a counterexample even when
    nothing else fails.
    """

    def __init__(
        self,
        app: App[Any, Any],
        trail: _Trail,
        allowed: frozenset[str],
        texts: tuple[str, ...] = (),
    ) -> None:
        self.allowed = allowed
        self.texts = texts
        self.core = SessionCore(app)
        self.twin = self._again("as it started", lambda: "a start", lambda: SessionCore(app))
        self._compare("as it started", None, None)
        self.trail = trail
        check_issues(self.core.runtime.snapshot, "as it started", allowed)
        self.checker = GenerationChecker(self.core.runtime.snapshot)
        self.node_ids = NodeIdChecker()
        self.node_ids.check(self.core.runtime.snapshot, self._mounted, "as it started")
        self.seen: list[int] = []
        """The generation at the start of each step: stale ones for preconditions and reads."""
        self.timer_ids: dict[Every[Any], int] = {}
        """Each timer the model subscribes to, by the number a live session gives it."""
        self._numbered = 0
        self._number_timers(self.core.runtime.subscriptions())

    def run(self, data: Any, most: int) -> None:
        """Take steps until one draws stop, or `most` inputs and reads are taken."""
        taken = 0
        while taken < most:
            runtime = self.core.runtime
            self.seen.append(runtime.generation)
            stale = tuple(self.seen[-5:])
            effects = tuple(sorted(self.core.effects))
            plan = data.draw(
                _plan(
                    runtime.snapshot,
                    runtime.subscriptions(),
                    effects,
                    stale,
                    most - taken,
                    self.texts,
                ),
                label="step",
            )
            if plan is None:
                return
            taken += self._carry_out(plan)

    def _carry_out(self, plan: _Plan) -> int:
        """Take the step; the number of inputs and reads it took."""
        if isinstance(plan, _Read):
            self.trail.reads.append((len(self.trail.inputs), plan.since))
            check_read(self.core.runtime, plan.since)
            return 1
        if isinstance(plan, _Tick):
            return self._ticks(plan.timer, plan.times)
        if isinstance(plan, _Finish):
            return self._finish(plan.effect_id)
        if not plan.long:
            return self._perform(plan)
        start = self.core.runtime.generation
        taken = self._perform(plan)
        edge = self.core.runtime.generation - JOURNAL
        reads = [start, *[edge] * (edge >= 0)]
        for since in reads:
            self._carry_out(_Read(since))
        return taken + len(reads)

    def _perform(self, act: _Act) -> int:
        actions = [act.action, *[{"kind": "submit"}] * act.submit] * act.times
        for action in actions:
            generation = self.core.runtime.generation if act.generation is None else act.generation
            precondition = (
                {"kind": "latest"}
                if act.latest
                else {"kind": "exact", "generation": str(generation)}
            )
            request = self.core.next_request_id()
            self._input(ActionRequested(request, act.target, action, precondition, False))
        return len(actions)

    @staticmethod
    def _again(when: str, first: Callable[[], str], call: Callable[[], _T]) -> _T:
        """`call` on the twin, which must not raise where the first session did not; `first`
        tells what the first session gave, shown only then (a message's repr may raise)."""
        try:
            return call()
        except Exception as error:
            raise _NondeterminismError(
                f"the app is not deterministic: {when}, the same inputs gave {first()} once and"
                f" {_described(error)} another time ({_RULE})"
            ) from error

    def _compare(self, when: str, one: StepResult | None, other: StepResult | None) -> None:
        ours, theirs = self.core.runtime.snapshot, self.twin.runtime.snapshot
        if (ours.generation, ours.hash) != (theirs.generation, theirs.hash):
            raise _NondeterminismError(
                f"the app is not deterministic: {when}, the same inputs committed generation"
                f" {ours.generation} with snapshot hash {ours.hash[:12]} once and generation"
                f" {theirs.generation} with {theirs.hash[:12]} another time ({_RULE})"
            )
        if one is not None and other is not None and one.outcome != other.outcome:
            raise _NondeterminismError(
                f"the app is not deterministic: {when}, the same input was answered"
                f" {one.outcome!r} once and {other.outcome!r} another time ({_RULE})"
            )
        timers = self.core.runtime.subscriptions()
        theirs_timers = self._again(when, lambda: repr(timers), self.twin.runtime.subscriptions)
        if timers != theirs_timers:
            # Only the first session's timers tick: the twin's were never looked at.
            raise _NondeterminismError(
                f"the app is not deterministic: {when}, the same model subscribed to"
                f" {list(timers)!r} once and {list(theirs_timers)!r} another time ({_RULE})"
            )

    def _ticks(self, timer: Every[Any], times: int) -> int:
        """Tick `timer` `times` times in a row, or until the app no longer subscribes to it;
        the number of ticks."""
        for done in range(times):
            timers = self.core.runtime.subscriptions()
            if timer not in timers:
                return done
            self._number_timers(timers)
            self._deliver(timer.message, functools.partial(TimerFired, self.timer_ids[timer]))
        return times

    def _number_timers(self, timers: Sequence[Every[Any]]) -> None:
        """Number `timers`, those the model now subscribes to, as a live session does: each
        as it starts, 1 and up, in the order listed, kept while the model subscribes to it
        (the index in the list changes as others come and go)."""
        kept = {timer: self.timer_ids[timer] for timer in timers if timer in self.timer_ids}
        for timer in timers:
            if timer not in kept:
                self._numbered += 1
                kept[timer] = self._numbered
        self.timer_ids = kept

    def _finish(self, effect_id: int) -> int:
        """Run the effect as a live session does, but on a virtual clock, and step its
        message; or step its failure, as a live session logs it, which is a counterexample.
        One that runs past `_EFFECT_SECONDS` stays outstanding."""
        effect = self.core.effects[effect_id]
        clock = trio.testing.MockClock(autojump_threshold=0)
        finished, message, error = trio.run(_outcome, effect, clock=clock)
        if error is not None:
            failure = effect_failure(error)
            where = "".join(traceback.format_exception(error))
            self._input(EffectFailed(effect_id, failure, where))
            raise _EffectFailedError(f"effect {effect_id} ({effect.name}) failed: {failure}")
        if finished:
            self._deliver(message, functools.partial(EffectCompleted, effect_id))
        return 1

    def _deliver(self, message: Any, as_input: Callable[[Any], Event]) -> None:
        """Step an app message the session gets from outside (a timer's, an effect's),
        logged as ``as_input(encoded)``; one the log cannot record as a live session logs
        it, ``as_input(None)``, before its error is raised."""
        try:
            encoded = self.core.codec.encode(message)
        except MessageCodecError as error:
            self.trail.inputs.append(as_input(None))
            self.trail.unrecorded = crash_event(error)
            raise
        self._input(as_input(encoded))

    def _input(self, event: Event) -> None:
        before = self.core.runtime.snapshot
        self.trail.inputs.append(event)
        result = self.core.step(event)
        when = f"at input {len(self.trail.inputs)}"
        twin = self._again(when, lambda: repr(result.outcome), lambda: self.twin.step(event))
        self._compare(when, result, twin)
        self._number_timers(result.timers)
        self.checker.check(self.core.runtime.snapshot, result.outcome)
        check_issues(self.core.runtime.snapshot, when, self.allowed)
        self.node_ids.check(self.core.runtime.snapshot, self._mounted, when)
        if isinstance(event, ActionRequested):
            check_answer(before, event, result.outcome, bool(self.core.effects), when)

    def _mounted(self) -> list[int]:
        return mounted_node_ids(self.core.runtime)


async def _outcome(effect: Effect[Any]) -> tuple[bool, Any, BaseException | None]:
    """Whether `effect` finished in time, its message, and what it raised."""
    with trio.move_on_after(_EFFECT_SECONDS):
        try:
            message = await effect.result()
        except BaseException as error:
            if not app_failed(error):
                raise
            return True, None, error
        return True, message, None
    return False, None, None


def fuzz_app(
    app: App[Any, Any],
    app_ref: str,
    save_to: Callable[[], Recorder],
    *,
    examples: int = 100,
    seed: int = 0,
    steps: int = 50,
    allow_issues: Iterable[str] = (),
    texts: Iterable[str] = (),
    on_progress: Callable[[int, int | None], None] | None = None,
) -> FuzzResult:
    """Fuzz `app` with up to `steps` inputs and reads per example; a shrunk counterexample is
    appended as a session to the log `save_to` opens (only then, so a clean run leaves no
    file behind).

    Whatever the app raises is a counterexample, and so is an app that behaves differently
    on the same inputs (its update, view, handlers or subscriptions depend on something
    besides their arguments). The effects the app starts really run (so a step finishes
    one), each in a ``trio.run`` of its own on a virtual clock: call this outside a Trio
    run. One that raises is a counterexample too (the app gets no message for it). A view
    that reports an issue is a counterexample, but for those `allow_issues` names, each
    ``KIND`` or ``KIND:SEMANTIC_ID`` (``duplicate_semantic_id:todo.item``: an id the app
    gives every row on purpose). `texts` are values to type besides the generated
    ones, each set_text one of them half the time: those that pass the app's validation
    (``("a@b.c", "42", "DELETE")``), which random text all but never does.
    `on_progress(done, total)` is called as each
    example starts (`done`: which of the `examples` it is; hypothesis also runs examples it
    discards and does not count, which repeat the number); once one has failed the total is None:
    hypothesis is shrinking it, and `done` counts its tries from 1; what it raises stops the
    run and is raised as it is, once the smallest counterexample found so far, if any, is
    saved (a note on the error names its session).

    Raises `ValueError` for fewer than one example or step, a seed outside `SEEDS`, an
    allowed issue that names none, `texts` given as one str or holding one that is not
    UTF-8 (a lone surrogate, which the log cannot hold), an `app_ref` that is not
    ``module:attribute``, one that names another App than `app`, or one whose module
    imports but holds no App by that name;
    `TypeError` for an `app` that is not an App, an `app_ref` that is not a str, `examples`,
    `steps` or a `seed` that is not an int (a bool is not one), `texts` or `allow_issues`
    that are not strs, an `on_progress` that is not a function,
    or a `save_to` that is not a function (a recorder: ``lambda: recorder``), or returns no
    recorder once there is a counterexample to save (the error describes it);
    `CounterexampleNotSavedError` when that log cannot be opened or written (it describes
    the counterexample); `RuntimeError` inside a Trio run; `FuzzInterrupted`, a
    `KeyboardInterrupt`, when interrupted after a counterexample was found, which it saves
    first (the smallest so far).
    """
    check_app(app)
    check_app_ref(app_ref)
    for name, count in (("examples", examples), ("steps", steps)):
        _check_int(name, count)
        if count < 1:
            raise ValueError(f"{name}: expected at least 1, got {count}")
    # Before `in SEEDS`: a range tests a float or a str for membership by walking it.
    _check_int("seed", seed)
    if seed not in SEEDS:
        raise ValueError(f"seed {seed}: a log records seeds from {SEEDS.start} to {SEEDS.stop - 1}")
    allowed = _allowed(allow_issues)
    typed = _texts(texts)
    check_progress(on_progress)  # else raised by the first example
    if not callable(save_to):  # found only once a counterexample was, which was then lost
        raise TypeError(
            "save_to: expected a function that opens the log, called only to save a"
            f" counterexample (lambda: SqliteRecorder(path)), got {type(save_to).__name__}"
            f" {save_to!r:.80}"
        )
    if trio.lowlevel.in_trio_run():
        raise RuntimeError(
            "fuzz_app runs the app's effects in Trio runs of their own: call it outside a"
            " Trio run (trio.to_thread.run_sync(fuzz_app, ...) from one)"
        )
    check_same_app(app, app_ref, function="fuzz_app", command="semledger fuzz")
    state = _State()

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=False,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
        # One counterexample, shrunk and saved: several distinct bugs would otherwise come
        # out as an ExceptionGroup that nothing below catches.
        report_multiple_bugs=False,
        # Explaining a failure re-runs variations of it for a report nobody reads, and took
        # most of a failing run's time.
        phases=[phase for phase in Phase if phase is not Phase.explain],
    )
    @fixed_seed(seed)
    @given(st.data())
    def run(data: Any) -> None:
        if state.stopping:  # the app swallowed the KeyboardInterrupt: stop all the same
            raise KeyboardInterrupt
        state.last = _Trail()
        if on_progress is not None:
            try:
                _report(on_progress, state, examples)
            except Exception as error:
                raise _ProgressError(error) from None
        try:
            _Example(app, state.last, frozenset(allowed), typed).run(data, steps)
        except HypothesisException:
            raise
        except Exception as error:
            if state.stopping:
                # The Ctrl-C's doing, not the app's: one that lands in Trio's own code as an
                # effect runs is a TrioInternalError, which was saved as a counterexample.
                raise KeyboardInterrupt from error
            state.failing(state.last, error)
            raise
        state.ran += 1

    with _one_interrupt(state):
        return _fuzzed(run, state, examples, _Saver(save_to, app, app_ref, seed, allowed))


def _check_int(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name}: expected an int, got {type(value).__name__} {value!r:.80}")


def _strs(name: str, values: Iterable[str], noun: str, form: str = "") -> tuple[str, ...]:
    """`values`, the user's list of strs (`noun`; each written as `form` says), as a tuple;
    raises naming the argument `name`, or the item of it, that is no such list or str."""
    if isinstance(values, str):
        raise ValueError(f"{name}: expected a list of {noun}, got the text {values!r}")
    try:
        given = tuple(values)
    except TypeError:
        raise TypeError(
            f"{name}: expected a list of strs{form}, got {type(values).__name__} {values!r:.80}"
        ) from None
    for index, text in enumerate(given):
        if not isinstance(text, str):
            raise TypeError(
                f"{name}[{index}]: expected a str{form}, got {type(text).__name__} {text!r:.80}"
            )
    return given


def _allowed(allow_issues: Iterable[str]) -> tuple[str, ...]:
    """The issues the user allows, each checked by `allowed_issue`."""
    given = _strs("allow_issues", allow_issues, "issues", " (KIND or KIND:SEMANTIC_ID)")
    try:
        return tuple(allowed_issue(text) for text in given)
    except ValueError as error:
        raise ValueError(f"allow_issues: {error}") from None


def _texts(texts: Iterable[str]) -> tuple[str, ...]:
    """The user's texts, in order, once each (a repeat would be drawn more often)."""
    given = _strs("texts", texts, "texts")
    for index, text in enumerate(given):
        if has_lone_surrogate(text):  # typed, the app would be blamed, then the log
            raise ValueError(
                f"texts[{index}]: {text!r:.80} is not UTF-8 (it holds a lone surrogate), which"
                " the log cannot hold"
            )
    return tuple(dict.fromkeys(given))


@attrs.frozen
class _Saver:
    """Saves a counterexample as a session of the log `save_to` opens (`_save`)."""

    save_to: Callable[[], Recorder]
    app: App[Any, Any]
    app_ref: str
    seed: int
    allowed: tuple[str, ...]

    def __call__(self, trail: _Trail, error: BaseException, *, deterministic: bool) -> str:
        # Called only now, with a counterexample to save: whatever fails must hold it.
        lost = (
            f"so the counterexample found is not saved. It was {_described(error)}, after"
            f" {_inputs_of(trail)}; fuzzing again with seed={self.seed} and the same examples,"
            " steps, texts and allowed issues finds it again"
        )
        try:
            recorder = self.save_to()
        except Exception as failure:
            raise CounterexampleNotSavedError(
                f"the log could not be opened ({_described(failure)}), {lost}"
            ) from failure
        try:
            check_recorder(recorder, "save_to")
        except TypeError:
            raise TypeError(
                f"save_to: expected a function that returns a recorder (lambda:"
                f" SqliteRecorder(path)), but it returned {type(recorder).__name__}"
                f" {recorder!r:.80}, {lost}"
            ) from None
        try:
            return _save(
                recorder,
                self.app,
                self.app_ref,
                trail,
                error,
                self.seed,
                self.allowed,
                deterministic,
            )
        except Exception as failure:
            raise CounterexampleNotSavedError(
                f"the log could not be written ({_described(failure)}), {lost}"
            ) from failure


def _inputs_of(trail: _Trail) -> str:
    """The inputs of `trail` as they are logged, numbered: a counterexample no log holds."""
    if not trail.inputs:
        return "no inputs"
    return "these inputs: " + "; ".join(
        f"{step}. {event!r}" for step, event in enumerate(trail.inputs, 1)
    )


def _fuzzed(
    run: Callable[[], None], state: _State, examples: int, save: _Saver
) -> FuzzResult:
    failure: Exception | None = None
    flaky = interrupted = False
    progress_failed: Exception | None = None
    try:
        run()
    except _ProgressError as stopped:
        progress_failed = stopped.error
    except Flaky:
        flaky = True
    except HypothesisException:
        raise
    except Exception as error:
        failure = error
    except KeyboardInterrupt:
        if state.smallest is None:
            raise
        interrupted = True
    # Saved outside the handlers: the app re-run for the session would raise with the
    # fuzzer's failure as its context, and the logged traceback would hold hypothesis's.
    if progress_failed is not None:
        if state.smallest is not None:  # it broke while a counterexample was shrunk
            saved = _saved(state.smallest, state.examples(examples), save)
            progress_failed.add_note(
                "on_progress raised while a counterexample was shrunk: the smallest found so"
                f" far is saved as session {saved.session!r}"
            )
        raise progress_failed
    ran = state.examples(examples)
    if interrupted and state.smallest is not None:
        raise FuzzInterrupted(_saved(state.smallest, ran, save))
    if flaky:  # raised as an example ran: it counts, as a failing one does
        found = ran if state.found_at is not None else min(state.ran + 1, examples)
        return _nondeterministic(state.failed, found, save)
    if failure is None:
        return FuzzResult(ran)
    return _saved((state.last, failure), ran, save)


@contextmanager
def _one_interrupt(state: _State) -> Iterator[None]:
    """Absorb each Ctrl-C after the one taken to stop the run: one more, pressed while the
    smallest counterexample is saved, would lose it, or leave the log half made. (An app
    that swallows the KeyboardInterrupt is stopped as the next example starts.)

    Only in the main thread (the only one that may handle signals, and the only one they
    interrupt), and only over a SIGINT handler written in Python (Python's own, or the
    caller's, which is still called for the first Ctrl-C): one that ignores SIGINT, or is
    not Python's, is left alone. Restoring the handler runs the Python handlers of signals
    still pending, so one that arrived while the save ran is absorbed too."""
    previous = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or not callable(previous):
        yield
        return

    def absorbing(signum: int, frame: Any) -> None:
        if state.stopping:
            return
        try:
            previous(signum, frame)
        except KeyboardInterrupt:
            state.stopping = True
            raise

    signal.signal(signal.SIGINT, absorbing)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _saved(failed: tuple[_Trail, Exception], examples: int, save: _Saver) -> FuzzResult:
    trail, error = failed
    deterministic = not isinstance(error, _NondeterminismError)
    name = save(trail, error, deterministic=deterministic)
    return FuzzResult(examples, _described(error), name, deterministic)


def _report(on_progress: Callable[[int, int | None], None], state: _State, examples: int) -> None:
    """Which of `examples` is running, or, once one has failed, hypothesis's tries at
    shrinking it (of no known number)."""
    if state.failed is None:
        on_progress(min(state.ran + 1, examples), examples)  # the one starting
    else:
        state.shrinking += 1
        on_progress(state.shrinking, None)


def _described(error: BaseException) -> str:
    if isinstance(error, _NondeterminismError | _EffectFailedError):
        return str(error)
    cause = (error.__cause__ or error) if isinstance(error, ApplicationError) else error
    return f"{type(cause).__name__}: {str_of(cause)}"


def _nondeterministic(
    failed: tuple[_Trail, Exception] | None, examples: int, save: _Saver
) -> FuzzResult:
    """Hypothesis ran the same inputs twice and the app did not do the same: the failure it
    saw last did not happen again, or the screens differed (and so did the draws)."""
    if failed is None:
        failure = (
            f"the app is not deterministic: the same inputs led to different screens ({_RULE})"
        )
        return FuzzResult(examples, failure, deterministic=False)
    trail, error = failed
    name = save(trail, error, deterministic=False)
    if isinstance(error, _NondeterminismError):  # the twin saw it: its message says so
        return FuzzResult(examples, str(error), name, deterministic=False)
    failure = (
        f"the app is not deterministic: the same inputs gave {_described(error)} once and"
        f" something else another time ({_RULE})"
    )
    return FuzzResult(examples, failure, name, deterministic=False)


def _session_name(seed: int) -> str:
    """Unique even for runs in the same second with the same seed (parallel jobs, one log)."""
    return f"fuzz-{time.strftime('%Y%m%d-%H%M%S')}-{seed}-{secrets.token_hex(3)}"


def _save(
    recorder: Recorder,
    app: App[Any, Any],
    app_ref: str,
    trail: _Trail,
    error: BaseException,
    chosen_seed: int,
    allowed: tuple[str, ...],
    deterministic: bool,
) -> str:
    """Log the counterexample as an ordinary session, under a new name (returned): the same
    events a live one would have, re-made from its inputs.

    Reads are not inputs, so the ones the example checked go into the session's params
    (``params["fuzz"]["reads"]``), where `reexecute` finds them and checks them again at
    the same places; ``params["fuzz"]["issues"]`` says to check that the view reports no
    issues but the ``allowed_issues``, as the fuzzer did. A check that failed (the app
    raised nothing) is ``params["fuzz"]["violated"]``: which, after how many inputs (the
    trail's, as the fuzzer stops at a failure), so that replay reproduces it as it does a
    crash. ``params["fuzz"]["deterministic"]`` is False when the app did not do the same on
    the same inputs: replay then says that it may diverge anywhere.
    """
    fuzzed: dict[str, Any] = {
        "seed": chosen_seed,
        "failure": str_of(error),
        "reads": trail.reads,
        "issues": True,
        "allowed_issues": list(allowed),
    }
    if not deterministic:
        fuzzed["deterministic"] = False
    if isinstance(error, InvariantViolation) and error.check is not None:
        fuzzed["violated"] = {"step": len(trail.inputs), "check": error.check}
    params = {"fuzz": fuzzed, STR_HASH: str_hashing()}
    # The texts are the fuzzer's own, and replay needs them as typed: a masked password
    # would replay as other text, and the log would claim to mask what it holds in clear.
    started = SessionStarted(app_ref, "runtime", params, redact_passwords=False)
    events: list[Event] = [started, *_outputs(app, trail, error)]
    now = time.time()
    tries = 1
    while True:
        name = _session_name(chosen_seed)
        try:
            recorder.append([NewEvent(name, i + 1, e, now) for i, e in enumerate(events)])
        except SequenceConflict:
            if tries == _NAME_TRIES:
                raise
            tries += 1
        else:
            return name


def _outputs(app: App[Any, Any], trail: _Trail, error: BaseException) -> list[Event]:
    """The events after ``SessionStarted``: what the app does with the trail's inputs."""
    try:
        core = SessionCore(app)
    except Exception as crash:  # the application raised as it started
        return [crash_event(crash)]
    events = list(core.initial_outputs())
    for step, event in enumerate(trail.inputs, 1):
        if step == len(trail.inputs) and trail.unrecorded is not None:
            return [*events, event, trail.unrecorded]  # as `SessionActor` logs it
        try:
            result = core.step(event)
        except Exception as crash:
            return [*events, event, crash_event(crash)]
        events += [event, *result.outputs]
    return [*events, SessionEnded(f"fuzz counterexample: {str_of(error)}", by="fuzzer")]


__all__ = ["SEEDS", "CounterexampleNotSavedError", "FuzzInterrupted", "FuzzResult", "fuzz_app"]
