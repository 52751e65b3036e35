"""The ``web`` adapter: a Chromium page driven through Playwright (kind web, SPEC §7).

``create_surface({"adapter": "web"})`` builds a `WebSurface`; ``open(SessionInit(base_url=
...))`` starts a browser context on that URL.

Bridging Playwright to Trio
---------------------------
Playwright's Python API is asyncio or sync, and its objects must stay on the thread (and
event loop) that made them. Each `WebBrowser` therefore owns ONE dedicated thread running
ONE asyncio loop, on which Playwright's *asyncio* API drives one Chromium. Trio hands it
work with ``asyncio.run_coroutine_threadsafe`` and waits on a ``trio.Event`` that the
future's done-callback sets through the Trio token (``run_sync_soon``), so a call costs one
hop each way and no Trio worker thread sits blocked; cancelling the Trio caller cancels the
asyncio task.

Why the asyncio API on the dedicated thread rather than the sync API: the sync API is the
same client run on a per-thread loop through greenlets, and it can have only one call in
flight. A native ``alert``/``confirm`` blocks the page, so the ``click`` that opened it does
not return until the dialog is answered (Playwright times it out otherwise); with the sync
API the thread is stuck inside that click and the ``dialog`` action that would answer it can
never run. On an asyncio loop the click is a task: ``act`` races it against the dialog
event, returns as soon as a dialog opens, and the click finishes in the background once
``act("dialog")`` answers. Driving the DevTools protocol from Trio directly was rejected:
it means re-implementing actionability waits, input dispatch, frames, file upload, tracing
and dialogs, all of which Playwright already does correctly.

Snapshots
---------
A DOM walk in page JavaScript (``_web_js``) computes ARIA roles, names, values and the
normalised states in one ``evaluate`` per snapshot; measured against Playwright's own
``aria_snapshot()`` by ``bench/web.py``. Elements with a non-generic role are nodes, and so
are generic ones that matter (explicit role, tabindex, a test id, an aria-label, an
aria-live region, a click attribute, iframes and canvases, an element a relation points at),
and text runs that no name-from-content node absorbs (role ``text``). The snapshot covers
the current frame (``switchFrame`` changes it) and the frames shown in it: an iframe is a
``generic`` node named by its title, holding its frame's document (``document``) and what
that holds, in the page's coordinates; a ref in a frame is acted on without switching to it.
A frame that cannot be read as the snapshot is taken (it is being navigated) shows as its
iframe alone. An element's id (``native["id"]``, which the MCP bridge makes its semantic id)
is unique only in its document: one in a frame shown in the snapshot is no ``id`` there,
as two frames of one page may each have an ``#email``.
A modal in a frame (a ``<dialog>`` it showed with ``showModal``,
``aria-modal``) confines what that frame shows to it, not the page: the frame's other
content is out of the tree, and the dialog is no ``modal`` of it, so the page around the
frame stays in the tree and takes input, as in Chromium. Page text that is not valid Unicode
(a lone UTF-16 surrogate: an emoji a script cut in half) reads as U+FFFD, as Chromium draws
it, wherever it shows: names, values, the title, a dialog's message, what an action answers,
an error. A password's value is masked, one ``•`` per character. An editable element (the
outermost ``contenteditable`` one) is a ``textbox`` whose value is its text, a line per line
shown, so text typed into it reads back as typed (``innerText`` would add a line for each blank
line Chromium types as ``<div><br></div>``); what is inside it is its content, not nodes; a
``textbox`` role on an element that takes no text (an input of a type that holds none, such as
a checkbox, or no input, textarea or editable element) is ``readonly``, as set_text cannot
fill it. A tree
item is named by its own content, not its nested items' (a click lands on that content: an
expanded item's centre is over its children). A shadow root is walked as shown: a slot holds
what is assigned to it, else its fallback; an id inside a shadow root is unique only there,
so it is no ``id`` in ``native``. A closed shadow root (``attachShadow({mode: "closed"})``)
is not in the tree: neither the page's script nor Playwright's selectors can reach into one,
so its host shows with its own children as if it had none, and what the root shows (a
button, say) can be neither read nor targeted. Content under ``inert`` is ``disabled``.
Boxes are in the viewport's coordinates, with how far the page is scrolled on the root
(``native["scroll"]``, ``"x y"``, when it is); a text node's is the box around its lines (a
``Range`` over it), not its element's. An element an animation or transition is
moving (its transform, position or size) keeps the box it had as it began until it stops, so
a spinner spinning is not a change; text in it keeps the box the movement's first snapshot
gave it.
What the normalised states cannot say is in ``native``:
``invalid`` (``aria-invalid``, or a field the browser's validation refused once the user
was at it, ``:user-invalid``, whose message is then its description), ``busy``
(``aria-busy``), ``pressed`` (``aria-pressed``), ``checked: "mixed"`` (an
indeterminate checkbox, ``aria-checked="mixed"``), ``modal`` (a dialog shown with
``showModal()``, ``aria-modal``), ``closedby`` (a ``<dialog>``'s ``closedBy`` as shown:
``any`` and ``closerequest`` close on Escape, ``none`` does not, nor does a ``show()`` one
with no ``closedby`` attribute), ``live`` and ``atomic`` (``aria-live``, ``aria-atomic``,
or a status's or an alert's implicit ones), ``multiline`` (a ``<textarea>``, an editable
element, ``aria-multiline``), ``editable`` (a combo box one types into: a text input, with
``role="combobox"`` or a ``list``, or an editable element), ``multiselectable`` (a
``<select multiple>``, ``aria-multiselectable``), ``multiple`` (an option of a ``<select
multiple>``), a range's value, bounds and step
(``valuenow``, ``valuemin``, ``valuemax``, ``valuestep``, ``valuetext``, and
``valuesettable`` on a range or number input, whose ``type`` refuses a value between its
steps, naming the nearest, text that is no number, and a value past a range's bounds, which
it would clamp; a date, time or color input refuses text not in its format,
naming the format, and keeps its value), the refs an element's ``aria-labelledby``,
``-describedby``, ``-controls``, ``-errormessage`` and ``-activedescendant`` point at
(``rel:labelled_by`` and so on; an element one points at is a node of its own),
``aria-setsize``, ``-posinset``, ``-rowindex``, ``-rowcount``, ``-rowspan``, ``-colindex``,
``-colcount`` and ``-colspan`` (``setsize`` and so on), ``focusable`` (``"true"`` or
``"false"`` on every element: whether it takes the keyboard focus, its ``tabindex`` given or
not, as a link with an ``href``, an enabled control, an editable element or a dialog does),
``selectable`` (``"true"`` or ``"false"`` on a row or cell: whether ARIA gives it a
selection, an ``aria-selected`` or a place in a ``grid`` or ``treegrid``, which a static
table's lacks), and the document's ``url`` on the root.
Refs (``e<n>``) come from one counter per surface, are kept per document in a WeakMap and
stamped as ``data-semledger-ref``, so they stay valid across snapshots for as long as the
element lives and are never reused by a later document; a ref whose element is gone is a
LocateError.

Pages that keep a call waiting
------------------------------
From the moment a page's main frame requests another document until that document commits,
Chromium answers nothing about the page: an evaluation, an input, a screenshot all wait,
for as long as the server takes. The surface follows the navigation requests of each page
(Playwright's ``request``/``requestfinished``/``requestfailed`` and ``framenavigated``
events) and, while one is pending, raises NavigationError at once with the URL it waits for
in ``details["pending"]`` instead of sending the call; a navigation that starts while a
snapshot is being taken ends that snapshot the same way. A click or key that starts a
navigation returns once the navigation has waited a second for its server (Playwright's
action would wait for the document to commit, up to the action's timeout). Navigating actions
(``navigate``, ``back``, ``forward``, ``refresh``) and window switching still go ahead. A
snapshot the page does not answer within ``timeout_ms`` (a script of its that has not
returned) is a TimeoutError, and so is every call after it until the page answers again
(``details["busy"]``), rather than one more call queued behind the script. An action
whose page's script sent requests (fetch, XHR) that were unanswered when it returned says so
(``ActResult.pending``) rather than wait for them. A navigation that fails (a server that
cannot be reached) leaves Chromium's error page, whose root's ``url`` is the one that failed
and whose description says why (``native["failure"]``: ``net::ERR_CONNECTION_REFUSED``).

Windows
-------
An action that opens a window (window.open, a link or a form with a target) says so
(``ActResult.opened``) once Playwright reports the new page: Chromium announces the window
(``Page.windowOpen``, heard on a CDP session of each page) before the click returns, the page
comes a moment later, and the action waits up to two seconds for it. It does not switch to
it (``switchWindow`` does; the MCP bridge does, as a browser shows a new tab). A snapshot's
root says how many windows the session has open when more than one (``native["windows"]``);
``closeWindow`` closes the current one and goes back to the one that opened it, else to the
newest left, and refuses to close the last.

An action that times out after its input reached the page has happened, and says so by
returning: a click Playwright had performed (its handler has not returned, or the navigation
it started has not committed) or a key it had pressed, told by the call log of the last
attempt. A page still running that handler is then busy, as above. A click whose element
never took it (hidden, covered, detached, which Playwright retries until the timeout) is the
ActionabilityError it was. A click on a control that something else covers where it would
land, or that is out of sight, goes to one of its labels that is shown (the one over it
first), as a person clicks the label they see: a checkbox hidden in its label
(``.visually-hidden``) or under it (Bootstrap's ``.btn-check``). The click lands on a part of
the label that takes no click of its own, not on a link in it ("I agree to the terms").
``setChecked`` clicks as ``click`` does, when the box is not as asked already, and reads the
state back on the box it clicked; on a page that renders the box anew on the change, the box
now bearing its id says the state at once (``details["replaced"]`` when it is not as asked),
and with none the click stands.

An action whose page goes to another document as it runs (a focus or hover handler the
action set off, a timer of the page's) is a NavigationError saying so, with the URL in
``details["navigated"]``, as soon as the next document commits, rather than a wait for its
element in that document until the timeout; a ref of a document the page has left since is
a LocateError saying so, with the same detail. A click whose element leaves the page as it
is given (its hover handler removed it) is an ActionabilityError saying so at once
(``details["left"]``).

Refusals and choices
--------------------
``quit`` raises NavigationError: the seed has a web adapter refuse it "exactly as a desktop
adapter refuses navigate", and that refusal is the navigation failure class (the step asks
to leave the page's application, which a tab cannot do); ``details["refused"]`` says so.
``invoke`` (story composition) belongs above the surface and is a DataError. While a dialog
is open every call that needs the page raises DialogError (unexpected and present) instead
of hanging, with the dialog's ``type``, ``message`` and prompt ``default`` in ``details``
(the MCP bridge shows the dialog from them; a ``beforeunload`` one, which has no message of
the page's, has the words Chromium shows in it); ``check(..., "dialog")``, ``act("dialog")``,
``read("url"|"result")`` still work. ``focus`` (an action beyond the seed's set, as the
runtime adapter has it) gives the element keyboard focus, and is an ActionabilityError on
one that cannot take it. ``press`` on a ref sends the key
to the element, or, where it takes no focus, to what has the focus in it, else to the first
element in it that takes it (a user tabs into a dialog to press Escape); on an element that
neither takes the focus nor holds one that does, it is an ActionabilityError, and nothing
moves: the key would reach whatever had the focus. ``closeWindow`` (beyond the seed's set too)
closes the current window (see Windows). Playwright's errors are told in
their first line, without the call log. ``selectOption`` sets exactly the given values
(matched by value or label), refusing at once several for a select of one choice and a
disabled option, and, as a person choosing the option a select shows, sends the
page no change event when they are set already; ``deselectOption``/``deselectAll`` clear
options of a multi-select. ``clear`` given the ``text`` a ``type`` sets next leaves the field
as it is, focused, for that ``type`` to replace its content whole, or refuses text that does
not fit (see ``_clear``).
``type`` (and ``clear`` given its ``text``) refuses, with nothing typed, text the browser
would change unseen: text longer than a field's ``maxlength``, which it cuts short, naming
the limit, and a line break in a one-line input, which it types as a space. It inserts the
text as a paste does but for its last character, typed as a key, so that a page that follows
typing by its keys sees a keystroke with the whole text in (see ``_fill``); a last character
that is not on a US keyboard (é, CJK, an emoji) Playwright types as inserted text, with no
``keydown`` or ``keyup``, and such a page hears no key for it.
Opening a session, ``navigate``, ``back``, ``forward`` and ``refresh`` wait for the
document to be ready (DOMContentLoaded), not for its images, frames and trackers: a page is
there to read and act on once its DOM is; ``waitFor`` without a ref still waits for the
whole ``load``.

Config keys: ``testid_attributes`` (list of attribute names reported in ``native`` and
describe; default ``["data-testid"]``), ``timeout_ms`` (default 5000: how long each call
waits, a page load as much as any other; ``SessionInit.timeout_ms`` overrides it),
``headless`` (default true), ``executable_path`` (default ``$PLAYWRIGHT_CHROMIUM_EXECUTABLE`` or
``/usr/bin/chromium``), ``args`` (extra Chromium switches) and ``browser`` (a started
`WebBrowser` to share: each surface then only makes its own browser context, which is how
the conformance suite and the tests avoid a launch per case).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import logging
import os
import re
import threading
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Final, TypeVar, cast

import trio
from playwright.async_api import (
    Browser,
    BrowserContext,
    Dialog,
    ElementHandle,
    Frame,
    Locator,
    Page,
    Playwright,
    Position,
    Request,
    async_playwright,
)
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from ._calls import (
    PREDICATE_SUBJECTS,
    ActArgs,
    ActResult,
    CheckResult,
    CheckSubject,
    Count,
    ElementDescription,
    Hidden,
    PathStep,
    Predicate,
    ReadKind,
    TextContains,
    TextEquals,
    TitleMatches,
    UrlMatches,
    Visible,
)
from ._candidates import (
    AltTextCandidate,
    Candidate,
    CoordsCandidate,
    CssCandidate,
    IdCandidate,
    LabelCandidate,
    NameCandidate,
    PlaceholderCandidate,
    RoleCandidate,
    TestIdCandidate,
    TextCandidate,
    TitleCandidate,
    XPathCandidate,
)
from ._capabilities import Capabilities
from ._check import check_element, check_pattern, check_text
from ._errors import (
    ActionabilityError,
    CheckError,
    DataError,
    DialogError,
    LocateError,
    NavigationError,
    ScriptError,
    SessionError,
    SurfaceError,
    SurfaceGoneError,
    SurfaceTimeoutError,
)
from ._schemas import (
    act_args_from_dict,
    candidate_from_dict,
    config_ms,
    predicate_from_dict,
    session_init_from_dict,
    session_state_from_dict,
)
from ._session import Cookie, OriginState, SessionInit, SessionState, StorageItem
from ._snapshot import NodeState, Snapshot, SnapshotNode, build_snapshot
from ._surface import (
    ActArgsLike,
    CandidateLike,
    PredicateLike,
    SessionInitLike,
    SessionStateLike,
    SurfaceKind,
)
from ._web_js import (
    ASSIGN,
    CALL,
    FIND_ROLE,
    POINT,
    READ_VALUE,
    REF_ATTRIBUTE,
    evaluate_script,
)
from ._well_formed import well_formed, well_formed_error

T = TypeVar("T")

DEFAULT_EXECUTABLE: Final = "/usr/bin/chromium"
DEFAULT_TIMEOUT_MS: Final = 5000
DEFAULT_VIEWPORT: Final = {"width": 1280, "height": 720}
CHROMIUM_ARGS: Final[tuple[str, ...]] = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--disable-dev-shm-usage",
)
"""Switches this machine's closed network and root user need (and that do no harm
elsewhere): no sandbox as root, no GPU, no background fetches that would be refused."""

CAPABILITIES: Final = Capabilities(
    dialogs=True,
    frames=True,
    windows=True,
    upload=True,
    drag=True,
    trace=True,
    screenshot=True,
    restore=True,
)

_NAVIGATING: Final = frozenset({"navigate", "back", "forward", "refresh"})
_UNWAITED: Final = _NAVIGATING | {"switchWindow", "closeWindow", "closeOtherWindows"}
"""Actions a page that is loading or busy does not hold up: they leave it, or it for another."""
_NET_ERROR: Final = re.compile(r"net::ERR_[A-Z_]+")
_API_PREFIX: Final = re.compile(r"^\w+\.\w+: ")
_ATTEMPT: Final = re.compile(r"^\s*- (?:attempting|retrying) \w+ action", re.MULTILINE)
_SENT: Final = re.compile(r"^\s*- (?:performing \w+ action|elementHandle\.press\()", re.MULTILINE)
_BLANK_PAGE: Final = "<!doctype html><title></title>"
_SNAPSHOT_TRIES: Final = 5
"""How many times a snapshot is taken while navigations keep replacing the document."""


def default_executable() -> str:
    """The Chromium the adapter launches unless configured otherwise."""
    return os.environ.get("PLAYWRIGHT_CHROMIUM_EXECUTABLE") or DEFAULT_EXECUTABLE


# -- the browser thread -------------------------------------------------------------------


_BROWSER_GONE: Final = "the browser is gone: Chromium crashed or was killed"
_PAGE_CRASHED: Final = (
    "the page crashed: the Chromium process that ran it died, killed or out of memory"
)


def _unawaited_failure(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """Once Playwright's driver is gone, futures of its own fail that nobody awaits, and
    asyncio printed each as a traceback after the session's last status line. What failed
    reaches the caller as the error of its call; this is kept for debugging only."""
    logging.getLogger("semledger.adapters").debug("web: %s", context.get("message"))


class WebBrowser:
    """One Chromium, driven by Playwright's asyncio API on a dedicated thread and loop.

    ``start``/``stop`` block (call them from plain threads, or via ``trio.to_thread``);
    ``call`` runs a coroutine function on the browser's loop from Trio. Every Playwright
    object made through it lives and dies on that thread."""

    def __init__(
        self,
        *,
        executable_path: str | None = None,
        headless: bool = True,
        args: Sequence[str] = (),
    ) -> None:
        self.executable_path = executable_path or default_executable()
        self._executable_from = (
            "executable_path"
            if executable_path
            else "$PLAYWRIGHT_CHROMIUM_EXECUTABLE"
            if os.environ.get("PLAYWRIGHT_CHROMIUM_EXECUTABLE")
            else "the default"
        )
        self.headless = headless
        self.args = tuple(args)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._lock = threading.Lock()

    @property
    def running(self) -> bool:
        return self._browser is not None

    @property
    def browser(self) -> Browser:
        """The Playwright Browser; touch it only from coroutines run by ``call``."""
        if self._browser is None:
            raise SessionError("the browser is not running")
        return self._browser

    def start(self) -> None:
        """Start the thread and launch Chromium; SessionError when it cannot be launched.
        A second call on a running browser does nothing."""
        with self._lock:
            if self._browser is not None:
                return
            path = self.executable_path
            if not os.path.isfile(path) or not os.access(path, os.X_OK):
                named = f"{path} (from {self._executable_from})"
                problem = (
                    f"{named} is not an executable file"
                    if os.path.exists(path)
                    else f"no Chromium at {named}"
                )
                raise SessionError(
                    f"{problem}: expected the path of Chromium's executable;"
                    " scripts/test.sh installs Debian's"
                )
            ready = threading.Event()
            loop = asyncio.new_event_loop()
            loop.set_exception_handler(_unawaited_failure)

            def serve() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                loop.run_forever()
                loop.close()

            thread = threading.Thread(target=serve, name="semledger-web", daemon=True)
            thread.start()
            ready.wait()
            self._loop, self._thread = loop, thread
            try:
                asyncio.run_coroutine_threadsafe(self._launch(), loop).result(timeout=60)
            except Exception as exc:
                self._halt()
                raise SessionError(f"cannot launch Chromium: {_one_line(str(exc))}") from exc

    async def _launch(self) -> None:
        self._playwright = await async_playwright().start()
        try:
            self._browser = await self._playwright.chromium.launch(
                executable_path=self.executable_path,
                headless=self.headless,
                args=[*CHROMIUM_ARGS, *self.args],
            )
        except BaseException:
            await self._playwright.stop()
            self._playwright = None
            raise

    async def _shutdown(self) -> None:
        browser, self._browser = self._browser, None
        playwright, self._playwright = self._playwright, None
        if browser is not None:
            with contextlib.suppress(PlaywrightError):
                await browser.close()
        if playwright is not None:
            await playwright.stop()

    def _halt(self) -> None:
        loop, thread = self._loop, self._thread
        self._loop = self._thread = None
        if loop is not None:
            loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            thread.join(timeout=10)

    def stop(self) -> None:
        """Close Chromium and end the thread; safe to call twice."""
        with self._lock:
            loop = self._loop
            if loop is None:
                return
            try:
                with contextlib.suppress(Exception):  # the browser is going away regardless
                    asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(timeout=30)
            finally:
                self._halt()

    def submit(self, fn: Callable[[], Awaitable[T]]) -> concurrent.futures.Future[T]:
        """Schedule ``fn()`` on the browser's loop from any thread."""
        loop = self._loop
        if loop is None:
            raise SessionError("the browser is not running")

        async def run() -> T:
            return await fn()

        return asyncio.run_coroutine_threadsafe(run(), loop)

    async def call(self, fn: Callable[[], Awaitable[T]]) -> T:
        """Run ``fn()`` on the browser's loop and await its result from Trio."""
        token = trio.lowlevel.current_trio_token()
        done = trio.Event()
        future = self.submit(fn)

        def wake(_: object) -> None:
            with contextlib.suppress(trio.RunFinishedError):
                token.run_sync_soon(done.set)

        future.add_done_callback(wake)
        try:
            await done.wait()
        except trio.Cancelled:
            future.cancel()
            raise
        return future.result()


# -- config ---------------------------------------------------------------------------------


def _config_list(config: Mapping[str, Any], key: str, default: Sequence[str]) -> tuple[str, ...]:
    value = config.get(key, default)
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise DataError("expected a list of strings", path=f"config.{key}")
    if not all(isinstance(item, str) and item for item in value):
        raise DataError("expected a list of non-empty strings", path=f"config.{key}")
    return tuple(value)


def create_web_surface(config: Mapping[str, Any]) -> WebSurface:
    """The ``web`` adapter's factory (``BUILTIN_ADAPTERS["web"]``); see the module for the
    config keys. DataError for a malformed key."""
    return WebSurface(config)


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


# -- the surface ----------------------------------------------------------------------------


class WebSurface:
    """An AgentSurface over one Chromium browser context (see the module docstring)."""

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        config = dict(config or {})
        self._testids = _config_list(config, "testid_attributes", ("data-testid",))
        self._timeout_ms = config_ms(config, "timeout_ms", DEFAULT_TIMEOUT_MS)
        shared = config.get("browser")
        if shared is not None and not isinstance(shared, WebBrowser):
            raise DataError("expected a WebBrowser", path="config.browser")
        headless = config.get("headless", True)
        if not isinstance(headless, bool):
            raise DataError("expected a boolean", path="config.headless")
        executable = config.get("executable_path")
        if executable is not None and not isinstance(executable, str):
            raise DataError("expected a path", path="config.executable_path")
        extra = _config_list(config, "args", ())
        self._owns_browser = shared is None
        self._browser = shared or WebBrowser(
            executable_path=executable, headless=headless, args=extra
        )
        self._context: BrowserContext | None = None
        self._page: Page | None = None
        self._frame: Frame | None = None
        self._next_ref = 1
        self._ref_frames: dict[str, Frame] = {}
        self._ref_lock: asyncio.Lock | None = None
        self._dialog: Dialog | None = None
        self._dialog_opened: asyncio.Event | None = None
        self._blocked: set[asyncio.Future[Any]] = set()
        self._loading: dict[Page, Request] = {}
        self._sent: set[Request] | None = None
        self._opened: list[Page] | None = None
        self._opening = 0
        self._listeners: set[asyncio.Future[Any]] = set()
        self._failed: dict[Page, tuple[str, str]] = {}
        self._navigation_requested: asyncio.Event | None = None
        self._committed: asyncio.Event | None = None
        self._documents_requested = 0
        """How many documents the current page's main frame has asked for so far."""
        self._loads: dict[Frame, int] = {}
        """How many times each frame has navigated, and so replaced its document (or moved
        in it: a fragment, ``pushState``)."""
        self._ref_loads: dict[str, int] = {}
        """How many times its frame had navigated when each ref was given out."""
        self._busy: asyncio.Future[Any] | None = None
        self._navigations = 0
        self._last_result: str | None = None
        self._tracing = False
        self._mouse_down = False

    # -- basics ------------------------------------------------------------------------

    @property
    def kind(self) -> SurfaceKind:
        return "web"

    def capabilities(self) -> Capabilities:
        return CAPABILITIES

    @property
    def browser(self) -> WebBrowser:
        """The WebBrowser this surface runs on (its own unless one was configured)."""
        return self._browser

    async def _run(self, fn: Callable[[], Awaitable[T]]) -> T:
        """`fn()` on the browser's loop. Every answer and error leaves the browser thread
        here, so here the page's text is made valid Unicode (see `well_formed`)."""

        async def guarded() -> T:
            try:
                return well_formed(await fn())
            except (SessionError, PlaywrightError) as exc:
                # Its page and context look closed too: the cause is not theirs.
                if not self._browser.browser.is_connected() or await _going(
                    self._browser.browser, exc
                ):
                    raise SurfaceGoneError(_BROWSER_GONE) from exc
                if isinstance(exc, SurfaceError):
                    well_formed_error(exc)
                    raise
                raise well_formed_error(_translate(exc, None)) from exc
            except SurfaceError as exc:
                well_formed_error(exc)
                raise

        return await self._browser.call(guarded)

    def _require_page(self) -> Page:
        if self._page is None or self._page.is_closed():
            if self._context is None:
                raise SessionError("no open session: call open() first")
            if not self._context.pages:
                raise SessionError("the page has closed (the page called window.close(), say)")
            self._switch_to(self._context.pages[-1])
        assert self._page is not None
        return self._page

    def _current_frame(self) -> Frame:
        page = self._require_page()
        if self._frame is None or self._frame.is_detached() or self._frame.page is not page:
            self._frame = page.main_frame
        return self._frame

    def _no_dialog(self) -> None:
        dialog = self._dialog
        if dialog is not None:
            message = _shown_message(dialog)
            raise DialogError(
                f"the page has an open {dialog.type} dialog ({message!r});"
                " answer it with the dialog action first",
                details={
                    "dialog": dialog.type,
                    "message": message,
                    "default": dialog.default_value,
                },
            )

    def _no_navigation(self) -> None:
        page = self._page
        request = self._loading.get(page) if page is not None else None
        if request is not None:
            raise NavigationError(
                f"the page is loading {request.url}: nothing on it can be read or done until"
                " that document arrives (Chromium answers nothing about a page in between)",
                details={"pending": request.url},
            )

    def _no_busy(self) -> None:
        busy = self._busy
        if busy is None:
            return
        if busy.done():
            self._busy = None
            return
        raise SurfaceTimeoutError(
            "the page is busy: a script of its has not returned yet (the last action's"
            " handler, say), so it cannot be read or acted on until it does",
            details={"busy": "script"},
        )

    def _ready(self) -> None:
        """Raise instead of sending the page a call it would not answer for now: an open
        dialog, a navigation waiting on its server, a script that has not returned."""
        self._no_dialog()
        self._no_navigation()
        self._no_busy()

    def _mark_busy(self) -> None:
        """The page has taken an input it is still handling: a ping queued behind it says
        when the page answers again."""
        ping = asyncio.ensure_future(self._require_page().main_frame.evaluate("0"))
        ping.add_done_callback(_retrieved)
        self._busy = ping

    def _switch_to(self, page: Page) -> None:
        self._page = page
        self._frame = page.main_frame

    def _watch(self, page: Page) -> None:
        """A page of the session's opens (the first, or one a page opened: a tab, a popup)."""
        if self._opened is not None:
            self._opened.append(page)
        if self._page is not None:  # the first page is heard as the session opens
            listening = asyncio.ensure_future(self._hear_window_opens(page))
            self._listeners.add(listening)
            listening.add_done_callback(_forget(self._listeners))
        page.on("dialog", self._on_dialog)
        page.on("framenavigated", self._on_navigated)
        page.on("request", self._on_request)
        page.on("requestfinished", self._on_request_over)
        page.on("requestfailed", self._on_request_over)
        page.set_default_timeout(self._timeout_ms)
        page.set_default_navigation_timeout(self._timeout_ms)

    async def _hear_window_opens(self, page: Page) -> None:
        """Count the windows `page` asks for while an action runs (Chromium's
        ``Page.windowOpen``: window.open, a link or a form with a target). Chromium says so
        before the click that asked returns; Playwright reports the new page only later."""
        assert self._context is not None
        try:
            session = await self._context.new_cdp_session(page)
            session.on("Page.windowOpen", self._on_window_asked)
            await session.send("Page.enable")
        except PlaywrightError:
            pass  # the page closed meanwhile

    def _on_window_asked(self, _params: Any) -> None:
        if self._opened is not None:
            self._opening += 1

    async def _windows_arrive(self, opened: list[Page]) -> None:
        """Wait for the windows the action asked for to be reported as pages (`opened`)."""
        deadline = time.monotonic() + _WINDOW_WAIT_S
        while len(opened) < self._opening and time.monotonic() < deadline:
            await asyncio.sleep(0.02)

    def _on_request(self, request: Request) -> None:
        """A request the page's script sends while an action runs is that action's work; a
        navigation of a page's main frame starts: until its document commits, Chromium
        holds every call about the page back (an evaluation, an input, a screenshot)."""
        if not request.is_navigation_request():
            if self._sent is not None and request.resource_type in _SCRIPT_REQUESTS:
                self._sent.add(request)
            return
        frame = request.frame
        if frame.parent_frame is not None:
            return
        self._loading[frame.page] = request
        if self._navigation_requested is not None and frame.page is self._page:
            self._documents_requested += 1
            self._navigation_requested.set()

    def _on_request_over(self, request: Request) -> None:
        if self._sent is not None:
            self._sent.discard(request)
        for page, loading in list(self._loading.items()):
            if loading is request:
                del self._loading[page]
                if request.failure is not None:
                    self._failed[page] = (request.url, request.failure)

    def _on_dialog(self, dialog: Dialog) -> None:
        self._dialog = dialog
        if self._dialog_opened is not None:
            self._dialog_opened.set()

    def _on_navigated(self, frame: Frame) -> None:
        self._loads[frame] = self._loads.get(frame, 0) + 1
        if frame.parent_frame is None:
            if self._committed is not None and frame.page is self._page:
                self._committed.set()
            self._navigations += 1
            if not frame.url.startswith(_ERROR_PAGE):
                self._failed.pop(frame.page, None)
            loading = self._loading.get(frame.page)
            if loading is not None and _unfragmented(loading.url) == _unfragmented(frame.url):
                del self._loading[frame.page]

    # -- open / close --------------------------------------------------------------------

    async def open(self, session: SessionInitLike) -> None:
        init = session_init_from_dict(session)
        if self._context is not None:
            raise SessionError("the session is already open")
        if not self._browser.running:
            await trio.to_thread.run_sync(self._browser.start)
        try:
            await self._run(lambda: self._open(init))
        except SurfaceError:
            raise
        except Exception as exc:
            raise SessionError(f"cannot open the session: {_one_line(str(exc))}") from exc

    async def _open(self, init: SessionInit) -> None:
        self._ref_lock = asyncio.Lock()
        self._dialog_opened = asyncio.Event()
        self._navigation_requested = asyncio.Event()
        self._committed = asyncio.Event()
        if init.timeout_ms is not None:
            self._timeout_ms = init.timeout_ms
        viewport = (
            {"width": init.viewport.width, "height": init.viewport.height}
            if init.viewport
            else dict(DEFAULT_VIEWPORT)
        )
        storage: Any = _storage_state(init.storage_state) if init.storage_state else None
        context = await self._browser.browser.new_context(
            base_url=init.base_url,
            viewport=cast(Any, viewport),
            storage_state=storage,
            accept_downloads=False,
        )
        self._context = context
        context.on("page", self._watch)
        page = await context.new_page()
        self._switch_to(page)
        await self._hear_window_opens(page)
        url = (init.storage_state.url if init.storage_state else None) or init.base_url
        if url:
            # Open once the document is ready, whatever its images and trackers still load.
            # A dialog the page opens as it loads holds that up: the session is open,
            # showing the dialog, and the page goes on loading once it is answered.
            loading = await self._unless_dialog(page.goto(url, wait_until="domcontentloaded"))
            if loading.done() and loading.exception() is not None:
                await self._close_context()
                exc = loading.exception()
                message = _unreachable(exc) if isinstance(exc, PlaywrightError) else str(exc)
                raise SessionError(f"cannot open {url}: {message}") from exc

    async def close(self) -> None:
        if self._context is not None and self._browser.running:
            with contextlib.suppress(Exception):  # closing is best effort and idempotent
                await self._run(self._close_context)
        self._context = None
        self._page = self._frame = None
        if self._owns_browser and self._browser.running:
            await trio.to_thread.run_sync(self._browser.stop)

    async def _close_context(self) -> None:
        context, self._context = self._context, None
        self._page = self._frame = None
        dialog, self._dialog = self._dialog, None
        if dialog is not None:
            with contextlib.suppress(PlaywrightError):
                await dialog.dismiss()
        for task in list(self._blocked):
            task.cancel()
        self._blocked.clear()
        self._loading.clear()
        busy, self._busy = self._busy, None
        if busy is not None:
            busy.cancel()
        if context is not None:
            if self._tracing:
                self._tracing = False
                with contextlib.suppress(PlaywrightError):
                    await context.tracing.stop()
            with contextlib.suppress(PlaywrightError):
                await context.close()

    # -- JS plumbing -----------------------------------------------------------------------

    async def _js(self, frame: Frame, op: str, arg: object) -> Any:
        return await evaluate_script(frame.evaluate, CALL, [op, arg])

    async def _snap(self, frame: Frame, opts: dict[str, Any]) -> Any:
        """The page script's snapshot. One whose document a navigation replaced as it ran
        (a click that navigates a moment later, say) is taken again once the next document
        has loaded, instead of failing a read the agent could not have timed better."""
        for _ in range(_SNAPSHOT_TRIES - 1):
            try:
                return await self._js(frame, "snap", opts)
            except PlaywrightError as exc:
                if "execution context was destroyed" not in exc.message.lower():
                    raise
            self._no_navigation()
            await frame.wait_for_load_state("domcontentloaded")
        return await self._js(frame, "snap", opts)

    def _lock(self) -> asyncio.Lock:
        if self._ref_lock is None:
            self._ref_lock = asyncio.Lock()
        return self._ref_lock

    async def _frame_of(self, ref: str) -> Frame:
        if not isinstance(ref, str) or not ref:
            raise DataError("expected a ref", path="ref")
        frame = self._ref_frames.get(ref)
        if frame is None:
            raise LocateError(f"unknown ref {ref!r}", details={"ref": ref})
        if frame.is_detached() or frame.page.is_closed():
            raise LocateError(f"ref {ref!r} belongs to a frame that is gone", details={"ref": ref})
        return frame

    def _issued(self, ref: str, frame: Frame) -> None:
        self._ref_frames[ref] = frame
        self._ref_loads[ref] = self._loads.get(frame, 0)

    async def _locator(self, ref: str) -> Locator:
        frame = await self._frame_of(ref)
        found = await self._js(frame, "resolve", ref)
        status = found["status"]
        if status == "unknown" and self._loads.get(frame, 0) != self._ref_loads.get(ref):
            where = "page" if frame.parent_frame is None else "frame"
            raise LocateError(
                f"ref {ref!r} is gone: its {where} navigated to {frame.url} since it was read",
                details={"ref": ref, "status": status, "navigated": frame.url},
            )
        if status != "ok":
            what = "is no longer in the page" if status == "detached" else "is not current"
            raise LocateError(f"ref {ref!r} {what}", details={"ref": ref, "status": status})
        return frame.locator(f"[{REF_ATTRIBUTE}={_quote(found['stamp'])}]")

    async def _assign(self, frame: Frame, locator: Locator) -> list[str]:
        async with self._lock():
            out = await evaluate_script(locator.evaluate_all, ASSIGN, self._next_ref)
            self._next_ref = out["next"]
        refs: list[str] = out["refs"]
        for ref in refs:
            self._issued(ref, frame)
        return refs

    # -- snapshot --------------------------------------------------------------------------

    async def snapshot(
        self,
        *,
        root: str | None = None,
        max_nodes: int | None = None,
        interactive_only: bool = False,
    ) -> Snapshot:
        if max_nodes is not None and (not isinstance(max_nodes, int) or max_nodes < 1):
            raise DataError("expected a positive integer", path="max_nodes")
        return await self._run(
            lambda: self._snapshot_unless_stalled(root, max_nodes, interactive_only)
        )

    async def _snapshot_unless_stalled(
        self, root: str | None, max_nodes: int | None, interactive_only: bool
    ) -> Snapshot:
        """The snapshot, or at once the error saying why the page cannot answer one now.

        A dialog that opens as the snapshot is taken (a timer's alert) is a DialogError, a
        navigation that starts meanwhile a NavigationError naming the URL it waits for, and
        a page that does not answer within the timeout (a script that has not returned) a
        TimeoutError: none of them is a snapshot waiting for an answer that may not come."""
        page = self._require_page()
        self._ready()
        assert self._dialog_opened is not None
        assert self._navigation_requested is not None
        signals = (self._dialog_opened, self._navigation_requested)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._timeout_ms / 1000
        task = asyncio.ensure_future(self._snapshot(root, max_nodes, interactive_only))
        while not task.done():
            for signal in signals:
                signal.clear()
            left = deadline - loop.time()
            if left <= 0 or self._dialog is not None or page in self._loading:
                break
            waiters = [asyncio.ensure_future(signal.wait()) for signal in signals]
            try:
                await asyncio.wait(
                    {task, *waiters}, timeout=left, return_when=asyncio.FIRST_COMPLETED
                )
            finally:
                for waiter in waiters:
                    waiter.cancel()
        if task.done():
            return task.result()
        if self._dialog is not None:
            # Answering the dialog lets it finish (``_answer_dialog`` awaits it).
            self._blocked.add(task)
            task.add_done_callback(_forget(self._blocked))
            self._no_dialog()
        task.cancel()  # it holds the ref lock; what it would have numbered is never used
        task.add_done_callback(_retrieved)
        self._no_navigation()
        self._mark_busy()
        raise SurfaceTimeoutError(
            f"the page did not answer within {self._timeout_ms} ms: a script of its has not"
            " returned yet",
            details={"busy": "script"},
        )

    async def _snapshot(
        self, root: str | None, max_nodes: int | None, interactive_only: bool
    ) -> Snapshot:
        self._no_dialog()
        frame = await self._frame_of(root) if root is not None else self._current_frame()
        opts = {
            "root": root,
            "maxNodes": max_nodes,
            "interactiveOnly": interactive_only,
            "testids": list(self._testids),
        }
        framed = frame.parent_frame is not None  # then its ids are no semantic ids either
        async with self._lock():
            out = json.loads(
                await self._snap(frame, {**opts, "start": self._next_ref, "framed": framed})
            )
            self._next_ref = out["next"]
            if "error" in out:
                raise LocateError(f"root ref {root!r} is not in the page", details={"ref": root})
            rows: list[Any] = out["rows"]
            for row in rows:
                self._issued(row[0], frame)
            budget = None if max_nodes is None else max_nodes - len(rows)
            rows = await self._with_frames(frame, rows, {**opts, "root": None}, budget)
        if root is None and frame.parent_frame is None:
            self._describe_window(frame.page, rows[0])
        nodes: list[SnapshotNode] = []
        stack: list[tuple[int, str]] = []
        for ref, role, name, value, description, states, box, depth, native in rows:
            while stack and stack[-1][0] >= depth:
                stack.pop()
            nodes.append(
                SnapshotNode(
                    ref=ref,
                    role=role,
                    name=name or None,
                    value=value or None,
                    description=description or None,
                    states=tuple(cast(list[NodeState], states)),
                    box=(box[0], box[1], box[2], box[3]) if box else None,
                    depth=depth,
                    parent=stack[-1][1] if stack else None,
                    native=native,
                )
            )
            stack.append((depth, ref))
        return build_snapshot(nodes[0].ref, nodes)

    def _describe_window(self, page: Page, row: list[Any]) -> None:
        """What the snapshot's root `row` (a page's document) says of its window: how many
        the session has open (``native["windows"]``, when more than one), and, when its
        document could not be loaded, the URL that failed and why."""
        assert self._context is not None
        windows = sum(not p.is_closed() for p in self._context.pages)
        if windows > 1:
            row[8] = {**row[8], "windows": str(windows)}
        failed = self._failed.get(page)
        if failed is not None and page.url.startswith(_ERROR_PAGE):
            url, failure = failed
            row[4] = f"{url} could not be loaded: {failure}"
            row[8] = {**row[8], "url": url, "failure": failure}

    async def _with_frames(
        self, frame: Frame, rows: list[Any], opts: dict[str, Any], budget: int | None
    ) -> list[Any]:
        """`frame`'s snapshot rows with the content of each frame shown in it (that frame's
        document and what it holds) under the iframe's row, at most `budget` rows more: an
        agent reaches into a frame as a user does, without switching to it first. A frame
        that cannot be read (being navigated, say) shows as its iframe alone. Holds the ref
        lock."""
        inside = await self._frames_shown(frame, rows)
        if not inside:
            return rows
        out: list[Any] = []
        for row in rows:
            out.append(row)
            child = inside.get(row[0])
            if child is None or budget == 0:
                continue
            try:
                got = json.loads(
                    await self._js(
                        child,
                        "snap",
                        {**opts, "maxNodes": budget, "start": self._next_ref, "framed": True},
                    )
                )
            except PlaywrightError:
                continue
            self._next_ref = got["next"]
            held: list[Any] = got["rows"]
            for inner in held:
                self._issued(inner[0], child)
            held = _confined(held)
            deeper = None if budget is None else budget - len(held)
            held = await self._with_frames(child, held, opts, deeper)
            if budget is not None:
                budget = max(0, budget - len(held))
            x, y = (row[6][0], row[6][1]) if row[6] else (0.0, 0.0)
            for inner in held:
                inner[7] += row[7] + 1
                if inner[6]:
                    inner[6] = [inner[6][0] + x, inner[6][1] + y, inner[6][2], inner[6][3]]
            out.extend(held)
        return out

    async def _frames_shown(self, frame: Frame, rows: list[Any]) -> dict[str, Frame]:
        """The child frames of `frame` whose iframe is a row shown, by that row's ref."""
        shown = {row[0] for row in rows if "hidden" not in row[5]}
        inside: dict[str, Frame] = {}
        for child in frame.child_frames:
            try:
                element = await child.frame_element()
                try:
                    ref = await element.get_attribute(REF_ATTRIBUTE)
                finally:
                    await element.dispose()
            except PlaywrightError:
                continue
            if ref is not None and ref in shown:
                inside[ref] = child
        return inside

    # -- locate / describe -------------------------------------------------------------------

    async def locate(self, candidate: CandidateLike) -> list[str]:
        cand = candidate_from_dict(candidate)
        return await self._run(lambda: self._locate(cand))

    def _candidate_locator(self, frame: Frame, c: Candidate) -> Locator | None:
        if isinstance(c, LabelCandidate):
            return frame.get_by_label(c.value, exact=c.exact)
        if isinstance(c, PlaceholderCandidate):
            return frame.get_by_placeholder(c.value, exact=c.exact)
        if isinstance(c, TestIdCandidate):
            return frame.locator(f"[{c.attribute}={_quote(c.value)}]")
        if isinstance(c, TextCandidate):
            return frame.get_by_text(c.value, exact=c.exact)
        if isinstance(c, AltTextCandidate):
            return frame.get_by_alt_text(c.value, exact=c.exact)
        if isinstance(c, TitleCandidate):
            return frame.get_by_title(c.value, exact=c.exact)
        if isinstance(c, CssCandidate):
            return frame.locator("css=" + c.value)
        if isinstance(c, XPathCandidate):
            return frame.locator("xpath=" + c.value)
        if isinstance(c, IdCandidate):
            return frame.locator(f"[id={_quote(c.value)}]")
        if isinstance(c, NameCandidate):
            return frame.locator(f"[name={_quote(c.value)}]")
        return None

    async def _locate(self, c: Candidate) -> list[str]:
        self._ready()
        frame = self._current_frame()
        if isinstance(c, RoleCandidate):
            return await self._locate_role(frame, c)
        if isinstance(c, CoordsCandidate):
            async with self._lock():
                out = await evaluate_script(frame.evaluate, POINT, [c.x, c.y, self._next_ref])
                self._next_ref = out["next"]
            for ref in out["refs"]:
                self._issued(ref, frame)
            return list(out["refs"])
        locator = self._candidate_locator(frame, c)
        if locator is None:
            return []
        try:
            return await self._assign(frame, locator)
        except PlaywrightError as exc:
            if "selector" in exc.message.lower() or "xpath" in exc.message.lower():
                raise DataError(
                    f"invalid {c.by}: {_one_line(exc.message)}", path="candidate"
                ) from exc
            raise

    async def _locate_role(self, frame: Frame, c: RoleCandidate) -> list[str]:
        async with self._lock():
            opts = {"role": c.role, "name": c.name, "exact": c.exact, "start": self._next_ref}
            out = await evaluate_script(frame.evaluate, FIND_ROLE, opts)
            self._next_ref = out["next"]
        for ref in out["refs"]:
            self._issued(ref, frame)
        return list(out["refs"])

    async def describe(self, ref: str) -> ElementDescription:
        return await self._run(lambda: self._describe(ref))

    async def _describe(self, ref: str) -> ElementDescription:
        self._ready()
        frame = await self._frame_of(ref)
        out = await self._js(frame, "describe", {"ref": ref, "testids": list(self._testids)})
        if out is None:
            raise LocateError(f"ref {ref!r} is no longer in the page", details={"ref": ref})
        box = out["box"]
        page = self._require_page()
        return ElementDescription(
            ref=ref,
            role=out["role"],
            name=out["name"] or None,
            value=out["value"] or None,
            description=out["description"] or None,
            text=out["text"] or None,
            placeholder=out["placeholder"] or None,
            states=tuple(out["states"]),
            box=(box[0], box[1], box[2], box[3]) if box else None,
            native=out["native"],
            path=tuple(PathStep(r, n or None, i) for r, n, i in out["path"]),
            frame=None if frame is page.main_frame else (frame.name or frame.url),
        )

    # -- act ---------------------------------------------------------------------------------

    async def act(
        self,
        action: str,
        ref: str | None = None,
        args: ActArgsLike | None = None,
        ref2: str | None = None,
    ) -> ActResult:
        parsed = act_args_from_dict(args) if args else ActArgs()
        if action == "sleep":
            if parsed.ms is None:
                raise DataError("sleep needs ms", path="args.ms")
            await trio.sleep(parsed.ms / 1000)
            return await self._run(self._result_now)
        return await self._run(lambda: self._act(action, ref, parsed, ref2))

    async def _result_now(self) -> ActResult:
        page = self._require_page()
        return ActResult(url=page.url)

    async def _act(
        self, action: str, ref: str | None, args: ActArgs, ref2: str | None
    ) -> ActResult:
        if action == "quit":
            raise NavigationError(
                "quit is a desktop action: a web adapter refuses it (a tab is not an"
                " application a flow closes)",
                details={"refused": "quit"},
            )
        if action == "invoke":
            raise DataError("invoke (story composition) is performed above the surface")
        handler = _ACTIONS.get(action)
        if handler is None:
            raise DataError(f"unknown action {action!r}", path="action")
        if action == "dialog":
            return await self._answer_dialog(args)
        if action in _UNWAITED:
            self._no_dialog()
        else:
            self._ready()
        page = self._require_page()
        before = (self._navigations, page.url)
        sent: set[Request] = set()
        opened: list[Page] = []
        self._sent, self._opened, self._opening = sent, opened, 0
        work = handler(self, ref, args, ref2)
        try:
            task = await self._unless_dialog(
                work
                if action in _UNWAITED
                else self._unless_replaced(work, page, cut=action in _CUT_SHORT)
            )
            if action in _INPUTS and self._taken(task, page):
                await self._unless_dialog(self._settle(page))
            await self._windows_arrive(opened)
        finally:
            self._sent, self._opened = None, None
        result: str | None = None
        if task.done():
            try:
                result = task.result()
            except SurfaceError:
                raise
            except PlaywrightError as exc:
                closed_itself = page.is_closed() and self._context is not None
                if not closed_itself and not _dispatched(exc):
                    raise _translate(exc, action) from exc
                if not closed_itself and self._loading.get(page) is None:
                    self._mark_busy()
        if action in ("read", "evaluate"):
            self._last_result = result
        if page.is_closed() and self._context is not None and not self._context.pages:
            return ActResult(url=page.url, result=result)  # done: the page closed itself
        page = self._require_page()
        navigated = (self._navigations, page.url) != before
        return ActResult(
            navigated=navigated,
            url=page.url,
            result=result,
            pending=bool(sent),
            opened=any(not p.is_closed() for p in opened),
        )

    async def _unless_replaced(self, work: Awaitable[T], page: Page, *, cut: bool) -> T:
        """`work`, an action on `page`, or, as soon as the adapter can tell, the error saying
        that the page went to another document while it ran, or that its element left the
        page. What the action began (a focus or hover handler of the page's) may have done
        that, or a timer of the page's; either way the element it was for is gone, and
        Playwright would wait its whole timeout for it to come back.

        With `cut`, a navigation that commits while `work` is still running ends the wait
        once `work` has had `_REPLACED_GRACE_S` to finish (a click that started it returns
        as it commits); one still waiting for its server is the action's to wait for (a
        click returns then, see `_navigating_input`)."""
        committed = self._committed
        assert committed is not None
        requested, navigations = self._documents_requested, self._navigations
        task = asyncio.ensure_future(work)
        try:
            while cut and not task.done():
                if (
                    self._documents_requested != requested
                    and self._navigations != navigations
                    and page not in self._loading
                ):
                    await asyncio.wait({task}, timeout=_REPLACED_GRACE_S)
                    if not task.done():
                        raise self._navigated_away(page.main_frame)
                    break
                committed.clear()
                waiter = asyncio.ensure_future(committed.wait())
                try:
                    await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    waiter.cancel()
            await asyncio.wait({task})
        except BaseException:
            task.cancel()
            task.add_done_callback(_retrieved)
            raise
        try:
            return task.result()
        except (PlaywrightError, LocateError) as exc:
            if isinstance(exc, PlaywrightError) and _dispatched(exc):
                raise  # its input reached the page: the action happened (see `_act`)
            if self._documents_requested != requested and not page.is_closed():
                raise self._navigated_away(page.main_frame) from exc
            if isinstance(exc, PlaywrightError) and _NOT_ATTACHED.search(_one_line(exc.message)):
                raise ActionabilityError(
                    "the element left the page during the action (a focus or hover"
                    " handler of the page's may have run): read again",
                    details={"left": "true"},
                ) from exc
            raise

    def _navigated_away(self, frame: Frame) -> NavigationError:
        """The error for an action whose frame went to another document as it ran."""
        loading = self._loading.get(frame.page) if frame.parent_frame is None else None
        url = loading.url if loading is not None else frame.url
        where = "page" if frame.parent_frame is None else "frame"
        return NavigationError(
            f"the {where} navigated to {url} during the action (a focus or hover handler"
            " of the page's may have run): read again",
            details={"navigated": url},
        )

    def _taken(self, task: asyncio.Future[Any], page: Page) -> bool:
        """Whether an input's `task` is over with the page still there to answer: not held
        by a dialog, a navigation or a script of the page's, not failed, not closed."""
        return (
            task.done()
            and not task.cancelled()
            and task.exception() is None
            and not page.is_closed()
            and self._dialog is None
            and page not in self._loading
            and self._busy is None
        )

    async def _settle(self, page: Page) -> None:
        """Let the page run what the input queued (a dialog's ``close`` event, what a
        handler left for the next frame) before the action returns, so the snapshot after
        it shows that, live and when the session is re-run alike."""
        try:
            await asyncio.wait_for(page.main_frame.evaluate(_SETTLE), _SETTLE_S)
        except TimeoutError:
            self._mark_busy()  # a script the input started has not returned
        except PlaywrightError:
            pass  # the page navigated or closed meanwhile: the snapshot says which

    async def _navigating_input(self, work: Awaitable[None]) -> None:
        """Send an input that may start a navigation (a click, a key) and return once it is
        done, or once the navigation it started has waited `_COMMIT_GRACE_S` for its server.

        Playwright's action waits for a navigation it started to commit, however long the
        server takes, up to the action's timeout. A navigation that has started shows the
        input was taken: the call returns and leaves that wait behind, and the page reads
        as loading (NavigationError with ``details["pending"]``) until the document commits.
        """
        page = self._require_page()
        requested = self._navigation_requested
        assert requested is not None
        requested.clear()
        task = asyncio.ensure_future(work)
        waiter = asyncio.ensure_future(requested.wait())
        try:
            await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
            if not task.done():
                await asyncio.wait({task}, timeout=_COMMIT_GRACE_S)
        except BaseException:  # cancelled: the session is closing
            task.cancel()
            task.add_done_callback(_retrieved)
            raise
        finally:
            waiter.cancel()
        if not task.done() and page in self._loading:
            task.add_done_callback(_retrieved)
            return
        await task

    async def _unless_dialog(self, work: Awaitable[T]) -> asyncio.Future[T]:
        """Run `work` until it is done or a dialog opens, whichever comes first: a native
        dialog blocks the page, so what `work` waits for in it comes only once the dialog
        is answered. Returns the task, done, or still blocked and kept in ``_blocked``
        (awaited when the dialog is answered, cancelled when the session closes)."""
        assert self._dialog_opened is not None
        self._dialog_opened.clear()
        task = asyncio.ensure_future(work)
        waiter = asyncio.ensure_future(self._dialog_opened.wait())
        try:
            await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
        if not task.done():
            self._blocked.add(task)
            task.add_done_callback(_forget(self._blocked))
        return task

    async def _answer_dialog(self, args: ActArgs) -> ActResult:
        dialog = self._dialog
        if dialog is None:
            wait_ms = args.timeout_ms if args.timeout_ms is not None else 1000
            deadline = time.monotonic() + wait_ms / 1000
            while self._dialog is None and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            dialog = self._dialog
        if dialog is None:
            raise DialogError("no dialog is open to answer")
        self._dialog = None
        assert self._dialog_opened is not None
        self._dialog_opened.clear()
        accept = True if args.accept is None else args.accept
        try:
            if accept:
                await dialog.accept(args.prompt_text or "")
            else:
                await dialog.dismiss()
        except PlaywrightError as exc:
            raise DialogError(f"cannot answer the dialog: {_one_line(exc.message)}") from exc
        said = self._last_result = _shown_message(dialog)
        blocked = list(self._blocked)
        if blocked:
            # What the dialog held up goes on, unless it opens another dialog first.
            finished = asyncio.ensure_future(asyncio.wait(blocked))
            opened = asyncio.ensure_future(self._dialog_opened.wait())
            await asyncio.wait(
                {finished, opened},
                timeout=self._timeout_ms / 1000,
                return_when=asyncio.FIRST_COMPLETED,
            )
            finished.cancel()
            opened.cancel()
        page = self._require_page()
        return ActResult(url=page.url, result=said)

    def _timeout(self, args: ActArgs) -> float:
        return float(args.timeout_ms if args.timeout_ms is not None else self._timeout_ms)

    async def _need(self, ref: str | None, action: str) -> Locator:
        if ref is None:
            raise DataError(f"{action} needs a ref", path="ref")
        return await self._locator(ref)

    # -- read / check ----------------------------------------------------------------------

    async def read(self, kind: ReadKind, ref: str | None = None, name: str | None = None) -> object:
        return await self._run(lambda: self._read(kind, ref, name))

    async def _read(self, kind: str, ref: str | None, name: str | None) -> object:
        if kind == "result":
            return self._last_result
        page = self._require_page()
        if kind == "url":
            return page.url
        self._ready()
        if kind == "title":
            return await page.title()
        if kind not in ("text", "value", "attribute"):
            raise DataError(f"unknown read kind {kind!r}", path="kind")
        if ref is None:
            if kind == "text":
                return await self._current_frame().locator("body").inner_text()
            raise DataError(f"read {kind} needs a ref", path="ref")
        locator = await self._locator(ref)
        if kind == "text":
            return await locator.evaluate("el => (el.innerText ?? el.textContent ?? '').trim()")
        if kind == "value":
            return await evaluate_script(locator.evaluate, READ_VALUE, None)
        if not name:
            raise DataError("read attribute needs a name", path="name")
        return await locator.get_attribute(name)

    async def check(
        self, predicate: PredicateLike, subject: CheckSubject, ref: str | None = None
    ) -> CheckResult:
        pred = predicate_from_dict(predicate)
        allowed = PREDICATE_SUBJECTS.get(pred.kind, ())
        if subject not in allowed:
            raise CheckError(
                f"{pred.kind} cannot be evaluated against {subject!r} (only {', '.join(allowed)})"
            )
        if subject == "ref" and ref is None:
            raise CheckError(f"{pred.kind} against a ref needs the ref")
        return await self._run(lambda: self._check(pred, subject, ref))

    async def _check(self, pred: Predicate, subject: str, ref: str | None) -> CheckResult:
        if subject == "dialog":
            return _check_dialog(pred, self._dialog)
        self._ready()
        page = self._require_page()
        if subject == "page":
            if isinstance(pred, UrlMatches):
                return check_pattern(pred.pattern, page.url)
            if isinstance(pred, TitleMatches):
                return check_pattern(pred.pattern, await page.title())
            if isinstance(pred, Count):
                found = len(await self._locate(pred.candidate))
                return CheckResult(ok=found == pred.count, actual=str(found))
            if isinstance(pred, TextContains):
                body = await self._current_frame().locator("body").inner_text()
                return check_text(pred, body)
            raise CheckError(f"{pred.kind} cannot be evaluated against the page")
        assert ref is not None
        frame = await self._frame_of(ref)
        info = await self._js(frame, "info", ref)
        status = info["status"]
        if status == "unknown":
            raise LocateError(f"ref {ref!r} is not current", details={"ref": ref})
        if status == "detached":
            if isinstance(pred, Hidden | Visible):
                return CheckResult(ok=isinstance(pred, Hidden), actual="detached")
            raise LocateError(f"ref {ref!r} is no longer in the page", details={"ref": ref})
        states = set(info["states"])
        states.discard("hidden")
        if not info["visible"]:
            states.add("hidden")
        return check_element(
            pred,
            states=states,
            text=info["text"],
            value=info["value"],
            checkable=bool(info["checkable"]),
        )

    # -- screenshot / state / trace ----------------------------------------------------------

    async def screenshot(self, path: str, mask: Sequence[str] | None = None) -> None:
        await self._run(lambda: self._screenshot(path, mask or ()))

    async def _screenshot(self, path: str, mask: Sequence[str]) -> None:
        self._ready()
        page = self._require_page()
        masks = [await self._locator(ref) for ref in mask]
        await page.screenshot(
            path=path, mask=masks, mask_color="#000000", animations="disabled", caret="hide"
        )

    async def state(self) -> SessionState:
        return await self._run(self._state)

    async def _state(self) -> SessionState:
        self._ready()
        page = self._require_page()
        assert self._context is not None
        raw = await self._context.storage_state()
        cookies = tuple(
            Cookie(
                name=c["name"],
                value=c["value"],
                domain=c["domain"],
                path=c["path"],
                expires=c["expires"],
                http_only=c["httpOnly"],
                secure=c["secure"],
                same_site=c["sameSite"],
            )
            for c in raw["cookies"]
        )
        origins = tuple(
            OriginState(
                origin=o["origin"],
                local_storage=tuple(StorageItem(i["name"], i["value"]) for i in o["localStorage"]),
            )
            for o in raw["origins"]
        )
        return SessionState(url=page.url, cookies=cookies, origins=origins)

    async def restore(self, state: SessionStateLike) -> None:
        parsed = session_state_from_dict(state)
        await self._run(lambda: self._restore(parsed))

    async def _restore(self, state: SessionState) -> None:
        """Cookies replaced, local storage of every origin (the current ones and the
        state's) rewritten through a scratch page whose requests are answered locally, then
        the current page navigated to the state's URL."""
        self._no_dialog()
        page = self._require_page()
        context = self._context
        assert context is not None
        current = await context.storage_state()
        await context.clear_cookies()
        if state.cookies:
            await context.add_cookies(cast(Any, _storage_state(state)["cookies"]))
        wanted = {o.origin: o.local_storage for o in state.origins}
        origins = {o["origin"] for o in current["origins"]} | set(wanted)
        if origins:
            scratch = await context.new_page()
            try:
                await scratch.route("**/*", _fulfil_blank)
                for origin in sorted(origins):
                    await scratch.goto(origin + "/", wait_until="load")
                    items = [[i.name, i.value] for i in wanted.get(origin, ())]
                    await scratch.evaluate(
                        "items => { localStorage.clear();"
                        " for (const [k, v] of items) localStorage.setItem(k, v); }",
                        items,
                    )
            finally:
                await scratch.close()
        self._switch_to(page)
        if state.url:
            await page.goto(state.url, wait_until="domcontentloaded")

    async def trace(self, start: bool, path: str | None = None) -> None:
        """Start Playwright tracing of the browser context, or stop it writing the zip to
        ``path``; DataError for a stop without a start or a start while tracing."""
        await self._run(lambda: self._trace(start, path))

    async def _trace(self, start: bool, path: str | None) -> None:
        self._require_page()
        context = self._context
        assert context is not None
        if start:
            if self._tracing:
                raise DataError("tracing has already started")
            await context.tracing.start(screenshots=True, snapshots=True)
            self._tracing = True
            return
        if not self._tracing:
            raise DataError("tracing has not started")
        self._tracing = False
        await context.tracing.stop(path=path)


# -- helpers -----------------------------------------------------------------------------------


_COMMIT_GRACE_S = 1.0
"""How long an input waits for the navigation it started to commit before it returns."""

_REPLACED_GRACE_S = 0.5
"""How long an action still running when its page's next document commits has to finish."""

_NOT_ATTACHED: Final = re.compile(r"not attached to the DOM")
"""Playwright's word that an element handle's element left the page as it was acted on."""

_INPUTS: Final = frozenset({
    "click", "doubleClick", "rightClick", "hover", "hoverAndClick", "pressAndHold", "release",
    "dragTo", "type", "clear", "press", "focus", "keyDown", "keyUp", "submit", "upload",
    "selectOption", "deselectOption", "deselectAll", "setChecked",
})  # fmt: skip
"""Actions that reach the page's handlers as a user's input does."""

_CUT_SHORT: Final = _INPUTS - {"submit"}
"""Actions on an element that no navigation of the page's completes: one that commits while
they run has taken their element away (``submit`` waits for the document it sends for)."""

_SETTLE = (
    "() => new Promise((done) => {"
    " setTimeout(done, 100); requestAnimationFrame(() => setTimeout(done, 0)); })"
)
"""Resolves once the page has drawn its next frame and run a timer turn after it (or after
100 ms, for a page that draws no frames)."""

_SETTLE_S = 1.0
"""How long settling waits for the page to answer at all."""

_WINDOW_WAIT_S = 2.0
"""How long an action waits for a window it asked for to be reported."""

_ERROR_PAGE = "chrome-error://"
"""Where Chromium shows a document it could not load."""

_SCRIPT_REQUESTS = frozenset({"fetch", "xhr"})
"""The requests a page's script sends and waits on (an event stream or a web socket stays
open for as long as the page)."""


def _confined(rows: list[Any]) -> list[Any]:
    """A frame's snapshot rows (its document first), or, while an element in it is modal
    (a ``<dialog>`` it showed with ``showModal``, ``aria-modal``), its document holding the
    deepest such one and what is inside it. A modal in a frame makes the rest of that
    frame's document inert, not the page around it (a person can still click the page), so
    it is no modal of the whole tree: its ``modal`` would make it the tree's root."""
    modal = [at for at, row in enumerate(rows) if row[8].get("modal") == "true"]
    if not modal:
        return rows
    start = max(reversed(modal), key=lambda at: rows[at][7])
    depth = rows[start][7]
    end = start + 1
    while end < len(rows) and rows[end][7] > depth:
        end += 1
    inside = [[*row[:7], row[7] - depth + 1, row[8]] for row in rows[start:end]]
    inside[0][8] = {key: value for key, value in inside[0][8].items() if key != "modal"}
    return [rows[0], *inside]


def _retrieved(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


def _unfragmented(url: str) -> str:
    return url.split("#", 1)[0]


def _forget(tasks: set[asyncio.Future[Any]]) -> Callable[[asyncio.Future[Any]], None]:
    def done(task: asyncio.Future[Any]) -> None:
        tasks.discard(task)
        if not task.cancelled():
            task.exception()  # retrieved: the action finished after its dialog was answered

    return done


async def _fulfil_blank(route: Any) -> None:
    await route.fulfill(status=200, content_type="text/html", body=_BLANK_PAGE)


def _storage_state(state: SessionState) -> dict[str, Any]:
    return {
        "cookies": [
            {
                "name": c.name,
                "value": c.value,
                "domain": c.domain,
                "path": c.path,
                "expires": c.expires,
                "httpOnly": c.http_only,
                "secure": c.secure,
                "sameSite": c.same_site,
            }
            for c in state.cookies
        ],
        "origins": [
            {
                "origin": o.origin,
                "localStorage": [{"name": i.name, "value": i.value} for i in o.local_storage],
            }
            for o in state.origins
        ],
    }


async def _going(browser: Browser, error: BaseException) -> bool:
    """Whether `error`, a page's "Target crashed", is the browser going away: a killed
    Chromium's renderers die a moment before it is seen gone, and the page's crash was
    said instead of the browser's."""
    if not _crashed(str(error)):
        return False
    for _ in range(20):
        await asyncio.sleep(0.05)
        if not browser.is_connected():
            return True
    return False


_CRASH: Final = re.compile(
    r"target crashed|page crashed|navigation failed because page crashed", re.IGNORECASE
)
"""Playwright's words for a page whose renderer process died, after the call it came through
(`_API_PREFIX`: ``Frame.evaluate: Target crashed``); not a script's error that says so
(``Frame.evaluate: Error: page crashed``)."""


def _crashed(message: str) -> bool:
    """Whether `message` says the page crashed: its renderer process died."""
    said = _API_PREFIX.sub("", message.strip())
    return _CRASH.match(said) is not None or _PAGE_CRASHED in message


_LEAVING: Final = "Leave site? Changes you made may not be saved."
"""What Chromium's leave-page confirmation says: a page's ``beforeunload`` handler asks for
it, but the text it may give is not shown (nor given: the dialog's message is empty)."""


def _shown_message(dialog: Dialog) -> str:
    """The text the browser shows in `dialog`."""
    if dialog.type == "beforeunload" and not dialog.message:
        return _LEAVING
    return dialog.message


def _check_dialog(pred: Predicate, dialog: Dialog | None) -> CheckResult:
    message = _shown_message(dialog) if dialog is not None else None
    if isinstance(pred, Visible | Hidden):
        return CheckResult(
            ok=(dialog is not None) == isinstance(pred, Visible),
            actual=f"{dialog.type}: {message}" if dialog is not None else "no dialog",
        )
    if isinstance(pred, TextEquals | TextContains):
        if message is None:
            return CheckResult(ok=False, actual=None, message="no dialog is open")
        return check_text(pred, message)
    raise CheckError(f"{pred.kind} cannot be evaluated against a dialog")


def _dispatched(exc: PlaywrightError) -> bool:
    """Whether an action that timed out had already sent the page its input, by the call log
    of its last attempt: a click that was performed (its handler has not returned, or the
    navigation it started has not committed) or a key that was pressed. A click whose events
    the element never got (hidden, covered, detached: Playwright retries it) was not."""
    if not isinstance(exc, PlaywrightTimeoutError):
        return False
    attempts = list(_ATTEMPT.finditer(exc.message))
    last = exc.message[attempts[-1].end() :] if attempts else exc.message
    sent = _SENT.search(last)
    return sent is not None and "intercepts pointer events" not in last[sent.end() :]


def _one_line(message: str) -> str:
    """What failed, without the call log or script stack Playwright appends on later lines."""
    lines = message.strip().splitlines()
    return lines[0].strip() if lines else message


def _unreachable(exc: PlaywrightError) -> str:
    """Why a page could not be opened: Chromium's net:: code when it gave one, or the
    setting that ran out (Playwright's own words name none)."""
    if isinstance(exc, PlaywrightTimeoutError):
        limit = _TIMEOUT_MS.search(exc.message)
        waited = f" within {limit.group(1)} ms" if limit else ""
        return f"it did not load{waited} (timeout_ms; serve's --timeout, in seconds)"
    line = _one_line(exc.message)
    code = _NET_ERROR.search(line)
    return code.group() if code else _API_PREFIX.sub("", line)


_HELD_BACK: Final = (
    (re.compile(r"element is not visible"), "it is not visible (hidden, or of no size)"),
    (re.compile(r"element is not enabled"), "it is disabled"),
    (re.compile(r"element is not editable"), "it is not editable (read-only)"),
    (re.compile(r"element is not stable"), "it kept moving"),
    (re.compile(r"element is outside of the viewport"), "it is outside the viewport"),
    (re.compile(r"not attached|detached"), "it left the page"),
    (
        re.compile(r"(<.*?>)(?: from (<.*>) subtree)? intercepts pointer events"),
        "another element, {}, covers it",
    ),
)
"""What kept an element from taking an action, by the lines of Playwright's call log."""

_TIMEOUT_MS: Final = re.compile(r"Timeout (\d+)ms exceeded")


def _held_back(log: str) -> str:
    """Why the element did not take the action: the reason logged last."""
    found = [
        (match.start(), why.format(_covering(match)) if match.groups() else why)
        for pattern, why in _HELD_BACK
        for match in pattern.finditer(log)
    ]
    if found:
        return max(found)[1]
    if "waiting for locator" in log and "locator resolved to" not in log:
        return "no element matched it"
    return "it did not become ready"


def _covering(match: re.Match[str]) -> str:
    """What covers the element, as a person would point at it: the root of the subtree
    Playwright names (``<div></div> from <div id="overlay">…</div> subtree``) rather than
    the innermost element the click would hit, else that element; as the page wrote it,
    without the adapter's ref stamp, which means nothing above the surface."""
    hit, subtree = match.groups()
    return _STAMP.sub("", str(subtree or hit))


_STAMP: Final = re.compile(rf' {REF_ATTRIBUTE}="[^"]*"')


def _timed_out(message: str, action: str | None) -> str:
    """A timeout in the adapter's words: what waited, how long, and what it waited on,
    in place of Playwright's method name and call log."""
    limit = _TIMEOUT_MS.search(message)
    waited = f" within {limit.group(1)} ms" if limit else ""
    if action == "waitFor":
        return f"the wait did not end{waited}"
    if action is None or action in _NAVIGATING:
        return f"{action or 'the page'} did not finish{waited}"
    return f"the element could not take {action}{waited}: {_held_back(message)}"


def _translate(exc: PlaywrightError, action: str | None) -> SurfaceError:
    if isinstance(exc, PlaywrightTimeoutError):
        message = _timed_out(exc.message, action)
    else:
        message = _one_line(exc.message)
    lowered = exc.message.lower()
    details = {"action": action} if action else {}
    if _crashed(exc.message):  # from outside, as a killed browser is: a re-run cannot repeat it
        return SurfaceGoneError(_PAGE_CRASHED, details=details)
    if "has been closed" in lowered or "target closed" in lowered or "browser closed" in lowered:
        return SurfaceGoneError(message, details=details)
    if action in _NAVIGATING or "net::err" in lowered:
        return NavigationError(message, details=details)
    if "execution context was destroyed" in lowered:
        return NavigationError(message, details=details)
    if isinstance(exc, PlaywrightTimeoutError):
        if action == "waitFor":
            return SurfaceTimeoutError(message, details=details)
        return ActionabilityError(message, details=details)
    if action == "evaluate":
        return ScriptError(message, details=details)
    if action is None:
        return SessionError(message, details=details)
    return ActionabilityError(message, details=details)


# -- the actions ------------------------------------------------------------------------------

_Handler = Callable[[WebSurface, str | None, ActArgs, str | None], Awaitable[str | None]]


async def _navigate(s: WebSurface, ref: str | None, a: ActArgs, ref2: str | None) -> None:
    if not a.url:
        raise DataError("navigate needs a url", path="args.url")
    page = s._require_page()
    await page.goto(a.url, wait_until="domcontentloaded", timeout=s._timeout(a))
    s._frame = None


async def _back(s: WebSurface, ref: str | None, a: ActArgs, ref2: str | None) -> None:
    if await s._require_page().go_back(wait_until="domcontentloaded") is None:
        raise NavigationError("there is no previous page")


async def _forward(s: WebSurface, ref: str | None, a: ActArgs, ref2: str | None) -> None:
    if await s._require_page().go_forward(wait_until="domcontentloaded") is None:
        raise NavigationError("there is no next page")


async def _refresh(s: WebSurface, ref: str | None, a: ActArgs, ref2: str | None) -> None:
    await s._require_page().reload(wait_until="domcontentloaded")


_INERT = (
    "el => el.closest('[inert]') !== null"
    " || (document.querySelector(':modal') ?? el).contains(el) === false"
)
"""Whether the element is inert: under an ``inert`` ancestor, or outside the modal dialog
the page shows (``showModal``). Such an element takes no input: Playwright would type into
nothing and report success, or wait its whole timeout for a click."""
_ANY_INERT = "document.querySelector(':modal, [inert]') !== null"
"""Whether anything on the page can be inert: asked first, because resolving the element
for `_INERT` costs as much again as the action's own resolving of it."""


def _inert(ref: str | None) -> ActionabilityError:
    return ActionabilityError(
        "the element is inert: a modal dialog is open (or an ancestor is inert), and the"
        " page takes no input outside it",
        details={"ref": ref, "inert": "true"},
    )


async def _live(s: WebSurface, ref: str | None, action: str) -> Locator:
    """The element `ref` names; `ActionabilityError` at once if it is inert."""
    locator = await s._need(ref, action)
    if await s._current_frame().evaluate(_ANY_INERT) and await locator.evaluate(_INERT):
        raise _inert(ref)
    return locator


async def _click(s: WebSurface, ref: str | None, a: ActArgs, ref2: str | None) -> None:
    locator = await _live(s, ref, "click")
    if await _clicked_label(s, locator, a):
        return
    own: Position | None = await locator.evaluate(_OWN_POINT)
    # On its element, not the locator: a locator that loses its element (a hover handler
    # removed it) waits the whole timeout for it to come back; the element fails at once.
    element = await locator.element_handle(timeout=s._timeout(a))
    try:
        await s._navigating_input(element.click(position=own, timeout=s._timeout(a)))
    finally:
        with contextlib.suppress(PlaywrightError):
            await element.dispose()


async def _clicked_label(s: WebSurface, target: Locator | ElementHandle, a: ActArgs) -> bool:
    """Whether `target` was clicked through its label, as `_STAND_IN_LABEL` says to be."""
    label = (await target.evaluate_handle(_STAND_IN_LABEL)).as_element()
    if label is None:
        return False
    try:
        spot: Position | None = await label.evaluate(_LABEL_POINT)
        await s._navigating_input(label.click(position=spot, timeout=s._timeout(a)))
    finally:  # not waited for: the click is what the caller waits for
        asyncio.ensure_future(label.dispose()).add_done_callback(_retrieved)
    return True


_STAND_IN_LABEL = """(el) => {
  const labels = Array.from(el.labels ?? []);
  if (!labels.length) return null;
  const inView = (r) => {
    const x = r.x + r.width / 2, y = r.y + r.height / 2;
    return x >= 0 && y >= 0 && x < innerWidth && y < innerHeight;
  };
  if (!inView(el.getBoundingClientRect())) el.scrollIntoView({ block: "center" });
  const box = el.getBoundingClientRect();
  const hit = inView(box)
    ? el.getRootNode().elementFromPoint(box.x + box.width / 2, box.y + box.height / 2)
    : null;
  if (hit && (hit === el || el.contains(hit))) return null;
  const shown = labels.filter((l) =>
    Array.from(l.getClientRects()).some((r) => r.width > 0 && r.height > 0));
  return shown.find((l) => hit && l.contains(hit)) ?? shown[0] ?? null;
}"""
"""The label to click for a control that a click at its centre would not reach (a checkbox
hidden in its label, ``.visually-hidden``, or under it, Bootstrap's ``.btn-check``), as a
person clicks the label they see: the label over it, else one that is shown; null when the
control takes the click itself, or has no label shown (the click then says what covers it)."""


_LABEL_POINT = """(label) => {
  const INTERACTIVE =
    "a[href], button, input, select, textarea, summary, [tabindex], [contenteditable]";
  const root = label.getRootNode();
  const plain = (hit) => {
    if (!hit || !label.contains(hit)) return false;
    for (let n = hit; n && n !== label; n = n.parentElement)
      if (n.matches(INTERACTIVE)) return false;
    return true;
  };
  const first = label.getClientRects()[0];
  if (first && (first.bottom < 0 || first.top > innerHeight))
    label.scrollIntoView({ block: "center" });
  const box = label.getBoundingClientRect(), style = getComputedStyle(label);
  const left = box.x + parseFloat(style.borderLeftWidth);
  const top = box.y + parseFloat(style.borderTopWidth);
  const spots = [...label.getClientRects()];
  const walker = document.createTreeWalker(label, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  for (let n = walker.nextNode(); n && spots.length < 64; n = walker.nextNode()) {
    if (n.nodeType === 1) spots.push(...n.getClientRects());
    else if (n.data.trim()) { range.selectNodeContents(n); spots.push(...range.getClientRects()); }
  }
  for (const r of spots) {
    const x = r.x + r.width / 2, y = r.y + r.height / 2;
    if (r.width > 0 && r.height > 0 && x >= 0 && y >= 0 && x < innerWidth && y < innerHeight
        && plain(root.elementFromPoint(x, y)))
      return { x: x - left, y: y - top };
  }
  return null;
}"""
"""Where in `label` to click it, relative to its padding box: the centre of its first box,
text run or element whose click lands on the label and on nothing in it that takes a click
of its own (a link in "I agree to the terms", the control itself); null (its centre) when no
such place is shown. A click on the link would follow it, and Playwright refuses a click on
a label that lands on one."""


_OWN_POINT = """(el) => {
  const nested = '[role="group"], [role="treeitem"]';
  if (el.getAttribute("role") !== "treeitem" || !el.querySelector(nested)) return null;
  const box = el.getBoundingClientRect();
  for (const kid of el.childNodes) {
    if (kid.nodeType === 1 && kid.matches(nested)) break;
    let rect;
    if (kid.nodeType === 3 && kid.data.trim()) {
      const range = document.createRange();
      range.selectNodeContents(kid);
      rect = range.getClientRects()[0];
    } else if (kid.nodeType === 1) rect = kid.getClientRects()[0];
    if (rect && rect.width > 0 && rect.height > 0)
      return { x: rect.x - box.x + rect.width / 2, y: rect.y - box.y + rect.height / 2 };
  }
  return null;
}"""
"""Where on a tree item holding nested items a click lands on the item itself (its own text,
before its group), relative to its box; null for anything else (its centre will do). The
centre of an expanded item is over one of its children."""


async def _double_click(s: WebSurface, ref: str | None, a: ActArgs, ref2: str | None) -> None:
    await (await s._need(ref, "doubleClick")).dblclick(timeout=s._timeout(a))


async def _right_click(s: WebSurface, ref: str | None, a: ActArgs, ref2: str | None) -> None:
    await (await s._need(ref, "rightClick")).click(button="right", timeout=s._timeout(a))


async def _hover(s: WebSurface, ref: str | None, a: ActArgs, ref2: str | None) -> None:
    await (await s._need(ref, "hover")).hover(timeout=s._timeout(a))


async def _hover_and_click(s: WebSurface, ref: str | None, a: ActArgs, ref2: str | None) -> None:
    locator = await s._need(ref, "hoverAndClick")
    await locator.hover(timeout=s._timeout(a))
    await locator.click(timeout=s._timeout(a))


async def _press_and_hold(s: WebSurface, ref: str | None, a: ActArgs, ref2: str | None) -> None:
    page = s._require_page()
    if ref is not None:
        await (await s._locator(ref)).hover(timeout=s._timeout(a))
    await page.mouse.down()
    s._mouse_down = True


async def _release(s: WebSurface, ref: str | None, a: ActArgs, ref2: str | None) -> None:
    page = s._require_page()
    if ref is not None:
        await (await s._locator(ref)).hover(timeout=s._timeout(a), force=True)
    await page.mouse.up()
    s._mouse_down = False


async def _drag_to(s: WebSurface, ref: str | None, a: ActArgs, ref2: str | None) -> None:
    source = await s._need(ref, "dragTo")
    if ref2 is None:
        raise DataError("dragTo needs ref2, the drop target", path="ref2")
    await source.drag_to(await s._locator(ref2), timeout=s._timeout(a))


_FORMATS: Final = {
    "date": "a date as YYYY-MM-DD",
    "time": "a time as HH:MM or HH:MM:SS",
    "datetime-local": "a date and time as YYYY-MM-DDTHH:MM or YYYY-MM-DDTHH:MM:SS",
    "month": "a month as YYYY-MM",
    "week": "a week as YYYY-Www",
    "color": "a color as #rrggbb",
}
"""What each input whose value the browser sanitizes takes, in the words of its refusal."""

_TIME_SHAPE: Final = r"[0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,3})?)?"
_SHAPES: Final = {
    "date": (r"[0-9]{4,}-[0-9]{2}-[0-9]{2}", "date"),
    "time": (_TIME_SHAPE, "time"),
    "datetime-local": (r"[0-9]{4,}-[0-9]{2}-[0-9]{2}[T ]" + _TIME_SHAPE, "date and time"),
    "month": (r"[0-9]{4,}-[0-9]{2}", "month"),
    "week": (r"[0-9]{4,}-W[0-9]{2}", "week"),
}
"""The shape of each date or time input's format, and what a value of it is: text of that
shape the browser still empties names no day, time or week there is (2024-02-30, 24:00,
2023-W53), and its refusal says so rather than naming a format the text already has."""

_HOLDS: Final = """(el, v) => {
  const probe = document.createElement("input");
  probe.type = el.type;
  probe.value = v;
  return el.type === "color" ? probe.value === v.toLowerCase() : probe.value !== "";
}"""
"""Whether input `el` can hold `v`, tried on a detached input of its type: the browser empties
a date or time input given text not in its format (a color input turns it black), and the
form would be sent without the value the receipt claimed was set."""


_SET_VALUE: Final = """(el, v) => {
  el.value = v;
  el.dispatchEvent(new Event("input", {bubbles: true}));
  el.dispatchEvent(new Event("change", {bubbles: true}));
}"""

_ONE_LINE: Final = ("text", "search", "url", "tel", "email", "password")
"""The input types that hold one line of typed text, and the ones ``maxlength`` limits."""

_FIELD: Final = f"""el => [
  el.tagName === "INPUT" ? el.type : el.tagName === "TEXTAREA" ? "textarea" : "",
  el.tagName === "TEXTAREA" || el.tagName === "INPUT"
    && {json.dumps(_ONE_LINE)}.includes(el.type) ? el.maxLength : -1,
]"""
"""An element's input type (``textarea`` for one, empty for any other element) and the most
characters a user can type into it: its ``maxlength`` where its type has one (a date's or a
number's is ignored), else -1."""


def _typed_length(text: str) -> int:
    """How long `text` is as a field's ``maxlength`` counts it: in UTF-16 code units, a line
    break (CRLF, CR or LF) one, as the browser keeps it."""
    return len(re.sub(r"\r\n?", "\n", text).encode("utf-16-le")) // 2


def _fits_field(text: str, kind: str, limit: int, ref: str) -> None:
    """An ActionabilityError, before anything is typed, when the browser would change `text`
    unseen as it is typed into a field of input type `kind` (as ``_FIELD`` says) whose
    ``maxlength`` is `limit` (-1 for none): a line break in a one-line input becomes a space,
    text past the limit is cut off; the receipt would be for text the field does not hold."""
    if kind in _ONE_LINE and ("\n" in text or "\r" in text):
        raise ActionabilityError(
            "the field takes one line, and the text has a line break (the browser would type"
            " it as a space)",
            details={"ref": ref, "multiline": False},
        )
    length = _typed_length(text)
    if 0 <= limit < length:
        counted = "" if length == len(text) else " as the browser counts them (UTF-16 code units)"
        raise ActionabilityError(
            f"the text is {length} characters{counted}, and the field takes at most {limit}"
            " (its maxlength)",
            details={"ref": ref, "maxlength": limit, "length": length},
        )


async def _type(s: WebSurface, ref: str | None, a: ActArgs, ref2: str | None) -> None:
    if a.text is None:
        raise DataError("type needs text", path="args.text")
    if ref is None:
        await s._require_page().keyboard.type(a.text)
        return
    locator = await _live(s, ref, "type")
    kind, limit = await locator.evaluate(_FIELD)
    text = a.text
    _fits_field(text, kind, limit, ref)
    if kind == "range" or (kind == "number" and text):
        text = await _takes_number(locator, kind, text, ref)
    if kind in _FORMATS and text:
        await _must_hold(locator, kind, text, ref)
    if kind == "range" or kind in _FORMATS:
        await locator.evaluate(_SET_VALUE, text)
        return
    await _fill(s, ref, locator, text, kind, s._timeout(a))


async def _fill(
    s: WebSurface, ref: str, locator: Locator, text: str, kind: str, timeout: float
) -> None:
    """`text` filled in, its last character typed as a key: a page that follows typing by its
    keys (a Search button enabled on ``keyup``, suggestions asked for on ``keydown``) sees one
    keystroke with the whole text in the field, as after a user's last key, while the rest is
    inserted at once as a paste is (a key per character costs about 3 ms). A last character
    no US key types (é, CJK, an emoji) Playwright inserts as text, with no key events. A text of one
    character is typed over the field's selected content, never after emptying it. Text
    input and textarea `kind`s alone (as ``_FIELD`` says): a number input's text is filled
    whole (part of a number is no number to it), and so is an editable element's, whose
    caret an inserted line break may leave before a paragraph it made; and so is text ending
    in a character no key types as text (a Tab would move the focus, an Enter send a chat).
    A page that renders its form anew on each input replaces the field as the text goes in:
    the key then goes where the user's would, to the field that took its place (see
    ``_key_after_render``). No text empties the field."""
    if not text:
        await locator.fill("", timeout=timeout)
        return
    last = text[-1]
    if kind not in (*_ONE_LINE, "textarea") or not last.isprintable():
        await locator.fill(text, timeout=timeout)
        return
    if text[:-1]:
        await locator.fill(text[:-1], timeout=timeout)
    elif await locator.is_editable(timeout=timeout):
        await locator.select_text(timeout=timeout)
    else:  # Playwright's wait for it to take text, and its refusal when it never does
        await locator.fill(text, timeout=timeout)
        return
    if await locator.count():
        await locator.press_sequentially(last, timeout=timeout)
    else:
        await _key_after_render(s, ref, text)


_TOOK_ITS_PLACE: Final = """(held) => new Promise((done) => setTimeout(() => setTimeout(() => {
  let at = document.activeElement;
  while (at && at.shadowRoot && at.shadowRoot.activeElement) at = at.shadowRoot.activeElement;
  done(!!at && (at.tagName === "INPUT" || at.tagName === "TEXTAREA") && at.value === held);
}, 0), 0))"""
"""Whether, once the page has had two turns to move the focus (a render's own ``focus()``,
one put off with ``setTimeout``), a text field holding `held` has it."""


async def _key_after_render(s: WebSurface, ref: str, text: str) -> None:
    """Type `text`'s last character where the focus is, when the page replaced the field
    `ref` as the rest of it went in and the field with the focus holds that rest (the one
    that took its place); else an ActionabilityError saying so: the key would go elsewhere,
    and the page shows the rest already."""
    frame = await s._frame_of(ref)
    if not await frame.evaluate(_TOOK_ITS_PLACE, text[:-1]):
        raise ActionabilityError(
            "the page replaced the field as the text went in, and the focus is on no field"
            " holding what went in so far: read again",
            details={"ref": ref, "field_replaced": True},
        )
    await s._require_page().keyboard.type(text[-1])


_NUMBER_FITS: Final = """(el, given) => {
  const v = el.type === "number" ? given.trim() : given;
  const probe = document.createElement("input");
  probe.type = "number";
  probe.value = v;
  if (probe.value === "") return [v, v === "" && el.type === "number" ? null : ["number"]];
  if (el.type === "range") {
    const range = document.createElement("input");
    range.type = "range";
    for (const a of ["min", "max", "step"])
      if (el.hasAttribute(a)) range.setAttribute(a, el.getAttribute(a));
    range.value = "-1e300";
    const low = range.value;
    range.value = "1e300";
    const high = range.value;
    const n = Number(probe.value);
    if (n < Number(low)) return [v, ["below", Number(low), low]];
    if (n > Number(high)) return [v, ["above", Number(high), high]];
  }
  const stepper = document.createElement("input");
  stepper.type = "number";
  for (const a of ["min", "max", "step", "value"])
    if (el.hasAttribute(a)) stepper.setAttribute(a, el.getAttribute(a));
  stepper.value = v;
  if (!stepper.validity.stepMismatch) return [v, null];
  const nearest = [];
  for (const move of ["stepDown", "stepUp"]) {
    stepper.value = v;
    try { stepper[move](); nearest.push(stepper.value); } catch (e) {}
  }
  return [v, ["steps", nearest]];
}"""
"""`given` as a range or number input `el` takes it (a number input's fill trims surrounding
whitespace, as Playwright's does), and why `el` would not hold it as given: ``["number"]``
when it is no number the browser reads (a range would take its default, a number input none;
spaces alone empty a number input, and fit), ``["below", min, shown]`` or ``["above", max,
shown]`` when a range would clamp it to its bounds (`shown`: the bound as the page writes a
value), ``["steps", nearest]`` with the allowed values either side when it falls between the
steps (a range would move to the nearer unseen, a number input would hold it as invalid): the
browser's own step rules, on a number input with `el`'s bounds, step and step base; null when
it fits. One call to the page for all of it."""


async def _takes_number(locator: Locator, kind: str, text: str, ref: str) -> str:
    """`text` as the range or number input takes it (a number input's trimmed), or an
    ActionabilityError, before anything is set, when it would not hold it as given: a range
    moves to its default, its bound or its nearer step unseen, and the receipt would be for a
    value it does not hold; a number input holds no text that is no number, and one between
    its steps as an invalid value its form refuses. A number input above its maximum holds
    it, invalid, as a user typing it makes it."""
    taken, why = await locator.evaluate(_NUMBER_FITS, text)
    if why is None:
        return str(taken)
    if why == ["number"]:
        raise ActionabilityError(
            f"{text!r} does not fit the {kind} field: it takes a number",
            details={"ref": ref, "expected": "a number"},
        )
    if why[0] == "steps":
        nearest = list(dict.fromkeys(why[1]))
        said = "values are" if len(nearest) > 1 else "value is"
        raise ActionabilityError(
            f"{taken} is between the {kind}'s steps: the nearest {said} {' and '.join(nearest)}"
        )
    side, bound, shown = why
    limit = "minimum" if side == "below" else "maximum"
    raise ActionabilityError(
        f"{taken} is {side} the {limit}, {shown}", details={"ref": ref, limit: bound}
    )


async def _must_hold(locator: Locator, kind: str, text: str, ref: str) -> None:
    if not await locator.evaluate(_HOLDS, text):
        shape, noun = _SHAPES.get(kind, (None, ""))
        why = (
            f"there is no such {noun}"
            if shape is not None and re.fullmatch(shape, text)
            else f"it takes {_FORMATS[kind]}"
        )
        raise ActionabilityError(
            f"{text!r} does not fit the {kind} field: {why}",
            details={"ref": ref, "expected": _FORMATS[kind]},
        )


async def _clear(s: WebSurface, ref: str | None, a: ActArgs, ref2: str | None) -> None:
    """With the `text` a `type` sets next (set_text), the field is left as it is, focused as
    a clear leaves it, or refused with nothing touched when the text does not fit (see
    ``_fits_field`` and, for a date, time or color input, ``_must_hold``): that `type`
    replaces the field's content whole, as a user typing over it all does, and emptying it
    first would have the page's handlers see it empty (a search run for nothing, a change
    handler told the date is gone) and a page that renders its form anew on each input
    replace the field before the text could go in."""
    locator = await s._need(ref, "clear")
    if ref is not None and a.text:
        kind, limit = await locator.evaluate(_FIELD)
        _fits_field(a.text, kind, limit, ref)
        if kind in _FORMATS:
            await _must_hold(locator, kind, a.text, ref)
        await locator.focus(timeout=s._timeout(a))
        return
    await locator.clear(timeout=s._timeout(a))


_FOCUS_IN: Final = """(el) => {
  let at = document.activeElement;
  while (at && at.shadowRoot && at.shadowRoot.activeElement) at = at.shadowRoot.activeElement;
  for (let n = at; n; n = n.parentNode || n.host) if (n === el) return at;
  return null;
}"""
"""What has the keyboard focus in `el` (it, or an element inside it, its shadow trees
included); null when the focus is elsewhere."""

_KEY_TARGET: Final = f"""(el) => {{
  const focusIn = {_FOCUS_IN};
  const was = focusIn(el);
  if (was !== null && was !== el) {{ was.focus(); return "within"; }}
  el.focus();
  if (focusIn(el) !== null) return "element";
  for (const kid of el.querySelectorAll("*")) {{
    kid.focus();
    if (focusIn(el) !== null) return "within";
  }}
  return null;
}}"""
"""Where a key pressed on `el` goes, the focus moved there: `el` itself (``"element"``), or
(``"within"``) what has the focus in it already, else the first element in it that takes
it, as a user tabs into a dialog to press Escape; null when neither `el` nor anything in it
takes the focus, and the key would reach another element (nothing was moved then)."""


async def _press(s: WebSurface, ref: str | None, a: ActArgs, ref2: str | None) -> None:
    if not a.key:
        raise DataError("press needs a key", path="args.key")
    keyboard = s._require_page().keyboard
    if ref is None:
        await s._navigating_input(keyboard.press(a.key))
        return
    locator = await s._locator(ref)
    reached = await locator.evaluate(_KEY_TARGET)
    if reached is None:
        raise ActionabilityError(
            f"{ref} takes no keyboard focus, nor does anything in it: {a.key} would reach"
            " another element",
            details={"ref": ref},
        )
    if reached == "within":
        await s._navigating_input(keyboard.press(a.key))
    else:
        await s._navigating_input(locator.press(a.key, timeout=s._timeout(a)))


async def _focus(s: WebSurface, ref: str | None, a: ActArgs, ref2: str | None) -> None:
    locator = await s._need(ref, "focus")
    await locator.focus(timeout=s._timeout(a))
    if await locator.evaluate(_FOCUS_IN) is None:  # focus() does nothing on such an element
        raise ActionabilityError(f"{ref} cannot take the keyboard focus", details={"ref": ref})


async def _key_down(s: WebSurface, ref: str | None, a: ActArgs, ref2: str | None) -> None:
    if not a.key:
        raise DataError("keyDown needs a key", path="args.key")
    if ref is not None:
        await (await s._locator(ref)).focus(timeout=s._timeout(a))
    await s._require_page().keyboard.down(a.key)


async def _key_up(s: WebSurface, ref: str | None, a: ActArgs, ref2: str | None) -> None:
    if not a.key:
        raise DataError("keyUp needs a key", path="args.key")
    if ref is not None:
        await (await s._locator(ref)).focus(timeout=s._timeout(a))
    await s._require_page().keyboard.up(a.key)


_SUBMITTER: Final = """el => {
  const form = el.tagName === 'FORM' ? el : (el.form || el.closest('form'));
  if (!form) return null;
  const buttons = form.getRootNode().querySelectorAll(
    'button, input[type=submit], input[type=image]');
  return Array.from(buttons).find(
    (b) => b.form === form && (b.type === 'submit' || b.type === 'image')) || form;
}"""
"""The form's default button (its first submit button, a ``form=`` attribute's included),
else the form."""


async def _submit(s: WebSurface, ref: str | None, a: ActArgs, ref2: str | None) -> None:
    page = s._require_page()
    if ref is None:
        await page.keyboard.press("Enter")
        return
    locator = await s._locator(ref)
    handle = (await locator.evaluate_handle(_SUBMITTER)).as_element()
    if handle is None:
        raise ActionabilityError("the element is in no form", details={"ref": ref})
    is_form = await handle.evaluate("el => el.tagName === 'FORM'")
    if is_form:
        await handle.evaluate("f => f.requestSubmit()")
    elif await handle.evaluate("b => b.matches(':disabled')"):
        raise ActionabilityError(
            "the form's default button (its first submit button) is disabled: the browser"
            " does not submit the form",
            details={"ref": ref},
        )
    elif await handle.is_visible():
        await handle.click(timeout=s._timeout(a))
    else:  # Enter in a field clicks it all the same: the browser's implicit submission
        await handle.evaluate("b => b.click()")
    await handle.dispose()
    await page.wait_for_load_state("domcontentloaded")


async def _upload(s: WebSurface, ref: str | None, a: ActArgs, ref2: str | None) -> None:
    if not a.files:
        raise DataError("upload needs files", path="args.files")
    for path in a.files:
        if not os.path.isfile(path):
            raise DataError(f"no such file {path!r}", path="args.files")
    await (await s._need(ref, "upload")).set_input_files(list(a.files), timeout=s._timeout(a))


async def _select_option(s: WebSurface, ref: str | None, a: ActArgs, ref2: str | None) -> None:
    if not a.values:
        raise DataError("selectOption needs values", path="args.values")
    locator = await s._need(ref, "selectOption")
    values = list(a.values)
    matched = await locator.evaluate(
        "(el, vs) => el.tagName === 'SELECT' ? vs.filter(v => Array.from(el.options)"
        ".some(o => o.value === v || o.label === v)).length : -1",
        values,
    )
    if matched == -1:
        raise ActionabilityError("selectOption needs a <select>", details={"ref": ref})
    if matched != len(values):
        raise ActionabilityError(f"no option for some of {values}", details={"ref": ref})
    by_value, multiple, disabled = await locator.evaluate(_OPTIONS_OF, values)
    if not multiple and len(set(by_value)) > 1:
        raise ActionabilityError(
            f"the select takes one choice, and {len(set(by_value))} were given: {values}",
            details={"ref": ref, "multiple": False},
        )
    if disabled:
        raise ActionabilityError(
            f"the option {', '.join(map(repr, disabled))} is disabled"
            if len(disabled) == 1
            else f"the options {', '.join(map(repr, disabled))} are disabled",
            details={"ref": ref, "disabled": disabled},
        )
    if await locator.evaluate(_CHOSEN_ALREADY, by_value):
        return  # Playwright would send the page a change event for a choice that changed nothing
    await locator.select_option(value=by_value, timeout=s._timeout(a))


_OPTIONS_OF: Final = """(el, vs) => {
  const options = Array.from(el.options);
  const named = (v) => options.find((o) => o.value === v) ?? options.find((o) => o.label === v);
  const chosen = vs.map(named);
  return [
    chosen.map((o) => o.value),
    el.multiple,
    chosen.filter((o) => o.matches(":disabled")).map((o) => o.label),
  ];
}"""
"""For the values (or labels) ``selectOption`` was given, each known: the values of the
options they name, whether the select takes several, and the labels of those disabled (in a
disabled group too), which Playwright would wait for until its timeout."""


_CHOSEN_ALREADY: Final = """(el, vs) => {
  const picked = [];
  let left = vs;
  for (const o of el.options) {
    if (!left.includes(o.value)) continue;
    picked.push(o);
    if (!el.multiple) break;
    left = left.filter(v => v !== o.value);
  }
  const now = Array.from(el.selectedOptions);
  return picked.length === now.length && picked.every((o, i) => o === now[i]);
}"""
"""Whether a select has chosen exactly the options ``selectOption`` of these values would
choose (Playwright's pick: the first option of each value, of any one in a single select)."""


_DESELECT: Final = """(el, vs) => {
  if (el.tagName !== 'SELECT') return false;
  for (const o of el.options) {
    if (vs === null || vs.includes(o.value) || vs.includes(o.label)) o.selected = false;
  }
  el.dispatchEvent(new Event('input', {bubbles: true}));
  el.dispatchEvent(new Event('change', {bubbles: true}));
  return true;
}"""


async def _deselect_option(s: WebSurface, ref: str | None, a: ActArgs, ref2: str | None) -> None:
    if not a.values:
        raise DataError("deselectOption needs values", path="args.values")
    locator = await s._need(ref, "deselectOption")
    if not await locator.evaluate(_DESELECT, list(a.values)):
        raise ActionabilityError("deselectOption needs a <select>", details={"ref": ref})


async def _deselect_all(s: WebSurface, ref: str | None, a: ActArgs, ref2: str | None) -> None:
    locator = await s._need(ref, "deselectAll")
    if not await locator.evaluate(_DESELECT, None):
        raise ActionabilityError("deselectAll needs a <select>", details={"ref": ref})


_BEFORE_TICKING: Final = f"""(el) => [
  el.type === "radio",
  {_INERT.removeprefix("el => ")},
  ({_OWN_POINT})(el),
  ({_STAND_IN_LABEL})(el) !== null,
  el.id,
]"""
"""What ``setChecked`` needs to know before its click, in one call: whether the element is a
radio button, whether it is inert (`_INERT`), where a click lands on it (`_OWN_POINT`),
whether it takes the click through a label (`_STAND_IN_LABEL`), and its id, by which the box
a page renders in its place is found."""

_CHECKED_BY_ID: Final = """(id) => {
  const box = id ? document.getElementById(id) : null;
  return box instanceof HTMLInputElement && (box.type === "checkbox" || box.type === "radio")
    ? box.checked
    : null;
}"""


async def _set_checked(s: WebSurface, ref: str | None, a: ActArgs, ref2: str | None) -> None:
    """Nothing when the checkbox is as asked; else a click as ``click`` gives it (on a label
    shown where the checkbox is hidden in it or under it, which Playwright's own
    ``set_checked`` finds covered), and an ActionabilityError when the page kept it as it
    was. A radio button, which no click unchecks, is Playwright's refusal.

    After the click the state is read on the element taken before it, not through the
    locator: a page that renders its form anew on a change replaces the box, and the locator
    would wait out the timeout for an element that never comes back. The box with its id
    then says how the page holds it, and with no such box the click stands, as the page took
    it."""
    checked = True if a.checked is None else a.checked
    if ref is None:
        raise DataError("setChecked needs a ref", path="ref")
    locator = await s._locator(ref)
    if await locator.is_checked(timeout=s._timeout(a)) == checked:
        return
    element = await locator.element_handle(timeout=s._timeout(a))
    try:
        radio, inert, own, by_label, id_ = await element.evaluate(_BEFORE_TICKING)
        if radio and not checked:
            await locator.set_checked(checked, timeout=s._timeout(a))
            return
        if inert:
            raise _inert(ref)
        if not (by_label and await _clicked_label(s, element, a)):
            await s._navigating_input(element.click(position=own, timeout=s._timeout(a)))
        held, replaced = await _held_after_click(s, ref, element, id_)
    finally:
        asyncio.ensure_future(element.dispose()).add_done_callback(_retrieved)
    if held is not None and held != checked:
        state = "unchecked" if checked else "checked"
        details: dict[str, Any] = {"ref": ref, "checked": not checked}
        if replaced:
            details["replaced"] = True
        raise ActionabilityError(
            f"the click did not change its state: the page kept it {state}", details=details
        )


async def _held_after_click(
    s: WebSurface, ref: str, element: ElementHandle, id_: str
) -> tuple[bool | None, bool]:
    """Whether the clicked box is checked (None when the page shows no box to say), and
    whether the page replaced it: then the box now bearing its id answers, at once."""
    try:
        return await element.is_checked(), False
    except PlaywrightError:
        if await element.evaluate("el => el.isConnected"):
            raise
    held: bool | None = await (await s._frame_of(ref)).evaluate(_CHECKED_BY_ID, id_)
    return held, True


async def _scroll_into_view(s: WebSurface, ref: str | None, a: ActArgs, ref2: str | None) -> None:
    await (await s._need(ref, "scrollIntoView")).scroll_into_view_if_needed(timeout=s._timeout(a))


async def _scroll(s: WebSurface, ref: str | None, bottom: bool) -> None:
    if ref is None:
        await s._current_frame().evaluate(
            "b => window.scrollTo(0, b ? document.documentElement.scrollHeight : 0)", bottom
        )
    else:
        await (await s._locator(ref)).evaluate(
            "(el, b) => { el.scrollTop = b ? el.scrollHeight : 0; }", bottom
        )


async def _scroll_to_top(s: WebSurface, ref: str | None, a: ActArgs, ref2: str | None) -> None:
    await _scroll(s, ref, False)


async def _scroll_to_bottom(s: WebSurface, ref: str | None, a: ActArgs, ref2: str | None) -> None:
    await _scroll(s, ref, True)


async def _wait_for(s: WebSurface, ref: str | None, a: ActArgs, ref2: str | None) -> None:
    if ref is None:
        await s._require_page().wait_for_load_state("load", timeout=s._timeout(a))
        return
    state = a.wait_state or "visible"
    frame = await s._frame_of(ref)
    found = await s._js(frame, "resolve", ref)
    if found["status"] == "unknown":
        raise LocateError(f"ref {ref!r} is not current", details={"ref": ref})
    if found["status"] == "detached":
        if state in ("hidden", "detached"):
            return
        raise LocateError(f"ref {ref!r} is no longer in the page", details={"ref": ref})
    locator = frame.locator(f"[{REF_ATTRIBUTE}={_quote(found['stamp'])}]")
    await locator.wait_for(state=state, timeout=s._timeout(a))


async def _pages_matching(s: WebSurface, target: str | None, timeout_ms: float) -> Page:
    assert s._context is not None
    current = s._require_page()
    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        pages = [p for p in s._context.pages if not p.is_closed()]
        chosen: Page | None = None
        if target is None or target in ("last", "new", "newest"):
            others = [p for p in pages if p is not current]
            chosen = others[-1] if others else None
        elif target in ("first", "main"):
            chosen = pages[0] if pages else None
        elif target.isdigit():
            index = int(target)
            chosen = pages[index] if index < len(pages) else None
        else:
            for page in pages:
                title = await page.title()
                if target in page.url or target in title:
                    chosen = page
                    break
        if chosen is not None:
            return chosen
        if time.monotonic() >= deadline:
            raise SurfaceTimeoutError(f"no window matches {target!r}", details={"target": target})
        await asyncio.sleep(0.05)


async def _switch_window(s: WebSurface, ref: str | None, a: ActArgs, ref2: str | None) -> None:
    page = await _pages_matching(s, a.target, s._timeout(a))
    await page.wait_for_load_state("domcontentloaded")
    await page.bring_to_front()
    s._switch_to(page)


async def _close_window(s: WebSurface, ref: str | None, a: ActArgs, ref2: str | None) -> None:
    """Close the current window and go back to the one that opened it (else the newest)."""
    assert s._context is not None
    current = s._require_page()
    others = [p for p in s._context.pages if p is not current and not p.is_closed()]
    if not others:
        raise ActionabilityError("the session's only window cannot be closed")
    opener = await current.opener()
    await current.close()
    back = opener if opener in others and not opener.is_closed() else others[-1]
    await back.bring_to_front()
    s._switch_to(back)


async def _close_other_windows(
    s: WebSurface, ref: str | None, a: ActArgs, ref2: str | None
) -> None:
    assert s._context is not None
    current = s._require_page()
    for page in list(s._context.pages):
        if page is not current:
            await page.close()


async def _switch_frame(s: WebSurface, ref: str | None, a: ActArgs, ref2: str | None) -> None:
    page = s._require_page()
    if ref is not None:
        handle = await (await s._locator(ref)).element_handle(timeout=s._timeout(a))
        frame = await handle.content_frame()
        await handle.dispose()
        if frame is None:
            raise ActionabilityError("the element is not a frame", details={"ref": ref})
        await frame.wait_for_load_state("domcontentloaded")
        s._frame = frame
        return
    target = a.target
    if target in (None, "", "main", "top"):
        s._frame = page.main_frame
        return
    current = s._current_frame()
    if target == "parent":
        s._frame = current.parent_frame or page.main_frame
        return
    assert target is not None
    deadline = time.monotonic() + s._timeout(a) / 1000
    while True:
        children = current.child_frames
        if target.isdigit() and int(target) < len(children):
            s._frame = children[int(target)]
            return
        for frame in page.frames:
            if frame.name == target or (frame.parent_frame is not None and target in frame.url):
                s._frame = frame
                return
        if time.monotonic() >= deadline:
            raise SurfaceTimeoutError(f"no frame matches {target!r}", details={"target": target})
        await asyncio.sleep(0.05)


async def _resize_window(s: WebSurface, ref: str | None, a: ActArgs, ref2: str | None) -> None:
    if a.width is None or a.height is None:
        raise DataError("resizeWindow needs width and height", path="args")
    await s._require_page().set_viewport_size({"width": a.width, "height": a.height})


async def _read_action(s: WebSurface, ref: str | None, a: ActArgs, ref2: str | None) -> str | None:
    if ref is None:
        return await s._require_page().title()
    locator = await s._locator(ref)
    text: str = await locator.evaluate(
        "el => ('value' in el && (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA'"
        " || el.tagName === 'SELECT')) ? String(el.value) : (el.innerText ?? '').trim()"
    )
    return text


async def _evaluate(s: WebSurface, ref: str | None, a: ActArgs, ref2: str | None) -> str | None:
    if not a.script:
        raise DataError("evaluate needs a script", path="args.script")
    try:
        if ref is None:
            value = await s._current_frame().evaluate(a.script)
        else:
            value = await (await s._locator(ref)).evaluate(a.script)
    except PlaywrightError as exc:
        if "has been closed" in exc.message:
            raise
        raise ScriptError(_one_line(exc.message), details={"action": "evaluate"}) from exc
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value)


async def _screenshot_action(
    s: WebSurface, ref: str | None, a: ActArgs, ref2: str | None
) -> str | None:
    if not a.path:
        raise DataError("screenshot needs a path", path="args.path")
    if ref is None:
        await s._screenshot(a.path, ())
    else:
        await (await s._locator(ref)).screenshot(path=a.path, timeout=s._timeout(a))
    return a.path


async def _no_handler(s: WebSurface, ref: str | None, a: ActArgs, ref2: str | None) -> None:
    raise AssertionError("handled before dispatch")  # pragma: no cover


_ACTIONS: Final[dict[str, _Handler]] = {
    "navigate": _navigate,
    "back": _back,
    "forward": _forward,
    "refresh": _refresh,
    "click": _click,
    "doubleClick": _double_click,
    "rightClick": _right_click,
    "hover": _hover,
    "hoverAndClick": _hover_and_click,
    "pressAndHold": _press_and_hold,
    "release": _release,
    "dragTo": _drag_to,
    "type": _type,
    "clear": _clear,
    "press": _press,
    "focus": _focus,
    "keyDown": _key_down,
    "keyUp": _key_up,
    "submit": _submit,
    "upload": _upload,
    "selectOption": _select_option,
    "deselectOption": _deselect_option,
    "deselectAll": _deselect_all,
    "setChecked": _set_checked,
    "scrollIntoView": _scroll_into_view,
    "scrollToTop": _scroll_to_top,
    "scrollToBottom": _scroll_to_bottom,
    "waitFor": _wait_for,
    "switchWindow": _switch_window,
    "closeWindow": _close_window,
    "closeOtherWindows": _close_other_windows,
    "switchFrame": _switch_frame,
    "resizeWindow": _resize_window,
    "dialog": _no_handler,
    "read": _read_action,
    "evaluate": _evaluate,
    "screenshot": _screenshot_action,
}
"""Every action this adapter performs (``sleep`` runs on Trio, ``quit`` is refused)."""
