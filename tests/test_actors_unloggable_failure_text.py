"""An app's failure whose text quotes a file name as ``os.listdir`` decodes it (a lone
surrogate, which UTF-8 cannot encode) is logged with that character escaped: msgpack
refused the event, so the failure was lost, and with it every session sharing the writer."""

from __future__ import annotations

import contextlib

import attrs
import trio

from semledger.actors import LogWriter, SessionActor, SessionCrashedError, SessionRegistry
from semledger.eventlog import (
    ActionRequested,
    EffectFailed,
    MemoryRecorder,
    SessionCrashed,
)
from semledger.examples import counter
from semledger.runtime import (
    ActionKind,
    App,
    BySemanticId,
    Effect,
    Latest,
    Next,
    Receipt,
    SemanticId,
    SimpleAction,
    View,
    button,
    column,
    text,
)

NAME = b"report-\xff.csv".decode("utf-8", "surrogateescape")
ACTIVATE = SimpleAction(ActionKind.ACTIVATE)


@attrs.frozen
class Load:
    pass


@attrs.frozen
class Parse:
    pass


@attrs.frozen
class Loaded:
    pass


async def _load() -> Loaded:
    raise ValueError(f"cannot read {NAME}")


def update(model: str, msg: Load | Parse | Loaded) -> str | Next[str, Loaded]:
    if isinstance(msg, Load):
        return Next("loading", (Effect(_load, name="load"),))
    if isinstance(msg, Parse):
        raise ValueError(f"cannot parse {NAME}")
    return "loaded"


def view(model: str) -> View[Load | Parse]:
    return column(
        text("Status", model, semantic_id="status"),
        button("Load", Load(), semantic_id="load"),
        button("Parse", Parse(), semantic_id="parse"),
    )


app = App(
    init=lambda: "idle", update=update, view=view, message_types=(Load, Parse, Loaded),
    model_type=str,
)


async def _act(actor: SessionActor, sid: str) -> object:
    return await actor.perform_action(BySemanticId(SemanticId.new(sid)), ACTIVATE, Latest())


async def _run(press: str) -> tuple[MemoryRecorder, SessionActor, list[object]]:
    """Press `press` in a session of the app while a counter session shares the writer;
    the counter's receipts."""
    recorder = MemoryRecorder()
    receipts: list[object] = []
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            writer: LogWriter = await nursery.start(LogWriter(recorder).run)
            registry = SessionRegistry(nursery, writer, recorder)
            failing = await registry.open(
                "a", lambda: SessionActor("a", app, "tests:app", writer, recorder)
            )
            other = await registry.open(
                "b",
                lambda: SessionActor(
                    "b", counter.app, "semledger.examples.counter:app", writer, recorder
                ),
            )
            with contextlib.suppress(SessionCrashedError):  # (the agent is told it crashed)
                await _act(failing, press)
            for _ in range(3):
                receipts.append(await _act(other, "counter.increment"))
            await trio.sleep(0.1)
            await registry.close_all()
            writer.close()
    return recorder, failing, receipts


async def test_an_effect_failure_quoting_an_undecodable_file_name_is_logged_escaped() -> None:
    recorder, failing, receipts = await _run("load")
    failed = [e for _r, e in recorder.events("a") if isinstance(e, EffectFailed)]
    assert [f.error for f in failed] == ["ValueError: cannot read report-\\udcff.csv"]
    assert failed[0].traceback is not None
    assert failed[0].traceback.rstrip().endswith("cannot read report-\\udcff.csv")
    assert failing.failure is None
    assert all(isinstance(receipt, Receipt) for receipt in receipts)


async def test_an_update_crash_quoting_an_undecodable_file_name_is_logged_with_its_input() -> None:
    recorder, failing, receipts = await _run("parse")
    events = [e for _r, e in recorder.events("a")]
    assert isinstance(events[-2], ActionRequested)
    crash = events[-1]
    assert isinstance(crash, SessionCrashed)
    assert crash.exception_type == "ValueError"
    assert "\nValueError: cannot parse report-\\udcff.csv\n" in crash.traceback
    assert failing.failure is not None
    assert all(isinstance(receipt, Receipt) for receipt in receipts)
