"""Session 47's fix48 (rev46's open findings), each a class with its negatives:

- a line that names a rank's death in plain words (launchers' ``rank N ... died with signal S``), after which the job
  stepped on and said it ended well, is a sentence about a death (a FAQ's), not the job's end; without the end, or
  without the steps, it stays the rank's death;
- a line of no rank prefix whose rank words sit inside a quote in the writer's sentence (``the message "... (rank=0)"
  means ...``) is quoted: a failure only where the job did not go on past it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import failure_verdict, report_log

_STEPS = "".join(f"[rank{r}]: step {n} loss {2.0 - n / 10:.2f}\n" for n in range(1, 4) for r in range(2))


@pytest.mark.parametrize("prose", [
    "[rank0]: FAQ: when Rank 3 done reading, Process died with signal 11 means a segfault\n",
    "[rank1]: note: if rank 2 was killed by signal 9 the OOM killer took it; see docs/oom.md\n",
])
def test_a_sentence_about_a_ranks_death_the_job_stepped_and_ended_after_is_no_failure(prose: str,
                                                                                        tmp_path: Path) -> None:
    code, out = report_log(_STEPS + prose + _STEPS + "[rank0]: Training finished\n", tmp_path)
    assert code == 0, out["verdict"]


@pytest.mark.parametrize("after", [
    _STEPS,                                          # steps of the others, no end: the job's death
    "[rank0]: Training finished\n",                  # an end word alone (a script's echo), no step
    "",
])
def test_a_ranks_death_in_plain_words_without_steps_and_an_end_after_stays_a_failure(after: str,
                                                                                      tmp_path: Path) -> None:
    verdict = failure_verdict(_STEPS + "rank 3 died from signal 11\n" + after, tmp_path)
    assert verdict["culprit_ranks"] == [3], verdict


_PLAIN_STEPS = "".join(f"step {n} energy -1.{n}\n" for n in range(1, 4))
_QUOTED = ('Our FAQ: the message "PLE 0608 plexec One of MPI processes was aborted.(rank=0)" means your program '
           "called MPI_Abort.\n")


def test_a_runtimes_rank_words_quoted_in_a_sentence_the_run_went_on_past_are_no_failure(tmp_path: Path) -> None:
    code, out = report_log(_PLAIN_STEPS + _QUOTED + _PLAIN_STEPS, tmp_path)
    assert code == 0, out["verdict"]


@pytest.mark.parametrize("text", [
    _PLAIN_STEPS + _QUOTED,                                                    # quoted, nothing after: kept
    _PLAIN_STEPS + "PLE 0608 plexec One of MPI processes was aborted.(rank=0)\n" + _PLAIN_STEPS[:20],  # not quoted
])
def test_rank_words_not_quoted_or_not_gone_on_past_stay_a_failure(text: str, tmp_path: Path) -> None:
    verdict = failure_verdict(text, tmp_path)
    assert verdict["culprit_ranks"] == [0], verdict


_ABORT_BOX = ("--------------------------------------------------------------------------\n"
              "MPI_ABORT was invoked on rank {rank} in communicator MPI_COMM_WORLD\nwith errorcode {code}.\n\n"
              "NOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes.\n"
              "You may or may not see output from other processes, depending on\nexactly when Open MPI kills them.\n"
              "--------------------------------------------------------------------------\n")


@pytest.mark.parametrize(("own", "rank"), [
    ("Error: cannot open mesh file 'mesh_3.dat' (No such file or directory)", 3),
    ("ERROR: mesh file /scratch/m.msh has 0 cells", 5),
    ("Fatal error: nonlinear solver diverged at t = 0.125", 1),
])
def test_a_ranks_own_error_line_before_its_mpi_abort_is_what_failed(own: str, rank: int, tmp_path: Path) -> None:
    text = (f"[1,0]<stdout>: solver v2 starting on 8 processes\n[1,0]<stdout>: iter 10 residual 1e-3\n"
            f"[1,{rank}]<stderr>: {own}\n" + _ABORT_BOX.format(rank=rank, code=2))
    verdict = failure_verdict(text, tmp_path)
    assert verdict["culprit_ranks"] == [rank], verdict
    assert own in verdict["summary"] and "errorcode 2" in verdict["summary"], verdict


def test_other_ranks_aborting_with_the_same_code_share_the_first_ranks_error(tmp_path: Path) -> None:
    text = ("[1,5]<stderr>:ERROR: mesh file /scratch/m.msh has 0 cells\n" + _ABORT_BOX.format(rank=5, code=3)
            + _ABORT_BOX.format(rank=9, code=3))
    verdict = failure_verdict(text, tmp_path)
    assert verdict["culprit_ranks"] == [5, 9], verdict


@pytest.mark.parametrize("before", [
    "[1,3]<stderr>: Error: cannot open cache 'c.bin', rebuilding it\n[1,3]<stdout>: iter 20 residual 1e-4\n",  # went on
    "[1,3]<stdout>: iter 20 residual 1e-4\n",                                                                # no line
])
def test_an_error_line_the_rank_went_on_past_or_none_leaves_the_abort_as_it_was(before: str, tmp_path: Path) -> None:
    verdict = failure_verdict("[1,0]<stdout>: iter 10 residual 1e-3\n" + before + _ABORT_BOX.format(rank=3, code=2),
                              tmp_path)
    assert verdict["culprit_ranks"] == [3], verdict
    assert "Error:" not in verdict["summary"] and "errorcode 2" in verdict["summary"], verdict


# MVAPICH2's and Cray MPICH's fatal error records: the innermost line is the record's own stack's last, never a line of
# the next record's stack (MPICH's fatal handler's rule, 996741d), nor of a stack line under another rank's head
_MVAPICH = "[cn01:mpi_rank_{r}][MPIDI_CH3_Abort] Fatal error in PMPI_Send: Invalid rank, error stack:\n"
_CRAY = ("Rank {r} [Sat Nov 28 07:00:02 2026] [c0-0c0s1n2] Fatal error in PMPI_Send: Invalid rank, error stack:\n")
_OWN = "PMPI_Send(157): MPI_Send(buf=0x1, count=8, MPI_INT, dest=7, tag=0, MPI_COMM_WORLD) failed\n" \
       "PMPI_Send(95).: Invalid rank has value 7 but must be nonnegative and less than 4\n"
_NEXT = ("\n{head}MPIDI_CH3I_Progress(1051)...: Communication error with rank 2\n")


@pytest.mark.parametrize("head", [_MVAPICH, _CRAY])
def test_an_mpi_records_innermost_line_is_its_own_stacks(head: str) -> None:
    from triage.parsing.mpi_errors import parse_mpi_errors

    text = head.format(r=1) + _OWN + _NEXT.format(head="")
    errors = [e for e in parse_mpi_errors(text) if e.rank == 1]
    assert errors and "innermost: Invalid rank has value 7" in errors[0].text, errors


def test_a_stack_line_under_another_ranks_head_is_not_the_records() -> None:
    from triage.parsing.mpi_errors import parse_mpi_errors

    text = "[1] " + _MVAPICH.format(r=1) + "".join("[1] " + line + "\n" for line in _OWN.splitlines()) \
        + "[0] MPIDI_CH3I_Progress(1051)...: Communication error with rank 2\n"
    errors = [e for e in parse_mpi_errors(text) if e.rank == 1]
    assert errors and "innermost: Invalid rank has value 7" in errors[0].text, errors
