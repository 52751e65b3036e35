"""Views and declarations: cache keys, skipping, invalidation, paint-only work, View.map."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
from hypothesis import given
from hypothesis import strategies as st

from semledger.runtime import (
    CONSTANT,
    UNCACHEABLE,
    App,
    AppRuntime,
    BySemanticId,
    Declaration,
    Full,
    Key,
    Latest,
    PaintSpec,
    Receipt,
    SimpleAction,
    View,
    button,
    group,
    lazy,
    text,
)
from semledger.runtime import ActionKind as K


@attrs.frozen
class Model:
    label: str = "a"
    color: str = "#fff"
    other: int = 0


def make(view: Any, init: Any = None) -> AppRuntime[Any, Any]:
    return AppRuntime(
        App(init=lambda: Model() if init is None else init, update=lambda m, msg: msg, view=view)
    )


def labels(rt: AppRuntime[Any, Any]) -> list[str | None]:
    f = rt.read()
    assert isinstance(f, Full)
    return [n.label for n in f.nodes]


def test_unchanged_key_on_all_four_channels_skips_the_subtree_without_building_it() -> None:
    calls: list[str] = []

    def build(label: str) -> Sequence[View[Any]]:
        calls.append(label)
        return (text(label),)

    def view(m: Model) -> View[Any]:
        return group(
            lazy(m.label, lambda: build(m.label), key="lazy"),
            text("other", str(m.other)),
            label="r",
        )

    rt = make(view)
    assert calls == ["a"]
    rt.deliver(Model(other=1))
    assert calls == ["a"]
    assert labels(rt) == ["r", "a", "other"]
    rt.deliver(Model(label="b", other=1))
    assert calls == ["a", "b"]
    assert labels(rt) == ["r", "b", "other"]


def test_a_skipped_subtree_keeps_its_previous_semantics_even_if_the_view_differs() -> None:
    def view(m: Model) -> View[Any]:
        return group(text(m.label, declaration=Declaration.keyed("fixed")), label="r")

    rt = make(view)
    rt.deliver(Model(label="changed"))
    assert labels(rt) == ["r", "a"]
    assert rt.generation == 1


def test_constant_on_all_channels_is_built_once() -> None:
    calls: list[int] = []

    def view(m: Model) -> View[Any]:
        def children() -> Sequence[View[Any]]:
            calls.append(1)
            return (text("static"),)

        return group(View(children=children, declaration=Declaration.constant()), text(m.label))

    rt = make(view)
    for i in range(3):
        rt.deliver(Model(label=str(i)))
    assert calls == [1]


def test_uncacheable_always_rebuilds() -> None:
    calls: list[int] = []

    def view(m: Model) -> View[Any]:
        def children() -> Sequence[View[Any]]:
            calls.append(1)
            return (text("x"),)

        decl = Declaration(UNCACHEABLE, UNCACHEABLE, UNCACHEABLE, UNCACHEABLE)
        return group(View(children=children, declaration=decl), label=m.label)

    rt = make(view)
    rt.deliver(Model(label="b"))
    rt.deliver(Model(label="b"))
    assert calls == [1, 1, 1]


def test_uncacheable_on_one_channel_means_the_subtree_is_rebuilt() -> None:
    calls: list[int] = []

    def view(m: Model) -> View[Any]:
        def children() -> Sequence[View[Any]]:
            calls.append(1)
            return (text(m.label),)

        k = Key("same")
        decl = Declaration(layout=k, paint=k, semantics=k, platform=UNCACHEABLE)
        return group(View(children=children, declaration=decl), label="r")

    rt = make(view)
    rt.deliver(Model(label="b"))
    assert calls == [1, 1]


def test_a_layout_key_change_invalidates_the_other_three_channels() -> None:
    same, before, after = Key("s"), Key(1), Key(2)
    old = Declaration(before, same, same, same)
    new = Declaration(after, same, same, same)
    dirty = new.dirty_channels(old)
    assert (dirty.layout, dirty.paint, dirty.semantics, dirty.platform) == (True, True, True, True)
    paint_only = Declaration(before, Key("p2"), same, same).dirty_channels(old)
    assert (paint_only.layout, paint_only.paint, paint_only.semantics, paint_only.platform) == (
        False,
        True,
        False,
        False,
    )
    assert (
        not Declaration(CONSTANT, CONSTANT, CONSTANT, CONSTANT)
        .dirty_channels(Declaration.constant())
        .any
    )


def test_a_layout_key_change_rebuilds_semantics_under_an_unchanged_semantics_key() -> None:
    def view(m: Model) -> View[Any]:
        s = Key("same")
        decl = Declaration(layout=Key(m.other), paint=s, semantics=s, platform=s)
        return group(group(text(m.label), label="inner", declaration=decl), label="r")

    rt = make(view)
    rt.deliver(Model(label="b", other=0))
    assert labels(rt) == ["r", "inner", "a"]
    rt.deliver(Model(label="b", other=1))
    assert labels(rt) == ["r", "inner", "b"]


def paint_view(m: Model) -> View[Any]:
    keep = Key(m.label)
    decl = Declaration(layout=keep, paint=Key(m.color), semantics=keep, platform=keep)
    return group(
        button(
            m.label,
            "msg",
            paint=PaintSpec(background=m.color, hover_background="#eee"),
            declaration=decl,
        ),
        text("footer"),
        label="root",
    )


def test_a_paint_only_model_change_does_not_advance_the_generation() -> None:
    rt = make(paint_view)
    generation, paint_passes = rt.generation, rt.counters.paint_passes
    ops_before = [op for op in rt.display_list() if op.kind == "rect"]
    rt.deliver(Model(color="#000"))
    assert rt.generation == generation
    assert rt.counters.paint_passes == paint_passes + 1
    ops_after = [op for op in rt.display_list() if op.kind == "rect"]
    assert [op.color for op in ops_before] == ["#fff"]
    assert [op.color for op in ops_after] == ["#000"]


def test_a_semantics_change_under_the_same_declaration_shape_does_advance() -> None:
    rt = make(paint_view)
    generation = rt.generation
    rt.deliver(Model(label="b"))
    assert rt.generation == generation + 1


def test_view_map_maps_the_messages_of_every_handler_below() -> None:
    delivered: list[Any] = []

    def update(m: list[Any], msg: Any) -> list[Any]:
        delivered.append(msg)
        return [*m, msg]

    def view(m: list[Any]) -> View[Any]:
        inner = group(button("go", 1, semantic_id="go"), label="inner").map(lambda x: ("inner", x))
        return group(inner, label="outer").map(lambda x: ("outer", x))

    rt = AppRuntime(App(init=list, update=update, view=view))
    result = rt.perform(BySemanticId("go"), SimpleAction(K.ACTIVATE), Latest())  # type: ignore[arg-type]
    assert isinstance(result, Receipt)
    assert delivered == [("outer", ("inner", 1))]


def test_a_mapped_node_maps_its_messages_before_its_mapped_ancestors_do() -> None:
    delivered: list[Any] = []

    def update(m: list[Any], msg: Any) -> list[Any]:
        delivered.append(msg)
        return [*m, msg]

    def view(m: list[Any]) -> View[Any]:
        go = button("go", 1, semantic_id="go").map(lambda x: ("button", x))
        return group(go, label="outer").map(lambda x: ("outer", x))

    rt = AppRuntime(App(init=list, update=update, view=view))
    result = rt.perform(BySemanticId("go"), SimpleAction(K.ACTIVATE), Latest())  # type: ignore[arg-type]
    assert isinstance(result, Receipt)
    assert delivered == [("outer", ("button", 1))]


def test_view_map_composes_on_one_view() -> None:
    v: View[int] = button("go", 1)
    mapped = v.map(lambda x: x + 1).map(lambda x: x * 10)
    assert mapped.mapper is not None
    assert mapped.mapper(1) == 20
    assert v.mapper is None


@attrs.frozen
class At:
    index: int
    msg: Any


def test_a_skipped_lazy_node_takes_the_map_of_the_latest_build() -> None:
    """The mapping on a kept subtree's node is its embedder's: rows mapped by position,
    reversed, route each click to the row now at that position, without a rebuild."""
    built: list[str] = []

    def row(name: str) -> View[Any]:
        def build() -> Sequence[View[Any]]:
            built.append(name)
            return (button(name, "inc", semantic_id=name),)

        return lazy(name, build, key=name)

    def update(m: tuple[tuple[str, int], ...], msg: Any) -> tuple[tuple[str, int], ...]:
        if msg == "rev":
            return m[::-1]
        return tuple((name, n + (i == msg.index)) for i, (name, n) in enumerate(m))

    def view(m: tuple[tuple[str, int], ...]) -> View[Any]:
        rows = (row(name).map(lambda msg, i=i: At(i, msg)) for i, (name, _n) in enumerate(m))
        return group(button("rev", "rev", semantic_id="rev"), *rows, label="r")

    rt = AppRuntime(App(init=lambda: (("a", 0), ("b", 0)), update=update, view=view))
    rt.perform(BySemanticId("rev"), SimpleAction(K.ACTIVATE), Latest())  # type: ignore[arg-type]
    rt.perform(BySemanticId("a"), SimpleAction(K.ACTIVATE), Latest())  # type: ignore[arg-type]
    assert rt.model == (("b", 0), ("a", 1))
    assert built == ["a", "b"]


_CHANNEL_KEYS = st.sampled_from([CONSTANT, UNCACHEABLE, Key(1), Key(1), Key(2)])
"""Channel keys, two of them equal but not the same object."""


@st.composite
def _declarations(draw: st.DrawFn) -> Declaration:
    if draw(st.booleans()):  # one key on every channel, as `keyed` and `constant` make
        return Declaration(*[draw(_CHANNEL_KEYS)] * 4)
    return Declaration(*(draw(_CHANNEL_KEYS) for _ in range(4)))


@given(_declarations(), _declarations())
def test_a_channel_is_clean_only_when_both_keys_are_cacheable_and_equal(
    old: Declaration, new: Declaration
) -> None:
    def clean(channel: str) -> bool:
        before, after = getattr(old, channel), getattr(new, channel)
        return before is not UNCACHEABLE and after is not UNCACHEABLE and before == after

    dirty = new.dirty_channels(old)
    layout = not clean("layout")
    assert (dirty.layout, dirty.paint, dirty.semantics, dirty.platform) == (
        layout,
        layout or not clean("paint"),
        layout or not clean("semantics"),
        layout or not clean("platform"),
    )
