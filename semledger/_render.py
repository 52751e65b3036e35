"""Rich renderings for the command line: snapshots, audit tables, replay verdicts."""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator, Sequence
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from semledger.replay import AuditEntry, ReplayReport
from semledger.runtime import Full, SemanticsNode


def _describe(node: SemanticsNode) -> Text:
    text = Text()
    text.append(node.role.value, style="bold")
    if node.label:
        text.append(f" {node.label!r}")
    if node.value:
        text.append(f" = {node.value!r}")
    if node.semantic_id:
        text.append(f" #{node.semantic_id}", style="cyan")
    flags = [n for n in ("disabled", "invalid", "focused", "modal") if getattr(node.state, n)]
    if node.state.checked is not None:
        flags.append(node.state.checked.value)
    if flags:
        text.append(f" [{', '.join(flags)}]", style="yellow")
    text.append(f"  id {node.node_id}", style="dim")
    return text


def render_full(full: Full) -> Tree:
    tree = Tree(f"generation {full.generation}")
    nodes = {n.node_id: n for n in full.nodes}

    def add(parent: Tree, node_id: int) -> None:
        node = nodes[node_id]
        branch = parent.add(_describe(node))
        for child in node.children:
            add(branch, child)

    if full.root is not None:
        add(tree, full.root)
    return tree


def shown(text: str) -> str:
    """`text` as it is if it prints as one line of itself, else its repr: a name or an id
    with a newline or a control character in it must not pass for two rows."""
    return text if text.isprintable() else repr(text)


def _sent(value: Any) -> str:
    """A part of a refused call that is not an object, as JSON: what the agent sent."""
    return json.dumps(value, separators=(",", ":"))


def _target(target: Any) -> str:
    """A target as an agent reads it; "-" for none sent, and as JSON one of no known kind
    (a refused call's)."""
    if not isinstance(target, dict):
        return _sent(target)
    kind = target.get("kind")
    if kind == "path":
        return "path " + json.dumps(target.get("path"), separators=(",", ":"))
    if kind == "node_id":
        return f"node {target.get('id')}"
    if kind in ("semantic_id", "ref"):
        return shown(str(target.get("id")))
    return json.dumps(target, separators=(",", ":")) if target else "-"


def _when(at: float, day: datetime.date | None) -> tuple[str, datetime.date | None]:
    """The row's UTC time, with the date if it is not `day`; and the row's date. A time
    the log holds that is no time (the chain does not cover it) is shown as it is."""
    try:
        moment = datetime.datetime.fromtimestamp(at, datetime.UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return repr(at), day
    # The date on the first row and wherever it changes: an audit may span days.
    date = moment.date()
    return moment.strftime("%H:%M:%S" if date == day else "%Y-%m-%d %H:%M:%S"), date


def _action(action: Any, redacted: bool) -> str:
    if not isinstance(action, dict):
        return _sent(action)
    if not action:
        return "-"
    extra = {k: v for k, v in action.items() if k != "kind"}
    if not extra:
        return str(action.get("kind"))
    body = ", ".join(f"{k}={v!r}" for k, v in extra.items())
    return f"{action.get('kind')}({body})" + (" [redacted]" if redacted else "")


_AUDIT_COLUMNS = ("#", "time (UTC)", "target", "action", "precondition", "outcome", "generations")
PLAIN_AUDIT_ROWS = 1000
"""Past this many rows an audit prints as plain columns: a rich table takes a quarter of a
millisecond a row to lay out, and prints nothing until the last one is laid out."""


def _precondition(precondition: Any) -> str:
    if not isinstance(precondition, dict):
        return _sent(precondition)
    if not precondition:
        return "-"
    kind = precondition.get("kind", "?")
    return f"exact {precondition.get('generation')}" if kind == "exact" else str(kind)


def _parts(entry: AuditEntry) -> tuple[str, str, str]:
    """The target, action and precondition cells."""
    if entry.unread:
        return "unreadable", "unreadable", "unreadable"
    return (
        _target(entry.target),
        _action(entry.action, entry.redacted),
        _precondition(entry.precondition),
    )


def _audit_rows(entries: Sequence[AuditEntry]) -> Iterator[tuple[str, ...]]:
    day: datetime.date | None = None
    for e in entries:
        when, day = _when(e.at, day)
        if e.outcome in ("receipt", "ok") and e.before is not None:
            generations = f"{e.before} → {e.after}" + (" (pending)" if e.pending_work else "")
        else:
            generations = f"at {e.generation}"
        yield (
            "-" if e.request_id is None else str(e.request_id),
            when,
            *_parts(e),
            shown(e.outcome),
            generations,
        )


def audit_table(session: str, entries: Sequence[AuditEntry]) -> Table:
    table = Table(title=f"perform_action in session {shown(session)}", title_justify="left")
    for column in _AUDIT_COLUMNS:
        # Times, codes and numbers stay whole on a narrow terminal; free text folds.
        table.add_column(column, overflow="fold", no_wrap=column in ("#", "time (UTC)", "outcome"))
    for row in _audit_rows(entries):
        outcome = Text(row[5], style="green" if row[5] in ("receipt", "ok") else "red")
        table.add_row(*row[:5], outcome, row[6])
    return table


def audit_lines(session: str, entries: Sequence[AuditEntry]) -> Iterator[str]:
    """The audit as `audit_table` shows it, in plain aligned columns, line by line."""
    rows = list(_audit_rows(entries))
    widths = [
        max([len(title), *(len(row[i]) for row in rows)]) for i, title in enumerate(_AUDIT_COLUMNS)
    ]

    def line(cells: Sequence[str]) -> str:
        padded = (cell.ljust(width) for cell, width in zip(cells, widths, strict=True))
        return "  ".join(padded).rstrip()

    yield f"perform_action in session {shown(session)}"
    yield line(_AUDIT_COLUMNS)
    yield line(["-" * width for width in widths])
    for row in rows:
        yield line(row)


def replay_verdict(report: ReplayReport) -> Group:
    lines: list[Text] = []
    if report.ok:
        message = (
            f"re-run of {report.session!r}: identical — {report.inputs} calls, each answered "
            "as logged"
            if report.surface
            else f"replay of {report.session!r}: identical — {report.inputs} inputs, "
            f"{report.commits} commits, every snapshot hash matched"
        )
        lines.append(Text(message, style="bold green"))
        if report.crash is not None:
            where = f"at step {report.crash_step}" if report.crash_step else "as it started"
            lines.append(
                Text(
                    f"the application raised again {where}, as it did live: "
                    f"{report.crash.__cause__ or report.crash!r}",
                    style="yellow",
                )
            )
        return Group(*lines)
    d = report.divergence
    assert d is not None
    lines.append(
        Text(
            f"replay of {report.session!r}: DIVERGED at step {d.step} (log seq {d.seq})",
            style="bold red",
        )
    )
    lines.append(Text(f"  logged:   {d.expected}"))
    lines.append(Text(f"  replayed: {d.actual}"))
    if d.note:
        lines.append(Text(f"  note: {d.note}", style="yellow"))
    lines.extend(Text(f"  {line}") for line in d.diff[:40])
    if len(d.diff) > 40:
        lines.append(Text(f"  … and {len(d.diff) - 40} more differences"))
    return Group(*lines)
