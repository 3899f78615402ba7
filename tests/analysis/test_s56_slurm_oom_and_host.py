"""Session 56 (fix56d items 1 and 3): a batch system's kill at the job's memory limit (slurmstepd's "Step 551.0
exceeded memory limit (N > N), being killed", sacct's OUT_OF_MEMORY, PBS's "job killed: mem ... exceeded limit", LSF's
TERM_MEMLIMIT, YARN's "killed by YARN for exceeding memory limits") had no subkind, and slurmstepd's kill of a step was
worded "Slurm killed job 551.0"; a verdict naming ranks had culprit_host null even where the input ties the culprits to
one host (openbabel/openbabel#2658's JSON)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from tests.helpers.evidence import exited
from tests.helpers.report import failure_verdict, report_log
from triage.analysis.analyze import analyze
from triage.analysis.oom import shows_oom
from triage.model.evidence import Evidence

CASES = Path(__file__).resolve().parent.parent / "realworld" / "cases"

_STEP_KILL = ("[rank0]: epoch 1 step 100 loss 2.1\n[rank1]: epoch 1 step 100 loss 2.1\n"
              "slurmstepd: error: {what} 8812.{step} exceeded memory limit (17000000 > 16000000), being killed\n"
              "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.\n"
              "srun: error: gpu-a3: task 1: Killed\nsrun: error: gpu-a2: task 0: Killed\n")


@pytest.mark.parametrize(("what", "said"), [("Step", "step 8812.0"), ("Job", "job 8812.0")])
def test_slurms_memory_kill_is_an_oom_of_the_job_or_step_its_line_names(what: str, said: str, tmp_path: Path) -> None:
    code, got = report_log(_STEP_KILL.format(what=what, step="0"), tmp_path)
    verdict = got["verdict"]
    assert code == 1 and verdict["kind"] == "crash" and verdict["subkind"] == "oom", verdict
    assert f"Slurm killed {said} for exceeding its memory limit" in verdict["summary"]
    steps = " ".join(got["next_steps"])
    assert "Slurm: --mem" in steps and "dmesg" not in steps


def test_a_batch_step_kill_on_a_named_node_keeps_its_host(tmp_path: Path) -> None:
    text = ("slurmstepd-cn042: error: Step 77.batch exceeded virtual memory limit (9000000 > 8000000), being killed\n"
            "slurmstepd-cn042: error: *** STEP 77.batch ON cn042 CANCELLED AT 2026-11-29T10:00:00 ***\n")
    verdict = failure_verdict(text, tmp_path)
    assert verdict["subkind"] == "oom" and verdict["culprit_host"] == "cn042"
    assert "Slurm killed step 77.batch on cn042" in verdict["summary"]


@pytest.mark.parametrize("line", [
    "slurmstepd: error: Job 42 exceeded memory limit (100 > 90), being killed",
    "seff: State: OUT_OF_MEMORY (exit code 0)",
    "8812.0     python   OUT_OF_ME+    0:125",
    "=>> PBS: job killed: mem 9000000kb exceeded limit 8000000kb",
    "Exited with exit code 1. TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.",
    "Container killed by YARN for exceeding physical memory limits. 9.1 GB of 9 GB physical memory used.",
])
def test_a_batch_systems_own_words_of_its_memory_kill_show_oom(line: str) -> None:
    assert shows_oom(line)


@pytest.mark.parametrize("line", [
    "slurmstepd: error: *** JOB 42 ON n1 CANCELLED AT 2026-11-29T10:00:00 DUE TO TIME LIMIT ***",
    "=>> PBS: job killed: walltime 3610 exceeded limit 3600",
    "TERM_RUNLIMIT: job killed after reaching LSF run time limit.",
])
def test_a_batch_systems_other_limits_show_no_oom(line: str) -> None:
    assert not shows_oom(line)


def test_openbabels_step_memory_kill_is_an_oom_of_rank_0_on_falkor7(tmp_path: Path) -> None:
    text = (CASES / "openbabel__openbabel__2658" / "log.txt").read_text(encoding="utf-8")
    verdict = failure_verdict(text, tmp_path)
    assert verdict["kind"] == "crash" and verdict["culprit_ranks"] == [0]
    assert verdict["subkind"] == "oom" and verdict["culprit_host"] == "falkor7"
    assert "Slurm killed step 1141810.0 on falkor7" in verdict["summary"]


_RECORD = ("torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
           "============================================================\ntrain.py FAILED\n"
           "------------------------------------------------------------\nFailures:\n{others}"
           "------------------------------------------------------------\nRoot Cause (first observed failure):\n"
           "[0]:\n  time      : 2026-11-29_10:00:00\n  host      : node07.cluster\n  rank      : 3 (local_rank: 1)\n"
           "  exitcode  : 1 (pid: 4242)\n  error_file: <N/A>\n"
           "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html\n"
           "============================================================\n")
_TRACEBACK = ("[rank3]: Traceback (most recent call last):\n[rank3]:   File \"/app/train.py\", line 10, in <module>\n"
              "[rank3]:     main()\n[rank3]: ValueError: bad batch\n")


def test_a_rank_verdict_says_the_host_the_input_ties_the_rank_to(tmp_path: Path) -> None:
    _code, got = report_log(_TRACEBACK + _RECORD.format(others="  <NO_OTHER_FAILURES>\n"), tmp_path)
    verdict = got["verdict"]
    assert verdict["culprit_ranks"] == [3] and verdict["culprit_host"] == "node07.cluster", verdict
    assert [r["host"] for r in got["ranks"] if r["rank"] == 3] == ["node07.cluster"]


def test_a_rank_verdict_whose_host_the_input_does_not_say_keeps_it_null(tmp_path: Path) -> None:
    verdict = failure_verdict(_TRACEBACK, tmp_path)
    assert verdict["culprit_ranks"] == [3] and verdict["culprit_host"] is None


@pytest.mark.parametrize(("hosts", "said"), [(("node01", "node02"), None), (("node01", "node01"), "node01")])
def test_culprits_on_two_hosts_keep_it_null(hosts: tuple[str, str], said: str | None) -> None:
    # two ranks killed by SIGSEGV in the same second: both are the culprits
    ranks = tuple(replace(exited(rank, None, sig=11, t=10.0), host=host) for rank, host in enumerate(hosts))
    verdict = analyze(Evidence(ranks=ranks, world_size=2)).verdict
    assert verdict.culprit_ranks == (0, 1) and verdict.culprit_host == said, verdict
