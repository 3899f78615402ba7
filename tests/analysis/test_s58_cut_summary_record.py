"""Session 58 (fix58c; from session 57's sweep, pytorch/pytorch#121209, a thread of a corpus repository, not a corpus
case): torchrun's failure summary pasted from inside its first record, whose head and ``time`` line the paste cut off.
Where the other ranks exited with the same code in the same second (which failed first, the summary cannot tell), the
cut record's rank exited with the same code too: the verdict named only the timed ranks ("ranks 0,2,3"), dropping it;
now it says that rank exited alike, and that its time is not in the input (triage.analysis.failures
``untimed_same_exits``)."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.report import report_log


def _record(rank: int, code: int, pid: int, timed: bool = True) -> list[str]:
    head = [f"[{rank}]:", "  time      : 2025-06-02_14:22:09"] if timed else []
    return [*head,
            "  host      : gpu-a17.cluster.local",
            f"  rank      : {rank} (local_rank: {rank})",
            f"  exitcode  : {code} (pid: {pid})",
            "  error_file: <N/A>",
            "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"]


def _summary(cut_rank: int, cut_code: int) -> str:
    # the paste starts at the cut record's host line: its "[N]:" head and time are gone
    lines = _record(cut_rank, cut_code, 5102, timed=False)
    lines += _record(3, 1, 5103)
    lines += ["------------------------------------------------------------", "Root Cause (first observed failure):"]
    lines += _record(0, 1, 5100)
    lines += ["============================================================"]
    return "\n".join(lines) + "\n"


def test_the_cut_records_rank_is_said_to_exit_alike(tmp_path: Path) -> None:
    _code, got = report_log(_summary(2, 1), tmp_path)
    summary = got["verdict"]["summary"]
    assert got["verdict"]["kind"] == "exception", got["verdict"]
    assert "ranks 0,3" in summary and "rank 2 with the same code (its record's time is not in this input)" in summary, \
        summary


def test_a_cut_record_of_another_code_is_not_said_alike(tmp_path: Path) -> None:
    _code, got = report_log(_summary(2, 137), tmp_path)
    assert "with the same code (its record" not in got["verdict"]["summary"], got["verdict"]


def test_the_real_text(tmp_path: Path) -> None:
    # pytorch/pytorch#121209: the paste begins inside rank 1's record
    text = """  host      : vmnuvocinpoc.internal.cloudapp.net
  rank      : 1 (local_rank: 1)
  exitcode  : 1 (pid: 69812)
  error_file: <N/A>
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
[2]:
  time      : 2024-03-05_07:01:51
  host      : vmnuvocinpoc.internal.cloudapp.net
  rank      : 2 (local_rank: 2)
  exitcode  : 1 (pid: 69813)
  error_file: <N/A>
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
[3]:
  time      : 2024-03-05_07:01:51
  host      : vmnuvocinpoc.internal.cloudapp.net
  rank      : 3 (local_rank: 3)
  exitcode  : 1 (pid: 69814)
  error_file: <N/A>
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2024-03-05_07:01:51
  host      : vmnuvocinpoc.internal.cloudapp.net
  rank      : 0 (local_rank: 0)
  exitcode  : 1 (pid: 69811)
  error_file: <N/A>
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
============================================================
"""
    _code, got = report_log(text, tmp_path)
    summary = got["verdict"]["summary"]
    assert got["verdict"]["kind"] == "exception" and "rank 1 with the same code" in summary, summary
