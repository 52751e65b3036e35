"""SemanticId, node ids and generations (SPEC §2.4)."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from semledger.runtime import (
    InvalidSemanticIdError,
    Role,
    SemanticId,
    node,
    parse_node_id,
    parse_u64,
)
from semledger.runtime._ids import parse_node_ids

REJECTED_CODE_POINTS = [
    *range(0x0021),
    *range(0x007F, 0x00A0),
    0x00A0,
    0x1680,
    *range(0x2000, 0x200B),
    0x2028,
    0x2029,
    0x202F,
    0x205F,
    0x3000,
]


def test_255_bytes_of_cjk_is_a_valid_semantic_id() -> None:
    text = "漢" * 85
    assert len(text.encode("utf-8")) == 255
    assert SemanticId.new(text) == text
    assert SemanticId.parse(text) == text


def test_256_bytes_is_rejected() -> None:
    text = "漢" * 85 + "a"
    assert len(text.encode("utf-8")) == 256
    with pytest.raises(InvalidSemanticIdError):
        SemanticId.new(text)
    assert SemanticId.parse(text) is None


def test_255_ascii_bytes_pass_and_256_fail() -> None:
    assert SemanticId.parse("a" * 255) == "a" * 255
    assert SemanticId.parse("a" * 256) is None


def test_empty_semantic_id_is_rejected() -> None:
    with pytest.raises(InvalidSemanticIdError):
        SemanticId.new("")
    assert SemanticId.parse("") is None


def test_semantic_ids_are_case_sensitive() -> None:
    assert SemanticId.new("Counter.Value") != SemanticId.new("counter.value")


def test_semantic_ids_are_not_normalised() -> None:
    nfc = unicodedata.normalize("NFC", "café")
    nfd = unicodedata.normalize("NFD", "café")
    assert nfc != nfd
    a, b = SemanticId.new(nfc), SemanticId.new(nfd)
    assert a != b
    assert str(a) == nfc
    assert str(b) == nfd
    assert SemanticId.parse(nfd) == nfd


@pytest.mark.parametrize("code_point", REJECTED_CODE_POINTS, ids=lambda c: f"U+{c:04X}")
def test_every_rejected_character_class_is_rejected(code_point: int) -> None:
    for text in (chr(code_point), f"a{chr(code_point)}b", f"ab{chr(code_point)}"):
        with pytest.raises(InvalidSemanticIdError):
            SemanticId.new(text)
        assert SemanticId.parse(text) is None


@pytest.mark.parametrize("code_point", [0x21, 0x7E, 0xA1, 0x200B, 0x3001, 0x1F600])
def test_neighbours_of_rejected_characters_are_accepted(code_point: int) -> None:
    assert SemanticId.parse(f"a{chr(code_point)}") == f"a{chr(code_point)}"


def test_lone_surrogate_is_not_utf8_and_is_rejected() -> None:
    assert SemanticId.parse("a\ud800") is None
    with pytest.raises(InvalidSemanticIdError):
        SemanticId.new("a\ud800")


def test_parse_rejects_non_strings() -> None:
    assert SemanticId.parse(5) is None
    assert SemanticId.parse(None) is None
    assert SemanticId.parse(b"abc") is None


def test_invalid_semantic_id_raises_when_the_view_is_built() -> None:
    with pytest.raises(InvalidSemanticIdError):
        node(Role.BUTTON, semantic_id="bad id")


def test_invalid_relation_target_raises_when_the_view_is_built() -> None:
    from semledger.runtime import Relation

    with pytest.raises(InvalidSemanticIdError):
        node(Role.BUTTON, relations={Relation.CONTROLS: ["bad\tid"]})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0", 0),
        ("1", 1),
        ("18446744073709551615", 2**64 - 1),
        ("18446744073709551616", None),
        ("01", None),
        ("-1", None),
        ("+1", None),
        (" 1", None),
        ("1.0", None),
        ("", None),
        ("١", None),
        (1, None),
    ],
)
def test_generations_are_canonical_u64_strings(text: object, expected: int | None) -> None:
    assert parse_u64(text) == expected


def test_node_ids_start_at_one() -> None:
    assert parse_node_id("0") is None
    assert parse_node_id("1") == 1
    assert parse_node_id("18446744073709551615") == 2**64 - 1
    assert parse_node_id("007") is None


_ID_TEXTS = st.one_of(
    st.integers(0, 2**64 + 5).map(str),
    st.sampled_from(["01", "1,2", ",", "1,", " 1", "١", "", "18446744073709551616", "1_0"]),
    st.text(alphabet="0123456789,", max_size=4),
    st.integers(1, 9),  # no str at all
)


@given(st.lists(_ID_TEXTS, max_size=6))
@example(["1,2"])
@example(["5", "1,2"])
@example(["7", "0"])
def test_many_node_ids_parse_as_each_one_would(texts: list[object]) -> None:
    """`parse_node_ids` checks a whole issue's ids as one string: it takes them exactly when
    `parse_node_id` takes each one (a comma inside one is not two ids)."""
    each = [parse_node_id(text) for text in texts]
    expected = None if None in each else tuple(each)
    assert parse_node_ids(texts) == expected
