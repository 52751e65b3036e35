"""Web pages built the ways pages are built: web components (shadow roots, slots), ARIA
menus, forms that submit or fail the browser's validation, inert and busy content."""

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
    ErrorCode,
    Full,
    Latest,
    Receipt,
    Rejection,
    Role,
    SemanticsAction,
    SemanticsNode,
    SetText,
    SimpleAction,
)

sys.path.insert(0, str(Path(__file__).parent / "apps"))
from served_pages import hosted, served

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Components</title>
<script>
  customElements.define("x-button", class extends HTMLElement {
    constructor() {
      super();
      this.attachShadow({mode: "open"}).innerHTML = "<button><slot>Fallback</slot></button>";
    }
  });
  customElements.define("x-field", class extends HTMLElement {
    constructor() {
      super();
      this.attachShadow({mode: "open"}).innerHTML =
        '<label for="input">Field</label><input id="input">';
    }
  });
</script></head>
<body>
<x-button>Save</x-button><x-button></x-button>
<x-field></x-field><x-field></x-field>
<div role="menu" aria-label="Edit">
  <div role="menuitem" onclick="said.textContent = 'cut'">Cut</div>
  <div role="menuitem" onclick="said.textContent = 'copied'">Copy</div>
  <div role="menuitem" onclick="said.textContent = 'pasted'">Paste</div>
</div>
<form aria-label="Sign up" onsubmit="event.preventDefault(); said.textContent = 'signed up'">
  <input aria-label="Nick"></form>
<form aria-label="Mail" onsubmit="event.preventDefault(); said.textContent = 'sent'">
  <input type="email" aria-label="Email" required><button>Send</button></form>
<form aria-label="Login"
      onsubmit="event.preventDefault(); said.textContent = 'in by ' + event.submitter.textContent">
  <input aria-label="User"><div hidden><button>Advanced</button></div>
  <button type="submit">Sign in</button></form>
<form aria-label="Closed" onsubmit="event.preventDefault(); said.textContent = 'closed sent'">
  <input aria-label="Why"><div hidden><button disabled>Go</button></div></form>
<div inert><button>Behind</button></div>
<button aria-busy="true">Saving</button>
<label>Attach <input type="file"></label>
<p id="said">nothing</p>
</body></html>
"""


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served(tmp_path_factory.mktemp("components"), {"components.html": PAGE}) as url:
        yield url + "components.html"


@pytest.fixture
async def host(browser: WebBrowser, page: str) -> AsyncIterator[SurfaceAgentHost]:
    async with hosted(browser, page) as opened:
        yield opened


async def _full(host: SurfaceAgentHost) -> Full:
    read = await host.read_semantics(None)
    assert isinstance(read, Full)
    return read


def _one(full: Full, role: Role, label: str) -> SemanticsNode:
    (node,) = [n for n in full.nodes if n.role is role and n.label == label]
    return node


def _says(full: Full, text: str) -> bool:
    return any(n.label == text for n in full.nodes)


async def _do(host: SurfaceAgentHost, node: SemanticsNode, action: SemanticsAction) -> Receipt:
    done = await host.perform_action(ByNodeId(node.node_id), action, Latest())
    assert isinstance(done, Receipt), done
    return done


async def test_a_web_components_slotted_text_names_it_and_its_own_ids_stay_its_own(
    host: SurfaceAgentHost,
) -> None:
    """A slot shows what is assigned to it, else its fallback; an id inside a shadow root
    is unique only there, so it is no semantic id."""
    full = await _full(host)
    buttons = [n.label for n in full.nodes if n.role is Role.BUTTON]
    assert buttons[:2] == ["Save", "Fallback"]
    fields = [n for n in full.nodes if n.role is Role.TEXT_FIELD and n.label == "Field"]
    assert [n.semantic_id for n in fields] == [None, None]
    assert full.issues == ()


async def test_a_menu_is_not_activated_as_a_whole_and_its_items_are(
    host: SurfaceAgentHost,
) -> None:
    """A click on the menu would land on whichever item is in its middle."""
    full = await _full(host)
    menu = _one(full, Role.MENU, "Edit")
    assert ActionKind.ACTIVATE not in menu.actions
    refused = await host.perform_action(
        ByNodeId(menu.node_id), SimpleAction(ActionKind.ACTIVATE), Latest()
    )
    assert isinstance(refused, Rejection)
    assert refused.code is ErrorCode.ACTION_UNAVAILABLE
    await _do(host, _one(full, Role.BUTTON, "Cut"), SimpleAction(ActionKind.ACTIVATE))
    assert _says(await _full(host), "cut")


async def test_submit_on_a_form_submits_it(host: SurfaceAgentHost) -> None:
    form = _one(await _full(host), Role.FORM, "Sign up")
    await _do(host, form, SimpleAction(ActionKind.SUBMIT))
    assert _says(await _full(host), "signed up")


async def test_submit_on_a_form_whose_default_button_is_hidden_submits_it_as_enter_does(
    host: SurfaceAgentHost,
) -> None:
    """Enter in a field clicks the form's first submit button, shown or not (the browser's
    implicit submission); a click as a user's waited for the hidden one to show."""
    form = _one(await _full(host), Role.FORM, "Login")
    await _do(host, form, SimpleAction(ActionKind.SUBMIT))
    assert _says(await _full(host), "in by Advanced")
    closed = _one(await _full(host), Role.FORM, "Closed")
    refused = await host.perform_action(
        ByNodeId(closed.node_id), SimpleAction(ActionKind.SUBMIT), Latest()
    )
    assert isinstance(refused, Rejection), refused
    assert refused.message == (
        "the form's default button (its first submit button) is disabled: the browser does"
        " not submit the form"
    )


async def test_a_field_the_browsers_validation_refused_is_invalid_and_says_why(
    host: SurfaceAgentHost,
) -> None:
    full = await _full(host)
    await _do(host, _one(full, Role.TEXT_FIELD, "Email"), SetText("bad"))
    await _do(host, _one(full, Role.BUTTON, "Send"), SimpleAction(ActionKind.ACTIVATE))
    after = await _full(host)
    email = _one(after, Role.TEXT_FIELD, "Email")
    assert email.state.invalid
    assert "@" in (email.description or "")
    assert not _says(after, "sent")


async def test_inert_content_is_disabled_and_busy_content_busy(host: SurfaceAgentHost) -> None:
    full = await _full(host)
    behind = _one(full, Role.BUTTON, "Behind")
    assert behind.state.disabled
    refused = await host.perform_action(
        ByNodeId(behind.node_id), SimpleAction(ActionKind.ACTIVATE), Latest()
    )
    assert isinstance(refused, Rejection)
    assert refused.code is ErrorCode.TARGET_DISABLED
    assert _one(full, Role.BUTTON, "Saving").state.busy


async def test_a_file_input_is_not_offered_activate(host: SurfaceAgentHost) -> None:
    """A click opens the system's file chooser, which no action can answer: a receipt for it
    would say something was done."""
    attach = _one(await _full(host), Role.BUTTON, "Attach")
    assert attach.actions == (ActionKind.FOCUS,)
