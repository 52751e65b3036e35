"""Text from the log, apps and agents as a terminal or a generated file gets it: here, below
every layer that shows such text (the command line, replay's exported tests)."""

from __future__ import annotations

import traceback
from collections.abc import Iterator

__all__ = ["a_or_an", "counted", "printable", "printable_traceback", "shortened", "shown_int"]

SHOWN = 500
"""The most characters of an app's message a command prints."""


def printable(text: str) -> str:
    """`text` on one line, each character that is not printable (a newline, an escape)
    written as Python writes it in a string: no escape sequence an app or an agent put in
    it reaches the terminal."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def printable_traceback(error: BaseException) -> Iterator[str]:
    """The lines of `error`'s traceback, each `printable`: its message may hold an app's
    or an agent's text, whose newline would pass for a line of the traceback."""
    for line in traceback.format_exception(error):
        for part in line.rstrip("\n").split("\n"):
            yield printable(part)


def shortened(text: str, most: int = SHOWN) -> str:
    """`text`, or its first `most` characters and how long it is: an app's error may carry
    a whole payload in its message, which buried the rest of what a command printed."""
    if len(text) <= most:
        return text
    return f"{text[:most]}… ({len(text)} characters)"


def a_or_an(word: str) -> str:
    """`word` with its indefinite article, by its first letter: ``an int``, ``a list``."""
    return f"{'an' if word[:1].lower() in tuple('aeiou') else 'a'} {word}"


def counted(number: int, noun: str) -> str:
    """``1 example``, ``2 examples``: `number` of `noun`, a noun that takes an s."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def shown_int(value: int) -> str:
    """`value` in decimal while that is short (and possible: `str` refuses an int of more
    than 4300 digits), else its size."""
    if value.bit_length() <= 128:
        return str(value)
    return f"an int of {value.bit_length()} bits"
