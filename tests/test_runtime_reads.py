"""Reads and the journal: Full, Delta and Unchanged; generations (SPEC §2.5, §3)."""

from __future__ import annotations

from typing import Any

import pytest

from semledger.runtime import (
    JOURNAL_SIZE,
    App,
    AppRuntime,
    Delta,
    ErrorCode,
    Full,
    Rejection,
    Role,
    SemanticsNode,
    SemanticsSnapshot,
    Unchanged,
    View,
    apply_delta,
    group,
    node,
    text,
)


def view(model: tuple[int, ...]) -> View[Any]:
    return group(*(text(f"item {i}", str(v), key=i) for i, v in enumerate(model)), label="items")


def update(model: tuple[int, ...], msg: tuple[int, ...]) -> tuple[int, ...]:
    return msg


def make(init: tuple[int, ...] = (0, 0, 0)) -> AppRuntime[Any, Any]:
    return AppRuntime(App(init=lambda: init, update=update, view=view))


def test_a_read_without_since_is_full() -> None:
    rt = make()
    result = rt.read()
    assert isinstance(result, Full)
    assert result.generation == rt.generation == 1
    assert result.root == result.nodes[0].node_id
    assert [n.label for n in result.nodes] == ["items", "item 0", "item 1", "item 2"]


def test_since_current_is_unchanged() -> None:
    rt = make()
    assert rt.read(rt.generation) == Unchanged(rt.generation)


def test_since_in_the_journal_is_a_delta() -> None:
    rt = make()
    rt.deliver((1, 0, 0))
    rt.deliver((1, 2, 0))
    delta = rt.read(1)
    assert isinstance(delta, Delta)
    assert (delta.from_generation, delta.to_generation) == (1, 3)
    assert [n.value for n in delta.upserted] == ["1", "2"]


@pytest.mark.parametrize("since", [4, 99, 2**64 - 1])
def test_future_since_is_full(since: int) -> None:
    rt = make()
    rt.deliver((1, 0, 0))
    assert isinstance(rt.read(since), Full)


def test_since_zero_before_the_first_commit_is_a_delta_from_empty() -> None:
    rt = make()
    delta = rt.read(0)
    assert isinstance(delta, Delta)
    assert len(delta.upserted) == 4


def test_after_66_commits_an_old_cursor_gets_full() -> None:
    rt = make()
    for i in range(1, 66):
        rt.deliver((i, 0, 0))
    assert rt.generation == 66
    assert isinstance(rt.read(1), Full)
    oldest = rt.read(66 - JOURNAL_SIZE)
    assert isinstance(oldest, Delta)
    assert oldest.from_generation == 2
    assert isinstance(rt.read(65), Delta)


def test_delta_from_64_generations_behind_applies_to_the_full_of_that_generation() -> None:
    rt = make()
    old = rt.snapshot
    for i in range(1, 65):
        rt.deliver((i, i % 3, 0))
    delta = rt.read(old.generation)
    assert isinstance(delta, Delta)
    rebuilt = apply_delta(old, delta)
    assert rebuilt.full() == rt.read()
    assert rebuilt.nodes == rt.snapshot.nodes


def test_apply_delta_refuses_a_delta_from_another_generation() -> None:
    rt = make()
    rt.deliver((1, 0, 0))
    rt.deliver((2, 0, 0))
    delta = rt.read(2)
    assert isinstance(delta, Delta)
    with pytest.raises(ValueError, match="generation"):
        apply_delta(rt.snapshot, delta)


def test_removed_lists_removal_order_and_upserted_follows_tree_order() -> None:
    rt = make((0, 0, 0, 0))
    f = rt.read()
    assert isinstance(f, Full)
    ids = [n.node_id for n in f.nodes[1:]]
    rt.deliver((0, 5))
    rt.deliver((7,))
    delta = rt.read(f.generation)
    assert isinstance(delta, Delta)
    assert delta.removed == (ids[2], ids[3], ids[1])
    assert [n.node_id for n in delta.upserted] == [f.root, ids[0]]


def test_reading_never_advances_the_generation() -> None:
    rt = make()
    before = (rt.generation, rt.counters.commits, rt.counters.semantics_passes)
    for since in (None, 0, 1, 5):
        rt.read(since)
    rt.snapshot_at(0)
    assert (rt.generation, rt.counters.commits, rt.counters.semantics_passes) == before


def test_a_change_that_restores_the_snapshot_still_advances_by_one_per_commit() -> None:
    rt = make()
    first = rt.read()
    rt.deliver((1, 0, 0))
    rt.deliver((0, 0, 0))
    assert rt.generation == 3
    delta = rt.read(1)
    assert isinstance(delta, Delta)
    assert delta.upserted == ()
    assert delta.removed == ()
    assert isinstance(first, Full)
    assert apply_delta(rt.snapshot_at(1), delta).full().nodes == first.nodes  # type: ignore[arg-type]


def test_an_update_that_changes_nothing_public_does_not_advance() -> None:
    rt = make()
    rt.deliver((0, 0, 0))
    assert rt.generation == 1


def test_a_read_during_message_delivery_sees_the_previous_commit() -> None:
    seen: list[Any] = []
    holder: list[AppRuntime[Any, Any]] = []

    def spy_update(model: tuple[int, ...], msg: tuple[int, ...]) -> tuple[int, ...]:
        seen.append(holder[0].read())
        return msg

    rt = AppRuntime(App(init=lambda: (0,), update=spy_update, view=view))
    holder.append(rt)
    rt.deliver((9,))
    [during] = seen
    assert isinstance(during, Full)
    assert during.generation == 1
    assert [n.value for n in during.nodes[1:]] == ["0"]
    assert rt.generation == 2


def test_read_after_close_is_host_closed() -> None:
    rt = make()
    rt.close()
    result = rt.read()
    assert isinstance(result, Rejection)
    assert result.code is ErrorCode.HOST_CLOSED


def test_snapshot_hash_ignores_the_generation_and_follows_content() -> None:
    rt = make()
    first = rt.snapshot
    rt.deliver((1, 0, 0))
    rt.deliver((0, 0, 0))
    assert rt.snapshot.hash == first.hash
    rt.deliver((2, 0, 0))
    assert rt.snapshot.hash != first.hash


def wide_list(item: Any, width: int = 300) -> AppRuntime[int, int]:
    """A runtime of one list of `width` texts; ``item(i, model)`` is the i-th text's value."""
    app: App[int, int] = App(
        init=lambda: 0,
        update=lambda model, msg: model + msg,
        view=lambda model: node(
            Role.LIST,
            *(text(f"item {i}", item(i, model)) for i in range(width)),
            label="wide",
        ),
        name="wide",
    )
    return AppRuntime(app)


def parents_indexed(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """From now on, the children of each parent a tree-order sort indexes."""
    from semledger.runtime import _snapshot

    indexed: list[object] = []
    real = _snapshot.KeptPositions._index

    def counting(children: Any) -> dict[Any, int]:
        indexed.append(children)
        return real(children)

    monkeypatch.setattr(_snapshot.KeptPositions, "_index", staticmethod(counting))
    return indexed


def test_a_delta_over_a_wide_list_is_in_tree_order_and_indexes_each_parent_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    indexed = parents_indexed(monkeypatch)
    rt = wide_list(lambda _i, model: str(model))
    full = rt.read()
    assert isinstance(full, Full)
    rt.deliver(1)  # every item's value changes
    delta = rt.read(full.generation)
    assert isinstance(delta, Delta)
    assert [n.node_id for n in delta.upserted] == [n.node_id for n in full.nodes[1:]]
    from_zero = rt.read(0)
    assert isinstance(from_zero, Delta)
    assert [n.node_id for n in from_zero.upserted] == [n.node_id for n in full.nodes]
    # Sorting 300 siblings indexed their parent once per sort, not once per node.
    # Two commits sort elements, two delta reads sort snapshot nodes.
    assert 0 < len(indexed) <= 4


def test_a_one_leaf_commit_in_a_wide_list_indexes_no_siblings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rt = wide_list(lambda i, model: str(model if i == 0 else i))
    before = rt.read()
    assert isinstance(before, Full)
    indexed = parents_indexed(monkeypatch)
    rt.deliver(1)
    delta = rt.read(before.generation)
    assert isinstance(delta, Delta)
    assert len(delta.upserted) == 1
    assert indexed == []


def test_a_delta_of_two_rows_in_a_wide_list_indexes_the_list_once_not_per_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each read of a delta changing two rows indexed every row of their list again."""
    rt = wide_list(lambda i, model: str(model) if i in (0, 299) else str(i))
    for model in (1, 2, 3):
        before = rt.generation
        rt.deliver(1)  # (the commit indexes the list's elements, which the view rebuilt)
        indexed = parents_indexed(monkeypatch)
        delta = rt.read(before)
        assert isinstance(delta, Delta)
        assert [n.label for n in delta.upserted] == ["item 0", "item 299"]
        assert [n.value for n in delta.upserted] == [str(model)] * 2
        assert len(indexed) == (1 if model == 1 else 0)


def test_focus_moving_between_rows_of_a_wide_list_indexes_the_list_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A commit changing two rows sorted them by indexing every row of their list, however
    few rows changed, when the list itself had not."""
    from semledger.runtime import ActionKind, BySemanticId, Latest, Receipt, SimpleAction, button

    rows = [button(f"row {i}", i, semantic_id=f"row.{i}", key=i) for i in range(300)]
    rows_view = node(Role.LIST, *rows, label="rows")
    rt = AppRuntime(App(init=lambda: 0, update=lambda m, _msg: m, view=lambda _m: rows_view))
    counts = []
    for target in ("row.0", "row.299", "row.1", "row.298"):
        indexed = parents_indexed(monkeypatch)
        before = rt.generation
        focus = rt.perform(BySemanticId(target), SimpleAction(ActionKind.FOCUS), Latest())
        assert isinstance(focus, Receipt)
        delta = rt.read(before)
        assert isinstance(delta, Delta)
        counts.append(len(indexed))
    # The first commit indexed the list's elements; the first delta read, its node's children.
    assert counts == [0, 1, 0, 0]


def test_rows_replaced_in_a_list_the_runtime_sorted_are_not_kept_alive() -> None:
    """The kept child positions held the old children lists, and through them every
    replaced row's element (its view, its closures), until 64 other lists pushed them out:
    in a small app, for good."""
    import gc

    from semledger.runtime import ActionKind, BySemanticId, Latest, SimpleAction, button
    from semledger.runtime._tree import Element

    def rows_view(model: tuple[int, int]) -> View[Any]:
        made, count = model
        rows = [
            button(f"row {i}", i, semantic_id=f"row.{made}.{i}", key=(made, i))
            for i in range(count)
        ]
        return node(Role.LIST, *rows, label="rows")

    rt = AppRuntime(App(init=lambda: (0, 300), update=lambda _m, msg: msg, view=rows_view))
    focus = SimpleAction(ActionKind.FOCUS)
    for target in ("row.0.0", "row.0.299"):
        rt.perform(BySemanticId(target), focus, Latest())  # a commit sorting two rows
    replaced = {id(element) for element in rt._tree.root.walk()} - {id(rt._tree.root)}
    rt.deliver((1, 3))  # every row replaced: their 300 elements leave the tree
    for target in ("row.1.0", "row.1.2"):
        rt.perform(BySemanticId(target), focus, Latest())
    gc.collect()
    mounted = {id(element) for element in rt._tree.root.walk()}
    # (Other tests' elements may live on: only this runtime's replaced rows count.)
    left = [
        o
        for o in gc.get_objects()
        if type(o) is Element and id(o) in replaced and id(o) not in mounted
    ]
    assert left == []


def test_a_node_moved_under_an_earlier_sibling_keeps_its_new_parent() -> None:
    """A surface's node moves between parents with its id; its new parent comes first in
    tree order, so the old one, changed after it, must not take the node back out."""

    def at(node_id: int, *children: int) -> SemanticsNode:
        return SemanticsNode(node_id=node_id, semantic_id=None, role=Role.GROUP, children=children)

    before = SemanticsSnapshot.empty().derive(
        upserted=[at(1, 2, 3), at(2), at(3, 4), at(4)],
        removed=[],
        root=1,
        focused=None,
        issues=(),
    )
    after = before.derive(
        upserted=[at(2, 4), at(3)], removed=[], root=1, focused=None, issues=()
    )
    assert after.parents.get(4) == 2


def test_there_is_no_delta_back_to_an_earlier_generation() -> None:
    rt = make()
    rt.deliver((1, 0, 0))
    rt.deliver((1, 2, 0))
    assert rt.delta(1, 3) is not None
    assert rt.delta(3, 1) is None


def test_finding_the_empty_semantic_id_finds_nothing() -> None:
    assert make().snapshot.find("") == ()
