"""A builder refuses, where it is called, an argument that failed only later, deep in the
runtime, with a message that named neither the argument nor what it should have been."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import pytest

from semledger.runtime import (
    ActionKind,
    App,
    ApplicationError,
    AppRuntime,
    ByNodeId,
    BySemanticId,
    Key,
    Latest,
    Receipt,
    Relation,
    Role,
    SimpleAction,
    View,
    button,
    checkbox,
    column,
    group,
    lazy,
    node,
    scroll_view,
    send,
    text,
    text_field,
)

_GIVE = " (give one: lambda: [views], called only when cache_key changes)"


@pytest.mark.parametrize(
    ("build", "said"),
    [
        (None, "build: expected a function that returns the children, got NoneType None"),
        ("abc", "build: expected a function that returns the children, got str 'abc'"),
        ([1], "build: expected a function that returns the children, got list [1]"),
    ],
    ids=["none", "str", "list"],
)
def test_lazy_refuses_a_build_that_is_not_a_function(build: object, said: str) -> None:
    """Before, `lazy` took it, and mounting the view failed with "'NoneType' object is not
    iterable" (a str: "'str' object has no attribute 'key'"), outside the app's code."""
    with pytest.raises(TypeError) as raised:
        lazy("k", build)  # type: ignore[arg-type]
    assert str(raised.value) == said + _GIVE


def test_lazy_refuses_children_given_in_place_of_their_build() -> None:
    """Before, a list of views was mounted without a check of its own (an int among them
    failed as "'int' object has no attribute 'key'")."""
    with pytest.raises(TypeError, match=r"^build: expected a function .* got list \[View"):
        lazy("k", [text("a")])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("build", "said"),
    [
        (
            lambda: node(Role.GROUP, text("a"), declaration="x"),
            "declaration: expected a Declaration, got str 'x'",
        ),
        (
            lambda: group(text("a"), declaration=Key("k")),
            "declaration: expected a Declaration, got Key Key(value='k')",
        ),
        (lambda: node(Role.GROUP, paint="x"), "paint: expected a PaintSpec, got str 'x'"),
        (lambda: text("a", paint=None), "paint: expected a PaintSpec, got NoneType None"),
    ],
    ids=["declaration-str", "declaration-key", "paint-str", "paint-none"],
)
def test_node_refuses_a_declaration_or_paint_of_another_type(
    build: Callable[[], View[Any]], said: str
) -> None:
    """Before, a str declaration was taken and the view's first build served, then the
    next failed as "'str' object has no attribute 'dirty_channels'"; a str paint failed in
    the paint pass as "'str' object has no attribute 'background'": neither said where."""
    with pytest.raises(TypeError) as raised:
        build()
    assert str(raised.value) == said


def test_a_view_built_without_node_has_its_declaration_checked_as_it_is_mounted() -> None:
    bad: View[Any] = View(role=Role.GROUP, declaration="x")  # type: ignore[arg-type]
    with pytest.raises(ApplicationError) as raised:
        AppRuntime(App(init=lambda: 0, update=lambda m, _msg: m, view=lambda _m: column(bad)))
    assert str(raised.value.__cause__) == (
        "the group: declaration: expected a Declaration, got str 'x'"
    )


_HANDLERS_ARE = "handlers: expected a mapping of ActionKind to a function of the action"


@pytest.mark.parametrize(
    ("build", "said"),
    [
        (lambda: node(Role.BUTTON, handlers=[1]), f"{_HANDLERS_ARE}, got list [1]"),
        (lambda: button("b", "m", handlers=[1]), f"{_HANDLERS_ARE}, got list [1]"),
        (
            lambda: checkbox("c", True, handlers=(ActionKind.ACTIVATE, send(1))),
            f"{_HANDLERS_ARE}, got tuple (",
        ),
        (lambda: text_field("f", "", handlers=send(1)), f"{_HANDLERS_ARE}, got function"),
        (lambda: scroll_view(text("a"), handlers="scroll"), f"{_HANDLERS_ARE}, got str 'scroll'"),
    ],
    ids=["node", "button", "checkbox", "text_field", "scroll_view"],
)
def test_a_builder_refuses_handlers_that_are_not_a_mapping(
    build: Callable[[], View[Any]], said: str
) -> None:
    """Before, `node` failed with "'list' object has no attribute 'items'" and the widgets
    with "cannot convert dictionary update sequence element #0 to a sequence"."""
    with pytest.raises(TypeError) as raised:
        build()
    assert str(raised.value).startswith(said)


def test_a_widget_builder_takes_handlers_none_as_none_given() -> None:
    assert button("b", handlers=None).handlers == {}


@pytest.mark.parametrize(
    ("build", "said"),
    [
        (lambda: button("Go", "go").map(5), "map: expected a function of a message, got int 5"),
        (
            lambda: text("a").map("wrap"),
            "map: expected a function of a message, got str 'wrap'",
        ),
        (
            lambda: node(Role.GROUP, mapper=1),
            "mapper: expected a function of a message or None, got int 1",
        ),
    ],
    ids=["map-int", "map-str", "node-mapper"],
)
def test_a_mapper_that_is_not_a_function_is_refused_where_it_is_given(
    build: Callable[[], View[Any]], said: str
) -> None:
    """Before, ``.map(5)`` was taken, and an agent's action on the node failed as "'int'
    object is not callable", out of `perform` as the runtime's own fault."""
    with pytest.raises(TypeError) as raised:
        build()
    assert str(raised.value) == said


def test_a_view_mapped_by_a_message_class_is_served() -> None:
    @attrs.frozen
    class Wrapped:
        inner: object

    rt = AppRuntime(
        App(
            init=list,
            update=lambda m, msg: [*m, msg],
            view=lambda _m: column(button("Go", "go", semantic_id="go").map(Wrapped)),
        )
    )
    rt.perform(ByNodeId(rt.snapshot.find("go")[0]), SimpleAction(ActionKind.ACTIVATE), Latest())
    assert rt.model == [Wrapped("go")]


@pytest.mark.parametrize(
    ("relations", "said"),
    [
        (
            {"described_by": ("d",)},
            "relations: expected Relation keys, got str 'described_by'"
            " (give Relation.DESCRIBED_BY)",
        ),
        ({"nope": ("d",)}, "relations: expected Relation keys, got str 'nope'"),
        (
            [(Relation.CONTROLS, ("d",))],
            "relations: expected a mapping of Relation to semantic ids, got list [(<Relation",
        ),
        (
            {Relation.CONTROLS: None},
            "relations[controls]: expected a sequence of semantic ids, got NoneType None",
        ),
    ],
    ids=["member-str", "other-str", "list", "none-for-ids"],
)
def test_node_refuses_relations_not_keyed_by_a_relation(relations: Any, said: str) -> None:
    """Before, a str kind was resolved as its member (a StrEnum's str compares equal to
    it), until its target went missing: the runtime then failed sorting the issue, with
    "'str' object has no attribute 'value'"."""
    with pytest.raises(TypeError) as raised:
        button("b", "m", relations=relations)
    assert str(raised.value).startswith(said)


def test_a_view_built_without_node_has_its_relations_checked_as_it_is_mounted() -> None:
    bad: View[Any] = View(role=Role.BUTTON, label="b", relations={"controls": ()})  # type: ignore[dict-item]
    with pytest.raises(ApplicationError) as raised:
        AppRuntime(App(init=lambda: 0, update=lambda m, _msg: m, view=lambda _m: column(bad)))
    assert str(raised.value.__cause__) == (
        "the button: relations: expected Relation keys, got str 'controls'"
        " (give Relation.CONTROLS)"
    )


@pytest.mark.parametrize(
    ("handlers", "said"),
    [
        ({"activat": send(1)}, "handlers: expected ActionKind keys, got str 'activat'"),
        ({1: 5}, "handlers: expected ActionKind keys, got int 1"),
    ],
    ids=["other-str", "int"],
)
def test_node_refuses_handlers_not_keyed_by_an_action_kind(handlers: Any, said: str) -> None:
    """Before, a handler under a key no action kind has was dropped without a word: the
    node offered no such action (and was focusable for it); one not a function under such
    a key failed as "1 is not a valid ActionKind"."""
    with pytest.raises(TypeError) as raised:
        button("b", handlers=handlers)
    assert str(raised.value) == said


def test_a_handler_keyed_by_the_str_of_an_action_kind_is_offered_that_action() -> None:
    """ActionKind is a StrEnum, so "activate" keys its member's handler, as it always did."""
    view = column(button("Go", handlers={"activate": send("go")}, semantic_id="go"))
    rt = AppRuntime(App(init=list, update=lambda m, msg: [*m, msg], view=lambda _m: view))
    receipt = rt.perform(BySemanticId("go"), SimpleAction(ActionKind.ACTIVATE), Latest())
    assert isinstance(receipt, Receipt)
    assert rt.model == ["go"]
