"""Session 56 (rev55 F2): R's print() heads each line of a printed vector with its first element's index ("[1]
\\"Loading data\\"", "[1] 0.8731", "[13]  13  14  15"), on every line an R script prints; read as Hydra's
-prepend-rank tags, they made every such line rank 1's ("this input holds rank 1", "rank 1: \\"ERROR: ...\\"").
Now a bare "[N] " head that is never "[0]", before nothing but R's values (quoted strings, numbers, logicals, NA) on
every line so headed, is R's index and no rank (triage.parsing.log_owners.r_vector_indexes); Hydra's tags, which
count from 0 or head a program's own words, stay ranks."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log
from triage.parsing.log_owners import attribute_lines, prepended_ranks, r_vector_indexes
from triage.parsing.log_prefix import split_rank_prefix

CASES = Path(__file__).resolve().parent.parent / "realworld" / "cases"

R_PRINTS = ['> source("fit.R")', '[1] "Loading data from data/train.csv"', '[1] "ERROR: 3 rows had missing labels"',
            '[1] "Fitting model with 5 folds"', "[1] 0.8731", '[1] "Done"']
LONG_VECTOR = ["> x <- 1:30", "> x", " [1]  1  2  3  4  5  6  7  8  9 10 11 12", "[13] 13 14 15 16 17 18 19 20 21 22 23 24",
               "[25] 25 26 27 28 29 30", "> is.na(c(1, NA))", "[1] FALSE  TRUE", '> c("a", "b")', '[1] "a" "b"']


def _prepended(lines: list[str]) -> bool:
    return prepended_ranks(lines, [split_rank_prefix(line) for line in lines])


@pytest.mark.parametrize("lines", [R_PRINTS, LONG_VECTOR, ['[1] "x = 3"', '[1] -1.5e-03', "[1] NA", "[1] Inf"]])
def test_rs_vector_index_is_no_rank(lines: list[str]) -> None:
    assert r_vector_indexes(lines)
    assert not _prepended(lines)
    assert all(owner.key == "unknown" or not isinstance(owner.key, int) for owner in attribute_lines(lines))


def test_the_index_is_read_off_the_line() -> None:
    owners = attribute_lines(R_PRINTS)
    assert owners[5].rest == '"Done"'


@pytest.mark.parametrize("lines", [
    ["[0] step 1 loss 2.0", "[1] step 1 loss 2.1", "[0] step 2 loss 1.9", "[1] step 2 loss 2.0"],     # program's words
    ["[0] 0.5", "[1] 0.6", "[0] 0.4", "[1] 0.7"],                                                     # from [0]
    ["[1] ERROR: NaN in residual", "[1] 0.5", "[2] 0.6", "[2] 0.7"],                              # not R's values
])
def test_hydras_tags_stay_ranks(lines: list[str]) -> None:
    assert not r_vector_indexes(lines)
    assert _prepended(lines)


def test_a_printed_error_string_then_done_is_no_failure(tmp_path: Path) -> None:
    _code, got = report_log("\n".join(R_PRINTS) + "\n", tmp_path)
    assert got["verdict"]["kind"] == "no_problem_found", got["verdict"]
    assert "rank 1" not in got["verdict"]["summary"] and got["verdict"]["culprit_ranks"] == []


def test_r_error_after_printed_vectors_names_no_rank(tmp_path: Path) -> None:
    text = "\n".join(R_PRINTS[:2] + ["Error in solve.default(XtX) : ", ("  Lapack routine dgesv: system is exactly "
                                      "singular: U[3,3] = 0"), "Calls: source ... solve -> solve.default",
                                      "Execution halted"]) + "\n"
    _code, got = report_log(text, tmp_path)
    assert got["verdict"]["kind"] == "exception" and got["verdict"]["culprit_ranks"] == []
    assert "solve.default" in got["verdict"]["summary"]


def test_real_gapit_prints_are_no_ranks() -> None:
    # jiabowang/GAPIT#207: an R script's print()s, "[1] \"Processing trait: AFP\"", "[1] TRUE", under yhrun
    lines = (CASES / "jiabowang__GAPIT__207" / "log.txt").read_text().splitlines()
    assert r_vector_indexes(lines)
    assert not _prepended(lines)
