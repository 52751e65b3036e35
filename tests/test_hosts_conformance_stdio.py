"""MCP conformance of the stdio transport: what a client that follows the spec, or a common
client that bends it, gets from `run_stdio` and from `semledger serve` as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from semledger.hosts import Router
from semledger.hosts._stdio import run_stdio

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from stdio_client import COMMAND, env, initialize, perform

BOM = b"\xef\xbb\xbf"


class _NoCalls:
    """A host no test here calls: pings and initialize are the router's alone."""

    async def read_semantics(self, since: object) -> object:
        raise AssertionError("read_semantics was called")

    async def perform_action(self, *args: object) -> object:
        raise AssertionError("perform_action was called")


def _message(request_id: int, method: str, params: dict[str, Any] | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode() + b"\n"


_CLIENT = {"name": "conformance", "version": "0"}
_INITIALIZE = _message(
    0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": _CLIENT}
)


async def _replies(chunks: list[bytes]) -> list[dict[str, Any]]:
    """What `run_stdio` answers to the input sent as `chunks`, one write each, then ended."""
    to_loop, loop_input = trio.testing.memory_stream_one_way_pair()
    loop_output, from_loop = trio.testing.memory_stream_one_way_pair()

    async def feed() -> None:
        for chunk in chunks:
            await to_loop.send_all(chunk)
            await trio.testing.wait_all_tasks_blocked()  # read as a chunk of its own
        await to_loop.aclose()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(feed)
        reason = await run_stdio(Router(), _NoCalls(), receive=loop_input, send=loop_output)
    assert reason == "end of input"
    await loop_output.aclose()
    output = b""
    while chunk := await from_loop.receive_some():
        output += chunk
    return [json.loads(line) for line in output.splitlines()]


@pytest.mark.parametrize(
    "chunks",
    [
        [BOM + _INITIALIZE + _message(1, "ping")],
        [BOM[:1], BOM[1:2], BOM[2:] + _INITIALIZE[:5], _INITIALIZE[5:] + _message(1, "ping")],
        [BOM[:2], BOM[2:], _INITIALIZE, _message(1, "ping")],
    ],
    ids=["whole", "cut byte by byte", "cut before the request"],
)
async def test_a_byte_order_mark_that_begins_the_input_is_skipped(chunks: list[bytes]) -> None:
    """Windows clients (Codex CLI, .NET's UTF-8 encoder) begin their stream with one: the
    first line, the client's initialize, was a -32700 with a null id, and its client waited
    for the answer to its initialize forever."""
    answered = await _replies(chunks)
    assert [reply["id"] for reply in answered] == [0, 1]
    assert answered[0]["result"]["protocolVersion"] == "2025-06-18"
    assert answered[1]["result"] == {}


async def test_a_byte_order_mark_that_begins_a_later_line_is_still_not_json() -> None:
    """Only the input's first bytes can be a stream's encoding mark: a later one is inside a
    message, which is not JSON, as it is not in an HTTP body."""
    answered = await _replies([_INITIALIZE + BOM + _message(1, "ping")])
    assert answered[1] == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "Parse error: the line is not JSON"},
    }


async def test_input_that_only_begins_as_a_byte_order_mark_is_a_line_of_its_own() -> None:
    answered = await _replies([BOM[:2] + b"\n" + _message(1, "ping")])
    assert [reply["id"] for reply in answered] == [None, 1]
    assert answered[0]["error"]["code"] == -32700


def test_serve_answers_the_initialize_of_a_client_that_begins_with_a_byte_order_mark(
    tmp_path: Path,
) -> None:
    done = subprocess.run(
        [*COMMAND, "serve", "semledger.examples.counter:app", "--db", str(tmp_path / "log.db")],
        input=BOM + initialize().encode() + perform(1, "counter.increment").encode(),
        capture_output=True,
        env=env(),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    answered = [json.loads(line) for line in done.stdout.splitlines()]
    assert [reply["id"] for reply in answered] == [0, 1]
    assert answered[1]["result"]["structuredContent"]["ok"] is True


PRINTING_APP = '''
import subprocess
import sys

import attrs

from semledger.examples import counter

print("printed as the app is imported")


def init():
    print("printed by init")
    return counter.init()


def update(model, msg):
    print("printed by update", msg)
    sys.stdout.flush()
    subprocess.run(["echo", "printed by a process update started"], check=True)
    return counter.update(model, msg)


app = attrs.evolve(counter.app, init=init, update=update)
'''


@pytest.mark.parametrize("adapter", [(), ("--adapter", "runtime", "--app")])
def test_what_an_app_prints_goes_to_stderr_and_stdout_carries_messages_alone(
    tmp_path: Path, adapter: tuple[str, ...]
) -> None:
    """MCP: the server MUST NOT write anything to its stdout that is not a valid MCP
    message. An app's print (or a library's, or a process it starts) went to stdout between
    the answers, and its client read a line that is not JSON-RPC."""
    (tmp_path / "printing.py").write_text(PRINTING_APP)
    done = subprocess.run(
        [*COMMAND, "serve", *adapter, "printing:app", "--db", str(tmp_path / "log.db")],
        input=initialize() + perform(1, "counter.increment"),
        capture_output=True,
        text=True,
        env=env(PYTHONPATH=str(tmp_path) + ":" + env().get("PYTHONPATH", "")),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answered = [json.loads(line) for line in done.stdout.splitlines()]
    assert [reply["id"] for reply in answered] == [0, 1], done.stdout
    assert answered[1]["result"]["structuredContent"]["ok"] is True
    for printed in ("as the app is imported", "by init", "by update Increment()", "by a process"):
        assert f"printed {printed}" in done.stderr


def test_stdout_points_at_stderr_for_the_block_and_back_after_it(
    capfd: pytest.CaptureFixture[str],
) -> None:
    from semledger.hosts._stdio import stdout_for_messages_only

    with stdout_for_messages_only() as messages:
        os.write(1, b"printed\n")
        os.write(messages, b"message\n")
    os.write(1, b"after\n")
    out, err = capfd.readouterr()
    assert (out, err) == ("message\nafter\n", "printed\n")
