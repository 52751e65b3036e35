"""Redaction of values typed into password fields (SPEC §4)."""

from __future__ import annotations

from typing import Any

import pytest

from semledger.eventlog import REDACTED, ActionRequested, decode, encode, redact_action


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
