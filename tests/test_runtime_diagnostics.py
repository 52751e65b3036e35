"""Diagnostics: counters, paint-only hover, pointer and command dispatch (SPEC §2.3, §3)."""

from __future__ import annotations

from typing import Any

import pytest

from semledger.runtime import ActionKind as K
from semledger.runtime import (
    App,
    AppRuntime,
    BySemanticId,
    Full,
    Latest,
    PaintSpec,
    SemanticId,
    SemanticsNode,
    SimpleAction,
    View,
    button,
    column,
    group,
    send,
    text,
    text_field,
)


def make() -> AppRuntime[Any, Any]:
    def view(model: tuple[str, ...]) -> View[Any]:
        return group(
            button(
                "One",
                "one",
                semantic_id="one",
                paint=PaintSpec(background="#fff", hover_background="#ddd"),
            ),
            button("Two", "two", semantic_id="two"),
            text_field("Name", "abcd", on_set_text=lambda s: ("name", s), semantic_id="name"),
            text("Log", " ".join(str(m) for m in model)),
            label="app",
        )

    return AppRuntime(App(init=tuple, update=lambda m, msg: (*m, msg), view=view))


def node_of(rt: AppRuntime[Any, Any], sid: str) -> SemanticsNode:
    f = rt.read()
    assert isinstance(f, Full)
    [found] = [n for n in f.nodes if n.semantic_id == sid]
    return found


def centre(n: SemanticsNode) -> tuple[float, float]:
    return n.frame.origin.x + n.frame.size.width / 2, n.frame.origin.y + n.frame.size.height / 2


def test_hover_is_paint_only_it_never_advances_the_generation_but_paints() -> None:
    rt = make()
    generation, passes = rt.generation, rt.counters.paint_passes
    x, y = centre(node_of(rt, "one"))
    result = rt.dispatch_pointer(x, y, "Move")
    assert result["handled"]
    assert rt.generation == generation
    assert rt.counters.paint_passes == passes + 1
    assert rt.paint_summary()["hovered"] == str(node_of(rt, "one").node_id)
    assert "#ddd" in [op.color for op in rt.display_list()]
    rt.dispatch_pointer(x, y, "Exit")
    assert rt.generation == generation
    assert rt.counters.paint_passes == passes + 2
    assert "#ddd" not in [op.color for op in rt.display_list()]


def test_pointer_down_and_up_activates_and_focuses() -> None:
    rt = make()
    x, y = centre(node_of(rt, "two"))
    rt.dispatch_pointer(x, y, "Down")
    assert rt.snapshot.focused == node_of(rt, "two").node_id
    result = rt.dispatch_pointer(x, y, "Up")
    assert result["handled"]
    assert rt.model == ("two",)


def test_a_pointer_event_that_moves_the_focus_answers_the_generations_it_went_between() -> None:
    """Focus is public: the Down that focuses commits a generation, which the answer names
    as an action's receipt does; one that changes nothing public names none."""
    rt = make()
    x, y = centre(node_of(rt, "two"))
    g0 = rt.generation
    down = rt.dispatch_pointer(x, y, "Down")
    assert rt.generation == g0 + 1
    assert (down["before"], down["after"]) == (str(g0), str(g0 + 1))
    again = rt.dispatch_pointer(x, y, "Down")
    assert "before" not in again
    assert "after" not in again
    moved = rt.dispatch_pointer(x, y, "Move")
    assert rt.generation == g0 + 1
    assert "before" not in moved


def test_pointer_up_elsewhere_does_not_activate() -> None:
    rt = make()
    x, y = centre(node_of(rt, "two"))
    x1, y1 = centre(node_of(rt, "one"))
    rt.dispatch_pointer(x, y, "Down")
    rt.dispatch_pointer(x1, y1, "Up")
    assert rt.model == ()


def test_commands_go_to_the_focused_node() -> None:
    rt = make()
    assert not rt.dispatch_command("Activate")["handled"]
    rt.perform(BySemanticId(SemanticId("one")), SimpleAction(K.FOCUS), Latest())
    assert rt.dispatch_command("Activate")["handled"]
    assert rt.model == ("one",)
    rt.perform(BySemanticId(SemanticId("name")), SimpleAction(K.FOCUS), Latest())
    assert rt.dispatch_command("SelectAll")["handled"]
    text_info = node_of(rt, "name").text
    assert text_info is not None
    assert text_info.selection is not None
    assert (text_info.selection.start, text_info.selection.end) == (0, 4)


def test_submit_goes_to_the_focused_field_as_a_submit() -> None:
    field = text_field("Name", "Ada", on_submit=send("submitted"), semantic_id="name")
    rt: AppRuntime[Any, Any] = AppRuntime(
        App(init=tuple, update=lambda m, msg: (*m, msg), view=lambda _: group(field, label="g"))
    )
    rt.perform(BySemanticId(SemanticId("name")), SimpleAction(K.FOCUS), Latest())
    assert rt.dispatch_command("Submit")["handled"]
    assert rt.model == ("submitted",)


@pytest.mark.parametrize("point", [(-1.0, 5.0), (5.0, -1.0), (10_000.0, 5.0)])
def test_a_point_outside_the_root_hits_nothing(point: tuple[float, float]) -> None:
    rt = make()
    assert rt.hit_test(*point) is None
    assert rt.dispatch_pointer(*point, "Down") == {"handled": False, "node_id": None}


def test_cancel_on_a_synthetic_root_is_unhandled_not_a_crash() -> None:
    rt: AppRuntime[Any, Any] = AppRuntime(
        App(init=lambda: 0, update=lambda m, msg: m, view=lambda _: column(text("a"), text("b")))
    )
    result = rt.dispatch_command("Cancel")
    assert not result["handled"]
    assert result["error"] == "action_unavailable"


def test_state_counters_report_passes_commits_and_generation() -> None:
    rt = make()
    counters = rt.state_counters()
    assert counters["generation"] == rt.generation == 1
    assert counters["commits"] == 1
    assert counters["queue_depth"] == 0
    assert counters["pending_effects"] == 0
    assert counters["layout_passes"] >= 1
    rt.perform(BySemanticId(SemanticId("one")), SimpleAction(K.ACTIVATE), Latest())
    assert rt.state_counters()["commits"] == 2


def test_diagnostics_after_close_answer_host_closed() -> None:
    rt = make()
    rt.close()
    assert rt.dispatch_pointer(1, 1, "Move")["error"] == "host_closed"
    assert rt.dispatch_command("Activate")["error"] == "host_closed"


def test_an_unknown_pointer_phase_is_refused_not_taken_for_a_cancel() -> None:
    rt = make()
    x, y = centre(node_of(rt, "one"))
    with pytest.raises(ValueError, match="phase: expected one of Down, Up, Move, Cancel, Exit"):
        rt.dispatch_pointer(x, y, "Hover")


def test_an_unknown_command_intent_is_refused_not_answered_as_unhandled() -> None:
    with pytest.raises(ValueError, match="intent: expected one of Activate, Submit, Cancel"):
        make().dispatch_command("Frobnicate")


def test_the_diagnostics_tools_offer_exactly_the_phases_and_intents_the_runtime_takes() -> None:
    from semledger.hosts import CommandIntent, PointerPhase
    from semledger.runtime._runtime import COMMAND_INTENTS, POINTER_PHASES

    assert [p.value for p in PointerPhase] == list(POINTER_PHASES)
    assert [i.value for i in CommandIntent] == list(COMMAND_INTENTS)
    rt = make()
    for intent in COMMAND_INTENTS:
        assert "handled" in rt.dispatch_command(intent)


def test_pointer_down_on_what_takes_no_focus_leaves_the_focus_alone() -> None:
    rt = make()
    rt.dispatch_pointer(*centre(node_of(rt, "two")), "Down")
    focused, g0 = rt.snapshot.focused, rt.generation
    f = rt.read()
    assert isinstance(f, Full)
    [log] = [n for n in f.nodes if n.label == "Log"]
    assert K.FOCUS not in log.actions
    down = rt.dispatch_pointer(*centre(log), "Down")
    assert down["node_id"] == str(log.node_id)
    assert (rt.snapshot.focused, rt.generation) == (focused, g0)


def test_a_frame_holds_its_top_and_left_edges_but_not_its_bottom_and_right_ones() -> None:
    rt = make()
    one, two = node_of(rt, "one"), node_of(rt, "two")
    bottom = one.frame.origin.y + one.frame.size.height
    assert two.frame.origin.y == bottom
    hit = rt.hit_test(one.frame.origin.x, bottom)
    assert hit is not None
    assert hit.node_id == two.node_id
    assert rt.hit_test(rt.snapshot.nodes[rt.snapshot.root or 0].frame.size.width, bottom) is None
