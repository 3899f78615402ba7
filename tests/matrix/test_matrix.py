"""The real-process scenarios of the torch-version matrix (docs/compatibility.md).

Each test runs one real torchrun gloo job under `triage launch` on the torch of this interpreter
and checks the verdict. Where this torch has no Flight Recorder for gloo (torch 2.4), the same
culprit must be named from heartbeats and stacks, and a job that finishes must not be called
"all match". scripts/torch_matrix.sh runs this module in one virtual environment per version
(``-m matrix``, RUN_TORCH_MATRIX=1) and writes the table; the test names are its rows.
"""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.launch import TIMEOUT_S, Finished, job_env, launch_argv, run_launch, torchrun
from tests.helpers.paths import example, program
from tests.helpers.processes import triage_cmd
from triage.bundle import CollectorStatus, read_manifest
from triage.exitcodes import ExitCode

pytestmark = [pytest.mark.matrix, pytest.mark.slow, pytest.mark.timeout(300)]


PROBE = """
import json, os, tempfile
import torch, torch.distributed as dist
c10d = torch._C._distributed_c10d
if not hasattr(c10d, "_dump_fr_trace_json"):
    print("FR: no"); raise SystemExit
dist.init_process_group("gloo", store=dist.FileStore(os.path.join(tempfile.mkdtemp(), "s"), 1), rank=0, world_size=1)
dist.all_reduce(torch.ones(2))
print("FR: " + ("yes" if json.loads(c10d._dump_fr_trace_json(True, False)).get("entries") else "no"), flush=True)
dist.destroy_process_group()
"""


@functools.cache
def _recorded() -> bool:
    """Whether this torch's Flight Recorder records gloo collectives (one all_reduce, one rank). The probe's
    answer is read from its output: a probe that gives none fails the test (never taken as "no")."""
    probe = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, check=False)
    answers = [line for line in probe.stdout.splitlines() if line in ("FR: yes", "FR: no")]
    assert answers, f"the Flight Recorder probe gave no answer (exit {probe.returncode}): {probe.stderr[-2000:]}"
    return answers[-1] == "FR: yes"


def _hang_lines(done: Finished) -> list[str]:
    """Every hang line (a start-up slowed by a loaded machine may be suspected first, and found busy)."""
    return [line for line in done.stderr.splitlines() if line.startswith("triage: hang suspected: ")]


def _launch(tmp_path: Path, job: list[str], *options: str, **env: str) -> Finished:
    run_dir = tmp_path / "run"
    return run_launch(launch_argv(run_dir, job, *options), job_env(**env), run_dir)


def report_verdict(run_dir: Path) -> str:
    """The verdict of `triage report RUN_DIR` (a launch that ended well prints none)."""
    done = subprocess.run(triage_cmd("report", str(run_dir), "--format", "json"), capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode in (0, 1), done.stderr
    return str(json.loads(done.stdout)["verdict"]["summary"])


def _verdict(done: Finished) -> str:
    return done.line("triage: verdict: ").removeprefix("triage: verdict: ")


def test_mismatch(tmp_path: Path) -> None:
    done = _launch(tmp_path, torchrun(example("mismatch_hang.py")))
    assert done.returncode == int(ExitCode.HANG_DETECTED), done.explain()
    assert (f"triage: hang suspected: rank 0 waiting in all_reduce seq 4 (pg 0) for {int(TIMEOUT_S)} s; "
            "rank 1 waiting in all_gather seq 4 (pg 0)") in _hang_lines(done), done.explain()
    verdict = _verdict(done)
    assert "all_gather" in verdict and "all_reduce" in verdict and "rank 1" in verdict, verdict


def test_stall(tmp_path: Path) -> None:
    done = _launch(tmp_path, torchrun(example("stuck_in_python.py")), "--stop-timeout", "8")
    assert done.returncode == int(ExitCode.HANG_DETECTED), done.explain()
    assert (f"triage: hang suspected: rank 0 waiting in all_reduce seq 3 (pg 0) for {int(TIMEOUT_S)} s; "
            "rank 1 has not entered it (last seq 2)") in _hang_lines(done), done.explain()
    assert done.line("triage: rank 1 busy in busy_wait_for_data")
    verdict = _verdict(done)
    assert "rank 1" in verdict and "busy_wait_for_data" in verdict, verdict
    if not _recorded():
        report = " ".join(done.stdout.split())
        assert "collectives not recorded: " in report and "all match" not in report, report
        # why is a note in the heartbeat, never an exception in the rank: torch 2.4-2.6 lack the dump API
        # (the bundle's fr collector is skipped with that reason), torch 2.8 has it and records nothing for gloo
        beat = json.loads(next((tmp_path / "run").glob("*/ranks/0/heartbeat.json")).read_text())
        assert re.fullmatch(r"unavailable: torch [\d.]+( has no Flight Recorder for gloo \(no _dump_fr_trace_json\)"
                            r"|'s Flight Recorder recorded no gloo collective)", beat["fr_state"]), beat
        hung = [read_manifest(m.parent) for m in sorted((tmp_path / "run").glob("*/bundles/*/manifest.json"))]
        hung = [m for m in hung if m.reason.startswith("rank 0 waiting in all_reduce seq 3")]  # not a slow start-up's
        assert hung, done.explain()
        fr = next(c for c in hung[0].collectors if c.name == "fr" and c.rank == 0)
        if "no _dump_fr_trace_json" in beat["fr_state"]:
            assert fr.status is CollectorStatus.SKIPPED and (fr.error or "").startswith("no Flight Recorder: "), fr
        else:
            assert fr.status is CollectorStatus.OK, fr
        assert "Traceback" not in done.stdout + done.stderr, done.explain()


def test_exception(tmp_path: Path) -> None:
    done = _launch(tmp_path, torchrun(program("matrix_job.py"), 2, "exception"))
    assert done.returncode != 0, done.explain()
    verdict = _verdict(done)
    assert verdict.startswith("EXCEPTION: rank 1") and "ValueError" in verdict, verdict


def test_segfault(tmp_path: Path) -> None:
    done = _launch(tmp_path, torchrun(example("segfault_rank.py")))
    assert done.returncode != 0, done.explain()
    verdict = _verdict(done)
    assert verdict.startswith("CRASH: rank 1") and "SIGSEGV" in verdict, verdict


def test_dtype(tmp_path: Path) -> None:
    # a job that finishes: a long hang timeout (a start-up slowed by a loaded machine is no hang)
    done = _launch(tmp_path, torchrun(program("matrix_job.py"), 2, "dtype"), "--hang-timeout", "30")
    assert done.returncode == 0, done.explain()
    verdict = report_verdict(tmp_path / "run")
    assert "all match" not in verdict, verdict
    if _recorded():
        assert re.search(r"rank 1 \(\S+\) called all_reduce\(count=8, int32\)", verdict), verdict
    else:
        assert "collectives not recorded: " in verdict, verdict
        assert "dtype and count mismatches cannot be ruled out" in verdict, verdict


def test_subgroup(tmp_path: Path) -> None:
    done = _launch(tmp_path, torchrun(program("matrix_job.py"), 3, "subgroup"))
    assert done.returncode == int(ExitCode.HANG_DETECTED), done.explain()
    verdict = _verdict(done)
    assert "rank 1" in verdict and "broadcast" in verdict, verdict


def test_init_hang(tmp_path: Path) -> None:
    done = _launch(tmp_path, torchrun(program("agent_init_hang.py"), 3))
    assert done.returncode == int(ExitCode.HANG_DETECTED), done.explain()
    line = done.line("triage: hang suspected: init hang: ")
    assert "rank 0 has not reached it" in line and "load_before_init" in line, line
    assert "NO PROBLEM FOUND" not in _verdict(done)


def test_dataloader_worker(tmp_path: Path) -> None:
    done = _launch(tmp_path, torchrun(program("agent_dataloader_worker.py")))
    assert done.returncode == int(ExitCode.HANG_DETECTED), done.explain()
    verdict = _verdict(done)
    assert "rank 1 waits on its DataLoader worker 1" in verdict and "read_from_store" in verdict, verdict


def test_long_checkpoint(tmp_path: Path) -> None:
    done = _launch(tmp_path, torchrun(program("agent_busy_checkpoint.py"), 3), "--hang-timeout", "5",
                   AGENT_BUSY_SECONDS="15")
    assert done.returncode == 0, done.explain()
    assert "stopping the job (SIGTERM" not in done.stderr
    assert done.line("triage: rank 0 busy in save_checkpoint")
