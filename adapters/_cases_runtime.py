"""The runtime conformance suite: fixed scripts of surface calls over the example apps.

Fixtures are ``semledger.examples.{counter,todo,gallery}:app``; the adapter under test gets
``{"adapter": NAME, "app": "semledger.examples.<fixture>:app"}`` and opens with an empty
SessionInit. Each case checks snapshot invariants, effects or typed errors and fails with a
`CaseFailure` naming the fault.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import Any, Final, NoReturn

from ._calls import ActResult, ElementDescription
from ._candidates import (
    AutomationIdCandidate,
    CssCandidate,
    RoleCandidate,
    TextCandidate,
    XPathCandidate,
)
from ._capabilities import ACTION_GATES, CAPABILITY_GATES, CapabilityError, check_plan
from ._conformance import SUITES, CaseContext, CaseFailure, case, default_environment, surface_for
from ._control_path import format_control_path
from ._errors import (
    ActionabilityError,
    CheckError,
    DialogError,
    LocateError,
    NavigationError,
    SurfaceError,
)
from ._roles import ARIA_ROLES
from ._session import SessionInit
from ._snapshot import Snapshot, SnapshotNode, render_snapshot, snapshot_problems
from ._surface import AgentSurface, has_optional

SUITE = "runtime"
FIXTURES = ("counter", "todo", "gallery")


async def _make(adapter: str, fixture: str) -> tuple[AgentSurface, SessionInit, dict[str, Any]]:
    app = f"semledger.examples.{fixture}:app"
    return surface_for(adapter, {"app": app}), SessionInit(), {"app": app}


SUITES[SUITE] = default_environment(_make)


# ---- helpers ------------------------------------------------------------------------------


def _fail(message: str) -> NoReturn:
    raise CaseFailure(message)


async def _snap(ctx: CaseContext, **options: Any) -> Snapshot:
    """A snapshot, failing the case when it breaks a build_snapshot rule or a role rule."""
    snapshot = await ctx.surface.snapshot(**options)
    problems = snapshot_problems(snapshot)
    if problems:
        _fail(f"snapshot is malformed: {problems[0]}")
    for node in snapshot.nodes:
        if not node.ref:
            _fail(f"a {node.role} node has no ref")
        if node.role not in ARIA_ROLES:
            _fail(f"role {node.role!r} is not an ARIA role")
    return snapshot


def _find(snapshot: Snapshot, role: str, name: str | None = None) -> SnapshotNode:
    found = _find_all(snapshot, role, name)
    if not found:
        _fail(f"the snapshot has no {role} named {name!r}")
    return found[0]


def _find_all(snapshot: Snapshot, role: str, name: str | None = None) -> list[SnapshotNode]:
    return [
        n
        for n in snapshot.nodes
        if n.role == role and (name is None or n.name == name) and "hidden" not in n.states
    ]


async def _raises(
    what: str, cls: type[SurfaceError], call: Callable[[], Awaitable[object]]
) -> SurfaceError:
    try:
        await call()
    except cls as error:
        return error
    except CaseFailure:
        raise
    except SurfaceError as error:
        _fail(f"{what} raised {type(error).__name__} ({error}), expected {cls.__name__}")
    except Exception as error:
        _fail(f"{what} raised the untyped {type(error).__name__} ({error}), "
              f"expected {cls.__name__}")
    _fail(f"{what} returned normally: expected {cls.__name__}")


def _states(node: SnapshotNode) -> set[str]:
    return set(node.states)


async def _add_todo(ctx: CaseContext, text: str) -> None:
    snapshot = await _snap(ctx)
    field = _find(snapshot, "textbox", "New todo")
    await ctx.surface.act("type", field.ref, {"text": text})
    await ctx.surface.act("press", field.ref, {"key": "Enter"})


# ---- counter ------------------------------------------------------------------------------


@case("counter.snapshot_well_formed", suite=SUITE, fixture="counter")
async def snapshot_well_formed(ctx: CaseContext) -> None:
    """The snapshot obeys build_snapshot's rules: root first, parents before children, the
    rendering and the structural hash computed from the nodes, ARIA roles."""
    snapshot = await _snap(ctx)
    if snapshot.text != render_snapshot(snapshot.nodes):
        _fail("the text is not render_snapshot(nodes)")
    if len({n.ref for n in snapshot.nodes}) != len(snapshot.nodes):
        _fail("two nodes share a ref")
    for role, name in (("text", "Count"), ("button", "Increment"), ("textbox", "Step")):
        _find(snapshot, role, name)


@case("counter.document_order", suite=SUITE, fixture="counter")
async def document_order(ctx: CaseContext) -> None:
    """Nodes are in document order: Count, Increment, Decrement, Reset, Step."""
    snapshot = await _snap(ctx)
    names = [n.name for n in snapshot.nodes if n.name]
    expected = ["Count", "Increment", "Decrement", "Reset", "Step"]
    if [n for n in names if n in expected] != expected:
        _fail(f"nodes out of document order: {names}")
    depths = {n.ref: n.depth for n in snapshot.nodes}
    for node in snapshot.nodes[1:]:
        if node.parent is None or depths[node.parent] != node.depth - 1:
            _fail(f"{node.ref} is not one level below its parent")


@case("counter.snapshot_refs_resolve", suite=SUITE, fixture="counter")
async def snapshot_refs_resolve(ctx: CaseContext) -> None:
    """Every ref of the snapshot maps back to its element: describe answers the same role
    and name."""
    snapshot = await _snap(ctx)
    for node in snapshot.nodes:
        try:
            description = await ctx.surface.describe(node.ref)
        except SurfaceError as error:
            _fail(f"ref {node.ref} of the snapshot does not resolve: {type(error).__name__}")
        if (description.role, description.name) != (node.role, node.name):
            _fail(f"ref {node.ref} describes {description.role} {description.name!r}")


@case("counter.snapshot_refs_stable", suite=SUITE, fixture="counter")
async def snapshot_refs_stable(ctx: CaseContext) -> None:
    """Refs are stable while the snapshot is current: a second snapshot gives the same refs,
    and a ref acted on names the element it named."""
    first = await _snap(ctx)
    second = await _snap(ctx)
    if [n.ref for n in first.nodes] != [n.ref for n in second.nodes]:
        _fail("two snapshots of an unchanged app gave different refs")
    increment = _find(first, "button", "Increment")
    await ctx.surface.act("click", increment.ref)
    after = await _snap(ctx)
    if _find(after, "text", "Count").value != "1":
        _fail("clicking the ref of Increment did not increment the count")
    if _find(after, "button", "Increment").ref != increment.ref:
        _fail("the Increment button's ref changed though the element stayed")


@case("counter.snapshot_states", suite=SUITE, fixture="counter")
async def snapshot_states(ctx: CaseContext) -> None:
    """States follow the app: Decrement is disabled at 0 and enabled after an increment."""
    snapshot = await _snap(ctx)
    if "disabled" not in _states(_find(snapshot, "button", "Decrement")):
        _fail("Decrement at 0 lacks the disabled state")
    if "disabled" in _states(_find(snapshot, "button", "Increment")):
        _fail("Increment is marked disabled")
    await ctx.surface.act("click", _find(snapshot, "button", "Increment").ref)
    after = await _snap(ctx)
    if "disabled" in _states(_find(after, "button", "Decrement")):
        _fail("Decrement stays disabled after an increment")


@case("counter.hash_ignores_values", suite=SUITE, fixture="counter")
async def hash_ignores_values(ctx: CaseContext) -> None:
    """A value change keeps the structural hash and changes the text."""
    before = await _snap(ctx)
    step = _find(before, "textbox", "Step")
    await ctx.surface.act("clear", step.ref)
    await ctx.surface.act("type", step.ref, {"text": "2"})
    after = await _snap(ctx)
    if _find(after, "textbox", "Step").value != "2":
        _fail("typing into Step did not change its value")
    if after.hash != before.hash:
        _fail("a value change changed the structural hash")
    if after.text == before.text:
        _fail("a value change left the text as it was")


@case("counter.act_result_hash", suite=SUITE, fixture="counter")
async def act_result_hash(ctx: CaseContext) -> None:
    """act answers an ActResult whose hash, when it gives one, is the structural hash of the
    snapshot after the action: a click that enables Decrement, then a value typed."""
    before = await _snap(ctx)
    clicked = await ctx.surface.act("click", _find(before, "button", "Increment").ref)
    after = await _snap(ctx)
    if after.hash == before.hash:
        _fail("enabling Decrement left the structural hash as it was")
    _same_hash("click on Increment", clicked, after, before)
    typed = await ctx.surface.act("type", _find(after, "textbox", "Step").ref, {"text": "2"})
    _same_hash("type into Step", typed, await _snap(ctx), before)


def _same_hash(what: str, result: ActResult, after: Snapshot, before: Snapshot) -> None:
    if result.hash is None or result.hash == after.hash:
        return
    stale = " (the hash from before the action)" if result.hash == before.hash else ""
    _fail(f"{what} answered the hash {result.hash[:12]}…{stale}, the snapshot after it has "
          f"{after.hash[:12]}…")


@case("counter.click_increments", suite=SUITE, fixture="counter")
async def click_increments(ctx: CaseContext) -> None:
    """act then snapshot shows the effect: two clicks on Increment make the count 2, and
    read and check agree."""
    snapshot = await _snap(ctx)
    increment = _find(snapshot, "button", "Increment").ref
    await ctx.surface.act("click", increment)
    await ctx.surface.act("click", increment)
    after = await _snap(ctx)
    count = _find(after, "text", "Count")
    if count.value != "2":
        _fail(f"after two increments the snapshot shows the count {count.value!r}")
    value = await ctx.surface.read("value", count.ref)
    if value != "2":
        _fail(f"read('value') of the count is {value!r}")
    result = await ctx.surface.check({"kind": "valueEquals", "value": "2"}, "ref", count.ref)
    if not result.ok:
        _fail("check valueEquals 2 is not ok")
    result = await ctx.surface.check({"kind": "valueEquals", "value": "7"}, "ref", count.ref)
    if result.ok:
        _fail("check valueEquals 7 is ok")


@case("counter.navigate_refused", suite=SUITE, fixture="counter")
async def navigate_refused(ctx: CaseContext) -> None:
    """An app has no pages: navigate, back and read('url') raise NavigationError."""
    await _raises(
        "navigate", NavigationError, lambda: ctx.surface.act("navigate", None, {"url": "x:/"})
    )
    await _raises("back", NavigationError, lambda: ctx.surface.act("back"))
    await _raises("read('url')", NavigationError, lambda: ctx.surface.read("url"))


@case("counter.unknown_ref", suite=SUITE, fixture="counter")
async def unknown_ref(ctx: CaseContext) -> None:
    """A ref the adapter never issued is a LocateError, for act and describe alike."""
    await _snap(ctx)
    await _raises("click on an unknown ref", LocateError, lambda: ctx.surface.act("click", "zz0"))
    await _raises("describe of an unknown ref", LocateError, lambda: ctx.surface.describe("zz0"))


@case("counter.disabled_refused", suite=SUITE, fixture="counter")
async def disabled_refused(ctx: CaseContext) -> None:
    """Clicking the disabled Decrement is an ActionabilityError and changes nothing."""
    snapshot = await _snap(ctx)
    decrement = _find(snapshot, "button", "Decrement")
    await _raises(
        "click on a disabled button",
        ActionabilityError,
        lambda: ctx.surface.act("click", decrement.ref),
    )
    after = await _snap(ctx)
    if after.text != snapshot.text:
        _fail("a refused action changed the tree")


@case("counter.describe_facts", suite=SUITE, fixture="counter")
async def describe_facts(ctx: CaseContext) -> None:
    """describe gives the facts candidate synthesis needs: role, name, states, box, the
    automation id in native, and the path from the root to the element."""
    snapshot = await _snap(ctx)
    node = _find(snapshot, "button", "Decrement")
    description: ElementDescription = await ctx.surface.describe(node.ref)
    if (description.role, description.name) != ("button", "Decrement"):
        _fail(f"describe names {description.role} {description.name!r}")
    if set(description.states) != _states(node):
        _fail(f"describe states {description.states} differ from the snapshot's {node.states}")
    if description.box is None or len(description.box) != 4:
        _fail("describe gives no box")
    if description.native.get("automationId") != "counter.decrement":
        _fail("describe's native lacks the automationId counter.decrement")
    if not description.path or description.path[-1].role != "button":
        _fail("describe's path does not end at the element")
    if description.path[0].role != snapshot.nodes[0].role:
        _fail("describe's path does not start at the root")
    if description.text != "Decrement":
        _fail(f"describe's text is {description.text!r}")


@case("counter.locate_kinds", suite=SUITE, fixture="counter")
async def locate_kinds(ctx: CaseContext) -> None:
    """locate answers the desktop kinds (automationId, controlPath), role, text and coords;
    a kind the platform lacks (css, xpath) is [] and never a fallback. A text check with
    ignore_case ignores case, and without it does not."""
    snapshot = await _snap(ctx)
    increment = _find(snapshot, "button", "Increment")
    by_id = await ctx.surface.locate(AutomationIdCandidate("counter.increment"))
    if by_id != [increment.ref]:
        _fail(f"automationId counter.increment located {by_id}")
    by_role = await ctx.surface.locate(RoleCandidate("button", "Increment", exact=True))
    if by_role != [increment.ref]:
        _fail(f"role button 'Increment' located {by_role}")
    by_text = await ctx.surface.locate(TextCandidate("Increment", exact=True))
    if by_text != [increment.ref]:
        _fail(f"text 'Increment' (exact) located {by_text}")
    for ignore_case in (True, False):
        lower = {"kind": "textEquals", "text": "increment", "ignore_case": ignore_case}
        result = await ctx.surface.check(lower, "ref", increment.ref)
        if result.ok is not ignore_case:
            _fail(f"check textEquals 'increment' with ignore_case={ignore_case} on the "
                  f"Increment button is {'ok' if result.ok else 'not ok'}")
    description = await ctx.surface.describe(increment.ref)
    path = format_control_path(description.path)
    by_path = await ctx.surface.locate({"by": "controlPath", "value": path})
    if by_path != [increment.ref]:
        _fail(f"controlPath {path} located {by_path}")
    if increment.box is not None:
        x, y, w, h = increment.box
        by_point = await ctx.surface.locate({"by": "coords", "x": x + w / 2, "y": y + h / 2})
        if by_point != [increment.ref]:
            _fail(f"coords at the middle of Increment located {by_point}")
    for lacking in (CssCandidate("button"), XPathCandidate("//button")):
        found = await ctx.surface.locate(lacking)
        if found:
            _fail(f"the runtime has no {lacking.by} candidates, yet locate answered {found}")


@case("counter.capabilities_honest", suite=SUITE, fixture="counter")
async def capabilities_honest(ctx: CaseContext) -> None:
    """Every flag claimed is backed: optional methods present exactly when claimed, the
    window actions (on the counter's one window) not refused, upload and dragTo not refused
    for want of the capability (`_ACTED_ON`), and none faked where the counter has nothing
    for it to act on (no dialog, frame or other window); check_plan refuses a plan needing a
    missing flag before it starts."""
    caps = ctx.surface.capabilities()
    for flag in ("trace", "pick", "observe"):
        if getattr(caps, flag) != has_optional(ctx.surface, flag):
            _fail(f"capabilities().{flag} is {getattr(caps, flag)} but {flag}() is "
                  f"{'present' if has_optional(ctx.surface, flag) else 'absent'}")
    await _nothing_to_act_on(ctx)
    snapshot = await _snap(ctx)
    increment = _find(snapshot, "button", "Increment").ref
    reset = _find(snapshot, "button", "Reset").ref
    calls: dict[str, tuple[str | None, dict[str, Any] | None, str | None]] = {
        "switchWindow": (None, {"target": "0"}, None),
        "closeOtherWindows": (None, None, None),
        "resizeWindow": (None, {"width": 640, "height": 480}, None),
        "upload": (increment, {"files": ("a.txt",)}, None),
        "dragTo": (increment, None, reset),
    }
    for action, (ref, args, ref2) in calls.items():
        flag = ACTION_GATES[action]
        if not getattr(caps, flag):
            continue
        try:
            await ctx.surface.act(action, ref, args, ref2)
        except SurfaceError as error:
            if flag in _ACTED_ON or error.details.get("capability") == flag:
                _fail(f"claims {flag!r} but {action} was refused: {type(error).__name__}: "
                      f"{error}")
    missing = [flag for flag in CAPABILITY_GATES if not getattr(caps, flag)]
    for flag in missing:
        actions = CAPABILITY_GATES[flag]
        if not actions:
            continue
        try:
            check_plan(caps, ["click", actions[0]])
        except CapabilityError as error:
            if error.missing[0].flag != flag:
                _fail(f"check_plan blamed {error.missing[0].flag}, not {flag}")
        else:
            _fail(f"check_plan accepted {actions[0]} without {flag!r}")


_ACTED_ON: Final = frozenset({"windows"})
"""The claimed flags whose actions the counter has something for (its one window): any
refusal of theirs fails. It has no file control and no drop target, so an upload or a drag
may be refused for its target; only a refusal whose details name the capability
(``details["capability"]``, as the runtime adapter's refusal of an action it lacks does)
fails."""

_NOTHING_THERE: tuple[tuple[str, str, str, dict[str, Any], type[SurfaceError]], ...] = (
    ("dialogs", "dialog", "with no dialog open", {"accept": True}, DialogError),
    ("frames", "switchFrame", "to a frame the counter lacks", {"target": "nope"}, SurfaceError),
    ("windows", "switchWindow", "to a window it lacks", {"target": "nope"}, SurfaceError),
)
"""A claimed flag, its action with arguments naming what the counter does not have, and the
error that action must raise: with nothing to act on, it cannot have been carried out."""


async def _nothing_to_act_on(ctx: CaseContext) -> None:
    caps = ctx.surface.capabilities()
    for flag, action, where, args, error in _NOTHING_THERE:
        if getattr(caps, flag):
            call = partial(ctx.surface.act, action, None, {**args, "timeout_ms": 200})
            await _raises(f"claims {flag!r} but {action} {where}", error, call)


@case("counter.screenshot_masks", suite=SUITE, fixture="counter", requires=("screenshot",))
async def screenshot_masks(ctx: CaseContext) -> None:
    """screenshot writes a PNG of the app: the Step field's box, in more than one colour in a
    shot without a mask, is blanked to one colour in a shot masking the field."""
    snapshot = await _snap(ctx)
    step = _find(snapshot, "textbox", "Step")
    if step.box is None:
        _fail("the Step field has no box, so no mask can be checked")
    x, y, w, h = (int(v) for v in step.box)
    area = (x, y, x + max(w - 1, 1), y + max(h - 1, 1))
    with tempfile.TemporaryDirectory() as tmp:
        plain = await _shot_colours(ctx, os.path.join(tmp, "plain.png"), [], area)
        masked = await _shot_colours(ctx, os.path.join(tmp, "masked.png"), [step.ref], area)
    if plain is not None and len(plain) < 2:
        _fail("a screenshot without a mask shows the Step field's box in one colour: it does "
              "not show the field")
    if masked is None or len(masked) != 1:
        _fail("the masked box is not blanked")


async def _shot_colours(
    ctx: CaseContext, path: str, mask: list[str], area: tuple[int, int, int, int]
) -> list[tuple[int, Any]] | None:
    """The colours in `area` of a screenshot masking `mask`; None for more than four."""
    from PIL import Image

    await ctx.surface.screenshot(path, mask)
    with open(path, "rb") as handle:
        if handle.read(8) != b"\x89PNG\r\n\x1a\n":
            _fail("the screenshot is not a PNG")
    with Image.open(path) as image:
        left, top, right, bottom = area
        if left < 0 or top < 0 or image.width < right or image.height < bottom:
            _fail(f"the screenshot is {image.width}x{image.height} pixels: it does not hold "
                  f"the Step field's box, from ({left}, {top}) to ({right}, {bottom})")
        return image.convert("RGB").crop(area).getcolors(maxcolors=4)


@case("counter.state_restore", suite=SUITE, fixture="counter", requires=("restore",))
async def state_restore(ctx: CaseContext) -> None:
    """restore puts the session back where state() was taken: at the count 1, not at the
    app's start."""
    increment = _find(await _snap(ctx), "button", "Increment").ref
    await ctx.surface.act("click", increment)
    before = await _snap(ctx)
    saved = await ctx.surface.state()
    await ctx.surface.act("click", increment)
    await ctx.surface.act("click", increment)
    await ctx.surface.restore(saved)
    after = await _snap(ctx)
    count = _find(after, "text", "Count").value
    if count != "1":
        _fail(f"after restore the count is {count!r}, not the 1 state() was taken at")
    if after.hash != before.hash or after.text != before.text:
        _fail("after restore the snapshot differs from the one state() was taken at")


# ---- todo ---------------------------------------------------------------------------------


@case("todo.type_and_submit", suite=SUITE, fixture="todo")
async def type_and_submit(ctx: CaseContext) -> None:
    """type then press Enter adds an item, clears the field and updates the status."""
    await _add_todo(ctx, "milk")
    snapshot = await _snap(ctx)
    _find(snapshot, "listitem", "milk")
    if _find(snapshot, "textbox", "New todo").value:
        _fail("the field was not cleared after submit")
    status = _find(snapshot, "status")
    if status.value != "1 items left":
        _fail(f"the status reads {status.value!r}")


@case("todo.refs_never_reused", suite=SUITE, fixture="todo")
async def refs_never_reused(ctx: CaseContext) -> None:
    """A ref never names another element in a later snapshot: once the first of three items
    is deleted no ref of its names what follows it, and the item added next gets refs of
    its own (above the surface a ref is an element's identity across snapshots)."""
    for text in ("alpha", "beta", "gamma"):
        await _add_todo(ctx, text)
    first = await _snap(ctx)
    named = _elements(first)
    delete = next((n for n in first.nodes if named[n.ref] == ("button", "Delete", "alpha")),
                  None)
    if delete is None:
        _fail("the item alpha has no Delete button")
    await ctx.surface.act("click", delete.ref)
    second = await _snap(ctx)
    if _find_all(second, "listitem", "alpha"):
        _fail("deleting alpha left it in the list")
    _never_reused(named, second, "after alpha was deleted")
    await _add_todo(ctx, "delta")
    _never_reused(named, await _snap(ctx), "after delta was added")


_Element = tuple[str, str | None, str | None]
"""What the case can tell of an element: its role, its name, the todo item it is in."""


def _elements(snapshot: Snapshot) -> dict[str, _Element]:
    """Each ref's element: its role, name and the item (a listitem's name) holding it."""
    ancestors: list[SnapshotNode] = []
    out: dict[str, _Element] = {}
    for node in snapshot.nodes:
        del ancestors[node.depth:]
        ancestors.append(node)
        item = next((a.name for a in reversed(ancestors) if a.role == "listitem"), None)
        out[node.ref] = (node.role, node.name, item)
    return out


def _never_reused(named: dict[str, _Element], later: Snapshot, when: str) -> None:
    """Fails when a ref of `later` named another element before; remembers the new refs."""
    for ref, element in _elements(later).items():
        before = named.setdefault(ref, element)
        if before != element:
            _fail(f"ref {ref} named {_shown_element(before)} and {when} names "
                  f"{_shown_element(element)}")


def _shown_element(element: _Element) -> str:
    role, name, item = element
    what = f"{role} {name!r}" if name else f"a {role}"
    if item is None or role == "listitem":
        return what
    return f"{what} of the item {item!r}"


@case("todo.checkbox_states", suite=SUITE, fixture="todo")
async def checkbox_states(ctx: CaseContext) -> None:
    """A checkbox is unchecked, then checked after setChecked; check agrees. setChecked sets
    the state asked for rather than toggling: asked again for the state the box is in, it
    leaves it."""
    await _add_todo(ctx, "milk")
    snapshot = await _snap(ctx)
    done = _find(snapshot, "checkbox", "Done")
    if "unchecked" not in _states(done):
        _fail("a new item's checkbox lacks the unchecked state")
    await ctx.surface.act("setChecked", done.ref, {"checked": True})
    after = await _snap(ctx)
    if "checked" not in _states(_find(after, "checkbox", "Done")):
        _fail("setChecked(true) did not show the checked state")
    result = await ctx.surface.check({"kind": "checked"}, "ref", done.ref)
    if not result.ok:
        _fail("check checked is not ok after setChecked(true)")
    for checked, state in ((True, "checked"), (False, "unchecked"), (False, "unchecked")):
        await ctx.surface.act("setChecked", done.ref, {"checked": checked})
        states = _states(_find(await _snap(ctx), "checkbox", "Done"))
        if state not in states:
            _fail(f"setChecked({str(checked).lower()}) left the checkbox {sorted(states)}, "
                  f"not {state}")


@case("todo.locate_many", suite=SUITE, fixture="todo")
async def locate_many(ctx: CaseContext) -> None:
    """A candidate that matches several elements answers all of them, in document order."""
    await _add_todo(ctx, "milk")
    await _add_todo(ctx, "eggs")
    snapshot = await _snap(ctx)
    deletes = [n.ref for n in _find_all(snapshot, "button", "Delete")]
    found = await ctx.surface.locate(RoleCandidate("button", "Delete"))
    if found != deletes:
        _fail(f"role button 'Delete' located {found}, the snapshot has {deletes}")
    items = await ctx.surface.locate(AutomationIdCandidate("todo.item"))
    if len(items) != 2:
        _fail(f"automationId todo.item (shared by both items) located {len(items)}")


@case("todo.locate_none", suite=SUITE, fixture="todo")
async def locate_none(ctx: CaseContext) -> None:
    """No match is [] and never an error."""
    await _snap(ctx)
    for candidate in (
        RoleCandidate("button", "No such button"),
        TextCandidate("nothing says this", exact=True),
        AutomationIdCandidate("todo.nothing"),
    ):
        found = await ctx.surface.locate(candidate)
        if found != []:
            _fail(f"{candidate} located {found}")


@case("todo.submit_empty_rejected", suite=SUITE, fixture="todo")
async def submit_empty_rejected(ctx: CaseContext) -> None:
    """The app rejects submitting an empty todo: ActionabilityError, nothing added."""
    snapshot = await _snap(ctx)
    field = _find(snapshot, "textbox", "New todo")
    await _raises(
        "Enter in an empty field",
        ActionabilityError,
        lambda: ctx.surface.act("press", field.ref, {"key": "Enter"}),
    )
    after = await _snap(ctx)
    if _find_all(after, "listitem"):
        _fail("a rejected submit added an item")


@case("todo.read_and_check", suite=SUITE, fixture="todo")
async def read_and_check(ctx: CaseContext) -> None:
    """read gives text and value; a false predicate is ok=False; a predicate against a
    subject it does not apply to is a CheckError."""
    await _add_todo(ctx, "milk")
    snapshot = await _snap(ctx)
    status = _find(snapshot, "status")
    if await ctx.surface.read("value", status.ref) != "1 items left":
        _fail("read('value') of the status is wrong")
    text = await ctx.surface.read("text", status.ref)
    if not isinstance(text, str) or "1 items left" not in text:
        _fail(f"read('text') of the status is {text!r}")
    missing = await ctx.surface.check({"kind": "textEquals", "text": "9 items"}, "ref", status.ref)
    if missing.ok:
        _fail("textEquals '9 items' is ok")
    page = await ctx.surface.check({"kind": "textContains", "text": "milk"}, "page")
    if not page.ok:
        _fail("the page does not contain 'milk'")
    count = await ctx.surface.check(
        {"kind": "count", "candidate": {"by": "role", "role": "listitem"}, "count": 1}, "page"
    )
    if not count.ok:
        _fail(f"count of listitems is {count.actual}, expected 1")
    await _raises(
        "count against an element",
        CheckError,
        lambda: ctx.surface.check(
            {"kind": "count", "candidate": {"by": "role", "role": "button"}, "count": 1},
            "ref",
            status.ref,
        ),
    )


# ---- gallery ------------------------------------------------------------------------------


@case("gallery.hidden_section_leaves_text", suite=SUITE, fixture="gallery")
async def hidden_section_leaves_text(ctx: CaseContext) -> None:
    """A hidden section is not in the text (nor located as visible); shown, it is."""
    snapshot = await _snap(ctx)
    for node in snapshot.nodes:
        if "hidden" in node.states and f"[ref={node.ref}]" in snapshot.text:
            _fail(f"hidden node {node.ref} is in the text")
    if '"Ping"' in snapshot.text:
        _fail("the hidden section's Ping button is in the text")
    shown = {n.ref for n in snapshot.nodes if "hidden" not in n.states}
    pings = [r for r in await ctx.surface.locate(RoleCandidate("button", "Ping")) if r in shown]
    if pings:
        _fail(f"locate found the hidden Ping button as shown: {pings}")
    toggle = _find(snapshot, "button", "Show details")
    await ctx.surface.act("click", toggle.ref)
    after = await _snap(ctx)
    if '"Ping"' not in after.text:
        _fail("the shown section's Ping button is not in the text")
    if len(await ctx.surface.locate(RoleCandidate("button", "Ping"))) != 1:
        _fail("the shown Ping button is not located once")


@case("gallery.snapshot_root_and_max_nodes", suite=SUITE, fixture="gallery")
async def snapshot_root_and_max_nodes(ctx: CaseContext) -> None:
    """snapshot(root=R) is R's subtree: R first (the snapshot's ref), then its descendants
    as the whole snapshot lists them, depths counted from R; snapshot(max_nodes=N) is the
    whole snapshot's first N nodes."""
    whole = await _snap(ctx)
    controls = _find(whole, "group", "Controls")
    call = f"snapshot(root={controls.ref!r})"
    part = await _snap(ctx, root=controls.ref)
    if part.ref != controls.ref:
        _fail(f"{call} is rooted at {part.ref}, not at the Controls group {controls.ref}")
    start = whole.nodes.index(controls)
    subtree = [controls]
    for node in whole.nodes[start + 1:]:
        if node.depth <= controls.depth:
            break
        subtree.append(node)
    _same_nodes(call, part.nodes, subtree, "the Controls group's subtree")
    for limit in (1, 5):
        capped = await _snap(ctx, max_nodes=limit)
        _same_nodes(f"snapshot(max_nodes={limit})", capped.nodes, whole.nodes[:limit],
                    f"the whole snapshot's first {limit}")


def _same_nodes(
    call: str, got: Sequence[SnapshotNode], want: Sequence[SnapshotNode], what: str
) -> None:
    """`got` lists the elements of `want`, in order, at the same depths below the first."""

    def shapes(nodes: Sequence[SnapshotNode]) -> list[tuple[str, str, str | None, int]]:
        base = nodes[0].depth if nodes else 0
        return [(n.ref, n.role, n.name, n.depth - base) for n in nodes]

    mine, theirs = shapes(got), shapes(want)
    if mine == theirs:
        return
    counts = f"{call} gave {_nodes(len(mine))}, expected {len(theirs)} ({what})"
    at = next((i for i, (a, b) in enumerate(zip(mine, theirs, strict=False)) if a != b), None)
    if at is None:
        _fail(counts)
    _fail(f"{counts}; node {at} is {_shown(mine[at])}, expected {_shown(theirs[at])}")


def _nodes(count: int) -> str:
    return "1 node" if count == 1 else f"{count} nodes"


def _shown(shape: tuple[str, str, str | None, int]) -> str:
    ref, role, name, depth = shape
    return f"{role} {name!r} [ref={ref}] at depth {depth}"


@case("gallery.roles_are_aria", suite=SUITE, fixture="gallery")
async def roles_are_aria(ctx: CaseContext) -> None:
    """Every role is ARIA, mapped from the runtime's vocabulary, none dropped."""
    snapshot = await _snap(ctx)
    roles = {n.role for n in snapshot.nodes}
    for role in ("navigation", "main", "slider", "combobox", "tab", "tree", "grid", "table",
                 "img", "switch", "radio", "textbox", "progressbar", "form", "document"):
        if role not in roles:
            _fail(f"no {role} in the gallery's snapshot")
    password = _find(snapshot, "textbox", "Password")
    if password.value:
        _fail("an empty password field shows a value")


@case("gallery.select_option", suite=SUITE, fixture="gallery")
async def select_option(ctx: CaseContext) -> None:
    """selectOption on the combo box chooses the option: its value becomes Banana."""
    snapshot = await _snap(ctx)
    fruit = _find(snapshot, "combobox", "Fruit")
    await ctx.surface.act("selectOption", fruit.ref, {"values": ("Banana",)})
    after = await _snap(ctx)
    if _find(after, "combobox", "Fruit").value != "Banana":
        _fail("selectOption Banana did not set the combo box's value")


@case("gallery.expanded_and_checked", suite=SUITE, fixture="gallery")
async def expanded_and_checked(ctx: CaseContext) -> None:
    """Expandable elements say collapsed/expanded; a switch says checked/unchecked."""
    snapshot = await _snap(ctx)
    folder = _find(snapshot, "treeitem", "src")
    if "collapsed" not in _states(folder):
        _fail("the collapsed folder lacks the collapsed state")
    await ctx.surface.act("click", folder.ref)
    after = await _snap(ctx)
    if "expanded" not in _states(_find(after, "treeitem", "src")):
        _fail("the opened folder lacks the expanded state")
    switch = _find(after, "switch", "Dark mode")
    if "unchecked" not in _states(switch):
        _fail("the switch lacks the unchecked state")
    result = await ctx.surface.check({"kind": "checked"}, "ref", switch.ref)
    if result.ok:
        _fail("check checked on an unchecked switch is ok")


@case("gallery.modal_dialog", suite=SUITE, fixture="gallery")
async def modal_dialog(ctx: CaseContext) -> None:
    """Opening the modal dialog scopes the tree to it; dismissing it with Escape closes it."""
    snapshot = await _snap(ctx)
    await ctx.surface.act("click", _find(snapshot, "button", "Open dialog").ref)
    dialog = await _snap(ctx)
    if dialog.nodes[0].role != "dialog":
        _fail("with the modal dialog open the root is not the dialog")
    shown = await ctx.surface.check({"kind": "visible"}, "dialog")
    if not shown.ok:
        _fail("check visible on the dialog is not ok")
    await ctx.surface.act("press", dialog.nodes[0].ref, {"key": "Escape"})
    closed = await _snap(ctx)
    if closed.nodes[0].role == "dialog":
        _fail("Escape did not close the dialog")
