"""`triage collect --hosts` over real SSH (paramiko, known_hosts + RejectPolicy, ssh config)."""

from __future__ import annotations

import re

import pytest

from tests.cluster.clusterjobs import manifests, sleeper_job, ssh_args, triage
from tests.cluster.testcluster import Cluster

pytestmark = pytest.mark.cluster


def _rank_pids(cluster: Cluster, job: str) -> dict[str, int]:
    """host -> pid of its rank, as the rank printed it (pids inside the node's pid namespace)."""
    text = (cluster.tmp / f"sleeper-{job}.out").read_text()
    return {m["host"]: int(m["pid"]) for m in re.finditer(r"READY rank=\d+ host=(?P<host>\S+) pid=(?P<pid>\d+)", text)}


def test_collect_hosts_over_ssh_with_match_and_pids(fresh_cluster: Cluster) -> None:
    c = fresh_cluster
    with sleeper_job(c) as job:
        out = c.tmp / "ssh-match"
        result = triage(c, "collect", "--hosts", "node1,node2", "--match", "cluster_sleeper", "--run-dir", str(out),
                        "--strace-seconds", "0", "--no-report", *ssh_args(c))
        assert result.returncode == 0, result.stderr
        assert sorted(manifests(out)) == ["node1", "node2"]
        pid = _rank_pids(c, job)["node2"]
        out_pids = c.tmp / "ssh-pids"
        result = triage(c, "collect", "--hosts", "root@node2", "--pids", str(pid), "--run-dir", str(out_pids),
                        "--strace-seconds", "0", "--no-report", *ssh_args(c))
        assert result.returncode == 0, result.stderr
        found = manifests(out_pids)
        assert list(found) == ["node2"]
        assert [r["pid"] for r in found["node2"][-1]["ranks"]] == [pid]  # type: ignore[index, union-attr]


def test_wrong_or_unknown_host_key_is_refused(fresh_cluster: Cluster) -> None:
    c = fresh_cluster
    node1, node2 = c.nodes[0], c.nodes[1]
    wrong = c.tmp / "known_hosts.wrong"
    wrong.write_text(c.known_hosts.read_text().replace(node1.host_key_pub, node2.host_key_pub))
    out = c.tmp / "ssh-wrong-key"
    result = triage(c, "collect", "--hosts", "node1", "--run-dir", str(out), "--no-report", *ssh_args(c, wrong))
    assert result.returncode == 4, result.stderr
    assert f"node1: no bundle: node1 ({node1.address}:22): host key does not match known_hosts" \
        in result.stderr
    assert "refusing to connect" in result.stderr and "Traceback" not in result.stderr
    assert not list(out.glob("node1/bundles/*"))
    empty = c.tmp / "known_hosts.empty"
    empty.write_text("")
    result = triage(c, "collect", "--hosts", "node1", "--run-dir", str(out), "--no-report", *ssh_args(c, empty))
    assert result.returncode == 4 and "host key unknown (not in known_hosts): refusing to connect" in result.stderr


@pytest.mark.parametrize("hosts", ["node1;id", "-oProxyCommand=sh", "node1,$(id)", "no de"])
def test_bad_host_names_are_rejected_before_any_connection(fresh_cluster: Cluster, hosts: str) -> None:
    result = triage(fresh_cluster, "collect", f"--hosts={hosts}", "--no-report", *ssh_args(fresh_cluster))
    assert result.returncode == 2
    assert result.stderr.startswith("triage: error: invalid host name"), result.stderr
