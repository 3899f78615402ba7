"""Classes of real pasted logs found by the third round of the real-world corpus, each tested on a
variant of the class (other ranks, groups, ops and wording than the case's own lines)."""

from __future__ import annotations

from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts
from triage.model import Report


def report(*lines: str) -> Report:
    return analyze(load_log_texts([("job.log", "\n".join(lines) + "\n")]))


def _timeout(prefix: str, rank: int, seq: int, op: str, numel_in: int, numel_out: int) -> str:
    return (f"{prefix}[E ProcessGroupNCCL.cpp:563] [Rank {rank}] Watchdog caught collective operation timeout: "
            f"WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn={numel_in}, NumelOut={numel_out}, Timeout(ms)=1800000) "
            "ran for 1800051 milliseconds before timing out.")


def _fingerprint(seq: int, op: str, shape: str, dtype: str) -> str:
    return (f"CollectiveFingerPrint(SequenceNumber={seq}, OpType={op}, TensorShape=[{shape}], TensorDtypes={dtype}, "
            "TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), "
            "requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt)))")


def _mismatch(reporter: int, mine: str, other: int, theirs: str) -> str:
    return (f"RuntimeError: Detected mismatch between collectives on ranks. Rank {reporter} is running collective: "
            f"{mine}, but Rank {other} is running collective: {theirs}.")


def test_a_timeout_glued_after_another_ranks_progress_bar_is_the_glued_ranks() -> None:
    # nanotron#204's class: torchrun --tee tags; rank 1's bar ends without a line end, rank 3's timeout sticks to it
    result = report("[default1]:Running tokenizer on dataset:  23%|██▎       | 2300/10000 [01:02<03:29, 36.80 ex/s]"
                    + _timeout("[default3]:", 3, 4, "ALLREDUCE", 1, 1),
                    _timeout("[default2]:", 2, 4, "ALLREDUCE", 1, 1),
                    _timeout("[default0]:", 0, 4, "ALLREDUCE", 1, 1))
    assert result.verdict.kind.value == "stuck_outside_collective"
    assert result.verdict.culprit_ranks == (1,)
    assert "Running tokenizer" in result.verdict.summary


def test_a_log_viewers_column_does_not_make_the_ranks_lines_rank_0_work() -> None:
    # litData#340's class: "  | <time> | " before every line; the rank prefix behind it still counts
    stamp = "  | 2025-02-11T08:15:0{}.004Z | "
    result = report(stamp.format(1) + "[rank5]:[E ProcessGroupNCCL.cpp:577] [Rank 5] Some NCCL operations have "
                    "failed or timed out.",
                    stamp.format(2) + _timeout("[rank5]:", 5, 1207, "_ALLGATHER_BASE", 4096, 32768))
    assert result.verdict.kind.value == "hang"
    assert result.verdict.culprit_ranks == ()
    assert "rank 5 timed out" in result.verdict.summary
