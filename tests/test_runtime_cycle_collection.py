"""A commit holds Python's cycle collector off while it builds and reconciles the view: the
view's objects lived just long enough to reach the oldest generation, and a 3,000-item todo
list spent more than half of each commit in full collections of the whole process."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import attrs
import pytest

from semledger.examples import todo
from semledger.runtime import ApplicationError, AppRuntime, View


def _todo(items: int) -> Any:
    model = todo.Model(
        items=tuple(todo.Item(i, f"item {i}") for i in range(1, items + 1)),
        next_number=items + 1,
    )
    return attrs.evolve(todo.app, init=lambda: model)


@pytest.fixture
def collections_during() -> Iterator[list[bool]]:
    """Set its first item True while the code under watch runs; each collection that
    starts meanwhile is counted in the rest."""
    watching = [False]

    def counted(phase: str, _info: dict[str, int]) -> None:
        if phase == "start" and watching[0]:
            watching.append(True)

    gc.callbacks.append(counted)
    try:
        yield watching
    finally:
        gc.callbacks.remove(counted)


def test_the_app_s_view_is_built_with_no_cycle_collection(
    collections_during: list[bool],
) -> None:
    app = _todo(3_000)

    def view(model: todo.Model) -> View[Any]:
        collections_during[0] = True
        try:
            return todo.view(model)
        finally:
            collections_during[0] = False

    runtime = AppRuntime(attrs.evolve(app, view=view))
    for number in (5, 6, 5):
        runtime.deliver(todo.Toggle(number))
    assert runtime.snapshot.generation == 4
    assert collections_during[1:] == []


def test_the_cycle_collector_is_on_again_after_a_commit_also_one_whose_view_raised() -> None:
    app = _todo(3)
    runtime = AppRuntime(app)
    assert gc.isenabled()

    def view(model: todo.Model) -> View[Any]:
        raise ValueError("the view failed")

    failing = AppRuntime(app)
    failing.app = attrs.evolve(app, view=view)  # (the next commit builds with it)
    with pytest.raises(ApplicationError) as raised:
        failing.deliver(todo.Toggle(1))
    assert str(raised.value.__cause__) == "the view failed"
    assert gc.isenabled()
    runtime.deliver(todo.Toggle(1))
    assert gc.isenabled()


def test_a_cycle_collector_the_process_turned_off_stays_off() -> None:
    gc.disable()
    try:
        AppRuntime(_todo(3)).deliver(todo.Toggle(1))
        assert not gc.isenabled()
    finally:
        gc.enable()
