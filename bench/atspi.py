"""Snapshot cost of the atspi adapter on gtk3-widget-factory (issue 7).

One run: a private desktop (Xvfb, session bus, AT-SPI registry) with gtk3-widget-factory,
the adapter's ``snapshot()`` timed (median of several, after one warm-up), and the peer: a
plain pyatspi recursive walk of the same tree (role name, name, states and extents per
node) run by the system python3 in a subprocess that times only the walk.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import time

import trio
from _report import emit

from semledger.adapters import Launch, SessionInit, create_surface
from semledger.adapters._atspi_desktop import SYSTEM_PYTHON, WIDGET_FACTORY, PrivateDesktop

REPEATS = 7

WALK = r"""
import json, statistics, sys, time
import pyatspi

def walk(accessible):
    count = 1
    accessible.getRoleName(); accessible.name; accessible.getState().getStates()
    try:
        accessible.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
    except NotImplementedError:
        pass
    for child in accessible:
        if child is not None:
            count += walk(child)
    return count

desktop = pyatspi.Registry.getDesktop(0)
app = next(a for a in desktop if a is not None and a.name == sys.argv[1])
walk(app)
times, count = [], 0
for _ in range(int(sys.argv[2])):
    started = time.perf_counter()
    count = walk(app)
    times.append(time.perf_counter() - started)
print(json.dumps({"ms": 1000 * statistics.median(times), "nodes": count}))
"""


async def _adapter(desktop: PrivateDesktop) -> tuple[float, int, str]:
    surface = create_surface({"adapter": "atspi", **desktop.surface_config})
    await surface.open(SessionInit(launch=Launch(WIDGET_FACTORY)))
    try:
        await trio.sleep(1.0)
        await surface.snapshot()
        times = []
        nodes = 0
        for _ in range(REPEATS):
            started = time.perf_counter()
            snap = await surface.snapshot()
            times.append(time.perf_counter() - started)
            nodes = len(snap.nodes)
        name = surface.application.name  # type: ignore[attr-defined]
        walk = await trio.to_thread.run_sync(_walk, desktop, name)
        return 1000 * statistics.median(times), nodes, json.dumps(walk)
    finally:
        await surface.close()


def _walk(desktop: PrivateDesktop, name: str) -> dict[str, float]:
    out = subprocess.run(
        [SYSTEM_PYTHON, "-c", WALK, name, str(REPEATS)],
        env=desktop.env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with PrivateDesktop() as desktop:
        ms, nodes, walk_json = trio.run(_adapter, desktop)
    walk = json.loads(walk_json)
    figures = {
        "snapshot_widget_factory_ms": round(ms, 2),
        "snapshot_widget_factory_nodes": nodes,
        "pyatspi_walk_ms": round(walk["ms"], 2),
        "pyatspi_walk_nodes": int(walk["nodes"]),
        "snapshot_over_pyatspi_walk": round(ms / walk["ms"], 3),
    }
    goals = {"snapshot_over_pyatspi_walk": "<= 1.0"}
    notes = [
        f"Medians of {REPEATS} after a warm-up, same tree, same private desktop. The walk"
        " reads role name, name, states and extents per node through pyatspi (system"
        " python3); the snapshot also maps roles and states, reads automation ids, text and"
        " values, and builds the rendering and hash.",
    ]
    emit("atspi", figures, goals, notes, as_json=args.json)


if __name__ == "__main__":
    main()
