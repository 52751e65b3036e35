"""`semledger fuzz` at its edges: parallel runs on one log, apps that misbehave, seeds and
logs it cannot use, app modules that do not import, hash seeds, and bugs several clicks deep."""

from __future__ import annotations

import importlib
import itertools
import os
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import pytest

from semledger.eventlog import (
    ActionRequested,
    EffectCompleted,
    EffectFailed,
    MemoryRecorder,
    NewEvent,
    Recorder,
    SequenceConflict,
    SessionCrashed,
    SessionEnded,
    SessionStarted,
    SqliteRecorder,
    StoredEvent,
)

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp
from stdio_client import cli_in_process as cli

_SAVED = re.compile(r"saved as session '([^']+)'")


def _fuzz(*args: str) -> subprocess.CompletedProcess[str]:
    return cli("fuzz", *args, columns=300)


def _counted_from_zero(monkeypatch: pytest.MonkeyPatch, module: str, counter: str) -> None:
    """The app of `module` counts its calls in a global, from 0 as a child imports it: an
    import of it in this process has counted on since."""
    monkeypatch.setattr(importlib.import_module(module), counter, itertools.count())


def _saved(done: subprocess.CompletedProcess[str]) -> str:
    found = _SAVED.search(done.stdout)
    assert found is not None, done.stdout + done.stderr
    return found.group(1)


def _assert_no_traceback(done: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr


def test_two_runs_in_the_same_second_with_the_same_seed_save_two_sessions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Parallel CI jobs on one log: the second counterexample is not lost to a name clash."""
    import tests_broken_start

    from semledger.replay import fuzz_app

    monkeypatch.setattr(time, "strftime", lambda *_args: "20260101-000000")
    db = tmp_path / "log.db"
    app = tests_broken_start.app
    first, second = (
        fuzz_app(app, "tests_broken_start:app", lambda: SqliteRecorder(db), examples=5, seed=7)
        for _ in range(2)
    )
    assert first.session is not None
    assert second.session is not None
    assert first.session != second.session
    with SqliteRecorder(db) as recorder:
        assert {s.name for s in recorder.sessions()} == {first.session, second.session}
        for name in (first.session, second.session):
            assert isinstance([e for _r, e in recorder.events(name)][-1], SessionCrashed)


class _TakenOnce:
    """A log where another job takes the first name this one tries, just before it."""

    def __init__(self, inner: SqliteRecorder) -> None:
        self.inner = inner
        self.refused: list[str] = []

    def append(self, events: Sequence[NewEvent]) -> list[StoredEvent]:
        if not self.refused:
            self.refused.append(events[0].session)
            raise SequenceConflict(events[0].session, 1, 2)
        return self.inner.append(events)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_a_session_name_taken_while_saving_is_retried_under_another(tmp_path: Path) -> None:
    import tests_broken_start

    from semledger.replay import fuzz_app

    with SqliteRecorder(tmp_path / "log.db") as inner:
        log = _TakenOnce(inner)
        result = fuzz_app(
            tests_broken_start.app, "tests_broken_start:app", lambda: cast(Recorder, log)
        )
        assert result.session is not None
        assert len(log.refused) == 1
        assert log.refused[0] != result.session
        assert [s.name for s in inner.sessions()] == [result.session]


def test_a_view_that_returns_no_view_is_a_counterexample_that_says_so(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    done = _fuzz("tests_fuzz_not_a_view:app", "--db", str(db), "--examples", "5")
    _assert_no_traceback(done)
    assert done.returncode == 1, done.stdout + done.stderr
    assert (
        "counterexample: NotAViewError: the app's view returned a list, not a semledger View"
        in done.stdout
    )
    with SqliteRecorder(db) as recorder:
        events = [e for _r, e in recorder.events(_saved(done))]
    assert isinstance(events[-1], SessionCrashed)
    assert events[-1].exception_type == "NotAViewError"
    replayed = cli("replay", _saved(done), "--db", str(db))
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "as it did live: NotAViewError(" in " ".join(replayed.stdout.split())


def test_an_app_error_that_cannot_be_turned_into_text_is_a_saved_counterexample(
    tmp_path: Path,
) -> None:
    """Its ``__str__`` raised, and so did fuzz, as it described the error: a traceback, and
    no counterexample saved."""
    import tests_fuzz_unprintable

    from semledger.replay import fuzz_app

    said = "UnprintableError: <str() raised ValueError>"
    db = tmp_path / "log.db"
    done = _fuzz("tests_fuzz_unprintable:app", "--db", str(db), "--examples", "20")
    _assert_no_traceback(done)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"counterexample: {said}\n" in done.stdout
    with SqliteRecorder(db) as recorder:
        events = [e for _r, e in recorder.events(_saved(done))]
    assert isinstance(events[-1], SessionCrashed)
    assert events[-1].exception_type == "UnprintableError"
    replayed = cli("replay", _saved(done), "--db", str(db))
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    log = MemoryRecorder()
    result = fuzz_app(
        tests_fuzz_unprintable.app, "tests_fuzz_unprintable:app", lambda: log, examples=20
    )
    assert result.failure == said
    assert result.session in {s.name for s in log.sessions()}


def test_fuzz_and_replay_print_the_start_of_a_long_error_message_and_its_length(
    tmp_path: Path,
) -> None:
    """An app error of 200,000 characters was printed whole, by fuzz and by replay."""
    db = tmp_path / "log.db"
    done = _fuzz("tests_fuzz_long_error:app", "--db", str(db), "--examples", "20")
    assert done.returncode == 1, done.stdout[:2000] + done.stderr[:2000]
    said = "".join(done.stdout.partition("found by example")[0].split())  # as wrapped
    assert said == "counterexample:ValueError:" + "x" * 488 + "…(200012characters)"
    replayed = cli("replay", _saved(done), "--db", str(db))
    assert replayed.returncode == 0, replayed.stdout[:2000] + replayed.stderr[:2000]
    assert "asitdidlive:ValueError('" + "x" * 488 + "…(200014characters)(at" in "".join(
        replayed.stdout.split()
    )
    assert len(replayed.stdout) < 2000


def test_replay_pdb_stops_where_the_runtime_refused_a_view_that_is_no_view(
    tmp_path: Path,
) -> None:
    """The app's error (NotAViewError) is made, never raised, so it has no traceback of its
    own: `--pdb` failed with pdb's "A valid traceback must be passed"."""
    db = tmp_path / "log.db"
    done = _fuzz("tests_fuzz_not_a_view:app", "--db", str(db), "--examples", "5")
    debugged = subprocess.run(
        [*mcp.COMMAND, "replay", _saved(done), "--db", str(db), "--pdb"],
        input="where\nq\n", capture_output=True, text=True, env=mcp.env(), timeout=120,
        check=False,
    )  # fmt: skip
    assert "valid traceback" not in debugged.stderr, debugged.stderr
    assert "(Pdb)" in debugged.stdout, debugged.stdout + debugged.stderr
    assert "_view" in debugged.stdout  # `where` lists the runtime's check of the view
    assert debugged.returncode == 0, debugged.stdout + debugged.stderr


def test_an_app_that_does_differently_on_the_same_inputs_is_reported_as_not_deterministic(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _counted_from_zero(monkeypatch, "tests_fuzz_impure", "_calls")
    db = tmp_path / "log.db"
    done = _fuzz("tests_fuzz_impure:app", "--db", str(db), "--examples", "50")
    _assert_no_traceback(done)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "counterexample: the app is not deterministic: at input 1, the same inputs gave" in (
        done.stdout
    )
    assert "EveryOtherCallError" in done.stdout
    with SqliteRecorder(db) as recorder:
        assert recorder.summary(_saved(done)) is not None


def test_subscriptions_that_differ_on_the_same_model_are_a_counterexample(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the first session's timers were looked at, each session asked once a model: a
    global flipped on every call gave each the same phase, and 300 examples found nothing."""
    _counted_from_zero(monkeypatch, "tests_fuzz_flipping_timers", "_calls")
    db = tmp_path / "log.db"
    done = _fuzz("tests_fuzz_flipping_timers:app", "--db", str(db), "--examples", "20")
    _assert_no_traceback(done)
    assert done.returncode == 1, done.stdout + done.stderr
    said = " ".join(done.stdout.split())
    assert (
        "counterexample: the app is not deterministic: as it started, the same model subscribed"
        " to [] once and [Every(seconds=1.0, message=Increment())] another time"
    ) in said


def test_an_app_whose_screens_differ_on_the_same_inputs_is_a_counterexample_though_it_never_fails(
    tmp_path: Path,
) -> None:
    """Its twin, given the same inputs, commits another snapshot; replaying the saved
    session then diverges, which is the failure reproduced."""
    db = tmp_path / "log.db"
    done = _fuzz("tests_fuzz_random:app", "--db", str(db), "--examples", "20")
    _assert_no_traceback(done)
    assert done.returncode == 1, done.stdout + done.stderr
    said = " ".join(done.stdout.split())
    assert "counterexample: the app is not deterministic: at input 1, the same inputs" in said
    assert "committed generation 2 with snapshot hash" in said
    replayed = cli("replay", _saved(done), "--db", str(db))
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert "DIVERGED at step 1" in replayed.stdout


def test_replay_and_export_of_a_nondeterminism_counterexample_say_it_was_recorded_so(
    tmp_path: Path,
) -> None:
    """Replay said a plain "DIVERGED at step 1" where the fuzzer had said "at input 2", and
    the exported test failed at random, neither saying that the session is a counterexample
    of nondeterminism, whose replay diverges at a step that varies from run to run."""
    import tests_fuzz_random
    from rich.console import Console

    from semledger._render import replay_verdict
    from semledger.replay import export_test, fuzz_app, reexecute

    db = tmp_path / "log.db"
    ref = "tests_fuzz_random:app"
    found = fuzz_app(tests_fuzz_random.app, ref, lambda: SqliteRecorder(db), examples=20)
    assert not found.deterministic, found
    assert found.session is not None
    with SqliteRecorder(db) as recorder:
        started = next(e for _r, e in recorder.events(found.session))
        report = reexecute(recorder, found.session, tests_fuzz_random.app)
        source = export_test(recorder, found.session)
    assert isinstance(started, SessionStarted)
    assert started.params["fuzz"]["deterministic"] is False
    assert report.nondeterministic, report
    console = Console(record=True, width=400)
    console.print(replay_verdict(report))
    said = console.export_text()
    assert (
        "the fuzzer recorded this session as nondeterministic (the app did not do the same on"
        " the same inputs): a replay is expected to diverge, at a step that varies from run to"
        ' run, or now and then not at all; the fuzzer\'s "input N" is step N here'
    ) in said, said
    docstring = " ".join(source.split('"""')[1].split())
    assert (
        "The fuzzer recorded this session as nondeterministic (the app did not do the same on"
        " the same inputs): while the bug is there, this test is expected to fail, at a step"
        " that varies from run to run, or now and then to pass."
    ) in docstring
    # A session saved before the fuzzer recorded it: its failure says so.
    from semledger.replay._invariants import recorded_nondeterministic

    assert recorded_nondeterministic({"fuzz": {"failure": "the app is not deterministic: at"}})
    assert not recorded_nondeterministic({"fuzz": {"failure": "ZeroDivisionError: by zero"}})
    assert not recorded_nondeterministic({})


def test_an_exported_nondeterminism_counterexample_fails_saying_it_was_recorded_so(
    tmp_path: Path,
) -> None:
    """Its docstring said so, but its failure ("step 1 differs") did not: the one note it
    could have was that of how the run hashed str, which sent the user after set order."""
    import tests_fuzz_random

    from semledger.replay import export_test, fuzz_app

    db = tmp_path / "log.db"
    found = fuzz_app(
        tests_fuzz_random.app, "tests_fuzz_random:app", lambda: SqliteRecorder(db), examples=20
    )
    assert not found.deterministic, found
    assert found.session is not None
    with SqliteRecorder(db) as recorder:
        source = export_test(recorder, found.session)
    assert "nondeterministic=True" in source
    module: dict[str, Any] = {}
    exec(compile(source, "exported", "exec"), module)
    (test,) = (v for k, v in module.items() if k.startswith("test_"))
    with pytest.raises(AssertionError, match=r"differs: output 1 was recorded as") as failed:
        test()  # the increment adds another random amount
    assert getattr(failed.value, "__notes__", [])[:1] == [
        "note: the fuzzer recorded this session as nondeterministic (the app did not do the same"
        " on the same inputs): while the bug is there, this test is expected to fail, at a step"
        " that varies from run to run, or now and then to pass"
    ]


_TRACE = """
import hashlib, sys
from semledger.actors import SessionCore
from semledger.eventlog import SqliteRecorder
from semledger.replay import fuzz_app, load_app

inputs = []
step = SessionCore.step

def traced(self, event, **kwargs):
    inputs.append(repr(event))
    return step(self, event, **kwargs)

SessionCore.step = traced
fuzz_app(load_app(sys.argv[1]), sys.argv[1], lambda: SqliteRecorder(sys.argv[2]), examples=20)
print(len(inputs), hashlib.sha256("\\n".join(inputs).encode()).hexdigest())
"""


def test_the_same_seed_explores_the_same_inputs_whatever_the_hash_seed(tmp_path: Path) -> None:
    """The counter's five semantic ids sit in a Map whose order follows PYTHONHASHSEED."""
    traces = {
        subprocess.run(
            [sys.executable, "-c", _TRACE, "semledger.examples.counter:app", str(tmp_path / "x")],
            capture_output=True,
            text=True,
            env=mcp.env(PYTHONHASHSEED=hash_seed),
            timeout=120,
            check=True,
        ).stdout
        for hash_seed in ("1", "2", "3")
    }
    assert len(traces) == 1, traces


@pytest.mark.parametrize("seed", [str(2**64), str(-(2**63) - 1)])
def test_a_seed_the_log_cannot_record_is_bad_usage(tmp_path: Path, seed: str) -> None:
    db = tmp_path / "log.db"
    done = _fuzz("tests_broken_start:app", "--db", str(db), "--seed", seed)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"semledger: --seed {seed}: expected a whole number from")
    assert not db.exists()


@pytest.mark.parametrize("seed", [str(2**64 - 1), str(-(2**63))])
def test_the_extreme_seeds_the_log_records_are_saved_with_the_counterexample(
    tmp_path: Path, seed: str
) -> None:
    db = tmp_path / "log.db"
    done = _fuzz("tests_broken_start:app", "--db", str(db), "--seed", seed)
    assert done.returncode == 1, done.stdout + done.stderr
    with SqliteRecorder(db) as recorder:
        started = next(e for _r, e in recorder.events(_saved(done)))
    assert isinstance(started, SessionStarted)
    assert started.params["fuzz"]["seed"] == int(seed)


@pytest.mark.parametrize("where", ["a missing folder", "a file that is not a log"])
def test_a_log_that_cannot_be_used_is_refused_before_fuzzing(tmp_path: Path, where: str) -> None:
    """A clean app would fuzz to the end and never open the log: the refusal comes first."""
    not_a_log = tmp_path / "notes.db"
    not_a_log.write_text("my notes\n")
    db = tmp_path / "no" / "log.db" if where == "a missing folder" else not_a_log
    done = _fuzz("semledger.examples.counter:app", "--db", str(db))
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert str(db) in done.stderr
    assert "examples" not in done.stdout
    assert not_a_log.read_text() == "my notes\n"


def test_a_log_that_may_only_be_read_is_refused_before_fuzzing_not_after_finding_a_bug(
    tmp_path: Path,
) -> None:
    """The run went to the end, found its counterexample, and lost it to 'attempt to write a
    readonly database' (exit 1, nothing on stdout)."""
    db = tmp_path / "log.db"
    SqliteRecorder(db).close()
    db.chmod(0o444)
    drop = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search,-fowner", "--"]
    done = subprocess.run(
        [*(drop if os.geteuid() == 0 else []), *mcp.COMMAND, "fuzz", "tests_crashy:app",
         "--db", str(db)],
        capture_output=True, text=True, env=mcp.env(), timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr == (
        f"semledger: cannot open the log {db}: attempt to write a readonly database\n"
    )
    assert done.stdout == ""


def test_a_clean_run_leaves_no_log_behind(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    done = _fuzz("semledger.examples.counter:app", "--db", str(db), "--examples", "5")
    assert done.returncode == 0, done.stdout + done.stderr
    assert not db.exists()


def _commands(db: Path) -> dict[str, list[str]]:
    app = "tests_fuzz_import_error:app"
    return {
        "fuzz": ["fuzz", app, "--db", str(db)],
        "serve": ["serve", app, "--db", str(db)],
        "serve a surface": ["serve", "--adapter", "runtime", "--app", app, "--db", str(db)],
        "replay": ["replay", "broken", "--db", str(db)],
    }


@pytest.mark.parametrize("command", list(_commands(Path("log.db"))))
def test_an_app_module_that_raises_as_it_is_imported_is_bad_usage_naming_it(
    tmp_path: Path, command: str
) -> None:
    db = tmp_path / "log.db"
    with SqliteRecorder(db) as recorder:
        started = SessionStarted("tests_fuzz_import_error:app", "runtime", {}, True)
        recorder.append([NewEvent("broken", 1, started, 0.0)])
    # serve is never run in this process: a child serves
    run = mcp.cli if command.startswith("serve") else cli
    done = run(*_commands(db)[command])
    _assert_no_traceback(done)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert "importing tests_fuzz_import_error raised RuntimeError: this module is broken" in (
        done.stderr
    )


@pytest.mark.parametrize("seed", ["0", "1", "2"])
def test_a_bug_seven_clicks_deep_is_found_with_the_default_example_count(
    tmp_path: Path, seed: str
) -> None:
    """The seventh Increment crashes; Reset and Decrement, listed first, undo the way there.
    The counterexample is shrunk to exactly the seven clicks."""
    db = tmp_path / "log.db"
    done = _fuzz("tests_fuzz_deep:app", "--db", str(db), "--seed", seed)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "counterexample: SeventhClickError: the count reached 7" in done.stdout
    with SqliteRecorder(db) as recorder:
        events = [e for _r, e in recorder.events(_saved(done))]
    clicks = [e for e in events if isinstance(e, ActionRequested)]
    assert len(clicks) == 7, clicks
    for click in clicks:
        assert click.target["id"] in ("7", "deep.increment"), click  # node 7 is Increment
        assert click.action == {"kind": "activate"}, click
    assert isinstance(events[-1], SessionCrashed)


def test_fuzz_steps_bounds_the_inputs_of_an_example(tmp_path: Path) -> None:
    """The command had no --steps, though fuzz_app takes steps=: six inputs cannot reach
    the seventh click the default 50 reach (as above, with seed 0)."""
    db = tmp_path / "log.db"
    done = _fuzz("tests_fuzz_deep:app", "--db", str(db), "--seed", "0", "--steps", "6")
    assert (done.returncode, done.stdout) == (0, "100 examples, no counterexample\n"), (
        done.stdout + done.stderr
    )
    assert not db.exists()


@pytest.mark.parametrize(
    ("given", "said"),
    [("0", "expected at least 1, got 0"), ("2.5", "expected a whole number, got '2.5'")],
)
def test_fuzz_steps_that_are_not_a_whole_number_from_1_are_bad_usage(
    tmp_path: Path, given: str, said: str
) -> None:
    done = _fuzz(
        "semledger.examples.counter:app", "--db", str(tmp_path / "log.db"), "--steps", given
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr == (
        f"semledger: argument --steps: {said} (see 'semledger fuzz --help')\n"
    )


def test_an_app_whose_first_screen_differs_now_and_then_is_told_in_one_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _counted_from_zero(monkeypatch, "tests_fuzz_start", "_builds")
    db = tmp_path / "log.db"
    done = _fuzz("tests_fuzz_start:app", "--db", str(db), "--examples", "30", "--seed", "1")
    _assert_no_traceback(done)
    assert done.returncode == 1, done.stdout + done.stderr
    said = " ".join(done.stdout.split())
    assert said.startswith("counterexample: the app is not deterministic: as it started, the same")
    assert said.count("not deterministic") == 1, said
    assert "one replay may do as the log says and show nothing; replay it a few times" in said


def test_a_bug_reached_only_when_effects_finish_is_found_and_replayed(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    done = _fuzz("tests_fuzz_effects:app", "--db", str(db), "--seed", "1")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "counterexample: SecondUploadError: upload 2 finished after another one" in done.stdout
    session = _saved(done)
    with SqliteRecorder(db) as recorder:
        events = [e for _r, e in recorder.events(session)]
    finished = [e.effect_id for e in events if isinstance(e, EffectCompleted)]
    assert len(finished) == 2, events  # shrunk: two uploads, each finished
    assert isinstance(events[-1], SessionCrashed)
    replayed = cli("replay", session, "--db", str(db), columns=200)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "raised again at step 4" in replayed.stdout


def test_an_effect_that_raises_is_a_counterexample_naming_it_that_replay_feeds_back(
    tmp_path: Path,
) -> None:
    """It was stepped as EffectFailed and the run went on: "no counterexample", exit 0,
    while the app was left waiting for a message that never came."""
    db = tmp_path / "log.db"
    done = _fuzz("tests_failing_effect:app", "--db", str(db), "--examples", "20")
    _assert_no_traceback(done)
    assert done.returncode == 1, done.stdout + done.stderr
    said = "effect 1 (backend.fetch) failed: ConnectionError: backend down"
    assert f"counterexample: {said}\n" in done.stdout
    session = _saved(done)
    with SqliteRecorder(db) as recorder:
        events = [e for _r, e in recorder.events(session)]
    [failed] = [e for e in events if isinstance(e, EffectFailed)]
    assert (failed.effect_id, failed.error) == (1, "ConnectionError: backend down")
    assert failed.traceback is not None
    assert "in _fetch" in failed.traceback  # where it raised, for the audit, as serve logs it
    assert isinstance(events[-1], SessionEnded)
    assert events[-1].reason == f"fuzz counterexample: {said}"
    # It replays identical even once fixed, which replay and the exported test said nowhere.
    exported = tmp_path / "test_exported.py"
    replayed = cli("replay", session, "--db", str(db), columns=300)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "identical" in replayed.stdout
    assert (
        f"the recorded failure, {said}, is an input of the session, which a replay feeds back"
        " as logged: it replays identical even once the effect is fixed; check a fix by"
        " fuzzing the app again"
    ) in replayed.stdout
    done = cli("replay", session, "--db", str(db), "--export-test", str(exported))
    assert done.returncode == 0, done.stdout + done.stderr
    docstring = " ".join(exported.read_text().split('"""')[1].split())
    assert (
        f"The session is a fuzz counterexample: '{said}'. An effect's failure is an input of the"
        " session, which this test feeds back as logged, so it passes whether or not the"
        " effect is fixed, and it has no FIXED switch: fuzz the app again to check a fix."
    ) in docstring
    assert "FIXED" not in exported.read_text().split('"""', 2)[2]
    audited = cli("audit", session, "--db", str(db), columns=300)
    assert "effect 1 (backend.fetch) failed at " in audited.stdout, audited.stdout


def test_effects_that_fail_and_say_so_or_never_finish_leave_the_fuzzer_going(
    tmp_path: Path,
) -> None:
    from tests_fuzz_effects import fixed

    from semledger.replay import fuzz_app

    result = fuzz_app(fixed, "tests_fuzz_effects:fixed", lambda: SqliteRecorder(tmp_path / "f.db"))
    assert (result.failure, result.session) == (None, None)


def test_an_effect_finishes_for_the_fuzzer_as_it_does_in_a_live_session() -> None:
    import tests_fuzz_effects as uploader
    import trio.testing

    from semledger.actors import effect_failure
    from semledger.replay._fuzz import _outcome
    from semledger.runtime import Effect

    def outcome(run: Any) -> tuple[bool, Any, BaseException | None]:
        clock = trio.testing.MockClock(autojump_threshold=0)
        ran = trio.run(_outcome, Effect(run), clock=clock)
        return cast(tuple[bool, Any, BaseException | None], ran)

    assert outcome(uploader._upload(3).run) == (True, uploader.Uploaded(3), None)
    finished, message, error = outcome(uploader._flaky)
    assert (finished, message, effect_failure(error)) == (
        True, None, "ConnectionError: the server hung up"
    )  # fmt: skip
    assert outcome(uploader._stuck) == (False, None, None)  # an hour of virtual time, at once


async def test_fuzzing_inside_a_trio_run_is_refused_before_it_starts() -> None:
    from semledger.examples import counter
    from semledger.replay import fuzz_app

    with pytest.raises(RuntimeError, match="call it outside a Trio run"):
        fuzz_app(counter.app, "semledger.examples.counter:app", MemoryRecorder)


def test_an_exported_nondeterminism_counterexample_says_it_fails_once_fixed_too(
    tmp_path: Path,
) -> None:
    """Run on the fixed app, its failure noted only that it fails "while the bug is there",
    which read as the bug being there still: it fails once fixed too, and cannot check a fix."""
    import tests_fuzz_random

    from semledger.replay import export_test, fuzz_app

    db = tmp_path / "log.db"
    found = fuzz_app(
        tests_fuzz_random.app, "tests_fuzz_random:app", lambda: SqliteRecorder(db), examples=20
    )
    assert found.session is not None, found
    assert not found.deterministic, found
    with SqliteRecorder(db) as recorder:
        source = export_test(recorder, found.session)
    fixed = source.replace("'tests_fuzz_random:app'", "'semledger.examples.counter:app'")
    assert fixed != source
    module: dict[str, Any] = {}
    exec(compile(fixed, "exported", "exec"), module)
    (test,) = (v for k, v in module.items() if k.startswith("test_"))
    with pytest.raises(AssertionError, match=r"differs: output 1 was recorded as") as failed:
        test()  # the fixed app adds the step, not a random amount
    assert (
        "note: once the app is fixed, this test fails too: the outputs it compares are those of"
        " the recorded run, which the app did not do the same again. It cannot check a fix (it"
        " has no FIXED switch): fuzz the app again to check one"
    ) in getattr(failed.value, "__notes__", [])
