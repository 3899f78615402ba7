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
