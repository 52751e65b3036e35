"""The errors that say the application, not the runtime, went wrong."""

from __future__ import annotations

from typing import Final

APP_FAILURES: Final = (Exception, SystemExit)
"""What the application's code raises that is its own failure: any ``Exception``, and
``SystemExit`` (``sys.exit()`` in a library it calls), which would otherwise stop the whole
server with no crash logged, and stop it again on every resume. Not ``KeyboardInterrupt``,
which Ctrl-C raises in whatever code runs, nor Trio's ``Cancelled``."""


class ApplicationError(Exception):
    """Raised when the application's own init, update, view or handler raised.

    Nothing of the failed call is applied (a failed handler proposes nothing, a failed update
    keeps the model it was given), but messages drained before it stay applied.
    ``__cause__`` is the original error.
    """


class NotAViewError(TypeError):
    """The cause of the `ApplicationError` raised when an app's view returns something that
    is not a `View` (a list of views, None), or gives a view a child that is not one: the
    tree could only fail on it somewhere inside."""


class NotAModelError(TypeError):
    """The cause of the `ApplicationError` raised when init or update returns what is not of
    the app's ``model_type``: None from an update that forgot its ``return``, a
    ``(model, effects)`` tuple for ``Next(model, effects)``. It would otherwise fail later,
    in the view (or show a repr, which differs in each run), far from where it went wrong."""


class DuplicateKeyError(ValueError):
    """Raised where a view is built when two of its children share a ``key``: reconcile
    could not tell them apart, and would remount them on every build. Within an app's view
    it is the cause of an `ApplicationError`."""


class NotAProposalError(TypeError):
    """The cause of the `ApplicationError` raised when a handler returns something other
    than a `Proposal`, a `Reject` or None (a bare message, say), or proposes a message class
    for a message (``Proposal((Go,))``): taken as nothing proposed, or as a message update
    never matches, the agent would be told its action was accepted while nothing happened."""


class ViewTooDeepError(ValueError):
    """The cause of the `ApplicationError` raised when a view nests deeper than
    `MAX_VIEW_DEPTH` levels: the runtime's tree passes recurse once a level, and past the
    interpreter's recursion limit the session would fail inside the runtime, not the app."""


class NonFiniteNumberError(ValueError):
    """The cause of the `ApplicationError` raised when an app gives the runtime NaN or an
    infinity (a ``ScrollBy`` delta, a ``Numeric`` field, a layout length), or a layout
    length so long that laying the view out adds up to an infinity: the snapshot would hold
    it, NaN equals nothing, so every commit would count as a change, and no JSON reply
    could carry it. Raised as views are built (`node`) too."""
