"""Deterministic re-execution: re-run a session's inputs through the app and compare.

Every output the live session logged (commits with their snapshot hashes, receipts,
rejections, started effects) must come out again, in order. The first one that does not is
reported with a node-level diff; an exception the application raised live must be raised
again at the same step, of the same type, and a check a fuzzer counterexample failed must
fail again at the same step. A replay pins the recorded run, its failure included: once the
bug is fixed, it diverges where the failure no longer happens (but for a crash on a message
the log could not record, which replay cannot feed back: `ReplayReport.unrecorded`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Generator
from typing import Any

import attrs

from semledger.actors import (
    MessageCodecError,
    SessionCore,
    crash_event,
    fold_commit,
)
from semledger.actors._str_hash import PARAM as STR_HASH
from semledger.actors._str_hash import seed_recorded, str_hashing_note
from semledger.eventlog import (
    GENESIS,
    INPUT_CLASSES,
    TOPICS,
    ActionReceipt,
    ActionRejected,
    ActionRequested,
    ChainProblem,
    Committed,
    CorruptEventError,
    DiagnosticsDispatched,
    EffectCompleted,
    EffectFailed,
    EffectStarted,
    Event,
    InconsistentLogError,
    LogOrder,
    Problem,
    Recorder,
    SessionCrashed,
    SessionStarted,
    StoredEvent,
    TimerFired,
    UnknownTopicError,
    UnsupportedVersionError,
    chain_step,
    check_counted,
    known_head,
    unstarted,
)
from semledger.runtime import (
    App,
    ApplicationError,
    AppRuntime,
    ErrorCode,
    SemanticsNode,
    SemanticsSnapshot,
)
from semledger.runtime._app import check_app
from semledger.runtime._wire import encode_node

from ._audit import verify
from ._invariants import (
    FAILURES,
    GenerationChecker,
    InvariantViolation,
    NodeIdChecker,
    RecordedViolation,
    check_answer,
    check_issues,
    check_read,
    mounted_node_ids,
    recorded_effect_failure,
    recorded_issue_check,
    recorded_nondeterministic,
    recorded_reads,
    recorded_violation,
)
from ._reads import check_log_and_session, check_progress

COMPARED = (Committed, ActionReceipt, ActionRejected, EffectStarted)

_HOLD = {
    "generation": "the generation invariants to hold",
    "issues": "the view to report no issues",
    "read": "the read invariants to hold",
    "answer": "each action to be answered as SPEC 2.6 orders it",
    "node_id": "no node id to come back once its element was removed",
}
"""What a step's check expected, as a divergence says it when the check failed."""
_BREAK = {
    "generation": ("the generation invariants to break", "they held"),
    "issues": ("the view to report an issue", "the view reports none"),
    "read": ("a read invariant to break", "the reads held"),
    "answer": ("an action to be answered wrongly", "every action was answered rightly"),
    "node_id": ("a removed node's id to come back", "none came back"),
}
"""What a recorded violation expected, and what replay found when it did not happen."""
_EXPORTED_FAILS = (
    "a test exported from this session fails too: set its FIXED = True, where its docstring"
    " says it has one"
)
_FIXED = (
    "a replay pins the recorded run, failure included: if the bug is fixed, this divergence"
    f" is the fix working ({_EXPORTED_FAILS})"
)


@attrs.frozen
class Divergence:
    """The first place where re-execution did not produce what the log holds."""

    step: int
    """The number of the input (1-based) after which outputs differ."""
    seq: int
    """The log sequence number of the first output that differs (or of the input)."""
    expected: str
    actual: str
    diff: tuple[str, ...] = ()
    note: str | None = None
    input: str | None = None
    """What the input at `step` was (a perform_action, a timer, an effect's result)."""


@attrs.frozen
class ReplayReport:
    """What `reexecute` found: the inputs and commits it replayed, and the first
    `divergence` from the log (None: identical, `ok`)."""

    session: str
    inputs: int
    commits: int
    divergence: Divergence | None
    crash: BaseException | None = None
    """The application's exception, raised again at the step where the live session crashed."""
    crash_step: int | None = None
    surface: bool = False
    """A surface session's re-run: ``inputs`` and ``commits`` both count its calls."""
    violation: InvariantViolation | None = None
    """The check a fuzzer counterexample failed, failed again at the step it recorded."""
    violation_step: int | None = None
    unrecorded: bool = False
    """The crash is on a message the log could not record (`unrecorded_message`): replay
    feeds none back, and fails on that, so it reproduces the crash even once the app is
    fixed."""
    nondeterministic: bool = False
    """The session is a fuzzer counterexample of an app that did not do the same on the same
    inputs: a replay may diverge at any step, another each run, or not at all."""
    effect_failure: str | None = None
    """The session is a fuzzer counterexample whose failure was an effect raising (this,
    in the fuzzer's words): an input, fed back as logged, so it replays identical even once
    the effect is fixed."""
    unrepeated: tuple[str, ...] = ()
    """A surface session's re-run: each call that found what the session drove gone (its
    browser killed, say) and succeeded in the re-run, said in words. Nothing done outside
    the session can be repeated: the re-run goes on from the session's next start."""

    @property
    def ok(self) -> bool:
        return self.divergence is None

    @property
    def reproduced(self) -> str | None:
        """The recorded failure this replay reproduced, named ("crash", "view issue", ...)."""
        if not self.ok:
            return None
        if self.crash is not None:
            return "crash"
        if self.violation is not None:
            return FAILURES.get(self.violation.check or "", "failure")
        return None


def _describe(event: Event | None) -> str:
    if event is None:
        return "nothing"
    if isinstance(event, Committed):
        return f"commit of generation {event.generation} (hash {event.snapshot_hash[:12]})"
    if isinstance(event, ActionReceipt):
        return f"receipt {event.before} -> {event.after}, pending_work={event.pending_work}"
    if isinstance(event, ActionRejected):
        details = f" {event.details}" if event.details else ""
        return f"rejection {event.code}: {event.message!r}{details}"
    if isinstance(event, EffectStarted):
        return f"effect {event.effect_id} ({event.name}) started"
    return type(event).__name__


def _input(event: Event) -> str | None:
    """An input as a divergence names it: what happened at its step."""
    if isinstance(event, ActionRequested):
        named = event.target.get("id")
        aimed = {"semantic_id": repr(named), "node_id": f"node {named}"}
        on = aimed.get(str(event.target.get("kind")), "a path")
        return f"perform_action {event.action.get('kind')} on {on}"
    if isinstance(event, TimerFired):
        return f"timer {event.timer_id} fired ({_message_name(event.message)})"
    if isinstance(event, EffectCompleted):
        return f"effect {event.effect_id} finished ({_message_name(event.message)})"
    if isinstance(event, EffectFailed):
        return f"effect {event.effect_id} failed ({event.error})"
    if isinstance(event, DiagnosticsDispatched):
        return f"diagnostics event {event.event.get('kind')}"
    return None


def _message_name(message: Any) -> str:
    """A logged message's class, or its value when it has none."""
    if isinstance(message, dict) and message.get("type") is not None:
        return str(message["type"])
    return repr(message.get("value") if isinstance(message, dict) else message)


def _same(logged: Event, produced: Event) -> bool:
    if isinstance(logged, Committed) and isinstance(produced, Committed):
        return _commit_key(logged) == _commit_key(produced)
    if isinstance(logged, ActionRejected) and isinstance(produced, ActionRejected):
        return _rejection_key(logged) == _rejection_key(produced)
    return logged == produced


_APP_WORDED: frozenset[str] = frozenset(
    {ErrorCode.HANDLER_REJECTED, ErrorCode.CONFIRMATION_REQUIRED, ErrorCode.POLICY_DENIED}
)
"""A handler's `Reject` reason, and the codes an application-level policy adds (SPEC 2.7)."""


def app_worded(code: str) -> bool:
    """Whether a rejection of `code` carries the app's words (`_APP_WORDED`). Every other
    rejection's message is semledger's, which a later version may word otherwise: compared
    by it, a log recorded before would replay as diverging."""
    return code in _APP_WORDED


def _rejection_key(rejection: ActionRejected) -> tuple[object, ...]:
    """What a rejection is compared by: its request, code and details, and its message
    where the app wrote it (`app_worded`)."""
    words = rejection.message if app_worded(rejection.code) else None
    return rejection.request_id, rejection.code, rejection.details, words


def _commit_key(commit: Committed) -> tuple[int, str, list[str]]:
    """What a commit is compared by: its generation, its snapshot's hash, and what it
    announced (which the hash does not cover): the rest of its delta makes the hash."""
    return commit.generation, commit.snapshot_hash, _announced(commit)


def _announced(commit: Committed) -> list[str]:
    return [str(a.get("text")) for a in commit.delta.get("announcements") or ()]


def _describe_pair(logged: Event, produced: Event | None) -> tuple[str, str]:
    """How a divergence names the logged and the produced output: commits with the same
    hash that announced other things, by what they announced; two outputs that read alike
    (receipts for different requests, say), with the fields they differ in."""
    if (
        isinstance(logged, Committed)
        and isinstance(produced, Committed)
        and logged.snapshot_hash == produced.snapshot_hash
    ):
        return (
            f"{_describe(logged)} announcing {_announced(logged)!r}",
            f"{_describe(produced)} announcing {_announced(produced)!r}",
        )
    said = _describe(logged), _describe(produced)
    if produced is None or said[0] != said[1]:
        return said
    if type(logged) is not type(produced):
        return repr(logged), repr(produced)
    differing = [
        field.name
        for field in attrs.fields(type(logged))
        if getattr(logged, field.name) != getattr(produced, field.name)
    ]
    return said[0] + _fields(logged, differing), said[1] + _fields(produced, differing)


def _fields(event: Event, names: list[str]) -> str:
    return "".join(f", {name}={getattr(event, name)!r}" for name in names)


def _node_name(node_id: int, node: SemanticsNode) -> str:
    """A node as a diff names it: its id, and its semantic id, which the app's author knows
    it by, when it has one."""
    return f"node {node_id}" if node.semantic_id is None else f"node {node_id} {node.semantic_id!r}"


def node_diff(expected: SemanticsSnapshot, actual: SemanticsSnapshot) -> list[str]:
    """Node by node, how `actual` differs from `expected`. Raises ``TypeError`` unless both
    are ``SemanticsSnapshot``s."""
    for name, value in (("expected", expected), ("actual", actual)):
        if not isinstance(value, SemanticsSnapshot):
            raise TypeError(
                f"{name}: expected a SemanticsSnapshot, got {type(value).__name__} {value!r:.80}"
            )
    lines: list[str] = []
    if expected.root != actual.root:
        lines.append(f"root: {expected.root} -> {actual.root}")
    if expected.focused != actual.focused:
        lines.append(f"focused: {expected.focused} -> {actual.focused}")
    for node_id in sorted(set(expected.nodes) | set(actual.nodes)):
        old, new = expected.nodes.get(node_id), actual.nodes.get(node_id)
        if old == new:
            continue
        if old is None:
            assert new is not None
            lines.append(f"+ {_node_name(node_id, new)} ({new.role.value}) is new")
            continue
        if new is None:
            lines.append(f"- {_node_name(node_id, old)} ({old.role.value}) is missing")
            continue
        name = _node_name(node_id, old)
        a, b = encode_node(old), encode_node(new)
        for key in a:
            if a[key] == b[key]:
                continue
            if isinstance(a[key], dict) and isinstance(b[key], dict):  # state, numeric, ...
                for part in [p for p in a[key] if a[key][p] != b[key].get(p)]:
                    lines.append(
                        f"~ {name} {key}.{part}: {a[key][part]!r} -> {b[key].get(part)!r}"
                    )
            else:
                lines.append(f"~ {name} {key}: {a[key]!r} -> {b[key]!r}")
    if expected.issues != actual.issues:
        lines.append(f"issues: {len(expected.issues)} -> {len(actual.issues)}")
    return lines


def _raised(error: BaseException) -> str:
    """What raised, as a divergence says it: the app's own exception, or what stepping the
    input raised outside it (a message that does not decode, a tick of no timer)."""
    if isinstance(error, ApplicationError):
        return f"the app raised {error.__cause__!r}"
    return f"stepping it raised {error!r}"


def unrecorded_message(event: Event) -> bool:
    """Whether `event` is the message of an effect or a timer that the live session could
    not record: logged as None, and the session crashed on it."""
    return isinstance(event, EffectCompleted | TimerFired) and event.message is None


def _as_logged(error: Exception, event: Event, crash: SessionCrashed) -> Exception:
    """`error`, raised again at `event`, as a replay reports it. Stepping a message the live
    session could not record (`unrecorded_message`) fails only on the None logged for it,
    so the error is made again with the live reason ("Done is not among the app's
    message_types, ...") the crash logged."""
    reason = _logged_reason(crash)
    if not (
        unrecorded_message(event) and isinstance(error, MessageCodecError) and reason is not None
    ):
        return error
    return MessageCodecError(reason).with_traceback(error.__traceback__)


def _logged_reason(crash: SessionCrashed) -> str | None:
    """The message of the exception `crash` logged: its traceback's last ``Type: message``."""
    lines = crash.traceback.rstrip("\n").split("\n")
    named = crash.exception_type
    for at in range(len(lines) - 1, -1, -1):
        head, colon, rest = lines[at].partition(": ")
        if colon and (head == named or head.endswith(f".{named}")):
            return "\n".join([rest, *lines[at + 1 :]])
    return None


def _no_longer(divergence: Divergence, failure: str) -> Divergence:
    """`divergence`, where the recorded `failure` did not happen, saying what that means."""
    actual = f"{divergence.actual}: the recorded {failure} no longer happens"
    return attrs.evolve(divergence, actual=actual, note=_FIXED)


def _crash_divergence(
    step: int, seq: int, logged: SessionCrashed, error: BaseException
) -> Divergence | None:
    """None if `error` is logged as the exception the live session crashed with at `step`."""
    if crash_event(error).exception_type == logged.exception_type:
        return None
    return Divergence(
        step,
        seq,
        f"the app to raise {logged.exception_type}",
        _raised(error),
    )


def _redaction_note(
    divergence: Divergence | None, redacted: list[tuple[int, int]]
) -> Divergence | None:
    """`divergence` with a note if a redacted input (`(step, seq)`, in order) may explain it:
    replay types the masked text the log holds, so what the app made of it may differ."""
    if divergence is None or not redacted:
        return divergence
    if redacted[-1][0] == divergence.step:
        return _noted(divergence, "this input was redacted in the log")
    step, seq = redacted[0]
    earlier = (
        f"an input earlier in the session, step {step} (log seq {seq}), was"
        if len(redacted) == 1
        else f"{len(redacted)} inputs earlier in the session, the first at step {step} "
        f"(log seq {seq}), were"
    )
    return _noted(
        divergence,
        f"{earlier} redacted in the log and replayed with masked text, which may be the "
        "cause; recording with --log-passwords keeps the text and avoids this",
    )


def _failure_ahead(
    divergence: Divergence | None,
    recorder: Recorder,
    session: str,
    violated: RecordedViolation | None,
) -> Divergence | None:
    """`divergence` with a note when the run it pins fails after it (the crash the log
    holds, or the check a fuzzer counterexample failed): a fix of that failure may change
    what the app does earlier too, and a replay cannot tell that apart from a new bug."""
    if divergence is None or _fix_working(divergence):
        return divergence
    if violated is not None and violated.step > divergence.step:
        failure = f"the recorded {FAILURES[violated.check]} at step {violated.step}"
    else:
        crash = recorder.last_of(session, TOPICS[SessionCrashed])
        if crash is None or crash.seq <= divergence.seq:
            return divergence
        failure = f"the recorded crash (log seq {crash.seq})"
    return _noted(
        divergence,
        f"{failure} comes after this step; a fix of it may change earlier steps too, and"
        f" then this divergence is the fix working ({_EXPORTED_FAILS})",
    )


def _fix_working(divergence: Divergence) -> bool:
    """Whether `divergence` is that the recorded failure no longer happens (`_no_longer`)."""
    return divergence.note is not None and _FIXED in divergence.note


def _noted(divergence: Divergence, note: str, *, after: bool = False) -> Divergence:
    """`divergence` with `note` before the one it has (or `after` it)."""
    if divergence.note is None:
        joined = note
    else:
        joined = f"{divergence.note}; {note}" if after else f"{note}; {divergence.note}"
    return attrs.evolve(divergence, note=joined)


@attrs.define
class FuzzChecks:
    """The checks a fuzzer counterexample made after each step, made again (that the view
    reports no issues but the allowed ones, the reads it made), and the one it failed,
    which must fail again at the same step, as a crash must be raised again."""

    reads: dict[int, list[int | None]]
    allowed_issues: frozenset[str] | None
    violated: RecordedViolation | None
    reproduced: InvariantViolation | None = None
    fuzzed: bool = False
    """A fuzzer counterexample's: node ids and actions' answers are checked too, as the
    fuzzer checked them."""
    node_ids: NodeIdChecker = attrs.Factory(NodeIdChecker)
    answered: Callable[[], None] | None = None
    """The check of the answer to the last step's action, when it was one."""

    def took(
        self, before: SemanticsSnapshot, event: Event, outcome: Any, effects: bool, step: int
    ) -> None:
        """Note the step just taken (`before`: the snapshot it was taken on; `effects`:
        whether effects are outstanding after it), whose answer `after` checks."""
        self.answered = (
            functools.partial(check_answer, before, event, outcome, effects, f"at input {step}")
            if self.fuzzed and isinstance(event, ActionRequested)
            else None
        )

    def after(self, runtime: AppRuntime[Any, Any], step: int) -> InvariantViolation | None:
        """The first of the checks after `step` inputs that fails, if one does (in the
        fuzzer's order)."""
        try:
            if self.allowed_issues is not None:
                check_issues(runtime.snapshot, f"step {step}", self.allowed_issues)
            if self.fuzzed:
                where = f"at input {step}" if step else "as it started"
                self.node_ids.check(runtime.snapshot, lambda: mounted_node_ids(runtime), where)
            if self.answered is not None:
                self.answered()
            for since in self.reads.get(step, ()):
                check_read(runtime, since)
        except InvariantViolation as violation:
            return violation
        return None

    def judge(self, step: int, seq: int, violation: InvariantViolation | None) -> Divergence | None:
        """None when `step`'s checks held, or failed as the counterexample recorded (which
        `reproduced` then holds); else the divergence."""
        recorded = self.violated
        if recorded is not None and recorded.step == step:
            if violation is None:
                expected, found = _BREAK[recorded.check]
                if recorded.failure:
                    expected = f"{expected}, as the fuzzer recorded: {recorded.failure}"
                return _no_longer(Divergence(step, seq, expected, found), FAILURES[recorded.check])
            if violation.check == recorded.check:
                self.reproduced = violation
                return None
        if violation is None:
            return None
        expected = _HOLD.get(violation.check or "", "the invariants to hold")
        return Divergence(step, seq, expected, str(violation))

    def gone(self, step: int, seq: int, runtime: AppRuntime[Any, Any]) -> Divergence | None:
        """At the step whose check the counterexample failed, when that step's outputs differ
        from the log: the divergence saying that the checks now hold there. A fix of the bug
        changes the view that had it, so its commit's hash differs too; that the recorded
        failure no longer happens is what it means."""
        if self.violated is None or self.violated.step != step:
            return None
        if self.after(runtime, step) is not None:
            return None
        return self.judge(step, seq, None)


_UNDECODABLE = (CorruptEventError, UnknownTopicError, UnsupportedVersionError)


class _Log:
    """The session's records, read lazily, with one record of look-ahead; a seq missing
    between two of them, a body that does not decode, or an event past the session's end
    that nothing logs there (`past_end`) is damage (``InconsistentLogError`` naming the
    event), not the app's divergence. Each record read is checked against the integrity
    chain too, on the same pass; `check_chain` reports the first that breaks it."""

    def __init__(self, recorder: Recorder, session: str) -> None:
        self._recorder = recorder
        self._session = session
        self._chain = GENESIS
        self._chained = 0
        """The seq of the last record verified against the chain."""
        self._broken = False
        self._records = self._whole(recorder, session)
        self._next: tuple[StoredEvent, Event] | None = next(self._records, None)

    def _whole(
        self, recorder: Recorder, session: str
    ) -> Generator[tuple[StoredEvent, Event], None, None]:
        order = LogOrder(session)
        try:
            for record, event in recorder.events(session):
                order.check(record, event)
                self._verify(record)
                yield record, event
        except _UNDECODABLE as error:
            # The decoder does not say which record it failed on: the next one there is it.
            bad = next(recorder.read(session, start=order.expected), None)
            if bad is None:
                raise
            order.check_seq(bad.seq)
            raise InconsistentLogError(session, bad.seq, str(error)) from error

    def _verify(self, record: StoredEvent) -> None:
        """Take `record` as the next event of the chain, unless it broke already."""
        if self._broken:
            return
        seq = self._chained + 1
        fields = (record.topic, record.version, record.body)
        if (
            record.seq != seq
            or chain_step(self._chain, self._session, seq, *fields) != record.chain
        ):
            self._broken = True
            return
        self._chain = record.chain
        self._chained = seq

    def check_chain(
        self, refused: str, on_progress: Callable[[int, int], None] | None = None
    ) -> None:
        """Raise ``InconsistentLogError`` naming the first event that breaks the session's
        integrity chain, as ``audit --verify`` names it: the records read so far, and the
        rest, which a replay that stopped early (a divergence, a crash raised again) did not
        read. A verdict on the app is worth nothing of an edited log. `refused` says what is
        not done of one."""
        self.close()
        if not self._broken:
            head = self._recorder.head(self._session)
            for record in self._recorder.read(self._session, start=self._chained + 1):
                self._verify(record)
                if self._broken:
                    break
                if on_progress is not None and head is not None and record.seq % 1000 == 0:
                    on_progress(record.seq, head.seq)
        if self._broken:
            raise _chain_broken(self._recorder, self._session, self._chained + 1, refused)

    def peek(self) -> tuple[StoredEvent, Event] | None:
        return self._next

    def close(self) -> None:
        """Stop reading (the records not taken are never read)."""
        self._records.close()

    def take(self) -> tuple[StoredEvent, Event]:
        current = self._next
        assert current is not None
        self._next = next(self._records, None)
        return current

    def crash(self) -> tuple[int, SessionCrashed] | None:
        """The seq and event of the crash that comes next, if one does."""
        if self._next is None or not isinstance(self._next[1], SessionCrashed):
            return None
        return self._next[0].seq, self._next[1]


def _chain_broken(recorder: Recorder, session: str, seq: int, refused: str) -> InconsistentLogError:
    """The damage where the chain breaks at event `seq` of `session`, named by the audit's
    own verification (read again: this is the rare path), so that it says what
    ``audit --verify`` says: changed, missing, out of order."""
    problem = verify(recorder, session).problem
    if problem is None or problem.problem in (Problem.NOT_SUMMARISED, Problem.NOT_ANCHORED):
        problem = ChainProblem(seq, Problem.CHANGED, "the record there does not verify")
    return _edited(session, problem, refused)


def check_chain(
    recorder: Recorder,
    session: str,
    refused: str,
    *,
    on_progress: Callable[[int, int | None], None] | None = None,
) -> None:
    """Verify `session`'s integrity chain as ``audit --verify`` does, before anything is made
    of it (a surface session's re-run, which reads its log otherwise): raise the damage,
    saying that `refused`, at the first event that breaks it. First, as replay does, the
    summary's count (`check_counted`): a row counting other events than the log holds is
    refused saying so, whether events were cut off or the row edited, which the chain
    cannot tell apart. A summary row naming another app or surface is no damage to what
    the events say."""
    with recorder.pinned():
        check_counted(recorder, session)
        problem = verify(recorder, session, on_progress=on_progress).problem
    if problem is not None and problem.problem is not Problem.NOT_SUMMARISED:
        raise _edited(session, problem, refused)


def _edited(session: str, problem: ChainProblem, refused: str) -> InconsistentLogError:
    return InconsistentLogError(
        session,
        problem.seq,
        f"{problem.problem.value}: {problem.detail}; its integrity chain breaks there: the log"
        f" was edited after it was written, which `semledger audit --verify` shows, and"
        f" {refused}",
    )


def logged_start(recorder: Recorder, session: str) -> SessionStarted:
    """The session's start, read as replay reads it. Raises ``UnknownSessionError`` for no
    such session, and for damage, naming the session and the event: a start that is
    missing, does not decode or is another event (``InconsistentLogError``), events all
    deleted (``CorruptSummaryError``)."""
    known_head(recorder, session)
    log = _Log(recorder, session)
    first = log.peek()
    log.close()
    if first is None or not isinstance(first[1], SessionStarted):
        raise unstarted(recorder, session)
    return first[1]


def checked_events(
    recorder: Recorder, session: str, *, refused: str = "nothing is made of it"
) -> Generator[tuple[StoredEvent, Event], None, None]:
    """The session's events, each checked as replay checks what it reads: the summary's
    count first, then a missing seq, a body that does not decode or a commit that does not
    fold onto the ones before it raise (``CorruptSummaryError``, ``InconsistentLogError``)
    as they are reached, and, once the last is taken, an event that breaks the integrity
    chain (its damage saying that `refused`). Read inside ``Recorder.pinned``."""
    check_counted(recorder, session)
    log = _Log(recorder, session)
    snapshot = SemanticsSnapshot.empty()
    try:
        while log.peek() is not None:
            record, event = log.take()
            if record.seq == 1 and not isinstance(event, SessionStarted):
                raise unstarted(recorder, session)
            if isinstance(event, Committed):
                snapshot = fold_commit(session, record.seq, snapshot, event)[0]
            yield record, event
        log.check_chain(refused)
    finally:
        log.close()


NOT_REPLAYED = "an edited log is not replayed"


def reexecute(
    recorder: Recorder,
    session: str,
    app: App[Any, Any],
    *,
    on_progress: Callable[[int, int], None] | None = None,
) -> ReplayReport:
    """Re-run `session` against `app`; the report names the first divergence, if any.
    The log is read at one moment (``Recorder.pinned``): a session still being served
    replays as far as it was. Raises ``TypeError`` unless `app` is an `App`."""
    check_log_and_session(recorder, session)
    check_app(app)
    check_progress(on_progress)
    with recorder.pinned():
        log = _Log(recorder, session)
        first = log.peek()
        try:
            try:
                report = _reexecute(recorder, session, app, on_progress, log)
            except ValueError:  # of what the start records, which may be what was edited
                log.check_chain(NOT_REPLAYED)
                raise
            log.check_chain(NOT_REPLAYED, on_progress)
        finally:
            log.close()  # inside the pinned read, whose connection its cursor is on
    started = None if first is None else first[1]
    assert isinstance(started, SessionStarted)  # else _reexecute raised
    return attrs.evolve(
        report,
        divergence=_hashing_note(report.divergence, started.params),
        nondeterministic=recorded_nondeterministic(started.params),
        effect_failure=recorded_effect_failure(started.params),
    )


def _hashing_note(divergence: Divergence | None, params: dict[str, Any]) -> Divergence | None:
    """`divergence` with a note when the recorded run may have hashed str otherwise than this
    process does (`str_hashing_note`): ahead of any that says it is the fix working when the
    recorded seed can be given again (a replay under it tells which). Of a random seed (as
    most runs' is), which every other process hashes otherwise, it is a caveat after the
    others, and none where the recorded failure no longer happens: there it would be on
    every check of a fix, which no run can tell apart from the hashing."""
    recorded = params.get(STR_HASH)
    note = None if divergence is None else str_hashing_note(recorded)
    if divergence is None or note is None:
        return divergence
    if seed_recorded(recorded):
        return _noted(divergence, note)
    return divergence if _fix_working(divergence) else _noted(divergence, note, after=True)


def _reexecute(
    recorder: Recorder,
    session: str,
    app: App[Any, Any],
    on_progress: Callable[[int, int], None] | None,
    log: _Log,
) -> ReplayReport:
    head = known_head(recorder, session)
    check_counted(recorder, session)
    first = log.peek()
    if first is None or not isinstance(first[1], SessionStarted):
        raise unstarted(recorder, session)
    log.take()
    params = first[1].params
    checks = FuzzChecks(
        recorded_reads(params), recorded_issue_check(params), recorded_violation(params)
    )
    checks.fuzzed = isinstance(params.get("fuzz"), dict)
    crashed_at_start = log.crash()
    try:
        core = SessionCore(app)
    except ApplicationError as error:  # init or the first view raised: step 0
        if crashed_at_start is not None:
            seq, crash = crashed_at_start
            return ReplayReport(session, 0, 0, _crash_divergence(0, seq, crash, error), error, 0)
        upcoming = log.peek()
        seq = first[0].seq if upcoming is None else upcoming[0].seq
        started = Divergence(0, seq, "the app to start", f"the app raised {error.__cause__!r}")
        return ReplayReport(session, 0, 0, started, error, 0)
    if crashed_at_start is not None:
        seq, crash = crashed_at_start
        started_now = Divergence(0, seq, f"the app to raise {crash.exception_type}", "it started")
        return ReplayReport(session, 0, 0, _no_longer(started_now, "crash"))
    logged_snapshot = SemanticsSnapshot.empty()
    step = inputs = commits = 0

    def compare(produced: tuple[Event, ...], at_step: int) -> Divergence | None:
        nonlocal logged_snapshot, commits
        pending = list(produced)
        while True:
            upcoming = log.peek()
            if upcoming is None or isinstance(upcoming[1], INPUT_CLASSES):
                break
            record, event = log.take()
            if on_progress is not None:
                on_progress(record.seq, head.seq)
            if not isinstance(event, COMPARED):
                continue
            if isinstance(event, Committed):
                logged_snapshot = fold_commit(session, record.seq, logged_snapshot, event)[0]
            mine = pending.pop(0) if pending else None
            if mine is None or not _same(event, mine):
                diff: tuple[str, ...] = ()
                if isinstance(event, Committed):
                    actual = core.runtime.snapshot_at(event.generation) or core.runtime.snapshot
                    diff = tuple(node_diff(logged_snapshot, actual))
                return Divergence(at_step, record.seq, *_describe_pair(event, mine), diff)
            if isinstance(event, Committed):
                commits += 1
        if pending:
            return Divergence(at_step, head.seq, "nothing more", _describe(pending[0]))
        return None

    def verdict(produced: tuple[Event, ...], at_step: int, seq: int) -> Divergence | None:
        """The outputs of `at_step` compared, then the checks after it made."""
        differs = compare(produced, at_step)
        if differs is None:
            return checks.judge(at_step, seq, checks.after(core.runtime, at_step))
        gone = checks.gone(at_step, seq, core.runtime)
        if gone is None:
            return differs
        return attrs.evolve(gone, diff=(f"{differs.expected} -> {differs.actual}", *differs.diff))

    divergence = verdict(core.initial_outputs(), 0, first[0].seq)
    checker = GenerationChecker(core.runtime.snapshot)
    redacted: list[tuple[int, int]] = []
    current: str | None = None  # the input of the step being taken, as a divergence names it
    while divergence is None and checks.reproduced is None and log.peek() is not None:
        record, event = log.take()
        if on_progress is not None:
            on_progress(record.seq, head.seq)
        step += 1
        inputs += 1
        current = _input(event)
        typed = isinstance(event, ActionRequested) and event.redacted
        before = core.runtime.snapshot
        try:
            result = core.step(event)
        except Exception as error:
            if typed:
                redacted.append((step, record.seq))
            # Not only the app's own errors: a message the log cannot record or decode ends
            # a session as a crash too, and the fuzzer saves anything raised as one.
            crashed = log.crash()
            diverged = (
                _crash_divergence(step, *crashed, error)
                if crashed is not None
                else Divergence(
                    step,
                    record.seq,
                    "the step to succeed",
                    _raised(error),
                )
            )
            # (No failure-ahead note: an app that raises where the run did not is never
            # its fix working.)
            diverged = _named(_redaction_note(diverged, redacted), step, current)
            if crashed is None:
                return ReplayReport(session, inputs, commits, diverged, error, step)
            raised = _as_logged(error, event, crashed[1])
            unrecorded = unrecorded_message(event)
            return ReplayReport(
                session, inputs, commits, diverged, raised, step, unrecorded=unrecorded
            )
        if typed and result.reached_the_app:
            redacted.append((step, record.seq))
        crashed = log.crash()
        if crashed is not None:
            seq, crash = crashed
            expected = f"the app to raise {crash.exception_type}"
            divergence = _no_longer(Divergence(step, seq, expected, "the step succeeded"), "crash")
            break
        try:
            checker.check(core.runtime.snapshot, result.outcome)
        except InvariantViolation as violation:
            divergence = checks.judge(step, record.seq, violation)
            break
        checks.took(before, event, result.outcome, bool(core.effects), step)
        divergence = verdict(result.outputs, step, record.seq)
    reproduced = checks.reproduced
    if divergence is None and reproduced is None and checks.violated is not None:
        raise ValueError(
            f"params['fuzz']['violated']: a failure at step {checks.violated.step}, past the"
            f" session's last input (step {step})"
        )
    divergence = _named(_redaction_note(divergence, redacted), step, current)
    divergence = _failure_ahead(divergence, recorder, session, checks.violated)
    at = None if reproduced is None else step
    return ReplayReport(
        session, inputs, commits, divergence, violation=reproduced, violation_step=at
    )


def _named(divergence: Divergence | None, step: int, current: str | None) -> Divergence | None:
    """`divergence` with `current`, the input of `step`, named when it is at that step."""
    if divergence is None or current is None or divergence.step != step:
        return divergence
    return attrs.evolve(divergence, input=current)
