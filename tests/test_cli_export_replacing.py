"""`replay --export-test FILE` says when it replaced a file that was there."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp
from tests_record import COUNTER, INCREMENT, record


def test_export_test_says_when_it_replaced_a_file_that_was_there(tmp_path: Path) -> None:
    """It said ``wrote FILE`` alike when FILE was new and when it replaced one (a committed
    regression test, say)."""
    db = tmp_path / "log.db"
    record(db, "agent", COUNTER, [INCREMENT])
    test = tmp_path / "test_agent.py"
    first = mcp.cli("replay", "agent", "--db", str(db), "--export-test", str(test))
    assert (first.returncode, first.stdout) == (0, f"wrote {test}: run it with pytest\n")
    test.write_text("# a regression test kept by hand\n")
    again = mcp.cli("replay", "agent", "--db", str(db), "--export-test", str(test))
    assert again.returncode == 0, again.stderr
    assert again.stdout == (
        f"wrote {test} (replacing the file that was there): run it with pytest\n"
    )
    assert "a regression test kept by hand" not in test.read_text()


def test_export_test_through_a_dangling_symlink_says_it_wrote_a_new_file(tmp_path: Path) -> None:
    """A link to a file not there yet is written through (the file it names is created): it
    said it replaced the file that was there, where none was."""
    db = tmp_path / "log.db"
    record(db, "agent", COUNTER, [INCREMENT])
    link = tmp_path / "test_agent.py"
    link.symlink_to("nowhere.py")
    wrote = mcp.cli("replay", "agent", "--db", str(db), "--export-test", str(link))
    assert (wrote.returncode, wrote.stdout) == (0, f"wrote {link}: run it with pytest\n")
    assert (tmp_path / "nowhere.py").is_file()
