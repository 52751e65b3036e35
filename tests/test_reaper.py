"""`Reaper`: a launched application's process group ends when the server's end of the
watcher's pipe closes (the server is gone), and is left alone once disarmed."""

from __future__ import annotations

import os

import trio

from semledger.adapters._reaper import Reaper


async def _group() -> trio.Process:
    return await trio.lowlevel.open_process(["sleep", "60"], start_new_session=True)


async def test_the_group_ends_when_the_servers_end_of_the_pipe_closes() -> None:
    group = await _group()
    reaper = await Reaper.watch(group.pid)
    os.close(reaper._pipe)  # what the kernel does for a server that is killed
    reaper._pipe = -1
    with trio.fail_after(10):
        assert await group.wait() == -15  # SIGTERM first


async def test_a_disarmed_reaper_leaves_the_group_alone() -> None:
    group = await _group()
    try:
        reaper = await Reaper.watch(group.pid)
        await reaper.disarm()
        await reaper.disarm()
        await trio.sleep(0.3)
        assert group.poll() is None
    finally:
        group.kill()
        await group.wait()
