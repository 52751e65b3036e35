"""The transport-free MCP router (SPEC §2.1–§2.3), sans-IO in the style of h11.

The transport feeds it what it read (`Router.receive_line` for one NDJSON line,
`Router.receive_message` for a parsed JSON value) and gets back events: a `Reply` is a
JSON-RPC response to write; a `ToolCall` is work to run against a host. When that work is
done the transport hands its outcome (the host's return value, or the exception it raised)
to `Router.complete`, which answers with the tool result. The router does no I/O, reads no
clock and never raises on anything a peer sends: a bug inside it is answered with ``-32603``
and the next message is handled normally.

Decisions beyond the letter of the specs:

- JSON-RPC batches (a JSON array) are taken apart only on a session that negotiated a
  version whose transports take them (`BATCHING_PROTOCOL_VERSIONS`: 2024-11-05 and
  2025-03-26). Each member is handled as a message of its own, its calls sent ahead as
  lines are, and the batch is answered with one array, in the order of its members, once
  its last call is complete (no array at all for a batch of notifications and responses).
  Before ``initialize`` (no version yet), on a 2025-06-18 or later session (which removed
  batching), and for an empty array, the batch is answered with one ``-32600`` whose id is
  null, and none of it is handled. An ``initialize`` inside a batch (MCP: it MUST NOT be
  one) is answered ``-32600`` in the array, and negotiates nothing.
- ``notifications/cancelled`` is understood and deliberately not acted on: an action is a
  logged transaction that is never abandoned half-way, so the request is still answered and
  the client, per MCP, ignores a response that arrives after it cancelled.
- An id is a string or an integer, and JSON has one number type: ``1.0`` and ``1e2`` are
  integers (as JSON Schema, and so MCP's schema, counts them), taken as the ids ``1`` and
  ``100`` (``1`` and ``1.0`` are one id) and answered with the number as it was read.
  ``"id": null`` makes a request invalid (MCP forbids null ids); so does a boolean or a
  fractional id. Such a request is answered ``-32600``: with its id if that is a number
  (``2.5``), so the client can match the error, else with a null id (JSON-RPC has no
  boolean id, and a number too large for a double, ``1e400``, cannot be written back).
  An integer of more digits than Python reads from text (4300) is read as ``1e400`` is,
  infinite with its sign, wherever it is (`parse_json`): its line is JSON, and its request
  is answered by the rules for such a number, not with ``-32700``.
- A response (``"jsonrpc": "2.0"``, an id, exactly one of ``result`` and ``error``, no
  ``method``) answers nothing: this server never sends requests, so it is ignored, and
  answering it could start an exchange of errors with a peer that answers them too. Its id
  is a string or an integer, or null beside an ``error`` (JSON-RPC's answer to a request
  whose id could not be read). Any other message with no ``method``, or a message with a
  ``method`` and a ``result`` or ``error`` too, is an invalid request (``-32600``).
- For every method, ``params`` present and not an object is ``-32602``.
- A ``perform_action`` whose arguments do not decode is still a `ToolCall`, with
  `RefusedArguments`: the host can log the refusal before it is answered
  ``invalid_arguments``, so an audit shows every ``perform_action`` an agent sent. Bad
  arguments to the other tools are answered at once.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any, Final

import attrs

from semledger.runtime._actions import Precondition, SemanticsAction, Target
from semledger.runtime._enums import ErrorCode
from semledger.runtime._outcomes import Receipt, Rejection
from semledger.runtime._reads import Delta, Full, Unchanged
from semledger.runtime._wire import (
    WireError,
    decode_perform_action,
    decode_read_arguments,
    encode_read,
    encode_receipt,
    encode_rejection,
    exact_object,
)

from ._host import CommandIntent, PointerEvent, PointerPhase
from ._lifecycle import Lifecycle, LifecycleAction, LifecycleEvent, LifecycleState
from ._tools import Profile, ToolDefinition, tools_for_profile

__all__ = [
    "BATCHING_PROTOCOL_VERSIONS",
    "DEFAULT_INSTRUCTIONS",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "LATEST_PROTOCOL_VERSION",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "SUPPORTED_PROTOCOL_VERSIONS",
    "DispatchCommandArguments",
    "DispatchEventArguments",
    "Event",
    "NoArguments",
    "PerformActionArguments",
    "ReadSemanticsArguments",
    "RefusedArguments",
    "Reply",
    "ReplyMessage",
    "RequestId",
    "Router",
    "RouterUsageError",
    "ToolArguments",
    "ToolCall",
    "encode_json",
    "error_reply",
    "parse_error_reply",
    "parse_json",
]

SUPPORTED_PROTOCOL_VERSIONS: Final = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_PROTOCOL_VERSION: Final = SUPPORTED_PROTOCOL_VERSIONS[-1]
BATCHING_PROTOCOL_VERSIONS: Final = frozenset({"2024-11-05", "2025-03-26"})
"""The versions whose transports MUST take JSON-RPC batches (2025-06-18 removed them)."""

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603

DEFAULT_INSTRUCTIONS: Final = (
    "This server exposes an application's committed semantics tree. Call read_semantics to "
    "see the nodes (keep the generation; pass it back as since to get only changes), then "
    "perform_action on a node by semantic_id with an exact precondition on the generation "
    "you read. Rejections are ordinary results with ok false and a stable error code."
)

RequestId = str | int | float
"""A JSON-RPC request id as MCP allows it: a string or an integer (never null or a bool).

An integer written with a fraction or an exponent (``1.0``, ``1e2``) is read as a float
and kept so, to be answered as it was sent; an error may echo a fractional one (``2.5``).
"""


class RouterUsageError(Exception):
    """Raised by `Router.complete` for a `ToolCall` it did not emit or already completed.

    This is a bug in the transport, not in what a peer sent, so it is raised, not answered.
    """


ReplyMessage = dict[str, Any] | list[dict[str, Any]]
"""What a transport writes as one message: a JSON-RPC response, or a batch's array of them."""


@attrs.frozen
class Reply:
    """A JSON-RPC response for the transport to write, or the array answering a batch."""

    message: ReplyMessage


@attrs.frozen
class ReadSemanticsArguments:
    since: int | None


@attrs.frozen
class PerformActionArguments:
    target: Target
    action: SemanticsAction
    precondition: Precondition


@attrs.frozen
class NoArguments:
    """The arguments of a tool that takes none (``diagnostics_read_state``/``_read_paint``)."""


@attrs.frozen
class DispatchEventArguments:
    event: PointerEvent


@attrs.frozen
class DispatchCommandArguments:
    intent: CommandIntent


@attrs.frozen
class RefusedArguments:
    """The arguments of a ``perform_action`` that do not decode: the host is told (to log
    the refusal, as every ``perform_action`` is on the record) and answers ``rejection``."""

    rejection: Rejection


ToolArguments = (
    ReadSemanticsArguments
    | PerformActionArguments
    | RefusedArguments
    | NoArguments
    | DispatchEventArguments
    | DispatchCommandArguments
)


@attrs.frozen(eq=False)
class ToolCall:
    """A validated ``tools/call`` for the transport to run against a host.

    ``arguments`` are decoded; ``raw_arguments`` are the wire arguments as received (for a
    log). Compared by identity: each call is completed exactly once with `Router.complete`.
    """

    request_id: RequestId
    tool: str
    arguments: ToolArguments
    raw_arguments: dict[str, Any]


Event = Reply | ToolCall


def _id_key(request_id: RequestId) -> tuple[str, RequestId]:
    """JSON-RPC ids compare by type too: ``1`` and ``"1"`` are different requests, while
    ``1`` and ``1.0`` are one JSON number (Python compares them by value)."""
    return ("string" if isinstance(request_id, str) else "number", request_id)


# --- JSON-RPC messages --------------------------------------------------------------------


def _result_object(request_id: RequestId, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def _response(request_id: RequestId, result: dict[str, Any]) -> Reply:
    return Reply(_result_object(request_id, result))


def _error_object(request_id: RequestId | None, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _error(request_id: RequestId | None, code: int, message: str) -> Reply:
    return Reply(_error_object(request_id, code, message))


def _is_number(value: object) -> bool:
    """A JSON number that can be written back: not a bool, not ``inf`` (``1e400`` read)."""
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, int) and not isinstance(value, bool)


def _is_request_id(value: object) -> bool:
    """A string or an integer, ``1.0`` included."""
    if isinstance(value, float):
        return value.is_integer()  # False for inf and nan
    return isinstance(value, str) or _is_number(value)


def _echoable_id(value: object) -> RequestId | None:
    """The id an error answers with: a request id, or another number (``2.5``), which the
    request is refused for but its client can still match; else None."""
    if isinstance(value, str) or (isinstance(value, int | float) and _is_number(value)):
        return value
    return None


_WHITESPACE: Final = " \t\n\r"

_NOTIFICATIONS: Final = ("notifications/initialized", "notifications/cancelled")
"""The notifications the router understands: sent with an id, each is refused as one."""


def _leading_id(head: str | bytes) -> RequestId | None:
    """The ``id`` of the JSON object `head` begins, if one of its members read whole before
    `head` ends, and followed by another, is ``id``; else None (SPEC: a line known not to
    be JSON is answered with a null id). Reads member by member, never past a cut one."""
    text = head if isinstance(head, str) else head.decode("utf-8", "replace")
    decoder = json.JSONDecoder(parse_constant=_reject_constant, parse_int=_parse_int)

    def skip(at: int) -> int:
        while at < len(text) and text[at] in _WHITESPACE:
            at += 1
        return at

    at = skip(0)
    if not text.startswith("{", at):
        return None
    at += 1
    try:
        while True:
            key, at = decoder.raw_decode(text, skip(at))
            at = skip(at)
            if not isinstance(key, str) or not text.startswith(":", at):
                return None
            value, at = decoder.raw_decode(text, skip(at + 1))
            at = skip(at)
            if not text.startswith(",", at):
                # The object ends (the rest of the line is not JSON), is broken here, or is
                # cut (a number at the cut may itself be cut: 9 of 91): no id to trust.
                return None
            if key == "id":
                return _echoable_id(value)
            at += 1
    except (ValueError, RecursionError):  # the member that made the line too long, cut
        return None


def _bad_id(value: object) -> str:
    """Why a request's id is refused: one too large to write back is told so, as it is
    an integer to JSON (``1e400``, or of more digits than Python reads)."""
    if isinstance(value, float) and math.isinf(value):
        return (
            'Invalid Request: "id" is a number too large to write back: '
            "send a string or an integer of at most 4300 digits"
        )
    return 'Invalid Request: "id" must be a string or an integer'


def _readable_id(obj: object) -> RequestId | None:
    return _echoable_id(obj.get("id")) if isinstance(obj, dict) else None


def _no_method(message: dict[str, Any]) -> str:
    """Why a message with no string ``method`` is refused: one that has a ``result`` or an
    ``error`` was meant as a response, and is told what makes it none."""
    if "method" in message or ("result" not in message and "error" not in message):
        return 'Invalid Request: "method" must be a string'
    if "result" in message and "error" in message:
        return 'Invalid Request: a response has a "result" or an "error", not both'
    return (
        'Invalid Request: a response needs an "id" that is a string or an integer'
        ' (or null, beside an "error")'
    )


def _is_response(message: dict[str, Any]) -> bool:
    """A JSON-RPC 2.0 response by its members (``jsonrpc`` is checked before)."""
    if "method" in message or "id" not in message:
        return False
    if ("result" in message) == ("error" in message):
        return False
    request_id = message["id"]
    return _is_request_id(request_id) or (request_id is None and "error" in message)


def error_reply(request: object, code: int, message: str) -> dict[str, Any]:
    """The JSON-RPC error answering `request` (with its id if one can be read, else null),
    for a transport that cannot hand the request to a router at all."""
    return _error_object(_readable_id(request), code, message)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _parse_int(text: str) -> int | float:
    """An integer as JSON writes it. One of more digits than Python reads (4300, unless
    the program says otherwise) is read as ``1e400`` is, as a number past a double's range,
    with its sign: valid JSON, its request answered by the rules for such a number."""
    try:
        return int(text)
    except ValueError:
        return -math.inf if text.startswith("-") else math.inf


def parse_json(data: str | bytes) -> object:
    """One JSON value as the router reads it: ``NaN`` and ``Infinity`` are not JSON.

    Bytes are UTF-8 (as MCP's transports are), never guessed: UTF-16, UTF-32 and a
    byte-order mark are not JSON, as ``json.loads`` alone would take them.

    Raises ``ValueError`` (a ``UnicodeDecodeError`` or ``json.JSONDecodeError`` among them)
    or ``RecursionError``; both transports answer either with `parse_error_reply`.
    """
    if isinstance(data, bytes | bytearray):
        data = bytes(data).decode("utf-8")
    return json.loads(data, parse_constant=_reject_constant, parse_int=_parse_int)


def parse_error_reply(error: ValueError | RecursionError, source: str = "line") -> dict[str, Any]:
    """The ``-32700`` answering a `source` (``"line"``, ``"body"``) that `parse_json`
    raised `error` for: both transports say the same of the same bytes."""
    if isinstance(error, UnicodeDecodeError):
        why = "is not UTF-8"
    elif isinstance(error, RecursionError):
        why = "nests too deep to read"
    else:
        why = "is not JSON"
    return _error_object(None, PARSE_ERROR, f"Parse error: the {source} {why}")


def encode_json(message: object) -> bytes:
    """One JSON-RPC message as both transports write it: compact UTF-8 JSON.

    Text read from a peer may hold lone surrogates (JSON's ``"\\ud800"`` decodes to one), and
    UTF-8 cannot encode those: a reply echoing one (its id, say) is written with every
    non-ASCII character escaped instead, as valid JSON that reads back as the same text.
    U+0085, U+2028 and U+2029 are written escaped too: JSON allows them raw, but a reader
    that splits its input with ``str.splitlines`` broke a message in two at one.
    """
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
    if text.isascii():
        return text.encode()
    for char, escaped in _LINE_BREAKS:
        text = text.replace(char, escaped)
    try:
        return text.encode()
    except UnicodeEncodeError:
        return json.dumps(message, separators=(",", ":")).encode()


_LINE_BREAKS = [("\x85", "\\u0085"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")]
"""The line breaks of ``str.splitlines`` that JSON leaves raw in a string (the rest are
control characters, which it escapes)."""


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


# --- tool arguments -----------------------------------------------------------------------


def _coordinate(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise WireError(f"{where}: expected a finite number")
    try:
        number = float(value)
    except OverflowError:
        raise WireError(f"{where}: expected a finite number") from None
    if not math.isfinite(number):
        raise WireError(f"{where}: expected a finite number")
    return number


def _read_semantics_arguments(args: object) -> ToolArguments:
    return ReadSemanticsArguments(decode_read_arguments(args))


def _perform_action_arguments(args: object) -> ToolArguments:
    return PerformActionArguments(*decode_perform_action(args))


def _no_arguments(args: object) -> ToolArguments:
    exact_object(args, ())
    return NoArguments()


_PHASES: Final = {p.value: p for p in PointerPhase}
_INTENTS: Final = {i.value: i for i in CommandIntent}


def _dispatch_event_arguments(args: object) -> ToolArguments:
    event = exact_object(
        exact_object(args, ("event",))["event"], ("kind", "position", "phase"), "event"
    )
    if event["kind"] != "Pointer":
        raise WireError('event.kind: expected "Pointer"')
    position = exact_object(event["position"], ("x", "y"), "event.position")
    phase = event["phase"]
    if not isinstance(phase, str) or phase not in _PHASES:
        raise WireError(f"event.phase: expected one of {', '.join(_PHASES)}")
    return DispatchEventArguments(
        PointerEvent(
            _coordinate(position["x"], "event.position.x"),
            _coordinate(position["y"], "event.position.y"),
            _PHASES[phase],
        )
    )


def _dispatch_command_arguments(args: object) -> ToolArguments:
    intent = exact_object(args, ("intent",))["intent"]
    if not isinstance(intent, str) or intent not in _INTENTS:
        raise WireError(f"intent: expected one of {', '.join(_INTENTS)}")
    return DispatchCommandArguments(_INTENTS[intent])


_DECODERS: Final[dict[str, Callable[[object], ToolArguments]]] = {
    "read_semantics": _read_semantics_arguments,
    "perform_action": _perform_action_arguments,
    "diagnostics_read_state": _no_arguments,
    "diagnostics_read_paint": _no_arguments,
    "diagnostics_dispatch_event": _dispatch_event_arguments,
    "diagnostics_dispatch_command": _dispatch_command_arguments,
}

_DIAGNOSTIC_ID_KEYS: Final = frozenset({"generation", "before", "after", "node_id"})


def _diagnostic_value(value: object, key: str | None = None) -> Any:
    """A host's diagnostics dict in wire form: ids and generations as decimal strings."""
    if isinstance(value, Mapping):
        return {str(k): _diagnostic_value(v, str(k)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_diagnostic_value(v) for v in value]
    if key in _DIAGNOSTIC_ID_KEYS and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value


# --- the router ---------------------------------------------------------------------------


def _ok(value: object) -> dict[str, Any]:
    return {"ok": True, "value": value}


def _failed(rejection: Rejection) -> dict[str, Any]:
    return {"ok": False, "error": encode_rejection(rejection)}


@attrs.define(eq=False)
class _Batch:
    """A batch being answered: its answers in the order of its members (None for a call
    not complete yet), and how many of its calls are not complete."""

    answers: list[dict[str, Any] | None] = attrs.Factory(list)
    waiting: int = 0

    def reply(self) -> Reply:
        return Reply([answer for answer in self.answers if answer is not None])


class Router:
    """One MCP session's protocol state: lifecycle, negotiated version, outstanding calls."""

    def __init__(
        self,
        profile: Profile = "default",
        server_name: str = "semledger",
        version: str = "0.1.0",
        instructions: str | None = DEFAULT_INSTRUCTIONS,
    ) -> None:
        if profile not in ("default", "diagnostics"):
            raise ValueError(f"unknown profile {profile!r}: expected 'default' or 'diagnostics'")
        self.profile: Final = profile
        self.server_name: Final = server_name
        self.version: Final = version
        self.instructions: Final = instructions
        self.tools: Final[tuple[ToolDefinition, ...]] = tools_for_profile(profile)
        self._by_name = {tool.name: tool for tool in self.tools}
        self._lifecycle = Lifecycle()
        self._pending: set[ToolCall] = set()
        self._pending_ids: set[tuple[str, RequestId]] = set()
        """The ids of the pending calls (`_id_key`): no other request may use one."""
        self._batch_of: dict[ToolCall, tuple[_Batch, int]] = {}
        """The batch of each pending call sent in one, and the call's place in its answers."""
        self.protocol_version: str | None = None
        """The negotiated protocol version, once ``initialize`` has been answered."""
        self.assumed_version: str | None = None
        """The version a client speaks that came back to its session with no ``initialize``
        (a session resumed by another server), as its transport tells it: batches are judged
        by it until this router answers an ``initialize``."""
        self.client_info: object = None
        """``clientInfo`` as the client sent it in ``initialize`` (not validated)."""

    @property
    def state(self) -> LifecycleState:
        return self._lifecycle.state

    @property
    def pending_calls(self) -> int:
        """How many emitted `ToolCall` events have not been completed yet."""
        return len(self._pending)

    # -- input ------------------------------------------------------------------------------

    def receive_line(self, line: str | bytes) -> list[Event]:
        """One NDJSON line: blank lines give nothing, a line that is not JSON a ``-32700``.

        A line nested too deep to read is JSON all the same: its ``-32700`` carries its id
        when the id comes before the member nested too deep, as clients write it (as for a
        line too long to hold), so that its client is not left waiting."""
        try:
            if isinstance(line, bytes | bytearray):
                line = bytes(line).decode("utf-8")
            if not line.strip():
                return []
            message = parse_json(line)
        except RecursionError as error:
            reply = parse_error_reply(error)
            reply["id"] = _leading_id(line)
            return [Reply(reply)]
        except ValueError as error:
            return [Reply(parse_error_reply(error))]
        return self.receive_message(message)

    def receive_oversized_line(self, limit: int, head: bytes = b"") -> list[Event]:
        """A line the transport would not hold (over `limit` bytes): a ``-32700``. It was
        never parsed whole, but its `head` (the first bytes the transport holds) names its
        id when that comes before the member too long to hold, as clients write it: a reply
        the client can match, not one it waits for forever."""
        message = f"Parse error: the line is over {limit} bytes"
        return [_error(_leading_id(head), PARSE_ERROR, message)]

    def receive_message(self, message: object) -> list[Event]:
        """One parsed JSON value (an object, a batch, or anything a peer may send).

        A batch whose calls are not all complete gives only those `ToolCall` events: its
        array comes from `Router.complete`, once the last of them is complete.
        """
        try:
            if isinstance(message, list):
                return self._batch(message)
            return self._receive(message)
        except Exception:
            if isinstance(message, dict) and "id" not in message:
                return []
            return [_error(_readable_id(message), INTERNAL_ERROR, "Internal error")]

    def _batch_refusal(self, members: list[object]) -> str | None:
        """Why a batch is answered with one error and not taken apart, if it is."""
        version = self.protocol_version or self.assumed_version
        if version is None:
            return (
                "Invalid Request: a JSON-RPC batch before initialize; send initialize alone "
                "(batches are for sessions that negotiated 2024-11-05 or 2025-03-26)"
            )
        if version not in BATCHING_PROTOCOL_VERSIONS:
            return (
                "Invalid Request: JSON-RPC batches are not supported on a session that "
                f"negotiated {version} (MCP 2025-06-18 removed batching); send one request "
                "per message"
            )
        if not members:
            return "Invalid Request: an empty JSON-RPC batch"
        return None

    def _batch(self, members: list[object]) -> list[Event]:
        refusal = self._batch_refusal(members)
        if refusal is not None:
            return [_error(None, INVALID_REQUEST, refusal)]
        batch = _Batch()
        calls: list[Event] = []
        for member in members:
            for event in self._member(member):
                if isinstance(event, ToolCall):
                    self._batch_of[event] = (batch, len(batch.answers))
                    batch.answers.append(None)
                    calls.append(event)
                else:
                    assert isinstance(event.message, dict)
                    batch.answers.append(event.message)
        batch.waiting = len(calls)
        if calls:
            return calls
        return [batch.reply()] if batch.answers else []

    def _member(self, member: object) -> list[Event]:
        """One member of a batch, as `receive_message` handles a message: a bug inside the
        router is answered for that member alone."""
        try:
            return self._receive(member, batched=True)
        except Exception:
            if isinstance(member, dict) and "id" not in member:
                return []
            return [_error(_readable_id(member), INTERNAL_ERROR, "Internal error")]

    def _receive(self, message: object, *, batched: bool = False) -> list[Event]:
        if not isinstance(message, dict):
            return [_error(None, INVALID_REQUEST, "Invalid Request: expected a JSON object")]
        has_id = "id" in message
        request_id = _readable_id(message)
        if message.get("jsonrpc") != "2.0":
            return [_error(request_id, INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"')]
        if _is_response(message):
            return []
        method = message.get("method")
        if not isinstance(method, str):
            return [_error(request_id, INVALID_REQUEST, _no_method(message))]
        if "result" in message or "error" in message:
            return [
                _error(
                    request_id,
                    INVALID_REQUEST,
                    'Invalid Request: a request must not carry a "result" or an "error"',
                )
            ]
        if not has_id:
            self._notification(method)
            return []
        if request_id is None or not _is_request_id(request_id):
            return [_error(request_id, INVALID_REQUEST, _bad_id(message["id"]))]
        return self._request(request_id, method, message, batched)

    def _notification(self, method: str) -> None:
        if method == "notifications/initialized":
            self._lifecycle.step(LifecycleEvent.INITIALIZED)
        else:
            self._lifecycle.step(LifecycleEvent.NOTIFICATION)

    def _request(
        self, request_id: RequestId, method: str, message: dict[str, Any], batched: bool = False
    ) -> list[Event]:
        if _id_key(request_id) in self._pending_ids:
            # Whatever it asks, its answer could not be told from the other one's.
            return [
                _error(
                    request_id,
                    INVALID_REQUEST,
                    f"Invalid Request: id {request_id!r} belongs to a request still in progress",
                )
            ]
        params = message.get("params")
        has_params = "params" in message
        if method == "initialize":
            if batched:
                why = "Invalid Request: initialize must not be part of a JSON-RPC batch"
                return [_error(request_id, INVALID_REQUEST, why)]
            return [self._initialize(request_id, params if has_params else None)]
        if method in _NOTIFICATIONS:
            # "Method not found" sent its client looking for a missing capability.
            why = f'Invalid Request: {method} is a notification: send it without an "id"'
            return [_error(request_id, INVALID_REQUEST, why)]
        if method not in ("ping", "tools/list", "tools/call"):
            return [_error(request_id, METHOD_NOT_FOUND, f"Method not found: {method}")]
        self._lifecycle.step(LifecycleEvent.REQUEST)
        if has_params and not isinstance(params, dict):
            return [_error(request_id, INVALID_PARAMS, "Invalid params: expected an object")]
        if method == "ping":
            return [_response(request_id, {})]
        if method == "tools/list":
            if isinstance(params, dict) and params.get("cursor") is not None:
                # The list comes in one page, so no cursor was ever handed out; a null
                # cursor is none, as clients that write unset fields as null send it.
                return [_error(request_id, INVALID_PARAMS, "Invalid params: unknown cursor")]
            return [_response(request_id, {"tools": [tool.to_wire() for tool in self.tools]})]
        return [self._tools_call(request_id, params)]

    def _initialize(self, request_id: RequestId, params: object) -> Reply:
        wellformed = isinstance(params, dict) and isinstance(params.get("protocolVersion"), str)
        action = self._lifecycle.step(
            LifecycleEvent.INITIALIZE if wellformed else LifecycleEvent.MALFORMED_INITIALIZE
        )
        if action is LifecycleAction.REJECT_REINITIALIZE:
            return _error(request_id, INVALID_REQUEST, "Invalid Request: already initialized")
        if action is LifecycleAction.REJECT_PARAMS:
            return _error(
                request_id,
                INVALID_PARAMS,
                "Invalid params: initialize needs an object with a string protocolVersion",
            )
        assert isinstance(params, dict)
        requested = params["protocolVersion"]
        version = requested if requested in SUPPORTED_PROTOCOL_VERSIONS else LATEST_PROTOCOL_VERSION
        self.protocol_version = version
        self.client_info = params.get("clientInfo")
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": self.server_name, "version": self.version},
        }
        if self.instructions is not None:
            result["instructions"] = self.instructions
        return _response(request_id, result)

    def _tools_call(self, request_id: RequestId, params: object) -> Event:
        if not isinstance(params, dict):
            return _error(request_id, INVALID_PARAMS, "Invalid params: expected an object")
        name = params.get("name")
        if not isinstance(name, str):
            return _error(request_id, INVALID_PARAMS, "Invalid params: name must be a string")
        arguments = params.get("arguments", {})
        if not isinstance(arguments, dict):
            return _error(request_id, INVALID_PARAMS, "Invalid params: arguments must be an object")
        if name not in self._by_name:
            rejection = Rejection(ErrorCode.UNKNOWN_TOOL, f"unknown tool: {name}")
            return _response(request_id, self._tool_result(_failed(rejection)))
        decoded: ToolArguments
        try:
            decoded = _DECODERS[name](arguments)
        except WireError as exc:
            rejection = Rejection(ErrorCode.INVALID_ARGUMENTS, str(exc))
            if name != "perform_action":
                return _response(request_id, self._tool_result(_failed(rejection)))
            decoded = RefusedArguments(rejection)
        call = ToolCall(request_id, name, decoded, arguments)
        self._pending.add(call)
        self._pending_ids.add(_id_key(request_id))
        return call

    # -- completion -------------------------------------------------------------------------

    def complete(self, call: ToolCall, outcome: object) -> Reply | None:
        """Answer `call` with the host's outcome (a value, a `Rejection` or an exception).

        An exception, or a value of the wrong type for the tool, is a bug in the host: the
        reply is ``-32603`` with the call's id and the router goes on as before. A call sent
        in a batch is answered in the batch's array: None until the batch's last call is
        complete, then the whole array.
        """
        if call not in self._pending:
            raise RouterUsageError(
                f"tool call {call.tool!r} (id {call.request_id!r}) was not emitted by this "
                "router or was already completed"
            )
        self._pending.discard(call)
        self._pending_ids.discard(_id_key(call.request_id))
        answer = self._answer(call, outcome)
        place = self._batch_of.pop(call, None)
        if place is None:
            return Reply(answer)
        batch, index = place
        batch.answers[index] = answer
        batch.waiting -= 1
        return batch.reply() if batch.waiting == 0 else None

    def _answer(self, call: ToolCall, outcome: object) -> dict[str, Any]:
        if isinstance(outcome, BaseException):
            return _error_object(call.request_id, INTERNAL_ERROR, "Internal error")
        try:
            envelope = self._envelope(call.tool, outcome)
            return _result_object(call.request_id, self._tool_result(envelope))
        except Exception:
            return _error_object(call.request_id, INTERNAL_ERROR, "Internal error")

    def _envelope(self, tool: str, outcome: object) -> dict[str, Any]:
        if isinstance(outcome, Rejection):
            return _failed(outcome)
        if tool == "read_semantics":
            if isinstance(outcome, Full | Delta | Unchanged):
                return _ok(encode_read(outcome))
        elif tool == "perform_action":
            if isinstance(outcome, Receipt):
                return _ok(encode_receipt(outcome))
        elif isinstance(outcome, Mapping):
            return _ok(_diagnostic_value(outcome))
        raise TypeError(f"{tool}: the host answered {type(outcome).__name__}")

    @staticmethod
    def _tool_result(envelope: dict[str, Any]) -> dict[str, Any]:
        return {
            "content": [{"type": "text", "text": _dumps(envelope)}],
            "structuredContent": envelope,
            "isError": not envelope["ok"],
        }
