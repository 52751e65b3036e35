"""Streamable HTTP (MCP 2025-06-18 / 2025-11-25) as a small ASGI app, served by hypercorn on Trio.

The transport only moves bytes: each MCP session has its own router and its own session
actor (its own app instance); the session id is the log's session name, so a session
outlives the server process and is recovered from the log when its client comes back.
"""

from __future__ import annotations

import collections
import functools
import hmac
import ipaddress
import logging
import re
import secrets
import sqlite3
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, Final
from urllib.parse import urlsplit

import attrs
import trio

from semledger.actors import (
    ActorError,
    SessionActor,
    SessionLogError,
    SessionRegistry,
    check_app_ref,
)
from semledger.eventlog import (
    DAMAGED_LOG_ERRORS,
    AgentConnected,
    EventLogError,
    SessionClaimedError,
    SessionOverError,
    session_end,
    session_start,
    unstarted,
)
from semledger.runtime import App
from semledger.runtime._app import check_app

from ._dispatch import announce, handle_message
from ._dispatch import answer as answer_call
from ._loopback import on_loopback
from ._router import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    SUPPORTED_PROTOCOL_VERSIONS,
    Event,
    Reply,
    ReplyMessage,
    Router,
    ToolCall,
    encode_json,
    error_reply,
    parse_error_reply,
    parse_json,
)
from ._session_host import RuntimeAgentHost, SessionDiagnosticsHost

Scope = Mapping[str, Any]
Receive = Callable[[], Awaitable[Mapping[str, Any]]]
Send = Callable[[Any], Awaitable[None]]
"""ASGI's callables as loosely as an ASGI server's own types (hypercorn's TypedDicts, say)
are accepted for them: `McpHttpApp` is passed to such a server as it is."""

SERVER_ERROR: Final = -32000
"""JSON-RPC's first implementation-defined server error: an HTTP 5xx refusal's code."""

MAX_BODY = 4 << 20
BODY_TIMEOUT = 30.0
"""Seconds a request's body may take to arrive, once its headers have: a client that
stalls is answered ``408`` and its connection closed. (Hypercorn's ``read_timeout`` is no
such limit: it would also drop the connection of a client that waits for a slow answer.)"""
_STOPPING = "the server is stopping: a new server on this log resumes the session"
_NO_SESSION_ID = "Mcp-Session-Id header required"
_DELETED = "deleted by the client"
_CLOSE = [("connection", "close")]
_ALLOW = "POST, DELETE, OPTIONS"
_PREFLIGHT_HEADERS = (
    ("access-control-allow-methods", "POST, DELETE"),
    (
        "access-control-allow-headers",
        "content-type, accept, authorization, mcp-session-id, mcp-protocol-version, last-event-id",
    ),
    ("access-control-max-age", "600"),
)
"""The answer to a CORS preflight from an allowed origin: what its page may send."""
_DEFAULT_PORTS = {"http": 80, "https": 443}
_log = logging.getLogger("semledger.hosts")
_UNOPENED: Final = (SessionLogError, EventLogError, sqlite3.Error, OSError)
"""What opening or resuming a session raises when its log cannot be written or read (a
full disk, a deleted file) or no claim can be made (out of file descriptors): not a bug
inside the server, and perhaps over soon: a ``503``. A resume, or the end of a session
this server does not serve, answers two kinds among them otherwise (`_log_refusal`):
`SessionClaimedError` and the `DAMAGED_LOG_ERRORS`."""
_BUG: Final = "(a bug in semledger; the server's operator has its traceback)"
"""What a client is told of an error semledger's own code raised as it opened its session."""
TRANSPORT: Final = "http"
"""How its sessions' starts (``params["transport"]``) and connections name this transport:
a server resumes only sessions whose start says so."""


def normalize_origin(text: str) -> str:
    """`text` as an origin compares: ``scheme://host[:port]``, scheme and host lower-cased,
    an IP address written as `ipaddress` writes it (``[0:0::1]`` is ``[::1]``), the
    scheme's default port dropped. Raises ``ValueError`` for anything else (a path, a
    query, credentials, no scheme or host, a bad port)."""
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as error:  # a bracketed host or a port that is not one
        raise ValueError(f"{text!r} is not an origin: {error}") from None
    host = parts.hostname
    if not parts.scheme or not host or parts.username is not None or parts.password is not None:
        raise ValueError(f"{text!r} is not an origin: expected scheme://host[:port]")
    if parts.path or parts.query or parts.fragment or text.endswith(("?", "#")):
        raise ValueError(f"{text!r} is not an origin: it has a path, query or fragment")
    host = _address_or_name(host, bracketed="[" in parts.netloc)
    if port is None or port == _DEFAULT_PORTS.get(parts.scheme):
        return f"{parts.scheme}://{host}"
    return f"{parts.scheme}://{host}:{port}"


def _address_or_name(host: str, *, bracketed: bool) -> str:
    """An origin's `host` (lower-cased, brackets cut) as it compares: an IP address in one
    spelling, an IPv6 one (or any bracketed host) in brackets again."""
    try:
        address = str(ipaddress.ip_address(host))
    except ValueError:  # a name, or an IPvFuture literal
        address = host
    return f"[{address}]" if bracketed or ":" in address else address


def check_token(token: object) -> None:
    """Raise ``TypeError`` unless `token` is a str or None, ``ValueError`` unless a str is
    visible ASCII with no space at either end: a header carries nothing else and loses
    those spaces, so any other token could never be matched, and an empty one matched a
    bare ``Bearer``. The token is a secret: never shown."""
    if token is None:
        return
    if not isinstance(token, str):
        raise TypeError(f"token: expected a str or None, got {type(token).__name__}")
    if not (token.isascii() and token.isprintable() and token.strip()):
        got = "others too" if token.strip() else "none"
        raise ValueError(
            f"token: expected visible ASCII characters (it travels in a header), got {got}"
        )
    if token != token.strip(" "):
        raise ValueError(
            "token: expected no space at its start or end (a header's value loses them),"
            " got some"
        )


@attrs.define
class _Connection:
    router: Router
    host: RuntimeAgentHost
    diagnostics: SessionDiagnosticsHost | None
    came_back: bool = False
    """Resumed by this server and not yet logged: its client is logged as ``resumed``
    before its first call, unless the first message is an ``initialize`` its router accepts
    (logged as that connection instead)."""
    parked_version: str | None = None
    """Of a session this server parked and resumed, the protocol version its client spoke."""
    busy: int = 0
    """Requests being answered: a session is never parked under one."""
    used: float = attrs.field(factory=trio.current_time)
    """When its last request was answered (Trio's clock)."""


class McpHttpApp:
    """POST /mcp with JSON responses, DELETE to end a session, Origin and bearer checks,
    CORS for the origins it accepts."""

    def __init__(
        self,
        registry: SessionRegistry,
        app: App[Any, Any],
        app_ref: str,
        *,
        diagnostics: bool = False,
        token: str | None = None,
        allowed_origins: Iterable[str] = (),
        redact_passwords: bool = True,
        on_failure: Callable[[str], None] | None = None,
        on_event: Callable[[str], None] | None = None,
        on_internal_failure: Callable[[str, Exception], None] | None = None,
    ) -> None:
        if not isinstance(registry, SessionRegistry):
            raise TypeError(
                f"registry: expected a SessionRegistry, got {type(registry).__name__}"
                f" {registry!r:.80}"
            )
        check_app(app)
        check_app_ref(app_ref)
        check_token(token)
        if isinstance(allowed_origins, str):
            raise TypeError(
                f"allowed_origins: expected a list of origins, got the str {allowed_origins!r:.80}"
                f" (give [{allowed_origins!r:.80}])"
            )
        self.registry = registry
        self.on_failure = on_failure
        """Told why, each time a session cannot be opened for its log (its operator must
        hear of it: the client only learns that it has no session)."""
        self.on_event = on_event
        """Told, in one line, each time a session is parked, resumed from the log, ended by
        its client, or refused a request for its log (``409``, ``500``): what its operator
        could not see otherwise."""
        self.on_internal_failure = on_internal_failure
        """Told what could not be done (``session '…' could not start``, or ``could not be
        resumed``) and the error, each time semledger's own code raised as it opened a
        session: a bug, neither its application's fault nor its log's, whose traceback is
        for a bug report. Without it, that is logged (``semledger.hosts``, with the
        traceback). The server goes on serving the other sessions."""
        self.app = app
        self.app_ref = app_ref
        self.diagnostics = diagnostics
        self.token = token
        self.allowed_origins = frozenset(normalize_origin(o) for o in allowed_origins)
        self.redact_passwords = redact_passwords
        self._connections: dict[str, _Connection] = {}
        self._over: collections.OrderedDict[str, str] = collections.OrderedDict()
        """Sessions this server held that are over, with the refusal that says why: never
        brought back by this process (the last `REMEMBERED_SESSIONS`; an older one's end is
        read from the log)."""
        self._parked_versions: collections.OrderedDict[str, str] = collections.OrderedDict()
        """The protocol version each session parked while this server served it spoke (parked
        by the server or through its registry): its client, whose next request resumes it,
        goes on as it negotiated, header or not (the last `REMEMBERED_SESSIONS` parked)."""
        self.stopping = False
        """Set by `stop`: every request from then on is a ``503`` and changes nothing, so
        none is applied on a connection that is closing unanswered."""
        self._reading: set[trio.CancelScope] = set()
        """The body reads under way: cancelled by `stop`."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        headers, repeated = _read_headers(scope["headers"])
        origin = None if "origin" in repeated else headers.get("origin")
        origin_ok = self._origin_ok(origin)
        send = _adding_headers(send, _cors_headers(origin if origin_ok else None))
        if self.stopping:
            await _refuse(send, 503, _STOPPING, extra=_CLOSE)
            return
        refuse = functools.partial(self._refuse_unread, receive, send)
        if scope["path"].rstrip("/") != "/mcp":
            await refuse(404, "not found: the MCP endpoint is /mcp")
            return
        if repeated:
            await refuse(400, _sent_twice(repeated))
            return
        if not origin_ok:
            await refuse(403, _refused_origin(origin or ""))
            return
        method = scope["method"]
        if _is_preflight(method, headers):
            # Before the token: browsers never send credentials with a preflight.
            await _respond(send, 204, None, extra=_PREFLIGHT_HEADERS)
            return
        if self.token is not None and not _bearer_ok(headers.get("authorization"), self.token):
            await refuse(
                401, "missing or wrong bearer token", extra=[("www-authenticate", "Bearer")]
            )
            return
        unsupported = _unsupported_version(headers)
        if unsupported is not None and method != "POST":  # a POST's is judged with its body
            await refuse(400, unsupported)
            return
        if method == "POST":
            await self._post(headers, receive, send, _peer(scope))
        elif method == "DELETE":
            await self._delete(headers, send, _peer(scope))
        elif method == "OPTIONS":
            await _respond(send, 204, None, extra=[("allow", _ALLOW)])
        else:
            why = "use POST (or DELETE to end a session)"
            await refuse(405, why, extra=[("allow", _ALLOW)])

    async def _refuse_unread(
        self,
        receive: Receive,
        send: Send,
        status: int,
        why: str,
        *,
        extra: Iterable[tuple[str, str]] = (),
    ) -> None:
        """`_refuse` a request whose body is not read yet, once it is read and dropped (for
        up to the body timeout): a connection closed with data unread is reset, and the
        reset loses the answer for a client that writes its whole body before it reads
        (httpx's async client, the MCP SDK's); a 401 came to it as a ReadError. A body not
        whole in time (or at a stop) leaves the rest unread: the answer closes the
        connection, which could not carry another request."""
        try:
            _, whole = await self._read_in_time(receive)
        except _ClientGoneError:
            return
        await _refuse(send, status, why, extra=[*extra, *(() if whole else _CLOSE)])

    async def _read_in_time(self, receive: Receive) -> tuple[bytes | None, bool]:
        """`_read_body` within the body timeout, which `stop` ends at once: the body (None
        if over the limit) and whether it came whole in time. Raises `_ClientGoneError`."""
        with trio.move_on_after(BODY_TIMEOUT) as reading:
            self._reading.add(reading)
            try:
                return await _read_body(receive), True
            finally:
                self._reading.discard(reading)
        return None, False

    def stop(self) -> None:
        """Called as the server starts to stop. A request whose body is still coming is
        answered ``503`` at once: the server waits for the requests it is answering, and a
        body that never comes would hold it for its whole grace period."""
        self.stopping = True
        for reading in self._reading:
            reading.cancel()

    def _origin_ok(self, origin: str | None) -> bool:
        """DNS-rebinding protection: browsers send Origin; only local pages may talk to us."""
        if origin is None:
            return True
        try:
            normal = normalize_origin(origin)
        except ValueError:  # "null", say
            return False
        return normal in self.allowed_origins or on_loopback(urlsplit(normal).hostname)

    async def _post(
        self, headers: dict[str, str], receive: Receive, send: Send, peer: str | None
    ) -> None:
        body = await self._body(receive, send, headers.get("content-length"))
        if body is None:
            return
        unacceptable = _unacceptable(headers)
        if unacceptable is not None:
            status, why = unacceptable
            await _refuse(send, status, why)
            return
        try:
            message = parse_json(body)
        except (ValueError, RecursionError) as error:
            await _respond(send, 400, parse_error_reply(error, "body"))
            return
        is_initialize = _is_initialize(message)
        unsupported = _unsupported_version(headers)
        if unsupported is not None and not is_initialize:  # initialize negotiates in its body
            await _refuse(send, 400, unsupported)
            return
        in_a_batch = isinstance(message, list) and any(map(_is_initialize, message))
        if (is_initialize or in_a_batch) and "mcp-session-id" not in headers:
            await self._initialize(message, send, peer)
            return
        found = await self._session(headers, send, initialize=is_initialize)
        if found is None:
            return
        session_id, connection = found
        connection.busy += 1
        try:
            replies = await self._answer(connection, message, is_initialize, headers, peer)
        finally:
            connection.busy -= 1
            connection.used = trio.current_time()
        extra = [("mcp-session-id", session_id)]
        if not replies:
            await _respond(send, 202, None, extra=extra)
        else:
            (reply,) = replies  # one message in (a batch is one), at most one answer out
            await _respond(send, _status(message), reply, extra=extra)

    async def _body(self, receive: Receive, send: Send, declared: str | None) -> bytes | None:
        """The request's body; or None once the request has been answered with why there
        is none, or its client has gone. Such an answer closes the connection: what is
        left of a body cut off by the time limit is never read, so it cannot carry another
        request.

        A body over the limit is read to its end and dropped (`_read_body`), then refused
        as too large; one whose `declared` length (its Content-Length) is over the limit is
        so refused also if it is late or the server stops meanwhile: a late body was told
        it was late, never that it was too large.
        """
        over = declared is not None and declared.isdigit() and int(declared) > MAX_BODY
        try:
            body, whole = await self._read_in_time(receive)
        except _ClientGoneError:  # before its body ended: nothing to answer, or apply
            return None
        if not whole and not over:
            if self.stopping:
                await _refuse(send, 503, _STOPPING, extra=_CLOSE)
            else:
                why = f"the request body did not arrive within {BODY_TIMEOUT:g} seconds"
                await _refuse(send, 408, why, extra=_CLOSE)
            return None
        if over or body is None:
            await _refuse(send, 413, f"request body over {MAX_BODY} bytes", extra=_CLOSE)
            return None
        return body

    async def _initialize(self, message: object, send: Send, peer: str | None) -> None:
        """An ``initialize`` without a session id opens a session only once its router has
        answered it: one it refuses (not a valid request, malformed params, in a batch)
        opens none."""
        router = self._router()
        events = router.receive_message(message)
        if not events:
            await _refuse(send, 400, "initialize must be a request, with an id")
            return
        (reply,) = events  # initialize is answered by the router alone
        assert isinstance(reply, Reply)
        if router.protocol_version is None:
            await _respond(send, 200, reply.message)
            return
        session_id = secrets.token_hex(16)
        made: list[SessionActor] = []
        try:
            connection = await self._open(session_id, router, made)
        except _UNOPENED as error:
            await _refuse(send, 503, self._unopened("could not open a session", error))
            return
        except ActorError as error:  # the application raised as it started, say
            if self.on_failure is not None:
                where = made[-1].failed_at if made else ""
                self.on_failure(f"session {session_id!r} could not start: {error}{where}")
            await _respond(send, 200, error_reply(message, INTERNAL_ERROR, f"no session: {error}"))
            return
        except Exception as error:  # a bug in semledger: its traceback is for the operator
            self._failed_inside(f"session {session_id!r} could not start", error)
            why = f"no session: semledger itself failed to open it, not the application: {error!r}"
            await _respond(send, 200, error_reply(message, INTERNAL_ERROR, f"{why} {_BUG}"))
            return
        await announce(router, connection.host, TRANSPORT, peer)
        await _respond(send, 200, reply.message, extra=[("mcp-session-id", session_id)])

    async def _answer(
        self,
        connection: _Connection,
        message: object,
        is_initialize: bool,
        headers: dict[str, str],
        peer: str | None,
    ) -> list[ReplyMessage]:
        """The session's answers to `message`, with who connected logged as the client was
        told: an ``initialize`` its router accepts (a session resumed here has a new router)
        as a connection, one it refuses not at all."""
        router = connection.router
        if not is_initialize:
            await self._came_back(connection, headers, peer)
            return await _run(connection, router.receive_message(message))
        initialized = router.protocol_version is not None
        # Answered by the router alone: no call runs, nothing can come in between.
        replies = await handle_message(router, connection.host, message, connection.diagnostics)
        if initialized or router.protocol_version is None:
            await self._came_back(connection, headers, peer)
        else:
            connection.came_back = False
            await announce(router, connection.host, TRANSPORT, peer)
        return replies

    async def _came_back(
        self, connection: _Connection, headers: dict[str, str], peer: str | None
    ) -> None:
        """Log a client that came back with its session id alone, once, before its first
        call to this server."""
        if connection.came_back:
            connection.came_back = False
            version = headers.get("mcp-protocol-version")
            if version not in SUPPORTED_PROTOCOL_VERSIONS:  # on an initialize its router refused
                version = None
            # Its router never negotiated: MCP says to assume 2025-03-26 without the header
            # (which 2025-06-18 and later clients send) unless the version is known some
            # other way, and batches are judged by that.
            assumed = version or connection.parked_version or "2025-03-26"
            connection.router.assumed_version = assumed
            resumed = AgentConnected(None, version, TRANSPORT, peer, resumed=True)
            await connection.host.connected(resumed)

    async def park_idle(self, after: float) -> None:
        """Park each session no request has used for `after` seconds (`SessionRegistry.park`,
        its end logged for now): its client's next request resumes it from the log, as after
        a restart. Without this, every session a client left without a DELETE held its
        actor, its memory and a file descriptor (its claim) for as long as the server ran,
        until none was left."""
        while True:
            await trio.sleep(after / 4)
            now = trio.current_time()
            for session_id, connection in list(self._connections.items()):
                if self._connections.get(session_id) is not connection:
                    # Deleted, forgotten or parked while an earlier one was parked.
                    continue
                if connection.busy or now - connection.used < after:
                    continue
                if self._stale(session_id, connection):  # its actor is gone already
                    self._drop(session_id, connection)
                    continue
                del self._connections[session_id]
                self._remember_version(session_id, connection)
                reason = f"parked: no request for {after:g} s"
                await self.registry.park(session_id, reason)
                if connection.host.session.failure is None:  # else it says it ended, and why
                    self._tell(f"session {_shown(session_id)} {reason}")

    def _remember_version(self, session_id: str, connection: _Connection) -> None:
        """Keep the protocol version the client of a session being parked (here, or through
        the registry by its owner) spoke, for the request that resumes it."""
        router = connection.router
        spoke = router.protocol_version or router.assumed_version
        if spoke is not None:
            _remember(self._parked_versions, session_id, spoke)

    def _stale(self, session_id: str, connection: _Connection) -> bool:
        """Whether the connection's actor no longer serves its session: it ended on its
        own, or the registry's owner parked or closed it (`SessionRegistry.park`)."""
        running = self.registry.get(session_id)
        return connection.host.closed or running is not connection.host.session

    def _drop(self, session_id: str, connection: _Connection) -> None:
        """Drop a `_stale` connection. A session parked or closed through the registry
        (its actor stopped, and did not fail) is what its log says, as one this server
        parked: the next request resumes it, unless it was ended for good. One that ended
        on its own (its application raised, its log could not be written) is over on this
        server (`_forget`)."""
        actor = connection.host.session
        failure = actor.failure or self.registry.crashes.get(session_id)
        if failure is None and self.registry.get(session_id) is not actor:
            self._connections.pop(session_id, None)
            self._remember_version(session_id, connection)
            return
        if not connection.host.closed:
            connection.host.close(f"the session ended: {actor.failure or 'its actor failed'}")
        self._forget(session_id, connection)

    def _forget(self, session_id: str, connection: _Connection) -> None:
        """Forget the connection of a session that is over (no server keeps every session
        it ever had), but not that it is over. It may have ended without a SessionEnded:
        another process wrote its log, or the log could not be written. Recovering it here
        would write it again."""
        self._connections.pop(session_id, None)
        why = connection.host.closed_reason or "the session is closed"
        _remember(self._over, session_id, f"session {session_id!r} is over on this server: {why}")

    def _unopened(self, what: str, error: Exception) -> str:
        """Why a session could not be opened, resumed or ended for its log (`_UNOPENED`),
        told to the operator too: the client only learns that it has no session."""
        why = f"{what}: " + (
            str(error) if isinstance(error, SessionLogError) else f"its log: {error}"
        )
        if self.on_failure is not None:
            self.on_failure(why)
        return why

    def _failed_inside(self, what: str, error: Exception) -> None:
        """Tell the operator that `what` (a session could not start, say) for `error`, which
        semledger's own code raised (`on_internal_failure`)."""
        if self.on_internal_failure is not None:
            self.on_internal_failure(what, error)
        else:
            _log.error("%s: semledger itself failed: %r", what, error, exc_info=error)

    def _tell(self, news: str) -> None:
        if self.on_event is not None:
            self.on_event(news)

    async def _refuse_session(self, send: Send, session_id: str, status: int, why: str) -> None:
        """Refuse a request for a session; its operator hears of a ``409`` or a ``500`` (a
        ``503`` is told by `_unopened`; a ``404``, an unknown or ended session, is the
        client's own business)."""
        if status in (409, 500):
            self._tell(f"session {_shown(session_id)} refused ({status}): {why}")
        await _refuse(send, status, why)

    def _log_refusal(self, doing: str, session_id: str, error: Exception) -> tuple[int, str]:
        """The status and reason of a request that would take a session up from the log
        (resume it, or end it for good there) and that `error` (one of `_UNOPENED`) stopped
        before anything was done: the session is as it was. A damaged log is a ``500``, a
        claim another server holds a ``409``, and a log that cannot be opened or written a
        ``503`` its operator hears of: the client may send the request again. (SQLite's
        `OperationalError`, a full disk or an I/O error, is no damage.)"""
        damaged = isinstance(error, DAMAGED_LOG_ERRORS)
        if damaged and not isinstance(error, sqlite3.OperationalError):
            return 500, _unreadable(session_id, error)
        if isinstance(error, SessionClaimedError):  # another server on the log owns it
            return 409, str(error)
        return 503, self._unopened(f"could not {doing} session {_shown(session_id)}", error)

    def _router(self) -> Router:
        return Router(profile="diagnostics" if self.diagnostics else "default")

    async def _open(
        self, session_id: str, router: Router | None = None, made: list[SessionActor] | None = None
    ) -> _Connection:
        """The session's connection, its actor started (and appended to `made`, whose
        `failed_at` tells where its app raised if it raised as it started)."""

        def make() -> SessionActor:
            actor = SessionActor(
                session_id,
                self.app,
                self.app_ref,
                self.registry.writer,
                self.registry.recorder,
                redact_passwords=self.redact_passwords,
                params={"transport": TRANSPORT},
            )
            if made is not None:
                made.append(actor)
            return actor

        actor = await self.registry.open(session_id, make)
        host = RuntimeAgentHost(actor)
        connection = _Connection(
            router or self._router(),
            host,
            SessionDiagnosticsHost(host) if self.diagnostics else None,
        )
        self._connections[session_id] = connection
        return connection

    async def _find(self, session_id: str) -> _Connection | str:
        """The session's connection, opened (resumed) if need be; else why there is none.

        A session resumed here is marked `_Connection.came_back`: the first request its
        client sent this server carried the session id of a server before it.
        """
        await self.registry.settled(session_id)  # not being parked, closed or resumed
        connection = self._connections.get(session_id)
        if connection is not None and not self._stale(session_id, connection):
            return connection
        if connection is not None:
            self._drop(session_id, connection)
        over = self._over.get(session_id)
        if over is not None:
            return over
        unresumable = await trio.to_thread.run_sync(self._unresumable, session_id)
        if unresumable is not None:
            return unresumable
        await self.registry.settled(session_id)
        if session_id in self._connections:  # a request that came with this one resumed it
            return await self._find(session_id)
        connection = await self._open(session_id)
        connection.came_back = True
        connection.parked_version = self._parked_versions.pop(session_id, None)
        self._tell(f"session {_shown(session_id)} resumed (from its log)")
        return connection

    def _unresumable(self, session_id: str) -> str | None:
        """Why the log's session cannot be resumed here (none, of another app, ended for
        good, crashed), as its summary says (and, of an ended one, its end); None if it can:
        one ended for now (parked, its server stopped) is resumed. Raises
        `InconsistentLogError` for one whose event 1 is missing or is not its start."""
        recorder = self.registry.recorder
        summary = recorder.summary(session_id)
        if summary is None:
            return f"unknown session {_shown(session_id)}"
        started = session_start(recorder, session_id)
        if started is None:  # its event 1 is gone or is no start: whatever it was, damage
            raise unstarted(recorder, session_id)
        if started.params.get("transport") != TRANSPORT:
            # A stdio or surface session, named by its operator or by the clock: a name
            # that can be guessed is no credential, and the answer says nothing about it.
            return f"unknown session {_shown(session_id)}"
        if summary.app != self.app_ref:
            return f"session {session_id!r} is a session of {summary.app}, not of {self.app_ref}"
        if summary.crashed:
            return f"session {session_id!r} crashed ({summary.end_reason}): it cannot be resumed"
        end = session_end(recorder, session_id) if summary.ended else None
        if end is not None and end.final:  # by its client (DELETE) or its operator
            return _for_good(session_id, end.reason)
        return None

    async def _session(
        self, headers: dict[str, str], send: Send, *, initialize: bool = False
    ) -> tuple[str, _Connection] | None:
        """The session a request (an ``initialize`` if `initialize`) names and its
        connection, or None once the request has been answered with why there is none."""
        session_id = await _session_id(headers, send, initialize=initialize)
        if session_id is None:
            return None
        try:
            connection = await self._find(session_id)
        except _UNOPENED as error:
            refusal = self._log_refusal("resume", session_id, error)
            await self._refuse_session(send, session_id, *refusal)
            return None
        except ActorError as error:  # it cannot be resumed here
            await self._refuse_session(send, session_id, 409, str(error))
            return None
        except Exception as error:  # semledger's bug: the session is left as it was
            what = f"session {_shown(session_id)} could not be resumed"
            self._failed_inside(what, error)
            why = f"{what}: semledger itself failed, not the application: {error!r} {_BUG}"
            await _refuse(send, 500, why)
            return None
        if isinstance(connection, str):
            await _refuse(send, 404, connection)
            return None
        return session_id, connection

    async def _delete(self, headers: dict[str, str], send: Send, peer: str | None) -> None:
        """End the session for good (`SessionRegistry.close` by its client)."""
        session_id = await _session_id(headers, send)
        if session_id is None:
            return
        await self.registry.settled(session_id)  # not being parked or resumed
        connection = self._connections.get(session_id)
        if connection is not None and self._stale(session_id, connection):
            self._drop(session_id, connection)
            connection = None
        if connection is None:
            refusal = await self._end_unserved(session_id)
        else:
            refusal = await self._end_served(session_id, connection, headers, peer)
        if refusal is not None:
            await self._refuse_session(send, session_id, *refusal)
            return
        _remember(self._over, session_id, _for_good(session_id, _DELETED))
        self._parked_versions.pop(session_id, None)
        self._tell(f"session {_shown(session_id)} ended by its client")
        await _respond(send, 204, None)

    async def _end_served(
        self, session_id: str, connection: _Connection, headers: dict[str, str], peer: str | None
    ) -> tuple[int, str] | None:
        """End a session this server serves, or say why not with its status. It is over here
        before its end is logged: one whose end cannot be logged is a ``500``, over all the
        same."""
        try:
            await self._came_back(connection, headers, peer)
            connection.host.close()
            self._connections.pop(session_id, None)
            _remember(self._over, session_id, _for_good(session_id, _DELETED))
            await self.registry.close(session_id, _DELETED, by="client")
        except SessionClaimedError as error:  # another server on the log serves it
            return 409, str(error)
        except SessionOverError as error:  # ended or crashed since it was looked at
            return 404, str(error)
        except DAMAGED_LOG_ERRORS as error:
            return 500, _unreadable(session_id, error)
        except (ActorError, EventLogError) as error:  # its end could not be logged (full disk)
            return 500, str(error)
        return None

    async def _end_unserved(self, session_id: str) -> tuple[int, str] | None:
        """End in the log a session this server does not serve now (parked, left by a server
        that stopped), or say why not with its status. It is not resumed to be ended: that
        would start again what it left unfinished (an effect that must not run twice), and
        could not end one whose resume is refused. A log that cannot take its end leaves it
        as it was, resumable, and is refused as its resume would be (`_log_refusal`): the
        client may send the DELETE again."""
        try:
            refusal = self._over.get(session_id) or await trio.to_thread.run_sync(
                self._unresumable, session_id
            )
            if refusal is not None:
                return 404, refusal
            await self.registry.close(session_id, _DELETED, by="client")
        except SessionOverError as error:  # ended or crashed since it was looked at
            return 404, str(error)
        except _UNOPENED as error:
            return self._log_refusal("end", session_id, error)
        return None


async def _session_id(
    headers: dict[str, str], send: Send, *, initialize: bool = False
) -> str | None:
    """The session id a request (an ``initialize`` if `initialize`) names, or None once it
    has been answered ``400``: it names none (an empty header names none either), or one no
    server gives (the ids are ASCII)."""
    session_id = headers.get("mcp-session-id")
    if session_id is None or (session_id == "" and not initialize):  # empty: it names none
        await _refuse(send, 400, _NO_SESSION_ID)
        return None
    if session_id == "":
        why = "Mcp-Session-Id is empty: to open a session, send initialize without it"
        await _refuse(send, 400, why)
        return None
    if not session_id.isascii():
        what = f"Mcp-Session-Id {_shown(session_id)} is not ASCII"
        if initialize:
            why = f"{what}, so no server gave it: to open a session, send initialize without it"
        else:
            why = f"{what}: send the id the server gave"
        await _refuse(send, 400, why)
        return None
    return session_id


_ONCE: Final = {
    "mcp-session-id": "Mcp-Session-Id",
    "mcp-protocol-version": "MCP-Protocol-Version",
    "authorization": "Authorization",
    "origin": "Origin",
    "content-type": "Content-Type",
    "content-encoding": "Content-Encoding",
}
"""The headers the server reads that a request sends once, as the refusals name them: one
sent again with another value is refused, as no value can be chosen over the other."""


def _read_headers(
    raw: Iterable[tuple[bytes, bytes]],
) -> tuple[dict[str, str], dict[str, list[str]]]:
    """A request's headers by lower-cased name, and the values of each of `_ONCE` that it
    sends with more than one value. Any other header sent more than once is one list, its
    values joined with commas (RFC 9110 §5.3)."""
    headers: dict[str, str] = {}
    repeated: dict[str, list[str]] = {}
    for raw_name, raw_value in raw:
        name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
        if name not in headers:
            headers[name] = value
        elif name not in _ONCE:
            headers[name] = f"{headers[name]}, {value}"
        elif value not in repeated.setdefault(name, [headers[name]]):
            repeated[name].append(value)
    return headers, {name: values for name, values in repeated.items() if len(values) > 1}


def _sent_twice(repeated: dict[str, list[str]]) -> str:
    """Why a request that sends a header of `_ONCE` with more than one value is refused
    (the first such header): its values, but a credential's."""
    name, values = next(iter(repeated.items()))
    what = f"the request sends {len(values)} different {_ONCE[name]} headers"
    if name == "authorization":
        return f"{what}: send one"
    *others, last = map(_shown, values)
    return f"{what}, {', '.join(others)} and {last}: send one"


_ESCAPED_BYTE: Final = re.compile(r"(?<!\\)((?:\\\\)*)\\udc([89a-f][0-9a-f])")


SHOWN_MAX: Final = 200
"""The characters of a header's value a refusal shows: a longer one is cut, and its length
said (a 20 KB session id was echoed whole)."""


def _shown(value: str) -> str:
    """A header's value quoted as its client sent it. ASGI gives a header's bytes read as
    Latin-1, which shows UTF-8 garbled (``'Ã©'`` for ``'é'``): they are read as UTF-8, and
    a byte that is not UTF-8 is shown ``\\xNN`` (`repr` would double its backslash)."""
    text = value.encode("latin-1").decode("utf-8", "surrogateescape")
    shown = _ESCAPED_BYTE.sub(r"\1\\x\2", repr(text[:SHOWN_MAX]))
    if len(text) <= SHOWN_MAX:
        return shown
    return f"{shown}… ({len(value)} bytes)"


async def _run(connection: _Connection, events: list[Event]) -> list[ReplyMessage]:
    """The answers to `events`, in their order. Their calls (a batch's) start in order and
    overlap, as calls sent in requests of their own do, so that they share log
    transactions: the session hosts queue a call before it first yields."""
    router, host, diagnostics = connection.router, connection.host, connection.diagnostics
    answers = [event.message if isinstance(event, Reply) else None for event in events]

    async def run(index: int, call: ToolCall, *, task_status: Any) -> None:
        task_status.started()
        answers[index] = await answer_call(router, call, host, diagnostics)

    async with trio.open_nursery() as nursery:
        for index, event in enumerate(events):
            if isinstance(event, ToolCall):
                await nursery.start(run, index, event)
    return [answer for answer in answers if answer is not None]


def _unsupported_version(headers: dict[str, str]) -> str | None:
    """Why a request's ``MCP-Protocol-Version`` header is refused (``400``), if it is: it
    names no version this server speaks. Not asked of an ``initialize``, whose body
    negotiates the version: a client may send its newest there (the Java SDK's does), and
    was refused where the negotiation would have agreed on one they both speak."""
    version = headers.get("mcp-protocol-version")
    if version is None or version in SUPPORTED_PROTOCOL_VERSIONS:
        return None
    return f"unsupported MCP-Protocol-Version {_shown(version)}"


def _is_initialize(message: object) -> bool:
    return isinstance(message, dict) and message.get("method") == "initialize"


def _refused_origin(origin: str) -> str:
    """Why a page of `origin` may not call: its developer, who sees only this, learns
    which origin was refused and what its server's operator can do."""
    shown = origin if len(origin) <= 100 else f"{origin[:100]}…"
    return (
        f"origin not allowed: {shown!r} is no local page (the server's operator may allow it"
        " with --allow-origin)"
    )


def _is_preflight(method: str, headers: dict[str, str]) -> bool:
    """The Fetch standard's CORS preflight: OPTIONS with Origin and
    Access-Control-Request-Method."""
    return (
        method == "OPTIONS" and "origin" in headers and "access-control-request-method" in headers
    )


def _cors_headers(origin: str | None) -> list[tuple[bytes, bytes]]:
    """What every answer carries: ``Vary: Origin`` (it depends on the Origin header), and
    for an allowed `origin`, the headers that let its page read the answer."""
    if origin is None:
        return [(b"vary", b"origin")]
    return [
        (b"vary", b"origin"),
        (b"access-control-allow-origin", origin.encode("latin-1")),
        (b"access-control-expose-headers", b"mcp-session-id, www-authenticate"),
    ]


def _adding_headers(send: Send, headers: list[tuple[bytes, bytes]]) -> Send:
    async def sending(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message["headers"], *headers]}
        await send(message)

    return sending


REMEMBERED_SESSIONS: Final = 10_000
"""How many ended sessions, and parked sessions' protocol versions, a server keeps in
memory: a server up for months must not grow with every session it ever had."""


def _remember(memory: collections.OrderedDict[str, str], session_id: str, value: str) -> None:
    """Keep `value` for `session_id` in `memory`, forgetting the oldest beyond the bound."""
    memory[session_id] = value
    memory.move_to_end(session_id)
    while len(memory) > REMEMBERED_SESSIONS:
        memory.popitem(last=False)


def _for_good(session_id: str, reason: str) -> str:
    """The refusal of a session ended for good, by its client or its operator: the same
    from the server it was deleted on as from any later one."""
    return f"session {session_id!r} was ended for good ({reason}): no server takes it up again"


def _unreadable(session_id: str, error: Exception) -> str:
    """Why a session the log holds cannot be resumed: its events or summary are damaged.
    The server goes on serving every other session."""
    return f"session {_shown(session_id)} cannot be resumed: its log cannot be read: {error}"


def _peer(scope: Scope) -> str | None:
    """The client's address as the ASGI server gives it (``host:port``), if it does."""
    client = scope.get("client")
    if not client:
        return None
    host, port = client
    return f"[{host}]:{port}" if ":" in str(host) else f"{host}:{port}"


def _unacceptable(headers: dict[str, str]) -> tuple[int, str] | None:
    """Why a POST is refused for how it is sent, with its status, if it is: a body that is
    not plain JSON (``415``), or a client that takes no JSON answer (``406``). A header left
    out (or blank) is taken as the MCP clients that leave it out mean it."""
    encoding = headers.get("content-encoding", "")
    if encoding.strip().lower() not in ("", "identity"):
        why = f"Content-Encoding {_shown(encoding)} is not supported: send the body as it is"
        return 415, why
    content_type = headers.get("content-type", "")
    if content_type.strip() and _media_range(content_type) != "application/json":
        return 415, f"Content-Type must be application/json, not {_shown(content_type)}"
    accept = headers.get("accept", "")
    if accept.strip() and not _accepts_json(accept):
        why = f"the answer is application/json, which Accept {_shown(accept)} does not take"
        return 406, why
    return None


def _media_range(item: str) -> str:
    """``type/subtype`` of a Content-Type or Accept item, lower-cased, its parameters cut."""
    return item.partition(";")[0].strip().lower()


def _accepts_json(accept: str) -> bool:
    """Whether an Accept header takes ``application/json``: by its most specific range
    that matches (RFC 9110 §12.5.1), with a weight above 0."""
    weights: dict[str, float] = {}
    for item in accept.split(","):
        weights.setdefault(_media_range(item), _weight(item))
    for media_range in ("application/json", "application/*", "*/*"):
        if media_range in weights:
            return weights[media_range] > 0
    return False


def _weight(item: str) -> float:
    """An Accept item's ``q``: 1 without one, or with one that is no number."""
    for parameter in item.split(";")[1:]:
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "q":
            try:
                return float(value)
            except ValueError:
                return 1.0
    return 1.0


def _status(message: object) -> int:
    """The status of an answer to `message`: a request's answer is a ``200``, its error
    too; a message with no id (a notification, or a response) is answered only when it is
    refused, with a ``400`` (MCP: an HTTP error status for what the server cannot accept)."""
    return 400 if isinstance(message, dict) and "id" not in message else 200


def _bearer_ok(header: str | None, token: str) -> bool:
    """RFC 7235: the scheme is case-insensitive; the token is compared in constant time."""
    if header is None:
        return False
    scheme, _, credentials = header.partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(credentials.lstrip(" ").encode(), token.encode())


class _ClientGoneError(Exception):
    """Raised when the client closed its connection before its request's body ended."""


async def _read_body(receive: Receive) -> bytes | None:
    """The whole body, or None if it is over `MAX_BODY`: read to its end all the same, and
    dropped, since a connection closed with data unread is reset, and the reset loses the
    answer for a client that writes its whole body before it reads."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _ClientGoneError
        chunk = message.get("body", b"")
        size += len(chunk)
        if size <= MAX_BODY:
            chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks) if size <= MAX_BODY else None


async def _refuse(
    send: Send, status: int, why: str, *, extra: Iterable[tuple[str, str]] = ()
) -> None:
    """Answer with an HTTP error whose body is a JSON-RPC error (null id) saying `why`: MCP
    clients, the official SDK's among them, show such a body's message to their user, and
    a stand-in ("Session terminated") for any other."""
    code = INVALID_REQUEST if status < 500 else SERVER_ERROR
    await _respond(send, status, error_reply(None, code, why), extra=extra)


async def _respond(
    send: Send, status: int, payload: object, *, extra: Iterable[tuple[str, str]] = ()
) -> None:
    headers = [(k.encode(), v.encode()) for k, v in extra]
    body = b""
    if payload is not None:
        body = encode_json(payload)
        headers.append((b"content-type", b"application/json"))
    headers.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
