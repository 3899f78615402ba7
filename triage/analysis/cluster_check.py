"""What a `triage check` run in the same run directory adds to a report: whether the cluster was
sound, so a hang can be put on the job or on the network (pure)."""

from __future__ import annotations

import time
from typing import Any

from triage.model import Finding, Verdict, VerdictKind
from triage.model.evidence import ClusterCheck

_HANG_LIKE = (VerdictKind.HANG, VerdictKind.NO_PROBLEM_FOUND, VerdictKind.INIT_HANG, VerdictKind.NETWORK_ERROR,
              VerdictKind.MISSING_RANK, VerdictKind.FAILURE_UNLOCATED)


def cluster_check_finding(check: ClusterCheck) -> Finding:
    when = f", {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(check.time))}" if check.time else ""
    said = "the cluster checked fine" if check.ok else "the cluster check found a problem"
    return Finding("cluster_check", (), f"{said}: {check.headline} (triage check{when})", (check.path,))


def cluster_check_step(check: ClusterCheck, verdict: Verdict) -> str | None:
    if not check.ok:
        return f"fix the cluster first: {check.headline} ({check.path})"
    if verdict.kind in _HANG_LIKE:
        return (f"the cluster checked fine ({check.path}): the nodes reach each other and the collectives work "
                "without the training code, so look at the job, not the network")
    return None


def cluster_check_json(check: ClusterCheck) -> dict[str, Any]:
    return {"status": "ok" if check.ok else "problem", "headline": check.headline, "path": check.path}
