"""Targets, actions and preconditions built in Python: checked as they are built, and as
they are asked, so that what the wire could not carry never reaches a session or its log."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import pytest
import trio

from semledger.actors import Close, LogWriter, SessionActor
from semledger.eventlog import ActionRequested, CallRefused, MemoryRecorder
from semledger.examples import counter
from semledger.replay import reexecute
from semledger.runtime import (
    ActionKind,
    AppRuntime,
    ByNodeId,
    ByPath,
    BySemanticId,
    Exact,
    Full,
    InvalidSemanticIdError,
    Latest,
    PathStep,
    Receipt,
    Rejection,
    Role,
    Scroll,
    SemanticId,
    SetNumericValue,
    SetSelection,
    SetText,
    SimpleAction,
    check_precondition,
    resolve_target,
)

COUNTER = "semledger.examples.counter:app"
INCREMENT = BySemanticId(SemanticId("counter.increment"))
ACTIVATE = SimpleAction(ActionKind.ACTIVATE)


@pytest.mark.parametrize(
    ("build", "error", "said"),
    [
        (lambda: Exact("3"), TypeError, "generation: expected an int, got str '3'"),
        (lambda: Exact(True), TypeError, "generation: expected an int, got bool True"),
        (lambda: Exact(-1), ValueError, "generation: expected an int from 0 to 2**64-1, got -1"),
        (lambda: Exact(2**64), ValueError, "generation: expected an int from 0 to 2**64-1"),
        (lambda: ByNodeId(3.0), TypeError, "id: expected an int, got float 3.0"),
        (lambda: ByNodeId(-1), ValueError, "id: expected an int from 0 to 2**64-1, got -1"),
        (lambda: BySemanticId(5), TypeError, "a semantic id is a str, got int 5"),
        (lambda: SemanticId(5), TypeError, "a semantic id is a str, got int 5"),
        (lambda: SetText(5), TypeError, "value: expected str, got int 5"),
        (lambda: SimpleAction("bogus"), TypeError, "kind: expected ActionKind, got str"),
        (lambda: SimpleAction(ActionKind.SET_TEXT), ValueError, "kind: set_text carries a"),
        (lambda: Scroll("up"), TypeError, "direction: expected ScrollDirection, got str"),
        (lambda: SetNumericValue(math.nan), ValueError, "value: expected a finite number"),
        (lambda: SetNumericValue(-math.inf), ValueError, "value: expected a finite number"),
        (lambda: SetNumericValue("1"), TypeError, "value: expected a number, got str '1'"),
        (lambda: SetSelection(-1, 2), ValueError, "start: expected an int from 0 to 2**64-1"),
        (lambda: PathStep(index="0", label="x"), TypeError, "index: expected an int, got str"),
        (lambda: PathStep(label=5), TypeError, "label: expected a str or None, got int 5"),
        (lambda: PathStep(role="button"), TypeError, "role: expected Role, got str"),
        (lambda: ByPath(["x"]), TypeError, "steps[0]: expected a PathStep, got str 'x'"),
        (lambda: ByPath(None), TypeError, "steps: expected a sequence of PathSteps, got NoneType"),
        (lambda: ByPath("ab"), TypeError, "steps: expected a sequence of PathSteps, got str 'ab'"),
        (
            lambda: ByPath(PathStep(label="x")),
            TypeError,
            "steps: expected a sequence of PathSteps, got PathStep PathStep(index=0, role=None",
        ),
    ],
)
def test_a_value_no_wire_message_can_hold_is_refused_as_it_is_built(
    build: Callable[[], object], error: type[Exception], said: str
) -> None:
    with pytest.raises(error) as refused:
        build()
    assert str(refused.value).startswith(said), str(refused.value)


@pytest.mark.parametrize(
    "value", [2**64, -(2**63) - 1, 10**400], ids=["2**64", "-2**63-1", "10**400"]
)
def test_a_numeric_value_of_an_int_the_log_cannot_hold_is_refused_as_it_is_built(
    value: int,
) -> None:
    """2**64 was built, and the session that logged it ended: its log could not be written
    (OverflowError); 10**400 raised OverflowError, not the ValueError promised."""
    with pytest.raises(ValueError, match=r"^value: expected a finite number, and an int from"):
        SetNumericValue(value)


async def test_a_numeric_value_at_either_end_of_the_logged_ints_is_logged_and_answered() -> None:
    answers: list[Receipt | Rejection] = []

    async def body(actor: SessionActor) -> None:
        for value in (2**64 - 1, -(2**63)):
            action = SetNumericValue(value)
            answers.append(await actor.perform_action(INCREMENT, action, Latest()))
        answers.append(await actor.perform_action(INCREMENT, ACTIVATE, Latest()))

    recorder = await _in_session(body)
    *refused, done = answers
    assert [a.code.value for a in refused if isinstance(a, Rejection)] == [
        "action_unavailable"
    ] * 2
    assert isinstance(done, Receipt)
    logged = [e for _r, e in recorder.events("s") if isinstance(e, ActionRequested)]
    assert [e.action.get("value") for e in logged] == [2**64 - 1, -(2**63), None]


def test_what_is_built_from_text_is_converted_and_checked() -> None:
    assert BySemanticId("counter.increment").id == SemanticId("counter.increment")
    assert isinstance(BySemanticId("counter.increment").id, SemanticId)
    assert ByPath([PathStep(label="x")]).steps == (PathStep(label="x"),)
    with pytest.raises(InvalidSemanticIdError):
        BySemanticId("two words")


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ((INCREMENT, ACTIVATE, 1), "precondition: expected Latest or Exact, got int 1"),
        ((INCREMENT, ACTIVATE, None), "precondition: expected Latest or Exact, got NoneType"),
        (("counter.increment", ACTIVATE, Latest()), "target: expected BySemanticId or"),
        ((INCREMENT, "activate", Latest()), "action: expected SimpleAction or SetText or"),
    ],
)
def test_the_runtime_refuses_an_argument_of_another_type_and_changes_nothing(
    arguments: tuple[Any, Any, Any], said: str
) -> None:
    """An int given as the precondition (``rt.generation`` for ``Exact(rt.generation)``)
    was taken for latest: a stale generation was acted on."""
    runtime = AppRuntime(counter.app)
    assert isinstance(runtime.perform(INCREMENT, ACTIVATE, Latest()), Receipt)
    generation = runtime.generation
    with pytest.raises(TypeError, match=f"^{said.replace('(', '[(]')}"):
        runtime.perform(*arguments)
    assert runtime.generation == generation


def test_resolving_or_checking_a_precondition_of_another_type_is_refused_naming_it() -> None:
    """`AppRuntime.resolve("counter.increment")` failed with "'str' object has no attribute
    'steps'", and `check_precondition(1, 2)` took the int for latest and passed."""
    runtime = AppRuntime(counter.app)
    with pytest.raises(TypeError, match=r"^target: expected BySemanticId or ByNodeId or ByPath"):
        runtime.resolve("counter.increment")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^snapshot: expected a SemanticsSnapshot, got Ap"):
        resolve_target(INCREMENT, runtime)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^precondition: expected Latest or Exact, got int 1$"):
        check_precondition(1, runtime.generation)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^generation: expected an int, got str '1'$"):
        check_precondition(Exact(1), "1")  # type: ignore[arg-type]
    assert check_precondition(Exact(1), runtime.generation) is None
    stale = check_precondition(Exact(2), runtime.generation)
    assert stale is not None
    assert stale.code.value == "stale_generation"


@pytest.mark.parametrize(
    ("call", "said"),
    [
        (lambda r: r.snapshot_at("1"), "generation: expected an int, got str '1'"),
        (lambda r: r.snapshot_at(True), "generation: expected an int, got bool True"),
        (lambda r: r.delta("0", 1), "start: expected an int, got str '0'"),
        (lambda r: r.delta(0, None), "end: expected an int, got NoneType None"),
        (lambda r: r.hit_test("a", 1), "x: expected a number (an int or a float), got str 'a'"),
        (lambda r: r.hit_test(1, None), "y: expected a number (an int or a float), got NoneType"),
        (
            lambda r: r.dispatch_pointer("1", 2, "Down"),
            "x: expected a number (an int or a float), got str '1'",
        ),
    ],
)
def test_a_generation_or_point_of_another_type_is_refused_naming_the_argument(
    call: Callable[[AppRuntime], object], said: str
) -> None:
    """snapshot_at("1") and delta("0", 1) raised "unsupported operand type(s) for -", and
    hit_test("a", 1) "'<=' not supported between instances of 'float' and 'str'"."""
    runtime = AppRuntime(counter.app)
    generation = runtime.generation
    with pytest.raises(TypeError, match=f"^{re.escape(said)}"):
        call(runtime)
    assert runtime.generation == generation
    assert runtime.snapshot_at(generation) is runtime.snapshot
    assert runtime.delta(generation, generation) is not None
    assert runtime.hit_test(1, 1.5) is not None


@pytest.mark.parametrize("since", ["1", 1.5, True])
def test_a_read_since_something_other_than_an_int_is_refused(since: object) -> None:
    with pytest.raises(TypeError, match=r"^since: expected an int or None, got "):
        AppRuntime(counter.app).read(since)  # type: ignore[arg-type]


@pytest.mark.parametrize("since", [-1, 2**64, 2**70])
def test_a_read_since_a_generation_out_of_the_u64_range_is_refused_as_exact_refuses_it(
    since: int,
) -> None:
    """-1, 2**64 and 2**70 were answered with a Full read."""
    says = f"since: expected an int from 0 to 2**64-1, got {since}"
    with pytest.raises(ValueError, match=f"^{re.escape(says)}$"):
        AppRuntime(counter.app).read(since)
    with pytest.raises(ValueError, match=f"^{re.escape(says.replace('since', 'generation'))}$"):
        Exact(since)


def test_a_read_since_either_end_of_the_u64_range_is_answered() -> None:
    runtime = AppRuntime(counter.app)
    assert not isinstance(runtime.read(0), Rejection)
    assert isinstance(runtime.read(2**64 - 1), Full)


async def _in_session(body: Callable[[SessionActor], Any]) -> MemoryRecorder:
    recorder = MemoryRecorder()
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            writer: LogWriter = await nursery.start(LogWriter(recorder).run)
            actor = SessionActor("s", counter.app, COUNTER, writer, recorder)
            async with trio.open_nursery() as sessions:
                await sessions.start(actor.run)
                await body(actor)
                await actor.request(Close("test over"))
            writer.close()
    return recorder


async def test_a_session_refuses_a_precondition_of_another_type_before_logging_it() -> None:
    """It was logged as latest and acted on."""

    async def body(actor: SessionActor) -> None:
        with pytest.raises(TypeError, match=r"^precondition: expected Latest or Exact"):
            await actor.perform_action(INCREMENT, ACTIVATE, 1)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match=r"^since: expected an int or None"):
            await actor.read_semantics("0")  # type: ignore[arg-type]

    recorder = await _in_session(body)
    assert not [e for _r, e in recorder.events("s") if isinstance(e, ActionRequested)]


async def test_a_session_refuses_a_read_since_a_generation_out_of_range_and_goes_on() -> None:
    """It passed -1 on to the runtime."""

    async def body(actor: SessionActor) -> None:
        with pytest.raises(ValueError, match=r"^since: expected an int from 0 to 2\*\*64-1"):
            await actor.read_semantics(-1)
        assert isinstance(await actor.read_semantics(None), Full)

    await _in_session(body)


async def test_a_path_the_wire_refuses_is_refused_and_logged_as_that_call_is() -> None:
    """A negative index or a step with no filter, built in Python: logged as an input, it
    could not be decoded again, and re-executing the session failed there."""
    paths = [
        ByPath((PathStep(index=-1, role=Role.BUTTON),)),
        ByPath((PathStep(),)),
        ByPath(()),
    ]
    answers: list[Receipt | Rejection] = []

    async def body(actor: SessionActor) -> None:
        for path in paths:
            answers.append(await actor.perform_action(path, ACTIVATE, Latest()))
        answers.append(await actor.perform_action(INCREMENT, ACTIVATE, Latest()))

    recorder = await _in_session(body)
    *refused, done = answers
    assert [a.code.value for a in refused if isinstance(a, Rejection)] == ["invalid_arguments"] * 3
    assert isinstance(done, Receipt)
    events = [e for _r, e in recorder.events("s")]
    logged = [e for e in events if isinstance(e, CallRefused)]
    assert [e.arguments["target"]["kind"] for e in logged] == ["path"] * 3
    assert logged[0].message.startswith("target.path[0].index")
    assert len([e for e in events if isinstance(e, ActionRequested)]) == 1
    report = reexecute(recorder, "s", counter.app)
    assert report.ok, report.divergence


@pytest.mark.parametrize(
    ("arguments", "error", "said"),
    [
        ({"app": None}, TypeError, "app: expected an App, got NoneType None"),
        ({"width": "x"}, TypeError, "width: expected a number, got str 'x'"),
        ({"width": -5}, ValueError, "width: expected a finite number above 0, got -5"),
        ({"width": 0}, ValueError, "width: expected a finite number above 0, got 0"),
        ({"width": math.nan}, ValueError, "width: expected a finite number above 0, got nan"),
    ],
)
def test_a_runtime_of_no_app_or_no_width_is_refused_saying_which(
    arguments: dict[str, Any], error: type[Exception], said: str
) -> None:
    with pytest.raises(error) as refused:
        AppRuntime(**{"app": counter.app, **arguments})
    assert str(refused.value) == said
