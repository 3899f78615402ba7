"""A job ended by a node's failure is advised as a node's failure, whoever printed it: the node's state and reason
(`sinfo -R`, `scontrol show node HOST`), its slurmd log and `dmesg`, then a requeue without it. srun's and salloc's
`Node failure on HOST` had been told sacct's "find who or what cancelled it" (session 50's closing note); Flux's lost
job shell had been told Slurm's commands."""

from __future__ import annotations

from pathlib import Path

import pytest

from triage.analysis.advice import excerpt_steps
from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts

_CASES = Path(__file__).resolve().parents[1] / "realworld" / "cases"


def read(text: str) -> tuple[str, str]:
    result = analyze(load_log_texts([("job.log", text)]))
    assert result.verdict.kind.value == "stopped", result.verdict.summary
    return result.verdict.summary, " ".join(excerpt_steps(result.verdict))


@pytest.mark.parametrize("tool,host", [("srun", "gpu-n11"), ("salloc", "worker-1"), ("srun", "nid00[12-13]"),
                                       ("salloc", "a100x8-12.cluster.local")])
def test_srun_and_sallocs_node_failure_is_told_to_look_at_the_node(tool: str, host: str) -> None:
    summary, _ = read(f"{tool}: Granted job allocation 5512\n{tool}: error: Node failure on {host}\n")
    assert f"sinfo -R`, `scontrol show node {host}`" in summary and "dmesg" in summary, summary
    assert "requeue" in summary and "who or what cancelled" not in summary, summary


def test_sallocs_node_failure_does_not_say_it_ended_a_step() -> None:
    summary, _ = read("salloc: Granted job allocation 5512\nsalloc: error: Node failure on worker-1\n"
                      "salloc: Job allocation 5512 has been revoked.\n")
    assert "unless salloc ran with --no-kill" in summary and "ended the step" not in summary, summary


@pytest.mark.parametrize("text", [
    "slurmstepd: error: *** JOB 48213 ON gpu-n07 CANCELLED AT 2026-11-27T01:00:00 DUE TO NODE FAILURE ***\n",
    ("JobID           JobName      State ExitCode\n------------ ---------- ---------- --------\n"
    "77120             train  NODE_FAIL      0:0\n77120.batch       batch  NODE_FAIL      0:0\n"),
    "Job ID: 551205\nCluster: c\nUser/Group: u/g\nState: NODE_FAIL (exit code 0)\n",
])
def test_every_slurm_node_failure_gets_the_same_advice(text: str) -> None:
    summary, _ = read(text)
    assert "sinfo -R" in summary and "slurmd log" in summary and "dmesg" in summary, summary


def test_a_cancel_keeps_saccts_who_cancelled_it() -> None:
    summary, _ = read("slurmstepd: error: *** JOB 48213 ON gpu-n07 CANCELLED AT 2026-11-27T01:00:00 ***\n")
    assert "who or what cancelled" in summary and "sinfo -R" not in summary, summary


def test_fluxs_lost_shell_gets_fluxs_commands() -> None:
    summary, _ = read("0.879s: flux-shell[0]: FATAL: doom: shell rank 3 on host node13 exited and exit-timeout=30s "
                      "has expired\n")
    assert "flux resource" in summary and "node13" in summary and "sinfo" not in summary, summary


def test_real_text_sallocs_node_failure_in_a_reproduction() -> None:
    # nebius/soperator#854: salloc -N4 --no-kill, the node under worker-1 rebooted
    summary, _ = read((_CASES / "nebius__soperator__854" / "log.txt").read_text(encoding="utf-8"))
    assert "worker-1" in summary and "scontrol show node worker-1" in summary, summary
    assert "who or what cancelled" not in summary, summary
