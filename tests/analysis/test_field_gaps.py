"""Classes of real pasted logs that triage used to get wrong (tests/realworld/known_gaps.yaml), each
on a variant of the class rather than on the case's own lines."""

from __future__ import annotations

from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts
from triage.model import Report

OPTS = ("TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), "
        "requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt)))")


def report(*lines: str) -> Report:
    return analyze(load_log_texts([("job.log", "\n".join(lines) + "\n")]))


def _mismatch(a: int, op_a: str, shape_a: str, b: int, op_b: str, shape_b: str, seq: int = 77) -> str:
    fp = "CollectiveFingerPrint(SequenceNumber={seq}, OpType={op}, TensorShape=[{shape}], TensorDtypes=Float, " + OPTS
    return (f"[rank{a}]: RuntimeError: Detected mismatch between collectives on ranks. Rank {a} is running collective: "
            + fp.format(seq=seq, op=op_a, shape=shape_a) + f", but Rank {b} is running collective: "
            + fp.format(seq=seq, op=op_b, shape=shape_b) + ".")


EXIT_RECORD = ("[2025-03-02 11:02:03,456] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: 1) "
               "local_rank: 1 (pid: 4242) of binary: /usr/bin/python3")


def test_two_ranks_one_in_a_side_path_collective_names_that_rank() -> None:
    # speechbrain#2401's class: one rank in a rooted/object collective, the other in the step's all-reduce
    result = report(_mismatch(0, "ALLGATHER", "4096", 1, "BARRIER", "1"), EXIT_RECORD)
    assert result.verdict.kind.value == "collective_mismatch"
    assert result.verdict.culprit_ranks == (1,)
    assert result.verdict.subkind is not None and result.verdict.subkind.value == "op"
    assert "side path" in result.verdict.summary


def test_two_ranks_in_two_step_collectives_blame_no_one_and_the_exit_record_does_not_win() -> None:
    result = report(_mismatch(1, "ALLREDUCE", "1024", 0, "ALLREDUCE", "512"), EXIT_RECORD)
    assert (result.verdict.kind.value, result.verdict.culprit_ranks) == ("collective_mismatch", ())
    assert result.verdict.subkind is not None and result.verdict.subkind.value == "size"
    assert "which of them" in result.verdict.summary
