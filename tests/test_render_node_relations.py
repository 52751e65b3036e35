"""`semledger read`'s tree shows each node's relations, as ``--json`` has them."""

from __future__ import annotations

import io
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp
from rich.console import Console

from semledger._render import render_full
from semledger.runtime import Full, NodeState, Relation, Role, SemanticId, SemanticsNode


def _printed(*nodes: SemanticsNode) -> list[str]:
    out = io.StringIO()
    Console(file=out, width=200).print(render_full(Full(1, nodes[0].node_id, None, nodes, ())))
    return out.getvalue().splitlines()


def test_a_node_shows_its_relations_naming_the_nodes_they_point_at() -> None:
    """The text tree left them out: a field's error message, or the panel a tab controls,
    was only in --json."""
    email = SemanticsNode(
        2,
        SemanticId("form.email"),
        Role.TEXT_FIELD,
        label="Email",
        state=NodeState(invalid=True),
        relations=(
            (Relation.LABELLED_BY, (3,)),
            (Relation.ERROR_MESSAGE, (4,)),
            (Relation.CONTROLS, (3, 4)),
        ),
    )
    plain = SemanticsNode(3, None, Role.TEXT, label="Email", relations=((Relation.CONTROLS, ()),))
    alert = SemanticsNode(4, None, Role.ALERT, value="not an address")
    root = SemanticsNode(1, None, Role.FORM, children=(2, 3, 4))
    lines = _printed(root, email, plain, alert)
    assert lines[2].endswith(
        "text_field 'Email' #form.email [invalid]"
        " (labelled_by id 3; error_message id 4; controls ids 3, 4)  id 2"
    ), lines
    assert lines[3].endswith("text 'Email'  id 3"), lines  # a relation to no node: none


def test_read_shows_the_relations_of_the_gallery(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    mcp.serve("semledger.examples.gallery:app", db, "g", [mcp.read(1)])
    done = mcp.cli_in_process("read", "g", "--db", str(db), columns=200)
    assert done.returncode == 0, done.stderr
    assert "tab 'Overview' #gallery.tab.overview [selected, 1 of 3] (controls id " in done.stdout
    assert "text_field 'Password' #gallery.password [password] (labelled_by id " in done.stdout
