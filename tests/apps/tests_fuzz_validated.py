"""A confirmation field that takes only the text DELETE; a confirmed delete crashes."""

from __future__ import annotations

import attrs

from semledger.runtime import App, Proposal, Reject, SemanticsAction, View, column, text_field


@attrs.frozen
class Model:
    confirm: str = ""


@attrs.frozen
class SetConfirm:
    text: str


@attrs.frozen
class Delete:
    pass


def update(model: Model, msg: SetConfirm | Delete) -> Model:
    if isinstance(msg, SetConfirm):
        return Model(msg.text)
    raise RuntimeError("a confirmed delete crashes")


def view(model: Model) -> View[SetConfirm | Delete]:
    def submit(_action: SemanticsAction) -> Proposal[Delete] | Reject:
        if model.confirm != "DELETE":
            return Reject("type DELETE to confirm")
        return Proposal((Delete(),))

    return column(
        text_field(
            "Type DELETE to confirm", model.confirm, on_set_text=SetConfirm, on_submit=submit,
            semantic_id="confirm",
        ),
    )


app: App[Model, SetConfirm | Delete] = App(
    Model, update, view, name="fuzz-validated", message_types=(SetConfirm, Delete),
    model_type=Model,
)
