"""How long `triage check` takes on the real (namespaced) test cluster.

1. Wall time of a healthy check on N nodes (default 3) x 2 ranks, started with
   ``sbatch slurm/triage-check.sbatch``: submission -> verdict.json, and where the time goes
   (from the ranks' timelines: launcher and interpreter start, torch import + store join, links,
   collectives + ring + bandwidth). Goal: under 10 s.
2. Time to a verdict when one node cannot reach the master port (its traffic to the port is dropped
   with nftables inside its namespace), for a few --timeout values. Goal: within --timeout.

Needs root and nft. Prints figures, asserts nothing.

    python bench/bench_check.py [--nodes N] [--repeat R]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from tests.cluster import testcluster

SBATCH = REPO / "slurm" / "triage-check.sbatch"


def check(cluster: testcluster.Cluster, name: str, port: int, timeout: float) -> tuple[float, dict[str, Any], Path]:
    check_dir = cluster.shared / name
    env = cluster.env
    env.update(TRIAGE_BIN=f"{testcluster.PYTHON} -m triage", TRIAGE_PYTHON=testcluster.PYTHON,
               TRIAGE_NPROC_PER_NODE="2", TRIAGE_CHECK_DIR=str(check_dir), TRIAGE_RDZV_PORT=str(port))
    began = time.monotonic()
    job = subprocess.run(["sbatch", "--parsable", f"-N{len(cluster.nodes)}", "-o", str(cluster.tmp / f"{name}.out"),
                          str(SBATCH), "--timeout", str(timeout)], capture_output=True, text=True, env=env,
                         cwd=str(cluster.tmp), check=True, timeout=30).stdout.strip().split(";")[0]
    try:
        while not (check_dir / "verdict.json").exists():
            if time.monotonic() - began > timeout + 120:
                raise RuntimeError(f"no verdict from job {job}")
            time.sleep(0.05)
        took = time.monotonic() - began
        while cluster.job_state(job) in ("RUNNING", "PENDING", "COMPLETING", "CONFIGURING"):
            time.sleep(0.2)
    finally:
        cluster.slurm("scancel", job, check=False)
    return took, json.loads((check_dir / "verdict.json").read_text()), check_dir


def phases(check_dir: Path) -> dict[str, float]:
    """Seconds from the first node's check start to each phase, the slowest rank counted."""
    nodes = [json.loads(p.read_text()) for p in (check_dir / "nodes").glob("*.json")]
    ranks = [json.loads(p.read_text()) for p in (check_dir / "ranks").glob("rank-*.json")]
    zero = min(n["started"] for n in nodes)
    out = {"ranks started (launcher + python)": max(r["started"] for r in ranks) - zero}
    for step, label in (("links", "store joined (torch import + store)"), ("gloo init", "links probed"),
                        ("done", "collectives, ring, bandwidth done")):
        stamps = [r.get("timeline", {}).get(step) for r in ranks]
        if all(stamps):
            out[label] = max(stamps) - zero   # type: ignore[type-var, operator]
    out["verdict written"] = (check_dir / "verdict.json").stat().st_mtime - zero
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    cluster = testcluster.start_cluster(args.nodes)
    try:
        walls = []
        for index in range(args.repeat):
            took, verdict, check_dir = check(cluster, f"healthy{index}", 29620 + index, 120)
            walls.append(took)
            print(f"healthy check {index + 1}: {took:.1f} s  ({verdict['headline']})")
            for label, seconds in phases(check_dir).items():
                print(f"    {label:<40} +{seconds:5.1f} s")
        print(f"healthy check on {args.nodes} nodes x 2 ranks: median {statistics.median(walls):.1f} s "
              f"(min {min(walls):.1f}, max {max(walls):.1f}); goal < 10 s")
        victim = cluster.nodes[-1]
        master = cluster.nodes[0].address
        for index, timeout in enumerate((30, 60, 120)):
            port = 29640 + index
            rule = (f"table inet triagebench {{\n chain out {{\n type filter hook output priority 0;\n"
                    f" ip daddr {master} tcp dport {port} drop\n }}\n}}\n")
            netns = f"--net=/run/netns/{victim.netns}"
            subprocess.run(["nsenter", netns, "nft", "-f", "-"], input=rule, text=True, check=True)
            try:
                took, verdict, _ = check(cluster, f"blocked{index}", port, timeout)
            finally:
                subprocess.run(["nsenter", netns, "nft", "delete", "table", "inet", "triagebench"], check=False)
            print(f"{victim.name} unreachable, --timeout {timeout}: verdict after {took:.1f} s "
                  f"({'within' if took <= timeout else 'PAST'} the timeout): {verdict['headline']}")
    finally:
        testcluster.stop_cluster(cluster)
    return 0


if __name__ == "__main__":
    sys.exit(main())
