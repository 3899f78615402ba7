"""More scientific codes' and HPC runtimes' own fatal-error words (session 47), in the formats their sources print,
each the error of the process that printed it (an exception of that rank, not a signal); read beside solver_errors'
banners, which decides whose they are (the banner's own rank words, else its line's prefix, else the MPI abort record
after it) and whether the run went on past them:

- GADGET's (Gadget-2/3, AREPO, GIZMO: its ``terminate(x)`` macro; GADGET-4's ``Terminate(...)``, behind its
  ``TERMINATE: ******!!!!!******`` head) ``code termination on task=N, function 'f()', file 'f.c', line L: 'message'``:
  rank N's (``ThisTask``, its rank in MPI_COMM_WORLD);
- MFEM's (``MFEM_ABORT``, ``MFEM_VERIFY``: mfem_error, then MPI_Abort) ``MFEM abort: <message>`` and ``Verification
  failed: (<condition>) is false:`` with its `` --> <message>`` line, then `` ... in function:`` and `` ... in file:``;
- SIESTA's (``die()``) message, then ``Stopping Program from Node:    N`` (rank N), then MPI_Abort;
- NWChem's (``errquit``) box: a rule of 72 dashes, `` <message>   <code>``, a rule, a rule, ``current input line :``;
- ABINIT's YAML error document: ``--- !ERROR`` (or ``--- !BUG``), ``src_file:``, ``src_line:``, its optional
  ``mpi_rank: N``, ``message: |`` and the message's indented lines to ``...`` (its ``Action:`` advice left out);
- VASP's box: the ``EEEEEEE  RRRRRR`` letters, the message between ``|`` borders, then ``---->  I REFUSE TO CONTINUE
  WITH THIS SICK JOB ... BYE!!! <----``;
- GASNet's (``gasneti_fatalerror``; under Chapel, UPC++, Legion's GASNet network) ``*** FATAL ERROR (proc N):
  <message>`` (rank N: GASNet's node), and where the message is UPC++'s box on the lines after it (``UPC++ fatal
  error:``, `` on process N (host)``, `` at <file>:<line>``, `` in function: ...``, the message), that message;
- SAMRAI's (``TBOX_ERROR``: tbox::Utilities::abort, then MPI_Abort; also libROM's and the StackTrace library's copy of
  it, one backtick) ``Program abort called in file ``<file>'' at line L``, ``ERROR MESSAGE:``, then the message's
  lines; SAMRAI's parallel error stream puts ``P=NNNNNNN:`` (the rank, seven digits) before each of its lines (the
  next one may come joined to its first, a long line's wrap undone);
- MITgcm's ``ABNORMAL END: S/R <ROUTINE>`` (its ``STOP 'ABNORMAL END: S/R ...'``; gfortran prints ``STOP`` before
  it), behind MITgcm's ``(PID.TID NNNN.TTTT)`` head where its printing routines put one (NNNN: its process, the rank);
- legacy DOLFIN's (FEniCS up to 2019, ``dolfin_error``) block: ``*** Error:   <message>``, ``*** Reason:  <reason>``,
  ``*** Where:   This error was encountered inside <file>.``, ``*** Process: N`` (rank N, its rank in MPI_COMM_WORLD;
  without that line the block names no rank), also with the asterisks a Markdown paste drops;
- NEMO's (``ctl_stop``) `` ===>>> : E R R O R`` with its rule of ``=`` under it, then the message's lines (its ``STOP``
  / ``MPPSTOP`` word passed over);
- ORCA's ``ORCA finished by error termination in <module>``, with the ``[file <source>]: <message>`` line just above it
  where there is one (the program is ORCA's driver: no rank of its own);
- Legion's logger line of an error or fatal level, ``[N - <thread>] <seconds> {5}{runtime}: [error C] LEGION ERROR:
  <message>`` (N: the Legion node, the process's rank in the job);
- Enzo's (enzo-dev's my_exit) record of its failing end, ``<file>:<line> <N> ABORT ON EXIT_FAILURE!`` (or ``ABORT ON
  UNKNOWN EXIT VALUE <v>!``): the source line, then processor N (MyProcessorNumber, its rank in MPI_COMM_WORLD), the
  program's message on the line above it; and its fatal exception (ENZO_FAIL's EnzoFatalException), ``Caught fatal
  exception:``, the message in quotes on a line of its own, ``at <file>:<line>``, its backtrace, then ``Failure
  reported on processor N`` (rank N) where the program catches it: one error, the record's and the exception's;
- Chapel's runtime error, ``<file>.chpl:<line>: error: <message>`` (``halt reached - ...``, an out-of-bounds index);
- Gaussian's end of a run in error (its link 1's ``Lnk1e``, after the failing link's own message on the lines above):
  `` Error termination via Lnk1e in /opt/g16/l103.exe at Wed May 11 20:15:04 2011.`` (the link by its program, l103
  the optimizer, l502 the SCF; Gaussian 03 and 09 name the time, 16 may not) and `` Error termination request processed
  by link 9999.`` (an optimization out of steps), with the message line above it where there is one (the program is
  Gaussian's, and its Linda workers have no rank of this job);
- R's uncaught error as Rscript (a batch job's R, an R cluster's main process) ends on it (src/main/errors.c,
  verrorcall_dflt, then the non-interactive end): ``Error in <call> : <message>`` (the message on the next line,
  indented, where the call is long) or ``Error: <message>``, then its ``Calls: a -> b -> c`` line (and ``In addition:
  Warning message:`` with its warnings) and ``Execution halted``, or in an interactive session recover()'s ``Enter a
  frame number, or 0 to exit`` (options(error = recover)), or system.time()'s ``Timing stopped at: <times>``: read only
  with one of those R's own words after it (an error R caught and went on past is none); or where the input ends at
  the error (a paste cut there, an R cluster's master under mpirun whose output stops): ``Error in <call> :`` at its
  line's end with the message on the next line, indented (R's own layout of a long call), or ``Error in f(...) :
  <message>``, or rlang's layout (the tidyverse's errors: ``Error in `f()`:`` or ``Error:``, then ``! <message>``),
  followed only by R's further error lines, their messages, its ``Calls:`` line, the warnings R adds after the error
  (``In addition: Warning message:`` and its ``In <call> :`` lines), rlang's bullets, ``Backtrace:`` and its
  ``rlang::last_trace()`` hint, and blank lines.

Each is read only at a line's start (Markdown quoting or a code span's backtick may come before it): the same words in
a sentence are not the program's. ``banners(text)`` -> (rank or None, words, start, end) in text order. Never raises.
"""

from __future__ import annotations

import re

from triage.lazy_regex import lazy_regex
from triage.parsing.progress import is_progress
from triage.parsing.regex_gate import finditer

MARKERS = ("ode termination on task=", "MFEM abort: ", "Verification failed: (", "Stopping Program from Node:",
           "current input line :", "--- !ERROR", "--- !BUG", "I REFUSE TO CONTINUE WITH THIS SICK JOB",
           "*** FATAL ERROR (proc ", "Program abort called in file `", "ABNORMAL END: ",
           "This error was encountered inside ", "E R R O R", "ORCA finished by error termination in ", "LEGION ERROR:",
           ".chpl:", "Error termination ", "Execution halted", "Enter a frame number, or 0 to exit",
           "Timing stopped at: ", "Error in ", "Error:", "ABORT ON ", "Caught fatal exception:")

_LEAD = r"^[ \t>*`]*"
_GADGET = lazy_regex(_LEAD + r"(?:TERMINATE: \*+!+\*+[ \t]+)?[Cc]ode termination on task=(?P<rank>\d{1,7}), "
                     r"function '?(?P<func>[^,\n]+?)'?, file '?(?P<file>[^,\n]+?)'?, line (?P<line>\d+):[ \t]*"
                     r"'?(?P<what>[^\n]*?)'?[ \t]*$", re.MULTILINE)
_MFEM = lazy_regex(_LEAD + r"(?:MFEM abort: (?P<what>[^\n]*?)|Verification failed: \((?P<cond>[^\n]*)\) is false:"
                   r"[ \t]*\n[ \t]*--> (?P<vwhat>[^\n]*?))[ \t]*$", re.MULTILINE)
_MFEM_WHERE = lazy_regex(r"[ \t]*\.\.\. in file: (?P<file>[^\n]+?)[ \t]*$", re.MULTILINE)
_SIESTA = lazy_regex(_LEAD + r"Stopping Program from Node:[ \t]*(?P<rank>\d{1,7})[ \t]*$", re.MULTILINE)
_RULE72 = r"[ \t]*-{60,}[ \t]*\n"
_NWCHEM = lazy_regex(r"^" + _RULE72 + r"[ \t]*(?P<what>\S[^\n]*?)[ \t]+(?P<code>-?\d+)[ \t]*\n" + _RULE72 + _RULE72
                     + r"[ \t]*current input line :", re.MULTILINE)
_ABINIT = lazy_regex(r"^--- !(?P<kind>ERROR|BUG)[ \t]*\n(?P<head>(?:[a-z_]+:[^\n]*\n){0,6}?)message: \|[ \t]*\n"
                     r"(?P<body>(?:[ \t]+[^\n]*\n|[ \t]*\n){1,40}?)\.\.\.[ \t]*$", re.MULTILINE)
_ABINIT_FIELD = lazy_regex(r"^(?P<key>src_file|src_line|mpi_rank): (?P<value>[^\n]*?)[ \t]*$", re.MULTILINE)
# (its box's rows may come joined on one line, "|...||...|": a terminal box's borders taken as a wrapped line's)
_VASP = lazy_regex(r"-+>[ \t]+I REFUSE TO CONTINUE WITH THIS SICK JOB")
_VASP_ART = lazy_regex(r"EEEEEEE +R +R +R +R +OOOOOOO +R +R[^|\n]*")
_GASNET = lazy_regex(_LEAD + r"\*\*\* FATAL ERROR \(proc (?P<rank>\d{1,7})\):[ \t]*(?P<what>[^\n]*?)[ \t]*$",
                     re.MULTILINE)
_SAMRAI = lazy_regex(_LEAD + r"(?P<head>P=(?P<rank>\d{1,7}):)?Program abort called in file "
                     r"`{1,2}(?P<file>[^'`\n]*)'{1,2} at line (?P<line>\d+)(?=[ \t]*$|P=\d)", re.MULTILINE)
_MITGCM = lazy_regex(_LEAD + r"(?:\(PID\.TID (?P<rank>\d{1,7})\.\d{1,7}\)[ \t]+)?(?:STOP[ \t]+)?ABNORMAL END: "
                     r"(?P<where>S/R [A-Za-z_][\w]*(?:[ \t]*\([^)\n]*\))?)[ \t]*$", re.MULTILINE)
_NOT_MESSAGE = lazy_regex(r"MPI_A(?:bort|BORT)|^srun: |^\[\S+:\d+\] |^=+$")
_MITGCM_ERROR = lazy_regex(r"\*\*\* ERROR \*\*\*[ \t]*(?P<what>[^\n]*?)[ \t]*$", re.MULTILINE)
# legacy DOLFIN's dolfin_error() block (FEniCS 2019 and before): "*** Error:   <what>", "*** Reason:  <why>",
# "*** Where:   This error was encountered inside <file>.", "*** Process: N" (its rank in MPI_COMM_WORLD); a Markdown
# paste may lose the asterisks
_DOLFIN = lazy_regex(_LEAD + r"Error:[ \t]+(?P<what>[^\n]*?)[ \t]*\n[ \t>*`]*Reason:[ \t]+(?P<why>[^\n]*?)[ \t]*\n"
                     r"[ \t>*`]*Where:[ \t]+This error was encountered inside (?P<file>[^\n]*?)\.?[ \t]*"
                     r"(?:\n[ \t>*`]*Process:[ \t]+(?P<rank>\d{1,7}|unknown)[ \t]*)?$", re.MULTILINE)
_GASNET_AT = lazy_regex(r"^in \w+\(\) at [^:\n]+:\d+: ")
_UPCXX = lazy_regex(r"[ \t]*/{20,}[ \t]*\n[ \t]*UPC\+\+ [^\n]*:[ \t]*\n(?P<body>(?:[^\n/][^\n]*\n|[ \t]*\n){1,30}?)"
                    r"[ \t]*/{20,}")
_NEMO = lazy_regex(_LEAD + r"===>>> : E R R O R[ \t]*\n(?:[ \t]*\n)?[ \t]*=+[ \t]*\n(?P<body>(?:[^\n]*\n?){1,8})",
                   re.MULTILINE)
_NEMO_SKIP = ("STOP", "MPPSTOP", "huge E-R-R-O-R", "===>>>")
_ORCA = lazy_regex(_LEAD + r"ORCA finished by error termination in (?P<module>[^\n]+?)[ \t]*$", re.MULTILINE)
_ORCA_FILE = lazy_regex(r"^[ \t]*\[file (?P<file>[^\]\n,]+)(?:, line \d+)?\]:[ \t]*(?P<what>[^\n]*?)[ \t]*$",
                        re.MULTILINE)
_LEGION = lazy_regex(_LEAD + r"\[(?P<rank>\d{1,7}) - [0-9a-fx]+\][ \t]+[\d.]+[ \t]+\{[56]\}\{\w+\}:[ \t]*"
                     r"(?:\[error \d+\][ \t]*)?LEGION ERROR:[ \t]*(?P<what>[^\n]*?)[ \t]*$", re.MULTILINE)
# a line of a code's iteration table: a label, then numbers only ("scf:    2   -3456.22   -3456.22   0.023")
_NUMBERS = lazy_regex(r"^[\w.:-]{0,12}(?:[ \t]+[-+]?\d[\d.eEdD+-]*){3,}[ \t]*$")
# (a viewer's "[N] " line number may stand before it: a paste of a few lines keeps it)
_GAUSSIAN = lazy_regex(_LEAD + r"(?:\[\d+\][ \t]*)?Error termination "
                       r"(?:via Lnk1e in (?P<path>\S*?\bl(?P<link>\d{3,4})\.exe)(?: at "
                       r"[^\n]*?)?|request processed by link (?P<request>\d{3,4}))\.?[ \t]*$", re.MULTILINE)
# R's own words after an uncaught error: Rscript's end ("Execution halted"), recover()'s frame menu of an interactive
# session run with options(error = recover) ("Enter a frame number, or 0 to exit"), system.time()'s report of the
# expression the error stopped ("Timing stopped at: <user> <system> <elapsed>")
_R_HALTED = lazy_regex(_LEAD + r"(?:Execution halted|Enter a frame number, or 0 to exit|Timing stopped at: [\d. ]+?)"
                       r"[ \t]*$", re.MULTILINE)
# (base R's "Error in <call> : <message>" and "Error: <message>"; rlang's (the tidyverse's) "Error in `<call>`:" and
# "Error:" with its message on the next line, after "! ")
_R_ERROR = lazy_regex(_LEAD + r"Error(?: in (?P<call>[^\n]+?) :| in (?P<rcall>`[^\n]+?`):|:)"
                      r"[ \t]*(?P<what>[^\n]*?)[ \t]*$", re.MULTILINE)
_R_BETWEEN = 40         # (lines between the error and R's end: its Calls line, the warnings R adds, a traceback())
# R's error in its own layout, where nothing of R's end follows (the input ends at it): "Error in <call> :" at the
# line's end and the message on the next line indented by R ("Error in makeMPIcluster(.sfOption$nodes, ...  : " then
# "  MPI cluster of size 59 already running"), or a call's parentheses and the message on the same line
_R_ERROR_OWN = lazy_regex(_LEAD + r"\"?Error in (?P<call>[^\n]+?) :[ \t]*\n(?P<what>[ \t]*[^\s>*`][^\n]*?)[ \t]*$|"
                          + _LEAD + r"Error in (?P<fcall>[\w.]+(?:::[\w.]+)?\([^\n]*?\)) : (?P<fwhat>\S[^\n]*?)[ \t]*$|"
                          # rlang's layout: "Error in `f()`:" or "Error:", then "! <message>" (dplyr's "ℹ In argument:
                          # `z = f(y)`." and "Caused by error:" may come between)
                          + _LEAD + r"Error(?: in (?P<rcall>`[^`\n]+`))?:[ \t]*\n"
                          r"(?:[ \t>*`]*(?:ℹ [^\n]*|Caused by error[^\n]*:[ \t]*)\n){0,4}"
                          r"[ \t>*`]*! (?P<rwhat>\S[^\n]*?)[ \t]*$",
                          re.MULTILINE)
# what may follow it to the input's end: R's further errors, their messages (indented; the line after an error's head
# that ends at its colon, indented or not: a log's per-line stamp read off may take the indent with it), its Calls
# line, the warnings R adds after an error ("In addition: Warning message:" / "Warning messages:", then "In <call> :"
# or "1: In <call> :" with the message after it or on the next line, "There were 12 warnings (use warnings() to see
# them)"), rlang's lines (its "! " message, "ℹ"/"✖"/"•" bullets, "Caused by error in `g()`:", "Backtrace:" and its
# tree, "Run `rlang::last_trace()` to see where the error occurred."), blank lines
_R_TAIL_LINE = lazy_regex(r"[ \t>*`]*(?:Error in [^\n]+? :[^\n]*|Error: [^\n]*|Calls: [^\n]*|[ \t]+[^\n]*|"
                          r"(?:In addition: )?(?:Warning messages?:[ \t]*|"
                          r"There (?:were|was) \d+ (?:or more )?warnings? \(use warnings\(\) to see [^\n]*)|"
                          r"(?:\d+: )?In [^\n]+? :[^\n]*|"
                          r"[!ℹ✖•] [^\n]*|Caused by error(?: in `[^\n]+`)?:[ \t]*|Backtrace:[ \t]*|"
                          r"Run `rlang::last_(?:trace|error)\(\)` to see where the error occurred\.?[ \t]*|)")
_R_HEAD_ONLY = lazy_regex(r"[ \t>*`]*(?:(?:\d+: )?In|Error in) [^\n]+? :[ \t]*")
# an MPI library's error stack as R's message (Rmpi passes MPI's error string on: MPICH's and MS-MPI's "Other MPI
# error, error stack:" then a line for each call, "MPI_Comm_spawn(cmd=..., maxprocs=8, ...) failed" or
# "MPIR_Init_thread(586)..: ...", and the innermost error's words last, "Function not implemented"): R prints it as
# it is, its lines after the first unindented
_MPI_STACK_HEAD = lazy_regex(r"\berror stack:[ \t]*$")
_MPI_STACK_CALL = lazy_regex(r"[ \t>*`]*(?P<call>[A-Za-z_]\w*)\([^\n]*?\)\.*(?:: (?P<msg>[^\n]*?)| failed)[ \t]*$")
_MPI_STACK_LINES = 12
# Enzo's my_exit (src/enzo/enzo.C): fprintf(stderr, "%s:%d %d ABORT ON EXIT_FAILURE!\n", __FILE__, __LINE__,
# MyProcessorNumber), "... ABORT ON UNKNOWN EXIT VALUE %d!"; its EnzoFatalException (ErrorExceptions.h): "Caught fatal
# exception:", a blank line, "   '<message>'", "at <file>:<line>", then "Backtrace:" and its "BT symbol:" lines; the
# program's catch of it prints "Failure reported on processor %d"
_ENZO_EXIT = lazy_regex(_LEAD + r"(?P<file>[\w./-]+\.\w{1,4}):(?P<line>\d+) (?P<rank>\d{1,7}) ABORT ON "
                        r"(?:EXIT_FAILURE|UNKNOWN EXIT VALUE (?P<code>-?\d+))![ \t]*$", re.MULTILINE)
_ENZO_FAIL = lazy_regex(_LEAD + r"Caught fatal exception:[ \t]*\n(?:[ \t]*\n)?[ \t>*`]*'(?P<what>[^\n]*)'[ \t]*"
                        r"(?:\n[ \t>*`]*at (?P<file>[^\s:]+):(?P<line>\d+)[ \t]*)?$", re.MULTILINE)
_ENZO_RANK = lazy_regex(r"^[ \t>*`]*Failure reported on processor (?P<rank>\d{1,7})[ \t]*$", re.MULTILINE)
_ENZO_REACH = 6000      # (its backtrace's lines between the exception and the catch's line)
_CHAPEL = lazy_regex(_LEAD + r"(?P<file>[\w./$-]+\.chpl):(?P<line>\d+): error: (?P<what>[^\n]+?)[ \t]*$", re.MULTILINE)


def banners(text: str) -> list[tuple[int | None, str, int, int]]:
    """The module's words in ``text``: (rank the words name, else None; what the user reads; start; end)."""
    found: list[tuple[int | None, str, int, int]] = []
    for m in finditer(_GADGET, text):
        what = m.group("what").strip().strip("'")
        found.append((int(m.group("rank")), f"GADGET's code termination on task {m.group('rank')} (in "
                      f"{m.group('func')}, {m.group('file')} line {m.group('line')})" + (f": {what}" if what else ""),
                      m.start(), m.end()))
    for m in finditer(_MFEM, text):
        where = _MFEM_WHERE.search(text, m.end(), min(len(text), m.end() + 600))
        at = f" ({where.group('file')})" if where else ""
        if m.group("cond") is not None:
            what = f"MFEM's verification failed{at}: {m.group('vwhat') or m.group('cond')}"
        else:
            what = f"MFEM abort{at}: {m.group('what')}" if m.group("what") else f"MFEM abort{at}"
        found.append((None, what, m.start(), m.end()))
    for m in finditer(_SIESTA, text):
        above = [line.strip() for line in text[max(0, m.start() - 800):m.start()].split("\n") if line.strip()]
        above = [line for line in above if not line.startswith("Stopping Program from Node")]
        # (die()'s message is the line above; a progress line there, an SCF iteration's, is no message: the input
        # holds none)
        what = above[-1] if above and not is_progress(above[-1]) and not _NUMBERS.search(above[-1]) else ""
        found.append((int(m.group("rank")), f"SIESTA's error (die) on node {m.group('rank')}"
                      + (f": {what}" if what else ""), m.start(), m.end()))
    for m in finditer(_NWCHEM, text):
        found.append((None, f"NWChem's error (errquit, code {m.group('code')}): {m.group('what').strip()}",
                      m.start(), m.end()))
    for m in finditer(_ABINIT, text):
        fields = {f.group("key"): f.group("value") for f in _ABINIT_FIELD.finditer(m.group("head"))}
        lines = [line.strip() for line in m.group("body").split("\n") if line.strip()]
        told = [line for line in lines if not line.startswith(("Action:", "Action :"))] or lines
        site = f" ({fields['src_file']}:{fields.get('src_line', '?')})" if "src_file" in fields else ""
        rank = fields.get("mpi_rank", "")
        found.append((int(rank) if rank.isdigit() else None,
                      f"ABINIT's {m.group('kind')}{site}: {' '.join(told)}", m.start(), m.end()))
    for m in finditer(_VASP, text):
        art: re.Match[str] | None = None
        for art in _VASP_ART.finditer(text, max(0, m.start() - 2500), m.start()):
            pass
        if art is None:
            continue                # (the words without VASP's box: quoted, or a script's grep)
        words = [row.strip() for row in re.split(r"[|\n]", text[art.end():m.start()])]
        what = " ".join(w for w in words if w)
        found.append((None, f"VASP's error: {what}" if what else "VASP's error", art.start(), m.end()))
    for m in finditer(_GASNET, text):
        what = _GASNET_AT.sub("", m.group("what"))
        box = _UPCXX.match(text, m.end() + 1) if not what else None
        if box is not None:
            lines = [line.strip() for line in box.group("body").split("\n")]
            what = " ".join(line for line in lines
                            if line and not line.startswith(("on process ", "at ", "in function:")))
            what = f"UPC++'s fatal error: {what}" if what else "UPC++'s fatal error"
        found.append((int(m.group("rank")), f"GASNet's fatal error on proc {m.group('rank')}"
                      + (f": {what}" if what else ""), m.start(), box.end() if box else m.end()))
    for m in finditer(_SAMRAI, text):
        head = m.group("head") or ""
        said: list[str] = []
        end = m.end()
        # (its next line may come joined to it, "... at line 915P=0000003:ERROR MESSAGE:": a long line's
        # terminal wrap undone under a tool's own head)
        rest = text[m.end():m.end() + 1500]
        rest = rest.removeprefix("\n")
        for line in rest.split("\n")[:8]:
            body = line.strip(" \t>`")
            if head and not body.startswith(head):
                break                       # (the next line of another rank, or of the launcher)
            body = body[len(head):].strip()
            if not body or body.startswith(("Program abort called", "---")) or _NOT_MESSAGE.search(body):
                break                       # (the MPI runtime's or the launcher's record after it: not its message)
            end += len(line) + 1
            if body != "ERROR MESSAGE:":
                said.append(body)
        what = " ".join(said)
        samrai = f"SAMRAI's program abort ({m.group('file')} line {m.group('line')})"
        found.append((int(m.group("rank")) if m.group("rank") else None, samrai + (f": {what}" if what else ""),
                      m.start(), end))
    for m in finditer(_MITGCM, text):
        # the end's reason: the last *** ERROR *** line (PRINT_ERROR's) that names the routine that stopped ("S/R
        # CG2D: ..." or "CG2D: ...", as MITgcm's messages start), else one right above the end with only other ERROR
        # lines between; another routine's earlier message (a file it went on without) is no reason for this end
        routine = m.group("where")[4:].split("(", 1)[0].strip()
        error: re.Match[str] | None = None
        adjacent, cursor = True, m.start()
        for found_error in reversed(list(_MITGCM_ERROR.finditer(text, max(0, m.start() - 600), m.start()))):
            between = text[found_error.end():text.rfind("\n", 0, cursor) + 1]
            adjacent = adjacent and all(not line.strip() or "*** ERROR ***" in line or "ABNORMAL END" in line
                                        for line in between.splitlines())
            cursor = found_error.start()
            what = found_error.group("what")
            if what.startswith("ABNORMAL END"):
                continue                # (its own "*** ERROR *** ABNORMAL END: S/R X" line repeats the end)
            if adjacent or re.match(rf"(?:S/R[ \t]+)?{re.escape(routine)}\b", what):
                error = found_error
                break
        what = f": {error.group('what')}" if error is not None and error.group("what") else ""
        found.append((int(m.group("rank")) if m.group("rank") else None,
                      f"MITgcm's ABNORMAL END in {m.group('where')}{what}", m.start(), m.end()))
    for m in finditer(_DOLFIN, text):
        rank = m.group("rank")
        found.append((int(rank) if rank and rank.isdigit() else None,
                      f"DOLFIN's error (in {m.group('file')}): {m.group('what')} ({m.group('why')})", m.start(),
                      m.end()))
    for m in finditer(_NEMO, text):
        kept: list[str] = []
        end = pos = m.start("body")
        for line in m.group("body").split("\n"):
            pos += len(line) + 1
            if not line.strip():
                if kept:
                    break
                continue
            if not line.strip().startswith(_NEMO_SKIP):
                kept.append(line.strip())
                end = pos - 1    # (the message's last line: the abort record after it is searched from here)
        what = " ".join(kept[:2])
        found.append((None, f"NEMO's error (ctl_stop){': ' + what if what else ''}", m.start(), end))
    for m in finditer(_ORCA, text):
        line_above: re.Match[str] | None = None
        for line_above in _ORCA_FILE.finditer(text, max(0, m.start() - 400), m.start()):
            pass
        why = (f": {line_above.group('what')} ({line_above.group('file')})"
               if line_above and line_above.group("what") else "")
        found.append((None, f"ORCA finished by error termination in {m.group('module')}{why}", m.start(), m.end()))
    for m in finditer(_LEGION, text):
        found.append((int(m.group("rank")), f"Legion's error on node {m.group('rank')}: {m.group('what')}",
                      m.start(), m.end()))
    for m in finditer(_GAUSSIAN, text):
        # (the failing link's own message is the line above: "GrdOpt needs charges", "Convergence failure -- run
        # terminated."; a table's row of numbers there is no message)
        above = [line.strip() for line in text[max(0, m.start() - 600):m.start()].split("\n") if line.strip()]
        what = above[-1] if above and not _NUMBERS.search(above[-1]) and not is_progress(above[-1]) else ""
        link = f"link {m.group('link')} ({m.group('path').rsplit('/', 1)[-1]})" if m.group("link") \
            else f"link {m.group('request')}"
        found.append((None, f"Gaussian's error termination in {link}" + (f": {what}" if what else ""),
                      m.start(), m.end()))
    for m in finditer(_R_HALTED, text):
        r_error: re.Match[str] | None = None
        for r_error in _R_ERROR.finditer(text, max(0, m.start() - 4000), m.start()):
            pass
        if r_error is None or text.count("\n", r_error.end(), m.start()) > _R_BETWEEN:
            continue
        what = r_error.group("what")
        if not what:            # (the message on the next line, indented: a long call; rlang's after its "! ")
            what = text[r_error.end():m.start()].lstrip("\n").split("\n", 1)[0].strip().removeprefix("! ")
        named = r_error.group("call") or r_error.group("rcall")
        call = f" in {named}" if named else ""
        found.append((None, f"R's error{call}: {what}" if what else f"R's error{call}", r_error.start(), m.end()))
    if not any(words.startswith("R's error") for _rank, words, _start, _end in found):
        found += _r_error_at_end(text)
    found += _enzo(text)
    for m in finditer(_CHAPEL, text):
        found.append((None, f"Chapel's error ({m.group('file')}:{m.group('line')}): {m.group('what')}",
                      m.start(), m.end()))
    return sorted(found, key=lambda item: item[2])


def _enzo(text: str) -> list[tuple[int | None, str, int, int]]:
    """Enzo's my_exit record (processor N's failing end, the program's message on the line above it) and its fatal
    exception (its message, the rank of the catch's "Failure reported on processor N" after it); an exception right
    after a my_exit record is that record's own (my_exit raises it): one error."""
    found: list[tuple[int | None, str, int, int]] = []
    ends: list[int] = []
    for m in finditer(_ENZO_EXIT, text):
        above = [line.strip() for line in text[max(0, m.start() - 600):m.start()].split("\n") if line.strip()]
        what = above[-1] if above and not is_progress(above[-1]) and not _NUMBERS.search(above[-1]) else ""
        code = f" (exit value {m.group('code')})" if m.group("code") else ""
        found.append((int(m.group("rank")), f"Enzo's my_exit on processor {m.group('rank')}{code} ({m.group('file')} "
                      f"line {m.group('line')})" + (f": {what}" if what else ""), m.start(), m.end()))
        ends.append(m.end())
    for m in finditer(_ENZO_FAIL, text):
        if any(0 <= text.count("\n", end, m.start()) <= 2 for end in ends if end <= m.start()):
            continue            # (my_exit's own ENZO_FAIL: the record above says it)
        caught = _ENZO_RANK.search(text, m.end(), min(len(text), m.end() + _ENZO_REACH))
        at = f" (at {m.group('file')}:{m.group('line')})" if m.group("file") else ""
        found.append((int(caught.group("rank")) if caught else None,
                      f"Enzo's fatal exception{at}: {m.group('what')}", m.start(), m.end()))
    return found


def _r_error_at_end(text: str) -> list[tuple[int | None, str, int, int]]:
    """R's error in its own layout where the input ends at it (no "Execution halted" after it: a paste cut there):
    the first of the errors at the input's end, of R's master (no rank)."""
    tail = text[-20000:]
    offset = len(text) - len(tail)
    for m in finditer(_R_ERROR_OWN, tail):
        rest = tail[m.end():].split("\n")
        stack = _mpi_stack(m.group("what") or "", rest)
        if stack is not None:
            what = f"{(m.group('what') or '').strip()} {stack}"
            return [(None, f"R's error in {m.group('call')}: {what} (the input ends at it)", offset + m.start(),
                     offset + m.end())]
        if all(_R_TAIL_LINE.fullmatch(line) is not None or (at > 0 and _R_HEAD_ONLY.fullmatch(rest[at - 1]) is not None)
               for at, line in enumerate(rest)):
            call = m.group("call") or m.group("fcall") or m.group("rcall")
            what = (m.group("what") or m.group("fwhat") or m.group("rwhat")).strip()
            where = f" in {call}" if call else ""
            return [(None, f"R's error{where}: {what} (the input ends at it)", offset + m.start(), offset + m.end())]
    return []


def _mpi_stack(what: str, rest: list[str]) -> str | None:
    """An MPI library's error stack as the rest of R's message to the input's end (_MPI_STACK_HEAD): its calls, then
    at most one line of the innermost error's words, and blank lines; told as the calls that failed and those words."""
    if _MPI_STACK_HEAD.search(what) is None:
        return None
    lines = [line.strip() for line in rest if line.strip()]
    if lines and lines[-1].endswith('"'):
        lines[-1] = lines[-1][:-1].rstrip()     # (the quote that closes a paste put in quotes as a whole)
    found = [_MPI_STACK_CALL.match(line) for line in lines]
    calls = [m.group("call") for m in found if m is not None]
    free = [line for line, m in zip(lines, found, strict=True) if m is None]
    if not calls or len(lines) > _MPI_STACK_LINES or len(free) > 1 or (free and found[-1] is not None):
        return None             # (the free line, where there is one, is the innermost error's words: the last)
    said = " -> ".join(f"{call}()" for call in calls) + " failed"
    words = free[0] if free else (found[-1].group("msg") if found[-1] is not None else None)
    return f"{said}: {words}" if words else said
