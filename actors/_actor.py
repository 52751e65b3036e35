"""The actor base: a memory channel as the mailbox, request/reply with a timeout.

An actor owns its state; everything else talks to it through its mailbox, so its state is
only ever touched by its own task. Start one with ``await nursery.start(actor.run)``; close
its mailbox (`Actor.close`) to end it once the messages already sent are handled.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from typing import Any, Generic, NamedTuple, TypeVar

import outcome
import trio

Message = TypeVar("Message")

DEFAULT_TIMEOUT = 30.0


class ActorError(Exception):
    """Base class of the errors actors raise on purpose."""


class ActorClosedError(ActorError):
    """Raised by `Actor.request` and `Actor.tell` when the actor no longer takes messages."""


class RequestTimeoutError(ActorError):
    """Raised by `Actor.request` when no reply came within the timeout."""


class _Envelope(NamedTuple, Generic[Message]):
    """A message and where its reply goes (None for a told message).

    A tuple rather than an attrs class: every message of every actor is wrapped in one,
    and the log writer receives one per batch, where a frozen attrs ``__init__`` showed.
    """

    message: Message
    reply: trio.MemorySendChannel[outcome.Outcome[Any]] | None


class Actor(Generic[Message]):
    """Subclasses implement `handle`; a reply is whatever it returns (or raises)."""

    mailbox_size: float = math.inf

    def __init__(self) -> None:
        send, receive = trio.open_memory_channel[_Envelope[Message]](self.mailbox_size)
        self._mailbox = send
        self._inbox = receive
        self._run_token: trio.lowlevel.TrioToken | None = None
        """The Trio run the actor runs in, once started: only its tasks may send to it."""

    async def handle(self, message: Message) -> Any:
        raise NotImplementedError

    async def run(self, *, task_status: trio.TaskStatus[Any] = trio.TASK_STATUS_IGNORED) -> None:
        self._run_token = trio.lowlevel.current_trio_token()
        try:
            await self.started()
            task_status.started(self)
            async for envelope in self._inbox:
                await self._deliver(envelope)
        finally:
            self._refuse_waiting()
        await self.stopped()

    def _refuse_waiting(self) -> None:
        """Answer requests still queued when the actor ends, so no caller waits for nothing."""
        self._mailbox.close()
        try:
            while True:
                try:
                    envelope = self._inbox.receive_nowait()
                except (trio.WouldBlock, trio.EndOfChannel, trio.ClosedResourceError):
                    return
                self._refuse(envelope)
        finally:
            self._inbox.close()

    def _refuse(self, envelope: _Envelope[Message]) -> None:
        """Let the sender of a message the actor will never handle know it."""
        if envelope.reply is not None:
            envelope.reply.close()

    async def started(self) -> None:
        """Set-up that must finish before the actor counts as started."""

    async def stopped(self) -> None:
        """Clean-up after the mailbox closed and every message in it was handled."""

    async def _deliver(self, envelope: _Envelope[Message]) -> None:
        self._reply(envelope, await self._handled(envelope))

    async def _handled(self, envelope: _Envelope[Message]) -> outcome.Outcome[Any]:
        """The handler's outcome. A cancel of the actor's own task is raised here, its sender
        told the actor ended: handed to the sender, it ended the sender's task (a cancel
        of a scope that task is not in) without a word."""
        result: outcome.Outcome[Any] = await outcome.acapture(self.handle, envelope.message)
        if isinstance(result, outcome.Error) and isinstance(result.error, trio.Cancelled):
            self._refuse(envelope)
            result.unwrap()
        return result

    @staticmethod
    def _reply(envelope: _Envelope[Message], result: outcome.Outcome[Any]) -> None:
        """Answer a request; a told message's error is raised here, ending the actor."""
        if envelope.reply is not None:
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                envelope.reply.send_nowait(result)
        elif isinstance(result, outcome.Error):
            result.unwrap()

    async def request(self, message: Message, *, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """Send `message` and wait for the reply; the handler's exception is raised here."""
        send, receive = trio.open_memory_channel[outcome.Outcome[Any]](1)
        try:
            with trio.fail_after(timeout):
                await self._send(_Envelope(message, send))
                async with receive:
                    try:
                        result = await receive.receive()
                    except trio.EndOfChannel:
                        raise self._closed_error("ended before answering") from None
        except trio.TooSlowError:
            raise RequestTimeoutError(
                f"no reply to {type(message).__name__} in {timeout} s"
            ) from None
        return result.unwrap()

    async def tell(self, message: Message) -> None:
        """Send `message` without waiting for it to be handled."""
        await self._send(_Envelope(message, None))

    def tell_nowait(self, message: Message) -> None:
        self._check_run()
        try:
            self._mailbox.send_nowait(_Envelope(message, None))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            raise self._closed_error("is closed") from None

    async def _send(self, envelope: _Envelope[Message]) -> None:
        """Refused by a closed actor, it still lets other tasks run, as Trio's own calls do:
        the channel refuses without one, and a caller that retries on `ActorClosedError`
        would hold the run loop (its timeout never fired, its actor never stopped)."""
        self._check_run()
        try:
            await self._mailbox.send(envelope)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        else:
            return
        await trio.lowlevel.cancel_shielded_checkpoint()  # `send` checked for a cancel first
        raise self._closed_error("is closed")

    def _check_run(self) -> None:
        """Raise ``RuntimeError`` unless called from the Trio run the actor runs in (if it
        runs): a message sent from another (another thread's ``trio.run``) woke the actor's
        task from the wrong run, failed with a bare ``AssertionError`` inside Trio, and left
        the actor waiting for good (its registry's ``close`` too)."""
        if self._run_token is None:
            return
        try:
            token: trio.lowlevel.TrioToken | None = trio.lowlevel.current_trio_token()
        except RuntimeError:  # no Trio run in this thread
            token = None
        if token is not self._run_token:
            raise RuntimeError(
                f"{self._subject()} was called from outside the Trio run it runs in (from"
                " another thread or another trio.run): call it from a task of that run, or"
                " from a thread that run started (trio.to_thread) with trio.from_thread.run"
            )

    def _subject(self) -> str:
        """The actor, as errors name it."""
        return type(self).__name__

    def _closed_error(self, what: str) -> ActorClosedError:
        """What a sender is told once the actor takes no more messages (`what`: it "is
        closed", or "ended before answering"); an actor that knows why it ended says so."""
        return ActorClosedError(f"{self._subject()} {what}")

    def close(self) -> None:
        """Take no more messages; the actor ends after handling those already sent."""
        self._mailbox.close()

    @property
    def queue_depth(self) -> int:
        return self._inbox.statistics().current_buffer_used


class ReportingStatus:
    """A task status that reports `started` to a callback as well."""

    def __init__(self, on_started: Callable[[Any], None]) -> None:
        self._on_started = on_started

    def started(self, value: Any = None) -> None:
        self._on_started(value)


def single_error(error: BaseException) -> BaseException:
    """The one error inside nested single-member exception groups: what made an actor
    fail to start, raised inside the nurseries it runs in."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error
