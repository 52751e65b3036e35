"""LogOrder: the order a session's records must come in, read by seq, and what it names
where an edited log breaks it."""

from __future__ import annotations

import pytest

from semledger.eventlog import (
    ActionRequested,
    EndedBy,
    Event,
    InconsistentLogError,
    LogOrder,
    SessionCrashed,
    SessionEnded,
    SessionResumed,
    SessionStarted,
    StoredEvent,
    encode,
)

START = SessionStarted("tests.apps:counter", "runtime", {}, True)
REQUEST = ActionRequested(1, {}, {"kind": "activate"}, {}, False)
SERVER_END = SessionEnded("end of input")


def _record(seq: int, event: Event, *, version: int | None = None) -> StoredEvent:
    encoded = encode(event)
    stored_version = encoded.version if version is None else version
    return StoredEvent("s", seq, encoded.topic, stored_version, 1.0, encoded.body, bytes(32))


def _checked(*events: Event | tuple[int, Event]) -> None:
    """Check each event (or ``(version, event)``) as the next record of session ``s``."""
    order = LogOrder("s")
    for seq, item in enumerate(events, start=1):
        version, event = item if isinstance(item, tuple) else (None, item)
        order.check(_record(seq, event, version=version), event)


def test_a_record_labelled_zero_is_named_in_place_of_event_one() -> None:
    order = LogOrder("s")
    with pytest.raises(InconsistentLogError, match="the record in its place is labelled seq 0"):
        order.check_seq(0)


def test_a_record_labelled_with_an_earlier_seq_appears_twice() -> None:
    order = LogOrder("s")
    order.check(_record(1, START), START)
    with pytest.raises(InconsistentLogError, match="appears twice") as caught:
        order.check_seq(1)
    assert caught.value.seq == 1


def test_a_skipped_seq_is_named_missing() -> None:
    order = LogOrder("s", start=3)
    with pytest.raises(InconsistentLogError, match=r"missing: .*from event 2 to event 5"):
        order.check_seq(5)


def test_a_resume_after_a_servers_end_lets_the_session_go_on() -> None:
    _checked(START, SERVER_END, SessionResumed(()), REQUEST, SERVER_END, SessionResumed(()))


def test_a_restarted_surface_session_begins_again_after_a_servers_end() -> None:
    _checked(START, SERVER_END, START, REQUEST)


@pytest.mark.parametrize("by", ["client", "operator"])
def test_an_end_for_good_may_follow_a_servers_end_without_a_resume(by: EndedBy) -> None:
    _checked(START, SERVER_END, SessionEnded("ended", by))


@pytest.mark.parametrize("by", ["server", "fuzzer"])
def test_no_other_end_follows_a_servers_end_without_a_resume(by: EndedBy) -> None:
    with pytest.raises(InconsistentLogError, match="event 3: it follows the session's end at"):
        _checked(START, SERVER_END, SessionEnded("again", by))


def test_an_event_after_a_servers_end_without_a_resume_is_named() -> None:
    with pytest.raises(InconsistentLogError, match="end at event 2 with no resume") as caught:
        _checked(START, SERVER_END, REQUEST)
    assert caught.value.seq == 3


def test_a_servers_end_logged_at_version_1_may_be_followed_by_anything() -> None:
    """Servers that logged version 1 ends resumed with no `SessionResumed`."""
    _checked(START, (1, SERVER_END), REQUEST)


@pytest.mark.parametrize(
    ("end", "said"),
    [
        (SessionEnded("fuzz counterexample: x", "fuzzer"), "end for good at event 2"),
        (SessionEnded("ended by the operator", "operator"), "end for good at event 2"),
        (SessionCrashed("ValueError", "Traceback"), "crash at event 2"),
    ],
)
def test_nothing_follows_an_end_for_good_or_a_crash(end: Event, said: str) -> None:
    with pytest.raises(InconsistentLogError, match=said):
        _checked(START, end, SessionResumed(()))
