"""The runtime adapter: semledger apps driven through their committed semantics."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import trio
from PIL import Image

from semledger.adapters import (
    ActArgs,
    ActionabilityError,
    AgentSurface,
    Capabilities,
    CheckError,
    DataError,
    DialogError,
    LocateError,
    NavigationError,
    RuntimeSurface,
    ScriptError,
    SessionError,
    Snapshot,
    SnapshotNode,
    create_runtime_surface,
    create_surface,
    snapshot_problems,
)
from semledger.runtime import App, Checked, Live, Role, State, View, group, node
from semledger.runtime import text as text_view


async def _open(fixture: str) -> RuntimeSurface:
    surface = create_surface({"adapter": "runtime", "app": f"semledger.examples.{fixture}:app"})
    assert isinstance(surface, RuntimeSurface)
    await surface.open({})
    return surface


@pytest.fixture
async def counter() -> AsyncIterator[RuntimeSurface]:
    surface = await _open("counter")
    yield surface
    await surface.close()


@pytest.fixture
async def todo() -> AsyncIterator[RuntimeSurface]:
    surface = await _open("todo")
    yield surface
    await surface.close()


@pytest.fixture
async def gallery() -> AsyncIterator[RuntimeSurface]:
    surface = await _open("gallery")
    yield surface
    await surface.close()


def _by_id(snapshot: Snapshot, semantic_id: str) -> SnapshotNode:
    return next(n for n in snapshot.nodes if n.native.get("automationId") == semantic_id)


async def test_factory_builds_a_desktop_surface_with_honest_capabilities() -> None:
    surface = create_runtime_surface({"app": "semledger.examples.counter:app"})
    assert isinstance(surface, AgentSurface)
    assert surface.kind == "desktop"
    assert surface.capabilities() == Capabilities(screenshot=True, restore=True)


def test_factory_refuses_a_missing_or_bad_app() -> None:
    with pytest.raises(DataError):
        create_runtime_surface({})
    with pytest.raises(SessionError):
        create_runtime_surface({"app": "semledger.examples.counter:nothing"})


async def test_snapshot_is_well_formed_with_aria_roles_and_states(
    counter: RuntimeSurface,
) -> None:
    snapshot = await counter.snapshot()
    assert snapshot_problems(snapshot) == []
    assert snapshot.text.splitlines()[1:] == [
        '  - text "Count": 0 [ref=r2]',
        '  - button "Increment" [ref=r3]',
        '  - button "Decrement" [disabled] [ref=r4]',
        '  - button "Reset" [ref=r5]',
        '  - textbox "Step": 1 [ref=r6]',
    ]
    assert _by_id(snapshot, "counter.step").role == "textbox"


async def test_refs_are_stable_while_the_element_lives(todo: RuntimeSurface) -> None:
    first = await todo.snapshot()
    field = _by_id(first, "todo.input")
    await todo.act("type", field.ref, {"text": "milk"})
    second = await todo.snapshot()
    assert [n.ref for n in first.nodes] == [n.ref for n in second.nodes]
    assert second.hash == first.hash
    assert _by_id(second, "todo.input").value == "milk"


async def test_type_appends_and_enter_submits(todo: RuntimeSurface) -> None:
    field = _by_id(await todo.snapshot(), "todo.input").ref
    await todo.act("type", field, {"text": "mi"})
    await todo.act("type", field, {"text": "lk"})
    await todo.act("press", field, {"key": "Enter"})
    snapshot = await todo.snapshot()
    assert [n.name for n in snapshot.nodes if n.role == "listitem"] == ["milk"]
    assert _by_id(snapshot, "todo.input").value == ""


async def test_clear_given_the_text_to_come_leaves_the_type_after_it_to_set_it_whole(
    todo: RuntimeSurface,
) -> None:
    """clear with the text a type sets next (the bridge's set_text) emptied the field in an
    app action of its own: now the type right after it is the one SetText, replacing the
    value; only that type, on that node."""
    field = _by_id(await todo.snapshot(), "todo.input").ref
    await todo.act("type", field, {"text": "old"})
    generation = todo.runtime.generation
    await todo.act("clear", field, {"text": "milk"})
    assert todo.runtime.generation == generation
    await todo.act("type", field, {"text": "milk"})
    assert todo.runtime.generation == generation + 1
    assert _by_id(await todo.snapshot(), "todo.input").value == "milk"
    await todo.act("clear", field, {"text": "x"})
    await todo.act("focus", field)
    await todo.act("type", field, {"text": "y"})
    assert _by_id(await todo.snapshot(), "todo.input").value == "milky"
    await todo.act("clear", field)
    assert _by_id(await todo.snapshot(), "todo.input").value == ""


async def test_rejections_map_to_typed_errors(
    counter: RuntimeSurface, todo: RuntimeSurface
) -> None:
    snapshot = await counter.snapshot()
    with pytest.raises(ActionabilityError) as disabled:
        await counter.act("click", _by_id(snapshot, "counter.decrement").ref)
    assert disabled.value.details["code"] == "target_disabled"
    with pytest.raises(LocateError):
        await counter.act("click", "r999")
    with pytest.raises(LocateError):
        await counter.act("click", "not-a-ref")
    field = _by_id(await todo.snapshot(), "todo.input").ref
    with pytest.raises(ActionabilityError) as rejected:
        await todo.act("press", field, {"key": "Enter"})
    assert rejected.value.details["code"] == "handler_rejected"


@pytest.mark.parametrize("action", ["navigate", "back", "forward", "refresh"])
async def test_navigation_is_refused(counter: RuntimeSurface, action: str) -> None:
    with pytest.raises(NavigationError):
        await counter.act(action, None, {"url": "https://example.com/"})


async def test_what_the_runtime_cannot_express_is_refused(counter: RuntimeSurface) -> None:
    ref = _by_id(await counter.snapshot(), "counter.increment").ref
    with pytest.raises(NavigationError):
        await counter.read("url")
    with pytest.raises(ActionabilityError):
        await counter.act("hover", ref)
    with pytest.raises(ActionabilityError):
        await counter.act("dragTo", ref, None, ref)
    with pytest.raises(ActionabilityError):
        await counter.act("press", ref, {"key": "F7"})
    with pytest.raises(DialogError):
        await counter.act("dialog", None, {"accept": True})
    with pytest.raises(ScriptError):
        await counter.act("evaluate", None, {"script": "1"})


async def test_a_change_the_adapter_did_not_make_is_stale(todo: RuntimeSurface) -> None:
    snapshot = await todo.snapshot()
    await todo.act("click", _by_id(snapshot, "todo.save").ref)
    await todo.act("waitFor")  # the save effect finishes behind the adapter's back
    with pytest.raises(LocateError) as stale:
        await todo.act("click", _by_id(snapshot, "todo.save").ref)
    assert stale.value.details["reason"] == "stale"
    after = await todo.snapshot()
    assert _by_id(after, "todo.save_status").value == "Saved 0 items"
    await todo.act("click", _by_id(after, "todo.save").ref)


async def test_locate_answers_every_match_and_nothing_for_lacking_kinds(
    todo: RuntimeSurface,
) -> None:
    field = _by_id(await todo.snapshot(), "todo.input").ref
    for text in ("milk", "eggs"):
        await todo.act("type", field, {"text": text})
        await todo.act("press", field, {"key": "Enter"})
    snapshot = await todo.snapshot()
    deletes = [n.ref for n in snapshot.nodes if n.name == "Delete"]
    assert await todo.locate({"by": "role", "role": "button", "name": "delete"}) == deletes
    exact = {"by": "role", "role": "button", "name": "delete", "exact": True}
    assert await todo.locate(exact) == []
    assert len(await todo.locate({"by": "automationId", "value": "todo.item"})) == 2
    assert await todo.locate({"by": "css", "value": "button"}) == []
    assert await todo.locate({"by": "text", "value": "2 items left", "exact": True}) == [
        _by_id(snapshot, "todo.remaining").ref
    ]
    box = _by_id(snapshot, "todo.save").box
    assert box is not None
    assert await todo.locate({"by": "coords", "x": box[0] + 1, "y": box[1] + 1}) == [
        _by_id(snapshot, "todo.save").ref
    ]
    path = {"by": "controlPath", "value": "group/list/listitem[eggs]/button"}
    assert await todo.locate(path) == [deletes[1]]
    assert await todo.locate({"by": "controlPath", "value": "group/list/listitem[2]"}) == [
        n.ref for n in snapshot.nodes if n.name == "eggs"
    ]


async def test_an_automation_id_that_cannot_be_a_semantic_id_matches_nothing(
    todo: RuntimeSurface,
) -> None:
    """locate and check(count) raised the runtime's InvalidSemanticIdError (no SurfaceError)
    for an id with a space in it: no node can have such an id, so none matches."""
    for bad in ("bad id!", "x" * 256, "tab\there"):
        candidate = {"by": "automationId", "value": bad}
        assert await todo.locate(candidate) == []
        count = {"kind": "count", "candidate": candidate, "count": 0}
        assert (await todo.check(count, "page")).actual == "0"


async def test_describe_gives_the_path_native_and_states(counter: RuntimeSurface) -> None:
    snapshot = await counter.snapshot()
    ref = _by_id(snapshot, "counter.reset").ref
    description = await counter.describe(ref)
    assert description.role == "button"
    assert description.native["automationId"] == "counter.reset"
    assert [(s.role, s.name, s.index) for s in description.path] == [
        ("group", None, 0),
        ("button", "Reset", 2),
    ]
    with pytest.raises(LocateError):
        await counter.describe("r999")


async def test_gallery_states_cover_checkable_expandable_and_selected(
    gallery: RuntimeSurface,
) -> None:
    snapshot = await gallery.snapshot()
    assert "unchecked" in _by_id(snapshot, "gallery.dark_mode").states
    assert "checked" in _by_id(snapshot, "gallery.size.medium").states
    assert "collapsed" in _by_id(snapshot, "gallery.fruit").states
    assert "selected" in _by_id(snapshot, "gallery.tab.overview").states
    await gallery.act("setChecked", _by_id(snapshot, "gallery.dark_mode").ref, {"checked": True})
    await gallery.act("selectOption", _by_id(snapshot, "gallery.fruit").ref, {"values": ["Cherry"]})
    after = await gallery.snapshot()
    assert "checked" in _by_id(after, "gallery.dark_mode").states
    assert _by_id(after, "gallery.fruit").value == "Cherry"
    with pytest.raises(LocateError):
        await gallery.act("selectOption", _by_id(after, "gallery.fruit").ref, {"values": ["Kiwi"]})


async def test_type_sets_a_slider_and_escape_collapses_an_open_combo_box(
    gallery: RuntimeSurface,
) -> None:
    """What the MCP bridge's set_numeric_value and a combo box's collapse ask of the
    surface: type appended the number to the slider's value as text (refused, the slider
    takes none), and Escape went to the root as dismiss."""
    snapshot = await gallery.snapshot()
    volume, fruit = _by_id(snapshot, "gallery.volume"), _by_id(snapshot, "gallery.fruit")
    assert volume.native["runtime_actions"] == "focus increment decrement set_numeric_value"
    await gallery.act("type", volume.ref, {"text": "30"})
    with pytest.raises(DataError, match="expected a finite number, got 'loud'"):
        await gallery.act("type", volume.ref, {"text": "loud"})
    await gallery.act("click", fruit.ref)
    assert "expanded" in _by_id(await gallery.snapshot(), "gallery.fruit").states
    await gallery.act("press", fruit.ref, {"key": "Escape"})
    after = await gallery.snapshot()
    assert _by_id(after, "gallery.volume").native["valuenow"] == "30.0"
    assert "collapsed" in _by_id(after, "gallery.fruit").states


def _saved_view(_model: object) -> View[object]:
    status = node(
        Role.STATUS,
        text_view("Saved", semantic_id="saved.words"),
        label="Save",
        live=Live.ASSERTIVE,
        atomic=True,
        semantic_id="saved.status",
    )
    return group(status, text_view("Quiet", semantic_id="saved.quiet"), label="Page")


def _mixed_view(_model: object) -> View[object]:
    return node(Role.CHECKBOX, label="All", semantic_id="all", state=State(checked=Checked.MIXED))


async def test_a_mixed_checkbox_checks_neither_checked_nor_unchecked() -> None:
    """A half-checked box has neither state: `unchecked` said yes to it, as "off"."""
    app: App[object, object] = App(init=lambda: None, update=lambda m, _msg: m, view=_mixed_view)
    surface = RuntimeSurface(app, "tests:mixed")
    await surface.open({})
    try:
        ref = _by_id(await surface.snapshot(), "all").ref
        answers = [await surface.check({"kind": k}, "ref", ref) for k in ("checked", "unchecked")]
    finally:
        await surface.close()
    assert [(a.ok, a.actual) for a in answers] == [(False, "mixed"), (False, "mixed")]


async def test_act_args_given_as_an_instance_are_checked(counter: RuntimeSurface) -> None:
    """A negative wait given as ActArgs, not a dict, was a bare ValueError from trio."""
    with pytest.raises(DataError, match="must be at least 0"):
        await counter.act("sleep", None, ActArgs(ms=-1))


async def test_live_regions_say_that_they_are_and_what_inside_them_is_not(
    gallery: RuntimeSurface,
) -> None:
    assert _by_id(await gallery.snapshot(), "gallery.status").native["live"] == "polite"
    app: App[object, object] = App(init=lambda: None, update=lambda m, _msg: m, view=_saved_view)
    surface = RuntimeSurface(app, "tests:saved")
    await surface.open({})
    try:
        snapshot = await surface.snapshot()
    finally:
        await surface.close()
    status = _by_id(snapshot, "saved.status")
    assert (status.native["live"], status.native["atomic"]) == ("assertive", "true")
    # The surface's reader takes a live region's setting for what is inside it unless told.
    assert _by_id(snapshot, "saved.words").native["live"] == "off"
    assert "live" not in _by_id(snapshot, "saved.quiet").native
    assert "atomic" not in _by_id(snapshot, "saved.quiet").native


async def test_password_typing_refuses_to_append_to_a_masked_value(gallery: RuntimeSurface) -> None:
    ref = _by_id(await gallery.snapshot(), "gallery.password").ref
    await gallery.act("type", ref, {"text": "secret12"})
    snapshot = await gallery.snapshot()
    assert _by_id(snapshot, "gallery.password").value == "•" * 8
    assert _by_id(snapshot, "gallery.password").native["password"] == "true"
    with pytest.raises(ActionabilityError):
        await gallery.act("type", ref, {"text": "3"})


async def test_scroll_into_view_moves_the_scroll_view(gallery: RuntimeSurface) -> None:
    snapshot = await gallery.snapshot()
    last = _by_id(snapshot, "gallery.scroll.item.12")
    view = _by_id(snapshot, "gallery.scroll")
    assert last.box is not None
    assert view.box is not None
    assert last.box[1] + last.box[3] > view.box[1] + view.box[3]
    await gallery.act("scrollIntoView", last.ref)
    after = await gallery.snapshot()
    moved = _by_id(after, "gallery.scroll.item.12").box
    assert moved is not None
    assert moved[1] + moved[3] <= view.box[1] + view.box[3]


async def test_read_and_check(counter: RuntimeSurface) -> None:
    snapshot = await counter.snapshot()
    count = _by_id(snapshot, "counter.value").ref
    assert await counter.read("text", count) == "0"
    assert await counter.read("value", count) == "0"
    assert await counter.read("attribute", count, "semantic_id") == "counter.value"
    await counter.act("read", count)
    assert await counter.read("result") == "0"
    decrement = _by_id(snapshot, "counter.decrement").ref
    assert (await counter.check({"kind": "disabled"}, "ref", decrement)).ok
    assert not (await counter.check({"kind": "enabled"}, "ref", decrement)).ok
    assert (await counter.check({"kind": "hidden"}, "ref", "r999")).ok
    assert not (await counter.check({"kind": "visible"}, "dialog")).ok
    with pytest.raises(CheckError):
        await counter.check({"kind": "urlMatches", "pattern": "x"}, "page")
    with pytest.raises(CheckError):
        await counter.check({"kind": "enabled"}, "ref", "r999")
    with pytest.raises(CheckError, match="invalid pattern"):
        await counter.check({"kind": "titleMatches", "pattern": "("}, "page")


async def test_screenshot_renders_the_display_list_and_blanks_masks(
    counter: RuntimeSurface, tmp_path: Path
) -> None:
    snapshot = await counter.snapshot()
    path = tmp_path / "shot.png"
    increment = _by_id(snapshot, "counter.increment")
    await counter.screenshot(str(path))
    await counter.screenshot(str(tmp_path / "masked.png"), [increment.ref])
    assert increment.box is not None
    x, y, w, h = (int(v) for v in increment.box)
    with Image.open(path) as plain, Image.open(tmp_path / "masked.png") as masked:
        assert plain.size == masked.size
        text_region = plain.convert("RGB").crop((x, y, x + w - 1, y + h - 1))
        blank_region = masked.convert("RGB").crop((x, y, x + w - 1, y + h - 1))
        assert len(text_region.getcolors(maxcolors=1 << 16) or []) > 1
        assert blank_region.getcolors() == [((w - 1) * (h - 1), (0, 0, 0))]


async def test_restore_replays_to_the_recorded_generation(counter: RuntimeSurface) -> None:
    increment = _by_id(await counter.snapshot(), "counter.increment").ref
    await counter.act("click", increment)
    saved = await counter.state()
    before = await counter.snapshot()
    await counter.act("click", increment)
    await counter.act("click", increment)
    await counter.restore(saved)
    after = await counter.snapshot()
    assert after.text == before.text
    assert saved.extras["generation"] == "2"
    await counter.act("click", increment)
    assert _by_id(await counter.snapshot(), "counter.value").value == "2"


async def test_a_state_restores_in_another_session_through_its_log(todo: RuntimeSurface) -> None:
    field = _by_id(await todo.snapshot(), "todo.input").ref
    await todo.act("type", field, {"text": "milk"})
    await todo.act("press", field, {"key": "Enter"})
    await todo.act("click", _by_id(await todo.snapshot(), "todo.save").ref)
    await todo.act("waitFor")
    saved = await todo.state()
    other = await _open("todo")
    try:
        await other.restore(saved)
        assert (await other.snapshot()).text == (await todo.snapshot()).text
    finally:
        await other.close()
    fresh = create_surface({"adapter": "runtime", "app": "semledger.examples.todo:app"})
    await fresh.open({"storage_state": {"extras": dict(saved.extras)}})
    try:
        assert (await fresh.snapshot()).text == (await todo.snapshot()).text
    finally:
        await fresh.close()


async def test_restore_refuses_a_foreign_state(counter: RuntimeSurface) -> None:
    with pytest.raises(DataError):
        await counter.restore({"extras": {"generation": "x"}})
    with pytest.raises(SessionError):
        await counter.restore(
            {"extras": {"generation": "1", "inputs": "0", "hash": "0", "session": "other"}}
        )


async def test_close_is_safe_twice_and_ends_the_session() -> None:
    surface = await _open("counter")
    await surface.close()
    await surface.close()
    with pytest.raises(SessionError):
        await surface.snapshot()


async def test_interactive_only_and_root_and_max_nodes(todo: RuntimeSurface) -> None:
    full = await todo.snapshot()
    interactive = await todo.snapshot(interactive_only=True)
    assert snapshot_problems(interactive) == []
    assert {n.native.get("automationId") for n in interactive.nodes[1:]} == {
        "todo.input", "todo.clear_completed", "todo.save",
    }  # fmt: skip
    limited = await todo.snapshot(max_nodes=3)
    assert [n.ref for n in limited.nodes] == [n.ref for n in full.nodes[:3]]
    items = _by_id(full, "todo.items").ref
    assert (await todo.snapshot(root=items)).nodes[0].ref == items
    with pytest.raises(LocateError):
        await todo.snapshot(root="r999")


async def test_wait_for_times_out_with_a_typed_error(counter: RuntimeSurface) -> None:
    from semledger.adapters import SurfaceTimeoutError

    with pytest.raises(SurfaceTimeoutError):
        await counter.act("waitFor", "r999", {"wait_state": "visible", "timeout_ms": 20})
    with trio.fail_after(5):
        await counter.act("waitFor", "r999", {"wait_state": "detached"})
