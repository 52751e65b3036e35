"""How a session logs what an agent asked and was answered, one rule for every host: a
runtime session's actor and a served surface's bridge log their requests alike."""

from __future__ import annotations

from typing import Any

import attrs

from semledger.eventlog import (
    ActionReceipt,
    ActionRejected,
    CallRefused,
    loggable_json,
    redact_action,
    refused_arguments,
)
from semledger.runtime import (
    ActionKind,
    Receipt,
    Rejection,
    SemanticsAction,
    SemanticsSnapshot,
    SetText,
    Target,
    resolve_target,
)
from semledger.runtime._wire import encode_action, encode_rejection

__all__ = ["LoggedAction", "answered", "logged_action", "refusal"]


@attrs.frozen
class LoggedAction:
    wire: dict[str, Any]
    """The action as ``ActionRequested`` holds it."""
    redacted: bool
    password: bool
    """Its target is a password field: the text typed is in the model, not in the log."""


def logged_action(
    action: SemanticsAction,
    target: Target,
    snapshot: SemanticsSnapshot,
    *,
    redact: bool,
    keep_length: bool,
) -> LoggedAction:
    """`action` as logged when `target` is resolved in `snapshot`. With `redact`, a
    ``set_text`` at a password field has its value redacted (``redact_action``: one bullet a
    character with `keep_length`, for a replay that types it), and so has one that no field
    takes: at a target that names no one node, or at a node that does not take text or is
    disabled (a mistyped id, or the password's label beside its field, may have been meant
    for a password field; it is rejected whatever the text, so replay is the same)."""
    wire = encode_action(action)
    if not (redact and isinstance(action, SetText)):
        return LoggedAction(wire, False, False)
    node = resolve_target(target, snapshot)
    if isinstance(node, Rejection):
        return LoggedAction(redact_action(wire, keep_length=keep_length), True, False)
    password = node.state.password
    refused = node.state.disabled or ActionKind.SET_TEXT not in node.actions
    if password or refused:
        return LoggedAction(redact_action(wire, keep_length=keep_length), True, password)
    return LoggedAction(wire, False, False)


def answered(request_id: int, outcome: Receipt | Rejection) -> ActionReceipt | ActionRejected:
    """The event that logs the answer to request `request_id`."""
    if isinstance(outcome, Receipt):
        return ActionReceipt(request_id, outcome.before, outcome.after, outcome.pending_work)
    wire = encode_rejection(outcome)
    return ActionRejected(request_id, wire["code"], wire["message"], wire["details"])


def refusal(arguments: dict[str, Any], rejection: Rejection, *, redact: bool) -> CallRefused:
    """The event that logs a ``perform_action`` refused for its `arguments`.

    Its message may quote the arguments (an unknown field's name, say), so it is made
    loggable as they are: one call must not make the session's log unwritable.
    """
    logged, redacted = refused_arguments(arguments, redact=redact)
    wire = encode_rejection(rejection)
    message = loggable_json(wire["message"])
    return CallRefused("perform_action", logged, wire["code"], message, redacted)
