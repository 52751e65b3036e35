"""Candidates: the stored ways of finding an element again (seed §5).

Each kind is an attrs class whose ``by`` tag leads its wire object. ``locate`` answers a
candidate with every matching ref and never falls back to another kind.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import ClassVar, Final, Literal

import attrs

from ._wire import limits

_TEXT = limits(minLength=1)


@attrs.frozen
class RoleCandidate:
    """An ARIA role, optionally with an accessible name (substring unless ``exact``)."""

    by: ClassVar[Literal["role"]] = "role"
    role: str = attrs.field(metadata=_TEXT)
    name: str | None = None
    exact: bool = False


@attrs.frozen
class LabelCandidate:
    """The text of the element's label."""

    by: ClassVar[Literal["label"]] = "label"
    value: str = attrs.field(metadata=_TEXT)
    exact: bool = False


@attrs.frozen
class PlaceholderCandidate:
    """The element's placeholder text."""

    by: ClassVar[Literal["placeholder"]] = "placeholder"
    value: str = attrs.field(metadata=_TEXT)
    exact: bool = False


@attrs.frozen
class TestIdCandidate:
    """A test id attribute; ``attribute`` names it (``data-testid`` unless configured)."""

    by: ClassVar[Literal["testid"]] = "testid"
    __test__: ClassVar[bool] = False  # not a pytest test class, whatever its name
    value: str = attrs.field(metadata=_TEXT)
    attribute: str = attrs.field(default="data-testid", metadata=_TEXT)


@attrs.frozen
class TextCandidate:
    """The element's visible text."""

    by: ClassVar[Literal["text"]] = "text"
    value: str = attrs.field(metadata=_TEXT)
    exact: bool = False


@attrs.frozen
class AltTextCandidate:
    """An image's alternative text."""

    by: ClassVar[Literal["altText"]] = "altText"
    value: str = attrs.field(metadata=_TEXT)
    exact: bool = False


@attrs.frozen
class TitleCandidate:
    """The element's title attribute."""

    by: ClassVar[Literal["title"]] = "title"
    value: str = attrs.field(metadata=_TEXT)
    exact: bool = False


@attrs.frozen
class CssCandidate:
    """A CSS selector."""

    by: ClassVar[Literal["css"]] = "css"
    value: str = attrs.field(metadata=_TEXT)


@attrs.frozen
class XPathCandidate:
    """An XPath expression (web pages and Appium page sources)."""

    by: ClassVar[Literal["xpath"]] = "xpath"
    value: str = attrs.field(metadata=_TEXT)


@attrs.frozen
class IdCandidate:
    """The element's id attribute."""

    by: ClassVar[Literal["id"]] = "id"
    value: str = attrs.field(metadata=_TEXT)


@attrs.frozen
class NameCandidate:
    """The element's name attribute (a form control's), or its accessible name on AT-SPI."""

    by: ClassVar[Literal["name"]] = "name"
    value: str = attrs.field(metadata=_TEXT)


@attrs.frozen
class AccessibilityIdCandidate:
    """A mobile accessibility id (Android content-desc)."""

    by: ClassVar[Literal["accessibilityId"]] = "accessibilityId"
    value: str = attrs.field(metadata=_TEXT)


@attrs.frozen
class ResourceIdCandidate:
    """An Android resource-id."""

    by: ClassVar[Literal["resourceId"]] = "resourceId"
    value: str = attrs.field(metadata=_TEXT)


@attrs.frozen
class AutomationIdCandidate:
    """A desktop automation id: UIA AutomationId, AXIdentifier, AT-SPI accessible-id."""

    by: ClassVar[Literal["automationId"]] = "automationId"
    value: str = attrs.field(metadata=_TEXT)


@attrs.frozen
class ControlPathCandidate:
    """A desktop control path such as ``Window[name]/Pane[2]/Button[name]``: roles (any
    case), each with a name, a 1-based position among its siblings of that role, or
    neither (`parse_control_path`)."""

    by: ClassVar[Literal["controlPath"]] = "controlPath"
    value: str = attrs.field(metadata=_TEXT)


@attrs.frozen
class WebMcpCandidate:
    """A tool the page declared; located as a ref no element backs, acted on by calling it."""

    by: ClassVar[Literal["webmcp"]] = "webmcp"
    tool: str = attrs.field(metadata=_TEXT)


@attrs.frozen
class CoordsCandidate:
    """A point in the viewport or window, the last resort."""

    by: ClassVar[Literal["coords"]] = "coords"
    x: float
    y: float


Candidate = (
    RoleCandidate
    | LabelCandidate
    | PlaceholderCandidate
    | TestIdCandidate
    | TextCandidate
    | AltTextCandidate
    | TitleCandidate
    | CssCandidate
    | XPathCandidate
    | IdCandidate
    | NameCandidate
    | AccessibilityIdCandidate
    | ResourceIdCandidate
    | AutomationIdCandidate
    | ControlPathCandidate
    | WebMcpCandidate
    | CoordsCandidate
)

CANDIDATE_CLASSES: Final[Mapping[str, type[Candidate]]] = MappingProxyType({
    cls.by: cls
    for cls in (
        RoleCandidate, LabelCandidate, PlaceholderCandidate, TestIdCandidate, TextCandidate,
        AltTextCandidate, TitleCandidate, CssCandidate, XPathCandidate, IdCandidate,
        NameCandidate, AccessibilityIdCandidate, ResourceIdCandidate, AutomationIdCandidate,
        ControlPathCandidate, WebMcpCandidate, CoordsCandidate,
    )
})  # fmt: skip
"""``by`` -> candidate class."""

CANDIDATE_GROUPS: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType({
    "web": (
        "role", "label", "placeholder", "testid", "text", "altText", "title", "css",
        "xpath", "id", "name",
    ),
    "mobile": ("accessibilityId", "resourceId"),
    "desktop": ("automationId", "controlPath"),
    "declared tools": ("webmcp",),
    "last resort": ("coords",),
})  # fmt: skip
"""The seed's groups of candidate kinds."""
