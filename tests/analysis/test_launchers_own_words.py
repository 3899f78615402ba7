"""Launchers', schedulers' and frameworks' own failure lines, read from their sources (session 43), each tested on
variants written here (other jobs, hosts, limits), with a negative beside each class."""

from __future__ import annotations

import pytest

from tests.helpers.report import report_lines as report

_WORK = ("[rank0]: step 40 loss 3.10", "[rank1]: step 40 loss 3.12", "[rank0]: step 50 loss 3.02")


# (1) a batch system's time limit in its own words is a stop from outside, never an all-clear: PBS's MOM ("=>> PBS: job
# killed: walltime N exceeded limit M") and Grid Engine's execd ("job N.T exceeded hard wallclock time - initiate
# terminate method")
@pytest.mark.parametrize("line", [
    "=>> PBS: job killed: walltime 86430 exceeded limit 86400",
    "PBS: job killed: walltime 3605 exceeded limit 3600",
    "job 88123.4 exceeded hard wallclock time - initiate terminate method",
    "06/12/2025 10:11:12|  main|gpu-7|W|job 88123.1 exceeded hard wallclock time - initiate terminate method",
])
def test_a_batch_systems_time_limit_is_a_stop_from_outside(line: str) -> None:
    result = report(*_WORK, line)
    assert result.verdict.kind.value == "stopped", result.verdict.summary
    assert "its time limit was reached" in result.verdict.summary, result.verdict.summary


# (2) a limit on what the job used is its kill: PBS's cput/ncpus, Grid Engine's hard limit ("- sending SIGKILL"), out
# of memory where the limit is memory
@pytest.mark.parametrize(("line", "memory"), [
    ("=>> PBS: job killed: cput 7201 exceeded limit 7200", False),
    (('job 4417 exceeds job hard limit "h_vmem" of queue "long.q@cn-03" (17179869184.00000 > '
     'limit:17179869184.00000) - sending SIGKILL'), True),
    (('job 4417 exceeds job hard limit "h_cpu" of queue "all.q@cn-11" (3600.10000 > limit:3600.00000) - sending '
     'SIGKILL'), False),
])
def test_a_batch_systems_kill_for_what_the_job_used(line: str, memory: bool) -> None:
    result = report(*_WORK, line)
    summary = result.verdict.summary
    assert result.verdict.kind.value == "crash" and "SIGKILL" in summary, summary
    assert ("out of memory" in summary) == memory, summary


# (3) HTCondor's job event log: the job's end with a signal or a non-zero return value, a hold over its memory limit
@pytest.mark.parametrize(("lines", "words"), [
    (("005 (771.002.000) 01/02 03:04:05 Job terminated.", "\t(0) Abnormal termination (signal 11)",
      "\t(0) No core file"), "SIGSEGV"),
    (("005 (771.000.000) 2025-01-02 03:04:05 Job terminated.", "\t(1) Normal termination (return value 2)"),
     "exit code 2"),
    (("012 (771.000.000) 2025-01-02 03:04:05 Job was held.",
      "\tJob has gone over memory limit of 4096 megabytes. Peak usage: 4400 megabytes.", "\tCode 34 Subcode 0"),
     "out of memory"),
])
def test_htcondors_job_event_is_the_jobs_end(lines: tuple[str, ...], words: str) -> None:
    result = report("001 (771.000.000) 2025-01-02 03:00:00 Job executing on host: <10.1.2.3:9618>", *lines)
    assert result.verdict.kind.value in ("crash", "exception"), result.verdict.summary
    assert words in result.verdict.summary, result.verdict.summary


def test_htcondors_good_end_and_a_log_that_went_on_are_no_failure() -> None:
    # a job that returned 0; one job's end with a code in a log whose work went on (the next job's progress)
    ended_well = report(*_WORK, "005 (771.000.000) 2025-01-02 03:04:05 Job terminated.",
                        "\t(1) Normal termination (return value 0)")
    assert ended_well.verdict.kind.value == "no_problem_found", ended_well.verdict.summary
    went_on = report("005 (771.000.000) 2025-01-02 03:04:05 Job terminated.",
                     "\t(1) Normal termination (return value 1)", *_WORK, "[rank0]: step 60 loss 2.95",
                     "[rank0]: Training finished")
    assert "HTCondor" not in went_on.verdict.summary, went_on.verdict.summary


@pytest.mark.parametrize("line", [
    "Our cluster prints `PBS: job killed: walltime 100 exceeded limit 90` when a job overruns.",
    "see the docs: SGE logs 'job 5120.1 exceeded hard wallclock time - initiate terminate method' on overrun",
    "TERM_RUNLIMIT: job killed after reaching LSF run time limit. is what LSF says",
])
def test_the_words_quoted_in_a_sentence_are_no_stop(line: str) -> None:
    result = report(*_WORK, "[rank0]: " + line, "[rank0]: step 60 loss 2.95", "[rank0]: Training finished")
    assert result.verdict.kind.value != "stopped", result.verdict.summary


# (4) srun's own list of the tasks it terminated, with no slurmstepd line, no failed task and no node failure beside
# it: srun was told to end the step (scancel of the step, a signal to srun) and sent its tasks SIGTERM
@pytest.mark.parametrize("lines", [
    ("srun: error: gpu-n12: task 3: Terminated",),
    ("srun: error: gpu-n12: tasks 0-3: Terminated", "srun: error: gpu-n13: tasks 4-7: Terminated",
     "srun: Force Terminated StepId=991.0"),
    ("srun: Job step aborted: Waiting up to 32 seconds for job step to finish.", "srun: error: task 1: Terminated"),
])
def test_sruns_terminated_list_alone_is_a_stop_from_outside(lines: tuple[str, ...]) -> None:
    result = report(*_WORK, *lines)
    assert result.verdict.kind.value == "stopped", result.verdict.summary
    assert result.verdict.culprit_ranks == (), result.verdict


def test_a_failure_before_sruns_terminated_list_is_the_culprit() -> None:
    # the rank's own exception before it wins; a task srun saw fail ("Exited with exit code 1") is read as before
    raised = report(*_WORK, "[rank1]: Traceback (most recent call last):", '[rank1]:   File "train.py", line 9',
                    "[rank1]: ValueError: bad shard 7", "srun: error: gpu-n12: task 0: Terminated")
    assert raised.verdict.kind.value == "exception" and raised.verdict.culprit_ranks == (1,), raised.verdict.summary
    exited = report(*_WORK, "srun: error: gpu-n13: task 1: Exited with exit code 2",
                    "srun: error: gpu-n12: task 0: Terminated")
    assert exited.verdict.kind.value == "exception" and "task 1" in exited.verdict.summary, exited.verdict.summary


def test_sruns_terminated_list_the_job_went_on_after_is_no_stop() -> None:
    result = report("srun: error: gpu-n12: task 3: Terminated", *_WORK, "[rank0]: step 60 loss 2.95",
                    "[rank0]: Training finished")
    assert result.verdict.kind.value != "stopped", result.verdict.summary


# (5) a Windows crash status is said as what it was (the status and its name), not a signal nobody sent; the signal of
# the same fault stays beside it
@pytest.mark.parametrize(("lines", "status", "name", "signal"), [
    (("Process finished with exit code -1073741819 (0xC0000005)",), "0xC0000005", "STATUS_ACCESS_VIOLATION",
     "SIGSEGV"),
    (("[launcher] rank 3 exited with exit code 3221226505",), "0xC0000409", "STATUS_STACK_BUFFER_OVERRUN", "SIGABRT"),
    (("torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with exit code 3221225725",),
     "0xC00000FD", "STATUS_STACK_OVERFLOW", "SIGSEGV"),
])
def test_a_windows_crash_status_is_told_as_itself(lines: tuple[str, ...], status: str, name: str,
                                                  signal: str) -> None:
    summary = report(*lines).verdict.summary
    assert f"crashed with Windows status {status} ({name}" in summary and signal in summary, summary
    assert "killed by" not in summary, summary


def test_a_linux_signal_is_still_a_kill() -> None:
    summary = report("[launcher] rank 3 exited with exit code -11").verdict.summary
    assert "rank 3 was killed by SIGSEGV" in summary and "Windows" not in summary, summary


# (6) a CUDA failure NCCL warns of while its process set a communicator up (after that communicator's first set-up
# line, before its "Init COMPLETE"), from any of NCCL's files (a transport's peer access, a proxy), is the
# communicator's set-up failing on a CUDA call; the same WARN after every communicator of its process completed is a
# CUDA error at run time
_START = ("gpu-a:2201:2201 [0] NCCL INFO ncclCommInitRank comm 0x55d0c8a0 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId "
          "1000 commId 0x8e1f22 - Init START")
_DONE = ("gpu-a:2201:2201 [0] NCCL INFO ncclCommInitRank comm 0x55d0c8a0 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId "
         "1000 commId 0x8e1f22 - Init COMPLETE")


@pytest.mark.parametrize("warn", [
    ("gpu-a:2201:2290 [0] transport/p2p.cc:275 NCCL WARN Cuda failure 'peer access is not supported between these "
    "two devices'"),
    ("gpu-a:2201:2291 [0] proxy.cc:1492 NCCL WARN Cuda failure 217 'peer access is not supported between these two "
    "devices'"),
])
def test_a_cuda_failure_during_a_communicators_set_up_is_its_set_up_failing(warn: str) -> None:
    result = report(_START, warn, "gpu-a:2201:2290 [0] NCCL INFO transport/p2p.cc:276 -> 1")
    assert "set-up failed on a CUDA call" in result.verdict.summary, result.verdict.summary


def test_the_same_cuda_failure_after_init_complete_is_a_cuda_error() -> None:
    result = report(_START, _DONE, "gpu-a:2201:2290 [0] enqueue.cc:1102 NCCL WARN Cuda failure 'an illegal memory "
                    "access was encountered'")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert "set-up" not in result.verdict.summary, result.verdict.summary


# (7) a library's worker numbered in its own process, whatever the case of the verb that starts it, names no rank
@pytest.mark.parametrize("line", ["Starting worker 3: RuntimeError: could not bind port", "STARTING WORKER 2: RuntimeError: no port",
                                  "Start worker 1: RuntimeError: timed out"])
def test_a_started_worker_names_no_rank(line: str) -> None:
    result = report(line)
    assert result.verdict.culprit_ranks == (), result.verdict.summary


def test_a_workers_own_failure_still_names_it() -> None:
    result = report("worker 3 failed: RuntimeError: could not bind port")
    assert result.verdict.culprit_ranks == (3,), result.verdict.summary


# (8) Intel MPI's Hydra box with the rank and its exit status ("RANK 4 PID 881 RUNNING AT n2" / "EXIT STATUS: 3")
def test_hydras_box_with_an_exit_status_names_the_rank() -> None:
    result = report("[rank0]: step 5", "=" * 83, "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES",
                    "=   RANK 4 PID 881 RUNNING AT cpu-n2", "=   EXIT STATUS: 3", "=" * 83)
    assert result.verdict.culprit_ranks == (4,) and "code 3" in result.verdict.summary, result.verdict.summary


# (9) the end of LSF's job report ("Exited with exit code N." / "Exited with signal termination: S." before its
# "Resource usage summary:") is the job's end, of no rank; LSF's TERM_OWNER/TERM_ADMIN/TERM_PREEMPT a stop from outside
@pytest.mark.parametrize(("end", "kind", "words"), [
    ("Exited with exit code 2.", "exception", "code 2"),
    ("Exited with signal termination: Aborted.", "crash", "SIGABRT"),
])
def test_lsfs_report_end_is_the_jobs_end(end: str, kind: str, words: str) -> None:
    result = report(*_WORK, "-" * 60, "", end, "", "Resource usage summary:", "",
                    "    CPU time :                                   12.00 sec.")
    assert result.verdict.kind.value == kind and words in result.verdict.summary, result.verdict.summary


@pytest.mark.parametrize("line", ["TERM_OWNER: job killed by owner.", ("TERM_ADMIN: job killed by root or LSF "
                                  "administrator."), "TERM_PREEMPT: job killed after preemption."])
def test_lsfs_kill_from_outside_is_a_stop(line: str) -> None:
    result = report(*_WORK, line, "Exited with signal termination: Terminated.", "", "Resource usage summary:")
    assert result.verdict.kind.value == "stopped", result.verdict.summary


def test_lsfs_successful_report_and_a_quoted_exit_are_no_failure() -> None:
    ok = report(*_WORK, "Successfully completed.", "", "Resource usage summary:")
    assert ok.verdict.kind.value == "no_problem_found", ok.verdict.summary
    quoted = report(*_WORK, "[rank0]: the docs say 'Exited with exit code 1.' on failure", "[rank0]: Training finished")
    assert quoted.verdict.kind.value == "no_problem_found", quoted.verdict.summary


# (10) a pod kubectl lists in Error or CrashLoopBackOff is a failed container of no rank; a torchx replica's exit code
# 128+N (a container's) its signal N
@pytest.mark.parametrize("why", ["Error", "CrashLoopBackOff"])
def test_a_pod_listed_in_error_is_a_failure(why: str) -> None:
    result = report("NAME                  READY   STATUS      RESTARTS      AGE",
                    "llm-master-0          1/1     Running     0             3m",
                    f"llm-worker-3          0/1     {why}       4 (9s ago)    3m")
    assert result.verdict.kind.value == "exception" and "llm-worker-3" in result.verdict.summary, result.verdict.summary


def test_a_torchx_replicas_container_code_is_its_signal() -> None:
    result = report("torchx 2025-01-02 03:04:05 INFO     Job finished: FAILED", "  State: FAILED", "  Roles:",
                    " *trainer[2]:FAILED (exitcode: 139)", "    timestamp: 2025-01-02 03:04:05",
                    "    hostname: trainer-2")
    assert "SIGSEGV" in result.verdict.summary, result.verdict.summary


# (11) Slurm refusing the job its allocation (srun/salloc's "Unable to allocate resources: ...", sbatch's "Batch job
# submission failed: ...") is a job that never ran, no rank's failure
@pytest.mark.parametrize("line", [
    "srun: error: Unable to allocate resources: Invalid account or account/partition combination specified",
    "salloc: error: Unable to allocate resources: Requested time limit is invalid (missing or exceeds some limit)",
    "sbatch: error: Batch job submission failed: Requested node configuration is not available",
])
def test_slurms_refused_allocation_is_a_job_that_never_ran(line: str) -> None:
    result = report(line)
    summary = result.verdict.summary
    assert result.verdict.kind.value == "exception" and "never ran" in summary and "allocation" in summary, summary
    assert result.verdict.culprit_ranks == (), summary


@pytest.mark.parametrize("line", [
    # a transient refusal a wrapper retries after (the job then ran), and the words quoted in a sentence
    "srun: error: Unable to allocate resources: Socket timed out on send/recv operation",
    "sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)",
    "[rank0]: note: srun: error: Unable to allocate resources: Invalid account is what a bad -A prints",
])
def test_a_transient_or_quoted_refusal_is_not_the_jobs_end(line: str) -> None:
    result = report(line, *_WORK, "[rank0]: step 60 loss 2.95", "[rank0]: Training finished")
    assert "allocation" not in result.verdict.summary, result.verdict.summary


# (12) sacct's table: the first row that did not complete (a time limit, preemption, node failure or cancellation a
# stop from outside; OUT_OF_MEMORY, cut to "OUT_OF_ME+", a kill for memory; FAILED its exit code or signal)
_SACCT = ("JobID           JobName      State ExitCode", "------------ ---------- ---------- --------")


@pytest.mark.parametrize(("state", "code", "kind", "words"), [
    ("TIMEOUT", "0:0", "stopped", "time limit"),
    ("PREEMPTED", "0:0", "stopped", "preempted"),
    ("NODE_FAIL", "0:0", "stopped", "node failed"),
    ("OUT_OF_ME+", "0:125", "crash", "out of memory"),
    ("FAILED", "3:0", "exception", "code 3"),
    ("FAILED", "0:11", "crash", "SIGSEGV"),
])
def test_saccts_state_is_the_jobs_end(state: str, code: str, kind: str, words: str) -> None:
    result = report(*_SACCT, f"77120             train {state:>10} {code:>8}",
                    f"77120.batch       batch {state:>10} {code:>8}")
    assert result.verdict.kind.value == kind and words in result.verdict.summary, result.verdict.summary


def test_saccts_completed_job_is_no_failure() -> None:
    result = report(*_WORK, *_SACCT, "77120             train  COMPLETED      0:0",
                    "77120.batch       batch  COMPLETED      0:0")
    assert result.verdict.kind.value == "no_problem_found", result.verdict.summary


@pytest.mark.parametrize("after", [
    # a script that fell back to another partition (the step ran: its progress), a submission retried and accepted
    ("+ srun -p cpu python prep.py", "[rank0]: step 10 loss 4.20", "[rank0]: step 20 loss 3.90"),
    ("resubmitting with --qos=normal", "Submitted batch job 9912",),
])
def test_a_refused_allocation_the_job_went_on_after_is_no_never_ran(after: tuple[str, ...]) -> None:
    result = report("sbatch: error: Batch job submission failed: Invalid qos specification", *after)
    assert "never ran" not in result.verdict.summary, result.verdict.summary
    assert result.verdict.kind.value == "no_problem_found", result.verdict.summary


def test_a_ranks_own_failure_anywhere_wins_over_sruns_terminated_list() -> None:
    # the rank's exception printed after the list in file order (srun's stderr flushed first) is the failure
    after = report(*_WORK, "srun: error: gpu-n21: tasks 0,2-7: Terminated", "[rank1]: Traceback (most recent call last):",
                   '[rank1]:   File "loader.py", line 31', "[rank1]: KeyError: 'input_ids'")
    assert after.verdict.kind.value == "exception" and after.verdict.culprit_ranks == (1,), after.verdict.summary
    # a failure of no known rank before the list: the note never says no task had failed
    before = report("RuntimeError: shapes do not match", "srun: error: gpu-n21: tasks 0-7: Terminated")
    assert "no task had failed" not in before.verdict.summary, before.verdict.summary


def test_sruns_terminated_list_after_the_run_ended_well_is_no_stop() -> None:
    result = report(*_WORK, "[rank0]: Training finished, final checkpoint written",
                    "srun: error: gpu-n21: task 0: Terminated")
    assert result.verdict.kind.value != "stopped", result.verdict.summary


def test_a_pod_in_error_that_ran_again_or_beside_a_running_job_is_no_failure() -> None:
    # `kubectl get pods -w`: the same pod's later row Running, then Completed
    watched = report("NAME             READY   STATUS      RESTARTS   AGE", "ft-trainer-2     0/1     Error       0   1m",
                     "ft-trainer-2     0/1     ContainerCreating   1   1m", "ft-trainer-2     1/1     Running     1   1m",
                     "[rank0]: step 40 loss 3.10")
    assert "ft-trainer-2" not in watched.verdict.summary, watched.verdict.summary
    # another pod's old Error in the listing while the training goes on
    other = report("NAME               READY   STATUS    RESTARTS   AGE", "etl-cron-29sd1     0/1     Error     0   2d",
                   "ft-trainer-0       1/1     Running   0   5m", *_WORK, "[rank0]: step 60 loss 2.95")
    assert other.verdict.kind.value == "no_problem_found", other.verdict.summary


def test_saccts_older_job_and_a_steps_failure_before_the_cancel() -> None:
    # an older job FAILED above the current job, which is still RUNNING: no end of the job in this input
    running = report(*_SACCT, "91002             eval     FAILED      2:0", "91002.batch       batch     FAILED      2:0",
                     "91017             train    RUNNING      0:0", "91017.0          python    RUNNING      0:0",
                     *_WORK)
    assert running.verdict.kind.value == "no_problem_found", running.verdict.summary
    # a step FAILED with its own code, then the job CANCELLED: the step's failure is the finding, not a stop
    step = report(*_SACCT, "91017             train CANCELLED+     0:15", "91017.batch       batch  CANCELLED     0:15",
                  "91017.0          python     FAILED      3:0")
    assert step.verdict.kind.value == "exception" and "code 3" in step.verdict.summary, step.verdict.summary


@pytest.mark.parametrize("lines", [
    # held over memory, released, run again and ended with 0
    ("012 (5521.000.000) 2025-03-04 10:00:00 Job was held.", "\tJob has gone over memory limit of 8192 megabytes.",
     "...", "013 (5521.000.000) 2025-03-04 10:05:00 Job was released.", "...",
     "001 (5521.000.000) 2025-03-04 10:05:30 Job executing on host: <10.4.0.9:9618>", "...",
     "005 (5521.000.000) 2025-03-04 11:00:00 Job terminated.", "\t(1) Normal termination (return value 0)"),
    # a DAG node's job returned 3, its retry (another cluster id) returned 0
    ("005 (5521.000.000) 2025-03-04 10:00:00 Job terminated.", "\t(1) Normal termination (return value 3)", "...",
     "000 (5522.000.000) 2025-03-04 10:01:00 Job submitted from host: <10.4.0.1:9618>", "...",
     "005 (5522.000.000) 2025-03-04 10:30:00 Job terminated.", "\t(1) Normal termination (return value 0)"),
])
def test_htcondors_event_a_later_event_of_the_log_follows_is_no_end(lines: tuple[str, ...]) -> None:
    result = report(*_WORK, *lines)
    assert "HTCondor" not in result.verdict.summary, result.verdict.summary
    assert result.verdict.kind.value == "no_problem_found", result.verdict.summary


@pytest.mark.parametrize("line", [
    # the words quoted in a sentence, as the input's last line (no progress after them)
    "[rank0]: note: if SGE says \"job 7781.2 exceeded hard wallclock time - initiate terminate method\", raise h_rt",
    "INFO: last week's run ended with '=>> PBS: job killed: walltime 3700 exceeded limit 3600'; now 2h",
    "tip: PBS: job killed: cput 10 exceeded limit 5 means the cput request was too small",
])
def test_a_batch_systems_words_quoted_last_are_no_stop(line: str) -> None:
    result = report(*_WORK, line)
    assert result.verdict.kind.value == "no_problem_found", result.verdict.summary


def test_lsfs_last_appended_report_is_the_jobs_end() -> None:
    # `bsub -o` appends: an earlier run's "Exited with exit code 2." then a later run's "Successfully completed."
    result = report(*_WORK, "-" * 60, "Subject: Job 5501: <ft> in cluster <c2> Exited", "", "Exited with exit code 2.", "",
                    "Resource usage summary:", "", *_WORK, "-" * 60, "Subject: Job 5530: <ft> in cluster <c2> Done", "",
                    "Successfully completed.", "", "Resource usage summary:", "")
    assert result.verdict.kind.value == "no_problem_found", result.verdict.summary
