"""The todo list: keyed items, a handler that rejects, a live region and an asynchronous save.

Every item's list_item carries the same semantic id ``todo.item`` on purpose: an id that
names a kind of thing rather than one thing. The snapshot reports it as a
``duplicate_semantic_id`` issue once there are two items, and every action addressed
through it is refused as ``target_ambiguous`` without reaching the app; agents address an
item through its own ``todo.item.<n>.*`` controls.
"""

from __future__ import annotations

import attrs
import trio

from semledger.runtime import (
    App,
    Effect,
    Live,
    Next,
    Proposal,
    Reject,
    Role,
    SemanticsAction,
    View,
    button,
    checkbox,
    column,
    lazy,
    node,
    row,
    text,
    text_field,
)

SAVE_SECONDS = 0.05


@attrs.frozen
class Item:
    number: int
    text: str
    done: bool = False


@attrs.frozen
class Model:
    items: tuple[Item, ...] = ()
    next_number: int = 1
    draft: str = ""
    save_status: str | None = None
    saves: int = 0
    """Saves started: the result of one a later save superseded is not shown."""


@attrs.frozen
class EditDraft:
    text: str


@attrs.frozen
class Add:
    pass


@attrs.frozen
class Toggle:
    number: int


@attrs.frozen
class Delete:
    number: int


@attrs.frozen
class ClearCompleted:
    pass


@attrs.frozen
class Save:
    pass


@attrs.frozen
class Saved:
    count: int
    save: int | None = None
    """Which save it answers (None in logs from before saves were numbered)."""


Msg = EditDraft | Add | Toggle | Delete | ClearCompleted | Save | Saved


def init() -> Model:
    return Model()


def _save(count: int, save: int) -> Effect[Msg]:
    async def run() -> Msg:
        await trio.sleep(SAVE_SECONDS)
        return Saved(count, save)

    return Effect(run, name="todo.save")


def update(model: Model, msg: Msg) -> Model | Next[Model, Msg]:
    match msg:
        case EditDraft(text=draft):
            return attrs.evolve(model, draft=draft)
        case Add():
            item = Item(model.next_number, model.draft)
            return attrs.evolve(
                model, items=(*model.items, item), next_number=model.next_number + 1, draft=""
            )
        case Toggle(number=number):
            items = tuple(
                attrs.evolve(i, done=not i.done) if i.number == number else i for i in model.items
            )
            return attrs.evolve(model, items=items)
        case Delete(number=number):
            return attrs.evolve(model, items=tuple(i for i in model.items if i.number != number))
        case ClearCompleted():
            return attrs.evolve(model, items=tuple(i for i in model.items if not i.done))
        case Save():
            saves = model.saves + 1
            saving = attrs.evolve(model, save_status="Saving…", saves=saves)
            return Next(saving, (_save(len(model.items), saves),))
        case Saved(count=count, save=save):
            # Effects run side by side, and two saves may finish in either order: only the
            # last one started says what was saved.
            if save is not None and save != model.saves:
                return model
            return attrs.evolve(model, save_status=f"Saved {count} items")
    raise TypeError(f"not a todo message: {msg!r}")


def _item_view(item: Item) -> View[Msg]:
    prefix = f"todo.item.{item.number}"
    return node(
        Role.LIST_ITEM,
        checkbox("Done", item.done, Toggle(item.number), semantic_id=f"{prefix}.done"),
        button("Delete", Delete(item.number), semantic_id=f"{prefix}.delete"),
        label=item.text,
        semantic_id="todo.item",
        key=item.number,
        layout=row().layout,
    )


def _lazy_item(item: Item) -> View[Msg]:
    """Each item is rebuilt only when it changes: editing one builds one item's views. The
    view still makes a lazy per item, and the list compares each one's key, so a commit
    costs O(items); nested, keyed lazy groups (as bench/commit.py builds them) cost
    O(change)."""
    return lazy(item, lambda: (_item_view(item),), key=item.number)


def view(model: Model) -> View[Msg]:
    draft = model.draft

    def submit(_action: SemanticsAction) -> Proposal[Msg] | Reject:
        if not draft.strip():
            return Reject("there is no text to add")
        return Proposal((Add(),))

    remaining = sum(not i.done for i in model.items)
    return column(
        text_field(
            "New todo", draft, on_set_text=EditDraft, on_submit=submit, semantic_id="todo.input"
        ),
        node(
            Role.LIST,
            *(_lazy_item(item) for item in model.items),
            semantic_id="todo.items",
            label="Todo items",
        ),
        button(
            "Clear completed",
            ClearCompleted(),
            semantic_id="todo.clear_completed",
            disabled=not any(i.done for i in model.items),
        ),
        node(
            Role.STATUS,
            semantic_id="todo.remaining",
            value=f"{remaining} items left",
            live=Live.POLITE,
        ),
        button("Save", Save(), semantic_id="todo.save"),
        text(None, model.save_status, semantic_id="todo.save_status"),
    )


app: App[Model, Msg] = App(
    init=init,
    update=update,
    view=view,
    name="todo",
    message_types=(EditDraft, Add, Toggle, Delete, ClearCompleted, Save, Saved),
    model_type=Model,
)

__all__ = [
    "Add",
    "ClearCompleted",
    "Delete",
    "EditDraft",
    "Item",
    "Model",
    "Save",
    "Saved",
    "Toggle",
    "app",
    "init",
    "update",
    "view",
]
