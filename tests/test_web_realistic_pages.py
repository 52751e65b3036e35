"""Pages as sites write them, served to an agent through the MCP bridge."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from semledger.adapters._web import WebBrowser
from semledger.runtime import Full, Role

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from served_pages import full_read, hosted, served

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
}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served(tmp_path_factory.mktemp("realistic"), PAGES) as url:
        yield url


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
