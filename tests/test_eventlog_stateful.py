"""SqliteRecorder against a plain list model, under random appends, conflicts and reads."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from semledger.eventlog import (
    Event,
    NewEvent,
    SequenceConflict,
    SessionCrashed,
    SessionEnded,
    SessionStarted,
    SqliteRecorder,
    verify_chain,
)
from semledger.eventlog._records import end_reason
from semledger.eventlog.testing import events

SESSIONS = ("a", "b", "c")
sessions = st.sampled_from(SESSIONS)
small_events = events(max_leaves=2)


class RecorderVersusList(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.directory = Path(tempfile.mkdtemp(prefix="eventlog-stateful-"))
        self.path = self.directory / "log.db"
        # OFF: durability is not what this compares, and it keeps the run fast.
        self.recorder = SqliteRecorder(self.path, synchronous="OFF")
        self.model: list[tuple[str, int, Event, float]] = []
        self.clock = 0.0

    def of(self, session: str) -> list[tuple[str, int, Event, float]]:
        return [entry for entry in self.model if entry[0] == session]

    def tick(self) -> float:
        self.clock += 0.5
        return self.clock

    @rule(parts=st.lists(st.tuples(sessions, small_events), min_size=1, max_size=4))
    def append_valid(self, parts: list[tuple[str, Event]]) -> None:
        next_seq = {s: len(self.of(s)) + 1 for s in SESSIONS}
        batch = []
        for session, event in parts:
            batch.append(NewEvent(session, next_seq[session], event, self.tick()))
            next_seq[session] += 1
        stored = self.recorder.append(batch)
        assert [(r.session, r.seq, r.at) for r in stored] == [
            (n.session, n.seq, n.at) for n in batch
        ]
        self.model.extend((n.session, n.seq, n.event, n.at) for n in batch)

    @rule(
        session=sessions,
        prefix=st.lists(st.tuples(sessions, small_events), max_size=2),
        offset=st.integers(-4, 4).filter(bool),
        event=small_events,
    )
    def append_conflicting(
        self, session: str, prefix: list[tuple[str, Event]], offset: int, event: Event
    ) -> None:
        next_seq = {s: len(self.of(s)) + 1 for s in SESSIONS}
        batch = []
        for other, valid in prefix:
            batch.append(NewEvent(other, next_seq[other], valid, self.tick()))
            next_seq[other] += 1
        batch.append(NewEvent(session, next_seq[session] + offset, event, self.tick()))
        with pytest.raises(SequenceConflict) as caught:
            self.recorder.append(batch)
        assert (caught.value.session, caught.value.seq) == (session, next_seq[session] + offset)

    @rule(session=sessions, start=st.integers(0, 5), length=st.none() | st.integers(-1, 4))
    def read_range(self, session: str, start: int, length: int | None) -> None:
        stop = None if length is None else start + length
        expected = [
            (seq, event, at) for _, seq, event, at in self.of(session)
            if seq >= start and (stop is None or seq < stop)
        ]
        got = [(r.seq, e, r.at) for r, e in self.recorder.events(session, start=start, stop=stop)]
        assert got == expected
        assert [r.seq for r in self.recorder.read(session, start=start, stop=stop)] == [
            seq for seq, _, _ in expected
        ]

    @rule()
    def reopen(self) -> None:
        self.recorder.close()
        self.recorder = SqliteRecorder(self.path, synchronous="OFF")

    @invariant()
    def heads_and_summaries_match_the_model(self) -> None:
        summaries = {s.name: s for s in self.recorder.sessions()}
        for session in SESSIONS:
            entries = self.of(session)
            head = self.recorder.head(session)
            if not entries:
                assert head is None
                assert session not in summaries
                continue
            assert head is not None
            assert head.seq == len(entries)
            summary = summaries[session]
            starts = [e for _, _, e, _ in entries if isinstance(e, SessionStarted)]
            assert (summary.app, summary.surface) == (
                (starts[0].app, starts[0].surface) if starts else (None, None)
            )
            assert (summary.events, summary.first_at, summary.last_at) == (
                len(entries), entries[0][3], entries[-1][3],
            )
            ends = [e for _, _, e, _ in entries if isinstance(e, SessionEnded | SessionCrashed)]
            last = entries[-1][2]
            if isinstance(last, SessionEnded | SessionCrashed):
                assert (summary.ended, summary.end_reason) == (True, end_reason(last))
            else:  # never ended, or went on after it did (resumed)
                assert (summary.ended, summary.end_reason) == (False, None)
            assert summary.crashed == any(isinstance(e, SessionCrashed) for e in ends)

    @rule(session=sessions)
    def the_chain_verifies(self, session: str) -> None:
        report = verify_chain(self.recorder.read(session))
        assert report.ok
        assert report.head == self.recorder.head(session)

    def teardown(self) -> None:
        self.recorder.close()
        shutil.rmtree(self.directory, ignore_errors=True)


RecorderVersusList.TestCase.settings = settings(
    max_examples=20, stateful_step_count=15, deadline=None
)
test_sqlite_recorder_matches_a_list_model = RecorderVersusList.TestCase
