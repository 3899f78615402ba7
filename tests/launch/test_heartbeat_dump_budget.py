"""The heartbeat's Flight Recorder dumps have a bounded cost in the rank (torch holds the GIL for a whole
dump): a healthy job whose collectives often stay pending for a few heartbeat intervals is not dumped once
per collective, and a real hang still gets its entry."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.launch import HOST, job_env, launch_argv, rank_dir, read_json, torchrun
from tests.helpers.paths import example, program
from tests.helpers.processes import running_program, wait_for
from triage.worker.heartbeat import DUMP_MIN_GAP_BEATS

INTERVAL = 0.1
ROUNDS = 12
DELAY_BEATS = 4         # each collective stays pending 4 intervals on rank 0: every one would be dumped before


def _beat(run: Path, rank: int) -> dict[str, object]:
    try:
        return read_json(rank_dir(run, rank) / "heartbeat.json")  # type: ignore[no-any-return]
    except (OSError, ValueError):
        return {}


def _completed(beat: dict[str, object]) -> int:
    progress = beat.get("progress")
    pg = progress.get("0") if isinstance(progress, dict) else None
    return int(pg.get("completed", -1)) if isinstance(pg, dict) else -1


def test_lingering_collectives_are_not_dumped_each_time(tmp_path: Path) -> None:
    run, out = tmp_path / "run", tmp_path / "out"
    out.mkdir()
    job = torchrun(program("lingering_collectives_job.py"), 2, str(ROUNDS), str(DELAY_BEATS * INTERVAL), str(out))
    argv = launch_argv(run, job, "--heartbeat-interval", str(INTERVAL), quick_hang=False, host=HOST)
    with running_program(argv, env=job_env(), timeout=120) as proc:
        # 1 (init's all_reduce) + ROUNDS, then a heartbeat written after the last one completed
        beat = wait_for(lambda: (b := _beat(run, 0)) and _completed(b) >= 1 + ROUNDS and b, 120,
                        "rank 0's heartbeat after the last round")
        (out / "stop").write_text("")
        assert proc.wait(timeout=60) == 0
    dumps = beat.get("fr_dumps")
    assert isinstance(dumps, dict), beat        # the first lingering collective was dumped: its entry was looked for
    assert dumps["count"] >= 1 and dumps["seconds"] >= dumps["last"] > 0
    # one dump, then none for DUMP_MIN_GAP_BEATS intervals (or 100x the dump's time) after each: the rounds
    # last ROUNDS * DELAY_BEATS intervals in all, so at most 1 + that / DUMP_MIN_GAP_BEATS (before: ROUNDS)
    assert dumps["count"] <= 1 + ROUNDS * DELAY_BEATS // DUMP_MIN_GAP_BEATS < ROUNDS, dumps


def test_a_hang_after_a_dump_still_gets_its_entry(tmp_path: Path) -> None:
    """mismatch_hang.py: the ranks wait in different collectives for good; each heartbeat names its entry."""
    run = tmp_path / "run"
    argv = launch_argv(run, torchrun(example("mismatch_hang.py"), 2), "--heartbeat-interval", str(INTERVAL),
                       quick_hang=False, host=HOST)
    with running_program(argv, env=job_env(), timeout=90):
        beats = wait_for(lambda: all((_beat(run, r).get("fr") or {}).get("entries") for r in (0, 1))
                         and [_beat(run, r) for r in (0, 1)], 60, "heartbeats with the in-flight collective")
    names = [json.dumps(b["fr"]["entries"][0]["profiling_name"]) for b in beats]  # type: ignore[index]
    assert names == ['"gloo:all_reduce"', '"gloo:all_gather"']
    # the hang's entry came from a dump; under load an earlier collective of the job (init's) can also stay pending
    # past an interval and get a dump of its own before it (one per distinct pending set), so at least one, not one
    assert all(b["fr_dumps"]["count"] >= 1 for b in beats)  # type: ignore[index]
