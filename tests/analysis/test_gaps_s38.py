"""Issue 23: the known gaps of round 35 and earlier, as classes (session 38). Each class: what text, what a careful
engineer concludes from it alone; variants written here (the real logs are the corpus cases that left
known_gaps.yaml with them).

1. glog's and absl's FATAL level (``F1207 12:00:00.123456 4242 file.cc:134] Check failed: ...``, TensorFlow's
   ``2023-01-10 12:00:00.123456: F file.cc:44] ...``, ``*** Check failure stack trace: ***``, absl's ``*** SIGABRT
   received at time=... ***``): the process aborts, a crash by SIGABRT whose message is the check; the rank where
   the line's prefix says it.
2. NCCL failures in other frameworks' words (XLA's and JAX's ``NCCL operation ncclCommInitRank(...) failed: ...``,
   ``NCCL error``, ``NCCL_ERROR_...``): read as torch's ``NCCL error in:`` is, by the CUDA or system failure inside.
3. JAX's and TensorFlow's coordination service: a barrier's ``Timed out task names:`` and the tasks that stopped
   sending heartbeats are the processes that never arrived (task N is process N); without names, no rank is blamed.
4. A refused or reset connection named by its errno (``ECONNREFUSED``, ``ECONNRESET``, ``EPIPE``) in any framework's
   words: a network failure.
5. A launcher's task index that is no rank: srun's ``host: task N: Segmentation fault`` beside an MPI runtime's own
   records of ranks (HPE MPT's ``MPT ERROR: Rank 57(g:57) received signal SIGSEGV(11).``), or under torchrun (its
   ``[rankN]:`` tags): the ranks those name win; srun's record alone is a failure of no rank on its host.
6. DDP's model check (``DDP expects same model across all ranks, but Rank 0 has 128 params, ...``) told without its
   type: the RuntimeError it is raised as, naming no culprit.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import failure_verdict
from triage.parsing.crashlog import CrashLineKind, parse_crash_line
from triage.parsing.textclean import strip_decorations

report = failure_verdict


# --- 1. glog / absl FATAL ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("line", [
    "F1207 12:00:00.123456 4242 kv_store.cc:134] Check failed: table_.emplace(k, v).second",
    "F0000 00:00:1700000000.123456   12345 nccl_clique.cc:90] Check failed: comm != nullptr",
    "[F1207 12:00:00.123456 4242 executor.cpp:88] Check failed: op != nullptr",
    "2023-01-10 12:00:00.123456: F tensorflow/core/framework/tensor_shape.cc:44] Check failed: NDIMS == dims()",
])
def test_a_glog_fatal_line_is_an_abort_with_its_message(line: str) -> None:
    clean, _stamp = strip_decorations(line)
    crash = parse_crash_line(clean)
    assert crash is not None
    assert crash.kind is CrashLineKind.FATAL_SIGNAL
    assert crash.signal == "SIGABRT"
    assert not crash.collateral
    assert "Check failed" in crash.text


def test_glogs_other_levels_lose_their_head_as_before() -> None:
    clean, stamp = strip_decorations("E1207 12:00:00.123456 4242 kv_store.cc:134] retrying the call")
    assert clean == "retrying the call"
    assert stamp == "E1207 12:00:00.123456"


def test_process_group_nccls_own_fatal_line_stays_a_consequence() -> None:
    clean, _stamp = strip_decorations(
        "F0429 14:03:49.380000 77 ProcessGroupNCCL.cpp:1554] [PG 0 Rank 3] Heartbeat monitor timed out")
    crash = parse_crash_line(clean)
    assert crash is None or crash.collateral


def test_a_check_whose_message_is_a_cuda_error_is_that_cuda_error() -> None:
    clean, _ = strip_decorations("F0101 10:00:00.000000 91 gpu_executor.cc:200] Check failed: status.ok() "
                                 "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered")
    crash = parse_crash_line(clean)
    assert crash is not None
    assert crash.kind is CrashLineKind.CUDA_ERROR
    assert crash.signal == "SIGABRT"


@pytest.mark.parametrize(("line", "signal"), [
    ("*** SIGABRT received at time=1700000000 on cpu 3 ***", "SIGABRT"),
    ("*** SIGSEGV received at time=1700000000 on cpu 0 ***", "SIGSEGV"),
    ("*** Check failure stack trace: ***", "SIGABRT"),
])
def test_abseils_and_glogs_abort_banners_are_fatal(line: str, signal: str) -> None:
    crash = parse_crash_line(line)
    assert crash is not None
    assert crash.kind is CrashLineKind.FATAL_SIGNAL
    assert crash.signal == signal


CHECK_OF_RANK = """\
[rank3]: step 10 loss 2.1
[rank3]: F0000 00:00:1700000000.123456   12345 nccl_clique.cc:90] Check failed: comm != nullptr
[rank3]: *** Check failure stack trace: ***
[rank3]:     @     0x7f5618011dc9  absl::log_internal::LogMessageFatal::~LogMessageFatal()
[rank1]: step 10 loss 2.0
"""


def test_a_ranks_failed_check_is_its_sigabrt_crash(tmp_path: Path) -> None:
    verdict = report(CHECK_OF_RANK, tmp_path)
    assert verdict["kind"] == "crash"
    assert verdict["culprit_ranks"] == [3]
    assert "Check failed: comm != nullptr" in verdict["summary"]
    assert "SIGABRT" in verdict["summary"]


CHECKS_OF_NO_RANK = """\
F0312 08:15:02.100200 881 channel.cpp:57] Check failed: peers_.count(id) == 0 duplicate peer
*** Check failure stack trace: ***
    @     0x7f1b2c00f11d  google::LogMessage::Fail()
    @     0x7f1b2c01099a  google::LogMessage::SendToLog()
*** Check failure stack trace: ***
    @     0x7f9e1100f11d  google::LogMessage::Fail()
"""


def test_failed_checks_of_no_rank_are_a_crash_of_no_rank(tmp_path: Path) -> None:
    verdict = report(CHECKS_OF_NO_RANK, tmp_path)
    assert verdict["kind"] == "crash"
    assert not verdict["culprit_ranks"]
    assert "peers_.count(id) == 0" in verdict["summary"]


# --- 2. NCCL failures in other frameworks' words ----------------------------------------------------------------

@pytest.mark.parametrize(("line", "kind"), [
    (("jaxlib.xla_extension.XlaRuntimeError: INTERNAL: external/xla/xla/service/gpu/nccl_api.cc:501: NCCL operation "
      "ncclCommInitRankConfig(&comm, nranks, id, rank, &config) failed: unhandled cuda error (run with NCCL_DEBUG=INFO "
      "for details). Last NCCL warning(error) log entry (may be unrelated) 'Cuda failure 2 'out of memory''."),
     CrashLineKind.CUDA_OOM),
    ("INTERNAL: NCCL operation ncclGroupEnd() failed: unhandled system error (run with NCCL_DEBUG=INFO for details)",
     CrashLineKind.NETWORK),
    ("NCCL operation ncclAllReduce(send, recv, n, ncclFloat, ncclSum, comm, stream) failed: invalid usage",
     CrashLineKind.NCCL_ERROR),
    ("horovod.common.exceptions.HorovodInternalError: ncclCommInitRank failed: invalid argument",
     CrashLineKind.NCCL_ERROR),
    ("ERROR: NCCL error 5 (NCCL_ERROR_INVALID_USAGE) in allreduce", CrashLineKind.NCCL_ERROR),
    ("horovod.common.exceptions.HorovodInternalError: ncclAllReduce failed: invalid usage", CrashLineKind.NCCL_ERROR),
    ("ExternalError: Nccl error, invalid argument (at /paddle/fluid/platform/collective_helper.cc:100)",
     CrashLineKind.NCCL_ERROR),
])
def test_an_nccl_failure_in_another_frameworks_words(line: str, kind: CrashLineKind) -> None:
    crash = parse_crash_line(line)
    assert crash is not None
    assert crash.kind is kind


XLA_INIT = ("NCCL operation ncclCommInitRank(&comm, nranks, id, rank) failed: unhandled cuda error (run with "
            "NCCL_DEBUG=INFO for details). Last NCCL warning(error) log entry (may be unrelated) 'Cuda failure 2 "
            "'out of memory''.; current tracing scope: all-gather-start.12\n")


def test_xlas_nccl_init_failure_is_an_exception_not_a_refusal(tmp_path: Path) -> None:
    verdict = report(XLA_INIT, tmp_path)
    assert verdict["kind"] == "exception"
    assert "ncclCommInitRank" in verdict["summary"]


# --- 3. the coordination service ---------------------------------------------------------------------------------

BARRIER_NEW = """\
jax.errors.JaxRuntimeError: DEADLINE_EXCEEDED: Barrier timed out. Id: PjRT_Client_Connect. This usually happens because a task triggered the barrier too early or too slowly. Please look at the task logs (both timed out and first task) to debug further.
# of tasks that reached the barrier: 2/4.
The first task at the barrier: /job:jax_worker/replica:0/task:0. Some timed out task names:
/job:jax_worker/replica:0/task:1
/job:jax_worker/replica:0/task:2
"""

BARRIER_OLD = """\
  File "/w/sync.py", line 40, in sync_global
    client.wait_at_barrier("sync_step7", timeout_in_ms=60000)
jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Barrier timed out. Barrier_id: sync_step7. Timed out task names:
/job:jax_worker/replica:0/task:5
"""


# (round 38: a barrier of start-up, jax.distributed.initialize's PjRT_Client_Connect, is an init_hang with the same
# culprits; a barrier after the start stays missing_rank)
@pytest.mark.parametrize(("text", "absent", "kind"), [(BARRIER_NEW, [1, 2], "init_hang"),
                                                      (BARRIER_OLD, [5], "missing_rank")])
def test_the_tasks_a_barrier_timed_out_on_are_the_missing_processes(text: str, absent: list[int], kind: str,
                                                                    tmp_path: Path) -> None:
    verdict = report(text, tmp_path)
    assert verdict["kind"] == kind
    assert verdict["culprit_ranks"] == absent


def test_the_first_task_at_the_barrier_is_not_missing(tmp_path: Path) -> None:
    verdict = report(BARRIER_NEW, tmp_path)
    assert 0 not in verdict["culprit_ranks"]
    assert "2 of 4 tasks reached it" in verdict["summary"]


HEARTBEAT_NAMED = """\
step 100 loss 1.2
E1120 10:00:00.000000 4242 coordination_service.cc:300] Task /job:worker/replica:0/task:2 heartbeat timeout. This indicates that the remote task has failed, got preempted, or crashed unexpectedly.
"""

HEARTBEAT_UNNAMED = """\
step 100 loss 1.2
F1120 10:00:00.000000   4242 client.cc:70] Terminating process because the coordinator detected missing heartbeats. This most likely indicates that another task died; see the other task logs for more details.
"""


HEARTBEAT_LISTED = """\
step 10 loss 0.5
jaxlib.xla_extension.XlaRuntimeError: UNAVAILABLE: The following tasks are unhealthy (stopped sending heartbeats):
/job:jax_worker/replica:0/task:6
The tasks have crashed. Check the task logs for an earlier error to debug further.
"""

FATAL_ELSEWHERE = """\
step 10 loss 0.5
F1127 10:00:00.000000 4242 client.cc:77] Terminating process because the JAX distributed service detected fatal errors. This most likely indicates that another task died; see the other task logs for more details.
"""


def test_the_tasks_listed_as_unhealthy_are_missing(tmp_path: Path) -> None:
    verdict = report(HEARTBEAT_LISTED, tmp_path)
    assert verdict["kind"] == "missing_rank"
    assert verdict["culprit_ranks"] == [6]


def test_another_tasks_death_told_by_the_service_blames_no_rank(tmp_path: Path) -> None:
    verdict = report(FATAL_ELSEWHERE, tmp_path)
    assert verdict["kind"] == "missing_rank"
    assert not verdict["culprit_ranks"]


def test_a_task_named_by_its_heartbeat_timeout_is_missing(tmp_path: Path) -> None:
    verdict = report(HEARTBEAT_NAMED, tmp_path)
    assert verdict["kind"] == "missing_rank"
    assert verdict["culprit_ranks"] == [2]


def test_missing_heartbeats_of_no_named_task_blame_no_rank(tmp_path: Path) -> None:
    verdict = report(HEARTBEAT_UNNAMED, tmp_path)
    assert verdict["kind"] == "missing_rank"
    assert not verdict["culprit_ranks"]
    assert "this input does not say" in verdict["summary"]


# --- 4. a refused or reset connection by its errno ----------------------------------------------------------------

@pytest.mark.parametrize("line", [
    ("RPC agent for worker2 encountered error when reading incoming response from worker0: ECONNRESET: connection "
     "reset by peer"),
    "RuntimeError: ECONNREFUSED:",
    "RuntimeError: EPIPE: broken pipe",
    "uv_tcp_connect: EHOSTUNREACH: host is unreachable",
    "[enforce fail at pair.cc:120] connect() failed to 10.0.0.7:41234",
])
def test_a_socket_errno_is_a_network_failure(line: str) -> None:
    clean, _ = strip_decorations(line)
    crash = parse_crash_line(clean)
    assert crash is not None
    assert crash.kind is CrashLineKind.NETWORK


TENSORPIPE_RESET = """\
[W tensorpipe_agent.cpp:940] RPC agent for worker2 encountered error when reading incoming response from worker0: ECONNRESET: connection reset by peer
Traceback (most recent call last):
  File "train.py", line 12, in <module>
    fut.wait()
RuntimeError: ECONNRESET: connection reset by peer
"""


def test_an_rpc_agents_reset_connection_is_a_network_error(tmp_path: Path) -> None:
    verdict = report(TENSORPIPE_RESET, tmp_path)
    assert verdict["kind"] == "network_error"
    assert not verdict["culprit_ranks"]


@pytest.mark.parametrize(("line", "peer"), [
    ("RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:799] connect [10.1.2.3]:37861: Connection refused",
     "[10.1.2.3]:37861"),
    ("RuntimeError: [/opt/gloo/transport/tcp/pair.cc:144] connect() failed to 10.1.2.3:41234: Connection timed out",
     "10.1.2.3:41234"),
])
def test_a_refused_connect_names_the_peer_it_could_not_reach(line: str, peer: str) -> None:
    crash = parse_crash_line(line)
    assert crash is not None
    assert crash.kind is CrashLineKind.NETWORK
    assert crash.peer == peer


def test_the_peer_a_gloo_pair_could_not_reach_is_the_finding(tmp_path: Path) -> None:
    verdict = report('Traceback (most recent call last):\n  File "train.py", line 5, in <module>\n'
                     '    dist.init_process_group("gloo")\nRuntimeError: [../third_party/gloo/gloo/transport/tcp/'
                     'pair.cc:799] connect [10.1.2.3]:37861: Connection refused\n', tmp_path)
    assert verdict["kind"] == "network_error"
    assert verdict["culprit_host"] == "10.1.2.3"


# --- 5. a launcher's task index that is no rank --------------------------------------------------------------------

MPT_UNDER_SRUN = """\
MPT ERROR: Rank 12(g:12) received signal SIGBUS(7).
\tProcess ID: 5511, Host: n002, Program: /apps/solver
\tMPT Version: HPE MPT 2.25  08/14/21 03:06:41
srun: error: n002: task 1: Bus error (core dumped)
srun: error: n001: task 0: Killed
"""

MPT_TWO = """\
MPT ERROR: Rank 9(g:9) received signal SIGSEGV(11).
\tProcess ID: 100, Host: c1, Program: /apps/cfd
MPT ERROR: Rank 40(g:40) received signal SIGSEGV(11).
\tProcess ID: 200, Host: c3, Program: /apps/cfd
srun: error: c3: task 2: Segmentation fault (core dumped)
"""


def test_an_mpi_runtimes_rank_wins_over_sruns_task_index(tmp_path: Path) -> None:
    verdict = report(MPT_UNDER_SRUN, tmp_path)
    assert verdict["kind"] == "crash"
    assert verdict["culprit_ranks"] == [12]
    assert "n002" in verdict["summary"]


def test_ranks_an_mpi_runtime_saw_fault_alike_are_each_a_culprit(tmp_path: Path) -> None:
    verdict = report(MPT_TWO, tmp_path)
    assert verdict["kind"] == "crash"
    assert verdict["culprit_ranks"] == [9, 40]


def test_sruns_task_is_still_the_rank_without_a_runtimes_record(tmp_path: Path) -> None:
    verdict = report("srun: error: n002: task 3: Segmentation fault (core dumped)\n", tmp_path)
    assert verdict["kind"] == "crash"
    assert verdict["culprit_ranks"] == [3]


TORCHRUN_UNDER_SRUN = """\
[rank5]: Traceback (most recent call last):
[rank5]:   File "/w/train.py", line 3, in <module>
[rank5]: ValueError: bad batch
srun: error: node2: task 1: Exited with exit code 1
"""

TORCHRUN_UNDER_SRUN_KILLED = """\
[rank3]: step 5 loss 1.0
[rank1]: step 5 loss 1.1
srun: error: node2: task 1: Killed
"""


def test_under_torchrun_sruns_task_is_a_node_not_a_rank(tmp_path: Path) -> None:
    verdict = report(TORCHRUN_UNDER_SRUN, tmp_path)
    assert verdict["kind"] == "exception"
    assert verdict["culprit_ranks"] == [5]
    assert "rank 1" not in verdict["summary"]


def test_under_torchrun_sruns_record_alone_is_a_failure_of_no_rank_on_its_host(tmp_path: Path) -> None:
    verdict = report(TORCHRUN_UNDER_SRUN_KILLED, tmp_path)
    assert verdict["kind"] == "crash"
    assert not verdict["culprit_ranks"]
    assert "node2" in verdict["summary"]


# --- 6. DDP's model check told without its type ---------------------------------------------------------------------

@pytest.mark.parametrize("line", [
    "DDP expects same model across all ranks, but Rank 0 has 64 params, while rank 3 has inconsistent 60 params.",
    "params[2] in this process with sizes [128, 64] appears not to match sizes of the same param in process 0.",
])
def test_ddps_model_check_is_its_runtime_error(line: str) -> None:
    crash = parse_crash_line(line)
    assert crash is not None
    assert crash.kind is CrashLineKind.EXCEPTION
    assert crash.exc_type == "RuntimeError"


def test_ddps_model_check_names_no_culprit(tmp_path: Path) -> None:
    verdict = report("DDP expects same model across all ranks, but Rank 0 has 64 params, while rank 3 has "
                     "inconsistent 60 params.\n", tmp_path)
    assert verdict["kind"] == "exception"
    assert not verdict["culprit_ranks"]


# --- glog's thread id as the pid of a rank its NCCL lines name ----------------------------------------------------

NCCL_PIDS = """\
node1:4242:4300 [0] NCCL INFO comm 0x55aa rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE
node1:4243:4301 [1] NCCL INFO comm 0x55bb rank 1 nranks 2 cudaDev 1 busId 2000 - Init COMPLETE
node1:4242:4300 [0] NCCL INFO AllReduce: opCount 5 sendbuff 0x7f00 recvbuff 0x7f00 count 1024 datatype 7 op 0 root 0 comm 0x55aa nranks 2 [nranks=2] stream 0x1
node1:4243:4301 [1] NCCL INFO AllReduce: opCount 5 sendbuff 0x7f00 recvbuff 0x7f00 count 1024 datatype 7 op 0 root 0 comm 0x55bb nranks 2 [nranks=2] stream 0x1
"""


def test_a_check_on_a_ranks_main_thread_is_that_ranks(tmp_path: Path) -> None:
    verdict = report(NCCL_PIDS + "F1127 10:00:00.000000  4243 engine.cc:88] Check failed: buffer != nullptr\n",
                     tmp_path)
    assert verdict["kind"] == "crash"
    assert verdict["culprit_ranks"] == [1]


def test_a_check_on_another_thread_stays_of_no_rank(tmp_path: Path) -> None:
    verdict = report(NCCL_PIDS + "F1127 10:00:00.000000  9911 engine.cc:88] Check failed: buffer != nullptr\n",
                     tmp_path)
    assert verdict["kind"] == "crash"
    assert not verdict["culprit_ranks"]


@pytest.mark.parametrize("line", [
    "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 9663676416 bytes.",
    ("tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[32,1024] "
     "and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc"),
    "ResourceExhaustedError: Out of memory error on GPU 0. Cannot allocate 1.2GB memory on GPU 0",
])
def test_other_frameworks_device_memory_exhaustion_is_out_of_memory(line: str) -> None:
    crash = parse_crash_line(line)
    assert crash is not None
    assert crash.kind is CrashLineKind.CUDA_OOM


@pytest.mark.parametrize("line", [
    "Single-node multi-GPU works fine, but multinode consistently crashes with an NCCL error during the first step.",
    "I got an NCCL error. Please help",
])
def test_a_reporters_words_for_an_nccl_error_are_no_failure_line(line: str) -> None:
    assert parse_crash_line(line) is None


# --- 7. saving that times out, in the reporter's words ----------------------------------------------------------------

TIMEOUT_OF_RANK_3 = ("[rank3]:[E117 08:28:16.358824199 ProcessGroupNCCL.cpp:1534] [PG 0 (default_pg) Rank 3] Process "
                     "group watchdog thread terminated with exception: [Rank 3] Watchdog caught collective operation "
                     "timeout: WorkNCCL(SeqNum=210, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran "
                     "for 600042 milliseconds before timing out.\n")


@pytest.mark.parametrize("prose", [
    "Training on two nodes works, but it always times out when saving the checkpoint at step 1000.\n",
    "两台机器训练，保存checkpoint时卡住然后超时\n",
])
def test_a_timeout_the_reporter_says_comes_while_saving_is_ranks_stuck_outside(prose: str, tmp_path: Path) -> None:
    verdict = report(TIMEOUT_OF_RANK_3 + prose, tmp_path)
    assert verdict["kind"] == "stuck_outside_collective"
    assert not verdict["culprit_ranks"]
    assert "saving" in verdict["summary"]


@pytest.mark.parametrize("prose", [
    "Training on two nodes works, but it always times out at step 1000.\n",
    "Saving the checkpoint works fine, but training hangs later.\n",
    "Could it time out when saving the checkpoint?\n",
])
def test_a_timeout_without_saving_in_the_reporters_words_stays_a_hang(prose: str, tmp_path: Path) -> None:
    verdict = report(TIMEOUT_OF_RANK_3 + prose, tmp_path)
    assert verdict["kind"] == "hang"
