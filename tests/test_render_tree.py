"""`semledger read`'s tree: every state a node is in, as the agent was told it."""

from __future__ import annotations

import io

from rich.console import Console

from semledger._render import render_full
from semledger.runtime import (
    AmbiguousRelationTarget,
    Checked,
    Collection,
    DuplicateSemanticId,
    Full,
    Live,
    MissingRelationTarget,
    NodeState,
    Numeric,
    Relation,
    Role,
    SemanticId,
    SemanticsNode,
)


def _printed(*nodes: SemanticsNode) -> str:
    full = Full(1, nodes[0].node_id, None, nodes, ())
    out = io.StringIO()
    Console(file=out, width=200).print(render_full(full))
    return out.getvalue()


def test_a_node_shows_every_state_it_is_in() -> None:
    """The text view showed only disabled, invalid, focused, modal and checked: a password
    field or a read-only one read like any other."""
    fields = (
        SemanticsNode(2, None, Role.TEXT_FIELD, label="Password", state=NodeState(password=True)),
        SemanticsNode(3, None, Role.TEXT_FIELD, state=NodeState(multiline=True, read_only=True)),
        SemanticsNode(4, None, Role.CELL, level=2, state=NodeState(expanded=False, selected=True)),
        SemanticsNode(5, None, Role.CHECKBOX, state=NodeState(checked=Checked.MIXED)),
    )
    root = SemanticsNode(1, None, Role.GROUP, children=(2, 3, 4, 5))
    lines = _printed(root, *fields).splitlines()
    assert "text_field 'Password' [password]  id 2" in lines[2]
    assert "text_field [read-only, multiline]  id 3" in lines[3]
    assert "cell [selected, collapsed, level 2]  id 4" in lines[4]
    assert "checkbox [mixed]  id 5" in lines[5]


def test_a_node_shows_where_it_sits_in_its_set_and_its_table() -> None:
    places = (
        SemanticsNode(2, None, Role.OPTION, collection=Collection(set_size=3, set_position=2)),
        SemanticsNode(3, None, Role.OPTION, collection=Collection(set_position=42)),
        SemanticsNode(4, None, Role.CELL, collection=Collection(row_index=7, column_index=3)),
        SemanticsNode(5, None, Role.GRID, collection=Collection(row_count=500, column_count=4)),
    )
    root = SemanticsNode(1, None, Role.GROUP, children=(2, 3, 4, 5))
    lines = _printed(root, *places).splitlines()
    assert "option [2 of 3]  id 2" in lines[2]
    assert "option [item 42]  id 3" in lines[3]
    assert "cell [row 7, column 3]  id 4" in lines[4]
    assert "grid [500 rows, 4 columns]  id 5" in lines[5]


def test_a_numeric_node_shows_its_value_and_range() -> None:
    """A slider's or a progress bar's value, its only state, was left out of the tree."""
    numbers = (
        SemanticsNode(
            2, None, Role.SLIDER, label="Volume",
            numeric=Numeric(current=35.0, min=0.0, max=100.0, step=5.0, value_text="35%"),
        ),
        SemanticsNode(3, None, Role.PROGRESS, numeric=Numeric(current=0.25, min=0.0)),
        SemanticsNode(4, None, Role.SLIDER, numeric=Numeric(max=1234567.0, value_text="none")),
    )
    root = SemanticsNode(1, None, Role.GROUP, children=(2, 3, 4))
    lines = _printed(root, *numbers).splitlines()
    assert "slider 'Volume' = 35 '35%' [0 to 100, step 5]  id 2" in lines[2]
    assert "progress = 0.25 [at least 0]  id 3" in lines[3]
    assert "slider = 'none' [at most 1234567]  id 4" in lines[4]


def test_a_node_shows_its_description() -> None:
    """The text read showed no node's description: a field's hint was missing, and an
    alert read as a confirm did (a native dialog's type is its description)."""
    described = (
        SemanticsNode(2, None, Role.DIALOG, label="Sure?", description="confirm"),
        SemanticsNode(3, None, Role.TEXT_FIELD, label="Email", value="a@b.c",
                      description="We never share it"),
    )  # fmt: skip
    root = SemanticsNode(1, None, Role.GROUP, children=(2, 3))
    lines = _printed(root, *described).splitlines()
    assert "dialog 'Sure?' described as 'confirm'  id 2" in lines[2]
    assert "text_field 'Email' = 'a@b.c' described as 'We never share it'  id 3" in lines[3]


def test_the_issues_of_the_snapshot_are_listed_after_the_tree_one_a_line() -> None:
    """The text read showed the tree alone: a snapshot whose relation points at no node, or
    two nodes with one semantic id, read as sound; only --json listed its issues."""
    hint, twin = SemanticId("r.hint"), SemanticId("r.twin")
    issues = (
        DuplicateSemanticId(twin, (3, 4)),
        MissingRelationTarget(2, Relation.DESCRIBED_BY, hint),
        AmbiguousRelationTarget(2, Relation.LABELLED_BY, twin, (3, 4)),
    )
    nodes = (
        SemanticsNode(1, None, Role.GROUP, children=(2, 3, 4)),
        SemanticsNode(2, SemanticId("r.email"), Role.TEXT_FIELD, label="Email"),
        SemanticsNode(3, twin, Role.TEXT),
        SemanticsNode(4, twin, Role.TEXT),
    )
    out = io.StringIO()
    Console(file=out, width=200).print(render_full(Full(1, 1, None, nodes, issues)))
    assert out.getvalue().splitlines()[5:] == [
        "issues the snapshot reports:",
        "  duplicate_semantic_id: #r.twin is on ids 3, 4",
        "  missing_relation_target: id 2 described_by #r.hint, which no node has",
        "  ambiguous_relation_target: id 2 labelled_by #r.twin, which ids 3, 4 have",
    ]
    assert "issues" not in _printed(SemanticsNode(1, None, Role.GROUP))


def test_a_node_shows_its_url_and_how_a_live_region_is_announced() -> None:
    """A link's, an image's or a web view's url and a live region's politeness, which
    --json gives, were left out of the tree."""
    nodes = (
        SemanticsNode(2, None, Role.LINK, label="Docs", url="https://example.org/a b"),
        SemanticsNode(3, None, Role.IMAGE, url="https://example.org/\u202e\n"),
        SemanticsNode(4, None, Role.STATUS, live=Live.POLITE),
        SemanticsNode(5, None, Role.ALERT, live=Live.ASSERTIVE),
        SemanticsNode(6, None, Role.TEXT, live=Live.OFF),
    )
    root = SemanticsNode(1, None, Role.GROUP, children=(2, 3, 4, 5, 6))
    lines = _printed(root, *nodes).splitlines()
    assert "link 'Docs' url https://example.org/a b  id 2" in lines[2]
    assert "image url 'https://example.org/\\u202e\\n'  id 3" in lines[3]
    assert "status [live polite]  id 4" in lines[4]
    assert "alert [live assertive]  id 5" in lines[5]
    assert "text  id 6" in lines[6]
