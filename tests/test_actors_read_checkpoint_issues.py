"""A read checkpoint counts what a fold decodes: every commit's delta carries the whole
issues list (SPEC 2.5), so a session whose issues name many nodes takes them sooner."""

from __future__ import annotations

import attrs
import trio

from semledger.actors import LogWriter, SessionActor, commit_size
from semledger.eventlog import Committed, MemoryRecorder, SemanticsTaken
from semledger.examples import counter
from semledger.runtime import (
    ActionKind,
    App,
    BySemanticId,
    Latest,
    SemanticId,
    SimpleAction,
    View,
    column,
    text,
)

ROWS = 40


def _view(model: counter.Model) -> View[counter.Msg]:
    """The counter, and 40 rows that share one semantic id: one issue naming all 40."""
    rows = [text(f"Row {i}", semantic_id="big.row") for i in range(ROWS)]
    return column(counter.view(model), column(*rows))


BIG_ISSUE: App[counter.Model, counter.Msg] = attrs.evolve(
    counter.app, view=_view, name="big_issue"
)


async def _read_checkpoints(increments: int) -> tuple[list[int], int]:
    """The generations of the read checkpoints a session of `increments` takes, each input
    a checkpoint's turn; and the nodes of its tree."""
    recorder = MemoryRecorder()
    increment = BySemanticId(SemanticId("counter.increment"))
    async with trio.open_nursery() as nursery:
        writer: LogWriter = await nursery.start(LogWriter(recorder).run)
        actor = SessionActor("s", BIG_ISSUE, "tests:big_issue", writer, recorder,
                             checkpoint_every=1)  # fmt: skip
        async with trio.open_nursery() as sessions:
            await sessions.start(actor.run)
            for _ in range(increments):
                await actor.perform_action(increment, SimpleAction(ActionKind.ACTIVATE), Latest())
            nodes = len(actor.core.runtime.snapshot.nodes)
            assert len(actor.core.runtime.snapshot.issues[0].nodes) == ROWS
            actor.close()
        writer.close()
    taken = [e.generation for _r, e in recorder.events("s") if isinstance(e, SemanticsTaken)]
    return taken, nodes


async def test_the_node_ids_a_commits_issues_name_count_toward_a_read_checkpoint() -> None:
    """A commit counted one and a node it changed, not the 40 ids of the issue it carries:
    in a tree of 46 nodes, an increment (2) left a read 23 commits to fold, each decoding
    the issue (a todo of 3,000 items with one such issue took none for 2,000 commits, and
    reading its last generation took 25 s). Counted (2 + 40), one comes every second."""
    taken, nodes = await _read_checkpoints(12)
    assert nodes == ROWS + 6
    assert taken == [2, 4, 6, 8, 10, 12]


def test_a_commits_size_counts_the_node_ids_its_issues_name_for_apps_and_surfaces_alike() -> None:
    """`commit_size` is the one rule: the session actor and the surface log both count by
    it, so a web page whose issues name many nodes takes read checkpoints as soon."""
    delta = {
        "upserted": [{"node_id": "3"}],
        "removed": ["4", "5"],
        "issues": [
            {"kind": "duplicate_semantic_id", "semantic_id": "a", "nodes": ["6", "7", "8"]},
            {"kind": "missing_relation_target", "source": "9", "relation": "controls",
             "semantic_id": "b"},
        ],
    }  # fmt: skip
    assert commit_size(Committed(2, delta, "00")) == 1 + 1 + 2 + 3 + 1
