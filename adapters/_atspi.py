"""The ``atspi`` adapter: Linux desktop applications through the AT-SPI2 registry (kind
desktop; seed §3.4, issue 7).

``create_surface({"adapter": "atspi"})``, then ``open`` with
``SessionInit(process_name=...)`` to attach to an application that owns a window, or
``SessionInit(launch=Launch(path=..., args=[...]))`` to start one (with both, it attaches
when a process of that name already owns a window and launches otherwise). Config keys, all
optional: ``session_bus`` (the D-Bus session bus address, default
``$DBUS_SESSION_BUS_ADDRESS``), ``a11y_bus`` (skip the ``org.a11y.Bus`` lookup), ``env``
(extra environment for a launched application), ``timeout_ms`` (launch and call
timeout), ``settle_ms`` (how long GTK gets to run an action it queued).

The D-Bus side is jeepney, pure Python over Trio, pipelined; ``_atspi_dbus`` says why
and how the tree is read in a handful of round trips. The mapping (roles, names, states
and their inversions, which action an ``act`` uses) is ``_atspi_map``, pure functions
tested over recorded trees.

What it does and refuses:

* Actions go through the accessible's own interfaces, never synthetic pointer events:
  Action.DoAction by name (``click``, ``activate``, ``press``, ``toggle``), EditableText
  (``type`` appends to the text, ``clear`` empties it), Selection (``selectOption`` and
  friends), Value.CurrentValue (``type`` on a spin button or slider sets the number; a
  progress or level bar's is not set), Component.GrabFocus and ScrollTo. A ``click`` on
  a push button that takes the focus, or on a tree view's check box cell, is Space with
  the focus on it: GTK runs a DoAction inside its dispatch of accessibility calls, so a
  handler that runs a modal dialog (``gtk_dialog_run``) would leave the application
  answering nothing until the dialog closed, and a check box cell's Toggle action
  activates its row instead. ``press`` uses the element's activate (Enter) or click
  (Space) action, any other key goes through the registry's DeviceEventController once
  the element has the focus (a window: once it is the active one), and is an
  ActionabilityError when it does not take it. Pointer-only gestures (hover, drag, hold)
  are an ActionabilityError: there is no pointer.
* ``navigate``, ``back``, ``forward``, ``refresh`` and ``read("url")`` raise
  NavigationError: a desktop application has no URL.
* ``quit`` takes the application's own graceful route first (activating its Quit, Exit or
  Close control through the Action interface), then SIGTERM to its process group, then
  SIGKILL, and raises SessionError when the process survives all three. A session that
  attached to an application that was already running never quits it.
* Refs (``a1``, ``a2``, ...) are minted per accessible object for the session, so a ref
  stays the same element for as long as that element exists; a ref whose element is gone
  is a LocateError.
* Capabilities are all false: no dialogs, frames, windows switching, upload, drag, trace,
  pick, observe, webmcp, screenshot or restore.
"""

from __future__ import annotations

import contextlib
import math
import os
import shlex
import signal
import subprocess
import tempfile
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Final

import attrs
import trio

from . import _atspi_map as amap
from ._atspi_dbus import (
    AppInfo,
    ApplicationGoneError,
    Backend,
    BusCallError,
    LiveBackend,
    StaleObjectError,
)
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
    TitleMatches,
    UrlMatches,
    Visible,
)
from ._candidates import (
    AutomationIdCandidate,
    Candidate,
    ControlPathCandidate,
    CoordsCandidate,
    LabelCandidate,
    NameCandidate,
    RoleCandidate,
    TextCandidate,
)
from ._capabilities import Capabilities
from ._check import check_element, check_pattern, text_matches
from ._control_path import ControlStep, follow_control_path, parse_control_path
from ._errors import (
    ActionabilityError,
    CheckError,
    DataError,
    LocateError,
    NavigationError,
    ScriptError,
    SessionError,
    SurfaceGoneError,
    SurfaceTimeoutError,
)
from ._reaper import Reaper
from ._schemas import (
    act_args_from_dict,
    candidate_from_dict,
    config_ms,
    predicate_from_dict,
    session_init_from_dict,
    session_state_from_dict,
)
from ._session import Launch, SessionState
from ._snapshot import Snapshot, SnapshotNode, build_snapshot
from ._surface import (
    ActArgsLike,
    CandidateLike,
    PredicateLike,
    SessionInitLike,
    SessionStateLike,
    SurfaceKind,
)

NAVIGATION: Final = frozenset({"navigate", "back", "forward", "refresh"})
POINTER_ONLY: Final = frozenset({"hover", "pressAndHold", "release", "dragTo"})
UNCLAIMED: Final = frozenset(
    {
        "upload",
        "switchWindow",
        "closeOtherWindows",
        "switchFrame",
        "resizeWindow",
        "dialog",
        "screenshot",
        "keyDown",
        "keyUp",
    }
)
LABEL_FOR: Final = amap.RELATION_NAMES.index("label-for")
LABELLED_BY: Final = amap.RELATION_NAMES.index("labelled-by")
OPTION_ROLES: Final = frozenset(
    {
        "menu item",
        "check menu item",
        "radio menu item",
        "list item",
        "table cell",
        "tree item",
        "page tab",
        "option",
    }
)
PAGE_KEYS: Final = frozenset({"pagedown", "pageup"})
"""The keys that scroll a scroll pane, through its scroll bar's value."""
KEYSYMS: Final[Mapping[str, int]] = {
    "enter": 0xFF0D,
    "return": 0xFF0D,
    "tab": 0xFF09,
    "escape": 0xFF1B,
    "esc": 0xFF1B,
    "backspace": 0xFF08,
    "delete": 0xFFFF,
    "home": 0xFF50,
    "end": 0xFF57,
    "arrowleft": 0xFF51,
    "arrowup": 0xFF52,
    "arrowright": 0xFF53,
    "arrowdown": 0xFF54,
    "left": 0xFF51,
    "up": 0xFF52,
    "right": 0xFF53,
    "down": 0xFF54,
    "pageup": 0xFF55,
    "pagedown": 0xFF56,
    "space": 0x20,
    " ": 0x20,
    "insert": 0xFF63,
    **{f"f{n}": 0xFFBD + n for n in range(1, 13)},
}
DEFAULT_TIMEOUT_MS: Final = 20_000
QUIT_WAIT_S: Final = 1.5
"""How long the application's own Quit control gets, finding and activating it included."""
SIGNAL_WAIT_S: Final = 1.0
"""How long it then gets after SIGTERM, and after SIGKILL. All three fit inside an MCP
client's shutdown (the SDK's stdio client closes stdin, waits 2 s, sends SIGTERM and SIGKILL
2 s later): the server logs the session's end only once its surface is closed."""
EXIT_WAIT_S: Final = 0.5
"""How long an application gone from the registry gets to show how it ended."""
ACTIVATION_WAIT_S: Final = 1.0
FOCUS_AFTER_ACTIVATION_S: Final = 0.4
FOCUS_WAIT_S: Final = 0.5
"""How long an element given the focus has to say it has it (it takes about 50 ms)."""
STDERR_SHOWN: Final = 500
"""The characters of a launched application's stderr a launch error shows (its last, its
lines joined by `` | ``: a usage error is one line)."""


def create_atspi_surface(config: Mapping[str, Any]) -> AtspiSurface:
    """The factory ``create_surface({"adapter": "atspi", ...})`` calls."""
    return AtspiSurface(config)


@attrs.define
class _Entry:
    ref: str
    raw: amap.RawNode
    node: SnapshotNode


@attrs.define
class _Tree:
    entries: list[_Entry]
    by_ref: dict[str, _Entry]
    children: dict[str, list[_Entry]]

    @property
    def root(self) -> _Entry:
        return self.entries[0]


class AtspiSurface:
    """An AgentSurface over one desktop application on the AT-SPI registry."""

    def __init__(self, config: Mapping[str, Any] | None = None, *, backend: Backend | None = None):
        config = dict(config or {})
        self._config = config
        self._given_backend = backend
        self._backend: Backend | None = None
        self._app: AppInfo | None = None
        self._process: trio.Process | None = None
        self._reaper: Reaper | None = None
        self._launched = False
        self._ended = False
        self._ended_as: type[SessionError] = SessionError
        """What a call raises once the application has ended: as its end was first found."""
        self._refs: dict[str, str] = {}
        self._paths: dict[str, str] = {}
        self._tree: _Tree | None = None
        self._last_result: str | None = None
        self._timeout = config_ms(config, "timeout_ms", DEFAULT_TIMEOUT_MS) / 1000
        self._settle = config_ms(config, "settle_ms", 60) / 1000

    @property
    def kind(self) -> SurfaceKind:
        return "desktop"

    def capabilities(self) -> Capabilities:
        return Capabilities()

    # -- the session ------------------------------------------------------------------

    @property
    def application(self) -> AppInfo | None:
        """The application this session drives (None before ``open``)."""
        return self._app

    @property
    def launched(self) -> bool:
        """Whether this session launched its application (and so may quit it)."""
        return self._launched

    async def open(self, session: SessionInitLike) -> None:
        init = session_init_from_dict(session)
        if self._app is not None:
            raise SessionError("the session is already open")
        if init.process_name is None and init.launch is None:
            raise SessionError("an atspi session needs a process_name to attach to or a launch")
        if init.timeout_ms is not None:
            self._timeout = init.timeout_ms / 1000
        if self._given_backend is not None:
            self._backend = self._given_backend
        else:
            self._backend = await LiveBackend.connect(
                self._config.get("session_bus"), self._config.get("a11y_bus"), self._timeout
            )
        try:
            if init.process_name is not None:
                self._app = await self._find_by_name(init.process_name)
            if self._app is None and init.launch is not None:
                await self._launch(init.launch)
            if self._app is None:
                raise SessionError(
                    f"no process named {init.process_name!r} owns a window, and no launch was given"
                )
        except BaseException:
            await self._release()
            raise

    async def _find_by_name(self, name: str) -> AppInfo | None:
        for app in await self._require_backend().applications():
            if app.owns_window and _process_named(app, name):
                return app
        return None

    async def _launch(self, launch: Launch) -> None:
        env = dict(os.environ)
        env.update({str(k): str(v) for k, v in dict(self._config.get("env") or {}).items()})
        for key in ("NO_AT_BRIDGE", "GTK_A11Y"):
            env.pop(key, None)
        if self._config.get("session_bus"):
            env["DBUS_SESSION_BUS_ADDRESS"] = str(self._config["session_bus"])
        command = shlex.join([launch.path, *launch.args])
        # A file, not a pipe: nobody reads the application's stderr once it runs, and a
        # full pipe would block it. Read back if it exits before it owns a window.
        with tempfile.TemporaryFile() as stderr:
            try:
                self._process = await trio.lowlevel.open_process(
                    [launch.path, *launch.args],
                    env=env,
                    cwd=launch.cwd,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=stderr,
                    start_new_session=True,
                )
            except OSError as exc:
                raise SessionError(f"cannot launch {command}: {exc}") from exc
            self._launched = True
            self._reaper = await Reaper.watch(self._process.pid)
            await self._await_window(command, stderr)

    async def _await_window(self, command: str, stderr: IO[bytes]) -> None:
        assert self._process is not None
        backend = self._require_backend()
        with trio.move_on_after(self._timeout):
            while True:
                code = self._process.poll()
                if code is not None:
                    stderr.seek(0)
                    lines = stderr.read().decode(errors="replace").split("\n")
                    said = " | ".join(line.strip() for line in lines if line.strip())
                    raise SessionError(
                        f"{command} {_ended_how(code)} before it owned a window"
                        + (f"; it said: {said[-STDERR_SHOWN:]}" if said else "")
                    )
                for app in await backend.applications():
                    if (
                        app.owns_window
                        and app.pid is not None
                        and _descends(app.pid, self._process.pid)
                    ):
                        self._app = app
                        await self._activated()
                        return
                await trio.sleep(0.05)
        raise SurfaceTimeoutError(
            f"{command} did not show a window on the AT-SPI registry within"
            f" {self._timeout:g}s"
        )

    async def _activated(self) -> None:
        """Wait, briefly, for the launched application's keyboard focus to show: its window
        is activated, and its focused control says so shortly after (both come after the
        window is on the registry). A session whose first snapshot came before would see
        the focus arrive as a change nobody made (an agent's first exact action stale), and
        a re-run would not see it at the same step. A window with nothing focused costs
        `FOCUS_AFTER_ACTIVATION_S`; a desktop that never activates new windows, the wait."""
        active_since: float | None = None
        with trio.move_on_after(ACTIVATION_WAIT_S):
            while True:
                raws = [entry.raw for entry in (await self._read()).entries]
                if any("focused" in raw.state_set for raw in raws):
                    return
                now = trio.current_time()
                if active_since is None and any(
                    raw.role_name in amap.WINDOW_ROLES and "active" in raw.state_set
                    for raw in raws
                ):
                    active_since = now
                if active_since is not None and now - active_since >= FOCUS_AFTER_ACTIVATION_S:
                    return
                await trio.sleep(0.02)

    async def close(self) -> None:
        """End the session: an application this session launched is quit (gracefully
        first); an attached one is left running. Safe to call twice."""
        try:
            if self._launched and not self._ended and self._process is not None:
                with contextlib.suppress(Exception):
                    await self._quit()
        finally:
            await self._release()

    async def _release(self) -> None:
        backend, self._backend = self._backend, None
        if backend is not None and self._given_backend is None:
            with contextlib.suppress(Exception):
                await backend.aclose()
        if self._process is not None and self._process.poll() is None:
            _signal_group(self._process.pid, signal.SIGKILL)
        if self._reaper is not None:
            await self._reaper.disarm()
        self._app = None
        self._tree = None

    def _require_backend(self) -> Backend:
        if self._backend is None:
            raise SessionError("the session is not open")
        return self._backend

    def _require_app(self) -> tuple[Backend, AppInfo]:
        backend = self._require_backend()
        if self._app is None:
            raise SessionError("the session is not open")
        if self._ended:
            raise self._ended_as(f"{self._app.name} has quit")
        if self._process is not None and self._process.poll() is not None:
            raise self._end(self._app.name, self._process.poll())
        return backend, self._app

    def _end(self, name: str, code: int | None) -> SessionError:
        """The error of the application `name` found ended with return code `code` (None:
        not known), which every later call raises too: a `SurfaceGoneError` when a signal
        from outside killed it, which a re-run of the session cannot repeat; a plain
        `SessionError` when it ended itself (it exited, aborted or crashed), which a re-run
        repeats unless the application changed."""
        self._ended = True
        outside = code is not None and code < 0 and -code in _OUTSIDE_SIGNALS
        self._ended_as = SurfaceGoneError if outside else SessionError
        return self._ended_as(f"{name} {_ended_how(code)}")

    # -- the tree ---------------------------------------------------------------------

    def _ref(self, path: str) -> str:
        ref = self._refs.get(path)
        if ref is None:
            ref = f"a{len(self._refs) + 1}"
            self._refs[path] = ref
            self._paths[ref] = path
        return ref

    async def _read(self, root: str = amap.ROOT_PATH) -> _Tree:
        backend, app = self._require_app()
        try:
            raws = await backend.read_tree(app, root)
        except ApplicationGoneError as exc:
            raise await self._gone(exc) from exc
        except StaleObjectError as exc:
            if root != amap.ROOT_PATH:
                raise
            raise await self._gone(exc) from exc
        raws = amap.showing_holders(raws)
        entries: list[_Entry] = []
        stack: list[_Entry] = []
        children: dict[str, list[_Entry]] = {}
        places = amap.set_places(raws)
        for raw in raws:
            while stack and stack[-1].raw.depth >= raw.depth:
                stack.pop()
            parent = stack[-1] if stack else None
            ref = self._ref(raw.path)
            node = amap.to_snapshot_node(
                raw, ref, parent.ref if parent else None, len(stack), places.get(raw.path)
            )
            entry = _Entry(ref, raw, node)
            entries.append(entry)
            if parent is not None:
                children.setdefault(parent.ref, []).append(entry)
            stack.append(entry)
        if not entries:
            raise SessionError(f"{app.name} has no accessible tree")
        tree = _Tree(entries, {e.ref: e for e in entries}, children)
        if root == amap.ROOT_PATH:
            self._tree = tree
        return tree

    async def snapshot(
        self,
        *,
        root: str | None = None,
        max_nodes: int | None = None,
        interactive_only: bool = False,
    ) -> Snapshot:
        path = self._path(root) if root is not None else amap.ROOT_PATH
        try:
            tree = await self._read(path)
        except StaleObjectError:
            raise LocateError(f"ref {root!r} is gone", details={"ref": root}) from None
        entries = tree.entries
        if interactive_only:
            entries = [entries[0], *(e for e in entries[1:] if _interactive(e.raw))]
        nodes = _reparent([e.node for e in entries], tree)
        if max_nodes is not None:
            nodes = nodes[: max(1, max_nodes)]
        return build_snapshot(tree.root.ref, nodes)

    def _path(self, ref: str) -> str:
        path = self._paths.get(ref)
        if path is None:
            raise LocateError(f"unknown ref {ref!r}", details={"ref": ref})
        return path

    async def _node(self, ref: str, *, actions: bool = False) -> amap.RawNode:
        """The current facts of the element behind ``ref`` (with ``actions``, its action
        names too); LocateError when it is gone."""
        backend, app = self._require_app()
        try:
            raw = await backend.read_node(app, self._path(ref), actions=actions)
        except ApplicationGoneError as exc:
            raise await self._gone(exc) from exc
        if raw is None:
            raise LocateError(f"ref {ref!r} is stale: its element is gone", details={"ref": ref})
        return raw

    async def _entry(self, ref: str) -> _Entry:
        self._path(ref)
        tree = self._tree
        if tree is None or ref not in tree.by_ref:
            tree = await self._read()
        entry = tree.by_ref.get(ref)
        if entry is None:
            raise LocateError(f"ref {ref!r} is stale: its element is gone", details={"ref": ref})
        return entry

    # -- locate -----------------------------------------------------------------------

    async def locate(self, candidate: CandidateLike) -> list[str]:
        cand = candidate_from_dict(candidate)
        if not isinstance(
            cand,
            (
                AutomationIdCandidate,
                RoleCandidate,
                NameCandidate,
                TextCandidate,
                LabelCandidate,
                ControlPathCandidate,
                CoordsCandidate,
            ),
        ):
            return []
        tree = await self._read()
        shown = [e for e in tree.entries if "hidden" not in e.node.states]
        async with self._acting(None):
            return await self._match(tree, shown, cand)

    async def _match(self, tree: _Tree, shown: list[_Entry], cand: Candidate) -> list[str]:
        if isinstance(cand, AutomationIdCandidate):
            return [e.ref for e in shown if amap.automation_id(e.raw) == cand.value]
        if isinstance(cand, RoleCandidate):
            role = cand.role.lower()
            return [
                e.ref
                for e in shown
                if e.node.role == role
                and (cand.name is None or text_matches(e.node.name, cand.name, cand.exact))
            ]
        if isinstance(cand, NameCandidate):
            return [e.ref for e in shown if e.node.name == cand.value]
        if isinstance(cand, TextCandidate):
            return [
                e.ref
                for e in shown
                if e.node.role not in {"application", "window"}
                and text_matches(_own_text(e, tree), cand.value, cand.exact)
            ]
        if isinstance(cand, LabelCandidate):
            return await self._by_label(tree, shown, cand)
        if isinstance(cand, ControlPathCandidate):
            return _by_path(tree, parse_control_path(cand.value), shown)
        if isinstance(cand, CoordsCandidate):
            return _hit(shown, cand.x, cand.y)
        return []

    async def _by_label(self, tree: _Tree, shown: list[_Entry], cand: LabelCandidate) -> list[str]:
        backend, app = self._require_app()
        labels = [
            e
            for e in shown
            if e.raw.role_name in {"label", "text"}
            and text_matches(e.node.name, cand.value, cand.exact)
        ]
        visible = {e.raw.path: e.ref for e in shown}
        out: list[str] = []
        for label in labels:
            try:
                relations = await backend.relations(app, label.raw.path)
            except (StaleObjectError, BusCallError):
                continue  # gone since the tree was read, it labels nothing now
            for kind, targets in relations:
                if kind == LABEL_FOR:
                    out += [visible[t] for t in targets if t in visible and visible[t] not in out]
        return out

    # -- act --------------------------------------------------------------------------

    async def act(
        self,
        action: str,
        ref: str | None = None,
        args: ActArgsLike | None = None,
        ref2: str | None = None,
    ) -> ActResult:
        a = ActArgs() if args is None else act_args_from_dict(args)
        if action in NAVIGATION:
            raise NavigationError(f"{action}: a desktop application has no URL to navigate")
        if action == "quit":
            await self._quit()
            return ActResult()
        if action == "sleep":
            await trio.sleep((a.ms or 0) / 1000)
            return ActResult()
        if action in POINTER_ONLY:
            raise ActionabilityError(
                f"{action} needs a pointer; the atspi adapter acts only through the"
                " element's accessibility interfaces",
                details={"action": action},
            )
        if action in UNCLAIMED:
            raise ActionabilityError(
                f"the atspi adapter does not support {action}", details={"action": action}
            )
        if action == "evaluate":
            raise ScriptError("the AT-SPI desktop has no script engine to evaluate in")
        if action == "invoke":
            raise ActionabilityError("invoke is composed by the executor, not the surface")
        if action == "waitFor":
            async with self._acting(None):
                await self._wait_for(ref, a)
            return ActResult()
        if action in {"scrollToTop", "scrollToBottom"}:
            async with self._acting(ref):
                await self._scroll_end(ref, top=action == "scrollToTop")
            return ActResult()
        if action == "press" and ref is None:
            async with self._acting(None):
                await self._key(a.key)
            return ActResult()
        if ref is None:
            raise DataError(f"{action} needs a ref", path="ref")
        async with self._acting(ref):
            result = await self._act_on(action, ref, a)
        self._last_result = result
        if result is not None:
            return ActResult(result=result)
        await self._settle_after()
        return ActResult()

    @contextlib.asynccontextmanager
    async def _acting(self, ref: str | None) -> AsyncIterator[None]:
        """The bus's errors while acting on `ref` as an agent's: an element gone in the
        middle of the action is a stale ref and a call it refused an ActionabilityError,
        not the session's end, which only an application gone from the bus is."""
        try:
            yield
        except ApplicationGoneError as exc:
            raise await self._gone(exc) from exc
        except StaleObjectError as exc:
            if ref is None:
                raise
            raise LocateError(
                f"ref {ref!r} is stale: its element is gone", details={"ref": ref}
            ) from exc
        except BusCallError as exc:
            target = ref or "the application"
            raise ActionabilityError(
                f"{target} refused the call: {exc}", details={"ref": ref} if ref else None
            ) from exc

    async def _gone(self, exc: Exception) -> SessionError:
        """The error of the application found gone from the bus (`exc` says how), which
        ends the session: once its process is reaped, as `_end` tells it."""
        assert self._app is not None
        self._ended = True
        if self._process is not None:
            # Its connections close as it dies, a moment before it can be reaped.
            with trio.move_on_after(EXIT_WAIT_S):
                await self._process.wait()
            code = self._process.poll()
            if code is not None:
                return self._end(self._app.name, code)
        return SessionError(f"{self._app.name} is gone: {exc}")

    async def _settle_after(self) -> None:
        """GTK runs a DoAction from an idle callback: give it the chance to."""
        if self._settle > 0:
            await trio.sleep(self._settle)

    async def _act_on(self, action: str, ref: str, a: ActArgs) -> str | None:
        backend, app = self._require_app()
        raw = await self._node(ref, actions=True)
        path = raw.path
        if action == "read":
            return amap.text_of(raw) or ""
        if action == "scrollIntoView":
            if raw.has("Component"):
                await backend.scroll_to(app, path)
            return None
        states = amap.node_states(raw)
        if "hidden" in states:
            raise ActionabilityError(f"{action}: {ref} is not showing", details={"ref": ref})
        if "disabled" in states:
            raise ActionabilityError(f"{action}: {ref} is disabled", details={"ref": ref})
        if action in {"click", "hoverAndClick"} and (
            await self._select_clicked(raw, ref) or await self._pressed_by_keyboard(raw, ref)
        ):
            return None
        if action in {"click", "hoverAndClick", "doubleClick", "submit", "rightClick"}:
            await self._do(raw, ref, action, times=2 if action == "doubleClick" else 1)
        elif action == "setChecked":
            if a.checked is None:
                raise DataError("setChecked needs args.checked", path="args.checked")
            if not amap.is_checkable(raw):
                raise ActionabilityError(f"{ref} is not checkable", details={"ref": ref})
            if amap.is_checked(raw) != a.checked and not await self._pressed_by_keyboard(
                raw, ref
            ):
                await self._do(raw, ref, "setChecked")
        elif action == "type":
            await self._type(raw, ref, a.text)
        elif action == "clear":
            self._require_editable(raw, ref)
            if a.text:
                self._typable(raw, ref, a.text)
            await backend.set_text(app, path, "")
        elif action == "press":
            await self._press(raw, ref, a.key)
        elif action == "focus":
            await self._focus(raw, ref)
        elif action in {"selectOption", "deselectOption", "deselectAll"}:
            await self._select(raw, ref, action, a.values or ())
        else:
            raise DataError(f"unknown action {action!r}", path="action")
        return None

    async def _do(self, raw: amap.RawNode, ref: str, action: str, times: int = 1) -> None:
        backend, app = self._require_app()
        if not raw.has("Action"):
            raise ActionabilityError(
                f"{ref} ({raw.role_name}) has no actions", details={"ref": ref}
            )
        names = raw.actions if raw.actions is not None else await backend.actions(app, raw.path)
        index = amap.choose_action(names, action)
        if index is None:
            raise ActionabilityError(
                f"{ref} ({raw.role_name}) has no action for {action}; it offers {list(names)}",
                details={"ref": ref, "actions": list(names)},
            )
        for _ in range(times):
            if not await backend.do_action(app, raw.path, index):
                raise ActionabilityError(f"{ref} refused the {names[index]!r} action")

    async def _select_clicked(self, raw: amap.RawNode, ref: str) -> bool:
        """Do what a click does on an item its container selects, if `raw` is one: a page
        tab (which has no action of its own) is selected in its tab list, and a table or
        tree cell selects its row (its own ``activate`` is a double click's or Enter's:
        GTK runs the row's action). False for anything else, which a click acts on: a cell
        drawn as a check box among them, which a click toggles."""
        if "selectable" not in raw.state_set or amap.is_checkable(raw):
            return False
        cell = raw.has("TableCell")
        if raw.actions and not cell:
            return False
        backend, app = self._require_app()
        item = raw.path
        parent = (await self._entry(ref)).raw.parent
        holder = None if parent is None else await backend.read_node(app, parent)
        while cell and holder is not None and holder.has("TableCell"):
            # A cell of several renderers holds a cell for each: the row's is the outer one.
            item = holder.path
            outer = (await self._entry(self._ref(holder.path))).raw.parent
            holder = None if outer is None else await backend.read_node(app, outer)
        if holder is None or not holder.has("Table" if cell else "Selection"):
            return False
        index = await backend.index_in_parent(app, item)
        if cell and holder.has("Selection"):  # a click replaces a tree's selection
            await backend.clear_selection(app, holder.path)
        select = backend.select_row if cell else backend.select_child
        if not await select(app, holder.path, index):
            raise ActionabilityError(f"{ref} ({raw.role_name}) could not be selected")
        return True

    async def _pressed_by_keyboard(self, raw: amap.RawNode, ref: str) -> bool:
        """Press a push button, or toggle a tree view's check box cell, as its user does:
        with the keyboard focus on it, Space. False (click it through its action) for
        anything else, and for a push button that cannot take the focus or whose window is
        not active, where the key would go elsewhere.

        A push button: GTK runs a ``DoAction`` inside its dispatch of accessibility calls,
        so a button whose handler runs a modal dialog's own loop (``gtk_dialog_run``) left
        the application answering no call until that dialog closed: the session ended as
        a lost connection, with the dialog on the screen. A key press is dispatched as
        input is. A check box cell: GTK 3's Toggle action on it activates the row (the
        row's own action, not the toggle), so it has no other way; ActionabilityError if
        the focus cannot be put on it."""
        toggle_cell = amap.is_toggle_cell(raw) and amap.is_checkable(raw)
        if not (raw.role_name == "push button" or toggle_cell):
            return False
        if {"focusable", "showing"} <= raw.state_set and await self._focused(raw):
            await self._require_app()[0].key(KEYSYMS["space"])
            if toggle_cell and not await self._toggled(raw):
                raise ActionabilityError(
                    f"{ref} did not change when toggled: its row may draw no check box (a"
                    " tree view's cell reads the same whether or not it is drawn)",
                    details={"ref": ref},
                )
            return True
        if toggle_cell:
            raise ActionabilityError(
                f"{ref} is a check box cell, toggled with Space once the focus is on it, and"
                " it does not take the focus (is its window active?)",
                details={"ref": ref},
            )
        return False

    async def _toggled(self, raw: amap.RawNode) -> bool:
        """Whether the check box `raw` was read as shows the other state within
        FOCUS_WAIT_S."""
        backend, app = self._require_app()
        with trio.move_on_after(FOCUS_WAIT_S):
            while True:
                await trio.sleep(0.02)
                now = await backend.read_node(app, raw.path)
                if now is None:
                    return False
                if amap.is_checked(now) != amap.is_checked(raw):
                    return True
        return False

    async def _focused(self, raw: amap.RawNode) -> bool:
        """Give `raw` the keyboard focus; whether it says it has it within FOCUS_WAIT_S (it
        does not while its window is not the active one). A window has it once it is the
        active one."""
        if _has_focus(raw):
            return True
        if not raw.has("Component"):
            return False
        backend, app = self._require_app()
        await backend.grab_focus(app, raw.path)
        with trio.move_on_after(FOCUS_WAIT_S):
            while True:
                await trio.sleep(0.02)
                now = await backend.read_node(app, raw.path)
                if now is None:
                    return False
                if _has_focus(now):
                    return True
        return False

    def _require_editable(self, raw: amap.RawNode, ref: str) -> None:
        if not raw.has("EditableText"):
            raise ActionabilityError(f"{ref} ({raw.role_name}) is not editable text")
        if "readonly" in amap.node_states(raw):
            raise ActionabilityError(f"{ref} is read-only", details={"ref": ref})

    async def _type(self, raw: amap.RawNode, ref: str, text: str | None) -> None:
        backend, app = self._require_app()
        if text is None:
            raise DataError("type needs args.text", path="args.text")
        number = self._typable(raw, ref, text)
        if number is not None:
            await backend.set_value(app, raw.path, number)
            return
        current = raw.text or ""
        if not await backend.insert_text(app, raw.path, len(current), text):
            raise ActionabilityError(f"{ref} refused the text")

    def _typable(self, raw: amap.RawNode, ref: str, text: str) -> float | None:
        """Refuse `text` that `type` could not put into `raw`, before anything is done (a
        ``clear`` given the text to come checks it so, leaving the field as it was); the
        number to set a spin button or slider to, or None for a text field."""
        if raw.has("Value") and not (amap.value_settable(raw) or raw.has("EditableText")):
            raise ActionabilityError(
                f"{ref} ({raw.role_name}) shows a value that cannot be set",
                details={"ref": ref},
            )
        if amap.value_settable(raw):
            try:
                number = float(text)
            except ValueError:
                raise DataError(f"{ref} takes a number, not {text!r}", path="args.text") from None
            if not math.isfinite(number):
                raise DataError(f"{ref} takes a finite number", path="args.text")
            return number
        self._require_editable(raw, ref)
        if "\x00" in text:
            # The bus drops a connection whose message holds one: the session would end.
            raise DataError(
                f"{ref} cannot hold U+0000 (NUL): AT-SPI text is a D-Bus string",
                path="args.text",
            )
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise DataError(
                f"{ref} cannot hold the lone surrogate at {exc.start}: AT-SPI text is UTF-8",
                path="args.text",
            ) from None
        return None

    async def _press(self, raw: amap.RawNode, ref: str, key: str | None) -> None:
        if not key:
            raise DataError("press needs args.key", path="args.key")
        lowered = key.lower()
        if lowered in {"arrowright", "arrowleft"} and amap.expands_by_keys(raw):
            # A tree row's keys, done through its action: a synthesized key would go to
            # whatever has the keyboard focus.
            if ("expanded" in raw.state_set) != (lowered == "arrowright"):
                await self._do(raw, ref, "expand")
            return
        if lowered in {"enter", "return"} and raw.has("Action"):
            await self._do(raw, ref, "submit")
            return
        if lowered in {"space", " "} and raw.has("Action"):
            await self._do(raw, ref, "click")
            return
        if lowered in PAGE_KEYS and await self._scroll_page(raw, down=lowered == "pagedown"):
            return
        if not await self._focused(raw):
            # The key would go to whatever has the focus: another control, another window.
            raise ActionabilityError(
                f"press {key!r}: {ref} ({raw.role_name}) did not take the keyboard focus",
                details={"ref": ref},
            )
        await self._key(key)

    async def _scroll_page(self, raw: amap.RawNode, *, down: bool) -> bool:
        """Scroll the scroll pane `raw` a page down or up (nine tenths of what it shows, as
        GTK's PageDown does) by setting its vertical scroll bar's value; False for anything
        else, and for a pane that shows no such bar. A key would go to the focused control,
        and a scrolled window takes the focus only to hand it to its first row."""
        if raw.role_name != "scroll pane" or raw.extents is None:
            return False
        backend, app = self._require_app()
        bar = next(
            (
                n
                for n in await backend.read_tree(app, raw.path)
                if n.depth == 1
                and n.role_name == "scroll bar"
                and "vertical" in n.state_set
                and n.value is not None
                and n.bounds is not None
            ),
            None,
        )
        if bar is None or bar.value is None or bar.bounds is None:
            return False
        low, high, _step = bar.bounds
        page = 0.9 * raw.extents[3] * (1 if down else -1)
        await backend.set_value(app, bar.path, min(max(bar.value + page, low), high))
        return True

    async def _focus(self, raw: amap.RawNode, ref: str) -> None:
        """``focus``, beyond the contract's actions: what the MCP bridge's focus does."""
        backend, app = self._require_app()
        if not raw.has("Component") or not await backend.grab_focus(app, raw.path):
            raise ActionabilityError(f"{ref} ({raw.role_name}) cannot take the focus")

    async def _key(self, key: str | None) -> None:
        if not key:
            raise DataError("press needs args.key", path="args.key")
        backend, _app = self._require_app()
        keysym = KEYSYMS.get(key.lower())
        if keysym is None:
            if len(key) != 1:
                raise DataError(f"unknown key {key!r}", path="args.key")
            code = ord(key)
            keysym = code if code < 0x100 else 0x01000000 + code
        await backend.key(keysym)

    async def _select(
        self, raw: amap.RawNode, ref: str, action: str, values: Sequence[str]
    ) -> None:
        backend, app = self._require_app()
        if not raw.has("Selection"):
            raise ActionabilityError(f"{ref} ({raw.role_name}) has no options to select")
        if action == "deselectAll":
            await backend.clear_selection(app, raw.path)
            return
        if not values:
            raise DataError(f"{action} needs args.values", path="args.values")
        options = await self._options(ref, raw)
        for value in values:
            index = _option_index(options, value)
            if index is None:
                names = [amap.display_name(o) for o in options]
                raise ActionabilityError(f"{ref} has no option {value!r}; it has {names}")
            call = backend.select_child if action == "selectOption" else backend.deselect_child
            if not await call(app, raw.path, index):
                raise ActionabilityError(f"{ref} refused to {action} {value!r}")

    async def _options(self, ref: str, raw: amap.RawNode) -> list[amap.RawNode]:
        backend, app = self._require_app()
        subtree = await backend.read_tree(app, raw.path)
        kids = [n for n in subtree if n.depth == 1]
        if raw.role_name == "combo box":
            menus = [n for n in kids if n.role_name == "menu"]
            if menus:
                menu = menus[0]
                start = subtree.index(menu)
                return [n for n in subtree[start + 1 :] if n.depth == 2 and n.parent == menu.path]
        return kids

    async def _scroll_end(self, ref: str | None, *, top: bool) -> None:
        backend, app = self._require_app()
        path = self._path(ref) if ref is not None else amap.ROOT_PATH
        for node in await backend.read_tree(app, path):
            if (
                node.role_name == "scroll bar"
                and node.has("Value")
                and "vertical" in node.state_set
            ):
                low, high = await backend.value_range(app, node.path)
                await backend.set_value(app, node.path, low if top else high)
                return

    async def _wait_for(self, ref: str | None, a: ActArgs) -> None:
        if ref is None:
            raise DataError("waitFor needs a ref", path="ref")
        wanted = a.wait_state or "visible"
        timeout = (a.timeout_ms if a.timeout_ms is not None else self._timeout * 1000) / 1000
        backend, app = self._require_app()
        path = self._path(ref)
        with trio.move_on_after(timeout):
            while True:
                raw = await backend.read_node(app, path)
                present = raw is not None
                shown = present and not amap.is_hidden(raw)  # type: ignore[arg-type]
                if {
                    "visible": shown,
                    "hidden": not shown,
                    "attached": present,
                    "detached": not present,
                }[wanted]:
                    return
                await trio.sleep(0.05)
        raise SurfaceTimeoutError(f"{ref} was not {wanted} within {timeout:.1f}s")

    # -- quit -------------------------------------------------------------------------

    async def _quit(self) -> None:
        backend, app = self._require_app()
        if not self._launched or self._process is None:
            raise SessionError(
                f"{app.name} was already running when this session attached to it; an"
                " attached session does not quit it"
            )
        process = self._process
        with trio.move_on_after(QUIT_WAIT_S):
            if await self._activate_quit_control(backend, app):
                await process.wait()
        if process.poll() is not None:
            self._ended = True
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            _signal_group(process.pid, sig)
            if await _exited(process, SIGNAL_WAIT_S):
                self._ended = True
                return
        raise SessionError(f"{app.name} (pid {process.pid}) survived its quit, SIGTERM and SIGKILL")

    async def _activate_quit_control(self, backend: Backend, app: AppInfo) -> bool:
        """Whether the application's own Quit, Exit or Close control was activated: with
        none, SIGTERM is not kept waiting for an exit nothing asked for."""
        try:
            control = await self._quit_control()
            if control is None:
                return False
            names = control.actions or await backend.actions(app, control.path)
        except Exception:
            return False
        index = amap.choose_action(names, "click")
        if index is None:
            return False
        with contextlib.suppress(Exception):  # it may be gone before it answers
            await backend.do_action(app, control.path, index)
        return True

    async def _quit_control(self) -> amap.RawNode | None:
        tree = await self._read()
        for entry in tree.entries:
            raw = entry.raw
            if not raw.has("Action") or "hidden" in entry.node.states:
                continue
            if (
                raw.role_name in {"push button", "menu item"}
                and amap.plain_label(raw.name) in amap.QUIT_NAMES
            ):
                return raw
        return None

    # -- read, check, describe --------------------------------------------------------

    async def read(self, kind: ReadKind, ref: str | None = None, name: str | None = None) -> object:
        if kind == "url":
            raise NavigationError("a desktop application has no URL")
        if kind == "result":
            return self._last_result
        if kind == "title":
            return await self._title()
        if ref is None:
            raise DataError(f"read {kind} needs a ref", path="ref")
        raw = await self._node(ref)
        if kind == "text":
            return amap.text_of(raw) or ""
        if kind == "value":
            return amap.value_of(raw)
        if kind == "attribute":
            if not name:
                raise DataError("read attribute needs a name", path="name")
            if name in {"automationId", "accessible-id", "id"}:
                return amap.automation_id(raw)
            return raw.attributes.get(name)
        raise DataError(f"unknown read kind {kind!r}", path="kind")

    async def _title(self) -> str:
        backend, app = self._require_app()
        for current in await backend.applications(app.bus):
            if current.windows:
                return current.windows[0][2]
        return ""

    async def check(
        self, predicate: PredicateLike, subject: CheckSubject, ref: str | None = None
    ) -> CheckResult:
        pred = predicate_from_dict(predicate)
        if subject not in PREDICATE_SUBJECTS.get(pred.kind, ()):
            raise CheckError(f"{pred.kind} cannot be checked against {subject}")
        if subject == "dialog":
            raise CheckError("the atspi adapter does not observe dialogs")
        if subject == "page":
            return await self._check_page(pred)
        if ref is None:
            raise CheckError(f"{pred.kind} on a ref needs the ref")
        self._path(ref)
        backend, app = self._require_app()
        async with self._acting(None):
            raw = await backend.read_node(app, self._path(ref))
        if raw is None:
            if isinstance(pred, Hidden):
                return CheckResult(ok=True, actual="gone")
            if isinstance(pred, Visible):
                return CheckResult(ok=False, actual="gone")
            raise LocateError(f"ref {ref!r} is stale: its element is gone", details={"ref": ref})
        return _check_node(pred, raw)

    async def _check_page(self, pred: Predicate) -> CheckResult:
        if isinstance(pred, UrlMatches):
            raise CheckError("a desktop application has no URL to match")
        if isinstance(pred, TitleMatches):
            title = await self._title()
            return check_pattern(pred.pattern, title)
        if isinstance(pred, Count):
            found = await self.locate(pred.candidate)
            return CheckResult(ok=len(found) == pred.count, actual=str(len(found)))
        if isinstance(pred, TextContains):
            tree = await self._read()
            texts = [
                amap.text_of(e.raw) or "" for e in tree.entries if "hidden" not in e.node.states
            ]
            needle = pred.text.casefold() if pred.ignore_case else pred.text
            hit = any(needle in (t.casefold() if pred.ignore_case else t) for t in texts)
            return CheckResult(ok=hit)
        raise CheckError(f"{pred.kind} cannot be checked against the page")

    async def describe(self, ref: str) -> ElementDescription:
        raw = await self._node(ref)
        entry = await self._entry(ref)
        tree = self._tree
        assert tree is not None
        return ElementDescription(
            ref=ref,
            role=amap.aria_role(raw),
            name=amap.display_name(raw),
            value=amap.value_of(raw),
            description=raw.description or None,
            text=amap.text_of(raw),
            placeholder=raw.attributes.get("placeholder-text"),
            states=amap.node_states(raw),
            box=amap.box_of(raw),
            native=amap.native_of(raw),
            path=_path_steps(tree, entry),
        )

    async def screenshot(self, path: str, mask: Sequence[str] | None = None) -> None:
        raise SessionError("the atspi adapter takes no screenshots (capabilities().screenshot)")

    async def state(self) -> SessionState:
        _backend, app = self._require_app()
        return SessionState(extras={"atspi.application": app.name})

    async def restore(self, state: SessionStateLike) -> None:
        value = session_state_from_dict(state)
        if value.url is not None or value.cookies or value.origins:
            raise SessionError("the atspi adapter cannot restore web session state")


# -- helpers ---------------------------------------------------------------------------


def _process_named(app: AppInfo, name: str) -> bool:
    """The registry's application name, or the process's command or executable name."""
    if app.name == name:
        return True
    if app.pid is None:
        return False
    proc = Path("/proc") / str(app.pid)
    with contextlib.suppress(OSError):
        if (proc / "comm").read_text().strip() == name:
            return True
    with contextlib.suppress(OSError):
        if os.path.basename(os.readlink(proc / "exe")) == name:
            return True
    return False


def _descends(pid: int, ancestor: int) -> bool:
    for _ in range(64):
        if pid == ancestor:
            return True
        try:
            stat = (Path("/proc") / str(pid) / "stat").read_text()
        except OSError:
            return False
        pid = int(stat.rsplit(")", 1)[1].split()[1])
        if pid <= 1:
            return False
    return False


_OUTSIDE_SIGNALS: Final = frozenset(
    s.value for s in (signal.SIGKILL, signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGQUIT)
)
"""The signals another process sends to end an application (SIGABRT, SIGSEGV and the like
come from its own code)."""


def _ended_how(code: int | None) -> str:
    """How a process with this return code ended: a negative one is the signal's."""
    if code is not None and code < 0:
        with contextlib.suppress(ValueError):
            return f"was killed by {signal.Signals(-code).name}"
    return f"exited with status {code}"


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


async def _exited(process: trio.Process, seconds: float) -> bool:
    with trio.move_on_after(seconds):
        await process.wait()
        return True
    return process.poll() is not None


def _has_focus(raw: amap.RawNode) -> bool:
    """Whether keys go to `raw`: it is focused, or it is the active window."""
    if raw.role_name in amap.WINDOW_ROLES and "active" in raw.state_set:
        return True
    return "focused" in raw.state_set


def _interactive(raw: amap.RawNode) -> bool:
    return raw.has("Action") or raw.has("EditableText") or raw.has("Value") or raw.has("Selection")


def _reparent(nodes: list[SnapshotNode], tree: _Tree) -> list[SnapshotNode]:
    """Depths and parents for a filtered node list: each node's parent is its nearest
    kept ancestor."""
    kept = {n.ref for n in nodes}
    parents = {e.ref: e.node.parent for e in tree.entries}
    depth: dict[str, int] = {}
    out = []
    for node in nodes:
        parent = node.parent
        while parent is not None and parent not in kept:
            parent = parents.get(parent)
        d = depth[parent] + 1 if parent is not None and parent in depth else 0
        depth[node.ref] = d
        out.append(attrs.evolve(node, parent=parent, depth=d))
    return out


def _own_text(entry: _Entry, tree: _Tree) -> str | None:
    """What a text candidate matches: the element's Text content, or the name of a leaf
    (a button's label, a label's words)."""
    if entry.raw.text is not None and not amap.is_text_input(entry.raw):
        return entry.raw.text
    if amap.is_text_input(entry.raw):
        return None
    if entry.ref in tree.children:
        return None
    return entry.node.name


def _by_path(tree: _Tree, steps: list[ControlStep], shown: list[_Entry]) -> list[str]:
    visible = {e.ref for e in shown}
    found = follow_control_path(
        steps,
        tree.children.get(tree.root.ref, []),
        lambda entry: tree.children.get(entry.ref, []),
        lambda entry: (
            amap.aria_role(entry.raw),
            entry.raw.role_name,
            amap.effective_role_name(entry.raw),
        ),
        lambda entry: entry.node.name,
    )
    return [e.ref for e in found if e.ref in visible]


def _hit(shown: list[_Entry], x: float, y: float) -> list[str]:
    best: _Entry | None = None
    for entry in shown:
        box = entry.node.box
        if box is None:
            continue
        bx, by, width, height = box
        inside = bx <= x < bx + width and by <= y < by + height
        if inside and (best is None or entry.node.depth >= best.node.depth):
            best = entry
    return [best.ref] if best is not None else []


def _option_index(options: list[amap.RawNode], value: str) -> int | None:
    keys: list[list[str | None]] = [
        [amap.display_name(o) for o in options],
        [amap.automation_id(o) for o in options],
        [(amap.display_name(o) or "").casefold() for o in options],
    ]
    wanted_keys = (value, value, value.casefold())
    for wanted, column in zip(wanted_keys, keys, strict=True):
        if wanted in column:
            return column.index(wanted)
    return None


def _path_steps(tree: _Tree, entry: _Entry) -> tuple[PathStep, ...]:
    chain: list[_Entry] = []
    current: _Entry | None = entry
    while current is not None and current.node.parent is not None:
        chain.append(current)
        current = tree.by_ref.get(current.node.parent)
    steps = []
    for item in reversed(chain):
        siblings = [
            s
            for s in tree.children.get(item.node.parent or "", [])
            if s.node.role == item.node.role
        ]
        steps.append(PathStep(item.node.role, item.node.name, siblings.index(item)))
    return tuple(steps)


def _check_node(pred: Predicate, raw: amap.RawNode) -> CheckResult:
    return check_element(
        pred,
        states=amap.node_states(raw),
        text=amap.text_of(raw) or "",
        value=amap.value_of(raw),
        checkable=amap.is_checkable(raw),
    )
