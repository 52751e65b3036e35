"""Log-served reads: `read_semantics` for any session at any generation, without app code,
from the journal its log holds (`semledger.actors.logged_journal`)."""

from __future__ import annotations

from semledger.actors import check_recorder, logged_event, logged_journal
from semledger.actors._journal import logged_read
from semledger.eventlog import (
    Committed,
    Recorder,
    SessionStarted,
    SurfaceCalled,
    check_counted,
    known_head,
    session_start,
    topic_of,
    unstarted,
)
from semledger.runtime import Full, Journal, ReadResult
from semledger.runtime._actions import check_since


class UnknownGenerationError(LookupError):
    """Raised when a session never reached the generation asked for."""


class SurfaceSessionError(LookupError):
    """Raised when a read is asked of a session that drove a surface (a web page, a desktop
    application) and has no generation: a surface session logs the generations its agent
    was shown over MCP, and none was (no call was made, or the calls came through the
    Python API). `called` says whether the surface was called beyond its open and close."""

    def __init__(self, message: str, *, called: bool) -> None:
        super().__init__(message)
        self.called = called


def _last_generation(recorder: Recorder, session: str) -> int:
    """The session's last committed generation; raises unless it exists and commits
    generations."""
    record = recorder.last_of(session, topic_of(Committed))
    if record is None:
        opening = list(recorder.events(session, start=1, stop=2))
        if not opening:
            known_head(recorder, session)  # raises: an unknown name, or all events deleted
            raise unstarted(recorder, session)  # its later events are there
        first = opening[0][1]
        if isinstance(first, SessionStarted) and first.drives_a_surface:
            raise _no_generation(recorder, session)
        return 0
    last = logged_event(record)
    assert isinstance(last, Committed)
    return last.generation


def _no_generation(recorder: Recorder, session: str) -> SurfaceSessionError:
    """Why the surface session `session`, which committed no generation, has none to read."""
    called = any(
        isinstance(event, SurfaceCalled) and event.method not in ("open", "close")
        for _, event in recorder.events(session)
    )
    if called:
        why = (
            "its log holds the surface's calls but no generation an agent was shown over"
            " MCP, so there is nothing to read"
        )
    else:
        why = (
            "no read or action was made in it, so it has no generation yet (a surface"
            " session has the generations its agent was shown over MCP to read)"
        )
    return SurfaceSessionError(f"surface session {session!r}: {why}", called=called)


def check_log_and_session(recorder: object, session: object) -> None:
    """Raise ``TypeError`` unless `recorder` is a recorder and `session` a name: a path
    given for the one failed deep inside, and a name of None was "no session None"."""
    check_recorder(recorder)
    if not isinstance(session, str):
        raise TypeError(f"session: expected a str, got {type(session).__name__} {session!r:.80}")


def check_progress(on_progress: object) -> None:
    """Raise ``TypeError`` unless `on_progress` is None or a function: called only once a
    thousand events were read, or once the last was, it raised "'int' object is not
    callable" after the work was done."""
    if on_progress is not None and not callable(on_progress):
        raise TypeError(
            "on_progress: expected a function called as on_progress(done, total), or None,"
            f" got {type(on_progress).__name__} {on_progress!r:.80}"
        )


def fold(
    recorder: Recorder, session: str, *, until: int | None = None, since: int | None = None
) -> Journal:
    """The journal as of generation `until` (default: the last), which answers
    `read_semantics(since)` as the live runtime did then.

    Folding starts at the latest read checkpoint that still lets the journal answer
    `since` as the live one did (at or before `since`, when a delta from it was possible)
    and applies the logged deltas after it: a read costs the commits since that
    checkpoint, not the whole session. The log is read at one moment (``Recorder.pinned``).
    Raises ``TypeError`` unless `until` and `since` are None or ints, ``ValueError`` for
    either out of 0 to 2**64-1 (as ``Exact`` does), and `UnknownGenerationError` for a
    generation the session never reached (0 too: a session's first commit is generation 1).
    """
    return _checked_fold(recorder, session, until, since, "until")


def _checked_fold(
    recorder: Recorder, session: str, until: int | None, since: int | None, name: str
) -> Journal:
    """`fold`, naming `until` as its caller calls it (`name`) when it refuses it."""
    _check_arguments(recorder, session, until, since, name)
    with recorder.pinned():
        until = _until(recorder, session, until)
        return logged_journal(recorder, session, until=until, since=since)


def _check_arguments(
    recorder: Recorder, session: str, until: int | None, since: int | None, name: str
) -> None:
    """Refuse a read's or fold's arguments before the log is read: a recorder, a session
    name, generations in range (`until` named `name`), and no generation 0."""
    check_log_and_session(recorder, session)
    check_since(since)
    check_since(until, name)
    if until == 0:
        raise UnknownGenerationError(
            f"session {session!r} has no generation {until}: its first commit is generation 1"
        )


def _until(recorder: Recorder, session: str, until: int | None) -> int:
    """The generation asked for (None: the last), once the session is known to reach it."""
    last = _last_generation(recorder, session)
    check_counted(recorder, session)
    if session_start(recorder, session) is None:
        raise unstarted(recorder, session)
    if until is None:
        return last
    if until > last:
        raise UnknownGenerationError(f"session {session!r} reached generation {last}, not {until}")
    return until


def read_at(
    recorder: Recorder, session: str, *, generation: int | None = None, since: int | None = None
) -> ReadResult:
    """What `read_semantics(since)` answered when the session was at `generation` (or last).

    A read since that generation or the one before is answered from its commit alone (the
    delta logged with it), without folding the tree."""
    _check_arguments(recorder, session, generation, since, "generation")
    with recorder.pinned():
        until = _until(recorder, session, generation)
        if since is not None and until - 1 <= since <= until:
            read = logged_read(recorder, session, until=until, since=since)
            if read is not None:
                return read
        return logged_journal(recorder, session, until=until, since=since).read(since)


def full_at(recorder: Recorder, session: str, generation: int | None = None) -> Full:
    """The Full read of `session` at `generation` (default: its last), from the log alone;
    raises `UnknownSessionError` or `UnknownGenerationError`."""
    result = read_at(recorder, session, generation=generation)
    assert isinstance(result, Full)
    return result
