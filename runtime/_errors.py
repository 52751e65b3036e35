"""The errors that say the application, not the runtime, went wrong."""

from __future__ import annotations

import sys


def app_failed(error: BaseException) -> bool:
    """Whether `error`, raised by the application's code (init, update, view, a handler, an
    effect), is its own failure: anything but Ctrl-C's ``KeyboardInterrupt``, which lands
    in whatever code runs, and Trio's ``Cancelled``, there or in an exception group. A
    ``SystemExit`` (``sys.exit()`` in a library it calls), asyncio's ``CancelledError`` or a
    ``GeneratorExit`` is the app's: let through, it stopped the whole server with nothing
    logged, and again on every resume, which starts an outstanding effect again.

    Trio is looked up, not imported: the pure runtime does not load it, and without it
    loaded nothing raises its ``Cancelled``."""
    trio = sys.modules.get("trio")
    stops = (KeyboardInterrupt,) if trio is None else (KeyboardInterrupt, trio.Cancelled)
    if isinstance(error, BaseExceptionGroup):
        return error.split(stops)[0] is None
    return not isinstance(error, stops)


class ApplicationError(Exception):
    """Raised when the application's own init, update, view or handler raised.

    Nothing of the failed call is applied (a failed handler proposes nothing, a failed update
    keeps the model it was given), but messages drained before it stay applied; those queued
    after it (proposed with it, or delivered while it ran) are dropped.
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
