"""A web page served to agents through the MCP bridge: native dialogs, focus, read-only and
disabled fields, Playwright errors told in one line, and links to slow servers."""

from __future__ import annotations

import http.server
import json
import socket
import socketserver
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import trio

from semledger.adapters import ActionabilityError, ScriptError, SessionError, SessionInit
from semledger.adapters._cases_web import serve_directory
from semledger.adapters._web import WebBrowser, WebSurface
from semledger.hosts import SurfaceAgentHost
from semledger.runtime import (
    ActionKind,
    ByNodeId,
    BySemanticId,
    Delta,
    ErrorCode,
    Full,
    Latest,
    Receipt,
    Rejection,
    Role,
    SemanticId,
    SemanticsAction,
    SemanticsNode,
    SetText,
    SimpleAction,
)

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp
from served_pages import hosted, served

FIELDS = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Fields</title></head>
<body>
<label>Name <input id="name"></label>
<label>Secret <input id="secret" type="password"></label>
<button id="show" onclick="secret.type = 'text'">Show</button>
<label>Code <input id="code" value="ABC-1" readonly></label>
<label>Locked <input id="locked" value="x" disabled></label>
<div role="checkbox" id="subscribe" aria-label="Subscribe" aria-checked="false" tabindex="0"
     onclick="this.setAttribute('aria-checked', 'true')"></div>
</body></html>
"""


LEAVING = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Draft</title></head>
<body>
<label>Draft <input id="draft" oninput="window.dirty = true"></label>
<a href="fields.html">Leave</a>
<script>
  addEventListener("beforeunload", (e) => { if (window.dirty) e.preventDefault(); });
</script>
</body></html>
"""


CARD = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Card</title></head>
<body><label>Card email <input id="email"></label></body></html>
"""


CHECKOUT = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Checkout</title></head>
<body>
<label>Email <input id="email"></label>
<iframe src="card.html" title="Payer"></iframe>
<iframe src="card.html" title="Payee"></iframe>
</body></html>
"""


COVERED = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Covered</title></head>
<body><div style="position: relative">
<label><input type="checkbox" id="agree"> Agree</label><br>
<button id="plain">Plain</button>
<div id="overlay" style="position: absolute; left: 0; top: 0; width: 400px; height: 80px">
  <div style="width: 400px; height: 80px; background: rgba(0, 0, 0, 0.1)"></div>
</div>
</div></body></html>
"""


@pytest.fixture(scope="module")
def pages() -> Iterator[str]:
    with serve_directory() as url:
        yield url


@pytest.fixture(scope="module")
def fields(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served(
        tmp_path_factory.mktemp("fields"),
        {"fields.html": FIELDS, "leaving.html": LEAVING, "checkout.html": CHECKOUT,
         "card.html": CARD},
    ) as url:  # fmt: skip
        yield url + "fields.html"


async def _opened(browser: WebBrowser, url: str) -> WebSurface:
    surface = WebSurface({"browser": browser})
    await surface.open(SessionInit(base_url=url))
    return surface


@pytest.fixture
async def dialogs(browser: WebBrowser, pages: str) -> AsyncIterator[SurfaceAgentHost]:
    surface = await _opened(browser, pages + "dialogs.html")
    yield SurfaceAgentHost(surface)
    await surface.close()


@pytest.fixture
async def form(browser: WebBrowser, fields: str) -> AsyncIterator[SurfaceAgentHost]:
    surface = await _opened(browser, fields)
    yield SurfaceAgentHost(surface)
    await surface.close()


async def _full(host: SurfaceAgentHost) -> Full:
    read = await host.read_semantics(None)
    assert isinstance(read, Full)
    return read


def _root(full: Full) -> SemanticsNode:
    return next(n for n in full.nodes if n.node_id == full.root)


def _labelled(full: Full, role: Role, label: str) -> SemanticsNode:
    return next(n for n in full.nodes if n.role is role and n.label == label)


def _shows(full: Full, text: str) -> bool:
    return any(text in (n.label or "") + (n.value or "") for n in full.nodes)


async def _perform(host: SurfaceAgentHost, node: int, action: SemanticsAction) -> Receipt:
    outcome = await host.perform_action(ByNodeId(node), action, Latest())
    assert isinstance(outcome, Receipt), outcome
    return outcome


def _simple(kind: ActionKind) -> SimpleAction:
    return SimpleAction(kind)


async def _open_dialog(host: SurfaceAgentHost, button: str) -> tuple[Full, SemanticsNode]:
    """Click `button` on the dialogs page; the page as it was and the dialog node shown."""
    page = await _full(host)
    await _perform(host, _labelled(page, Role.BUTTON, button).node_id, _simple(ActionKind.ACTIVATE))
    shown = await _full(host)
    (dialog,) = shown.nodes
    assert shown.root == dialog.node_id
    assert dialog.role is Role.DIALOG
    assert dialog.state.modal
    return page, dialog


async def test_a_confirm_is_a_dialog_node_answered_by_dismiss(dialogs: SurfaceAgentHost) -> None:
    page, dialog = await _open_dialog(dialogs, "Confirm")
    assert (dialog.label, dialog.description) == ("Delete the file?", "confirm")
    assert dialog.actions == (ActionKind.SUBMIT, ActionKind.DISMISS)
    button = _labelled(page, Role.BUTTON, "Confirm").node_id
    blocked = await dialogs.perform_action(ByNodeId(button), _simple(ActionKind.ACTIVATE), Latest())
    assert isinstance(blocked, Rejection)
    assert blocked.code is ErrorCode.TARGET_NOT_FOUND
    assert "confirm dialog" in blocked.message
    assert "Delete the file?" in blocked.message
    receipt = await _perform(dialogs, dialog.node_id, _simple(ActionKind.DISMISS))
    assert receipt.after > receipt.before
    after = await _full(dialogs)
    assert _shows(after, "cancelled")
    assert _labelled(after, Role.BUTTON, "Confirm").node_id == button


async def test_a_prompt_takes_set_text_then_submit_accepts_with_it(
    dialogs: SurfaceAgentHost,
) -> None:
    _page, dialog = await _open_dialog(dialogs, "Prompt")
    assert (dialog.label, dialog.description) == ("Your name?", "prompt")
    assert dialog.actions == (ActionKind.SUBMIT, ActionKind.DISMISS, ActionKind.SET_TEXT)
    typed = await _perform(dialogs, dialog.node_id, SetText("ada"))
    assert typed.after == typed.before + 1
    (shown,) = (await _full(dialogs)).nodes
    assert (shown.node_id, shown.value) == (dialog.node_id, "ada")
    await _perform(dialogs, dialog.node_id, _simple(ActionKind.SUBMIT))
    assert _shows(await _full(dialogs), "name: ada")


async def test_an_alert_is_accepted_with_submit(dialogs: SurfaceAgentHost) -> None:
    _page, dialog = await _open_dialog(dialogs, "Alert")
    assert (dialog.label, dialog.description) == ("Saved!", "alert")
    unavailable = await dialogs.perform_action(ByNodeId(dialog.node_id), SetText("x"), Latest())
    assert isinstance(unavailable, Rejection)
    assert unavailable.code is ErrorCode.ACTION_UNAVAILABLE
    await _perform(dialogs, dialog.node_id, _simple(ActionKind.SUBMIT))
    assert _shows(await _full(dialogs), "alerted")


async def test_a_leave_page_confirmation_is_labelled_as_the_browser_words_it(
    browser: WebBrowser, fields: str
) -> None:
    """A beforeunload dialog has no message of the page's (browsers show none): it was a
    dialog labelled '', which told the agent nothing of what submit or dismiss would do."""
    async with hosted(browser, fields.replace("fields.html", "leaving.html")) as host:
        page = await _full(host)
        await _perform(host, _labelled(page, Role.TEXT_FIELD, "Draft").node_id, SetText("x"))
        leave = _labelled(page, Role.LINK, "Leave")
        await _perform(host, leave.node_id, _simple(ActionKind.ACTIVATE))
        (dialog,) = (await _full(host)).nodes
        assert (dialog.role, dialog.label, dialog.description) == (
            Role.DIALOG, "Leave site? Changes you made may not be saved.", "beforeunload"
        )
        await _perform(host, dialog.node_id, _simple(ActionKind.DISMISS))
        assert _labelled(await _full(host), Role.TEXT_FIELD, "Draft").value == "x"


async def test_a_status_an_alert_s_handler_writes_is_announced_once_it_is_answered(
    dialogs: SurfaceAgentHost,
) -> None:
    """The status was out of the tree while the alert was the whole of it: the commit that
    brought it back with its new text announced nothing (the tree before had no status)."""
    page, dialog = await _open_dialog(dialogs, "Alert")
    status = next(n for n in page.nodes if n.role is Role.STATUS)
    await _perform(dialogs, dialog.node_id, _simple(ActionKind.SUBMIT))
    delta = await dialogs.read_semantics(page.generation)
    assert isinstance(delta, Delta), delta
    assert [(a.node_id, a.atomic, a.text) for a in delta.announcements] == [
        (status.node_id, True, "alerted")
    ]


def _act(request_id: int, node_id: str, kind: str) -> str:
    return mcp.call(
        request_id,
        "perform_action",
        {
            "target": {"kind": "node_id", "id": node_id},
            "action": {"kind": kind},
            "precondition": {"kind": "latest"},
        },
    )


def test_a_dialog_served_over_mcp_is_answered_and_the_session_goes_on(
    tmp_path: Path, pages: str
) -> None:
    command = [sys.executable, "-m", "semledger", "serve", "--adapter", "web", "--url",
               f"{pages}dialogs.html", "--db", str(tmp_path / "web.db"),
               "--session", "d"]  # fmt: skip
    server = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )

    def ask(line: str) -> dict[str, Any]:
        return mcp.ask(server, line)

    try:
        page = ask(mcp.call(1, "read_semantics", {}))["value"]
        button = next(n["node_id"] for n in page["nodes"] if n["label"] == "Confirm")
        assert ask(_act(2, button, "activate"))["ok"]
        (dialog,) = ask(mcp.call(3, "read_semantics", {}))["value"]["nodes"]
        assert (dialog["role"], dialog["label"]) == ("dialog", "Delete the file?")
        assert dialog["actions"] == ["submit", "dismiss"]
        assert ask(_act(4, button, "activate"))["error"]["code"] == "target_not_found"
        assert ask(_act(5, dialog["node_id"], "submit"))["ok"]
        after = ask(mcp.call(6, "read_semantics", {}))["value"]
        assert any("confirmed" in (n["label"] or "") for n in after["nodes"])
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=60)
    assert server.returncode == 0, server.stderr.read() if server.stderr else ""

    def semledger(*args: str) -> subprocess.CompletedProcess[str]:
        return mcp.cli_in_process(*args, "--db", str(tmp_path / "web.db"))

    replayed = semledger("replay", "d")
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "identical" in replayed.stdout
    audited = semledger("audit", "d", "--json", "--verify")
    assert audited.returncode == 0, audited.stderr
    rows = json.loads(audited.stdout)["actions"]
    assert [(row["action"]["kind"], row["outcome"]) for row in rows] == [
        ("activate", "receipt"), ("activate", "target_not_found"), ("submit", "receipt"),
    ]  # fmt: skip


async def test_focus_moves_the_focus_to_the_node(form: SurfaceAgentHost) -> None:
    name = _labelled(await _full(form), Role.TEXT_FIELD, "Name")
    assert ActionKind.FOCUS in name.actions
    await _perform(form, name.node_id, _simple(ActionKind.FOCUS))
    after = await _full(form)
    assert after.focused == name.node_id
    assert _labelled(after, Role.TEXT_FIELD, "Name").state.focused


async def test_a_password_field_a_show_toggle_makes_text_is_still_masked(
    form: SurfaceAgentHost,
) -> None:
    """What the agent typed into a password field stays out of the tree, and so out of the
    log, once the page shows it in the clear."""
    secret = _labelled(await _full(form), Role.TEXT_FIELD, "Secret")
    await _perform(form, secret.node_id, SetText("hunter2"))
    await _perform(form, _labelled(await _full(form), Role.BUTTON, "Show").node_id,
                   _simple(ActionKind.ACTIVATE))  # fmt: skip
    shown = _labelled(await _full(form), Role.TEXT_FIELD, "Secret")
    assert (shown.value, shown.state.password) == ("\u2022" * 7, True)
    assert ActionKind.SET_TEXT in shown.actions


async def test_read_only_and_disabled_fields_are_not_offered_set_text(
    form: SurfaceAgentHost,
) -> None:
    full = await _full(form)
    code = _labelled(full, Role.TEXT_FIELD, "Code")
    locked = _labelled(full, Role.TEXT_FIELD, "Locked")
    assert code.state.read_only
    assert locked.state.disabled
    assert ActionKind.SET_TEXT in _labelled(full, Role.TEXT_FIELD, "Name").actions
    assert ActionKind.SET_TEXT not in code.actions
    assert ActionKind.SET_TEXT not in locked.actions
    unavailable = await form.perform_action(ByNodeId(code.node_id), SetText("x"), Latest())
    assert isinstance(unavailable, Rejection)
    assert unavailable.code is ErrorCode.ACTION_UNAVAILABLE
    disabled = await form.perform_action(ByNodeId(locked.node_id), SetText("x"), Latest())
    assert isinstance(disabled, Rejection)
    assert disabled.code is ErrorCode.TARGET_DISABLED
    assert form.generation == full.generation


async def test_a_click_that_times_out_says_why_in_the_adapters_words_not_playwrights(
    browser: WebBrowser, fields: str
) -> None:
    """A checkbox with no content has no size: Playwright waits for it to be visible, and
    its timeout names its own method, which the agent never called."""
    surface = await _opened(browser, fields)
    try:
        (subscribe,) = await surface.locate({"by": "id", "value": "subscribe"})
        with pytest.raises(ActionabilityError) as clicked:
            await surface.act("click", subscribe, {"timeout_ms": 1000})
        assert clicked.value.message == (
            "the element could not take click within 1000 ms: it is not visible"
            " (hidden, or of no size)"
        )
    finally:
        await surface.close()


async def test_playwright_errors_are_one_line_without_the_call_log(
    browser: WebBrowser, fields: str
) -> None:
    surface = await _opened(browser, fields)
    try:
        (code,) = await surface.locate({"by": "id", "value": "code"})
        with pytest.raises(ActionabilityError) as typed:
            await surface.act("type", code, {"text": "x", "timeout_ms": 1000})
        assert typed.value.message == (
            "the element could not take type within 1000 ms: it is not editable (read-only)"
        )
        script = "() => { throw new Error('boom') }"
        with pytest.raises(ScriptError) as thrown:
            await surface.act("evaluate", args={"script": script})
        assert thrown.value.message == "Frame.evaluate: Error: boom"
    finally:
        await surface.close()


async def test_a_control_an_overlay_covers_is_refused_naming_the_overlay(
    browser: WebBrowser, tmp_path: Path
) -> None:
    """Playwright logs a cover with children as its child "from <root> subtree"; the reason
    was read as "no element matched it" for a checkbox (clicked through its label, whose
    log names no locator) and "it did not become ready" for a button."""
    (tmp_path / "covered.html").write_text(COVERED, encoding="utf-8")
    with serve_directory(tmp_path) as url:
        # Time for Playwright's first look at what the click would hit on a loaded machine.
        surface = WebSurface({"browser": browser, "timeout_ms": 3000})
        await surface.open(SessionInit(base_url=url + "covered.html"))
        host = SurfaceAgentHost(surface)
        try:
            full = await _full(host)
            for control in (
                _labelled(full, Role.CHECKBOX, "Agree"),
                _labelled(full, Role.BUTTON, "Plain"),
            ):
                refused = await host.perform_action(
                    ByNodeId(control.node_id), _simple(ActionKind.ACTIVATE), Latest()
                )
                assert isinstance(refused, Rejection)
                assert refused.code is ErrorCode.HANDLER_REJECTED
                assert refused.message.endswith(
                    'another element, <div id="overlay">…</div>, covers it'
                ), refused.message
        finally:
            await surface.close()


MOVING = {
    "focus.html": """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Focus</title></head><body>
<label>Search <input id="search" onfocus="location.href = 'next.html'"></label>
</body></html>
""",
    "hover.html": """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Hover</title></head><body>
<button id="delete" onmouseover="record.remove(); this.remove()">Delete</button>
<p id="record">Account record</p>
</body></html>
""",
    "choice.html": """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Choice</title></head><body>
<label>Size <select id="size"><option>Small</option><option>Large</option></select></label>
<label>Tiny <select id="tiny" style="width: 0; height: 0; padding: 0; border: 0">
  <option>Low</option><option>High</option></select></label>
</body></html>
""",
    "next.html": """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Next</title></head><body>
<h1>Next page</h1></body></html>
""",
}


@pytest.fixture(scope="module")
def moving(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Pages whose handlers move the page away from under an action."""
    with served(tmp_path_factory.mktemp("moving"), MOVING) as url:
        yield url


async def _refused(host: SurfaceAgentHost, node: int, action: SemanticsAction) -> Rejection:
    outcome = await host.perform_action(ByNodeId(node), action, Latest())
    assert isinstance(outcome, Rejection), outcome
    return outcome


async def _refused_at_once(
    host: SurfaceAgentHost, role: Role, label: str, kind: ActionKind
) -> Rejection:
    """The refusal of `kind` on the node labelled `label`, told well before the surface's
    10 s timeout (a surface opened with ``timeout_ms=10_000``)."""
    node = _labelled(await _full(host), role, label)
    started = trio.current_time()
    refused = await _refused(host, node.node_id, _simple(kind))
    assert trio.current_time() - started < 5  # not the 10 s timeout
    return refused


async def _arrives(host: SurfaceAgentHost, text: str) -> bool:
    """Whether the page shows `text` within five seconds (a document still loading reads as
    the one before, busy)."""
    for _ in range(100):
        if _shows(await _full(host), text):
            return True
        await trio.sleep(0.05)
    return False


async def test_a_field_whose_focus_navigates_is_refused_saying_the_page_navigated(
    browser: WebBrowser, moving: str
) -> None:
    """set_text clears the field first, which focuses it; its focus handler went to the
    next page, and the type that followed was refused as "ref 'node 2' is not current"
    (target_not_found), naming the adapter's ref of a node the agent had just read."""
    async with hosted(browser, moving + "focus.html") as host:
        field = _labelled(await _full(host), Role.TEXT_FIELD, "Search")
        refused = await _refused(host, field.node_id, SetText("hello"))
        assert refused.code is ErrorCode.HANDLER_REJECTED
        assert refused.message == (
            f"the page navigated to {moving}next.html during the action (a focus or hover"
            " handler of the page's may have run): read again"
        )
        assert await _arrives(host, "Next page")


async def test_a_button_whose_hover_removes_it_is_refused_at_once_saying_it_left(
    browser: WebBrowser, moving: str
) -> None:
    """Playwright's hover before the click ran the button's mouseover, which removed it;
    the click waited its whole timeout for the button to come back."""
    async with hosted(browser, moving + "hover.html", timeout_ms=10_000) as host:
        refused = await _refused_at_once(host, Role.BUTTON, "Delete", ActionKind.ACTIVATE)
        assert refused.code is ErrorCode.HANDLER_REJECTED
        assert refused.message == (
            "the element left the page during the action (a focus or hover handler of the"
            " page's may have run): read again"
        )
        assert not _shows(await _full(host), "Account record")


async def test_a_select_the_page_navigates_away_from_is_refused_at_once_naming_the_page(
    browser: WebBrowser, moving: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page that navigates while selectOption runs (a timer of its, here started just as
    the option is chosen): Playwright waited its whole timeout for the ``<select>`` in the
    next document, and the agent read "could not take selectOption within 5000 ms: no
    element matched it"."""
    from playwright.async_api import Locator

    real = Locator.select_option

    async def navigated_under(self: Locator, *args: Any, **kwargs: Any) -> Any:
        await self.page.evaluate("location.href = 'next.html'")
        return await real(self, *args, **kwargs)

    monkeypatch.setattr(Locator, "select_option", navigated_under)
    async with hosted(browser, moving + "choice.html", timeout_ms=10_000) as host:
        refused = await _refused_at_once(host, Role.OPTION, "Large", ActionKind.SELECT)
        assert refused.code is ErrorCode.HANDLER_REJECTED
        assert refused.message == (
            f"the page navigated to {moving}next.html during the action (a focus or hover"
            " handler of the page's may have run): read again"
        )


async def test_a_refused_select_names_the_agents_action_not_the_adapters(
    browser: WebBrowser, moving: str
) -> None:
    """A native option is chosen with the adapter's selectOption, which the agent never
    asked for: "could not take selectOption"."""
    surface = WebSurface({"browser": browser, "timeout_ms": 1000})
    await surface.open(SessionInit(base_url=moving + "choice.html"))
    host = SurfaceAgentHost(surface)
    try:
        high = _labelled(await _full(host), Role.OPTION, "High")
        refused = await _refused(host, high.node_id, _simple(ActionKind.SELECT))
        assert refused.message == (
            "the element could not take select within 1000 ms: it is not visible (hidden, or"
            " of no size)"
        )
    finally:
        await surface.close()


@pytest.fixture
def refused_url() -> Iterator[str]:
    """A local port bound but not listening: connecting to it is refused."""
    with socket.socket() as bound:
        bound.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{bound.getsockname()[1]}/"


@pytest.mark.parametrize("reason", ["net::ERR_CONNECTION_REFUSED", "net::ERR_UNSAFE_PORT"])
async def test_an_unreachable_url_is_a_one_line_session_error_naming_it(
    browser: WebBrowser, refused_url: str, reason: str
) -> None:
    url = refused_url if reason.endswith("REFUSED") else "http://127.0.0.1:9/"
    surface = WebSurface({"browser": browser})
    with pytest.raises(SessionError) as opened:
        await surface.open(SessionInit(base_url=url))
    await surface.close()
    assert opened.value.message == f"cannot open {url}: {reason}"


async def test_a_page_that_could_not_be_loaded_names_its_url_and_the_reason(
    browser: WebBrowser, refused_url: str, tmp_path: Path
) -> None:
    """Chromium's error page has its own URL (chrome-error://) and says why in prose."""
    (tmp_path / "away.html").write_text(
        f'<!doctype html><title>Start</title><a href="{refused_url}">Away</a>', encoding="utf-8"
    )
    with serve_directory(tmp_path) as url:
        surface = await _opened(browser, url + "away.html")
        try:
            host = SurfaceAgentHost(surface)
            start = await _full(host)
            (link,) = [n for n in start.nodes if n.role is Role.LINK]
            await host.perform_action(
                ByNodeId(link.node_id), SimpleAction(ActionKind.ACTIVATE), Latest()
            )
            with trio.fail_after(10):
                while (root := _root(await _full(host))).url != refused_url:
                    await trio.sleep(0.05)
            reason = "net::ERR_CONNECTION_REFUSED"
            assert root.description == f"{refused_url} could not be loaded: {reason}"
            await surface.act("back")
            back = _root(await _full(host))
            assert (back.url, back.description) == (url + "away.html", None)
        finally:
            await surface.close()


@pytest.mark.parametrize(("replaced", "read"), [(1, True), (5, False)])
async def test_a_snapshot_a_navigation_interrupts_is_taken_again_on_the_next_document(
    browser: WebBrowser, fields: str, monkeypatch: pytest.MonkeyPatch, replaced: int, read: bool
) -> None:
    """A click that navigates a moment later can replace the document while the bridge's
    snapshot runs; the snapshot is taken again (up to five times) instead of failing."""
    from playwright.async_api import Error as PlaywrightError

    from semledger.adapters import NavigationError

    surface = await _opened(browser, fields)
    real_js = WebSurface._js
    interrupted = 0

    async def navigated_under(self: WebSurface, frame: Any, op: str, arg: object) -> Any:
        nonlocal interrupted
        if op == "snap" and interrupted < replaced:
            interrupted += 1
            raise PlaywrightError("Execution context was destroyed, by a navigation")
        return await real_js(self, frame, op, arg)

    monkeypatch.setattr(WebSurface, "_js", navigated_under)
    try:
        if read:
            assert _labelled(await _full(SurfaceAgentHost(surface)), Role.TEXT_FIELD, "Name")
        else:
            with pytest.raises(NavigationError, match="Execution context was destroyed"):
                await surface.snapshot()
        assert interrupted == replaced
    finally:
        await surface.close()


@pytest.fixture
def held_page() -> Iterator[tuple[str, threading.Event]]:
    """A page whose link leads to a document its server holds back until the event is set
    (or a minute has passed)."""
    release = threading.Event()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/held":
                release.wait(60)
                body = b"<!doctype html><title>Held</title><h1>Arrived</h1>"
            else:
                body = b"<!doctype html><title>Start</title><a href='/held'>Go</a>"
            self.send_response(200)
            self.send_header("content-type", "text/html")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", release
    finally:
        release.set()
        server.shutdown()
        server.server_close()


async def test_a_click_on_a_link_to_a_slow_server_is_answered_before_the_server_answers(
    browser: WebBrowser, held_page: tuple[str, threading.Event]
) -> None:
    """The click has happened once its navigation is under way: the receipt says the result
    is still to come, instead of coming when the document does (or at the timeout)."""
    url, release = held_page
    surface = WebSurface({"browser": browser, "timeout_ms": 120_000})
    await surface.open(SessionInit(base_url=url))
    host = SurfaceAgentHost(surface)
    try:
        link = _labelled(await _full(host), Role.LINK, "Go")
        receipt = await _perform(host, link.node_id, _simple(ActionKind.ACTIVATE))
        assert not release.is_set()  # answered while the server still held the document
        assert receipt.pending_work
        loading = await host.read_semantics(None)
        assert isinstance(loading, Full)
        assert loading.nodes[0].state.busy
        release.set()
        for _ in range(200):
            arrived = await _full(host)
            if _shows(arrived, "Arrived"):
                break
            await trio.sleep(0.05)
        assert _shows(arrived, "Arrived")
    finally:
        await surface.close()


@pytest.fixture
async def framed(browser: WebBrowser, pages: str) -> AsyncIterator[SurfaceAgentHost]:
    surface = await _opened(browser, pages + "frames.html")
    yield SurfaceAgentHost(surface)
    await surface.close()


async def test_only_the_pages_own_html_ids_are_semantic_ids_not_those_inside_its_frames(
    browser: WebBrowser, fields: str
) -> None:
    """Ids are unique per document: two frames (and the page) may each have an #email. All
    three were semantic id 'email', a duplicate_semantic_id, and a target 'email' was
    ambiguous, though the page's own field is the only one its id names."""
    async with hosted(browser, fields.replace("fields.html", "checkout.html")) as host:
        full = await _full(host)
        fields_shown = [n for n in full.nodes if n.role is Role.TEXT_FIELD]
        assert [(n.label, n.semantic_id) for n in fields_shown] == [
            ("Email", "email"), ("Card email", None), ("Card email", None)
        ]
        assert full.issues == ()
        email = BySemanticId(SemanticId("email"))
        done = await host.perform_action(email, SetText("a@b"), Latest())
        assert isinstance(done, Receipt), done
        assert _labelled(await _full(host), Role.TEXT_FIELD, "Email").value == "a@b"


async def test_a_snapshot_rooted_in_a_frame_shows_no_html_id_of_it_either(
    browser: WebBrowser, fields: str
) -> None:
    """The same element showed its id in a snapshot rooted in its frame, none in the whole
    page's."""
    surface = await _opened(browser, fields.replace("fields.html", "checkout.html"))
    try:
        whole = await surface.snapshot()
        documents = [n for n in whole.nodes if n.role == "document" and n.parent is not None]
        assert len(documents) == 2
        rooted = await surface.snapshot(root=documents[0].ref)
        fields_shown = [n for n in rooted.nodes if n.role == "textbox"]
        assert [n.name for n in fields_shown] == ["Card email"]
        assert [n.native.get("id") for n in fields_shown] == [None]
    finally:
        await surface.close()


async def test_what_an_iframe_shows_is_under_its_node_and_takes_actions(
    framed: SurfaceAgentHost,
) -> None:
    """As a user sees it: the frame's document and its controls, reached without
    switching frames first."""
    full = await _full(framed)
    iframe = _labelled(full, Role.GROUP, "Inner frame")
    (document,) = (n for n in full.nodes if n.node_id in iframe.children)
    assert (document.role, document.label) == (Role.WEB_VIEW, "Inner")
    button = _labelled(full, Role.BUTTON, "Inner button")
    assert button.node_id in document.children
    assert button.frame.origin.y > iframe.frame.origin.y  # in the page's coordinates
    assert _shows(full, "Inner idle")
    await _perform(framed, button.node_id, _simple(ActionKind.ACTIVATE))
    after = await _full(framed)
    assert _shows(after, "Inner clicked")
    focused = [n.node_id for n in after.nodes if n.state.focused]
    assert focused == [button.node_id] == [after.focused]  # not the iframe holding it too
