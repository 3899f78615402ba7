"""AMD's kernel GPU driver, as the kernel's log prints it ("amdgpu 0000:03:00.0: amdgpu: [gfxhub] page fault",
"[drm:amdgpu_job_timedout [amdgpu]]", "AMDGPU:"), shows a GPU (triage.parsing.gpu_words): narrowing the bare "gpu" to
words of its own (session 53, hosts named gpu-07) had dropped it, so a ROCm job's page fault in dmesg beside srun's
SIGSEGV got a CPU program's advice (gdb on a core). Its name in a path or a host's stays none."""

from __future__ import annotations

from pathlib import Path

import pytest

from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts
from triage.parsing.gpu_words import shows_gpu, source_shows_gpu

_CASES = Path(__file__).resolve().parents[1] / "realworld" / "cases"


@pytest.mark.parametrize("text", [
    "[ 812.4] amdgpu 0000:c1:00.0: amdgpu: GPU fault detected: 146 0x0c880401",
    "[drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring gfx_0.0.0 timeout, signaled seq=12, emitted seq=13",
    "AMDGPU: VM fault on address 0x7f00", "[drm] amdgpu kernel modesetting enabled.",
])
def test_the_amd_gpu_drivers_lines_show_a_gpu(text: str) -> None:
    assert shows_gpu(text) and source_shows_gpu(text.encode()), text


@pytest.mark.parametrize("text", ["/opt/amdgpu/lib/libdrm.so", "ssh user@amdgpu3", "srun: error: amdgpu07: task 3",
                                  "node-amdgpu: unreachable"])
def test_its_name_in_a_path_or_a_host_is_none(text: str) -> None:
    assert not shows_gpu(text) and not source_shows_gpu(text.encode()), text


def test_a_rocm_page_fault_in_dmesg_then_sruns_segfault_gets_a_gpus_advice() -> None:
    """ROCm/legacy-rocm-build#2494's dmesg line (its other lines, 'Memory access fault by GPU', left out), then srun."""
    dmesg = (_CASES / "ROCm__legacy-rocm-build__2494" / "log.txt").read_text().splitlines()[2]
    assert "amdgpu" in dmesg and shows_gpu(dmesg)
    srun = "srun: error: cn07: task 0: Segmentation fault (core dumped)\n"
    result = analyze(load_log_texts([("job.log", dmesg + "\n" + srun)]))
    steps = "\n".join(result.next_steps)
    assert "gdb PROGRAM CORE" not in steps and "CUDA_LAUNCH_BLOCKING" in steps, steps
