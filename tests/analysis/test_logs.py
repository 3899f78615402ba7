"""The log path: ranks, collectives, warnings and kernel lines recovered from pasted logs.

NCCL needs GPUs, so the NCCL lines here are written in the shape formats.md documents
(NCCL 2.21 INIT + COLL lines); the torchrun output test uses a real job's log (goldens).
"""

from __future__ import annotations

from pathlib import Path

from triage.analysis.analyze import analyze
from triage.load.inputs import load_inputs
from triage.model import VerdictKind

GOLDEN = Path(__file__).resolve().parent.parent / "golden"


def _nccl_log(world: int, culprit: int) -> str:
    lines = []
    for r in range(world):
        host = f"node{r // 2:02d}"
        lines.append(f"[rank{r}]:{host}:{4100 + r}:{4200 + r} [{r % 2}] NCCL INFO comm 0x55d0c3a{r} rank {r} "
                     f"nranks {world} cudaDev {r % 2} busId {r}000 commId 0xabc - Init COMPLETE")
    for op_count in range(3):
        for r in range(world):
            host = f"node{r // 2:02d}"
            name, count, dtype = "AllReduce", 262144, 7
            if op_count == 2 and r == culprit:
                name, count, dtype = "AllGather", 8, 9
            lines.append(f"[rank{r}]:{host}:{4100 + r}:{4200 + r} [{r % 2}] NCCL INFO {name}: opCount {op_count:x} "
                         f"sendbuff 0x7f01a0000000 recvbuff 0x7f01a0000000 count {count} datatype {dtype} op 0 "
                         f"root 0 comm 0x55d0c3a{r} [nranks={world}] stream 0x55d0c1f0")
    lines.append(f"[rank{culprit}]:node0{culprit // 2}:{4100 + culprit}:{4200 + culprit} [1] "
                 "transport/net_ib.cc:1296 NCCL WARN NET/IB : Got completion with error 12")
    lines.append("[ 1234.567890] NVRM: Xid (PCI:0000:3b:00): 79, pid=4103, name=python, GPU has fallen off the bus.")
    return "\n".join(lines) + "\n"


def test_interleaved_nccl_log_names_the_culprit(tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    log.write_text(_nccl_log(8, 3))
    report = analyze(load_inputs([log]))
    assert report.verdict.kind is VerdictKind.COLLECTIVE_MISMATCH
    assert report.verdict.culprit_ranks == (3,)
    assert report.verdict.summary.startswith("HANG: rank 3 (node01) called all_gather(count=8, bfloat16) at seq 3")
    assert "ranks 0-2,4-7 called all_reduce(count=262144, float32)" in report.verdict.summary
    kinds = {f.kind for f in report.findings}
    assert {"nccl_warn", "xid"} <= kinds
    assert any("fallen off the bus" in f.detail or "79" in f.detail for f in report.findings if f.kind == "xid")


def test_log_input_order_does_not_matter(tmp_path: Path) -> None:
    text = _nccl_log(4, 1).splitlines()
    a, b = tmp_path / "a.log", tmp_path / "b.log"
    a.write_text("\n".join(text[::2]) + "\n")
    b.write_text("\n".join(text[1::2]) + "\n")
    one = analyze(load_inputs([a, b])).verdict
    two = analyze(load_inputs([b, a])).verdict
    assert one.culprit_ranks == two.culprit_ranks == (1,)
    assert one.summary == two.summary


def test_real_torchrun_log_of_a_crash() -> None:
    report = analyze(load_inputs([GOLDEN / "crash/job.log"]))
    assert report.verdict.kind is VerdictKind.CRASH
    assert report.verdict.culprit_ranks == (0,)


def test_watchdog_messages_same_seqnum_different_optype_is_a_desync(tmp_path: Path) -> None:
    lines = []
    for r in range(4):
        op, numel = ("_ALLGATHER_BASE", 8) if r == 2 else ("ALLREDUCE", 262144)
        lines.append(f"[rank{r}]:[E1122 10:00:00.123456789 ProcessGroupNCCL.cpp:632] [PG ID 0 PG GUID 0(default_pg) "
                     f"Rank {r}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1542, OpType={op}, "
                     f"NumelIn={numel}, NumelOut={numel}, Timeout(ms)=600000) ran for 600012 milliseconds before "
                     "timing out.")
    log = tmp_path / "pasted.log"
    log.write_text("\n".join(lines) + "\n")
    report = analyze(load_inputs([log]))
    assert report.verdict.kind is VerdictKind.COLLECTIVE_MISMATCH
    assert report.verdict.culprit_ranks == (2,)
    assert report.verdict.seq == 1542
    assert "rank 2 called all_gather(count=8) at seq 1542" in report.verdict.summary
    assert any(f.kind == "watchdog_timeout" and f.ranks == (2,) for f in report.findings)
