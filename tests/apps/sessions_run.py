"""One run of a session actor over a log, for the recovery tests: started (or recovered),
driven, closed."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import trio

from semledger.actors import Close, LogWriter, SessionActor
from semledger.eventlog import Recorder
from semledger.examples import todo

TODO = "semledger.examples.todo:app"


async def in_session(
    recorder: Recorder,
    name: str,
    body: Callable[[SessionActor], Awaitable[Any]],
    app: Any = todo.app,
    app_ref: str = TODO,
    **options: Any,
) -> tuple[SessionActor, Any]:
    """Start (or recover) session `name`, run `body` against it, then close it."""
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            writer: LogWriter = await nursery.start(LogWriter(recorder).run)
            actor = SessionActor(name, app, app_ref, writer, recorder, **options)
            async with trio.open_nursery() as sessions:
                await sessions.start(actor.run)
                result = await body(actor)
                await actor.request(Close("test over"))
            writer.close()
    return actor, result
