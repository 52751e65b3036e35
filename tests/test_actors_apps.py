"""`load_app`: what `module:attribute` names, and what a newcomer is told when it does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from semledger.actors import AppLoadError, load_app


def test_a_module_in_the_working_directory_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "here_app.py").write_text("from semledger.examples.counter import app\n")
    monkeypatch.chdir(tmp_path)
    assert load_app("here_app:app").name == "counter"


def test_a_module_not_found_is_told_where_it_is_looked_for() -> None:
    with pytest.raises(AppLoadError) as raised:
        load_app("no_such_app_module:app")
    assert str(raised.value) == (
        "'no_such_app_module:app': cannot import no_such_app_module: No module named"
        " 'no_such_app_module' (run from the folder that holds it, or add that folder to"
        " PYTHONPATH)"
    )


def test_a_missing_dependency_of_the_module_is_named_without_that_advice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "needs_more.py").write_text("import no_such_dependency_of_it\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(AppLoadError) as raised:
        load_app("needs_more:app")
    assert str(raised.value).endswith("No module named 'no_such_dependency_of_it'")
