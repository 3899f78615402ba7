"""Classes of issue 23 on the parsing side, closed as classes: each on variants written here and on real text
from public reports (log text only), end to end through ``triage report`` where the verdict is the point.

1. Hydra's (MPICH, Intel MPI) ``-prepend-rank`` heads ``[N] text``: rank N's line where the whole input shows them
   as rank prefixes, never a one-off bracketed number; Open MPI's ``--tag-output`` ``[job,rank]<stderr>:``;
2. DeepSpeed's launcher records under pdsh's ``host: `` head: the record gets the host, and the rank when
   DeepSpeed's own ``global_rank_mapping`` tells it;
3. torchx's ``role/R [L]:`` of several replicas: local rank L of replica R, mapped only where the input tells;
4. slurmstepd's own lines (``0: slurmstepd-n1: error: ...``): the node after ``slurmstepd-`` or after ``ON``;
5. a long network line keeps its set-up note (and its peer) when a summary cuts it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.report import report_log as report
from triage.parsing.crashlog import clip_keeping, parse_crash_line, shortened
from triage.parsing.log_owners import attribute_lines, prepended_ranks
from triage.parsing.log_prefix import split_rank_prefix
from triage.parsing.node_ranks import deepspeed_rank_map


def _prepended(text: str) -> bool:
    lines = text.splitlines()
    return prepended_ranks(lines, [split_rank_prefix(line) for line in lines])


# --- 1. [N] heads: Hydra's -prepend-rank, decided over the whole input ---------------------------------------

PREPEND = """[0] step 10 loss 1.0
[1] step 10 loss 1.0
[2] step 10 loss 1.0
[3] step 10 loss 1.0
[2] Traceback (most recent call last):
[2]   File "train.py", line 10, in <module>
[2]     main()
[2] RuntimeError: CUDA error: an illegal memory access was encountered
[0] [E ProcessGroupNCCL.cpp:475] Some NCCL operations have failed or timed out.
"""


@pytest.mark.parametrize(("text", "ranks"), [
    (PREPEND, True),
    # one rank's excerpt: every line is rank 5's
    ("[5] Traceback (most recent call last):\n[5]   File \"t.py\", line 1, in <module>\n[5] ValueError: x\n", True),
    # a one-off bracketed number among plain lines: no rank
    ("epoch 1\nstep 100: loss 2\n[1] 100: loss 1.0\nstep 200: loss 1.5\nRuntimeError: boom\n", False),
    # a viewer's line numbers: each heads one line
    ("".join(f"[{n}] line {n}\n" for n in range(100, 140)), False),
    # numbers far too sparse to be ranks 0..N-1
    ("[4000] a\n[4000] b\n[9000] c\n[9000] d\n", False),
])
def test_bare_bracket_heads_are_ranks_only_where_the_whole_input_says_so(text: str, ranks: bool) -> None:
    assert _prepended(text) is ranks


def test_the_world_size_bounds_the_prepended_ranks() -> None:
    init = "gpu7:500:501 [0] NCCL INFO comm 0x1 rank 1 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE\n"
    body = "[1] a\n[1] b\n[3] c\n[3] d\n"
    assert not _prepended(init + body)             # rank 3 of a 2-rank job: no rank
    assert _prepended(init.replace("nranks 2", "nranks 4") + body)


def test_prepended_ranks_name_the_failing_rank(tmp_path: Path) -> None:
    code, data = report(PREPEND, tmp_path)
    assert code == 1 and data["verdict"]["culprit_ranks"] == [2], data["verdict"]


def test_a_one_off_bracketed_number_is_no_rank(tmp_path: Path) -> None:
    text = "epoch 1 done\n[1] 100: loss 1.0\nTraceback (most recent call last):\n  File \"t.py\", line 2, in <module>\n" \
           "RuntimeError: CUDA error: an illegal memory access was encountered\n"
    owners = attribute_lines(text.splitlines())
    assert all(not isinstance(o.key, int) for o in owners)
    _code, data = report(text, tmp_path)
    assert data["verdict"]["culprit_ranks"] == [], data["verdict"]


# real text: Intel MPI's rank-prefixed start-up lines (horovod/horovod#1756)
IMPI_STARTUP = """[0] MPI startup(): Rank    Pid      Node name            Pin cpu
[0] MPI startup(): 0       80756    mlp  {96}
[0] MPI startup(): 1       80755    mlp  {120}
[0] MPI startup(): 2       80754    mlp  {144}
[0] MPI startup(): 3       80757    mlp  {168}
"""
# real text: Open MPI's --tag-output heads (aws/amazon-sagemaker-examples#2044)
OMPI_TAGGED = """Warning: Permanently added 'algo-2,10.2.107.0' (ECDSA) to the list of known hosts.
[1,0]<stderr>:
0it [00:00, ?it/s][1,8]<stderr>:
"""


def test_real_intel_mpi_and_open_mpi_heads() -> None:
    owners = attribute_lines(IMPI_STARTUP.splitlines())
    assert [o.key for o in owners] == [0] * 5 and owners[1].rest.startswith("MPI startup(): 0 ")
    assert split_rank_prefix("[1,8]<stderr>: x").rank == 8      # [jobid,rank]: the rank is the second number
    assert [o.key for o in attribute_lines(OMPI_TAGGED.splitlines())][:2] == ["unknown", 0]


# --- 2. DeepSpeed's records under pdsh's host head ------------------------------------------------------------

def _pdsh_job(local_flag: str, procs: str) -> str:
    return (f"node1: [2024-01-08 16:13:58,100] [INFO] [launch.py:163:main] global_rank_mapping=defaultdict(<class "
            f"'list'>, {procs})\n"
            "node1: step 10 loss 2.1\nnode2: step 10 loss 2.1\n"
            "node2: [2024-01-08 16:20:13,980] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 3966\n"
            f"node2: [2024-01-08 16:20:13,982] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python3', '-u', "
            f"'train.py', '{local_flag}', '--deepspeed', 'ds.json'] exits with return code = -11\n")


def test_deepspeed_map_parses_one_launch_only() -> None:
    one = "global_rank_mapping=defaultdict(<class 'list'>, {'node1': [0, 1], 'node2': [2, 3]})"
    assert deepspeed_rank_map(one + "\n" + one) == {"node1": (0, 1), "node2": (2, 3)}
    assert deepspeed_rank_map(one + "\n" + one.replace("[2, 3]", "[2]")) == {}      # two launches: no map
    assert deepspeed_rank_map("no map here") == {}


def test_a_pdsh_record_of_several_processes_names_its_host_and_its_ranks(tmp_path: Path) -> None:
    code, data = report(_pdsh_job("--local_rank=1", "{'node1': [0, 1], 'node2': [2, 3]}"), tmp_path)
    verdict = data["verdict"]
    assert code == 1 and verdict["culprit_ranks"] == [], verdict
    assert "host node2" in verdict["summary"] and "ranks 2-3" in verdict["summary"], verdict["summary"]
    assert "SIGSEGV" in verdict["summary"]


def test_a_pdsh_record_of_one_process_names_its_rank(tmp_path: Path) -> None:
    code, data = report(_pdsh_job("--local_rank=0", "{'node1': [0], 'node2': [1]}"), tmp_path)
    assert code == 1 and data["verdict"]["culprit_ranks"] == [1], data["verdict"]
    assert "node2" in json.dumps(data["verdict"]), data["verdict"]


# real text: pdsh's head before NCCL's own lines in a DeepSpeed launch (huggingface/accelerate#1317)
PDSH_NCCL = """104.171.201.172: lambda-scalar03:148966:148966 [0] NCCL INFO Using network Socket
104.171.201.171: lambda-scalar02:95756:95756 [6] NCCL INFO cudaDriverVersion 11070
104.171.201.171: lambda-scalar02:95756:95756 [6] NCCL INFO Bootstrap : Using enp161s0f0:104.171.201.171<0>
"""
# real text: DeepSpeed's launcher record (deepspeedai/DeepSpeed#4000), as one node's launcher printed it
DS_RECORD = """[2023-07-20 15:45:13,980] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 3966
[2023-07-20 15:45:13,981] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 3967
[2023-07-20 15:45:13,982] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python3', '-u', 'main.py', \
'--local_rank=1', '--deepspeed', 'deepspeed.json', '--do_train'] exits with return code = -7
"""


def test_real_pdsh_heads_and_deepspeed_record(tmp_path: Path) -> None:
    owners = attribute_lines(PDSH_NCCL.splitlines())
    assert [o.host for o in owners] == ["104.171.201.172", "104.171.201.171", "104.171.201.171"]
    # the same record under pdsh's head (as a multi-node launch prints it): the host is said with it
    prefixed = "".join(f"104.171.201.171: {line}\n" for line in DS_RECORD.splitlines())
    _code, data = report(prefixed, tmp_path)
    summary = data["verdict"]["summary"]
    assert "SIGBUS" in summary and "host 104.171.201.171" in summary, summary
    _code, plain = report(DS_RECORD, tmp_path)
    assert "SIGBUS" in plain["verdict"]["summary"] and "on host" not in plain["verdict"]["summary"]


# --- 3. torchx with several replicas ---------------------------------------------------------------------------

TORCHX = """trainer/0 [0]:step 10 loss 2.1
trainer/0 [1]:step 10 loss 2.1
trainer/1 [0]:step 10 loss 2.1
trainer/1 [1]:step 10 loss 2.1
trainer/1 [0]:Traceback (most recent call last):
trainer/1 [0]:  File "train.py", line 10, in <module>
trainer/1 [0]:RuntimeError: CUDA error: an illegal memory access was encountered
"""
RDZV = ("trainer/1 I0501 10:00:01 api.py:1] Rendezvous complete for workers. Result: restart_count=0 group_rank=1 "
        "group_world_size=2 local_ranks=[0, 1] role_ranks=[2, 3] global_ranks=[2, 3]\n")


def test_a_local_rank_of_another_replica_is_no_global_rank(tmp_path: Path) -> None:
    owners = attribute_lines(TORCHX.splitlines())
    assert owners[2].key == "trainer/1 [0]" and owners[0].key == "trainer/0 [0]"
    code, data = report(TORCHX, tmp_path)
    verdict = data["verdict"]
    assert code == 1 and verdict["culprit_ranks"] == [], verdict
    assert "local rank 0 of replica trainer/1" in verdict["summary"], verdict["summary"]


def test_the_replica_s_rendezvous_result_maps_it(tmp_path: Path) -> None:
    code, data = report(TORCHX + RDZV, tmp_path)
    assert code == 1 and data["verdict"]["culprit_ranks"] == [2], data["verdict"]


def test_one_replica_keeps_its_local_ranks(tmp_path: Path) -> None:
    one = "trainer/0 [0]:step 1\ntrainer/0 [1]:RuntimeError: CUDA error: an illegal memory access was encountered\n"
    _code, data = report(one, tmp_path)
    assert data["verdict"]["culprit_ranks"] == [1], data["verdict"]


# real text: torchx's replica heads on a failing replica (a log fixture of a torchx-launched benchmark)
TORCHX_REAL = """trainer/0 [0]:CORRECTNESS PASSED: 2/2 exact match
trainer/0 [0]:ALL ACCURACY TESTS PASSED
trainer/1 [0]:Exception in thread nixl_handshake_listener:
trainer/1 [0]:Traceback (most recent call last):
"""


def test_real_torchx_replica_heads() -> None:
    owners = attribute_lines(TORCHX_REAL.splitlines())
    assert {o.key for o in owners} == {"trainer/0 [0]", "trainer/1 [0]"}
    assert "replica trainer/1" in owners[2].note


# --- 4. slurmstepd's node ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("line", "rank", "host"), [
    ("0: slurmstepd-n1: error: Detected 1 oom_kill event in StepId=77.0.", 0, "n1"),
    ("slurmstepd-gpu-st-p4d-1: error: *** JOB 9 ON gpu-st-p4d-1 CANCELLED AT 2026-01-02T03:04:05 ***", None,
     "gpu-st-p4d-1"),
    ("3: slurmstepd: error: *** STEP 7.0 ON node12 CANCELLED AT 2026-01-02T03:04:05 DUE TO TIME LIMIT ***", 3,
     "node12"),
    ("0: slurmstepd: error: mpi/pmix: ERROR: a pmix call failed", 0, None),    # no node named: none read
])
def test_slurmstepd_names_its_node_or_none(line: str, rank: int | None, host: str | None) -> None:
    prefix = split_rank_prefix(line)
    assert (prefix.rank, prefix.host) == (rank, host)
    assert prefix.rest.startswith("slurmstepd")          # the head stays: its records are read with it


def test_slurmstepd_oom_with_its_node_head(tmp_path: Path) -> None:
    text = ("0: step 100 loss 1.2\n1: step 100 loss 1.3\n"
            "0: slurmstepd-n1: error: Detected 1 oom_kill event in StepId=77.0. Some of the step tasks have been OOM "
            "Killed.\n")
    code, data = report(text, tmp_path)
    assert code == 1 and "SIGKILL" in data["verdict"]["summary"], data["verdict"]
    assert "\"host\": \"slurmstepd" not in json.dumps(data) and "\"n1\"" in json.dumps(data)


# real text: srun --label before slurmstepd's cancellation (E3SM notes, a NERSC run)
STEPD_REAL = """223: MOSART decomp info proc =        95 begr =    192376 endr =    194400 numr =      2025
srun: Job step aborted: Waiting up to 302 seconds for job step to finish.
0: slurmstepd: error: *** STEP 16076077.0 ON nid01376 CANCELLED AT 2020-10-28T19:25:55 DUE TO TIME LIMIT ***
srun: got SIGCONT
"""


def test_real_slurmstepd_line_reads_its_node(tmp_path: Path) -> None:
    owners = attribute_lines(STEPD_REAL.splitlines())
    assert (owners[2].key, owners[2].host) == (0, "nid01376")
    code, data = report(STEPD_REAL, tmp_path)
    assert code == 1 and data["verdict"]["kind"] == "stopped", data["verdict"]
    assert "\"host\": \"slurmstepd" not in json.dumps(data)


# --- 5. a long network line keeps its set-up note and its peer ---------------------------------------------------

# real text: the store's port taken (intelligent-machine-learning/dlrover#443)
PORT_TAKEN = ("RuntimeError: The server socket has failed to listen on any local network address. The server socket "
              "has failed to bind to [::]:44796 (errno: 98 - Address already in use). The server socket has failed "
              "to bind to 0.0.0.0:44796 (errno: 98 - Address already in use).")


def test_a_summary_cut_keeps_the_set_up_note(tmp_path: Path) -> None:
    line = parse_crash_line(PORT_TAKEN)
    assert line is not None and "MASTER_PORT" in line.text
    assert "MASTER_PORT" in shortened(line.text) and len(shortened(line.text)) <= 310
    _code, data = report(f"[rank0]: step 1\n[rank1]: {PORT_TAKEN}\n", tmp_path)
    assert "MASTER_PORT" in data["verdict"]["summary"], data["verdict"]["summary"]


def test_a_long_network_line_keeps_its_peer_and_failure() -> None:
    # a variant: a long path before NCCL's connect failure and the peer it names
    line = ("gpu-a:1:2 [0] NCCL WARN misc/socket.cc:" + "/very/long/path" * 30
            + " Connect to 10.0.0.5<45763> failed : Connection refused")
    crash = parse_crash_line(line)
    assert crash is not None and crash.peer == "10.0.0.5<45763>"
    assert "10.0.0.5<45763>" in crash.text and "Connection refused" in crash.text and len(crash.text) <= 410
    assert crash.text.startswith("gpu-a:1:2 [0] NCCL WARN") and " ... " in crash.text


def test_clip_keeping_bounds() -> None:
    assert clip_keeping("short", 300, [(0, 5)]) == "short"
    text = "a" * 500 + "KEEP" + "b" * 100
    clipped = clip_keeping(text, 300, [(500, 504)])
    assert "KEEP" in clipped and len(clipped) <= 305
    assert clip_keeping(text, 300, []) == text[:300]
