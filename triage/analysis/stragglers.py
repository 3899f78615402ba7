"""Slow, not stuck: the rank (or host) that makes every other rank wait, from FR arrival times.

For each process group, the seqs where every member recorded the collective with a creation
time (FR ``time_created_ns``: when the rank called it) give, per seq:

- arrival lag of a rank: its arrival minus the first member's arrival;
- the last arrival: the member that arrived after every other one (a tie has none);
- time lost: the last arrival minus the second-to-last one (how much sooner the collective
  could have run had that member been no slower than the next slowest).

A member (a rank; or a host, with arrival = its earliest rank's) is named a straggler when all
the gates in :class:`Thresholds` hold (docs/stragglers.md explains them). Across hosts, clocks
differ: when the FR records completion times (NCCL), each host's offset is estimated from them
(a collective completes on every member at nearly the same instant); without them, a lag within
``clock_bound_ms`` could be the clocks, and is never named.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from operator import attrgetter, sub
from typing import Any

from triage.analysis.groups import Group
from triage.analysis.ranks import format_ranks
from triage.analysis.verdict import headline
from triage.analysis.verdict.headline import Head
from triage.model import Collective, Finding, Verdict, VerdictKind

KIND = "straggler"


@dataclass(frozen=True)
class Thresholds:
    """Every gate must hold for a member to be named (see docs/stragglers.md)."""

    min_collectives: int = 20      # seqs of the group with an arrival time from every member
    last_share: float = 0.5        # arrives last at >= this share of them ...
    chance_sigmas: float = 3.0     # ... and >= chance (1/members) + this many binomial sigmas
    min_lag_ms: float = 10.0       # median arrival lag at least this ...
    lag_ratio: float = 3.0         # ... and this many times the other members' typical median lag
    lost_share: float = 0.05       # the others waited for it >= this share of the window's wall time
    clock_bound_ms: float = 10.0   # assumed cross-host clock offset bound when it cannot be estimated


DEFAULT = Thresholds()


@dataclass(frozen=True)
class Straggler:
    """One named straggler, with the figures that back it."""

    pg: str
    group_label: str
    ranks: tuple[int, ...]
    host: str | None               # the host, for a host straggler or a rank's own host
    is_host: bool                  # every rank of ``host`` is slow (named as a host)
    collectives: int               # seqs compared
    last_share: float
    median_lag_ms: float
    others_lag_ms: float           # the other members' typical (median of medians) lag
    lost_s: float
    window_s: float
    clock: str                     # "one host" | "estimated from completion times" | "bound N ms"

    @property
    def lost_pct(self) -> float:
        return 100.0 * self.lost_s / self.window_s if self.window_s > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        return {"pg": self.pg, "ranks": list(self.ranks), "host": self.host, "is_host": self.is_host,
                "collectives": self.collectives, "last_share": round(self.last_share, 4),
                "median_lag_ms": round(self.median_lag_ms, 3), "others_median_lag_ms": round(self.others_lag_ms, 3),
                "time_lost_s": round(self.lost_s, 3), "time_lost_pct": round(self.lost_pct, 2),
                "window_s": round(self.window_s, 3), "clock": self.clock}


@dataclass(frozen=True)
class StragglerResult:
    """The ranks or hosts found slower than the others, and what the report says of them."""
    stragglers: tuple[Straggler, ...] = ()
    findings: tuple[Finding, ...] = ()
    next_steps: tuple[str, ...] = ()
    extra: list[dict[str, Any]] = field(default_factory=list)

    def headline(self, verdict: Verdict) -> Verdict:
        """A run with no other problem says, in its first line, who slows it down."""
        if not self.stragglers or verdict.kind is not VerdictKind.NO_PROBLEM_FOUND:
            return verdict
        first = self.stragglers[0]
        more = f" (and {len(self.stragglers) - 1} more, see findings)" if len(self.stragglers) > 1 else ""
        return replace(verdict, summary=f"{verdict.summary}; but it is SLOW: {_who(first)} is a straggler, "
                                        f"+{first.median_lag_ms:.0f} ms median lag, {first.lost_pct:.0f}% of "
                                        f"wall time lost waiting for it{more}")

    def steps(self, steps: tuple[str, ...]) -> tuple[str, ...]:
        """The straggler's next steps first; "nothing to do" no longer holds."""
        if not self.next_steps:
            return steps
        return self.next_steps + tuple(s for s in steps if not s.startswith("nothing to do"))

    def json_extra(self) -> dict[str, Any]:
        """``extra.stragglers`` in the JSON report, only when there is one."""
        return {"stragglers": self.extra} if self.extra else {}


@dataclass(frozen=True)
class _Unit:
    """A rank or a host, as the straggler check compares them."""
    label: str
    ranks: tuple[int, ...]
    host: str | None
    is_host: bool


def find_stragglers(groups: Sequence[Group], traces: Mapping[int, Sequence[Collective]],
                    hosts: Mapping[int, str | None], stacks: Mapping[int, Sequence[str]] | None = None,
                    paths: Mapping[int, Sequence[str]] | None = None,
                    limits: Thresholds = DEFAULT) -> StragglerResult:
    """Stragglers of every group (pure). ``stacks``: each rank's main-thread frames, innermost
    first, when a bundle holds them (they choose the next step); ``paths``: each rank's files
    (the finding's evidence)."""
    found: list[Straggler] = []
    for group in groups:
        found.extend(group_stragglers(group, traces, hosts, limits))
    findings = tuple(Finding(KIND, s.ranks, headline.line(Head.STRAGGLER, describe(s)),
                             tuple(p for r in s.ranks[:8] for p in (paths or {}).get(r, ())[:1])) for s in found)
    steps = tuple(dict.fromkeys(step for s in found for step in _next_steps(s, stacks or {})))
    return StragglerResult(tuple(found), findings, steps, [s.to_json() for s in found])


_FIELDS = attrgetter("pg", "is_p2p", "seq", "time_ns")
_PG, _P2P, _SEQ, _TIME = attrgetter("pg"), attrgetter("is_p2p"), attrgetter("seq"), attrgetter("time_ns")


def _times(colls: Sequence[Collective], pg: str) -> tuple[list[int], list[int]]:
    """(seqs, creation times) of the group's collectives that have one. This runs over every entry
    of every rank: the usual case (one group, all timed, in order) in a few C-level passes."""
    if set(map(_PG, colls)) == {pg} and not any(map(_P2P, colls)):
        seqs, times = list(map(_SEQ, colls)), list(map(_TIME, colls))
        contiguous = seqs[-1] - seqs[0] == len(seqs) - 1     # with sorted: no seq twice
        if all(times) and seqs[0] >= 0 and seqs == sorted(seqs) and (contiguous or len(set(seqs)) == len(seqs)):
            return seqs, times
    pairs = [(seq, t) for g, p2p, seq, t in map(_FIELDS, colls) if g == pg and t and not p2p and seq >= 0]
    seqs = [seq for seq, _ in pairs]
    if seqs != sorted(seqs) or len(set(seqs)) != len(seqs):
        pairs = sorted(dict(pairs).items())
        seqs = [seq for seq, _ in pairs]
    return seqs, [t for _, t in pairs]


def _completed(colls: Sequence[Collective], pg: str) -> dict[int, int]:
    return {c.seq: c.time_completed_ns for c in colls
            if c.pg == pg and not c.is_p2p and c.time_completed_ns and c.seq >= 0}


def group_stragglers(group: Group, traces: Mapping[int, Sequence[Collective]],
                     hosts: Mapping[int, str | None], limits: Thresholds = DEFAULT) -> list[Straggler]:
    members = [r for r in group.members if r in traces]
    if len(members) < 2 or len(members) < len(group.members):
        return []     # a member without a trace: its arrivals are unknown (the hang analysis says why)
    per_rank = [_times(traces[r], group.pg) for r in members]
    seqs = per_rank[0][0]
    if all(rank_seqs == seqs for rank_seqs, _ in per_rank):
        rows = [times for _, times in per_rank]      # the usual case: every rank kept the same seqs
    else:
        common = set(seqs).intersection(*(rank_seqs for rank_seqs, _ in per_rank[1:]))
        seqs = sorted(common)
        by_seq = [dict(zip(rank_seqs, times)) for rank_seqs, times in per_rank]
        rows = [[created[s] for s in seqs] for created in by_seq]
    if len(seqs) < max(2, limits.min_collectives):
        return []
    host_of = {r: hosts.get(r) for r in members}
    host_names = sorted({h or "?" for h in host_of.values()})
    multi_host = len(host_names) > 1
    margin_ms, clock = 0.0, "one host"
    if multi_host:
        offsets = _host_offsets(members, host_of, traces, group.pg, seqs, limits.min_collectives)
        if offsets is None:
            margin_ms, clock = limits.clock_bound_ms, f"clock offset bound {limits.clock_bound_ms:g} ms assumed"
        else:
            rows = [[t - int(offsets[host_of[r] or "?"]) for t in row] for r, row in zip(members, rows)]
            clock = "clock offsets estimated from completion times"
    window_s = (max(rows[i][-1] for i in range(len(rows))) - min(rows[i][0] for i in range(len(rows)))) / 1e9
    out: list[Straggler] = []
    slow_hosts: set[str] = set()
    if multi_host:
        by_host = {h: [i for i, r in enumerate(members) if (host_of[r] or "?") == h] for h in host_names}
        if any(len(idx) > 1 for idx in by_host.values()):
            units = [_Unit(h, tuple(members[i] for i in idx), h, True) for h, idx in by_host.items()]
            host_rows = [[min(col) for col in zip(*(rows[i] for i in idx))] for idx in by_host.values()]
            for unit, stats in _judge(units, host_rows, window_s, margin_ms, limits):
                if len(unit.ranks) > 1:
                    slow_hosts.add(unit.label)
                    out.append(_straggler(group, unit, stats, len(seqs), window_s, clock))
    units = [_Unit(f"rank {r}", (r,), host_of[r], False) for r in members]
    for unit, stats in _judge(units, rows, window_s, margin_ms, limits):
        if (unit.host or "?") not in slow_hosts:
            out.append(_straggler(group, unit, stats, len(seqs), window_s, clock))
    return out


def _straggler(group: Group, unit: _Unit, stats: tuple[float, float, float, float], count: int,
               window_s: float, clock: str) -> Straggler:
    share, lag_ms, others_ms, lost_s = stats
    return Straggler(group.pg, group.label, unit.ranks, unit.host, unit.is_host, count, share, lag_ms, others_ms,
                     lost_s, window_s, clock)


def median(values: Sequence[float]) -> float:
    """``statistics.median``, imported where a group is timed (with random, fractions and decimal: off the
    start of a log's report)."""
    from statistics import median as _median

    return _median(values)


def _judge(units: Sequence[_Unit], rows: Sequence[Sequence[int]], window_s: float, margin_ms: float,
           limits: Thresholds) -> list[tuple[_Unit, tuple[float, float, float, float]]]:
    """(unit, (last share, median lag ms, others' lag ms, lost s)) of each unit past every gate.
    The last-arrival count comes first: a healthy group stops there, before any median."""
    n, count = len(units), len(rows[0])
    last = [0] * n
    lost = [0] * n
    firsts: list[int] = []
    for col in zip(*rows):
        first, top = min(col), max(col)
        firsts.append(first)
        at = col.index(top)
        second = max(col[:at] + col[at + 1:])
        if top > second:
            last[at] += 1
            lost[at] += top - second
    chance = 1.0 / n
    need = max(limits.last_share, chance + limits.chance_sigmas * math.sqrt(chance * (1 - chance) / count))
    candidates = [i for i in range(n) if last[i] / count >= need]
    if not candidates:
        return []
    lags_ms = [median(list(map(sub, row, firsts))) / 1e6 for row in rows]
    out = []
    for i in candidates:
        others = median(lags_ms[:i] + lags_ms[i + 1:])
        lost_s = lost[i] / 1e9
        if (lags_ms[i] >= limits.min_lag_ms + margin_ms and lags_ms[i] >= limits.lag_ratio * others
                and window_s > 0 and lost_s >= limits.lost_share * window_s):
            out.append((units[i], (last[i] / count, lags_ms[i], others, lost_s)))
    return out


def _host_offsets(members: Sequence[int], host_of: Mapping[int, str | None],
                  traces: Mapping[int, Sequence[Collective]], pg: str, seqs: Sequence[int],
                  needed: int) -> dict[str, float] | None:
    """Each host's clock offset against the first host's: the median, over the seqs every member
    recorded a completion time for, of its ranks' completion minus the reference host's. None
    without enough completion times (gloo records none)."""
    done = set(seqs)
    per_rank: list[dict[int, int]] = []
    for rank in members:
        per_rank.append(_completed(traces[rank], pg))
        done &= per_rank[-1].keys()
        if len(done) < needed:
            return None
    if len(done) < needed:
        return None
    chosen = sorted(done)
    by_host: dict[str, list[int]] = {}
    for i, rank in enumerate(members):
        by_host.setdefault(host_of[rank] or "?", []).append(i)
    columns = {h: [median([per_rank[i][s] for i in idx]) for s in chosen] for h, idx in by_host.items()}
    reference = columns[min(columns)]
    return {h: median([a - b for a, b in zip(col, reference)]) for h, col in columns.items()}


def _who(s: Straggler) -> str:
    if s.is_host:
        return f"host {s.host} (ranks {format_ranks(s.ranks)})"
    return f"rank {s.ranks[0]}" + (f" ({s.host})" if s.host else "")


def describe(s: Straggler) -> str:
    """One line, as the agent would print it."""
    return (f"{_who(s)} arrives last at {100 * s.last_share:.0f}% of {s.collectives} collectives of {s.group_label}, "
            f"+{s.median_lag_ms:.1f} ms median lag (others +{s.others_lag_ms:.1f} ms); the others waited "
            f"{s.lost_s:.2f} s for it, {s.lost_pct:.0f}% of {s.window_s:.1f} s wall time ({s.clock})")


def short_line(s: Straggler) -> str:
    """The agent's live line: ``rank 1 (node03) arrives last at 92% of collectives, +41 ms median;
    18% of wall time lost`` (and the group, the span)."""
    return (f"{_who(s)} arrives last at {100 * s.last_share:.0f}% of collectives, +{s.median_lag_ms:.0f} ms median; "
            f"{s.lost_pct:.0f}% of wall time lost (last {s.collectives} collectives of {s.group_label}, "
            f"{s.window_s:.0f} s)")


_DATA_HINTS = ("torch/utils/data", "dataloader", "_next_data", "__next__ in _MultiProcessingDataLoaderIter")


def _next_steps(s: Straggler, stacks: Mapping[int, Sequence[str]]) -> list[str]:
    if s.is_host:
        return [(f"every rank on {s.host} is slow: check the host (CPU/GPU throttling, `dmesg`, "
                f"noisy neighbours, its disk and network) - compare it with another host of the job")]
    rank = s.ranks[0]
    frames = " ".join(stacks.get(rank, ())).lower()
    if any(hint.lower() in frames for hint in _DATA_HINTS):
        return [(f"rank {rank} is busy in its input pipeline (DataLoader) when sampled: give it more "
                "workers (num_workers), check its data shard and its disk")]
    return [(f"see what rank {rank} does between collectives: its stack samples (the py-spy recordings "
            f"`triage launch` took while it warned, RUN_DIR/<host>/stragglers/rank-{rank}-*.pyspy.txt; or "
            f"`triage dump RUN_DIR` while the job runs, then rank-{rank}/pyspy.json in the bundle); look for "
            "input loading, extra compute or I/O that the other ranks do not do")]


def lag_rows(pg: str, members: Sequence[int], traces: Mapping[int, Sequence[Collective]]
             ) -> tuple[list[int], list[int], list[list[float]]]:
    """(the members with a trace, the seqs all of them recorded, each one's arrival lag in ms at
    each of those seqs): same clock assumed, no offsets. Empty when fewer than two members have one."""
    ranks = [r for r in members if r in traces]
    if len(ranks) < 2:
        return [], [], []
    per_rank = [_times(traces[r], pg) for r in ranks]
    common = set(per_rank[0][0]).intersection(*(seqs for seqs, _ in per_rank[1:]))
    if not common:
        return [], [], []
    seqs = sorted(common)
    maps = [dict(zip(rank_seqs, times)) for rank_seqs, times in per_rank]
    rows = [[m[s] for s in seqs] for m in maps]
    firsts = [min(col) for col in zip(*rows)]
    return ranks, seqs, [[(t - f) / 1e6 for t, f in zip(row, firsts)] for row in rows]


def median_lags(group: Group, traces: Mapping[int, Sequence[Collective]]) -> dict[int, float]:
    """Each member's median arrival lag in ms over the seqs every member recorded (same clock
    assumed; no offsets): what `triage top` shows. Empty when fewer than two members have one."""
    ranks, _seqs, lags = lag_rows(group.pg, group.members, traces)
    return {r: median(row) for r, row in zip(ranks, lags)}
