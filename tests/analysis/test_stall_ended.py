"""The stall that ended by itself (triage.analysis.stall_ended): its words, and when it applies."""

from __future__ import annotations

import pytest

from triage.analysis.stall_ended import ENDED, ended_by_itself, stall_ended
from triage.analysis.verdict import headline
from triage.analysis.verdicts import next_steps
from triage.model import VerdictKind
from triage.model.evidence import AgentFacts

HANG = (AgentFacts(bundle="run/n1/bundles/x-hang", host="n1", trigger="hang", reason="hang"),)
MANUAL = (AgentFacts(bundle="run/n1/bundles/x-manual", host="n1", trigger="manual", reason="dump"),)
OUTSIDE = headline.verdict(VerdictKind.STUCK_OUTSIDE_COLLECTIVE,
                           "rank 3 (n1) never reached seq 12: outside any collective at train.py:40 in save, while "
                           "ranks 0-2 wait in all_reduce(count=8, float32) at seq 12 of pg 0 (default_pg)",
                           culprit_ranks=(3,), seq=12)
EVERY = headline.verdict(VerdictKind.HANG, "every rank of pg 0 (default_pg) waits in barrier at seq 4; no rank differs")


def test_a_rank_behind_is_said_as_it_was_at_the_dump() -> None:
    said = ended_by_itself(OUTSIDE)
    assert said.summary == (
        "STALL: rank 3 (n1) had not reached seq 12 when the agent dumped the job: outside any collective at "
        "train.py:40 in save, while ranks 0-2 waited in all_reduce(count=8, float32) at seq 12 of pg 0 "
        f"(default_pg); {ENDED}")
    assert said.kind is VerdictKind.STUCK_OUTSIDE_COLLECTIVE and said.culprit_ranks == (3,) and said.seq == 12
    assert next_steps(said, True)[0].startswith("the job finished: this was a stall of at least the hang timeout")


def test_every_rank_waiting_is_said_at_the_dump_too() -> None:
    assert ended_by_itself(EVERY).summary == (
        "STALL: when the agent dumped the job, every rank of pg 0 (default_pg) waited in barrier at seq 4; "
        f"no rank differs; {ENDED}")


def test_several_stalls_are_counted() -> None:
    said = ended_by_itself(EVERY, dumps=3)
    assert said.summary.endswith(f"{ENDED} (the latest of 3 stalls the agent dumped: each ended by itself)")
    assert next_steps(said, True)[0].startswith("the job finished: this was a stall")
    assert ended_by_itself(EVERY, dumps=1) == ended_by_itself(EVERY) == ended_by_itself(EVERY, dumps=0)


@pytest.mark.parametrize("verdict, agent, complete, finished, applies", [
    (OUTSIDE, HANG, True, True, True),
    (EVERY, HANG, True, True, True),
    (OUTSIDE, HANG, True, False, False),        # a rank failed or left no exit record: no stall that ended
    (OUTSIDE, HANG, False, True, False),        # an excerpt: whether the job finished is not in it
    (OUTSIDE, MANUAL, True, True, False),       # a dump asked by hand: no hang the agent saw
    (OUTSIDE, (), True, True, False),
    (headline.verdict(VerdictKind.CRASH, "rank 1 killed by SIGSEGV", culprit_ranks=(1,)), HANG, True, True, False),
])
def test_when_it_applies(verdict, agent, complete, finished, applies) -> None:  # type: ignore[no-untyped-def]
    assert stall_ended(verdict, agent, complete, finished) is applies
