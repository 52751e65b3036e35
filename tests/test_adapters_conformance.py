"""The conformance suite: the runtime adapter passes, and each fault of a broken adapter is
named by at least one failing case."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio

from semledger.adapters import (
    ActResult,
    Capabilities,
    ConformanceReport,
    ElementDescription,
    RuntimeSurface,
    Snapshot,
    SnapshotNode,
    SurfaceError,
    build_snapshot,
    create_runtime_surface,
    register_adapter,
    run_conformance,
)
from semledger.adapters._conformance import CASES, load_suite

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from stdio_client import cli_in_process

ROOT = Path(__file__).resolve().parent.parent


class _Broken(RuntimeSurface):
    """The runtime adapter with one deliberate fault (the subclasses)."""


class MissingRefs(_Broken):
    """Snapshot refs that nothing maps back: fresh opaque tokens on every snapshot."""

    calls = 0

    async def snapshot(self, **options: Any) -> Snapshot:
        real = await super().snapshot(**options)
        MissingRefs.calls += 1
        rename = {n.ref: f"x{MissingRefs.calls}-{i}" for i, n in enumerate(real.nodes)}
        nodes = [
            attrs.evolve(
                n, ref=rename[n.ref], parent=None if n.parent is None else rename[n.parent]
            )
            for n in real.nodes
        ]
        return build_snapshot(rename[real.ref], nodes)


class MissingStates(_Broken):
    async def snapshot(self, **options: Any) -> Snapshot:
        real = await super().snapshot(**options)
        return build_snapshot(real.ref, [attrs.evolve(n, states=()) for n in real.nodes])


class HiddenShown(_Broken):
    """Shows the hidden section's Ping button as if it were visible."""

    async def snapshot(self, **options: Any) -> Snapshot:
        real = await super().snapshot(**options)
        if any(n.name == "Ping" for n in real.nodes) or not any(
            n.name == "Show details" for n in real.nodes
        ):
            return real
        root = real.nodes[0]
        ghost = SnapshotNode(ref="r99999", role="button", name="Ping", depth=1, parent=root.ref)
        return build_snapshot(real.ref, [*real.nodes, ghost])


class StaleValues(_Broken):
    """Answers the first snapshot forever."""

    first: Snapshot | None = None

    async def snapshot(self, **options: Any) -> Snapshot:
        if self.first is None:
            self.first = await super().snapshot(**options)
        return self.first

    async def read(self, kind: Any, ref: str | None = None, name: str | None = None) -> object:
        snapshot = await self.snapshot()
        node = next((n for n in snapshot.nodes if n.ref == ref), None)
        if kind == "value" and node is not None:
            return node.value
        return await super().read(kind, ref, name)


class AlwaysOneMatch(_Broken):
    async def locate(self, candidate: Any) -> list[str]:
        return (await super().locate(candidate))[:1]


class ThinDescribe(_Broken):
    async def describe(self, ref: str) -> ElementDescription:
        full = await super().describe(ref)
        return ElementDescription(ref=full.ref, role=full.role, name=full.name)


class SwallowedErrors(_Broken):
    async def act(self, action: str, ref: str | None = None, args: Any = None,
                  ref2: str | None = None) -> ActResult:
        try:
            return await super().act(action, ref, args, ref2)
        except SurfaceError:
            return ActResult()

    async def describe(self, ref: str) -> ElementDescription:
        try:
            return await super().describe(ref)
        except SurfaceError:
            return ElementDescription(ref=ref, role="generic")

    async def read(self, kind: Any, ref: str | None = None, name: str | None = None) -> object:
        try:
            return await super().read(kind, ref, name)
        except SurfaceError:
            return None


class OverClaimed(_Broken):
    def capabilities(self) -> Capabilities:
        return Capabilities(drag=True, upload=True, windows=True, trace=True, screenshot=True,
                            restore=True)


FAULTS: Mapping[str, tuple[type[_Broken], Sequence[str]]] = {
    "missing-refs": (
        MissingRefs, ["counter.snapshot_refs_resolve", "counter.snapshot_refs_stable"]
    ),
    "missing-states": (MissingStates, ["counter.snapshot_states", "todo.checkbox_states"]),
    "hidden-shown": (HiddenShown, ["gallery.hidden_section_leaves_text"]),
    "stale-values": (StaleValues, ["counter.click_increments"]),
    "always-one-match": (AlwaysOneMatch, ["todo.locate_many"]),
    "thin-describe": (ThinDescribe, ["counter.describe_facts"]),
    "swallowed-errors": (
        SwallowedErrors,
        ["counter.navigate_refused", "counter.unknown_ref", "todo.submit_empty_rejected"],
    ),
    "over-claimed": (OverClaimed, ["counter.capabilities_honest"]),
}


def _factory(cls: type[_Broken]) -> Callable[[Mapping[str, Any]], RuntimeSurface]:
    def make(config: Mapping[str, Any]) -> RuntimeSurface:
        base = create_runtime_surface(config)
        return cls(base.app, base.app_ref)

    return make


for _name, (_cls, _cases) in FAULTS.items():
    register_adapter(f"broken-{_name}", _factory(_cls))


async def test_the_runtime_adapter_is_conformant() -> None:
    report = await run_conformance("runtime")
    assert report.conformant, report.to_markdown()
    ids = {r.id for r in report.results}
    assert {"counter.snapshot_refs_stable", "todo.type_and_submit",
            "gallery.hidden_section_leaves_text"} <= ids
    assert report.counts()["skipped"] == 0


@pytest.mark.parametrize("fault", sorted(FAULTS))
async def test_each_fault_is_named_by_a_failing_case(fault: str) -> None:
    _cls, expected = FAULTS[fault]
    report = await run_conformance(f"broken-{fault}", suite="runtime")
    failed = {r.id for r in report.results if r.status == "failed"}
    assert not report.conformant
    assert set(expected) <= failed, report.to_markdown()


async def test_a_third_party_adapter_without_a_suite_is_told_how_to_name_one_from_python() -> None:
    """The message named only the command line's ``--suite``, which cannot load such an
    adapter: it is checked from Python, with ``suite=``."""
    with pytest.raises(KeyError) as refused:
        await run_conformance("broken-missing-refs")
    message = refused.value.args[0]
    assert "name one (suite= in Python, --suite on the command line)" in message
    assert message.endswith("one of atspi, runtime, web")


async def test_a_case_needing_a_missing_capability_is_skipped_with_the_reason() -> None:
    class NoScreenshot(RuntimeSurface):
        def capabilities(self) -> Capabilities:
            return Capabilities(restore=True)

    register_adapter("no-screenshot", _factory(NoScreenshot))  # type: ignore[arg-type]
    report = await run_conformance("no-screenshot", suite="runtime",
                                   only=["counter.screenshot_masks", "counter.click_increments"])
    by_id = {r.id: r for r in report.results}
    assert by_id["counter.screenshot_masks"].status == "skipped"
    assert "screenshot" in (by_id["counter.screenshot_masks"].reason or "")
    assert report.conformant


class HangingSnapshot(_Broken):
    """A snapshot that never returns, once the app has been clicked (as a driver waiting on
    an application that stopped answering)."""

    clicked = False

    async def act(self, action: str, ref: str | None = None, args: Any = None,
                  ref2: str | None = None) -> ActResult:
        self.clicked = True
        return await super().act(action, ref, args, ref2)

    async def snapshot(self, **options: Any) -> Snapshot:
        if self.clicked:
            await trio.sleep_forever()
        return await super().snapshot(**options)


register_adapter("broken-hanging-snapshot", _factory(HangingSnapshot))


class BlockingSnapshot(_Broken):
    """Blocks the thread in its second snapshot, where no cancellation reaches it."""

    async def snapshot(self, **options: Any) -> Any:
        self.snapshots = getattr(self, "snapshots", 0) + 1
        if self.snapshots == 2:
            time.sleep(0.6)
        return await super().snapshot(**options)


register_adapter("broken-blocking-snapshot", _factory(BlockingSnapshot))


async def test_a_case_that_blocked_the_thread_past_its_limit_fails() -> None:
    """The kit had to wait for it, and then reported it passed."""
    report = await run_conformance(
        "broken-blocking-snapshot", suite="runtime", timeout=0.3,
        only=["counter.click_increments"],
    )  # fmt: skip
    (result,) = report.results
    assert result.status == "failed"
    assert result.reason is not None
    assert result.reason.startswith("counter.click_increments took ")
    took = result.reason.split()[2]
    assert float(took) >= 0.6, result.reason  # the sleep in its snapshot
    assert re.fullmatch(r"\d+\.\d{3}", took), result.reason  # to the millisecond
    assert result.reason == (
        f"counter.click_increments took {took} s, past its limit of 0.3 s, in work that"
        " never awaited, which cannot be cut off (a call that blocks the thread, or a loop"
        " that never yields)"
    )


async def test_a_call_that_never_returns_fails_its_case_by_name_and_the_run_goes_on() -> None:
    """The kit waited for ever on an adapter call that never returned: no case result, no
    report. Each case now has a time limit."""
    seen: list[str] = []
    with trio.fail_after(30):
        report = await run_conformance(
            "broken-hanging-snapshot", suite="runtime", timeout=0.5,
            only=["counter.click_increments", "counter.unknown_ref", "todo.locate_none"],
            on_result=lambda result: seen.append(result.id),
        )
    by_id = {r.id: r for r in report.results}
    hung = by_id["counter.click_increments"]
    assert hung.status == "failed"
    assert hung.reason == (
        "counter.click_increments did not finish within 0.5 s: snapshot() had not returned"
    )
    assert 0.5 <= hung.seconds < 5
    assert by_id["counter.unknown_ref"].status == "passed"
    assert by_id["todo.locate_none"].status == "passed"
    assert seen == ["counter.click_increments", "counter.unknown_ref", "todo.locate_none"]


async def test_a_case_timing_out_in_its_own_code_says_no_surface_call_was_waiting() -> None:
    from semledger.adapters._conformance import SUITES, case

    load_suite("runtime")

    @case("counter.sleepy_for_test", suite="test-sleepy", fixture="counter")
    async def sleepy(ctx: Any) -> None:
        """Waits longer than any limit."""
        await trio.sleep_forever()

    SUITES["test-sleepy"] = SUITES["runtime"]
    try:
        report = await run_conformance("runtime", suite="test-sleepy", timeout=0.2)
    finally:
        del SUITES["test-sleepy"]
        CASES[:] = [c for c in CASES if c.suite != "test-sleepy"]
    assert report.results[0].reason == (
        "counter.sleepy_for_test did not finish within 0.2 s, outside any surface call"
        " (in the case's own waiting)"
    )


@pytest.mark.parametrize("timeout", [0, -1.0, float("nan"), "60", True])
async def test_a_timeout_that_is_not_a_positive_number_is_refused(timeout: Any) -> None:
    with pytest.raises(ValueError, match="timeout must be a number of seconds above 0"):
        await run_conformance("runtime", timeout=timeout)


def test_cli_conform_timeout_is_a_number_of_seconds() -> None:
    from semledger._cli import main

    assert main(["surface", "conform", "--adapter", "broken-hanging-snapshot", "--suite",
                 "runtime", "--timeout", "0.5", "--only", "counter.click_increments"]) == 1
    refused = cli_in_process("surface", "conform", "--adapter", "runtime", "--timeout", "never")
    assert refused.returncode == 2
    assert "expected a number of seconds, got 'never'" in refused.stderr


class ActAnswersNone(_Broken):
    """Acts, then answers None instead of an ActResult."""

    async def act(self, action: str, ref: str | None = None, args: Any = None,
                  ref2: str | None = None) -> ActResult:
        await super().act(action, ref, args, ref2)
        return None  # type: ignore[return-value]


class StaleActHash(_Broken):
    """Answers the structural hash from before the action as the hash after it."""

    async def act(self, action: str, ref: str | None = None, args: Any = None,
                  ref2: str | None = None) -> ActResult:
        before = (await self.snapshot()).hash
        result = await super().act(action, ref, args, ref2)
        return attrs.evolve(result, hash=before)


register_adapter("broken-act-answers-none", _factory(ActAnswersNone))
register_adapter("broken-stale-act-hash", _factory(StaleActHash))


async def test_an_act_answering_none_fails_the_cases_that_act() -> None:
    """An act() returning None instead of an ActResult was rated conformant (26/26)."""
    report = await run_conformance(
        "broken-act-answers-none", suite="runtime",
        only=["counter.click_increments", "todo.type_and_submit", "counter.unknown_ref"],
    )
    by_id = {r.id: r for r in report.results}
    assert by_id["counter.click_increments"].status == "failed"
    assert by_id["counter.click_increments"].reason == (
        "act('click', 'r3') returned None, not an ActResult"
    )
    assert by_id["todo.type_and_submit"].reason == (
        "act('type', 'r2', {'text': 'milk'}) returned None, not an ActResult"
    )
    assert by_id["counter.unknown_ref"].status == "passed"  # it raises, as it should


async def test_an_act_hash_from_before_the_action_fails_act_result_hash() -> None:
    """ActResult.hash being the hash from before the action was rated conformant."""
    report = await run_conformance("broken-stale-act-hash", suite="runtime")
    failed = {r.id: r.reason for r in report.results if r.status == "failed"}
    assert list(failed) == ["counter.act_result_hash"]
    reason = failed["counter.act_result_hash"] or ""
    assert reason.startswith("click on Increment answered the hash ")
    assert "(the hash from before the action)" in reason


class CloseRaises(_Broken):
    async def close(self) -> None:
        await super().close()
        raise RuntimeError("close exploded")


class SecondCloseRaises(_Broken):
    """Releases its driver on the first close and trips over the released one on the second."""

    closes = 0

    async def close(self) -> None:
        self.closes += 1
        if self.closes > 1:
            raise RuntimeError("the driver is already released")
        await super().close()


class SecondCloseHangs(_Broken):
    closes = 0

    async def close(self) -> None:
        self.closes += 1
        if self.closes > 1:
            await trio.sleep_forever()
        await super().close()


register_adapter("broken-close-raises", _factory(CloseRaises))
register_adapter("broken-second-close-raises", _factory(SecondCloseRaises))
register_adapter("broken-second-close-hangs", _factory(SecondCloseHangs))


@pytest.mark.parametrize(
    ("adapter", "reason"),
    [
        ("broken-close-raises", "close() raised RuntimeError: close exploded (at "),
        (
            "broken-second-close-raises",
            "close() called a second time raised RuntimeError: the driver is already released",
        ),
        ("broken-second-close-hangs", "close() called a second time did not return within 1 s"),
    ],
)
async def test_a_close_that_is_not_safe_to_call_twice_fails_the_case(
    adapter: str, reason: str
) -> None:
    """close() raising every time was rated conformant: the kit called it once and
    suppressed what it raised, though close must be safe to call twice."""
    report = await run_conformance(
        adapter, suite="runtime", only=["counter.unknown_ref", "counter.screenshot_masks"],
        timeout=1,
    )
    assert [r.status for r in report.results] == ["failed", "failed"]
    assert all((r.reason or "").startswith(reason) for r in report.results), report.results


async def test_a_case_that_failed_and_then_could_not_close_says_both() -> None:
    report = await run_conformance(
        "broken-act-answers-none", suite="runtime", only=["counter.click_increments"]
    )
    assert report.results[0].reason == (
        "act('click', 'r3') returned None, not an ActResult"
    )

    class Both(ActAnswersNone, CloseRaises):
        pass

    register_adapter("broken-act-none-and-close-raises", _factory(Both))
    report = await run_conformance(
        "broken-act-none-and-close-raises", suite="runtime", only=["counter.click_increments"]
    )
    assert (report.results[0].reason or "").startswith(
        "act('click', 'r3') returned None, not an ActResult; close() raised RuntimeError"
    )


async def test_a_skipped_case_never_opened_so_its_close_is_not_checked() -> None:
    class ClosesBadlyWithoutScreenshot(CloseRaises):
        def capabilities(self) -> Capabilities:
            return Capabilities(restore=True)

    register_adapter("broken-close-raises-no-screenshot", _factory(ClosesBadlyWithoutScreenshot))
    report = await run_conformance(
        "broken-close-raises-no-screenshot", suite="runtime", only=["counter.screenshot_masks"]
    )
    assert report.results[0].status == "skipped"


class IgnoresRoot(_Broken):
    async def snapshot(self, **options: Any) -> Snapshot:
        return await super().snapshot(**{**options, "root": None})


class IgnoresMaxNodes(_Broken):
    async def snapshot(self, **options: Any) -> Snapshot:
        return await super().snapshot(**{**options, "max_nodes": None})


class RootWithoutDescendants(_Broken):
    """Gives the root's node alone for snapshot(root=...)."""

    async def snapshot(self, **options: Any) -> Snapshot:
        if options.get("root") is None:
            return await super().snapshot(**options)
        return await super().snapshot(**options, max_nodes=1)


for _fault in (IgnoresRoot, IgnoresMaxNodes, RootWithoutDescendants):
    register_adapter(f"broken-{_fault.__name__}", _factory(_fault))


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        ("IgnoresRoot", "snapshot(root='r9') is rooted at r104, not at the Controls group r9"),
        ("IgnoresMaxNodes", "snapshot(max_nodes=1) gave 95 nodes, expected 1 (the whole"
                            " snapshot's first 1)"),
        ("RootWithoutDescendants", "snapshot(root='r9') gave 1 node, expected 14 (the Controls"
                                   " group's subtree)"),
    ],
)
async def test_a_snapshot_ignoring_root_or_max_nodes_fails(fault: str, reason: str) -> None:
    """A snapshot() that ignored root= and max_nodes= was rated conformant: no case used them."""
    report = await run_conformance(f"broken-{fault}", suite="runtime")
    failed = {r.id: r.reason for r in report.results if r.status == "failed"}
    assert failed == {"gallery.snapshot_root_and_max_nodes": reason}


def _fakes(flag: str) -> type[_Broken]:
    """Claims `flag` and answers its actions as if done, doing nothing."""
    from semledger.adapters import CAPABILITY_GATES

    class Fakes(_Broken):
        def capabilities(self) -> Capabilities:
            return attrs.evolve(super().capabilities(), **{flag: True})

        async def act(self, action: str, ref: str | None = None, args: Any = None,
                      ref2: str | None = None) -> ActResult:
            if action in CAPABILITY_GATES[flag]:
                return ActResult()
            return await super().act(action, ref, args, ref2)

    return Fakes


for _flag in ("dialogs", "frames", "windows"):
    register_adapter(f"broken-fakes-{_flag}", _factory(_fakes(_flag)))


@pytest.mark.parametrize(
    ("flag", "reason"),
    [
        ("dialogs", "claims 'dialogs' but dialog with no dialog open returned normally:"
                    " expected DialogError"),
        ("frames", "claims 'frames' but switchFrame to a frame the counter lacks returned"
                   " normally: expected SurfaceError"),
        ("windows", "claims 'windows' but switchWindow to a window it lacks returned normally:"
                    " expected SurfaceError"),
    ],
)
async def test_a_claimed_capability_whose_actions_do_nothing_is_not_honest(
    flag: str, reason: str
) -> None:
    """An adapter claiming dialogs, frames and windows whose actions silently did nothing
    was rated conformant: capabilities_honest failed only a refusal."""
    report = await run_conformance(
        f"broken-fakes-{flag}", suite="runtime", only=["counter.capabilities_honest"]
    )
    assert (report.results[0].status, report.results[0].reason) == ("failed", reason)


class _RenamedRefs(_Broken):
    """Shows the runtime's refs under names of its own choosing (`_rename`)."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.outer: dict[str, str] = {}  # the runtime's ref -> the one shown

    def _rename(self, refs: list[str]) -> None:
        raise NotImplementedError

    async def snapshot(self, **options: Any) -> Snapshot:
        real = await super().snapshot(**options)
        self._rename([n.ref for n in real.nodes])
        nodes = [
            attrs.evolve(n, ref=self.outer[n.ref],
                         parent=None if n.parent is None else self.outer[n.parent])
            for n in real.nodes
        ]
        return build_snapshot(self.outer[real.ref], nodes)

    async def act(self, action: str, ref: str | None = None, args: Any = None,
                  ref2: str | None = None) -> ActResult:
        inner = {shown: real for real, shown in self.outer.items()}
        return await super().act(action, inner.get(ref or "", ref), args, ref2)


class PositionalRefs(_RenamedRefs):
    """A node's ref is its position in the snapshot."""

    def _rename(self, refs: list[str]) -> None:
        self.outer = {ref: f"p{i}" for i, ref in enumerate(refs)}


class RecycledRefs(_RenamedRefs):
    """A ref whose element is gone is given to the next new element."""

    def _rename(self, refs: list[str]) -> None:
        self.outer = {ref: shown for ref, shown in self.outer.items() if ref in refs}
        free = (f"n{i}" for i in range(10_000) if f"n{i}" not in self.outer.values())
        for ref in refs:
            if ref not in self.outer:
                self.outer[ref] = next(free)


register_adapter("broken-positional-refs", _factory(PositionalRefs))
register_adapter("broken-recycled-refs", _factory(RecycledRefs))


@pytest.mark.parametrize(
    ("adapter", "reason"),
    [
        ("broken-positional-refs",
         "ref p3 named listitem 'alpha' and after alpha was deleted names listitem 'beta'"),
        ("broken-recycled-refs",
         "ref n7 named listitem 'alpha' and after delta was added names listitem 'delta'"),
    ],
)
async def test_a_ref_that_names_another_element_in_a_later_snapshot_fails(
    adapter: str, reason: str
) -> None:
    """Refs that were snapshot positions were rated conformant (26/26), though the MCP bridge
    keeps an agent's node id by ref: after a deletion, the agent's retry acted on another
    todo."""
    report = await run_conformance(adapter, suite="runtime", only=["todo.refs_never_reused"])
    assert (report.results[0].status, report.results[0].reason) == ("failed", reason)


def test_every_case_lists_its_requirements_and_is_named_after_its_fixture() -> None:
    load_suite("runtime")  # registers its cases, whichever tests ran before
    runtime_cases = [c for c in CASES if c.suite == "runtime"]
    assert len(runtime_cases) >= 20
    for item in runtime_cases:
        assert item.id.split(".")[0] == item.fixture
        assert item.description


def test_reports_render_as_json_and_markdown() -> None:
    from semledger.adapters import CaseResult

    report = ConformanceReport("x", "runtime", (CaseResult("a.b", "failed", "it | broke"),))
    assert report.to_json()["conformant"] is False
    assert "it \\| broke" in report.to_markdown()


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    """`semledger ARGS` as a child process, for the real process's exit status: the other
    commands, which check only what they print and their status, run in-process."""
    return subprocess.run(
        [sys.executable, "-m", "semledger", *args],
        cwd=ROOT, capture_output=True, text=True, check=False, timeout=120,
    )


def test_cli_conform_exits_zero_for_a_conformant_adapter(tmp_path: Path) -> None:
    report = tmp_path / "report.md"
    result = cli_in_process(
        "surface", "conform", "--adapter", "runtime", "--json", "--report", str(report)
    )
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["conformant"] is True
    assert out["counts"]["failed"] == 0
    assert "conformant" in report.read_text()


def test_cli_conform_only_and_bad_usage() -> None:
    only = cli_in_process("surface", "conform", "--adapter", "runtime", "--only",
                          "counter.unknown_ref,todo.locate_many", "--json")
    assert only.returncode == 0, only.stderr
    assert [r["id"] for r in json.loads(only.stdout)["results"]] == [
        "counter.unknown_ref", "todo.locate_many",
    ]  # fmt: skip
    assert cli_in_process("surface", "conform", "--adapter", "nobody").returncode == 2
    no_case = cli_in_process("surface", "conform", "--adapter", "runtime", "--only", "no.case,x")
    assert no_case.returncode == 2
    assert no_case.stderr.startswith(
        "semledger: no case 'no.case', 'x' in suite 'runtime'; its cases: counter."
    )
    assert "todo.locate_many" in no_case.stderr
    no_suite = cli_in_process("surface", "conform", "--adapter", "runtime", "--suite", "nope")
    assert (no_suite.returncode, no_suite.stderr) == (
        2, "semledger: no conformance suite 'nope'; known: atspi, runtime, web\n"
    )
    assert _cli("surface", "conform").returncode == 2


def test_cli_conform_exits_one_for_a_non_conformant_adapter() -> None:
    # The broken adapters are registered in this process, so call the CLI's entry point.
    from semledger._cli import main

    assert main(["surface", "conform", "--adapter", "broken-over-claimed", "--suite", "runtime",
                 "--only", "counter.capabilities_honest,counter.click_increments"]) == 1
