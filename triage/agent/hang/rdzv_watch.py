"""torchrun's own rendezvous: the launcher waits for nodes that never arrive (``--nnodes 2`` with
one node up). No rank has started, so no rank rule can see it.

While no rank of this node has registered, the watch reads the launcher's pid and argv from
``node.json`` and, from half a ``--hang-timeout`` on, asks a background thread for a
``py-spy dump --nonblocking`` of the launcher (never paused) every half timeout. A launcher whose
main thread is in torchelastic's rendezvous (``next_rendezvous``, ``dynamic_rendezvous.py``...)
for ``--hang-timeout`` (counted from the first probe that saw it there: it entered at most one
probe earlier) is reported as an init hang: how many nodes it wants (``--nnodes``, the minimum of
a range), how many are known to be there (the agents of this run directory: at least
this one), where (``--rdzv-endpoint``) and for how long.

When every node wanted already has an agent in the run directory, nothing is reported: the
nodes are up (a slow start), none is missing. The job is never stopped for it: a node may still
be waiting in a queue, and torchrun's own join timeout (``--rdzv-conf join_timeout=``, 600 s by
default in torch 2.x) ends the wait.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from triage.agent.hang import cluster_trigger
from triage.agent.hang.detect import HangSuspicion
from triage.agent.state import InitInfo, LocalRankStatus
from triage.layout import HostPaths
from triage.parsing.stacks import parse_pyspy_json
from triage.parsing.torchrun_args import (
    parse_torchrun_args,
    read_nnodes,
    read_rdzv_conf,
    read_seconds,
    torchrun_index,
)
from triage.private_files import read_json

RDZV_MARKERS = ("torch/distributed/elastic/rendezvous/",)
RDZV_FUNCTIONS = frozenset({"next_rendezvous", "_rendezvous"})
DEFAULT_JOIN_TIMEOUT_S = 600.0      # torch.distributed.elastic's RendezvousTimeout.join default


@dataclass(frozen=True)
class LauncherArgs:
    """What torchrun's command line says of its rendezvous."""

    nnodes_min: int | None = None
    backend: str | None = None
    endpoint: str | None = None
    run_id: str | None = None
    join_timeout: float = DEFAULT_JOIN_TIMEOUT_S


def launcher_args(argv: Sequence[str]) -> LauncherArgs:
    """torchrun's rendezvous options (``--nnodes 2:4`` -> 2); unknown or bad values stay None (or the
    default join timeout). Options are read after ``torchrun`` (or ``-m torch.distributed.run``), up to
    the program; a launcher named otherwise is read from its first option."""
    at = torchrun_index(argv)
    opts = parse_torchrun_args(argv, at if at is not None else 1)
    nnodes, _problem = read_nnodes(opts.get("--nnodes") or "")
    join = read_seconds(read_rdzv_conf(opts.get("--rdzv-conf") or "").get("join_timeout", str(DEFAULT_JOIN_TIMEOUT_S)))
    return LauncherArgs(nnodes_min=nnodes[0] if nnodes is not None else None,
                        backend=opts.get("--rdzv-backend") or None,
                        endpoint=(opts.get("--rdzv-endpoint") or "")[:120] or None,
                        run_id=(opts.get("--rdzv-id") or "")[:120] or None,
                        join_timeout=join if join is not None else DEFAULT_JOIN_TIMEOUT_S)


def in_rendezvous(data: object) -> bool:
    """The launcher's main thread is in torchelastic's rendezvous (py-spy JSON)."""
    threads = parse_pyspy_json(data)
    mains = [t for t in threads if t.is_main] or list(threads[:1])
    return bool(mains) and any(
        f.function.rsplit(".", 1)[-1] in RDZV_FUNCTIONS or any(m in f.filename for m in RDZV_MARKERS)
        for f in mains[0].frames)


@dataclass
class RendezvousWatch:
    timeout: float
    host_dir: Path
    run_dir: Path
    started: float
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _pid: int | None = None
    _args: LauncherArgs | None = None
    _probing: bool = False
    _probed_at: float = float("-inf")
    _seen_in: bool = False                  # the last probe found the launcher in its rendezvous
    _first_seen: float | None = None        # unix time of the first probe that found it there
    _done: bool = False                     # ranks started: the rendezvous is over
    _reported: bool = False                 # a suspicion was given
    went_on: str | None = None              # set once when reported nodes came after all (a finding)

    def tick(self, ranks: Sequence[LocalRankStatus], now: float) -> HangSuspicion | None:
        if self._done or any(r.pid is not None for r in ranks):
            if not self._done and self._reported and self._first_seen is not None:
                self.went_on = (f"slow start: torchrun's rendezvous waited {int(now - self._first_seen)} s for its "
                                "nodes; then they came and the job went on")
            self._done = True
            return None
        if self._pid is None and not self._read_node():
            return None
        waited = now - self.started
        with self._lock:
            seen, first = self._seen_in, self._first_seen
        # each second until seen there (for one timeout at most), then every half timeout
        every = self.timeout / 2 if seen or waited > self.timeout else min(1.0, self.timeout / 2)
        if waited >= min(1.0, self.timeout / 2) and now - self._probed_at >= every:
            self._probe(now)
        # counted from the first probe that saw the launcher there (it entered at most a probe earlier)
        if not seen or first is None or now - first < self.timeout or self._args is None:
            return None
        if self._known_nodes() >= (self._args.nnodes_min or 2):
            return None     # every node it wants has its agent running here: they are up, not missing
        self._reported = True
        return self._suspicion(now - first)

    def _read_node(self) -> bool:
        node = read_json(HostPaths(self.host_dir).node)
        pid, argv = node.get("launcher_pid"), node.get("argv")
        if not isinstance(pid, int) or not isinstance(argv, list):
            return False
        args = launcher_args([str(a) for a in argv])
        if args.nnodes_min is None or args.nnodes_min < 2:
            self._done = True               # a single-node launcher waits for nobody
            return False
        self._pid, self._args = pid, args
        return True

    def _probe(self, now: float) -> None:
        with self._lock:
            if self._probing:
                return
            self._probing = True
        self._probed_at = now
        threading.Thread(target=self._sample, args=(now,), name="triage-rdzv-probe", daemon=True).start()

    def _sample(self, started: float) -> None:
        from triage.collectors.pyspy import python_children, sample_stacks  # only when it probes

        try:
            found = False
            for pid in [self._pid, *python_children(self._pid or 0)[:2]]:
                if pid is None:
                    continue
                data, _error = sample_stacks(pid)
                if data is not None:
                    found = in_rendezvous(data)
                    break
            with self._lock:
                self._seen_in = found
                if found and self._first_seen is None:
                    self._first_seen = started
        finally:
            with self._lock:
                self._probing = False

    def _known_nodes(self) -> int:
        try:
            return max(1, len(set(cluster_trigger.run_hosts(self.run_dir))))
        except Exception:  # noqa: BLE001 - this node at least
            return 1

    def _suspicion(self, waited: float) -> HangSuspicion:
        args = self._args or LauncherArgs()
        wanted = args.nnodes_min or 2
        known = min(self._known_nodes(), wanted - 1)
        where = f"{args.backend or 'c10d'} at {args.endpoint}" if args.endpoint else (args.backend or "c10d")
        # (known: the nodes whose agent is up in the run directory; not which of them reached the endpoint)
        message = (f"init hang: torchrun's rendezvous ({where}) has waited {int(waited)} s for its {wanted} nodes "
                   f"(--nnodes); no rank has started; triage's agent is up on {known} of them, "
                   f"{wanted - known} did not start, are still queued or cannot reach "
                   f"{args.endpoint or 'the endpoint'}")
        info = InitInfo(waiting=(), never_joined=(), where="torchrun's rendezvous", store=args.endpoint,
                        key=args.run_id, seconds=waited, nodes_joined=known, nodes_wanted=wanted)
        return HangSuspicion(message=message, ranks=(), key=("rendezvous", wanted), source="rendezvous",
                             culprits=(), waiting=f"torchrun's rendezvous waiting for {wanted - known} more "
                             f"node{'s' if wanted - known != 1 else ''}", init=info)

    @property
    def join_timeout(self) -> float:
        return self._args.join_timeout if self._args is not None else DEFAULT_JOIN_TIMEOUT_S


__all__ = ["DEFAULT_JOIN_TIMEOUT_S", "LauncherArgs", "RendezvousWatch", "in_rendezvous", "launcher_args"]
