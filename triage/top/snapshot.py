"""One snapshot of a running (or finished) `triage launch` job, from its run directory only.

Per rank: worker.json (host), heartbeat.json (step, progress per process group, the in-flight
FR entry and since when), exit.json and faulthandler.log (how it ended). Arrival lag comes from
the newest Flight Recorder of every rank (the latest node bundle's fr.json, else fr-exit.json),
through the straggler analysis; those dumps are parsed again only when they change.

Nothing here writes, signals or connects to anything: files are read, never the job touched.
Times: heartbeat ages and time in collective compare the workers' clocks (in heartbeat.json)
with this machine's: on a login node, they are off by the clocks' difference.
"""

from __future__ import annotations

import contextlib
import enum
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from triage.analysis.groups import resolve_groups
from triage.analysis.stragglers import find_stragglers, median_lags
from triage.errors import InputError
from triage.layout import BundlePaths, HostPaths, RankPaths, RunPaths
from triage.load.fr_files import load_fr_dumps
from triage.model import Collective
from triage.parsing.flight_recorder.parse import parse_fr_json
from triage.parsing.stacks import parse_faulthandler_signal
from triage.top.files import MAX_JSON, MAX_TEXT, FileCache, json_object, list_dir


class TopState(str, enum.Enum):
    STARTING = "starting"                  # worker.json, no heartbeat yet
    RUNNING = "running"
    IN_COLLECTIVE = "in_collective"
    STUCK = "stuck"                        # in one collective for stuck_after seconds or more
    NO_HEARTBEAT = "no_heartbeat"          # no exit record and no heartbeat for stale_after seconds
    EXITED_OK = "exited_ok"
    EXITED_ERROR = "exited_error"
    CRASHED = "crashed"


ALARMS = frozenset({TopState.STUCK, TopState.NO_HEARTBEAT, TopState.EXITED_ERROR, TopState.CRASHED})


@dataclass(frozen=True)
class Limits:
    stuck_after: float = 30.0              # seconds in one collective
    stale_after: float = 15.0              # seconds without a heartbeat


@dataclass(frozen=True)
class RankLine:
    rank: int
    host: str
    state: TopState
    step: int | None = None
    pg: str | None = None
    seq: int | None = None                 # the last collective it entered (enqueued) in ``pg``
    op: str | None = None                  # its name when known (in flight, or in the newest dump)
    in_collective_s: float | None = None
    heartbeat_age_s: float | None = None
    lag_ms: float | None = None            # median arrival lag in the default group (newest dumps)
    straggler: bool = False
    numerics: bool = False                 # the numerics watch runs (triage launch --numerics)
    nonfinite_step: int | None = None      # the step of its first NaN/Inf

    def to_json(self) -> dict[str, Any]:
        return {"rank": self.rank, "host": self.host, "state": self.state.value, "step": self.step,
                "pg": self.pg, "seq": self.seq, "op": self.op, "in_collective_s": _round(self.in_collective_s),
                "heartbeat_age_s": _round(self.heartbeat_age_s), "lag_ms": _round(self.lag_ms),
                "straggler": self.straggler, "numerics": self.numerics, "nonfinite_step": self.nonfinite_step}


@dataclass(frozen=True)
class Snapshot:
    run_dir: str
    time: float
    ranks: tuple[RankLine, ...]
    stragglers: tuple[str, ...] = ()       # one line per straggler (triage.analysis.stragglers.describe)
    lag_source: str | None = None          # "bundle 2026...-manual" / "exit dumps" / None
    problems: tuple[str, ...] = ()         # files that could not be read, one line each


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


@dataclass
class LagCache:
    """The last arrival-lag computation and the dump files (path, mtime, size) it came from."""

    key: tuple[tuple[str, float, int], ...] = ()
    lags: dict[int, float] = field(default_factory=dict)
    stragglers: dict[int, str] = field(default_factory=dict)
    lines: tuple[str, ...] = ()
    ops: dict[int, dict[tuple[str, int], str]] = field(default_factory=dict)
    source: str | None = None
    last: dict[int, tuple[str, int, str]] = field(default_factory=dict)   # rank -> its dump's last (pg, seq, op)
    files: FileCache = field(default_factory=FileCache)   # every rank's files, decoded once while unchanged


@dataclass(frozen=True)
class RankDir:
    """One rank's directory as a refresh found it: its files' ``lstat`` by name."""

    rank: int
    host: HostPaths
    path: str
    listing: dict[str, os.stat_result]


def _rank_dirs(hosts: list[HostPaths]) -> list[RankDir]:
    """Every rank directory, each listed once."""
    found = []
    for host in hosts:
        ranks_dir = str(host.ranks_dir)
        for rank in host.ranks():
            path = f"{ranks_dir}/{rank}"
            found.append(RankDir(rank, host, path, list_dir(path, RANK_FILES)))
    return found


def _dump_files(ranks: list[RankDir]) -> tuple[dict[int, tuple[Path, str]], str | None]:
    """rank -> (newest dump, host): the newest of the latest bundle's fr.json, the live straggler
    watch's fetch of it and fr-exit.json."""
    files: dict[int, tuple[Path, str]] = {}
    sources: set[str] = set()
    latest: dict[str, Path | None] = {}
    live: dict[str, set[int]] = {}
    for item in ranks:
        host = item.host
        if host.host not in latest:
            bundles = host.bundles()
            latest[host.host] = bundles[-1] if bundles else None
            live[host.host] = set(host.stragglers.live_fr_ranks())
        candidates: list[tuple[Path, str]] = []
        bundle = latest[host.host]
        if bundle is not None:
            candidates.append((BundlePaths(bundle).rank(item.rank).fr_json, f"bundle {bundle.name}"))
        if item.rank in live[host.host]:
            candidates.append((host.live_fr(item.rank), "live straggler watch"))
        if RankPaths.FR_EXIT in item.listing:
            candidates.append((Path(f"{item.path}/{RankPaths.FR_EXIT}"), "exit dumps"))
        found: list[tuple[float, Path, str]] = []
        for path, source in candidates:
            with contextlib.suppress(OSError):
                info = os.stat(path)
                if stat.S_ISREG(info.st_mode):
                    found.append((info.st_mtime, path, source))
        if found:
            _, chosen, source = max(found, key=lambda entry: entry[0])
            files[item.rank] = (chosen, host.host)
            sources.add(source)
    return files, (", ".join(sorted(sources)) or None)


def _lags(ranks: list[RankDir], cache: LagCache, problems: list[str]) -> LagCache:
    files, source = _dump_files(ranks)
    key: list[tuple[str, float, int]] = []
    for rank in sorted(files):
        try:
            info = files[rank][0].stat()
        except OSError:
            continue
        key.append((str(files[rank][0]), info.st_mtime, info.st_size))
    if tuple(key) == cache.key:
        return cache
    evidence, unreadable = load_fr_dumps(files)
    problems.extend(unreadable)
    traces = {r.rank: r.collectives for r in evidence}
    hosts_of = {r.rank: r.host for r in evidence}
    groups = resolve_groups(tuple(evidence), None)
    default = next((g for g in groups if g.pg == "0"), None)
    lags = median_lags(default, traces) if default is not None else {}
    found = find_stragglers(groups, traces, hosts_of)
    slow = {rank: s.group_label for s in found.stragglers for rank in s.ranks}
    ops = {r.rank: {(c.pg, c.seq): c.op for c in r.collectives if not c.is_p2p} for r in evidence}
    lines = tuple(f.detail for f in found.findings)
    last = {}
    for item in evidence:
        plain = [c for c in item.collectives if not c.is_p2p and c.seq >= 0]
        if plain:
            top = max(plain, key=lambda c: (c.pg == "0", c.seq))
            last[item.rank] = (top.pg, top.seq, top.op)
    return LagCache(tuple(key), lags, slow, lines, ops, source if evidence else None, last, cache.files)


def _in_flight(beat: dict[str, Any], rank: int, source: str) -> list[Collective]:
    fr = beat.get("fr")
    if not isinstance(fr, dict) or not fr.get("entries"):
        return []
    return [c for c in parse_fr_json(fr, rank, source).collectives if not c.is_p2p]


def _progress(beat: dict[str, Any]) -> tuple[str | None, int | None]:
    """(pg, last enqueued seq): the default group's when it has one, else the busiest group's."""
    progress = beat.get("progress")
    if not isinstance(progress, dict) or not progress:
        return None, None
    best: tuple[str | None, int | None] = (None, None)
    for pg, item in progress.items():
        seq = item.get("enqueued") if isinstance(item, dict) else None
        if not isinstance(seq, int) or isinstance(seq, bool):
            continue
        if pg == "0":
            return pg, seq
        if best[1] is None or seq > best[1]:
            best = (str(pg), seq)
    return best


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class Beat:
    """What top uses of one heartbeat.json."""

    time: float | None
    step: int | None
    pg: str | None
    seq: int | None
    op: str | None                         # the newest in-flight entry's name (None: none in flight)
    since: float | None


def _beat_decoder(rank: int) -> Callable[[bytes, str], tuple[Beat | None, str | None]]:
    def decode(data: bytes, path: str) -> tuple[Beat | None, str | None]:
        beat, problem = json_object(data, path)
        if beat is None:
            return None, problem
        pg, seq = _progress(beat)
        pending = _in_flight(beat, rank, path)
        op = None
        if pending:
            pg, seq, op = pending[-1].pg, pending[-1].seq, pending[-1].op
        step = beat.get("step") if isinstance(beat.get("step"), int) else None
        return Beat(_number(beat.get("time")), step, pg, seq, op, _number(beat.get("in_flight_since"))), None
    return decode


def _worker_host(data: bytes, path: str) -> tuple[str | None, str | None]:
    worker, problem = json_object(data, path)
    return (str(worker.get("host")) if worker and worker.get("host") else None), problem


def _exit_info(data: bytes, path: str) -> tuple[tuple[TopState, int | None] | None, str | None]:
    """How the rank ended and the step its exit record gives (None: no exit record)."""
    info, problem = json_object(data, path)
    if info is None:
        return None, problem
    step = info.get("step") if isinstance(info.get("step"), int) else None
    if info.get("how") == "exception" or info.get("exception"):
        return (TopState.EXITED_ERROR, step), None
    code = info.get("exit_code")
    return ((TopState.EXITED_OK if code in (0, None) else TopState.EXITED_ERROR), step), None


def _crashed(data: bytes, _path: str) -> tuple[bool, None]:
    return bool(parse_faulthandler_signal(data[:MAX_TEXT].decode("utf-8", errors="replace"))), None


def _first_nonfinite(data: bytes, path: str) -> tuple[int | None, str | None]:
    """The step of the first NaN/Inf in numerics.json."""
    info, problem = json_object(data, path)
    first = info.get("first") if info else None
    step = first.get("step") if isinstance(first, dict) else None
    return (step if isinstance(step, int) else None), problem


RANK_FILES = frozenset({RankPaths.WORKER, RankPaths.HEARTBEAT, RankPaths.EXIT, RankPaths.FAULTHANDLER,
                        RankPaths.NUMERICS, RankPaths.FR_EXIT})


def _ended(directory: str, listing: dict[str, os.stat_result], files: FileCache,
           problems: list[str]) -> tuple[TopState, int | None] | None:
    """How the rank ended (None: it has not): a fatal signal in faulthandler.log, else exit.json."""
    fault = listing.get(RankPaths.FAULTHANDLER)
    if fault is not None and fault.st_size and files.get(
            f"{directory}/{RankPaths.FAULTHANDLER}", fault, _crashed, MAX_TEXT, problems):
        return TopState.CRASHED, None
    ended: tuple[TopState, int | None] | None = files.get(
        f"{directory}/{RankPaths.EXIT}", listing.get(RankPaths.EXIT), _exit_info, MAX_JSON, problems)
    return ended


def rank_line(rank: int, host: str, directory: str, now: float, limits: Limits, cache: LagCache,
              problems: list[str], listing: dict[str, os.stat_result] | None = None) -> RankLine:
    """One rank's line from its directory (``listing``: :func:`list_dir` of it, when the caller
    has it)."""
    files = cache.files
    if listing is None:
        listing = list_dir(directory, RANK_FILES)
    named = files.get(f"{directory}/{RankPaths.WORKER}", listing.get(RankPaths.WORKER), _worker_host, MAX_JSON,
                      problems)
    host = named or host
    beat: Beat | None = files.get(f"{directory}/{RankPaths.HEARTBEAT}", listing.get(RankPaths.HEARTBEAT),
                                  _beat_decoder(rank), MAX_JSON, problems)
    beat = beat or Beat(None, None, None, None, None, None)
    age = None if beat.time is None else max(0.0, now - beat.time)
    step, pg, seq, op = beat.step, beat.pg, beat.seq, beat.op
    in_coll = None if beat.since is None else max(0.0, now - beat.since)
    if op is None and pg is not None and seq is not None:
        op = cache.ops.get(rank, {}).get((pg, seq))
    ended = _ended(directory, listing, files, problems)
    if ended is not None:                  # it ended: its last beat is history
        state, final_step = ended
        age, step = None, final_step if final_step is not None else step
        if rank in cache.last:
            pg, seq, op = cache.last[rank]
    elif beat.time is None:
        state = TopState.STARTING
    elif age is not None and age >= limits.stale_after:
        state = TopState.NO_HEARTBEAT
    elif in_coll is not None:
        state = TopState.STUCK if in_coll >= limits.stuck_after else TopState.IN_COLLECTIVE
    else:
        state = TopState.RUNNING
    if state not in (TopState.IN_COLLECTIVE, TopState.STUCK, TopState.NO_HEARTBEAT):
        in_coll = None
    numerics = listing.get(RankPaths.NUMERICS)
    watched = numerics is not None and not stat.S_ISDIR(numerics.st_mode)
    nonfinite = files.get(f"{directory}/{RankPaths.NUMERICS}", numerics, _first_nonfinite, MAX_JSON, problems)
    return RankLine(rank, host, state, step, pg, seq, op, in_coll, age, cache.lags.get(rank),
                    rank in cache.stragglers, numerics=watched, nonfinite_step=nonfinite)


def take_snapshot(run_dir: Path, now: float, limits: Limits = Limits(),
                  cache: LagCache | None = None) -> tuple[Snapshot, LagCache]:
    """The snapshot and the lag cache to pass next time. Raises InputError when ``run_dir`` is no
    run directory."""
    run = RunPaths(run_dir)
    if not run_dir.is_dir():
        raise InputError(f"{run_dir}: no such directory", "pass the --run-dir of a `triage launch`")
    hosts = [h for h in run.hosts() if h.ranks_dir.is_dir()]
    if not run.is_run_dir() and not hosts:
        raise InputError(f"{run_dir}: not a run directory (no run.json, no <host>/ranks/)",
                         "pass the --run-dir of a `triage launch`")
    problems: list[str] = []
    ranks = _rank_dirs(hosts)
    cache = _lags(ranks, cache or LagCache(), problems)
    lines = [rank_line(item.rank, item.host.host, item.path, now, limits, cache, problems, item.listing)
             for item in ranks]
    lines.sort(key=lambda line: (line.rank, line.host))
    return Snapshot(str(run_dir), now, tuple(lines), cache.lines, cache.source, tuple(problems)), cache

