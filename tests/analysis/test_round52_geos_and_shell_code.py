"""Round 52: GEOS's error banner, and a launcher's 128 + S exit code beside the shell's record of signal S.

- GEOS (GEOSX) prints ``***** ERROR``, ``***** LOCATION: <file>:<line>``, ``***** Controlling expression ...`` and, in
  newer versions, ``***** Rank N: <message>``: rank N's own error (an exception); an older banner with the message
  on the line alone names no rank. A sentence that quotes the words, or a banner the run went on past, is not read.
- A launcher's ``rank N exited with code 128+S`` (HPE PALS's mpiexec, a wrapper script's status passed on) is rank N's
  death by signal S where the shell's own record of that death is in the input (``./run.sh: line 7: PID Segmentation
  fault (core dumped) ...``); without that record the code stays an exit code.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers.report import failure_verdict
from triage.parsing.launchers import parse_rank_deaths
from triage.parsing.solver_errors import parse_solver_errors

# a variant: another rank, file and message, Markdown's quote marks before each line
GEOS_RANKED = ("> Time: 3.60e+03 s, dt: 60 s, Cycle: 12\n"
               ">\n"
               "> ***** ERROR\n"
               "> ***** LOCATION: /opt/geos/src/coreComponents/mesh/ElementRegionManager.cpp:208\n"
               "> ***** Controlling expression (should be false): numElems == 0\n"
               "> ***** Rank 13: Region reservoir has no elements on this partition\n"
               ">\n"
               "> ** StackTrace of 6 frames **\n")

# the older banner: its message on the line after the expression, no rank
GEOS_OLD = ("***** ERROR\n"
            "***** LOCATION: geosx/src/coreComponents/mpiCommunications/NeighborCommunicator.cpp:632\n"
            "***** Controlling expression (should be false): unmappedNodeIndices.size()!=0\n"
            "Some node global indices were not mappable to a localIndex\n")


def test_geos_banner_names_its_rank(tmp_path: Path) -> None:
    got = failure_verdict(GEOS_RANKED, tmp_path)
    assert got["kind"] == "exception" and got["culprit_ranks"] == [13]
    assert "has no elements" in got["summary"]


def test_older_geos_banner_names_no_rank(tmp_path: Path) -> None:
    got = failure_verdict(GEOS_OLD, tmp_path)
    assert got["kind"] == "exception" and got["culprit_ranks"] == []
    [death] = parse_solver_errors(GEOS_OLD)
    assert death.rank is None and "not mappable" in death.text


def test_geos_words_in_a_sentence_or_gone_past_are_not_read() -> None:
    quoted = "When GEOS prints '***** ERROR' and '***** LOCATION: a.cpp:1' the run stops.\n"
    assert parse_solver_errors(quoted) == ()
    went_on = GEOS_OLD + "retrying with a finer partition\nstep 40: residual 1.2e-3\nstep 41: residual 9.0e-4\n"
    assert parse_solver_errors(went_on) == ()


SHELL_AND_LAUNCHER = ("./job.sh: line 12: 88213 Bus error               (core dumped) ./solver input.yaml\n"
                      "x3004c0s7b1n0: rank 5 exited with code 135\n"
                      "x3004c0s1b0n0: rank 0 died from signal 15\n")


def test_launcher_code_beside_the_shells_record_is_the_signal(tmp_path: Path) -> None:
    got = failure_verdict(SHELL_AND_LAUNCHER, tmp_path)
    assert got["kind"] == "crash" and got["culprit_ranks"] == [5]
    [death] = [d for d in parse_rank_deaths(SHELL_AND_LAUNCHER) if d.rank == 5]
    assert death.signal == "SIGBUS" and death.exitcode is None


def test_launcher_code_alone_stays_an_exit_code() -> None:
    text = "x3004c0s7b1n0: rank 5 exited with code 135\nx3004c0s1b0n0: rank 0 died from signal 15\n"
    [death] = [d for d in parse_rank_deaths(text) if d.rank == 5]
    assert death.signal is None and death.exitcode == 135
    # another signal's record does not stand for this code (139 is SIGSEGV, the shell told a bus error)
    other = "./job.sh: line 12: 88213 Bus error ./solver\nnode1: rank 2 exited with code 139\n"
    [death] = [d for d in parse_rank_deaths(other) if d.rank == 2]
    assert death.signal is None and death.exitcode == 139
