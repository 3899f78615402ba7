"""Session 45: Cray MPICH's records of a rank's fatal error name the rank and its node.

The older form, ``Rank N [<date>] [<node>] Fatal error in <call>: <what>`` (then MPICH's stack), and the newer one,
``MPICH ERROR [Rank N] [job id J] [<date>] [<node>] - Abort(C) (rank N in comm 0): <message>``, are that rank's own
MPI failure on that node: a ranked, hosted first failure, not an error of unknown rank. The same words quoted in a
sentence or a docs page are no record.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import failure_verdict
from triage.parsing.mpi_errors import parse_mpi_errors

OLD = ("step 4 loss 1.92\n"
       "Rank 11 [Tue Mar  4 02:13:57 2025] [c3-0c2s7n1] Fatal error in PMPI_Waitall: Other MPI error, error stack:\n"
       "PMPI_Waitall(405)...............: MPI_Waitall(count=8, req_array=0x7ffd, status_array=0x7ffe) failed\n"
       "MPIR_Waitall_impl(221)..........:\n"
       "MPIDI_CH3I_Progress(176)........:\n"
       "MPID_nem_gni_poll(1661).........:\n"
       "MPID_nem_gni_check_localCQ(1055): Communication error with rank 4\n"
       "_pmiu_daemon(SIGCHLD): [NID 00412] [c3-0c2s7n1] [Tue Mar  4 02:13:58 2025] PE RANK 11 exit signal Aborted\n")

NEW = ("iteration 20 dt 1e-3\n"
       "MPICH ERROR [Rank 9] [job id 7711.3] [Mon Jun  2 10:04:11 2025] [nid001207] - Abort(403275535) (rank 9 in "
       "comm 0): Fatal error in PMPI_Isend: Invalid rank, error stack:\n"
       "PMPI_Isend(161): MPI_Isend(buf=0x1, count=4, MPI_DOUBLE, dest=64, tag=3, MPI_COMM_WORLD, request=0x2) failed\n"
       "PMPI_Isend(96).: Invalid rank has value 64 but must be nonnegative and less than 64\n"
       "srun: error: nid001207: task 9: Exited with exit code 15\n")


@pytest.mark.parametrize("prefix", ["", "[1,11]<stderr>:", "11: ", "2025-03-04T02:13:57.120Z "])
def test_old_record_names_its_rank_and_node(prefix: str) -> None:
    text = "\n".join(prefix + line if line.startswith("Rank") else line for line in OLD.split("\n"))
    [record] = parse_mpi_errors(text)
    assert (record.rank, record.host, record.first) == (11, "c3-0c2s7n1", True)
    assert "PMPI_Waitall" in record.text and record.network          # its innermost reason is a peer's


def test_old_record_without_stack_and_crlf() -> None:
    text = "Rank 0 [Fri Jan 10 09:00:00 2025] [c0-0c0s1n2] Fatal error in MPI_Init: Other MPI error\r\n" \
           "Application 5522 exit codes: 1\r\n"
    [record] = parse_mpi_errors(text)
    assert (record.rank, record.host) == (0, "c0-0c0s1n2") and "MPI_Init" in record.text


def test_new_record_names_its_rank_node_and_innermost_reason() -> None:
    [record] = parse_mpi_errors(NEW)
    assert (record.rank, record.host) == (9, "nid001207")
    assert "PMPI_Isend: Invalid rank" in record.text and "has value 64" in record.text and not record.network


def test_new_record_of_other_messages() -> None:
    gtl = ("MPICH ERROR [Rank 3] [job id ] [Thu Sep 21 06:09:17 2025] [nid000044] - Abort(-1) (rank 3 in comm 0): "
           "MPIDI_CRAY_init: GPU_SUPPORT_ENABLED is requested, but GTL library is not linked\n (Other MPI error)\n")
    [record] = parse_mpi_errors(gtl)
    assert (record.rank, record.host) == (3, "nid000044") and "GTL library is not linked" in record.text
    abort = ("MPICH ERROR [Rank 5] [job id 13393664.0] [Thu Apr 23 18:50:41 2025] [dvn01] - Abort(9) (rank 5 in comm "
             "0): application called MPI_Abort(MPI_COMM_WORLD, 9) - process 5\n")
    [record] = parse_mpi_errors(abort)                  # one record, with its node, not MPICH's line read again
    assert (record.rank, record.host) == (5, "dvn01") and "MPI_Abort" in record.text
    unknown = ("MPICH ERROR [Rank 1] [job id unknown] [Wed Aug 26 14:01:10 2025] [unknown] [nid000009] - "
               "Abort(590863) (rank 1 in comm 0): Fatal error in PMPI_Init: Other MPI error, error stack:\n"
               "MPIR_Init_thread(632):\nMPID_Init(286).......:  PMI2 init failed: 1\n")
    [record] = parse_mpi_errors(unknown)
    assert (record.rank, record.host) == (1, "nid000009") and "PMI2 init failed" in record.text


def test_quoted_words_are_no_record() -> None:
    sentence = ('On Cray systems the message "Rank 3 [Sat Nov 28 07:00:00 2025] [c0-0c1s2n1] Fatal error in '
                'MPI_Init: Other MPI error" means the PMI library is missing.\n')
    docs = ("   ```\n   `MPICH ERROR [Rank 0] [job id 1.0] [Thu Feb 13 12:42:18 2025] [nid005414] - Abort(-1) (rank 0 "
            "in comm 0): MPIDI_CRAY_init: GPU_SUPPORT_ENABLED is requested, but GTL library is not linked`\n")
    assert parse_mpi_errors(sentence) == ()
    assert parse_mpi_errors(docs) == ()
    word = "MyRank 3 [Sat Nov 28 07:00:00 2025] [c0] Fatal error in MPI_Init: x\n"   # "Rank" inside a word
    assert parse_mpi_errors(word) == ()


def test_a_record_the_job_went_on_after_is_no_record() -> None:
    text = ("    Rank 3 [Sat Nov 28 07:00:04 2025] [c0-0c1s2n3] Fatal error in PMPI_Init: Other MPI error\n"
            + "".join(f"step {n} loss {2.3 - n / 10:.1f}\n" for n in range(1, 30)) + "Training complete\n")
    assert parse_mpi_errors(text) == ()


def test_verdicts(tmp_path: Path) -> None:
    got = failure_verdict(OLD, tmp_path)
    # (its innermost reason is a peer's: a network error that rank 11 reported, not rank 11's own)
    assert got["kind"] == "network_error" and "rank 11 (c3-0c2s7n1)" in got["summary"]
    got = failure_verdict(NEW, tmp_path)
    assert got["kind"] == "exception" and got["culprit_ranks"] == [9] and "Invalid rank" in got["summary"]
