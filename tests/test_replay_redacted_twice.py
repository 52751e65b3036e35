"""A divergence at the second of two redacted inputs is noted as that input's own, not as
the earlier one's, in a replay and in an exported test alike."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from semledger.eventlog import SqliteRecorder
from semledger.replay import export_test, reexecute

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import tests_strength
from tests_record import Call, record

SCRIPT: list[Call] = [
    # Weak typed and weak as bullets: the first redacted input replays the same.
    ("strength.password", {"kind": "set_text", "value": "abc"}),
    # Strong typed, weak as bullets: the second one diverges.
    ("strength.password", {"kind": "set_text", "value": "hunter22"}),
]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "log.db"
    record(path, "strength", "tests_strength:app", SCRIPT)
    return path


def test_a_replay_diverging_at_the_second_redacted_input_notes_that_input(db: Path) -> None:
    with SqliteRecorder(db) as recorder:
        divergence = reexecute(recorder, "strength", tests_strength.app).divergence
    assert divergence is not None
    assert (divergence.step, divergence.note) == (2, "this input was redacted in the log")


def test_an_exported_test_differing_at_the_second_redacted_input_notes_that_input(
    db: Path,
) -> None:
    with SqliteRecorder(db) as recorder:
        source = export_test(recorder, "strength")
    module: dict[str, Any] = {}
    exec(compile(source, "exported", "exec"), module)
    (exported,) = (v for k, v in module.items() if k.startswith("test_"))
    with pytest.raises(AssertionError) as differs:
        exported()
    said = str(differs.value)
    assert said.startswith("step 2 (ActionRequested) differs: this input was redacted"), said
