"""Running a router's `ToolCall` events against hosts: the glue every transport shares.

Async but free of any event-loop library: it only awaits the hosts' coroutines.
"""

from __future__ import annotations

import logging

from semledger.runtime._enums import ErrorCode
from semledger.runtime._outcomes import Rejection

from ._host import AgentDiagnosticsHost, AgentHost, ConnectionRecorder, RefusalRecorder
from ._router import (
    DispatchCommandArguments,
    DispatchEventArguments,
    PerformActionArguments,
    ReadSemanticsArguments,
    RefusedArguments,
    Reply,
    ReplyMessage,
    Router,
    ToolCall,
)

__all__ = ["announce", "execute", "handle", "handle_message"]

_log = logging.getLogger("semledger.hosts")


async def announce(router: Router, host: AgentHost, transport: str, peer: str | None) -> None:
    """Tell `host` who connected, if it logs that (`ConnectionRecorder`): the client and
    version `router` took from its ``initialize``, over `transport` (``"stdio"``,
    ``"http"``, or what a transport of one's own calls itself) from `peer` (an address, or
    None). Call once, as soon as `router` has answered an ``initialize`` (its protocol
    version is set) and before the next call; nothing is logged before that.

    `run_stdio` and the HTTP app do this themselves; a transport that feeds `handle` or
    `handle_message` does it after the one that answered the ``initialize``."""
    if isinstance(host, ConnectionRecorder) and router.protocol_version is not None:
        from semledger.eventlog import AgentConnected, loggable_json  # a recorder's: loaded

        client = loggable_json(router.client_info)
        connection = AgentConnected(client, router.protocol_version, transport, peer)
        try:
            await host.connected(connection)
        except Exception as error:  # a bug in the host: it must not take the loop down
            _log.error(
                "the agent's connection could not be logged, and the session goes on: %r",
                error,
                exc_info=error,
            )


async def execute(
    call: ToolCall, host: AgentHost, diagnostics: AgentDiagnosticsHost | None = None
) -> object:
    """Run one tool call; the result is what `Router.complete` takes.

    Diagnostics tools go to ``diagnostics``, or to ``host`` when it implements the
    diagnostics protocol too; with neither, the outcome is an ``unknown_tool`` rejection.
    Exceptions propagate (the caller hands them to `Router.complete`).
    """
    args = call.arguments
    if isinstance(args, ReadSemanticsArguments):
        return await host.read_semantics(args.since)
    if isinstance(args, PerformActionArguments):
        return await host.perform_action(args.target, args.action, args.precondition)
    if isinstance(args, RefusedArguments):
        if isinstance(host, RefusalRecorder):
            return await host.refuse(call.raw_arguments, args.rejection)
        return args.rejection
    diag = diagnostics
    if diag is None and isinstance(host, AgentDiagnosticsHost):
        diag = host
    if diag is None:
        return Rejection(ErrorCode.UNKNOWN_TOOL, f"this host offers no diagnostics: {call.tool}")
    if isinstance(args, DispatchEventArguments):
        return await diag.dispatch_event(args.event)
    if isinstance(args, DispatchCommandArguments):
        return await diag.dispatch_command(args.intent)
    if call.tool == "diagnostics_read_paint":
        return await diag.read_paint()
    return await diag.read_state()


async def answer(
    router: Router,
    call: ToolCall,
    host: AgentHost,
    diagnostics: AgentDiagnosticsHost | None,
) -> ReplyMessage | None:
    """Run `call` against the host and return the router's answer to it; a host that
    raises is answered ``-32603`` (a bug in the host never takes the loop down). None for
    a call of a batch that waits for another call (`Router.complete`)."""
    outcome: object
    try:
        outcome = await execute(call, host, diagnostics)
    except Exception as exc:
        outcome = exc
    reply = router.complete(call, outcome)
    return None if reply is None else reply.message


async def _run(
    router: Router,
    events: list[Reply | ToolCall],
    host: AgentHost,
    diagnostics: AgentDiagnosticsHost | None,
) -> list[ReplyMessage]:
    answers = [
        event.message
        if isinstance(event, Reply)
        else await answer(router, event, host, diagnostics)
        for event in events
    ]
    return [message for message in answers if message is not None]


async def handle(
    router: Router,
    host: AgentHost,
    line: str | bytes,
    diagnostics: AgentDiagnosticsHost | None = None,
) -> list[ReplyMessage]:
    """Feed one NDJSON line and run its tool calls, one after another; the JSON-RPC
    messages to write back (a batch's array is one)."""
    return await _run(router, router.receive_line(line), host, diagnostics)


async def handle_message(
    router: Router,
    host: AgentHost,
    message: object,
    diagnostics: AgentDiagnosticsHost | None = None,
) -> list[ReplyMessage]:
    """Like `handle`, for a message already parsed from JSON."""
    return await _run(router, router.receive_message(message), host, diagnostics)
