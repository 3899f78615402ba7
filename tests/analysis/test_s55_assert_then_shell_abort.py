"""An assert line then the shell's ``Aborted (core dumped)`` (fix55c item 2): glibc's ``prog: file.c:42: func:
Assertion `x' failed.`` (and musl's ``Assertion failed: x (file: func: line)``) is the cause; the shell's own line
after it (bash's and dash's report of the child's SIGABRT) is how the process ended, said after the assert's words.
It had hidden the assert (read as a signal handler's record of the abort), and the verdict quoted only the shell's
line. A signal handler's record after it (Open MPI's ``[host:pid] Signal: Aborted (6)``, with the host) stays the
story (triage.parsing.fatal_ending)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import failure_verdict

ASSERTS = [
    "solver: solver.c:142: assemble_matrix: Assertion `n > 0' failed.",
    "a.out: src/mesh.cpp:88: void Mesh::build_cells(): Assertion 'cells.size() > 0' failed.",
    "Assertion failed: n > 0 (solver.c: assemble_matrix: 142)",
]


@pytest.mark.parametrize("assert_line", ASSERTS)
@pytest.mark.parametrize("shell", ["Aborted (core dumped)", "Aborted"])
def test_the_assert_is_the_cause_and_the_shells_line_how_it_ended(assert_line: str, shell: str,
                                                                  tmp_path: Path) -> None:
    got = failure_verdict(f"Reading mesh from grid.msh\nstep 10 residual 1.2e-3\n{assert_line}\n{shell}\n", tmp_path)
    assert got["kind"] == "crash", got
    assert "assertion `" in got["summary"] and f"(then the shell's: {shell})" in got["summary"], got["summary"]


def test_a_signal_handlers_record_after_it_stays_the_story(tmp_path: Path) -> None:
    got = failure_verdict(f"{ASSERTS[0]}\n[node07:4121] *** Process received signal ***\n[node07:4121] Signal: "
                          "Aborted (6)\n[node07:4121] Signal code:  (-6)\nAborted (core dumped)\n", tmp_path)
    assert got["culprit_host"] == "node07", got


def test_marss_67_assert_then_the_shells_abort(tmp_path: Path) -> None:
    # (avadhpatel/marss#67, as the reporter pasted it, in bold)
    text = ("**ptlsim/build/core/ooo-core/ooo-pipe.cpp:2060: int ooo::ReorderBufferEntry::commit(): Assertion "
            "`ctx.get_cs_eip() == uop.rip' failed.\nAborted (core dumped)**\n")
    got = failure_verdict(text, tmp_path)
    assert got["kind"] == "crash" and "ctx.get_cs_eip() == uop.rip" in got["summary"], got["summary"]
    assert "ooo-pipe.cpp:2060" in got["summary"], got["summary"]


def test_a_cu_files_host_assert_is_glibcs_not_a_kernels(tmp_path: Path) -> None:
    # (puttsk/cuda-tutorial#12: glibc's assert in a .cu file's host code, main(), then the shell's line; CUDA's
    # __assertfail prints a block and a thread, and only that is a device-side assert)
    text = ("[heyliu@controller tutorial01]$ ./vector_add\nvector_add: vector_add.cu:48: int main(): Assertion "
            "`fabs(output[i] - a[i] - b[i]) < 1e-6' failed.\nAborted (core dumped)\n")
    got = failure_verdict(text, tmp_path)
    assert "device-side assert" not in got["summary"] and "vector_add.cu:48 in int main()" in got["summary"], got


def test_a_kernels_assert_stays_a_device_side_assert(tmp_path: Path) -> None:
    text = ("/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu:92: operator(): block: [68,0,0], thread: [32,0,0] "
            "Assertion `index >= -sizes[i] && index < sizes[i] && \"index out of bounds\"` failed.\n")
    got = failure_verdict(text, tmp_path)
    assert "device-side assert triggered" in got["summary"], got["summary"]
