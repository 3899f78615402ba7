"""Round 53: Fujitsu MPI's plexec record of a rank that aborted, after that process's MPI_Abort backtrace.

Fujitsu MPI (tcsds, on A64FX systems) prints the aborting process's backtrace (``[host:pid] [N]
func:.../libmpi.so.0(MPI_Abort+0xa0) [...]``) and its job launcher then says ``[WARN] PLE 0608 plexec One of MPI
processes was aborted.(rank=N)(nid=...)(CODE=...)``. Together they are rank N's own MPI_Abort (an error exit), not a
SIGABRT. The launcher's line with no MPI_Abort frame before it, or its words quoted in a sentence, are not read so.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers.report import failure_verdict
from triage.parsing.mpi_errors import parse_mpi_errors

# a variant: another rank, host and pid, Fortran's mpi_abort_ wrapper's frame, a program's frames without symbols
ABORTED = ("[a31c07n2:01207] [1] func:/opt/FJSVxtclanga/tcsds-1.2.38/lib64/libmpi.so.0(MPI_Abort+0x9c) [0x40000051a1c4]\n"
           "[a31c07n2:01207] [2] func:/opt/FJSVxtclanga/tcsds-1.2.38/lib64/libmpi_mpifh.so.0(mpi_abort_+0x64) "
           "[0x4000003c11a0]\n"
           "[a31c07n2:01207] [3] func:./solver() [0x41f2c8]\n"
           "[a31c07n2:01207] [4] func:/lib64/libc.so.6(__libc_start_main+0xe4) [0x4000014a0be4]\n"
           "[WARN] PLE 0608 plexec One of MPI processes was aborted.(rank=7)(nid=0x03060012)(CODE=1903,"
           "1801439850948198400,256)(DETAIL=N/A)\n")


def test_plexec_record_after_abort_frames_is_that_ranks_exception(tmp_path: Path) -> None:
    got = failure_verdict(ABORTED, tmp_path)
    assert got["kind"] == "exception" and got["culprit_ranks"] == [7]
    assert "MPI_Abort" in got["summary"]
    [record] = parse_mpi_errors(ABORTED)
    assert record.rank == 7 and record.first


def test_plexec_line_without_abort_frames_is_not_read_as_mpi_abort() -> None:
    text = "[WARN] PLE 0608 plexec One of MPI processes was aborted.(rank=3)(nid=0x0306)(CODE=1903,1,256)(DETAIL=N/A)\n"
    assert parse_mpi_errors(text) == ()


def test_words_quoted_in_a_sentence_are_not_a_record() -> None:
    text = ABORTED.replace("[WARN] PLE 0608", "Our wiki says \"[WARN] PLE 0608") + "It means the job ended.\n"
    assert [e for e in parse_mpi_errors(text) if "plexec" in e.text] == []
