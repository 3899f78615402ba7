"""The agent's live straggler line on real 4-rank torchrun gloo jobs under `triage launch`: a rank
that sleeps 40 ms more before each collective is named while the job runs and recorded with py-spy;
an equal job, also under CPU-burning neighbours, never gets the line; a bad setting is one line.
The equal jobs run until the watch has fetched every rank's Flight Recorder in two checks (waited
on, with a generous deadline: a loaded machine slows the checks, not the test's verdict)."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.launch import Finished, job_env, run_launch, torchrun
from tests.helpers.paths import program
from tests.helpers.processes import kill_tree, running_program, triage_cmd, wait_for

pytestmark = pytest.mark.timeout(400)
JOB = program("straggler_job.py")
# checks every 3 s (not 60): a test job runs ~20 s
WATCH = {"TRIAGE_STRAGGLER_CHECK_INTERVAL": "3", "TRIAGE_STRAGGLER_SAMPLE_SECONDS": "3"}
LINE = "arrives last at"
DEADLINE_S = 240.0                 # for the watch's fetches and the job's end, each


def fetched(run_dir: Path) -> dict[str, tuple[int, int]]:
    """Every rank's live Flight Recorder as the watch last fetched it (inode, mtime), once all 4 are."""
    found: dict[str, tuple[int, int]] = {}
    for path in run_dir.glob("*/stragglers/fr/rank-*/fr.json"):
        with contextlib.suppress(OSError):
            stat = path.stat()
            found[path.parent.name] = (stat.st_ino, stat.st_mtime_ns)
    return found if len(found) == 4 else {}


def launched_until_checked(tmp_path: Path, **env: str) -> Finished:
    """An equal job (STRAG_UNTIL) that ends once every rank's Flight Recorder was fetched by two checks."""
    run_dir, stop = tmp_path / "run", tmp_path / "stop"
    argv = [*triage_cmd("launch", "--run-dir", str(run_dir), "--console", "none", "--"), *torchrun(JOB, 4)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            env=job_env(**WATCH, STRAG_UNTIL=str(stop), **env), start_new_session=True,
                            cwd=str(tmp_path), text=True)
    try:
        first = wait_for(lambda: fetched(run_dir), DEADLINE_S, "the watch's first fetch of all 4 ranks")
        wait_for(lambda: (now := fetched(run_dir)) and all(now[r] != first[r] for r in first), DEADLINE_S,
                 "the watch's second fetch of all 4 ranks")
        stop.touch()
        out, err = proc.communicate(timeout=DEADLINE_S)
    except (AssertionError, subprocess.TimeoutExpired) as exc:
        kill_tree(proc.pid)
        _out, err = proc.communicate(timeout=10)
        raise AssertionError(f"{exc}\n{Finished(-1, '', err, run_dir).explain()}") from None
    finally:
        kill_tree(proc.pid)
        with contextlib.suppress(Exception):
            proc.communicate(timeout=10)
    done = Finished(proc.returncode, out, err, run_dir)
    assert done.returncode == 0, done.explain()
    return done


def launched(tmp_path: Path, **env: str) -> Finished:
    run_dir = tmp_path / "run"
    argv = [*triage_cmd("launch", "--run-dir", str(run_dir), "--console", "none", "--"), *torchrun(JOB, 4)]
    done = run_launch(argv, job_env(**WATCH, **env), run_dir, timeout=300)
    assert done.returncode == 0, done.explain()
    return done


def watch_dir(done: Finished) -> Path:
    (host,) = [p for p in done.run_dir.iterdir() if (p / "ranks").is_dir()]
    return host / "stragglers"


def checked(done: Finished) -> None:
    """The watch did look: every rank's live Flight Recorder was fetched at least once."""
    dumps = sorted(p.parent.name for p in (watch_dir(done) / "fr").glob("rank-*/fr.json"))
    assert dumps == ["rank-0", "rank-1", "rank-2", "rank-3"], done.explain()
    # the real worker answers `fr PATH`: the Flight Recorder alone, no stacks, no pickle
    assert not list((watch_dir(done) / "fr").glob("rank-*/stacks.txt"))
    assert not list((watch_dir(done) / "fr").glob("rank-*/fr.pickle"))
    record = json.loads((watch_dir(done) / "watch.json").read_text())
    assert record["checks"] >= 2 and record["problems"] == [] and record["cpu_s"] > 0, record


def test_a_slow_rank_is_named_while_the_job_runs_and_sampled(tmp_path: Path) -> None:
    done = launched(tmp_path, STRAG_SLOW_RANK="1", STRAG_EXTRA_MS="40", STRAG_STEPS="300")
    lines = [line for line in done.stderr.splitlines() if LINE in line]
    assert lines, done.explain()
    assert all(line.startswith("triage: rank 1 (") for line in lines), lines
    assert len(lines) == 1, lines                 # at most one line per 300 s
    assert " ms median; " in lines[0] and "% of wall time lost" in lines[0]
    samples = sorted(watch_dir(done).glob("rank-1-*.pyspy.txt"))
    assert len(samples) == 1 and not list(watch_dir(done).glob("rank-[023]-*.pyspy.txt"))
    raw = samples[0].read_text()
    # what the late rank does: it sleeps in pause() most (its all_reduce may fall between the samples when a
    # loaded machine gives py-spy few of them: CI once saw 3 samples of the main thread in 3 s, all in pause)
    assert "pause (straggler_job.py:" in raw
    # the same line ends with what the samples show: the main thread sleeps in pause() most
    tail = lines[0].split("; py-spy samples of rank 1 (3 s): ", 1)[1]
    assert tail.startswith("pause (straggler_job.py:") and tail.endswith(f" samples -> {samples[0]}"), lines
    assert "py-spy" not in done.stderr.replace(lines[0], ""), done.stderr     # no second line
    (warning,) = [json.loads(line) for line in (watch_dir(done) / "warnings.jsonl").read_text().splitlines()]
    assert warning["ranks"] == [1] and warning["median_lag_ms"] >= 25.0 and warning["samples"] == str(samples[0])
    assert warning["line"] == lines[0].removeprefix("triage: ")
    checked(done)


def test_an_equal_job_gets_no_line(tmp_path: Path) -> None:
    done = launched_until_checked(tmp_path, STRAG_STEPS="300")
    assert LINE not in done.stderr and "py-spy samples" not in done.stderr, done.stderr
    assert not (watch_dir(done) / "warnings.jsonl").exists() and not list(watch_dir(done).glob("*.pyspy.txt"))
    checked(done)


def test_an_equal_job_under_cpu_burning_neighbours_gets_no_line(tmp_path: Path) -> None:
    burn = [sys.executable, "-c", "print('READY', flush=True)\nwhile True: pass"]
    with running_program(burn), running_program(burn):
        done = launched_until_checked(tmp_path, STRAG_STEPS="300")
    assert LINE not in done.stderr and "py-spy samples" not in done.stderr, done.stderr
    assert not (watch_dir(done) / "warnings.jsonl").exists()
    checked(done)


def test_the_watch_can_be_turned_off(tmp_path: Path) -> None:
    done = launched(tmp_path, STRAG_SLOW_RANK="1", STRAG_EXTRA_MS="40", STRAG_STEPS="200",
                    TRIAGE_STRAGGLER_WATCH="false")
    assert LINE not in done.stderr and not watch_dir(done).exists(), done.stderr


@pytest.mark.parametrize("value", ["abc", "-3"])
def test_a_bad_setting_is_one_line_and_nothing_starts(tmp_path: Path, value: str) -> None:
    env = job_env(TRIAGE_STRAGGLER_CHECK_INTERVAL=value)
    result = subprocess.run([*triage_cmd("launch", "--run-dir", str(tmp_path / "run"), "--"), sys.executable,
                             "-c", f"open({str(tmp_path / 'started')!r}, 'w')"],
                            capture_output=True, text=True, env=env, timeout=120, check=False)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert "TRIAGE_STRAGGLER_CHECK_INTERVAL" in result.stderr.splitlines()[0]
    assert not (tmp_path / "started").exists()
