"""Real torchrun gloo jobs under `triage launch`: each hang detected within hang_timeout + 2 s,
with a complete node bundle, and the job stopped with exit code 75 (--on-hang report-and-stop)."""

from __future__ import annotations

import json
import stat
import subprocess

import pytest

from tests.helpers.bundle import check_complete, detection_latency, pyspy_functions, status
from tests.helpers.launch import TIMEOUT_S, job_env, launch_argv, run_launch, torchrun
from tests.helpers.paths import example, program
from tests.helpers.processes import triage_cmd
from tests.helpers.report import report_run_json
from triage.bundle import CollectorStatus, Trigger, read_manifest
from triage.exitcodes import ExitCode
from triage.schemas import STOP_LOG_RECORD

pytestmark = pytest.mark.timeout(180)


def _hang_case(tmp_path, script, expected_line: str, *options: str, bundles: int = 1):  # type: ignore[no-untyped-def]
    run_dir = tmp_path / "run"
    done = run_launch(launch_argv(run_dir, torchrun(script), *options), job_env(), run_dir)
    assert done.returncode == int(ExitCode.HANG_DETECTED), done.explain()
    assert done.line("triage: hang suspected: ") == "triage: hang suspected: " + expected_line
    bundle = done.bundle()
    assert bundle.parent == run_dir / bundle.parent.parent.name / "bundles"
    manifest = check_complete(bundle, [0, 1])
    assert manifest.trigger == Trigger.HANG
    for rank in (0, 1):
        assert status(manifest, "pyspy", rank) == CollectorStatus.OK
        assert status(manifest, "fr", rank) == CollectorStatus.OK
        assert (bundle / f"rank-{rank}" / "fr.json").is_file()
    for path in [bundle, *bundle.rglob("*")]:
        assert stat.S_IMODE(path.stat().st_mode) == (0o700 if path.is_dir() else 0o600), path
    latency = detection_latency(bundle, [0, 1])
    assert latency <= 2.0, f"detected {latency:.2f} s after hang_timeout"
    # the ranks triage itself stopped afterwards are not taken for a crash of their own
    assert sorted(p.name.split("-")[-1] for p in bundle.parent.iterdir()) == ["hang"] * bundles
    assert done.line("triage: verdict: ").startswith("triage: verdict: ")
    return done, bundle


def test_different_collective(tmp_path) -> None:  # type: ignore[no-untyped-def]
    _done, bundle = _hang_case(
        tmp_path, example("mismatch_hang.py"),
        f"rank 0 waiting in all_reduce seq 4 (pg 0) for {int(TIMEOUT_S)} s; rank 1 waiting in all_gather seq 4 (pg 0)")
    assert "all_gather" in pyspy_functions(bundle, 1)
    assert "all_reduce" in pyspy_functions(bundle, 0)


def test_skipped_collective(tmp_path) -> None:  # type: ignore[no-untyped-def]
    _done, bundle = _hang_case(
        tmp_path, example("skip_collective.py"),
        f"rank 0 waiting in all_reduce seq 5 (pg 0) for {int(TIMEOUT_S)} s; rank 1 waiting in barrier seq 5 (pg 0)")
    assert "barrier" in pyspy_functions(bundle, 1)


def test_stuck_in_python_spinning(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # a spinning rank is busy (CPU): evidence at --hang-timeout, stopped at --stop-timeout
    done, bundle = _hang_case(
        tmp_path, example("stuck_in_python.py"),
        f"rank 0 waiting in all_reduce seq 3 (pg 0) for {int(TIMEOUT_S)} s; rank 1 has not entered it (last seq 2)",
        "--stop-timeout", "8", bundles=2)
    assert "busy_wait_for_data" in pyspy_functions(bundle, 1)
    assert done.line("triage: rank 1 busy in busy_wait_for_data")


def test_stuck_in_python_sleeping(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # a sleeping rank is blocked: stopped at once
    done, bundle = _hang_case(
        tmp_path, program("collect_sleep_rank.py"),
        f"rank 0 waiting in all_reduce seq 3 (pg 0) for {int(TIMEOUT_S)} s; rank 1 has not entered it (last seq 2)")
    assert done.line("triage: the hang is certain: rank 1 blocked in sleep_in_python")
    assert "sleep_in_python" in pyspy_functions(bundle, 1)
    assert "sleep_in_python" in (bundle / "rank-1" / "stacks.txt").read_text()
    # the merged.log, pasted alone, tells that triage stopped the job, with the verdict it stopped for
    # (the launcher's SIGTERM after it is not "stopped from outside")
    merged = next(done.run_dir.glob("*/merged.log"))
    assert STOP_LOG_RECORD in merged.read_text()
    pasted = subprocess.run(triage_cmd("report", "--format", "json", str(merged)), capture_output=True, text=True,
                            timeout=120, check=False)
    stop = json.loads(next(done.run_dir.glob("*/stop.json")).read_text())["verdict"]
    verdict = json.loads(pasted.stdout)["verdict"]
    assert (verdict["kind"], verdict["culprit_ranks"]) == (stop["kind"], stop["culprit_ranks"]) == (
        "stuck_outside_collective", [1]), pasted.stdout


def test_rank_exits_early(tmp_path) -> None:  # type: ignore[no-untyped-def]
    run_dir = tmp_path / "run"
    done = run_launch(launch_argv(run_dir, torchrun(example("early_exit.py"))), job_env(), run_dir)
    assert done.returncode != 0
    line = done.line("triage: rank 1 exited (exit code 3)")
    bundle = done.bundle()
    manifest = check_complete(bundle, [0, 1])
    assert manifest.trigger == Trigger.CRASH
    assert manifest.reason == line.removeprefix("triage: ")
    # rank 0 fails right after rank 1 (gloo sees the closed connection): its FR and stacks were
    # saved by its in-worker agent on exit and are in the bundle
    assert status(manifest, "fr", 0) in (CollectorStatus.OK, CollectorStatus.PARTIAL)
    assert (bundle / "rank-0" / "fr.json").is_file()
    assert len(list((run_dir).glob("*/bundles/*"))) == 1


def test_report_and_wait_leaves_the_job_running(tmp_path) -> None:  # type: ignore[no-untyped-def]
    run_dir = tmp_path / "run"
    env = job_env(COLLECT_SLEEP_SECONDS="12")
    done = run_launch(launch_argv(run_dir, torchrun(program("collect_sleep_rank.py")),
                                  "--on-hang", "report-and-wait"), env, run_dir)
    # the job was not stopped: rank 1 woke up after 12 s, the all_reduce completed, exit 0
    assert done.returncode == 0, done.explain()
    assert done.stderr.count("triage: hang suspected:") == 1
    assert "triage: job left running (--on-hang report-and-wait)" in done.stderr
    assert "rank 1" in done.stdout          # the report was printed (console none: only the report)
    bundles = sorted(run_dir.glob("*/bundles/*"))
    assert len(bundles) == 1 and read_manifest(bundles[0]).trigger == Trigger.HANG


def test_a_teardown_abort_after_the_hang_ended_is_said_after_it(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # report-and-wait: the hang ends by itself, the ranks finish their work, then rank 1 dies of SIGABRT in
    # its teardown (after its exit record, as a gloo rank without destroy_process_group can, with or without
    # triage): the hang the agent saw stays the story, the crash after it is said, never made the cause
    run_dir = tmp_path / "run"
    env = job_env(COLLECT_SLEEP_SECONDS="12", COLLECT_TEARDOWN_ABORT="1")
    done = run_launch(launch_argv(run_dir, torchrun(program("collect_sleep_rank.py")),
                                  "--on-hang", "report-and-wait"), env, run_dir)
    assert done.returncode != 0, done.explain()
    assert "triage: job left running (--on-hang report-and-wait)" in done.stderr
    verdict = done.line("triage: verdict: ").removeprefix("triage: verdict: ")
    assert verdict.startswith("HANG: rank 1 ") and "in sleep_in_python" in verdict, verdict
    assert verdict.index("sleep_in_python") < verdict.index("; then rank 1 (") < verdict.index(
        "was killed by SIGABRT: at exit, after its work had finished"), verdict
    data = report_run_json(run_dir)
    assert data["verdict"]["summary"] == verdict, data["verdict"]        # type: ignore[index]
    assert (data["verdict"]["kind"], data["verdict"]["culprit_ranks"]) == (  # type: ignore[index]
        "stuck_outside_collective", [1])
    crash = [f for f in data["findings"] if f["kind"] == "crash"]        # type: ignore[union-attr]
    assert len(crash) == 1 and not crash[0]["root_cause"] and crash[0]["ranks"] == [1], data["findings"]
    assert any("destroy_process_group" in step for step in data["next_steps"])  # type: ignore[union-attr]


def test_crash_collects_from_the_live_survivor(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import sys

    run_dir = tmp_path / "run"
    job = [sys.executable, str(program("collect_two_ranks.py")), sys.executable, str(program("collect_crash_pair.py"))]
    done = run_launch(launch_argv(run_dir, job), job_env(), run_dir)
    assert done.returncode != 0
    line = done.line("triage: rank 1 exited")
    assert line == "triage: rank 1 exited (killed by SIGSEGV); collecting from rank 0", done.explain()
    bundle = done.bundle()
    manifest = check_complete(bundle, [0, 1])
    assert manifest.trigger == Trigger.CRASH
    assert status(manifest, "pyspy", 0) == CollectorStatus.OK
    assert "survivor_wait" in pyspy_functions(bundle, 0)
    assert status(manifest, "pyspy", 1) == CollectorStatus.SKIPPED
