"""Snapshot rendering, token estimate and structural hash (SPEC §7)."""

from __future__ import annotations

import hashlib

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from semledger.adapters import (
    DataError,
    Snapshot,
    SnapshotNode,
    build_snapshot,
    name_bucket,
    render_snapshot,
    snapshot_problems,
    structural_hash,
    tokens_estimate,
)


def node(ref: str, role: str, depth: int = 0, **kw: object) -> SnapshotNode:
    return SnapshotNode(ref=ref, role=role, depth=depth, **kw)  # type: ignore[arg-type]


SIGN_IN = (
    node("r1", "form", name="Sign in"),
    node("r2", "textbox", 1, name="Username", value="atul", states=("required",), parent="r1"),
    node("r3", "button", 1, name="Sign in", states=("focused", "disabled"), parent="r1"),
)


def test_rendering_matches_the_seed_example() -> None:
    assert render_snapshot(SIGN_IN) == (
        '- form "Sign in" [ref=r1]\n'
        '  - textbox "Username": atul [required] [ref=r2]\n'
        '  - button "Sign in" [disabled, focused] [ref=r3]'
    )


def test_empty_name_and_value_are_left_out() -> None:
    assert render_snapshot([node("r1", "generic", name="", value="")]) == "- generic [ref=r1]"
    assert render_snapshot([node("r1", "generic")]) == "- generic [ref=r1]"


def test_value_without_name_follows_the_role() -> None:
    assert render_snapshot([node("r1", "textbox", value="x")]) == "- textbox: x [ref=r1]"


def test_name_escapes_backslash_quote_and_newline() -> None:
    rendered = render_snapshot([node("r1", "button", name='a\\b "c"\nd')])
    assert rendered == '- button "a\\\\b \\"c\\"\\nd" [ref=r1]'


def test_value_escapes_backslash_and_newline_so_a_node_stays_one_line() -> None:
    rendered = render_snapshot([node("r1", "textbox", value='x\\y\n"z"')])
    assert rendered == '- textbox: x\\\\y\\n"z" [ref=r1]'
    assert "\n" not in rendered


def test_long_name_is_cut_to_120_characters_ending_in_an_ellipsis() -> None:
    rendered = render_snapshot([node("r1", "heading", name="n" * 200)])
    quoted = rendered.split('"')[1]
    assert len(quoted) == 120
    assert quoted == "n" * 119 + "…"


def test_name_of_exactly_120_characters_is_kept_whole() -> None:
    rendered = render_snapshot([node("r1", "heading", name="n" * 120)])
    assert rendered == f'- heading "{"n" * 120}" [ref=r1]'


def test_long_value_is_cut_too() -> None:
    rendered = render_snapshot([node("r1", "textbox", value="v" * 121)])
    assert rendered == f"- textbox: {'v' * 119}… [ref=r1]"


def test_cut_counts_characters_before_escaping() -> None:
    rendered = render_snapshot([node("r1", "button", name='"' * 130)])
    assert rendered == '- button "' + '\\"' * 119 + '…" [ref=r1]'


def test_states_are_sorted_alphabetically_and_comma_space_joined() -> None:
    states = ("selected", "checked", "expanded")
    rendered = render_snapshot([node("r1", "option", states=states)])
    assert rendered == "- option [checked, expanded, selected] [ref=r1]"


def test_depth_indents_two_spaces_per_level_and_nothing_trails() -> None:
    nodes = [node("r1", "main"), node("r2", "group", 1), node("r3", "button", 2)]
    text = render_snapshot(nodes)
    assert text.split("\n") == ["- main [ref=r1]", "  - group [ref=r2]", "    - button [ref=r3]"]
    assert not text.endswith("\n")


def test_hidden_node_and_its_descendants_leave_the_text_but_stay_in_nodes() -> None:
    nodes = (
        node("r1", "main"),
        node("r2", "dialog", 1, states=("hidden",), parent="r1"),
        node("r3", "button", 2, name="Inside", parent="r2"),
        node("r4", "group", 3, parent="r3"),
        node("r5", "button", 1, name="After", parent="r1"),
    )
    snapshot = build_snapshot("r1", nodes)
    assert snapshot.text == '- main [ref=r1]\n  - button "After" [ref=r5]'
    assert [n.ref for n in snapshot.nodes] == ["r1", "r2", "r3", "r4", "r5"]


def test_empty_tree_renders_empty_text() -> None:
    assert (render_snapshot([]), tokens_estimate("")) == ("", 0)


@pytest.mark.parametrize(("length", "tokens"), [(0, 0), (1, 1), (4, 1), (5, 2), (8, 2), (9, 3)])
def test_tokens_estimate_is_the_ceiling_of_a_quarter_of_the_length(
    length: int, tokens: int
) -> None:
    assert tokens_estimate("x" * length) == tokens


def test_build_snapshot_computes_text_tokens_and_hash() -> None:
    snapshot = build_snapshot("r1", SIGN_IN)
    assert snapshot.ref == "r1"
    assert snapshot.text == render_snapshot(SIGN_IN)
    assert snapshot.tokens_estimate == -(-len(snapshot.text) // 4)
    assert snapshot.hash == structural_hash(SIGN_IN)
    assert snapshot_problems(snapshot) == []
    assert hash(snapshot) == hash(build_snapshot("r1", SIGN_IN))


def test_hash_is_sha256_over_the_documented_lines() -> None:
    expected = "form 1-8\n  textbox 1-8 [required]\n  button 1-8 [disabled,focused]"
    assert structural_hash(SIGN_IN) == hashlib.sha256(expected.encode()).hexdigest()


@pytest.mark.parametrize(
    ("name", "bucket"),
    [(None, "0"), ("", "0"), ("a", "1-8"), ("a" * 8, "1-8"), ("a" * 9, "9-32"),
     ("a" * 32, "9-32"), ("a" * 33, "33+"), ("a" * 500, "33+")],
)  # fmt: skip
def test_name_length_buckets(name: str | None, bucket: str) -> None:
    assert name_bucket(name) == bucket


def test_hash_keeps_when_values_boxes_refs_descriptions_and_native_change() -> None:
    changed = (
        attrs.evolve(SIGN_IN[0], ref="x1", box=(1.0, 2.0, 3.0, 4.0), native={"id": "f"}),
        attrs.evolve(SIGN_IN[1], ref="x2", value="someone else", parent="x1"),
        attrs.evolve(SIGN_IN[2], ref="x3", description="submits", parent="x1"),
    )
    assert structural_hash(changed) == structural_hash(SIGN_IN)


def test_hash_keeps_when_a_name_changes_within_its_bucket() -> None:
    renamed = (attrs.evolve(SIGN_IN[0], name="Log in"), *SIGN_IN[1:])
    assert structural_hash(renamed) == structural_hash(SIGN_IN)


def test_hash_changes_with_a_state() -> None:
    checked = (SIGN_IN[0], SIGN_IN[1], attrs.evolve(SIGN_IN[2], states=("focused",)))
    assert structural_hash(checked) != structural_hash(SIGN_IN)


def test_hash_changes_with_a_role() -> None:
    relabelled = (SIGN_IN[0], SIGN_IN[1], attrs.evolve(SIGN_IN[2], role="link"))
    assert structural_hash(relabelled) != structural_hash(SIGN_IN)


def test_hash_changes_when_a_name_crosses_a_bucket() -> None:
    longer = (attrs.evolve(SIGN_IN[0], name="Sign in to your account"), *SIGN_IN[1:])
    assert structural_hash(longer) != structural_hash(SIGN_IN)


def test_hash_changes_with_depth() -> None:
    flat = (SIGN_IN[0], attrs.evolve(SIGN_IN[1], depth=0, parent=None), SIGN_IN[2])
    assert structural_hash(flat) != structural_hash(SIGN_IN)


def test_hash_ignores_state_order() -> None:
    reordered = (SIGN_IN[0], SIGN_IN[1], attrs.evolve(SIGN_IN[2], states=("disabled", "focused")))
    assert structural_hash(reordered) == structural_hash(SIGN_IN)


def test_hidden_nodes_are_part_of_the_hash() -> None:
    visible = (node("r1", "main"), node("r2", "dialog", 1, name="Confirm"))
    hidden = (node("r1", "main"), node("r2", "dialog", 1, name="Confirm", states=("hidden",)))
    absent = (node("r1", "main"),)
    assert render_snapshot(hidden) == render_snapshot(absent)
    assert structural_hash(hidden) != structural_hash(absent)
    assert structural_hash(hidden) != structural_hash(visible)


@given(st.lists(st.text(max_size=40), min_size=1, max_size=6), st.data())
def test_any_value_change_keeps_the_hash(names: list[str], data: st.DataObject) -> None:
    nodes = [node(f"r{i}", "textbox", name=name) for i, name in enumerate(names)]
    values = data.draw(st.lists(st.text(), min_size=len(nodes), max_size=len(nodes)))
    edited = [attrs.evolve(n, value=v) for n, v in zip(nodes, values, strict=True)]
    assert structural_hash(edited) == structural_hash(nodes)


@given(st.text(max_size=300), st.text(max_size=300))
def test_rendering_is_one_line_per_node_whatever_the_strings(name: str, value: str) -> None:
    nodes = [node("r1", "group"), node("r2", "textbox", 1, name=name, value=value)]
    lines = render_snapshot(nodes).split("\n")
    assert len(lines) == 2
    assert lines[1].startswith("  - textbox")
    assert lines[1].endswith(" [ref=r2]")


def test_build_snapshot_rejects_duplicate_refs() -> None:
    with pytest.raises(DataError) as info:
        build_snapshot("r1", [node("r1", "main"), node("r1", "button", 1)])
    assert info.value.path == "nodes[1].ref"


def test_build_snapshot_rejects_a_parent_that_is_not_the_nearest_shallower_node() -> None:
    nodes = [
        node("r1", "main"),
        node("r2", "group", 1, parent="r1"),
        node("r3", "button", 2, parent="r1"),
    ]
    with pytest.raises(DataError) as info:
        build_snapshot("r1", nodes)
    assert info.value.path == "nodes[2].parent"


def test_build_snapshot_rejects_a_first_node_that_is_not_the_root() -> None:
    with pytest.raises(DataError) as info:
        build_snapshot("r9", [node("r1", "main")])
    assert info.value.path == "ref"


ROOT = node("a", "group")
MALFORMED = {
    "a state that is not one of the ten": (
        "a", [ROOT, node("b", "button", 1, parent="a", states=("bogus",))],
        "nodes[1].states[0]", "node 'b': 'bogus' is not a state",
    ),
    "a state twice": (
        "a", [ROOT, node("b", "button", 1, states=("focused", "focused"))],
        "nodes[1].states[1]", "node 'b': 'focused' is repeated",
    ),
    "checked and unchecked together": (
        "a", [ROOT, node("b", "checkbox", 1, states=("checked", "unchecked"))],
        "nodes[1].states", "node 'b' is both 'checked' and 'unchecked'",
    ),
    "expanded and collapsed together": (
        "a", [ROOT, node("b", "treeitem", 1, states=("collapsed", "expanded"))],
        "nodes[1].states", "node 'b' is both 'expanded' and 'collapsed'",
    ),
    "a role that is not ARIA's": (
        "a", [ROOT, node("b", "pushbutton", 1, parent="a")],
        "nodes[1].role", "node 'b': 'pushbutton' is not an ARIA role",
    ),
    "a depth that jumps": (
        "a", [ROOT, node("b", "button", 3, parent="a")],
        "nodes[1].depth", "node 'b' is at depth 3, more than one below the node before it",
    ),
    "a second node at depth 0 (a forest)": (
        "a", [ROOT, node("b", "button", 0)],
        "nodes[1].depth", "node 'b' is at depth 0, beside the root",
    ),
    "a node below the root that names no parent": (
        "a", [ROOT, node("b", "group", 1, parent="a"), node("c", "button", 2)],
        "nodes[2].parent", "node 'c' names no parent: every node but the root names its own"
        " (here 'b')",
    ),
    "a root below depth 0": (
        "a", [node("a", "group", 1), node("b", "button", 2, parent="a")],
        "nodes[0].depth", "the root 'a' is at depth 1, not 0",
    ),
    "no nodes at all": ("x", [], "nodes", "is empty: a snapshot holds at least its root 'x'"),
    "an empty ref": ("", [node("", "group")], "nodes[0].ref", "expected a non-empty string"),
}  # fmt: skip


@pytest.mark.parametrize("case", MALFORMED.values(), ids=list(MALFORMED))
def test_build_snapshot_refuses_a_tree_surface_md_calls_malformed_naming_the_node(
    case: tuple[str, list[SnapshotNode], str, str],
) -> None:
    """They were built and served: the bridge then showed the agent the first tree of a
    forest alone, and a state the wire schema refuses was sent."""
    root, nodes, path, reason = case
    with pytest.raises(DataError) as info:
        build_snapshot(root, nodes)
    assert info.value.path == path
    assert info.value.reason.startswith(reason)
    text = render_snapshot(nodes)
    received = Snapshot(root, tuple(nodes), text, tokens_estimate(text), structural_hash(nodes))
    assert [(p.path, p.reason) for p in snapshot_problems(received)][:1] == [
        (path, info.value.reason)
    ]


def test_snapshot_problems_names_text_tokens_and_hash_that_do_not_match() -> None:
    good = build_snapshot("r1", SIGN_IN)
    bad = attrs.evolve(good, text="- form [ref=r1]", tokens_estimate=99, hash="0" * 64)
    assert [p.path for p in snapshot_problems(bad)] == ["text", "tokens_estimate", "hash"]
