"""`--export-test` at its edges: a session that crashed, session names that are not plain
words, and a file that cannot be written."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from semledger.eventlog import EffectCompleted, NewEvent, SqliteRecorder
from semledger.replay import check_writable, export_test, write_whole

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp
from stdio_client import cli_in_process as cli
from tests_record import COUNTER, INCREMENT, Call, crashed_as_it_started, record

RESET: Call = ("counter.reset", {"kind": "activate"})
BUGGY = "tests_buggy:app"
"""Its Reset divides by zero: an increment and a reset crash it at step 2."""


def pytest_on(path: Path) -> subprocess.CompletedProcess[str]:
    """pytest run on `path` by itself. The exported modules need no plugin: the installed
    ones (trio, hypothesis, anyio, xdist) are not loaded, which took two seconds a run."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(path)],
        cwd=path if path.is_dir() else path.parent,
        capture_output=True,
        text=True,
        env=mcp.env(PYTEST_DISABLE_PLUGIN_AUTOLOAD="1"),
        timeout=120,
        check=False,
    )


def exported_test_of(source: str) -> Any:
    """The test function of an exported module, run in this process."""
    module: dict[str, Any] = {}
    exec(compile(source, "exported", "exec"), module)
    tests = [v for k, v in module.items() if k.startswith("test_")]
    assert len(tests) == 1
    return tests[0]


def with_app(source: str, app_ref: str) -> str:
    lines = [
        f"APP = {app_ref!r}" if line.startswith("APP = ") else line for line in source.split("\n")
    ]
    return "\n".join(lines)


def test_an_exported_crashed_session_passes_while_the_app_crashes_the_same_way(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.db"
    outcomes, _fulls = record(db, "crashed", BUGGY, [INCREMENT, RESET, INCREMENT])
    assert outcomes[-1] is None
    exported = tmp_path / "test_exported_crash.py"
    done = cli("replay", "crashed", "--db", str(db), "--export-test", str(exported))
    assert done.returncode == 0, done.stderr
    source = exported.read_text()
    assert "CRASH = (2, 'ZeroDivisionError')" in source
    passed = pytest_on(exported)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "1 passed" in passed.stdout

    fixed = exported_test_of(with_app(source, COUNTER))
    with pytest.raises(AssertionError, match=r"step 2 \(ActionRequested\) succeeded, where the "):
        fixed()
    otherwise = exported_test_of(with_app(source, "tests_drifted:raising_reset"))
    with pytest.raises(AssertionError, match=r"step 2 .* raised ResetError, where the recorded"):
        otherwise()


def test_an_exported_crash_says_it_pins_the_crash_and_once_fixed_that_it_no_longer_happens(
    tmp_path: Path,
) -> None:
    """A fuzz counterexample exported as a "regression test" passes while the bug is there
    and fails once it is fixed: its docstring and its failure now say why, and what to do."""
    db = tmp_path / "log.db"
    record(db, "crashed", BUGGY, [INCREMENT, RESET, INCREMENT])
    with SqliteRecorder(db) as recorder:
        source = export_test(recorder, "crashed")
    docstring = exported_module_doc(source)
    assert "The test pins the recorded run, failure included: it passes while the bug is" in (
        docstring
    )
    assert "fails once it is fixed. Then set FIXED = True below" in docstring
    with pytest.raises(AssertionError, match=r"no longer happens\. If the bug is fixed, this"):
        exported_test_of(with_app(source, COUNTER))()


def test_an_exported_crash_whose_fix_changes_an_earlier_step_says_it_may_be_the_fix(
    tmp_path: Path,
) -> None:
    """A fix that also changes what the app shows before the crash failed the exported test
    with a bare hash mismatch, where replay says the fix may be why."""
    db = tmp_path / "log.db"
    record(db, "crashed", BUGGY, [INCREMENT, INCREMENT, RESET])
    with SqliteRecorder(db) as recorder:
        source = export_test(recorder, "crashed")
    assert "CRASH = (3, 'ZeroDivisionError')" in source
    with pytest.raises(AssertionError, match=r"^step 2 \(ActionRequested\) differs: ") as failed:
        exported_test_of(with_app(source, "tests_variant:app"))()  # its view changes from 2 on
    assert getattr(failed.value, "__notes__", [])[0] == (
        "note: the recorded crash (ZeroDivisionError) at step 3 comes after this step; a fix"
        " of it may change earlier steps too, and then this difference is the fix working:"
        " set FIXED = True once it is fixed (in a module exported without it: pass fixed=True"
        " to check_recorded_steps)"
    )
    without_fixed = source.replace("        fixed=FIXED,\n", "").replace("\nFIXED = False\n", "\n")
    with pytest.raises(AssertionError, match=r"^step 2 \(ActionRequested\) differs: ") as old:
        exported_test_of(with_app(without_fixed, "tests_variant:app"))()
    assert "pass fixed=True to check_recorded_steps" in old.value.__notes__[0]


def test_an_exported_test_whose_hash_differs_says_how_to_see_the_nodes_that_differ(
    tmp_path: Path,
) -> None:
    """Its failure showed two hashes and nothing to tell what differs behind them."""
    db = tmp_path / "log.db"
    record(db, "run 1", COUNTER, [INCREMENT, INCREMENT])
    with SqliteRecorder(db) as recorder:
        source = export_test(recorder, "run 1")
    with pytest.raises(AssertionError, match=r"^step 2 \(ActionRequested\) differs: ") as failed:
        exported_test_of(with_app(source, "tests_variant:app"))()
    assert getattr(failed.value, "__notes__", [])[-1] == (
        "note: `semledger replay 'run 1' --db LOG --app tests_variant:app` (LOG: the log this"
        " test was exported from) shows the nodes that differ"
    )
    with pytest.raises(AssertionError, match=r"^step 2 \(ActionRequested\) differs: ") as old:
        exported_test_of(
            with_app(source.replace("        session=SESSION,\n", ""), "tests_variant:app")
        )()
    assert getattr(old.value, "__notes__", [])[-1] == (
        "note: `semledger replay SESSION --db LOG --app tests_variant:app` (the session and log"
        " this test was exported from) shows the nodes that differ"
    )


def exported_module_doc(source: str) -> str:
    module: dict[str, Any] = {}
    exec(compile(source, "exported", "exec"), module)
    return " ".join(str(module["__doc__"]).split())


def test_an_exported_session_that_crashed_as_it_started_passes_only_while_it_still_does(
    tmp_path: Path,
) -> None:
    with SqliteRecorder(tmp_path / "log.db") as recorder:
        crashed_as_it_started(recorder, "broke", "BrokenViewError")
        source = export_test(recorder, "broke")
    assert "CRASH = (0, 'BrokenViewError')" in source
    exported_test_of(source)()
    with pytest.raises(AssertionError, match="as it started, succeeded"):
        exported_test_of(with_app(source, COUNTER))()


AWKWARD_NAMES = [
    "back\\slash",
    "C:\\Users\\new",
    "\\N{BULLET} and \\x",
    'triple """ quotes',
    'ends in a quote"',
    "ends in a backslash\\",
    "both ' and \" quotes",
    "line\nbreak\r\tand\x00nul",
    "x²-ünï-日本",
    "inner  spaces",
]


def _recorded_as(db: Path, name: str) -> None:
    """A session of `name` as `record` makes one, for a name sessions now refuse (a control
    character) but older logs may hold: recorded under another name, then copied."""
    record(db, "template", COUNTER, [INCREMENT])
    with SqliteRecorder(db) as recorder:
        recorder.append([
            NewEvent(name, stored.seq, event, stored.at)
            for stored, event in recorder.events("template")
        ])  # fmt: skip


def test_awkward_session_names_export_modules_that_compile_and_pass(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    for name in AWKWARD_NAMES:
        if name.isprintable():
            record(db, name, COUNTER, [INCREMENT])
        else:
            _recorded_as(db, name)
    tests = tmp_path / "exported"
    tests.mkdir()
    with SqliteRecorder(db) as recorder:
        for number, name in enumerate(AWKWARD_NAMES):
            source = export_test(recorder, name)
            module: dict[str, Any] = {}
            exec(compile(source, "exported", "exec"), module)
            assert f"of session {name!r} against" in module["__doc__"]
            (tests / f"test_exported_{number}.py").write_text(source, encoding="utf-8")
    passed = pytest_on(tests)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert f"{len(AWKWARD_NAMES)} passed" in passed.stdout
    via_cli = tmp_path / "test_via_cli.py"
    done = cli("replay", AWKWARD_NAMES[2], "--db", str(db), "--export-test", str(via_cli))
    assert done.returncode == 0, done.stderr
    assert pytest_on(via_cli).returncode == 0


@pytest.mark.parametrize(
    ("where", "reason"),
    [
        ("a_directory.py", "Is a directory"),
        ("missing/test_out.py", "there is no folder {tmp}/missing"),
    ],
)
def test_an_export_path_that_cannot_be_written_is_a_one_line_usage_error(
    tmp_path: Path, where: str, reason: str
) -> None:
    db = tmp_path / "log.db"
    record(db, "counter", COUNTER, [INCREMENT])
    (tmp_path / "a_directory.py").mkdir()
    before = sorted(tmp_path.rglob("*"))
    path = f"{tmp_path}{os.sep}{where}"
    # A child: replay leaves its log open until its process exits (the -wal and -shm files
    # checked below), which in this process is when the garbage collector gets to it.
    done = mcp.cli("replay", "counter", "--db", str(db), "--export-test", path)
    assert done.returncode == 2, done.stdout + done.stderr
    said = reason.format(tmp=tmp_path)
    assert done.stderr == f"semledger: cannot write --export-test {path!r}: {said}\n"
    assert "identical" not in done.stdout
    assert sorted(tmp_path.rglob("*")) == before


@pytest.mark.parametrize("where", ["t.txt", "test_t.PY", ".py", "test_t.py.txt", "sub/", ".", ""])
def test_an_export_path_pytest_would_not_run_is_refused_before_anything_is_done(
    tmp_path: Path, where: str
) -> None:
    """`--export-test exported/t.txt` wrote a module and said "run it with pytest", which
    runs no file whose name does not end in .py, even named on its command line."""
    db = tmp_path / "log.db"
    record(db, "counter", COUNTER, [INCREMENT])
    before = sorted(tmp_path.rglob("*"))
    path = f"{tmp_path}{os.sep}{where}" if where else ""
    run = mcp.cli if where == "t.txt" else cli  # one as a child: a real process's exit
    done = run("replay", "counter", "--db", str(db), "--export-test", path)
    assert done.returncode == 2, done.stdout + done.stderr
    folder = ", a folder's path (it ends in '/')" if where.endswith("/") else ""
    assert done.stderr == (
        "semledger: argument --export-test: expected a path ending in .py (pytest runs no"
        f" other file), got {path!r}{folder} (see 'semledger replay --help')\n"
    )
    assert done.stdout == ""
    assert sorted(tmp_path.rglob("*")) == before


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("test_counter.py", "run it with pytest"),
        ("counter_test.py", "run it with pytest"),
        (
            "regress.py",
            "run it with pytest {path} (by itself, pytest collects only test_*.py and *_test.py"
            " files)",
        ),
        (
            "my regress.py",
            "run it with pytest '{path}' (by itself, pytest collects only test_*.py and"
            " *_test.py files)",
        ),
    ],
)
def test_the_export_says_to_name_the_file_to_pytest_when_pytest_would_not_collect_it(
    tmp_path: Path, name: str, said: str
) -> None:
    """`--export-test t2/regress.py` said "run it with pytest", and `pytest` in t2/ ran
    nothing: it collects only test_*.py and *_test.py files by itself."""
    db = tmp_path / "log.db"
    record(db, "counter", COUNTER, [INCREMENT])
    path = str(tmp_path / name)
    done = cli("replay", "counter", "--db", str(db), "--export-test", path, columns=1000)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == f"wrote {path}: {said.format(path=path)}\n"


def test_a_write_that_fails_leaves_the_old_file_and_no_partial_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "test_exported.py"
    target.write_text("old\n")

    def refuse(_src: Any, _dst: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="No space left"):
        write_whole(target, "new\n")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == [target.name]


@pytest.mark.parametrize("write", [check_writable, lambda path: write_whole(path, "new\n")])
def test_a_file_in_a_missing_folder_is_refused_naming_the_path_asked_for(
    tmp_path: Path, write: Any
) -> None:
    """The FileNotFoundError named the temporary ``.x.py.<hex>.partial`` file beside it, a
    path never given and never made."""
    path = str(tmp_path / "missing" / "x.py")
    with pytest.raises(FileNotFoundError) as refused:
        write(path)
    assert (refused.value.filename, refused.value.strerror) == (path, "No such file or directory")
    assert ".partial" not in str(refused.value)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("call", "said"),
    [
        (lambda where: write_whole(where, 5), "source: expected a str, got int 5"),
        (lambda where: write_whole(where, None), "source: expected a str, got NoneType None"),
        (lambda _where: write_whole(5, "x"), "path: expected a file path (a str or os.PathLike)"),
        (lambda _where: check_writable(None), "path: expected a file path (a str or os.PathLike)"),
    ],
)
def test_a_write_of_an_argument_of_another_type_is_refused_naming_it_and_makes_nothing(
    tmp_path: Path, call: Any, said: str
) -> None:
    """write_whole(path, 5) said "write() argument must be str, not int", after making and
    removing a file beside the one asked for."""
    with pytest.raises(TypeError, match=f"^{re.escape(said)}"):
        call(tmp_path / "x.py")
    assert list(tmp_path.iterdir()) == []


def test_an_export_through_a_symlink_writes_the_file_it_names(tmp_path: Path) -> None:
    real = tmp_path / "real.py"
    real.write_text("old\n")
    link = tmp_path / "link.py"
    link.symlink_to(real)
    write_whole(link, "new\n")
    assert link.is_symlink()
    assert real.read_text() == "new\n"


def test_an_export_over_a_file_keeps_its_mode(tmp_path: Path) -> None:
    """A file only its owner could read came back readable by everyone."""
    private = tmp_path / "private.py"
    private.write_text("old\n")
    private.chmod(0o600)
    write_whole(private, "new\n")
    assert (private.read_text(), private.stat().st_mode & 0o777) == ("new\n", 0o600)


def test_effect_results_that_are_nan_or_infinite_export_a_module_that_passes(
    tmp_path: Path,
) -> None:
    """NaN and the infinities print as `nan` and `inf`, which the module must import."""
    db = tmp_path / "log.db"
    record(db, "readings", "tests_nan:app", [("nan.tap", {"kind": "activate"})])
    record(db, "plain", COUNTER, [INCREMENT])
    with SqliteRecorder(db) as recorder:
        readings = sorted(
            repr(event.message["value"])
            for _record, event in recorder.events("readings")
            if isinstance(event, EffectCompleted)
        )
        source = export_test(recorder, "readings")
        plain = export_test(recorder, "plain")
    assert readings == ["-inf", "inf", "nan"]
    assert "from math import inf, nan\n" in source
    assert "from math" not in plain
    exported = tmp_path / "test_exported_readings.py"
    exported.write_text(source, encoding="utf-8")
    passed = pytest_on(exported)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "1 passed" in passed.stdout


def test_an_export_onto_a_fifo_is_refused_and_leaves_it_as_it_was(tmp_path: Path) -> None:
    fifo = tmp_path / "test_pipe.py"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="it is not a regular file"):
        write_whole(fifo, "new\n")
    assert fifo.is_fifo()
    assert [p.name for p in tmp_path.iterdir()] == [fifo.name]


def test_an_export_onto_the_log_or_its_files_is_refused_and_the_log_stays(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    record(db, "counter", COUNTER, [INCREMENT])
    (tmp_path / "link.py").symlink_to(db)
    for where in (db, tmp_path / "link.py", Path(f"{db}-wal"), Path(f"{db}-shm")):
        done = cli("replay", "counter", "--db", str(db), "--export-test", str(where))
        assert done.returncode == 2, (where, done.stdout, done.stderr)
        refused = (
            f"semledger: cannot write --export-test {str(where)!r}: it is the log {db}\n"
            if where.suffix == ".py"
            else "semledger: argument --export-test: expected a path ending in .py"
        )
        assert done.stderr.startswith(refused), (where, done.stderr)
    assert cli("audit", "counter", "--db", str(db), "--verify").returncode == 0


def test_an_export_onto_the_apps_own_module_is_refused_and_the_module_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--app shop:app --export-test shop.py` replaced the app's source with the test, which
    then imported itself for the app: the code was lost and the test could not run."""
    db = tmp_path / "log.db"
    record(db, "counter", COUNTER, [INCREMENT])
    module = tmp_path / "exported_onto_its_app.py"
    source = "from semledger.examples.counter import app\n"
    module.write_text(source, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    app_ref = "exported_onto_its_app:app"
    done = cli("replay", "counter", "--db", str(db), "--app", app_ref, "--export-test", str(module))
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr == (
        f"semledger: cannot write --export-test {str(module)!r}: it is the module of the app"
        f" {app_ref}, which"
        " the test imports (name the test test_*.py)\n"
    )
    assert module.read_text(encoding="utf-8") == source


@pytest.mark.parametrize(
    ("app_ref", "error"), [(5, TypeError), ("counter", ValueError)], ids=["int", "no-attribute"]
)
def test_an_app_ref_that_is_no_module_attribute_is_refused_not_written_into_the_test(
    tmp_path: Path, app_ref: object, error: type[Exception]
) -> None:
    """export_test(..., app_ref=5) wrote ``APP = 5`` into the test it made."""
    db = tmp_path / "log.db"
    record(db, "s", COUNTER, [INCREMENT])
    with SqliteRecorder(db) as recorder, pytest.raises(error, match=r"^app_ref: expected "):
        export_test(recorder, "s", app_ref=app_ref)  # type: ignore[arg-type]


def test_a_long_effect_failure_is_cut_in_the_docstring_saying_how_long_it_was() -> None:
    from semledger.replay._export import _effect_doc

    failure = "effect 1 (x.save) failed: ValueError: " + "a" * 300
    said = _effect_doc(failure)
    assert f"{failure[:200]}… ({len(failure)} characters)'. An effect's failure" in said
