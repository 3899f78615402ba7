"""What log texts said, accumulated per rank while they are scanned (triage.load.logs.text), and the
small helpers the scanners share."""

from __future__ import annotations

import signal
from collections import deque
from dataclasses import dataclass, field

from triage.load.logs.facts import WorldSize
from triage.model import Collective
from triage.model.evidence import (
    Event,
    ExitInfo,
    InitWaitRecord,
    NcclProcess,
    OpCountSplit,
    ProseAccount,
    ReportedLag,
    ReportedMismatch,
    StopDecision,
)
from triage.parsing.crashlog import CrashLine
from triage.parsing.raise_sites import RaiseSite
from triage.parsing.unread_failure import UnreadFailure

# how a launcher's record that tells only an exit code of a process of no known rank is said (finish.py knows such a
# line by it: a rank's own record says more)
EXIT_CODE_RECORD = "exited with code "
# ... and one that tells a process failed, not with which code (Slurm's "FAILED (non-zero exit code)", the training
# operator's "replica(s) failed", the kubelet's "Back-off restarting failed container"): no code is made up for it
EXIT_UNSAID_RECORD = "failed (its exit code is not in this input)"
EXIT_RECORDS = (EXIT_CODE_RECORD, EXIT_UNSAID_RECORD)

FAILURE_CLUSTER_LINES = 6       # failure lines of one rank this close together are one failure
LAST_LINES = 6
TAIL_LINES = 16               # unprefixed lines kept (rank 0's work is often followed by other processes' noise)
MAX_UNPARSED = 40


class LineHosts:
    """The hosts of failure lines of no known rank (scan.orphans), by the line: by its identity, since two lines of the
    same words from two nodes are two lines. Each entry holds its line, so the line lives as long as its entry and no
    line made later can take its id (a line freed once its host was told handed its id, and so its host, to the next
    line made)."""

    def __init__(self) -> None:
        self._of: dict[int, tuple[CrashLine, str]] = {}

    def get(self, line: CrashLine) -> str | None:
        entry = self._of.get(id(line))
        return entry[1] if entry is not None and entry[0] is line else None

    def __contains__(self, line: CrashLine) -> bool:
        return self.get(line) is not None

    def __setitem__(self, line: CrashLine, host: str) -> None:
        self._of[id(line)] = (line, host)

    def setdefault(self, line: CrashLine, host: str) -> None:
        if line not in self:
            self[line] = host

    def pop(self, line: CrashLine) -> str | None:
        host = self.get(line)
        if host is not None:
            del self._of[id(line)]
        return host

    def moved(self, line: CrashLine, to: CrashLine) -> None:
        """``line`` was put in the orphans' list as ``to`` (its words marked): its host goes with it."""
        if (host := self.pop(line)) is not None:
            self[to] = host

    def values(self) -> list[str]:
        return [host for _, host in self._of.values()]

    def __len__(self) -> int:
        return len(self._of)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LineHosts) and list(self._of.values()) == list(other._of.values())

    def __repr__(self) -> str:
        return f"LineHosts({[(line.text[:40], host) for line, host in self._of.values()]!r})"


@dataclass
class LogScan:
    """What one or more log texts told us, per rank."""

    collectives: dict[int, list[Collective]] = field(default_factory=dict)
    hosts: dict[int, str] = field(default_factory=dict)
    pids: dict[int, int] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    world_size: int | None = None
    world_source: str | None = None
    ranks_seen: set[int] = field(default_factory=set)
    exits: dict[int, ExitInfo] = field(default_factory=dict)           # launcher summaries
    failures: dict[int, list[tuple[int, CrashLine, str]]] = field(default_factory=dict)  # (order, line, path)
    orphans: list[tuple[int, CrashLine, str]] = field(default_factory=list)  # failures of no known rank
    last_lines: dict[int, deque[str]] = field(default_factory=dict)
    mismatches: list[ReportedMismatch] = field(default_factory=list)
    unparsed: list[str] = field(default_factory=list)
    lines_read: int = 0                                                 # order of the next line
    nccl_processes: list[NcclProcess] = field(default_factory=list)   # NCCL ops of no known rank
    orphan_hosts: LineHosts = field(default_factory=LineHosts)         # orphan line -> its host
    pg_of: dict[tuple[int, int], str] = field(default_factory=dict)    # (rank, seq) -> pg, from the watchdog
    detected: dict[tuple[int, int], int] = field(default_factory=dict)  # (rank, seq) the watchdog flagged
    first_timeout: dict[int, int] = field(default_factory=dict)        # rank -> order of its first timeout
    _timeouts: set[tuple[int | None, str | None, int | None]] = field(default_factory=set)
    init_waits: list[InitWaitRecord] = field(default_factory=list)
    op_count_splits: list[OpCountSplit] = field(default_factory=list)   # NCCL RAS reports
    lagging: list[ReportedLag] = field(default_factory=list)             # desync reports
    unprefixed_tail: deque[str] = field(default_factory=lambda: deque(maxlen=TAIL_LINES))
    message_rank: tuple[int, int] | None = None     # (rank, order) of the last unprefixed line naming its rank
    task_list: int | None = None     # the order of the line a coordination error's list of absent tasks goes on after
    spawn_owner: int | None = None          # mp.spawn: the process whose traceback the unprefixed lines are
    launcher: str | None = None             # the launcher that started the ranks (triage.parsing.launcher_kind)
    launcher_shown: str | None = None       # the launcher whose own output the text shows (not its command line)
    shows_gpu: bool = False                 # a GPU's word is in the text (triage.parsing.gpu_words)
    shows_rocm: bool = False                # ROCm's words, none of CUDA's own (triage.parsing.gpu_words)
    stack: str | None = None                # the framework the text names (triage.parsing.stack_words)
    platform: str | None = None             # the platform that ran the job (triage.parsing.platform_words)
    shows_nccl: bool = False                # NCCL's name is in the text (or its lines were read from the whole file)
    agent_stopped: tuple[int, ...] = ()     # pids torchrun's agent sent a closing signal (alive then)
    spawn_owners: set[int] = field(default_factory=set)   # every mp.spawn process whose error block is shown
    spawn_header: tuple[int, str, str] | None = None   # (order, text, path) of the first mp.spawn error block's head
    duplicate_gpus: dict[tuple[int, int], set[str]] = field(default_factory=dict)  # rank pair -> devices told
    duplicate_hosts: dict[int, str] = field(default_factory=dict)   # order of a duplicate-GPU line -> its host
    spawn_bootstrap: int | None = None      # order of a spawned child's start-up frame (its parent had gone)
    worker_start: int | None = None         # order of torchrun's agent's worker-start frame (its --no-python Popen)
    glog_fatal: tuple[int, int | None] | None = None   # (order, rank) of the last glog FATAL line
    barrier_error: tuple[int, bool] | None = None  # (order, its 'Original exception:' seen) of a monitoredBarrier line
    stop: StopDecision | None = None      # triage's own stop record in a merged.log (the earliest)
    # rank (-1: none known) -> order of its NCCL "Last error:" line
    last_error: dict[int, int] = field(default_factory=dict)
    tracebacks: list[tuple[int | None, int, str]] = field(default_factory=list)   # (rank, order, path) of headers
    job_errors: set[int] = field(default_factory=set)   # orders of those heads that are Hydra's job error line
    # order of an exception line of no rank -> how many tracebacks of no rank were open together where it ended them
    open_together: dict[int, int] = field(default_factory=dict)
    # frames that raise one thing only (triage.parsing.raise_sites): (rank, order, path, site), resolved at the end
    raise_sites: list[tuple[int | None, int, str, RaiseSite]] = field(default_factory=list)
    _init_seen: set[tuple[int | None, str, int | None, str | None, tuple[int, ...], bool]] = field(
        default_factory=set)
    store_waits: list[InitWaitRecord] = field(default_factory=list)   # store get/wait timeouts, resolved at the end
    rank_prefixed: bool = False      # some line carried a rank, local-rank or process prefix
    over_nodes: bool = False         # pdsh ran the launch (DeepSpeed's runner over several nodes)
    sole_process: bool = False       # the processes announce one: rank 0 of a world of one
    # lines whose head names a rank or local rank (not only a [host:pid] process), and the processes heads name
    rank_heads: bool = False
    process_heads: set[str] = field(default_factory=set)
    past_init: bool = False          # the input shows the job past its first collective (progress, collectives)
    # lines in plain words naming a rank and a failure that nothing else tied to a rank: (order, rank, line,
    # path); read only when the input ties no line to any rank (triage.parsing.named_failure)
    named_failures: list[tuple[int, int, CrashLine, str]] = field(default_factory=list)
    # failure lines in words triage has no reader for, of no rank: (order, line, host, path); read only when the input
    # shows no other failure (triage.parsing.unread_failure, triage.load.logs.endings.unread_failures)
    unread: list[tuple[int, UnreadFailure, str | None, str]] = field(default_factory=list)
    # such lines (of both kinds) after which the same process printed its training progress: it went on past them,
    # so they are notes, never the failure (triage.parsing.progress)
    went_on: list[str] = field(default_factory=list)
    # failure lines of no reader whose own words say the program went on past them ("..., skipping": (order, line),
    # triage.parsing.unread_failure.gone_on_failure): notes (went_on) where a line of the text follows them
    gone_on: list[tuple[int, str]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)   # "PATH: what was not read" (a large log's cut middle)
    prose: ProseAccount = field(default_factory=ProseAccount)   # the reporter's sentences (the first text's that has)
    # rank -> order of srun's record that the rank's task was killed by a signal: a failure line of no rank after it is
    # not that task's own (a killed process prints nothing after its death) but its caller's account of the step
    killed_at: dict[int, int] = field(default_factory=dict)
    srun_records: dict[int, list[int]] = field(default_factory=dict)   # rank -> orders of srun's records of its task
    job_config: str | None = None   # a program's check that the job's process count does not fit (job_config)
    job_config_rank: int | None = None   # the rank the check's line's prefix names


def record_world(scan: LogScan, facts: WorldSize | None) -> None:
    if facts is None:
        return
    if scan.world_size is None or facts.size > scan.world_size:
        scan.world_size, scan.world_source = facts.size, facts.source


def signal_number(name: str | None) -> int | None:
    if not name:
        return None
    try:
        return int(signal.Signals[name])
    except KeyError:
        return None
