"""`sbatch slurm/triage-check.sbatch` on the real 3-node test cluster: healthy, one node whose
master-port traffic is dropped (nftables inside its namespace), one broken link between two nodes."""

from __future__ import annotations

import contextlib
import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.testcluster import PYTHON, REPO, Cluster

pytestmark = [pytest.mark.cluster, pytest.mark.slow]
SBATCH = REPO / "slurm" / "triage-check.sbatch"
TIMEOUT = 60


@contextlib.contextmanager
def nft_rules(cluster: Cluster, node: str, rules: list[str]) -> Iterator[None]:
    """Drop traffic inside one node's network namespace for the duration of a test."""
    netns = f"/run/netns/{cluster.node(node).netns}"
    table = "table inet triagecheck {\n" + "\n".join(rules) + "\n}\n"
    subprocess.run(["nsenter", f"--net={netns}", "nft", "-f", "-"], input=table, text=True, check=True, timeout=30)
    try:
        yield
    finally:
        subprocess.run(["nsenter", f"--net={netns}", "nft", "delete", "table", "inet", "triagecheck"],
                       check=False, timeout=30)


def run_check(cluster: Cluster, name: str, port: int) -> tuple[dict[str, Any], str, float]:
    """Submit the check, wait for the job to end; (verdict.json, job output, seconds to the verdict)."""
    check_dir = cluster.shared / name
    out = cluster.tmp / f"{name}-%j.out"
    env = cluster.env
    env.update(TRIAGE_BIN=f"{PYTHON} -m triage", TRIAGE_PYTHON=PYTHON, TRIAGE_NPROC_PER_NODE="2",
               TRIAGE_CHECK_DIR=str(check_dir), TRIAGE_RDZV_PORT=str(port))
    began = time.monotonic()
    submitted = subprocess.run(["sbatch", "--parsable", f"-N{len(cluster.nodes)}", "-o", str(out), str(SBATCH),
                                "--timeout", str(TIMEOUT)], capture_output=True, text=True, env=env,
                               cwd=str(cluster.tmp), timeout=30, check=False)
    assert submitted.returncode == 0, submitted.stderr
    job = submitted.stdout.strip().split(";")[0]
    try:
        deadline = time.monotonic() + TIMEOUT + 60
        while not (check_dir / "verdict.json").exists():
            assert time.monotonic() < deadline, f"no verdict from job {job}"
            time.sleep(0.2)
        took = time.monotonic() - began
        while cluster.job_state(job) in ("RUNNING", "PENDING", "COMPLETING", "CONFIGURING"):
            assert time.monotonic() < deadline, f"job {job} still {cluster.job_state(job)}"
            time.sleep(0.2)
    finally:
        cluster.slurm("scancel", job, check=False)
    log = Path(str(out).replace("%j", job)).read_text(errors="replace")
    return json.loads((check_dir / "verdict.json").read_text()), log, took


def test_healthy_cluster_is_ok(fresh_cluster: Cluster) -> None:
    verdict, log, took = run_check(fresh_cluster, "healthy", 29611)
    assert verdict["status"] == "ok", log
    assert verdict["headline"].startswith("OK: 3 nodes, 6 ranks, all collectives and links fine; gloo "), log
    assert [n["node"] for n in verdict["nodes"]] == ["node1", "node2", "node3"]
    assert all(n["interface"] == "eth0" for n in verdict["nodes"][1:])
    assert log.count(verdict["headline"]) == 3       # the lead and both other nodes print the verdict first
    print(f"\nhealthy 3-node check: verdict after {took:.1f} s")


def test_node_whose_master_port_traffic_is_dropped_is_named(fresh_cluster: Cluster) -> None:
    c = fresh_cluster
    master = c.node("node1").address
    port = 29612
    rule = f"chain out {{ type filter hook output priority 0; ip daddr {master} tcp dport {port} drop; }}"
    with nft_rules(c, "node3", [rule]):
        verdict, log, took = run_check(c, "blocked", port)
    assert verdict["status"] == "problem", log
    assert verdict["headline"] == (f"node3 cannot reach the master port node1:{port} (connection timed out) "
                                   f"from eth0: its 2 ranks never joined"), log
    assert took < TIMEOUT + 20
    print(f"\nnode3 blocked: verdict after {took:.1f} s")


def test_broken_link_between_two_nodes_names_the_pair(fresh_cluster: Cluster) -> None:
    c = fresh_cluster
    node3 = c.node("node3").address
    rules = [f"chain out {{ type filter hook output priority 0; ip daddr {node3} drop; }}",
             f"chain in {{ type filter hook input priority 0; ip saddr {node3} drop; }}"]
    with nft_rules(c, "node2", rules):
        verdict, log, took = run_check(c, "link", 29613)
    assert verdict["status"] == "problem", log
    assert verdict["headline"] == "link node2 <-> node3 fails (connection timed out); all other links fine", log
    print(f"\nlink node2-node3 broken: verdict after {took:.1f} s")


def test_master_that_no_node_reaches_is_suspected(fresh_cluster: Cluster) -> None:
    c = fresh_cluster
    port = 29614
    rule = f'chain in {{ type filter hook input priority 0; iifname "eth0" tcp dport {port} drop; }}'
    with nft_rules(c, "node1", [rule]):
        verdict, log, _took = run_check(c, "master", port)
    assert verdict["status"] == "problem", log
    assert verdict["headline"].startswith(f"no other node can reach the master port node1:{port} "
                                          f"(connection timed out): look at the master node's firewall"), log
    assert sorted(p.split(" ")[0] for p in verdict["problems"][1:3]) == ["node2", "node3"]
