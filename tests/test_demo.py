"""`semledger demo` on a log of the user's choosing."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp


def test_every_next_step_the_demo_suggests_names_the_log_it_wrote(tmp_path: Path) -> None:
    """Its fuzz suggestion had no --db: followed, it wrote ./semledger.db instead. A path
    with a space or brackets was printed unquoted (and read as markup), so a pasted step
    failed."""
    folder = tmp_path / "my logs [x]"
    folder.mkdir()
    db = folder / "demo.db"
    done = mcp.cli("demo", "--db", str(db), COLUMNS="300")
    assert done.returncode == 0, done.stdout + done.stderr
    suggested = [
        line.strip(" │") for line in done.stdout.splitlines() if line.strip(" │").startswith(
            "semledger "
        )
    ]
    assert [line.split()[1] for line in suggested] == [
        "sessions", "read", "audit", "replay", "fuzz",
    ]  # fmt: skip
    assert all(shlex.split(line)[-2:] == ["--db", str(db)] for line in suggested), suggested
    listed = mcp.cli(*shlex.split(suggested[0])[1:])
    assert listed.returncode == 0, listed.stderr
    # Seed 4 adds two todos, which share the id `todo.item` on purpose.
    fuzzed = mcp.cli(*shlex.split(suggested[-1])[1:], "--seed", "4")
    assert fuzzed.returncode == 0, fuzzed.stdout + fuzzed.stderr


def test_the_demo_audit_names_the_agent_that_drove_it(tmp_path: Path) -> None:
    done = mcp.cli("demo", "--db", str(tmp_path / "demo.db"), COLUMNS="300")
    assert done.returncode == 0, done.stdout + done.stderr
    [agent] = [line for line in done.stdout.splitlines() if line.startswith("agent: ")]
    assert agent.startswith("agent: mcp ")  # the official SDK's clientInfo
    assert ", over stdio), connected at " in agent
