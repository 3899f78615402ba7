"""A collective timeout the input shows without the rank that timed out (pure).

Some pastes hold a timeout and nothing that ties it to a rank: a watchdog line cut before its
``[rankN]:`` prefix, the watchdog's C++ frames alone, or a rank that only received another rank's
dump signal ("Received a dump signal due to a collective timeout from rank 4"). Such a timeout is
still a hang (a collective some rank never joined), not a failure of unknown kind: the verdict says
so, which rank reported it when the text says, and what would name the rank that did not join.
"""

from __future__ import annotations

from collections.abc import Mapping

from triage.analysis.failures import Failure
from triage.analysis.settle import settle_hang
from triage.analysis.verdict import headline
from triage.lazy_regex import lazy_regex
from triage.model import Finding, Verdict, VerdictKind
from triage.model.evidence import EventKind, Evidence
from triage.parsing.rendezvous import STORE_WAIT_DETAIL
from triage.parsing.watchdog import SERVING_STALL_DETAILS

# ProcessGroupNCCL's heartbeat monitor on a rank that did not time out itself: another rank did, and
# signalled every rank to dump its debug info ("... a collective timeout from  rank 4 and we will try ...")
_DUMP_FROM = lazy_regex(r"dump signal due to a collective timeout from\s+rank (\d+)")


def rankless_timeout_verdict(evidence: Evidence, failures: list[Failure],
                             cov: Mapping[str, object]) -> tuple[Verdict, Finding] | None:
    """A hang of no known culprit when the only failure evidence is a timeout whose rank is not
    shown (or is shown only as the sender of a dump signal). None when anything else failed."""
    if evidence.mismatches or any(not f.collateral for f in failures) \
            or any(not u.collateral for u in evidence.unattributed):
        return None
    rankless = [e for e in evidence.events if e.kind is EventKind.WATCHDOG_TIMEOUT and e.rank is None
                and not e.detail.startswith(STORE_WAIT_DETAIL)]
    if any(e.kind is not EventKind.WATCHDOG_TIMEOUT or e.rank is not None for e in evidence.events):
        return None
    reporters = sorted({int(m.group(1)) for f in failures if (m := _DUMP_FROM.search(f.detail))})
    if failures and not reporters:
        return None
    if not rankless and not reporters:
        return None
    settle = settle_hang((), [], cov)
    if reporters:
        named = ", ".join(str(r) for r in reporters)
        signalled = ", ".join(str(r) for r in sorted({f.rank for f in failures}))
        summary = (f"a collective timed out on rank {named} (rank {signalled} received its signal to dump debug "
                   f"info, which the watchdog sends after a timeout); the rank that did not join is not in this "
                   f"input ({cov.get('summary')}): {settle}")
    elif all(e.detail.startswith(SERVING_STALL_DETAILS) for e in rankless):
        # (a serving engine's own watchdog: its scheduler's head names the rank that saw the batch stall, which every
        # rank of the group runs; the rank that held it up it does not name)
        more = (f" (and {len(rankless) - 1} more such line{'s' if len(rankless) > 2 else ''})"
                if len(rankless) > 1 else "")
        summary = (f"the model's forward hung: {rankless[0].detail[:260]}{more}; every rank of the group runs that "
                   f"batch, so a collective some rank never joined, or a kernel that never ended, held it up: which "
                   f"rank, this input does not say ({cov.get('summary')}): {settle}")
    else:
        summary = (f"a collective timed out ({rankless[0].detail[:200]}); neither the rank whose watchdog caught "
                   f"it nor the rank that did not join is in this input ({cov.get('summary')}): {settle}")
    first = rankless[0] if rankless else None
    verdict = headline.verdict(VerdictKind.HANG, summary, process_group=first.pg if first else None,
                               seq=first.seq if first else None)
    return verdict, Finding(VerdictKind.HANG.value, tuple(reporters), summary, root_cause=True)
