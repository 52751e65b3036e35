"""`semledger demo` on a log of the user's choosing."""

from __future__ import annotations

import io
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp


def test_every_next_step_the_demo_suggests_names_the_log_it_wrote(tmp_path: Path) -> None:
    """Its fuzz suggestion had no --db: followed, it wrote ./semledger.db instead. A path
    with a space or brackets was printed unquoted (and read as markup), so a pasted step
    failed. Each began with a bare `semledger`, which is not found outside an activated
    environment, and was drawn inside a box whose border a pasted line took along."""
    folder = tmp_path / "my logs [x]"
    folder.mkdir()
    db = folder / "demo.db"
    done = mcp.cli("demo", "--db", str(db), COLUMNS="40")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    suggested = [shlex.split(line) for line in lines[lines.index("next:") + 1 :]]
    assert [argv[:3] for argv in suggested] == [list(mcp.COMMAND)] * 5  # as it was run
    assert [argv[3] for argv in suggested] == ["sessions", "read", "audit", "replay", "fuzz"]
    assert all(argv[-2:] == ["--db", str(db)] for argv in suggested), suggested
    listed = subprocess.run(suggested[0], capture_output=True, text=True, env=mcp.env())
    assert listed.returncode == 0, listed.stderr
    # Seed 4 adds two todos, which share the id `todo.item` on purpose.
    fuzzed = mcp.cli_in_process(*suggested[-1][3:], "--seed", "4")
    assert fuzzed.returncode == 0, fuzzed.stdout + fuzzed.stderr


def test_the_demo_audit_names_the_agent_that_drove_it(tmp_path: Path) -> None:
    done = mcp.cli_in_process("demo", "--db", str(tmp_path / "demo.db"), columns=300)
    assert done.returncode == 0, done.stdout + done.stderr
    [agent] = [line for line in done.stdout.splitlines() if line.startswith("agent: ")]
    assert agent.startswith("agent: mcp ")  # the official SDK's clientInfo
    assert ", over stdio), connected at " in agent


def test_the_demo_passes_however_soon_the_save_it_starts_finishes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its call that meets two todos named the generation of the save's receipt: a save
    finished by then (a loaded machine, 50 ms) made it a `stale_generation`, not the
    `target_ambiguous` it shows, and the demo failed."""
    from rich.console import Console

    from semledger import _demo

    monkeypatch.setattr(_demo, "APP", "tests_instant_save:app")
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent / "apps"))
    out = io.StringIO()
    assert _demo.run_demo(Console(file=out, width=200), db=str(tmp_path / "demo.db")) == 0, (
        out.getvalue()
    )
    assert "activate  todo.item  →  target_ambiguous" in out.getvalue()


def test_the_demo_runs_from_a_folder_holding_files_named_like_modules_it_imports(
    tmp_path: Path,
) -> None:
    """Its server was started with `-m`, which searches the working directory first: a
    semledger.py or an attrs.py there was imported in place of the package."""
    for name in ("semledger.py", "attrs.py"):
        (tmp_path / name).write_text("print('not the package')\nraise SystemExit(3)\n")
    done = subprocess.run(
        [sys.executable, "-P", "-m", "semledger", "demo", "--db", "demo.db"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=mcp.env(),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "integrity chain: " in done.stdout


def test_a_demo_whose_server_exits_says_what_it_said_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It ended in a traceback of 70 lines, and the server's stderr was never shown."""
    from rich.console import Console

    from semledger import _demo

    monkeypatch.setattr(_demo, "APP", "tests_no_such_app:app")
    out = io.StringIO()
    assert _demo.run_demo(Console(file=out, width=80), db=str(tmp_path / "demo.db")) == 1
    last = out.getvalue().splitlines()[-1]
    assert last.startswith(
        "demo failed: the server exited: semledger: 'tests_no_such_app:app': cannot import"
    ), out.getvalue()


def test_the_demo_shows_a_log_path_with_a_control_character_escaped(tmp_path: Path) -> None:
    """--db was printed raw, in its panels and in each next step: an escape in the path
    reached the terminal."""
    db = tmp_path / "esc\x1b[31mred.db"
    done = mcp.cli("demo", "--db", str(db))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "\x1b" not in done.stdout
    lines = done.stdout.splitlines()
    assert all("esc\\x1b[31mred.db" in line for line in lines[lines.index("next:") + 1 :])
    assert "esc\\x1b[31mred.db" in "".join(lines[: lines.index("next:")])
