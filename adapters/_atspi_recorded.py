"""Recorded AT-SPI trees: a Backend that replays one, and the script that records them.

A recording is the JSON of the ``RawNode`` records the live reader produced for one
application (plus each actionable node's action names), saved under ``fixtures/``:
``atspi_gtk_fixture.json`` (our GTK fixture app) and ``atspi_widget_factory.json``
(gtk3-widget-factory). ``RecordedBackend`` serves such a tree to ``AtspiSurface`` and
logs every call it is asked to make, with just enough effect (text set, a check box
toggled, a selection made) for a test to see the surface's choices, so the mapping, refs,
state inversion, action choice and refusals are tested without a display.

Re-record (needs the Debian packages scripts/test.sh installs):
``.venv/bin/python -m semledger.adapters._atspi_recorded``
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import attrs
import trio

from ._atspi_dbus import LABELLED_BY, AppInfo, LiveBackend, StaleObjectError
from ._atspi_desktop import FIXTURES, GTK_FIXTURE, SYSTEM_PYTHON, WIDGET_FACTORY, PrivateDesktop
from ._atspi_map import ROOT_PATH, RawNode, state_names, state_words

RECORDINGS: Final[Mapping[str, Path]] = {
    "gtk_fixture": FIXTURES / "atspi_gtk_fixture.json",
    "widget_factory": FIXTURES / "atspi_widget_factory.json",
}


def load_recording(name: str) -> dict[str, Any]:
    """A recorded tree by name (``gtk_fixture``, ``widget_factory``)."""
    return dict(json.loads(RECORDINGS[name].read_text()))


class RecordedBackend:
    """A Backend over one recorded application; ``calls`` lists what it was asked."""

    def __init__(self, recording: Mapping[str, Any]) -> None:
        app = recording["application"]
        self.app = AppInfo(
            bus=str(app.get("bus", ":1.1")),
            name=str(app["name"]),
            pid=None,
            toolkit=str(app.get("toolkit", "")),
            windows=tuple((str(w[0]), str(w[1]), str(w[2])) for w in app.get("windows", ())),
        )
        self.nodes = [RawNode.from_json(n) for n in recording["nodes"]]
        self.calls: list[tuple[Any, ...]] = []
        self.keys: list[int] = []

    def _index(self, path: str) -> int:
        for index, node in enumerate(self.nodes):
            if node.path == path:
                return index
        raise StaleObjectError(f"{path} is gone")

    def _set(self, path: str, **changes: Any) -> None:
        index = self._index(path)
        self.nodes[index] = attrs.evolve(self.nodes[index], **changes)

    def remove(self, path: str) -> None:
        """Destroy an accessible and its subtree (what a test does to make a ref stale)."""
        index = self._index(path)
        depth = self.nodes[index].depth
        end = index + 1
        while end < len(self.nodes) and self.nodes[end].depth > depth:
            end += 1
        del self.nodes[index:end]

    def set_states(
        self, path: str, *, add: tuple[str, ...] = (), drop: tuple[str, ...] = ()
    ) -> None:
        node = self.nodes[self._index(path)]
        self._set(path, states=state_words((node.state_set | set(add)) - set(drop)))

    async def applications(self, bus: str | None = None) -> list[AppInfo]:
        return [self.app] if bus in {None, self.app.bus} else []

    async def read_tree(self, app: AppInfo, root: str = ROOT_PATH) -> list[RawNode]:
        start = self._index(root)
        base = self.nodes[start].depth
        names = {n.path: n.name for n in self.nodes}
        out = [attrs.evolve(self.nodes[start], depth=0, parent=None)]
        for node in self.nodes[start + 1 :]:
            if node.depth <= base:
                break
            label = _label(node, names)
            out.append(attrs.evolve(node, depth=node.depth - base, label=label))
        return out

    async def read_node(
        self, app: AppInfo, path: str, *, actions: bool = False
    ) -> RawNode | None:
        try:
            return self.nodes[self._index(path)]
        except StaleObjectError:
            return None

    async def actions(self, app: AppInfo, path: str) -> tuple[str, ...]:
        return self.nodes[self._index(path)].actions or ()

    async def do_action(self, app: AppInfo, path: str, index: int) -> bool:
        node = self.nodes[self._index(path)]
        names = node.actions or ()
        self.calls.append(("DoAction", path, index, names[index] if index < len(names) else None))
        if node.role_name in {"check box", "toggle button", "radio button"}:
            checked = "checked" in node.state_set
            self.set_states(
                path, add=() if checked else ("checked",), drop=("checked",) if checked else ()
            )
        return True

    async def set_text(self, app: AppInfo, path: str, text: str) -> bool:
        self.calls.append(("SetTextContents", path, text))
        self._set(path, text=text)
        return True

    async def insert_text(self, app: AppInfo, path: str, position: int, text: str) -> bool:
        self.calls.append(("InsertText", path, position, text))
        old = self.nodes[self._index(path)].text or ""
        self._set(path, text=old[:position] + text + old[position:])
        return True

    async def select_child(self, app: AppInfo, path: str, index: int) -> bool:
        self.calls.append(("SelectChild", path, index))
        return True

    async def deselect_child(self, app: AppInfo, path: str, index: int) -> bool:
        self.calls.append(("DeselectChild", path, index))
        return True

    async def clear_selection(self, app: AppInfo, path: str) -> bool:
        self.calls.append(("ClearSelection", path))
        return True

    async def index_in_parent(self, app: AppInfo, path: str) -> int:
        node = self.nodes[self._index(path)]
        siblings = [n.path for n in self.nodes if n.parent == node.parent]
        return siblings.index(path)

    async def select_row(self, app: AppInfo, table: str, index: int) -> bool:
        self.calls.append(("AddRowSelection", table, index))
        return True

    async def set_value(self, app: AppInfo, path: str, value: float) -> None:
        self.calls.append(("SetCurrentValue", path, value))
        self._set(path, value=value)

    async def value_range(self, app: AppInfo, path: str) -> tuple[float, float]:
        return 0.0, 100.0

    async def grab_focus(self, app: AppInfo, path: str) -> bool:
        self.calls.append(("GrabFocus", path))
        if "focusable" not in self.nodes[self._index(path)].state_set:
            return False
        for node in self.nodes:
            if "focused" in node.state_set:
                self.set_states(node.path, drop=("focused",))
        self.set_states(path, add=("focused",))
        return True

    async def scroll_to(self, app: AppInfo, path: str) -> bool:
        self.calls.append(("ScrollTo", path))
        return True

    async def relations(self, app: AppInfo, path: str) -> list[tuple[int, tuple[str, ...]]]:
        node = self.nodes[self._index(path)]
        raw = node.attributes.get("semledger:relations")
        return [(int(k), tuple(v)) for k, v in json.loads(raw)] if raw else []

    async def key(self, keysym: int) -> None:
        self.keys.append(keysym)

    async def aclose(self) -> None:
        return None


def _label(node: RawNode, names: Mapping[str, str]) -> str | None:
    """What the live reader reads for a form control: the names of its labels."""
    if not (node.has("EditableText") or node.has("Value") or node.role_name == "combo box"):
        return node.label
    raw = node.attributes.get("semledger:relations")
    labels = [
        names.get(path, "")
        for kind, paths in (json.loads(raw) if raw else ())
        if kind == LABELLED_BY
        for path in paths
    ]
    return " ".join(name for name in labels if name) or None


async def record(backend: LiveBackend, app: AppInfo) -> dict[str, Any]:
    """The recording of ``app``: its full tree (every node's details, hidden ones too),
    the action names of actionable nodes and the label relations, as JSON."""
    nodes = await backend.read_tree(app)
    out = []
    for node in nodes:
        full = await backend.read_node(app, node.path) or node
        extra: dict[str, Any] = {}
        if node.has("Action"):
            extra["actions"] = await backend.actions(app, node.path)
        attributes = dict(full.attributes)
        relations = [r for r in await backend.relations(app, node.path) if r[1]]
        if relations:
            attributes["semledger:relations"] = json.dumps(relations)
        out.append(
            attrs.evolve(
                node,
                accessible_id=full.accessible_id,
                attributes=attributes,
                text=full.text if node.text is None else node.text,
                value=full.value if node.value is None else node.value,
                **extra,
            ).to_json()
        )
    return {
        "recorded_with": "semledger.adapters._atspi_recorded",
        "application": {
            "name": app.name,
            "bus": app.bus,
            "toolkit": app.toolkit,
            "windows": [list(w) for w in app.windows],
        },
        "states_legend": sorted({s for n in nodes for s in state_names(n.states)}),
        "nodes": out,
    }


async def _record_all() -> None:
    from ._atspi import AtspiSurface
    from ._session import Launch, SessionInit

    programs = {
        "gtk_fixture": Launch(SYSTEM_PYTHON, (str(GTK_FIXTURE),)),
        "widget_factory": Launch(WIDGET_FACTORY),
    }
    with PrivateDesktop() as desktop:
        for name, launch in programs.items():
            surface = AtspiSurface(desktop.surface_config)
            await surface.open(SessionInit(launch=launch))
            try:
                await trio.sleep(0.5)
                live = surface._backend
                assert isinstance(live, LiveBackend)
                assert surface.application is not None
                document = await record(live, surface.application)
                RECORDINGS[name].write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
                print(f"{RECORDINGS[name]}: {len(document['nodes'])} nodes", file=sys.stderr)
            finally:
                await surface.close()


if __name__ == "__main__":
    trio.run(_record_all)
