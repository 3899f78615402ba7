"""The terminal report (rich): a verdict panel, the findings, a folded per-rank table.

Paths (evidence) are printed one to a line and never wrapped, so that a long one stays one piece to
copy or click, whatever the width (the terminal may still fold it on screen)."""

from __future__ import annotations

from typing import TextIO

from rich.cells import cell_len
from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from triage.analysis.ranks import rank_word
from triage.model import Report, VerdictKind
from triage.report.fold import fold_ranks

MAX_EVIDENCE = 12


def render_text(report: Report, file: TextIO, width: int | None = None, color: bool | None = None) -> None:
    if width is None and not (hasattr(file, "isatty") and file.isatty()):
        width = 100
    console = Console(file=file, width=width, force_terminal=color, no_color=color is False,
                      highlight=False, soft_wrap=False)
    ok = report.verdict.kind is VerdictKind.NO_PROBLEM_FOUND
    style = "green" if ok else "bold red"
    console.print(Panel(Text(report.verdict.summary, style=style), title="triage verdict", title_align="left",
                        border_style="green" if ok else "red"))
    coverage = report.extra.get("coverage")
    if isinstance(coverage, dict) and not coverage.get("complete", True) and coverage.get("summary"):
        console.print(Text(f"Coverage: {coverage['summary']}", style="dim"))
    check = report.extra.get("cluster_check")
    if isinstance(check, dict):
        console.print(Text(f"Cluster check: {check.get('headline')}", style="green" if check.get("status") == "ok"
                           else "red"))
    if report.findings:
        console.print(Text("Findings", style="bold"))
        _print_findings(console, report)
    console.print(_rank_table(report))
    if report.evidence:
        console.print(Text("Evidence", style="bold"))
        for path in report.evidence[:MAX_EVIDENCE]:
            console.print(Text(f"  {path}"), soft_wrap=True)
        if len(report.evidence) > MAX_EVIDENCE:
            console.print(Text(f"  ... and {len(report.evidence) - MAX_EVIDENCE} more (see --format json)"))
    if report.next_steps:
        console.print(Text("What to do next", style="bold"))
        for step in report.next_steps:       # wrapped at spaces under their text, never inside a path
            for n, line in enumerate(_wrap_words(step, max(20, console.width - 4))):
                console.print(Text(("  - " if n == 0 else "    ") + line), soft_wrap=True)


def _print_findings(console: Console, report: Report) -> None:
    """Numbered findings, wrapped at spaces (never inside a path or another long word) with the
    wrapped lines indented under their text; then each one's evidence paths, one to a line."""
    number_w = len(f"{len(report.findings)}.")
    indent = " " * (number_w + 1)
    for index, finding in enumerate(report.findings, 1):
        tag = "root cause" if finding.root_cause else finding.kind
        ranks = f" [{rank_word(finding.ranks)}]" if finding.ranks else ""
        style = "bold" if finding.root_cause else ""
        lines = _wrap_words(f"({tag}){ranks} {finding.detail}", max(20, console.width - len(indent)))
        for n, line in enumerate(lines):
            head = f"{index}.".rjust(number_w) + " " if n == 0 else indent
            console.print(Text(head) + Text(line, style=style), soft_wrap=True)
        for path in finding.evidence[:3]:
            console.print(Text(f"{indent}evidence: {path}", style="dim"), soft_wrap=True)


def _wrap_words(text: str, width: int) -> list[str]:
    """Greedy wrap at spaces to ``width`` cells; a word longer than that (a path) stays whole."""
    out: list[str] = []
    for paragraph in text.splitlines() or [""]:
        current = ""
        for word in paragraph.split(" "):
            candidate = f"{current} {word}" if current else word
            if current and cell_len(candidate) > width:
                out.append(current)
                current = word
            else:
                current = candidate
        out.append(current)
    return out


def _rank_table(report: Report) -> Table:
    table = Table(title=f"Ranks ({len(report.ranks)})", title_justify="left", expand=False)
    table.add_column("ranks", no_wrap=True)
    table.add_column("host", overflow="fold")
    table.add_column("state", no_wrap=True)
    table.add_column("last collective", overflow="fold")
    table.add_column("stack top", overflow="fold")
    for row in fold_ranks(report):
        style = "bold red" if row.culprit else None
        table.add_row(row.ranks_text + (" *" if row.culprit else ""), row.hosts_text, row.state,
                      row.collective or "-", row.stack_top or "-", style=style)
    return table
