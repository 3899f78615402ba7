"""``nvidia-smi -q -x`` (the XML log, any DTD version) and the bundle's ``gpus.json``, parsed once.

Values such as ``"81920 MiB"``, ``"100 %"``, ``"1410 MHz"`` and ``"N/A"`` become ints or None.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping
from typing import Any

from triage.errors import InputError
from triage.lazy_regex import lazy_regex
from triage.model.gpu import GpuFacts, GpuProcess, NodeGpus, XidEvent

_NUMBER = lazy_regex(r"^\s*(-?\d+)")


def _int(text: str | None) -> int | None:
    if text is None:
        return None
    match = _NUMBER.match(text)
    return int(match.group(1)) if match else None


def _text(node: ET.Element | None, path: str) -> str | None:
    found = node.find(path) if node is not None else None
    return found.text.strip() if found is not None and found.text is not None else None


def _ecc(gpu: ET.Element, scope: str, kind: str) -> int | None:
    """Sum of the ``<scope>`` ECC counters of ``kind`` (correctable / uncorrectable); the XML
    names them ``dram_correctable``, ``sram_uncorrectable_secded`` or, in older drivers,
    ``single_bit/total`` and ``double_bit/total``."""
    section = gpu.find(f"ecc_errors/{scope}")
    if section is None:
        return None
    values: list[int] = []
    for child in section:
        name = child.tag
        if name in ("single_bit", "double_bit"):
            wanted = "correctable" if name == "single_bit" else "uncorrectable"
            number = _int(_text(child, "total")) if wanted == kind else None
        else:
            wanted = "uncorrectable" if "uncorrectable" in name else "correctable" if "correctable" in name else ""
            number = _int(child.text) if wanted == kind else None
        if number is not None:
            values.append(number)
    return sum(values) if values else None


def _retired(gpu: ET.Element) -> tuple[int | None, bool | None]:
    counts = [_int(_text(gpu, f"retired_pages/{k}/retired_count"))
              for k in ("multiple_single_bit_retirement", "single_bit_retirement", "double_bit_retirement")]
    known = [c for c in counts if c is not None]
    pending = _text(gpu, "retired_pages/pending_retirement") or _text(gpu, "retired_pages/pending_blacklist")
    return (sum(known) if known else None), (pending == "Yes" if pending in ("Yes", "No") else None)


def _yes_no(text: str | None) -> bool | None:
    return text == "Yes" if text in ("Yes", "No") else None


def _remapped(gpu: ET.Element) -> dict[str, Any]:
    """``remapped_rows`` (A100 and later; ``N/A`` on GPUs without row remapping)."""
    return {"remapped_rows_uncorrectable": _int(_text(gpu, "remapped_rows/remapped_row_unc")),
            "remapped_rows_correctable": _int(_text(gpu, "remapped_rows/remapped_row_corr")),
            "remap_pending": _yes_no(_text(gpu, "remapped_rows/remapped_row_pending")),
            "remap_failure": _yes_no(_text(gpu, "remapped_rows/remapped_row_failure"))}


def _processes(gpu: ET.Element) -> tuple[GpuProcess, ...]:
    out = []
    for info in gpu.findall("processes/process_info"):
        pid = _int(_text(info, "pid"))
        if pid is not None:
            out.append(GpuProcess(pid, _text(info, "process_name"), _int(_text(info, "used_memory"))))
    return tuple(out)


def _gpu(gpu: ET.Element) -> GpuFacts:
    retired, pending = _retired(gpu)
    return GpuFacts(
        index=_int(_text(gpu, "minor_number")), uuid=_text(gpu, "uuid"), name=_text(gpu, "product_name"),
        bus_id=gpu.get("id") or _text(gpu, "pci/pci_bus_id"),
        util_gpu=_int(_text(gpu, "utilization/gpu_util")), util_memory=_int(_text(gpu, "utilization/memory_util")),
        memory_used_mib=_int(_text(gpu, "fb_memory_usage/used")),
        memory_total_mib=_int(_text(gpu, "fb_memory_usage/total")),
        sm_clock_mhz=_int(_text(gpu, "clocks/sm_clock")), mem_clock_mhz=_int(_text(gpu, "clocks/mem_clock")),
        ecc_volatile_uncorrected=_ecc(gpu, "volatile", "uncorrectable"),
        ecc_volatile_corrected=_ecc(gpu, "volatile", "correctable"),
        ecc_aggregate_uncorrected=_ecc(gpu, "aggregate", "uncorrectable"),
        retired_pages=retired, retired_pending=pending, processes=_processes(gpu), **_remapped(gpu))


def parse_nvidia_smi_xml(text: str, source: str = "nvidia-smi -q -x") -> NodeGpus:
    """The GPUs of one ``nvidia-smi -q -x`` output; InputError when it is not that."""
    try:
        root = ET.fromstring(text)  # noqa: S314 - nvidia-smi's own output, not a stranger's file
    except ET.ParseError as exc:
        raise InputError(f"{source}: not nvidia-smi XML ({exc})") from None
    if root.tag != "nvidia_smi_log":
        raise InputError(f"{source}: not nvidia-smi XML (root <{root.tag}>)")
    gpus = tuple(_gpu(g) for g in root.findall("gpu"))
    return NodeGpus("nvidia-smi", gpus, driver=_text(root, "driver_version"))


def _process(item: Mapping[str, Any]) -> GpuProcess | None:
    pid = item.get("pid")
    if not isinstance(pid, int):
        return None
    return GpuProcess(pid, item.get("name"), item.get("used_mib"), item.get("rank"))


def _xid(item: Mapping[str, Any]) -> XidEvent | None:
    code = item.get("code")
    if not isinstance(code, int):
        return None
    return XidEvent(code, item.get("pid"), item.get("time"), item.get("rank"))


_INT_FIELDS = ("index", "util_gpu", "util_memory", "memory_used_mib", "memory_total_mib", "sm_clock_mhz",
               "mem_clock_mhz", "ecc_volatile_uncorrected", "ecc_volatile_corrected", "ecc_aggregate_uncorrected",
               "retired_pages", "remapped_rows_uncorrectable", "remapped_rows_correctable")
_BOOL_FIELDS = ("retired_pending", "remap_pending", "remap_failure")


def parse_gpus_json(data: Any, source: str, host: str | None = None) -> NodeGpus:
    """A bundle's ``gpus.json`` back into NodeGpus (odd values become None, never an error)."""
    if not isinstance(data, Mapping):
        raise InputError(f"{source}: not a gpus.json object")
    gpus = []
    for item in data.get("gpus") or ():
        if not isinstance(item, Mapping):
            continue
        ints = {k: item.get(k) if isinstance(item.get(k), int) and not isinstance(item.get(k), bool) else None
                for k in _INT_FIELDS}
        strs = {k: item.get(k) if isinstance(item.get(k), str) else None for k in ("uuid", "name", "bus_id")}
        flags = {k: item.get(k) if isinstance(item.get(k), bool) else None for k in _BOOL_FIELDS}
        procs = tuple(p for p in (_process(x) for x in item.get("processes") or () if isinstance(x, Mapping)) if p)
        xids = tuple(x for x in (_xid(x) for x in item.get("xids") or () if isinstance(x, Mapping)) if x)
        gpus.append(GpuFacts(**ints, **strs, **flags, processes=procs, xids=xids))
    note = data.get("note")
    return NodeGpus(str(data.get("source") or "none"), tuple(gpus),
                    driver=data.get("driver") if isinstance(data.get("driver"), str) else None,
                    note=note if isinstance(note, str) else None, host=host, path=source)
