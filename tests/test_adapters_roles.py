"""Role tables, to_aria, and the generated documentation."""

from __future__ import annotations

from pathlib import Path

import pytest

from semledger.adapters import (
    ANDROID_ROLES,
    ARIA_ROLES,
    ATSPI_ROLES,
    AX_ROLES,
    ROLE_PLATFORMS,
    ROLE_TABLES,
    RUNTIME_ROLES,
    UIA_ROLES,
    to_aria,
)
from semledger.adapters._docs import apply_generated, generated_blocks

DOC = Path(__file__).resolve().parent.parent / "docs" / "surface.md"

SPEC_RUNTIME_ROLES = [
    "none", "text", "link", "heading", "navigation", "main", "button", "checkbox",
    "text_field", "list", "list_item", "grid", "scroll_view", "switch", "radio", "slider",
    "progress", "tab", "dialog", "tooltip", "menu", "button_group", "form", "form_field",
    "tree", "tree_item", "group", "web_view", "image", "alert", "status", "combo_box",
    "option", "table", "row", "cell", "separator",
]  # fmt: skip


def test_tables_have_the_seeds_sizes() -> None:
    sizes = (len(UIA_ROLES), len(AX_ROLES), len(ANDROID_ROLES), len(ATSPI_ROLES))
    assert sizes == (40, 47, 30, 54)


@pytest.mark.parametrize(
    ("platform", "native", "aria"),
    [
        ("uia", "Edit", "textbox"),
        ("uia", "TitleBar", "banner"),
        ("uia", "ListItem", "option"),
        ("ax", "AXStaticText", "text"),
        ("ax", "AXPopUpButton", "combobox"),
        ("ax", "AXSheet", "dialog"),
        ("android", "android.widget.EditText", "textbox"),
        ("android", "androidx.recyclerview.widget.RecyclerView", "list"),
        ("atspi", "push button", "button"),
        ("atspi", "tree table", "treegrid"),
        ("runtime", "text_field", "textbox"),
        ("runtime", "none", "generic"),
        ("runtime", "web_view", "document"),
        ("runtime", "combo_box", "combobox"),
        ("aria", "button", "button"),
    ],
)
def test_to_aria_maps_by_the_tables(platform: str, native: str, aria: str) -> None:
    assert to_aria(platform, native) == aria  # type: ignore[arg-type]


@pytest.mark.parametrize("platform", ROLE_PLATFORMS)
def test_anything_unmapped_is_generic(platform: str) -> None:
    assert to_aria(platform, "NoSuchControlType") == "generic"  # type: ignore[arg-type]


@pytest.mark.parametrize("role", ["none", "presentation", ""])
def test_aria_platform_maps_no_semantics_to_generic(role: str) -> None:
    assert to_aria("aria", role) == "generic"


def test_an_unknown_platform_is_a_caller_bug() -> None:
    with pytest.raises(ValueError, match="unknown role platform"):
        to_aria("ios", "UIButton")  # type: ignore[arg-type]


def test_runtime_table_covers_exactly_the_spec_roles() -> None:
    assert list(RUNTIME_ROLES) == SPEC_RUNTIME_ROLES


def test_every_mapped_role_is_a_snapshot_role() -> None:
    for table in ROLE_TABLES:
        assert set(table.roles.values()) <= ARIA_ROLES, table.platform
    assert "generic" in ARIA_ROLES
    assert "none" not in ARIA_ROLES


def test_the_documented_tables_do_not_drift_from_the_module() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert apply_generated(text) == text, "run .venv/bin/python scripts/generate.py"


def test_the_documentation_shows_every_mapping() -> None:
    roles = generated_blocks()["roles"]
    for table in ROLE_TABLES:
        assert table.native_heading in roles
        for native, aria in table.roles.items():
            assert f"| `{native}` | `{aria}` |" in roles


def test_missing_markers_are_reported() -> None:
    with pytest.raises(ValueError, match="roles"):
        apply_generated("no markers here")
