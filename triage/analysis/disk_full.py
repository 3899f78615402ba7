"""Ranks whose end a full run directory kept out of the record (pure).

A rank's disk guard (triage.worker.diskguard) says in its output.log when the run directory's file
system fell below its reserve; from then on nothing of the rank reached the disk, and its exit
record could not be written. A rank with that line and no exit record is not a rank that "left
nothing" or was SIGKILLed: how it ended is not recorded, and the verdict says so, with what to do.
A failure recorded before the disk filled still wins (the rules above this one).
"""

from __future__ import annotations

from collections.abc import Mapping

from triage.analysis.describe import who
from triage.analysis.verdict import headline
from triage.model import Finding, Verdict, VerdictKind
from triage.model.evidence import EventKind, Evidence


def disk_full_verdict(evidence: Evidence, hosts: Mapping[int, str | None]) -> tuple[Verdict, Finding] | None:
    """The ranks with the disk guard's line and no exit record, as the verdict; None when there are none."""
    said = {e.rank: e for e in evidence.events if e.kind is EventKind.DISK_FULL and e.rank is not None}
    unknown = tuple(sorted(r.rank for r in evidence.ranks if r.exit is None and r.rank in said))
    if not unknown:
        return None
    first = said[unknown[0]]
    many = len(unknown) > 1
    body = (f"how {who(unknown, hosts)} ended is not recorded: the run directory's disk was full ("
            f"{'their' if many else 'its'} disk guard: {first.detail[:160]}), so {'their' if many else 'its'} "
            "exit record could not be written. What to do: the launcher's exit status is on the console "
            "(`triage: launcher ended: ...`); free space on the run directory's file system (`df -h RUN_DIR`) or "
            "give the run directory a roomier one")
    verdict = headline.verdict(VerdictKind.MISSING_RANK, body, culprit_ranks=unknown, culprit_host=first.host)
    evidence_paths = tuple(p for e in said.values() if e.rank in unknown for p in e.evidence)[:8]
    return verdict, Finding(VerdictKind.MISSING_RANK.value, unknown, headline.body(verdict.summary),
                            evidence_paths, root_cause=True)


__all__ = ["disk_full_verdict"]
