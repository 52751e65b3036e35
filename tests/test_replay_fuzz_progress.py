"""What `semledger fuzz` shows while it runs, and what a Ctrl-C keeps: a counterexample
found is shrunk in a phase of its own, and one interrupted there is saved all the same."""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from semledger.eventlog import MemoryRecorder, SessionCrashed, SqliteRecorder

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp


def test_a_counterexample_is_shrunk_in_a_phase_of_its_own_counted_from_one() -> None:
    import tests_buggy

    from semledger.replay import fuzz_app

    seen: list[tuple[int, int | None]] = []
    result = fuzz_app(
        tests_buggy.app,
        "tests_buggy:app",
        MemoryRecorder,
        examples=200,
        seed=3,
        on_progress=lambda done, total: seen.append((done, total)),
    )
    assert result.failure is not None
    shrinking = seen.index((1, None))
    assert all(total == 200 and done <= 200 for done, total in seen[:shrinking])
    assert seen[shrinking:] == [(n, None) for n in range(1, len(seen) - shrinking + 1)]


def test_the_count_says_all_examples_run_only_as_the_last_one_runs() -> None:
    """Hypothesis starts examples it discards (their data ran out) and does not count:
    counted, the line said 600/600 for the last fifth of a gallery run, finished or hung."""
    from semledger.examples import gallery
    from semledger.replay import fuzz_app

    seen: list[int] = []
    fuzz_app(
        gallery.app, "semledger.examples.gallery:app", MemoryRecorder, examples=60, seed=0,
        allow_issues=["duplicate_semantic_id:gallery.duplicate"],
        on_progress=lambda done, _total: seen.append(done),
    )  # fmt: skip
    discarded = len(seen) - 60
    assert discarded > 0  # this run has some: a precondition, not the behaviour
    assert seen == sorted(seen)
    assert seen[-1] == 60
    assert seen.count(60) < 1 + discarded  # the discarded ones are not all counted at the end


def test_screens_that_differ_count_the_example_they_were_seen_in() -> None:
    """Hypothesis raised as that example ran, and it was not counted: "found by example 11
    of 20" where the bar had shown the 12th running."""
    from tests_fuzz_screens import app

    from semledger.replay import fuzz_app

    shown: list[int] = []
    result = fuzz_app(
        app, "tests_fuzz_screens:app", MemoryRecorder, examples=20, seed=3,
        on_progress=lambda done, total: shown.append(done) if total is not None else None,
    )  # fmt: skip
    assert result.failure is not None
    assert result.failure.startswith("the app is not deterministic: the same inputs led to")
    assert result.session is None
    assert result.examples == shown[-1]


@pytest.mark.parametrize(
    ("session", "interrupted", "said"),
    [
        ("fuzz-1", False, "found by example 12 of 20, then shrunk"),
        (None, False, "found by example 12 of 20"),  # nothing saved: nothing shrunk either
        ("fuzz-1", True, "found by example 12 of 20"),  # stopped while it was shrunk
    ],
)
def test_a_counterexample_says_it_was_shrunk_only_when_it_was(
    tmp_path: Path, session: str | None, interrupted: bool, said: str
) -> None:
    from semledger._cli import _print_counterexample
    from semledger.replay import FuzzResult

    console = Console(file=io.StringIO(), width=200)
    result = FuzzResult(12, "ValueError: no", session)
    _print_counterexample(console, result, str(tmp_path / "log.db"), 20, shrunk=not interrupted)
    assert console.file.getvalue().splitlines()[1] == said  # type: ignore[attr-defined]


class _BrokenBarError(Exception):
    pass


@pytest.mark.parametrize(("app_ref", "breaks_at"), [
    ("semledger.examples.counter:app", (5, 20)),  # an app without bugs
    ("tests_buggy:app", (2, None)),  # while a counterexample is shrunk
])  # fmt: skip
def test_a_progress_callback_that_raises_stops_the_run_with_its_own_error(
    app_ref: str, breaks_at: tuple[int, int | None]
) -> None:
    """Hypothesis took the callback's error for the app's failure, ran the example again,
    which passed, and the app was reported not deterministic, nothing saved. One that
    breaks while a counterexample is shrunk does not lose it."""
    from semledger.replay import fuzz_app, load_app

    def progress(done: int, total: int | None) -> None:
        if (done, total) == breaks_at:
            raise _BrokenBarError("the progress bar broke")

    recorder = MemoryRecorder()
    with pytest.raises(_BrokenBarError, match="the progress bar broke") as raised:
        fuzz_app(
            load_app(app_ref), app_ref, lambda: recorder, examples=20, seed=3,
            on_progress=progress,
        )  # fmt: skip
    saved = [summary.name for summary in recorder.sessions()]
    if breaks_at[1] is not None:  # no counterexample yet: nothing to save
        assert saved == []
        assert not hasattr(raised.value, "__notes__")
    else:  # the one being shrunk is saved, and the error says where
        (name,) = saved
        assert raised.value.__notes__ == [
            "on_progress raised while a counterexample was shrunk: the smallest found so far"
            f" is saved as session {name!r}"
        ]


def test_the_bar_shows_shrinking_not_a_full_bar_once_a_counterexample_is_found() -> None:
    from semledger._cli import _progress

    console = Console(file=io.StringIO(), force_terminal=True, width=100)
    with _progress(console, "fuzzing", True, then="shrinking: {done} tries") as progress:
        progress(100, 100)
        progress(1, None)
        progress(2, None)
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", console.file.getvalue())  # type: ignore[attr-defined]
    after = shown[shown.index("shrinking") :]
    assert "shrinking: 2 tries" in after
    assert "100%" not in after


def test_an_interrupt_while_shrinking_saves_the_smallest_counterexample_so_far() -> None:
    import tests_buggy

    from semledger.replay import fuzz_app
    from semledger.replay._fuzz import FuzzInterrupted

    log = MemoryRecorder()

    def interrupt_shrinking(done: int, total: int | None) -> None:
        if total is None and done == 3:
            raise KeyboardInterrupt

    with pytest.raises(FuzzInterrupted) as interrupted:
        fuzz_app(
            tests_buggy.app, "tests_buggy:app", lambda: log, examples=200, seed=3,
            on_progress=interrupt_shrinking,
        )  # fmt: skip
    found = interrupted.value.result
    assert found.failure is not None
    assert found.session is not None
    assert found.session in str(interrupted.value)
    events = [e for _r, e in log.events(found.session)]
    assert isinstance(events[-1], SessionCrashed)


def test_the_result_counts_the_examples_run_up_to_the_first_that_failed() -> None:
    """It said all the examples asked for, though the failure came at the seventh, and
    after an interrupt it counted hypothesis's tries at shrinking too."""
    import tests_buggy

    from semledger.replay import FuzzInterrupted, fuzz_app

    seen: list[tuple[int, int | None]] = []

    def interrupt_shrinking(done: int, total: int | None) -> None:
        seen.append((done, total))
        if (done, total) == (20, None):
            raise KeyboardInterrupt

    result = fuzz_app(
        tests_buggy.app, "tests_buggy:app", MemoryRecorder, examples=200, seed=3,
        on_progress=lambda done, total: seen.append((done, total)),
    )  # fmt: skip
    failed_at = max(done for done, total in seen if total is not None)
    assert failed_at < 200  # a precondition: it failed early
    assert result.examples == failed_at
    seen.clear()
    with pytest.raises(FuzzInterrupted) as interrupted:
        fuzz_app(
            tests_buggy.app, "tests_buggy:app", MemoryRecorder, examples=200, seed=3,
            on_progress=interrupt_shrinking,
        )  # fmt: skip
    assert interrupted.value.result.examples == failed_at


def test_ctrl_c_before_any_counterexample_says_how_many_examples_passed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """It said only "semledger: interrupted"."""
    from semledger import _cli

    shown = _cli._Lines.__call__

    def press_ctrl_c(self: _cli._Lines, done: int, total: int | None) -> None:
        if done == 12:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)  # a signal interrupts the sleep: its handler runs here
        shown(self, done, total)

    monkeypatch.setattr(_cli._Lines, "__call__", press_ctrl_c)
    db = tmp_path / "fuzz.db"
    try:
        status: int | BaseException = _cli.main(
            ["fuzz", "semledger.examples.counter:app", "--db", str(db)]
        )
    except BaseException as error:  # a bare KeyboardInterrupt would end pytest's run
        status = error
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    out, err = capsys.readouterr()
    assert status == 130, err
    assert out == ""
    assert err == "semledger: interrupted: 11 of 100 examples passed, no counterexample\n"
    assert not db.exists()


def test_an_interrupt_before_any_counterexample_saves_nothing() -> None:
    from semledger.examples import counter
    from semledger.replay import fuzz_app
    from semledger.replay._fuzz import FuzzInterrupted

    def interrupt(done: int, _total: int | None) -> None:
        if done == 3:
            raise KeyboardInterrupt

    opened: list[object] = []
    with pytest.raises(KeyboardInterrupt) as interrupted:
        fuzz_app(
            counter.app, "semledger.examples.counter:app", lambda: opened.append(1),  # type: ignore[arg-type, func-returns-value]
            on_progress=interrupt,
        )  # fmt: skip
    assert not isinstance(interrupted.value, FuzzInterrupted)
    assert not opened


def test_ctrl_c_while_shrinking_saves_the_counterexample_and_says_so(tmp_path: Path) -> None:
    """It printed only "semledger: interrupted" and saved nothing."""
    ready = tmp_path / "ready"
    db = tmp_path / "fuzz.db"
    fuzzing = subprocess.Popen(
        [*mcp.COMMAND, "fuzz", "tests_fuzz_slow_shrink:app", "--db", str(db)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=mcp.env(SEMLEDGER_TEST_READY=str(ready), COLUMNS="300"),
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    try:
        while not ready.exists() and fuzzing.poll() is None:  # the first crash: shrinking
            time.sleep(0.02)
        fuzzing.send_signal(signal.SIGINT)
        out, err = fuzzing.communicate(timeout=60)
    finally:
        fuzzing.kill()
    assert fuzzing.returncode == 130, out + err
    assert err.endswith(
        "semledger: interrupted while shrinking the counterexample: the one saved is the"
        " smallest found so far\n"
    )
    assert "counterexample: FifthClickError: the count reached 5\n" in out
    found = re.search(r"saved as session '([^']+)': semledger replay (\S+) --db (\S+)\n", out)
    assert found is not None, out
    assert found.group(2) == found.group(1)
    assert found.group(3) == str(db)
    with SqliteRecorder(db) as recorder:
        events = [e for _r, e in recorder.events(found.group(1))]
    assert isinstance(events[-1], SessionCrashed)


def test_without_a_terminal_progress_is_a_plain_line_on_stderr_every_few_seconds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`semledger fuzz APP --examples 20000 2>err >out` wrote nothing for minutes."""
    from semledger import _cli

    fuzz = ["fuzz", "semledger.examples.counter:app", "--examples", "5"]
    assert _cli.main([*fuzz, "--db", str(tmp_path / "quick.db")]) == 0
    assert capsys.readouterr() == ("5 examples, no counterexample\n", "")  # a few seconds: none
    assert _cli.main([*fuzz[:-1], "1", "--db", str(tmp_path / "quick.db")]) == 0
    assert capsys.readouterr() == ("1 example, no counterexample\n", "")

    monkeypatch.setattr(_cli, "_PLAIN_EVERY", 0.0, raising=False)
    assert _cli.main([*fuzz, "--db", str(tmp_path / "fuzz.db")]) == 0
    out, err = capsys.readouterr()
    assert out == "5 examples, no counterexample\n"
    lines = err.splitlines()
    assert lines[:1] == ["semledger: fuzzing: 1/5 examples"]
    assert all(re.fullmatch(r"semledger: fuzzing: [1-5]/5 examples", line) for line in lines)

    db = tmp_path / "log.db"
    mcp.serve("semledger.examples.counter:app", db, "s", [mcp.perform(1, "counter.increment")])
    assert _cli.main(["replay", "s", "--db", str(db)]) == 0
    lines = capsys.readouterr().err.splitlines()
    assert lines
    assert all(re.fullmatch(r"semledger: replaying: \d+/\d+ events", line) for line in lines)


def _at_a_terminal(*args: str, columns: int) -> str:
    """What ``semledger ARGS`` writes to a terminal `columns` wide, its escapes left in."""
    return mcp.at_a_terminal(*args, columns=columns)[1]


def test_at_a_terminal_the_replay_hint_is_one_plain_line_and_the_app_s_escapes_are_shown_escaped(
    tmp_path: Path,
) -> None:
    """rich wrapped the hint mid-command at the terminal's width and coloured the digits of
    the session name; the app's error reached the terminal with its escape codes."""
    db = tmp_path / "a-rather-long-folder-name-for-the-log" / "fuzz.db"
    db.parent.mkdir()
    shown = _at_a_terminal("fuzz", "tests_fuzz_escapes:app", "--db", str(db), columns=60)
    found = re.search(r"saved as session '([^']+)': semledger replay \S+ --db \S+\r\n", shown)
    assert found is not None, shown
    assert found.group(0) == (
        f"saved as session '{found.group(1)}': semledger replay {found.group(1)} --db {db}\r\n"
    )
    assert "\\x1b[31mred\\x1b[0m\\nsecond line" in shown
    assert "\x1b[31mred" not in shown


def test_the_shrinking_line_counts_tries_in_words_that_read_for_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """It said "shrinking a counterexample: 1 tries"."""
    from semledger import _cli

    monkeypatch.setattr(_cli, "_PLAIN_EVERY", 0.0)
    fuzz = ["fuzz", "tests_buggy:app", "--examples", "200", "--seed", "3"]
    assert _cli.main([*fuzz, "--db", str(tmp_path / "fuzz.db")]) == 1
    lines = capsys.readouterr().err.splitlines()
    shrinking = [line for line in lines if not line.startswith("semledger: fuzzing: ")]
    assert shrinking[:2] == [
        "semledger: shrinking a counterexample: try 1",
        "semledger: shrinking a counterexample: try 2",
    ]


class _InterruptedAsItSaves(MemoryRecorder):
    """A log whose append gets two more Ctrl-C, as a user pressing it again would."""

    def append(self, batch):  # type: ignore[no-untyped-def]
        os.kill(os.getpid(), signal.SIGINT)
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)  # a signal interrupts the sleep: its handler runs here
        return super().append(batch)


def test_ctrl_c_pressed_again_while_the_counterexample_is_saved_is_absorbed() -> None:
    """The second Ctrl-C raised a KeyboardInterrupt inside the save: nothing was saved."""
    import tests_buggy

    from semledger.replay import FuzzInterrupted, fuzz_app

    log = _InterruptedAsItSaves()

    def press_ctrl_c_while_shrinking(done: int, total: int | None) -> None:
        if total is None and done == 3:
            os.kill(os.getpid(), signal.SIGINT)

    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    interrupted: BaseException | None = None
    try:
        fuzz_app(
            tests_buggy.app, "tests_buggy:app", lambda: log, examples=200, seed=3,
            on_progress=press_ctrl_c_while_shrinking,
        )  # fmt: skip
    except BaseException as error:  # a bare KeyboardInterrupt would end pytest's run
        interrupted = error
    assert isinstance(interrupted, FuzzInterrupted), repr(interrupted)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    found = interrupted.result
    assert found.session is not None
    assert isinstance([e for _r, e in log.events(found.session)][-1], SessionCrashed)


def test_fuzz_off_the_main_thread_leaves_sigint_alone() -> None:
    import tests_buggy

    from semledger.replay import FuzzInterrupted, fuzz_app

    handlers: list[object] = []
    raised: list[BaseException] = []

    def interrupt_shrinking(done: int, total: int | None) -> None:
        handlers.append(signal.getsignal(signal.SIGINT))
        if total is None and done == 3:
            raise KeyboardInterrupt

    def fuzz() -> None:
        try:
            fuzz_app(
                tests_buggy.app, "tests_buggy:app", MemoryRecorder, examples=200, seed=3,
                on_progress=interrupt_shrinking,
            )  # fmt: skip
        except BaseException as error:
            raised.append(error)

    worker = threading.Thread(target=fuzz)
    worker.start()
    worker.join()
    assert [type(e) for e in raised] == [FuzzInterrupted]
    assert set(handlers) == {signal.default_int_handler}


def test_ctrl_c_pressed_again_as_fuzz_prints_the_counterexample_is_ignored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """It cut the counterexample's replay hint off (or, as Python exited, ended the process
    by SIGINT in place of exit 130)."""
    from semledger import _cli

    shown = _cli._Lines.__call__
    printed = _cli._print_counterexample

    def press_ctrl_c_while_shrinking(self: _cli._Lines, done: int, total: int | None) -> None:
        if total is None and done == 3:
            os.kill(os.getpid(), signal.SIGINT)
        shown(self, done, total)

    def press_ctrl_c_again(*args: Any, **options: Any) -> None:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)  # a signal interrupts the sleep: its handler runs here
        printed(*args, **options)

    monkeypatch.setattr(_cli._Lines, "__call__", press_ctrl_c_while_shrinking)
    monkeypatch.setattr(_cli, "_print_counterexample", press_ctrl_c_again)
    db = tmp_path / "fuzz.db"
    try:
        status: int | BaseException = _cli.main(
            ["fuzz", "tests_buggy:app", "--seed", "3", "--db", str(db)]
        )
    except BaseException as error:  # a bare KeyboardInterrupt would end pytest's run
        status = error
    finally:
        ignored = signal.getsignal(signal.SIGINT)
        signal.signal(signal.SIGINT, signal.default_int_handler)
    out, err = capsys.readouterr()
    assert status == 130, err
    assert re.search(r"saved as session '([^']+)': semledger replay \S+ --db ", out), out
    assert err.endswith("the one saved is the smallest found so far\n"), err
    assert ignored is signal.SIG_IGN  # until the process exits
