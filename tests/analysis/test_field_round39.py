"""Classes of real pasted logs found by round 39 of the real-world corpus, each tested on a variant written here
(other hosts, ranks, codes, signals, scripts, times and pids than the cases' own)."""

from __future__ import annotations

from tests.helpers.report import report_lines as report
from triage.parsing.launchers import parse_rank_deaths


# Intel Fortran's runtime ends a process with its message's number: HPE PALS's "rank 384 exited with code 174" after
# "forrtl: severe (174): SIGSEGV, segmentation fault occurred" was read as an exception exit, not that rank's segfault
# (NOAA-EMC/rrfs-workflow#1467's shape; another host, rank, signal and number here)
def test_launcher_exit_code_of_a_forrtl_signal_is_that_signal() -> None:
    result = report("  --- physics init ---",
                    "forrtl: severe (168): Program Exception - illegal instruction",
                    "forrtl: severe (174): SIGSEGV, segmentation fault occurred",
                    "x3004c0s7b1n0: rank 97 exited with code 174",
                    "forrtl: error (78): process killed (SIGTERM)",
                    "Image              PC                Routine            Line        Source")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert "SIGSEGV" in result.verdict.summary, result.verdict
    assert result.verdict.culprit_ranks == (97,), result.verdict


def test_forrtl_signal_in_parentheses_gives_its_exit_code_too() -> None:
    deaths = parse_rank_deaths("forrtl: error (75): floating point exception (SIGFPE)\n"
                               "nid001122: rank 12 exited with code 75\n")
    assert [(d.rank, d.signal, d.exitcode) for d in deaths] == [(12, "SIGFPE", None)], deaths


def test_an_exit_code_no_forrtl_line_tells_stays_an_exit_code() -> None:
    deaths = parse_rank_deaths("forrtl: severe (174): SIGSEGV, segmentation fault occurred\n"
                               "nid001122: rank 5 exited with code 1\n")
    assert [(d.rank, d.signal, d.exitcode) for d in deaths] == [(5, None, 1)], deaths
    plain = parse_rank_deaths("nid001122: rank 5 exited with code 174\n")
    assert [(d.rank, d.signal, d.exitcode) for d in plain] == [(5, None, 174)], plain


# Older torchelastic's summary ("Root Cause:" / "Other Failures:", each record's msg "Process failed with exitcode 1",
# no error file) of ranks that exited with the same code in the same second named the first it lists: its msg only
# repeats the exit code, so the records cannot tell which failed first (OpenBMB/CPM-Live#352's and xzz777/SCTNet#47's
# shape; another script, time, ranks, code and pids here)
def _old_summary(code: int, second_time: str) -> list[str]:
    lines = ["torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
             "***************************************", "            finetune.py FAILED            ",
             "======================================="]
    for head, rank, pid, at in (("Root Cause:", 2, 51002, "2024-05-09_08:14:41"),
                                ("Other Failures:", 3, 51003, second_time)):
        lines += [head, f"[{rank - 2}]:", f"  time: {at}", f"  rank: {rank} (local_rank: {rank})",
                  f"  exitcode: {code} (pid: {pid})", "  error_file: <N/A>",
                  f'  msg: "Process failed with exitcode {code}"', "======================================="]
    return lines


def test_old_summary_of_same_second_exits_names_no_culprit() -> None:
    result = report(*_old_summary(2, "2024-05-09_08:14:41"))
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert not result.verdict.culprit_ranks, result.verdict
    assert "same second" in result.verdict.summary


def test_old_summary_of_exits_apart_still_names_the_first() -> None:
    result = report(*_old_summary(2, "2024-05-09_08:15:30"))
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert result.verdict.culprit_ranks == (2,), result.verdict
