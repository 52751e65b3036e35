"""Bad usage exits with status 2 and a one-line reason on stderr."""

from __future__ import annotations

import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from semledger.eventlog import NewEvent, SessionStarted, SqliteRecorder, SurfaceCalled

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp
from tests_record import COUNTER, INCREMENT, record


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "log.db"
    record(path, "known", COUNTER, [INCREMENT])
    future = path.parent / "future.db"  # a log written by a newer semledger
    SqliteRecorder(future).close()
    with sqlite3.connect(future) as conn:
        conn.execute("UPDATE schema_version SET version = 99")
    conn.close()
    with SqliteRecorder(path) as recorder:  # what LoggedSurface starts a surface session with
        started = SessionStarted(COUNTER, "runtime", {"adapter": "runtime"}, True)
        recorder.append([NewEvent("surfaced", 1, started, 0.0)])
        act = SurfaceCalled("act", {"action": "click", "ref": "r3"}, {}, None, None, None)
        recorder.append([NewEvent("called", 1, started, 0.0), NewEvent("called", 2, act, 0.0)])
        recorder.append([NewEvent("it's called", 1, started, 0.0)])
        recorder.append([NewEvent("it's called", 2, act, 0.0)])
        recorder.append([NewEvent("-called", 1, started, 0.0), NewEvent("-called", 2, act, 0.0)])
        started = SessionStarted(COUNTER, "runtime", {}, True)  # and nothing after it
        recorder.append([NewEvent("uncommitted", 1, started, 0.0)])
    (path.parent / "empty.db").touch()
    (path.parent / "loop.db").symlink_to(path.parent / "loop.db")
    (path.parent / "dangling.db").symlink_to(path.parent / "nothing.db")
    with sqlite3.connect(path.parent / "foreign.db") as conn:  # another program's database
        conn.execute("CREATE TABLE customers (name TEXT)")
    conn.close()
    return path


def _not_logs(db: Path) -> dict[Path, bytes]:
    """The files that hold no log, with their bytes."""
    return {path: path.read_bytes() for path in (db.parent / "empty.db", db.parent / "foreign.db")}


def cases(db: Path) -> dict[str, tuple[list[str], str]]:
    missing = str(db.parent / "missing.db")
    return {
        "unknown command": (["frobnicate"], "invalid choice"),
        "no command": ([], "required"),
        "missing log for sessions": (["sessions", "--db", missing], "no log at"),
        "missing log for read": (["read", "known", "--db", missing], "no log at"),
        **{
            f"{command[0]} of a link to {what}": (
                [*command, "--db", str(db.parent / name)], f"{name}: {said}"
            )
            for command in (["sessions"], ["end", "known"])
            for name, what, said in (
                ("loop.db", "itself", "it is a loop of symbolic links, which leads to no file"),
                ("dangling.db", "nothing", f"it links to {db.parent / 'nothing.db'}, which does"),
            )
        },
        "a directory for a log": (
            ["audit", "known", "--db", str(db.parent)],
            f"cannot open the log {db.parent}: it is a directory, not a file",
        ),
        "a directory for a new log": (
            ["serve", COUNTER, "--db", str(db.parent)],
            f"cannot open the log {db.parent}: it is a directory, not a file",
        ),
        "a new log in a folder that does not exist": (
            ["serve", COUNTER, "--db", str(db.parent / "nowhere" / "log.db")],
            f"cannot open the log {db.parent / 'nowhere' / 'log.db'}: its folder"
            f" {db.parent / 'nowhere'} does not exist",
        ),
        "log from a newer semledger": (
            ["sessions", "--db", str(db.parent / "future.db")],
            "schema version 99",
        ),
        "unknown session for read": (["read", "nope", "--db", str(db)], "no session 'nope'"),
        "read of a surface session with no call": (
            ["read", "surfaced", "--db", str(db)],
            "semledger: surface session 'surfaced': no read or action was made in it, so it has"
            " no generation yet (a surface session has the generations its agent was shown"
            " over MCP to read)\n",
        ),
        "read of a surface session called through the Python API": (
            ["read", "called", "--db", str(db)],
            "semledger: surface session 'called': its log holds the surface's calls but no"
            " generation an agent was shown over MCP, so there is nothing to read (semledger"
            f" audit called --db {db} lists its actions)\n",
        ),
        "read of a surface session called through the Python API, named for a shell": (
            ["read", "it's called", "--db", str(db)],  # the command was given unquoted
            "so there is nothing to read (semledger audit 'it'\"'\"'s called' --db",
        ),
        "read of a surface session called through the Python API, named like an option": (
            ["read", "--db", str(db), "--", "-called"],  # `audit -called` took it for one
            f"so there is nothing to read (semledger audit --db {db} -- -called lists its",
        ),
        "export of a surface session": (
            ["replay", "surfaced", "--db", str(db), "--export-test", str(db.parent / "t.py")],
            "--export-test and --pdb apply to app sessions, not surface ones",
        ),
        "another app for a surface session": (
            ["replay", "surfaced", "--db", str(db), "--app", COUNTER],
            "--export-test and --pdb apply to app sessions, not surface ones",
        ),
        "the debugger for a surface session": (
            ["replay", "surfaced", "--db", str(db), "--pdb"],
            "--export-test and --pdb apply to app sessions, not surface ones",
        ),
        "unknown generation": (
            ["read", "known", "--db", str(db), "--generation", "99"],
            "not 99",
        ),
        "generation 0": (
            ["read", "known", "--db", str(db), "--generation", "0"],
            "argument --generation: expected at least 1, got 0",
        ),
        "read of a session with no commit": (
            ["read", "uncommitted", "--db", str(db)],
            "session 'uncommitted' has no commit",
        ),
        "empty --db": (["sessions", "--db", ""], "argument --db: expected a file path, got ''"),
        "sessions of an empty file": (
            ["sessions", "--db", str(db.parent / "empty.db")],
            "empty.db: it holds no semledger log",
        ),
        "sessions of another program's database": (
            ["sessions", "--db", str(db.parent / "foreign.db")],
            "foreign.db: it holds no semledger log",
        ),
        "read of another program's database": (
            ["read", "known", "--db", str(db.parent / "foreign.db")],
            "foreign.db: it holds no semledger log",
        ),
        "audit of another program's database": (
            ["audit", "known", "--verify", "--db", str(db.parent / "foreign.db")],
            "foreign.db: it holds no semledger log",
        ),
        "replay of another program's database": (
            ["replay", "known", "--db", str(db.parent / "foreign.db")],
            "foreign.db: it holds no semledger log",
        ),
        "negative generation": (
            ["read", "known", "--db", str(db), "--generation", "-1"],
            "argument --generation: expected at least 1, got -1",
        ),
        "generation of 5000 digits": (  # every digit was quoted back
            ["read", "known", "--db", str(db), "--generation", "9" * 5000],
            "argument --generation: expected a whole number of at most 40 digits, got one of"
            " 5000",
        ),
        "examples of 41 digits after leading zeros": (  # the zeros counted as digits
            ["fuzz", COUNTER, "--db", missing, "--examples", "-" + "0" * 10 + "1" * 41],
            "expected a whole number of at most 40 digits, got one of 41",
        ),
        "steps of long text": (
            ["fuzz", "semledger.examples.counter:app", "--db", missing, "--steps", "1" + "x" * 200],
            "expected a whole number, got '1" + "x" * 79 + "… (201 characters)'",
        ),
        "generation past a u64": (  # it was a traceback
            ["read", "known", "--db", str(db), "--generation", str(2**64)],
            f"argument --generation: expected at most {2**64 - 1}, got {2**64}",
        ),
        **{
            f"generation {text!r}": (
                ["read", "known", "--db", str(db), "--generation", text],
                f"expected a whole number, got {text!r}",
            )
            for text in ("1_0", "+3", " 3", "\u0663")
        },
        "seed in other digits": (
            ["fuzz", "semledger.examples.counter:app", "--db", missing, "--seed", "\u0663"],
            "expected a whole number, got '\u0663'",
        ),
        "anchor in other digits": (
            ["audit", "known", "--db", str(db), "--verify", "--anchor", f"\u0663:{'0' * 64}"],
            "expected SEQ:HEX",
        ),
        "no examples to fuzz": (
            ["fuzz", "semledger.examples.counter:app", "--db", missing, "--examples", "0"],
            "expected at least 1, got 0",
        ),
        "serve beyond this machine with no token": (
            ["serve", "semledger.examples.counter:app", "--db", missing, "--http", "0.0.0.0:0"],
            "--http 0.0.0.0:0: listens beyond this machine, and with no token anyone who"
            " reaches the port could drive the app",
        ),
        "surface without its command": (
            ["surface"],
            "the following arguments are required: COMMAND (see 'semledger surface --help')",
        ),
        "an option audit does not have": (
            ["audit", "known", "--db", str(db), "--bogus"],
            "unrecognized arguments: --bogus (see 'semledger audit --help')",
        ),
        "an option surface conform does not have": (
            ["surface", "conform", "--adapter", "runtime", "--bogus"],
            "unrecognized arguments: --bogus (see 'semledger surface conform --help')",
        ),
        "an option of a command given before its name": (
            ["--json", "sessions", "--db", str(db)],
            "unrecognized arguments before 'sessions': --json; a command's options go after"
            " its name (see 'semledger --help')",
        ),
        "an option of a command given with its value before its name": (  # 'invalid choice'
            ["--db", str(db), "sessions"],
            f"unrecognized arguments before 'sessions': --db {db}; a command's options go"
            " after its name (see 'semledger --help')",
        ),
        "an option of a subcommand given with its value before its name": (
            ["surface", "--adapter", "runtime", "conform"],
            "unrecognized arguments before 'conform': --adapter runtime; a command's options"
            " go after its name (see 'semledger surface --help')",
        ),
        "an option of a subcommand given before its name": (
            ["surface", "--json", "conform", "--adapter", "runtime"],
            "unrecognized arguments before 'conform': --json; a command's options go after"
            " its name (see 'semledger surface --help')",
        ),
        "a session whose name starts with '-'": (  # argparse took it for an option
            ["audit", "-x", "--db", str(db)],
            "the following arguments are required: SESSION; a name that starts with '-' goes"
            " last, after '--' and the options: semledger audit [options] -- -x (see",
        ),
        "a missing session beside an option audit does not have": (
            ["audit", "--bogus", "--db", str(db)],
            "the following arguments are required: SESSION; --bogus is no option of semledger"
            " audit (a name that starts with '-' goes last, after '--' and the options:"
            " semledger audit [options] -- --bogus) (see 'semledger audit --help')",
        ),
        "a session whose name starts with '--'": (  # no hint of '--' was given
            ["read", "--dash", "--db", str(db)],
            "the following arguments are required: SESSION; --dash is no option of semledger"
            " read (a name that starts with '-' goes last, after '--' and the options:"
            " semledger read [options] -- --dash) (see 'semledger read --help')",
        ),
        "a value that starts with '-'": (
            ["audit", "known", "--db", str(db), "--verify", "--anchor", f"-1:{'0' * 64}"],
            "argument --anchor: expected one argument; a value that starts with '-' is given"
            f" as --anchor=-1:{'0' * 64} (see",
        ),
        "an option given last without its value": (
            ["audit", "known", "--db"],
            "argument --db: expected one argument (see 'semledger audit --help')",
        ),
        "an allowed issue of no kind": (
            [
                "fuzz", "semledger.examples.counter:app", "--db", missing,
                "--allow-issue", "duplicate:counter.value",
            ],
            "argument --allow-issue: 'duplicate:counter.value': expected KIND or"
            " KIND:SEMANTIC_ID, KIND one of duplicate_semantic_id,",
        ),
        "an allowed issue about an id no view can have": (
            [
                "fuzz", "semledger.examples.counter:app", "--db", missing,
                "--allow-issue", "duplicate_semantic_id:todo item",
            ],
            "argument --allow-issue: 'duplicate_semantic_id:todo item': 'todo item' is no"
            " semantic id: a semantic id must not contain whitespace or control character U+0020",
        ),
        "export for an app that cannot load": (
            [
                "replay", "known", "--db", str(db), "--app", "no_such_module:app",
                "--export-test", str(db.parent / "exported.py"),
            ],
            "cannot import",
        ),
        "export a test and stop in pdb": (
            [
                "replay", "known", "--db", str(db), "--pdb",
                "--export-test", str(db.parent / "exported.py"),
            ],
            "semledger: --pdb applies only to a replay, not with --export-test (which writes a"
            " test instead)\n",
        ),
        "unknown session for audit": (["audit", "nope", "--db", str(db)], "no session 'nope'"),
        "unknown session for replay": (["replay", "nope", "--db", str(db)], "no session 'nope'"),
        "bad APP for replay": (
            ["replay", "known", "--db", str(db), "--app", "no_such_module:app"],
            "cannot import",
        ),
        **{
            f"{command} an APP given as a file path": (
                [*args, "--db", str(db) if command == "replay" else missing],
                f"{file}:app': APP is a module name, not a file path: did you mean my_app:app,"
                f" run from {db.parent}?",
            )
            for file in [db.parent / "my_app.py"]
            for command, args in (
                ("serve", ["serve", f"{file}:app"]),
                ("fuzz", ["fuzz", f"{file}:app"]),
                ("replay", ["replay", "known", "--app", f"{file}:app"]),
            )
        },
        "APP without attribute": (
            ["fuzz", "semledger.examples.counter", "--db", missing],
            "expected module:attribute",
        ),
        "APP that is not an App": (
            ["serve", "semledger.examples.counter:init", "--db", missing],
            "not a semledger App",
        ),
        "serve without APP": (["serve", "--db", missing], "needs APP"),
        "serve into a loop of symbolic links": (
            ["serve", COUNTER, "--db", str(db.parent / "loop.db")],
            "loop.db: it is a loop of symbolic links, which leads to no file",
        ),
        "serve into a missing folder": (
            ["serve", "semledger.examples.counter:app", "--db", str(db.parent / "no" / "x.db")],
            "cannot open the log",
        ),
        "serve on a port in use": (
            [
                "serve",
                "semledger.examples.counter:app",
                "--db",
                str(db.parent / "port.db"),
                "--http",
                f"127.0.0.1:{_busy_port()}",
            ],
            "cannot listen on 127.0.0.1:",
        ),
        **{
            f"serve on port {port}": (
                ["serve", COUNTER, "--db", missing, "--http", f"127.0.0.1:{port}"],
                f"cannot listen on 127.0.0.1:{port}: the port must be from 0 to 65535",
            )
            for port in ("65536", "99999")
        },
        "serve on a port of non-ASCII digits": (
            ["serve", COUNTER, "--db", missing, "--http", "127.0.0.1:\u00b2"],
            "expected HOST:PORT",
        ),
        "serve on an empty --http": (
            ["serve", COUNTER, "--db", missing, "--http", ""],
            "--http '': expected HOST:PORT",
        ),
        **{
            f"serve allowing the origin {origin!r}": (
                ["serve", COUNTER, "--db", missing, "--http", ":0", "--allow-origin", origin],
                f"argument --allow-origin: {origin!r} is not an origin",
            )
            for origin in ("evil.com", "http://evil.com/", "*", "http://evil.com?x", "null")
        },
        "serve with an empty --session": (
            ["serve", COUNTER, "--db", missing, "--session", ""],
            "argument --session: expected a session name, got ''",
        ),
        **{
            f"serve with --session {name!r}": (
                ["serve", COUNTER, "--db", missing, "--session", name],
                f"argument --session: expected a session name with no space at either end, got"
                f" {name!r}",
            )
            for name in (" ", "prod-agent ", "\tprod")
        },
        **{
            f"serve with --session {name!r}": (
                ["serve", COUNTER, "--db", missing, "--session", name],
                f"argument --session: expected a session name with no control character, got"
                f" {name!r}",
            )
            for name in ("two\nlines", "tab\there", "bell\a")
        },
        **{
            f"{' '.join(serving[:2])} with --session {name!r}": (  # no old log holds it
                [*serving, "--db", missing, "--session", name],
                "argument --session: expected a session name with no character shown escaped,"
                f" got {name!r} ({char} is shown escaped: the name shown is not one to type"
                " back)",
            )
            for serving in (["serve", COUNTER], ["serve", "--adapter", "runtime", "--app", COUNTER])
            for name, char in (
                ("\u202eevil", "U+202E RIGHT-TO-LEFT OVERRIDE"),
                ("zw\u200bx", "U+200B ZERO WIDTH SPACE"),
                ("a\u2028b", "U+2028 LINE SEPARATOR"),
            )
        },
        "serve a surface with an empty --session": (
            ["serve", "--adapter", "runtime", "--app", COUNTER, "--db", missing, "--session", ""],
            "argument --session: expected a session name, got ''",
        ),
        "serve with an empty --token": (
            ["serve", COUNTER, "--db", missing, "--http", ":0", "--token", ""],
            "argument --token: expected a token, got ''",
        ),
        "serve over stdio with --token": (
            ["serve", COUNTER, "--db", missing, "--token", "t"],
            "--token applies only with --http",
        ),
        "serve over stdio with --allow-origin": (
            ["serve", COUNTER, "--db", missing, "--allow-origin", "https://app.example"],
            "--allow-origin applies only with --http",
        ),
        "serve over stdio with --idle-timeout": (
            ["serve", COUNTER, "--db", missing, "--idle-timeout", "60"],
            "--idle-timeout applies only with --http",
        ),
        "serve with an --idle-timeout of no time": (
            ["serve", COUNTER, "--db", missing, "--http", ":0", "--idle-timeout", "0"],
            "argument --idle-timeout: expected more than 0 and at most 86400, got 0",
        ),
        "serve a surface with --token": (
            ["serve", "--adapter", "runtime", "--app", COUNTER, "--db", missing, "--token", "t"],
            "--token applies only with --http",
        ),
        "serve a web page with no --url": (
            ["serve", "--adapter", "web", "--db", missing],
            "--adapter web needs --url URL",
        ),
        **{
            f"serve the page {url!r}": (
                ["serve", "--adapter", "web", "--url", url, "--db", missing],
                f"argument --url: expected an absolute URL (http://..., https://..., file://...),"
                f" got {url!r}",
            )
            for url in ("", "example.com", "/login", "http://")
        },
        "serve a page whose URL does not parse": (
            ["serve", "--adapter", "web", "--url", "http://[::1", "--db", missing],
            "argument --url: expected an absolute URL (http://..., https://..., file://...), got"
            " 'http://[::1': Invalid IPv6 URL",
        ),
        "serve a web page and an app": (
            ["serve", COUNTER, "--adapter", "web", "--url", "http://127.0.0.1:9/", "--db", missing],
            "APP (or --app) applies only with --adapter runtime",
        ),
        "serve a web page and a launch": (
            ["serve", "--adapter", "web", "--url", "http://127.0.0.1:9/", "--launch", "gedit",
             "--db", missing],
            "--launch applies only with --adapter atspi",
        ),
        "serve the runtime adapter a --url": (
            ["serve", "--adapter", "runtime", "--app", COUNTER, "--url", "http://127.0.0.1:9/",
             "--db", missing],
            "--url applies only with --adapter web",
        ),
        "serve an app a --url": (
            ["serve", COUNTER, "--url", "http://127.0.0.1:9/", "--db", missing],
            "--url applies only with --adapter web",
        ),
        "serve an app a --launch": (
            ["serve", COUNTER, "--launch", "gedit", "--db", missing],
            "--launch applies only with --adapter atspi",
        ),
        "serve a desktop application with no --launch": (
            ["serve", "--adapter", "atspi", "--db", missing],
            "--adapter atspi needs --launch CMD",
        ),
        "serve a desktop application with an empty --launch": (
            ["serve", "--adapter", "atspi", "--launch", "", "--db", missing],
            "argument --launch: expected a command, got ''",
        ),
        "serve a desktop application with an unbalanced quote": (
            ["serve", "--adapter", "atspi", "--launch", "gedit 'x", "--db", missing],
            "--launch \"gedit 'x\": No closing quotation",
        ),
        **{
            f"{command} a log {path!r}": (
                [*args, "--db", path],
                f"argument --db: expected a file path: the log is kept in a file, got {path!r}",
            )
            for path in (":memory:", "file:log.db?mode=memory")
            for command, args in (("serve", ["serve", COUNTER]), ("sessions", ["sessions"]))
        },
        # `Path` read "log.db/" as log.db: a traceback (NotADirectoryError) where the log
        # was there, and serve made a file named "nowhere" for "nowhere/".
        **{
            f"{command} a log path ending in {ending!r}": (
                [*args, "--db", f"{path}{ending}"],
                f"argument --db: expected a file path, got {path + ending!r}, a folder's path"
                f" (it ends in {ending.strip('/') or '/'!r})",
            )
            for ending in ("/", "/.")
            for command, args, path in (
                ("sessions", ["sessions"], str(db)),
                ("read", ["read", "known"], str(db)),
                ("audit", ["audit", "known", "--verify"], str(db)),
                ("replay", ["replay", "known"], str(db)),
                ("serve", ["serve", COUNTER], str(db.parent / "nowhere")),
            )
        },
        "serve an app a --timeout": (
            ["serve", COUNTER, "--timeout", "5", "--db", missing],
            "--timeout applies only with --adapter web or atspi",
        ),
        "serve the runtime adapter a --timeout": (
            ["serve", "--adapter", "runtime", "--app", COUNTER, "--timeout", "5", "--db", missing],
            "--timeout applies only with --adapter web or atspi",
        ),
        **{
            f"serve a desktop application --timeout {text!r}": (
                ["serve", "--adapter", "atspi", "--launch", "gedit", "--timeout", text,
                 "--db", missing],
                f"argument --timeout: {reason}",
            )
            for text, reason in (
                ("soon", "expected a number of seconds, got 'soon'"),
                ("0", "expected more than 0 and at most 86400, got 0"),
                ("nan", "expected more than 0 and at most 86400, got nan"),
                ("1e9", "expected more than 0 and at most 86400, got 1e9"),
            )
        },
        "conformance report into a missing folder": (
            ["surface", "conform", "--adapter", "runtime", "--report", f"{missing}/report.md"],
            f"cannot write --report '{missing}/report.md': there is no folder {missing}",
        ),
        "conformance report onto a folder": (
            ["surface", "conform", "--adapter", "runtime", "--report", str(db.parent)],
            "Is a directory",
        ),
        **{
            f"{command} into another program's database": (
                [*args, "--db", str(db.parent / "foreign.db")],
                "foreign.db: it is another program's SQLite database (it holds customers), not a"
                " semledger log: give a file of its own",
            )
            for command, args in (
                ("serve", ["serve", COUNTER]),
                ("serve a surface", ["serve", "--adapter", "runtime", "--app", COUNTER]),
                ("demo", ["demo"]),
                ("fuzz", ["fuzz", COUNTER, "--examples", "1"]),
            )
        },
        "serve over HTTP with --session": (
            ["serve", COUNTER, "--db", missing, "--http", ":0", "--session", "mine"],
            "--session applies only over stdio: over --http the server names each session",
        ),
    }


_HELD: list[socket.socket] = []


def _busy_port() -> int:
    """A loopback port another socket is listening on for the rest of the test run."""
    if not _HELD:
        held = socket.socket()
        held.bind(("127.0.0.1", 0))
        held.listen()
        _HELD.append(held)
    return int(_HELD[0].getsockname()[1])


@pytest.mark.parametrize("doc", ["README.md", "docs/log.md"])
def test_the_docs_say_replay_refuses_its_app_options_for_a_surface_session(doc: str) -> None:
    """They told of `--export-test` as if it applied to every session."""
    text = " ".join((Path(__file__).parent.parent / doc).read_text().split())
    [said] = [s for s in text.split(". ") if "apply to app sessions only" in s]
    for option in ("`--app`", "`--pdb`", "`--export-test`", "surface session", "exit 2"):
        assert option in said, said


_AS_A_CHILD = {
    # The real process's path, once by argparse and once by a command's own refusal.
    "unknown command",
    "unknown session for read",
    # serve refused only once it serves (as it opens its log or listens): never in-process.
    "a directory for a new log",
    "a new log in a folder that does not exist",
    "serve into a missing folder",
    "serve into a loop of symbolic links",
    "serve on a port in use",
    "serve on port 65536",
    "serve on port 99999",
    "serve into another program's database",
    "serve a surface into another program's database",
}
"""The cases run as `semledger` itself; the others are run by this process (`_refused`)."""


def _refused(args: list[str]) -> subprocess.CompletedProcess[str]:
    """``semledger ARGS`` run in-process, for a case refused before any serving: serving
    in-process fails the test, rather than serve on pytest's streams or wait on a port."""
    import trio

    run = trio.run

    def serving(*_args: object, **_kwargs: object) -> None:
        raise AssertionError(f"{args} serves: run it as a child (_AS_A_CHILD)")

    if args[:1] == ["serve"]:
        trio.run = serving
    try:
        return mcp.cli_in_process(*args)
    finally:
        trio.run = run


@pytest.mark.parametrize("case", list(cases(Path("log.db"))))  # (the names alone)
def test_bad_usage_exits_2_with_a_one_line_reason(db: Path, case: str) -> None:
    args, reason = cases(db)[case]
    untouched = _not_logs(db)
    done = mcp.cli(*args) if case in _AS_A_CHILD else _refused(args)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.endswith("\n")
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("semledger: ")
    assert reason in done.stderr
    assert not (db.parent / "missing.db").exists()
    assert not (db.parent / "nowhere").exists()
    assert not (db.parent / "exported.py").exists()
    # What is not a log is not made one, nor switched to WAL.
    assert {path: path.read_bytes() for path in untouched} == untouched


def test_version_prints_the_installed_package_version() -> None:
    from importlib.metadata import version

    done = mcp.cli_in_process("--version")
    assert (done.returncode, done.stdout, done.stderr) == (
        0, f"semledger {version('semledger')}\n", ""
    )  # fmt: skip


def test_every_option_of_every_command_is_described_in_its_help() -> None:
    """``surface conform --help`` showed ``--adapter NAME`` and nothing of what NAME was."""
    import argparse

    from semledger._cli import build_parser

    def undescribed(parser: argparse.ArgumentParser, prog: str) -> Iterator[str]:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield from undescribed(sub, f"{prog} {name}")
            elif action.help is None:
                yield f"{prog} {'/'.join(action.option_strings) or action.dest}"

    assert list(undescribed(build_parser(), "semledger")) == []


@pytest.mark.parametrize("command", ["sessions", "read", "audit", "replay", "fuzz"])
def test_each_command_that_checks_something_gives_its_exit_statuses_in_its_help(
    command: str,
) -> None:
    """Only ``fuzz`` (and ``end``, in words) said in its help what its exit statuses mean;
    the README alone said it of ``sessions``, ``read``, ``audit`` and ``replay``."""
    import argparse

    from semledger._cli import build_parser

    commands = next(
        a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)
    )
    said = " ".join(commands.choices[command].format_help().split())
    assert re.search(r"Exit status 0: .+; 1: .+; 2: bad usage \(", said), said


def test_a_token_in_the_environment_is_no_error_over_stdio(tmp_path: Path) -> None:
    """Only an explicit --token is refused without --http: SEMLEDGER_TOKEN may be exported
    for an HTTP server and still be set when the same shell serves over stdio."""
    replies = mcp.serve(COUNTER, tmp_path / "log.db", "env", [mcp.read(1)], SEMLEDGER_TOKEN="t")
    assert replies[1]["ok"] is True


def test_an_interrupted_command_says_so_in_one_line(tmp_path: Path) -> None:
    """Ctrl-C on a long command: exit 130 and one line, not a traceback or silence."""
    ready = tmp_path / "ready"
    fuzzing = subprocess.Popen(
        [*mcp.COMMAND, "fuzz", "tests_hung:app", "--examples", "1",
         "--db", str(tmp_path / "fuzz.db")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=mcp.env(SEMLEDGER_TEST_READY=str(ready)),
        # As at a terminal: a test runner started in the background may ignore SIGINT.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    try:
        while not ready.exists() and fuzzing.poll() is None:  # stuck in the app
            time.sleep(0.05)
        fuzzing.send_signal(signal.SIGINT)
        out, err = fuzzing.communicate(timeout=60)
    finally:
        fuzzing.kill()
    assert (fuzzing.returncode, out) == (130, "")
    assert err == "semledger: interrupted: 0 of 1 examples passed, no counterexample\n"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["serve", COUNTER, "--session", "bad\udcff"], "argument --session: 'bad\\udcff'"),
        (["read", "bad\udcff"], "argument SESSION: 'bad\\udcff'"),
        (["fuzz", COUNTER, "--text", "caf\udce9"], "argument --text: 'caf\\udce9'"),
        (["sessions", "--db", "caf\udce9.db"], "argument --db: 'caf\\udce9.db'"),
    ],
    ids=["serve-session", "read-session", "fuzz-text", "sessions-db"],
)
def test_an_argument_that_is_not_utf8_is_bad_usage_naming_it(
    tmp_path: Path, args: list[str], said: str
) -> None:
    """Bytes no UTF-8 decodes (a Latin-1 name) failed with a traceback deep inside, or were
    typed by the fuzzer and reported as the app's bug. Each is named as argparse names an
    argument: an option was named by its dest (``db:`` for ``--db``)."""
    db = tmp_path / "log.db"
    done = subprocess.run(
        [*mcp.COMMAND, *args, "--db", str(db)], input="", capture_output=True, text=True,
        env=mcp.env(), timeout=120, check=False,
    )  # fmt: skip
    help_of = f"semledger {args[0]} --help"
    assert (done.returncode, done.stderr) == (
        2, f"semledger: {said} is not UTF-8 (see '{help_of}')\n"
    )  # fmt: skip
    assert not db.exists()


_INTERRUPTED_AT_IMPORT = """
import os, runpy, signal, sys

class Interrupting:
    def find_spec(self, name, path=None, target=None):
        if name == os.environ["INTERRUPTED_AT"]:
            os.kill(os.getpid(), signal.SIGINT)  # as Ctrl-C does, while it is imported
        return None

sys.meta_path.insert(0, Interrupting())
runpy.run_module("semledger", run_name="__main__", alter_sys=True)
"""


@pytest.mark.parametrize(
    ("module", "args"),
    [
        ("argparse", ["sessions"]),
        ("rich.progress", ["sessions"]),
        ("semledger.eventlog", ["serve", COUNTER]),
        ("semledger.runtime._ids", ["sessions", "--db", "é.db"]),  # as the arguments are read
    ],
)
def test_ctrl_c_as_a_command_starts_says_so_in_one_line(
    tmp_path: Path, module: str, args: list[str]
) -> None:
    """Ctrl-C in the first 50 ms of any command printed a traceback from an import in
    semledger._cli and died of SIGINT, where from 0.2 s on it says it in one line."""
    done = subprocess.run(
        [sys.executable, "-c", _INTERRUPTED_AT_IMPORT, *args], capture_output=True, text=True,
        cwd=tmp_path, env=mcp.env(INTERRUPTED_AT=module), timeout=120, check=False,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "semledger: interrupted\n")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", ["fuzz", "serve"])
def test_an_app_module_that_exits_as_it_is_imported_is_bad_usage_naming_it(
    tmp_path: Path, command: str
) -> None:
    """Its sys.exit(3) ended the command with status 3, saying nothing."""
    (tmp_path / "exits_on_import.py").write_text("import sys\nsys.exit(3)\n")
    done = subprocess.run(
        [*mcp.COMMAND, command, "exits_on_import:app", "--db", str(tmp_path / "log.db")],
        capture_output=True, text=True, cwd=tmp_path, env=mcp.env(), timeout=120, check=False,
        stdin=subprocess.DEVNULL,
    )
    assert (done.returncode, done.stdout, done.stderr) == (
        2, "", "semledger: 'exits_on_import:app': importing exits_on_import called sys.exit(3)\n"
    )


@pytest.mark.parametrize("name", ["\u202eevil", "a\u2028b"])
def test_a_session_an_old_log_holds_under_a_name_shown_escaped_is_still_served_and_read(
    tmp_path: Path, name: str
) -> None:
    """A new session may not have such a name; one logged before that was refused must
    still be resumed, and read, by the name it has."""
    db = tmp_path / "old.db"
    record(db, name, COUNTER, [INCREMENT])
    served = mcp.cli("serve", COUNTER, "--db", str(db), "--session", name)
    assert served.returncode == 0, served.stderr
    assert f"resumed session {name!r}" in served.stderr
    read = mcp.cli_in_process("read", name, "--db", str(db))
    assert read.returncode == 0, read.stderr
