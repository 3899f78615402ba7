"""A node's GPUs as the bundle recorded them (NVML or ``nvidia-smi -q -x``): frozen facts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# a GPU at or over this utilization (0..1) while a rank waits on it runs a kernel: the wait may be a
# long kernel (watched like a busy rank); under it the GPU is idle (the wait is a hang)
GPU_BUSY_SHARE = 0.05


@dataclass(frozen=True)
class GpuProcess:
    """A process the GPU's driver lists on a device."""
    pid: int
    name: str | None = None
    used_mib: int | None = None
    rank: int | None = None                 # the rank whose pid this is, when it is one


@dataclass(frozen=True)
class XidEvent:
    """An Xid error the GPU's driver reported."""
    code: int
    pid: int | None = None                  # the process NVML blames, when it names one
    time: float | None = None               # unix time
    rank: int | None = None


@dataclass(frozen=True)
class GpuFacts:
    """What the driver said of one GPU: its name, use, memory and errors."""
    index: int | None
    uuid: str | None = None
    name: str | None = None
    bus_id: str | None = None
    util_gpu: int | None = None             # percent
    util_memory: int | None = None
    memory_used_mib: int | None = None
    memory_total_mib: int | None = None
    sm_clock_mhz: int | None = None
    mem_clock_mhz: int | None = None
    ecc_volatile_uncorrected: int | None = None
    ecc_volatile_corrected: int | None = None
    ecc_aggregate_uncorrected: int | None = None
    retired_pages: int | None = None        # single + double bit retirements (None: not reported)
    retired_pending: bool | None = None
    # row remapping (A100 and later: what replaced page retirement there): rows remapped for uncorrectable
    # and correctable errors, a remapping that waits for a GPU reset, a remapping that failed
    remapped_rows_uncorrectable: int | None = None
    remapped_rows_correctable: int | None = None
    remap_pending: bool | None = None
    remap_failure: bool | None = None
    processes: tuple[GpuProcess, ...] = ()
    xids: tuple[XidEvent, ...] = ()

    def label(self) -> str:
        return f"GPU {self.index}" if self.index is not None else f"GPU {self.bus_id or self.uuid or '?'}"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: getattr(self, k) for k in self.__dataclass_fields__
                               if k not in ("processes", "xids")}
        out["processes"] = [p.__dict__ for p in self.processes]
        out["xids"] = [x.__dict__ for x in self.xids]
        return out


@dataclass(frozen=True)
class NodeGpus:
    """``source``: nvml | nvidia-smi | none; ``note``: why there are no facts, or what is missing."""

    source: str
    gpus: tuple[GpuFacts, ...] = ()
    driver: str | None = None
    note: str | None = None
    host: str | None = None
    path: str | None = None                 # gpus.json it was read from
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "driver": self.driver, "note": self.note,
                "gpus": [g.to_json() for g in self.gpus], **self.extra}
