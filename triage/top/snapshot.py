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
from triage.regular_files import loads_json, open_regular

MAX_JSON = 4 * 1024 * 1024


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


def _json(path: Path, problems: list[str]) -> Any:
    try:
        with open_regular(path) as handle:
            data = handle.read(MAX_JSON + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        problems.append(f"{path}: cannot read ({exc.strerror or exc})")
        return None
    if len(data) > MAX_JSON:
        problems.append(f"{path}: larger than {MAX_JSON} bytes, skipped")
        return None
    try:
        return loads_json(data)
    except ValueError:
        problems.append(f"{path}: not JSON (being rewritten, or damaged)")
        return None


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


def _dump_files(hosts: list[HostPaths]) -> tuple[dict[int, tuple[Path, str]], str | None]:
    """rank -> (newest dump, host): the newest of the latest bundle's fr.json, the live straggler
    watch's fetch of it and fr-exit.json."""
    files: dict[int, tuple[Path, str]] = {}
    sources: set[str] = set()
    for host in hosts:
        bundles = host.bundles()
        for rank in host.ranks():
            found: list[tuple[float, Path, str]] = []
            candidates = [(host.live_fr(rank), "live straggler watch"), (host.rank(rank).fr_exit, "exit dumps")]
            if bundles:
                candidates.insert(0, (BundlePaths(bundles[-1]).rank(rank).fr_json, f"bundle {bundles[-1].name}"))
            for path, source in candidates:
                with contextlib.suppress(OSError):
                    if path.is_file():
                        found.append((path.stat().st_mtime, path, source))
            if found:
                _, chosen, source = max(found, key=lambda item: item[0])
                files[rank] = (chosen, host.host)
                sources.add(source)
    return files, (", ".join(sorted(sources)) or None)


def _lags(hosts: list[HostPaths], cache: LagCache, problems: list[str]) -> LagCache:
    files, source = _dump_files(hosts)
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
    return LagCache(tuple(key), lags, slow, lines, ops, source if evidence else None, last)


def _exit_state(paths: RankPaths, problems: list[str]) -> tuple[TopState | None, int | None]:
    """How the rank ended (None: it has not) and the step its exit record gives."""
    try:
        size = paths.faulthandler.stat().st_size
    except OSError:
        size = 0
    if size:
        try:
            with open_regular(paths.faulthandler) as handle:
                text = handle.read(256 * 1024).decode("utf-8", errors="replace")
        except OSError:
            text = ""
        if parse_faulthandler_signal(text):
            return TopState.CRASHED, None
    info = _json(paths.exit, problems)
    if not isinstance(info, dict):
        return None, None
    step = info.get("step") if isinstance(info.get("step"), int) else None
    if info.get("how") == "exception" or info.get("exception"):
        return TopState.EXITED_ERROR, step
    code = info.get("exit_code")
    return (TopState.EXITED_OK if code in (0, None) else TopState.EXITED_ERROR), step


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


def rank_line(rank: int, host: str, paths: RankPaths, now: float, limits: Limits, cache: LagCache,
              problems: list[str]) -> RankLine:
    worker = _json(paths.worker, problems)
    host = str(worker.get("host") or host) if isinstance(worker, dict) else host
    beat = _json(paths.heartbeat, problems)
    beat = beat if isinstance(beat, dict) else {}
    beat_time = _number(beat.get("time"))
    age = None if beat_time is None else max(0.0, now - beat_time)
    step = beat.get("step") if isinstance(beat.get("step"), int) else None
    pg, seq = _progress(beat)
    pending = _in_flight(beat, rank, str(paths.heartbeat))
    since = _number(beat.get("in_flight_since"))
    in_coll = None if since is None else max(0.0, now - since)
    op = None
    if pending:
        pg, seq, op = pending[-1].pg, pending[-1].seq, pending[-1].op
    elif pg is not None and seq is not None:
        op = cache.ops.get(rank, {}).get((pg, seq))
    state, final_step = _exit_state(paths, problems)
    if state is not None:                  # it ended: its last beat is history
        age, step = None, final_step if final_step is not None else step
        if rank in cache.last:
            pg, seq, op = cache.last[rank]
    else:
        if beat_time is None:
            state = TopState.STARTING
        elif age is not None and age >= limits.stale_after:
            state = TopState.NO_HEARTBEAT
        elif in_coll is not None:
            state = TopState.STUCK if in_coll >= limits.stuck_after else TopState.IN_COLLECTIVE
        else:
            state = TopState.RUNNING
    if state not in (TopState.IN_COLLECTIVE, TopState.STUCK, TopState.NO_HEARTBEAT):
        in_coll = None
    watched, nonfinite = _numerics(paths, problems)
    return RankLine(rank, host, state, step, pg, seq, op, in_coll, age, cache.lags.get(rank),
                    rank in cache.stragglers, numerics=watched, nonfinite_step=nonfinite)


def _numerics(paths: RankPaths, problems: list[str]) -> tuple[bool, int | None]:
    """(watched, the step of the first NaN/Inf) from numerics.json."""
    if not paths.numerics.is_file():
        return False, None
    data = _json(paths.numerics, problems)
    first = data.get("first") if isinstance(data, dict) else None
    step = first.get("step") if isinstance(first, dict) else None
    return True, step if isinstance(step, int) else None


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
    cache = _lags(hosts, cache or LagCache(), problems)
    lines = [rank_line(rank, host.host, host.rank(rank), now, limits, cache, problems)
             for host in hosts for rank in host.ranks()]
    lines.sort(key=lambda line: (line.rank, line.host))
    return Snapshot(str(run_dir), now, tuple(lines), cache.lines, cache.source, tuple(problems)), cache

