"""Pasted logs are excerpts: what triage concludes from partial evidence (load + analysis, in
process; the lines are in the formats PyTorch, torchrun and NCCL print, as pasted in bug reports)."""

from __future__ import annotations

import json

from tests.helpers.report import report_lines as report

WD = ("[rank{r}]:[E1001 10:00:0{r}.123456 {pid} ProcessGroupNCCL.cpp:616] [{pg}Rank {r}] Watchdog caught collective "
      "operation timeout: WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn={n}, NumelOut={out}, Timeout(ms)=600000) ran "
      "for 600010 milliseconds before timing out.")


def wd(rank: int, seq: int = 1580, op: str = "ALLREDUCE", n: int = 1024, out: int | None = None, pg: str = "") -> str:
    return WD.format(r=rank, pid=1000 + rank, pg=pg, seq=seq, op=op, n=n, out=n if out is None else out)


def verdict(*lines: str) -> tuple[str, list[int]]:
    data = report(*lines).to_json()["verdict"]
    return data["kind"], data["culprit_ranks"]


def test_an_oom_then_timeouts_names_the_oom_rank_and_calls_the_timeouts_collateral() -> None:
    result = report(
        wd(0), wd(1),
        "[rank5]: Traceback (most recent call last):",
        '[rank5]:   File "/workspace/train.py", line 120, in <module>',
        "[rank5]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 5 has a total "
        "capacity of 79.10 GiB of which 1.06 GiB is free.",
        "[rank1]: RuntimeError: [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1580, "
        "OpType=ALLREDUCE, NumelIn=1024, NumelOut=1024, Timeout(ms)=600000) ran for 600010 milliseconds.")
    assert (result.verdict.kind.value, result.verdict.culprit_ranks) == ("exception", (5,))
    assert "CUDA out of memory" in result.verdict.summary


def test_a_rank_absent_from_an_excerpt_is_not_missing() -> None:
    kind, culprits = verdict(wd(0, op="_ALLGATHER_BASE", n=32, out=256), wd(1, op="_ALLGATHER_BASE", n=32, out=256))
    assert (kind, culprits) == ("hang", [])
    data = report(wd(0, op="_ALLGATHER_BASE", n=32, out=256)).to_json()
    assert data["extra"]["coverage"]["world_size"] == 8          # NumelOut / NumelIn of the default group
    assert "not in this input" in data["verdict"]["summary"]
    assert all(f["kind"] != "missing_rank" for f in data["findings"])


def test_the_world_size_is_what_the_log_says_never_the_highest_rank_plus_one() -> None:
    data = report(wd(0), wd(6)).to_json()
    assert data["extra"]["coverage"]["world_size"] is None
    assert "does not say how many ranks" in data["extra"]["coverage"]["summary"]
    data = report("world_size=16 local_rank=0", wd(0), wd(6)).to_json()
    assert data["extra"]["coverage"]["world_size"] == 16


def test_a_rank_shown_doing_other_work_while_the_others_time_out_is_stuck_outside() -> None:
    result = report(wd(0, seq=12), wd(1, seq=12), "[rank2]: saving checkpoint to /ckpt/step_1200 ...", wd(3, seq=12))
    assert (result.verdict.kind.value, result.verdict.culprit_ranks) == ("stuck_outside_collective", (2,))
    assert "saving checkpoint" in result.verdict.summary


def test_process_groups_are_named_as_the_log_names_them() -> None:
    result = report(wd(0, pg="PG 1 "), wd(1, pg="PG 1 "))
    assert result.verdict.process_group == "1"
    result = report(wd(0, pg="PG ID 3 PG GUID 3(dp_group) "), wd(1, pg="PG ID 3 PG GUID 3(dp_group) "))
    assert result.verdict.process_group == "3"


def test_sigkill_in_a_torchrun_summary_points_at_the_oom_killer() -> None:
    result = report(
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 3 (pid: 1237) of "
        "binary: /usr/bin/python3")
    assert (result.verdict.kind.value, result.verdict.culprit_ranks) == ("crash", (3,))
    assert "OOM killer" in result.verdict.summary and any("dmesg" in s for s in result.next_steps)


def test_detail_mismatch_blames_the_minority_and_seq_only_blames_no_one() -> None:
    fp = "CollectiveFingerPrint(SequenceNumber={s}, OpType={op}, TensorShape=[10], TensorDtypes=Float)"
    line = ("RuntimeError: Detected mismatch between collectives on ranks. Rank {a} is running collective: "
            + fp.replace("{s}", "{sa}").replace("{op}", "{opa}") + ", but Rank {b} is running collective: "
            + fp.replace("{s}", "{sb}").replace("{op}", "{opb}") + ".")
    kind, culprits = verdict(line.format(a=0, sa=23, opa="ALLREDUCE", b=2, sb=23, opb="BROADCAST"))
    assert (kind, culprits) == ("collective_mismatch", [2])
    result = report(line.format(a=1, sa=5, opa="BARRIER", b=0, sb=4, opb="BARRIER"))
    assert (result.verdict.kind.value, result.verdict.culprit_ranks) == ("collective_mismatch", ())
    assert result.verdict.subkind is not None and result.verdict.subkind.value == "seq"
    assert "false positive" in result.verdict.summary


def test_a_failure_line_of_no_known_rank_is_reported_with_rank_unknown() -> None:
    result = report("RuntimeError: CUDA error: an illegal memory access was encountered", wd(0), wd(1))
    assert (result.verdict.kind.value, result.verdict.culprit_ranks) == ("crash", ())
    assert "rank unknown" in result.verdict.summary


def test_nccl_ops_without_init_lines_are_diffed_per_process() -> None:
    line = ("{h}:{p}:{t} [{g}] NCCL INFO {op}: opCount 28b sendbuff 0x7f1 recvbuff 0x7f1 count 1024 datatype 7 op 0 "
            "root 0 comm 0x55a{p} [nranks=4] stream 0x55b1")
    result = report(*(line.format(h=h, p=p, t=p + 100, g=g, op="Broadcast" if p == 2002 else "AllReduce")
                      for h, p, g in (("node1", 1001, 0), ("node1", 1002, 1), ("node2", 2001, 0), ("node2", 2002, 1))))
    assert result.verdict.kind.value == "collective_mismatch"
    assert "node2:2002 (GPU 1)" in result.verdict.summary and result.verdict.culprit_host == "node2"


def test_failure_evidence_is_never_an_all_clear_and_the_json_is_strict() -> None:
    result = report("node1:1001:1101 [0] NCCL WARN NET/Socket : peer 10.0.0.2<40000> message truncated")
    assert result.verdict.kind.value != "no_problem_found"
    text = json.dumps(result.to_json(), allow_nan=False)
    assert "Infinity" not in text and "NaN" not in text


def test_a_network_failure_nccl_reports_names_its_host_and_gpu_when_no_rank_is_known() -> None:
    result = report("gpu-node-3:4001:4099 [2] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer "
                    "10.0.0.5<50532> with status=12 opcode=0 len=0 vendor err 129 (Recv)",
                    "gpu-node-3:4001:4099 [2] NCCL INFO transport/net.cc:1298 -> 6")
    assert (result.verdict.kind.value, result.verdict.culprit_ranks) == ("network_error", ())
    assert result.verdict.culprit_host == "gpu-node-3"
    assert "gpu-node-3:4001 (GPU 2)" in result.verdict.summary and "rank unknown" in result.verdict.summary


def test_a_line_that_looks_known_but_does_not_parse_is_listed_as_unparsed() -> None:
    data = report(wd(0), "[rank1]: Watchdog caught collective operation timeout: WorkNCCL(garbled").to_json()
    assert any("garbled" in line for line in data["extra"]["unparsed"])


OPTS = ("TensorDeviceTypes=TensorOptions(dtype=float (default), device=cpu, layout=Strided (default), "
        "requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))")


def test_a_mismatch_message_printed_over_several_lines_is_read_whole() -> None:
    result = report(
        "[rank0]: RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running collective:",
        "[rank0]: CollectiveFingerPrint(OpType=ALLREDUCE, TensorShape=[20, 10], TensorDtypes=Float,",
        f"[rank0]: {OPTS}),", "[rank0]:", "[rank0]: but Rank 1 is running collective:",
        "[rank0]: CollectiveFingerPrint(OpType=REDUCE, TensorShape=[20, 10], TensorDtypes=Float,", f"[rank0]: {OPTS}).")
    assert result.verdict.kind.value == "collective_mismatch" and result.verdict.subkind is not None
    assert result.verdict.subkind.value == "op" and "reduce" in result.verdict.summary


def test_an_older_one_sided_mismatch_names_no_culprit() -> None:
    result = report("RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running inconsistent "
                    f"collective: CollectiveFingerPrint(OpType=BROADCAST, TensorShape=[34112], TensorDtypes=Float, {OPTS}")
    assert (result.verdict.kind.value, result.verdict.culprit_ranks) == ("collective_mismatch", ())


def test_an_upper_case_rank_prefix_and_a_missing_comma_are_tolerated() -> None:
    kind, culprits = verdict(
        "[RANK 1] 2026-05-19 10:10:29,701 [ERROR] GPU circuit breaker OPEN: cuda_error - Detected mismatch between "
        "collectives on ranks. Rank 1 is running collective: CollectiveFingerPrint(SequenceNumber=101, "
        f"OpType=ALLGATHER, TensorShape=[1], TensorDtypes=Long, {OPTS}), but Rank 7 is running collective: "
        "CollectiveFingerPrint(SequenceNumber=0OpType=REDUCE).Collectives differ in the following aspects:   "
        "Sequence number: 101vs 0  Op type: ALLGATHERvs REDUCE")
    assert (kind, culprits) == ("collective_mismatch", [7])


def test_a_deepspeed_launcher_record_of_one_process_is_the_culprit() -> None:
    kind, culprits = verdict(
        "[2023-04-14 13:11:27,879] [INFO] [launch.py:428:sigkill_handler] Killing subprocess 13266",
        "[2023-04-14 13:11:27,885] [ERROR] [launch.py:434:sigkill_handler] ['/usr/bin/python3', '-u', 'main.py', "
        "'--local_rank=0', '--data_path', 'Dahoas/rm-static', '--zero_stage', '2', '--deepspeed', '--output_dir', "
        "'/content/125m'] exits with return code = -9")
    assert (kind, culprits) == ("crash", [0])
    assert "OOM killer" in report("[ERROR] [launch.py:434:sigkill_handler] ['python', 'main.py', '--local_rank=0'] "
                                  "exits with return code = -9").verdict.summary


def test_a_launcher_failure_of_no_known_rank_is_still_a_failure() -> None:
    result = report("[ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python3', '-u', 'train.py'] "
                    "exits with return code = 1")
    assert result.verdict.kind.value != "no_problem_found" and not result.verdict.culprit_ranks
    assert "exited with code 1" in result.verdict.summary
