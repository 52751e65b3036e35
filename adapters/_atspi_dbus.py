"""The atspi adapter's conversation with the AT-SPI registry, over jeepney.

Why jeepney: it is pure Python (no C extension, nothing to compile, already a dependency
for the runtime's desktop integration), it speaks D-Bus over Trio natively
(``jeepney.io.trio``), and it lets us pipeline. The alternatives are worse here: GI's
``Atspi`` (and pyatspi on top of it) exists only for the system interpreter, not in the
venv, and is synchronous, one blocking round trip per property; dbus-python and
dbus-next bring C dependencies or their own event loop.

How the tree is read (``LiveBackend.read_tree``), in as few round trips as the protocol
allows:

1. ``org.a11y.atspi.Cache.GetItems`` on the application: one message carrying every
   accessible the toolkit has registered, each with its parent, index, child count,
   interfaces, name, role number, description and states.
2. The cache is a cache: GTK creates accessibles lazily, so a node whose child count
   disagrees with the cached children (or whose children have no index, as menus' do)
   gets one ``GetChildren``, and children the cache never saw get their facts fetched;
   all of a level's calls go out at once.
3. One pipelined batch for what the cache does not carry: ``AccessibleId`` and
   ``GetAttributes`` for every node, ``GetExtents`` for the showing ones, the text of text
   inputs and of nameless Text nodes, and Value's ``CurrentValue``.

Pipelining: ``A11yBus.call_many`` writes up to a window of method calls before reading a
reply and matches replies by serial, so a batch costs about one round trip of latency
however many calls it holds.
"""

from __future__ import annotations

import contextlib
import math
import os
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Protocol

import attrs
import trio
from jeepney import DBusAddress, HeaderFields, Message, MessageType, message_bus, new_method_call
from jeepney.io.trio import DBusConnection, DBusRouter, open_dbus_connection

from ._atspi_desktop import BUS_LAUNCHER
from ._atspi_map import (
    RELATION_NAMES,
    ROLE_NAMES,
    ROOT_PATH,
    WINDOW_ROLES,
    RawNode,
    role_name,
    state_names,
)
from ._atspi_wire import method_call
from ._errors import SessionError, SurfaceGoneError, SurfaceTimeoutError

ATSPI: Final = "org.a11y.atspi."
ACCESSIBLE: Final = ATSPI + "Accessible"
PROPERTIES: Final = "org.freedesktop.DBus.Properties"
REGISTRY_BUS: Final = "org.a11y.atspi.Registry"
A11Y_BUS: Final = "org.a11y.Bus"
NULL_PATH: Final = "/org/a11y/atspi/null"
DEC_PATH: Final = "/org/a11y/atspi/registry/deviceeventcontroller"
SCREEN_COORDS: Final = 0
KEY_SYM: Final = 3
LISTENED_EVENT: Final = "window:activate"
LABELLED_BY: Final = RELATION_NAMES.index("labelled-by")
NODE_CHILD_OF: Final = RELATION_NAMES.index("node-child-of")
WINDOW: Final = 256
"""Method calls in flight at once on the accessibility bus."""
APPLICATION_DEADLINE: Final = 2.0
"""How long, at most, each application on the registry has to say what it is: one that
does not answer (stopped, or busy) is left out, not waited for as long as a call to the
session's own application is."""


class StaleObjectError(SessionError):
    """Raised by the backend when an accessible no longer exists (the application
    destroyed it, or exited); the surface turns it into a LocateError for a ref."""


class BusCallError(SessionError):
    """Raised when a method call on the accessibility bus answers with a D-Bus error
    other than the object being gone; the surface turns it into an ActionabilityError."""


class ApplicationGoneError(SessionError):
    """Raised when the application's bus name has no owner any more: not one accessible
    but the whole application is gone, which ends the session."""


_GONE_ERRORS: Final = frozenset(
    {
        "org.freedesktop.DBus.Error.UnknownObject",
        "org.freedesktop.DBus.Error.UnknownMethod",
        "org.freedesktop.DBus.Error.ServiceUnknown",
        "org.freedesktop.DBus.Error.NoReply",
        "org.freedesktop.DBus.Error.Disconnected",
        "org.freedesktop.DBus.Error.NameHasNoOwner",
    }
)


_APP_GONE: Final = frozenset(
    {
        "org.freedesktop.DBus.Error.ServiceUnknown",
        "org.freedesktop.DBus.Error.NameHasNoOwner",
        "org.freedesktop.DBus.Error.Disconnected",
    }
)


def error_name(reply: Message) -> str | None:
    if reply.header.message_type is MessageType.error:
        return str(reply.header.fields.get(HeaderFields.error_name, "error"))
    return None


def ok(reply: Message) -> bool:
    return reply.header.message_type is MessageType.method_return


@attrs.frozen
class AppInfo:
    """One application on the registry: its bus name, accessible name, process and the
    top-level window accessibles it owns (path, role name, name)."""

    bus: str
    name: str
    pid: int | None
    toolkit: str = ""
    windows: tuple[tuple[str, str, str], ...] = ()

    @property
    def owns_window(self) -> bool:
        return bool(self.windows)


class Backend(Protocol):
    """What the surface needs from an AT-SPI registry: the live one over D-Bus, or a
    recorded tree (``_atspi_recorded``)."""

    async def applications(self, bus: str | None = None) -> list[AppInfo]: ...
    async def read_tree(self, app: AppInfo, root: str = ROOT_PATH) -> list[RawNode]: ...
    async def read_node(
        self, app: AppInfo, path: str, *, actions: bool = False
    ) -> RawNode | None: ...
    async def actions(self, app: AppInfo, path: str) -> tuple[str, ...]: ...
    async def do_action(self, app: AppInfo, path: str, index: int) -> bool: ...
    async def set_text(self, app: AppInfo, path: str, text: str) -> bool: ...
    async def insert_text(self, app: AppInfo, path: str, position: int, text: str) -> bool: ...
    async def select_child(self, app: AppInfo, path: str, index: int) -> bool: ...
    async def deselect_child(self, app: AppInfo, path: str, index: int) -> bool: ...
    async def clear_selection(self, app: AppInfo, path: str) -> bool: ...
    async def index_in_parent(self, app: AppInfo, path: str) -> int: ...
    async def select_row(self, app: AppInfo, table: str, index: int) -> bool: ...
    async def set_value(self, app: AppInfo, path: str, value: float) -> None: ...
    async def value_range(self, app: AppInfo, path: str) -> tuple[float, float]: ...
    async def grab_focus(self, app: AppInfo, path: str) -> bool: ...
    async def scroll_to(self, app: AppInfo, path: str) -> bool: ...
    async def relations(self, app: AppInfo, path: str) -> list[tuple[int, tuple[str, ...]]]: ...
    async def key(self, keysym: int) -> None: ...
    async def aclose(self) -> None: ...


Call = tuple[str, str, str, str, str, tuple[Any, ...]]
"""A method call: path, destination, interface, member, signature, body."""


def _call(
    path: str,
    bus: str,
    interface: str,
    method: str,
    signature: str = "",
    body: tuple[Any, ...] = (),
) -> Call:
    return (path, bus, interface, method, signature, body)


def _get(path: str, bus: str, interface: str, prop: str) -> Call:
    return _call(path, bus, PROPERTIES, "Get", "ss", (interface, prop))


async def _launch_quietly(router: DBusRouter, session_bus: str) -> None:
    """Start the AT-SPI bus launcher on `session_bus` (`router`'s) if nothing owns
    ``org.a11y.Bus`` there yet, with its output (and that of the bus and registry it
    starts) away from ours.

    Started by the session bus instead, it inherits the bus daemon's stdout: under
    ``dbus-run-session``, the way to serve without a desktop, that is the MCP pipe the
    server answers on, and the registry writes a banner there. If the launcher cannot be
    started, or exits without owning the name, the session bus starts one as before.
    """
    if await _owned(router, A11Y_BUS) or not BUS_LAUNCHER.exists():
        return
    launcher = subprocess.Popen(
        [str(BUS_LAUNCHER), "--launch-immediately"],
        env={**os.environ, "DBUS_SESSION_BUS_ADDRESS": session_bus},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )
    while launcher.poll() is None and not await _owned(router, A11Y_BUS):
        await trio.sleep(0.02)


async def _owned(router: DBusRouter, name: str) -> bool:
    reply = await router.send_and_get_reply(message_bus.NameHasOwner(name))
    return ok(reply) and bool(reply.body[0])


class A11yBus:
    """One connection to the accessibility bus, with pipelined calls (one at a time)."""

    def __init__(self, conn: DBusConnection, timeout: float) -> None:
        self._conn = conn
        self._lock = trio.Lock()
        self._timeout = timeout
        self.lost: SessionError | None = None
        """Why the connection cannot be used any more; None while it can."""

    @classmethod
    async def connect(
        cls, session_bus: str | None = None, a11y_bus: str | None = None, timeout: float = 10.0
    ) -> A11yBus:
        """Find the accessibility bus through ``org.a11y.Bus.GetAddress`` on the session
        bus (``a11y_bus`` or ``$AT_SPI_BUS_ADDRESS`` skip that step) and connect."""
        address = a11y_bus or os.environ.get("AT_SPI_BUS_ADDRESS")
        try:
            with trio.fail_after(timeout):
                if not address:
                    session = session_bus or os.environ.get("DBUS_SESSION_BUS_ADDRESS")
                    if not session:
                        raise SessionError(
                            "no D-Bus session bus: run semledger inside a desktop session,"
                            " or under `dbus-run-session` with a display (Xvfb where there"
                            " is none), or set DBUS_SESSION_BUS_ADDRESS (from Python, pass"
                            " session_bus in the adapter config)"
                        )
                    conn = await open_dbus_connection(session)
                    try:
                        async with conn.router() as router:
                            await _launch_quietly(router, session)
                            reply = await router.send_and_get_reply(
                                new_method_call(
                                    DBusAddress("/org/a11y/bus", A11Y_BUS, A11Y_BUS),
                                    "GetAddress",
                                )
                            )
                    finally:
                        await conn.aclose()
                    if not ok(reply) or not reply.body[0]:
                        raise SessionError(
                            f"the session bus has no AT-SPI bus ({error_name(reply)});"
                            " is at-spi2-core running?"
                        )
                    address = str(reply.body[0])
                bus = cls(await open_dbus_connection(address), timeout)
                try:
                    await bus.announce()
                except BaseException:
                    with trio.CancelScope(shield=True):
                        await bus.aclose()
                    raise
                return bus
        except trio.TooSlowError:
            raise SessionError("timed out connecting to the AT-SPI bus") from None
        except (OSError, RuntimeError, ValueError, KeyError) as exc:
            raise SessionError(f"cannot connect to the AT-SPI bus: {exc}") from exc

    async def announce(self) -> None:
        """Register an event listener with the registry, as an assistive technology does:
        the ATK bridge activates (and serves its Cache) only once some listener exists.

        Raises `SessionError` if the registry refuses: no application would then show
        its tree, and an empty desktop is a worse answer than the reason."""
        reply = await self.call(
            new_method_call(
                DBusAddress("/org/a11y/atspi/registry", REGISTRY_BUS, ATSPI + "Registry"),
                "RegisterEvent",
                "sass",
                (LISTENED_EVENT, [], ""),
            )
        )
        if not ok(reply):
            raise SessionError(
                f"the AT-SPI registry refused our event listener ({error_name(reply)});"
                " is at-spi2-registryd running?"
            )

    async def call_many(self, messages: Sequence[Call | Message]) -> list[Message]:
        """Send every message, at most WINDOW in flight, and return the replies in order."""
        if not messages:
            return []
        if self.lost is not None:
            raise type(self.lost)(str(self.lost))
        results: list[Message | None] = [None] * len(messages)
        await self._call_all(messages, results)
        return [r for r in results if r is not None]

    async def call_answered(
        self, messages: Sequence[Call | Message], deadline: float
    ) -> list[Message | None]:
        """Send every message and return the replies that came within `deadline` seconds
        (or within the call timeout), None for the others: what the applications that
        answer say, when another may not."""
        if self.lost is not None:
            raise type(self.lost)(str(self.lost))
        results: list[Message | None] = [None] * len(messages)
        if messages:
            with trio.move_on_after(deadline), contextlib.suppress(SurfaceTimeoutError):
                await self._call_all(messages, results)
        return results

    async def _call_all(
        self, messages: Sequence[Call | Message], results: list[Message | None]
    ) -> None:
        async with self._lock:
            try:
                with trio.fail_after(self._timeout):
                    await self._pipeline(messages, results)
            except trio.TooSlowError:
                # The connection stays usable: late replies are read and dropped by the
                # calls after (serials are never reused), unless a write was cut short.
                raise SurfaceTimeoutError(
                    f"the application did not answer {len(messages)} AT-SPI calls within"
                    f" {self._timeout:.0f}s"
                ) from None
            except (OSError, trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                self.lost = SurfaceGoneError(f"the AT-SPI connection was lost: {exc}")
                raise SurfaceGoneError(str(self.lost)) from exc

    async def _pipeline(
        self, messages: Sequence[Call | Message], results: list[Message | None]
    ) -> None:
        """Write the calls in chunks (one socket write each: a write per message costs a
        context switch per message) and read replies in large reads, matching serials."""
        conn = self._conn
        sock = conn.socket
        parser = conn.parser
        pending: dict[int, int] = {}
        position = 0
        remaining = len(messages)
        while remaining:
            if position < len(messages) and len(pending) <= WINDOW // 2:
                chunk = []
                while position < len(messages) and len(pending) < WINDOW:
                    serial = next(conn.outgoing_serial)
                    pending[serial] = position
                    item = messages[position]
                    chunk.append(
                        item.serialise(serial)
                        if isinstance(item, Message)
                        else method_call(serial, *item)
                    )
                    position += 1
                await self._send_all(b"".join(chunk))
            message = parser.get_next_message()
            if message is None:
                data = await sock.recv(1 << 16)
                if not data:
                    raise trio.BrokenResourceError("the AT-SPI bus closed the connection")
                parser.add_data(data)
                continue
            index = pending.pop(message.header.fields.get(HeaderFields.reply_serial, -1), None)
            if index is not None:
                results[index] = message
                remaining -= 1

    async def _send_all(self, data: bytes) -> None:
        """Write all of `data`. Each ``send`` is all or nothing under cancellation, but a
        timeout between two of them leaves a message half written, which the bus would
        read on into the next one: the connection is then lost."""
        view = memoryview(data)
        while view:
            try:
                sent = await self._conn.socket.send(view)
            except trio.Cancelled:
                if len(view) < len(data):
                    self.lost = SessionError(
                        "the AT-SPI connection cannot be used any more: a call to the"
                        f" application was cut off half written after {self._timeout:.0f}s"
                    )
                raise
            view = view[sent:]

    async def call(self, message: Call | Message) -> Message:
        return (await self.call_many([message]))[0]

    async def aclose(self) -> None:
        await self._conn.aclose()


def _get_actions(path: str, bus: str) -> Call:
    return _call(path, bus, ATSPI + "Action", "GetActions")


def _action_names(actions: Iterable[tuple[str, str, str]]) -> tuple[str, ...]:
    return tuple(str(name) for name, _description, _keys in actions)


def _variant(value: Any) -> Any:
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str):
        return value[1]
    return value


def _short(interfaces: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted(i.removeprefix(ATSPI) for i in interfaces if i.startswith(ATSPI)))


@attrs.define
class _Info:
    role: int
    name: str
    description: str
    states: tuple[int, int]
    interfaces: tuple[str, ...]
    child_count: int
    parent: str | None
    index: int
    accessible_id: str | None = None


def _bounds(details: Mapping[str, Any]) -> tuple[float, float, float] | None:
    """A Value's minimum, maximum and minimum increment, when it answered all three."""
    low, high, step = (details.get(f"bound:{i}") for i in range(3))
    if low is None or high is None or step is None:
        return None
    return float(low), float(high), float(step)


def _label(
    relations: Iterable[tuple[int, Iterable[tuple[str, str]]]], info: Mapping[str, _Info]
) -> str | None:
    """The names of the accessibles a relation set says label its node, None if none."""
    names = [
        info[path].name
        for kind, targets in relations
        if kind == LABELLED_BY
        for _bus, path in targets
        if path in info and info[path].name
    ]
    return " ".join(names) or None


def _labelled_by(details: Iterable[Mapping[str, Any]]) -> set[str]:
    """The paths of every label the nodes' relation sets name."""
    return {
        path
        for more in details
        for kind, targets in more.get("labelled_by", ())
        if kind == LABELLED_BY
        for _bus, path in targets
    }


def _child_of(relations: Iterable[tuple[int, Iterable[tuple[str, str]]]]) -> str | None:
    """The tree row (or the tree) a ``node-child-of`` relation says its node is under."""
    for kind, targets in relations:
        if kind == NODE_CHILD_OF:
            for _bus, path in targets:
                return str(path)
    return None


def _parent_path(parent: Any) -> str | None:
    """The path of an accessible's parent, as its ``Parent`` property, a (bus, path) pair,
    gives it; None for none."""
    if not isinstance(parent, (tuple, list)) or len(parent) != 2:
        return None
    path = str(parent[1])
    return path if path and path != NULL_PATH else None


def _is_gtk(app: AppInfo) -> bool:
    return app.toolkit.lower() in {"gtk", "gail"}


def _words(states: Sequence[int]) -> tuple[int, int]:
    padded = [*states, 0, 0]
    return int(padded[0]), int(padded[1])


class LiveBackend:
    """The registry over jeepney (see the module docstring for the reading strategy)."""

    def __init__(self, bus: A11yBus) -> None:
        self.bus = bus

    @classmethod
    async def connect(
        cls, session_bus: str | None = None, a11y_bus: str | None = None, timeout: float = 10.0
    ) -> LiveBackend:
        return cls(await A11yBus.connect(session_bus, a11y_bus, timeout))

    async def aclose(self) -> None:
        await self.bus.aclose()

    async def _one(self, message: Call) -> tuple[Any, ...]:
        reply = await self.bus.call(message)
        name = error_name(reply)
        if name in _APP_GONE:
            raise ApplicationGoneError(f"its bus name {message[1]} has no owner ({name})")
        if name in _GONE_ERRORS:
            raise StaleObjectError(f"the accessible is gone ({name})")
        if name is not None:
            raise BusCallError(f"{name}: {reply.body[0] if reply.body else ''}")
        return tuple(reply.body)

    # -- applications -----------------------------------------------------------------

    async def applications(self, bus: str | None = None) -> list[AppInfo]:
        """Every application on the registry that answers within APPLICATION_DEADLINE,
        with its pid and its top-level windows; with `bus`, only the application of that
        bus name (with no windows once it is gone)."""
        everyone = bus is None
        if bus is not None:
            apps = [(bus, ROOT_PATH)]
        else:
            reply = await self.bus.call(
                _call(ROOT_PATH, REGISTRY_BUS, ACCESSIBLE, "GetChildren")
            )
            if not ok(reply):
                raise SessionError(f"the AT-SPI registry does not answer ({error_name(reply)})")
            apps = [(str(b), str(path)) for b, path in reply.body[0]]
        batch: list[Call] = []
        for bus, path in apps:
            batch += [
                _get(path, bus, ACCESSIBLE, "Name"),
                _call(
                    "/org/freedesktop/DBus",
                    "org.freedesktop.DBus",
                    "org.freedesktop.DBus",
                    "GetConnectionUnixProcessID",
                    "s",
                    (bus,),
                ),
                _call(path, bus, ACCESSIBLE, "GetChildren"),
                _get(path, bus, ATSPI + "Application", "ToolkitName"),
            ]
        replies = await self._ask(batch, everyone=everyone)
        found: list[tuple[str, str, int | None, str, list[tuple[str, str]]]] = []
        for number, (bus, _path) in enumerate(apps):
            name_r, pid_r, kids_r, toolkit_r = replies[4 * number : 4 * number + 4]
            if name_r is None or kids_r is None or toolkit_r is None:
                continue  # it does not answer: stopped, or busy
            name = str(_variant(name_r.body[0])) if ok(name_r) else ""
            pid = int(pid_r.body[0]) if pid_r is not None and ok(pid_r) else None
            toolkit = str(_variant(toolkit_r.body[0])) if ok(toolkit_r) else ""
            kids = [(str(b), str(p)) for b, p in kids_r.body[0]] if ok(kids_r) else []
            found.append((bus, name, pid, toolkit, kids))
        top = [(bus, p) for bus, _n, _pid, _t, kids in found for _b, p in kids]
        top_replies = await self._ask(
            [
                m
                for bus, p in top
                for m in (
                    _call(p, bus, ACCESSIBLE, "GetRole"),
                    _get(p, bus, ACCESSIBLE, "Name"),
                    _call(p, bus, ACCESSIBLE, "GetState"),
                )
            ],
            everyone=everyone,
        )
        facts: dict[tuple[str, str], tuple[str, str, frozenset[str]]] = {}
        for number, key in enumerate(top):
            role_r, name_r, state_r = top_replies[3 * number : 3 * number + 3]
            if role_r is not None and ok(role_r) and name_r is not None and state_r is not None:
                facts[key] = (
                    role_name(int(role_r.body[0])),
                    str(_variant(name_r.body[0])) if ok(name_r) else "",
                    state_names(state_r.body[0]) if ok(state_r) else frozenset(),
                )
        out = []
        for bus, name, pid, toolkit, kids in found:
            windows = []
            for b, p in kids:
                fact = facts.get((bus, p))
                if fact and fact[0] in WINDOW_ROLES and "defunct" not in fact[2] and b == bus:
                    windows.append((p, fact[0], fact[1]))
            out.append(AppInfo(bus, name, pid, toolkit, tuple(windows)))
        return out

    async def _ask(self, batch: Sequence[Call], *, everyone: bool) -> list[Message | None]:
        """The replies to `batch`: to calls to every application, those that came within
        APPLICATION_DEADLINE; to one application's, all of them (or a timeout)."""
        if everyone:
            return await self.bus.call_answered(batch, APPLICATION_DEADLINE)
        return list(await self.bus.call_many(batch))

    # -- the tree ---------------------------------------------------------------------

    async def read_tree(self, app: AppInfo, root: str = ROOT_PATH) -> list[RawNode]:
        """Every accessible at or below ``root``, in document order (see module doc)."""
        bus = app.bus
        reply = await self.bus.call(
            _call("/org/a11y/atspi/cache", bus, ATSPI + "Cache", "GetItems")
        )
        if error_name(reply) in _APP_GONE:
            raise ApplicationGoneError(f"its bus name {bus} has no owner ({error_name(reply)})")
        info: dict[str, _Info] = {}
        if ok(reply):
            for item in reply.body[0]:
                info.update(self._item(bus, item))
        children: dict[str, list[tuple[int, str]]] = {}
        for path, facts in info.items():
            if facts.parent is not None:
                children.setdefault(facts.parent, []).append((facts.index, path))
        ordered: dict[str, list[str]] = {}
        pending: list[str] = []
        for path, facts in info.items():
            kids = children.get(path, [])
            if (
                facts.child_count < 0
                or facts.child_count != len(kids)
                or any(index < 0 for index, _ in kids)
            ):
                pending.append(path)
            else:
                ordered[path] = [p for _, p in sorted(kids)]
        if root not in info:
            fetched = await self._fetch(bus, [root])
            info.update(fetched)
            if root not in info:
                raise StaleObjectError(f"{root} is gone")
            pending.append(root)
        await self._complete(bus, info, ordered, pending)

        walk: list[tuple[str, int, str | None]] = []
        seen: set[str] = set()
        stack: list[tuple[str, int, str | None]] = [(root, 0, None)]
        while stack:
            path, depth, parent = stack.pop()
            if path in seen or path not in info:
                continue
            seen.add(path)
            walk.append((path, depth, parent))
            stack.extend((kid, depth + 1, path) for kid in reversed(ordered.get(path, [])))
        return await self._details(bus, info, walk, attributes=not _is_gtk(app))

    @staticmethod
    def _item(bus: str, item: Sequence[Any]) -> dict[str, _Info]:
        (_b, path), _app, (_pb, parent), *rest = item
        if len(rest) == 7:  # at-spi2 >= 2.30: index, child count, interfaces, name, ...
            index, count, interfaces, name, role, description, states = rest
        else:  # older bridges list the children instead of an index and a count
            kids, interfaces, name, role, description, states = rest
            index, count = -1, len(kids)
        parent_path = _parent_path((_pb, parent))
        return {
            str(path): _Info(
                role=int(role),
                name=str(name),
                description=str(description),
                states=_words(states),
                interfaces=_short(interfaces),
                child_count=int(count),
                parent=parent_path,
                index=int(index),
            )
        }

    async def _fetch(self, bus: str, paths: Sequence[str]) -> dict[str, _Info]:
        """The cache's facts for accessibles the cache did not have."""
        batch = [
            m
            for p in paths
            for m in (
                _call(p, bus, ACCESSIBLE, "GetRole"),
                _call(p, bus, ACCESSIBLE, "GetState"),
                _call(p, bus, ACCESSIBLE, "GetInterfaces"),
                _call(p, bus, PROPERTIES, "GetAll", "s", (ACCESSIBLE,)),
            )
        ]
        replies = await self.bus.call_many(batch)
        out = {}
        for number, path in enumerate(paths):
            role_r, state_r, iface_r, all_r = replies[4 * number : 4 * number + 4]
            if (name := error_name(role_r)) in _APP_GONE:
                raise ApplicationGoneError(f"its bus name {bus} has no owner ({name})")
            if not ok(role_r):
                continue
            props = {k: _variant(v) for k, v in all_r.body[0].items()} if ok(all_r) else {}
            out[path] = _Info(
                role=int(role_r.body[0]),
                name=str(props.get("Name", "")),
                description=str(props.get("Description", "")),
                states=_words(state_r.body[0]) if ok(state_r) else (0, 0),
                interfaces=_short(iface_r.body[0]) if ok(iface_r) else (),
                child_count=int(props.get("ChildCount", 0)),
                parent=_parent_path(props.get("Parent")),
                index=-1,
                accessible_id=str(props.get("AccessibleId", "")),
            )
        return out

    async def _complete(
        self, bus: str, info: dict[str, _Info], ordered: dict[str, list[str]], pending: list[str]
    ) -> None:
        """Ask GetChildren of every node the cache got wrong, level by level, fetching
        the facts of children it never had."""
        while pending:
            replies = await self.bus.call_many(
                [_call(p, bus, ACCESSIBLE, "GetChildren") for p in pending]
            )
            unknown: list[str] = []
            for path, reply in zip(pending, replies, strict=True):
                kids = [str(p) for b, p in reply.body[0] if b == bus] if ok(reply) else []
                ordered[path] = kids
                unknown += [k for k in kids if k not in info]
            fetched = await self._fetch(bus, unknown)
            info.update(fetched)
            pending = [p for p, facts in fetched.items() if facts.child_count != 0]

    async def _details(
        self,
        bus: str,
        info: Mapping[str, _Info],
        walk: Sequence[tuple[str, int, str | None]],
        *,
        attributes: bool,
        everything: bool = False,
        actions: bool = False,
    ) -> list[RawNode]:
        """The facts the cache does not carry, in one pipelined batch: for the nodes that
        are showing (hidden ones keep the cache's facts, unless ``everything``), and the
        object attributes only when the toolkit has no AccessibleId (GTK has).

        ``everything`` is one node read whole, as ``read_node`` does: with no tree around
        it, a row has no level, and the labels it names are read after the batch."""
        batch: list[Call] = []
        plan: list[tuple[int, str, int]] = []  # (node number, what, message index)
        trees = set() if everything else {
            parent
            for path, _depth, parent in walk
            if "expandable" in state_names(info[path].states)
            and role_name(info[path].role) == "table cell"
        }
        for number, (path, _depth, parent) in enumerate(walk):
            facts = info[path]
            ifaces = facts.interfaces
            showing = {"showing", "visible"} <= state_names(facts.states)
            if not (showing or everything):
                continue
            wants = []
            if facts.accessible_id is None:
                wants.append(("id", _get(path, bus, ACCESSIBLE, "AccessibleId")))
            if attributes or everything:
                wants.append(("attributes", _call(path, bus, ACCESSIBLE, "GetAttributes")))
            if "Component" in ifaces and showing:
                wants.append(
                    (
                        "extents",
                        _call(path, bus, ATSPI + "Component", "GetExtents", "u", (SCREEN_COORDS,)),
                    )
                )
            role = ROLE_NAMES[facts.role] if 0 <= facts.role < len(ROLE_NAMES) else ""
            if "Text" in ifaces and (
                "EditableText" in ifaces
                or not facts.name
                or role in {"password text", "spin button"}
            ):
                wants.append(("text", _call(path, bus, ATSPI + "Text", "GetText", "ii", (0, -1))))
            if "Value" in ifaces:
                wants.append(("value", _get(path, bus, ATSPI + "Value", "CurrentValue")))
                wants += [
                    (f"bound:{i}", _get(path, bus, ATSPI + "Value", prop))
                    for i, prop in enumerate(("MinimumValue", "MaximumValue", "MinimumIncrement"))
                ]
            if showing and (
                "EditableText" in ifaces
                or "Value" in ifaces
                or role == "combo box"
                or parent in trees  # a tree's rows, for their level
            ):
                wants.append(("relations", _call(path, bus, ACCESSIBLE, "GetRelationSet")))
            bare_cell = role == "table cell" and not {"Text", "Image"} & set(ifaces)
            if "Action" in ifaces and (actions or (showing and bare_cell)):
                # A cell drawn as a check box is known by its Toggle action alone.
                wants.append(("actions", _get_actions(path, bus)))
            for what, message in wants:
                plan.append((number, what, len(batch)))
                batch.append(message)
        replies = await self.bus.call_many(batch)
        extra: list[dict[str, Any]] = [{} for _ in walk]
        for number, what, index in plan:
            reply = replies[index]
            if not ok(reply):
                continue
            value = _variant(reply.body[0])
            if what == "attributes":
                value = {str(k): str(v) for k, v in value.items()}
            elif what == "extents":
                value = tuple(int(v) for v in value)
            elif what == "value" or what.startswith("bound:"):
                value = float(value) if value is not None and math.isfinite(value) else None
            elif what == "actions":
                value = _action_names(value)
            elif what == "relations":
                extra[number]["child_of"] = _child_of(value)
                what = "labelled_by"
            extra[number][what] = value
        labels = _labelled_by(extra)
        if unread := sorted(labels - info.keys()):
            info = {**info, **await self._fetch(bus, unread)}
        levels = await self._levels(
            bus,
            {walk[n][0]: more["child_of"] for n, more in enumerate(extra) if "child_of" in more},
            {path for path, _depth, parent in walk if parent in trees},
        )
        nodes = []
        for number, (path, depth, parent) in enumerate(walk):
            facts = info[path]
            more = extra[number]
            nodes.append(
                RawNode(
                    path=path,
                    role=facts.role,
                    depth=depth,
                    parent=parent,
                    name=facts.name,
                    description=facts.description,
                    states=facts.states,
                    interfaces=facts.interfaces,
                    child_count=facts.child_count,
                    accessible_id=str(more.get("id", facts.accessible_id or "") or ""),
                    attributes=more.get("attributes", {}),
                    extents=more.get("extents"),
                    text=more.get("text"),
                    value=more.get("value"),
                    bounds=_bounds(more),
                    actions=more.get("actions"),
                    label=_label(more.get("labelled_by", ()), info),
                    # A cell of several renderers holds a cell for each: theirs is its.
                    level=levels.get(path, levels.get(parent or "")),
                )
            )
        return nodes

    async def _levels(
        self, bus: str, child_of: dict[str, str | None], rows: set[str]
    ) -> dict[str, int]:
        """Each tree row's depth, from the row each is under (`child_of`, read for the
        showing ones): 1 under the tree itself. A row under one that is not showing (it
        is scrolled away) has that one's relations read too, a level per round trip."""
        while missing := sorted(
            {above for above in child_of.values() if above in rows and above not in child_of}
        ):
            replies = await self.bus.call_many(
                [_call(path, bus, ACCESSIBLE, "GetRelationSet") for path in missing]
            )
            for path, reply in zip(missing, replies, strict=True):
                child_of[path] = _child_of(reply.body[0]) if ok(reply) else None
        levels: dict[str, int] = {}
        for start in child_of:
            chain = [start]  # up to a row whose level is known, or the tree
            while (above := child_of.get(chain[-1])) in child_of and above not in levels:
                if above in chain:  # a cycle, which no toolkit should make
                    break
                chain.append(above)
            above = child_of.get(chain[-1])
            level = levels.get(above, 0) if above is not None else 0
            for path in reversed(chain):
                level += 1
                levels[path] = level
        return {path: level for path, level in levels.items() if child_of[path] is not None}

    async def read_node(
        self, app: AppInfo, path: str, *, actions: bool = False
    ) -> RawNode | None:
        """One accessible's current facts (two round trips), None when it is gone (an
        ApplicationGoneError when its application is); with
        ``actions``, its action names too (in the same batch: for a node about to be acted
        on, while a poll or a read does without)."""
        fetched = await self._fetch(app.bus, [path])
        if path not in fetched:
            return None
        facts = fetched[path]
        if "defunct" in state_names(facts.states):
            return None
        return (
            await self._details(
                app.bus,
                fetched,
                [(path, 0, facts.parent)],
                attributes=True,
                everything=True,
                actions=actions,
            )
        )[0]

    # -- acting -----------------------------------------------------------------------

    async def actions(self, app: AppInfo, path: str) -> tuple[str, ...]:
        (actions,) = await self._one(_get_actions(path, app.bus))
        return _action_names(actions)

    async def do_action(self, app: AppInfo, path: str, index: int) -> bool:
        (done,) = await self._one(_call(path, app.bus, ATSPI + "Action", "DoAction", "i", (index,)))
        return bool(done)

    async def set_text(self, app: AppInfo, path: str, text: str) -> bool:
        (done,) = await self._one(
            _call(path, app.bus, ATSPI + "EditableText", "SetTextContents", "s", (text,))
        )
        return bool(done)

    async def insert_text(self, app: AppInfo, path: str, position: int, text: str) -> bool:
        (done,) = await self._one(
            _call(
                path,
                app.bus,
                ATSPI + "EditableText",
                "InsertText",
                "isi",
                (position, text, len(text.encode("utf-8"))),
            )
        )
        return bool(done)

    async def select_child(self, app: AppInfo, path: str, index: int) -> bool:
        (done,) = await self._one(
            _call(path, app.bus, ATSPI + "Selection", "SelectChild", "i", (index,))
        )
        return bool(done)

    async def deselect_child(self, app: AppInfo, path: str, index: int) -> bool:
        (done,) = await self._one(
            _call(path, app.bus, ATSPI + "Selection", "DeselectChild", "i", (index,))
        )
        return bool(done)

    async def clear_selection(self, app: AppInfo, path: str) -> bool:
        (done,) = await self._one(_call(path, app.bus, ATSPI + "Selection", "ClearSelection"))
        return bool(done)

    async def index_in_parent(self, app: AppInfo, path: str) -> int:
        (index,) = await self._one(_call(path, app.bus, ACCESSIBLE, "GetIndexInParent"))
        return int(index)

    async def select_row(self, app: AppInfo, table: str, index: int) -> bool:
        """Select the row of the table's child `index` (a cell), as a click on it does."""
        (row,) = await self._one(
            _call(table, app.bus, ATSPI + "Table", "GetRowAtIndex", "i", (index,))
        )
        if int(row) < 0:
            return False
        (done,) = await self._one(
            _call(table, app.bus, ATSPI + "Table", "AddRowSelection", "i", (int(row),))
        )
        return bool(done)

    async def set_value(self, app: AppInfo, path: str, value: float) -> None:
        await self._one(
            _call(
                path,
                app.bus,
                PROPERTIES,
                "Set",
                "ssv",
                (ATSPI + "Value", "CurrentValue", ("d", float(value))),
            )
        )

    async def value_range(self, app: AppInfo, path: str) -> tuple[float, float]:
        low, high = await self.bus.call_many(
            [
                _get(path, app.bus, ATSPI + "Value", "MinimumValue"),
                _get(path, app.bus, ATSPI + "Value", "MaximumValue"),
            ]
        )
        if not (ok(low) and ok(high)):
            raise StaleObjectError("the accessible has no value range")
        return float(_variant(low.body[0])), float(_variant(high.body[0]))

    async def grab_focus(self, app: AppInfo, path: str) -> bool:
        (done,) = await self._one(_call(path, app.bus, ATSPI + "Component", "GrabFocus"))
        return bool(done)

    async def scroll_to(self, app: AppInfo, path: str) -> bool:
        reply = await self.bus.call(
            _call(path, app.bus, ATSPI + "Component", "ScrollTo", "u", (6,))  # ANYWHERE
        )
        return ok(reply) and bool(reply.body[0])

    async def relations(self, app: AppInfo, path: str) -> list[tuple[int, tuple[str, ...]]]:
        (relations,) = await self._one(_call(path, app.bus, ACCESSIBLE, "GetRelationSet"))
        return [(int(kind), tuple(str(p) for _b, p in targets)) for kind, targets in relations]

    async def key(self, keysym: int) -> None:
        await self._one(
            _call(
                DEC_PATH,
                REGISTRY_BUS,
                ATSPI + "DeviceEventController",
                "GenerateKeyboardEvent",
                "isu",
                (keysym, "", KEY_SYM),
            )
        )
