"""A session's start records how its process hashed str (PYTHONHASHSEED), and a replay or
an exported test that diverges in a process hashing otherwise says that this may be why:
an app that iterates a set of str may take another path there, with its code unchanged."""

from __future__ import annotations

import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from semledger.actors import _str_hash
from semledger.actors._str_hash import str_hashing, str_hashing_note
from semledger.eventlog import SessionStarted, SqliteRecorder

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp

SET_ORDER = "tests_set_order:app"
COUNTER = "semledger.examples.counter:app"
"""Where "work" comes first in its set, an increment adds 2 and a reset raises."""
NOTED = "if the app iterates a set or dict of str, that alone may explain this divergence"


@cache
def seeds() -> dict[str, str]:
    """A PYTHONHASHSEED under which tests_set_order's set starts with each of its tags."""
    found: dict[str, str] = {}
    for seed in map(str, range(1, 100)):
        first = subprocess.run(
            [sys.executable, "-c", "import tests_set_order as m; print(m.first_tag())"],
            capture_output=True,
            text=True,
            env=mcp.env(PYTHONHASHSEED=seed),
            timeout=60,
            check=True,
        ).stdout.strip()
        found.setdefault(first, seed)
        if len(found) == 2:
            return found
    raise AssertionError(f"no seed below 100 puts each tag first: {found}")


def said(done: subprocess.CompletedProcess[str]) -> str:
    """What a command printed, its lines as the console wrapped them joined again."""
    return " ".join((done.stdout + done.stderr).split())


def replay(db: Path, session: str, seed: str, *args: str) -> subprocess.CompletedProcess[str]:
    return mcp.cli("replay", session, "--db", str(db), *args, PYTHONHASHSEED=seed, COLUMNS="300")


def started(db: Path, session: str) -> SessionStarted:
    with SqliteRecorder(db) as recorder:
        first = next(e for _r, e in recorder.events(session))
    assert isinstance(first, SessionStarted)
    return first


def pytest_on(path: Path, seed: str) -> subprocess.CompletedProcess[str]:
    """pytest run on `path` by itself under `seed`. The exported module needs no plugin: the
    installed ones (trio, hypothesis, anyio, xdist) are not loaded, which took two seconds a
    run."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(path)],
        cwd=path.parent,
        capture_output=True,
        text=True,
        env=mcp.env(PYTHONHASHSEED=seed, COLUMNS="300", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1"),
        timeout=120,
        check=False,
    )


def test_a_replay_under_another_hash_seed_notes_that_the_app_may_take_another_path(
    tmp_path: Path,
) -> None:
    work, home = seeds()["work"], seeds()["home"]
    db = tmp_path / "log.db"
    mcp.serve(SET_ORDER, db, "s", [mcp.perform(1, "counter.increment")], PYTHONHASHSEED=work)
    assert started(db, "s").params["str_hash"]["seed"] == int(work)
    assert replay(db, "s", work).returncode == 0

    diverged = replay(db, "s", home)
    assert diverged.returncode == 1, said(diverged)
    assert (
        f"note: the recorded run hashed str with PYTHONHASHSEED={work} and this one with"
        f" PYTHONHASHSEED={home}: {NOTED}"
    ) in said(diverged)
    assert f"replay it (or run a test exported from it) under PYTHONHASHSEED={work}" in said(
        diverged
    )


def test_a_counterexample_replayed_under_another_hash_seed_is_not_called_fixed_alone(
    tmp_path: Path, caches: Path
) -> None:
    """The fuzzer finds the crash under one seed; under another, the app unchanged, the
    crash no longer happens: the note says why before the one calling it the fix working,
    in replay's verdict and in the exported test's failure."""
    work, home = seeds()["work"], seeds()["home"]
    db = tmp_path / "log.db"
    session = fuzzed(db, SET_ORDER, work, caches)
    assert started(db, session).params["str_hash"]["seed"] == int(work)

    diverged = replay(db, session, home)
    assert diverged.returncode == 1, said(diverged)
    hashed = (
        f"note: the recorded run hashed str with PYTHONHASHSEED={work} and this one with"
        f" PYTHONHASHSEED={home}: {NOTED}"
    )
    assert f"the recorded crash no longer happens {hashed}" in said(diverged)
    assert said(diverged).index(hashed) < said(diverged).index("this divergence is the fix")

    exported = tmp_path / "test_exported.py"
    assert replay(db, session, work, "--export-test", str(exported)).returncode == 0
    assert pytest_on(exported, work).returncode == 0
    failed = pytest_on(exported, home)
    assert failed.returncode == 1, said(failed)
    assert "the recorded crash no longer happens" in said(failed)
    assert hashed in said(failed)


@pytest.fixture(scope="module")
def caches(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder for the caches of Hypothesis that this module's fuzz runs share: in one of
    its own for each run, each spent three seconds filling it again."""
    return tmp_path_factory.mktemp("hypothesis")


def fuzzed(db: Path, app: str, seed: str, caches: Path) -> str:
    """The session of the counterexample `semledger fuzz` saved for `app` under `seed`,
    Hypothesis keeping its caches in `caches` (HYPOTHESIS_STORAGE_DIRECTORY)."""
    done = mcp.cli(
        "fuzz", app, "--db", str(db), "--examples", "100", "--seed", "1",
        PYTHONHASHSEED=seed, COLUMNS="300", HYPOTHESIS_STORAGE_DIRECTORY=str(caches),
    )  # fmt: skip
    found = re.search(r"saved as session '([^']+)'", done.stdout)
    assert found is not None, said(done)
    return found.group(1)


@pytest.mark.parametrize(
    ("app", "failure"),
    [("tests_buggy:app", "crash"), ("tests_duplicated:app", "view issue")],
    ids=["crash", "view-issue"],
)
def test_a_fix_checked_against_a_run_under_a_random_seed_is_not_blamed_on_str_hashing(
    tmp_path: Path, caches: Path, app: str, failure: str
) -> None:
    """A counterexample fuzzed from a shell with PYTHONHASHSEED unset, replayed (and its
    exported test run) against the fixed app: every other process hashes str otherwise, so
    each check of the fix said the hashing alone may explain the failure no longer
    happening."""
    db = tmp_path / "log.db"
    session = fuzzed(db, app, "random", caches)
    assert started(db, session).params["str_hash"]["seed"] is None

    fixed = replay(db, session, "random", "--app", COUNTER)
    assert fixed.returncode == 1, said(fixed)
    assert f"the recorded {failure} no longer happens" in said(fixed)
    assert "this divergence is the fix working" in said(fixed)
    assert "hashed str with" not in said(fixed)

    exported = tmp_path / "test_fixed.py"
    export = replay(db, session, "random", "--app", COUNTER, "--export-test", str(exported))
    assert export.returncode == 0, said(export)
    failed = pytest_on(exported, "random")
    assert failed.returncode == 1, said(failed)
    assert f"the recorded {failure} no longer happens" in said(failed)
    assert "hashed str with" not in said(failed)


def test_another_exception_than_a_random_seed_run_recorded_is_still_noted_as_maybe_str_hashing(
    tmp_path: Path, caches: Path
) -> None:
    """Not the recorded failure gone, but another one: the hashing may explain that."""
    db = tmp_path / "log.db"
    session = fuzzed(db, "tests_buggy:app", "random", caches)
    caveat = (
        "note: the recorded run hashed str with a random seed (PYTHONHASHSEED unset) and this"
        f" one with another random seed: {NOTED}"
    )

    otherwise = replay(db, session, "random", "--app", "tests_drifted:raising_reset")
    assert otherwise.returncode == 1, said(otherwise)
    assert "logged: the app to raise ZeroDivisionError" in said(otherwise)
    assert caveat in said(otherwise)

    exported = tmp_path / "test_otherwise.py"
    assert replay(db, session, "random", "--export-test", str(exported)).returncode == 0
    exported.write_text(exported.read_text().replace(
        "APP = 'tests_buggy:app'", "APP = 'tests_drifted:raising_reset'"
    ))  # fmt: skip
    failed = pytest_on(exported, "random")
    assert failed.returncode == 1, said(failed)
    assert "raised ResetError, where the recorded session raised ZeroDivisionError" in said(failed)
    assert caveat in said(failed)


def test_an_app_that_does_not_depend_on_str_hashing_replays_identically_under_any_seed(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.db"
    script = [mcp.perform(i, "counter.increment") for i in range(1, 4)]
    mcp.serve("semledger.examples.counter:app", db, "c", script, PYTHONHASHSEED="1")
    for seed in ("1", "2", "0"):
        done = replay(db, "c", seed)
        assert done.returncode == 0, said(done)
        assert "identical" in done.stdout
        assert "hashed str" not in said(done)


def test_a_run_under_a_random_seed_is_noted_as_one_no_seed_gives_again() -> None:
    other = {"seed": None, "probe": str_hashing()["probe"] + 1}
    note = str_hashing_note(other)
    assert note is not None
    assert note.startswith("the recorded run hashed str with a random seed (PYTHONHASHSEED unset)")
    assert note.endswith(
        "a random seed cannot be given again: set PYTHONHASHSEED for the runs you want to reproduce"
    )


def test_no_note_when_the_process_hashes_alike_or_the_log_does_not_say() -> None:
    assert str_hashing_note(str_hashing()) is None  # this very process, random seed or not
    assert str_hashing_note(None) is None  # a start from before it was recorded
    assert str_hashing_note({"seed": "9", "probe": 1}) is None  # not what a start records
    assert str_hashing_note({"probe": 1}) is None


def test_the_same_fixed_seed_is_noted_only_when_the_python_hashes_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_str_hash, "_seed", lambda: 9)
    probe = str_hashing()["probe"]
    assert str_hashing_note({"seed": 9, "probe": probe}) is None
    assert str_hashing_note({"seed": 9}) is None
    note = str_hashing_note({"seed": 9, "probe": probe + 1})
    assert note is not None
    assert "PYTHONHASHSEED=9, as this one does, but on another Python" in note
