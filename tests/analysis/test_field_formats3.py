"""Launchers', schedulers' and runtimes' own failure lines, third pass (issue 23 item 3): formats from their sources
(PRRTE's help-prun.txt, MPICH/Intel MPI Hydra's termination box, HPE PALS, the Kubeflow training operator's pod
events, kubectl's tables), each tested on a variant written here (other ranks, hosts, pods and codes than any
report's)."""

from __future__ import annotations

from tests.helpers.report import report_lines as report
from triage.model import Report
from triage.parsing.launchers import parse_rank_deaths
from triage.parsing.textclean import clean_text


def verdict(result: Report) -> tuple[str, list[int]]:
    return result.verdict.kind.value, sorted(result.verdict.culprit_ranks)


# PRRTE (prun:proc-ordered-abort) and Open MPI 4's orterun: the rank that called abort, wrapped as the launcher
# prints it; the other ranks' signals after it are its consequence
def test_a_launchers_word_of_a_rank_calling_abort_is_that_ranks_own_failure() -> None:
    for launcher in ("prterun", "mpirun"):
        result = report(
            "[1,2]<stdout>:iteration 17 residual 3.1e-4",
            "[1,9]<stderr>:Traceback (most recent call last):",
            "-" * 74,
            f"{launcher} has exited due to process rank 9 with PID 60412 on node cpu-r07 calling",
            '"abort". This may have caused other processes in the application to be',
            f"terminated by signals sent by {launcher} (as reported here).",
            "-" * 74)
        assert verdict(result) == ("exception", [9]), result.verdict.summary
        assert "abort" in result.verdict.summary and "cpu-r07" in result.verdict.summary


# HPE PALS (mpiexec on Cray EX): "<node>: rank N exited with code C" beside "rank M died from signal S"
def test_pals_exit_code_record_is_the_first_failure_and_the_sigterm_after_it_collateral() -> None:
    result = report(
        "epoch 2 step 40 loss 0.81",
        "x2207c1s4b1n0: rank 6 exited with code 3",
        "x2207c1s4b1n0: rank 7 died from signal 15",
        "x2207c1s5b0n0: rank 1 died from signal 15")
    assert verdict(result) == ("exception", [6]), result.verdict.summary
    assert "code 3" in result.verdict.summary
    assert parse_rank_deaths("node3: rank 4 exited with code 0") == ()      # a clean end
    assert [d.exitcode for d in parse_rank_deaths("rank 4 exited with status 2")] == [2]


# Hydra prints one box per process it saw end: a SIGTERM box after a SIGKILL box is its cleanup, not a second root
def test_hydra_sigterm_box_after_another_process_box_is_the_cleanup() -> None:
    box = "=" * 83
    result = report(
        "[1] it 40 loss 0.52",
        box, "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES", "=   RANK 5 PID 7711 RUNNING AT hpc-c2",
        "=   KILLED BY SIGNAL: 11 (Segmentation fault)", box, "",
        box, "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES", "=   RANK 1 PID 7707 RUNNING AT hpc-c2",
        "=   KILLED BY SIGNAL: 15 (Terminated)", box)
    assert verdict(result) == ("crash", [5]), result.verdict.summary
    assert "SIGSEGV" in result.verdict.summary
    # two processes killed by the same fault stay two roots
    both = report(
        box, "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES", "=   RANK 2 PID 11 RUNNING AT n1",
        "=   KILLED BY SIGNAL: 9 (Killed)", box,
        box, "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES", "=   RANK 3 PID 12 RUNNING AT n1",
        "=   KILLED BY SIGNAL: 9 (Killed)", box)
    assert verdict(both) == ("crash", [2, 3]), both.verdict.summary


# kubectl's tables pad every row to its columns: rows of one length are no terminal's wrap
def test_a_kubectl_table_is_not_joined_as_a_wrapped_line() -> None:
    rows = ["NAME                     READY   STATUS      RESTARTS      AGE",
            "bert-ft-master-0         1/1     Running     0             2h1m",
            "bert-ft-worker-0         0/1     OOMKilled   4 (12s ago)   2h1m",
            "bert-ft-worker-1         1/1     Running     0             2h1m"]
    assert len({len(row) for row in rows[1:]}) == 1
    assert clean_text("\n".join(rows)).lines == tuple(rows)
    result = report(*rows)
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert "bert-ft-worker-0" in result.verdict.summary


# kubectl describe pod: a container whose current state is Terminated with Reason Error and its exit code
def test_a_pods_terminated_state_with_an_error_exit_code_is_read() -> None:
    result = report(
        "Name:         gpt-sft-worker-4",
        "Namespace:    nlp",
        "Status:       Failed",
        "Containers:",
        "  trainer:",
        "    State:          Terminated",
        "      Reason:       Error",
        "      Exit Code:    2",
        "      Started:      Fri, 27 Nov 2026 01:00:00 +0000",
        "    Restart Count:  0")
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert "gpt-sft-worker-4" in result.verdict.summary and "exit code 2" in result.verdict.summary


# the training operator's events: "Pod: <ns>.<pod> exited with code N" says which replica ended and how; the job's
# "is failed because 1 Worker replica(s) failed" says no more than that
def test_the_training_operators_pod_event_names_the_replica_and_its_code() -> None:
    result = report(
        "Events:",
        "  Type     Reason            Age   From                   Message",
        "  ----     ------            ----  ----                   -------",
        "  Normal   ExitedWithCode    3m    pytorchjob-controller  Pod: research.vit-l-worker-0 exited with code 0",
        "  Normal   ExitedWithCode    2m    pytorchjob-controller  Pod: research.vit-l-worker-5 exited with code 139",
        "  Warning  PyTorchJobFailed  2m    pytorchjob-controller  PyTorchJob research/vit-l is failed because 1 "
        "Worker replica(s) failed.")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert "vit-l-worker-5" in result.verdict.summary and "SIGSEGV" in result.verdict.summary
    alone = report('job "research/vit-l" is failing because "Worker" replica(s) failed.')
    assert alone.verdict.kind.value == "exception", alone.verdict.summary


# the SageMaker training toolkit's record of the user's command (errors.py): "ExecuteUserScriptError:" then "ExitCode
# N": a process of no known rank ended so (137: SIGKILL); the SDK's UnexpectedStatusException is its client's echo
def test_sagemakers_exit_code_record_is_read_and_the_sdks_exception_is_its_echo() -> None:
    result = report(
        "2026-11-27 05:01:00,000 sagemaker-training-toolkit INFO     Invoking user script",
        "2026-11-27 05:30:12,400 sagemaker-training-toolkit ERROR    Reporting training FAILURE",
        "2026-11-27 05:30:12,400 sagemaker-training-toolkit ERROR    ExecuteUserScriptError:",
        "ExitCode 139",
        'ErrorMessage ""',
        'Command "/opt/conda/bin/python3 fit.py --epochs 2"')
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert "SIGSEGV" in result.verdict.summary and "139" in result.verdict.summary
    # the SDK's copy, with torchrun's record of the rank that was killed quoted in it: the rank's record decides
    result = report(
        "UnexpectedStatusException: Error for Training job mt5-ft-2026-11-27: Failed. Reason: AlgorithmError: "
        "ExecuteUserScriptError:",
        "ExitCode 1",
        'ErrorMessage "raise ChildFailedError(',
        " torch.distributed.elastic.multiprocessing.errors.ChildFailedError",
        " Root Cause (first observed failure)",
        " [0]",
        " time      : 2026-11-27_05:30:10",
        " host      : algo-2",
        " rank      : 11 (local_rank: 3)",
        " exitcode  : -11 (pid: 4120)",
        " error_file: <N/A>",
        ' traceback : Signal 11 (SIGSEGV) received by PID 4120"',
        'Command "torchrun --nnodes 2 --nproc_per_node 8 fit.py", exit code: 1')
    assert verdict(result) == ("crash", [11]), result.verdict.summary
    assert "SIGSEGV" in result.verdict.summary


# Vertex AI's custom job: "The replica workerpool1-0 exited with a non-zero status of N" (and its termination reason)
def test_vertex_replica_exit_is_a_failure_of_that_replica() -> None:
    result = report("The replica workerpool1-3 exited with a non-zero status of 137. Termination reason: OOMKilled. "
                    "To find out more about why your job exited please check the logs: https://console.example/logs")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert "workerpool1-3" in result.verdict.summary and "SIGKILL" in result.verdict.summary
    result = report("Job failed. The replica workerpool0-0 exited with a non-zero status of 2.")
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert "workerpool0-0" in result.verdict.summary


# a line that gives its process's exit code in plain numbers is that exit, whatever words its quoted message holds
# after it ("... NCCL communicator was aborted", "killed"): Azure ML's "User process 'Rank 3' exited with status code 1"
def test_a_plain_exit_code_is_not_overruled_by_words_of_the_quoted_message() -> None:
    result = report('{"error": {"code": "UserError", "message": "Execution failed. User process \'Rank 6\' exited with '
                    'status code 1. Please check log file \'user_logs/std_log_process_6.txt\' for error details. '
                    'Error: Traceback (most recent call last):\\n  File \\"fit.py\\", line 12\\nRuntimeError: '
                    'Connection to the store was aborted.\\n"}}')
    assert verdict(result) == ("exception", [6]), result.verdict.summary
    assert "SIGABRT" not in result.verdict.summary


# Ray's ActorDiedError of a worker whose exit type is NODE_OUT_OF_MEMORY: its memory monitor killed it (SIGKILL)
def test_ray_worker_exit_type_node_out_of_memory_is_a_kill_for_host_memory() -> None:
    result = report(
        "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.",
        "\tclass_name: TrainWorker",
        "\tactor_id: 0c1d2e",
        "\tpid: 77012",
        "\tnamespace: ns-1",
        "\tip: 10.9.4.2",
        "The actor is dead because its worker process has died. Worker exit type: NODE_OUT_OF_MEMORY Worker exit "
        "detail: Task was killed due to the node running low on memory.")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert "SIGKILL" in result.verdict.summary and "10.9.4.2" in result.verdict.summary
    assert "host memory" in result.verdict.summary


# NCCL's RAS report (ncclras; ras/client_support.cc), its Errors section: a DEAD process is the rank the
# communicator's INCOMPLETE block lists with its pid and node; an ERROR block's "Rank N reported <error>" is that
# rank's communicator's error (a network one: a network error that rank reported, no culprit)
def test_nccl_ras_dead_process_is_the_rank_its_communicator_lists() -> None:
    result = report(
        "Errors", "======", "",
        "DEAD",
        "  1 job process is considered dead (unreachable via the RAS network)",
        "  Process 30117 on node 10.4.0.22 managing GPU 2", "",
        "#0-0 (11aa22bb33cc44dd) INCOMPLETE",
        "  Missing communicator data from 1 rank",
        "  Rank 10 -- GPU 2 managed by process 30117 on node 10.4.0.22", "")
    assert verdict(result) == ("crash", [10]), result.verdict.summary
    assert "10.4.0.22" in result.verdict.summary and "dead" in result.verdict.summary


def test_nccl_ras_error_block_names_the_reporting_rank() -> None:
    result = report(
        "#0-0 (55ee66ff77aa88bb) ERROR",
        "  Asynchronous error on 1 rank",
        "  Rank 3 reported remote process exited or there was a network error -- GPU 3 managed by process 811 on "
        "node h-b09", "")
    assert result.verdict.kind.value == "network_error", result.verdict.summary
    assert "rank 3" in result.verdict.summary
    several = report(
        "#0-0 (55ee66ff77aa88bb) ERROR",
        "  Initialization errors on 2 ranks",
        "  2 ranks reported internal error - please report this issue to the NCCL developers",
        "  Rank 0 -- GPU 0 managed by process 700 on node h-a01",
        "  Rank 1 -- GPU 1 managed by process 701 on node h-a01", "")
    assert verdict(several) == ("exception", [0, 1]), several.verdict.summary


# Lightning's child-process observer: "[rank: 3] Child process with PID P terminated with code -9. Forcefully terminating
# all other processes to avoid zombies": that rank was killed (a negative code is the signal); the shell's "Killed"
# after it is Lightning's teardown of the main process, never the culprit; an exit code says less than the rank's own
# exception line above it
def test_lightnings_child_record_names_the_rank_and_the_kill_after_it_is_its_teardown() -> None:
    result = report(
        "Epoch 1:  71%|███████   | 500/704 [05:02<02:03,  1.65it/s, v_num=0]",
        "[rank: 2] Child process with PID 40412 terminated with code -11. Forcefully terminating all other processes to "
        "avoid zombies 🧟",
        "Killed")
    assert verdict(result) == ("crash", [2]), result.verdict.summary
    assert "SIGSEGV" in result.verdict.summary
    result = report(
        "[rank1]: Traceback (most recent call last):",
        '[rank1]:   File "/w/fit.py", line 9, in <module>',
        "[rank1]: ValueError: bad batch size 0",
        "[rank: 1] Child process with PID 912 terminated with code 1. Forcefully terminating all other processes to "
        "avoid zombies 🧟",
        "Killed")
    assert verdict(result) == ("exception", [1]), result.verdict.summary
    assert "ValueError" in result.verdict.summary
    # its own watchdog's hang ended rank 2 (SIGABRT): the hang is the story, the kill after it Lightning's teardown
    result = report(
        "[rank2]:[F1127 06:00:00.100000000 ProcessGroupNCCL.cpp:1306] [PG ID 0 PG GUID 0(default_pg) Rank 2] "
        "Terminating the process after attempting to dump debug info, due to ProcessGroupNCCL watchdog hang.",
        "[rank: 2] Child process with PID 5120 terminated with code -6. Forcefully terminating all other processes to "
        "avoid zombies 🧟",
        "Killed")
    assert result.verdict.kind.value == "hang", result.verdict.summary


# SkyPilot's head "(worker1, rank=1, pid=P, ip=A)" names a node (its rank= is SKYPILOT_NODE_RANK), never a process's
# rank; its "Job N failed with return code list: [137, 2]" gives one code per node, 137 beside another failure being
# its cleanup
def test_skypilots_node_rank_is_no_process_rank() -> None:
    result = report(
        "(head, rank=0, pid=4100) step 12 loss 2.02",
        "(worker2, rank=2, pid=3381, ip=10.70.1.12) Traceback (most recent call last):",
        '(worker2, rank=2, pid=3381, ip=10.70.1.12)   File "/home/sky/sky_workdir/fit.py", line 31, in <module>',
        "(worker2, rank=2, pid=3381, ip=10.70.1.12) ValueError: shard 7 is empty",
        "ERROR: Job 4 failed with return code list: [137, 137, 1] (Worker failed with return code 1, SkyPilot cleaned "
        "up the processes on other nodes with return code 137)")
    assert verdict(result) == ("exception", []), result.verdict.summary
    assert "10.70.1.12" in result.verdict.summary and "ValueError" in result.verdict.summary
    alone = report("(task, pid=881) epoch 3", "ERROR: Job 2 failed with return code list: [139]")
    assert alone.verdict.kind.value == "crash", alone.verdict.summary
    assert "SIGSEGV" in alone.verdict.summary and "node 0" in alone.verdict.summary


# srun's "task N: Out Of Memory" is the step's cgroup memory limit (Slurm's OOM handler): the verdict says so, beside
# slurmstepd's newer "Detected 1 oom_kill event in StepId=J.S. Some of the step tasks have been OOM Killed."
def test_sruns_out_of_memory_says_the_cgroup_limit() -> None:
    result = report(
        "5: step 310 loss 0.77",
        "slurmstepd: error: Detected 1 oom_kill event in StepId=912201.0. Some of the step tasks have been OOM Killed.",
        "srun: error: hpc-g21: task 5: Out Of Memory",
        "srun: error: hpc-g21: tasks 0-4,6-7: Terminated")
    assert verdict(result) == ("crash", [5]), result.verdict.summary
    assert "Out Of Memory" in result.verdict.summary and "cgroup" in result.verdict.summary


# Cray ALPS (aprun): "_pmiu_daemon(SIGCHLD): [NID n] ... PE RANK 7 exit signal Killed" is rank 7 killed by SIGKILL (the
# handler's SIGCHLD is no killing signal); "Application N exit codes: 139" alone a process of no known rank
def test_alps_pe_rank_signal_and_application_exit_codes() -> None:
    result = report(
        "_pmiu_daemon(SIGCHLD): [NID 01022] [c3-1c2s5n2] [Fri Nov 27 07:01:02 2026] PE RANK 12 exit signal "
        "Segmentation fault",
        "Application 5512001 exit codes: 139",
        "Application 5512001 resources: utime ~300s, stime ~20s, Rss ~9910000, inblocks ~0, outblocks ~0")
    assert verdict(result) == ("crash", [12]), result.verdict.summary
    assert "SIGSEGV" in result.verdict.summary and "SIGCHLD" not in result.verdict.summary.split(":")[1]
    alone = report("Application 5512002 exit codes: 134")
    assert alone.verdict.kind.value == "crash" and "SIGABRT" in alone.verdict.summary, alone.verdict.summary


# "ProcessGroupNCCL's watchdog got stuck for N seconds" / "Heartbeat monitor timed out": the watchdog thread made no
# progress; the verdict (a hang) says that it names no collective, not that one timed out
def test_a_stuck_watchdog_is_said_as_such() -> None:
    result = report(
        "[rank3]:[E1127 08:00:00.000000 ProcessGroupNCCL.cpp:1528] [PG ID 0 PG GUID 0(default_pg) Rank 3] "
        "ProcessGroupNCCL's watchdog got stuck for 600 seconds without making progress in monitoring enqueued "
        "collectives. This typically indicates a NCCL/CUDA API (e.g., CudaEventDestroy) hang blocking the watchdog.")
    assert result.verdict.kind.value == "hang", result.verdict.summary
    assert "heartbeat monitor" in result.verdict.summary and "names no collective" in result.verdict.summary


# MPICH's / Intel MPI's fatal error handler: "Abort(N) on node R (rank R in comm 0): Fatal error in PMPI_X: <class>,
# error stack:" is rank R's failure in its MPI call (it exits: no SIGABRT), its stack's innermost line the reason
def test_mpich_fatal_error_handler_is_the_ranks_failure_in_its_call() -> None:
    result = report(
        "[2] it 9 residual 1e-3",
        "Abort(1091215) on node 11 (rank 11 in comm 0): Fatal error in PMPI_Bcast: Other MPI error, error stack:",
        "PMPI_Bcast(454)...........: MPI_Bcast(buf=0x55d1, count=4, MPI_INT, root=0, MPI_COMM_WORLD) failed",
        "MPIR_Bcast_impl(310)......: ",
        "MPID_nem_tcp_connpoll(1845): Communication error with rank 3: Connection reset by peer")
    # (its reason is the link to rank 3: a network failure rank 11 reported, not rank 11's own)
    assert result.verdict.kind.value == "network_error", result.verdict.summary
    assert "rank 11" in result.verdict.summary and "SIGABRT" not in result.verdict.summary
    assert "Communication error with rank 3" in result.verdict.summary
    result = report(
        "Abort(2) on node 4 (rank 4 in comm 0): Fatal error in PMPI_Type_commit: Invalid datatype, error stack:",
        "PMPI_Type_commit(122): MPI_Type_commit(datatype_p=0x7ffc) failed",
        "PMPI_Type_commit(81).: Invalid datatype")
    assert verdict(result) == ("exception", [4]), result.verdict.summary
    assert "PMPI_Type_commit" in result.verdict.summary
