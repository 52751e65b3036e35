"""How a session logs an app's messages: only those of its own types, and only those that
read back from the log as themselves (replay and recovery step what they read back)."""

from __future__ import annotations

import enum
from typing import Any

import attrs
import msgpack  # type: ignore[import-untyped, unused-ignore]
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


class Outcome(enum.IntEnum):
    OK = 1
    FAILED = 2


class Mode(enum.StrEnum):
    FAST = "fast"


@pytest.mark.parametrize("message", [Outcome.OK, Mode.FAST])
def test_an_int_or_str_enum_message_reads_back_as_its_member(message: enum.Enum) -> None:
    """Logged as the bare int or str it also is: recovery and replay gave the app 1 where
    the live session had given it Outcome.OK, and the resume was refused as diverged."""
    codec = MessageCodec((Outcome, Mode))
    restored = codec.decode(msgpack.unpackb(msgpack.packb(codec.encode(message))))
    assert restored is message


def test_an_int_enum_message_not_among_the_message_types_is_not_logged() -> None:
    with pytest.raises(MessageCodecError, match="Outcome is not among the app's message_types"):
        MessageCodec(()).encode(Outcome.OK)
