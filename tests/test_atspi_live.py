"""The atspi adapter against the real thing: Xvfb, a private session bus, the AT-SPI
registry and GTK 3 applications (our fixture app and gtk3-widget-factory).

Nothing is skipped: a missing binary fails with the package to install (scripts/test.sh
installs them all)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import trio

from semledger.adapters import (
    Launch,
    SessionError,
    SessionInit,
    SurfaceGoneError,
    SurfaceTimeoutError,
    create_surface,
    snapshot_problems,
)
from semledger.adapters._atspi_desktop import (
    GTK_FIXTURE,
    SYSTEM_PYTHON,
    WIDGET_FACTORY,
    PrivateDesktop,
    require,
    require_gtk_python,
    start_session_bus,
)
from semledger.adapters._conformance import run_conformance
from semledger.hosts import SurfaceAgentHost
from semledger.runtime import (
    ActionKind,
    ByNodeId,
    BySemanticId,
    Checked,
    ErrorCode,
    Latest,
    Numeric,
    Receipt,
    Rejection,
    Role,
    Scroll,
    ScrollDirection,
    SemanticId,
    SetNumericValue,
    SimpleAction,
)

FIXTURE_LAUNCH = Launch(SYSTEM_PYTHON, (str(GTK_FIXTURE),))
ALERT = Launch(SYSTEM_PYTHON, (str(Path(__file__).parent / "apps/gtk_alert.py"),))
SCROLLED_LIST = Launch(SYSTEM_PYTHON, (str(Path(__file__).parent / "apps/gtk_scrolled_list.py"),))


@pytest.fixture(scope="module")
def desktop() -> Iterator[PrivateDesktop]:
    require({WIDGET_FACTORY: "gtk-3-examples", SYSTEM_PYTHON: "python3"})
    require_gtk_python()
    with PrivateDesktop() as started:
        yield started


@contextlib.asynccontextmanager
async def _bridged(
    desktop: PrivateDesktop, launch: Launch = FIXTURE_LAUNCH
) -> AsyncIterator[SurfaceAgentHost]:
    """An atspi surface running `launch`, opened, under the MCP bridge; closed at the end."""
    surface = create_surface({"adapter": "atspi", **desktop.surface_config})
    await surface.open(SessionInit(launch=launch))
    try:
        yield SurfaceAgentHost(surface)
    finally:
        await surface.close()


async def test_launch_snapshot_act_and_quit_the_fixture_app(desktop: PrivateDesktop) -> None:
    surface = create_surface({"adapter": "atspi", **desktop.surface_config})
    await surface.open(SessionInit(launch=FIXTURE_LAUNCH))
    try:
        snap = await surface.snapshot()
        assert snapshot_problems(snap) == []
        assert '- button "Greet" [ref=' in snap.text
        [greet] = await surface.locate({"by": "automationId", "value": "greet"})
        [status] = await surface.locate({"by": "automationId", "value": "status"})
        backend = surface._backend  # type: ignore[attr-defined]
        asked = []
        backend_actions = backend.actions
        backend.actions = lambda *a: asked.append(a) or backend_actions(*a)
        await surface.act("click", greet)
        assert asked == []  # the action names came with the node's facts, in one round trip
        sent: list[Any] = []
        call_many = backend.bus.call_many
        backend.bus.call_many = lambda messages: sent.extend(messages) or call_many(messages)
        await surface.read("text", greet)
        assert sent
        assert not [m for m in sent if isinstance(m, tuple) and m[3] == "GetActions"]
        backend.bus.call_many = call_many  # a read, or a wait's poll, does without them
        with trio.fail_after(5):
            while await surface.read("text", status) != "Hello world (1)":
                await trio.sleep(0.05)
        process = surface._process  # type: ignore[attr-defined]
        await surface.act("quit")
        assert process.poll() is not None
        with pytest.raises(SessionError):
            await surface.snapshot()
    finally:
        await surface.close()
    await surface.close()


async def test_a_process_without_a_window_is_not_running(desktop: PrivateDesktop) -> None:
    """A process of the name that owns no window does not count: open launches instead."""
    sleeper = subprocess.Popen(["sleep", "30"], env=desktop.env)
    try:
        surface = create_surface({"adapter": "atspi", **desktop.surface_config})
        with pytest.raises(SessionError):
            await surface.open(SessionInit(process_name="sleep"))
        await surface.open(SessionInit(process_name="semledger-gtk-fixture", launch=FIXTURE_LAUNCH))
        assert surface.launched  # type: ignore[attr-defined]
        await surface.close()
    finally:
        sleeper.kill()
        sleeper.wait()


async def test_close_quits_what_it_launched(desktop: PrivateDesktop) -> None:
    surface = create_surface({"adapter": "atspi", **desktop.surface_config})
    await surface.open(SessionInit(launch=FIXTURE_LAUNCH))
    process = surface._process  # type: ignore[attr-defined]
    await surface.close()
    assert process.poll() is not None


async def test_the_widget_factory_tree_reads_whole_and_well_formed(desktop: PrivateDesktop) -> None:
    surface = create_surface({"adapter": "atspi", **desktop.surface_config})
    await surface.open(SessionInit(launch=Launch(WIDGET_FACTORY)))
    try:
        snap = await surface.snapshot()
        assert snapshot_problems(snap) == []
        assert len(snap.nodes) > 200
        roles = {n.role for n in snap.nodes}
        assert {"window", "button", "checkbox", "slider"} <= roles
        again = await surface.snapshot()
        assert [n.ref for n in again.nodes] == [n.ref for n in snap.nodes]
    finally:
        await surface.close()


async def test_the_atspi_adapter_is_conformant() -> None:
    report = await run_conformance("atspi")
    failed = [(r.id, r.reason) for r in report.results if r.status == "failed"]
    assert failed == []
    assert report.conformant


async def test_a_bus_without_the_registry_is_a_session_error(desktop: PrivateDesktop) -> None:
    """Connecting registers a listener; where nothing answers it (a plain session bus
    given as the accessibility bus), the reason is given instead of an empty desktop."""
    from semledger.adapters._atspi_dbus import A11yBus

    with pytest.raises(SessionError, match="refused our event listener"):
        await A11yBus.connect(a11y_bus=desktop.bus_address, timeout=5)


@contextlib.contextmanager
def _bare_bus(env: dict[str, str]) -> Iterator[str]:
    """The address of a new session bus with nothing on it, as ``dbus-run-session`` makes."""
    daemon, address = start_session_bus(env)
    try:
        yield address
    finally:
        daemon.terminate()
        daemon.wait(timeout=10)
        assert daemon.stdout is not None
        daemon.stdout.close()


async def test_the_accessibility_bus_is_started_on_the_configured_session_bus(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With `session_bus` naming another bus than $DBUS_SESSION_BUS_ADDRESS and neither
    running the AT-SPI bus, the launcher the adapter started went to the environment's bus,
    and open waited for it on the configured one until its time ran out."""
    require({SYSTEM_PYTHON: "python3"})
    require_gtk_python()
    with (
        PrivateDesktop(bus=False) as display,
        _bare_bus(display.env) as elsewhere,
        _bare_bus(display.env) as configured,
    ):
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", elsewhere)
        config = {"session_bus": configured, "env": display.env, "timeout_ms": 10_000}
        surface = create_surface({"adapter": "atspi", **config})
        try:
            await surface.open(SessionInit(launch=FIXTURE_LAUNCH))
            assert await surface.locate({"by": "automationId", "value": "greet"})
        finally:
            await surface.close()


async def test_focus_moves_the_keyboard_focus_to_the_element(desktop: PrivateDesktop) -> None:
    """What the MCP bridge's `focus` asks of the atspi adapter, on a real GTK window: the
    entry that takes the focus is the focused node of the next snapshot."""
    surface = create_surface({"adapter": "atspi", **desktop.surface_config})
    await surface.open(SessionInit(launch=FIXTURE_LAUNCH))
    try:
        [name] = await surface.locate({"by": "automationId", "value": "name"})
        [greet] = await surface.locate({"by": "automationId", "value": "greet"})
        for ref in (name, greet, name):
            await surface.act("focus", ref)
            focused = [n.ref for n in (await surface.snapshot()).nodes if "focused" in n.states]
            assert focused == [ref]
    finally:
        await surface.close()


async def test_an_agent_selects_expands_and_reads_gtk_controls_truthfully(
    desktop: PrivateDesktop,
) -> None:
    """Through the MCP bridge, on the fixture's tabs, tree, inconsistent check box, password
    entry and text view: select chooses a tab or a tree row without running the row's action
    (a click on a cell did), expand and collapse open and close a row, and the tree says
    what the state words alone could not (a range's bounds among them, and the labels of
    form controls, which GTK gives them only as relations)."""
    async with _bridged(desktop) as host:
        tree = await host.refresh()

        def node(label: str) -> Any:
            return next(n for n in host.journal.current.nodes.values() if n.label == label)

        async def do(label: str, kind: ActionKind) -> None:
            receipt = await host.perform_action(
                ByNodeId(node(label).node_id), SimpleAction(kind), Latest()
            )
            assert isinstance(receipt, Receipt), receipt
            assert receipt.after > receipt.before

        await do("Second", ActionKind.SELECT)
        assert node("Second").state.selected
        assert not node("First").state.selected
        assert node("Fruit").state.expanded is False
        await do("Fruit", ActionKind.EXPAND)
        assert node("Fruit").state.expanded
        # GTK gives a tree's cells as one flat list: the hierarchy is in their relations
        assert (node("Fruit").level, node("Apple").level, node("Vegetables").level) == (1, 2, 1)
        assert node("Apple").state.selected is False
        await do("Vegetables", ActionKind.SELECT)
        assert node("Vegetables").state.selected
        assert not node("Fruit").state.selected
        await do("Fruit", ActionKind.COLLAPSE)
        labels = {n.label for n in host.journal.current.nodes.values()}
        assert "Apple" not in labels
        assert node("Fruit").state.expanded is False
        assert "Ready" in labels  # selecting a row did not activate it

        by_id = {n.semantic_id: n for n in tree.nodes.values() if n.semantic_id is not None}
        labelled = {i: (by_id[i].label, by_id[i].value) for i in ("name", "colour", "count")}
        assert labelled == {
            "name": ("Name", ""),
            "colour": ("Colour", "Red"),  # GTK names a combo box by its selection
            "count": ("Count", "3"),
        }
        assert by_id["mixed"].state.checked is Checked.MIXED
        assert by_id["password"].state.password
        notes = by_id["notes"]
        assert notes.state.multiline
        assert ActionKind.SUBMIT not in notes.actions
        count = by_id["count"]
        assert count.numeric == Numeric(3.0, 0.0, 10.0, 1.0, None)
        beyond = await host.perform_action(ByNodeId(count.node_id), SetNumericValue(11), Latest())
        assert isinstance(beyond, Rejection)  # not clamped to 10 unseen
        assert beyond.message == "11 is above the maximum, 10"


async def test_a_button_that_runs_a_modal_dialog_leaves_the_application_answering(
    desktop: PrivateDesktop,
) -> None:
    """GTK runs an AT-SPI DoAction inside its dispatch of accessibility calls: a button
    whose handler ran ``Gtk.Dialog.run`` clicked that way left the application answering
    no call until the dialog closed, and the session ended as a lost connection."""
    async with _bridged(desktop) as host:
        await host.refresh()

        async def activate(label: str) -> None:
            [node] = [n for n in host.journal.current.nodes.values() if n.label == label]
            with trio.fail_after(10):
                receipt = await host.perform_action(
                    ByNodeId(node.node_id), SimpleAction(ActionKind.ACTIVATE), Latest()
                )
            assert isinstance(receipt, Receipt), receipt

        await activate("Send…")
        shown = host.journal.current.nodes.values()
        assert "Send the greeting?" in {n.label for n in shown}, [n.label for n in shown]
        await activate("OK")
        labels = {n.label for n in host.journal.current.nodes.values()}
        assert "Sent" in labels
        assert "Send the greeting?" not in labels


async def test_a_check_box_cell_shows_its_state_and_toggles_without_activating_its_row(
    desktop: PrivateDesktop,
) -> None:
    """GTK 3 says a tree view's check box cell is ``checked`` only while it is (never
    checkable), and its Toggle action activates the row instead: the agent saw a plain
    cell, and toggling it ran the row's action. A cell whose row draws no check box reads
    the same: toggling it is refused, not a receipt for nothing."""
    async with _bridged(desktop) as host:
        await host.refresh()

        def boxes() -> list[Any]:
            nodes = host.journal.current.nodes.values()
            return [n for n in nodes if n.role.value == "checkbox" and n.label is None]

        [fruit, vegetables] = boxes()  # the rows' own; the children's are collapsed away
        assert (fruit.state.checked, vegetables.state.checked) == (Checked.UNCHECKED,) * 2
        receipt = await host.perform_action(
            ByNodeId(fruit.node_id), SimpleAction(ActionKind.ACTIVATE), Latest()
        )
        assert isinstance(receipt, Receipt), receipt
        assert [n.state.checked for n in boxes()] == [Checked.CHECKED, Checked.UNCHECKED]
        labels = {n.label for n in host.journal.current.nodes.values()}
        assert "Ready" in labels  # the row's action did not run
        # Vegetables' is not drawn, yet reads the same: toggling it does nothing, and says so
        refused = await host.perform_action(
            ByNodeId(vegetables.node_id), SimpleAction(ActionKind.ACTIVATE), Latest()
        )
        assert isinstance(refused, Rejection), refused
        assert "did not change when toggled" in refused.message


async def test_a_launched_application_is_first_read_with_its_focus(
    desktop: PrivateDesktop,
) -> None:
    """The focus shows a moment after the window: a first snapshot taken before it saw the
    focus arrive later as a change nobody made, and an agent's first exact action stale."""
    late = Launch(SYSTEM_PYTHON, (str(GTK_FIXTURE), "--focus-after", "150"))
    surface = create_surface({"adapter": "atspi", **desktop.surface_config})
    await surface.open(SessionInit(launch=late))
    try:
        [name] = await surface.locate({"by": "automationId", "value": "name"})
        first = await surface.snapshot()
        assert [n.ref for n in first.nodes if "focused" in n.states] == [name], first.text
    finally:
        await surface.close()


async def test_increment_raises_a_gtk_slider_by_its_step_and_decrement_lowers_it(
    desktop: PrivateDesktop,
) -> None:
    """The bridge pressed ArrowUp for increment, which a GTK scale, horizontal or vertical,
    takes as a step towards its start: the value went down, under a receipt. It now sets
    the value one step on, through the range's Value interface."""
    async with _bridged(desktop, Launch(WIDGET_FACTORY)) as host:
        await host.refresh()

        def sliders() -> dict[int, Any]:
            shown = host.journal.current.nodes.values()
            return {
                n.node_id: n.numeric
                for n in shown
                if n.role is Role.SLIDER
                and ActionKind.INCREMENT in n.actions
                and not n.state.disabled
                and n.numeric is not None
                and n.numeric.step
                and n.numeric.min < n.numeric.current < n.numeric.max
            }

        moved = sliders()
        assert len(moved) >= 4, moved  # a spin button, two horizontal scales, a vertical one
        for node_id, numeric in moved.items():
            for kind, sign in ((ActionKind.INCREMENT, 1), (ActionKind.DECREMENT, -1)):
                was = host.journal.current.nodes[node_id].numeric
                receipt = await host.perform_action(ByNodeId(node_id), SimpleAction(kind), Latest())
                assert isinstance(receipt, Receipt), receipt
                now = host.journal.current.nodes[node_id].numeric
                expected = min(max(was.current + sign * was.step, was.min), was.max)
                assert (kind, now.current) == (kind, expected), (node_id, numeric)


async def test_an_application_that_stops_answering_a_while_is_a_timeout_then_read_again(
    desktop: PrivateDesktop,
) -> None:
    """An application that does not answer within the timeout (stopped here, busy in a
    handler for real) makes that read a SurfaceTimeoutError; once it answers again, so
    does the surface: the connection was never lost."""
    surface = create_surface({"adapter": "atspi", **desktop.surface_config})
    await surface.open(SessionInit(launch=FIXTURE_LAUNCH))
    try:
        surface._backend.bus._timeout = 1.0  # type: ignore[attr-defined]
        pid = surface._process.pid  # type: ignore[attr-defined]
        os.kill(pid, signal.SIGSTOP)
        try:
            with pytest.raises(SurfaceTimeoutError, match="did not answer"):
                await surface.snapshot()
        finally:
            os.kill(pid, signal.SIGCONT)
        snap = await surface.snapshot()
        assert '- button "Greet" [ref=' in snap.text
        [greet] = await surface.locate({"by": "automationId", "value": "greet"})
        await surface.act("click", greet)
    finally:
        await surface.close()


async def test_an_action_that_quits_the_application_says_read_again_which_says_it_is_gone(
    desktop: PrivateDesktop,
) -> None:
    """The click on Quit was answered with a receipt saying nothing changed and nothing was
    pending, though the bridge had already found the application gone. The receipt now says
    pending_work (done, not yet seen), and the read it calls for answers host_closed."""
    async with _bridged(desktop) as host:
        await host.refresh()
        with trio.fail_after(10):
            receipt = await host.perform_action(
                BySemanticId(SemanticId.new("quit")), SimpleAction(ActionKind.ACTIVATE), Latest()
            )
        assert isinstance(receipt, Receipt), receipt
        assert (receipt.after, receipt.pending_work) == (receipt.before, True)
        read = await host.read_semantics(None)
        assert isinstance(read, Rejection)
        assert (read.code, read.message) == (ErrorCode.HOST_CLOSED, host.closed_reason)


async def test_scroll_on_a_gtk_scrolled_window_brings_rows_below_into_the_tree(
    desktop: PrivateDesktop,
) -> None:
    """A scroll pane came through as a group offering nothing: scroll was action_unavailable
    and the rows below the visible ones were out of reach. It is a scroll view, and scroll
    moves it a page down, then back up, through its scroll bar."""
    async with _bridged(desktop, SCROLLED_LIST) as host:
        await host.refresh()

        def rows() -> set[str]:
            shown = host.journal.current.nodes.values()
            return {n.label for n in shown if n.label is not None and n.label.startswith("Row")}

        scroller = host.journal.current.nodes[
            next(
                n.node_id
                for n in host.journal.current.nodes.values()
                if n.semantic_id == SemanticId.new("scroller")
            )
        ]
        assert scroller.role is Role.SCROLL_VIEW
        assert ActionKind.SCROLL in scroller.actions
        before = rows()
        assert "Row 29" not in before
        for direction in (ScrollDirection.DOWN, ScrollDirection.UP):
            receipt = await host.perform_action(
                ByNodeId(scroller.node_id), Scroll(direction), Latest()
            )
            assert isinstance(receipt, Receipt), receipt
            assert receipt.after > receipt.before
            if direction is ScrollDirection.DOWN:
                assert rows() - before, rows()
        assert rows() == before


async def test_a_gtk_list_scrolled_to_its_end_shows_its_last_rows(
    desktop: PrivateDesktop,
) -> None:
    """GTK stops saying a scrolled window's viewport is showing two pages down, though its
    rows are: the tree lost the viewport and every row in it, and the list's end was out
    of reach."""
    async with _bridged(desktop, SCROLLED_LIST) as host:
        await host.refresh()
        nodes = host.journal.current.nodes
        scroller = next(n for n in nodes.values() if n.semantic_id == SemanticId.new("scroller"))
        for _ in range(4):
            receipt = await host.perform_action(
                ByNodeId(scroller.node_id), Scroll(ScrollDirection.DOWN), Latest()
            )
            assert isinstance(receipt, Receipt), receipt
            labels = {n.label for n in host.journal.current.nodes.values()}
            assert labels & {f"Row {i}" for i in range(30)}, labels
        assert "Row 29" in {n.label for n in host.journal.current.nodes.values()}


async def test_a_row_of_a_gtk_list_scrolled_partly_out_of_view_counts_every_row(
    desktop: PrivateDesktop,
) -> None:
    """The rows GTK scrolled out of view are left out of the tree: the first row shown read
    as 1 of the few shown, not 1 of the list's 30, and after a scroll the first row shown
    said it was the first."""
    async with _bridged(desktop, SCROLLED_LIST) as host:
        await host.refresh()

        def places() -> list[tuple[int | None, int | None]]:
            items = [n for n in host.journal.current.nodes.values() if n.role is Role.LIST_ITEM]
            return sorted(
                (n.collection.set_position, n.collection.set_size)
                for n in items
                if n.collection is not None
            )

        assert places()[0] == (1, 30)
        scroller = next(
            n for n in host.journal.current.nodes.values() if n.role is Role.SCROLL_VIEW
        )
        await host.perform_action(
            ByNodeId(scroller.node_id), Scroll(ScrollDirection.DOWN), Latest()
        )
        shown = places()
        assert shown[0][0] > 1
        assert {size for _position, size in shown} == {30}


@pytest.mark.parametrize("ending", ["killed", "quit by itself"])
async def test_only_an_application_killed_from_outside_is_gone_beyond_a_re_run(
    desktop: PrivateDesktop, ending: str
) -> None:
    """Every end was a SurfaceGoneError, which a re-run takes as done from outside: an app
    that quit or aborted by itself, then changed not to, re-ran as identical."""
    surface = create_surface({"adapter": "atspi", **desktop.surface_config})
    await surface.open(SessionInit(launch=FIXTURE_LAUNCH))
    try:
        process = surface._process  # type: ignore[attr-defined]
        if ending == "killed":
            os.kill(process.pid, signal.SIGKILL)
        else:
            [quit_] = await surface.locate({"by": "automationId", "value": "quit"})
            await surface.act("click", quit_)
        with trio.fail_after(10):
            await process.wait()
        with pytest.raises(SessionError) as ended:
            await surface.snapshot()
        assert isinstance(ended.value, SurfaceGoneError) is (ending == "killed"), ended.value
        said = "was killed by SIGKILL" if ending == "killed" else "exited with status 0"
        assert said in str(ended.value)
    finally:
        await surface.close()


async def test_an_application_gone_from_the_bus_ends_the_session_it_is_no_stale_ref(
    desktop: PrivateDesktop,
) -> None:
    """An attached application that exited read as a stale ref (its element's facts came
    back empty, as one destroyed element's do), and a launched one killed made a snapshot
    under a ref a LocateError: the agent was sent looking for an element in an application
    that was gone."""
    surface = create_surface({"adapter": "atspi", **desktop.surface_config})
    await surface.open(SessionInit(launch=FIXTURE_LAUNCH))
    try:
        [greet] = await surface.locate({"by": "automationId", "value": "greet"})
        os.kill(surface._process.pid, signal.SIGKILL)  # type: ignore[attr-defined]
        await trio.sleep(0.3)
        with pytest.raises(SurfaceGoneError, match="was killed by SIGKILL"):
            await surface.snapshot(root=greet)
    finally:
        await surface.close()
    other = subprocess.Popen([SYSTEM_PYTHON, str(GTK_FIXTURE)], env=desktop.env)
    try:
        surface = create_surface({"adapter": "atspi", **desktop.surface_config})
        with trio.fail_after(20):
            while True:
                with contextlib.suppress(SessionError):
                    await surface.open(SessionInit(process_name="semledger-gtk-fixture"))
                    break
                await trio.sleep(0.1)
        [greet] = await surface.locate({"by": "automationId", "value": "greet"})
        other.kill()
        other.wait()
        await trio.sleep(0.3)
        with pytest.raises(SessionError, match="is gone") as ended:
            await surface.read("text", greet)
        assert type(ended.value) is SessionError, ended.value
        with pytest.raises(SessionError, match="has quit"):
            await surface.act("click", greet)
        await surface.close()
    finally:
        other.kill()
        other.wait()


async def test_a_message_dialog_window_is_described_as_the_dialog_the_snapshot_shows(
    desktop: PrivateDesktop,
) -> None:
    """describe read the element alone, without its parent, so a top-level alert window
    was a dialog in the snapshot and generic in its description."""
    surface = create_surface({"adapter": "atspi", **desktop.surface_config})
    await surface.open(SessionInit(launch=ALERT))
    try:
        [alert] = await surface.locate({"by": "automationId", "value": "alert"})
        snap = await surface.snapshot()
        assert [n.role for n in snap.nodes if n.ref == alert] == ["dialog"]
        assert (await surface.describe(alert)).role == "dialog"
    finally:
        await surface.close()


async def test_dismissing_a_dialog_that_does_not_take_the_focus_sends_no_escape_elsewhere(
    desktop: PrivateDesktop,
) -> None:
    """The dismiss of a non-modal dialog that never became the active window sent Escape
    to the main window, and answered with a receipt."""
    async with _bridged(desktop, ALERT) as host:
        await host.refresh()
        [dialog] = [n for n in host.journal.current.nodes.values() if n.role is Role.DIALOG]
        refused = await host.perform_action(
            ByNodeId(dialog.node_id), SimpleAction(ActionKind.DISMISS), Latest()
        )
        assert isinstance(refused, Rejection), refused
        assert "did not take the keyboard focus" in refused.message
        await trio.sleep(0.3)
        await host.refresh()
        labels = {n.label for n in host.journal.current.nodes.values()}
        assert "Ready" in labels, labels


async def test_an_unrelated_application_that_does_not_answer_holds_up_no_session(
    desktop: PrivateDesktop,
) -> None:
    """Every application on the registry was asked what it was in one batch under one
    deadline, and the title asked them all: one stopped application made attaching,
    launching and reading the title a timeout."""
    other = subprocess.Popen([SYSTEM_PYTHON, str(GTK_FIXTURE)], env=desktop.env)
    config = {"adapter": "atspi", "timeout_ms": 6000, **desktop.surface_config}
    surface = create_surface(config)
    try:
        await surface.open(SessionInit(launch=ALERT))
        backend = surface._backend  # type: ignore[attr-defined]
        with trio.fail_after(20):
            while not any(a.pid == other.pid and a.windows for a in await backend.applications()):
                await trio.sleep(0.1)
        os.kill(other.pid, signal.SIGSTOP)
        with trio.fail_after(4):
            assert await surface.read("title") == "semledger alert"
        name = surface.application.name  # type: ignore[attr-defined]
        attached = create_surface(config)
        with trio.fail_after(4):
            await attached.open(SessionInit(process_name=name))
        await attached.close()
    finally:
        await surface.close()
        other.kill()
        other.wait()
