"""The live straggler watch's pure part on constructed inputs: when the agent prints its line and
records py-spy samples (persistence, rate limits, bounds), its settings, and the sample summary."""

from __future__ import annotations

import json
import os
import random
import time
from pathlib import Path

import pytest

from tests.helpers.arrivals import group, jitter, late, traces
from tests.helpers.synthetic import fr_dump
from triage.agent.state import AgentContext, LocalRankStatus
from triage.agent.straggler_watch import (
    Decision,
    StragglerWatch,
    WarnPolicy,
    analyze_dumps,
    summarize_samples,
)
from triage.analysis.stragglers import Straggler, find_stragglers
from triage.config import launch_options, resolve, settings_from
from triage.errors import UsageError
from triage.layout import RankPaths
from triage.options import LaunchSettings, StragglerSettings, setting_fields

HOSTS = dict.fromkeys(range(4), "node03")
FAST = StragglerSettings(check_interval_s=10.0, warn_interval_s=300.0, sample_interval_s=600.0, max_samples=2,
                     confirm_checks=2)


def named(slow: dict[int, float], seed: int = 1) -> tuple[Straggler, ...]:
    """What the report's analysis names on 4 ranks x 200 collectives where ``slow`` ranks arrive late."""
    return find_stragglers([group(4)], traces(4, 200, late(slow, jitter(seed, 3.0))), HOSTS).stragglers


def test_the_line_names_the_rank_its_host_and_figures() -> None:
    policy = WarnPolicy(FAST)
    first = policy.decide(named({1: 40.0}), 0.0, [0, 1, 2, 3])
    assert first.warn is None and first.sample is None and first.straggler is None   # once is not persistent
    second = policy.decide(named({1: 40.0}, seed=2), 10.0, [0, 1, 2, 3])
    assert second.straggler is not None and second.straggler.ranks == (1,)
    assert second.warn is not None and second.warn.startswith(
        "rank 1 (node03) arrives last at 100% of collectives, +4")   # +40 or +41 ms, jitter
    assert " ms median; " in second.warn and "% of wall time lost (last 200 collectives of pg 0" in second.warn
    assert second.sample == 1


def test_at_most_one_line_per_warn_interval_and_bounded_samples() -> None:
    policy = WarnPolicy(FAST)
    lines, samples = [], []
    for check in range(200):                      # every 10 s for 2000 s, always the same straggler
        decision = policy.decide(named({2: 30.0}, seed=check % 3), check * 10.0, [0, 1, 2, 3])
        lines += [check * 10] if decision.warn else []
        samples += [check * 10] if decision.sample is not None else []
    assert lines == [10, 310, 610, 910, 1210, 1510, 1810]
    assert samples == [10, 610]                   # one per sample interval, max_samples in all


def test_a_straggler_must_persist_across_checks() -> None:
    policy = WarnPolicy(FAST)
    slow, none = named({1: 40.0}), named({})
    assert none == ()
    for now, found in enumerate([slow, none, slow, none, slow]):
        assert policy.decide(found, float(now * 10), [0, 1, 2, 3]).warn is None
    # another rank in between restarts the count
    assert policy.decide(named({3: 40.0}), 60.0, [0, 1, 2, 3]).warn is None
    assert policy.decide(slow, 70.0, [0, 1, 2, 3]).warn is None
    assert policy.decide(slow, 80.0, [0, 1, 2, 3]).warn is not None
    with_three = WarnPolicy(StragglerSettings(confirm_checks=3))
    assert [with_three.decide(slow, t, [1]).warn is not None for t in (0.0, 60.0, 120.0)] == [False, False, True]


def test_a_rank_of_another_node_is_that_nodes_line() -> None:
    policy = WarnPolicy(FAST)
    for now in (0.0, 10.0, 20.0):
        assert policy.decide(named({1: 40.0}), now, [2, 3]) == Decision()
    assert policy.samples == 0 and policy.last_warn is None


def test_a_shared_run_dir_adds_the_other_nodes_fresh_dumps(tmp_path: Path) -> None:
    """Two nodes, two ranks each, rank 3 (nodeB) 40 ms late: nodeB's agent sees nodeA's dumps."""
    rng = random.Random(3)
    for rank in range(4):
        data = fr_dump(rank, 4, 300)
        for entry in data["entries"]:
            entry["time_created_ns"] = (1_795_000_000_000_000_000 + entry["collective_seq_id"] * 100_000_000
                                        + rng.randrange(3_000_000) + (40_000_000 if rank == 3 else 0))
        host = "nodeA" if rank < 2 else "nodeB"
        path = tmp_path / host / "stragglers" / "fr" / f"rank-{rank}" / "fr.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(data))
    stale = tmp_path / "nodeC" / "stragglers" / "fr" / "rank-7" / "fr.json"
    stale.parent.mkdir(parents=True)
    stale.write_text("{}")
    os.utime(stale, (time.time() - 600, time.time() - 600))
    (tmp_path / "nodeC" / "stragglers" / "fr" / "rank-x").mkdir()
    ctx = AgentContext("job", "nodeB", tmp_path, tmp_path / "nodeB", 0.0)
    watch = StragglerWatch(ctx, StragglerSettings(check_interval_s=60.0), print)
    others = watch.other_hosts(time.time())
    assert {rank: (path.parents[3].name, host) for rank, (path, host) in others.items()} == {
        0: ("nodeA", "nodeA"), 1: ("nodeA", "nodeA")}
    own = {r: (tmp_path / "nodeB" / "stragglers" / "fr" / f"rank-{r}" / "fr.json", "nodeB") for r in (2, 3)}
    result, problems = analyze_dumps({**others, **own})
    assert problems == [] and [(s.ranks, s.host, s.is_host) for s in result.stragglers] == [((3,), "nodeB", False)]
    assert result.stragglers[0].clock == "clock offset bound 10 ms assumed"


def test_the_worst_of_two_stragglers_is_the_one_reported() -> None:
    policy = WarnPolicy(FAST)
    both = named({1: 25.0, 2: 60.0})
    assert sorted(s.ranks for s in both) in ([(2,)], [(1,), (2,)])
    policy.decide(both, 0.0, [0, 1, 2, 3])
    decision = policy.decide(both, 10.0, [0, 1, 2, 3])
    assert decision.straggler is not None and decision.straggler.ranks == (2,) and decision.sample == 2


def test_settings_come_from_flags_then_yaml_then_environment_then_defaults(tmp_path: Path) -> None:
    options = launch_options()
    assert StragglerSettings().check_interval_s == 60.0 and StragglerSettings().warn_interval_s == 300.0
    env = {"TRIAGE_STRAGGLER_CHECK_INTERVAL": "2.5", "TRIAGE_STRAGGLER_WATCH": "off",
           "TRIAGE_STRAGGLER_MAX_SAMPLES": "7"}
    values = resolve(options, {"straggler_max_samples": 1}, None, environ=env, cwd=tmp_path)
    got = settings_from(LaunchSettings, options, values).stragglers
    assert (got.check_interval_s, got.enabled, got.max_samples) == (2.5, False, 1)
    assert {f.name for f in setting_fields(StragglerSettings)} == {
        "straggler_watch", "straggler_check_interval", "straggler_warn_interval", "straggler_sample_interval",
        "straggler_max_samples", "straggler_sample_seconds", "straggler_confirm_checks"}
    flags = {o.flag for o in options}     # triage launch takes them as flags and YAML keys too
    assert {"--straggler-check-interval", "--straggler-watch", "--straggler-max-samples"} <= flags


@pytest.mark.parametrize(("name", "value"), [("TRIAGE_STRAGGLER_CHECK_INTERVAL", "abc"),
                                             ("TRIAGE_STRAGGLER_CHECK_INTERVAL", "0"),
                                             ("TRIAGE_STRAGGLER_WARN_INTERVAL", "nan"),
                                             ("TRIAGE_STRAGGLER_SAMPLE_INTERVAL", "inf"),
                                             ("TRIAGE_STRAGGLER_MAX_SAMPLES", "1.5"),
                                             ("TRIAGE_STRAGGLER_MAX_SAMPLES", "0"),
                                             ("TRIAGE_STRAGGLER_WATCH", "maybe")])
def test_a_bad_setting_is_a_one_line_error_naming_it(tmp_path: Path, name: str, value: str) -> None:
    with pytest.raises(UsageError) as caught:
        resolve(launch_options(), {}, None, environ={name: value}, cwd=tmp_path)
    assert caught.value.one_line().count("\n") == 0 and name in caught.value.one_line()


RAW = """\
<module> (job.py:50);main (job.py:37);wrapper (torch/distributed/c10d_logger.py:83);all_reduce (torch/distributed/distributed_c10d.py:3252) 10
<module> (job.py:50);main (job.py:39);pause (job.py:21) 3
Thread._bootstrap (threading.py:1002);Thread._bootstrap_inner (threading.py:1045);HeartbeatThread.run (triage/worker/heartbeat.py:67) 58
<module> (job.py:50);main (job.py:36);pause (job.py:21) 44
not a sample line
"""


def test_the_sample_summary_is_the_main_threads_top_frame() -> None:
    assert summarize_samples(RAW) == "pause (job.py:21) in 82% of 57 samples"
    assert summarize_samples("") is None
    assert summarize_samples("Thread._bootstrap (threading.py:1002);run (x.py:1) 9\n") is None


def test_unreadable_dumps_are_problems_not_errors(tmp_path: Path) -> None:
    bad = tmp_path / "fr.json"
    bad.write_text("{not json")
    result, problems = analyze_dumps({0: (bad, "node03"), 1: (tmp_path / "missing.json", "node03")})
    assert result.stragglers == () and len(problems) == 2
    assert all("\n" not in p for p in problems) and str(bad) in problems[0]


def test_samples_are_taken_only_with_a_line() -> None:
    policy = WarnPolicy(StragglerSettings(warn_interval_s=300.0, sample_interval_s=60.0, max_samples=10))
    taken = [t for t in range(0, 1000, 30)
             if policy.decide(named({1: 40.0}), float(t), [1]).sample is not None]
    assert taken == [30, 330, 630, 930]


def test_no_check_while_busy_stalled_or_not_due(tmp_path: Path) -> None:
    ctx = AgentContext("job", "node03", tmp_path, tmp_path / "node03", 0.0)
    said: list[str] = []
    watch = StragglerWatch(ctx, StragglerSettings(check_interval_s=60.0), said.append)

    def status(rank: int, progress_age_s: float | None) -> LocalRankStatus:
        return LocalRankStatus(rank, rank, "node03", 10_000 + rank, True, None, 0.5, progress_age_s, None,
                               paths=RankPaths(tmp_path / "node03" / "ranks" / str(rank)))

    moving = [status(0, 0.4), status(1, 1.0)]
    start = watch.next_check
    watch.on_tick(moving, start - 1.0)                   # not due
    watch.on_tick(moving, start, busy=True)              # a hang collection or a stop under way
    watch.on_tick([status(0, 0.4), status(1, 45.0)], start)   # rank 1 stalled: the hang monitor's case
    assert watch.thread is None and watch.checks == 0
    watch.on_tick(moving, start + 60.0)                  # due again, moving: one check (no worker answers)
    assert watch.thread is not None
    watch.close(30.0)
    assert watch.checks == 1 and said == [] and json.loads((ctx.host_dir / "stragglers" / "watch.json").read_text())[
        "problems"] == []
