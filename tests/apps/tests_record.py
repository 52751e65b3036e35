"""Recording sessions for tests: a scripted agent drives a session actor on a log."""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import trio

from semledger.actors import Close, LogWriter, SessionActor, SessionCrashedError
from semledger.eventlog import NewEvent, Recorder, SessionCrashed, SessionStarted, SqliteRecorder
from semledger.replay import load_app
from semledger.runtime import Full, Receipt, Rejection
from semledger.runtime._wire import decode_action, decode_precondition, decode_target

Call = tuple[str, dict[str, Any]]
"""A semantic id and a wire action; the precondition is always latest."""


def record(
    db: Path, name: str, app_ref: str, script: list[Call], *, redact_passwords: bool = True
) -> tuple[list[Receipt | Rejection | None], dict[int, Full]]:
    """Run `script` as session `name`; the outcomes (None once it crashed) and Full reads.

    The Full reads are the live answers to read_semantics taken after every step, by
    generation.
    """
    outcomes: list[Receipt | Rejection | None] = []
    fulls: dict[int, Full] = {}

    async def main() -> None:
        app = load_app(app_ref)

        async def read() -> None:
            result = await actor.read_semantics(None)
            assert isinstance(result, Full)
            fulls[result.generation] = result

        with SqliteRecorder(db, synchronous="OFF") as recorder:
            async with trio.open_nursery() as nursery:
                writer: LogWriter = await nursery.start(LogWriter(recorder).run)
                actor = SessionActor(
                    name, app, app_ref, writer, recorder, redact_passwords=redact_passwords
                )
                async with trio.open_nursery() as sessions:
                    await sessions.start(actor.run)
                    await read()
                    for semantic_id, action in script:
                        try:
                            outcomes.append(
                                await actor.perform_action(
                                    decode_target({"kind": "semantic_id", "id": semantic_id}),
                                    decode_action(action),
                                    decode_precondition({"kind": "latest"}),
                                )
                            )
                        except SessionCrashedError:
                            outcomes.append(None)
                            break
                        await read()
                    else:
                        await actor.request(Close("script over"))
                writer.close()

    trio.run(main)
    return outcomes, fulls


INCREMENT: Call = ("counter.increment", {"kind": "activate"})
COUNTER = "semledger.examples.counter:app"


def crashed_as_it_started(recorder: Recorder, name: str, exception_type: str) -> None:
    """Log session `name` of tests_broken_start as a live session logs an app that raised
    `exception_type` as it started: its start, then its crash."""
    started = SessionStarted("tests_broken_start:app", "runtime", {}, True)
    crashed = SessionCrashed(exception_type, "...")
    recorder.append([NewEvent(name, 1, started, 0.0), NewEvent(name, 2, crashed, 0.0)])


def damaged(logged: Path, tmp_path: Path, *statements: str) -> Path:
    """A copy of the log `logged` in `tmp_path`, changed by the SQL `statements`."""
    db = tmp_path / "damaged.db"
    shutil.copy(logged, db)
    with sqlite3.connect(db) as conn:
        for statement in statements:
            conn.execute(statement)
    conn.close()
    return db


def schema_version_only(db: Path, version: int) -> Path:
    """A new SQLite file `db` holding a schema_version table of `version` and nothing else."""
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("CREATE TABLE schema_version (version INTEGER)")
        conn.execute("INSERT INTO schema_version VALUES (?)", (version,))
    return db
