"""The event classes of the semantics log.

Every class is a frozen attrs value with an explicit ``VERSION``. Bump it whenever the
stored shape changes and register an upcaster from the old version (see ``_upcast``), so
logs written by older code keep decoding. Field values are plain msgpack data: ints
(generations, node ids and sequence numbers are u64), str, bool, float, bytes, None,
lists, and ``dict[str, Any]`` for the JSON wire payloads of SPEC §2.
"""

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, ClassVar, Literal, TypeAlias, get_args

import attrs

__all__ = [
    "EVENT_CLASSES",
    "INPUT_CLASSES",
    "OUTPUT_CLASSES",
    "TOPICS",
    "ActionReceipt",
    "ActionRejected",
    "ActionRequested",
    "AgentConnected",
    "CallRefused",
    "Committed",
    "DiagnosticsDispatched",
    "EffectCompleted",
    "EffectFailed",
    "EffectStarted",
    "EndedBy",
    "Event",
    "SemanticsTaken",
    "SessionCrashed",
    "SessionEnded",
    "SessionResumed",
    "SessionStarted",
    "SnapshotTaken",
    "SurfaceCalled",
    "TimerFired",
    "checked_end",
    "past_end",
    "topic_of",
]


_Validator: TypeAlias = Callable[[object, "attrs.Attribute[Any]", object], None]


def _of(*kinds: type) -> _Validator:
    """A validator of a field of an event made rarely (a session's start and end, a
    connection, a crash, a refused call, a failed effect).

    The log's summary keeps an app, a surface and an end's reason as they are given, and
    decoding reads every field back as its declared type (None as ``'None'``, 1 as True):
    one of another type would read back as damage, or as what was not given. The events
    made for each action are not checked, for the log writer's sake: the runtime makes them.
    """
    expected = " or ".join("None" if kind is type(None) else kind.__name__ for kind in kinds)

    def check(_event: object, field: "attrs.Attribute[Any]", value: object) -> None:
        if not isinstance(value, kinds):
            shown = f"{type(value).__name__} {value!r:.80}"
            raise TypeError(f"{field.name}: expected a {expected}, got {shown}")

    return check


_a_str = _of(str)
_a_str_or_none = _of(str, type(None))
_a_bool = _of(bool)
_a_dict = _of(dict)


@attrs.frozen
class SessionStarted:
    """The first event of a session.

    ``app`` is ``"module:attribute"``; ``surface`` is ``"runtime"`` or an adapter name.
    Version 1 had no ``surface`` (every session ran on the runtime).
    """

    VERSION: ClassVar[int] = 2
    app: str = attrs.field(validator=_a_str)
    surface: str = attrs.field(validator=_a_str)
    params: dict[str, Any] = attrs.field(validator=_a_dict)
    redact_passwords: bool = attrs.field(validator=_a_bool)

    @property
    def drives_a_surface(self) -> bool:
        """Whether a logged surface (``LoggedSurface``) started it, naming its adapter in
        the params: its log then holds the surface's calls, not an app's commits."""
        return "adapter" in self.params


@attrs.frozen
class AgentConnected:
    """An agent's MCP client began talking to the session (its ``initialize``): who it
    said it was, for the audit. Neither an input nor an output; replay passes over it."""

    VERSION: ClassVar[int] = 2
    client: Any
    """``clientInfo`` as the client sent it (``{"name", "version"}``, or anything)."""
    protocol_version: str | None = attrs.field(validator=_a_str_or_none)
    transport: str = attrs.field(validator=_a_str)
    """``"stdio"`` or ``"http"``, or what a program serving a transport of its own names it
    (``run_stdio(transport=)``, ``announce``)."""
    peer: str | None = attrs.field(validator=_a_str_or_none)
    """Over HTTP, the client's address (``host:port``); None over stdio, or what such a
    program gives."""
    resumed: bool = attrs.field(default=False, validator=_a_bool)
    """The client came back to the session with its id alone, sending no ``initialize``:
    over HTTP, after the server was restarted. ``client`` is then None (it said nothing of
    itself to this server) and ``protocol_version`` the ``MCP-Protocol-Version`` header it
    sent, if any. Version 1 had no such connections."""


@attrs.frozen
class SessionResumed:
    """A server took the session up again from its log (its last server stopped or was
    killed), for the audit: the effects still outstanding that it started again, which may
    so run twice. Neither an input nor an output; replay passes over it."""

    VERSION: ClassVar[int] = 1
    restarted: tuple[int, ...]
    """The ids of the effects started again, in order."""


# Inputs: everything a session accepts, in the order it accepted them.


@attrs.frozen
class ActionRequested:
    """A ``perform_action`` request; ``target``/``action``/``precondition`` are wire JSON.

    ``redacted`` says the action's typed value was replaced (see ``redact_action``).
    """

    VERSION: ClassVar[int] = 1
    request_id: int
    target: dict[str, Any]
    action: dict[str, Any]
    precondition: dict[str, Any]
    redacted: bool


@attrs.frozen
class EffectStarted:
    VERSION: ClassVar[int] = 1
    effect_id: int
    name: str


@attrs.frozen
class EffectCompleted:
    """An effect's resulting app message, already unstructured to msgpack data."""

    VERSION: ClassVar[int] = 1
    effect_id: int
    message: Any


@attrs.frozen
class EffectFailed:
    VERSION: ClassVar[int] = 2
    effect_id: int
    error: str = attrs.field(validator=_a_str)
    """``Type: message`` of what the effect raised, or why it was not run or finished."""
    traceback: str | None = attrs.field(default=None, validator=_a_str_or_none)
    """Where the effect raised, for the audit; None when it did not raise."""


@attrs.frozen
class TimerFired:
    VERSION: ClassVar[int] = 1
    timer_id: int
    message: Any


@attrs.frozen
class DiagnosticsDispatched:
    VERSION: ClassVar[int] = 1
    event: dict[str, Any]


# Outputs: what the session produced in answer.


@attrs.frozen
class Committed:
    """A commit: the wire Delta and the hex hash of the resulting public snapshot."""

    VERSION: ClassVar[int] = 1
    generation: int
    delta: dict[str, Any]
    snapshot_hash: str


@attrs.frozen
class ActionRejected:
    VERSION: ClassVar[int] = 1
    request_id: int
    code: str
    message: str
    details: dict[str, Any]


@attrs.frozen
class ActionReceipt:
    VERSION: ClassVar[int] = 1
    request_id: int
    before: int
    after: int
    pending_work: bool


@attrs.frozen
class CallRefused:
    """A ``perform_action`` call refused before it reached the session: its arguments are
    not a target, an action and a precondition (``code`` is ``invalid_arguments``).

    Not an input: the session never saw it, took no request id for it and changed nothing.
    ``arguments`` are the call's, as the agent sent them; ``redacted`` says values in them
    were replaced (a malformed action may still carry a password).
    """

    VERSION: ClassVar[int] = 1
    tool: str = attrs.field(validator=_a_str)
    arguments: dict[str, Any] = attrs.field(validator=_a_dict)
    code: str = attrs.field(validator=_a_str)
    message: str = attrs.field(validator=_a_str)
    redacted: bool = attrs.field(validator=_a_bool)


@attrs.frozen
class SnapshotTaken:
    """A recovery checkpoint: the full state at ``generation``, so replay can start here."""

    VERSION: ClassVar[int] = 1
    generation: int
    state: dict[str, Any]


@attrs.frozen
class SemanticsTaken:
    """A read checkpoint: the committed semantics at ``generation`` as a Full read (wire
    JSON), so a log-served read starts here instead of at generation 0. Unlike a
    `SnapshotTaken` it needs no model encoding, and holds only what the commits show.

    ``next_node_id`` is the id after every one given out by then, removed nodes' included,
    which the semantics cannot show: a served surface session resumes its node ids from
    it and the commits after it. None in version 1, which did not record it.
    """

    VERSION: ClassVar[int] = 2
    generation: int
    semantics: dict[str, Any]
    next_node_id: int | None


@attrs.frozen
class SurfaceCalled:
    """One call of the agent surface contract in an adapter session, with its outcome."""

    VERSION: ClassVar[int] = 1
    method: str
    arguments: dict[str, Any]
    result: dict[str, Any] | None
    error_class: str | None
    error_message: str | None
    snapshot_hash: str | None


@attrs.frozen
class SessionCrashed:
    VERSION: ClassVar[int] = 1
    exception_type: str = attrs.field(validator=_a_str)
    traceback: str = attrs.field(validator=_a_str)


EndedBy: TypeAlias = Literal["server", "client", "operator", "fuzzer"]
"""Who ended a session (`SessionEnded.by`)."""


def _ended_by(_event: object, _field: "attrs.Attribute[Any]", value: object) -> None:
    if value not in get_args(EndedBy):
        raise ValueError(f"by: expected one of {', '.join(get_args(EndedBy))}, got {value!r:.80}")


@attrs.frozen
class SessionEnded:
    VERSION: ClassVar[int] = 3
    reason: str = attrs.field(validator=_a_str)
    by: EndedBy = attrs.field(default="server", validator=_ended_by)
    """``"server"``: the process serving it (end of input, a signal, a park, a surface that
    closed), and serving it again resumes it. ``"client"``: its HTTP client (``DELETE``).
    ``"operator"``: ``semledger end``, logged while no server serves it. ``"fuzzer"``: a
    counterexample the fuzzer saved, a record to replay, not a session to go on with. Every
    end but the server's is final."""

    @property
    def final(self) -> bool:
        """Ended for good: no server takes the session up again."""
        return self.by != "server"


Event: TypeAlias = (
    SessionStarted
    | AgentConnected
    | SessionResumed
    | ActionRequested
    | EffectStarted
    | EffectCompleted
    | EffectFailed
    | TimerFired
    | DiagnosticsDispatched
    | Committed
    | ActionRejected
    | ActionReceipt
    | CallRefused
    | SnapshotTaken
    | SemanticsTaken
    | SurfaceCalled
    | SessionCrashed
    | SessionEnded
)

INPUT_CLASSES: tuple[type[Event], ...] = (
    ActionRequested,
    EffectCompleted,
    EffectFailed,
    TimerFired,
    DiagnosticsDispatched,
)
"""The events a session steps its application with: what recovery and replay feed back."""

OUTPUT_CLASSES: tuple[type[Event], ...] = (
    EffectStarted,
    Committed,
    ActionRejected,
    ActionReceipt,
    CallRefused,
    SnapshotTaken,
    SemanticsTaken,
    SurfaceCalled,
)

EVENT_CLASSES: tuple[type[Event], ...] = (
    SessionStarted,
    AgentConnected,
    SessionResumed,
    *INPUT_CLASSES,
    *OUTPUT_CLASSES,
    SessionCrashed,
    SessionEnded,
)

TOPICS: Mapping[type[Event], str] = MappingProxyType({cls: cls.__name__ for cls in EVENT_CLASSES})
"""Each event class's topic: the tag stored in the body and in the ``topic`` column.

A topic is part of the stored format: renaming a class must keep its topic.
"""


def topic_of(event: Event | type[Event]) -> str:
    """The topic of an event or event class; ``KeyError`` if it is not a log event."""
    cls = event if isinstance(event, type) else type(event)
    return TOPICS[cls]


def checked_end(
    seq: int, version: int, event: Event
) -> tuple[int, SessionEnded | SessionCrashed] | None:
    """``(seq, event)`` where `event`, logged as event `seq` at `version`, is an end whose
    next event `past_end` checks; None for any other event, and for a server's end logged
    at version 1: servers then resumed with no `SessionResumed`, which a log of theirs
    cannot tell from an edit."""
    if isinstance(event, SessionCrashed) or (isinstance(event, SessionEnded) and version > 1):
        return seq, event
    return None


def past_end(seq: int, end: SessionEnded | SessionCrashed, event: Event) -> str | None:
    """What is wrong with `event`, logged right after `end` (event `seq`), where nothing
    logs it; None where something does.

    After a server's end (for now) come the first event of a server resuming the session
    (an app session's `SessionResumed`, a surface session's new `SessionStarted`), or an end
    for good logged without resuming it (``semledger end``, an HTTP ``DELETE`` of a parked
    session). After an end for good, or a crash, nothing does: each is refused a resume.
    """
    if isinstance(end, SessionCrashed):
        return f"follows the session's crash at event {seq}, after which nothing is logged"
    if end.final:
        return f"follows the session's end for good at event {seq}, after which nothing is logged"
    if isinstance(event, SessionResumed | SessionStarted):
        return None
    if isinstance(event, SessionEnded) and event.by in ("client", "operator"):
        return None
    return f"follows the session's end at event {seq} with no resume"
