"""What ``open`` starts a session with, and the restorable state a checkpoint stores."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import attrs

from ._wire import limits


@attrs.frozen
class Cookie:
    """One cookie of a web session; ``expires`` is seconds since the epoch, -1 for a
    session cookie."""

    name: str
    value: str
    domain: str
    path: str = "/"
    expires: float = -1
    http_only: bool = False
    secure: bool = False
    same_site: Literal["Strict", "Lax", "None"] = "Lax"


@attrs.frozen
class StorageItem:
    """One key of an origin's local storage."""

    name: str
    value: str


@attrs.frozen
class OriginState:
    """The local storage of one origin."""

    origin: str = attrs.field(metadata=limits(minLength=1))
    local_storage: tuple[StorageItem, ...] = ()


@attrs.frozen(kw_only=True)
class SessionState:
    """The restorable subset of a session's state: what a checkpoint stores and ``restore``
    puts back. Web adapters fill the cookies, origins and URL; ``extras`` holds whatever
    else an adapter can restore (string to string, adapter-defined)."""

    url: str | None = None
    cookies: tuple[Cookie, ...] = ()
    origins: tuple[OriginState, ...] = ()
    extras: Mapping[str, str] = attrs.field(factory=dict, hash=False)


@attrs.frozen
class Launch:
    """How a desktop session starts its application when no process of that name owns a
    window."""

    path: str = attrs.field(metadata=limits(minLength=1))
    args: tuple[str, ...] = ()
    cwd: str | None = None


@attrs.frozen
class Viewport:
    """The page or window size, in CSS or device-independent pixels."""

    width: int = attrs.field(metadata=limits(minimum=1))
    height: int = attrs.field(metadata=limits(minimum=1))


@attrs.frozen(kw_only=True)
class SessionInit:
    """What ``open`` starts a session with. Each adapter applies the fields its platform
    has: ``base_url`` (web), ``storage_state`` (a checkpoint to start from),
    ``app_path`` (mobile), ``process_name`` and ``launch`` (desktop)."""

    base_url: str | None = None
    storage_state: SessionState | None = None
    app_path: str | None = None
    process_name: str | None = None
    launch: Launch | None = None
    viewport: Viewport | None = None
    timeout_ms: int | None = attrs.field(default=None, metadata=limits(minimum=0))
