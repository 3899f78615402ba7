"""Session 54's review leftovers (fix55b): Spark's executors lost inside the driver's own orderly stop are teardown
(F9); a JavaScript build's clean end (yarn's ``Done in 412.55s.``, webpack's ``compiled successfully``) after Node's
heap out-of-memory says the build went on past it, and a numbered native stack frame names no rank (F10)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import failure_verdict, report_lines, report_log
from triage.parsing.named_failure import named_failure
from triage.parsing.progress import is_progress, says_it_ended

# Spark's driver's stop as its own log tells it (core SparkContext, CoarseGrainedSchedulerBackend.stopExecutors):
# the lines of a real SparkPi run on Kubernetes (kubeflow/arena's docs), with the one of an executor its backend lost
# "for unknown reasons" (apache-spark-on-k8s/spark#480's line) inside the stop
_JOB_DONE = "19/05/08 08:25:32 INFO DAGScheduler: Job 0 finished: reduce at SparkPi.scala:38, took 1.094511 s\n"
_STOP_HEAD = ("19/05/08 08:25:32 INFO SparkUI: Stopped Spark web UI at http://demo1-driver-svc.default.svc:4040\n"
              "19/05/08 08:25:32 INFO KubernetesClusterSchedulerBackend: Shutting down all executors\n"
              "19/05/08 08:25:32 INFO KubernetesClusterSchedulerBackend$KubernetesDriverEndpoint: Asking each "
              "executor to shut down\n")
_LOST = ("19/05/08 08:25:32 ERROR KubernetesTaskSchedulerImpl: Lost executor 2 on 10.255.73.13: Executor lost for "
         "unknown reasons\n")
_STOP_TAIL = ("19/05/08 08:25:32 WARN ExecutorPodsWatchSnapshotSource: Kubernetes client has been closed (this is "
              "expected if the application is shutting down.)\n"
              "19/05/08 08:25:32 INFO MemoryStore: MemoryStore cleared\n"
              "19/05/08 08:25:32 INFO BlockManager: BlockManager stopped\n"
              "19/05/08 08:25:32 INFO SparkContext: Successfully stopped SparkContext\n"
              "19/05/08 08:25:32 INFO ShutdownHookManager: Shutdown hook called\n")


def test_an_executor_lost_inside_the_drivers_stop_is_teardown(tmp_path: Path) -> None:
    code, out = report_log(_JOB_DONE + _STOP_HEAD + _LOST + _STOP_TAIL, tmp_path)
    assert code == 0, out
    assert "orderly stop" in out["verdict"]["summary"] and "Lost executor 2" in out["verdict"]["summary"]


def test_a_shutdown_hooks_stop_with_the_lost_executor_is_teardown_too(tmp_path: Path) -> None:
    # (the variant: Spark 3's "Invoking stop() from shutdown hook" heads the stop, the executor lost after it)
    text = ("24/11/29 10:05:20 INFO DAGScheduler: Job 3 finished: collect at etl.py:88, took 41.230 s\n"
            "24/11/29 10:05:21 INFO SparkContext: Invoking stop() from shutdown hook\n"
            "24/11/29 10:05:22 ERROR TaskSchedulerImpl: Lost executor 2 on 10.244.1.17: Executor lost for unknown "
            "reasons.\n"
            "24/11/29 10:05:22 INFO SparkContext: Successfully stopped SparkContext\n")
    code, out = report_log(text, tmp_path)
    assert code == 0, out


def test_an_executor_lost_before_the_stop_is_still_the_failure(tmp_path: Path) -> None:
    got = failure_verdict(_LOST + _STOP_HEAD + _STOP_TAIL, tmp_path)
    assert "lost executor 2" in got["summary"] and got["kind"] == "crash"


def test_a_stop_the_input_does_not_show_ending_keeps_the_lost_executor(tmp_path: Path) -> None:
    # (no "Successfully stopped SparkContext": the driver's stop may itself have died with the executor)
    got = failure_verdict(_JOB_DONE + _STOP_HEAD + _LOST, tmp_path)
    assert "lost executor 2" in got["summary"]


def test_an_executor_killed_for_memory_inside_the_stop_is_no_teardown() -> None:
    from triage.parsing.frameworks import spark_lost_in_its_stop

    killed = ("19/05/08 08:25:32 ERROR YarnScheduler: Lost executor 2 on n4: Container killed by YARN for exceeding "
              "memory limits. 9.1 GB of 9 GB physical memory used.\n")
    text = _STOP_HEAD + killed + _STOP_TAIL
    assert not spark_lost_in_its_stop(text, len(_STOP_HEAD))
    assert spark_lost_in_its_stop(_STOP_HEAD + _LOST + _STOP_TAIL, len(_STOP_HEAD))


# Node's heap limit as website-local/mdn-local#1144 printed it (a Node 20 build), its native stack after it
_NODE_OOM = ("<--- JS stacktrace --->", "",
             "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory",
             "----- Native stack trace -----", "",
             " 1: 0xb8d11b node::OOMErrorHandler(char const*, v8::OOMDetails const&) [node]",
             (" 2: 0xf01b70 v8::Utils::ReportOOMFailure(v8::internal::Isolate*, char const*, v8::OOMDetails const&) "
              "[node]"),
             (" 3: 0x112b928 v8::internal::Heap::CollectGarbage(v8::internal::AllocationSpace, "
              "v8::internal::GarbageCollectionReason, v8::GCCallbackFlags) [node]"))


@pytest.mark.parametrize("end", [
    ("Compiled successfully.", "\u2728  Done in 412.55s."),                # create-react-app's, then yarn's footer
    ("webpack 5.88.2 compiled successfully in 81234 ms",),                  # webpack 5's
    ("Done in 98.20s. Peak memory usage 310.21MB.",),                       # yarn's with --verbose's peak memory
])
def test_a_builds_clean_end_after_nodes_heap_limit_is_a_retry_that_went_on(end: tuple[str, ...]) -> None:
    result = report_lines(*_NODE_OOM, 'error Command failed with signal "SIGABRT".',
                          "Retrying with NODE_OPTIONS=--max-old-space-size=8192",
                          "$ NODE_OPTIONS=--max-old-space-size=8192 yarn build", *end)
    assert result.verdict.kind.value == "no_problem_found", result.verdict.summary
    assert "Reached heap limit" in result.verdict.summary and not result.ranks


def test_nodes_heap_limit_with_no_clean_end_after_it_stays_the_failure() -> None:
    result = report_lines(*_NODE_OOM, 'error Command failed with signal "SIGABRT".',
                          "info Visit https://yarnpkg.com/en/docs/cli/run for documentation about this command.")
    assert result.verdict.kind.value == "exception" and not result.ranks


def test_build_tools_clean_ends_are_ends_and_their_failures_are_not() -> None:
    assert says_it_ended("\u2728  Done in 412.55s.") and says_it_ended("Compiled successfully!")
    assert is_progress("webpack 5.88.2 compiled successfully in 1234 ms")
    assert not is_progress("webpack 5.88.2 compiled with 1 error in 1234 ms")
    assert not is_progress("Failed to compile.") and not says_it_ended("Done in a moment, retrying")


def test_a_numbered_native_frame_names_no_rank() -> None:
    assert named_failure(" 1: 0xb09c10 node::Abort() [node]") is None
    assert named_failure("3: 00007FF655E1542D node::Abort+45") is None


# slurmstepd's memory kill as openbabel/openbabel#2658 printed it (one task: srun's record names the task it killed)
_MEMORY_KILL = ("slurmstepd-falkor7: error: Step 1141810.0 exceeded memory limit (52917772 > 20971520), being killed",
                "srun: Exceeded job memory limit",
                "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.")


def test_the_one_task_srun_records_killed_after_a_memory_kill_is_its_rank() -> None:
    result = report_lines(*_MEMORY_KILL, "srun: error: falkor7: task 0: Killed")
    assert result.verdict.culprit_ranks == (0,) and "exceeding its memory limit" in result.verdict.summary


@pytest.mark.parametrize("records", [
    ("srun: error: node02: task 1: Killed", "srun: error: node01: task 0: Killed"),     # rev54's slurm_mem3
    ("srun: error: falkor7: tasks 0-3: Killed",),
])
def test_several_tasks_srun_records_killed_after_a_memory_kill_leave_the_kill_of_no_rank(
        records: tuple[str, ...]) -> None:
    result = report_lines(*_MEMORY_KILL, *records)
    verdict = result.verdict
    assert verdict.kind.value == "crash" and not verdict.culprit_ranks, verdict.summary
    assert "exceeding its memory limit" in verdict.summary and "dmesg" not in verdict.summary


def test_several_tasks_killed_after_the_cgroups_oom_kill_event_are_its_own() -> None:
    result = report_lines("slurmstepd: error: Detected 1 oom_kill event in StepId=551.0. Some of the step tasks have "
                          "been OOM Killed.", "srun: error: node02: task 1: Killed",
                          "srun: error: node01: task 0: Killed")
    assert not result.verdict.culprit_ranks and "oom_kill event" in result.verdict.summary
    # (srun's "Out Of Memory" names the task the OOM handler killed: that one, the others after it)
    named = report_lines("slurmstepd: error: Detected 1 oom_kill event in StepId=551.0. Some of the step tasks have "
                         "been OOM Killed.", "srun: error: node02: task 1: Out Of Memory",
                         "srun: error: node01: task 0: Killed")
    assert named.verdict.culprit_ranks == (1,)


# a HIP program's crash under srun on ROCm, its runtime's libraries in the handler's frames, no GPU fault's words
_ROCM_CRASH = ("+ srun --ntasks=2 --gpus-per-task=1 ./build/lbm_hip -i case.yaml", "step 100 mass 1.000000",
               "[gpu-n3:41211] *** Process received signal ***",
               "[gpu-n3:41211] Signal: Segmentation fault (11)",
               "[gpu-n3:41211] [ 0] /lib64/libc.so.6(+0x3e6f0)[0x7f3a2c23e6f0]",
               "[gpu-n3:41211] [ 1] /opt/rocm-6.0.2/lib/libamdhip64.so.6(+0x2a1b3c)[0x7f3a2d6a1b3c]",
               "[gpu-n3:41211] *** End of error message ***",
               "srun: error: gpu-n3: task 0: Segmentation fault (core dumped)")


def test_a_crash_whose_only_gpu_words_are_rocms_gets_rocms_advice() -> None:
    steps = " ".join(report_lines(*_ROCM_CRASH).next_steps)
    assert "AMD_SERIALIZE_KERNEL=3" in steps and "CUDA_LAUNCH_BLOCKING=1 (or under" not in steps


def test_real_rocm_library_line_with_a_segfault_gets_rocms_advice() -> None:
    # (rocm-arch/tensorflow-rocm#21's line of TensorFlow opening HIP's runtime, then a process's segfault)
    steps = " ".join(report_lines(
        "2021-03-18 17:08:24.639375: I tensorflow/stream_executor/platform/default/dso_loader.cc:49] Successfully "
        "opened dynamic library libamdhip64.so", "[1]    2964311 segmentation fault (core dumped)  python test.py").next_steps)
    assert "AMD_SERIALIZE_KERNEL=3" in steps


def test_cudas_own_words_beside_a_rocm_path_keep_cudas_advice() -> None:
    steps = " ".join(report_lines(*_ROCM_CRASH[:-1], "RuntimeError: CUDA error: an illegal memory access was "
                                                     "encountered", _ROCM_CRASH[-1]).next_steps)
    assert "AMD_SERIALIZE_KERNEL" not in steps


def test_rocms_fault_line_after_sruns_record_of_the_signal_is_what_it_ended() -> None:
    fault = ("Memory access fault by GPU node-2 (Agent handle: 0x55d1c2b0a3f0) on address 0x7f12340000. Reason: Page "
             "not present or supervisor privilege.")
    result = report_lines("step 100 mass 1.000000", "srun: error: gpu-n3: task 0: Segmentation fault (core dumped)",
                          fault, "srun: Terminating StepId=88121.0")
    assert result.verdict.culprit_ranks == (0,) and "Memory access fault by GPU node-2" in result.verdict.summary
    assert "AMD_SERIALIZE_KERNEL=3" in " ".join(result.next_steps)


def test_a_spark_jobs_failure_of_no_executor_says_executor_not_rank_and_no_flight_recorder() -> None:
    # (the corpus's apache-spark-on-k8s/spark#480 line: Spark on Kubernetes, no word of PyTorch)
    result = report_lines("ERROR [2017-09-06T02:48:45.917Z] org.apache.spark.scheduler.cluster.kubernetes."
                          "KubernetesTaskSchedulerImpl: Lost executor 2 on 10.255.73.13: Executor lost for unknown "
                          "reasons")
    summary = result.verdict.summary
    assert "executor or container unknown" in summary and "rank unknown" not in summary, summary
    assert not any("Flight Recorder" in step or "torchrun" in step for step in result.next_steps)


def test_stack_words_name_spark_after_the_ml_frameworks() -> None:
    from triage.parsing.stack_words import stack_of

    assert stack_of("24/11/29 10:05:11 ERROR TaskSchedulerImpl: Lost executor 3 on 10.0.0.7: x") == "spark"
    assert stack_of("Container killed by YARN for exceeding memory limits. 7.2 GB of 4.2 GB virtual memory used") \
        == "spark"
    assert stack_of("import torch\nERROR TaskSchedulerImpl: Lost executor 3 on h: x") == "torch"
