"""Redaction of values typed into password fields (SPEC §4)."""

from __future__ import annotations

from typing import Any

import pytest

from semledger.eventlog import (
    REDACTED,
    ActionRequested,
    SessionStarted,
    decode,
    encode,
    password_policy_refusal,
    redact_action,
    refused_arguments,
)


def test_a_set_text_value_is_redacted_and_the_input_kept() -> None:
    action = {"kind": "set_text", "value": "hunter2"}
    assert redact_action(action) == {"kind": "set_text", "value": "[redacted]"}
    assert REDACTED == "[redacted]"
    assert action == {"kind": "set_text", "value": "hunter2"}


@pytest.mark.parametrize(
    "action",
    [{"kind": "activate"}, {"kind": "set_numeric_value", "value": 3},
     {"kind": "set_selection", "start": 0, "end": 2}, {"kind": "scroll", "direction": "up"}],
)
def test_other_actions_are_left_alone(action: dict[str, Any]) -> None:
    assert redact_action(action) is action


def test_a_redacted_request_is_logged_without_the_value() -> None:
    request = ActionRequested(
        request_id=3,
        target={"kind": "semantic_id", "id": "login.password"},
        action=redact_action({"kind": "set_text", "value": "hunter2"}),
        precondition={"kind": "latest"},
        redacted=True,
    )
    encoded = encode(request)
    assert b"hunter2" not in encoded.body
    assert decode(encoded.topic, encoded.version, encoded.body) == request


def test_keep_length_masks_each_character_with_a_bullet() -> None:
    action = {"kind": "set_text", "value": "hunter2"}
    assert redact_action(action, keep_length=True) == {"kind": "set_text", "value": "\u2022" * 7}
    assert action == {"kind": "set_text", "value": "hunter2"}


def test_a_refused_calls_action_keeps_only_its_kind_and_the_target_and_precondition() -> None:
    arguments = {
        "target": {"kind": "semantic_id", "id": "login.password"},
        "action": {"kind": "set_txt", "value": "hunter2"},
        "precondition": {"kind": "latest"},
    }
    assert refused_arguments(arguments, redact=True) == (
        {**arguments, "action": {"kind": "set_txt", "value": REDACTED}},
        True,
    )
    assert arguments["action"] == {"kind": "set_txt", "value": "hunter2"}


@pytest.mark.parametrize(
    ("arguments", "logged", "redacted"),
    [
        ({"action": {"kind": "activate"}}, {"action": {"kind": "activate"}}, False),
        ({"action": {"value": "hunter2"}}, {"action": {"value": REDACTED}}, True),
        ({"actoin": {"kind": "set_text", "value": "x"}}, {"actoin": REDACTED}, True),
        ({"action": "hunter2"}, {"action": REDACTED}, True),
    ],
    ids=["kind-alone", "no-kind", "misspelt-key", "action-not-an-object"],
)
def test_a_refused_call_says_whether_anything_was_redacted(
    arguments: dict[str, Any], logged: dict[str, Any], redacted: bool
) -> None:
    assert refused_arguments(arguments, redact=True) == (logged, redacted)


def test_a_refused_call_logged_in_clear_is_kept_as_the_log_can_hold_it() -> None:
    arguments = {"action": {"kind": "set_text", "value": "pw\ud800"}, "n": 2**70}
    assert refused_arguments(arguments, redact=False) == (
        {"action": {"kind": "set_text", "value": "pw\\ud800"}, "n": str(2**70)},
        False,
    )


def test_a_session_is_resumed_only_under_the_password_policy_it_started_with() -> None:
    redacting = SessionStarted("m:app", "runtime", {}, redact_passwords=True)
    in_clear = SessionStarted("m:app", "runtime", {}, redact_passwords=False)
    assert password_policy_refusal("s", redacting, True) is None
    assert password_policy_refusal("s", in_clear, False) is None
    refusal = password_policy_refusal("s", redacting, False)
    assert refusal is not None
    assert "it is not resumed with --log-passwords" in refusal
    refusal = password_policy_refusal("s", in_clear, True)
    assert refusal is not None
    assert "it is not resumed without --log-passwords" in refusal
