"""The codec: one cattrs converter, a tagged union, versions and upcasting."""

from __future__ import annotations

import json
import re
from typing import Any

import msgpack  # type: ignore[import-untyped, unused-ignore]
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from semledger.eventlog import (
    CONVERTER,
    EVENT_CLASSES,
    TAG,
    TOPICS,
    ActionReceipt,
    AgentConnected,
    CallRefused,
    Committed,
    CorruptEventError,
    EffectCompleted,
    EffectFailed,
    EffectStarted,
    Event,
    LogConverter,
    SemanticsTaken,
    SessionCrashed,
    SessionEnded,
    SessionStarted,
    StoredEvent,
    UnknownTopicError,
    UnsupportedVersionError,
    Upcasters,
    decode,
    encode,
    loggable_json,
    topic_of,
)
from semledger.eventlog.testing import events_of, wire_dicts


def test_every_event_class_has_its_own_explicit_version_and_topic() -> None:
    for cls in EVENT_CLASSES:
        assert isinstance(cls.__dict__["VERSION"], int)
        assert TOPICS[cls] == cls.__name__ == topic_of(cls)
    assert len(set(TOPICS.values())) == len(EVENT_CLASSES)


def test_session_started_is_at_version_2() -> None:
    assert SessionStarted.VERSION == 2


@pytest.mark.parametrize("cls", EVENT_CLASSES, ids=lambda cls: cls.__name__)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_encode_then_decode_is_identity(cls: type[Event], data: st.DataObject) -> None:
    event = data.draw(events_of(cls))
    encoded = encode(event)
    assert (encoded.topic, encoded.version) == (TOPICS[cls], cls.VERSION)
    assert decode(encoded.topic, encoded.version, encoded.body) == event
    record = StoredEvent("s", 1, encoded.topic, encoded.version, 0.0, encoded.body, b"")
    assert list(CONVERTER.decode_records([record])) == [(record, event)]


@settings(max_examples=300, deadline=None)
@given(wire_dicts())
def test_wire_dicts_survive_a_strict_json_round_trip(value: dict[str, Any]) -> None:
    assert json.loads(json.dumps(value, allow_nan=False)) == value


def test_body_is_msgpack_of_the_unstructured_event_with_the_tag_inside() -> None:
    event = ActionReceipt(request_id=7, before=3, after=4, pending_work=True)
    body = msgpack.unpackb(encode(event).body)
    assert body == {
        TAG: "ActionReceipt", "request_id": 7, "before": 3, "after": 4, "pending_work": True,
    }
    assert CONVERTER.structure(body) == event
    assert CONVERTER.unstructure(event) == body


def test_u64_generations_survive() -> None:
    event = Committed(generation=2**64 - 1, delta={"node": 2**64 - 1}, snapshot_hash="ab")
    encoded = encode(event)
    assert decode(encoded.topic, encoded.version, encoded.body) == event


def test_message_with_int_keys_decodes_on_the_slow_path() -> None:
    event = EffectCompleted(effect_id=1, message={1: "one", "two": [2]})
    encoded = encode(event)
    assert decode(encoded.topic, encoded.version, encoded.body) == event
    record = StoredEvent("s", 1, encoded.topic, encoded.version, 0.0, encoded.body, b"")
    assert list(CONVERTER.decode_records([record])) == [(record, event)]


def test_unknown_topic_is_named() -> None:
    with pytest.raises(UnknownTopicError, match="'Teleported'") as caught:
        decode("Teleported", 1, msgpack.packb({TAG: "Teleported"}))
    assert caught.value.topic == "Teleported"


def test_version_newer_than_the_code_is_named() -> None:
    body = encode(ActionReceipt(1, 1, 1, False)).body
    with pytest.raises(UnsupportedVersionError, match="ActionReceipt version 2") as caught:
        decode("ActionReceipt", 2, body)
    assert (caught.value.topic, caught.value.version, caught.value.current) == (
        "ActionReceipt", 2, 1,
    )


def test_a_missing_upcaster_step_is_named() -> None:
    converter = LogConverter(Upcasters())
    body = msgpack.packb({TAG: "SessionStarted", "app": "a:b", "params": {},
                          "redact_passwords": False})
    with pytest.raises(UnsupportedVersionError, match="no upcaster from version 1"):
        converter.decode("SessionStarted", 1, body)


def test_upcasters_chain_one_step_at_a_time() -> None:
    upcasters = Upcasters()
    seen: list[int] = []

    @upcasters.register("Thing", 1)
    def one(data: dict[str, Any]) -> dict[str, Any]:
        seen.append(1)
        return {**data, "params": {}}

    @upcasters.register("Thing", 2)
    def two(data: dict[str, Any]) -> dict[str, Any]:
        seen.append(2)
        return {**data, "surface": "web"}

    data = upcasters.upcast("Thing", 1, 3, {"app": "a:b"})
    assert data == {"app": "a:b", "params": {}, "surface": "web"}
    assert seen == [1, 2]
    assert upcasters.upcast("Thing", 3, 3, {"app": "a:b"}) == {"app": "a:b"}
    with pytest.raises(UnsupportedVersionError, match="versions start at 1"):
        upcasters.upcast("Thing", 0, 3, {})
    with pytest.raises(ValueError, match="registered"):
        upcasters.add("Thing", 1, one)


def test_a_copy_of_upcasters_takes_new_steps_without_changing_the_original() -> None:
    original = Upcasters()
    original.add("Thing", 1, lambda data: {**data, "one": True})
    copy = original.copy()
    copy.add("Thing", 2, lambda data: {**data, "two": True})
    assert copy.upcast("Thing", 1, 3, {}) == {"one": True, "two": True}
    with pytest.raises(UnsupportedVersionError, match="no upcaster from version 2"):
        original.upcast("Thing", 1, 3, {})


def test_version_1_session_started_gets_the_runtime_surface() -> None:
    body = msgpack.packb({TAG: "SessionStarted", "app": "m:app", "params": {"n": 1},
                          "redact_passwords": True})
    assert decode("SessionStarted", 1, body) == SessionStarted(
        app="m:app", surface="runtime", params={"n": 1}, redact_passwords=True
    )


@pytest.mark.parametrize(
    "body",
    [b"\xc1", msgpack.packb([1, 2]), msgpack.packb({TAG: "ActionReceipt", "request_id": 1})],
    ids=["not-msgpack", "not-a-map", "missing-field"],
)
def test_a_corrupt_body_raises_a_typed_error(body: bytes) -> None:
    with pytest.raises(CorruptEventError, match="ActionReceipt version 1"):
        decode("ActionReceipt", 1, body)
    record = StoredEvent("s", 1, "ActionReceipt", 1, 0.0, body, b"")
    with pytest.raises(CorruptEventError):
        list(CONVERTER.decode_records([record]))


@pytest.mark.parametrize(
    ("data", "kind"),
    [([], "an array"), ("text", "a str"), (None, "nil")],
    ids=["list", "str", "nil"],
)
def test_an_old_version_body_that_is_not_a_map_is_corrupt_not_a_type_error(
    data: object, kind: str
) -> None:
    body = msgpack.packb(data)
    with pytest.raises(CorruptEventError, match=f"SessionEnded version 1: body is {kind}, not"):
        decode("SessionEnded", 1, body)
    record = StoredEvent("s", 1, "SessionEnded", 1, 0.0, body, b"")
    with pytest.raises(CorruptEventError):
        list(CONVERTER.decode_records([record]))


def test_an_upcaster_failing_on_a_damaged_body_makes_it_corrupt() -> None:
    upcasters = Upcasters()
    upcasters.add("SessionStarted", 1, lambda data: {**data, "surface": data["app"].lower()})
    body = msgpack.packb({TAG: "SessionStarted", "app": 7, "params": {}, "redact_passwords": 0})
    with pytest.raises(CorruptEventError, match="version 1: upcasting it raised AttributeError"):
        LogConverter(upcasters).decode("SessionStarted", 1, body)


def test_a_body_tagged_with_another_topic_is_corrupt() -> None:
    body = encode(SessionStarted("a:b", "runtime", {}, False)).body
    with pytest.raises(CorruptEventError, match="tagged SessionStarted"):
        decode("ActionReceipt", 1, body)


def test_a_body_tagged_with_another_topic_is_corrupt_when_a_recorder_reads_it() -> None:
    retagged = {**CONVERTER.unstructure(EffectStarted(1, "load")), TAG: "ActionReceipt"}
    body = msgpack.packb(retagged)
    record = StoredEvent("s", 1, "EffectStarted", 1, 0.0, body, b"")
    with pytest.raises(CorruptEventError, match="EffectStarted version 1"):
        list(CONVERTER.decode_records([record]))
    with pytest.raises(CorruptEventError, match="EffectStarted version 1"):
        list(CONVERTER.decode_rows([("EffectStarted", 1, body)]))


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda: SessionStarted(None, "runtime", {}, True), "app: expected a str, got NoneType"),
        (lambda: SessionStarted("m:app", 5, {}, True), "surface: expected a str, got int 5"),
        (lambda: SessionStarted("m:app", "runtime", [], True), "params: expected a dict, got"),
        (
            lambda: SessionStarted("m:app", "runtime", {}, 1),
            "redact_passwords: expected a bool, got int 1",
        ),
        (
            lambda: AgentConnected(None, 5, "stdio", None),
            "protocol_version: expected a str or None, got int 5",
        ),
        (lambda: AgentConnected(None, None, "http", ("h", 1)), "peer: expected a str or None"),
        (lambda: EffectFailed(1, ValueError("x")), "error: expected a str, got ValueError"),
        (lambda: SessionCrashed(ValueError, "tb"), "exception_type: expected a str, got type"),
        (
            lambda: CallRefused("perform_action", {}, "invalid_arguments", "m", None),
            "redacted: expected a bool, got NoneType None",
        ),
    ],
)
def test_a_field_of_a_rare_event_of_another_type_is_refused_not_read_back_as_damage(
    make: Any, said: str
) -> None:
    """``SessionStarted(app=None, ...)`` was logged: its summary held NULL, the event read
    back as app 'None', and the intact log was reported damaged."""
    with pytest.raises(TypeError, match=re.escape(said)):
        make()


def test_an_end_by_no_one_the_log_knows_is_refused_as_it_is_made() -> None:
    said = "by: expected one of server, client, operator, fuzzer, got 'nobody'"
    with pytest.raises(ValueError, match=re.escape(said)):
        SessionEnded("over", "nobody")  # type: ignore[arg-type]


def test_encoding_a_non_event_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="not a log event"):
        encode(object())  # type: ignore[arg-type]


def test_peek_reads_one_field_of_a_current_body_and_none_it_cannot_read_so() -> None:
    """A read checkpoint's generation is read without decoding its tree; a body it cannot
    be read so from (an older version, no such field, no map) is left to decoding."""
    tree = {"nodes": [{"id": str(i)} for i in range(100)]}
    topic, version, body = CONVERTER.encode_parts(SemanticsTaken(7, tree, 12))
    assert CONVERTER.peek(topic, version, body, "generation") == 7
    assert CONVERTER.peek(topic, version, body, "next_node_id") == 12  # (after the tree)
    assert CONVERTER.peek(topic, version, body, "nothing") is None
    old = msgpack.packb({TAG: topic, "generation": 4, "semantics": tree})
    assert CONVERTER.peek(topic, 1, old, "generation") is None  # (upcasting may change it)
    for damaged in (b"", b"\xc1", msgpack.packb([7]), body[:3]):
        assert CONVERTER.peek(topic, version, damaged, "generation") is None
    assert CONVERTER.peek("NoSuchTopic", 1, body, "generation") is None


def test_json_nested_deeper_than_the_log_holds_is_logged_cut_at_64_levels() -> None:
    """A client's clientInfo nested 600 levels could not be encoded (msgpack writes at most
    511), so its connection, or its refused call, made the session's log unwritable."""
    deep: Any = "x"
    for _ in range(600):
        deep = [deep]
    logged = loggable_json({"name": "deep", "x": deep})
    event = AgentConnected(logged, "2025-06-18", "stdio", None)
    encoded = encode(event)
    assert decode(encoded.topic, encoded.version, encoded.body) == event
    kept = logged["x"]
    for _ in range(63):  # the object is the first level, then 63 arrays
        [kept] = kept
    assert kept == "[nested too deep]"
    within = deep
    for _ in range(600 - 64):
        [within] = within
    assert loggable_json(within) == within


def test_json_keys_utf8_cannot_encode_are_logged_as_their_escapes() -> None:
    logged = loggable_json({"clientInfo": {"name\udc80": [{"\ud800": 1}]}})
    assert logged == {"clientInfo": {"name\\udc80": [{"\\ud800": 1}]}}
    event = AgentConnected(logged, None, "http", None)
    encoded = encode(event)
    assert decode(encoded.topic, encoded.version, encoded.body) == event
