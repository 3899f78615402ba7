"""The last step after an excerpt's verdict fits the launcher the input shows (triage.analysis.advice)."""

from __future__ import annotations

import pytest

from triage.analysis.advice import excerpt_steps, next_time
from triage.analysis.settle import under_triage
from triage.model import Verdict, VerdictKind


def test_torchrun_or_no_launcher_is_told_triage_launch_in_front_of_torchrun() -> None:
    assert "`triage launch -- torchrun ...`" in next_time(None)
    assert next_time("torchrun") == next_time(None)


def test_slurm_input_is_told_the_sbatch_wrapper() -> None:
    assert "slurm/triage.sbatch" in next_time("slurm")
    assert "-- torchrun ...`" not in next_time("slurm").split("(")[0]


@pytest.mark.parametrize("launcher", ["openmpi", "hydra", "mpi", "horovod", "deepspeed", "spawn"])
def test_other_launchers_are_told_to_put_triage_in_front_of_their_own_command(launcher: str) -> None:
    step = next_time(launcher)
    assert "in front of the command that starts each node's ranks" in step
    assert "torchrun" not in step


@pytest.mark.parametrize("launcher", ["ray", "torchx"])
def test_launchers_that_start_their_own_workers_get_the_flight_recorder_only(launcher: str) -> None:
    assert under_triage(launcher) is None
    step = next_time(launcher)
    assert "triage launch" not in step and "TORCH_NCCL_TRACE_BUFFER_SIZE=2000" in step


def test_the_steps_of_a_verdict_end_with_the_fitted_step() -> None:
    verdict = Verdict(VerdictKind.HANG, "rank 3 never reached the all_reduce", culprit_ranks=(3,))
    assert excerpt_steps(verdict, "openmpi", stack="torch")[-1] == next_time("openmpi")
    # (an MPI launcher's job that names no PyTorch: an MPI program's, no Flight Recorder: test_s53_flight_recorder_fit)
    assert next_time("openmpi") not in excerpt_steps(verdict, "openmpi")
    assert excerpt_steps(verdict, None)[-1] == next_time(None)
