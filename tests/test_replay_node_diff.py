"""node_diff names every public difference between two snapshots: root, focus, nodes
added, missing or changed, and the issues."""

from __future__ import annotations

import attrs

from semledger.examples import gallery
from semledger.replay import node_diff
from semledger.runtime import AppRuntime


def test_a_node_diff_names_root_focus_missing_nodes_and_issues() -> None:
    before = AppRuntime(gallery.app).snapshot
    assert before.issues  # its deliberate duplicate semantic id
    first, *_, some, other = sorted(k for k in before.nodes if k != before.root)
    after = attrs.evolve(
        before,
        root=first,
        focused=some,
        nodes={k: v for k, v in before.nodes.items() if k != other},
        issues=(),
    )
    lines = node_diff(before, after)
    assert lines[0] == f"root: {before.root} -> {first}"
    assert lines[1] == f"focused: {before.focused} -> {some}"
    assert lines[2].startswith(f"- node {other} ")
    assert lines[2].endswith(" is missing")
    assert lines[3:] == [f"issues: {len(before.issues)} -> 0"]
    assert node_diff(after, before)[2].endswith(" is new")


def test_a_node_diff_names_each_changed_field_of_a_node() -> None:
    before = AppRuntime(gallery.app).snapshot
    node_id, node = next((k, v) for k, v in before.nodes.items() if v.label)
    changed = attrs.evolve(node, label=f"{node.label} (renamed)")
    after = attrs.evolve(before, nodes={**before.nodes, node_id: changed})
    (line,) = node_diff(before, after)
    assert line.startswith(f"~ node {node_id}")
    assert line.endswith(f" label: {node.label!r} -> {changed.label!r}")
