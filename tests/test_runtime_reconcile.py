"""Reconcile and node identity: O(change) deltas, removal, remount, hide and show (SPEC §3)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import pytest

from semledger.runtime import ActionKind as K
from semledger.runtime import (
    App,
    ApplicationError,
    AppRuntime,
    ByNodeId,
    Collection,
    Composition,
    Declaration,
    Delta,
    DuplicateKeyError,
    ErrorCode,
    Full,
    Latest,
    LayoutSpec,
    NonFiniteNumberError,
    NotAViewError,
    Numeric,
    Rejection,
    Role,
    SemanticId,
    SimpleAction,
    State,
    View,
    button,
    column,
    group,
    lazy,
    node,
    scroll_view,
    text,
    text_field,
)


def runtime(view: Callable[[Any], View[Any]], init: Any) -> AppRuntime[Any, Any]:
    def update(model: Any, msg: Any) -> Any:
        return msg

    return AppRuntime(App(init=lambda: init, update=update, view=view))


def full(rt: AppRuntime[Any, Any]) -> Full:
    result = rt.read()
    assert isinstance(result, Full)
    return result


def by_label(f: Full, label: str) -> int:
    [found] = [n.node_id for n in f.nodes if n.label == label]
    return found


def list_view(items: list[str]) -> View[Any]:
    return group(*(text(item, key=item) for item in items), label="list")


def test_one_leaf_change_gives_a_one_node_delta() -> None:
    def view(count: int) -> View[Any]:
        return column(
            *(text(f"row {i}", key=i) for i in range(50)), text("count", str(count), key="c")
        )

    rt = runtime(view, 0)
    start = rt.generation
    rt.deliver(1)
    delta = rt.read(start)
    assert isinstance(delta, Delta)
    assert [n.value for n in delta.upserted] == ["1"]
    assert delta.removed == ()
    assert rt.generation == start + 1


def test_one_leaf_change_under_declared_siblings_costs_o_depth() -> None:
    def view(count: int) -> View[Any]:
        rows = (text(f"row {i}", key=i, declaration=Declaration.keyed(i)) for i in range(200))
        return group(*rows, text("count", str(count), key="c"), label="list")

    rt = runtime(view, 0)
    before = (rt.counters.semantics_nodes, rt.counters.layout_nodes, rt.counters.paint_nodes)
    rt.deliver(1)
    after = (rt.counters.semantics_nodes, rt.counters.layout_nodes, rt.counters.paint_nodes)
    assert [b - a for a, b in zip(before, after, strict=True)] == [2, 2, 2]


def test_undeclared_nodes_are_uncacheable_and_recomputed() -> None:
    def view(count: int) -> View[Any]:
        return group(
            *(text(f"row {i}", key=i) for i in range(20)), text("c", str(count)), label="l"
        )

    rt = runtime(view, 0)
    before = rt.counters.semantics_nodes
    rt.deliver(1)
    assert rt.counters.semantics_nodes - before == 22
    assert rt.generation == 2


def test_removed_node_is_in_removed_and_its_old_id_is_not_found() -> None:
    rt = runtime(list_view, ["a", "b", "c"])
    start = full(rt)
    b = by_label(start, "b")
    rt.deliver(["a", "c"])
    delta = rt.read(start.generation)
    assert isinstance(delta, Delta)
    assert delta.removed == (b,)
    result = rt.perform(ByNodeId(b), SimpleAction(K.FOCUS), Latest())
    assert isinstance(result, Rejection)
    assert result.code is ErrorCode.TARGET_NOT_FOUND
    assert result.details == {"target": {"kind": "node_id", "id": str(b)}}


def test_a_remounted_element_gets_a_new_larger_id() -> None:
    rt = runtime(list_view, ["a", "b"])
    old_b = by_label(full(rt), "b")
    rt.deliver(["a"])
    rt.deliver(["a", "b"])
    new_b = by_label(full(rt), "b")
    assert new_b > old_b
    assert new_b > max(n.node_id for n in full(rt).nodes if n.label == "a")


def test_an_unkeyed_node_is_remounted_when_an_unkeyed_sibling_before_it_goes() -> None:
    """Unkeyed siblings are told apart by position among the unkeyed ones (of any role) and
    role, as docs/apps.md says; a key keeps the node."""

    def view(with_button: bool) -> View[Any]:
        return group(
            *([button("go")] if with_button else []),
            text("plain"),
            text("kept", key="kept"),
            label="g",
        )

    rt = runtime(view, True)
    before = full(rt)
    rt.deliver(False)
    after = full(rt)
    assert by_label(after, "plain") > by_label(before, "plain")
    assert by_label(after, "kept") == by_label(before, "kept")


def test_an_element_moved_to_another_parent_is_remounted() -> None:
    def view(where: str) -> View[Any]:
        moving = text("m", key="m")
        left = group(*([moving] if where == "left" else []), label="L", key="L")
        right = group(*([moving] if where == "right" else []), label="R", key="R")
        return column(left, right)

    rt = runtime(view, "left")
    first = by_label(full(rt), "m")
    rt.deliver("right")
    second = by_label(full(rt), "m")
    assert second > first
    parents = {c: n.label for n in full(rt).nodes for c in n.children}
    assert parents[second] == "R"


def test_hide_then_show_keeps_the_id() -> None:
    def view(hidden: bool) -> View[Any]:
        return group(
            text("keep"),
            group(
                button("inner", "x"),
                label="box",
                composition=Composition.HIDDEN if hidden else Composition.BOUNDARY,
            ),
            label="root",
        )

    rt = runtime(view, False)
    f1 = full(rt)
    ids = {n.label: n.node_id for n in f1.nodes}
    rt.deliver(True)
    f2 = full(rt)
    assert {n.label for n in f2.nodes} == {"root", "keep"}
    rt.deliver(False)
    f3 = full(rt)
    assert {n.label: n.node_id for n in f3.nodes} == ids
    assert f3.nodes == f1.nodes
    assert f3.generation == f1.generation + 2


def test_element_mounted_hidden_appears_when_shown() -> None:
    def view(hidden: bool) -> View[Any]:
        comp = Composition.HIDDEN if hidden else Composition.TRANSPARENT
        return column(text("a"), node(Role.NONE, text("late"), composition=comp))

    rt = runtime(view, True)
    assert [n.label for n in full(rt).nodes if n.label] == ["a"]
    rt.deliver(False)
    assert [n.label for n in full(rt).nodes if n.label] == ["a", "late"]


def test_reordering_keyed_children_keeps_ids_and_changes_only_the_parent() -> None:
    rt = runtime(list_view, ["a", "b", "c"])
    start = full(rt)
    ids = {n.label: n.node_id for n in start.nodes}
    rt.deliver(["c", "a", "b"])
    after = full(rt)
    assert {n.label: n.node_id for n in after.nodes} == ids
    delta = rt.read(start.generation)
    assert isinstance(delta, Delta)
    assert delta.removed == ()
    assert delta.upserted[0].node_id == ids["list"]
    assert delta.upserted[0].children == (ids["c"], ids["a"], ids["b"])
    assert {n.label for n in delta.upserted[1:]} == {"a", "b", "c"}
    assert all(
        n.frame != start.nodes[[m.node_id for m in start.nodes].index(n.node_id)].frame
        for n in delta.upserted[1:]
    )


def test_unkeyed_children_are_matched_by_position_and_role() -> None:
    def view(first_is_button: bool) -> View[Any]:
        head = button("x", "m") if first_is_button else text("x")
        return column(head, text("tail"))

    rt = runtime(view, False)
    before = {(n.role, n.label): n.node_id for n in full(rt).nodes}
    rt.deliver(True)
    after = {(n.role, n.label): n.node_id for n in full(rt).nodes}
    assert after[(Role.TEXT, "tail")] == before[(Role.TEXT, "tail")]
    assert after[(Role.BUTTON, "x")] > max(before.values())


def test_node_ids_are_never_reused_across_many_remounts() -> None:
    rt = runtime(list_view, ["a"])
    seen: set[int] = set()
    for i in range(30):
        rt.deliver([f"x{i}"])
        ids = {n.node_id for n in full(rt).nodes if n.label == f"x{i}"}
        assert not ids & seen
        seen |= ids


@pytest.mark.parametrize("shown", [[], None, "text"], ids=["list", "None", "str"])
def test_a_view_that_returns_no_view_is_an_application_error_naming_what_it_returned(
    shown: Any,
) -> None:
    with pytest.raises(ApplicationError) as raised:
        runtime(lambda _model: shown, 0)
    assert isinstance(raised.value.__cause__, NotAViewError)
    assert f"returned a {type(shown).__name__}, not a semledger View" in str(raised.value.__cause__)


@pytest.mark.parametrize(
    "stray", ["a string", None, [text("in a list")]], ids=["str", "None", "list"]
)
def test_a_child_that_is_no_view_is_an_application_error_naming_it(stray: Any) -> None:
    with pytest.raises(ApplicationError) as raised:
        runtime(lambda _model: column(text("first"), stray), 0)
    assert isinstance(raised.value.__cause__, NotAViewError)
    assert f"child 1 is a {type(stray).__name__}" in str(raised.value.__cause__)


def test_a_list_given_as_one_child_says_how_to_pass_children_in_one_short_line() -> None:
    views = [text(f"item {i}") for i in range(50)]
    with pytest.raises(NotAViewError) as raised:
        column(views)  # type: ignore[arg-type]
    assert str(raised.value) == (
        "child 0 is a list of 50 items, not a semledger View"
        " (pass children one by one: column(*views))"
    )


def test_siblings_that_share_a_key_are_refused_where_they_are_built() -> None:
    """Before, every build remounted them under new node ids, and ids the tree no longer
    held stayed actionable."""
    with pytest.raises(DuplicateKeyError, match=r"^children 0 and 2 share the key 'same': "):
        column(text("a", key="same"), text("b", key="other"), text("c", key="same"))
    with pytest.raises(ApplicationError) as raised:
        runtime(lambda _model: column(lazy(0, lambda: [text("a", key=1), text("b", key=1)])), 0)
    assert isinstance(raised.value.__cause__, DuplicateKeyError)


def _boom() -> list[View[Any]]:
    raise RuntimeError("boom")


@pytest.mark.parametrize(
    ("build", "cause"), [(_boom, RuntimeError), (lambda: [text("a"), 1], NotAViewError)]
)
def test_a_lazy_build_that_raises_or_builds_no_view_is_an_application_error(
    build: Callable[[], list[Any]], cause: type[Exception]
) -> None:
    """The lazy build runs inside reconcile, after the view returned: it is still the app's."""
    with pytest.raises(ApplicationError) as raised:
        runtime(lambda model: column(lazy(model, build)), 0)
    assert type(raised.value.__cause__) is cause


@pytest.mark.parametrize(
    ("build", "says"),
    [
        (lambda: text("a"), "a lazy build returned one View, not a sequence of them: [view]"),
        (lambda: None, "a lazy build returned a NoneType (None), not a sequence of semledger"),
    ],
)
def test_a_lazy_build_that_returns_one_view_or_none_is_refused_as_building_no_view(
    build: Callable[[], Any], says: str
) -> None:
    """It was "a lazy view's build raised", caused by "'View' object is not iterable": the
    build had raised nothing."""
    with pytest.raises(ApplicationError) as raised:
        runtime(lambda model: column(lazy(model, build)), 0)
    assert str(raised.value) == "a lazy view's build returned children no view can have"
    assert isinstance(raised.value.__cause__, NotAViewError)
    assert str(raised.value.__cause__).startswith(says)


def test_a_lazy_build_of_a_generator_that_raises_is_a_build_that_raised() -> None:
    def build() -> Iterator[View[Any]]:
        yield text("a")
        raise RuntimeError("boom")

    with pytest.raises(ApplicationError, match=r"^a lazy view's build raised$") as raised:
        runtime(lambda model: column(lazy(model, build)), 0)
    assert type(raised.value.__cause__) is RuntimeError


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"value": 3}, "value: expected a str or None, got int 3"),
        ({"label": b"x"}, "label: expected a str or None, got bytes b'x'"),
        ({"description": 1.5}, "description: expected a str or None, got float 1.5"),
        ({"url": ["u"]}, "url: expected a str or None, got list ['u']"),
        ({"level": "2"}, "level: expected an int or None, got str '2'"),
        ({"level": True}, "level: expected an int or None, got bool True"),
    ],
)
def test_view_text_that_the_wire_cannot_carry_is_refused_where_it_is_built(
    fields: dict[str, Any], says: str
) -> None:
    """Served, an int value went out as a number and the log could not be read back."""
    with pytest.raises(TypeError, match=re.escape(says)):
        node(Role.TEXT, **fields)
    with pytest.raises(ApplicationError) as raised:
        runtime(lambda _model: column(node(Role.TEXT, **fields)), 0)
    assert str(raised.value.__cause__) == says


@pytest.mark.parametrize(
    ("build", "error", "says"),
    [
        (lambda: node("button"), TypeError, "role: expected a Role, got str 'button' (give R"),
        (lambda: node(Role.TEXT, state=State(busy="yes")), TypeError, "state.busy: expected True"),
        (
            lambda: node(Role.TEXT, state=State(checked=True)),  # type: ignore[arg-type]
            TypeError,
            "state.checked: expected a Checked or None, got bool True",
        ),
        (
            lambda: node(Role.SLIDER, numeric=Numeric(current="5")),  # type: ignore[arg-type]
            TypeError,
            "numeric.current: expected a number or None, got str '5'",
        ),
        (
            lambda: node(Role.SLIDER, numeric=Numeric(max=float("nan"))),
            NonFiniteNumberError,
            "numeric.max: expected a finite number that fits in 64 bits, got nan",
        ),
        (
            lambda: node(Role.SLIDER, numeric=Numeric(current=10**400)),
            ValueError,
            "numeric.current: expected a finite number that fits in 64 bits",
        ),
        (
            lambda: node(Role.SLIDER, numeric=Numeric(current=5, min=10, max=0)),
            ValueError,
            "numeric: expected min at most max, got min 10 and max 0",
        ),
        (lambda: node(Role.HEADING, level=2**70), ValueError, "level: 1180591620717411303424 d"),
        (
            lambda: node(Role.LIST_ITEM, collection=Collection(set_size=2.5)),  # type: ignore[arg-type]
            TypeError,
            "collection.set_size: expected an int or None, got float 2.5",
        ),
        (lambda: node(Role.TEXT, live="polite"), TypeError, "live: expected a Live, got str"),
        (lambda: text("a", focusable="x"), TypeError, "focusable: expected True or False or None"),
        (
            lambda: scroll_view(step=float("inf")),
            NonFiniteNumberError,
            "step: expected a finite number",
        ),
        (
            lambda: node(Role.TEXT, layout=LayoutSpec(height=-1.0)),
            ValueError,
            "layout.height: expected a number of at least 0, got -1.0",
        ),
        (
            lambda: column(text("a", layout=LayoutSpec(padding=1e308)), text("b")),
            NonFiniteNumberError,
            "layout.padding: expected a number of at most 2**53, got 1e+308 (the layout adds",
        ),
    ],
)
def test_view_fields_the_log_or_the_wire_cannot_carry_are_refused_where_they_are_built(
    build: Callable[[], object], error: type[Exception], says: str
) -> None:
    """A string role crashed the runtime's paint pass with nothing logged; a huge level did
    the same in msgpack; NaN made every read fail; a string numeric broke the tool's output
    schema for every client that checks it."""
    with pytest.raises(error, match=re.escape(says)):
        build()
    with pytest.raises(ApplicationError) as raised:
        runtime(lambda _model: column(build()), 0)  # type: ignore[arg-type]
    assert type(raised.value.__cause__) is error


def _refused_as_it_starts_and_as_it_changes(bad: Callable[[], View[Any]]) -> BaseException:
    """The app's error (`ApplicationError`) for a view that shows `bad()`, raised alike as
    the runtime starts and as the view changes to it, the snapshot left as it was; its
    cause."""

    def view(shown: bool) -> View[Any]:
        return column(text("ok", "fine", semantic_id="ok"), *([bad()] if shown else []))

    with pytest.raises(ApplicationError) as raised:
        runtime(view, True)
    cause = raised.value.__cause__
    assert cause is not None
    rt = runtime(view, False)
    before = rt.snapshot
    with pytest.raises(ApplicationError) as changed:
        rt.deliver(True)
    assert type(changed.value.__cause__) is type(cause)
    assert rt.snapshot is before
    return cause


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        (
            lambda: View(role=Role.SLIDER, numeric=Numeric(current=math.nan)),
            "the slider: numeric.current: expected a finite number that fits in 64 bits, got nan",
        ),
        (
            lambda: attrs.evolve(node(Role.SLIDER, label="v"), numeric=Numeric(max=math.inf)),
            "the slider: numeric.max: expected a finite number that fits in 64 bits, got inf",
        ),
        (
            lambda: View(role=Role.TEXT, label="t", layout=LayoutSpec(height=-math.inf)),
            "the text: layout.height: expected a finite number that fits in 64 bits, got -inf",
        ),
        (
            lambda: View(role=Role.TEXT, label="t", layout=LayoutSpec(height=1e308)),
            "the text: layout.height: expected a number of at most 2**53, got 1e+308 (the layout",
        ),
    ],
    ids=["View-numeric-nan", "evolved-numeric-inf", "View-layout-minus-inf", "View-layout-huge"],
)
def test_a_view_built_without_node_holding_a_non_finite_number_is_the_application_s_error(
    bad: Callable[[], View[Any]], says: str
) -> None:
    """`node` refused NaN in a view's numeric or layout, but a View(...) or an attrs.evolve
    of one reached the snapshot with it: NaN made every read fail, and as it equals nothing,
    every commit counted as a change; 1e308 heights laid out added up to an infinity."""
    cause = _refused_as_it_starts_and_as_it_changes(bad)
    assert type(cause) is NonFiniteNumberError
    assert str(cause).startswith(says)


LONE = b"caf\xe9.txt".decode("utf-8", "surrogateescape")
"""A file name as ``os.listdir`` gives it when its bytes are not UTF-8: 'caf\\udce9.txt'."""


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        (lambda: text("File", LONE, semantic_id="f.name"), "the text 'f.name': value: expected"),
        (lambda: button(LONE, "open"), "the button: label: expected valid UTF-8 text (it cont"),
        (lambda: text("F", description=LONE), "the text: description: expected valid UTF-8"),
        (lambda: node(Role.LINK, label="a", url=LONE), "the link: url: expected valid UTF-8"),
        (
            lambda: node(Role.SLIDER, label="s", numeric=Numeric(value_text=LONE)),
            "the slider: numeric.value_text: expected valid UTF-8",
        ),
        (
            lambda: View(role=Role.TEXT, semantic_id=SemanticId("f.name"), label=LONE),
            "the text 'f.name': label: expected valid UTF-8 text (it contains a lone surrogate"
            " U+DCE9 at index 3)",
        ),
    ],
    ids=["text-value", "button-label", "description", "url", "value_text", "View-label"],
)
def test_text_with_a_lone_surrogate_is_the_application_s_error_naming_the_node(
    bad: Callable[[], View[Any]], says: str
) -> None:
    """A lone surrogate in a node's text passed the builder, then msgpack raised a bare
    UnicodeEncodeError as the snapshot was packed: served, the session failed as the
    runtime's fault; replayed, it pointed at msgpack's packer, with no node named."""
    cause = _refused_as_it_starts_and_as_it_changes(bad)
    assert type(cause) is ValueError
    assert str(cause).startswith(says)


def test_a_password_field_holding_a_lone_surrogate_is_served_masked() -> None:
    """Only the masked value reaches the snapshot: nothing there to refuse."""
    rt = runtime(lambda _model: column(text_field("PIN", LONE, password=True)), 0)
    assert [n.value for n in full(rt).nodes if n.role is Role.TEXT_FIELD] == ["\u2022" * 8]


def test_a_message_given_where_a_handler_goes_is_refused_naming_the_handler() -> None:
    """`button` takes a message, `text_field`'s on_submit a handler: the slip failed only
    when an agent submitted, as "'Inc' object is not callable"."""
    with pytest.raises(TypeError, match=r"^the submit handler: expected a function of the"):
        text_field("T", "", on_submit="a message")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^on_set_text: expected a function of the typed text"):
        text_field("T", "", on_set_text="a message")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"send\(message\) makes a handler of a message"):
        node(Role.BUTTON, handlers={K.ACTIVATE: "a message"})  # type: ignore[dict-item]
