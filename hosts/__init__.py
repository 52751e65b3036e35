"""semledger.hosts: the agent host contracts, the transport-free MCP router, and the thin
transports (stdio, Streamable HTTP) that serve logged sessions through it.

The router modules import no transport and no trio; the transports only move bytes.

The HTTP transport and the surface hosts are imported when first asked for: with the
adapters they come to a tenth of a stdio server's start, and a stdio server never uses them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._dispatch import announce, execute, handle, handle_message
from ._host import (
    AgentDiagnosticsHost,
    AgentHost,
    CommandIntent,
    PointerEvent,
    PointerPhase,
    RefusalRecorder,
)
from ._lifecycle import TRANSITIONS, LifecycleAction, LifecycleEvent, LifecycleState
from ._router import (
    BATCHING_PROTOCOL_VERSIONS,
    DEFAULT_INSTRUCTIONS,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    LATEST_PROTOCOL_VERSION,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    SUPPORTED_PROTOCOL_VERSIONS,
    DispatchCommandArguments,
    DispatchEventArguments,
    Event,
    NoArguments,
    PerformActionArguments,
    ReadSemanticsArguments,
    RefusedArguments,
    Reply,
    ReplyMessage,
    RequestId,
    Router,
    RouterUsageError,
    ToolArguments,
    ToolCall,
    encode_json,
    error_reply,
    parse_error_reply,
    parse_json,
)
from ._serve import Served, ServeError, new_session_name, serve_http, serve_stdio, serve_surface
from ._session_host import RuntimeAgentHost, SessionDiagnosticsHost
from ._stdio import run_stdio
from ._tools import (
    DEFAULT_TOOLS,
    DIAGNOSTICS_DISPATCH_COMMAND,
    DIAGNOSTICS_DISPATCH_EVENT,
    DIAGNOSTICS_READ_PAINT,
    DIAGNOSTICS_READ_STATE,
    DIAGNOSTICS_TOOLS,
    PERFORM_ACTION,
    READ_SEMANTICS,
    Profile,
    ToolDefinition,
    tools_for_profile,
)

if TYPE_CHECKING:
    from ._http import McpHttpApp, normalize_origin
    from ._surface_audit import LoggedSurfaceHost
    from ._surface_host import AdapterFailedError, SurfaceAgentHost, aria_to_runtime_role
    from ._surface_rerun import rerun_surface

_LAZY = {
    "McpHttpApp": "._http",
    "normalize_origin": "._http",
    "LoggedSurfaceHost": "._surface_audit",
    "AdapterFailedError": "._surface_host",
    "SurfaceAgentHost": "._surface_host",
    "aria_to_runtime_role": "._surface_host",
    "rerun_surface": "._surface_rerun",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "BATCHING_PROTOCOL_VERSIONS",
    "DEFAULT_INSTRUCTIONS",
    "DEFAULT_TOOLS",
    "DIAGNOSTICS_DISPATCH_COMMAND",
    "DIAGNOSTICS_DISPATCH_EVENT",
    "DIAGNOSTICS_READ_PAINT",
    "DIAGNOSTICS_READ_STATE",
    "DIAGNOSTICS_TOOLS",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "LATEST_PROTOCOL_VERSION",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "PERFORM_ACTION",
    "READ_SEMANTICS",
    "SUPPORTED_PROTOCOL_VERSIONS",
    "TRANSITIONS",
    "AdapterFailedError",
    "AgentDiagnosticsHost",
    "AgentHost",
    "CommandIntent",
    "DispatchCommandArguments",
    "DispatchEventArguments",
    "Event",
    "LifecycleAction",
    "LifecycleEvent",
    "LifecycleState",
    "LoggedSurfaceHost",
    "McpHttpApp",
    "NoArguments",
    "PerformActionArguments",
    "PointerEvent",
    "PointerPhase",
    "Profile",
    "ReadSemanticsArguments",
    "RefusalRecorder",
    "RefusedArguments",
    "Reply",
    "ReplyMessage",
    "RequestId",
    "Router",
    "RouterUsageError",
    "RuntimeAgentHost",
    "ServeError",
    "Served",
    "SessionDiagnosticsHost",
    "SurfaceAgentHost",
    "ToolArguments",
    "ToolCall",
    "ToolDefinition",
    "announce",
    "aria_to_runtime_role",
    "encode_json",
    "error_reply",
    "execute",
    "handle",
    "handle_message",
    "new_session_name",
    "normalize_origin",
    "parse_error_reply",
    "parse_json",
    "rerun_surface",
    "run_stdio",
    "serve_http",
    "serve_stdio",
    "serve_surface",
    "tools_for_profile",
]
