"""A scientific code's error block far from a large log's end (past the last 256 KiB that the large path reads
whole) gives the verdict of the same text pasted: every whole-text reader's words are needles of the large path
(triage.parsing.whole_text), and the lines around a code's box or block (its head above the marked line, its message
below) are kept in the excerpt (triage.load.logs.large.BLOCK_BEFORE / BLOCK_AFTER)."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from triage.cli import main

ABORT = ("--------------------------------------------------------------------------\n"
         "MPI_ABORT was invoked on rank {r} in communicator MPI_COMM_WORLD\nwith errorcode {c}.\n"
         "--------------------------------------------------------------------------\n")
RULE = " " + "%" * 78 + "\n"
BLOCKS = {
    "quantum_espresso": (RULE + "     Error in routine rdiaghg (41):\n     problems computing cholesky\n" + RULE
                         + "\n     stopping ...\n", None, "problems computing cholesky"),
    "gromacs": ("-------------------------------------------------------\nProgram:     gmx mdrun, version 2024.1\n"
                "Source file: src/gromacs/mdlib/sim_util.cpp (line 88)\nMPI rank:    5 (out of 16)\n\nFatal error:\n"
                "Step 9100: The total potential energy is nan, which is not finite.\n\nFor more information and "
                "tips for troubleshooting, please check the GROMACS\nwebsite\n"
                "-------------------------------------------------------\n" + ABORT.format(r=5, c=1), 5,
                "potential energy is nan"),
    "cp2k": (" " + "*" * 79 + "\n *   ___" + " " * 71 + "*\n *  /   \\" + " " * 70 + "*\n * [ABORT]" + " " * 70
             + "*\n *  \\___/      SCF run NOT converged in 50 steps" + " " * 33 + "*\n *    |" + " " * 72
             + "*\n * /| |" + " " * 60 + "qs_scf.F:612 *\n " + "*" * 79 + "\n" + ABORT.format(r=0, c=1), 0,
             "SCF run NOT converged"),
    "abinit": ("--- !ERROR\nsrc_file: m_gstate.F90\nsrc_line: 731\nmpi_rank: 6\nmessage: |\n"
               "    The number of bands is too small for this occupation.\n    Action: raise nband.\n...\n"
               + ABORT.format(r=6, c=14), 6, "number of bands is too small"),
    "vasp": (" " + "-" * 77 + "\n|" + " " * 77 + "|\n|     EEEEEEE  RRRRRR   RRRRRR   OOOOOOO  RRRRRR      ###     ###"
             "     ###     |\n|     E        R     R  R     R  O     O  R     R     ###     ###     ###     |\n"
             "|     EEEEE    RRRRRR   RRRRRR   O     O  RRRRRR       #       #       #      |\n"
             "|     EEEEEEE  R     R  R     R  OOOOOOO  R     R     ###     ###     ###     |\n|"
             + " " * 77 + "|\n|     Error EDWAV: Sub-Space-Matrix is not hermitian in DAV 4" + " " * 18
             + "|\n|" + " " * 77 + "|\n|       ---->  I REFUSE TO CONTINUE WITH THIS SICK JOB ... BYE!!! <----"
             + " " * 7 + "|\n " + "-" * 77 + "\n", None, "Sub-Space-Matrix is not hermitian"),
}


def _report(path: Path) -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["report", str(path), "--format", "json"])
    return code, json.loads(out.getvalue())["verdict"] if out.getvalue().strip() else {}


@pytest.mark.parametrize("code_name", sorted(BLOCKS))
def test_a_codes_block_far_from_a_large_logs_end_reads_as_when_small(code_name: str, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from triage.load import inputs
    from triage.load.logs.large import TAIL_BYTES
    block, rank, words = BLOCKS[code_name]
    before = "".join(f" iteration {i} started; reading input deck section {i % 31}\n" for i in range(3000))
    # (after the block: lines of no progress and no failure, past the tail the large path reads whole)
    after = "".join(f"debug: buffer 0x{i * 4096:x} released to pool {i % 7}\n" for i in range(TAIL_BYTES // 38 + 500))
    text = before + block + after
    small_path, large_path = tmp_path / "small.log", tmp_path / "large.log"
    small_path.write_text(text)
    large_path.write_text(text)
    small = _report(small_path)
    monkeypatch.setattr(inputs, "LARGE_LOG_BYTES", 64 << 10)
    large = _report(large_path)
    assert small[0] == 1 and words in small[1]["summary"], small
    assert small[1]["culprit_ranks"] == ([rank] if rank is not None else []), small
    assert (large[0], large[1]["kind"], large[1]["culprit_ranks"]) == (small[0], small[1]["kind"],
                                                                       small[1]["culprit_ranks"]), large
    assert words in large[1]["summary"], large
