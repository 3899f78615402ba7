"""Session 46's fixes of the review rev45's open findings (issue 23): each class on variants written here, with a
negative beside each."""

from __future__ import annotations

import pytest

from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts
from triage.model import Report


def report(*lines: str) -> Report:
    return analyze(load_log_texts([("job.log", "\n".join(lines) + "\n")]))


def _steps(*ranks: int, step: int = 1) -> list[str]:
    return [f"[rank{r}]: step {step} loss 2.{r}1" for r in ranks]


# (1) a rank-less exception line or traceback, after which every rank this input shows printed progress and a rank
# said the run ended well: a trace a library logged or one it handled, a note, never the failure
_LOGGED = {
    "java debug trace": ["24/11/28 09:00:01 DEBUG ipc.Client: closing ipc connection",
                         "java.lang.Exception: Stack trace",
                         "\tat org.apache.hadoop.ipc.Client$Connection.close(Client.java:1234)"],
    "py4j": ["py4j.protocol.Py4JNetworkError: Answer from Java side is empty"],
    "handled bare StopIteration": ["WARNING:prefetch:worker thread ended, restarting the iterator:",
                                   "Traceback (most recent call last):",
                                   '  File "/opt/venv/lib/python3.11/site-packages/mylib/prefetch.py", line 40, in w',
                                   "    batch = next(self.it)", "StopIteration"],
    "logging thread's traceback": ["Exception in thread uploader:", "Traceback (most recent call last):",
                                   '  File "/opt/venv/lib/python3.11/site-packages/tracker/upload.py", line 9, in run',
                                   "ConnectionResetError: [Errno 104] Connection reset by peer"],
}


@pytest.mark.parametrize("name", sorted(_LOGGED))
def test_a_rank_less_trace_every_rank_went_on_past_and_ended_is_no_failure(name: str) -> None:
    result = report(*_steps(0, 1, 2), *_LOGGED[name], *_steps(0, 1, 2, step=2), *_steps(0, 1, 2, step=3),
                    "[rank0]: Training complete", "[rank1]: Training complete")
    assert result.verdict.kind.value == "no_problem_found", result.verdict.summary
    assert "went on after an error line" in result.verdict.summary, result.verdict.summary


@pytest.mark.parametrize("name", sorted(_LOGGED))
def test_a_rank_less_trace_one_rank_printed_nothing_after_stays_the_failure(name: str) -> None:
    # rank 2 printed nothing after it: the trace may be rank 2's, its last words
    result = report(*_steps(0, 1, 2), *_LOGGED[name], *_steps(0, 1, step=2), "[rank0]: Training complete")
    assert result.verdict.kind.value != "no_problem_found", result.verdict.summary


@pytest.mark.parametrize("name", sorted(_LOGGED))
def test_a_rank_less_trace_every_rank_stepped_after_but_none_ended_stays_the_failure(name: str) -> None:
    # every rank printed one more step (the work in flight) and then nothing: no rank said the run ended
    result = report(*_steps(0, 1, 2), *_LOGGED[name], *_steps(0, 1, 2, step=2), "+ echo Done.", "Done.")
    assert result.verdict.kind.value != "no_problem_found", result.verdict.summary


def test_a_ranks_own_trace_the_others_went_on_past_stays_that_ranks_failure() -> None:
    result = report(*_steps(0, 1), "[rank1]: Traceback (most recent call last):",
                    "[rank1]: ValueError: bad shard 7", *_steps(0, step=2), "[rank0]: Training complete")
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert tuple(result.verdict.culprit_ranks) == (1,), result.verdict.summary


# a metric named "...Error" logged with its value is no exception at all
@pytest.mark.parametrize("metric", ["eval.Error: 0.3912", "top1.Error: 29.4%", "val.MeanSquaredError: 1.2e-03",
                                    "test.Error: .05"])
def test_a_metric_named_error_with_its_value_is_no_exception(metric: str) -> None:
    result = report(*_steps(0, 1), metric, *_steps(0, 1, step=2), metric)
    assert result.verdict.kind.value == "no_problem_found", result.verdict.summary


@pytest.mark.parametrize("last", ["KeyError: 0", "ValueError: 0.5 is not a valid probability"])
def test_an_exception_whose_message_is_not_only_a_fraction_stays_one(last: str) -> None:
    result = report(*_steps(0, 1), "[rank1]: Traceback (most recent call last):", f"[rank1]: {last}")
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert tuple(result.verdict.culprit_ranks) == (1,), result.verdict.summary


# (2) an MPICH/Intel MPI rank whose record says it lost a peer ("Communication error with rank 2") that Hydra's box
# shows killed by a signal: that peer's death is the first failure, the reporters and the other killed boxes after it
def _box(rank: int, host: str, end: str, framed: bool = True) -> list[str]:
    lines = ["BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES", f"RANK {rank} PID {5000 + rank} RUNNING AT {host}",
             end]
    return ["=" * 83, *(f"=   {line}" for line in lines), "=" * 83, ""] if framed else \
        [line + "," for line in lines[:-1]] + [end + ".", ""]


def _mpich_record(rank: int, peer: int, deep: bool) -> list[str]:
    head = (f"Abort(806995983) on node {rank} (rank {rank} in comm 0): Fatal error in PMPI_Allreduce: Other MPI error, "
            "error stack:")
    stack = [("PMPI_Allreduce(472)..............: MPI_Allreduce(sbuf=0x7ffd, rbuf=0x7ffc, count=1, MPI_DOUBLE, "
              "MPI_SUM, MPI_COMM_WORLD) failed"), "MPIR_Allreduce_intra_auto(207)...: "] if deep else []
    return [head, *stack, f"MPIDI_CH3I_Progress(1051)........: Communication error with rank {peer}"]


@pytest.mark.parametrize("reporters_end", ["EXIT STATUS: 15", "EXIT STATUS: 1"])
@pytest.mark.parametrize("framed", [True, False])
@pytest.mark.parametrize("peer", [2, 3])
def test_the_peer_an_mpich_record_says_it_lost_is_the_failure(reporters_end: str, framed: bool, peer: int) -> None:
    lines = ["[0] step 10 residual 1.2e-3", *_mpich_record(0, peer, True), *_mpich_record(1, peer, False), ""]
    for rank in range(4):
        lines += _box(rank, f"node{rank // 2}", reporters_end if rank < 2 else "KILLED BY SIGNAL: 9 (Killed)", framed)
    result = report(*lines)
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert tuple(result.verdict.culprit_ranks) == (peer,), result.verdict.summary
    assert "SIGKILL" in result.verdict.summary and "MPI records of ranks 0,1 say it lost" in result.verdict.summary
    assert "failed after it (collateral)" in result.verdict.summary, result.verdict.summary


def test_a_lost_peer_that_ended_by_itself_leaves_the_reading_as_it_was() -> None:
    # the peer the record names exited with code 1 (its own end, no kill): the records' network error stands
    lines = [*_mpich_record(0, 2, True), "", *_box(0, "node0", "EXIT STATUS: 1"), *_box(2, "node1", "EXIT STATUS: 1"),
             *_box(3, "node1", "KILLED BY SIGNAL: 9 (Killed)")]
    result = report(*lines)
    assert 3 not in result.verdict.culprit_ranks, result.verdict.summary


def test_an_abort_that_names_no_lost_peer_keeps_the_kills_hydras_cleanup() -> None:
    lines = ["Abort(1) on node 0 (rank 0 in comm 0): application called MPI_Abort(MPI_COMM_WORLD, 1) - process 0", "",
             *_box(0, "node0", "EXIT STATUS: 1"), *_box(1, "node0", "KILLED BY SIGNAL: 9 (Killed)"),
             *_box(2, "node1", "KILLED BY SIGNAL: 9 (Killed)")]
    result = report(*lines)
    assert tuple(result.verdict.culprit_ranks) == (0,), result.verdict.summary


# (2) a rank's record of its failed MPI call (mpi4jax's abort line) and Open MPI's record that the same rank was the
# first to exit with a code: one failure, the call's words; Open MPI's tag names the world rank, mpi4jax's "rN" the
# rank in the call's communicator
_FIRST_PROCESS = ["-" * 74, "Primary job  terminated normally, but 1 process returned",
                  "a non-zero exit code. Per user-direction, the job has been aborted.", "-" * 74, "-" * 74,
                  "mpirun detected that one or more processes exited with non-zero status, thus causing",
                  "the job to be terminated. The first process to do so was:", "",
                  "  Process name: [[4455,1],{rank}]", "  Exit code:    1", "-" * 74]


@pytest.mark.parametrize(("tag", "rank"), [("[1,1]<stderr>:", 1), ("", 1), ("[1,5]<stderr>:", 5),
                                           ("[1,6]<stdout>: ", 6)])
@pytest.mark.parametrize("call", ["MPI_Allreduce returned error code 15: b'MPI_ERR_TRUNCATE: message truncated'",
                                  "MPI_Sendrecv returned error code 3: b'MPI_ERR_COMM: invalid communicator'"])
def test_mpi4jaxs_line_with_open_mpis_first_process_record_is_one_failure(tag: str, rank: int, call: str) -> None:
    result = report("[1,0]<stdout>:step 10 loss 0.5", "[1,1]<stdout>:step 10 loss 0.5",
                    f"{tag}r1 | {call} - aborting", *(line.format(rank=rank) for line in _FIRST_PROCESS))
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert tuple(result.verdict.culprit_ranks) == (rank,), result.verdict.summary
    assert "failed in MPI_" in result.verdict.summary and "collateral" not in result.verdict.summary


def test_open_mpis_first_process_record_alone_still_names_its_rank() -> None:
    result = report("[1,0]<stdout>:step 10 loss 0.5", *(line.format(rank=3) for line in _FIRST_PROCESS))
    assert tuple(result.verdict.culprit_ranks) == (3,), result.verdict.summary
    assert "exited with code 1" in result.verdict.summary, result.verdict.summary
