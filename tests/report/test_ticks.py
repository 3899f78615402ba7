"""Duration axis ticks: round steps, µs/ms/s, never two equal labels, the top value always covered."""

from __future__ import annotations

import itertools
import math

import pytest

from triage.report.ticks import duration_ticks, format_duration, nice_step

# tops from 1 ns to 3 hours (milliseconds), dense enough to hit every step and unit boundary
TOPS = sorted({m * 10.0 ** e for e in range(-6, 8) for m in (1, 1.05, 1.2, 1.5, 2, 2.5, 3, 4, 4.99, 5, 7, 9.99)}
              | {0.0004, 0.00095, 0.8, 0.999, 1.0, 1.001, 1.04, 999.0, 1000.0, 1000.5, 1e-9, 123456.789})


@pytest.mark.parametrize("top", TOPS)
def test_ticks_cover_the_range_with_distinct_labels(top: float) -> None:
    ticks = duration_ticks(top)
    values = [v for v, _ in ticks]
    labels = [label for _, label in ticks]
    assert len(set(labels)) == len(labels), labels
    assert values[0] == 0 and values[-1] >= top * (1 - 1e-9)
    assert 2 <= len(ticks) <= 7, labels
    steps = {round(b - a, 12) for a, b in itertools.pairwise(values)}
    assert max(steps) - min(steps) <= 1e-9 * max(values[-1], 1e-12)
    units = {label.split(" ")[1] for label in labels}
    assert len(units) == 1 and units <= {"µs", "ms", "s"}
    # each label reads back as its value
    size = {"µs": 1e-3, "ms": 1.0, "s": 1e3}[units.pop()]
    for value, label in ticks:
        assert math.isclose(float(label.split(" ")[0]) * size, value, rel_tol=1e-6, abs_tol=1e-12), (value, label)


def test_the_sub_millisecond_range_of_the_issue() -> None:
    # the demo's lag: sub-millisecond values that used to read "1 ms, 1 ms, 1 ms, 0 ms, 0 ms"
    assert [label for _, label in duration_ticks(0.87)] == ["0.0 ms", "0.2 ms", "0.4 ms", "0.6 ms", "0.8 ms",
                                                             "1.0 ms"]
    assert [label for _, label in duration_ticks(0.33)] == ["0 µs", "100 µs", "200 µs", "300 µs", "400 µs"]
    assert [label for _, label in duration_ticks(1.3)] == ["0.0 ms", "0.5 ms", "1.0 ms", "1.5 ms"]
    assert [label for _, label in duration_ticks(42.0)] == ["0 ms", "10 ms", "20 ms", "30 ms", "40 ms", "50 ms"]
    assert [label for _, label in duration_ticks(2600.0)] == ["0 s", "1 s", "2 s", "3 s"]
    assert [label for _, label in duration_ticks(2.6e-3)] == ["0 µs", "1 µs", "2 µs", "3 µs"]
    assert [label for _, label in duration_ticks(1.8e-3)] == ["0.0 µs", "0.5 µs", "1.0 µs", "1.5 µs", "2.0 µs"]


@pytest.mark.parametrize("top", [0.0, -3.0, math.nan, math.inf])
def test_no_range_gives_a_plain_millisecond_axis(top: float) -> None:
    assert [label for _, label in duration_ticks(top)] == ["0.0 ms", "0.2 ms", "0.4 ms", "0.6 ms", "0.8 ms",
                                                            "1.0 ms"]


def test_nice_steps_are_one_two_or_five() -> None:
    for span in (0.0013, 0.7, 3.0, 11.0, 99.0, 4.5e6):
        step = nice_step(span)
        mantissa = step / 10.0 ** math.floor(math.log10(step) + 1e-9)
        assert any(math.isclose(mantissa, m) for m in (1, 2, 5, 10)) and span / step <= 5 + 1e-9


def test_format_duration() -> None:
    assert format_duration(0.85) == "850 µs"
    assert format_duration(1.25) == "1.25 ms"
    assert format_duration(12500.0) == "12.5 s"
    assert format_duration(0.0) == "0 ms"
