"""A launched application does not outlive the server that launched it.

``AtspiSurface`` starts an application in a process group of its own, so that quitting it
reaches its children too; the same separation means nothing ends it when the server is
killed (SIGKILL, the OOM killer): it ran on, unowned, and a resumed session launched a
second copy beside it. ``Reaper`` is a watcher started beside the application: a shell
waiting to read the pipe only the server holds open. Its read ends when the server's end
closes, however the server went, and it then ends the application's group, SIGTERM first.

Why not ``PR_SET_PDEATHSIG``: it fires when the thread that forked the child ends, and
Trio forks in a worker thread that its cache ends after ten idle seconds.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from typing import Final

import attrs
import trio

GRACE_S: Final = 3
WATCH: Final = (
    'read -r _; kill -TERM -"$0" 2>/dev/null || exit 0; sleep {grace};'
    ' kill -KILL -"$0" 2>/dev/null; exit 0'
)
"""The watcher, run by ``sh`` with the group id as ``$0`` (``--`` is not dash's)."""


@attrs.define
class Reaper:
    """The watcher of one process group; `disarm` it before ending the group yourself."""

    _process: trio.Process
    _pipe: int

    @classmethod
    async def watch(cls, group: int) -> Reaper:
        """Start watching `group` (a process group id) on the server's behalf."""
        read, write = os.pipe()
        try:
            process = await trio.lowlevel.open_process(
                ["sh", "-c", WATCH.format(grace=GRACE_S), str(group)],
                stdin=read,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # a Ctrl-C meant for the server is not for it
            )
        except BaseException:
            os.close(write)
            raise
        finally:
            os.close(read)
        return cls(process, write)

    async def disarm(self) -> None:
        """End the watcher without it touching the group: the server ends it itself, and
        a group id whose processes are gone may be another's later."""
        if self._pipe < 0:
            return
        with contextlib.suppress(ProcessLookupError):
            self._process.kill()
        with trio.CancelScope(shield=True):
            await self._process.wait()
        os.close(self._pipe)
        self._pipe = -1
