"""The ``atspi`` conformance suite: desktop cases over the GTK fixture application.

The suite's environment is a private desktop (``_atspi_desktop.PrivateDesktop``: Xvfb, a
session bus, the AT-SPI registry); each case gets a fresh surface opened on a freshly
launched fixture app (``fixtures/gtk_fixture.py``, run with the system python3 and gi),
except the ``gtk_fixture_running`` fixture, which the environment starts itself so that the
surface attaches to it by process name.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import AsyncIterator
from typing import Any

import trio

from ._atspi_desktop import GTK_FIXTURE, SYSTEM_PYTHON, PrivateDesktop, require_gtk_python
from ._calls import ActArgs
from ._conformance import SUITES, CaseContext, CaseFailure, Environment, case, surface_for
from ._errors import ActionabilityError, LocateError, NavigationError, SessionError, SurfaceError
from ._roles import ARIA_ROLES
from ._session import Launch, SessionInit
from ._snapshot import snapshot_problems
from ._surface import AgentSurface

SUITE = "atspi"
FIXTURE = "gtk_fixture"
RUNNING = "gtk_fixture_running"
PROCESS_NAME = "semledger-gtk-fixture"


class _DesktopEnvironment:
    def __init__(self, desktop: PrivateDesktop) -> None:
        self.desktop = desktop
        self.processes: list[subprocess.Popen[bytes]] = []

    async def open(
        self, adapter: str, fixture: str
    ) -> tuple[AgentSurface, SessionInit, dict[str, Any]]:
        surface = surface_for(adapter, self.desktop.surface_config)
        launch = Launch(SYSTEM_PYTHON, (str(GTK_FIXTURE),))
        if fixture == RUNNING:
            process = subprocess.Popen(
                [SYSTEM_PYTHON, str(GTK_FIXTURE)],
                env=self.desktop.env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
            self.processes.append(process)
            await _wait_for_window(adapter, self.desktop, process)
            return surface, SessionInit(process_name=PROCESS_NAME), {"process": process}
        return surface, SessionInit(launch=launch), {}

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.kill()
                process.wait(5)


async def _wait_for_window(adapter: str, desktop: PrivateDesktop, process: Any) -> None:
    with trio.move_on_after(20):
        while process.poll() is None:
            probe = surface_for(adapter, desktop.surface_config)
            try:
                await probe.open(SessionInit(process_name=PROCESS_NAME))
            except SurfaceError:
                await trio.sleep(0.1)
                continue
            await probe.close()
            return
    raise CaseFailure("the fixture app started by the suite never showed a window")


@contextlib.asynccontextmanager
async def _setup() -> AsyncIterator[Environment]:
    await trio.to_thread.run_sync(require_gtk_python)
    desktop = await trio.to_thread.run_sync(PrivateDesktop().start)
    environment = _DesktopEnvironment(desktop)
    try:
        yield environment
    finally:
        environment.stop()
        await trio.to_thread.run_sync(desktop.stop)


SUITES[SUITE] = _setup


async def _one(ctx: CaseContext, candidate: dict[str, Any]) -> str:
    found = await ctx.surface.locate(candidate)
    if len(found) != 1:
        raise CaseFailure(f"locate {candidate} found {found}, expected exactly one")
    return found[0]


async def _expect(error: type[Exception], what: str, call: Any) -> None:
    try:
        await call
    except error:
        return
    except CaseFailure:
        raise
    except Exception as other:
        raise CaseFailure(
            f"{what} raised {type(other).__name__}, expected {error.__name__}"
        ) from other
    raise CaseFailure(f"{what} did not raise {error.__name__}")


async def _text_is(ctx: CaseContext, ref: str, expected: str) -> None:
    with trio.move_on_after(3):
        while (await ctx.surface.read("text", ref)) != expected:
            await trio.sleep(0.05)
        return
    actual = await ctx.surface.read("text", ref)
    raise CaseFailure(f"text of {ref} is {actual!r}, expected {expected!r}")


@case("gtk_fixture.snapshot_invariants", suite=SUITE, fixture=FIXTURE)
async def snapshot_invariants(ctx: CaseContext) -> None:
    """The snapshot is well formed, ARIA-only, with states inverted where AT-SPI inverts."""
    snap = await ctx.surface.snapshot()
    problems = snapshot_problems(snap)
    if problems:
        raise CaseFailure(f"malformed snapshot: {problems[0]}")
    if snap.nodes[0].role != "application":
        raise CaseFailure(f"the root is {snap.nodes[0].role}, not application")
    foreign = sorted({n.role for n in snap.nodes} - set(ARIA_ROLES))
    if foreign:
        raise CaseFailure(f"non-ARIA roles {foreign}")
    by_id = {n.native.get("automationId"): n for n in snap.nodes}
    expectations = {
        "disabled-button": "disabled",
        "code": "readonly",
        "agree": "unchecked",
    }
    for ident, state in expectations.items():
        node = by_id.get(ident)
        if node is None or state not in node.states:
            raise CaseFailure(f"{ident} should be {state}: {node}")
    hidden = [n for n in snap.nodes if "hidden" in n.states]
    if not hidden or any(f"[ref={n.ref}]" in snap.text for n in hidden):
        raise CaseFailure("hidden nodes (the combo's menu) must stay in nodes and leave the text")
    again = await ctx.surface.snapshot()
    if again.hash != snap.hash or [n.ref for n in again.nodes] != [n.ref for n in snap.nodes]:
        raise CaseFailure("an unchanged application gave a different hash or refs")


@case("gtk_fixture.click_effect", suite=SUITE, fixture=FIXTURE)
async def click_effect(ctx: CaseContext) -> None:
    """Clicking a button runs its handler (through Action.DoAction)."""
    greet = await _one(ctx, {"by": "automationId", "value": "greet"})
    status = await _one(ctx, {"by": "automationId", "value": "status"})
    await ctx.surface.act("click", greet)
    await _text_is(ctx, status, "Hello world (1)")


@case("gtk_fixture.type_and_submit", suite=SUITE, fixture=FIXTURE)
async def type_and_submit(ctx: CaseContext) -> None:
    """Typing appends to a text input, a value change keeps the hash, Enter activates."""
    entry = await _one(ctx, {"by": "label", "value": "Name"})
    before = await ctx.surface.snapshot()
    await ctx.surface.act("type", entry, ActArgs(text="Ada"))
    await ctx.surface.act("type", entry, ActArgs(text=" L"))
    if (value := await ctx.surface.read("value", entry)) != "Ada L":
        raise CaseFailure(f"the entry holds {value!r}, expected 'Ada L'")
    after = await ctx.surface.snapshot()
    if after.hash != before.hash:
        raise CaseFailure("a value change changed the structural hash")
    await ctx.surface.act("press", entry, ActArgs(key="Enter"))
    await _text_is(
        ctx, await _one(ctx, {"by": "automationId", "value": "status"}), "Hello Ada L (1)"
    )
    await ctx.surface.act("clear", entry)
    if (value := await ctx.surface.read("value", entry)) != "":
        raise CaseFailure(f"clear left {value!r}")


@case("gtk_fixture.set_checked", suite=SUITE, fixture=FIXTURE)
async def set_checked(ctx: CaseContext) -> None:
    """setChecked toggles only when needed; check reads the state back."""
    agree = await _one(ctx, {"by": "role", "role": "checkbox", "name": "I agree"})
    for wanted in (True, True, False):
        await ctx.surface.act("setChecked", agree, ActArgs(checked=wanted))
        result = await ctx.surface.check(
            {"kind": "checked" if wanted else "unchecked"}, "ref", agree
        )
        if not result.ok:
            raise CaseFailure(f"after setChecked({wanted}) the box is {result.actual}")


@case("gtk_fixture.select_and_value", suite=SUITE, fixture=FIXTURE)
async def select_and_value(ctx: CaseContext) -> None:
    """selectOption goes through Selection, a spin button takes a number through Value."""
    colour = await _one(ctx, {"by": "automationId", "value": "colour"})
    await ctx.surface.act("selectOption", colour, ActArgs(values=("Blue",)))
    with trio.move_on_after(3):
        while await ctx.surface.read("value", colour) != "Blue":
            await trio.sleep(0.05)
    if (value := await ctx.surface.read("value", colour)) != "Blue":
        raise CaseFailure(f"the combo shows {value!r}, expected 'Blue'")
    count = await _one(ctx, {"by": "automationId", "value": "count"})
    await ctx.surface.act("type", count, ActArgs(text="7"))
    if not (await ctx.surface.check({"kind": "valueEquals", "value": "7"}, "ref", count)).ok:
        raise CaseFailure("the spin button did not take 7")


@case("gtk_fixture.locate_kinds", suite=SUITE, fixture=FIXTURE)
async def locate_kinds(ctx: CaseContext) -> None:
    """Each desktop candidate kind finds its element; other kinds and misses give []."""
    greet = await _one(ctx, {"by": "automationId", "value": "greet"})
    same: list[dict[str, object]] = [
        {"by": "role", "role": "button", "name": "Greet", "exact": True},
        {"by": "name", "value": "Greet"},
        {"by": "text", "value": "Greet", "exact": True},
        {"by": "controlPath", "value": "window/group/button[Greet]"},
    ]
    for candidate in same:
        if await ctx.surface.locate(candidate) != [greet]:
            raise CaseFailure(f"{candidate} did not find exactly the Greet button")
    description = await ctx.surface.describe(greet)
    if description.box is None:
        raise CaseFailure("the Greet button has no box")
    x, y, w, h = description.box
    if await ctx.surface.locate({"by": "coords", "x": x + w / 2, "y": y + h / 2}) != [greet]:
        raise CaseFailure("coords at the middle of Greet did not find it")
    entry = await _one(ctx, {"by": "automationId", "value": "name"})
    if await ctx.surface.locate({"by": "label", "value": "Name", "exact": True}) != [entry]:
        raise CaseFailure("the Name label does not find its entry")
    misses: list[dict[str, object]] = [
        {"by": "css", "value": "button"},
        {"by": "automationId", "value": "nope"},
    ]
    for miss in misses:
        if await ctx.surface.locate(miss) != []:
            raise CaseFailure(f"{miss} should find nothing")
    if len(await ctx.surface.locate({"by": "role", "role": "button"})) != 4:
        raise CaseFailure("role button should find all four buttons")


@case("gtk_fixture.refusals", suite=SUITE, fixture=FIXTURE)
async def refusals(ctx: CaseContext) -> None:
    """Navigation, URL reads, pointer gestures and acting on a disabled, read-only or
    unknown element are refused with their typed errors."""
    s = ctx.surface
    greet = await _one(ctx, {"by": "automationId", "value": "greet"})
    disabled = await _one(ctx, {"by": "automationId", "value": "disabled-button"})
    code = await _one(ctx, {"by": "automationId", "value": "code"})
    await _expect(NavigationError, "navigate", s.act("navigate", None, ActArgs(url="x")))
    await _expect(NavigationError, "read url", s.read("url"))
    await _expect(ActionabilityError, "hover", s.act("hover", greet))
    await _expect(ActionabilityError, "click a disabled button", s.act("click", disabled))
    await _expect(
        ActionabilityError, "type into a read-only entry", s.act("type", code, ActArgs(text="x"))
    )
    await _expect(LocateError, "click an unknown ref", s.act("click", "nope"))


@case("gtk_fixture.quit", suite=SUITE, fixture=FIXTURE)
async def quit_launched(ctx: CaseContext) -> None:
    """quit ends a launched application through its own route; the session is then over."""
    await ctx.surface.act("quit")
    await _expect(SessionError, "snapshot after quit", ctx.surface.snapshot())


@case("gtk_fixture_running.attach_never_quits", suite=SUITE, fixture=RUNNING)
async def attach_never_quits(ctx: CaseContext) -> None:
    """A session that attached to a running application refuses to quit it and leaves it
    running when it closes."""
    process = ctx.details["process"]
    await _expect(SessionError, "quit an attached application", ctx.surface.act("quit"))
    await ctx.surface.close()
    await trio.sleep(0.3)
    if process.poll() is not None:
        raise CaseFailure("closing an attached session ended the application")
