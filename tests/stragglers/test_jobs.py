"""Stragglers in real 4-rank torchrun gloo jobs under `triage launch`: one rank sleeps more before
each collective (named, only it), an equal job (nothing), an equal job under a CPU-burning
neighbour (nothing); from the finished run, a directory of FR dumps, and a live run's bundle."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.launch import Finished, background_launch, job_env, run_launch, torchrun
from tests.helpers.paths import program
from tests.helpers.processes import running_program, triage_cmd
from tests.report.test_html_chromium import CHROMIUM, _dom

pytestmark = pytest.mark.timeout(400)
JOB = program("straggler_job.py")


def launch(run_dir: Path, *, console: str = "none") -> list[str]:
    return [*triage_cmd("launch", "--run-dir", str(run_dir), "--console", console, "--"), *torchrun(JOB, 4)]


def finished_job(tmp_path: Path, **env: str) -> Finished:
    run_dir = tmp_path / "run"
    done = run_launch(launch(run_dir), job_env(**env), run_dir, timeout=300)
    assert done.returncode == 0, done.explain()
    return done


def report(*inputs: Path) -> tuple[int, dict[str, Any]]:
    result = subprocess.run(triage_cmd("report", *map(str, inputs), "--format", "json"), capture_output=True,
                            text=True, timeout=120, check=False)
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads(result.stdout)


def top(run_dir: Path) -> dict[str, Any]:
    result = subprocess.run(triage_cmd("top", str(run_dir), "--once", "--format", "json"), capture_output=True,
                            text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def stragglers(doc: dict[str, Any]) -> list[list[int]]:
    return [f["ranks"] for f in doc["findings"] if f["kind"] == "straggler"]


def dump_dir(run_dir: Path, into: Path) -> Path:
    """The ranks' exit dumps as a plain directory of FR files (PREFIX<rank>)."""
    into.mkdir()
    for path in run_dir.glob("*/ranks/*/fr-exit.json"):
        shutil.copy(path, into / f"nccl_trace_rank_{path.parent.name}")
    return into


def test_slow_rank_is_named_and_only_it(tmp_path: Path) -> None:
    done = finished_job(tmp_path, STRAG_SLOW_RANK="1", STRAG_EXTRA_MS="35", STRAG_STEPS="120")
    code, doc = report(done.run_dir)
    assert code == 0 and doc["verdict"]["kind"] == "no_problem_found", doc["verdict"]
    assert stragglers(doc) == [[1]], (doc["findings"], done.explain())
    figures = doc["extra"]["stragglers"][0]
    assert figures["last_share"] >= 0.8 and figures["median_lag_ms"] >= 25.0
    assert figures["others_median_lag_ms"] < 10.0 and figures["time_lost_pct"] >= 15.0
    assert figures["collectives"] == 132 and figures["clock"] == "one host"
    assert "SLOW: rank 1" in doc["verdict"]["summary"]
    assert any("rank 1" in step and "pyspy" in step for step in doc["next_steps"])
    # the same dumps as a plain directory of FR files
    _code, from_dumps = report(dump_dir(done.run_dir, tmp_path / "dumps"))
    assert stragglers(from_dumps) == [[1]]
    text = subprocess.run(triage_cmd("report", str(done.run_dir), "--width", "200"), capture_output=True,
                          text=True, timeout=120, check=False).stdout
    assert "(straggler) [rank 1] STRAGGLER: rank 1" in text
    # the same run as a Chrome/Perfetto trace: 132 collectives per rank, rank 1 marked, others wait for it
    out = tmp_path / "trace.json"
    written = subprocess.run(triage_cmd("report", str(done.run_dir), "--format", "chrome-trace", "-o", str(out)),
                             capture_output=True, text=True, timeout=120, check=False)
    assert written.returncode == 0, written.stderr
    events = json.loads(out.read_text())["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in events if e["name"] == "thread_name"}
    assert names == {0: "rank 0", 1: "rank 1 (straggler)", 2: "rank 2", 3: "rank 3"}
    waits = {rank: sorted(e["dur"] for e in events if e["ph"] == "X" and e["tid"] == rank) for rank in range(4)}
    assert all(len(w) == 132 for w in waits.values())
    assert waits[1][66] < 5_000 and all(waits[r][66] > 20_000 for r in (0, 2, 3))   # median, microseconds
    bad = subprocess.run(triage_cmd("report", str(done.run_dir), "--format", "chrome-trace", "-o",
                                    str(tmp_path / "no" / "such" / "trace.json")),
                         capture_output=True, text=True, timeout=120, check=False)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "no/such/trace.json" in bad.stderr
    # the HTML report's lag chart, rendered by Chromium (offline): rank 1 is the one red line
    page = tmp_path / "report.html"
    html = subprocess.run(triage_cmd("report", str(done.run_dir), "--format", "html", "-o", str(page)),
                          capture_output=True, text=True, timeout=120, check=False)
    assert html.returncode == 0, html.stderr
    if CHROMIUM is not None:
        svg = re.search(r'<svg id="lag-chart".*?</svg>', _dom(page, tmp_path), re.DOTALL)
        assert svg is not None and svg.group(0).count("<polyline") == 4
        assert re.findall(r'<polyline class="straggler"[^>]*><title>([^<]*)', svg.group(0))[0].startswith(
            "rank 1: straggler, median lag +")
        assert "132 collectives of pg 0" in svg.group(0) and "http" not in page.read_text()
    # triage top on the finished run: every rank exited, rank 1 marked, lag from the exit dumps
    glance = top(done.run_dir)
    assert [(r["rank"], r["state"], r["straggler"]) for r in glance["ranks"]] == [
        (0, "exited_ok", False), (1, "exited_ok", True), (2, "exited_ok", False), (3, "exited_ok", False)]
    assert glance["lag_source"] == "exit dumps" and glance["ranks"][1]["lag_ms"] >= 25.0
    assert [row["ranks"] for row in glance["rows"]] == ["1", "0,2,3"]


def test_equal_ranks_have_no_straggler(tmp_path: Path) -> None:
    done = finished_job(tmp_path, STRAG_STEPS="120")
    code, doc = report(done.run_dir)
    assert code == 0 and stragglers(doc) == [], doc["findings"]
    assert "stragglers" not in doc["extra"] and "SLOW" not in doc["verdict"]["summary"]


def test_equal_ranks_under_a_cpu_burning_neighbour_have_no_straggler(tmp_path: Path) -> None:
    burn = [sys.executable, "-c", "print('READY', flush=True)\nwhile True: pass"]
    with running_program(burn), running_program(burn):
        done = finished_job(tmp_path, STRAG_STEPS="120")
    code, doc = report(done.run_dir)
    assert code == 0 and stragglers(doc) == [], doc["findings"]


def test_live_run_and_its_bundle(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    env = job_env(STRAG_SLOW_RANK="3", STRAG_EXTRA_MS="45", STRAG_STEPS="3000")
    with background_launch(launch(run_dir, console="all"), env, run_dir) as job:
        time.sleep(5.0)   # 60+ collectives in every rank's Flight Recorder
        before = top(run_dir)          # heartbeats only: no dump yet
        assert len(before["ranks"]) == 4 and before["lag_source"] is None
        assert all(r["state"] in ("running", "in_collective") for r in before["ranks"]), before["ranks"]
        assert all(r["step"] and r["heartbeat_age_s"] < 15 for r in before["ranks"]), before["ranks"]
        dumped = subprocess.run(triage_cmd("dump", "--run-dir", str(run_dir), "--wait", "90"),
                                capture_output=True, text=True, timeout=150, check=False)
        assert dumped.returncode == 0, dumped.stderr
        assert job.poll() is None, "a dump must not stop the job"
        after = top(run_dir)
        assert [r["straggler"] for r in after["ranks"]] == [False, False, False, True], after["ranks"]
        assert after["lag_source"].startswith("bundle ") and after["ranks"][3]["lag_ms"] >= 30.0
    bundle = Path(dumped.stdout.strip().splitlines()[-1])
    _code, live = report(run_dir)
    assert stragglers(live) == [[3]], live["findings"]
    # read from the bundle the dump made while the job ran (not from an exit dump)
    finding = next(f for f in live["findings"] if f["kind"] == "straggler")
    assert finding["evidence"] == [str(bundle / "rank-3" / "fr.json")]
