"""`semledger demo`: a scripted agent drives the todo app through a real MCP stdio subprocess.

The agent is written against the official MCP client, so nothing here is on our side of
the wire. Afterwards the session is replayed from the log, its integrity chain verified
and its audit printed.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TextIO

import anyio
from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from semledger.runtime._text import printable, shortened

APP = "semledger.examples.todo:app"


class DemoError(Exception):
    """Raised when the server answered the scripted agent other than the demo expects."""


def _sid(semantic_id: str) -> dict[str, str]:
    return {"kind": "semantic_id", "id": semantic_id}


class _Agent:
    """Acts only on what it read, with exact preconditions taken from receipts."""

    def __init__(self, session: Any, console: Console) -> None:
        self.session = session
        self.console = console
        self.generation = "0"

    async def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = await self.session.call_tool(tool, arguments)
        envelope: dict[str, Any] = result.structured_content
        if envelope["ok"] != (not result.is_error):
            raise DemoError(f"{tool}: isError disagrees with the envelope")
        return envelope

    async def read(self) -> dict[str, Any]:
        envelope = await self.call("read_semantics", {})
        value: dict[str, Any] = envelope["value"]
        self.generation = value["generation"]
        return value

    async def act(
        self,
        target: dict[str, Any],
        action: dict[str, Any],
        *,
        expect: str = "ok",
        generation: str | None = None,
    ) -> dict[str, Any]:
        """Act at `generation` (default: the last one seen), or at the latest if "latest"."""
        precondition = (
            {"kind": "latest"}
            if generation == "latest"
            else {"kind": "exact", "generation": generation or self.generation}
        )
        envelope = await self.call(
            "perform_action", {"target": target, "action": action, "precondition": precondition}
        )
        outcome = "ok" if envelope["ok"] else envelope["error"]["code"]
        if outcome != expect:
            raise DemoError(f"{action['kind']} on {target}: expected {expect}, got {envelope}")
        if envelope["ok"]:
            self.generation = envelope["value"]["after"]
        label = target.get("id", target)
        mark = ("✓", "green") if envelope["ok"] else ("✗", "yellow")
        self.console.print(
            Text.assemble("  ", mark, f" {action['kind']:<9} {label}  →  {outcome}")
        )
        return envelope


async def _drive(db: str, session_name: str, console: Console, errlog: TextIO) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    # -P: the working directory is not searched first, where a file named semledger.py or
    # attrs.py was imported in place of the package the server needs.
    server = StdioServerParameters(
        command=sys.executable,
        args=["-P", "-m", "semledger", "serve", APP, "--db", db, "--session", session_name],
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    async with (
        stdio_client(server, errlog=errlog) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        tools = sorted(t.name for t in (await session.list_tools()).tools)
        console.print(f"  the server offers exactly {tools}")
        agent = _Agent(session, console)
        first = (await agent.read())["generation"]
        for text in ("Buy milk", "Walk the dog", "Write the report"):
            await agent.act(_sid("todo.input"), {"kind": "set_text", "value": text})
            await agent.act(_sid("todo.input"), {"kind": "submit"})
        await agent.act(_sid("todo.input"), {"kind": "submit"}, expect="handler_rejected")
        await agent.act(_sid("todo.item.1.done"), {"kind": "activate"})
        await agent.act(_sid("todo.item.2.delete"), {"kind": "activate"})
        saved = await agent.act(_sid("todo.save"), {"kind": "activate"})
        if not saved["value"]["pending_work"]:
            raise DemoError("saving should leave an effect outstanding")
        await agent.act(
            _sid("todo.clear_completed"),
            {"kind": "activate"},
            expect="stale_generation",
            generation=first,
        )
        # (At the latest: the save may have finished, and made a generation, already.)
        await agent.act(
            _sid("todo.item"),
            {"kind": "activate"},
            expect="target_ambiguous",
            generation="latest",
        )
        deadline = time.monotonic() + 5
        while True:
            nodes = (await agent.read())["nodes"]
            status = next(n for n in nodes if n["semantic_id"] == "todo.save_status")
            if status["value"] and status["value"].startswith("Saved"):
                console.print(f"  the effect finished: {status['value']!r}")
                break
            if time.monotonic() > deadline:
                raise DemoError("the save effect did not finish")
            await anyio.sleep(0.02)


def run_demo(console: Console, *, db: str = "semledger.db") -> int:
    from semledger._render import (
        audit_notes,
        connection_lines,
        print_audit,
        replay_verdict,
    )
    from semledger.actors._commands import db_option
    from semledger.eventlog import SqliteRecorder
    from semledger.examples.todo import app
    from semledger.replay import audit_report, reexecute, verify

    started = time.perf_counter()
    SqliteRecorder(db).close()  # a file that cannot hold the log is refused before it starts
    session_name = f"demo-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
    console.print(
        Panel.fit(
            Text.assemble(
                "An agent drives ",
                (APP, "bold"),
                " over MCP stdio (a real subprocess)\nsession ",
                (session_name, "cyan"),
                ", log ",
                (printable(str(Path(db).resolve())), "cyan"),
            ),
            title="semledger demo",
        )
    )
    with tempfile.TemporaryFile("w+") as errlog:
        try:
            anyio.run(_drive, db, session_name, console, errlog)
        except Exception as error:
            failed = _failure(error, errlog)
            if failed is None:
                raise
            console.print(Text(printable(f"demo failed: {failed}"), "bold red"), soft_wrap=True)
            return 1
    recorder = SqliteRecorder(db)
    try:
        audited = audit_report(recorder, session_name)
        for line in connection_lines(audited.connections):
            console.print(line)
        print_audit(console, session_name, audited.entries)
        for line in audit_notes(audited):
            console.print(line)
        report = reexecute(recorder, session_name, app)
        console.print(replay_verdict(report))
        chain = verify(recorder, session_name)
        style = "green" if chain.ok else "bold red"
        console.print(f"integrity chain: {chain}", style=style)
    finally:
        recorder.close()
    elapsed = time.perf_counter() - started
    console.print(
        Panel.fit(
            Text(printable(f"the log is {Path(db).resolve()} ({elapsed:.1f} s)")), title="done"
        )
    )
    # Outside the box and never wrapped: each line is a command to paste into a shell, with
    # no control character of the operator's path (an escape) sent to the terminal raw.
    log, semledger = db_option(db), _this_command()
    console.print("next:")
    for step in (
        f"sessions {log}",
        f"read {session_name} {log}",
        f"audit {session_name} --verify {log}",
        f"replay {session_name} {log}",
        f"fuzz {APP} --examples 50 --allow-issue duplicate_semantic_id:todo.item {log}",
    ):
        console.print(Text(printable(f"  {semledger} {step}")), soft_wrap=True)
    return 0 if report.ok and chain.ok else 1


def _failure(error: Exception, errlog: TextIO) -> str | None:
    """Why the demo failed, in one line, when `error` (as the MCP client's task groups
    wrap it) is the demo's own or the server's going away; None for any other."""
    from mcp.shared.exceptions import MCPError

    leaves = _leaves(error)
    if ours := [leaf for leaf in leaves if isinstance(leaf, DemoError)]:
        return str(ours[0])
    if not all(isinstance(leaf, MCPError) for leaf in leaves):
        return None
    errlog.seek(0)
    said = [line.strip() for line in errlog.read().splitlines() if line.strip()]
    last = " / ".join(said[-_STDERR_LINES:]) or "it said nothing on stderr"
    return f"the server exited: {shortened(last, _STDERR_CHARS)}"


_STDERR_LINES = 3
_STDERR_CHARS = 400


def _leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    return [error]


def _this_command() -> str:
    """semledger as it was run, for commands to paste: ``semledger`` where the shell finds
    this one by that name, else the path it was run by (``.venv/bin/semledger`` outside
    an activated environment) or ``python -m semledger``."""
    run_as = sys.argv[0]
    if Path(run_as).name == "semledger":
        found = shutil.which("semledger")
        if found is not None and Path(found).resolve() == Path(run_as).resolve():
            return "semledger"
        return shlex.quote(run_as)
    return f"{shlex.quote(sys.executable)} -m semledger"
