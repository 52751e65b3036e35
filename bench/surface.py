"""The runtime adapter's snapshot cost on the 10,000-node view of bench/commit.py.

`runtime_snapshot_over_read_semantics_full` compares the adapter's `snapshot()` (ARIA roles,
states, refs, rendering and structural hash) with what a Full `read_semantics` costs on the
same app (`runtime.read()` and `encode_read`), measured in the same run.

`bridge_delta_read_over_adapter_snapshot` is what the MCP bridge (`SurfaceAgentHost`) adds
when an agent reads after one leaf changed: its `read_semantics(since)`, which takes the
adapter's snapshot and turns it into a Delta, against that snapshot alone. 1 means the bridge
costs nothing beyond the snapshot it must take; its own work grows with what changed.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections.abc import Callable
from typing import Any

import trio
from _report import emit
from commit import APP, FAN, LEAVES, Change

from semledger.adapters import RuntimeSurface
from semledger.hosts import SurfaceAgentHost
from semledger.runtime import Delta, Full
from semledger.runtime._wire import encode_read


def _median(fn: Callable[[], Any], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


async def _measure(rounds: int) -> dict[str, float | int]:
    surface = RuntimeSurface(APP, "bench/commit.py:APP")
    await surface.open({})
    runtime = surface.runtime
    committed = runtime.snapshot
    nodes = len(committed.nodes)
    gc.collect()
    snapshot_s = _median(lambda: surface.build(committed), rounds)
    full_s = _median(lambda: encode_read(runtime.read(None)), rounds)  # type: ignore[arg-type]
    snap = await surface.snapshot()
    bridge_s, alone_s = await _bridge_reads(surface, rounds)
    await surface.close()
    return {
        "nodes": nodes,
        "snapshot_nodes": len(snap.nodes),
        "runtime_snapshot_10k_ms": snapshot_s * 1000,
        "read_semantics_full_10k_ms": full_s * 1000,
        "runtime_snapshot_over_read_semantics_full": snapshot_s / full_s,
        "bridge_delta_read_after_one_change_ms": bridge_s * 1000,
        "adapter_snapshot_after_one_change_ms": alone_s * 1000,
        "bridge_delta_read_over_adapter_snapshot": bridge_s / alone_s,
    }


async def _bridge_reads(surface: RuntimeSurface, rounds: int) -> tuple[float, float]:
    """Median seconds of the bridge's read after one leaf changed, and of the adapter's
    snapshot after one leaf changed, taking turns."""
    runtime = surface.runtime
    host = SurfaceAgentHost(surface)
    first = await host.read_semantics(None)
    assert isinstance(first, Full)
    seen = first.generation
    bridge: list[float] = []
    alone: list[float] = []
    for i in range(rounds):
        path = (i % FAN, (i * 3) % FAN, (i * 7) % FAN, i % LEAVES)
        runtime.deliver(Change(path, 1000 + i))
        start = time.perf_counter()
        read = await host.read_semantics(seen)
        bridge.append(time.perf_counter() - start)
        assert isinstance(read, Delta), read
        assert read.upserted, read
        seen = read.to_generation
        runtime.deliver(Change(path, 2000 + i))
        start = time.perf_counter()
        await surface.snapshot()
        alone.append(time.perf_counter() - start)
    return statistics.median(bridge), statistics.median(alone)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    figures = trio.run(_measure, args.rounds)
    goals = {
        "runtime_snapshot_over_read_semantics_full": "at most 1.5",
        "bridge_delta_read_over_adapter_snapshot": "at most 1.5",
    }
    notes = [
        f"Medians of {args.rounds} runs. Bridge reads: a leaf of the 10,000-node view changed"
        " (`Change` delivered to the runtime), then `SurfaceAgentHost.read_semantics(since)`"
        " answering the Delta, taking turns with the adapter's `snapshot()` after another"
        " change: the bridge's own work is the difference.",
    ]
    emit("surface", figures, goals, notes, as_json=args.json)


if __name__ == "__main__":
    main()
