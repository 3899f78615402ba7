"""Session 56 (rev55 F6): a module's name in the environment's list of modules ("rocm/6.0.2" in Lmod's "Currently
Loaded Modules:" rows, a "module load cuda/12.1" command) made a CPU program's crash get a GPU runtime's advice
(ROCm's AMD_SERIALIZE_KERNEL, CUDA's CUDA_LAUNCH_BLOCKING): a cluster loads such modules for every job, and gfortran's
SIGSEGV in the program's own source is no GPU's. Now the module tools' lists and commands are no GPU word
(triage.parsing.gpu_words); a GPU word anywhere else still is."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log
from triage.parsing.gpu_words import shows_gpu, shows_rocm, source_shows_gpu

CASES = Path(__file__).resolve().parent.parent / "realworld" / "cases"

CRASH = ("+ srun -n 8 ./lbm_solver input.nml\n\nProgram received signal SIGSEGV: Segmentation fault - invalid memory "
         "reference.\n\nBacktrace for this error:\n#0  0x7f3a2c23b51f in ???\n#1  0x4031a7 in __stream_MOD_collide\n"
         "\tat /home/u/lbm/src/stream.f90:212\n#2  0x40245b in MAIN__\n\tat /home/u/lbm/src/main.f90:88\n"
         "srun: error: node0112: task 3: Segmentation fault\nsrun: Terminating StepId=1822331.0\n")

LMOD = "Currently Loaded Modules:\n  1) craype-x86-trento   2) PrgEnv-gnu/8.5.0   3) {m}   4) cray-mpich/8.1.28\n\n"
TCL = "$ module list\nCurrently Loaded Modulefiles:\n 1) gcc/11.2.0   2) {m}(default)   3) openmpi/4.1.5  \n"
LOAD = "+ module load gcc/11.2.0 {m}\n"
ML = "+ ml {m}\n"
RELOAD = "The following have been reloaded with a version change:\n  1) {m} => {m}.1\n\n"


@pytest.mark.parametrize("module", ["rocm/6.0.2", "cuda/12.1", "cudatoolkit/12.2", "nvhpc/23.9"])
@pytest.mark.parametrize("listing", [LMOD, TCL, LOAD, ML, RELOAD])
def test_a_module_list_is_no_gpu(module: str, listing: str, tmp_path: Path) -> None:
    text = listing.format(m=module) + CRASH
    assert not shows_gpu(text) and not source_shows_gpu(text.encode()) and not shows_rocm(text)
    _code, got = report_log(text, tmp_path)
    assert got["verdict"]["kind"] == "crash" and got["verdict"]["culprit_ranks"] == [3]
    steps = " ".join(got["next_steps"])
    assert "gdb PROGRAM CORE" in steps
    assert "AMD_SERIALIZE_KERNEL" not in steps and "CUDA_LAUNCH_BLOCKING" not in steps


@pytest.mark.parametrize(("words", "advice"), [
    ("Running on 4 GPUs\n", "CUDA_LAUNCH_BLOCKING"),
    ("HIP_VISIBLE_DEVICES=0,1 set\n", "AMD_SERIALIZE_KERNEL"),
    (("Memory access fault by GPU node-4 (Agent handle: 0x55d0c1a3e0b0) on address 0x7f2a3c000000. Reason: Page not "
     "present or supervisor privilege.\n"), "AMD_SERIALIZE_KERNEL"),
])
def test_a_gpu_word_outside_the_list_still_counts(words: str, advice: str, tmp_path: Path) -> None:
    text = LMOD.format(m="rocm/6.0.2") + words + CRASH
    assert shows_gpu(text) or shows_rocm(text)
    _code, got = report_log(text, tmp_path)
    assert advice in " ".join(got["next_steps"])


def test_a_module_of_the_same_name_elsewhere_counts() -> None:
    # (a path under ROCm's tree is its runtime, not a module's name)
    assert shows_rocm("/opt/rocm-6.0.2/lib/libamdhip64.so.6(+0x2a1b3c)\nmodule load rocm/6.0.2\n")
    assert shows_gpu("Modules loaded. Using device cuda:0\n")


def test_real_cuda_build_keeps_gpu_advice(tmp_path: Path) -> None:
    # parthenon-hpc-lab/parthenon#964: `module load cuda`, then a build with Kokkos_ENABLE_CUDA=ON and its run's
    # SIGSEGV: the build's own words show the GPU, not the module alone
    _code, got = report_log((CASES / "parthenon-hpc-lab__parthenon__964" / "log.txt").read_text(), tmp_path)
    assert got["verdict"]["kind"] == "crash"
    assert "CUDA_LAUNCH_BLOCKING" in " ".join(got["next_steps"])
