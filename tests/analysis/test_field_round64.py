"""Classes of real pasted logs found by round 64 of the real-world corpus, each tested on a variant written here
(other programs, fields, hosts and surrounding lines than the cases' own), with their negatives."""

from __future__ import annotations

import pytest

from tests.helpers.report import report_lines as report
from triage.parsing.unread_failure import unread_failure


# An exit status in parentheses, as Nextflow writes it: was refused (epi2me-labs/wf-single-cell#40)
@pytest.mark.parametrize(("line", "signal"), [
    ("Process `ALIGN:bwa_mem (sample_7)` terminated with an error exit status (137)", "SIGKILL"),
    ("Process `call_variants (chr2)` terminated with an error exit status (139) -- Execution is retried (1)", None),
    ("job 'assemble' exited with exit code (134)", "SIGABRT"),
])
def test_an_exit_status_in_parentheses_is_read(line: str, signal: str | None) -> None:
    result = report("executor >  slurm (12)", "[a0/766938] process > ALIGN:bwa_mem (sample_7) [ 25%] 3 of 12", line)
    assert result.verdict.kind.value == "crash", result.verdict.summary
    if signal:
        assert signal in result.verdict.summary


def test_a_zero_status_in_parentheses_is_no_failure() -> None:
    assert unread_failure("Process `fastqc (1)` terminated with exit status (0)") is None


# A Python exception's line under its module's path, whatever its class's name: Parsl's ManagerLost was refused
# (MolSSI/QCFractal#520); the host it names is said
@pytest.mark.parametrize("line", [
    "parsl.executors.high_throughput.interchange.ManagerLost: Task failure due to loss of Manager b'0a1b' on host n042",
    ("distributed.scheduler.KilledWorker: Attempted to run task ('sum-7', 3) on 3 different workers, but all those "
     "workers died while running it."),
    "  celery.exceptions.WorkerLostError: Worker exited prematurely: signal 9 (SIGKILL) Job: 12.",
])
def test_a_dotted_exception_line_is_a_failure(line: str) -> None:
    assert unread_failure(line) is not None
    result = report("submitted 40 tasks", line)
    assert result.verdict.kind.value != "no_problem_found", result.verdict.summary


@pytest.mark.parametrize("line", [
    "torch.distributed.elastic.agent.server.api: Starting worker group",
    "transformers.trainer.Trainer: loss 0.412 at step 100",
    "Epoch.Summary: 3 batches",
])
def test_a_dotted_name_without_a_failure_word_is_none(line: str) -> None:
    assert unread_failure(line) is None


# A container's terminated state in Kubernetes' own fields (Airflow's KubernetesExecutor, kubectl's YAML and JSON): was
# a failure of unknown place (apache/airflow#73164)
@pytest.mark.parametrize("lines", [
    ("Pod phase: Failed, reason: None, message: None, container_type: main, container_name: base,",
     "container_state: terminated, container_reason: OOMKilled, container_message: None, exit_code: 137"),
    ("    lastState:", "      terminated:", "        exitCode: 137", "        reason: OOMKilled",
     "        startedAt: \"2025-02-01T10:11:12Z\""),
    ('{"terminated": {"containerID": "containerd://9f3", "exitCode": 137, "reason": "OOMKilled"}}',),
])
def test_a_containers_oomkilled_field_is_its_kill(lines: tuple[str, ...]) -> None:
    result = report("Task train_model.3 failed in pod ml/train-model-3-x8k2.", *lines)
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert "SIGKILL" in result.verdict.summary and "OOMKilled" in result.verdict.summary


def test_an_old_oomkill_the_job_went_on_past_is_no_end() -> None:
    result = report("lastState: {terminated: {exitCode: 137, reason: OOMKilled}}", "restartCount: 1",
                    *[f"[rank0]: step {i} loss 0.{i}" for i in range(1, 40)], "[rank0]: training complete")
    assert result.verdict.kind.value != "crash", result.verdict.summary


# NCCL's "Last error:" and its detail on lines of their own in a paste without rank prefixes: the detail says what the
# exception was (codefuse-ai/MFTCoder#31: read as the DistBackendError's exception)
def test_nccls_last_error_of_no_known_rank_says_what_it_was() -> None:
    result = report("    work = default_pg.barrier(opts=opts)",
                    "torch.distributed.DistBackendError: NCCL error in: ../ProcessGroupNCCL.cpp:1275, internal error, "
                    "NCCL version 2.18.1",
                    "ncclInternalError: Internal check failed.", "Last error:",
                    "Bootstrap : no socket interface found")
    assert result.verdict.kind.value == "network_error", result.verdict.summary
    assert "no socket interface" in result.verdict.summary


def test_a_last_error_line_far_from_an_nccl_error_joins_nothing() -> None:
    result = report("ValueError: bad shape (3, 4)", *[f"step {i}" for i in range(30)], "Last error:",
                    "Bootstrap : no socket interface found")
    assert "Last error" not in result.verdict.summary, result.verdict.summary   # (a ValueError is no NCCL error)


# salloc's own word of a node of its allocation that failed, as srun's is read (nebius/soperator#854: a hang told in
# the reporter's words won over it)
def test_sallocs_node_failure_is_a_stop_on_that_node() -> None:
    result = report("0: gpu-a1", "1: gpu-a2", "salloc: error: Node failure on gpu-a2",
                    "After that the next srun hangs.")
    assert result.verdict.kind.value == "stopped", result.verdict.summary
    assert "gpu-a2" in result.verdict.summary and "salloc" in result.verdict.summary
