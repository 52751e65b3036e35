"""What the atspi adapter makes of an AT-SPI tree, with no D-Bus in sight.

Everything here is a pure function of ``RawNode`` records (what one accessible said over
the bus): the AT-SPI role and state enums, the role mapping (seed §3.4), names, values,
state normalisation with its inversions, which action an ``act`` chooses, and control
paths. The live reader (``_atspi_dbus``) and the recorded trees under ``fixtures/`` both
produce ``RawNode`` records, which is how the mapping is tested without a display.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import attrs

from ._errors import DataError
from ._roles import to_aria
from ._snapshot import NODE_STATES, NodeState, SnapshotNode

# The AtspiRole, AtspiStateType and AtspiRelationType enums of at-spi2-core (index = the
# number on the wire; names as Accessible.GetRoleName returns them).
ROLE_NAMES: Final[tuple[str, ...]] = (
    "invalid",
    "accelerator label",
    "alert",
    "animation",
    "arrow",
    "calendar",
    "canvas",
    "check box",
    "check menu item",
    "color chooser",
    "column header",
    "combo box",
    "date editor",
    "desktop icon",
    "desktop frame",
    "dial",
    "dialog",
    "directory pane",
    "drawing area",
    "file chooser",
    "filler",
    "focus traversable",
    "font chooser",
    "frame",
    "glass pane",
    "html container",
    "icon",
    "image",
    "internal frame",
    "label",
    "layered pane",
    "list",
    "list item",
    "menu",
    "menu bar",
    "menu item",
    "option pane",
    "page tab",
    "page tab list",
    "panel",
    "password text",
    "popup menu",
    "progress bar",
    "push button",
    "radio button",
    "radio menu item",
    "root pane",
    "row header",
    "scroll bar",
    "scroll pane",
    "separator",
    "slider",
    "spin button",
    "split pane",
    "status bar",
    "table",
    "table cell",
    "table column header",
    "table row header",
    "tearoff menu item",
    "terminal",
    "text",
    "toggle button",
    "tool bar",
    "tool tip",
    "tree",
    "tree table",
    "unknown",
    "viewport",
    "window",
    "extended",
    "header",
    "footer",
    "paragraph",
    "ruler",
    "application",
    "autocomplete",
    "editbar",
    "embedded",
    "entry",
    "chart",
    "caption",
    "document frame",
    "heading",
    "page",
    "section",
    "redundant object",
    "form",
    "link",
    "input method window",
    "table row",
    "tree item",
    "document spreadsheet",
    "document presentation",
    "document text",
    "document web",
    "document email",
    "comment",
    "list box",
    "grouping",
    "image map",
    "notification",
    "info bar",
    "level bar",
    "title bar",
    "block quote",
    "audio",
    "video",
    "definition",
    "article",
    "landmark",
    "log",
    "marquee",
    "math",
    "rating",
    "timer",
    "static",
    "math fraction",
    "math root",
    "subscript",
    "superscript",
    "description list",
    "description term",
    "description value",
    "footnote",
    "content deletion",
    "content insertion",
    "mark",
    "suggestion",
    "push button menu",
)
STATE_NAMES: Final[tuple[str, ...]] = (
    "invalid",
    "active",
    "armed",
    "busy",
    "checked",
    "collapsed",
    "defunct",
    "editable",
    "enabled",
    "expandable",
    "expanded",
    "focusable",
    "focused",
    "has-tooltip",
    "horizontal",
    "iconified",
    "modal",
    "multi-line",
    "multiselectable",
    "opaque",
    "pressed",
    "resizable",
    "selectable",
    "selected",
    "sensitive",
    "showing",
    "single-line",
    "stale",
    "transient",
    "vertical",
    "visible",
    "manages-descendants",
    "indeterminate",
    "required",
    "truncated",
    "animated",
    "invalid-entry",
    "supports-autocompletion",
    "selectable-text",
    "is-default",
    "visited",
    "checkable",
    "has-popup",
    "read-only",
)
RELATION_NAMES: Final[tuple[str, ...]] = (
    "null",
    "label-for",
    "labelled-by",
    "controller-for",
    "controlled-by",
    "member-of",
    "tooltip-for",
    "node-child-of",
    "node-parent-of",
    "extended",
    "flows-to",
    "flows-from",
    "subwindow-of",
    "embeds",
    "embedded-by",
    "popup-for",
    "parent-window-of",
    "description-for",
    "described-by",
    "details",
    "details-for",
    "error-message",
    "error-for",
)

ROLE_ALIASES: Final[Mapping[str, str]] = {"status bar": "statusbar"}
"""AT-SPI role names the seed's table spells differently."""

WINDOW_ROLES: Final[frozenset[str]] = frozenset(
    {"frame", "window", "dialog", "alert", "file chooser", "color chooser", "font chooser"}
)
"""Top-level roles that count as the application owning a window (seed §4)."""

CHECKABLE_ROLES: Final[frozenset[str]] = frozenset(
    {"check box", "radio button", "toggle button", "check menu item", "radio menu item"}
)
TEXT_INPUT_ROLES: Final[frozenset[str]] = frozenset(
    {"entry", "password text", "spin button", "editbar", "terminal"}
)
ROOT_PATH: Final = "/org/a11y/atspi/accessible/root"

CLICK_ACTIONS: Final[tuple[str, ...]] = ("click", "activate", "press", "toggle")
ACTION_PREFERENCES: Final[Mapping[str, tuple[str, ...]]] = {
    "click": CLICK_ACTIONS,
    "hoverAndClick": CLICK_ACTIONS,
    "doubleClick": ("activate", "click", "press", "toggle"),
    "submit": ("activate", "click", "press"),
    "setChecked": ("toggle", "click", "activate", "press"),
    "rightClick": ("menu", "popup", "show menu", "showmenu", "context menu"),
    "expand": ("expand or contract", "expand", "press", "click", "activate"),
}
"""Surface action -> the AT-SPI action names that perform it, most fitting first."""

QUIT_NAMES: Final[frozenset[str]] = frozenset({"quit", "exit", "close", "close window"})
"""Names of the controls ``quit`` activates as the application's own graceful route."""


def role_name(number: int) -> str:
    """The AT-SPI role name for the role number the Cache interface reports."""
    if 0 <= number < len(ROLE_NAMES):
        return ROLE_NAMES[number]
    return "unknown"


def role_number(name: str) -> int:
    """The inverse of ``role_name`` (DataError for a name AT-SPI does not have)."""
    try:
        return ROLE_NAMES.index(name)
    except ValueError:
        raise DataError(f"no AT-SPI role {name!r}", path="role") from None


def state_names(words: Sequence[int]) -> frozenset[str]:
    """The AT-SPI state names set in a state set (``au``: 32 states per word)."""
    names = set()
    for word_index, word in enumerate(words):
        for bit in range(32):
            if word >> bit & 1:
                number = word_index * 32 + bit
                if number < len(STATE_NAMES):
                    names.add(STATE_NAMES[number])
    return frozenset(names)


def state_words(names: Iterable[str]) -> tuple[int, int]:
    """The wire form (two words) of a set of state names."""
    words = [0, 0]
    for name in names:
        try:
            number = STATE_NAMES.index(name)
        except ValueError:
            raise DataError(f"no AT-SPI state {name!r}", path="states") from None
        words[number // 32] |= 1 << (number % 32)
    return words[0], words[1]


@attrs.frozen(kw_only=True)
class RawNode:
    """One accessible as read from the bus (or a recorded tree), in document order.

    ``role`` and ``states`` are the wire numbers; ``interfaces`` short names
    (``Action``, ``Text``); ``extents`` screen coordinates; ``text`` and ``value`` are
    read only for the nodes that have the Text or Value interface and need them;
    ``actions`` (the Action interface's names) only when someone asked for them."""

    path: str
    role: int
    depth: int
    parent: str | None = None
    name: str = ""
    description: str = ""
    states: tuple[int, int] = (0, 0)
    interfaces: tuple[str, ...] = ()
    child_count: int = 0
    accessible_id: str = ""
    attributes: Mapping[str, str] = attrs.field(factory=dict, hash=False)
    extents: tuple[int, int, int, int] | None = None
    text: str | None = None
    value: float | None = None
    bounds: tuple[float, float, float] | None = None
    """A Value's minimum, maximum and minimum increment (read with ``value``)."""
    actions: tuple[str, ...] | None = None
    level: int | None = None
    """A tree row's depth, 1 for a top row: GTK 3 gives a tree view's cells as one flat
    list, the hierarchy only as each expander cell's ``node-child-of`` relation."""
    label: str | None = None
    """The names of the accessibles it is labelled by (the ``labelled-by`` relation), read
    for form controls: GTK leaves an entry its mnemonic label points at nameless, and names
    a combo box by its selection."""

    @property
    def role_name(self) -> str:
        return role_name(self.role)

    @property
    def state_set(self) -> frozenset[str]:
        return state_names(self.states)

    def has(self, interface: str) -> bool:
        return interface in self.interfaces

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "role": self.role,
            "depth": self.depth,
            "parent": self.parent,
            "name": self.name,
            "description": self.description,
            "states": list(self.states),
            "interfaces": list(self.interfaces),
            "child_count": self.child_count,
            "accessible_id": self.accessible_id,
            "attributes": dict(self.attributes),
        }
        for key in ("extents", "text", "value", "bounds", "actions", "label", "level"):
            value = getattr(self, key)
            if value is not None:
                out[key] = list(value) if isinstance(value, tuple) else value
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RawNode:
        extents = data.get("extents")
        actions = data.get("actions")
        bounds = data.get("bounds")
        states = data.get("states", (0, 0))
        return cls(
            path=str(data["path"]),
            role=int(data["role"]),
            depth=int(data["depth"]),
            parent=data.get("parent"),
            name=str(data.get("name", "")),
            description=str(data.get("description", "")),
            states=(int(states[0]), int(states[1]) if len(states) > 1 else 0),
            interfaces=tuple(data.get("interfaces", ())),
            child_count=int(data.get("child_count", 0)),
            accessible_id=str(data.get("accessible_id", "")),
            attributes=dict(data.get("attributes", {})),
            extents=_box(extents),
            text=data.get("text"),
            value=data.get("value"),
            bounds=(float(bounds[0]), float(bounds[1]), float(bounds[2])) if bounds else None,
            actions=tuple(actions) if actions is not None else None,
            label=data.get("label"),
            level=data.get("level"),
        )


def _box(value: Any) -> tuple[int, int, int, int] | None:
    if value is None:
        return None
    x, y, width, height = (int(v) for v in value)
    return x, y, width, height


DIALOG_WINDOW_ROLES: Final = frozenset({"alert", "file chooser", "color chooser", "font chooser"})
"""Roles GTK gives a dialog window (a message dialog is an ``alert``), which inside a
window are a widget: a file chooser embedded in a form, a status alert."""


def value_settable(raw: RawNode) -> bool:
    """Whether ``type`` sets the node's Value: a spin button's or a slider's, which its
    user sets; a progress or level bar only shows one."""
    return raw.has("Value") and raw.role_name in {"spin button", "slider"}


def effective_role_name(raw: RawNode) -> str:
    """The AT-SPI role name the mapping uses: GTK 3 calls an entry ``text``; a ``text``
    that implements EditableText is an entry whether or not it is editable right now; a
    table cell drawn as a check box (it toggles) is one; a window of a dialog's role
    (`DIALOG_WINDOW_ROLES`) is a dialog."""
    name = raw.role_name
    if name == "text" and raw.has("EditableText"):
        return "entry"
    if name == "table cell" and is_checkable(raw):
        return "check box"
    if name in DIALOG_WINDOW_ROLES and raw.parent == ROOT_PATH:
        return "dialog"
    return ROLE_ALIASES.get(name, name)


def aria_role(raw: RawNode) -> str:
    """The ARIA role (seed §3.4); anything the table lacks is ``generic``."""
    return to_aria("atspi", effective_role_name(raw))


def is_text_input(raw: RawNode) -> bool:
    return effective_role_name(raw) in TEXT_INPUT_ROLES


def automation_id(raw: RawNode) -> str | None:
    """The accessible id: GTK's AccessibleId (the ``accessible-id`` attribute on older
    bridges), or Qt's ``id`` attribute."""
    for candidate in (
        raw.accessible_id,
        raw.attributes.get("accessible-id"),
        raw.attributes.get("id"),
    ):
        if candidate:
            return candidate
    return None


def display_name(raw: RawNode) -> str | None:
    """The text of its labels, as an ``aria-labelledby`` comes first on the web; then
    Accessible.Name (not a combo box's, which names its selection: its value), the
    description, the element's own text (never a text input's content, which is its
    value)."""
    if raw.label:
        return raw.label
    if raw.name and effective_role_name(raw) != "combo box":  # GTK and Qt: its selection
        return raw.name
    if raw.description:
        return raw.description
    if raw.text and not is_text_input(raw):
        return raw.text
    return None


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def value_of(raw: RawNode) -> str | None:
    """A text input's content, a Value's current value, a combo box's selection."""
    if is_text_input(raw):
        if raw.text is not None:
            return raw.text
        return _number(raw.value) if raw.value is not None else None
    if raw.value is not None:
        return _number(raw.value)
    if effective_role_name(raw) == "combo box" and raw.name:
        return raw.name
    return None


def text_of(raw: RawNode) -> str | None:
    """The element's text: its Text content, else its name."""
    if raw.text is not None:
        return raw.text
    return display_name(raw)


def is_checkable(raw: RawNode) -> bool:
    """A checkable role or state, or a table cell that toggles: GTK's check box cell in a
    tree view says only ``checked``, and only while it is."""
    return (
        raw.role_name in CHECKABLE_ROLES
        or "checkable" in raw.state_set
        or (is_toggle_cell(raw) and "toggle" in (a.lower() for a in raw.actions or ()))
    )


def is_toggle_cell(raw: RawNode) -> bool:
    """Whether `raw` may be a cell drawn as a check box, by what is cheap to know (a cell
    with actions and neither text nor an image): its action names tell."""
    return (
        raw.role_name == "table cell"
        and raw.has("Action")
        and not raw.has("Text")
        and not raw.has("Image")
    )


def is_checked(raw: RawNode) -> bool:
    states = raw.state_set
    return "checked" in states or (raw.role_name == "toggle button" and "pressed" in states)


def expands_by_keys(raw: RawNode) -> bool:
    """Whether `raw` is a tree row that ArrowRight expands and ArrowLeft collapses (a
    click on it selects it instead)."""
    return (
        raw.role_name in {"table cell", "tree item"}
        and "expandable" in raw.state_set
        and raw.has("Action")
    )


def is_hidden(raw: RawNode) -> bool:
    if raw.role_name == "application":
        return False
    states = raw.state_set
    return "showing" not in states or "visible" not in states


def node_states(raw: RawNode) -> tuple[NodeState, ...]:
    """The surface's states for one accessible, inversions included: not sensitive is
    ``disabled``, a text input that is not editable is ``readonly``, a checkable role is
    ``checked`` or ``unchecked``, an expandable one ``expanded`` or ``collapsed``, and a
    node that is not showing or not visible is ``hidden``. The application node (which
    AT-SPI gives no states) has none."""
    if raw.role_name == "application":
        return ()
    s = raw.state_set
    out: set[NodeState] = set()
    if "sensitive" not in s:
        out.add("disabled")
    if "read-only" in s or (is_text_input(raw) and "editable" not in s):
        out.add("readonly")
    if is_checkable(raw) and "indeterminate" not in s:
        out.add("checked" if is_checked(raw) else "unchecked")
    if "expandable" in s:
        out.add("expanded" if "expanded" in s else "collapsed")
    elif "expanded" in s:
        out.add("expanded")
    elif "collapsed" in s:
        out.add("collapsed")
    for name in ("focused", "selected", "required"):
        if name in s:
            out.add(name)
    if is_hidden(raw):
        out.add("hidden")
    return tuple(state for state in NODE_STATES if state in out)


def box_of(raw: RawNode) -> tuple[float, float, float, float] | None:
    if raw.extents is None or is_hidden(raw):
        return None
    x, y, width, height = raw.extents
    if width <= 0 or height <= 0:
        return None
    return float(x), float(y), float(width), float(height)


def native_of(raw: RawNode) -> dict[str, str]:
    """Adapter extras for candidate synthesis: the AT-SPI role, the automation id and
    the object attributes (``toolkit``, ``placeholder-text``); a Value's current value
    (``valuenow``) and, for a slider or spin button, that ``type`` sets it
    (``valuesettable``); and the states the snapshot's state words cannot say, under the
    keys the web adapter uses: ``password`` (a password text, whose typing the log
    redacts), ``checked: "mixed"`` (a checkable in GTK's inconsistent state, drawn as a
    dash whether or not it is also checked), ``multiline``, ``modal`` and ``invalid``;
    ``expand: "keys"`` on a tree row, which ArrowRight expands (a click selects it), and
    its ``level``; and ``runtime_role: "scroll_view"`` on a scroll pane, which ARIA can only
    call a ``group``: the bridge offers scroll on it."""
    out = {f"attr:{key}": value for key, value in raw.attributes.items()}
    out["atspiRole"] = raw.role_name
    if raw.role_name == "scroll pane":
        out["runtime_role"] = "scroll_view"
    ident = automation_id(raw)
    if ident:
        out["automationId"] = ident
    if raw.value is not None and math.isfinite(raw.value):
        out["valuenow"] = _number(raw.value)
    if raw.bounds is not None:
        low, high, step = raw.bounds
        if math.isfinite(low) and math.isfinite(high) and low <= high:
            out["valuemin"], out["valuemax"] = _number(low), _number(high)
        if math.isfinite(step) and step > 0:
            out["valuestep"] = _number(step)
    if value_settable(raw):
        out["valuesettable"] = "true"
    states = raw.state_set
    if raw.role_name == "password text":
        out["password"] = "true"
    if is_checkable(raw) and "indeterminate" in states:
        out["checked"] = "mixed"
    if expands_by_keys(raw):
        out["expand"] = "keys"
    if raw.level is not None:
        out["level"] = str(raw.level)
    if "multi-line" in states and is_text_input(raw):  # GTK labels say it too
        out["multiline"] = "true"
    for state, key in _NATIVE_STATES:
        if state in states:
            out[key] = "true"
    return out


_NATIVE_STATES: Final = (
    ("modal", "modal"),
    ("invalid-entry", "invalid"),
    ("invalid", "invalid"),
)


IN_SET_ROLES: Final = frozenset({"listitem", "option", "tab", "treeitem"})
"""The ARIA roles whose nodes are told their place among their siblings of the role."""


def scrolled_out(raw: RawNode) -> bool:
    """Visible but not showing: a row scrolled out of its list's view, which GTK keeps in
    the tree (and the agent's tree leaves out, as hidden)."""
    states = raw.state_set
    return "visible" in states and "showing" not in states


def showing_holders(raws: Sequence[RawNode]) -> list[RawNode]:
    """`raws` with each visible node that holds a showing one said showing too: GTK stops
    saying a scrolled window's viewport is showing once it is scrolled two pages down,
    while it says the list box and the rows it shows are, and the agent's tree left out
    the viewport, and all it holds, as hidden. `raws` are in document order."""
    out = list(raws)
    stack: list[int] = []  # the indices of the ancestors of the next node
    for index, raw in enumerate(raws):
        while stack and raws[stack[-1]].depth >= raw.depth:
            stack.pop()
        if not is_hidden(raw):
            for above in reversed(stack):
                held = out[above]
                if "visible" not in held.state_set or "showing" in held.state_set:
                    break
                out[above] = attrs.evolve(
                    held, states=state_words(held.state_set | {"showing"})
                )
        stack.append(index)
    return out


def set_places(raws: Sequence[RawNode]) -> dict[str, tuple[int, int]]:
    """The place (1-based position, set size) of each shown list item, option, tab and tree
    item among its parent's children of its role, scrolled-out ones counted, by path: for
    the sets in a scroll pane some of whose members are scrolled out, whose count the shown
    ones alone would understate (``[1 of 5]`` for a list of 30). Outside a scroll pane a
    member visible but not showing is one the application filtered out (a list box's
    filter), which is no member. `raws` are in document order."""
    sets: dict[tuple[int, str], list[RawNode]] = {}
    stack: list[tuple[int, int]] = []  # (index, depth) of the ancestors of the next node
    for index, raw in enumerate(raws):
        while stack and stack[-1][1] >= raw.depth:
            stack.pop()
        role = aria_role(raw)
        scrolled = any(raws[i].role_name == "scroll pane" for i, _depth in stack)
        if scrolled and role in IN_SET_ROLES:
            sets.setdefault((stack[-1][0], role), []).append(raw)
        stack.append((index, raw.depth))
    places = {}
    for members in sets.values():
        counted = [m for m in members if not is_hidden(m) or scrolled_out(m)]
        if len(counted) == sum(not is_hidden(m) for m in members):
            continue
        for position, member in enumerate(counted, 1):
            if not is_hidden(member):
                places[member.path] = (position, len(counted))
    return places


def to_snapshot_node(
    raw: RawNode,
    ref: str,
    parent: str | None,
    depth: int,
    place: tuple[int, int] | None = None,
) -> SnapshotNode:
    """`raw` as a snapshot node; `place` is its place in its set (``set_places``)."""
    native = native_of(raw)
    if place is not None:
        native["posinset"], native["setsize"] = str(place[0]), str(place[1])
    return SnapshotNode(
        ref=ref,
        role=aria_role(raw),
        name=display_name(raw),
        value=value_of(raw),
        description=raw.description or None,
        states=node_states(raw),
        box=box_of(raw),
        depth=depth,
        parent=parent,
        native=native,
    )


def choose_action(names: Sequence[str], action: str) -> int | None:
    """The index of the AT-SPI action that performs the surface ``action`` (by name, most
    fitting first, case-insensitive); None when the element has none of them."""
    wanted = ACTION_PREFERENCES.get(action, CLICK_ACTIONS)
    lowered = [name.lower() for name in names]
    for name in wanted:
        if name in lowered:
            return lowered.index(name)
    return None


def plain_label(text: str) -> str:
    """A control's label without mnemonic underscores, ellipsis and case."""
    return text.replace("_", "").replace("…", "").replace("...", "").strip().lower()
