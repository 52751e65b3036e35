"""How text from apps, agents and the log is shown on one line, shortened and counted."""

from __future__ import annotations

from semledger.runtime._text import (
    a_or_an,
    counted,
    printable,
    printable_traceback,
    shortened,
    shown_int,
)


def test_printable_writes_what_a_terminal_would_act_on_as_python_escapes() -> None:
    assert printable("a\nb\x1b[2Jc\té") == "a\\nb\\x1b[2Jc\\té"


def test_text_up_to_the_limit_is_shown_whole_and_longer_text_is_cut_and_measured() -> None:
    assert shortened("abc", 3) == "abc"
    assert shortened("abcd", 3) == "abc… (4 characters)"


def test_a_word_takes_an_before_a_vowel_and_a_before_anything_else() -> None:
    assert [a_or_an(w) for w in ("int", "Item", "list", "NoneType", "")] == [
        "an int",
        "an Item",
        "a list",
        "a NoneType",
        "a ",
    ]


def test_a_count_takes_the_plural_but_for_one() -> None:
    assert [counted(n, "example") for n in (0, 1, 2)] == ["0 examples", "1 example", "2 examples"]


def test_an_int_of_up_to_128_bits_is_shown_in_decimal_and_a_larger_one_by_its_size() -> None:
    assert shown_int(2**128 - 1) == str(2**128 - 1)
    assert shown_int(-(2**128) + 1) == str(-(2**128) + 1)
    assert shown_int(2**128) == "an int of 129 bits"


def test_a_traceback_is_its_lines_each_with_no_escape_sequence_left_raw() -> None:
    try:
        raise ValueError("an app's \x1b[31mtext\nsecond")
    except ValueError as error:
        raised = error
    lines = list(printable_traceback(raised))
    assert lines[0] == "Traceback (most recent call last):"
    assert lines[-2:] == ["ValueError: an app's \\x1b[31mtext", "second"]
