"""The test cluster itself: nodes with their own hostnames, SLURM and SSH reachable."""

from __future__ import annotations

import subprocess

import pytest

from tests.cluster import testcluster

pytestmark = pytest.mark.cluster


def test_nodes_have_own_hostname_slurm_and_sshd(fresh_cluster: testcluster.Cluster) -> None:
    c = fresh_cluster
    assert set(c.node_states()) == {n.name for n in c.nodes}
    out = c.slurm("srun", f"-N{len(c.nodes)}", f"-n{len(c.nodes)}", "hostname", timeout=60).stdout.split()
    assert sorted(out) == sorted(n.name for n in c.nodes)
    node = c.nodes[0]
    ssh = subprocess.run(
        ["ssh", "-F", str(c.ssh_config), "-o", f"UserKnownHostsFile={c.known_hosts}",
         "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes", node.name, "hostname"],
        check=False, capture_output=True, text=True, timeout=30)
    assert ssh.stdout.strip() == node.name, ssh.stderr


def test_sshd_can_be_stopped_and_restarted(fresh_cluster: testcluster.Cluster) -> None:
    node = fresh_cluster.nodes[-1]
    node.stop_sshd()
    assert node.daemon_pid("sshd") is None
    fresh_cluster.restart_missing_sshd()
    assert node.daemon_pid("sshd") is not None
