"""`python -m semledger serve --http` in a folder holding a file named as one of the HTTP
server's modules: Python imports that file first, and serve says so in one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.parametrize(
    ("name", "shadow"),
    [
        ("h2", "print('a script of the folder')\n"),  # no h2.config in it
        ("h2", "raise ImportError('the h2.py of the folder')\n"),
        ("h11", "x = 1\n"),  # imported: hypercorn then reads h11.Data, an AttributeError
    ],
    ids=["a script", "one that raises ImportError", "one that lacks a name"],
)
def test_serve_http_names_the_file_that_shadows_a_module_of_the_http_server(
    tmp_path: Path, name: str, shadow: str
) -> None:
    """Run as `python -m semledger`, Python puts the working directory first on sys.path
    before semledger runs: the h2.py there was imported, and serve ended in a traceback."""
    (tmp_path / f"{name}.py").write_text(shadow)
    done = subprocess.run(
        [sys.executable, "-m", "semledger", "serve", "myapp:app", "--http", "127.0.0.1:0",
         "--db", str(tmp_path / "log.db")],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        f"semledger: serve --http cannot import its HTTP server: {tmp_path / name}.py is"
        f" imported in place of the module {name} (rename it, or run semledger from another"
        " folder)\n"
    )
