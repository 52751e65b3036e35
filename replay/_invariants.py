"""The generation invariants every session must keep, checked step by step.

Cheap enough to run on every step of a replay: snapshot hashes are maintained incrementally,
so "advanced exactly when the snapshot changed" costs two hash comparisons.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

import attrs

from semledger.eventlog import ActionRequested
from semledger.runtime import (
    ActionKind,
    AppRuntime,
    Delta,
    ErrorCode,
    Full,
    Receipt,
    Rejection,
    SemanticsNode,
    SemanticsSnapshot,
    Unchanged,
    apply_delta,
)
from semledger.runtime._ids import semantic_id_problem
from semledger.runtime._wire import ISSUE_KINDS, encode_issue, encode_read

FAILURES = {
    "generation": "generation invariant violation",
    "issues": "view issue",
    "read": "bad read",
    "answer": "wrong answer to an action",
    "node_id": "reused node id",
}
"""What an `InvariantViolation` can say broke (its `check`: the generation invariants,
`GenerationChecker`; the view's issues, `check_issues`; a read, `check_read`; an action's
answer, `check_answer`; node ids, `NodeIdChecker`), and what a failure of each is called."""
CHECKS = tuple(FAILURES)


class InvariantViolation(AssertionError):  # noqa: N818 - it reads as what it reports
    """Raised when a step broke a generation invariant; `check` says which of `CHECKS`
    (None: another), so that a fuzzer counterexample can record what failed."""

    def __init__(self, message: str, check: str | None = None) -> None:
        super().__init__(message)
        self.check = check


Outcome = Receipt | Rejection | dict[str, Any] | None
"""What an input answered: an action's receipt or rejection, a diagnostics event's answer,
None for a message, a tick or an effect's result."""


def _snapshot(_instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    _check_snapshot(attribute.name, value)


def _check_snapshot(name: str, value: object) -> None:
    if not isinstance(value, SemanticsSnapshot):
        raise TypeError(
            f"{name}: expected a SemanticsSnapshot (runtime.snapshot), got {_shown(value)}"
        )


@attrs.define
class GenerationChecker:
    """Checks the generation rules of SPEC §3 input by input: feed `check` the committed
    snapshot after each input, with the input's outcome (an action's `Receipt` or
    `Rejection`, a diagnostics event's answer, None for a message, tick or effect result).

    An input commits once (an action's transaction; a delivered message drains, then
    commits), so between two checks the generation advances by exactly one when the public
    snapshot changed and not at all when it did not, never by more; a rejection changes
    nothing, and a receipt names the generations before and after it."""

    previous: SemanticsSnapshot = attrs.field(validator=_snapshot)
    steps: int = 0

    def check(self, current: SemanticsSnapshot, outcome: Outcome = None) -> None:
        """Raise `InvariantViolation` (check ``"generation"``) if the input that led from
        the last snapshot to `current` broke a rule; ``TypeError`` for arguments of
        another kind."""
        _check_snapshot("current", current)
        if not isinstance(outcome, Receipt | Rejection | dict | None):
            raise TypeError(
                "outcome: expected a Receipt, a Rejection, a diagnostics answer (a dict) or"
                f" None, got {_shown(outcome)}"
            )
        self.steps += 1
        broken = _broken(self.previous, current, outcome)
        if broken is not None:
            raise InvariantViolation(f"step {self.steps}: {broken}", "generation")
        self.previous = current


def _broken(before: SemanticsSnapshot, after: SemanticsSnapshot, outcome: Outcome) -> str | None:
    """Which rule the step from `before` to `after` broke, if any."""
    old, new = before.generation, after.generation
    if new < old:
        return f"the generation went back from {old} to {new}"
    changed = after.hash != before.hash
    if new > old + 1:
        return f"the generation advanced by {new - old}, from {old} to {new}, in one input"
    if new != old and not changed:
        return f"generation {new} but nothing public changed"
    if changed and new == old:
        return (
            f"the snapshot changed without a new generation ({_changes(before, after)};"
            f" still generation {new})"
        )
    if isinstance(outcome, Rejection) and new != old:
        return f"a {outcome.code.value} rejection advanced the generation"
    if isinstance(outcome, Receipt) and (outcome.before, outcome.after) != (old, new):
        return (
            f"the receipt says generation {outcome.before} to {outcome.after}, but the"
            f" snapshot went from {old} to {new}"
        )
    return None


def _changes(before: SemanticsSnapshot, after: SemanticsSnapshot) -> str:
    """What differs between two snapshots: ``nodes 4, 7 changed; focused 3 -> 5``."""
    ids = sorted(
        node_id
        for node_id in {*before.nodes.keys(), *after.nodes.keys()}
        if before.nodes.get(node_id) != after.nodes.get(node_id)
    )
    said = [f"nodes {', '.join(map(str, ids))} changed"] if ids else []
    for name in ("root", "focused"):
        was, now = getattr(before, name), getattr(after, name)
        if was != now:
            said.append(f"{name} {was} -> {now}")
    if before.issues != after.issues:
        said.append("issues changed")
    return "; ".join(said) or "the hash changed"


def _shown(value: object) -> str:
    return f"{type(value).__name__} {value!r:.60}"


_FIRST = frozenset(
    {ErrorCode.INVALID_ARGUMENTS, ErrorCode.HOST_CLOSED, ErrorCode.REENTRANT_DISPATCH}
)
"""The rejections SPEC 2.6 checks before the generation: after one, nothing else is known."""
_TARGETED = frozenset(
    {
        ErrorCode.STALE_GENERATION,
        ErrorCode.TARGET_AMBIGUOUS,
        ErrorCode.TARGET_NOT_FOUND,
        ErrorCode.TARGET_DISABLED,
    }
)


def check_answer(
    before: SemanticsSnapshot,
    event: ActionRequested,
    outcome: object,
    pending_work: bool,
    where: str,
) -> None:
    """The answer to an action request keeps SPEC 2.6, as far as the snapshot the action
    was performed on (`before`) decides it: an exact precondition at another generation is
    ``stale_generation`` {expected, current}, checked before the target, and one at the
    current generation is not; a semantic id or node id that names no node is
    ``target_not_found`` (two nodes: ``target_ambiguous``); a disabled node is
    ``target_disabled``; an action the node does not offer is ``action_unavailable``. A
    receipt's ``pending_work`` says whether effects are outstanding (`pending_work`).

    `event` is the request as logged; `outcome` must be a receipt or a rejection. Raises
    `InvariantViolation` ("answer")."""
    if not isinstance(outcome, Receipt | Rejection):
        raise InvariantViolation(f"an action answered {outcome!r}", "answer")
    request = {"target": event.target, "action": event.action, "precondition": event.precondition}
    broken = _wrong_answer(before, request, outcome, pending_work)
    if broken is not None:
        raise InvariantViolation(f"{where}: {broken}", "answer")


def _wrong_answer(
    before: SemanticsSnapshot, request: dict[str, Any], outcome: Outcome, pending_work: bool
) -> str | None:
    if isinstance(outcome, Receipt) and outcome.pending_work != pending_work:
        return (
            f"the receipt says pending_work {str(outcome.pending_work).lower()}, but effects are"
            f" {'' if pending_work else 'not '}outstanding (SPEC 3)"
        )
    code = outcome.code if isinstance(outcome, Rejection) else None
    if code in _FIRST or not isinstance(outcome, Receipt | Rejection):
        return None
    answered = "a receipt" if code is None else code.value
    current = before.generation
    precondition = request["precondition"]
    if precondition.get("kind") == "exact":
        expected = int(precondition["generation"])
        if expected != current:
            if not isinstance(outcome, Rejection) or code is not ErrorCode.STALE_GENERATION:
                return (
                    f"an exact precondition at generation {expected}, while {current} is"
                    f" current, was answered {answered}, not stale_generation (SPEC 2.6: the"
                    " generation is checked before the target)"
                )
            details = {"expected": str(expected), "current": str(current)}
            if outcome.details != details:
                return f"stale_generation with details {outcome.details!r}, not {details!r}"
            return None
    if code is ErrorCode.STALE_GENERATION:
        return (
            f"a {precondition.get('kind')} precondition at the current generation {current}"
            " was refused as stale_generation"
        )
    node, must = _target_of(before, request["target"])
    if node is not None and node.state.disabled:
        must = ErrorCode.TARGET_DISABLED
    elif node is not None and ActionKind(request["action"]["kind"]) not in node.actions:
        must = ErrorCode.ACTION_UNAVAILABLE
    if must is not None and code is not must:
        return f"{_named(request['target'], node)} was answered {answered}, not {must.value}"
    if must is None and node is not None and code in _TARGETED:
        return f"{_named(request['target'], node)}, enabled, was answered {answered}"
    return None


def _target_of(
    snapshot: SemanticsSnapshot, target: dict[str, Any]
) -> tuple[SemanticsNode | None, ErrorCode | None]:
    """The node a semantic id or node id target names, or the rejection it must get; a path
    gives neither (the fuzzer's own resolution would be the runtime's again)."""
    kind = target.get("kind")
    if kind == "node_id":
        node = snapshot.node(int(target["id"]))
        return node, None if node is not None else ErrorCode.TARGET_NOT_FOUND
    if kind == "semantic_id":
        found = snapshot.find(target["id"])
        if len(found) > 1:
            return None, ErrorCode.TARGET_AMBIGUOUS
        if not found:
            return None, ErrorCode.TARGET_NOT_FOUND
        return snapshot.nodes[found[0]], None
    return None, None


def _named(target: dict[str, Any], node: SemanticsNode | None) -> str:
    said = f"the {target.get('kind')} target {target.get('id')!r}"
    if node is None:
        return said
    state = "disabled " if node.state.disabled else ""
    offers = ", ".join(kind.value for kind in node.actions) or "nothing"
    return f"{said} ({state}node {node.node_id}, offering {offers})"


@attrs.define
class NodeIdChecker:
    """Node ids are never reused (SPEC 3): once the element a node id was given to is
    unmounted, no later snapshot shows that id. A node that leaves the snapshot may be
    hidden (or behind a modal), its element still mounted, and come back with its id:
    `mounted` (the runtime's mounted node ids, asked only when a node left or while one is
    hidden) tells the two apart."""

    shown: frozenset[int] = frozenset()
    hidden: frozenset[int] = frozenset()
    removed: set[int] = attrs.Factory(set)

    def check(
        self, snapshot: SemanticsSnapshot, mounted: Callable[[], Iterable[int]], where: str
    ) -> None:
        ids = frozenset(snapshot.nodes.keys())
        reused = sorted(ids & self.removed)
        if reused:
            raise InvariantViolation(
                f"{where}: node id {', '.join(map(str, reused))} was given to a new node after"
                " its element was removed (SPEC 3: node ids are never reused)",
                "node_id",
            )
        out = (self.shown | self.hidden) - ids
        if out:
            alive: frozenset[int] = frozenset(mounted())
            self.removed |= out - alive
            self.hidden = out & alive
        self.shown = ids


def mounted_node_ids(runtime: AppRuntime[Any, Any]) -> list[int]:
    """The node ids of the elements `runtime` has mounted, hidden ones too, and its synthetic
    root's (which has no element): what `NodeIdChecker` asks about a node that left."""
    state = runtime.checkpoint()
    return [element[1] for element in state["elements"]] + [state["synthetic_id"]]


def allowed_issue(text: str) -> str:
    """`text` if it names issues a view may report on purpose: ``KIND`` (every issue of that
    kind) or ``KIND:SEMANTIC_ID`` (those about that semantic id). Raises ``ValueError``
    saying what was expected."""
    kind, colon, semantic_id = text.partition(":")
    if kind not in ISSUE_KINDS or (colon and not semantic_id):
        raise ValueError(
            f"{text!r}: expected KIND or KIND:SEMANTIC_ID, KIND one of {', '.join(ISSUE_KINDS)}"
        )
    problem = semantic_id_problem(semantic_id) if colon else None
    if problem is not None:  # no view can report an issue about it: allowing it does nothing
        raise ValueError(f"{text!r}: {semantic_id!r} is no semantic id: {problem}")
    return text


def check_issues(
    snapshot: SemanticsSnapshot, where: str, allowed: frozenset[str] = frozenset()
) -> None:
    """The view reports no issues (a semantic id on two nodes, a relation to none) but the
    `allowed` ones (see `allowed_issue`): each is a bug of the app's, which agents would meet
    as an ambiguous or missing target, unless the app means it (an id every row of a list
    shares, say)."""
    reported = []
    for issue in snapshot.issues:
        encoded = encode_issue(issue)
        kind = encoded["kind"]
        if kind not in allowed and f"{kind}:{encoded['semantic_id']}" not in allowed:
            reported.append(encoded)
    if reported:
        said = "; ".join(map(_issue, reported))
        first = reported[0]
        raise InvariantViolation(
            f"{where}: the view reports {said} (if the app means it, allow it:"
            f" {first['kind']}:{first['semantic_id']})",
            "issues",
        )


def _issue(encoded: dict[str, Any]) -> str:
    """``duplicate_semantic_id (semantic_id='save', nodes=['3', '7'])``."""
    details = ", ".join(f"{key}={value!r}" for key, value in encoded.items() if key != "kind")
    return f"{encoded['kind']} ({details})"


JOURNAL = 64
"""How many generations behind a read's since may be and still be answered a delta (SPEC
2.5): one more is expired, a Full."""


def check_read(runtime: AppRuntime[Any, Any], since: int | None) -> None:
    """Read `since` from `runtime` and check the answer against its current snapshot.

    ``Unchanged`` exactly when `since` is the current generation; else, as SPEC 2.5 says, a
    ``Delta`` from `since` when the journal still holds it, one that leads to the current
    snapshot with its nodes in the current tree order, and a ``Full`` when it does not (no
    `since`, an expired or a future one), the current snapshot's. A delta leads there when
    the snapshot it builds has the current one's hash, not just its tree: one that forgets
    a removal leaves the node behind, out of the tree. A delta that cannot be applied is a
    bad read too (`InvariantViolation`).
    """
    result = runtime.read(since)
    current = runtime.generation
    if isinstance(result, Rejection):
        raise InvariantViolation(f"read(since={since}) rejected: {result.code.value}", "read")
    if since == current:
        expected: type = Unchanged
    elif (
        since is not None
        and since >= current - JOURNAL
        and runtime.snapshot_at(since) is not None
    ):
        expected = Delta
    else:
        expected = Full
    if not isinstance(result, expected):
        raise InvariantViolation(
            f"read(since={since}) at {current} gave {type(result).__name__}, not"
            f" {expected.__name__}",
            "read",
        )
    live = runtime.snapshot
    if isinstance(result, Unchanged) and result.generation != current:
        raise InvariantViolation(
            f"read(since={since}) at {current} gave Unchanged at {result.generation}", "read"
        )
    if isinstance(result, Full) and encode_read(result) != encode_read(live.full()):
        raise InvariantViolation(
            f"read(since={since}) at {current} gave a Full (of generation"
            f" {result.generation}) that is not the current snapshot",
            "read",
        )
    if isinstance(result, Delta):
        start = runtime.snapshot_at(result.from_generation)
        if result.from_generation != since or start is None:
            raise InvariantViolation(
                f"read(since={since}) gave a delta from {result.from_generation}", "read"
            )
        try:
            rebuilt = apply_delta(start, result)
            leads = encode_read(rebuilt.full()) == encode_read(live.full())
        except Exception as error:  # a delta naming nodes it lacks: a bad read, not a crash
            raise InvariantViolation(
                f"the delta from {since} cannot be applied to generation {since}:"
                f" {type(error).__name__}: {error}",
                "read",
            ) from error
        if not leads:
            raise InvariantViolation(
                f"the delta from {since} does not lead to generation {current}", "read"
            )
        ordered = list(result.upserted)
        live.sort_in_tree_order(ordered)
        if ordered != list(result.upserted):
            raise InvariantViolation(
                f"the delta from {since} upserts nodes"
                f" {', '.join(str(n.node_id) for n in result.upserted)}, not in the current"
                f" tree order ({', '.join(str(n.node_id) for n in ordered)}; SPEC 2.5)",
                "read",
            )
        if rebuilt.hash != live.hash:  # full() walks from the root: orphans left are unseen
            left = sorted(set(rebuilt.nodes) - set(live.nodes))
            raise InvariantViolation(
                f"the delta from {since} leaves nodes {', '.join(map(str, left))} that"
                f" generation {current} does not have (it does not remove them)"
                if left
                else f"the delta from {since} does not lead to generation {current}'s hash",
                "read",
            )


def recorded_issue_check(params: dict[str, Any]) -> frozenset[str] | None:
    """The issues a fuzzer counterexample's view was allowed to report, as `fuzz_app` saved
    them in the session's params; None for a session whose view was not checked for issues
    (any other), which replay holds to none of it. Entries that are not text are ignored."""
    fuzz = params.get("fuzz")
    if not isinstance(fuzz, dict) or fuzz.get("issues") is not True:
        return None
    allowed = fuzz.get("allowed_issues")
    if not isinstance(allowed, list):
        return frozenset()
    return frozenset(a for a in allowed if isinstance(a, str))


@attrs.frozen
class RecordedViolation:
    """How a fuzzer counterexample failed, when a check failed rather than the app raising
    (that is a ``SessionCrashed``): which of `CHECKS`, after how many inputs, and the
    fuzzer's message."""

    step: int
    check: str
    failure: str


def recorded_violation(params: dict[str, Any]) -> RecordedViolation | None:
    """The check a fuzzer counterexample failed, as `fuzz_app` saved it in the session's
    params (``params["fuzz"]["violated"]``); None for any other session, and for one saved
    before the fuzzer recorded it. Raises ``ValueError`` for one that is malformed."""
    fuzz = params.get("fuzz")
    if not isinstance(fuzz, dict) or "violated" not in fuzz:
        return None
    violated = fuzz["violated"]
    if (
        not isinstance(violated, dict)
        or not _whole(violated.get("step"))
        or violated.get("check") not in CHECKS
    ):
        raise ValueError(
            "params['fuzz']['violated']: expected {'step': a whole number, 'check': one of"
            f" {', '.join(CHECKS)}}}, got {violated!r}"
        )
    failure = fuzz.get("failure")
    failure = failure if isinstance(failure, str) else ""
    return RecordedViolation(violated["step"], violated["check"], failure)


_EFFECT_FAILED = re.compile(r"effect \d+ \(.*\) failed: ", re.DOTALL)
"""How the fuzzer words an effect that raised (`_EffectFailedError`)."""


def recorded_effect_failure(params: dict[str, Any]) -> str | None:
    """The failure of a fuzzer counterexample that is an effect raising, in the fuzzer's
    words: the session holds it as an input (``EffectFailed``), which replay feeds back as
    logged whatever the effect does now. None for any other session."""
    fuzz = params.get("fuzz")
    failure = fuzz.get("failure") if isinstance(fuzz, dict) else None
    if isinstance(failure, str) and _EFFECT_FAILED.match(failure):
        return failure
    return None


def recorded_nondeterministic(params: dict[str, Any]) -> bool:
    """Whether the session is a fuzzer counterexample of an app that did not do the same on
    the same inputs (``params["fuzz"]["deterministic"]`` False; before the fuzzer recorded
    that, its failure said so)."""
    fuzz = params.get("fuzz")
    if not isinstance(fuzz, dict):
        return False
    failure = fuzz.get("failure")
    said = isinstance(failure, str) and failure.startswith("the app is not deterministic:")
    return fuzz.get("deterministic") is False or said


def recorded_reads(params: dict[str, Any]) -> dict[int, list[int | None]]:
    """The reads a fuzzer counterexample checked, by the number of inputs before each.

    `fuzz_app` saves them in the session's params, since reads are not logged inputs;
    any other session has none. Raises ``ValueError`` if ``params["fuzz"]["reads"]`` is
    there but is not a list of ``[inputs before it, since]`` pairs of whole numbers.
    """
    fuzz = params.get("fuzz")
    reads: dict[int, list[int | None]] = {}
    if not isinstance(fuzz, dict) or "reads" not in fuzz:
        return reads
    listed = fuzz["reads"]
    for pair in listed if isinstance(listed, list) else [listed]:
        if not (isinstance(pair, list | tuple) and len(pair) == 2):
            raise ValueError(
                f"params['fuzz']['reads']: expected [after, since] pairs, got {pair!r}"
            )
        after, since = pair
        if not _whole(after) or not (since is None or _whole(since)):
            raise ValueError(
                "params['fuzz']['reads']: expected whole numbers of at least 0 (since may be"
                f" null), got {pair!r}"
            )
        reads.setdefault(after, []).append(since)
    return reads


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
