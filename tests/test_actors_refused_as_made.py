"""Arguments refused where they are given, not inside a task that others depend on."""

from __future__ import annotations

import pytest
import trio

from semledger.actors import Close, LogWriter, Pending
from semledger.eventlog import MemoryRecorder, NewEvent, SessionEnded


@pytest.mark.parametrize(
    ("reason", "by", "error", "says"),
    [
        (None, "server", TypeError, "reason: expected a str, got NoneType None"),
        ("done", "nobody", ValueError, "by: expected one of server, client, operator, fuzzer"),
        ("bye \udcff", "server", ValueError, "reason: expected text the log can hold"),
    ],
)
def test_a_close_with_a_reason_or_ender_the_log_cannot_take_is_refused_as_it_is_made(
    reason: object, by: object, error: type[Exception], says: str
) -> None:
    """Refused only as the session ended, after it had marked itself ended: it answered
    host_closed to everything, never stopped and logged no end, and the registry waited
    for it for good."""
    with pytest.raises(error, match=says):
        Close(reason, by)  # type: ignore[arg-type]


async def test_a_batch_submitted_after_something_not_pending_is_refused_and_others_go_on() -> None:
    """The writer's task tripped on it: every session's batches failed, the writer ended."""
    recorder = MemoryRecorder()
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            writer: LogWriter = await nursery.start(LogWriter(recorder).run)
            first = writer.submit([NewEvent("a", 1, SessionEnded("x"), 0.0)])
            second = [NewEvent("a", 2, SessionEnded("y"), 0.0)]
            with pytest.raises(TypeError, match=r"^after: expected the Pending a previous"):
                writer.submit(second, after=[first])  # type: ignore[arg-type]
            other = writer.submit([NewEvent("b", 1, SessionEnded("z"), 0.0)])
            assert isinstance(other, Pending)
            assert [r.seq for r in await other.durable()] == [1]
            await first.durable()
            writer.close()
