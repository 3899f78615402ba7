"""srun's labels of one line per task with a call in each are no numbered list where srun's own record names those
tasks (rev54 of session 54): "1: init_process_group(...)", "2: ...", "3: ..." between srun's lines (task 0 silent)
with "srun: error: node02: task 1: Exited with exit code 1" were read by numbered_list_lines (a call in every item, no
head needed) as a list: Coverage lost ranks 2-3, and with each task's exception repr the verdict kept srun's "1: " in
its message and lost the host and the others' collateral. A list after its head line (R's recover() menu, Node's
FATAL ERROR) stays a list whatever srun says."""

from __future__ import annotations

from pathlib import Path

from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts
from triage.parsing.log_owners import attribute_lines
from triage.parsing.log_prefix import numbered_list_lines

CASES = Path(__file__).resolve().parents[1] / "realworld" / "cases"

_CALLS = ("srun: job 4411 has been allocated resources",
          '1: init_process_group(backend="nccl") on node02', '2: init_process_group(backend="nccl") on node03',
          '3: init_process_group(backend="nccl") on node04')


def test_calls_under_srun_labels_its_record_names_stay_ranks() -> None:
    for record in ("srun: error: node02: task 1: Exited with exit code 1",
                   "srun: error: node03: tasks 2-3: Exited with exit code 1", "srun: error: n1: tasks 0,2: Killed"):
        lines = (*_CALLS, record)
        assert numbered_list_lines(lines) == frozenset(), record
        assert [owner.key for owner in attribute_lines(list(lines))][1:4] == [1, 2, 3]
    # (no srun record of those tasks: a list of calls, as before)
    assert numbered_list_lines((*_CALLS, "srun: error: n1: task 7: Killed")) == frozenset({1, 2, 3})
    assert numbered_list_lines(_CALLS) == frozenset({1, 2, 3})


_REPRS = ("srun: job 4411 has been allocated resources",
          "1: torch.cuda.OutOfMemoryError(CUDA out of memory. Tried to allocate 20.00 MiB)",
          "2: RuntimeError(NCCL communicator was aborted on rank 2)",
          "3: RuntimeError(NCCL communicator was aborted on rank 3)",
          "srun: error: node02: task 1: Exited with exit code 1",
          "srun: error: node03: tasks 2-3: Exited with exit code 1")


def test_exception_reprs_under_srun_labels_are_the_tasks_failures() -> None:
    result = analyze(load_log_texts([("log.txt", "\n".join(_REPRS) + "\n")]))
    summary = result.verdict.summary
    assert list(result.verdict.culprit_ranks) == [1] and "1: torch" not in summary, summary
    assert "OutOfMemoryError" in summary


def test_a_list_after_its_head_stays_a_list_beside_srun_records() -> None:
    lines = ("FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory",
             " 1: 0xb09c10 node::Abort() [node]", " 2: 0xa1c193 node::FatalError(char const*, char const*) [node]",
             " 3: 0xcf8dbe v8::Utils::ReportOOMFailure(v8::internal::Isolate*, char const*, bool) [node]",
             "srun: error: n1: tasks 0-3: Aborted")
    assert numbered_list_lines(lines) == frozenset({1, 2, 3})


def test_real_biocparallel_34_and_openbabel_2658_unchanged() -> None:
    # (R's recover() frames after its menu's head: still no ranks; slurmstepd's memory kill, srun's task 0)
    text = (CASES / "Bioconductor__BiocParallel__34" / "log.txt").read_text()
    assert not any(isinstance(owner.key, int) for owner in attribute_lines(text.splitlines()))
    text = (CASES / "openbabel__openbabel__2658" / "log.txt").read_text()
    result = analyze(load_log_texts([("log.txt", text)]))
    assert list(result.verdict.culprit_ranks) == [0], result.verdict.summary
