"""The HTML report's arrival lag chart on constructed Flight Recorder arrivals: the straggler is a
red line, the others grey (or their median and max past 16 ranks), long runs are binned, no trace
gives a note; the page stays offline."""

from __future__ import annotations

import re

from tests.helpers.arrivals import evidence, jitter, late, traces
from triage.analysis.analyze import analyze
from triage.report.html import render_html
from triage.report.lag_chart import MAX_POINTS, MAX_RANK_LINES, RED, lag_chart, rank_style


def chart(page: str) -> str:
    found = re.search(r'<svg id="lag-chart".*?</svg>', page, re.DOTALL)
    assert found is not None, page[:2000]
    return found.group(0)


def polylines(svg: str) -> dict[str, tuple[str, int]]:
    """tooltip -> (colour, points) of each line."""
    out = {}
    for colour, points, tip in re.findall(r'<polyline[^>]*stroke="([^"]+)"[^>]*points="([^"]+)"><title>([^<]+)',
                                          svg):
        out[tip] = (colour, len(points.split()))
    return out


def test_the_straggler_is_the_red_line() -> None:
    report = analyze(evidence(traces(4, 100, late({1: 40.0}, jitter(4, 2.0)))))
    page = render_html(report)
    svg = chart(page)
    lines = polylines(svg)
    assert sorted(tip.split(":")[0] for tip in lines) == ["rank 0", "rank 1", "rank 2", "rank 3"]
    red = [tip for tip, (colour, _n) in lines.items() if colour == "#c0392b"]
    assert len(red) == 1 and red[0].startswith("rank 1: straggler, median lag +4")
    assert all(n == 100 for _colour, n in lines.values())
    assert svg.count('class="straggler"') == 1 and ">rank 1 (straggler)</text>" in svg
    assert "100 collectives of pg 0" in svg and "the straggler in red" in page
    assert not re.search(r"(src|href)\s*=", page) and "http" not in page


def test_an_equal_run_has_the_chart_and_no_red_line() -> None:
    page = render_html(analyze(evidence(traces(4, 60, jitter(5, 3.0)))))
    svg = chart(page)
    assert 'class="straggler"' not in svg and len(polylines(svg)) == 4
    assert "no straggler named" in page


def test_many_ranks_fold_into_median_and_max_and_long_runs_are_binned() -> None:
    report = analyze(evidence(traces(64, 1000, late({17: 30.0}, jitter(6, 3.0)))))
    lines = polylines(chart(render_html(report)))
    assert set(lines) == {"ranks 0-16,18-63: max lag per collective", "ranks 0-16,18-63: median lag per collective",
                          next(t for t in lines if t.startswith("rank 17: straggler"))}
    assert all(n == MAX_POINTS for _c, n in lines.values())
    assert "1000 collectives of pg 0, 240 bins" in chart(render_html(report))


def test_no_traces_give_a_note_not_a_chart() -> None:
    report = analyze(evidence({0: traces(1, 30, jitter(1, 1.0))[0]}))
    assert lag_chart(report).startswith('<p id="lag-chart-none">No arrival lag to chart')


def styles(svg: str, tag: str) -> list[tuple[str, str]]:
    """(stroke, dash pattern) of each ``<polyline>`` or legend key line, in order."""
    out = []
    for attrs in re.findall(rf"<{tag}(\s[^>]*)>", svg):
        stroke = re.search(r'stroke="([^"]+)"', attrs)
        dash = re.search(r'stroke-dasharray="([^"]+)"', attrs)
        assert stroke is not None
        out.append((stroke.group(1), dash.group(1) if dash else ""))
    return out


def test_every_rank_has_a_style_of_its_own_and_the_legend_repeats_it() -> None:
    report = analyze(evidence(traces(17, 40, late({5: 30.0}, jitter(7, 2.0)))))
    svg = chart(render_html(report))
    lines = styles(svg, "polyline")
    keys = styles(svg, 'line class="key"')
    assert len(lines) == 17 and keys == lines
    assert lines[-1] == (RED, "") and all(colour != RED for colour, _ in lines[:-1])
    assert len(set(lines)) == 17                      # 16 other ranks: 16 distinct colour and dash pairs
    names = re.findall(r'<line class="key"[^>]*/><text[^>]*>([^<]+)</text>', svg)
    assert names == [f"rank {r}" for r in range(17) if r != 5] + ["rank 5 (straggler)"]
    assert len({rank_style(i) for i in range(MAX_RANK_LINES)}) == MAX_RANK_LINES


def test_folded_groups_have_their_own_colours() -> None:
    svg = chart(render_html(analyze(evidence(traces(40, 50, late({3: 30.0}, jitter(6, 3.0)))))))
    lines = styles(svg, "polyline")
    assert len(lines) == 3 and len(set(lines)) == 3 and lines[-1] == (RED, "")
    assert styles(svg, 'line class="key"') == lines


def test_sub_millisecond_lags_get_microsecond_ticks() -> None:
    svg = chart(render_html(analyze(evidence(traces(4, 30, jitter(4, 0.3))))))
    ticks = re.findall(r'<text class="ytick"[^>]*>([^<]+)</text>', svg)
    assert len(set(ticks)) == len(ticks) >= 3 and ticks[0] in ("0 µs", "0.0 ms"), ticks
