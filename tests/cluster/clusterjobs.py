"""Jobs and commands the cluster tests run (real sbatch jobs, real `triage` processes)."""

from __future__ import annotations

import contextlib
import json
import subprocess
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from tests.cluster import testcluster
from tests.cluster.testcluster import PYTHON, REPO, Cluster

PROGRAMS = REPO / "tests" / "programs"
SBATCH_WRAPPER = REPO / "slurm" / "triage.sbatch"
MISMATCH = REPO / "examples" / "mismatch_hang.py"
REMOTE_TRIAGE = f"{PYTHON} -m triage"


def submit(cluster: Cluster, argv: Sequence[str], env: dict[str, str] | None = None) -> str:
    result = subprocess.run(["sbatch", "--parsable", *argv], capture_output=True, text=True, check=False,
                            env=env or cluster.env, cwd=str(cluster.tmp), timeout=30)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().split(";")[0]


@contextlib.contextmanager
def sleeper_job(cluster: Cluster, nodes: int = 2) -> Iterator[str]:
    """A running job whose ranks (one per node, srun tasks with SLURM_PROCID) just wait."""
    out = cluster.tmp / "sleeper-%j.out"
    job = submit(cluster, [f"-N{nodes}", "--ntasks-per-node=1", "-o", str(out), "--wrap",
                           f"srun {PYTHON} {PROGRAMS / 'cluster_sleeper.py'}"])
    try:
        cluster.wait_job_running(job)
        log = Path(str(out).replace("%j", job))
        deadline = time.monotonic() + 30
        while log.read_text().count("READY") < nodes if log.exists() else True:
            assert time.monotonic() < deadline, f"sleeper job {job} ranks not ready"
            time.sleep(0.2)
        yield job
    finally:
        cancel(cluster, job)


def cancel(cluster: Cluster, job: str) -> None:
    cluster.slurm("scancel", job, check=False)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and cluster.job_state(job) in ("RUNNING", "PENDING", "COMPLETING"):
        time.sleep(0.2)


def triage(cluster: Cluster, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PYTHON, "-m", "triage", *args], capture_output=True, text=True, check=False,
                          env=cluster.env, cwd=str(cluster.tmp), timeout=timeout)


def ssh_args(cluster: Cluster, known_hosts: Path | None = None) -> list[str]:
    return ["--ssh-config", str(cluster.ssh_config), "--known-hosts", str(known_hosts or cluster.known_hosts),
            "--remote-triage", REMOTE_TRIAGE]


def manifests(run_dir: Path) -> dict[str, list[dict[str, object]]]:
    """host -> manifests of its bundles (oldest first)."""
    found: dict[str, list[dict[str, object]]] = {}
    for manifest in sorted(run_dir.glob("*/bundles/*/manifest.json")):
        found.setdefault(manifest.parent.parent.parent.name, []).append(json.loads(manifest.read_text()))
    return found


def report_json(stdout: str) -> dict[str, object]:
    start = stdout.index("{")
    data: dict[str, object] = json.loads(stdout[start:])
    return data


__all__ = ["testcluster"]
