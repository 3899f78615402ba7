"""Round 53: mpi4jax's line as it aborts the job on a failed MPI call.

mpi4jax checks every MPI call's error code and, on an error, prints ``r<rank> | MPI_<Call> returned error code <N>:
<the MPI library's error string> - aborting`` (older releases: no error string) before MPI_Abort. The line is the
failure of that rank's MPI call (an exception of that rank); quoted without its ``r<rank> |`` head it names no rank.
A sentence that says a call "returned error code 3", the words without the head, the tail or an MPI error class, or
a job that went on after the line are not read.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers.report import failure_verdict
from triage.parsing.mpi_errors import parse_mpi_errors

# a variant of the full line: another call, rank and error class, then Open MPI's box for the same rank
FULL = ("step 40 loss 0.8123\n"
        "r2 | MPI_Bcast returned error code 2: b'MPI_ERR_COUNT: invalid count argument' - aborting\n"
        "--------------------------------------------------------------------------\n"
        "MPI_ABORT was invoked on rank 2 in communicator MPI_COMM_WORLD\nwith errorcode 2.\n\n"
        "NOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes.\n"
        "--------------------------------------------------------------------------\n")

# the older form, with no error string
OLDER = "r5 | MPI_Sendrecv returned error code 15 - aborting\n"

# quoted without its head, its closing quote lost: an MPI error class, no rank
QUOTED = "MPI_Reduce returned error code 17: b'MPI_ERR_OP: invalid reduce operation\n"


def test_full_line_is_that_ranks_exception(tmp_path: Path) -> None:
    got = failure_verdict(FULL, tmp_path)
    assert got["kind"] == "exception" and got["culprit_ranks"] == [2]
    records = [e for e in parse_mpi_errors(FULL) if "MPI_Bcast" in e.text]
    assert [(e.rank, e.first) for e in records] == [(2, True)]
    assert "MPI_ERR_COUNT" in records[0].text


def test_older_line_without_error_string(tmp_path: Path) -> None:
    got = failure_verdict(OLDER, tmp_path)
    assert got["kind"] == "exception" and got["culprit_ranks"] == [5]
    assert "MPI_Sendrecv" in got["summary"]


def test_quoted_line_names_no_rank(tmp_path: Path) -> None:
    got = failure_verdict(QUOTED, tmp_path)
    assert got["kind"] == "exception" and got["culprit_ranks"] == []
    [record] = parse_mpi_errors(QUOTED)
    assert record.rank is None and "MPI_ERR_OP" in record.text


def test_tagged_and_numbered_lines(tmp_path: Path) -> None:
    # under Open MPI's --tag-output, and with a viewer's line number before a quoted line
    tagged = "[1,3]<stderr>:r3 | MPI_Gather returned error code 1: b'MPI_ERR_BUFFER: invalid buffer pointer' - aborting\n"
    got = failure_verdict(tagged, tmp_path)
    assert got["kind"] == "exception" and got["culprit_ranks"] == [3]
    [record] = parse_mpi_errors("[4411] " + QUOTED)
    assert record.rank is None and "MPI_Reduce" in record.text


def test_words_in_a_sentence_are_not_a_record() -> None:
    text = ("The wrapper raises when MPI_Send returned error code 3: b'MPI_ERR_BUFFER' - aborting is its last word.\n"
            "In our runs the job finished.\n")
    assert parse_mpi_errors(text) == ()


def test_line_without_head_tail_or_error_class_is_not_a_record() -> None:
    assert parse_mpi_errors("MPI_Send returned error code 3\n") == ()
    assert parse_mpi_errors("MPI_Send returned error code 3: see the manual\n") == ()


def test_job_that_went_on_after_the_line_is_not_read() -> None:
    text = ("r1 | MPI_Allreduce returned error code 15: b'MPI_ERR_TRUNCATE: message truncated' - aborting\n"
            "Epoch 3/10: 100%|##########| 250/250 [00:41<00:00, 6.02it/s, loss=0.412]\n"
            "Epoch 4/10: 100%|##########| 250/250 [00:41<00:00, 6.01it/s, loss=0.398]\n")
    assert parse_mpi_errors(text) == ()
