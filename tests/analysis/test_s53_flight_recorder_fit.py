"""The next time's step, `triage launch` and PyTorch's Flight Recorder (TORCH_NCCL_TRACE_BUFFER_SIZE), is a PyTorch
job's: a JAX, TensorFlow or TPU job's error and an MPI program's crash (mpirun, mpiexec, no PyTorch word) get none; a
paste that names no framework and no MPI launcher (a traceback's last line) may be a PyTorch job's and keeps it
(triage.analysis.advice.flight_recorder_fits, triage.parsing.stack_words)."""

from __future__ import annotations

from pathlib import Path

import pytest

from triage.analysis.advice import flight_recorder_fits
from triage.analysis.analyze import analyze
from triage.load.inputs import load_inputs, load_log_texts
from triage.parsing.stack_words import stack_of, stack_of_all

_CASES = Path(__file__).resolve().parents[1] / "realworld" / "cases"
_FR = "TORCH_NCCL_TRACE_BUFFER_SIZE"

_MPI_CRASH = ("$ mpirun -np 4 ./heat2d 4096\n"
              "mpirun noticed that process rank 2 with PID 4411 on node cn03 exited on signal 11 (Segmentation fault).\n")
_HYDRA_ABORT = ("[mpiexec@cn01] Sending Ctrl-C to processes as requested\n"
                "application called MPI_Abort(MPI_COMM_WORLD, 1) - process 3\n")
_JAX = ("Traceback (most recent call last):\n  File \"train.py\", line 40, in <module>\n    state = step(state, batch)\n"
        "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 17179869184 "
        "bytes.\n")
_TPU = ("Status code: Resource exhausted [4x]\n  Compilation failure: Ran out of memory in memory space hbm. Used 17.2G "
        "of 16.00G hbm. Exceeded hbm capacity by 1.2G.\n")
_TF = ("Traceback (most recent call last):\n  File \"/usr/lib/python3/site-packages/tensorflow/python/client/session.py\","
       " line 1365, in _do_call\ntensorflow.python.framework.errors_impl.InternalError: Dst tensor is not initialized.\n")


def _steps(text: str) -> str:
    return "\n".join(analyze(load_log_texts([("job.log", text)])).next_steps)


@pytest.mark.parametrize("text", [_MPI_CRASH, _HYDRA_ABORT, _JAX, _TPU, _TF])
def test_no_flight_recorder_for_another_stack(text: str) -> None:
    steps = _steps(text)
    assert _FR not in steps and "triage launch" not in steps.split("\n")[-1], steps


@pytest.mark.parametrize("text", [
    # the same MPI launcher running a PyTorch job that says so
    _MPI_CRASH.replace("./heat2d 4096", "python -m torch.distributed.run train.py"),
    "RuntimeError: Timed out initializing process group in store based barrier on rank: 0, for key: x\n",
    "[rank1]: RuntimeError: CUDA error: an illegal memory access was encountered\n",
    "ValueError: bad batch\n",                                       # names nothing: may be a PyTorch job's
])
def test_a_pytorch_job_or_one_that_names_nothing_keeps_it(text: str) -> None:
    assert _FR in _steps(text)


def test_the_stack_of_texts() -> None:
    assert stack_of("File \"/opt/torch/nn/modules/module.py\"") == "torch"
    assert stack_of("import jax; import torch_xla") == "torch"         # PyTorch wins
    assert stack_of("jax.errors.JaxRuntimeError") == "xla" and stack_of("Backend 'tpu' failed to initialize") == "xla"
    assert stack_of("tf.distribute.MirroredStrategy()") == "tensorflow"
    assert stack_of("ajaxian fluxes; stf.x; Ran out of time") is None
    assert stack_of_all([None, "xla", "torch"]) == "torch" and stack_of_all([None, "xla"]) == "xla"
    assert flight_recorder_fits("torchrun", "xla") and not flight_recorder_fits("openmpi")
    assert flight_recorder_fits(None) and flight_recorder_fits("slurm") and not flight_recorder_fits(None, "tensorflow")


@pytest.mark.parametrize("case", ["open-mpi__ompi__2661", "mpitutorial__mpitutorial__95", "LargeWorldModel__LWM__44",
                                  "tensorflow__tpu__385", "tensorflow__tensorflow__60706"])
def test_real_logs_of_other_stacks_get_no_flight_recorder(case: str) -> None:
    logs = [p for p in sorted((_CASES / case).iterdir()) if p.suffix in (".txt", ".log")]
    steps = "\n".join(analyze(load_inputs(logs)).next_steps)
    assert _FR not in steps, steps
