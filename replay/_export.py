"""`--export-test`: turn a recorded session into a pytest module that re-drives it.

The module embeds the session's inputs and the outputs they produced, as plain data, and
asserts that the application produces every receipt, rejection and commit hash again: a
failing agent run becomes a regression test in one command. A session that crashed becomes
a test that the application still raises the same exception type at the same step, and a
fuzzer counterexample whose check failed, one that the check still fails there: the test pins
the recorded run, failure included, as replay does, so a fix of the bug makes it fail. Such
a test has a switch, ``FIXED``: set True, it checks the fix instead, that the same inputs no
longer fail, without comparing the outputs a fix may change; not one of a session the fuzzer
recorded as nondeterministic (the app may pass it with the bug there) or whose inputs hold
masked text (which may not reach the bug).
"""

from __future__ import annotations

import errno
import functools
import itertools
import math
import os
import pprint
import re
import secrets
import shlex
import stat
import textwrap
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, TypeVar

from semledger.actors import (
    SessionCore,
    StepResult,
    UnsubscribedTimerError,
    check_app_ref,
    crash_event,
    load_app,
)
from semledger.actors._str_hash import PARAM as STR_HASH
from semledger.actors._str_hash import seed_recorded, str_hashing_note
from semledger.eventlog import (
    CONVERTER,
    INPUT_CLASSES,
    ActionRequested,
    Committed,
    EffectCompleted,
    EffectFailed,
    Recorder,
    SessionCrashed,
    SessionStarted,
    known_head,
)
from semledger.runtime import App, AppRuntime, ErrorCode, Rejection, SemanticsSnapshot
from semledger.runtime._text import printable, shortened

from ._audit import _follow, _node_named, known_as
from ._invariants import (
    FAILURES,
    GenerationChecker,
    InvariantViolation,
    RecordedViolation,
    recorded_effect_failure,
    recorded_issue_check,
    recorded_nondeterministic,
    recorded_reads,
    recorded_violation,
)
from ._reexecute import (
    COMPARED,
    Divergence,
    FuzzChecks,
    app_worded,
    checked_events,
    unrecorded_message,
)

_TEMPLATE = '''"""Regression test exported by `semledger replay --export-test`.

Re-drives the inputs of session {session} against {app} and asserts
that every receipt, rejection, started effect and commit hash comes out as it was
{checks_doc}{failure_doc}{nondeterministic_doc}{effect_doc}
"""

{math_import}from semledger.replay import check_recorded_steps

APP = {app_literal}

SESSION = {session_literal}

INITIAL = {initial}

STEPS = {steps}
{reads_block}{issues_block}{crash_block}{violation_block}{fixed_block}{targets_block}{str_hash_block}

def test_{name}_replays_as_recorded() -> None:
    check_recorded_steps(
{arguments}
    )
'''

_PINNED = (
    "The test pins the recorded run, failure included: it passes while the bug is there"
    " and fails once it is fixed. Then set FIXED = True below: the test re-drives the same"
    " inputs and checks that the recorded failure no longer happens (nothing raises, no"
    " check fails) and that every step keeps the generation invariants, without comparing"
    " the outputs, which a fix may change. A step the recording accepted must still be"
    " accepted, and a node it names by id must be the one it was: where the fix rejects it"
    " (a stale generation, a node id no longer there) or gives the id to another node, the"
    " inputs no longer lead to the failure, and the test fails saying so; export the test"
    " again from a run of the fixed app then."
)

_FIXED_BLOCK = """
# Set True once the bug is fixed: the test then checks that the recorded failure no longer
# happens, without comparing the outputs the fix may change (see the docstring).
FIXED = False
"""

_SET_FIXED = (
    "If the bug is fixed, this is the fix working: set FIXED = True in the test's module"
    " (one exported without it: pass fixed=True to check_recorded_steps) to check the fix."
)
"""What a pinned test failing as the fix makes it fail says to do."""

_FIXED_ONCE = (
    "set FIXED = True once it is fixed (in a module exported without it: pass fixed=True to"
    " check_recorded_steps)"
)

_CANNOT_FIX = (
    "This test cannot check a fix (it has no FIXED switch): its docstring says why, and what to do."
)
"""What such a test says instead of `_SET_FIXED` when its inputs cannot check a fix."""


def _no_longer(changed: str) -> str:
    """The end of a fixed-mode failure whose inputs no longer reach what failed: `changed`
    says what the fix changed that they meet."""
    return (
        f": the fix changed what the recorded inputs meet ({changed}), so they no longer lead"
        " to the recorded failure and this test cannot check it; export the test again from a"
        " run of the fixed app"
    )


_REFUSED = {
    ErrorCode.STALE_GENERATION: "the generations the app commits, which they name",
    ErrorCode.TARGET_NOT_FOUND: "the nodes they target: this one is no longer there",
    ErrorCode.TARGET_AMBIGUOUS: "the nodes they target: this one is now more than one",
    ErrorCode.TARGET_DISABLED: "the nodes they act on: the node it acts on is now disabled",
    ErrorCode.ACTION_UNAVAILABLE: "the actions the nodes offer: this one is no longer offered",
}
"""What a fix changed, by the code of the rejection of an input the recording accepted."""


_NONDETERMINISTIC = (
    "the fuzzer recorded this session as nondeterministic (the app did not do the same on the"
    " same inputs): while the bug is there, this test is expected to fail, at a step that"
    " varies from run to run, or now and then to pass"
)
"""As the module's docstring says it, and its failure notes it."""

_FAILS_FIXED_TOO = (
    "once the app is fixed, this test fails too: the outputs it compares are those of the"
    " recorded run, which the app did not do the same again. It cannot check a fix (it has no"
    " FIXED switch): fuzz the app again to check one"
)
"""What the failure of such a test notes where its outputs differ: once fixed, it fails all
the same, and "while the bug is there" alone read as the bug being there still."""

_TWICE = (
    "As the fuzzer did, it also drives the steps on two fresh instances of the app side by"
    " side, and fails at the first step where the two do not do the same: in a fresh process"
    " one run alone may do as recorded. That does not close the gap: an app that misbehaves"
    " only now and then (at the Nth call in a process, say) may do the same on both, so this"
    " test may pass while the bug is there. Nor can it check a fix, and it has no FIXED"
    " switch: fuzz the app again to check one."
)
"""What the module's docstring adds for a session recorded as nondeterministic."""


def _effect_doc(failure: str) -> str:
    """What the module's docstring adds for a counterexample that is an effect raising."""
    return (
        f"The session is a fuzz counterexample: {_in_docstring(shortened(failure, 200))}. An"
        " effect's failure is an input of the session, which this test feeds back as logged,"
        " so it passes whether or not the effect is fixed, and it has no FIXED switch: fuzz"
        " the app again to check a fix."
    )


_PINNED_NONDETERMINISTIC = (
    "The test pins the recorded run, failure included, as far as the app does it again: see below."
)

_DETERMINISTIC = (
    "the app is not deterministic: its update, view, handlers and subscriptions must depend"
    " on their arguments alone"
)


def _plain(event: Any) -> dict[str, Any]:
    data = CONVERTER.unstructure(event)
    if data.get("_type") == "Committed":
        data = {k: v for k, v in data.items() if k != "delta"}
    return data


def _non_finite_names(value: object) -> set[str]:
    """The names NaN and the infinities in `value` print as (``nan``, ``inf``; an effect's
    result may be one), which the module must then import."""
    if isinstance(value, float):
        return set() if math.isfinite(value) else {"nan" if math.isnan(value) else "inf"}
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list | tuple):
        return set().union(*map(_non_finite_names, value))
    return set()


def _in_docstring(text: str) -> str:
    """The repr of `text`, written so that a triple-quoted docstring reads it back as it is:
    a name may hold backslashes (``\\N``, ``\\U`` would be escapes) and double quotes."""
    return repr(text).replace("\\", "\\\\").replace('"', '\\"')


def _test_name(session: str) -> str:
    """A Python identifier for `session`: unicode word characters are not all valid there."""
    return re.sub(r"\W+", "_", session, flags=re.ASCII).strip("_").lower() or "session"


NOT_EXPORTED = "no test is written of an edited log"


def export_test(recorder: Recorder, session: str, *, app_ref: str | None = None) -> str:
    """The source of a pytest module for `session`. A log replay refuses as damaged is
    refused alike (``CorruptSummaryError``, ``InconsistentLogError``), one that breaks its
    integrity chain among them: the test would re-drive what the session's agent never
    did, or check what it was never shown.
    `app_ref` (default: the one the session recorded) must be ``module:attribute``."""
    if app_ref is not None:
        check_app_ref(app_ref)
    with recorder.pinned():
        return _exported(recorder, session, app_ref)


def _exported(recorder: Recorder, session: str, app_ref: str | None) -> str:
    known_head(recorder, session)
    initial: list[dict[str, Any]] = []
    steps: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    crash: tuple[int, str] | None = None
    unrecorded = False
    params: dict[str, Any] = {}
    names: dict[object, str] = {}  # node id (as on the wire): what it is known by
    targets: dict[int, str] = {}  # step: what the node its target's id names was known by
    for _record, event in checked_events(recorder, session, refused=NOT_EXPORTED):
        if isinstance(event, SessionStarted):
            app_ref = app_ref or event.app
            params = event.params
        elif isinstance(event, INPUT_CLASSES):
            steps.append((CONVERTER.unstructure(event), []))
            unrecorded = unrecorded_message(event)
            named = _node_named(names, event.target) if isinstance(event, ActionRequested) else None
            # One another node shares (a Delete per row) would pass for it moved: not checked.
            if named is not None and sum(name == named for name in names.values()) == 1:
                targets[len(steps)] = named
        elif isinstance(event, COMPARED):
            if isinstance(event, Committed):
                _follow(names, event.delta)
            (steps[-1][1] if steps else initial).append(_plain(event))
        elif isinstance(event, SessionCrashed):
            crash = (len(steps), event.exception_type)
    # Read once the chain verified: an edit of them is damage, not a malformed session.
    str_hash: Any = params.get(STR_HASH)
    reads = recorded_reads(params)
    issues = recorded_issue_check(params)
    violated = recorded_violation(params)
    nondeterministic = recorded_nondeterministic(params)
    effect_failure = recorded_effect_failure(params)
    if app_ref is None:
        raise ValueError(f"session {session!r} names no app; pass --app")
    # A crash on a message the log could not record happens again whatever the fix; masked
    # text typed before the failure may not reach the bug as the recorded text did.
    masked = _first_redacted(steps)
    failed = (crash is not None and not unrecorded) or violated is not None
    fixable = failed and _unfixable(steps, nondeterministic=nondeterministic) is None
    non_finite = sorted(_non_finite_names([initial, steps]))
    return _TEMPLATE.format(
        math_import=f"from math import {', '.join(non_finite)}\n\n" if non_finite else "",
        session=_in_docstring(session),
        app=_in_docstring(app_ref),
        app_literal=repr(app_ref),
        session_literal=repr(session),
        name=_test_name(session),
        initial=pprint.pformat(initial, width=96, sort_dicts=False),
        steps=pprint.pformat(steps, width=96, sort_dicts=False),
        checks_doc=_checks_doc(issues is not None, bool(reads)),
        failure_doc=_failure_doc(
            crash,
            violated,
            unrecorded=unrecorded,
            masked=masked,
            nondeterministic=nondeterministic,
        ),
        nondeterministic_doc=(
            f"\n\n{_wrap(f'{_NONDETERMINISTIC[0].upper()}{_NONDETERMINISTIC[1:]}. {_TWICE}')}"
            if nondeterministic
            else ""
        ),
        effect_doc="" if effect_failure is None else f"\n\n{_wrap(_effect_doc(effect_failure))}",
        reads_block=f"\nREADS = {pprint.pformat(reads, width=96)}\n" if reads else "",
        issues_block=(
            "" if issues is None else f"\nALLOWED_ISSUES: list[str] = {sorted(issues)!r}\n"
        ),
        crash_block=f"\nCRASH = {crash!r}\n" if crash else "",
        violation_block=(
            f"\nVIOLATION = {(violated.step, violated.check)!r}\n" if violated else ""
        ),
        fixed_block=_FIXED_BLOCK if fixable else "",
        targets_block=_targets_block(targets) if fixable and targets else "",
        str_hash_block="" if str_hash is None else f"\nSTR_HASH = {str_hash!r}\n",
        arguments="\n".join(
            f"        {argument},"
            for argument in [
                "APP",
                "INITIAL",
                "STEPS",
                *(["READS"] if reads else []),
                *(["crash=CRASH"] if crash else []),
                *([] if issues is None else ["issues=ALLOWED_ISSUES"]),
                *(["violation=VIOLATION"] if violated else []),
                *([] if str_hash is None else ["str_hash=STR_HASH"]),
                *(["nondeterministic=True"] if nondeterministic else []),
                *(["fixed=FIXED"] if fixable else []),
                *(["targets=TARGETS"] if fixable and targets else []),
                "session=SESSION",
            ]
        ),
    )


def _targets_block(targets: dict[int, str]) -> str:
    return (
        "\n# What the node each step names by id was known by in the recorded tree: with FIXED,"
        "\n# the node with that id must be the same one (see the docstring).\n"
        f"TARGETS = {pprint.pformat(targets, width=96)}\n"
    )


def _checks_doc(issues: bool, reads: bool) -> str:
    """The end of the docstring's first paragraph: the checks the test makes besides the
    outputs, a fuzzer's among them."""
    fuzzed = [
        *(["the view reports no issues but ALLOWED_ISSUES"] if issues else []),
        *(["the reads it checked hold again"] if reads else []),
    ]
    also = f"; as the fuzzer did, also that {' and that '.join(fuzzed)}" if fuzzed else ""
    return _wrap(f"recorded and that every step keeps the generation invariants{also}.")


def _wrap(text: str) -> str:
    return textwrap.fill(text, width=92, break_long_words=False, break_on_hyphens=False)


def _failure_doc(
    crash: tuple[int, str] | None,
    violated: RecordedViolation | None,
    *,
    unrecorded: bool,
    masked: int | None,
    nondeterministic: bool,
) -> str:
    """How the recorded session failed, as the docstring says it: the test checks that it
    still does. `unrecorded`: its last input is a message the log could not record;
    `masked`: the first step redacted in the log; `nondeterministic`: the fuzzer recorded
    the session so (which the docstring then says after this)."""
    if crash is not None and unrecorded:
        return "\n\n" + _wrap(
            f"The session crashed at step {crash[0]} on a message the log could not record:"
            " the test feeds none back, so it raises there again even once the app is fixed,"
            " and cannot confirm a fix: check one by fuzzing the app again or running it."
        )
    if crash is not None:
        failed = (
            "The session crashed: the application must raise the same exception type at the"
            " same step again."
        )
    elif violated is not None:
        failed = (
            f"The fuzzer found a {FAILURES[violated.check]} at step {violated.step}:"
            f" {_in_docstring(violated.failure)}. The same check must fail there again."
        )
    else:
        return ""
    if nondeterministic:
        return f"\n\n{_wrap(failed)}\n\n{_wrap(_PINNED_NONDETERMINISTIC)}"
    if masked is not None:
        return f"\n\n{_wrap(failed)}\n\n{_wrap(_pinned_masked(masked))}"
    return f"\n\n{_wrap(failed)}\n\n{_wrap(_PINNED)}"


def _pinned_masked(step: int) -> str:
    return (
        f"The test pins the recorded run, failure included. Step {step} was redacted in the log"
        " (a password) and is re-driven with masked text: where the failure depends on that"
        " text, the test fails while the bug is there, saying so. It cannot check a fix, and"
        " has no FIXED switch: masked text may not reach the bug as the recorded text did;"
        " record the session with --log-passwords and export the test again to check one."
    )


def _first_redacted(steps: list[tuple[dict[str, Any], list[dict[str, Any]]]]) -> int | None:
    """The first of `steps` (from 1) whose text the log holds masked, if one is."""
    return next((n for n, (event, _) in enumerate(steps, start=1) if event.get("redacted")), None)


def _target(path: str | os.PathLike[str]) -> Path:
    """The regular file `path` names (through a symlink), or `OSError` when there can be
    none: an empty path, a directory, a FIFO or a device (renamed over, it is gone).
    ``TypeError`` for a `path` that is no str or ``os.PathLike`` of one."""
    text = os.fspath(path) if isinstance(path, str | os.PathLike) else path
    if not isinstance(text, str):
        raise TypeError(
            f"path: expected a file path (a str or os.PathLike), got {type(path).__name__}"
            f" {path!r:.80}"
        )
    if not text:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), text)
    target = Path(os.path.realpath(text))
    if text.endswith(os.sep) or target.is_dir():
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), text)
    if target.exists() and not target.is_file():
        raise OSError(errno.EINVAL, "it is not a regular file", text)
    return target


def _partial(target: Path, path: str | os.PathLike[str]) -> tuple[Path, int]:
    """A new file beside `target` to write it whole in, open; an `OSError` making it names
    `path`, the file asked for, not this one (a name its caller never gave, and gone)."""
    partial = target.with_name(f".{target.name}.{secrets.token_hex(4)}.partial")
    try:
        return partial, os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as error:
        raise OSError(error.errno, error.strerror, os.fspath(path)) from error


def check_writable(path: str | os.PathLike[str]) -> None:
    """Raise the `OSError` `write_whole` would raise for `path`, without writing it: asked
    before long work, so that it does not end in an error."""
    partial, fd = _partial(_target(path), path)
    os.close(fd)
    partial.unlink()


def write_whole(path: str | os.PathLike[str], source: str) -> None:
    """Write `source` to `path` whole or not at all: into a new file beside it, then renamed
    over it (over the file a symlink names, not the link), keeping the mode of the file it
    replaces (a file only its owner could read stays so). Raises `OSError` (a directory, a
    missing parent, no permission, an existing file that is not a regular one) naming
    `path`, and ``TypeError`` for a `source` that is no str, before any file is made."""
    if not isinstance(source, str):
        raise TypeError(f"source: expected a str, got {type(source).__name__} {source!r:.80}")
    target = _target(path)
    partial, fd = _partial(target, path)
    try:
        with open(fd, "w", encoding="utf-8") as file:
            with suppress(FileNotFoundError):  # a new file: the umask's mode
                os.fchmod(file.fileno(), stat.S_IMODE(target.stat().st_mode))
            file.write(source)
        os.replace(partial, target)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


class _FailureGoneError(AssertionError):
    """The recorded failure no longer happens: the fix working, which `check_recorded_steps`
    fails with as a plain ``AssertionError`` (pytest would print this type's module path),
    saying what to do then."""


class _StillError(AssertionError):
    """With `fixed`, the recorded failure still happens: the bug still there, which nothing
    noted on a divergence explains. `check_recorded_steps` fails with it as a plain
    ``AssertionError``, without those notes."""


class _DiffersError(AssertionError):
    """A step's outputs differ from the recorded ones; its arguments are the message and the
    recorded failure still ahead, if one is (a fix of it may change earlier steps too).
    `check_recorded_steps` fails with it as a plain ``AssertionError``, noted so (as
    `semledger replay` notes it)."""


@contextmanager
def _crashes(where: str, exception_type: str, masked: str = "") -> Iterator[None]:
    """Assert that the block raises what the recorded session logged as `exception_type`;
    `masked` (`_masked`) is why it may not, the app unchanged."""
    try:
        yield
    except Exception as error:  # as `reexecute` takes it: whatever the session crashed with
        raised = crash_event(error).exception_type
        if raised != exception_type:
            raise AssertionError(
                f"{where} raised {raised}, where the recorded session raised {exception_type}"
            ) from error
    else:
        raise _FailureGoneError(
            f"{where} succeeded, where the recorded session raised {exception_type}: the"
            f" recorded crash no longer happens{masked}."
        )


def _difference(recorded: list[dict[str, Any]], produced: list[dict[str, Any]]) -> str:
    """Where two lists of outputs first differ, both sides shown: this module's asserts are
    not rewritten by pytest, so their message is all a failing exported test says."""
    for index, (was, now) in enumerate(zip(recorded, produced, strict=False), start=1):
        if was != now:
            return f"output {index} was recorded as {was!r}, and is now {now!r}"
    common = min(len(recorded), len(produced))
    if len(recorded) > common:
        return f"output {common + 1} was recorded as {recorded[common]!r}, and is now missing"
    return f"output {common + 1} is new: {produced[common]!r}"


def _masked(redacted: list[int], step: int) -> str:
    """Why `step` may differ, as `semledger replay` notes it: an input the log holds with its
    text masked (the steps in `redacted`) is re-driven with that text."""
    if not redacted:
        return ""
    which = "this input" if redacted[-1] == step else f"step {redacted[0]}, an earlier input,"
    return (
        f": {which} was redacted in the log and is re-driven with masked text, which may be"
        " the cause; recording with --log-passwords keeps the text and avoids this"
    )


def check_recorded_steps(
    app_ref: str,
    initial: list[dict[str, Any]],
    steps: list[tuple[dict[str, Any], list[dict[str, Any]]]],
    reads: dict[int, list[int | None]] | None = None,
    crash: tuple[int, str] | None = None,
    *,
    issues: list[str] | None = None,
    violation: tuple[int, str] | None = None,
    str_hash: dict[str, Any] | None = None,
    nondeterministic: bool = False,
    fixed: bool = False,
    targets: dict[int, str] | None = None,
    session: str | None = None,
) -> None:
    """Assert that re-driving `steps` against the app reproduces every recorded output and
    keeps the generation invariants, and that each read in `reads` (``since`` values by the
    number of steps before them, as a fuzzer counterexample records them) passes
    `check_read`; with `issues` (a fuzzer counterexample's allowance), that the view reports
    no issues but those.

    `crash` is the step (0: as the app started) and exception type the recorded session
    crashed with: the app must raise that type there, where the steps end. `violation` is
    the step and the check (``"generation"``, ``"issues"``, ``"read"``, ``"answer"``,
    ``"node_id"``) a fuzzer counterexample failed: that check must fail there, where the
    steps end. `str_hash` is
    how the recorded run hashed str (its ``params["str_hash"]``): where the steps differ and
    this process hashes otherwise, the failure notes that this may be why (as replay does:
    not where the recorded failure no longer happens, unless the recorded seed can be given
    again). `nondeterministic`: the fuzzer recorded the session as nondeterministic, which
    the failure notes first; the steps are then also driven on two fresh instances of the
    app side by side, which must do the same at every step, as the fuzzer's twin must.

    `fixed`: the bug that made the recorded session fail is fixed. The same inputs are
    re-driven, and nothing must raise, every step must keep the generation invariants and
    pass the fuzzer's checks, the failed one among them; the outputs are not compared (the
    fix may change them), but an action the recording accepted (or crashed on) must reach
    the app again, lest the check pass without the inputs reaching what failed. `targets`
    (by step) is what the node a step names by id was known by in the recorded tree
    (`known_as`): with `fixed`, the node with that id must have the same semantic id, or
    with none the same role (another label only warns), lest the step act on another node.
    Steps that cannot check a fix fail `fixed` at once: of a session recorded as
    `nondeterministic` (an app that misbehaves now and then may pass them, the bug still
    there), or holding an input redacted in the log (its masked text may not reach the bug).

    `session` (the recorded session's name) goes into the replay command that a difference
    of outputs is noted with."""
    app = load_app(app_ref)
    unfixable = _unfixable(steps, nondeterministic=nondeterministic)
    if fixed and unfixable is not None:
        raise AssertionError(f"fixed=True cannot check a fix of this session: {unfixable}")
    advice = _SET_FIXED if unfixable is None else _CANNOT_FIX
    checks = FuzzChecks(
        reads or {},
        None if issues is None else frozenset(issues),
        None if violation is None else RecordedViolation(*violation, ""),
        fuzzed=issues is not None,  # (a fuzzer counterexample's allowance)
    )
    try:
        if fixed:
            _check_fixed(app, steps, crash, checks, targets or {})
        else:
            _check_steps(app, initial, steps, checks, crash, violation)
        if nondeterministic:
            _check_deterministic(app, steps)
    except _StillError as still:
        raise AssertionError(*still.args) from still.__cause__
    except _FailureGoneError as gone:
        plain = AssertionError(f"{gone.args[0]} {advice}")
        _note_why(plain, str_hash, nondeterministic, fix_working=True)
        raise plain from None
    except _DiffersError as differs:
        message, ahead = differs.args
        plain = AssertionError(message)
        if ahead is not None:
            plain.add_note(
                f"note: {ahead} comes after this step; a fix of it may change earlier steps"
                " too, and then this difference is the fix working: "
                + (_FIXED_ONCE if unfixable is None else _CANNOT_FIX)
            )
        _note_why(plain, str_hash, nondeterministic, fix_working=ahead is not None)
        if nondeterministic and ahead is None:
            plain.add_note(f"note: {_FAILS_FIXED_TOO}")
        plain.add_note(f"note: {_nodes_that_differ(session, app_ref)}")
        raise plain from None
    except Exception as error:
        _note_why(error, str_hash, nondeterministic, fix_working=False)
        raise


def _unfixable(
    steps: list[tuple[dict[str, Any], list[dict[str, Any]]]], *, nondeterministic: bool
) -> str | None:
    """Why re-driving `steps` cannot check a fix of the recorded failure, if it cannot."""
    if nondeterministic:
        return (
            "the fuzzer recorded it as nondeterministic, and an app that misbehaves only now"
            " and then may pass this test with the bug still there; fuzz the app again to"
            " check one"
        )
    masked = _first_redacted(steps)
    if masked is not None:
        return (
            f"step {masked} was redacted in the log and is re-driven with masked text, which"
            " may not reach the bug as the recorded text did; record the session with"
            " --log-passwords and export the test again"
        )
    return None


def _nodes_that_differ(session: str | None, app_ref: str) -> str:
    """The replay command that shows what differs behind two hashes."""
    if session is None:  # a module exported before it named its session
        named, said = "SESSION", "the session and log this test was exported from"
    else:
        named, said = shlex.quote(session), "LOG: the log this test was exported from"
    return (
        f"`semledger replay {named} --db LOG --app {shlex.quote(app_ref)}` ({said}) shows"
        " the nodes that differ"
    )


def _note_why(
    error: Exception, str_hash: object, nondeterministic: bool, *, fix_working: bool
) -> None:
    """Note on `error` what may explain it with the app unchanged: that the fuzzer recorded
    the session as nondeterministic, that the recorded run hashed str otherwise
    (`str_hashing_note`; of a random seed, not on the recorded failure no longer happening:
    every process hashes otherwise then, so it would be on every check of a fix)."""
    if nondeterministic:
        error.add_note(f"note: {_NONDETERMINISTIC}")
    note = str_hashing_note(str_hash)
    if note is not None and (not fix_working or seed_recorded(str_hash)):
        error.add_note(f"note: {note}")


def _check_steps(
    app: App[Any, Any],
    initial: list[dict[str, Any]],
    steps: list[tuple[dict[str, Any], list[dict[str, Any]]]],
    checks: FuzzChecks,
    crash: tuple[int, str] | None,
    violation: tuple[int, str] | None,
) -> None:
    if crash is not None and crash[0] == 0:
        with _crashes("the app, as it started,", crash[1]):
            SessionCore(app)
        return
    core = SessionCore(app)
    first = [_plain(e) for e in core.initial_outputs()]
    ahead = _failure_ahead(crash, violation, 0)
    _same_outputs(checks, core.runtime, 0, "the first build", initial, first, ahead=ahead)
    if _failed_as_recorded(checks, 0, "as it started", checks.after(core.runtime, 0)):
        return
    checker = GenerationChecker(core.runtime.snapshot)
    redacted: list[int] = []
    for number, (event, expected) in enumerate(steps, start=1):
        decoded = CONVERTER.structure(event)
        where = f"step {number} ({event['_type']})"
        if event.get("redacted"):
            redacted.append(number)
        masked = _masked(redacted, number)
        if crash is not None and number == crash[0]:
            with _crashes(where, crash[1], masked):
                core.step(decoded)
            return
        before = core.runtime.snapshot
        result = core.step(decoded)
        checks.took(before, decoded, result.outcome, bool(core.effects), number)
        broken = _violation(functools.partial(checker.check, core.runtime.snapshot, result.outcome))
        if broken is not None and _failed_as_recorded(checks, number, where, broken, masked):
            return
        produced = [_plain(e) for e in result.outputs]
        ahead = _failure_ahead(crash, violation, number)
        _same_outputs(checks, core.runtime, number, where, expected, produced, masked, ahead)
        after = checks.after(core.runtime, number)
        if _failed_as_recorded(checks, number, where, after, masked):
            return
    assert crash is None, f"the recorded session crashed at step {crash[0]}, after the last step"
    assert violation is None, (
        f"the recorded session failed its {violation[1]} check at step {violation[0]}, after"
        " the last step"
    )


_T = TypeVar("_T")


def _check_fixed(
    app: App[Any, Any],
    steps: list[tuple[dict[str, Any], list[dict[str, Any]]]],
    crash: tuple[int, str] | None,
    checks: FuzzChecks,
    targets: dict[int, str],
) -> None:
    """`check_recorded_steps` with `fixed`: the steps re-driven, no output compared."""
    core = _unraised(lambda: SessionCore(app), "the app, as it started,", crash, 0)
    _checks_hold(checks, core.runtime, 0, "as it started")
    checker = GenerationChecker(core.runtime.snapshot)
    for number, (event, recorded) in enumerate(steps, start=1):
        decoded = CONVERTER.structure(event)
        where = f"step {number} ({event['_type']})"
        effect = decoded.effect_id if isinstance(decoded, EffectCompleted | EffectFailed) else None
        if effect is not None and effect not in core.effects:
            raise AssertionError(
                f"{where}: the recording completed effect {effect}, which the app has not"
                f" started{_no_longer('the effects the app starts')}"
            )
        if number in targets:
            _check_same_node(where, core.runtime.snapshot, decoded, targets[number])
        before = core.runtime.snapshot
        result = _unraised(functools.partial(core.step, decoded), where, crash, number)
        checks.took(before, decoded, result.outcome, bool(core.effects), number)
        crashed = crash is not None and crash[0] == number
        _check_let_through(where, result, recorded, crashed=crashed)
        broken = _violation(functools.partial(checker.check, core.runtime.snapshot, result.outcome))
        if broken is not None:
            raise _still(checks, number, broken)
        _checks_hold(checks, core.runtime, number, where)


def _check_same_node(where: str, snapshot: SemanticsSnapshot, event: Any, recorded: str) -> None:
    """Raise if the node `event` targets by id is now another than `recorded` (`known_as`):
    another semantic id, or another role, or another label while a node of another id is
    known as `recorded`: the step would act on another node instead.

    Only warn when just the label differs and no node is known as `recorded`: a label often
    shows what the model holds (a count, a total), which a fix changes, and the node is
    then likely the same."""
    target = getattr(event, "target", None)
    node_id = target.get("id") if isinstance(target, dict) else None
    node = snapshot.node(int(node_id)) if isinstance(node_id, str) and node_id.isdigit() else None
    if node is None:  # (the step is then rejected, and judged as that)
        return
    now = known_as(node.semantic_id, node.role, node.label)
    if now == recorded:
        return
    said = f"{where}: the recorded run's node {node_id} was {_shown(recorded)}, and node"
    moved = _known_as_now(snapshot, recorded)
    if moved is not None:
        said = f"{said} {node_id} is now {_shown(now)}, while node {moved} is {_shown(recorded)}"
        raise AssertionError(f"{said}{_no_longer('the nodes their node ids name')}")
    if now.split(" ", 1)[0] == recorded.split(" ", 1)[0]:  # (the same role, no semantic id)
        warnings.warn(
            f"{said} {node_id} is now {_shown(now)}: taken as the same node with another"
            " label; if the fix moved node ids, this test may not reach the recorded failure",
            stacklevel=4,
        )
        return
    raise AssertionError(
        f"{said} {node_id} is now {_shown(now)}{_no_longer('the nodes their node ids name')}"
    )


def _known_as_now(snapshot: SemanticsSnapshot, known: str) -> int | None:
    """The id of a node in `snapshot` known as `known` (`known_as`), if one is."""
    for node_id, node in snapshot.nodes.items():
        if known_as(node.semantic_id, node.role, node.label) == known:
            return node_id
    return None


def _shown(known: str) -> str:
    """A node's name on one line (an app's label may hold a newline), cut at 60 characters."""
    return shortened(printable(known), 60)


def _unraised(call: Callable[[], _T], where: str, crash: tuple[int, str] | None, step: int) -> _T:
    """What `call` returns; `AssertionError` saying what it raised, if it raised."""
    try:
        return call()
    except UnsubscribedTimerError as error:
        changed = _no_longer("the timers the app subscribes to")
        raise AssertionError(f"{where}: {error}{changed}") from error
    except Exception as error:  # as `reexecute` takes it: whatever the session crashed with
        raised = crash_event(error).exception_type
        if crash == (step, raised):
            raise _StillError(
                f"{where} raised {raised}: the recorded crash still happens"
            ) from error
        raise AssertionError(f"{where} raised {raised}") from error


def _check_let_through(
    where: str, result: StepResult, recorded: list[dict[str, Any]], *, crashed: bool
) -> None:
    """Raise if the recording accepted the action (or `crashed` on it) and it is now refused
    before it reaches the app: a check of the fix would pass without the inputs reaching
    what failed."""
    outcome = result.outcome
    if result.reached_the_app or not isinstance(outcome, Rejection):
        return
    if crashed:
        did = "crashed on it"
    elif any(output.get("_type") == "ActionReceipt" for output in recorded):
        did = "accepted it"
    else:
        return
    raise AssertionError(
        f"{where}: the recorded run {did}, and the app now rejects it"
        f" ({outcome.code.value}: {outcome.message})"
        f"{_no_longer(_REFUSED.get(outcome.code, 'what the app accepts'))}"
    )


def _checks_hold(checks: FuzzChecks, runtime: AppRuntime[Any, Any], step: int, where: str) -> None:
    """Raise if a check the fuzzer made after `step` inputs fails, or reads a generation the
    app has not reached (the fix changed which steps commit)."""
    for since in checks.reads.get(step, ()):
        if since is not None and since > runtime.generation:
            raise AssertionError(
                f"{where}: the recording read since generation {since}, which the app, at"
                f" {runtime.generation}, has not reached"
                f"{_no_longer('the generations the app commits, which they name')}"
            )
    violation = checks.after(runtime, step)
    if violation is not None:
        raise _still(checks, step, violation)


def _still(checks: FuzzChecks, step: int, violation: InvariantViolation) -> AssertionError:
    """`violation`, said to be the recorded failure if it is that."""
    recorded = checks.violated
    if recorded is None or (recorded.step, recorded.check) != (step, violation.check):
        return violation
    return _StillError(f"{violation}: the recorded {FAILURES[recorded.check]} still happens")


def _check_deterministic(
    app: App[Any, Any], steps: list[tuple[dict[str, Any], list[dict[str, Any]]]]
) -> None:
    """Drive `steps` on two fresh instances of the app side by side, as the fuzzer drives an
    example and its twin: each step must do the same on both."""
    for (where, one), (_, other) in zip(_run(app, steps), _run(app, steps), strict=True):
        if one != other:
            raise AssertionError(
                f"{where} did not do the same on two fresh instances of the app in this"
                f" process: {_twin_difference(one, other)}; {_DETERMINISTIC}"
            )


_Did = tuple[list[dict[str, Any]], object, tuple[object, ...]] | str
"""What a step did: its outputs, answer and the timers subscribed to after it; or the type
of the exception it raised."""


def _run(
    app: App[Any, Any], steps: list[tuple[dict[str, Any], list[dict[str, Any]]]]
) -> Iterator[tuple[str, _Did]]:
    """Where and what each step does (the start first) on a fresh instance of the app, up to
    the first that raises."""
    try:
        core = SessionCore(app)
    except Exception as error:
        yield "the app, as it started,", crash_event(error).exception_type
        return
    first = [_plain(e) for e in core.initial_outputs()]
    yield "the app, as it started,", (first, None, tuple(core.runtime.subscriptions()))
    for number, (event, _recorded) in enumerate(steps, start=1):
        where = f"step {number} ({event['_type']})"
        try:
            result = core.step(CONVERTER.structure(event))
        except Exception as error:
            yield where, crash_event(error).exception_type
            return
        yield where, ([_plain(e) for e in result.outputs], result.outcome, result.timers)


def _twin_difference(one: _Did, other: _Did) -> str:
    if isinstance(one, str) or isinstance(other, str):
        return f"one {_did(one)} and the other {_did(other)}"
    for index, (was, now) in enumerate(itertools.zip_longest(one[0], other[0]), start=1):
        if was != now:
            return f"output {index} was {was!r} on one and {now!r} on the other"
    if one[1] != other[1]:
        return f"one answered {one[1]!r} and the other {other[1]!r}"
    return f"one subscribed to {list(one[2])!r} and the other to {list(other[2])!r}"


def _did(did: _Did) -> str:
    return f"raised {did}" if isinstance(did, str) else "raised nothing"


def _same_outputs(
    checks: FuzzChecks,
    runtime: AppRuntime[Any, Any],
    step: int,
    where: str,
    recorded: list[dict[str, Any]],
    produced: list[dict[str, Any]],
    masked: str = "",
    ahead: str | None = None,
) -> None:
    """Assert that `step` produced the `recorded` outputs; where they differ at the step whose
    check a fuzzer counterexample failed, say first if that check no longer fails there (a
    fix of the bug changes the view that had it); `ahead` names the recorded failure when it
    comes after `step`."""
    if produced == recorded or _compared(produced) == _compared(recorded):
        return
    differs = _difference(recorded, produced)
    gone = checks.gone(step, 0, runtime)
    if gone is not None:
        raise _FailureGoneError(f"{where}{masked}: {_gone(gone)} (and {differs}).")
    raise _DiffersError(f"{where} differs{masked}: {differs}", ahead)


def _compared(outputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`outputs` as a step's are compared: a rejection's message only where the app wrote
    it (`app_worded`), so that a test exported before semledger reworded one still passes."""
    return [
        {k: v for k, v in output.items() if k != "message"}
        if output.get("_type") == "ActionRejected" and not app_worded(output.get("code", ""))
        else output
        for output in outputs
    ]


def _failure_ahead(
    crash: tuple[int, str] | None, violation: tuple[int, str] | None, step: int
) -> str | None:
    """The recorded failure, named, if it comes after `step`."""
    if crash is not None and crash[0] > step:
        return f"the recorded crash ({crash[1]}) at step {crash[0]}"
    if violation is not None and violation[0] > step:
        return f"the recorded {FAILURES.get(violation[1], 'failure')} at step {violation[0]}"
    return None


def _gone(divergence: Divergence) -> str:
    return f"recorded: {divergence.expected}; now: {divergence.actual}"


def _violation(check: Callable[[], None]) -> InvariantViolation | None:
    try:
        check()
    except InvariantViolation as violation:
        return violation
    return None


def _failed_as_recorded(
    checks: FuzzChecks,
    step: int,
    where: str,
    violation: InvariantViolation | None,
    masked: str = "",
) -> bool:
    """Whether `step`'s checks failed as the recorded session's did, where the test ends.
    Raises when they failed otherwise (`violation` itself), or held where the recorded ones
    failed."""
    divergence = checks.judge(step, 0, violation)
    if divergence is None:
        return checks.reproduced is not None
    if violation is not None:
        raise violation
    raise _FailureGoneError(f"{where}{masked}: {_gone(divergence)}.")
