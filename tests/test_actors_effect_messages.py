"""An effect's message the log cannot record: the session crashes on the record, naming the
effect that returned it, as an effect that raises is named."""

from __future__ import annotations

import sys
from pathlib import Path

import trio

from semledger.actors import LogWriter, SessionActor, SessionRegistry
from semledger.eventlog import MemoryRecorder, SessionCrashed
from semledger.runtime import (
    ActionKind,
    BySemanticId,
    Latest,
    Receipt,
    SemanticId,
    SimpleAction,
)

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import tests_opaque


async def test_a_message_the_log_cannot_record_names_the_effect_that_returned_it() -> None:
    """The operator's line and the audit's traceback stopped in the codec: which of the
    app's effects returned the message was nowhere."""
    recorder = MemoryRecorder()
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            writer: LogWriter = await nursery.start(LogWriter(recorder).run)
            registry = SessionRegistry(nursery, writer, recorder)
            actor = await registry.open(
                "s",
                lambda: SessionActor("s", tests_opaque.app, "tests_opaque:app", writer, recorder),
            )
            go = BySemanticId(SemanticId.new("go"))
            outcome = await actor.perform_action(go, SimpleAction(ActionKind.ACTIVATE), Latest())
            assert isinstance(outcome, Receipt)
            while not actor.ended:
                await trio.sleep(0.01)
            await registry.close_all()
            writer.close()
    assert actor.failure is not None
    assert actor.failure.startswith("its log cannot record a message: a Got message cannot")
    assert actor.failure.endswith("; effect 1 (fetch) returned it")
    *_, crash = [e for _r, e in recorder.events("s")]
    assert isinstance(crash, SessionCrashed)
    assert crash.exception_type == "MessageCodecError"
    first, *_, last = crash.traceback.rstrip().splitlines()
    assert first == "effect 1 (fetch) returned a message:"
    assert last.startswith("semledger.actors._messages.MessageCodecError: a Got message cannot")
