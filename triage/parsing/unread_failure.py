"""A failure line in words triage has no reader for: a library, launcher or runtime never seen (a new
MPI, a fabric library, a framework's own logger) that says at its error level that something failed
(``FOOLIB ERROR: registration failed``, ``FATAL: fabric init failed``, ``[E] transport: qp entered error
state``, ``abort: peer closed the channel``) or that a process died by a signal (``*** Received signal 11
***``, ``killed by signal 9``, ``terminated by signal SIGBUS``).

The last resort of an input that shows no other failure: such a line is "a failure of unknown rank",
said with what would settle it, never "nothing recognisable" nor an all-clear. It is never read where
a stronger reading exists (triage.load.logs.endings.unread_failures decides that), never from a line
that only warns or informs, and never from a metric, a test summary or a line of code.

``unread_failure(line)`` -> UnreadFailure or None. Never raises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from triage.lazy_regex import lazy_regex
from triage.parsing.metric_name import METRIC_NAME
from triage.parsing.named_failure import CODE_WORDS, FAILURE_WORDS, said_signal
from triage.parsing.quoted import is_advice

UNREAD_KIND = "unread"     # the failure_kind (triage.model.evidence.ExitInfo) of such a line read as a failure

# The line's own level says it failed: a logger's ERROR/FATAL/CRITICAL (upper case: a level, not prose), glog's
# and many C loggers' one-letter heads ("[E]", "E1127 10:00:01.123 ...", "<F>"), "fatal error", "abort:".
_LEVEL = lazy_regex(
    r"(?<![\w-])(?:ERROR|ERR|FATAL|CRITICAL|CRIT|PANIC|EMERG|SEVERE)(?![\w-])"
    # oneCCL's own level head ("2025:11:28-05:55:00:(12345) |CCL_ERROR| worker.cpp:353 ...")
    r"|\|CCL_(?:ERROR|FATAL)\|"
    r"|(?:^|\s)[\[<(](?:E|F|ERR|ERROR|FATAL|Error|Fatal)[\]>)](?=\s|:)"
    r"|^[EF]\d{4} \d\d:\d\d:\d\d"
    r"|\b[Ff]atal(?: error)?\b"
    r"|(?:^|\s)(?:abort|aborting|panic)(?::|!)"
    r"|\b(?:Aborted|Aborting)\b")
# What a system does and can fail to do ("could not open", "cannot allocate", "unable to launch", "could not be
# loaded"): an action, never a verb of knowing ("cannot tell", "could not reproduce", prose about the run)
_ACTION = (r"(?:connect|creat|open|initiali[sz]|init\b|allocat|register|attach|reach|bind|listen|resolv|find|locat|"
           r"access|start|launch|spawn|fork|exec|run\b|load|import|read|writ|mount|map\b|mmap|set ?up|get\b|obtain|"
           r"acquir|lock|send|receiv|recv|post|forward|enabl|stop|shut ?down|synchroni[sz]|sync\b|consum|handl|"
           r"recover|compil|pars|decod|deseriali[sz]|restor|sav|establish|contact|join|communicat|talk|query|"
           r"detect|determin|mov|copy|transfer|commit|restart|continu|proceed|complet|reserv|pin|lookup|look up)")
# A failure said in words after a subject: "X failed", "failed to Y", "Failed: Y", "X error: Y" (never a count:
# "3 failed", "0 errors"); or that something could not be done (_CANNOT).
_FAILED = lazy_regex(
    r"(?<!\d )\b(?:[Ff]ailed|FAILED)\b(?!\s*(?:=|:\s*0\b|\s*0\b))"
    r"|\b\w*[Ee]rror(?:\s*\(\w+\))?:\s+\S")
# A "could not" that goes on without the thing: a fallback, a default, a step skipped, an optional part
_SOFT = lazy_regex(r"\b(?:using (?:the )?default|defaulting to|default to|skipping|skipped|will use|instead|optional|"
                   r"not required|disabled|disabling|continuing without|proceeding without)\b", re.IGNORECASE)
_CANNOT = lazy_regex(r"(?i:\b(?:could not|cannot|can't|can not|couldn't|unable to) (?:be )?" + _ACTION + r")")
# glog's and absl's error and fatal heads ("E1127 10:00:01.123 4242 file.cc:88] ...", absl's "E0000 00:00:..."): the
# level is the head's first letter, whatever the line's words (the reader removes the head as a timestamp and passes
# what it was: triage.parsing.textclean); a large log's marker pass looks for it too (triage.load.logs.large:
# a pattern of this fixed width)
GLOG_HEAD = r"[EF][01][0-9][0-3][0-9] [0-2][0-9]:[0-5][0-9]:[0-5][0-9]"   # (month, day, hour: the digits they take)
GLOG_HEAD_WIDTH = 14
_GLOG_ERROR = lazy_regex(r"^\s*" + GLOG_HEAD)
# The words a line that this reader reads must hold (caseless), the glog head apart: the reader's line gate passes
# only lines holding one (triage.load.logs.text), a superset of named_failure's
# ("CRIT" apart, in capitals: the level _LEVEL reads, CRIT or CRITICAL, never a word of prose or progress; caseless,
# "crit" was in every line of an actor-critic's training, "critic_loss", and of "criterion", which a large log's pass
# then marked: UNREAD_LITERALS, case-sensitive words of the same gate)
UNREAD_LITERALS = ("CRIT", "SIG")
# the fault signals' names _SIGNAL_DEATH reads in any case ("sigsegv" too; in capitals the literal "SIG" passes them)
SIGNAL_NAMES = ("sigsegv", "sigabrt", "sigbus", "sigfpe", "sigill", "sigkill", "sigtrap", "sigsys", "sigxcpu")
UNREAD_WORDS = (*FAILURE_WORDS, *SIGNAL_NAMES, "panic", "severe", "emerg", "could not", "couldn't", "cannot", "can't",
                "can not", "unable to", "[e]", "<e>", "(e)", "[f]", "<f>", "(f)", "[err]", "<err>")


# A process's exit with a code other than 0, in any words ("exited with code 1", "exit status 2", "returned exit code
# -11", "exitcode: 137"), a sentence's full stop after it or not ("Program exited with code 134.", a runner's end of
# the program it ran): never a decimal ("exit code 1.5")
_EXITED = lazy_regex(CODE_WORDS + r"\s*[:=]?\s*\(?-?[1-9]\d{0,2}\b(?!\.?\d)", re.IGNORECASE)
# A process's own death by a signal, in any runtime's words (the number or the name).
_SIGNAL_DEATH = lazy_regex(
    r"\b(?:received|caught|got|terminated (?:with|by)|killed (?:by|with)|exited (?:on|with|due to)|"
    r"died (?:of|from|with|by)|due to|on|by) (?:the |a |fatal )?signal\s*[:=]?\s*(?P<number>\d{1,2}|SIG[A-Z]{2,6})\b"
    r"|\*\*\* (?:Received|Caught|Got) signal (?P<star>\d{1,2}|SIG[A-Z]{2,6})\b"
    r"|(?<![\w/-])(?P<name>SIG(?:SEGV|ABRT|BUS|FPE|ILL|KILL|TRAP|SYS|XCPU))\b"
    r"|\b(?P<words>Segmentation fault|Bus error|Illegal instruction|Floating point exception)\b", re.IGNORECASE)
_NAMES = {"segmentation fault": "SIGSEGV", "bus error": "SIGBUS", "illegal instruction": "SIGILL",
          "floating point exception": "SIGFPE"}
_TEARDOWN = ("SIGTERM", "SIGINT", "SIGHUP", "SIGCHLD", "SIGPIPE", "SIGUSR1", "SIGUSR2")   # a stop, not a fault
_NUMBERS = {4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL", 11: "SIGSEGV"}
# A shell's trace of a command it runs (bash/sh/ksh/zsh `set -x`: PS4, "+ " by default, its first character repeated
# once per level of nesting: "+ mpirun -np 4 ./a.out", "++ hostname", "+ echo 'ERROR: ...'"; the PS4 of bash's
# debugging idiom, a script's name and line: "+(train.sh:12): main(): mpirun ...", "+train.sh:12: mpirun ...",
# "++/opt/job.sh:40:main: ..."; zsh's default "+%N:%i> ": "+train.zsh:12> mpirun ..."): a command, never its output
# nor a cause
_SCRIPT = r"[\w./~-]*[A-Za-z_][\w./~-]*"      # (a script's path or name: a letter in it, no time "+12:30: ")
SHELL_TRACE_TEXT = (r"^\s*\+{1,9}(?: (?=\S)|\(" + _SCRIPT + r":\d+\): ?(?=\S)|"
                    + _SCRIPT + r":\d+(?::[\w.-]*)?(?::|>) ?(?=\S))")
SHELL_TRACE = lazy_regex(SHELL_TRACE_TEXT)
# A line that says the program goes on past what it reports: a retry it makes itself, a fallback, an error it ignores, a
# record or step it skips ("..., retrying in 5s", "will retry", "retry 2/5", "falling back to gloo", "ignoring it",
# "..., continuing", "continuing without X", "proceeding without X", "skipping"), never the negation of one ("not
# continuing"; "cannot continue", "retry limit exceeded" hold none of its words). One list: this reader's and a
# program's own fatal line's (triage.parsing.fatal_ending)
GOES_ON = lazy_regex(r"(?<!not )(?<!n't )\b(?:retry(?:ing)?(?! (?:limit|count|budget)| *(?:attempts? )?(?:exceeded|"
                     r"exhausted))|will retry|trying again|falling back|fall back|ignor(?:e|ed|ing)|continuing|"
                     r"proceeding without|skipping)\b", re.IGNORECASE)
# the note of such a line (gone_on_failure), which an all-clear quotes
GONE_ON = "a failure line whose own words say the program goes on past it"
# Not a failure, whatever its words: a shell's trace of a command; a lower level (the level token comes first), a
# metric or count of errors, a test summary, a line of code or of a help text, a handler being installed (and a line
# that says the program goes on past it: GOES_ON, a note).
_NOT_FAILURE = lazy_regex(
    SHELL_TRACE_TEXT + "|"
    r"^\s*(?:\[?\s*(?:WARN|WARNING|INFO|DEBUG|TRACE|NOTICE|VERBOSE)\b|[WID]\d{4} \d\d:\d\d|\w*Warning\b)"
    r"|\b(?:NCCL INFO|NCCL WARN)\b"
    # (a metric's "error = 0.12", never a head "== Error ==": SPAdes' "== Error ==  system call for: ...")
    r"|\b(?:error|loss|err)[ _-]?(?:rate|=(?!=)|:\s*[\d.]+\s*$)"
    # a metric whose name ends in Error, logged with its value ("top1.Error: 29.4%", "val.MeanSquaredError: 1.2e-03")
    r"|(?<![\w.])" + METRIC_NAME + r":\s*[-+]?\d*\.\d+(?:e[-+]?\d+)?\s*%?\s*$"
    r"|\b(?:no|zero|0|without) errors?\b|\berrors?\s*[:=]\s*0\b"
    # (a summary's field with nothing in it: "Fatal error:   none", "n/a")
    r"|\b(?:errors?|failures?)\s*[:=]\s*(?:none|n/a)\s*\.?\s*$"
    # (a count, not the seconds of a time stamp before a level: "14:21:52 ERROR")
    r"|(?<![:.,\d])\b\d+ (?:passed|failed|errors?)\b|\bPASSED\b"
    r"|^\s*(?:File \"|frame #|#\d+ |at \S+\(|def |if |elif |except\b|raise |try:|catch\b|return |assert )"
    r"|\b(?:error_file|errorfile|on_error|error_handler|ErrorHandler|set_error)\b"
    # a setting of a log level, and the command line that started the job (its flags are no failure)
    r"|\b(?:log[_-]?level|verbosity|level)\s*[:=]?\s*(?:ERROR|FATAL|CRITICAL)\b"
    r"|^(?:[$#>] )?(?:\w+=\S+\s+)*(?:python[\d.]*|torchrun|srun|mpirun|mpiexec|deepspeed|accelerate|bash|sh|sbatch)\s"
    r"|\bsignal handler\b|\b(?:register|install)(?:ed|ing)? .*signal"
    # a plugin registered twice (TensorFlow's "Unable to register cuDNN factory: ... when one has already been
    # registered"): the first one serves
    r"|\balready (?:been )?registered\b",
    re.IGNORECASE)
# The job said it ended well: a generic failure line before such a line is no failure of the run.
# (a test harness's summary that every test passed, ctest's "100% tests passed, 0 tests failed out of 12", Catch2's "All
# tests passed (312 assertions in 18 test cases)", Chapel's "[Summary: #Successes = 2 | #Failures = 0 | ...]", pytest's
# "=== 12 passed, 1 skipped in 3.02s ===", is one too)
SUCCESS = lazy_regex(r"\b(?:completed successfully|finished successfully|succeeded|training (?:is )?(?:done|complete|"
                     r"completed|finished)|all tests passed|(?:exited|finished|ended) with (?:exit )?code 0|"
                     r"exit(?:ed)? status 0)\b|"
                     r"(?<![\d.])100% tests passed, 0 tests failed\b|"
                     # Chapel's start_test summary, pytest's of a run with no failure
                     r"\[Summary: #Successes = \d+ \| #Failures = 0\b|"
                     r"=+ \d+ passed(?:, \d+ (?:skipped|deselected|xfailed|xpassed|warnings?))* in [\d.]+s\b",
                     re.IGNORECASE)


# a Python exception's line under its module's dotted path, whatever its class is called (Parsl's
# "parsl.executors.high_throughput.interchange.ManagerLost: Task failure due to loss of Manager b'..' on host ca024",
# Dask's "distributed.scheduler.KilledWorker: ..."): what a traceback ends with, the program's own failure (the line
# gate has passed a failure word on it)
_RAISED = lazy_regex(r"^\s*(?:[a-z_]\w*\.){1,8}[A-Z]\w*:\s+\S")


@dataclass(frozen=True)
class UnreadFailure:
    """A failure line that no finer reader took, with what it says of a signal and a host."""
    text: str                    # the line, trimmed
    signal: str | None = None    # the signal it says a process died by ("SIGSEGV"), if any
    host: str | None = None      # the node the line says it happened on ("... on host nid00012 exited ..."), if any


# the node a line says the failure happened on: "application 1234 on host nid00012 exited with code 139" (HPE PALS),
# "... on node gpu-a07 ..."; a name with a letter first and a digit in it (MPICH's "Abort(1) on node 2" numbers a
# process, not a node)
_ON_HOST = lazy_regex(r"\bon (?:host|node) (?P<host>(?=[\w.-]*\d)[A-Za-z][\w-]*(?:\.[A-Za-z][\w-]*)*)\b")


def unread_failure(line: str, stamp: str | None = None) -> UnreadFailure | None:
    """The line as a failure in words triage has no reader for, or None (``stamp``: the head the reader removed from
    it, whose glog level may say it is an error); None too where its words say the program goes on past it
    (GOES_ON: gone_on_failure's)."""
    found = _failure_line(line, stamp)
    return None if found is None or GOES_ON.search(found.text) is not None else found


def gone_on_failure(line: str, stamp: str | None = None) -> str | None:
    """The line, where it is a failure in words of no reader whose own words say the program went on past it
    (``ERROR: record 4711 is corrupt, skipping``, ``... failed, continuing``): no failure of the run, a note. Not a
    retry (``..., retrying``): a retry that never ends is how a hung job's log reads, no sign that it went on."""
    found = _failure_line(line, stamp)
    said = GOES_ON.search(found.text) if found is not None else None
    if found is None or said is None or said.group(0).lower().startswith(("retr", "will retry", "trying again")):
        return None
    return found.text


# a worker's index ("dataloader worker 3 failed to prefetch", "DataLoader worker process 2"): the number names the
# worker, never a count of failures ("3 failed", a test summary's)
_WORKER_INDEX = lazy_regex(r"\b([Ww]orker|WORKER)( process)?\s*#?\s*\d{1,3}\b")


def _failure_line(line: str, stamp: str | None) -> UnreadFailure | None:
    line = line.strip()
    text = _WORKER_INDEX.sub(r"\1\2 N", line) if "orker" in line or "ORKER" in line else line
    low = text.lower()
    head = glog_error(text) or (stamp is not None and glog_error(stamp))
    if not head and not any(word in low for word in UNREAD_WORDS) and not any(word in text for word in UNREAD_LITERALS):
        return None        # (the reader's line gate passes only lines holding one: the same answer without it)
    if not text or len(text) > 2000 or _NOT_FAILURE.search(text) is not None or is_advice(text):
        return None        # (is_advice: a troubleshooting bullet's supposed failure, triage.parsing.quoted)
    on = _ON_HOST.search(text)
    host = on.group("host") if on is not None else None
    death = _SIGNAL_DEATH.search(text)
    if death is not None:
        sig = _signal_name(death)
        if sig is not None:
            return UnreadFailure(line[:400], sig, host)
    if _EXITED.search(text) is not None:
        sig = said_signal(text)       # (an exit's code that stands for a signal: -N, 128+N)
        if sig in _TEARDOWN:
            return None               # a stop from outside, not a failure of the job's own
        return UnreadFailure(line[:400], sig if sig is not None and sig in _NUMBERS.values() else None, host)
    said = (head or _LEVEL.search(text) is not None or _FAILED.search(text) is not None
            or _RAISED.match(text) is not None)
    if not said and (_CANNOT.search(text) is None or _SOFT.search(text) is not None):
        return None
    return UnreadFailure(line[:400], host=host)


def glog_error(text: str) -> bool:
    """The text opens with glog's or absl's error or fatal head (``E1127 10:00:01.123 ...``)."""
    return text[:1] in ("E", "F", " ") and _GLOG_ERROR.match(text) is not None


def _signal_name(match: re.Match[str]) -> str | None:
    said = match.group("number") or match.group("star") or match.group("name")
    if said is not None:
        if said.upper().startswith("SIG"):
            return None if said.upper() in _TEARDOWN else said.upper()
        return _NUMBERS.get(int(said))
    return _NAMES.get((match.group("words") or "").lower())
