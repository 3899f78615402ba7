"""Session 57 (round 80's mlr-org/batchtools#278): R's uncaught error where no "Execution halted" follows (the input
ends at it) was read only with R's further errors, its Calls line and blank lines after it: R's own "In addition:
Warning message:" block after it left it a failure of unknown place; rlang's layout ("Error in `f()`:" or "Error:",
then "! <message>") was read neither with "Execution halted" after it (no failure line at all) nor without it. Now
each is R's error (triage.parsing.hpc_codes): an exception of no rank."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log


@pytest.mark.parametrize(("text", "words"), [
    # base R, its warnings after it (one numbered with its message on the next line), no "Execution halted"
    (("Error in readRDS(fn) : error reading from connection\n"
     "Calls: <Anonymous> -> doJobCollection.character -> readRDS\n"
     "In addition: Warning messages:\n"
     "1: In readRDS(fn) : lazy-load database '/scratch/reg/jobs/x.rds' is corrupt\n"
     "2: In readRDS(fn) :\n"
     "  cannot open compressed file '/scratch/reg/jobs/x.rds', probable reason 'No such file or directory'\n"),
     "error reading from connection"),
    (("Error in solve.default(S) : \n  Lapack routine dgesv: system is exactly singular: U[3,3] = 0\n"
     "Calls: fit_model -> solve -> solve.default\n"
     "In addition: There were 12 warnings (use warnings() to see them)\n"),
     "Lapack routine dgesv"),
    # rlang's layout, with R's end after it and without
    (("Error in `vroom::vroom()`:\n! `file` must be one of the supported file types.\nBacktrace:\n    ▆\n"
     " 1. ├─readr::read_csv(NA)\n 2. └─vroom::vroom(...)\nExecution halted\n"),
     "`file` must be one of the supported file types."),
    (("Error in `mutate()`:\nℹ In argument: `z = f(y)`.\nCaused by error:\n! object 'y' not found\n"
     "Run `rlang::last_trace()` to see where the error occurred.\n"), "object 'y' not found"),
    (("Error:\n! Can't find a column named `score` in the results.\nℹ Did you mean `scores`?\n"
     "Run `rlang::last_trace()` to see where the error occurred.\n"),
     "Can't find a column named `score`"),
])
def test_r_error_is_the_r_process_exception(text: str, words: str, tmp_path: Path) -> None:
    _code, got = report_log(text, tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "exception", verdict
    assert "R's error" in verdict["summary"] and words in verdict["summary"], verdict


def test_warnings_alone_are_no_r_error(tmp_path: Path) -> None:
    # (R's warnings with no error before them: the run went on)
    text = ("[1] \"fitting 40 models\"\nWarning message:\nIn log(x) : NaNs produced\n[1] \"done: 40 models\"\n")
    code, got = report_log(text, tmp_path)
    assert code == 2 or "R's error" not in got["verdict"]["summary"], got
