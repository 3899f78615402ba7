"""The offset lookups that keep a log of many records linear (a bisect over what was found once, a line count carried
on) answer exactly what the plain scans they replaced answered, on random texts and questions."""

from __future__ import annotations

import random
import re

import pytest

from triage.load.logs.records import _line_counter
from triage.parsing.launchers import _within
from triage.parsing.solver_errors import _last_before, parse_solver_errors


def _text(rng: random.Random) -> str:
    words = ["taskid: 3 hostname: n1", "step 4", "", "x", "taskid: 12 hostname: n2", "CRITICAL ERROR: bad"]
    return "\n".join(rng.choice(words) for _ in range(rng.randrange(0, 60)))


@pytest.mark.parametrize("seed", range(40))
def test_the_last_match_before_an_offset_is_the_scan_s_last(seed: int) -> None:
    rng = random.Random(seed)
    text = _text(rng)
    pattern = re.compile(r"^taskid: (\d+)", re.MULTILINE)
    before = _last_before(pattern, text)
    line_starts = [0] + [m.end() for m in re.finditer("\n", text)]      # (a banner's offset: its line's start)
    for offset in line_starts:
        last = None
        for last in pattern.finditer(text, 0, offset):
            pass
        got = before(offset)
        assert (got.span() if got else None) == (last.span() if last else None), offset


@pytest.mark.parametrize("seed", range(40))
def test_the_line_of_an_offset_is_its_count_of_newlines_asked_in_any_order(seed: int) -> None:
    rng = random.Random(seed)
    text = _text(rng)
    line_of = _line_counter(text)
    offsets = [rng.randrange(0, len(text) + 1) for _ in range(30)]
    offsets = sorted(offsets) + offsets         # in text order (the usual), then in any order (counted afresh)
    assert [line_of(o) for o in offsets] == [text.count("\n", 0, o) for o in offsets]


@pytest.mark.parametrize("seed", range(40))
def test_an_offset_within_overlapping_spans_is_found_as_by_a_walk_of_them_all(seed: int) -> None:
    rng = random.Random(seed)
    spans = [(lo, lo + rng.randrange(0, 30)) for lo in (rng.randrange(0, 200) for _ in range(rng.randrange(0, 12)))]
    inside = _within(spans)
    for offset in range(-2, 240):
        assert inside(offset) == any(lo <= offset < hi for lo, hi in spans), (offset, spans)


def test_several_tasks_banners_each_take_the_task_header_above_them() -> None:
    text = ("Beginning MPAS-atmosphere Error Log File for task      3 of    128\n"
            "CRITICAL ERROR: xtime 7 out of range\n"
            "Beginning MPAS-atmosphere Error Log File for task     41 of    128\n"
            "CRITICAL ERROR: no such stream 'restart'\n")
    assert sorted((d.rank, d.text) for d in parse_solver_errors(text)) == [
        (3, "MPAS's critical error: xtime 7 out of range"),
        (41, "MPAS's critical error: no such stream 'restart'")]
