"""A line in plain words that names a rank (or worker, process, task) and a failure, whatever the
launcher: ``rank 3 died from signal 11``, ``Worker 2 was killed``, ``[1,5]<stderr>: Segmentation fault``,
``node07:3 exit status 137``, ``RANK=4 failed with exit code 1``. The last resort of a log that nothing
else in it ties to a rank: such text is evidence, never "nothing recognisable".

``named_failure(line)`` -> (rank, CrashLine) or None. Never raises.
"""

from __future__ import annotations

import re
from dataclasses import replace

from triage.lazy_regex import lazy_regex
from triage.parsing.crashlog import CrashLine, CrashLineKind, parse_crash_line
from triage.parsing.quoted import in_quoted_prose, is_advice
from triage.parsing.rank_words import named_rank, rank_at

# Who: the first rank-naming shape of the line (triage.parsing.rank_words: one table of them all).
# What: a failure word.
# srun's record of tasks it ended itself ("srun: error: n3: task 2: Terminated", "...: tasks 0-57,59-63: Terminated")
_SRUN_TERMINATED = lazy_regex(r"srun: error: (?:[\w.-]+: )?tasks? [\d,-]+: Terminated\s*$")
# srun's wait timer's state line of tasks that ended with code 0 (src/srun/task_state.c: "srun: StepId=12.0 tasks 0,3:
# exited", under srun's name or Tianhe's "yhrun"): a clean end, read beside the program's own stop by
# triage.parsing.torchelastic (its "exited abnormally" stays a failure here)
_SRUN_EXITED = lazy_regex(r"(?:srun|yhrun): (?:StepId=\S+ )?tasks? [\d,-]+: exited\s*$")
# (a signal's name in capitals alone, as every runtime prints it: caseless, "sigma", "sigmoid" and "signature" were
# failure words, and a rank's progress line "[rank0]: step 10 loss 0.52 sigma 0.31" an exception)
_WHAT = lazy_regex(
    r"\b(?:error|exception|died|dead|killed|crash(?:ed)?|signal|(?-i:SIG[A-Z]{2,6})|exit ?code|exit status|exited|"
    r"failed|failure|time[ds]? ?out|abort(?:ed)?|core dumped|OOM|out of memory|segmentation fault|"
    r"bus error|illegal|fatal|terminated)\b", re.IGNORECASE)
# a Python exception's name before its message ("ValueError: ...", "torch.OutOfMemoryError: ..."): a failure word
# (every match holds "error" or "exception": the reader's gate passes its line)
_EXC_NAME = lazy_regex(r"\b[A-Z]\w*(?:Error|Exception):")
# a traceback's frame, or a line of its code, after a head ("worker 3 -   File ...", "rank 3 |     main()")
# oneCCL's own log lines ("2025:11:28-05:55:00:(12345) |CCL_ERROR| worker.cpp:353 ccl_worker_func: worker 0 caught
# internal exception: ..."): its "worker N" is a progress thread of that process, numbered by it, never a rank
_CCL_WORKER = lazy_regex(r"\b[Ww]orker\s*#?\s*\d+")
_FRAME_UNDER_HEAD = lazy_regex(r'\bFile "[^"]*", line \d+|[-|:>\]]\s{3,}\S')
# a numbered native stack's frame ("1: 0xb09c10 node::Abort() [node]", Node's and V8's; " 3: 00007FF655E1542D ...",
# Windows'): the frame's number is its place in the stack (a line whose "N: " were srun's label comes here without it),
# its function's name no process's failure
_NATIVE_FRAME = lazy_regex(r"\d{1,3}: (?:0x[0-9A-Fa-f]{4,16}|[0-9A-Fa-f]{16}) ")
# Every match of _WHAT holds one of these (caseless): a line holding none names no failure, and its reader
# need not ask (triage.load.logs.text; tests/parsing/test_named_failure_gate.py holds the two together)
# (_WHAT's time[ds]? ?out is these words, not "time": a word every progress line of a simulation code, Megatron,
# mmdetection or OpenFOAM holds ("Time: 0.1234", "elapsed time per iteration", "time: 0.512, data_time: 0.021", "Time
# = 0.123"), which a large log's pass would mark on every line: triage.load.logs.large looks for them as one needle)
TIMEOUT_WORDS = ("timeout", "timedout", "timesout", "time out", "timed out", "times out")
# (and "signal", not "sig": _WHAT's signal names are in capitals, SIG[A-Z]{2,6}, which the line gate's literal "SIG"
# (crashlog's marker) passes; caseless, "sig" was in "sigma", "assign", "design" and "signature")
FAILURE_WORDS = ("error", "exception", "died", "dead", "killed", "crash", "signal", "exit", "failed", "failure",
                 *TIMEOUT_WORDS, "abort", "core dumped", "oom", "out of memory", "segmentation fault", "bus error",
                 "illegal", "fatal", "terminated")
# an exit's code in the words launchers and shells use ("exit code -11", "exited with code 137", "return code
# -6", "exit status 139", "exitcode: -9"): -N is Python's subprocess convention and 128+N a shell's, both signal N
# (Nextflow's in parentheses: "Process `align (3)` terminated with an error exit status (137)"; Python's
# CalledProcessError, "Command '[...]' returned non-zero exit status -9."; a Python pipeline driver's report of its
# child's return code, SPAdes' "system call for: ... finished abnormally, OS return value: -9")
CODE_WORDS = (r"\b(?:(?:exit(?:ed)?|return(?:ed)?)(?: with)?(?: an?)?(?: non-zero)? ?(?:exit ?)?"
              r"(?:code|status|exitcode|returncode)(?: code)?(?: of)?|OS return value)")
_CODE = CODE_WORDS + r"\s*[:=]?\s*\(?"
# (SIGCHLD names a handler that was told a child ended, never the signal that ended it: ALPS's "_pmiu_daemon(SIGCHLD):
# ... PE RANK 7 exit signal Killed")
_SIGNAL = lazy_regex(r"\b((?-i:SIG(?!CHLD\b)[A-Z]{2,6}))\b|\bsignal:?\s*(\d{1,2})\b|" + _CODE + r"-(\d{1,2})\b|"
                     + _CODE + r"(1[2-5]\d)\b", re.IGNORECASE)
# an exit that says it succeeded ("exited with exit code 0", "exitcode: 0", "exit status 0") is no failure
_CLEAN_EXIT = lazy_regex(r"\b(?:exited\b(?: with)?(?: exit)?|exit)\s*(?:code|status)?\s*[:=]?\s*0\b(?![.\d])",
                         re.IGNORECASE)
# an exit the line gives a plain code for ("User process 'Rank 3' exited with status code 1"): the process exited so,
# whatever words its message quotes after it ("... NCCL communicator was aborted", "... was killed")
_PLAIN_EXIT = lazy_regex(_CODE + r"(?:[1-9]|[1-9]\d|1[01]\d|12[0-7])\b(?!\.?\d)", re.IGNORECASE)
_SIGNAL_WORDS = (("segmentation fault", "SIGSEGV"), ("bus error", "SIGBUS"), ("illegal instruction", "SIGILL"),
                 ("core dumped", "SIGABRT"), ("abort", "SIGABRT"), ("killed", "SIGKILL"))
# a program's own abort message at the head of its line ("ABORT: get_file_times(6)", "abort: bad mesh", "ABORTING:
# ..."): the program's words before it exits (an MPI_Abort, a stop), not the abort() that raises SIGABRT, which a
# signal, a core dump or "Aborted" would say
_ABORT_HEAD = lazy_regex(r"^\W*(?:ABORT(?:ING)?|[Aa]bort(?:ing)?)\b\s*[:!-]")
_NAMES = {4: "SIGILL", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL", 11: "SIGSEGV", 15: "SIGTERM"}
_TEARDOWN = ("SIGTERM", "SIGINT", "SIGHUP")


def said_signal(text: str) -> str | None:
    """The signal a failure line says a process died by, by name, number or exit code (-N, 128+N), or by words."""
    return _signal(text)


def _signal(text: str) -> str | None:
    match = _SIGNAL.search(text)
    if match is not None:
        if match.group(1):
            return match.group(1)
        number = int(match.group(2) or match.group(3) or 0) or int(match.group(4) or 0) - 128
        if number in _NAMES:
            return _NAMES[number]
    if _PLAIN_EXIT.search(text):
        return None
    low = text.lower()
    head = _ABORT_HEAD.match(text) is not None and "aborted" not in low
    return next((sig for words, sig in _SIGNAL_WORDS if words in low and not (head and words == "abort")), None)


def named_failure(line: str, prefix_rank: int | None = None) -> tuple[int, CrashLine] | None:
    """The rank a plain-words failure line names (``prefix_rank``: the rank its launcher prefix named,
    which wins), and the failure as a CrashLine."""
    text = line.strip()
    if not text or len(text) > 2000 or "NCCL INFO" in text:
        return None            # (NCCL's INFO lines are its set-up notes: "Failed to initialize NET plugin IB")
    said_failed = _WHAT.search(_CLEAN_EXIT.sub("", text)) is not None
    if not said_failed and _EXC_NAME.search(text) is None:
        return None
    if is_advice(text):
        return None            # a troubleshooting bullet's supposed failure ("- if you see `NCCL error` on rank 3, set
        #                        NCCL_DEBUG=INFO"; triage.parsing.quoted): none happened
    if "CANCELLED AT" in text:
        return None            # slurmstepd's cancellation, read by triage.parsing.frameworks (the srun label before
        #                        it is not the rank it stopped)
    if "exit-timeout=" in text and "has expired" in text:
        return None            # Flux's job shell ending the job after a task's (or a node shell's) end, read by
        #                        triage.parsing.frameworks (a shell's rank there is no task's)
    if _SRUN_TERMINATED.search(text) is not None:
        return None            # srun's list of the tasks it terminated when the step ended: their end, not a failure
    if _SRUN_EXITED.search(text) is not None:
        return None            # srun's wait timer's tasks that exited with code 0: no failure in these words
    if _NATIVE_FRAME.match(text) is not None:
        return None            # a numbered native stack's frame: the process's fatal line above it is its failure
    if _FRAME_UNDER_HEAD.search(text) is not None:
        return None            # a traceback's frame or its code under a logger's head that repeats on every line
        #                        ("... - ERROR - worker 3 -   File "x.py", line 3"): the exception line is the failure
    if text.endswith("Traceback (most recent call last):"):
        return None            # a logger's head of a traceback (SGLang's "Scheduler hit an exception: Traceback
        #                        ..."): the traceback's exception line is the failure, not these words
    rank = prefix_rank if prefix_rank is not None else named_rank(_CCL_WORKER.sub("", text) if "|CCL_" in text
                                                                   else text)
    if rank is None:
        return None
    if not said_failed and (prefix_rank is not None or (at := rank_at(text)) is None or (exc := _EXC_NAME.search(text))
                            is None or exc.start() < at):
        return None            # an exception's name is the failure only after the rank that raised it ("worker 3 -
        #                        ValueError: ..."): a rank its message names ("but Rank 2 has 128 params") raised none
    known = parse_crash_line(text)
    sig = (known.signal if known is not None else None) or _signal(text)
    if sig in _TEARDOWN:
        return None            # a launcher's teardown ("Sending process 165 closing signal SIGTERM"): not a failure
    # the rank's words, or every failure word of the line, inside a quote or a code span in the writer's own sentence
    # (a FAQ's 'the message "... (rank=0)" means ...', a how-to's "* if you see `NCCL error` on rank 3, set ...", a
    # report's "- rank 2 prints `RuntimeError: ...` and stops"; triage.parsing.quoted): quoted, a failure only where
    # the job did not go on past it (CrashLine.quoted)
    quoted = prefix_rank is None and _quoted(text)
    if known is not None:
        return rank, replace(known, quoted=True) if quoted else known
    if sig is not None:
        return rank, CrashLine(CrashLineKind.FATAL_SIGNAL, text[:400], signal=sig, quoted=quoted)
    timeout = re.search(r"time[ds]? ?out", text, re.IGNORECASE) is not None
    return rank, CrashLine(CrashLineKind.EXCEPTION, text[:400], collateral=timeout, quoted=quoted)


def _quoted(text: str) -> bool:
    """The line's rank words, or every failure word it holds, sit in a quote of the writer's own sentence."""
    if '"' not in text and "'" not in text and "`" not in text and "\u201c" not in text:
        return False
    if (at := rank_at(text)) is not None and in_quoted_prose(text, at):
        return True
    words = [match.start() for regex in (_WHAT, _EXC_NAME) for match in regex.finditer(text)]
    return bool(words) and all(in_quoted_prose(text, word) for word in words)
