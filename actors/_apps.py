"""Loading an application from its ``module:attribute`` reference."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

from semledger.runtime import App

__all__ = ["AppLoadError", "app_location", "check_app_ref", "check_same_app", "load_app"]


class AppLoadError(ValueError):
    """Raised when an APP reference does not name an importable `App`."""


def check_app_ref(app_ref: object) -> None:
    """Raise ``TypeError`` or ``ValueError`` unless `app_ref` is a ``module:attribute``
    reference: the log records it, and replay loads the app by it."""
    if not isinstance(app_ref, str):
        shown = f"{type(app_ref).__name__} {app_ref!r:.80}"
        if isinstance(app_ref, App):
            shown += " (the App itself, not its reference)"
        raise TypeError(f"app_ref: expected a module:attribute str, got {shown}")
    module_name, _, attribute = app_ref.partition(":")
    if not module_name or not attribute:
        raise ValueError(
            f"app_ref: expected module:attribute, e.g. semledger.examples.todo:app, got {app_ref!r}"
        )


def check_same_app(app: App[Any, Any], app_ref: str, *, function: str, command: str) -> None:
    """Raise ``ValueError`` when `app_ref` loads another App than `app`, which `function`
    (``fuzz_app``) was given: a session saved under it would be replayed with that one; or
    when its module imports but holds no App by that name (``tiny:ap``), which replay would
    fail to load alike. A ref whose module does not import here passes (replay, run
    elsewhere, may import it, or would say why). `command` is the CLI command that takes the
    ref itself (``semledger fuzz``), which the message suggests when the module runs as a
    script.

    A module that runs as a script (``python tiny.py``, as ``__main__``) and is imported
    again under its name by `app_ref` (``tiny:app``) runs a second time and makes a second
    App: the message says so where the ref's module is the file ``__main__`` runs, or
    (likely) where ``__main__`` holds `app` under the ref's attribute and both Apps share a
    name; not for two unrelated Apps of one name."""
    try:
        named = load_app(app_ref)
    except AppLoadError as error:
        if app_ref.partition(":")[0] in sys.modules:  # it imported: the rest of it is wrong
            raise ValueError(f"app_ref names no App to replay the session with: {error}") from None
        return
    if named is app:
        return
    said = (
        f"app_ref {app_ref!r} names another App ({named.name!r}) than the one given"
        f" ({app.name!r}): a session saved under it would be replayed with that one"
    )
    module_name, _, attribute = app_ref.partition(":")
    twice = _runs_as_script(module_name)
    if twice or (named.name == app.name and _main_holds(attribute, app)):
        likely = "" if twice else "likely "
        loaded = f"from {module_name} import {attribute}"
        if "." in attribute:
            loaded = f"import {module_name}; {module_name}.{attribute}"
        said += (
            f". {module_name} {likely}runs as a script (__main__), and app_ref imported it"
            f" again as {module_name}, which made an App of its own: call {function} from"
            f" another module (or run {command} {app_ref}), or pass the App loaded from the module"
            f" ({loaded})"
        )
    raise ValueError(said)


def _runs_as_script(module_name: str) -> bool:
    """Whether the module `module_name` is the file ``__main__`` runs too."""
    main = getattr(sys.modules.get("__main__"), "__file__", None)
    module = getattr(sys.modules.get(module_name), "__file__", None)
    if not isinstance(main, str) or not isinstance(module, str):
        return False
    return Path(main).resolve() == Path(module).resolve()


def _main_holds(attribute: str, app: App[Any, Any]) -> bool:
    """Whether `app` is ``__main__``'s `attribute`, as the App of a script is."""
    value: Any = sys.modules.get("__main__")
    for part in attribute.split("."):
        value = getattr(value, part, None)
    return value is app


def load_app(reference: str) -> App[Any, Any]:
    """The `App` named ``module:attribute``; modules in the working directory are found too,
    as a user running ``semledger serve myapp:app`` next to ``myapp.py`` expects."""
    if not isinstance(reference, str):
        shown = f"{type(reference).__name__} {reference!r:.80}"
        if isinstance(reference, App):
            shown += " (the App itself: it needs no loading)"
        raise TypeError(
            'reference: expected a "module:attribute" str, e.g. semledger.examples.todo:app,'
            f" got {shown}"
        )
    module_name, sep, attribute = reference.partition(":")
    here = os.getcwd()
    if here not in sys.path and "" not in sys.path:
        sys.path.insert(0, here)
    if not sep or not module_name or not attribute:
        raise AppLoadError(
            f"{reference!r}: expected module:attribute, e.g. semledger.examples.todo:app"
        )
    if "/" in module_name or os.sep in module_name:  # never a module name: import nothing
        raise _a_file_path(reference, module_name, attribute, here)
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        missing = error.name if isinstance(error, ModuleNotFoundError) else None
        hint = app_location(error)
        if missing is not None and f"{module_name}.".startswith(f"{missing}."):
            if module_name.endswith(".py"):  # no module mod.py (package mod, submodule py)
                raise _a_file_path(reference, module_name, attribute, here) from None
            hint = " (run from the folder that holds it, or add that folder to PYTHONPATH)"
        raise AppLoadError(f"{reference!r}: cannot import {module_name}: {error}{hint}") from error
    except Exception as error:  # the module's own code raised as it ran
        raise AppLoadError(
            f"{reference!r}: importing {module_name} raised {type(error).__name__}: {error}"
            + app_location(error)
        ) from error
    value: Any = module
    for part in attribute.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            if getattr(module, "__file__", None) is None and hasattr(module, "__path__"):
                raise _a_folder(reference, module_name, attribute, list(module.__path__)) from None
            apps = sorted(name for name, v in vars(module).items() if isinstance(v, App))
            has = f"its App: {', '.join(apps)}" if apps else "it holds no App"
            raise AppLoadError(
                f"{reference!r}: {module_name} has no {attribute} ({has})"
            ) from None
    if not isinstance(value, App):
        kind = type(value).__name__
        raise AppLoadError(f"{reference!r} is not a semledger App: it is of type {kind}")
    return value


def _a_folder(
    reference: str, module_name: str, attribute: str, folders: list[str]
) -> AppLoadError:
    """A folder without ``__init__.py`` imports as a namespace package, holding nothing,
    where no module of its name was found: a scratch folder named like the app, or the
    folder of the module meant (``ns:mod.app`` for ``ns.mod:app``)."""
    parts = attribute.split(".")
    for cut in range(len(parts) - 1, 0, -1):  # the longest module path first
        inner = ".".join([module_name, *parts[:cut]])
        try:
            found = importlib.util.find_spec(inner) is not None
        except (ImportError, ValueError):  # a part of it is no package
            found = False
        if found:
            return AppLoadError(
                f"{reference!r}: {module_name} is a folder, and {inner} a module in it:"
                f" expected {inner}:{'.'.join(parts[cut:])}"
            )
    name = module_name.rpartition(".")[2]
    return AppLoadError(
        f"{reference!r}: {module_name} was found only as the folder {folders[0]} (a folder"
        f" without __init__.py imports as an empty package), not as a module {name}.py: run"
        f" from the folder that holds {name}.py, or add that folder to PYTHONPATH"
    )


def _a_file_path(reference: str, path: str, attribute: str, here: str) -> AppLoadError:
    name, folder = _dotted(path, here)
    where = "" if folder is None else f", run from {folder}"
    return AppLoadError(
        f"{reference!r}: APP is a module name, not a file path:"
        f" did you mean {name}:{attribute}{where}?"
    )


def _dotted(path: str, here: str) -> tuple[str, str | None]:
    """The module name that imports the file at `path` from the folder `here` (``tiny`` for
    ``./tiny.py``, ``pkg.mod`` for ``pkg/mod.py``), or, for a file outside `here` or under a
    folder whose name is no identifier (``my.dir/t.py``), its stem and the folder to run from."""
    file = Path(here, path).resolve().with_suffix("")
    try:
        parts = file.relative_to(Path(here).resolve()).parts
    except ValueError:
        parts = ()
    if not parts or not all(part.isidentifier() for part in parts):
        return file.name, str(file.parent)
    return ".".join(parts), None


def app_location(error: BaseException) -> str:
    """`` (at FILE, line N)`` for the deepest frame of the app's own code that `error` came
    through, or "" if none did (a syntax error names its line itself).

    Not the app's: Python's code, installed packages', and semledger's own (its builders
    refuse a view or an `App` made wrong; its runtime and replay call the app). Found only
    on an error, so that loading an app costs nothing more.
    """
    import sysconfig
    import traceback

    ours = ("actors", "runtime", "replay", "eventlog", "hosts", "adapters")
    not_the_apps = (
        *{sysconfig.get_path(name) for name in ("stdlib", "purelib", "platlib")},
        *(
            str(Path(module.__file__).parent)
            for module in (sys.modules.get(f"semledger.{name}") for name in ours)
            if module is not None and module.__file__ is not None
        ),
    )
    for frame in reversed(traceback.extract_tb(error.__traceback__)):
        filename = frame.filename
        if filename.startswith("<") or filename.startswith(not_the_apps):
            continue
        return f" (at {filename}, line {frame.lineno})"
    return ""
