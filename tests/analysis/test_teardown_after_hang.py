"""A hang the live agent detected, then (the job left running, the hang over) a rank that finished its work
and crashed in its teardown: the hang stays the verdict, the crash is said after it, never the cause
(pure analysis; the real run: tests/hang/test_hangs.py::test_a_teardown_abort_after_the_hang_ended_is_said_after_it)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.helpers.evidence import WAIT, coll, rank
from triage.analysis.analyze import analyze
from triage.analysis.failures import Failure
from triage.analysis.teardown_after_hang import crash_after_hang, then_crash
from triage.model import VerdictKind
from triage.model.evidence import AFTER_EXIT_RECORD, AgentFacts, Evidence, ExitInfo

TEARDOWN = f"{AFTER_EXIT_RECORD} (its own exit record said exit 0): a crash in the process's teardown"
HANG_FACTS = (AgentFacts(bundle="run/node00/bundles/x-hang", host="node00", trigger="hang", reason="hang"),)


def _run(trigger: str | None = "hang", exit_info: ExitInfo | None = None, stuck: bool = True) -> Evidence:
    """Rank 0 waits at seq 3; rank 1 stopped at seq 2 (``stuck``) and ended as ``exit_info`` says."""
    end = exit_info if exit_info is not None else ExitInfo(signal=6, signal_name="SIGABRT", time=20.0, message=TEARDOWN,
                                                           evidence=("run/node00/ranks/1/exit.json",))
    waiting = [coll(0, 1), coll(0, 2), coll(0, 3, state=WAIT)] if stuck else [coll(0, 1), coll(0, 2)]
    ranks = (rank(0, waiting, host="node00"), rank(1, [coll(1, 1), coll(1, 2)], host="node00", exit=end))
    agent = tuple(replace(f, trigger=trigger) for f in HANG_FACTS) if trigger else ()
    return Evidence(ranks=ranks, world_size=2, agent=agent)


def test_the_hang_is_the_verdict_and_the_teardown_crash_is_said_after_it() -> None:
    report = analyze(_run())
    verdict = report.verdict
    assert verdict.kind is VerdictKind.STUCK_OUTSIDE_COLLECTIVE and verdict.culprit_ranks == (1,), verdict
    assert verdict.summary.index("never reached seq 3") < verdict.summary.index("; then rank 1 (node00) was killed by "
                                                                                f"SIGABRT: {AFTER_EXIT_RECORD}")
    crash = [f for f in report.findings if f.kind == VerdictKind.CRASH.value]
    assert len(crash) == 1 and not crash[0].root_cause
    assert any("destroy_process_group" in step for step in report.next_steps), report.next_steps


@pytest.mark.parametrize("case", ["no agent hang", "a crash bundle only", "a crash during the work", "an exception",
                                  "no rank stuck"])
def test_otherwise_the_crash_stays_the_first_failure(case: str) -> None:
    crash = ExitInfo(signal=11, signal_name="SIGSEGV", time=20.0, evidence=("run/node00/ranks/1/exit.json",))
    evidence = {
        "no agent hang": _run(trigger=None),
        "a crash bundle only": _run(trigger="crash"),
        "a crash during the work": _run(exit_info=crash),                 # not after its exit record: the cause
        "an exception": _run(exit_info=ExitInfo(exit_code=1, time=20.0, message="RuntimeError: boom")),
        "no rank stuck": _run(stuck=False),
    }[case]
    verdict = analyze(evidence).verdict
    assert verdict.kind in (VerdictKind.CRASH, VerdictKind.EXCEPTION), verdict
    assert "; then rank 1" not in verdict.summary


def test_the_units() -> None:
    teardown = Failure(1, VerdictKind.CRASH, f"rank 1 (h) was killed by SIGABRT: {TEARDOWN}", 20.0, (), False)
    killed = Failure(0, VerdictKind.CRASH, "rank 0 (h) was killed by SIGTERM", 21.0, (), True)
    assert crash_after_hang([teardown, killed], HANG_FACTS, True, True) is teardown   # the launcher's SIGTERM after it
    assert crash_after_hang([teardown], HANG_FACTS, False, True) is None              # an excerpt
    assert crash_after_hang([teardown], HANG_FACTS, True, False) is None              # no rank stuck in the traces
    assert crash_after_hang([], HANG_FACTS, True, True) is None
    other = Failure(0, VerdictKind.EXCEPTION, "rank 0 (h) raised: RuntimeError", 19.0, (), False)
    assert crash_after_hang([other, teardown], HANG_FACTS, True, True) is None         # a real failure too
    said = then_crash("HANG: x", teardown)
    assert said == f"HANG: x; then {teardown.detail}" and then_crash(said, teardown) == said
