"""Supervision: an application crash ends only its own session, logged with its traceback."""

from __future__ import annotations

import contextlib
import functools
import logging
import re
import sys
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio
import trio.testing

from semledger.actors import (
    ActorClosedError,
    Close,
    LogWriter,
    Refuse,
    SessionActor,
    SessionCore,
    SessionCrashedError,
    SessionRegistry,
)
from semledger.eventlog import (
    ActionRequested,
    CallRefused,
    EffectCompleted,
    MemoryRecorder,
    SessionCrashed,
    SessionEnded,
    SqliteRecorder,
)
from semledger.examples import counter, todo
from semledger.hosts import RuntimeAgentHost
from semledger.replay import reexecute
from semledger.runtime import (
    ActionKind,
    BySemanticId,
    ErrorCode,
    Latest,
    Receipt,
    Rejection,
    SemanticId,
    SimpleAction,
)

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import tests_broken_start
import tests_crashy
import tests_huge
import tests_login
import tests_opaque
from full_log import FullRecorder
from shut_log import ShutLog

INCREMENT = BySemanticId(SemanticId.new("counter.increment"))
ACTIVATE = SimpleAction(ActionKind.ACTIVATE)
COUNTER_REF = "semledger.examples.counter:app"


async def test_a_crashing_session_is_logged_and_ended_while_another_carries_on() -> None:
    recorder = MemoryRecorder()
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            writer: LogWriter = await nursery.start(LogWriter(recorder).run)
            registry = SessionRegistry(nursery, writer, recorder)
            crashy = await registry.open(
                "crashy",
                lambda: SessionActor(
                    "crashy", tests_crashy.app, "tests_crashy:app", writer, recorder
                ),
            )
            steady = await registry.open(
                "steady",
                lambda: SessionActor(
                    "steady", counter.app, "semledger.examples.counter:app", writer, recorder
                ),
            )
            for _ in range(tests_crashy.CRASH_AT - 1):
                assert isinstance(
                    await crashy.perform_action(INCREMENT, ACTIVATE, Latest()), Receipt
                )
            with pytest.raises(SessionCrashedError, match="ThirdIncrementError"):
                await crashy.perform_action(INCREMENT, ACTIVATE, Latest())
            await trio.testing.wait_all_tasks_blocked()
            assert "crashy" not in registry
            assert registry.names == ["steady"]
            with pytest.raises(ActorClosedError):
                await crashy.perform_action(INCREMENT, ACTIVATE, Latest())

            for _ in range(5):
                receipt = await steady.perform_action(INCREMENT, ACTIVATE, Latest())
                assert isinstance(receipt, Receipt)
            assert receipt.after == 6
            await registry.close_all()
            writer.close()

    events = [event for _record, event in recorder.events("crashy")]
    crash = events[-1]
    assert isinstance(crash, SessionCrashed)
    assert crash.exception_type == "ThirdIncrementError"
    assert "Traceback (most recent call last)" in crash.traceback
    assert "the count may not reach 3" in crash.traceback
    assert "tests_crashy.py" in crash.traceback
    assert isinstance(events[-2], ActionRequested)  # the input that made it crash is logged
    summaries = {s.name: s for s in recorder.sessions()}
    assert summaries["crashy"].crashed
    assert summaries["steady"].ended
    assert not summaries["steady"].crashed


@pytest.mark.parametrize(
    ("attribute", "raised"),
    [
        ("app", "BrokenViewError('the view is broken')"),
        # Asked for as the session started only after it was logged as started: the
        # error escaped as a traceback and the session stayed open.
        (
            "subscribing",
            "ValueError('Every.seconds: expected a positive finite number of seconds, got 0')",
        ),
        # The runtime's own refusal has no cause: the operator was told "raised ...: None".
        (
            "bare_timer",
            "ApplicationError('subscriptions must return a sequence of Every values, got"
            " Every(seconds=1.0, message=Increment())')",
        ),
    ],
)
async def test_an_app_that_raises_as_it_starts_is_logged_as_crashed_and_replays_so(
    attribute: str, raised: str
) -> None:
    recorder = MemoryRecorder()
    app = getattr(tests_broken_start, attribute)
    ref = f"tests_broken_start:{attribute}"
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            writer: LogWriter = await nursery.start(LogWriter(recorder).run)
            registry = SessionRegistry(nursery, writer, recorder)
            with pytest.raises(SessionCrashedError, match="raised as it started: ") as crashed:
                await registry.open(
                    "broken", lambda: SessionActor("broken", app, ref, writer, recorder)
                )
            assert raised in str(crashed.value)
            assert "broken" not in registry
            with pytest.raises(SessionCrashedError, match="cannot be resumed"):
                await registry.open(
                    "broken", lambda: SessionActor("broken", app, ref, writer, recorder)
                )
            writer.close()
    events = [e for _r, e in recorder.events("broken")]
    assert [type(e).__name__ for e in events] == ["SessionStarted", "SessionCrashed"]
    assert isinstance(events[1], SessionCrashed)
    assert events[1].exception_type == raised.split("(")[0]
    report = reexecute(recorder, "broken", app)
    assert report.ok, report
    assert report.crash_step == 0
    assert repr(report.crash.__cause__ or report.crash) == raised


async def _one_session(
    app: Any, ref: str, recorder: MemoryRecorder, drive: Callable[[SessionActor], Awaitable[None]]
) -> SessionActor:
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            writer: LogWriter = await nursery.start(LogWriter(recorder).run)
            registry = SessionRegistry(nursery, writer, recorder)
            actor = await registry.open("s", lambda: SessionActor("s", app, ref, writer, recorder))
            await drive(actor)
            await registry.close_all()
            writer.close()
    return actor


@pytest.mark.parametrize(
    ("app", "why"),
    [
        pytest.param(tests_opaque, "StructureHandlerNotFoundError", id="does-not-decode-back"),
        pytest.param(tests_huge, f"{2**70} does not fit in 64 bits", id="does-not-pack"),
    ],
)
async def test_an_effect_message_the_log_cannot_record_crashes_the_session_on_the_record(
    app: Any, why: str
) -> None:
    """Live, the session would go on; recovery and replay could not structure the message
    back. So the session crashes there, logged as the codec's error (not as what msgpack
    or cattrs raised inside it, which replay never sees), and replay crashes at the same
    step with the same type."""
    recorder = MemoryRecorder()
    go = BySemanticId(SemanticId.new("go"))

    async def drive(actor: SessionActor) -> None:
        assert isinstance(await actor.perform_action(go, ACTIVATE, Latest()), Receipt)
        while not actor.ended:
            await trio.sleep(0.01)

    actor = await _one_session(app.app, f"{app.__name__}:app", recorder, drive)
    assert actor.failure is not None
    assert actor.failure.startswith("its log cannot record a message: a Got message cannot")
    assert why in actor.failure
    *_, result, crash = [e for _r, e in recorder.events("s")]
    assert result == EffectCompleted(1, None)
    assert isinstance(crash, SessionCrashed)
    assert crash.exception_type == "MessageCodecError"
    report = reexecute(recorder, "s", app.app)
    assert report.ok, report


async def test_a_step_that_raises_outside_the_app_crashes_the_session_on_the_record(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A fault of the runtime is not the caller's error: the session ends, its input and the
    traceback logged, and the caller is told it crashed."""
    recorder = MemoryRecorder()
    step = SessionCore.step

    def faulty(self: SessionCore, event: Any, **kwargs: Any) -> Any:
        if isinstance(event, ActionRequested) and event.request_id == 2:
            raise KeyError("a fault of the runtime")
        return step(self, event, **kwargs)

    monkeypatch.setattr(SessionCore, "step", faulty)

    async def drive(actor: SessionActor) -> None:
        assert isinstance(await actor.perform_action(INCREMENT, ACTIVATE, Latest()), Receipt)
        with pytest.raises(SessionCrashedError, match="a fault of the runtime"):
            await actor.perform_action(INCREMENT, ACTIVATE, Latest())

    actor = await _one_session(counter.app, COUNTER_REF, recorder, drive)
    assert actor.failure == "stepping its input raised KeyError('a fault of the runtime')"
    *_, request, crash = [e for _r, e in recorder.events("s")]
    assert isinstance(request, ActionRequested)
    assert request.request_id == 2
    assert isinstance(crash, SessionCrashed)
    assert (crash.exception_type, "a fault of the runtime" in crash.traceback) == ("KeyError", True)
    assert recorder.summary("s").crashed  # type: ignore[union-attr]


async def test_a_handler_that_raises_after_its_step_crashes_the_session_on_the_record(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    recorder = MemoryRecorder()

    def faulty(self: SessionActor, wanted: Any) -> None:
        raise RuntimeError("the timers could not be synced")

    async def drive(actor: SessionActor) -> None:
        monkeypatch.setattr(SessionActor, "_sync_timers", faulty)
        with pytest.raises(SessionCrashedError, match="could not be synced"):
            await actor.perform_action(INCREMENT, ACTIVATE, Latest())

    actor = await _one_session(counter.app, COUNTER_REF, recorder, drive)
    assert actor.failure == "it failed: RuntimeError('the timers could not be synced')"
    crash = [e for _r, e in recorder.events("s")][-1]
    assert isinstance(crash, SessionCrashed)
    assert crash.exception_type == "RuntimeError"
    assert "Traceback (most recent call last)" in crash.traceback


async def test_a_call_after_a_crash_is_told_why_the_session_ended() -> None:
    """Not only the caller whose request crashed it: one that comes later (another
    connection's host, say) is told the reason too."""

    async def drive(actor: SessionActor) -> None:
        host = RuntimeAgentHost(actor)
        for _ in range(tests_crashy.CRASH_AT):
            crashed = await host.perform_action(INCREMENT, ACTIVATE, Latest())
        assert isinstance(crashed, Rejection)
        assert crashed.code is ErrorCode.HOST_CLOSED
        later = await RuntimeAgentHost(actor).read_semantics(None)
        assert isinstance(later, Rejection)
        assert later.message == (
            "the session ended: its application raised "
            "ThirdIncrementError('the count may not reach 3')"
        )

    await _one_session(tests_crashy.app, "tests_crashy:app", MemoryRecorder(), drive)


async def test_a_python_call_after_a_crash_names_the_session_and_its_crash() -> None:
    """It raised "ActorClosedError: SessionActor is closed": which session, and that it
    crashed (known only from actor.failure), went unsaid."""

    async def drive(actor: SessionActor) -> None:
        for _ in range(tests_crashy.CRASH_AT):
            with contextlib.suppress(SessionCrashedError):
                await actor.perform_action(INCREMENT, ACTIVATE, Latest())
        with pytest.raises(ActorClosedError) as raised:
            await actor.read_semantics(None)
        assert str(raised.value) == (
            "session 's' crashed: its application raised"
            " ThirdIncrementError('the count may not reach 3')"
        )

    await _one_session(tests_crashy.app, "tests_crashy:app", MemoryRecorder(), drive)


async def test_a_session_that_just_crashed_is_settled_once_stopped_then_refused_open() -> None:
    """After SessionCrashedError, `settled` returned while the crashed actor was still
    stopping (listed in the registry, its claim held) and `open` handed that dead actor
    back, its calls raising ActorClosedError; 50 ms later `open` raised the crash."""
    recorder = MemoryRecorder()
    stop = trio.Event()

    class SlowToStop(SessionActor):
        async def stopped(self) -> None:
            await stop.wait()
            await super().stopped()

    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            writer: LogWriter = await nursery.start(LogWriter(recorder).run)
            registry = SessionRegistry(nursery, writer, recorder)
            make = lambda: SlowToStop(  # noqa: E731
                "s", tests_crashy.app, "tests_crashy:app", writer, recorder
            )
            crashy = await registry.open("s", make)
            for _ in range(tests_crashy.CRASH_AT - 1):
                await crashy.perform_action(INCREMENT, ACTIVATE, Latest())
            with pytest.raises(SessionCrashedError):
                await crashy.perform_action(INCREMENT, ACTIVATE, Latest())
            settled = trio.Event()

            async def settle() -> None:
                await registry.settled("s")
                settled.set()

            async with trio.open_nursery() as settling:
                settling.start_soon(settle)
                await trio.testing.wait_all_tasks_blocked()
                assert not settled.is_set()  # its actor is still stopping
                stop.set()
            assert "s" not in registry
            with pytest.raises(SessionCrashedError, match=r"^session 's' crashed .* cannot be"):
                await registry.open("s", make)
            writer.close()


async def test_a_session_opened_while_it_is_being_closed_is_resumed_once_closed() -> None:
    """`open` during `close` handed back the closing actor: a call then was answered
    host_closed ("the session is closed"), though the session was to be resumed."""
    recorder = ShutLog()
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            writer: LogWriter = await nursery.start(LogWriter(recorder).run)
            registry = SessionRegistry(nursery, writer, recorder)
            make = lambda: SessionActor("s", counter.app, COUNTER_REF, writer, recorder)  # noqa: E731
            closing = await registry.open("s", make)
            recorder.open.clear()
            nursery.start_soon(registry.close, "s")
            await trio.testing.wait_all_tasks_blocked()  # its end waits for the log
            assert closing.ended
            opened: list[SessionActor] = []

            async def reopen() -> None:
                opened.append(await registry.open("s", make))

            async with trio.open_nursery() as waiting:
                waiting.start_soon(reopen)
                await trio.testing.wait_all_tasks_blocked()
                recorder.open.set()
            assert opened[0] is not closing
            answer = await opened[0].perform_action(INCREMENT, ACTIVATE, Latest())
            assert isinstance(answer, Receipt), answer
            await registry.close_all()
            writer.close()


async def test_a_call_from_another_threads_trio_run_is_refused_and_leaves_the_session_be() -> None:
    """`trio.run(session.perform_action, ...)` on another thread failed with a bare
    AssertionError from inside Trio, and the session answered nothing more: its next call
    and the registry's `close` waited for good."""
    recorder = MemoryRecorder()
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            writer: LogWriter = await nursery.start(LogWriter(recorder).run)
            registry = SessionRegistry(nursery, writer, recorder)
            session = await registry.open(
                "s", lambda: SessionActor("s", counter.app, COUNTER_REF, writer, recorder)
            )

            def from_another_run() -> None:
                trio.run(session.perform_action, INCREMENT, ACTIVATE, Latest())

            with pytest.raises(
                RuntimeError,
                match=r"^session 's' was called from outside the Trio run it runs in .*"
                r" with trio.from_thread.run$",
            ):
                await trio.to_thread.run_sync(from_another_run)
            answer = await session.perform_action(INCREMENT, ACTIVATE, Latest())
            assert isinstance(answer, Receipt)
            assert answer.before == 1  # the refused call was not taken
            await registry.close("s")
            writer.close()


async def test_a_python_call_after_a_close_names_the_session() -> None:
    actor = await _one_session(counter.app, COUNTER_REF, MemoryRecorder(), _nothing)
    with pytest.raises(ActorClosedError, match=r"^session 's' is closed$"):
        await actor.perform_action(INCREMENT, ACTIVATE, Latest())


async def _nothing(_actor: SessionActor) -> None:
    pass


async def test_a_refused_call_whose_log_write_fails_is_answered_host_closed() -> None:
    """What the agent is told is in the log: a refusal that could not be logged is not
    answered as one."""
    recorder = FullRecorder()

    async def drive(actor: SessionActor) -> None:
        recorder.full = True
        refused = Rejection(ErrorCode.INVALID_ARGUMENTS, "target: required", {})
        answer = await RuntimeAgentHost(actor).refuse({"action": {"kind": "activate"}}, refused)
        assert answer.code is ErrorCode.HOST_CLOSED
        assert "its log could not be written (OSError(28" in answer.message
        recorder.full = False

    await _one_session(counter.app, COUNTER_REF, recorder, drive)


async def test_a_session_that_cannot_start_raises_its_error_not_a_group_of_its_nurseries() -> None:
    """A closed recorder came out of ``nursery.start(actor.run)`` two exception groups deep
    (the actor's own nurseries), catchable only with ``except*``."""
    from semledger.eventlog import RecorderClosedError

    recorder = MemoryRecorder()
    async with trio.open_nursery() as nursery:
        writer: LogWriter = await nursery.start(LogWriter(recorder).run)
        recorder.close()
        actor = SessionActor("s", counter.app, "semledger.examples.counter:app", writer, recorder)
        with pytest.raises(RecorderClosedError):
            await nursery.start(actor.run)
        writer.close()


class HeldRead(MemoryRecorder):
    """A memory recorder whose worker-thread calls of the method `hold` names wait for
    `release` (a slow disk), once `skip` of them went through."""

    def __init__(self) -> None:
        super().__init__()
        self.hold: str | None = None
        self.skip = 0
        self.reading = threading.Event()
        self.release = threading.Event()

    def _held(self, method: str) -> None:
        if method == self.hold and threading.current_thread() is not threading.main_thread():
            if self.skip:
                self.skip -= 1
                return
            self.hold = None
            self.reading.set()
            self.release.wait(10)

    def head(self, session: str) -> Any:
        self._held("head")
        return super().head(session)

    def events(self, session: str, *args: Any, **kwargs: Any) -> Any:
        self._held("events")
        return super().events(session, *args, **kwargs)


@pytest.mark.parametrize(
    ("resumed", "held", "skip"),
    [(False, "head", 1), (True, "events", 0)],  # (the first head is the count's check)
)
async def test_a_program_cancelled_as_a_session_starts_ends_cancelled_with_nothing_logged(
    resumed: bool, held: str, skip: int
) -> None:
    """Cancelled while the starting session read the log on a thread (which cannot be
    cancelled), the program got a SessionLogError ("the log writer stopped before it wrote
    its events") out of its own cancel scope, inside an exception group: the session went on
    to write to the writer the cancellation had closed."""
    recorder = HeldRead()

    def actor() -> SessionActor:
        return SessionActor("s", counter.app, COUNTER_REF, writer, recorder)

    if resumed:
        async with trio.open_nursery() as nursery:
            writer = await nursery.start(LogWriter(recorder).run)
            registry = SessionRegistry(nursery, writer, recorder)
            await registry.open("s", actor)
            await registry.park("s")
            writer.close()
    logged = recorder.head("s")
    recorder.hold, recorder.skip = held, skip
    with trio.CancelScope() as program:
        async with trio.open_nursery() as nursery:
            writer = await nursery.start(LogWriter(recorder).run)
            registry = SessionRegistry(nursery, writer, recorder)
            nursery.start_soon(registry.open, "s", actor)
            await trio.to_thread.run_sync(recorder.reading.wait)
            program.cancel()
            with trio.CancelScope(shield=True):
                await trio.testing.wait_all_tasks_blocked()  # the writer has stopped
                recorder.release.set()
    assert program.cancelled_caught
    assert recorder.head("s") == logged


async def test_a_factory_making_an_actor_of_another_session_is_refused_at_open() -> None:
    """open("alpha", lambda: SessionActor("beta", ...)) started it, kept it as 'alpha', and
    close_all raised KeyError: 'alpha' once it stopped as 'beta'."""
    recorder = MemoryRecorder()
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            writer: LogWriter = await nursery.start(LogWriter(recorder).run)
            registry = SessionRegistry(nursery, writer, recorder)

            def make(name: str) -> Callable[[], SessionActor]:
                return lambda: SessionActor(name, counter.app, COUNTER_REF, writer, recorder)

            with pytest.raises(ValueError, match="session 'alpha' made an actor of session 'beta'"):
                await registry.open("alpha", make("beta"))
            assert registry.names == []
            await registry.open("alpha", make("alpha"))
            await registry.close_all()
            writer.close()
    assert [s.name for s in recorder.sessions()] == ["alpha"]


async def test_open_refuses_session_options_instead_of_ignoring_them() -> None:
    """open(name, factory, redact_passwords=False) was accepted and the option dropped:
    the session logged typed passwords masked all the same. Options are the actor's."""
    recorder = MemoryRecorder()
    async with trio.open_nursery() as nursery:
        writer: LogWriter = await nursery.start(LogWriter(recorder).run)
        registry = SessionRegistry(nursery, writer, recorder)
        with pytest.raises(TypeError, match="redact_passwords"):
            await registry.open(
                "s",
                lambda: SessionActor("s", counter.app, COUNTER_REF, writer, recorder),
                redact_passwords=False,  # type: ignore[call-arg]
            )
        assert registry.names == []
        writer.close()


@pytest.mark.parametrize(
    ("given", "error", "says"),
    [
        ({"name": 5}, TypeError, "name: expected a session name (a str), got int 5"),
        ({"name": ""}, ValueError, "name: expected a session name, got ''"),
        ({"app": COUNTER_REF}, TypeError, "app: expected an App, got str"),
        ({"app_ref": counter.app}, TypeError, "app_ref: expected a module:attribute str, got App"),
        ({"app_ref": "counter"}, ValueError, "app_ref: expected module:attribute"),
        ({"writer": MemoryRecorder()}, TypeError, "writer: expected a LogWriter"),
        ({"checkpoint_every": "5"}, TypeError, "checkpoint_every: expected an int or None"),
        ({"checkpoint_every": 0}, ValueError, "checkpoint_every: expected at least 1"),
        ({"recorder": "log.db"}, TypeError, "recorder: expected a Recorder"),
        ({"params": [1]}, TypeError, "params: expected a dict or None, got list"),
        ({"params": {1: "a"}}, TypeError, "params: expected str keys, got int 1"),
        ({"params": {"a": object()}}, TypeError, "params['a']: expected a value the log can hold"),
        ({"params": {"a": [2**64]}}, ValueError, "params['a']: expected a value the log can hold"),
        ({"params": {"adapter": "mine"}}, ValueError, "params['adapter']: reserved for the"),
        ({"params": {"str_hash": 1}}, ValueError, "params['str_hash']: reserved for how the"),
        ({"redact_passwords": "no"}, TypeError, "redact_passwords: expected a bool, got str"),
        ({"clock": 0.0}, TypeError, "clock: expected a function like time.time, got float"),
    ],
    ids=["int-name", "empty-name", "app-ref-for-app", "app-for-app-ref",
         "ref-not-module-attribute", "recorder-for-writer",
         "str-checkpoint-every", "no-inputs-between-checkpoints", "path-for-recorder",
         "list-params", "int-param-key", "object-param", "param-past-64-bits",
         "adapter-param", "str-hash-param",
         "str-redact-passwords", "number-for-clock"],
)
async def test_a_session_actor_given_the_wrong_kind_of_argument_is_refused_as_it_is_made(
    given: dict[str, Any], error: type[Exception], says: str
) -> None:
    """Each was found only as the session ran: an AttributeError from inside it (a path
    given as the recorder took down the registry's nursery), a SessionLogError blaming the
    log (an App given as app_ref, a param the log cannot hold), or, for
    checkpoint_every="5", a SessionCrashed on the session's permanent record at its first
    input; list params and redact_passwords="no" were logged as given, and an "adapter"
    param made the session one that could never be resumed (a surface session's)."""
    recorder = MemoryRecorder()
    async with trio.open_nursery() as nursery:
        writer: LogWriter = await nursery.start(LogWriter(recorder).run)
        arguments: dict[str, Any] = {
            "name": "s", "app": counter.app, "app_ref": COUNTER_REF, "writer": writer,
            "recorder": recorder, **given,
        }
        with pytest.raises(error, match=f"^{re.escape(says)}"):
            SessionActor(**arguments)
        writer.close()


async def test_a_session_actor_takes_a_stand_in_writer_that_submits() -> None:
    """The writer check refused everything but a LogWriter, and bench/log.py, whose
    stand-in writes a long session in large transactions, stopped at its start."""

    class Settled:
        settled = succeeded = True

        async def durable(self) -> list[Any]:
            return []

    class Buffered:
        def __init__(self) -> None:
            self.events: list[Any] = []

        def submit(self, events: Any, *, after: object = None) -> Settled:
            self.events.extend(events)
            return Settled()

    stand_in = Buffered()
    recorder = MemoryRecorder()
    async with trio.open_nursery() as nursery:
        actor = await nursery.start(
            SessionActor("s", counter.app, COUNTER_REF, stand_in, recorder).run  # type: ignore[arg-type]
        )
        actor.close()
    assert type(stand_in.events[0].event).__name__ == "SessionStarted"


async def test_a_registry_given_its_writer_and_recorder_swapped_is_refused_as_it_is_made() -> None:
    """SessionRegistry(nursery, recorder, writer) was made, and its sessions opened: its
    recorder (a LogWriter) was used only later, by a host's reads."""
    recorder = MemoryRecorder()
    async with trio.open_nursery() as nursery:
        writer: LogWriter = await nursery.start(LogWriter(recorder).run)
        with pytest.raises(TypeError, match=r"^writer: expected a LogWriter .*got MemoryRecorder"):
            SessionRegistry(nursery, recorder, writer)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match=r"^recorder: expected a Recorder .*got LogWriter"):
            SessionRegistry(nursery, writer, writer)  # type: ignore[arg-type]
        writer.close()


@pytest.mark.parametrize("made", ["registry", "session actor"])
async def test_a_recorder_other_than_the_writers_is_refused_as_it_is_made(
    made: str, tmp_path: Path
) -> None:
    """Given a writer on SQLite and a MemoryRecorder, the session took its claim and read
    its past in memory and wrote its events to SQLite: the next run started it afresh
    there and died with SessionConflictError, "being written by another process"."""
    with SqliteRecorder(tmp_path / "log.db") as logged:
        async with trio.open_nursery() as nursery:
            writer: LogWriter = await nursery.start(LogWriter(logged).run)
            other = MemoryRecorder()
            make: Callable[[], object] = (
                functools.partial(SessionRegistry, nursery, writer, other)
                if made == "registry"
                else functools.partial(SessionActor, "s", counter.app, COUNTER_REF, writer, other)
            )
            with pytest.raises(
                ValueError,
                match=r"^recorder: expected the log writer's own \(writer.recorder,"
                r" SqliteRecorder\('.*log.db'\)\), got MemoryRecorder at 0x",
            ):
                make()
            writer.close()


async def test_open_names_a_name_or_a_factory_result_of_the_wrong_kind() -> None:
    """open(5, ...) said its factory "made an actor of session '5'" (a ValueError about
    the factory, not the name), and a factory returning None raised AttributeError."""
    recorder = MemoryRecorder()
    async with trio.open_nursery() as nursery:
        writer: LogWriter = await nursery.start(LogWriter(recorder).run)
        registry = SessionRegistry(nursery, writer, recorder)
        make = lambda: SessionActor("5", counter.app, COUNTER_REF, writer, recorder)  # noqa: E731
        with pytest.raises(TypeError, match=r"^expected a session name \(a str\), got int 5"):
            await registry.open(5, make)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match=r"^the factory of session 's' returned NoneType None"):
            await registry.open("s", lambda: None)  # type: ignore[arg-type, return-value]
        assert registry.names == []
        writer.close()


async def test_open_given_an_actor_for_its_factory_says_to_pass_a_function() -> None:
    """An actor given instead of a function that makes one failed as "'SessionActor' object
    is not callable"."""
    recorder = MemoryRecorder()
    async with trio.open_nursery() as nursery:
        writer: LogWriter = await nursery.start(LogWriter(recorder).run)
        registry = SessionRegistry(nursery, writer, recorder)
        actor = SessionActor("s", counter.app, COUNTER_REF, writer, recorder)
        with pytest.raises(
            TypeError,
            match=r"^factory: expected a callable returning a SessionActor, got a SessionActor:"
            r" pass lambda: SessionActor\(\.\.\.\)$",
        ):
            await registry.open("s", actor)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match=r"^factory: expected a callable .*, got int 5$"):
            await registry.open("s", 5)  # type: ignore[arg-type]
        assert registry.open_names == []
        assert await registry.open("s", lambda: actor) is actor
        await registry.close_all()
        writer.close()


async def test_a_registry_given_no_nursery_or_a_stop_callback_it_cannot_call_is_refused() -> None:
    """SessionRegistry(None, ...) failed with AttributeError at its first open, and
    on_stopped=5 at the first session that stopped: a TypeError from the registry's
    supervisor, which cancelled the caller's nursery and every other session with it."""
    recorder = MemoryRecorder()
    async with trio.open_nursery() as nursery:
        writer: LogWriter = await nursery.start(LogWriter(recorder).run)
        with pytest.raises(TypeError, match=r"^nursery: expected a Trio nursery .*got NoneType"):
            SessionRegistry(None, writer, recorder)  # type: ignore[arg-type]
        with pytest.raises(
            TypeError,
            match=r"^on_stopped: expected a callable taking the actor, or None, got int 5$",
        ):
            SessionRegistry(nursery, writer, recorder, on_stopped=5)  # type: ignore[arg-type]
        writer.close()


async def test_an_on_stopped_that_raises_is_logged_and_takes_no_other_session_down(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An on_stopped that raised ended the registry's supervisor with its error: the
    caller's nursery was cancelled, and every other session with it, none ending on the
    record."""
    caplog.set_level(logging.ERROR, logger="semledger")
    stopped: list[str] = []

    def on_stopped(actor: SessionActor) -> None:
        stopped.append(actor.name)
        if actor.name == "a":
            raise ZeroDivisionError("division by zero")

    recorder = MemoryRecorder()
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            writer: LogWriter = await nursery.start(LogWriter(recorder).run)
            registry = SessionRegistry(nursery, writer, recorder, on_stopped=on_stopped)
            for name in ("a", "b"):
                make = functools.partial(
                    SessionActor, name, counter.app, COUNTER_REF, writer, recorder
                )
                await registry.open(name, make)
            await registry.close("a")
            b = registry.get("b")
            assert b is not None
            assert isinstance(await b.perform_action(INCREMENT, ACTIVATE, Latest()), Receipt)
            await registry.close_all()
            writer.close()
    assert stopped == ["a", "b"]
    assert [(s.name, s.ended) for s in recorder.sessions()] == [("a", True), ("b", True)]
    [record] = [r for r in caplog.records if "on_stopped" in r.getMessage()]
    assert record.getMessage().startswith("session 'a': on_stopped raised ZeroDivisionError")
    assert record.exc_info is not None
    assert record.exc_info[0] is ZeroDivisionError


class SavedError(RuntimeError):
    pass


def _update_raising_once_saved(model: todo.Model, msg: todo.Msg) -> Any:
    if isinstance(msg, todo.Saved):
        raise SavedError("the saved result breaks the model")
    return todo.update(model, msg)


async def _run_until_stopped(
    recorder: MemoryRecorder,
    app: Any,
    drive: Callable[[SessionActor, LogWriter, trio.Event], Awaitable[None]],
) -> tuple[SessionActor, SessionRegistry]:
    """Session ``s`` of `app`, opened by a registry and driven by `drive`, which is given
    the event set once the session's actor stopped."""
    stopped = trio.Event()
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            writer: LogWriter = await nursery.start(LogWriter(recorder).run)
            registry = SessionRegistry(
                nursery, writer, recorder, on_stopped=lambda _actor: stopped.set()
            )
            actor = await registry.open(
                "s", lambda: SessionActor("s", app, "x:app", writer, recorder)
            )
            await drive(actor, writer, stopped)
    return actor, registry


async def test_an_app_raising_on_an_effects_message_ends_its_session_on_the_record_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As on an agent's input: its actor ends as closed, not failed (`crashes`)."""
    monkeypatch.setattr(todo, "SAVE_SECONDS", 0)
    app = attrs.evolve(todo.app, update=_update_raising_once_saved)

    async def save(actor: SessionActor, writer: LogWriter, stopped: trio.Event) -> None:
        save = BySemanticId(SemanticId.new("todo.save"))
        assert isinstance(await actor.perform_action(save, ACTIVATE, Latest()), Receipt)
        await stopped.wait()
        writer.close()

    recorder = MemoryRecorder()
    actor, registry = await _run_until_stopped(recorder, app, save)
    assert actor.failure == "its application raised SavedError('the saved result breaks the model')"
    assert registry.crashes == {}
    assert isinstance([e for _r, e in recorder.events("s")][-1], SessionCrashed)


async def _ended(recorder: MemoryRecorder, end: Callable[[SessionActor], Awaitable[None]]) -> Any:
    """The last event of session ``s`` of the counter once `end` ended it."""
    async with trio.open_nursery() as nursery:
        writer: LogWriter = await nursery.start(LogWriter(recorder).run)
        actor = SessionActor("s", counter.app, COUNTER_REF, writer, recorder)
        async with trio.open_nursery() as sessions:
            await sessions.start(actor.run)
            await end(actor)
        writer.close()
    return [e for _r, e in recorder.events("s")][-1]


async def test_a_session_whose_mailbox_is_closed_ends_on_the_record() -> None:
    async def close(actor: SessionActor) -> None:
        actor.close()

    assert await _ended(MemoryRecorder(), close) == SessionEnded("closed")


async def test_a_close_logs_who_ended_the_session() -> None:
    async def close(actor: SessionActor) -> None:
        await actor.request(Close("bye", "client"))

    assert await _ended(MemoryRecorder(), close) == SessionEnded("bye", "client")


async def test_a_call_refused_after_the_session_ended_is_answered_but_not_logged() -> None:
    """Logged, it came after the session's end: a log replay and audit call damaged."""
    rejection = Rejection(ErrorCode.INVALID_ARGUMENTS, "no target", {})

    async def close_then_refuse(actor: SessionActor) -> None:
        actor.tell_nowait(Close())
        assert await actor.request(Refuse({"target": None}, rejection)) == rejection

    recorder = MemoryRecorder()
    assert await _ended(recorder, close_then_refuse) == SessionEnded("closed")
    assert not any(isinstance(e, CallRefused) for _r, e in recorder.events("s"))


async def test_a_session_whose_log_is_lost_under_an_effects_message_is_listed_as_crashed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Its actor failed (`crashes`, with its traceback): nothing logged says it ended."""
    monkeypatch.setattr(tests_login, "SENT", [])
    monkeypatch.setattr(tests_login, "ANSWER", trio.Event())

    async def sign_in(actor: SessionActor, writer: LogWriter, stopped: trio.Event) -> None:
        sign_in = BySemanticId(SemanticId.new("sign_in"))
        assert isinstance(await actor.perform_action(sign_in, ACTIVATE, Latest()), Receipt)
        await trio.testing.wait_all_tasks_blocked()  # the sign-in waits for its answer
        writer.close()
        tests_login.ANSWER.set()
        await stopped.wait()

    actor, registry = await _run_until_stopped(MemoryRecorder(), tests_login.app, sign_in)
    assert actor.failure == "the log writer stopped before it wrote its events"
    assert "SessionLogError: session 's'" in registry.crashes["s"]
