"""A test exported from a session whose failure came after a redacted input (a password the
log holds as bullets) re-drives the bullets: it cannot check a fix, and says why where the
failure no longer happens."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from semledger.eventlog import SqliteRecorder
from semledger.replay import check_recorded_steps, export_test

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from tests_record import Call, record

PASSWORD = "tests_fuzz_password:app"
"""Its submit raises on a password with a digit in it."""
TYPED: Call = ("password", {"kind": "set_text", "value": "abc1"})
SUBMIT: Call = ("password", {"kind": "submit"})


def exported(tmp_path: Path, *, redact_passwords: bool) -> dict[str, Any]:
    """The module exported from typing a password with a digit and submitting it, run."""
    db = tmp_path / "log.db"
    record(db, "signin", PASSWORD, [TYPED, SUBMIT], redact_passwords=redact_passwords)
    with SqliteRecorder(db) as recorder:
        source = export_test(recorder, "signin")
    module: dict[str, Any] = {"SOURCE": source}
    exec(compile(source, "exported", "exec"), module)
    assert module["CRASH"] == (2, "ValueError")
    return module


def the_test(module: dict[str, Any]) -> Any:
    (found,) = (v for k, v in module.items() if k.startswith("test_"))
    return found


def test_a_crash_after_a_redacted_input_exports_no_fixed_switch(tmp_path: Path) -> None:
    """With FIXED set, it passed on the app unchanged: the bullets hold no digit."""
    module = exported(tmp_path, redact_passwords=True)
    assert "FIXED =" not in module["SOURCE"]
    assert "fixed=" not in module["SOURCE"]
    docstring = " ".join(str(module["__doc__"]).split())
    assert "Step 1 was redacted in the log" in docstring
    assert "record the session with --log-passwords" in docstring
    assert "set FIXED = True" not in docstring


def test_a_crash_after_a_redacted_input_fails_saying_the_redaction_may_be_why(
    tmp_path: Path,
) -> None:
    module = exported(tmp_path, redact_passwords=True)
    with pytest.raises(AssertionError, match=r"^step 2 \(ActionRequested\) succeeded") as gone:
        the_test(module)()
    said = str(gone.value)
    assert (
        "the recorded crash no longer happens: step 1, an earlier input, was redacted in the"
        " log and is re-driven with masked text, which may be the cause; recording with"
        " --log-passwords keeps the text and avoids this"
    ) in said, said
    assert "set FIXED" not in said
    assert said.endswith(
        "This test cannot check a fix (it has no FIXED switch): its docstring says why, and"
        " what to do."
    )


def test_fixed_set_on_steps_with_a_redacted_input_fails_at_once(tmp_path: Path) -> None:
    """A module exported before it left the switch out, set True, passes no more."""
    module = exported(tmp_path, redact_passwords=True)
    steps, crash = module["STEPS"], module["CRASH"]
    with pytest.raises(AssertionError, match=r"^fixed=True cannot check a fix") as refused:
        check_recorded_steps(PASSWORD, module["INITIAL"], steps, crash=crash, fixed=True)
    assert "step 1 was redacted in the log" in str(refused.value)
    assert "--log-passwords" in str(refused.value)


def test_a_crash_after_a_password_logged_in_clear_keeps_its_fixed_switch(tmp_path: Path) -> None:
    module = exported(tmp_path, redact_passwords=False)
    assert "\nFIXED = False\n" in module["SOURCE"]
    the_test(module)()
    steps, crash = module["STEPS"], module["CRASH"]
    with pytest.raises(AssertionError, match="the recorded crash still happens"):
        check_recorded_steps(PASSWORD, module["INITIAL"], steps, crash=crash, fixed=True)
