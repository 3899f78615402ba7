"""What the node agent knows about each local rank, and the hook a hang monitor plugs into.

Contract between the launch side (supervisor, log pump, heartbeat reader) and the detection
and collection side (hang monitor, collectors). The agent builds a fresh tuple of
:class:`LocalRankStatus` every tick and hands it to the monitor.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from triage.layout import RankPaths
from triage.model import Collective, Verdict

if TYPE_CHECKING:     # the busy sampler (py-spy, psutil) is imported when a hang is suspected
    from triage.agent.hang.busy import FirstSample


@dataclass(frozen=True)
class LocalRankStatus:
    rank: int                       # global rank
    local_rank: int | None
    host: str
    pid: int | None                 # None until the worker registered
    alive: bool
    returncode: int | None          # exit status once gone (negative = killed by that signal)
    heartbeat_age_s: float | None   # seconds since the last heartbeat was written
    progress_age_s: float | None    # seconds since FR progress (any pg's seq) or the step counter moved
    in_flight: Collective | None    # the collective the rank is waiting in, if any
    progress: tuple[tuple[str, int], ...] = ()   # (pg id, latest collective seq) pairs
    step: int | None = None         # from triage.step()
    paths: RankPaths | None = None
    exiting: bool = False           # its exit record is written: past all user code, finalizing


@dataclass(frozen=True)
class InitInfo:
    """A hang before the first collective, as the agent saw it (kept in the bundle's
    ``extra.init``; read back by triage.load.agent_facts)."""

    waiting: tuple[int, ...]            # ranks waiting in their start-up call
    never_joined: tuple[int, ...]       # local ranks that have not reached it
    where: str                          # "init_process_group" | "torchrun's rendezvous"
    store: str | None = None            # MASTER_ADDR:MASTER_PORT (or the rendezvous endpoint)
    key: str | None = None              # the store key waited on, when known
    seconds: float | None = None        # how long they have waited
    nodes_joined: int | None = None     # torchrun's rendezvous: nodes there and nodes wanted
    nodes_wanted: int | None = None

    def to_json(self) -> dict[str, object]:
        return {"waiting": list(self.waiting), "never_joined": list(self.never_joined), "where": self.where,
                "store": self.store, "key": self.key,
                "seconds": round(self.seconds, 1) if self.seconds is not None else None,
                "nodes_joined": self.nodes_joined, "nodes_wanted": self.nodes_wanted}


class MonitorActionKind(str, enum.Enum):
    COLLECT = "collect"             # gather a node bundle now (trigger + reason given)
    CHECK = "check"                 # sample the ranks again: still busy, or blocked now?


@dataclass(frozen=True)
class MonitorAction:
    kind: MonitorActionKind
    trigger: str                    # a triage.bundle.Trigger value
    reason: str                     # one line, printed as ``triage: hang suspected: ...``
    ranks: tuple[int, ...] = ()
    certain: str | None = None      # hang: why the job cannot recover (None: sample ``sample`` first)
    sample: tuple[tuple[int, int], ...] = ()    # (rank, pid) of the ranks to sample
    waiting: str = ""               # ``ranks 1-2 waiting in barrier`` (for the busy line)
    since: float | None = None      # unix time the stall began
    outside: bool = True            # a local rank is outside any collective (else: the culprit may be remote)
    source: str = ""                # the rule that found the hang: progress | nccl | watchdog | init
    init: InitInfo | None = None    # source init: who waits where, who never joined
    first_sample: FirstSample | None = None    # the first busy/blocked sample of ``sample``, taken ahead


class Monitor(Protocol):
    """Plugged into the node agent. Every method must return fast and never raise."""

    def on_tick(self, ranks: Sequence[LocalRankStatus], now: float) -> MonitorAction | None: ...

    def on_output(self, rank: int, chunk: bytes) -> None:
        """New bytes of a rank's output (whole lines). Scan with ``in``/regex on the chunk, not per line."""
        ...

    def on_rank_exit(self, status: LocalRankStatus) -> MonitorAction | None: ...

    def on_outcome(self, action: MonitorAction, busy: str | None, gone: bool = False) -> None:
        """The action is done; ``busy`` says who is busy when the ranks were found busy (no stop);
        ``gone``: a sampled rank exited meanwhile (nothing concluded)."""
        ...


@dataclass(frozen=True)
class AgentContext:
    """What a monitor or collector needs to know about the run it serves."""

    job_id: str
    host: str
    run_dir: Path
    host_dir: Path
    started: float                  # unix time the agent started


@dataclass(frozen=True)
class ActionOutcome:
    bundle: Path | None          # the node bundle written, if any
    stop_job: bool               # the agent must stop the job and exit with ExitCode.HANG_DETECTED
    message: str = ""            # already printed; kept for logs/tests
    busy: str | None = None      # the ranks were found busy: who is busy where (the job is left running)
    gone: bool = False           # a sampled rank exited while being sampled: nothing concluded
    verdict: Verdict | None = None   # the job's verdict, fixed when the agent decided to stop it
    stop_at: float | None = None     # the unix time every node stops the job (the decider's stop.json)
