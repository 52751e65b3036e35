"""The todo example driven through `AppRuntime` exactly as an agent would (SPEC §5)."""

from __future__ import annotations

from typing import Any

import pytest
import trio

from semledger.examples.todo import app
from semledger.runtime import (
    ActionKind,
    AppRuntime,
    BySemanticId,
    Checked,
    Delta,
    EffectRunner,
    ErrorCode,
    Latest,
    Live,
    Receipt,
    Rejection,
    Role,
    SemanticId,
    SemanticsAction,
    SemanticsNode,
    SetText,
    SimpleAction,
)

Runtime = AppRuntime[Any, Any]
ACTIVATE = SimpleAction(ActionKind.ACTIVATE)
SUBMIT = SimpleAction(ActionKind.SUBMIT)


def perform(rt: Runtime, sid: str, action: SemanticsAction) -> Receipt | Rejection:
    return rt.perform(BySemanticId(SemanticId.new(sid)), action, Latest())


def accepted(rt: Runtime, sid: str, action: SemanticsAction) -> Receipt:
    outcome = perform(rt, sid, action)
    assert isinstance(outcome, Receipt), outcome
    return outcome


def rejected(rt: Runtime, sid: str, action: SemanticsAction) -> Rejection:
    outcome = perform(rt, sid, action)
    assert isinstance(outcome, Rejection), outcome
    return outcome


def find(rt: Runtime, sid: str) -> SemanticsNode:
    found = rt.snapshot.find(sid)
    assert len(found) == 1, (sid, found)
    return rt.snapshot.nodes[found[0]]


def absent(rt: Runtime, sid: str) -> bool:
    return rt.snapshot.find(sid) == ()


def add(rt: Runtime, text: str) -> Receipt:
    accepted(rt, "todo.input", SetText(text))
    return accepted(rt, "todo.input", SUBMIT)


def items(rt: Runtime) -> list[SemanticsNode]:
    return [rt.snapshot.nodes[i] for i in find(rt, "todo.items").children]


@pytest.fixture
def rt() -> Runtime:
    return AppRuntime(app)


def test_initial_tree_has_the_documented_nodes(rt: Runtime) -> None:
    field = find(rt, "todo.input")
    assert (field.role, field.label, field.value) == (Role.TEXT_FIELD, "New todo", "")
    assert {ActionKind.SET_TEXT, ActionKind.SUBMIT} <= set(field.actions)
    assert find(rt, "todo.items").role is Role.LIST
    assert items(rt) == []
    clear = find(rt, "todo.clear_completed")
    assert (clear.role, clear.label) == (Role.BUTTON, "Clear completed")
    save = find(rt, "todo.save")
    assert (save.role, save.label) == (Role.BUTTON, "Save")
    assert rt.snapshot.issues == ()


def test_submit_adds_an_item_with_the_text_and_clears_the_field(rt: Runtime) -> None:
    add(rt, "Buy milk")
    assert find(rt, "todo.input").value == ""
    [item] = items(rt)
    assert (item.role, item.label) == (Role.LIST_ITEM, "Buy milk")
    done, delete = (rt.snapshot.nodes[c] for c in item.children)
    assert (done.semantic_id, done.role, done.label) == ("todo.item.1.done", Role.CHECKBOX, "Done")
    assert done.state.checked is Checked.UNCHECKED
    assert (delete.semantic_id, delete.role, delete.label) == (
        "todo.item.1.delete", Role.BUTTON, "Delete",
    )


@pytest.mark.parametrize("draft", ["", "   "])
def test_submit_with_empty_text_is_handler_rejected(rt: Runtime, draft: str) -> None:
    if draft:
        accepted(rt, "todo.input", SetText(draft))
    generation = rt.generation
    rejection = rejected(rt, "todo.input", SUBMIT)
    assert rejection.code is ErrorCode.HANDLER_REJECTED
    assert rejection.details == {
        "target": {"kind": "semantic_id", "id": "todo.input"}, "action": "submit",
    }
    assert rt.generation == generation
    assert items(rt) == []


def test_item_numbers_start_at_one_and_are_never_reused_after_delete(rt: Runtime) -> None:
    add(rt, "one")
    add(rt, "two")
    add(rt, "three")
    assert [i.label for i in items(rt)] == ["one", "two", "three"]
    accepted(rt, "todo.item.2.delete", ACTIVATE)
    assert absent(rt, "todo.item.2.done")
    assert absent(rt, "todo.item.2.delete")
    add(rt, "four")
    labels = {i.label: rt.snapshot.nodes[i.children[0]].semantic_id for i in items(rt)}
    assert labels == {
        "one": "todo.item.1.done", "three": "todo.item.3.done", "four": "todo.item.4.done",
    }


def test_deleting_one_item_keeps_the_other_items_node_ids(rt: Runtime) -> None:
    add(rt, "one")
    add(rt, "two")
    kept = find(rt, "todo.item.2.done").node_id
    accepted(rt, "todo.item.1.delete", ACTIVATE)
    assert find(rt, "todo.item.2.done").node_id == kept


def test_done_checkbox_toggles_checked(rt: Runtime) -> None:
    add(rt, "one")
    accepted(rt, "todo.item.1.done", ACTIVATE)
    assert find(rt, "todo.item.1.done").state.checked is Checked.CHECKED
    accepted(rt, "todo.item.1.done", ACTIVATE)
    assert find(rt, "todo.item.1.done").state.checked is Checked.UNCHECKED


def test_clear_completed_is_disabled_when_nothing_is_done(rt: Runtime) -> None:
    assert find(rt, "todo.clear_completed").state.disabled
    add(rt, "one")
    assert find(rt, "todo.clear_completed").state.disabled
    assert rejected(rt, "todo.clear_completed", ACTIVATE).code is ErrorCode.TARGET_DISABLED
    accepted(rt, "todo.item.1.done", ACTIVATE)
    assert not find(rt, "todo.clear_completed").state.disabled


def test_clear_completed_removes_done_items_only(rt: Runtime) -> None:
    for text in ("one", "two", "three"):
        add(rt, text)
    accepted(rt, "todo.item.1.done", ACTIVATE)
    accepted(rt, "todo.item.3.done", ACTIVATE)
    accepted(rt, "todo.clear_completed", ACTIVATE)
    assert [i.label for i in items(rt)] == ["two"]
    assert find(rt, "todo.clear_completed").state.disabled


def test_remaining_is_a_polite_live_status_counting_undone_items(rt: Runtime) -> None:
    remaining = find(rt, "todo.remaining")
    assert (remaining.role, remaining.live, remaining.value) == (
        Role.STATUS, Live.POLITE, "0 items left",
    )
    add(rt, "one")
    add(rt, "two")
    assert find(rt, "todo.remaining").value == "2 items left"
    accepted(rt, "todo.item.1.done", ACTIVATE)
    assert find(rt, "todo.remaining").value == "1 items left"


def test_remaining_change_is_announced(rt: Runtime) -> None:
    accepted(rt, "todo.input", SetText("one"))
    receipt = accepted(rt, "todo.input", SUBMIT)
    delta = rt.read(receipt.before)
    assert isinstance(delta, Delta)
    node_id = find(rt, "todo.remaining").node_id
    [announcement] = [a for a in delta.announcements if a.node_id == node_id]
    assert announcement.text == "1 items left"
    assert announcement.live is Live.POLITE
    assert announcement.generation == receipt.after


@pytest.mark.usefixtures("autojump_clock")
async def test_save_is_an_async_effect_saving_then_saved(rt: Runtime) -> None:
    add(rt, "one")
    add(rt, "two")
    async with trio.open_nursery() as nursery:
        runner = EffectRunner(rt, nursery)
        receipt = accepted(rt, "todo.save", ACTIVATE)
        assert receipt.pending_work
        assert rt.pending_work
        assert find(rt, "todo.save_status").value == "Saving…"
        assert runner.start_pending() == 1
        await runner.wait_idle()
    assert not rt.pending_work
    assert find(rt, "todo.save_status").value == "Saved 2 items"


@pytest.mark.usefixtures("autojump_clock")
async def test_save_counts_the_items_present_when_save_was_pressed(rt: Runtime) -> None:
    add(rt, "one")
    async with trio.open_nursery() as nursery:
        runner = EffectRunner(rt, nursery)
        accepted(rt, "todo.save", ACTIVATE)
        runner.start_pending()
        add(rt, "two")
        assert find(rt, "todo.save_status").value == "Saving…"
        await runner.wait_idle()
    assert find(rt, "todo.save_status").value == "Saved 1 items"
    assert len(items(rt)) == 2


def test_a_save_that_finishes_after_a_later_one_does_not_say_what_was_saved(
    rt: Runtime,
) -> None:
    """Effects run side by side: the first save may finish last, and its count is then
    not what was saved."""
    add(rt, "one")
    accepted(rt, "todo.save", ACTIVATE)
    add(rt, "two")
    accepted(rt, "todo.save", ACTIVATE)
    (first, first_save), (second, second_save) = rt.take_effects()
    rt.complete_effect(second, trio.run(second_save.result))
    assert find(rt, "todo.save_status").value == "Saved 2 items"
    rt.complete_effect(first, trio.run(first_save.result))
    assert find(rt, "todo.save_status").value == "Saved 2 items"
    assert not rt.pending_work
