"""Detection latency minus the hang timeout (prints figures, asserts nothing).

Runs real 2-rank gloo jobs that hang under `triage launch --hang-timeout 3` and measures, from
the bundle, the time between "the first rank has waited hang_timeout in its collective" (FR
entry time + timeout) and the start of the bundle. The spec bound is 2 s.
Run: ``python bench/bench_collect_detect.py``.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.helpers.bundle import detection_latency
from tests.helpers.launch import TIMEOUT_S, job_env, launch_argv, run_launch, torchrun
from tests.helpers.paths import example, program

CASES = [("mismatch_hang", example("mismatch_hang.py")), ("skip_collective", example("skip_collective.py")),
         ("stuck_in_python", example("stuck_in_python.py")), ("sleep_rank", program("collect_sleep_rank.py"))]


def main() -> None:
    latencies: list[float] = []
    for name, script in CASES:
        with tempfile.TemporaryDirectory() as tmp:
            run_dir = Path(tmp) / "run"
            argv = launch_argv(run_dir, torchrun(script))
            argv[argv.index("--strace-seconds") + 1] = "0"
            done = run_launch(argv, job_env(), run_dir)
            latency = detection_latency(done.bundle(), [0, 1])
            latencies.append(latency)
            print(f"{name:16s} detected {latency:+.2f} s after hang_timeout ({TIMEOUT_S:.0f} s)")
    print(f"latency minus timeout: mean {statistics.mean(latencies):.2f} s, max {max(latencies):.2f} s "
          f"(bound 2 s; tick 0.5 s, heartbeat 1 s)")


if __name__ == "__main__":
    main()
