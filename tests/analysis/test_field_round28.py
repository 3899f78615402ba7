"""Classes of real pasted logs found by round 28 of the real-world corpus, each tested on a variant written
here (other hosts, ranks, pids, calls and surrounding words than the cases' own)."""

from __future__ import annotations

from tests.helpers.report import report_lines as report
from triage.parsing.launchers import parse_rank_deaths
from triage.parsing.mpi_errors import parse_mpi_errors


# a person's sentence naming several ranks before one verb ("rank 1 and rank 3 crashed during sampling",
# jasperzhong/GNNFlow#67's shape) blamed only the first rank it named
def test_a_sentence_naming_two_ranks_that_crashed_blames_both() -> None:
    result = report("On the 8-node run, rank 2 and rank 6 crashed while the loader fetched the next shard.",
                    "INFO:root:Epoch 5/40 | Iter 300/812 | Loss 0.4410")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert result.verdict.culprit_ranks == (2, 6), result.verdict.summary


def test_a_list_of_ranks_with_commas_and_the_plural_blames_each() -> None:
    assert report("after 3 hours rank 0, rank 4 and rank 5 died from signal 11").verdict.culprit_ranks == (0, 4, 5)
    result = report("ranks 3 and 7 crashed during evaluation")
    assert result.verdict.kind.value == "crash"
    assert result.verdict.culprit_ranks == (3, 7)


def test_ranks_on_separate_lines_still_order_the_failures() -> None:
    # (two sentences are two records: the second rank is still after the first, not beside it)
    result = report("rank 2 died", "rank 6 died")
    assert result.verdict.culprit_ranks == (2,)


def test_or_and_a_range_are_not_lists_of_failed_ranks() -> None:
    assert [d.rank for d in parse_rank_deaths("rank 1 or rank 3 crashed, not sure which")] == [1]
    assert [d.rank for d in parse_rank_deaths("rank 0 exited normally and rank 4 crashed")] == [4]


# Open MPI's notice of an MPI call made before MPI_INIT (or after MPI_FINALIZE), with the process's "Local abort"
# line after it, was refused (exalearn/EXARL#22's shape; another call, host, pid, and the MPI_FINALIZE form)
_AFTER_FINALIZE = (
    "*** The MPI_Comm_size() function was called after MPI_FINALIZE was invoked.",
    "*** This is disallowed by the MPI standard.",
    "*** Your MPI job will now abort.",
    ("[gpu-node07.cluster:31337] Local abort after MPI_FINALIZE started completed successfully, but am not able to "
     "aggregate error messages, and not able to guarantee that all other processes were killed!"),
)


def test_an_mpi_call_after_finalize_is_an_exception_of_the_process_on_its_host() -> None:
    result = report("epoch 12 done, writing metrics", *_AFTER_FINALIZE)
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert result.verdict.culprit_ranks == ()
    assert result.verdict.culprit_host == "gpu-node07.cluster"
    assert "MPI_Comm_size()" in result.verdict.summary and "MPI_FINALIZE" in result.verdict.summary


def test_the_notice_and_its_local_abort_line_are_one_record() -> None:
    errors = parse_mpi_errors("*** The MPI_Bcast() function was called before MPI_INIT was invoked.\n"
                              "*** This is disallowed by the MPI standard.\n*** Your MPI job will now abort.\n"
                              "[n042:9911] Local abort before MPI_INIT completed completed successfully, but am not "
                              "able to aggregate error messages, and not able to guarantee that all other processes "
                              "were killed!\n")
    assert len(errors) == 1
    assert (errors[0].host, errors[0].pid, errors[0].rank) == ("n042", 9911, None)


def test_a_local_abort_line_alone_still_names_the_process() -> None:
    errors = parse_mpi_errors("[c3-17:404] Local abort before MPI_INIT completed completed successfully, but am not "
                              "able to aggregate error messages\n")
    assert [(e.host, e.pid) for e in errors] == [("c3-17", 404)]
