"""How far apart the nodes of a job stop when triage stops it for a hang (the stop skew).

Starts the namespaced test cluster (2 nodes, each its own netns with slurmd; needs root), then
runs the 4-rank mismatch example under the sbatch wrapper RUNS times (default 3). Each node's agent
records in node.json when it sent SIGTERM to its launcher (``stop_requested``); the skew of one job
is the largest minus the smallest of those. Also printed: how long after the decision (stop.json's
``time``) the nodes stopped. Asserts nothing.

    python bench/bench_stop_skew.py [RUNS]
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from tests.cluster import clusterjobs, testcluster


def one_job(cluster: testcluster.Cluster, index: int) -> tuple[float, float]:
    run_dir = cluster.shared / f"skew-{index}"
    env = cluster.env
    env.update(TRIAGE_BIN=clusterjobs.REMOTE_TRIAGE, TRIAGE_PYTHON=clusterjobs.PYTHON, TRIAGE_NPROC_PER_NODE="2",
               TRIAGE_RUN_DIR=str(run_dir), TRIAGE_HANG_TIMEOUT="5", TRIAGE_STRACE_SECONDS="0.5",
               EXAMPLE_HANG_SECONDS="300")
    out = cluster.tmp / f"skew-{index}.out"
    job = clusterjobs.submit(cluster, ["-N2", "-o", str(out), str(clusterjobs.SBATCH_WRAPPER),
                                       str(clusterjobs.MISMATCH)], env)
    try:
        deadline = time.monotonic() + 180
        while cluster.job_state(job) in ("PENDING", "RUNNING", "COMPLETING") and time.monotonic() < deadline:
            time.sleep(0.5)
    finally:
        clusterjobs.cancel(cluster, job)
    stops = [json.loads(p.read_text()).get("stop_requested") for p in sorted(run_dir.glob("*/node.json"))]
    decision = [json.loads(p.read_text())["time"] for p in run_dir.glob("*/stop.json")]
    if len(stops) != 2 or None in stops or not decision:
        raise RuntimeError(f"job {job}: no stop recorded on both nodes ({stops}); see {out}")
    return max(stops) - min(stops), min(stops) - decision[0]


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    reason = testcluster.unavailable_reason()
    if reason:
        print(f"bench_stop_skew: {reason}")
        return 2
    cluster = testcluster.start_cluster(2)
    try:
        cluster.wait_nodes_idle()
        results = [one_job(cluster, i) for i in range(runs)]
    finally:
        testcluster.stop_cluster(cluster)
    skews = [s * 1000 for s, _ in results]
    leads = [lead * 1000 for _, lead in results]
    print(f"stop skew between the 2 nodes over {runs} jobs: median {statistics.median(skews):.1f} ms, "
          f"max {max(skews):.1f} ms (each: {', '.join(f'{s:.1f}' for s in skews)})")
    print(f"first SIGTERM after the decision: median {statistics.median(leads):.0f} ms (the planned lead is 1000 ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
