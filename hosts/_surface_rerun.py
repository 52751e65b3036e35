"""Re-running a surface session: the logged calls issued again against a fresh surface.

A web page or a desktop application has no inputs to re-execute through app code, so a
surface session is re-run call by call: the adapter is made again from the logged config,
opened with the logged SessionInit, and every logged call is repeated in order. Each
snapshot must have the logged structural hash and each call must fail (or not) as it did;
the first call that does not is reported. It needs the adapter's refs to be issued the same
way again, which holds for the shipped adapters on the same page or application. Calls are
paced as they were logged: a page's timers run while the agent waits (a "Saving…" that
reads "Saved" two seconds on), so each call waits after the one before as long as the agent
did live, at most ``MAX_PAUSE_S`` (`_Pacing`).

A resumed session holds one segment per ``SessionStarted``: each server opened a surface of
its own, whether or not the one before closed its (it may have been killed). So each start
closes the surface of the segment before it, if its calls did not, and makes a fresh one from
that start's config. A call that found what the session drove gone (a `SurfaceGoneError`:
its browser or application killed) and does not in the re-run (it succeeds, or fails
otherwise, as a snapshot of a page with a dialog open does) is no divergence: what ended it
came from outside, and the re-run goes on from the next start, saying so. So is an open
that failed in the session (the segment ended 'could not open': its page's server was down)
and succeeds in the re-run. Events other than calls (what the MCP bridge logs of the
agent's requests, its commits) are the bridge's, not the surface's, and are skipped.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any

import attrs
import trio

from semledger.adapters import (
    AgentSurface,
    Snapshot,
    SurfaceGoneError,
    create_surface,
    snapshot_lines,
    text_digest,
)
from semledger.eventlog import Recorder, SessionStarted, SurfaceCalled, known_head
from semledger.replay import Divergence, ReplayReport


async def _call(surface: AgentSurface, call: SurfaceCalled) -> Any:
    args = call.arguments
    method = call.method
    if method == "open":
        return await surface.open(args["session"] or {})
    if method == "snapshot":
        return await surface.snapshot(
            root=args.get("root"),
            max_nodes=args.get("max_nodes"),
            interactive_only=bool(args.get("interactive_only")),
        )
    if method == "act":
        return await surface.act(
            args["action"], args.get("ref"), args.get("args"), args.get("ref2")
        )
    if method == "read":
        return await surface.read(args["kind"], args.get("ref"), args.get("name"))
    if method == "check":
        return await surface.check(args["predicate"], args["subject"], args.get("ref"))
    if method == "locate":
        return await surface.locate(args["candidate"])
    if method == "describe":
        return await surface.describe(args["ref"])
    if method == "state":
        return await surface.state()
    if method == "restore":
        return await surface.restore(args["state"])
    if method == "close":
        return await surface.close()
    return None  # screenshot and anything newer: nothing to compare


def _difference(
    event: SurfaceCalled, result: Any, error: BaseException | None, logged: list[str] | None
) -> tuple[str, str, tuple[str, ...]] | None:
    """How the repeated call differs from the logged one: (expected, actual, diff), or None;
    a snapshot's diff is of its rendering against the `logged` one, where the log holds it."""
    got = None if error is None else type(error).__name__
    if got != event.error_class:
        expected = f"fail with {event.error_class}" if event.error_class else "succeed"
        actual = f"failed with {got}: {error}" if got else "succeeded"
        return f"{event.method} to {expected}", f"{event.method} {actual}", ()
    logged_text = (event.result or {}).get("text_sha256")
    if isinstance(result, Snapshot) and (
        result.hash != event.snapshot_hash
        or (logged_text is not None and text_digest(result) != logged_text)
    ):
        replayed = result.text.split("\n")
        if logged is None:  # a log from before renderings were logged
            diff = ["the replayed snapshot (the log holds only its digests):", *replayed]
        else:
            diff = list(
                difflib.unified_diff(logged, replayed, "logged", "replayed", n=1, lineterm="")
            )
        return (
            f"snapshot with structural hash {(event.snapshot_hash or '')[:12]}"
            f" and text digest {(logged_text or '')[:12]}",
            f"snapshot with structural hash {result.hash[:12]}"
            f" and text digest {text_digest(result)[:12]}",
            tuple(diff),
        )
    return None


def _unopened_note(event: SurfaceCalled, error: BaseException | None) -> str | None:
    """Why an open that succeeded live may fail in the re-run, from outside the surface."""
    if event.method != "open" or error is None or event.error_class is not None:
        return None
    return (
        "the re-run could not open what the session opened: a page whose server is not"
        " running, or an application that is not installed here, fails here, not what it"
        " does; start it and replay again"
    )


def _sent_masked(event: SurfaceCalled) -> bool:
    """Whether the log masked what the redacted call `event` sent the page: a read whose
    answer alone was redacted sent what the re-run sends, so it explains no divergence."""
    return event.method == "act" and event.arguments.get("action") not in ("read", "evaluate")


def _redaction_note(redacted: int | None, event: SurfaceCalled) -> str | None:
    if event.arguments.get("redacted"):
        return "this call's text was redacted in the log"
    if redacted is None:
        return None
    return (
        f"call {redacted} typed text the log redacted (masked, one bullet a character, or a"
        " key press): the page may have answered it differently"
    )


def _config(started: SessionStarted, session: str, seq: int) -> dict[str, Any]:
    """How the surface of the segment `started` begins was made (its logged config)."""
    if not started.drives_a_surface:
        raise ValueError(f"session {session!r} was resumed at log seq {seq} as an app session")
    made: dict[str, Any] = started.params.get("config") or {"adapter": started.surface}
    return made


def _gone_errors(cls: type[BaseException] = SurfaceGoneError) -> set[str]:
    """The names of `SurfaceGoneError` and of its subclasses (an adapter's own, once
    imported)."""
    return {cls.__name__}.union(*(_gone_errors(sub) for sub in cls.__subclasses__()))


def _ended_outside(
    event: SurfaceCalled, error: BaseException | None, call: int, seq: int
) -> str | None:
    """Why `event`, which found what the logged session drove gone, found it there in the
    re-run, in words; None unless it did both. The re-run's call may fail otherwise (a
    snapshot of a page with a dialog open fails with a DialogError): what the live call
    would have answered, had nothing ended the session from outside, cannot be known."""
    if event.error_class is None or event.error_class not in _gone_errors():
        return None
    if isinstance(error, SurfaceGoneError):
        return None  # gone in the re-run too: compared as any failure is
    otherwise = (
        "" if error is None else f", and the call failed with {type(error).__name__} ({error})"
    )
    return (
        f"call {call} (log seq {seq}, {event.method}) found what the session drove gone"
        f" ({event.error_message}); in the re-run it was there{otherwise}: what ended it from"
        " outside (a browser that crashed, a kill) cannot be repeated, and the re-run went on"
        " from the session's next start, if any"
    )


def _opened_here(
    event: SurfaceCalled, error: BaseException | None, call: int, seq: int
) -> str | None:
    """Why `event`, an open that failed in the session (its page's server was not running,
    say: the segment ended 'could not open', and the session was served again), opened in
    the re-run, in words; None unless it did both."""
    if event.method != "open" or event.error_class is None or error is not None:
        return None
    return (
        f"call {call} (log seq {seq}, open) could not open in the session"
        f" ({event.error_message}); in the re-run it opened: what kept it from opening (a page"
        " whose server was not running, an application not installed) came from outside, and"
        " the re-run went on from the session's next start, if any"
    )


MAX_PAUSE_S = 30.0
"""The longest a re-run waits between two calls, however long the agent waited."""


@attrs.define
class _Pacing:
    """When a segment's calls are made again: each as long after the re-run's call before
    as the agent waited live.

    A call is logged as it ends, so the gap between two calls' times is the agent's wait
    and the later call's own time. Waiting the whole gap, then making the call, added every
    call's time to the re-run: after twenty clicks a page showing the seconds since it
    loaded read 9.2 where the agent had read 5.6. So the call's own time is taken off the
    gap, as long as the re-run's last call of its kind in the segment took, and never longer
    than the time from the event logged before it (the live call started after that): the
    re-run falls behind only where a call takes longer than the last of its kind did, not
    at every call. A segment starts afresh: another surface may take another time."""

    since: float | None = None  # when the latest event was logged; None: no call yet
    last: tuple[float, float] = (0.0, 0.0)  # the last call: its logged time, its end here
    took: dict[tuple[str, object], float] = attrs.Factory(dict)  # a kind of call: its time
    began: float = 0.0  # when the call being made began here

    def restart(self) -> None:
        """At a segment's start: its first call is made at once."""
        self.since = None
        self.took.clear()

    def logged(self, at: float) -> None:
        """An event other than a call was logged at `at`."""
        if self.since is not None:
            self.since = at

    async def wait(self, at: float, kind: tuple[str, object]) -> None:
        """Until the call logged at `at` is due, then take its start."""
        if self.since is not None:
            logged, ended = self.last
            own = min(at - self.since, self.took.get(kind, 0.0))
            await trio.sleep_until(ended + min(max(0.0, at - logged - own), MAX_PAUSE_S))
        self.began = trio.current_time()

    def made(self, at: float, kind: tuple[str, object]) -> None:
        """The call logged at `at` has been made again."""
        ended = trio.current_time()
        self.took[kind] = ended - self.began
        self.last = (at, ended)
        self.since = at


async def rerun_surface(
    recorder: Recorder,
    session: str,
    *,
    config: dict[str, Any] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> ReplayReport:
    """Re-run a logged surface session; the report names the first call that differs.

    `config`, when given, makes the surface of every segment instead of the logged config."""
    head = known_head(recorder, session)
    records = recorder.events(session)
    first, started = next(records)
    if not isinstance(started, SessionStarted) or not started.drives_a_surface:
        raise ValueError(f"session {session!r} is not a surface session")
    surface = create_surface(config or _config(started, session, first.seq))
    calls = 0
    closed = False
    ended = False  # the logged session ended in this segment as the re-run's did not
    unrepeated: list[str] = []
    lines: list[str] | None = None  # the rendering of the last snapshot logged
    redacted: int | None = None  # the first call whose text the log redacted
    pacing = _Pacing()
    try:
        for record, event in records:
            if on_progress is not None:
                on_progress(record.seq, head.seq)
            if isinstance(event, SessionStarted):
                lines = None
                pacing.restart()
                ended = False
                made = config or _config(event, session, record.seq)
                if not closed:
                    closed = True
                    await surface.close()
                surface = create_surface(made)
                closed = False
                continue
            if not isinstance(event, SurfaceCalled) or ended:
                pacing.logged(record.at)
                continue
            calls += 1
            kind = (event.method, event.arguments.get("action"))
            await pacing.wait(record.at, kind)
            error: BaseException | None = None
            result: Any = None
            try:
                result = await _call(surface, event)
            except Exception as raised:
                error = raised
            pacing.made(record.at, kind)
            closed = closed or event.method == "close"
            if event.arguments.get("redacted") and redacted is None and _sent_masked(event):
                redacted = calls
            if event.method == "snapshot" and event.error_class is None:
                lines = snapshot_lines(event.result, lines)
            outside = _ended_outside(event, error, calls, record.seq) or _opened_here(
                event, error, calls, record.seq
            )
            if outside is not None:
                unrepeated.append(outside)
                ended = closed = True
                await surface.close()
                continue
            difference = _difference(event, result, error, lines)
            if difference is not None:
                expected, actual, diff = difference
                note = _unopened_note(event, error) or _redaction_note(redacted, event)
                divergence = Divergence(calls, record.seq, expected, actual, diff, note)
                return ReplayReport(
                    session, calls, calls, divergence, surface=True, unrepeated=tuple(unrepeated)
                )
    finally:
        if not closed:
            await surface.close()
    return ReplayReport(
        session, calls, calls, None, surface=True, unrepeated=tuple(unrepeated)
    )
