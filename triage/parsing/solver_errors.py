"""Simulation frameworks' own fatal-error banners, which every code built on the framework prints before it
exits (the solver's own error, in its own words: an exception of that process, not a signal):

- OpenFOAM's (src/OpenFOAM/db/error, every solver and utility built on it: simpleFoam, decomposePar,
  blastFoam, sedFoam, ...)::

      --> FOAM FATAL ERROR:
      Attempt to cast type  to type fvMesh

  or ``--> FOAM FATAL IO ERROR:``, then ``FOAM exiting`` / ``FOAM aborting`` / ``FOAM parallel run exiting``.
  In a parallel run every line of a process is prefixed ``[N] `` (Pstream's rank in MPI_COMM_WORLD); without
  the prefix the banner is a serial run's, or the master's that names no rank;
- WRF's (frame/module_wrf_error.F, wrf_error_fatal; real.exe, wrf.exe, ndown.exe, the WPS programs)::

      -------------- FATAL CALLED ---------------
      FATAL CALLED FROM FILE:  <stdin>  LINE:     987

  printed into the task's own RSL file, which starts ``taskid: 20 hostname: node172`` (RSL_LITE's header: the
  task is the MPI rank); the banner belongs to the last such header before it;
- GROMACS's (src/gromacs/utility/fatalerror.cpp, gmx_fatal and its exceptions; mdrun, grompp and every gmx
  tool)::

      Program:     gmx mdrun, version 2022
      Source file: src/gromacs/domdec/domdec.cpp (line 2232)
      MPI rank:    0 (out of 10)

      Fatal error:
      There is no domain decomposition for 10 ranks that is compatible with the

  ``Fatal error:`` alone on its line, the message on the lines after; the ``MPI rank: N (out of M)`` line of the
  same banner (a few lines above it) names the rank that reports it, and without it the banner names no rank.

- the scientific codes' and their frameworks' own fatal-error words (session 44), each the error of the process that
  printed it: LAMMPS's ``ERROR on proc 5: Out of range atoms - cannot compute PPPM (src/KSPACE/pppm.cpp:1965)`` (rank
  5) and ``ERROR: Lost atoms: original 32000 current 31998 (src/thermo.cpp:488)`` (error->all: every rank stops, rank
  0 prints it); GROMACS's block (``Program: gmx mdrun, version ...``, ``MPI rank: 3 (out of 8)``, ``Fatal error:``
  and its message); PETSc's ``[1]PETSC ERROR: --- Error Message ---`` and the lines after it (its ``Signal received``
  is the signal crashlog reads); deal.II's ``An error occurred in line <N> of file <F>`` with its ``Additional
  information:``; MOOSE's ``*** ERROR ***``; CP2K's ``[ABORT]`` box; Quantum ESPRESSO's ``Error in routine X (N):``
  between its ``%%%%`` lines; Charm++'s (NAMD's) ``------------- Processor 3 Exiting: Called CmiAbort
  ------------`` with its ``Reason:``; MPAS's ``CRITICAL ERROR:`` in the error log of ``task N``; Trilinos'
  (Albany's) ``p=2: *** Caught standard std::exception of type '...' :``; GFDL FMS's (MOM6's, SHiELD's) ``FATAL from
  PE 17: ...``; SU2's ``Error in "...":`` block to its ``Error Exit``; SPECFEM's ``Error detected, aborting MPI...
  proc 3``; ARMCI's (ARMCI-MPI's, the one-sided runtime of Global Arrays and NWChem) ``[31] ARMCI assert fail in
  gmr_create() [src/gmr.c:109]: "..."`` and ``[3] ARMCI Error in gmr_create (src/gmr.c:109): ...`` (the rank in its
  brackets, its backtrace and the job's abort after it); the Fortran runtimes' own errors (gfortran's ``Fortran
  runtime error:`` after ``At line N of file F``, Intel's ``forrtl: severe (408): ...``; their signals are
  crashlog's). A banner that names no rank is the rank's whose MPI abort record follows it (``MPI_ABORT was
  invoked on rank N``, ``MPI_Abort(...) - process N``, ``Abort(C) on node N``, CP2K's ``stopped by process
  number N``), where no other banner comes between.

A banner is read only at a line's start (the words quoted in a sentence are not the program's), and not where the
run went on past it: progress or the run's own word that it ended well on a line after it, at any distance (a
training loop's, a code's own normal end line: LAMMPS's ``Total wall time:``, Quantum ESPRESSO's ``JOB DONE.``, CP2K's
``PROGRAM ENDED AT``, GROMACS's ``Finished mdrun on rank N``, WRF's ``SUCCESS COMPLETE``, NAMD's ``End of program``,
SU2's ``Exit Success``, deal.II's test log ``DEAL::OK``, ctest's ``100% tests passed, 0 tests failed``), or ctest's
result line for the test that printed it says ``Passed`` (a test that expects the error): a banner a wrapper printed
and retried after, a test's expected output, an older run's above a later run that ended well.

``parse_solver_errors(text)`` -> RankDeath records (raised: the process's own error) in text order. Never raises.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Sequence

from triage.lazy_regex import lazy_regex
from triage.parsing import fatal_ending, hpc_codes, node_heap
from triage.parsing.launchers import RankDeath
from triage.parsing.mpi_errors import MPICH_ABORT_HEAD
from triage.parsing.progress import (
    another_command_in,
    commands_may_fail_in,
    is_progress,
    mentions_progress,
    went_on_after,
)
from triage.parsing.regex_gate import finditer, holds_any

MARKERS = ("FOAM FATAL", "FATAL CALLED", "ERROR on proc ", "ERROR: ", "Fatal error:", "PETSC ERROR:",
           "An error occurred in line <", "*** ERROR ***", "[ABORT]", "Error in routine ", "Called CmiAbort",
           "Exiting: Caught Signal",
           "CRITICAL ERROR: ", "*** Caught standard std::exception", "FATAL from PE", "Error Exit", "aborting MPI...",
           "Fortran runtime error:", "forrtl: severe (", "***** ERROR", "ARMCI assert fail in ", "ARMCI Error",
           "ARMCI DASSERT fail", *hpc_codes.MARKERS)
# the words of the records that span the lines around the marked one (a box, a block with its message on the lines
# after it or its head above it): a large log's excerpt keeps those lines (triage.load.logs.large)
BLOCK_MARKERS = ("Fatal error:", "PETSC ERROR: -", "An error occurred in line <", "*** ERROR ***", "[ABORT]",
                 "Error in routine ", "Called CmiAbort", "Exiting: Caught Signal", "FATAL CALLED", "CRITICAL ERROR: ",
                 "FOAM FATAL",
                 *hpc_codes.MARKERS)

# (Markdown quoting or a code span's backtick may come before it; "[N] " is the rank of a parallel run)
_FOAM = lazy_regex(r"^[ \t>*`]*(?:\[(?P<rank>\d{1,7})\] )?--> FOAM FATAL (?P<io>IO )?ERROR:?[ \t]*(?P<head>[^\n]*)$",
                   re.MULTILINE)
_FOAM_PREFIX = lazy_regex(r"^[ \t]*(?:\[\d{1,7}\][ \t]*)?")
# how the error ends the process (src/OpenFOAM/db/error/error.C): error::exit() prints "FOAM exiting" (serial: exit(1))
# or "FOAM parallel run exiting" (Pstream::exit), error::abort() "FOAM parallel run aborting" (Pstream::abort: the MPI
# runtime's abort, an exit), or, serial or with FOAM_ABORT set, "FOAM aborting" / "FOAM aborting (FOAM_ABORT set)",
# printStack, then ::abort(): the process's SIGABRT (the corpus labels a program's own abort() a SIGABRT crash)
_FOAM_ABORTING = lazy_regex(r"^[ \t>*`]*(?:\[\d{1,7}\] )?FOAM aborting(?: \(FOAM_ABORT set\))?[ \t]*$", re.MULTILINE)
_FOAM_END = lazy_regex(r"^[ \t>*`]*(?:\[\d{1,7}\] )?(?:FOAM (?:parallel run )?(?:exiting|aborting)|--> FOAM FATAL)",
                       re.MULTILINE)
_FOAM_REACH = 4000      # (how far after the banner its end line may stand: the message, "From function", "in file")
_WRF = lazy_regex(r"^[ \t>*`]*-{5,} FATAL CALLED -{5,}[ \t]*$", re.MULTILINE)
_WRF_TASK = lazy_regex(r"^[ \t>*`]*taskid: (?P<rank>\d{1,7}) hostname: (?P<host>[\w.-]+)", re.MULTILINE)
# GROMACS: the line alone (its message follows on the next lines), and the banner's own rank line above it
_GMX = lazy_regex(r"^[ \t>*`]*Fatal error:[ \t]*$", re.MULTILINE)
_GMX_RANK = lazy_regex(r"^[ \t>*`]*MPI rank:[ \t]+(?P<rank>\d{1,7}) \(out of \d{1,7}\)[ \t]*$", re.MULTILINE)
_GMX_RANK_REACH = 400           # characters above "Fatal error:" where the banner's rank line may be
_NEXT_LINES = 6
_LEAD = r"^[ \t>*`]*"
_LAMMPS = lazy_regex(_LEAD + r"ERROR(?: on proc (?P<rank>\d{1,7}))?: (?P<what>[^\n]+?)"
                     r"(?(rank)(?: \((?P<site>[\w./-]+\.(?:cpp|h|c):\d+)\))?| \((?P<site2>[\w./-]+\.(?:cpp|h|c):\d+)\))"
                     r"[ \t]*$", re.MULTILINE)
_PETSC = lazy_regex(r"^[ \t]*(?:\[(?P<rank>\d{1,7})\])?PETSC ERROR: -+ Error Message -+[ \t]*$", re.MULTILINE)
_PETSC_LINE = lazy_regex(r"^[ \t]*(?:\[\d{1,7}\])?PETSC ERROR: (?P<what>[^\n]*?)[ \t]*$", re.MULTILINE)
_DEALII = lazy_regex(_LEAD + r"An error occurred in line <(?P<line>\d+)> of file <(?P<file>[^>\n]+)>", re.MULTILINE)
_MOOSE = lazy_regex(_LEAD + r"\*\*\* ERROR \*\*\*[ \t]*$", re.MULTILINE)
_CP2K = lazy_regex(r"^[ \t]*\* \[ABORT\][ \t]*\*?[ \t]*$", re.MULTILINE)
_CP2K_END = lazy_regex(r"^[ \t]*\*{20,}[ \t]*$", re.MULTILINE)
_CP2K_RANK = lazy_regex(r"stopped by process number (?P<rank>\d{1,7})")
_QE = lazy_regex(r"^[ \t]*Error in routine[ \t]+(?P<routine>\S+) \((?P<code>-?\d+)\):[ \t]*$", re.MULTILINE)
_CHARM = lazy_regex(r"^[ \t]*-{5,} (?:Partition \d+ )?Processor (?P<rank>\d{1,7}) Exiting: Called CmiAbort -{5,}"
                    r"[ \t]*$", re.MULTILINE)
# Charm++'s signal handler (CmiAbortHelper("Caught Signal", ...): src/arch/mpi/machine.C with strsignal's words,
# "Segmentation fault"; netlrts' and verbs' own, "segmentation violation", "caught signal TERM"; older releases print
# "Signal: <words>" for "Reason: <words>"), then its stack ("[1] Stack Traceback:", "  [1:2] prog 0x... f()"), then the
# MPI runtime's abort of that process (HPE MPT's "MPT ERROR: Rank 1(g:1) is aborting with error code 1": how it ended)
_CHARM_SIGNAL = lazy_regex(r"^[ \t>*`]*-{5,} (?:Partition \d+ )?Processor (?P<rank>\d{1,7}) Exiting: Caught Signal "
                           r"-{5,}[ \t]*\n[ \t>*`]*(?:Reason|Signal): (?P<what>[^\n]+?)[ \t]*$", re.MULTILINE)
_CHARM_SIGNALS = {"segmentation fault": "SIGSEGV", "segmentation violation": "SIGSEGV", "bus error": "SIGBUS",
                  "floating point exception": "SIGFPE", "illegal instruction": "SIGILL", "aborted": "SIGABRT",
                  "killed": "SIGKILL", "terminated": "SIGTERM", "caught signal kill": "SIGKILL",
                  "caught signal term": "SIGTERM", "caught signal quit": "SIGQUIT", "quit": "SIGQUIT"}
_CHARM_FRAME = lazy_regex(r"^[ \t]*\[\d+:\d+\] \S+ 0x[0-9a-f]+ (?P<func>[A-Za-z_][^\n(]*)", re.MULTILINE)
# Charm++'s start-up line names its build (machine-common-core.c): "Charm++> Running in SMP mode: 2 processes, 4 worker
# threads (PEs) + 1 comm threads per process, 8 PEs total" (6.x: "Running in SMP mode: numNodes 2,  4 worker threads per
# process"), "Charm++> Running in Multicore mode: 8 threads (PEs)"; "Running in non-SMP mode: 8 processes (PEs)". In an
# SMP or multicore build a PE (its "Processor N") is a worker thread, no process's rank (one worker thread per
# process aside)
_CHARM_THREADS = lazy_regex(r"Charm\+\+> Running in (?:SMP mode\b[^\n]*?(?P<workers>\d+) worker threads|"
                            r"Multicore mode: (?P<threads>\d+) threads)")
_MPAS = lazy_regex(_LEAD + r"CRITICAL ERROR: (?P<what>[^\n]+?)[ \t]*$", re.MULTILINE)
_MPAS_TASK = lazy_regex(r"Beginning MPAS-\S+ Error Log File for task\s+(?P<rank>\d{1,7}) of\s+\d+")
_TEUCHOS = lazy_regex(r"^[ \t]*p=(?P<rank>\d{1,7}): \*\*\* Caught standard std::exception of type '(?P<type>[^'\n]+)'",
                      re.MULTILINE)
_FMS = lazy_regex(_LEAD + r"FATAL from PE[ \t]+(?P<rank>\d{1,7}): (?P<what>[^\n]+?)[ \t]*$", re.MULTILINE)
# ARMCI-MPI's (src/debug.c) failed assertion and error, each in the words of the rank in its brackets (taken off as the
# line's rank prefix where every line of the text has one)
_ARMCI = lazy_regex(_LEAD + r"(?:\[(?P<rank>\d{1,7})\] )?ARMCI (?:assert fail in (?P<func>\w+)\(\) "
                    r"\[(?P<site>[^\]\n]+)\]: (?P<cond>[^\n]*?)|"
                    r"Error(?: in (?P<efunc>\w+) \((?P<esite>[^()\n]+)\))?:[ \t]*(?P<what>[^\n]*?))[ \t]*$",
                    re.MULTILINE)
# Global Arrays' own ARMCI (armci/src/common/armci.c, dassertp_fail): "(rank:41 hostname:node17 pid:33211):ARMCI
# DASSERT fail. ../../ga-5-6/armci/src/devices/openib/openib.c:armci_call_data_server():2209 cond:(...)" (armci_me,
# the process's rank, and its node's name; then armci_abort ends the job); older GA prints armci_me alone, "0:ARMCI
# DASSERT fail. signaltrap.c:SigSegvHandler():299 cond:0" (in a signal handler, after the signal's own line, which
# triage.parsing.launchers reads: that signal is the failure)
_ARMCI_DASSERT = lazy_regex(r"(?:\(rank:(?P<rank>\d{1,7}) hostname:(?P<host>[\w.-]+) pid:(?P<pid>\d+)\):|"
                            r"(?<![\w:])(?P<num>\d{1,7}):)?"
                            r"ARMCI DASSERT fail\. (?:[^\s:]*/)?(?P<file>[^\s:/]+):(?P<func>\w+)\(\):(?P<line>\d+)"
                            r"(?: cond:(?P<cond>[^\n]*?))?[ \t]*$", re.MULTILINE)
_GA_IDS = lazy_regex(r"^[ \t]*(?:\d{1,7}: ?)+")
_SU2 = lazy_regex(r"^[ \t]*Error in \"(?P<where>[^\"\n]+)\":[ \t]*$", re.MULTILINE)
_SU2_EXIT = lazy_regex(r"^-+ Error Exit -+[ \t]*$", re.MULTILINE)
_SPECFEM = lazy_regex(r"^[ \t]*Error detected, aborting MPI\.\.\. proc[ \t]+(?P<rank>\d{1,7})[ \t]*$", re.MULTILINE)
_GFORTRAN = lazy_regex(r"^[ \t]*(?:At line (?P<line>\d+) of file (?P<file>[^\n(]+?)(?: \([^\n]*\))?[ \t]*\n)?"
                       r"[ \t]*Fortran runtime error: (?P<what>[^\n]+?)[ \t]*$", re.MULTILINE)
_IFORT = lazy_regex(r"^[ \t]*forrtl: severe \((?P<code>\d+)\): (?P<what>[^\n]+?)[ \t]*$", re.MULTILINE)
_IFORT_SIGNAL = lazy_regex(r"SIG[A-Z]+|floating |illegal instruction")
# GEOS's (GEOSX's; its GEOS_ERROR / GEOS_ERROR_IF macros) banner: "***** ERROR", "***** LOCATION: <file>:<line>",
# "***** Controlling expression (should be false): <expr>", then "***** Rank 7: <message>" (newer versions name the
# rank that raised it) or the message on the next line alone (older ones, no rank)
_GEOS = lazy_regex(_LEAD + r"\*{5} ERROR[ \t]*\n[ \t>*`]*\*{5} LOCATION: (?P<loc>[^\n]+?)[ \t]*$", re.MULTILINE)
_GEOS_RANK = lazy_regex(r"^[ \t>*`]*\*{5} Rank (?P<rank>\d{1,7}): (?P<what>[^\n]+?)[ \t]*$", re.MULTILINE)
# the MPI runtime's record of the abort that follows a code's banner: the rank that printed it
_ABORT_RANK = lazy_regex(r"MPI_ABORT was invoked on rank (?P<a>\d+) in communicator MPI_COMM_WORLD|"
                         r"MPI_Abort\([^()\n]*\) - process (?P<b>\d+)|"
                         + MPICH_ABORT_HEAD + r" on node (?P<c>\d+)|"
                         r"stopped by process number (?P<d>\d+)|"
                         # Open MPI's record of the first process that exited non-zero ("The first process to do so
                         # was:", "Process name: [[4455,1],2]", "Exit code: 2"): its rank in MPI_COMM_WORLD
                         r"Process name: \[\[\d+,\d+\],(?P<e>\d+)\]")
_ABORT_WINDOW = 3000
# the job's end by its MPI runtime or launcher: the abort records above, Open MPI's "Primary job  terminated normally,
# but 1 process returned", srun's "srun: error: node: task 3: Exited with exit code 2"
_JOB_ENDED = lazy_regex(_ABORT_RANK.pattern + r"|Primary job\s+terminated|"
                        r"^srun: error: \S+: tasks? [\d,-]+: ", re.MULTILINE)
# the codes' own lines that a run ended well, and a test harness's pass: printed after a banner (at any distance), the
# run went on past it. LAMMPS's "Total wall time: 0:01:00", Quantum ESPRESSO's "JOB DONE.", CP2K's "PROGRAM ENDED AT",
# GROMACS's "Finished mdrun on rank 0", WRF's "SUCCESS COMPLETE WRF" (real.exe's "SUCCESS COMPLETE REAL_EM INIT"),
# NAMD's "End of program", SU2's "Exit Success (SU2_CFD)", deal.II's test log "DEAL::OK", ctest's "100% tests passed, 0
# tests failed out of 40", ORCA's "****ORCA TERMINATED NORMALLY****"; and the other test harnesses' summaries that every
# test passed: Catch2's "All tests passed (312 assertions in 18 test cases)", Chapel's start_test "[Summary: #Successes
# = 2 | #Failures = 0 | ...]", pytest's "==== 12 passed, 1 skipped in 3.02s ====" (no failed or error count in it)
_CODE_END = lazy_regex(r"^[ \t>*`]*(?:[\w.]+: )?(?:Total wall time: \d+:\d\d:\d\d|JOB DONE\.|PROGRAM ENDED AT\b|"
                       r"Finished mdrun on rank \d+|SUCCESS COMPLETE [A-Z_]+|End of program\b|"
                       r"-*[ \t]*Exit Success \(SU2_\w+\)|DEAL(?:::\w+)*::OK[ \t]*$|"
                       r"100% tests passed, 0 tests failed out of \d+|ORCA TERMINATED NORMALLY|"
                       r"All tests passed \(\d+ assertions? in \d+ test cases?\)|"
                       r"\[Summary: #Successes = \d+ \| #Failures = 0\b|"
                       r"=+ \d+ passed(?:, \d+ (?:skipped|deselected|xfailed|xpassed|warnings?))* in [\d.]+s\b)",
                       re.MULTILINE)


def code_ended(line: str) -> bool:
    """The line is a code's own word that its run ended well (_CODE_END: LAMMPS's "Total wall time: 0:01:00" ...)."""
    return _CODE_END.match(line) is not None


# ctest's result of one test: the first after a banner says whether the test that printed it passed (a test that
# expects the error: deal.II's, MOOSE's RunException tests)
_CTEST = lazy_regex(r"^[ \t]*(?:\d+/\d+ )?Test[ \t]+#\d+: \S+ \.*[ \t]*(?P<how>Passed|\*+\w+|\w+)", re.MULTILINE)


def parse_solver_errors(text: str, line_ranks: Sequence[int | None] | None = None) -> tuple[RankDeath, ...]:
    """The banners above in ``text``, in text order; ``line_ranks``: the rank each line's own prefix named (the text's
    prefixes taken off): a banner that names no rank is its line's rank's. Never raises."""
    if not holds_any(text, MARKERS) and not holds_any(text, fatal_ending.MARKERS) and not holds_any(
            text, node_heap.MARKERS):
        return ()
    out: list[RankDeath] = []
    seen: set[int | None] = set()
    went_on = _went_on(text)

    newlines: list[int] = []            # (made once, at the first banner of no rank: a bisect per banner after it)

    def rank_at(offset: int) -> int | None:
        if line_ranks is None:
            return None
        if not newlines:
            newlines.extend(i for i, ch in enumerate(text) if ch == "\n")
            newlines.append(len(text))
        at = bisect_right(newlines, offset - 1) if offset else 0
        return line_ranks[at] if at < len(line_ranks) else None

    for match in finditer(_FOAM, text):
        rank = int(match.group("rank")) if match.group("rank") else rank_at(match.start())
        if rank in seen or went_on(match.end()):
            continue
        seen.add(rank)                  # (a rank's first banner: its own copy in the master's echo repeats it)
        head = match.group("head").strip()
        if re.fullmatch(r"\(?(?:openfoam|OpenFOAM)[-\w.]*\)?", head):   # ("(openfoam-2306)": its version, no message)
            head = ""
        what = head or _lines_after(text, match.end(), skip=("---",))
        kind = "FOAM FATAL IO ERROR" if match.group("io") else "FOAM FATAL ERROR"
        said = f"OpenFOAM's {kind}: {what}"[:330] if what else f"OpenFOAM's {kind}"
        aborts = _foam_aborts(text, match.end())
        if aborts:
            said += " (then 'FOAM aborting': error::abort() ends the process with SIGABRT)"
        out.append(RankDeath(rank, "SIGABRT" if aborts else None, None, None, None, said, offset=match.start(),
                             raised=True, mpi=rank is not None))
    wrf_task = _last_before(_WRF_TASK, text)
    for match in finditer(_WRF, text):
        if went_on(match.end()):
            continue
        task = wrf_task(match.start())
        rank = int(task.group("rank")) if task else rank_at(match.start())
        if rank in seen:
            continue
        seen.add(rank)
        what = _wrf_reason(_lines_after(text, match.end(), 4, stop=("---",)))
        out.append(RankDeath(rank, None, None, task.group("host") if task else None, None,
                             f"WRF's fatal error (wrf_error_fatal){': ' + what if what else ''}"[:400],
                             offset=match.start(), raised=True, mpi=rank is not None))
    for match in finditer(_GMX, text):
        # (its message wrapped at 80 columns, to the blank line: whole sentences, within a summary's 300)
        what = _sentences(_lines_after(text, match.end(), 8, skip=("---",), breaks=True), 270)
        if not what or went_on(match.end()):
            continue                    # (a bare "Fatal error:" with nothing after it is no banner)
        found = None
        for found in _GMX_RANK.finditer(text, max(0, match.start() - _GMX_RANK_REACH), match.start()):
            pass
        rank = int(found.group("rank")) if found else rank_at(match.start())
        if rank in seen:
            continue
        seen.add(rank)
        out.append(RankDeath(rank, None, None, None, None, f"GROMACS's fatal error: {what}"[:400],
                             offset=match.start(), raised=True, mpi=found is not None))
    for match in finditer(_ARMCI_DASSERT, text) if "ARMCI DASSERT fail" in text else ():
        said = match.group("rank") or match.group("num")
        rank = int(said) if said else rank_at(match.start())
        if rank in seen or went_on(match.end()) or match.group("func").startswith("Sig"):
            continue            # (a signal handler's: its signal's line is the failure)
        seen.add(rank)
        site = f"{match.group('func')}() ({match.group('file')}:{match.group('line')})"
        above = [line for line in text[max(0, match.start() - 400):match.start()].split("\n") if line.strip()]
        if match.group("func").endswith("Error") and above:
            # (ARMCI_Error's: GA's or the code's own error, "0:0: ga_pdsyevd: eigenvectors failed to converge:: -10",
            # is the line above it, under its process ids)
            what = f"{_GA_IDS.sub('', above[-1]).strip()} (then ARMCI's abort in {site})"
        else:
            cond = f": {match.group('cond').strip()}" if (match.group("cond") or "").strip() else ""
            what = f"ARMCI's assertion failed in {site}{cond}"
        out.append(RankDeath(rank, None, None, match.group("host"), int(match.group("pid")) if match.group("pid")
                             else None, what[:400], offset=match.start(), raised=True, mpi=said is not None))
    out += _charm_signals(text, seen, went_on)
    out += _codes(text, seen, rank_at, went_on)
    out += _endings(text, seen, rank_at, went_on, [death.offset for death in out])
    return tuple(sorted(out, key=lambda death: death.offset))


# an MPI runtime's tag of the rank before a line (Hydra's -prepend-rank, Open MPI's --tag-output's head)
_RANK_TAG = lazy_regex(r"[ \t]*\[(\d{1,6})(?:,\d+\]<\w+>:|\])[ \t]")


def _endings(text: str, seen: set[int | None], rank_at: Callable[[int], int | None], went_on: Callable[[int], bool],
             banners: list[int]) -> list[RankDeath]:
    """A program's own fatal endings (triage.parsing.fatal_ending), each the process's own words of its end: an
    error it raised, or its death by the signal the words name (raised, with ``signal``). One a rank (the first), and
    none at a banner this module read already; one an MPI abort record follows is what failed, the record how it
    ended (its words after the line's)."""
    out: list[RankDeath] = []
    node = node_heap.endings(text)       # (Node's "FATAL ERROR: ... Allocation failed": its own reader's, no other's)
    taken = {start for _, _, _, _, start, _ in node}
    for rank, signal, host, what, start, end in sorted(
            (*node, *(ending for ending in fatal_ending.endings(text) if ending[4] not in taken)),
            key=lambda ending: ending[4]):
        if start in banners or went_on(end):
            continue
        abort = _ABORT_RANK.search(text, end, min(len(text), end + _ABORT_WINDOW))
        own = rank is not None
        rank = rank_at(start) if rank is None else rank
        # (the rank the line's own tag names, or its prefix where the caller read the tags as prefixes)
        tagged = int(tag.group(1)) if (tag := _RANK_TAG.match(text, text.rfind("\n", 0, start) + 1)) is not None \
            else rank_at(start)
        if abort is not None and tagged is not None \
                and tagged != int(next(g for g in abort.groups() if g is not None)):
            # ("[3] FATAL ERROR: ..." then "MPI_ABORT was invoked on rank 0": rank 3 found it, rank 0, the root
            # after a reduction of error flags, aborts the job: the line is rank 3's, the record no end of it)
            abort = None
            rank = tagged if rank is None else rank
        if rank is None and abort:          # the MPI abort record right after it
            rank = int(next(g for g in abort.groups() if g is not None))
        if rank in seen:
            continue
        seen.add(rank)
        if signal is None and abort is not None:
            # (its MPI abort record right after it: how it ended; the fatal line is what failed)
            head = text.rfind("\n", 0, abort.start()) + 1
            lines = [line.strip() for line in text[head:head + 400].split("\n")[:2]]
            if len(lines) > 1 and lines[1].startswith("with errorcode"):    # (Open MPI's: on the next line)
                lines[0] = f"{lines[0]} {lines[1].rstrip('.')}"
            what += f" (then its MPI abort: {lines[0][:160]})"
        out.append(RankDeath(rank, signal, None, host, None, " ".join(what.split())[:400], offset=start, raised=True,
                             mpi=own and host is None))
    return out


def _charm_signals(text: str, seen: set[int | None], went_on: Callable[[int], bool]) -> list[RankDeath]:
    """Charm++'s signal handler's record of processor N's death by a signal (_CHARM_SIGNAL), with the first frame of its
    stack that is the program's own (past the handler's frames and libc's); a PE of an SMP or multicore build is a
    worker thread, no rank."""
    if "Exiting: Caught Signal" not in text:
        return []
    build = _CHARM_THREADS.search(text) if "Charm++> Running in " in text else None
    threads = build is not None and int(build.group("workers") or build.group("threads")) > 1
    out: list[RankDeath] = []
    for m in finditer(_CHARM_SIGNAL, text):
        words = m.group("what").strip()
        signal = _CHARM_SIGNALS.get(words.lower())
        if signal is None or went_on(m.end()):
            continue
        rank = None if threads else int(m.group("rank"))
        if rank in seen:
            continue
        seen.add(rank)
        frames = [f.group("func").strip() for f in _CHARM_FRAME.finditer(text, m.end(), min(len(text), m.end() + 3000))]
        own = [f for f in frames[1:] if not f.startswith(("Cmi", "Csd", "Converse", "_start", "__libc", "charm_main"))]
        at = f" in {own[0]}" if own else ""
        who = (f"PE {m.group('rank')}, a worker thread of an SMP or multicore build (which process, this input does "
               "not say)") if threads else f"processor {m.group('rank')}"
        out.append(RankDeath(rank, signal, None, None, None, f"Charm++'s signal handler: {who} exiting on {words} "
                             f"({signal}){at}", offset=m.start(), raised=True, mpi=rank is not None))
    return out


def _codes(text: str, seen: set[int | None], rank_at: Callable[[int], int | None],
           went_on: Callable[[int], bool]) -> list[RankDeath]:
    """The scientific codes' own banners (the module's list), each (rank, product's words, offset)."""
    found: list[tuple[int | None, str, int, int]] = []       # (rank, text, start, end)
    if "ERROR" in text:
        for m in finditer(_LAMMPS, text):
            site = m.group("site") or m.group("site2")
            who = f"error on proc {m.group('rank')}" if m.group("rank") else "error (error->all: every rank stops)"
            found.append((_int(m.group("rank")), f"LAMMPS's {who}: {m.group('what').strip()}"
                          + (f" ({site})" if site else ""), m.start(), m.end()))
    for m in finditer(_PETSC, text):
        lines = [x.group("what") for x in _PETSC_LINE.finditer(text, m.end(), min(len(text), m.end() + 600))][:2]
        lines = [x for x in lines if x and not x.startswith(("See ", "Petsc Release", "#", "----"))]
        if not lines or lines[0].startswith("Signal received"):
            continue                        # (the signal's own lines, "Caught signal number 11 SEGV", say it)
        found.append((_int(m.group("rank")), f"PETSc's error: {': '.join(lines)}", m.start(), m.end()))
    for m in finditer(_DEALII, text):
        block = text[m.end():m.end() + 2000]
        info = re.search(r"Additional information:[ \t]*\n(?P<what>[^\n]+)", block)
        cond = re.search(r"The violated condition was:[ \t]*\n(?P<what>[^\n]+)", block)
        told = info or cond
        what = told.group("what").strip() if told is not None else ""
        close = re.search(r"^-{20,}[ \t]*$", block, re.MULTILINE)      # (its closing line, after its stacktrace)
        found.append((None, f"deal.II's exception (line {m.group('line')} of {m.group('file')})"
                      + (f": {what}" if what else ""), m.start(), m.end() + (close.end() if close else 0)))
    for m in finditer(_MOOSE, text):
        what = _lines_after(text, m.end(), 3, stop=("Stack frames",))
        if what.startswith("The following error occurred in"):     # (the object's line, then the message)
            at = text.find(what.split()[-1], m.end())
            # (its first line: the lines after it are the next block's where no empty line ends the message)
            more = _lines_after(text, text.find("\n", at) if at >= 0 else m.end(), stop=("Stack frames",))
            what = f"{more} ({what})" if more else what
        found.append((None, f"MOOSE's error{': ' + what if what else ''}", m.start(), m.end()))
    for m in finditer(_CP2K, text):
        box_end = _CP2K_END.search(text, m.end(), min(len(text), m.end() + 3000))
        if box_end is None:
            continue
        words = [re.sub(r"^[ \t]*\*[ \t/|\\_O()]*|[ \t]*\*[ \t]*$", "", line).strip()
                 for line in text[m.end():box_end.start()].split("\n")]
        what = " ".join(w for w in words if w)
        stopper = _CP2K_RANK.search(text, box_end.end(), min(len(text), box_end.end() + _ABORT_WINDOW))
        found.append((_int(stopper.group("rank")) if stopper else None, f"CP2K's abort: {what}", m.start(),
                      box_end.end()))
    for m in finditer(_QE, text):
        above = text[max(0, m.start() - 200):m.start()].rstrip().rsplit("\n", 1)[-1].strip()
        if not above.startswith("%%%%"):
            continue
        what = _lines_after(text, m.end(), 1)
        found.append((None, f"Quantum ESPRESSO's error in routine {m.group('routine')} ({m.group('code')})"
                      + (f": {what}" if what else ""), m.start(), m.end()))
    for m in finditer(_CHARM, text):
        reason = re.match(r"[ \t]*\n?[ \t]*Reason: (?P<what>[^\n]+)", text[m.end():m.end() + 400])
        what = f" (CmiAbort): {reason.group('what').strip()}" if reason else " (CmiAbort)"
        build = _CHARM_THREADS.search(text) if "Charm++> Running in " in text else None
        if build is not None and int(build.group("workers") or build.group("threads")) > 1:
            where = ("SMP build, not a process's rank (which process ran it, this input does not say)"
                     if build.group("workers") else "multicore build's one process, not a rank")
            found.append((None, f"Charm++'s abort of PE {m.group('rank')}, a worker thread of this {where}{what}",
                          m.start(), m.end()))
            continue
        found.append((int(m.group("rank")), "Charm++'s abort of processor " + m.group("rank") + what,
                      m.start(), m.end()))
    mpas_task = _last_before(_MPAS_TASK, text)
    for m in finditer(_MPAS, text):
        task = mpas_task(m.start())
        found.append((_int(task.group("rank")) if task else None, f"MPAS's critical error: {m.group('what')}",
                      m.start(), m.end()))
    for m in finditer(_TEUCHOS, text):
        block = text[m.end():m.end() + 1500]
        test = re.search(r"Throw test that evaluated to true: (?P<test>[^\n]+)\n\s*\n[ \t]*(?P<what>[^\n]*)", block)
        thrown = f": {test.group('what').strip() or test.group('test').strip()}" if test else ""
        found.append((int(m.group("rank")), f"Trilinos' (Teuchos) {m.group('type')} on p={m.group('rank')}{thrown}",
                      m.start(), m.end()))
    for m in finditer(_FMS, text):
        found.append((int(m.group("rank")), f"FMS's FATAL from PE {m.group('rank')}: {m.group('what')}",
                      m.start(), m.end()))
    if "ARMCI " in text:
        for m in finditer(_ARMCI, text):
            if m.group("func"):
                what = f"ARMCI's assertion failed in {m.group('func')}() ({m.group('site')}): {m.group('cond')}"
            else:
                where = f" in {m.group('efunc')} ({m.group('esite')})" if m.group("efunc") else ""
                what = f"ARMCI's error{where}: {m.group('what') or _lines_after(text, m.end())}"
            found.append((_int(m.group("rank")), what, m.start(), m.end()))
    for m in finditer(_SU2, text):
        exit_ = _SU2_EXIT.search(text, m.end(), min(len(text), m.end() + 1500))
        if exit_ is None:
            continue
        body = [line.strip() for line in text[m.end():exit_.start()].split("\n") if line.strip().strip("-")]
        found.append((None, f"SU2's error in {m.group('where')}: {' '.join(body)}", m.start(), exit_.end()))
    for m in finditer(_SPECFEM, text):
        earlier = [line.strip() for line in text[max(0, m.start() - 600):m.start()].split("\n") if line.strip()]
        found.append((int(m.group("rank")), "SPECFEM's error (exit_MPI) on proc " + m.group("rank")
                      + (f": {earlier[-1]}" if earlier else ""), m.start(), m.end()))
    for m in finditer(_GFORTRAN, text):
        where = f", at line {m.group('line')} of {m.group('file').strip()}" if m.group("line") else ""
        found.append((None, f"Fortran runtime error (gfortran{where}): {m.group('what')}", m.start(), m.end()))
    for m in finditer(_IFORT, text):
        if _IFORT_SIGNAL.search(m.group("what")) is None:   # (its signals: crashlog's)
            found.append((None, f"Fortran runtime error (Intel's forrtl severe ({m.group('code')})): {m.group('what')}",
                          m.start(), m.end()))
    for m in finditer(_GEOS, text):
        lines = text[m.end():m.end() + 1500].split("\n")[1:5]
        banner = "\n".join(lines[:next((i for i, line in enumerate(lines) if not line.strip()), len(lines))])
        told = _GEOS_RANK.search(banner)
        what = told.group("what") if told else next(
            (line.strip() for line in banner.split("\n") if line.strip() and not line.strip().startswith("*****")), "")
        found.append((_int(told.group("rank")) if told else None,
                      f"GEOS's error (at {m.group('loc')})" + (f": {what}" if what else ""), m.start(), m.end()))
    found += hpc_codes.banners(text)        # (session 47's codes: GADGET, MFEM, SIESTA, NWChem, ABINIT, VASP, GASNet)
    found.sort(key=lambda item: item[2])
    out: list[RankDeath] = []
    for index, (rank, what, start, end) in enumerate(found):
        if went_on(end):
            continue
        host: str | None = None
        own = rank is not None
        rank = rank_at(start) if rank is None else rank
        if rank is None:                    # the MPI abort record right after it, before the next banner
            stop = min(len(text), end + _ABORT_WINDOW, found[index + 1][2] if index + 1 < len(found) else len(text))
            abort = _ABORT_RANK.search(text, end, stop)
            if abort:
                rank = int(next(g for g in abort.groups() if g is not None))
            elif (srun := fatal_ending.srun_task_after(text, end, stop)) is not None:
                rank, host = srun           # (srun's one task record after it: that task's, on that node)
        if rank is not None and rank in seen:
            continue
        seen.add(rank)
        out.append(RankDeath(rank, None, None, host, None, " ".join(what.split())[:400], offset=start, raised=True,
                             mpi=own, end=end))
    return out


def _last_before(pattern: re.Pattern[str], text: str) -> Callable[[int], re.Match[str] | None]:
    """The last match of ``pattern`` that ends at or before an offset (a line's start: the header lines above a
    banner): the matches found once, then a bisect per question (a scan of the text before each banner made a log
    of many banners quadratic)."""
    found: list[re.Match[str]] = []
    ends: list[int] = []

    def before(offset: int) -> re.Match[str] | None:
        if not ends:
            found.extend(finditer(pattern, text))
            ends.extend(m.end() for m in found)
            ends.append(len(text) + 1)             # (made: never again, even where nothing matched)
        at = bisect_right(ends, offset)
        return found[at - 1] if at else None

    return before


def _went_on(text: str) -> Callable[[int], bool]:
    """Whether the run went on past a banner that ends at an offset: progress or the run's own word that it ended
    well in the 40 lines after it; further on, at any distance, a numbered progress line (a step, an epoch, a loss)
    or a code's own normal end line (not a bare "Done." a job script echoes whatever came before it: found once, from
    the text's end); or the test that printed it passed: ctest's result line after it says Passed, where no failed
    test's result line comes just before it (ctest --output-on-failure prints a failed test's output after its
    result line)."""
    last: list[int] = []
    tests: list[tuple[int, bool]] = []
    aborts: list[int] = []
    gate: list[bool] = []          # (commands_may_fail_in(text): tested once, not at each failure line)

    def after(end: int) -> bool:
        # (a clean end after the failed command's runner said it failed and another command started is that command's)
        if not _after(end):
            return False
        if not gate:
            gate.append(commands_may_fail_in(text))
        return not another_command_in(text, end, gate=gate[0])

    def _after(end: int) -> bool:
        if not last:
            last.extend((_last_progress(text), max((m.start() for m in finditer(_CODE_END, text)), default=-1)))
            if "Test" in text:
                tests.extend((m.start(), m.group("how") == "Passed") for m in finditer(_CTEST, text))
            aborts.extend(m.start() for m in finditer(_JOB_ENDED, text))
        if last[1] > end:
            return True
        # (progress after the MPI runtime's abort or exit record of the job is another program's: a job script's
        # post-processing; only a code's own end line says a later run went on)
        ended = aborts[at] if (at := bisect_right(aborts, end)) < len(aborts) else -1
        if ended < 0 and (last[0] > end or went_on_after(text, end)):
            return True
        if ended >= 0 and went_on_after(text, end, min(40, text.count("\n", end, min(ended, end + 40000)))):
            return True
        at = bisect_right(tests, (end, True))
        return at < len(tests) and tests[at][1] and (at == 0 or tests[at - 1][1])
    return after


def _last_progress(text: str) -> int:
    """The offset of the text's last numbered progress line (a step, an epoch, an iteration, a loss: from the end
    back, lines that hold none of progress's words passed over by a substring test), else -1."""
    stop = len(text)
    while stop > 0:
        start = text.rfind("\n", 0, stop) + 1
        line = text[start:stop]
        if mentions_progress(line) and is_progress(line) and any(ch.isdigit() for ch in line):
            return start
        stop = start - 1
    return -1


def _int(value: str | None) -> int | None:
    return int(value) if value is not None else None


_WRF_AT = lazy_regex(r"FATAL CALLED FROM FILE:\s*(?P<file>\S+)\s+LINE:\s*(?P<line>\d+)\s*(?P<why>.*)$")


def _wrf_reason(what: str) -> str:
    """WRF's message after its "FATAL CALLED" rule: the reason on the line after "FATAL CALLED FROM FILE: <f> LINE:
    <n>", with that place after it ("cfl error on task (called from <stdin> line 981)"); the place alone where no
    reason follows."""
    at = _WRF_AT.match(what)
    if at is None or not at.group("why").strip():
        return what
    return f"{at.group('why').strip()} (called from {at.group('file')} line {at.group('line')})"


def _sentences(what: str, limit: int = 300) -> str:
    """A message joined from wrapped lines, cut to ``limit`` at its last whole sentence where it is longer."""
    if len(what) < limit:
        return what
    end = what.rfind(". ", 0, limit)
    return what[:end + 1] if end > 0 else what[:limit]


def _foam_aborts(text: str, end: int) -> bool:
    """Whether OpenFOAM's fatal error banner ending at ``end`` ends with its own "FOAM aborting" (error::abort()'s
    ::abort(), _FOAM_ABORTING), the first of its end lines after it, before another banner."""
    if "FOAM aborting" not in text:
        return False
    after = _FOAM_END.search(text, end + 1, min(len(text), end + _FOAM_REACH))
    return after is not None and _FOAM_ABORTING.match(text, after.start()) is not None


def _lines_after(text: str, end: int, most: int = 1, stop: tuple[str, ...] = (), skip: tuple[str, ...] = (),
                 breaks: bool = False) -> str:
    """Up to ``most`` non-empty lines after offset ``end``'s line, each without a rank prefix, to the first empty line
    after them, joined: a banner's message. A line that starts with ``stop`` ends them, one that starts with ``skip``
    is passed over (a banner's rule of dashes). ``breaks``: a line that ends a sentence of its own is joined to the
    next with a sentence break (_OWN_LINE_END: a short line without an end mark before a capitalised word)."""
    at = text.find("\n", end) + 1
    out: list[str] = []
    for _ in range(most + _NEXT_LINES - 1):
        if at <= 0 or at >= len(text):
            break
        nxt = text.find("\n", at)
        line = text[at:nxt if nxt >= 0 else len(text)]
        line = line[_FOAM_PREFIX.match(line).end():].strip()        # type: ignore[union-attr]
        at = nxt + 1 if nxt >= 0 else -1
        if stop and line.startswith(stop):
            break
        if skip and line.startswith(skip):
            continue
        if not line:
            if out:
                break
            continue
        if breaks and out and _OWN_LINE_END.search(out[-1]) and _SENTENCE_START.match(line):
            out[-1] += "."
        out.append(line)
        if len(out) >= most:
            break
    return " ".join(" ".join(out).split())[:300]


# A message's own line, not a wrapped one: shorter than a wrap's width (GROMACS wraps at 80 columns), ending in a word,
# a number or a bracket, with no end mark; the next line's first word capitalised (a lower-case word, not an acronym)
# starts a new sentence: "Too many LINCS warnings (1001)" / "If you know what you are doing ..."
_OWN_LINE_END = lazy_regex(r"^.{1,59}[\w)\]]$")
_SENTENCE_START = lazy_regex(r"[A-Z][a-z]")
