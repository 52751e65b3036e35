"""`--export-test`: turn a recorded session into a pytest module that re-drives it.

The module embeds the session's inputs and the outputs they produced, as plain data, and
asserts that the application produces every receipt, rejection and commit hash again: a
failing agent run becomes a regression test in one command.
"""

from __future__ import annotations

import pprint
import re
from typing import Any

from semledger.eventlog import CONVERTER, INPUT_CLASSES, Recorder, SessionStarted

from ._invariants import check_read, recorded_reads
from ._reads import UnknownSessionError
from ._reexecute import COMPARED

_TEMPLATE = '''"""Regression test exported by `semledger replay {session} --export-test`.

Re-drives the inputs of session {session!r} against {app} and asserts that every
receipt, rejection, started effect and commit hash comes out as it was recorded{reads_doc}.
"""

from semledger.replay import check_recorded_steps

APP = {app!r}

INITIAL = {initial}

STEPS = {steps}
{reads_block}

def test_{name}_replays_as_recorded() -> None:
    check_recorded_steps(APP, INITIAL, STEPS{reads_arg})
'''


def _plain(event: Any) -> dict[str, Any]:
    data = CONVERTER.unstructure(event)
    if data.get("_type") == "Committed":
        data = {k: v for k, v in data.items() if k != "delta"}
    return data


def export_test(recorder: Recorder, session: str, *, app_ref: str | None = None) -> str:
    """The source of a pytest module for `session`."""
    if recorder.head(session) is None:
        raise UnknownSessionError(f"the log has no session {session!r}")
    initial: list[dict[str, Any]] = []
    steps: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    reads: dict[int, list[int | None]] = {}
    for _record, event in recorder.events(session):
        if isinstance(event, SessionStarted):
            app_ref = app_ref or event.app
            reads = recorded_reads(event.params)
        elif isinstance(event, INPUT_CLASSES):
            steps.append((CONVERTER.unstructure(event), []))
        elif isinstance(event, COMPARED):
            (steps[-1][1] if steps else initial).append(_plain(event))
    if app_ref is None:
        raise ValueError(f"session {session!r} names no app; pass --app")
    name = re.sub(r"\W+", "_", session).strip("_").lower() or "session"
    return _TEMPLATE.format(
        session=session,
        app=app_ref,
        name=name,
        initial=pprint.pformat(initial, width=96, sort_dicts=False),
        steps=pprint.pformat(steps, width=96, sort_dicts=False),
        reads_doc=", and that the reads a fuzzer checked hold again" if reads else "",
        reads_block=f"\nREADS = {pprint.pformat(reads, width=96)}\n" if reads else "",
        reads_arg=", READS" if reads else "",
    )


def check_recorded_steps(
    app_ref: str,
    initial: list[dict[str, Any]],
    steps: list[tuple[dict[str, Any], list[dict[str, Any]]]],
    reads: dict[int, list[int | None]] | None = None,
) -> None:
    """Assert that re-driving `steps` against the app reproduces every recorded output,
    and that each read in `reads` (``since`` values by the number of steps before them,
    as a fuzzer counterexample records them) passes `check_read`."""
    from semledger.actors import SessionCore

    from ._apps import load_app

    reads = reads or {}
    core = SessionCore(load_app(app_ref))
    assert [_plain(e) for e in core.initial_outputs()] == initial, "the first build differs"
    for since in reads.get(0, ()):
        check_read(core.runtime, since)
    for number, (event, expected) in enumerate(steps, start=1):
        result = core.step(CONVERTER.structure(event))
        produced = [_plain(e) for e in result.outputs]
        assert produced == expected, f"step {number} ({event['_type']}) differs"
        for since in reads.get(number, ()):
            check_read(core.runtime, since)
