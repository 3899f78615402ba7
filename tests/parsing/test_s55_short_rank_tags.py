"""Bare ``[N] `` heads on a short paste (fix55c item 1): Hydra's -prepend-rank (MPICH, Intel MPI) tags each line
``[N] `` with its rank; on a paste of a few lines each rank's tag may head one line only, which the whole-input test
(each number heads several lines, as a viewer's line numbers never do) refused. A viewer's line numbers count up one
by one from 1 or more (``[80000] ``, ``[80001] ``, ...) and are stripped even on a paste of three lines; rank tags
repeat, go down or count from 0 (triage.parsing.log_owners.prepended_ranks, triage.parsing.textclean)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import failure_verdict, report_lines
from tests.realworld.scoring import load_cases
from triage.parsing.log_owners import prepended_ranks
from triage.parsing.log_prefix import split_rank_prefix
from triage.parsing.textclean import clean_text


def _prepended(lines: list[str]) -> bool:
    return prepended_ranks(lines, [split_rank_prefix(line) for line in lines])


@pytest.mark.parametrize("numbers", [[2, 0], [1, 0, 1], [0, 1, 2], [3, 3, 1], [0, 1]])
def test_a_short_pastes_rank_tags_are_prepended_ranks(numbers: list[int]) -> None:
    assert _prepended([f"[{n}] step 40 residual 1e-3" for n in numbers])


@pytest.mark.parametrize("numbers", [[1, 2, 3], [80000, 80001, 80002], [1, 26, 51], [4, 9], [7]])
def test_numbers_that_count_up_one_each_are_no_rank_tags(numbers: list[int]) -> None:
    # (a viewer's line numbers, a cut paste's with gaps, R's vector indexes)
    assert not _prepended([f"[{n}] step 40 residual 1e-3" for n in numbers])


def test_a_long_paste_keeps_the_several_lines_each_test() -> None:
    lines = [f"[{n}] value {n}" for n in (5, 3, 9, 1, 7, 2, 8, 4, 6, 0, 11, 10)]
    assert not _prepended(lines)


def test_a_viewers_numbers_on_a_three_line_paste_are_stripped() -> None:
    text = "[120] a\n[121] FATAL CALLED FROM FILE:  <stdin>  LINE:      76\n[122] c\n"
    assert clean_text(text).lines[:3] == ("a", "FATAL CALLED FROM FILE:  <stdin>  LINE:      76", "c")


@pytest.mark.parametrize("text", ["[2] a\n[0] b\n[2] c\n", "[0] a\n[1] b\n[2] c\n", "[1] a\n[3] b\n[4] c\n"])
def test_rank_tags_on_a_three_line_paste_are_kept(text: str) -> None:
    assert clean_text(text).lines[0].startswith("[")


def test_the_named_ranks_own_line_is_the_first_failure_under_short_tags() -> None:
    # (fix54a item 6's class, on a two-line paste of Hydra's tags)
    result = report_lines("[2] ERROR: NaN detected in field u at step 40", "[0] FATAL ERROR: worker 2 stopped responding")
    assert result.verdict.culprit_ranks == (2,) and "NaN detected" in result.verdict.summary, result.verdict.summary


def test_a_tagged_fatal_line_is_not_paired_with_another_ranks_tagged_abort(tmp_path: Path) -> None:
    got = failure_verdict("[0] step 1200 dt=0.01\n[1] step 1200 dt=0.01\n[2] FATAL ERROR: negative density in cell "
                          "1182\n[0] MPI_ABORT was invoked on rank 0 in communicator MPI_COMM_WORLD\n", tmp_path)
    assert got["culprit_ranks"] == [2] and "then its MPI abort" not in got["summary"], got["summary"]


def test_wrf_gc_18_under_a_viewers_numbers_reads_as_pasted(tmp_path: Path) -> None:
    # (WRF-GC/wrf-gc-release#18's three lines, each numbered by a viewer: WRF's fatal error, no rank)
    case = next(c for c in load_cases() if c.log.parent.name == "WRF-GC__wrf-gc-release__18")
    text = case.log.read_text(encoding="utf-8")
    numbered = "\n".join(f"[{80000 + i}] {line}" for i, line in enumerate(text.split("\n")))
    got = failure_verdict(numbered, tmp_path)
    assert got["kind"] == "exception" and not got["culprit_ranks"] and "mieaer" in got["summary"], got["summary"]
