"""Classes of issue 23 on the parsing side, closed as classes: each on variants written here and on real text
from public reports (log text only), end to end through ``triage report`` where the verdict is the point.

1. a ``[host:N]`` head is host:pid (Open MPI/PRRTE and others) or host:rank (triage's tag): decided over the
   whole input, and said when the input cannot tell;
2. a store client that cannot connect ("Failed to connect to master:29500", "failed to connect to [host]:port
   (errno: N - ...)"): the store's address at init is the finding, not an exception of no known rank;
3. torchrun's agent line "failed (exitcode: N) local_rank: L (pid: P)": the global rank when the input tells
   (the rendezvous result, --node_rank and --nproc_per_node), else "local rank L on host H".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers.report import report_log
from triage.parsing.crashlog import CrashLineKind, parse_crash_line
from triage.parsing.log_owners import attribute_lines, host_tag_reading
from triage.parsing.log_prefix import split_rank_prefix
from triage.parsing.node_ranks import node_ranks
from triage.parsing.rendezvous import InitWaitKind, connect_failure_reason, parse_init_line


def report(text: str, tmp_path: Path) -> tuple[int, dict[str, Any]]:
    code, data = report_log(text, tmp_path)
    return code, data.get("verdict", {})


# --- 1. [host:N]: a pid or a rank, from the whole input ----------------------------------------------------

def _reading(text: str) -> str:
    return host_tag_reading([split_rank_prefix(line) for line in text.splitlines()])


@pytest.mark.parametrize(("text", "reading"), [
    # triage's own tags: small numbers, or a dense set
    ("[n1:0] step 1\n[n1:1] step 1\n[n2:2] RuntimeError: x\n", "rank"),
    ("".join(f"[n{r // 8}:{r}] step\n" for r in range(100, 200)), "rank"),
    # the same number is a pid on a handler's line
    ("[gpu7:31377] *** Process received signal ***\n[gpu7:31377] RuntimeError: x\n", "pid"),
    # NCCL's host:pid head names the process
    (("gpu7:31377:31400 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE\n"
      "[gpu7:31377] RuntimeError: x\n"), "pid"),
    # at or above the world size an NCCL init line gives
    (("gpu7:500:501 [0] NCCL INFO comm 0x1 rank 1 nranks 4 cudaDev 0 busId 1000 - Init COMPLETE\n"
      "[gpu7:900] RuntimeError: x\n"), "pid"),
    # far above every rank another prefix names
    ("[rank0]: step 1\n[rank1]: step 1\n[gpu7:4242] RuntimeError: x\n", "pid"),
    # one big number and nothing else: cannot tell
    ("[gpu7:4242] RuntimeError: x\n", "unknown"),
])
def test_the_reading_of_host_number_heads_comes_from_the_whole_input(text: str, reading: str) -> None:
    assert _reading(text) == reading


def test_a_pid_head_before_another_rank_prefix_is_that_process_s_pid() -> None:
    prefix = split_rank_prefix("[gpu7:4121] [rank3]: RuntimeError: x")
    assert (prefix.rank, prefix.pid, prefix.host) == (3, 4121, "gpu7")
    same = split_rank_prefix("[gpu7:3] [rank3]: RuntimeError: x")       # triage's tag over torchrun's: one rank
    assert (same.rank, same.pid) == (3, None)


def test_an_undecidable_head_is_read_as_a_process_and_said(tmp_path: Path) -> None:
    code, verdict = report("[node-a:31377] Traceback (most recent call last):\n"
                           "[node-a:31377]   File \"train.py\", line 3, in <module>\n"
                           "[node-a:31377] RuntimeError: boom\n", tmp_path)
    assert code == 1 and verdict["culprit_ranks"] == [], verdict
    assert "does not tell which" in verdict["summary"] and "31377" in verdict["summary"]


def test_triage_tags_still_name_ranks(tmp_path: Path) -> None:
    text = "".join(f"[node{r // 2}:{r}] step 10 loss 1.0\n" for r in range(4))
    code, verdict = report(text + "[node1:2] RuntimeError: CUDA error: an illegal memory access was encountered\n",
                           tmp_path)
    assert code == 1 and verdict["culprit_ranks"] == [2], verdict


def test_a_pid_above_the_world_size_is_no_rank(tmp_path: Path) -> None:
    text = ("gpu7:500:501 [0] NCCL INFO comm 0x1 rank 1 nranks 4 cudaDev 0 busId 1000 - Init COMPLETE\n"
            "[gpu7:900] RuntimeError: boom\n")
    owners = attribute_lines(text.splitlines())
    assert owners[1].key == "gpu7:900" and not owners[1].unsure
    _code, verdict = report(text, tmp_path)
    assert 900 not in verdict.get("culprit_ranks", []), verdict


# real text: Open MPI's error handler in a PyTorch MPI-backend report (pytorch/pytorch#20200)
OMPI_ERRHANDLER = """[g2-nasp:24252] *** An error occurred in MPI_Reduce
[g2-nasp:24252] *** reported by process [1911816193,0]
[g2-nasp:24252] *** on communicator MPI_COMM_WORLD
[g2-nasp:24252] *** MPI_ERR_ROOT: invalid root
[g2-nasp:24252] *** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,
[g2-nasp:24252] ***    and potentially your MPI job)
[g2-nasp:24247] 1 more process has sent help message help-mpi-errors.txt / mpi_errors_are_fatal
"""
# real text: Open MPI's signal handler (openai/glow#18)
OMPI_SIGNAL = """[lhx-910:19474] *** Process received signal ***
[lhx-910:19474] Signal: Segmentation fault (11)
[lhx-910:19474] Signal code: Address not mapped (1)
[lhx-910:19474] Failing at address: (nil)
[lhx-910:19474] [ 0] /lib/x86_64-linux-gnu/libpthread.so.0(+0x11390)[0x7f13ce25a390]
[lhx-910:19474] *** End of error message ***
"""


def test_real_open_mpi_heads_are_pids(tmp_path: Path) -> None:
    assert _reading(OMPI_ERRHANDLER) == "pid" or all(
        split_rank_prefix(line).rank is None for line in OMPI_ERRHANDLER.splitlines())
    assert all(not isinstance(o.key, int) for o in attribute_lines(OMPI_ERRHANDLER.splitlines()))
    _code, verdict = report(OMPI_ERRHANDLER, tmp_path)
    assert 24252 not in verdict.get("culprit_ranks", []) and 24247 not in verdict.get("culprit_ranks", [])
    code, verdict = report(OMPI_SIGNAL, tmp_path)
    assert code == 1 and verdict["kind"] == "crash" and verdict["culprit_ranks"] == [], verdict
    assert "lhx-910" in verdict["summary"]


# --- 2. a store client that cannot connect: the store's address ---------------------------------------------

@pytest.mark.parametrize(("line", "address", "why"), [
    ("torch.distributed.DistStoreError: Failed to connect to master:29500 after 300 seconds", "master:29500",
     "timed out after 300 seconds"),
    (("[W socket.cpp:601] [c10d] The client socket has failed to connect to [node-3.cluster]:29511 (errno: 99 - "
      "Cannot assign requested address)."), "node-3.cluster:29511", "cannot assign requested address"),
    ("RuntimeError: The client socket has failed to connect to 10.9.8.7:23456 (errno: 113 - No route to host).",
     "10.9.8.7:23456", "no route to host"),
    (("[W socket.cpp:697] [c10d] The client socket has failed to connect to [WS-01]:40001 (system error: 10049 - "
      "The requested address is not valid in its context.)."), "WS-01:40001",
     "the requested address is not valid in its context."),
])
def test_a_store_client_that_cannot_connect_names_the_store(line: str, address: str, why: str,
                                                            tmp_path: Path) -> None:
    wait = parse_init_line(line)
    assert wait is not None and wait.kind is InitWaitKind.CONNECT_REFUSED and wait.address == address
    assert connect_failure_reason(line) == why
    code, verdict = report(f"{line}\n", tmp_path)
    assert code == 1 and verdict["kind"] == "network_error", verdict
    assert address in verdict["summary"] and "rank unknown" not in verdict["summary"]


def test_the_store_s_words_are_a_network_line_with_its_address() -> None:
    crash = parse_crash_line("torch.distributed.DistStoreError: Failed to connect to master:29500 after 300 seconds")
    assert crash is not None and crash.kind is CrashLineKind.NETWORK and crash.peer == "master:29500"


def test_a_hub_that_cannot_be_reached_is_no_store() -> None:
    assert parse_init_line("OSError: Failed to connect to huggingface.co:443 after 3 attempts") is None


# real text: a c10d client (netease-youdao/QAnything#381, NVIDIA-NeMo/Speech#7351)
@pytest.mark.parametrize(("line", "address"), [
    (("RuntimeError: The client socket has failed to connect to any network address of (0.0.188.125, 59771). The "
      "client socket has failed to connect to 0.0.188.125:59771 (errno: 22 - Invalid argument)."),
     "0.0.188.125:59771"),
    (("[W socket.cpp:601] [c10d] The client socket has failed to connect to [ip-26-0-146-37]:22456 (errno: 22 - "
      "Invalid argument)."), "ip-26-0-146-37:22456"),
])
def test_real_store_clients(line: str, address: str, tmp_path: Path) -> None:
    code, verdict = report(f"{line}\n", tmp_path)
    assert code == 1 and verdict["kind"] == "network_error" and address in verdict["summary"], verdict


# --- 3. an agent's local rank: its global rank when the input tells ----------------------------------------

AGENT = ("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: {local} (pid: 4242) "
         "of binary: /usr/bin/python3\n")
RESULT = """INFO:torch.distributed.elastic.agent.server.api:[default] Rendezvous complete for workers. Result:
  restart_count=0
  group_rank=1
  group_world_size=2
  local_ranks=[0, 1]
  role_ranks=[2, 3]
  global_ranks=[2, 3]
"""


@pytest.mark.parametrize(("head", "local", "rank"), [
    (RESULT, 1, 3),                                                           # the agent's own map
    ("$ torchrun --nnodes=2 --node_rank=1 --nproc_per_node=4 train.py\n", 3, 7),
    ("$ torchrun --nnodes 3 --node-rank 2 --nproc-per-node 2 train.py\n", 1, 5),
    ("", 2, 2),                                                               # one node: the local rank is the rank
])
def test_a_local_rank_maps_to_its_global_rank(head: str, local: int, rank: int, tmp_path: Path) -> None:
    code, verdict = report(head + AGENT.format(local=local), tmp_path)
    assert code == 1 and verdict["culprit_ranks"] == [rank], verdict


@pytest.mark.parametrize(("text", "host"), [
    ("$ torchrun --nnodes=2 --nproc_per_node=4 train.py\n" + AGENT.format(local=3), None),   # no node rank
    ("node7: " + AGENT.format(local=3), "node7"),                                             # pdsh's prefix
])
def test_a_local_rank_on_several_nodes_is_said_as_one(text: str, host: str | None, tmp_path: Path) -> None:
    code, verdict = report(text, tmp_path)
    assert code == 1 and verdict["culprit_ranks"] == [], verdict
    assert "local rank 3" in verdict["summary"] and "rank 3 " not in verdict["summary"].replace("local rank 3", "")
    if host:
        assert f"on host {host}" in verdict["summary"]


# real text: torchx's Ray scheduler printing the agent's rendezvous result (meta-pytorch/torchx#492)
TORCHX_RESULT = """ray/0 (CommandActor pid=494406) INFO:torch.distributed.elastic.agent.server.api:[] Rendezvous complete for workers. Result:
ray/0 (CommandActor pid=494406)   restart_count=0
ray/0 (CommandActor pid=494406)   master_addr=tristanr-arch2
ray/0 (CommandActor pid=494406)   master_port=48089
ray/0 (CommandActor pid=494406)   group_rank=0
ray/0 (CommandActor pid=494406)   group_world_size=2
ray/0 (CommandActor pid=494406)   local_ranks=[0]
ray/0 (CommandActor pid=494406)   role_ranks=[0]
ray/0 (CommandActor pid=494406)   global_ranks=[0]
"""
# real text: a one-node agent's line (THU-MIG/RepViT#65)
REPVIT = ("[2024-05-28 14:04:27,954] torch.distributed.elastic.multiprocessing.api: [WARNING] Sending process 60552 "
          "closing signal SIGTERM\n"
          "[2024-05-28 14:04:28,584] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: 1) "
          "local_rank: 2 (pid: 60554) of binary: /opt/conda/bin/python\n")


def test_real_agent_texts(tmp_path: Path) -> None:
    nodes = node_ranks(TORCHX_RESULT)
    assert nodes.global_rank(0) == 0 and nodes.nodes == 2
    code, verdict = report(REPVIT, tmp_path)
    assert code == 1 and verdict["culprit_ranks"] == [2], verdict


# --- 4. launcher prefixes: Intel MPI's proxy, torchx's role/replica ------------------------------------------

@pytest.mark.parametrize(("line", "rank", "host", "local"), [
    ("[proxy:0:1@node2] HYDU_create_process (utils/launch/launch.c:74): execvp error", None, "node2", False),
    ("[proxy:3:12@gpu-a7.cluster] main (pm/pmiserv/pmip.c:206): demux engine error", None, "gpu-a7.cluster", False),
    ("trainer/0 [1]:RuntimeError: boom", 1, "trainer/0", True),
    ("reader-2/3 [0]: RuntimeError: boom", 0, "reader-2/3", True),
])
def test_launcher_prefixes(line: str, rank: int | None, host: str, local: bool) -> None:
    prefix = split_rank_prefix(line)
    assert (prefix.rank, prefix.host, prefix.local) == (rank, host, local)
    assert not prefix.rest.startswith(("[proxy", "trainer/", "reader-"))


def test_paths_and_mpiexec_heads_are_no_launcher_prefix() -> None:
    assert split_rank_prefix("src/train.py:12: UserWarning: x").host is None
    # (the launcher's own "[mpiexec@host]" records are read with their head)
    mpiexec = "[mpiexec@node0] HYDT_bscu_wait_for_completion: one of the processes terminated badly; aborting"
    assert split_rank_prefix(mpiexec).rest == mpiexec


# real text: Intel MPI's proxies (a public PBS run's notes) and torchx's local scheduler (GRL-Image-Restoration#27)
IMPI_PROXIES = """[proxy:0:0@hpc-c11-node18.unitn.it] HYD_pmcd_pmip_control_cmd_cb (pm/pmiserv/pmip_cb.c:885): assert (!closed) failed
[proxy:0:1@hpc-c11-node23.unitn.it] HYD_pmcd_pmip_control_cmd_cb (pm/pmiserv/pmip_cb.c:885): assert (!closed) failed
"""
TORCHX = """trainer/0 [1]:[W socket.cpp:558] [c10d] The client socket has failed to connect to [::ffff:0.0.0.5]:40323 (errno: 110 - Connection timed out).
trainer/0 [0]:[W socket.cpp:558] [c10d] The client socket has failed to connect to [::ffff:0.0.0.5]:40323 (errno: 110 - Connection timed out).
trainer/0 [1]:[E socket.cpp:610] [c10d] The client socket has failed to connect to any network address of (05, 40323).
"""


def test_real_launcher_prefixes(tmp_path: Path) -> None:
    hosts = [split_rank_prefix(line).host for line in IMPI_PROXIES.splitlines()]
    assert hosts == ["hpc-c11-node18.unitn.it", "hpc-c11-node23.unitn.it"]
    assert all(split_rank_prefix(line).rank is None for line in IMPI_PROXIES.splitlines())
    code, verdict = report(TORCHX, tmp_path)
    assert code == 1 and verdict["kind"] == "network_error" and "0.0.0.5:40323" in verdict["summary"], verdict
    assert verdict["culprit_ranks"] == [], verdict


# --- 4. the host in Ray's RayTaskError(...)(pid=N, ip=A.B.C.D), attached to the failure ----------------------

RAY_VARIANT = """Traceback (most recent call last):
  File "train.py", line 40, in <module>
    trainer.fit()
ray.exceptions.RayTaskError(RuntimeError): ray::Worker.run() (pid=2951, ip=10.0.0.6, actor_id=abc)
  File "/opt/ray/worker.py", line 33, in run
    raise skipped
RuntimeError: CUDA error: an illegal memory access was encountered
"""
# real text: Ray Train's driver retelling its workers' failure, nested (ray-project/ray#40850), and the older form
# without actor_id (ray-project/ray#13953)
RAY_REAL = """ray.exceptions.RayTaskError(RuntimeError): ray::_Inner.train() (pid=83344, ip=192.168.0.107, actor_id=a9ba4794b5ce200b4efcb24c0b000000, repr=TorchTrainer)
  File "/home/binli/.local/lib/python3.9/site-packages/ray/tune/trainable/trainable.py", line 400, in train
    raise skipped from exception_cause(skipped)
ray.exceptions.RayTaskError(RuntimeError): ray::_RayTrainWorker__execute.get_next() (pid=83501, ip=192.168.0.107, actor_id=1233961e30eb797677364e690b000000, repr=<ray.train._internal.worker_group.RayTrainWorker object at 0x7f6d38468490>)
  File "/home/binli/.local/lib/python3.9/site-packages/ray/train/_internal/worker_group.py", line 33, in __execute
    raise skipped from exception_cause(skipped)
ray.exceptions.RayTaskError(RuntimeError): ray::TorchTrainable.train_buffered() (pid=881, ip=172.31.1.180)
  File "python/ray/_raylet.pyx", line 450, in ray._raylet.execute_task
"""


def test_a_ray_task_error_ties_the_failure_to_its_node(tmp_path: Path) -> None:
    owners = attribute_lines(RAY_VARIANT.splitlines())
    assert owners[-1].key == "10.0.0.6:2951" and owners[-1].host == "10.0.0.6"
    code, verdict = report(RAY_VARIANT, tmp_path)
    assert code == 1 and verdict["kind"] == "crash" and "10.0.0.6" in verdict["summary"], verdict
    owners = attribute_lines(RAY_REAL.splitlines())
    assert [o.key for o in owners] == ["192.168.0.107:83344"] * 3 + ["192.168.0.107:83501"] * 3 + \
        ["172.31.1.180:881"] * 2
