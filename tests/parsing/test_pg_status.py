"""ProcessGroupNCCL's per-rank last enqueued/completed counts (triage.parsing.pg_status), in each PyTorch
version's wording and in a person's summary of them."""

from __future__ import annotations

import pytest

from triage.parsing.pg_status import PgStatus, behind_ranks, parse_pg_status


@pytest.mark.parametrize(("line", "status"), [
    (("[rank0]:[E1206 18:44:16.99 ProcessGroupNCCL.cpp:1709] [PG 1 Rank 0] Timeout at NCCL work: 7753, last "
     "enqueued NCCL work: 7755, last completed NCCL work: 7752."), PgStatus((0,), "1", 7755, 7752)),
    (("[PG ID 0 PG GUID 0(default_pg) Rank 7]  failure detected by watchdog at work sequence id: 460631 PG status: "
     "last enqueued work: 460631, last completed work: 460630"), PgStatus((7,), "0/0", 460631, 460630)),
    (("[PG ID 2 PG GUID 5(tp) Rank 3] Received a dump signal due to a collective timeout from this local rank and we "
     "will try our best to dump the debug info. Last enqueued NCCL work: 6, last completed NCCL work: 6.This is most"),
     PgStatus((3,), "2/5", 6, 6)),
    ("[Rank 1] Last enqueued NCCL work: 21936, last completed 21936 ", PgStatus((1,), None, 21936, 21936)),
    ("[Rank 0/2/3] Last enqueued NCCL work: 21937, la", PgStatus((0, 2, 3), None, 21937, None)),
])
def test_each_wording_reads(line: str, status: PgStatus) -> None:
    assert parse_pg_status(line) == (status,)


@pytest.mark.parametrize("line", [
    "Last enqueued NCCL work: 5, last completed NCCL work: 5.",          # no rank on the line
    "[PG 0 Rank 2] Timeout at NCCL work: 1, last enqueued NCCL work: 1, last completed NCCL work: 76280750235782912.",
    "the rank with the lower last enqueued count never reached it",
])
def test_lines_that_name_no_rank_or_no_sane_count_are_skipped(line: str) -> None:
    assert parse_pg_status(line) == ()


def _dump(rank: int, enqueued: int, completed: int, pg: str = "0") -> str:
    return (f"[rank{rank}]:[E626 16:48:26.32 ProcessGroupNCCL.cpp:1743] [PG ID {pg} PG GUID {pg}(default_pg) Rank "
            f"{rank}] Received a dump signal due to a collective timeout from  rank 4 and we will try our best to "
            f"dump the debug info. Last enqueued NCCL work: {enqueued}, last completed NCCL work: {completed}.\n")


def test_the_rank_below_the_others_that_waits_in_nothing_is_behind() -> None:
    text = _dump(0, 120, 119) + _dump(1, 120, 119) + _dump(2, 119, 119) + _dump(3, 120, 119)
    (lag,) = behind_ranks(parse_pg_status(text))
    assert (lag.behind, lag.behind_enqueued, lag.ahead, lag.ahead_enqueued) == ((2,), 119, (0, 1, 3), 120)


@pytest.mark.parametrize("text", [
    # every rank at the same count: nobody is behind
    _dump(0, 120, 119) + _dump(1, 120, 119),
    # the lower rank is still in a collective it launched (the others completed it: a mismatch, not a missing rank)
    _dump(0, 215122, 215121) + _dump(1, 215121, 215120),
    # counts of different process groups are never compared
    _dump(0, 120, 119, pg="0") + _dump(1, 119, 119, pg="3"),
    # one rank only
    _dump(1, 119, 119),
    # -1: no collective yet on that group (the rank may never have used it)
    _dump(0, 12, 11) + _dump(1, -1, -1),
    # three levels: which is behind what, the counts do not say
    _dump(0, 12, 12) + _dump(1, 13, 13) + _dump(2, 14, 13),
])
def test_no_rank_is_behind_where_the_counts_do_not_show_it(text: str) -> None:
    assert behind_ranks(parse_pg_status(text)) == ()
