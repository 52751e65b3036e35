"""Web conformance cases that a broken web adapter once passed: each fault here is run
through the case that must now name it."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
import trio
from PIL import Image

from semledger.adapters import ActResult, SessionError, register_adapter, run_conformance
from semledger.adapters._cases_web import _WebEnvironment, web_suite
from semledger.adapters._web import WebBrowser, WebSurface, default_executable


@pytest.fixture(autouse=True)
def _chromium() -> None:
    if not os.path.exists(default_executable()):
        pytest.fail(f"no Chromium at {default_executable()}: scripts/test.sh installs it")


async def _failure(cls: type[WebSurface], case_id: str) -> str | None:
    """The reason `case_id` fails for an adapter of `cls`; None when it does not fail."""
    name = f"faulty-web-{cls.__name__}"
    register_adapter(name, cls)
    report = await run_conformance(name, suite="web", only=[case_id])
    (result,) = report.results
    return result.reason if result.status == "failed" else None


class ToggleSetChecked(WebSurface):
    """setChecked ignores `checked` and toggles the box."""

    async def act(self, action: str, ref: str | None = None, args: Any = None,
                  ref2: str | None = None) -> ActResult:
        if action == "setChecked":
            return await super().act("click", ref)
        return await super().act(action, ref, args, ref2)


async def test_a_set_checked_that_toggles_fails_checkboxes_and_radios() -> None:
    """Each box was only ever asked for the state it did not have, which a toggle gives."""
    reason = await _failure(ToggleSetChecked, "widgets.checkboxes_and_radios")
    assert reason == "setChecked true on a checked box unchecked it"


class NoOpWaitFor(WebSurface):
    """waitFor returns at once, whatever the element's state."""

    async def act(self, action: str, ref: str | None = None, args: Any = None,
                  ref2: str | None = None) -> ActResult:
        if action == "waitFor":
            return ActResult()
        return await super().act(action, ref, args, ref2)


async def test_a_wait_for_that_does_not_wait_fails_home_wait_for() -> None:
    """The case slept 500 ms before waiting for an element shown after 300 ms, so a waitFor
    that returned at once passed."""
    reason = await _failure(NoOpWaitFor, "home.wait_for")
    assert reason == "waitFor visible returned before the element showed"



def _no_op(name: str) -> type[WebSurface]:
    """Answers the action `name` as if done, doing nothing."""

    class NoOp(WebSurface):
        async def act(self, action: str, ref: str | None = None, args: Any = None,
                      ref2: str | None = None) -> ActResult:
            if action == name:
                return ActResult()
            return await super().act(action, ref, args, ref2)

    NoOp.__name__ = f"NoOp-{name}"
    return NoOp


@pytest.mark.parametrize(
    ("action", "reason"),
    [
        ("hover", "hover logged [], with no hover"),
        ("pressAndHold", "pressAndHold logged [], with no down"),
        ("release", "release logged [], with no up"),
        ("hoverAndClick", "hoverAndClick logged [], with no hover"),
    ],
)
async def test_a_pointer_action_that_does_nothing_fails_pointer_and_keyboard(
    action: str, reason: str
) -> None:
    """The case read the log once after all the pointer actions, so the entries of
    doubleClick and rightClick covered hover, pressAndHold, release and hoverAndClick
    doing nothing."""
    assert await _failure(_no_op(action), "widgets.pointer_and_keyboard") == reason


def _image(width: int, height: int) -> type[WebSurface]:
    """Writes a white PNG of `width` x `height` for every screenshot, the action's too."""

    class Blank(WebSurface):
        async def screenshot(self, path: str, mask: Sequence[str] | None = None) -> None:
            Image.new("RGB", (width, height), "white").save(path)

        async def act(self, action: str, ref: str | None = None, args: Any = None,
                      ref2: str | None = None) -> ActResult:
            if action == "screenshot":
                await self.screenshot(args["path"])
                return ActResult(result=args["path"])
            return await super().act(action, ref, args, ref2)

    Blank.__name__ = f"Blank-{width}x{height}"
    return Blank


class OnePixelScreenshotAction(WebSurface):
    """The screenshot action writes a 1x1 white PNG; screenshot() is the web adapter's."""

    async def act(self, action: str, ref: str | None = None, args: Any = None,
                  ref2: str | None = None) -> ActResult:
        if action == "screenshot":
            Image.new("RGB", (1, 1), "white").save(args["path"])
            return ActResult(result=args["path"])
        return await super().act(action, ref, args, ref2)


@pytest.mark.parametrize(
    ("cls", "reason"),
    [
        (_image(1, 1), "the screenshot is 1x1 pixels: it does not hold the button's box"),
        (_image(2000, 2000), "a screenshot without a mask shows the button's box in one"
                             " colour: it does not show the button"),
        (OnePixelScreenshotAction, "the screenshot is 1x1 pixels: it does not hold the"
                                   " button's box"),
    ],
)
async def test_a_screenshot_that_shows_nothing_fails_screenshot_masked(
    cls: type[WebSurface], reason: str
) -> None:
    """A blank 1x1 screenshot passed: a crop beyond an image is black, one colour, as a
    blanked mask is."""
    assert (await _failure(cls, "home.screenshot_masked") or "").startswith(reason)


async def test_the_web_suite_launches_no_chromium_for_another_adapter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The suite launched its shared Chromium for every run, though only the built-in web
    adapter is given it: another browser adapter needed Playwright and Chromium as well."""

    def launch(browser: WebBrowser) -> None:
        raise AssertionError("the suite launched its Chromium")

    monkeypatch.setattr(WebBrowser, "start", launch)
    configs: list[Mapping[str, Any]] = []

    def make(config: Mapping[str, Any]) -> WebSurface:
        configs.append(config)
        raise SessionError("this adapter opens nothing")

    register_adapter("faulty-web-no-browser", make)
    report = await run_conformance(
        "faulty-web-no-browser", suite="web", only=["home.describe", "home.click_and_read"]
    )
    assert all((r.reason or "").startswith("SessionError: this adapter opens nothing (at ")
               for r in report.results), report.results
    assert [dict(c) for c in configs] == [
        {"adapter": "faulty-web-no-browser", "testid_attributes": ["data-testid", "data-qa"]}
    ] * 2


async def test_a_cancelled_web_suite_still_stops_its_chromium() -> None:
    """Its stop ran in a thread started in a cancelled scope, so it never ran: a
    conformance run cancelled from outside (a time limit) left Chromium running."""
    with trio.CancelScope() as scope:
        async with web_suite() as environment:
            assert isinstance(environment, _WebEnvironment)
            await environment.open("web", "home")
            browser = environment.shared
            assert browser is not None
            assert browser.running
            scope.cancel()
            await trio.sleep_forever()
    assert not browser.running
