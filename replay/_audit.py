"""The audit: every `perform_action` a session received, and what became of it."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

import attrs

from semledger.eventlog import (
    INPUT_CLASSES,
    ActionReceipt,
    ActionRejected,
    ActionRequested,
    AgentConnected,
    CallRefused,
    ChainReport,
    Committed,
    DiagnosticsDispatched,
    EffectCompleted,
    EffectFailed,
    EffectStarted,
    EndedBy,
    Event,
    EventLogError,
    Head,
    MalformedRowError,
    Recorder,
    SessionCrashed,
    SessionEnded,
    SessionResumed,
    SessionStarted,
    StoredEvent,
    SurfaceCalled,
    UnknownSessionError,
    checked_end,
    gap,
    not_a_start,
    past_end,
    repeated,
    topic_of,
    twice,
    uncounted_gap,
    verify_log,
)
from semledger.runtime import ErrorCode, parse_u64

from ._reads import check_log_and_session, check_progress

_REFUSED = topic_of(CallRefused)


@attrs.frozen
class Damage:
    """An event of a session the audit could not take into account."""

    seq: int
    what: str
    """What is wrong with it: ``cannot be read: <why>``, ``is missing: <where>``, ``is
    not counted: <why>`` (the log's summary counts fewer events than the log holds),
    ``answers request #<id>, <why not>`` (an answer to no request awaiting one), ``commits
    generation <g> after generation <h>`` or ``says generation <g>, its delta makes …`` (the
    first commit that does not make the next generation: a log rewritten with its chain, an
    anchor aside, shows only here), ``follows the session's end at event <seq> …`` (the
    first event logged past an end where nothing logs one: `past_end`; the session stands
    at that end), or, of event 1, ``is a <topic>, not the SessionStarted a session begins
    with``."""


class UnreadableEventError(EventLogError):
    """Raised by `audit` when events of the session do not decode, are missing, are more
    than the log's summary counts, answer no request awaiting an answer, commit a generation
    that does not follow the one before, or follow its end where nothing logs them (a
    damaged log).

    The audit goes on past each: ``report`` is the whole audit of the events that are
    there and decode (``entries`` its entries), and ``damage`` names each that is not, in
    order; ``seq`` is the first one's.
    """

    def __init__(self, session: str, damage: list[Damage], report: AuditReport):
        first, *others = damage
        more = ""
        if others:
            seqs = ", ".join(str(d.seq) for d in others[:5]) + (", …" if len(others) > 5 else "")
            more = f" (damaged too: event{'s' if len(others) > 1 else ''} {seqs})"
        super().__init__(f"event {first.seq} of session {session!r} {first.what}{more}")
        self.seq = first.seq
        self.damage = damage
        self.report = report
        self.entries = report.entries


@attrs.frozen
class AuditEntry:
    request_id: int | None
    """None for a call refused for its arguments, which the session never took."""
    seq: int
    at: float
    target: Any
    """Wire JSON as logged: an object; for a refused call, whatever was sent (``{}`` for
    nothing, and the part named in `unsent`), like `action` and `precondition`."""
    action: Any
    precondition: Any
    generation: int
    """The generation the request was judged at: a receipt's `before`; for a rejection, the
    one current when it was answered (a served surface is read afresh, and its changes
    committed, before a request is checked against it); else the one current when it
    arrived."""
    outcome: str
    """``"receipt"``, an error code, or ``"crashed"`` / ``"unanswered"``, or
    ``"unreadable"`` when an event after the request that may have been its answer cannot
    be read or is missing."""
    before: int | None = None
    after: int | None = None
    pending_work: bool | None = None
    details: dict[str, Any] = attrs.field(factory=dict)
    """Of a call that was not carried out: the error's details, and ``message``, why."""
    redacted: bool = False
    unsent: tuple[str, ...] = ()
    """Of a refused call: which of ``target``, ``action`` and ``precondition`` it did not
    send (each then ``{}``), so that one not sent is told from one sent as ``{}``."""
    unread: bool = False
    """The request's own event cannot be read or is missing: its target, action and
    precondition are unknown (None), `seq` is the damaged event's, and the rest comes from
    its answer. With no request id, a refused call whose event cannot be read: its outcome
    is ``"unreadable"`` too."""
    target_node: str | None = None
    """Of a target by node id: what that node was known by (`known_as`) in the tree the
    request was judged at (`generation`: a served surface's bridge reads it after the
    request came), or of one never answered (or a call refused) in the tree it came to;
    None for another target, or a node id that tree did not hold."""

    def to_json(self) -> dict[str, Any]:
        out = attrs.asdict(self)
        for key in ("generation", "before", "after"):
            if out[key] is not None:
                out[key] = str(out[key])
        return out


@attrs.frozen
class Incident:
    """What befell a session's application apart from the agent's calls: an effect that
    failed, which the app gets no message for; one still running when the session ended,
    or when its server stopped without logging an end, whose message never came; the
    crash that ended the session; a server that stopped without logging an end (killed,
    say); a server taking the session up again from its log, and each effect it started
    again."""

    seq: int
    at: float
    generation: int
    """The generation current when it happened."""
    kind: str
    """``"effect_failed"``, ``"effect_unfinished"``, ``"crashed"``, ``"stopped"``,
    ``"resumed"`` or ``"effect_restarted"``."""
    error: str
    """The effect's error as logged (``Type: message``), how the session ended (or its
    server stopped) while an effect ran, the crashed exception's type, what may have become
    of the answers of a server that stopped, or what a resume did."""
    effect_id: int | None = None
    effect: str | None = None
    """The effect's name."""
    traceback: str | None = None
    """The crash's or the failed effect's traceback as logged."""
    answers_from: int | None = None
    """Of ``"stopped"`` (`seq` the last event its server logged): the event (an entry's
    `seq`) of the first call that server answered. An answer is logged before it is sent,
    so the log cannot tell which of those from there to `seq` reached the agent. None when
    it answered none."""

    def to_json(self) -> dict[str, Any]:
        return {**attrs.asdict(self), "generation": str(self.generation)}


@attrs.frozen
class Connection:
    """An agent's client that began talking to the session: who it said it was."""

    seq: int
    at: float
    client: Any
    """``clientInfo`` as it sent it: ``{"name", "version"}``, or anything."""
    protocol_version: str | None
    transport: str
    peer: str | None
    resumed: bool
    """It came back with the session id alone (see ``AgentConnected.resumed``)."""

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)


@attrs.frozen
class Ending:
    """How the session stands at the end of the log: ended (for now, or for good), crashed,
    open, or unknown. Its last event says it, as it does the session's summary: an end
    followed by anything (a resume, a new segment's start) is an end no longer."""

    state: str
    """``"ended"``, ``"crashed"``, ``"open"`` (no end recorded: it is being served, or its
    server stopped without one), or ``"unknown"`` (its last event cannot be read or is
    missing)."""
    seq: int
    """The end's event; of an open session its last one; of an unknown one the damaged."""
    at: float | None
    """When `seq` was logged; None for an event that is missing or whose time is malformed."""
    reason: str | None = None
    """The end's reason, the crashed exception's type, or (unknown) ``cannot be read`` or
    ``is missing``."""
    final: bool | None = False
    """Ended for good (by its HTTP client, its operator or the fuzzer): no server takes it
    up again. None when how the session stands is unknown."""
    by: EndedBy | None = None
    """Of an ended session: who ended it (`SessionEnded.by`)."""
    step: int | None = None
    """Of a crash: the input it crashed at, as replay numbers its steps (0: as it started)."""
    served: bool | None = None
    """Of an open session: whether a server is serving it now (``Recorder.served``); None
    when that cannot be told here (a copy of the log has no claims beside it), or the
    session is not open."""

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)


@attrs.frozen
class AuditReport:
    """What `audit_report` found of a session; ``audit --json`` names `entries` ``actions``
    and `ending` ``end``."""

    entries: list[AuditEntry]
    """Every `perform_action`, as `audit` returns them."""
    incidents: list[Incident]
    """Every effect that failed or never finished, and the crash, in order."""
    diagnostics_inputs: int = 0
    """Inputs sent through the diagnostics tools (raw pointer events, commands), which are
    no `perform_action` and are not in `entries`: what changed generations between them."""
    connections: list[Connection] = attrs.field(factory=list)
    """Each agent client that connected, in order (a resumed session has one a run)."""
    ending: Ending = Ending("unknown", 1, None, "is missing", final=None)
    """How the session stands at the end of the log."""
    adapter: str | None = None
    """The adapter a surface session drove, as its start names it; None for an app's."""
    redact_passwords: bool | None = None
    """Whether the log masks the passwords typed in the session (``--log-passwords`` keeps
    them), as its start records it (a resume under the other policy is refused); None if
    its start cannot be read."""
    fuzzed: bool = False
    """A fuzz counterexample (its start's params hold ``fuzz``): the texts it logs, any
    passwords among them, are the fuzzer's own, kept in clear for replay."""


def audit(recorder: Recorder, session: str) -> list[AuditEntry]:
    """Every action request in order, paired with its receipt or rejection (`audit_report`
    has the rest of the audit)."""
    return audit_report(recorder, session).entries


def audit_report(
    recorder: Recorder,
    session: str,
    *,
    on_progress: Callable[[int, int], None] | None = None,
) -> AuditReport:
    """Every action request in order, paired with its receipt or rejection; what befell the
    application (`Incident`); who connected; how many inputs came through the diagnostics
    tools; how the session stands at the end of the log (`Ending`).

    ``on_progress(seq, head)`` is called every thousand events read and after the last, with
    the seq of the one just read and the session's last.

    A surface session served over MCP logs its requests as an app session does (the bridge's
    ``LoggedSurfaceHost``), and they are its entries; the surface calls that carried them
    out are not. One driven through the Python API (``LoggedSurface`` alone) has no
    requests: each of its ``act`` calls is an entry instead, its target the ref, its outcome
    ``"ok"`` or the error class, and its generation the number of snapshots taken before it.

    The log is read at one moment (``Recorder.pinned``), however much is appended meanwhile."""
    check_log_and_session(recorder, session)
    check_progress(on_progress)
    with recorder.pinned():
        return _audit(recorder, session, on_progress)


_PROGRESS_EVERY = 1000
"""Events read between two calls of `audit_report`'s ``on_progress``: a call for each
would slow a long audit down, a progress bar being redrawn at each."""


def _audit(
    recorder: Recorder, session: str, on_progress: Callable[[int, int], None] | None
) -> AuditReport:
    head = recorder.head(session)
    if head is None:
        raise _all_gone(recorder, session)
    requested = _has_requests(recorder, session)
    summary = recorder.summary(session)
    entries: list[AuditEntry] = []
    incidents: list[Incident] = []
    effects: dict[int, str] = {}
    running: set[int] = set()
    diagnostics = 0
    connections: list[Connection] = []
    damage: list[Damage] = []
    open_requests: dict[int, int] = {}
    names: dict[object, str] = {}  # node id (as on the wire): what it is known by
    # Open request id: its target's name at each generation since it came, as it changed.
    labels: dict[int, list[tuple[int, str | None]]] = {}
    answered: dict[int, int] = {}  # request id: the seq of its answer
    generation = 0
    committed = 0  # the generation of the last commit
    surface_calls = 0
    inputs = 0
    ending: Ending | None = None
    adapter: str | None = None
    redact_passwords: bool | None = None
    fuzzed = False
    last: tuple[StoredEvent, Event | None] | None = None
    run = 0  # the first entry of the server's run being read
    # The end the events read so far stand at, and whether events past it were named.
    closed: tuple[int, SessionEnded | SessionCrashed] | None = None
    past = False
    counted = None if summary is None else summary.events
    for read, (record, event) in enumerate(_readable(recorder, session, damage, counted), 1):
        if on_progress is not None and read % _PROGRESS_EVERY == 0:
            on_progress(record.seq, head.seq)
        inputs += isinstance(event, INPUT_CLASSES)
        stopped = _stopped_before(last, record, event)
        if stopped is not None:
            incidents.extend(_stopped(stopped, generation, running, effects, entries[run:]))
            running.clear()
        if closed is not None:
            why = _past(closed, last, record, event)
            if why is None:
                closed = None
            elif not past:
                damage.append(Damage(record.seq, why))
                past = True
        last = record, event
        if isinstance(event, ActionReceipt | ActionRejected):
            generation = _current(event, generation)
        if event is None:
            at = None if math.isnan(record.at) else record.at  # (its time is malformed)
            ending = Ending("unknown", record.seq, at, "cannot be read", final=None)
            if record.topic == _REFUSED:  # its row stays, with what is known of it
                entries.append(_unread_refused(record, generation))
        elif isinstance(event, Committed):
            unfollowed = None if damage else _unfollowed(event, committed)  # (after: expected)
            if unfollowed is not None:
                damage.append(Damage(record.seq, unfollowed))
            committed = event.generation
            generation = event.generation
            _follow(names, event.delta)
            for request_id, named in labels.items():
                _relabel(named, generation, names, entries[open_requests[request_id]].target)
        elif isinstance(event, ActionRequested):
            open_requests[event.request_id] = len(entries)
            known = _node_named(names, event.target)
            labels.pop(event.request_id, None)
            if isinstance(event.target, dict) and event.target.get("kind") == "node_id":
                labels[event.request_id] = [(generation, known)]
            entries.append(
                AuditEntry(
                    event.request_id,
                    record.seq,
                    record.at,
                    event.target,
                    event.action,
                    event.precondition,
                    generation,
                    "unanswered",
                    redacted=event.redacted,
                    target_node=known,
                )
            )
        elif isinstance(event, ActionReceipt) and event.request_id in open_requests:
            answered[event.request_id] = record.seq
            index = open_requests.pop(event.request_id)
            entries[index] = attrs.evolve(
                entries[index],
                generation=event.before,
                outcome="receipt",
                before=event.before,
                after=event.after,
                pending_work=event.pending_work,
                target_node=_named_at(
                    labels.pop(event.request_id, None), event.before, entries[index].target_node
                ),
            )
        elif isinstance(event, ActionRejected) and event.request_id in open_requests:
            answered[event.request_id] = record.seq
            index = open_requests.pop(event.request_id)
            entries[index] = attrs.evolve(
                entries[index],
                generation=generation,
                outcome=event.code,
                details=_why(event),
                target_node=_named_at(
                    labels.pop(event.request_id, None), generation, entries[index].target_node
                ),
            )
        elif isinstance(event, ActionReceipt | ActionRejected) and damage:
            entries.append(_unread_request(damage[-1].seq, record.at, event, generation))
        elif isinstance(event, ActionReceipt | ActionRejected):
            damage.append(Damage(record.seq, _unasked(event.request_id, answered)))
        elif isinstance(event, CallRefused):
            entry = _refused_entry(record.seq, record.at, event, generation)
            entries.append(attrs.evolve(entry, target_node=_node_named(names, entry.target)))
        elif isinstance(event, SurfaceCalled) and not requested:
            surface_calls += 1
            if event.method == "snapshot" and event.error_class is None:
                generation += 1
            elif event.method == "act":
                entries.append(_surface_entry(record.seq, record.at, surface_calls, event,
                                              generation))
        elif isinstance(event, EffectStarted):
            effects[event.effect_id] = event.name
            running.add(event.effect_id)
        elif isinstance(event, DiagnosticsDispatched):
            diagnostics += 1
        elif isinstance(event, AgentConnected):
            connections.append(
                Connection(
                    record.seq,
                    record.at,
                    event.client,
                    event.protocol_version,
                    event.transport,
                    event.peer,
                    event.resumed,
                )
            )
        elif isinstance(event, EffectCompleted):
            running.discard(event.effect_id)
        elif isinstance(event, SessionStarted) and record.seq == 1:
            redact_passwords = event.redact_passwords
            fuzzed = "fuzz" in event.params
            if event.drives_a_surface:
                adapter = str(event.params["adapter"])
        elif isinstance(event, SessionStarted):
            # A surface session is resumed as a segment of its own, with its own start.
            run = len(entries)
            labels.clear()  # no answer comes for a request of a run before
            incidents.append(
                Incident(record.seq, record.at, generation, "resumed", _RESUMED)
            )
        elif isinstance(event, SessionResumed):
            run = len(entries)
            labels.clear()
            incidents.append(
                Incident(record.seq, record.at, generation, "resumed", _RESUMED)
            )
            for effect_id in event.restarted:
                running.add(effect_id)
                incidents.append(
                    Incident(
                        record.seq,
                        record.at,
                        generation,
                        "effect_restarted",
                        _RESTARTED,
                        effect_id=effect_id,
                        effect=effects.get(effect_id),
                    )
                )
        elif isinstance(event, SessionEnded):
            closed = checked_end(record.seq, record.version, event)
            ending = Ending(
                "ended", record.seq, record.at, event.reason, final=event.final, by=event.by
            )
            why = f"still running when the session ended: {event.reason}"
            incidents.extend(_unfinished(record, generation, running, effects, why))
            running.clear()
        elif isinstance(event, EffectFailed):
            running.discard(event.effect_id)
            incidents.append(
                Incident(
                    record.seq,
                    record.at,
                    generation,
                    "effect_failed",
                    event.error,
                    effect_id=event.effect_id,
                    effect=effects.get(event.effect_id),
                    traceback=event.traceback,
                )
            )
        elif isinstance(event, SessionCrashed):
            closed = checked_end(record.seq, record.version, event)
            ending = Ending("crashed", record.seq, record.at, event.exception_type, step=inputs)
            for index in open_requests.values():
                entries[index] = attrs.evolve(entries[index], outcome="crashed")
            open_requests.clear()
            labels.clear()
            incidents.append(
                Incident(
                    record.seq,
                    record.at,
                    generation,
                    "crashed",
                    event.exception_type,
                    traceback=event.traceback,
                )
            )
            why = "still running when the application crashed"
            incidents.extend(_unfinished(record, generation, running, effects, why))
            running.clear()
    if on_progress is not None:
        on_progress(head.seq, head.seq)  # read to its end
    # Anything after an end takes it back, but what nothing logs there (damage, named).
    if ending is None or (ending.seq != head.seq and closed is None):
        served = recorder.served([session])[session]
        ending = Ending("open", head.seq, record.at, served=served)
    if summary is not None and summary.events > head.seq:  # its tail was cut
        ending = Ending("unknown", head.seq + 1, None, "is missing", final=None)
        damage.append(
            Damage(
                head.seq + 1,
                f"is missing: the log's summary counts {summary.events} events, the log holds"
                f" {head.seq}",
            )
        )
    if damage:
        for index in open_requests.values():
            if damage[-1].seq > entries[index].seq:
                entries[index] = attrs.evolve(entries[index], outcome="unreadable")
    if (
        summary is not None
        and summary.events < head.seq  # they are all there and read
        and uncounted_gap(recorder, session, summary.events) is None  # not a gap named above
    ):
        damage.append(
            Damage(
                summary.events + 1,
                f"is not counted: the log's summary counts {summary.events} events, the log"
                f" holds {head.seq} (events were added, or the row edited)",
            )
        )
        damage.sort(key=lambda d: d.seq)
    if ending.state == "open" and not ending.served:
        incidents.extend(
            _stopped(record, generation, running, effects, entries[run:], ending.served)
        )
    report = AuditReport(
        entries, incidents, diagnostics, connections, ending, adapter, redact_passwords, fuzzed
    )
    if damage:
        raise UnreadableEventError(session, damage, report)
    return report


def known_as(semantic_id: object, role: object, label: object) -> str:
    """What a node is known by: its semantic id, or if it has none its role and label
    (``button 'Remove first'``), or its role alone."""
    if isinstance(semantic_id, str) and semantic_id:
        return semantic_id
    said = str(getattr(role, "value", role))
    return f"{said} {label!r}" if isinstance(label, str) and label else said


def _follow(names: dict[object, str], delta: object) -> None:
    """Update `names` (`known_as` by node id) with a commit's delta: only the nodes it
    changed, so the audit's cost grows with the events, not with the tree times them."""
    if not isinstance(delta, dict):
        return
    for node_id in delta.get("removed") or ():
        names.pop(node_id, None)
    for node in delta.get("upserted") or ():
        if isinstance(node, dict):
            names[node.get("node_id")] = known_as(
                node.get("semantic_id"), node.get("role"), node.get("label")
            )


def _relabel(
    named: list[tuple[int, str | None]],
    generation: int,
    names: dict[object, str],
    target: object,
) -> None:
    """Add to an open request's `named` what its target is known by at the commit of
    `generation`, if that changed: a surface's bridge reads the page afresh (and commits
    what changed) after the request, and judges it against that tree."""
    known = _node_named(names, target)
    if known != named[-1][1]:
        named.append((generation, known))


def _named_at(
    named: list[tuple[int, str | None]] | None, generation: int, otherwise: str | None
) -> str | None:
    """What a request's target was known by in the tree of `generation`, the one it was
    judged at: not a later commit's (an app commits the action's result before its
    receipt). `otherwise` when its names were not followed."""
    if not named:
        return otherwise
    return next((known for at, known in reversed(named) if at <= generation), named[0][1])


def _node_named(names: dict[object, str], target: object) -> str | None:
    if isinstance(target, dict) and target.get("kind") == "node_id":
        node_id = target.get("id")
        return names.get(node_id) if isinstance(node_id, str) else None
    return None


def _has_requests(recorder: Recorder, session: str) -> bool:
    """Whether the session logged any ``ActionRequested`` (its last may be malformed: the
    walk over the events names that)."""
    try:
        return recorder.last_of(session, topic_of(ActionRequested)) is not None
    except MalformedRowError:
        return True


def _readable(
    recorder: Recorder, session: str, damage: list[Damage], counted: int | None
) -> Iterator[tuple[StoredEvent, Event | None]]:
    """The session's events in order, None for each that does not decode, and for an event
    1 that is not the session's start (taken for a run of its own, it would tell of a
    server that stopped after it); that one, and each seq missing between two that are
    there, is added to `damage`. Past the `counted` events of the session's summary, seqs
    missing after damage named already are not: an event relabelled past the end (seq 40)
    leaves such a gap, and the session never had the events it would name.

    Reading goes on after a damaged event from the one after it, so a damaged log costs
    one more lookup per damaged event, and a healthy one nothing more than its events.
    """
    start = 1

    def check(seq: int) -> bool:
        """Whether the record labelled `seq` is the next event (or one after missing ones),
        not a second record of an event read already, which is passed over."""
        if repeated(seq, start):
            damage.append(Damage(seq, twice(seq)))
            return False
        if seq != start and not (damage and counted is not None and start > counted):
            damage.append(Damage(start, f"is missing: {gap(start - 1, seq)}"))
        return True

    while True:
        try:
            for record, event in recorder.events(session, start=start):
                if not check(record.seq):
                    continue
                start = record.seq + 1
                if record.seq == 1 and not isinstance(event, SessionStarted):
                    damage.append(Damage(1, f"is {not_a_start(record.topic)}"))
                    yield record, None
                    continue
                yield record, event
            return
        except EventLogError as error:
            bad = _timeless(error) or next(recorder.read(session, start=start), None)
            if bad is None:
                raise
            check(bad.seq)
            damage.append(Damage(bad.seq, f"cannot be read: {error}"))
            start = bad.seq + 1
            yield bad, None


def _timeless(error: EventLogError) -> StoredEvent | None:
    """The record of an event whose time alone is malformed, read with no time (NaN), as
    one that cannot be read: its seq, topic and body are still there, the chain intact."""
    return error.record if isinstance(error, MalformedRowError) else None


def _unread_request(
    lost: int, at: float, answer: ActionReceipt | ActionRejected, generation: int
) -> AuditEntry:
    """The entry of a request known only from its answer (logged at `at`): its own event,
    `lost`, is damaged."""
    entry = AuditEntry(answer.request_id, lost, at, None, None, None, generation, "", unread=True)
    if isinstance(answer, ActionRejected):
        return attrs.evolve(entry, outcome=answer.code, details=_why(answer))
    return attrs.evolve(
        entry,
        generation=answer.before,
        outcome="receipt",
        before=answer.before,
        after=answer.after,
        pending_work=answer.pending_work,
    )


def _current(answer: ActionReceipt | ActionRejected, generation: int) -> int:
    """The generation current when `answer` was logged: a receipt's ``after``, the current
    one a stale rejection names; for any other rejection `generation`, the last one the
    events read so far name. A commit before it that cannot be read leaves `generation`
    behind, and the answer sets it right."""
    if isinstance(answer, ActionReceipt):
        return answer.after
    if answer.code == ErrorCode.STALE_GENERATION:
        current = parse_u64(answer.details.get("current"))
        if current is not None:
            return current
    return generation


def _unfollowed(commit: Committed, committed: int) -> str | None:
    """What is wrong with `commit`, logged after a commit of generation `committed`, if it
    does not make the next generation, by what it says or by its delta."""
    if commit.generation != committed + 1:
        return f"commits generation {commit.generation} after generation {committed}"
    # A delta read says both, as text (as ints in a log of version 1).
    made, since = commit.delta.get("to"), commit.delta.get("from")
    if made is not None and str(made) != str(commit.generation):
        return f"says generation {commit.generation}, its delta makes {made}"
    if since is not None and str(since) != str(committed):
        return f"has a delta from generation {since}, after generation {committed}"
    return None


def _unasked(request_id: int, answered: dict[int, int]) -> str:
    """What is wrong with an answer to request `request_id`, which no request awaits."""
    if request_id in answered:
        return f"answers request #{request_id} again: event {answered[request_id]} answered it"
    return f"answers request #{request_id}, which no event before it made"


_NO_END = "it logged no end (it was killed, or could not log one)"
_RESUMED = "a server took the session up again from its log"
_RESTARTED = (
    "started again as the session resumed: the outcome of its first run was never logged,"
    " so it may have run twice"
)


def _past(
    closed: tuple[int, SessionEnded | SessionCrashed],
    last: tuple[StoredEvent, Event | None] | None,
    record: StoredEvent,
    event: Event | None,
) -> str | None:
    """What is wrong with `event` (`record`), read after the end `closed` with nothing but
    events past it between them (`last` the one before), if nothing logs it there; None if
    something does, or if that cannot be told: it or the one before it cannot be read or is
    missing (that one may have been a resume), which is damage named already."""
    if event is None or last is None or last[1] is None or last[0].seq != record.seq - 1:
        return None
    return past_end(*closed, event)


def _stopped_before(
    last: tuple[StoredEvent, Event | None] | None, record: StoredEvent, event: Event | None
) -> StoredEvent | None:
    """The last event of a server's run that stopped without logging an end, if `event`
    comes after one: a resume, a surface session's new start, or its operator's end
    (``semledger end``, refused while a server serves the session; an HTTP client's
    ``DELETE`` is final too, but its server logs it). None otherwise, and when the event
    before it cannot be read or is missing: that may have been an end."""
    after_a_run = (
        isinstance(event, SessionResumed)
        or (isinstance(event, SessionStarted) and record.seq > 1)
        or (isinstance(event, SessionEnded) and event.by == "operator")
    )
    if not after_a_run or last is None:
        return None
    previous, logged = last
    if previous.seq != record.seq - 1 or logged is None:
        return None
    return None if isinstance(logged, SessionEnded | SessionCrashed) else previous


def _stopped(
    last: StoredEvent,
    generation: int,
    running: set[int],
    effects: dict[int, str],
    run: list[AuditEntry],
    served: bool | None = False,
) -> list[Incident]:
    """What is unknown of a server's run (its entries `run`) that stopped after `last`
    without logging an end: which of its answers reached the agent, and what became of
    each effect still running. `served` None: it may be serving the session still."""
    unless = ""
    if served is None:
        unless = ", unless it is serving the session still (this system cannot tell)"
    answered = next((e for e in run if e.outcome != "unanswered"), None)
    if answered is None:
        said = "it answered no call"
    else:
        said = (
            f"answers are logged before they are sent, so those logged from {_named(answered)}"
            " on may not all have reached the agent (the log cannot tell)"
        )
    stopped = Incident(
        last.seq,
        last.at,
        generation,
        "stopped",
        f"{_NO_END}{unless}; {said}",
        answers_from=None if answered is None else answered.seq,
    )
    running_why = (
        f"still running when its server stopped without logging an end{unless}: its outcome"
        " is unknown (it may or may not have run)"
    )
    return [stopped, *_unfinished(last, generation, running, effects, running_why)]


def _named(entry: AuditEntry) -> str:
    if entry.request_id is None:
        return f"the call refused at event {entry.seq}"
    return f"#{entry.request_id} (event {entry.seq})"


def _unfinished(
    record: StoredEvent, generation: int, running: set[int], effects: dict[int, str], why: str
) -> list[Incident]:
    """An incident for each effect still running as the session stopped (`record`): its
    message never came. A resumed session runs them again (or logs them lost)."""
    return [
        Incident(
            record.seq,
            record.at,
            generation,
            "effect_unfinished",
            why,
            effect_id=effect_id,
            effect=effects.get(effect_id),
        )
        for effect_id in sorted(running)
    ]


def _why(rejection: ActionRejected) -> dict[str, Any]:
    """A rejection's details with its message, as a refused call's hold theirs."""
    return {**rejection.details, "message": rejection.message}


def _unread_refused(record: StoredEvent, generation: int) -> AuditEntry:
    """The entry of a refused call whose event does not decode: when it came, nothing more."""
    return AuditEntry(
        None, record.seq, record.at, None, None, None, generation, "unreadable", unread=True
    )


def _refused_entry(seq: int, at: float, event: CallRefused, generation: int) -> AuditEntry:
    """A call the session never took: no request id; its arguments as logged, ``{}`` for a
    part not sent."""

    def part(name: str) -> Any:
        return event.arguments.get(name, {})

    unsent = tuple(p for p in ("target", "action", "precondition") if p not in event.arguments)
    return AuditEntry(
        None,
        seq,
        at,
        part("target"),
        part("action"),
        part("precondition"),
        generation,
        event.code,
        details={"message": event.message},
        redacted=event.redacted,
        unsent=unsent,
    )


def _surface_entry(
    seq: int, at: float, number: int, event: SurfaceCalled, snapshots: int
) -> AuditEntry:
    arguments = event.arguments
    args = arguments.get("args")
    action: dict[str, Any] = {"kind": arguments.get("action")}
    if isinstance(args, dict):
        action.update({k: v for k, v in args.items() if v is not None})
    target: dict[str, Any] = {"kind": "ref", "id": arguments.get("ref")}
    if arguments.get("ref2") is not None:
        target["ref2"] = arguments["ref2"]
    details: dict[str, Any] = {}
    if event.error_message is not None:
        details["message"] = event.error_message
    return AuditEntry(
        number,
        seq,
        at,
        target,
        action,
        {"kind": "surface"},
        snapshots,
        event.error_class or "ok",
        details=details,
        redacted=bool(arguments.get("redacted", False)),
    )


def _all_gone(recorder: Recorder, session: str) -> Exception:
    """What auditing `session`, which has no events, raises: damage if the log's summary
    lists it (its events were deleted), or ``UnknownSessionError``."""
    summary = recorder.summary(session)
    if summary is None or summary.events == 0:
        return UnknownSessionError(f"the log has no session {session!r}")
    what = f"is missing: the log's summary counts {summary.events} events, the log holds none"
    return UnreadableEventError(session, [Damage(1, what)], AuditReport([], []))


def verify(
    recorder: Recorder,
    session: str,
    *,
    anchor: Head | None = None,
    on_progress: Callable[[int, int | None], None] | None = None,
) -> ChainReport:
    """Check the session's integrity chain; the report names the first event that broke it,
    including a tail cut off after the last one the log's summary counts. With `anchor`,
    a head of the session recorded earlier (a report's ``head``), also a tail cut off
    after it and a rewrite that recomputed the chain. The log is read at one moment
    (``Recorder.pinned``), so a session still being written verifies as far as it was."""
    check_log_and_session(recorder, session)
    if anchor is not None and not isinstance(anchor, Head):
        kind = type(anchor).__name__
        raise TypeError(f"anchor: expected a Head (a report's head), got {kind} {anchor!r:.80}")
    check_progress(on_progress)
    with recorder.pinned():
        # One whose events are gone is reported so: the summary (or the anchor) lists it.
        anchors = None if anchor is None else {session: anchor}
        return verify_log(recorder, [session], anchors=anchors, on_progress=on_progress)[session]
