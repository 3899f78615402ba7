"""Records that tell how ranks ended or what their NCCL communicators did, folded into a LogScan:
launcher failure summaries (torchrun, DeepSpeed, mp.spawn) and NCCL debug lines."""

from __future__ import annotations

import mmap
import signal
import time
from collections.abc import Callable
from dataclasses import replace

from triage.lazy_regex import lazy_regex
from triage.load.logs.facts import WorldSize
from triage.load.logs.scan import (
    EXIT_CODE_RECORD,
    EXIT_RECORDS,
    EXIT_UNSAID_RECORD,
    LogScan,
    record_world,
    signal_number,
)
from triage.model import Collective, CollectiveState
from triage.model.evidence import Event, EventKind, ExitInfo, NcclProcess
from triage.parsing import needles, pages, windows_status
from triage.parsing.crashlog import PROXY_FAILED, SIZE_CHECK_TEXT, CrashLine, CrashLineKind, parse_crash_line
from triage.parsing.frameworks import parse_framework_records
from triage.parsing.launch_failure import LAUNCH_TEXT
from triage.parsing.launchers import RankDeath, parse_rank_deaths
from triage.parsing.log_owners import LineOwner, ray_train_ranks
from triage.parsing.mpi_errors import ABORT_AFTER_END_NOTE, ABORT_TEXT, parse_mpi_errors
from triage.parsing.nccl.lines import channel_ranks
from triage.parsing.nccl.tracker import NcclCommState, NcclTracker
from triage.parsing.node_ranks import NodeRanks, deepspeed_rank_map, node_ranks, other_node_in_sight
from triage.parsing.solver_errors import parse_solver_errors
from triage.parsing.torchelastic import (
    SRUN_OOM_NOTE,
    SRUN_WAIT_HEAD,
    UNNAMED_SIGNAL,
    LauncherFailure,
    is_record_field,
    parse_agent_death_signal,
    parse_launcher_failures,
)

# NCCL WARN lines that are a process's own failure (a transport error, CUDA running out of memory ...)
_NCCL_FAILURES = (CrashLineKind.NETWORK, CrashLineKind.CUDA_OOM, CrashLineKind.CUDA_ERROR)
# NCCL's WARN of a CUDA call that failed ("Cuda failure 'operation not supported'", "Cuda failure 1 'invalid argument'")
_INIT_CUDA = lazy_regex(r"Cuda failure (?:\d+ )?'(?P<what>[^']+)'")
# what a process says of its own failure (never a peer's network error, never a stop from outside)
_OWN_WORDS = (CrashLineKind.EXCEPTION, CrashLineKind.CUDA_OOM, CrashLineKind.CUDA_ERROR, CrashLineKind.FATAL_SIGNAL,
              CrashLineKind.TERMINATE, CrashLineKind.NCCL_ERROR)


def _launch_node(failures: list[LauncherFailure], scan: LogScan) -> None:
    """The node srun's exit records name (one node, every record's), for the launch failures of no node before them
    (slurmstepd's "spank: required plugin ...", "execve(): ...": the step's tasks that never ran there)."""
    nodes = {f.host for f in failures if f.srun_exit}
    node = nodes.pop() if len(nodes) == 1 else None
    if node is None:
        return
    for _order, line, _path in scan.orphans:
        if LAUNCH_TEXT in line.text[:len(LAUNCH_TEXT) + 2] and line not in scan.orphan_hosts:
            scan.orphan_hosts[line] = node


def record_text(lines: list[str] | tuple[str, ...], owners: list[LineOwner], body: str) -> str:
    """The text launcher records are read from: the lines without their prefixes, except a record's field
    under a rank prefix, which keeps it ("[rank3] exitcode: -9" is rank 3's record), and a record whose own rank tag
    is its writer's head (Lightning's "[rank: 3] Child process with PID 66120 terminated with code -9")."""
    if "exitcode" not in body and _TAGGED_RECORD not in body:
        return body
    return "\n".join(line if line != owner.rest
                     and (is_record_field(owner.rest) or owner.rest.startswith(_TAGGED_RECORD))
                     and (isinstance(owner.key, int) or owner.key.startswith("local:")) else owner.rest
                     for line, owner in zip(lines, owners))


_TAGGED_RECORD = "Child process with PID "


def launcher_records(text: str, path: str, scan: LogScan, single_node: bool,
                     agent_hosts: dict[int, str] | None = None,
                     line_hosts: list[str | None] | None = None,
                     pid_ranks: dict[tuple[str | None, int], int] | None = None, torchrun_tagged: bool = False,
                     node_heads: list[str | None] | None = None, line_ranks: list[int | None] | None = None,
                     prefixed_ranks: frozenset[int] = frozenset()) -> None:
    """torchrun's "Failures:" / "Root Cause" summary (or its per-rank "failed (exitcode: N)" lines),
    and other launchers' and frameworks' plain-word records of a rank that died. ``agent_hosts``: the host a
    node prefix ("node2: ") gives an agent's "failed (exitcode: N) local_rank: L (pid: P)" line, by P; ``line_hosts``:
    the host pdsh's prefix gives each line of ``text`` (DeepSpeed's one-line records are read with it); ``pid_ranks``:
    the rank of a process, by (host, pid), where a line's prefixes say both (Ray's and vLLM's worker tags);
    ``torchrun_tagged``: torchrun's own tags (``[rank3]:``, ``[default3]:``) are on the workers' lines; ``node_heads``:
    the node a "node: " head before each line of ``text`` names (HPE PALS's "x1921c5s2b0n0: rank 3 exited with code
    1": the node of the rank whose end it tells); ``line_ranks``: the rank each line's own prefix names (a code's
    banner that names no rank is the rank's whose prefix its line carries); ``prefixed_ranks``: the global ranks the
    workers' lines' own prefixes name (torch's ``[rankN]:``, or a launcher's label in its place), on one host."""
    mpi_ranked = _rank_deaths(text, path, scan, pid_ranks or {}, node_heads, line_ranks)
    if "exitcode" not in text and "exits with return code" not in text and "terminated with" not in text \
            and "srun: error:" not in text and "death signal" not in text and "first observed failure" not in text \
            and "SignalException" not in text and "CalledProcessError" not in text \
            and "returned non-zero exit status" not in text and "died with <Signals." not in text \
            and "unrecognized arguments" not in text and "Could not consume arg" not in text \
            and "First task exited" not in text \
            and "Main process received SIG" not in text:  # (DeepSpeed's launcher signalled from outside)
        return
    _agent_signal(text, path, scan)
    failures = [replace(f, host=f.host or (agent_hosts or {}).get(f.pid or -1) or _line_host(f, text, line_hosts))
                for f in parse_launcher_failures(text)]
    hosts = {f.host for f in failures if f.host}
    deepspeed = deepspeed_rank_map(text) if any(f.offset is not None for f in failures) else {}
    orphan_error = any(not line.collateral for _, line, _ in scan.orphans)
    nodes = node_ranks(text)
    line_of = _line_counter(text)
    srun_lines: dict[int, int] = {}
    base: list[int] = []

    def srun_base() -> int:
        if not base:
            base.append(scan.lines_read - text.count("\n") - 1)
        return base[0]

    for failure in failures:
        if failure.srun_task and failure.at is not None and failure.rank is not None:
            # (each srun record's line once: every task of a "tasks 0-63" line shares it; the text's lines counted once)
            if failure.at not in srun_lines:
                srun_lines[failure.at] = srun_base() + line_of(failure.at)
            scan.srun_records.setdefault(failure.rank, []).append(srun_lines[failure.at])
        if failure.srun_exit and orphan_error:
            # an error line of no known rank in the input is the failure; srun's exit codes only echo it (which
            # task raised it, the line does not say: the failure stays of no known rank)
            _launch_node(failures, scan)
            continue
        if failure.srun_task and (mpi_ranked or torchrun_tagged):
            # an MPI runtime's records name the ranks (HPE MPT's, mpirun's under srun), or torchrun started them (its
            # tags on their lines): srun's task index counts the step's tasks (one per node under MPT's launcher,
            # mpirun's daemons, torchrun's agents), not ranks: the record is of a process of no known rank on its host
            _unattributed_launcher_failure(replace(failure, rank=None, note=_srun_note(failure, mpi_ranked)), path,
                                           scan)
            continue
        rank = failure.rank
        if rank is None and failure.offset is not None and failure.host and failure.local_rank is not None:
            on_host = deepspeed.get(failure.host, ())       # DeepSpeed's own map of that host's ranks
            rank = on_host[failure.local_rank] if failure.local_rank < len(on_host) else None
        if rank is None and failure.offset is not None and failure.host in deepspeed:
            failure = _on_host_ranks(failure, deepspeed[failure.host])
        if rank is None and failure.local_rank is not None:
            # (a node prefix on the agent's line: a launch over several nodes, pdsh's or the like)
            one_host = len(hosts) <= 1 and not agent_hosts
            rank = _global_rank(failure.local_rank, nodes, single_node and one_host)
            if rank is None and one_host and _prefixed_one_node(failure, failures, prefixed_ranks, nodes, text):
                rank = failure.local_rank
        if rank is None:
            _unattributed_launcher_failure(failure, path, scan)
            continue
        scan.ranks_seen.add(rank)
        if failure.host:
            scan.hosts.setdefault(rank, failure.host)
        sig = signal_number(failure.signal)
        message = None
        # (older torchelastic's msg "Process failed with exitcode 1" says only the exit code again)
        if failure.traceback and not failure.traceback.startswith(("Signal ", "To enable traceback",
                                                                   "Process failed with exitcode")):
            message = failure.traceback.strip().splitlines()[-1].strip()[:300]
        if failure.note == SRUN_OOM_NOTE or (failure.note or "").startswith(SRUN_WAIT_HEAD):
            message = message or failure.note      # (srun's "Out Of Memory": what killed the task; its wait timer)
        if not message and failure.signal and windows_status.status_in(str(failure.exitcode), failure.signal):
            message = f"exit code {failure.exitcode}"   # (a Windows crash status: the code is what it said, no signal)
        old = scan.exits.get(rank)
        # a record cut before its exit code (a paste that ends inside it) is still a failure of that rank
        cut = sig is None and failure.exitcode is None
        if cut and not message:
            message = ("listed by torchrun as the first observed failure; its exit code is not in this input"
                       if failure.root_cause else "listed by torchrun as failed; its exit code is not in this input")
        if failure.srun_task and sig is not None and failure.at is not None:
            scan.killed_at.setdefault(rank, srun_lines[failure.at])
        scan.exits[rank] = ExitInfo(
            exit_code=None if sig is not None else failure.exitcode, signal=sig, signal_name=failure.signal,
            time=_launcher_time(failure.timestamp), message=message or (old.message if old else None),
            evidence=(path,), collateral=sig is not None and sig in (int(signal.SIGTERM), int(signal.SIGINT)),
            order=-1 if failure.root_cause else None,   # torchrun's "Root Cause (first observed failure)"
            failure_kind="exception" if cut else None)


def _srun_note(failure: LauncherFailure, mpi_ranked: bool) -> str:
    under = "an MPI runtime's records name the ranks" if mpi_ranked else "torchrun started the ranks"
    return (f"srun's record of its task {failure.rank}{f' on {failure.host}' if failure.host else ''}: {under}, so "
            "srun's task index counts the step's tasks (a node's launcher), not ranks")


def _line_host(failure: LauncherFailure, text: str, line_hosts: list[str | None] | None) -> str | None:
    """The host pdsh's prefix gave the line a one-line record is on."""
    if failure.offset is None or not line_hosts:
        return None
    index = text.count("\n", 0, failure.offset)
    return line_hosts[index] if index < len(line_hosts) else None


def _on_host_ranks(failure: LauncherFailure, ranks: tuple[int, ...]) -> LauncherFailure:
    """A DeepSpeed record of one of several processes on a host: which ranks it could be, from DeepSpeed's map."""
    if not ranks:
        return failure
    told = f"ranks {ranks[0]}-{ranks[-1]}" if len(ranks) > 1 else f"rank {ranks[0]}"
    return replace(failure, note=f"{failure.note or 'which process failed is not in this record'}; host "
                                 f"{failure.host} ran {told} (DeepSpeed's global_rank_mapping)")


def _prefixed_one_node(failure: LauncherFailure, failures: list[LauncherFailure], prefixed_ranks: frozenset[int],
                       nodes: NodeRanks, text: str) -> bool:
    """An agent's "failed (exitcode: N) local_rank: L" on one node whose workers' own lines carry torch's "[rankL]:"
    prefix (or a launcher's label of rank L) in the same input: on one node a local rank is the global rank (torchrun's
    RANK = node_rank * nproc + L), so it is the rank those lines show. One node only: one agent's record of that local
    rank, no node count above one, no node rank above zero (node k > 0 runs ranks k * nproc and up: its lines never
    show "[rankL]:" of a local L), the lines' ranks of one host (triage.load.logs.text's _prefixed_ranks)."""
    if failure.local_rank is None or failure.local_rank not in prefixed_ranks \
            or sum(1 for f in failures if f.local_rank == failure.local_rank and f.rank is None) != 1 \
            or (nodes.nodes or 1) > 1 or other_node_in_sight(text):
        return False
    # (the agent's workers, where its teardown lists them: the ones it sent SIGTERM and the ones that failed; more
    # ranks' prefixed lines than that are other nodes' lines in the same input, "srun torchrun" of two nodes into one
    # file, where local rank L is one of several ranks)
    stopped = {m.group(1) for m in _CLOSING.finditer(text)} if "closing signal" in text else set()
    return not stopped or len(prefixed_ranks) <= len(stopped) + len(failures)


# torchelastic's agent stopping its other workers after one failed: "Sending process 202 closing signal SIGTERM"
_CLOSING = lazy_regex(r"Sending process (\d+) closing signal")


def _global_rank(local: int, nodes: NodeRanks, one_host: bool) -> int | None:
    """The global rank of an agent's local rank: from the input's rank map or node rank, else the local rank
    itself on a job of one node (none of the input's lines names another node or a node count above one)."""
    if (mapped := nodes.global_rank(local)) is not None:
        return mapped
    return local if one_host and (nodes.nodes or 1) <= 1 else None


# Where a signal that stops torchrun's agent from outside comes from, as a rule.
_SENDERS = {"SIGHUP": "a terminal or ssh session that closed (a job started with nohup or in a plain shell: run it "
                      "in tmux/screen, or with setsid)",
            "SIGINT": "Ctrl-C: someone interrupted the job; when it was stuck, what it waited in is the problem",
            "SIGTERM": "a scheduler (preemption, a time limit, scancel), a container or pod being stopped, or a "
                       "supervisor that saw another part of the job fail"}


def _agent_signal(text: str, path: str, scan: LogScan) -> None:
    """torchrun's agent received a signal from outside and stopped its workers: a failure of no
    rank (the workers' ends that follow are its consequence). SIGTERM or SIGHUP with no rank failed or
    stuck before it is a stop from outside (the ``stopped`` verdict: who sent it, this input does not
    say); Ctrl-C is a person's reaction (to a job that looked stuck, as a rule): collateral."""
    received = parse_agent_death_signal(text)
    if received is None:
        return
    sender = _SENDERS.get(received.signal, "outside the job")
    said = (f"{received.launcher} received {received.signal} and shut its workers down: the job was stopped from "
            f"outside, by {sender} ({received.text})")
    if received.signal in _OUTSIDE or received.signal == UNNAMED_SIGNAL:
        # at its place in the text: a rank that failed or hung before it stays the verdict (analysis.stopped)
        order = scan.lines_read - text.count("\n") - 1 + text.count("\n", 0, received.offset)
        line = CrashLine(CrashLineKind.STOPPED, f"{received.launcher} received {received.signal} from outside the job "
                         f"and shut its workers down ({received.text[:160]}); who sent it, this input does not say",
                         signal=received.signal if received.signal != UNNAMED_SIGNAL else None)
        scan.orphans.append((order, line, path))
        return
    line = CrashLine(CrashLineKind.FATAL_SIGNAL, said[:400], signal=received.signal,
                     # Ctrl-C, or a stop after the input already shows a rank stuck or failed: a reaction
                     collateral=received.signal == "SIGINT" or bool(scan.first_timeout or scan.failures))
    scan.orphans.append((-1, line, path))


# The signals that stop torchrun's agent from outside the job (analysis.stopped says what would tell who sent them)
_OUTSIDE = ("SIGTERM", "SIGHUP")


def _unattributed_launcher_failure(failure: LauncherFailure, path: str, scan: LogScan) -> None:
    """A launcher's failure record that names no rank (a local rank on one of several nodes, or no
    rank at all) is still a failure: kept as one of no known rank."""
    who = f"local rank {failure.local_rank}" if failure.local_rank is not None else "a process"
    if failure.host and (failure.local_rank is not None or failure.offset is not None):
        who += f" on host {failure.host}"
    if failure.pid is not None:
        who += f" (pid {failure.pid})"
    note = f"; {failure.note}" if failure.note else ""
    if failure.local_rank is not None and not note:
        note = ("; its global rank is not in this input (the agent's rendezvous result at LOGLEVEL=INFO, or "
                "torchrun's --node_rank and --nproc_per_node, would tell)")
    if failure.signal:
        ended = windows_status.how_it_ended(failure.signal, str(failure.exitcode))
        line = CrashLine(CrashLineKind.FATAL_SIGNAL, f"{who} {ended}{note}",
                         signal=failure.signal,
                         collateral=failure.signal in ("SIGTERM", "SIGINT") and not failure.root_cause)
    else:
        # (after a DETAIL mismatch error every rank raises it and exits: the exit is its consequence)
        ended = (f"exited with code {failure.exitcode}" if failure.exitcode is not None
                 else "is listed as failed; its exit code is not in this input")
        line = CrashLine(CrashLineKind.EXCEPTION, f"{who} {ended}{note}", collateral=bool(scan.mismatches))
    # an exit code says less than the process's own failure line: a root-cause record of no known rank that only
    # tells an exit code (DeepSpeed's launcher, a torchelastic record without its rank, torchx's status) goes after
    # a failure line of no known rank the text already holds (the traceback of the process that exited so)
    told = failure.signal is None and any(not item[1].collateral and item[1].kind in _OWN_WORDS
                                          for item in scan.orphans)
    scan.orphans.append((-1 if failure.root_cause and not told else scan.lines_read, line, path))
    if failure.host:
        scan.orphan_hosts[line] = failure.host



def _rank_deaths(text: str, path: str, scan: LogScan, pid_ranks: dict[tuple[str | None, int], int],
                 node_heads: list[str | None] | None = None, line_ranks: list[int | None] | None = None) -> bool:
    """mpirun's "process rank 1 ... exited on signal 9", vLLM's "VllmWorker-3 died unexpectedly",
    Ray's "worker process has died", "rank 5 died from signal 11": how a rank (or a process of no
    known rank) ended, as a failure line at its place in the text. A record that names a process (Ray's pid
    and node) is that rank's where the process's own lines say its rank. Whether an MPI runtime's record named a
    rank (MPI_COMM_WORLD's, which a launcher's task index beside it is not)."""
    # (a code's banner of no rank on a line whose prefix names one, "[3] --> FOAM FATAL ERROR:": that rank's)
    banners = parse_solver_errors(text, line_ranks)
    deaths = sorted((*parse_rank_deaths(text), *parse_framework_records(text), *banners), key=lambda d: d.offset)
    if not deaths:
        return False
    # (a stop from outside stays of no rank: it is no rank's failure)
    deaths = [replace(d, rank=rank) if d.rank is None and d.pid is not None and not d.outside
              and (rank := _rank_of_process(d.host, d.pid, pid_ranks)) is not None else d for d in deaths]
    deaths = _banner_in_record(deaths)
    line_of = _line_counter(text)       # (the deaths in text order: one count of the text's lines for them all)
    if node_heads:      # a rank's end on a line a node heads, the record naming no host: that node's rank
        deaths = [replace(d, host=node_heads[at]) if d.rank is not None and d.host is None
                  and (at := line_of(d.offset)) < len(node_heads) and node_heads[at] else d for d in deaths]
    base = scan.lines_read - text.count("\n") - 1
    for death in deaths:
        at = line_of(death.offset)
        order = -1 if death.first else base + at
        if death.raised and death.signal:     # (the process's own words of its death by a signal)
            line = CrashLine(CrashLineKind.FATAL_SIGNAL, death.text[:400], signal=death.signal)
        elif death.raised:
            line = parse_crash_line(death.text) or CrashLine(CrashLineKind.EXCEPTION, death.text[:400])
        elif death.signal is None and death.exitcode:
            ended = EXIT_UNSAID_RECORD if death.code_unsaid else f"{EXIT_CODE_RECORD}{death.exitcode}"
            line = CrashLine(CrashLineKind.EXCEPTION, f"{ended}: {death.text}"[:400])
        else:
            # (its own name: ``text`` is the log's, whose line count places the next record)
            said = death.text
            if death.rank is None and death.signal and death.signal not in said and not death.outside:
                said = (f"a process{f' (pid {death.pid})' if death.pid else ''} "
                        f"{windows_status.how_it_ended(death.signal, said)}: {said}")
            teardown = death.signal in ("SIGTERM", "SIGINT") and not death.first and not death.outside
            line = CrashLine(CrashLineKind.STOPPED if death.outside else CrashLineKind.FATAL_SIGNAL, said[:400],
                             signal=death.signal, collateral=death.consequence or teardown)
        if death.outside:
            # the line it reads (submitit's UncompletedJobError) is this stop, not a failure of its own
            scan.orphans = [item for item in scan.orphans if item[0] != order]
        if death.tears_down:
            _teardown_after(scan, base + at)
        if death.raised and death.end > death.offset and text.count("\n", death.offset, death.end):
            # (a code's own block over several lines: a failure line read inside it, R's warning that quotes a Python
            # error after its "Error in ...", is its block's own words, no failure of its own)
            last = base + at + text.count("\n", death.offset, death.end)
            scan.orphans = [item for item in scan.orphans if not base + at < item[0] <= last]
        if death.rank is not None:
            scan.ranks_seen.add(death.rank)
            if death.host:
                scan.hosts.setdefault(death.rank, death.host)
            scan.failures.setdefault(death.rank, []).append((order, line, path))
        else:
            scan.orphans.append((order, line, path))
            if death.host:
                scan.orphan_hosts[line] = death.host
        if death.mpi and death.rank is not None:
            # (the runtime's line, read as a failure of no rank by the line reader, is this rank's record)
            scan.orphans = [item for item in scan.orphans if item[0] != order]
    return any(death.mpi and death.rank is not None for death in deaths)


def _banner_in_record(deaths: list[RankDeath]) -> list[RankDeath]:
    """A rank's own banner (a code's fatal error, raised) and, after it, a launcher's record of the same rank's exit
    with a code (Open MPI's "The first process to do so was: ... Process name: [[j,1],N] Exit code: 2"), or by the
    signal the banner's words name (an assert's SIGABRT, then "mpirun noticed that process rank N ... exited on signal
    6 (Aborted)"): one failure, the banner's words at the record's standing (the record gives the rank and says it was
    first, the banner what failed)."""
    banners = {d.rank: d for d in deaths if d.raised and d.rank is not None}
    if not banners:
        return deaths
    merged: dict[int, RankDeath] = {}
    out: list[RankDeath] = []
    for death in deaths:
        banner = banners.get(death.rank) if death.rank is not None else None
        if banner is not None and death.rank is not None and not death.raised \
                and (death.signal is None and death.exitcode or banner.signal is not None
                     and death.signal == banner.signal) and banner.offset < death.offset and death.rank not in merged:
            merged[death.rank] = replace(banner, first=banner.first or death.first,
                                         host=banner.host or death.host, mpi=banner.mpi or death.mpi)
            continue
        out.append(death)
    return [merged.get(d.rank, d) if d.raised and d.rank is not None else d for d in out] if merged else deaths


def _line_counter(text: str) -> Callable[[int], int]:
    """The line of an offset of ``text`` (its newlines before it), counted on from the last offset asked: asked in
    text order, the text is counted once (a count from its start per record made a log of many records quadratic)."""
    last = [0, 0]                       # (offset, lines before it)

    def line_of(offset: int) -> int:
        if offset < last[0]:
            last[0] = last[1] = 0
        last[1] += text.count("\n", last[0], offset)
        last[0] = offset
        return last[1]

    return line_of


def _teardown_after(scan: LogScan, place: int) -> None:
    """A launcher said, at line ``place``, that it kills every other process: the kills of no known rank told after
    it (the shell's "Killed" of the main process) are that teardown, collateral."""
    for index, (order, line, path) in enumerate(scan.orphans):
        if order > place and line.kind is CrashLineKind.FATAL_SIGNAL and line.signal in ("SIGKILL", "SIGTERM") \
                and not line.collateral:
            torn = replace(line, collateral=True)
            scan.orphan_hosts.moved(line, torn)
            scan.orphans[index] = (order, torn, path)


def _rank_of_process(host: str | None, pid: int, pid_ranks: dict[tuple[str | None, int], int]) -> int | None:
    """The rank of process ``pid`` on ``host``: by its host and pid, or by its pid alone where the record or the
    prefixes do not say the host and that pid names one rank only."""
    if (host, pid) in pid_ranks:
        return pid_ranks[(host, pid)]
    ranks = {rank for (on, number), rank in pid_ranks.items() if number == pid and (host is None or on is None)}
    return ranks.pop() if len(ranks) == 1 else None


def pid_ranks_of(owners: list[LineOwner]) -> dict[tuple[str | None, int], int]:
    """(host, pid) -> rank, from lines whose prefixes say both (``(RayTrainWorker pid=615, ip=10.0.0.6) [rank1]:``);
    a process two ranks claim is left out."""
    seen: dict[tuple[str | None, int], set[int]] = {}
    for owner in owners:
        if isinstance(owner.key, int) and owner.pid is not None:
            seen.setdefault((owner.host, owner.pid), set()).add(owner.key)
    if any(owner.rest.startswith("- (") for owner in owners):     # (Ray Train's table of its workers)
        for key, rank in ray_train_ranks(owner.rest for owner in owners).items():
            if key[0] is not None:      # (its row's ip: a record's pid on another node is another process)
                seen.setdefault(key, set()).add(rank)
    return {key: next(iter(ranks)) for key, ranks in seen.items() if len(ranks) == 1}


def mpi_records(text: str, path: str, scan: LogScan) -> None:
    """Open MPI's error handler's block ("*** reported by process [J,R]": rank R failed in its MPI call),
    MPI_ABORT, a rank exiting improperly: the rank's own failure, at its place in the text."""
    errors = parse_mpi_errors(text)
    base = scan.lines_read - text.count("\n") - 1
    line_of = _line_counter(text)       # (the records in text order: the text's lines counted once for them all)
    for error in errors:
        if error.ended_well:
            scan.went_on.append(f"{ABORT_AFTER_END_NOTE}: {error.text.split('): ', 1)[-1][:120]}")   # (its line)
            continue
        order = base + line_of(error.offset)
        line = CrashLine(CrashLineKind.NETWORK if error.network else CrashLineKind.EXCEPTION, error.text[:400],
                         collateral=not error.first and bool(scan.failures))
        if error.first and not error.network and error.rank is not None and not error.text.startswith(ABORT_TEXT) \
                and (record := _first_exit_record(scan, error.rank)) is not None:
            # the rank's record of its failed MPI call (mpi4jax's "r1 | MPI_Allreduce returned error code 15 ...")
            # and the launcher's record that it was the first to exit with a code ("The first process to do so was:
            # ... [[j,1],1] Exit code: 1"): one failure, the call's words at the record's standing
            items = scan.failures[error.rank]
            items[items.index(record)] = (record[0], line, path)
            continue
        if error.rank is None:
            scan.orphans.append((order, line, path))
            if error.host:
                scan.orphan_hosts[line] = error.host
            continue
        scan.ranks_seen.add(error.rank)
        if error.host:
            scan.hosts.setdefault(error.rank, error.host)
        scan.failures.setdefault(error.rank, []).append((order, line, path))


def _first_exit_record(scan: LogScan, rank: int) -> tuple[int, CrashLine, str] | None:
    """The launcher's record, read before, that ``rank`` was the first process to exit, with a code (no signal, no
    words of its own: placed first, order -1), where the rank's failures hold nothing else."""
    items = scan.failures.get(rank, [])
    records = [item for item in items if item[0] == -1 and item[1].text.startswith(EXIT_RECORDS)]
    return records[0] if len(records) == 1 and len(items) == 1 else None


def _launcher_time(stamp: str | None) -> float | None:
    """torchrun prints local time as 2026-11-22_00:23:37."""
    if not stamp:
        return None
    try:
        return time.mktime(time.strptime(stamp, "%Y-%m-%d_%H:%M:%S"))
    except ValueError:
        return None


MAX_CHANNEL_LINES = 200_000
CHANNEL = b"NCCL INFO Channel"   # (the large log's marker pass probes for it: needles.seen)


def _channel_text(text: str | bytes | mmap.mmap) -> str:
    """The text channel_ranks reads: the whole log, or of a mapped one its channel set-up lines (found
    with ``bytes.find``, keeping no page resident; read only when a WARN's process has no rank)."""
    if isinstance(text, str):
        return text
    probed = needles.seen(text, CHANNEL)
    if probed is not None and probed[0] == 0 and not probed[2] and \
            pages.find(text, CHANNEL, max(0, probed[1] - len(CHANNEL) + 1), len(text)) < 0:
        return ""       # the marker pass saw none before its end, and none is after it: no pass of its own
    lines: list[bytes] = []
    pos = 0
    found = needles.find_all(text, (CHANNEL,), max_hits=4 * MAX_CHANNEL_LINES)   # one SIMD pass, where it is there
    hits = None if found is None else found[CHANNEL]
    while len(lines) < MAX_CHANNEL_LINES and (hit := pages.find(text, CHANNEL, pos, len(text)) if hits is None
                                              else needles.next_hit(hits, pos)) >= 0:
        start = max(text.rfind(b"\n", max(0, hit - 4096), hit) + 1, hit - 4096, 0)
        stop = text.find(b"\n", hit, hit + 4096)
        stop = min(len(text), hit + 4096) if stop < 0 else stop
        lines.append(text[start:stop])
        pos = stop
    return b"\n".join(lines).decode("utf-8", "replace")


def nccl_tracker(data: str | bytes | mmap.mmap) -> NcclTracker:
    """The NCCL lines of a whole file, read (which finds the first "NCCL" without keeping the file resident)."""
    tracker = NcclTracker(history=16)
    if isinstance(data, str):
        tracker.feed_text(data)
    else:
        tracker.feed_bytes(data)
    return tracker


def _nccl_failure(message: str, source: str | None = None, setup: bool = False) -> CrashLine | None:
    """The transport failure a NCCL WARN's message reports (NCCL's own: tied to its process even without a rank), or
    None. ``source``: the NCCL source file the WARN names; ``setup``: the WARN came while a communicator of its
    process was being set up (before its "Init COMPLETE": a transport's peer access, a proxy's start)."""
    if (source == "init.cc" or setup) and (init := _INIT_CUDA.match(message.strip())) is not None \
            and "out of memory" not in message:
        # a CUDA call that failed while NCCL set a communicator up (init.cc returns ncclUnhandledCudaError to its
        # caller, which raises it): the communicator's creation failed, as the caller's NCCL error says, no kernel did
        return CrashLine(CrashLineKind.EXCEPTION, f"NCCL's communicator set-up failed on a CUDA call "
                         f"('{init.group('what')}'): {message.strip()}"[:400])
    crash = parse_crash_line(message)
    if crash is None and "out of memory" in message:
        crash = CrashLine(CrashLineKind.CUDA_OOM, message.strip()[:300])
    if crash is not None and (crash.kind in _NCCL_FAILURES or crash.text.startswith(SIZE_CHECK_TEXT)
                              or PROXY_FAILED.search(crash.text) is not None):
        return crash
    return None


def nccl_records(text: str | bytes | mmap.mmap, path: str, scan: LogScan, default_rank: int | None,
                 tracker: NcclTracker | None = None) -> None:
    """Fold the NCCL lines of ``text`` into ``scan``; ``tracker``: those of ``text`` already read (nccl_tracker)."""
    if tracker is None and isinstance(text, str):
        if "NCCL" not in text:
            return
        tracker = NcclTracker(history=16)
        tracker.feed_text(text)
    elif tracker is None:
        tracker = nccl_tracker(text)
    states = tracker.last_ops()
    world = max((s.nranks or 0 for s in states), default=0) or max(
        (i.nranks or 0 for i in tracker.inits()), default=0)
    if world:
        record_world(scan, WorldSize(world, "nranks in NCCL's lines"))
    unmapped: dict[tuple[str, int], NcclCommState] = {}
    for state in states:
        rank = state.global_rank if state.global_rank is not None else default_rank
        if rank is None:
            old = unmapped.get((state.host, state.pid))
            if old is None or len(state.history) > len(old.history):
                unmapped[(state.host, state.pid)] = state
            continue
        pg = state.comm_id or f"comm:{state.comm}"
        if state.nranks and state.nranks == world and not state.comm_id:
            pg = "0"
        scan.ranks_seen.add(rank)
        scan.hosts.setdefault(rank, state.host)
        scan.pids.setdefault(rank, state.pid)
        for op in state.history:
            p2p = op.op in ("send", "recv")
            scan.collectives.setdefault(rank, []).append(Collective(
                rank=rank, pg=pg, seq=op.op_count + 1, op=op.op, count=op.count, dtype=op.dtype,
                state=CollectiveState.COMPLETED if op is not state.last else CollectiveState.SCHEDULED,
                is_p2p=p2p, peer=op.root if p2p else None, source="nccl",
                pg_name="default_pg" if pg == "0" else None))
    for (host, pid), state in sorted(unmapped.items()):
        scan.nccl_processes.append(NcclProcess(host, pid, state.last.cuda_dev, tuple(
            Collective(rank=-1, pg=f"comm:{state.comm}", seq=op.op_count + 1, op=op.op, count=op.count,
                       dtype=op.dtype, state=CollectiveState.SCHEDULED, source="nccl") for op in state.history),
            state.nranks))
    by_channel: dict[tuple[str, int], int] | None = None
    # (a WARN's failure is its message's alone, and NCCL repeats a message on every rank and retry: read once each)
    failures: dict[tuple[str, bool], CrashLine | None] = {}
    ranks: dict[tuple[str, int], int | None] = {}       # (a process's rank in NCCL's lines: one look over its inits)
    for warn in tracker.warnings():
        rank = warn.launcher_rank
        if rank is None:
            process = (warn.host, warn.pid)
            rank = ranks[process] if process in ranks else ranks.setdefault(process, tracker.global_rank(*process))
        if rank is None:
            by_channel = channel_ranks(_channel_text(text)) if by_channel is None else by_channel
            rank = by_channel.get((warn.host, warn.pid))
            if rank is not None:
                scan.ranks_seen.add(rank)
                scan.hosts.setdefault(rank, warn.host)
        scan.events.append(Event(EventKind.NCCL_WARN, warn.message[:300], rank=rank, host=warn.host,
                                 evidence=(path,)))
        # (a CUDA failure in a communicator's set-up that then completed is one NCCL got past: no failure)
        setup = tracker.setup_reading(warn)
        if setup == "recovered":
            crash = None
        elif (warn.message, setup is not None) in failures:
            crash = failures[warn.message, setup is not None]
        else:
            crash = failures[warn.message, setup is not None] = _nccl_failure(
                warn.message, (warn.source_file or "").rsplit("/", 1)[-1], setup is not None)
        if crash is not None:
            # a transport failure NCCL itself reports: tied to its process (host:pid, GPU) even without a rank
            where = f"{warn.host}:{warn.pid}" + (f" (GPU {warn.cuda_dev})" if warn.cuda_dev is not None else "")
            named = replace(crash, text=f"{where}: NCCL WARN {crash.text}"[:400])
            item = (scan.lines_read, named, path)
            if rank is not None:
                scan.ranks_seen.add(rank)      # (its rank may be known from NCCL's own lines alone)
                scan.failures.setdefault(rank, []).append(item)
            else:
                scan.orphans.append(item)
                scan.orphan_hosts.setdefault(named, warn.host)
