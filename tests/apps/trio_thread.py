"""A Trio test run on a thread of its own: code shielded from cancellation cannot be ended by
a `trio.fail_after`, so a loop that hangs fails the test after a real-time limit instead of
hanging the suite."""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable

import trio


def run_watched(
    main: Callable[[], Awaitable[None]],
    *,
    seconds: float = 10.0,
    what: str = "the loop",
    clock: trio.abc.Clock | None = None,
) -> None:
    """`trio.run(main)` on a thread; a failure if it has not ended within `seconds` real
    seconds, and whatever it raised otherwise."""
    failures: list[BaseException] = []

    def target() -> None:
        try:
            trio.run(main, clock=clock)
        except BaseException as error:
            failures.append(error)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"{what} was still running after {seconds} s"
    if failures:
        raise failures[0]
