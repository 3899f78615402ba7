"""Real GPU scenarios under `triage launch` (marker gpu; skipped without a CUDA GPU).

One GPU: gloo carries the collectives between ranks and CUDA does the work (multi-rank GPU hangs);
NCCL runs one rank, or two ranks on one GPU where that is the fault. Each test checks that the
right rank is named, and that the node bundle holds the GPU facts (node/gpus.json from NVML or
nvidia-smi). Results go to docs/compatibility.md with the date, GPU, driver, torch and NCCL.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.launch import Finished, job_env, launch_argv, run_launch, torchrun
from tests.helpers.paths import program
from tests.helpers.processes import triage_cmd
from triage.exitcodes import ExitCode

pytestmark = [pytest.mark.gpu, pytest.mark.timeout(300)]


def _launch(tmp_path: Path, scenario: str, nproc: int = 2, *options: str, args: tuple[str, ...] = ()) -> Finished:
    run_dir = tmp_path / "run"
    job = torchrun(program("gpu_job.py"), nproc, scenario, *args)
    return run_launch(launch_argv(run_dir, job, "--hang-timeout", "10", *options), job_env(), run_dir)


def _verdict(done: Finished) -> str:
    return done.line("triage: verdict: ").removeprefix("triage: verdict: ")


def _report(path: Path) -> subprocess.CompletedProcess[str]:
    """`triage report PATH` as a user runs it (printed, so a GPU run's log keeps both reports)."""
    done = subprocess.run(triage_cmd("report", str(path)), capture_output=True, text=True, timeout=120, check=False)
    print(f"--- triage report {path} (exit {done.returncode})\n{done.stdout}{done.stderr}")
    return done


def _headline(stdout: str) -> str:
    """The verdict box's text (its lines joined), or the first line where there is no box."""
    lines = stdout.splitlines()
    if not lines or not lines[0].startswith("╭"):
        return lines[0] if lines else ""
    inside = []
    for line in lines[1:]:
        if line.startswith("╰"):
            break
        inside.append(line.strip("│ "))
    return " ".join(inside)


def _same_crash_from_run_dir_and_rank_log(done: Finished, rank: int, pattern: str) -> None:
    """The run directory's report is as good as the rank's own output.log: the same crash named
    (``pattern``) for the same rank, with the same advice (issue 23: a run directory once gave a
    worse CUDA verdict than the log)."""
    from_dir = _report(done.run_dir)
    from_log = _report(next(done.run_dir.glob(f"*/ranks/{rank}/output.log")))
    for name, report in (("run dir", from_dir), ("output.log", from_log)):
        first = _headline(report.stdout)
        assert f"rank {rank}" in first and re.search(pattern, first, re.IGNORECASE), (name, report.stdout)
    if "CUDA_LAUNCH_BLOCKING" in from_log.stdout:
        assert "CUDA_LAUNCH_BLOCKING" in from_dir.stdout, from_dir.stdout


def _gpus(done: Finished) -> dict[str, Any]:
    path = next(done.run_dir.glob("*/bundles/*/node/gpus.json"))
    data: dict[str, Any] = json.loads(path.read_text())
    assert data["source"] in ("nvml", "nvidia-smi"), data
    return data


def test_kernel_hang_names_the_rank_on_the_spinning_gpu(tmp_path: Path) -> None:
    done = _launch(tmp_path, "kernel_hang", 2, "--stop-timeout", "30")
    assert done.returncode == int(ExitCode.HANG_DETECTED), done.explain()
    assert "rank 1" in _verdict(done), done.explain()
    gpus = _gpus(done)
    print("gpus.json:", json.dumps(gpus, indent=1))
    busy = [g for g in gpus["gpus"] if isinstance(g, dict) and (g.get("util_gpu") or 0) >= 99]
    assert busy, gpus
    ranks = {p.get("rank") for g in gpus["gpus"] for p in g.get("processes") or ()}
    assert 1 in ranks, gpus                # NVML's process list, its pids mapped to ranks


def test_device_side_assert_is_the_crash_of_its_rank(tmp_path: Path) -> None:
    done = _launch(tmp_path, "device_assert")
    assert done.returncode != 0, done.explain()
    verdict = _verdict(done)
    assert "rank 1" in verdict and re.search(r"device-side assert|CUDA error", verdict), verdict
    _same_crash_from_run_dir_and_rank_log(done, 1, r"device-side assert|CUDA error")


def test_cuda_oom_names_the_rank(tmp_path: Path) -> None:
    done = _launch(tmp_path, "oom")
    assert done.returncode != 0, done.explain()
    verdict = _verdict(done)
    assert "rank 1" in verdict and "OutOfMemoryError" in verdict, verdict


def test_two_ranks_on_one_gpu_is_duplicate_gpu(tmp_path: Path) -> None:
    done = _launch(tmp_path, "duplicate_gpu")
    assert done.returncode != 0, done.explain()
    assert "Duplicate GPU" in done.stdout + done.stderr + _verdict(done), done.explain()


def test_nccl_watchdog_abort_is_reported(tmp_path: Path) -> None:
    done = _launch(tmp_path, "watchdog", 1)
    assert done.returncode != 0, done.explain()
    verdict = _verdict(done)
    # triage's --hang-timeout and NCCL's 5 s timeout race: the verdict names the rank and the collective
    # the watchdog timed out (with the watchdog when its line came first)
    assert "rank 0" in verdict and re.search(r"all_reduce.*seq 2|SeqNum=2", verdict, re.IGNORECASE), verdict
    assert "look outside the job" not in verdict, verdict     # a one-rank collective waits for no peer


def _nccl_loop(tmp_path: Path, *options: str, **env: str) -> Finished:
    run_dir = tmp_path / "run"
    job = torchrun(program("gpu_job.py"), 1, "nccl_loop", "50")
    done = run_launch(launch_argv(run_dir, job, *options), job_env(**env), run_dir)
    assert done.returncode == 0, done.explain()
    return done


def test_real_nccl_info_lines_are_tagged_and_read(tmp_path: Path) -> None:
    """NCCL_DEBUG=INFO set by the user: NCCL's own INIT and COLL lines reach merged.log, each tagged
    with its host and rank, and `triage report` reads the merged log as a healthy run."""
    done = _nccl_loop(tmp_path, NCCL_DEBUG="INFO", NCCL_DEBUG_SUBSYS="INIT,COLL")
    merged = next(done.run_dir.glob("*/merged.log")).read_text(errors="replace").splitlines()
    nccl = [line for line in merged if "NCCL INFO" in line]
    print("\n".join(nccl[:40]))
    assert any("Init COMPLETE" in line or "Init START" in line for line in nccl), nccl[:40]
    assert any(re.search(r"AllReduce: opCount", line) for line in nccl), nccl[:40]
    untagged = [line for line in nccl if not re.match(r"\[[^\]:]+:0\][ +]", line)]
    assert not untagged, untagged[:5]
    report = _report(done.run_dir / next(p.name for p in done.run_dir.iterdir() if (p / "merged.log").exists())
                     / "merged.log")
    assert report.returncode == 0 and not re.match(r"(HANG|CRASH|MISMATCH)", report.stdout), report.stdout


def test_nccl_debug_option_writes_the_ranks_nccl_log(tmp_path: Path) -> None:
    """--nccl-debug: NCCL's INFO lines go to ranks/<r>/nccl.log (not the console), the agent reads
    them, and the report of the healthy run says so."""
    done = _nccl_loop(tmp_path, "--nccl-debug")
    log = next(done.run_dir.glob("*/ranks/0/nccl.log")).read_text(errors="replace")
    print(log[:4000])
    assert "NCCL INFO" in log and re.search(r"AllReduce: opCount", log), log[:2000]
    report = _report(done.run_dir)
    assert report.returncode == 0, report.stdout


def test_nccl_single_rank_loop_overhead(tmp_path: Path) -> None:
    """Prints the wall time of 2,000 one-rank NCCL all_reduces with and without triage (a figure, not asserted)."""
    import subprocess

    job = torchrun(program("gpu_job.py"), 1, "nccl_loop", "2000")
    started = time.perf_counter()
    plain = subprocess.run(job, env=job_env(), capture_output=True, text=True, timeout=240, check=False)
    plain_s = time.perf_counter() - started
    assert plain.returncode == 0, plain.stdout + plain.stderr
    started = time.perf_counter()
    done = run_launch(launch_argv(tmp_path / "run", job), job_env(), tmp_path / "run")
    triage_s = time.perf_counter() - started
    assert done.returncode == 0, done.explain()
    print(f"nccl_loop: plain {plain_s:.2f} s, under triage {triage_s:.2f} s, ratio {triage_s / plain_s:.3f}")
