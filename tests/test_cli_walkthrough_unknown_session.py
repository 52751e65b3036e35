"""A session name the log does not hold, as an operator first types one: the start of a
demo's name, a typo, another case. Each command that takes a session says which it may
have meant, or how to list them."""

from __future__ import annotations

import difflib
import sys
from pathlib import Path
from typing import Any

import pytest

from semledger._cli import _close_names

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from stdio_client import cli_in_process as cli
from tests_record import COUNTER, INCREMENT, record

DEMO = "demo-20261207-213645-3686"
FUZZ = "fuzz-20261207-214149-3-d25767"


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("unknown-session") / "log.db"
    for name in (DEMO, FUZZ, "checkout"):
        record(db, name, COUNTER, [INCREMENT])
    return db


COMMANDS = [["read"], ["audit"], ["audit", "--verify"], ["replay"], ["end"]]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
@pytest.mark.parametrize(
    ("given", "meant"),
    [
        ("demo", DEMO),  # the start of a long name
        ("DEMO-20261207-213645-3686", DEMO),  # another case
        ("demo-20261207-213645-3868", DEMO),  # digits swapped
        ("chekout", "checkout"),  # a letter left out
    ],
)
def test_an_unknown_session_close_to_one_in_the_log_is_told_the_one_meant(
    log: Path, command: list[str], given: str, meant: str
) -> None:
    """It said only "the log has no session 'demo'", for a name `demo` printed in full."""
    done = cli(command[0], given, "--db", str(log), *command[1:])
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"semledger: the log has no session {given!r}; did you mean {meant!r}?\n"
    )


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
@pytest.mark.parametrize("given", ["", " "])
def test_a_blank_session_name_is_bad_usage_not_like_every_session(
    log: Path, command: list[str], given: str
) -> None:
    """A blank name is part of every name: each session was suggested for it."""
    done = cli(command[0], given, "--db", str(log), *command[1:])
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"semledger: argument SESSION: expected a session name, got {given!r} (see"
        f" 'semledger {command[0]} --help')\n"
    )


def test_an_unknown_session_like_several_is_told_each(log: Path) -> None:
    done = cli("read", "20261207", "--db", str(log))
    assert done.returncode == 2
    assert done.stderr == (
        f"semledger: the log has no session '20261207'; did you mean {FUZZ!r} or {DEMO!r}?\n"
    )


def test_an_unknown_session_like_none_is_told_how_to_list_them(log: Path) -> None:
    done = cli("replay", "orders", "--db", str(log))
    assert done.returncode == 2
    assert done.stderr == (
        f"semledger: the log has no session 'orders' (semledger sessions --db {log} lists its"
        " sessions)\n"
    )


def test_an_unknown_name_is_spelled_against_the_last_sessions_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """In a log of 100,000 fuzz runs, their names all alike, it was compared letter by letter
    with every one: 9 s before the line came."""
    compared: list[int] = []

    def counting(word: str, possibilities: list[str], *args: Any, **kwargs: Any) -> list[str]:
        compared.append(len(possibilities))
        return spelled_alike(word, possibilities, *args, **kwargs)

    spelled_alike = difflib.get_close_matches
    monkeypatch.setattr(difflib, "get_close_matches", counting)
    names = [f"fuzz-20261207-{n:06d}-0-d25767" for n in range(100_000)]
    meant = _close_names("fuzz-20261207-099999-0-d25768", names)
    assert meant[0] == "fuzz-20261207-099999-0-d25767"
    assert compared == [1_000]
