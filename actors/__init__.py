"""Trio actors: mailboxes, the log writer (group commit), session actors and their registry."""

from ._actor import Actor, ActorClosedError, ActorError, RequestTimeoutError
from ._apps import AppLoadError, app_location, check_app_ref, check_same_app, load_app
from ._core import (
    SessionCore,
    StepResult,
    UnsubscribedTimerError,
    commit_size,
    committed_since,
    crash_event,
    effect_failure,
    str_of,
)
from ._journal import fold_commit, logged_event, logged_journal
from ._messages import MessageCodec, MessageCodecError
from ._registry import SessionRegistry
from ._requests import LoggedAction, answered, logged_action, refusal
from ._session import (
    Close,
    Connect,
    Diagnose,
    Inspect,
    Perform,
    Read,
    Refuse,
    SessionActor,
    SessionConflictError,
    SessionCrashedError,
    SessionDivergedError,
    SessionEndedError,
    SessionLogError,
    SessionMismatchError,
    check_session_name,
)
from ._writer import LogWriter, Pending, check_recorder

__all__ = [
    "Actor",
    "ActorClosedError",
    "ActorError",
    "AppLoadError",
    "Close",
    "Connect",
    "Diagnose",
    "Inspect",
    "LogWriter",
    "LoggedAction",
    "MessageCodec",
    "MessageCodecError",
    "Pending",
    "Perform",
    "Read",
    "Refuse",
    "RequestTimeoutError",
    "SessionActor",
    "SessionConflictError",
    "SessionCore",
    "SessionCrashedError",
    "SessionDivergedError",
    "SessionEndedError",
    "SessionLogError",
    "SessionMismatchError",
    "SessionRegistry",
    "StepResult",
    "UnsubscribedTimerError",
    "answered",
    "app_location",
    "check_app_ref",
    "check_recorder",
    "check_same_app",
    "check_session_name",
    "commit_size",
    "committed_since",
    "crash_event",
    "effect_failure",
    "fold_commit",
    "load_app",
    "logged_action",
    "logged_event",
    "logged_journal",
    "refusal",
    "str_of",
]
