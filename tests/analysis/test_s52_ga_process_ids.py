"""Session 52 (rev47 item 8, 7 and 2 again): Global Arrays' process ids. A bare number before a colon is never a host:
srun -l's task label over GA's own "41: " head ("41: 41: error ival=4") is rank 41 with no host "41". ARMCI's failed
assertion (GA's armci.c, dassertp_fail) "(rank:41 hostname:node17 pid:33211):ARMCI DASSERT fail. file:func():line
cond:..." names the rank and its node: the rank's failure, on that host (it was refused); under ARMCI_Error() the
error is GA's line above it; in a signal handler the signal's own line stays the failure."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import failure_verdict, report_log
from triage.parsing.log_prefix import split_rank_prefix

STEPS = " iteration 3 energy -76.0123\n"


@pytest.mark.parametrize("line", ["41: 41: error ival=4", "12: 12: error ival=4"])
def test_a_bare_number_before_the_rank_label_is_no_host(line: str, tmp_path: Path) -> None:
    head = split_rank_prefix(line)
    assert head.rank == int(line.split(":")[0]) and head.host is None
    code, out = report_log(STEPS + line + "\n", tmp_path)
    assert code == 1 and out["verdict"]["culprit_ranks"] == [head.rank]
    assert all(r["host"] is None for r in out["ranks"]), out["ranks"]
    assert f"({head.rank})" not in out["verdict"]["summary"]


@pytest.mark.parametrize("line", ["node07: hello", "10.0.0.5: hello", "gpu-a12: hello"])
def test_a_host_head_stays_a_host(line: str) -> None:
    assert split_rank_prefix(line).host == line.split(": ")[0]


@pytest.mark.parametrize(("line", "rank", "host", "said"), [
    (("(rank:41 hostname:node17 pid:33211):ARMCI DASSERT fail. ../../ga-5-6/armci/src/devices/openib/openib.c:"
     "armci_call_data_server():2209 cond:(pdscr->status==IBV_WC_SUCCESS)"), 41, "node17",
     "armci_call_data_server() (openib.c:2209)"),
    (("(rank:3 hostname:cn-0042.cluster pid:101):ARMCI DASSERT fail. src/memory/shmem.c:armci_shmem_malloc():1183 "
     "cond:(ptr!=NULL)\r"), 3, "cn-0042.cluster", "armci_shmem_malloc() (shmem.c:1183)"),
    ("5:ARMCI DASSERT fail. ../../armci/src/memory/shmem.c:armci_shmem_malloc():1183 cond:(ptr!=NULL)", 5, None,
     "armci_shmem_malloc()"),
])
def test_armci_assertion_names_its_rank_and_host(line: str, rank: int, host: str | None, said: str,
                                                 tmp_path: Path) -> None:
    code, out = report_log(STEPS + line + "\n", tmp_path)
    assert code == 1 and out["verdict"]["culprit_ranks"] == [rank], out
    assert said in out["verdict"]["summary"] and "ARMCI's assertion failed" in out["verdict"]["summary"]
    assert [r["host"] for r in out["ranks"] if r["rank"] == rank] == [host]


def test_armci_error_is_told_by_the_error_above_it(tmp_path: Path) -> None:
    # a build script's note of a real NWChem run (GA 5.6.5), its comment marks taken off
    text = (" PDSTEDC parameter number   10 had an illegal value \n"
            "0:0: ga_pdsyevd: eigenvectors failed to converge:: -10\n"
            "(rank:0 hostname:ccs0135 pid:349930):ARMCI DASSERT fail. ../../ga-5.6.5/armci/src/common/armci.c:"
            "ARMCI_Error():208 cond:0\n")
    got = failure_verdict(text, tmp_path)
    assert got["culprit_ranks"] == [0] and "(ccs0135)" in got["summary"]
    assert "ga_pdsyevd: eigenvectors failed to converge" in got["summary"] and "ARMCI_Error()" in got["summary"]


def test_armci_assertion_in_a_signal_handler_leaves_the_signal(tmp_path: Path) -> None:
    # an Open MPI users' list post (NWChem under ARMCI's MPI-SPAWN), as it was pasted
    text = ("ARMCI configured for 3 cluster nodes. Network protocol is 'MPI-SPAWN'.\n"
            "0:Segmentation Violation error, status=: 11\n"
            "0:ARMCI DASSERT fail. signaltrap.c:SigSegvHandler():299 cond:0\n"
            "4:Segmentation Violation error, status=: 11\n"
            "4:ARMCI DASSERT fail. signaltrap.c:SigSegvHandler():299 cond:0\n")
    got = failure_verdict(text, tmp_path)
    assert got["kind"] == "crash" and got["culprit_ranks"] == [0] and "SIGSEGV" in got["summary"], got
