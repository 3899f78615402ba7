"""Round 55: ARMCI-MPI's own failed assertion and error (the one-sided runtime under Global Arrays and NWChem).

ARMCI-MPI (src/debug.c) prints ``[N] ARMCI assert fail in <func>() [<file>:<line>]: "<condition>"`` or ``[N] ARMCI
Error in <func> (<file>:<line>): <message>``, rank N's own words, then ``[N] Backtrace:`` and its frames, and aborts
the job. Either line is rank N's error (an exception), also when the paste is cut inside the backtrace. The words
quoted in a sentence, or a run that went on past them, are not read so.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers.report import failure_verdict
from triage.parsing.solver_errors import parse_solver_errors

# a variant: another rank, function, file and condition; the frames of another build; a cut last frame
ASSERTED = ("$ mpiexec -n 8 ./ga_test\n"
            "[5] ARMCI assert fail in ARMCII_Iov_op_dispatch() [src/iov.c:214]: \"count > 0\"\n"
            "[5] Backtrace:\n"
            "[5]   6 - ./ga_test(+0x1a2b3c) [0x5611aa1a2b3c]\n"
            "[5]   5 - ./ga_test(+0x19f00a) [0x5611aa19f00a]\n"
            "[5]   4 - /lib/x86_64-linux-gnu/libc.so.6(+0x29d90) [0x7f0\n")

ERRORED = ("Running ARMCI tests on 4 processes\n"
           "[2] ARMCI Error in gmr_lookup (src/gmr.c:321): invalid remote address 0x7f33a0001000\n"
           "[2] Backtrace:\n"
           "[2]   3 - ./test_mutex(+0x5a1c) [0x55d0c1c5a1c]\n")


def test_armci_assertion_is_that_ranks_error(tmp_path: Path) -> None:
    got = failure_verdict(ASSERTED, tmp_path)
    assert got["kind"] == "exception" and got["culprit_ranks"] == [5]
    assert "ARMCII_Iov_op_dispatch" in got["summary"]


def test_armci_error_line_is_that_ranks_error(tmp_path: Path) -> None:
    got = failure_verdict(ERRORED, tmp_path)
    assert got["kind"] == "exception" and got["culprit_ranks"] == [2]
    assert "invalid remote address" in got["summary"]


def test_words_quoted_in_a_sentence_are_not_an_error() -> None:
    text = ("The FAQ says a line like \"[5] ARMCI assert fail in gmr_create() [src/gmr.c:109]: x\" means a window\n"
            "allocation failed; see the docs.\n")
    assert parse_solver_errors(text) == ()


def test_a_run_that_went_on_past_the_line_is_not_its_failure() -> None:
    text = ("[0] ARMCI Error in gmr_create (src/gmr.c:109): retrying the allocation\n"
            + "".join(f"step {i}: energy = -76.02{i} converged\n" for i in range(1, 6)))
    assert [d for d in parse_solver_errors(text) if "ARMCI" in d.text] == []
