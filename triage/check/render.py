"""Text and JSON renderings of a check verdict: the verdict first, then one line per node."""

from __future__ import annotations

import html
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

from triage.check.verdict import NodeSummary, Verdict, gbps, rank_ranges, verdict_json
from triage.console import visible
from triage.schemas import CHECK_RESULT_FORMAT

FORMATS = ("text", "json", "html")


def _node_line(node: NodeSummary) -> str:
    parts = [f"{node.label}: {rank_ranges(node.ranks)}"]
    if node.interface:
        store = f" (connect {node.store_seconds * 1000:.1f} ms)" if node.store_seconds is not None else ""
        parts.append(f"master via {node.interface}{store}")
    parts += [f"{backend} busbw {gbps(value)}" for backend, value in sorted(node.busbw_gbps.items())]
    if node.ring_mb_per_s is not None:
        parts.append(f"ring send/recv {node.ring_mb_per_s:.1f} MB/s")
    if node.clock_offset_s is not None:
        parts.append(f"clock {node.clock_offset_s:+.3f} s")
    return ", ".join(parts)


class _Printable:
    """Writes text with control characters (terminal escapes from a host name or an error) made visible."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def write(self, text: str) -> None:
        self.out.write(visible(text))

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)


def render_text(verdict: Verdict, check_dir: Path, stream: TextIO, lead_note: str | None = None) -> None:
    out = _Printable(stream)
    out.write(verdict.headline + "\n")
    if lead_note:
        out.write(f"({lead_note})\n")
    if len(verdict.problems) > 1:
        out.write("\nproblems:\n")
        out.writelines(f"  - {problem}\n" for problem in verdict.problems)
    if verdict.nodes:
        out.write("\nnodes:\n")
        out.writelines(f"  {_node_line(node)}\n" for node in verdict.nodes)
    if verdict.notes:
        out.write("\nnotes:\n")
        out.writelines(f"  - {note}\n" for note in verdict.notes)
    out.write(f"\ncheck directory: {check_dir}\n")


def render_lead_text(data: dict[str, Any], check_dir: Path, stream: TextIO) -> None:
    """A follower node prints the lead's verdict (as read from verdict.json)."""
    out = _Printable(stream)
    out.write(f"{data.get('headline')}\n")
    problems = [str(p) for p in data.get("problems") or []]
    if len(problems) > 1:
        out.write("\nproblems:\n")
        out.writelines(f"  - {problem}\n" for problem in problems)
    out.write(f"\n(verdict of the lead node {data.get('lead')}; check directory: {check_dir})\n")


def render_json(data: dict[str, Any], out: TextIO) -> None:
    json.dump(data, out, indent=1, sort_keys=True)
    out.write("\n")


def json_document(verdict: Verdict, check_dir: Path, lead: bool) -> dict[str, Any]:
    return {"format": CHECK_RESULT_FORMAT, **verdict_json(verdict), "check_dir": str(check_dir), "lead": lead}


def render_html(verdict: Verdict, check_dir: Path, out: TextIO, lead_note: str | None = None) -> None:
    """One self-contained page; every string from the check directory is escaped."""
    def esc(text: object) -> str:
        return html.escape(str(text), quote=True)

    status = "ok" if verdict.ok else "problem"
    color = "#1a7f37" if verdict.ok else "#cf222e"
    rows = "".join(f"<li>{esc(_node_line(node))}</li>" for node in verdict.nodes)
    problems = "".join(f"<li>{esc(p)}</li>" for p in verdict.problems)
    notes = "".join(f"<li>{esc(n)}</li>" for n in verdict.notes)
    out.write(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>triage check</title></head>"
        "<body style=\"font-family: sans-serif\">\n"
        f"<h1 class=\"verdict {status}\" style=\"color: {color}\">{esc(verdict.headline)}</h1>\n"
        + (f"<p>{esc(lead_note)}</p>\n" if lead_note else "")
        + (f"<h2>Problems</h2><ul>{problems}</ul>\n" if len(verdict.problems) > 1 else "")
        + (f"<h2>Nodes</h2><ul>{rows}</ul>\n" if rows else "")
        + (f"<h2>Notes</h2><ul>{notes}</ul>\n" if notes else "")
        + f"<p>check directory: <code>{esc(check_dir)}</code></p>\n</body></html>\n")
