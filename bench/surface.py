"""The runtime adapter's snapshot cost on the 10,000-node view of bench/commit.py.

`runtime_snapshot_over_read_semantics_full` compares the adapter's `snapshot()` (ARIA roles,
states, refs, rendering and structural hash) with what a Full `read_semantics` costs on the
same app (`runtime.read()` and `encode_read`), measured in the same run.
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
from commit import APP

from semledger.adapters import RuntimeSurface
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
    await surface.close()
    return {
        "nodes": nodes,
        "snapshot_nodes": len(snap.nodes),
        "runtime_snapshot_10k_ms": snapshot_s * 1000,
        "read_semantics_full_10k_ms": full_s * 1000,
        "runtime_snapshot_over_read_semantics_full": snapshot_s / full_s,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    figures = trio.run(_measure, args.rounds)
    goals = {"runtime_snapshot_over_read_semantics_full": "at most 1.5"}
    emit("surface", figures, goals, as_json=args.json)


if __name__ == "__main__":
    main()
