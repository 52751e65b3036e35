"""The MCP bridge: the two agent operations over any AgentSurface.

``SurfaceAgentHost`` satisfies ``semledger.hosts.AgentHost`` (structurally; adapters do not
import hosts), so ``semledger serve --adapter NAME`` serves a web page or a desktop
application through the same router and tools as a semledger app:

- ``read_semantics`` answers Full, Delta or Unchanged from a journal of committed snapshots
  the bridge builds from surface snapshots. A node id is allocated per ref the first time the
  surface shows it and kept for as long as the surface keeps that ref (the surface's word
  that the element is the same), through the element leaving the page and coming back (the
  page behind a modal, an opener while its popup is shown, a tab panel hidden): the last
  ``REMEMBERED_REFS`` elements to leave are remembered. The generation advances when, and
  only when, the converted tree changes: structure, a value, a state, a name, a frame or the
  focus.
- Roles go back from ARIA to semledger's wire roles best-effort (``native["runtime_role"]``
  first, then the reverse of the runtime role table, then a few near synonyms); anything
  else is ``group``. Semantic ids come from ``native["automationId"]`` (``testid`` or ``id``
  as fallbacks) when they are valid semantic ids. States beyond the surface's normalised
  ones come from ``native`` when an adapter reports them there (``invalid``, ``pressed``,
  ``checked: "mixed"``, ``modal``, ``multiline``, ``password``), and so do a heading's
  ``level`` and a link's or the page's ``url``. An element the page made anew keeps the
  node id of the one it replaced when their semantic id says they are one (a list rendered
  again) and both are in one document (under the same ``document`` node, or the root): a
  navigation makes a new document, whose elements get new node ids whatever their HTML
  ids, so that an id an agent holds never acts on the next page. A node's frame is in the
  document's coordinates: the surface's box plus how far the root says the page is scrolled
  (``native["scroll"]``), so a scroll changes no frame.
- Each node offers the actions its surface says it takes (``native["runtime_actions"]``: a
  runtime app's own, but set_selection, which no surface call sets); where it says
  nothing, those its role and states imply (no set_text on a read-only or disabled text
  field, no submit on a multiline one, where Enter starts a new line; set_text
  on a combo box one types into, ``native["editable"]``; no select on a row or cell the
  surface says has no selection, ``native["selectable"] == "false"``: a static table's);
  focus exactly where the surface says the element takes the focus (``native["focusable"]``,
  by its role where it says nothing), and no increment or decrement on a range that takes
  none, which the keys they press could not reach;
  ``perform_action`` checks them in the runtime's order (closed, generation, target,
  disabled, capability) against the bridge's own generation, then maps the action onto
  ``act`` (activate -> click, set_text -> clear and type, submit -> press Enter (submit on
  a form), focus -> focus, select -> click (selectOption on the ``<select>`` for a native
  option, which a click cannot choose, adding it to the selection of a ``<select multiple>``,
  ``native["multiselectable"]``; activate, offered on such an option, ``native["multiple"]``,
  toggles it there, as a ctrl-click does), expand/collapse -> click (press ArrowRight or ArrowLeft
  on a row the surface says keys expand, ``native["expand"] == "keys"``: a desktop tree
  row, which a click selects; collapse on a combo box -> press Escape, as a click lands in
  its text, and expand on one a user types into -> press Alt+ArrowDown, then ArrowDown
  while it stays collapsed, ``handler_rejected`` if it is collapsed after both), dismiss ->
  press Escape (closeWindow on a page's document,
  offered while the session has another window, ``native["windows"]``; not offered on a
  ``<dialog>`` Escape does not close, one shown without ``showModal`` whose ``closedby``,
  ``native["closedby"]``, is not ``any`` or ``closerequest``: its own button closes it),
  increment/decrement -> press ArrowUp/ArrowDown (type the value one step on, within the
  bounds, on a desktop range the surface reports settable and shows the value and step of:
  a GTK scale takes ArrowUp as a step towards its start), show_menu -> rightClick, scroll -> press
  PageDown/PageUp, set_numeric_value -> type the number, on a range the surface reports
  settable (``native["valuesettable"]``) and never outside the bounds it shows).
  A range's ``numeric`` comes from ``native`` too (``valuenow``, ``valuemin``, ...). A
  key pressed on a node goes to it (the surface's ``press`` on its ref): one that cannot
  reach it, on a dialog with nothing in it that takes the focus, is the surface's refusal,
  ``handler_rejected``, never a key to whatever has the focus.
  A surface error becomes the rejection it stands for
  (LocateError -> target_not_found, ActionabilityError -> handler_rejected or the code it
  carries, SessionError -> host_closed, closing the host), and changes nothing in the
  bridge's generation. One refusing the action's first step as stale
  (``details["reason"] == "stale"``: the runtime adapter's, when an effect of the app's
  changed it since the read) did nothing: the request is read and judged again, at most
  three times, an exact precondition then failing as ``stale_generation``; the last time, or
  at a later step, it is ``handler_rejected`` "the application changed on its own as the
  action was being done: read again". Its message names elements by node id, never by the
  surface's refs, and the action by the agent's kind (``select``, not ``selectOption``). One
  saying the page went to another document as the action ran (``details["navigated"]``), or
  that a later step of an action done in several (set_text: clear, then type) found the page
  loading another, is ``handler_rejected`` "the page navigated to URL during the action (a focus or
  hover handler of the page's may have run): read again": what the action began (a focus
  handler that navigates) may have changed the page, which the next read shows.
  A surface that cannot be read (any other SurfaceError from ``snapshot``: a script error,
  a page that keeps navigating) is ``handler_rejected`` with ``details["failure"]``, for a
  read or before an action (nothing done); after an action the receipt says
  ``pending_work``: done, not yet seen, read again. So does the receipt of an action after
  which the surface's session ended (a Quit button, an application that crashed), whose
  read answers ``host_closed``, naming why.
  A surface whose page is loading its next document (a NavigationError with
  ``details["pending"]``, which the web adapter raises instead of waiting on the server) is
  read as the tree last committed with its root ``busy`` until that document arrives; an
  action meanwhile is the surface's rejection (nothing done), and the receipt of the action
  that started the navigation says ``pending_work``. So does the receipt of an action whose
  requests (``ActResult.pending``: a page's fetch) were unanswered when it returned.
  An action that opened a window (``ActResult.opened``: a link to a new tab, a popup) is
  followed by switchWindow to it, as a browser shows it: the tree is then the new page's.
  A malformed snapshot (``structure_problems``: a forest, a depth that jumps) is a DataError
  from ``snapshot``, read as above: no node is dropped without a word.
- An adapter that breaks the contract (raises what is no SurfaceError, returns what it may
  not: an ``act`` that returns None) crashes the session, as an application that raises
  crashes a runtime one: the call, and every later one, is answered ``host_closed`` naming
  the error (``AdapterFailedError``, which ``crash`` keeps), and the host is closed.
- A native dialog (alert, confirm, prompt) the surface reports open, by raising DialogError
  from ``snapshot``, is the whole tree while it is open, as a runtime modal is: one modal
  ``dialog`` node labelled with the message, its type as description, offering submit
  (accept), dismiss and, for a prompt, set_text (the node's value, the text submit accepts
  with; the prompt's default until then), mapped onto ``act("dialog")``. A target on the
  page behind it is ``target_not_found`` naming the dialog; once it is answered the page is
  back, with the ids it had.
- A modal element of the page (a ``<dialog>`` opened with ``showModal``) is the root while
  it is shown, as a runtime's modal node: the page behind it takes no input, so it is out of
  reach (``target_not_found``), and its nodes keep their ids for when the dialog closes.
- A live region back in the tree (from behind a modal, once a native dialog is answered)
  announces what changed in it while it was out, as if it had been there: nothing when it
  says all it said when it left, though the page wrote it again.
- A bridge can continue a session another one served (``journal``, ``next_node_id``): its
  generations and node ids go on from there, never back.
"""

from __future__ import annotations

import math
import re
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from typing import Any, Final

import attrs

from semledger.adapters import (
    RUNTIME_ROLES,
    ActionabilityError,
    ActResult,
    AgentSurface,
    DialogError,
    LocateError,
    NavigationError,
    SessionError,
    Snapshot,
    SnapshotNode,
    SurfaceError,
    visible_nodes,
)
from semledger.adapters._snapshot import structure_problems
from semledger.runtime import (
    ActionKind,
    Announcement,
    ByNodeId,
    BySemanticId,
    Checked,
    Collection,
    ErrorCode,
    Frame,
    InvalidSemanticIdError,
    Issue,
    Live,
    Numeric,
    Point,
    Precondition,
    ReadResult,
    Receipt,
    Rejection,
    Relation,
    Role,
    ScrollDirection,
    SemanticId,
    SemanticsAction,
    SemanticsNode,
    SemanticsSnapshot,
    SetNumericValue,
    SetText,
    Size,
    Target,
    check_precondition,
    resolve_target,
)
from semledger.runtime import NodeState as RuntimeNodeState
from semledger.runtime._actions import check_request, check_since
from semledger.runtime._snapshot import Journal, announcements_of, duplicate_issues
from semledger.runtime._wire import encode_target

__all__ = ["AdapterFailedError", "SurfaceAgentHost", "aria_to_runtime_role"]

REMEMBERED_REFS: Final = 50_000
"""How many elements that left the page a bridge remembers the node ids of, for when they
come back (a page behind a modal, in a window the session left, a tab panel hidden): those
that left longest ago are forgotten first, and one of them that comes back gets a new id,
which costs an agent a ``target_not_found`` and a read, as a new ref would. A page that keeps
making elements (a feed, a log) would otherwise grow the bridge with every element it ever
showed; this bounds it at about 350 bytes an element (some 17 MB)."""

_JUDGED_AT_MOST: Final = 3
"""How many times an action is judged on a new read when the surface refuses its first step
as stale (an app's effect finished between the read and the act)."""


class AdapterFailedError(Exception):
    """Raised by the bridge's calls of its surface when the adapter broke the surface
    contract: a call raised what is no SurfaceError (the adapter's bug, a driver's error let
    through), or returned what it may not (``act`` something that is no ActResult,
    ``snapshot`` no Snapshot). The bridge then ends: its session crashed, as a runtime
    session's does when its application raises.

    `what` says it for a sentence about the adapter (``raised RuntimeError('x') in act``);
    `error` is what the adapter raised, or the TypeError its result stands for."""

    def __init__(self, what: str, error: BaseException) -> None:
        super().__init__(f"the adapter {what}")
        self.what = what
        self.error = error

    shown = 200
    """Characters of the error's repr the sentence shows: a driver's error may quote a whole
    page, which the agent is told and stderr says (the log keeps it whole)."""

    @classmethod
    def raised(cls, error: Exception, call: str) -> AdapterFailedError:
        text = repr(error)
        if len(text) > cls.shown:
            text = text[: cls.shown - 1] + "…"
        return cls(f"raised {text} in {call}", error)

    @classmethod
    def returned(cls, result: object, call: str, expected: str) -> AdapterFailedError:
        shown = "None" if result is None else f"a {type(result).__name__}"
        what = f"returned {shown} from {call}, not {expected}"
        return cls(what, TypeError(f"the adapter {what}"))


_PREFERRED: Final[Mapping[str, str]] = {
    "generic": "group",
    "group": "group",
    "textbox": "text_field",
    "document": "web_view",
    "searchbox": "text_field",
    "listbox": "list",
    "menubar": "group",  # it holds menus; nothing to activate or dismiss
    "menuitem": "button",
    "menuitemcheckbox": "checkbox",
    "menuitemradio": "radio",
    "spinbutton": "slider",
    "gridcell": "cell",
    "columnheader": "cell",
    "rowheader": "cell",
    "rowgroup": "group",
    "treegrid": "tree",
    "radiogroup": "group",
    "tablist": "group",
    "tabpanel": "group",
    "toolbar": "group",
    "paragraph": "text",
    "StaticText": "text",
    "alertdialog": "dialog",
    "meter": "progress",
    "window": "group",
    "application": "group",
}
_ARIA_TO_RUNTIME: Final[dict[str, Role]] = {}
for _runtime, _aria in RUNTIME_ROLES.items():
    _ARIA_TO_RUNTIME.setdefault(_aria, Role(_runtime))
for _aria, _runtime in _PREFERRED.items():
    _ARIA_TO_RUNTIME[_aria] = Role(_runtime)

_CHECKABLE: Final = frozenset({Role.CHECKBOX, Role.RADIO, Role.SWITCH})
_ACTIVATABLE: Final = frozenset({Role.BUTTON, Role.LINK, Role.CHECKBOX, Role.RADIO, Role.SWITCH})
_SELECTABLE: Final = frozenset({Role.OPTION, Role.TAB, Role.CELL, Role.ROW, Role.TREE_ITEM})
_CLICKED: Final = frozenset(
    {ActionKind.ACTIVATE, ActionKind.EXPAND, ActionKind.COLLAPSE, ActionKind.SELECT}
)
_KEY_OF: Final[Mapping[ActionKind, str]] = {
    ActionKind.SUBMIT: "Enter",
    ActionKind.DISMISS: "Escape",
    ActionKind.INCREMENT: "ArrowUp",
    ActionKind.DECREMENT: "ArrowDown",
}
_STEP_SIGN: Final[Mapping[ActionKind, int]] = {ActionKind.INCREMENT: 1, ActionKind.DECREMENT: -1}
_ARROW_OF: Final[Mapping[ActionKind, str]] = {
    ActionKind.EXPAND: "ArrowRight",
    ActionKind.COLLAPSE: "ArrowLeft",
}
_OPENING_KEYS: Final = ("Alt+ArrowDown", "ArrowDown")
"""What opens an editable combo box, optional key first (ARIA authoring practices)."""
_SCROLL_KEYS: Final[Mapping[ScrollDirection, str]] = {
    ScrollDirection.FORWARD: "PageDown",
    ScrollDirection.DOWN: "PageDown",
    ScrollDirection.BACKWARD: "PageUp",
    ScrollDirection.UP: "PageUp",
}
_NOT_EDITABLE: Final = frozenset({"readonly", "disabled"})
_ORDER: Final = tuple(ActionKind)
_UNCARRIED: Final = frozenset({ActionKind.SET_SELECTION})
"""What no surface call can do: a node never offers it, whatever its surface says."""


def aria_to_runtime_role(role: str, native: Mapping[str, str] | None = None) -> Role:
    """semledger's wire role for an ARIA role (best-effort; unknown -> group)."""
    if native is not None:
        exact = native.get("runtime_role")
        if exact is not None:
            try:
                return Role(exact)
            except ValueError:
                pass
    found = _ARIA_TO_RUNTIME.get(role, Role.GROUP)
    return Role.GROUP if found is Role.NONE else found


def _semantic_id(native: Mapping[str, str]) -> SemanticId | None:
    for key in ("automationId", "testid", "data-testid", "id"):
        value = native.get(key)
        if value:
            try:
                return SemanticId(value)
            except InvalidSemanticIdError:
                continue
    return None


def _numeric(native: Mapping[str, str]) -> Numeric | None:
    """A range's value as a surface reports it in ``native``: ``valuenow``, ``valuemin``,
    ``valuemax``, ``valuestep`` (decimal text) and ``valuetext``; None if it reports none."""

    def number(key: str) -> float | None:
        text = native.get(key)
        if text is None:  # most nodes: no exception raised and caught for each
            return None
        try:
            found = float(text)
        except ValueError:
            return None
        return found if math.isfinite(found) else None

    low, high, step = number("valuemin"), number("valuemax"), number("valuestep")
    current, text = number("valuenow"), native.get("valuetext")
    if current is None and low is None and high is None and step is None and text is None:
        return None
    return Numeric(current, low, high, step, text)


def _actions(
    role: Role, states: frozenset[str], native: Mapping[str, str], framed: bool = False
) -> tuple[ActionKind, ...]:
    """What a node offers; `framed`: its element is in a frame's document, not the page's."""
    declared = native.get("runtime_actions")
    if declared is not None:  # the surface's word for what the node takes (a runtime app's)
        named = set(declared.split())
        return tuple(k for k in _ORDER if k.value in named and k not in _UNCARRIED)
    kinds: set[ActionKind] = set()
    focusable = native.get("focusable")  # the surface's word, where it gives it
    if native.get("type") == "file":  # a click opens the system's file chooser, out of reach
        return (ActionKind.FOCUS,) if focusable in (None, "true") else ()
    if role in _ACTIVATABLE or _opens_a_menu(role, native):
        kinds.update((ActionKind.ACTIVATE, ActionKind.FOCUS))
    if role is Role.TEXT_FIELD:
        kinds.add(ActionKind.FOCUS)
        if native.get("multiline") != "true":  # where Enter starts a new line
            kinds.add(ActionKind.SUBMIT)
        if not states & _NOT_EDITABLE:
            kinds.add(ActionKind.SET_TEXT)
    if role is Role.COMBO_BOX:
        kinds.update((ActionKind.FOCUS, ActionKind.ACTIVATE))
        if native.get("editable") == "true" and not states & _NOT_EDITABLE:
            kinds.add(ActionKind.SET_TEXT)
    if role in _SELECTABLE:
        kinds.add(ActionKind.SELECT)
    if native.get("multiple") == "true":  # an option of a <select multiple>: activate toggles it
        kinds.add(ActionKind.ACTIVATE)
    if role is Role.SLIDER:
        kinds.update((ActionKind.FOCUS, ActionKind.INCREMENT, ActionKind.DECREMENT))
        if native.get("valuesettable") == "true" and not states & _NOT_EDITABLE:
            kinds.add(ActionKind.SET_NUMERIC_VALUE)
    if role is Role.MENU or _closable(role, native) or _escape_closes(role, native, framed):
        kinds.add(ActionKind.DISMISS)
    if role is Role.SCROLL_VIEW:
        kinds.add(ActionKind.SCROLL)
    if role is Role.FORM:
        kinds.add(ActionKind.SUBMIT)
    if "expanded" in states:
        kinds.add(ActionKind.COLLAPSE)
    if "collapsed" in states:
        kinds.add(ActionKind.EXPAND)
    if native.get("selectable") == "false":  # a static table's row or cell
        kinds.discard(ActionKind.SELECT)
    if focusable == "true":
        kinds.add(ActionKind.FOCUS)
    elif focusable == "false":  # the keys increment and decrement press would go elsewhere
        kinds.difference_update((ActionKind.FOCUS, ActionKind.INCREMENT, ActionKind.DECREMENT))
    return tuple(k for k in _ORDER if k in kinds)


def _scrolled(native: Mapping[str, str]) -> tuple[float, float]:
    """How far a surface says its page is scrolled (``native["scroll"]``: ``"x y"`` on the
    root), which its boxes, in the viewport's coordinates, leave out."""
    try:
        x, y = (float(part) for part in native.get("scroll", "0 0").split())
    except ValueError:
        return 0.0, 0.0
    return (x, y) if math.isfinite(x) and math.isfinite(y) else (0.0, 0.0)


def _opens_a_menu(role: Role, native: Mapping[str, str]) -> bool:
    """AT-SPI's menu is an item that opens one (File in a menu bar); ARIA's, a web page's,
    is the popup holding the items, which a click would land in the middle of."""
    return role is Role.MENU and native.get("atspiRole") == "menu"


def _escape_closes(role: Role, native: Mapping[str, str], framed: bool) -> bool:
    """Whether a dialog may close on Escape, which dismiss presses. A ``<dialog>``'s
    ``closedby`` says (its ``closedBy`` as shown: ``any`` or ``closerequest`` close on it,
    ``none`` does not), else it is shown modal (``showModal``): one shown with ``show()`` and
    no ``closedby`` ignores it, and dismiss would answer a receipt for nothing done. An ARIA
    dialog closes as its page's script says, modal or not. A ``<dialog>`` in a frame with no
    ``closedby`` keeps the offer: the surface leaves ``modal`` off a frame's modal, which is
    no modal of the whole tree."""
    if role is not Role.DIALOG:
        return False
    if native.get("tag") != "dialog":
        return True
    closed_by = native.get("closedby")
    if closed_by is not None:
        return closed_by in _ESCAPE_CLOSES
    return native.get("modal") == "true" or framed


_ESCAPE_CLOSES: Final = frozenset({"any", "closerequest"})
"""The ``closedby`` of a ``<dialog>`` a close request (Escape) closes."""


def _closable(role: Role, native: Mapping[str, str]) -> bool:
    """A page's document in a window the session may close: it has another to go back to."""
    return role is Role.WEB_VIEW and native.get("windows", "1") != "1"


def _node(
    item: SnapshotNode,
    node_id: int,
    children: tuple[int, ...],
    busy: bool = False,
    live: Live = Live.OFF,
    relations: tuple[tuple[Relation, tuple[int, ...]], ...] = (),
    in_set: tuple[int, int] | None = None,
    scrolled: tuple[float, float] = (0.0, 0.0),
    framed: bool = False,
) -> SemanticsNode:
    states = frozenset(item.states)
    native = item.native
    role = aria_to_runtime_role(item.role, native)
    checked: Checked | None = None
    if "checked" in states:
        checked = Checked.CHECKED
    elif native.get("checked") == "mixed":
        checked = Checked.MIXED
    elif "unchecked" in states or role in _CHECKABLE:
        checked = Checked.UNCHECKED
    expanded = True if "expanded" in states else False if "collapsed" in states else None
    x, y, w, h = item.box if item.box is not None else (0.0, 0.0, 0.0, 0.0)
    if item.box is not None:  # in the document's coordinates: a scroll moves no node
        x, y = round(x + scrolled[0], 1), round(y + scrolled[1], 1)
    level = native.get("level", "")
    return SemanticsNode(
        node_id=node_id,
        semantic_id=_semantic_id(native),
        role=role,
        children=children,
        level=int(level) if level.isascii() and level.isdigit() and int(level) > 0 else None,
        url=native.get("url"),
        label=item.name,
        value=item.value,
        description=item.description,
        numeric=_numeric(native),
        collection=_collection(native, in_set),
        state=RuntimeNodeState(
            focused="focused" in states,
            disabled="disabled" in states,
            selected="selected" in states,
            pressed=native.get("pressed") == "true",
            checked=checked,
            expanded=expanded,
            invalid=native.get("invalid") == "true",
            required="required" in states,
            read_only="readonly" in states,
            busy=busy or native.get("busy") == "true",
            multiline=native.get("multiline") == "true",
            password=native.get("password") == "true" or native.get("type") == "password",
            modal=native.get("modal") == "true",
        ),
        relations=relations,
        live=live,
        atomic=native.get("atomic") == "true",
        actions=_actions(role, states, native, framed),
        frame=Frame(Point(x, y), Size(w, h)),
    )


def _collection(native: Mapping[str, str], in_set: tuple[int, int] | None) -> Collection | None:
    """Where a node sits in its set and its table as a surface reports it in ``native``
    (``posinset``, ``setsize``, ``rowindex``, ``rowcount``, ``rowspan``, ``colindex``,
    ``colcount``, ``colspan``: 1-based, a count of -1 for one not known), the set position
    falling back to `in_set` (its position among its parent's children of its role, and
    their number); None if neither says anything."""

    def number(key: str) -> int | None:
        text = native.get(key)
        return int(text) if text is not None and text.isascii() and text.isdigit() else None

    position, size = in_set if in_set is not None else (None, None)
    if "posinset" in native:
        position = number("posinset")
    if "setsize" in native:
        size = number("setsize")  # -1: the page does not know (a list loaded as it scrolls)
    found = Collection(
        row_index=number("rowindex"),
        row_count=number("rowcount"),
        row_span=number("rowspan"),
        column_index=number("colindex"),
        column_count=number("colcount"),
        column_span=number("colspan"),
        set_size=size,
        set_position=position,
    )
    return None if found == _NO_COLLECTION else found


_NO_COLLECTION: Final = Collection()

_IN_SETS: Final = frozenset({Role.LIST_ITEM, Role.OPTION, Role.TAB, Role.TREE_ITEM})
"""The roles whose nodes are told their place among their siblings of the same role."""


def _set_positions(page: list[SnapshotNode]) -> dict[str, tuple[int, int]]:
    """Each list item's, option's, tab's and tree item's position among its parent's
    children of its role, and their number, by ref."""
    sets: dict[tuple[str | None, Role], list[str]] = {}
    for item in page:
        role = aria_to_runtime_role(item.role, item.native)
        if role in _IN_SETS:
            sets.setdefault((item.parent, role), []).append(item.ref)
    return {ref: (i, len(refs)) for refs in sets.values() for i, ref in enumerate(refs, 1)}


_RELATION_KEYS: Final = tuple((relation, f"rel:{relation.value}") for relation in Relation)


def _relations(
    native: Mapping[str, str], ids: Mapping[str, int]
) -> tuple[tuple[Relation, tuple[int, ...]], ...]:
    """A node's relations as a surface reports them in ``native`` (``rel:labelled_by``:
    space-separated refs), each to the nodes of the tree it points at; a relation to none
    of them (a target out of the tree, behind a modal) is left out."""
    out = []
    for relation, key in _RELATION_KEYS:
        refs = native.get(key)
        if refs:
            targets = tuple(ids[ref] for ref in refs.split() if ref in ids)
            if targets:
                out.append((relation, targets))
    return tuple(out)


def _whole_regions(
    announcements: list[Announcement], tree: SemanticsSnapshot
) -> list[Announcement]:
    """`announcements` with those from inside an atomic live region (``aria-atomic``, a
    status, an alert) said as the region says them: once, all of its text, as a screen
    reader reads such a region whatever part of it changed."""
    out: list[Announcement] = []
    said: set[int] = set()
    for announcement in announcements:
        region = _atomic_region(tree, announcement.node_id)
        if region is None or region.node_id == announcement.node_id:
            out.append(announcement)
            continue
        if region.node_id in said:
            continue
        said.add(region.node_id)
        words = " ".join(_texts_in(tree, region))
        if words:
            out.append(
                Announcement(region.node_id, announcement.generation, region.live, True, words)
            )
    return out


def _news(
    announcements: list[Announcement], tree: SemanticsSnapshot, said: Mapping[int, str]
) -> list[Announcement]:
    """`announcements` but those from inside a live region that is back in the tree saying
    what it said when it left (`said`: a text the page wrote again behind a modal)."""
    if not said:
        return announcements
    unchanged: dict[int, bool] = {}
    out = []
    for announcement in announcements:
        region = _region_of(tree, announcement.node_id)
        if region not in unchanged:
            words = " ".join(_texts_in(tree, tree.nodes[region]))
            unchanged[region] = said.get(region) == words
        if not unchanged[region]:
            out.append(announcement)
    return out


def _region_of(tree: SemanticsSnapshot, node_id: int) -> int:
    """The outermost live node holding the live node `node_id` (it, if none does)."""
    while True:
        parent = tree.parents.get(node_id)
        if parent is None or tree.nodes[parent].live is Live.OFF:
            return node_id
        node_id = parent


def _texts_in(tree: SemanticsSnapshot, region: SemanticsNode) -> Iterator[str]:
    """The labels and values of `region` and what is inside it, in tree order."""
    stack = [region]
    while stack:
        node = stack.pop()
        yield from (part for part in (node.label, node.value) if part)
        stack.extend(tree.nodes[child] for child in reversed(node.children))


def _atomic_region(tree: SemanticsSnapshot, node_id: int) -> SemanticsNode | None:
    current: int | None = node_id
    while current is not None:
        node = tree.nodes.get(current)
        if node is None or node.live is Live.OFF:
            return None
        if node.atomic:
            return node
        current = tree.parents.get(current)
    return None


_LIVE = {"polite": Live.POLITE, "assertive": Live.ASSERTIVE, "off": Live.OFF}
"""A region's ``aria-live`` (or its role's implicit one: status and log are polite, alert
assertive), as a surface reports it in ``native["live"]``. What is inside a live region is
live as it is (a text node whose words change is what gets announced), unless it says
otherwise itself."""


@attrs.frozen
class _Dialog:
    """A native dialog the surface reports open, shown as the modal root of the tree."""

    node_id: int
    kind: str
    message: str
    default: str

    @classmethod
    def of(cls, node_id: int, error: DialogError) -> _Dialog:
        details = error.details
        return cls(
            node_id,
            str(details.get("dialog") or "dialog"),
            str(details.get("message", error.message)),
            str(details.get("default") or ""),
        )

    @property
    def prompt(self) -> bool:
        return self.kind == "prompt"

    def node(self, text: str | None) -> SemanticsNode:
        actions: tuple[ActionKind, ...] = (ActionKind.SUBMIT, ActionKind.DISMISS)
        if self.prompt:
            actions += (ActionKind.SET_TEXT,)
        return SemanticsNode(
            node_id=self.node_id,
            semantic_id=None,
            role=Role.DIALOG,
            label=self.message,
            value=(self.default if text is None else text) if self.prompt else None,
            description=self.kind,
            state=RuntimeNodeState(modal=True),
            actions=actions,
        )

    def blocking(self, rejection: Rejection) -> Rejection:
        message = (
            f"the page is behind an open {self.kind} dialog ({self.message!r}); answer it"
            f" first: submit or dismiss node {self.node_id}"
        )
        return attrs.evolve(rejection, message=message)


def _within_modal(page: list[SnapshotNode]) -> list[SnapshotNode]:
    """`page` (in tree order), or, while an element of it is modal (a ``<dialog>`` opened
    with ``showModal``, ``aria-modal``), the deepest such one and what is inside it, as the
    runtime roots the tree at its deepest modal node: the page takes no input outside it."""
    modal = [item for item in page if item.native.get("modal") == "true"]
    if not modal:
        return page
    deepest = max(reversed(modal), key=lambda item: item.depth)
    inside = {deepest.ref}
    for item in page[page.index(deepest) + 1 :]:
        if item.parent in inside:
            inside.add(item.ref)
    return [item for item in page if item.ref in inside]


def _documents(page: list[SnapshotNode]) -> dict[str, str]:
    """The document each element of `page` is in, by ref: the ref of the nearest ``document``
    node holding it (itself, for one), else the root's. A navigation replaces the document
    node (the web adapter's ``<body>``, which the new document's is not), and so does one in
    an iframe for what the frame shows."""
    of: dict[str, str] = {}
    for item in page:
        holder = None if item.parent is None or item.role == "document" else of.get(item.parent)
        of[item.ref] = holder or item.ref
    return of


_REACHING: Final = ("live", "modal", "runtime_role", "scroll")
"""What of an element's ``native`` its node is not alone in being built from: the live
setting its descendants inherit, the modal that roots the tree, the role whose siblings it
is counted among, the page's scroll every frame is offset by."""


def _in_place(old: SnapshotNode, new: SnapshotNode) -> bool:
    """Whether `new`, the element `old` was, differs from it in nothing any other node is
    built from: its place in the tree, its role, whether it is hidden, `_REACHING`."""
    if (old.ref, old.depth, old.parent, old.role) != (new.ref, new.depth, new.parent, new.role):
        return False
    if ("hidden" in old.states) != ("hidden" in new.states):
        return False
    return all(old.native.get(key) == new.native.get(key) for key in _REACHING)


def _changes(before: Snapshot | None, after: Snapshot) -> list[int] | None:
    """The indices of the nodes of `after` that differ from `before`'s, when each of them
    differs in itself alone (`_in_place`); None when the page changed more than that (an
    element came, went or moved) or there is no `before`."""
    if before is None or before.ref != after.ref or len(before.nodes) != len(after.nodes):
        return None
    changed = []
    for i, (new, old) in enumerate(zip(after.nodes, before.nodes, strict=True)):
        if new is old or new == old:  # (attrs' != calls == too: twice the cost)
            continue
        if not _in_place(old, new):
            return None
        changed.append(i)
    return changed


@attrs.define
class _PageRead:
    """What a read of the page built, for the next one to build only what changed on it."""

    source: tuple[SnapshotNode, ...]
    """The surface's nodes it was built from."""
    busy: bool
    nodes: list[SemanticsNode]
    """The nodes shown, root first (`_within_modal`)."""
    at: dict[str, int]
    """Where each element's node is in `nodes`, by ref."""
    in_tree: dict[str, int]
    """The node id of each element shown, by ref: what relations may point at."""
    committed: SemanticsSnapshot | None = None
    """The tree the commit of `nodes` left current."""
    focused_at: set[int] = attrs.Factory(set)
    """Where the nodes that say they have the focus are in `nodes`."""


def _reject(code: ErrorCode, message: str, **details: Any) -> Rejection:
    return Rejection(code, message, details)


class SurfaceAgentHost:
    """``read_semantics`` and ``perform_action`` over an opened AgentSurface.

    The bridge does not own the surface's lifetime: ``close`` marks the host closed (both
    operations then answer ``host_closed``); closing the surface is the caller's."""

    def __init__(
        self,
        surface: AgentSurface,
        *,
        journal: Journal | None = None,
        next_node_id: int = 1,
    ) -> None:
        """`journal` and `next_node_id` continue a session another bridge served: from its
        commits (the last one's generation and nodes, which the first refresh replaces with
        this surface's), and with node ids after every one it gave out."""
        self.surface = surface
        self._journal = journal or Journal(SemanticsSnapshot.empty())
        self._ids: dict[str, int] = {}
        self._refs: dict[int, str] = {}
        self._on_page: set[int] = set()
        """The node ids of the elements on the page the last time it was read."""
        self._departed: OrderedDict[int, None] = OrderedDict()
        """The node ids, still in `_refs`, of elements that left the page, longest gone first."""
        self._left: dict[int, SemanticsNode] = {}
        """The live nodes out of the tree, as they were when they left it."""
        self._said: dict[int, str] = {}
        """What each live region out of the tree said when it left it, all of its text."""
        self._documents: dict[int, str] = {}
        """The document each node id's element was last seen in, by the document node's ref."""
        self._built: dict[str, tuple[tuple[Any, ...], SemanticsNode]] = {}
        """Each element's node as last built, by ref, with what it was built from."""
        self._read: _PageRead | None = None
        self._derived: SemanticsSnapshot | None = None
        """The last tree this bridge's commit made (whose issues are its duplicate ids)."""
        self._next_id = next_node_id
        self._closed: str | None = None
        self._crash: AdapterFailedError | None = None
        self._dialog: _Dialog | None = None
        self._prompt_text: str | None = None
        self.last_snapshot: Snapshot | None = None

    @property
    def closed(self) -> bool:
        return self._closed is not None

    @property
    def closed_reason(self) -> str | None:
        """Why the host is closed (its surface's session ended, say); None while open."""
        return self._closed

    @property
    def crash(self) -> AdapterFailedError | None:
        """How the adapter broke the contract, if it did: the host closed then."""
        return self._crash

    @property
    def generation(self) -> int:
        return self._journal.current.generation

    @property
    def journal(self) -> Journal:
        """The generations committed so far, each with its snapshot and delta (read only)."""
        return self._journal

    @property
    def next_node_id(self) -> int:
        """The id the next node the bridge meets will get."""
        return self._next_id

    def close(self, why: str = "the session is closed") -> None:
        self._closed = why

    # ---- committing surface snapshots ---------------------------------------------------

    def _allocate(self) -> int:
        node_id = self._next_id
        self._next_id += 1
        return node_id

    def _id_for(self, ref: str) -> int:
        node_id = self._ids.get(ref)
        if node_id is None:
            node_id = self._allocate()
            self._ids[ref] = node_id
            self._refs[node_id] = ref
        return node_id

    async def refresh(self) -> SemanticsSnapshot:
        """Take a surface snapshot and commit it if anything public changed.

        While the surface reports a native dialog open (its snapshot raises DialogError) the
        dialog is the whole tree; the page's ids are kept, so the page comes back with the
        same ids once the dialog is answered."""
        try:
            snapshot, changed = await self._snapshot()
        except DialogError as error:
            if self._dialog is None:
                self._dialog = _Dialog.of(self._allocate(), error)
            return self._commit([self._dialog.node(self._prompt_text)])
        except NavigationError as error:
            if not error.details.get("pending") or self.last_snapshot is None:
                raise
            self._dialog = None
            self._prompt_text = None
            nodes, _ = self._page_nodes(self.last_snapshot, busy=True)
            return self._commit(nodes)
        self._dialog = None
        self._prompt_text = None
        before, self.last_snapshot = self.last_snapshot, snapshot
        read = self._read
        if (
            changed is not None
            and before is not None
            and read is not None
            and read.source is before.nodes
            and not read.busy
        ):
            return self._read_again(read, snapshot, changed)
        nodes, on_page = self._page_nodes(snapshot)
        committed = self._commit(nodes, self._read)
        self._note_departures(on_page)
        return committed

    def _read_again(
        self, read: _PageRead, snapshot: Snapshot, changed: list[int]
    ) -> SemanticsSnapshot:
        """Commit `snapshot`, whose nodes differ from those `read` was built from at
        `changed` alone, each in itself (`_changes`): the rest of the page keeps its nodes,
        ids and places, and only the nodes of those elements are built again."""
        rebuilt = []
        for i in changed:
            item = snapshot.nodes[i]
            at = read.at.get(item.ref)
            if at is None:  # hidden, or behind a modal: no node shows it
                continue
            made_of = self._built[item.ref][0]
            made_of = (item, *made_of[1:5], _relations(item.native, read.in_tree), *made_of[6:])
            node = _node(*made_of)
            self._built[item.ref] = (made_of, node)
            read.nodes[at] = node
            rebuilt.append(at)
        committed = self._commit(read.nodes, read, rebuilt)
        read.source = snapshot.nodes
        return committed

    async def _snapshot(self) -> tuple[Snapshot, list[int] | None]:
        """The surface's snapshot, with the indices of the nodes that differ from the last
        one read, each in itself alone (`_changes`; None if the page changed more than
        that); an AdapterFailedError if the adapter broke the contract, a DataError if the
        tree is malformed (`structure_problems`: a forest, say, of which the tree would show
        the first tree alone)."""
        try:
            snapshot = await self.surface.snapshot()
        except SurfaceError:
            raise
        except Exception as error:
            raise AdapterFailedError.raised(error, "snapshot") from error
        if not isinstance(snapshot, Snapshot):
            raise AdapterFailedError.returned(snapshot, "snapshot", "a Snapshot")
        changed = _changes(self.last_snapshot, snapshot)
        problems = structure_problems(snapshot.ref, snapshot.nodes, changed=changed)
        if problems:
            raise problems[0]
        return snapshot, changed

    async def _act_on(self, name: str, ref: str | None, args: dict[str, Any] | None) -> ActResult:
        """The surface's ``act``; an AdapterFailedError if the adapter broke the contract."""
        call = f"act({name!r})"
        try:
            done = await self.surface.act(name, ref, args)
        except SurfaceError:
            raise
        except Exception as error:
            raise AdapterFailedError.raised(error, call) from error
        if not isinstance(done, ActResult):
            raise AdapterFailedError.returned(done, call, "an ActResult")
        return done

    def _crashed(self, failed: AdapterFailedError) -> Rejection:
        """Close the host: its adapter broke the contract, and nothing it says can be trusted
        (an action it answered with None may have been done)."""
        self._crash = failed
        self.close(f"the session ended: {failed}")
        return _reject(ErrorCode.HOST_CLOSED, f"the session ended: {failed}")

    def _adopt_ids(self, page: list[SnapshotNode]) -> dict[str, str]:
        """Give an element the page made anew (a list it rendered again) the node id of the
        one it replaced: the node of its semantic id, whose element is gone. Only where that
        semantic id was on one node and is on one new element, in the document the node's
        element was in: a page's next document has ids of its own (its ``#go`` is another
        button), and a node id held for the last one must not act on it. Returns the
        document each element is in (`_documents`)."""
        on_page = {item.ref for item in page}
        documents = _documents(page)
        fresh: dict[SemanticId, list[str]] = {}
        for item in page:
            if item.ref not in self._ids:
                semantic_id = _semantic_id(item.native)
                if semantic_id is not None:
                    fresh.setdefault(semantic_id, []).append(item.ref)
        shown = self._journal.current
        for made_anew, refs in fresh.items():
            before = shown.find(made_anew)
            old_ref = self._refs.get(before[0]) if len(before) == 1 else None
            if len(refs) != 1 or old_ref is None or old_ref in on_page:
                continue
            if self._documents.get(before[0]) != documents[refs[0]]:
                continue
            del self._ids[old_ref]
            self._ids[refs[0]] = before[0]
            self._refs[before[0]] = refs[0]
        for item in page:
            self._documents[self._id_for(item.ref)] = documents[item.ref]
        return documents

    def _page_nodes(
        self, snapshot: Snapshot, *, busy: bool = False
    ) -> tuple[list[SemanticsNode], set[int]]:
        """The nodes shown of the page, root first (`_within_modal`), and the ids of every
        node on it; `busy` marks the root busy (a navigation away from the page is waiting
        for its next document)."""
        page = list(visible_nodes(snapshot.nodes))
        documents = self._adopt_ids(page)
        top = page[0].ref if page else None
        children: dict[str, list[int]] = {n.ref: [] for n in page}
        live: dict[str, Live] = {}
        for item in page:
            inherited = Live.OFF
            if item.parent is not None and item.parent in children:
                children[item.parent].append(self._id_for(item.ref))
                inherited = live[item.parent]
            else:
                self._id_for(item.ref)
            live[item.ref] = _LIVE.get(item.native.get("live", ""), inherited)
        shown = _within_modal(page)
        in_tree = {item.ref: self._ids[item.ref] for item in shown}
        in_sets = _set_positions(shown)
        scrolled = _scrolled(page[0].native) if page else (0.0, 0.0)
        # A node is a function of what it is built from: an element the page did not change
        # keeps the node it had. A read where elements changed only in themselves costs what
        # changed on the page (`_read_again`); here, where one came, went or moved, every
        # element's place is found again.
        built, self._built = self._built, {}
        nodes = []
        for i, item in enumerate(shown):
            ref = item.ref
            made_of = (
                item,
                self._ids[ref],
                tuple(children[ref]),
                busy and i == 0,
                live[ref],
                _relations(item.native, in_tree),
                in_sets.get(ref),
                scrolled,
                documents[ref] != top,
            )
            before = built.get(ref)
            node = before[1] if before is not None and before[0] == made_of else _node(*made_of)
            self._built[ref] = (made_of, node)
            nodes.append(node)
        at = {item.ref: i for i, item in enumerate(shown)}
        self._read = _PageRead(snapshot.nodes, busy, nodes, at, in_tree)
        return nodes, {self._ids[item.ref] for item in page}

    def _commit(
        self,
        nodes: list[SemanticsNode],
        read: _PageRead | None = None,
        changed: Sequence[int] | None = None,
    ) -> SemanticsSnapshot:
        """Commit `nodes` (root first) as the tree if it changed; `read`, the read of the
        page they are, keeps what the commit left current. Given `changed`, the indices of
        the only nodes that differ from those `read` last committed, only they are compared
        while that commit is current (no native dialog was shown since)."""
        previous = self._journal.current
        if read is not None and changed is not None and read.committed is previous:
            upserted = []
            for i in changed:
                node = nodes[i]
                was = previous.nodes.get(node.node_id)
                if was is not node and was != node:
                    upserted.append(node)
                if node.state.focused:
                    read.focused_at.add(i)
                else:
                    read.focused_at.discard(i)
            removed: list[int] = []
            focused_at = read.focused_at
        else:
            present = {n.node_id for n in nodes}
            upserted = [
                n for n in nodes if (was := previous.nodes.get(n.node_id)) is not n and was != n
            ]
            removed = [n for n in previous.nodes if n not in present]
            focused_at = {i for i, n in enumerate(nodes) if n.state.focused}
            if read is not None:
                read.focused_at = focused_at
        root = nodes[0].node_id if nodes else None
        focused = nodes[min(focused_at)].node_id if focused_at else None
        if not upserted and not removed and root == previous.root and focused == previous.focused:
            if read is not None:
                read.committed = previous
            return previous
        derived = previous.derive(
            upserted=upserted, removed=removed, root=root, focused=focused, issues=()
        )
        committed = attrs.evolve(derived, issues=self._issues(previous, derived, upserted, removed))
        self._derived = committed
        if read is not None:
            read.committed = committed
        said = announcements_of(
            previous, committed.generation, upserted, added_within=committed, left=self._left
        )
        self._journal.record(
            committed,
            touched=[*removed, *(n.node_id for n in upserted)],
            removed=removed,
            announcements=_whole_regions(_news(said, committed, self._said), committed),
        )
        self._note_left_tree(previous, removed, upserted)
        return committed

    def _issues(
        self,
        previous: SemanticsSnapshot,
        derived: SemanticsSnapshot,
        upserted: list[SemanticsNode],
        removed: list[int],
    ) -> tuple[Issue, ...]:
        """The semantic ids `derived` has on more than one node: those `previous` has, when
        it is this bridge's commit and no semantic id of a node that changed is on more than
        one node, before or after."""
        if previous is self._derived:
            touched = [previous.nodes[node_id] for node_id in removed]
            for node in upserted:
                was = previous.nodes.get(node.node_id)
                if was is None or was.semantic_id != node.semantic_id:
                    touched.append(node)
                    touched.extend(() if was is None else (was,))
            before, after = previous.by_semantic_id, derived.by_semantic_id
            if all(
                len(before.get(sid, ())) < 2 and len(after.get(sid, ())) < 2
                for n in touched
                if (sid := n.semantic_id) is not None
            ):
                return previous.issues
        return tuple(duplicate_issues(derived.by_semantic_id, derived.by_semantic_id.keys()))

    def _note_left_tree(
        self, previous: SemanticsSnapshot, removed: list[int], upserted: list[SemanticsNode]
    ) -> None:
        """Keep the live nodes of elements that left the tree as they were, and what each
        live region among them said, for when they come back (`_news`); forget those back."""
        for node in upserted:
            self._left.pop(node.node_id, None)
            self._said.pop(node.node_id, None)
        for node_id in removed:
            node = previous.nodes[node_id]
            if node.live is Live.OFF or node_id not in self._refs:
                continue  # not live, or not this bridge's (a session it resumed)
            self._left[node_id] = node
            if _region_of(previous, node_id) == node_id:
                self._said[node_id] = " ".join(_texts_in(previous, node))

    def _note_departures(self, on_page: set[int]) -> None:
        """Given the ids of the nodes on the page just read, keep the refs of elements that
        left it, so that one that comes back (the page behind a modal, an opener once its
        popup closes, a tab panel shown again) keeps its node id, as the SPEC has an element
        hidden and shown again keep it; forget the longest gone beyond `REMEMBERED_REFS`."""
        departed = self._departed
        for node_id in on_page - self._on_page:
            departed.pop(node_id, None)
        for node_id in self._on_page - on_page:
            departed[node_id] = None
        self._on_page = on_page
        while len(departed) > REMEMBERED_REFS:
            forgotten, _ = departed.popitem(last=False)
            self._ids.pop(self._refs.pop(forgotten), None)
            self._documents.pop(forgotten, None)
            self._left.pop(forgotten, None)
            self._said.pop(forgotten, None)

    # ---- the two operations -------------------------------------------------------------

    async def read_semantics(self, since: int | None) -> ReadResult | Rejection:
        check_since(since)
        if self._closed is not None:
            return _reject(ErrorCode.HOST_CLOSED, self._closed)
        try:
            await self.refresh()
        except AdapterFailedError as failed:
            return self._crashed(failed)
        except SessionError as error:
            self.close(str(error))
            return _reject(ErrorCode.HOST_CLOSED, str(error))
        except SurfaceError as error:
            return _unreadable(error)
        return self._journal.read(since)

    async def perform_action(
        self,
        target: Target,
        action: SemanticsAction,
        precondition: Precondition,
        *,
        judged_on: Callable[[SemanticsSnapshot], Awaitable[None]] | None = None,
    ) -> Receipt | Rejection:
        """`judged_on`, when given, is awaited with the tree the request is judged against
        and its action done on, once it is read and before anything is done (a logged
        bridge logs the request then: a field may have become a password since the agent's
        last read); not at all when that tree could not be read.

        A surface that refuses the action's first step as stale (an effect of the app's
        changed it since the read: the runtime adapter acts only on the tree it last showed)
        has done nothing: the request is judged again on a new read, up to `_JUDGED_AT_MOST`
        times, an exact precondition then failing as stale_generation in this bridge's
        generations. `judged_on` is awaited with the first tree alone."""
        check_request(target, action, precondition)
        if self._closed is not None:
            return _reject(ErrorCode.HOST_CLOSED, self._closed)
        judged = 1
        while (
            outcome := await self._judge_and_act(
                target, action, precondition, judged_on, read_again=judged < _JUDGED_AT_MOST
            )
        ) is None:
            judged += 1
            judged_on = None
        return outcome

    async def _judge_and_act(
        self,
        target: Target,
        action: SemanticsAction,
        precondition: Precondition,
        judged_on: Callable[[SemanticsSnapshot], Awaitable[None]] | None,
        *,
        read_again: bool,
    ) -> Receipt | Rejection | None:
        """`perform_action` on a new read; None, when `read_again`, for a surface that
        refused the action's first step as stale (nothing was done)."""
        try:
            snapshot = await self.refresh()
        except AdapterFailedError as failed:
            return self._crashed(failed)
        except SessionError as error:
            self.close(str(error))
            return _reject(ErrorCode.HOST_CLOSED, str(error))
        except SurfaceError as error:
            return _unreadable(error)  # nothing was done
        if judged_on is not None:
            await judged_on(snapshot)
        stale = check_precondition(precondition, snapshot.generation)
        if stale is not None:
            return stale
        echoed = encode_target(target)
        resolved = resolve_target(target, snapshot, self._next_id)
        if isinstance(resolved, Rejection):
            return self._not_found(target, resolved)
        node = resolved
        if node.state.disabled:
            return _reject(ErrorCode.TARGET_DISABLED, "the target is disabled", target=echoed)
        if action.kind not in node.actions:
            return _reject(
                ErrorCode.ACTION_UNAVAILABLE,
                f"the target does not offer {action.kind.value}",
                target=echoed,
                action=action.kind.value,
            )
        before = snapshot.generation
        pending = False
        try:
            if self._dialog is not None:
                await self._answer(self._dialog, action)
            else:
                pending = await self._act(self._refs[node.node_id], node, action)
        except _StaleError as refused:
            if read_again:
                return None
            return _rejection(
                refused.error, echoed, action.kind.value, self._refs.get(node.node_id), self._ids
            )
        except AdapterFailedError as failed:
            return self._crashed(failed)
        except SessionError as error:
            self.close(str(error))
            return _reject(ErrorCode.HOST_CLOSED, str(error))
        except SurfaceError as error:
            return _rejection(
                error, echoed, action.kind.value, self._refs.get(node.node_id), self._ids
            )
        try:
            after = await self.refresh()
        except AdapterFailedError as failed:
            return self._crashed(failed)
        except SessionError as error:
            # Done, and the surface went away after (a Quit button, a crash): the read
            # pending work calls for answers host_closed, saying why.
            self.close(str(error))
            return Receipt(before, before, True)
        except SurfaceError:
            # Done, but not yet seen: pending work says to read again.
            return Receipt(before, before, True)
        return Receipt(before, after.generation, pending or _loading(after))

    def _not_found(self, target: Target, rejection: Rejection) -> Rejection:
        """`rejection`, naming the modal or native dialog in the way, when `target` may be
        on the page behind it; the plain ``target_not_found`` when it names nothing there
        (saying that a node id the bridge gave out has left the tree: ids are never reused)."""
        if self._gone(target):
            gone = resolve_target(target, SemanticsSnapshot.empty(), self._next_id)
            assert isinstance(gone, Rejection)
            return gone
        return rejection if self._dialog is None else self._dialog.blocking(rejection)

    def _gone(self, target: Target) -> bool:
        """Whether `target` is a node id or semantic id that no element of the page has,
        behind a modal or not, hidden or not (a page behind an ARIA modal is aria-hidden).
        A path starts at the root, which the modal is; and a surface that shows only its
        modal (the runtime's) does not say what is behind it."""
        page = [] if self.last_snapshot is None else self.last_snapshot.nodes
        if not page or page[0].native.get("modal") == "true":
            return False
        if isinstance(target, ByNodeId):
            return all(self._ids.get(item.ref) != target.id for item in page)
        if isinstance(target, BySemanticId):
            return all(_semantic_id(item.native) != target.id for item in page)
        return False

    async def _answer(self, dialog: _Dialog, action: SemanticsAction) -> None:
        """set_text keeps a prompt's text until submit accepts the dialog with it."""
        if isinstance(action, SetText):
            self._prompt_text = action.value
            return
        args: dict[str, Any] = {"accept": action.kind is ActionKind.SUBMIT}
        if dialog.prompt and action.kind is ActionKind.SUBMIT:
            args["prompt_text"] = dialog.default if self._prompt_text is None else self._prompt_text
        await self._act_on("dialog", None, args)
        self._dialog = None
        self._prompt_text = None

    async def _act(self, ref: str, node: SemanticsNode, action: SemanticsAction) -> bool:
        """Perform `action` on `ref`; whether requests it sent are still unanswered."""
        kind = action.kind
        pending = False
        steps = 0

        async def act(name: str, target: str, args: dict[str, Any] | None = None) -> None:
            nonlocal pending, steps
            steps += 1
            try:
                done = await self._act_on(name, target, args)
            except LocateError as error:
                if steps == 1 and error.details.get("reason") == "stale":
                    raise _StaleError(error) from error
                raise
            except NavigationError as error:
                loading = error.details.get("pending")
                if steps == 1 or not isinstance(loading, str):
                    raise
                raise _navigated_away(loading) from error  # the step before started it
            pending |= done.pending
            if done.opened:  # the user's browser shows the tab or popup the action opened
                await self._act_on("switchWindow", None, {"target": "newest"})

        option = (
            self._native_option(ref, toggle=kind is ActionKind.ACTIVATE)
            if kind in (ActionKind.SELECT, ActionKind.ACTIVATE)
            else None
        )
        if option is not None:
            select, values = option
            await act("selectOption", select, {"values": values})
        elif kind is ActionKind.COLLAPSE and node.role is Role.COMBO_BOX:
            await act("press", ref, {"key": "Escape"})  # a click lands in its text, or opens it
        elif (
            kind is ActionKind.EXPAND
            and node.role is Role.COMBO_BOX
            and self._native_of(ref, "editable") == "true"
        ):
            await self._open_by_keys(ref, act)  # a click lands in its text
        elif kind in _ARROW_OF and self._expands_by_keys(ref):
            await act("press", ref, {"key": _ARROW_OF[kind]})
        elif kind in _CLICKED:
            await act("click", ref)
        elif kind is ActionKind.FOCUS:
            await act("focus", ref)
        elif isinstance(action, SetText):
            await act("clear", ref, {"text": action.value} if action.value else None)
            if action.value:
                await act("type", ref, {"text": action.value})
        elif isinstance(action, SetNumericValue):
            await act("type", ref, {"text": _in_range(action.value, node.numeric)})
        elif kind in _STEP_SIGN and (stepped := self._stepped(ref, node, kind)) is not None:
            await act("type", ref, {"text": stepped})
        elif kind is ActionKind.DISMISS and node.role is Role.WEB_VIEW:
            await act("closeWindow", ref)
        elif kind is ActionKind.SUBMIT and node.role is Role.FORM:
            await act("submit", ref)  # Enter on a form, which takes no focus, does nothing
        elif kind in _KEY_OF:
            await act("press", ref, {"key": _KEY_OF[kind]})
        elif kind is ActionKind.SHOW_MENU:
            await act("rightClick", ref)
        elif kind is ActionKind.SCROLL:
            key = _SCROLL_KEYS.get(getattr(action, "direction", ScrollDirection.DOWN))
            if key is None:
                raise ActionabilityError("the surface has no horizontal scrolling")
            await act("press", ref, {"key": key})
        else:
            raise ActionabilityError(f"the surface has no way to {kind.value}")
        return pending

    def _stepped(self, ref: str, node: SemanticsNode, kind: ActionKind) -> str | None:
        """The value one step on from the range's for increment or decrement, within its
        bounds, where the surface sets it (``native["valuesettable"]``) and shows its value
        and step; None where the keys step it: on a page, whose range and number inputs
        take ArrowUp as a step up and whose ARIA sliders hear nothing else. A desktop
        toolkit's keys follow the range's orientation: a GTK scale takes ArrowUp as a step
        towards its start, down."""
        numeric = node.numeric
        if (
            self.surface.kind == "web"
            or self._native_of(ref, "valuesettable") != "true"
            or numeric is None
            or numeric.current is None
            or not numeric.step
        ):
            return None
        value = numeric.current + _STEP_SIGN[kind] * numeric.step
        if numeric.max is not None:
            value = min(value, numeric.max)
        if numeric.min is not None:
            value = max(value, numeric.min)
        return _in_range(float(f"{value:.12g}"), numeric)  # 0.1 + 0.2 is 0.3, as shown

    def _expands_by_keys(self, ref: str) -> bool:
        """Whether the surface says ArrowRight and ArrowLeft expand and collapse `ref` (a
        desktop tree row, where a click selects)."""
        return self._native_of(ref, "expand") == "keys"

    def _native_of(self, ref: str, key: str) -> str | None:
        """What the last surface snapshot says of `ref` in ``native[key]``."""
        if self.last_snapshot is None:
            return None
        item = next((n for n in self.last_snapshot.nodes if n.ref == ref), None)
        return None if item is None else item.native.get(key)

    async def _open_by_keys(
        self, ref: str, act: Callable[[str, str, dict[str, Any]], Awaitable[None]]
    ) -> None:
        """Expand a combo box one types into with the keys the ARIA pattern opens it with:
        Alt+ArrowDown, then ArrowDown if it is still collapsed. An ActionabilityError if it
        is collapsed after both, rather than a receipt for an expand that did not happen."""
        for key in _OPENING_KEYS:
            await act("press", ref, {"key": key})
            if not await self._still_collapsed(ref):
                return
        raise ActionabilityError(
            f"the combo box did not expand: it stayed collapsed after {' and '.join(_OPENING_KEYS)}"
        )

    async def _still_collapsed(self, ref: str) -> bool:
        """Whether the surface shows `ref` collapsed now; False when it cannot tell (it
        cannot be read, the element is gone): the keys were pressed."""
        try:
            snapshot, _ = await self._snapshot()
        except SurfaceError:
            return False
        item = next((n for n in snapshot.nodes if n.ref == ref), None)
        return item is not None and "collapsed" in item.states

    def _native_option(self, ref: str, *, toggle: bool = False) -> tuple[str, list[str]] | None:
        """The ref of the ``<select>`` holding the option `ref` and the values to select in
        it, when `ref` is one (a click cannot choose a native option; selectOption can): the
        option's, added to those selected already in a ``<select multiple>``; with `toggle`
        (activate, offered on an option of a ``<select multiple>`` alone), taken out of them
        if it is among them, as a ctrl-click does. Select stays idempotent: a retry of it
        never undoes it."""
        if self.last_snapshot is None:
            return None
        by_ref = {n.ref: n for n in self.last_snapshot.nodes}

        def select_of(item: SnapshotNode) -> SnapshotNode | None:
            holder = by_ref.get(item.parent or "")
            while holder is not None and holder.native.get("tag") != "select":
                holder = by_ref.get(holder.parent or "")
            return holder

        item = by_ref.get(ref)
        value = None if item is None else item.native.get("value")
        if item is None or value is None or item.native.get("tag") != "option":
            return None
        holder = select_of(item)
        if holder is None:
            return None
        if holder.native.get("multiselectable") != "true":
            return None if toggle else (holder.ref, [value])
        chosen = [
            n.native["value"]
            for n in self.last_snapshot.nodes
            if "selected" in n.states and "value" in n.native and select_of(n) is holder
        ]
        if toggle and "selected" in item.states:
            return holder.ref, [v for v in chosen if v != value]
        return holder.ref, list(dict.fromkeys([*chosen, value]))


def _in_range(value: float, numeric: Numeric | None) -> str:
    """`value` as the text ``type`` sets a range to; an ActionabilityError if it is outside
    the range the node shows (a browser would clamp it, and the agent would not be told)."""
    low = None if numeric is None else numeric.min
    high = None if numeric is None else numeric.max
    if low is not None and value < low:
        raise ActionabilityError(f"{value:g} is below the minimum, {low:g}")
    if high is not None and value > high:
        raise ActionabilityError(f"{value:g} is above the maximum, {high:g}")
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _navigated_away(url: str) -> NavigationError:
    """The error for an action of several steps whose page began loading `url` after the
    first (a field's focus handler, which clearing it for set_text ran, say)."""
    return NavigationError(
        f"the page navigated to {url} during the action (a focus or hover handler of the"
        " page's may have run): read again",
        details={"navigated": url},
    )


def _agents_words(error: SurfaceError, action: str, ref: str | None, ids: Mapping[str, int]) -> str:
    """`error`'s message naming elements by the node ids an agent knows (``node 7``) instead
    of the surface's refs: any the surface quotes (``ref 'e27'``; one no node stands for is
    "an element") and the target's `ref` wherever it stands alone (``e7``); and the action
    by the kind the agent asked for (``select``) instead of the surface's action it was done
    with (``selectOption``)."""

    def node(match: re.Match[str]) -> str:
        node_id = ids.get(match.group(1))
        return "an element" if node_id is None else f"node {node_id}"

    message = re.sub(r"\bref '([^']*)'", node, error.message)
    if ref is not None and ref in ids:
        message = re.sub(rf"(?<![\w-]){re.escape(ref)}(?![\w-])", f"node {ids[ref]}", message)
    done_with = error.details.get("action")
    if isinstance(done_with, str) and done_with != action:
        message = message.replace(f"could not take {done_with} ", f"could not take {action} ")
    return message


def _loading(snapshot: SemanticsSnapshot) -> bool:
    root = None if snapshot.root is None else snapshot.nodes.get(snapshot.root)
    return root is not None and root.state.busy


def _unreadable(error: SurfaceError) -> Rejection:
    """The surface could not be read (a script error, a page that keeps navigating): the
    tree stays as last committed, and the agent may try again."""
    return _reject(
        ErrorCode.HANDLER_REJECTED,
        f"the surface could not be read: {error.message}",
        failure=error.failure_class,
    )


def _rejection(
    error: SurfaceError,
    echoed: dict[str, Any],
    action: str,
    ref: str | None,
    ids: Mapping[str, int],
) -> Rejection:
    """The rejection `error` stands for, in the agent's words (`_agents_words`)."""
    navigated = error.details.get("navigated")
    if isinstance(navigated, str):  # as the action began: the page changed, not the target
        message = _navigated_away(navigated).message
        return _reject(ErrorCode.HANDLER_REJECTED, message, target=echoed, action=action)
    message = _agents_words(error, action, ref, ids)
    code = error.details.get("code")
    if isinstance(code, str):
        try:
            known = ErrorCode(code)
        except ValueError:
            known = None
        if known in (ErrorCode.TARGET_DISABLED, ErrorCode.TARGET_NOT_FOUND):
            return _reject(known, message, target=echoed)
        if known in (ErrorCode.ACTION_UNAVAILABLE, ErrorCode.HANDLER_REJECTED):
            return _reject(known, message, target=echoed, action=action)
    if error.details.get("reason") == "stale":  # quoting the surface's generations, not ours
        return _reject(ErrorCode.HANDLER_REJECTED, _CHANGED, target=echoed, action=action)
    if isinstance(error, LocateError):
        return _reject(ErrorCode.TARGET_NOT_FOUND, message, target=echoed)
    return _reject(ErrorCode.HANDLER_REJECTED, message, target=echoed, action=action)


_CHANGED: Final = "the application changed on its own as the action was being done: read again"


class _StaleError(Exception):
    """The surface refused an action's first step as stale (`error`): nothing was done."""

    def __init__(self, error: LocateError) -> None:
        super().__init__(error.message)
        self.error = error
