"""A model recovery cannot checkpoint is told to the operator once a session run: silently,
every restart re-executed the whole log."""

from __future__ import annotations

import enum
import logging
from typing import Any

import attrs
import pytest
import trio

from semledger.actors import Close, LogWriter, SessionActor
from semledger.eventlog import MemoryRecorder, SnapshotTaken
from semledger.examples import counter
from semledger.runtime import (
    ActionKind,
    App,
    BySemanticId,
    Latest,
    Receipt,
    SemanticId,
    SimpleAction,
)

INCREMENT = BySemanticId(SemanticId.new("counter.increment"))


async def _clicks(recorder: MemoryRecorder, app: App[Any, Any], clicks: int) -> None:
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            writer: LogWriter = await nursery.start(LogWriter(recorder).run)
            ref = "semledger.examples.counter:app"
            actor = SessionActor("s", app, ref, writer, recorder, checkpoint_every=2)
            async with trio.open_nursery() as sessions:
                await sessions.start(actor.run)
                for _ in range(clicks):
                    activate = SimpleAction(ActionKind.ACTIVATE)
                    outcome = await actor.perform_action(INCREMENT, activate, Latest())
                    assert isinstance(outcome, Receipt)
                await actor.request(Close("test over"))
            writer.close()


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "recovery checkpoints" in r.getMessage()]


async def test_a_model_with_no_model_type_is_warned_of_once_a_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="semledger")
    recorder = MemoryRecorder()
    untyped = App(init=counter.app.init, update=counter.app.update, view=counter.app.view)
    await _clicks(recorder, untyped, 7)
    assert _warnings(caplog) == [
        "session 's' takes no recovery checkpoints (the app declares no model_type), so a"
        " restart re-executes every input from the first: declare App.model_type, with a"
        " model that reads back from the log equal to itself and view keys msgpack can pack"
        " (docs/apps.md, model_type)"
    ]
    await _clicks(recorder, untyped, 3)  # the resumed run is told again, once
    assert len(_warnings(caplog)) == 2
    assert not any(isinstance(e, SnapshotTaken) for _r, e in recorder.events("s"))


async def test_a_model_that_checkpoints_is_not_warned_of(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="semledger")
    recorder = MemoryRecorder()
    await _clicks(recorder, counter.app, 5)
    assert _warnings(caplog) == []
    assert any(isinstance(e, SnapshotTaken) for _r, e in recorder.events("s"))


@attrs.frozen
class _Wrapped:
    """The counter's model beside a tuple under `Any`, which reads back as a list."""

    inner: counter.Model
    items: Any = tuple(range(1_000))


async def test_a_declared_model_that_does_not_read_back_is_warned_of_in_a_line_of_its_own(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The warning held the whole model read back (3.4 KB for a thousand items), and told
    the author to declare the model_type they had declared."""
    caplog.set_level(logging.WARNING, logger="semledger")
    recorder = MemoryRecorder()
    wrapped = App(
        init=lambda: _Wrapped(counter.app.init()),
        update=lambda model, msg: attrs.evolve(model, inner=counter.update(model.inner, msg)),
        view=lambda model: counter.view(model.inner),
        message_types=counter.app.message_types,
        model_type=_Wrapped,
    )
    await _clicks(recorder, wrapped, 3)
    [warning] = _warnings(caplog)
    assert len(warning) < 1_000, warning
    assert "reads back as _Wrapped(inner=Model(count=2" in warning
    assert "declare App.model_type" not in warning
    assert "every input from the first: keep to a model (App.model_type) that reads back" in warning


class _Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@attrs.frozen
class _Painted:
    count: int = 0
    color: _Color = _Color.RED


async def test_a_model_the_converter_raises_on_is_warned_of_and_its_input_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A str held where model_type declares an Enum (type hints are not enforced) raised
    AttributeError inside cattrs as the checkpoint was taken: the session crashed on the
    record without the input the runtime had applied, so replay could not reproduce it."""
    caplog.set_level(logging.WARNING, logger="semledger")
    recorder = MemoryRecorder()
    painted = App(
        init=_Painted,
        update=lambda model, msg: _Painted(counter.update(counter.Model(model.count), msg).count,
                                           "blue"),  # type: ignore[arg-type]  # the slip
        view=lambda model: counter.view(counter.Model(model.count)),
        message_types=counter.app.message_types,
        model_type=_Painted,
    )
    await _clicks(recorder, painted, 3)
    [warning] = _warnings(caplog)
    assert "the model (a _Painted) as model_type" in warning
    assert "cannot be logged: AttributeError" in warning
    topics = [type(e).__name__ for _r, e in recorder.events("s")]
    assert topics.count("ActionRequested") == 3
    assert "SessionCrashed" not in topics


async def test_a_checkpoint_that_fails_unforeseen_comes_after_its_input_on_the_record(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Checkpoints are taken after the input is on its way to the log: one that raises
    crashes the session after the input the runtime applied, where replay can find it."""

    def fails(self: SessionActor) -> list[Any]:
        raise RuntimeError("the checkpoint failed")

    monkeypatch.setattr(SessionActor, "_checkpoints", fails)
    recorder = MemoryRecorder()
    with pytest.raises(BaseException):  # noqa: B017,PT011  (the session ends, however told)
        await _clicks(recorder, counter.app, 2)
    topics = [type(e).__name__ for _r, e in recorder.events("s")]
    assert topics[-4:] == ["ActionRequested", "Committed", "ActionReceipt", "SessionCrashed"]
    assert topics.count("ActionRequested") == 2
