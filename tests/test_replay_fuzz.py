"""The fuzzer: a buggy app yields a counterexample, saved as a session that replay reproduces."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import attrs
import pytest

from semledger.eventlog import MemoryRecorder, SessionCrashed, SqliteRecorder

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp
from stdio_client import cli_in_process as cli

COUNTER = "semledger.examples.counter:app"


def exported_test_of(source: str) -> Any:
    """The test function of an exported module, run in this process."""
    module: dict[str, Any] = {}
    exec(compile(source, "exported", "exec"), module)
    return next(v for k, v in module.items() if k.startswith("test_"))


def test_a_buggy_app_gets_a_counterexample_that_replay_reproduces(tmp_path: Path) -> None:
    db = tmp_path / "fuzz.db"
    done = cli(
        "fuzz",
        "tests_buggy:app",
        "--db",
        str(db),
        "--examples",
        "200",
        "--seed",
        "3",
        columns=200,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "counterexample:" in done.stdout
    found = re.search(r"saved as session '([^']+)'", done.stdout)
    assert found is not None, done.stdout
    assert "replay it a few times" not in done.stdout  # a deterministic bug replays every time
    session = found.group(1)
    with SqliteRecorder(db) as recorder:
        events = [e for _r, e in recorder.events(session)]
    assert isinstance(events[-1], SessionCrashed)
    # The app's traceback alone: not the fuzzer's failure it was re-run while handling.
    assert "hypothesis" not in events[-1].traceback.lower()
    assert "During handling" not in events[-1].traceback
    replayed = cli("replay", session, "--db", str(db), columns=200)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "raised again at step" in replayed.stdout


def test_fuzz_saves_its_counterexample_in_an_empty_file_as_serve_makes_it_a_log(
    tmp_path: Path,
) -> None:
    """`serve` and `SqliteRecorder(path)` make a log in an empty file; fuzz refused one
    (``it holds no semledger log``, exit 2), having opened an existing file only as a log."""
    db = tmp_path / "empty.db"
    db.touch()
    done = cli(
        "fuzz", "tests_buggy:app", "--db", str(db), "--examples", "200", "--seed", "3",
        columns=200,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    found = re.search(r"saved as session '([^']+)'", done.stdout)
    assert found is not None, done.stdout
    with SqliteRecorder(db, create=False) as recorder:
        assert isinstance([e for _r, e in recorder.events(found.group(1))][-1], SessionCrashed)


def test_replay_of_a_view_issue_counterexample_reproduces_it_and_diverges_once_it_is_fixed(
    tmp_path: Path,
) -> None:
    """Two nodes with one semantic id break no generation invariant; an agent aiming at
    that id is told it is ambiguous. The counterexample records the check that failed, and
    replay reproduces it as it does a crash: identical while the bug is there, diverging at
    that step once it is fixed (it said DIVERGED either way, "the view to report no issues"
    logged). A session served live with the same issue replays as it was: only the
    fuzzer's own sessions are held to it."""
    db = tmp_path / "fuzz.db"
    done = cli("fuzz", "tests_duplicated:app", "--db", str(db), columns=200)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "the view reports duplicate_semantic_id (semantic_id='counter.value'" in done.stdout
    found = re.search(r"saved as session '([^']+)'", done.stdout)
    assert found is not None, done.stdout
    session = found.group(1)
    with SqliteRecorder(db) as recorder:
        started = next(e for _r, e in recorder.events(session))
    step = started.params["fuzz"]["violated"]["step"]
    assert started.params["fuzz"]["violated"] == {"step": step, "check": "issues"}
    replayed = cli("replay", session, "--db", str(db), columns=300)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert f"; the recorded view issue at step {step} reproduced\n" in replayed.stdout
    assert "as recorded: step 2: the view reports duplicate_semantic_id" in replayed.stdout

    fixed = cli("replay", session, "--db", str(db), "--app", COUNTER, columns=300)
    assert fixed.returncode == 1, fixed.stdout + fixed.stderr
    assert f"DIVERGED at step {step} " in fixed.stdout
    assert "logged:   the view to report an issue, as the fuzzer recorded: at input" in fixed.stdout
    assert "replayed: the view reports none: the recorded view issue no longer happens" in (
        fixed.stdout
    )
    assert "if the bug is fixed, this divergence is the fix working" in fixed.stdout
    # What the fix changed there:
    assert "- node 14 'counter.value' (text) is missing" in fixed.stdout

    increments = [mcp.perform(n, "counter.increment") for n in (1, 2)]
    mcp.serve("tests_duplicated:app", db, "live", increments)
    live = cli("replay", "live", "--db", str(db), columns=200)
    assert live.returncode == 0, live.stdout + live.stderr
    assert "reproduced" not in live.stdout


def test_an_exported_view_issue_counterexample_passes_while_the_issue_is_there_and_fails_once_fixed(
    tmp_path: Path,
) -> None:
    """The exported test compared receipts and hashes only, never the view's issues: it
    neither checked that the recorded issue is there nor said, once it was fixed, that it
    no longer is."""
    import tests_duplicated

    from semledger.replay import export_test, fuzz_app

    db = tmp_path / "fuzz.db"
    found = fuzz_app(tests_duplicated.app, "tests_duplicated:app", lambda: SqliteRecorder(db))
    assert found.session is not None
    with SqliteRecorder(db) as recorder:
        source = export_test(recorder, found.session)
    assert "ALLOWED_ISSUES: list[str] = []" in source
    assert "VIOLATION = (2, 'issues')" in source
    assert "The fuzzer found a view issue at step 2:" in source
    assert "The test pins the recorded run, failure included" in source
    exported_test_of(source)()
    with pytest.raises(AssertionError, match="the recorded view issue no longer happens"):
        exported_test_of(source.replace("tests_duplicated:app", COUNTER))()


@pytest.mark.parametrize(
    "allowed", ["duplicate_semantic_id", "duplicate_semantic_id:counter.value"]
)
def test_an_issue_the_app_means_is_allowed_by_its_kind_or_its_semantic_id(
    tmp_path: Path, allowed: str
) -> None:
    db = tmp_path / "fuzz.db"
    # Unallowed, the duplicate is found by example 5 of 20 (seed 0): 20 show the allowance.
    done = cli(
        "fuzz", "tests_duplicated:app", "--db", str(db), "--allow-issue", allowed,
        "--examples", "20",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no counterexample" in done.stdout


def test_an_issue_about_another_semantic_id_is_still_a_counterexample_that_says_how_to_allow(
    tmp_path: Path,
) -> None:
    db = tmp_path / "fuzz.db"
    done = cli(
        "fuzz", "tests_duplicated:app", "--db", str(db),
        "--allow-issue", "duplicate_semantic_id:counter.step", columns=300,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "(if the app means it, allow it: duplicate_semantic_id:counter.value)" in done.stdout


def test_a_counterexample_found_with_an_allowed_issue_replays_with_it_allowed(
    tmp_path: Path,
) -> None:
    """The steps before the crash report the duplicate: replay checks the view as the
    fuzzer did, allowance included, and reaches the crash instead of diverging before."""
    db = tmp_path / "fuzz.db"
    allowed = "duplicate_semantic_id:counter.value"
    done = cli(
        "fuzz", "tests_duplicated_crash:app", "--db", str(db), "--allow-issue", allowed,
        "--examples", "200", columns=300,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "four is too many" in done.stdout
    found = re.search(r"saved as session '([^']+)'", done.stdout)
    assert found is not None, done.stdout
    with SqliteRecorder(db) as recorder:
        started = next(e for _r, e in recorder.events(found.group(1)))
    assert started.params["fuzz"]["allowed_issues"] == [allowed]
    replayed = cli("replay", found.group(1), "--db", str(db), columns=300)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "raised again at step" in replayed.stdout


@pytest.mark.parametrize(
    ("example", "shared"), [("todo", "todo.item"), ("gallery", "gallery.duplicate")]
)
def test_the_examples_pass_the_fuzzer_with_the_id_they_share_on_purpose_allowed(
    example: str, shared: str
) -> None:
    """Both give one semantic id to several nodes, to show agents ``target_ambiguous``;
    seed 4 adds two todos within 50 examples."""
    from semledger.replay import fuzz_app

    module = __import__(f"semledger.examples.{example}", fromlist=["app"])
    result = fuzz_app(
        module.app,
        f"semledger.examples.{example}:app",
        MemoryRecorder,
        examples=50,
        seed=4,
        allow_issues=[f"duplicate_semantic_id:{shared}"],
    )
    assert result.failure is None, result.failure


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (["duplicate_semantic_id:"], "'duplicate_semantic_id:': expected KIND or KIND:SEMANTIC_ID"),
        (["stale"], "'stale': expected KIND or KIND:SEMANTIC_ID"),
        ("duplicate_semantic_id", "expected a list of issues, got the text"),
    ],
)
def test_fuzz_app_refuses_an_allowed_issue_that_names_none(given: Any, said: str) -> None:
    from semledger.examples import counter
    from semledger.replay import fuzz_app

    with pytest.raises(ValueError, match=f"^allow_issues: {re.escape(said)}"):
        fuzz_app(counter.app, "semledger.examples.counter:app", MemoryRecorder, allow_issues=given)


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ({"allow_issues": None}, "allow_issues: expected a list of strs (KIND or KIND:SEMANTIC_ID)"
         ", got NoneType None"),
        ({"allow_issues": ["duplicate_semantic_id", 5]}, "allow_issues[1]: expected a str (KIND"
         " or KIND:SEMANTIC_ID), got int 5"),
        ({"on_progress": 5}, "on_progress: expected a function called as on_progress(done,"
         " total), or None, got int 5"),
    ],
)  # fmt: skip
def test_fuzz_app_refuses_allowed_issues_or_a_progress_of_another_type_naming_it(
    arguments: dict[str, Any], said: str
) -> None:
    """They raised "'NoneType' object is not iterable", "'int' object has no attribute
    'partition'" and, from the first example, "'int' object is not callable"."""
    from semledger.examples import counter
    from semledger.replay import fuzz_app

    with pytest.raises(TypeError, match=f"^{re.escape(said)}$"):
        fuzz_app(counter.app, COUNTER, MemoryRecorder, examples=1, **arguments)


@pytest.mark.parametrize(
    ("semantic_id", "problem"),
    [
        ("todo item", "must not contain whitespace or control character U+0020"),
        ("x" * 256, "is at most 255 UTF-8 bytes, got 256"),
    ],
)
def test_fuzz_app_refuses_an_allowed_issue_about_an_id_no_view_can_have(
    semantic_id: str, problem: str
) -> None:
    """A typo'd id (``todo item`` for ``todo.item``) was accepted, and allowed nothing."""
    from semledger.examples import counter
    from semledger.replay import fuzz_app

    given = f"duplicate_semantic_id:{semantic_id}"
    said = f"allow_issues: {given!r}: {semantic_id!r} is no semantic id: a semantic id {problem}"
    with pytest.raises(ValueError, match=f"^{re.escape(said)}$"):
        fuzz_app(counter.app, COUNTER, MemoryRecorder, allow_issues=[given])


@pytest.mark.parametrize("seed", [1.5, "0", True])
def test_a_seed_that_is_not_an_int_is_refused_at_once_as_a_type_error(seed: object) -> None:
    """It was tested for membership of a range 2**65 long, which walked it; then refused as
    a ValueError, where a wrong type is a TypeError."""
    from semledger.examples import counter
    from semledger.replay import fuzz_app

    with pytest.raises(TypeError, match=r"^seed: expected an int, got "):
        fuzz_app(counter.app, "semledger.examples.counter:app", MemoryRecorder, seed=seed)  # type: ignore[arg-type]


@pytest.mark.parametrize("cache", ["writable", "a file"])
def test_fuzzing_leaves_no_hypothesis_folder_where_it_is_run(tmp_path: Path, cache: str) -> None:
    """Hypothesis keeps caches in ``./.hypothesis``; the command is run in any folder. They
    go to the user's cache folder, built once rather than in three seconds of every run, or
    to a folder of the run's own where that cannot be made."""

    folder = tmp_path / "work"
    folder.mkdir()
    caches = tmp_path / "cache"
    if cache == "a file":
        caches.write_text("")
    environment = mcp.env(XDG_CACHE_HOME=str(caches))
    environment.pop("HYPOTHESIS_STORAGE_DIRECTORY", None)
    done = subprocess.run(
        [*mcp.COMMAND, "fuzz", "semledger.examples.counter:app", "--examples", "3",
         "--db", str(tmp_path / "fuzz.db")],
        cwd=folder, env=environment, capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert list(folder.iterdir()) == []
    if cache == "writable":
        assert any((caches / "semledger" / "hypothesis" / "constants").iterdir())


def test_an_app_without_bugs_gets_no_counterexample(tmp_path: Path) -> None:
    done = cli(
        "fuzz",
        "semledger.examples.counter:app",
        "--db",
        str(tmp_path / "f.db"),
        "--examples",
        "30",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no counterexample" in done.stdout


def test_fuzzing_reports_progress_and_leaves_no_log_when_nothing_fails(tmp_path: Path) -> None:
    from semledger.examples import counter
    from semledger.replay import fuzz_app

    seen: list[tuple[int, int | None]] = []
    opened: list[Path] = []

    def open_log() -> SqliteRecorder:
        opened.append(tmp_path / "log.db")
        return SqliteRecorder(opened[-1])

    result = fuzz_app(
        counter.app,
        "semledger.examples.counter:app",
        open_log,
        examples=8,
        on_progress=lambda done, total: seen.append((done, total)),
    )
    assert result.failure is None
    assert [done for done, _ in seen] == list(range(1, len(seen) + 1))
    assert seen[0] == (1, 8)
    assert not opened


def test_a_bad_read_found_by_fuzzing_is_reproduced_by_replay_until_it_is_fixed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reads are not logged inputs: the counterexample keeps the reads it checked, and
    replay makes them again after the same inputs. The bad read is its recorded failure,
    reproduced as a crash is: replay and the exported test pass while it is there, and
    diverge (fail) once it is fixed; they reported it as a divergence instead, and passed
    once it was fixed."""
    from semledger.examples import counter
    from semledger.replay import export_test, fuzz_app, reexecute
    from semledger.runtime import AppRuntime, Unchanged

    honest_read = AppRuntime.read

    def stale_read(self: AppRuntime[Any, Any], since: int | None = None) -> Any:
        # The bug: a read from the generation just before the current one says Unchanged.
        if since is not None and since == self.generation - 1:
            return Unchanged(self.generation)
        return honest_read(self, since)

    monkeypatch.setattr(AppRuntime, "read", stale_read)
    db = tmp_path / "fuzz.db"
    result = fuzz_app(
        counter.app,
        "semledger.examples.counter:app",
        lambda: SqliteRecorder(db),
        examples=200,
        seed=1,
    )
    assert result.failure is not None, result
    assert "gave Unchanged" in result.failure
    assert result.session is not None
    with SqliteRecorder(db) as recorder:
        report = reexecute(recorder, result.session, counter.app)
        assert report.ok, report
        assert report.violation is not None
        assert report.violation.check == "read"
        assert "gave Unchanged" in str(report.violation)
        assert report.violation_step == report.inputs
        assert report.reproduced == "bad read"
        exported: dict[str, Any] = {}
        exec(compile(export_test(recorder, result.session), "exported", "exec"), exported)
        assert exported["READS"]
        assert exported["VIOLATION"] == (report.inputs, "read")
        test = next(f for name, f in exported.items() if name.startswith("test_"))
        test()

        monkeypatch.setattr(AppRuntime, "read", honest_read)  # the bug, fixed
        fixed = reexecute(recorder, result.session, counter.app).divergence
        assert fixed is not None
        assert (fixed.step, fixed.expected.split(",")[0]) == (
            report.inputs, "a read invariant to break"
        )  # fmt: skip
        assert fixed.actual == "the reads held: the recorded bad read no longer happens"
        with pytest.raises(AssertionError, match="the recorded bad read no longer happens"):
            test()


def test_an_app_with_timers_is_fuzzed_with_their_ticks_too(tmp_path: Path) -> None:
    """The fourth tick of a subscribed timer makes the app raise: only ticks reach it."""
    from semledger.replay import fuzz_app, reexecute
    from semledger.runtime import App, Every, group, text

    def update(ticks: int, msg: str) -> int:
        if ticks == 3:
            raise RuntimeError("the fourth tick")
        return ticks + 1

    app: App[int, str] = App(
        init=lambda: 0,
        update=update,
        view=lambda ticks: group(text("ticks", str(ticks)), label="clock"),
        subscriptions=lambda _ticks: [Every(1.0, "tick")],
    )
    db = tmp_path / "fuzz.db"
    result = fuzz_app(app, "clock_app:clock", lambda: SqliteRecorder(db), examples=100, seed=2)
    assert result.failure == "RuntimeError: the fourth tick", result
    assert result.session is not None
    with SqliteRecorder(db) as recorder:
        inputs = [e for _r, e in recorder.events(result.session) if type(e).__name__ in (
            "TimerFired", "ActionRequested"
        )]
        assert [type(e).__name__ for e in inputs] == ["TimerFired"] * 4  # shrunk to the ticks
        report = reexecute(recorder, result.session, app)
    assert report.crash_step == 4


@attrs.frozen
class Unlisted:
    """A timer message the app does not list in message_types: the log cannot record it."""


def _crash_step_replayed(db: Path, result: Any, app: Any) -> int | None:
    """The step at which replay of the saved counterexample `result` (a session that crashed
    on the record) raised again, having found every commit as logged."""
    from semledger.replay import reexecute

    assert result.session is not None
    with SqliteRecorder(db) as recorder:
        events = [e for _r, e in recorder.events(result.session)]
        assert isinstance(events[-1], SessionCrashed)
        report = reexecute(recorder, result.session, app)
    assert report.ok, report
    return report.crash_step


def test_a_timer_message_the_log_cannot_record_is_a_counterexample_replay_reproduces(
    tmp_path: Path,
) -> None:
    from semledger.replay import fuzz_app
    from semledger.runtime import App, Every, group, text

    app: App[int, object] = App(
        init=lambda: 0,
        update=lambda ticks, _msg: ticks + 1,
        view=lambda ticks: group(text("ticks", str(ticks)), label="clock"),
        subscriptions=lambda _ticks: [Every(1.0, Unlisted())],
    )
    db = tmp_path / "fuzz.db"
    result = fuzz_app(app, "clock_app:clock", lambda: SqliteRecorder(db), examples=50, seed=1)
    assert result.failure is not None
    assert result.failure.startswith("MessageCodecError"), result
    assert _crash_step_replayed(db, result, app) == 1


def test_an_effect_result_of_an_int_beyond_64_bits_is_a_counterexample_replay_reproduces(
    tmp_path: Path,
) -> None:
    """The codec passed a bare int through unchecked and nothing in the fuzzer packs it: "no
    counterexample", while a live session of the app failed writing its log."""
    from semledger.replay import fuzz_app
    from semledger.runtime import App, Effect, Next, button, group

    async def big() -> int:
        return 2**70

    app: App[int, object] = App(
        init=lambda: 0,
        update=lambda loads, msg: Next(loads + 1, (Effect(big),) if msg == "load" else ()),
        view=lambda _loads: group(button("load", "load"), label="form"),
    )
    db = tmp_path / "fuzz.db"
    result = fuzz_app(app, "form_app:form", lambda: SqliteRecorder(db), examples=20, seed=1)
    assert result.failure == (
        f"MessageCodecError: an int message cannot be logged: {2**70} does not fit in 64 bits,"
        " which the log carries"
    ), result
    assert _crash_step_replayed(db, result, app) == 2


def test_a_timer_whose_message_has_no_repr_is_a_counterexample_on_its_message() -> None:
    """The fuzzer showed the timers by their repr before it ticked them, which raised for an
    int str() refuses (over 4300 digits): the counterexample was that ValueError, on no
    input."""
    from semledger.replay import fuzz_app
    from semledger.runtime import App, Every, group, text

    app: App[int, object] = App(
        init=lambda: 0,
        update=lambda ticks, _msg: ticks + 1,
        view=lambda ticks: group(text("ticks", str(ticks)), label="clock"),
        subscriptions=lambda _ticks: [Every(1.0, 10**5000)],
    )
    result = fuzz_app(app, "clock_app:clock", MemoryRecorder, examples=5, seed=1)
    assert result.failure == (
        "MessageCodecError: an int message cannot be logged: an int of 16610 bits does not fit"
        " in 64 bits, which the log carries"
    ), result


REASON = "Unlisted is not among the app's message_types, so the log cannot record it"


def saving_unlisted(*, listed: bool = False) -> Any:
    """An app whose save button starts an effect that gives an `Unlisted` message, which it
    does not list in its message_types (its bug) unless `listed`."""
    from semledger.runtime import App, Effect, Next, button, group

    async def unlisted() -> Unlisted:
        return Unlisted()

    return App(
        init=lambda: 0,
        update=lambda saves, _msg: Next(saves + 1, (Effect(unlisted),)),
        view=lambda _saves: group(button("save", "save"), label="form"),
        message_types=(Unlisted,) if listed else (),
    )


def saved_unlisted_counterexample(db: Path) -> str:
    from semledger.replay import fuzz_app

    found = fuzz_app(saving_unlisted(), "form_app:form", lambda: SqliteRecorder(db), seed=1)
    assert found.failure == f"MessageCodecError: {REASON}", found
    assert found.session is not None
    return found.session


def test_a_counterexample_on_an_unrecordable_effect_result_logs_the_reason_a_live_session_does(
    tmp_path: Path,
) -> None:
    """Saving it stepped the logged input again, whose message is None: the crash (audit,
    replay) said "not an encoded message: None", raised in the fuzzer's saving code, where a
    live session logs the encoder's reason, raised where the message was delivered."""
    from semledger.actors import MessageCodecError
    from semledger.replay import reexecute

    db = tmp_path / "fuzz.db"
    session = saved_unlisted_counterexample(db)
    with SqliteRecorder(db) as recorder:
        crashed = [e for _r, e in recorder.events(session)][-1]
        report = reexecute(recorder, session, saving_unlisted())
    assert isinstance(crashed, SessionCrashed)
    assert crashed.traceback.endswith(f"MessageCodecError: {REASON}\n"), crashed.traceback
    assert "in _deliver\n" in crashed.traceback
    assert "_outputs" not in crashed.traceback
    assert report.ok, report
    assert isinstance(report.crash, MessageCodecError)
    assert str(report.crash) == REASON


def test_replay_and_export_of_a_crash_on_an_unrecordable_message_do_not_promise_to_catch_a_fix(
    tmp_path: Path,
) -> None:
    """Replay feeds back the None logged for the message, not the effect's result: the crash
    reproduces even once the app lists the message. Both said that once the bug is fixed,
    the replay diverges and the exported test fails."""
    from rich.console import Console

    from semledger._render import replay_verdict
    from semledger.replay import export_test, reexecute

    db = tmp_path / "fuzz.db"
    session = saved_unlisted_counterexample(db)
    with SqliteRecorder(db) as recorder:
        fixed = reexecute(recorder, session, saving_unlisted(listed=True))
        source = export_test(recorder, session)
    assert fixed.ok, fixed
    assert fixed.unrecorded
    console = Console(record=True, width=300)
    console.print(replay_verdict(fixed))
    said = console.export_text()
    assert "once the bug is fixed" not in said
    assert "the application raised again" not in said  # the encoder did, not the app
    assert "the step raised again at step 2, as it did live: MessageCodecError(" in said
    assert (
        "the crash is on a message the log could not record: replay feeds none back, so it"
        " reproduces even once the app is fixed; check a fix by fuzzing the app again or"
        " running it"
    ) in said
    docstring = " ".join(source.split('"""')[1].split())
    assert "fails once it is fixed" not in docstring
    assert (
        "The session crashed at step 2 on a message the log could not record: the test feeds"
        " none back, so it raises there again even once the app is fixed, and cannot confirm"
        " a fix: check one by fuzzing the app again or running it."
    ) in docstring
    assert "FIXED =" not in source  # a switch set True would fail on the app fixed


@pytest.mark.parametrize("reads", [None, 5, [[1]], "ab", [[1.5, 2]], [[True, 3]], [[-1, 0]]])
def test_malformed_fuzz_reads_in_a_session_are_a_clear_usage_error(
    tmp_path: Path, reads: object
) -> None:
    from semledger.eventlog import NewEvent, SessionStarted
    from semledger.replay._invariants import recorded_reads

    with pytest.raises(ValueError, match=r"params\['fuzz'\]\['reads'\]"):
        recorded_reads({"fuzz": {"reads": reads}})
    if reads is not None:
        return
    db = tmp_path / "log.db"
    app = "semledger.examples.counter:app"
    with SqliteRecorder(db) as recorder:
        params = {"fuzz": {"reads": reads}}
        recorder.append([NewEvent("s", 1, SessionStarted(app, "runtime", params, True), 0.0)])
    done = cli("replay", "s", "--db", str(db))
    assert done.returncode == 2, done.stderr
    assert "params['fuzz']['reads']" in done.stderr


@pytest.mark.parametrize(
    "violated",
    [None, 3, {"step": 1}, {"step": -1, "check": "issues"}, {"step": 1, "check": "other"}],
)
def test_a_malformed_recorded_fuzz_failure_is_a_clear_usage_error(
    tmp_path: Path, violated: object
) -> None:
    from semledger.eventlog import NewEvent, SessionStarted
    from semledger.replay._invariants import recorded_violation

    with pytest.raises(ValueError, match=r"params\['fuzz'\]\['violated'\]: expected"):
        recorded_violation({"fuzz": {"violated": violated}})
    db = tmp_path / "log.db"
    with SqliteRecorder(db) as recorder:
        params = {"fuzz": {"violated": violated}}
        recorder.append([NewEvent("s", 1, SessionStarted(COUNTER, "runtime", params, True), 0.0)])
    done = cli("replay", "s", "--db", str(db))
    assert done.returncode == 2, done.stderr
    assert "params['fuzz']['violated']" in done.stderr


def test_a_recorded_fuzz_failure_past_the_last_input_is_a_clear_usage_error(
    tmp_path: Path,
) -> None:
    from semledger.eventlog import NewEvent, SessionStarted

    db = tmp_path / "log.db"
    params = {"fuzz": {"violated": {"step": 4, "check": "issues"}, "issues": True}}
    mcp.serve(COUNTER, db, "s", [mcp.perform(1, "counter.increment")])
    with SqliteRecorder(db) as recorder:
        events = [e for _r, e in recorder.events("s")]
        started = SessionStarted(COUNTER, "runtime", params, True)
        rest = [NewEvent("t", n, e, 0.0) for n, e in enumerate(events[1:], start=2)]
        recorder.append([NewEvent("t", 1, started, 0.0), *rest])
    done = mcp.cli("replay", "t", "--db", str(db))  # a child: the exit status of a process
    assert done.returncode == 2, done.stdout + done.stderr
    assert "a failure at step 4, past the session's last input (step 1)" in done.stderr


def test_an_app_that_raises_as_it_starts_is_a_counterexample_that_replays_as_that_crash(
    tmp_path: Path,
) -> None:
    import tests_broken_start

    from semledger.replay import fuzz_app, reexecute

    db = tmp_path / "log.db"
    app = tests_broken_start.app
    result = fuzz_app(app, "tests_broken_start:app", lambda: SqliteRecorder(db), examples=5)
    assert result.failure == "BrokenViewError: the view is broken"
    assert result.session is not None
    with SqliteRecorder(db) as recorder:
        events = [e for _r, e in recorder.events(result.session)]
        assert [type(e).__name__ for e in events] == ["SessionStarted", "SessionCrashed"]
        report = reexecute(recorder, result.session, app)
    assert (report.ok, report.crash_step) == (True, 0)


@pytest.mark.parametrize(
    ("argument", "given"), [("examples", 0), ("examples", -3), ("steps", 0), ("steps", -1)]
)
def test_fuzz_app_refuses_fewer_than_one_example_or_step_naming_the_argument(
    argument: str, given: object
) -> None:
    """`steps=0` fuzzed nothing and reported a clean run, even of an app that always fails."""
    from semledger.examples import counter
    from semledger.replay import fuzz_app

    arguments: dict[str, Any] = {argument: given}
    with pytest.raises(ValueError, match=rf"^{argument}: expected at least 1, got {given}$"):
        fuzz_app(counter.app, "semledger.examples.counter:app", MemoryRecorder, **arguments)


@pytest.mark.parametrize(
    ("argument", "given"),
    [("examples", True), ("examples", 2.0), ("examples", "3"), ("steps", 2.5), ("steps", False)],
)
def test_fuzz_app_refuses_a_count_that_is_not_an_int_as_a_type_error(
    argument: str, given: object
) -> None:
    """They were refused as a ValueError, where a wrong type is a TypeError (a bool is not
    a count)."""
    from semledger.examples import counter
    from semledger.replay import fuzz_app

    arguments: dict[str, Any] = {argument: given}
    with pytest.raises(TypeError, match=rf"^{argument}: expected an int, got "):
        fuzz_app(counter.app, "semledger.examples.counter:app", MemoryRecorder, **arguments)


def test_a_recorder_given_for_save_to_is_refused_before_fuzzing() -> None:
    """Given a recorder, not a function that opens one, the fuzzer ran, found its
    counterexample, then raised "'MemoryRecorder' object is not callable" and lost it."""
    from semledger.examples import counter
    from semledger.replay import fuzz_app

    with pytest.raises(TypeError, match=r"^save_to: expected a function that opens the log"):
        fuzz_app(counter.app, "semledger.examples.counter:app", MemoryRecorder(), examples=1)  # type: ignore[arg-type]


def test_a_save_to_returning_no_recorder_says_so_and_what_the_counterexample_was() -> None:
    """It is called only once there is a counterexample: returning a path, it raised
    "'str' object has no attribute 'append'", and the counterexample was lost."""
    import tests_buggy

    from semledger.replay import fuzz_app

    with pytest.raises(TypeError) as raised:
        fuzz_app(tests_buggy.app, "tests_buggy:app", lambda: "log.db", examples=200, seed=3)  # type: ignore[arg-type, return-value]
    said = str(raised.value)
    assert said.startswith("save_to: expected a function that returns a recorder"), said
    assert "returned str 'log.db', so the counterexample found is not saved" in said
    assert "ZeroDivisionError: integer division or modulo by zero, after these inputs: 1." in said
    assert "{'kind': 'activate'}" in said
    assert "fuzzing again with seed=3" in said


def test_a_saved_counterexample_is_ended_for_good_by_the_fuzzer_and_never_served_again(
    tmp_path: Path,
) -> None:
    """One that did not crash ended for now: `serve --session` resumed it and logged inputs
    after the failure, which replay (stopping at the failure) never checked, and its
    audit called the run identical."""
    db = tmp_path / "fuzz.db"
    done = cli("fuzz", "tests_duplicated:app", "--db", str(db), columns=200)
    assert done.returncode == 1, done.stdout + done.stderr
    found = re.search(r"saved as session '([^']+)'", done.stdout)
    assert found is not None, done.stdout
    session = found.group(1)
    served = mcp.cli(  # a child: serve is never run in this process
        "serve", "tests_duplicated:app", "--db", str(db), "--session", session, "--log-passwords"
    )
    assert served.returncode == 2, served.stderr
    assert f"session {session!r} was ended for good (fuzz counterexample: " in served.stderr
    audited = cli("audit", session, "--db", str(db), columns=400)
    assert "the session was ended for good by the fuzzer at " in audited.stdout, audited.stdout


@pytest.mark.parametrize("existing", [False, True], ids=["new log", "existing log"])
def test_a_saved_counterexample_is_in_the_log_file_itself_once_fuzz_exits(
    tmp_path: Path, existing: bool
) -> None:
    """Fuzz left its counterexample in the -wal file beside the log: a copy of the log file
    alone, as attached to a bug report, held no session."""
    db = tmp_path / "fuzz.db"
    if existing:
        SqliteRecorder(str(db)).close()
    done = cli(
        "fuzz", "tests_duplicated:app", "--db", str(db), "--examples", "40", columns=200
    )
    assert done.returncode == 1, done.stdout + done.stderr
    # (and how deep it was: the number that matters to tune --examples)
    assert re.search(r"^found by example \d+ of 40, then shrunk$", done.stdout, re.M)
    found = re.search(r"saved as session '([^']+)'", done.stdout)
    assert found is not None, done.stdout
    copy = tmp_path / "copy" / "fuzz.db"
    copy.parent.mkdir()
    shutil.copyfile(db, copy)
    with SqliteRecorder.to_inspect(str(copy)) as recorder:
        assert recorder.head(found.group(1)) is not None


def _lost_counterexample(raised: pytest.ExceptionInfo[Exception]) -> str:
    """What the error says of the counterexample it kept from being saved."""
    said = str(raised.value)
    assert "so the counterexample found is not saved. It was ZeroDivisionError" in said, said
    assert "after these inputs: 1." in said, said
    assert "fuzzing again with seed=3 and the same examples, steps, texts and" in said, said
    return said


def test_a_save_to_that_raises_keeps_the_counterexample_in_its_error() -> None:
    """The error of a log that could not be opened was all the fuzzer said: the
    counterexample it found, after all its examples, was lost."""
    import tests_buggy

    from semledger.replay import CounterexampleNotSavedError, fuzz_app

    def unopenable() -> MemoryRecorder:
        raise PermissionError("the log's folder is read-only")

    with pytest.raises(CounterexampleNotSavedError) as raised:
        fuzz_app(tests_buggy.app, "tests_buggy:app", unopenable, examples=200, seed=3)
    assert _lost_counterexample(raised).startswith(
        "the log could not be opened (PermissionError: the log's folder is read-only), so "
    )
    assert isinstance(raised.value.__cause__, PermissionError)


class _Refusing(MemoryRecorder):
    def append(self, events: Any) -> Any:
        raise OSError(28, "No space left on device")


def test_a_log_that_refuses_the_counterexample_keeps_it_in_its_error() -> None:
    import tests_buggy

    from semledger.replay import CounterexampleNotSavedError, fuzz_app

    with pytest.raises(CounterexampleNotSavedError) as raised:
        fuzz_app(tests_buggy.app, "tests_buggy:app", _Refusing, examples=200, seed=3)
    assert _lost_counterexample(raised).startswith("the log could not be written (OSError: ")


def test_an_app_or_app_ref_of_the_wrong_kind_is_refused_naming_it() -> None:
    """fuzz_app("x:app", ...) failed with "'str' object has no attribute 'name'"."""
    from semledger.examples import counter
    from semledger.replay import fuzz_app

    ref = "semledger.examples.counter:app"
    with pytest.raises(TypeError, match=r"^app: expected an App, got str 'semledger"):
        fuzz_app(ref, ref, MemoryRecorder, examples=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^app_ref: expected a module:attribute str, got App"):
        fuzz_app(counter.app, counter.app, MemoryRecorder, examples=1)  # type: ignore[arg-type]


def test_fuzz_app_says_which_error_an_app_ref_without_a_colon_raises() -> None:
    """A str with no colon is a wrong value, a ValueError; the docstring said TypeError."""
    from semledger.examples import counter
    from semledger.replay import fuzz_app

    with pytest.raises(ValueError, match=r"^app_ref: expected module:attribute"):
        fuzz_app(counter.app, "counter", MemoryRecorder, examples=1)
    documented = " ".join((fuzz_app.__doc__ or "").split())
    assert "an `app_ref` that is not ``module:attribute``" in documented.split("`TypeError`")[0]
    assert "an `app_ref` that is not a str," in documented.split("`TypeError`")[1]


def test_an_app_ref_naming_another_app_is_refused_before_fuzzing() -> None:
    """A counterexample is saved under the ref, and `semledger replay` loads the app by it:
    a ref copied from another test would replay another app and report a divergence."""
    from semledger.examples import counter
    from semledger.replay import fuzz_app

    with pytest.raises(ValueError, match="names another App") as refused:
        fuzz_app(counter.app, "semledger.examples.todo:app", MemoryRecorder, examples=1)
    assert f"than the one given ({counter.app.name!r})" in str(refused.value)
    assert "script" not in str(refused.value)


def test_an_app_ref_whose_module_holds_no_such_app_is_refused_before_fuzzing() -> None:
    """A mistyped attribute (``counter:ap``) was taken: the counterexample was saved under
    it, and `semledger replay` of that session could not load its app."""
    from semledger.examples import counter
    from semledger.replay import fuzz_app

    with pytest.raises(ValueError, match="app_ref names no App") as refused:
        fuzz_app(counter.app, "semledger.examples.counter:ap", MemoryRecorder, examples=1)
    assert "semledger.examples.counter has no ap (its App: app)" in str(refused.value)


def test_an_app_ref_whose_module_does_not_import_here_is_taken() -> None:
    """Replay may run where the module imports (another folder, another PYTHONPATH)."""
    from semledger.examples import counter
    from semledger.replay import fuzz_app

    result = fuzz_app(counter.app, "no_such_module_here:app", MemoryRecorder, examples=2)
    assert result.session is None


def test_a_script_fuzzing_its_own_app_by_its_module_s_ref_is_told_it_ran_twice(
    tmp_path: Path,
) -> None:
    """``python tiny.py`` fuzzing "tiny:app" loads tiny.py twice (as __main__, then as
    tiny): the refusal named two Apps both called 'tiny', with no clue why they differ."""

    script = tmp_path / "tiny.py"
    script.write_text(
        "from semledger.eventlog import MemoryRecorder\n"
        "from semledger.examples.counter import init, update, view\n"
        "from semledger.replay import fuzz_app\n"
        "from semledger.runtime import App\n"
        "app = App(init, update, view, name='tiny')\n"
        "if __name__ == '__main__':\n"
        "    fuzz_app(app, 'tiny:app', MemoryRecorder, examples=1)\n"
    )
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path, env=mcp.env(), capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 1
    assert (
        "ValueError: app_ref 'tiny:app' names another App ('tiny') than the one given ('tiny'):"
        " a session saved under it would be replayed with that one. tiny runs as a script"
        " (__main__), and app_ref imported it again as tiny, which made an App of its own:"
        " call fuzz_app from another module (or run semledger fuzz tiny:app), or pass the App"
        " loaded from the module (from tiny import app)"
    ) in done.stderr, done.stderr


def test_an_app_ref_naming_another_app_of_the_same_name_blames_no_script() -> None:
    """Two Apps of one name from modules that do not run as scripts: the refusal said the
    ref's module likely ran as one, and to pass its App, which is another app."""
    from semledger.examples import counter
    from semledger.replay import fuzz_app
    from semledger.runtime import App

    twin = App(counter.init, counter.update, counter.view, name=counter.app.name)
    with pytest.raises(ValueError, match="names another App") as refused:
        fuzz_app(twin, COUNTER, MemoryRecorder, examples=1)
    assert "script" not in str(refused.value)


def test_a_counterexample_typing_a_password_logs_it_in_clear_and_says_so(tmp_path: Path) -> None:
    """The fuzzer logged its typed passwords in clear under a start that recorded
    redact_passwords: true, and the audit said they were masked."""
    from semledger.eventlog import ActionRequested, SessionStarted

    db = tmp_path / "fuzz.db"
    done = cli("fuzz", "tests_fuzz_password:app", "--db", str(db), "--seed", "0")
    assert done.returncode == 1, done.stdout + done.stderr
    found = re.search(r"saved as session '([^']+)'", done.stdout)
    assert found is not None, done.stdout
    session = found.group(1)
    with SqliteRecorder(db) as recorder:
        events = [e for _r, e in recorder.events(session)]
    assert isinstance(events[0], SessionStarted)
    assert events[0].redact_passwords is False
    typed = [
        e.action["value"]
        for e in events
        if isinstance(e, ActionRequested) and e.action["kind"] == "set_text"
    ]
    assert any(any(c.isdigit() for c in value) for value in typed), events
    audited = cli("audit", session, "--db", str(db), columns=200)
    assert audited.returncode == 0, audited.stdout + audited.stderr
    assert "masked in the log" not in audited.stdout
    assert (
        "passwords typed in the session are in the log in clear: they are the fuzzer's,"
        " kept for replay (redact_passwords: false)"
    ) in audited.stdout.splitlines()
    replayed = cli("replay", session, "--db", str(db), columns=200)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "raised again at step" in replayed.stdout
    assert "redacted in the log" not in replayed.stdout
    from semledger.replay import export_test

    with SqliteRecorder(db) as recorder:
        source = export_test(recorder, session)
    assert "redacted in the log" not in source
    exported_test_of(source)()


def _relabelled(app: Any) -> Any:
    """`app` with the fix of its bug, which also renamed a button: every commit differs,
    from the first view on."""
    from semledger.examples import counter
    from semledger.runtime import View, column, text

    def view(model: Any) -> View[Any]:
        return column(text("Fixed", "yes", semantic_id="counter.fixed"), app.view(model))

    return attrs.evolve(counter.app, view=view)


@pytest.mark.parametrize(
    ("buggy", "failure"),
    [("tests_buggy", "the recorded crash (log seq "), ("tests_duplicated", "the recorded view")],
    ids=["crash", "view-issue"],
)
def test_a_divergence_before_the_recorded_failure_says_a_fix_may_explain_it(
    buggy: str, failure: str
) -> None:
    """A fix that also changes what the app showed before its bug struck diverges at that
    earlier step; the replay said nothing of the failure still ahead, and read as a new
    bug. Only a divergence at the failing step itself said the fix may be working."""
    from semledger.replay import fuzz_app, reexecute

    module = __import__(buggy)
    recorder = MemoryRecorder()
    found = fuzz_app(module.app, f"{buggy}:app", lambda: recorder, examples=200, seed=3)
    assert found.session is not None
    report = reexecute(recorder, found.session, _relabelled(module.app))
    assert report.divergence is not None
    assert report.divergence.step == 0
    assert report.divergence.note is not None
    assert report.divergence.note.startswith(failure)
    assert "comes after this step; a fix of it may change earlier steps too" in (
        report.divergence.note
    )
    assert reexecute(recorder, found.session, module.app).ok  # unfixed: reproduced, no note


def test_a_replay_that_raises_where_the_run_did_not_is_never_called_the_fix_working(
    tmp_path: Path,
) -> None:
    """Its note said the recorded crash ahead may explain it: "then this divergence is the
    fix working", of an app that now fails in a new way."""
    import tests_buggy
    from tests_record import INCREMENT, record

    from semledger.replay import reexecute

    db = tmp_path / "log.db"
    record(db, "crashed", "tests_buggy:app", [INCREMENT, ("counter.reset", {"kind": "activate"})])

    def update(model: Any, msg: Any) -> Any:
        raise RuntimeError("a new bug")

    with SqliteRecorder(db) as recorder:
        report = reexecute(recorder, "crashed", attrs.evolve(tests_buggy.app, update=update))
    assert report.divergence is not None
    assert (report.divergence.step, report.divergence.actual) == (
        1, "the app raised RuntimeError('a new bug')"
    )
    assert "fix working" not in (report.divergence.note or ""), report.divergence.note
