"""How deep a view may nest: to `MAX_VIEW_DEPTH` levels every pass of the runtime works;
deeper, the app is told so as an `ApplicationError`, not a `RecursionError` from inside the
runtime that no session could log."""

from __future__ import annotations

import attrs
import pytest

from semledger.actors import SessionCore
from semledger.runtime import (
    MAX_VIEW_DEPTH,
    ActionKind,
    App,
    ApplicationError,
    AppRuntime,
    BySemanticId,
    Latest,
    Receipt,
    SemanticId,
    SimpleAction,
    View,
    ViewTooDeepError,
    button,
    group,
    text,
)


@attrs.frozen
class Bump:
    pass


def _app(depth: int, grow: int = 0) -> App[int, Bump]:
    """A button at the root, beside a leaf `depth` levels down (`grow` more each bump)."""

    def view(count: int) -> View[Bump]:
        deep: View[Bump] = text("leaf", str(count), semantic_id="leaf")
        for level in range(depth - 1 + grow * count):
            deep = group(deep, label=f"level {level}")
        return group(button("Bump", Bump(), semantic_id="bump"), deep)

    return App(
        init=lambda: 0,
        update=lambda count, _: count + 1,
        view=view,
        name="deep",
        message_types=(Bump,),
        model_type=int,
    )


BUMP = (BySemanticId(SemanticId("bump")), SimpleAction(ActionKind.ACTIVATE), Latest())


def _depth(runtime: AppRuntime[int, Bump]) -> int:
    snapshot = runtime.snapshot
    (leaf,) = snapshot.find("leaf")
    parents = {child: node.node_id for node in snapshot.nodes.values() for child in node.children}
    depth = 0
    while leaf in parents:
        leaf, depth = parents[leaf], depth + 1
    return depth


def test_a_view_as_deep_as_allowed_commits_acts_and_comes_back_from_a_checkpoint() -> None:
    app = _app(MAX_VIEW_DEPTH)
    runtime = AppRuntime(app)
    assert _depth(runtime) == MAX_VIEW_DEPTH
    for _ in range(3):
        assert isinstance(runtime.perform(*BUMP), Receipt)
    core = SessionCore(app)
    core.runtime.perform(*BUMP)
    restored = SessionCore.from_checkpoint(app, core.checkpoint())
    assert restored.runtime.snapshot.hash == core.runtime.snapshot.hash


def test_a_view_one_level_deeper_is_the_app_s_error_as_it_starts() -> None:
    with pytest.raises(ApplicationError) as raised:
        AppRuntime(_app(MAX_VIEW_DEPTH + 1))
    assert isinstance(raised.value.__cause__, ViewTooDeepError)
    assert f"deeper than {MAX_VIEW_DEPTH} levels" in str(raised.value.__cause__)


def test_a_view_that_grows_too_deep_is_the_app_s_error_at_that_step() -> None:
    """It was a RecursionError from an attrs __eq__ inside the runtime, about 970 levels down."""
    runtime = AppRuntime(_app(MAX_VIEW_DEPTH - 2, grow=1))
    assert isinstance(runtime.perform(*BUMP), Receipt)
    assert isinstance(runtime.perform(*BUMP), Receipt)
    with pytest.raises(ApplicationError) as raised:
        runtime.perform(*BUMP)
    assert isinstance(raised.value.__cause__, ViewTooDeepError)
