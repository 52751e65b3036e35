"""The fuzzer catches realistic runtime bugs: each test patches one into the runtime (the
source of one function, edited as a reviewer's mutant edits the file) and expects a
counterexample that names the rule the bug breaks."""

from __future__ import annotations

import inspect
import textwrap
from typing import Any

import pytest

from semledger.eventlog import MemoryRecorder
from semledger.examples import counter, todo
from semledger.replay import export_test, fuzz_app, reexecute
from semledger.replay._fuzz import FuzzResult
from semledger.runtime import App, _runtime, _snapshot, _targets, _tree

TODO = ("semledger.examples.todo:app", ["duplicate_semantic_id:todo.item"])
COUNTER = ("semledger.examples.counter:app", [])


def _mutate(
    monkeypatch: pytest.MonkeyPatch, owner: Any, name: str, old: str, new: str
) -> None:
    """Replace `old` (as indented in the file) with `new` in the source of `owner.name`."""
    function = getattr(owner, name)
    source = inspect.getsource(function)
    assert source.count(old) == 1, f"{name} no longer holds the mutated code"
    module = inspect.getmodule(function)
    assert module is not None
    made: dict[str, Any] = {}
    exec(textwrap.dedent(source.replace(old, new)), vars(module), made)
    monkeypatch.setattr(owner, name, made[name])


def _precondition(monkeypatch: pytest.MonkeyPatch, new: str) -> None:
    old = "isinstance(precondition, Exact) and precondition.generation != generation:"
    _mutate(monkeypatch, _targets, "check_precondition", old, new)
    monkeypatch.setattr(_runtime, "check_precondition", _targets.check_precondition)


def _fuzz(app: App[Any, Any], which: tuple[str, list[str]], examples: int = 100) -> FuzzResult:
    ref, allowed = which
    return fuzz_app(app, ref, MemoryRecorder, examples=examples, seed=0, allow_issues=allowed)


def _replayed(app: App[Any, Any], which: tuple[str, list[str]]) -> tuple[str, str | None]:
    """The counterexample's failure, and what `reexecute` of its saved session reproduced."""
    ref, allowed = which
    recorder = MemoryRecorder()
    result = fuzz_app(app, ref, lambda: recorder, examples=100, seed=0, allow_issues=allowed)
    assert result.failure is not None
    assert result.session is not None
    report = reexecute(recorder, result.session, app)
    assert report.ok, report.divergence
    return result.failure, report.reproduced


@pytest.mark.parametrize(("app", "which"), [(counter.app, COUNTER), (todo.app, TODO)])
def test_the_unpatched_examples_give_no_counterexample(
    app: App[Any, Any], which: tuple[str, list[str]]
) -> None:
    assert _fuzz(app, which).failure is None


def test_an_exact_precondition_at_the_current_generation_refused_as_stale_is_caught(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _precondition(
        monkeypatch,
        "isinstance(precondition, Exact) and precondition.generation != generation + 1:",
    )
    failure = _fuzz(counter.app, COUNTER).failure
    assert failure is not None
    assert "precondition at the current generation" in failure
    assert "refused as stale_generation" in failure


def test_an_exact_precondition_accepted_a_generation_late_is_caught(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _precondition(
        monkeypatch,
        "isinstance(precondition, Exact)"
        " and precondition.generation not in (generation, generation - 1):",
    )
    failure = _fuzz(counter.app, COUNTER).failure
    assert failure is not None
    assert "not stale_generation" in failure


BUGS: dict[str, tuple[Any, str, str, str, tuple[str, list[str]], str]] = {
    "a_delta_that_forgets_earlier_removals_is_a_bad_read": (
        _snapshot.Journal,
        "_delta",
        "            removal_order.update(dict.fromkeys(entry.removed))\n",
        "            removal_order = dict.fromkeys(entry.removed)\n",
        TODO,
        "does not have (it does not remove them)",
    ),
    "a_full_read_of_another_snapshot_than_the_current_is_a_bad_read": (
        _snapshot.Journal,
        "read",
        "            return current.full()\n        return self._delta",
        "            return self._base.full()\n        return self._delta",
        COUNTER,
        "that is not the current snapshot",
    ),
    "a_delta_whose_nodes_are_not_in_tree_order_is_a_bad_read": (
        _snapshot.Journal,
        "_delta",
        "        end.sort_in_tree_order(upserted, self._positions)\n",
        "        upserted.reverse()\n",
        TODO,
        "not in the current tree order",
    ),
    "a_receipt_that_hides_outstanding_effects_is_caught": (
        _runtime.AppRuntime,
        "perform",
        "        return Receipt(before, self.generation, bool(self._pending))",
        "        return Receipt(before, self.generation, False)",
        TODO,
        "the receipt says pending_work false, but effects are outstanding",
    ),
}
"""One function's bug each, by what the fuzzer does about it: (owner, function, the code,
the bug, the app fuzzed, what the counterexample says)."""


@pytest.mark.parametrize("bug", BUGS)
def test_a_bug_in_one_runtime_function_is_caught_naming_the_rule(
    monkeypatch: pytest.MonkeyPatch, bug: str
) -> None:
    owner, name, old, new, which, says = BUGS[bug]
    _mutate(monkeypatch, owner, name, old, new)
    app = todo.app if which is TODO else counter.app
    failure = _fuzz(app, which).failure
    assert failure is not None
    assert says in failure


def test_a_delta_that_cannot_be_applied_is_a_bad_read_that_replay_reproduces(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Not a KeyError escaping the check, which replay then raised as a traceback."""
    _mutate(
        monkeypatch,
        _snapshot.Journal,
        "_delta",
        "            touched.update(dict.fromkeys(entry.touched))\n",
        "            touched = dict.fromkeys(entry.touched)\n",
    )
    recorder = MemoryRecorder()
    ref, allowed = TODO
    result = fuzz_app(
        todo.app, ref, lambda: recorder, examples=100, seed=0, allow_issues=allowed
    )
    assert result.failure is not None
    assert result.failure.startswith("InvariantViolation: the delta from ")
    assert "cannot be applied" in result.failure
    assert result.session is not None
    report = reexecute(recorder, result.session, todo.app)
    assert report.ok
    assert report.reproduced == "bad read"


def _acting_on_disabled(monkeypatch: pytest.MonkeyPatch) -> None:
    _mutate(
        monkeypatch,
        _runtime.AppRuntime,
        "perform",
        "        if node.state.disabled:\n            return _reject(",
        "        if False:\n            return _reject(",
    )


def test_an_action_on_a_disabled_target_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    _acting_on_disabled(monkeypatch)
    failure, reproduced = _replayed(counter.app, COUNTER)
    assert "not target_disabled" in failure
    assert reproduced == "wrong answer to an action"  # (replay said identical)


def test_a_test_exported_from_a_wrong_answer_fails_until_the_runtime_is_fixed() -> None:
    """The exported test made the fuzzer's checks but not that of an action's answer: it
    failed saying the recorded failure happened "after the last step", and with FIXED set
    passed while the bug was still there."""
    recorder = MemoryRecorder()
    ref, allowed = COUNTER
    with pytest.MonkeyPatch.context() as patch:
        _acting_on_disabled(patch)
        result = fuzz_app(
            counter.app, ref, lambda: recorder, examples=100, seed=0, allow_issues=allowed
        )
        assert result.session is not None
        source = export_test(recorder, result.session)
        assert "VIOLATION = (" in source
        assert "'answer')" in source
        module: dict[str, Any] = {}
        exec(compile(source, "exported", "exec"), module)
        (test,) = (v for k, v in module.items() if k.startswith("test_"))
        test()  # pins the wrong answer while the bug is there
        fixed: dict[str, Any] = {}
        exec(compile(source.replace("\nFIXED = False\n", "\nFIXED = True\n"), "x", "exec"), fixed)
        (check_fix,) = (v for k, v in fixed.items() if k.startswith("test_"))
        with pytest.raises(AssertionError, match="the recorded wrong answer to an action still"):
            check_fix()
    # The runtime fixed refuses the recorded action, which then never reaches what failed:
    # as for any fix that turns an accepted action away, the test says it cannot check it.
    with pytest.raises(AssertionError, match="the recorded run accepted it, and the app now"):
        check_fix()


def test_a_stale_request_for_an_unknown_target_must_be_refused_as_stale(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    checks = (
        "        stale = check_precondition(precondition, snapshot.generation)\n"
        "        if stale is not None:\n"
        "            return stale\n"
    )
    target = (
        "        resolved = resolve_target(target, snapshot, self._tree.next_node_id)\n"
        "        if isinstance(resolved, Rejection):\n"
        "            return resolved\n"
    )
    _mutate(monkeypatch, _runtime.AppRuntime, "perform", checks + target, target + checks)
    failure = _fuzz(counter.app, COUNTER).failure
    assert failure is not None
    assert "was answered target_not_found, not stale_generation" in failure


def test_a_node_id_reused_after_its_node_was_removed_is_caught(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _mutate(
        monkeypatch,
        _tree.ElementTree,
        "allocate_node_id",
        "        node_id = self._next_node_id\n",
        "        free = self.__dict__.setdefault('_free', [])\n"
        "        if free:\n"
        "            return free.pop()\n"
        "        node_id = self._next_node_id\n",
    )
    _mutate(
        monkeypatch,
        _tree.ElementTree,
        "_unmount",
        "            self._unmounted.append(gone.node_id)\n",
        "            self._unmounted.append(gone.node_id)\n"
        "            self.__dict__.setdefault('_free', []).append(gone.node_id)\n",
    )
    failure, reproduced = _replayed(todo.app, TODO)
    assert "node ids are never reused" in failure
    assert reproduced == "reused node id"  # (replay said identical)


def test_a_journal_that_never_expires_is_caught_by_a_long_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past 64 commits a read since the start is expired: a Full, not a delta."""
    _mutate(
        monkeypatch,
        _snapshot.Journal,
        "record",
        "        if len(self._entries) == JOURNAL_SIZE:\n",
        "        if False:\n",
    )
    ref, allowed = COUNTER
    result = fuzz_app(
        counter.app, ref, MemoryRecorder, examples=100, seed=0, steps=100, allow_issues=allowed
    )
    assert result.failure is not None
    assert "gave Delta, not Full" in result.failure
