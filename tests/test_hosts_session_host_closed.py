"""A session host closed by its server answers for its session, which may still run."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import trio

from semledger.actors import LogWriter, SessionActor
from semledger.eventlog import ActionRequested, AgentConnected, CallRefused, MemoryRecorder
from semledger.examples import counter
from semledger.hosts import RuntimeAgentHost
from semledger.runtime._actions import BySemanticId, Latest, SimpleAction
from semledger.runtime._enums import ActionKind, ErrorCode
from semledger.runtime._ids import SemanticId
from semledger.runtime._outcomes import Rejection

COUNTER = "semledger.examples.counter:app"
INVALID = Rejection(ErrorCode.INVALID_ARGUMENTS, "target: expected an object")


@asynccontextmanager
async def _closed_host(recorder: MemoryRecorder) -> AsyncIterator[RuntimeAgentHost]:
    """A host of a running counter session, closed with the reason "stopping"."""
    async with trio.open_nursery() as nursery:
        writer = await nursery.start(LogWriter(recorder).run)
        actor = SessionActor("s", counter.app, COUNTER, writer, recorder)
        await nursery.start(actor.run)
        host = RuntimeAgentHost(actor)
        host.close("stopping")
        yield host
        nursery.cancel_scope.cancel()


async def test_a_closed_host_answers_host_closed_with_its_reason_and_applies_nothing() -> None:
    recorder = MemoryRecorder()
    async with _closed_host(recorder) as host:
        target = BySemanticId(SemanticId("counter.increment"))
        acted = await host.perform_action(target, SimpleAction(ActionKind.ACTIVATE), Latest())
        read = await host.read_semantics(None)
    closed = Rejection(ErrorCode.HOST_CLOSED, "stopping", {})
    assert (acted, read) == (closed, closed)
    assert not any(isinstance(e, ActionRequested) for _r, e in recorder.events("s"))


async def test_a_closed_host_logs_no_connection_or_refusal_and_answers_the_refusal() -> None:
    recorder = MemoryRecorder()
    async with _closed_host(recorder) as host:
        await host.connected(AgentConnected(None, "2025-06-18", "stdio", None))
        assert await host.refuse({"target": 1}, INVALID) == INVALID
    kinds = (AgentConnected, CallRefused)
    assert not any(isinstance(e, kinds) for _r, e in recorder.events("s"))
