"""Round 49: MPICH's fatal error record without its ``Abort(...) on node N`` head.

MPICH's fatal error handler text reaches a log without the head that names the rank where a library passes the
error on (mpi4py raises it as ``mpi4py.MPI.Exception: Other MPI error, error stack:``) or the program prints the
message itself (``Fatal error in MPI_Allreduce: Other MPI error, error stack:``), MPICH's stack following line by
line (``Function(line)....: why``). It is the failure of a process's MPI call, of a rank the record does not say:
an exception of unknown rank, not a failure of unknown place. The same words quoted in a sentence (no stack line
after them) or a job that went on after the record are not read.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers.report import failure_verdict
from triage.parsing.mpi_errors import parse_mpi_errors

# a variant of the program-printed form: another call, a launcher's per-line timestamp prefix, an innermost reason
PRINTED = ("[2024-03-02 11:20:01.101] worker: Fatal error in PMPI_Bcast: Other MPI error, error stack:\n"
           "[2024-03-02 11:20:01.102] worker: PMPI_Bcast(454)..........: MPI_Bcast(buf=0x2ab0, count=4096, MPI_BYTE, "
           "root=0, comm=0x84000004) failed\n"
           "[2024-03-02 11:20:01.102] worker: MPIR_Bcast_impl(310).....: \n"
           "[2024-03-02 11:20:01.103] worker: MPIDI_CH3I_Progress(125).: Communication error with rank 6\n")

# a variant of mpi4py's form: a traceback through Comm.recv, the stack with MPICH's "(unknown)()" line
MPI4PY = ('Traceback (most recent call last):\n  File "solve.py", line 88, in <module>\n    data = comm.recv(source=2)\n'
          '  File "mpi4py/MPI/Comm.pyx", line 1438, in mpi4py.MPI.Comm.recv\n'
          "mpi4py.MPI.Exception: Message truncated, error stack:\n"
          "PMPI_Recv(173)......: MPI_Recv(buf=0x55d1, count=64, MPI_BYTE, src=2, tag=7, MPI_COMM_WORLD) failed\n"
          "(unknown)(): Message truncated\n")


def test_printed_record_is_an_exception_of_unknown_rank(tmp_path: Path) -> None:
    got = failure_verdict(PRINTED, tmp_path)
    assert got["kind"] == "network_error" and got["culprit_ranks"] == []      # its innermost reason is a peer's
    assert "PMPI_Bcast" in got["summary"]


def test_mpi4py_record_is_an_exception_of_unknown_rank(tmp_path: Path) -> None:
    got = failure_verdict(MPI4PY, tmp_path)
    assert got["kind"] == "exception" and got["culprit_ranks"] == []
    assert "Message truncated" in got["summary"]
    # the record itself: the call its stack names, no rank
    [record] = parse_mpi_errors(MPI4PY)
    assert record.rank is None and record.first and "MPI_Recv" in record.text and not record.network


def test_record_with_its_abort_head_keeps_its_rank() -> None:
    text = ("Abort(1614991) on node 12 (rank 12 in comm 0): Fatal error in PMPI_Recv: Message truncated, error "
            "stack:\nPMPI_Recv(171): MPI_Recv(buf=0x1, count=1, MPI_INT, src=3, tag=1, comm=0x84000001) failed\n"
            "(unknown)(): Message truncated\n")
    errors = parse_mpi_errors(text)
    assert [e.rank for e in errors] == [12]


def test_words_in_a_sentence_are_not_a_record() -> None:
    text = ("If you see 'Fatal error in MPI_Allreduce: Other MPI error, error stack:' in your log, raise the limit.\n"
            "The run then finished.\n")
    assert parse_mpi_errors(text) == ()
    # the head alone at a line's start, no stack line after it
    assert parse_mpi_errors("Fatal error in MPI_Allreduce: Other MPI error, error stack:\nsee the FAQ\n") == ()


def test_job_that_went_on_after_the_record_is_not_its_failure() -> None:
    text = PRINTED + "".join(f"epoch 3 step {i} loss 0.{i}1\n" for i in range(1, 8)) + "training finished\n"
    assert parse_mpi_errors(text) == ()


# --- Cray ALPS's line of an OOM kill (round 49: mom-ocean/MOM6#552 was refused) ---------------------------------------

ALPS = ("forecast day 12 written\n"
        "[NID 04417] 2019-02-03 08:11:42 Apid 88120455: initiated application termination\n"
        "[NID 04417] 2019-02-03 08:11:43 Apid 88120455: OOM killer terminated this process.\n"
        "Application 88120455 exit codes: 137\n")


def test_alps_oom_line_is_a_kill_on_its_node(tmp_path: Path) -> None:
    got = failure_verdict(ALPS, tmp_path)
    assert got["kind"] == "crash" and got["culprit_ranks"] == []
    assert got["culprit_host"] == "nid04417" and "OOM killer" in got["summary"]


def test_alps_oom_words_in_a_sentence_or_gone_on_after_are_not_read() -> None:
    from triage.parsing.launchers import parse_rank_deaths
    quoted = "The admins said 'Apid 88120455: OOM killer terminated this process.' means the node ran out.\n"
    assert not [d for d in parse_rank_deaths(quoted) if "OOM killer" in d.text]
    went_on = ALPS.replace("Application 88120455 exit codes: 137\n", "") + "".join(
        f"epoch 4 step {step} loss 0.{step}1\n" for step in range(1, 8))
    assert not [d for d in parse_rank_deaths(went_on) if "OOM killer" in d.text]


# --- MPICH ch3:sock's failed connection to a peer (round 49: UniStuttgart-VISUS/megamol#285 had no reader) -----------

CH3 = ("[3] fatal error\n"
       "Fatal error in MPI_Allgather: Other MPI error, error stack:\n"
       "MPI_Allgather(sbuf=0x1, scount=1, MPI_INT, rbuf=0x2, rcount=1, MPI_INT, MPI_COMM_WORLD) failed\n"
       '[ch3:sock] rank 3 unable to connect to rank 7 using business card <port=50112 description="192.168.4.17 '
       'render07 " shm_host=render07 shm_queue=4410:880 >\n'
       "unable to connect to 192.168.4.17 render07  on port 50112, the connection attempt timed out\n")


def test_ch3_sock_connection_is_a_network_error_of_no_rank(tmp_path: Path) -> None:
    got = failure_verdict(CH3, tmp_path)
    assert got["kind"] == "network_error" and got["culprit_ranks"] == []
    assert "could not connect to rank 7" in got["summary"]


def test_ch3_sock_words_quoted_or_gone_on_after_are_not_read() -> None:
    quoted = "Our FAQ: a '[ch3:sock] rank 3 unable to connect to rank 7 using business card' line means a firewall.\n"
    assert not [e for e in parse_mpi_errors(quoted) if "ch3:sock" in e.text]
    went_on = CH3 + "".join(f"epoch 2 step {step} loss 0.{step}2\n" for step in range(1, 8))
    assert not [e for e in parse_mpi_errors(went_on) if "ch3:sock" in e.text]
