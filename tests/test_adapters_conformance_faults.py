"""Runtime conformance cases that a broken adapter once passed: each fault here is run
through the case that must now name it."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs
import pytest
from PIL import Image

from semledger.adapters import (
    ActResult,
    CandidateLike,
    Capabilities,
    CheckResult,
    NavigationError,
    PredicateLike,
    RuntimeSurface,
    SessionError,
    SessionState,
    SessionStateLike,
    Snapshot,
    TextContains,
    TextEquals,
    build_snapshot,
    candidate_from_dict,
    create_runtime_surface,
    predicate_from_dict,
    register_adapter,
    run_conformance,
)


def _factory(cls: type[RuntimeSurface]) -> Callable[[Mapping[str, Any]], RuntimeSurface]:
    def make(config: Mapping[str, Any]) -> RuntimeSurface:
        base = create_runtime_surface(config)
        return cls(base.app, base.app_ref)

    return make


async def _failure(cls: type[RuntimeSurface], case_id: str) -> str | None:
    """The reason `case_id` fails for an adapter of `cls`; None when it does not fail."""
    name = f"faulty-{cls.__name__}"
    register_adapter(name, _factory(cls))
    report = await run_conformance(name, suite="runtime", only=[case_id])
    (result,) = report.results
    return result.reason if result.status == "failed" else None


class RestoreIsReset(RuntimeSurface):
    """restore() ignores the state it is given and goes back to the app's start."""

    start: SessionState | None = None

    async def snapshot(self, **options: Any) -> Any:
        if self.start is None:
            self.start = await super().state()
        return await super().snapshot(**options)

    async def restore(self, state: SessionStateLike) -> None:
        assert self.start is not None
        await super().restore(self.start)


async def test_a_restore_that_resets_the_app_fails_state_restore() -> None:
    """state() was taken on a fresh counter, so a restore() that reset the app passed."""
    reason = await _failure(RestoreIsReset, "counter.state_restore")
    assert reason == "after restore the count is '0', not the 1 state() was taken at"




class ToggleSetChecked(RuntimeSurface):
    """setChecked ignores `checked` and toggles the box."""

    async def act(self, action: str, ref: str | None = None, args: Any = None,
                  ref2: str | None = None) -> ActResult:
        if action == "setChecked":
            return await super().act("click", ref)
        return await super().act(action, ref, args, ref2)


async def test_a_set_checked_that_toggles_fails_checkbox_states() -> None:
    """Only an unchecked box was ever set checked, which a toggle does as well."""
    reason = await _failure(ToggleSetChecked, "todo.checkbox_states")
    assert reason == "setChecked(true) left the checkbox ['unchecked'], not checked"


class NoTextLocate(RuntimeSurface):
    """locate by text never finds anything."""

    async def locate(self, candidate: CandidateLike) -> list[str]:
        if candidate_from_dict(candidate).by == "text":
            return []
        return await super().locate(candidate)


class CaseBlindCheck(RuntimeSurface):
    """check treats ignore_case as False."""

    async def check(self, predicate: PredicateLike, subject: Any,
                    ref: str | None = None) -> CheckResult:
        given = predicate_from_dict(predicate)
        if isinstance(given, TextEquals | TextContains):
            given = attrs.evolve(given, ignore_case=False)
        return await super().check(given, subject, ref)


async def test_a_text_locate_that_finds_nothing_fails_locate_kinds() -> None:
    """No case located by text and expected a match: only todo.locate_none, expecting []."""
    reason = await _failure(NoTextLocate, "counter.locate_kinds")
    assert reason == "text 'Increment' (exact) located []"


async def test_a_check_ignoring_ignore_case_fails_locate_kinds() -> None:
    """No case checked text with ignore_case."""
    reason = await _failure(CaseBlindCheck, "counter.locate_kinds")
    assert reason == ("check textEquals 'increment' with ignore_case=True on the Increment"
                      " button is not ok")


class _Screenshots(RuntimeSurface):
    def capabilities(self) -> Capabilities:
        return attrs.evolve(super().capabilities(), screenshot=True)


class OnePixelScreenshot(_Screenshots):
    """screenshot() writes a 1x1 white PNG: it captures nothing and masks nothing."""

    async def screenshot(self, path: str, mask: Sequence[str] | None = None) -> None:
        Image.new("RGB", (1, 1), "white").save(path)


class BlankScreenshot(_Screenshots):
    """screenshot() writes a white PNG as large as the app's: one colour everywhere."""

    async def screenshot(self, path: str, mask: Sequence[str] | None = None) -> None:
        Image.new("RGB", (800, 600), "white").save(path)


class NoBoxes(_Screenshots):
    """Snapshot nodes carry no box."""

    async def snapshot(self, **options: Any) -> Snapshot:
        real = await super().snapshot(**options)
        return build_snapshot(real.ref, [attrs.evolve(n, box=None) for n in real.nodes])


@pytest.mark.parametrize(
    ("cls", "reason"),
    [
        (OnePixelScreenshot, "the screenshot is 1x1 pixels: it does not hold the Step field's"
                             " box, from (0, 96) to (799, 119)"),
        (BlankScreenshot, "a screenshot without a mask shows the Step field's box in one"
                          " colour: it does not show the field"),
        (NoBoxes, "the Step field has no box, so no mask can be checked"),
    ],
)
async def test_a_screenshot_that_shows_nothing_fails_screenshot_masks(
    cls: type[RuntimeSurface], reason: str
) -> None:
    """A blank 1x1 screenshot passed (a crop outside an image is black, one colour), and so
    did a blank one of the right size, and a snapshot with no boxes skipped the check."""
    assert await _failure(cls, "counter.screenshot_masks") == reason


class RefusesWindows(RuntimeSurface):
    """Claims windows, then refuses the window actions with a NavigationError."""

    def capabilities(self) -> Capabilities:
        return attrs.evolve(super().capabilities(), windows=True)

    async def act(self, action: str, ref: str | None = None, args: Any = None,
                  ref2: str | None = None) -> ActResult:
        if action in ("switchWindow", "closeOtherWindows", "resizeWindow"):
            raise NavigationError("this adapter has no windows")
        return await super().act(action, ref, args, ref2)


class RefusesUpload(RuntimeSurface):
    """Claims upload, then refuses it for want of the capability with a SessionError."""

    def capabilities(self) -> Capabilities:
        return attrs.evolve(super().capabilities(), upload=True)

    async def act(self, action: str, ref: str | None = None, args: Any = None,
                  ref2: str | None = None) -> ActResult:
        if action == "upload":
            raise SessionError("upload is not supported", details={"capability": "upload"})
        return await super().act(action, ref, args, ref2)


@pytest.mark.parametrize(
    ("cls", "reason"),
    [
        (RefusesWindows, "claims 'windows' but switchWindow was refused: NavigationError:"
                         " this adapter has no windows"),
        (RefusesUpload, "claims 'upload' but upload was refused: SessionError: upload is not"
                        " supported"),
    ],
)
async def test_a_claimed_capability_refused_with_any_surface_error_is_not_honest(
    cls: type[RuntimeSurface], reason: str
) -> None:
    """Only an ActionabilityError refusing a claimed capability failed the case."""
    assert await _failure(cls, "counter.capabilities_honest") == reason
