"""A hang the live agent detected, then a rank that finished its work and crashed in its teardown (pure).

Under ``--on-hang report-and-wait`` (or ``wait``) the agent collects a bundle and leaves the job
running. When the hang then ends by itself (a rank that was only slow wakes up), the ranks finish
their work; a rank may still die after its own exit record, in the process's teardown (a gloo job
that exits without ``destroy_process_group()``: a process-group thread left running while Python
finalizes, ``terminate called without an active exception``). That crash came after the hang and
after the rank's work, and is no cause of it: the hang stays the story, and the crash is said after
it ("...; then rank 1 was killed by SIGABRT at exit, after its work had finished"), with its steps.
"""

from __future__ import annotations

from collections.abc import Sequence

from triage.analysis.failures import Failure
from triage.model import VerdictKind
from triage.model.evidence import AFTER_EXIT_RECORD, AgentFacts

HANG_TRIGGER = "hang"


def _after_exit_record(failure: Failure) -> bool:
    return failure.kind is VerdictKind.CRASH and AFTER_EXIT_RECORD in failure.detail


def crash_after_hang(failures: Sequence[Failure], agent: Sequence[AgentFacts], complete: bool,
                     hang_seen: bool) -> Failure | None:
    """The first teardown crash when every failure of the run is one (a crash after the rank's exit
    record) and the live agent detected a hang the traces show (``hang_seen``); else None."""
    if not complete or not hang_seen or not any(fact.trigger == HANG_TRIGGER for fact in agent):
        return None
    real = [f for f in failures if not f.collateral and not f.teardown]
    if not real or not all(_after_exit_record(f) for f in real):
        return None
    return real[0]


def then_crash(summary: str, crash: Failure) -> str:
    """The hang's summary, then the teardown crash ("; then rank 1 (h) was killed by SIGABRT: at exit, ...")."""
    said = " ".join(crash.detail.split())
    return summary if said in summary else f"{summary}; then {said}"


__all__ = ["HANG_TRIGGER", "crash_after_hang", "then_crash"]
