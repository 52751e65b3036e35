"""Pages served to agents through the MCP bridge that once stopped it or misled it: dialogs
that open as the page loads, as a snapshot is taken or right after another one, native
options, headings and links, and a page that closes itself."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Final

import pytest
import trio

from semledger.adapters import (
    ActionabilityError,
    LoggedSurface,
    NavigationError,
    SessionInit,
    SurfaceGoneError,
)
from semledger.adapters._web import WebBrowser, WebSurface
from semledger.eventlog import MemoryRecorder, SurfaceCalled
from semledger.hosts import LoggedSurfaceHost, SurfaceAgentHost, rerun_surface
from semledger.replay import audit, read_at
from semledger.runtime import (
    ActionKind,
    Announcement,
    ByNodeId,
    BySemanticId,
    Checked,
    Delta,
    ErrorCode,
    Full,
    Latest,
    Live,
    Receipt,
    Rejection,
    Role,
    SemanticId,
    SemanticsNode,
    SetText,
    SimpleAction,
)
from semledger.runtime._wire import encode_read

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from served_pages import HANG_GUARD_S, full_read, open_host, written

PAGES = {
    "load_alert.html": "<!doctype html><title>Loads</title><p>loaded</p>"
    "<script>alert('welcome')</script>",
    # The page's own checkVisibility, which the snapshot walk calls, opens an alert once
    # armed: a dialog that opens while the snapshot is being taken.
    "mid_snapshot.html": "<!doctype html><title>Mid</title>"
    "<button onclick=\"window.armed = true\">Arm</button><script>"
    "const seen = Element.prototype.checkVisibility;"
    "Element.prototype.checkVisibility = function (o) {"
    " if (window.armed) { window.armed = false; alert('mid-snapshot'); }"
    " return seen.call(this, o); };</script>",
    "two_alerts.html": "<!doctype html><title>Two</title><p id='out'>-</p>"
    "<button onclick=\"alert('first'); alert('second');"
    " document.getElementById('out').textContent = 'both answered'\">Twice</button>",
    "options.html": "<!doctype html><title>Options</title><h2>Pick one</h2>"
    "<a href='next.html'>Next</a>"
    "<select aria-label='Colour'><option value='Blue'>Red</option>"
    "<option value='g'>Blue</option></select>",
    "opener.html": "<!doctype html><title>Opener</title>"
    "<button onclick=\"window.open('closer.html')\">Open</button>",
    "closer.html": "<!doctype html><title>Closer</title>"
    "<button onclick='window.close()'>Close</button>",
    "tabs.html": "<!doctype html><title>Tabs</title>"
    "<a href='help.html' target='_blank'>Help</a>",
    "help.html": "<!doctype html><title>Help</title><h1>How to</h1>",
    "states.html": "<!doctype html><title>States</title>"
    "<input aria-label='Email' aria-invalid='true'>"
    "<button aria-pressed='true'>Bold</button>"
    "<input type='checkbox' id='some' aria-label='Some'>"
    "<textarea aria-label='Notes'></textarea>"
    "<input type='password' aria-label='Secret' value='hunter2'>"
    "<div role='status' aria-label='Saved'>saved</div>"
    "<section aria-live='assertive' aria-label='Ticker'>up</section>"
    "<div role='alert' aria-live='off' aria-label='Quiet'>!</div>"
    "<script>document.getElementById('some').indeterminate = true;</script>",
    "announce.html": "<!doctype html><title>Announce</title>"
    "<button onclick=\"document.getElementById('s').textContent = 'Saved 3 items'\">Save</button>"
    "<div role='status' id='s'>Idle</div>",
    "atomic.html": "<!doctype html><title>Atomic</title>"
    "<button onclick=\"document.getElementById('n').textContent = '3'\">Add</button>"
    "<button onclick=\"document.getElementById('f').textContent = 'apple'\">Log</button>"
    "<div role='status'>Cart: <span id='n'>2</span> items</div>"
    "<div aria-live='polite'>Last: <b id='f'>none</b></div>",
    # Two modal dialogs: the deeper one comes first in the document and opens last.
    "nested_modal.html": "<!doctype html><title>Nested</title>"
    "<section aria-label='Wrap'><dialog id='inner' aria-label='Inner'><button>In</button>"
    "</dialog></section>"
    "<dialog id='outer' aria-label='Outer'><button>Out</button></dialog>"
    "<script>document.getElementById('outer').showModal();"
    " document.getElementById('inner').showModal();</script>",
    "behind_modal.html": "<!doctype html><title>Behind</title>"
    "<input aria-label='Name'><button onclick=\"window.pressed = true\">Press</button>"
    "<dialog id='modal'><input aria-label='Inside'><form method='dialog'>"
    "<button>Close</button></form></dialog>"
    "<script>document.getElementById('modal').showModal();</script>",
    # The usual React or Bootstrap modal: the page behind it aria-hidden while it is open.
    "aria_modal.html": "<!doctype html><title>Modal</title>"
    "<main id='bg'><button onclick='openModal()'>Open</button>"
    "<button onclick=\"this.textContent = 'Other clicked'\">Other</button></main>"
    "<div id='modal' role='dialog' aria-modal='true' aria-label='Settings' hidden>"
    "<button onclick=\"closeModal('Settings saved')\">Save</button>"
    "<button onclick='closeModal(null)'>Cancel</button></div>"
    "<div id='toast' role='status'></div>"
    "<script>function openModal() {"
    " modal.hidden = false; bg.setAttribute('aria-hidden', 'true'); }"
    "function closeModal(said) { modal.hidden = true; bg.removeAttribute('aria-hidden');"
    " if (said) toast.textContent = said; }</script>",
    "tab_panels.html": "<!doctype html><title>Tabs</title><div role='tablist'>"
    "<button role='tab' onclick='show(one)'>One</button>"
    "<button role='tab' onclick='show(two)'>Two</button></div>"
    "<div role='tabpanel' id='one' aria-label='First'><button>Apply</button></div>"
    "<div role='tabpanel' id='two' aria-label='Second' hidden><button>Reset</button></div>"
    "<script>function show(panel) {"
    " for (const p of [one, two]) p.hidden = p !== panel; }</script>",
    # Two documents with a button of the same HTML id, which is its semantic id.
    "draft.html": "<!doctype html><title>Draft</title><button id='go'>Save draft</button>"
    "<a href='account.html'>Next</a>",
    "draft_moving_on.html": "<!doctype html><title>Draft</title>"
    "<button id='go'>Save draft</button>"
    # (Late enough for a loaded machine's first read to see the draft.)
    "<script>setTimeout(() => { location.href = 'account.html'; }, 2000);</script>",
    "account.html": "<!doctype html><title>Account</title>"
    "<button id='go' onclick=\"this.textContent = 'Deleted'\">Delete account</button>",
    "pin.html": "<!doctype html><title>PIN entry</title><input id='pin' aria-label='PIN'>",
    "pin_secret.html": "<!doctype html><title>Secret PIN</title>"
    "<input id='pin' type='password' aria-label='PIN'>",
    # Fields the page makes password fields as they are focused or typed into.
    "retyped.html": "<!doctype html><title>Sign in</title>"
    "<input id='user' aria-label='User'>"
    "<input id='pf' aria-label='PIN' onfocus=\"this.type = 'password'\">"
    "<input id='pk' aria-label='Code' onkeydown=\"this.type = 'password'\">"
    "<input id='pi' aria-label='Secret' oninput=\"this.type = 'password'\">"
    "<textarea id='notes' aria-label='Notes'></textarea>",
}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> str:
    return written(tmp_path_factory.mktemp("served"), PAGES)


@pytest.fixture
async def surface(browser: WebBrowser) -> AsyncIterator[WebSurface]:
    opened = WebSurface({"browser": browser, "timeout_ms": HANG_GUARD_S * 2000})
    yield opened
    await opened.close()






async def _do(host: SurfaceAgentHost, node: SemanticsNode, kind: ActionKind) -> Receipt:
    with trio.fail_after(HANG_GUARD_S):
        outcome = await host.perform_action(ByNodeId(node.node_id), SimpleAction(kind), Latest())
    assert isinstance(outcome, Receipt), outcome
    return outcome


def _one(full: Full, role: Role, label: str | None = None) -> SemanticsNode:
    (node,) = [n for n in full.nodes if n.role is role and label in (None, n.label)]
    return node


def _root(full: Full) -> SemanticsNode:
    return next(n for n in full.nodes if n.node_id == full.root)


def _dialog(full: Full) -> SemanticsNode:
    (dialog,) = full.nodes
    assert (dialog.role, full.root) == (Role.DIALOG, dialog.node_id)
    return dialog


async def test_a_page_that_opens_an_alert_as_it_loads_is_served_showing_the_alert(
    surface: WebSurface, site: str
) -> None:
    with trio.fail_after(HANG_GUARD_S):
        host = await open_host(surface, site + "load_alert.html")
    alert = _dialog(await full_read(host))
    assert alert.label == "welcome"
    await _do(host, alert, ActionKind.SUBMIT)
    assert any(n.label == "loaded" for n in (await full_read(host)).nodes)


async def test_a_dialog_that_opens_while_the_tree_is_read_is_shown_instead_of_waiting(
    surface: WebSurface, site: str
) -> None:
    host = await open_host(surface, site + "mid_snapshot.html")
    await _do(host, _one(await full_read(host), Role.BUTTON, "Arm"), ActionKind.ACTIVATE)
    alert = _dialog(await full_read(host))
    assert alert.label == "mid-snapshot"
    await _do(host, alert, ActionKind.SUBMIT)
    _one(await full_read(host), Role.BUTTON, "Arm")


async def test_answering_a_dialog_the_page_follows_with_another_shows_the_next_one(
    surface: WebSurface, site: str
) -> None:
    host = await open_host(surface, site + "two_alerts.html")
    await _do(host, _one(await full_read(host), Role.BUTTON, "Twice"), ActionKind.ACTIVATE)
    await _do(host, _dialog(await full_read(host)), ActionKind.SUBMIT)
    second = _dialog(await full_read(host))
    assert second.label == "second"
    await _do(host, second, ActionKind.SUBMIT)
    assert any(n.label == "both answered" for n in (await full_read(host)).nodes)


async def test_select_on_a_native_option_chooses_that_option(
    surface: WebSurface, site: str
) -> None:
    host = await open_host(surface, site + "options.html")
    blue = _one(await full_read(host), Role.OPTION, "Blue")  # value "g"; "Red" has value "Blue"
    await _do(host, blue, ActionKind.SELECT)
    after = await full_read(host)
    assert _one(after, Role.COMBO_BOX, "Colour").value == "Blue"
    assert [n.label for n in after.nodes if n.role is Role.OPTION and n.state.selected] == ["Blue"]


async def test_headings_carry_their_level_and_links_their_absolute_url(
    surface: WebSurface, site: str
) -> None:
    full = await full_read(await open_host(surface, site + "options.html"))
    assert _one(full, Role.HEADING).level == 2
    assert _one(full, Role.LINK, "Next").url == site + "next.html"


async def test_a_link_opening_a_tab_shows_the_tab_and_dismiss_closes_it_going_back(
    surface: WebSurface, site: str
) -> None:
    """As a browser shows a tab a link opens; the tab's document offers dismiss (closing
    it) while the session has another window to go back to."""
    host = await open_host(surface, site + "tabs.html")
    start = await full_read(host)
    assert ActionKind.DISMISS not in _root(start).actions
    await _do(host, _one(start, Role.LINK, "Help"), ActionKind.ACTIVATE)
    tab = await full_read(host)
    assert (_root(tab).label, _root(tab).url) == ("Help", site + "help.html")
    assert _one(tab, Role.HEADING).label == "How to"
    await _do(host, _root(tab), ActionKind.DISMISS)
    back = await full_read(host)
    assert _root(back).label == "Tabs"
    assert ActionKind.DISMISS not in _root(back).actions


async def test_a_popup_that_closes_itself_goes_back_to_the_page_that_opened_it(
    surface: WebSurface, site: str
) -> None:
    host = await open_host(surface, site + "opener.html")
    await _do(host, _one(await full_read(host), Role.BUTTON, "Open"), ActionKind.ACTIVATE)
    popup = await full_read(host)
    assert _root(popup).label == "Closer"
    await _do(host, _one(popup, Role.BUTTON, "Close"), ActionKind.ACTIVATE)
    assert _root(await full_read(host)).label == "Opener"


async def test_a_page_that_closes_itself_is_a_receipt_then_host_closed_saying_so(
    surface: WebSurface, site: str
) -> None:
    host = await open_host(surface, site + "opener.html")
    await _do(host, _one(await full_read(host), Role.BUTTON, "Open"), ActionKind.ACTIVATE)
    await surface.act("closeOtherWindows")
    close = _one(await full_read(host), Role.BUTTON, "Close")
    closing = await _do(host, close, ActionKind.ACTIVATE)
    assert closing.pending_work  # done, not yet seen: read again
    with trio.fail_after(HANG_GUARD_S):
        read = await host.read_semantics(None)
    assert isinstance(read, Rejection)
    assert read.code is ErrorCode.HOST_CLOSED
    assert "closed" in read.message
    assert "open()" not in read.message


async def test_invalid_pressed_mixed_multiline_live_and_a_password_read_as_the_page_says(
    surface: WebSurface, site: str
) -> None:
    full = await full_read(await open_host(surface, site + "states.html"))
    assert _one(full, Role.TEXT_FIELD, "Email").state.invalid
    assert _one(full, Role.BUTTON, "Bold").state.pressed
    assert _one(full, Role.CHECKBOX, "Some").state.checked is Checked.MIXED
    assert _one(full, Role.TEXT_FIELD, "Notes").state.multiline
    assert not _one(full, Role.TEXT_FIELD, "Email").state.multiline
    lives = {n.label: n.live for n in full.nodes if n.label in ("Saved", "Ticker", "Quiet")}
    assert lives == {"Saved": Live.POLITE, "Ticker": Live.ASSERTIVE, "Quiet": Live.OFF}
    assert _one(full, Role.BUTTON, "Bold").live is Live.OFF
    secret = _one(full, Role.TEXT_FIELD, "Secret")
    assert (secret.value, secret.state.password) == ("\u2022" * len("hunter2"), True)
    (root,) = [n for n in full.nodes if n.node_id == full.root]
    assert (root.role, root.url) == (Role.WEB_VIEW, site + "states.html")


async def test_a_modal_dialog_is_the_root_and_the_page_behind_it_is_out_of_reach(
    surface: WebSurface, site: str
) -> None:
    """As a runtime's modal node: the page takes no input outside a `showModal` dialog.
    Before, the page behind it was offered; typing there got a receipt for text that went
    nowhere, and a click waited its whole timeout."""
    host = await open_host(surface, site + "behind_modal.html")
    full = await full_read(host)
    (root,) = [n for n in full.nodes if n.node_id == full.root]
    assert (root.role, root.state.modal) == (Role.DIALOG, True)
    assert {n.label for n in full.nodes} >= {"Inside", "Close"}
    assert not {n.label for n in full.nodes} & {"Name", "Press"}
    inside = next(n for n in full.nodes if n.label == "Inside")
    with trio.fail_after(HANG_GUARD_S):
        typed = await host.perform_action(ByNodeId(inside.node_id), SetText("ok"), Latest())
    assert isinstance(typed, Receipt), typed
    close = next(n for n in full.nodes if n.label == "Close")
    await _do(host, close, ActionKind.ACTIVATE)
    page = await full_read(host)
    assert {n.label for n in page.nodes} >= {"Name", "Press"}


async def test_the_surface_refuses_input_behind_a_modal_dialog_at_once(
    surface: WebSurface, site: str
) -> None:
    """Driven through the surface API, where every ref of the page is at hand."""
    with trio.fail_after(HANG_GUARD_S):
        await surface.open(SessionInit(base_url=site + "behind_modal.html"))
        snapshot = await surface.snapshot()
    refs = {n.name: n.ref for n in snapshot.nodes}
    for action, args in (("type", {"text": "typed"}), ("click", None)):
        with trio.fail_after(HANG_GUARD_S), pytest.raises(ActionabilityError, match="inert"):
            await surface.act(action, refs["Name"] if action == "type" else refs["Press"], args)
    assert await surface.read("value", refs["Name"]) == ""
    with trio.fail_after(HANG_GUARD_S):
        await surface.act("type", refs["Inside"], {"text": "ok"})


async def test_a_live_region_that_changes_is_announced_in_the_delta(
    surface: WebSurface, site: str
) -> None:
    host = await open_host(surface, site + "announce.html")
    full = await full_read(host)
    await _do(host, _one(full, Role.BUTTON, "Save"), ActionKind.ACTIVATE)
    with trio.fail_after(HANG_GUARD_S):
        delta = await host.read_semantics(full.generation)
    assert isinstance(delta, Delta), delta
    assert [(a.live, a.text) for a in delta.announcements] == [(Live.POLITE, "Saved 3 items")]


async def test_an_atomic_region_is_announced_whole_and_another_by_what_changed(
    surface: WebSurface, site: str
) -> None:
    """A status (atomic unless it says otherwise) says all of its text when part of it
    changes, from the region's node; a plain live region says the part that changed."""
    host = await open_host(surface, site + "atomic.html")
    full = await full_read(host)
    status = next(n for n in full.nodes if n.role is Role.STATUS)
    assert status.atomic
    await _do(host, _one(full, Role.BUTTON, "Add"), ActionKind.ACTIVATE)
    with trio.fail_after(HANG_GUARD_S):
        added = await host.read_semantics(full.generation)
    assert isinstance(added, Delta), added
    assert [(a.node_id, a.atomic, a.text) for a in added.announcements] == [
        (status.node_id, True, "Cart: 3 items")
    ]
    await _do(host, _one(full, Role.BUTTON, "Log"), ActionKind.ACTIVATE)
    with trio.fail_after(HANG_GUARD_S):
        logged = await host.read_semantics(added.to_generation)
    assert isinstance(logged, Delta), logged
    assert [(a.atomic, a.text) for a in logged.announcements] == [(False, "apple")]


async def test_of_two_modal_dialogs_the_deepest_is_the_root(
    surface: WebSurface, site: str
) -> None:
    """SPEC: the deepest modal node becomes the root while it is open."""
    full = await full_read(await open_host(surface, site + "nested_modal.html"))
    (root,) = [n for n in full.nodes if n.node_id == full.root]
    assert (root.role, root.label) == (Role.DIALOG, "Inner")
    assert [n.label for n in full.nodes if n.role is Role.BUTTON] == ["In"]


async def test_the_page_behind_an_aria_modal_dialog_comes_back_with_its_node_ids(
    surface: WebSurface, site: str
) -> None:
    """Its elements never left the document: an agent holding the id of one before the
    modal opened acts on it once the modal is closed (it was target_not_found, the button
    back under a new id)."""
    host = await open_host(surface, site + "aria_modal.html")
    page = await full_read(host)
    other = _one(page, Role.BUTTON, "Other")
    await _do(host, _one(page, Role.BUTTON, "Open"), ActionKind.ACTIVATE)
    modal = await full_read(host)
    assert _root(modal).role is Role.DIALOG
    assert other.node_id not in {n.node_id for n in modal.nodes}
    await _do(host, _one(modal, Role.BUTTON, "Save"), ActionKind.ACTIVATE)
    back = await full_read(host)
    assert {(n.node_id, n.label) for n in back.nodes} >= {(n.node_id, n.label) for n in page.nodes}
    await _do(host, other, ActionKind.ACTIVATE)
    assert _one(await full_read(host), Role.BUTTON, "Other clicked").node_id == other.node_id


async def test_an_opener_comes_back_with_its_node_ids_once_its_popup_closes(
    surface: WebSurface, site: str
) -> None:
    host = await open_host(surface, site + "opener.html")
    opener = await full_read(host)
    await _do(host, _one(opener, Role.BUTTON, "Open"), ActionKind.ACTIVATE)
    await _do(host, _one(await full_read(host), Role.BUTTON, "Close"), ActionKind.ACTIVATE)
    back = await full_read(host)
    assert [(n.node_id, n.label) for n in back.nodes] == [
        (n.node_id, n.label) for n in opener.nodes
    ]


async def test_a_tab_panel_hidden_and_shown_again_keeps_its_node_ids(
    surface: WebSurface, site: str
) -> None:
    host = await open_host(surface, site + "tab_panels.html")
    first = await full_read(host)
    apply = _one(first, Role.BUTTON, "Apply")
    await _do(host, _one(first, Role.TAB, "Two"), ActionKind.SELECT)
    second = await full_read(host)
    assert apply.node_id not in {n.node_id for n in second.nodes}
    await _do(host, _one(second, Role.TAB, "One"), ActionKind.SELECT)
    assert _one(await full_read(host), Role.BUTTON, "Apply").node_id == apply.node_id


@pytest.mark.parametrize("how", ["link", "timer"])
async def test_a_node_id_from_before_a_navigation_is_not_found_on_the_next_document(
    surface: WebSurface, site: str, how: str
) -> None:
    """The next document's button with the same HTML id took the node id of the last
    one's, so an agent's activate on "Save draft" deleted the account."""
    first = "draft.html" if how == "link" else "draft_moving_on.html"
    host = await open_host(surface, site + first)
    draft = await full_read(host)
    save = _one(draft, Role.BUTTON, "Save draft")
    if how == "link":
        await _do(host, _one(draft, Role.LINK, "Next"), ActionKind.ACTIVATE)
    account = await full_read(host)
    with trio.fail_after(HANG_GUARD_S):
        while _root(account).label != "Account":
            await trio.sleep(0.05)
            account = await full_read(host)
    assert _one(account, Role.BUTTON, "Delete account").node_id != save.node_id
    with trio.fail_after(HANG_GUARD_S):
        outcome = await host.perform_action(
            ByNodeId(save.node_id), SimpleAction(ActionKind.ACTIVATE), Latest()
        )
    assert isinstance(outcome, Rejection), outcome
    assert outcome.code is ErrorCode.TARGET_NOT_FOUND
    _one(await full_read(host), Role.BUTTON, "Delete account")


@pytest.mark.parametrize("how", ["type", "navigation"])
async def test_text_typed_into_a_field_that_became_a_password_since_the_read_is_not_logged(
    surface: WebSurface, site: str, how: str
) -> None:
    """The request was logged as judged on the tree the agent read, where the field was
    plain text: its value in clear, ``redacted`` false, though the surface's own ``type``
    call of the same step was masked."""
    recorder = MemoryRecorder()
    logged = LoggedSurface(surface, recorder, "w", "web")
    with trio.fail_after(HANG_GUARD_S):
        await logged.open(SessionInit(base_url=site + "pin.html"))
    host = LoggedSurfaceHost(logged)
    assert not _one(await full_read(host), Role.TEXT_FIELD, "PIN").state.password
    # The page changes on its own, unseen by the agent and the log (the unlogged surface).
    with trio.fail_after(HANG_GUARD_S):
        if how == "type":
            await surface.act("evaluate", args={"script": "pin.type = 'password'"})
        else:
            await surface.act("evaluate", args={"script": "location.href = 'pin_secret.html'"})
            while not await _shows(surface, "Secret PIN"):
                await trio.sleep(0.05)
        outcome = await host.perform_action(
            BySemanticId(SemanticId("pin")), SetText("hunter2"), Latest()
        )
    assert isinstance(outcome, Receipt), outcome
    assert _one(await full_read(host), Role.TEXT_FIELD, "PIN").state.password
    assert [entry.redacted for entry in audit(recorder, "w")] == [True]
    assert not [r.topic for r in recorder.read("w") if b"hunter2" in r.body]


async def test_text_aimed_at_a_password_field_stays_redacted_in_the_request_on_any_page(
    surface: WebSurface, site: str
) -> None:
    """Judged on the tree it is done on as well, a request is redacted still where the agent
    aimed it at a password field: the next page's field of that id is not one."""
    recorder = MemoryRecorder()
    logged = LoggedSurface(surface, recorder, "w", "web")
    with trio.fail_after(HANG_GUARD_S):
        await logged.open(SessionInit(base_url=site + "pin_secret.html"))
    host = LoggedSurfaceHost(logged)
    assert _one(await full_read(host), Role.TEXT_FIELD, "PIN").state.password
    with trio.fail_after(HANG_GUARD_S):
        await surface.act("evaluate", args={"script": "location.href = 'pin.html'"})
        while not await _shows(surface, "PIN entry"):
            await trio.sleep(0.05)
        await host.perform_action(BySemanticId(SemanticId("pin")), SetText("hunter2"), Latest())
    assert [(entry.redacted, entry.action) for entry in audit(recorder, "w")] == [
        (True, {"kind": "set_text", "value": "[redacted]"})
    ]


RETYPED: Final = {
    "pf": "hunter2-onfocus",
    "pk": "hunter2-onkeydown",
    "pi": "hunter2-oninput",
    "user": "ada-lovelace",
    "notes": "call back at noon",
}
"""What is typed into each field of retyped.html, by its id: the first three are password
fields once typed into."""


async def _typed_into_retyped_fields(surface: WebSurface, site: str) -> MemoryRecorder:
    """A served session of retyped.html: read, then every text of `RETYPED` typed."""
    recorder = MemoryRecorder()
    logged = LoggedSurface(surface, recorder, "w", "web")
    with trio.fail_after(HANG_GUARD_S):
        await logged.open(SessionInit(base_url=site + "retyped.html"))
    host = LoggedSurfaceHost(logged)
    assert not [n for n in (await full_read(host)).nodes if n.state.password]
    for semantic_id, text in RETYPED.items():
        with trio.fail_after(HANG_GUARD_S):
            outcome = await host.perform_action(
                BySemanticId(SemanticId(semantic_id)), SetText(text), Latest()
            )
        assert isinstance(outcome, Receipt), outcome
    shown = {n.semantic_id: n.state.password for n in (await full_read(host)).nodes}
    assert [shown[SemanticId(name)] for name in RETYPED] == [True, True, True, False, False]
    return recorder


async def test_text_typed_into_a_field_the_page_makes_a_password_as_it_is_typed_is_not_logged(
    surface: WebSurface, site: str
) -> None:
    """The request and the surface's ``type`` call were judged on the snapshot before the
    typing, where the field was plain text: the text was in both in clear (in the ``type``
    call alone for a field made one as it was focused, whose request named no read tree)."""
    recorder = await _typed_into_retyped_fields(surface, site)
    logged = b"".join(record.body for record in recorder.read("w"))
    assert b"hunter2" not in logged
    # A request is logged before its text is typed: at any input, which a page may make a
    # password field, it is masked; the plain field's type call, judged after, is not.
    requests = [(entry.action["value"], entry.redacted) for entry in audit(recorder, "w")]
    assert requests == [
        *[("[redacted]", True)] * 4, ("call back at noon", False),
    ]  # fmt: skip
    typed = [
        event.arguments["args"]["text"]
        for _record, event in recorder.events("w")
        if isinstance(event, SurfaceCalled) and event.arguments.get("action") == "type"
    ]
    secret, plain = list(RETYPED.values())[:3], list(RETYPED.values())[3:]
    assert typed == [*("\u2022" * len(text) for text in secret), *plain]


async def test_a_session_that_typed_into_fields_made_passwords_as_typed_re_runs_identically(
    surface: WebSurface, site: str, browser: WebBrowser
) -> None:
    """The re-run types the logged mask into each field the page made a password field, as
    many characters as were typed, and the clear text into the others."""
    recorder = await _typed_into_retyped_fields(surface, site)
    with trio.fail_after(HANG_GUARD_S * 2):
        report = await rerun_surface(recorder, "w", config={"adapter": "web", "browser": browser})
    assert report.ok, report.divergence


async def _shows(surface: WebSurface, text: str) -> bool:
    """Whether the page shows `text`: not while it loads its next document."""
    try:
        return text in (await surface.snapshot()).text
    except NavigationError:
        return False


async def test_a_status_written_behind_an_aria_modal_is_announced_as_the_modal_closes(
    surface: WebSurface, site: str
) -> None:
    """The status was out of the tree while the modal was its root: the commit that brought
    it back saying "Settings saved" announced nothing. Back saying what it said when it
    left, though written again, it says nothing again."""
    host = await open_host(surface, site + "aria_modal.html")
    page = await full_read(host)
    status = _one(page, Role.STATUS)

    async def close_with(button: str) -> tuple[Announcement, ...]:
        before = await full_read(host)
        await _do(host, _one(before, Role.BUTTON, "Open"), ActionKind.ACTIVATE)
        await _do(host, _one(await full_read(host), Role.BUTTON, button), ActionKind.ACTIVATE)
        with trio.fail_after(HANG_GUARD_S):
            delta = await host.read_semantics(before.generation)
        assert isinstance(delta, Delta), delta
        return delta.announcements

    saved = await close_with("Save")
    assert [(a.node_id, a.live, a.atomic, a.text) for a in saved] == [
        (status.node_id, Live.POLITE, True, "Settings saved")
    ]
    assert await close_with("Save") == ()  # the same words written again
    assert await close_with("Cancel") == ()


async def test_the_log_serves_a_page_back_from_behind_a_modal_as_the_bridge_did(
    surface: WebSurface, site: str
) -> None:
    """Read from the log alone, the page back from behind its modal has the ids it had and
    the status announces what it says now, as the live bridge answered."""
    recorder = MemoryRecorder()
    logged = LoggedSurface(surface, recorder, "w", "web")
    with trio.fail_after(HANG_GUARD_S):
        await logged.open(SessionInit(base_url=site + "aria_modal.html"))
    host = LoggedSurfaceHost(logged)
    page = await full_read(host)
    await _do(host, _one(page, Role.BUTTON, "Open"), ActionKind.ACTIVATE)
    modal = await full_read(host)
    await _do(host, _one(modal, Role.BUTTON, "Save"), ActionKind.ACTIVATE)
    answers = []
    for since in (None, page.generation):
        with trio.fail_after(HANG_GUARD_S):
            answers.append((since, await host.read_semantics(since)))
    (_, back), (_, delta) = answers
    assert isinstance(back, Full)
    assert isinstance(delta, Delta)
    assert {n.node_id for n in page.nodes} <= {n.node_id for n in back.nodes}
    assert [a.text for a in delta.announcements] == ["Settings saved"]
    for since, live in answers:
        served = read_at(recorder, "w", generation=back.generation, since=since)
        assert encode_read(served) == encode_read(live)
    assert [entry.outcome for entry in audit(recorder, "w")] == ["receipt", "receipt"]


def _chromium_pids() -> list[int]:
    """The Chromium processes descended from this one (Playwright's driver starts them)."""
    parents: dict[int, list[tuple[int, str]]] = {}
    for status in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = status.read_text()
        except OSError:
            continue
        name = text[text.index("(") + 1 : text.rindex(")")]
        parent = int(text[text.rindex(")") + 2 :].split()[1])
        parents.setdefault(parent, []).append((int(status.parent.name), name))
    found, stack = [], [os.getpid()]
    while stack:
        for pid, name in parents.get(stack.pop(), []):
            stack.append(pid)
            if name.startswith("chrom"):
                found.append(pid)
    return found


async def _read_after_killing(
    surface: WebSurface, site: str, processes: Callable[[], list[int]]
) -> Rejection:
    """What a read of a page `surface` opened answers once the `processes` found after a
    first read are killed."""
    host = await open_host(surface, site + "help.html")
    await full_read(host)
    killed = processes()
    assert killed
    for pid in killed:
        with contextlib.suppress(ProcessLookupError):  # gone with a parent killed before it
            os.kill(pid, signal.SIGKILL)
    with trio.fail_after(HANG_GUARD_S):
        read = await host.read_semantics(None)
        while not isinstance(read, Rejection):  # the driver may take a moment to see it
            await trio.sleep(0.1)
            read = await host.read_semantics(None)
    return read


async def test_a_browser_killed_under_its_surface_is_said_so_not_a_page_that_closed(
    site: str,
) -> None:
    """It was told 'the page has closed (the page called window.close(), say)': the
    operator went looking for a window.close() that never ran."""
    own = WebSurface({"timeout_ms": HANG_GUARD_S * 2000})  # its own browser: it is killed
    try:
        read = await _read_after_killing(own, site, _chromium_pids)
        assert read.code is ErrorCode.HOST_CLOSED
        assert "the browser is gone: Chromium crashed or was killed" in read.message
        with pytest.raises(SurfaceGoneError):  # what a re-run of the session cannot repeat
            await own.snapshot()
    finally:
        await own.close()


def _renderer_pids() -> list[int]:
    """The Chromium renderer processes (one a page) descended from this one."""
    found = []
    for pid in _chromium_pids():
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"--type=renderer" in command:
            found.append(pid)
    return found


@pytest.mark.parametrize(
    ("message", "crashed"),
    [
        ("Frame.evaluate: Target crashed", True),
        ("Page.goto: Navigation failed because page crashed!", True),
        ("Frame.evaluate: Error: page crashed", False),  # a page script's own error
        ("Frame.evaluate: ReferenceError: crashed is not defined", False),
    ],
)
def test_only_playwrights_words_for_a_dead_renderer_are_taken_for_a_crash(
    message: str, crashed: bool
) -> None:
    from semledger.adapters._web import _crashed

    assert _crashed(message) is crashed


async def test_a_page_whose_renderer_is_killed_is_said_crashed_not_in_playwrights_words(
    site: str,
) -> None:
    """It was told 'Frame.evaluate: Target crashed' (a method the operator never called),
    as a plain SessionError that a re-run reported as a divergence, though what killed the
    page came from outside as a browser's kill does."""
    own = WebSurface({"timeout_ms": HANG_GUARD_S * 2000})  # its own browser: its page dies
    try:
        read = await _read_after_killing(own, site, _renderer_pids)
        assert read.code is ErrorCode.HOST_CLOSED
        assert read.message.startswith("the page crashed: ")
        assert "Target crashed" not in read.message
        with pytest.raises(SurfaceGoneError, match="the page crashed"):
            await own.snapshot()
    finally:
        await own.close()
