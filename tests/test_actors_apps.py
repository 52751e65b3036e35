"""`load_app`: what `module:attribute` names, and what a newcomer is told when it does not."""

from __future__ import annotations

import sys
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


def _refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str) -> str:
    """Why `load_app` refuses ``app_module:app``, the module written from `source`."""
    (tmp_path / "app_module.py").write_text(source)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "app_module", raising=False)  # another test's
    with pytest.raises(AppLoadError) as raised:
        load_app("app_module:app")
    return str(raised.value)


def test_a_missing_dependency_of_the_module_is_named_without_that_advice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    said = _refused(tmp_path, monkeypatch, "import no_such_dependency_of_it\n")
    assert said.endswith(
        f"No module named 'no_such_dependency_of_it' (at {tmp_path / 'app_module.py'}, line 1)"
    )


def test_an_error_raised_as_the_module_runs_names_its_file_and_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    said = _refused(tmp_path, monkeypatch, "x = 1\ny = undefined_name + 2\n")
    assert said == (
        "'app_module:app': importing app_module raised NameError: name 'undefined_name' is not"
        f" defined (at {tmp_path / 'app_module.py'}, line 2)"
    )


def test_an_app_made_wrong_is_named_at_the_line_that_made_it_not_inside_semledger(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    said = _refused(
        tmp_path,
        monkeypatch,
        "from semledger.runtime import App, text\n\n"
        "app = App(init=0, update=lambda m, msg: m, view=lambda m: text('n', str(m)))\n",
    )
    assert said.endswith(
        f"App.init: expected a function, got 0 (at {tmp_path / 'app_module.py'}, line 3)"
    )


def test_a_missing_attribute_is_told_which_apps_the_module_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(AppLoadError) as raised:
        load_app("semledger.examples.counter:ap")
    assert str(raised.value) == (
        "'semledger.examples.counter:ap': semledger.examples.counter has no ap (its App: app)"
    )
    said = _refused(tmp_path, monkeypatch, "import json\n")
    assert said.endswith("app_module has no app (it holds no App)")


def test_a_folder_named_like_the_app_s_module_is_told_apart_from_the_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scratch folder `tiny/` where `tiny.py` is not imported as an empty package: the
    error said "tiny has no app (it holds no App)", as if tiny.py were wrong."""
    (tmp_path / "tiny_folder_app").mkdir()
    monkeypatch.chdir(tmp_path)
    with pytest.raises(AppLoadError) as raised:
        load_app("tiny_folder_app:app")
    assert str(raised.value) == (
        f"'tiny_folder_app:app': tiny_folder_app was found only as the folder"
        f" {tmp_path / 'tiny_folder_app'} (a folder without __init__.py imports as an empty"
        " package), not as a module tiny_folder_app.py: run from the folder that holds"
        " tiny_folder_app.py, or add that folder to PYTHONPATH"
    )
    # A module in that folder (a file, a package, one in a folder in it), named as an
    # attribute of it: the reference meant is told.
    (tmp_path / "tiny_folder_app" / "inner.py").write_text("app = None\n")
    (tmp_path / "tiny_folder_app" / "package").mkdir()
    (tmp_path / "tiny_folder_app" / "package" / "__init__.py").write_text("app = None\n")
    (tmp_path / "tiny_folder_app" / "sub").mkdir()
    (tmp_path / "tiny_folder_app" / "sub" / "deep.py").write_text("app = None\n")
    for attribute, meant in [
        ("inner.app", "tiny_folder_app.inner:app"),
        ("package.app", "tiny_folder_app.package:app"),
        ("sub.deep.app", "tiny_folder_app.sub.deep:app"),
    ]:
        with pytest.raises(AppLoadError) as raised:
            load_app(f"tiny_folder_app:{attribute}")
        module = meant.partition(":")[0]
        assert str(raised.value) == (
            f"'tiny_folder_app:{attribute}': tiny_folder_app is a folder, and {module} a"
            f" module in it: expected {meant}"
        )


@pytest.mark.parametrize(
    ("path", "meant"),
    [
        ("here_app.py", "here_app:app"),
        ("./here_app.py", "here_app:app"),
        ("{tmp}/here_app.py", "here_app:app"),
        ("pkg/mod.py", "pkg.mod:app"),
        ("/elsewhere/there.py", "there:app, run from /elsewhere"),
        ("my.dir/t.py", "t:app, run from {tmp}/my.dir"),
    ],
)
def test_an_app_given_as_a_file_path_is_told_its_module_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: str, meant: str
) -> None:
    """``tiny.py:app`` was told to run from the folder that holds it (while there), and
    ``./tiny.py:app`` that importing it raised a TypeError, as if the module were at fault."""
    (tmp_path / "here_app.py").write_text("from semledger.examples.counter import app\n")
    monkeypatch.chdir(tmp_path)
    reference = f"{path.format(tmp=tmp_path)}:app"
    with pytest.raises(AppLoadError) as raised:
        load_app(reference)
    assert str(raised.value) == (
        f"{reference!r}: APP is a module name, not a file path:"
        f" did you mean {meant.format(tmp=tmp_path)}?"
    )


def test_a_module_named_like_a_file_is_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``mod.py:app``, submodule ``py`` of package ``mod``, imports: it is no file path."""
    (tmp_path / "dotpy_pkg").mkdir()
    (tmp_path / "dotpy_pkg" / "__init__.py").write_text("")
    (tmp_path / "dotpy_pkg" / "py.py").write_text("from semledger.examples.counter import app\n")
    monkeypatch.chdir(tmp_path)
    for name in ("dotpy_pkg", "dotpy_pkg.py"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    assert load_app("dotpy_pkg.py:app").name == "counter"
