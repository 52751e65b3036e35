"""Recovery: a session started again on its log comes back with the same generations, node ids
and outstanding effects, in the same process or in a new one."""

from __future__ import annotations

import logging
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio

from semledger.actors import (
    Close,
    LogWriter,
    SessionActor,
    SessionCore,
    SessionCrashedError,
    SessionDivergedError,
    SessionMismatchError,
    SessionRegistry,
)
from semledger.actors._session import _REDACTED_EFFECT
from semledger.eventlog import (
    ActionRequested,
    AgentConnected,
    Committed,
    CorruptSummaryError,
    EffectCompleted,
    EffectFailed,
    EffectStarted,
    InconsistentLogError,
    MemoryRecorder,
    NewEvent,
    Recorder,
    SessionCrashed,
    SessionEnded,
    SessionResumed,
    SessionStarted,
    SnapshotTaken,
    SqliteRecorder,
    decode,
    topic_of,
)
from semledger.examples import counter, gallery, todo
from semledger.replay import reexecute
from semledger.runtime import (
    ActionKind,
    App,
    AppRuntime,
    BySemanticId,
    Effect,
    Exact,
    Full,
    Latest,
    Next,
    Precondition,
    Receipt,
    Rejection,
    SemanticId,
    SemanticsAction,
    SetText,
    SimpleAction,
    button,
    column,
    text,
)
from semledger.runtime._wire import encode_read

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp
import tests_boot
import tests_drifted
import tests_login
import tests_strength
import tests_variant
from sessions_run import TODO, in_session

GALLERY = "semledger.examples.gallery:app"
STRENGTH = "tests_strength:app"
SUBMIT = SimpleAction(ActionKind.SUBMIT)
ACTIVATE = SimpleAction(ActionKind.ACTIVATE)
LATEST = Latest()

Script = list[tuple[str, SemanticsAction]]

BEFORE: Script = [
    ("todo.input", SetText("milk")),
    ("todo.input", SUBMIT),
    ("todo.input", SetText("eggs")),
    ("todo.input", SUBMIT),
    ("todo.input", SetText("bread")),
    ("todo.input", SUBMIT),
    ("todo.item.1.done", ACTIVATE),
    ("todo.item.2.delete", ACTIVATE),
]
AFTER: Script = [
    ("todo.input", SUBMIT),
    ("todo.input", SetText("jam")),
    ("todo.input", SUBMIT),
    ("todo.clear_completed", ACTIVATE),
]


def target(semantic_id: str) -> BySemanticId:
    return BySemanticId(SemanticId.new(semantic_id))


async def drive(actor: SessionActor, script: Script, first: Precondition = LATEST) -> None:
    for index, (semantic_id, action) in enumerate(script):
        outcome = await actor.perform_action(
            target(semantic_id), action, first if index == 0 else Latest()
        )
        assert isinstance(outcome, Receipt), (semantic_id, outcome)


async def full(actor: SessionActor) -> Full:
    result = await actor.read_semantics(None)
    assert isinstance(result, Full)
    return result


def reference(script: Script) -> Full:
    """The same actions on one uninterrupted runtime."""
    runtime = AppRuntime(todo.app)
    for semantic_id, action in script:
        assert isinstance(runtime.perform(target(semantic_id), action, Latest()), Receipt)
    result = runtime.read(None)
    assert isinstance(result, Full)
    return result


async def test_a_recovered_session_keeps_generation_and_node_ids_and_goes_on(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.db"

    async def first(actor: SessionActor) -> Full:
        await drive(actor, BEFORE)
        return await full(actor)

    async def second(actor: SessionActor) -> tuple[Full, Full]:
        recovered = await full(actor)
        # The old generation is still current, so an exact precondition on it is accepted.
        await drive(actor, [("todo.input", SetText("oats")), *AFTER], Exact(recovered.generation))
        return recovered, await full(actor)

    with SqliteRecorder(db) as recorder:
        live, before_close = await in_session(recorder, "s", first)
    assert not live.recovered
    with SqliteRecorder(db) as recorder:
        again, (recovered, final) = await in_session(recorder, "s", second)
        requests = [e.request_id for _, e in recorder.events("s") if isinstance(e, ActionRequested)]
    assert again.recovered
    assert requests == list(range(1, len(requests) + 1))  # the recovered run's go on from the log's
    assert encode_read(recovered) == encode_read(before_close)
    expected = reference([*BEFORE, ("todo.input", SetText("oats")), *AFTER])
    assert encode_read(final) == encode_read(expected)


async def test_an_effect_started_and_never_finished_is_started_again_after_recovery(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "log.db"

    async def save(actor: SessionActor) -> Receipt:
        await drive(actor, BEFORE[:2])
        receipt = await actor.perform_action(target("todo.save"), ACTIVATE, Latest())
        assert isinstance(receipt, Receipt)
        return receipt

    async def wait_saved(actor: SessionActor) -> str | None:
        while True:
            status = (await full(actor)).nodes
            values = [n.value for n in status if n.semantic_id == "todo.save_status"]
            if values != ["Saving…"]:
                return values[0]
            await trio.sleep(0.01)

    monkeypatch.setattr(todo, "SAVE_SECONDS", 3600.0)  # the save never finishes live
    with SqliteRecorder(db) as recorder:
        _live, receipt = await in_session(recorder, "s", save)
        assert receipt.pending_work
        topics = [type(e) for _r, e in recorder.events("s")]
        assert EffectStarted in topics
        assert EffectCompleted not in topics
    monkeypatch.setattr(todo, "SAVE_SECONDS", 0.0)
    with SqliteRecorder(db) as recorder:
        again, status = await in_session(recorder, "s", wait_saved)
        assert again.recovered
        assert status == "Saved 1 items"
        completed = [e for _r, e in recorder.events("s") if isinstance(e, EffectCompleted)]
        assert len(completed) == 1


async def test_an_effect_started_by_init_and_never_finished_is_started_again_after_recovery(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "log.db"

    async def status(actor: SessionActor) -> str | None:
        while True:
            nodes = (await full(actor)).nodes
            value = next(n.value for n in nodes if n.semantic_id == "boot.status")
            if value != "Loading" or tests_boot.GATE is not None:
                return value
            await trio.sleep(0.01)

    monkeypatch.setattr(tests_boot, "GATE", trio.Event())  # held back: never finishes live
    with SqliteRecorder(db) as recorder:
        _live, first = await in_session(recorder, "s", status, tests_boot.app, "tests_boot:app")
    assert first == "Loading"
    monkeypatch.setattr(tests_boot, "GATE", None)
    with SqliteRecorder(db) as recorder:
        again, second = await in_session(recorder, "s", status, tests_boot.app, "tests_boot:app")
    assert again.recovered
    assert second == "Loaded 3 items"


async def _signed_in_then_resumed(
    db: Path, monkeypatch: pytest.MonkeyPatch, **options: Any
) -> tuple[str | None, list[Any]]:
    """Type the password, sign in and stop while the backend has not answered; resume.
    The status after resuming, and the session's events."""
    monkeypatch.setattr(tests_login, "SENT", [])
    monkeypatch.setattr(tests_login, "ANSWER", trio.Event())

    async def sign_in(actor: SessionActor) -> None:
        await drive(actor, [("password", SetText("hunter22")), ("sign_in", ACTIVATE)])
        while not tests_login.SENT:
            await trio.sleep(0.01)

    async def status(actor: SessionActor) -> str | None:
        await trio.sleep(0.05)  # time for an effect started again to reach the backend
        return next(n.value for n in (await full(actor)).nodes if n.semantic_id == "status")

    login = (tests_login.app, "tests_login:app")
    with SqliteRecorder(db) as recorder:
        await in_session(recorder, "s", sign_in, *login, **options)
        again, shown = await in_session(recorder, "s", status, *login, **options)
        assert again.recovered
        return shown, [e for _r, e in recorder.events("s")]


async def test_an_effect_made_after_a_redacted_password_is_not_run_again_with_its_bullets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Recovery re-executes the log, which holds bullets where the password was typed: the
    sign-in made again from it would send them. It is failed instead, saying why."""
    shown, events = await _signed_in_then_resumed(tmp_path / "log.db", monkeypatch)
    assert tests_login.SENT == ["hunter22"]
    assert shown == "signing in"
    assert [e for e in events if isinstance(e, SessionResumed)] == [SessionResumed(())]
    [failed] = [e for e in events if isinstance(e, EffectFailed)]
    assert failed.error.startswith("not started again when the session was recovered: it was")


async def test_no_recovery_checkpoint_logs_a_password_the_log_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The live model holds the password typed: a checkpoint of it would log it."""
    _shown, events = await _signed_in_then_resumed(
        tmp_path / "log.db", monkeypatch, checkpoint_every=1
    )
    assert tests_login.SENT == ["hunter22"]
    assert any(isinstance(e, SnapshotTaken) for e in events)  # the resumed run's, of bullets
    assert "hunter22" not in repr(events)


def _effect_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if " failed: " in r.getMessage()]


async def test_an_effect_failed_on_resume_is_told_to_the_operator_as_one_that_ran(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """An effect a resume fails (made after a redacted password) got only its EffectFailed:
    the operator saw a resume and a screen stuck waiting, though stderr names each effect
    that fails."""
    caplog.set_level(logging.WARNING, logger="semledger")
    await _signed_in_then_resumed(tmp_path / "login.db", monkeypatch)
    assert _effect_lines(caplog) == [
        f"session 's': effect 1 (auth.sign_in) failed: {_REDACTED_EFFECT} (logged as"
        " EffectFailed; the app gets no message for it)"
    ]


async def test_an_effect_outstanding_on_recovery_is_started_again_and_the_resume_logged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the password in the log (the operator's opt-in), the model recovered holds it."""
    db = tmp_path / "log.db"
    _shown, events = await _signed_in_then_resumed(db, monkeypatch, redact_passwords=False)
    assert tests_login.SENT == ["hunter22", "hunter22"]
    assert [e for e in events if isinstance(e, SessionResumed)] == [SessionResumed((1,))]
    assert not any(isinstance(e, EffectFailed) for e in events)
    audited = mcp.cli("audit", "s", "--db", str(db), COLUMNS="200")
    assert audited.returncode == 0, audited.stderr
    lines = audited.stdout.splitlines()
    assert any(line.startswith("the session resumed at ") for line in lines)
    assert any(
        line.startswith("effect 1 (auth.sign_in) at ")
        and line.endswith("started again as the session resumed: the outcome of its first"
                          " run was never logged, so it may have run twice")
        for line in lines
    ), audited.stdout


def test_a_session_resumed_in_a_new_process_keeps_generation_and_node_ids(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.db"
    first = mcp.serve(
        TODO,
        db,
        "agent",
        [
            mcp.perform(1, "todo.input", "set_text", value="milk"),
            mcp.perform(2, "todo.input", "submit"),
            mcp.perform(3, "todo.input", "set_text", value="eggs"),
            mcp.perform(4, "todo.input", "submit"),
            mcp.perform(5, "todo.item.1.delete"),
            mcp.read(6),
        ],
    )
    assert all(first[i]["ok"] for i in range(1, 7)), first
    before = first[6]["value"]
    generation = before["generation"]
    assert generation == first[5]["value"]["after"]

    second = mcp.serve(
        TODO,
        db,
        "agent",
        [
            mcp.read(1),
            mcp.perform(2, "todo.input", "set_text", generation, value="jam"),
            mcp.perform(3, "todo.input", "submit"),
            mcp.read(4),
        ],
    )
    assert second[1]["value"] == before
    assert second[2]["ok"], second[2]
    assert second[2]["value"]["before"] == generation
    after = second[4]["value"]
    ids = {n["semantic_id"]: n["node_id"] for n in after["nodes"]}
    old_ids = {n["semantic_id"]: n["node_id"] for n in before["nodes"]}
    for semantic_id in ("todo.input", "todo.items", "todo.item.2.done", "todo.save"):
        assert ids[semantic_id] == old_ids[semantic_id]
    # A new item gets fresh ids, larger than any the first process allocated.
    assert int(ids["todo.item.3.done"]) > max(int(n["node_id"]) for n in before["nodes"])


# ---- the re-executed commits must be the logged ones --------------------------------------

COUNTER = "semledger.examples.counter:app"
INCREMENT = ("counter.increment", ACTIVATE)
RESET = ("counter.reset", ACTIVATE)


def opener(
    app: App[Any, Any],
    app_ref: str,
    writer: LogWriter,
    recorder: Recorder,
    every: int | None,
    redact_passwords: bool = True,
) -> Callable[[], SessionActor]:
    return lambda: SessionActor(
        "s",
        app,
        app_ref,
        writer,
        recorder,
        checkpoint_every=every,
        redact_passwords=redact_passwords,
    )


async def record(
    recorder: Recorder,
    app: App[Any, Any],
    script: Script,
    *,
    app_ref: str = COUNTER,
    every: int | None = None,
    redact_passwords: bool = True,
    end: bool = True,
) -> Full:
    """Run session ``s`` of `app` through `script` (a new session, or a resumed one); its
    last Full read. Without `end` it is left as a crash leaves it: not ended."""
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            writer: LogWriter = await nursery.start(LogWriter(recorder).run)
            registry = SessionRegistry(nursery, writer, recorder)
            actor = await registry.open(
                "s", opener(app, app_ref, writer, recorder, every, redact_passwords)
            )
            await drive(actor, script)
            read = await full(actor)
            if not end:
                nursery.cancel_scope.cancel()  # (every answer was durable)
                return read
            await registry.close_all()
            writer.close()
    return read


async def refused(
    recorder: Recorder,
    app: App[Any, Any],
    *,
    app_ref: str = COUNTER,
    every: int | None = None,
    error: type[Exception] = SessionDivergedError,
) -> str:
    """Resume session ``s`` with `app`, which must be refused with `error` having logged
    nothing; the error's message."""
    before = list(recorder.read("s"))
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            writer: LogWriter = await nursery.start(LogWriter(recorder).run)
            registry = SessionRegistry(nursery, writer, recorder)
            with pytest.raises(error) as raised:
                await registry.open("s", opener(app, app_ref, writer, recorder, every))
            assert "s" not in registry
            writer.close()
    assert list(recorder.read("s")) == before
    return str(raised.value)


def commits(recorder: Recorder) -> list[tuple[int, Committed]]:
    return [(r.seq, e) for r, e in recorder.events("s") if isinstance(e, Committed)]


def inputs(recorder: Recorder) -> list[int]:
    return [r.seq for r, e in recorder.events("s") if isinstance(e, ActionRequested)]


def assert_names_the_causes(message: str) -> None:
    assert message.startswith("session 's' cannot be resumed: ")
    assert "\n" not in message
    assert "likely the application changed since the session was recorded" in message
    assert "a clock, randomness, a redacted password" in message
    assert "`semledger replay s`" in message


async def test_resuming_with_an_app_whose_update_changed_after_the_checkpoint_is_refused() -> None:
    recorder = MemoryRecorder()
    await record(recorder, counter.app, [INCREMENT] * 7, every=4, end=False)
    checkpoint = recorder.last_of("s", topic_of(SnapshotTaken))
    assert checkpoint is not None
    state = decode(checkpoint.topic, checkpoint.version, checkpoint.body)
    assert isinstance(state, SnapshotTaken)
    # The changed app restores the checkpoint (of count 4: its view is the same), so
    # recovery starts there and re-executes only the inputs after it.
    SessionCore.from_checkpoint(tests_drifted.app, state.state)
    message = await refused(recorder, tests_drifted.app, every=4)
    # The fifth increment commits count 5 again; the sixth commits 7 where the log has 6.
    seq, sixth = commits(recorder)[6]
    assert seq > checkpoint.seq
    assert f"at log seq {seq}, generation {sixth.generation} " in message
    assert f"the log commits it with hash {sixth.snapshot_hash[:12]}, re-execution with" in message
    assert_names_the_causes(message)


async def test_resuming_with_an_app_whose_view_changed_is_refused_where_it_first_differs() -> None:
    recorder = MemoryRecorder()
    await record(recorder, counter.app, [INCREMENT] * 3)
    message = await refused(recorder, tests_variant.app)
    seq, second = commits(recorder)[2]  # the first build's, then count 1, then count 2
    assert f"at log seq {seq}, generation {second.generation} " in message
    assert_names_the_causes(message)


@pytest.mark.parametrize(
    "typo",
    [("counter.nope", SetText("hi")), ("counter.increment", SetText("hi"))],
    ids=["no such target", "not a text field"],
)
async def test_a_refused_redacted_input_is_not_blamed_when_resuming_a_changed_app(
    typo: tuple[str, SemanticsAction],
) -> None:
    """A set_text that no field took is logged masked, and was named as the likely cause
    (with --log-passwords as the cure) in place of the application's change."""
    recorder = MemoryRecorder()
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            writer: LogWriter = await nursery.start(LogWriter(recorder).run)
            registry = SessionRegistry(nursery, writer, recorder)
            actor = await registry.open("s", opener(counter.app, COUNTER, writer, recorder, None))
            semantic_id, action = typo
            refusal = await actor.perform_action(target(semantic_id), action, LATEST)
            assert isinstance(refusal, Rejection)
            await drive(actor, [INCREMENT, INCREMENT])
            await registry.close_all()
            writer.close()
    assert next(e.redacted for _r, e in recorder.events("s") if isinstance(e, ActionRequested))
    message = await refused(recorder, tests_variant.app)
    assert_names_the_causes(message)
    assert "likely an input before it was a password" not in message
    report = reexecute(recorder, "s", tests_variant.app)
    assert report.divergence is not None
    assert report.divergence.note is None


async def test_resuming_with_an_app_that_no_longer_commits_a_logged_generation_is_refused() -> None:
    recorder = MemoryRecorder()
    await record(recorder, counter.app, [INCREMENT, INCREMENT, RESET, INCREMENT])
    message = await refused(recorder, tests_drifted.no_reset)
    seq, reset = commits(recorder)[3]
    assert f"at log seq {seq}, generation {reset.generation} " in message
    assert "(the log commits it, re-execution does not)" in message
    assert_names_the_causes(message)


@pytest.mark.parametrize(
    "script", [[INCREMENT, RESET, INCREMENT], [INCREMENT, RESET]], ids=["then more", "last"]
)
async def test_resuming_with_an_app_that_commits_what_the_log_lacks_is_refused(
    script: Script,
) -> None:
    recorder = MemoryRecorder()
    await record(recorder, tests_drifted.no_reset, script)
    message = await refused(recorder, counter.app)
    reset = inputs(recorder)[1]
    generation = commits(recorder)[-1][1].generation + (1 if script[-1] == RESET else 0)
    assert f"at log seq {reset}, generation {generation} " in message
    assert "(re-execution commits it, the log does not)" in message
    assert_names_the_causes(message)


async def test_resuming_with_an_app_that_raises_where_the_live_one_did_not_is_refused() -> None:
    recorder = MemoryRecorder()
    await record(recorder, counter.app, [INCREMENT, RESET])
    message = await refused(recorder, tests_drifted.raising_reset)
    assert f"at log seq {inputs(recorder)[1]}, " in message
    assert "raised ResetError('reset is gone'), which the live session did not" in message
    assert_names_the_causes(message)


async def test_resuming_from_a_checkpoint_with_another_app_is_refused() -> None:
    """The checkpoint restores (the other app shares the model), yet the log's start names
    another app."""
    recorder = MemoryRecorder()
    await record(recorder, counter.app, [INCREMENT] * 5, every=2, end=False)
    assert recorder.last_of("s", topic_of(SnapshotTaken)) is not None
    message = await refused(
        recorder, counter.app, app_ref="tests_variant:app", every=2, error=SessionMismatchError
    )
    assert message == f"session 's' was recorded with {COUNTER}, not tests_variant:app"


async def test_resuming_under_the_other_password_policy_is_refused() -> None:
    recorder = MemoryRecorder()
    await record(recorder, counter.app, [INCREMENT], redact_passwords=False)
    message = await refused(recorder, counter.app, error=SessionMismatchError)
    assert message.startswith("session 's' was started logging typed passwords in clear")


async def test_resuming_a_log_no_app_session_wrote_is_refused() -> None:
    recorder = MemoryRecorder()
    started = SessionStarted("web:surface", "web", {"adapter": "web"}, True)
    recorder.append([NewEvent("s", 1, started, 0.0)])
    message = await refused(recorder, counter.app, error=SessionMismatchError)
    assert "by a web surface" in message


async def test_resuming_a_session_whose_event_1_is_not_its_start_is_damage() -> None:
    """It was refused as a session of another kind (exit 2 from serve), not named damage."""
    recorder = MemoryRecorder()
    recorder.append([NewEvent("s", 1, SessionEnded("no start"), 0.0)])
    message = await refused(recorder, counter.app, error=InconsistentLogError)
    assert message == (
        "session 's', event 1: it is a SessionEnded, not the SessionStarted a session begins with"
    )


def _past_the_end(db: Path, *events: Any) -> int:
    """Append `events` after session ``s``'s last event, the chain carried on over them as
    any append carries it: what no server logs after an end. The seq of the first."""
    with SqliteRecorder(db) as recorder:
        head = recorder.head("s")
        assert head is not None
        recorder.append([NewEvent("s", head.seq + n, e, 0.0) for n, e in enumerate(events, 1)])
    return head.seq + 1


AGENT = AgentConnected(None, None, "stdio", None)
CRASH = SessionCrashed("ZeroDivisionError", "Traceback …")
SUBMITTED = ActionRequested(
    9, {"kind": "semantic_id", "id": "counter.increment"}, {"kind": "activate"},
    {"kind": "latest"}, redacted=False,
)  # fmt: skip


@pytest.mark.parametrize(
    ("end", "forged", "why"),
    [
        (True, [AGENT], "follows the session's end at event {end} with no resume"),
        (True, [SUBMITTED], "follows the session's end at event {end} with no resume"),
        (False, [CRASH, AGENT], "follows the session's crash at event {end}, after which"),
    ],
    ids=["resumed-over-it", "diverged", "crashed"],
)
async def test_resuming_a_session_with_an_event_logged_past_its_end_names_the_damage(
    tmp_path: Path, end: bool, forged: list[Any], why: str
) -> None:
    """Recovery re-executed past the end: the session was resumed over the added event, or
    refused as diverged ("the application changed") or as crashed."""
    db = tmp_path / "log.db"
    with SqliteRecorder(db) as recorder:
        await record(recorder, counter.app, [INCREMENT], end=end)
    first = _past_the_end(db, *forged)
    at = first + len(forged) - 1
    expected = f"session 's', event {at}: it {why.format(end=at - 1)}"
    with SqliteRecorder(db) as recorder:
        message = await refused(recorder, counter.app, error=InconsistentLogError)
    assert message.startswith(expected), message


def test_serving_a_session_with_an_event_logged_past_its_end_names_the_damage_exit_1(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.db"
    mcp.serve(TODO, db, "s", [mcp.perform(1, "todo.input", "set_text", value="milk")])
    target = {"kind": "semantic_id", "id": "todo.input"}
    seq = _past_the_end(
        db, ActionRequested(2, target, {"kind": "submit"}, {"kind": "latest"}, False)
    )
    with SqliteRecorder(db) as recorder:
        before = list(recorder.read("s"))
    done = mcp.cli("serve", TODO, "--db", str(db), "--session", "s")
    assert done.returncode == 1, done.stderr
    assert done.stderr == (
        f"semledger: the log {db} cannot be read: session 's', event {seq}: it follows the"
        f" session's end at event {seq - 1} with no resume\n"
    )
    with SqliteRecorder(db) as recorder:
        assert list(recorder.read("s")) == before


def test_serving_a_session_with_an_event_deleted_from_its_log_names_it_missing_exit_1(
    tmp_path: Path,
) -> None:
    """Resumed, it re-executed past the gap and was refused as "re-executing its log differs
    ... likely the application changed" (exit 2), as replay names it: missing."""
    db = tmp_path / "log.db"
    mcp.serve(TODO, db, "s", [mcp.perform(1, "todo.input", "set_text", value="milk")])
    with sqlite3.connect(db) as conn:
        (seq,) = conn.execute(
            "SELECT seq FROM events WHERE session = 's' AND topic = 'ActionRequested'"
        ).fetchone()
        conn.execute("DELETE FROM events WHERE session = 's' AND seq = ?", (seq,))
    conn.close()
    done = mcp.cli("serve", TODO, "--db", str(db), "--session", "s")
    assert done.returncode == 1, done.stderr
    assert done.stderr == (
        f"semledger: the log {db} cannot be read: session 's', event {seq}: missing: the"
        f" session's events go from event {seq - 1} to event {seq + 1}\n"
    )


async def test_resuming_with_the_unchanged_app_from_a_checkpoint_goes_on() -> None:
    recorder = MemoryRecorder()
    before = await record(recorder, counter.app, [INCREMENT] * 7, every=3, end=False)
    assert recorder.last_of("s", topic_of(SnapshotTaken)) is not None
    after = await record(recorder, counter.app, [INCREMENT], every=3)
    assert after.generation == before.generation + 1
    value = next(n.value for n in after.nodes if n.semantic_id == "counter.value")
    assert value == "8"


async def test_a_session_resumed_behind_a_modal_announces_what_the_page_says_as_it_closes() -> None:
    """The checkpoint taken while the dialog is open keeps the status as it was when the
    dialog opened: the resumed session announces it as the one that never stopped would,
    so replaying the log from the start makes the very same commits."""
    recorder = MemoryRecorder()
    opened = [("gallery.dialog.open", ACTIVATE)]
    await record(recorder, gallery.app, opened, app_ref=GALLERY, every=1, end=False)
    checkpoint = recorder.last_of("s", topic_of(SnapshotTaken))
    assert checkpoint is not None
    discarded = [("gallery.dialog.confirm", ACTIVATE)]
    await record(recorder, gallery.app, discarded, app_ref=GALLERY, every=1)
    *_, (seq, last) = commits(recorder)
    assert seq > checkpoint.seq
    assert [a["text"] for a in last.delta["announcements"]] == ["Changes discarded"]
    assert reexecute(recorder, "s", gallery.app).ok


async def test_a_gallery_session_with_a_redacted_password_resumes_since_its_semantics_mask_it() -> (
    None
):
    """Recovery types the logged bullets; the view shows a password as bullets, and what the
    gallery derives from it (too short, filled in) depends on its length only."""
    recorder = MemoryRecorder()
    script: Script = [
        ("gallery.username", SetText("ada")),
        ("gallery.remember", ACTIVATE),
        ("gallery.password", SetText("hunter2hunter2")),
        ("gallery.sign_in", ACTIVATE),
        ("gallery.remember", ACTIVATE),
    ]
    live = await record(recorder, gallery.app, script, app_ref=GALLERY, every=2, end=False)
    typed = [e for _r, e in recorder.events("s") if isinstance(e, ActionRequested) and e.redacted]
    assert [e.action["value"] for e in typed] == ["\u2022" * len("hunter2hunter2")]
    resumed = await record(
        recorder, gallery.app, [("gallery.remember", ACTIVATE)], app_ref=GALLERY, every=2
    )
    assert resumed.generation == live.generation + 1
    ids = {n.semantic_id: n.node_id for n in live.nodes}
    assert {n.semantic_id: n.node_id for n in resumed.nodes}.items() >= {
        k: v for k, v in ids.items() if k in ("gallery.password", "gallery.sign_in")
    }.items()


async def test_a_session_whose_semantics_depend_on_a_redacted_password_is_refused() -> None:
    recorder = MemoryRecorder()
    live = await record(
        recorder, tests_strength.app, [("strength.password", SetText("hunter22"))], app_ref=STRENGTH
    )
    assert [n.value for n in live.nodes if n.semantic_id == "strength.meter"] == ["strong"]
    message = await refused(recorder, tests_strength.app, app_ref=STRENGTH)
    seq, typed = commits(recorder)[1]
    assert f"at log seq {seq}, generation {typed.generation} " in message
    assert message.startswith("session 's' cannot be resumed: ")
    assert "likely an input before it was a password the log redacted" in message
    assert "serving with --log-passwords logs typed passwords" in message
    assert "`semledger replay s`" in message


async def test_a_session_that_logged_the_password_resumes_though_its_semantics_depend_on_it() -> (
    None
):
    recorder = MemoryRecorder()
    script: Script = [("strength.password", SetText("hunter22"))]
    await record(recorder, tests_strength.app, script, app_ref=STRENGTH, redact_passwords=False)
    resumed = await record(
        recorder, tests_strength.app, [], app_ref=STRENGTH, redact_passwords=False
    )
    assert [n.value for n in resumed.nodes if n.semantic_id == "strength.meter"] == ["strong"]


@attrs.frozen
class Unlisted:
    """Not among the app's message types: the log cannot record it."""


async def test_a_crash_on_a_message_the_log_could_not_record_is_refused_as_a_crash() -> None:
    async def unlisted() -> Unlisted:
        return Unlisted()

    def update(model: counter.Model, msg: Any) -> Next[counter.Model, Any]:
        return Next(counter.update(model, msg), (Effect(unlisted),))

    app = attrs.evolve(counter.app, update=update)
    recorder = MemoryRecorder()
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            writer: LogWriter = await nursery.start(LogWriter(recorder).run)
            registry = SessionRegistry(nursery, writer, recorder)
            actor = await registry.open("s", opener(app, COUNTER, writer, recorder, None))
            await drive(actor, [INCREMENT])
            while "s" in registry:
                await trio.sleep(0.01)
            writer.close()
    *_, (input_record, _), (crash_record, crash) = list(recorder.events("s"))
    assert isinstance(crash, SessionCrashed)
    message = await refused(recorder, app, error=SessionCrashedError)
    # The crash by the seq `audit` shows it at, and the input that raised it.
    assert (
        f"crashed (log event {crash_record.seq}, on the input at event {input_record.seq})"
        in message
    )


def test_serving_a_session_that_diverged_on_resuming_is_a_usage_error_and_logs_nothing(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.db"
    first = mcp.serve(
        STRENGTH, db, "s", [mcp.perform(1, "strength.password", "set_text", value="hunter22")]
    )
    assert first[1]["ok"], first
    with SqliteRecorder(db) as recorder:
        before = list(recorder.read("s"))
    again = mcp.cli("serve", STRENGTH, "--db", str(db), "--session", "s")
    assert again.returncode == 2, again.stderr
    assert again.stderr.startswith("semledger: session 's' cannot be resumed: ")
    assert len(again.stderr.splitlines()) == 1, again.stderr
    assert f"`semledger replay s --db {db}` shows" in again.stderr
    with SqliteRecorder(db) as recorder:
        assert list(recorder.read("s")) == before


@pytest.mark.parametrize(("cut_from", "holds"), [(11, "10"), (1, "none")])
async def test_a_log_whose_tail_was_cut_is_not_resumed_and_nothing_is_written(
    tmp_path: Path, cut_from: int, holds: str
) -> None:
    """Resumed from the cut log, the session would answer generations the agent was
    already shown again, under seqs the log had used. With every event cut, it was
    started again as a new session, over what its summary still listed."""
    db = tmp_path / "log.db"
    with SqliteRecorder(db) as recorder:
        await in_session(recorder, "s", lambda actor: drive(actor, BEFORE))
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM events WHERE seq >= ?", (cut_from,))
    conn.close()
    with SqliteRecorder(db) as recorder:
        message = await refused(recorder, todo.app, app_ref=TODO, error=CorruptSummaryError)
    assert f"it counts 27 events where the log holds {holds} (events were removed" in message
    done = subprocess.run(
        [*mcp.COMMAND, "serve", TODO, "--db", str(db), "--session", "s"],
        input="", capture_output=True, text=True, env=mcp.env(), timeout=60, check=False,
    )
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith(f"semledger: the log {db} cannot be read: the summary of")
    assert "Traceback" not in done.stderr


async def test_sessions_that_come_back_together_are_recovered_one_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Re-executing a log holds the GIL: recovered side by side, sessions that came back
    together (an HTTP server restarted under its clients) all finished last."""
    import threading
    import time

    recorder = MemoryRecorder()
    names = ["a", "b", "c"]
    for name in names:
        await in_session(recorder, name, lambda actor: drive(actor, BEFORE))
    recover = SessionActor._recover
    lock = threading.Lock()
    running = most = 0

    def taking_turns(self: SessionActor) -> SessionCore:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        time.sleep(0.05)  # long enough for another recovery to start beside it, if it may
        try:
            return recover(self)
        finally:
            with lock:
                running -= 1

    monkeypatch.setattr(SessionActor, "_recover", taking_turns)
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            writer: LogWriter = await nursery.start(LogWriter(recorder).run)
            actors = [SessionActor(n, todo.app, TODO, writer, recorder) for n in names]
            async with trio.open_nursery() as sessions:

                async def come_back(actor: SessionActor) -> None:
                    await sessions.start(actor.run)
                    await actor.request(Close("test over"))

                for actor in actors:
                    sessions.start_soon(come_back, actor)
            writer.close()
    assert all(actor.recovered for actor in actors)
    assert most == 1


def _keyed_app(key: object) -> App[int, str]:
    return App(
        init=lambda: 0,
        update=lambda count, _msg: count + 1,
        view=lambda count: column(
            button("Go", "go", semantic_id="go"), text("Count", str(count), key=key)
        ),
        model_type=int,
        message_types=(str,),
    )


@pytest.mark.parametrize(
    "key",
    [uuid.UUID(int=7), frozenset({1}), "caf\udce9.txt"],
    ids=["uuid", "frozenset", "lone-surrogate"],
)
async def test_a_view_key_the_log_cannot_hold_leaves_recovery_to_replay_not_the_session_dead(
    key: object,
) -> None:
    """A key the log cannot pack (a UUID, as an item's id) served, then failed the first
    recovery checkpoint: the session ended as if its log could not be written."""
    recorder = MemoryRecorder()
    app = _keyed_app(key)
    go = [("go", ACTIVATE)] * 5
    first = await record(recorder, app, go, app_ref="tests:keyed", every=2, end=False)
    topics = [type(event).__name__ for _r, event in recorder.events("s")]
    assert "SnapshotTaken" not in topics
    assert "SessionCrashed" not in topics
    again = await record(recorder, app, go, app_ref="tests:keyed", every=2)
    assert again.generation == first.generation + 5
    assert [n.node_id for n in again.nodes] == [n.node_id for n in first.nodes]
