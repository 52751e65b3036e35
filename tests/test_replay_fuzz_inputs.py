"""What the fuzzer sends (text and numbers) and how deep into an app it gets."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from semledger.eventlog import MemoryRecorder

sys.path.insert(0, str(Path(__file__).parent / "apps"))


@pytest.fixture(scope="module")
def sent_to_inputs() -> list[float | str]:
    """Every value a 100-example fuzz run sent the slider (0 to 100,000, step 0.5) and the
    text field of `tests_fuzz_inputs`."""
    import tests_fuzz_inputs

    from semledger.replay import fuzz_app

    tests_fuzz_inputs.SENT.clear()
    result = fuzz_app(tests_fuzz_inputs.app, "tests_fuzz_inputs:app", MemoryRecorder, examples=100)
    assert result.failure is None, result.failure
    return list(tests_fuzz_inputs.SENT)


def test_numbers_are_drawn_from_the_node_s_own_range_and_step_and_some_from_outside_it(
    sent_to_inputs: list[float | str],
) -> None:
    numbers = [value for value in sent_to_inputs if not isinstance(value, str)]
    on_step = [value for value in numbers if 0 <= value <= 100_000 and value % 0.5 == 0]
    assert any(value % 1 == 0.5 for value in on_step)
    assert any(value > 1000 for value in on_step)
    assert {0, 100_000} <= set(on_step)
    assert any(value < 0 or value > 100_000 for value in numbers)
    assert any(value % 0.5 for value in numbers)


def test_typed_text_is_now_and_then_long_blank_a_number_or_emoji(
    sent_to_inputs: list[float | str],
) -> None:
    texts = [value for value in sent_to_inputs if isinstance(value, str)]
    assert any(len(text) > 30 for text in texts)
    assert any(text and not text.strip() for text in texts)
    assert any("\n" in text for text in texts)
    assert any(any("\U0001f300" <= c <= "\U0001faff" for c in text) for text in texts)
    assert any(text.isdecimal() and text.isascii() and int(text) > 1000 for text in texts)


@pytest.mark.parametrize("seed", range(5))
def test_the_todo_example_s_shared_item_id_is_found_with_the_readme_s_settings(seed: int) -> None:
    """Two todos are four inputs deep (type, submit, type, submit), yet 50 examples found
    them about one run in four: the README said the fuzzer reports them."""
    from semledger.examples import todo
    from semledger.replay import fuzz_app

    result = fuzz_app(
        todo.app, "semledger.examples.todo:app", MemoryRecorder, examples=50, seed=seed
    )
    assert result.failure is not None
    assert "the view reports duplicate_semantic_id (semantic_id='todo.item'" in result.failure


def test_a_bug_behind_validation_is_found_with_the_texts_the_user_gives() -> None:
    """Generated text all but never passed a field's validation (a confirmation word), and
    there was no way to give the fuzzer the values that do."""
    import tests_fuzz_validated

    from semledger.replay import fuzz_app

    ref = "tests_fuzz_validated:app"
    missed = fuzz_app(tests_fuzz_validated.app, ref, MemoryRecorder, examples=100, seed=0)
    assert missed.failure is None
    found = fuzz_app(
        tests_fuzz_validated.app, ref, MemoryRecorder, examples=100, seed=0,
        texts=("a@b.c", "DELETE"),
    )
    assert found.failure == "RuntimeError: a confirmed delete crashes"


@pytest.mark.parametrize(
    ("texts", "error", "said"),
    [
        ("DELETE", ValueError, "texts: expected a list of texts, got the text 'DELETE'"),
        (7, TypeError, "texts: expected a list of strs, got int 7"),
        (["a", 7], TypeError, "texts[1]: expected a str, got int 7"),
    ],
)
def test_texts_that_are_not_a_list_of_strs_are_refused_naming_the_argument(
    texts: object, error: type[Exception], said: str
) -> None:
    import tests_fuzz_validated

    from semledger.replay import fuzz_app

    with pytest.raises(error) as raised:
        fuzz_app(
            tests_fuzz_validated.app, "tests_fuzz_validated:app", MemoryRecorder,
            texts=texts,  # type: ignore[arg-type]
        )
    assert str(raised.value) == said


def test_a_text_utf8_cannot_encode_is_refused_before_fuzzing_naming_it() -> None:
    """It was typed into the app, which the fuzzer reported as the app's bug, and then
    blamed the log that could not hold it (CounterexampleNotSavedError)."""
    import tests_fuzz_validated

    from semledger.replay import fuzz_app

    opened: list[object] = []
    with pytest.raises(ValueError, match="lone surrogate") as raised:
        fuzz_app(
            tests_fuzz_validated.app, "tests_fuzz_validated:app",
            lambda: opened.append(1),  # type: ignore[arg-type, func-returns-value]
            texts=["a@b.c", "\ud800abc"],
        )  # fmt: skip
    assert str(raised.value) == (
        "texts[1]: '\\ud800abc' is not UTF-8 (it holds a lone surrogate), which the log"
        " cannot hold"
    )
    assert not opened


def test_fuzz_types_the_values_given_with_text(tmp_path: Path) -> None:
    import stdio_client as mcp

    db = str(tmp_path / "fuzz.db")
    args = ("fuzz", "tests_fuzz_validated:app", "--db", db, "--seed", "0")
    done = mcp.cli_in_process(*args, "--text", "a@b.c", "--text", "DELETE")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "RuntimeError: a confirmed delete crashes" in done.stdout


@pytest.mark.parametrize("seed", range(2))
def test_a_text_counterexample_shrinks_to_the_shortest_text_that_fails(seed: int) -> None:
    """Long text was 13 to 300 characters long, and a counterexample drawn there never left
    it: any text with an @ failing was reported as '000000000000@'."""
    import tests_fuzz_at_sign

    from semledger.replay import fuzz_app

    result = fuzz_app(
        tests_fuzz_at_sign.app, "tests_fuzz_at_sign:app", MemoryRecorder, examples=100, seed=seed
    )
    assert result.failure == "ValueError: cannot take '@'"
