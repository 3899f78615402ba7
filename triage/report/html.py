"""A self-contained HTML report: no external URL, inline CSS and SVG, works offline."""

from __future__ import annotations

import html
import os
import re
from collections import defaultdict
from pathlib import Path
from urllib.parse import quote

from triage.analysis.describe import call
from triage.analysis.ranks import format_ranks, rank_word
from triage.model import Collective, CollectiveState, Report, VerdictKind
from triage.report.fold import fold_ranks
from triage.report.lag_chart import lag_chart
from triage.report.timeline import Timeline, timeline_html

LANE_H = 26
BOX_W = 170
LABEL_W = 130
MAX_LANES = 40

_CSS = """
body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}
.verdict{border:2px solid #c0392b;background:#fdecea;padding:12px 16px;font-size:1.15em;font-weight:600}
.verdict.ok{border-color:#27ae60;background:#eafaf1}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;
font-size:.9em}tr.culprit td{background:#fdecea;font-weight:600}
.ev{color:#666;font-family:monospace;font-size:.85em}
.ev a{color:#1f5f99}
ol.marks{list-style:none;padding-left:0;font-size:.9em}ol.marks .t{display:inline-block;width:6em;color:#666}
ol.marks li.after,span.after{color:#9aa0a6}
li.root{font-weight:600}
svg text{font-family:monospace;font-size:11px}
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def render_html(report: Report, out_dir: Path | None = None, timeline: Timeline | None = None) -> str:
    """The page. ``out_dir``: where it will be written (evidence links are relative to it when it
    lies in a run directory of the report, else absolute file: URLs); ``timeline``: the run's
    timeline strip (:func:`triage.report.timeline.build_timeline`), None for an input with no times."""
    ok = report.verdict.kind is VerdictKind.NO_PROBLEM_FOUND
    link = _Linker(report, out_dir)
    parts = [
        "<!DOCTYPE html>", "<html lang=\"en\"><head><meta charset=\"utf-8\">",
        f"<title>triage: {_e(report.verdict.summary[:80])}</title><style>{_CSS}</style></head><body>",
        "<h1>triage report</h1>",
        f"<div class=\"verdict{' ok' if ok else ''}\" id=\"verdict\">{_e(report.verdict.summary)}</div>",
        _cluster_check(report),
        "<h2>Timeline</h2>", f"<div style=\"overflow-x:auto\">{timeline_html(timeline)}</div>",
        "<h2>Last collectives</h2>", f"<div style=\"overflow-x:auto\">{_svg(report)}</div>",
        "<h2>Arrival lag</h2>", f"<div style=\"overflow-x:auto\">{lag_chart(report)}</div>",
        "<h2>Findings</h2>", _findings(report, link),
        "<h2>Ranks</h2>", _ranks(report),
        "<h2>What to do next</h2><ul>", *(f"<li>{_e(s)}</li>" for s in report.next_steps), "</ul>",
        "<h2>Evidence</h2><ul class=\"ev\">", *(f"<li>{link(p)}</li>" for p in report.evidence[:200]), "</ul>",
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


class _Linker:
    """An evidence path as a link that opens the file: relative to the page's folder when the page is
    written inside a run directory of the report (the pair moves together), else a file: URL. A path
    that does not exist (or a ``path:line`` reference whose file does not) stays plain text."""

    def __init__(self, report: Report, out_dir: Path | None) -> None:
        self.out_dir = Path(os.path.abspath(out_dir)) if out_dir is not None else None
        roots = [Path(os.path.abspath(s)) for s in report.sources if Path(s).is_dir()]
        self.base = self.out_dir if self.out_dir is not None and any(
            self.out_dir == root or root in self.out_dir.parents for root in roots) else None

    def href(self, text: str) -> str | None:
        path = Path(text)
        if not path.exists():
            line = re.fullmatch(r"(.+):\d+", text)
            if line is None or not Path(line.group(1)).exists():
                return None
            path = Path(line.group(1))
        target = Path(os.path.abspath(path))
        if self.base is not None:
            return quote(os.path.relpath(target, self.base).replace(os.sep, "/"), safe="/")
        return target.as_uri()

    def __call__(self, text: str) -> str:
        href = self.href(text)
        return f"<a href=\"{_e(href)}\">{_e(text)}</a>" if href else _e(text)


def _findings(report: Report, link: _Linker) -> str:
    items = []
    for finding in report.findings:
        ranks = f" [{_e(rank_word(finding.ranks))}]" if finding.ranks else ""
        evidence = "".join(f"<div class=\"ev\">{link(p)}</div>" for p in finding.evidence[:6])
        cls = " class=\"root\"" if finding.root_cause else ""
        tag = "root cause" if finding.root_cause else finding.kind
        items.append(f"<li{cls}>({_e(tag)}){ranks} {_e(finding.detail)}{evidence}</li>")
    return "<ol id=\"findings\">" + "".join(items) + "</ol>" if items else "<p>none</p>"


def _ranks(report: Report) -> str:
    rows = [("<table id=\"ranks\"><tr><th>ranks</th><th>host</th><th>state</th><th>last collective</th>"
            "<th>stack top</th></tr>")]
    for row in fold_ranks(report):
        cls = " class=\"culprit\"" if row.culprit else ""
        rows.append(f"<tr{cls}><td>{_e(row.ranks_text)}</td><td>{_e(row.hosts_text)}</td><td>{_e(row.state)}"
                    f"</td><td>{_e(row.collective or '-')}</td><td>{_e(row.stack_top or '-')}</td></tr>")
    rows.append("</table>")
    return "".join(rows)


def _lanes(report: Report) -> list[tuple[tuple[int, ...], tuple[Collective, ...]]]:
    """Ranks with identical recent collectives share one lane."""
    folded: dict[tuple[tuple[str, int, str, CollectiveState], ...], list[int]] = defaultdict(list)
    calls: dict[tuple[tuple[str, int, str, CollectiveState], ...], tuple[Collective, ...]] = {}
    for rank, colls in report.recent:
        key = tuple((c.pg, c.seq, call(c), c.state) for c in colls)
        folded[key].append(rank)
        calls.setdefault(key, colls)
    lanes = [(tuple(sorted(ranks)), calls[key]) for key, ranks in folded.items()]
    culprits = set(report.verdict.culprit_ranks)
    lanes.sort(key=lambda lane: (not (set(lane[0]) & culprits), lane[0][0]))
    return lanes[:MAX_LANES]


def _svg(report: Report) -> str:
    lanes = _lanes(report)
    if not lanes:
        return "<p>No collective traces were available.</p>"
    seqs = sorted({c.seq for _, colls in lanes for c in colls})
    column = {seq: i for i, seq in enumerate(seqs)}
    width = LABEL_W + BOX_W * max(1, len(seqs)) + 10
    height = LANE_H * (len(lanes) + 1) + 10
    culprits = set(report.verdict.culprit_ranks)
    out = [(f"<svg id=\"timeline\" width=\"{width}\" height=\"{height}\" "
           f"viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"last collectives per rank\">")]
    for seq, i in column.items():
        x = LABEL_W + i * BOX_W
        mark = " font-weight=\"bold\"" if seq == report.verdict.seq else ""
        out.append(f"<text x=\"{x + 4}\" y=\"14\"{mark}>seq {seq}</text>")
    for lane_index, (ranks, colls) in enumerate(lanes):
        y = LANE_H * (lane_index + 1)
        bad = bool(set(ranks) & culprits)
        colour = "#c0392b" if bad else "#333"
        out.append(f"<text x=\"4\" y=\"{y + 16}\" fill=\"{colour}\">ranks {_e(format_ranks(ranks))}</text>"
                   if len(ranks) > 1 else
                   f"<text x=\"4\" y=\"{y + 16}\" fill=\"{colour}\">rank {ranks[0]}</text>")
        for coll in colls:
            x = LABEL_W + column[coll.seq] * BOX_W
            waiting = coll.state is not CollectiveState.COMPLETED
            fill = "#f5b7b1" if bad and coll.seq == report.verdict.seq else ("#fcf3cf" if waiting else "#d5f5e3")
            stroke = "#c0392b" if bad else "#777"
            out.append(f"<rect x=\"{x + 2}\" y=\"{y + 2}\" width=\"{BOX_W - 4}\" height=\"{LANE_H - 4}\" rx=\"3\" "
                       f"fill=\"{fill}\" stroke=\"{stroke}\"><title>{_e(call(coll))} pg {_e(coll.pg)} seq "
                       f"{coll.seq} ({coll.state.value})</title></rect>")
            out.append(f"<text x=\"{x + 6}\" y=\"{y + 16}\">{_e(_short(_label(coll)))}</text>")
    out.append("</svg>")
    return "".join(out)


def _label(coll: Collective) -> str:
    """Compact box text: ``all_reduce 1024 float32`` (the tooltip has the full call)."""
    parts = [coll.op]
    if coll.count is not None:
        parts.append(str(coll.count))
    if coll.dtype:
        parts.append(coll.dtype)
    return " ".join(parts)


def _short(text: str, limit: int = 23) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _cluster_check(report: Report) -> str:
    check = report.extra.get("cluster_check")
    if not isinstance(check, dict):
        return ""
    return f"<p id=\"cluster-check\">Cluster check: {_e(str(check.get('headline')))}</p>"
