"""A ``<dialog>``'s ``closedby`` says whether Escape, which dismiss presses, closes it:
``any`` or ``closerequest`` do, shown with ``show()`` or not; ``none`` does not, even modal."""

from __future__ import annotations

import sys
from pathlib import Path

import trio

from semledger.adapters._web import WebBrowser
from semledger.runtime import (
    ActionKind,
    BySemanticId,
    ErrorCode,
    Latest,
    Receipt,
    Rejection,
    SemanticId,
    SimpleAction,
)

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from served_pages import HANG_GUARD_S, full_read, hosted, written

PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Dialogs</title></head><body>
<dialog id="tip" aria-label="Tip"><p>Shown with show()</p><button>OK</button></dialog>
<dialog id="news" aria-label="News" closedby="any"><p>Light dismiss</p><button>OK</button>
</dialog>
<dialog id="must" aria-label="Must" closedby="none"><p>Modal</p><button>Done</button></dialog>
<button id="open" onclick="document.getElementById('must').showModal()">Open</button>
<script>document.getElementById("tip").show(); document.getElementById("news").show();</script>
</body></html>
"""


async def test_dismiss_follows_a_dialogs_closedby(browser: WebBrowser, tmp_path: Path) -> None:
    """A dialog shown with ``show()`` and ``closedby="any"`` closes on Escape, yet was
    refused dismiss (``action_unavailable``) as one with no ``closedby`` is."""
    url = written(tmp_path, {"dialogs.html": PAGE}) + "dialogs.html"
    async with hosted(browser, url) as host:
        offers = {n.semantic_id: n.actions for n in (await full_read(host)).nodes}
        assert ActionKind.DISMISS in offers["news"]
        assert ActionKind.DISMISS not in offers["tip"]
        with trio.fail_after(HANG_GUARD_S):
            closed = await host.perform_action(
                BySemanticId(SemanticId("news")), SimpleAction(ActionKind.DISMISS), Latest()
            )
            assert isinstance(closed, Receipt), closed
            shown = {n.semantic_id for n in (await full_read(host)).nodes}
            assert "news" not in shown
            assert "tip" in shown
            opened = await host.perform_action(
                BySemanticId(SemanticId("open")), SimpleAction(ActionKind.ACTIVATE), Latest()
            )
            assert isinstance(opened, Receipt), opened
            must = (await full_read(host)).nodes[0]
            assert (must.semantic_id, must.state.modal) == ("must", True)
            assert ActionKind.DISMISS not in must.actions  # closedby="none": Escape does nothing
            refused = await host.perform_action(
                BySemanticId(SemanticId("must")), SimpleAction(ActionKind.DISMISS), Latest()
            )
        assert isinstance(refused, Rejection), refused
        assert refused.code is ErrorCode.ACTION_UNAVAILABLE
