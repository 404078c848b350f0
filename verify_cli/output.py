"""Reports for a person (rich) and the summary table."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .core import FAILED, UNCHECKED, UNUSABLE, VERIFIED
from .render import difference_line, with_differences

if TYPE_CHECKING:
    from rich.progress import Progress

_MARK = {True: "[green]✔[/]", False: "[red]✘[/]", None: "[yellow]–[/]"}
VERDICT = {
    VERIFIED: "[bold green]VERIFIED[/]",
    FAILED: "[bold red]FAILED[/]",
    UNCHECKED: "[bold yellow]NOT FULLY VERIFIED[/] [yellow](signature not checked)[/]",
    UNUSABLE: "[bold red]UNUSABLE INPUT[/]",
}


def verdict_of(rep: dict[str, Any]) -> str:
    """The verdict's words: NOT FULLY VERIFIED says what was not checked."""
    if rep["status"] == UNCHECKED and rep.get("unchecked"):
        return f"[bold yellow]NOT FULLY VERIFIED[/] [yellow]({escape(str(rep['unchecked']))})[/]"
    return VERDICT[rep["status"]]


def make_console(stderr: bool = False) -> Console:
    # On a terminal, lines wrap at its width so a report fits (80 columns too); into a file
    # or a pipe, each line stays whole for grep and copy-paste.
    console = Console(stderr=stderr, emoji=False, highlight=False)
    console.soft_wrap = not console.is_terminal
    return console


def progress_bar(*, disable: bool, remaining: bool = False) -> Progress:
    """A progress bar on stderr (steps done of all, time taken, with ``remaining`` the time
    left), kept on screen when done. (``rich.progress`` loads on first use.)"""
    from rich import progress as p

    columns: list[Any] = [
        "[progress.description]{task.description}",
        p.BarColumn(),
        p.MofNCompleteColumn(),
        p.TimeElapsedColumn(),
    ]
    if remaining:
        columns.append(p.TimeRemainingColumn())
    return p.Progress(*columns, console=make_console(stderr=True), disable=disable, transient=False)


def echo_json(code: int, doc: dict[str, Any]) -> int:
    """Print a command's ``--json`` document (``ok`` and ``exit_code`` first); its exit code."""
    click.echo(
        json.dumps({"ok": code == 0, "exit_code": code, **doc}, indent=2, ensure_ascii=False)
    )
    return code


def counts_text(counts: dict[str, Any]) -> str:
    parts = [
        f"{counts[k]} {k if counts[k] != 1 else k[:-1]}"
        for k in ("games", "hands", "rounds", "draws")
        if k in counts
    ]
    parts.append(
        f"{counts.get('events', 0)} events ({counts.get('actions', 0)} actions, "
        f"{counts.get('chance', 0)} chance)"
    )
    return ", ".join(parts)


def print_report(console: Console, rep: dict[str, Any]) -> None:
    src = escape(str(rep.get("source")))
    if rep["status"] == UNUSABLE:
        console.print(f"{VERDICT[UNUSABLE]}  {src}: {escape(str(rep.get('reason')))}")
        return
    # fairness-v2.md §9: without a log, a verdict says that a downgrade was not excluded
    open_downgrade = rep["status"] == VERIFIED and any(
        c["name"] == "downgrade" and c["ok"] is None for c in rep["checks"]
    )
    note = " [yellow](no log: a downgrade not excluded)[/]" if open_downgrade else ""
    console.print(
        f"{verdict_of(rep)}{note}  [bold]{escape(str(rep['game']))}[/] match "
        f"{escape(str(rep['match_id']))}  [dim]({src})[/]"
    )
    seats = ", ".join(
        f"{s['seat']} {escape(str(s.get('name')))}"
        + (
            f" ({escape(str(s.get('seed_source')))} seed)"
            if "seed_source" in s
            else " (house)"
            if s.get("house") is True
            else ""
        )
        for s in rep["seats"]
    )
    console.print(f"  seats: {seats}")
    console.print(f"  ruleset: {escape(rep['ruleset'])}")
    console.print(f"  {counts_text(rep['counts'])}")
    for chk in rep["checks"]:
        console.print(f"  {_MARK[chk['ok']]} {chk['name']}: {escape(str(chk['detail']))}")
    for f in rep["failures"]:
        if f.get("expected") is not None or f.get("found") is not None:
            where = f" at event {f['seq']}" if f.get("seq") is not None else ""
            console.print(f"    [red]{f['check']}{where}[/]")
            diffs = f.get("differences") or with_differences([f])[0]["differences"]
            for d in diffs:  # each path that differs, both values whole (render.py)
                console.print(f"      {escape(difference_line(d))}")
    draws = rep.get("draws") or []
    if draws:
        total = rep.get("draws_total", len(draws))
        more = "" if total <= len(draws) else f" (first {len(draws)} of {total}; --all-draws)"
        console.print(f"  draws{more}:")
        for d in draws:
            text = escape(str(d["text"])).replace("\n", "\n        ")
            console.print(f"    #{d['seq']:<4} {text}")
    console.print()


def print_summary(console: Console, reports: list[dict[str, Any]]) -> None:
    table = Table(title="verify: summary", show_lines=False)
    table.add_column("game")
    table.add_column("match", overflow="fold")
    table.add_column("events", justify="right")
    table.add_column("verdict")
    table.add_column("first problem", overflow="fold", ratio=2)
    table.add_column("source", overflow="fold", ratio=1)
    for rep in reports:
        if rep["status"] == UNUSABLE:
            problem = rep.get("reason") or ""
        elif rep["failures"]:
            f = rep["failures"][0]
            problem = f"{f['check']}: {f['message']}"
        elif rep["status"] == UNCHECKED:
            problem = rep.get("unchecked") or "signature not checked (no key)"
        else:
            problem = ""
        verdict = VERDICT[rep["status"]]
        if rep["status"] == UNCHECKED:
            verdict = verdict.split(" [yellow]")[0]
        table.add_row(
            escape(str(rep.get("game", "?"))),
            escape(str(rep.get("match_id", "?"))),
            str(rep.get("counts", {}).get("events", "")),
            verdict,
            escape(problem),
            escape(str(rep.get("source"))),
        )
    console.print(table)
    n = len(reports)
    ok = sum(1 for r in reports if r["status"] == VERIFIED)
    console.print(f"{ok} of {n} verified")
