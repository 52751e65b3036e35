"""Composition roots: an app served to agents over stdio or Streamable HTTP, fully logged."""

from __future__ import annotations

import contextlib
import errno
import functools
import logging
import math
import os
import secrets
import sqlite3
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar, cast

import attrs
import trio

from semledger.actors import (
    ActorError,
    LogWriter,
    SessionActor,
    SessionCrashedError,
    SessionEndedError,
    SessionLogError,
    SessionMismatchError,
    SessionRegistry,
    check_session_name,
)
from semledger.eventlog import (
    DAMAGED_LOG_ERRORS,
    EventLogError,
    LogOpenError,
    SessionClaimedError,
    SqliteRecorder,
)
from semledger.replay import load_app
from semledger.runtime._text import printable_traceback

from ._host import AgentDiagnosticsHost, AgentHost
from ._loopback import on_loopback
from ._router import Router
from ._session_host import RuntimeAgentHost, SessionDiagnosticsHost
from ._stdio import OUTPUT_FAILED, run_stdio, stdout_for_messages_only, stop_on_signals


class ServeError(Exception):
    """Raised when a server cannot start: an adapter that cannot open, a logged session
    that cannot be resumed (it crashed, or another app recorded it), an HTTP address
    that cannot be listened on (or not without a token), or an allowed origin that is not
    an origin."""


def new_session_name(prefix: str = "session") -> str:
    return f"{prefix}-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"


def _first(group: BaseExceptionGroup[OSError]) -> OSError:
    """The first of the errors in `group`, however deeply trio's nurseries nested it."""
    error: OSError | BaseExceptionGroup[OSError] = group
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    return error


IDLE_TIMEOUT = 900.0
"""Seconds an HTTP session may go unused before it is parked (`McpHttpApp.park_idle`)."""

STOPPING_GRACE = 30.0
"""Seconds a stopping HTTP server answers the requests it is handling (hypercorn's default,
3, dropped an answer that waited for a log held by another writer)."""


ENDING_GRACE = 10.0
"""Seconds a stopping HTTP server, its requests answered, gives its sessions to log their
ends for now (`SessionRegistry.park_all`); one that has not by then stops without one, as
a killed server's do."""


def _say(text: str) -> None:
    print(f"semledger: {text}", file=sys.stderr, flush=True)


def _say_traceback(error: BaseException) -> None:
    """`error`'s traceback, above the line that names it: a fault of semledger's own code."""
    for line in printable_traceback(error):
        print(line, file=sys.stderr)


_ACCEPT_ADVICE = {
    errno.EMFILE: "this process is out of file descriptors: raise its limit (ulimit -n)",
    errno.ENFILE: "the system is out of file descriptors",
}


class _AcceptFailures(logging.Handler):
    """What trio's accept loop logs when accept fails for want of resources: a traceback
    each time, every 0.1 s while it does (hundreds, out of file descriptors). Said in one
    line, once each burst: a burst ends when none has failed for `quiet` seconds."""

    quiet = 1.0

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self._last = -math.inf

    def emit(self, record: logging.LogRecord) -> None:
        now = time.monotonic()
        if now - self._last > self.quiet:
            error = record.exc_info[1] if record.exc_info else None
            if isinstance(error, OSError) and error.errno is not None:
                advice = _ACCEPT_ADVICE.get(error.errno, "the system is short of memory")
                why = f"{error.strerror} ({advice})"
            else:
                why = record.getMessage()
            _say(f"cannot accept connections: {why}; retrying until it can")
        self._last = now


@contextlib.contextmanager
def _accept_failures_in_one_line() -> Iterator[None]:
    logger = logging.getLogger("trio.serve_listeners")
    handler, propagate = _AcceptFailures(), logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


@attrs.frozen
class _Opened:
    """A session opened for `_serve_logged_stdio`: what serves it, and how it ends."""

    router: Router
    host: AgentHost
    diagnostics: AgentDiagnosticsHost | None
    close: Callable[[str], Awaitable[None]]
    """Called, shielded, with the reason the stdio loop stopped; before the writer closes."""
    failure: Callable[[], str | None] = lambda: None
    """Why the session ended on its own (its application raised, its log failed, its
    surface's session ended) or could not be ended cleanly (its adapter's close raised),
    if so."""


@attrs.frozen
class Served:
    """How a session served over stdio ended."""

    reason: str
    """Why it stopped: end of input, a signal, or its `failure`."""
    failed: bool = False
    """Whether it ended on its own: its application raised, its log or its output (a full
    disk under a redirected stdout) could not be written, or its surface's session ended;
    or its adapter could not close its surface (`semledger serve` then exits 1)."""


_REFUSED: tuple[type[Exception], ...] = (
    ServeError,
    SessionLogError,
    LogOpenError,
    *DAMAGED_LOG_ERRORS,
)
"""What opening the session may raise for the serve command to report, not as a crash
(`LogOpenError`: its claim cannot be made beside the log)."""
_UNREADABLE: tuple[type[Exception], ...] = (LogOpenError, *DAMAGED_LOG_ERRORS)
"""What claiming a surface session and reading its log may raise: not the session's fault."""


_NOT_OURS: tuple[type[Exception], ...] = (EventLogError, OSError, sqlite3.Error)
"""What else opening a session may raise that is no fault of semledger's code but of its
log or the system (a lock another process holds on the log, a file that cannot be read):
raised as itself, for the serve command to report as it reports the log's faults."""


class _StartFailedError(Exception):
    """Raised by an `open_session` whose session started and failed at once, on the record
    (its application raised): no bad usage, but a failed session, with nothing to serve."""


def _internal_failure(name: str, error: Exception) -> str:
    """The line saying that session `name` could not start for `error`, raised by
    semledger's own code (not the application's: that is logged, `_StartFailedError`)."""
    return _failed_inside(f"session {name!r} could not start", error)


def _failed_inside(what: str, error: Exception) -> str:
    """The line saying `what` could not be done for `error`, raised by semledger's own
    code, once the error's traceback is printed."""
    return (
        f"{what}: semledger itself failed, not the application: {error!r} (a bug in"
        " semledger; its traceback, above, is for a bug report)"
    )


async def _serve_logged_stdio(
    db: str | Path,
    name: str,
    open_session: Callable[[trio.Nursery, LogWriter, SqliteRecorder], Awaitable[_Opened]],
    **stdio: Any,
) -> Served:
    """The composition root shared by app and surface sessions over stdio: the log, its
    writer, the session `open_session` opens (raising `ServeError` when it cannot, or one
    of `DAMAGED_LOG_ERRORS` when the session's log is damaged), the stdio loop until end of
    input or a signal, then the session ended and the log written. A session that semledger's
    own code failed to open (a bug: anything else raised) is said on stderr, its traceback
    then a last line saying so (`_internal_failure`), and has failed.
    """
    recorder = SqliteRecorder(db)
    reason = "not started"
    refused: Exception | None = None
    failed: _StartFailedError | None = None
    internal: Exception | None = None
    try:
        async with stop_on_signals() as stop:
            async with trio.open_nursery() as nursery:
                writer = await nursery.start(LogWriter(recorder).run)
                stop.opening = True
                try:
                    opened = await open_session(nursery, writer, recorder)
                except _REFUSED as error:
                    # Raised after the nursery, which would wrap it in an exception group.
                    refused = error
                    writer.close()
                    return Served(reason)
                except _StartFailedError as error:
                    failed = error
                    writer.close()
                    return Served(str(error), failed=True)
                except _NOT_OURS as error:
                    refused = error
                    writer.close()
                    return Served(reason)
                except Exception as error:  # semledger's bug: said in a line, not a group
                    internal = error
                    writer.close()
                    return Served(_internal_failure(name, error), failed=True)
                stop.opening = False
                with stop.scope:
                    reason = await run_stdio(
                        opened.router, opened.host, opened.diagnostics, **stdio
                    )
                reason = stop.reason or reason
                with trio.CancelScope(shield=True):
                    await opened.close(reason)
                    writer.close()
            stop.settled = True  # the session's end is written
    finally:
        recorder.close()
        if refused is not None:
            raise refused
        if failed is not None:  # once its crash is written, as it says
            _say(str(failed))
        if internal is not None:
            _say_traceback(internal)
            _say(_internal_failure(name, internal))
    failure = opened.failure()
    _say(f"session {name!r} ended: {failure or reason}")
    return Served(failure or reason, failure is not None or reason.startswith(OUTPUT_FAILED))


_Serve = TypeVar("_Serve", bound=Callable[..., Awaitable[Served]])


def _messages_alone_on_stdout(serve: _Serve) -> _Serve:
    """`serve` (a session served over stdin/stdout) with nothing but its messages written to
    stdout, from the application's import to its session's end (`stdout_for_messages_only`):
    what else the process prints goes to stderr. Unless it is given an output of its own
    (``send``), which stdout is then no part of."""

    @functools.wraps(serve)
    async def serving(*args: Any, **kwargs: Any) -> Served:
        if "send" in kwargs:
            return await serve(*args, **kwargs)
        with stdout_for_messages_only() as messages:
            send = trio.lowlevel.FdStream(os.dup(messages))
            return await serve(*args, **kwargs, send=send)

    return cast(_Serve, serving)


@_messages_alone_on_stdout
async def serve_stdio(
    app_ref: str,
    *,
    db: str | Path = "semledger.db",
    session: str | None = None,
    diagnostics: bool = False,
    redact_passwords: bool = True,
    **stdio: Any,
) -> Served:
    """Serve `app_ref` as one logged session over stdin/stdout; returns how it ended."""
    name = new_session_name("stdio") if session is None else session
    check_session_name(name)
    app = load_app(app_ref)

    async def open_session(
        nursery: trio.Nursery, writer: LogWriter, recorder: SqliteRecorder
    ) -> _Opened:
        closing = False

        def ended(actor: SessionActor) -> None:
            """Said as it happens, while input goes on: the client may go on for long, each
            call told ``host_closed``, before the last line says it again."""
            if actor.failure is not None and not closing:
                _say(
                    f"session {actor.name!r} ended: {actor.failure}{actor.failed_at};"
                    " answering host_closed until end of input"
                )

        registry = SessionRegistry(nursery, writer, recorder, on_stopped=ended)
        made: list[SessionActor] = []

        def make() -> SessionActor:
            new = SessionActor(
                name, app, app_ref, writer, recorder, redact_passwords=redact_passwords
            )
            made.append(new)
            return new

        try:
            actor = await registry.open(name, make)
        except SessionLogError:
            raise  # not bad usage: the session failed as it started (a full disk, say)
        except ActorError as error:
            if made and made[-1].ended:  # its application raised as it started, logged
                raise _StartFailedError(f"{error}{made[-1].failed_at}") from error
            raise ServeError(str(error)) from error  # a session it may not resume, say
        except SessionClaimedError as error:
            raise ServeError(str(error)) from error
        verb = "resumed" if actor.recovered else "started"
        _say(f"{verb} session {name!r} of {app_ref}, logging to {db}")
        host = RuntimeAgentHost(actor)

        async def close(reason: str) -> None:
            nonlocal closing
            closing = True
            # An end that cannot be logged (a full disk, say) is the session's `failure`.
            with contextlib.suppress(ActorError):
                await registry.close(name, reason)

        return _Opened(
            Router(profile="diagnostics" if diagnostics else "default"),
            host,
            SessionDiagnosticsHost(host) if diagnostics else None,
            close,
            lambda: actor.failure and actor.failure + actor.failed_at,
        )

    return await _serve_logged_stdio(db, name, open_session, **stdio)


async def serve_http(
    app_ref: str,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    db: str | Path = "semledger.db",
    diagnostics: bool = False,
    token: str | None = None,
    allowed_origins: tuple[str, ...] = (),
    redact_passwords: bool = True,
    idle_timeout: float | None = IDLE_TIMEOUT,
    task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED,
) -> int:
    """Serve `app_ref` over Streamable HTTP at ``/mcp`` until SIGINT, SIGTERM or SIGHUP
    (a second one stops the process at once, as over stdio); returns how many sessions
    failed (their application raised, their log could not be written) or could not be
    opened (for their log, or for a bug in semledger). Raises `ServeError` for an address
    beyond loopback with no `token`, among others.

    A session no request has used for `idle_timeout` seconds is parked (None: never):
    its actor stops, its end logged for now, and its client's next request resumes it from
    the log, as after a restart.

    Stopping, it answers the requests it is handling before it closes their connections,
    for up to `STOPPING_GRACE` seconds: an action being logged is answered with its
    receipt, not dropped unanswered while it is applied.

    Started with ``nursery.start``, it reports the URLs of its endpoint once it listens
    (``http://127.0.0.1:PORT/mcp``; with port 0, the port it was given).

    Sessions are ended for now when the server stops (within `ENDING_GRACE` seconds):
    their clients may come back to a new server on the same log, which recovers them.
    """
    from hypercorn.config import Config

    from ._http import McpHttpApp, check_token, normalize_origin
    from ._hypercorn import serve

    try:
        origins = tuple(normalize_origin(origin) for origin in allowed_origins)
    except ValueError as error:
        raise ServeError(f"allowed origin {error}") from error
    try:
        check_token(token)
    except ValueError as error:
        raise ServeError(str(error)) from None
    bare = host.strip("[]")  # "[::1]" or "::1"
    bind = f"[{bare}]:{port}" if ":" in bare else f"{bare}:{port}"
    if not 0 <= port <= 65535:
        raise ServeError(f"cannot listen on {bind}: the port must be from 0 to 65535")
    if idle_timeout is not None and not 0 < idle_timeout < math.inf:
        raise ServeError(f"idle_timeout: expected a positive number of seconds, got {idle_timeout}")
    if token is None and not on_loopback(host):
        raise ServeError(
            f"cannot listen on {bind} with no token: anyone who reaches the port could drive"
            " the app (give a token, or listen on 127.0.0.1)"
        )
    app = load_app(app_ref)
    made = [Path(db), *(Path(f"{db}{suffix}") for suffix in ("-wal", "-shm", "-claims"))]
    new_log = not any(path.exists() for path in made)
    recorder = SqliteRecorder(db)
    config = Config()
    config.bind = [bind]
    config.accesslog = None
    config.errorlog = "-"  # a failure inside the app reaches the operator, not just a 500
    config.loglevel = "WARNING"
    config.graceful_timeout = STOPPING_GRACE
    unbound: OSError | None = None
    failures: list[str] = []

    def ended(actor: SessionActor) -> None:
        """One line for each session that ended on its own, as `serve` over stdio says."""
        if actor.failure is not None:
            failure(f"session {actor.name!r} ended: {actor.failure}{actor.failed_at}")

    def failure(why: str) -> None:
        failures.append(why)
        _say(why)

    def failed_inside(what: str, error: Exception) -> None:
        """A session semledger's own code failed to open: as over stdio, the error's
        traceback, then the line that says so."""
        _say_traceback(error)
        failure(_failed_inside(what, error))

    try:
        async with stop_on_signals() as signalled:
            async with trio.open_nursery() as logging:
                writer = await logging.start(LogWriter(recorder).run)
                async with trio.open_nursery() as nursery:
                    registry = SessionRegistry(nursery, writer, recorder, on_stopped=ended)
                    asgi = McpHttpApp(
                        registry,
                        app,
                        app_ref,
                        diagnostics=diagnostics,
                        token=token,
                        allowed_origins=origins,
                        redact_passwords=redact_passwords,
                        on_failure=failure,
                        on_event=_say,
                        on_internal_failure=failed_inside,
                    )
                    if idle_timeout is not None:
                        nursery.start_soon(asgi.park_idle, idle_timeout)

                    async def stopped() -> None:
                        await signalled.requested.wait()
                        # Before hypercorn closes its idle connections: a request it reads
                        # as it closes one would be applied and its answer dropped.
                        asgi.stop()

                    async def serving(task_status: trio.TaskStatus[list[str]]) -> None:
                        with _accept_failures_in_one_line():  # of hypercorn's accept loop
                            await serve(
                                asgi, config, shutdown_trigger=stopped, task_status=task_status
                            )

                    async with trio.open_nursery() as http:
                        try:
                            binds = await http.start(serving)
                        except* OSError as failed:
                            # Starting hypercorn is binding its socket; an OSError once it
                            # serves is a failure of the run, and propagates as it is.
                            unbound = _first(failed)
                        else:
                            endpoints = [f"{bound}/mcp" for bound in binds]
                            _say(f"serving {app_ref} at {endpoints[0]}, logging to {db}")
                            task_status.started(endpoints)
                    # hypercorn has stopped, after answering the requests it was serving:
                    # each session's end is logged for now, so that its audit tells this
                    # stop from a kill, and its client's next request resumes it.
                    stopped_by = signalled.reason
                    reason = "the server stopped" + (f" ({stopped_by})" if stopped_by else "")
                    for name in await _end_for_now(registry, reason):
                        failure(
                            f"session {name!r} stopped with no end logged: the log did not"
                            f" take it within {ENDING_GRACE:g} s (as after a kill, it resumes"
                            " from its last logged event)"
                        )
                    nursery.cancel_scope.cancel()
                writer.close()  # what the sessions handed it is written before it ends
            # Before the line that says so: a signal handler may run between any two lines.
            signalled.settled = True  # every session's end is written
            # After the writer's last word: it says what it gave up writing.
            if unbound is None:
                _say(f"stopped serving {app_ref}; {len(failures)} session(s) failed")
    finally:
        recorder.close()
    if unbound is not None:
        if new_log:  # made for this run, which served nothing: not left behind
            for path in made:
                with contextlib.suppress(OSError):
                    if path.is_dir():
                        path.rmdir()
                    else:
                        path.unlink(missing_ok=True)
        # Raised after the nurseries, which would wrap it in an exception group.
        raise ServeError(f"cannot listen on {config.bind[0]}: {unbound}") from unbound
    return len(failures)


async def _end_for_now(registry: SessionRegistry, reason: str) -> list[str]:
    """End every session for now (`SessionRegistry.park`, all at once: one log transaction
    may hold all their ends), for up to `ENDING_GRACE` seconds; the names of those whose
    end was not logged by then (a lock another process holds on the log, say). Those still
    starting are ended once started, as `SessionRegistry.park_all` ends them."""
    unended = set(registry.open_names)

    async def park(name: str) -> None:
        await registry.park_once_started(name, reason)
        unended.discard(name)

    with trio.move_on_after(ENDING_GRACE):
        async with trio.open_nursery() as nursery:
            for name in sorted(unended):
                nursery.start_soon(park, name)
    return sorted(unended)


@_messages_alone_on_stdout
async def serve_surface(
    config: dict[str, Any],
    init: Any,
    *,
    db: str,
    session: str | None = None,
    label: str | None = None,
    redact_passwords: bool = True,
    **stdio: Any,
) -> Served:
    """Serve the surface ``config`` names as one logged session over stdin/stdout, through
    the same router and tools as an app; returns how it ended.

    The log holds the surface's calls (``LoggedSurface``) and the agent's requests with
    their outcomes (``LoggedSurfaceHost``). A session name already in the log resumes as a
    new segment if it was started by this adapter on this app, and is refused otherwise (and
    once it crashed). An adapter that cannot be made or opened, whatever it raises, is a
    `ServeError`; one that breaks the contract while serving crashes the session, which
    is said at once, as an app session's crash is. One whose close raises, at the end,
    fails the session."""
    from semledger.adapters import (
        AdapterRegistryError,
        LoggedSurface,
        SurfaceError,
        create_surface,
    )

    from ._surface_audit import LoggedSurfaceHost

    def raised(error: Exception) -> str:
        """What an adapter's error says: its class too when it is no `SurfaceError`."""
        return str(error) if isinstance(error, SurfaceError) else f"it raised {error!r}"

    adapter = str(config["adapter"])
    try:
        surface = create_surface(config)
    except (SurfaceError, AdapterRegistryError) as error:
        raise ServeError(f"adapter {adapter!r}: {error}") from error
    except Exception as error:  # the factory's bug, or a driver it could not start
        raise ServeError(f"adapter {adapter!r} could not be made: it raised {error!r}") from error
    name = new_session_name(adapter) if session is None else session
    check_session_name(name)

    async def open_session(
        _nursery: trio.Nursery, writer: LogWriter, _recorder: SqliteRecorder
    ) -> _Opened:
        logged = LoggedSurface(
            surface,
            writer,
            name,
            adapter,
            app=label,
            config=config,
            redact_passwords=redact_passwords,
        )

        async def refused(**reason: str) -> None:
            """Closed as the session is refused: why it is refused is the news, not an
            error closing the surface raises (the log ends "close failed: ..." if started)."""
            with trio.CancelScope(shield=True), contextlib.suppress(Exception):
                await logged.close(**reason)

        def ended(failure: str) -> None:
            """Said as it happens, while input goes on, as an app session's end is."""
            _say(f"session {name!r} ended: {failure}; answering host_closed until end of input")

        # Nothing is logged until the session is known to be ours, resumable as this one,
        # and readable: its servers' log is what the bridge goes on from.
        try:
            logged.claim(init)
            host = LoggedSurfaceHost(logged, on_ended=ended)
        except (
            SessionClaimedError,
            SessionCrashedError,
            SessionEndedError,
            SessionMismatchError,
        ) as error:
            await refused()
            raise ServeError(str(error)) from error
        except _UNREADABLE:
            await refused()
            raise
        try:
            await logged.open(init)
        except SessionLogError:
            await refused()
            raise
        except Exception as error:  # a SurfaceError, or the adapter's bug: refused alike
            await refused(reason="could not open")
            raise ServeError(f"adapter {adapter!r} could not open: {raised(error)}") from error
        verb = "resumed" if logged.resumed else "started"
        _say(f"{verb} surface session {name!r} ({adapter}), logging to {db}")
        unclosed: str | None = None

        async def close(reason: str) -> None:
            nonlocal unclosed
            host.close()
            # A session whose surface ended (its application died) ended then, not here.
            why = host.failure or reason
            try:
                await logged.close(reason=why)
            except Exception as error:  # the log ends "close failed: ...", and so does serve
                unclosed = f"{why}, and its adapter {adapter!r} could not close: {raised(error)}"

        return _Opened(
            Router(profile="default"), host, None, close, lambda: unclosed or host.failure
        )

    return await _serve_logged_stdio(db, name, open_session, **stdio)
