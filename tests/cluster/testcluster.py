"""A real SLURM + SSH cluster on this machine, for tests and benchmarks.

slurmctld and munged run in the root namespace; every node is a network namespace (veth into a
private bridge, its own address in a private /24) holding a pid + mount + UTS namespace whose
init (node_init.py) sets the node's hostname and runs the node's slurmd and sshd (port 22).
All names (netns, bridge, veth, /24, ports) derive from this process's pid so parallel runs do
not collide. Every process started is recorded and killed by pid, then waited on.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from tests.cluster import clusterconf

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
PYTHON = sys.executable  # as it is: a venv interpreter must stay in its venv
NEEDED = ("slurmctld", "slurmd", "sbatch", "srun", "scontrol", "squeue", "munged", "ip", "nsenter",
          "unshare", "ssh-keygen")


class ClusterUnavailable(Exception):
    """This machine cannot host the test cluster (the reason is the message)."""


def unavailable_reason() -> str | None:
    if os.geteuid() != 0:
        return "the cluster tests need root (network namespaces, slurmd, sshd)"
    missing = [tool for tool in NEEDED if shutil.which(tool) is None]
    if missing or not os.path.exists("/usr/sbin/sshd"):
        return f"missing tools for the test cluster: {', '.join(missing) or '/usr/sbin/sshd'}"
    probe = f"triageprobe{os.getpid()}"
    made = subprocess.run(["ip", "netns", "add", probe], check=False, capture_output=True, text=True)
    if made.returncode != 0:
        return f"network namespaces unavailable: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], check=False, capture_output=True)
    return None


def _run(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=60, **kwargs)  # type: ignore[call-overload]
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed: {result.stderr.strip()}")
    return result  # type: ignore[no-any-return]


def _free_port(address: str = "0.0.0.0") -> int:
    with socket.socket() as sock:
        sock.bind((address, 0))
        return int(sock.getsockname()[1])


def _pick_subnet() -> str:
    used = _run(["ip", "-4", "-o", "addr"]).stdout
    start = os.getpid() % 200
    for offset in range(200):
        third = (start + offset) % 200 + 20
        prefix = f"10.213.{third}"
        if f" {prefix}." not in used:
            return prefix
    raise ClusterUnavailable("no free 10.213.x.0/24 subnet")


@dataclass
class Node:
    name: str
    address: str
    netns: str
    veth: str
    init: subprocess.Popen[bytes] | None = None
    sshd_config: Path | None = None
    host_key_pub: str = ""

    def daemon_pid(self, name: str) -> int | None:
        """Root-namespace pid of this node's daemon ``name`` (slurmd, sshd)."""
        if self.init is None:
            return None
        with contextlib.suppress(psutil.Error):
            for child in psutil.Process(self.init.pid).children(recursive=True):
                with contextlib.suppress(psutil.Error):
                    if child.name() == name:
                        if name == "sshd" and "listener" not in " ".join(child.cmdline()):
                            continue   # a per-connection sshd, not the listener
                        return child.pid
        return None

    def init_pid(self) -> int | None:
        """Root-namespace pid of the node's init (pid 1 inside the node)."""
        if self.init is None:
            return None
        with contextlib.suppress(psutil.Error):
            children = psutil.Process(self.init.pid).children()
            return children[0].pid if children else None
        return None

    def start_sshd(self) -> None:
        """(Re)start the node's sshd inside the node's namespaces; it daemonizes under the node's init."""
        init = self.init_pid()
        assert init is not None and self.sshd_config is not None
        subprocess.run(["nsenter", "-t", str(init), "--net", "--uts", "--pid", "--mount", "--",
                        "/usr/sbin/sshd", "-f", str(self.sshd_config)], check=True, timeout=30,
                       capture_output=True)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection((self.address, 22), timeout=1) as sock:
                if sock.recv(4).startswith(b"SSH"):
                    return
            time.sleep(0.1)
        raise RuntimeError(f"sshd on {self.name} did not restart")

    def stop_sshd(self) -> None:
        pid = self.daemon_pid("sshd")
        if pid is not None:
            with contextlib.suppress(psutil.Error):
                proc = psutil.Process(pid)
                proc.terminate()
                proc.wait(5)


@dataclass
class Cluster:
    tmp: Path
    tag: str
    prefix: str
    bridge: str
    nodes: list[Node]
    slurm_conf: Path
    ctl_port: int
    munge_socket: Path
    ssh_key: Path
    ssh_config: Path
    known_hosts: Path
    shared: Path                      # the "shared filesystem" path for run dirs
    hosts_file: Path                  # /etc/hosts inside the nodes (bind-mounted in their mount namespace)
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    netns_made: list[str] = field(default_factory=list)

    @property
    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["SLURM_CONF"] = str(self.slurm_conf)
        env.pop("SLURM_JOB_ID", None)
        return env

    @property
    def controller_address(self) -> str:
        return f"{self.prefix}.1"

    def node(self, name: str) -> Node:
        return next(n for n in self.nodes if n.name == name)

    def slurm(self, *argv: str, check: bool = True, timeout: float = 30) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(list(argv), check=False, capture_output=True, text=True, env=self.env, timeout=timeout)
        if check and result.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)}: {result.stderr.strip()}")
        return result

    def node_states(self) -> dict[str, str]:
        out = self.slurm("sinfo", "-h", "-N", "-o", "%N %T", check=False).stdout
        return dict(line.split() for line in out.splitlines() if len(line.split()) == 2)

    def job_state(self, job: str) -> str:
        return self.slurm("squeue", "-h", "-j", job, "-o", "%T", check=False).stdout.strip()

    def wait_job_running(self, job: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.job_state(job) == "RUNNING":
                return
            time.sleep(0.2)
        raise TimeoutError(f"job {job} not running after {timeout}s: {self.job_state(job)!r}")

    def cancel_all(self) -> None:
        self.slurm("scancel", "--full", "-p", "debug", check=False)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if not self.slurm("squeue", "-h", "-o", "%i", check=False).stdout.strip():
                return
            time.sleep(0.2)

    def restart_missing_sshd(self) -> None:
        for node in self.nodes:
            if node.daemon_pid("sshd") is None:
                node.start_sshd()

    def wait_nodes_idle(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        states: dict[str, str] = {}
        while time.monotonic() < deadline:
            states = self.node_states()
            if all(states.get(n.name) == "idle" for n in self.nodes):
                return
            time.sleep(0.2)
        raise TimeoutError(f"nodes not idle after {timeout}s: {states}")


# ---------------------------------------------------------------------------- bring-up

def _spawn(cluster: Cluster, argv: list[str], log: Path, env: dict[str, str] | None = None,
           user: str | None = None) -> subprocess.Popen[bytes]:
    with open(log, "ab") as handle:
        proc = subprocess.Popen(argv, stdout=handle, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                                start_new_session=True, user=user, group=user, extra_groups=[] if user else None)
    cluster.procs.append(proc)
    return proc


def _start_munge(cluster: Cluster) -> None:
    mdir = cluster.tmp / "munge"
    mdir.mkdir()
    mdir.chmod(0o711)
    shutil.chown(mdir, "munge", "munge")
    _spawn(cluster, ["/usr/sbin/munged", "-F", "--socket", str(cluster.munge_socket),
                     "--pid-file", str(mdir / "munged.pid"), "--seed-file", str(mdir / "seed"),
                     "--log-file", str(mdir / "munged.log")], cluster.tmp / "munged.out", user="munge")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        cred = subprocess.run(["munge", "-S", str(cluster.munge_socket), "-n"], check=False, capture_output=True)
        if cred.returncode == 0 and subprocess.run(
                ["unmunge", "-S", str(cluster.munge_socket)], input=cred.stdout, check=False, capture_output=True).returncode == 0:
            return
        time.sleep(0.1)
    raise RuntimeError(f"munged did not start: {(cluster.tmp / 'munged.out').read_text(errors='replace')}")


def _make_network(cluster: Cluster) -> None:
    _run(["ip", "link", "add", cluster.bridge, "type", "bridge"])
    _run(["ip", "addr", "add", f"{cluster.controller_address}/24", "dev", cluster.bridge])
    _run(["ip", "link", "set", cluster.bridge, "up"])
    for node in cluster.nodes:
        _run(["ip", "netns", "add", node.netns])
        cluster.netns_made.append(node.netns)
        peer = f"{node.veth}p"
        _run(["ip", "link", "add", node.veth, "type", "veth", "peer", "name", peer])
        _run(["ip", "link", "set", peer, "netns", node.netns])
        _run(["ip", "link", "set", node.veth, "master", cluster.bridge, "up"])
        inside = ["ip", "-n", node.netns]
        _run([*inside, "link", "set", peer, "name", "eth0"])
        _run([*inside, "addr", "add", f"{node.address}/24", "dev", "eth0"])
        _run([*inside, "link", "set", "eth0", "up"])
        _run([*inside, "link", "set", "lo", "up"])
        _run([*inside, "route", "add", "default", "via", cluster.controller_address])


def _start_controller(cluster: Cluster) -> None:
    env = cluster.env
    _spawn(cluster, ["slurmctld", "-D", "-i", "-f", str(cluster.slurm_conf)], cluster.tmp / "slurmctld.out", env)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if cluster.slurm("scontrol", "ping", check=False).stdout.count("UP") >= 1:
            return
        time.sleep(0.2)
    raise RuntimeError("slurmctld did not come up: " + (cluster.tmp / "slurmctld.out").read_text(errors="replace"))


def _start_node(cluster: Cluster, node: Node) -> None:
    assert node.sshd_config is not None
    argv = ["nsenter", f"--net=/run/netns/{node.netns}", "unshare", "--uts", "--pid", "--fork", "--mount",
            "--mount-proc", "--kill-child", "--", PYTHON, str(HERE / "node_init.py"), node.name, str(cluster.hosts_file),
            str(cluster.tmp / "resolv.conf"),
            "--", "slurmd", "-D", "-N", node.name, "-f", str(cluster.slurm_conf),
            "--", "/usr/sbin/sshd", "-D", "-e", "-f", str(node.sshd_config)]
    node.init = _spawn(cluster, argv, cluster.tmp / f"node_{node.name}.out", cluster.env)


_CLUSTERS_STARTED = itertools.count()


def start_cluster(n_nodes: int = 2, base: Path | None = None) -> Cluster:
    reason = unavailable_reason()
    if reason:
        raise ClusterUnavailable(reason)
    # unique per cluster, so that several clusters of one pytest session (tests/cluster, tests/check,
    # tests/stragglers) never share a namespace, veth or bridge name (veth names: at most 15 chars)
    tag = f"{os.getpid()}c{next(_CLUSTERS_STARTED)}"
    tmp = Path(tempfile.mkdtemp(prefix=f"triage-cluster-{tag}-", dir=base))
    tmp.chmod(0o755)
    prefix = _pick_subnet()
    nodes = [Node(name=f"node{i}", address=f"{prefix}.{10 + i}", netns=f"triage{tag}n{i}", veth=f"tv{tag}n{i}")
             for i in range(1, n_nodes + 1)]
    cluster = Cluster(
        tmp=tmp, tag=tag, prefix=prefix, bridge=f"tb{tag}", nodes=nodes, slurm_conf=tmp / "slurm.conf",
        ctl_port=_free_port(), munge_socket=tmp / "munge" / "munge.sock", ssh_key=tmp / "ssh" / "id_ed25519",
        ssh_config=tmp / "ssh" / "config", known_hosts=tmp / "ssh" / "known_hosts", shared=tmp / "shared",
        hosts_file=tmp / "hosts",
    )
    cluster.shared.mkdir()
    try:
        _start_munge(cluster)
        _make_network(cluster)
        clusterconf.write_slurm_conf(cluster)
        clusterconf.write_ssh_material(cluster)
        _start_controller(cluster)
        clusterconf.write_hosts_files(cluster)
        for node in nodes:
            _start_node(cluster, node)
        cluster.wait_nodes_idle()
        _wait_sshd(cluster)
    except BaseException:
        stop_cluster(cluster)
        raise
    return cluster


def _wait_sshd(cluster: Cluster, timeout: float = 15) -> None:
    for node in cluster.nodes:
        deadline = time.monotonic() + timeout
        while True:
            with contextlib.suppress(OSError), socket.create_connection((node.address, 22), timeout=1) as sock:
                if sock.recv(4).startswith(b"SSH"):
                    break
            if time.monotonic() > deadline:
                raise RuntimeError(f"sshd on {node.name} not up: "
                                   + (cluster.tmp / f"node_{node.name}.out").read_text(errors="replace"))
            time.sleep(0.1)


# ---------------------------------------------------------------------------- teardown

def stop_cluster(cluster: Cluster, keep_tmp: bool = False) -> None:
    with contextlib.suppress(Exception):
        if any(p.poll() is None for p in cluster.procs):
            cluster.cancel_all()
    nodes_first = [n.init for n in cluster.nodes if n.init is not None]
    others = [p for p in cluster.procs if p not in nodes_first]
    for proc in nodes_first:
        # unshare ignores SIGTERM while it waits; SIGKILL makes the kernel kill its child (the
        # namespace's init, via --kill-child) and with it every process of the node.
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    for proc in [*nodes_first, *reversed(others)]:
        _kill_and_wait(proc)
    for netns in cluster.netns_made:
        subprocess.run(["ip", "netns", "del", netns], check=False, capture_output=True)
    subprocess.run(["ip", "link", "del", cluster.bridge], check=False, capture_output=True)
    if not keep_tmp:
        shutil.rmtree(cluster.tmp, ignore_errors=True)


def _kill_and_wait(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            proc.wait(10)
