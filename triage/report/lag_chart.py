"""The HTML report's per-rank arrival lag chart: inline SVG, no script, no external asset.

x: the collectives of one process group (the first straggler's, else pg 0) that every member
recorded with a creation time, in seq order; y: each rank's arrival lag (ms after the first
member, :func:`triage.analysis.stragglers.lag_rows`), on round ticks in µs, ms or s
(:mod:`triage.report.ticks`). Stragglers are thick red lines; every other rank has a colour (and,
past the eighth, a dash pattern) of its own, matched by the legend, or, past ``MAX_RANK_LINES``
ranks, two lines stand for all of them: their median and their maximum, each in its own colour.
More than ``MAX_POINTS`` collectives are binned (each point: a bin's median).
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
from triage.report.ticks import duration_ticks, format_duration

WIDTH, HEIGHT = 900, 300
LEFT, RIGHT, TOP, BOTTOM = 70, 170, 24, 40
MAX_POINTS = 240
MAX_RANK_LINES = 16
RED, GREY, DARK = "#c0392b", "#95a5a6", "#2c3e50"
# one colour per rank, none of them red (the straggler's); past 8 ranks the colours come back dashed
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f")
DASHES = ("", "6 3")
Series = tuple[str, list[float], str, float, str, str]   # (label, values, colour, width, tooltip, dash)


def rank_style(index: int) -> tuple[str, str]:
    """(colour, dash pattern) of the ``index``-th non-straggler line: 16 distinct pairs."""
    return PALETTE[index % len(PALETTE)], DASHES[(index // len(PALETTE)) % len(DASHES)]


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
    series: list[Series] = []
    others = [i for i, r in enumerate(ranks) if r not in slow]
    if len(others) <= MAX_RANK_LINES:
        for n, i in enumerate(others):
            tip = f"rank {ranks[i]}: median lag +{format_duration(median(lags[i]))}"
            series.append((f"rank {ranks[i]}", lags[i], *_styled(n, 1.5, tip)))
    elif others:
        cols = list(zip(*(lags[i] for i in others)))
        label = f"ranks {format_ranks(tuple(ranks[i] for i in others))}"
        series.append(("others: max", [max(c) for c in cols], PALETTE[0], 1.5, f"{label}: max lag per collective",
                       "6 3"))
        series.append(("others: median", [median(c) for c in cols], PALETTE[2], 2.0,
                       f"{label}: median lag per collective", ""))
    for i, rank in enumerate(ranks):
        if rank in slow:
            series.append((f"rank {rank} (straggler)", lags[i], RED, 2.5,
                           f"rank {rank}: straggler, median lag +{format_duration(median(lags[i]))}", ""))
    points = min(len(seqs), MAX_POINTS)
    drawn: list[Series] = [(label, _binned(values, points), colour, width, tip, dash)
                           for label, values, colour, width, tip, dash in series]
    top = max(max(s[1]) for s in drawn)
    return _svg(pg, seqs, drawn, top, points, bool(slow))


def _styled(n: int, width: float, tip: str) -> tuple[str, float, str, str]:
    colour, dash = rank_style(n)
    return colour, width, tip, dash


def _svg(pg: str, seqs: list[int], drawn: list[Series], peak: float, points: int, has_straggler: bool) -> str:
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    ticks = duration_ticks(peak, 4)
    top = ticks[-1][0]

    def x(i: int) -> float:
        return LEFT + (plot_w * i / (points - 1) if points > 1 else 0.0)

    def y(ms: float) -> float:
        return TOP + plot_h * (1.0 - ms / top)

    out: list[Any] = [(f"<svg id=\"lag-chart\" width=\"{WIDTH}\" height=\"{HEIGHT}\" "
                       f"viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\" "
                       f"aria-label=\"arrival lag per rank and collective, pg {_e(pg)}\">")]
    for ms, text in ticks:
        out.append(f"<line x1=\"{LEFT}\" y1=\"{y(ms):.1f}\" x2=\"{LEFT + plot_w}\" y2=\"{y(ms):.1f}\" "
                   f"stroke=\"#eee\"/><text class=\"ytick\" x=\"{LEFT - 6}\" y=\"{y(ms) + 4:.1f}\" "
                   f"text-anchor=\"end\">{_e(text)}</text>")
    out.append(f"<text x=\"14\" y=\"{TOP + plot_h / 2:.0f}\" text-anchor=\"middle\" "
               f"transform=\"rotate(-90 14 {TOP + plot_h / 2:.0f})\">arrival lag</text>")
    out.append(f"<line x1=\"{LEFT}\" y1=\"{TOP}\" x2=\"{LEFT}\" y2=\"{TOP + plot_h}\" stroke=\"{DARK}\"/>"
               f"<line x1=\"{LEFT}\" y1=\"{TOP + plot_h}\" x2=\"{LEFT + plot_w}\" y2=\"{TOP + plot_h}\" "
               f"stroke=\"{DARK}\"/>")
    out.extend(_x_axis(pg, seqs, points, x))
    for n, (label, values, colour, width, tip, dash) in enumerate(drawn):
        path = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(values))
        mark = " class=\"straggler\"" if colour == RED else ""
        dashed = f" stroke-dasharray=\"{dash}\"" if dash else ""
        out.append(f"<polyline{mark} fill=\"none\" stroke=\"{colour}\" stroke-width=\"{width}\"{dashed} "
                   f"points=\"{path}\"><title>{_e(tip)}</title></polyline>")
        if n < 24:
            ly = TOP + 6 + 14 * n
            fill = f" fill=\"{RED}\"" if colour == RED else ""
            out.append(f"<line class=\"key\" x1=\"{WIDTH - RIGHT + 10}\" y1=\"{ly}\" x2=\"{WIDTH - RIGHT + 30}\" "
                       f"y2=\"{ly}\" stroke=\"{colour}\" stroke-width=\"{max(width, 2.0)}\"{dashed}/>"
                       f"<text x=\"{WIDTH - RIGHT + 34}\" y=\"{ly + 4}\"{fill}>{_e(label)}</text>")
    out.append("</svg>")
    note = ("the straggler in red" if has_straggler else "no straggler named")
    return (f"{''.join(out)}<p class=\"ev\" id=\"lag-caption\">Arrival lag: how long after the first rank "
            f"each rank called each collective (Flight Recorder creation times, hosts' clocks as "
            f"recorded); {note}.</p>")


def _x_axis(pg: str, seqs: list[int], points: int, x: Any) -> list[str]:
    """Seq ticks under the plot (first, last and up to three between) and the axis title."""
    plot_w = WIDTH - LEFT - RIGHT
    marks = sorted({0, points - 1} | {round((points - 1) * k / 4) for k in range(1, 4)}) if points > 4 \
        else list(range(points))
    out = []
    for i in marks:
        seq = seqs[min(len(seqs) - 1, round(i * (len(seqs) - 1) / max(1, points - 1)))]
        out.append(f"<line x1=\"{x(i):.1f}\" y1=\"{TOP + HEIGHT - TOP - BOTTOM}\" x2=\"{x(i):.1f}\" "
                   f"y2=\"{HEIGHT - BOTTOM + 4}\" stroke=\"{DARK}\"/><text class=\"xtick\" x=\"{x(i):.1f}\" "
                   f"y=\"{HEIGHT - BOTTOM + 16}\" text-anchor=\"middle\">{seq}</text>")
    out.append(f"<text x=\"{LEFT + plot_w / 2:.0f}\" y=\"{HEIGHT - 6}\" text-anchor=\"middle\">collective seq: "
               f"{len(seqs)} collectives of pg {_e(pg)}{f', {points} bins' if points < len(seqs) else ''}</text>")
    return out
