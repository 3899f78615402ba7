"""Session 54: a fault ROCm's runtime tells in its own words (the HSA runtime's "Memory access fault by GPU node-N
(Agent handle: ...) on address 0x.... Reason: ...", rocclr's "aborting with error : HSA_STATUS_ERROR_...", PyTorch on
ROCm's "HIP error: ...") got CUDA's advice (CUDA_LAUNCH_BLOCKING, compute-sanitizer, Xid lines), and an
HSA_STATUS_ERROR_* with no other GPU word a CPU program's (gdb on a core); now ROCm's (AMD_SERIALIZE_KERNEL=3,
HIP_LAUNCH_BLOCKING=1, the amdgpu driver's dmesg lines, rocm-smi). gpu_words' "gpu_" / "_gpu" in a program's name
no longer counts where the name is a part of a path ("/home/me/gpu_tests/run.py"), save a conda environment's."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log
from triage.parsing.gpu_words import shows_gpu, source_shows_gpu

CASES = Path(__file__).resolve().parent.parent / "realworld" / "cases"

FAULT = ("Memory access fault by GPU node-4 (Agent handle: 0x55d0c1a3e0b0) on address 0x7f2a3c000000. Reason: Page not "
         "present or supervisor privilege.\n")
HSA = (":0:rocdevice.cpp            :2984: 65456 us: [pid:196431 tid:0x7f23] Callback: Queue 0x7f2301400000 aborting "
       "with error : HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent attempted to access memory beyond the largest "
       "legal address. code: 0x29\n")
RAISED = ("Traceback (most recent call last):\n  File \"train.py\", line 10, in <module>\n    loss.backward()\n"
          "RuntimeError: HIP error: an illegal memory access was encountered\n")


@pytest.mark.parametrize(("fault", "said"), [(FAULT, "Memory access fault by GPU node-4"),
                                             (HSA, "HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION"),
                                             (RAISED, "HIP error: an illegal memory access")])
@pytest.mark.parametrize("srun", ["", "srun: error: mi250-n3: task 5: Segmentation fault (core dumped)\n",
                                  "srun: error: mi250-n3: task 5: Aborted (core dumped)\n"])
def test_a_rocm_fault_gets_rocms_advice(fault: str, said: str, srun: str, tmp_path: Path) -> None:
    code, got = report_log("epoch 1 step 200 loss 2.31\n" + fault + srun, tmp_path)
    assert code not in (0, 2, 70)
    verdict = got["verdict"]
    assert verdict["kind"] == "crash"
    assert said in verdict["summary"]
    steps = " ".join(got["next_steps"])
    assert "AMD_SERIALIZE_KERNEL=3" in steps and "HIP_LAUNCH_BLOCKING=1" in steps and "rocm-smi" in steps
    assert "compute-sanitizer" not in steps and "gdb PROGRAM CORE" not in steps
    if srun:
        assert verdict["culprit_ranks"] == [5]


def test_hsa_errors_show_a_gpu() -> None:
    assert shows_gpu(HSA) and source_shows_gpu(HSA.encode())


def test_a_cuda_fault_keeps_cudas_advice(tmp_path: Path) -> None:
    _code, got = report_log("RuntimeError: CUDA error: an illegal memory access was encountered\n", tmp_path)
    steps = " ".join(got["next_steps"])
    assert "CUDA_LAUNCH_BLOCKING=1" in steps and "AMD_SERIALIZE_KERNEL" not in steps


def test_real_rocm_page_faults(tmp_path: Path) -> None:
    # ROCm/legacy-rocm-build#2494: two processes' page faults and the amdgpu driver's dmesg line
    _code, got = report_log((CASES / "ROCm__legacy-rocm-build__2494" / "log.txt").read_text(), tmp_path)
    assert got["verdict"]["kind"] == "crash" and "Memory access fault by GPU node-2" in got["verdict"]["summary"]
    assert "AMD_SERIALIZE_KERNEL=3" in " ".join(got["next_steps"])


@pytest.mark.parametrize("text", ["python /home/me/gpu_tests/run.py", "cd /data/my_gpu/ && ./solver",
                                  "at /scratch/run_gpus/out.f90:12", r"C:\work\gpu_runs\main.exe"])
def test_a_paths_part_with_gpu_in_a_name_is_no_gpu(text: str) -> None:
    assert not shows_gpu(text) and not source_shows_gpu(text.encode()), text


@pytest.mark.parametrize("text", ["per_gpu_train_batch_size=4", "args.num_gpus", "/envs/pytorch_gpu/bin/python",
                                  r"C:\conda\envs\tf_gpu\python.exe", "python train_gpu.py --epochs 3"])
def test_a_programs_name_with_gpu_still_shows_one(text: str) -> None:
    assert shows_gpu(text) and source_shows_gpu(text.encode()), text


def test_real_paddle_env_keeps_its_gpu(tmp_path: Path) -> None:
    # PaddlePaddle/PaddleClas#2767: the launcher's command runs the conda environment 'paddle_gpu''s python
    text = (CASES / "PaddlePaddle__PaddleClas__2767" / "log.txt").read_text()
    assert shows_gpu(text)


DMESG = ("[22340.105480] amdgpu 0000:03:00.0: amdgpu: [gfxhub] page fault (src_id:0 ring:24 vmid:8 pasid:32776, for "
         "process python3 pid 172866 thread python3 pid 172866)\n")


@pytest.mark.parametrize("line", [DMESG, DMESG.replace("[gfxhub]", "[gfxhub0] retry"),
                                  DMESG.replace("[gfxhub]", "[mmhub0] no-retry")])
def test_the_amdgpu_drivers_page_fault_before_sruns_segfault_is_the_fault(line: str, tmp_path: Path) -> None:
    got = report_log(line + "srun: error: cn07: task 0: Segmentation fault (core dumped)\n", tmp_path)[1]
    verdict = got["verdict"]
    assert verdict["kind"] == "crash" and verdict["culprit_ranks"] == [0] and "page fault" in verdict["summary"]
    assert "AMD_SERIALIZE_KERNEL=3" in " ".join(got["next_steps"])


def test_the_drivers_name_in_prose_is_no_fault(tmp_path: Path) -> None:
    _code, got = report_log("see the amdgpu docs on [gfxhub] page faults\nstep 10 loss 0.1\ntraining done\n", tmp_path)
    assert "page fault" not in got.get("verdict", {}).get("summary", "")
