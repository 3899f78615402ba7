"""Session 55 (fix55a item 5): R's uncaught error where the input ends at it, with no "Execution halted" (nor
recover()'s menu or "Timing stopped at:") after it: "Error in <call> :" with the message on the next line, indented
(R's layout of a long call), or "Error in f(...) : <message>", followed only by R's further errors, their messages,
its Calls line and blank lines, is the error of the R master, no rank (snow's RMPISNOW under mpirun). It was a
failure of unknown place."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tests.helpers.report import report_log


@pytest.mark.parametrize("tail", [
    "Error in parLapply(cl, chunks, fit_one) : \n  one node produced an error: subscript out of bounds\n",
    ("Error in clusterEvalQ(cl, library(lme4)) : \n  3 nodes produced errors; first error: there is no package\n"
    "Calls: clusterEvalQ -> clusterCall -> checkForRemoteErrors\n\n"),
    "Error in readRDS(\"inputs/model.rds\") : cannot open the connection\n",
])
def test_an_r_error_ending_the_input_is_the_masters(tail: str, tmp_path: Path) -> None:
    text = "Loading required package: snow\nLibrary Rmpi loaded.\n" + tail
    code, got = report_log(text, tmp_path)
    assert code not in (0, 2, 70)
    verdict = got["verdict"]
    assert verdict["kind"] == "exception" and verdict["culprit_ranks"] == [], verdict["summary"]
    assert "R's error in" in verdict["summary"]


def test_an_r_error_the_run_went_on_past_is_none(tmp_path: Path) -> None:
    text = ("Error in parLapply(cl, chunks, fit_one) : \n  one node produced an error: subscript out of bounds\n"
            "retrying with 4 workers\niteration 1 done\niteration 2 done\n")
    _code, got = report_log(text, tmp_path)
    assert "R's error in" not in got["verdict"]["summary"]


def test_real_snow_cluster_already_running(tmp_path: Path) -> None:
    # UCL-ARC/rcps-buildscripts#462: makeMPIcluster's error under snowfall's, the paste ending there
    log = (REPO / "tests/realworld/cases/UCL-ARC__rcps-buildscripts__462/log.txt").read_text(encoding="utf-8")
    _code, got = report_log(log, tmp_path)
    assert got["verdict"]["kind"] == "exception" and got["verdict"]["culprit_ranks"] == []
    assert "MPI cluster of size 59 already running" in got["verdict"]["summary"]


def test_an_r_error_under_a_logs_stamps_is_the_masters_too(tmp_path: Path) -> None:
    # (a journald/syslog stamp before every line, read off with the indent of R's message: the metamorphic suite's
    # clothes of rcps-buildscripts#462)
    lines = ["Loading required package: snow", "Library Rmpi loaded.", "Error in makeMPIcluster(nodes, outfile = tmp,  : ",
             "  MPI cluster of size 59 already running", "Error in snowfall::sfInit(parallel = T, cpus = 60) : ",
             "  Starting of snow cluster failed!"]
    text = "".join(f"Nov 29 10:00:0{i % 10} node1 R[4242]: {line}\n" for i, line in enumerate(lines))
    _code, got = report_log(text, tmp_path)
    assert got["verdict"]["kind"] == "exception" and got["verdict"]["culprit_ranks"] == [], got["verdict"]["summary"]
    assert "MPI cluster of size 59 already running" in got["verdict"]["summary"]
