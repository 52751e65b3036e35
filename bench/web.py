"""The web adapter on one page of 2,000 elements (issue 6).

``snapshot_over_playwright_aria_snapshot``: the adapter's ``snapshot()`` time over
Playwright's own ``locator("body").aria_snapshot()`` on the same page, both run through
the same browser thread (median of several runs each, after a warm-up).
``click_round_trip_ms``: ``act("click", ref)`` from Trio, resolving the ref, clicking and
letting the page draw its next frame.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import trio
from _report import emit

from semledger.adapters import SessionInit
from semledger.adapters._cases_web import serve_directory
from semledger.adapters._web import WebSurface

ELEMENTS = 2000
RUNS = 9


def _page() -> str:
    rows = []
    # 8 elements per row: section, heading, paragraph, strong, input+label, button, link.
    for i in range(ELEMENTS // 8):
        rows.append(
            f'<section aria-label="Row {i}"><h3>Row {i}</h3><p>Text of row {i} with'
            f' <strong>bold</strong> words.</p><label for="f{i}">Field {i}</label>'
            f'<input id="f{i}" value="v{i}"><button data-testid="b{i}">Button {i}</button>'
            f'<a href="#r{i}">Link {i}</a></section>'
        )
    return (
        "<!doctype html><html><head><title>Bench</title></head><body>"
        '<p id="count">0</p><button id="go" onclick="count.textContent = +count.textContent + 1">'
        "Go</button>" + "".join(rows) + "</body></html>"
    )


async def _measure() -> dict[str, float | int | None]:
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "bench.html").write_text(_page())
        with serve_directory(tmp) as base:
            surface = WebSurface({})
            await surface.open(SessionInit(base_url=base + "bench.html"))
            try:
                elements = await surface.act(
                    "evaluate", args={"script": "document.body.querySelectorAll('*').length"}
                )

                async def aria() -> str:
                    page = surface._require_page()
                    return await page.locator("body").aria_snapshot()

                ours: list[float] = []
                theirs: list[float] = []
                await surface.snapshot()
                await surface.browser.call(aria)
                for _ in range(RUNS):
                    started = time.perf_counter()
                    snap = await surface.snapshot()
                    ours.append(time.perf_counter() - started)
                    started = time.perf_counter()
                    await surface.browser.call(aria)
                    theirs.append(time.perf_counter() - started)
                (go,) = await surface.locate({"by": "id", "value": "go"})
                await surface.act("click", go)
                clicks: list[float] = []
                for _ in range(RUNS * 2):
                    started = time.perf_counter()
                    await surface.act("click", go)
                    clicks.append(time.perf_counter() - started)
            finally:
                await surface.close()
    return {
        "elements": int(str(elements.result)),
        "snapshot_nodes": len(snap.nodes),
        "snapshot_ms": round(statistics.median(ours) * 1000, 2),
        "playwright_aria_snapshot_ms": round(statistics.median(theirs) * 1000, 2),
        "snapshot_over_playwright_aria_snapshot": round(
            statistics.median(ours) / statistics.median(theirs), 3
        ),
        "click_round_trip_ms": round(statistics.median(clicks) * 1000, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    figures = trio.run(_measure)
    emit(
        "web",
        figures,
        {"snapshot_over_playwright_aria_snapshot": "at most 1.5"},
        [
            "Both snapshots go through the adapter's browser thread; medians of"
            f" {RUNS} runs after a warm-up; {RUNS * 2} clicks on one button.",
            "A click returns once the page has drawn its next frame after it (what the"
            " handler queued is then in the snapshot): about 17 ms of it at 60 frames/s.",
        ],
        as_json=args.json,
    )


if __name__ == "__main__":
    main()
