"""Frozen "evidence": everything the loaders read, in a form the pure analysis can use.

Loading (triage.load.inputs) does all the I/O and fills these; ``analyze`` turns them into
a Report without touching the disk.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from triage.model import Collective, SeqHistory, Verdict
from triage.model.backtrace import CrashLogFacts, GdbBacktrace, PythonFrame, PythonStack
from triage.model.numerics import RankNumerics

if TYPE_CHECKING:     # (a node's GPU facts come with a run directory: a log's report leaves their module unloaded)
    from triage.model.gpu import NodeGpus


class EventKind(str, enum.Enum):
    WATCHDOG_TIMEOUT = "watchdog_timeout"
    NCCL_WARN = "nccl_warn"
    XID = "xid"
    SEGFAULT = "segfault"
    OOM = "oom"
    LAUNCHER_FAILURE = "launcher_failure"   # torchrun's "Failures:" summary / torchelastic error file
    EXCEPTION = "exception"                 # a Python traceback in a rank's output
    CRASH_ANALYSIS = "crash_analysis"       # a core/gdb classification (see crash_findings)
    AGENT_DIED = "agent_died"               # a node agent left no end record (triage.load.agent_end)
    DISK_FULL = "disk_full"                 # a rank's disk guard said the run directory's disk was full


# The start of the ``skipped`` note for a node that left no bundle when another node collected
# for a hang (see load_run); analysis turns these notes into ``missing_node`` findings.
MISSING_NODE_REASON = "no node bundle from host"


@dataclass(frozen=True)
class Event:
    """Something a log or kernel message says happened, attributed to a rank when possible."""

    kind: EventKind
    detail: str
    rank: int | None = None
    host: str | None = None
    time: float | None = None               # unix seconds
    evidence: tuple[str, ...] = ()
    pg: str | None = None
    seq: int | None = None
    op: str | None = None
    count: int | None = None
    fatal: bool = False                     # hardware/driver errors that stop a GPU
    order: int | None = None                # line order across the inputs (logs): earlier came first


@dataclass(frozen=True)
class ReportedFingerprint:
    """One side of a DETAIL mismatch error: what a rank was running."""

    rank: int
    seq: int | None
    op: str | None
    shapes: tuple[tuple[int, ...], ...]
    dtypes: tuple[str, ...]


@dataclass(frozen=True)
class ReportedMismatch:
    """``Detected mismatch between collectives``: the reporting rank's call and the other rank's."""

    reporter: ReportedFingerprint
    other: ReportedFingerprint
    evidence: tuple[str, ...] = ()
    order: int | None = None


@dataclass(frozen=True)
class NcclProcess:
    """A process whose NCCL lines no line ties to a rank: named ``host:pid (GPU n)``."""

    host: str
    pid: int
    gpu: int | None
    collectives: tuple[Collective, ...]      # its busiest communicator's last ops (rank -1, seq = opCount+1)
    nranks: int | None = None

    @property
    def label(self) -> str:
        return f"{self.host}:{self.pid}" + (f" (GPU {self.gpu})" if self.gpu is not None else "")


# How a rank's end is said when its launcher saw it die after its own exit record said exit 0 (a
# crash in the interpreter's teardown: triage.load.teardown); the verdict's advice keys on it.
AFTER_EXIT_RECORD = "at exit, after its work had finished"


@dataclass(frozen=True)
class ExitInfo:
    """How a rank ended: from exit.json, torchelastic error files or launcher summaries."""

    exit_code: int | None = None            # None when killed by a signal
    signal: int | None = None
    signal_name: str | None = None
    time: float | None = None               # unix seconds
    message: str | None = None              # exception type + message, one line
    evidence: tuple[str, ...] = ()
    # from a log line rather than an exit record: what the line says (a CrashLineKind value:
    # "cuda_oom", "cuda_error", "network", ...), where it stands (line order across the inputs),
    # and whether such a line is usually a consequence of another rank's failure
    failure_kind: str | None = None
    order: int | None = None
    collateral: bool = False
    host: str | None = None                 # the host a failure line names (NCCL's host:pid head, a link's peer)
    # an exit record whose code no sys.exit() or exception set: the interpreter ended, but a SystemExit
    # raised without sys.exit() (raise SystemExit(3), the exit() builtin) is not seen inside the rank
    code_unseen: bool = False

    @property
    def ok(self) -> bool:
        return self.signal is None and self.exit_code == 0


@dataclass(frozen=True)
class PgMembers:
    """A process group's members as one source named them."""
    pg: str
    name: str | None
    ranks: tuple[int, ...] | None           # global ranks, None when the source did not say


@dataclass(frozen=True)
class RankEvidence:
    """What the inputs hold about one rank, before any verdict."""
    rank: int
    host: str | None = None
    pid: int | None = None
    world_size: int | None = None
    collectives: tuple[Collective, ...] = ()
    has_trace: bool = False                 # a Flight Recorder dump or NCCL op lines were read
    trace_at_exit: bool = False             # the FR was saved when the rank exited normally
    groups: tuple[PgMembers, ...] = ()
    stack: tuple[str, ...] = ()             # innermost first, "file:line in func"
    stack_top: str | None = None
    in_collective: bool | None = None       # from the stack: waiting inside a collective call
    alive: bool | None = None
    exit: ExitInfo | None = None
    evidence: tuple[str, ...] = ()
    # (pg, history) for every group the rank recorded in, when ``collectives`` holds only the last
    # ones (large dump directories); empty when ``collectives`` is complete
    histories: tuple[tuple[str, SeqHistory], ...] = ()
    last_lines: tuple[str, ...] = ()         # a log's last lines of this rank (what it was doing)
    stack_collective: str | None = None      # the torch.distributed call its stack waits in ("all_reduce")
    # sampled (a bundle holds its folder) but no stack collector could read it: why, from the collectors' records
    stack_unread: str | None = None


@dataclass(frozen=True)
class InitWaitRecord:
    """A line that shows a rank stuck before the first collective (see triage.parsing.rendezvous)."""

    kind: str                               # an InitWaitKind value: barrier_timeout, store_clients, ...
    text: str
    rank: int | None = None
    host: str | None = None
    world_size: int | None = None           # of the group being initialised
    joined: int | None = None               # ranks or store clients that had arrived
    address: str | None = None              # the store a client tried to reach (host:port)
    timeout_s: float | None = None
    timed_out: bool = False                 # False: still waiting when the input ends
    evidence: tuple[str, ...] = ()
    order: int | None = None
    waits_for: int | None = None            # the rank the line says never arrived
    absent: tuple[int, ...] = ()            # the processes the line names as never arrived (JAX's coordination tasks)


@dataclass(frozen=True)
class OpCountSplit:
    """NCCL's RAS report: the ranks of one communicator launched different numbers of one operation."""

    op: str                                 # "AllGather"
    behind: tuple[int, ...]                 # the ranks at the lower count (empty when the input cannot tell)
    behind_count: int
    behind_launched: int
    ahead: tuple[int, ...]                  # the ranks that launched further (empty when not listed)
    ahead_count: int
    ahead_launched: int
    hosts: tuple[tuple[int, str], ...] = ()  # (rank, node) for the ranks NCCL named
    evidence: tuple[str, ...] = ()
    source: str = "NCCL RAS"                # what counted: NCCL RAS, or ProcessGroupNCCL's per-rank status lines


@dataclass(frozen=True)
class ReportedLag:
    """Ranks PyTorch's desync report (TORCH_NCCL_DESYNC_DEBUG) names as the cause of a timeout."""

    ranks: tuple[int, ...]
    never_joined: bool                      # "didn't join collective #N" (else "joined but didn't finish")
    collective: int                         # counted from 1, as the report counts
    text: str
    evidence: tuple[str, ...] = ()


@dataclass(frozen=True)
class ClusterCheck:
    """The verdict of a `triage check` found in the run directory (RUN_DIR/check/verdict.json)."""

    ok: bool
    headline: str
    path: str
    time: float | None = None               # when the verdict was written (the file's mtime)


GPU_WAIT = "waiting on the GPU"        # the agent's activity of a rank whose main thread waits on its GPU
CPU_BUSY_SHOWN = 0.05                  # the agent's floor of a busy CPU share (triage.agent.hang.busy)


@dataclass(frozen=True)
class RankActivityFact:
    """One rank as the live agent sampled it (two samples a few seconds apart)."""

    rank: int
    pid: int | None
    activity: str                       # busy | blocked | gone | unknown | waiting on the GPU
    cpu_share: float | None = None
    io_bytes_per_s: float | None = None
    stack_changed: bool | None = None
    where: str | None = None            # "main (job.py:51)"
    gpu_wait: str | None = None         # waiting on the GPU: "torch.cuda.synchronize (step at train.py:42)"
    gpu_util: float | None = None       # its GPU's NVML utilization (0..1) then; None: not read
    runnable: bool | None = None        # a thread of it was runnable in both samples (it wanted a CPU)

    def figures(self) -> str:
        """``CPU 1%, I/O 0 B/s, same stack`` (``in torch.cuda.synchronize (...), GPU 0%, ...`` for a GPU wait)."""
        parts = []
        if self.activity == GPU_WAIT:
            parts.append(f"in {self.gpu_wait}" if self.gpu_wait else "in a GPU wait")
            parts.append(f"GPU {self.gpu_util * 100:.0f}%" if self.gpu_util is not None
                         else "GPU use not known (no NVML reading)")
        if self.cpu_share is not None:
            parts.append(f"CPU {self.cpu_share * 100:.0f}%")
        if self.runnable:
            parts.append("runnable, waiting for a CPU" if (self.cpu_share or 0.0) < CPU_BUSY_SHOWN else "runnable")
        if self.io_bytes_per_s is not None:
            parts.append(f"I/O {self.io_bytes_per_s:.0f} B/s" if self.io_bytes_per_s < 1000
                         else f"I/O {self.io_bytes_per_s / 1e3:.0f} kB/s")
        if self.stack_changed is not None:
            parts.append("stack moving" if self.stack_changed else "same stack")
        return ", ".join(parts)

    def line(self) -> str:
        """``rank 1 blocked in main (job.py:51) (CPU 1%, I/O 0 B/s, same stack)``."""
        where = f" in {self.where}" if self.where else ""
        figures = f" ({self.figures()})" if self.figures() else ""
        return f"rank {self.rank} {self.activity}{where}{figures}"


@dataclass(frozen=True)
class InitFact:
    """A hang before the first collective as the live agent saw it."""

    waiting: tuple[int, ...]            # ranks waiting in their start-up call
    never_joined: tuple[int, ...]       # local ranks that never reached it
    where: str                          # "init_process_group" | "torchrun's rendezvous"
    store: str | None = None            # "127.0.0.1:29500"
    key: str | None = None              # the store key waited on, when known
    seconds: float | None = None        # how long they had waited
    nodes_joined: int | None = None     # torchrun rendezvous: nodes there / nodes wanted
    nodes_wanted: int | None = None
    reason: str = ""                    # the agent's own line


@dataclass(frozen=True)
class ChildStack:
    """One child process of a rank (a DataLoader worker, a pool worker, a subprocess) as dumped."""

    pid: int
    stack: tuple[str, ...]              # its main thread, as RankEvidence.stack: innermost first, "file:line in func"
    worker_id: int | None = None        # DataLoader worker id, when the agent could read it
    path: str | None = None             # the dump file


@dataclass(frozen=True)
class AgentFacts:
    """What one node's live agent (``triage launch``) knew when it wrote its latest bundle."""

    bundle: str
    host: str
    trigger: str
    reason: str
    verdict_kind: str | None = None     # "init_hang" when the agent stopped the job on one
    hang_source: str | None = None      # progress | nccl | watchdog | init | rendezvous
    activity: tuple[RankActivityFact, ...] = ()
    init: InitFact | None = None
    children: tuple[tuple[int, ChildStack], ...] = ()    # (rank, child)

    def children_of(self, rank: int) -> tuple[ChildStack, ...]:
        return tuple(child for r, child in self.children if r == rank)


@dataclass(frozen=True)
class StopDecision:
    """The live agent's decision to stop the job (``<host>/stop.json``): the verdict is fixed then;
    what happens after ``time`` (exits, signals, tracebacks, crashes) is collateral of the stop."""

    time: float                         # unix time of the decision
    host: str                           # the agent that decided
    reason: str                         # the line the agent printed ("the hang is certain: ...")
    verdict: Verdict | None = None      # the verdict it printed; None when it could not make one
    path: str | None = None


@dataclass(frozen=True)
class ProseAccount:
    """What the reporter's own sentences around a pasted log say (triage.parsing.prose): never a log line's evidence,
    used only where the log's lines do not say it (triage.analysis.prose)."""

    host: str | None = None                 # the node the reporter says the failures are on ("jobs on node X fail")
    stop: str | None = None                 # the sentence that says the job was stopped from outside
    hang: str | None = None                 # the sentence that says the job hangs, and where
    hang_at_init: bool = False              # where it hangs is the job's set-up (process group, rendezvous, store)
    silent_ranks: tuple[int, ...] = ()      # ranks the reporter says never print or never arrive
    collective: str | None = None           # a collective the reporter's sentences name ("barrier")
    log_hosts: tuple[str, ...] = ()         # hosts the log's own line heads name (then the reporter's node is not used)
    save_stall: str | None = None           # the sentence that says saving (a checkpoint, the model) times out or hangs
    exit: str | None = None                 # the sentence that quotes a launcher's exit of a process by a signal
    exit_signal: str | None = None          # that signal's name ("SIGKILL" for DeepSpeed's "return code = -9")

    def __bool__(self) -> bool:
        return bool(self.host or self.stop or self.hang or self.save_stall or self.exit)


@dataclass(frozen=True)
class Evidence:
    """Everything read from the inputs, rank by rank and event by event, before any verdict."""
    ranks: tuple[RankEvidence, ...] = ()
    events: tuple[Event, ...] = ()
    world_size: int | None = None
    skipped: tuple[str, ...] = ()           # "PATH: why it could not be read"
    sources: tuple[str, ...] = ()           # the inputs, as given
    finished_cleanly: bool = False          # every rank exited 0 (a run that "worked")
    extra_evidence: tuple[str, ...] = field(default_factory=tuple)
    crashes: tuple[CrashRecord, ...] = ()   # cores and post-crash gdb output, classified by analysis
    # False for excerpts (pasted logs): a rank the input does not show is "not in this input", never
    # a missing rank; True for run directories and dump directories, which show every rank
    complete: bool = True
    coverage_note: str | None = None        # where the world size came from ("nranks=8 in NCCL init")
    mismatches: tuple[ReportedMismatch, ...] = ()   # TORCH_DISTRIBUTED_DEBUG=DETAIL mismatch errors
    unattributed: tuple[ExitInfo, ...] = ()  # failures in the input that no line ties to a rank
    unparsed: tuple[str, ...] = ()          # lines that look like a known format but did not parse
    # failure lines read in words alone after which the same process printed its progress: it went on past them
    went_on: tuple[str, ...] = ()
    nccl_processes: tuple[NcclProcess, ...] = ()  # NCCL op lines of processes of no known rank
    init_waits: tuple[InitWaitRecord, ...] = ()   # ranks stuck in init_process_group / store / rendezvous
    op_count_splits: tuple[OpCountSplit, ...] = ()  # NCCL RAS: ranks of a communicator at different op counts
    # the last lines of no known rank before the first watchdog timeout (training scripts print
    # progress, "Saving checkpoint", evaluation on rank 0 only, usually without a rank prefix)
    unprefixed_tail: tuple[str, ...] = ()
    lagging: tuple[ReportedLag, ...] = ()   # ranks a desync report blames
    cluster_check: ClusterCheck | None = None   # a `triage check` run in the same run directory
    agent: tuple[AgentFacts, ...] = ()    # each node's live agent, from its latest bundle (run directories)
    kernel_events: tuple[KernelEvent, ...] = ()   # dmesg lines about crashes (triage postmortem)
    # cores and rank logs only (triage postmortem): reported as a crash report, the first crash first;
    # ``skipped`` then holds the cores that could not be used at all ("PATH: why")
    crashes_only: bool = False
    stop: StopDecision | None = None       # the agent stopped the job (run directories)
    kernel_others: int = 0                 # dmesg events of other processes (or before the job): counted only
    numerics: tuple[RankNumerics, ...] = ()   # each rank's first NaN/Inf (triage launch --numerics)
    # why collectives were not recorded, as the ranks' heartbeats said it ("torch 2.4.1 has no Flight
    # Recorder for gloo (no _dump_fr_trace_json)"): the report says so instead of an all-clear
    recorder_notes: tuple[str, ...] = ()
    gpus: tuple[NodeGpus, ...] = ()         # each node's GPU facts (node/gpus.json of its latest bundle)
    launcher: str | None = None            # the launcher a log shows started its ranks ("openmpi", "slurm", ...)
    # a log's text names a GPU's software or a GPU (triage.parsing.gpu_words); None where no log was read (a run
    # directory, cores): GPU advice then stands
    shows_gpu: bool | None = None
    # a log's text shows AMD's ROCm as the GPU's software, none of CUDA's own words (triage.parsing.gpu_words)
    shows_rocm: bool = False
    # the framework a log's text names ("torch", "xla", "tensorflow": triage.parsing.stack_words), None where none
    stack: str | None = None
    # the platform a log's text shows ran the job ("kubernetes", "htcondor": triage.parsing.platform_words)
    platform: str | None = None
    shows_nccl: bool = False               # NCCL's name is in a log's text
    agent_stopped: tuple[int, ...] = ()     # pids torchrun's agent stopped once a worker failed (alive then)
    # hangs the live agents dumped (run directories): the most hang bundles one node wrote; 2 or more in a
    # job that then finished are as many stalls that ended by themselves
    hang_dumps: int = 0
    prose: ProseAccount = field(default_factory=ProseAccount)   # the reporter's own sentences (pasted logs)
    # the program's own check that the job's process count does not fit its configuration (pasted logs): a job-wide
    # configuration error that the rank reporting it did not cause (triage.parsing.job_config)
    job_config: str | None = None
    job_config_rank: int | None = None     # the rank its line's own prefix names, None where it names none

    def rank(self, rank: int) -> RankEvidence | None:
        for item in self.ranks:
            if item.rank == rank:
                return item
        return None


@dataclass(frozen=True)
class CoreOutput:
    """What the core collector left for one core: core.json (its facts) and gdb's backtrace of it,
    parsed by the loader (triage.load.cores)."""

    info: Mapping[str, Any]
    backtrace: GdbBacktrace                 # empty when gdb left no text
    info_path: str
    gdb_path: str | None
    host: str | None = None                 # from the bundle's manifest, when read from a bundle


@dataclass(frozen=True)
class RankLogs:
    """A rank's own files that explain its crash, parsed once by the loader
    (triage.load.crash_records.rank_logs): faulthandler.log, exit.json and the log tails."""

    rank: int
    host: str
    pid: int | None
    fatal_signal: str | None = None         # faulthandler.log's "Fatal Python error: X" (X: "Segmentation fault")
    python_threads: tuple[PythonStack, ...] = ()   # faulthandler.log's threads, as printed
    faulthandler_mtime: float | None = None
    # the tails of output.log and faulthandler.log, then the exception, parsed for a crash's facts
    log_facts: CrashLogFacts = field(default_factory=CrashLogFacts)
    banner_time: float | None = None        # the last "Aborted at <unix time>" banner in them
    exit: Mapping[str, Any] | None = None   # exit.json
    evidence: tuple[str, ...] = ()          # faulthandler.log, exit.json, output.log (those that exist)


class CrashSource(str, enum.Enum):
    CORE = "core"                           # gdb on a core file (the core collector's output)
    LIVE_GDB = "gdb"                        # gdb on the rank right after it crashed (gdb.txt)
    RANK_LOGS = "logs"                      # a rank of the run that left no core: its own logs only


@dataclass(frozen=True)
class KernelEvent:
    """One dmesg line that matters for a crash (made from triage.parsing.dmesg events)."""

    kind: str                          # "xid" | "segfault" | "oom"
    time: float | None                 # unix time, when it could be worked out
    pid: int | None
    text: str
    code: int | None = None            # the Xid number
    comm: str | None = None            # the thread/process name the kernel printed


@dataclass(frozen=True)
class CrashRecord:
    """Native evidence of a crashed process, parsed once by its loader (triage.load.crash_records)
    for analysis to classify (triage.analysis.crash): analysis parses nothing."""

    source: CrashSource
    rank: int | None
    host: str | None
    core: CoreOutput | None = None          # source CORE
    gdb_path: str | None = None             # source LIVE_GDB
    signal_name: str | None = None          # how the rank ended (exit.json)
    time: float | None = None
    logs: RankLogs | None = None            # the rank's own files (source CORE with a run dir; RANK_LOGS)
    pystack_frames: tuple[str, ...] = ()    # the faulting thread's Python frames as pystack read them
    notes: tuple[str, ...] = ()             # what limits the classification ("gdb is not installed ...")
    backtrace: GdbBacktrace = field(default_factory=GdbBacktrace)   # gdb's, of the core or the live rank
    fatal_signal: str | None = None         # faulthandler.log's fatal signal ("Segmentation fault")
    python_frames: tuple[PythonFrame, ...] = ()   # the crashing thread's, from faulthandler.log
    log_facts: CrashLogFacts = field(default_factory=CrashLogFacts)   # what the rank's log tail says
    banner_time: float | None = None        # the last "Aborted at <unix time>" banner of its log

    @property
    def cuda_error(self) -> str | None:
        """The rank's "CUDA error: X" (X), from its log."""
        return self.log_facts.cuda_error
