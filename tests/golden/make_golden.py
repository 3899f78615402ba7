"""Regenerate the golden run directories in tests/golden/ from real torchrun gloo jobs.

Usage: python tests/golden/make_golden.py [--expected-only] [--out DIR] [SCENARIO...]
Each scenario runs tests/programs/report_golden_worker.py on 4 ranks, writes the run dir
tests/golden/<scenario>/run/ and the expected report tests/golden/<scenario>/expected.json.
Review expected.json by hand after regenerating: it is what the tests hold the analysis to.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
WORKER = REPO / "tests" / "programs" / "report_golden_worker.py"
SCENARIOS = ("op_mismatch", "size_mismatch", "dtype_mismatch", "skipped", "missing_rank", "stuck_outside",
             "subgroup_mismatch", "clean", "silent_dtype", "crash")


def expected(name: str, base: Path = HERE) -> None:
    """Re-write expected.json from the committed run dir (after reviewing an analysis change)."""
    out = base / name
    subprocess.run([sys.executable, "-m", "triage", "report", "run", "--format", "json", "-o",
                    "expected.json"], check=False, cwd=out)


def make(name: str, port: int, base: Path = HERE) -> None:
    out = base / name
    run = out / "run"
    shutil.rmtree(out, ignore_errors=True)
    run.mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({"layout": "triage.run/1", "job_id": name}) + "\n")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "4", "--master-port", str(port),
         str(WORKER), name, str(run)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120, check=False,
    )
    (out / "job.log").write_bytes(proc.stdout[-20000:])
    expected(name, base)
    print(f"{name}: torchrun exit {proc.returncode}")


def main() -> None:
    args = sys.argv[1:]
    only_expected = "--expected-only" in args
    base = HERE
    if "--out" in args:  # try the jobs without touching the committed goldens
        at = args.index("--out")
        base = Path(args[at + 1]).resolve()
        del args[at:at + 2]
    names = [a for a in args if not a.startswith("--")] or list(SCENARIOS)
    for index, name in enumerate(names):
        if only_expected:
            expected(name, base)
        else:
            make(name, 29650 + index, base)


if __name__ == "__main__":
    main()
