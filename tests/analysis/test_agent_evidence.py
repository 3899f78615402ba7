"""The agent's facts are part of the model (Evidence.agent): a run directory keeps them when it is
reported together with other inputs; an init hang always gets steps of its own; a store wait that
names no address says which store it is (made in one place, the analysis)."""

from __future__ import annotations

import time
from pathlib import Path

from triage.analysis.analyze import analyze
from triage.analysis.init_hang import init_hang_verdict
from triage.analysis.verdicts import next_steps
from triage.bundle import BundleRank, Manifest, Trigger, write_manifest
from triage.load.inputs import load_inputs
from triage.model import Verdict, VerdictKind
from triage.model.evidence import InitWaitRecord

INIT = {"waiting": [1], "never_joined": [0], "where": "init_process_group", "store": "n1:29500", "seconds": 12.0}


def _run_dir(root: Path) -> Path:
    """A run directory whose node n1 agent stopped the job on an init hang: rank 0 never joined."""
    bundle = root / "run" / "n1" / "bundles" / "hang-1"
    bundle.mkdir(parents=True)
    write_manifest(bundle, Manifest(
        job_id="j", host="n1", trigger=Trigger.HANG, created=time.time(), reason="init hang: rank 0 never joined",
        ranks=(BundleRank(0, 100, 0, True), BundleRank(1, 101, 1, True)),
        extra={"verdict_kind": "init_hang", "hang_source": "init", "init": INIT}))
    return root / "run"


def test_a_run_dir_alone_gives_the_agents_init_hang(tmp_path: Path) -> None:
    evidence = load_inputs([_run_dir(tmp_path)])
    assert [a.host for a in evidence.agent] == ["n1"]
    report = analyze(evidence)
    assert report.verdict.kind is VerdictKind.INIT_HANG and report.verdict.culprit_ranks == (0,)


def test_a_run_dir_reported_with_another_input_keeps_the_agents_verdict(tmp_path: Path) -> None:
    log = tmp_path / "n2.log"
    log.write_text("[rank2]: epoch 0 step 1 loss 2.31\n[rank2]: epoch 0 step 2 loss 2.25\n")
    evidence = load_inputs([_run_dir(tmp_path), log])
    assert [a.host for a in evidence.agent] == ["n1"] and evidence.rank(2) is not None
    report = analyze(evidence)
    assert report.verdict.kind is VerdictKind.INIT_HANG, report.verdict.summary
    assert report.verdict.summary.startswith("INIT HANG: rank 0 (n1) never joined init_process_group")
    assert not any(step.startswith("nothing to do") for step in report.next_steps)


def test_an_init_hang_without_agent_facts_gets_init_steps() -> None:
    for finished in (True, False):
        steps = next_steps(Verdict(VerdictKind.INIT_HANG, "INIT HANG: ranks 0-1 timed out ..."), finished)
        assert steps[0].startswith("find the ranks or nodes that never joined")
        assert any("MASTER_ADDR:MASTER_PORT" in step for step in steps)
        assert not any(step.startswith(("nothing to do", "if the job still misbehaves")) for step in steps)


def test_a_store_wait_without_an_address_names_the_jobs_store() -> None:
    wait = InitWaitRecord("store_wait_timeout", "wait timeout after 30000ms, keys: /default_pg/0//cpu//0", rank=1,
                          timeout_s=30.0, timed_out=True)
    found = init_hang_verdict((wait,))
    assert found is not None
    assert found[0].summary == ("INIT HANG: rank 1 gave up waiting for the store at MASTER_ADDR:MASTER_PORT after 30 s: "
                                "the ranks it waited for never arrived (they are not in this input)")
    named = init_hang_verdict((InitWaitRecord("store_wait_timeout", "t", rank=1, address="10.0.0.1:29500"),))
    assert named is not None and "the store at 10.0.0.1:29500:" in named[0].summary
