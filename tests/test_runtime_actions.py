"""The checked action transaction: targets, check order, rejections, deferred commits."""

from __future__ import annotations

import math
from typing import Any

import attrs
import pytest

from semledger.runtime import ActionKind as K
from semledger.runtime import (
    App,
    ApplicationError,
    AppRuntime,
    ByNodeId,
    ByPath,
    BySemanticId,
    Exact,
    Full,
    Latest,
    NonFiniteNumberError,
    NotAProposalError,
    PathStep,
    Proposal,
    Receipt,
    Reject,
    Rejection,
    Role,
    Scroll,
    ScrollBy,
    ScrollDirection,
    SelectText,
    SemanticId,
    SemanticsAction,
    SetSelection,
    SimpleAction,
    View,
    button,
    group,
    node,
    scroll_view,
    text,
    text_field,
)
from semledger.runtime import ErrorCode as E

ACTIVATE = SimpleAction(K.ACTIVATE)
NOW = Latest()


@attrs.frozen
class Model:
    log: tuple[Any, ...] = ()
    disabled: bool = False
    dup: bool = False


def sid(text_: str) -> BySemanticId:
    return BySemanticId(SemanticId(text_))


class Harness:
    """A small app whose update records every message it is given."""

    def __init__(self) -> None:
        self.delivered: list[Any] = []
        self.inside: Any = None
        self.rt: AppRuntime[Model, Any] = AppRuntime(
            App(init=Model, update=self.update, view=self.view)
        )

    def update(self, model: Model, msg: Any) -> Model:
        self.delivered.append(msg)
        if msg == "reenter":
            self.inside = self.rt.perform(sid("plain"), ACTIVATE, NOW)
        if msg == "disable":
            return attrs.evolve(model, disabled=True)
        if msg == "dup":
            return attrs.evolve(model, dup=True)
        return attrs.evolve(model, log=(*model.log, msg))

    def reject(self, _action: SemanticsAction) -> Reject:
        return Reject("no")

    def reenter(self, _action: SemanticsAction) -> Proposal[Any]:
        self.inside = self.rt.perform(sid("plain"), ACTIVATE, NOW)
        return Proposal(("from-handler",))

    def reenter_stale(self, _action: SemanticsAction) -> Proposal[Any]:
        self.inside = self.rt.perform(sid("nowhere"), SimpleAction(K.EXPAND), Exact(999))
        return Proposal()

    def view(self, model: Model) -> View[Any]:
        return group(
            button("Plain", "plain", semantic_id="plain"),
            button("Off", "off", semantic_id="off", disabled=True),
            button("Toggle", "disable", semantic_id="toggle", disabled=model.disabled),
            text("Inert", semantic_id="inert"),
            button("Refuse", None, semantic_id="refuse", handlers={K.ACTIVATE: self.reject}),
            button("Handler", None, semantic_id="handler", handlers={K.ACTIVATE: self.reenter}),
            button("Update", "reenter", semantic_id="update"),
            button(
                "Two",
                None,
                semantic_id="two",
                handlers={K.ACTIVATE: lambda _a: Proposal(("A", "B"))},
            ),
            text("Twin", semantic_id="twin"),
            *([text("Twin 2", semantic_id="twin")] if model.dup else []),
            button("Dup", "dup", semantic_id="dup"),
            button("Stale", None, semantic_id="stale", handlers={K.ACTIVATE: self.reenter_stale}),
            label="app",
        )

    def state(self) -> tuple[Any, ...]:
        f = self.rt.read()
        return (self.rt.generation, self.rt.snapshot.focused, self.rt.model, len(self.delivered), f)


def assert_rejected(
    result: Receipt | Rejection, code: E, details: dict[str, Any] | None = None
) -> None:
    assert isinstance(result, Rejection), result
    assert result.code is code
    if details is not None:
        assert result.details == details


@pytest.fixture
def h() -> Harness:
    harness = Harness()
    harness.rt.perform(sid("plain"), SimpleAction(K.FOCUS), NOW)
    return harness


def test_an_accepted_action_delivers_its_message_and_commits(h: Harness) -> None:
    before = h.rt.generation
    result = h.rt.perform(sid("plain"), ACTIVATE, Exact(before))
    assert result == Receipt(before, before, False)
    assert h.delivered == ["plain"]
    assert h.rt.model.log == ("plain",)


def test_messages_from_one_proposal_are_delivered_in_order(h: Harness) -> None:
    h.rt.perform(sid("two"), ACTIVATE, NOW)
    assert h.delivered == ["A", "B"]


def test_a_stale_exact_precondition_changes_nothing(h: Harness) -> None:
    before = h.state()
    current = h.rt.generation
    result = h.rt.perform(sid("plain"), ACTIVATE, Exact(current - 1))
    assert_rejected(
        result, E.STALE_GENERATION, {"expected": str(current - 1), "current": str(current)}
    )
    assert h.state() == before


def test_a_future_exact_precondition_is_stale(h: Harness) -> None:
    current = h.rt.generation
    result = h.rt.perform(sid("plain"), ACTIVATE, Exact(2**64 - 1))
    assert_rejected(
        result, E.STALE_GENERATION, {"expected": str(2**64 - 1), "current": str(current)}
    )


@pytest.mark.parametrize(
    ("target", "action", "code"),
    [
        (sid("nowhere"), ACTIVATE, E.TARGET_NOT_FOUND),
        (ByNodeId(10_000), ACTIVATE, E.TARGET_NOT_FOUND),
        (sid("off"), ACTIVATE, E.TARGET_DISABLED),
        (sid("inert"), ACTIVATE, E.ACTION_UNAVAILABLE),
        (sid("plain"), SimpleAction(K.EXPAND), E.ACTION_UNAVAILABLE),
        (sid("refuse"), ACTIVATE, E.HANDLER_REJECTED),
    ],
)
def test_every_rejection_changes_nothing(
    h: Harness, target: Any, action: SemanticsAction, code: E
) -> None:
    before = h.state()
    result = h.rt.perform(target, action, NOW)
    assert_rejected(result, code)
    assert h.state() == before


def test_rejection_details_echo_the_target_and_action(h: Harness) -> None:
    result = h.rt.perform(sid("inert"), ACTIVATE, NOW)
    assert_rejected(
        result,
        E.ACTION_UNAVAILABLE,
        {"target": {"kind": "semantic_id", "id": "inert"}, "action": "activate"},
    )
    result = h.rt.perform(sid("refuse"), ACTIVATE, NOW)
    assert_rejected(
        result,
        E.HANDLER_REJECTED,
        {"target": {"kind": "semantic_id", "id": "refuse"}, "action": "activate"},
    )
    result = h.rt.perform(sid("off"), ACTIVATE, NOW)
    assert_rejected(result, E.TARGET_DISABLED, {"target": {"kind": "semantic_id", "id": "off"}})


def test_after_close_every_action_is_host_closed(h: Harness) -> None:
    generation, model = h.rt.generation, h.rt.model
    h.rt.close()
    result = h.rt.perform(sid("plain"), ACTIVATE, Exact(0))
    assert_rejected(result, E.HOST_CLOSED)
    assert h.rt.deliver("late") == generation
    assert (h.rt.generation, h.rt.model, h.delivered) == (generation, model, [])


def test_a_handler_calling_perform_is_reentrant_and_that_inner_call_changes_nothing(
    h: Harness,
) -> None:
    before = h.state()
    result = h.rt.perform(sid("handler"), ACTIVATE, NOW)
    assert_rejected(h.inside, E.REENTRANT_DISPATCH)
    assert isinstance(result, Receipt)
    assert h.delivered == ["from-handler"]
    assert before[0] == h.rt.generation


def test_update_calling_perform_is_reentrant(h: Harness) -> None:
    h.rt.perform(sid("update"), ACTIVATE, NOW)
    assert_rejected(h.inside, E.REENTRANT_DISPATCH)
    assert h.delivered == ["reenter"]


def test_duplicate_semantic_id_is_ambiguous_and_nothing_is_dispatched(h: Harness) -> None:
    h.rt.perform(sid("dup"), ACTIVATE, NOW)
    before = h.state()
    result = h.rt.perform(sid("twin"), ACTIVATE, NOW)
    assert_rejected(result, E.TARGET_AMBIGUOUS, {"semantic_id": "twin"})
    assert h.state() == before
    f = h.rt.read()
    assert isinstance(f, Full)
    assert [i.semantic_id for i in f.issues] == ["twin"]


# ---- check order: the first failure wins ---------------------------------------------------


def test_closed_wins_over_everything(h: Harness) -> None:
    h.rt.close()
    assert_rejected(h.rt.perform(sid("nowhere"), ACTIVATE, Exact(999)), E.HOST_CLOSED)


def test_reentrancy_wins_over_generation_and_target(h: Harness) -> None:
    h.rt.perform(sid("stale"), ACTIVATE, NOW)
    assert_rejected(h.inside, E.REENTRANT_DISPATCH)


def test_generation_wins_over_target(h: Harness) -> None:
    assert_rejected(h.rt.perform(sid("nowhere"), ACTIVATE, Exact(999)), E.STALE_GENERATION)


def test_ambiguous_wins_over_disabled_and_capability(h: Harness) -> None:
    h.rt.perform(sid("dup"), ACTIVATE, NOW)
    assert_rejected(h.rt.perform(sid("twin"), SimpleAction(K.EXPAND), NOW), E.TARGET_AMBIGUOUS)


def test_not_found_wins_over_capability(h: Harness) -> None:
    assert_rejected(h.rt.perform(sid("nowhere"), SimpleAction(K.EXPAND), NOW), E.TARGET_NOT_FOUND)


def test_disabled_wins_over_capability(h: Harness) -> None:
    assert_rejected(h.rt.perform(sid("off"), SimpleAction(K.EXPAND), NOW), E.TARGET_DISABLED)


def test_capability_wins_over_the_handler(h: Harness) -> None:
    assert_rejected(h.rt.perform(sid("refuse"), SimpleAction(K.EXPAND), NOW), E.ACTION_UNAVAILABLE)


def test_a_disabled_target_becomes_disabled_after_its_own_action(h: Harness) -> None:
    assert isinstance(h.rt.perform(sid("toggle"), ACTIVATE, NOW), Receipt)
    assert_rejected(h.rt.perform(sid("toggle"), ACTIVATE, NOW), E.TARGET_DISABLED)


# ---- paths ---------------------------------------------------------------------------------


def path(*steps: PathStep) -> ByPath:
    return ByPath(steps)


def test_path_steps_by_label_and_index(h: Harness) -> None:
    result = h.rt.perform(path(PathStep(label="Plain")), ACTIVATE, NOW)
    assert isinstance(result, Receipt)
    h.rt.perform(path(PathStep(role=Role.BUTTON, index=0)), ACTIVATE, NOW)
    h.rt.perform(path(PathStep(role=Role.BUTTON, index=2)), ACTIVATE, NOW)
    assert h.delivered == ["plain", "plain", "disable"]


def test_path_descends_through_children() -> None:
    view = group(
        group(button("x", "first"), label="a"),
        group(button("x", "second"), button("y", "third"), label="b"),
        label="root",
    )
    delivered: list[Any] = []
    rt = AppRuntime(
        App(init=lambda: 0, update=lambda m, msg: delivered.append(msg) or m, view=lambda _: view)
    )
    rt.perform(path(PathStep(label="b"), PathStep(role=Role.BUTTON, index=1)), ACTIVATE, NOW)
    rt.perform(path(PathStep(role=Role.GROUP, index=1), PathStep(label="x")), ACTIVATE, NOW)
    rt.perform(path(PathStep(role=Role.GROUP), PathStep(label="x")), ACTIVATE, NOW)
    assert delivered == ["third", "second", "first"]


@pytest.mark.parametrize(
    ("step", "chosen"),
    [
        (PathStep(value="Bob"), "form.second"),
        (PathStep(semantic_id="form.third"), "form.third"),
        (PathStep(label="Name", value="Ada", index=1), "form.third"),
    ],
)
def test_a_path_step_filters_on_value_and_semantic_id(step: PathStep, chosen: str) -> None:
    view = group(
        text_field("Name", "Ada", key="first", semantic_id="form.first"),
        text_field("Name", "Bob", key="second", semantic_id="form.second"),
        text_field("Name", "Ada", key="third", semantic_id="form.third"),
        label="form",
    )
    rt = AppRuntime(App(init=lambda: 0, update=lambda m, _msg: m, view=lambda _: view))
    found = rt.resolve(path(step))
    assert not isinstance(found, Rejection)
    assert found.semantic_id == chosen


@pytest.mark.parametrize("index", [9, 10, 100])
def test_path_index_out_of_range_is_not_found_and_never_wraps_or_clamps(
    h: Harness, index: int
) -> None:
    before = h.state()
    target = path(PathStep(role=Role.BUTTON, index=index))
    result = h.rt.perform(target, ACTIVATE, NOW)
    echoed = {
        "kind": "path",
        "path": [
            {"index": index, "role": "button", "label": None, "value": None, "semantic_id": None}
        ],
    }
    assert_rejected(result, E.TARGET_NOT_FOUND, {"target": echoed})
    assert h.state() == before


def test_path_with_no_match_is_not_found(h: Harness) -> None:
    assert_rejected(h.rt.perform(path(PathStep(label="Nope")), ACTIVATE, NOW), E.TARGET_NOT_FOUND)
    assert_rejected(
        h.rt.perform(path(PathStep(label="Plain"), PathStep(label="Plain")), ACTIVATE, NOW),
        E.TARGET_NOT_FOUND,
    )


@pytest.mark.parametrize(
    "target",
    [
        path(),
        path(PathStep()),
        path(PathStep(index=-1, role=Role.BUTTON)),
        path(PathStep(role=Role.NONE)),
    ],
)
def test_malformed_paths_are_invalid_arguments_and_change_nothing(
    h: Harness, target: ByPath
) -> None:
    before = h.state()
    assert_rejected(h.rt.perform(target, ACTIVATE, NOW), E.INVALID_ARGUMENTS)
    assert h.state() == before


def test_a_malformed_path_is_invalid_arguments_before_a_stale_generation_or_a_closed_session(
    h: Harness,
) -> None:
    """The Python API answered stale_generation or host_closed first, the wire invalid_arguments
    (SPEC: arguments are decided before dispatch)."""
    stale = Exact(h.rt.generation + 5)
    assert_rejected(h.rt.perform(path(), ACTIVATE, stale), E.INVALID_ARGUMENTS)
    h.rt.close()
    assert_rejected(h.rt.perform(path(PathStep()), ACTIVATE, NOW), E.INVALID_ARGUMENTS)


# ---- deferred commits ----------------------------------------------------------------------


def test_set_selection_is_a_deferred_commit_of_runtime_owned_state() -> None:
    rt = AppRuntime(
        App(
            init=lambda: "hello",
            update=lambda m, msg: msg,
            view=lambda v: group(
                text_field("Name", v, on_set_text=str, semantic_id="f"), label="g"
            ),
        )
    )
    before = rt.generation
    result = rt.perform(sid("f"), SetSelection(1, 3), NOW)
    assert result == Receipt(before, before + 1, False)
    f = rt.read()
    assert isinstance(f, Full)
    field = f.nodes[1]
    assert field.text is not None
    assert (field.text.selection.start, field.text.selection.end, field.text.caret) == (1, 3, 3)  # type: ignore[union-attr]
    assert rt.model == "hello"
    outside = rt.perform(sid("f"), SetSelection(2, 9), NOW)
    assert_rejected(outside, E.HANDLER_REJECTED)
    assert rt.generation == before + 1


def test_set_text_delivers_the_new_value() -> None:
    from semledger.runtime import SetText

    rt = AppRuntime(
        App(
            init=lambda: "",
            update=lambda m, msg: msg,
            view=lambda v: group(
                text_field("Name", v, on_set_text=str, semantic_id="f"), label="g"
            ),
        )
    )
    rt.perform(sid("f"), SetText("abc"), NOW)
    assert rt.model == "abc"
    f = rt.read()
    assert isinstance(f, Full)
    assert f.nodes[1].value == "abc"


def test_scroll_is_a_deferred_commit_that_moves_children() -> None:
    items = [text(f"item {i}", key=i) for i in range(20)]
    view = group(scroll_view(*items, height=100.0, step=48.0, semantic_id="list"), label="g")
    rt = AppRuntime(App(init=lambda: 0, update=lambda m, msg: m, view=lambda _: view))
    first = rt.read()
    assert isinstance(first, Full)
    y0 = first.nodes[2].frame.origin.y
    result = rt.perform(sid("list"), Scroll(ScrollDirection.DOWN), NOW)
    assert isinstance(result, Receipt)
    assert result.after == result.before + 1
    after = rt.read()
    assert isinstance(after, Full)
    assert after.nodes[2].frame.origin.y == y0 - 48.0
    back = rt.perform(sid("list"), Scroll(ScrollDirection.UP), NOW)
    assert isinstance(back, Receipt)
    again = rt.read()
    assert isinstance(again, Full)
    assert again.nodes == first.nodes
    at_top = rt.perform(sid("list"), Scroll(ScrollDirection.UP), NOW)
    assert isinstance(at_top, Receipt)
    assert at_top.before == at_top.after


@pytest.mark.parametrize(
    ("commit", "error", "says"),
    [
        (ScrollBy(math.nan), NonFiniteNumberError, "delta: expected a finite number that fits"),
        (ScrollBy(math.inf), NonFiniteNumberError, "delta: expected a finite number that fits"),
        (ScrollBy(-math.inf), NonFiniteNumberError, "delta: expected a finite number that fits"),
        (ScrollBy(None), TypeError, "delta: expected a number, got NoneType None"),  # type: ignore[arg-type]
        (ScrollBy("48"), TypeError, "delta: expected a number, got str '48'"),  # type: ignore[arg-type]
        (SelectText(0, math.nan), TypeError, "end: expected an int, got float nan"),  # type: ignore[arg-type]
        (SelectText(-1, 2), ValueError, "start: expected at least 0, got -1"),
        (SelectText(5, 2), ValueError, "end: expected at least start (5), got 2"),
        (SelectText(3, 2), ValueError, "end: expected at least start (3), got 2"),
    ],
)
def test_a_commit_holding_what_the_snapshot_cannot_carry_is_the_application_s_error(
    commit: ScrollBy | SelectText, error: type[Exception], says: str
) -> None:
    """ScrollBy(nan) was applied: NaN in the children's frames, and as NaN equals nothing,
    every repeat advanced the generation while nothing changed; no read could be served."""
    rows = [text(f"row {i}") for i in range(20)]

    def scroll(_action: SemanticsAction) -> Proposal[str]:
        return Proposal(("scrolled",), (commit,))

    view = scroll_view(*rows, height=100.0, semantic_id="list", handlers={K.ACTIVATE: scroll})
    rt = AppRuntime(App(init=lambda: 0, update=lambda m, msg: m + 1, view=lambda _: view))
    before = rt.snapshot
    with pytest.raises(ApplicationError) as raised:
        rt.perform(sid("list"), ACTIVATE, NOW)
    assert str(raised.value) == f"the activate handler proposed {commit!r}"
    cause = raised.value.__cause__
    assert type(cause) is error
    kind = type(commit).__name__
    assert str(cause).startswith(f"the activate handler of the scroll_view 'list': {kind}.{says}")
    assert (rt.snapshot, rt.model) == (before, 0)  # nothing of it applied, its message neither


@pytest.mark.parametrize("commit", ["x", ScrollBy], ids=["a-str", "a-commit-class"])
def test_a_commit_that_is_no_commit_is_the_application_s_error_not_ignored(commit: object) -> None:
    """It was ignored, and the action answered with a receipt for what it never did."""
    view = scroll_view(
        text("row"),
        semantic_id="list",
        handlers={K.ACTIVATE: lambda _action: Proposal(("scrolled",), (commit,))},  # type: ignore[arg-type]
    )
    rt = AppRuntime(App(init=lambda: 0, update=lambda m, msg: m + 1, view=lambda _: view))
    with pytest.raises(ApplicationError) as raised:
        rt.perform(sid("list"), ACTIVATE, NOW)
    assert type(raised.value.__cause__) is NotAProposalError
    assert str(raised.value.__cause__) == (
        f"the activate handler of the scroll_view 'list' proposed {commit!r}, which is not a"
        " commit: commits are ScrollBy(delta) or SelectText(start, end) values"
    )
    assert rt.model == 0


def test_handlers_only_propose_and_a_rejecting_handler_mutates_nothing() -> None:
    seen: list[Any] = []

    def handler(action: SemanticsAction) -> Reject:
        seen.append(action)
        return Reject("not now")

    view = group(
        node(Role.BUTTON, label="b", semantic_id="b", handlers={K.ACTIVATE: handler}), label="g"
    )
    rt = AppRuntime(App(init=lambda: 0, update=lambda m, msg: m + 1, view=lambda _: view))
    result = rt.perform(sid("b"), ACTIVATE, NOW)
    assert isinstance(result, Rejection)
    assert result.message == "not now"
    assert seen == [ACTIVATE]
    assert rt.model == 0


def test_a_rejection_whose_reason_is_not_a_str_is_refused_where_it_is_made() -> None:
    """Reject(5) was taken: the agent was told the message 5 (the schema says a string),
    the log held '5', and replay of the unchanged app diverged on it."""
    with pytest.raises(TypeError, match=r"^Reject\.reason: expected a non-blank str, got int 5$"):
        Reject(5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^Reject\.reason: expected a non-blank str, got str ' '"):
        Reject(" ")  # the agent was told an empty message


@pytest.mark.parametrize(
    ("messages", "got"),
    [("inc", "str 'inc'"), (b"inc", "bytes b'inc'"), (5, "int 5")],
)
def test_a_proposal_of_one_message_where_a_tuple_is_meant_is_refused_where_it_is_made(
    messages: object, got: str
) -> None:
    """Proposal("inc") proposed the three messages 'i', 'n' and 'c', answered with a receipt;
    Proposal(Go()) raised "'Go' object is not iterable" from inside the runtime."""
    with pytest.raises(TypeError) as refused:
        Proposal(messages)  # type: ignore[arg-type]
    assert str(refused.value) == (
        f"Proposal.messages: expected a tuple of messages, got {got} (one message: ({messages!r},))"
    )
    with pytest.raises(TypeError, match=r"\(one message: \(ScrollBy\(\),\)\)$"):
        Proposal(ScrollBy)  # type: ignore[arg-type]  # a class: the hint makes one
    with pytest.raises(TypeError, match=r"^Proposal\.commits: expected a tuple of commits, got "):
        Proposal(commits=ScrollBy(1.0))  # type: ignore[arg-type]
