"""torchelastic error files (TORCHELASTIC_ERROR_FILE), torchrun's ChildFailedError summary, the
DeepSpeed launcher's "[argv] exits with return code = N" record, and srun's record of a task a signal
killed ("srun: error: node07: task 3: Killed")."""

from __future__ import annotations

import json
import re
import signal as _signal
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from triage.lazy_regex import lazy_regex
from triage.parsing import windows_status
from triage.parsing.launchers import fortran_signals, ompi_direct_launch_at, slurm_memory_kill_of_several
from triage.parsing.log_prefix import split_rank_prefix


@dataclass(frozen=True)
class ElasticError:
    """A rank's error record that torchelastic wrote or printed."""
    rank: int | None
    message: str
    exitcode: int | None
    timestamp: int | None        # unix seconds
    traceback: str | None


def _opt_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return None
    return None


def parse_error_file(data: Mapping[str, Any] | str | bytes, rank: int | None = None) -> ElasticError | None:
    """The error a rank recorded (``@record`` / torchelastic) from the file's JSON (decoded or
    text). None when the content is not an error file."""
    if isinstance(data, (str, bytes)):
        try:
            data = json.loads(data)
        except (ValueError, UnicodeDecodeError):
            return None
    if not isinstance(data, Mapping) or "message" not in data:
        return None
    msg = data["message"]
    if isinstance(msg, Mapping):
        raw_extra = msg.get("extraInfo")
        extra = raw_extra if isinstance(raw_extra, Mapping) else {}
        callstack = extra.get("py_callstack")
        return ElasticError(
            rank=rank, message=str(msg.get("message", "")),
            exitcode=_opt_int(msg.get("errorCode", data.get("errorCode"))),
            timestamp=_opt_int(extra.get("timestamp")),
            traceback=str(callstack) if callstack else None,
        )
    return ElasticError(rank, str(msg), _opt_int(data.get("errorCode")), _opt_int(data.get("timestamp")), None)


@dataclass(frozen=True)
class LauncherFailure:
    """A rank's failure as the launcher's summary reports it."""
    rank: int | None
    local_rank: int | None
    host: str | None
    exitcode: int | None
    signal: str | None           # "SIGSEGV" when the rank died by a signal
    pid: int | None
    timestamp: str | None        # as torchrun printed it: "2026-11-22_00:23:37"
    error_file: str | None = None
    traceback: str | None = None
    root_cause: bool = False     # listed under "Root Cause (first observed failure)"
    note: str | None = None      # what the record cannot tell (which process it was), said with the failure
    srun_exit: bool = False      # srun's "task N: Exited with exit code C": an exit code, no error of its own
    srun_task: bool = False      # srun's record: ``rank`` is srun's task index (SLURM_PROCID), a rank only where srun
    #                              started the ranks itself
    offset: int | None = None    # where a one-line record (DeepSpeed's) is in the text: its line's prefix names
    #                              the host (pdsh's "node2: ")
    at: int | None = None        # where srun's record of a task's end is in the text (what its task printed is
    #                              before it: a line after the record of its death by a signal is no line of its own)


_ENTRY = lazy_regex(r"^\s*\[(\d+)\]:\s*$")
_FIELD = lazy_regex(r"^\s*(time|hostname|host|rank|local_rank|exitcode|error_file|traceback|msg)\s*:\s?(.*)$")
_FIELD_NAMES = {"hostname": "host", "msg": "traceback"}     # older torchelastic's names
_RANK = lazy_regex(r"(-?\d+|<N/A>)(?:\s*\(local_rank:\s*(\d+)\))?")
_EXIT = lazy_regex(r"(-?\d+)(?:\s*\(pid:\s*(\d+)\))?(?:\s*\((SIG\w+)\))?")
_SIG_TEXT = lazy_regex(r"Signal (\d+) \((SIG\w+)\)")
# (the pid may be cut off: an issue title that ends at "local_rank: 1")
_AGENT_LINE = lazy_regex(r"failed \(exitcode: (-?\d+)\) local_rank: (\d+)(?: \(pid: (\d+)\))?|"
                         # another form: "failed (exitcode: -9) for binary located at X with local_rank: 0
                         # (process ID: 71)"
                         r"failed \(exitcode: (-?\d+)\) for binary located at \S+ with local_rank: (\d+) "
                         r"\(process ID: (\d+)\)")
# deepspeed/launcher/launch.py, sigkill_handler: after a process exited non-zero the launcher kills the others
# and logs "[ERROR] [launch.py:321:sigkill_handler] ['python', '-u', 'train.py', '--local_rank=7', ...] exits
# with return code = -9". The return code is the failed process's; the argv is not: it is the launcher's `cmd`
# variable, left holding the command of the LAST process it started (the highest local rank). Only
# "--local_rank=0" (a launch of one process) names the process that failed.
_DEEPSPEED_EXIT = lazy_regex(r"exits with return code = (-?\d+)")
_DEEPSPEED_HANDLER = "sigkill_handler]"
_NO_ARGV = ("DeepSpeed's launcher record is here without the command it prints: which local rank's process "
            "exited is not in this input")
_CUT_ARGV = ("DeepSpeed's launcher record is here with only the end of the command it prints: which local rank's "
             "process exited is not in this input")
# the end of that command's list ("..., '--fp16', '--overwrite'] exits with ..."), its opening "[" cut off
_ARGV_TAIL = lazy_regex(r"['\"]\]\s*$")
# A script that does not take the --local-rank/--local_rank argument torch.distributed.launch (and DeepSpeed's
# launcher) passes to each process, refusing it at start-up: argparse's "train.py: error: unrecognized arguments:
# --local-rank=5" (PyTorch 2.x passes "--local-rank"; scripts written for 1.x parse "--local_rank"), python-fire's
# "ERROR: Could not consume arg: --local_rank=3". The number is that process's local rank; argparse exits with 2.
_ARGV_REJECTED = lazy_regex(r"(?:error: unrecognized arguments:|ERROR: Could not consume arg:)[^\n]*?"
                            r"--local[_-]rank[= ](\d+)")
_REJECTED_ALIKE = ("exit code 2, argparse's for a usage error, as the process whose refusal of the --local-rank "
                   "argument is shown: the same refusal, its own usage line not in this input")
_REJECTED_NOTE = ("the script does not take the --local-rank/--local_rank argument the launcher passes to each "
                  "process (read LOCAL_RANK from the environment, or accept both spellings)")
# torch.distributed.launch (PyTorch <= 1.8) waits on its workers in local-rank order and raises for the first
# it finds failed: "subprocess.CalledProcessError: Command '['python', '-u', 'train.py', '--local_rank=1']' died
# with <Signals.SIGSEGV: 11>." / "... returned non-zero exit status 1." (a negative status, "-9", is Python's return
# code of a child a signal killed, the signal's number: subprocess words it so where the signal has no name it knows,
# and older Pythons always)
# The record is often quoted without its "subprocess.CalledProcessError:" head (an issue's title, a user's
# paraphrase): then the command must be the launcher's own (it runs each worker as "python -u script", and
# passes --local_rank unless --use_env), never any subprocess's (a failed "['ninja', '-v']" build).
_LAUNCH_CALLED = lazy_regex(r"(CalledProcessError: )?Command '(\[.*?\])' (?:died with <Signals\.(SIG[A-Z]+): \d+>|"
                            r"returned non-zero exit status (-?\d+))")
# the tail of Python's CalledProcessError without its "Command '[...]'" (an issue title, a paste cut inside the argv):
# the words are subprocess's own, so they say that the command it ran died of that signal
_DIED_ALONE = lazy_regex(r"\bdied with <Signals\.(SIG[A-Z]+): \d+>")
_LAUNCHER_ARGV = lazy_regex(r"""^\[['"][^'"]*python[\d.]*(?:\.exe)?['"],\s*['"]-u['"]""")

# torch.multiprocessing.spawn: "ProcessExitedException: process 1 terminated with signal SIGABRT" /
# "... terminated with exit code 1"; the index is the spawned process's (the local rank, as a rule)
_SPAWN_EXIT = lazy_regex(r"process (\d+) terminated with (?:signal (SIG[A-Z]+)|exit code (-?\d+))")
# srun (SLURM): "srun: error: node07: task 3: Segmentation fault (core dumped)" / "...: task 3: Out Of
# Memory" / "...: tasks 0-3: Killed". The task id is SLURM_PROCID, the rank when srun starts the ranks.
# "...: task 1: Exited with exit code 3" too: srun prints each task's end as it sees it, so its first
# record is the task that ended first (the tasks that saw that peer go exit after it); "Terminated" is
# srun's own teardown (--kill-on-bad-exit, a cancellation) and is not kept. A line may lack the host field
# ("srun: error: tasks 0-1: Floating point exception": a pasted or retyped line).
_SRUN_SIGNAL = lazy_regex(r"srun: error: (?:(?P<host>[\w.-]+): )?tasks? (?P<tasks>\d+(?:[-,]\d+)*): (?:(?P<what>Killed|"
                          r"Segmentation fault|Aborted|Bus error|Out Of Memory|Floating point exception|"
                          r"Illegal instruction)\b|Exited with exit code (?P<code>\d+))")
# srun's wait timer (src/srun, --wait / the step's end: "srun: First task exited 60s ago", then each task's state,
# "srun: StepId=1544235.0 task 0: running", "srun: StepId=1544235.0 tasks 1-3: exited abnormally", "...: exited",
# older "srun: task 1: exited abnormally"), under srun's own name or a vendor build's (Tianhe's "yhrun"): the tasks
# "exited abnormally" are the ones that ended first and badly (a non-zero exit or a signal: the record does not say
# which), the others were still running or ended cleanly. Its plain "exited" (src/srun/task_state.c: the tasks that
# ended with code 0) is the first failure only beside the program's own word that it stopped (_ABORT_ROUTINE below):
# a task that ended cleanly first may be one that finished its share while another hangs
SRUN_WAIT = lazy_regex(r"^[ \t>]*(?:srun|yhrun): (?:StepId=\S+ )?tasks? (?P<tasks>\d+(?:[-,]\d+)*): exited"
                       r"(?P<abnormally> abnormally)?[ \t]*$", re.MULTILINE)
# A program's abort routine's own name alone on a line: what a STOP with that name as its message prints (Intel
# Fortran's runtime prints the message alone, gfortran's "STOP wrf_abort"; WRF's and NoahMP's stub
# "SUBROUTINE wrf_abort / STOP 'wrf_abort'"), or a routine that prints its name before it calls MPI_Abort or stops
# ("wrf_abort", "mpas_dmpar_abort", "shr_sys_abort"): the process ended by its own error path, with code 0 where it
# was a STOP
_ABORT_ROUTINE = lazy_regex(r"^[ \t>]*(?:STOP )?[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*_(?:abort|ABORT)[ \t]*$",
                            re.MULTILINE)
_SRUN_FIRST_EXITED = lazy_regex(r"^[ \t>]*(?:srun|yhrun): First task exited \d+s ago", re.MULTILINE)
SRUN_WAIT_HEAD = "srun's wait timer: "
SRUN_WAIT_NOTE = (SRUN_WAIT_HEAD + "the task exited abnormally (a non-zero exit or a signal, the record does not say "
                  "which) while the others were still running")
SRUN_WAIT_STOP_NOTE = (SRUN_WAIT_HEAD + "the task ended first, with code 0, while the others still ran, after the "
                       "program's abort routine said it stopped ({routine}): a stop that does not abort the job (a "
                       "STOP, not MPI_Abort), so the others waited until srun terminated the step")
_SRUN_SIGNALS = {"Killed": "SIGKILL", "Segmentation fault": "SIGSEGV", "Aborted": "SIGABRT", "Bus error": "SIGBUS",
                 "Out Of Memory": "SIGKILL", "Floating point exception": "SIGFPE", "Illegal instruction": "SIGILL"}
_ARGV_LOCAL_RANK = lazy_regex(r"""--local[_-]rank(?:=|['"],\s*['"])(\d+)""")


def _signal_name(exitcode: int | None, text: str | None) -> str | None:
    if text:
        return text
    if (windows := windows_status.crash_signal(exitcode)) is not None:
        return windows                      # a Windows crash status (0xC0000005 as 3221225477 or -1073741819)
    if exitcode is not None and exitcode < 0:
        try:
            return _signal.Signals(-exitcode).name
        except ValueError:
            return f"signal {-exitcode}"
    return None


def _entry(fields: dict[str, str], root: bool) -> LauncherFailure:
    rank_m = _RANK.match(fields.get("rank", ""))
    local_m = re.match(r"\s*(\d+)", fields.get("local_rank", ""))
    exit_m = _EXIT.match(fields.get("exitcode", ""))
    exitcode = int(exit_m.group(1)) if exit_m else None
    tb = fields.get("traceback", "").strip() or None
    sig_m = _SIG_TEXT.search(tb or "")
    err = fields.get("error_file", "").strip()
    host = fields.get("host", "").strip()
    return LauncherFailure(
        rank=int(rank_m.group(1)) if rank_m and rank_m.group(1).lstrip("-").isdigit() else None,
        local_rank=int(rank_m.group(2)) if rank_m and rank_m.group(2) else int(local_m.group(1)) if local_m else None,
        host=host or None, exitcode=exitcode,
        signal=_signal_name(exitcode, (exit_m.group(3) if exit_m else None) or (sig_m.group(2) if sig_m else None)),
        pid=int(exit_m.group(2)) if exit_m and exit_m.group(2) else None,
        timestamp=fields.get("time", "").strip() or None,
        error_file=None if err in ("", "<N/A>") else err, traceback=tb, root_cause=root,
    )


def is_record_field(line: str) -> bool:
    """Whether a line (without its launcher prefix) is a field of a torchelastic failure record."""
    return _FIELD.match(line) is not None


def _field_line(raw: str) -> tuple[str, tuple[str, str] | None]:
    """A summary line without its launcher prefix, and ("rank"|"local_rank", N) when a rank prefix on a
    record field ("[rank3] exitcode: -9", "[default3]: exitcode: -9") names the rank the record is of."""
    tag = split_rank_prefix(raw.lstrip())
    if tag.rest != raw.lstrip() and _FIELD.match(tag.rest):
        return tag.rest, (None if tag.rank is None else ("local_rank" if tag.local else "rank", str(tag.rank)))
    return (split_rank_prefix(raw).rest if raw[:1] not in (" ", "[") else raw), None


def parse_launcher_failures(text: str) -> tuple[LauncherFailure, ...]:
    """Failures from torchrun's ChildFailedError summary, root cause first. Without a summary
    (a log cut short), the agent's "failed (exitcode: N) local_rank: L (pid: P)" lines."""
    failures: list[LauncherFailure] = []
    root = False
    fields: dict[str, str] | None = None
    last_key = ""

    headerless = False
    raw_lines: list[str] = []

    def flush() -> None:
        if fields is not None and ("rank" not in fields or "exitcode" not in fields):
            _recover(fields, " ".join(raw_lines))         # a record whose layout was lost (retyped, run together)
        raw_lines.clear()
        if fields and (not headerless or "exitcode" in fields):
            failures.append(_entry(fields, root or headerless))

    for raw in text.splitlines():
        line, tagged = _field_line(raw)
        if tagged and fields is not None and headerless and fields.get(tagged[0]) not in (None, tagged[1]):
            flush()                           # another rank's tagged record line ends a headerless record
            fields = None
        stripped = line.strip()
        if "Root Cause (first observed failure)" in line or stripped.startswith(("Failures:", "Other Failures:",
                                                                              "Root Cause:")):
            flush()
            fields, root = None, "Root Cause" in line
            continue
        if _ENTRY.match(line):
            flush()
            fields, last_key, headerless = {}, "", False
            continue
        if fields is None:
            # a record pasted without its header: its first field starts it (kept if it has an exit code)
            start = _FIELD.match(line)
            if start is None or start.group(1) not in ("time", "host", "hostname", "rank", "local_rank", "exitcode"):
                continue
            fields, last_key, headerless = {}, "", True
        if stripped.startswith(("=====", "-----")):
            flush()
            fields = None
            continue
        raw_lines.append(line)
        if tagged and tagged[0] not in fields:
            fields[tagged[0]] = tagged[1]     # "[rank3] exitcode: -9": the prefix names the record's rank
        field = _FIELD.match(line)
        if field:
            last_key = _FIELD_NAMES.get(field.group(1), field.group(1))
            fields[last_key] = field.group(2).strip().strip('"') if last_key == "traceback" else field.group(2)
        elif last_key == "traceback":
            fields["traceback"] += "\n" + line
    flush()
    if not failures:
        failures.extend(_deepspeed_failures(text))
    if not failures and ("CalledProcessError" in text or "Command '[" in text):
        failures.extend(_launch_failures(text))
    if not failures and "srun: error:" in text:
        failures.extend(_srun_failures(text))
    if not failures and "First task exited" in text:
        failures.extend(_srun_wait_failures(text))
    if not failures and "terminated with" in text:
        for match in _SPAWN_EXIT.finditer(text):
            code = int(match.group(3)) if match.group(3) else None
            sig = match.group(2) or windows_status.crash_signal(code)     # Windows' crash statuses as exit codes
            failures.append(LauncherFailure(None, int(match.group(1)), None, code, sig, None, None, root_cause=True))
    if not failures:
        for match in _AGENT_LINE.finditer(text):
            code, local, pid = (int(g) if g else None for g in (match.groups()[:3] if match.group(1)
                                                                 else match.groups()[3:]))
            if code is not None and local is not None:
                failures.append(LauncherFailure(None, local, None, code, _signal_name(code, None), pid, None))
    failures = _argv_rejections(text, failures)
    failures.sort(key=lambda f: not f.root_cause)
    return tuple(failures)


def _argv_rejections(text: str, failures: list[LauncherFailure]) -> list[LauncherFailure]:
    """Each process that refused the launcher's --local-rank argument is a root cause (they fail alike, at
    start-up); the launcher's own record of the same local rank (its agent line) gives way to it."""
    if "local" not in text or (("unrecognized arguments" not in text) and ("Could not consume arg" not in text)):
        return failures
    shown = {int(m.group(1)) for m in _ARGV_REJECTED.finditer(text)}
    if not shown:
        return failures
    # every process gets the same argument and refuses it alike: a launcher's record of another local rank that
    # exited with argparse's usage code 2 is the same refusal, its own usage line not in this input
    alike = {f.local_rank for f in failures if f.local_rank is not None and f.exitcode == 2 and not f.root_cause}
    rejected = sorted(shown | alike)
    kept = [f for f in failures if f.root_cause or f.local_rank not in rejected]
    codes = {f.local_rank: f.exitcode for f in failures if f.local_rank in rejected}
    return kept + [LauncherFailure(None, local, None, codes.get(local) or 2, None, None, None, root_cause=True,
                                   note=_REJECTED_NOTE if local in shown else _REJECTED_ALIKE) for local in rejected]


_LOOSE_RANK = lazy_regex(r"\brank\s*:?\s*(\d+)\s*\(local[ _]rank:\s*(\d+)\)")
_BARE_RANK = lazy_regex(r"(?<![\w-])\[?rank:?\s?(\d+)\]?(?!\s*\(local)")
_LOOSE_EXIT = lazy_regex(r"exitcode\s*:\s*(-?\d+)(?:\s*\(pid:\s*(\d+)\))?")
_LOOSE_SIGNAL = lazy_regex(r"signal (\d+) \((SIG\w+)\)", re.IGNORECASE)


def _recover(fields: dict[str, str], text: str) -> None:
    """The rank, exit code and signal of a record whose fields lost their line breaks or labels
    ("rank2 (local rank: 2)exitcode: -9 (pid: 36071)error file: <N/A>")."""
    if "rank" not in fields and (rank := _LOOSE_RANK.search(text)) is not None:
        fields["rank"] = f"{rank.group(1)} (local_rank: {rank.group(2)})"
    elif "rank" not in fields and (bare := _BARE_RANK.search(text)) is not None:
        fields["rank"] = bare.group(1)                  # "rank3 exitcode: -9 (pid: 36071)"
    if "exitcode" not in fields and (code := _LOOSE_EXIT.search(text)) is not None:
        fields["exitcode"] = code.group(1) + (f" (pid: {code.group(2)})" if code.group(2) else "")
    if (sig := _LOOSE_SIGNAL.search(text)) is not None and "Signal " not in fields.get("traceback", ""):
        fields["traceback"] = f"Signal {sig.group(1)} ({sig.group(2).upper()})"


def _deepspeed_failures(text: str) -> list[LauncherFailure]:
    """The DeepSpeed launcher's record of the process that exited non-zero (it then killed the rest),
    also when a terminal wrapped its long argv over several lines."""
    if "exits with return code" not in text:
        return []
    failures = []
    for match in _DEEPSPEED_EXIT.finditer(text):
        code = int(match.group(1))
        if code == 0:
            continue
        window = text[max(0, match.start() - 16384):match.start()]
        start = window.rfind(_DEEPSPEED_HANDLER)
        argv = window[start:] if start >= 0 else window[window.rfind("\n") + 1:]
        if "[" not in argv:
            if start >= 0 and not argv[len(_DEEPSPEED_HANDLER):].strip():
                # the record without its argv ("[launch.py:325:sigkill_handler] exits with return code = -9"):
                # a process of this launch exited so, which one is not said
                failures.append(LauncherFailure(None, None, None, code, _signal_name(code, None), None, None,
                                                root_cause=True, note=_NO_ARGV, offset=match.start()))
            elif _ARGV_TAIL.search(argv):
                # a paste that starts inside the argv: its tail still says how a process of this launch exited
                failures.append(LauncherFailure(None, None, None, code, _signal_name(code, None), None, None,
                                                root_cause=True, note=_CUT_ARGV, offset=match.start()))
            continue
        local = _ARGV_LOCAL_RANK.search(argv.replace("\n", ""))
        last = int(local.group(1)) if local else None
        note = None
        if last:
            note = (f"DeepSpeed's launcher prints the command of the last process it started (local rank {last}), "
                    f"not of the one that failed: which of local ranks 0-{last} died is not in this record")
        failures.append(LauncherFailure(None, 0 if last == 0 else None, None, code, _signal_name(code, None), None,
                                        None, root_cause=True, note=note, offset=match.start()))
    return failures


def _launch_failures(text: str) -> list[LauncherFailure]:
    """torch.distributed.launch's CalledProcessError for the worker it found failed (by its --local_rank; its
    global rank is the caller's: the launch's --node_rank and --nproc_per_node, where the text quotes them)."""
    failures = []
    for match in _LAUNCH_CALLED.finditer(text):
        argv = match.group(2)
        argv_rank = _ARGV_LOCAL_RANK.search(argv)
        if not match.group(1) and not argv_rank and not _LAUNCHER_ARGV.match(argv):
            continue
        code = int(match.group(4)) if match.group(4) else None
        sig = match.group(3) or (_signal_name(code, None) if code is not None and code < 0 else None)
        # (a signal says how that worker died; an exit status may be its reaction to another's failure)
        failures.append(LauncherFailure(None, int(argv_rank.group(1)) if argv_rank else None, None,
                                        None if sig else code, sig, None, None, root_cause=sig is not None))
    if not any(f.signal for f in failures):
        for match in _DIED_ALONE.finditer(text):
            failures.append(LauncherFailure(None, None, None, None, match.group(1), None, None, root_cause=True,
                                            note="this record does not say the command it ran, nor which rank it was"))
            break
    return failures


def _srun_failures(text: str) -> list[LauncherFailure]:
    """srun's records of tasks that ended badly (a signal, a non-zero exit code), in the order srun saw
    them (the first is the root). Those after slurmstepd's ``CANCELLED AT`` are the cancellation's
    doing (the step's tasks killed after a time limit, a scancel, --kill-on-bad-exit) and are not kept."""
    failures: list[LauncherFailure] = []
    cancelled = text.find("CANCELLED AT")
    killed = slurm_memory_kill_of_several(text)
    direct = ompi_direct_launch_at(text)
    # (Intel Fortran's runtime ends the process with its message's number: srun's "task 7: Exited with exit code 174"
    # beside "forrtl: severe (174): SIGSEGV, segmentation fault occurred" is task 7's segfault)
    fortran = fortran_signals(text) if "srun: error:" in text else {}
    for match in _SRUN_SIGNAL.finditer(text):
        if 0 <= cancelled < match.start():
            break
        if 0 <= killed < match.start() and match.group("what") in ("Killed", "Out Of Memory"):
            continue        # (the step's tasks slurmstepd's memory kill ended: that kill is the failure, of no task)
        if 0 <= direct < match.start() and match.group("code") is not None:
            continue        # (tasks whose MPI_Init failed under Open MPI's direct-launch box: its failure, of no task)
        tasks: list[int] = []
        for part in match.group("tasks").split(","):
            low, _, high = part.partition("-")
            tasks.extend(range(int(low), int(high or low) + 1) if int(high or low) - int(low) < 4096 else [])
        sig = _SRUN_SIGNALS[match.group("what")] if match.group("what") else fortran.get(int(match.group("code")))
        code = None if sig else int(match.group("code"))
        # a fault no launcher sends (SIGSEGV, SIGBUS, SIGFPE, SIGILL), the same as the first record's: the task's
        # own, not the teardown's (srun's "Terminating job step" sends SIGTERM and SIGKILL), so each such task is a
        # root beside the first (tasks failing alike share a cause: one bug, a bad build, a full /dev/shm)
        # (the tasks one line lists together ended alike at the same time: all of them, when it is the first line)
        root = not failures or (sig in _SRUN_FAULTS and failures[0].signal == sig)
        first_line = not failures
        # (srun's "Out Of Memory": the step's cgroup hit its memory limit and the kernel's OOM killer, in that cgroup,
        # sent SIGKILL: host memory, said so, never a GPU's)
        note = SRUN_OOM_NOTE if match.group("what") == "Out Of Memory" else None
        for task in tasks:
            failures.append(LauncherFailure(task, None, match.group("host"), code, sig, None, None,
                                            root_cause=root if sig in _SRUN_FAULTS else first_line,
                                            srun_exit=code is not None, srun_task=True, note=note,
                                            at=match.start()))
    return failures


def _srun_wait_failures(text: str) -> list[LauncherFailure]:
    """srun's wait timer's tasks that exited abnormally (above), each a root: the first to end, before the rest
    were terminated. Read only after the timer's own ``First task exited Ns ago`` line. Where none exited abnormally,
    the tasks that exited (code 0) are the roots where the program's abort routine said before the timer that it
    stopped (_ABORT_ROUTINE): the tasks that took that error path."""
    first = _SRUN_FIRST_EXITED.search(text)
    if first is None:
        return []
    abnormal: list[LauncherFailure] = []
    clean: list[LauncherFailure] = []
    routine = _ABORT_ROUTINE.search(text, 0, first.start())
    for match in SRUN_WAIT.finditer(text, first.end()):
        if not match.group("abnormally") and routine is None:
            continue
        note = SRUN_WAIT_NOTE if match.group("abnormally") or routine is None else \
            SRUN_WAIT_STOP_NOTE.format(routine=routine.group(0).strip(" \t>"))
        for part in match.group("tasks").split(","):
            low, _, high = part.partition("-")
            if int(high or low) - int(low) >= 4096:
                continue
            (abnormal if match.group("abnormally") else clean).extend(
                LauncherFailure(task, None, None, None, None, None, None, root_cause=True, srun_task=True,
                                note=note, offset=match.start())
                for task in range(int(low), int(high or low) + 1))
    return abnormal or clean


_SRUN_FAULTS = frozenset({"SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL"})
SRUN_OOM_NOTE = ("srun: Out Of Memory: the job step's cgroup hit its memory limit (Slurm's --mem / --mem-per-cpu) and "
                 "its OOM handler killed the task")


# torchrun's agent itself was signalled ("Received 1 death signal, shutting down workers", newer:
# "Received Signals.SIGHUP death signal"): it forwards the signal to its workers and exits with
# SignalException. The signal came from outside the job: a closing terminal (SIGHUP, nohup), Ctrl-C
# (SIGINT), a scheduler, a container stop or a supervisor (SIGTERM).
_AGENT_DEATH = lazy_regex(r"Received (?:(?P<num>\d+)|Signals\.(?P<name>SIG[A-Z]+)) death signal, shutting down workers|"
                          # the agent's own exception when the signal interrupted it ("got signal: 1")
                          r"SignalException: Process \d+ got signal: (?:(?P<num2>\d+)|Signals\.(?P<name2>SIG[A-Z]+))")
# DeepSpeed's launcher (deepspeed/launcher/launch.py, sigkill_handler) signalled itself: it kills its processes
# ("Killing subprocess N") and says "Main process received SIGTERM, exiting" (or SIGINT: its handler's only two
# names). The same handler runs when one of its processes exited non-zero, but then it prints "... exits with return
# code = N" and exits before these words: they are always a signal from outside the job.
_DEEPSPEED_DEATH = lazy_regex(r"Main process received (?P<name>SIGTERM|SIGINT), exiting")
AGENT = "torchrun's agent"
DEEPSPEED_LAUNCHER = "DeepSpeed's launcher"


# the agent's exception named without its signal (an issue's title, a one-line paste: "...multiprocessing.api.
# SignalException"); never the "raise SignalException(...)" source line of a traceback
_BARE_SIGNAL_EXC = lazy_regex(r"\bSignalException\b(?!\()")
UNNAMED_SIGNAL = "a signal the input does not name"


@dataclass(frozen=True)
class AgentSignal:
    """The torchelastic agent's line saying it received a signal."""
    signal: str                  # "SIGHUP"
    text: str                    # the agent's line
    offset: int = 0              # where the line starts in the text
    launcher: str = AGENT        # whose line it is: torchrun's agent, or DeepSpeed's launcher


def parse_agent_death_signal(text: str) -> AgentSignal | None:
    """The first signal torchrun's agent (or DeepSpeed's launcher) says it received from outside, or None."""
    deepspeed = _DEEPSPEED_DEATH.search(text) if "Main process received SIG" in text else None
    match = _AGENT_DEATH.search(text) if "death signal" in text or "SignalException" in text else None
    if deepspeed is not None and (match is None or deepspeed.start() < match.start()):
        line_start = text.rfind("\n", 0, deepspeed.start()) + 1
        line_end = text.find("\n", deepspeed.end())
        return AgentSignal(deepspeed.group("name"),
                           text[line_start:line_end if line_end >= 0 else len(text)].strip()[:300], line_start,
                           DEEPSPEED_LAUNCHER)
    if "death signal" not in text and "SignalException" not in text:
        return None
    if match is None:
        bare = _BARE_SIGNAL_EXC.search(text)
        if bare is None:
            return None
        line_start = text.rfind("\n", 0, bare.start()) + 1
        line_end = text.find("\n", bare.end())
        return AgentSignal(UNNAMED_SIGNAL, text[line_start:line_end if line_end >= 0 else len(text)].strip()[:300],
                           line_start)
    num = match.group("num") or match.group("num2")
    name = match.group("name") or match.group("name2") or _signal_name(-int(num), None) or f"signal {num}"
    line_start = text.rfind("\n", 0, match.start()) + 1
    line_end = text.find("\n", match.end())
    return AgentSignal(name, text[line_start:line_end if line_end >= 0 else len(text)].strip()[:300], line_start)


_SPAWN_ERROR = lazy_regex(r"^\s*-- Process (\d+) terminated with the following error:")


def spawn_error_owner(line: str) -> int | None:
    """torch.multiprocessing.spawn's "-- Process 2 terminated with the following error:": the
    traceback after it is that process's (its local rank, as a rule)."""
    match = _SPAWN_ERROR.match(line)
    return int(match.group(1)) if match else None
