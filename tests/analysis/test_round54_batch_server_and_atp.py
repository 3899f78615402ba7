"""Round 54's classes, on variants written here (other jobs, ranks, signals, hosts), each with negatives: the words
quoted in a sentence, and a run that went on after them.

(1) The batch server's own word of a job it deleted at its wallclock limit (Moab's ``MOAB_INFO:  job exceeded
wallclock limit`` in Torque's job mail, PBS's server ``Job exceeded its walltime limit. Job was aborted``) is a stop
from outside, as PBS's MOM's ``=>> PBS: job killed: walltime ...`` is.

(2) Cray ATP's walkback of the first process to die (``ATP Stack walkback for Rank N done`` then ``Process died with
signal S: 'Name'``) is rank N's death by signal S; ALPS's later ``PE RANK M exit signal Killed`` is aprun's cleanup.
"""

from __future__ import annotations

import pytest

from tests.helpers.report import report_lines as report

_MAIL = ("PBS Job Id: 4412093.sched01", "Job Name:   mesh_refine_17", "Exec host:  cn114/0+cn114/1+cn114/2+cn114/3")


# (1) the batch server's deletion at the wallclock limit
@pytest.mark.parametrize("lines", [
    (*_MAIL, "job deleted", "Job deleted at request of root@sched01", "MOAB_INFO:  job exceeded wallclock limit"),
    ("MOAB_INFO: job exceeded wallclock limit",),
    (*_MAIL, "Aborted by PBS Server", "Job exceeded its walltime limit. Job was aborted", "See Administrator for help",
     "Exit_status=-11"),
    ("[80412] MOAB_INFO:  job exceeded wallclock limit",),      # a viewer's line number on a one-line paste
])
def test_the_batch_servers_wallclock_deletion_is_a_stop_from_outside(lines: tuple[str, ...]) -> None:
    result = report(*lines)
    assert result.verdict.kind.value == "stopped", result.verdict.summary
    assert "its time limit was reached" in result.verdict.summary, result.verdict.summary


@pytest.mark.parametrize("line", [
    "my mail said MOAB_INFO:  job exceeded wallclock limit, so I asked for 48 hours",
    "note: 'Job exceeded its walltime limit. Job was aborted' means walltime was too short",
])
def test_the_servers_words_quoted_in_a_sentence_are_no_stop(line: str) -> None:
    result = report("[rank0]: step 10 loss 2.4", line)
    assert result.verdict.kind.value != "stopped", result.verdict.summary


def test_the_servers_words_in_a_run_that_went_on_are_no_stop() -> None:
    result = report("MOAB_INFO:  job exceeded wallclock limit", *(f"[rank0]: step {n} loss 2.{n}" for n in range(1, 9)),
                    "[rank0]: Training finished")
    assert result.verdict.kind.value != "stopped", result.verdict.summary


# (2) Cray ATP's walkback
_ATP = ("Application 5518830 is crashing. ATP analysis proceeding...", "",
        "ATP Stack walkback for Rank 12 starting:", "  _start@start.S:113", "  main@solver.c:88",
        "  assemble_rhs@assemble.c:412", "ATP Stack walkback for Rank 12 done")


@pytest.mark.parametrize(("died", "sig"), [
    ("Process died with signal 7: 'Bus error'", "SIGBUS"),
    ("Process died with signal 11: 'Segmentation fault'", "SIGSEGV"),
    ("Process died with signal 8: 'Floating point exception'", "SIGFPE"),
])
def test_atps_walkback_names_the_rank_that_died(died: str, sig: str) -> None:
    result = report("step 410 residual 1.2e-5", *_ATP, died, "Forcing core dumps of ranks 12, 40",
                    "View application merged backtrace tree with: stat-view atpMergedBT.dot",
                    "_pmiu_daemon(SIGCHLD): [NID 00421] [c1-0c2s3n1] [Mon Jan  6 03:12:44 2025] PE RANK 87 exit signal "
                    "Killed")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert list(result.verdict.culprit_ranks) == [12], result.verdict.summary
    assert sig in result.verdict.summary, result.verdict.summary


def test_atps_words_quoted_in_a_sentence_are_no_death() -> None:
    result = report("[rank0]: step 10 loss 2.4",
                    "[rank0]: FAQ: 'ATP Stack walkback for Rank 3 done' then 'Process died with signal 11' means a segfault",
                    "[rank0]: step 20 loss 2.1")
    # (ATP's reader takes its lines at their start only; another reader's take on the sentence's own words is not
    # this class's)
    assert "Cray ATP" not in result.verdict.summary, result.verdict.summary


def test_atps_walkback_in_a_run_that_went_on_is_no_death() -> None:
    result = report(*_ATP, "Process died with signal 11: 'Segmentation fault'",
                    *(f"step {n} residual 1.{n}e-5" for n in range(411, 420)), "Run completed successfully.")
    assert "Cray ATP" not in result.verdict.summary, result.verdict.summary
