"""Classes of real pasted logs found by round 25 of the real-world corpus, each tested on a variant written
here (other hosts, ranks, pids and surrounding lines than the cases' own)."""

from __future__ import annotations

from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts
from triage.model import Report
from triage.parsing.launchers import parse_rank_deaths


def report(*lines: str) -> Report:
    return analyze(load_log_texts([("job.log", "\n".join(lines) + "\n")]))


# Open MPI's record of the process that ended the job, pasted cut before "on signal N (Name)." under its
# "Primary job terminated normally" box (mfem/mfem#3424's shape, rewritten with another rank, pid and node)
def test_mpiruns_noticed_record_cut_before_its_signal_still_names_the_rank_and_node() -> None:
    result = report(
        "Assembling: matrix ... --------------------------------------------------------------------------",
        "Primary job  terminated normally, but 1 process returned",
        "a non-zero exit code. Per user-direction, the job has been aborted.",
        "--------------------------------------------------------------------------",
        "mpirun noticed that process rank 3 with PID 48213 on node cn-gpu-17 exited",
    )
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert result.verdict.culprit_ranks == (3,)
    assert "cn-gpu-17" in result.verdict.summary


def test_the_whole_record_still_gives_its_signal() -> None:
    result = report("mpirun noticed that process rank 3 with PID 48213 on node cn-gpu-17 exited on signal 11 "
                    "(Segmentation fault).")
    assert result.verdict.kind.value == "crash"
    assert result.verdict.culprit_ranks == (3,)
    assert "SIGSEGV" in result.verdict.summary


def test_exited_in_the_middle_of_a_sentence_is_not_read_as_the_cut_record() -> None:
    deaths = parse_rank_deaths("mpirun noticed that process rank 3 with PID 48213 on node cn-gpu-17 exited with "
                               "status 0 and the job went on\n")
    assert not any(death.host == "cn-gpu-17" for death in deaths)
