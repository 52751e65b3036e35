"""A fast marshaller for the few method-call shapes the atspi adapter sends.

jeepney's general marshaller costs tens of microseconds a message, which dominates a
snapshot of a few hundred pipelined calls; these calls have fixed, simple shapes (an
object path, four strings and a body of ``i``, ``u``, ``s`` or a ``d`` variant), so they are
written directly. ``tests/test_atspi_wire.py`` checks the bytes against jeepney's parser.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any, Final

_U32: Final = struct.Struct("<I")
_I32: Final = struct.Struct("<i")
_F64: Final = struct.Struct("<d")


def _pad(length: int, alignment: int) -> bytes:
    return b"\0" * (-length % alignment)


def _string(out: bytearray, value: str) -> None:
    out += _pad(len(out), 4)
    data = value.encode("utf-8")
    out += _U32.pack(len(data))
    out += data
    out += b"\0"


def _field(out: bytearray, code: int, kind: str, value: str) -> None:
    out += _pad(len(out), 8)
    out += bytes((code, 1, ord(kind), 0))
    if kind == "g":
        data = value.encode("ascii")
        out += bytes((len(data),)) + data + b"\0"
    else:
        _string(out, value)


def _body(signature: str, body: Sequence[Any]) -> bytes:
    out = bytearray()
    for position, code in enumerate(signature):
        value = body[position]
        if code == "s":
            _string(out, str(value))
        elif code in "iu":
            out += _pad(len(out), 4)
            out += (_I32 if code == "i" else _U32).pack(int(value))
        elif code == "v":
            kind, inner = value
            if kind != "d":
                raise ValueError(f"unsupported variant {kind!r}")
            out += b"\x01d\0"
            out += _pad(len(out), 8)
            out += _F64.pack(float(inner))
        else:
            raise ValueError(f"unsupported signature code {code!r}")
    return bytes(out)


def method_call(
    serial: int,
    path: str,
    destination: str,
    interface: str,
    member: str,
    signature: str = "",
    body: Sequence[Any] = (),
) -> bytes:
    """The wire bytes of one little-endian method call."""
    payload = _body(signature, body) if signature else b""
    fields = bytearray()
    _field(fields, 1, "o", path)
    _field(fields, 2, "s", interface)
    _field(fields, 3, "s", member)
    _field(fields, 6, "s", destination)
    if signature:
        _field(fields, 8, "g", signature)
    head = b"l\x01\x00\x01" + _U32.pack(len(payload)) + _U32.pack(serial)
    head += _U32.pack(len(fields))
    message = bytearray(head)
    message += fields
    message += _pad(len(message), 8)
    message += payload
    return bytes(message)
