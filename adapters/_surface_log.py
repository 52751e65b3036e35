"""Logged surface sessions: any adapter's session recorded in the semantics log (SPEC §7).

``LoggedSurface`` wraps an AgentSurface and delegates every call, appending a
``SessionStarted`` when the session opens, one ``SurfaceCalled`` per call (its arguments as
wire dicts, a summary of its result or its error, and the structural hash of every snapshot,
with its rendering: whole the first time, then the lines changed, ``snapshot_lines``), and a
``SessionEnded`` at close. A call answers only once its event is written, as a runtime
session's receipt does; inside ``typing_judged_later``, an ``act`` that types into an element
not taken for a password field answers first, and its event is written with the next one.

``capabilities()`` is synchronous and changes nothing, so it is not logged. Text typed into an
element whose last snapshot or ``describe`` marked it a password (``native["password"] ==
"true"`` or ``native["type"] == "password"``), or that no snapshot or ``describe`` has shown
(a ref ``locate`` found, say), a character key pressed into it, and what a ``read`` or a
``check`` of it observes or expects, is logged as ``[redacted]`` unless ``redact_passwords``
is false. So is what an ``act`` that reads it (``read``, ``evaluate``) answers, and the
``read("result")`` of that answer, until an act answers anew. So is text typed or a
character pressed without a ref (into the focused element) while the focus may be on a
password field: the calls so far put it there (an act on such an element), or do not say
where it went (a button, a Tab or another key that types nothing, a navigation) and the page
has one. A page can make a field a password field as it is focused or typed into
(``oninput="this.type='password'"``): a host that answers its agent only once the calls that
carried an action out are logged judges the typing again on the snapshot after it
(``typing_judged_later``).

A name already in the log is resumed only as what it was started as: a surface session of the
same adapter and app (the label, or the page's base URL), redacting passwords as it did.
Resuming starts a new segment of it, a second ``SessionStarted`` and a new ``open`` on a fresh
surface, which a re-run repeats on a fresh surface too; anything else is refused
(``SessionMismatchError``) before anything is written.

A call whose event cannot be written (the disk is full, say) raises ``SessionLogError``, and
so does every call after it, without calling the surface: the log no longer tells all that
was done, so nothing more is done. ``close`` still closes the surface.

A session whose adapter broke the contract (raised what is no SurfaceError, returned what it
may not) is ended by its host with ``crashed``, as a runtime session whose application
raised: a ``SessionCrashed`` with the traceback is its last event, ``close`` closes the
surface logging nothing more, and the session is never resumed.
"""

from __future__ import annotations

import contextlib
import difflib
import enum
import hashlib
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import attrs
import trio

from semledger.actors import (
    LogWriter,
    SessionCrashedError,
    SessionEndedError,
    SessionLogError,
    SessionMismatchError,
    crash_event,
)
from semledger.eventlog import (
    REDACTED,
    Event,
    EventLogError,
    NewEvent,
    Recorder,
    SessionEnded,
    SessionStarted,
    SurfaceCalled,
    check_counted,
    ended_for_good,
    password_policy_refusal,
    session_start,
    unstarted,
)
from semledger.runtime._text import a_or_an

from ._calls import CheckResult, ElementDescription
from ._capabilities import Capabilities
from ._errors import SessionError
from ._schemas import encode
from ._session import SessionState
from ._snapshot import Snapshot, SnapshotNode
from ._surface import (
    ActArgsLike,
    AgentSurface,
    CandidateLike,
    PredicateLike,
    SessionInitLike,
    SessionStateLike,
    SurfaceKind,
)

__all__ = ["LoggedSurface"]


def _is_password(native: Mapping[str, str]) -> bool:
    return native.get("password") == "true" or native.get("type") == "password"


class LoggedSurface:
    """An AgentSurface that logs every call of the one it wraps as a session of the log.

    ``log`` is a ``Recorder`` (written synchronously) or a running ``LogWriter`` (group
    committed). The session continues after the events already in the log under
    ``session_name``, so a name is never written twice. It owns the session from its first
    call to ``close`` (``Recorder.claim``): a second one for the same name, here or in
    another process, raises ``SessionClaimedError`` on its first call (or ``claim``). A name
    the log holds as another kind of session (an app's, another adapter's, another app's or
    page's) raises ``SessionMismatchError`` there, and nothing is written. Closed before any
    call, it logs nothing."""

    def __init__(
        self,
        surface: AgentSurface,
        log: Recorder | LogWriter,
        session_name: str,
        adapter_name: str,
        *,
        app: str | None = None,
        config: Mapping[str, Any] | None = None,
        redact_passwords: bool = True,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.surface = surface
        self.config = dict(config) if config is not None else {"adapter": adapter_name}
        """How the surface was made (`create_surface`), logged so the session can be re-run."""
        self.session_name = session_name
        self.adapter_name = adapter_name
        self.app = app
        self.redact_passwords = redact_passwords
        self._log = log
        self._clock = clock
        self._recorder = log.recorder if isinstance(log, LogWriter) else log
        self._owner = contextlib.ExitStack()
        self._seq = 0
        self._lock = trio.Lock()
        self._logged_app = app or adapter_name
        """The app the session is logged as: `app`, else the page's base URL when opened."""
        self._claimed = False
        self._started = False
        self.resumed = False
        """Whether the log held the session before this opened it (a new segment)."""
        self._ended = False
        self._crashed = False
        self._failure: str | None = None
        self._passwords: set[str] = set()
        self._fields: set[str] = set()
        """The other text fields: acting on one puts the focus in it, out of any password."""
        self._shown: set[str] = set()
        """Every element a snapshot or a description showed: any other may be a password."""
        self._secret_result = False
        """Whether the last act's answer (``read("result")``) is what a password field holds."""
        self._focus = _Focus.ELSEWHERE
        """Where keys sent without a ref go, as far as the calls so far tell."""
        self._lines: list[str] | None = None
        """The rendering of the last snapshot logged, which the next is logged against."""
        self._judging_later = False
        self._held: list[_Held] = []
        """The typing calls answered but not yet logged (`typing_judged_later`), in order."""

    @property
    def kind(self) -> SurfaceKind:
        return self.surface.kind

    def capabilities(self) -> Capabilities:
        return self.surface.capabilities()

    @property
    def failure(self) -> str | None:
        """Why the session's log could not be written, once it could not."""
        return self._failure

    @property
    def recorder(self) -> Recorder:
        """The log the session is written to (a `LogWriter`'s recorder), for reading it."""
        return self._recorder

    # ---- the log ------------------------------------------------------------------------

    async def append(self, *events: Event) -> None:
        """Append `events` to the session, in order with its calls' events, once it has
        started and until it ends (a ``SessionError`` otherwise); returns once they are
        written. For what a host in front of the surface logs of its own (the agent's
        requests and their outcomes)."""
        if not self._started:
            raise SessionError("the logged session has not started")
        if self._ended or self._crashed:
            raise SessionError("the logged session has ended")
        await self._append(*events)

    async def crashed(self, error: BaseException, *before: Event) -> None:
        """Append `before`, then `error` crashing the session (``SessionCrashed``, with its
        traceback): its adapter broke the contract. That is the session's last event: nothing
        more is appended, ``close`` closes the surface without logging it, and the session
        is never resumed (`claim`)."""
        await self.append(*before, crash_event(error))
        self._crashed = True

    @contextlib.contextmanager
    def typing_judged_later(self) -> Iterator[None]:
        """Within this block, an ``act`` that types text (or a character key) into an element
        not taken for a password field answers before its event is written: the event is
        written with the session's next one (the next call's, or one a host appends), and its
        text masked if the element is a password field by then, as the snapshot of that next
        call shows it. A page can make a field a password field as it is focused or typed
        into, after the snapshot that judged it plain: the snapshot after the typing is the
        first to tell. For a host that takes that snapshot at once and answers its agent only
        after it (the MCP bridge's ``LoggedSurfaceHost``); a typing call left for no such
        snapshot is judged on what is known when the next event is written."""
        self._judging_later = True
        try:
            yield
        finally:
            self._judging_later = False

    async def _append(self, *events: Event) -> None:
        async with self._lock:
            self._check_log()
            held, self._held = self._held, []
            events = (*(entry.judged() for entry in held), *events)
            batch = []
            for event in events:
                self._seq += 1
                batch.append(NewEvent(self.session_name, self._seq, event, self._clock()))
            try:
                if isinstance(self._log, LogWriter):
                    await self._log.append(batch)
                else:
                    self._log.append(batch)
            except Exception as error:
                self._failure = f"its log could not be written ({error!r})"
                self._check_log()

    def _check_log(self) -> None:
        if self._failure is not None:
            raise SessionLogError(f"session {self.session_name!r}: {self._failure}")

    def claim(self, init: object = None) -> None:
        """Own the session and check that the log's session of this name (if any) can be
        resumed as this one, writing nothing; the first call does it when this was not
        called. For a host that reads the session's log before it writes to it.

        Raises ``SessionClaimedError``, ``SessionEndedError``, ``SessionCrashedError``,
        ``SessionMismatchError``, ``CorruptSummaryError`` (its log was cut: its next call
        would take a seq the log had used) or another ``EventLogError`` of a damaged log
        (``InconsistentLogError``: an event is missing, or event 1 is not its start) and
        owns nothing then.
        """
        if self._claimed:
            return
        self._owner.enter_context(self._recorder.claim(self.session_name))
        app = self.app
        if app is None:
            base_url = getattr(init, "base_url", None)
            if base_url is None and isinstance(init, Mapping):
                base_url = init.get("base_url")
            app = str(base_url) if base_url else self.adapter_name
        try:
            check_counted(self._recorder, self.session_name)
            ended = ended_for_good(self._recorder, self.session_name)
            summary = self._recorder.summary(self.session_name)
            crashed = summary is not None and summary.crashed
            logged = self._recorder.head(self.session_name) is not None
            refusal = self._refusal(app) if logged else None
        except EventLogError:  # a damaged log: its start or an event missing, or unreadable
            self._owner.close()
            raise
        if ended is not None or crashed or refusal is not None:
            self._owner.close()
            if ended is not None:
                raise SessionEndedError(ended)
            if crashed:
                raise SessionCrashedError(
                    f"session {self.session_name!r} crashed (its audit says how) and is not"
                    " served again: serve a session of another name"
                )
            raise SessionMismatchError(refusal)
        self._logged_app = app
        self._claimed = True

    async def _start(self, init: object) -> None:
        if self._started:
            return
        self.claim(init)
        head = self._recorder.head(self.session_name)
        self._started = True
        self.resumed = head is not None
        self._seq = 0 if head is None else head.seq
        await self._append(
            SessionStarted(
                app=self._logged_app,
                surface=self.adapter_name,
                params={
                    "adapter": self.adapter_name,
                    "config": encode(self.config),
                    "session_init": encode(init),
                },
                redact_passwords=self.redact_passwords,
            )
        )

    def _refusal(self, app: str) -> str | None:
        """Why the session the log holds under this name cannot be resumed as this one, if
        it cannot: it was started as another kind of session or under the other password
        policy. One that does not begin with a start is damage (``InconsistentLogError``).

        A session of this adapter is resumed on the application its first start names, and
        on another (``--launch``, ``--url``) when it never opened one or the last it opened
        is that one: a session that could not open may be served again with its command put
        right."""
        name = self.session_name
        started = session_start(self._recorder, name)
        if started is None:
            raise unstarted(self._recorder, name)
        this = f"{a_or_an(self.adapter_name)} surface session of {app}"
        if not started.drives_a_surface:
            was = f"started as an app session of {started.app}"
        elif started.params["adapter"] != self.adapter_name:
            adapter = a_or_an(started.params["adapter"])
            was = f"started as {adapter} surface session of {started.app}"
        elif started.app != app and (opened := self._last_opened()) not in (None, app):
            how = "started" if opened == started.app else "last opened"
            was = f"{how} as {a_or_an(self.adapter_name)} surface session of {opened}"
        else:
            return password_policy_refusal(name, started, self.redact_passwords)
        return f"session {name!r} was {was}; it cannot be resumed as {this}"

    def _last_opened(self) -> str | None:
        """The application of the session's last start whose surface opened, if any (a scan
        of the log, made only when the first start names another)."""
        start: str | None = None
        opened: str | None = None
        for _record, event in self._recorder.events(self.session_name):
            if isinstance(event, SessionStarted):
                start = event.app
            elif isinstance(event, SurfaceCalled) and event.method == "open":
                opened = start if event.error_class is None else opened
        return opened

    async def _call(
        self,
        method: str,
        arguments: dict[str, Any],
        run: Callable[[], Any],
        summarise: Callable[[Any], dict[str, Any] | None],
        *,
        held: _Unjudged | None = None,
    ) -> Any:
        """Run the call and log it, unless it is `held` (`typing_judged_later`). `summarise`
        runs before anything is logged: what it learns of a snapshot judges held typing."""
        if not self._started:
            await self._start(None)
        self._check_log()
        try:
            result = await run()
        except BaseException as error:
            if isinstance(error, trio.Cancelled):
                raise
            failed = SurfaceCalled(method, arguments, None, type(error).__name__, str(error), None)
            with trio.CancelScope(shield=True):
                await self._log_call(failed, held)
            raise
        summary = summarise(result)
        snapshot_hash = result.hash if isinstance(result, Snapshot) else None
        with trio.CancelScope(shield=True):
            await self._log_call(
                SurfaceCalled(method, arguments, summary, None, None, snapshot_hash), held
            )
        return result

    async def _log_call(self, event: SurfaceCalled, held: _Unjudged | None) -> None:
        if held is None:
            await self._append(event)
        else:
            self._held.append(_Held(event, held))

    # ---- the surface --------------------------------------------------------------------

    async def open(self, session: SessionInitLike) -> None:
        await self._start(session)
        await self._call(
            "open", {"session": encode(session)}, lambda: self.surface.open(session), _none
        )

    async def close(self, *, reason: str = "closed") -> None:
        """Close the surface and end the logged session with `reason` (why the server
        stopped: "end of input", a signal), or with why closing failed. Raises what closing
        the surface raised, never ``SessionLogError``."""
        if self._ended:
            return
        self._ended = True
        if not self._started or self._failure is not None or self._crashed:  # nothing to log
            try:
                await self.surface.close()
            finally:
                self._owner.close()
            return
        try:
            await self._call("close", {}, self.surface.close, _none)
        except SessionLogError:
            pass  # the surface is closed; `failure` says why no more is logged
        except Exception as error:
            reason = f"close failed: {type(error).__name__}: {error}"
            raise
        finally:
            try:
                with trio.CancelScope(shield=True), contextlib.suppress(SessionLogError):
                    await self._append(SessionEnded(reason))
            finally:
                self._owner.close()

    async def snapshot(
        self,
        *,
        root: str | None = None,
        max_nodes: int | None = None,
        interactive_only: bool = False,
    ) -> Snapshot:
        arguments = {"root": root, "max_nodes": max_nodes, "interactive_only": interactive_only}
        # Only a whole tree says which fields are no longer passwords.
        whole = root is None and max_nodes is None and not interactive_only

        def summarise(taken: Snapshot) -> dict[str, Any]:
            self._note_fields(taken.nodes, whole=whole)  # before held typing is judged on it
            self._note_focus(taken, whole=whole)
            return self._snapshot_summary(taken)

        snapshot: Snapshot = await self._call(
            "snapshot",
            arguments,
            lambda: self.surface.snapshot(
                root=root, max_nodes=max_nodes, interactive_only=interactive_only
            ),
            summarise,
        )
        return snapshot

    def _note_fields(
        self, elements: Sequence[SnapshotNode | ElementDescription], *, whole: bool
    ) -> None:
        """Note the password fields and the other text fields `elements` show."""
        seen = {n.ref for n in elements if _is_password(n.native)}
        fields = {n.ref for n in elements if n.role in _TEXT_ROLES} - seen
        shown = {n.ref for n in elements}
        # A part (a root, a node limit, the interactive nodes only, a description) adds what
        # it shows, so a field it left out stays redacted.
        if whole:
            self._passwords, self._fields, self._shown = seen, fields, shown
        else:
            self._passwords |= seen
            self._fields = (self._fields | fields) - self._passwords
            self._shown |= shown

    def _note_focus(self, snapshot: Snapshot, *, whole: bool) -> None:
        focused = next((n for n in snapshot.nodes if "focused" in n.states), None)
        if focused is not None:
            self._focus = _Focus.PASSWORD if focused.ref in self._passwords else _Focus.ELSEWHERE
        elif whole:
            self._focus = _Focus.ELSEWHERE  # nothing has the focus

    def _snapshot_summary(self, snapshot: Snapshot) -> dict[str, Any]:
        """The summary, and the rendering: whole for the segment's first snapshot, then as
        the lines changed since the one before (a re-run's divergence shows the difference;
        the log grows with the change, not the tree)."""
        summary = _snapshot_summary(snapshot)
        lines = snapshot.text.split("\n")
        if self._lines is None:
            summary["lines"] = lines
        else:
            summary["lines_changed"] = _line_changes(self._lines, lines)
        self._lines = lines
        return summary

    async def act(
        self,
        action: str,
        ref: str | None = None,
        args: ActArgsLike | None = None,
        ref2: str | None = None,
    ) -> Any:
        logged_args = encode(args)
        into_password = self._hides(ref) if ref is not None else self._keys_may_reach_a_password()
        self._follow_focus(action, ref, logged_args)
        arguments: dict[str, Any] = {"action": action, "ref": ref, "args": logged_args}
        if ref2 is not None:
            arguments["ref2"] = ref2
        answers_a_password = action in _ANSWERS and self._hides(ref)
        if answers_a_password:
            arguments["redacted"] = True
            self._secret_result = True  # failing, it may still have answered
        masked = _masked_typing(arguments)
        held = None
        if masked is not None and into_password:
            arguments = masked
        elif masked is not None and self.redact_passwords and self._judging_later:
            hides = self._keys_may_reach_a_password if ref is None else lambda: self._hides(ref)
            held = _Unjudged(masked, hides)
        return await self._call(
            "act",
            arguments,
            lambda: self.surface.act(action, ref, args, ref2),
            self._answered(answers_a_password) if action in _ANSWERS else _encoded,
            held=held,
        )

    def _answered(self, secret: bool) -> Callable[[Any], dict[str, Any] | None]:
        """How an act that answers with what it reads logs its answer: masked if `secret` (a
        web page answers a read of an input with its value, as ``read("value")`` does), and
        so is ``read("result")``, which answers it again until an act answers anew."""

        def summarise(result: Any) -> dict[str, Any] | None:
            self._secret_result = secret
            return _redacted_answer(result) if secret else _encoded(result)

        return summarise

    def _keys_may_reach_a_password(self) -> bool:
        """Whether keys sent without a ref (to the focused element) may type into a
        password field: the focus may be on one, or is not known and the page has one."""
        if not self.redact_passwords:
            return False
        return self._focus == _Focus.PASSWORD or (
            self._focus == _Focus.UNKNOWN and bool(self._passwords)
        )

    def _follow_focus(self, action: str, ref: str | None, args: object) -> None:
        """Track the focus through an act: in the element a focusing action targets, kept by
        actions that leave it and by typing, unknown after anything else (a button, a Tab or
        another key that types nothing, a navigation)."""
        if action in _KEEPS_FOCUS:
            return
        key = args.get("key") if isinstance(args, dict) else None
        moves_on = action in _KEY_ACTIONS and not _types_a_character(key)  # a Tab, an Enter
        if ref is not None:
            if ref in self._passwords or ref not in self._shown:
                self._focus = _Focus.PASSWORD  # (or on from it, wherever a key sent it)
            elif action in _TAKES_FOCUS and ref in self._fields and not moves_on:
                self._focus = _Focus.ELSEWHERE
            else:  # (a button's handler may move the focus anywhere)
                self._focus = _Focus.UNKNOWN
        elif action != "type" and (action not in _KEY_ACTIONS or moves_on):
            self._focus = _Focus.UNKNOWN  # (typing keeps the focus where it is)

    def _hides(self, ref: str | None) -> bool:
        """Whether what is typed into, read or checked of `ref` stays out of the log: it is a
        password field (a web page answers a read of one with what was typed), or one no
        snapshot or description has shown (a ref `locate` found), which may be one."""
        if not self.redact_passwords or ref is None:
            return False
        return ref in self._passwords or ref not in self._shown

    async def read(self, kind: Any, ref: str | None = None, name: str | None = None) -> object:
        arguments: dict[str, Any] = {"kind": kind, "ref": ref, "name": name}
        summarise: Callable[[object], dict[str, Any]] = _read_value
        secret_result = kind == "result" and self.redact_passwords and self._secret_result
        if self._hides(ref) or secret_result:
            arguments["redacted"] = True
            summarise = _redacted_value
        return await self._call(
            "read", arguments, lambda: self.surface.read(kind, ref, name), summarise
        )

    async def check(
        self, predicate: PredicateLike, subject: Any, ref: str | None = None
    ) -> CheckResult:
        logged = encode(predicate)
        arguments: dict[str, Any] = {"predicate": logged, "subject": subject, "ref": ref}
        summarise: Callable[[Any], dict[str, Any] | None] = _encoded
        if subject == "ref" and self._hides(ref):
            if isinstance(logged, dict):
                arguments["predicate"] = {
                    key: REDACTED if key in _PREDICATE_TEXTS else value
                    for key, value in logged.items()
                }
            arguments["redacted"] = True
            summarise = _redacted_check
        result: CheckResult = await self._call(
            "check", arguments, lambda: self.surface.check(predicate, subject, ref), summarise
        )
        return result

    async def locate(self, candidate: CandidateLike) -> list[str]:
        refs: list[str] = await self._call(
            "locate",
            {"candidate": encode(candidate)},
            lambda: self.surface.locate(candidate),
            lambda found: {"refs": list(found)},
        )
        return refs

    async def describe(self, ref: str) -> ElementDescription:
        def summarise(described: ElementDescription) -> dict[str, Any] | None:
            self._note_fields([described], whole=False)
            return _encoded(described)

        description: ElementDescription = await self._call(
            "describe", {"ref": ref}, lambda: self.surface.describe(ref), summarise
        )
        return description

    async def screenshot(self, path: str, mask: Sequence[str] | None = None) -> None:
        await self._call(
            "screenshot",
            {"path": path, "mask": None if mask is None else list(mask)},
            lambda: self.surface.screenshot(path, mask),
            lambda _none: {"path": path},
        )

    async def state(self) -> SessionState:
        state: SessionState = await self._call("state", {}, self.surface.state, _encoded)
        return state

    async def restore(self, state: SessionStateLike) -> None:
        if self._ended:
            raise SessionError("the logged session has ended")
        self._focus = _Focus.UNKNOWN  # the restored page decides where it is
        await self._call(
            "restore", {"state": encode(state)}, lambda: self.surface.restore(state), _none
        )


@attrs.frozen
class _Unjudged:
    """How a typing call held by `typing_judged_later` is logged if its element turns out to
    be a password field (`hides`, asked as it is written)."""

    masked: dict[str, Any]
    hides: Callable[[], bool]


@attrs.frozen
class _Held:
    event: SurfaceCalled
    unjudged: _Unjudged

    def judged(self) -> SurfaceCalled:
        if self.unjudged.hides():
            return attrs.evolve(self.event, arguments=self.unjudged.masked)
        return self.event


def _masked_typing(arguments: dict[str, Any]) -> dict[str, Any] | None:
    """An act's `arguments` with what it types masked (text as one bullet a character, a
    character key as ``REDACTED``) and ``redacted: true``; None when it types nothing."""
    args = arguments["args"]
    if not isinstance(args, dict):
        return None
    typed = {
        name: _masked(args[name]) if name == "text" else REDACTED
        for name in ("text", "key")
        if args.get(name) is not None and (name == "text" or _types_a_character(args[name]))
    }
    if not typed:
        return None
    return {**arguments, "args": {**args, **typed}, "redacted": True}


class _Focus(enum.Enum):
    PASSWORD = "a password field"
    """Maybe in a password field: one, or an element not shown, an act put it in."""
    ELSEWHERE = "elsewhere"
    UNKNOWN = "unknown"
    """Anywhere: in a password field if the page has one."""


_TAKES_FOCUS = frozenset({
    "click", "doubleClick", "rightClick", "hoverAndClick", "pressAndHold", "type", "clear",
    "press", "keyDown", "keyUp", "selectOption", "deselectOption", "deselectAll", "setChecked",
    "focus",
})  # fmt: skip
"""Actions that move the focus to the element they target."""
_TEXT_ROLES = frozenset({"textbox", "searchbox", "combobox", "spinbutton"})
_KEEPS_FOCUS = frozenset({
    "hover", "scrollIntoView", "scrollToTop", "scrollToBottom", "sleep", "waitFor", "read",
    "screenshot", "resizeWindow",
})  # fmt: skip
_KEY_ACTIONS = frozenset({"press", "keyDown", "keyUp"})
_ANSWERS = frozenset({"read", "evaluate"})
"""Actions that answer with what they read of their element (a web input's value), which
``read("result")`` then reads again."""

_PREDICATE_TEXTS = frozenset({"text", "value"})
"""The predicate fields that hold what the agent expects the element to say."""


def _read_value(value: object) -> dict[str, Any]:
    return {"value": encode(value) if _plain(value) else repr(value)}


def _masked(text: Any) -> Any:
    """Typed text as the log holds it when it may be a password: one bullet a character, as
    the page shows a password field, so that a re-run types text of the same length and the
    field shows what it showed live. (A key press is logged as ``REDACTED``.)"""
    return "\u2022" * len(text) if isinstance(text, str) else REDACTED


def _types_a_character(key: object) -> bool:
    """Whether a key press (``"a"``, ``"Shift+A"``, not ``"Enter"``) would type into a field."""
    if not isinstance(key, str) or not key:
        return False
    name = key[-1] if key.endswith("+") else key.rsplit("+", 1)[-1]
    return len(name) == 1


def _redacted_value(_value: object) -> dict[str, Any]:
    return {"value": REDACTED}


def _redacted_answer(result: object) -> dict[str, Any] | None:
    summary = _encoded(result)
    if summary is not None and summary.get("result") is not None:
        summary["result"] = REDACTED
    return summary


def _redacted_check(result: CheckResult) -> dict[str, Any]:
    return {"ok": result.ok, "actual": REDACTED, "message": None}


def _plain(value: object) -> bool:
    return value is None or isinstance(value, str | int | float | bool | list | dict)


def _none(_result: object) -> None:
    return None


def _encoded(result: object) -> dict[str, Any] | None:
    if result is None:
        return None
    out = encode(result)
    return out if isinstance(out, dict) else {"value": out}


def _snapshot_summary(snapshot: Snapshot) -> dict[str, Any]:
    return {
        "ref": snapshot.ref,
        "nodes": len(snapshot.nodes),
        "tokens_estimate": snapshot.tokens_estimate,
        "hash": snapshot.hash,
        "text_sha256": text_digest(snapshot),
    }


def _line_changes(old: Sequence[str], new: Sequence[str]) -> list[list[Any]]:
    """`new` as edits of `old`: ``[start, end, lines]``, each replacing ``old[start:end]``,
    in order and apart. The lines both share at either end are set aside first: a change
    is usually a few lines in one place, and matching the rest costs the whole tree."""
    shortest = min(len(old), len(new))
    head = 0
    while head < shortest and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < shortest - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    middle_old, middle_new = old[head : len(old) - tail], new[head : len(new) - tail]
    matcher = difflib.SequenceMatcher(None, middle_old, middle_new)
    return [
        [head + i1, head + i2, list(middle_new[j1:j2])]
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


def snapshot_lines(
    result: Mapping[str, Any] | None, before: Sequence[str] | None
) -> list[str] | None:
    """The rendering, line by line, of the snapshot whose logged summary is `result`, given
    the lines of the snapshot logged before it in the same segment (`before`); None when the
    log does not hold it (a log older than this record, or a segment's earlier snapshot
    unknown)."""
    if result is None:
        return None
    if "lines" in result:
        return list(result["lines"])
    changes = result.get("lines_changed")
    if changes is None or before is None:
        return None
    lines = list(before)
    for start, end, replaced in reversed(changes):
        lines[start:end] = replaced
    return lines


def text_digest(snapshot: Snapshot) -> str:
    """A digest of the rendering: names, values and states, which the structural hash omits."""
    return hashlib.sha256(snapshot.text.encode()).hexdigest()
