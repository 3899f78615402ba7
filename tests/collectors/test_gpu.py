"""The node bundle's GPU facts on this machine (no NVML, no nvidia-smi: said, for real), and pids
mapped to ranks."""

from __future__ import annotations

import ast
import importlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from triage.bundle import CollectorStatus
from triage.collectors.common import Target
from triage.collectors.gpu import NO_FACTS, collect_gpus, with_ranks
from triage.model.gpu import GpuFacts, GpuProcess, NodeGpus, XidEvent
from triage.options import CollectSettings


def _pynvml() -> Any | None:
    try:
        return importlib.import_module("pynvml")
    except ImportError:
        return None


def _has_gpu_tools() -> bool:
    """NVML that initialises (a driver) or nvidia-smi on this machine."""
    if shutil.which("nvidia-smi") is not None:
        return True
    nv = _pynvml()
    if nv is None:
        return False
    try:
        nv.nvmlInit()
    except Exception:  # noqa: BLE001 - the binding without NVIDIA's driver
        return False
    nv.nvmlShutdown()
    return True


@pytest.mark.skipif(_has_gpu_tools(), reason="this machine has NVML or nvidia-smi")
def test_without_nvml_and_nvidia_smi_the_bundle_says_so(tmp_path: Path) -> None:
    node_out = tmp_path / "node"
    rec = collect_gpus(node_out, tmp_path, CollectSettings(), [Target(rank=0, pid=1)], None, nvml=False)
    assert rec.status == CollectorStatus.SKIPPED and rec.error == NO_FACTS
    assert rec.files == ("node/gpus.json",)
    data = json.loads((node_out / "gpus.json").read_text())
    assert data["source"] == "none" and data["note"] == "no GPU facts: NVML and nvidia-smi not found"


@pytest.mark.skipif(_has_gpu_tools() or _pynvml() is None, reason="needs nvidia-ml-py without NVIDIA's driver")
def test_the_nvml_binding_without_a_driver_is_no_gpu_not_a_failure(tmp_path: Path) -> None:
    # the real binding (the test extra installs nvidia-ml-py) on this GPU-less machine: NVML's own
    # "library not found", said, and no failure
    node_out = tmp_path / "node"
    rec = collect_gpus(node_out, tmp_path, CollectSettings(), [Target(rank=0, pid=1)], None)
    assert rec.status == CollectorStatus.SKIPPED
    assert rec.error is not None and rec.error.startswith(NO_FACTS + " (NVMLError_")
    data = json.loads((node_out / "gpus.json").read_text())
    assert data["source"] == "none" and data["note"] == rec.error


def _nvml_names(path: Path) -> set[str]:
    """The NVML names a module calls or reads: ``nv.X``/``nvml.X``/``pynvml.X`` and the string
    constants it looks up by name (``getattr(nv, "NVML_...", ...)``)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id in {"nv", "nvml", "pynvml"} and node.attr.lower().startswith("nvml"):
            names.add(node.attr)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("NVML_") \
                and node.value.isidentifier():
            names.add(node.value)
    return names


@pytest.mark.skipif(_pynvml() is None, reason="nvidia-ml-py is not installed (pip install -e '.[test]')")
def test_every_nvml_name_the_collectors_use_exists_in_the_real_binding() -> None:
    # a misspelt constant (..._DOUBLE_BIT_ECC_ERRORS) once threw away every NVML fact on a real H100
    root = Path(__file__).parents[2] / "triage"
    used = set()
    for module in ("collectors/gpu.py", "collectors/nvml_xids.py", "agent/hang/gpu_wait.py"):
        used |= _nvml_names(root / module)
    assert {"nvmlInit", "nvmlDeviceGetRetiredPages", "NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR"} <= used
    nv = _pynvml()
    assert sorted(name for name in used if not hasattr(nv, name)) == []


def test_a_nvidia_smi_that_prints_no_xml_is_a_failure_with_its_reason(tmp_path: Path) -> None:
    rec = collect_gpus(tmp_path / "node", tmp_path, CollectSettings(), [], None, nvml=None, tool="/bin/true")
    assert rec.status == CollectorStatus.FAILED and "exit 0" in (rec.error or "")


def test_processes_and_xids_of_rank_pids_are_named_by_rank() -> None:
    node = NodeGpus("nvml", (GpuFacts(0, processes=(GpuProcess(41), GpuProcess(7))),
                             GpuFacts(1, xids=(XidEvent(79, pid=41), XidEvent(43)))))
    named = with_ranks(node, {41: 3})
    assert [p.rank for p in named.gpus[0].processes] == [3, None]
    assert [x.rank for x in named.gpus[1].xids] == [3, None]


class _FailingNvml:
    """NVML as a machine with nvidia-ml-py but a failing library presents it (NVML cannot run on
    this GPU-less machine; the real nvidia-smi XML below comes from this project's H200 run)."""

    class NVMLError(Exception):
        pass

    def nvmlInit(self) -> None:
        raise self.NVMLError("Driver Not Loaded")


def test_nvml_that_fails_is_said_beside_the_nvidia_smi_facts_used_instead(tmp_path: Path) -> None:
    xml = Path(__file__).parents[1] / "parsing" / "data" / "nvidia-smi-h200-v13-busy.xml"
    tool = tmp_path / "nvidia-smi"
    tool.write_text(f"#!/bin/sh\nexec cat {xml}\n")
    tool.chmod(0o755)
    node_out = tmp_path / "node"
    rec = collect_gpus(node_out, tmp_path, CollectSettings(), [Target(rank=1, pid=562)], None,
                       nvml=_FailingNvml(), tool=str(tool))
    assert rec.status == CollectorStatus.OK
    data = json.loads((node_out / "gpus.json").read_text())
    assert data["source"] == "nvidia-smi"
    assert data["note"] == "NVML: NVMLError: Driver Not Loaded"
    assert [p["rank"] for p in data["gpus"][0]["processes"]] == [None, 1]
