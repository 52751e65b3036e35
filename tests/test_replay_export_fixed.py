"""A test exported from a failing session checks a fix once its FIXED is set: the recorded
failure no longer happens and the invariants hold, whatever hashes the fix changed; inputs
the fix no longer lets through fail it, not pass it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from semledger.actors._str_hash import str_hashing
from semledger.eventlog import CONVERTER, EffectCompleted, MemoryRecorder
from semledger.replay import check_recorded_steps, export_test

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from tests_logged import logged

COUNTER = "semledger.examples.counter:app"
BUGGY = "tests_buggy:app"
"""Its Reset divides by zero."""
INCREMENT, RESET = "3", "5"
"""The counter's node ids of those buttons."""


def exported(clicks: list[str], params: dict[str, Any] | None = None) -> str:
    recorder = MemoryRecorder()
    return export_test(recorder, logged(recorder, BUGGY, clicks, params))


def run(source: str, *, app_ref: str | None = None, fixed: bool = False) -> None:
    """Run the exported module's test in this process, against `app_ref` if given."""
    if app_ref is not None:
        source = source.replace(f"APP = {BUGGY!r}", f"APP = {app_ref!r}")
    if fixed:
        assert "\nFIXED = False\n" in source
        source = source.replace("\nFIXED = False\n", "\nFIXED = True\n")
    module: dict[str, Any] = {}
    exec(compile(source, "exported", "exec"), module)
    (test,) = (v for k, v in module.items() if k.startswith("test_"))
    test()


def without_targets(source: str) -> str:
    """`source` as a module exported before it recorded TARGETS checks it."""
    assert "\nTARGETS = " in source
    return source.replace("\nTARGETS = ", "\nTARGETS = None and ")


def test_a_crash_export_with_fixed_set_passes_on_the_fix_whose_hashes_differ() -> None:
    source = exported([INCREMENT, INCREMENT, RESET])
    assert "CRASH = (3, 'ZeroDivisionError')" in source
    run(source)  # pins the crash
    with pytest.raises(AssertionError, match=r"^step 2 \(ActionRequested\) differs: "):
        run(source, app_ref="tests_variant:app")  # its view differs from a count of 2 on
    run(source, app_ref="tests_variant:app", fixed=True)
    run(source, app_ref=COUNTER, fixed=True)


def test_a_crash_export_with_fixed_set_fails_while_the_crash_still_happens() -> None:
    source = exported([INCREMENT, RESET])
    with pytest.raises(AssertionError, match=r"^step 2 \(ActionRequested\) raised") as failed:
        run(source, fixed=True)
    assert "ZeroDivisionError: the recorded crash still happens" in str(failed.value)


def test_a_crash_export_with_fixed_set_fails_on_a_step_the_fix_no_longer_lets_through() -> None:
    """A fix that shifted generations, or dropped the node an input names, must not pass
    the test by rejecting the inputs before they reach what crashed."""
    source = exported([INCREMENT, INCREMENT, RESET])
    with pytest.raises(AssertionError, match=r"^step 3 \(ActionRequested\): the recorded") as stale:
        run(source, app_ref="tests_fixed_variants:hidden", fixed=True)
    said = str(stale.value)
    assert "stale_generation" in said
    assert "export the test again from a run of the fixed app" in said
    with pytest.raises(AssertionError, match=r"^step 3 \(ActionRequested\): the recorded") as gone:
        run(source, app_ref="tests_fixed_variants:no_reset", fixed=True)
    assert "node 5 was counter.reset, and node 5 is now counter.step" in str(gone.value)
    with pytest.raises(AssertionError, match=r"^step 3 \(ActionRequested\): the recorded") as old:
        run(without_targets(source), app_ref="tests_fixed_variants:no_reset", fixed=True)
    assert "action_unavailable" in str(old.value)  # node 5 is now the step field


def test_a_crash_export_with_fixed_set_fails_where_a_node_id_now_names_another_node() -> None:
    """A change that gave the recorded node id to another node (a Help button before
    Reset) passed the test with the bug still there: the id now clicked Help."""
    source = exported([INCREMENT, RESET])
    assert "TARGETS = {1: 'counter.increment', 2: 'counter.reset'}" in source
    with pytest.raises(AssertionError, match=r"^step 2 \(ActionRequested\): the recorded") as moved:
        run(source, app_ref="tests_fixed_variants:help_first", fixed=True)
    said = str(moved.value)
    assert "node 5 was counter.reset, and node 5 is now counter.help" in said, said
    assert "export the test again from a run of the fixed app" in said
    run(source, app_ref=COUNTER, fixed=True)  # the ids the same: it checks the fix
    run(without_targets(source), app_ref=COUNTER, fixed=True)


def test_a_crash_export_with_fixed_set_still_crashing_does_not_blame_str_hashing() -> None:
    """The recorded crash still happening is the bug still there: the note that how str was
    hashed "alone may explain this divergence" only led astray."""
    other = {"seed": None, "probe": str_hashing()["probe"] + 1}
    source = exported([INCREMENT, RESET], {"str_hash": other})
    assert "str_hash=STR_HASH" in source
    with pytest.raises(AssertionError, match="the recorded crash still happens") as failed:
        run(source, fixed=True)
    assert getattr(failed.value, "__notes__", []) == []


def test_a_step_refused_as_disabled_is_said_to_meet_a_disabled_node() -> None:
    """It was said to meet other "generations or node ids", which it did not."""
    source = exported([INCREMENT, RESET])
    with pytest.raises(AssertionError, match=r"^step 2 \(ActionRequested\): the recorded") as off:
        run(source, app_ref="tests_fixed_variants:reset_disabled", fixed=True)
    said = str(off.value)
    assert "(target_disabled: " in said, said
    assert "the node it acts on is now disabled" in said, said
    assert "generations or node ids" not in said
    assert "export the test again from a run of the fixed app" in said


def test_the_exported_call_takes_one_argument_a_line() -> None:
    """Its one line of arguments ran to 150 characters, past any line length."""
    source = exported([INCREMENT, RESET], {"str_hash": str_hashing()})
    call = source[source.index("    check_recorded_steps(") :]
    assert max(len(line) for line in call.splitlines()) <= 100, call
    assert "        fixed=FIXED,\n" in call
    run(source)


def test_a_crash_export_with_fixed_set_fails_on_another_exception() -> None:
    source = exported([INCREMENT, RESET])
    with pytest.raises(AssertionError, match=r"^step 2 \(ActionRequested\) raised ResetError"):
        run(source, app_ref="tests_drifted:raising_reset", fixed=True)


def test_a_view_issue_export_with_fixed_set_passes_once_the_issue_is_gone() -> None:
    """The recorded fuzz check (the view's issues) must hold where it failed."""
    recorder = MemoryRecorder()
    violated = {"step": 2, "check": "issues"}
    fuzz = {"issues": True, "allowed_issues": [], "violated": violated, "failure": "two ids"}
    session = logged(recorder, "tests_duplicated:app", [INCREMENT, INCREMENT], {"fuzz": fuzz})
    source = export_test(recorder, session).replace("tests_duplicated:app", BUGGY)
    assert "VIOLATION = (2, 'issues')" in source
    run(source, app_ref="tests_duplicated:app")
    run(source, app_ref=COUNTER, fixed=True)
    with pytest.raises(AssertionError, match="the recorded view issue still happens"):
        run(source, app_ref="tests_duplicated:app", fixed=True)


def test_the_docstring_says_how_to_check_a_fix() -> None:
    source = exported([INCREMENT, RESET])
    docstring = " ".join(source.split('"""')[1].split())
    assert "set FIXED = True below" in docstring
    assert "export the test again from a run of the fixed app" in docstring
    assert "invert" not in docstring
    assert "FIXED = False" not in exported([INCREMENT, INCREMENT])  # nothing failed


def test_a_crash_export_with_fixed_set_only_warns_where_just_a_node_label_changed() -> None:
    """A label often shows what the model holds (`Reset (2)`), which a fix changes: the
    same node with another label is no other node, and the fix checked passes."""
    recorder = MemoryRecorder()
    session = logged(recorder, "tests_fixed_variants:counting_reset", [INCREMENT, RESET])
    source = export_test(recorder, session)
    assert "TARGETS = {1: 'counter.increment', 2: \"button 'Reset (1)'\"}" in source
    with pytest.warns(UserWarning, match=r"node 5 was button 'Reset \(1\)', and node 5 is now"):
        run(
            source.replace("counting_reset'", "counting_reset_fixed'"),
            app_ref="tests_fixed_variants:counting_reset_fixed",
            fixed=True,
        )
    with pytest.raises(AssertionError, match="the recorded crash still happens"):
        run(source, app_ref="tests_fixed_variants:counting_reset", fixed=True)
    moved = source.replace("counting_reset'", "counting_reset_after_help'")
    with pytest.raises(AssertionError, match=r"node 5 is now button 'Help', while node 6 is"):
        run(moved, fixed=True)  # (not fixed: the Help button took Reset's node id)


def test_a_node_whose_name_another_node_shared_is_not_taken_for_moved() -> None:
    """Two buttons shown alike (a `Delete` on every row): that another node now has the
    clicked one's recorded name is no sign its id moved, and a real fix failed for it."""
    recorder = MemoryRecorder()
    session = logged(recorder, "tests_fixed_variants:counting_reset_with_twin", [INCREMENT, RESET])
    source = export_test(recorder, session)
    assert "TARGETS = {1: 'counter.increment'}" in source
    run(source.replace("counting_reset_with_twin'", "counting_reset_with_twin_fixed'"), fixed=True)


def test_fixed_set_fails_where_the_recording_read_a_generation_the_fix_has_not_reached() -> None:
    """A read since a generation the app has not reached answers a Full read, which passes
    its check: the fix changed which steps commit, and the read no longer checks what the
    recording's did."""
    source = exported([INCREMENT, INCREMENT, RESET], {"fuzz": {"reads": [[1, 5]]}})
    assert "READS = {1: [5]}" in source
    with pytest.raises(AssertionError) as refused:
        run(source, app_ref=COUNTER, fixed=True)
    assert str(refused.value).startswith(
        "step 1 (ActionRequested): the recording read since generation 5, which the app, at 2,"
        " has not reached: the fix changed what the recorded inputs meet (the generations the"
        " app commits, which they name)"
    ), refused.value


def test_fixed_set_fails_on_an_effect_the_fixed_app_has_not_started() -> None:
    """The recording completed effect 1; an app that starts none no longer meets the
    inputs that failed, and fails saying so rather than raising on the unknown effect."""
    completed = CONVERTER.unstructure(EffectCompleted(1, {"type": "Increment"}))
    with pytest.raises(AssertionError) as failed:
        check_recorded_steps(COUNTER, [], [(completed, [])], fixed=True)
    assert str(failed.value).startswith(
        "step 1 (EffectCompleted): the recording completed effect 1, which the app has not"
        " started: the fix changed what the recorded inputs meet (the effects the app starts)"
    ), failed.value
