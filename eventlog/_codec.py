"""The log's codec: one cattrs converter with a tagged union over the event classes.

A body is the msgpack encoding of the unstructured event with its topic inside under
``TAG`` (so a body decodes on its own), stored beside the topic and version columns.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol, TypeVar

import attrs
import msgpack  # type: ignore[import-untyped, unused-ignore]
from cattrs.preconf.msgpack import MsgpackConverter, make_converter
from cattrs.strategies import configure_tagged_union

from ._errors import CorruptEventError, EventLogError, UnknownTopicError
from ._events import EVENT_CLASSES, TOPICS, Event
from ._upcast import UPCASTERS, Upcasters

unpackb = msgpack.unpackb


class _Packers(threading.local):
    """One reusable ``msgpack.Packer`` per thread: ``msgpack.packb`` makes one per call,
    which is a third of encoding a small event. (A packer is not safe to share between
    threads, and the log writer encodes on worker threads.)"""

    def __init__(self) -> None:
        self.pack: Callable[[Any], bytes] = msgpack.Packer().pack


_PACKERS = _Packers()

__all__ = ["CONVERTER", "TAG", "EncodedEvent", "LogConverter", "decode", "encode"]

TAG = "_type"
"""The key of the topic inside an unstructured event."""


class _Record(Protocol):
    @property
    def topic(self) -> str: ...
    @property
    def version(self) -> int: ...
    @property
    def body(self) -> bytes: ...


R = TypeVar("R", bound=_Record)


@attrs.frozen
class EncodedEvent:
    topic: str
    version: int
    body: bytes


def _identity(value: Any, _type: Any = None) -> Any:
    return value


def _is_payload(type_: Any) -> bool:
    return type_ is Any or type_ == dict[str, Any]


def _passthrough_unstructure(_type: Any) -> Callable[[Any], Any]:
    return _identity


def _passthrough_structure(_type: Any) -> Callable[[Any, Any], Any]:
    return _identity


def _why(error: Exception) -> str:
    """What msgpack said, or what it raised when it said nothing."""
    return str(error) or type(error).__name__


def _kind(data: object) -> str:
    """A decoded body that is not a map, as msgpack calls it."""
    if isinstance(data, list):
        return "an array"
    if data is None:
        return "nil"
    return f"a {type(data).__name__}"


class LogConverter:
    """Encodes events to ``(topic, version, body)`` and decodes them back, upcasting.

    Wire payloads (``dict[str, Any]`` and ``Any`` fields) pass through untouched in both
    directions: they are plain msgpack data already, and copying them value by value
    would dominate decoding a large ``Committed`` delta. The decoded event therefore owns
    the dicts msgpack produced; a dict handed to ``structure`` is not copied.
    """

    def __init__(self, upcasters: Upcasters | None = None) -> None:
        self.upcasters = UPCASTERS if upcasters is None else upcasters
        converter = make_converter(detailed_validation=False)
        converter.register_unstructure_hook_factory(_is_payload, _passthrough_unstructure)
        converter.register_structure_hook_factory(_is_payload, _passthrough_structure)
        configure_tagged_union(Event, converter, tag_generator=TOPICS.__getitem__, tag_name=TAG)
        self.cattrs: MsgpackConverter = converter
        self._unstructure: Callable[[Any], dict[str, Any]] = converter.get_unstructure_hook(Event)
        self._structure: Callable[[Any, Any], Event] = converter.get_structure_hook(Event)
        # Per class: (topic, version, the class's own unstructure hook). Encoding goes
        # straight to it, skipping the union's dispatch, and adds the tag as the union does.
        self._encoders: dict[type[Event], tuple[str, int, Callable[[Any], dict[str, Any]]]] = {
            cls: (TOPICS[cls], cls.VERSION, converter.get_unstructure_hook(cls))
            for cls in EVENT_CLASSES
        }
        self._classes: dict[str, type[Event]] = {TOPICS[cls]: cls for cls in EVENT_CLASSES}
        self._versions: dict[str, int] = {TOPICS[cls]: cls.VERSION for cls in EVENT_CLASSES}
        # Per topic: (current version, the class's own structure hook, the class).
        self._fast: dict[str, tuple[int, Callable[[Any, Any], Event], type[Event]]] = {
            TOPICS[cls]: (cls.VERSION, converter.get_structure_hook(cls), cls)
            for cls in EVENT_CLASSES
        }

    def unstructure(self, event: Event) -> dict[str, Any]:
        """The event as a dict of msgpack data, with its topic under ``TAG``."""
        return self._unstructure(event)

    def structure(self, data: dict[str, Any]) -> Event:
        """The event of a current-version dict; its class is chosen by the tag."""
        return self._structure(data, Event)

    def encode(self, event: Event) -> EncodedEvent:
        return EncodedEvent(*self.encode_parts(event))

    def encode_parts(self, event: Event) -> tuple[str, int, bytes]:
        """``encode`` as a plain ``(topic, version, body)``: what appending uses."""
        entry = self._encoders.get(type(event))
        if entry is None:
            raise TypeError(f"{type(event).__qualname__} is not a log event class")
        topic, version, unstructure = entry
        data = unstructure(event)
        data[TAG] = topic
        return topic, version, _PACKERS.pack(data)

    def decode(self, topic: str, version: int, body: bytes) -> Event:
        """Decode a stored event, upcasting an older version to the current class.

        Raises ``UnknownTopicError``, ``UnsupportedVersionError`` or ``CorruptEventError``.
        """
        current = self._versions.get(topic)
        if current is None:
            raise UnknownTopicError(topic)
        if type(version) is not int:  # a log's row edited by hand: SQLite keeps any type
            raise CorruptEventError(topic, version, f"its version is {version!r}, not an integer")
        try:
            data = unpackb(body)
        except ValueError:
            # Keys other than str/bytes (an app message keyed by ints): rare, and the
            # keyword argument alone costs ~15% of decoding a small event.
            try:
                data = unpackb(body, strict_map_key=False)
            except Exception as exc:
                raise CorruptEventError(topic, version, f"not msgpack ({_why(exc)})") from exc
        except Exception as exc:
            raise CorruptEventError(topic, version, f"not msgpack ({_why(exc)})") from exc
        if not isinstance(data, dict):
            raise CorruptEventError(topic, version, f"body is {_kind(data)}, not a map")
        if version != current:
            data = self._upcast(topic, version, current, data)
        try:
            event = self._structure(data, Event)
        except Exception as exc:
            raise CorruptEventError(topic, version, f"{type(exc).__name__}: {exc}") from exc
        if type(event) is not self._classes[topic]:
            raise CorruptEventError(topic, version, f"body is tagged {TOPICS[type(event)]}")
        return event

    def peek(self, topic: str, version: int, body: bytes, name: str) -> object:
        """The field `name` of a stored event of its topic's current version, read without
        decoding the rest of its body (a read checkpoint's generation, beside its tree).

        None where it cannot be read so: the body of an older version (which upcasting may
        change), or one that is no msgpack map holding that field. Decoding the event then
        says what it holds, or names the damage.
        """
        if self._versions.get(topic) != version:
            return None
        unpacker = msgpack.Unpacker(io.BytesIO(body), strict_map_key=False)
        try:
            for _ in range(unpacker.read_map_header()):
                if unpacker.unpack() == name:
                    return unpacker.unpack()
                unpacker.skip()
        except Exception:  # (msgpack raises several: not a map, cut short, malformed)
            return None
        return None

    def _upcast(self, topic: str, version: int, current: int, data: dict[str, Any]) -> Any:
        """The upcasters' dict. An upcaster is written for the shape its version had: one
        that fails on a body without it (a field edited into another type) has found the
        body corrupt, not a bug of its own."""
        try:
            return self.upcasters.upcast(topic, version, current, data)
        except EventLogError:
            raise
        except Exception as exc:
            reason = f"upcasting it raised {type(exc).__name__}: {exc}"
            raise CorruptEventError(topic, version, reason) from exc

    def decode_records(self, records: Iterable[R]) -> Iterator[tuple[R, Event]]:
        """Each record with its decoded event: what a recorder's ``events()`` yields."""
        decode = self._decode_fast
        for record in records:
            yield record, decode(record.topic, record.version, record.body)

    def decode_rows(self, rows: Iterable[tuple[str, int, bytes]]) -> Iterator[Event]:
        """The events of ``(topic, version, body)`` rows: replay without record metadata."""
        decode = self._decode_fast
        for topic, version, body in rows:
            yield decode(topic, version, body)

    def _decode_fast(self, topic: str, version: int, body: bytes) -> Event:
        """``decode``, inlined for the common case (current version, plain msgpack), since
        this is what reading a log costs: it skips the union dispatch, and falls back to
        ``decode`` for anything else, including every error."""
        entry = self._fast.get(topic)
        if entry is not None and entry[0] == version:
            try:
                data = unpackb(body)
                if data[TAG] == topic:
                    event: Event = entry[1](data, entry[2])
                    return event
            except Exception:
                pass
        return self.decode(topic, version, body)


CONVERTER = LogConverter()
"""The converter of the log, with the log's own upcasters."""

encode = CONVERTER.encode
decode = CONVERTER.decode
