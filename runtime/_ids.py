"""Identities: application-owned semantic ids and runtime-owned node ids and generations."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final, final

U64_MAX: Final = 2**64 - 1
LOGGABLE_INTS: Final = range(-(2**63), 2**64)
"""The integers the log carries (msgpack's); ``eventlog.LOGGABLE_INTS`` is this one."""
_CANONICAL_U64 = re.compile(r"0|[1-9][0-9]{0,19}")
_CANONICAL_U64_LIST = re.compile(r"(?:0|[1-9][0-9]{0,19})(?:,(?:0|[1-9][0-9]{0,19}))*")
_REJECTED = re.compile(
    "[\u0000-\u0020\u007f-\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
)
_MAX_BYTES: Final = 255


class InvalidSemanticIdError(ValueError):
    """Raised by `SemanticId.new` (and the constructor) for text that is not a semantic id."""


def has_lone_surrogate(text: str) -> bool:
    """Whether `text` holds a lone surrogate (as JSON's ``"\\ud800"`` decodes to): text that
    is not valid UTF-8, so neither the log nor a reply can hold it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def semantic_id_problem(text: str) -> str | None:
    """Say why `text` is not a valid semantic id, or None when it is."""
    try:
        size = len(text.encode("utf-8"))  # once: every node of a view has its id checked
    except UnicodeEncodeError:
        return "a semantic id must be valid UTF-8 (it contains a lone surrogate)"
    if size == 0:
        return "a semantic id must not be empty"
    if size > _MAX_BYTES:
        return f"a semantic id is at most {_MAX_BYTES} UTF-8 bytes, got {size}"
    bad = _REJECTED.search(text)
    if bad is not None:
        code = ord(bad.group())
        return f"a semantic id must not contain whitespace or control character U+{code:04X}"
    return None


@final
class SemanticId(str):
    """An application-owned stable address: 1 to 255 UTF-8 bytes, exact, case-sensitive.

    Dotted names such as ``counter.increment`` are a convention, not a namespace. No
    normalisation of any kind is applied, so two ids are equal exactly when their code points are.
    """

    __slots__ = ()

    def __new__(cls, text: str) -> SemanticId:
        if not isinstance(text, str):
            raise TypeError(f"a semantic id is a str, got {type(text).__name__} {text!r}")
        problem = semantic_id_problem(text)
        if problem is not None:
            raise InvalidSemanticIdError(f"{text!r}: {problem}")
        return super().__new__(cls, text)

    @classmethod
    def new(cls, literal: str) -> SemanticId:
        """Build an id from a literal in the program; raises `InvalidSemanticIdError` if invalid."""
        return cls(literal)

    @classmethod
    def parse(cls, text: object) -> SemanticId | None:
        """The fallible form for text that comes from outside the program: None when invalid."""
        if not isinstance(text, str) or semantic_id_problem(text) is not None:
            return None
        return cls(text)


def parse_u64(text: object) -> int | None:
    """Parse a canonical unsigned 64-bit decimal string (no sign, no leading zeros)."""
    if not isinstance(text, str) or _CANONICAL_U64.fullmatch(text) is None:
        return None
    value = int(text)
    return value if value <= U64_MAX else None


def parse_node_id(text: object) -> int | None:
    """Parse a `SemanticsNodeId` from the wire: like a generation, but ``"0"`` is not a node."""
    value = parse_u64(text)
    return value if value else None


def parse_node_ids(texts: Sequence[object]) -> tuple[int, ...] | None:
    """`parse_node_id` of each, or None if any is no node id. An issue names every node
    that shares a semantic id, and each commit's delta carries it whole, so the texts are
    checked as one string and converted by `int` alone, not one Python call each."""
    if not texts:
        return ()
    try:
        joined = ",".join(texts)  # type: ignore[arg-type]  # (TypeError: one is no str)
    except TypeError:
        return None
    if joined.count(",") != len(texts) - 1 or _CANONICAL_U64_LIST.fullmatch(joined) is None:
        return None  # (a text holding a comma would pass as two)
    ids = tuple(map(int, texts))  # type: ignore[arg-type]
    return None if 0 in ids or max(ids) > U64_MAX else ids
