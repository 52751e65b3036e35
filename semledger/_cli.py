"""The ``semledger`` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import NoReturn

from rich.console import Console
from rich.tree import Tree

from semledger.runtime import (
    ActionKind,
    AppRuntime,
    BySemanticId,
    Exact,
    Receipt,
    SemanticId,
    SemanticsAction,
    SemanticsNode,
    SemanticsSnapshot,
    SetText,
    SimpleAction,
)


class _Parser(argparse.ArgumentParser):
    """Bad usage ends with exit status 2 and a one-line reason on stderr."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"semledger: {message} (see 'semledger --help')\n")


def _describe(node: SemanticsNode) -> str:
    parts = [f"[bold]{node.role.value}[/bold]"]
    if node.label:
        parts.append(repr(node.label))
    if node.value:
        parts.append(f"= {node.value!r}")
    if node.semantic_id:
        parts.append(f"[cyan]#{node.semantic_id}[/cyan]")
    flags = [name for name in ("disabled", "invalid", "focused") if getattr(node.state, name)]
    if flags:
        parts.append(f"[yellow]{' '.join(flags)}[/yellow]")
    parts.append(f"[dim]id {node.node_id}[/dim]")
    return " ".join(parts)


def render_snapshot(snapshot: SemanticsSnapshot) -> Tree:
    tree = Tree(f"generation {snapshot.generation}")
    if snapshot.root is None:
        return tree

    def add(parent: Tree, node_id: int) -> None:
        node = snapshot.nodes[node_id]
        branch = parent.add(_describe(node))
        for child in node.children:
            add(branch, child)

    add(tree, snapshot.root)
    return tree


def _demo(console: Console) -> int:
    """Drive the counter example through typed actions and print its committed snapshots."""
    from semledger.examples.counter import app

    runtime = AppRuntime(app)
    console.print(render_snapshot(runtime.snapshot))
    script: list[tuple[str, SemanticsAction]] = [
        ("counter.increment", SimpleAction(ActionKind.ACTIVATE)),
        ("counter.step", SetText("5")),
        ("counter.increment", SimpleAction(ActionKind.ACTIVATE)),
        ("counter.step", SetText("five")),
    ]
    for semantic_id, action in script:
        outcome = runtime.perform(
            BySemanticId(SemanticId(semantic_id)), action, Exact(runtime.generation)
        )
        verdict = (
            f"receipt {outcome.before} -> {outcome.after}"
            if isinstance(outcome, Receipt)
            else f"rejected: {outcome.code.value}"
        )
        console.print(f"{action.kind.value} on {semantic_id}: {verdict}")
    stale = runtime.perform(
        BySemanticId(SemanticId("counter.increment")), SimpleAction(ActionKind.ACTIVATE), Exact(1)
    )
    console.print(f"activate with the first generation: {getattr(stale, 'code', stale)}")
    console.print(render_snapshot(runtime.snapshot))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="semledger", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    commands.add_parser("demo", help="drive an example app as an agent would and show the result")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    console = Console()
    if args.command == "demo":
        return _demo(console)
    return 2


if __name__ == "__main__":
    sys.exit(main())
