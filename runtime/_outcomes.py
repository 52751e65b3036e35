"""What an action or a read gives back: receipts and rejections."""

from __future__ import annotations

from typing import Any

import attrs

from ._enums import ErrorCode


@attrs.frozen
class Receipt:
    """A successful action: generations before and after, and whether effects are outstanding.

    ``before == after`` is valid: the action was accepted but changed nothing public. It does not
    mean an asynchronous effect has finished; ``pending_work`` says whether one is outstanding.
    """

    before: int
    after: int
    pending_work: bool


@attrs.frozen
class Rejection:
    """A business rejection: no message was delivered and nothing changed."""

    code: ErrorCode
    message: str
    details: dict[str, Any] = attrs.field(factory=dict)
