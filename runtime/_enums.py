"""The closed vocabularies of the semantics tree."""

from __future__ import annotations

from enum import Enum, StrEnum


class Role(StrEnum):
    NONE = "none"
    TEXT = "text"
    LINK = "link"
    HEADING = "heading"
    NAVIGATION = "navigation"
    MAIN = "main"
    BUTTON = "button"
    CHECKBOX = "checkbox"
    TEXT_FIELD = "text_field"
    LIST = "list"
    LIST_ITEM = "list_item"
    GRID = "grid"
    SCROLL_VIEW = "scroll_view"
    SWITCH = "switch"
    RADIO = "radio"
    SLIDER = "slider"
    PROGRESS = "progress"
    TAB = "tab"
    DIALOG = "dialog"
    TOOLTIP = "tooltip"
    MENU = "menu"
    BUTTON_GROUP = "button_group"
    FORM = "form"
    FORM_FIELD = "form_field"
    TREE = "tree"
    TREE_ITEM = "tree_item"
    GROUP = "group"
    WEB_VIEW = "web_view"
    IMAGE = "image"
    ALERT = "alert"
    STATUS = "status"
    COMBO_BOX = "combo_box"
    OPTION = "option"
    TABLE = "table"
    ROW = "row"
    CELL = "cell"
    SEPARATOR = "separator"


class ActionKind(StrEnum):
    ACTIVATE = "activate"
    FOCUS = "focus"
    SUBMIT = "submit"
    SELECT = "select"
    EXPAND = "expand"
    COLLAPSE = "collapse"
    DISMISS = "dismiss"
    INCREMENT = "increment"
    DECREMENT = "decrement"
    SHOW_MENU = "show_menu"
    SET_TEXT = "set_text"
    SCROLL = "scroll"
    SET_NUMERIC_VALUE = "set_numeric_value"
    SET_SELECTION = "set_selection"


class ScrollDirection(StrEnum):
    FORWARD = "forward"
    BACKWARD = "backward"
    UP = "up"
    DOWN = "down"
    LEFT = "left"
    RIGHT = "right"


class Checked(StrEnum):
    UNCHECKED = "unchecked"
    CHECKED = "checked"
    MIXED = "mixed"


class Live(StrEnum):
    OFF = "off"
    POLITE = "polite"
    ASSERTIVE = "assertive"


class Composition(StrEnum):
    """How a view node's semantics combine with its descendants'."""

    TRANSPARENT = "transparent"
    """A node only when it carries semantics of its own; else its children lift to its parent."""
    BOUNDARY = "boundary"
    """Always a node of its own, even with role none, so its children stay grouped under it."""
    MERGE_DESCENDANTS = "merge_descendants"
    """One node: descendants' labels joined with spaces, states merged, no children."""
    HIDDEN = "hidden"
    """Neither the node nor anything below it is in the semantics tree (it stays mounted)."""


class Relation(StrEnum):
    LABELLED_BY = "labelled_by"
    DESCRIBED_BY = "described_by"
    CONTROLS = "controls"
    ERROR_MESSAGE = "error_message"
    ACTIVE_DESCENDANT = "active_descendant"


class ErrorCode(StrEnum):
    INVALID_ARGUMENTS = "invalid_arguments"
    UNKNOWN_TOOL = "unknown_tool"
    HOST_CLOSED = "host_closed"
    REENTRANT_DISPATCH = "reentrant_dispatch"
    STALE_GENERATION = "stale_generation"
    TARGET_NOT_FOUND = "target_not_found"
    TARGET_DISABLED = "target_disabled"
    TARGET_AMBIGUOUS = "target_ambiguous"
    ACTION_UNAVAILABLE = "action_unavailable"
    HANDLER_REJECTED = "handler_rejected"
    CONFIRMATION_REQUIRED = "confirmation_required"
    POLICY_DENIED = "policy_denied"


def member_hint(kind: type, value: object) -> str:
    """`` (give Live.POLITE)`` for ``"polite"`` given where a member of `kind` belongs, else
    ``""``: an app's author writes the wire's string where the builders take the member."""
    if not issubclass(kind, Enum) or not isinstance(value, str):
        return ""
    try:
        member = kind(value)
    except ValueError:
        return ""
    return f" (give {kind.__name__}.{member.name})"
