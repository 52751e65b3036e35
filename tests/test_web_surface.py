"""The web adapter against a real Chromium: refs, snapshot options, dialogs, sessions."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from semledger.adapters import (
    SURFACE_ACTIONS,
    AgentSurface,
    DataError,
    DialogError,
    LocateError,
    LoggedSurface,
    NavigationError,
    SessionError,
    SessionInit,
    Snapshot,
    ValueEquals,
    check_plan,
    create_surface,
    has_optional,
    snapshot_problems,
)
from semledger.adapters._cases_web import serve_directory
from semledger.adapters._web import WebBrowser, WebSurface
from semledger.eventlog import REDACTED, MemoryRecorder
from semledger.hosts import rerun_surface


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with serve_directory() as url:
        yield url


@pytest.fixture
async def surface(browser: WebBrowser, base_url: str) -> AsyncIterator[WebSurface]:
    made = create_surface({"adapter": "web", "browser": browser})
    assert isinstance(made, WebSurface)
    await made.open(SessionInit(base_url=base_url + "home.html"))
    yield made
    await made.close()


def test_the_factory_gives_a_web_surface_with_honest_capabilities() -> None:
    made = create_surface({"adapter": "web", "testid_attributes": ["data-qa"]})
    assert isinstance(made, AgentSurface)
    assert made.kind == "web"
    caps = made.capabilities()
    assert (caps.dialogs, caps.frames, caps.windows, caps.upload, caps.drag) == (True,) * 5
    assert (caps.trace, caps.screenshot, caps.restore) == (True,) * 3
    assert (caps.pick, caps.observe, caps.webmcp) == (False,) * 3
    assert has_optional(made, "trace")
    assert not any(has_optional(made, m) for m in ("request", "pick", "observe"))
    check_plan(caps, [a for a in SURFACE_ACTIONS if a not in ("quit", "invoke")])


@pytest.mark.parametrize(
    "config",
    [{"testid_attributes": "data-qa"}, {"timeout_ms": -1}, {"browser": "chromium"}],
)
def test_malformed_config_is_a_data_error(config: dict[str, object]) -> None:
    with pytest.raises(DataError):
        create_surface({"adapter": "web", **config})


@pytest.mark.parametrize(
    ("path", "problem"),
    [("/nowhere/chromium", "no Chromium at"), ("/tmp", "is not an executable file")],
)
def test_a_chromium_path_that_cannot_run_names_where_it_came_from(
    monkeypatch: pytest.MonkeyPatch, path: str, problem: str
) -> None:
    """It said only 'no Chromium at /nowhere/chromium' (and for a folder, Playwright's
    'spawn /tmp EACCES'), not that the path was the environment's."""
    monkeypatch.setenv("PLAYWRIGHT_CHROMIUM_EXECUTABLE", path)
    with pytest.raises(SessionError) as env:
        WebBrowser().start()
    assert f"{path} (from $PLAYWRIGHT_CHROMIUM_EXECUTABLE)" in str(env.value)
    assert problem in str(env.value)
    with pytest.raises(SessionError) as given:
        WebBrowser(executable_path=path).start()
    assert f"{path} (from executable_path)" in str(given.value)
    assert problem in str(given.value)


async def test_calls_before_open_are_session_errors(browser: WebBrowser) -> None:
    made = WebSurface({"browser": browser})
    with pytest.raises(SessionError):
        await made.snapshot()
    await made.close()
    await made.close()


async def test_a_second_open_is_refused(surface: WebSurface, base_url: str) -> None:
    with pytest.raises(SessionError):
        await surface.open(SessionInit(base_url=base_url))


async def test_an_unreachable_base_url_is_a_session_error(browser: WebBrowser) -> None:
    made = WebSurface({"browser": browser})
    with pytest.raises(SessionError):
        await made.open(SessionInit(base_url="http://127.0.0.1:9/"))
    await made.close()


async def test_refs_survive_a_new_snapshot_and_are_never_reused_after_navigation(
    surface: WebSurface,
) -> None:
    first = await surface.snapshot()
    second = await surface.snapshot()
    assert [n.ref for n in first.nodes] == [n.ref for n in second.nodes]
    await surface.act("navigate", args={"url": "home.html"})
    third = await surface.snapshot()
    assert not {n.ref for n in first.nodes} & {n.ref for n in third.nodes}
    assert third.hash == first.hash
    with pytest.raises(LocateError):
        await surface.act("click", first.nodes[-1].ref)


async def test_a_value_change_keeps_the_hash_and_changes_the_text(surface: WebSurface) -> None:
    before = await surface.snapshot()
    script = "document.getElementById('search').value = 'apples'"
    await surface.act("evaluate", args={"script": script})
    after = await surface.snapshot()
    assert after.hash == before.hash
    assert '- searchbox "Search": apples [ref=' in after.text
    assert after.text != before.text


async def test_snapshot_options_root_max_nodes_and_interactive_only(surface: WebSurface) -> None:
    (nav,) = await surface.locate({"by": "role", "role": "navigation"})
    rooted = await surface.snapshot(root=nav)
    assert rooted.ref == nav
    assert not snapshot_problems(rooted)
    assert {n.role for n in rooted.nodes} == {"navigation", "list", "listitem", "link"}
    assert len((await surface.snapshot(max_nodes=5)).nodes) == 5
    interactive = await surface.snapshot(interactive_only=True)
    assert {n.role for n in interactive.nodes[1:]} <= {"link", "button", "searchbox"}
    assert not snapshot_problems(interactive)


async def test_an_open_dialog_blocks_page_calls_until_answered(surface: WebSurface) -> None:
    await surface.act("navigate", args={"url": "dialogs.html"})
    (confirm,) = await surface.locate({"by": "id", "value": "confirm"})
    await surface.act("click", confirm)
    with pytest.raises(DialogError):
        await surface.locate({"by": "id", "value": "result"})
    assert str(await surface.read("url")).endswith("/dialogs.html")
    answered = await surface.act("dialog", args={"accept": False})
    assert answered.result == "Delete the file?"
    (result,) = await surface.locate({"by": "id", "value": "result"})
    assert await surface.read("text", result) == "cancelled"


async def test_quit_is_refused_and_unknown_actions_are_data_errors(surface: WebSurface) -> None:
    with pytest.raises(NavigationError) as refused:
        await surface.act("quit")
    assert refused.value.details["refused"] == "quit"
    with pytest.raises(DataError):
        await surface.act("teleport")
    with pytest.raises(DataError):
        await surface.act("click")


async def test_invalid_selectors_are_data_errors_not_empty_matches(surface: WebSurface) -> None:
    with pytest.raises(DataError):
        await surface.locate({"by": "css", "value": "a[[["})
    assert await surface.locate({"by": "accessibilityId", "value": "x"}) == []
    assert await surface.locate({"by": "webmcp", "tool": "search"}) == []


async def test_testid_attributes_configure_what_native_reports(
    browser: WebBrowser, base_url: str
) -> None:
    made = WebSurface({"browser": browser, "testid_attributes": ["data-qa"]})
    await made.open(SessionInit(base_url=base_url + "home.html"))
    try:
        snap = await made.snapshot()
        badge = next(n for n in snap.nodes if n.native.get("data-qa") == "qa-badge")
        assert "data-testid" not in next(n for n in snap.nodes if n.name == "Press me").native
        described = await made.describe(badge.ref)
        assert described.native["data-qa"] == "qa-badge"
    finally:
        await made.close()


async def test_a_session_can_start_from_a_stored_state(
    surface: WebSurface, browser: WebBrowser, base_url: str
) -> None:
    await surface.act("evaluate", args={"script": "localStorage.setItem('user', 'lin')"})
    await surface.act("navigate", args={"url": "dashboard.html"})
    saved = await surface.state()
    fresh = WebSurface({"browser": browser})
    await fresh.open(SessionInit(base_url=base_url, storage_state=saved))
    try:
        assert str(await fresh.read("url")).endswith("/dashboard.html")
        (greeting,) = await fresh.locate({"by": "id", "value": "greeting"})
        assert await fresh.read("text", greeting) == "Welcome, lin"
    finally:
        await fresh.close()


async def test_the_page_library_is_sent_once_per_document_not_once_per_call(
    surface: WebSurface, monkeypatch: pytest.MonkeyPatch
) -> None:
    from playwright.async_api import Frame, Locator

    from semledger.adapters._web_js import LIBRARY

    library = LIBRARY.strip()
    sent_whole: list[str] = []

    def spying(method: Any) -> Any:
        async def spy(self: Any, expression: str, arg: Any = None) -> Any:
            if library in expression:
                sent_whole.append(expression)
            return await method(self, expression, arg)

        return spy

    monkeypatch.setattr(Frame, "evaluate", spying(Frame.evaluate))
    monkeypatch.setattr(Locator, "evaluate_all", spying(Locator.evaluate_all))
    await surface.act("navigate", args={"url": "home.html"})  # a fresh document
    for _ in range(2):
        await surface.snapshot()
        await surface.locate({"by": "role", "role": "navigation"})
        await surface.locate({"by": "css", "value": "a"})
        await surface.locate({"by": "coords", "x": 5, "y": 5})
    assert len(sent_whole) == 1
    await surface.act("navigate", args={"url": "home.html"})
    await surface.locate({"by": "css", "value": "a"})
    assert len(sent_whole) == 2


async def _logged_login(
    browser: WebBrowser, base_url: str
) -> tuple[LoggedSurface, MemoryRecorder, Snapshot]:
    """A logged web session on the login fixture, and its first snapshot."""
    recorder = MemoryRecorder()
    logged = LoggedSurface(
        create_surface({"adapter": "web", "browser": browser}), recorder, "w", "web"
    )
    await logged.open(SessionInit(base_url=base_url + "login.html"))
    return logged, recorder, await logged.snapshot()


async def test_a_logged_web_session_keeps_a_typed_password_out_of_the_log(
    browser: WebBrowser, base_url: str
) -> None:
    """The page answers a read or a check of its password input with what was typed; the
    agent sees it, the log does not."""
    logged, recorder, snapshot = await _logged_login(browser, base_url)
    password = next(n.ref for n in snapshot.nodes if n.native.get("type") == "password")
    await logged.act("type", password, {"text": "hunter2"})
    assert await logged.read("value", password) == "hunter2"
    assert (await logged.check(ValueEquals("hunter2"), "ref", password)).ok
    await logged.close()
    logged_calls = repr([e for _r, e in recorder.events("w")])
    assert "hunter2" not in logged_calls
    assert REDACTED in logged_calls


async def test_a_web_session_that_typed_a_password_re_runs_identically(
    browser: WebBrowser, base_url: str
) -> None:
    """The re-run types the logged mask, as many characters as were typed: the page shows
    the field as it did live."""
    logged, recorder, snapshot = await _logged_login(browser, base_url)
    password = next(n.ref for n in snapshot.nodes if n.native.get("type") == "password")
    await logged.act("type", password, {"text": "hunter2"})
    await logged.snapshot()
    await logged.close()
    report = await rerun_surface(recorder, "w", config={"adapter": "web", "browser": browser})
    assert report.ok, report.divergence


async def test_keys_sent_to_the_focused_password_field_stay_out_of_the_log(
    browser: WebBrowser, base_url: str
) -> None:
    """Click a field, then type without a ref; or Tab from the username into it."""
    logged, recorder, snapshot = await _logged_login(browser, base_url)
    password = next(n.ref for n in snapshot.nodes if n.native.get("type") == "password")
    username = next(n.ref for n in snapshot.nodes if n.role == "textbox" and n.name == "Username")
    await logged.act("click", password)
    await logged.act("type", None, {"text": "hunter2"})
    await logged.act("clear", password)
    await logged.act("click", username)
    await logged.act("type", None, {"text": "ada"})
    await logged.act("press", None, {"key": "Tab"})
    await logged.act("type", None, {"text": "swordfish"})
    assert await logged.read("value", password) == "swordfish"  # where the keys went
    await logged.close()
    logged_calls = repr([e for _r, e in recorder.events("w")])
    assert "hunter2" not in logged_calls
    assert "swordfish" not in logged_calls
    assert "'ada'" in logged_calls
