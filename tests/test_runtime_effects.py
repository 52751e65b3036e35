"""Effects: Trio tasks, FIFO order, pending_work, the EffectRunner (SPEC §3)."""

from __future__ import annotations

import functools
import re
from typing import Any

import attrs
import pytest
import trio
import trio.testing

from semledger.runtime import ActionKind as K
from semledger.runtime import (
    App,
    ApplicationError,
    AppRuntime,
    BySemanticId,
    Effect,
    EffectRunner,
    Every,
    Latest,
    Next,
    NotAModelError,
    NotAnEffectError,
    NotAProposalError,
    Proposal,
    Receipt,
    Role,
    SemanticId,
    SimpleAction,
    View,
    button,
    checkbox,
    group,
    node,
    send,
    text,
)

ACTIVATE = SimpleAction(K.ACTIVATE)


@attrs.frozen
class Model:
    log: tuple[str, ...] = ()


class EffectApp:
    def __init__(self) -> None:
        self.gate = trio.Event()
        self.rt: AppRuntime[Model, str] = AppRuntime(
            App(init=Model, update=self.update, view=self.view, message_types=(str,))
        )

    async def slow(self) -> str:
        await self.gate.wait()
        return "effect"

    async def chained(self) -> str:
        await trio.sleep(0)
        return "chain-1"

    async def second(self) -> str:
        await trio.sleep(0)
        return "chain-2"

    async def silent(self) -> None:
        await trio.sleep(0)

    async def failing(self) -> str:
        await trio.sleep(0)
        raise ConnectionError("backend down")

    def update(self, model: Model, msg: str) -> Next[Model, str] | Model:
        new = Model((*model.log, msg))
        if msg == "A":
            return Next(new, (Effect(self.slow, name="slow"),))
        if msg == "chain":
            return Next(new, (Effect(self.chained),))
        if msg == "chain-1":
            return Next(new, (Effect(self.second),))
        if msg == "quiet":
            return Next(new, (Effect(self.silent),))
        if msg == "fail":
            return Next(new, (Effect(self.failing, name="failing"),))
        return new

    def view(self, model: Model) -> View[str]:
        return group(
            button(
                "AB", None, semantic_id="ab", handlers={K.ACTIVATE: lambda _a: Proposal(("A", "B"))}
            ),
            button("Chain", "chain", semantic_id="chain"),
            button("Quiet", "quiet", semantic_id="quiet"),
            text("Log", " ".join(model.log)),
            label="app",
        )


def act(rt: AppRuntime[Any, Any], sid: str) -> Receipt:
    result = rt.perform(BySemanticId(SemanticId(sid)), ACTIVATE, Latest())
    assert isinstance(result, Receipt)
    return result


async def test_messages_a_b_then_the_effect_of_a_in_order() -> None:
    app = EffectApp()
    async with trio.open_nursery() as nursery:
        runner = EffectRunner(app.rt, nursery)
        receipt = act(app.rt, "ab")
        assert receipt.pending_work
        assert app.rt.model.log == ("A", "B")
        assert runner.start_pending() == 1
        assert app.rt.pending_work
        await trio.testing.wait_all_tasks_blocked()
        assert app.rt.model.log == ("A", "B")
        app.gate.set()
        await runner.wait_idle()
    assert app.rt.model.log == ("A", "B", "effect")
    assert not app.rt.pending_work


async def test_pending_work_is_true_while_an_effect_is_outstanding() -> None:
    app = EffectApp()
    async with trio.open_nursery() as nursery:
        runner = EffectRunner(app.rt, nursery)
        act(app.rt, "ab")
        runner.start_pending()
        other = act(app.rt, "chain")
        assert other.pending_work
        app.gate.set()
        await runner.wait_idle()
    final = act(app.rt, "ab")
    assert final.pending_work
    assert app.rt.take_effects()


async def test_wait_idle_waits_for_effects_started_by_effects(
    autojump_clock: trio.abc.Clock,
) -> None:
    app = EffectApp()
    async with trio.open_nursery() as nursery:
        runner = EffectRunner(app.rt, nursery)
        act(app.rt, "chain")
        runner.start_pending()
        with trio.fail_after(60):
            await runner.wait_idle()
        assert app.rt.model.log == ("chain", "chain-1", "chain-2")
        assert not app.rt.pending_work


async def test_an_effect_without_a_message_still_clears_pending_work() -> None:
    app = EffectApp()
    async with trio.open_nursery() as nursery:
        runner = EffectRunner(app.rt, nursery)
        act(app.rt, "quiet")
        generation = app.rt.generation
        runner.start_pending()
        await runner.wait_idle()
    assert not app.rt.pending_work
    assert app.rt.generation == generation
    assert app.rt.model.log == ("quiet",)


async def test_on_result_sees_every_effect_before_its_message_is_delivered() -> None:
    app = EffectApp()
    seen: list[tuple[int, Any, tuple[str, ...]]] = []

    def on_result(effect_id: int, message: Any) -> None:
        seen.append((effect_id, message, app.rt.model.log))
        app.rt.complete_effect(effect_id, message)

    async with trio.open_nursery() as nursery:
        runner = EffectRunner(app.rt, nursery, on_result=on_result)
        act(app.rt, "chain")
        runner.start_pending()
        await runner.wait_idle()
    assert [(m, log) for _, m, log in seen] == [
        ("chain-1", ("chain",)),
        ("chain-2", ("chain", "chain-1")),
    ]
    assert seen[0][0] < seen[1][0]


async def test_an_effect_that_raises_only_ends_its_pending_work_the_nursery_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """As in a session (docs/apps.md): the error came out of the caller's nursery as an
    ExceptionGroup, and cancelled the other effects running there, their work pending
    for good."""
    app = EffectApp()
    async with trio.open_nursery() as nursery:
        runner = EffectRunner(app.rt, nursery)
        act(app.rt, "ab")
        app.rt.deliver("fail")
        assert runner.start_pending() == 2
        await trio.testing.wait_all_tasks_blocked()
        assert app.rt.pending_work
        app.gate.set()
        await runner.wait_idle()
    assert app.rt.model.log == ("A", "B", "fail", "effect")
    assert not app.rt.pending_work
    [(effect_id, error)] = runner.failures.items()
    assert isinstance(error, ConnectionError)
    assert f"effect {effect_id} (failing) failed" in caplog.text


async def test_a_cancelled_effect_is_no_failure_and_its_work_stays_pending() -> None:
    app = EffectApp()
    async with trio.open_nursery() as nursery:
        runner = EffectRunner(app.rt, nursery)
        act(app.rt, "ab")
        assert runner.start_pending() == 1
        await trio.testing.wait_all_tasks_blocked()
        nursery.cancel_scope.cancel()
    assert runner.failures == {}
    assert app.rt.pending_work
    assert app.rt.model.log == ("A", "B")


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ((None, None), "runtime: expected an AppRuntime, got NoneType None"),
        (("app", None), "runtime: expected an AppRuntime, got str 'app'"),
        ((EffectApp().rt, None), "nursery: expected a Trio nursery (async with"),
    ],
)
def test_an_effect_runner_refuses_a_wrong_argument_by_name(
    arguments: tuple[Any, Any], says: str
) -> None:
    with pytest.raises(TypeError, match=re.escape(says)):
        EffectRunner(*arguments)


async def test_an_effect_runner_refuses_an_on_result_it_cannot_call() -> None:
    async with trio.open_nursery() as nursery:
        with pytest.raises(TypeError, match=r"^on_result: expected a function of an effect id"):
            EffectRunner(EffectApp().rt, nursery, on_result=5)  # type: ignore[arg-type]


def test_effects_are_handed_out_once_with_unique_ids() -> None:
    app = EffectApp()
    act(app.rt, "ab")
    act(app.rt, "ab")
    effects = app.rt.take_effects()
    assert [i for i, _ in effects] == [1, 2]
    assert app.rt.take_effects() == []
    app.rt.complete_effect(1, None)
    assert app.rt.pending_work
    app.rt.complete_effect(2, "done")
    assert not app.rt.pending_work
    assert app.rt.model.log[-1] == "done"


def test_an_effect_that_is_not_outstanding_cannot_be_completed() -> None:
    """One never started, or one completed already: its message was delivered as if it
    had run (twice, for an effect completed twice)."""
    app = EffectApp()
    act(app.rt, "ab")
    act(app.rt, "ab")
    [(first, _), (second, _)] = app.rt.take_effects()
    app.rt.complete_effect(first, "done")
    generation, model = app.rt.generation, app.rt.model
    for effect_id in (first, 99):
        said = f"effect {effect_id!r} is not outstanding (outstanding: {second})"
        with pytest.raises(ValueError, match=f"^{re.escape(said)}$"):
            app.rt.complete_effect(effect_id, "again")
    assert (app.rt.generation, app.rt.model) == (generation, model)
    app.rt.complete_effect(second, None)
    assert not app.rt.pending_work


@pytest.mark.parametrize(("effect_id", "shown"), [("1", "str '1'"), (True, "bool True")])
def test_an_effect_id_that_is_no_int_is_a_type_error(effect_id: Any, shown: str) -> None:
    """complete_effect("1", None) said "effect '1' is not outstanding", and True was
    taken for effect 1."""
    app = EffectApp()
    act(app.rt, "ab")
    says = f"effect_id: expected an int (an id take_effects handed out), got {shown}"
    with pytest.raises(TypeError, match=f"^{re.escape(says)}$"):
        app.rt.complete_effect(effect_id, None)
    assert app.rt.pending_work


def test_an_effect_not_yet_taken_is_never_handed_out_after_close() -> None:
    app = EffectApp()
    act(app.rt, "ab")
    app.rt.close()
    assert app.rt.take_effects() == []


def test_an_effect_result_after_close_changes_nothing() -> None:
    app = EffectApp()
    act(app.rt, "ab")
    [(effect_id, _)] = app.rt.take_effects()
    app.rt.close()
    generation, model = app.rt.generation, app.rt.model
    app.rt.complete_effect(effect_id, "late")
    assert (app.rt.generation, app.rt.model) == (generation, model)
    assert app.rt.state_counters()["queue_depth"] == 0  # the late message is not kept


def test_a_message_delivered_from_inside_update_waits_its_turn() -> None:
    holder: list[AppRuntime[Any, Any]] = []

    def update(model: tuple[str, ...], msg: str) -> tuple[str, ...]:
        if msg == "outer":
            holder[0].deliver("inner")
        return (*model, msg)

    rt: AppRuntime[Any, Any] = AppRuntime(
        App(init=tuple, update=update, view=lambda m: group(text("log", " ".join(m)), label="g"))
    )
    holder.append(rt)
    rt.deliver("outer")
    assert rt.model == ("outer", "inner")


def test_an_effect_completed_from_inside_update_waits_its_turn() -> None:
    holder: list[AppRuntime[Any, Any]] = []

    def update(model: tuple[str, ...], msg: str) -> Next[tuple[str, ...], str] | tuple[str, ...]:
        if msg == "start":
            return Next((*model, msg), (Effect(_never),))
        if msg == "outer":
            [effect_id] = holder[0].pending_effects
            holder[0].complete_effect(effect_id, "done")
        return (*model, msg)

    rt: AppRuntime[Any, Any] = AppRuntime(
        App(init=tuple, update=update, view=lambda m: group(text("log", " ".join(m)), label="g"))
    )
    holder.append(rt)
    rt.deliver("start")
    rt.deliver("outer")
    assert rt.model == ("start", "outer", "done")
    assert not rt.pending_work


async def _never() -> None:
    await trio.sleep_forever()


def _log_view(model: Model) -> View[str]:
    return group(text("Log", " ".join(model.log), semantic_id="log"))


@pytest.mark.parametrize(
    ("effects", "says"),
    [
        (("save",), "Next.effects holds a str, not an Effect: 'save'"),
        (Effect(_never), "Next.effects is one Effect, not a tuple of them: (effect,)"),
        (3, "Next.effects is 3, not a tuple of Effect values"),
    ],
    ids=["a-string", "one-effect", "not-iterable"],
)
def test_an_update_asking_for_what_is_not_an_effect_is_an_application_error(
    effects: Any, says: str
) -> None:
    """The session could neither start such an effect nor log that it did: the update must
    fail as a whole, keeping the model it was given."""

    def update(model: Model, msg: str) -> Any:
        return Next(Model((*model.log, msg)), effects)

    rt: AppRuntime[Model, str] = AppRuntime(App(init=Model, update=update, view=_log_view))
    with pytest.raises(ApplicationError) as raised:
        rt.deliver("go")
    assert isinstance(raised.value.__cause__, NotAnEffectError)
    assert str(raised.value.__cause__) == says
    assert rt.take_effects() == []
    with pytest.raises(ApplicationError) as at_init:
        AppRuntime(App(init=lambda: Next(Model(), effects), update=update, view=_log_view))
    assert isinstance(at_init.value.__cause__, NotAnEffectError)


def test_a_handler_returning_a_bare_message_is_an_application_error_not_an_accepted_no_op() -> None:
    def view(model: Model) -> View[str]:
        return group(
            text("Log", " ".join(model.log), semantic_id="log"),
            node(
                Role.BUTTON,
                label="Go",
                semantic_id="go",
                handlers={K.ACTIVATE: lambda _action: "go"},
            ),
        )

    rt: AppRuntime[Model, str] = AppRuntime(
        App(init=Model, update=lambda m, msg: Model((*m.log, msg)), view=view)
    )
    with pytest.raises(ApplicationError) as raised:
        rt.perform(BySemanticId(SemanticId("go")), ACTIVATE, Latest())
    assert isinstance(raised.value.__cause__, NotAProposalError)
    assert "handler returned 'go', not a Proposal, a Reject or None" in str(raised.value.__cause__)
    assert rt.generation == 1


async def test_an_effect_whose_run_is_not_async_fails_saying_so() -> None:
    """A newcomer's `Effect(lambda: Done(5))` used to fail as "object Done can't be used in
    'await' expression", which names neither the effect nor the fix."""
    with pytest.raises(TypeError) as raised:
        await Effect(lambda: "done", name="sync").result()  # type: ignore[arg-type, return-value]
    assert str(raised.value) == (
        "effect 'sync': run returned 'done', not an awaitable (Effect.run must be an async"
        " function)"
    )
    assert await Effect(_answer, name="async").result() == "answer"


async def _answer() -> str:
    return "answer"


@attrs.frozen
class Loaded:
    pass


class _Plain:
    """Its messages pass cattrs through unchanged, and msgpack cannot pack them."""

    def __init__(self, value: int) -> None:
        self.value = value


def _another_loaded() -> type:
    @attrs.frozen
    class Loaded:
        pass

    Loaded.__qualname__ = "Loaded"
    return Loaded


@pytest.mark.parametrize(
    ("message_types", "says"),
    [
        (Loaded, "expected a tuple of message classes, got <class"),
        ("Loaded", "expected a tuple of message classes, got 'Loaded'"),
        ((Loaded, "Tick"), "'Tick' is not a class"),
        ((Loaded, _another_loaded()), "share the name 'Loaded', which is how the log names"),
        ((Loaded, _Plain), "test_runtime_effects._Plain is a plain class, whose messages the"),
        # (Accepted: an effect's object() then crashed the session, as the log refused it.)
        ((Loaded, object), "object is a built-in type whose values the log cannot record"),
        ((set,), "set is a built-in type whose values the log cannot record"),
    ],
)
def test_message_types_the_log_could_not_tell_apart_are_refused_when_the_app_is_made(
    message_types: Any, says: str
) -> None:
    with pytest.raises((TypeError, ValueError), match=says):
        App(
            init=lambda: 0,
            update=lambda m, _msg: m,
            view=lambda m: text("n", str(m)),
            message_types=message_types,
        )


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("init", 0, "App.init: expected a function, got 0"),
        ("update", "update", "App.update: expected a function, got 'update'"),
        ("view", None, "App.view: expected a function, got None"),
        ("subscriptions", (), "App.subscriptions: expected a function, got ()"),
        ("name", "", "App.name: expected a non-empty string, got ''"),
        ("name", 3, "App.name: expected a non-empty string, got 3"),
        (
            "model_type",
            "Model",
            "App.model_type: expected the model's class (or a type such as list[int]), got"
            " 'Model'",
        ),
        (
            "model_type",
            _Plain,
            "_Plain is a plain class, whose models the log cannot record, so no recovery"
            " checkpoint would be taken",
        ),
    ],
)
def test_an_app_is_refused_as_it_is_made_for_a_part_of_the_wrong_kind(
    field: str, value: Any, says: str
) -> None:
    """`init=0` used to fail only as a session started, as "'int' object is not callable"."""
    parts: dict[str, Any] = {
        "init": lambda: 0, "update": lambda m, _msg: m, "view": lambda m: text("n", str(m)),
    }  # fmt: skip
    with pytest.raises(TypeError, match=re.escape(says)):
        App(**{**parts, field: value})


@pytest.mark.parametrize("model_type", [int, Model, list[int], Model | None, None])
def test_a_model_type_the_log_can_record_is_taken(model_type: Any) -> None:
    app = App(init=lambda: 0, update=lambda m, _msg: m, view=lambda m: text("n", str(m)),
              model_type=model_type)  # fmt: skip
    assert app.model_type == model_type


def test_an_update_that_returns_no_model_is_named_as_it_returns() -> None:
    """A missing ``return``: without a model_type a model of None is the app's own choice;
    with one, the error would otherwise surface in the view, far from the update."""

    def update(model: Model, _msg: Loaded) -> Model:
        attrs.evolve(model, log=("loaded",))  # type: ignore[return-value]  # no return

    def view(model: Model) -> View[Loaded]:
        return button(f"{len(model.log)} loaded", Loaded(), semantic_id="load")

    runtime = AppRuntime(App(init=Model, update=update, view=view, model_type=Model))
    with pytest.raises(ApplicationError, match="update returned no model") as raised:
        runtime.perform(BySemanticId(SemanticId("load")), ACTIVATE, Latest())
    assert isinstance(raised.value.__cause__, NotAModelError)
    assert str(raised.value.__cause__) == (
        "the app's update returned None, not a Model (its model_type): a missing return?"
    )
    optional = App(init=Model, update=update, view=lambda m: view(m or Model()),
                   model_type=Model | None)  # fmt: skip
    AppRuntime(optional).perform(BySemanticId(SemanticId("load")), ACTIVATE, Latest())


def test_an_update_that_returns_model_and_effects_as_a_tuple_is_refused_naming_next() -> None:
    """The Elm habit: the tuple was taken for the model, the view showed a repr with a memory
    address, and replay and resume took the app for nondeterministic."""

    def update(model: Model, _msg: Loaded) -> Model:
        return attrs.evolve(model, log=("loaded",)), []  # type: ignore[return-value]

    def view(model: Model) -> View[Loaded]:
        return button(f"{len(model.log)} loaded", Loaded(), semantic_id="load")

    runtime = AppRuntime(App(init=Model, update=update, view=view, model_type=Model))
    with pytest.raises(ApplicationError, match="update returned a tuple") as raised:
        runtime.perform(BySemanticId(SemanticId("load")), ACTIVATE, Latest())
    assert isinstance(raised.value.__cause__, NotAModelError)
    assert str(raised.value.__cause__) == (
        "the app's update returned a tuple, not a Model (its model_type): it returns the model,"
        " or Next(model, effects) to start effects, not (model, effects)"
    )
    assert runtime.model == Model()


def test_a_model_and_effects_tuple_is_refused_without_a_model_type_too() -> None:
    """Without a model_type the pair was taken for the model: the effects never started."""

    async def load() -> Loaded:
        return Loaded()

    def update(model: Model, _msg: Loaded) -> Model:
        return model, (Effect(load),)  # type: ignore[return-value]

    def view(model: object) -> View[Loaded]:
        return button("load", Loaded(), semantic_id="load")

    runtime = AppRuntime(App(init=Model, update=update, view=view))
    with pytest.raises(ApplicationError, match=r"^update returned \(model, effects\)$") as raised:
        runtime.perform(BySemanticId(SemanticId("load")), ACTIVATE, Latest())
    assert isinstance(raised.value.__cause__, NotAModelError)
    assert "Next(model, effects) to start effects" in str(raised.value.__cause__)
    assert runtime.model == Model()
    paired = AppRuntime(App(init=lambda: (1, 2), update=lambda m, _msg: m,
                            view=lambda m: text("n", str(m))))  # fmt: skip
    assert paired.model == (1, 2)  # a pair holding no Effect is a model like any


def test_a_model_of_another_type_than_the_model_type_is_refused_naming_both() -> None:
    with pytest.raises(ApplicationError, match="init returned a str") as raised:
        AppRuntime(App(init=lambda: "0", update=lambda m, _msg: m, view=lambda m: text("n", m),
                       model_type=int))  # fmt: skip
    assert isinstance(raised.value.__cause__, NotAModelError)
    assert str(raised.value.__cause__) == (
        "the app's init returned a str '0', not an int (its model_type)"
    )


@pytest.mark.parametrize(
    ("model_type", "model"),
    [(list[int], [1]), (Model | None, None), (Model | None, Model()), (float, 1), (Any, "x"),
     (tuple[int, ...], (1, 2)), (int, True)],
)  # fmt: skip
def test_a_model_of_the_model_type_is_taken(model_type: Any, model: Any) -> None:
    runtime = AppRuntime(App(init=lambda: model, update=lambda m, _msg: m,
                             view=lambda m: text("n", str(m)), model_type=model_type))  # fmt: skip
    assert runtime.model == model


def test_message_types_may_be_any_sequence_of_distinct_classes() -> None:
    app = App(
        init=lambda: 0,
        update=lambda m, _msg: m,
        view=lambda m: text("n", str(m)),
        message_types=[Loaded, Receipt],
    )
    assert list(app.message_types) == [Loaded, Receipt]


def test_a_message_class_given_for_a_message_is_refused_where_the_view_is_built() -> None:
    def view(_model: int) -> View[Loaded]:
        return button("Load", Loaded, semantic_id="load")  # type: ignore[arg-type]

    with pytest.raises(ApplicationError) as raised:
        AppRuntime(App(init=lambda: 0, update=lambda m, _msg: m, view=view))
    assert str(raised.value.__cause__) == (
        "Loaded is a message class, not a message: give one, Loaded()"
    )


@pytest.mark.parametrize(
    ("build", "said"),
    [
        (
            lambda: button("Load", send(Loaded()), semantic_id="load"),
            "button: expected a message, got a handler (send(...))",
        ),
        (
            lambda: checkbox("Load", False, send(Loaded())),
            "checkbox: expected a message, got a handler (send(...))",
        ),
        (lambda: send(send(Loaded())), "send: expected a message, got a handler (send(...))"),
        (
            lambda: button("Load", functools.partial(print)),
            "button: expected a message, got a handler (partial)",
        ),
    ],
)
def test_a_handler_given_for_a_message_is_refused_where_the_view_is_built(
    build: Any, said: str
) -> None:
    """``button("Load", send(Loaded()))`` was accepted: update got the handler as its
    message, and the agent a receipt for a click that did nothing."""

    def view(_model: int) -> View[Loaded]:
        return group(build())

    with pytest.raises(ApplicationError) as raised:
        AppRuntime(App(init=lambda: 0, update=lambda m, _msg: m, view=view))
    assert str(raised.value.__cause__) == (
        f"{said}: pass the message itself ({said.partition(':')[0]} makes the handler that"
        " proposes it)"
    )


def test_a_handler_proposing_a_message_class_is_an_application_error_not_a_lost_click() -> None:
    """``Proposal((Loaded,))`` reached update as the class, which ``case Loaded():`` never
    matches: the agent got a receipt for a click that did nothing."""
    seen: list[object] = []

    def update(model: int, msg: Loaded) -> int:
        seen.append(msg)
        return model + 1

    def view(model: int) -> View[Loaded]:
        propose = {K.ACTIVATE: lambda _action: Proposal((Loaded,))}
        return node(Role.BUTTON, label=str(model), semantic_id="load", handlers=propose)

    rt = AppRuntime(App(init=lambda: 0, update=update, view=view))
    with pytest.raises(ApplicationError, match="proposed a message class") as raised:
        rt.perform(BySemanticId(SemanticId("load")), ACTIVATE, Latest())
    assert isinstance(raised.value.__cause__, NotAProposalError)
    assert str(raised.value.__cause__) == (
        "the activate handler proposed Loaded, a message class, not a message: give one,"
        " Proposal((Loaded(),))"
    )
    assert (seen, rt.model, rt.generation) == ([], 0, 1)


def test_a_timer_of_a_message_class_is_refused_as_a_button_of_one_is() -> None:
    """It was refused only when the tick was logged, as a message of no listed type."""
    with pytest.raises(TypeError, match=re.escape("Every.message: Loaded is a message class")):
        Every(1.0, Loaded)


def test_a_timer_of_a_handler_is_refused_as_a_button_of_one_is() -> None:
    """``Every(1.0, send(Tick()))`` was accepted, and each tick gave update the handler."""
    with pytest.raises(TypeError) as raised:
        Every(1.0, send(Loaded()))
    assert str(raised.value) == (
        "Every.message: expected a message, got a handler (send(...)): pass the message itself"
        " (each tick delivers it to update as it is)"
    )


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"run": None}, "Effect.run: expected an async function of no arguments, got None"),
        ({"run": trio.lowlevel.checkpoint, "name": 3}, "Effect.name: expected a str, got int 3"),
        ({"run": trio.sleep}, "<function sleep at 0x"),
        ({"run": trio.sleep}, "which needs seconds (bind them: lambda: fetch(url)"),
        ({"run": lambda url, *, timeout: None}, "which needs url, timeout (bind them"),
    ],
)
def test_an_effect_that_cannot_run_or_be_named_is_refused_where_it_is_made(
    fields: dict[str, Any], says: str
) -> None:
    """Made with no function, or one that needs arguments, an effect failed only once
    update had asked for it and it ran: logged as its failure, which the fuzzer passed."""
    with pytest.raises(TypeError, match=re.escape(says)):
        Effect(**fields)


@pytest.mark.parametrize(
    "run",
    [
        functools.partial(trio.sleep, 0),
        lambda seconds=0: trio.sleep(seconds),
        lambda *args, **kwargs: trio.sleep(0),
        print,
    ],
)
def test_an_effect_of_a_function_that_needs_no_arguments_is_made(run: Any) -> None:
    assert Effect(run).run is run


def test_subscriptions_name_each_timer_once_in_the_order_the_app_listed_them() -> None:
    app: App[int, str] = App(
        init=lambda: 0,
        update=lambda model, _msg: model,
        view=lambda _model: text("Ticks"),
        subscriptions=lambda _model: [Every(2, "slow"), Every(1, "fast"), Every(2, "slow")],
    )
    assert AppRuntime(app).subscriptions() == (Every(2, "slow"), Every(1, "fast"))


def test_subscriptions_follow_the_model() -> None:
    app: App[int, int] = App(
        init=lambda: 0,
        update=lambda _model, msg: msg,
        view=lambda _model: text("Ticks"),
        subscriptions=lambda model: [Every(1, "tick")] if model else [],
    )
    rt = AppRuntime(app)
    assert rt.subscriptions() == ()
    rt.deliver(1)
    assert rt.subscriptions() == (Every(1, "tick"),)
    rt.deliver(0)
    assert rt.subscriptions() == ()
