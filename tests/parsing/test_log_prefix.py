from __future__ import annotations

import pytest

from tests.helpers.logs import split_interleaved_log
from triage.parsing.log_prefix import split_rank_prefix


@pytest.mark.parametrize(("line", "rank", "host", "rest", "local", "pid"), [
    ("[rank3]:Traceback (most recent call last):", 3, None, "Traceback (most recent call last):", False, None),
    ("[rank12]: step 5", 12, None, "step 5", False, None),
    ("[node07:3] hello", 3, "node07", "hello", False, None),
    ("[node07:3]+continued", 3, "node07", "continued", False, None),
    ("[node07:3]   File \"x.py\", line 1", 3, "node07", "  File \"x.py\", line 1", False, None),
    ("[node07:launcher] W1122 torchrun says", None, "node07", "W1122 torchrun says", False, None),
    ("[node07:launcher] [rank2]: from torchrun", 2, "node07", "from torchrun", False, None),
    ("[ProcessGroupNCCL.cpp:616] glog-like", None, None, "[ProcessGroupNCCL.cpp:616] glog-like", False, None),
    ("[train.py:12] a logger", None, None, "[train.py:12] a logger", False, None),
    ("[gpu-a.cluster:15]:x", 15, "gpu-a.cluster", "x", False, None),
    ("[default0]:hi", 0, None, "hi", True, None),
    ("[trainer5]: hi", 5, None, "hi", True, None),
    ("3: from srun", 3, None, "from srun", False, None),
    ("  3: padded srun", 3, None, "padded srun", False, None),
    ("node07: pdsh line", None, "node07", "pdsh line", False, None),
    ("(RayTrainWorker pid=615, ip=10.0.0.6) text", None, "10.0.0.6", "text", False, 615),
    ("node07:4121:4188 [3] NCCL INFO x", None, "node07", "node07:4121:4188 [3] NCCL INFO x", False, 4121),
    ("[rank3]:node07:4121:4188 [3] NCCL INFO x", 3, "node07", "node07:4121:4188 [3] NCCL INFO x", False, 4121),
    ("node07: [rank3]: nested", 3, "node07", "nested", False, None),
    ("RuntimeError: boom", None, None, "RuntimeError: boom", False, None),
    ("torch.distributed.DistBackendError: x", None, None, "torch.distributed.DistBackendError: x", False, None),
    ("12:34:56 a clock", None, None, "12:34:56 a clock", False, None),
    ("", None, None, "", False, None),
    ("[rank", None, None, "[rank", False, None),
])
def test_split_rank_prefix(line: str, rank: int | None, host: str | None, rest: str, local: bool,
                           pid: int | None) -> None:
    prefix = split_rank_prefix(line)
    assert (prefix.rank, prefix.host, prefix.rest, prefix.local, prefix.pid) == (rank, host, rest, local, pid)


def test_split_interleaved_log() -> None:
    text = '[rank0]: starting\n[rank1]: starting\n[rank1]:node07:4121:4188 [1] NCCL INFO ncclCommInitRank comm 0x1 rank 1 nranks 2 - Init COMPLETE\nnode07:4121:4188 [1] NCCL INFO AllReduce: opCount 0 ...\nnode07:4120:4190 [0] NCCL INFO AllReduce: opCount 0 ...\n[rank0]:Traceback (most recent call last):\n[rank0]:   File "train.py", line 3, in <module>\n  continuation without prefix\n[default1]:local line\nplain line'
    groups = split_interleaved_log(text)
    assert groups[0] == ["starting", "Traceback (most recent call last):", "  File \"train.py\", line 3, in <module>",
                         "  continuation without prefix"]
    assert groups[1][:2] == ["starting",
                             "node07:4121:4188 [1] NCCL INFO ncclCommInitRank comm 0x1 rank 1 nranks 2 - Init COMPLETE"]
    assert groups[1][2] == "node07:4121:4188 [1] NCCL INFO AllReduce: opCount 0 ..."  # host:pid -> rank 1
    assert groups["node07:4120"] == ["node07:4120:4190 [0] NCCL INFO AllReduce: opCount 0 ..."]
    assert groups["local:1"] == ["local line"]
    assert groups["unknown"] == ["plain line"]


def test_interleaved_nccl_lines_mapped_by_init_lines() -> None:
    text = "n1:10:10 [0] NCCL INFO ncclCommInitRank comm 0xa rank 4 nranks 8 cudaDev 0 busId 1000 - Init COMPLETE\nn1:10:10 [0] NCCL INFO ncclCommSplit comm 0xb rank 0 nranks 2 cudaDev 0 busId 1000 parent 0xa color 2 key 0 - Init COMPLETE\nn1:10:11 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count 1 datatype 7 op 0 root 0 comm 0xb [nranks=2] stream 0x1\nn2:20:21 [1] NCCL INFO AllReduce: opCount 0 ..."
    groups = split_interleaved_log(text)
    assert len(groups[4]) == 3  # rank 4 in the 8-rank comm, not rank 0 of the split one
    assert groups["n2:20"] == ["n2:20:21 [1] NCCL INFO AllReduce: opCount 0 ..."]


def test_open_mpi_and_horovodrun_tags_are_rank_prefixes() -> None:
    assert split_rank_prefix("[1,13]<stdout>:node-1:25:582 [4] NCCL INFO x").rank == 13
    assert split_rank_prefix("[3]<stderr>:Traceback").rank == 3
    assert split_rank_prefix("[1,13]<stdout>:hello").rest == "hello"
    assert split_rank_prefix("[80746] [rank0]: x").rank == 0


def test_a_runner_stream_tag_is_stripped() -> None:   # mila-iqia/milabench#269
    tagged = split_rank_prefix(
        "dinov2-giant-nodes.cn-d003.nolog [stderr] [rank6]:[E909 09:55:35.2 ProcessGroupNCCL.cpp:1515] x")
    assert (tagged.rank, tagged.rest) == (6, "[E909 09:55:35.2 ProcessGroupNCCL.cpp:1515] x")
    assert split_rank_prefix("bench.node1 [stdout] ").rest == ""


def test_lightning_rank_prefixed_messages_carry_the_rank() -> None:
    line = split_rank_prefix("[rank: 3] Received SIGTERM: 15")
    assert (line.rank, line.rest) == (3, "Received SIGTERM: 15")


def test_a_ray_prefix_may_name_the_node_by_host_name() -> None:
    parsed = split_rank_prefix("(WorkerDict pid=1230, ip=train-42-worker-0) [rank15]:[E510 x.cpp:1] boom")
    assert (parsed.rank, parsed.pid, parsed.host) == (15, 1230, "train-42-worker-0")
    assert parsed.rest == "[E510 x.cpp:1] boom"


def test_kubectl_prefix_names_the_pod_and_no_rank() -> None:
    parsed = split_rank_prefix("[pod/llm-worker-3/trainer] 2024-05-01T10:00:00.123456789Z [rank12]:[E x.cpp:1] boom")
    assert (parsed.rank, parsed.host, parsed.rest) == (12, "llm-worker-3", "[E x.cpp:1] boom")
    bare = split_rank_prefix("[pod/llm-worker-3/trainer] node7:4121:4188 [3] NCCL INFO Bootstrap")
    assert (bare.rank, bare.host, bare.pid) == (None, "llm-worker-3", 4121)


def test_a_viewers_column_behind_a_kubectl_tag_keeps_the_rank() -> None:
    # a container's own decorations after "kubectl logs --prefix": the column and timestamp go, the rank stays
    prefix = split_rank_prefix("[pod/ddp-worker-1/main]   | 2025-02-11T08:15:03.004Z | [rank9]: RuntimeError: x")
    assert (prefix.rank, prefix.host, prefix.rest) == (9, "ddp-worker-1", "RuntimeError: x")


def test_determined_task_log_prefixes_carry_the_rank() -> None:
    # determined-ai/determined#8915's class: "[time] <container> [rank=N] || " (the time goes in textclean)
    worker = split_rank_prefix("3e1f09aa [rank=5] || [E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught x")
    assert (worker.rank, worker.local, worker.rest) == (5, False, "[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught x")
    launcher = split_rank_prefix("3e1f09aa || WARNING: torch.distributed.elastic.agent.server.api:Received 15 death")
    assert (launcher.rank, launcher.rest) == (None, "WARNING: torch.distributed.elastic.agent.server.api:Received 15 death")
    assert split_rank_prefix("[rank=2] || loss 0.5").rank == 2
    assert split_rank_prefix("a || b").rest == "a || b"


def test_viewer_line_number_before_an_srun_task_label() -> None:
    prefix = split_rank_prefix("[80412] 3:   what():  [PG 0 Rank 3] Process group watchdog thread terminated")
    assert prefix.rank == 3 and prefix.rest.startswith("  what():")
    # a bracketed rank before an iteration count is no line number
    assert split_rank_prefix("[1] 100: loss 0.31").rank != 100


def test_srun_task_label_inside_a_kubectl_pod_tag() -> None:
    prefix = split_rank_prefix("[pod/trainer-worker-1/pytorch] 5: terminate called after throwing an instance of 'x'")
    assert (prefix.rank, prefix.host) == (5, "trainer-worker-1")


def test_open_mpi_signal_handler_head_gives_a_pid_not_a_rank() -> None:   # aws/sagemaker-training-toolkit#106
    tagged = split_rank_prefix("[1,7]<stderr>:[gpu-node-3:4411] Signal: Bus error (7)")
    assert (tagged.rank, tagged.host, tagged.pid) == (7, "gpu-node-3", 4411)
    assert tagged.rest == "Signal: Bus error (7)"
    bare = split_rank_prefix("[gpu-node-3:4411] *** Process received signal ***")
    assert (bare.rank, bare.host, bare.pid) == (None, "gpu-node-3", 4411)
    assert split_rank_prefix("[gpu-node-3:5] Epoch 1 loss 0.3").rank == 5      # triage's own tag still reads


@pytest.mark.parametrize(("line", "name", "rest"), [
    ("      From worker 3:\tsignal (6): Aborted", "Julia worker 3", "signal (6): Aborted"),   # as Julia prints it
    ("      From worker 3:\t", "Julia worker 3", ""),                            # an empty line of the worker's
    # without Distributed's tab (pasted as spaces, or a Python pool's own words): a worker of a program the line does
    # not name, Julia's only where the input shows Julia elsewhere (triage.parsing.log_owners)
    ("      From worker 12:    julia: subtype.c:1887: Assertion failed.", "worker 12",
     "julia: subtype.c:1887: Assertion failed."),
    ("      From worker 3:", "worker 3", ""),
    ("From worker 2: [ Info: step 10", "worker 2", "[ Info: step 10"),
])
def test_julia_distributed_worker_prefix(line: str, name: str, rest: str) -> None:
    """Julia's Distributed prints a worker's output as "      From worker N:\t<line>": N is the worker's id (the
    master is 1), no rank; the line after it is the worker's own."""
    parsed = split_rank_prefix(line)
    assert (parsed.rank, parsed.host, parsed.rest, parsed.name) == (None, None, rest, name)



def test_open_mpis_handler_head_with_its_asterisks_gone_is_a_pid() -> None:
    """Open MPI's "[host:pid] *** Process received signal ***" with Markdown's rendering having taken every asterisk
    (plumed/plumed2#492, round 60): the head's number is the process's pid, not a rank."""
    parsed = split_rank_prefix("[seskscpg009:90376] Process received signal ")
    assert (parsed.rank, parsed.pid, parsed.host) == (None, 90376, "seskscpg009")
