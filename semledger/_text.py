"""Text from the log, apps and agents as the terminal gets it."""

from __future__ import annotations

__all__ = ["printable"]


def printable(text: str) -> str:
    """`text` on one line, each character that is not printable (a newline, an escape)
    written as Python writes it in a string: no escape sequence an app or an agent put in
    it reaches the terminal."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
