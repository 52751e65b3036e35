"""How a session logs an app's messages: only those of its own types, and only those that
read back from the log as themselves (replay and recovery step what they read back)."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from semledger.actors import MessageCodec, MessageCodecError


@attrs.frozen
class Carry:
    value: Any


def test_a_message_reads_back_from_the_log_as_itself() -> None:
    codec = MessageCodec((Carry,))
    assert codec.decode(codec.encode(Carry([1, "two"]))) == Carry([1, "two"])


def test_a_message_holding_a_nan_is_logged_though_it_equals_nothing() -> None:
    codec = MessageCodec((Carry,))
    assert repr(codec.decode(codec.encode(Carry(float("nan"))))) == "Carry(value=nan)"


def test_a_message_that_reads_back_as_another_value_is_not_logged() -> None:
    with pytest.raises(MessageCodecError, match=r"it reads back as Carry\(value=\[1, 2\]\)"):
        MessageCodec((Carry,)).encode(Carry((1, 2)))


def test_a_message_of_another_class_with_the_same_name_is_not_logged() -> None:
    """Logged under that name, it was read back as the app's class."""
    impostor = attrs.make_class("Carry", ["value"])
    with pytest.raises(MessageCodecError, match="Carry is not among the app's message_types"):
        MessageCodec((Carry,)).encode(impostor(1))
