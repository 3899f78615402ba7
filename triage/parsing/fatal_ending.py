"""A program's own fatal ending, read as one class (session 53): the line a scientific code, a runtime or libc prints
as its process's last words, each in its own spelling but of one shape: a fatal word set at the line's start (or after
the program's own name or tag), with nothing but the process's teardown after it (the launcher's record of its end,
the MPI runtime's abort notice, a backtrace), or the launcher's record of that process's end right after it:

- ``FATAL ERROR: <message>`` (NAMD's NAMD_die, after Colvars' ``colvars: Error: ...``), ``CHARM++ FATAL ERROR: [3]
  Assertion "..." failed in file F line N.`` (Charm++'s CmiAbort; ``[N]`` its PE), ``prog: FATAL ERROR: ...``,
  ``Fatal error: <message>`` (the message on the same line; GROMACS's bare ``Fatal error:`` block is solver_errors'),
  ``Fatal Error: <message>``; an error of the program: an exception of that process;
- gfortran's ``ERROR STOP n`` and ``STOP n`` with a code other than 0 (libgfortran's stop.c; ``ERROR STOP`` with words
  or none: code 1): the program's own failing end;
- ``Exiting due to signal N with siginfo 0x... and payload 0x...`` (Grappa's failure handler, which then exits with
  code 1): the process's death by signal N;
- a program's own error head in its name, in capitals, ``PISM ERROR: <message>`` (PISM's verbPrintf or PetscPrintf
  then PISMEnd), with the message's indented continuation lines after it (the program's own layout of a long message),
  as its last words; an error of the program: an exception of that process. Not an MPI runtime's record of
  a rank (HPE MPT's ``MPT ERROR: Rank 20(g:20) received signal SIGSEGV(11).``, PMGR's ``rank 0 on cab1``): a message
  that names a rank or a signal is its own reader's, as are Open MPI's and PMIx's error log (``PMIX ERROR:
  OUT-OF-RESOURCE in file F at line N``) and a library's stream of such lines, one head on each (PETSc's ``[0]PETSC
  ERROR: ...``); and where a signal's record follows the block (``*** Received signal 11 ***``), the signal is the
  failure;
- glibc's assert line, ``prog: path/file.c:123: func: Assertion `expr' failed.`` (also with a path a reporter
  shortened, ``/.../file.c``), musl's ``Assertion failed: expr (file: func: line)`` and the MS C runtime's
  ``Assertion failed: expr, file F, line N``: the process aborts, SIGABRT.

The rank is the one the line's own tag names (``[3]`` before or right after the fatal word), else the line's prefix's
or the MPI abort record's after it (solver_errors decides), else the one srun's record of a single task's end right
after it names (``srun: error: n25: task 0: Exited with exit code 1``: that task's, on that node). A Charm++ PE in an
SMP or multicore build (its start-up line says so) is a worker thread, no rank.

Not read: the words quoted in a sentence (triage.parsing.quoted), a setting or a count that holds them (``fatal_errors
= 0``: the fatal word must stand as the line's head, with its colon), a field of a run's summary that says there was
none (``Fatal error:   none``, ``FATAL ERROR: 0``), a message that says the program goes on (``... continuing without
it``, ``..., retrying``, ``skipping``, ``falling back``: the words of unread_failure's fallbacks), a compiler's
``file.c:1:10: fatal error:``, and a line after which the process went on (more than a few lines of its own output
after it; progress at any distance is solver_errors' test).

``endings(text)`` -> [(rank or None, signal or None, host or None, words, start, end)] in text order. Never raises.
"""

from __future__ import annotations

import re

from triage.lazy_regex import lazy_regex
from triage.parsing.mpi_errors import MPICH_ABORT_HEAD
from triage.parsing.quoted import in_quoted_prose
from triage.parsing.regex_gate import finditer
from triage.parsing.unread_failure import GOES_ON

MARKERS = ("FATAL ERROR: ", "Fatal error: ", "Fatal Error: ", "Exiting due to signal ", "' failed.",
           "Assertion failed: ", "STOP ", " ERROR: ")

_LEAD = r"^[ \t>*`]*"
# (the program's own tag before it: its name and a colon, "NAMD:", "prog:", or Charm++'s "CHARM++"; a rank's "[3] ")
# (a "[N] " before it, a rank's tag or a viewer's line number, is its line's prefix: solver_errors' rank_at reads it)
_TAG = r"(?:\[\d{1,7}\][ \t]*)?(?:(?P<prog>[A-Za-z][\w.+-]{0,30})(?::[ \t]+|[ \t]+(?=FATAL)))?"
_FATAL = lazy_regex(_LEAD + _TAG + r"(?P<word>FATAL ERROR|Fatal [Ee]rror):[ \t]*(?:\[(?P<pe>\d{1,7})\][ \t]*)?"
                    r"(?P<what>\S[^\n]*?)[ \t*`]*$", re.MULTILINE)
# a program's own error head in its name, in capitals ("PISM ERROR: Ice thickness exceeds ..."), and the message's
# continuation lines, indented, after it
_PROG_ERROR = lazy_regex(_LEAD + r"(?:\[\d{1,7}\][ \t]*)?(?P<prog>[A-Z][A-Z0-9_+-]{1,20}) ERROR:[ \t]*"
                         r"(?P<what>\S[^\n]*?)[ \t*`]*(?P<more>(?:\n[ \t]{2,}\S[^\n]*?)*)[ \t]*$", re.MULTILINE)
# a signal's record after the block (a handler's "*** Received signal 11 ***", the shell's "Segmentation fault (core
# dumped)"): the process died of it, the error line before it no end of its own
_SIGNAL_AFTER = lazy_regex(r"(?i)\bsignal\b|\bSIG[A-Z]{2,}\b|Segmentation fault|Bus error|Illegal instruction|"
                           r"Floating point exception|core dumped|^[ \t>*`]*Aborted\b", re.MULTILINE)
# (an MPI runtime's or launcher's record of a rank, or of a signal; Open MPI's, ORTE's and PMIx's error log, "PMIX
# ERROR: OUT-OF-RESOURCE in file dstore_base.c at line 693": their own readers')
_RUNTIME_RECORD = lazy_regex(r"\b[Rr]ank \d|\bSIG[A-Z]{2,}|\b[Ss]ignal\b|\bin file \S+ at line \d+")
_GRAPPA = lazy_regex(_LEAD + r"(?:\[\d{1,7}\][ \t]*)?Exiting due to signal (?P<num>\d{1,2}) with siginfo 0x[0-9a-fA-F]+"
                     r"(?: and payload 0x[0-9a-fA-F]+)?[ \t*`]*$", re.MULTILINE)
# glibc's __assert_fail: "%s%s%s:%u: %s%sAssertion `%s' failed.\n" (the program's name and ": " first, the function's
# name and ": " where known); newer glibc quotes with "'...'" both sides
_ASSERT = lazy_regex(_LEAD + r"(?:\[\d{1,7}\][ \t]*)?(?:(?P<prog>[\w.+-]{1,60}): )?(?P<file>[^\s:`']{1,300}):"
                     r"(?P<line>\d+): "
                     r"(?:(?P<func>[^\n]{1,300}?): )?Assertion [`'](?P<expr>[^\n]{1,400}?)' failed\.[ \t*`]*$",
                     re.MULTILINE)
# musl's __assert_fail: "Assertion failed: %s (%s: %s: %d)\n" (expr, file, func, line); the MS C runtime's _assert:
# "Assertion failed: %s, file %s, line %d\n" (then abort(): SIGABRT; MSVC's exit code 3)
_ASSERT_OTHER = lazy_regex(_LEAD + r"(?:\[\d{1,7}\][ \t]*)?Assertion failed: (?P<expr>[^\n]{1,400}?)"
                           r"(?: \((?P<mfile>[^\s:()]{1,300}): (?P<mfunc>[^\n]{1,300}?): (?P<mline>\d+)\)"
                           r"|, file (?P<wfile>[^\n]{1,300}?), line (?P<wline>\d+))[ \t*`]*$", re.MULTILINE)
# gfortran's STOP and ERROR STOP with a code (libgfortran's stop.c: "STOP %d", "ERROR STOP %d", then exit with that
# code; "ERROR STOP" with a string or none: exit code 1): a code other than 0 is the program's own failing end
_STOP = lazy_regex(_LEAD + r"(?:\[\d{1,7}\][ \t]*)?(?P<error>ERROR )?STOP(?: (?P<code>-?\d{1,9})|(?(error)"
                   r"(?: (?P<words>\S[^\n]*?))?|(?!)))[ \t*`]*$", re.MULTILINE)
# a CUDA kernel's assert ("IndexKernel.cu:92: operator(): block: [..], thread: [..] Assertion ..."): crashlog's (a
# .cu file's host code asserts through glibc, headed by the program's name, with no block nor thread: this module's)
_KERNEL_FILE = lazy_regex(r"\.cuh?$")
# srun's record of a single task's end right after it: that task, on that node
_SRUN_TASK = lazy_regex(r"^[ \t>*`]*srun: error: (?P<host>[\w.-]+): task (?P<rank>\d{1,7}): (?:Exited with exit code "
                        r"\d+|Aborted|Segmentation fault|Killed)", re.MULTILINE)
# the teardown a process's end leaves after its last words: launcher and MPI runtime records, a backtrace, a shell's
# report, rules and notes of those records
_TEARDOWN = lazy_regex(
    r"^[ \t>*`]*(?:$|srun: |slurmstepd|mpirun|mpiexec|prterun|orterun|MPI_ABORT|NOTE: |You may or may not|"
    r"with errorcode|application called MPI_Abort|Abort\(|" + MPICH_ABORT_HEAD
    + r"|-{5,}|={5,}|\*{3}|#\d+ |\[[\w.-]*:\d+\]|Primary job|"
    r"Aborted|Segmentation fault|Killed|Bus error|Stack trace|Backtrace|Traceback|Charm\+\+ fatal|"
    r"[-=]+ ?Processor \d+ Exiting|Reason: |exit code|Exit code|Process name:|Local host:|Job |"
    r"(?:FATAL ERROR|Fatal error|CHARM\+\+ FATAL ERROR):|\w[\w.-]* exited|forrtl: (?:severe|error) \(\d+\): )")
# a record after it that the process, or the step that ran it, ended well (an exit code or status 0: "Process finished
# with exit code 0", "exited with code 0", "Exit code: 0", "exit status 0"; a job or step that completed, finished or
# succeeded, with no word of a failure on its line: "Step 3 completed", LSF's "Successfully completed."; never a
# scheduler's bare "Job 4242 completed", _JOB_ENDED): the fatal line was not the run's end (a step retried after it),
# whatever teardown-like words the record holds
_EXIT_ZERO = lazy_regex(r"(?i)\b(?:exit(?:ed)?|return(?:ed)?|finished|ended)?(?: with)?(?: an?)? ?(?:exit ?)?"
                        r"(?:code|status|exitcode|returncode|exit_status)\s*[:=]?\s*\(?0\b(?![.\d])")
_COMPLETED = lazy_regex(r"(?i)\b(?:completed|finished|succeeded)\b")
# a scheduler's record that a job ended, of no word of how ("Job 4242 completed", "Job 4242.pbs01 finished"): neutral
# teardown, as a launcher's record of the end; a word of success or an exit code 0 on it still says it ended well
_JOB_ENDED = lazy_regex(r"[ \t>*`]*Job [\w.\[\]-]+ (?:has )?(?:completed|finished|ended)[ \t.]*$")
_NOT_WELL = lazy_regex(r"(?i)\b(?:error|fail|abnormal|abort|signal|killed|cancel|timeout|non-?zero)|"
                       r"\b(?:code|status)\s*[:=]?\s*\(?-?[1-9]")
_TAIL = 4                # (the most lines of the process's own output after its last words: a summary, a timer)
_SMP = lazy_regex(r"Charm\+\+> Running in (?:SMP mode\b[^\n]*?(?P<workers>\d+) worker threads|"
                  r"Multicore mode: (?P<threads>\d+) threads)")
# a signal handler's or the shell's record of the abort after an assert line (Open MPI's "[host:pid] Signal: Aborted
# (6)", Legion's "Legion process received signal 6: Aborted", the shell's "Aborted (core dumped)")
_SIGNAL_TOLD = lazy_regex(r"(?i)\bsignal\b|^[ \t]*Aborted\b|\bSIGABRT\b", re.MULTILINE)
# the shell's own report of the abort, alone on its line (bash's and dash's "Aborted (core dumped)", "Aborted"): how the
# process the assert line is the cause of ended, no record of another place (no host, no handler's words)
_SHELL_ABORT = lazy_regex(r"^[ \t>*`]*Aborted(?: \(core dumped\))?[ \t*`]*$", re.MULTILINE)
# Intel Fortran's runtime's record of a SIGABRT (its handler's message 76, "forrtl: error (76): Abort trap signal"),
# alone on its line: after a C assert line, how that process ended
_FORRTL_ABORT = lazy_regex(r"^[ \t>*`]*forrtl: (?:error|severe) \(76\): Abort trap signal[ \t*`]*$", re.MULTILINE)
# the module's own error line that a "see above" points at: "colvars: Error: trying to access ..."
_ERROR_ABOVE = lazy_regex(r"^[ \t]*[\w.+-]{1,30}: (?:Error|ERROR):[ \t]*\S[^\n]*$", re.MULTILINE)
# a message that is no failure: a summary's field with nothing in it ("Fatal error:   none", "FATAL ERROR: 0"), or
# words that say the program goes on past it (triage.parsing.unread_failure.GOES_ON: a retry, a fallback, a record it
# skips; "cannot continue" is no such)
_NIL = lazy_regex(r"(?i)(?:0+|none|no|nil|null|n/?a|false|-+)[ \t.]*")
_SIGNALS = {4: "SIGILL", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL", 11: "SIGSEGV", 15: "SIGTERM"}

Ending = tuple[int | None, str | None, str | None, str, int, int]


def endings(text: str) -> list[Ending]:
    """The program's own fatal endings in ``text``: (rank, signal, host, words, start, end), in text order."""
    found: list[Ending] = []
    smp: list[bool] = []
    for m in finditer(_FATAL, text):
        if not _ends_here(text, m) or _quoted(text, m):
            continue
        prog = m.group("prog") or ""
        what = m.group("what")
        if _NIL.fullmatch(what) is not None or GOES_ON.search(what) is not None:
            continue
        pe = m.group("pe")
        charm = prog.upper() == "CHARM++"
        rank_said = pe
        if charm and pe is not None:
            if not smp:
                build = _SMP.search(text) if "Charm++> Running in " in text else None
                smp.append(build is not None and int(build.group("workers") or build.group("threads")) > 1)
            who = f"Charm++'s fatal error on PE {pe}"
            if smp[0]:
                rank_said = None
                who += ", a worker thread of an SMP build (which process ran it, this input does not say)"
            words = f"{who}: {what}"
        else:
            name = f"{prog}'s " if prog and not prog.isdigit() else "the program's own "
            words = f"{name}{m.group('word')}: {what}"
            if "see above" in what:     # (the module's own error line above it: NAMD's after Colvars')
                above = [e.group(0).strip() for e in _ERROR_ABOVE.finditer(text, max(0, m.start() - 2000), m.start())]
                words += f" (above it: {above[-1]})" if above else ""
        found.append((int(rank_said) if rank_said else None, None, None, words, m.start(), m.end()))
    for m in finditer(_PROG_ERROR, text) if " ERROR:" in text else ():
        if m.group("prog") in ("FATAL", "CRITICAL") or not _ends_here(text, m) or _quoted(text, m):
            continue
        what = " ".join(f"{m.group('what')} {m.group('more')}".split())
        if _RUNTIME_RECORD.search(what) is not None or GOES_ON.search(what) is not None:
            continue
        if _SIGNAL_AFTER.search("\n".join(text[m.end():m.end() + 2000].split("\n")[1:9])) is not None:
            continue        # (a signal's record after it: the process's death by that signal is the failure)
        line_above = text[text.rfind("\n", 0, max(0, text.rfind("\n", 0, m.start()))) + 1:m.start()]
        if f"{m.group('prog')} ERROR:" in line_above:
            continue        # (the same head on the line above: a library's stream of error lines, PETSc's)
        found.append((None, None, None, f"{m.group('prog')}'s own error: {what}", m.start(), m.end()))
    for m in finditer(_GRAPPA, text):
        if not _ends_here(text, m):
            continue
        num = int(m.group("num"))
        named = _SIGNALS.get(num, f"signal {num}")
        found.append((None, named if named.startswith("SIG") else None, None,
                      f"the runtime's own handler: exiting due to signal {num} ({named})", m.start(), m.end()))
    for m in finditer(_ASSERT, text):
        if (_KERNEL_FILE.search(m.group("file")) and (not m.group("prog") or "block: [" in m.group(0))) \
                or not _ends_here(text, m) or _quoted(text, m):
            continue
        told, shell = _abort_after(text, m.end())
        tied = _handler_tied(text, m.end()) if told else None
        if told and tied is None:
            continue        # (its abort told by a signal handler's record after it, with its host: that record's)
        prog = f"{m.group('prog')}: " if m.group("prog") else ""
        func = f" in {m.group('func')}" if m.group("func") else ""
        said = (f"{prog}assertion `{m.group('expr')}' failed ({m.group('file')}:{m.group('line')}{func}): the process "
                "aborts (SIGABRT)" + (tied[2] if tied else shell))
        found.append((tied[0] if tied else None, "SIGABRT", tied[1] if tied else None, said, m.start(), m.end()))
    for m in finditer(_ASSERT_OTHER, text) if "Assertion failed: " in text else ():
        if not _ends_here(text, m) or _quoted(text, m):
            continue
        told, shell = _abort_after(text, m.end())
        tied = _handler_tied(text, m.end()) if told else None
        if told and tied is None:
            continue        # (its abort told by a signal handler's record after it: that record's)
        if m.group("mfile"):
            where, whose = f"{m.group('mfile')}:{m.group('mline')} in {m.group('mfunc')}", "musl's assert"
        else:
            where, whose = f"{m.group('wfile')}:{m.group('wline')}", "the C runtime's assert"
        said = (f"{whose}: assertion `{m.group('expr')}' failed ({where}): the process aborts (SIGABRT)"
                + (tied[2] if tied else shell))
        found.append((tied[0] if tied else None, "SIGABRT", tied[1] if tied else None, said, m.start(), m.end()))
    for m in finditer(_STOP, text) if "STOP" in text else ():
        code = int(m.group("code")) if m.group("code") else (1 if m.group("error") else 0)
        if code == 0 or not _ends_here(text, m) or _quoted(text, m):
            continue
        said = m.group(0).strip(" \t>*`")
        found.append((None, None, None, f"the program's own {said} (gfortran's stop: exit code {code})", m.start(),
                      m.end()))
    out: list[Ending] = []
    for rank, signal, host, words, start, end in sorted(found, key=lambda item: item[4]):
        if rank is None and (task := srun_task_after(text, end)) is not None:
            rank, host = task
        out.append((rank, signal, host, words, start, end))
    return out


_SRUN_REACH = 1200       # (how far after the line srun's record may stand: a backtrace's frames between)


def srun_task_after(text: str, end: int, stop: int | None = None) -> tuple[int, str] | None:
    """The one task srun's records right after ``end`` name (``srun: error: n25: task 2: Exited with exit code 2``),
    with its node: the task whose last words the line before them were; None where they name none or several. One
    rule: a program's fatal line's and the Fortran runtimes' errors' (triage.parsing.solver_errors)."""
    tasks = list(_SRUN_TASK.finditer(text, end, min(len(text), end + _SRUN_REACH, len(text) if stop is None else stop)))
    return (int(tasks[0].group("rank")), tasks[0].group("host")) if len(tasks) == 1 else None


def _abort_after(text: str, end: int) -> tuple[bool, str]:
    """Whether a signal handler's record after an assert line tells its abort (that record is the story: it names the
    host), and the shell's own line of it where one stands there ("Aborted (core dumped)": how the process ended, said
    after the assert's words, which are the cause), or Intel Fortran's runtime's ("forrtl: error (76): Abort trap
    signal": its handler of the same abort in a mixed C and Fortran program, no host, no other place)."""
    after = "\n".join(text[end:end + 2000].split("\n")[1:7])
    shell = _SHELL_ABORT.search(after) if "Aborted" in after else None
    if shell is None:
        shell = _FORRTL_ABORT.search(after) if "forrtl: " in after else None
    if shell is None:
        return _SIGNAL_TOLD.search(after) is not None, ""
    rest = after[:shell.start()] + after[shell.end():]
    said = shell.group(0).strip(" \t>*`")
    whose = "Intel Fortran's runtime" if said.startswith("forrtl") else "the shell's"
    return _SIGNAL_TOLD.search(rest) is not None, f" (then {whose}: {said})"


# Open MPI's signal handler's record of the abort (opal/util/stacktrace.c: "[host:pid] *** Process received signal ***",
# then "[host:pid] Signal: Aborted (6)"; the head may be read off already, a host:pid tag) and the launcher's record of
# the same process (Open MPI's and PRRTE's "mpirun noticed that process rank N with PID P on node H exited on signal 6
# (Aborted).")
_OMPI_ABORTED = lazy_regex(r"^[ \t]*(?:\[(?P<host>[\w.-]+):0*(?P<pid>\d+)\] )?Signal: Aborted \(6\)", re.MULTILINE)
_NOTICED_ABORT = lazy_regex(r"\b(?:mpirun|mpiexec|orterun|prterun|prte) noticed that process rank (?P<rank>\d+) "
                            r"with PID 0*(?P<pid>\d+) on node (?P<host>[\w.-]+) exited on signal 6\b")


# srun's record of the same process's abort ("srun: error: n1: task 1: Aborted (core dumped)"): its node, no pid
_SRUN_ABORTED = lazy_regex(r"^[ \t>*`]*srun: error: (?P<host>[\w.-]+): task (?P<rank>\d{1,7}): Aborted\b", re.MULTILINE)


def _handler_tied(text: str, end: int) -> tuple[int, str, str] | None:
    """Open MPI's handler's record of the abort right after an assert line, and the launcher's record of the rank that
    ended on signal 6, of the same process (mpirun's with the handler's host and pid, srun's of the handler's host;
    where the handler's head is read off, the one handler's record and the one launcher's record of the abort in the
    text): (that rank, its node, the words telling how it ended). The assert is the cause, the records how it ended;
    None where no launcher's record ties the handler's process to a rank (the handler's record, with its host, is
    then the story)."""
    if "noticed that process rank" not in text and "srun: error: " not in text:
        return None
    handler = _OMPI_ABORTED.search("\n".join(text[end:end + 2000].split("\n")[1:7]))
    if handler is None:
        return None
    # (rank, node, pid or None, the launcher's words)
    records: list[tuple[int, str, int | None, str]] = [
        (int(r.group("rank")), r.group("host"), int(r.group("pid")), _noticed_words(r))
        for r in _NOTICED_ABORT.finditer(text, end)]
    records += [(int(r.group("rank")), r.group("host"), None,
                 f"srun's record: task {r.group('rank')} on {r.group('host')} Aborted")
                for r in _SRUN_ABORTED.finditer(text, end)]
    if handler.group("pid") is not None:
        pid, host = int(handler.group("pid")), handler.group("host")
        records = [r for r in records if r[1] == host and r[2] in (pid, None)]
        if len({r[0] for r in records}) > 1:
            return None     # (srun's records of several tasks on the node: which one, its pid would say)
    elif len(records) != 1 or len(_OMPI_ABORTED.findall(text)) != 1:
        return None         # (several processes aborted: which one this assert's is, the heads would say)
    if not records:
        return None
    rank, host, _pid, said = records[0]
    return rank, host, f" (then Open MPI's handler: Signal: Aborted (6); {said})"


def _noticed_words(record: re.Match[str]) -> str:
    return (f"{record.group(0).split(' noticed')[0]}'s record: process rank {record.group('rank')} with PID "
            f"{record.group('pid')} on node {record.group('host')} exited on signal 6")


def _quoted(text: str, m: re.Match[str]) -> bool:
    line_start = text.rfind("\n", 0, m.start()) + 1
    return in_quoted_prose(text[line_start:m.end()], m.start() - line_start + len(m.group(0)) - len(
        m.group(0).lstrip(" \t>*`")))


def _ends_here(text: str, m: re.Match[str]) -> bool:
    """Nothing but the process's teardown after the line (a few lines of its own output at most): its last words."""
    own = 0
    at = m.end() + 1
    while 0 < at < len(text):
        nxt = text.find("\n", at)
        line = text[at:nxt if nxt >= 0 else len(text)]
        at = nxt + 1 if nxt >= 0 else -1
        if (_EXIT_ZERO.search(line) is not None or (_COMPLETED.search(line) is not None
                                                    and _JOB_ENDED.match(line) is None)) \
                and _NOT_WELL.search(line) is None:
            return False        # (the process or its step ended well after it: no end of the run)
        if _TEARDOWN.match(line) is None:
            own += 1
            if own > _TAIL:
                return False
    return True
