"""Session 57 (the lead, after round 82's first sight: huggingface/lighteval#841): ANSI colours whose escape byte a copy
lost (an issue's paste of Ray's coloured worker prefix, "[36m(RayTrainWorker pid=42)[0m ValueError: ...") are removed
as the colours themselves are (triage.parsing.textclean.strip_decorations), on a line holding the reset "[0m"; a
bracketed duration or word is never taken for one. Was: the prefix unread, the worker's exception a failure of no
reader's words."""

from __future__ import annotations

import pytest

from tests.helpers.report import report_lines
from triage.model import VerdictKind
from triage.parsing.textclean import strip_decorations


@pytest.mark.parametrize(("raw", "clean"), [
    ("[36m(RayTrainWorker pid=42)[0m ValueError: bad", "(RayTrainWorker pid=42) ValueError: bad"),
    ("[1;31mERROR[0m: the run failed", "ERROR: the run failed"),
    ("[33m(raylet)[m [0m worker died", "(raylet)  worker died"),
    ("[2m[36m(pid=7)[0m loss 0.5", "(pid=7) loss 0.5"),
])
def test_colours_without_their_escape_byte_are_removed(raw: str, clean: str) -> None:
    assert strip_decorations(raw)[0] == clean


@pytest.mark.parametrize("raw", [
    "eta [5m] remaining",                      # a bracketed duration
    "see [more] below [0m",                    # a word in brackets, on a line with a reset too
    "retry in [10m] [0m",
    "timeout [36m elapsed",                    # no reset on the line: nothing removed
])
def test_brackets_that_are_no_colour_stay(raw: str) -> None:
    clean = strip_decorations(raw)[0]
    for kept in ("[5m]", "[more]", "[10m]", "[36m"):
        if kept in raw:
            assert kept in clean, clean


def test_a_ray_workers_exception_behind_a_colour_without_its_escape_is_read() -> None:
    report = report_lines("[36m(RayTrainWorker pid=2816485)[0m Traceback (most recent call last):",
                          '[36m(RayTrainWorker pid=2816485)[0m   File "train.py", line 3, in main',
                          "[36m(RayTrainWorker pid=2816485)[0m ValueError: Current node has no GPU available.")
    verdict = report.verdict
    assert verdict.kind is VerdictKind.EXCEPTION, verdict.summary
    assert "ValueError: Current node has no GPU available." in verdict.summary
    assert "[36m" not in verdict.summary
