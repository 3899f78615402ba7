"""Text and JSON renderings of a check verdict: the verdict first, then one line per node."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TextIO

from triage.check.verdict import NodeSummary, Verdict, gbps, rank_ranges, verdict_json

FORMATS = ("text", "json")


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


def render_text(verdict: Verdict, check_dir: Path, out: TextIO, lead_note: str | None = None) -> None:
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


def render_lead_text(data: dict[str, Any], check_dir: Path, out: TextIO) -> None:
    """A follower node prints the lead's verdict (as read from verdict.json)."""
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
    return {"format": "triage.check/1", **verdict_json(verdict), "check_dir": str(check_dir), "lead": lead}
