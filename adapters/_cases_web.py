"""The ``web`` conformance suite: fixed scripts of surface calls against the sample pages
shipped in ``semledger/adapters/pages`` (imported lazily by ``load_suite("web")``).

The suite setup serves the pages on 127.0.0.1 (a threaded ``http.server`` on a free port,
stopped afterwards); for the built-in ``web`` adapter, its first case launches one Chromium
that every case's surface shares (each case still gets its own browser context). Any other
adapter is created with ``create_surface({"adapter": name, ...})`` and the same config keys,
and no Chromium is launched for it.
"""

from __future__ import annotations

import functools
import http.server
import os
import tempfile
import threading
import zipfile
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import trio

from ._calls import (
    Checked,
    Count,
    Disabled,
    Enabled,
    Focused,
    Hidden,
    TextContains,
    TextEquals,
    TitleMatches,
    Unchecked,
    UrlMatches,
    ValueEquals,
    Visible,
)
from ._candidates import (
    AltTextCandidate,
    CoordsCandidate,
    CssCandidate,
    IdCandidate,
    LabelCandidate,
    NameCandidate,
    PlaceholderCandidate,
    ResourceIdCandidate,
    RoleCandidate,
    TestIdCandidate,
    TextCandidate,
    TitleCandidate,
    XPathCandidate,
)
from ._conformance import SUITES, CaseContext, CaseFailure, Environment, case, surface_for
from ._errors import (
    CheckError,
    DialogError,
    LocateError,
    NavigationError,
    ScriptError,
    SurfaceError,
)
from ._roles import ARIA_ROLES
from ._session import SessionInit
from ._snapshot import Snapshot, render_snapshot, snapshot_problems
from ._surface import AgentSurface, has_optional

if TYPE_CHECKING:
    from ._web import WebBrowser

PAGES: Final = Path(__file__).resolve().parent / "pages"
"""The sample pages, shipped as package data."""

TESTID_ATTRIBUTES: Final = ("data-testid", "data-qa")
SUITE: Final = "web"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()


@contextmanager
def serve_directory(directory: Path | str = PAGES) -> Iterator[str]:
    """Serve ``directory`` on 127.0.0.1 on a free port; yields the base URL (ending ``/``)."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="semledger-pages", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


class _WebEnvironment:
    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.shared: WebBrowser | None = None

    async def open(
        self, adapter: str, fixture: str
    ) -> tuple[AgentSurface, SessionInit, dict[str, Any]]:
        config: dict[str, Any] = {"testid_attributes": list(TESTID_ATTRIBUTES)}
        if adapter == "web":
            config["browser"] = await self._browser()
        surface = surface_for(adapter, config)
        init = SessionInit(base_url=f"{self.base_url}{fixture}.html")
        return surface, init, {"base_url": self.base_url, "fixture": fixture}

    async def _browser(self) -> WebBrowser:
        """The run's one Chromium, launched for the first case that needs it: another
        adapter brings its own browser, and needs neither Playwright nor Chromium here."""
        if self.shared is None:
            from ._web import WebBrowser

            self.shared = WebBrowser()
        if not self.shared.running:
            await trio.to_thread.run_sync(self.shared.start)
        return self.shared

    async def close(self) -> None:
        if self.shared is not None:
            await trio.to_thread.run_sync(self.shared.stop)


@asynccontextmanager
async def web_suite() -> AsyncIterator[Environment]:
    """Serve the pages; the built-in web adapter's cases share one Chromium."""
    with serve_directory() as base_url:
        environment = _WebEnvironment(base_url)
        try:
            yield environment
        finally:
            with trio.CancelScope(shield=True):  # a cancelled run still stops Chromium
                await environment.close()


SUITES[SUITE] = web_suite


# -- helpers --------------------------------------------------------------------------------


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise CaseFailure(message)


async def expect_raises(kind: type[SurfaceError], call: Any, what: str) -> SurfaceError:
    try:
        await call
    except kind as error:
        return error
    except CaseFailure:
        raise
    except Exception as error:
        raise CaseFailure(f"{what}: raised {type(error).__name__}, not {kind.__name__}") from error
    raise CaseFailure(f"{what}: raised nothing, expected {kind.__name__}")


async def one(ctx: CaseContext, candidate: Any) -> str:
    refs = await ctx.surface.locate(candidate)
    expect(len(refs) == 1, f"{candidate} matched {len(refs)} elements, expected 1")
    return refs[0]


def node(snap: Snapshot, role: str, name: str | None = None) -> Any:
    for n in snap.nodes:
        if n.role == role and (name is None or n.name == name):
            return n
    raise CaseFailure(f"no {role} {name!r} in the snapshot:\n{snap.text}")


async def page_text(ctx: CaseContext) -> str:
    return str(await ctx.surface.read("text"))


async def wait_text(ctx: CaseContext, ref: str, text: str) -> None:
    """The element's text contains ``text`` within a few seconds (scripts run async)."""
    with trio.move_on_after(5):
        while True:
            result = await ctx.surface.check(TextContains(text), "ref", ref)
            if result.ok:
                return
            await trio.sleep(0.05)
    actual = await ctx.surface.read("text", ref)
    raise CaseFailure(f"{ref} never showed {text!r}; it reads {actual!r}")


# -- home -----------------------------------------------------------------------------------


@case("home.snapshot_invariants", suite=SUITE, fixture="home")
async def _home_snapshot(ctx: CaseContext) -> None:
    """A sound snapshot: ARIA roles, unique refs, parents before children, hidden nodes kept
    out of the text, the rendering and hash build_snapshot computes, stable refs."""
    snap = await ctx.surface.snapshot()
    problems = snapshot_problems(snap)
    expect(not problems, f"snapshot problems: {problems}")
    expect(snap.nodes[0].ref == snap.ref and snap.nodes[0].depth == 0, "root is not first")
    bad = sorted({n.role for n in snap.nodes} - ARIA_ROLES)
    expect(not bad, f"non-ARIA roles {bad}")
    expect(snap.text == render_snapshot(snap.nodes), "text is not render_snapshot(nodes)")
    hidden = [n for n in snap.nodes if "hidden" in n.states]
    expect(any(n.name == "Hidden button" for n in hidden), "display:none button not hidden")
    expect(any(n.name == "Decorative button" for n in hidden), "aria-hidden button not hidden")
    expect("Hidden button" not in snap.text, "a hidden node is in the text")
    node(snap, "heading", "semledger sample pages")
    node(snap, "navigation", "Pages")
    node(snap, "link", "Login")
    node(snap, "img", "A tiny logo")
    node(snap, "searchbox", "Search")
    again = await ctx.surface.snapshot()
    expect(again.hash == snap.hash, "the hash changed with nothing changed")
    expect([n.ref for n in again.nodes] == [n.ref for n in snap.nodes], "refs changed")
    button = node(snap, "button", "Press me")
    expect(button.native.get("data-testid") == "primary", "native lacks the test id")
    expect(button.box is not None and button.box[2] > 0, "a visible button has no box")


@case("home.candidates", suite=SUITE, fixture="home")
async def _home_candidates(ctx: CaseContext) -> None:
    """Every web candidate kind locates its element; a kind the web lacks locates nothing."""
    button = await one(ctx, RoleCandidate("button", "Press me", exact=True))
    expect(await ctx.surface.locate(RoleCandidate("button", "press", exact=True)) == [], "exact")
    expect(button in await ctx.surface.locate(RoleCandidate("button", "press")), "substring")
    search = await one(ctx, LabelCandidate("Search"))
    expect(await one(ctx, PlaceholderCandidate("Find something")) == search, "placeholder")
    expect(await one(ctx, IdCandidate("search")) == search, "id")
    expect(await one(ctx, NameCandidate("q")) == search, "name")
    expect(await one(ctx, TestIdCandidate("primary")) == button, "testid")
    badge = await one(ctx, TestIdCandidate("qa-badge", attribute="data-qa"))
    expect(await one(ctx, TitleCandidate("Does nothing much")) == button, "title")
    expect(await one(ctx, CssCandidate("button[data-testid=primary]")) == button, "css")
    expect(await one(ctx, XPathCandidate("//button[@data-testid='primary']")) == button, "xpath")
    await one(ctx, AltTextCandidate("A tiny logo"))
    expect(await one(ctx, TextCandidate("Badge", exact=True)) == badge, "text")
    links = await ctx.surface.locate(CssCandidate("nav a"))
    expect(len(links) == 7, f"css matched {len(links)} links, expected 7")
    expect(await ctx.surface.locate(IdCandidate("no-such-id")) == [], "no match is []")
    expect(await ctx.surface.locate(ResourceIdCandidate("x")) == [], "a mobile kind is []")
    via_dict = await ctx.surface.locate({"by": "role", "role": "button", "name": "Press me"})
    expect(via_dict == [button], "a dict candidate")


@case("home.describe", suite=SUITE, fixture="home")
async def _home_describe(ctx: CaseContext) -> None:
    """describe gives role, name, text, native attributes and the path from the root."""
    button = await one(ctx, TestIdCandidate("primary"))
    desc = await ctx.surface.describe(button)
    expect(desc.role == "button" and desc.name == "Press me", f"described {desc}")
    expect(desc.native.get("data-testid") == "primary", f"native {desc.native}")
    expect(bool(desc.path) and desc.path[-1].role == "button", f"path {desc.path}")
    expect(any(step.role == "main" for step in desc.path), f"path lacks main: {desc.path}")
    search = await one(ctx, IdCandidate("search"))
    expect((await ctx.surface.describe(search)).placeholder == "Find something", "placeholder")


@case("home.click_and_read", suite=SUITE, fixture="home")
async def _home_click(ctx: CaseContext) -> None:
    """A click has its effect; read gives text, attributes, title, URL and the result."""
    button = await one(ctx, RoleCandidate("button", "Press me", exact=True))
    out = await one(ctx, IdCandidate("out"))
    result = await ctx.surface.act("click", button)
    expect(not result.navigated, "a click that does not navigate said it did")
    expect(await ctx.surface.read("text", out) == "Clicked 1", "the click had no effect")
    expect((await ctx.surface.check(TextEquals("Clicked 1"), "ref", out)).ok, "textEquals")
    expect(await ctx.surface.read("attribute", button, "data-testid") == "primary", "attr")
    expect(await ctx.surface.read("title") == "Home", "title")
    expect(str(await ctx.surface.read("url")).endswith("/home.html"), "url")
    read = await ctx.surface.act("read", out)
    expect(read.result == "Clicked 1", f"read action gave {read.result!r}")
    evaluated = await ctx.surface.act("evaluate", args={"script": "window.clicks * 10"})
    expect(evaluated.result == "10", f"evaluate gave {evaluated.result!r}")
    expect(await ctx.surface.read("result") == "10", "read result")
    expect((await ctx.surface.check(TitleMatches("^Ho"), "page")).ok, "titleMatches")
    expect((await ctx.surface.check(UrlMatches("home"), "page")).ok, "urlMatches")
    expect((await ctx.surface.check(Count(CssCandidate("nav a"), 7), "page")).ok, "count")
    expect(not (await ctx.surface.check(Count(CssCandidate("nav a"), 3), "page")).ok, "count")


@case("home.navigate_back_forward", suite=SUITE, fixture="home")
async def _home_navigation(ctx: CaseContext) -> None:
    """navigate, back, forward and refresh move between pages and say they navigated."""
    base = ctx.details["base_url"]
    result = await ctx.surface.act("navigate", args={"url": base + "login.html"})
    expect(result.navigated and str(result.url).endswith("/login.html"), f"navigate {result}")
    expect(await ctx.surface.read("title") == "Login", "not on the login page")
    back = await ctx.surface.act("back")
    expect(back.navigated and str(back.url).endswith("/home.html"), f"back {back}")
    forward = await ctx.surface.act("forward")
    expect(str(forward.url).endswith("/login.html"), f"forward {forward}")
    refreshed = await ctx.surface.act("refresh")
    expect(refreshed.navigated, "refresh did not navigate")
    relative = await ctx.surface.act("navigate", args={"url": "widgets.html"})
    expect(str(relative.url).endswith("/widgets.html"), "a relative URL resolves on base_url")


@case("home.wait_for", suite=SUITE, fixture="home")
async def _home_wait_for(ctx: CaseContext) -> None:
    """waitFor waits for an element to show: a hidden one the page shows 800 ms later is
    visible as soon as waitFor returns, with no sleep before it. sleep sleeps: a button the
    page adds 300 ms after a click is there after a sleep of 500 ms."""
    hidden = await ctx.surface.locate(RoleCandidate("button", "Hidden button"))
    expect(hidden == [], "a hidden button is located by role")
    secret = await one(ctx, IdCandidate("secret"))
    expect((await ctx.surface.check(Hidden(), "ref", secret)).ok, "display:none is not hidden")
    await ctx.surface.act("waitFor", secret, {"wait_state": "hidden"})
    await ctx.surface.act("evaluate", args={"script": _SHOW_SECRET_LATER})
    await ctx.surface.act("waitFor", secret, {"wait_state": "visible"})
    expect((await ctx.surface.check(Visible(), "ref", secret)).ok,
           "waitFor visible returned before the element showed")
    await ctx.surface.act("click", await one(ctx, IdCandidate("later")))
    await ctx.surface.act("sleep", args={"ms": 500})
    appeared = await one(ctx, IdCandidate("appeared"))
    expect((await ctx.surface.check(Visible(), "ref", appeared)).ok, "not visible")


_SHOW_SECRET_LATER: Final = (
    "setTimeout(() => { document.getElementById('secret').style.display = ''; }, 800); 'later'"
)


@case("home.screenshot_masked", suite=SUITE, fixture="home", requires=["screenshot"])
async def _home_screenshot(ctx: CaseContext) -> None:
    """screenshot writes a PNG with the masked element's box blanked: the button's box, in
    more than one colour in a shot without a mask (and in the screenshot action's), is one
    colour in a shot masking the button."""
    button = await one(ctx, TestIdCandidate("primary"))
    box = (await ctx.surface.describe(button)).box
    expect(box is not None, "the button has no box")
    assert box is not None
    x, y, w, h = box
    inner = (int(x) + 2, int(y) + 2, int(x + w) - 2, int(y + h) - 2)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "plain.png")
        await ctx.surface.screenshot(path, [])
        _shows_the_button(_colours(path, inner), "a screenshot without a mask")
        path = os.path.join(tmp, "shot.png")
        await ctx.surface.screenshot(path, [button])
        colours = _colours(path, inner)
        expect(colours is not None and len(colours) == 1, f"mask not blank: {colours}")
        path2 = os.path.join(tmp, "act.png")
        result = await ctx.surface.act("screenshot", args={"path": path2})
        expect(os.path.getsize(path2) > 0 and result.result == path2, "screenshot action")
        _shows_the_button(_colours(path2, inner), "the screenshot action's shot")


def _colours(path: str, area: tuple[int, int, int, int]) -> list[tuple[int, Any]] | None:
    """The colours in `area` of the PNG at `path`; None for more than four. An image that
    does not hold `area` fails the case (a crop beyond the image is black, one colour)."""
    from PIL import Image

    with Image.open(path) as image:
        left, top, right, bottom = area
        expect(left >= 0 and top >= 0 and image.width >= right and image.height >= bottom,
               f"the screenshot is {image.width}x{image.height} pixels: it does not hold "
               f"the button's box, from ({left}, {top}) to ({right}, {bottom})")
        return image.convert("RGB").crop(area).getcolors(maxcolors=4)


def _shows_the_button(colours: list[tuple[int, Any]] | None, shot: str) -> None:
    expect(colours is None or len(colours) > 1,
           f"{shot} shows the button's box in one colour: it does not show the button")


@case("home.trace", suite=SUITE, fixture="home", requires=["trace"])
async def _home_trace(ctx: CaseContext) -> None:
    """trace(True) then trace(False, path) writes a Playwright trace zip."""
    expect(has_optional(ctx.surface, "trace"), "trace is claimed but absent")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.zip")
        await ctx.surface.trace(True)  # type: ignore[attr-defined]
        await ctx.surface.act("click", await one(ctx, TestIdCandidate("primary")))
        await ctx.surface.trace(False, path)  # type: ignore[attr-defined]
        expect(zipfile.is_zipfile(path), "no trace zip written")


# -- login / dashboard ----------------------------------------------------------------------


@case("login.type_and_submit", suite=SUITE, fixture="login")
async def _login_submit(ctx: CaseContext) -> None:
    """Typing shows values after names (a password masked); submit lands on the dashboard."""
    user = await one(ctx, LabelCandidate("Username"))
    password = await one(ctx, LabelCandidate("Password"))
    await ctx.surface.act("type", user, {"text": "ada"})
    await ctx.surface.act("type", password, {"text": "hunter2"})
    snap = await ctx.surface.snapshot()
    expect('- textbox "Username": ada [required]' in snap.text, f"no value:\n{snap.text}")
    expect("hunter2" not in snap.text, "the password is in the snapshot")
    expect((await ctx.surface.check(ValueEquals("ada"), "ref", user)).ok, "valueEquals")
    result = await ctx.surface.act("submit", user)
    expect(result.navigated, "submit did not navigate")
    expect(await ctx.surface.read("title") == "Dashboard", "not on the dashboard")
    greeting = await one(ctx, IdCandidate("greeting"))
    await wait_text(ctx, greeting, "Welcome, ada")


@case("login.empty_submit_shows_alert", suite=SUITE, fixture="login")
async def _login_empty(ctx: CaseContext) -> None:
    """A hidden alert is hidden until the empty form is submitted."""
    error = await one(ctx, IdCandidate("error"))
    expect((await ctx.surface.check(Hidden(), "ref", error)).ok, "the error shows early")
    await ctx.surface.act("click", await one(ctx, RoleCandidate("button", "Sign in", True)))
    expect((await ctx.surface.check(Visible(), "ref", error)).ok, "the error never showed")
    node(await ctx.surface.snapshot(), "alert")


@case("login.state_restore", suite=SUITE, fixture="login", requires=["restore"])
async def _login_restore(ctx: CaseContext) -> None:
    """state() holds the cookie, local storage and URL; restore() brings them back."""
    await ctx.surface.act("type", await one(ctx, LabelCandidate("Username")), {"text": "grace"})
    await ctx.surface.act("click", await one(ctx, RoleCandidate("button", "Sign in", True)))
    await wait_text(ctx, await one(ctx, IdCandidate("greeting")), "Welcome, grace")
    saved = await ctx.surface.state()
    expect(any(c.name == "session" and c.value == "grace" for c in saved.cookies), "no cookie")
    items = [(i.name, i.value) for o in saved.origins for i in o.local_storage]
    expect(("user", "grace") in items, f"local storage {items}")
    expect(str(saved.url).endswith("/dashboard.html"), f"url {saved.url}")
    await ctx.surface.act("click", await one(ctx, IdCandidate("signout")))
    await ctx.surface.act("navigate", args={"url": "home.html"})
    await ctx.surface.restore(saved)
    expect(str(await ctx.surface.read("url")).endswith("/dashboard.html"), "url not restored")
    await wait_text(ctx, await one(ctx, IdCandidate("greeting")), "Welcome, grace")
    after = await ctx.surface.state()
    expect(any(c.name == "session" for c in after.cookies), "cookie not restored")


# -- widgets --------------------------------------------------------------------------------


@case("widgets.select_option", suite=SUITE, fixture="widgets")
async def _widgets_select(ctx: CaseContext) -> None:
    """selectOption on a select and a multi-select; deselectOption and deselectAll."""
    colour = await one(ctx, LabelCandidate("Colour"))
    await ctx.surface.act("selectOption", colour, {"values": ["Blue"]})
    expect(await ctx.surface.read("value", colour) == "blue", "select by label")
    snap = await ctx.surface.snapshot()
    expect('- combobox "Colour": Blue' in snap.text, f"select value:\n{snap.text}")
    toppings = await one(ctx, LabelCandidate("Toppings"))
    await ctx.surface.act("selectOption", toppings, {"values": ["cheese", "olives"]})
    expect(await ctx.surface.read("value", toppings) == "cheese,olives", "multi select")
    snap = await ctx.surface.snapshot()
    expect("selected" in node(snap, "option", "Olives").states, "option not selected")
    await ctx.surface.act("deselectOption", toppings, {"values": ["cheese"]})
    expect(await ctx.surface.read("value", toppings) == "olives", "deselectOption")
    await ctx.surface.act("deselectAll", toppings)
    expect(await ctx.surface.read("value", toppings) == "", "deselectAll")


@case("widgets.checkboxes_and_radios", suite=SUITE, fixture="widgets")
async def _widgets_checks(ctx: CaseContext) -> None:
    """Checkable roles are checked or unchecked; setChecked sets the state asked for, and
    asked for the state a box is in already, leaves it (it never toggles)."""
    snap = await ctx.surface.snapshot()
    expect("unchecked" in node(snap, "checkbox", "Newsletter").states, "no unchecked state")
    expect("checked" in node(snap, "checkbox", "Terms").states, "no checked state")
    news = await one(ctx, LabelCandidate("Newsletter"))
    await ctx.surface.act("setChecked", news, {"checked": True})
    expect((await ctx.surface.check(Checked(), "ref", news)).ok, "setChecked true")
    await ctx.surface.act("setChecked", news, {"checked": True})
    expect((await ctx.surface.check(Checked(), "ref", news)).ok,
           "setChecked true on a checked box unchecked it")
    await ctx.surface.act("setChecked", news, {"checked": False})
    expect((await ctx.surface.check(Unchecked(), "ref", news)).ok, "setChecked false")
    await ctx.surface.act("setChecked", news, {"checked": False})
    expect((await ctx.surface.check(Unchecked(), "ref", news)).ok,
           "setChecked false on an unchecked box checked it")
    small = await one(ctx, RoleCandidate("radio", "Small", exact=True))
    await ctx.surface.act("setChecked", small, {"checked": True})
    large = await one(ctx, RoleCandidate("radio", "Large", exact=True))
    expect((await ctx.surface.check(Unchecked(), "ref", large)).ok, "radio group")
    heading = await one(ctx, RoleCandidate("heading", "Widgets"))
    await expect_raises(CheckError, ctx.surface.check(Checked(), "ref", heading), "heading")


@case("widgets.range_and_textarea", suite=SUITE, fixture="widgets")
async def _widgets_values(ctx: CaseContext) -> None:
    """A range and a textarea take typed values, shown after their names; clear empties."""
    volume = await one(ctx, LabelCandidate("Volume"))
    await ctx.surface.act("type", volume, {"text": "7"})
    notes = await one(ctx, LabelCandidate("Notes"))
    await ctx.surface.act("clear", notes)
    expect(await ctx.surface.read("value", notes) == "", "clear")
    await ctx.surface.act("type", notes, {"text": "hello"})
    snap = await ctx.surface.snapshot()
    expect('- slider "Volume": 7' in snap.text, f"range value:\n{snap.text}")
    expect('- textbox "Notes": hello' in snap.text, f"textarea value:\n{snap.text}")


@case("widgets.states", suite=SUITE, fixture="widgets")
async def _widgets_states(ctx: CaseContext) -> None:
    """disabled, readonly, collapsed/expanded and focused are normalised states."""
    snap = await ctx.surface.snapshot()
    expect("disabled" in node(snap, "button", "Unavailable").states, "disabled")
    expect("readonly" in node(snap, "textbox", "Code").states, "readonly")
    more = node(snap, "button", "More")
    expect("collapsed" in more.states, "collapsed")
    await ctx.surface.act("click", more.ref)
    snap = await ctx.surface.snapshot()
    expect("expanded" in node(snap, "button", "More").states, "expanded")
    expect("focused" in node(snap, "button", "More").states, "focused after a click")
    expect((await ctx.surface.check(Focused(), "ref", more.ref)).ok, "focused predicate")
    disabled = node(snap, "button", "Unavailable").ref
    expect((await ctx.surface.check(Disabled(), "ref", disabled)).ok, "disabled predicate")
    expect((await ctx.surface.check(Enabled(), "ref", more.ref)).ok, "enabled predicate")


@case("widgets.pointer_and_keyboard", suite=SUITE, fixture="widgets")
async def _widgets_pointer(ctx: CaseContext) -> None:
    """hover, doubleClick, rightClick, pressAndHold/release, hoverAndClick, press, keyDown
    and keyUp; each pointer action is held to the events it adds to the page's log itself."""
    target = await one(ctx, IdCandidate("multi"))
    log = await one(ctx, IdCandidate("pointer"))
    away = await one(ctx, RoleCandidate("heading", "Widgets"))
    for action, ref, logs, never in (
        ("hover", target, ("hover",), ()),
        ("doubleClick", target, ("dblclick",), ()),
        ("rightClick", target, ("contextmenu",), ()),
        ("pressAndHold", target, ("down",), ("up",)),
        ("release", target, ("up",), ()),
        ("hover", away, (), ()),
        ("hoverAndClick", target, ("hover", "down", "up"), ()),
    ):
        before = str(await ctx.surface.read("text", log)).split()
        await ctx.surface.act(action, ref)
        new = str(await ctx.surface.read("text", log)).split()[len(before):]
        for what in logs:
            expect(what in new, f"{action} logged {new}, with no {what}")
        for what in never:
            expect(what not in new, f"{action} logged {new}, with {what}")
    keys = await one(ctx, IdCandidate("keys"))
    await ctx.surface.act("press", target, {"key": "a"})
    await ctx.surface.act("keyDown", args={"key": "Shift"})
    await ctx.surface.act("keyUp", args={"key": "Shift"})
    text = str(await ctx.surface.read("text", keys))
    expect("down:a" in text and "down:Shift" in text and "up:Shift" in text, f"keys {text!r}")


@case("widgets.scroll", suite=SUITE, fixture="widgets")
async def _widgets_scroll(ctx: CaseContext) -> None:
    """scrollToBottom, scrollToTop and scrollIntoView move the viewport."""
    position = {"script": "String(Math.round(window.scrollY))"}
    await ctx.surface.act("scrollToBottom")
    expect(int(str((await ctx.surface.act("evaluate", args=position)).result)) > 0, "bottom")
    await ctx.surface.act("scrollToTop")
    expect((await ctx.surface.act("evaluate", args=position)).result == "0", "top")
    await ctx.surface.act("scrollIntoView", await one(ctx, IdCandidate("bottom")))
    expect(int(str((await ctx.surface.act("evaluate", args=position)).result)) > 0, "into view")


@case("widgets.upload", suite=SUITE, fixture="widgets", requires=["upload"])
async def _widgets_upload(ctx: CaseContext) -> None:
    """upload attaches a file to a file control."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "report.txt")
        Path(path).write_text("hello\n")
        await ctx.surface.act(
            "upload", await one(ctx, LabelCandidate("Attachment")), {"files": [path]}
        )
    await wait_text(ctx, await one(ctx, IdCandidate("file-name")), "report.txt")


@case("widgets.drag", suite=SUITE, fixture="widgets", requires=["drag"])
async def _widgets_drag(ctx: CaseContext) -> None:
    """dragTo drags one element onto another."""
    source = await one(ctx, RoleCandidate("button", "Drag me"))
    target = await one(ctx, RoleCandidate("region", "Drop zone"))
    await ctx.surface.act("dragTo", source, ref2=target)
    await wait_text(ctx, target, "Dropped")


# -- dialogs ------------------------------------------------------------------------------


@case("dialogs.alert_observed", suite=SUITE, fixture="dialogs", requires=["dialogs"])
async def _dialogs_alert(ctx: CaseContext) -> None:
    """An alert is observed as a dialog, blocks page calls with DialogError, and is answered."""
    await ctx.surface.act("click", await one(ctx, IdCandidate("alert")))
    expect((await ctx.surface.check(Visible(), "dialog")).ok, "no dialog observed")
    expect((await ctx.surface.check(TextEquals("Saved!"), "dialog")).ok, "dialog message")
    await expect_raises(DialogError, ctx.surface.snapshot(), "snapshot with a dialog open")
    await ctx.surface.act("dialog", args={"accept": True})
    expect((await ctx.surface.check(Hidden(), "dialog")).ok, "the dialog stayed")
    await wait_text(ctx, await one(ctx, IdCandidate("result")), "alerted")


@case("dialogs.confirm_answered", suite=SUITE, fixture="dialogs", requires=["dialogs"])
async def _dialogs_confirm(ctx: CaseContext) -> None:
    """A confirm accepted and a confirm dismissed each have their effect."""
    button = await one(ctx, IdCandidate("confirm"))
    result = await one(ctx, IdCandidate("result"))
    await ctx.surface.act("click", button)
    expect((await ctx.surface.check(TextContains("Delete"), "dialog")).ok, "confirm message")
    await ctx.surface.act("dialog", args={"accept": True})
    await wait_text(ctx, result, "confirmed")
    await ctx.surface.act("click", button)
    await ctx.surface.act("dialog", args={"accept": False})
    await wait_text(ctx, result, "cancelled")


@case("dialogs.prompt_answered", suite=SUITE, fixture="dialogs", requires=["dialogs"])
async def _dialogs_prompt(ctx: CaseContext) -> None:
    """A prompt is answered with text."""
    await ctx.surface.act("click", await one(ctx, IdCandidate("prompt")))
    await ctx.surface.act("dialog", args={"accept": True, "prompt_text": "Ada"})
    await wait_text(ctx, await one(ctx, IdCandidate("result")), "name: Ada")


@case("dialogs.absent_is_dialog_error", suite=SUITE, fixture="dialogs", requires=["dialogs"])
async def _dialogs_absent(ctx: CaseContext) -> None:
    """Answering when no dialog is open is a DialogError; a dialog check is just false."""
    await expect_raises(
        DialogError, ctx.surface.act("dialog", args={"accept": True, "timeout_ms": 100}), "dialog"
    )
    expect(not (await ctx.surface.check(Visible(), "dialog")).ok, "a dialog seen from nothing")


# -- frames, windows, canvas -------------------------------------------------------------------


@case("frames.switch_and_read", suite=SUITE, fixture="frames", requires=["frames"])
async def _frames(ctx: CaseContext) -> None:
    """switchFrame into an iframe (by ref and by name), act there, and back to the main frame;
    a frame the page lacks is an error, never a switch that did nothing."""
    await expect_raises(
        SurfaceError,
        ctx.surface.act("switchFrame", args={"target": "no-such-frame", "timeout_ms": 200}),
        "a frame the page lacks",
    )
    snap = await ctx.surface.snapshot()
    frame = next((n for n in snap.nodes if n.name == "Inner frame"), None)
    expect(frame is not None, f"the iframe is not a node:\n{snap.text}")
    assert frame is not None
    await ctx.surface.act("switchFrame", frame.ref)
    inner = await ctx.surface.snapshot()
    button = node(inner, "button", "Inner button")
    await ctx.surface.act("click", button.ref)
    await wait_text(ctx, await one(ctx, IdCandidate("inner-out")), "Inner clicked")
    await ctx.surface.act("switchFrame", args={"target": "main"})
    expect(await ctx.surface.locate(IdCandidate("inner-out")) == [], "still in the frame")
    await ctx.surface.act("switchFrame", args={"target": "inner"})
    expect(len(await ctx.surface.locate(IdCandidate("inner-out"))) == 1, "switch by name")
    await ctx.surface.act("switchFrame", args={"target": "parent"})
    node(await ctx.surface.snapshot(), "heading", "Frames")


@case("windows.new_tab", suite=SUITE, fixture="windows", requires=["windows"])
async def _windows(ctx: CaseContext) -> None:
    """A link opening a new tab; switchWindow to it and back, closeOtherWindows, resize."""
    await ctx.surface.act("click", await one(ctx, RoleCandidate("link", "Open a new tab")))
    await ctx.surface.act("switchWindow", args={"target": "new"})
    expect(await ctx.surface.read("title") == "Popup", "not on the popup")
    node(await ctx.surface.snapshot(), "heading", "A new tab")
    await ctx.surface.act("switchWindow", args={"target": "0"})
    expect(await ctx.surface.read("title") == "Windows", "not back on the first tab")
    await ctx.surface.act("switchWindow", args={"target": "Popup"})
    await ctx.surface.act("closeOtherWindows")
    await expect_raises(
        SurfaceError,
        ctx.surface.act("switchWindow", args={"target": "Windows", "timeout_ms": 200}),
        "a closed window",
    )
    await ctx.surface.act("resizeWindow", args={"width": 640, "height": 480})
    width = await ctx.surface.act("evaluate", args={"script": "String(window.innerWidth)"})
    expect(width.result == "640", f"resize gave width {width.result}")


@case("canvas.coords_click", suite=SUITE, fixture="canvas")
async def _canvas(ctx: CaseContext) -> None:
    """A canvas with an ARIA role is a node; coords locate it and a click paints."""
    snap = await ctx.surface.snapshot()
    paint = node(snap, "button", "Paint")
    assert paint.box is not None
    x, y, w, h = paint.box
    refs = await ctx.surface.locate(CoordsCandidate(x + w / 2, y + h / 2))
    expect(refs == [paint.ref], f"coords located {refs}, not the canvas {paint.ref}")
    await ctx.surface.act("click", refs[0])
    await wait_text(ctx, await one(ctx, IdCandidate("canvas-out")), "Painted at")


# -- errors ------------------------------------------------------------------------------------


@case("errors.unknown_ref_is_locate_error", suite=SUITE, fixture="home")
async def _errors_unknown_ref(ctx: CaseContext) -> None:
    """An unknown ref, and a ref whose page has gone, are LocateErrors."""
    await expect_raises(LocateError, ctx.surface.act("click", "nope"), "an unknown ref")
    await expect_raises(LocateError, ctx.surface.describe("e999999"), "describe unknown")
    button = await one(ctx, TestIdCandidate("primary"))
    await ctx.surface.act("navigate", args={"url": "login.html"})
    await expect_raises(LocateError, ctx.surface.act("click", button), "a stale ref")
    await expect_raises(LocateError, ctx.surface.check(Visible(), "ref", "nope"), "check")


@case("errors.quit_refused", suite=SUITE, fixture="home")
async def _errors_quit(ctx: CaseContext) -> None:
    """quit is refused with a NavigationError, as a desktop adapter refuses navigate."""
    await expect_raises(NavigationError, ctx.surface.act("quit"), "quit")
    expect(await ctx.surface.read("title") == "Home", "the page went away")


@case("errors.check_errors", suite=SUITE, fixture="home")
async def _errors_check(ctx: CaseContext) -> None:
    """A predicate on the wrong subject is a CheckError; a false one is ok=False."""
    await expect_raises(CheckError, ctx.surface.check(Checked(), "page"), "checked on a page")
    await expect_raises(CheckError, ctx.surface.check(Visible(), "ref"), "no ref")
    out = await one(ctx, IdCandidate("out"))
    result = await ctx.surface.check(TextEquals("something else"), "ref", out)
    expect(not result.ok and result.actual == "Not clicked", f"false predicate {result}")


@case("errors.script_error", suite=SUITE, fixture="home")
async def _errors_script(ctx: CaseContext) -> None:
    """A script that throws is a ScriptError; a bad navigation a NavigationError."""
    await expect_raises(
        ScriptError,
        ctx.surface.act("evaluate", args={"script": "(() => { throw new Error('boom') })()"}),
        "throw",
    )
    await expect_raises(
        NavigationError,
        ctx.surface.act("navigate", args={"url": "http://127.0.0.1:9/nothing"}),
        "a refused connection",
    )


@case("dashboard.signed_out_greeting", suite=SUITE, fixture="dashboard")
async def _dashboard(ctx: CaseContext) -> None:
    """With nothing in local storage the dashboard greets nobody; its link is a link."""
    await wait_text(ctx, await one(ctx, IdCandidate("greeting")), "Nobody is signed in")
    node(await ctx.surface.snapshot(), "link", "Home")
