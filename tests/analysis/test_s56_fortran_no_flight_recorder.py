"""Session 56 (rev56 H7): a Fortran program's crash under srun (gfortran's "Program received signal SIGSEGV" and its
backtrace in a module procedure, srun's "task 3: Segmentation fault"), with no PyTorch nor NCCL word, got PyTorch's
next-time step (`triage launch` in front of torchrun, the Flight Recorder): a paste that names no framework kept it.
Now a Fortran program's own runtime words are a stack of their own, "fortran" (triage.parsing.stack_words), and the
Flight Recorder's step fits PyTorch's jobs only (triage.analysis.advice.flight_recorder_fits); PyTorch's words win
where both show (a torch job with a Fortran extension)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log
from triage.parsing.stack_words import stack_of

GFORTRAN = ("\nProgram received signal SIGSEGV: Segmentation fault - invalid memory reference.\n\n"
            "Backtrace for this error:\n#0  0x7f1c2a0c3d21 in ???\n"
            "#1  0x4017a3 in __stream_MOD_collide\n\tat /home/u/lbm/src/stream.f90:212\n"
            "#2  0x401f10 in MAIN__\n\tat /home/u/lbm/src/main.f90:88\n"
            "srun: error: node07: task 3: Segmentation fault (core dumped)\n")


@pytest.mark.parametrize("text", [
    GFORTRAN,
    ("forrtl: severe (174): SIGSEGV, segmentation fault occurred\nImage  PC  Routine  Line  Source\n"
     "lbm  00000000004017A3  stream_mp_collide_  212  stream.f90\nsrun: error: node07: task 3: Segmentation fault\n"),
])
def test_a_fortran_programs_crash_gets_no_flight_recorder_step(text: str, tmp_path: Path) -> None:
    assert stack_of(text) == "fortran"
    _code, got = report_log(" it 100 rho 1.0001\n" + text, tmp_path)
    steps = str(got["next_steps"])
    assert got["verdict"]["kind"] == "crash"
    assert "Flight Recorder" not in steps and "torchrun" not in steps


def test_torch_words_win_over_fortran_words() -> None:
    assert stack_of("import torch\n" + GFORTRAN) == "torch"
    assert stack_of("loss 0.3 at step 12\nsrun: error: node07: task 3: Segmentation fault\n") is None
