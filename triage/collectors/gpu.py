"""GPU facts for a node bundle: ``node/gpus.json``.

With ``nvidia-ml-py`` (``import pynvml``; ``pip install 'torch-triage[gpu]'``): every GPU's
utilization, memory, clocks, ECC counts, retired pages and the processes on it, read from NVML.
Xid events: NVML hands events only to a listener registered before them, so under ``triage launch``
they are those its agent's listener heard since it registered, early in the job (:mod:`triage.collectors.nvml_xids`);
elsewhere (``triage dump``, ``triage collect``), those during the collector's short listen (earlier
Xids come from dmesg). Without NVML,
``nvidia-smi -q -x`` (kept as ``nvidia-smi-q.xml``) is parsed. Without either, gpus.json says
``no GPU facts: NVML and nvidia-smi not found``. Processes whose pid is a rank's are named by rank.
"""

from __future__ import annotations

import importlib
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from triage.bundle import CollectorRecord, CollectorStatus
from triage.collectors import nvml_xids
from triage.collectors.common import Target, find_tool, record, run_tool, write_private
from triage.errors import InputError
from triage.layout import BundleNodePaths, BundlePaths
from triage.model.gpu import GpuFacts, GpuProcess, NodeGpus, XidEvent
from triage.options import CollectSettings
from triage.parsing.nvidia_smi import parse_nvidia_smi_xml

NO_FACTS = "no GPU facts: NVML and nvidia-smi not found"
NVML_NO_DRIVER = (9, 12)   # NVML_ERROR_DRIVER_NOT_LOADED, NVML_ERROR_LIBRARY_NOT_FOUND (nvml.h)
XIDS_DURING = "Xid events: only those during the collection (NVML keeps no history; see dmesg)"
XID_LISTEN_S = 0.2


def _nvml() -> Any | None:
    try:
        return importlib.import_module("pynvml")
    except ImportError:
        return None


def _call(func: Any, *args: Any) -> Any:
    try:
        return func(*args)
    except Exception:  # noqa: BLE001 - NVML raises NVMLError_NotSupported and kin per field
        return None


def _mib(value: Any) -> int | None:
    return int(value) // (1 << 20) if isinstance(value, int) else None


def _count(value: Any) -> int | None:
    return int(value) if isinstance(value, int) else None


def _nvml_gpu(nv: Any, index: int, started: float | None) -> GpuFacts:
    handle = nv.nvmlDeviceGetHandleByIndex(index)
    util = _call(nv.nvmlDeviceGetUtilizationRates, handle)
    mem = _call(nv.nvmlDeviceGetMemoryInfo, handle)
    uncorrected, corrected = nv.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, nv.NVML_MEMORY_ERROR_TYPE_CORRECTED
    # the two causes are 0 and 1 in NVML's header; read by name where the binding has them (nvidia-ml-py
    # spells the second ..._DOUBLE_BIT_ECC_ERROR), so a renamed constant costs one field, never the GPU's facts
    retired = [_call(nv.nvmlDeviceGetRetiredPages, handle, getattr(nv, name, value))
               for name, value in (("NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS", 0),
                                   ("NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR", 1))]
    known = [len(r) for r in retired if r is not None]
    pending = _call(nv.nvmlDeviceGetRetiredPagesPendingStatus, handle)
    # (corrected rows, uncorrected rows, pending, failure); NotSupported before A100: None
    remapped = _call(nv.nvmlDeviceGetRemappedRows, handle)
    rows = tuple(remapped) if isinstance(remapped, (tuple, list)) and len(remapped) == 4 else (None,) * 4
    procs = _call(nv.nvmlDeviceGetComputeRunningProcesses, handle) or []
    uuid, name = _call(nv.nvmlDeviceGetUUID, handle), _call(nv.nvmlDeviceGetName, handle)
    pci = _call(nv.nvmlDeviceGetPciInfo, handle)
    return GpuFacts(
        index=index, uuid=str(uuid) if uuid else None, name=str(name) if name else None,
        bus_id=str(getattr(pci, "busId", "")) or None if pci is not None else None,
        util_gpu=getattr(util, "gpu", None), util_memory=getattr(util, "memory", None),
        memory_used_mib=_mib(getattr(mem, "used", None)), memory_total_mib=_mib(getattr(mem, "total", None)),
        sm_clock_mhz=_call(nv.nvmlDeviceGetClockInfo, handle, nv.NVML_CLOCK_SM),
        mem_clock_mhz=_call(nv.nvmlDeviceGetClockInfo, handle, nv.NVML_CLOCK_MEM),
        ecc_volatile_uncorrected=_call(nv.nvmlDeviceGetTotalEccErrors, handle, uncorrected, nv.NVML_VOLATILE_ECC),
        ecc_volatile_corrected=_call(nv.nvmlDeviceGetTotalEccErrors, handle, corrected, nv.NVML_VOLATILE_ECC),
        ecc_aggregate_uncorrected=_call(nv.nvmlDeviceGetTotalEccErrors, handle, uncorrected,
                                        nv.NVML_AGGREGATE_ECC),
        retired_pages=sum(known) if known else None,
        retired_pending=bool(pending) if pending is not None else None,
        remapped_rows_correctable=_count(rows[0]), remapped_rows_uncorrectable=_count(rows[1]),
        remap_pending=bool(rows[2]) if rows[2] is not None else None,
        remap_failure=bool(rows[3]) if rows[3] is not None else None,
        processes=tuple(GpuProcess(int(p.pid), None, _mib(getattr(p, "usedGpuMemory", None))) for p in procs),
    )


def _nvml_xids(nv: Any, count: int, started: float | None) -> dict[int, list[XidEvent]]:
    """Xid events NVML delivers during a short listen (``started``: events before it are dropped)."""
    out: dict[int, list[XidEvent]] = {}
    events = _call(nv.nvmlEventSetCreate)
    if events is None:
        return out
    try:
        for index in range(count):
            _call(nv.nvmlDeviceRegisterEvents, nv.nvmlDeviceGetHandleByIndex(index),
                  nv.nvmlEventTypeXidCriticalError, events)
        deadline = time.monotonic() + XID_LISTEN_S
        while time.monotonic() < deadline:
            data = _call(nv.nvmlEventSetWait, events, 50)
            if data is None:
                continue
            now = time.time()
            if started is not None and now < started:
                continue
            pid = getattr(data, "pid", None) if hasattr(data, "pid") else None
            found = XidEvent(int(data.eventData), int(pid) if pid else None, now)
            for index in range(count):
                if _call(nv.nvmlDeviceGetIndex, data.device) == index:
                    out.setdefault(index, []).append(found)
    finally:
        _call(nv.nvmlEventSetFree, events)
    return out


def from_nvml(nv: Any, started: float | None) -> NodeGpus:
    nv.nvmlInit()
    try:
        count = int(nv.nvmlDeviceGetCount())
        driver = _call(nv.nvmlSystemGetDriverVersion)
        gpus = [_nvml_gpu(nv, i, started) for i in range(count)]
        xids, note = _xids(nv, count, started)
        gpus = [replace(g, xids=tuple(xids.get(i, ()))) for i, g in enumerate(gpus)]
    finally:
        _call(nv.nvmlShutdown)
    return NodeGpus("nvml", tuple(gpus), driver=str(driver) if driver else None, note=note)


def _xids(nv: Any, count: int, started: float | None) -> tuple[dict[int, list[XidEvent]], str]:
    """The Xid events and what they cover: those ``triage launch``'s listener (:mod:`triage.collectors.nvml_xids`)
    heard since it registered, else the collection's short listen."""
    listener = nvml_xids.current()
    if listener is None:
        return _nvml_xids(nv, count, started), XIDS_DURING
    heard = {index: list(found) for index, found in listener.events().items()}
    since = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(listener.started or 0))
    if listener.error is None:
        return heard, (f"Xid events: every one since {since}, when triage launch's NVML listener registered "
                       f"(once the job had run {nvml_xids.AGENT_LISTEN_AFTER_S} s; earlier ones: dmesg)")
    for index, found in _nvml_xids(nv, count, started).items():
        heard.setdefault(index, []).extend(found)
    return heard, (f"Xid events: those NVML delivered from {since} until its listener failed ({listener.error}), "
                   "and during the collection (see dmesg for the others)")


def with_ranks(node: NodeGpus, ranks: Mapping[int, int]) -> NodeGpus:
    """Each GPU process and Xid whose pid is a rank's (``ranks``: pid -> rank) named by that rank."""
    gpus = []
    for gpu in node.gpus:
        procs = tuple(replace(p, rank=ranks.get(p.pid)) for p in gpu.processes)
        xids = tuple(replace(x, rank=ranks.get(x.pid)) if x.pid is not None else x for x in gpu.xids)
        gpus.append(replace(gpu, processes=procs, xids=xids))
    return replace(node, gpus=tuple(gpus))


def collect_gpus(node_out: Path, bundle: Path, options: CollectSettings, targets: Sequence[Target],
                 job_started: float | None, nvml: Any = None, tool: str | None = None) -> CollectorRecord:
    """``nvml``/``tool``: the NVML module and the nvidia-smi path (looked up when None; ``nvml=False``:
    no NVML binding)."""
    started = time.monotonic()
    paths = BundleNodePaths(node_out)
    files = [BundlePaths(bundle).relative(paths.gpus)]
    nv = (nvml or None) if nvml is not None else _nvml()
    smi = tool if tool is not None else find_tool("nvidia-smi")
    node: NodeGpus | None = None
    errors: list[str] = []
    no_driver = ""
    if nv is not None:
        try:
            node = from_nvml(nv, job_started)
        except Exception as exc:  # noqa: BLE001 - no driver, no GPU: fall back to nvidia-smi
            errors.append(f"NVML: {type(exc).__name__}: {exc}")
            if getattr(exc, "value", None) in NVML_NO_DRIVER:
                no_driver = f"{type(exc).__name__}: {exc}"
    if node is None and smi is None and no_driver:
        # nvidia-ml-py installed on a node without NVIDIA's driver: no GPU here, as without NVML
        write_private(paths.gpus, json.dumps(NodeGpus("none", note=f"{NO_FACTS} ({no_driver})").to_json(),
                                             indent=1) + "\n")
        return record("gpu", CollectorStatus.SKIPPED, None, started, files, error=f"{NO_FACTS} ({no_driver})")
    if node is None and smi is not None:
        run = run_tool([smi, "-q", "-x"], options.collector_timeout, options.max_bytes)
        if run.stdout:
            write_private(paths.nvidia_smi_xml, run.stdout)
            files.append(BundlePaths(bundle).relative(paths.nvidia_smi_xml))
        try:
            node = parse_nvidia_smi_xml(run.stdout.decode("utf-8", "replace"), f"{smi} -q -x")
        except InputError as exc:
            errors.append(exc.one_line() if run.stdout else f"nvidia-smi -q -x: exit {run.returncode}")
    if node is None:
        why = "; ".join(errors) if errors else NO_FACTS
        write_private(paths.gpus, json.dumps(NodeGpus("none", note=why).to_json(), indent=1) + "\n")
        status = CollectorStatus.SKIPPED if not errors else CollectorStatus.FAILED
        return record("gpu", status, None, started, files, error=why,
                      hint=None if errors else "pip install 'torch-triage[gpu]' on GPU nodes (nvidia-ml-py)")
    if errors and node.source != "nvml":
        # NVML was there but failed: the facts came from nvidia-smi, and the bundle says why
        node = replace(node, note="; ".join([*errors, *([node.note] if node.note else [])]))
    pids = {t.pid: t.rank for t in targets if t.pid is not None}
    node = with_ranks(node, pids)
    write_private(paths.gpus, json.dumps(node.to_json(), indent=1) + "\n")
    return record("gpu", CollectorStatus.OK, None, started, files)
