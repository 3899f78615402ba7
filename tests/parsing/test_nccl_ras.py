"""NCCL RAS status reports (NVIDIA/nccl#1911)."""

from __future__ import annotations

from triage.parsing.nccl.ras import parse_ras_mismatches

REPORT = """Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors
    #  in group  per comm  per node  per comm  in group
    0         1         4         8        32        32   RUNNING  MISMATCH

#0-0 (fa93daea854b060b) MISMATCH
  Communicator ranks have different AllGather operation counts
  30 ranks have launched up to operation 640
  2 ranks have launched up to operation 641
  Rank 12 -- GPU 4 managed by process 323032 on node 10.137.190.124
  Rank 13 -- GPU 5 managed by process 323033 on node 10.137.190.124
"""


def test_operation_count_groups_and_listed_ranks() -> None:
    (item,) = parse_ras_mismatches(REPORT)
    assert (item.op, item.comm_size) == ("AllGather", 32)
    assert [(g.count, g.launched, [r.rank for r in g.listed]) for g in item.groups] == [(30, 640, []), (2, 641, [12, 13])]
    assert item.groups[1].listed[0].host == "10.137.190.124" and item.groups[1].listed[0].gpu == 4


def test_no_report_no_mismatch() -> None:
    assert parse_ras_mismatches("NCCL INFO comm 0x1 rank 0 nranks 8") == []
