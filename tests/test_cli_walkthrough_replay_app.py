"""`replay SESSION --app APP` with another app than the one the session recorded, as an
operator checks a fix or mistypes the app: a divergence says which app was replayed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from stdio_client import cli_in_process as cli
from tests_record import COUNTER, INCREMENT, record

TODO = "semledger.examples.todo:app"


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("replay-app") / "log.db"
    record(db, "counter", COUNTER, [INCREMENT])
    return db


def test_a_divergence_with_another_app_says_which_app_was_replayed(log: Path) -> None:
    """Its only note blamed the str hashing seed ("if the app iterates a set or dict of str,
    that alone may explain this divergence"), for a replay of the todo app on a counter."""
    done = cli("replay", "counter", "--db", str(log), "--app", TODO)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == (
        f"  note: replayed with --app {TODO}, not the app the session recorded, {COUNTER}:"
        " where they differ, the replay diverges"
    )


@pytest.mark.parametrize("app", [(), ("--app", COUNTER)], ids=["recorded", "same --app"])
def test_a_replay_of_the_recorded_app_has_no_such_note(log: Path, app: tuple[str, ...]) -> None:
    done = cli("replay", "counter", "--db", str(log), *app)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "note" not in done.stdout
