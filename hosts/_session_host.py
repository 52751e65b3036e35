"""Hosts over a session actor: the agent host and the diagnostics host of one session."""

from __future__ import annotations

import logging
import math
from typing import Any

from semledger.actors import (
    ActorClosedError,
    Connect,
    Diagnose,
    Inspect,
    Perform,
    Read,
    Refuse,
    SessionActor,
    SessionConflictError,
    SessionCrashedError,
    SessionLogError,
)
from semledger.eventlog import AgentConnected
from semledger.runtime import (
    ErrorCode,
    Precondition,
    ReadResult,
    Receipt,
    Rejection,
    SemanticsAction,
    Target,
)

from ._host import PointerEvent

_log = logging.getLogger("semledger.hosts")


def _closed(why: str = "the session is closed") -> Rejection:
    return Rejection(ErrorCode.HOST_CLOSED, why, {})


class RuntimeAgentHost:
    """The two agent operations, tied to one session for life.

    Once the session has ended (closed, its application crashed, or its log could not be
    written) both answer ``host_closed``; a host is never re-pointed at another session.
    """

    overlapping_calls = True
    """Each call is in the session's mailbox before it first yields (`Actor.request`)."""

    def __init__(self, session: SessionActor) -> None:
        if not isinstance(session, SessionActor):
            raise TypeError(
                f"session: expected a SessionActor, got {type(session).__name__} {session!r:.80}"
            )
        self.session = session
        self._closed: str | None = None

    @property
    def closed(self) -> bool:
        return self._closed is not None

    @property
    def closed_reason(self) -> str | None:
        """Why the host is closed (its session ended on its own, say); None while open."""
        return self._closed

    def close(self, why: str = "the session is closed") -> None:
        self._closed = why

    async def ask(self, message: Read | Perform | Refuse | Connect | Inspect | Diagnose) -> Any:
        """The session's answer to `message`, or ``host_closed`` once the session is over
        (closed, its application crashed, or its log could not be written)."""
        if self._closed is not None:
            return _closed(self._closed)
        try:
            # No timeout: the session answers or refuses every request it took, and one
            # queued behind many sent-ahead calls must not be told "internal error" while
            # it is still going to be applied and logged.
            return await self.session.request(message, timeout=math.inf)
        except ActorClosedError:
            failure = self.session.failure  # it ended on its own: say why, as to the first
            self.close(f"the session ended: {failure}" if failure else "the session is closed")
        except (SessionCrashedError, SessionConflictError, SessionLogError) as error:
            self.close(f"the session ended: {error}")
        except Exception as error:  # a bug: its agent is told ``-32603``, its operator why
            _log.error(
                "session %r: a call failed inside the server, answered -32603 (Internal"
                " error): %r",
                self.session.name, error, exc_info=error,
            )
            raise
        return _closed(self._closed or "")

    async def read_semantics(self, since: int | None) -> ReadResult | Rejection:
        result: ReadResult | Rejection = await self.ask(Read(since))
        return result

    async def perform_action(
        self, target: Target, action: SemanticsAction, precondition: Precondition
    ) -> Receipt | Rejection:
        result: Receipt | Rejection = await self.ask(Perform(target, action, precondition))
        return result

    async def connected(self, connection: AgentConnected) -> None:
        if self._closed is None:
            await self.ask(Connect(connection))

    async def refuse(self, arguments: dict[str, Any], rejection: Rejection) -> Rejection:
        """Log a ``perform_action`` refused for its `arguments`; answer `rejection` (also
        once the session is over, when nothing more can be logged), or ``host_closed`` if
        the session ended instead of logging it."""
        if self._closed is None:
            answer: Rejection = await self.ask(Refuse(arguments, rejection))
            return answer
        return rejection


class SessionDiagnosticsHost:
    """Pointer events, global commands, counters and the paint summary of one session."""

    overlapping_calls = True
    """Calls go to the same mailbox, in the same way, as the agent host's."""

    def __init__(self, host: RuntimeAgentHost) -> None:
        self.host = host

    async def _ask(self, message: Inspect | Diagnose) -> dict[str, Any] | Rejection:
        result: dict[str, Any] | Rejection = await self.host.ask(message)
        return result

    async def read_state(self) -> dict[str, Any] | Rejection:
        return await self._ask(Inspect("state"))

    async def read_paint(self) -> dict[str, Any] | Rejection:
        return await self._ask(Inspect("paint"))

    async def dispatch_event(self, event: PointerEvent) -> dict[str, Any] | Rejection:
        return await self._ask(
            Diagnose(
                {
                    "kind": "Pointer",
                    "position": {"x": event.x, "y": event.y},
                    "phase": str(event.phase),
                }
            )
        )

    async def dispatch_command(self, intent: str) -> dict[str, Any] | Rejection:
        return await self._ask(Diagnose({"kind": "Command", "intent": str(intent)}))
