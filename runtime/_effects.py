"""Running effects as Trio tasks: the only part of the runtime that touches Trio.

Trio is imported when a runner is made, not when the runtime is, so the pure core (and the
router, which reads its types) loads without it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ._app import Effect
from ._errors import app_failed
from ._runtime import AppRuntime

if TYPE_CHECKING:
    import trio

_log = logging.getLogger("semledger.runtime")


def _shown(value: object) -> str:
    return f"{type(value).__name__} {value!r:.80}"


class EffectRunner:
    """Starts a runtime's effects in a nursery and feeds each result back as an input.

    ``on_result`` sees every finished effect before its message is delivered (a session actor
    logs it there); by default the message goes straight to `AppRuntime.complete_effect`.

    An effect that raises (anything but Trio's cancellation and Ctrl-C, as in a session)
    only ends its pending work: ``on_result`` gets None for it, the error is kept in
    `failures` and logged as a warning, and the nursery and the other effects in it go on.
    """

    def __init__(
        self,
        runtime: AppRuntime[Any, Any],
        nursery: trio.Nursery,
        *,
        on_result: Callable[[int, Any], None] | None = None,
    ) -> None:
        import trio

        if not isinstance(runtime, AppRuntime):
            raise TypeError(f"runtime: expected an AppRuntime, got {_shown(runtime)}")
        if not callable(getattr(nursery, "start_soon", None)):
            raise TypeError(
                "nursery: expected a Trio nursery (async with trio.open_nursery() as nursery),"
                f" got {_shown(nursery)}"
            )
        if on_result is not None and not callable(on_result):
            raise TypeError(
                f"on_result: expected a function of an effect id and its message, or None,"
                f" got {_shown(on_result)}"
            )
        self._event = trio.Event
        self._runtime = runtime
        self._nursery = nursery
        self._on_result = on_result or runtime.complete_effect
        self._idle = trio.Event()
        self._running = 0
        self.failures: dict[int, BaseException] = {}
        """What each effect that raised raised, by effect id."""

    def start_pending(self) -> int:
        """Start every effect the runtime has handed out; returns how many were started."""
        started = 0
        for effect_id, effect in self._runtime.take_effects():
            self._running += 1
            if self._idle.is_set():
                # Replace only a spent event: a waiter may be parked on the current one.
                self._idle = self._event()
            self._nursery.start_soon(self._run, effect_id, effect, name=effect.name)
            started += 1
        return started

    async def _run(self, effect_id: int, effect: Effect[Any]) -> None:
        try:
            try:
                message = await effect.result()
            except BaseException as error:
                if not app_failed(error):
                    raise
                self.failures[effect_id] = error
                _log.warning(
                    "effect %d (%s) failed: the app gets no message for it",
                    effect_id, effect.name, exc_info=error,
                )
                self._on_result(effect_id, None)  # its pending work ends
                return
            self._on_result(effect_id, message)
            self.start_pending()
        finally:
            self._running -= 1
            if self._running == 0:
                self._idle.set()

    async def wait_idle(self) -> None:
        """Wait until no effect is running (new ones started meanwhile are waited for too)."""
        while self._running:
            await self._idle.wait()
