"""The MCP bridge: read_semantics and perform_action over any AgentSurface."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from semledger.adapters import AgentSurface, create_surface
from semledger.eventlog import SqliteRecorder, SurfaceCalled
from semledger.hosts import SurfaceAgentHost, aria_to_runtime_role
from semledger.runtime import (
    ActionKind,
    App,
    AppRuntime,
    ByNodeId,
    BySemanticId,
    Collection,
    Delta,
    ErrorCode,
    Exact,
    Full,
    Latest,
    Numeric,
    Receipt,
    Rejection,
    Relation,
    Role,
    SemanticId,
    SemanticsAction,
    SemanticsNode,
    SetNumericValue,
    SetText,
    SimpleAction,
    State,
    Unchanged,
    View,
    column,
    node,
)
from semledger.runtime import Checked as CheckedState

ROOT = Path(__file__).resolve().parent.parent


async def _surface(fixture: str) -> AgentSurface:
    surface = create_surface({"adapter": "runtime", "app": f"semledger.examples.{fixture}:app"})
    await surface.open({})
    return surface


@pytest.fixture
async def todo() -> AsyncIterator[SurfaceAgentHost]:
    surface = await _surface("todo")
    yield SurfaceAgentHost(surface)
    await surface.close()


async def _full(host: SurfaceAgentHost) -> Full:
    read = await host.read_semantics(None)
    assert isinstance(read, Full)
    return read


def _sid(full: Full, semantic_id: str) -> int:
    return next(n.node_id for n in full.nodes if n.semantic_id == semantic_id)


async def test_full_then_unchanged_then_delta(todo: SurfaceAgentHost) -> None:
    full = await _full(todo)
    assert full.generation == 1
    field = next(n for n in full.nodes if n.semantic_id == "todo.input")
    assert field.role is Role.TEXT_FIELD
    assert ActionKind.SET_TEXT in field.actions
    assert await todo.read_semantics(1) == Unchanged(1)
    receipt = await todo.perform_action(
        BySemanticId("todo.input"), SetText("milk"), Exact(full.generation)
    )
    assert isinstance(receipt, Receipt)
    assert receipt.after == receipt.before + 1
    delta = await todo.read_semantics(1)
    assert isinstance(delta, Delta)
    assert [n.value for n in delta.upserted] == ["milk"]
    submitted = await todo.perform_action(
        ByNodeId(field.node_id), SimpleAction(ActionKind.SUBMIT), Latest()
    )
    assert isinstance(submitted, Receipt)
    after = await _full(todo)
    assert [n.label for n in after.nodes if n.role is Role.LIST_ITEM] == ["milk"]
    assert _sid(after, "todo.input") == field.node_id


async def test_rejections_carry_the_error_codes(todo: SurfaceAgentHost) -> None:
    full = await _full(todo)
    stale = await todo.perform_action(
        BySemanticId("todo.save"), SimpleAction(ActionKind.ACTIVATE), Exact(full.generation + 5)
    )
    assert isinstance(stale, Rejection)
    assert stale.code is ErrorCode.STALE_GENERATION
    missing = await todo.perform_action(ByNodeId(999), SimpleAction(ActionKind.ACTIVATE), Latest())
    assert isinstance(missing, Rejection)
    assert missing.code is ErrorCode.TARGET_NOT_FOUND
    disabled = await todo.perform_action(
        BySemanticId("todo.clear_completed"), SimpleAction(ActionKind.ACTIVATE), Latest()
    )
    assert isinstance(disabled, Rejection)
    assert disabled.code is ErrorCode.TARGET_DISABLED
    unavailable = await todo.perform_action(
        BySemanticId("todo.save"), SimpleAction(ActionKind.INCREMENT), Latest()
    )
    assert isinstance(unavailable, Rejection)
    assert unavailable.code is ErrorCode.ACTION_UNAVAILABLE
    rejected = await todo.perform_action(
        BySemanticId("todo.input"), SimpleAction(ActionKind.SUBMIT), Latest()
    )
    assert isinstance(rejected, Rejection)
    assert rejected.code is ErrorCode.HANDLER_REJECTED
    assert (await todo.read_semantics(None)) == (await todo.read_semantics(None))
    assert todo.generation == full.generation


async def test_duplicate_semantic_ids_are_ambiguous_and_reported() -> None:
    surface = await _surface("gallery")
    host = SurfaceAgentHost(surface)
    try:
        full = await _full(host)
        assert any(getattr(i, "semantic_id", None) == "gallery.duplicate" for i in full.issues)
        ambiguous = await host.perform_action(
            BySemanticId("gallery.duplicate"), SimpleAction(ActionKind.ACTIVATE), Latest()
        )
        assert isinstance(ambiguous, Rejection)
        assert ambiguous.code is ErrorCode.TARGET_AMBIGUOUS
        expanded = await host.perform_action(
            BySemanticId("gallery.fruit"), SimpleAction(ActionKind.EXPAND), Latest()
        )
        assert isinstance(expanded, Receipt)
        options = [n for n in (await _full(host)).nodes if n.role is Role.OPTION]
        assert [n.label for n in options] == ["Apple", "Banana", "Cherry"]
    finally:
        await surface.close()


async def test_an_app_served_as_a_surface_announces_its_status_as_the_app_does() -> None:
    surface = await _surface("gallery")
    host = SurfaceAgentHost(surface)
    try:
        status = _sid(await _full(host), "gallery.status")
        said = []
        for semantic_id in ("gallery.help", "gallery.dialog.open", "gallery.dialog.confirm"):
            before = host.generation
            acted = await host.perform_action(
                BySemanticId(SemanticId(semantic_id)), SimpleAction(ActionKind.ACTIVATE), Latest()
            )
            assert isinstance(acted, Receipt), acted
            delta = await host.read_semantics(before)
            assert isinstance(delta, Delta)
            said.extend((a.node_id, a.live.value, a.text) for a in delta.announcements)
        assert said == [
            (status, "polite", "Help: every widget explains itself"),
            (status, "polite", "Changes discarded"),
        ]
    finally:
        await surface.close()


async def test_a_closed_host_answers_host_closed(todo: SurfaceAgentHost) -> None:
    todo.close()
    read = await todo.read_semantics(None)
    assert isinstance(read, Rejection)
    assert read.code is ErrorCode.HOST_CLOSED


def test_aria_roles_map_back_best_effort() -> None:
    assert aria_to_runtime_role("textbox") is Role.TEXT_FIELD
    assert aria_to_runtime_role("listitem") is Role.LIST_ITEM
    assert aria_to_runtime_role("generic") is Role.GROUP
    assert aria_to_runtime_role("marquee") is Role.GROUP
    assert aria_to_runtime_role("group", {"runtime_role": "scroll_view"}) is Role.SCROLL_VIEW


def test_serve_adapter_runtime_answers_mcp_over_stdio_and_logs_the_session(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.db"
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "t", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "read_semantics", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "perform_action", "arguments": {
             "target": {"kind": "semantic_id", "id": "counter.increment"},
             "action": {"kind": "activate"},
             "precondition": {"kind": "exact", "generation": "1"}}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
         "params": {"name": "read_semantics", "arguments": {"since": "1"}}},
    ]
    stdin = "".join(json.dumps(line) + "\n" for line in lines)
    result = subprocess.run(
        [sys.executable, "-m", "semledger", "serve", "--adapter", "runtime", "--app",
         "semledger.examples.counter:app", "--db", str(db), "--session", "bridge"],
        cwd=ROOT, input=stdin, capture_output=True, text=True, check=False, timeout=60,
    )
    assert result.returncode == 0, result.stderr
    replies = {r["id"]: r for r in map(json.loads, result.stdout.splitlines())}
    assert replies[1]["result"]["serverInfo"]["name"] == "semledger"
    full = replies[2]["result"]["structuredContent"]["value"]
    assert full["kind"] == "full"
    assert full["generation"] == "1"
    receipt = replies[3]["result"]["structuredContent"]
    assert receipt == {"ok": True, "value": {"before": "1", "after": "2", "pending_work": False}}
    delta = replies[4]["result"]["structuredContent"]["value"]
    assert delta["kind"] == "delta"
    assert {n["semantic_id"]: n["value"] for n in delta["upserted"]}["counter.value"] == "1"
    recorder = SqliteRecorder(db)
    try:
        summary = recorder.sessions()[0]
        assert (summary.name, summary.surface, summary.ended) == ("bridge", "runtime", True)
        assert summary.end_reason == "end of input"  # why it ended, as a runtime session says
        calls = [e for _r, e in recorder.events("bridge") if isinstance(e, SurfaceCalled)]
        assert [c.arguments["action"] for c in calls if c.method == "act"] == ["click"]
    finally:
        recorder.close()


def test_serve_adapter_bad_usage_exits_two(tmp_path: Path) -> None:
    def run(*args: str) -> int:
        return subprocess.run(
            [sys.executable, "-m", "semledger", "serve", *args, "--db", str(tmp_path / "x.db")],
            cwd=ROOT, input="", capture_output=True, text=True, check=False, timeout=60,
        ).returncode

    assert run("--adapter", "nobody") == 2
    assert run("--adapter", "runtime") == 2
    assert run("--adapter", "runtime", "--app", "semledger.examples.counter:nothing") == 2


async def test_a_surface_that_cannot_be_read_answers_as_both_output_schemas_say(
    todo: SurfaceAgentHost,
) -> None:
    """Its ``handler_rejected`` carries ``failure`` (no target or action: none was taken),
    which a client validating tool results against ``outputSchema`` must accept."""
    import jsonschema

    from semledger.adapters import ScriptError
    from semledger.hosts import Router, handle

    surface: Any = todo.surface

    async def snapshot(**options: Any) -> Any:
        raise ScriptError("the page script threw")

    surface.snapshot = snapshot
    router = Router()
    schemas = {tool.name: tool.output_schema for tool in router.tools}
    action = {
        "target": {"kind": "semantic_id", "id": "todo.save"},
        "action": {"kind": "activate"},
        "precondition": {"kind": "latest"},
    }
    for number, (tool, arguments) in enumerate(
        [("read_semantics", {}), ("perform_action", action)], start=1
    ):
        call = {"name": tool, "arguments": arguments}
        line = json.dumps({"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": call})
        (message,) = await handle(router, todo, line)
        envelope = message["result"]["structuredContent"]
        assert envelope["error"]["details"] == {"failure": "script"}
        jsonschema.Draft202012Validator(schemas[tool]).validate(envelope)


async def test_a_surface_that_cannot_be_read_is_a_rejection_and_an_action_still_a_receipt(
    todo: SurfaceAgentHost,
) -> None:
    """Not -32603: a failed snapshot is the surface's failure, told to the agent as a tool
    result. Before an action nothing was done; after one, it was done but not yet seen."""
    from semledger.adapters import ScriptError

    full = await _full(todo)
    surface: Any = todo.surface
    taken = surface.snapshot
    fails = 0

    async def snapshot(**options: Any) -> Any:
        nonlocal fails
        if fails:
            fails -= 1
            raise ScriptError("the page script threw")
        return await taken(**options)

    surface.snapshot = snapshot
    fails = 1
    read = await todo.read_semantics(None)
    assert isinstance(read, Rejection)
    assert (read.code, read.details) == (ErrorCode.HANDLER_REJECTED, {"failure": "script"})
    assert read.message == "the surface could not be read: the page script threw"
    fails = 1
    save = BySemanticId(SemanticId("todo.save"))
    refused = await todo.perform_action(save, SimpleAction(ActionKind.ACTIVATE), Latest())
    assert isinstance(refused, Rejection)
    assert refused.code is ErrorCode.HANDLER_REJECTED
    assert todo.generation == full.generation  # nothing was done, nothing committed

    async def fail_after_acting(**options: Any) -> Any:
        nonlocal fails
        fails = 1
        surface.snapshot = snapshot
        return await taken(**options)

    surface.snapshot = fail_after_acting
    done = await todo.perform_action(save, SimpleAction(ActionKind.ACTIVATE), Latest())
    assert done == Receipt(full.generation, full.generation, True)  # read again to see it
    assert (await _full(todo)).generation > full.generation


async def test_a_malformed_snapshot_is_a_surface_that_cannot_be_read_not_one_short_of_nodes(
    todo: SurfaceAgentHost,
) -> None:
    """A snapshot an adapter made without build_snapshot, whose second node is at depth 0
    (a forest), was shown to the agent as its first tree alone: every other control vanished
    without a word. It is a DataError naming the node, as build_snapshot's would be."""
    import attrs

    from semledger.adapters import Snapshot, render_snapshot, structural_hash, tokens_estimate

    surface: Any = todo.surface
    taken = surface.snapshot

    async def forest(**options: Any) -> Any:
        real = await taken(**options)
        nodes = [real.nodes[0], attrs.evolve(real.nodes[1], depth=0, parent=None)]
        text = render_snapshot(nodes)
        return Snapshot(real.ref, tuple(nodes), text, tokens_estimate(text), structural_hash(nodes))

    surface.snapshot = forest
    read = await todo.read_semantics(None)
    assert isinstance(read, Rejection)
    assert (read.code, read.details) == (ErrorCode.HANDLER_REJECTED, {"failure": "data"})
    assert read.message.startswith("the surface could not be read: nodes[1].depth: node 'r")
    assert "is at depth 0, beside the root: a snapshot is one tree" in read.message


async def test_a_surface_session_refuses_arguments_of_another_type_as_an_app_session_does(
    todo: SurfaceAgentHost,
) -> None:
    save = BySemanticId(SemanticId("todo.save"))
    with pytest.raises(TypeError, match=r"^precondition: expected Latest or Exact, got int 1"):
        await todo.perform_action(save, SimpleAction(ActionKind.ACTIVATE), 1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^since: expected an int or None"):
        await todo.read_semantics("1")  # type: ignore[arg-type]


async def test_a_read_builds_again_only_the_nodes_of_elements_that_changed(
    todo: SurfaceAgentHost, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 5,000-element page cost 0.7 s of Python a read, all of it building every node
    again; a node is a function of its element and its place, so an unchanged one is kept."""
    import semledger.hosts._surface_host as bridge

    real = bridge._node
    built: list[str] = []

    def counting(item: Any, *rest: Any, **named: Any) -> Any:
        built.append(item.ref)
        return real(item, *rest, **named)

    monkeypatch.setattr(bridge, "_node", counting)
    first = await _full(todo)
    everything = len(built)
    assert everything == len(first.nodes)
    built.clear()
    assert (await _full(todo)).nodes == first.nodes
    assert built == []
    typed = await todo.perform_action(
        BySemanticId(SemanticId("todo.input")), SetText("milk"), Latest()
    )
    assert isinstance(typed, Receipt)
    assert 0 < len(built) < everything


class _Scripted:
    """A surface showing, under its document, the buttons named in `shown`."""

    def __init__(self) -> None:
        self.shown: list[str] = []

    async def snapshot(self, **options: Any) -> Any:
        from semledger.adapters import SnapshotNode, build_snapshot

        buttons = [
            SnapshotNode(ref=ref, role="button", name=ref, depth=1, parent="doc")
            for ref in self.shown
        ]
        return build_snapshot("doc", [SnapshotNode(ref="doc", role="document", depth=0), *buttons])


async def test_an_element_gone_longer_than_the_bridge_remembers_comes_back_with_a_new_id(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The bridge remembers the ids of the last REMEMBERED_REFS elements to leave the page
    (an element shown again keeps its id), not of every element a page ever showed."""
    import semledger.hosts._surface_host as bridge

    monkeypatch.setattr(bridge, "REMEMBERED_REFS", 2)
    surface = _Scripted()
    host = SurfaceAgentHost(surface)  # type: ignore[arg-type]

    async def ids() -> dict[str | None, int]:
        return {n.label: n.node_id for n in (await _full(host)).nodes if n.role is Role.BUTTON}

    surface.shown = ["a", "b", "c"]
    first = await ids()
    for _ in range(3):  # a leaves, then b, then c: a is the one forgotten
        surface.shown = surface.shown[1:]
        await ids()
    surface.shown = ["a", "b", "c"]
    back = await ids()
    assert (back["b"], back["c"]) == (first["b"], first["c"])
    assert back["a"] > max(first.values())


def _stated_view(_model: int) -> View[object]:
    """A node of each state and property a surface can carry only in ``native``."""
    return column(
        node(Role.HEADING, label="Title", level=2, semantic_id="h"),
        node(Role.BUTTON, label="Bold", semantic_id="bold", state=State(pressed=True, busy=True)),
        node(Role.TEXT_FIELD, label="Email", value="x", semantic_id="email",
             state=State(invalid=True, multiline=True, required=True, read_only=True),
             relations={Relation.DESCRIBED_BY: ["hint"]}),
        node(Role.TEXT, label="Hint", semantic_id="hint"),
        node(Role.CHECKBOX, label="All", semantic_id="all",
             state=State(checked=CheckedState.MIXED, disabled=True)),
        node(Role.SLIDER, label="Volume", semantic_id="volume",
             numeric=Numeric(current=5.0, min=0.0, max=10.0, step=0.5, value_text="half")),
        node(Role.LINK, label="Docs", url="https://example.org/docs", semantic_id="docs"),
        node(Role.TREE_ITEM, label="Src", level=3, semantic_id="src",
             state=State(expanded=True, selected=True),
             collection=Collection(set_size=4, set_position=2)),
        node(Role.DIALOG,
             node(Role.BUTTON, label="Close", semantic_id="close"),
             label="Dlg", semantic_id="dlg", state=State(modal=True)),
    )


_STATED = App(init=lambda: 0, update=lambda model, _msg: model, view=_stated_view, name="stated")
_STATED_OPEN = App(
    init=lambda: 0,
    update=lambda model, _msg: model,
    view=lambda model: column(*_stated_view(model).children[:-1]),  # type: ignore[index]
    name="stated_open",
)


def _carried(nodes: tuple[SemanticsNode, ...]) -> list[tuple[object, ...]]:
    """What of each node a surface can say: all but its actions, the value of a range
    (which a surface reports as its value text) and a frame's origin past its first decimal
    (the bridge rounds it)."""
    index = {n.node_id: i for i, n in enumerate(nodes)}
    return [
        (n.semantic_id, n.role, n.label, n.description, n.level, n.url, n.state, n.numeric,
         n.collection, n.live, n.atomic,
         (round(n.frame.origin.x, 1), round(n.frame.origin.y, 1), n.frame.size),
         tuple((kind, tuple(index[t] for t in targets)) for kind, targets in n.relations))
        for n in nodes
    ]


async def _served_and_direct(
    app: App[int, object] | str,
) -> tuple[tuple[SemanticsNode, ...], tuple[SemanticsNode, ...]]:
    """The nodes of `app`'s first commit served through the runtime adapter, and run
    directly."""
    from semledger.actors import load_app

    loaded = app if isinstance(app, App) else load_app(app)
    direct = AppRuntime(loaded, width=800.0)
    surface = create_surface({"adapter": "runtime", "app": app})
    await surface.open({})
    try:
        served = await _full(SurfaceAgentHost(surface))
        return served.nodes, tuple(direct.snapshot.ordered())
    finally:
        await surface.close()
        direct.close()


@pytest.mark.parametrize(
    "app",
    [_STATED, _STATED_OPEN, "semledger.examples.counter:app", "semledger.examples.todo:app",
     "semledger.examples.gallery:app"],
    ids=["stated", "stated_open", "counter", "todo", "gallery"],
)
async def test_an_app_served_as_a_surface_keeps_every_state_its_nodes_have_served_directly(
    app: App[int, object] | str,
) -> None:
    """Through the runtime adapter a heading lost its level, a pressed button, an invalid
    multiline field and a modal dialog their states, and a mixed checkbox read unchecked."""
    served, direct = await _served_and_direct(app)
    assert _carried(served) == _carried(direct)


@pytest.mark.parametrize(
    "app",
    [_STATED, "semledger.examples.counter:app", "semledger.examples.todo:app",
     "semledger.examples.gallery:app"],
    ids=["stated", "counter", "todo", "gallery"],
)
async def test_an_app_served_as_a_surface_offers_the_actions_its_nodes_declare(
    app: App[int, object] | str,
) -> None:
    """The bridge guessed a runtime node's actions from its role: the counter's step field
    offered submit, which the app then refused as action_unavailable, and a disabled button
    offered focus. It offers what the app declares, but set_selection, which no surface
    call can carry."""
    served, direct = await _served_and_direct(app)
    assert [n.actions for n in served] == [
        tuple(k for k in n.actions if k is not ActionKind.SET_SELECTION) for n in direct
    ]


async def test_a_runtime_slider_and_combo_box_take_the_actions_they_offer() -> None:
    """set_numeric_value typed the number onto the slider's value as text, and collapse
    pressed Escape, which the runtime adapter sent to the root as dismiss."""
    surface = await _surface("gallery")
    host = SurfaceAgentHost(surface)
    try:

        async def done(semantic_id: str, action: Any) -> SemanticsNode:
            receipt = await host.perform_action(BySemanticId(semantic_id), action, Latest())
            assert isinstance(receipt, Receipt), receipt
            return next(n for n in (await _full(host)).nodes if n.semantic_id == semantic_id)

        volume = await done("gallery.volume", SetNumericValue(30.0))
        assert volume.numeric is not None
        assert volume.numeric.current == 30.0
        fruit = await done("gallery.fruit", SimpleAction(ActionKind.EXPAND))
        assert fruit.state.expanded is True
        fruit = await done("gallery.fruit", SimpleAction(ActionKind.COLLAPSE))
        assert fruit.state.expanded is False
    finally:
        await surface.close()


class _Modal:
    """A surface whose document holds the button "behind" and, while `dialog` names one, a
    modal dialog of that ref holding an OK button, the button behind it aria-hidden (as a
    React modal leaves the page); with `alert`, a native alert is open."""

    def __init__(self) -> None:
        self.dialog: str | None = None
        self.alert = False

    async def snapshot(self, **options: Any) -> Any:
        from semledger.adapters import DialogError, SnapshotNode, build_snapshot

        if self.alert:
            raise DialogError("an alert is open", details={"dialog": "alert", "message": "Hi"})
        nodes = [
            SnapshotNode(ref="doc", role="document", depth=0),
            SnapshotNode(ref="behind", role="button", name="Behind", depth=1, parent="doc",
                         native={"automationId": "behind"},
                         states=("hidden",) if self.dialog is not None else ()),
        ]
        if self.dialog is not None:
            nodes += [
                SnapshotNode(ref=self.dialog, role="dialog", name="Ask", depth=1, parent="doc",
                             native={"modal": "true"}),
                SnapshotNode(ref=f"{self.dialog}.ok", role="button", name="OK", depth=2,
                             parent=self.dialog),
            ]
        return build_snapshot("doc", nodes)


async def test_only_a_node_behind_a_dialog_is_said_to_wait_for_it_to_close() -> None:
    """A modal dialog answered and opened again is a new node: the old one's id was
    answered as if it could be targeted once the new one closed, and so was an id no node
    ever had, behind a modal or a native alert alike."""
    surface = _Modal()
    host = SurfaceAgentHost(surface)  # type: ignore[arg-type]
    surface.dialog = "first"
    old = next(n.node_id for n in (await _full(host)).nodes if n.role is Role.DIALOG)
    surface.dialog = None
    behind = next(n.node_id for n in (await _full(host)).nodes if n.label == "Behind")
    surface.dialog = "second"
    new = next(n.node_id for n in (await _full(host)).nodes if n.role is Role.DIALOG)

    async def refused(target: Any) -> str:
        rejection = await host.perform_action(target, SimpleAction(ActionKind.FOCUS), Latest())
        assert isinstance(rejection, Rejection)
        assert rejection.code is ErrorCode.TARGET_NOT_FOUND
        return rejection.message

    waiting = (
        f"no node has that id in the tree: a modal dialog (node {new}) is open, and only what"
        " it holds can be targeted until it closes"
    )
    assert await refused(ByNodeId(behind)) == waiting
    assert await refused(BySemanticId(SemanticId("behind"))) == waiting.replace(
        "that id", "that semantic id"
    )
    assert await refused(ByNodeId(old)) == (
        f"no node has that id now: if node {old} was read before, it was removed or hidden"
        " since (node ids are never reused); read again"
    )
    assert await refused(ByNodeId(999)) == "no node has that id"
    assert await refused(BySemanticId(SemanticId("gone"))) == "no node has that semantic id"
    surface.alert = True
    alert = next(n.node_id for n in (await _full(host)).nodes if n.role is Role.DIALOG)
    assert await refused(ByNodeId(behind)) == (
        f"the page is behind an open alert dialog ('Hi'); answer it first: submit or dismiss"
        f" node {alert}"
    )
    assert await refused(ByNodeId(999)) == "no node has that id"


class _Superscripts:
    kind = "desktop"

    async def snapshot(self, **options: Any) -> Any:
        from semledger.adapters import SnapshotNode, build_snapshot

        return build_snapshot("r", [
            SnapshotNode(ref="r", role="document", depth=0),
            SnapshotNode(ref="h", role="heading", name="Title", depth=1, parent="r",
                         native={"level": "²"}),
            SnapshotNode(ref="i", role="listitem", name="One", depth=1, parent="r",
                         native={"posinset": "³", "setsize": "4", "rowindex": "١"}),
        ])


async def test_a_level_or_set_position_in_digits_other_than_ascii_is_not_known() -> None:
    """str.isdigit() holds for "²" and "١" that int() refuses (or reads as another number):
    a heading level of "²" raised ValueError out of the bridge instead of being read."""
    full = await _full(SurfaceAgentHost(_Superscripts()))  # type: ignore[arg-type]
    heading = next(n for n in full.nodes if n.label == "Title")
    item = next(n for n in full.nodes if n.label == "One")
    assert heading.level is None
    assert item.collection == Collection(set_size=4)


def _named_view(model: str) -> View:
    from semledger.runtime import Proposal, Reject

    def set_name(action: Any) -> Any:
        if not action.value.strip() or action.value == "bad":
            return Reject("a name cannot be empty" if not action.value.strip() else "not that")
        return Proposal((action.value,))

    return column(
        node(Role.TEXT_FIELD, label="Name", value=model, semantic_id="name", editable=True,
             handlers={ActionKind.SET_TEXT: set_name}),
    )


_NAMED = App(init=lambda: "Ada", update=lambda _model, msg: msg, view=_named_view, name="named")


async def test_set_text_on_an_app_served_as_a_surface_is_one_set_text_the_app_judges() -> None:
    """The runtime adapter made set_text two app actions, SetText("") then the text: a
    field refusing an empty value refused every set_text, and a text refused at the second
    step left the field emptied while the agent was told handler_rejected."""
    surface = create_surface({"adapter": "runtime", "app": _NAMED})
    await surface.open({})
    host = SurfaceAgentHost(surface)
    name = BySemanticId(SemanticId("name"))
    try:
        runtime: AppRuntime[str, str] = surface.runtime  # type: ignore[attr-defined]
        before = runtime.generation
        done = await host.perform_action(name, SetText("Grace"), Latest())
        assert isinstance(done, Receipt), done
        assert runtime.generation == before + 1
        after = await _full(host)
        assert next(n.value for n in after.nodes if n.semantic_id == "name") == "Grace"
        refused = await host.perform_action(name, SetText("bad"), Latest())
        assert isinstance(refused, Rejection)
        assert (refused.code, refused.message) == (ErrorCode.HANDLER_REJECTED, "not that")
        assert runtime.generation == before + 1
        kept = await _full(host)
        assert next(n.value for n in kept.nodes if n.semantic_id == "name") == "Grace"
    finally:
        await surface.close()


@pytest.mark.parametrize(
    ("target", "action"),
    [
        ("todo.save", SimpleAction(ActionKind.ACTIVATE)),
        # set_text's first step over the runtime adapter is a clear that empties nothing.
        ("todo.input", SetText("milk")),
    ],
    ids=["activate", "set_text"],
)
async def test_an_action_the_app_changed_under_between_read_and_act_is_judged_on_a_new_read(
    todo: SurfaceAgentHost, target: str, action: SemanticsAction, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A save's effect finishing between the bridge's read and its act (during the log
    writes of a served session) had the runtime adapter refuse the act as stale, which the
    bridge answered target_not_found, quoting the runtime's generations, for a target on
    screen. Nothing was done: Latest is done on a new read, Exact is stale_generation in the
    bridge's generations."""
    import trio

    import semledger.examples.todo as example

    monkeypatch.setattr(example, "SAVE_SECONDS", 0.2)  # well after the bridge's read
    runtime = todo.surface._live()  # type: ignore[attr-defined]
    save = BySemanticId(SemanticId("todo.save"))
    activate = SimpleAction(ActionKind.ACTIVATE)
    first = await todo.perform_action(save, activate, Latest())
    assert isinstance(first, Receipt)
    judged: list[int] = []

    async def slow_log_write(tree: Any) -> None:
        """The log write the bridge awaits before acting, lasting until the save is done."""
        judged.append(tree.generation)
        assert runtime.pending_work
        with trio.fail_after(10):
            while runtime.pending_work:
                await trio.sleep(0.005)

    aimed = BySemanticId(SemanticId(target))
    done = await todo.perform_action(aimed, action, Latest(), judged_on=slow_log_write)
    assert isinstance(done, Receipt), done
    assert judged == [first.after]
    assert done.before > first.after
    assert isinstance(await todo.perform_action(save, activate, Latest()), Receipt)
    read = (await _full(todo)).generation
    refused = await todo.perform_action(aimed, action, Exact(read), judged_on=slow_log_write)
    assert isinstance(refused, Rejection)
    assert refused.code is ErrorCode.STALE_GENERATION
    assert judged[-1] == read < todo.generation
    assert refused.details == {"expected": str(read), "current": str(todo.generation)}


async def test_an_app_that_keeps_changing_under_an_action_is_read_again_a_bounded_number_of_times(
    todo: SurfaceAgentHost,
) -> None:
    """A request is judged at most three times, then answered as what it is: never
    target_not_found for a target that is there."""
    from semledger.adapters import LocateError

    surface: Any = todo.surface
    tries = 0

    async def stale(*args: Any, **kwargs: Any) -> Any:
        nonlocal tries
        tries += 1
        raise LocateError(
            "expected generation 7, current is 8",
            details={"code": "stale_generation", "expected": "7", "current": "8",
                     "reason": "stale"},
        )

    surface.act = stale
    save = BySemanticId(SemanticId("todo.save"))
    refused = await todo.perform_action(save, SimpleAction(ActionKind.ACTIVATE), Latest())
    assert isinstance(refused, Rejection)
    assert (refused.code, refused.message) == (
        ErrorCode.HANDLER_REJECTED,
        "the application changed on its own as the action was being done: read again",
    )
    assert tries == 3
