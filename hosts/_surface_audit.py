"""The agent's side of a served surface session, on the record as a runtime session keeps it.

``LoggedSurface`` logs the calls the MCP bridge makes of the surface (a ``clear`` and a
``type`` for one ``set_text``, a snapshot before and after each action); an auditor needs
what the agent asked for and what it was answered, rejections the bridge decided included.
``LoggedSurfaceHost`` wraps the bridge and logs, in the surface session's log and in order
with its calls:

- each ``perform_action`` as a runtime session does: an ``ActionRequested`` (the target,
  action and precondition in wire form, a ``set_text`` value redacted by the rule an app
  session follows, ``logged_action``, at a password in the tree the agent last read or in
  the one the bridge reads just before acting: the page may have changed on its own in
  between; on a web page, at any single-line field, `_may_become_a_password`) once the
  bridge has read that tree and before it acts, then the ``Committed`` of every generation
  the bridge produced and the ``ActionReceipt`` or ``ActionRejected``. The surface calls
  that type the text are logged once the snapshot after them shows whether the field is a
  password field (``LoggedSurface.typing_judged_later``);
- after a ``read_semantics``, the ``Committed`` of the generations it produced;
- with commits, a read checkpoint (``SemanticsTaken``) when one is due, by the rule an app
  session follows (``commit_size``);
- a ``perform_action`` whose arguments do not decode as the ``CallRefused`` a runtime
  session logs.

The outcome is written before the agent is answered, so whatever an agent was told is in the
log. Once something cannot be written, the session is over: this call and every later one
is answered ``host_closed``, as a runtime session whose log failed answers, and `failure`
says why; so it does once the surface's own session ended (its application died), and each
later call is logged with that answer: an auditor sees the agent go on. An adapter that broke
the contract (``AdapterFailedError``) crashes the session as an application that raises
crashes a runtime one: the call's ``SessionCrashed``, with the adapter's traceback, is logged
in place of its answer (the audit shows the request ``crashed``) and is the session's last
event; later calls are answered ``host_closed``, unlogged. `on_ended` hears `failure` once,
as it happens.

A resumed session's bridge goes on from the log as a recovered runtime session does: from
the last generation committed, with node ids and request ids after the last ones given out.
Its surface is a fresh one, so its first commit replaces every node: an action an agent aims
at a generation or a node from before is stale or finds no target, never another element.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import trio

from semledger.actors import (
    SessionLogError,
    answered,
    commit_size,
    committed_since,
    logged_action,
    refusal,
)
from semledger.eventlog import (
    ActionRequested,
    AgentConnected,
    Committed,
    Event,
    Recorder,
    SemanticsTaken,
    decode,
    redact_action,
    topic_of,
)
from semledger.replay import fold
from semledger.runtime import (
    JOURNAL_SIZE,
    ErrorCode,
    Precondition,
    ReadResult,
    Receipt,
    Rejection,
    SemanticsAction,
    SemanticsSnapshot,
    SetText,
    Target,
    resolve_target,
)
from semledger.runtime._wire import (
    encode_precondition,
    encode_read,
    encode_target,
)

from ._surface_host import SurfaceAgentHost

if TYPE_CHECKING:
    from semledger.adapters import LoggedSurface

__all__ = ["LoggedSurfaceHost"]


class LoggedSurfaceHost:
    """``read_semantics`` and ``perform_action`` of a bridge over `logged` (opened), logged
    through it. One call at a time: the bridge's generations before and after a call are
    that call's."""

    def __init__(
        self, logged: LoggedSurface, *, on_ended: Callable[[str], None] | None = None
    ) -> None:
        recorder, session = logged.recorder, logged.session_name
        journal = None
        last = recorder.last_of(session, topic_of(Committed))
        if last is not None:
            # The journal a bridge that never stopped would hold: what the log serves.
            commit = decode(last.topic, last.version, last.body)
            assert isinstance(commit, Committed)
            journal = fold(recorder, session, since=max(commit.generation - JOURNAL_SIZE, 0))
        next_node_id = _node_id_after(recorder, session)
        self.bridge = SurfaceAgentHost(logged, journal=journal, next_node_id=next_node_id)
        self.logged = logged
        self._lock = trio.Lock()
        self._next_request = _next_request_id(recorder, session)
        self._changed = 0
        """What a fold from the last read checkpoint applies (see `commit_size`)."""
        self._surface_ended: str | None = None
        self._on_ended = on_ended
        self._crashed = False

    @property
    def closed(self) -> bool:
        return self.bridge.closed

    @property
    def failure(self) -> str | None:
        """Why the session ended on its own, if it did: its log could not be written, its
        surface's session ended, or its adapter broke the contract."""
        return self.logged.failure or self._surface_ended

    def close(self, why: str = "the session is closed") -> None:
        self.bridge.close(why)

    async def read_semantics(self, since: int | None) -> ReadResult | Rejection:
        async with self._lock:
            was_closed = self.bridge.closed
            try:
                before = self.bridge.generation
                result = await self.bridge.read_semantics(since)
                commits = self._commits(before)
                if self._crash_to_log():
                    await self._log_crash(commits)
                elif commits:
                    with trio.CancelScope(shield=True):
                        await self.logged.append(*commits)
            except SessionLogError as error:
                return self._lost(error)
            self._noticed(was_closed)
            return result

    async def perform_action(
        self, target: Target, action: SemanticsAction, precondition: Precondition
    ) -> Receipt | Rejection:
        async with self._lock:
            was_closed = self.bridge.closed
            try:
                outcome = await self._perform(target, action, precondition)
            except SessionLogError as error:
                return self._lost(error)
            self._noticed(was_closed)
            return outcome

    async def _perform(
        self, target: Target, action: SemanticsAction, precondition: Precondition
    ) -> Receipt | Rejection:
        bridge = self.bridge
        if self.logged.failure is not None or self._crashed:
            # Nothing more can be logged (a crash is the session's last event): unlogged.
            return await bridge.perform_action(target, action, precondition)
        request_id = self._next_request
        self._next_request += 1
        aimed_at = bridge.journal.current  # the tree the agent last read, or an older one
        requested = False

        async def request(done_on: SemanticsSnapshot) -> None:
            nonlocal requested
            requested = True
            await self.logged.append(
                self._requested(request_id, target, action, precondition, aimed_at, done_on)
            )

        before = bridge.generation
        with self.logged.typing_judged_later():  # logged with the snapshot after it
            outcome = await bridge.perform_action(target, action, precondition, judged_on=request)
        if not requested:  # answered without its tree: nothing was done
            await request(bridge.journal.current)
        commits = self._commits(before)
        if self._crash_to_log():
            await self._log_crash(commits)  # the request's end, as a runtime session's crash
        else:
            with trio.CancelScope(shield=True):
                await self.logged.append(*commits, answered(request_id, outcome))
        return outcome

    def _requested(
        self,
        request_id: int,
        target: Target,
        action: SemanticsAction,
        precondition: Precondition,
        aimed_at: SemanticsSnapshot,
        done_on: SemanticsSnapshot,
    ) -> ActionRequested:
        """The request as logged: a ``set_text`` redacted if it is at a password field where
        the agent aimed it (`aimed_at`) or where it is done (`done_on`, read just before),
        since the page may have changed between the two on its own, or if the field may
        become one as it is typed into (`_may_become_a_password`)."""
        redact = self.logged.redact_passwords
        logged = logged_action(action, target, done_on, redact=redact, keep_length=False)
        if not logged.redacted:
            # keep_length=False: nothing re-types it, a re-run repeats the surface calls
            logged = logged_action(action, target, aimed_at, redact=redact, keep_length=False)
        wire, redacted = logged.wire, logged.redacted
        if redact and not redacted and self._may_become_a_password(action, target, done_on):
            wire, redacted = redact_action(wire), True
        return ActionRequested(
            request_id, encode_target(target), wire, encode_precondition(precondition), redacted
        )

    def _may_become_a_password(
        self, action: SemanticsAction, target: Target, done_on: SemanticsSnapshot
    ) -> bool:
        """Whether a ``set_text`` is typed into a field of a web page that is no password
        field yet but may become one as it is focused or typed into: any ``<input>`` (a
        page's script can set its type to ``password``; a ``<textarea>`` or an editing
        host, multiline, never is one). The request is logged before the text is typed, so
        before the page has said; the surface's ``type`` call, logged after, holds the text
        unless the field became a password field."""
        if not isinstance(action, SetText) or self.logged.kind != "web":
            return False
        node = resolve_target(target, done_on)
        return not isinstance(node, Rejection) and not node.state.multiline

    async def connected(self, connection: AgentConnected) -> None:
        """Log who connected, as a runtime session does."""
        async with self._lock:
            if not self.bridge.closed:
                try:
                    with trio.CancelScope(shield=True):
                        await self.logged.append(connection)
                except SessionLogError as error:
                    self._lost(error)

    async def refuse(self, arguments: dict[str, Any], rejection: Rejection) -> Rejection:
        """Log a ``perform_action`` refused for its `arguments`, as a runtime session does;
        answer `rejection` (also once the session is closed, when nothing more is logged)."""
        async with self._lock:
            if self.logged.failure is None and not self._crashed:
                refused = refusal(arguments, rejection, redact=self.logged.redact_passwords)
                try:
                    with trio.CancelScope(shield=True):
                        await self.logged.append(refused)
                except SessionLogError as error:
                    return self._lost(error)
            return rejection

    def _lost(self, error: SessionLogError) -> Rejection:
        """The answer to the call whose events could not be written, and to every later one."""
        self.bridge.close(f"the session ended: {error}")
        self._say_ended()
        return Rejection(ErrorCode.HOST_CLOSED, f"the session ended: {error}", {})

    def _noticed(self, was_closed: bool) -> None:
        """Note it if the bridge closed itself in this call: the surface's session ended, or
        its adapter broke the contract."""
        if not was_closed and self.bridge.closed:
            crash = self.bridge.crash
            if crash is not None:
                self._surface_ended = f"its adapter {self.logged.adapter_name!r} {crash.what}"
            else:
                self._surface_ended = f"its surface's session ended ({self.bridge.closed_reason})"
            self._say_ended()

    def _say_ended(self) -> None:
        """Tell `on_ended` why the session ended, the first time it has."""
        failure, told = self.failure, self._on_ended
        if failure is not None and told is not None:
            self._on_ended = None
            told(failure)

    def _crash_to_log(self) -> bool:
        """Whether the bridge's adapter broke the contract in this call (logged once)."""
        return self.bridge.crash is not None and not self._crashed

    async def _log_crash(self, commits: list[Event]) -> None:
        """The session's last events: `commits`, then the crash, with the adapter's
        traceback."""
        crash = self.bridge.crash
        assert crash is not None
        self._crashed = True
        with trio.CancelScope(shield=True):
            await self.logged.crashed(crash.error, *commits)

    def _commits(self, before: int) -> list[Event]:
        """The commits the bridge made after `before`, and a read checkpoint when one is
        due, as an app session logs them: a log-served read folds no more than the tree."""
        journal = self.bridge.journal
        commits: list[Event] = [*committed_since(journal, before)]
        self._changed += sum(commit_size(c) for c in commits if isinstance(c, Committed))
        current = journal.current
        if commits and self._changed >= len(current.nodes):
            checkpoint = SemanticsTaken(
                current.generation, encode_read(current.full()), self.bridge.next_node_id
            )
            commits.append(checkpoint)
            self._changed = 0
        return commits


def _node_id_after(recorder: Recorder, session: str) -> int:
    """The node id after every one the session's bridges gave out: the last read
    checkpoint's, and past any id in a commit after it (in its upserts or removals).

    Reads the commits since that checkpoint, which the checkpoint rule bounds by the size of
    the tree; all of them when it is a version-1 checkpoint, which did not say.
    """
    top, start = 0, 1
    checkpoint = recorder.last_of(session, topic_of(SemanticsTaken))
    if checkpoint is not None:
        taken = decode(checkpoint.topic, checkpoint.version, checkpoint.body)
        assert isinstance(taken, SemanticsTaken)
        if taken.next_node_id is not None:
            top, start = taken.next_node_id - 1, checkpoint.seq + 1
    topic = topic_of(Committed)
    for record in recorder.read(session, start=start):
        if record.topic == topic:
            event = decode(record.topic, record.version, record.body)
            assert isinstance(event, Committed)
            ids = [*event.delta["removed"], *(node["node_id"] for node in event.delta["upserted"])]
            top = max([top, *map(int, ids)])
    return top + 1


def _next_request_id(recorder: Recorder, session: str) -> int:
    """The request id after the last one the session logged (1 for none)."""
    record = recorder.last_of(session, topic_of(ActionRequested))
    if record is None:
        return 1
    event = decode(record.topic, record.version, record.body)
    assert isinstance(event, ActionRequested)
    return event.request_id + 1
