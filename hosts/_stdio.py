"""The stdio transport: NDJSON over stdin and stdout, on Trio. It only moves bytes.

One request per line, answered in order; blank lines are skipped, and so is a UTF-8
byte-order mark that begins the input (not one that begins a later line); a malformed line is
answered by the router and the loop goes on. At end of input every line already read is
answered and flushed before the loop returns. When the client stops reading (stdout closed)
the loop stops too, with the reason "output closed"; when the output fails otherwise (a full
disk under a redirected stdout, say) it stops with the reason that names why ("output could
not be written: No space left on device"). Nothing but JSON-RPC is written to stdout.

A batch the router takes (on a session that negotiated 2024-11-05 or 2025-03-26) is answered
with one line, in its place in that order: its calls run as calls on lines of their own
would, and its array is written once the last of them is complete.

For hosts that allow overlapping calls (`overlapping_calls_allowed`) the loop reads ahead:
each tool call starts as soon as its line is read, up to `MAX_OUTSTANDING` at once, and the
answers are still written in the order of the lines. Other hosts get one call at a time.
"""

from __future__ import annotations

import collections
import errno
import math
import os
import select
import signal
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from types import FrameType
from typing import Any, NoReturn

import attrs
import trio

from ._dispatch import announce
from ._dispatch import answer as answer_call
from ._host import AgentDiagnosticsHost, AgentHost, overlapping_calls_allowed
from ._router import Event, Reply, ReplyMessage, Router, ToolCall, encode_json

_CHUNK = 1 << 16
_CR = ord("\r")

MAX_OUTSTANDING = 256
"""Calls a reading-ahead loop has started and not yet answered before it stops reading."""

MAX_LINE = 4 << 20
"""Bytes a line may have (as an HTTP body may): a longer one is answered with a ``-32700``
and skipped to its end, not held in memory."""


_BOM = b"\xef\xbb\xbf"


def _bom_cut(buffer: bytearray) -> bool:
    """Cut the UTF-8 byte-order mark that begins the input, if one does: a writer that marks
    its stream's encoding puts one there (Windows tools, .NET's UTF-8 encoder), and RFC 8259
    lets a reader ignore it. It made the first line, the client's ``initialize``, a
    ``-32700`` with a null id, which its client waited on forever. False while `buffer`
    (the input so far) may still be the start of one."""
    if len(buffer) < len(_BOM) and _BOM.startswith(buffer):
        return False
    if buffer.startswith(_BOM):
        del buffer[: len(_BOM)]
    return True


def _encode(message: object) -> bytes:
    return encode_json(message) + b"\n"


_CLOSED = frozenset({errno.EPIPE, errno.ECONNRESET})
"""What a write to an output its reader closed fails with."""


OUTPUT_FAILED = "output could not be written"
"""How the reason `run_stdio` returns begins when its output failed otherwise than by its
reader closing it: the agent may have missed answers, so the session failed."""


def _output_stopped(error: trio.BrokenResourceError | trio.ClosedResourceError) -> str:
    """Why the output took no more: closed by its reader, or failing as a full disk does,
    which a reader that went away must not be blamed for in the log."""
    cause = error.__cause__
    if isinstance(cause, OSError) and cause.errno not in _CLOSED:
        return f"{OUTPUT_FAILED}: {cause.strerror or cause}"
    return "output closed"


@attrs.define(eq=False)
class _Answer:
    """The JSON-RPC message one event of a line is answered with, once it is known: None
    for a call of a batch whose array another of its calls completes."""

    message: ReplyMessage | None = None
    ready: trio.Event = attrs.Factory(trio.Event)

    def set(self, message: ReplyMessage | None) -> None:
        self.message = message
        self.ready.set()


async def run_stdio(
    router: Router,
    host: AgentHost,
    diagnostics: AgentDiagnosticsHost | None = None,
    *,
    receive: trio.abc.ReceiveStream | None = None,
    send: trio.abc.SendStream | None = None,
    transport: str = "stdio",
    peer: str | None = None,
) -> str:
    """Serve until end of input or the output closing; returns why it stopped.

    NDJSON is read from `receive` and written to `send` (stdin and stdout by default): a
    program serving it over a stream of its own (a socket, say) passes the stream, and the
    `transport` and `peer` the log names the agent's connection by (``"tcp"``, its address).

    Signals are the composition root's business (`stop_on_signals`): cancel this to stop.
    Calls already started when that happens are still answered and flushed.
    """
    receive = receive if receive is not None else trio.lowlevel.FdStream(os.dup(0))
    send = send if send is not None else trio.lowlevel.FdStream(os.dup(1))
    overlapping = overlapping_calls_allowed(host, diagnostics)
    slots = trio.Semaphore(MAX_OUTSTANDING if overlapping else 1)
    to_write, written = trio.open_memory_channel[_Answer](math.inf)
    output_stopped: str | None = None

    async def call(event: ToolCall, answer: _Answer, *, task_status: Any) -> None:
        # Nothing yields before the host has queued the call with the host (see
        # overlapping_calls_allowed), so calls reach the host in the order of the lines.
        task_status.started()
        with trio.CancelScope(shield=True):
            try:
                answer.set(await answer_call(router, event, host, diagnostics))
            except BaseException as exc:  # KeyboardInterrupt, say: still answered
                reply = router.complete(event, exc)
                answer.set(None if reply is None else reply.message)
                raise

    async def writer() -> None:
        nonlocal output_stopped
        queued: collections.deque[_Answer] = collections.deque()
        with trio.CancelScope(shield=True):
            while True:
                if not queued:
                    try:
                        queued.append(await written.receive())
                    except trio.EndOfChannel:
                        return
                while True:
                    try:
                        queued.append(written.receive_nowait())
                    except (trio.WouldBlock, trio.EndOfChannel):
                        break
                await queued[0].ready.wait()
                chunk = []
                while queued and queued[0].ready.is_set():  # what is ready goes out at once
                    chunk.append(queued.popleft())
                data = b"".join(_encode(a.message) for a in chunk if a.message is not None)
                try:
                    await send.send_all(data)
                except (trio.BrokenResourceError, trio.ClosedResourceError) as error:
                    output_stopped = _output_stopped(error)
                    workers.cancel_scope.cancel()
                    return
                for _ in chunk:
                    slots.release()

    announced = False

    async def take(events: list[Event]) -> None:
        nonlocal announced
        with trio.CancelScope() as started:
            for event in events:
                if not announced and router.protocol_version is not None:
                    announced = True  # before any call that follows the initialize
                    await announce(router, host, transport, peer)
                await slots.acquire()
                answer = _Answer()
                to_write.send_nowait(answer)  # first: a started call's answer is always written
                if isinstance(event, Reply):
                    answer.set(event.message)
                else:
                    await workers.start(call, event, answer)
                    # A batch is answered as one array, once its last call is: one call of
                    # it started, the rest start too, however the loop is being stopped.
                    started.shield = True

    async with trio.open_nursery() as workers:
        workers.start_soon(writer)
        try:
            buffer = bytearray()
            searched = 0  # how much of the buffer is known to hold no newline
            skipping = False  # the rest of an oversized line
            begun = False  # past a byte-order mark that begins the input, if one does
            while True:
                chunk = await receive.receive_some(_CHUNK)
                if not chunk:
                    break
                buffer += chunk
                if not begun and not (begun := _bom_cut(buffer)):
                    continue
                start = 0
                while (end := buffer.find(b"\n", searched)) >= 0:
                    # CRLF: the CR is part of the line's end, not of the line
                    crlf = end > start and buffer[end - 1] == _CR
                    line = bytes(buffer[start : end - crlf])
                    start = searched = end + 1
                    if skipping:
                        skipping = False
                    elif len(line) > MAX_LINE:
                        await take(router.receive_oversized_line(MAX_LINE, line[:MAX_LINE]))
                    else:
                        await take(router.receive_line(line))
                del buffer[:start]
                searched = len(buffer)
                if searched - buffer.endswith(b"\r") > MAX_LINE:  # (a CR may end the line)
                    if not skipping:
                        skipping = True
                        head = bytes(buffer[:MAX_LINE])  # as much as a line may hold, always
                        await take(router.receive_oversized_line(MAX_LINE, head))
                    buffer.clear()
                    searched = 0
            if buffer.strip() and not skipping:
                await take(router.receive_line(bytes(buffer)))
        finally:
            to_write.close()
    return output_stopped or "end of input"


@contextmanager
def stdout_for_messages_only() -> Iterator[int]:
    """The process's stdout kept for MCP's messages alone for the block: fd 1 points at
    stderr meanwhile, and a descriptor of the stdout it pointed at is yielded for the
    messages. MCP's stdio transport forbids a server to write anything else there, and a
    line an application printed (in its ``init`` or ``update``, in an effect, in a library
    it calls, or in a process it starts) broke its client's stream. Fd 1 is put back when
    the block ends."""
    _flush_stdout()
    messages = os.dup(1)
    try:
        _point_at_stderr(1)
        try:
            yield messages
        finally:
            _flush_stdout()  # what was printed in the block goes where the block sent it
            os.dup2(messages, 1)
    finally:
        os.close(messages)


def _point_at_stderr(fd: int) -> None:
    """Make `fd` write where stderr does, or nowhere if there is no stderr."""
    try:
        os.dup2(2, fd)
    except OSError:  # stderr is closed
        nowhere = os.open(os.devnull, os.O_WRONLY)
        os.dup2(nowhere, fd)
        os.close(nowhere)


def _flush_stdout() -> None:
    if sys.stdout is not None:
        with suppress(OSError, ValueError):  # closed, or its reader gone: nothing to keep
            sys.stdout.flush()


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""The signals that stop a server as end of input does. SIGHUP is among them: a server run
from a terminal that goes away must end its session on the record, not die mid-line."""


@attrs.define
class SignalStop:
    """Filled in by `stop_on_signals`: wrap the serving loop in ``scope``, or wait for
    ``requested``."""

    scope: trio.CancelScope = attrs.Factory(trio.CancelScope)
    reason: str | None = None
    requested: trio.Event = attrs.Factory(trio.Event)
    opening: bool = False
    """Set while the session is opened: a resumed one is re-run from its log first, which a
    signal does not cut short."""
    settled: bool = False
    """Set once what the server was stopping is written: a later signal has nothing left to
    cut short, and is ignored rather than ending the process by that signal (until the
    process exits, once `ignore_stop_signals_after_serving` was called)."""


STOPPING_SAID_AFTER = 2.0
"""Seconds a stop may take after its signal before stderr says what it waits for."""


@asynccontextmanager
async def stop_on_signals() -> AsyncIterator[SignalStop]:
    """The first of `STOP_SIGNALS` names the reason, cancels ``stop.scope`` and sets
    ``stop.requested``; the block ends once the calls already started are answered and the
    session is ended, so the first signal never kills the process halfway through ending
    its session. If that takes more than `STOPPING_SAID_AFTER` seconds, stderr says what
    it waits for: the application (running synchronous code that holds up the event loop),
    the session's opening (``stop.opening``: a resume re-runs its inputs first), or the
    calls in flight and the log (another process may hold it).

    A second signal ends the process at once, as if it had no handler: for a call or a
    clean-up that does not finish (a surface whose browser hangs, say). The handler does
    it itself, not the event loop, which an application stuck in its ``update`` blocks.
    The log survives that as it survives a crash: every answer the agent was sent is
    durable, and the calls still in flight were never answered. Once ``stop.settled`` is
    set, it is ignored.
    """
    stop = SignalStop()
    token = trio.lowlevel.current_trio_token()
    taken: list[int] = []

    def act(signum: int) -> None:  # in the event loop, once it runs
        stop.reason = f"signal {signal.Signals(signum).name}"
        stop.scope.cancel()
        stop.requested.set()

    def handle(signum: int, _frame: FrameType | None) -> None:
        if stop.settled:
            return
        if taken:
            _die_of(signum)
            return  # (only where a test stands in for `_die_of`)
        taken.append(signum)
        token.run_sync_soon(act, signum)
        said_if_slow(signum)

    with _said_when_slow(stop) as said_if_slow, _handled_by(handle, stop):
        yield stop


@contextmanager
def _said_when_slow(stop: SignalStop) -> Iterator[Callable[[int], object]]:
    """A function for the first signal's handler to call: a thread then says on stderr
    what the stop waits for if the block has not ended `STOPPING_SAID_AFTER` seconds later.
    A thread, as the event loop may be what the stop waits for; told through a pipe, as a
    signal handler may interrupt any lock it could be told through."""
    read_end, write_end = os.pipe()

    def watch() -> None:
        try:
            signum = os.read(read_end, 1)
            if signum and not select.select([read_end], [], [], STOPPING_SAID_AFTER)[0]:
                name = signal.Signals(signum[0]).name
                if not stop.requested.is_set():  # the event loop is held up
                    waited = "the application returns from what it is running"
                elif stop.opening:
                    waited = "the session is open (a resumed one re-runs its inputs from the log)"
                else:
                    waited = "the calls in flight are answered and the log is written"
                print(
                    f"semledger: {name}: stopping once {waited}; a second signal stops at once",
                    file=sys.stderr,
                    flush=True,
                )
        finally:
            os.close(read_end)

    threading.Thread(target=watch, name="semledger stopping", daemon=True).start()
    try:
        yield lambda signum: os.write(write_end, bytes([signum]))
    finally:
        os.close(write_end)  # the block has ended: nothing left to say


_ignored_after_serving = False


def ignore_stop_signals_after_serving() -> None:
    """For a process that exits once its server returns (`semledger serve`): a stop signal
    that comes once the server's ends are written (``SignalStop.settled``) stays ignored
    until the process has exited, which takes tens of milliseconds more. Without it, the
    handlers `stop_on_signals` found are put back as it returns."""
    global _ignored_after_serving
    _ignored_after_serving = True


@contextmanager
def _handled_by(
    handle: Callable[[int, FrameType | None], None], stop: SignalStop
) -> Iterator[None]:
    """`STOP_SIGNALS` handled by `handle` for the block; then by the handlers found, or
    ignored until the process exits once ``stop.settled`` (with
    `ignore_stop_signals_after_serving`)."""
    found = {signum: signal.signal(signum, handle) for signum in STOP_SIGNALS}
    try:
        yield
    finally:
        ignored = stop.settled and _ignored_after_serving
        for signum, handler in found.items():
            signal.signal(signum, signal.SIG_IGN if ignored else handler or signal.SIG_DFL)


def _die_of(signum: int) -> NoReturn:
    """Called by a signal handler: written as one `os.write`, since the handler may have
    interrupted a write to ``sys.stderr``, which a second one would raise on."""
    name = signal.Signals(signum).name
    os.write(2, f"semledger: {name} again: stopping at once\n".encode())
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    os._exit(128 + signum)  # (only if the signal was blocked)
