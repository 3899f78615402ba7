"""Straggler analysis on constructed Flight Recorder arrivals: each gate tested on both sides
(with the other gates opened), the default thresholds on realistic shapes, clocks across hosts."""

from __future__ import annotations

import pytest

from tests.helpers.arrivals import evidence, group, jitter, late, traces
from triage.analysis.analyze import analyze
from triage.analysis.stragglers import DEFAULT, Thresholds, find_stragglers, group_stragglers
from triage.model import VerdictKind

OPEN = Thresholds(min_collectives=1, last_share=0.0, chance_sigmas=0.0, min_lag_ms=0.0, lag_ratio=0.0,
                  lost_share=0.0, clock_bound_ms=0.0)
ONE_HOST = dict.fromkeys(range(8), "node0")


def named(colls: dict[int, tuple], limits: Thresholds = DEFAULT, hosts: dict[int, str] | None = None,
          ranks: int | None = None) -> list[tuple[int, ...]]:
    found = group_stragglers(group(ranks or len(colls)), colls, hosts or ONE_HOST, limits)
    return [s.ranks for s in found]


# -- the default thresholds on the shapes that matter ------------------------------------------

def test_one_slow_rank_is_named_with_its_figures() -> None:
    colls = traces(4, 200, late({2: 40.0}, jitter(1, 3.0)))
    result = find_stragglers([group(4)], colls, ONE_HOST, paths={2: ("rank-2/fr.json",)})
    assert [s.ranks for s in result.stragglers] == [(2,)]
    slow = result.stragglers[0]
    assert slow.last_share == 1.0 and slow.collectives == 200
    assert 38.0 < slow.median_lag_ms < 43.0 and slow.others_lag_ms < 3.0
    # the others waited ~40 ms minus the next slowest rank's jitter, 200 times, over ~20 s
    assert 7.0 < slow.lost_s < 8.1 and 35.0 < slow.lost_pct < 41.0
    finding = result.findings[0]
    assert finding.kind == "straggler" and finding.ranks == (2,) and finding.evidence == ("rank-2/fr.json",)
    assert "rank 2 (node0) arrives last at 100% of 200 collectives of pg 0 (default_pg)" in finding.detail
    assert "+40." in finding.detail and "% of 19.9 s wall time" in finding.detail
    assert result.extra[0]["median_lag_ms"] == pytest.approx(slow.median_lag_ms, abs=1e-3)
    assert "rank 2" in result.next_steps[0] and "pyspy" in result.next_steps[0]


def test_equal_ranks_no_finding() -> None:
    assert named(traces(4, 200, late({}))) == []
    assert named(traces(8, 200, late({}, jitter(3, 0.5)))) == []


@pytest.mark.parametrize("seed", range(40))
def test_random_jitter_never_names_anyone(seed: int) -> None:
    """Jitter as large as a slow rank's lag, but random: nobody is persistently last."""
    for ranks in (2, 4, 8):
        assert named(traces(ranks, 120, jitter(seed * 31 + ranks, 40.0))) == []


def test_occasional_hiccups_of_every_rank_are_not_a_straggler() -> None:
    """Each rank stalls 50 ms now and then (a CPU-loaded machine): no one is persistently last."""
    base = jitter(7, 2.0)
    colls = traces(4, 200, lambda r, s: base(r, s) + (50.0 if (s + r) % 4 == 0 else 0.0))
    assert named(colls) == []


def test_two_slow_ranks_each_last_half_the_time_are_not_named() -> None:
    """The gates name one persistent straggler; two equally slow ranks share the last place."""
    assert named(traces(4, 200, late({1: 40.0, 2: 40.0}, jitter(2, 3.0)))) == []


# -- each gate, both sides ---------------------------------------------------------------------

def _last_at(share_pct: int) -> dict[int, tuple]:
    """Rank 3 arrives 40 ms late at share_pct of 100 seqs; ranks 0-2 in turn at the rest."""
    return traces(4, 100, lambda r, s: 40.0 if r == (3 if s % 100 < share_pct else s % 3) else 0.0)


def test_gate_last_share() -> None:
    limits = Thresholds(min_collectives=1, last_share=0.5, chance_sigmas=0.0, min_lag_ms=0.0, lag_ratio=0.0,
                        lost_share=0.0)
    assert named(_last_at(50), limits) == [(3,)]
    assert named(_last_at(49), limits) == []


def test_gate_chance_grows_with_fewer_ranks() -> None:
    """2 ranks: 50% last is chance; with 100 seqs, 3 sigmas above it is 65%."""
    limits = Thresholds(min_collectives=1, last_share=0.0, chance_sigmas=3.0, min_lag_ms=0.0, lag_ratio=0.0,
                        lost_share=0.0)

    def two(pct: int) -> dict[int, tuple]:
        return traces(2, 100, lambda r, s: 10.0 if r == (1 if s % 100 < pct else 0) else 0.0)
    assert named(two(65), limits) == [(1,)]
    assert named(two(64), limits) == []


def test_gate_min_lag() -> None:
    limits = Thresholds(min_collectives=1, last_share=0.0, chance_sigmas=0.0, min_lag_ms=10.0, lag_ratio=0.0,
                        lost_share=0.0)
    assert named(traces(4, 50, late({1: 10.5})), limits) == [(1,)]
    assert named(traces(4, 50, late({1: 9.5})), limits) == []
    # the default: a rank persistently last by 3 ms (seen under CPU load: a burner sharing its core)
    assert named(traces(4, 200, late({3: 3.0}, jitter(11, 1.0)), period_ms=20.0)) == []


def test_gate_lag_ratio() -> None:
    """Others arrive at 0, 2 and 4 ms (typical lag 2 ms): 3x is 6 ms."""
    limits = Thresholds(min_collectives=1, last_share=0.0, chance_sigmas=0.0, min_lag_ms=0.0, lag_ratio=3.0,
                        lost_share=0.0)
    assert named(traces(4, 50, late({0: 0.0, 1: 2.0, 2: 4.0, 3: 6.5})), limits) == [(3,)]
    assert named(traces(4, 50, late({0: 0.0, 1: 2.0, 2: 4.0, 3: 5.5})), limits) == []


def test_gate_time_lost() -> None:
    """1 s steps: 60 ms lost per step is 6% of wall time, 40 ms is 4%."""
    limits = Thresholds(min_collectives=1, last_share=0.0, chance_sigmas=0.0, min_lag_ms=0.0, lag_ratio=0.0,
                        lost_share=0.05)
    assert named(traces(4, 50, late({1: 60.0}), period_ms=1000.0), limits) == [(1,)]
    assert named(traces(4, 50, late({1: 40.0}), period_ms=1000.0), limits) == []
    # and with the default thresholds too
    assert named(traces(4, 50, late({1: 60.0}), period_ms=1000.0)) == [(1,)]
    assert named(traces(4, 50, late({1: 40.0}), period_ms=1000.0)) == []


def test_gate_min_collectives() -> None:
    assert named(traces(4, 20, late({1: 40.0}))) == [(1,)]
    assert named(traces(4, 19, late({1: 40.0}))) == []


def test_only_seqs_every_member_recorded_are_compared() -> None:
    colls = traces(4, 30, late({1: 40.0}))
    colls[0] = colls[0][15:]                      # rank 0's ring buffer kept only the last 15
    assert named(colls) == []
    colls = traces(4, 30, late({1: 40.0}))
    del colls[3]                                  # a member without a trace: arrivals unknown
    assert group_stragglers(group(4), colls, ONE_HOST) == []


def test_ties_have_no_last_rank() -> None:
    """Synthetic dumps with identical times: nobody is last, so nobody is a straggler."""
    assert named(traces(4, 100, late({})), OPEN) == []


# -- hosts and clocks --------------------------------------------------------------------------

TWO_HOSTS = {0: "a", 1: "a", 2: "b", 3: "b"}


def test_across_hosts_a_lag_inside_the_clock_bound_is_not_named() -> None:
    colls = traces(4, 100, late({3: 12.0}, jitter(5, 1.0)))
    assert named(colls) == [(3,)]                                  # one host: same clock
    assert named(colls, hosts=TWO_HOSTS) == []                     # 12 ms < 10 ms + 10 ms bound
    assert named(traces(4, 100, late({3: 18.0}, jitter(5, 1.0))), hosts=TWO_HOSTS) == []
    assert named(traces(4, 100, late({3: 22.0}, jitter(5, 1.0))), hosts=TWO_HOSTS) == [(3,)]


def test_every_rank_of_one_host_late_names_the_host() -> None:
    colls = traces(4, 100, late({2: 40.0, 3: 41.0}, jitter(6, 2.0)))
    result = find_stragglers([group(4)], colls, TWO_HOSTS)
    assert [(s.ranks, s.is_host, s.host) for s in result.stragglers] == [((2, 3), True, "b")]
    assert "host b (ranks 2,3)" in result.findings[0].detail
    assert "clock offset bound 10 ms assumed" in result.findings[0].detail
    assert "check the host" in result.next_steps[0] and "b" in result.next_steps[0]


def test_clock_offset_estimated_from_completion_times() -> None:
    """Host b's clock runs 40 ms ahead: its arrivals and completions both look 40 ms late. With
    completion times, the offset is seen and removed: no straggler. A real straggler on host b
    completes with the others: it is named."""
    skew = {2: 40.0, 3: 40.0}
    base = jitter(8, 2.0)
    # true arrivals within 2 ms, completion 1 ms after the last (true time); b's clock reads +40 ms
    clock_only = traces(4, 100, late(skew, base),
                        completion=lambda r, s, last: max(base(q, s) for q in range(4)) + 1.0 + skew.get(r, 0.0))
    assert named(clock_only, hosts=TWO_HOSTS) == []
    # the same arrivals, same clocks: b's ranks are late and everyone completes after them
    slow = traces(4, 100, late(skew, base), completion=lambda r, s, last: last + 1.0)
    found = group_stragglers(group(4), slow, TWO_HOSTS)
    assert [s.ranks for s in found] == [(2, 3)]
    assert found[0].clock == "clock offsets estimated from completion times"
    # a straggler whose lag is within the bound is named once the offsets are known
    small = traces(4, 100, late({3: 12.0}, base), completion=lambda r, s, last: last + 1.0)
    assert named(small, hosts=TWO_HOSTS) == [(3,)]


def test_one_slow_rank_on_a_host_with_fast_ranks_is_named_as_a_rank() -> None:
    colls = traces(4, 100, late({3: 40.0}, jitter(9, 2.0)))
    found = group_stragglers(group(4), colls, TWO_HOSTS)
    assert [(s.ranks, s.is_host) for s in found] == [((3,), False)]


# -- next steps and the report -----------------------------------------------------------------

def test_dataloader_stack_points_at_the_input_pipeline() -> None:
    colls = traces(4, 100, late({1: 40.0}))
    stack = ("/usr/lib/python3/site-packages/torch/utils/data/dataloader.py:1300 in _next_data",
             "train.py:40 in main")
    result = find_stragglers([group(4)], colls, ONE_HOST, stacks={1: stack})
    assert "DataLoader" in result.next_steps[0] and "num_workers" in result.next_steps[0]


def test_report_first_line_and_json() -> None:
    report = analyze(evidence(traces(4, 100, late({1: 40.0}, jitter(4, 2.0)))))
    assert report.verdict.kind is VerdictKind.NO_PROBLEM_FOUND
    assert "SLOW: rank 1 (node0) is a straggler, +40 ms median lag" in report.verdict.summary
    assert [f.kind for f in report.findings] == ["straggler"]
    doc = report.to_json()
    assert doc["extra"]["stragglers"][0]["ranks"] == [1]
    assert doc["extra"]["stragglers"][0]["last_share"] == 1.0
    assert not any(step.startswith("nothing to do") for step in report.next_steps)
    healthy = analyze(evidence(traces(4, 100, jitter(4, 2.0))))
    assert "stragglers" not in healthy.to_json()["extra"] and "SLOW" not in healthy.verdict.summary


def test_order_duplicates_p2p_and_other_groups_do_not_change_the_answer() -> None:
    from dataclasses import replace

    colls = traces(4, 60, late({2: 40.0}, jitter(12, 2.0)))
    expected = group_stragglers(group(4), colls, ONE_HOST)
    assert [s.ranks for s in expected] == [(2,)]
    messy = dict(colls)
    extra = (replace(colls[0][5], is_p2p=True, op="send", time_ns=colls[0][5].time_ns + 10**9),   # p2p: ignored
             replace(colls[0][6], pg="1"),                                                    # another group
             colls[0][7])                                                                    # seq 8 twice
    messy[0] = tuple(reversed(colls[0])) + extra
    again = group_stragglers(group(4), messy, ONE_HOST)
    assert [(s.ranks, s.collectives, round(s.median_lag_ms, 6), round(s.lost_s, 6)) for s in again] == \
        [(s.ranks, s.collectives, round(s.median_lag_ms, 6), round(s.lost_s, 6)) for s in expected]
