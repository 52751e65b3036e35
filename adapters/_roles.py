"""Role tables: the one source of truth for mapping a platform's roles to ARIA (seed §3).

``docs/surface.md`` renders these tables (``scripts/generate.py``); a test regenerates the
document and fails when it drifts. Anything absent from a table maps to ``generic``, and an
unmapped control still appears in a snapshot: never drop it.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final, Literal, get_args

import attrs

RolePlatform = Literal["uia", "ax", "android", "atspi", "runtime", "aria"]
ROLE_PLATFORMS: Final[tuple[str, ...]] = get_args(RolePlatform)

GENERIC: Final = "generic"

UIA_ROLES: Final[Mapping[str, str]] = MappingProxyType({
    "AppBar": "toolbar",
    "Button": "button",
    "Calendar": "grid",
    "CheckBox": "checkbox",
    "ComboBox": "combobox",
    "Custom": "generic",
    "DataGrid": "grid",
    "DataItem": "row",
    "Document": "document",
    "Edit": "textbox",
    "Group": "group",
    "Header": "rowgroup",
    "HeaderItem": "columnheader",
    "Hyperlink": "link",
    "Image": "img",
    "List": "listbox",
    "ListItem": "option",
    "Menu": "menu",
    "MenuBar": "menubar",
    "MenuItem": "menuitem",
    "Pane": "group",
    "ProgressBar": "progressbar",
    "RadioButton": "radio",
    "ScrollBar": "scrollbar",
    "Separator": "separator",
    "Slider": "slider",
    "Spinner": "spinbutton",
    "SplitButton": "button",
    "StatusBar": "status",
    "Tab": "tablist",
    "TabItem": "tab",
    "Table": "table",
    "Text": "text",
    "Thumb": "generic",
    "TitleBar": "banner",
    "ToolBar": "toolbar",
    "ToolTip": "tooltip",
    "Tree": "tree",
    "TreeItem": "treeitem",
    "Window": "window",
})
"""Windows UI Automation ControlType -> ARIA role (REQ-ADP-6)."""

AX_ROLES: Final[Mapping[str, str]] = MappingProxyType({
    "AXApplication": "application",
    "AXBrowser": "group",
    "AXBusyIndicator": "progressbar",
    "AXButton": "button",
    "AXCell": "cell",
    "AXCheckBox": "checkbox",
    "AXColorWell": "button",
    "AXColumn": "group",
    "AXComboBox": "combobox",
    "AXDisclosureTriangle": "button",
    "AXDrawer": "group",
    "AXGroup": "group",
    "AXGrowArea": "generic",
    "AXHeading": "heading",
    "AXHelpTag": "tooltip",
    "AXImage": "img",
    "AXIncrementor": "spinbutton",
    "AXLink": "link",
    "AXList": "listbox",
    "AXMenu": "menu",
    "AXMenuBar": "menubar",
    "AXMenuButton": "button",
    "AXMenuItem": "menuitem",
    "AXOutline": "tree",
    "AXOutlineRow": "treeitem",
    "AXPopUpButton": "combobox",
    "AXProgressIndicator": "progressbar",
    "AXRadioButton": "radio",
    "AXRadioGroup": "radiogroup",
    "AXRow": "row",
    "AXScrollArea": "group",
    "AXScrollBar": "scrollbar",
    "AXSecureTextField": "textbox",
    "AXSheet": "dialog",
    "AXSlider": "slider",
    "AXSplitGroup": "group",
    "AXSplitter": "separator",
    "AXStaticText": "text",
    "AXTabGroup": "tablist",
    "AXTable": "table",
    "AXTextArea": "textbox",
    "AXTextField": "textbox",
    "AXToolbar": "toolbar",
    "AXUnknown": "generic",
    "AXValueIndicator": "generic",
    "AXWebArea": "document",
    "AXWindow": "window",
})
"""macOS Accessibility AXRole -> ARIA role (REQ-ADP-7)."""

ANDROID_ROLES: Final[Mapping[str, str]] = MappingProxyType({
    "android.app.Dialog": "dialog",
    "android.view.View": "generic",
    "android.view.ViewGroup": "group",
    "android.webkit.WebView": "document",
    "android.widget.Button": "button",
    "android.widget.CheckBox": "checkbox",
    "android.widget.CheckedTextView": "option",
    "android.widget.EditText": "textbox",
    "android.widget.FrameLayout": "group",
    "android.widget.HorizontalScrollView": "group",
    "android.widget.ImageButton": "button",
    "android.widget.ImageView": "img",
    "android.widget.LinearLayout": "group",
    "android.widget.ListView": "list",
    "android.widget.NumberPicker": "spinbutton",
    "android.widget.ProgressBar": "progressbar",
    "android.widget.RadioButton": "radio",
    "android.widget.RadioGroup": "radiogroup",
    "android.widget.RatingBar": "slider",
    "android.widget.RelativeLayout": "group",
    "android.widget.ScrollView": "group",
    "android.widget.SearchView": "searchbox",
    "android.widget.SeekBar": "slider",
    "android.widget.Spinner": "combobox",
    "android.widget.Switch": "switch",
    "android.widget.TabWidget": "tablist",
    "android.widget.TextView": "text",
    "android.widget.ToggleButton": "switch",
    "android.widget.Toolbar": "toolbar",
    "androidx.recyclerview.widget.RecyclerView": "list",
})
"""Appium native Android class -> ARIA role (REQ-ADP-5)."""

ATSPI_ROLES: Final[Mapping[str, str]] = MappingProxyType({
    "application": "application",
    "check box": "checkbox",
    "check menu item": "menuitemcheckbox",
    "column header": "columnheader",
    "combo box": "combobox",
    "dialog": "dialog",
    "document": "document",
    "document frame": "document",
    "document web": "document",
    "entry": "textbox",
    "filler": "generic",
    "frame": "window",
    "heading": "heading",
    "icon": "img",
    "image": "img",
    "label": "text",
    "link": "link",
    "list": "list",
    "list box": "listbox",
    "list item": "listitem",
    "menu": "menu",
    "menu bar": "menubar",
    "menu item": "menuitem",
    "page tab": "tab",
    "page tab list": "tablist",
    "panel": "group",
    "password text": "textbox",
    "progress bar": "progressbar",
    "push button": "button",
    "radio button": "radio",
    "radio menu item": "menuitemradio",
    "row header": "rowheader",
    "scroll bar": "scrollbar",
    "scroll pane": "group",
    "section": "group",
    "separator": "separator",
    "slider": "slider",
    "spin button": "spinbutton",
    "split pane": "group",
    "statusbar": "status",
    "table": "table",
    "table cell": "cell",
    "table column header": "columnheader",
    "table row": "row",
    "table row header": "rowheader",
    "text": "text",
    "toggle button": "button",
    "tool bar": "toolbar",
    "tool tip": "tooltip",
    "tree": "tree",
    "tree item": "treeitem",
    "tree table": "treegrid",
    "viewport": "group",
    "window": "window",
})
"""AT-SPI role name (Accessible.getRoleName()) -> ARIA role (REQ-ADP-7, SF-23)."""
RUNTIME_ROLES: Final[Mapping[str, str]] = MappingProxyType({
    "none": "generic",
    "text": "text",
    "link": "link",
    "heading": "heading",
    "navigation": "navigation",
    "main": "main",
    "button": "button",
    "checkbox": "checkbox",
    "text_field": "textbox",
    "list": "list",
    "list_item": "listitem",
    "grid": "grid",
    "scroll_view": "group",
    "switch": "switch",
    "radio": "radio",
    "slider": "slider",
    "progress": "progressbar",
    "tab": "tab",
    "dialog": "dialog",
    "tooltip": "tooltip",
    "menu": "menu",
    "button_group": "group",
    "form": "form",
    "form_field": "group",
    "tree": "tree",
    "tree_item": "treeitem",
    "group": "group",
    "web_view": "document",
    "image": "img",
    "alert": "alert",
    "status": "status",
    "combo_box": "combobox",
    "option": "option",
    "table": "table",
    "row": "row",
    "cell": "cell",
    "separator": "separator",
})
"""semledger's own runtime roles (SPEC §2.5, lowercase on the wire) -> ARIA role."""

ARIA_ROLES: Final[frozenset[str]] = frozenset({
    "alert", "alertdialog", "application", "article", "banner", "blockquote", "button",
    "caption", "cell", "checkbox", "code", "columnheader", "combobox", "complementary",
    "contentinfo", "definition", "deletion", "dialog", "directory", "document", "emphasis",
    "feed", "figure", "form", "generic", "grid", "gridcell", "group", "heading", "img",
    "insertion", "link", "list", "listbox", "listitem", "log", "main", "marquee", "math",
    "menu", "menubar", "menuitem", "menuitemcheckbox", "menuitemradio", "meter",
    "navigation", "note", "option", "paragraph", "progressbar", "radio", "radiogroup",
    "region", "row", "rowgroup", "rowheader", "scrollbar", "search", "searchbox",
    "separator", "slider", "spinbutton", "status", "strong", "subscript", "superscript",
    "switch", "tab", "table", "tablist", "tabpanel", "term", "textbox", "time", "timer",
    "toolbar", "tooltip", "tree", "treegrid", "treeitem",
    # Not WAI-ARIA 1.2, but what accessibility trees call them and the seed's tables use:
    "text", "window",
})  # fmt: skip
"""The roles a SnapshotNode may carry. ``none`` and ``presentation`` are not among them:
an element with no semantics is ``generic``."""


@attrs.frozen
class RoleTable:
    """One platform's table, with the headings its documentation uses."""

    platform: str
    title: str
    native_heading: str
    roles: Mapping[str, str] = attrs.field(hash=False)


ROLE_TABLES: Final[tuple[RoleTable, ...]] = (
    RoleTable("uia", "Windows UI Automation (REQ-ADP-6)", "UIA ControlType", UIA_ROLES),
    RoleTable("ax", "macOS Accessibility (REQ-ADP-7)", "macOS AXRole", AX_ROLES),
    RoleTable("android", "Appium, native Android (REQ-ADP-5)", "Android class", ANDROID_ROLES),
    RoleTable(
        "atspi", "AT-SPI, the Linux desktop (REQ-ADP-7, SF-23)", "AT-SPI role name", ATSPI_ROLES
    ),
    RoleTable("runtime", "semledger runtime roles (SPEC §2.5)", "Runtime role", RUNTIME_ROLES),
)
"""Every mapped platform, in documentation order. ``aria`` has no table: it passes known
ARIA roles through."""

_TABLES: Final[Mapping[str, Mapping[str, str]]] = MappingProxyType(
    {table.platform: table.roles for table in ROLE_TABLES}
)


def to_aria(platform: RolePlatform, native_role: str) -> str:
    """The ARIA role for ``native_role`` on ``platform``; ``generic`` for anything the
    platform's table does not map. Platform ``aria`` (web pages, webview contexts) keeps a
    known ARIA role and maps the rest, ``none`` and ``presentation`` included, to generic.

    Raises ValueError for an unknown platform: that is a bug in the caller, not a role."""
    if platform == "aria":
        return native_role if native_role in ARIA_ROLES else GENERIC
    table = _TABLES.get(platform)
    if table is None:
        raise ValueError(f"unknown role platform {platform!r}; expected one of {ROLE_PLATFORMS}")
    return table.get(native_role, GENERIC)
