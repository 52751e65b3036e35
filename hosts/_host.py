"""What a transport drives: the agent host (two operations) and the opt-in diagnostics host."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import attrs

from semledger.runtime._actions import Precondition, SemanticsAction, Target
from semledger.runtime._outcomes import Receipt, Rejection
from semledger.runtime._reads import ReadResult

if TYPE_CHECKING:
    from semledger.eventlog import AgentConnected

__all__ = [
    "AgentDiagnosticsHost",
    "AgentHost",
    "CommandIntent",
    "ConnectionRecorder",
    "PointerEvent",
    "PointerPhase",
    "RefusalRecorder",
    "overlapping_calls_allowed",
]


@runtime_checkable
class AgentHost(Protocol):
    """Owns only the two agent operations; a closed host answers both with ``host_closed``.

    Arguments arrive decoded and validated (invalid arguments never reach a host); node ids
    and generations are ints. A business rejection is returned, never raised: an exception
    is a bug and the router answers it with a JSON-RPC internal error.
    """

    async def read_semantics(self, since: int | None) -> ReadResult | Rejection: ...

    async def perform_action(
        self, target: Target, action: SemanticsAction, precondition: Precondition
    ) -> Receipt | Rejection: ...


@runtime_checkable
class RefusalRecorder(Protocol):
    """A host that logs the ``perform_action`` calls refused for their arguments (which
    never reach `AgentHost.perform_action`), answering each with `rejection` once logged."""

    async def refuse(self, arguments: dict[str, Any], rejection: Rejection) -> Rejection: ...


@runtime_checkable
class ConnectionRecorder(Protocol):
    """A host that logs who connected (`AgentConnected`): told before any call that follows
    the ``initialize`` its router answered, or, for a client that came back with its session
    id alone (``resumed``), before its first call."""

    async def connected(self, connection: AgentConnected) -> None: ...


def overlapping_calls_allowed(*hosts: object) -> bool:
    """Whether a transport may start a call on these hosts before the last one is answered.

    A host allows it with a class attribute ``overlapping_calls = True``, promising that a
    call is queued, in the order calls start, before the call first yields to the event
    loop (the session hosts put every call in the session actor's mailbox that way). The
    stdio transport then reads ahead, so a pipelining agent's actions share log
    transactions, and still answers in order. ``None`` (no diagnostics host) allows it.
    """
    return all(
        getattr(host, "overlapping_calls", False) is True for host in hosts if host is not None
    )


class PointerPhase(StrEnum):
    DOWN = "Down"
    UP = "Up"
    MOVE = "Move"
    CANCEL = "Cancel"
    EXIT = "Exit"


class CommandIntent(StrEnum):
    ACTIVATE = "Activate"
    SUBMIT = "Submit"
    CANCEL = "Cancel"
    COPY = "Copy"
    CUT = "Cut"
    PASTE = "Paste"
    UNDO = "Undo"
    REDO = "Redo"
    SELECT_ALL = "SelectAll"
    OPEN_CONTEXT_MENU = "OpenContextMenu"


@attrs.frozen
class PointerEvent:
    """A coordinate pointer event, for diagnostics only (agents act through semantics)."""

    x: float
    y: float
    phase: PointerPhase


@runtime_checkable
class AgentDiagnosticsHost(Protocol):
    """Counters, paint summaries, coordinate events and global commands (SPEC §2.3).

    Kept apart from `AgentHost` so that the default profile cannot reach any of it. Each
    method answers a plain dict (the ``value`` of the tool result) or a `Rejection` (for a
    closed host: ``host_closed``). Ints in the fields ``generation``, ``before``, ``after`` and
    ``node_id`` are put on the wire as decimal strings by the router. Shapes (the schemas are
    in ``semledger.hosts._tools``):

    - `read_state`: ``{"layout_passes", "paint_passes", "semantics_passes", "commits",
      "generation", "queue_depth"}`` and optionally ``"platform_passes"``, ``"pending_effects"``
    - `read_paint`: ``{"ops", "by_kind": {kind: count}, "hovered": id | None, "paint_passes"}``
    - `dispatch_event` and `dispatch_command`: ``{"handled": bool, "node_id": id | None}``
      plus ``"before"``/``"after"`` (an accepted action), ``"error"`` (a rejection code) or
      ``"reason"`` (nothing handles it)
    """

    async def read_state(self) -> dict[str, Any] | Rejection: ...

    async def read_paint(self) -> dict[str, Any] | Rejection: ...

    async def dispatch_event(self, event: PointerEvent) -> dict[str, Any] | Rejection: ...

    async def dispatch_command(self, intent: CommandIntent) -> dict[str, Any] | Rejection: ...
