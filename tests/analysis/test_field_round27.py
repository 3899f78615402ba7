"""Classes of real pasted logs found by round 27 of the real-world corpus, each tested on a variant written
here (other hosts, ranks, pids, codes and surrounding lines than the cases' own)."""

from __future__ import annotations

from tests.helpers.report import report_lines as report

_ABORT_BOX = (
    "--------------------------------------------------------------------------",
    "MPI_ABORT was invoked on rank 5 in communicator MPI_COMM_WORLD",
    "with errorcode 3.",
    "",
    "NOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes.",
    "You may or may not see output from other processes, depending on",
    "exactly when Open MPI kills them.",
    "--------------------------------------------------------------------------",
)


def _tagged(prefix: str, *lines: str) -> tuple[str, ...]:
    return tuple(prefix + line if line else line for line in lines)


# Open MPI's MPI_ABORT box spans two lines ("... in communicator MPI_COMM_WORLD" / "with errorcode N."); behind a
# `kubectl logs --prefix` tag on every line it was not read, and the ranks' own "N tests failed on rank R" lines
# were taken for the failure (Xilinx/ACCL#104's shape, found by the decorations test; another rank, code and pod)
def test_an_mpi_abort_box_behind_a_kubectl_tag_still_names_the_rank_that_aborted() -> None:
    body = tuple(f"[1,{r}]<stdout>:2 checks failed on rank {r}." for r in (3, 0, 5, 1, 2, 4)) + _ABORT_BOX
    for prefix in ("[pod/mpi-job-launcher-7x/launcher] ",
                   "[pod/mpi-job-launcher-7x/launcher] 2025-03-02T08:15:00.000000001Z "):
        result = report(*_tagged(prefix, *body))
        assert result.verdict.kind.value == "exception", (prefix, result.verdict.summary)
        assert result.verdict.culprit_ranks == (5,), (prefix, result.verdict.summary)
        assert "MPI_Abort" in result.verdict.summary


def test_the_same_box_without_a_tag_names_the_same_rank() -> None:
    result = report(*_ABORT_BOX)
    assert result.verdict.kind.value == "exception"
    assert result.verdict.culprit_ranks == (5,)

