"""Hang detection: pure functions over what the node agent knows about its local ranks.

Inputs are :class:`LocalRankStatus` values (heartbeats, Flight Recorder progress, the collective
a rank is waiting in) plus summaries of live NCCL debug lines and PyTorch watchdog messages.
Output is a :class:`HangSuspicion` with one console line such as
``ranks 0-2 waiting in all_reduce seq 42 (pg 0) for 60 s; rank 3 has not entered it`` and a
``key`` that stays the same for the same hang (so it is reported once).

Rules (``timeout`` = ``--hang-timeout``):
- a live rank waiting in a collective for ``timeout`` or longer is hung;
- a live rank whose progress (FR seq or step) has not moved for ``timeout`` is hung (only once
  the rank showed progress at all: a program without collectives or steps is never flagged);
- a live rank whose heartbeat is older than ``timeout`` is frozen (the whole process stopped);
- NCCL: every rank's last NCCL op line is older than ``timeout`` and the ranks disagree on the
  last opCount of their world communicator (or a WARN line was seen);
- a PyTorch watchdog message (collective timeout, heartbeat monitor, desync report) is a hang
  at once.
Nothing is flagged before the ranks registered (no pid yet) or for ranks that are gone.

A suspicion is not yet a reason to stop the job: :func:`certain_reason` says when it is certain
without sampling (watchdog, NCCL op-count disagreement, a dead peer, a mismatch); otherwise
the :func:`culprits` are sampled (:mod:`triage.agent.hang.busy`) and only blocked ones make it
certain. The policy table is in docs/agent.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from triage.agent.state import InitInfo, LocalRankStatus
from triage.analysis.ranks import format_ranks, rank_word
from triage.model import Collective


@dataclass(frozen=True)
class HangSuspicion:
    message: str                       # one line, without the "triage: hang suspected: " prefix
    ranks: tuple[int, ...]             # the ranks found stuck
    key: tuple[object, ...]            # identical for the same hang (dedup)
    source: str = "progress"           # progress | nccl | watchdog | init
    culprits: tuple[int, ...] | None = None   # the ranks to sample, when the rule knows them (init)
    waiting: str = ""                  # who waits where, when the rule knows it (init)
    init: InitInfo | None = None       # init: the facts behind the message (for the bundle)


@dataclass(frozen=True)
class NcclRankOps:
    """The last NCCL op one rank issued on its widest communicator, and when we read it."""

    rank: int
    op: str                            # NCCL name: AllReduce, Broadcast, ...
    op_count: int
    nranks: int | None
    seen: float                        # unix time the line was read
    warnings: tuple[str, ...] = ()


def _age(status: LocalRankStatus, now: float) -> float | None:
    """Seconds the rank has been waiting in its in-flight collective, if known."""
    coll = status.in_flight
    if coll is None:
        return None
    if coll.time_ns:
        return max(0.0, now - coll.time_ns / 1e9)
    return status.progress_age_s


def _watched(ranks: Sequence[LocalRankStatus]) -> list[LocalRankStatus]:
    return [r for r in ranks if r.alive and r.pid is not None]


def stuck_ranks(ranks: Sequence[LocalRankStatus], timeout: float, now: float) -> dict[int, float]:
    """rank -> seconds it has been stuck, for every live rank past ``timeout``."""
    stuck: dict[int, float] = {}
    for status in _watched(ranks):
        if status.exiting:
            continue      # past the user's code (its exit record is written): finalizing, not hung
        # progress counts only for a rank that has shown some (a collective or a step) at all
        progress = status.progress_age_s if (status.progress or status.step is not None) else None
        ages = [a for a in (_age(status, now), progress, status.heartbeat_age_s) if a is not None]
        worst = max(ages, default=0.0)
        if worst >= timeout:
            stuck[status.rank] = worst
    return stuck


def _coll_key(coll: Collective) -> tuple[str, int, str]:
    return (coll.pg, coll.seq, coll.op)


def _where(coll: Collective) -> str:
    return f"{coll.op} seq {coll.seq} (pg {coll.pg})"


def _latest_seq(status: LocalRankStatus, pg: str) -> int | None:
    for pg_id, seq in status.progress:
        if pg_id == pg:
            return seq
    return None


def describe(ranks: Sequence[LocalRankStatus], stuck: dict[int, float]) -> str:
    """The hang line: who waits where, and what the others are doing."""
    waiting: dict[tuple[str, int, str], list[LocalRankStatus]] = {}
    for status in ranks:
        # a live rank in a collective waits there, even if it entered it a moment after the others
        if status.in_flight is not None and (status.rank in stuck or (status.alive and status.pid is not None)):
            waiting.setdefault(_coll_key(status.in_flight), []).append(status)
    seconds = int(max(stuck.values(), default=0.0))
    if not waiting:
        who = rank_word(stuck)
        return f"{who} made no progress for {seconds} s (not in any collective)"
    # the collective most ranks wait in (ties: the lowest seq) is the one the job is stuck on
    main_key = min(waiting, key=lambda k: (-len(waiting[k]), k[1], k[0]))
    main = waiting[main_key][0].in_flight
    if main is None:
        raise RuntimeError("internal error: a waiting rank without its collective")
    main_ranks = [s.rank for s in waiting[main_key]]
    parts = [(f"{rank_word(main_ranks)} waiting in {_where(main)} for "
             f"{int(max((stuck[r] for r in main_ranks if r in stuck), default=seconds))} s")]
    for key, group in sorted(waiting.items(), key=lambda kv: kv[0]):
        if key != main_key and group[0].in_flight is not None:
            parts.append(f"{rank_word(s.rank for s in group)} waiting in {_where(group[0].in_flight)}")
    others = [s for s in ranks if s.rank not in main_ranks and not any(s in g for g in waiting.values())]
    parts.extend(_others(others, main))
    return "; ".join(parts)


def _others(others: Sequence[LocalRankStatus], main: Collective) -> list[str]:
    not_entered = [s.rank for s in others if s.alive and s.pid is not None]
    exited = [s for s in others if not s.alive and s.returncode is not None]
    parts: list[str] = []
    if not_entered:
        seqs = {_latest_seq(s, main.pg) for s in others if s.rank in not_entered}
        last = f" (last seq {seqs.pop()})" if len(seqs) == 1 and None not in seqs else ""
        verb = "has" if len(not_entered) == 1 else "have"
        parts.append(f"{rank_word(not_entered)} {verb} not entered it{last}")
    for status in exited:
        parts.append(f"rank {status.rank} exited ({exit_text(status.returncode)})")
    return parts


def exit_text(returncode: int | None) -> str:
    if returncode is None:
        return "unknown status"
    if returncode < 0:
        import signal

        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit code {returncode}"


def progress_key(ranks: Sequence[LocalRankStatus], stuck: dict[int, float]) -> tuple[object, ...]:
    """Same value for as long as the stuck ranks stay where they are."""
    where = tuple(sorted(
        (s.rank, _coll_key(s.in_flight) if s.in_flight else None, s.progress, s.step)
        for s in ranks if s.rank in stuck))
    return ("progress", where)


def detect_progress_hang(ranks: Sequence[LocalRankStatus], timeout: float, now: float) -> HangSuspicion | None:
    stuck = stuck_ranks(ranks, timeout, now)
    if not stuck:
        return None
    return HangSuspicion(message=describe(ranks, stuck), ranks=tuple(sorted(stuck)),
                         key=progress_key(ranks, stuck), source="progress")


def detect_nccl_hang(ops: Sequence[NcclRankOps], alive: Sequence[int], timeout: float,
                     now: float) -> HangSuspicion | None:
    """NCCL-only rule: all live ranks silent for ``timeout`` and disagreeing (or a WARN was seen)."""
    live = [o for o in ops if o.rank in alive]
    if not live or any(now - o.seen < timeout for o in live):
        return None
    counts = {o.op_count for o in live}
    warned = [o for o in live if o.warnings]
    if len(counts) < 2 and not warned:
        return None
    silent = int(min(now - o.seen for o in live))
    ahead = max(counts)
    behind = [o for o in live if o.op_count < ahead]
    lead = [o for o in live if o.op_count == ahead]
    parts = [(f"NCCL: {rank_word(o.rank for o in lead)} issued {lead[0].op} opCount {ahead:#x}, "
             f"no NCCL op for {silent} s")]
    for count in sorted({o.op_count for o in behind}):
        group = [o for o in behind if o.op_count == count]
        parts.append(f"{rank_word(o.rank for o in group)} stopped at {group[0].op} opCount {count:#x}")
    if warned:
        parts.append(f"NCCL WARN on {rank_word(o.rank for o in warned)}: {warned[0].warnings[-1][:160]}")
    key = ("nccl", tuple(sorted((o.rank, o.op_count) for o in live)))
    return HangSuspicion(message="; ".join(parts), ranks=tuple(sorted(o.rank for o in behind or live)),
                         key=key, source="nccl")


def detect_watchdog(events: Sequence[tuple[int, str]]) -> HangSuspicion | None:
    """A PyTorch watchdog message (rank, one-line summary) is a hang already confirmed by PyTorch."""
    if not events:
        return None
    ranks = sorted({rank for rank, _ in events})
    first = events[0][1]
    return HangSuspicion(message=f"PyTorch watchdog on {rank_word(ranks)}: {first}", ranks=tuple(ranks),
                         key=("watchdog", first), source="watchdog")


def certain_reason(ranks: Sequence[LocalRankStatus], suspicion: HangSuspicion,
                   timeout: float, now: float) -> str | None:
    """Why the job cannot recover by itself, without sampling the ranks; None: sample them first.

    Certain: a PyTorch watchdog message, NCCL ranks disagreeing on their op count (a skipped
    collective), a peer that exited, or ranks waiting in different collectives (a mismatch).
    """
    if suspicion.source == "watchdog":
        return "PyTorch's watchdog reported it"
    if suspicion.source == "init" and not suspicion.culprits:
        return "every rank here waits in its start-up: the ranks it waits for never came"
    if suspicion.source == "nccl":
        return "the ranks disagree on the NCCL op count (a skipped or mismatched collective)"
    dead = [s.rank for s in ranks if not s.alive and s.returncode not in (None, 0)]
    if dead:
        return f"a peer is gone ({rank_word(dead)} exited)"
    stuck = stuck_ranks(ranks, timeout, now)
    waiting = {_coll_key(s.in_flight) for s in ranks if s.rank in stuck and s.in_flight is not None}
    if len(waiting) > 1:
        return "the ranks wait in different collectives (a mismatch)"
    return None


def culprits(ranks: Sequence[LocalRankStatus], suspicion: HangSuspicion) -> tuple[int, ...]:
    """The ranks to sample: the live ones outside any collective (those the others wait for);
    when every stuck rank waits in a collective, those ranks themselves."""
    if suspicion.culprits is not None:
        return suspicion.culprits
    live = _watched(ranks)
    outside = tuple(sorted(s.rank for s in live if s.in_flight is None))
    if outside:
        return outside
    return tuple(sorted(s.rank for s in live if s.rank in suspicion.ranks))


def any_outside(ranks: Sequence[LocalRankStatus]) -> bool:
    """A live rank is outside any collective (the one the others wait for may be here)."""
    return any(s.in_flight is None for s in _watched(ranks))


def position(ranks: Sequence[LocalRankStatus]) -> tuple[object, ...]:
    """Where every live rank is (collective seqs and step): changes as soon as any rank moves on."""
    return tuple(sorted((s.rank, s.progress, s.step) for s in _watched(ranks)))


def waiting_summary(ranks: Sequence[LocalRankStatus]) -> str:
    """``ranks 1-2 waiting in barrier`` for the live ranks waiting in a collective ('' if none)."""
    groups: dict[str, list[int]] = {}
    for status in _watched(ranks):
        if status.in_flight is not None:
            groups.setdefault(status.in_flight.op, []).append(status.rank)
    return "; ".join(f"{rank_word(group)} waiting in {op}" for op, group in sorted(groups.items()))


def crash_reason(status: LocalRankStatus, survivors: Sequence[int]) -> str:
    left = f"; collecting from {rank_word(survivors)}" if survivors else ""
    return f"rank {status.rank} exited ({exit_text(status.returncode)}){left}"


def is_failure(status: LocalRankStatus) -> bool:
    return status.returncode is not None and status.returncode != 0


__all__ = [
    "HangSuspicion", "NcclRankOps", "certain_reason", "crash_reason", "culprits", "describe", "detect_nccl_hang",
    "detect_progress_hang",
    "detect_watchdog", "exit_text", "format_ranks", "is_failure", "stuck_ranks", "waiting_summary",
]
