"""Session 45: Hydra's (MPICH's, Intel MPI's) per-process boxes of the processes it killed.

Hydra prints a ``BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES`` box for each process it saw end, in process
order, not in time. Where one process ended by itself (its own exit status, a fault signal, MPICH's abort of it), the
boxes of the others that Hydra killed (``KILLED BY SIGNAL: 9 (Killed)``, 15, 2) are its cleanup of the job: collateral,
never a root beside the one that failed. Boxes that are all SIGKILL say no such thing (the kernel's OOM killer, an
admin): each stays a failure.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import failure_verdict
from triage.parsing.frameworks import parse_framework_records

BAR = "=" * 83


def box(rank: int, pid: int, host: str, end: str, prefix: str = "") -> str:
    lines = ["", BAR, "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES",
             f"=   RANK {rank} PID {pid} RUNNING AT {host}", f"=   {end}", BAR]
    return "".join(prefix + line + "\n" for line in lines)


@pytest.mark.parametrize("prefix", ["", "2025-05-01T10:00:00Z "])
@pytest.mark.parametrize("own", ["EXIT STATUS: 3", "KILLED BY SIGNAL: 6 (Aborted)", "EXIT CODE: 139"])
def test_killed_boxes_beside_a_process_that_failed_are_collateral(prefix: str, own: str, tmp_path: Path) -> None:
    text = ("[0] step 10 loss 0.9\n[5] step 10 loss 0.9\n"
            + box(0, 7101, "cn-07", "KILLED BY SIGNAL: 9 (Killed)", prefix) + box(5, 7106, "cn-08", own, prefix) + box(6, 7107, "cn-08", "KILLED BY SIGNAL: 9 (Killed)", prefix))
    if not prefix:             # (a timestamp on each line: the loader takes it off before the readers)
        killed = [r for r in parse_framework_records(text) if r.signal == "SIGKILL"]
        assert [(r.rank, r.consequence, r.first) for r in killed] == [(0, True, False), (6, True, False)]
    got = failure_verdict(text, tmp_path)
    assert got["culprit_ranks"] == [5]


def test_killed_boxes_beside_mpich_abort_line(tmp_path: Path) -> None:
    text = ("Abort(2) on node 4 (rank 4 in comm 0): application called MPI_Abort(MPI_COMM_WORLD, 2) - process 4\n"
            + box(1, 51, "h1", "KILLED BY SIGNAL: 9 (Killed)") + box(4, 54, "h2", "KILLED BY SIGNAL: 9 (Killed)"))
    records = parse_framework_records(text)
    assert [(r.rank, r.consequence) for r in records] == [(1, True), (4, False)]
    assert failure_verdict(text, tmp_path)["culprit_ranks"] == [4]


def test_boxes_all_killed_say_no_culprit_of_their_own() -> None:
    text = box(0, 7101, "cn-07", "KILLED BY SIGNAL: 9 (Killed)") + box(1, 7102, "cn-07",
                                                                   "KILLED BY SIGNAL: 9 (Killed)")
    assert [(r.rank, r.consequence, r.first) for r in parse_framework_records(text)] == [(0, False, True),
                                                                                         (1, False, True)]


def test_a_box_that_exited_cleanly_makes_no_cleanup() -> None:
    text = box(0, 7101, "cn-07", "EXIT STATUS: 0") + box(1, 7102, "cn-07", "KILLED BY SIGNAL: 9 (Killed)")
    [record] = [r for r in parse_framework_records(text) if r.signal == "SIGKILL"]
    assert not record.consequence and record.first
