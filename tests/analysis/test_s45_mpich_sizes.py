"""Session 45: MPICH's own checks of a message's size between ranks are a mismatch, not one rank's error.

A line of MPICH's error stack, ``Message from rank 0 and tag 2 truncated; 8 bytes received but buffer size is 4``
(or ``Message truncated; 8 bytes received but buffer size is 4``) and ``message sizes do not match across processes
in the collective routine: Received 4 but expected 8``: the ranks' calls disagree on a count or a datatype. The
verdict is a size mismatch naming the ranks the input names (the receiver whose call failed, the sender the line
names); which rank's call was wrong it cannot tell. Quoted words, or a job that went on after them, are no record.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import failure_verdict
from triage.parsing.mpi_errors import MPI_SIZE_TEXT, mpi_size_sender, parse_mpi_errors

BCAST = ("Fatal error in PMPI_Bcast: Message truncated, error stack:\n"
         "PMPI_Bcast(1478)......................: MPI_Bcast(buf=0x7ffc, count=2, MPI_INT, root=0, MPI_COMM_WORLD) "
         "failed\n"
         "MPIR_Bcast_impl(1321).................:\n"
         "MPIDI_CH3U_Receive_data_found(131)....: Message from rank 0 and tag 2 truncated; 16 bytes received but "
         "buffer size is 8\n")


@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_ranked_truncation_names_the_pair(eol: str, tmp_path: Path) -> None:
    text = ("[0] step 3\n[5] step 3\nAbort(403275535) on node 5 (rank 5 in comm 0): " + BCAST).replace("\n", eol)
    [record] = parse_mpi_errors(text)
    assert record.rank == 5 and record.text.startswith(MPI_SIZE_TEXT) and mpi_size_sender(record.text) == 0
    got = failure_verdict(text, tmp_path)
    assert got["kind"] == "collective_mismatch" and got["subkind"] == "size" and got["culprit_ranks"] == [0, 5]
    assert "rank 0 sent 16 bytes" in got["summary"] and "rank 5" in got["summary"]


def test_rankless_truncation_is_a_mismatch_of_no_rank(tmp_path: Path) -> None:
    got = failure_verdict("worker: start\n" + BCAST, tmp_path)
    assert got["kind"] == "collective_mismatch" and got["culprit_ranks"] == []


def test_cray_collective_check_without_a_read_head(tmp_path: Path) -> None:
    text = ("Fatal error in MPIDI_Cray_shared_mem_coll_tree_bcast: Other MPI error, error stack:\n"
            "MPIDI_Cray_shared_mem_coll_tree_bcast(212): message sizes do not match across processes in the "
            "collective routine: Received 32 but expected 64\n")
    [record] = parse_mpi_errors(text)
    assert record.rank is None and "received 32 bytes where it expected 64" in record.text
    got = failure_verdict(text, tmp_path)
    assert got["kind"] == "collective_mismatch" and got["subkind"] == "size"


def test_cray_ranked_record_with_the_check() -> None:
    text = ("Rank 2 [Tue Mar  4 02:13:57 2025] [c1-0c0s3n0] Fatal error in PMPI_Allreduce: Other MPI error, error "
            "stack:\nMPIDI_Cray_shared_mem_coll_tree_reduce(190): message sizes do not match across processes in the "
            "collective routine: Received 4 but expected 8\n")
    [record] = parse_mpi_errors(text)
    assert (record.rank, record.host) == (2, "c1-0c0s3n0") and record.text.startswith(MPI_SIZE_TEXT)
    assert mpi_size_sender(record.text) is None


def test_point_to_point_truncation_stays_the_receives_error(tmp_path: Path) -> None:
    text = ("Fatal error in MPI_Irecv: Message truncated, error stack:\n"
            "MPI_Irecv(170).......................: MPI_Irecv(buf=0x1d3c, count=8, MPI_BYTE, src=1, tag=2265, "
            "MPI_COMM_WORLD, request=0x7ffd) failed\n"
            "MPIDI_CH3U_Request_unpack_uebuf(611): Message truncated; 16 bytes received but buffer size is 8\n")
    [record] = parse_mpi_errors(text)
    assert MPI_SIZE_TEXT not in record.text
    assert failure_verdict(text, tmp_path)["kind"] == "exception"


def test_quoted_or_gone_on_after_is_no_mismatch() -> None:
    quoted = ('If the error stack: says "Message from rank 0 and tag 2 truncated; 8 bytes received but buffer size is '
              '4", check the counts.\n')
    assert parse_mpi_errors(quoted) == ()
    later = ("Fatal error in PMPI_Bcast: Message truncated, error stack:\n"
             "MPIR_Bcast_intra(1155): Message truncated; 8 bytes received but buffer size is 4\n"
             + "".join(f"step {n} loss 0.5\n" for n in range(1, 40)))
    assert parse_mpi_errors(later) == ()
