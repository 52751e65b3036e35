"""A session has one owner: a second actor for it, here or in another process, is refused."""

from __future__ import annotations

import contextlib
import functools
import re
import sqlite3
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from semledger.actors import LogWriter, SessionActor, SessionEndedError, SessionRegistry
from semledger.eventlog import (
    CorruptSummaryError,
    MemoryRecorder,
    Recorder,
    SessionClaimedError,
    SqliteRecorder,
    UnknownSessionError,
)
from semledger.examples import counter
from semledger.hosts._serve import _end_for_now
from semledger.replay import audit_report
from semledger.runtime import (
    ActionKind,
    BySemanticId,
    Full,
    Latest,
    Receipt,
    SemanticId,
    SimpleAction,
)

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as client
from tests_record import COUNTER


@contextlib.asynccontextmanager
async def _serving_a_counter(recorder: Recorder) -> AsyncIterator[SessionRegistry]:
    """A registry serving the counter as session "s", its log writer closed at the end."""
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            writer: LogWriter = await nursery.start(LogWriter(recorder).run)
            registry = SessionRegistry(nursery, writer, recorder)
            await registry.open(
                "s", lambda: SessionActor("s", counter.app, COUNTER, writer, recorder)
            )
            yield registry
            writer.close()


async def test_a_second_actor_for_a_live_session_is_refused_and_the_first_goes_on() -> None:
    recorder = MemoryRecorder()
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            writer: LogWriter = await nursery.start(LogWriter(recorder).run)
            first = SessionRegistry(nursery, writer, recorder)
            second = SessionRegistry(nursery, writer, recorder)

            def actor() -> SessionActor:
                return SessionActor("s", counter.app, COUNTER, writer, recorder)

            owner = await first.open("s", actor)
            before = list(recorder.read("s"))
            with pytest.raises(SessionClaimedError, match="'s' is already being served"):
                await second.open("s", actor)
            assert "s" not in second
            assert list(recorder.read("s")) == before
            increment = BySemanticId(SemanticId.new("counter.increment"))
            activate = SimpleAction(ActionKind.ACTIVATE)
            assert isinstance(await owner.perform_action(increment, activate, Latest()), Receipt)
            await first.close_all()
            resumed = await second.open("s", actor)
            assert resumed.recovered
            read = await resumed.read_semantics(None)
            assert isinstance(read, Full)
            assert read.generation == 2
            await second.close_all()
            writer.close()


@pytest.mark.parametrize(
    ("served", "started"),
    [
        ([COUNTER], "started session 's'"),
        (["--adapter", "runtime", "--app", COUNTER], "started surface session 's'"),
    ],
    ids=["app", "surface"],
)
def test_serving_a_session_another_process_serves_is_a_usage_error_that_logs_nothing(
    tmp_path: Path, served: list[str], started: str
) -> None:
    db = tmp_path / "log.db"
    command = [*client.COMMAND, "serve", *served, "--session", "s", "--db", str(db)]
    first = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env=client.env(),
    )
    try:
        assert first.stderr is not None
        assert first.stdin is not None
        assert started in first.stderr.readline()
        with SqliteRecorder(db) as recorder:
            before = list(recorder.read("s"))
        second = subprocess.run(
            command, input="", capture_output=True, text=True, env=client.env(), timeout=120
        )
        assert second.returncode == 2, second.stderr
        assert "session 's' is already being served" in second.stderr
        assert "Traceback" not in second.stderr
        with SqliteRecorder(db) as recorder:
            assert list(recorder.read("s")) == before
        first.stdin.close()
        assert first.wait(timeout=60) == 0
    finally:
        first.kill()
        first.wait(timeout=30)
    third = subprocess.run(
        command, input="", capture_output=True, text=True, env=client.env(), timeout=120
    )
    assert third.returncode == 0, third.stderr
    assert started.replace("started", "resumed") in third.stderr
    with SqliteRecorder(db) as recorder:
        incidents = audit_report(recorder, "s").incidents
    assert [i.kind for i in incidents] == ["resumed"]


async def test_closing_for_good_a_session_that_does_not_run_here_ends_it_in_the_log() -> None:
    """It did nothing, silently: a session its program ended for good while it was parked
    was resumed by the next open and served again."""
    recorder = MemoryRecorder()
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            writer: LogWriter = await nursery.start(LogWriter(recorder).run)
            registry = SessionRegistry(nursery, writer, recorder)

            def actor() -> SessionActor:
                return SessionActor("s", counter.app, COUNTER, writer, recorder)

            await registry.open("s", actor)
            await registry.park("s")
            await registry.close("s", "retired", by="operator")
            ending = audit_report(recorder, "s").ending
            assert (ending.reason, ending.by, ending.final) == ("retired", "operator", True)
            with pytest.raises(SessionEndedError, match="ended for good"):
                await registry.open("s", actor)
            with pytest.raises(UnknownSessionError):
                await registry.close("nobody", "retired", by="client")
            writer.close()


async def test_parking_a_session_as_it_starts_parks_it_once_it_has_started() -> None:
    """`park` waited for ever: the actor being started was not yet among the running
    sessions, so it was never asked to stop, and park waited for it to stop."""
    recorder = MemoryRecorder()
    go = trio.Event()

    class Slow(SessionActor):
        async def started(self) -> None:
            await go.wait()
            await super().started()

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            writer: LogWriter = await nursery.start(LogWriter(recorder).run)
            registry = SessionRegistry(nursery, writer, recorder)
            actor = Slow("s", counter.app, COUNTER, writer, recorder)
            nursery.start_soon(registry.open, "s", lambda: actor)
            await trio.testing.wait_all_tasks_blocked()
            async with trio.open_nursery() as parking:
                parking.start_soon(registry.park, "s", "parked as it started")
                await trio.testing.wait_all_tasks_blocked()
                go.set()
            assert "s" not in registry
            ending = audit_report(recorder, "s").ending
            assert (ending.reason, ending.final) == ("parked as it started", False)
            writer.close()


@pytest.mark.parametrize("end", ["close_all", "park_all", "server_stop"])
async def test_a_session_its_opener_stopped_waiting_for_starts_and_ends_on_the_record(
    end: str,
) -> None:
    """Cancelling the caller of `open` (a timeout around it) as the session started or
    resumed cancelled the actor too: it stopped with no end logged, and its audit said
    "it logged no end (it was killed …)" though the process lived. The start goes on in
    the registry's nursery, and the registry's `close_all` or `park_all` ends it, as a
    stopping server does (it parked only the sessions running)."""
    recorder = MemoryRecorder()
    go = trio.Event()

    class Slow(SessionActor):
        async def started(self) -> None:
            await super().started()  # its start is logged
            await go.wait()

    async def once_blocked(do: Callable[[], object]) -> None:
        await trio.testing.wait_all_tasks_blocked()
        do()

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            writer: LogWriter = await nursery.start(LogWriter(recorder).run)
            registry = SessionRegistry(nursery, writer, recorder)
            with trio.CancelScope() as waiting:
                nursery.start_soon(once_blocked, waiting.cancel)
                await registry.open("s", lambda: Slow("s", counter.app, COUNTER, writer, recorder))
            assert waiting.cancelled_caught
            nursery.start_soon(once_blocked, go.set)
            if end == "close_all":
                await registry.close_all("done")
            elif end == "park_all":
                await registry.park_all("done")
            else:  # as `semledger serve --http` stops
                assert await _end_for_now(registry, "done") == []
            assert "s" not in registry
            writer.close()
    report = audit_report(recorder, "s")
    ending = report.ending
    assert (ending.state, ending.reason, ending.final) == ("ended", "done", False)
    assert [incident.kind for incident in report.incidents] == []


@pytest.mark.parametrize("end", ["park", "close for now", "close for good"])
async def test_parking_or_closing_a_session_the_log_does_not_have_raises_whoever_ends_it(
    end: str,
) -> None:
    """`park` and `close` of a name the log does not have returned as if they had done
    it, while `close` by the operator raised an UnknownSessionError saying only the name.
    One the log has that does not run here is left as it is."""
    recorder = MemoryRecorder()
    async with _serving_a_counter(recorder) as registry:
        await registry.park("s", "parked")
        await registry.park("s", "parked again")
        await registry.close("s", "closed")
        ending = audit_report(recorder, "s").ending
        assert (ending.reason, ending.final) == ("parked", False)
        ends = {
            "park": lambda: registry.park("nope"),
            "close for now": lambda: registry.close("nope"),
            "close for good": lambda: registry.close("nope", "gone", by="operator"),
        }
        with pytest.raises(UnknownSessionError, match=r"^the log has no session 'nope'$"):
            await ends[end]()


@pytest.mark.parametrize(
    ("reason", "by", "error"),
    [
        (None, "server", "reason: expected a str, got NoneType None"),
        (b"bye", "client", "reason: expected a str, got bytes b'bye'"),
        ("bye", "janitor", "by: expected one of server, client, operator, fuzzer, got 'janitor'"),
    ],
)
async def test_an_end_the_log_could_not_take_is_refused_before_anything_is_done(
    reason: object, by: object, error: str
) -> None:
    """A reason of None or bytes was logged, and the log then read as damaged."""
    recorder = MemoryRecorder()
    async with _serving_a_counter(recorder) as registry:
        before = list(recorder.read("s"))
        with pytest.raises((TypeError, ValueError), match=re.escape(error)):
            await registry.close("s", reason, by=by)  # type: ignore[arg-type]
        if by == "server":
            with pytest.raises(TypeError, match=re.escape(error)):
                await registry.park("s", reason)  # type: ignore[arg-type]
        assert list(recorder.read("s")) == before
        assert "s" in registry
        await registry.close_all()


@pytest.mark.parametrize("end", ["park", "close for now", "close for good"])
@pytest.mark.parametrize(
    ("name", "error"),
    [
        (b"s", TypeError("expected a session name (a str), got bytes b's'")),
        ("s\nt", ValueError("expected a session name with no control character, got 's\\nt'")),
    ],
)
async def test_parking_or_closing_a_name_no_session_can_have_says_what_is_wrong_with_it(
    end: str, name: object, error: Exception
) -> None:
    """`park` and `close` of such a name said the log has no such session, while `open`
    of it said what is wrong with the name."""
    recorder = MemoryRecorder()
    async with _serving_a_counter(recorder) as registry:
        ends = {
            "park": lambda: registry.park(name),  # type: ignore[arg-type]
            "close for now": lambda: registry.close(name),  # type: ignore[arg-type]
            "close for good": lambda: registry.close(name, "gone", by="operator"),  # type: ignore[arg-type]
        }
        with pytest.raises(type(error), match=f"^{re.escape(str(error))}$"):
            await ends[end]()
        assert "s" in registry
        await registry.close_all()


@pytest.mark.parametrize("end", ["park", "close for now"])
async def test_parking_or_closing_a_session_whose_events_were_cut_names_the_damage(
    tmp_path: Path, end: str
) -> None:
    """The log's summary still listed the session, and they said the log had none."""
    db = tmp_path / "log.db"
    with SqliteRecorder(db) as recorder:
        async with _serving_a_counter(recorder) as registry:
            await registry.park("s")
            with sqlite3.connect(db) as conn:
                conn.execute("DELETE FROM events WHERE session = 's'")
            conn.close()
            with pytest.raises(CorruptSummaryError, match="where the log holds none"):
                await (registry.park("s") if end == "park" else registry.close("s"))


class _HeldAppend(SqliteRecorder):
    """A log whose first append waits for `release` (a slow disk's fsync)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.writing = threading.Event()
        self.release = threading.Event()

    def append(self, events: Any) -> Any:
        if not self.writing.is_set():
            self.writing.set()
            self.release.wait(10)
        return super().append(events)


async def test_a_session_cancelled_as_its_first_events_are_written_keeps_its_claim_file(
    tmp_path: Path,
) -> None:
    """Its claim was released while the writer committed its start, and, no event of it
    logged yet, removed its file: logged with no end, it then read as served from a log that
    cannot tell (a copy's), not as a session no server serves."""
    recorder = _HeldAppend(tmp_path / "log.db")
    with trio.CancelScope() as program:
        async with trio.open_nursery() as nursery:
            writer = await nursery.start(LogWriter(recorder).run)
            registry = SessionRegistry(nursery, writer, recorder)
            actor = functools.partial(SessionActor, "s", counter.app, COUNTER, writer, recorder)
            nursery.start_soon(registry.open, "s", actor)
            await trio.to_thread.run_sync(recorder.writing.wait)
            program.cancel()
            with trio.CancelScope(shield=True):
                await trio.testing.wait_all_tasks_blocked()  # the session has stopped waiting
                recorder.release.set()
    summary = recorder.summary("s")
    assert summary is not None
    assert not summary.ended
    assert recorder.served(["s"]) == {"s": False}
    recorder.close()
