"""The session actor: owns one session's runtime, logs every input and output, and answers
only once what it answers with is durable.

It does not wait for the log between inputs: each step's events go to the log writer at
once and the actor takes the next message, while the reply waits for the events. So an
agent that sends requests without waiting for each answer has them group-committed, and
no answer (a receipt, a read) ever shows a state the log could still lose.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import logging
import math
import re
import time
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Set
from typing import Any, Final, NamedTuple

import attrs
import msgpack  # type: ignore[import-untyped, unused-ignore]
import outcome
import trio

from semledger.eventlog import (
    INPUT_CLASSES,
    ActionRequested,
    AgentConnected,
    CallRefused,
    Committed,
    DiagnosticsDispatched,
    EffectCompleted,
    EffectFailed,
    EffectStarted,
    EndedBy,
    Event,
    LogOrder,
    NewEvent,
    Recorder,
    SemanticsTaken,
    SequenceConflict,
    SessionCrashed,
    SessionEnded,
    SessionResumed,
    SessionStarted,
    SnapshotTaken,
    StoredEvent,
    TimerFired,
    check_counted,
    decode,
    ended_for_good,
    password_policy_refusal,
    session_start,
    topic_of,
    unstarted,
)
from semledger.runtime import (
    JOURNAL_SIZE,
    App,
    ApplicationError,
    CheckpointMismatchError,
    ErrorCode,
    Every,
    Precondition,
    ReadResult,
    Receipt,
    Rejection,
    SemanticsAction,
    Target,
)
from semledger.runtime._actions import check_request, check_since
from semledger.runtime._app import check_app
from semledger.runtime._errors import app_failed
from semledger.runtime._ids import has_lone_surrogate
from semledger.runtime._wire import (
    WireError,
    decode_perform_action,
    encode_action,
    encode_precondition,
    encode_read,
    encode_target,
)

from ._actor import (
    Actor,
    ActorClosedError,
    ActorError,
    ReportingStatus,
    _Envelope,
    single_error,
)
from ._apps import app_location, check_app_ref
from ._commands import session_command
from ._core import (
    SessionCore,
    app_raised,
    commit_size,
    crash_event,
    effect_failure,
    traceback_text,
)
from ._journal import logged_journal
from ._messages import MessageCodecError
from ._requests import logged_action, refusal
from ._str_hash import PARAM as STR_HASH
from ._str_hash import str_hashing
from ._writer import LogWriter, Pending, check_recorder, check_same_log, check_writer

_log = logging.getLogger("semledger.actors")
"""Where a session says what its log holds but no answer shows (a failed effect)."""


class SessionMismatchError(ActorError):
    """Raised when starting a session whose log was recorded with another application, or
    under the other password policy (``redact_passwords``)."""


class SessionEndedError(ActorError):
    """Raised when starting a session its operator ended for good (``semledger end``)."""


class SessionConflictError(ActorError):
    """Raised when another writer appended to this session: the session ends unanswered."""


class SessionLogError(ActorError):
    """Raised when the session's events could not be written (the disk is full, say): the
    session ends unanswered, since its runtime is ahead of its log."""


class SessionCrashedError(ActorError):
    """Raised to a caller whose request made the application raise; the session is over."""


class SessionDivergedError(ActorError):
    """Raised when resuming a session whose logged inputs, re-executed, do not make the
    commits its log holds (a generation with another snapshot hash, one fewer or one more),
    or make the application raise where the live session did not.

    The application changed since the session was recorded, or depends on something the
    log does not hold (a clock, randomness, a password the log redacted): resumed, the
    session would serve other content under generations its agent already saw.
    """


@attrs.frozen
class Read:
    since: int | None


@attrs.frozen
class Perform:
    target: Target
    action: SemanticsAction
    precondition: Precondition


@attrs.frozen
class Refuse:
    """A ``perform_action`` refused for its `arguments`: logged, answered `rejection`."""

    arguments: dict[str, Any]
    rejection: Rejection


@attrs.frozen
class Connect:
    """An agent's client said who it is (its ``initialize``), or came back with the
    session id alone: logged, for the audit."""

    connection: AgentConnected


@attrs.frozen
class Diagnose:
    event: dict[str, Any]
    """A pointer event or a command, in the diagnostics tools' wire form."""


@attrs.frozen
class Inspect:
    what: str
    """``"state"`` (runtime counters) or ``"paint"`` (a paint summary)."""


@attrs.frozen
class Close:
    reason: str = "closed"
    by: EndedBy = "server"
    """Who ends it (`SessionEnded.by`): any but the server, for good."""

    def __attrs_post_init__(self) -> None:
        SessionEnded(self.reason, self.by)  # refused here, not in the session as it ends
        if has_lone_surrogate(self.reason):
            raise ValueError(
                f"reason: expected text the log can hold, got {self.reason!r:.80}"
                " (it holds a lone surrogate)"
            )


@attrs.frozen
class _EffectDone:
    effect_id: int
    message: Any
    error: str | None
    traceback: str | None = None


_RECOVERIES: trio.lowlevel.RunVar[trio.CapacityLimiter] = trio.lowlevel.RunVar("recoveries")


def _recoveries() -> trio.CapacityLimiter:
    """One recovery at a time in a process. Re-executing a log is Python holding the GIL:
    sessions that come back together (an HTTP server restarted under its clients) would
    share the interpreter and all finish last; taking turns, the first is answered first,
    and the last no later."""
    try:
        return _RECOVERIES.get()
    except LookupError:
        limiter = trio.CapacityLimiter(1)
        _RECOVERIES.set(limiter)
        return limiter


_EXTRA = "re-execution commits it, the log does not"
_REDACTED_EFFECT = (
    "not started again when the session was recovered: it was made after a password the"
    " log redacted, so it would run with the log's bullets instead of the password"
)


def _unforeseen(error: BaseException) -> bool:
    """Whether a handler's `error` is a fault, not one of the session's own answers."""
    return isinstance(error, Exception) and not isinstance(error, ActorError)


def _crashed(result: outcome.Outcome[Any]) -> bool:
    """Whether `result` is the session's crash (`SessionCrashedError`)."""
    return isinstance(result, outcome.Error) and isinstance(result.error, SessionCrashedError)


def _differs(logged: Committed, mine: Committed | None) -> str:
    """How a commit re-execution made (`mine`, None: none) differs from the logged one."""
    if mine is None:
        return "the log commits it, re-execution does not"
    if mine.generation != logged.generation:
        return f"the log commits it, re-execution commits generation {mine.generation}"
    return (
        f"the log commits it with hash {logged.snapshot_hash[:12]}, "
        f"re-execution with {mine.snapshot_hash[:12]}"
    )


def _in_order(
    session: str, events: Iterable[tuple[StoredEvent, Event]], start: int
) -> Iterator[tuple[StoredEvent, Event]]:
    """`events`, the session's from seq `start`; raises ``InconsistentLogError`` at one out
    of order (`LogOrder`: a seq missing, or an event past an end that nothing logs), as
    replay does. Re-executed, it would pass for the app's divergence, or the session be
    resumed over it. One check an event."""
    order = LogOrder(session, start)
    for record, event in events:
        order.check(record, event)
        yield record, event


@attrs.frozen
class _TimerTick:
    timer: Every[Any]
    run: trio.CancelScope
    """The scope of the timer run that sent it: a tick of a dropped run is discarded, even
    when an equal timer was subscribed again since."""


SessionMessage = (
    Read | Perform | Refuse | Connect | Diagnose | Inspect | Close | _EffectDone | _TimerTick
)


class _Held(NamedTuple):
    """A reply that waits for `last`, the session's newest batch when it was handled."""

    envelope: _Envelope[SessionMessage]
    result: outcome.Outcome[Any]
    last: Pending


def _next_held(held: trio.MemoryReceiveChannel[_Held]) -> _Held | None:
    try:
        return held.receive_nowait()
    except (trio.WouldBlock, trio.EndOfChannel):
        return None


def _close_reply(item: _Held) -> None:
    """The answer, if any, is in it; the caller's next receive ends."""
    if item.envelope.reply is not None:
        item.envelope.reply.close()


def _checked_on_the_wire(
    target: Target, action: SemanticsAction, precondition: Precondition
) -> Perform | Refuse:
    """A request built in Python, as the session takes it: a `Refuse` (``invalid_arguments``,
    logged as a refused call) for one the wire refuses (a path step with no filter, a
    negative index), so that the log holds no input re-execution could not decode.

    The hosts' requests were decoded from the wire already: only this entry checks."""
    arguments = {
        "target": encode_target(target),
        "action": encode_action(action),
        "precondition": encode_precondition(precondition),
    }
    try:
        decode_perform_action(arguments)
    except WireError as error:
        return Refuse(arguments, Rejection(ErrorCode.INVALID_ARGUMENTS, str(error), {}))
    return Perform(target, action, precondition)


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
"""Unicode's control characters (category Cc)."""


def check_session_name(name: object, argument: str = "", *, new: bool = False) -> None:
    """Raise ``TypeError`` or ``ValueError`` unless `name` can name a session: a str that
    is not blank, has no space at either end and no control character (tables show a name
    as it is, so it would pass for none, or for another; one with a newline is shown
    escaped, and the name shown is then not the name to give). The message begins with
    ``argument: `` when one is given.

    A `new` session's name also has no other character a table shows escaped: a format
    character (U+202E, which turns the text after it around; U+200B, which is not seen), a
    line or paragraph separator. Without `new` they are taken: an old log may hold such a
    name, and its session must still be resumed, read and ended by it."""
    said = f"{argument}: " if argument else ""
    if not isinstance(name, str):
        raise TypeError(
            f"{said}expected a session name (a str), got {type(name).__name__} {name!r:.80}"
        )
    if not name:
        raise ValueError(f"{said}expected a session name, got ''")
    if name != name.strip():
        raise ValueError(
            f"{said}expected a session name with no space at either end, got {name!r}"
        )
    if _CONTROL.search(name):
        raise ValueError(
            f"{said}expected a session name with no control character, got {name!r:.80}"
        )
    unshown = next((c for c in name if not c.isprintable() and c != " "), None) if new else None
    if unshown is not None:
        what = f"U+{ord(unshown):04X} {unicodedata.name(unshown, '')}".rstrip()
        raise ValueError(
            f"{said}expected a session name with no character shown escaped, got {name!r:.80}"
            f" ({what} is shown escaped: the name shown is not one to type back)"
        )


def _shown(value: object) -> str:
    return f"{type(value).__name__} {value!r:.80}"


_RESERVED_PARAMS: Final = {
    "adapter": "reserved for the adapter of a surface session, which the log would take it"
    " for, refusing to resume it",
    STR_HASH: "reserved for how the session's process hashes str, which it records itself",
}
"""Start params a session's own code gives meaning to, and why a caller's would be lost."""


def _check_params(params: object) -> None:
    """Checked as the actor is made: the params are logged as it starts, and a value the
    log cannot hold was reported as a log that could not be written."""
    if params is None:
        return
    if not isinstance(params, dict):
        raise TypeError(f"params: expected a dict or None, got {_shown(params)}")
    for key, value in params.items():
        if not isinstance(key, str):
            raise TypeError(f"params: expected str keys, got {_shown(key)}")
        if key in _RESERVED_PARAMS:
            raise ValueError(f"params[{key!r}]: {_RESERVED_PARAMS[key]}; give it another name")
        try:
            msgpack.packb(value)
        except (TypeError, ValueError, OverflowError) as error:
            kind = TypeError if isinstance(error, TypeError) else ValueError
            raise kind(
                f"params[{key!r}]: expected a value the log can hold (None, bool, int, float,"
                f" str, bytes, or a list or dict of them), got {_shown(value)}: {error}"
            ) from None


def _check_checkpoint_every(every: object) -> None:
    """Checked as the actor is made: found at the first input, it crashed the session."""
    if every is None:
        return
    if isinstance(every, bool) or not isinstance(every, int):
        kind = type(every).__name__
        raise TypeError(f"checkpoint_every: expected an int or None, got {kind} {every!r:.80}")
    if every < 1:
        raise ValueError(f"checkpoint_every: expected at least 1 (None: never), got {every}")


class SessionActor(Actor[SessionMessage]):
    """One agent session. Starting it creates the session in the log, or recovers it from there.

    Recovery re-executes the logged inputs through the application, so the runtime comes
    back with the same generations and node ids; effects that were started and never
    finished are started again.
    """

    def __init__(
        self,
        name: str,
        app: App[Any, Any],
        app_ref: str,
        writer: LogWriter,
        recorder: Recorder,
        *,
        redact_passwords: bool = True,
        params: dict[str, Any] | None = None,
        clock: Callable[[], float] = time.time,
        checkpoint_every: int | None = 1000,
    ) -> None:
        super().__init__()
        check_session_name(name, "name")
        check_app(app)
        check_app_ref(app_ref)
        check_writer(writer)
        check_recorder(recorder)
        check_same_log(writer, recorder)
        if not isinstance(redact_passwords, bool):
            raise TypeError(f"redact_passwords: expected a bool, got {_shown(redact_passwords)}")
        _check_params(params)
        if not callable(clock):
            raise TypeError(f"clock: expected a function like time.time, got {_shown(clock)}")
        _check_checkpoint_every(checkpoint_every)
        self.name = name
        self.app = app
        self.app_ref = app_ref
        self.writer = writer
        self.recorder = recorder
        self.redact_passwords = redact_passwords
        self.params = params or {}
        self.clock = clock
        self.checkpoint_every = checkpoint_every
        """Inputs between checkpoints (None: none; recovery re-executes from the start and
        log-served reads fold from generation 0)."""
        self._inputs = 0
        self._redacted_effects: set[int] = set()
        """Effects recovery made again after re-executing a redacted input."""
        self._recovery_checkpoints = True
        """False once the model cannot be encoded, or may hold a password the log redacted."""
        self._changed: float = math.inf
        """What a fold applies since the last read checkpoint (`commit_size`; the first of a
        run is always due)."""
        self.recovered = False
        self.ended = False
        self.failure: str | None = None
        """Why the session ended other than by a ``Close``: its application raised, or its
        log could not be written."""
        self.failed_at = ""
        """Where in the app's own code its failure was raised (`app_location`:
        `` (at FILE, line N)``), for its operator's line, not its agent's: "" if nowhere."""
        self._crashed = False
        """Whether it ended on the record as crashed (``SessionCrashed``)."""
        self._seq = 0
        self._last: Pending | None = None
        """The newest batch handed to the writer: every reply waits for it."""
        self._core: SessionCore | None = None
        self._nursery: trio.Nursery | None = None
        self._held, self._to_reply = trio.open_memory_channel[_Held](math.inf)
        """Replies waiting for the log, in the order they were handled."""
        self._timers: dict[Every[Any], tuple[int, trio.CancelScope]] = {}
        """The running timers, each with its id and the scope that stops it."""
        self._next_timer = 1

    @property
    def core(self) -> SessionCore:
        assert self._core is not None, "the session has not started"
        return self._core

    async def run(self, *, task_status: trio.TaskStatus[Any] = trio.TASK_STATUS_IGNORED) -> None:
        """Serve the session, its sole owner from start to end: a second actor for it, in
        this process or another, is refused with ``SessionClaimedError`` as it starts."""
        # Replies still waiting for the log are sent before the actor ends; effects are not.
        # A failure to start (a log it may not resume, a closed recorder) is raised as
        # itself, not inside the groups of the nurseries it happened in.
        started = False

        def on_started(value: Any = None) -> None:
            nonlocal started
            started = True
            task_status.started(value)

        with self.recorder.claim(self.name):
            try:
                await self._serve(ReportingStatus(on_started))
            except BaseExceptionGroup as group:
                if started:
                    raise
                raise single_error(group) from None
            finally:
                await self._written_out()

    async def _written_out(self) -> None:
        """Wait until the writer is done with the session's last batch, unless it waits out
        a lock on the log: a cancelled session released its claim while its batch was being
        committed, and the claim, seeing no event logged yet, removed its file (the session,
        logged with no end, then read as served from a log that cannot tell, a copy's)."""
        last = self._last
        stalled = getattr(self.writer, "stalled", None)  # (none for a stand-in writer)
        if last is None or last.settled or not isinstance(stalled, trio.Event):
            return
        with trio.CancelScope(shield=True):
            async with trio.open_nursery() as waiting:

                async def until_settled() -> None:
                    await last.settled_now()
                    waiting.cancel_scope.cancel()

                waiting.start_soon(until_settled)
                await stalled.wait()
                waiting.cancel_scope.cancel()

    async def _serve(self, task_status: trio.TaskStatus[Any]) -> None:
        async with trio.open_nursery() as replies:
            replies.start_soon(self._reply_when_durable)
            try:
                async with trio.open_nursery() as effects:
                    self._nursery = effects
                    await super().run(task_status=task_status)
                    effects.cancel_scope.cancel()
            finally:
                self._held.close()

    async def _deliver(self, envelope: _Envelope[SessionMessage]) -> None:
        """Handle now; answer once the session's newest batch is durable (see module).

        A handler that raised something other than the session's own errors is a fault of
        the session, not of the caller: the session crashes on the record (its traceback
        logged) and the caller is told it ended.
        """
        result = await self._handled(envelope)
        if isinstance(result, outcome.Error) and _unforeseen(result.error) and not self.ended:
            error = result.error
            with trio.CancelScope(shield=True):
                await self._crash(None, error, f"it failed: {error!r}")
            crashed = SessionCrashedError(f"session {self.name!r} failed: {error!r}")
            crashed.__cause__ = error
            result = outcome.Error(crashed)
        if envelope.reply is None and _crashed(result):
            # An effect's or a timer's message: nobody waits for it, and the crash is on the
            # record. Raised, it failed the actor as a log that could not be written does.
            result = outcome.Value(None)
        last = self._last
        if last is None or last.succeeded:
            self._reply(envelope, result)
        else:
            self._held.send_nowait(_Held(envelope, result, last))

    async def _reply_when_durable(self) -> None:
        """The session's one replier: sends the held replies in order, each once the batch
        it waits for is durable, and those whose batch already is without waiting again."""
        held = self._to_reply
        item: _Held | None = None
        try:
            async for item in held:
                while item is not None:
                    envelope, result, last = item
                    answer = True
                    if not last.succeeded:
                        try:
                            await self._durable(last)
                        except Exception as error:
                            result = outcome.Error(error)
                            # A told message: the session has ended, nobody waits for it.
                            answer = envelope.reply is not None
                    if answer:
                        self._reply(envelope, result)
                    _close_reply(item)
                    item = _next_held(held)
        finally:
            # Cancelled with replies still held: their callers learn at once that no
            # answer will come, instead of at their timeout.
            while item is not None:
                _close_reply(item)
                item = _next_held(held)

    async def started(self) -> None:
        # A log whose tail was cut: resumed, the session would answer again with generations
        # the agent was already shown, under seqs the log had used; with every event cut,
        # it would be started again over what the summary still lists.
        await trio.to_thread.run_sync(check_counted, self.recorder, self.name)
        head = await trio.to_thread.run_sync(self.recorder.head, self.name)
        # A thread cannot be cancelled: a cancellation that came while one read the log is
        # taken before the session writes. Its writer, cancelled with it, may have closed,
        # and the start would fail as a log error instead of ending cancelled, unlogged.
        await trio.lowlevel.checkpoint_if_cancelled()
        if head is None:
            params = {**self.params, STR_HASH: str_hashing()}
            start = SessionStarted(self.app_ref, "runtime", params, self.redact_passwords)
            try:
                self._core = SessionCore(self.app)
            except ApplicationError as error:
                # Logged like any crash, so that `semledger replay` raises it again.
                self.ended = True
                self.failed_at = app_location(app_raised(error))
                await self._append([start, crash_event(error)])
                raise SessionCrashedError(
                    f"session {self.name!r}: the application raised as it started: "
                    f"{app_raised(error)!r} (`{self._replay_command()}` raises it again)"
                ) from error
            await self._append([start, *self.core.initial_outputs()])
        else:
            self._core = await trio.to_thread.run_sync(self._recover, limiter=_recoveries())
            await trio.lowlevel.checkpoint_if_cancelled()  # (as after the head's read)
            self._seq = head.seq
            self.recovered = True
            outstanding = set(self.core.effects)
            # Started before the checkpoint recovery began from: its task is gone.
            lost = sorted(self.core.runtime.pending_effects - outstanding)
            # Made again from a model holding the log's bullets for a password: run, it
            # would send them where the password went (a login, say).
            redacted = sorted(self._redacted_effects & outstanding)
            restarted = tuple(sorted(outstanding - self._redacted_effects))
            await self._append([SessionResumed(restarted)])
            # (None but on a damaged log: recovery re-executes from before any effect left)
            names = await trio.to_thread.run_sync(self._logged_names, lost) if lost else {}
            failed: list[tuple[int, str | None, str]] = [
                *((i, names[i], "lost when the session was recovered") for i in lost),
                *((i, self.core.effects[i].name, _REDACTED_EFFECT) for i in redacted),
            ]
            for effect_id, name, why in failed:
                self._tell_effect_failed(effect_id, name, why)
                await self._step(EffectFailed(effect_id, why))
            if self._checkpoint_due():
                # Due already: the next recovery should not re-execute all of this again,
                # whether or not an input comes in this run.
                self._inputs = 0
                if checkpoints := self._checkpoints():
                    await self._append(checkpoints)
        for effect_id, effect in list(self.core.effects.items()):
            self._start_effect(effect_id, effect)
        self._sync_timers(self.core.runtime.subscriptions())

    def _recover(self) -> SessionCore:
        """Rebuild the core from the last checkpoint (or the start) and the inputs after it,
        with the effects made before that checkpoint and still outstanding made again.

        Every commit re-execution makes must be the one logged there, in order (generation
        and snapshot hash): otherwise the session would serve other content under
        generations its agent already saw, and compute its next deltas from there.
        """
        self._check_started()
        core, start = self._reexecute()
        lost = core.runtime.pending_effects - set(core.effects)
        if lost:
            # Made before that checkpoint, so by none of the inputs re-executed: re-executing
            # the stretch that made them (only that) makes them again, to be started again.
            # A long-lived effect made early (a listener started by `init`) thus costs
            # little at each recovery, not a re-execution of the whole log.
            before = self._made_after(min(lost), start)
            earlier, _ = self._reexecute(before, until=start, making=lost)
            core.effects.update((i, e) for i, e in earlier.effects.items() if i in lost)
        return core

    def _made_after(self, effect_id: int, seq: int) -> int:
        """The seq bound below which the latest recovery checkpoint was taken before effect
        `effect_id` was made (1: none was, re-execute from the first input). Walks back one
        checkpoint at a time from `seq`, decoding each, never the inputs between them."""
        topic = topic_of(SnapshotTaken)
        while (record := self.recorder.last_of(self.name, topic, before=seq)) is not None:
            seq = record.seq
            event = decode(record.topic, record.version, record.body)
            assert isinstance(event, SnapshotTaken)
            with contextlib.suppress(KeyError, TypeError, ValueError):
                if int(event.state["runtime"]["next_effect_id"]) <= effect_id:
                    return seq + 1
        return 1

    def _logged_names(self, effect_ids: Iterable[int]) -> dict[int, str | None]:
        """The name each of `effect_ids` was logged with as it started (None: the log holds
        no start for it), found walking back over the effects started since the first."""
        wanted = set(effect_ids)
        names: dict[int, str | None] = dict.fromkeys(wanted)
        topic, before = topic_of(EffectStarted), None
        while wanted and (record := self.recorder.last_of(self.name, topic, before=before)):
            event = decode(record.topic, record.version, record.body)
            assert isinstance(event, EffectStarted)
            if event.effect_id in wanted:
                names[event.effect_id] = event.name
            wanted = {i for i in wanted if i < event.effect_id}
            before = record.seq
        return names

    def _reexecute(
        self, before: int | None = None, *, until: int | None = None, making: Set[int] = frozenset()
    ) -> tuple[SessionCore, int]:
        """The core re-executed from the last checkpoint (below seq `before`, if given) to
        the end of the log, and the seq it re-executed from.

        With `until`, a stretch only: it stops before seq `until`, or at the first input
        once every effect of `making` is made, and leaves this run's count of inputs and
        journal alone."""
        try:
            core, start, made = self._from_checkpoint(before)
        except ApplicationError as error:
            raise SessionCrashedError(
                f"session {self.name!r} cannot be resumed: the application raised as it "
                f"started ({app_raised(error)!r})"
            ) from error
        made_by = 0  # the seq of the input whose commits `made` holds (0: the first build)
        # The inputs toward the next checkpoint go on from the log, not from this run: a
        # session restarted more often than `checkpoint_every` would never take one.
        inputs = 0
        events = _in_order(self.name, self.recorder.events(self.name, start=start), start)
        for record, event in events:
            if until is not None and record.seq >= until:
                break
            if isinstance(event, Committed):
                mine = made.popleft() if made else None
                if mine is None or (mine.generation, mine.snapshot_hash) != (
                    event.generation,
                    event.snapshot_hash,
                ):
                    raise self._diverged(
                        record.seq, event.generation, _differs(event, mine), redacted=core.redacted
                    )
            elif isinstance(event, INPUT_CLASSES):
                if made:
                    raise self._diverged(made_by, made[0].generation, _EXTRA)
                if until is not None and making <= core.effects.keys():
                    break
                typed = isinstance(event, ActionRequested) and event.redacted
                try:
                    result = core.step(event)
                except Exception as error:  # as the live session takes it: see `_step`
                    following = next(events, None)
                    if following is not None and isinstance(following[1], SessionCrashed):
                        next(events, None)  # one logged past the crash is damage, named so
                        raise SessionCrashedError(
                            f"session {self.name!r} crashed (log event {following[0].seq}, on"
                            f" the input at event {record.seq}) and cannot be resumed;"
                            " `semledger replay` reproduces the crash"
                        ) from error
                    raise self._diverged(
                        record.seq,
                        core.runtime.generation,
                        f"re-executing the input there raised {app_raised(error)!r}, "
                        "which the live session did not",
                        redacted=core.redacted or typed,
                    ) from error
                core.redacted = core.redacted or (typed and result.reached_the_app)
                made.extend(o for o in result.outputs if isinstance(o, Committed))
                made_by = record.seq
                inputs += 1
                if core.redacted:
                    self._redacted_effects.update(effect_id for effect_id, _ in result.effects)
            elif isinstance(event, SessionCrashed):
                next(events, None)  # one logged past the crash is damage, named so
                raise SessionCrashedError(
                    f"session {self.name!r} crashed (see its log); it cannot be resumed, "
                    "but `semledger replay` reproduces the crash"
                )
        if made:
            raise self._diverged(made_by, made[0].generation, _EXTRA)
        if until is None:
            if start > 0:
                self._adopt_logged_journal(core)
            self._inputs = inputs
        return core, start

    def _adopt_logged_journal(self, core: SessionCore) -> None:
        """Give a core recovered from a checkpoint the journal a session that never stopped
        would hold: restored, it answers deltas only from the checkpoint's generation on, and
        a read since one of the 64 generations before would be answered in full, unlike the
        live session and the log-served read. (A logged journal that ends elsewhere than the
        re-executed runtime, which re-execution's checks leave no room for, is not adopted:
        reads are then answered as they were, if in full more often.)"""
        generation = core.runtime.generation
        journal = logged_journal(
            self.recorder, self.name, until=generation, since=max(generation - JOURNAL_SIZE, 0)
        )
        with contextlib.suppress(ValueError):
            core.runtime.adopt_journal(journal)


    def _check_started(self) -> None:
        """Refuse a log this app did not record, before a checkpoint (which may come from
        another app with the same model) is restored, and one recorded under the other
        password policy."""
        refusal = ended_for_good(self.recorder, self.name)
        if refusal is not None:
            raise SessionEndedError(refusal)
        started = session_start(self.recorder, self.name)
        if started is None:  # (it has events: it is being resumed) an edited log
            raise unstarted(self.recorder, self.name)
        if started.drives_a_surface:
            raise SessionMismatchError(
                f"session {self.name!r} was recorded by a {started.params['adapter']} surface, "
                f"not by an app"
            )
        if started.app != self.app_ref:
            raise SessionMismatchError(
                f"session {self.name!r} was recorded with {started.app}, not {self.app_ref}"
            )
        refusal = password_policy_refusal(self.name, started, self.redact_passwords)
        if refusal is not None:
            raise SessionMismatchError(refusal)

    def _replay_command(self) -> str:
        """The command that re-executes this session, with the log it is in when that is a
        file (a message pointing at the default log would find no such session)."""
        path = getattr(self.recorder, "path", None)
        return session_command("replay", self.name, None if path is None else str(path))

    def _diverged(
        self, seq: int, generation: int, what: str, *, redacted: bool = False
    ) -> SessionDivergedError:
        likely = (
            "likely an input before it was a password the log redacted, which re-executing "
            "types as bullets (serving with --log-passwords logs typed passwords, so that a "
            "session whose app checks them can be resumed)"
            if redacted
            else "likely the application changed since the session was recorded, or it "
            "depends on something the log does not hold (a clock, randomness, a redacted "
            "password)"
        )
        return SessionDivergedError(
            f"session {self.name!r} cannot be resumed: re-executing its log differs from it "
            f"at log seq {seq}, generation {generation} ({what}); {likely}; "
            f"`{self._replay_command()}` shows the node-level difference"
        )

    def _from_checkpoint(
        self, before: int | None = None
    ) -> tuple[SessionCore, int, collections.deque[Committed]]:
        """The core to re-execute from (the last checkpoint below seq `before`), the seq to
        re-execute from, and the commits it made that the log holds after that seq (the
        first build's, from the start)."""
        record = None
        if self.checkpoint_every is not None:
            record = self.recorder.last_of(self.name, topic_of(SnapshotTaken), before=before)
        if record is not None:
            event = decode(record.topic, record.version, record.body)
            assert isinstance(event, SnapshotTaken)
            try:
                core = SessionCore.from_checkpoint(self.app, event.state)
            except (CheckpointMismatchError, MessageCodecError, KeyError, TypeError, ValueError):
                pass
            else:
                return core, record.seq + 1, collections.deque()
        core = SessionCore(self.app)
        # The first build's effects are outstanding until the log says they finished: they
        # are started again like any other, not reported lost.
        first = core.initial_outputs()
        return core, 0, collections.deque(o for o in first if isinstance(o, Committed))

    async def stopped(self) -> None:
        if not self.ended:
            self.ended = True
            await self._append([SessionEnded("closed")])

    async def handle(self, message: SessionMessage) -> Any:
        if isinstance(message, Read):
            return self.core.runtime.read(message.since)
        if isinstance(message, Inspect):
            runtime = self.core.runtime
            return runtime.state_counters() if message.what == "state" else runtime.paint_summary()
        if isinstance(message, Close):
            if not self.ended:
                self.ended = True
                self.core.runtime.close()
                await self._append([SessionEnded(message.reason, message.by)])
            self.close()
            return None
        if isinstance(message, Refuse):
            if not self.ended:
                self._submit([self._refused(message)])
            return message.rejection
        if isinstance(message, Connect):
            if not self.ended:
                self._submit([message.connection])
            return None
        if self.ended:
            return Rejection(ErrorCode.HOST_CLOSED, "the session is closed", {})
        if isinstance(message, Perform):
            return await self._perform(message)
        if isinstance(message, Diagnose):
            return await self._step(DiagnosticsDispatched(message.event))
        if isinstance(message, _TimerTick):
            timer = self._timers.get(message.timer)
            if timer is None or timer[1] is not message.run:
                return None  # its run was dropped after this tick was sent: it never happened
            return await self._deliver_message(
                message.timer.message, functools.partial(TimerFired, timer[0]), f"timer {timer[0]}"
            )
        if message.error is not None:
            return await self._step(
                EffectFailed(message.effect_id, message.error, message.traceback)
            )
        effect = self.core.effects.get(message.effect_id)
        source = f"effect {message.effect_id}" + ("" if effect is None else f" ({effect.name})")
        return await self._deliver_message(
            message.message, functools.partial(EffectCompleted, message.effect_id), source
        )

    async def _deliver_message(
        self, msg: object, as_input: Callable[[Any], Event], source: str
    ) -> Any:
        """Step the app message of an effect or a timer (`source`, as the operator is told:
        ``effect 1 (todo.save)``, ``timer 2``), logged as ``as_input(encoded)``.

        A message the log cannot record is logged without it (``as_input(None)``), and the
        session crashes: re-executing that input fails the same way, so replay crashes there.
        The crash names `source`, which neither the codec's error nor the input logged does;
        its traceback's last line stays the codec's error, which replay reports again.
        """
        try:
            encoded = self.core.codec.encode(msg)
        except MessageCodecError as error:
            why = f"its log cannot record a message: {error}; {source} returned it"
            await self._crash(as_input(None), error, why, about=f"{source} returned a message:")
            return None
        return await self._step(as_input(encoded))

    async def _perform(self, message: Perform) -> Receipt | Rejection:
        core = self.core
        logged = logged_action(
            message.action,
            message.target,
            core.runtime.snapshot,
            redact=self.redact_passwords,
            keep_length=True,
        )
        if logged.password:
            # The live model may now hold the password the log leaves out, and a recovery
            # checkpoint would encode it. Recovery re-executes from the last one before it,
            # typing the logged bullets as replay does, and the recovered session's model
            # holds only those.
            self._recovery_checkpoints = False
        event = ActionRequested(
            core.next_request_id(),
            encode_target(message.target),
            logged.wire,
            encode_precondition(message.precondition),
            logged.redacted,
        )
        outcome = await self._step(
            event, decoded=(message.target, message.action, message.precondition)
        )
        assert isinstance(outcome, Receipt | Rejection)
        return outcome

    def _refused(self, message: Refuse) -> CallRefused:
        return refusal(message.arguments, message.rejection, redact=self.redact_passwords)

    async def _step(self, event: Event, decoded: tuple[Any, Any, Any] | None = None) -> Any:
        try:
            result = self.core.step(event, decoded=decoded)
        except ApplicationError as error:
            await self._crash(event, error)
            raise SessionCrashedError(f"the application raised: {app_raised(error)!r}") from error
        except Exception as error:
            # Not the app's own error (a logged message that does not decode back, a fault
            # of the runtime): the session ends the same way, on the record after its
            # input, so that replay raises it again there.
            await self._crash(event, error, f"stepping its input raised {error!r}")
            raise SessionCrashedError(f"the session failed: {error!r}") from error
        self._inputs += 1
        self._changed += sum(commit_size(o) for o in result.outputs if isinstance(o, Committed))
        pending = self._submit([event, *result.outputs])
        if self._checkpoint_due():  # (after the input is on its way: taking them may fail)
            self._inputs = 0
            if checkpoints := self._checkpoints():
                self._submit(checkpoints)
        for effect_id, effect in result.effects:
            self._start_effect(effect_id, effect, pending)
        self._sync_timers(result.timers)
        return result.outcome

    def _checkpoint_due(self) -> bool:
        return self.checkpoint_every is not None and self._inputs >= self.checkpoint_every

    def _checkpoints(self) -> list[Event]:
        """The checkpoints due: recovery's, while the model can be logged, and the read's
        (the committed semantics), once more has changed since the last one than it holds.

        That bounds both what a log-served read folds after its checkpoint and what the
        read checkpoints add to the log by the size of the tree, however wide it is.
        """
        core = self.core
        out: list[Event] = []
        if self._recovery_checkpoints:
            try:
                out.append(SnapshotTaken(core.runtime.generation, core.checkpoint()))
            except MessageCodecError as error:
                self._recovery_checkpoints = False  # (so told once a run)
                model = (
                    "declare App.model_type, with a model that"
                    if core.codec.model_type is None
                    else "keep to a model (App.model_type) that"
                )
                _log.warning(
                    "session %r takes no recovery checkpoints (%s), so a restart re-executes"
                    " every input from the first: %s reads back from the log equal to itself"
                    " and view keys msgpack can pack (docs/apps.md, model_type)",
                    self.name,
                    error,
                    model,
                )
        snapshot = core.runtime.snapshot
        if self._changed >= len(snapshot.nodes):
            out.append(
                SemanticsTaken(
                    snapshot.generation,
                    encode_read(snapshot.full()),
                    core.runtime.next_node_id,
                )
            )
            self._changed = 0
        return out

    async def _crash(
        self, event: Event | None, error: BaseException, why: str = "", *, about: str = ""
    ) -> None:
        """End the session on the record: `event` (its input, if any) and the crash, whose
        traceback `about` heads (see `crash_event`)."""
        self.ended = True
        self._crashed = True
        self.failure = why or f"its application raised {app_raised(error)!r}"
        self.failed_at = app_location(app_raised(error))
        self.core.runtime.close()
        await self._append([*([] if event is None else [event]), crash_event(error, about)])
        self.close()

    async def _append(self, events: list[Event]) -> None:
        await self._durable(self._submit(events))

    def _submit(self, events: list[Event]) -> Pending:
        now = self.clock()
        batch = [NewEvent(self.name, self._seq + i + 1, e, now) for i, e in enumerate(events)]
        try:
            self._last = self.writer.submit(batch, after=self._last)
        except ActorClosedError as error:
            self._lost_the_log()  # the runtime already took the step the log never will
            raise SessionLogError(f"session {self.name!r}: {self.failure}") from error
        self._seq += len(batch)
        return self._last

    async def _durable(self, pending: Pending) -> None:
        """Wait for `pending`; if it cannot be written, the session ends (its runtime is
        ahead of its log, so it must not answer again) and the error is raised."""
        try:
            await pending.durable()
        except SequenceConflict as conflict:
            self._lost_the_log(f"another writer appended to its log ({conflict})")
            raise SessionConflictError(
                f"session {self.name!r} is being written by another process ({conflict})"
            ) from conflict
        except ActorClosedError:
            self._lost_the_log()
            raise
        except Exception as error:
            self._lost_the_log(f"its log could not be written ({error!r})")
            raise SessionLogError(
                f"session {self.name!r}: its log could not be written ({error!r})"
            ) from error

    def _lost_the_log(self, why: str = "the log writer stopped before it wrote its events") -> None:
        self.ended = True
        self.failure = self.failure or why
        if self._core is not None:  # (None: the application raised as it started)
            self._core.runtime.close()
        self.close()

    def _start_effect(self, effect_id: int, effect: Any, after: Pending | None = None) -> None:
        assert self._nursery is not None
        self._nursery.start_soon(self._run_effect, effect_id, effect, after, name=effect.name)

    def _sync_timers(self, wanted: tuple[Every[Any], ...]) -> None:
        """Start the timers the model now subscribes to, numbered in the order it lists
        them, and stop the ones it dropped."""
        kept = set(wanted)
        for timer in [t for t in self._timers if t not in kept]:
            self._timers.pop(timer)[1].cancel()
        assert self._nursery is not None
        for timer in [t for t in wanted if t not in self._timers]:
            scope = trio.CancelScope()
            number = self._next_timer
            self._timers[timer] = (number, scope)
            self._next_timer += 1
            # Not named by its repr: a message's may raise (str() refuses an int of over
            # 4300 digits), and the session would stop here, before the tick is refused.
            self._nursery.start_soon(self._run_timer, timer, scope, name=f"timer {number}")

    def _tell_effect_failed(self, effect_id: int, name: str | None, error: str) -> None:
        """The operator's line for an effect logged as failed: run, or failed on a resume
        (`name`: None for one whose effect the resume no longer has)."""
        _log.warning(
            "session %r: effect %d%s failed: %s (logged as EffectFailed; the app gets no"
            " message for it)",
            self.name, effect_id, "" if name is None else f" ({name})", error,
        )

    async def _run_timer(self, timer: Every[Any], scope: trio.CancelScope) -> None:
        """Tell the session a tick every period; each is handled (and logged) as an input."""
        with scope, contextlib.suppress(ActorError):
            while True:
                await trio.sleep(timer.seconds)
                await self.tell(_TimerTick(timer, scope))

    async def _run_effect(self, effect_id: int, effect: Any, after: Pending | None) -> None:
        """Run an effect once the step that started it is durable (never, if it is lost)."""
        if after is not None:
            try:
                await after.durable()
            except Exception:
                return
        try:
            message = await effect.result()
        except BaseException as error:
            if not app_failed(error):
                raise
            failure = effect_failure(error)
            self._tell_effect_failed(effect_id, effect.name, failure)
            done = _EffectDone(effect_id, None, failure, traceback_text(error))
        else:
            done = _EffectDone(effect_id, message, None)
        with contextlib.suppress(ActorError):
            await self.tell(done)

    # ---- the host-facing operations ---------------------------------------------------------

    # Both wait as long as the session takes: an answer waits for its events to be durable,
    # and a slow disk must not turn an action that will be carried out into a timeout a
    # caller would retry. A caller that gives up (a cancel scope) may still find its action
    # carried out and logged; the audit says.

    async def read_semantics(self, since: int | None) -> ReadResult | Rejection:
        """Raises ``TypeError`` unless `since` is None or an int, ``ValueError`` unless it
        is from 0 to 2**64-1, and `ActorError` if the actor was never started."""
        check_since(since)
        await self._check_running()
        result: ReadResult | Rejection = await self.request(Read(since), timeout=math.inf)
        return result

    async def perform_action(
        self, target: Target, action: SemanticsAction, precondition: Precondition
    ) -> Receipt | Rejection:
        """Raises ``TypeError`` for an argument of the wrong type, before anything is logged
        (an int given as the precondition was logged, and taken, as latest), and
        `ActorError` if the actor was never started."""
        check_request(target, action, precondition)
        await self._check_running()
        result: Receipt | Rejection = await self.request(
            _checked_on_the_wire(target, action, precondition), timeout=math.inf
        )
        return result

    def _subject(self) -> str:
        return f"session {self.name!r}"

    def _closed_error(self, what: str) -> ActorClosedError:
        """Names the session, and why it ended when it did on its own."""
        if self.failure is None:
            return ActorClosedError(f"session {self.name!r} {what}")
        ended = "crashed" if self._crashed else "ended"
        return ActorClosedError(f"session {self.name!r} {ended}: {self.failure}")

    async def _check_running(self) -> None:
        """Without a running actor a request would wait for good (it has no timeout).
        Refused, it lets other tasks run all the same (see `Actor._send`)."""
        if self._nursery is None:
            await trio.lowlevel.checkpoint()
            raise ActorError(
                f"session actor {self.name!r} has not been started: start it with"
                " `await nursery.start(actor.run)`, or open it with SessionRegistry.open"
            )
