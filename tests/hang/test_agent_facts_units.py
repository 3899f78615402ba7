"""The manifest's extra read in one place (triage.load.agent_facts) and what the analysis makes of
it (triage.analysis.agent_view): bad values are noted, never raised; the agent's init hang
replaces an all-clear but never a crash; a culprit's figures and child join the verdict."""

from __future__ import annotations

import time
from pathlib import Path

from triage.analysis.agent_view import agent_view, init_steps
from triage.bundle import Manifest, Trigger
from triage.load.agent_facts import agent_facts
from triage.model import Finding, Verdict, VerdictKind
from triage.model.evidence import AgentFacts, InitFact, RankActivityFact, RankEvidence

DATA = Path(__file__).parent / "data"


def _manifest(**extra: object) -> Manifest:
    return Manifest(job_id="j", host="n1", trigger=Trigger.HANG, created=time.time(), reason="why", extra=dict(extra))


def test_no_agent_fields_means_no_facts(tmp_path: Path) -> None:
    assert agent_facts(tmp_path, _manifest(suspect_ranks=[1]), "n1", []) is None


def test_values_of_the_wrong_type_are_left_out_with_a_note(tmp_path: Path) -> None:
    skipped: list[str] = []
    facts = agent_facts(tmp_path, _manifest(
        verdict_kind=7, hang_source="init",
        activity=[{"rank": True, "activity": "busy"}, "x", {"rank": 2, "activity": "blocked", "cpu_share": float("nan"),
                                                           "io_bytes_per_s": "3", "stack_changed": 1, "pid": 5}],
        init={"waiting": [1, -1, "2", True, 3], "never_joined": "0", "store": 12, "seconds": float("inf")},
        children=[{"rank": 1}, {"rank": 1, "pid": 9, "file": "/etc/passwd"}]), "n1", skipped)
    assert facts is not None
    assert facts.verdict_kind is None and facts.hang_source == "init"
    assert facts.activity == (RankActivityFact(2, 5, "blocked"),)
    assert facts.init == InitFact(waiting=(1, 3), never_joined=(), where="init_process_group")
    assert [(r, c.pid, c.stack, c.path) for r, c in facts.children] == [(1, 9, (), None)]
    assert len(skipped) == 4 and all(s.startswith(str(tmp_path)) for s in skipped), skipped
    assert any("outside the bundle" in s for s in skipped)


def test_a_rank_the_agent_found_runnable_says_so_in_the_report(tmp_path: Path) -> None:
    facts = agent_facts(tmp_path, _manifest(activity=[
        {"rank": 0, "activity": "busy", "cpu_share": 0.0, "io_bytes_per_s": 0.0, "stack_changed": False,
         "runnable": True, "where": "compute (t.py:3)"},
        {"rank": 1, "activity": "blocked", "runnable": "yes"}]), "n1", [])
    assert facts is not None
    busy, blocked = facts.activity
    assert busy.runnable is True and blocked.runnable is None       # not a bool: not said
    assert busy.line() == ("rank 0 busy in compute (t.py:3) (CPU 0%, runnable, waiting for a CPU, I/O 0 B/s, "
                           "same stack)")


def test_children_dumps_inside_the_bundle_are_read(tmp_path: Path) -> None:
    (tmp_path / "rank-1" / "children").mkdir(parents=True)
    (tmp_path / "rank-1" / "children" / "pyspy-9.txt").write_text((DATA / "dl_worker_blocked.txt").read_text())
    facts = agent_facts(tmp_path, _manifest(children=[{"rank": 1, "pid": 9, "worker_id": 1,
                                                      "file": "rank-1/children/pyspy-9.txt"}]), "n1", [])
    assert facts is not None
    (child,) = facts.children_of(1)
    assert child.worker_id == 1 and child.stack and child.stack[0].endswith(" in read_from_store")


def _rank(rank: int, stack: tuple[str, ...] = (), top: str | None = None) -> RankEvidence:
    return RankEvidence(rank=rank, host="n1", stack=stack, stack_top=top, evidence=(f"/b/rank-{rank}/pyspy.json",))


_INIT = AgentFacts("/b", "n1", "hang", "init hang: ...", verdict_kind="init_hang", hang_source="init",
                   activity=(RankActivityFact(0, 10, "blocked", 0.0, 0.0, False, "load (t.py:3)"),),
                   init=InitFact((1,), (0,), "init_process_group", store="h:29500", seconds=12.4))


def test_the_agents_init_hang_replaces_an_all_clear() -> None:
    ranks = [_rank(0, ("t.py:3 in load", "t.py:9 in main"), "t.py:3 in load"), _rank(1)]
    verdict, main, findings = agent_view([_INIT], ranks, {0: "n1", 1: "n1"},
                                         Verdict(VerdictKind.NO_PROBLEM_FOUND, "NO PROBLEM FOUND: ..."), None)
    assert verdict.kind is VerdictKind.INIT_HANG and verdict.culprit_ranks == (0,)
    assert verdict.summary == ("INIT HANG: rank 0 (n1) never joined init_process_group: blocked in load (t.py:3) "
                               "(CPU 0%, I/O 0 B/s, same stack); rank 1 waited in init_process_group on the store "
                               "h:29500 for 12 s")
    assert main is not None and main.root_cause and "/b/rank-0/pyspy.json" in main.evidence
    assert [f.kind for f in findings] == ["stack", "activity"]
    assert findings[0].detail == "rank 0's stack: load (t.py:3) <- main (t.py:9)"
    assert init_steps([_INIT], verdict)[0].startswith("look at the stack of rank 0")


def test_a_crash_in_the_traces_is_kept_over_the_agents_init_hang() -> None:
    crash = Verdict(VerdictKind.CRASH, "CRASH: rank 0 ...", culprit_ranks=(0,))
    verdict, _main, _findings = agent_view([_INIT], [_rank(0), _rank(1)], {}, crash,
                                           Finding("crash", (0,), "rank 0 ...", root_cause=True))
    assert verdict.kind is VerdictKind.CRASH and verdict.summary.startswith("CRASH: rank 0 ...")
    assert "the agent found it blocked (CPU 0%, I/O 0 B/s, same stack)" in verdict.summary


def test_a_rendezvous_wait_counts_the_nodes() -> None:
    facts = AgentFacts("/b", "n1", "hang", "r", verdict_kind="init_hang", hang_source="rendezvous",
                       init=InitFact((), (), "torchrun's rendezvous", store="h:29400", key="job7", seconds=30.0,
                                     nodes_joined=1, nodes_wanted=3))
    verdict, _main, _ = agent_view([facts], [], {}, Verdict(VerdictKind.NO_PROBLEM_FOUND, "NO PROBLEM FOUND"), None)
    assert verdict.summary == ("INIT HANG: torchrun's rendezvous at h:29400 (id job7) has waited 30 s for its 3 nodes "
                               "(--nnodes); no rank has started; triage's agent is up on 1 of them (n1): the 2 others "
                               "did not start, are still queued, or cannot reach h:29400; whether any node reached it "
                               "is not recorded (each node's launcher.log would tell)")
    assert "joined" not in verdict.summary      # no node is known to have joined the rendezvous
    assert "join timeout" in init_steps([facts], verdict)[1]
