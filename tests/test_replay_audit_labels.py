"""What the audit names a node targeted by id: what it was known by in the tree the request
was judged at, which for a served surface is the one its bridge read after the request."""

from __future__ import annotations

from typing import Any

from semledger.eventlog import (
    ActionReceipt,
    ActionRejected,
    ActionRequested,
    CallRefused,
    Committed,
    MemoryRecorder,
    NewEvent,
    SessionEnded,
    SessionStarted,
)
from semledger.replay import audit

WEB = SessionStarted("file:///page.html", "web", {"adapter": "web"}, True)
APP = SessionStarted("tests_app:app", "runtime", {}, True)
ACTIVATE = {"kind": "activate"}
LATEST = {"kind": "latest"}


def _log(recorder: MemoryRecorder, *events: Any) -> None:
    recorder.append([NewEvent("s", seq, e, 1.7e9 + seq) for seq, e in enumerate(events, 1)])


def _node(node_id: str, label: str, role: str = "button") -> dict[str, Any]:
    return {"node_id": node_id, "semantic_id": None, "role": role, "label": label}


def _commit(generation: int, *upserted: dict[str, Any], removed: tuple[str, ...] = ()) -> Committed:
    delta = {"kind": "delta", "upserted": list(upserted), "removed": list(removed)}
    return Committed(generation, delta, "00")


def _at(node_id: str, request_id: int) -> ActionRequested:
    return ActionRequested(request_id, {"kind": "node_id", "id": node_id}, ACTIVATE, LATEST, False)


def test_a_web_node_is_named_as_the_bridges_read_after_the_request_found_it() -> None:
    """The page renamed 'Save' on its own after the first click; the second click, judged at
    generation 3, hit 'Delete everything', which the audit named 'Save' (the tree before)."""
    recorder = MemoryRecorder()
    _log(
        recorder,
        WEB,
        _commit(1, _node("1", "T", "web_view"), _node("2", "Save")),
        _at("2", 1),
        _commit(2, _node("2", "Save")),  # focused by the click
        ActionReceipt(1, 1, 2, False),
        _at("2", 2),
        _commit(3, _node("2", "Delete everything")),  # the bridge's read before judging it
        ActionReceipt(2, 3, 3, False),
        SessionEnded("end of input"),
    )
    entries = audit(recorder, "s")
    assert [(e.generation, e.target_node) for e in entries] == [
        (1, "button 'Save'"),
        (3, "button 'Delete everything'"),
    ]


def test_a_node_a_resumed_web_session_no_longer_holds_is_named_by_nothing() -> None:
    """A resumed web session's fresh surface renews every node id: an action at old node 8
    is target_not_found at generation 2, and was named 'item' from the old tree."""
    recorder = MemoryRecorder()
    _log(
        recorder,
        WEB,
        _commit(1, _node("1", "T", "web_view"), _node("8", "item", "listitem")),
        SessionEnded("end of input"),
        WEB,
        _at("8", 1),
        _commit(
            2, _node("10", "T", "web_view"), _node("17", "item", "listitem"), removed=("1", "8")
        ),
        ActionRejected(1, "target_not_found", "no node has that id", {}),
        SessionEnded("end of input"),
    )
    (entry,) = audit(recorder, "s")
    assert (entry.generation, entry.outcome, entry.target_node) == (2, "target_not_found", None)


def test_an_app_node_is_named_as_it_was_before_the_action_changed_it() -> None:
    """An app commits the action's result before its receipt: that tree is not the one the
    request was judged at."""
    recorder = MemoryRecorder()
    _log(
        recorder,
        APP,
        _commit(1, _node("3", "Add")),
        _at("3", 1),
        _commit(2, _node("3", "Added")),
        ActionReceipt(1, 1, 2, False),
        _at("3", 2),
        ActionRejected(2, "target_disabled", "disabled", {}),
        _at("3", 3),  # unanswered: named as in the tree it came to
    )
    entries = audit(recorder, "s")
    assert [e.target_node for e in entries] == ["button 'Add'", "button 'Added'", "button 'Added'"]


def test_a_call_refused_for_its_arguments_names_the_node_it_targeted() -> None:
    """A refused call (an action kind that does not exist) at node 3 was shown as ``node 3``
    alone, though the accepted call at the same node before it was named."""
    refused = CallRefused(
        "perform_action",
        {"target": {"kind": "node_id", "id": "3"}, "action": {"kind": "bogus"}},
        "invalid_arguments",
        "action.kind: expected an action kind",
        False,
    )
    recorder = MemoryRecorder()
    _log(recorder, APP, _commit(1, _node("3", "Add")), refused)
    (entry,) = audit(recorder, "s")
    assert (entry.outcome, entry.target_node) == ("invalid_arguments", "button 'Add'")
