"""Dismiss presses Escape, which closes a ``<dialog>`` shown modal and not one shown with
``show()``: the bridge offers it only where it can close the dialog."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import trio

from semledger.adapters import SnapshotNode, build_snapshot
from semledger.adapters._web import WebBrowser
from semledger.hosts import SurfaceAgentHost
from semledger.runtime import (
    ActionKind,
    BySemanticId,
    ErrorCode,
    Full,
    Latest,
    Receipt,
    Rejection,
    Role,
    SemanticId,
    SimpleAction,
)

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from served_pages import HANG_GUARD_S, full_read, hosted, written

DISMISS = SimpleAction(ActionKind.DISMISS)


class _Dialogs:
    """A surface whose document holds a non-modal ``<dialog>``, an ARIA dialog and a frame
    whose document holds a ``<dialog>`` (a frame's modal, which the surface leaves
    ``modal`` off)."""

    async def snapshot(self, **options: Any) -> Any:
        def dialog(ref: str, parent: str, depth: int, tag: str) -> SnapshotNode:
            native = {"tag": tag, "id": ref, "focusable": "true"}
            return SnapshotNode(ref=ref, role="dialog", depth=depth, parent=parent, native=native)

        return build_snapshot(
            "doc",
            [
                SnapshotNode(ref="doc", role="document", depth=0, native={"tag": "body"}),
                dialog("shown", "doc", 1, "dialog"),
                dialog("aria", "doc", 1, "div"),
                SnapshotNode(ref="frame", role="generic", depth=1, parent="doc"),
                SnapshotNode(ref="inner", role="document", depth=2, parent="frame"),
                dialog("framed", "inner", 3, "dialog"),
            ],
        )


async def test_a_dialog_escape_cannot_close_is_offered_no_dismiss() -> None:
    host = SurfaceAgentHost(_Dialogs())  # type: ignore[arg-type]
    read = await host.read_semantics(None)
    assert isinstance(read, Full)
    offers = {n.semantic_id: n.actions for n in read.nodes if n.role is Role.DIALOG}
    assert ActionKind.DISMISS not in offers["shown"]
    assert ActionKind.DISMISS in offers["aria"]  # its page's script may close it on Escape
    assert ActionKind.DISMISS in offers["framed"]


PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Dialogs</title></head><body>
<dialog id="tip" aria-label="Tip"><p>Shown with show()</p><button id="ok">OK</button></dialog>
<dialog id="ask" aria-label="Ask"><p>Shown with showModal()</p><button>Yes</button></dialog>
<button id="open" onclick="document.getElementById('ask').showModal()">Ask</button>
<script>document.getElementById("tip").show();</script>
</body></html>
"""


async def test_dismiss_is_offered_on_a_modal_dialog_and_not_on_one_shown_with_show(
    browser: WebBrowser, tmp_path: Path
) -> None:
    url = written(tmp_path, {"dialogs.html": PAGE}) + "dialogs.html"
    async with hosted(browser, url) as host:
        tip = next(n for n in (await full_read(host)).nodes if n.semantic_id == "tip")
        assert ActionKind.DISMISS not in tip.actions
        with trio.fail_after(HANG_GUARD_S):
            refused = await host.perform_action(
                BySemanticId(SemanticId("tip")), DISMISS, Latest()
            )
        assert isinstance(refused, Rejection), refused
        assert refused.code is ErrorCode.ACTION_UNAVAILABLE
        with trio.fail_after(HANG_GUARD_S):
            opened = await host.perform_action(
                BySemanticId(SemanticId("open")), SimpleAction(ActionKind.ACTIVATE), Latest()
            )
        assert isinstance(opened, Receipt), opened
        ask = (await full_read(host)).nodes[0]
        assert (ask.semantic_id, ask.state.modal) == ("ask", True)
        assert ActionKind.DISMISS in ask.actions
        with trio.fail_after(HANG_GUARD_S):
            closed = await host.perform_action(BySemanticId(SemanticId("ask")), DISMISS, Latest())
        assert isinstance(closed, Receipt), closed
        after = await full_read(host)
        assert "ask" not in {n.semantic_id for n in after.nodes}
        assert "tip" in {n.semantic_id for n in after.nodes}
