"""The shapes of the surface calls: act, read, check, describe, and the optional request
and observe."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import ClassVar, Final, Literal, get_args

import attrs

from ._actions import SurfaceAction
from ._candidates import Candidate
from ._snapshot import NodeState
from ._wire import limits

ReadKind = Literal["text", "value", "attribute", "title", "url", "result"]
READ_KINDS: Final[tuple[str, ...]] = get_args(ReadKind)
CheckSubject = Literal["ref", "page", "dialog"]
CHECK_SUBJECTS: Final[tuple[str, ...]] = get_args(CheckSubject)


# -- act ------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class ActArgs:
    """The arguments of one action; each action reads the fields it needs: ``url``
    (navigate), ``text`` (type; optional on clear: the text a type sets next, see
    docs/surface.md), ``key`` (press, keyDown, keyUp), ``values`` (selectOption,
    deselectOption), ``checked`` (setChecked), ``files`` (upload), ``ms`` (sleep),
    ``wait_state`` (waitFor), ``width``/``height`` (resizeWindow), ``target`` (switchWindow,
    switchFrame), ``accept``/``prompt_text`` (dialog), ``script`` (evaluate), ``path``
    (screenshot), ``story`` (invoke), ``timeout_ms`` (any)."""

    url: str | None = None
    text: str | None = None
    key: str | None = None
    values: tuple[str, ...] | None = None
    checked: bool | None = None
    files: tuple[str, ...] | None = None
    ms: int | None = attrs.field(default=None, metadata=limits(minimum=0))
    wait_state: Literal["visible", "hidden", "attached", "detached"] | None = None
    width: int | None = attrs.field(default=None, metadata=limits(minimum=1))
    height: int | None = attrs.field(default=None, metadata=limits(minimum=1))
    target: str | None = None
    accept: bool | None = None
    prompt_text: str | None = None
    script: str | None = None
    path: str | None = None
    story: str | None = None
    timeout_ms: int | None = attrs.field(default=None, metadata=limits(minimum=0))


@attrs.frozen
class ActRequest:
    """One ``act`` call: an action, by reference; ``ref2`` only for two-element actions."""

    action: SurfaceAction
    ref: str | None = None
    args: ActArgs | None = None
    ref2: str | None = None


@attrs.frozen(kw_only=True)
class ActResult:
    """What an action did: whether it navigated, the URL after it, a textual result
    (read, evaluate), the structural hash after it when the adapter knows it, whether
    requests it sent (a page's fetch or XHR) were still unanswered when it returned, and
    whether it opened a window (a tab, a popup; not switched to)."""

    navigated: bool = False
    url: str | None = None
    result: str | None = None
    hash: str | None = None
    pending: bool = False
    opened: bool = False


# -- read -----------------------------------------------------------------------------


@attrs.frozen
class ReadRequest:
    """One ``read`` call: element text or value, an attribute (``name``), the page title or
    URL, or the last action's result."""

    kind: ReadKind
    ref: str | None = None
    name: str | None = None


# -- check ----------------------------------------------------------------------------


@attrs.frozen
class Visible:
    """The subject is shown."""

    kind: ClassVar[Literal["visible"]] = "visible"


@attrs.frozen
class Hidden:
    """The subject is absent or not shown."""

    kind: ClassVar[Literal["hidden"]] = "hidden"


@attrs.frozen
class Enabled:
    """The element accepts input."""

    kind: ClassVar[Literal["enabled"]] = "enabled"


@attrs.frozen
class Disabled:
    """The element is disabled."""

    kind: ClassVar[Literal["disabled"]] = "disabled"


@attrs.frozen
class Checked:
    """The checkbox, radio or switch is on."""

    kind: ClassVar[Literal["checked"]] = "checked"


@attrs.frozen
class Unchecked:
    """The checkbox, radio or switch is off."""

    kind: ClassVar[Literal["unchecked"]] = "unchecked"


@attrs.frozen
class Focused:
    """The element has keyboard focus."""

    kind: ClassVar[Literal["focused"]] = "focused"


@attrs.frozen
class TextEquals:
    """The subject's text (an element's, a dialog's message) equals ``text``."""

    kind: ClassVar[Literal["textEquals"]] = "textEquals"
    text: str
    ignore_case: bool = False


@attrs.frozen
class TextContains:
    """The subject's text contains ``text``."""

    kind: ClassVar[Literal["textContains"]] = "textContains"
    text: str
    ignore_case: bool = False


@attrs.frozen
class ValueEquals:
    """The element's value equals ``value``."""

    kind: ClassVar[Literal["valueEquals"]] = "valueEquals"
    value: str


@attrs.frozen
class Count:
    """Exactly ``count`` elements match ``candidate`` (subject ``page``)."""

    kind: ClassVar[Literal["count"]] = "count"
    candidate: Candidate
    count: int = attrs.field(metadata=limits(minimum=0))


@attrs.frozen
class UrlMatches:
    """The page URL matches the regular expression ``pattern`` (searched, not anchored)."""

    kind: ClassVar[Literal["urlMatches"]] = "urlMatches"
    pattern: str


@attrs.frozen
class TitleMatches:
    """The page title matches the regular expression ``pattern`` (searched, not anchored)."""

    kind: ClassVar[Literal["titleMatches"]] = "titleMatches"
    pattern: str


Predicate = (
    Visible
    | Hidden
    | Enabled
    | Disabled
    | Checked
    | Unchecked
    | Focused
    | TextEquals
    | TextContains
    | ValueEquals
    | Count
    | UrlMatches
    | TitleMatches
)

PREDICATE_SUBJECTS: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType({
    "visible": ("ref", "dialog"),
    "hidden": ("ref", "dialog"),
    "enabled": ("ref",),
    "disabled": ("ref",),
    "checked": ("ref",),
    "unchecked": ("ref",),
    "focused": ("ref",),
    "textEquals": ("ref", "dialog"),
    "textContains": ("ref", "page", "dialog"),
    "valueEquals": ("ref",),
    "count": ("page",),
    "urlMatches": ("page",),
    "titleMatches": ("page",),
})
"""Predicate kind -> the subjects it can be evaluated against; anything else is a
CheckError (the predicate could not be evaluated)."""


@attrs.frozen
class CheckRequest:
    """One ``check`` call: a predicate against an element (``ref``), the page or a dialog."""

    predicate: Predicate
    subject: CheckSubject
    ref: str | None = None


@attrs.frozen(kw_only=True)
class CheckResult:
    """The predicate's outcome; ``ok=False`` is an answer, not an error. ``actual`` is what
    was observed, for the report."""

    ok: bool
    actual: str | None = None
    message: str | None = None


# -- describe -------------------------------------------------------------------------


@attrs.frozen
class PathStep:
    """One ancestor on the way to an element: its role, its name, and its index among the
    siblings of that role (what a control path is synthesised from)."""

    role: str
    name: str | None = None
    index: int = attrs.field(default=0, metadata=limits(minimum=0))


@attrs.frozen(kw_only=True)
class ElementDescription:
    """Everything candidate synthesis and fingerprinting need for one element: its
    accessible facts, its box, its native attributes (``data-testid``, ``AutomationId``,
    ``resource-id``) and its path from the root."""

    ref: str = attrs.field(metadata=limits(minLength=1))
    role: str = attrs.field(metadata=limits(minLength=1))
    name: str | None = None
    value: str | None = None
    description: str | None = None
    text: str | None = None
    placeholder: str | None = None
    states: tuple[NodeState, ...] = attrs.field(default=(), metadata=limits(uniqueItems=True))
    box: tuple[float, float, float, float] | None = None
    native: Mapping[str, str] = attrs.field(factory=dict, hash=False)
    path: tuple[PathStep, ...] = ()
    frame: str | None = None


# -- the optional methods ---------------------------------------------------------------


@attrs.frozen(kw_only=True)
class ApiRequest:
    """A named HTTP request for ``request`` (REQ-ADP-3)."""

    method: Literal["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
    url: str = attrs.field(metadata=limits(minLength=1))
    name: str | None = None
    headers: Mapping[str, str] = attrs.field(factory=dict, hash=False)
    body: str | None = None
    timeout_ms: int | None = attrs.field(default=None, metadata=limits(minimum=0))


@attrs.frozen(kw_only=True)
class ApiResponse:
    """The answer to an ApiRequest."""

    status: int = attrs.field(metadata=limits(minimum=100, maximum=599))
    headers: Mapping[str, str] = attrs.field(factory=dict, hash=False)
    body: str | None = None


@attrs.frozen(kw_only=True)
class ObservedEvent:
    """What a person did in an observed session, on the element ``ref``."""

    kind: Literal["click", "input", "select", "key", "navigate"]
    ref: str | None = None
    value: str | None = None
    key: str | None = None
    url: str | None = None
