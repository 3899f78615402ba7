"""Classes of real pasted logs found by round 20 of the real-world corpus, each tested on a variant written
here (other ranks, tags, collectives and numbers than the cases' own lines)."""

from __future__ import annotations

from tests.helpers.report import report_lines as report
from triage.parsing.textclean import clean_text


def _timeout(tag: str, rank: int, ms: int) -> str:
    return (f"{tag}[E ProcessGroupNCCL.cpp:828] [Rank {rank}] Watchdog caught collective operation timeout: "
            f"WorkNCCL(SeqNum=90412, OpType=BROADCAST, NumelIn=2048, NumelOut=2048, Timeout(ms)=900000) "
            f"ran for {ms} milliseconds before timing out.")


# the same watchdog message told by three ranks under a launcher's tag: the lines differ only in their
# numbers, so they all end at the same column, which is no terminal wrap (xiuqhou/Salience-DETR#8's timeouts
# rewritten into Open MPI's, horovodrun's or Lightning's tags)
_TAGS = (lambda r: f"[1,{r}]<stderr>:", lambda r: f"[{r}]<stdout>:", lambda r: f"[rank: {r}] ",
         lambda r: f"(VllmWorker TP{r} pid={7300 + r}) ")


def test_one_message_told_by_several_ranks_at_the_same_width_is_no_wrap() -> None:
    for tag in _TAGS:
        lines = [_timeout(tag(r), r, ms) for r, ms in ((5, 900412), (2, 900407), (6, 900398))]
        assert len({len(line) for line in lines}) == 1
        clean = clean_text("\n".join(["epoch 3: validating on 1,000 clips", *lines]))
        assert clean.joined == 0 and len(clean.lines) == 4, tag(0)
        result = report("epoch 3: validating on 1,000 clips", *lines)
        assert result.verdict.kind.value in ("hang", "stuck_outside_collective"), tag(0)
        assert "5" in result.verdict.summary and "2" in result.verdict.summary and "6" in result.verdict.summary


def test_lines_a_terminal_wrapped_at_one_width_are_still_joined() -> None:
    width = 80
    record = ("[rank3]:[E ProcessGroupNCCL.cpp:828] [Rank 3] Watchdog caught collective operation timeout: "
              "WorkNCCL(SeqNum=90412, OpType=BROADCAST, NumelIn=2048, NumelOut=2048, Timeout(ms)=900000) ran for "
              "900412 milliseconds before timing out. Exception raised from checkTimeout at ProcessGroupNCCL.cpp:828")
    cut = [record[i:i + width] for i in range(0, len(record), width)]
    assert sum(len(part) == width for part in cut) >= 3
    clean = clean_text("\n".join(cut))
    assert clean.joined >= 2 and any("ran for 900412 milliseconds" in line for line in clean.lines)


_OPTS = ("TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), "
         "requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt)))")


def _one_sided(rank: int, op: str, shape: str, dtype: str = "Half") -> str:
    return (f"RuntimeError: Detected mismatch between collectives on ranks. Rank {rank} is running inconsistent "
            f"collective: CollectiveFingerPrint(OpType={op}, TensorShape=[{shape}], TensorDtypes={dtype}, {_OPTS}")


# older PyTorch's DETAIL message gives each rank's own call only; two ranks telling different calls are the two
# sides (xljh0520/JOTR#4: the same ALLGATHER, [41, ...] against [40, ...])
def test_two_ranks_one_sided_reports_are_compared() -> None:
    result = report(_one_sided(2, "REDUCE_SCATTER", "96, 1024"), _one_sided(5, "REDUCE_SCATTER", "95, 1024"))
    assert (result.verdict.kind.value, result.verdict.subkind, result.verdict.culprit_ranks) == (
        "collective_mismatch", "size", ())
    assert "rank 2" in result.verdict.summary and "rank 5" in result.verdict.summary
    result = report(_one_sided(1, "ALLGATHER", "64"), _one_sided(3, "ALLREDUCE", "64"))
    assert (result.verdict.subkind, result.verdict.culprit_ranks) == ("op", ())
    # (a side path's call against a training step's, 1 rank against 1: the side path's rank, as for two-sided reports)
    result = report(_one_sided(1, "BROADCAST", "64"), _one_sided(3, "ALLREDUCE", "64"))
    assert (result.verdict.subkind, result.verdict.culprit_ranks) == ("op", (1,))
    result = report(_one_sided(0, "ALLREDUCE", "8"), _one_sided(4, "ALLREDUCE", "8", "Float"))
    assert result.verdict.subkind == "dtype"


def test_one_rank_told_twice_is_still_one_side() -> None:
    result = report(_one_sided(6, "ALLGATHER", "41, 256"), _one_sided(6, "ALLGATHER", "41, 256"))
    assert (result.verdict.kind.value, result.verdict.subkind, result.verdict.culprit_ranks) == (
        "collective_mismatch", None, ())
    assert "gives one side only" in result.verdict.summary
