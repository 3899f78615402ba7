"""Session 58 (fix58b, rev57's F4): a rank's own traceback (a handled one: the rank caught it, fell back and went
on), then that rank's progress and its own word that the run ended well, every rank this text shows going on past
it: a note of the all-clear (triage.load.logs.text._went_on_past), as a rank-less handled traceback already was. It
was "EXCEPTION: rank 0 raised ..." for any exception. Where the rank did not reach its own good end, another rank
did not go on, or another rank failed, the failure stays."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log

_TRACE = ("[rank{r}]: Traceback (most recent call last):\n"
          "[rank{r}]:   File \"/srv/app/common/accel.py\", line 40, in choose_backend\n"
          "[rank{r}]:     dev = torch.device(\"cuda\", local_rank)\n"
          "[rank{r}]: {exc}\n")
_EXCS = ["RuntimeError: No CUDA GPUs are available", "KeyError: 'optimizer.betas'",
         "RuntimeError: CUDA driver initialization failed, you might not have a CUDA gpu."]


def _went_on(r: int, ended: bool = True) -> str:
    lines = [f"[rank{r}]: using the gloo backend on CPU instead", f"[rank{r}]: step 10/30 loss 1.41",
             f"[rank{r}]: step 20/30 loss 0.87", f"[rank{r}]: step 30/30 loss 0.52"]
    return "\n".join(lines + ([f"[rank{r}]: Training complete."] if ended else [])) + "\n"


@pytest.mark.parametrize("exc", _EXCS)
def test_a_rank_that_went_on_to_its_good_end_is_a_note(exc: str, tmp_path: Path) -> None:
    code, got = report_log(_TRACE.format(r=0, exc=exc) + _went_on(0), tmp_path)
    assert got["verdict"]["kind"] == "no_problem_found", got["verdict"]
    assert code == 0
    assert exc.split(":")[0] in got["verdict"]["summary"]        # (said as what the run went on past)


def test_two_ranks_both_going_on_past_one_ranks_handled_trace(tmp_path: Path) -> None:
    text = ("[rank1]: step 1/30 loss 2.0\n" + _TRACE.format(r=0, exc=_EXCS[0]) + "[rank1]: step 5/30 loss 1.9\n"
            + _went_on(0) + "[rank1]: step 30/30 loss 0.50\n")
    _code, got = report_log(text, tmp_path)
    assert got["verdict"]["kind"] == "no_problem_found", got["verdict"]


@pytest.mark.parametrize("exc", _EXCS)
def test_no_good_end_stays_the_exception(exc: str, tmp_path: Path) -> None:
    _code, got = report_log(_TRACE.format(r=0, exc=exc) + _went_on(0, ended=False), tmp_path)
    assert got["verdict"]["kind"] != "no_problem_found" and got["verdict"]["culprit_ranks"] == [0], got["verdict"]


def test_a_good_end_with_no_progress_between_stays_the_exception(tmp_path: Path) -> None:
    text = _TRACE.format(r=0, exc=_EXCS[1]) + "[rank0]: Training complete.\n"
    _code, got = report_log(text, tmp_path)
    assert got["verdict"]["kind"] != "no_problem_found" and got["verdict"]["culprit_ranks"] == [0], got["verdict"]


def test_another_rank_that_did_not_go_on_keeps_it_a_failure(tmp_path: Path) -> None:
    text = "[rank1]: step 1/30 loss 2.0\n" + _TRACE.format(r=0, exc=_EXCS[0]) + _went_on(0)
    _code, got = report_log(text, tmp_path)
    assert got["verdict"]["kind"] != "no_problem_found", got["verdict"]


def test_another_ranks_own_failure_is_the_culprit(tmp_path: Path) -> None:
    text = (_TRACE.format(r=0, exc=_EXCS[0]) + "[rank1]: step 5/30 loss 1.9\n" + _TRACE.format(r=1, exc=_EXCS[1])
            + _went_on(0))
    _code, got = report_log(text, tmp_path)
    assert got["verdict"]["kind"] != "no_problem_found" and 1 in got["verdict"]["culprit_ranks"], got["verdict"]


def test_a_failure_after_the_good_end_stays(tmp_path: Path) -> None:
    text = (_TRACE.format(r=0, exc=_EXCS[0]) + _went_on(0)
            + _TRACE.format(r=0, exc="OSError: [Errno 28] No space left on device").replace("choose_backend", "save"))
    _code, got = report_log(text, tmp_path)
    assert got["verdict"]["kind"] != "no_problem_found" and got["verdict"]["culprit_ranks"] == [0], got["verdict"]
