"""The HTML report's timeline strip: job start, ranks started, last progress per group of ranks,
hang detected, evidence saved, the stop decision, rank exits, job end.

:func:`build_timeline` is pure (a :class:`~triage.load.run_times.RunTimes` and an optional stop
time in, marks out); :func:`timeline_html` draws it as inline SVG plus a list. Everything after the
stop decision is grey and labelled "after triage stopped the job": what the job did then is a
consequence of the stop, never a cause. With no stop time given or recorded, the stop is
approximated from the hang bundle's end (else the first rank exit) and said to be.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone

from triage.analysis.ranks import format_ranks
from triage.load.run_times import RunTimes
from triage.report.ticks import duration_ticks

GROUP_S = 1.0                       # ranks within this many seconds of each other share one mark
WIDTH, LEFT, RIGHT, AXIS_Y, ROW_H, CHAR_W = 900, 20, 20, 40, 15, 6.7
AFTER = "after triage stopped the job"
INK, GREY, RED, SHADE = "#2c3e50", "#9aa0a6", "#c0392b", "#eceff1"


@dataclass(frozen=True)
class Mark:
    time: float                     # unix seconds
    label: str
    kind: str                       # start | ranks | progress | detected | bundle | stop | exit | end
    after_stop: bool = False


@dataclass(frozen=True)
class Timeline:
    start: float
    marks: tuple[Mark, ...]         # in time order
    stop: float | None              # the stop decision, when known or approximated
    stop_note: str                  # "" (recorded) or why it is approximate


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _clusters(items: Sequence[tuple[float, int, str]]) -> list[tuple[float, tuple[int, ...], str]]:
    """(time, rank, tag) -> (latest time, ranks, tag) of runs with one tag within GROUP_S seconds."""
    out: list[tuple[float, tuple[int, ...], str]] = []
    groups: dict[str, tuple[float, float, list[int]]] = {}
    for when, rank, tag in sorted(items):
        first, last, ranks = groups.get(tag, (when, when, []))
        if ranks and when - first > GROUP_S:
            out.append((last, tuple(sorted(ranks)), tag))
            first, ranks = when, []
        groups[tag] = (first, when, ranks + [rank])
    out.extend((last, tuple(sorted(ranks)), tag) for tag, (_first, last, ranks) in groups.items())
    return sorted(out)


def _ranks_word(ranks: tuple[int, ...]) -> str:
    return f"rank {ranks[0]}" if len(ranks) == 1 else f"ranks {format_ranks(ranks)}"


def _hosts(items: Sequence[tuple[str, float]]) -> tuple[float, str] | None:
    if not items:
        return None
    hosts = sorted({host for host, _ in items})
    return min(t for _, t in items), hosts[0] if len(hosts) == 1 else f"{len(hosts)} hosts"


def _stop(times: RunTimes, stop_time: float | None) -> tuple[float | None, str]:
    if stop_time is not None:
        return stop_time, ""
    if times.stop_requested is not None:
        return times.stop_requested, ""
    if times.bundles:
        return min(t for _, t in times.bundles), "approximate: when the hang bundle was saved"
    if times.exits and times.detected:
        return times.exits[0].time, "approximate: the first rank exit after the hang was detected"
    return None, ""


def build_timeline(times: RunTimes, stop_time: float | None = None) -> Timeline | None:
    """The marks of one run, or None when it recorded no time at all."""
    raw: list[tuple[float, str, str]] = []
    if times.job_start is not None:
        raw.append((times.job_start, "job started", "start"))
    if times.ranks_started is not None:
        raw.append((times.ranks_started, "first rank started", "ranks"))
    for when, ranks, _tag in _clusters([(t, r, "") for r, t in times.progress]):
        raw.append((when, f"last progress: {_ranks_word(ranks)}", "progress"))
    if (seen := _hosts(times.detected)) is not None:
        raw.append((seen[0], f"hang detected ({seen[1]})", "detected"))
    if (saved := _hosts(times.bundles)) is not None:
        raw.append((saved[0], f"evidence saved ({saved[1]})", "bundle"))
    for when, ranks, how in _clusters([(e.time, e.rank, e.how) for e in times.exits]):
        raw.append((when, f"{_ranks_word(ranks)} {how}", "exit"))
    if times.job_end is not None:
        raw.append((times.job_end, "job ended", "end"))
    stop, note = _stop(times, stop_time)
    if stop is not None:
        raw.append((stop, "stop decision" + (f" ({note})" if note else ""), "stop"))
    if not raw:
        return None
    order = {"start": 0, "ranks": 1, "progress": 2, "detected": 3, "bundle": 4, "stop": 5, "exit": 6, "end": 7}
    raw.sort(key=lambda m: (m[0], order[m[2]]))
    marks = tuple(Mark(t, label, kind, after_stop=stop is not None and kind != "stop" and t > stop)
                  for t, label, kind in raw)
    return Timeline(start=min(t for t, _, _ in raw), marks=marks, stop=stop, stop_note=note)


def _clock(when: float) -> str:
    return datetime.fromtimestamp(when, tz=timezone.utc).strftime("%H:%M:%S.%f")[:-3] + " UTC"


class _Scale:
    def __init__(self, start: float, span_s: float) -> None:
        self.start, self.span_s = start, span_s

    def __call__(self, when: float) -> float:
        return LEFT + (WIDTH - LEFT - RIGHT) * (when - self.start) / self.span_s


def _rows(timeline: Timeline, x: _Scale) -> list[tuple[Mark, float, int, str]]:
    """Each mark's label position: (mark, x, row, anchor), rows chosen so that no labels overlap."""
    ends: list[float] = []
    out = []
    for mark in timeline.marks:
        width = CHAR_W * len(mark.label)
        at = x(mark.time)
        anchor, left = ("start", at + 4) if at + 4 + width <= WIDTH - RIGHT else ("end", at - 4 - width)
        row = next((i for i, end in enumerate(ends) if end + 10 < left), len(ends))
        if row == len(ends):
            ends.append(0.0)
        ends[row] = left + width
        out.append((mark, at, row, anchor))
    return out


def timeline_html(timeline: Timeline | None) -> str:
    """The strip and the list of marks, or a one-line note when no time was recorded."""
    if timeline is None:
        return ("<p id=\"timeline-none\">No timeline: the input records no times (a run directory of "
                "<code>triage launch</code> does).</p>")
    ticks = duration_ticks(max(t.time for t in timeline.marks) * 1e3 - timeline.start * 1e3, 6)
    x = _Scale(timeline.start, max(ticks[-1][0] / 1e3, 1e-3))
    placed = _rows(timeline, x)
    height = AXIS_Y + 24 + ROW_H * (max((row for *_m, row, _a in placed), default=0) + 2)
    out = [(f"<svg id=\"run-timeline\" width=\"{WIDTH}\" height=\"{height}\" viewBox=\"0 0 {WIDTH} {height}\" "
            "role=\"img\" aria-label=\"the run's timeline\">")]
    if timeline.stop is not None:
        sx = x(timeline.stop)
        out.append(f"<rect class=\"after-stop\" x=\"{sx:.1f}\" y=\"4\" width=\"{WIDTH - RIGHT - sx:.1f}\" "
                   f"height=\"{height - 4}\" fill=\"{SHADE}\"/><text x=\"{WIDTH - RIGHT}\" y=\"{height - 6}\" "
                   f"text-anchor=\"end\" fill=\"{GREY}\">{AFTER} ▸</text>")
    out.append(f"<line x1=\"{LEFT}\" y1=\"{AXIS_Y}\" x2=\"{WIDTH - RIGHT}\" y2=\"{AXIS_Y}\" stroke=\"{INK}\"/>")
    for ms, text in ticks:
        out.append(f"<text x=\"{x(timeline.start + ms / 1e3):.1f}\" y=\"{AXIS_Y - 8}\" text-anchor=\"middle\" "
                   f"fill=\"{GREY}\">+{_e(text)}</text>")
    for mark, at, row, anchor in placed:
        colour = GREY if mark.after_stop else (RED if mark.kind in ("stop", "detected") else INK)
        ly = AXIS_Y + 20 + ROW_H * row
        tip = f"{mark.label}: {_clock(mark.time)}, +{mark.time - timeline.start:.2f} s" + (
            f" ({AFTER})" if mark.after_stop else "")
        out.append(f"<g class=\"mark {mark.kind}{' after' if mark.after_stop else ''}\"><title>{_e(tip)}</title>"
                   f"<line x1=\"{at:.1f}\" y1=\"{AXIS_Y - 5}\" x2=\"{at:.1f}\" y2=\"{ly - 10}\" stroke=\"{colour}\"/>"
                   f"<circle cx=\"{at:.1f}\" cy=\"{AXIS_Y}\" r=\"3.5\" fill=\"{colour}\"/>"
                   f"<text x=\"{at + (4 if anchor == 'start' else -4):.1f}\" y=\"{ly}\" text-anchor=\"{anchor}\" "
                   f"fill=\"{colour}\">{_e(mark.label)}</text>"
                   "</g>")
    out.append("</svg>")
    return "".join(out) + _listing(timeline)


def _listing(timeline: Timeline) -> str:
    rows = []
    for mark in timeline.marks:
        after = f" <span class=\"after\">({AFTER})</span>" if mark.after_stop else ""
        cls = " class=\"after\"" if mark.after_stop else ""
        rows.append(f"<li{cls}><span class=\"t\">+{mark.time - timeline.start:.2f} s</span> {_e(mark.label)}{after}"
                    "</li>")
    start = f"<p class=\"ev\">+0 s is {_e(_clock(timeline.start))}; times from the run directory's records.</p>"
    return f"<ol id=\"timeline-marks\" class=\"marks\">{''.join(rows)}</ol>{start}"
