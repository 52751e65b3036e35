"""semledger: agent-operable user interfaces on committed semantics, every action on the record."""

from __future__ import annotations

import argparse
import contextlib
import errno
import functools
import io
import itertools
import json
import logging
import math
import os
import re
import signal
import stat
import sys
import threading
import time
import traceback
import warnings
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NoReturn, Protocol, TextIO, cast

from rich.console import Console
from rich.progress import Progress
from rich.text import Text

from semledger.eventlog import (
    DAMAGED_LOG_ERRORS,
    ChainReport,
    CorruptSchemaError,
    Head,
    LogBusyError,
    LogOpenError,
    LogUnreadableError,
    Recorder,
    SessionSummary,
    TimeProblem,
    UnsupportedSchemaError,
)
from semledger.runtime._text import counted, printable, printable_traceback, shortened

if TYPE_CHECKING:
    from semledger.hosts import Served
    from semledger.replay import AuditReport, FuzzResult
    from semledger.runtime import Full

DEFAULT_DB = "semledger.db"


class UsageError(Exception):
    """Bad usage found after parsing (a missing log, an unknown session): exit status 2."""


class _Parser(argparse.ArgumentParser):
    """Bad usage ends with exit status 2 and a one-line reason on stderr. Every argument
    that takes text is UTF-8 (`_utf8`)."""

    _given: Sequence[str] = ()
    """The arguments this parser was given, to say how to give one that starts with '-'."""

    def error(self, message: str) -> NoReturn:
        message = self._early_option(message) or message
        hint = self._dash_hint(message) + _log_hint(message)
        self.exit(2, f"semledger: {message}{hint} (see '{self.prog} --help')\n")

    def _early_option(self, message: str) -> str | None:
        """What `_refuse` says of a command's option given before the command's name, for
        one given with its value apart (``--db d.db sessions``): argparse took the value for
        the name, and said only that it is no command."""
        invalid = re.fullmatch(r"argument COMMAND: invalid choice: (.*) \(choose from .*", message)
        if invalid is None:
            return None
        for action in self._actions:
            if not isinstance(action, argparse._SubParsersAction):
                continue
            given = list(self._given)
            options = set(_valued_options(action.choices.values()))
            for at, (option, value) in enumerate(itertools.pairwise(given), 1):
                if option in options and repr(value) == invalid[1]:
                    name = next((arg for arg in given[at + 1 :] if arg in action.choices), None)
                    if name is not None:
                        early = " ".join(given[: given.index(name)])
                        return (
                            f"unrecognized arguments before {name!r}: {early};"
                            " a command's options go after its name"
                        )
        return None

    def _get_option_tuples(self, option_string: str) -> list[Any]:
        """The options `option_string` abbreviates, never one given only whole: `serve APP
        --log`, meant for the log's path, logged passwords in clear."""
        found: list[Any] = super()._get_option_tuples(option_string)
        return [option for option in found if option[1] not in _WHOLE_ONLY]

    def _dash_hint(self, message: str) -> str:
        """How to give a value or a name that starts with '-', which argparse takes for an
        option: its own words only said that one was missing."""
        if missing := re.fullmatch(r"argument (\S+): expected one argument", message):
            for option, value in itertools.pairwise(self._given):
                if option in missing[1].split("/") and value.startswith("-"):
                    return f"; a value that starts with '-' is given as {option}={value}"
        elif message.startswith("the following arguments are required"):
            options = {option for action in self._actions for option in action.option_strings}
            for arg in self._given:
                goes_last = (
                    "a name that starts with '-' goes last, after '--' and the options:"
                    f" {self.prog} [options] -- {arg}"
                )
                if re.match(r"-[^-0-9]", arg) and arg[:2] not in options:
                    return f"; {goes_last}"
                long = arg.partition("=")[0]
                if re.match(r"--.", long) and not any(o.startswith(long) for o in options):
                    # (A mistyped option, or a name: either way it is none of the options.)
                    return f"; {long} is no option of {self.prog} ({goes_last})"
        return ""

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        self._given = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        """As argparse's, but an argument no parser took is refused by the subcommand's
        parser, whose help lists its options: the top level's lists none of them."""
        parsed, extra = self.parse_known_args(args, namespace)
        if extra:
            self._refuse(extra, parsed, list(sys.argv[1:] if args is None else args))
        return parsed

    def _refuse(self, extra: list[str], parsed: argparse.Namespace, argv: list[str]) -> NoReturn:
        """Refuse the `extra` arguments of `argv` from the innermost (sub)command parser
        `parsed` went through; those given before a command's name from the one above it,
        saying that they go after the name."""
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                name = getattr(parsed, action.dest, "")
                chosen = action.choices.get(name)
                if isinstance(chosen, _Parser) and name in argv:
                    at = argv.index(name)
                    if early := [arg for arg in extra if arg in argv[:at]]:
                        self.error(
                            f"unrecognized arguments before {name!r}: {' '.join(early)};"
                            " a command's options go after its name"
                        )
                    chosen._refuse(extra, parsed, argv[at + 1 :])
        self.error(f"unrecognized arguments: {' '.join(extra)}")

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        if kwargs.get("action", "store") in ("store", "append"):
            kwargs["type"] = _utf8(kwargs.get("type"))
        return super().add_argument(*args, **kwargs)


def _valued_options(parsers: Iterable[argparse.ArgumentParser]) -> Iterator[str]:
    """The options that take a value of `parsers` and of their commands, all the way down."""
    for parser in parsers:
        for action in parser._actions:
            if action.nargs != 0:
                yield from action.option_strings
            if isinstance(action, argparse._SubParsersAction):
                yield from _valued_options(action.choices.values())


_WHOLE_ONLY = frozenset({"--log-passwords"})
"""Options argparse takes no abbreviation of."""


def _log_hint(message: str) -> str:
    """Which option names the log, for an unrecognized ``--log`` (or ``--log=PATH``)."""
    if re.match(r"unrecognized arguments: (.* )?--log(=| |$)", message):
        return "; the log's path is given as --db PATH"
    return ""


def _utf8(parse: Callable[[str], Any] | None) -> Callable[[str], Any]:
    """`parse` (an argparse type; None: the text itself), refusing first an argument that is
    not UTF-8 (a Latin-1 file name, say): Python keeps its bytes as lone surrogates, which
    failed deep inside, or were typed into an app by the fuzzer and reported as the app's
    bug. Made here, the refusal names the argument as argparse does (``argument --db``)."""

    @functools.wraps(parse or str)
    def parsed(text: str) -> Any:
        if not text.isascii():
            from semledger.runtime._ids import has_lone_surrogate  # fuzz_app's check too

            if has_lone_surrogate(text):
                raise argparse.ArgumentTypeError(f"{text!r} is not UTF-8")
        return text if parse is None else parse(text)

    return parsed


def _whole(text: str) -> int:
    """An argparse type: a whole number in ASCII decimal digits (``int`` alone would also
    take ``'1_0'``, ``' +3'`` or Arabic-Indic digits)."""
    if re.fullmatch(r"-?[0-9]+", text) is None:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {shortened(text, 80)!r}")
    digits = len(text.lstrip("-").lstrip("0"))
    if digits > _DIGITS:  # (int() refuses past Python's limit, quoting every digit)
        raise argparse.ArgumentTypeError(
            f"expected a whole number of at most {_DIGITS} digits, got one of {digits}"
        )
    return int(text)


_DIGITS = 40
"""More digits than any number a command takes (a seed, a generation: under 2**64)."""


def _at_least(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number no smaller than `low`, nor larger than `high` when
    given (else a one-line usage error)."""

    def parse(text: str) -> int:
        value = _whole(text)
        if value < low:
            raise argparse.ArgumentTypeError(f"expected at least {low}, got {value}")
        if high is not None and value > high:
            raise argparse.ArgumentTypeError(f"expected at most {high}, got {value}")
        return value

    return parse


def _seconds(text: str) -> float:
    """An argparse type: a number of seconds, more than 0 and at most a day."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not 0 < value <= 86_400:
        raise argparse.ArgumentTypeError(f"expected more than 0 and at most 86400, got {text}")
    return value


_SESSION = "a session's name (semledger sessions lists them)"
_NOT_A_LOG = "a file there that holds no log"
_JSON = "print JSON instead of a table"


def _allowed_issue(text: str) -> str:
    """An argparse type: issues a view may report on purpose, ``KIND[:SEMANTIC_ID]``."""
    from semledger.replay._invariants import allowed_issue

    try:
        return allowed_issue(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _nonempty(what: str) -> Callable[[str], str]:
    """An argparse type: a text that cannot be empty (an unset ``$NAME`` given as
    ``--session "$NAME"`` would otherwise start a new session instead of resuming one,
    an unset token serve with none)."""

    def parse(text: str) -> str:
        if not text:
            raise argparse.ArgumentTypeError(f"expected {what}, got ''")
        return text

    return parse


def _session_name(text: str) -> str:
    """An argparse type: a session name, which tables show as it is: blank, or with
    spaces at an end, it would pass for none or for another."""
    from semledger.actors import check_session_name

    try:
        check_session_name(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def _logged_session(text: str) -> str:
    """An argparse type: the name of a session in the log, which is never blank: one that is
    is part of every name, and each was suggested for it. Any other is taken as it is: an
    old log may hold a name that a new session may not have (a control character in it)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"expected a session name, got {text!r}")
    return text


def _url(text: str) -> str:
    """An argparse type: an absolute URL a browser can open (a relative one would open
    ``about:blank`` and navigate nowhere)."""
    from urllib.parse import urlsplit

    expected = f"expected an absolute URL (http://..., https://..., file://...), got {text!r}"
    try:
        parts = urlsplit(text)
    except ValueError as error:  # an unclosed IPv6 bracket, say
        raise argparse.ArgumentTypeError(f"{expected}: {error}") from None
    if not parts.scheme or (parts.scheme in ("http", "https") and not parts.hostname):
        raise argparse.ArgumentTypeError(expected)
    return text


def _origin(text: str) -> str:
    """An argparse type: an origin, ``scheme://host[:port]``, normalised."""
    from semledger.hosts import normalize_origin

    try:
        return normalize_origin(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _anchor(text: str) -> Any:
    from semledger.eventlog import Head

    seq, colon, chain = text.partition(":")
    not_hex = re.search(r"[^0-9a-fA-F]", chain)  # (fromhex would skip spaces)
    if not colon:
        wrong = "it has no ':' between SEQ and HEX"
    elif re.fullmatch(r"[0-9]+", seq) is None:
        wrong = f"its SEQ {shortened(seq, 40)!r} is no whole number"
    elif not seq.strip("0"):
        wrong = f"its SEQ is {seq}: events are numbered from 1"
    elif len(seq.lstrip("0")) > _DIGITS:
        wrong = f"its SEQ has {len(seq.lstrip('0'))} digits, more than any event number"
    elif not_hex is not None:
        wrong = f"its HEX holds {not_hex.group()!r}, which is no hex digit"
    elif len(chain) != 64:
        wrong = f"its HEX has {len(chain)} digits, not the 64 of a chain value"
    else:
        return Head(int(seq), bytes.fromhex(chain))
    raise argparse.ArgumentTypeError(
        f"{shortened(text, 160)!r}: {wrong}; expected SEQ:HEX, a chain head as"
        " `audit --verify` prints it: SEQ an event number from 1, HEX the 64 hex digits of its"
        " chain"
    )


def _test_module(text: str) -> str:
    """An argparse type: the file `--export-test` writes, which pytest runs only if its name
    ends in ``.py`` (given by name on its command line too)."""
    expected = f"expected a path ending in .py (pytest runs no other file), got {text!r}"
    if text.endswith(("/", os.sep)):  # (`Path` drops the separator: 'sub.py/' ends in .py)
        raise argparse.ArgumentTypeError(f"{expected}, a folder's path (it ends in {text[-1]!r})")
    if Path(text).suffix != ".py":
        raise argparse.ArgumentTypeError(expected)
    return text


def _how_to_run(test: str) -> str:
    """How to run the test module `test`: pytest finds one by itself only by its name."""
    import fnmatch
    import shlex

    if any(fnmatch.fnmatchcase(Path(test).name, name) for name in ("test_*.py", "*_test.py")):
        return "run it with pytest"
    return (
        f"run it with pytest {shlex.quote(test)} (by itself, pytest collects only"
        " test_*.py and *_test.py files)"
    )


def _log_path(text: str) -> str:
    """An argparse type: the log's file path; not ``:memory:`` or a ``file:`` URI, which
    SQLite reads as no file at all or as options (``./file:x.db`` names such a file), nor a
    folder's path (``log.db/``), which `Path` would read as ``log.db`` and SQLite as no file."""
    path = _nonempty("a file path")(text)
    name = os.path.basename(path)
    if name in ("", ".", ".."):
        raise argparse.ArgumentTypeError(
            f"expected a file path, got {text!r}, a folder's path (it ends in {name or os.sep!r})"
        )
    if path == ":memory:" or path.startswith("file:"):
        raise argparse.ArgumentTypeError(
            f"expected a file path: the log is kept in a file, got {text!r}"
            + (f" (for a file of that name, give ./{text})" if path.startswith("file:") else "")
        )
    return path


def _add_db(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db",
        type=_log_path,
        default=DEFAULT_DB,
        metavar="PATH",
        help=f"the log (default: ./{DEFAULT_DB})",
    )


class _Version(argparse.Action):
    """``--version``: the installed package's version, looked up only when asked for (the
    package metadata takes tens of milliseconds to find, which every command would pay)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> NoReturn:
        from importlib.metadata import PackageNotFoundError, version

        try:
            said = version("semledger")
        except PackageNotFoundError:  # run from a source tree that was never installed
            said = "unknown (not installed)"
        with contextlib.suppress(BrokenPipeError):  # the reader went away, as after --help
            sys.stdout.write(f"semledger {said}\n")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="semledger", description=__doc__)
    parser.add_argument("--version", action=_Version, help="print the version and exit")
    commands = parser.add_subparsers(
        dest="command", metavar="COMMAND", required=True, parser_class=_Parser
    )

    demo = commands.add_parser("demo", help="the main job: an agent drives the todo app over MCP")
    _add_db(demo)

    serve = commands.add_parser("serve", help="serve an app (or a surface) to agents over MCP")
    serve.add_argument("app", nargs="?", metavar="APP", help="module:attribute of an App")
    _add_db(serve)
    serve.add_argument(
        "--adapter", metavar="NAME", help="serve a surface through this adapter instead"
    )
    serve.add_argument(
        "--app", dest="app_option", metavar="APP", help="the app, for --adapter runtime"
    )
    serve.add_argument(
        "--url", type=_url, metavar="URL", help="the page to open, for --adapter web"
    )
    serve.add_argument(
        "--launch",
        type=_nonempty("a command"),
        metavar="CMD",
        help="the application to launch, for --adapter atspi",
    )
    serve.add_argument(
        "--timeout",
        type=_seconds,
        metavar="S",
        help="with --adapter web or atspi: how long to wait for the page or the application's"
        " window, and for each call (default 5 for web, 20 for atspi)",
    )
    serve.add_argument(
        "--session",
        type=_session_name,
        metavar="NAME",
        help="name the stdio session (resumes it); default: 'stdio-' or the adapter's name,"
        " then the date, the time and random hex",
    )
    serve.add_argument("--diagnostics", action="store_true", help="add the diagnostics tools")
    serve.add_argument("--http", metavar="HOST:PORT", help="serve Streamable HTTP instead")
    serve.add_argument(
        "--token",
        type=_nonempty("a token"),
        metavar="T",
        help="bearer token for HTTP (or SEMLEDGER_TOKEN)",
    )
    serve.add_argument(
        "--allow-origin",
        action="append",
        type=_origin,
        default=[],
        metavar="ORIGIN",
        help="an Origin besides localhost pages allowed to call the HTTP server (repeatable)",
    )
    serve.add_argument(
        "--idle-timeout",
        type=_seconds,
        metavar="S",
        help="with --http: park a session no request used for S seconds (its next request"
        " resumes it from the log; default 900)",
    )
    serve.add_argument(
        "--log-passwords", action="store_true", help="log values typed into password fields"
    )

    sessions = commands.add_parser(
        "sessions",
        help="the sessions in the log",
        description="List the sessions in the log, each checked against its events. Exit status"
        " 0: listed; 1: a session's summary disagrees with its events, or the log is damaged or"
        f" cannot be read (said on stderr); 2: bad usage (no log at --db, {_NOT_A_LOG}).",
    )
    _add_db(sessions)
    sessions.add_argument("--json", action="store_true", help=_JSON)

    read = commands.add_parser(
        "read",
        help="a Full read of a session from the log alone",
        description="Print the Full read of SESSION at a generation from the log alone, without"
        " the application. Exit status 0: read; 1: the log is damaged or cannot be read (a read"
        " from the events before the damage is still printed when there is one); 2: bad usage"
        f" (no log at --db, {_NOT_A_LOG}, an unknown session, a generation it never reached, a"
        " session with no commit).",
    )
    read.add_argument("session", metavar="SESSION", type=_logged_session, help=_SESSION)
    _add_db(read)
    read.add_argument(
        "--generation",
        type=_at_least(1, 2**64 - 1),
        metavar="N",
        help="from 1; default: the last one",
    )
    read.add_argument("--json", action="store_true", help="print the read's wire form")

    audit = commands.add_parser(
        "audit",
        help="every perform_action of a session and its outcome",
        description="List every perform_action of SESSION and its outcome, who connected, what"
        " befell the application and how the session stands. Exit status 0: audited (and with"
        " --verify or --anchor, the chain verifies); 1: the chain does not verify or does not"
        " lead to the anchor, or events are damaged (the others are still listed, the damaged"
        f" named on stderr); 2: bad usage (no log at --db, {_NOT_A_LOG}, an unknown session).",
    )
    audit.add_argument("session", metavar="SESSION", type=_logged_session, help=_SESSION)
    _add_db(audit)
    audit.add_argument("--json", action="store_true", help=_JSON)
    audit.add_argument("--verify", action="store_true", help="check the integrity chain too")
    audit.add_argument(
        "--anchor",
        metavar="SEQ:HEX",
        type=_anchor,
        help="a chain head an earlier --verify printed: also prove the log still leads to it "
        "(implies --verify)",
    )

    replay = commands.add_parser(
        "replay",
        help="re-execute a session and compare every commit",
        description="Re-execute SESSION's inputs on its app and compare every output with the"
        " log (a surface session: repeat its calls on a new surface). Exit status 0: identical"
        " (a recorded failure reproduced included), or the test written; 1: diverged, or the"
        " log is edited, damaged or cannot be read; 2: bad usage (no log at --db,"
        f" {_NOT_A_LOG}, an unknown session, an app that cannot be imported, a FILE that"
        " cannot be written).",
    )
    replay.add_argument("session", metavar="SESSION", type=_logged_session, help=_SESSION)
    _add_db(replay)
    replay.add_argument("--app", metavar="APP", help="default: the app the session recorded")
    replay.add_argument("--pdb", action="store_true", help="stop in pdb where the app raised")
    replay.add_argument(
        "--export-test",
        metavar="FILE",
        type=_test_module,
        help="write a pytest module (FILE ends in .py) instead",
    )

    end = commands.add_parser(
        "end",
        help="end a session for good: it is not resumed again",
        description="Append the end of SESSION to the log, so it reads as ended rather than"
        " open, and is not served again. A session whose server was killed stays open, and"
        " one whose client went away, or whose HTTP server stopped or parked it, ends for"
        " now: serving it again resumes it (restarting"
        " the effects it had not finished). End one that must not be resumed (its app"
        " changed, its resume is refused, an effect must not run twice). Refused while the"
        " session is being served.",
    )
    end.add_argument("session", metavar="SESSION", type=_logged_session, help=_SESSION)
    _add_db(end)
    end.add_argument(
        "--reason", type=_nonempty("a reason"), metavar="TEXT", help="why, for the audit"
    )

    fuzz = commands.add_parser(
        "fuzz",
        help="property-based fuzzing of generation semantics",
        description="Drive fresh sessions of APP with random actions, reads and timer ticks and"
        " check the generation invariants. Exit status 0: no counterexample; 1: a"
        " counterexample (the app or an effect it started raised, its view returned something"
        " that is not a View, a generation invariant broke, its view reported an issue, or the"
        " app behaved differently on the same inputs), saved as a session in the log; 2: bad"
        " usage (an app that cannot be imported, a --db that is not a log or cannot be"
        " created, a --seed out of range, --examples or --steps below 1).",
    )
    fuzz.add_argument("app", metavar="APP", help="module:attribute of an App")
    _add_db(fuzz)
    fuzz.add_argument(
        "--examples", type=_at_least(1), default=100, metavar="N", help="default: 100"
    )
    fuzz.add_argument(
        "--steps",
        type=_at_least(1),
        default=50,
        metavar="N",
        help="the most inputs and reads an example takes (default: 50); most stop sooner",
    )
    fuzz.add_argument(
        "--seed",
        type=_whole,
        default=0,
        metavar="S",
        help="default: 0 (the same seed tries the same examples)",
    )
    fuzz.add_argument(
        "--allow-issue",
        action="append",
        default=[],
        type=_allowed_issue,
        metavar="KIND[:SEMANTIC_ID]",
        help="an issue the view reports on purpose, not a counterexample (repeatable): a kind"
        " (duplicate_semantic_id, missing_relation_target, ambiguous_relation_target), or"
        " one about a semantic id, as duplicate_semantic_id:todo.item",
    )
    fuzz.add_argument(
        "--text",
        action="append",
        default=[],
        metavar="VALUE",
        help="a value to type, besides the generated ones (repeatable): half of what is typed"
        " is one of them, so give those that pass the app's validation (an email a@b.c, an"
        " age 42, a confirmation word DELETE), which random text all but never does",
    )

    surface = commands.add_parser("surface", help="the agent surface: adapter conformance")
    surface_commands = surface.add_subparsers(
        dest="surface_command", metavar="COMMAND", required=True, parser_class=_Parser
    )
    conform = surface_commands.add_parser("conform", help="run the conformance suite")
    conform.add_argument(
        "--adapter",
        required=True,
        metavar="NAME",
        help="the adapter to check: runtime, web or atspi",
    )
    conform.add_argument("--suite", metavar="S", help="default: the adapter's own suite")
    conform.add_argument("--only", metavar="IDS", help="comma-separated case ids")
    conform.add_argument("--json", action="store_true", help="print the report as JSON")
    conform.add_argument("--report", metavar="FILE.md", help="also write a Markdown report")
    conform.add_argument(
        "--timeout",
        type=_seconds,
        default=60.0,
        metavar="S",
        help="fail a case that takes longer than S seconds and go on (default 60)",
    )
    return parser


def _recorder(db: str, *, must_exist: bool = True) -> Any:
    """The log at `db`; one that must exist must already be a log, and is inspected as it
    is (``SqliteRecorder.to_inspect``)."""
    from semledger.eventlog import SqliteRecorder

    if not must_exist:
        _check_readable(db)
        return SqliteRecorder(db)
    _check_there(db)
    return SqliteRecorder.to_inspect(db)


def _check_there(db: str) -> None:
    """Raise `UsageError` unless there is a file (or a link, which opening it describes:
    one to nothing, a loop) at `db`."""
    if not os.path.lexists(db):
        raise UsageError(f"no log at {db} (give --db PATH)")
    _check_readable(db)


def _check_readable(db: str) -> None:
    """Raise `UsageError` if this user may not read the file at `db`: SQLite said "unable
    to open database file", or "attempt to write a readonly database" where it was to be
    written. Only a regular file is opened: a FIFO or a device is refused as the log opens,
    and opening one may unblock its writer, or rewind a tape."""
    try:
        if not stat.S_ISREG(os.stat(db).st_mode):
            return
        os.close(os.open(db, os.O_RDONLY))
    except PermissionError:
        raise UsageError(
            f"cannot open the log {db}: permission denied: this user may not read it"
        ) from None
    except OSError:  # not there, a folder, a link to nowhere: opening the log says which
        pass


_PLAIN_EVERY = 5.0
"""Seconds between the progress lines of a command whose output is not a terminal."""


@contextmanager
def _progress(
    console: Console,
    label: str,
    enabled: bool,
    *,
    unit: str = "events",
    then: str | None = None,
) -> Iterator[_Shown]:
    """Progress of long work: a rich bar when the output is a terminal; otherwise (a pipe,
    a file, CI) a plain line on stderr every `_PLAIN_EVERY` seconds, ``semledger: fuzzing:
    1200/20000 examples``, so a short command prints none. A None total after a known one
    starts a phase of unknown length, shown as `then` formatted with ``done`` (fuzzing's
    shrinking)."""
    if not enabled:
        yield _Off()
    elif console.is_terminal:
        with Progress(console=console, transient=True) as progress:
            yield _Bar(progress, label, then)
    else:
        yield _Lines(label, unit, then)


class _Shown(Protocol):
    """Progress as `_progress` shows it: called with ``(done, total)``; `relabel` starts
    counting another pass over the work under its own label (``audit --verify``: verifying
    the chain, then auditing), with the lines' interval running on: each is under five
    seconds on a long log, the two together are not."""

    def __call__(self, done: int, total: int | None) -> None: ...

    def relabel(self, label: str) -> None: ...


class _Off:
    def __call__(self, done: int, total: int | None) -> None:
        pass

    def relabel(self, label: str) -> None:
        pass


class _Phase:
    """Which phase progress is in: counting, or, once a None total follows a known one, the
    phase of unknown length, said as `then` formatted with ``done``."""

    def __init__(self, then: str | None) -> None:
        self._then = then
        self._known = False

    def open_ended(self, done: int, total: int | None) -> str | None:
        """What to say of the open-ended phase, or None while counting."""
        if total is not None:
            self._known = True
            return None
        return self._then.format(done=done) if self._known and self._then is not None else None


class _Lines:
    def __init__(self, label: str, unit: str, then: str | None) -> None:
        self._label = label
        self._unit = unit
        self._then = then
        self._phase = _Phase(then)
        self._last = time.monotonic()

    def relabel(self, label: str) -> None:
        self._label = label
        self._phase = _Phase(self._then)

    def __call__(self, done: int, total: int | None) -> None:
        open_ended = self._phase.open_ended(done, total)
        now = time.monotonic()
        if now - self._last < _PLAIN_EVERY:
            return
        self._last = now
        if open_ended is not None:
            text = open_ended
        elif total is not None:
            text = f"{self._label}: {done}/{total} {self._unit}"
        else:
            text = f"{self._label}: {done} {self._unit}"
        print(f"semledger: {text}", file=sys.stderr, flush=True)


class _Bar:
    """One rich task, and a new one for a phase of unknown length: rich's update takes a
    None total for "unchanged", so the bar would stay full ("100% 0:00:00")."""

    def __init__(self, progress: Progress, label: str, then: str | None) -> None:
        self._progress = progress
        self._then = then
        self._task = progress.add_task(label, total=None)
        self._phase = _Phase(then)
        self._open_ended = False

    def relabel(self, label: str) -> None:
        self._progress.remove_task(self._task)
        self._task = self._progress.add_task(label, total=None)
        self._phase = _Phase(self._then)
        self._open_ended = False

    def __call__(self, done: int, total: int | None) -> None:
        open_ended = self._phase.open_ended(done, total)
        if open_ended is None:
            self._progress.update(self._task, completed=done, total=total)
            return
        if not self._open_ended:
            self._progress.remove_task(self._task)
            self._task = self._progress.add_task(open_ended, total=None)
            self._open_ended = True
        self._progress.update(self._task, description=open_ended)


def _cmd_sessions(args: argparse.Namespace, console: Console) -> int:
    from semledger.eventlog import checked_sessions

    # (Each end read is the one the summaries were checked against.)
    with _recorder(args.db) as recorder, recorder.pinned():
        summaries, problems = checked_sessions(recorder)
        served = recorder.served(s.name for s in summaries if not s.ended)
        final = {s.name: _final(recorder, s) for s in summaries}
    if args.json:
        found: dict[str, list[str]] = {}
        for problem in problems:
            found.setdefault(problem.session, []).append(problem.what)
        listed = [
            _summary_json(s, final[s.name], served, found.get(s.name)) for s in summaries
        ]
        _print_json(listed, ensure_ascii=True)
    else:
        _sessions_table(args.db, summaries, served, final, console)
    for problem in problems:
        _complain(f"the log {args.db} is damaged: {problem}")
    return 1 if problems else 0


def _sessions_table(
    db: str,
    summaries: list[SessionSummary],
    served: dict[str, bool | None],
    final: dict[str, bool | None],
    console: Console,
) -> None:
    from semledger._render import print_sessions, shown

    rows = [
        (
            shown(s.name),
            shown(s.app or ""),
            shown(s.surface or ""),
            str(s.events),
            shown(shortened(_state(s, served, final[s.name]))),  # a fuzz end: the app's message
        )
        for s in summaries
    ]
    if not rows:  # (an empty table reads as a drawing error)
        console.print(printable(f"no sessions in {db}"), highlight=False, markup=False)
        return
    print_sessions(console, printable(f"sessions in {db}"), rows)  # the operator's path


def _state(summary: SessionSummary, served: dict[str, bool | None], final: bool | None) -> str:
    """``open``, ``open, not served``, ``ended for now: <reason>`` (serving it again resumes
    it), ``ended for good: <reason>``, or ``crashed: <exception type>``, as audit tells
    its end; ``ended: <reason>`` when its last event cannot say which end it was."""
    if not summary.ended:
        # Not served and not ended: its server was killed; serving it again resumes it.
        # (Open alone where that cannot be told: a copy of the log has no claims.)
        return "open, not served" if served[summary.name] is False else "open"
    if summary.crashed:
        return str(summary.end_reason or "crashed")
    ended = {True: "ended for good", False: "ended for now", None: "ended"}[final]
    return f"{ended}: {summary.end_reason}" if summary.end_reason else ended


def _final(recorder: Recorder, summary: SessionSummary) -> bool | None:
    """Whether the session was ended for good (`SessionEnded.final`), as audit's
    ``end.final`` says; None when its last event cannot be read, or is not the end its
    summary says."""
    from semledger.eventlog import session_end

    if not summary.ended or summary.crashed:
        return False
    try:
        end = session_end(recorder, summary.name)
    except DAMAGED_LOG_ERRORS:
        return None
    if end is None:  # listed from its summary row, as its events cannot say
        return None
    return end.final


def _summary_json(
    summary: SessionSummary,
    final: bool | None,
    served: dict[str, bool | None],
    problems: list[str] | None,
) -> dict[str, Any]:
    """The summary; whether it was ended for good; whether the session is being served now
    (false for an ended one; null: unknown here, as of a copy of the log); and how the
    log's summary disagrees with its events (null: it does not), as stderr says too."""
    import attrs

    being_served = served.get(summary.name, False)  # (not asked of an ended one)
    problem = None if not problems else "; ".join(problems)
    # (A time that is NaN, for a session whose events cannot say, is printed as null.)
    fields = attrs.asdict(summary)
    return {**fields, "final": final, "served": being_served, "problem": problem}


def _cmd_read(args: argparse.Namespace, console: Console) -> int:
    from semledger.replay import (
        SurfaceSessionError,
        UnknownGenerationError,
        UnknownSessionError,
        full_at,
    )
    from semledger.runtime._wire import encode_read

    damage: Exception | None = None
    with _recorder(args.db) as recorder, recorder.pinned():
        try:
            full = full_at(recorder, args.session, args.generation)
        except DAMAGED_LOG_ERRORS as error:
            full, damage = _read_before(recorder, args.session, args.generation, error), error
        except SurfaceSessionError as error:
            audit = ""
            if error.called:  # quoted as a shell reads it back, as _no_session's command is
                from semledger.actors._commands import session_command

                audit = f" ({session_command('audit', args.session, args.db)} lists its actions)"
            raise UsageError(f"{error}{audit}") from error
        except UnknownSessionError as error:
            raise _no_session(error, recorder, args.session, args.db) from error
        except UnknownGenerationError as error:
            raise UsageError(str(error)) from error
        summary = recorder.summary(args.session) if full.generation == 0 else None
    if full.generation == 0:  # the empty tree before a first commit: nothing was shown
        why = " (its application raised as it started)" if summary and summary.crashed else ""
        raise UsageError(f"session {args.session!r} has no commit{why}")
    if args.json:
        _print_json(encode_read(full))
    else:
        from semledger._render import render_full

        console.print(render_full(full))
    if damage is not None:
        _complain(
            f"the log {args.db} is damaged after generation {full.generation}: {damage}; the"
            " read above comes from the events before the damage"
        )
        return 1
    return 0


_SUGGESTED = 3
"""The most session names an unknown one is told it may have meant."""
_SPELLED_ALIKE_AMONG = 1_000
"""The most sessions (the last names) an unknown name is compared with letter by letter: in
a log of 100,000 fuzz runs' names, all alike, that took 9 s."""


def _no_session(error: Exception, recorder: Recorder, name: str, db: str) -> UsageError:
    """`error` (the log has no session `name`) as a usage error saying which it may have
    meant: a demo's or a fuzz run's name is long, and its start alone (``demo``) or a typo
    was told only that there is none."""
    meant = _close_names(name, list(recorder.session_names()))
    if not meant:
        from semledger.actors._commands import db_option

        return UsageError(f"{error} (semledger sessions {db_option(db)} lists its sessions)")
    more = len(meant) - _SUGGESTED
    said = " or ".join(repr(one) for one in meant[:_SUGGESTED])
    return UsageError(f"{error}; did you mean {said}{f' (or {more} more)' * (more > 0)}?")


def _close_names(name: str, names: list[str]) -> list[str]:
    """The sessions `name` may have been meant for: the same but for case, those it is part
    of (last name first: a demo's or a fuzz run's newest), then those spelled alike."""
    import difflib

    folded = name.casefold()
    same = [n for n in names if n.casefold() == folded]
    part = [n for n in reversed(names) if folded in n.casefold() and n not in same]
    recent = names[-_SPELLED_ALIKE_AMONG:]
    alike = difflib.get_close_matches(name, recent, n=_SUGGESTED, cutoff=0.6)
    return list(dict.fromkeys([*same, *part, *alike]))


def _read_before(
    recorder: Recorder, session: str, generation: int | None, damage: Exception
) -> Full:
    """The Full read at `generation` folded from the events up to it alone, when damage
    after it stopped the read (the last commit does not decode, the tail was cut): what
    the agent was shown then is still there. Raises `damage` if the read needs it too."""
    from semledger.actors import logged_journal
    from semledger.runtime import Full

    if generation is None or generation < 1:
        raise damage
    try:
        read = logged_journal(recorder, session, until=generation).read(None)
    except DAMAGED_LOG_ERRORS:
        raise damage from None
    assert isinstance(read, Full)
    return read


def _cmd_audit(args: argparse.Namespace, console: Console) -> int:
    # (The table and the verdict say the same of a live session.)
    with _recorder(args.db) as recorder, recorder.pinned():
        audited, report, unreadable = _audited(args, console, recorder)
    entries = audited.entries
    if args.json:
        out: dict[str, Any] = {
            "session": args.session,
            "redact_passwords": audited.redact_passwords,
            "actions": _Streamed(e.to_json() for e in entries),
            "incidents": [incident.to_json() for incident in audited.incidents],
            "diagnostics_inputs": audited.diagnostics_inputs,
            "connections": [c.to_json() for c in audited.connections],
            "end": audited.ending.to_json(),
            "unreadable": unreadable,
            "verify": None,
        }
        if report is not None:
            out["verify"] = {
                "ok": report.ok,
                "verified": report.verified,
                "problem": (None if report.problem is None else str(report.problem)),
                "head": _head_text(report),
                "times": None if report.times is None else report.times.seq,
            }
        _print_json(out)
    else:
        from semledger._render import audit_notes, connection_lines, print_audit

        for line in connection_lines(audited.connections):
            console.print(line, soft_wrap=True)
        print_audit(console, args.session, entries)
        for line in audit_notes(audited):
            console.print(line, soft_wrap=True)
        if report is not None:
            style = "green" if report.ok else "bold red"
            console.print(f"integrity chain: {_chain_verdict(report, args.anchor)}", style=style)
            if report.times is not None:
                console.print(_times_note(args.session, report.times), style="yellow")
            head = _head_text(report)
            if head is not None:
                console.print(
                    f"chain head (a later audit --anchor checks against it): {head}",
                    soft_wrap=True,
                    highlight=False,
                )
    if unreadable is not None:
        _complain(f"the log {args.db} is damaged: {unreadable}")
    return 0 if unreadable is None and (report is None or report.ok) else 1


def _audited(
    args: argparse.Namespace, console: Console, recorder: Recorder
) -> tuple[AuditReport, ChainReport | None, str | None]:
    """The audit, the chain's report (None unless asked) and what could not be read."""
    from semledger.replay import (
        AuditReport,
        UnknownSessionError,
        UnreadableEventError,
        audit_report,
        verify,
    )

    unreadable: str | None = None
    report = None
    checks = args.verify or args.anchor is not None
    # With --json, stdout is the JSON alone: a bar there would be drawn into it.
    shown = _Console(stderr=True, markup=False, emoji=False) if args.json else console
    try:
        with _progress(shown, "verifying" if checks else "auditing", True) as progress:
            if checks:
                report = verify(
                    recorder, args.session, anchor=args.anchor, on_progress=progress
                )
                progress.relabel("auditing")
            try:
                audited = audit_report(recorder, args.session, on_progress=progress)
            except UnreadableEventError as error:  # a tampered body may not even decode
                audited = error.report
                unreadable = str(error)
    except UnknownSessionError as error:
        if args.anchor is None:
            raise _no_session(error, recorder, args.session, args.db) from error
        audited = AuditReport([], [])  # every event is gone: the anchor's report says so
    return audited, report, unreadable


def _chain_verdict(report: ChainReport, anchor: Head | None) -> str:
    """The chain's verdict; a verified one says it reaches the anchor it was given, as a
    plain ``--verify``'s verdict does not."""
    if not report.ok or anchor is None:
        return str(report)
    return f"{report}, through the anchor at event {anchor.seq}"


def _times_note(session: str, times: TimeProblem) -> str:
    """The line under a verdict for a session whose times run backwards or are no finite
    number (before the chain head's line, which a script takes as the last one)."""
    return (
        f"event times: session {session!r}: {times}; times are not covered by the chain, so"
        " they may have been edited or the clock set back"
    )


class _Streamed:
    """A JSON array that `_print_json` writes an item at a time, as `items` makes each: one
    with an item per event (an audit's actions) is never held whole as JSON."""

    def __init__(self, items: Iterable[object]) -> None:
        self.items = items


def _print_json(value: object, *, ensure_ascii: bool = False) -> None:
    """Print `value` as strict JSON (RFC 8259): a number that is not finite, which only an
    edited or an old log holds (a time of ``inf``), is null, not the ``Infinity`` or ``NaN``
    that strict parsers refuse. A `_Streamed` array in it is written as its items come.
    A reader that stops early (`audit --verify --json | head -1`) silences the rest, as it
    does the console's: the command still finishes, with its own status."""
    try:
        for chunk in _json_chunks(value, 0, ensure_ascii):
            sys.stdout.write(chunk)
        sys.stdout.write("\n")
        sys.stdout.flush()
    except BrokenPipeError:
        _silence(sys.stdout)


def _json_chunks(value: object, level: int, ensure_ascii: bool) -> Iterator[str]:
    """`value` as ``json.dumps(value, indent=2)`` writes it `level` objects deep, in pieces:
    a `_Streamed` array an item at a time, and an object holding one a member at a time."""
    indent = "\n" + "  " * (level + 1)
    if isinstance(value, _Streamed):
        opening = "["
        for item in value.items:
            yield opening + indent
            yield from _json_chunks(item, level + 1, ensure_ascii)
            opening = ","
        yield "[]" if opening == "[" else "\n" + "  " * level + "]"
    elif isinstance(value, dict) and any(isinstance(item, _Streamed) for item in value.values()):
        opening = "{"
        for key, item in value.items():
            yield f"{opening}{indent}{json.dumps(key, ensure_ascii=ensure_ascii)}: "
            yield from _json_chunks(item, level + 1, ensure_ascii)
            opening = ","
        yield "\n" + "  " * level + "}"
    else:
        # (A string holds no raw newline: JSON escapes it. Each line is indented anew.)
        text = json.dumps(_finite(value), ensure_ascii=ensure_ascii, indent=2, allow_nan=False)
        yield text.replace("\n", "\n" + "  " * level)


def _finite(value: object) -> object:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def _head_text(report: ChainReport) -> str | None:
    """The verified head as ``--anchor`` takes it; None unless the whole chain verified."""
    if not report.ok or report.head is None:
        return None
    return f"{report.head.seq}:{report.head.chain.hex()}"


def _is_part_of_the_log(path: str, db: str) -> bool:
    """Whether writing `path` would replace the log `db` or one of the files SQLite and the
    session claims keep beside it."""
    if os.path.exists(path) and os.path.samefile(path, db):
        return True
    target, log = os.path.realpath(path), os.path.realpath(db)
    beside = {f"{log}-wal", f"{log}-shm", f"{log}-journal"}
    return target in beside or target.startswith(f"{log}-claims{os.sep}")


def _is_the_module_of(path: str, app_ref: str) -> bool:
    """Whether writing `path` would replace the source of the module `app_ref` names (loaded):
    the app's code, lost, and a test that imports itself for the app."""
    source = getattr(sys.modules.get(app_ref.partition(":")[0]), "__file__", None)
    return isinstance(source, str) and os.path.exists(path) and os.path.samefile(path, source)


def _cmd_replay(args: argparse.Namespace, console: Console) -> int:
    if args.pdb and args.export_test is not None:
        raise UsageError(
            "--pdb applies only to a replay, not with --export-test (which writes a test instead)"
        )
    with _recorder(args.db) as recorder:
        return _replay(args, console, recorder)


def _load_app(reference: str) -> Any:
    """`load_app`, whose app module calling sys.exit as it is imported is an `AppLoadError`:
    the command ended with the status the module gave, saying nothing."""
    from semledger.replay import AppLoadError, load_app

    try:
        return load_app(reference)
    except SystemExit as exiting:
        module = reference.partition(":")[0]
        code = "" if exiting.code is None else repr(exiting.code)
        raise AppLoadError(
            f"{reference!r}: importing {module} called sys.exit({shortened(code, 80)})"
        ) from None


def _replay(args: argparse.Namespace, console: Console, recorder: Any) -> int:
    from semledger.replay import (
        AppLoadError,
        UnknownSessionError,
        check_writable,
        export_test,
        reexecute,
        write_whole,
    )
    from semledger.replay._export import NOT_EXPORTED
    from semledger.replay._reexecute import NOT_REPLAYED, check_chain, logged_start

    try:
        # Chained, unlike the summary's app; missing, undecodable or another event, it is
        # damage (exit 1).
        started = logged_start(recorder, args.session)
    except UnknownSessionError as error:
        raise _no_session(error, recorder, args.session, args.db) from error
    if started.drives_a_surface:
        return _rerun_surface(args, console, recorder)
    app_ref = args.app or started.app
    try:
        app = _load_app(app_ref)  # first: an export for an app that cannot load would not run
    except AppLoadError as error:
        if args.app is None:  # the log's own ref, which an edit may have made: damage, then
            refused = NOT_REPLAYED if args.export_test is None else NOT_EXPORTED
            check_chain(recorder, args.session, refused)
        raise UsageError(str(error)) from error
    try:
        if args.export_test is not None:
            refused = f"cannot write --export-test {args.export_test!r}"
            if _is_part_of_the_log(args.export_test, args.db):
                raise UsageError(f"{refused}: it is the log {args.db}")
            if _is_the_module_of(args.export_test, app_ref):
                raise UsageError(
                    f"{refused}: it is the module of the app {app_ref}, which the test imports"
                    " (name the test test_*.py)"
                )
            # Before the export, which takes seconds of a long session, not after it.
            _write_or_refuse("--export-test", args.export_test, check_writable)
            source = export_test(recorder, args.session, app_ref=app_ref)
            # (A committed regression test, say: the line says it is gone. Through a link, the
            # file it names, which a dangling one has none of.)
            replacing = os.path.exists(args.export_test)
            _write_or_refuse(
                "--export-test", args.export_test, lambda path: write_whole(path, source)
            )
            replaced = " (replacing the file that was there)" if replacing else ""
            # The operator's path: an escape sequence in it does not reach the terminal.
            wrote = f"wrote {args.export_test}{replaced}: {_how_to_run(args.export_test)}"
            console.print(printable(wrote))
            return 0
        with _progress(console, "replaying", True) as progress:
            report = reexecute(recorder, args.session, app, on_progress=progress)
    except (UnknownSessionError, ValueError) as error:  # ValueError: a malformed session
        raise UsageError(f"session {args.session!r}: {error}") from error
    from semledger._render import replay_verdict

    console.print(replay_verdict(report))
    if not report.ok and app_ref != started.app:
        # Else only the str hashing note, which a random seed always gets, said why.
        console.print(
            printable(
                f"  note: replayed with --app {app_ref}, not the app the session recorded,"
                f" {started.app}: where they differ, the replay diverges"
            ),
            style="yellow",
        )
    if report.crash is not None and args.pdb:
        import pdb

        # The app's error where it raised; one the runtime made of what the app returned
        # (NotAViewError, say) was never raised: the runtime's refusal of it, then.
        raised = (report.crash.__cause__, report.crash)
        pdb.post_mortem(next(e.__traceback__ for e in raised if e and e.__traceback__))
    elif args.pdb:
        print("semledger: --pdb: the app raised nothing in the replay, so no debugger was opened",
              file=sys.stderr)
    return 0 if report.ok else 1


def _rerun_surface(args: argparse.Namespace, console: Console, recorder: Any) -> int:
    """A surface session (a web page, a desktop app) is re-run call by call on a new surface."""
    import trio

    from semledger._render import replay_verdict
    from semledger.adapters import AdapterRegistryError, SurfaceError
    from semledger.hosts import rerun_surface
    from semledger.replay._reexecute import NOT_REPLAYED, check_chain

    if args.app is not None or args.export_test is not None or args.pdb:
        raise UsageError("--app, --export-test and --pdb apply to app sessions, not surface ones")
    try:
        with _progress(console, "verifying", True) as progress:
            # The re-run reads the log its own way; an edit would read as the page's doing.
            check_chain(recorder, args.session, NOT_REPLAYED, on_progress=progress)
            progress.relabel("re-running")
            report = trio.run(lambda: rerun_surface(recorder, args.session, on_progress=progress))
    except (AdapterRegistryError, SurfaceError) as error:
        raise UsageError(f"cannot re-run {args.session!r}: {error}") from error
    console.print(replay_verdict(report))
    return 0 if report.ok else 1


def _cmd_end(args: argparse.Namespace, console: Console) -> int:
    from semledger.eventlog import (
        SessionClaimedError,
        SessionOverError,
        SqliteRecorder,
        UnknownSessionError,
        log_final_end,
    )

    _check_there(args.db)
    # One that ended for now (its client went away) is ended for good, as one still open.
    reason = "ended by the operator" + (f": {args.reason}" if args.reason else "")
    recorder = SqliteRecorder(args.db, create=False)
    try:
        log_final_end(recorder, args.session, reason, "operator", time.time())
    except UnknownSessionError as error:
        raise _no_session(error, recorder, args.session, args.db) from None
    except SessionOverError as error:
        raise UsageError(str(error)) from error
    except SessionClaimedError as error:
        raise UsageError(
            f"session {args.session!r} is being served now: stop its server first"
        ) from error
    finally:
        recorder.close()
    console.print(printable(f"session {args.session!r} {reason}"))
    return 0


def _cmd_fuzz(args: argparse.Namespace, console: Console) -> int:
    from semledger.replay import (
        SEEDS,
        AppLoadError,
        CounterexampleNotSavedError,
        FuzzInterrupted,
        fuzz_app,
    )

    if args.seed not in SEEDS:
        raise UsageError(
            f"--seed {args.seed}: expected a whole number from {SEEDS.start} to {SEEDS.stop - 1}"
        )
    try:
        app = _load_app(args.app)
    except AppLoadError as error:
        raise UsageError(str(error)) from error
    # The log is checked before the run, not after it: a file there is opened as `serve`
    # opens it (an empty one is made a log, another program's database is refused) and
    # must be writable (a counterexample would be lost), and a new file is made only to
    # save a counterexample, so a clean run leaves no file behind. It is closed at the end,
    # so the counterexample is in the file itself, not in a -wal file that a copy of the
    # log alone would leave behind.
    opened = [_recorder(args.db, must_exist=False)] if Path(args.db).exists() else []
    folder = Path(args.db).parent
    if not opened and not (folder.is_dir() and os.access(folder, os.W_OK | os.X_OK)):
        raise UsageError(f"cannot create the log {args.db}: {folder} is not a writable folder")

    def save_to() -> Any:
        if not opened:
            opened.append(_recorder(args.db, must_exist=False))
        return opened[0]

    passed = _Passed()
    try:
        with (
            _stopped_by_one_ctrl_c() as pressed,
            _hypothesis_caches_elsewhere(),
            _progress(console, "fuzzing", True, unit="examples", then=_SHRINKING) as progress,
        ):
            result = fuzz_app(
                app,
                args.app,
                save_to,
                examples=args.examples,
                seed=args.seed,
                steps=args.steps,
                allow_issues=args.allow_issue,
                texts=args.text,
                on_progress=_stopping(pressed, passed.counting(progress)),
            )
    except FuzzInterrupted as interrupted:
        _print_counterexample(console, interrupted.result, args.db, args.examples, shrunk=False)
        sys.stdout.flush()
        print(
            "semledger: interrupted while shrinking the counterexample: the one saved is the"
            " smallest found so far",
            file=sys.stderr,
        )
        return 130
    except CounterexampleNotSavedError as error:  # found, so not a usage error: status 1
        _complain(str(error))
        return 1
    except KeyboardInterrupt:  # before any counterexample: nothing saved
        print(
            f"semledger: interrupted: {passed.examples} of {args.examples} examples passed,"
            " no counterexample",
            file=sys.stderr,
        )
        return 130
    finally:
        for recorder in opened:
            recorder.close()
    if result.failure is None:
        console.print(f"{counted(result.examples, 'example')}, no counterexample", style="green")
        return 0
    _print_counterexample(console, result, args.db, args.examples)
    return 1


_SHRINKING = "shrinking a counterexample: try {done}"


class _Passed:
    """The examples that passed, as `fuzz_app`'s progress tells (it reports each example as
    it starts): those before the one running."""

    def __init__(self) -> None:
        self.examples = 0

    def counting(
        self, shown: Callable[[int, int | None], None]
    ) -> Callable[[int, int | None], None]:
        """`shown`, counting as it goes."""

        def progress(done: int, total: int | None) -> None:
            if total is not None:
                self.examples = done - 1
            shown(done, total)

        return progress


def _stopping(
    pressed: Callable[[], bool], shown: Callable[[int, int | None], None]
) -> Callable[[int, int | None], None]:
    """`shown`, raising KeyboardInterrupt as the next example starts once Ctrl-C was
    pressed: one Python swallowed (landing in a callback as a module was imported, it only
    prints "Exception ignored in: ...") was the one Ctrl-C taken, and the run went on to its
    last example, every later Ctrl-C ignored."""

    def progress(done: int, total: int | None) -> None:
        if pressed():
            raise KeyboardInterrupt
        shown(done, total)

    return progress


@contextmanager
def _stopped_by_one_ctrl_c() -> Iterator[Callable[[], bool]]:
    """The first Ctrl-C stops the command; the ones after it are ignored until the process
    exits, so that one pressed as the counterexample is saved or printed, or as Python
    exits, neither loses it nor turns exit 130 into death by SIGINT. Only in the main
    thread, over Python's own handler (``main`` may be called from a program with its
    own). Yields whether it was pressed.

    One that lands in a ``__del__`` or a weakref callback (a Trio nursery collected as an
    app's effects run), which Python swallows, is not printed as "Exception ignored in: ..."
    and a traceback: the run stops all the same, as the next example starts."""
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield lambda: False
        return
    taken = False

    def once(_signum: int, _frame: object) -> None:
        nonlocal taken
        if not taken:
            taken = True
            raise KeyboardInterrupt

    unraisable = sys.unraisablehook

    def swallowed(what: sys.UnraisableHookArgs) -> None:
        if not (taken and isinstance(what.exc_value, KeyboardInterrupt)):
            unraisable(what)

    signal.signal(signal.SIGINT, once)
    sys.unraisablehook = swallowed
    try:
        yield lambda: taken
    finally:
        sys.unraisablehook = unraisable
        signal.signal(signal.SIGINT, signal.SIG_IGN if taken else signal.default_int_handler)


def _complain(text: str) -> None:
    """An error as one line on stderr: text from the log or the operator (an end reason, a
    session name) may hold a newline or an escape sequence."""
    print(f"semledger: {printable(text)}", file=sys.stderr)


def _print_counterexample(
    console: Console, result: FuzzResult, db: str, asked: int, *, shrunk: bool = True
) -> None:
    # The app's text: no escape reaches the terminal, nor a message of megabytes.
    failure = printable(shortened(result.failure or ""))
    console.print(Text.assemble(("counterexample:", "bold red"), f" {failure}"))
    shrunk = shrunk and result.session is not None
    console.print(f"found by example {result.examples} of {asked}{', then shrunk' * shrunk}")
    if result.session is None:
        console.print("nothing saved: no sequence of inputs fails every time")
        return
    from semledger.actors._commands import session_command

    # Quoted as a shell reads it back: a --db with a space or a quote in it, pasted as
    # printed, named another file.
    command = session_command("replay", result.session, db)
    hint = f"saved as session {result.session!r}: {printable(command)}"
    # A command to copy: not broken at the terminal's width, nor coloured in parts.
    console.print(hint, soft_wrap=True, highlight=False)
    if not result.deterministic:
        console.print(
            "the app does not always do the same: one replay may do as the log says"
            " and show nothing; replay it a few times"
        )
    for line in _steps_saved(db, result.session):
        console.print(line, soft_wrap=True, highlight=False)


_STEPS_SHOWN = 20
"""The most steps of a counterexample `fuzz` prints (shrunk, it has few)."""


def _steps_saved(db: str, session: str) -> list[str]:
    """The steps of the counterexample saved as `session`, a line each, as the log holds
    them: its inputs, and the reads the fuzzer checked between them; a node targeted by id
    named as it was known in the tree the step acted on, read from the log. Nothing when
    the log cannot be read back."""
    try:
        with _recorder(db) as recorder, recorder.pinned():
            return _step_lines(recorder, session)
    except DAMAGED_LOG_ERRORS:
        return []
    except (LogOpenError, LogBusyError, UnsupportedSchemaError, UsageError):
        return []


def _step_lines(recorder: Recorder, session: str) -> list[str]:
    from semledger._render import step_line
    from semledger.eventlog import INPUT_CLASSES, ActionRequested, Committed, SessionStarted
    from semledger.replay._audit import _follow, _node_named

    reads: list[Any] = []
    steps: list[str] = []
    count = 0  # steps, those past the ones shown included
    names: dict[object, str] = {}  # node id: what it is known by, followed as the audit does

    def step(line: str) -> None:
        nonlocal count
        count += 1
        if len(steps) < _STEPS_SHOWN:
            steps.append(line)

    def read_after(done: int) -> None:
        while reads and reads[0][0] == done:
            since = reads.pop(0)[1]
            step("read_semantics" + ("" if since is None else f" since {since}"))

    inputs = 0
    for _, event in recorder.events(session):
        if isinstance(event, SessionStarted):
            fuzzed = event.params.get("fuzz")
            logged = fuzzed.get("reads") if isinstance(fuzzed, dict) else None
            reads = [r for r in logged or () if isinstance(r, list | tuple) and len(r) == 2]
            read_after(0)
        elif isinstance(event, Committed):
            _follow(names, event.delta)
        elif isinstance(event, INPUT_CLASSES):
            inputs += 1
            node = _node_named(names, event.target) if isinstance(event, ActionRequested) else None
            step(step_line(event, node))
            read_after(inputs)
    shown = [f"  {i}. {line}" for i, line in enumerate(steps, 1)]
    if count > len(steps):
        shown.append(f"  … and {count - len(steps)} more steps")
    return [f"its steps ({count}), as the log holds them:", *shown] if count else []


@contextmanager
def _hypothesis_caches_elsewhere() -> Iterator[None]:
    """Hypothesis keeps caches in ``./.hypothesis`` unless told where: a command run in any
    folder must not leave one there. The fuzzer keeps no examples (its counterexample is a
    session in the log), but the caches (the constants of each module's source, Unicode
    tables) took three seconds of every run to build again: they are kept in the user's
    cache folder, or in a folder of the run's own, gone after it, where that cannot be made.
    ``HYPOTHESIS_STORAGE_DIRECTORY``, if set, is the user's choice and kept."""
    if os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        yield
        return
    import tempfile

    import platformdirs
    from hypothesis.configuration import set_hypothesis_home_dir

    with contextlib.ExitStack() as stack:
        kept = platformdirs.user_cache_path("semledger") / "hypothesis"
        try:
            kept.mkdir(parents=True, exist_ok=True)
        except OSError:  # a read-only or missing home
            writable = False
        else:
            writable = os.access(kept, os.W_OK | os.X_OK)
        if writable:
            folder = str(kept)
        else:  # caches for this run only
            folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="semledger-fuzz-"))
        set_hypothesis_home_dir(folder)
        try:
            yield
        finally:
            set_hypothesis_home_dir(None)


class _StatusLines(logging.Handler):
    """A record the library logs while serving (a failed effect), as one status line on
    stderr like the server's own. An error record with a traceback (a fault of semledger's
    own code, a call answered ``-32603``) has it first, for a bug report, as serve prints
    one for a session that could not start; an app's failure is a warning, its line alone."""

    def emit(self, record: logging.LogRecord) -> None:
        # No escape sequence from an app's error reaches the terminal, nor splits a line.
        error = record.exc_info[1] if record.exc_info else None
        if error is not None and record.levelno >= logging.ERROR:
            for line in printable_traceback(error):
                print(line, file=sys.stderr)
        print(f"semledger: {printable(record.getMessage())}", file=sys.stderr, flush=True)


def _status_lines_on_stderr() -> None:
    """Once, however often `main` serves in one process."""
    logger = logging.getLogger("semledger")
    if not any(isinstance(handler, _StatusLines) for handler in logger.handlers):
        logger.addHandler(_StatusLines(logging.WARNING))
        logger.setLevel(logging.WARNING)


def _import_http_server() -> None:
    """Import the HTTP server before the app, whose import puts the working directory first
    on sys.path: a file there named as one of the server's modules (h2.py) would be imported
    instead. Run as ``python -m semledger``, Python puts it first itself: the file is named."""
    try:
        import semledger.hosts._hypercorn  # noqa: F401
    except (ImportError, AttributeError) as error:  # (h11.py: `module 'h11' has no Data`)
        shadow = _shadowing(error)
        if shadow is None and isinstance(error, AttributeError):
            raise
        said = str(error)
        if shadow is not None:
            module = os.path.splitext(os.path.basename(shadow))[0]
            said = (
                f"{shadow} is imported in place of the module {module} (rename it, or run"
                " semledger from another folder)"
            )
        raise UsageError(f"serve --http cannot import its HTTP server: {said}") from None


def _shadowing(error: ImportError | AttributeError) -> str | None:
    """The file (or package folder) of the working directory imported in place of a module
    of the HTTP server, which `error` comes of; None if none was."""
    folder = os.path.realpath(os.getcwd())
    if isinstance(error, AttributeError):
        module = error.obj
    else:
        module = sys.modules.get((error.name or "").partition(".")[0])
    raised_in = [frame.f_code.co_filename for frame, _ in traceback.walk_tb(error.__traceback__)]
    for file in [getattr(module, "__file__", None), *reversed(raised_in)]:
        if not isinstance(file, str):
            continue
        path = os.path.dirname(file) if os.path.basename(file) == "__init__.py" else file
        if os.path.dirname(os.path.realpath(path)) == folder:
            return path
    return None


def _cmd_serve(args: argparse.Namespace, console: Console) -> int:
    import os

    import trio

    _status_lines_on_stderr()
    _check_new_session_name(args.session, args.db)
    if args.adapter is not None:
        return _serve_surface(args)
    if args.timeout is not None:
        raise UsageError("--timeout applies only with --adapter web or atspi")
    _check_adapter_options(args, None)
    _check_transport_options(args)
    if args.app_option is not None:
        if args.app is not None and args.app != args.app_option:
            raise UsageError("give APP once, positionally or with --app")
        args.app = args.app_option
    if args.app is None:
        raise UsageError("serve needs APP (module:attribute)")
    if args.http is not None:
        _import_http_server()
    from semledger.hosts._stdio import stdout_for_messages_only
    from semledger.replay import AppLoadError

    try:  # over stdio, what its import prints is no message: it goes to stderr
        with contextlib.nullcontext() if args.http else stdout_for_messages_only():
            _load_app(args.app)
    except AppLoadError as error:
        raise UsageError(str(error)) from error
    from semledger.hosts import ServeError

    if args.http is not None:
        from semledger.hosts import serve_http
        from semledger.hosts._loopback import on_loopback

        host, sep, port = args.http.rpartition(":")
        if not sep or not (port.isascii() and port.isdigit()):
            raise UsageError(f"--http {args.http!r}: expected HOST:PORT, e.g. 127.0.0.1:8765")
        token = args.token or os.environ.get("SEMLEDGER_TOKEN")
        if token is None and not on_loopback(host or "127.0.0.1"):  # said with the flags
            raise UsageError(
                f"--http {args.http}: listens beyond this machine, and with no token anyone"
                " who reaches the port could drive the app: give --token T (or"
                " SEMLEDGER_TOKEN), or listen on 127.0.0.1"
            )
        try:
            failed = trio.run(
                lambda: serve_http(
                    args.app,
                    host=host or "127.0.0.1",
                    port=int(port),
                    db=args.db,
                    diagnostics=args.diagnostics,
                    token=token,
                    allowed_origins=tuple(args.allow_origin),
                    redact_passwords=not args.log_passwords,
                    **({} if args.idle_timeout is None else {"idle_timeout": args.idle_timeout}),
                )
            )
        except ServeError as error:
            raise UsageError(str(error)) from error
        return 1 if failed else 0  # as over stdio: a session failed
    from semledger.hosts import serve_stdio

    return _served(
        lambda: serve_stdio(
            args.app,
            db=args.db,
            session=args.session,
            diagnostics=args.diagnostics,
            redact_passwords=not args.log_passwords,
        )
    )


def _served(serve: Callable[[], Awaitable[Served]]) -> int:
    """Run a stdio `serve`: 1 if the session failed, also as it started (its log could not
    be written, its application raised, the system refused it a file: no bad usage); a
    `ServeError` is bad usage."""
    import trio

    from semledger.actors import SessionLogError
    from semledger.hosts import ServeError

    try:
        served = trio.run(serve)
    except ServeError as error:
        raise UsageError(str(error)) from error
    except SessionLogError as error:
        print(f"semledger: {error}", file=sys.stderr)
        return 1
    except OSError as error:  # the system's (too many open files): no bug, no bad usage
        if isinstance(error, BrokenPipeError):
            raise
        print(f"semledger: the session could not be served: {error}", file=sys.stderr)
        return 1
    return 1 if served.failed else 0


def _check_transport_options(args: argparse.Namespace) -> None:
    """An option of the other transport is refused, not ignored."""
    if args.http is None:
        for flag, given in (
            ("--token", args.token),
            ("--allow-origin", args.allow_origin),
            ("--idle-timeout", args.idle_timeout),
        ):
            if given:
                raise UsageError(f"{flag} applies only with --http (serving over stdio)")
    elif args.session is not None:
        raise UsageError(
            "--session applies only over stdio: over --http the server names each session"
            " (its Mcp-Session-Id)"
        )


_ADAPTER_OPTIONS = {"runtime": "APP", "web": "--url", "atspi": "--launch"}
"""The option each built-in adapter needs, and the only one of the three it takes."""
_NEEDS = {"APP": "--app APP (module:attribute)", "--url": "--url URL", "--launch": "--launch CMD"}


def _check_adapter_options(args: argparse.Namespace, adapter: str | None) -> None:
    """An option meant for another adapter is refused, not ignored, and a built-in adapter's
    own option is required. Serving an app (no adapter) takes APP alone."""
    if adapter is not None and adapter not in _ADAPTER_OPTIONS:
        return  # a registered adapter: the options it reads are its own
    given = {
        "APP": args.app is not None or args.app_option is not None,
        "--url": args.url is not None,
        "--launch": args.launch is not None,
    }
    own = "APP" if adapter is None else _ADAPTER_OPTIONS[adapter]
    for owner, option in _ADAPTER_OPTIONS.items():
        if given[option] and option != own:
            named = "APP (or --app)" if option == "APP" else option
            raise UsageError(f"{named} applies only with --adapter {owner}")
    if adapter is not None and not given[own]:
        raise UsageError(f"--adapter {adapter} needs {_NEEDS[own]}")


def _check_new_session_name(name: str | None, db: str) -> None:
    """Raise `UsageError` for a --session name a new session may not have (one a table
    shows escaped, a U+202E in it), unless the log at `db` holds that session already: an
    old log's is resumed by the name it has."""
    from semledger.actors import check_session_name

    if name is None:
        return
    try:
        check_session_name(name, "argument --session", new=True)
    except ValueError as error:
        if os.path.lexists(db):
            with contextlib.suppress(Exception), _recorder(db) as recorder:
                if recorder.summary(name) is not None:
                    return
        raise UsageError(str(error)) from None


def _serve_surface(args: argparse.Namespace) -> int:
    """``serve --adapter NAME``: one logged surface session over stdio, through the router."""
    import shlex

    from semledger.adapters import Launch, SessionInit, registered_adapters

    if args.http is not None:
        raise UsageError("--adapter serves over stdio only; drop --http")
    _check_transport_options(args)
    if args.diagnostics:
        raise UsageError("--adapter has no diagnostics tools; drop --diagnostics")
    if args.adapter not in registered_adapters():
        known = ", ".join(registered_adapters())
        raise UsageError(f"unknown adapter {args.adapter!r}; known: {known}")
    _check_adapter_options(args, args.adapter)
    app = args.app_option or args.app
    if args.app_option and args.app and args.app != args.app_option:
        raise UsageError("give APP once, positionally or with --app")
    config: dict[str, Any] = {"adapter": args.adapter}
    if app is not None:
        config["app"] = app
    if args.url is not None:
        config["url"] = args.url
    launch = None
    if args.launch is not None:
        try:
            words = shlex.split(args.launch)
        except ValueError as error:
            raise UsageError(f"--launch {args.launch!r}: {error}") from error
        if not words:
            raise UsageError("--launch needs a command")
        launch = Launch(words[0], tuple(words[1:]))
        config["launch"] = args.launch
    timeout_ms = None
    if args.timeout is not None:
        if args.adapter == "runtime":
            raise UsageError("--timeout applies only with --adapter web or atspi")
        timeout_ms = max(1, round(args.timeout * 1000))
    init = SessionInit(base_url=args.url, launch=launch, timeout_ms=timeout_ms)
    from semledger.hosts import serve_surface

    return _served(
        lambda: serve_surface(
            config,
            init,
            db=args.db,
            session=args.session,
            label=app or args.url or args.launch or args.adapter,
            redact_passwords=not args.log_passwords,
        )
    )


def _write_or_refuse(option: str, path: str, write: Callable[[str], None]) -> None:
    """``write(path)``, an `OSError` of which is a usage error naming the option and the path,
    and the folder when there is none: "No such file or directory" did not say which."""
    try:
        write(path)
    except OSError as error:
        reason = error.strerror or str(error)
        folder = os.path.dirname(path)
        if error.errno in (errno.ENOENT, errno.ENOTDIR) and folder and not os.path.isdir(folder):
            there = os.path.exists(folder)
            reason = f"{folder} is not a folder" if there else f"there is no folder {folder}"
        raise UsageError(f"cannot write {option} {path!r}: {reason}") from error


def _cmd_surface(args: argparse.Namespace, console: Console) -> int:
    import trio

    from semledger.adapters import registered_adapters, run_conformance
    from semledger.replay import check_writable, write_whole

    if args.adapter not in registered_adapters():
        known = ", ".join(registered_adapters())
        raise UsageError(f"unknown adapter {args.adapter!r}; known: {known}")
    only = None
    if args.only is not None:
        only = [item.strip() for item in args.only.split(",") if item.strip()]
        if not only:
            raise UsageError("--only needs at least one case id")
    if args.report is not None:
        _write_or_refuse("--report", args.report, check_writable)
    quiet = args.json

    def show(result: Any) -> None:
        if quiet:
            return
        style = {"passed": "green", "failed": "bold red", "skipped": "yellow"}[result.status]
        reason = f" — {result.reason}" if result.reason else ""
        console.print(
            Text.assemble((f"{result.status:7}", style), f" {result.id}{reason}"),
            highlight=False,
        )

    try:
        report = trio.run(
            lambda: run_conformance(
                args.adapter, suite=args.suite, only=only, on_result=show, timeout=args.timeout
            )
        )
    except KeyError as error:
        raise UsageError(str(error.args[0] if error.args else error)) from error
    if args.report is not None:
        _write_or_refuse(
            "--report", args.report, lambda path: write_whole(path, report.to_markdown())
        )
    if args.json:
        _print_json(report.to_json())
    else:
        counts = report.counts()
        verdict = "conformant" if report.conformant else "NOT conformant"
        style = "bold green" if report.conformant else "bold red"
        console.print(
            Text.assemble(
                (f"{args.adapter} ({report.suite} suite): {verdict}", style),
                f" — {counts['passed']} passed, {counts['failed']} failed,"
                f" {counts['skipped']} skipped",
            )
        )
    return 0 if report.conformant else 1


def _cmd_demo(args: argparse.Namespace, console: Console) -> int:
    from semledger._demo import run_demo

    return run_demo(console, db=args.db)


COMMANDS: dict[str, Callable[[argparse.Namespace, Console], int]] = {
    "demo": _cmd_demo,
    "serve": _cmd_serve,
    "sessions": _cmd_sessions,
    "read": _cmd_read,
    "audit": _cmd_audit,
    "replay": _cmd_replay,
    "fuzz": _cmd_fuzz,
    "end": _cmd_end,
    "surface": _cmd_surface,
}


_PIPED_WIDTH = 4096


def _sized_environ() -> dict[str, str]:
    """The environment as the console reads it, less a COLUMNS or LINES that is no positive
    whole number: rich took COLUMNS=0 for a width of nothing, and printed nothing at all,
    and failed on a digit that is no decimal one (``COLUMNS=²``)."""
    return {
        name: value
        for name, value in os.environ.items()
        if name not in ("COLUMNS", "LINES") or (value.isdecimal() and int(value) > 0)
    }


class _Console(Console):
    def __init__(self, **options: Any) -> None:
        super().__init__(_environ=_sized_environ(), **options)

    def on_broken_pipe(self) -> None:
        """Fall silent and let the command finish: rich's own handling exits with status 1,
        which reads as a failed check (`semledger audit --verify | head -1`)."""
        self.quiet = True
        _silence(self.file)


class OutputError(Exception):
    """Raised when the command's output cannot be written (a full disk, a device error):
    exit status 1, with the reason on stderr. A broken pipe is not one: the reader only
    went away."""


class _Output:
    """Standard output, each of whose write errors but a broken pipe is an `OutputError`
    (every other `OSError` a command meets is its own, not the output's)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise
        except OSError as error:
            raise OutputError(error.strerror or str(error)) from error

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as error:
            raise OutputError(error.strerror or str(error)) from error

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _silence(stream: IO[str]) -> None:
    """Point `stream`'s descriptor at /dev/null, so that Python does not fail again as it
    flushes what is left at exit."""
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())


def main(argv: Sequence[str] | None = None) -> int:
    if sys.stderr is None:
        # Started with standard error closed (`2>&-`): Python's print falls back to stdout,
        # where `serve`'s status lines broke the MCP stream. They go nowhere instead, and
        # descriptor 2 is taken, so that no file opened later is written to as stderr.
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 (for the life of the process)
    for stream in (sys.stdout, sys.stderr):
        # Where the locale's encoding is not UTF-8, what it cannot encode (an arrow, a
        # check mark, a name from the log) is escaped rather than a crash at the end.
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    stdout = sys.stdout
    # (Closed, --help and --version print into nothing, and say so, as every command does.)
    sys.stdout = cast(TextIO, io.StringIO() if stdout is None else _Output(stdout))
    try:
        try:
            args = build_parser().parse_args(argv)
        except SystemExit as exiting:
            # --help, --version: what they printed must be written out, or said it was not.
            if stdout is None and not exiting.code:
                print(_CLOSED, file=sys.stderr)
                return 1
            sys.stdout.flush()
            raise
        serving = args.command == "serve"
        if serving:
            if stdout is None and args.http is None:  # started with its stdout closed
                print(
                    "semledger: standard output is closed: nowhere to send the session's"
                    " answers (serve over --http HOST:PORT, or give it an output)",
                    file=sys.stderr,
                )
                return 1
            sys.stdout = stdout  # the transport's: its own errors are its own
            if argv is None:  # run as the command: the process exits once it has served
                from semledger.hosts._stdio import ignore_stop_signals_after_serving

                ignore_stop_signals_after_serving()
        elif stdout is None:  # started with its standard output closed
            print(_CLOSED, file=sys.stderr)
            return 1
        status = _run(args, serving)
        if status == 130 and argv is None:  # fuzz, which says how far it got
            _exiting_interrupted()
        return status
    except KeyboardInterrupt:  # as the arguments are read, or as the command runs
        if argv is None:
            _exiting_interrupted()
        print("semledger: interrupted", file=sys.stderr)
        return 130
    except OutputError as error:
        print(f"semledger: cannot write to standard output: {error}", file=sys.stderr)
        _silence(stdout)
        return 1
    finally:
        sys.stdout = stdout


_CLOSED = "semledger: standard output is closed: nowhere to print to"


def _exiting_interrupted() -> None:
    """Run as the command and interrupted, the process only exits now: a second Ctrl-C
    (held down, or sent by the terminal and again by a wrapper) printed a traceback as it
    landed in Python's shutdown ("Exception ignored in: <module 'threading'>"), and a
    coroutine the Ctrl-C left unstarted (an effect's, in fuzz) a warning ("coroutine
    '_outcome' was never awaited")."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    warnings.filterwarnings("ignore", r"coroutine '.*' was never awaited", RuntimeWarning)


def _interrupted(error: BaseException) -> bool:
    """Whether `error` was raised from a Ctrl-C: Python 3.11 makes a KeyboardInterrupt that
    lands as a class is made (``__set_name__``, in any import) a RuntimeError, which printed
    a traceback, or a usage error when the app was being imported."""
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return True
        seen.add(id(cause))
        cause = cause.__cause__
    return False


def _run(args: argparse.Namespace, serving: bool) -> int:
    # No markup or emoji codes: what the console prints comes from logs, apps and agents,
    # and "[/]" or ":smile:" there is text, not formatting.
    # Piped, a line is as long as its text: rich would wrap at 80 columns, splitting the
    # one-line verdicts and the commands they print, and squeezing tables.
    stream = sys.stderr if serving else sys.stdout
    terminal = stream is not None and stream.isatty()
    width = None if terminal or "COLUMNS" in _sized_environ() else _PIPED_WIDTH
    console = _Console(stderr=serving, width=width, markup=False, emoji=False)
    try:
        try:
            status = COMMANDS[args.command](args, console)
        except Exception as error:
            if _interrupted(error):
                raise KeyboardInterrupt from error
            raise
        if not serving:
            sys.stdout.flush()
        return status
    except (CorruptSchemaError, LogUnreadableError) as error:  # no bad usage: a failing log
        _complain(str(error))
        return 1
    except (UsageError, LogOpenError, LogBusyError, UnsupportedSchemaError) as error:
        _complain(str(error))
        return 2
    except DAMAGED_LOG_ERRORS as error:
        db = getattr(args, "db", DEFAULT_DB)
        _complain(f"the log {db} cannot be read: {error}")
        return 1
    except BrokenPipeError:
        # The reader went away (`semledger sessions --json | head`): nothing left to say,
        # and Python must not complain when it flushes stdout at exit.
        _silence(sys.stdout)
        return 0


if __name__ == "__main__":
    sys.exit(main())
