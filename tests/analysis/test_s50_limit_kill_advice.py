"""A batch system's own kill at the job's memory limit gets the limit's advice, not the kernel OOM killer's dmesg
(rev50 F11: YARN's 'Container killed by YARN for exceeding memory limits' and PBS's 'job killed: mem ... exceeded
limit' were told to look in dmesg, where no line tells them)."""

from __future__ import annotations

import pytest

from triage.analysis.advice import excerpt_steps
from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts


def steps_for(*lines: str) -> str:
    result = analyze(load_log_texts([("job.log", "\n".join(lines) + "\n")]))
    assert result.verdict.kind.value == "crash", result.verdict.summary
    return " ".join(excerpt_steps(result.verdict))


@pytest.mark.parametrize("line", [
    ("24/03/05 11:00:00 ERROR YarnScheduler: Lost executor 4 on dn12.corp: Container killed by YARN for exceeding "
     "memory limits. 6.1 GB of 6 GB physical memory used."),
    "=>> PBS: job killed: mem 52428800kb exceeded limit 41943040kb",
    "container_state: terminated, container_reason: OOMKilled, container_message: None, exit_code: 137",
])
def test_a_memory_limit_kill_gets_the_limits_advice(line: str) -> None:
    steps = steps_for("epoch 2 step 400 loss 0.8", line)
    assert "memory limit the job asked for" in steps and "dmesg" not in steps, steps


def test_a_plain_sigkill_keeps_the_oom_killers_advice() -> None:
    steps = steps_for("[rank3]: step 12", "rank 3 was killed by signal 9 (SIGKILL)")
    assert "dmesg" in steps and "memory limit the job asked for" not in steps, steps
