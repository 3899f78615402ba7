"""Issue 23, point 4, as a class: when a verdict of a pasted log names no culprit, the one thing that would
settle it is fitted to the input. Where it asks for every rank's output with each line tagged by its rank,
it names the flag of the launcher the input shows started the ranks (triage.parsing.launcher_kind): Open
MPI's ``mpirun --tag-output``, Hydra's ``mpiexec -prepend-rank``, ``srun --label``, the DeepSpeed launcher's
``--enable_each_rank_log``, ...; torchrun's ``--tee 3`` only where torchrun (or no launcher) is shown.
Variants written here, and real text from a public report (horovod/horovod#585: log lines only).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers.report import report_log
from triage.analysis.settle import PER_RANK_OUTPUT, fit_launcher, per_rank_output
from triage.parsing.launcher_kind import LAUNCHERS, launcher_of


def report(text: str, tmp_path: Path) -> dict[str, Any]:
    code, out = report_log(text, tmp_path)
    assert code != 2, out.get("stderr")
    assert code not in (0, 70), out
    return out


# --- which launcher a text shows -----------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "name"), [
    ("[2025-02-03 11:20:07,118] [INFO] [launch.py:351:main] Process 901 exits successfully.", "deepspeed"),
    (("[ERROR] [launch.py:321:sigkill_handler] ['/opt/py/bin/python', '-u', 'fit.py'] exits with return code = 1"),
     "deepspeed"),
    ("torch.distributed.elastic.multiprocessing.errors.ChildFailedError:", "torchrun"),
    ('  File "/opt/py/lib/python3.10/site-packages/torch/distributed/run.py", line 806, in main', "torchrun"),
    ("[default3]:RuntimeError: boom", "torchrun"),
    (("srun: error: gpu17: task 3: Exited with exit code 1\n"
      "torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 3"), "torchrun"),
    ('  File "/opt/py/lib/python3.9/site-packages/torch/multiprocessing/spawn.py", line 69, in _wrap', "spawn"),
    ("Exception: process 1 terminated with signal SIGSEGV", "spawn"),
    ("[1,5]<stderr>:Traceback (most recent call last):", "openmpi"),
    ("[gpu-a:77121] *** Process received signal ***", "openmpi"),
    ("Primary job  terminated normally, but 1 process returned", "openmpi"),
    ("[5]<stderr>:RuntimeError: Horovod has been shut down.", "horovod"),
    ("=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES", "hydra"),
    ("[proxy:0:1@cn042] HYD_pmcd_pmip_control_cmd_cb: assert failed", "hydra"),
    ("I start it with mpiexec -n 4 python train.py and it dies", "mpi"),
    ("(RayTrainWorker pid=3120, ip=10.4.0.12) RuntimeError: CUDA error: misaligned address", "ray"),
    ("slurmstepd: error: *** STEP 88123.0 ON gpu03 CANCELLED AT 2025-01-01T00:00:00 ***", "slurm"),
    ("srun: error: gpu03: task 0: Segmentation fault", "slurm"),
    ("Traceback (most recent call last):\nRuntimeError: CUDA out of memory.", None),
])
def test_the_launcher_a_text_shows(text: str, name: str | None) -> None:
    assert launcher_of(text) == name


def test_every_launcher_has_its_own_words_and_torchrun_keeps_the_default() -> None:
    for name in LAUNCHERS:
        words = per_rank_output(name)
        assert words, name
        assert (words == PER_RANK_OUTPUT) == (name == "torchrun"), name
    assert per_rank_output(None) == PER_RANK_OUTPUT
    text = f"every rank's output ({PER_RANK_OUTPUT}), or the job run under `triage launch`, would settle it"
    assert fit_launcher(text, "slurm") == ("every rank's output (srun --label), or the job run under "
                                           "`triage launch`, would settle it")
    assert fit_launcher(text, None) == text


# --- verdicts that name no culprit, end to end ---------------------------------------------------------------

# written for this test: each a failure no line ties to a rank, under one launcher
SLURM_OOM = """\
epoch 3 step 1200 loss 1.93
slurmstepd: error: Detected 1 oom-kill event(s) in step 5512.0 cgroup. Some of your processes may have been killed by the cgroup out-of-memory handler.
"""
HYDRA_SEGV = """\
===================================================================================
=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES
=   PID 40871 RUNNING AT cn118
=   EXIT CODE: 139
=   CLEANING UP REMAINING PROCESSES
===================================================================================
"""
OMPI_BUS = """\
[cn7:51200] *** Process received signal ***
[cn7:51200] Signal: Bus error (7)
[cn7:51200] Signal code: Non-existant physical address (2)
[cn7:51200] *** End of error message ***
"""
DEEPSPEED_KILL = """\
[2025-03-01 08:10:44,301] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 70311
[2025-03-01 08:10:44,302] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 70312
[2025-03-01 08:10:47,990] [ERROR] [launch.py:321:sigkill_handler] ['/opt/env/bin/python', '-u', 'sft.py', '--local_rank=1', '--bf16'] exits with return code = -9
"""
RAY_CUDA = """\
(RayTrainWorker pid=8812, ip=10.8.1.4) RuntimeError: CUDA error: an illegal memory access was encountered
"""
PLAIN = """\
Epoch 2:  41%|####      | 210/512
Segmentation fault (core dumped)
"""
# horovod/horovod#585 (Horovod 0.14 over Open MPI 3.1, 8 GPUs of one node, a segfault after ~20 hours)
HOROVOD_585 = """\
[HOST:03599] *** Process received signal ***
[HOST:03599] Signal: Segmentation fault (11)
[HOST:03599] Signal code: Address not mapped (1)
[HOST:03599] Failing at address: (nil)
[HOST:03599] [ 0] /lib/x86_64-linux-gnu/libpthread.so.0(+0x11390)[0x7fe26f028390]
[HOST:03599] [ 1] ..../virtualenv/tf1.8_horovod_no_ofed/local/lib/python2.7/site-packages/horovod/tensorflow/mpi_lib.so(+0x34887)[0x7fe1b6d46887]
[HOST:03599] [ 2] ..../virtualenv/tf1.8_horovod_no_ofed/local/lib/python2.7/site-packages/horovod/tensorflow/mpi_lib.so(+0x366d3)[0x7fe1b6d486d3]
[HOST:03599] [ 3] /usr/lib/x86_64-linux-gnu/libstdc++.so.6(+0xb8c80)[0x7fe1ec379c80]
[HOST:03599] [ 4] /lib/x86_64-linux-gnu/libpthread.so.0(+0x76ba)[0x7fe26f01e6ba]
[HOST:03599] [ 5] /lib/x86_64-linux-gnu/libc.so.6(clone+0x6d)[0x7fe26ed543dd]
[HOST:03599] *** End of error message ***
"""


@pytest.mark.parametrize(("text", "kind", "words"), [
    (SLURM_OOM, "crash", "srun --label"),
    (HYDRA_SEGV, "crash", "mpiexec -prepend-rank"),
    (OMPI_BUS, "crash", "mpirun --tag-output"),
    (DEEPSPEED_KILL, "crash", "deepspeed --enable_each_rank_log"),
    (RAY_CUDA, "crash", "each Ray worker's own log"),
    (HOROVOD_585, "crash", "mpirun --tag-output"),
])
def test_no_culprit_asks_for_the_launchers_per_rank_output(text: str, kind: str, words: str,
                                                          tmp_path: Path) -> None:
    out = report(text, tmp_path)
    verdict = out["verdict"]
    assert verdict["kind"] == kind
    assert not verdict.get("culprit_ranks")
    assert words in verdict["summary"]
    assert PER_RANK_OUTPUT not in verdict["summary"]          # never torchrun's flag for another launcher's job
    assert not any(PER_RANK_OUTPUT in step for step in out["next_steps"])


def test_no_launcher_shown_keeps_torchruns_flag(tmp_path: Path) -> None:
    verdict = report(PLAIN, tmp_path)["verdict"]
    assert not verdict.get("culprit_ranks")
    assert PER_RANK_OUTPUT in verdict["summary"]


def test_a_named_culprit_is_left_as_it_was(tmp_path: Path) -> None:
    text = "srun: error: gpu03: task 2: Segmentation fault (core dumped)\n"
    verdict = report(text, tmp_path)["verdict"]
    assert verdict["culprit_ranks"] == [2]


# --- a network failure of no known rank: the link settles it, not which rank reported it --------------------

# pantheon5100/pid_diffusion#2 (gloo, a broadcast of the teacher's parameters at start-up)
PID_DIFFUSION_2 = """\
Traceback (most recent call last):
  File "/home/users/lchen64/lukechen/pid_diffusion/scripts/cm_train.py", line 189, in <module>
    main()
  File "/home/users/lchen64/lukechen/pid_diffusion/cm/dist_util.py", line 88, in sync_params
    dist.broadcast(p, 0)
  File "/home/users/lchen64/.conda/envs/pid-diffusion/lib/python3.9/site-packages/torch/distributed/distributed_c10d.py", line 1408, in broadcast
    work.wait()
RuntimeError: [/opt/conda/conda-bld/pytorch_1670525551200/work/third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer [10.0.1.17]:22780
"""


@pytest.mark.parametrize(("text", "settles"), [
    (("torch.distributed.DistNetworkError: The client socket has timed out after 900000ms while trying to connect to "
     "(10.1.2.3, 29511).\n"), "`nc -zv 10.1.2.3 29511`"),
    (("torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has "
     "failed. See inner exception for details.\n"), "`nc -zv MASTER_ADDR MASTER_PORT`"),
    ("RuntimeError: [/opt/gloo/transport/tcp/pair.cc:589] Read error [10.9.8.7]:51234: Connection reset by peer\n",
     "the log of the peer 10.9.8.7"),
    ("gpu-b:4411:4480 [2] NCCL WARN NET/IB : Got completion from peer 10.20.0.9<51022> with error 12, opcode 0\n",
     "the log of the peer 10.20.0.9"),
    ("node3:4411:4480 [2] include/socket.h:416 NCCL WARN Net : Connection closed by remote peer\n",
     "the log of the peer (which rank"),                    # the NCCL head names the reporter, never the peer
    ("gpu1:123:456 [0] misc/shmutils.cc:72 NCCL WARN Error: failed to extend /dev/shm/nccl-Qx81 to 9637892 bytes\n",
     "`df -h /dev/shm`"),
    ("RuntimeError: NCCL error in: /opt/pytorch/ProcessGroupNCCL.cpp:825, unhandled system error, NCCL version 2.10.3\n",
     "NCCL_DEBUG=INFO output of every rank"),
    (PID_DIFFUSION_2, "the log of the peer 10.0.1.17"),
])
def test_a_network_failure_of_no_known_rank_asks_for_what_settles_the_link(text: str, settles: str,
                                                                           tmp_path: Path) -> None:
    verdict = report(text, tmp_path)["verdict"]
    assert verdict["kind"] == "network_error"
    assert not verdict.get("culprit_ranks")
    assert settles in verdict["summary"]
    assert "which rank:" not in verdict["summary"]
    assert "node3" not in verdict["summary"].split("[")[-1]


# --- 2. a job of two ranks: one timed out, so the other never joined (nachifur/RDDM#35's class) ---------------

def _agent_two(rank: int, op: str, stopped: tuple[int, ...] = (7702,)) -> str:
    """A rank's timeout, then torchrun's agent stopping the other workers and recording the failed one."""
    lines = [(f"[E ProcessGroupNCCL.cpp:828] [Rank {rank}] Watchdog caught collective operation timeout: "
              f"WorkNCCL(SeqNum=88, OpType={op}, Timeout(ms)=600000) ran for 600091 milliseconds before timing out.")]
    lines += [f"W1105 09:12:47.300 7690 torch/distributed/elastic/multiprocessing/api.py:897] Sending process {pid} "
              "closing signal SIGTERM" for pid in stopped]
    lines.append(f"E1105 09:12:48.010 7690 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) "
                 f"local_rank: {rank} (pid: 7701) of binary: /opt/env/bin/python")
    return "\n".join(lines) + "\n"


# charent/ChatLM-mini-Chinese#47 (two GPUs: the world of 2 from NumelOut/NumelIn; no launcher line)
CHATLM_47 = """\
[rank1]:[E ProcessGroupNCCL.cpp:543] To avoid data inconsistency, we are taking the entire process down.
[rank1]:[E ProcessGroupNCCL.cpp:1182] [Rank 1] NCCL watchdog thread terminated with exception: [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=61, OpType=_ALLGATHER_BASE, NumelIn=7168, NumelOut=14336, Timeout(ms)=1800000) ran for 1800086 milliseconds before timing out.
"""


@pytest.mark.parametrize(("rank", "op"), [(0, "ALLREDUCE"), (1, "BROADCAST"), (1, "_ALLGATHER_BASE")])
def test_the_other_of_two_workers_alive_is_stuck_outside(rank: int, op: str, tmp_path: Path) -> None:
    verdict = report(_agent_two(rank, op), tmp_path)["verdict"]
    assert (verdict["kind"], verdict["culprit_ranks"]) == ("stuck_outside_collective", [1 - rank])
    assert "(inferred)" in verdict["summary"] and "pid 7702" in verdict["summary"]
    assert "ranks of other nodes" in verdict["summary"]          # what a node's agent cannot say


def test_the_other_of_a_job_of_two_with_no_sign_of_life_is_missing(tmp_path: Path) -> None:
    verdict = report(CHATLM_47, tmp_path)["verdict"]
    assert (verdict["kind"], verdict["culprit_ranks"]) == ("missing_rank", [0])
    assert "whether it died" in verdict["summary"]


@pytest.mark.parametrize("text", [
    _agent_two(1, "BROADCAST", stopped=(7702, 7703, 7704)),      # four workers: any of three could be the one
    _agent_two(1, "BROADCAST", stopped=()),                       # no other worker told
    _agent_two(1, "BROADCAST").split("\n", 1)[0] + "\n",          # one rank's timeout alone: no job size
    CHATLM_47.replace("NumelOut=14336", "NumelOut=28672"),        # a world of 4
])
def test_no_other_of_two_is_named_where_the_job_is_not_two(text: str, tmp_path: Path) -> None:
    verdict = report(text, tmp_path)["verdict"]
    assert verdict["kind"] == "hang" and not verdict["culprit_ranks"], verdict["summary"]
