"""semledger: agent-operable user interfaces on committed semantics, every action on the record."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

DEFAULT_DB = "semledger.db"


class UsageError(Exception):
    """Bad usage found after parsing (a missing log, an unknown session): exit status 2."""


class _Parser(argparse.ArgumentParser):
    """Bad usage ends with exit status 2 and a one-line reason on stderr."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"semledger: {message} (see 'semledger --help')\n")


def _add_db(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db", default=DEFAULT_DB, metavar="PATH", help=f"the log (default: ./{DEFAULT_DB})"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="semledger", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    demo = commands.add_parser("demo", help="the main job: an agent drives the todo app over MCP")
    _add_db(demo)

    serve = commands.add_parser("serve", help="serve an app (or a surface) to agents over MCP")
    serve.add_argument("app", nargs="?", metavar="APP", help="module:attribute of an App")
    _add_db(serve)
    serve.add_argument("--session", metavar="NAME", help="name the stdio session (resumes it)")
    serve.add_argument("--diagnostics", action="store_true", help="add the diagnostics tools")
    serve.add_argument("--http", metavar="HOST:PORT", help="serve Streamable HTTP instead")
    serve.add_argument("--token", metavar="T", help="bearer token for HTTP (or SEMLEDGER_TOKEN)")
    serve.add_argument(
        "--log-passwords", action="store_true", help="log values typed into password fields"
    )

    sessions = commands.add_parser("sessions", help="the sessions in the log")
    _add_db(sessions)
    sessions.add_argument("--json", action="store_true")

    read = commands.add_parser("read", help="a Full read of a session from the log alone")
    read.add_argument("session", metavar="SESSION")
    _add_db(read)
    read.add_argument("--generation", type=int, metavar="N", help="default: the last one")
    read.add_argument("--json", action="store_true")

    audit = commands.add_parser("audit", help="every perform_action of a session and its outcome")
    audit.add_argument("session", metavar="SESSION")
    _add_db(audit)
    audit.add_argument("--json", action="store_true")
    audit.add_argument("--verify", action="store_true", help="check the integrity chain too")

    replay = commands.add_parser("replay", help="re-execute a session and compare every commit")
    replay.add_argument("session", metavar="SESSION")
    _add_db(replay)
    replay.add_argument("--app", metavar="APP", help="default: the app the session recorded")
    replay.add_argument("--pdb", action="store_true", help="stop in pdb where the app raised")
    replay.add_argument("--export-test", metavar="FILE", help="write a pytest module instead")

    fuzz = commands.add_parser("fuzz", help="property-based fuzzing of generation semantics")
    fuzz.add_argument("app", metavar="APP")
    _add_db(fuzz)
    fuzz.add_argument("--examples", type=int, default=100, metavar="N")
    fuzz.add_argument("--seed", type=int, default=0, metavar="S")
    return parser


def _recorder(db: str, *, must_exist: bool = True) -> Any:
    from semledger.eventlog import SqliteRecorder

    if must_exist and not Path(db).exists():
        raise UsageError(f"no log at {db} (give --db PATH)")
    return SqliteRecorder(db)


@contextmanager
def _progress(
    console: Console, label: str, enabled: bool
) -> Iterator[Callable[[int, int | None], None]]:
    """A rich progress bar for long logs; a no-op callback otherwise."""
    if not enabled:
        yield lambda _done, _total: None
        return
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task(label, total=None)

        def update(done: int, total: int | None) -> None:
            progress.update(task, completed=done, total=total)

        yield update


def _cmd_sessions(args: argparse.Namespace, console: Console) -> int:
    recorder = _recorder(args.db)
    summaries = recorder.sessions()
    if args.json:
        print(json.dumps([_summary_json(s) for s in summaries], indent=2))
        return 0
    table = Table("session", "app", "surface", "events", "state", title=f"sessions in {args.db}")
    for s in summaries:
        state = "crashed" if s.crashed else "ended" if s.ended else "open"
        table.add_row(s.name, s.app or "", s.surface or "", str(s.events), state)
    console.print(table)
    return 0


def _summary_json(summary: Any) -> dict[str, Any]:
    import attrs

    return attrs.asdict(summary)


def _cmd_read(args: argparse.Namespace, console: Console) -> int:
    from semledger.replay import UnknownGenerationError, UnknownSessionError, full_at
    from semledger.runtime._wire import encode_read

    recorder = _recorder(args.db)
    try:
        full = full_at(recorder, args.session, args.generation)
    except (UnknownSessionError, UnknownGenerationError) as error:
        raise UsageError(str(error)) from error
    if args.json:
        print(json.dumps(encode_read(full), ensure_ascii=False, indent=2))
    else:
        from semledger._render import render_full

        console.print(render_full(full))
    return 0


def _cmd_audit(args: argparse.Namespace, console: Console) -> int:
    from semledger.replay import UnknownSessionError, audit, verify

    recorder = _recorder(args.db)
    try:
        entries = audit(recorder, args.session)
        report = None
        if args.verify:
            with _progress(console, "verifying", not args.json) as progress:
                report = verify(recorder, args.session, on_progress=progress)
    except UnknownSessionError as error:
        raise UsageError(str(error)) from error
    if args.json:
        out: dict[str, Any] = {"session": args.session, "actions": [e.to_json() for e in entries]}
        if report is not None:
            out["verify"] = {
                "ok": report.ok,
                "verified": report.verified,
                "problem": (None if report.problem is None else str(report.problem)),
            }
        print(json.dumps(out, ensure_ascii=False, indent=2))
    else:
        from semledger._render import audit_table

        console.print(audit_table(args.session, entries))
        if report is not None:
            style = "green" if report.ok else "bold red"
            console.print(f"[{style}]integrity chain: {report}[/{style}]")
    return 0 if report is None or report.ok else 1


def _cmd_replay(args: argparse.Namespace, console: Console) -> int:
    from semledger.replay import AppLoadError, UnknownSessionError, export_test, load_app, reexecute

    recorder = _recorder(args.db)
    summary = {s.name: s for s in recorder.sessions()}.get(args.session)
    if summary is None:
        raise UsageError(f"the log has no session {args.session!r}")
    app_ref = args.app or summary.app
    if app_ref is None:
        raise UsageError(f"session {args.session!r} names no app: give --app")
    if args.export_test:
        Path(args.export_test).write_text(export_test(recorder, args.session, app_ref=app_ref))
        console.print(f"wrote {args.export_test}: run it with pytest")
        return 0
    try:
        app = load_app(app_ref)
    except AppLoadError as error:
        raise UsageError(str(error)) from error
    try:
        with _progress(console, "replaying", True) as progress:
            report = reexecute(recorder, args.session, app, on_progress=progress)
    except UnknownSessionError as error:
        raise UsageError(str(error)) from error
    from semledger._render import replay_verdict

    console.print(replay_verdict(report))
    if report.crash is not None and args.pdb:
        import pdb

        cause = report.crash.__cause__ or report.crash
        pdb.post_mortem(cause.__traceback__)
    return 0 if report.ok else 1


def _cmd_fuzz(args: argparse.Namespace, console: Console) -> int:
    from semledger.replay import AppLoadError, fuzz_app, load_app

    try:
        app = load_app(args.app)
    except AppLoadError as error:
        raise UsageError(str(error)) from error
    recorder = _recorder(args.db, must_exist=False)
    result = fuzz_app(app, args.app, recorder, examples=args.examples, seed=args.seed)
    if result.failure is None:
        console.print(f"[green]{result.examples} examples, no counterexample[/green]")
        return 0
    console.print(f"[bold red]counterexample:[/bold red] {result.failure}")
    console.print(
        f"saved as session {result.session!r}: semledger replay {result.session} --db {args.db}"
    )
    return 1


def _cmd_serve(args: argparse.Namespace, console: Console) -> int:
    import os

    import trio

    if args.app is None:
        raise UsageError("serve needs APP (module:attribute)")
    from semledger.replay import AppLoadError, load_app

    try:
        load_app(args.app)
    except AppLoadError as error:
        raise UsageError(str(error)) from error
    if args.http:
        from semledger.hosts import serve_http

        host, sep, port = args.http.rpartition(":")
        if not sep or not port.isdigit():
            raise UsageError(f"--http {args.http!r}: expected HOST:PORT, e.g. 127.0.0.1:8765")
        token = args.token or os.environ.get("SEMLEDGER_TOKEN")
        trio.run(
            lambda: serve_http(
                args.app,
                host=host or "127.0.0.1",
                port=int(port),
                db=args.db,
                diagnostics=args.diagnostics,
                token=token,
                redact_passwords=not args.log_passwords,
            )
        )
        return 0
    from semledger.hosts import serve_stdio

    trio.run(
        lambda: serve_stdio(
            args.app,
            db=args.db,
            session=args.session,
            diagnostics=args.diagnostics,
            redact_passwords=not args.log_passwords,
        )
    )
    return 0


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
}


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    console = Console(stderr=args.command == "serve")
    try:
        return COMMANDS[args.command](args, console)
    except UsageError as error:
        print(f"semledger: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
