"""Effects across a recovery: one still running when its session stopped is started again
and its message reaches the app, whichever checkpoints the log took while it ran."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio

from semledger.actors import SessionActor, SessionCrashedError, SessionDivergedError
from semledger.eventlog import (
    EffectCompleted,
    EffectFailed,
    SessionResumed,
    SnapshotTaken,
    SqliteRecorder,
)
from semledger.examples import todo
from semledger.runtime import (
    ActionKind,
    BySemanticId,
    Full,
    Latest,
    Receipt,
    SemanticId,
    SetText,
    SimpleAction,
)

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from sessions_run import in_session

ACTIVATE = SimpleAction(ActionKind.ACTIVATE)


async def act(actor: SessionActor, semantic_id: str, action: Any = ACTIVATE) -> None:
    target = BySemanticId(SemanticId.new(semantic_id))
    outcome = await actor.perform_action(target, action, Latest())
    assert isinstance(outcome, Receipt), (semantic_id, outcome)


async def _save_then(actor: SessionActor, more: int) -> None:
    """Add an item, start a save (which never finishes in this run), then take `more`
    inputs."""
    await act(actor, "todo.input", SetText("milk"))
    await act(actor, "todo.input", SimpleAction(ActionKind.SUBMIT))
    await act(actor, "todo.save")
    for _ in range(more):
        await act(actor, "todo.item.1.done")


async def _saved(actor: SessionActor) -> str | None:
    """The save status once a save started again has had time to finish."""
    await trio.sleep(0.3)
    read = await actor.read_semantics(None)
    assert isinstance(read, Full)
    return next(n.value for n in read.nodes if n.semantic_id == "todo.save_status")


@pytest.mark.parametrize(("every", "more"), [(1, 0), (2, 5)])
async def test_an_effect_outstanding_across_a_checkpoint_is_started_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, every: int, more: int
) -> None:
    """Recovery from the last checkpoint had no Effect for one started before it (or by
    the input it was taken after): it goes back to before the effect was made, and
    re-executing the input that made it makes it again."""
    monkeypatch.setattr(todo, "SAVE_SECONDS", 3600.0)  # the save never finishes live
    with SqliteRecorder(tmp_path / "log.db") as recorder:
        await in_session(recorder, "s", lambda a: _save_then(a, more), checkpoint_every=every)
        monkeypatch.setattr(todo, "SAVE_SECONDS", 0.01)
        again, status = await in_session(recorder, "s", _saved, checkpoint_every=every)
        events = [e for _r, e in recorder.events("s")]
    assert again.recovered
    checkpoints = [e for e in events if isinstance(e, SnapshotTaken)]
    assert any(c.state["runtime"]["pending_effects"] == [1] for c in checkpoints)
    assert [e for e in events if isinstance(e, SessionResumed)] == [SessionResumed((1,))]
    assert not any(isinstance(e, EffectFailed) for e in events)
    assert [e.effect_id for e in events if isinstance(e, EffectCompleted)] == [1]
    assert status == "Saved 1 items"


async def test_an_effect_a_resume_cannot_start_again_is_named_on_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Only a damaged log leaves recovery no earlier point to re-execute from (here, as if
    none were found): the effect is failed, named as the log started it, as other effect
    lines and the audit name it."""
    caplog.set_level(logging.WARNING, logger="semledger")
    monkeypatch.setattr(SessionActor, "_made_after", lambda _self, _effect_id, seq: seq)
    monkeypatch.setattr(todo, "SAVE_SECONDS", 3600.0)
    with SqliteRecorder(tmp_path / "log.db") as recorder:
        await in_session(recorder, "s", lambda a: _save_then(a, 1), checkpoint_every=1)
        await in_session(recorder, "s", _saved, checkpoint_every=1)
        [failed] = [e for _r, e in recorder.events("s") if isinstance(e, EffectFailed)]
    assert failed.error == "lost when the session was recovered"
    assert [r.getMessage() for r in caplog.records if " failed: " in r.getMessage()] == [
        "session 's': effect 1 (todo.save) failed: lost when the session was recovered"
        " (logged as EffectFailed; the app gets no message for it)"
    ]



async def test_an_effect_made_early_is_made_again_without_re_executing_the_whole_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Re-executing from before the effect was made to the end of the log would make every
    recovery of a session with a long-lived early effect cost a whole replay: only the
    stretch that made it is re-executed, besides the inputs after the last checkpoint."""
    monkeypatch.setattr(todo, "SAVE_SECONDS", 3600.0)
    updates = 0

    def counted(model: Any, message: Any) -> Any:
        nonlocal updates
        updates += 1
        return todo.app.update(model, message)

    counting = attrs.evolve(todo.app, update=counted)
    with SqliteRecorder(tmp_path / "log.db") as recorder:
        await in_session(recorder, "s", lambda a: _save_then(a, 200), checkpoint_every=50)
        monkeypatch.setattr(todo, "SAVE_SECONDS", 0.01)
        updates = 0
        _, status = await in_session(recorder, "s", _saved, counting, checkpoint_every=50)
    assert status == "Saved 1 items"
    # 3 inputs up to the save, at most 50 after the last checkpoint, the save's message.
    assert updates <= 3 + 50 + 1


def _raising_init() -> todo.Model:
    raise RuntimeError("no config here")


def _raising_save(model: todo.Model, message: todo.Msg) -> Any:
    if isinstance(message, todo.Save):
        raise RuntimeError("cannot save now")
    return todo.update(model, message)


@pytest.mark.parametrize(
    ("changed", "refusal"),
    [
        ({"init": _raising_init}, SessionCrashedError),
        ({"update": _raising_save}, SessionDivergedError),
    ],
)
async def test_an_app_raising_where_a_lost_effect_is_made_again_is_not_resumed(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    changed: dict[str, Any],
    refusal: type[Exception],
) -> None:
    """Re-executing the stretch that made an effect is checked as re-executing from the last
    checkpoint is: an app that now raises there (its init, or the input that made the
    effect) is refused, not resumed with the effect failed as lost, nor a traceback."""
    monkeypatch.setattr(todo, "SAVE_SECONDS", 3600.0)
    with SqliteRecorder(tmp_path / "log.db") as recorder:
        await in_session(recorder, "s", lambda a: _save_then(a, 20), checkpoint_every=5)
        app = attrs.evolve(todo.app, **changed)
        with pytest.RaisesGroup(refusal, flatten_subgroups=True):
            await in_session(recorder, "s", _saved, app, checkpoint_every=5)
        events = [e for _r, e in recorder.events("s")]
    assert not any(isinstance(e, SessionResumed | EffectFailed) for e in events)
