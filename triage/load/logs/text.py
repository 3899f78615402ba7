"""Log text as evidence: a rank's output.log, a job's interleaved log, or a paste from a bug report
(partial, prefixed, wrapped). I/O-free: the loader passes file contents in; every format is parsed
by triage.parsing (this module only routes lines and keeps what they said)."""

from __future__ import annotations

import json
import mmap
import re
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace

from triage.lazy_regex import lazy_regex
from triage.load.logs.facts import WorldSize, sole_process_source, world_size_facts
from triage.load.logs.line_events import (
    REMOTE_TARGET_MARKER,
    colon_message,
    coordination_line,
    grpc_remote_target,
    joined_terminate,
    nccl_detail_of,
    record_duplicate_gpu,
    record_gloo_timeout,
    record_init_wait,
    record_watchdog,
    reported_fingerprint,
    unfinished_tracebacks,
    watchdog_terminate,
)
from triage.load.logs.records import launcher_records, mpi_records, nccl_records, pid_ranks_of, record_text
from triage.load.logs.scan import (
    FAILURE_CLUSTER_LINES,
    LAST_LINES,
    MAX_UNPARSED,
    LogScan,
    record_world,
)
from triage.load.nccl_ras import op_count_splits
from triage.model import Collective, CollectiveState
from triage.model.evidence import (
    ReportedLag,
    ReportedMismatch,
)
from triage.parsing import needles
from triage.parsing.crashlog import MARKERS as CRASH_MARKERS
from triage.parsing.crashlog import (
    OMPI_ADDRESS_NOTE,
    PYDANTIC_LINE_NOTE,
    PYDANTIC_LINE_TYPE,
    SPAWN_BOOTSTRAP_FRAME,
    SPAWN_BOOTSTRAP_NOTE,
    CrashLine,
    CrashLineKind,
    duplicate_gpu,
    glog_fatal_head,
    has_marker,
    parse_crash_line,
    rank_in_message,
    shortened,
)
from triage.parsing.debugger_view import HEAD_WORDS as DEBUGGER_HEAD_WORDS
from triage.parsing.debugger_view import NOTE as DEBUGGER_NOTE
from triage.parsing.debugger_view import exception_line
from triage.parsing.desync import (
    HCCL_NOTIFY_MARKER,
    HOROVOD_STALL_MARKER,
    MISMATCH_MARKER,
    MONITORED_BARRIER,
    RUNNING_MARKER,
    parse_desync_report,
    parse_hccl_waits,
    parse_horovod_stall,
    parse_mismatch,
    parse_running,
)
from triage.parsing.frameworks import (
    ENDED_WELL,
    GOT_OVER,
    HYDRA_JOB_ERROR,
    RAY_RETRIED,
    SPARK_STOP_NOTE,
    condor_event_passed,
    condor_passed_note,
    job_success_line,
    pods_ended_well,
    ray_kills_gone_past,
    restarts_got_over,
    spark_lost_in_its_stop,
)
from triage.parsing.gloo import MARKERS as GLOO_MARKERS
from triage.parsing.gloo import parse_gloo_timeout
from triage.parsing.gpu_words import shows_gpu, shows_rocm, source_shows_gpu
from triage.parsing.job_config import misfit_and_rank
from triage.parsing.launch_failure import (
    ALLOC_REFUSED,
    LAUNCH_TEXT,
    LAUNCHER_FRAME,
    LAUNCHER_ITSELF,
    WORKER_START_FRAME,
    WORKER_START_LINES,
    worker_start_failure,
)
from triage.parsing.launcher_kind import agent_stopped_pids, launcher_of, launcher_shown
from triage.parsing.launchers import SLURM_TOUCHED_NOTE, slurm_memory_touched_after_its_end
from triage.parsing.log_owners import LineOwner, attribute_lines
from triage.parsing.log_prefix import without_pod_tag
from triage.parsing.named_failure import named_failure
from triage.parsing.nccl.lines import parse_nccl_line
from triage.parsing.nccl.tracker import NcclTracker
from triage.parsing.platform_words import platform_of
from triage.parsing.progress import (
    PASSED_TESTS_NOTE,
    another_command_after,
    command_failed,
    holds_failure_word,
    is_progress,
    mentions_progress,
    passed_test_spans,
    ran_to_its_end_after,
    says_it_ended,
)
from triage.parsing.prose import read_prose
from triage.parsing.raise_sites import MARKERS as RAISE_SITE_MARKERS
from triage.parsing.raise_sites import RaiseSiteKind, frame_source_line, in_code_listing, raise_site
from triage.parsing.rendezvous import MARKERS as INIT_MARKERS
from triage.parsing.rendezvous import InitWaitKind, parse_init_line, resources_came
from triage.parsing.solver_errors import code_ended
from triage.parsing.stack_words import stack_of, stack_of_all
from triage.parsing.textclean import clean_text
from triage.parsing.torchelastic import spawn_error_owner
from triage.parsing.unread_failure import (
    GOES_ON,
    GONE_ON,
    UNREAD_LITERALS,
    UNREAD_WORDS,
    glog_error,
    gone_on_failure,
    unread_failure,
)
from triage.parsing.unread_failure import SUCCESS as UNREAD_SUCCESS
from triage.schemas import STOP_LOG_RECORD

# the key of scan.last_error for a line of no known rank
_NO_RANK = -1
_RANK_IN_NAME = lazy_regex(r"rank[-_]?(\d+)", re.IGNORECASE)
_WATCHDOG_HINTS = ("atchdog", "timed out.", "Timeout at NCCL work", "Heartbeat monitor", "lagging ranks", "Desync",
                   "timed out in blocking wait", "Notify register times out",
                   "fftsplus task timeout")
# Parts of formats we know: a line holding one that nothing parsed is reported as "unparsed".
_KNOWN_HINTS = ("Watchdog caught", "WorkNCCL(", "CollectiveFingerPrint", MISMATCH_MARKER, "NCCL WARN",
                "exitcode", "ncclRemoteError", "ncclSystemError", "ncclInternalError", "Xid")
# How specific a failure line is, when several stand together (a terminate line, then its what()).
_PROGRESS = lazy_regex(r"\b(?:epoch|step|iter(?:ation)?|loss|batch|eval(?:uation)?)\b", re.IGNORECASE)
_SPAWN_BOOTSTRAP_LINES = 4     # the start-up frame, its code line, the exception (a blank line at most)
# monitored_barrier's error ("Rank 2 successfully reached monitoredBarrier, but received errors while waiting for
# send/recv from rank 0 ...", "Ranks 3 failed to pass monitoredBarrier ...") then " Original exception:" and the
# transport's error: the peer the barrier names went away (its socket reset or closed), a consequence of that
# rank, never a network failure of its own
_ORIGINAL = "Original exception:"
_BARRIER_ORIGINAL_LINES = 3
BARRIER_ORIGINAL_NOTE = " (monitored_barrier's original exception: the rank it names stopped answering)"
_SUMMARY_FIELD = lazy_regex(r"\s*(?:traceback|exitcode|error_file|time|host|rank)\s*:")
# Every literal that a check of _line looks for before it parses (and named_failure's words, caseless): a line
# holding none of them skips those checks (a block's lines are sorted in one scan, triage.parsing.needles; the
# same answers: tests/load/test_line_gate.py). A check added to _line behind a new literal adds it here. A large
# log's marker pass (triage.load.logs.large) looks for these, UNREAD_WORDS and the glog head, so that a line is read
# the same in a 1 GB log as in a pasted one.
GATE_LITERALS = (*INIT_MARKERS, "Duplicate GPU", "Traceback (most recent call last)", SPAWN_BOOTSTRAP_FRAME,
                 WORKER_START_FRAME, *RAISE_SITE_MARKERS, "terminated with the following error", *_WATCHDOG_HINTS,
                 MISMATCH_MARKER,
                 RUNNING_MARKER, *CRASH_MARKERS, *_KNOWN_HINTS, MONITORED_BARRIER, _ORIGINAL, *GLOO_MARKERS,
                 REMOTE_TARGET_MARKER, *UNREAD_LITERALS)


_TORCHRUN_TAG = lazy_regex(r"^\s*\[(?:rank|default)\d+\]:")


# init waits that progress after them ends: the wait was over (a store connection torch retried, a backend set-up that
# finished late)
_PROGRESS_ENDS = (InitWaitKind.CONNECT_REFUSED.value, InitWaitKind.BACKEND_WAIT.value,
                  InitWaitKind.COORDINATION_REGISTER.value, InitWaitKind.RESOURCE_WAIT.value)


def _resources_came(lines: Sequence[str], base: int, scan: LogScan) -> None:
    """A start-up's wait for cluster resources (a Ray placement group, Ray's nodes) after which a line says they came
    (triage.parsing.rendezvous.resources_came: the node count complete, vLLM's Ray workers' own lines, its model
    loaded; ``lines`` as cleaned, their launchers' and Ray's tags kept): they came late, a note (scan.went_on), never a
    hang."""
    waits = [w.order for w in scan.init_waits if w.kind == InitWaitKind.RESOURCE_WAIT.value
             and w.order is not None and w.order >= base]
    if not waits:
        return
    came = next((base + index for index in range(len(lines) - 1, min(waits) - base, -1)
                 if resources_came(lines[index])), None)
    if came is None:
        return
    over = [w for w in scan.init_waits if w.kind == InitWaitKind.RESOURCE_WAIT.value and w.order is not None
            and base <= w.order < came]
    scan.went_on.extend(w.text[:200] for w in over)
    scan.init_waits = [w for w in scan.init_waits if not any(w is o for o in over)]


def _went_on_past(owners: list[LineOwner], base: int, default_rank: int | None, single_node: bool,
                  scan: LogScan) -> None:
    """This text's lines that say something failed, read in words alone, after which the process that printed them
    printed its training progress (triage.parsing.progress): notes (scan.went_on), never the failure.
    - a rank's line in its own prefixed lines: that rank's later progress;
    - a line of no rank: its own stream's later progress, or every rank this text shows progressing after it;
    - a client's refused connection to the store (torch retries it), an accelerator backend still being set up
      (JAX's warning), a process's failed registration with the coordination service (retried): any progress after
      it (init was done)."""
    def process(key: object) -> object:     # the rank the main loop gives a line's key, else the key
        if isinstance(key, str) and key.startswith("local:") and single_node and default_rank is None:
            return int(key.split(":", 1)[1])   # torchrun --tee on one node: local rank = rank
        return key if isinstance(key, int) or default_rank is None else default_rank

    refused = [w.order for w in scan.init_waits if w.kind in _PROGRESS_ENDS
               and w.order is not None and w.order >= base]
    quoted = [(o, rank) for rank, items in [(None, scan.orphans), *scan.failures.items()] for o, line, _ in items
              if line.quoted and o >= base]
    starts = ([o for o, *_ in scan.unread if o >= base] + [o for o, *_ in scan.named_failures if o >= base] + refused
              + [o for o, _ in quoted])
    # a rank-less exception line or traceback head (a trace a library logged, a handled one): asked only
    # whether every rank went on and one said the run ended well after it (left_behind)
    loose = ([o for o, line, _ in scan.orphans if o >= base and line.exc_type is not None and not line.quoted]
             + [o for r, o, _ in scan.tracebacks if r is None and o >= base])
    # a rank's own exception line or traceback head (a handled one: the rank fell back and went on): asked only
    # whether that rank went on to its own word that the run ended well, every rank this text shows going on too
    # (handled)
    owned = ([(o, r) for r, items in scan.failures.items() for o, line, _ in items
              if o >= base and line.exc_type is not None and not line.quoted]
             + [(o, r) for r, o, _ in scan.tracebacks if r is not None and o >= base])
    if not starts and not loose and not owned:
        return
    first = min(starts + loose + [o for o, _ in owned]) - base
    if not mentions_progress("\n".join(owner.rest for owner in owners[first + 1:])):
        return                                  # (one pass over the text: most inputs stop here)
    ranks = {p for p in map(process, {owner.key for owner in owners}) if isinstance(p, int)}
    wanted = ranks | {process(owners[o - base].key) for o in starts}
    last_progress: dict[object, int] = {}       # each process's last progress line, from the end back
    for index in range(len(owners) - 1, first, -1):
        who = process(owners[index].key)
        if who not in last_progress and is_progress(owners[index].rest):
            last_progress[who] = index
            if wanted <= last_progress.keys():
                break
    if not last_progress:
        return
    # a command runner's word that the failed command ended failing (yarn's "error Command failed with exit code 134."):
    # progress after it is another command's
    failed_at = [i for i in range(first + 1, len(owners)) if command_failed(owners[i].rest)]

    def passed(index: int, who: object) -> bool:
        """``who`` printed progress after line ``index``, and no other command than the failed one printed it (a
        command runner's word that the command failed, then a shell's line starting another: another_command_after)."""
        last = last_progress.get(who, -1)
        return last > index and not (any(index < at < last for at in failed_at) and another_command_after(
            [o.rest for o in owners[max(0, index - 200):index + 1]], (o.rest for o in owners[index + 1:last])))

    ended = -1     # the last line of a rank that says the run ended well, asked only where every rank went on
    if loose and ranks and all(passed(min(loose) - base, r) for r in ranks):
        ended = next((i for i in range(len(owners) - 1, min(loose) - base, -1)
                      if process(owners[i].key) in ranks and says_it_ended(owners[i].rest)), -1)

    def left_behind(order: int) -> bool:
        """A rank-less exception line or traceback head after which every rank this text shows printed progress
        and a rank said the run ended well: the job went on past it (a trace a library logged, a handled one)."""
        index = order - base
        return 0 <= index < ended and bool(ranks) and all(passed(index, r) for r in ranks)

    ended_by: dict[object, int] = {}     # each rank's last line that says the run ended well (of the ranks owned asks)
    if owned and ranks:
        asked = {r for _, r in owned}
        for index in range(len(owners) - 1, first, -1):
            who = process(owners[index].key)
            if who in asked and who not in ended_by and says_it_ended(owners[index].rest):
                ended_by[who] = index

    def handled(order: int, rank: int) -> bool:
        """A rank's own exception line or traceback head after which that rank printed progress and then its own
        word that the run ended well, every rank this text shows printing progress after it: a handled one."""
        index, end = order - base, ended_by.get(rank, -1)
        return (0 <= index < end and process(owners[index].key) == rank and all(passed(index, r) for r in ranks)
                and any(process(owners[i].key) == rank and is_progress(owners[i].rest)
                        and not says_it_ended(owners[i].rest) for i in range(index + 1, end)))

    def stream_ended(index: int) -> bool:
        """The input is one stream of no rank prefix (no rank a file or a line's head names), line ``index``'s own
        words say the program goes on past it ("worker 3 failed, retrying": GOES_ON), and after it the stream printed
        progress and then its word that the run ended well."""
        if ranks or default_rank is not None or scan.rank_prefixed or GOES_ON.search(owners[index].rest) is None \
                or not passed(index, owners[index].key):
            return False
        end = next((i for i in range(len(owners) - 1, index, -1) if says_it_ended(owners[i].rest)), -1)
        return any(is_progress(owners[i].rest) and not says_it_ended(owners[i].rest) for i in range(index + 1, end))

    def gone_on(order: int, rank: int | None) -> bool:
        index = order - base
        if index >= 0 and rank is not None and process(owners[index].key) != rank:
            return stream_ended(index)   # (a rank named in words by another process's line: whether it went on is
            #                              not shown, unless the input is one stream that went on to its good end)
        if index < 0:
            return False
        if passed(index, process(owners[index].key)):
            return True
        return rank is None and bool(ranks) and all(passed(index, r) for r in ranks)

    def named_gone(order: int, rank: int, line: CrashLine) -> bool:
        """A named rank's line gone on past: by that rank, or (its words quoted in a sentence) by the line's writer."""
        return gone_on(order, rank) or (line.quoted and gone_on(order, None))

    for order, rank, line, _ in scan.named_failures:
        if named_gone(order, rank, line):
            scan.went_on.append(f"rank {rank}: {line.text[:200]}")
    for order, unread, _, _ in scan.unread:
        if gone_on(order, None):
            scan.went_on.append(unread.text[:200])
    scan.named_failures = [item for item in scan.named_failures if not named_gone(*item[:3])]
    gone = {(order, rank) for order, rank in quoted if gone_on(order, rank)}   # (a runtime's words quoted in prose)
    if gone:
        scan.went_on.extend(line.text[:200] for rank, items in [(None, scan.orphans), *scan.failures.items()]
                            for o, line, _ in items if (o, rank) in gone)
        scan.orphans = [item for item in scan.orphans if (item[0], None) not in gone]
        for rank, items in list(scan.failures.items()):
            left = [item for item in items if (item[0], rank) not in gone]
            if left:
                scan.failures[rank] = left
            else:       # (a rank whose only failure line was gone is no failed rank: no empty list for it)
                del scan.failures[rank]
    scan.unread = [item for item in scan.unread if not gone_on(item[0], None)]
    if ended >= 0 and any(left_behind(o) for o in loose):
        kept = set(loose)
        scan.went_on.extend(line.text[:200] for o, line, _ in scan.orphans if o in kept and left_behind(o))
        scan.orphans = [item for item in scan.orphans if not (item[0] in kept and left_behind(item[0]))]
        scan.tracebacks = [item for item in scan.tracebacks if not (item[0] is None and left_behind(item[1]))]
    if ended_by and (mine := {item for item in owned if handled(*item)}):
        scan.went_on.extend(f"rank {rank}: {line.text[:200]}" for rank, items in scan.failures.items()
                            for o, line, _ in items if (o, rank) in mine)
        for rank in {r for _, r in mine}:
            left = [item for item in scan.failures.get(rank, []) if (item[0], rank) not in mine]
            if left:
                scan.failures[rank] = left
            else:
                scan.failures.pop(rank, None)
        scan.tracebacks = [item for item in scan.tracebacks if (item[1], item[0]) not in mine]
    after = max(last_progress.values()) + base
    if refused and after > min(refused):
        scan.went_on.extend(w.text[:200] for w in scan.init_waits if w.kind in _PROGRESS_ENDS
                            and w.order is not None and base <= w.order < after)
        scan.init_waits = [w for w in scan.init_waits if not (w.kind in _PROGRESS_ENDS
                                                              and w.order is not None and base <= w.order < after)]


def _passed_tests(owners: list[LineOwner], base: int, scan: LogScan) -> None:
    """The failure lines inside a pytest session whose summary says no test failed nor errored
    (triage.parsing.progress.passed_test_spans): its tests' own output (an argparse refusal, an exception a test
    expects), notes (scan.went_on), never the job's failure."""
    spans = passed_test_spans([owner.rest for owner in owners])
    if not spans:
        return
    notes: list[str] = []

    def keep(order: int, text: str) -> bool:
        index = order - base
        said = next((said for start, end, said in spans if start < index < end), None)
        if said is not None:
            notes.append(f"{PASSED_TESTS_NOTE} ('{said}'): {text[:160]}")
        return said is None

    scan.orphans = [item for item in scan.orphans if keep(item[0], item[1].text)]
    for rank, items in list(scan.failures.items()):
        left = [item for item in items if keep(item[0], item[1].text)]
        if left:
            scan.failures[rank] = left
        else:       # (a rank whose only failure lines were a passed test's is no failed rank)
            del scan.failures[rank]
    scan.named_failures = [item for item in scan.named_failures if keep(item[0], item[2].text)]
    scan.unread = [item for item in scan.unread if keep(item[0], item[1].text)]
    scan.tracebacks = [item for item in scan.tracebacks if keep(item[1], "")]
    scan.went_on.extend(note for note in notes if not note.endswith(": "))


# what says a job went on after Slurm refused one request an allocation: a batch job it then submitted, a later step's
# own line, the run's progress or its word that it ended well
_SUBMITTED = lazy_regex(r"^Submitted batch job \d+|^srun: (?:job|step) \d+ (?:has been allocated|queued)|"
                        r"^salloc: (?:Granted|Nodes .* are ready)")


def _refusal_went_on(owners: list[LineOwner], base: int, scan: LogScan) -> None:
    """Slurm's refusal of an allocation (srun/salloc/sbatch) after which the text goes on (a later submission or
    step that worked, progress, the run's word that it ended well): a request a script retried or fell back after,
    not a job that never ran: a note (scan.went_on), never the failure."""
    def went_on(order: int) -> bool:
        return any(_SUBMITTED.match(o.rest.strip()) is not None or is_progress(o.rest) or says_it_ended(o.rest)
                   for o in owners[order - base + 1:])

    refused = [item for item in scan.orphans if item[0] >= base and ALLOC_REFUSED in item[1].text
               and went_on(item[0])]
    if refused:
        scan.went_on.extend(item[1].text.split("): ", 1)[-1][:200] for item in refused)   # (the line itself)
        scan.orphans = [item for item in scan.orphans if not any(item is r for r in refused)]


def rank_from_name(name: str) -> int | None:
    match = _RANK_IN_NAME.search(name)
    return int(match.group(1)) if match else None


# a launch command line, as a job script's trace or a prompt shows it ("+ mpirun -np 4 python train_md.py --lr 1e-3",
# "$ srun ./lmp -in in.lj"): its launcher and its words name the run
_LAUNCHERS = ("mpirun", "mpiexec", "srun", "torchrun", "deepspeed", "aprun", "jsrun")
_LAUNCH_LINE = lazy_regex(r"^[ \t]*(?:[+$#>][ \t]+)?(?P<launcher>" + "|".join(_LAUNCHERS) + ")"
                          r"(?:\.\w+)?[ \t]+(?P<args>[^\n]*)$")


def _start_key(line: str, first: str) -> tuple[str, ...] | None:
    """What names the start of a run on this line: a launch command's launcher and its words, or the input's first line
    (a code's start banner: "LAMMPS (2 Aug 2023)") printed again."""
    launch = _LAUNCH_LINE.match(line)
    if launch is None:
        stripped = line.strip()
        return ("first",) if stripped and stripped == first else None
    return ("launch", launch.group("launcher"), *launch.group("args").split())


def _same_run(earlier: tuple[str, ...], later: tuple[str, ...]) -> bool:
    """The later start is the earlier one again: the same banner, or the same launch command with words added after
    its own (a retry's `--resume`); a job script's next stage (the same program on another input: `-in in.minimize`,
    then `-in in.analysis`) is another run."""
    return later[:len(earlier)] == earlier


def _progress_kinds(lines: list[str]) -> Iterator[str]:
    """The kinds of work these lines report progress of, in order: each progress line's first progress word
    (``step``, ``epoch``, ``eval``), or "" for a line of numbers (a code's thermo columns)."""
    for line in lines:
        if is_progress(line) and not says_it_ended(line):
            word = _PROGRESS.search(line)
            yield word.group().lower() if word is not None else ""


def _redoes(earlier_run: list[str], later_run: list[str]) -> bool:
    """The later run redoes the earlier run's work: it reports progress of a kind the earlier run reported (training
    steps after training steps). A later run with words added to the command that does other work (an evaluation
    stage's ``eval step`` after a training run that failed) is the script's next stage, not the run started again.
    Both runs are read a line at a time in turn and the answer comes at the first kind both have shown: a retry of
    300,000 steps is not read twice over (only runs that share no kind are read to their ends)."""
    sides = (_progress_kinds(earlier_run), _progress_kinds(later_run))
    seen: tuple[set[str], set[str]] = (set(), set())
    live = [0, 1]
    while live:
        for side in tuple(live):
            kind = next(sides[side], None)
            if kind is None:
                live.remove(side)
            elif kind in seen[1 - side]:
                return True
            else:
                seen[side].add(kind)
    return False


# a start banner names something: a word of letters, no failure word (a separator line, a traceback's head, a date
# line of digits repeat in any log without naming a run)
_BANNER_WORD = lazy_regex(r"[A-Za-z]{3}")


def _banner(line: str) -> bool:
    return (_BANNER_WORD.search(line) is not None and not holds_failure_word(line) and not is_progress(line)
            and parse_crash_line(line) is None)


_EARLIER_RUN = "an earlier run, before the program started again: "
_FIRST_LINE = lazy_regex(r"[^\s][^\n]*")      # (the text's first line that is not blank, from its first character)


def _ended_well(lines: list[str]) -> bool:
    """One of the last three lines that are not blank says the run ended well (its own word, a code's end line)."""
    return any(says_it_ended(line) or code_ended(line.strip()) for line in [x for x in lines if x.strip()][-3:])


def _later_run(text: str) -> int | None:
    """Where the same program was started again (the same launch command, or the input's first line, a code's start
    banner, printed again): in an input that ends with the run's own word that it ended well, where the later run
    shows its own progress or its code's end line; in any other, the last start after a run that ended well (a run
    that failed, then one that ended well, then a third: the third is the job's story, the first a note). The offset of
    that later run's first line, or None."""
    if not _ended_well(text[-4000:].splitlines()):
        return _after_a_good_run(text)
    lines = text.splitlines(keepends=True)
    first = next((line.strip() for line in lines if line.strip()), "")
    if not _banner(first):
        first = "\0"                       # (no banner: only launch commands start runs)
    if not any(launcher in text for launcher in _LAUNCHERS) and (first == "\0" or text.count(first) < 2):
        return None                        # (no launch command, no banner printed twice: no line can start a run)
    seen: list[tuple[tuple[str, ...], int]] = []      # (each start's key, its line's index)
    starts: list[int] = []
    found: tuple[int, int, int, bool] | None = None     # (later start: offset, index; earlier: index; words added)
    offset = 0
    for index, line in enumerate(lines):
        key = _start_key(line, first)
        if key is not None:
            starts.append(index)
            for earlier, at in seen:
                if _same_run(earlier, key):
                    found = (offset, index, at, key != earlier)
                    break
            seen.append((key, index))
        offset += len(line)
    if found is None:
        return None
    start, index, at, words_added = found
    later_lines = lines[index + 1:next((s for s in starts if s > index), len(lines))]
    if not any((is_progress(line) and not says_it_ended(line)) or code_ended(line.strip())
               for line in lines[index + 1:]):
        return None
    if words_added and not _redoes(lines[at + 1:index], later_lines):
        return None                        # (the same command with words added doing other work: a next stage)
    return start


def _lines_holding(text: str, word: str) -> Iterator[int]:
    """The start of each line of ``text`` that holds ``word`` (found by ``str.find``: a word a log rarely holds costs
    one pass in C)."""
    pos = 0
    while (pos := text.find(word, pos)) >= 0:
        yield text.rfind("\n", 0, pos) + 1
        end = text.find("\n", pos)
        if end < 0:
            return
        pos = end + 1


def _after_a_good_run(text: str) -> int | None:
    """In an input that does not end well: the offset of the last start of the same program again (see
    :func:`_later_run`) whose run before it ended well (its last lines say so), or None. The starts are found by one
    search of the text (launch commands) or of the first line (a banner printed again), not a look at every line."""
    head = _FIRST_LINE.search(text)
    first = head.group(0).strip() if head is not None else ""
    if not _banner(first) or text.count(first) < 2:
        first = "\0"                       # (no banner printed again: only launch commands start runs)
    starts = {start for word in (*_LAUNCHERS, first) if word != "\0" for start in _lines_holding(text, word)}
    if len(starts) < 2:
        return None
    seen: list[tuple[str, ...]] = []
    found = None
    for offset in sorted(starts):
        end = text.find("\n", offset)
        line = text[offset:len(text) if end < 0 else end]
        key = _start_key(line, first)
        if key is None:
            continue
        if any(_same_run(earlier, key) for earlier in seen) and \
                _ended_well(text[max(0, offset - 2000):offset].splitlines()):
            found = offset
        seen.append(key)
    return found


# pdsh's dshbak (and ClusterShell's clush -b): each node's output under a head of its own, the node's name between two
# rules of dashes ("----------------" / "gpu-07" / "----------------"; 16 dashes in dshbak, 15 in clush); a head
# of several nodes (dshbak -c's "gpu-[07,09]", clush's "gpu-[07-08] (2)") names none of them
_BLOCK_RULE = lazy_regex(r"-{15,16}")
# (a node's name: a letter and a digit in it, "gpu-07", "nid001234", never a word between two rules, "Summary")
_BLOCK_NODE = lazy_regex(r"(?=[\w.-]*[A-Za-z])(?=[\w.-]*\d)[A-Za-z0-9][\w.-]{0,62}")


def _node_blocks(lines: Sequence[str], heads: list[str | None] | None) -> list[str | None] | None:
    """``heads`` (the node each line's own prefix names, or None) with each line under a dshbak or clush -b block's
    head given that head's node, where its own prefix names none: a rank's end told in such a block is that node's."""
    found: list[str | None] | None = None
    node: str | None = None
    index = 0
    while index < len(lines):
        line = lines[index].strip()
        if (_BLOCK_RULE.fullmatch(line) and index + 2 < len(lines)
                and _BLOCK_RULE.fullmatch(lines[index + 2].strip())):
            head = lines[index + 1].strip()
            node = head if _BLOCK_NODE.fullmatch(head) else None
            found = found if found is not None else (list(heads) if heads is not None else [None] * len(lines))
            index += 3
            continue
        if node is not None and found is not None and found[index] is None:
            found[index] = node
        index += 1
    return found if found is not None else heads


def scan_log_text(text: str, path: str, scan: LogScan, default_rank: int | None = None,
                  nccl_source: bytes | mmap.mmap | None = None, nccl: NcclTracker | None = None) -> None:
    """Fold one log into ``scan``: ranks from prefixes (or ``default_rank`` for a per-rank log).
    ``nccl_source``: the whole file, when ``text`` is an excerpt of it (see triage.load.logs.large); ``nccl``:
    its NCCL lines already read.
    An input whose program was started again after a failure, the later run ending well (a job script's retry, an
    older run's log above the new one), or started again after a run that ended well: the earlier run's failure is a
    note (scan.went_on), the later run is read."""
    # (the whole text, an earlier run's included; a large log's whole file, its excerpt not holding every word)
    scan.shows_gpu = scan.shows_gpu or shows_gpu(text) or (nccl_source is not None and source_shows_gpu(nccl_source))
    scan.shows_rocm = scan.shows_rocm or shows_rocm(text)
    scan.shows_gpu = scan.shows_gpu or scan.shows_rocm      # (HIP's runtime library, "libamdhip64.so": a GPU's)
    scan.stack = stack_of_all([scan.stack, stack_of(text)])
    scan.platform = scan.platform or platform_of(text)
    scan.shows_nccl = scan.shows_nccl or nccl_source is not None or "NCCL" in text or "nccl" in text
    if nccl_source is None and (later := _later_run(text)) is not None:
        earlier = LogScan()
        scan_log_text(text[:later], path, earlier, default_rank)
        failed = [line.text for items in [*earlier.failures.values(), earlier.orphans] for _, line, _ in items
                  if not line.collateral] + [unread.text for _, unread, _, _ in earlier.unread]
        # (the earlier part's own earlier runs: a run that failed, then one that ended well, before this one)
        older = [note for note in earlier.went_on if note.startswith(_EARLIER_RUN)]
        if failed or older:
            scan.went_on.extend(older)
            if failed:
                scan.went_on.append(f"{_EARLIER_RUN}{failed[0][:160]}")
            scan.lines_read += text.count("\n", 0, later)
            text = text[later:]
    clean = clean_text(text)
    lines = clean.lines
    owners = attribute_lines(lines)
    single_node = not any(isinstance(o.key, int) for o in owners)
    keyed = [o for o in owners if o.key != "unknown"]
    scan.rank_prefixed = scan.rank_prefixed or bool(keyed)
    processes = {o.key for o in keyed
                 if isinstance(o.key, str) and o.pid is not None and not o.key.startswith("local:")}
    scan.process_heads.update(processes)
    scan.rank_heads = scan.rank_heads or any(o.key not in processes for o in keyed)
    scan.over_nodes = scan.over_nodes or "pdsh" in text
    base = scan.lines_read
    skip_to = 0
    scan.spawn_owner = None
    loud = needles.lines_holding([owner.rest for owner in owners], GATE_LITERALS, UNREAD_WORDS)
    for index, owner in enumerate(owners):
        if index < skip_to:
            continue
        rank = owner.key if isinstance(owner.key, int) else default_rank
        if isinstance(owner.key, str) and owner.key.startswith("local:") and single_node and default_rank is None:
            rank = int(owner.key.split(":", 1)[1])  # torchrun --tee on one node: local rank = rank
        rest = owner.rest
        if lines[index].startswith("[") and (tag := _TRIAGE_TAG.match(lines[index])) is not None:
            _triage_record(lines[index][tag.end():], tag.group(1), path, scan)   # triage's own line, no rank's
            continue
        stamp = clean.stamps[index] if index < len(clean.stamps) else None
        checked = loud is None or index in loud or glog_error(rest) or (stamp is not None and glog_error(stamp))
        if MISMATCH_MARKER in rest and parse_mismatch(rest) is None:
            rest, skip_to = _joined_message(owners, index)   # the message spans several lines
            checked = True
        elif "]" in rest and (joined := _site_head_joined(owners, index)) is not None:
            rest, skip_to = joined, index + 2             # "RuntimeError: [x.cc:78]", its words on the next line
            checked = True
        elif _any_in(DEBUGGER_HEAD_WORDS, rest) and (view := _debugger_view(owners, index)) is not None:
            rest, skip_to = view                          # VS Code's "Exception has occurred: T", its message next
            checked = True
        if rank is not None:
            scan.ranks_seen.add(rank)
        before, sites = len(scan.orphans), len(scan.raise_sites)
        # (a traceback frame's source line, indented under its "File ..." line: code, not a failure it reports)
        code = checked and rest[:1] in (" ", "\t") and frame_source_line(_neighbour(owners, index, -1), rest)
        _line(rest, rank, owner.host, path, base + index, scan, checked, stamp, code)
        if len(scan.raise_sites) > sites and scan.raise_sites[-1][3].kind is RaiseSiteKind.RAISE_STATEMENT \
                and in_code_listing(_neighbour(owners, index, -1), _neighbour(owners, index, 1)):
            scan.raise_sites.pop()       # a raise inside a code listing the reporter showed: code, not a run
        if (owner.unsure or owner.note) and len(scan.orphans) > before:
            _unsure_head(owner, lines[index], scan, before)
        elif owner.note and rank is not None and (mine := scan.failures.get(rank)) and mine[-1][0] == base + index:
            # (a rank's own line whose head says more: a user's print of another rank before the launcher's prefix)
            mine[-1] = (mine[-1][0], replace(mine[-1][1], text=shortened(mine[-1][1].text) + owner.note), mine[-1][2])
    scan.lines_read = base + len(lines)
    if scan.unread and scan.unread[-1][0] >= base and UNREAD_SUCCESS.search(
            "\n".join(o.rest for o in owners[scan.unread[-1][0] - base + 1:])) is not None:
        # the job said it ended well after them: they did not end it (said, as a line it went on past)
        scan.went_on.extend(unread.text[:200] for order, unread, _, _ in scan.unread if order >= base)
        scan.unread = [item for item in scan.unread if item[0] < base]
    elif scan.unread and scan.unread[-1][0] >= base and pods_ended_well("\n".join(o.rest for o in owners)):
        # every pod kubectl shows ended well: the failure words beside them are of a restart the job got over
        scan.went_on.extend(f"{GOT_OVER}: {unread.text[:160]}"
                            for order, unread, _, _ in scan.unread if order >= base)
        scan.unread = [item for item in scan.unread if item[0] < base]
    if scan.gone_on:
        # a line that says the program went on past it, with a line of the text after it (one the text ends with
        # does not show that the program did): a note
        last = base + max((i for i, owner in enumerate(owners) if owner.rest.strip()), default=-1)
        scan.went_on.extend(f"{GONE_ON}: {line[:160]}" for order, line in scan.gone_on if order < last)
        scan.gone_on = []
    if "killed" in text and (ray_passed := ray_kills_gone_past(text)):
        scan.went_on.extend(f"{RAY_RETRIED}: {said[:160]}" for said in ray_passed)
    if scan.unread and scan.unread[-1][0] >= base and "(" in text and (passed := _condor_passed(owners, base, scan)):
        # lines of an HTCondor event the job got past (a shadow exception, then the job executing again): no end
        scan.went_on.extend(condor_passed_note(text, unread.text) for order, unread, _, _ in scan.unread
                            if order in passed)
        scan.unread = [item for item in scan.unread if item[0] not in passed]
    if scan.unread and scan.unread[-1][0] >= base and "at some point" in text and (
            touched := _unread_where(owners, base, scan, slurm_memory_touched_after_its_end)):
        # (slurmstepd's word that the step's memory touched its limit, after the run said it ended well: a note)
        scan.went_on.extend(f"{SLURM_TOUCHED_NOTE}: {unread.text[:160]}" for order, unread, _, _ in scan.unread
                            if order in touched)
        scan.unread = [item for item in scan.unread if item[0] not in touched]
    if scan.unread and scan.unread[-1][0] >= base and "SparkContext" in text and (
            stopping := _unread_where(owners, base, scan, spark_lost_in_its_stop)):
        # (executors Spark's driver lost inside its own orderly stop: teardown, said as a note)
        scan.went_on.extend(f"{SPARK_STOP_NOTE}: {unread.text[:160]}" for order, unread, _, _ in scan.unread
                            if order in stopping)
        scan.unread = [item for item in scan.unread if item[0] not in stopping]
    # (kubectl's words of an end that went well: a pod Completed or Succeeded, a Job Complete, an operator's job
    # "successfully completed")
    body_k8s = "\n".join(o.rest for o in owners) if "Complete" in text or "Succeeded" in text or (
        "successfully completed" in text) else ""
    if body_k8s and not any(w.startswith(GOT_OVER) for w in scan.went_on) and (
            got_over := restarts_got_over(body_k8s)):
        # (the kubelet's back-off in `kubectl describe pod`'s events, a Warning no failure reader reads, beside pods
        # that all ended well: the note, never a refusal of a listing that shows the job's end)
        scan.went_on.append(f"{GOT_OVER}: {got_over[0][:160]}")
    elif body_k8s and not scan.went_on and (success := job_success_line(body_k8s)) is not None:
        scan.went_on.append(f"{ENDED_WELL}: {success[:160]}")   # (a describe of a job that succeeded: no refusal)
    if "passed" in text and ("test session starts" in text or "Captured " in text):
        _passed_tests(owners, base, scan)         # (a test session that passed: its tests' own output)
    if scan.unread or scan.named_failures or scan.init_waits or scan.tracebacks or any(
            line.quoted for items in [scan.orphans, *scan.failures.values()] for _, line, _ in items) or any(
            line.exc_type is not None for items in [scan.orphans, *scan.failures.values()] for _, line, _ in items):
        _went_on_past(owners, base, default_rank, single_node, scan)
    if scan.init_waits:
        _resources_came(lines, base, scan)
    if scan.init_waits and scan.tracebacks or "client socket has connected" in text:
        from triage.load.logs.connect_noise import connect_warnings_passed  # (lazy: a store's connect only)

        connect_warnings_passed(owners, base, scan)      # (c10d's warning of one address, then the connect went on)
    if scan.orphans and scan.orphans[-1][0] >= base:
        _refusal_went_on(owners, base, scan)
    if not scan.prose:
        scan.prose = read_prose([o.rest for o in owners])    # (without a launcher's or a pod's tag)
        if scan.prose.host is not None:
            scan.prose = replace(scan.prose, log_hosts=tuple(sorted({o.host for o in owners if o.host}))[:8])
    ends = _ends(clean.lines)
    scan.launcher = scan.launcher or launcher_of(ends)
    if scan.launcher is not None and scan.launcher_shown is None:
        scan.launcher_shown = launcher_shown(ends)
    scan.agent_stopped = scan.agent_stopped or agent_stopped_pids(ends)
    unfinished_tracebacks(scan)
    body = "\n".join(o.rest for o in owners)
    _hosts(owners, scan)
    whole = "\n".join(lines)      # (as cleaned: a terminal's wrap joined, timestamps and viewers' heads gone)
    nccl_records(whole if nccl_source is None else nccl_source, path, scan, default_rank, nccl)
    # (pdsh's "node2: " before an agent's line: a launch over nodes; a pod's prefix is one node's)
    agent_hosts = {int(m.group(1)): o.host for o, line in zip(owners, lines) if o.host and "local_rank:" in o.rest
                   and line.startswith(f"{o.host}: ") and (m := _AGENT_PID.search(o.rest)) is not None}
    # (pdsh's "node2: " before DeepSpeed's launcher records: that node's launcher)
    node_heads = [o.host if o.host and line.startswith(f"{o.host}: ") else None for o, line in zip(owners, lines)] \
        if any(o.host for o in owners) else None
    if "-" * 15 in text:
        node_heads = _node_blocks(lines, node_heads)
    line_hosts = node_heads if "exits with return code" in body else None
    # (torchrun's own tags on its workers' lines: torchrun started the ranks, so a launcher above it counts agents)
    torchrun_tagged = ("[rank" in whole or "[default" in whole) and any(_TORCHRUN_TAG.match(line) for line in lines)
    # (the rank a line's own prefix names, "[3] ", "3: ", "[1,3]<stderr>:": a code's banner that names no rank is that
    # rank's)
    line_ranks = [o.key if isinstance(o.key, int) else None for o in owners] \
        if any(isinstance(o.key, int) for o in owners) else None
    launcher_records(record_text(lines, owners, body), path, scan, single_node, agent_hosts, line_hosts,
                     pid_ranks_of(owners), torchrun_tagged=torchrun_tagged, node_heads=node_heads,
                     line_ranks=line_ranks, prefixed_ranks=_prefixed_ranks(owners))
    # (their [host:pid] heads name the host; a kubectl pod tag is seen through: a box's lines may span lines)
    untagged = "\n".join(without_pod_tag(line) if line.startswith("[pod/") else _without_label(line, owner)
                         for line, owner in zip(lines, owners))
    mpi_records(untagged, path, scan)
    if scan.job_config is None and (found := misfit_and_rank(untagged)) is not None:
        # (a program's message wrapped over lines, each under its pod's tag: read through the tags)
        scan.job_config, scan.job_config_rank = found
    scan.op_count_splits.extend(op_count_splits(body, path))
    scan.lagging.extend(ReportedLag(lag.ranks, lag.never_joined, lag.collective, lag.text, (path,))
                        for lag in parse_desync_report(whole))
    if HOROVOD_STALL_MARKER in whole:
        scan.lagging.extend(ReportedLag(lag.ranks, lag.never_joined, lag.collective, lag.text, (path,))
                            for lag in parse_horovod_stall(whole))
    if HCCL_NOTIFY_MARKER in whole:
        scan.lagging.extend(ReportedLag(lag.ranks, lag.never_joined, lag.collective, lag.text, (path,))
                            for lag in parse_hccl_waits(whole))
    facts = world_size_facts(body)
    record_world(scan, facts)
    if facts is None and (one := sole_process_source(body)) is not None:
        # (a world of one is a fact too: the coverage line says the one process is all of the job's)
        scan.sole_process = True
        record_world(scan, WorldSize(1, one))
    if "Xid" in text or "segfault at" in text or "Killed process" in text:
        # lazy: the kernel's line parsers, only for a log that holds a kernel line
        from triage.load.kernel import dmesg_events

        scan.events.extend(dmesg_events(text, "?", path))


_AGENT_PID = lazy_regex(r"local_rank: \d+ \(pid: (\d+)\)")
# triage's own records in a merged.log: "[host:triage] ..." (the agent writes them; no rank does:
# a rank's line that prints one is tagged with the rank first, "[host:3] [host:triage] ...")
_TRIAGE_TAG = lazy_regex(r"\[([A-Za-z0-9][\w.-]*):triage\] ")


def _condor_passed(owners: list[LineOwner], base: int, scan: LogScan) -> set[int]:
    """The orders of this text's unread failure lines that lie in an event of HTCondor's job event log which a later
    event follows (triage.parsing.frameworks.condor_event_passed: only the log's last event tells how the job ended)."""
    return _unread_where(owners, base, scan, condor_event_passed)


def _unread_where(owners: list[LineOwner], base: int, scan: LogScan, test: Callable[[str, int], bool]) -> set[int]:
    """The orders of this text's unread failure lines for which ``test(body, offset of the line in body)`` holds."""
    starts, at = [], 0
    for owner in owners:
        starts.append(at)
        at += len(owner.rest) + 1
    body = "\n".join(owner.rest for owner in owners)
    return {order for order, *_ in scan.unread
            if 0 <= order - base < len(starts) and test(body, starts[order - base])}


def _without_label(line: str, owner: LineOwner) -> str:
    """A line without the rank label a launcher put before it (srun --label's, MPICH's mpiexec -l's ``N: ``): an MPI
    library's record over several lines (Open MPI's boxes, a rank's own output under srun) is read through the
    labels, as it is without them; the rest of the line (its ``[host:pid]`` head) is kept."""
    if isinstance(owner.key, int) and line[:1].isdigit() and line.startswith(label := f"{owner.key}: "):
        return line[len(label):]
    return line


def _triage_record(text: str, host: str, path: str, scan: LogScan) -> None:
    """triage's stop record: the decision it took, with its verdict (the earliest one counts)."""
    if not text.startswith(STOP_LOG_RECORD):
        return
    try:
        data = json.loads(text[len(STOP_LOG_RECORD):])
    except ValueError:
        return
    from triage.load.stop_record import stop_from_json  # (lazy: a log that holds triage's record only)

    stop = stop_from_json(data, path, host)
    if stop is not None and (scan.stop is None or stop.time < scan.stop.time):
        scan.stop = stop


def _joined_message(owners: list[LineOwner], index: int, limit: int = 12) -> tuple[str, int]:
    """A message printed over several lines, joined until it parses (or ``limit`` lines)."""
    text = owners[index].rest
    stop = min(len(owners), index + 1 + limit)
    for nxt in range(index + 1, stop):
        text = f"{text} {owners[nxt].rest.strip()}"
        if parse_mismatch(text) is not None and text.rstrip().endswith((").", ")")):
            return text, nxt + 1
    return owners[index].rest, index + 1


def _neighbour(owners: list[LineOwner], index: int, step: int) -> str | None:
    """The nearest line of the same owner before (step -1) or after (step 1) ``index`` that is not blank."""
    key = owners[index].key
    at = index + step
    for _ in range(NEIGHBOUR_REACH):
        if not 0 <= at < len(owners):
            return None
        if owners[at].key == key and owners[at].rest.strip():
            return owners[at].rest
        at += step
    return None


NEIGHBOUR_REACH = 20     # lines looked at either side of a raise statement for its own owner's neighbour


# an exception whose message is only the C++ source site that threw it ("RuntimeError:
# [gloo/transport/tcp/unbound_buffer.cc:78]"): the message itself was wrapped onto the next line
_SITE_HEAD = lazy_regex(r"^\s*[\w.]*(?:Error|Exception):\s*\[[^\]\s]+\.(?:cc|cpp|cu|c|h|hpp):\d+\]\s*$")


def _site_head_joined(owners: list[LineOwner], index: int) -> str | None:
    """An exception line that ends at its source site, joined with the next line of the same owner (its words)."""
    if index + 1 >= len(owners) or _SITE_HEAD.match(owners[index].rest) is None:
        return None
    nxt = owners[index + 1]
    words = nxt.rest.strip()
    if nxt.key != owners[index].key or not words or words.startswith(("Traceback", "File ", "frame #", "[")):
        return None
    return f"{owners[index].rest.rstrip()} {words}"


def _prefixed_ranks(owners: list[LineOwner]) -> frozenset[int]:
    """The global ranks the lines' own prefixes name (torch's "[rankN]:", or a launcher's label in its place), where
    they are of one host and no agent's record of a failed worker is itself under such a prefix (srun's label of the
    task that ran that node's agent: a node's index, not a rank); else none."""
    ranks = frozenset(o.key for o in owners if isinstance(o.key, int))
    if not ranks or len({o.host for o in owners if isinstance(o.key, int) and o.host}) > 1 or any(
            isinstance(o.key, int) and "failed (exitcode" in o.rest for o in owners):
        return frozenset()
    return ranks


def _debugger_view(owners: list[LineOwner], index: int) -> tuple[str, int] | None:
    """A debugger's exception view (triage.parsing.debugger_view): its head and the message on the line after it, as
    Python's exception line, with the index to go on from (past the message)."""
    after = 1
    if index + 2 < len(owners) and owners[index + 1].rest.strip().startswith(DEBUGGER_NOTE):
        after = 2                   # (pydevd's note on a line of its own, where a paste broke the widget's line)
    nxt = owners[index + after] if index + after < len(owners) and owners[index + after].key == owners[index].key \
        else None
    line = exception_line(owners[index].rest, nxt.rest if nxt is not None else None)
    if line is None:
        return None
    # a debugger stops on an exception raised and handled too (VS Code's "Raised Exceptions"): a view the run went on
    # past, to its progress and its own word that it ended well, ended nothing
    if ran_to_its_end_after("\n".join(owner.rest for owner in owners[index:index + 120]), 0, 119):
        return None
    consumed = nxt is not None and nxt.rest.strip() and not nxt.rest.strip().startswith(("File \"", "Traceback"))
    return line, index + (after + 1 if consumed else after)


def _any_in(markers: Iterable[str], text: str) -> bool:
    """``any(marker in text for marker in markers)`` without a generator's frame resumed per marker (a line is
    tested against five lists of markers: ~0.3 us a marker saved on a log whose every line is read)."""
    for marker in markers:     # noqa: SIM110 (a loop: any() over a generator costs a frame a line)
        if marker in text:
            return True
    return False


def _line(rest: str, rank: int | None, host: str | None, path: str, order: int, scan: LogScan,
          loud: bool = True, stamp: str | None = None, code: bool = False) -> None:
    """Route one line to the parser its markers call for (``loud`` False: it holds none of GATE_LITERALS;
    ``stamp``: the head removed from it, whose glog level may say it is an error; ``code``: a traceback frame's
    source line, triage.parsing.raise_sites.frame_source_line, whose words are never a failure line)."""
    fatal_head = loud and (glog_fatal_head(rest.lstrip()) or (stamp is not None and glog_fatal_head(stamp.lstrip())))
    parsed = False
    if host and rank is None and scan.orphans and rest.lstrip().startswith(_OMPI_SIGNAL_HEAD):
        _handler_host(host, order, scan)
    elif host and rank is None and scan.orphans and rest[:1] == "[" and (frame := LAUNCHER_FRAME.match(rest)):
        _launcher_signal(frame.group("image"), order, scan)
    if rank is None and scan.orphans and rest.lstrip().startswith("Node:"):
        _launch_node(rest, order, scan)
    if scan.init_waits and ("/job:" in rest or "task names:" in rest or "reached the barrier" in rest) \
            and coordination_line(rest, order, scan):
        return
    if loud and _any_in(INIT_MARKERS, rest) and (wait := parse_init_line(rest)) is not None:
        record_init_wait(wait, rank, host, path, order, scan)
        if fatal_head:
            scan.glog_fatal = (order, rank)     # (JAX's agent ending after the service told it of a task's death)
        return
    if loud and "Duplicate GPU" in rest and (duplicate := duplicate_gpu(rest)) is not None:
        if rank is not None:
            nccl_detail_of(rank, order, scan)      # the NCCL error it details is this line
        record_duplicate_gpu(duplicate, rest, path, order, scan)
        return
    if loud and (rest.lstrip().startswith("Traceback (most recent call last)")
                 or rest.rstrip().endswith(": Traceback (most recent call last):")):
        # (also a logger's head of the traceback it prints: SGLang's "Scheduler hit an exception: Traceback ...")
        scan.tracebacks.append((rank, order, path))
    elif loud and rest.lstrip().startswith(HYDRA_JOB_ERROR):
        # (Hydra's line before the traceback of the job's function that raised: a head its exception line ends)
        scan.tracebacks.append((rank, order, path))
        scan.job_errors.add(order)
    if loud and SPAWN_BOOTSTRAP_FRAME in rest:
        scan.spawn_bootstrap = order
    if loud and WORKER_START_FRAME in rest:
        scan.worker_start = order
    if loud and _any_in(RAISE_SITE_MARKERS, rest) and (site := raise_site(rest)) is not None:
        scan.raise_sites.append((rank, order, path, site))
    owner = spawn_error_owner(rest) if loud and rank is None and "terminated with the following error" in rest \
        else None
    if owner is not None:
        scan.spawn_owner = owner
        scan.spawn_owners.add(owner)
        if scan.spawn_header is None:
            scan.spawn_header = (order, rest.strip()[:200], path)
        return
    if rank is None and scan.spawn_owner is not None:
        rank = scan.spawn_owner
        scan.ranks_seen.add(rank)
    if rank is None and RUNNING_MARKER not in rest and (in_message := rank_in_message(rest)) is not None:
        # (DETAIL's "[Rank N] Running collective" trace lines of all ranks interleave: they own no lines)
        # "[Rank 7] NCCL watchdog thread terminated ...": the unprefixed lines after it are rank 7's
        scan.message_rank = (in_message, order)
    elif rank is None and scan.message_rank and order - scan.message_rank[1] <= FAILURE_CLUSTER_LINES:
        rank = scan.message_rank[0]
        scan.ranks_seen.add(rank)
    elif rank is not None and "terminated with exception" in rest and rank_in_message(rest) == rank:
        # a rank's watchdog exception whose message goes on without the prefix ("ncclRemoteError: ...",
        # "Last error:", its detail): those lines are this rank's
        scan.message_rank = (rank, order)
    if loud and _any_in(_WATCHDOG_HINTS, rest):
        parsed = record_watchdog(rest, rank, path, order, scan) and "terminated with exception" not in rest
        if parsed and rest.lstrip().startswith("what():"):
            watchdog_terminate(rest, rank, path, order, scan)
    if loud and _any_in(GLOO_MARKERS, rest) and (gloo := parse_gloo_timeout(rest)) is not None:
        parsed = record_gloo_timeout(gloo, rank, path, order, scan)
    if loud and MISMATCH_MARKER in rest:
        mismatch = parse_mismatch(rest)
        if mismatch is not None:
            scan.mismatches.append(ReportedMismatch(reported_fingerprint(mismatch.reporter),
                                                    reported_fingerprint(mismatch.other), (path,), order))
            for side in (mismatch.reporter, mismatch.other):
                if side.rank is not None:
                    scan.ranks_seen.add(side.rank)
            parsed = True
    elif loud and RUNNING_MARKER in rest:
        running = parse_running(rest)
        who = running.rank if running and running.rank is not None else rank
        if running is not None and who is not None and running.seq is not None and running.op:
            scan.collectives.setdefault(who, []).append(Collective(
                rank=who, pg="0", seq=running.seq, op=running.op, count=running.count,
                dtype=running.dtypes[0] if running.dtypes else None, state=CollectiveState.SCHEDULED,
                input_sizes=running.shapes, source="log", pg_name="default_pg"))
            parsed = True
    if scan.last_error.get(_NO_RANK if rank is None else rank, -9) == order - 1 and rest.strip() \
            and (joined := nccl_detail_of(rank, order, scan)) is not None:
        # NCCL's "Last error:" then its detail: the detail says what the exception above it was (a rank's, or one of
        # no known rank: a paste without the rank prefixes)
        crash = parse_crash_line(f"{joined[1].text}; Last error: {rest.strip()}")
        if crash is not None:
            (scan.failures.setdefault(rank, []) if rank is not None else scan.orphans).append(
                (joined[0], crash, joined[2]))
            return
    if loud and REMOTE_TARGET_MARKER in rest and grpc_remote_target(rest, rank, order, scan):
        return
    if rest.strip() == "Last error:":
        scan.last_error[_NO_RANK if rank is None else rank] = order
        return
    if loud and MONITORED_BARRIER in rest:
        scan.barrier_error = (order, _ORIGINAL in rest)
    elif loud and _ORIGINAL in rest and scan.barrier_error and order - scan.barrier_error[0] <= _BARRIER_ORIGINAL_LINES:
        scan.barrier_error = (order, True)
    if loud and not parsed and not code and has_marker(rest) and not _SUMMARY_FIELD.match(rest) \
            and ("NCCL WARN" not in rest or parse_nccl_line(rest) is None):
        # (a mismatch/Running line is not the rank's own failure; torchrun's summary is read whole;
        # NCCL WARN lines are read by the NCCL tracker, which knows their process: one without NCCL's
        # "host:pid:tid [dev]" head, which the tracker cannot place, is read here)
        crash = parse_crash_line(rest)
        if rest.lstrip().startswith("what():"):
            crash = joined_terminate(rest, rank, order, scan) or crash
        if crash is not None and crash.kind is CrashLineKind.EXCEPTION and scan.worker_start is not None \
                and 0 < order - scan.worker_start <= WORKER_START_LINES \
                and (launch := worker_start_failure(rest)) is not None:
            crash = replace(crash, text=launch)       # torchrun --no-python could not start the program
        if crash is not None and crash.kind is CrashLineKind.EXCEPTION and scan.spawn_bootstrap is not None \
                and 0 < order - scan.spawn_bootstrap <= _SPAWN_BOOTSTRAP_LINES:
            crash = replace(crash, text=(crash.text + SPAWN_BOOTSTRAP_NOTE)[:400], collateral=True)
        if crash is not None and scan.barrier_error and scan.barrier_error[1] and MONITORED_BARRIER not in rest \
                and 0 < order - scan.barrier_error[0] <= _BARRIER_ORIGINAL_LINES:
            crash = replace(crash, text=(crash.text + BARRIER_ORIGINAL_NOTE)[:400], collateral=True)
        if crash is not None and crash.kind is CrashLineKind.FATAL_SIGNAL and crash.signal == "SIGABRT" \
                and not fatal_head and scan.glog_fatal is not None and scan.glog_fatal[1] == rank \
                and 0 < order - scan.glog_fatal[0] <= _GLOG_TRACE_LINES and _ABORT_AFTER_FATAL.match(rest.strip()):
            return      # the abort that ends a glog FATAL line's process: that line (read where it stands) is its
            #             failure, with its message
        if crash is not None and crash.text.endswith(OMPI_ADDRESS_NOTE) and _signal_just_before(rank, order, scan):
            return      # Open MPI's handler's "Failing at address:" under its own "Signal: ..." line: its detail
        if crash is not None and fatal_head:
            scan.glog_fatal = (order, rank)
        if crash is not None and crash.exc_type == PYDANTIC_LINE_TYPE and _validation_detail(crash, rank, order, scan):
            return      # (a line of the ValidationError just above it: its message, read with it)
        if crash is not None and rank is None and (rank := rank_in_message(crash.text)) is not None:
            scan.ranks_seen.add(rank)
        if crash is not None:
            parsed = True
            item = (order, crash, path)
            if rank is not None:
                scan.failures.setdefault(rank, []).append(item)
            else:
                scan.orphans.append(item)
                if host:        # a process of no known rank whose prefix names its node (Ray's ip=, a pod)
                    scan.orphan_hosts.setdefault(crash, host)
    if not parsed and colon_message(rest, rank, order, scan):
        return              # (the message of the failure line above it, which ended in its colon)
    if code:
        pass            # (a frame's source line: no failure in its words)
    elif loud and (rank is None or not parsed) and len(scan.named_failures) < MAX_UNPARSED \
            and (named := named_failure(rest, rank)) is not None:
        scan.named_failures.append((order, named[0], named[1], path))
    elif loud and rank is None and not parsed and len(scan.unread) < MAX_UNPARSED \
            and (unread := unread_failure(rest, stamp)) is not None:
        scan.unread.append((order, unread, host or unread.host, path))
    elif loud and rank is None and not parsed and len(scan.gone_on) < MAX_UNPARSED \
            and (gone := gone_on_failure(rest, stamp)) is not None:
        scan.gone_on.append((order, gone))      # ("..., skipping": a note, never the run's failure)
    if not parsed and not scan.past_init and (RUNNING_MARKER in rest or _PROGRESS.search(rest)):
        scan.past_init = True
    if rank is not None and rest.strip() and not parsed:
        scan.last_lines.setdefault(rank, deque(maxlen=LAST_LINES)).append(rest.strip()[:300])
    elif rank is None and not parsed and not scan.first_timeout and not scan.failures and rest.strip():
        scan.unprefixed_tail.append(rest.strip()[:300])
    if loud and not parsed and len(scan.unparsed) < MAX_UNPARSED and _any_in(_KNOWN_HINTS, rest) \
            and "NCCL WARN" not in rest and "exitcode" not in rest:
        scan.unparsed.append(rest.strip()[:500])


# pydantic's ValidationError's head, its field's location on the next line, then the field's error
_VALIDATION_LINES = 3
# the head's message as pydantic ends it ("1 validation error for ParallelConfig"), no line's message joined to it yet
_VALIDATION_HEAD_ENDS = lazy_regex(r"\b\d+ validation errors? for [\w.\[\], -]+$")


def _validation_detail(crash: CrashLine, rank: int | None, order: int, scan: LogScan) -> bool:
    """A line of pydantic's ValidationError (crashlog.pydantic_line_error) a few lines under its head's exception line,
    of the same process: the head's first such line joins the head's message (what the validator said), the others
    are its detail; True where the line was so read."""
    items = scan.failures.get(rank, []) if rank is not None else scan.orphans
    if not items:
        return False
    at, head, path = items[-1]
    if head.exc_type is None or not head.exc_type.endswith("ValidationError") or head.exc_type == PYDANTIC_LINE_TYPE \
            or not 0 < order - at <= _VALIDATION_LINES * 4:
        return False
    if order - at <= _VALIDATION_LINES and _VALIDATION_HEAD_ENDS.search(head.text) is not None:
        said = crash.text.removeprefix("ValidationError: ").removesuffix(PYDANTIC_LINE_NOTE)
        items[-1] = (at, replace(head, text=f"{head.text}: {said}"[:400]), path)
    return True


# Open MPI's signal handler heads its report "[host:pid] *** Process received signal ***" just after the line of the
# failure that raised the signal (a terminate's "what(): ... cudaErrorIllegalAddress" then SIGABRT): a paste cut after
# that head still says the failure's node
_OMPI_SIGNAL_HEAD = "*** Process received signal ***"
_HANDLER_HEAD_LINES = 3


def _signal_just_before(rank: int | None, order: int, scan: LogScan) -> bool:
    """A fatal signal of the same process (rank, or no known rank) on one of the few lines before: Open MPI's handler's
    "Signal: ..." line, whose detail lines ("Signal code:", "Associated errno:") come before its failing address."""
    items = scan.failures.get(rank, []) if rank is not None else scan.orphans
    return bool(items) and items[-1][1].kind is CrashLineKind.FATAL_SIGNAL \
        and 0 < order - items[-1][0] <= _HANDLER_HEAD_LINES + 1


# Open MPI's box of a program it could not start names the node on a line of its own below ("mpirun was unable to
# launch the specified application as it could not access or execute an executable:" ... "Executable: ./train",
# "Node: node07"): the launch failure's host
_NODE_LINE = lazy_regex(r"^\s*Node:\s+([\w.-]+)\s*$")
_LAUNCH_BOX_LINES = 10


def _launch_node(rest: str, order: int, scan: LogScan) -> None:
    """The node of Open MPI's launch failure, from its box's "Node: X" line just after it."""
    at, line, _ = scan.orphans[-1]
    if LAUNCH_TEXT in line.text[:len(LAUNCH_TEXT) + 2] and 0 < order - at <= _LAUNCH_BOX_LINES \
            and line not in scan.orphan_hosts and (node := _NODE_LINE.match(rest)) is not None:
        scan.orphan_hosts[line] = node.group(1)


def _handler_host(host: str, order: int, scan: LogScan) -> None:
    """The failure of no known rank and no node just before Open MPI's "[host:pid] *** Process received signal ***" is
    that process's, on ``host``."""
    last_order, crash, _path = scan.orphans[-1]
    if 0 < order - last_order <= _HANDLER_HEAD_LINES and crash not in scan.orphan_hosts:
        scan.orphan_hosts[crash] = host

# (an Open MPI handler's backtrace is a few dozen frames at most)
_HANDLER_FRAMES = 64


def _launcher_signal(image: str, order: int, scan: LogScan) -> None:
    """The signal just before a handler's frame in the launcher's own image (``mpirun(+0x13a3)``) is the launcher's."""
    last_order, crash, path = scan.orphans[-1]
    if crash.kind is not CrashLineKind.FATAL_SIGNAL or not 0 < order - last_order <= _HANDLER_FRAMES \
            or LAUNCHER_ITSELF in crash.text:
        return
    marked = replace(crash, text=f"{crash.text}: {image} {LAUNCHER_ITSELF}")
    scan.orphans[-1] = (last_order, marked, path)
    scan.orphan_hosts.moved(crash, marked)


# glog's FATAL line, then its message's further lines (a gRPC detail, a coordination error's list of tasks), then "***
# Check failure stack trace: ***": the trace ends the FATAL line's process, no failure of its own
_GLOG_TRACE_LINES = 40
# what the abort says after it: glog's trace head, Python's faulthandler, a shell's, absl's failure signal handler
_ABORT_AFTER_FATAL = lazy_regex(r"^(?:\*\*\* Check failure stack trace: \*\*\*|Fatal Python error: Aborted|"
                                r"Aborted(?: \(core dumped\))?|\*\*\* SIGABRT received at time=)")

_LAUNCHER_HEAD, _LAUNCHER_TAIL = 2_000, 20_000     # lines: a launcher speaks at the start and at the end


def _ends(lines: tuple[str, ...]) -> str:
    """The first and the last lines, where a launcher speaks (a long log's middle is the ranks' own work)."""
    if len(lines) <= _LAUNCHER_HEAD + _LAUNCHER_TAIL:
        return "\n".join(lines)
    return "\n".join(lines[:_LAUNCHER_HEAD]) + "\n" + "\n".join(lines[-_LAUNCHER_TAIL:])


def _hosts(owners: list[LineOwner], scan: LogScan) -> None:
    for owner in owners[:20000]:
        if isinstance(owner.key, int) and owner.host:
            scan.hosts.setdefault(owner.key, owner.host)


def _unsure_head(owner: LineOwner, line: str, scan: LogScan, start: int) -> None:
    """A failure under a "[host:N]" head that the input cannot tell a rank's from a process's, or under a head that
    names a local rank of one of several replicas (torchx): said with it."""
    head = line[:line.find("]") + 1] if line.startswith("[") else f"[{owner.key}]"
    note = owner.note or (f" (its head {head} is host:pid for Open MPI and others, host:rank for triage's tag; this "
                          f"input does not tell which: read as a process; the launcher's rank tags or the job's size "
                          f"would settle it)")
    for i in range(start, len(scan.orphans)):
        order, crash, path = scan.orphans[i]
        scan.orphans[i] = (order, replace(crash, text=shortened(crash.text) + note), path)
        scan.orphan_hosts.moved(crash, scan.orphans[i][1])
