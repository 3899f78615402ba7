"""Schedulers', MPI runtimes', Kubernetes', Ray's and serving frameworks' own failure lines, held as a class:
hand-written variants of each format (other hosts, ranks, ids, signals, times; not pasted logs) give a verdict
that names the rank or host the line names, the way it ended, and never "nothing recognisable" or an
all-clear. A scheduler's stop from outside (a Slurm time limit) is the first failure: the ranks' SIGTERM
after it is its consequence."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers.report import report_log
from triage.parsing.frameworks import parse_framework_records
from triage.parsing.log_owners import attribute_lines
from triage.parsing.log_prefix import split_rank_prefix
from triage.parsing.named_failure import named_failure
from triage.parsing.textclean import clean_text

HOSTS = ["gpu-node-07", "n1", "worker-3.cluster.local", "a100x8-12"]


def _report(text: str, tmp_path: Path) -> tuple[int, dict[str, Any]]:
    code, data = report_log(text, tmp_path)
    assert "verdict" in data, data
    return code, data["verdict"]


def _slurm_cancel(what: str, ident: str, host: str, why: str) -> str:
    tail = f" DUE TO {why}" if why and not why.startswith("SIGNAL") else f" DUE to {why}" if why else ""
    return f"slurmstepd: error: *** {what} {ident} ON {host} CANCELLED AT 2026-02-03T04:05:06{tail} ***"


@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize(("what", "ident"), [("JOB", "318842"), ("STEP", "318842.0"), ("STEP", "77.batch")])
@pytest.mark.parametrize("why", ["TIME LIMIT", "PREEMPTION", "NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS",
                                 "JOB REQUEUE"])
def test_a_slurm_cancellation_is_the_first_failure_on_its_host(host: str, what: str, ident: str, why: str,
                                                                tmp_path: Path) -> None:
    text = (f"[rank0]: step 1200 loss 1.92\n{_slurm_cancel(what, ident, host, why)}\n"
            "[rank1]: torch.distributed.elastic.multiprocessing.api.SignalException: Process 4411 got signal: 15\n"
            "[rank0]: torch.distributed.elastic.multiprocessing.api.SignalException: Process 4410 got signal: 15\n"
            f"srun: error: {host}: tasks 0-1: Terminated\n")
    code, verdict = _report(text, tmp_path)
    assert code == 1
    assert verdict["culprit_host"] == host, verdict
    assert verdict["culprit_ranks"] == [], verdict        # no rank failed: the job was stopped
    assert f"Slurm stopped {what} {ident}" in verdict["summary"], verdict
    if why == "TIME LIMIT":
        assert "time limit" in verdict["summary"]


def test_a_task_failure_cancellation_is_the_echo_of_the_task_that_failed(tmp_path: Path) -> None:
    text = ("srun: error: n4: task 6: Exited with exit code 1\n"
            + _slurm_cancel("STEP", "55.0", "n1", "TASK FAILURE") + "\n")
    code, verdict = _report(text, tmp_path)
    assert code == 1
    assert verdict["culprit_ranks"] == [6], verdict


@pytest.mark.parametrize("rank", [0, 3, 17])
@pytest.mark.parametrize("namespace", ["prterun-gpu-node-07-2231", "prterun-n1-9", "mpirun-a100x8-12-41"])
@pytest.mark.parametrize("code", [1, 134])
def test_prrte_names_the_first_process_that_failed(rank: int, namespace: str, code: int, tmp_path: Path) -> None:
    text = ("prterun detected that one or more processes exited with non-zero status,\n"
            "thus causing the job to be terminated. The first process to do so was:\n\n"
            f"   Process name: [{namespace}@1,{rank}]\n   Exit code:    {code}\n")
    _, verdict = _report(text, tmp_path)
    assert verdict["culprit_ranks"] == [rank], verdict


@pytest.mark.parametrize("rank", [1, 12])
@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize("name", ["[prterun-{h}-77@1,{r}]", "[[4021,1],{r}]"])
def test_an_mpi_process_over_its_memory_limit_is_that_ranks_kill(rank: int, host: str, name: str,
                                                                  tmp_path: Path) -> None:
    text = (f"A process exceeded memory limits:\n\n   Process name: {name.format(h=host, r=rank)}\n"
            f"   Node:         {host}\n")
    _, verdict = _report(text, tmp_path)
    assert verdict["culprit_ranks"] == [rank], verdict
    assert "SIGKILL" in verdict["summary"] and "memory" in verdict["summary"]


@pytest.mark.parametrize(("num", "name"), [(9, "SIGKILL"), (11, "SIGSEGV"), (6, "SIGABRT"), (7, "SIGBUS")])
@pytest.mark.parametrize("rank", [0, 5])
@pytest.mark.parametrize("host", HOSTS)
def test_intel_mpi_hydras_box_names_the_rank_its_signal_and_host(num: int, name: str, rank: int, host: str,
                                                                 tmp_path: Path) -> None:
    text = ("=" * 80 + "\n=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n"
            f"=   RANK {rank} PID {3000 + rank} RUNNING AT {host}\n=   KILLED BY SIGNAL: {num} (whatever)\n"
            + "=" * 80 + "\n")
    _, verdict = _report(text, tmp_path)
    assert verdict["culprit_ranks"] == [rank], verdict
    assert name in verdict["summary"] and host in verdict["summary"]


@pytest.mark.parametrize("host", HOSTS)
def test_hydras_terminated_badly_is_a_failure_of_no_known_rank(host: str, tmp_path: Path) -> None:
    text = (f"[proxy:0:1@{host}] HYD_pmcd_pmip_control_cmd_cb (pmip_cb.c:480): assert (!closed) failed\n"
            f"[mpiexec@{host}] HYDT_bscu_wait_for_completion (bscu_wait.c:76): one of the processes terminated "
            "badly; aborting\n")
    code, verdict = _report(text, tmp_path)
    assert code == 1 and verdict["culprit_ranks"] == [], verdict
    assert "terminated badly" in verdict["summary"]


@pytest.mark.parametrize("pod", ["train-worker-2", "pytorchjob-llama-master-0", "ray-head-x7k2p"])
@pytest.mark.parametrize("state", ["State:          Terminated", "Last State:     Terminated"])
def test_a_pod_the_kernel_oom_killed_is_named(pod: str, state: str, tmp_path: Path) -> None:
    text = (f"Name:             {pod}\nNamespace:        default\nContainers:\n  pytorch:\n    {state}\n"
            "      Reason:       OOMKilled\n      Exit Code:    137\n      Started:      Mon, 02 Feb 2026\n")
    _, verdict = _report(text, tmp_path)
    assert verdict["culprit_host"] == pod, verdict
    assert "OOMKilled" in verdict["summary"] and "SIGKILL" in verdict["summary"]


@pytest.mark.parametrize("pod", ["train-worker-2", "llama-worker-11"])
def test_a_pod_listed_oomkilled_and_a_crash_looping_container_are_failures_of_that_pod(pod: str,
                                                                                       tmp_path: Path) -> None:
    listed = f"NAME   READY   STATUS   RESTARTS   AGE\n{pod}   0/1   OOMKilled   4 (31s ago)   9m\n"
    _, verdict = _report(listed, tmp_path)
    assert verdict["culprit_host"] == pod and "OOMKilled" in verdict["summary"], verdict
    backoff = (f"  Warning  BackOff  3m (x9 over 7m)  kubelet  Back-off restarting failed container trainer in pod "
               f"{pod}_ml(8c1f)\n")
    code, verdict = _report(backoff, tmp_path)
    assert code == 1 and verdict["culprit_host"] == pod, verdict


@pytest.mark.parametrize("ip", ["10.0.0.9", "172.31.4.200"])
def test_rays_memory_monitor_kill_names_the_node(ip: str, tmp_path: Path) -> None:
    text = (f"(raylet) node_manager.cc:3040: 2 Workers (tasks / actors) killed due to memory pressure (OOM), 0 "
            f"Workers crashed due to other reasons at node (ID: 5be0aa91, IP: {ip}) over the last time period.\n")
    _, verdict = _report(text, tmp_path)
    assert verdict["culprit_host"] == ip and "SIGKILL" in verdict["summary"], verdict


@pytest.mark.parametrize(("status", "sig", "code"), [(9, "SIGKILL", None), (11, "SIGSEGV", None), (256, None, 1),
                                                     (134, "SIGABRT", None)])
@pytest.mark.parametrize("form", ["with exitcode={s}. pid={p}", "with an exit code {s}. pid={p}"])
def test_sglangs_child_exit_is_the_raw_wait_status(status: int, sig: str | None, code: int | None, form: str) -> None:
    line = "[2026-03-29 18:56:26] Child process unexpectedly failed " + form.format(s=status, p=8812)
    (death,) = parse_framework_records(line + "\n")
    # (134 is 0x86: signal 6 with the core-dump bit)
    assert (death.signal, death.exitcode, death.pid) == (sig, code, 8812)


@pytest.mark.parametrize("text", [
    "*** JOB 12 ON n1 COMPLETED ***",                                # no cancellation
    "Process name: my-process, started",                           # no PRRTE box
    "Reason:       Completed\n      Exit Code:    0",             # a pod that ended well
    "0 Workers (tasks / actors) killed due to memory pressure",     # no node, no kill
    "Child process unexpectedly failed",                           # no status
])
def test_lines_that_are_no_framework_record(text: str) -> None:
    assert parse_framework_records(text) == ()


@pytest.mark.parametrize(("head", "rank", "pid"), [
    ("(VllmWorker TP{r} pid=4757) ", "r", 4757), ("(VllmWorker rank={r} pid=91) ", "r", 91),
    ("(Worker_TP{r} pid=77) ", "r", 77), ("(Worker_PP1_TP{r} pid=77) ", None, 77),
    ("(EngineCore_DP{r} pid=12) ", None, 12), ("(VllmWorkerProcess pid=4411) ", None, 4411),
])
@pytest.mark.parametrize("r", [0, 3, 15])
def test_vllms_worker_tags_name_the_rank_where_only_tensor_parallel(head: str, rank: str | None, pid: int,
                                                                   r: int) -> None:
    prefix = split_rank_prefix(head.format(r=r) + "ERROR 09-11 17:45:52 [multiproc_executor.py:596] boom")
    assert (prefix.rank, prefix.pid) == (r if rank else None, pid)
    assert prefix.rest == "boom"


@pytest.mark.parametrize(("parts", "rank"), [("TP{r}", "r"), ("TP{r} EP{r}", "r"), ("DP1 TP{r}", None),
                                             ("PP0 TP{r}", None)])
@pytest.mark.parametrize("stamp", ["2026-03-29 18:56:25", "2025-01-02 03:04:05.678"])
@pytest.mark.parametrize("r", [0, 7])
def test_sglangs_logger_head_names_the_tp_rank_of_a_tp_only_server(parts: str, rank: str | None, stamp: str,
                                                                    r: int) -> None:
    line = f"[{stamp} {parts.format(r=r)}] Scheduler hit an exception: Traceback (most recent call last):"
    owners = attribute_lines(clean_text(line).lines)
    assert owners[0].key == (r if rank else "unknown")


@pytest.mark.parametrize("r", [1, 6])
@pytest.mark.parametrize("error", ["RuntimeError: CUDA error: an illegal memory access was encountered",
                                   "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"])
def test_a_traceback_a_logger_printed_after_its_head_is_that_ranks(r: int, error: str, tmp_path: Path) -> None:
    text = (f"[2026-03-29 18:56:25 TP{r}] Scheduler hit an exception: Traceback (most recent call last):\n"
            '  File "/srv/scheduler.py", line 10, in run_scheduler_process\n    scheduler.event_loop()\n'
            f"{error}\n\n[2026-03-29 18:56:26] Received sigquit from a child process. It usually means the child "
            "failed.\n")
    _, verdict = _report(text, tmp_path)
    assert verdict["culprit_ranks"] == [r], verdict
    assert error.split(":")[0] in verdict["summary"]


def test_the_traceback_carry_ends_at_the_exception_line() -> None:
    lines = ["(VllmWorker TP2 pid=5) ERROR x] Traceback (most recent call last):", '  File "a.py", line 1, in f',
             "ValueError: bad", "", "During handling of the above exception, another exception occurred:", "",
             "Traceback (most recent call last):", "RuntimeError: worse", "loading the next shard"]
    assert [o.key for o in attribute_lines(lines)] == [2, 2, 2, 2, 2, 2, 2, 2, "unknown"]


def test_a_head_that_only_announces_a_cut_traceback_is_no_named_failure() -> None:
    assert named_failure("[2026-03-29 TP1] Scheduler hit an exception: Traceback (most recent call last):", 1) is None


@pytest.mark.parametrize("task", [0, 5])
@pytest.mark.parametrize(("state", "rank", "signal", "words"), [
    ("TIMEOUT", None, None, "time limit"), ("PREEMPTED", None, None, "preempted"),
    ("NODE_FAIL", None, None, "node failed"), ("OUT_OF_MEMORY", "task", "SIGKILL", "out of memory"),
    ("FAILED", "task", None, "its exit code is not in this input")])
def test_submitits_uncompleted_job_says_how_slurm_ended_it(task: int, state: str, rank: str | None,
                                                          signal: str | None, words: str, tmp_path: Path) -> None:
    text = (f"submitit.core.utils.UncompletedJobError: Job 8841_{task} (task: {task}) with path "
            f"/scratch/logs/8841_{task}_0_result.pkl\nhas not produced any output (state: {state})\n"
            f"No output/error stream produced ! Check: /scratch/logs/8841_{task}_0_log.out\n")
    _, verdict = _report(text, tmp_path)
    assert verdict["culprit_ranks"] == ([task] if rank else []), verdict
    assert words in verdict["summary"] and (signal is None or signal in verdict["summary"]), verdict


@pytest.mark.parametrize("task", [0, 3, 12])
def test_submitits_failed_job_names_the_task_that_raised(task: int, tmp_path: Path) -> None:
    text = (f"submitit.core.utils.FailedJobError: Job (task={task}) failed during processing with trace:\n"
            "----------------------\nTraceback (most recent call last):\n  File \"train.py\", line 3, in main\n"
            "ValueError: shapes do not match\n----------------------\n")
    _, verdict = _report(text, tmp_path)
    assert verdict["culprit_ranks"] == [task], verdict


@pytest.mark.parametrize("line", [
    "slurmstepd: error: *** STEP 2.0 ON n1 CANCELLED AT 2026-02-03T04:05:06 ***",
    "slurmstepd: error: *** STEP 2.0 ON ... CANCELLED AT 2026-02-03T04:05:06 ***",
    "slurmstepd-n1: error: *** JOB 77 ON n1 CANCELLED AT 2026-02-03T04:05:06 DUE to SIGNAL Terminated ***",
    "slurmstepd: error: *** STEP 9.1 ON gpu-2 CANCELLED AT 2026-02-03T04:05:06 DUE TO TASK FAILURE ***",
])
def test_a_step_slurm_cancelled_after_a_task_failed_is_that_failures_echo(line: str, tmp_path: Path) -> None:
    # the task that failed first (srun's record of its signal) is the culprit, never the cancellation
    code, verdict = _report(f"srun: error: n3: task 5: Segmentation fault (core dumped)\n{line}\n"
                            "srun: error: n1: tasks 0-4,6-7: Terminated\n", tmp_path)
    assert code == 1 and verdict["culprit_ranks"] == [5], verdict
    assert "Slurm" not in verdict["summary"].split(":")[0]


@pytest.mark.parametrize("host", ["n447", "gpu-a3.cluster"])
def test_an_older_slurms_host_after_the_reason_is_read(host: str, tmp_path: Path) -> None:
    line = f"slurmstepd: *** JOB 830329 CANCELLED AT 2026-08-06T17:21:44 DUE TO TIME LIMIT on {host} ***"
    _, verdict = _report(line + "\n", tmp_path)
    assert verdict["culprit_host"] == host and "time limit" in verdict["summary"], verdict


@pytest.mark.parametrize(("kind", "rtype"), [("PyTorchJob", "Worker"), ("PyTorchJob", "Master"),
                                             ("MPIJob", "Launcher")])
@pytest.mark.parametrize("verb", ["is failed", "is restarting"])
def test_the_training_operators_replica_failure_is_a_failure_of_no_known_rank(kind: str, rtype: str, verb: str,
                                                                              tmp_path: Path) -> None:
    line = f"  Warning  {kind}Failed  2m  {kind.lower()}-controller  {kind} llama-ft {verb} because 1 {rtype} " \
           "replica(s) failed."
    code, verdict = _report(line + "\n", tmp_path)
    assert code == 1 and verdict["culprit_ranks"] == [] and "replica(s) failed" in verdict["summary"], verdict


@pytest.mark.parametrize("rank", [0, 2, 31])
def test_horovodrun_names_the_process_that_failed_first(rank: int, tmp_path: Path) -> None:
    text = (f"[{rank}]<stdout>:epoch 1 loss 0.3\n[1]<stderr>:Horovod has been shut down\n"
            f"Terminating remaining workers after failure of Process {rank}.\n")
    _, verdict = _report(text, tmp_path)
    assert verdict["culprit_ranks"] == [rank], verdict


@pytest.mark.parametrize(("data", "words"), [("FAILED (exitcode: 1)", "exitcode: 1"),
                                             ("FAILED (exitcode: -9)", "SIGKILL"),
                                             ("FAILED (no reply file)", "FAILED")])
@pytest.mark.parametrize("host", ["trainer-host-3", "10.1.2.3"])
def test_torchxs_app_status_names_the_failed_replica_and_its_host(data: str, words: str, host: str,
                                                                   tmp_path: Path) -> None:
    text = (f"AppStatus:\n  State: FAILED\n  Num Restarts: 0\n  Roles:\n *trainer[0]:SUCCEEDED\n  trainer[1]:{data}\n"
            f"        timestamp: 2026-01-01 00:00:10\n        hostname: {host}\n    error_msg: the job failed\n")
    code, verdict = _report(text, tmp_path)
    assert code == 1 and words in verdict["summary"], verdict
    if "exitcode" in data:
        assert verdict["culprit_host"] == host, verdict


@pytest.mark.parametrize("ip", ["10.0.0.3", "node-a7-worker-0"])
def test_a_failure_of_no_rank_under_rays_worker_tag_names_its_node(ip: str, tmp_path: Path) -> None:
    text = (f"(RayTrainWorker pid=7712, ip={ip}) Traceback (most recent call last):\n"
            f"(RayTrainWorker pid=7712, ip={ip})   File \"train.py\", line 10, in train_func\n"
            f"(RayTrainWorker pid=7712, ip={ip}) RuntimeError: CUDA error: an illegal memory access was encountered\n")
    _, verdict = _report(text, tmp_path)
    assert verdict["culprit_host"] == ip, verdict


_SLURM_DATA = Path(__file__).parent / "data" / "slurm"


def test_real_slurm_time_limit_output_is_the_time_limit_on_its_node(tmp_path: Path) -> None:
    # (captured from a one-node Slurm 22.05 running 2 gloo ranks under srun: data/slurm/README.md)
    code, verdict = _report((_SLURM_DATA / "timelimit.log").read_text(encoding="utf-8"), tmp_path)
    assert code == 1 and verdict["culprit_ranks"] == [] and verdict["culprit_host"] == "vm", verdict
    assert "time limit was reached" in verdict["summary"]


def test_real_slurm_kill_names_the_killed_task(tmp_path: Path) -> None:
    _, verdict = _report((_SLURM_DATA / "kill.log").read_text(encoding="utf-8"), tmp_path)
    assert verdict["culprit_ranks"] == [1] and "SIGKILL" in verdict["summary"], verdict


def test_real_slurm_cancellation_after_a_task_failed_is_never_the_cause(tmp_path: Path) -> None:
    text = (_SLURM_DATA / "exit.log").read_text(encoding="utf-8")
    assert "CANCELLED AT" in text
    _, verdict = _report(text, tmp_path)
    _, without = _report("\n".join(line for line in text.splitlines() if "CANCELLED AT" not in line) + "\n",
                         tmp_path)
    assert "Slurm" not in verdict["summary"]
    assert (verdict["kind"], verdict["culprit_ranks"]) == (without["kind"], without["culprit_ranks"]), verdict


def test_real_slurm_scancel_of_a_running_job_is_said(tmp_path: Path) -> None:
    _, verdict = _report((_SLURM_DATA / "scancel.log").read_text(encoding="utf-8"), tmp_path)
    assert verdict["culprit_ranks"] == [] and verdict["culprit_host"] == "vm", verdict
    assert "Slurm cancelled STEP 4.0 on vm" in verdict["summary"] and "scancel" in verdict["summary"]


@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize("why", ["", " DUE to SIGNAL Terminated", " DUE to SIGNAL Killed"])
def test_a_slurm_cancellation_with_no_task_failed_before_it_is_a_stop_from_outside(host: str, why: str,
                                                                                  tmp_path: Path) -> None:
    text = (f"1: step 300 loss 0.7\nslurmstepd: error: *** STEP 61.0 ON {host} CANCELLED AT 2026-02-03T04:05:06{why}"
            f" ***\nsrun: error: {host}: tasks 0-1: Terminated\n")
    _, verdict = _report(text, tmp_path)
    assert verdict["culprit_host"] == host and "from outside the job" in verdict["summary"], verdict


@pytest.mark.parametrize("ip", ["10.0.0.5", "172.16.8.41"])
@pytest.mark.parametrize("exit_type", ["SYSTEM_ERROR", "NODE_OUT_OF_MEMORY"])
def test_rays_actor_died_record_names_the_actors_node(ip: str, exit_type: str, tmp_path: Path) -> None:
    text = ("ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.\n"
            f"\tclass_name: RayTrainWorker\n\tactor_id: 9d1c2e\n\tpid: 51234\n\tnamespace: 77aa\n\tip: {ip}\n"
            f"The actor is dead because its worker process has died. Worker exit type: {exit_type} Worker exit "
            "detail: Worker unexpectedly exits with a connection error code 2.\n")
    _, verdict = _report(text, tmp_path)
    assert verdict["culprit_host"] == ip, verdict


@pytest.mark.parametrize("ip", ["10.0.0.5", "172.16.8.41"])
def test_the_raylets_worker_death_names_the_workers_node(ip: str, tmp_path: Path) -> None:
    text = ("(raylet) A worker died or was killed while executing a task by an unexpected system error. To troubleshoot "
            f"the problem, check the logs for the dead worker. RayTask ID: ffff01 Worker ID: 1cb1 Node ID: 6e7f Worker "
            f"IP address: {ip} Worker port: 10258 Worker PID: 40021 Worker exit type: SYSTEM_ERROR Worker exit detail: "
            "Worker unexpectedly exits with a connection error code 2.\n")
    _, verdict = _report(text, tmp_path)
    assert verdict["culprit_host"] == ip, verdict
