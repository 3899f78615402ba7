"""Launcher and tool prefixes on log lines (whose line it is: :mod:`triage.parsing.log_owners`).

Recognised (and nested up to a few deep):
- ``[rank3]:`` (torchrun/PyTorch), ``[rank: 3] `` (Lightning's rank_prefixed_message),
  ``[host:3] `` / ``[host:3]+`` / ``[host:3]:`` (triage's tag, torchrun --role), ``[default0]:``
  (torchrun --tee: a *local* rank), ``3: `` (srun --label; never a numbered list's ``1: ``: numbered_list_lines),
  ``node07: `` (pdsh; lowercase names with a digit only), ``(RayTrainWorker pid=615, ip=10.0.0.6) ``,
  SkyPilot's ``(worker1, rank=1, pid=2210, ip=10.164.0.9) `` (the node: its rank= is the node's, no process's),
  vLLM's ``(VllmWorker TP2 pid=4757) `` / ``(VllmWorker rank=2 pid=4757) `` (rank 2), SGLang's
  ``[2026-03-29 18:56:25 TP1] `` (rank 1 of a TP-only server),
  ``[pod/train-worker-0/pytorch] `` (``kubectl logs --prefix``, with or without ``--timestamps``: the
  pod, no rank), Julia Distributed's ``      From worker 3:\t`` (worker 3: Julia's worker id, no rank),
  ``[1,3]<stdout>:`` (Open MPI's --tag-output: job, rank) and ``[3]<stderr>:`` (horovodrun),
  Determined's ``5c902731 [rank=1] || `` (container, rank; ``5c902731 || `` alone: the launcher), a runner's
  stream tag ``job-name [stderr] `` (milabench, CI runners: no rank) or a test harness's bare ``stderr: `` label
  (accelerate test's subprocess runner: no rank), Intel MPI's ``[proxy:0:1@node2] `` (the node, no rank), torchx's
  ``trainer/0 [1]:`` (replica 0 as the node, local rank 1), Hydra's (MPICH, Intel MPI) ``mpiexec -prepend-rank``
  ``[3] `` (only where the whole input shows it as a rank prefix: ``prepend``, decided by
  :func:`triage.parsing.log_owners.prepended_ranks`);
- slurmstepd's own lines (``0: slurmstepd-n1: error: ...``, ``slurmstepd: error: *** STEP 7.0 ON n1 ...``) name
  their node after ``slurmstepd-`` or after ``ON``: that node, never ``slurmstepd-n1``; the head stays in ``rest``;
- NCCL's own ``host:pid:tid [dev]`` head gives host and pid but no rank; it is kept in ``rest``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from triage.lazy_regex import lazy_regex
from triage.parsing.textclean import strip_decorations


@dataclass(frozen=True)
class RankPrefix:
    """A log line's launcher prefixes read: the rank, the host and the rest of the line."""
    rank: int | None
    host: str | None
    rest: str                    # the line without launcher prefixes (NCCL's head is kept)
    local: bool = False          # rank is a local rank (torchrun --tee "[default0]:")
    pid: int | None = None
    # the rank came from a "[host:N]" head: triage's tag (a rank), or a pid (Open MPI/PRRTE, Intel MPI and others
    # print "[host:pid]"): decided over the whole input (triage.parsing.log_owners)
    host_tag: bool = False
    name: str | None = None      # the process's name in its tag ("(EngineCore_DP1 pid=4121)": vLLM's engine core)


_RANK = lazy_regex(r"\[(?:rank|RANK):? ?(\d+)\]:?\s?")     # "[rank3]:", Lightning's "[rank: 3] "
# triage's tag is "[host:rank]" + " " (a whole line) or "+" (a partial one), then the line as it was;
# "[host:launcher]" tags the launcher's own output. "[file.cpp:123]" (glog, loggers) is no tag.
_HOST_RANK = lazy_regex(
    r"\[([A-Za-z0-9][\w.-]*?)(?<!\.cpp)(?<!\.cc)(?<!\.py)(?<!\.h)(?<!\.c)(?<!\.cu):(\d+|launcher)\]"
    r"(?::\s?|[ +]|(?=\[))"
)
_LOCAL = lazy_regex(r"\[([A-Za-z_][\w-]*?)(\d+)\]:\s?")
# a Python logger's head after a launcher prefix (vLLM: "ERROR 01-29 20:00:47 multiproc_worker_utils.py:240] ")
# (newer vLLM brackets the place: "ERROR 09-11 17:45:52 [multiproc_executor.py:596] ")
_LOGGER_HEAD = lazy_regex(r"(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)? "
                          r"\[?[\w./-]+:\d+\] ")
_MPI = lazy_regex(r"\[(?:\d+,)?(\d+)\]<(?:stdout|stderr|stddiag)>:\s?")
# what Open MPI's signal handler prints after its "[host:pid] " head (the pid is no rank)
# (its error handler too: "[host:pid] *** An error occurred in MPI_Reduce", "*** reported by process [..]", with one
# or two asterisks where Markdown took the rest, or none: "[host:pid] Process received signal"; a backtrace frame's
# index alone where the line was cut after it;
# mpirun's "[host:pid] 1 more process has sent help message help-mpi-errors.txt"; Open MPI's own messages, which
# opal_output heads "[host:pid] " and begins with the function that speaks: "opal_ifinit: ioctl(SIOCGIFADDR) failed
# with errno=19", "mca_base_component_repository_open: unable to open mca_sec_basic: ...")
_OMPI_HANDLER = lazy_regex(r"\s?(?:\*{1,3} (?:Process received signal|End of error message|An error occurred in|"
                           r"reported by process|on communicator|MPI_|\s+and potentially)|Signal: |Signal code: |"
                           r"Process received signal|(?:opal|orte|ompi|mca|pmix|prte)_\w+: |"
                           r"Failing at address: |Associated errno: |\[ ?\d+\](?: |$)|"
                           r"\d+ more process(?:es)? ha(?:s|ve) sent help message)")
# (also the bare label a test harness's subprocess runner prints before each line of its child's output: the
# `execute_subprocess_async` tee of accelerate's, transformers' and DeepSpeed's test utilities, "stderr: <line>",
# "stdout: <line>", under which `accelerate test` shows torchrun's whole output: no rank)
_STREAM_TAG = lazy_regex(r"[\w.:/-]+ \[(?:stdout|stderr)\](?: |$)|(?:stdout|stderr): ")
# "[80746] [rank0]:..." (a viewer's line numbers), also before srun's task label ("[80746] 0: ..."; three digits
# or more there, so that a bracketed rank before an iteration count, "[1] 100: loss", is not taken for one)
_LINE_NO = lazy_regex(r"\[\d+\] (?=\[)|\[\d{3,}\] (?=\d+ ?: )")
_SRUN = lazy_regex(r"\s*(\d+) ?: ")
# (never "rank-3: ", "rank_3: ": a rank joined to its number, triage.parsing.rank_words, not a host; never a bare
# number: "41: 41: error ival=4" is srun -l's task label over Global Arrays' own "41: " process id, no host "41")
_PDSH = lazy_regex(r"(?![Rr]ank[-_]?\d+: |\d+: )([a-z0-9][a-z0-9.-]*[0-9][a-z0-9.-]*): ")
_RAY = lazy_regex(r"\((?:(?P<name>\w+) )?(?:(?P<tag>TP\d+|rank=\d+) )?pid=(\d+)(?:, ip=([\w.:-]+))?\)\s?")
# SkyPilot's head on each node's output of a task (its Ray-based runner): "(head, rank=0, pid=3101) ", "(worker1,
# rank=1, pid=2210, ip=10.164.0.9) " (rank= is the node's rank, SKYPILOT_NODE_RANK), "(task, pid=1918) " on one node
_SKYPILOT = lazy_regex(r"\((?P<name>[\w-]+), (?:rank=(?P<node>\d+), )?pid=(?P<pid>\d+)(?:, ip=(?P<ip>[\w.:-]+))?\)\s?")
# vLLM's worker tags: "(VllmWorker rank=2 pid=5520)", "(VllmWorker TP2 pid=4757)", "(Worker_TP1 pid=77)": the rank
# (its TP rank, the worker's rank when there is no pipeline or data parallelism: "Worker_PP1_TP0" names none)
_VLLM_TP = lazy_regex(r"(?:^|_)TP(\d+)$|^rank=(\d+)$")
# SGLang's logger head: "[2026-03-29 18:56:25 TP1] " (the TP rank: the rank of a TP-only server), with "DP0 ",
# "PP1 ", "EP1 " parts ("[... DP1 TP0] " names no global rank, "[... TP3 EP3] " does: EP ranks follow TP ranks)
# (what is left of it, "TP1] ", once the paste cleaner took its time away)
_SGLANG = lazy_regex(r"(?:\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)? )?"
                     r"(?P<parts>(?:TP|DP|PP|EP|CP)\d+(?: (?:TP|DP|PP|EP|CP)\d+)*)\] ?")
# Intel MPI's Hydra: a node's proxy "[proxy:0:1@node2] " (pmi_proxy: the node, no rank; "0:1" is the proxy's
# index, not a rank). (The launcher's own "[mpiexec@node0] " is kept: its records are read with it.)
_IMPI = lazy_regex(r"\[proxy:\d+:\d+@([A-Za-z0-9][\w.-]*)\] ?")
# torchx's role/replica before torchrun's local-rank tag: "trainer/0 [1]:" (replica 0 of role "trainer", local rank
# 1): the replica is the node, the number in brackets a local rank
_TORCHX = lazy_regex(r"([A-Za-z_][\w-]*/\d+) \[(\d+)\]:\s?")
_NCCL_HEAD = lazy_regex(r"([\w.-]+):(\d+):(\d+) \[(\d+)\]")
# Hydra's -prepend-rank ("[3] text"): a bare bracketed number, read as a rank only where the caller says so
PREPENDED = lazy_regex(r"\[(\d{1,5})\](?: |$)")
# slurmstepd's head: "slurmstepd-<node>: " (the node it runs on) or "slurmstepd: " (its "*** STEP 7.0 ON <node>
# CANCELLED ..." names the node)
_SLURMSTEPD = lazy_regex(r"slurmstepd(?:-(?P<node>[A-Za-z0-9][\w.-]*))?: ")
_STEPD_NODE = lazy_regex(r"\*\*\* (?:JOB|STEP) \S+ ON (?P<node>[A-Za-z0-9][\w.-]*) ")
# Determined's task logs ("[2024-03-15T16:29:14.110799Z] 5c902731 [rank=1] || ", the time already gone):
# the container, then the worker's rank; without "[rank=N]" the line is the launcher's own
_DETERMINED = lazy_regex(r"(?:[0-9a-f]{8} (?:\[rank=(?P<rank>\d+)\] )?|\[rank=(?P<bare>\d+)\] )\|\| ?")
# "kubectl logs --prefix" ("[pod/NAME/CONTAINER] "), with "--timestamps" after it: the pod, no rank
_K8S = lazy_regex(r"\[pod/([\w.-]+)/[\w.-]+\] ?(?:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d) )?")
# Julia's Distributed: the master prints each worker's output as "      From worker 3:\t<line>" (cluster.jl's
# redirect_worker_output; Julia 0.x "\tFrom worker 3:\t"; the tab often pasted as spaces, the indent often taken off
# with the paste's): the worker's id (the master is 1), never a rank. Julia's on the line's own evidence only with
# its tab; with spaces (a Python pool's own "From worker 2: ...", or Julia's tab pasted as spaces), a worker of no
# known program's, Julia's where the input shows Julia elsewhere (triage.parsing.log_owners)
_JULIA = lazy_regex(r"[ \t]*From worker (\d+):(?:[ \t]+|$)")
_JULIA_SHAPE = lazy_regex(r"[ \t]*From worker \d+:\t")
# the Folding@home client's head on each line of its log and of its science core's output: "11:16:19:WU00:FS00:0xa7:"
# (time, work unit, folding slot, core; the core's lines with their level, "ERROR:", "WARNING:"): a slot, no rank
_FAH = lazy_regex(r"(?:\d\d:\d\d:\d\d:)?WU\d\d:FS\d\d:(?:0x[0-9a-f]{1,4}:)?(?:(?:ERROR|WARNING):)?")


# every head the loop of split_rank_prefix reads, as one pattern: where none of them starts the rest of a line (most
# lines, once their launcher's prefix is gone), one match says so where there were a dozen (the same answers: a
# line the loop reads on matches one of its patterns at its start, so it matches this one too; named groups made
# plain: each pattern names its own)
_ANY_HEAD = lazy_regex("|".join(
    "(?:" + re.sub(r"\(\?P<\w+>", "(?:", str(pattern.pattern)) + ")"
    for pattern in (_RANK, _MPI, _HOST_RANK, _IMPI, _TORCHX, _DETERMINED, _LOCAL, _LINE_NO, _LOGGER_HEAD, _STREAM_TAG,
                    _SKYPILOT, _RAY, _SGLANG, _K8S, _JULIA, _FAH, _SRUN, _SLURMSTEPD, _PDSH)))

# A numbered list is no run of srun's task labels ("3: "): R's recover() frames ("Enter a frame number, or 0 to exit",
# then "1: f(x)", "2: g(y)"), R's numbered warnings ("Warning messages:", then "1: In f() :", "2: ..."), R's
# traceback() (numbered down to 1), Node.js's native stack ("FATAL ERROR: ..." or "----- Native stack trace -----",
# then " 1: 0xb09c10 node::Abort() [node]"), Rust's backtrace ("stack backtrace:", then "   0: rust_begin_unwind").
# srun's labels repeat their numbers, interleave and start at 0; a list is numbered 1..k (or k..1) once each, in order,
# after its head line or with a frame or a call in every item. Its head, the nearest line before its first item that
# is not blank:
_LIST_HEAD = lazy_regex(r"\s*(?:Enter a frame number, or 0 to exit\b|(?:In addition: )?Warning messages?:\s*$|"
                        r"(?:> )?traceback\(\)|Traceback\b|FATAL ERROR: |"
                        r"[\W_]*(?i:stack backtrace|backtrace|stack ?trace|call ?stack|native stack trace|"
                        r"js stack trace)[\W_]*$)")
# (the head of a list numbered down to 1: R's traceback())
_R_TRACEBACK = lazy_regex(r"\s*(?:> )?traceback\(\)")
# (a head after which a list may start at 0: a backtrace's)
_ZERO_HEAD = lazy_regex(r"[\W_]*(?i:stack backtrace|backtrace|stack ?trace|call ?stack)[\W_]*$")
# (R's warnings are numbered from two; one warning under "Warning message:" is numbered 1 in some pastes)
_ONE_ITEM_HEAD = lazy_regex(r"\s*(?:In addition: )?Warning messages?:\s*$")
# an item that is a frame or a call: a native frame's address (Node's "0xb09c10 ", "00007FF655E1542D "), a call
# ("SnowParam(4, type = ...)", "In f() :", "node::Abort() [node]")
_FRAME_ITEM = lazy_regex(r"(?:0x[0-9A-Fa-f]{4,16}|[0-9A-Fa-f]{16})\b|(?:In )?[\w.:$@<>~]+\(")


def numbered_list_lines(lines: list[str] | tuple[str, ...]) -> frozenset[int]:
    """The indexes of ``lines`` whose leading ``N: `` numbers a list (see _LIST_HEAD), not srun's task label: a run of
    items numbered 1..k, or k..1 (R's traceback()), or 0..k after a backtrace's head, each item's own lines after it
    indented, with a head line before it or a frame or a call in every item, neither an item just before it nor one
    just after it (srun's labels of tasks interleaved)."""
    items: dict[int, tuple[int, str]] = {}
    for at, line in enumerate(lines):
        if (line[:1].isdigit() or line[:1] == " ") and (match := _SRUN.match(line)) is not None:
            items[at] = int(match.group(1)), line[match.end():]
    if len(items) < 1:
        return frozenset()
    listed: set[int] = set()
    # (srun's own record names tasks of those numbers, "srun: error: node02: tasks 2-3: Exited with exit code 1": its
    # labels; a list of frames or calls with no head line is none there)
    srun_tasks = _srun_task_numbers(lines)
    order = sorted(items)
    taken = 0
    while taken < len(order):
        start = order[taken]
        run = [start]
        first = items[start][0]
        step = 1 if first in (0, 1) else -1
        while True:
            at = run[-1] + 1
            while at < len(lines) and at not in items and lines[at][:1] in (" ", "\t") and lines[at].strip():
                at += 1     # (an item's own indented lines: R's warning's words, Rust's "at file:line")
            if at in items and items[at][0] == items[run[-1]][0] + step and (step == 1 or items[run[-1]][0] > 1):
                run.append(at)
            else:
                break
        taken += len(run)
        last = items[run[-1]][0]
        after = run[-1] + 1
        while after < len(lines) and after not in items and lines[after][:1] in (" ", "\t") and lines[after].strip():
            after += 1
        before = start - 1
        while before >= 0 and not lines[before].strip():
            before -= 1
        if (step == -1 and last != 1) or after in items or before in items:
            continue
        head = before >= 0 and (_LIST_HEAD if step == 1 else _R_TRACEBACK).match(lines[before]) is not None
        frames = all(_FRAME_ITEM.match(items[at][1].lstrip()) is not None for at in run)  and (
            srun_tasks is None or srun_tasks.isdisjoint(items[at][0] for at in run))
        if first == 0 and not (head and _ZERO_HEAD.match(lines[before])):
            continue
        if (len(run) >= 2 and (head or frames)) or (len(run) == 1 and first == 1 and before >= 0
                                                   and _ONE_ITEM_HEAD.match(lines[before]) is not None):
            listed.update(run)
    return frozenset(listed)


_SRUN_TASK_RECORD = lazy_regex(r"srun: error: (?:[\w.-]+: )?tasks? (?P<tasks>\d+(?:[,-]\d+)*): ")


def _srun_task_numbers(lines: list[str] | tuple[str, ...]) -> frozenset[int] | None:
    """The task numbers srun's own records in ``lines`` name ("srun: error: node03: tasks 2-3: Exited with exit code
    1"), or None where no such record is in them."""
    named: set[int] = set()
    for line in lines:
        if "srun: error: " not in line or (match := _SRUN_TASK_RECORD.search(line)) is None:
            continue
        for part in match.group("tasks").split(","):
            low, _, high = part.partition("-")
            if high and int(high) - int(low) <= 100_000:
                named.update(range(int(low), int(high) + 1))
            else:
                named.add(int(low))
    return frozenset(named) if named else None


def without_pod_tag(line: str) -> str:
    """The line without a leading ``kubectl logs --prefix`` tag (and what it carried after it), else the line."""
    match = _K8S.match(line)
    return line if match is None else strip_decorations(line[match.end():])[0]


def _vllm_rank(name: str | None, tag: str | None) -> int | None:
    """The rank a vLLM worker's tag names (``rank=2``, ``TP2``, ``Worker_TP2``), or None (``Worker_PP1_TP0``)."""
    for part in (tag, name):
        if part and "PP" not in part and "DP" not in part and (found := _VLLM_TP.search(part)) is not None:
            return int(found.group(1) or found.group(2))
    return None


def split_rank_prefix(line: str, prepend: bool = False) -> RankPrefix:
    """The rank and host a line's prefixes say, and the line without them. ``prepend``: a leading ``[N] `` is
    Hydra's -prepend-rank (the whole input said so). Never raises."""
    if line[:1].isalnum() and (head := _NCCL_HEAD.match(line)) is not None:  # a bare NCCL line
        return RankPrefix(None, head.group(1), line, False, int(head.group(2)))
    rank: int | None = None
    host: str | None = None
    pid: int | None = None
    local = False
    pod = False
    host_tag = False
    name: str | None = None
    rest = line
    if prepend and (match := PREPENDED.match(rest)) is not None:
        rank, rest = int(match.group(1)), rest[match.end():]
    for _ in range(4):
        if _ANY_HEAD.match(rest) is None:
            break       # (no head the loop reads starts here)
        if (match := _RANK.match(rest)) or ((match := _MPI.match(rest)) and rank is None):
            if host_tag and rank is not None and rank != int(match.group(1)):
                pid = rank         # "[host:4121] [rank3]: ...": the head's number was a pid
            rank, local, host_tag = int(match.group(1)), False, False
        elif match := _HOST_RANK.match(rest):
            host, local = match.group(1), False
            number = int(match.group(2)) if match.group(2).isascii() and match.group(2).isdigit() else None
            if number is not None and (rank is not None or _OMPI_HANDLER.match(rest, match.end())):
                pid = number      # Open MPI's signal handler heads its lines "[host:pid] ", inside a rank's tag
            else:
                rank, host_tag = (number, True) if number is not None else (rank, host_tag)
        elif (match := _IMPI.match(rest)) is not None:
            host = host or match.group(1)
        elif (match := _TORCHX.match(rest)) is not None and rank is None:
            host, rank, local = host or match.group(1), int(match.group(2)), True
        elif (match := _DETERMINED.match(rest)) is not None:
            found = match.group("rank") or match.group("bare")
            rank, local = (int(found), False) if found is not None else (rank, local)
        elif (match := _LOCAL.match(rest)) and rank is None:
            rank, local = int(match.group(2)), True
        elif ((rank is None and host is None and (match := _LINE_NO.match(rest)) is not None)
              or (match := _LOGGER_HEAD.match(rest)) is not None
              or (rank is None and (match := _STREAM_TAG.match(rest)) is not None)):
            pass
        elif (match := _SKYPILOT.match(rest)) is not None:
            # (SkyPilot's rank is the node's, SKYPILOT_NODE_RANK: never a process's rank)
            pid = int(match.group("pid"))
            host = match.group("ip") or host or (match.group("name") if match.group("node") else None)
        elif (match := _RAY.match(rest)) is not None:
            pid = int(match.group(3))
            host = match.group(4) or host
            name = match.group("name") or name
            if rank is None and (tagged := _vllm_rank(match.group("name"), match.group("tag"))) is not None:
                rank, local = tagged, False
        elif (match := _SGLANG.match(rest)) is not None:
            parts = dict(re.findall(r"([A-Z]+)(\d+)", match.group("parts")))
            if rank is None and "TP" in parts and not {"DP", "PP", "CP"} & parts.keys():
                rank, local = int(parts["TP"]), False
        elif (match := _K8S.match(rest)) is not None:
            host, pod = host or match.group(1), host is None
            # (what the container printed may carry its own decorations: a viewer's column, a timestamp)
            rest = strip_decorations(rest[match.end():])[0]
            if prepend and rank is None and (match := PREPENDED.match(rest)) is not None:
                rank, rest = int(match.group(1)), rest[match.end():]   # (-prepend-rank inside the pod's tag)
            continue
        elif (match := _JULIA.match(rest)) is not None:
            name = name or (f"Julia worker {match.group(1)}" if _JULIA_SHAPE.match(rest)
                            else f"worker {match.group(1)}")
        elif (match := _FAH.match(rest)) is not None:
            pass
        elif (match := _SRUN.match(rest)) and rank is None and (host is None or pod):   # (srun in a pod)
            rank = int(match.group(1))
        elif host is None and (match := _SLURMSTEPD.match(rest)) is not None:
            on = _STEPD_NODE.search(rest, match.end())
            host = match.group("node") or (on.group("node") if on else None)
            break           # (the head stays: "slurmstepd: error: ..." is read with it)
        elif (match := _PDSH.match(rest)) and host is None and not _NCCL_HEAD.match(rest):
            host = match.group(1)
        else:
            break
        rest = rest[match.end():]
    head = _NCCL_HEAD.match(rest)
    if head:
        host = host or head.group(1)
        pid = int(head.group(2))
    return RankPrefix(rank, host, rest, local, pid, host_tag, name)
