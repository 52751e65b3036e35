"""check_read: the fuzzer's check of a read against the snapshot it answers for."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from semledger.examples import counter
from semledger.replay import InvariantViolation
from semledger.replay._invariants import check_read
from semledger.runtime import (
    ActionKind,
    AppRuntime,
    BySemanticId,
    Delta,
    Latest,
    SimpleAction,
)


def _pressed_once() -> AppRuntime[Any, Any]:
    runtime = AppRuntime(counter.app)
    runtime.perform(BySemanticId("counter.increment"), SimpleAction(ActionKind.ACTIVATE), Latest())
    return runtime


def test_an_honest_read_passes_from_every_generation() -> None:
    runtime = _pressed_once()
    for since in (None, 0, 1, 2):
        check_read(runtime, since)


def test_a_delta_that_does_not_lead_to_the_current_snapshot_is_a_bad_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A delta that leaves out the node the step changed passes as a Delta unless it is
    applied and compared."""
    honest_read = AppRuntime.read

    def forgetful_read(self: AppRuntime[Any, Any], since: int | None = None) -> Any:
        result = honest_read(self, since)
        return attrs.evolve(result, upserted=()) if isinstance(result, Delta) else result

    runtime = _pressed_once()
    monkeypatch.setattr(AppRuntime, "read", forgetful_read)
    with pytest.raises(InvariantViolation) as raised:
        check_read(runtime, 1)
    assert str(raised.value) == "the delta from 1 does not lead to generation 2"
    assert raised.value.check == "read"


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (lambda read, since: read(None), "read(since=1) at 2 gave Full, not Delta"),
        (lambda read, since: read(since - 1), "read(since=1) gave a delta from 0"),
    ],
    ids=["full-for-a-since-in-the-journal", "delta-from-another-generation"],
)
def test_a_read_answered_otherwise_than_spec_says_is_a_bad_read(
    monkeypatch: pytest.MonkeyPatch, answer: Any, said: str
) -> None:
    """Both passed: a Full where SPEC 2.5 says a since still in the journal gets a delta,
    and a delta from a generation other than the one asked for, as long as it led to the
    current snapshot."""
    honest_read = AppRuntime.read
    runtime = _pressed_once()
    monkeypatch.setattr(
        AppRuntime, "read", lambda self, since=None: answer(lambda s: honest_read(self, s), since)
    )
    with pytest.raises(InvariantViolation) as raised:
        check_read(runtime, 1)
    assert str(raised.value) == said
