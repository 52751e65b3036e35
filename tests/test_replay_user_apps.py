"""`semledger replay` and `--export-test` on sessions a user's own app left in the log, driven
through the command line as a user runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from semledger.actors import SessionCore, crash_event
from semledger.eventlog import (
    ActionRequested,
    EffectCompleted,
    Event,
    NewEvent,
    SessionStarted,
    SqliteRecorder,
)
from semledger.replay import load_app

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from stdio_client import cli_in_process

SEMLEDGER = [sys.executable, "-m", "semledger"]

APPS = Path(__file__).parent / "apps"
"""Where tests_opaque lives: an effect's message whose field is typed `object`."""


def _path(cwd: Path) -> str:
    return os.pathsep.join([str(cwd), str(APPS)])


def _cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "PYTHONPATH": _path(cwd)}
    return subprocess.run(
        [*SEMLEDGER, *args], cwd=cwd, env=env, capture_output=True, text=True, check=False,
        timeout=120,
    )  # fmt: skip


def _pytest(cwd: Path, test: Path) -> subprocess.CompletedProcess[str]:
    """pytest run on `test` by itself. The exported module needs no plugin: the installed
    ones (trio, hypothesis, anyio, xdist) are not loaded, which took two seconds a run."""
    env = {**os.environ, "PYTHONPATH": _path(cwd), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test)],
        cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip


def _crashed_on_the_effect_result(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A log whose session crashed where its effect's result could not be decoded: every
    event made by a `SessionCore`."""
    monkeypatch.syspath_prepend(str(APPS))
    core = SessionCore(load_app("tests_opaque:app"))
    events: list[Event] = [SessionStarted("tests_opaque:app", "runtime", {}, True)]
    events += core.initial_outputs()
    go = ActionRequested(
        core.next_request_id(),
        {"kind": "semantic_id", "id": "go"},
        {"kind": "activate"},
        {"kind": "latest"},
        False,
    )
    events += [go, *core.step(go).outputs]
    # As a version before the codec checked that a message decodes back logged it.
    result = EffectCompleted(1, {"type": "Got", "value": {"value": 1}})
    with pytest.raises(Exception, match="object") as raised:
        core.step(result)
    events += [result, crash_event(raised.value)]
    db = tmp_path / "log.db"
    with SqliteRecorder(db) as recorder:
        recorder.append([NewEvent("opaque", i, e, 0.0) for i, e in enumerate(events, start=1)])
    return db


def test_replay_of_a_crash_outside_update_is_identical_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = _crashed_on_the_effect_result(tmp_path, monkeypatch)  # tests_opaque on sys.path
    done = cli_in_process("replay", "opaque", "--db", str(db), columns=200)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stdout + done.stderr
    assert "identical" in done.stdout
    assert "the application raised again at step 2" in done.stdout


def test_exported_test_of_a_crash_outside_update_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = _crashed_on_the_effect_result(tmp_path, monkeypatch)
    exported = tmp_path / "test_opaque.py"
    written = cli_in_process("replay", "opaque", "--db", str(db), "--export-test", str(exported))
    assert written.returncode == 0, written.stderr
    run = _pytest(tmp_path, exported)
    assert run.returncode == 0, run.stdout + run.stderr


PASSWORD_APP = textwrap.dedent(
    """
    import attrs
    from semledger.runtime import App, button, column, text, text_field

    @attrs.frozen
    class Typed:
        value: str

    @attrs.frozen
    class Unlock:
        pass

    @attrs.frozen
    class Model:
        pin: str = ""
        open: bool = False

    def update(model, msg):
        if isinstance(msg, Typed):
            return attrs.evolve(model, pin=msg.value)
        return attrs.evolve(model, open=model.pin == "1234")

    def view(model):
        return column(
            text_field("PIN", model.pin, on_set_text=Typed, password=True, semantic_id="pin"),
            button("Unlock", Unlock(), semantic_id="unlock"),
            text("Lock", "open" if model.open else "shut"),
        )

    app = App(init=Model, update=update, view=view, message_types=(Typed, Unlock))
    """
)


def _unlocked(tmp_path: Path, *serve_options: str) -> Path:
    """A session that typed the PIN into the password field and unlocked."""
    (tmp_path / "vault.py").write_text(PASSWORD_APP)
    calls = [
        ("pin", {"kind": "set_text", "value": "1234"}),
        ("unlock", {"kind": "activate"}),
    ]
    start = {"protocolVersion": "2025-06-18"}
    lines = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": start}]
    for number, (semantic_id, action) in enumerate(calls, start=1):
        arguments = {
            "target": {"kind": "semantic_id", "id": semantic_id},
            "action": action,
            "precondition": {"kind": "latest"},
        }
        params = {"name": "perform_action", "arguments": arguments}
        lines.append({"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": params})
    db = tmp_path / "log.db"
    served = subprocess.run(
        [*SEMLEDGER, "serve", "vault:app", "--db", str(db), "--session", "vault", *serve_options],
        input="".join(json.dumps(line) + "\n" for line in lines),
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert served.returncode == 0, served.stderr
    return db


def _exported_test_run(tmp_path: Path, db: Path) -> subprocess.CompletedProcess[str]:
    exported = tmp_path / "test_vault.py"
    written = _cli(tmp_path, "replay", "vault", "--db", str(db), "--export-test", str(exported))
    assert written.returncode == 0, written.stderr
    return _pytest(tmp_path, exported)


def test_exported_test_that_fails_after_a_redacted_input_names_it_as_the_likely_cause(
    tmp_path: Path,
) -> None:
    run = _exported_test_run(tmp_path, _unlocked(tmp_path))
    assert run.returncode == 1, run.stdout + run.stderr
    assert "step 2 (ActionRequested) differs: step 1, an earlier input, was redacted" in run.stdout
    assert "--log-passwords" in run.stdout


def test_exported_test_of_a_session_logged_with_its_passwords_passes(tmp_path: Path) -> None:
    run = _exported_test_run(tmp_path, _unlocked(tmp_path, "--log-passwords"))
    assert run.returncode == 0, run.stdout + run.stderr
