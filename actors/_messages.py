"""Encoding an application's messages and model as plain log data, with cattrs.

Effect results and timer messages are inputs, so they go into the log; replay and recovery
turn them back into the application's own types. An app lists those types in
``App.message_types`` (and its model in ``App.model_type`` for checkpoints).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import cattrs
import msgpack  # type: ignore[import-untyped, unused-ignore]
from cattrs.preconf.msgpack import make_converter

from semledger.runtime._ids import LOGGABLE_INTS
from semledger.runtime._text import shown_int

_PLAIN = (type(None), bool, int, float, str, bytes)
_CONVERTER = make_converter()
"""Shared by every codec: cattrs generates (compiles) a type's hooks once, not per session."""


class MessageCodecError(ValueError):
    """Raised when a message or model cannot be encoded or decoded for the log."""


def check_loggable(data: object, what: str) -> bytes:
    """`data` packed, or `MessageCodecError` if msgpack cannot pack it: cattrs passes what it
    has no hook for through as it is (an object under a wrongly declared type, say), and the
    log writer would fail on it later, for the whole batch, with the session's step taken."""
    try:
        packed: bytes = msgpack.packb(data)
    except (TypeError, ValueError, OverflowError) as error:
        raise MessageCodecError(f"{what} cannot be logged: {_unpackable(data, error)}") from error
    return packed


def _unpackable(data: object, error: Exception) -> str:
    """Why msgpack could not pack `data`: for an int, which one (msgpack names none)."""
    if isinstance(error, OverflowError):
        big = _big_int(data)
        if big is not None:
            return f"{shown_int(big)} does not fit in 64 bits, which the log carries"
    return str(error)


def _big_int(data: object) -> int | None:
    """The first int in `data` (unstructured: lists and dicts of plain values) that msgpack
    cannot pack."""
    if isinstance(data, int):
        return None if data in LOGGABLE_INTS else data
    if isinstance(data, dict):
        data = [*data.keys(), *data.values()]
    if isinstance(data, list | tuple):
        for item in data:
            big = _big_int(item)
            if big is not None:
                return big
    return None


def _equal(restored: object, live: object) -> bool:
    """Whether a message or model read back from the log equals the live one: equal, or
    shown alike where equality cannot say (a NaN is equal to nothing, itself included); one
    whose ``__eq__`` raises, as an array's truth value does, is not known to."""
    try:
        return bool(restored == live) or repr(restored) == repr(live)
    except Exception:
        return False


def _why(error: Exception) -> str:
    """What was wrong with the logged data; for a class, each field that did not fit (a
    field the class no longer has, or now requires, once it was renamed, say)."""
    if isinstance(error, (cattrs.ClassValidationError, cattrs.IterableValidationError)):
        return "; ".join(cattrs.transform_error(error))
    return f"{type(error).__name__}: {error}"


class MessageCodec:
    """Turns messages of the listed types (attrs classes, or plain values) into log data."""

    def __init__(self, message_types: Sequence[type] = (), model_type: type | None = None) -> None:
        self._converter = _CONVERTER
        self._types = {t.__qualname__: t for t in message_types}
        self.model_type = model_type

    def encode(self, message: object) -> dict[str, Any]:
        if type(message) in _PLAIN:  # (exactly: an IntEnum is an int that decodes as one)
            # An int past 64 bits, a str with a lone surrogate: the log cannot hold them.
            plain = {"type": None, "value": message}
            what = "an int" if isinstance(message, int) else f"a {type(message).__name__}"
            check_loggable(plain, f"{what} message")
            return plain
        name = type(message).__qualname__
        if self._types.get(name) is not type(message):
            raise MessageCodecError(
                f"{name} is not among the app's message_types, so the log cannot record it"
            )
        data = {"type": name, "value": self._converter.unstructure(message)}
        what = f"a {name} message"
        packed = check_loggable(data, what)
        try:
            restored = self.decode(msgpack.unpackb(packed, strict_map_key=False))
        except MessageCodecError as error:
            # Replay and recovery structure it back; live, the session would stop there.
            raise MessageCodecError(f"{what} cannot be logged: {error}") from error
        if not _equal(restored, message):
            # A naive datetime reads back aware, a tuple under an `Any` field as a list:
            # replay and recovery would step another message than the live session did.
            raise MessageCodecError(
                f"{what} cannot be logged: it reads back as {restored!r:.200}, not equal to"
                f" {message!r:.200}"
            )
        return data

    def decode(self, data: Any) -> object:
        try:
            name, value = data["type"], data["value"]
        except (TypeError, KeyError):
            raise MessageCodecError(f"not an encoded message: {data!r}") from None
        if name is None:
            return value
        cls = self._types.get(name)
        if cls is None:
            raise MessageCodecError(f"the app has no message type {name!r}")
        try:
            return self._converter.structure(value, cls)
        except Exception as error:  # a validation error; no hook for a field's type; ...
            raise MessageCodecError(f"cannot decode {name}: {_why(error)}") from error

    def encode_model(self, model: object) -> Any:
        if self.model_type is None:
            raise MessageCodecError("the app declares no model_type")
        what = f"the model (a {type(model).__qualname__}) as model_type {self.model_type!r}"
        try:
            data = self._converter.unstructure(model, self.model_type)
        except Exception as error:  # a str where an Enum is declared: type hints are not enforced
            raise MessageCodecError(f"{what} cannot be logged: {_why(error)}") from error
        packed = check_loggable(data, what)
        try:
            restored = self.decode_model(msgpack.unpackb(packed, strict_map_key=False))
        except MessageCodecError as error:
            raise MessageCodecError(f"{what} cannot be logged: {error}") from error
        if not _equal(restored, model):
            # A tuple under an `Any` field reads back as a list, say: recovery would resume
            # the session with another model than the live one had, and its view may not
            # show it, so nothing else would notice.
            raise MessageCodecError(
                f"{what} cannot be logged: it reads back as {restored!r:.200}, not equal to it"
            )
        return data

    def decode_model(self, data: Any) -> object:
        if self.model_type is None:
            raise MessageCodecError("the app declares no model_type")
        try:
            return self._converter.structure(data, self.model_type)
        except Exception as error:
            raise MessageCodecError(f"cannot decode the model: {_why(error)}") from error
