"""Session 58 (fix58c; from session 57's sweep, Lightning-AI/pytorch-lightning#4420, a thread of a corpus repository,
not a corpus case): PyTorch's store-based barrier after init_process_group (the form with ``worker_count=``) counts
the ranks that reached it out of the default group's world size, and each rank that reached it logs its own line.
Where the input shows as many ranks waiting in its last barrier as the count, the ranks of 0..world_size-1 not shown
are the ones that never arrived: named in the verdict's words (triage.analysis.init_hang), not blamed (why they never
came, the input does not say: the corpus labels such a hang's culprit unknown); where it shows fewer, they are "not in
this input" as before."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.report import report_log

WAIT = ("INFO:torch.distributed.distributed_c10d:Waiting in store based barrier to initialize process group for "
        "rank: {rank}, key: store_based_barrier_key:{key} (world_size={world}, worker_count={count}, "
        "timeout=0:30:00)")
TIMED_OUT = ("[rank{rank}]: RuntimeError: Timed out initializing process group in store based barrier on rank: "
             "{rank}, for key: store_based_barrier_key:{key} (world_size={world}, worker_count={count}, "
             "timeout=0:30:00)")


def _verdict(lines: list[str], tmp_path: Path) -> dict[str, object]:
    _code, got = report_log("\n".join(lines) + "\n", tmp_path)
    return got["verdict"]  # type: ignore[no-any-return]


def test_every_rank_that_arrived_is_shown_waiting_the_one_missing_is_named(tmp_path: Path) -> None:
    lines = [WAIT.format(rank=r, key=1, world=4, count=3) for r in (3, 0, 1, 0, 3)]
    verdict = _verdict(lines, tmp_path)
    assert verdict["kind"] == "init_hang" and verdict["culprit_ranks"] == [], verdict
    assert str(verdict["summary"]).startswith("INIT HANG: rank 2 never reached"), verdict
    assert "3 of 4 ranks reached it" in str(verdict["summary"]) and "ranks 0,1,3" in str(verdict["summary"]), verdict


def test_timed_out_ranks_name_the_two_that_never_arrived(tmp_path: Path) -> None:
    lines = [TIMED_OUT.format(rank=r, key=1, world=6, count=4) for r in (1, 3, 4, 5)]
    verdict = _verdict(lines, tmp_path)
    assert verdict["kind"] == "init_hang" and verdict["culprit_ranks"] == [], verdict
    assert str(verdict["summary"]).startswith("INIT HANG: ranks 0,2 never reached"), verdict


def test_fewer_ranks_shown_than_arrived_names_none(tmp_path: Path) -> None:
    # 3 arrived, 2 shown: which of ranks 1 and 3 never came, the input does not say
    lines = [WAIT.format(rank=r, key=1, world=4, count=3) for r in (0, 2)]
    verdict = _verdict(lines, tmp_path)
    assert verdict["kind"] == "init_hang" and "never reached" not in str(verdict["summary"]), verdict
    assert "not in this input" in str(verdict["summary"]), verdict


def test_the_ranks_of_another_barrier_do_not_count(tmp_path: Path) -> None:
    # the first barrier (key 1) passed with all four; the second (key 2) shows two of its three arrivals
    lines = [WAIT.format(rank=r, key=1, world=4, count=2) for r in (0, 1)]
    lines += [WAIT.format(rank=r, key=2, world=4, count=3) for r in (2, 3)]
    verdict = _verdict(lines, tmp_path)
    assert "never reached" not in str(verdict["summary"]), verdict


def test_the_real_text(tmp_path: Path) -> None:
    # Lightning-AI/pytorch-lightning#4420: 8 processes, 7 in the barrier, rank 4's never came
    text = "\n".join(
        f"INFO:root:Waiting in store based barrier to initialize process group for rank: {r}, key: "
        "store_based_barrier_key:1 (world_size=8, worker_count=7, timeout=0:30:00)" for r in (5, 6, 2, 1, 7, 3, 5, 0))
    verdict = _verdict([text], tmp_path)
    assert verdict["kind"] == "init_hang" and str(verdict["summary"]).startswith("INIT HANG: rank 4 never reached"), \
        verdict
