"""The full scenario: a 2-node x 2-rank torchrun gloo job, started with slurm/triage.sbatch, hangs
because its last rank calls all_gather while the others call all_reduce."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.cluster.clusterjobs import (
    MISMATCH,
    PYTHON,
    REMOTE_TRIAGE,
    SBATCH_WRAPPER,
    cancel,
    manifests,
    report_json,
    ssh_args,
    submit,
    triage,
)
from tests.cluster.testcluster import Cluster

pytestmark = pytest.mark.cluster
CULPRIT = 3          # world size 4: the last rank calls the other collective


@dataclass(frozen=True)
class HungJob:
    job: str
    run_dir: Path
    culprit_host: str      # where rank 3 really ran (from the run directory the agents wrote)


def _wait_for_bundles(run_dir: Path, hosts: int, timeout: float) -> dict[str, list[dict[str, object]]]:
    deadline = time.monotonic() + timeout
    found: dict[str, list[dict[str, object]]] = {}
    while time.monotonic() < deadline:
        found = manifests(run_dir)
        if len(found) == hosts and all(m[0].get("finished") for m in found.values()):
            return found
        time.sleep(0.5)
    raise AssertionError(f"bundles after {timeout}s: {sorted(found)}")


@pytest.fixture(scope="module")
def hung_job(cluster: Cluster) -> Iterator[HungJob]:
    cluster.cancel_all()
    cluster.restart_missing_sshd()
    run_dir = cluster.shared / "mismatch"
    env = cluster.env
    env.update(TRIAGE_BIN=REMOTE_TRIAGE, TRIAGE_PYTHON=PYTHON, TRIAGE_NPROC_PER_NODE="2", TRIAGE_RUN_DIR=str(run_dir),
               TRIAGE_HANG_TIMEOUT="5", TRIAGE_ON_HANG="report-and-wait", TRIAGE_STRACE_SECONDS="0.5",
               EXAMPLE_HANG_SECONDS="300")
    job = submit(cluster, ["-N2", "-o", str(cluster.tmp / "mismatch-%j.out"), str(SBATCH_WRAPPER), str(MISMATCH)], env)
    try:
        submitted = time.time()
        found = _wait_for_bundles(run_dir, 2, timeout=90)
        print(f"\nhung job {job}: submitted {submitted:.1f}, run.json {json.loads((run_dir / 'run.json').read_text())}, "
              f"bundles {[(h, m[0]['created'], m[0]['finished']) for h, m in found.items()]}, now {time.time():.1f}")
        culprit = [h.parents[2].name for h in run_dir.glob(f"*/ranks/{CULPRIT}/worker.json")]
        assert len(culprit) == 1, culprit
        yield HungJob(job=job, run_dir=run_dir, culprit_host=culprit[0])
    finally:
        cancel(cluster, job)


def _culprit_host(report: dict[str, object]) -> tuple[list[int], str | None]:
    verdict = report["verdict"]
    assert isinstance(verdict, dict)
    ranks = report["ranks"]
    assert isinstance(ranks, list)
    hosts = {r["rank"]: r.get("host") for r in ranks}
    return list(verdict["culprit_ranks"]), hosts.get(CULPRIT)


def test_agents_detect_the_hang_and_every_node_collects_within_2s(cluster: Cluster, hung_job: HungJob) -> None:
    found = manifests(hung_job.run_dir)
    assert sorted(found) == ["node1", "node2"]
    first = {host: m[0] for host, m in found.items()}
    triggers = {host: m["trigger"] for host, m in first.items()}
    # A node collects because it saw the hang itself or because another node announced it.
    assert set(triggers.values()) <= {"hang", "remote"} and "hang" in triggers.values(), triggers
    created = [float(m["created"]) for m in first.values()]  # type: ignore[arg-type]
    assert max(created) - min(created) < 2.0, first        # the spec's bound: all nodes within 2 s
    notices = [json.loads(n.read_text()) for n in (hung_job.run_dir / ".cluster-trigger").glob("*.json")]
    assert notices, triggers
    # the first announcement comes from a node that saw the hang itself; a node that collected on
    # that notice may announce too, later (e.g. that it stops as well): the agents' stop protocol
    first_notice = min(notices, key=lambda n: float(n["time"]))
    assert triggers.get(first_notice["origin"]) == "hang", (notices, triggers)
    result = triage(cluster, "report", "--format", "json", str(hung_job.run_dir))
    culprits, host = _culprit_host(report_json(result.stdout))
    assert CULPRIT in culprits and host == hung_job.culprit_host, result.stdout[:2000]
    for node in ("node1", "node2"):                 # tags carry the real node names
        merged = (hung_job.run_dir / node / "merged.log").read_text(errors="replace")
        assert f"[{node}:" in merged and f"[{'node2' if node == 'node1' else 'node1'}:" not in merged
    job_out = (cluster.tmp / f"mismatch-{hung_job.job}.out").read_text(errors="replace")
    assert "triage.sbatch: job" in job_out and "rendezvous node1:" in job_out


def test_collect_job_gathers_both_nodes_and_names_the_culprit_host(cluster: Cluster, hung_job: HungJob) -> None:
    out = cluster.tmp / "collect-hung-job"
    result = triage(cluster, "collect", "--job", hung_job.job, "--run-dir", str(out), "--remote-triage",
                    REMOTE_TRIAGE, "--format", "json", "--no-progress")
    assert result.returncode in (0, 1), result.stderr
    assert "on 2 node(s): node1, node2" in result.stderr
    assert sorted(manifests(out)) == ["node1", "node2"]
    culprits, host = _culprit_host(report_json(result.stdout))
    assert CULPRIT in culprits and host == hung_job.culprit_host, result.stdout[:2000]


def test_collect_hosts_over_ssh_names_the_culprit_host(cluster: Cluster, hung_job: HungJob) -> None:
    out = cluster.tmp / "collect-hung-ssh"
    result = triage(cluster, "collect", "--hosts", "node1,node2", "--run-dir", str(out), "--format", "json",
                    *ssh_args(cluster))
    assert result.returncode in (0, 1), result.stderr
    assert sorted(manifests(out)) == ["node1", "node2"]
    culprits, host = _culprit_host(report_json(result.stdout))
    assert CULPRIT in culprits and host == hung_job.culprit_host, result.stdout[:2000]


def test_unreachable_node_gives_a_partial_report_naming_it(cluster: Cluster, hung_job: HungJob) -> None:
    down = cluster.node("node2")
    down.stop_sshd()
    try:
        out = cluster.tmp / "collect-hung-partial"
        result = triage(cluster, "collect", "--hosts", "node1,node2", "--run-dir", str(out), "--width", "120",
                        *ssh_args(cluster))
    finally:
        down.start_sshd()
    assert result.returncode in (0, 1), result.stderr
    assert result.stdout.startswith("triage collect: PARTIAL report: no bundle from 1 of 2 node(s): node2")
    assert f"node2 ({down.address}:22): cannot connect" in result.stderr
    assert sorted(manifests(out)) == ["node1"]
    assert len(result.stdout.splitlines()) > 3          # the report on node1's bundle follows


def test_collect_job_shared_reads_bundles_in_place(cluster: Cluster, hung_job: HungJob) -> None:
    out = cluster.tmp / "collect-hung-shared"
    before = {host: len(m) for host, m in manifests(hung_job.run_dir).items()}
    result = triage(cluster, "collect", "--job", hung_job.job, "--shared", "--run-dir", str(out),
                    "--remote-triage", REMOTE_TRIAGE, "--format", "json", "--no-progress")
    assert result.returncode in (0, 1), result.stderr
    after = {host: len(m) for host, m in manifests(hung_job.run_dir).items()}
    assert all(after[h] == before[h] + 1 for h in ("node1", "node2")), (before, after)   # new agent bundles
    assert manifests(out) == {}                                       # nothing streamed or copied
    summary = json.loads((out / "collect.json").read_text())
    assert all(str(n["bundle"]).startswith(str(hung_job.run_dir)) for n in summary["nodes"].values())
    culprits, host = _culprit_host(report_json(result.stdout))
    assert CULPRIT in culprits and host == hung_job.culprit_host, result.stdout[:2000]
