"""A runtime restored from a checkpoint commits the same snapshot, with the same node ids."""

from __future__ import annotations

import datetime
from typing import Any

import attrs
import msgpack
import pytest
import trio

from semledger.actors import MessageCodec, MessageCodecError
from semledger.examples import counter, gallery, todo
from semledger.runtime import (
    ActionKind,
    App,
    AppRuntime,
    BySemanticId,
    CheckpointMismatchError,
    Delta,
    DuplicateSemanticId,
    Effect,
    Full,
    Latest,
    Next,
    Receipt,
    Scroll,
    ScrollDirection,
    SemanticId,
    SetSelection,
    SetText,
    SimpleAction,
    Unchanged,
    _tree,
    column,
)
from semledger.runtime import text as text_view


def _act(runtime: AppRuntime, semantic_id: str, action: object) -> None:  # type: ignore[type-arg]
    outcome = runtime.perform(BySemanticId(SemanticId(semantic_id)), action, Latest())  # type: ignore[arg-type]
    assert isinstance(outcome, Receipt), outcome


def _round_trip(runtime: AppRuntime, app: App) -> AppRuntime:  # type: ignore[type-arg]
    codec = MessageCodec(app.message_types, app.model_type)
    state = msgpack.unpackb(msgpack.packb(runtime.checkpoint()))
    model = codec.decode_model(msgpack.unpackb(msgpack.packb(codec.encode_model(runtime.model))))
    return AppRuntime.restore(app, model, state)


def test_restored_todo_has_same_generation_hash_and_node_ids() -> None:
    runtime = AppRuntime(todo.app)
    for text in ("a", "b", "c"):
        _act(runtime, "todo.input", SetText(text))
        _act(runtime, "todo.input", SimpleAction(ActionKind.SUBMIT))
    _act(runtime, "todo.item.2.delete", SimpleAction(ActionKind.ACTIVATE))
    _act(runtime, "todo.input", SetText("draft"))
    _act(runtime, "todo.input", SetSelection(1, 3))
    _act(runtime, "todo.input", SimpleAction(ActionKind.FOCUS))
    restored = _round_trip(runtime, todo.app)
    assert restored.generation == runtime.generation
    assert restored.snapshot.hash == runtime.snapshot.hash
    assert restored.read() == runtime.read()
    assert restored.next_node_id == runtime.next_node_id


def test_restored_runtime_continues_like_the_original() -> None:
    runtime = AppRuntime(todo.app)
    _act(runtime, "todo.input", SetText("a"))
    _act(runtime, "todo.input", SimpleAction(ActionKind.SUBMIT))
    restored = _round_trip(runtime, todo.app)
    for rt in (runtime, restored):
        _act(rt, "todo.input", SetText("new"))
        _act(rt, "todo.input", SimpleAction(ActionKind.SUBMIT))
    assert restored.read() == runtime.read()
    new_ids = {n.node_id for n in restored.snapshot.nodes.values()}
    assert max(new_ids) == max(n.node_id for n in runtime.snapshot.nodes.values())


@attrs.frozen
class _Shown:
    shown: bool = False


def _toggled(model: _Shown, _message: object) -> _Shown:
    return _Shown(not model.shown)


_SHOWN_OR_EMPTY = App(
    init=_Shown,
    update=_toggled,
    view=lambda model: column(text_view("Loaded", key="l")) if model.shown else column(),
    message_types=(str,),
    model_type=_Shown,
)


@pytest.mark.parametrize("toggles", [0, 2])
def test_a_checkpoint_of_an_empty_tree_restores_and_continues_like_the_original(
    toggles: int,
) -> None:
    """Restore rebuilt over an empty journal one generation back, and an empty tree commits
    nothing over it: every checkpoint of one was refused as a mismatch, and recovery
    re-executed the session from its first input."""
    runtime = AppRuntime(_SHOWN_OR_EMPTY)
    for _ in range(toggles):
        runtime.deliver("toggle")
    assert runtime.snapshot.root is None
    restored = _round_trip(runtime, _SHOWN_OR_EMPTY)
    assert (restored.generation, restored.snapshot.hash) == (
        runtime.generation,
        runtime.snapshot.hash,
    )
    for rt in (runtime, restored):
        rt.deliver("toggle")
    assert restored.read() == runtime.read()
    assert restored.generation == toggles + 1


def _twins(count: int) -> Any:
    return column(
        text_view("A", semantic_id="twin", key="a"),
        text_view("B", semantic_id="twin", key="b"),
        text_view("Count", str(count), key="c"),
    )


def test_a_restored_runtime_keeps_reporting_a_duplicate_id_its_commits_do_not_touch() -> None:
    app: App[int, int] = App(init=lambda: 0, update=lambda model, msg: model + msg, view=_twins)
    runtime = AppRuntime(app)
    restored = AppRuntime.restore(app, runtime.model, runtime.checkpoint())
    for rt in (runtime, restored):
        rt.deliver(1)
    [issue] = restored.snapshot.issues
    assert isinstance(issue, DuplicateSemanticId)
    assert restored.snapshot.issues == runtime.snapshot.issues


def test_a_restored_runtime_adopts_only_a_journal_that_ends_at_its_snapshot() -> None:
    app: App[int, int] = App(init=lambda: 0, update=lambda model, msg: model + msg, view=_twins)
    runtime = AppRuntime(app)
    runtime.deliver(1)
    restored = AppRuntime.restore(app, runtime.model, runtime.checkpoint())
    runtime.deliver(1)
    with pytest.raises(ValueError, match=r"^the journal ends at generation 3 with another"):
        restored.adopt_journal(runtime.journal)
    assert isinstance(restored.read(0), Full)
    restored.deliver(1)
    restored.adopt_journal(runtime.journal)
    assert restored.read(0) == runtime.read(0)


async def _never() -> int:
    await trio.sleep_forever()
    raise AssertionError("unreachable")


def test_a_restored_runtime_still_waits_for_the_effects_pending_at_the_checkpoint() -> None:
    app: App[int, int] = App(
        init=lambda: Next(0, (Effect(_never), Effect(_never))),
        update=lambda model, msg: model + msg,
        view=_twins,
    )
    runtime = AppRuntime(app)
    restored = AppRuntime.restore(app, runtime.model, runtime.checkpoint())
    assert restored.pending_effects == runtime.pending_effects == {1, 2}
    restored.complete_effect(2, 5)
    assert (restored.model, restored.pending_effects) == (5, {1})


def test_restored_gallery_keeps_scroll_modal_and_hidden_section() -> None:
    runtime = AppRuntime(gallery.app)
    _act(runtime, "gallery.scroll", Scroll(ScrollDirection.DOWN))
    _act(runtime, "gallery.section.toggle", SimpleAction(ActionKind.ACTIVATE))
    _act(runtime, "gallery.dialog.open", SimpleAction(ActionKind.ACTIVATE))
    restored = _round_trip(runtime, gallery.app)
    assert restored.read() == runtime.read()


def test_restored_behind_a_modal_announces_what_the_page_says_once_it_closes() -> None:
    runtime = AppRuntime(gallery.app)
    _act(runtime, "gallery.dialog.open", SimpleAction(ActionKind.ACTIVATE))
    restored = _round_trip(runtime, gallery.app)
    for rt in (runtime, restored):
        before = rt.generation
        _act(rt, "gallery.dialog.confirm", SimpleAction(ActionKind.ACTIVATE))
        delta = rt.read(before)
        assert isinstance(delta, Delta)
        assert [a.text for a in delta.announcements] == ["Changes discarded"]
    assert restored.read() == runtime.read()


def test_reads_since_before_the_checkpoint_get_full() -> None:
    runtime = AppRuntime(counter.app)
    _act(runtime, "counter.increment", SimpleAction(ActionKind.ACTIVATE))
    restored = _round_trip(runtime, counter.app)
    assert isinstance(restored.read(1), Full)
    assert isinstance(restored.read(restored.generation), Unchanged)


def test_a_model_that_does_not_rebuild_the_same_view_is_refused() -> None:
    runtime = AppRuntime(counter.app)
    _act(runtime, "counter.increment", SimpleAction(ActionKind.ACTIVATE))
    state = runtime.checkpoint()
    other = attrs.evolve(runtime.model, count=41)
    with pytest.raises(CheckpointMismatchError):
        AppRuntime.restore(counter.app, other, state)


@attrs.frozen
class _Holding:
    thing: object


def test_what_cattrs_cannot_take_both_ways_is_a_codec_error_not_a_failed_write_or_replay() -> None:
    """Passed through unencoded, the log writer would fail on it; encoded but not decodable
    back (no structure hook for ``object``), recovery and replay would."""
    codec = MessageCodec((_Holding,), int)
    with pytest.raises(MessageCodecError, match="a _Holding message cannot be logged"):
        codec.encode(_Holding(object()))
    with pytest.raises(MessageCodecError, match=r"the model \(a _Holding\) as model_type <cl"):
        codec.encode_model(_Holding(1))
    with pytest.raises(
        MessageCodecError,
        match="a _Holding message cannot be logged: cannot decode _Holding: StructureHandlerNot",
    ):
        codec.encode(_Holding(1))
    with pytest.raises(MessageCodecError, match="cannot be logged: cannot decode the model"):
        MessageCodec((), _Holding).encode_model(_Holding(1))
    assert codec.encode(3) == {"type": None, "value": 3}
    assert codec.encode_model(3) == 3


@attrs.frozen
class _Paid:
    total: int
    reference: str


def test_an_int_beyond_64_bits_is_a_codec_error_naming_it_bare_in_a_message_or_a_model() -> None:
    """A bare int was passed through unchecked, and the log writer failed on it."""
    codec = MessageCodec((_Paid,), _Paid)
    fits = "does not fit in 64 bits, which the log carries"
    cannot = "message cannot be logged:"
    with pytest.raises(MessageCodecError, match=f"^an int {cannot} {2**70} {fits}$"):
        codec.encode(2**70)
    with pytest.raises(MessageCodecError, match=f"^an int {cannot} {-(2**63) - 1} {fits}$"):
        codec.encode(-(2**63) - 1)
    with pytest.raises(MessageCodecError, match=f"^a _Paid {cannot} {2**64} {fits}$"):
        codec.encode(_Paid(2**64, "r7"))
    with pytest.raises(MessageCodecError, match=rf"^the model \(a _Paid\) .* {2**70} {fits}$"):
        codec.encode_model(_Paid(2**70, "r7"))
    with pytest.raises(MessageCodecError, match=f"{cannot} an int of 16610 bits {fits}$"):
        codec.encode(10**5000)  # too long for str() to show
    with pytest.raises(MessageCodecError, match=f"^a str {cannot} 'utf-8' codec can't encode"):
        codec.encode("\ud800")
    assert codec.encode(2**64 - 1) == {"type": None, "value": 2**64 - 1}
    assert codec.encode(-(2**63)) == {"type": None, "value": -(2**63)}


def test_a_logged_message_whose_class_changed_names_each_field_that_does_not_fit() -> None:
    """A field renamed since the session was logged (`amount` is now `total`)."""
    logged = {"type": "_Paid", "value": {"amount": 3, "reference": "r7"}}
    with pytest.raises(MessageCodecError) as caught:
        MessageCodec((_Paid,), None).decode(logged)
    assert str(caught.value) == "cannot decode _Paid: required field missing @ $.total"


@attrs.frozen
class _Due:
    when: datetime.datetime


@attrs.frozen
class _Reading:
    value: float
    extra: Any = None


def test_a_message_that_reads_back_changed_is_a_codec_error_not_a_changed_input() -> None:
    """cattrs reads a naive datetime back aware (UTC) and a tuple under ``Any`` back as a
    list: the live app got the changed message (and crashed comparing it with a naive
    one), while an in-process test of the app delivered the original."""
    codec = MessageCodec((_Due, _Reading), _Reading)
    with pytest.raises(MessageCodecError, match="a _Due message cannot be logged: it reads back"):
        codec.encode(_Due(datetime.datetime(2024, 6, 1, 12, 0)))
    with pytest.raises(MessageCodecError, match=r"reads back as _Reading\(value=1.0, extra=\[1, 2"):
        codec.encode(_Reading(1.0, (1, 2)))
    aware = _Due(datetime.datetime(2024, 6, 1, 12, 0, tzinfo=datetime.UTC))
    assert codec.decode(msgpack.unpackb(msgpack.packb(codec.encode(aware)))) == aware
    codec.encode(_Reading(1.0, [1, 2]))


def test_a_nan_reads_back_as_itself_in_a_message_and_in_a_model() -> None:
    """NaN equals nothing, itself included: an equality check alone refused it."""
    codec = MessageCodec((_Reading,), _Reading)
    nan = _Reading(float("nan"))
    assert repr(codec.decode(codec.encode(nan))) == repr(nan)
    assert repr(codec.decode_model(codec.encode_model(nan))) == repr(nan)


def _list_of(items: int) -> App:  # type: ignore[type-arg]
    return App(
        init=lambda: items,
        update=lambda model, _message: model,
        view=lambda model: column(*(text_view(f"Item {i}", str(i)) for i in range(model))),
        name="wide",
        model_type=int,
    )


def _identities_looked_at(items: int, monkeypatch: pytest.MonkeyPatch) -> int:
    """How many element identities restoring a flat list of `items` looks at."""
    app = _list_of(items)
    state = AppRuntime(app).checkpoint()
    looked = 0
    plain = _tree.plain_identity

    def counted(identity: Any) -> Any:
        nonlocal looked
        looked += 1
        return plain(identity)

    with monkeypatch.context() as patched:
        patched.setattr(_tree, "plain_identity", counted)
        AppRuntime.restore(app, items, state)
    return looked


def test_restoring_a_wide_list_looks_at_each_element_a_bounded_number_of_times(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each element was looked up from the root to apply its scroll and selection, scanning
    its parent's children: a session with a list of thousands resumed in tens of seconds."""
    small = _identities_looked_at(500, monkeypatch)
    large = _identities_looked_at(1000, monkeypatch)
    assert large <= 2.2 * small, (small, large)
