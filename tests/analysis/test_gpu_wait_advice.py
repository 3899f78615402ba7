"""A rank the live agent found waiting on its GPU (triage.agent.gpu_wait) gets GPU steps: a kernel
still running, an idle GPU, or a GPU whose use was not read; never "busy (or blocked) outside any
collective", which is about a rank working or stuck on the CPU."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

from tests.helpers.evidence import WAIT, coll, rank
from triage.analysis.advice import gpu_wait_steps
from triage.analysis.agent_view import gpu_steps
from triage.analysis.analyze import analyze
from triage.bundle import Manifest, Trigger
from triage.load.agent_facts import agent_facts
from triage.model import Verdict, VerdictKind
from triage.model.evidence import GPU_WAIT, AgentFacts, Evidence, RankActivityFact

SYNC = "torch.cuda.synchronize (train_step at train.py:42)"


def _act(util: float | None, activity: str = GPU_WAIT) -> RankActivityFact:
    return RankActivityFact(2, 77, activity, 1.0, 0.0, False, "train_step (train.py:42)", gpu_wait=SYNC,
                            gpu_util=util)


def test_a_running_gpu_is_a_kernel_still_running() -> None:
    state, then = gpu_wait_steps(_act(1.0))
    assert state.startswith(f"rank 2 waits on its GPU in {SYNC} and the GPU is at 100%: a kernel is still running")
    assert "--gpu-wait-timeout" in state and "compute-sanitizer" in then


def test_an_idle_gpu_is_work_that_is_not_running() -> None:
    state, then = gpu_wait_steps(_act(0.0))
    assert state.startswith(f"rank 2 waits on its GPU in {SYNC} but the GPU is idle (0%)")
    assert "xid" in then.lower()
    assert gpu_wait_steps(_act(0.04))[0] == gpu_wait_steps(_act(0.0))[0].replace("(0%)", "(4%)")


def test_an_unread_gpu_says_so_and_how_to_read_it() -> None:
    state, then = gpu_wait_steps(_act(None))
    assert "the GPU's use was not read (no NVML on that host)" in state
    assert "nvidia-smi" in then and "torch-triage[gpu]" in then


def test_no_gpu_wait_no_gpu_steps() -> None:
    for activity in ("busy", "blocked", "gone", "unknown"):
        assert gpu_wait_steps(_act(1.0, activity)) == ()
    facts = [AgentFacts("/b", "n1", "hang", "r", activity=(_act(None),))]
    assert gpu_steps(facts, Verdict(VerdictKind.CRASH, "CRASH: rank 2", culprit_ranks=(2,))) == ()
    assert gpu_steps(facts, Verdict(VerdictKind.STUCK_OUTSIDE_COLLECTIVE, "HANG: rank 3", culprit_ranks=(3,))) == ()
    assert gpu_steps(facts, Verdict(VerdictKind.STUCK_OUTSIDE_COLLECTIVE, "HANG: rank 2",
                                    culprit_ranks=(2,))) == gpu_wait_steps(_act(None))


def test_the_manifest_gives_the_gpu_call_and_utilization(tmp_path: Path) -> None:
    entry = {"rank": 2, "pid": 77, "activity": GPU_WAIT, "cpu_share": 1.0, "gpu_wait": SYNC, "gpu_util": 0.0}
    bad = {**entry, "rank": 3, "gpu_wait": 5, "gpu_util": 7.5}
    manifest = Manifest(job_id="j", host="n1", trigger=Trigger.HANG, created=time.time(), reason="hang",
                        extra={"activity": [entry, bad]})
    facts = agent_facts(tmp_path, manifest, "n1", [])
    assert facts is not None
    first, second = facts.activity
    assert (first.gpu_wait, first.gpu_util) == (SYNC, 0.0)
    assert (second.gpu_wait, second.gpu_util) == (None, None)            # wrong type, out of range: not read
    assert first.figures() == f"in {SYNC}, GPU 0%, CPU 100%"
    assert second.figures() == "in a GPU wait, GPU use not known (no NVML reading), CPU 100%"


def test_the_report_of_a_rank_stuck_on_its_gpu_gives_gpu_steps_not_busy_or_blocked() -> None:
    ranks = [rank(r, [coll(r, 1), coll(r, 2, state=WAIT)]) for r in range(4) if r != 2]
    ranks.append(replace(rank(2, [coll(2, 1)]), in_collective=False, stack_top="train.py:42 in train_step"))
    for util, said in ((1.0, "a kernel is still running"), (0.0, "the GPU is idle"), (None, "was not read")):
        agent = AgentFacts("/run/n1/bundles/hang-1", "node00", "hang", "hang", activity=(_act(util),))
        report = analyze(Evidence(ranks=tuple(ranks), world_size=4, agent=(agent,)))
        assert report.verdict.kind is VerdictKind.STUCK_OUTSIDE_COLLECTIVE and report.verdict.culprit_ranks == (2,)
        assert f"the agent found it waiting on the GPU (in {SYNC}" in report.verdict.summary
        assert said in report.next_steps[0], report.next_steps
        assert not any("busy (or blocked)" in step or "or blocked" in step for step in report.next_steps)
        plain = analyze(Evidence(ranks=tuple(ranks), world_size=4))      # no agent: the CPU steps stay
        assert any("busy (or blocked)" in step for step in plain.next_steps)
