"""Issue 23, point 4, held across the corpus: every verdict that names no culprit says which ranks the
text covers and the one thing that would settle it (what failed is its own first words). The cases still failing are
listed in ``KNOWN`` with their class (strict xfail: fixed ones must leave the list)."""

from __future__ import annotations

import re

import pytest

from tests.realworld.scoring import Case, load_cases, run_report

_SETTLES = re.compile(r"would (?:settle|tell|name|show)")
# the ONE thing named, in the clause before "would settle it": a log, a setting or a way to run the job
THINGS = re.compile(r"triage launch|TORCH_DISTRIBUTED_DEBUG=DETAIL|NCCL_DEBUG=INFO|--tee|the log of rank|"
                    r"rank \d+'s (?:own )?(?:log|output)|every rank's|dmesg|launcher\.log|MASTER_ADDR|"
                    r"CUDA_LAUNCH_BLOCKING|srun --label|rank prefixes|"
                    # a set-up failure no rank caused: the port's holder, the node the launcher cannot reach
                    r"ss -ltnp|ssh -o BatchMode|"
                    # the launcher that died itself: its installation on that host
                    r"`ompi_info`|"
                    # a job that never ran: the scheduler's or the node's own reason, the program on the node
                    r"Slurm's reason|slurmd log|python -c 'import|`ls -l` and `file`|"
                    # an MPI process that could not reach its launcher: the PMI variables the launcher gave it
                    r"`env \| grep PMI`|"
                    # a network failure of no known rank: the link (the store's address, the peer, /dev/shm)
                    r"nc -zv|the log of the peer|df -h /dev/shm|"
                    # a runtime's own per-node backtrace switch (GASNet's, for a message it could not deliver)
                    r"GASNET_BACKTRACE=1|"
                    # a start-up waiting for cluster resources Ray never placed: the Ray cluster's own view of them
                    r"`ray status`|"
                    # the per-rank output of the launcher that started the ranks (triage.analysis.settle)
                    r"mpirun --tag-output|-prepend-rank|--enable_each_rank_log|Ray worker's own log|torchx log|"
                    r"rank tag on each spawned|"
                    # YARN's containers, which have no ranks: each container's own log
                    r"yarn logs -applicationId|"
                    # Kubernetes' own record of a pod's end (a Spark executor's pod): its last state and exit code
                    r"kubectl describe pod|"
                    # Julia's Distributed, which has workers, no ranks: the workers' own lines the master prints
                    r"`From worker N:` lines|"
                    # a launcher's local rank whose global rank is not in the input: its node rank
                    r"--node_rank|"
                    # a job-wide configuration error: the launch's process count beside the input's; a size check
                    # between ranks: the count and datatype each rank passes at the call
                    r"the launch's process count|the count and datatype each rank passes", re.IGNORECASE)
# (or, where no rank is at fault, that the summary says so: a set-up failure asks for no rank)
_COVERS = re.compile(r"this input holds|not in this input|rank unknown|no line of this input|no rank at fault")
CASES = load_cases()
# cases whose verdict of no culprit does not yet say what would settle it, each with its class (strict xfail: a fixed
# one must leave the list)
KNOWN: dict[str, str] = {
}


def _param(case: Case):  # type: ignore[no-untyped-def]
    reason = KNOWN.get(case.name)
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(case, id=case.name, marks=marks)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_a_verdict_without_a_culprit_says_what_would_settle_it(case: Case) -> None:
    _code, report, _ = run_report(case)
    if report is None or report["verdict"]["culprit_ranks"] or report["verdict"]["kind"] == "no_problem_found":
        pytest.skip("a culprit is named (or no verdict)")
    if report["verdict"]["kind"] == "stopped":
        pytest.skip("stopped from outside: no rank failed; the summary says what to do (tests/report/test_stopped.py)")
    summary = report["verdict"]["summary"]
    assert _COVERS.search(summary), summary
    settles = _SETTLES.search(summary)
    assert settles, summary
    assert THINGS.search(summary[max(0, settles.start() - 260):settles.start()]), summary
