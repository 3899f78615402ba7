"""The agent's live straggler watch: a warning line while the job runs, and py-spy samples of the
rank that holds the others back.

Every ``check_interval_s`` (default 60 s) the agent asks each live local rank for its Flight
Recorder (the worker's control socket: ``fr PATH``, else the ``dump`` request of ``triage dump``) into
``<host>/stragglers/fr/rank-<r>/``, and runs the report's own straggler analysis
(:func:`triage.analysis.stragglers.find_stragglers`) over those dumps (plus the other nodes' fresh
ones when the run directory is shared): the same gates, the same figures. A straggler with a rank
of this node, named in ``confirm_checks`` checks in a row (default 2), is persistent:

- one line, at most every ``warn_interval_s`` (default 300 s), e.g.
  ``triage: rank 1 (node03) arrives last at 92% of collectives, +41 ms median; 18% of wall time lost``;
- with the line (it ends with what they show), a py-spy recording of that rank (``sample_seconds``
  at ``SAMPLE_RATE_HZ``, never pausing it), at most every ``sample_interval_s`` (default 600 s) and
  ``max_samples`` (default 3) per run, in ``<host>/stragglers/rank-<r>-<time>.pyspy.txt``;
  each line is also appended to
  ``<host>/stragglers/warnings.jsonl`` with its figures; at the end, ``watch.json`` says how many
  checks ran and the CPU time they took.

The decision (:class:`WarnPolicy`) is pure; fetching dumps and sampling run in one thread of
their own, so the agent's log pump never waits for them. docs/stragglers.md has the policy.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from triage.agent.state import AgentContext, LocalRankStatus
from triage.collectors.worker_client import request_dump, send_command
from triage.layout import HostPaths, RankPaths, RunPaths
from triage.options import StragglerSettings
from triage.private_files import write_json_atomic

if TYPE_CHECKING:
    from triage.analysis.stragglers import Straggler, StragglerResult

SAMPLE_RATE_HZ = 20
DUMP_TIMEOUT_S = 10.0
MAX_SAMPLE_BYTES = 4 * 1024 * 1024



@dataclass(frozen=True)
class Decision:
    straggler: Straggler | None = None     # the persistent straggler, if any
    warn: str | None = None                # the line to print now (without the ``triage: `` prefix)
    sample: int | None = None              # the rank to record with py-spy now


@dataclass
class WarnPolicy:
    """Pure: from each check's stragglers, which line to print and which rank to sample, when."""

    settings: StragglerSettings
    streak: dict[tuple[str, tuple[int, ...]], int] = field(default_factory=dict)
    last_warn: float | None = None
    last_sample: float | None = None
    samples: int = 0

    def decide(self, found: Sequence[Straggler], now: float, local: Sequence[int]) -> Decision:
        """``found``: this check's stragglers; ``local``: this node's ranks (the agent speaks for
        them alone: a straggler of another node is that node's agent's line)."""
        mine = set(local)
        keys = {(s.pg, s.ranks): s for s in found if mine & set(s.ranks)}    # each node speaks for its ranks
        self.streak = {key: self.streak.get(key, 0) + 1 for key in keys}
        persistent = [s for key, s in keys.items() if self.streak[key] >= self.settings.confirm_checks]
        if not persistent:
            return Decision()
        worst = max(persistent, key=lambda s: (s.lost_s, s.median_lag_ms))
        warn = None
        if self.last_warn is None or now - self.last_warn >= self.settings.warn_interval_s:
            from triage.analysis.stragglers import short_line
            self.last_warn, warn = now, short_line(worst)
        sample = None
        candidates = [r for r in worst.ranks if r in mine]
        if warn is not None and candidates and self.samples < self.settings.max_samples and (
                self.last_sample is None or now - self.last_sample >= self.settings.sample_interval_s):
            self.last_sample, self.samples, sample = now, self.samples + 1, candidates[0]
        return Decision(worst, warn, sample)


def analyze_dumps(files: Mapping[int, tuple[Path, str | None]]) -> tuple[StragglerResult, list[str]]:
    """The report's straggler analysis over one FR dump per rank (rank -> (path, host)); the
    dumps that could not be read, as one line each."""
    # The loaders and the analysis: imported at the first comparison, not by every agent at start.
    from triage.analysis.groups import resolve_groups
    from triage.analysis.stragglers import find_stragglers
    from triage.load.fr_files import load_fr_dumps

    evidence, problems = load_fr_dumps(files)
    traces = {r.rank: r.collectives for r in evidence}
    return find_stragglers(resolve_groups(tuple(evidence), None), traces, {r.rank: r.host for r in evidence}), problems


def summarize_samples(raw: str) -> str | None:
    """The main thread's most frequent innermost frame in a py-spy raw (folded: ``outer;...;inner
    COUNT`` per line) recording, with its share: ``pause (job.py:21) in 87% of 60 samples``.
    Threads started by ``threading`` (their stacks begin in ``Thread._bootstrap``) are left out."""
    leaves: Counter[str] = Counter()
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        if count.isdigit() and frames[0] and not frames[0].startswith("Thread._bootstrap"):   # threading's threads
            leaves[frames[-1]] += int(count)
    total = sum(leaves.values())
    if not total:
        return None
    frame, hits = leaves.most_common(1)[0]
    return f"{frame} in {100 * hits / total:.0f}% of {total} samples"


def fetch_fr(target: RankPaths, path: Path) -> Path | None:
    """The rank's Flight Recorder written to ``path`` (named ``fr.json``), or None. A worker that knows
    ``fr PATH`` writes that file alone; an older one answers "unknown command" and gets the full
    ``dump`` request into ``path``'s directory, which also writes stacks.txt and fr.pickle there (the
    first pickle costs it ~2 s of CPU)."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        reply = send_command(target, f"fr {path}", DUMP_TIMEOUT_S)
    except (OSError, LookupError, ValueError, TypeError):
        return None
    if reply.get("ok") is True and path.is_file():
        return path
    if "unknown command" in str(reply.get("error")) and request_dump(target, path.parent, DUMP_TIMEOUT_S).ok:
        return path if path.is_file() else None
    return None


STALLED_S = 10.0


def stalled(status: LocalRankStatus) -> bool:
    """No progress for STALLED_S seconds: slow is not the question then (the hang monitor's is),
    and a dump request would only add work to a rank that may be sampled for a hang."""
    return status.progress_age_s is not None and status.progress_age_s > STALLED_S


class StragglerWatch:
    """The agent's side: ``on_tick`` starts a check when one is due (in a thread), ``close`` waits."""

    def __init__(self, ctx: AgentContext, settings: StragglerSettings, say: Callable[[str], None]) -> None:
        self.ctx, self.settings, self.say = ctx, settings, say
        self.policy = WarnPolicy(settings)
        self.paths = HostPaths(ctx.host_dir)
        self.files = self.paths.stragglers
        self.next_check = time.time() + settings.check_interval_s
        self.thread: threading.Thread | None = None
        self.checks = 0
        self.cpu_s = 0.0
        self.problems: list[str] = []      # the last dumps that could not be read (in watch.json)

    def on_tick(self, statuses: Sequence[LocalRankStatus], now: float, busy: bool = False) -> None:
        """``busy``: the job is being stopped or the hang monitor is collecting: no check then."""
        if not self.settings.enabled or busy or now < self.next_check:
            return
        if self.thread is not None and self.thread.is_alive():
            return
        self.next_check = now + self.settings.check_interval_s
        live = tuple(s for s in statuses if s.alive and s.pid is not None and s.paths is not None)
        if not live or any(stalled(s) for s in live):     # one rank: others may share the run dir
            return
        self.thread = threading.Thread(target=self._check_safely, args=(live,), name="triage-stragglers",
                                       daemon=True)
        self.thread.start()

    def close(self, timeout: float) -> None:
        """Wait for a check under way; write ``watch.json`` (what the watch did and cost) when it ran."""
        thread = self.thread
        if thread is not None:
            thread.join(timeout)
        if self.checks:
            with contextlib.suppress(OSError):
                write_json_atomic(self.files.summary, {
                    "checks": self.checks, "cpu_s": round(self.cpu_s, 4), "samples": self.policy.samples,
                    "check_interval_s": self.settings.check_interval_s, "problems": self.problems})

    def _check_safely(self, live: tuple[LocalRankStatus, ...]) -> None:
        started = time.thread_time()
        try:
            self.check(live, time.time())
        except Exception as exc:  # noqa: BLE001 - the watch must never disturb the agent or the job
            self.say(f"straggler watch error: {type(exc).__name__}: {exc}")
        finally:
            self.cpu_s += time.thread_time() - started     # this thread only (py-spy is a process of its own)

    def check(self, live: Sequence[LocalRankStatus], now: float) -> Decision:
        """One check: fetch every live rank's FR, analyze, warn and sample as the policy says."""
        self.checks += 1
        files: dict[int, tuple[Path, str | None]] = {}
        for status in live:
            if status.paths is None:
                continue
            fetched = fetch_fr(status.paths, self.files.live_fr(status.rank))
            if fetched is not None:
                files[status.rank] = (fetched, status.host)
        result, problems = analyze_dumps({**self.other_hosts(now), **files})
        self.problems = (self.problems + problems)[-10:]
        decision = self.policy.decide(result.stragglers, now, [s.rank for s in live])
        if decision.straggler is None:
            return decision
        if decision.warn is None:
            return decision
        line, sample_path = decision.warn, None
        pid = next((s.pid for s in live if s.rank == decision.sample), None)
        if decision.sample is not None and pid is not None:
            sample_path = self.files.sample(decision.sample, time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now)))
            line += "; " + self.record(decision.sample, pid, sample_path)     # one line: wait for the samples
        self.say(line)
        self._log(decision.straggler, now, sample_path if sample_path and sample_path.is_file() else None, line)
        return decision

    def other_hosts(self, now: float) -> dict[int, tuple[Path, str | None]]:
        """The live dumps other nodes' agents left in a shared run directory, when fresh (from
        their last two checks): rank -> (path, host). Empty when the run directory is per node."""
        out: dict[int, tuple[Path, str | None]] = {}
        for host in RunPaths(self.ctx.run_dir).hosts():
            if host.root == self.ctx.host_dir:
                continue
            for rank in host.stragglers.live_fr_ranks():
                path = host.live_fr(rank)
                try:
                    age = now - path.stat().st_mtime
                except OSError:
                    continue
                if age <= 2 * self.settings.check_interval_s + 5.0:
                    out.setdefault(rank, (path, host.host))
        return out

    def _log(self, straggler: Straggler, now: float, sample: Path | None, line: str) -> None:
        entry = {"time": now, "line": line, "samples": str(sample) if sample else None,
                 **straggler.to_json()}
        with contextlib.suppress(OSError):
            self.files.root.mkdir(mode=0o700, parents=True, exist_ok=True)
            with open(self.files.warnings, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(entry) + "\n")

    def record(self, rank: int, pid: int, path: Path) -> str:
        """``py-spy record`` of one rank (never paused, idle frames kept: a sleeping rank shows
        where it sleeps) into ``path``; what it found, for the warning line."""
        from triage.collectors.common import run_tool
        from triage.collectors.pyspy import find_pyspy

        tool, looked = find_pyspy()
        if tool is None:
            return f"no py-spy samples of rank {rank}: py-spy not found (looked in {looked})"
        seconds = self.settings.sample_seconds
        run = run_tool([tool, "record", "--pid", str(pid), "--duration", str(seconds), "--rate",
                        str(SAMPLE_RATE_HZ), "--nonblocking", "--idle", "--format", "raw", "--output", str(path)],
                       seconds + 30.0, MAX_SAMPLE_BYTES)
        try:
            raw = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            raw = ""
        if not raw:
            why = run.start_error or ("timed out" if run.timed_out else run.stderr_text.splitlines()[-1:] or ["?"])
            return f"no py-spy samples of rank {rank}: {why if isinstance(why, str) else why[0]}"
        with contextlib.suppress(OSError):
            path.chmod(0o600)
        top = summarize_samples(raw)
        return f"py-spy samples of rank {rank} ({seconds} s): " + (f"{top} -> " if top else "") + str(path)
