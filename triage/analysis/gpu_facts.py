"""Findings from the node bundles' GPU facts (pure): a rank's GPU pinned at full utilization, an
Xid whose pid is a rank's, a GPU with uncorrected ECC errors or retired pages."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from triage.analysis.ranks import rank_word
from triage.model import Finding

if TYPE_CHECKING:     # (the facts come with a run directory's bundles: a log's report leaves their module unloaded)
    from triage.model.gpu import GpuFacts, NodeGpus

FULL_UTIL = 99          # percent: the GPU was busy for the whole of NVML's last sample period


def _where(gpu: GpuFacts, host: str | None) -> str:
    return f"{gpu.label()}{f' on {host}' if host else ''}"


def _ranks(gpu: GpuFacts) -> tuple[int, ...]:
    return tuple(sorted({p.rank for p in gpu.processes if p.rank is not None}))


def _one(node: NodeGpus, gpu: GpuFacts) -> list[Finding]:
    out: list[Finding] = []
    ranks, where = _ranks(gpu), _where(gpu, node.host)
    evidence = (node.path,) if node.path else ()
    if ranks and gpu.util_gpu is not None and gpu.util_gpu >= FULL_UTIL:
        out.append(Finding("gpu_busy", ranks, f"{rank_word(ranks)} on {where}: the GPU is at {gpu.util_gpu}% "
                           "utilization (a kernel is running; one that never ends keeps it there)", evidence))
    for xid in gpu.xids:
        who = f"the pid of rank {xid.rank}" if xid.rank is not None else (
            f"pid {xid.pid}" if xid.pid is not None else "no process")
        out.append(Finding("xid", (xid.rank,) if xid.rank is not None else ranks,
                           f"Xid {xid.code} on {where}, naming {who}", evidence, xid.time))
    bad = [f"{gpu.ecc_volatile_uncorrected} uncorrected ECC errors since the driver loaded"
           if gpu.ecc_volatile_uncorrected else "",
           f"{gpu.retired_pages} retired pages" if gpu.retired_pages else "",
           "a page retirement pending (reset the GPU)" if gpu.retired_pending else "",
           f"{gpu.remapped_rows_uncorrectable} memory row{'' if gpu.remapped_rows_uncorrectable == 1 else 's'} "
           "remapped after uncorrectable errors"
           if gpu.remapped_rows_uncorrectable else "",
           "a row remapping pending (it takes effect at the next GPU reset: reset the GPU before reuse)"
           if gpu.remap_pending else "",
           "a row remapping FAILED (the GPU's spare rows are used up or the remap failed: drain the node, "
           "an RMA candidate)" if gpu.remap_failure else ""]
    if any(bad):
        out.append(Finding("gpu_ecc", ranks, f"{where}: " + ", ".join(b for b in bad if b)
                           + (f" ({rank_word(ranks)} ran on it)" if ranks else ""), evidence))
    return out


def gpu_findings(nodes: Sequence[NodeGpus]) -> list[Finding]:
    return [f for node in nodes for gpu in node.gpus for f in _one(node, gpu)]


def busy_ranks(nodes: Sequence[NodeGpus]) -> dict[int, int]:
    """Rank -> utilization (percent) of the GPU it runs on, for GPUs at full utilization."""
    return {rank: gpu.util_gpu for node in nodes for gpu in node.gpus
            if gpu.util_gpu is not None and gpu.util_gpu >= FULL_UTIL for rank in _ranks(gpu)}


def busy_note(ranks: Sequence[int], busy: dict[int, int]) -> str:
    """"; its GPU is at 100% (...)" for the ranks of ``ranks`` on a GPU at full utilization, else ""."""
    on = [r for r in ranks if r in busy]
    if not on:
        return ""
    whose = "its GPU is" if len(ranks) == 1 else f"the GPU of {rank_word(on)} is"
    return f"; {whose} at {max(busy[r] for r in on)}% (a kernel is running: one that never ends holds the rank there)"

