"""A block printed with a decoration before each of its lines (DOLFIN's ``*** ``): its longest line, at what looks like
a terminal's wrap width, is not joined to the block's next line, which opens with the same decoration; a line cut at
the width whose rest opens otherwise is still joined."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.report import failure_verdict
from triage.parsing.textclean import clean_text

REASON = ("*** Reason:  Solution failed to converge in 0 iterations (PETSc reason DIVERGED_LINE_SEARCH, residual "
          "norm ||r|| = 3.141593e+02).")


def _block(rank: int) -> str:
    return ("*** -------------------------------------------------------------------------\n"
            "*** Error:   Unable to solve nonlinear system with NewtonSolver.\n" + REASON + "\n"
            "*** Where:   This error was encountered inside NewtonSolver.cpp.\n"
            f"*** Process: {rank}\n***\n*** DOLFIN version: 2018.1.0\n"
            "*** -------------------------------------------------------------------------\n")


def test_the_blocks_longest_line_keeps_its_own_line() -> None:
    lines = clean_text(_block(4)).lines
    assert REASON in lines and "*** Where:   This error was encountered inside NewtonSolver.cpp." in lines


def test_a_decorated_line_cut_at_the_width_is_still_joined() -> None:
    width = 60
    long = ("*** Error:   Unable to assemble the system matrix: the form has an unbound coefficient w_3 of the "
            "mixed space; its rank is 2 and its degree 4 on every cell")
    pieces = [long[i:i + width] for i in range(0, len(long), width)]
    assert not pieces[1].startswith("*** ")
    assert clean_text("\n".join(pieces) + "\n" + "\n".join(pieces) + "\n").lines == (long, long)


def test_dolfins_block_names_its_process_and_its_reason(tmp_path: Path) -> None:
    verdict = failure_verdict("Solving nonlinear variational problem.\n" + _block(4), tmp_path)
    assert verdict["culprit_ranks"] == [4] and "DIVERGED_LINE_SEARCH" in verdict["summary"], verdict
