"""The session registry: starts, finds and supervises session actors.

Supervision means a session that crashes is logged with its traceback and removed, and never
takes another session (or the registry) down with it.
"""

from __future__ import annotations

import contextlib
import logging
import math
import time
import traceback
from collections.abc import Awaitable, Callable
from typing import Any

import attrs
import trio

from semledger.eventlog import (
    EndedBy,
    Recorder,
    SessionEnded,
    known_head,
    log_final_end,
)

from ._actor import ActorClosedError, ActorError, ReportingStatus
from ._core import str_of
from ._session import Close, SessionActor, check_session_name
from ._writer import LogWriter, check_recorder, check_same_log, check_writer

_log = logging.getLogger("semledger.actors")


def _check_nursery(nursery: object) -> None:
    if not callable(getattr(nursery, "start_soon", None)):
        raise TypeError(
            "nursery: expected a Trio nursery (async with trio.open_nursery() as nursery),"
            f" got {type(nursery).__name__} {nursery!r:.80}"
        )


def _check_on_stopped(on_stopped: object) -> None:
    if on_stopped is not None and not callable(on_stopped):
        raise TypeError(
            "on_stopped: expected a callable taking the actor, or None,"
            f" got {type(on_stopped).__name__} {on_stopped!r:.80}"
        )


def _check_factory(factory: object) -> None:
    """Checked before the registry is changed: an actor given for its factory was called,
    and failed as "'SessionActor' object is not callable"."""
    if factory is None or callable(factory):
        return
    shown = f"{type(factory).__name__} {factory!r:.80}"
    if isinstance(factory, SessionActor):
        shown = "a SessionActor: pass lambda: SessionActor(...)"
    raise TypeError(f"factory: expected a callable returning a SessionActor, got {shown}")


def _made(name: str, factory: Callable[[], SessionActor]) -> SessionActor:
    """The actor `factory` makes for session `name`, checked."""
    actor = factory()
    if not isinstance(actor, SessionActor):
        raise TypeError(
            f"the factory of session {name!r} returned {type(actor).__name__}"
            f" {actor!r:.80}: expected a SessionActor"
        )
    if actor.name != name:  # kept under one name, it would stop under the other
        raise ValueError(
            f"the factory of session {name!r} made an actor of session {actor.name!r}:"
            " it must make the session it is opened for"
        )
    return actor


@attrs.define(eq=False)
class _Start:
    """A session `SessionRegistry.open` started in the registry's nursery."""

    woken: trio.Event = attrs.Factory(trio.Event)
    """Set for its opener once it started, or failed to (`error`)."""
    error: BaseException | None = None
    abandoned: bool = False
    """Its opener stopped waiting: the actor's task says it started, once it has."""


class SessionRegistry:
    """Every live session of one process, by name, all sharing one log writer."""

    def __init__(
        self,
        nursery: trio.Nursery,
        writer: LogWriter,
        recorder: Recorder,
        *,
        on_stopped: Callable[[SessionActor], None] | None = None,
    ) -> None:
        """`on_stopped` is called with each session actor that started, once it stopped
        (closed, crashed or its log lost): a server tells its operator there. One that
        raises is logged with its traceback (the ``semledger.actors`` logger), and takes no
        session down: the next is told all the same."""
        _check_nursery(nursery)
        _check_on_stopped(on_stopped)
        check_writer(writer)
        check_recorder(recorder)
        check_same_log(writer, recorder)
        self._nursery = nursery
        self._on_stopped = on_stopped
        self.writer = writer
        self.recorder = recorder
        self._sessions: dict[str, SessionActor] = {}
        self._starting: dict[str, trio.Event] = {}
        self._stopped: dict[str, trio.Event] = {}
        """Set once a session's actor has ended, its claim on the session released."""
        self._scopes: dict[str, trio.CancelScope] = {}
        self.crashes: dict[str, str] = {}
        """The traceback of each session whose actor itself failed once started (its log
        could not be written, say). An application that raised is not one: its session ended
        on the record (``SessionCrashed``, `SessionActor.failure`), and its actor ended
        normally. Nor is one that could not start: `open` raised that to its caller, and a
        later `open` may start it."""

    def __contains__(self, name: str) -> bool:
        return name in self._sessions

    def get(self, name: str) -> SessionActor | None:
        return self._sessions.get(name)

    @property
    def names(self) -> list[str]:
        return sorted(self._sessions)

    async def open(
        self, name: str, factory: Callable[[], SessionActor] | None = None
    ) -> SessionActor:
        """The running session `name`, starting (or recovering) it first when needed with
        the actor `factory` makes; raises ``ValueError`` if that is of another session,
        ``TypeError`` if it is no ``SessionActor`` (or `factory` is not callable).

        A checkpoint, found session or not, as Trio's calls are: a caller that opens again
        after `ActorClosedError` lets the stopped actor's task leave the registry. Yet no
        other task runs before a session it starts is marked starting: a caller that saw it
        `settled`, and not running, opens it knowing no other caller started it meanwhile
        (the HTTP host's requests that come together resume a session once).

        The session starts in the registry's nursery: a caller that stops waiting (a timeout
        around `open`) leaves it to start, and `close_all` or `park_all` ends it."""
        check_session_name(name)
        _check_factory(factory)
        await trio.lowlevel.checkpoint_if_cancelled()
        while name in self._starting:
            await self._starting[name].wait()
        stopping = self._stopping(name)
        if stopping is not None:
            await stopping.wait()  # its claim is released as it stops: then it can start
            return await self.open(name, factory)
        existing = self._sessions.get(name)
        if existing is not None:
            await trio.lowlevel.cancel_shielded_checkpoint()
            return existing
        if factory is None:
            await trio.lowlevel.cancel_shielded_checkpoint()
            raise KeyError(f"no session {name!r} and nothing to start it with")
        self._starting[name] = trio.Event()
        try:
            actor = _made(name, factory)
        except BaseException:
            self._done_starting(name)
            raise
        # Started in the registry's nursery, not under this call: a caller that stops
        # waiting (its timeout) leaves the session to start, and to end on the record later
        # as any other; cancelled as it resumed, it stopped with no end logged, and its
        # audit said its server was killed.
        start = _Start()
        self._nursery.start_soon(self._supervise, actor, start)
        try:
            await start.woken.wait()
        except BaseException:
            if start.woken.is_set() and start.error is None:  # it started as this was stopped
                self._done_starting(name)
            else:
                start.abandoned = True  # its actor says it started, once it has
            raise
        if start.error is not None:
            raise start.error
        # Said here, not by the actor's task: this caller goes on (the HTTP host keeps the
        # session's connection) before a caller waiting for the start does.
        self._done_starting(name)
        return actor

    def _done_starting(self, name: str) -> None:
        self._starting.pop(name).set()

    async def _supervise(self, actor: SessionActor, start: _Start) -> None:
        name = actor.name
        started = False
        stopped = self._stopped[name] = trio.Event()

        def on_started(value: Any = None) -> None:
            nonlocal started
            started = True
            self._sessions[name] = actor
            if start.abandoned:
                self._done_starting(name)
            else:
                start.woken.set()

        try:
            with trio.CancelScope() as self._scopes[name]:
                await actor.run(task_status=ReportingStatus(on_started))
        except Exception as error:
            if not started:  # no session ran (no claim could be taken, say): its opener hears
                start.error = error
            else:
                self.crashes[name] = "".join(traceback.format_exception(error))
        finally:
            if not started:
                if start.error is None:  # cancelled: the registry's nursery is ending
                    start.error = ActorClosedError(f"session {name!r} was stopped as it started")
                self._done_starting(name)
                start.woken.set()
            self._sessions.pop(name, None)
            del self._stopped[name], self._scopes[name]
            stopped.set()
            if started:
                self._tell_stopped(actor)

    def _tell_stopped(self, actor: SessionActor) -> None:
        """Call `on_stopped`; its error is logged, not raised: raised, it ended the
        registry's nursery, every other session with it, none ending on the record."""
        if self._on_stopped is None:
            return
        try:
            self._on_stopped(actor)
        except Exception as error:
            _log.error(
                "session %r: on_stopped raised %s: %s (the registry goes on)",
                actor.name, type(error).__name__, str_of(error), exc_info=error,
            )

    async def settled(self, name: str) -> None:
        """Wait until session `name` is neither starting nor stopping here: then it runs
        here (``name in registry``) or not, and no actor of it holds the log's claim."""
        await trio.lowlevel.checkpoint()
        while True:
            busy = self._starting.get(name)
            if busy is None:
                busy = self._stopping(name)
            if busy is None:
                return
            await busy.wait()

    def _stopping(self, name: str) -> trio.Event | None:
        """Set once the actor of session `name` has stopped, if it serves no more: parked
        (no longer listed), or over on its own (crashed, closed, its log lost) and not yet
        stopped, its claim still held. Opened, such a session is started again once it
        stopped, or refused for why it ended (a crash); never its dead actor handed back."""
        actor = self._sessions.get(name)
        if actor is not None and not actor.ended:
            return None
        return self._stopped.get(name)

    async def close(self, name: str, reason: str = "closed", *, by: EndedBy = "server") -> None:
        """End session `name` and wait until its actor has stopped, so that it can be
        opened again at once. `by` says who ends it (`SessionEnded.by`): this server, for
        now (the next `open` resumes it); or for good its ``"client"`` or its
        ``"operator"``, which ends it in the log (`log_final_end`) when it does not run
        here, parked or left by a process that stopped. Raises ``TypeError`` or
        ``ValueError`` for a `name`, `reason` or `by` the log cannot take,
        ``UnknownSessionError`` for a session that neither runs here nor is in the log
        (``CorruptSummaryError`` for one only its summary lists: its events were cut), and
        what `log_final_end` raises (``SessionClaimedError``: another process serves it)."""
        check_session_name(name)
        SessionEnded(reason, by)  # checked before anything is done, as the log needs them
        await self.settled(name)
        actor = self._sessions.get(name)
        if actor is not None:
            stopped = self._stopped[name]
            with contextlib.suppress(ActorClosedError):  # it ended on its own, and is stopping
                await actor.request(Close(reason, by), timeout=math.inf)
            await stopped.wait()
        elif by == "server":  # ended for now already: nothing to do, if the log has it
            await self._check_logged(name)
        else:
            await trio.to_thread.run_sync(
                log_final_end, self.recorder, name, reason, by, time.time()
            )

    async def park(self, name: str, reason: str = "parked") -> None:
        """Stop session `name`'s actor, its end logged for now (`SessionEnded` with
        `reason`, not final): its claim is released, and the next `open` of it resumes it
        from the log (its running effects start again there, its timers too). For a session
        nobody has used for long, or whose server stops: it costs no memory and no file
        meanwhile, and its audit tells it from a killed server's. Returns once its actor has
        stopped (one still starting is parked once started, one already stopping waited
        for); an end that cannot be logged is the actor's `failure`, as any log failure is.
        One that does not run here is left as it is; raises ``UnknownSessionError`` if the
        log has no session `name` either (``CorruptSummaryError`` if only its summary lists
        it), and ``TypeError`` or ``ValueError`` for a `name`
        or `reason` the log cannot take."""
        check_session_name(name)
        SessionEnded(reason)  # checked before anything is done, as the log needs it
        await self.settled(name)  # one starting is parked once it has started
        stopped, scope = self._stopped.get(name), self._scopes.get(name)
        actor = self._sessions.pop(name, None)  # an `open` from now on waits, then resumes it
        if actor is not None and scope is not None:
            try:
                await actor.request(Close(reason), timeout=math.inf)
            except ActorError:  # it ended on its own, or its log failed
                scope.cancel()
        if stopped is not None:
            await stopped.wait()
        else:
            await self._check_logged(name)

    async def _check_logged(self, name: str) -> None:
        await trio.to_thread.run_sync(known_head, self.recorder, name)

    async def park_all(self, reason: str) -> None:
        """`park` every session at once: one log transaction may hold all their ends.
        Those still starting are parked once started (their openers may have stopped
        waiting: they start all the same)."""
        await trio.lowlevel.checkpoint()
        async with trio.open_nursery() as nursery:
            for name in self.open_names:
                nursery.start_soon(self.park_once_started, name, reason)

    async def close_all(self, reason: str = "closed") -> None:
        """`close` every session, those still starting once started (see `park_all`)."""
        await trio.lowlevel.checkpoint()
        for name in self.open_names:
            await self._end_if_started(self.close, name, reason)

    @property
    def open_names(self) -> list[str]:
        """The sessions running here or starting (their openers may have stopped waiting:
        they start all the same): those `park_all` and `close_all` end."""
        return sorted({*self._sessions, *self._starting})

    async def park_once_started(self, name: str, reason: str) -> None:
        """`park` session `name` once it has started; nothing if it failed to start, or
        stopped meanwhile."""
        await self._end_if_started(self.park, name, reason)

    async def _end_if_started(
        self, end: Callable[[str, str], Awaitable[None]], name: str, reason: str
    ) -> None:
        await self.settled(name)
        if name in self._sessions:  # (not if it failed to start, or stopped meanwhile)
            await end(name, reason)
