"""Session 57 (fix57c item 5): an environment's variables that say where software lies, as a dump of the environment
prints them ("LD_LIBRARY_PATH=/opt/rocm/lib:/usr/lib64", "CUDA_HOME=/usr/local/cuda-12.2", "export PATH=/usr/local/
cuda/bin:$PATH", csh's "setenv CUDA_HOME ..."), were read as GPU words (triage.parsing.gpu_words): a CPU program's
crash under a cluster's environment got CUDA's (or ROCm's) advice. Now such lines are set apart as a list of modules
is; a GPU's own words elsewhere still count, and a line that runs a command after the variables is no dump."""

from __future__ import annotations

import pytest

from tests.helpers.report import report_lines as report
from triage.parsing.gpu_words import shows_gpu, shows_rocm, source_shows_gpu

_DUMP = ("+ env | sort", "HOME=/home/hpcuser", "HOSTNAME=cn0412", "CUDA_HOME=/usr/local/cuda-12.2",
         "LD_LIBRARY_PATH=/opt/rocm-6.0.2/lib:/usr/local/cuda-12.2/lib64:/opt/intel/oneapi/mkl/lib",
         "PATH=/usr/local/cuda-12.2/bin:/opt/rocm/bin:/usr/bin:/bin", "ROCM_PATH=/opt/rocm-6.0.2",
         "NCCL_ROOT=/opt/nccl", "OMP_NUM_THREADS=4")


@pytest.mark.parametrize("line", [
    "LD_LIBRARY_PATH=/opt/rocm/lib", "CUDA_HOME=/usr/local/cuda", "export PATH=/usr/local/cuda/bin:$PATH",
    'declare -x CUDA_HOME="/usr/local/cuda-11.8"', "setenv CUDA_HOME /usr/local/cuda", "ROCM_PATH=/opt/rocm-5.7.1",
    "CUDNN_DIR=/opt/cudnn-8.9", "LMOD_FAMILY_CUDA=cuda",
])
def test_a_location_variable_is_no_gpu_word(line: str) -> None:
    text = f"mpirun -np 4 ./lbm.x\n{line}\nstep 10\nSegmentation fault (core dumped)\n"
    assert not shows_gpu(text) and not shows_rocm(text)
    assert not source_shows_gpu(text.encode())


@pytest.mark.parametrize("text", [
    "CUDA_HOME=/usr/local/cuda\nRuntimeError: CUDA error: an illegal memory access was encountered\n",
    "LD_LIBRARY_PATH=/usr/lib64\ncuda:0 out of memory\n",
    "CUDA_HOME=/usr/local/cuda python train.py --gpus 4\n",        # (a command after the variable: no dump)
    "export CUDA_VISIBLE_DEVICES=0,1\n",                              # (not a location: which devices the job sees)
])
def test_a_gpus_own_words_still_count(text: str) -> None:
    assert shows_gpu(text) and source_shows_gpu(text.encode())


def test_a_c_programs_crash_under_a_dumped_environment_gets_no_gpu_step() -> None:
    result = report(*_DUMP, "+ mpirun -np 8 ./heat3d 512", "iteration 100 residual 3.2e-04",
                    "[n07:41235] *** Process received signal ***", "[n07:41235] Signal: Segmentation fault (11)",
                    "[n07:41235] Signal code: Address not mapped (1)", "[n07:41235] Failing at address: 0x10",
                    "[n07:41235] [ 1] ./heat3d(+0x4a1c)[0x401a1c]", "[n07:41235] *** End of error message ***")
    steps = " ".join(result.next_steps)
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert "ROCm" not in steps and "CUDA_LAUNCH_BLOCKING" not in steps and "compute-sanitizer" not in steps, steps
    assert "gdb" in steps
