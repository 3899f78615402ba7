"""The HTML report's per-rank arrival lag chart: inline SVG, no script, no external asset.

x: the collectives of one process group (the first straggler's, else pg 0) that every member
recorded with a creation time, in seq order; y: each rank's arrival lag (ms after the first
member, :func:`triage.analysis.stragglers.lag_rows`). Stragglers are thick red lines; the other
ranks thin grey ones, or, past ``MAX_RANK_LINES`` ranks, two lines for all of them: their median
and their maximum. More than ``MAX_POINTS`` collectives are binned (each point: a bin's median).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from statistics import median
from typing import Any

from triage.analysis.groups import DEFAULT_PG
from triage.analysis.ranks import format_ranks
from triage.analysis.stragglers import lag_rows
from triage.model import Report

WIDTH, HEIGHT = 900, 300
LEFT, RIGHT, TOP, BOTTOM = 70, 170, 24, 40
MAX_POINTS = 240
MAX_RANK_LINES = 16
RED, GREY, DARK = "#c0392b", "#95a5a6", "#2c3e50"


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _straggler_ranks(report: Report) -> tuple[str, set[int]]:
    """(the pg to draw, its straggler ranks) from the report's ``extra.stragglers``."""
    found = report.extra.get("stragglers")
    if isinstance(found, list) and found and isinstance(found[0], dict):
        pg = str(found[0].get("pg", DEFAULT_PG))
        return pg, {int(r) for f in found if isinstance(f, dict) and str(f.get("pg")) == pg
                    for r in f.get("ranks", ()) if isinstance(r, int)}
    return DEFAULT_PG, set()


def _members(report: Report, pg: str) -> tuple[int, ...]:
    """The ranks with a trace in ``pg`` (a member without one has no arrival to draw)."""
    return tuple(rank for rank, colls in report.traces if any(c.pg == pg and not c.is_p2p for c in colls))


def _binned(values: Sequence[float], bins: int) -> list[float]:
    if len(values) <= bins:
        return list(values)
    size = len(values) / bins
    return [median(values[int(i * size):max(int(i * size) + 1, int((i + 1) * size))]) for i in range(bins)]


def lag_chart(report: Report) -> str:
    """The chart's SVG (with a caption), or a one-line note when the traces cannot give one."""
    pg, slow = _straggler_ranks(report)
    traces = dict(report.traces)
    ranks, seqs, lags = lag_rows(pg, _members(report, pg), traces)
    if len(seqs) < 2:
        return "<p id=\"lag-chart-none\">No arrival lag to chart: it needs Flight Recorder creation times " \
               "from two ranks or more for the same collectives.</p>"
    series: list[tuple[str, list[float], str, float, str]] = []    # (label, values, colour, width, tooltip)
    others = [i for i, r in enumerate(ranks) if r not in slow]
    if len(others) <= MAX_RANK_LINES:
        for i in others:
            tip = f"rank {ranks[i]}: median lag +{median(lags[i]):.1f} ms"
            series.append((f"rank {ranks[i]}", lags[i], GREY, 1.0, tip))
    elif others:
        cols = list(zip(*(lags[i] for i in others)))
        label = f"ranks {format_ranks(tuple(ranks[i] for i in others))}"
        series.append(("others: max", [max(c) for c in cols], "#cfd8dc", 1.0, f"{label}: max lag per collective"))
        series.append(("others: median", [median(c) for c in cols], GREY, 1.5,
                       f"{label}: median lag per collective"))
    for i, rank in enumerate(ranks):
        if rank in slow:
            series.append((f"rank {rank} (straggler)", lags[i], RED, 2.5,
                           f"rank {rank}: straggler, median lag +{median(lags[i]):.1f} ms"))
    points = min(len(seqs), MAX_POINTS)
    drawn = [(label, _binned(values, points), colour, width, tip) for label, values, colour, width, tip in series]
    top = max(1.0, max(max(values) for _, values, *_rest in drawn)) * 1.05
    return _svg(pg, seqs, drawn, top, points, bool(slow))


def _svg(pg: str, seqs: list[int], drawn: list[tuple[str, list[float], str, float, str]], top: float,
         points: int, has_straggler: bool) -> str:
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(i: int) -> float:
        return LEFT + (plot_w * i / (points - 1) if points > 1 else 0.0)

    def y(ms: float) -> float:
        return TOP + plot_h * (1.0 - ms / top)

    out: list[Any] = [(f"<svg id=\"lag-chart\" width=\"{WIDTH}\" height=\"{HEIGHT}\" "
                       f"viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\" "
                       f"aria-label=\"arrival lag per rank and collective, pg {_e(pg)}\">")]
    for frac in (0.0, 0.25, 0.5, 0.75, 1.0):
        ms = top / 1.05 * frac
        out.append(f"<line x1=\"{LEFT}\" y1=\"{y(ms):.1f}\" x2=\"{LEFT + plot_w}\" y2=\"{y(ms):.1f}\" "
                   f"stroke=\"#eee\"/><text x=\"{LEFT - 6}\" y=\"{y(ms) + 4:.1f}\" text-anchor=\"end\">"
                   f"{ms:.0f} ms</text>")
    out.append(f"<line x1=\"{LEFT}\" y1=\"{TOP}\" x2=\"{LEFT}\" y2=\"{TOP + plot_h}\" stroke=\"{DARK}\"/>"
               f"<line x1=\"{LEFT}\" y1=\"{TOP + plot_h}\" x2=\"{LEFT + plot_w}\" y2=\"{TOP + plot_h}\" "
               f"stroke=\"{DARK}\"/>")
    out.append(f"<text x=\"{LEFT}\" y=\"{HEIGHT - 8}\">seq {seqs[0]}</text><text x=\"{LEFT + plot_w}\" "
               f"y=\"{HEIGHT - 8}\" text-anchor=\"end\">seq {seqs[-1]}</text><text x=\"{LEFT + plot_w / 2:.0f}\" "
               f"y=\"{HEIGHT - 8}\" text-anchor=\"middle\">{len(seqs)} collectives of pg {_e(pg)}"
               f"{f', {points} bins' if points < len(seqs) else ''}</text>")
    for n, (label, values, colour, width, tip) in enumerate(drawn):
        path = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(values))
        mark = " class=\"straggler\"" if colour == RED else ""
        out.append(f"<polyline{mark} fill=\"none\" stroke=\"{colour}\" stroke-width=\"{width}\" points=\"{path}\">"
                   f"<title>{_e(tip)}</title></polyline>")
        if n < 24:
            ly = TOP + 6 + 14 * n
            fill = f" fill=\"{RED}\"" if colour == RED else ""
            out.append(f"<line x1=\"{WIDTH - RIGHT + 10}\" y1=\"{ly}\" x2=\"{WIDTH - RIGHT + 26}\" y2=\"{ly}\" "
                       f"stroke=\"{colour}\" stroke-width=\"{max(width, 2.0)}\"/><text x=\"{WIDTH - RIGHT + 30}\" "
                       f"y=\"{ly + 4}\"{fill}>{_e(label)}</text>")
    out.append("</svg>")
    note = ("the straggler in red" if has_straggler else "no straggler named")
    return (f"{''.join(out)}<p class=\"ev\" id=\"lag-caption\">Arrival lag: how long after the first rank "
            f"each rank called each collective (Flight Recorder creation times, hosts' clocks as "
            f"recorded); {note}.</p>")
