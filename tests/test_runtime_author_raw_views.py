"""A view made with `View(...)` or `attrs.evolve`, not by `node`, has its fields checked as
the runtime mounts it: what it holds that the snapshot cannot carry is the app's error."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import pytest

from semledger.runtime import (
    App,
    ApplicationError,
    AppRuntime,
    Live,
    Role,
    State,
    View,
    button,
    column,
    text,
)


def _runtime(view: Callable[[bool], View[Any]], shown: bool) -> AppRuntime[Any, Any]:
    return AppRuntime(App(init=lambda: shown, update=lambda _model, msg: msg, view=view))


def _refused(bad: Callable[[], View[Any]]) -> BaseException:
    """The cause of the `ApplicationError` for a view that shows `bad()`, alike as the
    runtime starts and as the view changes to it."""

    def view(shown: bool) -> View[Any]:
        return column(text("ok", "fine", semantic_id="ok"), *([bad()] if shown else []))

    with pytest.raises(ApplicationError) as raised:
        _runtime(view, True)
    rt = _runtime(view, False)
    with pytest.raises(ApplicationError) as changed:
        rt.deliver(True)
    assert type(changed.value.__cause__) is type(raised.value.__cause__)
    assert raised.value.__cause__ is not None
    return raised.value.__cause__


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        (
            lambda: View(role="button", label="Save"),  # type: ignore[arg-type]
            "the view: role: expected a Role, got str 'button' (give Role.BUTTON)",
        ),
        (
            lambda: View(role=Role.TEXT, label=5),  # type: ignore[arg-type]
            "the text: label: expected a str or None, got int 5",
        ),
        (
            lambda: attrs.evolve(text("a"), live="polite"),
            "the text: live: expected a Live, got str 'polite' (give Live.POLITE)",
        ),
        (
            lambda: View(role=Role.TEXT, label="a", state=State(busy="yes")),  # type: ignore[arg-type]
            "the text: state.busy: expected True or False, got str 'yes'",
        ),
        (
            lambda: View(role=Role.BUTTON, label="a", semantic_id="has space"),  # type: ignore[arg-type]
            "the button: 'has space': a semantic id must not contain whitespace",
        ),
        (
            lambda: View(role=Role.GROUP, label="a", children=(5,)),  # type: ignore[arg-type]
            "the group: child 0 is an int (5), not a semledger View",
        ),
    ],
    ids=["role-str", "label-int", "evolved-live-str", "state-str", "semantic-id", "child"],
)
def test_a_view_built_without_node_is_checked_as_it_is_mounted(
    bad: Callable[[], View[Any]], says: str
) -> None:
    """Before, a string role failed inside the tree's platform pass with a bare
    AttributeError ("'str' object has no attribute 'value'"), a fault of the runtime that
    `semledger serve` printed as a traceback; an int label or an invalid semantic id was
    served as it was."""
    cause = _refused(bad)
    assert str(cause).startswith(says)


def test_views_built_by_node_and_mapped_are_served() -> None:
    def view(_shown: bool) -> View[Any]:
        return column(button("Save", 1, semantic_id="s").map(str), text("a", live=Live.POLITE))

    rt = _runtime(view, True)
    assert len(rt.snapshot.find("s")) == 1


def test_a_view_the_app_keeps_is_checked_once_however_often_it_is_mounted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Its declaration is uncacheable, so the tree brings it up to date each build: its
    every field was checked again each time."""
    from semledger.runtime import _view

    kept: View[Any] = View(role=Role.TEXT, label="kept")
    checked: list[View[Any]] = []
    check = _view._check_fields

    def counted(view: View[Any]) -> None:
        checked.append(view)
        check(view)

    monkeypatch.setattr(_view, "_check_fields", counted)
    rt = _runtime(lambda shown: column(kept, text("n", str(shown))), False)
    for shown in (True, False, True):
        rt.deliver(shown)
    assert [view for view in checked if view is kept] == [kept]
