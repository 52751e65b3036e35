"""Rich renderings for the command line: snapshots, audit tables, replay verdicts."""

from __future__ import annotations

import ast
import datetime
import itertools
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Final

import attrs
from rich.cells import cell_len
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from semledger.actors import app_location
from semledger.eventlog import (
    ActionRequested,
    DiagnosticsDispatched,
    EffectCompleted,
    EffectFailed,
    TimerFired,
)
from semledger.replay import AuditEntry, AuditReport, Connection, Ending, Incident, ReplayReport
from semledger.runtime import (
    ByPath,
    Collection,
    DuplicateSemanticId,
    Full,
    Issue,
    Live,
    MissingRelationTarget,
    NodeState,
    Numeric,
    PathStep,
    SemanticsNode,
)
from semledger.runtime._text import counted, printable, shortened
from semledger.runtime._wire import WireError, decode_target

_FLAGS: Final = tuple(f for f in attrs.fields(NodeState) if f.type in (bool, "bool"))
"""Every yes-or-no state, each shown when it is true (a password field, a multi-line one,
a read-only one: what an auditor reading the tree must not miss)."""


def _describe(node: SemanticsNode) -> Text:
    text = Text()
    text.append(node.role.value, style="bold")
    if node.label:
        text.append(f" {node.label!r}")
    if node.value:
        text.append(f" = {node.value!r}")
    numeric = node.numeric
    if numeric is not None:
        said = [] if numeric.current is None else [_number(numeric.current)]
        if numeric.value_text:
            said.append(repr(numeric.value_text))
        if said:
            text.append(f" = {' '.join(said)}")
    if node.description:
        text.append(f" described as {node.description!r}")
    if node.url:
        text.append(f" url {shown(node.url)}")
    if node.semantic_id:
        text.append(f" #{node.semantic_id}", style="cyan")
    state = node.state
    flags = [f.name.replace("_", "-") for f in _FLAGS if getattr(state, f.name)]
    if state.checked is not None:
        flags.append(state.checked.value)
    if state.expanded is not None:
        flags.append("expanded" if state.expanded else "collapsed")
    if node.level is not None:
        flags.append(f"level {node.level}")
    flags.extend(_places(node.collection))
    flags.extend(_range(numeric))
    if node.live is not Live.OFF:
        flags.append(f"live {node.live.value}")
    if flags:
        text.append(f" [{', '.join(flags)}]", style="yellow")
    relations = [f"{kind.value} {_ids(targets)}" for kind, targets in node.relations if targets]
    if relations:
        text.append(f" ({'; '.join(relations)})", style="magenta")
    text.append(f"  id {node.node_id}", style="dim")
    return text


def _range(numeric: Numeric | None) -> Iterator[str]:
    """A numeric node's bounds and step: "0 to 100", "step 5" ("at least 0" if unbounded)."""
    if numeric is None:
        return
    low, high = numeric.min, numeric.max
    if low is not None and high is not None:
        yield f"{_number(low)} to {_number(high)}"
    elif low is not None:
        yield f"at least {_number(low)}"
    elif high is not None:
        yield f"at most {_number(high)}"
    if numeric.step is not None:
        yield f"step {_number(numeric.step)}"


def _number(x: float) -> str:
    """`x` in full, without a trailing ``.0``: an auditor must see 1234567, not 1.23e+06."""
    x = float(x)  # (an int, from a log or an adapter, has no is_integer before 3.12)
    return str(int(x)) if x.is_integer() and abs(x) < 2**53 else repr(x)


def _places(collection: Collection | None) -> Iterator[str]:
    """Where a node sits: "2 of 3" in its set ("item 42" in one of unknown size), its row
    and column, and a table's numbers of them."""
    if collection is None:
        return
    position, size = collection.set_position, collection.set_size
    if position is not None:
        yield f"item {position}" if size is None else f"{position} of {size}"
    for index, name in ((collection.row_index, "row"), (collection.column_index, "column")):
        if index is not None:
            yield f"{name} {index}"
    for count, name in ((collection.row_count, "rows"), (collection.column_count, "columns")):
        if count is not None:
            yield f"{count} {name}"


def render_full(full: Full) -> Group:
    """The snapshot's tree, then the issues it reports, a line each (none when it has none)."""
    tree = Tree(f"generation {full.generation}")
    nodes = {n.node_id: n for n in full.nodes}

    def add(parent: Tree, node_id: int) -> None:
        node = nodes[node_id]
        branch = parent.add(_describe(node))
        for child in node.children:
            add(branch, child)

    if full.root is not None:
        add(tree, full.root)
    if not full.issues:
        return Group(tree)
    issues = [Text(f"  {_issue(issue)}") for issue in full.issues]
    return Group(tree, Text("issues the snapshot reports:"), *issues)


def _issue(issue: Issue) -> str:
    """An issue as its wire kind, then what it names, as the tree names nodes."""
    if isinstance(issue, DuplicateSemanticId):
        return f"duplicate_semantic_id: #{issue.semantic_id} is on {_ids(issue.nodes)}"
    pointer = f"id {issue.source} {issue.relation.value} #{issue.semantic_id}"
    if isinstance(issue, MissingRelationTarget):
        return f"missing_relation_target: {pointer}, which no node has"
    return f"ambiguous_relation_target: {pointer}, which {_ids(issue.nodes)} have"


def _ids(nodes: Sequence[int]) -> str:
    return f"id {nodes[0]}" if len(nodes) == 1 else "ids " + ", ".join(map(str, nodes))


def shown(text: str) -> str:
    """`text` as it is if it prints as one line of itself, else its repr: a name or an id
    with a newline or a control character in it must not pass for two rows, nor one with a
    space at an end (or all blank) for another."""
    return text if text.isprintable() and text == text.strip() else repr(text)


def _sent(value: Any) -> str:
    """A part of a refused call that is not an object, as JSON: what the agent sent."""
    return json.dumps(value, separators=(",", ":"))


_OTHER_CELLS = frozenset({"-", "None", "unreadable"})
"""What the table shows for a part not sent or an event not read, and what reads as no
value: an id or an action kind sent as one of these is quoted."""


def _name(text: str) -> str:
    """An id or action kind as `shown`, quoted too where it would read as another cell: a
    word above, a part shown as the JSON it was sent as (``null``, ``5``, ``{}``), or a
    target of another kind (``node 5``, ``path [...]``)."""
    if text in _OTHER_CELLS or text.startswith(("node ", "path ", "'")) or _is_json(text):
        return repr(text)
    return shown(text)


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _target(target: Any, known_as: str | None = None, whole: str = "--json") -> str:
    """A target as an agent reads it, a node id with what the node was `known_as` (its
    semantic id, or its role and label), a path as its steps (`_path`); as JSON one of no
    known kind, or one whose id or path is missing or not of its type (a refused call's: as
    it was sent, null apart from missing). `whole` has a long label or value whole."""
    if not isinstance(target, dict):
        return _sent(target)
    kind, sent_id = target.get("kind"), target.get("id")
    if kind == "path" and isinstance(target.get("path"), list):
        return "path " + _path(target, whole)
    if kind == "node_id" and isinstance(sent_id, str):  # decimal on the wire: else quoted
        node = f"node {sent_id if re.fullmatch(r'[0-9]+', sent_id) else repr(sent_id)}"
        return node if known_as is None else f"{node} ({node_name(known_as)})"
    if kind in ("semantic_id", "ref") and isinstance(sent_id, str):
        return _name(sent_id)
    return _sent(target)


def _path(target: dict[str, Any], whole: str) -> str:
    """A path's steps as the tree names nodes, each its role (`*`: any), the index among
    the children it matches, and its label, value and semantic id where given:
    ``list[0] > list_item[0] 'photo.png'``. As JSON when it is no path a call may give
    (a refused call's, as it was sent), or one whose index was sent as another number
    (``1.0``, or past the largest the wire takes)."""
    try:
        decoded = decode_target(target)
    except WireError:
        return _sent(target["path"])
    assert isinstance(decoded, ByPath)
    for sent, step in zip(target["path"], decoded.steps, strict=True):
        index = sent.get("index", 0)
        if isinstance(index, bool) or not isinstance(index, int) or index != step.index:
            return _sent(target["path"])
    return " > ".join(_step(step, whole) for step in decoded.steps)


def _step(step: PathStep, whole: str) -> str:
    said = f"{'*' if step.role is None else step.role.value}[{step.index}]"
    if step.label is not None:
        said += f" {_value(step.label, whole)}"
    if step.value is not None:
        said += f" = {_value(step.value, whole)}"
    if step.semantic_id is not None:
        said += f" #{step.semantic_id}"
    return said


_LONGEST_NAME = 40
"""Characters of a node's name a target shows beside its id."""


def node_name(known_as: str) -> str:
    """What a node is known by (`semledger.replay._audit.known_as`: a semantic id, which
    has no space, or a role and its label's repr), on one line and cut past 40 characters,
    saying how long it is: a label, its own length."""
    if len(known_as) <= _LONGEST_NAME:
        return printable(known_as)
    _, _, quoted = known_as.partition(" ")
    label = _literal(quoted)
    size = len(known_as) if label is None else len(label)
    return printable(f"{known_as[:_LONGEST_NAME]}… ({size:,} characters)")


def _literal(quoted: str) -> str | None:
    """The str `quoted` is the repr of, or None if it is none."""
    try:
        text = ast.literal_eval(quoted)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return text if isinstance(text, str) else None


def step_line(event: Any, known_as: str | None) -> str:
    """An input of a session as a line: what was done, to a node targeted by id with what
    the node was `known_as`."""
    if isinstance(event, ActionRequested):
        action = _action(event.action, event.redacted, _WHOLE_IN_AUDIT)
        target = _target(event.target, known_as, _WHOLE_IN_AUDIT)
        return f"{action} {target}, {_precondition(event.precondition)}"
    if isinstance(event, TimerFired):
        return f"timer {event.timer_id} fired ({_message(event.message)})"
    if isinstance(event, EffectCompleted):
        return f"effect {event.effect_id} finished ({_message(event.message)})"
    if isinstance(event, EffectFailed):
        return f"effect {event.effect_id} failed: {printable(shortened(event.error, 80))}"
    if isinstance(event, DiagnosticsDispatched):
        return f"diagnostics event {_sent(event.event.get('kind'))}"
    return type(event).__name__


def _message(message: Any) -> str:
    """A logged message's class, or its value when it has none (a str, an int, …); None,
    one the log could not record (the session crashed on it); else as the log holds it."""
    if message is None:
        return "a message the log could not record"
    if not isinstance(message, dict):
        return _value(message, None)
    if isinstance(message.get("type"), str):
        return shown(message["type"])
    plain = message.keys() == {"type", "value"} and message["type"] is None
    return _value(message["value"] if plain else message, None)


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


def _action(action: Any, redacted: bool, whole: str = "--json") -> str:
    if not isinstance(action, dict) or not isinstance(action.get("kind"), str):
        return _sent(action)  # as a refused call sent it: with no kind, or null
    kind = _name(action["kind"])
    extra = {k: v for k, v in action.items() if k != "kind"}
    if not extra:
        return kind
    body = ", ".join(f"{shown(str(k))}={_value(v, whole)}" for k, v in extra.items())
    return f"{kind}({body})" + (" [redacted]" if redacted else "")


_LONGEST_VALUE = 80
"""Characters of an action's value the table shows: a pasted document is one row, not pages
of it; ``--json`` has it whole."""
_WHOLE_IN_AUDIT = "audit --json"
"""What has the whole value of an action in a step `fuzz` prints, which has no ``--json``
(a timer's or an effect's message is in no audit: its step says how long it is alone)."""


def _value(value: Any, whole: str | None = "--json") -> str:
    """`value` as Python writes it, cut past `_LONGEST_VALUE` characters, saying how long it
    is and that `whole` has it whole (None: nothing prints it whole)."""
    text = repr(value)
    if len(text) <= _LONGEST_VALUE:
        return text
    size = f"{len(value):,} characters" if isinstance(value, str) else f"{len(text):,} long"
    return f"{text[:_LONGEST_VALUE]}… ({size}{'' if whole is None else f'; {whole} has it whole'})"


_AUDIT_COLUMNS = (
    "#", "event", "time (UTC)", "target", "action", "precondition", "outcome", "generations"
)  # fmt: skip
"""The event is the row's seq, as the connections before the table name theirs: a row is
the last one's before it, when the session had more than one."""
PLAIN_AUDIT_ROWS = 1000
"""Past this many rows an audit prints as plain columns: a rich table takes a quarter of a
millisecond a row to lay out, and prints nothing until the last one is laid out."""


def _precondition(precondition: Any) -> str:
    if not isinstance(precondition, dict) or not precondition:
        return _sent(precondition)
    kind, generation = precondition.get("kind"), precondition.get("generation")
    if precondition == {"kind": "exact", "generation": generation} and isinstance(generation, str):
        return f"exact {shown(generation)}"
    if precondition == {"kind": kind} and kind in ("latest", "surface"):
        return str(kind)
    return _sent(precondition)  # as a refused call sent it: `exact` with no generation, say


def _parts(entry: AuditEntry) -> tuple[str, str, str]:
    """The target, action and precondition cells; "-" for a part a refused call did not
    send (one it sent as ``{}`` shows as that)."""
    if entry.unread:
        return "unreadable", "unreadable", "unreadable"
    cells = (
        _target(entry.target, entry.target_node),
        _action(entry.action, entry.redacted),
        _precondition(entry.precondition),
    )
    target, action, pre = (
        "-" if name in entry.unsent else cell
        for name, cell in zip(("target", "action", "precondition"), cells, strict=True)
    )
    return target, action, pre


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
            str(e.seq),
            when,
            *_parts(e),
            shown(e.outcome),
            generations,
        )


def audit_fits(entries: Sequence[AuditEntry], width: int) -> bool:
    """Whether the audit's table is at most `width` cells wide, each date above its time,
    nothing folded: if not, `audit_records` reads better than targets and actions folded
    mid-word into columns a few cells wide."""
    rows = [(*row[:2], max(row[2].split(" "), key=len), *row[3:]) for row in _audit_rows(entries)]
    return _table_width(_AUDIT_COLUMNS, rows) <= width


def audit_records(session: str, entries: Sequence[AuditEntry]) -> Iterator[str]:
    """The audit for a terminal too narrow for its table: each call on two lines, its
    number, event, time, outcome and generations, then its target, action and precondition."""
    yield f"perform_action in session {shown(session)}"
    for row in _audit_rows(entries):
        number, seq, when, target, action, precondition, outcome, generations = row
        number = "-" if number == "-" else f"#{number}"
        yield f"{number}  event {seq}  {when}  {outcome}  {generations}"
        yield f"    {target}  {action}  {precondition}"


def audit_table(session: str, entries: Sequence[AuditEntry], width: int | None = None) -> Table:
    """The audit as a table; one that would be wider than `width` shows each date above
    its time, so that the free text (targets, actions) keeps nine more cells a line."""
    table = Table(title=f"perform_action in session {shown(session)}", title_justify="left")
    for column in _AUDIT_COLUMNS:
        # Times, codes and numbers stay whole on a narrow terminal; free text folds.
        whole = column in ("#", "event", "time (UTC)", "outcome")
        table.add_column(column, overflow="fold", no_wrap=whole)
    rows = list(_audit_rows(entries))
    if width is not None and _table_width(_AUDIT_COLUMNS, rows) > width:
        rows = [(*row[:2], row[2].replace(" ", "\n"), *row[3:]) for row in rows]
    for row in rows:
        outcome = Text(row[6], style="green" if row[6] in ("receipt", "ok") else "red")
        table.add_row(*row[:6], outcome, row[7])
    return table


def _table_width(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> int:
    """How wide a rich table of these rows is with nothing folded."""
    return 3 * len(headers) + 1 + sum(_widths(headers, rows))


def _widths(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[int]:
    return [
        max([cell_len(header), *(cell_len(row[i]) for row in rows)])
        for i, header in enumerate(headers)
    ]


def print_audit(console: Console, session: str, entries: Sequence[AuditEntry]) -> None:
    """The audit's calls as ``semledger audit`` prints them: a table, or plain lines where
    one would be slow to lay out (`PLAIN_AUDIT_ROWS`) or folded (a narrow terminal), printed
    a chunk at a time, so that nothing waits for the last."""
    if len(entries) > PLAIN_AUDIT_ROWS:
        lines = audit_lines(session, entries)
    elif not audit_fits(entries, console.width):
        lines = audit_records(session, entries)
    else:
        console.print(audit_table(session, entries, console.width))
        return
    _print_chunked(console, lines)


def _print_chunked(console: Console, lines: Iterator[str]) -> None:
    """`lines`, 500 at a time: the first printed before the last is made."""
    while chunk := list(itertools.islice(lines, 500)):
        console.out("\n".join(chunk), highlight=False)


def audit_lines(session: str, entries: Sequence[AuditEntry]) -> Iterator[str]:
    """The audit as `audit_table` shows it, in plain aligned columns, line by line."""
    return plain_lines(
        f"perform_action in session {shown(session)}", _AUDIT_COLUMNS, list(_audit_rows(entries))
    )


def plain_lines(
    title: str, headers: Sequence[str], rows: Sequence[Sequence[str]]
) -> Iterator[str]:
    """A table as plain aligned columns, one line a row however long: nothing is folded
    or cut, and nothing waits for a layout of every row."""
    widths = _widths(headers, rows)

    def line(cells: Sequence[str]) -> str:
        pairs = zip(cells, widths, strict=True)
        return "  ".join(cell + " " * (width - cell_len(cell)) for cell, width in pairs).rstrip()

    yield title
    yield line(headers)
    yield line(["-" * width for width in widths])
    for row in rows:
        yield line(row)


def _reason_lines(entries: Sequence[AuditEntry]) -> Iterator[Text]:
    """Why each call that was not carried out was refused, a line each, after the table
    (``#4 target_not_found: …``; a call with no request number by its event)."""
    said = False
    for e in entries:
        message = e.details.get("message")
        if e.outcome in ("receipt", "ok") or not isinstance(message, str):
            continue
        if not said:
            yield Text("why the calls above were not carried out:")
            said = True
        which = f"event {e.seq}" if e.request_id is None else f"#{e.request_id}"
        yield Text(f"  {which} {shown(e.outcome)}: {shown(message)}")


def audit_notes(report: AuditReport) -> Iterator[Text]:
    """What the audit says after its table: what the log keeps of the passwords typed, why
    each call not carried out was refused, what befell the application, the inputs the
    table does not list, and last how the session stands."""
    yield from _password_lines(report.redact_passwords, report.fuzzed)
    yield from _reason_lines(report.entries)
    yield from _incident_lines(report.incidents, report.adapter)
    count = report.diagnostics_inputs
    if count:
        yield Text(
            f"and {counted(count, 'input')} sent through the diagnostics tools, which are no"
            " perform_action and not listed above"
        )
    yield ending_line(report.ending)


def _password_lines(redact_passwords: bool | None, fuzzed: bool) -> Iterator[Text]:
    """What the log keeps of the passwords typed in the session, as its start records it
    (nothing when its start cannot be read)."""
    if redact_passwords:
        yield Text("passwords typed in the session are masked in the log (redact_passwords: true)")
    elif fuzzed:
        yield Text(
            "passwords typed in the session are in the log in clear: they are the fuzzer's,"
            " kept for replay (redact_passwords: false)"
        )
    elif redact_passwords is not None:
        yield Text(
            "passwords typed in the session are in the log in clear: it was served with"
            " --log-passwords (redact_passwords: false)",
            style="yellow",
        )


_ENDED_BY = {
    "client": " by its HTTP client",
    "operator": " by its operator",
    "fuzzer": " by the fuzzer",
}


def ending_line(ending: Ending) -> Text:
    """How the session stands at the end of the log, in one line."""
    when = "" if ending.at is None else f" at {_when(ending.at, None)[0]}"
    where = f"{when} (event {ending.seq})"
    reason = shown(ending.reason or "")
    if ending.state == "ended" and ending.final:
        by = _ENDED_BY.get(ending.by or "", "")
        return Text(
            f"the session was ended for good{by}{where}: {reason}; no server takes it up again"
        )
    if ending.state == "ended":
        return Text(f"the session ended for now{where}: {reason}; serving it again resumes it")
    if ending.state == "crashed":
        step = "as it started" if ending.step == 0 else f"at step {ending.step}"
        return Text(
            f"the session crashed{where}, {step}: {reason} (its traceback is above); a crashed"
            " session is never resumed",
            style="red",
        )
    if ending.state == "open":
        if ending.served is None:
            now = (
                "it is being served, or its server stopped without one (which cannot be told"
                " here: a copied log, say, has no claims beside it)"
            )
        elif ending.served:
            now = "it is being served now"
        else:
            now = "its server stopped without one (serving it again resumes it)"
        return Text(
            f"the session has no end in the log, whose last event is {ending.seq}{when}: {now}",
            style="yellow",
        )
    return Text(
        f"how the session stands cannot be told: event {ending.seq}, at the end of the log,"
        f" {reason}",
        style="red",
    )


def connection_lines(connections: Sequence[Connection]) -> Iterator[Text]:
    """Who drove the session, a line each connection, before the audit's table: the name
    and version its MCP client gave (``clientInfo``), how, and when; or that a client came
    back with the session id alone, after a restart, and said nothing of itself."""
    for c in connections:
        client = c.client
        if c.resumed:
            said = "a client that came back with the session id (no initialize)"
        elif isinstance(client, dict) and set(client) <= {"name", "version", "title"}:
            name = _client_part(client["name"]) if "name" in client else _NO_NAME
            said = name + ("" if "version" not in client else f" {_client_part(client['version'])}")
        else:
            said = _client_part(client, as_json=True)
        version = "unsaid" if c.protocol_version is None else shown(c.protocol_version)
        over = c.transport + ("" if c.peer is None else f" from {c.peer}")
        when, _ = _when(c.at, None)
        yield Text(
            f"agent: {said} (MCP {version}, over {shown(over)}),"
            f" {'resumed' if c.resumed else 'connected'} at {when} (event {c.seq})"
        )


_NO_NAME = "(no name)"
"""What the agent's line says of a clientInfo that gave no name."""


def _client_part(value: Any, *, as_json: bool = False) -> str:
    """A part of a clientInfo: a str as `shown` shows it (quoted if it reads as the missing
    name, or is empty), anything else as its JSON; cut, as `_value` cuts a typed value, past
    `_LONGEST_VALUE` characters."""
    text = value if isinstance(value, str) and not as_json else _sent(value)
    cut = text[:_LONGEST_VALUE]
    if text is not value:
        said = printable(cut)
    elif cut in (_NO_NAME, ""):  # an empty part shows as ''
        said = repr(cut)
    else:
        said = shown(cut)
    if len(text) <= _LONGEST_VALUE:
        return said
    return f"{said}… ({len(text):,} characters; --json has it whole)"


def _incident_lines(incidents: Sequence[Incident], adapter: str | None) -> Iterator[Text]:
    """What befell the application (or a surface session's `adapter`), a line each, after
    the audit's table: each failed effect (with its traceback, when logged), each still
    running as the session stopped, the crash with its traceback as logged, and each resume
    with the effects it started again."""
    crashed = "the application" if adapter is None else f"the adapter {adapter!r}"
    for incident in incidents:
        when, _ = _when(incident.at, None)
        where = f"at {when}, generation {incident.generation} (event {incident.seq})"
        name = "" if incident.effect is None else f" ({shown(incident.effect)})"
        if incident.kind == "crashed":
            yield Text(f"{crashed} crashed {where}: {shown(incident.error)}", style="red")
            for line in (incident.traceback or "").rstrip().splitlines():
                yield Text(f"  {printable(line)}")  # the app's text, and what an agent typed
        elif incident.kind == "resumed":
            yield Text(f"the session resumed {where}: {shown(incident.error)}")
        elif incident.kind == "stopped":
            yield Text(
                f"the session's server stopped after event {incident.seq} (at {when},"
                f" generation {incident.generation}): {shown(incident.error)}",
                style="yellow",
            )
        elif incident.kind == "effect_restarted":
            yield Text(
                f"effect {incident.effect_id}{name} {where}: {shown(incident.error)}",
                style="yellow",
            )
        elif incident.kind == "effect_unfinished":
            yield Text(
                f"effect {incident.effect_id}{name} {where}: {shown(incident.error)}; its"
                " message never came",
                style="yellow",
            )
        else:
            yield Text(
                f"effect {incident.effect_id}{name} failed {where}: {shown(incident.error)}"
                " (the app got no message for it)",
                style="red",
            )
            for line in (incident.traceback or "").rstrip().splitlines():
                yield Text(f"  {printable(line)}")  # the app's text, and what an agent typed


SESSION_COLUMNS = ("session", "app", "surface", "events", "state")
_NARROWEST = 10
"""Wrapped to fit, a column of the sessions table other than the name keeps at least this
many cells (or all of its text, if shorter): wider than each header."""
_INDENT = "    "


PLAIN_SESSION_ROWS = PLAIN_AUDIT_ROWS
"""Past this many sessions, ``semledger sessions`` prints plain columns, as a long audit
does: a rich table of 40,000 sessions took 15 seconds to lay out before printing a line."""


def print_sessions(console: Console, title: str, rows: Sequence[Sequence[str]]) -> None:
    """The sessions as ``semledger sessions`` prints them: a table, or where that would
    fold a word, each session on two lines or so, as `audit_records` lays out calls; past
    `PLAIN_SESSION_ROWS`, plain columns, a chunk at a time."""
    if len(rows) > PLAIN_SESSION_ROWS:
        _print_chunked(console, plain_lines(title, SESSION_COLUMNS, rows))
        return
    table = sessions_table(title, rows, console.width)
    if table is not None:
        console.print(table)
    else:
        console.out("\n".join([title, *_session_records(console, rows)]), highlight=False)


def sessions_table(title: str, rows: Sequence[Sequence[str]], width: int) -> Table | None:
    """The sessions as a table `width` cells wide, or None if it would fold a word.

    A name is what the next command takes: never cut, never folded. The other columns wrap
    at spaces to make room, the widest first, down to their longest word or `_NARROWEST`;
    a word folded mid-way (``semledger.e / xamples.tod / o:app``) or a state a word a
    line is harder to read than `_session_records`.
    """
    natural = _widths(SESSION_COLUMNS, rows)
    floors = [natural[0]] + [
        min(natural[i], max(_longest_word([header, *(row[i] for row in rows)]), _NARROWEST))
        for i, header in enumerate(SESSION_COLUMNS) if i > 0
    ]
    widths = _fitted(natural, floors, width - 3 * len(SESSION_COLUMNS) - 1)
    if widths is None:
        return None
    table = Table(title=title, title_justify="left")
    table.add_column(SESSION_COLUMNS[0], width=widths[0], no_wrap=True)
    for column, column_width in zip(SESSION_COLUMNS[1:], widths[1:], strict=True):
        table.add_column(column, width=column_width, overflow="fold")
    for row in rows:
        table.add_row(*row)
    return table


def _longest_word(cells: Iterable[str]) -> int:
    return max((cell_len(word) for cell in cells for word in cell.split()), default=0)


def _fitted(natural: Sequence[int], floors: Sequence[int], room: int) -> list[int] | None:
    """Column widths that sum to at most `room`, the widest cut first and none below its
    floor; None if the floors do not fit. (Rich cuts the widest first too, but below any
    floor: a column's ``min_width``, applied after its cut, widens the table past `room`.)"""
    if sum(floors) > room:
        return None
    level = max(natural)
    widths = list(natural)
    while sum(widths) > room:
        level -= 1
        widths = [max(floor, min(w, level)) for w, floor in zip(natural, floors, strict=True)]
    return widths


def _session_records(console: Console, rows: Sequence[Sequence[str]]) -> Iterator[str]:
    """The sessions for a terminal too narrow for their table, no word folded: each one's
    name, app, surface and event count on a line (in aligned columns where those fit), then
    its state, indented and wrapped at spaces (a word longer than a line is folded)."""
    width = console.width
    firsts = [(*row[:3], counted(int(row[3]), "event")) for row in rows]
    widths = _widths(("",) * 4, firsts)
    aligned = sum(widths) + 2 * (len(widths) - 1) <= width
    for first, row in zip(firsts, rows, strict=True):
        if aligned:
            pairs = zip(first, widths, strict=True)
            yield "  ".join(cell + " " * (w - cell_len(cell)) for cell, w in pairs).rstrip()
        else:
            yield from _packed([cell for cell in first if cell], width)
        for line in Text(row[4]).wrap(console, max(width - len(_INDENT), _NARROWEST)):
            yield _INDENT + line.plain.rstrip()


def _packed(cells: Sequence[str], width: int) -> Iterator[str]:
    """`cells` two spaces apart, a line breaking between two of them where the next would
    not fit `width`: a name longer than a line is left whole for the terminal to wrap,
    whose copy of it is then the name."""
    line = cells[0]
    for cell in cells[1:]:
        if cell_len(line) + 2 + cell_len(cell) > width:
            yield line
            line = _INDENT + cell
        else:
            line = f"{line}  {cell}"
    yield line


_PINNED = (
    "a replay pins the recorded run, failure included: once the bug is fixed, this replay"
    " diverges there and a test exported from the session fails (set its FIXED = True, where"
    " its docstring says it has one)"
)


_UNRECORDED = (
    "the crash is on a message the log could not record: replay feeds none back, so it"
    " reproduces even once the app is fixed; check a fix by fuzzing the app again or running"
    " it"
)


def _at_step(step: int | None) -> str:
    return f"at step {step}" if step else "as it started"


def _reproduced(report: ReplayReport) -> tuple[str, str] | None:
    """What an identical replay of a session that failed says of its failure: that it was
    reproduced, and how."""
    if report.crash is not None:
        where = _at_step(report.crash_step)
        raised = report.crash.__cause__ or report.crash
        # A message the log could not record failed as it was encoded, not in the app.
        who = "the step" if report.unrecorded else "the application"
        return (
            f"the recorded {report.reproduced} {where} reproduced",
            f"{who} raised again {where}, as it did live: {shortened(repr(raised))}"
            f"{app_location(raised)}",
        )
    if report.violation is not None:
        where = _at_step(report.violation_step)
        return (
            f"the recorded {report.reproduced} {where} reproduced",
            f"the fuzzer's check failed again, as recorded: {report.violation}",
        )
    return None


_NONDETERMINISTIC = (
    "the fuzzer recorded this session as nondeterministic (the app did not do the same on the"
    " same inputs): a replay is expected to diverge, at a step that varies from run to run, or"
    ' now and then not at all; the fuzzer\'s "input N" is step N here'
)


def _effect_failed(failure: str) -> str:
    return (
        f"the recorded failure, {printable(shortened(failure))}, is an input of the session,"
        " which a replay feeds back as logged: it replays identical even once the effect is"
        " fixed; check a fix by fuzzing the app again"
    )


def replay_verdict(report: ReplayReport) -> Group:
    verdict = _verdict(report)
    notes = [Text(f"  note: {shortened(said)}", style="yellow") for said in report.unrepeated]
    if report.nondeterministic:
        notes.append(
            Text(_NONDETERMINISTIC if report.ok else f"  note: {_NONDETERMINISTIC}", style="yellow")
        )
    if report.effect_failure is not None and report.ok:
        notes.append(Text(_effect_failed(report.effect_failure), style="yellow"))
    return Group(verdict, *notes) if notes else verdict


def _verdict(report: ReplayReport) -> Group:
    lines: list[Text] = []
    if report.ok:
        message = (
            f"replay of {report.session!r}: identical — {counted(report.inputs, 'call')} made"
            " again, each answered as logged"
            if report.surface
            else f"replay of {report.session!r}: identical — {counted(report.inputs, 'input')}, "
            f"{counted(report.commits, 'commit')}, every snapshot hash matched"
        )
        reproduced = _reproduced(report)
        if reproduced is None:
            return Group(Text(message, style="bold green"))
        said, how = reproduced
        return Group(
            Text(f"{message}; {said}", style="bold green"),
            Text(how, style="yellow"),
            Text(_UNRECORDED if report.unrecorded else _PINNED, style="dim"),
        )
    d = report.divergence
    assert d is not None
    lines.append(
        Text(
            f"replay of {report.session!r}: DIVERGED at step {d.step} (log seq {d.seq})",
            style="bold red",
        )
    )
    if d.input is not None:
        lines.append(Text(f"  after:    {d.input}"))
    # Each may hold the app's error message, and the fuzzer's record of it.
    lines.append(Text(f"  logged:   {shortened(d.expected)}"))
    lines.append(Text(f"  replayed: {shortened(d.actual)}"))
    if d.note:
        lines.append(Text(f"  note: {d.note}", style="yellow"))  # replay's own words, whole
    lines.extend(Text(f"  {line}") for line in d.diff[:40])
    if len(d.diff) > 40:
        lines.append(Text(f"  … and {len(d.diff) - 40} more lines"))
    return Group(*lines)
