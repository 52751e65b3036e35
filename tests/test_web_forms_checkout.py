"""A realistic checkout form through the MCP bridge: fields whose page rewrites what is typed
(a coupon upper-cased, a phone number formatted) read back as the page holds them, a checkbox
hidden in its label toggles without following the label's link, a ``<select multiple>`` adds
and toggles its options, read-only and disabled fields are offered no set_text, and an email
the browser's validation refuses says why once the user has moved on."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from semledger.adapters._web import WebBrowser
from semledger.hosts import SurfaceAgentHost
from semledger.runtime import (
    ActionKind,
    ByNodeId,
    Checked,
    ErrorCode,
    Full,
    Latest,
    Receipt,
    Rejection,
    Role,
    SemanticsNode,
    SetText,
    SimpleAction,
)

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from served_pages import full_read, hosted, served

CHECKOUT = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Checkout</title>
<style>
  .visually-hidden { position: absolute; width: 1px; height: 1px; margin: -1px; padding: 0;
    overflow: hidden; clip: rect(0 0 0 0); border: 0; }
  .box { display: inline-block; width: 16px; height: 16px; border: 1px solid #333; }
</style></head>
<body>
<form onsubmit="event.preventDefault()">
<label>Coupon <input id="coupon" oninput="this.value = this.value.toUpperCase()"></label>
<label>Phone <input id="phone" type="tel" maxlength="14"></label>
<label>Email <input id="email" type="email"></label>
<label>Order number <input id="order" readonly value="A-1001"></label>
<label>Gift card <input id="gift" disabled></label>
<label>Extras <select id="extras" multiple>
  <option>Gift wrap</option><option>Card</option><option>Express</option></select></label>
<label><input type="checkbox" class="visually-hidden" id="agree"><span class="box"></span>
  I agree to <a href="#policy">the privacy policy</a> here</label>
</form>
<script>
  phone.addEventListener("input", () => {
    const d = phone.value.replace(/\\D/g, "").slice(0, 10);
    phone.value = d.length > 6 ? "(" + d.slice(0, 3) + ") " + d.slice(3, 6) + "-" + d.slice(6)
      : d.length > 3 ? "(" + d.slice(0, 3) + ") " + d.slice(3) : d;
  });
</script>
</body></html>
"""


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served(tmp_path_factory.mktemp("checkout"), {"checkout.html": CHECKOUT}) as url:
        yield url


@pytest.fixture
async def checkout(browser: WebBrowser, pages: str) -> AsyncIterator[SurfaceAgentHost]:
    async with hosted(browser, pages + "checkout.html") as host:
        yield host


def _node(full: Full, label: str) -> SemanticsNode:
    return next(n for n in full.nodes if n.label == label and n.role is not Role.TEXT)


async def _do(
    host: SurfaceAgentHost, label: str, action: SetText | SimpleAction
) -> tuple[Receipt | Rejection, Full]:
    node = _node(await full_read(host), label)
    done = await host.perform_action(ByNodeId(node.node_id), action, Latest())
    return done, await full_read(host)


async def test_a_field_the_page_rewrites_reads_back_as_the_page_holds_it(
    checkout: SurfaceAgentHost,
) -> None:
    for label, typed, held in (
        ("Coupon", "save10", "SAVE10"),
        ("Phone", "5551234567", "(555) 123-4567"),
    ):
        done, after = await _do(checkout, label, SetText(typed))
        assert isinstance(done, Receipt), done
        assert _node(after, label).value == held


async def test_an_email_the_browser_refuses_is_invalid_saying_why_once_the_user_moves_on(
    checkout: SurfaceAgentHost,
) -> None:
    done, _ = await _do(checkout, "Email", SetText("ada.example.org"))
    assert isinstance(done, Receipt), done
    _, after = await _do(checkout, "Coupon", SetText("x"))
    email = _node(after, "Email")
    assert (email.value, email.state.invalid) == ("ada.example.org", True)
    assert email.description is not None
    assert "@" in email.description


async def test_read_only_and_disabled_fields_are_offered_no_set_text(
    checkout: SurfaceAgentHost,
) -> None:
    full = await full_read(checkout)
    order, gift = _node(full, "Order number"), _node(full, "Gift card")
    assert order.state.read_only
    assert ActionKind.SET_TEXT not in order.actions
    assert gift.state.disabled
    refused, after = await _do(checkout, "Order number", SetText("B-2"))
    assert isinstance(refused, Rejection)
    assert refused.code is ErrorCode.ACTION_UNAVAILABLE
    disabled, _ = await _do(checkout, "Gift card", SetText("1234"))
    assert isinstance(disabled, Rejection)
    assert disabled.code is ErrorCode.TARGET_DISABLED
    assert _node(after, "Order number").value == "A-1001"


async def test_a_checkbox_hidden_in_its_label_toggles_without_following_the_labels_link(
    checkout: SurfaceAgentHost,
) -> None:
    label = "I agree to the privacy policy here"
    done, after = await _do(checkout, label, SimpleAction(ActionKind.ACTIVATE))
    assert isinstance(done, Receipt), done
    assert _node(after, label).state.checked is Checked.CHECKED
    root = next(n for n in after.nodes if n.role is Role.WEB_VIEW)
    assert root.url is not None
    assert not root.url.endswith("#policy")


async def test_a_multiple_select_adds_with_select_and_toggles_with_activate(
    checkout: SurfaceAgentHost,
) -> None:
    for label, kind in (
        ("Gift wrap", ActionKind.SELECT),
        ("Express", ActionKind.SELECT),
        ("Gift wrap", ActionKind.ACTIVATE),
    ):
        done, after = await _do(checkout, label, SimpleAction(kind))
        assert isinstance(done, Receipt), done
    chosen = [n.label for n in after.nodes if n.role is Role.OPTION and n.state.selected]
    assert chosen == ["Express"]
