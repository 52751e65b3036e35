"""The fuzzer shrinks away steps on rows: a step draws its node by its place among the
enabled ones, controls (with semantic ids) before rows, so a select removed by the shrinker
does not turn the Undo drawn later into another row."""

from __future__ import annotations

import attrs

from semledger.eventlog import ActionRequested, MemoryRecorder
from semledger.replay import fuzz_app
from semledger.runtime import ActionKind, App, Role, State, View, button, column, node, send, text

FILES = ("notes.txt", "photo.png", "report.pdf", "song.mp3", "todo.md")


@attrs.frozen
class Model:
    files: tuple[str, ...] = FILES
    selected: frozenset[str] = frozenset()
    confirming: bool = False
    history: tuple[tuple[str, ...], ...] = ()
    deletes: int = 0


@attrs.frozen
class Toggle:
    name: str


@attrs.frozen
class Delete:
    pass


@attrs.frozen
class Confirm:
    pass


@attrs.frozen
class Cancel:
    pass


@attrs.frozen
class Undo:
    pass


Msg = Toggle | Delete | Confirm | Cancel | Undo


class UndoError(AssertionError):
    pass


def update(model: Model, msg: Msg) -> Model:
    if isinstance(msg, Toggle):
        return attrs.evolve(model, selected=model.selected ^ {msg.name})
    if isinstance(msg, Delete | Cancel):
        return attrs.evolve(model, confirming=isinstance(msg, Delete))
    if isinstance(msg, Confirm):
        kept = tuple(name for name in model.files if name not in model.selected)
        history = (*model.history, model.files)
        return Model(kept, frozenset(), False, history, model.deletes + 1)
    if not model.history:
        raise UndoError("undo with nothing to undo")
    return attrs.evolve(model, files=model.history[-1], history=model.history[:-1])


def view(model: Model) -> View[Msg]:
    if model.confirming:
        return node(
            Role.DIALOG,
            button("Delete", Confirm(), semantic_id="files.confirm"),
            button("Cancel", Cancel(), semantic_id="files.cancel"),
            label="Delete files",
            state=State(modal=True),
            handlers={ActionKind.DISMISS: send(Cancel())},
        )
    rows = [
        node(Role.LIST_ITEM, label=name, key=name, state=State(selected=name in model.selected),
             handlers={ActionKind.SELECT: send(Toggle(name))})
        for name in model.files
    ]  # fmt: skip
    return column(
        node(Role.LIST, *rows, label="Files", semantic_id="files.list"),
        button("Delete", Delete(), disabled=not model.selected, semantic_id="files.delete"),
        # The planted bug: enabled by the deletes ever made, not by the history left.
        button("Undo", Undo(), disabled=model.deletes == 0, semantic_id="files.undo"),
        text("Files", f"{len(model.files)} files", semantic_id="files.count"),
    )


app: App[Model, Msg] = App(
    init=Model,
    update=update,
    view=view,
    name="files",
    message_types=(Toggle, Delete, Confirm, Cancel, Undo),
    model_type=Model,
)


def test_a_bug_five_steps_deep_past_a_selection_is_shrunk_to_those_five() -> None:
    """With rows first, the shrinker kept selects it could not delete: an undo after a
    delete of fewer rows was another draw. Seed 12 ended at 7 steps (a select of one row
    three times over)."""
    recorder = MemoryRecorder()
    result = fuzz_app(app, "files_under_test:app", lambda: recorder, examples=300, seed=12)
    assert result.failure == "UndoError: undo with nothing to undo", result
    assert result.session is not None
    steps = [e for _r, e in recorder.events(result.session) if isinstance(e, ActionRequested)]
    kinds = [step.action["kind"] for step in steps]
    assert kinds == ["select", "activate", "activate", "activate", "activate"], steps
