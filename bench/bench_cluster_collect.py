"""How long `triage collect` takes on a real (namespaced) cluster, and how it grows with nodes.

For each cluster size N (default 1 2 3 4 8; each node = its own netns with slurmd + sshd) this
starts the cluster, runs a job with one waiting Python rank per node, then times
``triage collect --job`` (srun transport) and ``triage collect --hosts`` (SSH transport) with the
report, and the report alone. It prints per-node cost and bytes moved, and a model for 1,000
nodes. Needs root. Asserts nothing.

    python bench/bench_cluster_collect.py [N ...]
"""

from __future__ import annotations

import json
import math
import resource
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from tests.cluster import clusterjobs, testcluster

STRACE = "0.3"
FANOUT = 32


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _collect(cluster: testcluster.Cluster, out: Path, *args: str) -> tuple[float, dict[str, object]]:
    """Wall time and collect.json; ``login_cpu_s`` added: CPU of triage collect + its srun/SSH clients
    (the node side runs under slurmd/sshd, so it is not counted)."""
    cpu = _children_cpu()
    started = time.monotonic()
    result = clusterjobs.triage(cluster, "collect", *args, "--run-dir", str(out), "--strace-seconds", STRACE,
                                "--no-progress", "--format", "json", timeout=600)
    elapsed = time.monotonic() - started
    if result.returncode not in (0, 1):
        raise RuntimeError(f"collect failed: {result.stderr[-2000:]}")
    summary: dict[str, object] = json.loads((out / "collect.json").read_text())
    summary["login_cpu_s"] = _children_cpu() - cpu
    return elapsed, summary


def _report(cluster: testcluster.Cluster, run_dir: Path) -> float:
    started = time.monotonic()
    clusterjobs.triage(cluster, "report", "--format", "json", str(run_dir))
    return time.monotonic() - started


def measure(n_nodes: int) -> dict[str, float]:
    cluster = testcluster.start_cluster(n_nodes)
    try:
        with clusterjobs.sleeper_job(cluster, nodes=n_nodes) as job:
            hosts = ",".join(n.name for n in cluster.nodes)
            t_job, s_job = _collect(cluster, cluster.tmp / "job", "--job", job, "--remote-triage",
                                    clusterjobs.REMOTE_TRIAGE, "--fanout", str(FANOUT))
            t_ssh, s_ssh = _collect(cluster, cluster.tmp / "ssh", "--hosts", hosts, "--match", "cluster_sleeper",
                                    "--fanout", str(FANOUT), *clusterjobs.ssh_args(cluster))
            t_report = _report(cluster, cluster.tmp / "job")
        nodes_job = s_job["nodes"]
        nodes_ssh = s_ssh["nodes"]
        assert isinstance(nodes_job, dict) and isinstance(nodes_ssh, dict)
        return {
            "nodes": n_nodes, "srun_total_s": t_job, "ssh_total_s": t_ssh, "report_s": t_report,
            "srun_fanout_s": float(s_job["elapsed_s"]), "ssh_fanout_s": float(s_ssh["elapsed_s"]),  # type: ignore[arg-type]
            "srun_node_s": statistics.median(v["seconds"] for v in nodes_job.values()),
            "ssh_node_s": statistics.median(v["seconds"] for v in nodes_ssh.values()),
            "bytes_per_node": statistics.mean(v["bytes"] for v in nodes_job.values()),
            "srun_login_cpu_s": float(s_job["login_cpu_s"]),  # type: ignore[arg-type]
            "ssh_login_cpu_s": float(s_ssh["login_cpu_s"]),  # type: ignore[arg-type]
        }
    finally:
        testcluster.stop_cluster(cluster)


def model(rows: list[dict[str, float]], target: int = 1000) -> None:
    first, big = rows[0], rows[-1]
    span = max(1.0, big["nodes"] - first["nodes"])
    alone = min(r["srun_node_s"] for r in rows)          # one node, nothing else competing for the CPUs
    slope = (big["srun_fanout_s"] - first["srun_fanout_s"]) / span
    login_srun = (big["srun_login_cpu_s"] - first["srun_login_cpu_s"]) / span
    login_ssh = (big["ssh_login_cpu_s"] - first["ssh_login_cpu_s"]) / span
    bytes_node = statistics.mean(r["bytes_per_node"] for r in rows)
    report_slope = max(0.0, (big["report_s"] - first["report_s"]) / span)
    waves = math.ceil(target / FANOUT)
    print(f"\nmodel for {target} nodes (fan-out width {FANOUT}: one srun step / SSH session per node):")
    print(f"  per-node cost, node alone: {alone:.2f} s (collection on the node + transfer)")
    print(f"  here all namespaced nodes share 2 CPUs, so fan-out time grows {slope:.2f} s per extra node")
    print(f"  real nodes collect in parallel: ceil({target}/{FANOUT}) = {waves} waves x {alone:.2f} s "
          f"= ~{waves * alone:.0f} s of fan-out")
    print(f"  login-node CPU per node: srun {login_srun:.3f} s, SSH {login_ssh:.3f} s -> "
          f"{target * login_srun:.0f} s / {target * login_ssh:.0f} s CPU for {target} nodes "
          f"(spread over {FANOUT} concurrent sessions; the bound once it exceeds the waves above)")
    print(f"  bytes moved: {bytes_node / 1024:.0f} KiB/node -> {target * bytes_node / 2**20:.0f} MiB in total "
          f"(0 with --shared: bundles stay in the shared run dir)")
    projected = first["report_s"] + target * report_slope
    print(f"  report: {first['report_s']:.2f} s + {report_slope:.3f} s/node -> ~{projected:.0f} s")
    print("  slurmctld handles one step creation per node (at most --fanout at a time).")


def main(argv: list[str]) -> int:
    reason = testcluster.unavailable_reason()
    if reason:
        print(f"skipped: {reason}")
        return 0
    sizes = [int(a) for a in argv] or [1, 2, 3, 4, 8]
    rows = []
    print(f"{'nodes':>5} {'srun total':>10} {'ssh total':>9} {'srun fan':>8} {'ssh fan':>7} "
          f"{'srun/node':>9} {'ssh/node':>8} {'report':>6} {'KiB/node':>8}")
    for n in sizes:
        row = measure(n)
        rows.append(row)
        print(f"{n:>5} {row['srun_total_s']:>10.2f} {row['ssh_total_s']:>9.2f} {row['srun_fanout_s']:>8.2f} "
              f"{row['ssh_fanout_s']:>7.2f} {row['srun_node_s']:>9.2f} {row['ssh_node_s']:>8.2f} "
              f"{row['report_s']:>6.2f} {row['bytes_per_node'] / 1024:>8.0f}", flush=True)
    model(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
