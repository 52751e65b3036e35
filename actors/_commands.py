"""Commands to paste: the ``semledger`` command lines hints and errors suggest."""

from __future__ import annotations

import shlex

__all__ = ["db_option", "session_command"]


def session_command(verb: str, session: str, db: str | None) -> str:
    """``semledger VERB SESSION --db PATH`` for a command to paste, quoted as a shell reads
    it back; a name that starts with '-', which argparse would take for an option, goes
    last, after ``--``."""
    option = "" if db is None else f" {db_option(db)}"
    if session.startswith("-"):
        return f"semledger {verb}{option} -- {shlex.quote(session)}"
    return f"semledger {verb} {shlex.quote(session)}{option}"


def db_option(db: str) -> str:
    """``--db PATH`` for a command to paste, quoted as a shell reads it back; ``--db=PATH``
    where the path starts with '-', which argparse would take for an option."""
    quoted = shlex.quote(db)
    return f"--db={quoted}" if db.startswith("-") else f"--db {quoted}"
