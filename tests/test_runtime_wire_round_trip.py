"""What the encoders write, the decoders read back as it was: a logged action is re-executed
from its wire form, so a field read into the wrong place acts on something else."""

from __future__ import annotations

import pytest

from semledger.runtime import (
    ActionKind,
    ByNodeId,
    ByPath,
    BySemanticId,
    Exact,
    Latest,
    PathStep,
    Receipt,
    Role,
    Scroll,
    ScrollDirection,
    SemanticsAction,
    SetNumericValue,
    SetSelection,
    SetText,
    SimpleAction,
)
from semledger.runtime._wire import (
    decode_action,
    decode_precondition,
    decode_target,
    encode_action,
    encode_precondition,
    encode_receipt,
    encode_target,
)


@pytest.mark.parametrize(
    "action",
    [
        SimpleAction(ActionKind.ACTIVATE),
        SetText("Ada"),
        Scroll(ScrollDirection.DOWN),
        SetNumericValue(2.5),
        SetSelection(1, 4),
    ],
    ids=lambda action: action.kind.value,
)
def test_an_action_reads_back_as_it_was_written(action: SemanticsAction) -> None:
    assert decode_action(encode_action(action)) == action


def test_a_target_and_a_precondition_read_back_as_they_were_written() -> None:
    step = PathStep(index=2, role=Role.BUTTON, label="Go", value="on", semantic_id="a.b")
    for target in (BySemanticId("a.b"), ByNodeId(7), ByPath((step,))):
        assert decode_target(encode_target(target)) == target
    for precondition in (Latest(), Exact(12)):
        assert decode_precondition(encode_precondition(precondition)) == precondition


@pytest.mark.parametrize("pending_work", [True, False])
def test_a_receipt_says_whether_work_is_pending(pending_work: bool) -> None:
    assert encode_receipt(Receipt(2, 3, pending_work)) == {
        "before": "2",
        "after": "3",
        "pending_work": pending_work,
    }
