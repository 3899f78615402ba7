"""Splitting an interleaved log per rank: each line's owner from its launcher prefixes
(:mod:`triage.parsing.log_prefix`), with NCCL's ``host:pid`` heads mapped to ranks by the NCCL init
lines of the same log (:mod:`triage.parsing.nccl.lines`)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from itertools import pairwise

from triage.lazy_regex import lazy_regex
from triage.parsing.log_prefix import (
    PREPENDED,
    RankPrefix,
    numbered_list_lines,
    split_rank_prefix,
    without_pod_tag,
)
from triage.parsing.nccl.lines import NcclInit, parse_nccl_line
from triage.parsing.node_ranks import node_ranks, nproc_per_node


@dataclass(frozen=True)
class LineOwner:
    """Whose line it is: ``key`` is a global rank (int), ``"host:pid"`` (NCCL's head or Ray's prefix,
    no rank known), ``"local:N"`` (torchrun --tee local rank) or ``"unknown"``."""

    key: int | str
    rest: str
    host: str | None = None
    pid: int | None = None
    # its "[host:N]" head could be a rank or a process id and the input does not tell which (read as a process)
    unsure: bool = False
    note: str = ""              # what the line's head cannot tell, said with a failure on it


# NWChem's errquit box echoes the input line it stopped at, under its number ("  current input line :" then
# "    41: task scf energy"): the number is the input's line, not a "N: " rank label (srun --label, GA's "N:")
_INPUT_LINE = "current input line :"
_NUMBERED = lazy_regex(r"[ \t]*(\d+): ")


def attribute_lines(lines: list[str] | tuple[str, ...]) -> list[LineOwner]:
    """Each line's owner, in order. Lines without a prefix of their own that look like a
    continuation (indented: traceback lines) belong to the previous line's owner. A host:pid is
    mapped to a rank when a line carries both (``[rank3]:node07:4121:4188 [3] NCCL ...``) or an
    NCCL init line of that process names its rank."""
    parsed = [split_rank_prefix(line) for line in lines]
    for at in numbered_list_lines(lines):
        parsed[at] = RankPrefix(None, None, lines[at])     # a list's number (R's frames, Node's stack), no srun label
    own_prints: dict[int, str] = {}
    parsed = _behind_own_prints(lines, parsed, own_prints)
    for at in range(1, len(parsed)):
        if parsed[at].rank is not None and parsed[at - 1].rank is None and lines[at - 1].rstrip().endswith(
                _INPUT_LINE) and (number := _NUMBERED.match(lines[at])) and int(number.group(1)) == parsed[at].rank:
            parsed[at] = RankPrefix(None, None, lines[at])     # NWChem's input line under its number, no rank's
    for at in r_vector_indexes(lines):      # R's index of a printed vector: "[1] \"text\"" is no rank's
        parsed[at] = RankPrefix(None, None, lines[at].split("] ", 1)[-1] if "] " in lines[at] else "")
    if prepended_ranks(lines, parsed):      # Hydra's -prepend-rank: "[3] text" is rank 3's line
        parsed = [split_rank_prefix(line, prepend=True) if line.startswith("[") and not nccl_device_tag(line) else p
                  for line, p in zip(lines, parsed)]
    parsed, replica_notes = _replica_ranks(lines, parsed)
    parsed = _julias_workers(lines, parsed)
    reading = host_tag_reading(parsed)
    if reading != "rank":       # "[host:N]" heads are host:pid here (or cannot be told apart: read as processes)
        parsed = [replace(p, rank=None, pid=p.rank, host_tag=reading == "unknown") if p.host_tag else p
                  for p in parsed]
    pid_rank: dict[str, int] = {}
    for p in parsed:
        if p.rank is not None and not p.local and p.host and p.pid is not None:
            pid_rank.setdefault(f"{p.host}:{p.pid}", p.rank)
    for pid_key, rank in (*_ranks_from_nccl_inits(parsed).items(), *_ranks_from_ray_train(parsed).items()):
        pid_rank.setdefault(pid_key, rank)
    out: list[LineOwner] = []
    previous = LineOwner("unknown", "")
    carry: LineOwner | None = None      # a traceback a logger printed after one prefixed head (SGLang, vLLM)
    carry_note = ""                     # what the carried lines' failure is said with (Ray's worker that raised it)
    raised = False                      # its exception line was read (a chained traceback may follow)
    after_frame = False                 # the carried line before was a frame whose indentation the paste lost
    for at, p in enumerate(parsed):
        key: int | str
        task = None
        if carry is not None and p.rank is None and p.pid is None and "RayTaskError" not in p.rest \
                and (state := _carried(p.rest, raised, after_frame)) is not None:
            out.append(LineOwner(carry.key, p.rest, carry.host, carry.pid, note=carry_note))
            raised = state
            after_frame = _BARE_FRAME.match(p.rest) is not None
            continue
        carry, raised, carry_note, after_frame = None, False, "", False
        if p.rank is not None and not p.local:
            key = p.rank
        elif p.pid is not None:
            key = pid_rank.get(f"{p.host}:{p.pid}", f"{p.host or '?'}:{p.pid}")
        elif p.rank is not None and p.host is not None and (note := replica_notes.get(p.host)) is not None:
            # torchx's "trainer/1 [0]:" of a job of several replicas, no map: local rank 0 of replica trainer/1
            out.append(LineOwner(f"{p.host} [{p.rank}]", p.rest, p.host, p.pid,
                                 note=f" (local rank {p.rank} of replica {p.host}{note}"))
            previous = out[-1]
            continue
        elif p.rank is not None:
            key = f"local:{p.rank}"
        elif p.rest[:1] in (" ", "\t") and previous.key != "unknown":
            out.append(LineOwner(previous.key, p.rest, previous.host, previous.pid))
            continue
        elif (task := _RAY_TASK.search(p.rest)) is not None:
            # Ray's driver retelling a worker's failure: "RayTaskError(RuntimeError): ray::f() (pid=2951,
            # ip=10.0.0.6, ...)", the worker's frames and exception line after it: that worker's, on that node
            # (a worker's own lines, "(RayTrainWorker pid=2951, ip=10.0.0.6) [rank1]: ...", tie its pid to a rank)
            key = pid_rank.get(f"{task.group('ip')}:{task.group('pid')}", f"{task.group('ip')}:{task.group('pid')}")
            p = replace(p, host=task.group("ip"), pid=int(task.group("pid")))
            if isinstance(key, str):    # (no rank: the cause after it is said with the worker Ray's line names)
                carry_note = _ray_worker_note(p.rest, task)
        else:
            key = "unknown"
        owner = LineOwner(key, p.rest, p.host, p.pid, p.host_tag, note=_process_note(key, p) or own_prints.get(at, ""))
        out.append(owner)
        previous = owner
        if key != "unknown" and (p.rest.rstrip().endswith(_TRACEBACK_HEAD) or task is not None):
            carry, raised = owner, False
    return out


# a user's own print of its rank before each line of its process ("rank 3: ", "Rank 3 | ", "[Rank 3] "), where a
# launcher's prefix follows it ("rank 3: [rank3]: ...", "RANK 1: [default1]: ...")
_OWN_PRINT = lazy_regex(r"(?:rank|Rank|RANK)[ _=-]?(\d{1,6})\s*[:|\]-]?\s+(?=[\[(])|\[(?:rank|Rank|RANK) (\d{1,6})\]\s*"
                        r"[:|-]?\s*(?=[\[(])")


def _behind_own_prints(lines: list[str] | tuple[str, ...], parsed: list[RankPrefix],
                       notes: dict[int, str]) -> list[RankPrefix]:
    """The launcher's prefix read behind a user's own print of its rank ("rank 3: [rank3]: ..."): the prefix the
    launcher wrote is the line's owner; where the two name different ranks (a user's rank in its own group, a local
    rank), the launcher's is taken and ``notes`` (line index -> note) says what the print said."""
    out = parsed
    for at, (line, p) in enumerate(zip(lines, parsed)):
        if p.rank is not None or p.pid is not None or line[:1] not in "rR[" or (
                own := _OWN_PRINT.match(line)) is None:
            continue
        behind = split_rank_prefix(line[own.end():])
        if behind.rank is None:
            continue
        printed = int(own.group(1) or own.group(2))
        if out is parsed:
            out = list(parsed)
        if behind.local and printed != behind.rank:
            # (a local rank, "--tee"'s "[default1]:", is no global rank: the user's print of its rank, as a rank's
            # own dist.get_rank(), is the global one; the launcher's local rank is said beside it)
            out[at] = replace(behind, rank=printed, local=False)
            notes[at] = f" (its launcher's prefix says local rank {behind.rank}; its line's own print rank {printed})"
            continue
        out[at] = behind
        if printed != behind.rank or behind.local:
            local = "local " if behind.local else ""
            notes[at] = (f" (its line's own print says rank {printed}, its launcher's prefix {local}rank "
                         f"{behind.rank}: the launcher's is read)")
    return out


# vLLM's engine core of data-parallel rank N, "(EngineCore_DP1 pid=4121) ..." (v1's engine cores, one per DP rank)
_ENGINE_CORE = lazy_regex(r"^EngineCore_DP(\d+)$")
_JULIA_WORKER = lazy_regex(r"^Julia worker (\d+)$")     # (triage.parsing.log_prefix's name for "From worker N:")
_WORKER = lazy_regex(r"^worker (\d+)$")                  # (its name for the same words without Distributed's shape)
# Julia's own words elsewhere in the input: its runtime's fatal signal report, a script's uncaught error, the master's
# word of a worker's end, a frame of a .jl file
_JULIA_WORDS = lazy_regex(r"^\s*signal \(\d{1,2}\): [A-Z]|\bERROR: LoadError\b|\bProcessExitedException\b|"
                          r"\.jl:\d+|^Worker \d+ terminated\.", re.MULTILINE)


def _julias_workers(lines: list[str] | tuple[str, ...], parsed: list[RankPrefix]) -> list[RankPrefix]:
    """A "From worker N:" line is Julia's worker where the input shows Julia: Distributed's indent and tab on one of
    them, or Julia's own words anywhere; else the worker of a program the input does not name."""
    bare = [at for at, p in enumerate(parsed) if p.name is not None and _WORKER.match(p.name)]
    if not bare or not (any(p.name is not None and _JULIA_WORKER.match(p.name) for p in parsed)
                        or any(_JULIA_WORDS.search(p.rest) for p in parsed)):
        return parsed
    for at in bare:
        parsed[at] = replace(parsed[at], name=f"Julia {parsed[at].name}")
    return parsed


def _process_note(key: int | str, p: RankPrefix) -> str:
    """What a process's tag says of a failure on its line when it names no rank: vLLM's engine core of a
    data-parallel rank (the DP index is no rank of the model's groups, whose ranks it does not say); Julia's
    worker id (Distributed's "From worker N:")."""
    if isinstance(key, int) or p.name is None:
        return ""
    if (julia := _JULIA_WORKER.match(p.name)) is not None:
        return (f" (printed by Julia's worker {julia.group(1)}: an id Julia's Distributed gives its workers, the "
                "master being 1, not a rank)")
    if (worker := _WORKER.match(p.name)) is not None:
        return f" (printed by worker {worker.group(1)}: the program's own worker number, not a rank)"
    if (engine := _ENGINE_CORE.match(p.name)) is None:
        return ""
    return (f" (in vLLM's engine core {p.name}, pid {p.pid}: the engine of data-parallel rank {engine.group(1)}; its "
            "ranks in the model's groups are not in this input)")


# Below this, a "[host:N]" number alone is read as a rank; a pid is rarely this small (the first pids are the
# system's own), a rank of a bigger job is read as one only when the input shows the job's size or its ranks
_SMALL = 64
_SHORT_PASTE = 10       # a short paste's lines: its ranks' tags may head one line each (prepended_ranks)


def host_tag_reading(parsed: list[RankPrefix]) -> str:
    """Whether the input's "[host:N]" heads carry ranks (triage's tag, torchrun --role) or process ids (Open
    MPI/PRRTE's and others' "[host:pid]"), from the whole input: "rank", "pid", or "unknown".

    pid: a number the input also shows as a process id (a handler's "[host:N] Signal: ...", NCCL's host:pid head,
    the head before another rank's prefix), or at or above the world size an NCCL init line gives, or far above
    every rank another prefix names. rank: small numbers, or a set dense enough to be ranks 0..N-1 (or a world
    that holds them all). Else unknown."""
    tagged = {p.rank for p in parsed if p.host_tag and p.rank is not None}
    if not tagged:
        return "rank"
    if tagged & {p.pid for p in parsed if p.pid is not None}:
        return "pid"
    world = max((size for size, _rank in _ranks_by_pid(parsed).values()), default=0)
    others = {p.rank for p in parsed if p.rank is not None and not p.host_tag and not p.local}
    top = max(tagged)
    if world:
        return "pid" if top >= world else "rank"
    if others and top > 4 * (max(others) + 1) + _SMALL:
        return "pid"
    if top < _SMALL or len(tagged) * 4 >= top + 1:
        return "rank"
    return "unknown"


_REPLICA = lazy_regex(r"[A-Za-z_][\w-]*/\d+")
_REPLICA_NOTE = ("; its global rank is not in this input: the replica's rendezvous result at LOGLEVEL=INFO "
                 "(group_rank=, global_ranks=) would tell)")


def _replica_ranks(lines: list[str] | tuple[str, ...],
                   parsed: list[RankPrefix]) -> tuple[list[RankPrefix], dict[str, str]]:
    """torchx's "role/R [L]:" heads of several replicas: local rank L of replica R is no global rank. Mapped where the
    replica's own lines tell its ranks (its agent's rendezvous result, or --node_rank, with --nproc_per_node
    from anywhere in the input); else left local, with what would tell (replica -> note)."""
    replicas = {p.host for p in parsed if p.local and p.rank is not None and p.host and _REPLICA.fullmatch(p.host)}
    if len(replicas) < 2:
        return parsed, {}
    whole = "\n".join(lines)
    nproc = nproc_per_node(whole)
    hint = f"\n--nproc_per_node={nproc}" if nproc else ""
    maps = {replica: node_ranks("\n".join(line for line in lines if line.startswith(replica + " ")) + hint)
            for replica in replicas}
    notes = {replica: _REPLICA_NOTE for replica, ranks in maps.items() if not ranks.local_to_global}
    out = []
    for p in parsed:
        mapped = maps[p.host].global_rank(p.rank) if p.local and p.host in maps and p.rank is not None else None
        out.append(replace(p, rank=mapped, local=False) if mapped is not None else p)
    return out, notes


# NCCL's own head without its "host:pid:tid" ("[3] NCCL INFO ...", "[3] include/shm.h:28 NCCL WARN ..."): the number
# in brackets is the process's CUDA device, not a rank (Hydra's -prepend-rank keeps NCCL's whole head after its own)
_NCCL_DEVICE_TAG = lazy_regex(r"\[\d{1,5}\] (?:NCCL (?:INFO|WARN|TRACE)\b|"
                              r"[\w./-]+\.(?:cc|cu|h|cpp):\d+ NCCL (?:INFO|WARN)\b)")


def nccl_device_tag(line: str) -> bool:
    """Whether a line's bracketed number heads NCCL's words: NCCL's device tag, its host:pid:tid lost."""
    return _NCCL_DEVICE_TAG.match(line) is not None


# lines Hydra prints itself, never under -prepend-rank's head: its termination box ("=   BAD TERMINATION ...", the "="
# frame) and its own heads ("[mpiexec@node0] ...", "[proxy:0:1@node1] ...")
_LAUNCHER_OWN = ("=", "[mpiexec@", "[proxy:")


# R's print() of a vector after its index: quoted strings, numbers, logicals and NA, each padded to one width
# ("[1] \"Loading data\"", "[1] 0.8731", "[13]  13  14  15", "[1]  TRUE FALSE    NA")
_R_VALUE = r'(?:"(?:[^"\\]|\\.)*"|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|TRUE|FALSE|NA|<NA>|NaN|-?Inf|NULL)'
_R_VECTOR = lazy_regex(rf"[ \t]*{_R_VALUE}(?:[ \t]+{_R_VALUE})*[ \t]*")


def _bare_tags(lines: list[str] | tuple[str, ...]) -> list[tuple[int, int, bool]]:
    """The lines (of the first 20000) headed by a bare ``[N] `` (a pod's tag before it read off, NCCL's device tag
    not): (index, N, whether the rest is R's printed values)."""
    found = []
    for at, line in enumerate(lines[:20000]):
        head = without_pod_tag(line) if line.startswith("[pod/") else line
        if head.startswith("[") and (match := PREPENDED.match(head)) is not None and not nccl_device_tag(head):
            found.append((at, int(match.group(1)), _R_VECTOR.fullmatch(head, match.end()) is not None))
    return found


def r_vector_indexes(lines: list[str] | tuple[str, ...]) -> list[int]:
    """The lines whose bare ``[N] `` head is R's index of a printed vector, not a rank: R's print() heads each line of
    a vector with its first element's index, from 1 ("[1] \"Fitting model\"", "[1] 0.8731", "[13]  13  14  15"); a
    tag that is never "[0]", before nothing but R's values (quoted strings, numbers, logicals, NA) on every line so
    headed, is R's. Empty where they are not."""
    tags = _bare_tags(lines)
    return [at for at, _number, _value in tags] if _r_vectors(tags) else []


def _r_vectors(tags: list[tuple[int, int, bool]]) -> bool:
    return bool(tags) and all(number > 0 and value for _at, number, value in tags)


def prepended_ranks(lines: list[str] | tuple[str, ...], parsed: list[RankPrefix]) -> bool:
    """Whether the input's bare ``[N] `` heads are Hydra's -prepend-rank (MPICH, Intel MPI: rank N's line), from
    the whole input: they head most lines (but Hydra's own), each number heads several of them (a viewer's line
    numbers head one each), and the numbers are ranks: below the world size an NCCL init line gives, else a set dense
    enough to be ranks 0..N-1. A one-off bracketed number ("[1] 100: loss") is no rank, nor R's index of a printed
    vector (R's print() heads each line of a vector with its first element's index, from 1: "[1] \"Fitting model\"",
    "[1] 0.8731"; a tag that is never "[0]", before nothing but R's values on every line, is R's)."""
    tags = _bare_tags(lines)
    if _r_vectors(tags):
        return False
    numbers = [number for _at, number, _value in tags]
    nonblank = sum(1 for line in lines[:20000] if line.strip() and not line.lstrip().startswith(_LAUNCHER_OWN))
    if len(numbers) < 2 or len(numbers) * 2 < nonblank:
        return False
    seen = set(numbers)
    if len(numbers) < 2 * len(seen) and not _tags_in_short_paste(numbers, nonblank):
        return False
    world = max((size for size, _rank in _ranks_by_pid(parsed).values()), default=0)
    top = max(seen)
    if world:
        return top < world
    return top < _SMALL or len(seen) * 4 >= top + 1


def _tags_in_short_paste(numbers: list[int], nonblank: int) -> bool:
    """Whether a short paste's (_SHORT_PASTE lines or fewer) bare ``[N] `` heads, each heading one line or a few, are
    rank tags: a number repeats, or they go down ("[2] ..." then "[0] ..."), or they count 0, 1, 2 (a viewer counts from
    1). A viewer's line numbers count up, one each (a cut paste's with gaps); so do R's vector indexes ("[1] ...",
    "[26] ...")."""
    if nonblank > _SHORT_PASTE:
        return False
    if len(set(numbers)) < len(numbers) or any(b < a for a, b in pairwise(numbers)):
        return True
    return numbers == list(range(len(numbers)))


def _ranks_from_nccl_inits(parsed: list[RankPrefix]) -> dict[str, int]:
    """host:pid -> rank in the process's largest communicator, from NCCL init lines."""
    return {key: rank for key, (_size, rank) in _ranks_by_pid(parsed).items()}


def _ranks_by_pid(parsed: list[RankPrefix]) -> dict[str, tuple[int, int]]:
    """host:pid -> (nranks, rank) of the process's largest communicator, from NCCL init lines."""
    best: dict[str, tuple[int, int]] = {}
    for p in parsed:
        if p.pid is None or "NCCL INFO" not in p.rest or " rank " not in p.rest:
            continue
        event = parse_nccl_line(p.rest)
        if isinstance(event, NcclInit):
            key = f"{event.host}:{event.pid}"
            size = event.nranks or 0
            if key not in best or size > best[key][0]:
                best[key] = (size, event.rank)
    return best


# Ray Train's table of its workers, printed by the trainer when it starts them ("Started distributed worker processes:"
# then "- (node_id=N, ip=A, pid=P) world_rank=R, local_rank=L, node_rank=K", older "- (ip=A, pid=P) world_rank=R, ...")
_RAY_TRAIN_WORKER = lazy_regex(r"^- \((?:node_id=\w+, )?ip=(?P<ip>[\w.:-]+), pid=(?P<pid>\d+)\) "
                               r"world_rank=(?P<rank>\d+), local_rank=\d+, node_rank=\d+")


def ray_train_ranks(rests: Iterable[str]) -> dict[tuple[str | None, int], int]:
    """(ip, pid) -> world rank, from Ray Train's table of its workers (and (None, pid) for a worker's tag that names
    no ip: "(RayTrainWorker pid=P)" on one node), where no two rows name the same process."""
    found: dict[tuple[str | None, int], set[int]] = {}
    for rest in rests:
        if rest.startswith("- (") and (m := _RAY_TRAIN_WORKER.match(rest)) is not None:
            found.setdefault((m.group("ip"), int(m.group("pid"))), set()).add(int(m.group("rank")))
            found.setdefault((None, int(m.group("pid"))), set()).add(int(m.group("rank")))
    return {key: next(iter(ranks)) for key, ranks in found.items() if len(ranks) == 1}


def _ranks_from_ray_train(parsed: list[RankPrefix]) -> dict[str, int]:
    """host:pid -> rank (the key a line's owner is looked up by), from Ray Train's table of its workers."""
    return {f"{ip}:{pid}": rank for (ip, pid), rank in ray_train_ranks(p.rest for p in parsed).items()}


_TRACEBACK_HEAD = "Traceback (most recent call last):"
_RAY_TASK = lazy_regex(r"\bRay(?:Task|Actor)Error\b.*?\(pid=(?P<pid>\d+), ip=(?P<ip>[\w.:-]+?)[,)]")
# the task or actor method Ray's line names ("ray::TaskRunner.run()", "ray::f()", "ray::RolloutWorker.__init__()")
_RAY_CALL = lazy_regex(r"\bray::(?P<call>[\w.]+)\(\)")


def _ray_worker_note(rest: str, task: re.Match[str]) -> str:
    """What a failure Ray's driver retells of a worker of no known rank is said with: the task or actor method and
    the worker's pid and node as Ray's line gives them."""
    call = _RAY_CALL.search(rest, 0, task.end())
    what = f"{call.group('call')}()" if call is not None else "a task"
    return f" (in Ray's worker running {what}, pid {task.group('pid')} on {task.group('ip')})"


_CHAINED = ("During handling of the above exception", "The above exception was the direct cause", _TRACEBACK_HEAD)


# a traceback's frame line, its indentation lost in a paste ("File "/x/scheduler.py", line 1787, in run")
_BARE_FRAME = lazy_regex(r'File "[^"\n]+", line \d+, in \S')
# an exception line's shape: its type, then its message or nothing ("RuntimeError: NCCL error: ...",
# "KeyboardInterrupt")
_EXCEPTION_SHAPE = lazy_regex(r"[A-Za-z_][\w.]*(?::(?: |$)|$)")


def _carried(rest: str, raised: bool, after_frame: bool = False) -> bool | None:
    """A logger's message that ends in ``Traceback (most recent call last):`` goes on without the
    prefix: its frames (indented), blank lines, the exception line and a chained traceback after it
    are the prefixed line's owner's. Whether the exception line was read after this line (None: the
    line is not the traceback's, which ends). A paste that lost the frames' indentation keeps them
    too: a ``File "...", line N, in f`` line, and the source line just after it (``after_frame``)
    unless it has an exception line's shape."""
    if not rest.strip():
        return raised
    if rest.startswith(_CHAINED):
        return False
    if raised:
        return None
    if rest[:1] in (" ", "\t") or _BARE_FRAME.match(rest) is not None:
        return False
    return not after_frame or _EXCEPTION_SHAPE.fullmatch(rest.rstrip()) is not None
