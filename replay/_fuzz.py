"""`semledger fuzz`: drive any app with random valid and invalid actions, reads and (for an
app with timers) ticks of the timers it subscribes to, and check the generation invariants;
a counterexample is shrunk by hypothesis and saved in the log as a session, so `semledger
replay` reproduces it."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import attrs
from hypothesis import HealthCheck, given, settings
from hypothesis import seed as fixed_seed
from hypothesis import strategies as st

from semledger.actors import MessageCodecError, SessionCore, crash_event
from semledger.eventlog import (
    ActionRequested,
    Event,
    NewEvent,
    Recorder,
    SessionEnded,
    SessionStarted,
    TimerFired,
)
from semledger.runtime import (
    ActionKind,
    App,
    ApplicationError,
    Receipt,
    Rejection,
    Role,
    SemanticsSnapshot,
)

from ._invariants import GenerationChecker, InvariantViolation, check_read

_PAYLOAD = {
    "set_text": lambda d: {"value": d.draw(st.text(max_size=12), label="text")},
    "scroll": lambda d: {
        "direction": d.draw(
            st.sampled_from(["forward", "backward", "up", "down", "left", "right"]),
            label="direction",
        )
    },
    "set_numeric_value": lambda d: {"value": d.draw(st.integers(-1000, 1000), label="number")},
    "set_selection": lambda d: {
        "start": d.draw(st.integers(0, 20)),
        "end": d.draw(st.integers(0, 20)),
    },
}


@attrs.frozen
class FuzzResult:
    examples: int
    failure: str | None = None
    session: str | None = None


def _random_action(data: Any, snapshot: SemanticsSnapshot, stale: list[int]) -> dict[str, Any]:
    nodes = sorted(snapshot.nodes)
    valid = data.draw(st.booleans(), label="valid") if nodes else False
    if valid:
        node = snapshot.nodes[data.draw(st.sampled_from(nodes), label="node")]
        offered = [k.value for k in node.actions] or [k.value for k in ActionKind]
        kind = data.draw(st.sampled_from(offered), label="kind")
        if node.semantic_id is not None and data.draw(st.booleans(), label="by id"):
            target = {"kind": "semantic_id", "id": str(node.semantic_id)}
        else:
            target = {"kind": "node_id", "id": str(node.node_id)}
        generation = snapshot.generation
    else:
        kind = data.draw(st.sampled_from([k.value for k in ActionKind]), label="kind")
        target = data.draw(
            st.one_of(
                st.builds(lambda i: {"kind": "node_id", "id": str(i)}, st.integers(1, 10_000)),
                st.builds(
                    lambda s: {"kind": "semantic_id", "id": s},
                    st.sampled_from(["nope", "x.y", *(str(k) for k in snapshot.by_semantic_id)]),
                ),
                st.builds(
                    lambda r, i: {"kind": "path", "path": [{"role": r, "index": i}]},
                    st.sampled_from([r.value for r in Role if r is not Role.NONE]),
                    st.integers(0, 3),
                ),
            ),
            label="target",
        )
        generation = data.draw(
            st.sampled_from([snapshot.generation, *stale[-3:]]), label="generation"
        )
    action = {"kind": kind, **(_PAYLOAD[kind](data) if kind in _PAYLOAD else {})}
    latest = data.draw(st.booleans(), label="latest")
    precondition = (
        {"kind": "latest"} if latest else {"kind": "exact", "generation": str(generation)}
    )
    return {"target": target, "action": action, "precondition": precondition}


class _Run:
    """One example: the inputs it made and the reads it checked between them, so the final
    (shrunk) one can be saved."""

    def __init__(self, app: App[Any, Any]) -> None:
        self.core = SessionCore(app)
        self.inputs: list[Event] = []
        self.reads: list[tuple[int, int | None]] = []
        """``(inputs before it, since)`` of each read."""


def fuzz_app(
    app: App[Any, Any],
    app_ref: str,
    save_to: Callable[[], Recorder],
    *,
    examples: int = 100,
    seed: int = 0,
    steps: int = 25,
    on_progress: Callable[[int, int | None], None] | None = None,
) -> FuzzResult:
    """Fuzz `app`; a shrunk counterexample is appended as a session to the log `save_to`
    opens (only then, so a clean run leaves no file behind)."""
    last: dict[str, _Run] = {}
    ran = [0]

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
    )
    @fixed_seed(seed)
    @given(st.data())
    def run(data: Any) -> None:
        ran[0] += 1
        if on_progress is not None:
            # Past `examples`, hypothesis is shrinking a failure: the total is unknown.
            on_progress(ran[0], examples if ran[0] <= examples else None)
        state = last["run"] = _Run(app)
        core = state.core
        checker = GenerationChecker(core.runtime.snapshot)
        seen: list[int] = []
        for _ in range(data.draw(st.integers(1, steps), label="steps")):
            snapshot = core.runtime.snapshot
            seen.append(snapshot.generation)
            if data.draw(st.integers(0, 3), label="read?") == 0:
                since = data.draw(
                    st.sampled_from(
                        [None, snapshot.generation, 0, *seen[-5:], snapshot.generation + 1]
                    ),
                    label="since",
                )
                state.reads.append((len(state.inputs), since))
                check_read(core.runtime, since)
                continue
            # Ticks only for apps with timers, so other apps' examples stay as they were.
            timers = core.runtime.subscriptions()
            event: Event
            if timers and data.draw(st.booleans(), label="tick?"):
                timer = data.draw(st.sampled_from(timers), label="timer")
                timer_id = timers.index(timer) + 1
                try:
                    encoded = core.codec.encode(timer.message)
                except MessageCodecError:
                    state.inputs.append(TimerFired(timer_id, None))  # as a live session logs it
                    raise
                event = TimerFired(timer_id, encoded)
            else:
                wire = _random_action(data, snapshot, seen)
                event = ActionRequested(
                    core.next_request_id(),
                    wire["target"],
                    wire["action"],
                    wire["precondition"],
                    False,
                )
            state.inputs.append(event)
            result = core.step(event)
            checker.check(core.runtime.snapshot, result.outcome)
            if isinstance(event, ActionRequested):
                assert isinstance(result.outcome, Receipt | Rejection)

    try:
        run()
    except (InvariantViolation, ApplicationError, AssertionError, MessageCodecError) as error:
        name = f"fuzz-{time.strftime('%Y%m%d-%H%M%S')}-{seed}"
        _save(save_to(), name, app, app_ref, last.get("run"), error, seed)
        cause = error.__cause__ if isinstance(error, ApplicationError) else error
        return FuzzResult(examples, f"{type(cause).__name__}: {cause}", name)
    return FuzzResult(examples)


def _save(
    recorder: Recorder,
    name: str,
    app: App[Any, Any],
    app_ref: str,
    run: _Run | None,
    error: BaseException,
    chosen_seed: int,
) -> None:
    """Log the counterexample as an ordinary session: the same events a live one would have
    (`run` is None when the application raised as it started).

    Reads are not inputs, so the ones the example checked go into the session's params
    (``params["fuzz"]["reads"]``), where `reexecute` finds them and checks them again at
    the same places.
    """
    params = {
        "fuzz": {"seed": chosen_seed, "failure": str(error), "reads": run.reads if run else []}
    }
    events: list[Event] = [SessionStarted(app_ref, "runtime", params, True)]
    try:
        core = SessionCore(app)
    except ApplicationError as crash:
        events.append(crash_event(crash))
    else:
        events += core.initial_outputs()
        for event in run.inputs if run else []:
            try:
                result = core.step(event)
            except (ApplicationError, MessageCodecError) as crash:
                events += [event, crash_event(crash)]
                break
            events += [event, *result.outputs]
        else:
            events.append(SessionEnded(f"fuzz counterexample: {error}"))
    now = time.time()
    recorder.append([NewEvent(name, i + 1, e, now) for i, e in enumerate(events)])


__all__ = ["FuzzResult", "fuzz_app"]
