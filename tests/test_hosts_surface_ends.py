"""A served surface session that ends on its own, as a runtime session does: when its log
cannot be written, nothing more is done and every call is answered host_closed; when its
surface's session ends, serve says so and reports the session failed."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

import semledger.adapters
from semledger.adapters import LoggedSurface, SessionError, create_surface
from semledger.eventlog import SqliteRecorder
from semledger.hosts import LoggedSurfaceHost, serve_surface
from semledger.runtime import ErrorCode, Receipt, Rejection
from semledger.runtime._wire import decode_action, decode_precondition, decode_target

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from full_log import FullRecorder

COUNTER = "semledger.examples.counter:app"
CONFIG = {"adapter": "runtime", "app": COUNTER}
INCREMENT = decode_target({"kind": "semantic_id", "id": "counter.increment"})
ACTIVATE = decode_action({"kind": "activate"})
LATEST = decode_precondition({"kind": "latest"})


class _Counted:
    """The surface it wraps, counting the calls that reach it."""

    def __init__(self, surface: Any) -> None:
        self._surface = surface
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._surface, name)
        if callable(attribute):

            def counted(*args: Any, **kwargs: Any) -> Any:
                self.calls.append(name)
                return attribute(*args, **kwargs)

            return counted
        return attribute


async def test_a_surface_session_whose_log_cannot_be_written_stops_doing_anything() -> None:
    recorder = FullRecorder()
    surface = _Counted(create_surface(CONFIG))
    logged = LoggedSurface(surface, recorder, "s", "runtime", config=CONFIG)  # type: ignore[arg-type]
    await logged.open({})
    host = LoggedSurfaceHost(logged)
    assert isinstance(await host.perform_action(INCREMENT, ACTIVATE, LATEST), Receipt)
    recorder.full = True
    lost = await host.perform_action(INCREMENT, ACTIVATE, LATEST)
    assert isinstance(lost, Rejection)
    assert lost.code is ErrorCode.HOST_CLOSED
    assert lost.message.startswith("the session ended: session 's': its log could not be")
    assert host.failure == "its log could not be written (OSError(28, 'No space left on device'))"
    recorder.full = False
    head = recorder.head("s")
    calls = len(surface.calls)
    for answer in (
        await host.read_semantics(None),
        await host.perform_action(INCREMENT, ACTIVATE, LATEST),
    ):
        assert isinstance(answer, Rejection)
        assert (answer.code, answer.message) == (lost.code, lost.message)
    host.close()
    await logged.close(reason="end of input")
    assert surface.calls[calls:] == ["close"]  # closed, and asked nothing else
    assert recorder.head("s") == head  # nothing more was logged


async def _serve(
    db: Path, make: Any, monkeypatch: pytest.MonkeyPatch, *calls: tuple[str, dict[str, Any]]
) -> tuple[Any, list[dict[str, Any]]]:
    """`calls` served to a session of the surface `make(config)` makes: how it ended, and the
    answers (each call's result envelope)."""
    monkeypatch.setattr(semledger.adapters, "create_surface", make)
    to_loop, loop_input = trio.testing.memory_stream_one_way_pair()
    loop_output, from_loop = trio.testing.memory_stream_one_way_pair()
    lines = [
        {"jsonrpc": "2.0", "id": n, "method": "tools/call",
         "params": {"name": name, "arguments": arguments}}
        for n, (name, arguments) in enumerate(calls, start=1)
    ]  # fmt: skip
    await to_loop.send_all(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
    await to_loop.aclose()
    served = await serve_surface(
        CONFIG, {}, db=str(db), session="s", label=COUNTER, receive=loop_input, send=loop_output
    )
    await loop_output.aclose()
    output = b""
    while chunk := await from_loop.receive_some():
        output += chunk
    answers = [json.loads(line)["result"]["structuredContent"] for line in output.splitlines()]
    return served, answers


async def test_a_surface_session_that_ends_under_the_bridge_is_a_failure_of_serve(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The surface's session ends (its browser or application went away): the call is
    answered host_closed, and serve reports why the session ended, as failed."""
    surfaces: list[Any] = []

    def ending(config: Any) -> Any:
        surface = create_surface(config)
        snapshot = surface.snapshot

        async def snapshot_until_gone(**kwargs: Any) -> Any:
            if surfaces:
                raise SessionError("the application went away")
            surfaces.append("snapshot")
            return await snapshot(**kwargs)

        surface.snapshot = snapshot_until_gone  # type: ignore[method-assign]
        return surface

    db = tmp_path / "log.db"
    reads = [("read_semantics", {})] * 3
    served, answers = await _serve(db, ending, monkeypatch, *reads)
    assert [a["ok"] for a in answers] == [True, False, False]
    assert answers[1]["error"]["code"] == "host_closed"
    assert served.failed
    assert served.reason == "its surface's session ended (the application went away)"
    with SqliteRecorder(db) as recorder:
        summary = recorder.summary("s")
    assert summary is not None
    assert summary.ended


class DriverExplodedError(RuntimeError):
    """What a broken adapter raises: no SurfaceError."""


def _act_raises(surface: Any) -> None:
    async def act(*args: Any) -> Any:
        raise DriverExplodedError("the driver exploded")

    surface.act = act


def _act_returns_none(surface: Any) -> None:
    act = surface.act

    async def act_and_say_nothing(*args: Any) -> Any:
        await act(*args)  # done, as the log will show

    surface.act = act_and_say_nothing


def _snapshot_raises_after_the_first(surface: Any) -> None:
    snapshot, taken = surface.snapshot, []

    async def snapshot_once(**options: Any) -> Any:
        if taken:
            raise DriverExplodedError("the driver exploded")
        taken.append(1)
        return await snapshot(**options)

    surface.snapshot = snapshot_once


PAGE_ERROR = DriverExplodedError("cannot encode the page: " + "Great job! " * 5000)
"""What a driver may raise: a message that quotes the whole page."""


def _act_raises_with_the_page(surface: Any) -> None:
    async def act_and_quote_the_page(*_args: Any) -> Any:
        raise PAGE_ERROR

    surface.act = act_and_quote_the_page


BROKEN = {
    "act raises with the whole page": (
        _act_raises_with_the_page, "DriverExplodedError",
        f"raised {repr(PAGE_ERROR)[:199]}… in act('click')",
    ),
    "act raises": (
        _act_raises, "DriverExplodedError",
        "raised DriverExplodedError('the driver exploded') in act('click')",
    ),
    "act returns None": (
        _act_returns_none, "TypeError", "returned None from act('click'), not an ActResult",
    ),
    "snapshot raises": (
        _snapshot_raises_after_the_first, "DriverExplodedError",
        "raised DriverExplodedError('the driver exploded') in snapshot",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", BROKEN.values(), ids=list(BROKEN))
async def test_an_adapter_that_breaks_the_contract_crashes_the_session_as_an_app_that_raises(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    case: tuple[Any, str, str],
) -> None:
    """Its error reached the agent as a bare -32603, stderr said nothing, and the audit had
    the action 'unanswered' (after an act that returned None, though the click was done).
    Now the agent is told host_closed naming the error, serve says so at once and exits 1,
    and the log ends with the crash and the adapter's traceback: the audit has the action
    'crashed', and the session is never served again."""
    from semledger._render import audit_notes
    from semledger.eventlog import SessionCrashed
    from semledger.hosts import ServeError
    from semledger.replay import audit_report

    breaks, error_class, what = case

    def broken(config: Any) -> Any:
        surface = create_surface(config)
        breaks(surface)
        return surface

    db = tmp_path / "log.db"
    action = {"target": {"kind": "semantic_id", "id": "counter.increment"},
              "action": {"kind": "activate"}, "precondition": {"kind": "latest"}}  # fmt: skip
    served, answers = await _serve(
        db, broken, monkeypatch,
        ("read_semantics", {}), ("perform_action", action), ("read_semantics", {}),
    )  # fmt: skip
    told = f"the session ended: the adapter {what}"
    assert answers[0]["ok"]
    assert [a["error"] for a in answers[1:]] == [
        {"code": "host_closed", "message": told, "details": {}}
    ] * 2
    failure = f"its adapter 'runtime' {what}"
    assert (served.failed, served.reason) == (True, failure)
    said = capsys.readouterr().err.splitlines()
    assert said[-2:] == [
        f"semledger: session 's' ended: {failure}; answering host_closed until end of input",
        f"semledger: session 's' ended: {failure}",
    ]
    with SqliteRecorder(db) as recorder:
        *_, (_record, last) = recorder.events("s")
        assert isinstance(last, SessionCrashed)
        assert last.exception_type == error_class
        if error_class != "TypeError":  # where the adapter raised it
            assert __file__ in last.traceback
        report = audit_report(recorder, "s")
    assert [e.outcome for e in report.entries] == ["crashed"]
    assert (report.ending.state, report.ending.reason) == ("crashed", error_class)
    notes = [line.plain for line in audit_notes(report)]
    assert any(line.startswith("the adapter 'runtime' crashed at ") for line in notes)
    assert not any(line.startswith("the application crashed") for line in notes)
    with pytest.raises(ServeError, match=r"^session 's' crashed .* not served again"):
        await _serve(db, create_surface, monkeypatch, ("read_semantics", {}))


async def test_an_adapter_whose_open_raises_any_error_cannot_open_and_says_which(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ValueError from open crashed serve with an exception group's traceback, exit 1,
    and left the session open in the log; a SessionError was one line, exit 2, and an end
    ('could not open'). Any error is now the latter, its class named."""
    from semledger.hosts import ServeError

    def unopenable(config: Any) -> Any:
        surface = create_surface(config)

        async def open_fails(session: Any) -> None:
            raise ValueError("no display")

        surface.open = open_fails
        return surface

    db = tmp_path / "log.db"
    message = r"^adapter 'runtime' could not open: it raised ValueError\('no display'\)$"
    with pytest.raises(ServeError, match=message):
        await _serve(db, unopenable, monkeypatch, ("read_semantics", {}))
    with SqliteRecorder(db) as recorder:
        summary = recorder.summary("s")
    assert summary is not None
    assert (summary.ended, summary.end_reason) == (True, "could not open")


async def test_an_adapter_that_cannot_be_made_whatever_it_raises_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from semledger.hosts import ServeError

    def unmakeable(config: Any) -> Any:
        raise ImportError("no module named 'driver'")

    message = r"^adapter 'runtime' could not be made: it raised ImportError\(\"no module named"
    with pytest.raises(ServeError, match=message):
        await _serve(tmp_path / "log.db", unmakeable, monkeypatch, ("read_semantics", {}))


CLOSE_RAISES = {
    "an untyped error": (
        DriverExplodedError("close broke"), "it raised DriverExplodedError('close broke')"
    ),
    "a SessionError": (SessionError("the driver is gone"), "the driver is gone"),
}  # fmt: skip


@pytest.mark.parametrize("case", CLOSE_RAISES.values(), ids=list(CLOSE_RAISES))
async def test_an_adapter_whose_close_raises_fails_the_session_in_one_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    case: tuple[Exception, str],
) -> None:
    """Whatever close raised left serve with an exception group's traceback (exit 1); it is
    now the last stderr line, naming the adapter and the error, and the session failed."""
    error, why = case

    def unclosable(config: Any) -> Any:
        surface = create_surface(config)

        async def close_fails() -> None:
            raise error

        surface.close = close_fails
        return surface

    db = tmp_path / "log.db"
    served, answers = await _serve(db, unclosable, monkeypatch, ("read_semantics", {}))
    assert answers[0]["ok"]
    failure = f"end of input, and its adapter 'runtime' could not close: {why}"
    assert (served.failed, served.reason) == (True, failure)
    assert capsys.readouterr().err.splitlines()[-1] == f"semledger: session 's' ended: {failure}"
    with SqliteRecorder(db) as recorder:
        summary = recorder.summary("s")
    assert summary is not None
    logged = f"close failed: {type(error).__name__}: {error}"
    assert (summary.ended, summary.end_reason) == (True, logged)


async def test_an_adapter_that_crashed_and_whose_close_raises_says_both(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(config: Any) -> Any:
        surface = create_surface(config)
        _snapshot_raises_after_the_first(surface)

        async def close_fails() -> None:
            raise DriverExplodedError("close broke")

        surface.close = close_fails
        return surface

    reads = [("read_semantics", {})] * 2
    served, _ = await _serve(tmp_path / "log.db", broken, monkeypatch, *reads)
    assert served.failed
    assert served.reason == (
        "its adapter 'runtime' raised DriverExplodedError('the driver exploded') in snapshot"
        ", and its adapter 'runtime' could not close:"
        " it raised DriverExplodedError('close broke')"
    )


async def test_an_adapter_whose_open_and_close_raise_is_refused_for_its_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from semledger.hosts import ServeError

    def broken(config: Any) -> Any:
        surface = create_surface(config)

        async def open_fails(session: Any) -> None:
            raise ValueError("no display")

        async def close_fails() -> None:
            raise DriverExplodedError("close broke")

        surface.open, surface.close = open_fails, close_fails
        return surface

    message = r"^adapter 'runtime' could not open: it raised ValueError\('no display'\)$"
    with pytest.raises(ServeError, match=message):
        await _serve(tmp_path / "log.db", broken, monkeypatch, ("read_semantics", {}))
