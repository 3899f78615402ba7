"""Session 55's review (rev55): a framework's probe for GPUs that logs CUDA's device-selection error and goes on
without them, and srun's wait timer's state line of a task that exited cleanly.

torch's ``device_count()`` (c10/cuda/CUDAFunctions.cpp) catches cudaGetDeviceCount's error, warns ``UserWarning: CUDA
initialization: ...`` and answers 0 GPUs; TensorFlow's ``GpuDriver::Init`` (stream_executor's cuda_driver.cc) logs
``E ...] failed call to cuInit: CUDA_ERROR_...`` and places the graph on the CPU. Where the run's progress follows, the
line ended nothing (a CPU run); where nothing follows it, it stays the failure (an exception at start-up). Keras's
Progbar lines (``1/1 [=====] - 1s 1s/step``) are that progress. srun's ``srun: StepId=N.0 task 0: exited`` (code 0)
names no rank's failure in words."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import failure_verdict, report_log
from triage.parsing.progress import is_progress

_TORCH_WARN = ("/opt/conda/lib/python3.11/site-packages/torch/cuda/__init__.py:141: UserWarning: CUDA initialization: "
               "Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
               "NumCudaDevices() that might have already set an error? Error 46: all CUDA-capable devices are busy or "
               "unavailable (Triggered internally at ../c10/cuda/CUDAFunctions.cpp:108.)\n"
               "  return torch._C._cuda_getDeviceCount() > 0\n")
_TORCH_DRIVER = ("/usr/lib/python3.9/site-packages/torch/cuda/__init__.py:52: UserWarning: CUDA initialization: CUDA "
                 "driver version is insufficient for CUDA runtime version (Triggered internally at  "
                 "/pytorch/c10/cuda/CUDAFunctions.cpp:100.)\n  return torch._C._cuda_getDeviceCount() > 0\n")
_TF_BUSY = ("2024-02-11 09:01:13.417001: E external/local_xla/xla/stream_executor/cuda/cuda_driver.cc:274] failed call "
            "to cuInit: CUDA_ERROR_DEVICE_UNAVAILABLE: CUDA-capable device(s) is/are busy or unavailable\n")
_RUN = "device: cpu\nepoch 1 loss 0.693\nepoch 2 loss 0.512\nTraining finished\n"
_KERAS = ("Epoch 1/2\n1875/1875 [==============================] - 14s 7ms/step - loss: 0.2950 - accuracy: 0.9143\n"
          "Epoch 2/2\n1875/1875 [==============================] - 13s 7ms/step - loss: 0.1425 - accuracy: 0.9577\n")


@pytest.mark.parametrize("text", [_TORCH_WARN + _RUN, _TORCH_DRIVER + _RUN, _TF_BUSY + _KERAS, _TF_BUSY + _RUN])
def test_a_gpu_probes_error_the_run_went_on_past_is_no_failure(text: str, tmp_path: Path) -> None:
    code, out = report_log(text, tmp_path)
    assert code in (0, 2), out          # an all-clear, or (the driver's warning read as no error line) no verdict


@pytest.mark.parametrize("text", [
    _TORCH_WARN,                                          # nothing after it: what the paste shows of the run's end
    _TF_BUSY + "Traceback (most recent call last):\n  File \"t.py\", line 3, in <module>\n"
    "    x = tf.zeros([2]).gpu()\nRuntimeError: No GPU devices are available\n",
    # a runtime's own error of the same words (torch.cuda.set_device's raise): no probe's, read where it stands
    "[rank1]: RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable\n" + _RUN,
])
def test_a_probes_error_nothing_went_on_past_or_a_raised_one_stays_the_failure(text: str, tmp_path: Path) -> None:
    verdict = failure_verdict(text, tmp_path)
    assert verdict["kind"] == "exception", verdict


@pytest.mark.parametrize(("line", "progress"), [
    ("1/1 [==============================] - 1s 1s/step", True),
    ("  32/1875 [>.............................] - ETA: 1:23 - loss: 0.51", True),
    ("157/157 [==============================] - 2s 10ms/step - loss: nan", False),
    ("3/10 [=====>....] - ERROR: input pipeline failed", False),
])
def test_kerass_progbar_is_progress(line: str, progress: bool) -> None:
    assert is_progress(line) is progress


def test_tensorflow_255s_cpu_run_is_no_failure(tmp_path: Path) -> None:
    # tensorflow/tensorflow#255 (a comment of 2022-10-11): "My TensorFlow is working fine giving the output I want but
    # I get these errors"
    text = ("2022-10-11 06:15:44.446179: E tensorflow/stream_executor/cuda/cuda_driver.cc:271] failed call to cuInit: "
            "CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected\n"
            "2022-10-11 06:15:44.446216: I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:156] kernel driver does "
            "not appear to be running on this host (ip-172-31-27-33): /proc/driver/nvidia/version does not exist\n"
            "2022-10-11 06:15:44.447798: I tensorflow/core/platform/cpu_feature_guard.cc:193] This TensorFlow binary "
            "is optimized with oneAPI Deep Neural Network Library (oneDNN) to use the following CPU instructions in "
            "performance-critical operations:  AVX2 FMA\n"
            "To enable them in other operations, rebuild TensorFlow with the appropriate compiler flags.\n"
            "Model loaded from disk\n1/1 [==============================] - 1s 1s/step\n[0.8738158]\n"
            "SPOOFED FACE DETECTED\n")
    code, out = report_log(text, tmp_path)
    assert code == 0, out


# srun's wait timer's state line of a task that exited with code 0 is no rank's failure in words (rev55): the task
# that finished its share first while the rest ran until srun terminated them was "rank 0 raised: srun: ... task 0:
# exited"; its own record is read beside the program's abort routine only (tests/analysis/test_s55_srun_wait_stop.py)
def _timer_without_stop(task: str, launcher: str = "srun") -> str:
    return ("step 4410 dt=30.0\nrank 0: output written to out_d01\n"
            f"{launcher}: First task exited 60s ago\n"
            f"{launcher}: StepId=512.0 tasks 1-7: running\n"
            f"{launcher}: StepId=512.0 {task}: exited\n"
            f"{launcher}: launch/slurm: _step_signal: Terminating StepId=512.0\n"
            "slurmstepd: error: *** STEP 512.0 ON c3 CANCELLED AT 2026-03-02T11:20:41 ***\n"
            f"{launcher}: error: c3: tasks 1-7: Killed\n")


@pytest.mark.parametrize(("task", "launcher"), [("task 0", "srun"), ("tasks 0,5", "srun"), ("task 2", "yhrun")])
def test_a_task_the_wait_timer_saw_exit_cleanly_is_no_culprit(task: str, launcher: str, tmp_path: Path) -> None:
    verdict = failure_verdict(_timer_without_stop(task, launcher), tmp_path)
    assert verdict["culprit_ranks"] == [], verdict
    assert "raised" not in verdict["summary"], verdict


def test_a_task_that_exited_abnormally_stays_named() -> None:
    from triage.parsing.named_failure import named_failure

    assert named_failure("srun: StepId=512.0 task 3: exited abnormally") is not None
    assert named_failure("srun: StepId=512.0 task 3: exited") is None


# TensorFlow's cuInit failures with the driver API's other codes (CUDA_ERROR_UNKNOWN, CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
# read as a CUDA error, not a device-selection one) are the same probe: the CPU run that went on past them is no failure
_TF_UNKNOWN = ("2017-08-14 07:28:29.379866: E tensorflow/stream_executor/cuda/cuda_driver.cc:406] failed call to cuInit: "
               "CUDA_ERROR_UNKNOWN\n")
_TF_MISMATCH = ("2021-03-10 08:00:02.000002: E tensorflow/stream_executor/cuda/cuda_driver.cc:328] failed call to "
                "cuInit: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: system has unsupported display driver / cuda driver "
                "combination\n")


@pytest.mark.parametrize("probe", [_TF_UNKNOWN, _TF_MISMATCH])
def test_tensorflows_other_cuinit_errors_the_run_went_on_past_are_no_failure(probe: str, tmp_path: Path) -> None:
    code, out = report_log(probe + _KERAS, tmp_path)
    assert code == 0, out


@pytest.mark.parametrize("probe", [_TF_UNKNOWN, _TF_MISMATCH])
def test_tensorflows_other_cuinit_errors_nothing_went_on_past_stay_the_failure(probe: str, tmp_path: Path) -> None:
    verdict = failure_verdict(probe, tmp_path)
    assert "cuInit" in verdict["summary"], verdict


# PyCUDA's MemoryError is a GPU allocation's (pycuda._driver.MemoryError, "cuMemAlloc failed: out of memory"): no
# host-memory advice (fix55c's Python MemoryError reading), its subkind oom still
_HOST_STEP = "the host's memory ran out in that process, not a GPU's"


@pytest.mark.parametrize("line", ["pycuda._driver.MemoryError: cuMemAlloc failed: out of memory",
                                  "MemoryError: cuMemAlloc failed: out of memory",
                                  "pycuda._driver.MemoryError: cuMemHostAlloc failed: out of memory"])
def test_pycudas_memory_error_is_a_gpus_not_the_hosts(line: str, tmp_path: Path) -> None:
    code, out = report_log("Traceback (most recent call last):\n  File \"solve.py\", line 41, in <module>\n"
                           "    d_a = cuda.mem_alloc(a.nbytes)\n" + line + "\n", tmp_path)
    assert code not in (0, 2, 70), out
    assert out["verdict"]["subkind"] == "oom", out
    assert not any(_HOST_STEP in step for step in out["next_steps"]), out


def test_pythons_own_memory_error_keeps_the_hosts_advice(tmp_path: Path) -> None:
    code, out = report_log("Traceback (most recent call last):\n  File \"prep.py\", line 9, in <module>\n"
                           "    a = np.zeros((n, n))\nnumpy.core._exceptions._ArrayMemoryError: Unable to allocate "
                           "74.5 GiB for an array with shape (100000, 100000) and data type float64\n", tmp_path)
    assert code not in (0, 2, 70), out
    assert any(_HOST_STEP in step for step in out["next_steps"]), out


def test_cryosparc_124s_pycuda_allocation(tmp_path: Path) -> None:
    # cryoem-uoft/cryosparc-issues#124: a traceback through pycuda's gpuarray ending in the bare class name
    text = ("Traceback (most recent call last):\n"
            "  File \"/home/behrouzi/cryosparc/cryosparc-compute/engine/engine.py\", line 47, in ensure_allocated\n"
            "    new = cuda_core.allocate_gpu(shape, dtype, curr)\n"
            "  File \"/home/behrouzi/cryosparc/cryosparc-compute/engine/cuda_core.py\", line 81, in allocate_gpu\n"
            "    ret = gpuarray.empty(shape, dtype=dtype)\n"
            "  File \"/home/behrouzi/cryosparc/anaconda2/lib/python2.7/site-packages/pycuda/gpuarray.py\", line 209, "
            "in __init__\n"
            "    self.gpudata = self.allocator(self.size * self.dtype.itemsize)\n"
            "MemoryError: cuMemAlloc failed: out of memory\n")
    code, out = report_log(text, tmp_path)
    assert code not in (0, 2, 70), out
    assert out["verdict"]["subkind"] == "oom", out
    assert not any(_HOST_STEP in step for step in out["next_steps"]), out
