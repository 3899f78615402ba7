"""The analysis model and the ``triage.report/1`` JSON contract.

Everything here is a frozen dataclass. Parsers turn raw bundle files into these; analysis
functions take them and return a :class:`Report`; reporters render a Report.
"""

from __future__ import annotations

import enum
import signal as _signal
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from triage.model.explain import RuleOutcome
from triage.schemas import REPORT_SCHEMA


class VerdictKind(str, enum.Enum):
    COLLECTIVE_MISMATCH = "collective_mismatch"
    MISSING_RANK = "missing_rank"
    STUCK_OUTSIDE_COLLECTIVE = "stuck_outside_collective"
    CRASH = "crash"
    EXCEPTION = "exception"
    NO_PROBLEM_FOUND = "no_problem_found"
    HANG = "hang"                          # every rank waits in the same collective; no rank differs
    INIT_HANG = "init_hang"                # stuck before the first collective: init_process_group, store, rendezvous
    NETWORK_ERROR = "network_error"        # a network or peer failure (NCCL/gloo transport, a link, a host)
    FAILURE_UNLOCATED = "failure_unlocated"  # the input shows a failure but not whose: the culprit is not in it
    NONFINITE = "nonfinite"                # the first NaN or Inf of the job (triage launch --numerics)
    STOPPED = "stopped"                    # stopped from outside (a time limit, scancel) before any rank failed


class MismatchKind(str, enum.Enum):
    OP = "op"
    SIZE = "size"
    DTYPE = "dtype"
    SEQ = "seq"                            # the calls agree; only their sequence numbers differ
    OOM = "oom"                            # not a mismatch: a failure of any kind that ran out of memory (a device's
    #                                        allocator or the host's OOM killer: triage.analysis.oom)


class RankState(str, enum.Enum):
    RUNNING = "running"                    # alive, making progress
    IN_COLLECTIVE = "in_collective"        # alive, waiting in a collective
    OUTSIDE_COLLECTIVE = "outside_collective"  # alive, not in any collective (stuck in Python, sleeping...)
    EXITED_OK = "exited_ok"
    EXITED_ERROR = "exited_error"          # non-zero exit (an exception)
    CRASHED = "crashed"                    # killed by a signal (SIGSEGV, SIGABRT, SIGKILL...)
    NO_DATA = "no_data"                    # expected but nothing was collected
    UNKNOWN = "unknown"


class CollectiveState(str, enum.Enum):
    COMPLETED = "completed"
    IN_FLIGHT = "in_flight"                # entered and not finished (FR: not retired)
    SCHEDULED = "scheduled"


@dataclass(frozen=True, slots=True)
class Collective:
    """One collective (or p2p op) as one rank saw it. (slots: millions of these at 4,096 ranks)"""

    rank: int
    pg: str                                # process group id as a string ("0")
    seq: int                               # collective_seq_id (or p2p_seq_id when is_p2p)
    op: str                                # torch name: all_reduce, all_gather, broadcast, send...
    count: int | None = None               # elements in the input (sum over input tensors)
    dtype: str | None = None               # torch name: float32, bfloat16, int64 ...
    state: CollectiveState = CollectiveState.COMPLETED
    pg_name: str | None = None             # "default_pg" ...
    input_sizes: tuple[tuple[int, ...], ...] = ()
    output_sizes: tuple[tuple[int, ...], ...] = ()
    is_p2p: bool = False
    peer: int | None = None
    time_ns: int | None = None             # when the rank entered it (unix ns), if known
    source: str = "fr"                     # fr | nccl | watchdog | log
    # FR time_discovered_started_ns / time_discovered_completed_ns (unix ns) where the backend
    # records them (NCCL with timing; gloo in torch 2.13 leaves them 0, read as None)
    time_started_ns: int | None = None
    time_completed_ns: int | None = None

    def __reduce__(self) -> tuple[type[Collective], tuple[Any, ...]]:
        """Pickled as its fields in order (parse workers send these back): several times faster
        than the generic state dance of slotted dataclasses."""
        return (Collective, (self.rank, self.pg, self.seq, self.op, self.count, self.dtype, self.state,
                             self.pg_name, self.input_sizes, self.output_sizes, self.is_p2p, self.peer,
                             self.time_ns, self.source, self.time_started_ns, self.time_completed_ns))


Signature = tuple[tuple[str, int | None, str | None, int | None], ...]  # (op, count, dtype, out count)


@dataclass(frozen=True, slots=True)
class SeqHistory:
    """One rank's whole history in one process group, compactly: the signature of every
    collective seq (not p2p). Large dump directories keep only the last collectives of each rank
    as Collective objects (``RankEvidence.collectives``) and this for the cross-rank diff.

    ``table`` is sorted (by repr) so that ranks with the same history have equal tuples."""

    seqs: Sequence[int]                    # ascending, unique (a range when contiguous)
    sig_ids: Sequence[int]                 # aligned with seqs: index into table (bytes when < 256)
    table: tuple[Signature, ...]
    open_seqs: frozenset[int] = frozenset()  # seqs with an entry that is not COMPLETED

    @classmethod
    def build(cls, seqs: list[int], sigs: list[Signature], open_seqs: frozenset[int]) -> SeqHistory:
        """From ascending unique seqs and their signatures; compact (range, bytes) where it can be:
        thousands of ranks' histories travel from the parse workers and stay in memory."""
        table = tuple(sorted(set(sigs), key=repr))
        index = {sig: i for i, sig in enumerate(table)}
        ids = list(map(index.__getitem__, sigs))
        compact_seqs: Sequence[int] = tuple(seqs)
        if seqs and seqs[-1] - seqs[0] == len(seqs) - 1:
            compact_seqs = range(seqs[0], seqs[-1] + 1)
        return cls(compact_seqs, bytes(ids) if len(table) <= 256 else tuple(ids), table, open_seqs)

    def key_from(self, start: int) -> tuple[object, ...]:
        """Equal for two ranks whose histories from ``start`` on are equal (usually; unequal keys
        only cost a comparison, never a wrong answer)."""
        i = bisect_left(self.seqs, start)
        return (self.table, self.seqs[i:], self.sig_ids[i:])

    def as_dict(self, start: int) -> dict[int, Signature]:
        i = bisect_left(self.seqs, start)
        table = self.table
        return dict(zip(self.seqs[i:], [table[j] for j in self.sig_ids[i:]]))


@dataclass(frozen=True)
class Finding:
    """One thing the input shows about some ranks: the first failure or its collateral."""
    kind: str                              # a VerdictKind value or a finer tag ("xid", "nccl_warn", ...)
    ranks: tuple[int, ...]
    detail: str
    evidence: tuple[str, ...] = ()         # paths (relative to the input) that back it
    time: float | None = None              # unix time of the event, when known
    root_cause: bool = False               # the earliest failure; the rest are collateral

    def __post_init__(self) -> None:
        # each path once, in order: two lines of one log back a finding with one file, not the same path twice
        if len(set(self.evidence)) != len(self.evidence):
            object.__setattr__(self, "evidence", tuple(dict.fromkeys(self.evidence)))

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "ranks": list(self.ranks),
            "detail": self.detail,
            "evidence": list(self.evidence),
            "time": self.time,
            "root_cause": self.root_cause,
        }


class Memory(str, enum.Enum):
    """Which memory a failure ran out of, as its own words say (triage.analysis.oom): its next steps differ."""
    DEVICE = "device"                      # a device's allocator (CUDA's, an NPU's, Level Zero's OUT_OF_DEVICE_MEMORY)
    HOST = "host"                          # the host's, in the program's own exception (MemoryError, c10's allocator)
    NODE_HEAP = "node_heap"                # Node.js's JavaScript heap at its own limit
    NODE_PROCESS = "node_process"          # the host's (or the container's) memory under Node.js, outside its heap


class Ending(str, enum.Enum):
    """How a platform (a batch system, a cluster framework, a container runtime) says it ended the process, in its
    readers' words (triage.analysis.cause): each has its own next step."""
    NANNY_MEMORY = "nanny_memory"          # Dask's nanny restarted the worker at its memory budget
    RAY_MEMORY = "ray_memory"              # Ray's memory monitor killed it at the node's memory threshold
    CPU_LIMIT = "cpu_limit"                # PBS killed it at the CPU time or cores the job asked for
    EXECUTOR_LOST = "executor_lost"        # Spark's driver lost the executor, with no word of why
    SOME_LIMIT = "some_limit"              # PBS aborted it at a limit its mail does not name
    MEMORY_LIMIT = "memory_limit"          # a scheduler or container runtime killed it at the memory limit asked for


class DeviceFault(str, enum.Enum):
    """A device's fault a failure names in its readers' words (triage.analysis.cause): each has its own tools."""
    AI_CORE = "ai_core"                    # Ascend CANN's AI Core error: an operator's kernel faulted on the NPU
    DEVICE_LOST = "device_lost"            # Level Zero's DEVICE_LOST: the driver reset a hung or faulted Intel GPU
    NO_BINARY = "no_binary"                # the build has no code object for the GPU's architecture
    ROCM = "rocm"                          # ROCm's words of a GPU fault (HSA's page fault, HIP's errors, amdgpu's)


@dataclass(frozen=True)
class Cause:
    """What the verdict's first failure is, as typed facts the readers of the input know (not its summary's words,
    which are prose for people): the "what to do next" steps are chosen by these (triage.analysis.advice). Each
    fact is set where the verdict is decided, from the failure record it is built on; an empty one says nothing."""
    signal: int | None = None              # the signal that ended the failing process (9: SIGKILL), as its record says
    memory: Memory | None = None           # the memory it ran out of, as its words say
    ending: Ending | None = None           # how a platform says it ended it, as its readers word it
    device: DeviceFault | None = None      # a device's fault it names, in its readers' words


@dataclass(frozen=True)
class Verdict:
    """The report's answer: what went wrong, on which ranks, and what the input cannot tell."""
    kind: VerdictKind
    summary: str                           # the first line of every report
    subkind: MismatchKind | None = None
    culprit_ranks: tuple[int, ...] = ()
    process_group: str | None = None
    seq: int | None = None
    culprit_host: str | None = None        # the host the input ties the failure (or all its culprit ranks) to
    cause: Cause = Cause()                 # the typed facts of its failure (advice reads them); its signal in JSON

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "subkind": self.subkind.value if self.subkind else None,
            "culprit_ranks": list(self.culprit_ranks),
            "culprit_host": self.culprit_host,
            "process_group": self.process_group,
            "seq": self.seq,
            "signal": _signal_name(self.cause.signal),
            "summary": self.summary,
        }


def _signal_name(number: int | None) -> str | None:
    """A signal's name (9: "SIGKILL"); one this platform does not name, "signal N"."""
    if number is None:
        return None
    try:
        return _signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


@dataclass(frozen=True)
class RankSummary:
    """One rank's row of the report: where it ran, its state and its last collective."""
    rank: int
    host: str | None
    pid: int | None
    state: RankState
    last_collective: Collective | None = None
    stack_top: str | None = None           # "train.py:42 in step" - innermost interesting frame

    def to_json(self) -> dict[str, Any]:
        last = self.last_collective
        return {
            "rank": self.rank,
            "host": self.host,
            "pid": self.pid,
            "state": self.state.value,
            "last_collective": None if last is None else {
                "op": last.op, "pg": last.pg, "seq": last.seq, "count": last.count, "dtype": last.dtype,
            },
            "stack_top": self.stack_top,
        }


@dataclass(frozen=True)
class Report:
    """What `triage report` says of its inputs: the verdict, the findings, the ranks and what to do next."""
    verdict: Verdict
    findings: tuple[Finding, ...] = ()
    ranks: tuple[RankSummary, ...] = ()
    next_steps: tuple[str, ...] = ()       # "what to do next" hints, most useful first
    evidence: tuple[str, ...] = ()         # where the raw material is (bundle dirs, logs)
    sources: tuple[str, ...] = ()          # the inputs the report was made from
    extra: dict[str, Any] = field(default_factory=dict)   # JSON "extra": skipped inputs, groups, world size
    # (rank, its last few collectives around the verdict's seq), for the HTML picture; not in JSON
    recent: tuple[tuple[int, tuple[Collective, ...]], ...] = ()
    # every rank's collectives as analysed (rank, collectives), for --format chrome-trace; not in JSON
    traces: tuple[tuple[int, tuple[Collective, ...]], ...] = ()
    # how the verdict engine decided (triage report --explain); not in JSON
    explanation: tuple[RuleOutcome, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": REPORT_SCHEMA,
            "verdict": self.verdict.to_json(),
            "findings": [f.to_json() for f in self.findings],
            "ranks": [r.to_json() for r in self.ranks],
            "next_steps": list(self.next_steps),
            "evidence": list(self.evidence),
            "sources": list(self.sources),
            "extra": dict(self.extra),
        }
