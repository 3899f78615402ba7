"""Classes of real pasted logs found by round 32 of the real-world corpus, each tested on a variant written
here (other programs, signals, hosts, launch commands and surrounding lines than the cases' own)."""

from __future__ import annotations

from tests.helpers.report import report_lines as report
from triage.parsing.crashlog import CrashLineKind, parse_crash_line


# Intel Fortran's runtime ends the process with its own message, "forrtl: severe (174): SIGSEGV, segmentation fault
# occurred", and a traceback table of images and PCs. It was not read at all: after the ranks' own progress lines the
# report was "no problem found" (sccn/amica#40's shape; other signals, programs and wordings here)
def test_intel_fortran_runtime_messages_are_the_process_death_they_name() -> None:
    for line, signal in (("forrtl: severe (174): SIGSEGV, segmentation fault occurred", "SIGSEGV"),
                         ("forrtl: error (75): floating point exception", "SIGFPE"),
                         ("forrtl: error (65): floating invalid", "SIGFPE"),
                         ("forrtl: severe (168): Program Exception - illegal instruction", "SIGILL"),
                         ("forrtl: error (78): process killed (SIGTERM)", "SIGTERM")):
        parsed = parse_crash_line(line)
        assert parsed is not None and parsed.kind is CrashLineKind.FATAL_SIGNAL, line
        assert parsed.signal == signal, line
    killed = parse_crash_line("forrtl: error (78): process killed (SIGTERM)")
    assert killed is not None and killed.collateral      # a teardown's signal, never the first failure


def test_a_fortran_mpi_run_ended_by_forrtl_is_a_crash_not_an_all_clear() -> None:
    result = report("  Reading namelist ...",
                    "   0 : step      100  residual   1.2E-04",
                    "   1 : step      100  residual   1.3E-04",
                    "forrtl: severe (174): SIGSEGV, segmentation fault occurred",
                    "Image              PC                Routine            Line        Source",
                    "solver.x           0000000000412A0C  Unknown               Unknown  Unknown",
                    "libpthread-2.17.s  00002B0E3C11F5D0  Unknown               Unknown  Unknown")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert "SIGSEGV" in result.verdict.summary


def test_forrtl_words_in_a_sentence_or_a_warning_are_not_a_death() -> None:
    assert parse_crash_line("forrtl: warning (402): fort: (1): In call to SUB, an array temporary was created") is None
    line = parse_crash_line("the docs list forrtl: severe (174): SIGSEGV among the common errors")
    assert line is None or line.kind is not CrashLineKind.FATAL_SIGNAL


# gfortran's runtime puts the signal's number before its name: "Program received signal 11 (SIGSEGV): Segmentation
# fault." It was refused, where "Program received signal SIGFPE: ..." was read (GIS4WRF/gis4wrf#81's shape)
def test_gfortran_program_received_signal_with_its_number_is_that_signal() -> None:
    for line, signal in (("Program received signal 11 (SIGSEGV): Segmentation fault.", "SIGSEGV"),
                         ("Program received signal 7 (SIGBUS): Access to an undefined portion of a memory object.",
                          "SIGBUS"),
                         ("Program received signal 8 (SIGFPE): Floating-point exception.", "SIGFPE")):
        parsed = parse_crash_line(line)
        assert parsed is not None and parsed.kind is CrashLineKind.FATAL_SIGNAL, line
        assert parsed.signal == signal, line


def test_a_job_ended_by_gfortrans_numbered_signal_line_is_a_crash() -> None:
    result = report(" Ntasks in X            2 , ntasks in Y            2",
                    "d02 2021-03-01_06:00:00 calling inc/HALO_EM_A_inline.inc",
                    "",
                    "Program received signal 7 (SIGBUS): Access to an undefined portion of a memory object.",
                    "",
                    "Backtrace for this error:",
                    "  + /opt/wrf/main/wrf.exe() [0x1f3a2b7]")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert "SIGBUS" in result.verdict.summary


# Cray ALPS's record of an application's end under aprun, "Application N exit signals: Killed", was refused
# (geopm/geopm#460's shape; another signal here)
def test_alps_exit_signals_line_is_a_crash_by_that_signal() -> None:
    for line, signal in (("Application 5531870 exit signals: Segmentation fault", "SIGSEGV"),
                         ("Application 10036118 exit signals: Killed", "SIGKILL")):
        parsed = parse_crash_line(line)
        assert parsed is not None and parsed.kind is CrashLineKind.FATAL_SIGNAL, line
        assert parsed.signal == signal, line


# A job whose launch command in the input starts one process ("mpiexec -n 1", "mpirun -np 1") or that says so itself
# (ChainerMN's "Num process (COMM_WORLD): 1") has one process, rank 0: a failure of its one [host:pid] process is rank
# 0's. It was tied to the host only (chainer/chainercv#622's shape; another launcher, host and signal here)
def test_the_one_process_of_a_job_launched_with_one_process_is_rank_0() -> None:
    result = report("$ mpirun -np 1 python train_imagenet.py --gpu",
                    "epoch       main/loss   elapsed_time",
                    "[gpu-node03:18822] *** Process received signal ***",
                    "[gpu-node03:18822] Signal: Bus error (7)",
                    "[gpu-node03:18822] Signal code: Non-existant physical address (2)",
                    "[gpu-node03:18822] [ 0] /lib64/libpthread.so.0(+0xf5d0)[0x7f0c2a1b25d0]",
                    "[gpu-node03:18822] *** End of error message ***")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert result.verdict.culprit_ranks == (0,), result.verdict.summary


def test_a_job_of_several_processes_is_not_read_as_one() -> None:
    # four processes launched, or two processes' heads: no rank can be told from a [host:pid] head alone
    for head in ("$ mpiexec -n 4 python train.py", "Num process (COMM_WORLD): 4"):
        result = report(head,
                        "[gpu-node03:18822] *** Process received signal ***",
                        "[gpu-node03:18822] Signal: Segmentation fault (11)",
                        "[gpu-node03:18822] *** End of error message ***")
        assert result.verdict.kind.value == "crash", result.verdict.summary
        assert result.verdict.culprit_ranks != (0,), (head, result.verdict.summary)
    result = report("$ mpiexec -n 1 python train.py",
                    "[gpu-node03:18822] *** Process received signal ***",
                    "[gpu-node03:18822] Signal: Segmentation fault (11)",
                    "[gpu-node04:77120] *** Process received signal ***",
                    "[gpu-node04:77120] Signal: Segmentation fault (11)")
    assert result.verdict.culprit_ranks != (0,), result.verdict.summary
