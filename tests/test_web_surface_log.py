"""A web page's password field logged through a LoggedSurface on Chromium: what is read of
it or typed into it never reaches the log in clear."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import trio

from semledger.adapters import LoggedSurface, SessionInit, Snapshot
from semledger.adapters._web import WebBrowser
from semledger.eventlog import REDACTED, MemoryRecorder, SurfaceCalled

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from served_pages import HANG_GUARD_S, surface_on, written

LOGIN = (
    "<!doctype html><title>Login</title><label>User <input id=u></label>"
    "<label>Password <input id=p type=password></label>"
)


@pytest.fixture
async def logged(
    browser: WebBrowser, tmp_path: Path
) -> AsyncIterator[tuple[LoggedSurface, MemoryRecorder]]:
    """A logged session of the login page, closed after."""
    recorder = MemoryRecorder()
    async with surface_on(browser, timeout_ms=HANG_GUARD_S * 2000) as surface:
        session = LoggedSurface(surface, recorder, "w", "web")
        with trio.fail_after(HANG_GUARD_S):
            site = written(tmp_path, {"login.html": LOGIN})
            await session.open(SessionInit(base_url=site + "login.html"))
        yield session, recorder
        with trio.fail_after(HANG_GUARD_S):
            await session.close()


def _ref(snapshot: Snapshot, id_: str) -> str:
    return next(n.ref for n in snapshot.nodes if n.native.get("id") == id_)


def _calls(recorder: MemoryRecorder) -> list[SurfaceCalled]:
    return [e for _r, e in recorder.events("w") if isinstance(e, SurfaceCalled)]


def _in_clear(recorder: MemoryRecorder, secret: bytes) -> list[str]:
    return [record.topic for record in recorder.read("w") if secret in record.body]


async def test_a_password_an_act_reads_is_not_logged_nor_the_result_read_after(
    logged: tuple[LoggedSurface, MemoryRecorder],
) -> None:
    session, recorder = logged
    with trio.fail_after(HANG_GUARD_S):
        password = _ref(await session.snapshot(), "p")
        await session.act("type", password, {"text": "hunter2"})
        assert (await session.act("read", password)).result == "hunter2"
        assert await session.read("result") == "hunter2"
    read, result = _calls(recorder)[-2:]
    assert (read.method, read.result and read.result["result"]) == ("act", REDACTED)
    assert (result.method, result.result) == ("read", {"value": REDACTED})
    assert _in_clear(recorder, b"hunter2") == []


async def test_a_password_typed_after_a_tab_pressed_in_the_user_field_is_not_logged(
    logged: tuple[LoggedSurface, MemoryRecorder],
) -> None:
    session, recorder = logged
    with trio.fail_after(HANG_GUARD_S):
        snapshot = await session.snapshot()
        user, password = _ref(snapshot, "u"), _ref(snapshot, "p")
        await session.act("type", user, {"text": "ada"})
        await session.act("press", user, {"key": "Tab"})
        await session.act("type", None, {"text": "hunter2"})
        focused = [n.ref for n in (await session.snapshot()).nodes if "focused" in n.states]
    assert focused == [password]  # the Tab took the focus, and the typing, there
    assert _in_clear(recorder, b"hunter2") == []


async def test_a_password_typed_into_a_located_field_no_snapshot_showed_is_not_logged(
    logged: tuple[LoggedSurface, MemoryRecorder],
) -> None:
    session, recorder = logged
    with trio.fail_after(HANG_GUARD_S):
        [password] = await session.locate({"by": "label", "value": "Password"})
        await session.act("type", password, {"text": "hunter2"})
        assert await session.read("value", password) == "hunter2"  # the agent sees it
    typed = _calls(recorder)[-2]
    assert (typed.arguments["args"]["text"], typed.arguments["redacted"]) == ("\u2022" * 7, True)
    assert _in_clear(recorder, b"hunter2") == []
