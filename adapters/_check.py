"""Evaluating a predicate against one element's facts: the same answer from every adapter.

An adapter gathers what its platform knows about the element (its normalised states, its
text, its value, whether it is checkable) and hands it here, so ``check`` means the same
whatever the surface.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from ._calls import (
    Checked,
    CheckResult,
    Disabled,
    Enabled,
    Focused,
    Hidden,
    Predicate,
    TextContains,
    TextEquals,
    Unchecked,
    ValueEquals,
    Visible,
)
from ._errors import CheckError


def text_matches(haystack: str | None, needle: str, exact: bool) -> bool:
    """A candidate's text rule: equal when `exact`, else a case-folded substring."""
    if haystack is None:
        return False
    if exact:
        return haystack == needle
    return needle.casefold() in haystack.casefold()


def check_pattern(pattern: str, actual: str) -> CheckResult:
    """``titleMatches`` and ``urlMatches``: a regex search; a bad pattern is a CheckError."""
    try:
        ok = re.search(pattern, actual) is not None
    except re.error as exc:
        raise CheckError(f"invalid pattern {pattern!r}: {exc}") from exc
    return CheckResult(ok=ok, actual=actual)


def check_text(pred: TextEquals | TextContains, text: str) -> CheckResult:
    """Exact or containment match, case-folded when the predicate ignores case."""
    want, seen = (pred.text.casefold(), text.casefold()) if pred.ignore_case else (pred.text, text)
    ok = seen == want if isinstance(pred, TextEquals) else want in seen
    return CheckResult(ok=ok, actual=text)


def check_element(
    pred: Predicate,
    *,
    states: Collection[str],
    text: str,
    value: str | None,
    checkable: bool,
) -> CheckResult:
    """`pred` against one element; raises CheckError for a predicate that cannot apply."""
    shown = ", ".join(sorted(states))
    if isinstance(pred, Visible | Hidden):
        visible = "hidden" not in states
        return CheckResult(ok=visible == isinstance(pred, Visible), actual=shown)
    if isinstance(pred, Enabled | Disabled):
        disabled = "disabled" in states
        return CheckResult(ok=disabled == isinstance(pred, Disabled), actual=shown)
    if isinstance(pred, Checked | Unchecked):
        if not checkable:
            raise CheckError("the element cannot be checked or unchecked")
        # A mixed (indeterminate) box is neither: its states hold neither word.
        actual = next((word for word in ("checked", "unchecked") if word in states), "mixed")
        return CheckResult(ok=actual == pred.kind, actual=actual)
    if isinstance(pred, Focused):
        return CheckResult(ok="focused" in states, actual=shown)
    if isinstance(pred, TextEquals | TextContains):
        return check_text(pred, text)
    if isinstance(pred, ValueEquals):
        return CheckResult(ok=value == pred.value, actual=value)
    raise CheckError(f"{pred.kind} cannot be evaluated against an element")
