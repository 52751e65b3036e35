"""The web adapter passes the web conformance suite against the shipped sample pages."""

from __future__ import annotations

import os

import pytest

from semledger.adapters._conformance import CASES, run_conformance
from semledger.adapters._web import default_executable

EXPECTED_CASES = {
    "home.snapshot_invariants",
    "home.candidates",
    "login.type_and_submit",
    "dialogs.confirm_answered",
    "frames.switch_and_read",
    "windows.new_tab",
    "widgets.select_option",
    "canvas.coords_click",
    "errors.unknown_ref_is_locate_error",
    "errors.quit_refused",
}


@pytest.fixture(autouse=True)
def _chromium() -> None:
    if not os.path.exists(default_executable()):
        pytest.fail(f"no Chromium at {default_executable()}: scripts/test.sh installs it")


async def test_the_web_adapter_is_conformant() -> None:
    report = await run_conformance("web")
    failed = {r.id: r.reason for r in report.results if r.status != "passed"}
    assert report.conformant, failed
    assert not failed
    ids = {r.id for r in report.results}
    assert ids >= EXPECTED_CASES
    fixtures = {c.fixture for c in CASES if c.suite == "web"}
    assert fixtures >= {"home", "login", "widgets", "dialogs", "frames", "windows", "canvas"}
