"""Launchers' and frameworks' own failure lines, read from their sources' formats (vLLM's Ray executor and engine
client, SGLang's launcher, Ray's memory monitor and worker records, Ray Train's worker errors, Lightning's deadlock
detector, Horovod's and vLLM's words for a failure elsewhere), each tested on a variant written here."""

from __future__ import annotations

from tests.helpers.report import report_lines as report
from triage.model import Report
from triage.parsing.crashlog import CrashLineKind, parse_crash_line
from triage.parsing.frameworks import parse_framework_records
from triage.parsing.launchers import parse_rank_deaths


def verdict(result: Report) -> tuple[str, list[int]]:
    return result.verdict.kind.value, sorted(result.verdict.culprit_ranks)


# vLLM's Ray executor (v1) names the ranks whose run ended: "RayWorkerProc rank=[N] died unexpectedly"
def test_vllms_ray_executor_names_the_dead_workers_ranks() -> None:
    result = report("INFO 07-02 10:00:00 [ray_executor_v2.py:190] starting 8 workers",
                    "ERROR 07-02 10:41:07 [ray_executor_v2.py:470] RayWorkerProc rank=[5] died unexpectedly, "
                    "shutting down executor.",
                    "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace "
                    "(above) for the root cause.")
    assert verdict(result) == ("crash", [5]), result.verdict.summary
    deaths = parse_rank_deaths("RayWorkerProc rank=[1, 6] died unexpectedly, shutting down executor.\n")
    assert [d.rank for d in deaths] == [1, 6]


# vLLM's engine client: an engine core process died (no rank of the model's group): a crash of no known rank, and
# the EngineDeadError the caller then raises is its consequence
def test_vllms_engine_core_death_is_a_crash_and_engine_dead_error_its_echo() -> None:
    result = report("ERROR 09-14 02:10:55 [core_client.py:580] Engine core proc EngineCore_DP2 died unexpectedly, "
                    "shutting down client.",
                    "Traceback (most recent call last):",
                    '  File "bench.py", line 12, in <module>',
                    "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace "
                    "(above) for the root cause.")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert "EngineCore_DP2" in result.verdict.summary
    line = parse_crash_line("RuntimeError: Engine core initialization failed. See root cause above. Failed core "
                            "proc(s): {'EngineCore_DP0': 1}")
    assert line is not None and line.collateral


# SGLang's launcher: "Rank N scheduler is dead" and, on the line after, the process's exit code (a negative one
# is the signal)
def test_sglangs_dead_scheduler_is_that_ranks_death() -> None:
    result = report("[2026-05-01 08:00:01 TP0] Load weight begin. avail mem=70.11 GB",
                    "[2026-05-01 08:00:40] Rank 3 scheduler is dead. Please check if there are relevant logs.",
                    "[2026-05-01 08:00:40] Exit code: -11",
                    "EOFError")
    assert verdict(result) == ("crash", [3]), result.verdict.summary
    assert "SIGSEGV" in result.verdict.summary
    [death] = parse_rank_deaths("Rank 1 scheduler is dead. Please check if there are relevant logs.\n"
                                "Exit code: 1\n")
    assert (death.rank, death.exitcode, death.signal) == (1, 1, None)


def test_a_dead_scheduler_after_a_childs_failure_is_its_consequence() -> None:
    result = report("[2026-05-01 08:00:02 TP2] Scheduler hit an exception: Traceback (most recent call last):",
                    '  File "/opt/sglang/srt/managers/scheduler.py", line 901, in event_loop',
                    "    batch = self.get_next_batch_to_run()",
                    "AssertionError: req_to_token_pool is full",
                    "[2026-05-01 08:00:03] Received sigquit from a child process. It usually means the child failed.",
                    "[2026-05-01 08:00:03] Rank 0 scheduler is dead. Please check if there are relevant logs.",
                    "[2026-05-01 08:00:03] Exit code: -9")
    assert verdict(result) == ("exception", [2]), result.verdict.summary


# Ray's memory monitor: the driver's OutOfMemoryError is host memory (not a GPU's), and its record names the
# process and node it killed; a worker tag with that pid and a rank prefix ties it to the rank
def test_rays_memory_monitor_kill_is_a_sigkill_of_the_rank_whose_pid_it_names() -> None:
    result = report("(RayTrainWorker pid=7710, ip=10.8.0.3) [rank0]: epoch 1 step 40",
                    "(RayTrainWorker pid=7711, ip=10.8.0.4) [rank1]: epoch 1 step 40",
                    "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.",
                    "Memory on the node (IP: 10.8.0.4, ID: 0af3) where the lease (name=RayTrainWorker.train, "
                    "pid=7711, memory used=90.02GB) was running was 120.4GB / 125.9GB (0.956), which exceeds the "
                    "memory usage threshold of 0.95. Ray killed this worker (ID: 99ab) because it was the most "
                    "recently scheduled task; to see more information, use `ray logs raylet.out -ip 10.8.0.4`.")
    assert verdict(result) == ("crash", [1]), result.verdict.summary
    assert "SIGKILL" in result.verdict.summary
    line = parse_crash_line("ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.")
    assert line is not None and line.kind is CrashLineKind.FATAL_SIGNAL and line.signal == "SIGKILL"


def test_rays_memory_record_without_a_rank_names_the_process_and_node() -> None:
    [death] = [d for d in parse_framework_records(
        "Memory on the node (IP: 172.16.2.9, ID: 5e5e) where the task (task ID: 11aa, name=f, pid=4242, memory "
        "used=3.1GB) was running was 60.1GB / 62.0GB (0.969), which exceeds the memory usage threshold of 0.95. "
        "Ray killed this worker (ID: 22bb) because it was the most recently scheduled task.\n") if d.pid]
    assert (death.pid, death.host, death.signal) == (4242, "172.16.2.9", "SIGKILL")


# Ray's records of a dead worker name a pid and a node; the worker's own tagged lines say its rank
def test_rays_dead_worker_record_is_the_rank_its_pid_names() -> None:
    result = report("(CriticActor pid=5120, ip=10.1.1.8) [rank3]: critic step 7",
                    "(CriticActor pid=5121, ip=10.1.1.8) [rank4]: critic step 7",
                    "(raylet) A worker died or was killed while executing a task by an unexpected system error. To "
                    "troubleshoot the problem, check the logs for the dead worker. RayTask ID: 0f0f Worker ID: 1e1e "
                    "Node ID: 2d2d Worker IP address: 10.1.1.8 Worker port: 10100 Worker PID: 5121 Worker exit type: "
                    "SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code 2.")
    assert verdict(result) == ("crash", [4]), result.verdict.summary


def test_a_ray_task_error_is_the_rank_of_the_worker_it_names() -> None:
    result = report("(RayTrainWorker pid=880, ip=10.2.2.2) [rank6]: step 3",
                    "(RayTrainWorker pid=881, ip=10.2.2.2) [rank7]: step 3",
                    "ray.exceptions.RayTaskError(ValueError): ray::_RayTrainWorker__execute.get_next() (pid=880, "
                    "ip=10.2.2.2, actor_id=abcd)",
                    '  File "/job/train.py", line 71, in loop',
                    "    raise ValueError(f'empty shard {i}')",
                    "ValueError: empty shard 12")
    assert verdict(result) == ("exception", [6]), result.verdict.summary


# Ray Train's worker errors: "[Rank N]:" (or "[Rank N, M]:") heads each group of ranks that raised the same error
def test_ray_trains_worker_errors_name_the_ranks_that_raised() -> None:
    result = report("ray.train.base_trainer.TrainingFailedError: Training failed due to worker errors:",
                    "[Rank 1, 2]:",
                    "Traceback (most recent call last):",
                    '  File "/srv/job.py", line 30, in train_fn',
                    "    x = batch['pixels']",
                    "KeyError: 'pixels'")
    assert verdict(result) == ("exception", [1, 2]), result.verdict.summary
    assert "KeyError" in result.verdict.summary


# Lightning's deadlock detector: a rank raised while the others wait; its traceback is in the message
def test_lightnings_deadlock_detector_names_the_rank_that_raised() -> None:
    result = report("[rank: 0] Seed set to 7",
                    "lightning.fabric.utilities.exceptions.DeadlockDetectedException: DeadLock detected from rank: 3 ",
                    " Traceback (most recent call last):",
                    '  File "fit.py", line 12, in validation_step',
                    "    assert y.shape == z.shape",
                    "AssertionError")
    assert verdict(result) == ("exception", [3]), result.verdict.summary


# Horovod's "has been shut down" is every other rank's echo of a rank's exception
def test_horovods_shutdown_is_collateral() -> None:
    result = report("[3]<stderr>:Traceback (most recent call last):",
                    '[3]<stderr>:  File "hvd_train.py", line 20, in <module>',
                    "[3]<stderr>:ZeroDivisionError: division by zero",
                    "[1]<stderr>:horovod.common.exceptions.HorovodInternalError: Horovod has been shut down. This was "
                    "caused by an exception on one of the ranks or an attempt to allreduce, allgather or broadcast a "
                    "tensor after one of the ranks finished execution.")
    assert verdict(result) == ("exception", [3]), result.verdict.summary


# Open MPI's runtime lost a node's daemon: that node (or the network to it) failed; it was an all-clear before
def test_open_mpi_losing_a_remote_daemon_names_that_node() -> None:
    for runtime, name in (("ORTE", "[[5120,0],3]"), ("PRTE", "[prterun-login1-4410@0,3]")):
        result = report("[1,5]<stdout>:iteration 812",
                        "--------------------------------------------------------------------------",
                        f"{runtime} has lost communication with a remote daemon.",
                        "",
                        f"  HNP daemon   : {name.replace('3]', '0]')} on node login1",
                        f"  Remote daemon: {name} on node cn-117",
                        "",
                        "This is usually due to either a failure of the TCP network",
                        "connection to the node, or possibly an internal failure of",
                        "the daemon itself.")
        assert result.verdict.kind.value != "no_problem_found", result.verdict.summary
        assert "cn-117" in result.verdict.summary, result.verdict.summary


def test_mpirun_without_a_record_of_the_process_is_a_failure_of_no_known_rank() -> None:
    result = report("[1,0]<stdout>:loss 0.41",
                    "mpirun noticed that the job aborted, but has no info as to the process",
                    "that caused that situation.")
    assert result.verdict.kind.value != "no_problem_found", result.verdict.summary
    assert not result.verdict.culprit_ranks


# Lightning's "[rank: N] Received SIGTERM: 15": alone, a stop whose sender the input does not name (it was an
# all-clear); after a rank's failure, that failure stays the verdict
def test_lightnings_sigterm_alone_is_a_stop_and_after_a_failure_its_teardown() -> None:
    alone = report("Epoch 7:  63%|######3   | 630/1000", "[rank: 0] Received SIGTERM: 15",
                   "[rank: 1] Received SIGTERM: 15")
    assert alone.verdict.kind.value == "stopped", alone.verdict.summary
    after = report("[rank: 2] Traceback (most recent call last):",
                   '[rank: 2]   File "module.py", line 90, in on_validation_epoch_end',
                   "[rank: 2]     self.log('acc', acc / n)",
                   "[rank: 2] ZeroDivisionError: division by zero",
                   "[rank: 0] Received SIGTERM: 15")
    assert verdict(after) == ("exception", [2]), after.verdict.summary


# Ray's GCS, of an actor whose node died: unexpectedly, a crash on that node (the actor's rank where its pid is
# tied to one); expectedly or preempted, a stop from outside the job
def test_rays_node_death_is_a_crash_there_or_a_stop_from_outside() -> None:
    head = ("(RayTrainWorker pid=6401, ip=10.9.0.12) [rank5]: step 2200",
            "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.",
            "\tclass_name: RayTrainWorker",
            "\tactor_id: 5a5a",
            "\tpid: 6401",
            "\tnamespace: n1",
            "\tip: 10.9.0.12",
            "The actor died because its node has died. Node Id: 7c7c")
    crashed = report(*head, "\tthe actor's node was terminated unexpectedly: health check failed due to missing too "
                            "many heartbeats")
    assert verdict(crashed) == ("crash", [5]), crashed.verdict.summary
    stopped = report(*head, "\tthe actor's node was preempted: spot instance reclaimed")
    assert stopped.verdict.kind.value == "stopped", stopped.verdict.summary
    assert "10.9.0.12" in stopped.verdict.summary


def test_ray_marking_a_node_dead_names_that_node() -> None:
    result = report("(TaskRunner pid=77) epoch 0",
                    "2026-04-04 11:00:00,001 WARNING worker.py:2011 -- The node with node id: 3b3b and address: "
                    "192.168.5.21 and node name: 192.168.5.21 has been marked dead because the detector has missed "
                    "too many heartbeats from it. This can happen when a\t(1) raylet crashes unexpectedly (OOM, "
                    "preempted node, etc.)")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert "192.168.5.21" in result.verdict.summary


# srun's own words: a node that failed under the step (it was an all-clear), a step it could not create (refused)
def test_sruns_node_failure_and_a_step_it_could_not_create() -> None:
    node = report("3: iter 1200 loss 2.2", "srun: error: Node failure on cn-0412",
                  "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.")
    assert node.verdict.kind.value == "stopped", node.verdict.summary
    assert "cn-0412" in node.verdict.summary
    step = report("srun: error: Unable to create step for job 40411: Requested node configuration is not available")
    assert step.verdict.kind.value not in ("no_problem_found",), step.verdict.summary
    assert "Requested node configuration" in step.verdict.summary
