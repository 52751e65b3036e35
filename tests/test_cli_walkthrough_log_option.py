"""`--log` as an operator first types it for the log's path (the option is --db): never
taken for `serve --log-passwords`, and told which option names the log."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from semledger._cli import build_parser

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from stdio_client import cli_in_process as cli

COUNTER = "semledger.examples.counter:app"


@pytest.mark.parametrize("given", ["--log", "--log-pass", "--log-p"])
def test_serve_logs_passwords_only_with_the_whole_option(given: str) -> None:
    """`serve APP --log` served with --log-passwords: passwords in clear in the log, for an
    option the operator gave for the log's path (argparse took it as an abbreviation)."""
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", COUNTER, given])
    assert build_parser().parse_args(["serve", COUNTER, "--log-passwords"]).log_passwords


@pytest.mark.parametrize(
    "args",
    [
        ["serve", COUNTER, "--log", "mine.db"],
        ["serve", COUNTER, "--log=mine.db"],
        ["sessions", "--log", "mine.db"],
        ["audit", "s", "--log", "mine.db"],
    ],
    ids=" ".join,
)
def test_a_log_option_is_told_the_log_is_given_with_db(args: list[str]) -> None:
    """`serve APP --log mine.db` said "unrecognized arguments: mine.db", --log taken for
    --log-passwords; `sessions --log mine.db` did not say which option names the log."""
    done = cli(*args)
    assert (done.returncode, done.stdout) == (2, "")
    given = " ".join(args[args.index(next(a for a in args if a.startswith("--log"))) :])
    assert done.stderr == (
        f"semledger: unrecognized arguments: {given}; the log's path is given as --db PATH"
        f" (see 'semledger {args[0]} --help')\n"
    )
