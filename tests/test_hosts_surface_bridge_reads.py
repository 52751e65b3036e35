"""The surface bridge's reads of a large page cost what changed on it: an element that did
not change is compared with what it was and nothing more, and every answer is the one a
bridge building the whole page again would give."""

from __future__ import annotations

from typing import Any

import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from semledger.adapters import (
    DialogError,
    NavigationError,
    Snapshot,
    SnapshotNode,
    build_snapshot,
)
from semledger.hosts import SurfaceAgentHost
from semledger.runtime import Delta, Full, Rejection, SemanticsSnapshot, Unchanged
from semledger.runtime._wire import encode_read


def _page(names: list[str], *, focused: int | None = None) -> Snapshot:
    """A document holding a list of `names`, each item with a button in it."""
    nodes = [
        SnapshotNode(ref="doc", role="document", name="Page", depth=0),
        SnapshotNode(ref="list", role="list", name="Rows", depth=1, parent="doc"),
    ]
    for i, name in enumerate(names):
        nodes.append(
            SnapshotNode(
                ref=f"i{i}", role="listitem", name=name, depth=2, parent="list",
                native={"data-testid": f"item{i}", "rel:labelled_by": f"b{i}"},
            )
        )  # fmt: skip
        states: tuple[Any, ...] = ("focused",) if i == focused else ()
        nodes.append(
            SnapshotNode(ref=f"b{i}", role="button", name="Open", depth=3, parent=f"i{i}",
                         states=states)
        )  # fmt: skip
    return build_snapshot("doc", nodes)


class _Pages:
    """A surface showing `page` (or raising `error`) each time it is read."""

    def __init__(self, page: Snapshot) -> None:
        self.page = page
        self.error: Exception | None = None

    async def snapshot(self, **_options: Any) -> Snapshot:
        if self.error is not None:
            raise self.error
        return self.page

    async def act(self, *_args: Any, **_named: Any) -> Any:
        raise NotImplementedError


@pytest.fixture
def work(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many times the bridge did each piece of its per-element work."""
    import semledger.adapters._snapshot as snapshots
    import semledger.hosts._surface_host as bridge

    counts = {"_relations": 0, "_node": 0, "_node_problems": 0, "duplicate_issues": 0}

    def counted(module: Any, name: str) -> None:
        real = getattr(module, name)

        def counting(*args: Any, **named: Any) -> Any:
            counts[name] += 1
            return real(*args, **named)

        monkeypatch.setattr(module, name, counting)

    for name in ("_relations", "_node", "duplicate_issues"):
        counted(bridge, name)
    counted(snapshots, "_node_problems")
    return counts


async def test_a_page_read_again_unchanged_builds_and_checks_none_of_its_elements(
    work: dict[str, int],
) -> None:
    """A 10,000-item page cost 0.4 s a read when nothing on it changed: every element's node
    was made again from its place in the page (to be found the same) and every node
    compared with the tree's. An element equal to what it was is now that alone."""
    names = [f"row {i}" for i in range(50)]
    surface = _Pages(_page(names))
    host = SurfaceAgentHost(surface)  # type: ignore[arg-type]
    first = await host.read_semantics(None)
    assert isinstance(first, Full)
    surface.page = _page(names)  # equal nodes, as an adapter makes them anew
    work.update(dict.fromkeys(work, 0))
    assert await host.read_semantics(first.generation) == Unchanged(first.generation)
    assert work == dict.fromkeys(work, 0)


async def test_a_page_with_one_element_changed_builds_and_checks_that_one(
    work: dict[str, int],
) -> None:
    """A row renamed and the focus moved to a button: those two nodes are built, checked
    and compared, and no semantic id is counted again (none changed)."""
    names = [f"row {i}" for i in range(50)]
    surface = _Pages(_page(names))
    host = SurfaceAgentHost(surface)  # type: ignore[arg-type]
    first = await host.read_semantics(None)
    assert isinstance(first, Full)
    names[7] = "row seven"
    surface.page = _page(names, focused=3)
    work.update(dict.fromkeys(work, 0))
    delta = await host.read_semantics(first.generation)
    assert isinstance(delta, Delta)
    assert sorted(n.label or "" for n in delta.upserted) == ["Open", "row seven"]
    assert delta.focused == next(n.node_id for n in delta.upserted if n.label == "Open")
    assert work == {"_relations": 2, "_node": 2, "_node_problems": 2, "duplicate_issues": 0}


async def test_a_native_dialog_between_two_reads_of_a_page_brings_the_page_back_whole() -> None:
    names = [f"row {i}" for i in range(5)]
    surface = _Pages(_page(names))
    host = SurfaceAgentHost(surface)  # type: ignore[arg-type]
    first = await host.read_semantics(None)
    assert isinstance(first, Full)
    surface.error = DialogError("an alert is open", details={"dialog": "alert", "message": "Hi"})
    assert isinstance(await host.read_semantics(None), Full)
    surface.error = None
    surface.page = _page(names)
    back = await host.read_semantics(None)
    assert isinstance(back, Full)
    assert back.nodes == first.nodes


# ---- every answer is the one a bridge building the whole page again gives ---------------

_ROLES = ("listitem", "button", "list", "status", "document", "dialog", "generic", "option")
_STATES = ("focused", "checked", "hidden", "expanded")
_NATIVE = (
    ("data-testid", ("a", "b", "c")),
    ("live", ("polite", "off")),
    ("modal", ("true",)),
    ("runtime_role", ("button", "list_item")),
    ("rel:labelled_by", ("e1", "e2 e3", "nowhere")),
    ("atomic", ("true",)),
    ("scroll", ("0 10", "5 0")),
)


@st.composite
def _element(draw: st.DrawFn) -> dict[str, Any]:
    native: dict[str, str] = {}
    for key, values in _NATIVE:
        if draw(st.integers(0, 4)) == 0:
            native[key] = draw(st.sampled_from(values))
    states = draw(st.sets(st.sampled_from(_STATES)))
    return {
        "role": draw(st.sampled_from(_ROLES)),
        "name": draw(st.sampled_from(("x", "y", "z", None))),
        "value": draw(st.sampled_from((None, "1", "2"))),
        "states": tuple(sorted(states)),
        "native": native,
    }


@st.composite
def _step(draw: st.DrawFn, size: int) -> tuple[str, Any]:
    """One change to a page of `size` elements: most change one element in itself."""
    kind = draw(st.sampled_from(
        ("name", "name", "native", "native", "native", "state", "role", "focus", "element",
         "insert", "remove", "dialog", "loading")
    ))  # fmt: skip
    index = draw(st.integers(0, max(size - 1, 1)))
    if kind == "name":
        return kind, (index, draw(st.sampled_from(("x", "y", "w", None))))
    if kind == "native":
        key, values = draw(st.sampled_from(_NATIVE))
        return kind, (index, key, draw(st.sampled_from((None, *values))))
    if kind == "state":
        return kind, (index, draw(st.sampled_from(_STATES)))
    if kind == "role":
        return kind, (index, draw(st.sampled_from(_ROLES)))
    if kind in ("focus", "remove"):
        return kind, index
    if kind in ("element", "insert"):
        return kind, (index, draw(_element()), draw(st.booleans()))
    return kind, None


class _Model:
    """A page as a list of elements in tree order, each at its depth."""

    def __init__(self, elements: list[dict[str, Any]]) -> None:
        self.made = 0
        self.elements = [{**self._new(), "depth": 0, "role": "document"}]
        for element in elements:
            self.elements.append({**self._new(), **element, "depth": 1})

    def _new(self) -> dict[str, Any]:
        self.made += 1
        return {"ref": f"e{self.made}", "role": "generic", "name": None, "value": None,
                "states": (), "native": {}, "box": (1.0, 2.0, 3.0, 4.0)}  # fmt: skip

    def apply(self, kind: str, what: Any) -> None:
        elements = self.elements
        if kind == "name" and len(elements) > 1:
            index, name = what
            elements[index % len(elements)] = {**elements[index % len(elements)], "name": name}
        elif kind == "native":
            index, key, value = what
            element = elements[index % len(elements)]
            native = {k: v for k, v in element["native"].items() if k != key}
            if value is not None:
                native[key] = value
            elements[index % len(elements)] = {**element, "native": native}
        elif kind == "state":
            index, state = what
            element = elements[index % len(elements)]
            states = set(element["states"]) ^ {state}
            elements[index % len(elements)] = {**element, "states": tuple(sorted(states))}
        elif kind == "role" and len(elements) > 1:
            index, role = what
            at = index % (len(elements) - 1) + 1
            elements[at] = {**elements[at], "role": role}
        elif kind == "focus":
            for i, element in enumerate(elements):
                states = set(element["states"]) - {"focused"}
                if i == what % len(elements):
                    states.add("focused")
                elements[i] = {**element, "states": tuple(sorted(states))}
        elif kind == "element":
            index, element, _ = what
            at = index % len(elements)
            elements[at] = {**elements[at], **element, "depth": elements[at]["depth"]}
            if at == 0:
                elements[0]["role"] = "document"
        elif kind == "insert":
            index, element, child = what
            at = index % len(elements) + 1
            depth = elements[at - 1]["depth"] + (1 if child or at == 1 else 0)
            elements.insert(at, {**self._new(), **element, "depth": depth})
        elif kind == "remove" and len(elements) > 1:
            at = what % (len(elements) - 1) + 1
            end = at + 1
            while end < len(elements) and elements[end]["depth"] > elements[at]["depth"]:
                end += 1
            del elements[at:end]

    def snapshot(self) -> Snapshot:
        nodes = []
        ancestors: list[str] = []
        for element in self.elements:
            del ancestors[element["depth"] :]
            parent = ancestors[-1] if ancestors else None
            nodes.append(SnapshotNode(**element, parent=parent))
            ancestors.append(element["ref"])
        return build_snapshot(nodes[0].ref, nodes)


class _Rebuilding(SurfaceAgentHost):
    """The bridge building the whole page again at every read and comparing every node with
    the tree's: what it did before a read built on the last one."""

    async def refresh(self) -> SemanticsSnapshot:
        self._read = None
        self._derived = None
        return await super().refresh()


async def _both_read(steps: list[tuple[str, Any]], model: _Model) -> None:
    surfaces = (_Pages(model.snapshot()), _Pages(model.snapshot()))
    hosts = (SurfaceAgentHost(surfaces[0]), _Rebuilding(surfaces[1]))  # type: ignore[arg-type]
    generations: list[int] = [0]
    for kind, what in steps:
        error: Exception | None = None
        if kind == "dialog":
            error = DialogError("sure?", details={"dialog": "confirm", "message": "Sure?"})
        elif kind == "loading":
            error = NavigationError("loading", details={"pending": "https://example.org/"})
        else:
            model.apply(kind, what)
        page = model.snapshot()
        for surface in surfaces:
            surface.error, surface.page = error, page
        for since in (None, generations[-1], generations[max(len(generations) - 3, 0)]):
            answers = []
            for host in hosts:
                read = await host.read_semantics(since)
                answers.append(read if isinstance(read, Rejection) else encode_read(read))
            assert answers[0] == answers[1]
        assert hosts[0].journal.current == hosts[1].journal.current
        generations.append(hosts[0].generation)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_element(), min_size=1, max_size=8),
    st.data(),
)
def test_every_read_answers_as_a_bridge_building_the_whole_page_again(
    elements: list[dict[str, Any]], data: st.DataObject
) -> None:
    model = _Model(elements)
    count = data.draw(st.integers(1, 12))
    steps = [data.draw(_step(len(model.elements) + 3)) for _ in range(count)]
    trio.run(_both_read, steps, model)
