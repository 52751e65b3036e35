"""Pages as sites write them, served to an agent through the MCP bridge."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from semledger.adapters._web import WebBrowser
from semledger.hosts import SurfaceAgentHost
from semledger.runtime import (
    ActionKind,
    ByNodeId,
    ErrorCode,
    Full,
    Latest,
    Receipt,
    Rejection,
    Role,
    SemanticsNode,
    SimpleAction,
)

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from served_pages import HANG_GUARD_S, full_read, hosted, served

PAGES = {
    # A grid whose rows are display: contents (the usual subgrid-free layout), and a nav
    # the page lays out as if it were not there.
    "contents.html": """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Store</title><style>.grid { display: grid; grid-template-columns: 1fr 1fr }
.row { display: contents }</style></head><body>
<nav aria-label="Main" style="display: contents"><a href="#home">Home</a></nav>
<ul class="grid" aria-label="Products">
  <li class="row"><span>Tea</span><button>Add tea</button></li>
</ul>
<div style="display: none"><nav aria-label="Gone" style="display: contents">
  <a href="#gone">Gone</a></nav></div>
</body></html>""",
    # Parts of labels and buttons the page hides, as responsive and toggling ones do.
    "hidden_parts.html": """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Sign in</title><style>.hint { display: none } .spinner { visibility: hidden }</style>
</head><body>
<label for="email">Email <span class="hint">(we never share it)</span></label>
<input id="email" type="email">
<button aria-expanded="false"><span>Show</span><span style="display: none">Hide</span>
  password</button>
<button><span class="spinner">Signing in</span> Sign in</button>
<span id="search-label" hidden>Search the <span hidden>whole</span> site</span>
<input aria-labelledby="search-label">
</body></html>""",
    # A select whose change handler runs a search, counted.
    "country.html": """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Shipping</title></head><body>
<label for="country">Country</label>
<select id="country" onchange="searches.textContent = +searches.textContent + 1">
  <option value="">Pick one</option><option value="fr">France</option>
  <option value="de">Germany</option></select>
<p>Searches: <output id="searches">0</output></p>
</body></html>""",
    # A cookie banner over the whole page, a dialog that is not modal.
    "banner.html": """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Shop</title><style>#banner { position: fixed; inset: 0 }</style></head><body>
<button>Buy now</button>
<div id="banner" role="dialog" aria-label="Cookies"><p>We use cookies.</p>
  <button onclick="banner.remove()">Accept</button></div>
</body></html>""",
}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served(tmp_path_factory.mktemp("realistic"), PAGES) as url:
        yield url


def _one(full: Full, role: Role, label: str | None) -> SemanticsNode:
    (node,) = [n for n in full.nodes if (n.role, n.label) == (role, label)]
    return node


async def _do(host: SurfaceAgentHost, node: SemanticsNode, kind: ActionKind) -> Receipt:
    with trio.fail_after(HANG_GUARD_S):
        outcome = await host.perform_action(ByNodeId(node.node_id), SimpleAction(kind), Latest())
    assert isinstance(outcome, Receipt), outcome
    return outcome


def _shown(full: Full) -> set[tuple[Role, str | None]]:
    """The role and label of each node the agent is shown (the bridge leaves hidden ones out)."""
    return {(n.role, n.label) for n in full.nodes}


async def test_content_in_display_contents_wrappers_is_shown_to_the_agent(
    browser: WebBrowser, site: str
) -> None:
    """An element laid out with ``display: contents`` has no box of its own, which the
    snapshot took for hidden: the nav, its links, the list's items and their buttons were
    left out of the agent's tree, though a person sees them all. Its frame is what its
    children cover."""
    async with hosted(browser, site + "contents.html") as host:
        full = await full_read(host)
    shown = _shown(full)
    assert {
        (Role.NAVIGATION, "Main"), (Role.LINK, "Home"), (Role.LIST_ITEM, None),
        (Role.TEXT, "Tea"), (Role.BUTTON, "Add tea"),
    } <= shown  # fmt: skip
    assert not {(Role.NAVIGATION, "Gone"), (Role.LINK, "Gone")} & shown
    (nav,) = [n for n in full.nodes if n.role is Role.NAVIGATION]
    assert min(nav.frame.size.width, nav.frame.size.height) > 0  # its link's box


async def test_what_a_page_hides_in_a_label_or_a_button_is_no_part_of_its_name(
    browser: WebBrowser, site: str
) -> None:
    """The text of a label's or a button's hidden parts (display: none, visibility: hidden)
    was read into the name: "Show Hide password", "Email (we never share it)". A hidden
    element that aria-labelledby names is still read whole, as Chromium reads it."""
    async with hosted(browser, site + "hidden_parts.html") as host:
        full = await full_read(host)
    names = {(n.role, n.label) for n in full.nodes}
    assert {
        (Role.TEXT_FIELD, "Email"), (Role.BUTTON, "Show password"), (Role.BUTTON, "Sign in"),
        (Role.TEXT_FIELD, "Search the whole site"),
    } <= names  # fmt: skip


async def test_choosing_the_option_a_select_shows_changes_nothing(
    browser: WebBrowser, site: str
) -> None:
    """Choosing Germany again, as an agent retrying its step does, ran the page's change
    handler again (a second search) and advanced the generation, though nothing a person
    could do with the select would have: a select sends no change for the option it shows."""
    async with hosted(browser, site + "country.html") as host:
        germany = _one(await full_read(host), Role.OPTION, "Germany")
        first = await _do(host, germany, ActionKind.SELECT)
        again = await _do(host, germany, ActionKind.SELECT)
        full = await full_read(host)
    assert first.after != first.before
    assert again.after == again.before
    assert _one(full, Role.COMBO_BOX, "Country").value == "Germany"
    (count,) = _one(full, Role.STATUS, None).children
    assert [n.label for n in full.nodes if n.node_id == count] == ["1"]


async def test_an_element_a_banner_covers_is_refused_naming_the_banner_as_the_page_wrote_it(
    browser: WebBrowser, site: str
) -> None:
    """The refusal quoted the banner with the adapter's ref stamp in it
    (``data-semledger-ref="e3"``), an attribute the page never wrote and no id of the
    agent's."""
    # Time for Playwright's first look at what the click would hit on a loaded machine.
    async with hosted(browser, site + "banner.html", timeout_ms=3000) as host:
        buy = _one(await full_read(host), Role.BUTTON, "Buy now")
        with trio.fail_after(HANG_GUARD_S):
            refused = await host.perform_action(
                ByNodeId(buy.node_id), SimpleAction(ActionKind.ACTIVATE), Latest()
            )
    assert isinstance(refused, Rejection), refused
    assert refused.code is ErrorCode.HANDLER_REJECTED
    assert refused.message == (
        "the element could not take activate within 3000 ms: another element,"
        ' <div id="banner" role="dialog" aria-label="Cookies">…</div>, covers it'
    )
