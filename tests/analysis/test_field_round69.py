"""Classes of real pasted logs found by round 69 of the real-world corpus, each tested on a variant written here
(other programs, sizes, hosts and surrounding lines than the cases' own), with their negatives."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from tests.helpers.report import report_lines as report
from triage.analysis.analyze import analyze
from triage.errors import InputError
from triage.load.inputs import load_log_texts
from triage.model import Report
from triage.parsing.rank_words import named_rank


def kind(result: Report) -> tuple[str, str | None]:
    """The verdict's kind, and the signal its summary names (a crash's)."""
    verdict = result.verdict
    signal = next((name for name in ("SIGKILL", "SIGTERM", "SIGABRT", "SIGSEGV") if name in verdict.summary), None)
    return verdict.kind.value, signal


# Spark's task of a stage ("Task 3 in stage 1.0 failed 4 times", TaskSetManager's and DAGScheduler's index of a
# partition's task) was read as rank 3 raising the driver's SparkException; and the reason DAGScheduler gave for the
# abort, YARN's end of the executor's container as Spark's YarnAllocator tells it ("Container marked as failed: C on
# host: H. Exit status: 137. Diagnostics: Container killed on request. Exit code is 137"), was not read
# (mozilla/telemetry-airflow#330)
_DRIVER = ("Caused by: org.apache.spark.SparkException: Job aborted due to stage failure: Task 17 in stage 4.0 failed 4 "
           "times, most recent failure: Lost task 17.3 in stage 4.0 (TID 912, worker-12.example.internal, executor 8): "
           "ExecutorLostFailure (executor 8 exited caused by one of the running tasks) Reason: ")
_STACK = ("Driver stacktrace:",
          "\tat org.apache.spark.scheduler.DAGScheduler.failJobAndIndependentStages(DAGScheduler.scala:2454)")


@pytest.mark.parametrize(("reason", "signal"), [
    (("Container marked as failed: container_1690000000000_0042_01_000009 on host: worker-12.example.internal. Exit "
      "status: 137. Diagnostics: Container killed on request. Exit code is 137"), "SIGKILL"),
    # YARN blaming the node, its diagnostics timestamped (Hadoop 3), and the word "Possible causes" of Spark 3.5
    (("Container from a bad node: container_e07_1690000000000_0042_01_000009 on host: worker-12.example.internal. "
      "Exit status: 137. Possible causes: OOM. Diagnostics: [2025-03-01 10:01:02.123]Container killed on request. "
      "Exit code is 137"), "SIGKILL"),
    # YARN's memory kill in the same place (the reason of the abort)
    (("Container killed by YARN for exceeding physical memory limits. 12.3 GB of 12 GB physical memory used. "
      "Consider boosting spark.executor.memoryOverhead."), "SIGKILL"),
])
def test_the_executors_kill_behind_a_stage_abort_is_the_crash(reason: str, signal: str) -> None:
    result = report("25/03/01 10:00:58 INFO DAGScheduler: Submitting 40 missing tasks from ShuffleMapStage 4",
                    _DRIVER + reason, "Container exited with a non-zero exit code 137",
                    "Killed by external signal", *_STACK)
    assert kind(result) == ("crash", signal), result.verdict.summary
    assert "rank 17" not in result.verdict.summary and "rank 8" not in result.verdict.summary


def test_the_executors_kill_on_its_own_line_is_the_crash_on_its_host() -> None:
    result = report("25/03/01 10:01:02 ERROR YarnScheduler: Lost executor 8 on worker-12.example.internal: Container "
                    "marked as failed: container_1690000000000_0042_01_000009 on host: worker-12.example.internal. "
                    "Exit status: 137. Diagnostics: Container killed on request. Exit code is 137")
    assert kind(result) == ("crash", "SIGKILL"), result.verdict.summary
    assert "worker-12.example.internal" in result.verdict.summary


def test_a_spark_job_that_went_on_after_the_kill_did_not_end_there() -> None:
    result = report("25/03/01 10:01:02 ERROR YarnScheduler: Lost executor 8 on worker-12: Container marked as failed: "
                    "container_1690000000000_0042_01_000009 on host: worker-12. Exit status: 137. Diagnostics: "
                    "Container killed on request. Exit code is 137",
                    "25/03/01 10:03:40 INFO TaskSetManager: Finished task 17.1 in stage 4.0 (TID 930) in 9120 ms on "
                    "worker-3 (executor 2) (40/40)",
                    "25/03/01 10:03:41 INFO DAGScheduler: Job 3 finished: count at etl.py:88, took 164.2 s")
    assert kind(result)[0] != "crash", result.verdict.summary


def test_an_executor_status_of_no_signal_is_no_kill() -> None:
    # (the executor's own exit, status 1: no signal of YARN's, not read as one)
    result = report(_DRIVER + "Container marked as failed: container_1690000000000_0042_01_000009 on host: "
                    "worker-12. Exit status: 1. Diagnostics: Exception from container-launch.", *_STACK)
    assert kind(result) != ("crash", "SIGKILL"), result.verdict.summary


@pytest.mark.parametrize("line", [
    "Job aborted due to stage failure: Task 3 in stage 1.0 failed 4 times, most recent failure: ...",
    "25/03/01 10:00:59 WARN TaskSetManager: Lost task 3.3 in stage 1.0 (TID 7243, n4, executor 5): ...",
    "25/03/01 10:00:59 INFO TaskSetManager: Starting task 12.0 in stage 2.0 (TID 14) (n4, executor 5, partition 12)",
])
def test_a_spark_task_of_a_stage_names_no_rank(line: str) -> None:
    assert named_rank(line) is None


@pytest.mark.parametrize(("line", "rank"), [
    ("task 3 failed with exit code 1", 3),
    ("worker 7 failed", 7),
    ("Task 2 in the queue failed", 2),
])
def test_other_tasks_and_workers_keep_their_index(line: str, rank: int) -> None:
    assert named_rank(line) == rank


# A batch system's own line as grep prints it from the jobs' output files, behind the file's name (and its line number
# with -n): PBS's walltime kill was refused (NOAA-EMC/EVS#78)
@pytest.mark.parametrize("line", [
    "run_model_00.o8812345:=>> PBS: job killed: walltime 3605 exceeded limit 3600",
    "logs/run_model_00.o8812345:14:=>> PBS: job killed: walltime 3605 exceeded limit 3600",
    "> run_model_00.o8812345:=>> PBS: job killed: walltime 3605 exceeded limit 3600",
])
def test_a_grepped_pbs_walltime_kill_is_a_stop(line: str) -> None:
    assert kind(report(line))[0] == "stopped"


def test_a_grepped_lsf_memory_kill_is_a_kill() -> None:
    result = report("lsf.4242.out:TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.",
                    "lsf.4242.out:Exited with exit code 137.")
    assert kind(result) == ("crash", "SIGKILL"), result.verdict.summary


def test_a_word_before_the_batch_line_is_no_file_name() -> None:
    # (a sentence's word and colon, no dot or slash: not grep's file name, and the line is no record of this job)
    from triage.parsing.frameworks import parse_framework_records
    assert not any(death.outside for death in parse_framework_records(
        "note: =>> PBS: job killed: walltime 3605 exceeded limit 3600 is what the FAQ shows\n"))
    assert any(death.outside for death in parse_framework_records(
        "run.o42:=>> PBS: job killed: walltime 3605 exceeded limit 3600\n"))


# Cromwell's end of a task on Google's Pipelines API with gRPC's UNAVAILABLE, the worker VM preempted or taken away:
# a failure of unknown place (broadinstitute/cromwell#6306)
@pytest.mark.parametrize("line", [
    ("java.lang.Exception: Task align.bwa_mem:7:2 failed. The job was stopped before the command finished. PAPI error "
     "code 14. Execution failed: worker was terminated."),
    ("Task call_variants.haplotypecaller:3:1 failed. The job was stopped before the command finished. PAPI error code "
     "10. Message: 14: VM ggp-1234567890 stopped unexpectedly."),
])
def test_papi_preemption_is_a_stop_from_outside(line: str) -> None:
    assert kind(report(line))[0] == "stopped"


@pytest.mark.parametrize("line", [
    # the task's own failures: an image that could not be pulled, the command's own exit
    ("Task qc.fastqc:NA:1 failed. The job was stopped before the command finished. PAPI error code 2. Execution "
     "failed: generic::unknown: pulling image: docker pull: running [\"docker\" \"pull\" \"gcr.io/x/y\"]: exit status 1"),
    ("Task qc.fastqc:NA:1 failed. Job exit code 1. Check gs://bucket/stderr for more information. PAPI error code 9. "
     "Please check the log file for more details: gs://bucket/fastqc.log."),
])
def test_other_papi_errors_are_no_stop(line: str) -> None:
    from triage.parsing.frameworks import parse_framework_records
    assert not any(death.outside for death in parse_framework_records(line + "\n"))


# R's uncaught error as Rscript ends on it ("Error in <call> : <message>", its Calls line, "Execution halted") was
# refused (futureverse/parallelly#124)
@pytest.mark.parametrize(("lines", "said"), [
    (("Error in unserialize(node$con) : error reading from connection",
      "Calls: <Anonymous> ... doTryCatch -> recvData -> recvData.SOCKnode -> unserialize", "Execution halted"),
     "error reading from connection"),
    # the message on its own line after a long call, and R's warning between the error and its end
    (("Error in checkForRemoteErrors(lapply(cl, recvResult)) : ",
      "  3 nodes produced an error; first error: cannot allocate vector of size 2.1 Gb",
      "Calls: fit_models -> clusterApply -> staticClusterApply -> checkForRemoteErrors",
      "In addition: Warning message:",
      "In mclapply(seq_len(n), f) : all scheduled cores did not return a value",
      "Execution halted"), "3 nodes produced an error"),
    (("Error: could not find function \"makeClusterPSOCK\"", "Execution halted"), "could not find function"),
])
def test_r_error_before_its_halt_is_the_exception(lines: tuple[str, ...], said: str) -> None:
    result = report("[1] \"starting 48 workers\"", *lines)
    assert kind(result)[0] == "exception", result.verdict.summary
    assert said in result.verdict.summary


def test_an_r_error_without_the_halt_is_not_this_record() -> None:
    # (an error R caught and went on past: tryCatch printed it, the script went on to its end)
    # (R's printed "[1] " is no rank since session 56: with no rank and no error line read, the input is refused)
    with contextlib.suppress(InputError):
        result = report("Error in doTryCatch(return(expr), name, parentenv, handler) : object 'x' not found",
                        "[1] \"retrying with defaults\"", "[1] \"done\"")
        assert "R's error" not in result.verdict.summary


# Quantum ESPRESSO's errore box with the routine's name as its caller passed it, a blank first (' cdiaghg '): "Error in
# routine  cdiaghg (668):" was refused (aiidateam/aiida-quantumespresso#213)
def test_quantum_espresso_error_with_the_callers_blank_is_its_exception() -> None:
    rule = " " + "%" * 78
    result = report("     iteration #  5     ecut=    30.00 Ry     beta= 0.70", rule,
                    "     Error in routine  rdiaghg (42):", "      S matrix not positive definite", rule, "",
                    "     stopping ...")
    assert kind(result)[0] == "exception", result.verdict.summary
    assert "rdiaghg" in result.verdict.summary and "S matrix not positive definite" in result.verdict.summary


# Gaussian's end of a run in error (link 1's Lnk1e, after the failing link's message) was refused
# (liyuanhe211/Solution_for_Every_Gaussian_Error_Message#1)
@pytest.mark.parametrize(("lines", "said"), [
    ((" >>>>>>>>>> Convergence criterion not met.", " Convergence failure -- run terminated.",
      " Error termination via Lnk1e in /opt/g09/l502.exe at Tue Mar  4 10:11:12 2025."), "l502.exe"),
    ((" Optimization stopped.", "    -- Number of steps exceeded,  NStep=   100",
      " Error termination request processed by link 9999."), "link 9999"),
])
def test_gaussian_error_termination_is_its_exception(lines: tuple[str, ...], said: str) -> None:
    result = report(" Cycle   1  Pass 1  IDiag  1:", *lines)
    assert kind(result)[0] == "exception", result.verdict.summary
    assert said in result.verdict.summary


def test_gaussians_end_behind_a_viewers_line_number_is_read() -> None:
    # (a viewer's "[N] " before each line of a paste too short for textclean to take the numbers off)
    result = report("[412]  Optimization stopped.", "[413]     -- Number of steps exceeded,  NStep=   100",
                    "[414]  Error termination request processed by link 9999.")
    assert kind(result)[0] == "exception", result.verdict.summary
    assert "link 9999" in result.verdict.summary


def test_a_wrappers_quote_of_gaussians_end_is_not_at_its_line_start() -> None:
    from triage.parsing.hpc_codes import banners
    assert banners("*****Error in Gaussian log file: Error termination via Lnk1e in /opt/g03/l1.exe at Wed May 11 "
                   "20:15:04 2011.\n") == []


# A runner's end of the program it ran, the code 128+S with a sentence's full stop after it ("Program exited with code
# 134."), was refused (QuantumPackage/qp2#370)
@pytest.mark.parametrize(("line", "signal"), [
    ("Program exited with code 134.", "SIGABRT"),
    ("The solver exited with code 139.", "SIGSEGV"),
])
def test_an_exit_code_before_a_full_stop_is_read(line: str, signal: str) -> None:
    result = report(" cholesky: rank_max reached", line)
    assert kind(result) == ("crash", signal), result.verdict.summary


def test_a_decimal_after_exit_code_is_no_code() -> None:
    from triage.parsing.unread_failure import _EXITED
    assert _EXITED.search("the run finished, exit code 1.5x faster than before") is None
    assert _EXITED.search("Program exited with code 134.") is not None


# R's error, then the warnings R adds before its end ("In addition: Warning message(s):"), one of which quotes another
# runtime's failure (reticulate's Python error, a CUDA error): the warnings are R's error block's own words, and the
# warning does not take the error's place (round 69's leftover: the CUDA line after the exception was read as its
# message's CUDA error)
@pytest.mark.parametrize("warning", [
    "In (function (...)  : RuntimeError: CUDA error: out of memory",
    "1: In py_call_impl(callable, dots$args) :\n  RuntimeError: CUDA error: an illegal memory access was encountered",
])
def test_rs_warnings_after_its_error_do_not_take_its_place(warning: str) -> None:
    result = report("Fitting model 2 of 5", "Error in fit_model(df, k = 5) : design matrix is singular",
                    "Calls: main -> fit_model", "In addition: Warning message:", warning, "Execution halted")
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert "design matrix is singular" in result.verdict.summary


def test_rs_warnings_in_the_real_paste_do_not_take_its_place() -> None:
    log = Path(__file__).resolve().parents[1] / "realworld" / "cases" / "dmcable__spacexr__141" / "log.txt"
    text = log.read_text().replace(
        "Calls: run.RCTD ... %dopar% -> <Anonymous> -> clusterCall -> checkForRemoteErrors\n",
        "Calls: run.RCTD ... %dopar% -> <Anonymous> -> clusterCall -> checkForRemoteErrors\nIn addition: Warning "
        "message:\nIn (function (...)  : RuntimeError: CUDA error: out of memory\n", 1)
    result = analyze(load_log_texts([("log.txt", text)]))
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert "checkForRemoteErrors" in result.verdict.summary


# R's other own words after an uncaught error (round 74): recover()'s frame menu of an interactive session run with
# options(error = recover), and system.time()'s report of the expression the error stopped; a session whose error was
# refused, or read as an all-clear of "ranks" 1-5 (recover's numbered frames: Bioconductor/BiocParallel#34)
@pytest.mark.parametrize("end", [
    ("Enter a frame number, or 0 to exit   ", "", "1: run_all(cfg)", "2: makeCluster(0, type = \"MPI\")", "",
     "Selection: 0"),
    ("Timing stopped at: 0.51 0.08 912.4 ",),
])
def test_rs_interactive_ends_after_its_error(end: tuple[str, ...]) -> None:
    result = report("> run_all(cfg)", "Error in startCluster(n = workers, type = \"MPI\") : ",
                    "  cannot spawn 0 workers", *end)
    assert kind(result)[0] == "exception", result.verdict.summary
    assert "cannot spawn 0 workers" in result.verdict.summary


def test_timing_stopped_without_an_error_is_no_rs_error() -> None:
    # (system.time's report after an interrupt or a finished expression names no error)
    with contextlib.suppress(InputError):      # (refused: R's "[1] " is no rank, no error line is read)
        result = report("[1] \"fitting\"", "Timing stopped at: 0.51 0.08 912.4", "[1] \"next model\"")
        assert "R's error" not in result.verdict.summary


def test_rs_recover_menu_in_the_real_paste() -> None:
    log = Path(__file__).resolve().parents[1] / "realworld" / "cases" / "Bioconductor__BiocParallel__34" / "log.txt"
    result = analyze(load_log_texts([("log.txt", log.read_text())]))
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert "Choose a positive number of slaves" in result.verdict.summary
