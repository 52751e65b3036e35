"""The MCP lifecycle as one transition table.

States:

- ``AWAITING_INITIALIZE``: nothing negotiated yet.
- ``INITIALIZING``: ``initialize`` answered, ``notifications/initialized`` not yet seen.
- ``READY``: the client confirmed; normal operation.

Decisions (lenient but correct):

- Requests other than ``initialize`` (``ping``, ``tools/list``, ``tools/call``) are answered
  normally in every state. Some clients pipeline ``tools/list`` behind ``initialize`` without
  waiting, and refusing them gains nothing: the tool set does not depend on negotiation.
- A second ``initialize`` (in ``INITIALIZING`` or ``READY``) is answered with ``-32600`` and
  changes nothing: the protocol version of a session is negotiated once.
- ``notifications/initialized`` before ``initialize`` is ignored (state unchanged); a repeated
  one in ``READY`` is ignored too.
- An ``initialize`` whose params are malformed (params not an object, ``protocolVersion``
  missing or not a string) is answered with ``-32602`` and leaves the state unchanged, so the
  client may retry; once initialised, it is a second ``initialize`` like any other.
- Every other notification is ignored in every state.
"""

from __future__ import annotations

from enum import Enum
from typing import Final

__all__ = ["TRANSITIONS", "Lifecycle", "LifecycleAction", "LifecycleEvent", "LifecycleState"]


class LifecycleState(Enum):
    AWAITING_INITIALIZE = "awaiting_initialize"
    INITIALIZING = "initializing"
    READY = "ready"


class LifecycleEvent(Enum):
    INITIALIZE = "initialize"
    """A well-formed ``initialize`` request."""
    MALFORMED_INITIALIZE = "malformed_initialize"
    """An ``initialize`` request whose params are malformed."""
    INITIALIZED = "notifications/initialized"
    REQUEST = "request"
    """Any other request (``ping``, ``tools/list``, ``tools/call``, unknown methods)."""
    NOTIFICATION = "notification"
    """Any other notification (``notifications/cancelled``, unknown ones)."""


class LifecycleAction(Enum):
    ANSWER = "answer"
    """Handle the message normally (a request gets its response)."""
    REJECT_REINITIALIZE = "reject_reinitialize"
    """Answer ``-32600``: the session is already initialised."""
    REJECT_PARAMS = "reject_params"
    """Answer ``-32602``: the request's params are malformed."""
    IGNORE = "ignore"
    """A notification: no response, nothing else."""


_S = LifecycleState
_E = LifecycleEvent
_A = LifecycleAction

_Table = dict[tuple[LifecycleState, LifecycleEvent], tuple[LifecycleState, LifecycleAction]]

TRANSITIONS: Final[_Table] = {
    (_S.AWAITING_INITIALIZE, _E.INITIALIZE): (_S.INITIALIZING, _A.ANSWER),
    (_S.AWAITING_INITIALIZE, _E.MALFORMED_INITIALIZE): (_S.AWAITING_INITIALIZE, _A.REJECT_PARAMS),
    (_S.AWAITING_INITIALIZE, _E.INITIALIZED): (_S.AWAITING_INITIALIZE, _A.IGNORE),
    (_S.AWAITING_INITIALIZE, _E.REQUEST): (_S.AWAITING_INITIALIZE, _A.ANSWER),
    (_S.AWAITING_INITIALIZE, _E.NOTIFICATION): (_S.AWAITING_INITIALIZE, _A.IGNORE),
    (_S.INITIALIZING, _E.INITIALIZE): (_S.INITIALIZING, _A.REJECT_REINITIALIZE),
    (_S.INITIALIZING, _E.MALFORMED_INITIALIZE): (_S.INITIALIZING, _A.REJECT_REINITIALIZE),
    (_S.INITIALIZING, _E.INITIALIZED): (_S.READY, _A.IGNORE),
    (_S.INITIALIZING, _E.REQUEST): (_S.INITIALIZING, _A.ANSWER),
    (_S.INITIALIZING, _E.NOTIFICATION): (_S.INITIALIZING, _A.IGNORE),
    (_S.READY, _E.INITIALIZE): (_S.READY, _A.REJECT_REINITIALIZE),
    (_S.READY, _E.MALFORMED_INITIALIZE): (_S.READY, _A.REJECT_REINITIALIZE),
    (_S.READY, _E.INITIALIZED): (_S.READY, _A.IGNORE),
    (_S.READY, _E.REQUEST): (_S.READY, _A.ANSWER),
    (_S.READY, _E.NOTIFICATION): (_S.READY, _A.IGNORE),
}
"""``(state, event) -> (next state, what to do)``; total over every pair."""


class Lifecycle:
    """The current lifecycle state; `step` applies one event through `TRANSITIONS`."""

    def __init__(self) -> None:
        self.state = LifecycleState.AWAITING_INITIALIZE

    def step(self, event: LifecycleEvent) -> LifecycleAction:
        self.state, action = TRANSITIONS[(self.state, event)]
        return action
