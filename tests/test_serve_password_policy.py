"""A session keeps the password policy its start records (``redact_passwords``): a server
that would redact otherwise does not resume it, and the audit says which policy it is."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp

from semledger.eventlog import SqliteRecorder

GALLERY = "semledger.examples.gallery:app"
SECRET = "first-secret"
REDACTING = (
    "session 's' was started redacting typed passwords in its log (its start records"
    " redact_passwords: true): it is not resumed with --log-passwords (redact_passwords=False),"
    " which would log them in clear from here on; resume it without --log-passwords"
    " (redact_passwords=True), or serve a session of another name"
)
LOGGING = (
    "session 's' was started logging typed passwords in clear (its start records"
    " redact_passwords: false): it is not resumed without --log-passwords"
    " (redact_passwords=True), which would mask typed passwords from here on while its log"
    " keeps the earlier ones in clear; resume it with --log-passwords (redact_passwords=False),"
    " or serve a session of another name"
)
POLICIES = [((), ("--log-passwords",), REDACTING), (("--log-passwords",), (), LOGGING)]
"""The flags a session is started with, the other ones, and why those are refused."""


def typed(value: str) -> str:
    return mcp.perform(1, "gallery.password", "set_text", value=value)


def serve(db: Path, flags: tuple[str, ...], *serving: str) -> subprocess.CompletedProcess[str]:
    """`semledger serve` of session 's' (of the gallery, or what `serving` names) typing a
    password, to the end of input."""
    served = serving or (GALLERY,)
    return subprocess.run(
        [*mcp.COMMAND, "serve", *served, "--db", str(db), "--session", "s", *flags],
        input=mcp.initialize() + typed(SECRET),
        capture_output=True,
        text=True,
        env=mcp.env(),
        timeout=120,
        check=False,
    )


def logged(db: Path) -> list[tuple[int, str]]:
    with SqliteRecorder(db) as recorder:
        return [(record.seq, record.topic) for record in recorder.read("s")]


@pytest.mark.parametrize(("started", "other", "says"), POLICIES, ids=["redacting", "logging"])
def test_a_session_is_not_resumed_under_the_other_password_policy_and_nothing_is_logged(
    tmp_path: Path, started: tuple[str, ...], other: tuple[str, ...], says: str
) -> None:
    """Resumed with --log-passwords, a session started redacting logged the next password
    in clear, while its start still said redact_passwords: true and nothing said otherwise
    (the other way round, it masked passwords from then on)."""
    db = tmp_path / "log.db"
    assert serve(db, started).returncode == 0
    before = logged(db)
    refused = serve(db, other)
    assert (refused.returncode, refused.stdout) == (2, "")
    assert refused.stderr == f"semledger: {says}\n"
    assert logged(db) == before
    resumed = serve(db, started)
    assert resumed.returncode == 0, resumed.stderr
    assert "resumed session 's'" in resumed.stderr


@pytest.mark.parametrize(("started", "other", "says"), POLICIES, ids=["redacting", "logging"])
def test_a_surface_session_is_not_resumed_under_the_other_password_policy(
    tmp_path: Path, started: tuple[str, ...], other: tuple[str, ...], says: str
) -> None:
    db = tmp_path / "log.db"
    surface = ("--adapter", "runtime", "--app", GALLERY)
    assert serve(db, started, *surface).returncode == 0
    before = logged(db)
    refused = serve(db, other, *surface)
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr == f"semledger: {says}\n"
    assert logged(db) == before


@pytest.mark.parametrize("flags", [(), ("--log-passwords",)], ids=["redacting", "logging"])
def test_the_audit_says_what_the_log_keeps_of_typed_passwords(
    tmp_path: Path, flags: tuple[str, ...]
) -> None:
    """Neither the audit's text nor its --json said whether the passwords typed were masked
    in the log or kept in clear."""
    db = tmp_path / "log.db"
    assert serve(db, flags).returncode == 0
    redact = not flags
    audited = mcp.cli_in_process("audit", "s", "--db", str(db), "--json")
    assert audited.returncode == 0, audited.stderr
    assert json.loads(audited.stdout)["redact_passwords"] is redact
    text = mcp.cli_in_process("audit", "s", "--db", str(db), columns=200)
    assert text.returncode == 0, text.stderr
    says = (
        "passwords typed in the session are masked in the log (redact_passwords: true)"
        if redact
        else "passwords typed in the session are in the log in clear: it was served with"
        " --log-passwords (redact_passwords: false)"
    )
    assert says in text.stdout.splitlines()
