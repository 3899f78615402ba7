"""Configuration files of the test cluster: slurm.conf, ssh keys/configs/known_hosts, /etc/hosts."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tests.cluster.testcluster import Cluster


def _run(argv: list[str]) -> None:
    result = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed: {result.stderr.strip()}")


def write_slurm_conf(cluster: Cluster) -> None:
    tmp = cluster.tmp / "slurm"
    (tmp / "state").mkdir(parents=True)
    for node in cluster.nodes:
        (tmp / "spool" / node.name).mkdir(parents=True)
    nodes = "\n".join(
        f"NodeName={n.name} NodeHostname={n.name} NodeAddr={n.address} CPUs=4 State=UNKNOWN" for n in cluster.nodes)
    conf = f"""ClusterName=tr{cluster.tag}
SlurmctldHost={socket.gethostname().split('.')[0]}({cluster.controller_address})
SlurmctldPort={cluster.ctl_port}
SlurmdPort={cluster.ctl_port + 1}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CryptoType=crypto/munge
AuthInfo=socket={cluster.munge_socket}
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
StateSaveLocation={tmp}/state
SlurmdSpoolDir={tmp}/spool/%n
SlurmctldPidFile={tmp}/slurmctld.pid
SlurmdPidFile={tmp}/slurmd.%n.pid
SlurmctldLogFile={tmp}/slurmctld.log
SlurmdLogFile={tmp}/slurmd.%n.log
SlurmctldDebug=info
SlurmdDebug=info
MessageTimeout=10
KillWait=2
InactiveLimit=0
MinJobAge=300
{nodes}
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
"""
    cluster.slurm_conf.write_text(conf)


def write_ssh_material(cluster: Cluster) -> None:
    sdir = cluster.tmp / "ssh"
    sdir.mkdir(mode=0o700)
    _run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(cluster.ssh_key)])
    (sdir / "authorized_keys").write_text(Path(f"{cluster.ssh_key}.pub").read_text())
    config_lines: list[str] = []
    known: list[str] = []
    for node in cluster.nodes:
        key = sdir / f"host_{node.name}"
        _run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)])
        node.host_key_pub = Path(f"{key}.pub").read_text().split()[1]
        node.sshd_config = sdir / f"sshd_{node.name}.conf"
        node.sshd_config.write_text(f"""ListenAddress {node.address}
Port 22
HostKey {key}
AuthorizedKeysFile {sdir}/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
UseDNS no
PidFile {sdir}/sshd_{node.name}.pid
SetEnv SLURM_CONF={cluster.slurm_conf}
""")
        config_lines += [f"Host {node.name}", f"    HostName {node.address}", "    User root",
                         f"    IdentityFile {cluster.ssh_key}", "    Port 22", ""]
        known.append(f"{node.address} ssh-ed25519 {node.host_key_pub}")
    cluster.ssh_config.write_text("\n".join(config_lines))
    cluster.known_hosts.write_text("\n".join(known) + "\n")
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)


def write_hosts_files(cluster: Cluster) -> None:
    lines = ["127.0.0.1 localhost", f"{cluster.controller_address} {socket.gethostname()}"]
    lines += [f"{n.address} {n.name}" for n in cluster.nodes]
    cluster.hosts_file.write_text("\n".join(lines) + "\n")
    cluster.hosts_file.chmod(0o644)
    resolv = cluster.tmp / "resolv.conf"
    resolv.write_text("nameserver 127.0.0.1\noptions timeout:1 attempts:1\n")
    resolv.chmod(0o644)
