"""Open MPI's own records of a rank that failed, beyond mpirun's "noticed that process rank N ... exited
on signal S" (read by :mod:`triage.parsing.launchers`):

- the error handler's block, printed by the rank whose MPI call failed (ompi/errhandler, MPI_ERRORS_ARE_FATAL)::

      [host:pid] *** An error occurred in MPI_Reduce
      [host:pid] *** reported by process [1911816193,0]      (job, rank; Open MPI 5: [prterun-host-1@1,0])
      [host:pid] *** on communicator MPI_COMM_WORLD
      [host:pid] *** MPI_ERR_ROOT: invalid root
      [host:pid] *** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,

  (older Open MPI: no "reported by" line: the rank is not said, the host of the prefix is);
- ``MPI_ABORT was invoked on rank 3 in communicator MPI_COMM_WORLD with errorcode 1`` (the rank called
  MPI_Abort: Open MPI then kills every process);
- MPICH's line for the same, printed as the process aborts: ``application called MPI_Abort(MPI_COMM_WORLD, 1) -
  process 10`` (Intel MPI: ``... - process 10``, then ``[cli_10]: aborting job:``);
- ``mpirun has exited due to process rank 2 with PID 0 on node n1 exiting improperly`` (it ended without
  MPI_Finalize: an exit the launcher did not expect);
- the notice of an MPI call made outside MPI's lifetime, printed by the process that made it::

      *** The MPI_Comm_rank() function was called before MPI_INIT was invoked.
      *** This is disallowed by the MPI standard.
      *** Your MPI job will now abort.
      [host:pid] Local abort before MPI_INIT completed completed successfully, but am not able to aggregate ...

  (or "after MPI_FINALIZE was invoked" / "Local abort after MPI_FINALIZE started"): that process aborted; before
  MPI_INIT it has no rank yet, so only its host and pid are said;
- ``prterun has exited due to process rank 6 with PID 31207 on node n42 calling "abort"`` (PRRTE's and Open MPI 4's
  word of a rank that called MPI_Abort: its own failure);
- MVAPICH2's fatal error handler, ``[r4i7n13:mpi_rank_40][MPIDI_CH3_Abort] Fatal error in MPI_Recv: Other MPI error,
  error stack:`` (rank 40's MPI call failed), and a program's own MPI error handler that prints a traceback, ``MPI
  traceback error handler called by rank: 2173`` (the MPI call its traceback goes through failed in that rank);
- Open MPI's TCP transport that could not connect to a peer (help-mpi-btl-tcp.txt's "client connect fail" box):
  ``WARNING: Open MPI failed to TCP connect to a peer MPI process.``, then ``Local host: pi02``, ``Message: connect()
  to 169.254.140.13:1026 failed``: a link between two processes failed (a network error of no rank), unless the job
  went on after the box;
- MPICH's fatal error record without its ``Abort(...) on node N`` head (the handler's text as a library passes it on
  or the program prints it: ``Fatal error in MPI_Allreduce: Other MPI error, error stack:``, mpi4py's
  ``mpi4py.MPI.Exception: Other MPI error, error stack:``) where MPICH's stack follows on the next line
  (``MPI_Allreduce(907).......: MPI_Allreduce(sbuf=..., count=707652794, ...) failed``, each line ``Function(line)...:``
  under the same prefix): the MPI call of a process failed, which rank the record does not say;
- MPICH's ch3:sock channel that could not connect to a peer (MPICH2, MS-MPI): ``[ch3:sock] rank 13 unable to connect
  to rank 12 using business card <port=55228 description="10.35.1.13 host13 " ...>``, then ``unable to connect to
  10.35.1.13 host13  on port 55228, no endpoint matches the netmask 10.37.0.0/255.255.0.0``: a link between two
  processes failed (a network error of no rank, as Open MPI's TCP box), unless the job went on after it;
- Cray MPICH's records of a rank's fatal error, which name the rank and its node: the older ``Rank 3 [Sat Nov 28
  07:00:04 2026] [c0-0c1s2n3] Fatal error in PMPI_Allreduce: Other MPI error, error stack:`` (then MPICH's stack) and
  the newer ``MPICH ERROR [Rank 0] [job id 2853270.0] [Fri Dec 13 13:41:36 2024] [frontier05084] - Abort(2665871) (rank
  0 in comm 0): Fatal error in PMPI_Init_thread: Other MPI error, error stack:`` (or after its Abort head any message:
  ``application called MPI_Abort(MPI_COMM_WORLD, 9) - process 0``, ``MPIDI_CRAY_init: GPU_SUPPORT_ENABLED is
  requested, but GTL library is not linked``): that rank's own MPI failure, on that node ("[Rank N]" is its rank in
  MPI_COMM_WORLD whatever the communicator); a line that quotes the words (after a quote mark) is no record. A fatal
  error in MPI_Init, before the process has a rank, is the older record without ``Rank N`` (``[Sun Oct 29 15:55:54
  2017] [c2-0c1s2n1] Fatal error in MPI_Init: ...``): a record of no rank on that node;
- Open MPI's runtime that failed to start, ``It looks like orte_init failed for some reason; your parallel process is
  likely to abort.`` (also prte_init, opal_init) with its failed step and ``--> Returned value ... instead of
  ORTE_SUCCESS``: no rank of the program ran, a record of no rank on the node of the ``[host:pid] ... ORTE_ERROR_LOG``
  lines before it; at a line's start, and not where the job went on after it;
- mpi4jax's line as it aborts the job on an MPI call's error code (its ``abort_on_error``): ``r3 | MPI_Allreduce
  returned error code 15: b'MPI_ERR_TRUNCATE: message truncated' - aborting`` (older: no error string), printed by
  the process whose call failed, ``rN`` its rank in the communicator; quoted without its ``rN |`` head it names no
  rank. Read at a line's start, with the head, the ``- aborting`` tail or an ``MPI_ERR_`` class in the error string
  (a sentence that says a call "returned error code 3" is no record), unless the job went on after it;
- Fujitsu MPI's job launcher's record of a rank it saw abort, ``[WARN] PLE 0608 plexec One of MPI processes was
  aborted.(rank=0)(nid=0xff33000e)(CODE=1903,...)``, read where that process's backtrace through MPI_Abort comes before
  it (``[fx0426:00065] [2] func:/opt/FJSVxtclanga/.../libmpi.so.0(MPI_Abort+0xa0) [...]``): the rank called MPI_Abort
  (its own error exit, not a signal); a line that quotes the words is no record;
- ``Primary job terminated normally, but 1 process returned a non-zero exit code``: a process failed, which one
  the box after it says ("The first process to do so was", read by :mod:`triage.parsing.launchers`) when it is
  in the input.

MPICH's own checks of sizes between ranks, a line of the stack under one of the records above (or under a head no
reader names, ``Fatal error in MPIDI_Cray_shared_mem_coll_tree_reduce: ...``): ``Message from rank 0 and tag 2
truncated; 8 bytes received but buffer size is 4`` (a receive, or a collective's, smaller than what a rank sent) and
``message sizes do not match across processes in the collective routine: Received 4 but expected 8``: the ranks'
calls disagree on a count or a datatype (a mismatch between ranks, MPI_SIZE_TEXT at the record's head), not one
rank's own error.

``parse_mpi_errors(text)`` -> MpiError records in text order. Never raises.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass, replace

from triage.lazy_regex import lazy_regex
from triage.parsing.progress import holds_failure_word, says_it_ended, went_on_after
from triage.parsing.regex_gate import holds_any

MARKERS = ("An error occurred in MPI_", "MPI_ABORT was invoked", "exiting improperly", "calling", "Primary job",
           "was invoked.", "Local abort ", "called MPI_Abort(", "job aborted, but has no info",
           "Fatal error in ", ") on node ", "Abort on node ", "error handler called by rank", "failed to TCP connect",
           "error stack:", "[ch3:sock]", "MPICH ERROR [Rank ", " returned error code ", "is aborting with error code",
           "plexec ", "_init failed for some reason", "Attempting to use an MPI routine", "internal ABORT - process ",
           "]: aborting job:")
# the words of an MPI start-up that failed before any rank ran (Open MPI's direct-launch box, its Slurm PMI
# component's own line): the job's end, printed where nothing follows, so a large log's tail (read whole) holds them;
# no needles of its large-log pass (tests/load/test_large_log_markers.py: the pass's cost steps up past 238)
END_MARKERS = ("direct launched using", "_init]: ")

_PREFIX = r"(?:\[(?P<host>[\w.-]+):(?P<pid>\d+)\] )?"
# (its asterisks, three in Open MPI's text, come one or two where Markdown took the rest: "** An error occurred in",
# "* reported by process [1510473729,0]")
# (a record with fewer than three is read only where its "reported by process" or "on communicator" line follows: a
# Markdown list item "* An error occurred in MPI_Init handling ..." is no record)
_ERROR = lazy_regex(_PREFIX + r"(?P<stars>\*{1,3}) An error occurred in (?P<call>MPI_\w+)")
# the block's other lines, within a few lines of its head (a process name: [job,rank] or [namespace@job,rank])
_REPORTED = lazy_regex(r"\*{1,3} reported by process \[(?:(?P<job>\d+)|[\w.-]+@(?P<job2>\d+)),(?P<rank>\d+)\]")
_COMMUNICATOR = lazy_regex(r"\*{1,3} on communicator (?P<comm>[^\n]+?)\s*$", re.MULTILINE)
_CODE = lazy_regex(r"\*{1,3} (?P<code>MPI_ERR_\w+): ?(?P<what>[^\n]*?)\s*$", re.MULTILINE)
# (the communicator's name: MPI_COMM_WORLD, a name the program set, or Open MPI's own for one it derived, "MPI
# COMMUNICATOR 5 DUP FROM 0"; the rank is the caller's rank in that communicator)
_ABORT = lazy_regex(r"MPI_ABORT was invoked on rank (?P<rank>\d+) in communicator (?P<comm>\S[^\n]*?)\s+with "
                    r"errorcode (?P<code>-?\d+)")
# Open MPI's names of derived communicators: a duplicate of MPI_COMM_WORLD (context id 0) keeps its ranks; a split
# or a group's communicator numbers its members anew
_DERIVED = lazy_regex(r"MPI COMMUNICATOR \d+ (?P<how>DUP|SPLIT|CREATE|SPLIT_TYPE)\b.*?FROM (?P<parent>\d+)")
_MPICH_ABORT = lazy_regex(r"application called MPI_Abort\((?P<comm>[^,()\n]+), (?P<code>-?\d+)\) - process "
                          r"(?P<rank>\d+)")
_IMPROPER = lazy_regex(r"(?:mpirun|mpiexec|prterun|orterun) has exited due to process rank (?P<rank>\d+) with PID "
                       r"(?P<pid>\d+) on\s+node (?P<host>[\w.-]+) exiting improperly")
# the same launcher's word of a process that called abort (prun:proc-ordered-abort; Open MPI 4's orterun the same):
# "prterun has exited due to process rank 6 with PID 31207 on node hpc-n042 calling "abort"" (a rank's MPI_Abort, or
# PMIx_Abort: its own failure, the other processes' signals after it its consequence)
_CALLED_ABORT = lazy_regex(r"(?:mpirun|mpiexec|prterun|orterun|prte|prun) has exited due to process rank (?P<rank>\d+) "
                           r"with PID (?P<pid>\d+) on\s+node (?P<host>[\w.-]+) calling\s*\"abort\"")
# MPICH's abort record's head, the one home of its spellings (MPID_Abort's "Abort(%d)%s%s: %s"; a build that prints no
# code, "Abort on node 3 (rank 3 in comm 0)"): "Abort(N)", or a bare "Abort" before " on node N (rank N in comm C)"
# (never the word in a sentence: no word or dot before it). Every reader of MPICH's abort (this module's, frameworks'
# rank deaths, solver_errors' abort after a banner, fatal_ending's teardown) builds on it
MPICH_ABORT_HEAD = r"(?<![\w.])Abort(?:\(-?\d+\)|(?= on node \d+ \(rank \d+ in comm \d+\)))"
# MPICH's (and Intel MPI's) fatal error handler (MPIR_Handle_fatal_error): "Abort(805421327) on node 5 (rank 5 in comm
# 0): Fatal error in PMPI_Allreduce: Other MPI error, error stack:" then the stack, innermost last ("...: OFI poll
# failed (...:Input/output error)"); the process then exits (an exit, not a signal). "node N" is its rank in
# MPI_COMM_WORLD (comm 0); in another communicator the rank is that one's. MPID_Abort's format is "Abort(%d)%s%s: %s"
# (" on node N" where MPI_COMM_WORLD exists, " (rank N in comm C)" where a communicator is known); a build that prints
# no code, "Abort on node 0 (rank 0 in comm 0): Fatal error in internal_Comm_split: ..." (MPICH 4's internal_ names),
# is the same record; before MPI_Init made MPI_COMM_WORLD, "Abort(940719887): Fatal error in internal_Init: ...", a
# record of no rank (Cray MPICH's "- Abort(N) (rank N in comm 0): ..." is its own record: _CRAY_NEW)
_MPICH_FATAL = lazy_regex(r"Abort(?:\((?P<code>-?\d+)\))?(?: on node (?P<node>\d+)(?: \(rank (?P<rank>\d+) in comm "
                          r"(?P<comm>\d+)\))?)?: Fatal error in (?P<call>\w+): (?P<what>[^,\n]+)")
# the same handler's and MPI_Abort's head alone (MPICH_ABORT_HEAD, with its code kept), "Abort(1) on node 2" (with or
# without "(rank 2 in comm 0)", its words cut or on no later line): MPICH's abort of that rank itself (an exit with the
# code, not SIGABRT); "node N" is its rank in MPI_COMM_WORLD (MPIR_Process.rank) whatever the communicator, not a host
_MPICH_BARE = lazy_regex(r"(?<![\w.])Abort(?:\((?P<code>-?\d+)\)|(?= on node \d+ \(rank \d+ in comm \d+\))) "
                         r"on node (?P<node>\d+)(?!\d)(?: \(rank (?P<rank>\d+) in comm (?P<comm>\d+)\))?(?! \(rank)"
                         r"(?!:? *(?:Fatal error|application called))")
# HPE MPT's record of a rank's own abort (MPI_Abort, or the program's abort through it): "MPT ERROR: Rank 459(g:459) is
# aborting with error code 1." then "Process ID: 64112, Host: r10i5n2, Program: ..." (the rank is MPI_COMM_WORLD's; an
# exit with the code, not a signal), at a line's start or after mpiexec's rank label ("459:"); a sentence that quotes
# the words has a word or a quote mark before them
_MPT_ABORT = lazy_regex(r"^[ \t]*(?:\d+:[ \t]*)?MPT ERROR: Rank (?P<rank>\d+)(?:\(g:\d+\))? is aborting with error "
                        r"code (?P<code>-?\d+)\.?[ \t]*(?:\n[^\n]*?Process ID: (?P<pid>\d+), Host: (?P<host>[\w.-]+))?",
                        re.MULTILINE)
# MVAPICH2's (CH3) fatal error handler in a rank: "[r4i7n13:mpi_rank_40][MPIDI_CH3_Abort] Fatal error in MPI_Recv:" then
# "Other MPI error, error stack:" and the stack, innermost last (its error, not a signal: the MPI call of that rank
# failed, as MPICH's "Abort(...) on node N ...: Fatal error in ..." says)
_MVAPICH_FATAL = lazy_regex(r"\[(?P<host>[A-Za-z0-9][\w.-]*):mpi_rank_(?P<rank>\d+)\]\[MPIDI_CH3_Abort\] "
                            r"Fatal error in (?P<call>\w+):\s*(?P<what>[^,\n]+)")
# an MPI error handler that prints a traceback, installed by the program (MPI_Comm_set_errhandler): "MPI traceback
# error handler called by rank:         2173", then the compiler's traceback through the MPI call that failed
# ("libmpi.so.12.0.2  ...  MPI_Comm_split  Unknown  Unknown")
_TRACEBACK_HANDLER = lazy_regex(r"MPI traceback error handler called by rank:\s*(?P<rank>\d+)")
# MPICH's PMI client's abort (src/pmi/simple, PMI_Abort: PMIU_printf's head "[cli_N]", N the process's PMI rank, its
# rank in MPI_COMM_WORLD; MPICH, MVAPICH2, Intel MPI): "[cli_83]: aborting job:", then the abort's message on the next
# line ("Fatal error in MPI_Init: Internal MPI error!, error stack:" and MPICH's stack, or "application called
# MPI_Abort(MPI_COMM_WORLD, 1) - process 83"); a reporter's "> " quote before each line too
_PMI_ABORT = lazy_regex(r"^[ \t>*`]*\[cli_(?P<rank>\d{1,7})\]: aborting job:[ \t]*\n(?P<lead>[ \t>*`]*)"
                        r"(?P<msg>\S[^\n]*?)[ \t]*$", re.MULTILINE)
_PMI_FATAL = lazy_regex(r"Fatal error in (?P<call>\w+): (?P<what>[^,\n]+)")
# MPICH's fatal error record without its Abort head: "Fatal error in MPI_Allreduce: Other MPI error, error stack:"
# (MPICH 4: "Fatal error in internal_Allreduce: ..."; or mpi4py's exception of the same: "mpi4py.MPI.Exception: Other
# MPI error, error stack:"), read only where MPICH's stack follows on the next line under the same prefix (a sentence
# that quotes the words has no such line)
_MPICH_RANKLESS = lazy_regex(r"^(?P<prefix>[^\n]*?)(?:Fatal error in (?P<call>(?:P?MPI|internal)_\w+)|"
                             r"mpi4py\.MPI\.Exception): (?P<what>[^,\n]+), error stack:[ \t]*$", re.MULTILINE)
# Cray MPICH's older record, "Rank 3 [Sat Nov 28 07:00:04 2026] [c0-0c1s2n3] Fatal error in PMPI_Allreduce: ..." (or
# the rank's MPI_Abort: "Rank 0 [Thu Nov 14 16:18:20 2019] [c0-0c0s2n0] application called MPI_Abort(MPI_COMM_WORLD,
# 10) - process 0", its code and its node with it; MPICH 4's "internal_X" names as PMPI_X), at a
# line's start or after a launcher's or a timestamp's prefix (no quote mark or word before "Rank": a sentence that
# quotes it is no record); in MPI_Init, before the process has a rank, without "Rank N " (a record of no rank: at a
# line's start, or after srun's "N: " or Open MPI's "[J,N]<stderr>:" tag)
_CRAY_OLD = lazy_regex(r"^(?:[^\n\"'`\u201c]{0,80}?(?<![\w\"'`])Rank (?P<rank>\d+) |"
                       r"[ \t]*(?:\d+: |\[\d+,\d+\]<std(?:out|err)>:[ \t]*)?)"
                       r"\[(?P<date>[A-Z][a-z]{2} [^\]\n]{0,40}?\d:\d\d[^\]\n]{0,20})\] "
                       r"\[(?P<host>[A-Za-z0-9][\w.-]*)\] (?:Fatal error in (?P<call>(?:P?MPI|internal)_\w+): "
                       r"(?P<what>[^,\n]+)|application called MPI_Abort\((?P<comm>[^,()\n]+), (?P<acode>-?\d+)\) - "
                       r"process \d+)", re.MULTILINE)
# Cray MPICH's newer record: "MPICH ERROR [Rank 0] [job id 2853270.0] [Fri Dec 13 13:41:36 2024] [frontier05084] -
# Abort(2665871) (rank 0 in comm 0): <message>" (between the date and the node, "[unknown]" where the job id is not
# known)
_CRAY_NEW = lazy_regex(r"^[^\n\"'`\u201c]{0,80}?MPICH ERROR \[Rank (?P<rank>\d+)\] \[job id[^\]\n]{0,60}\] "
                       r"\[[^\]\n]{0,60}\](?: \[unknown\])? \[(?P<host>[A-Za-z0-9][\w.-]*)\] - Abort\((?P<code>-?\d+)\)"
                       r"(?: \(rank \d+ in comm \d+\))?: (?:Fatal error in (?P<call>(?:P?MPI|internal)_\w+): "
                       r"(?P<what>[^,\n]+)[^\n]*?|(?P<msg>[^\n]*?))[ \t]*$", re.MULTILINE)
# mpi4jax's abort line (see the module's text): at a line's start (its "rN | " head optional: a reporter may quote it
# without), the call, its error code, the MPI library's error string (a Python bytes repr, b'...', its closing quote
# sometimes lost in a paste) and " - aborting"; before it only a quote mark or bracketed fields (a viewer's line number,
# Open MPI's "[1,3]<stderr>:" tag), no word
_MPI4JAX = lazy_regex(r"^[ \t>]*(?:\[\d+,(?P<tag>\d+)\]<std(?:out|err)>:[ \t]*|"
                      r"\[[^\]\n]{1,60}\](?:<std(?:out|err)>)?:?[ \t]*)*(?:r(?P<rank>\d+) \| )?"
                      r"(?P<call>MPI_[A-Z][a-z]\w*) returned error code (?P<code>-?\d+)"
                      r"(?::[ \t]*(?P<why>[^\n]*?))?(?P<abort>[ \t]+-[ \t]+aborting)?[ \t]*$", re.MULTILINE)
# MPICH's own assertion (MPIR_Assert_fail: "Assertion failed in file ../src/mpi/coll/helper_fns.c at line 107: FALSE",
# MPIR_Assert_fail_fmt's message on the next line, "memcpy argument memory ranges overlap, dst_=0x... src_=0x...
# len_=8000000"; a build with backtraces prints its frames after them), then MPID_Abort(NULL, MPI_SUCCESS, 1, NULL)'s
# "internal ABORT - process 0" (ch3's mpid_abort.c: the message, then PMI_Abort and exit with the code: an exit, not a
# signal): that rank's MPI error, which MPICH's own check found (in the arguments it was given, or its own state)
_MPICH_ASSERT = lazy_regex(r"^[ \t>*`]*(?:\[\d+\][ \t]*|\d+: )?Assertion failed in file (?P<file>[^\s:]+) at line "
                           r"(?P<line>\d+): (?P<expr>[^\n]*?)[ \t]*$", re.MULTILINE)
_INTERNAL_ABORT = lazy_regex(r"^[ \t>*`]*(?:\[\d+\][ \t]*|\d+: )?internal ABORT - process (?P<rank>-?\d+)\b",
                             re.MULTILINE)
_ASSERT_MESSAGE = lazy_regex(r"^[ \t>*`]*(?:\[\d+\][ \t]*|\d+: )?(?P<msg>[A-Za-z][^\n]*?)[ \t]*$", re.MULTILINE)
_ASSERT_REACH = 4000     # (how far "internal ABORT" may stand after the assertion: a backtrace's frames between)
# Fujitsu MPI's plexec line of a rank that aborted (at a line's start or after a prefix of no quote mark)
_PLEXEC_ABORTED = lazy_regex(r"^[^\n\"'`\u201c]{0,60}?\[(?:WARN|ERR\.?)\] PLE (?P<code>\d{4}) plexec "
                             r"One of MPI processes was aborted\.\(rank=(?P<rank>\d+)\)", re.MULTILINE)
_ABORT_FRAME = lazy_regex(r"\b(?:P?MPI_Abort|mpi_abort_?)\+0x[0-9a-f]+\)")
_MPI_ERR_CLASS = lazy_regex(r"\bMPI_ERR_[A-Z_]+\b")
# MPICH's size checks on a stack line ("Function(line)...: " or "(unknown)(): " before them)
_SIZES = lazy_regex(r"(?:\w+\(\d+\)|\(unknown\)\(\))\.*: ?(?:Message from rank (?P<src>\d+) and tag (?P<tag>\d+) "
                    r"truncated|Message truncated); (?P<got>\d+) bytes received but buffer size is (?P<size>\d+)|"
                    r"(?:\w+\(\d+\)|\(unknown\)\(\))\.*: ?message sizes do not match across processes in the "
                    r"collective routine: Received (?P<recv>\d+) but expected (?P<exp>\d+)")
# a collective's name (its MPI_ call, PMPI_ or MPIR_ entry on the stack): the truncation of a point-to-point receive
# (MPI_Recv, MPI_Irecv) is that receive's own error, one of a collective a mismatch between the ranks' calls
_COLLECTIVE = lazy_regex(r"\b(?:P?MPI|MPIR)_I?(?:Bcast|Reduce|Allreduce|Gatherv?|Allgatherv?|Scatterv?|Alltoall[vw]?|"
                         r"Reduce_scatter(?:_block)?|Scan|Exscan|Barrier|Neighbor_\w+)(?:_\w+)?\b")
MPI_SIZE_TEXT = "MPI's size check: the ranks' calls disagree on a message's size"
# (the collective's check: it names no sender, so not which rank's call was wrong)
MPI_COLLECTIVE_SIZE_TEXT = f"{MPI_SIZE_TEXT} (a collective received"
_SIZE_SENDER = lazy_regex(re.escape(MPI_SIZE_TEXT) + r" \(rank (?P<src>\d+) sent")
_STACK_AT = r"[A-Za-z_(][\w()]*\(\d*\)\.*: ?(?P<why>[^\n]*)$"
_MPI_CALL = lazy_regex(r"\b(?:P?MPI_[A-Z][a-z]\w*)\b")
_PEER_WORDS = lazy_regex(r"Communication error with rank|Connection (?:reset|refused|closed|timed out)|socket closed|"
                         r"OFI poll failed|Broken pipe|No route to host|Transport retry count exceeded", re.IGNORECASE)
_OUTSIDE = lazy_regex(r"\*\*\* The (?P<call>MPI_\w+)\(\) function was called (?P<when>before MPI_INIT|after "
                      r"MPI_FINALIZE) was invoked\.")
# MPICH's (and Intel MPI's) own check of the same, which aborts the process: "Attempting to use an MPI routine before
# initializing MPICH" (MPICH 3), "Attempting to use an MPI routine (internal_Comm_rank) before initializing or after
# finalizing MPICH" (MPICH 4), "... before initializing MPI" (Intel MPI)
_MPICH_OUTSIDE = lazy_regex(r"\bAttempting to use an MPI routine(?: \((?P<routine>\w+)\))? (?P<when>before "
                            r"initializing(?: or after finalizing)?|after finalizing) (?P<mpi>MPICH|MPI)\b")
_LOCAL_ABORT = lazy_regex(r"\[(?P<host>[\w.-]+):(?P<pid>\d+)\] Local abort (?P<when>before MPI_INIT|after "
                          r"MPI_FINALIZE started) completed")
# Open MPI's runtime failed to start (help-orte-runtime.txt / prte's): "It looks like orte_init failed for some reason;
# your parallel process is likely to abort." at a line's start, then the failed step and "--> Returned value X (N)
# instead of ORTE_SUCCESS"; the process's "[host:pid] ... ORTE_ERROR_LOG: ..." lines before it say where
_RTE_INIT = lazy_regex(r"^[ \t>*`]*It looks like (?P<what>orte_init|prte_init|opal_init|ompi_rte_init) failed for "
                       r"some reason; your parallel process is\s+likely to abort\.", re.MULTILINE)
_RTE_STEP = lazy_regex(r"^[ \t]+(?P<step>\w[^\n]*?failed)[ \t]*\n[ \t]+--> Returned value (?P<value>[^\n]*?) instead "
                       r"of (?:ORTE|PRTE|OPAL)_SUCCESS", re.MULTILINE)
_RTE_LOG = lazy_regex(r"^[ \t]*\[(?P<host>[\w.-]+):(?P<pid>\d+)\] [^\n]*?(?:ORTE|PRTE|OPAL)_ERROR_LOG: ", re.MULTILINE)
# Open MPI started by a resource manager's own launcher it was not built for (help-pmix-base.txt / help-ess-*.txt:
# "The application appears to have been direct launched using \"srun\",\nbut OMPI was not built with SLURM's PMI
# support and therefore cannot\nexecute.", "... not built with SLURM support. This usually happens ...", "... using
# \"aprun\", but OMPI was not built with ALPS support"): MPI_Init fails in every process, before any has a rank; the PMI
# client's own line before the box says where ("[host:pid] PMI_Get_clique_size [pmix_s1.c:281:s1_init]: Operation
# failed", "PMI2_Init failed to intialize.  Return code: 14")
_DIRECT_LAUNCH = lazy_regex(r"The application appears to have been direct launched using\s+\"(?P<launcher>[\w.-]+)\","
                            r"\s+but OMPI was not built with\s+(?P<what>[\w'-]+(?:\s+[\w'-]+)?)\s+support")
_PMI_FAILED = lazy_regex(r"^[ \t]*(?:\[(?P<host>[\w.-]+):(?P<pid>\d+)\][ \t]*)?(?P<what>PMI\w*_\w+[^\n]*?(?:failed|"
                         r"Operation failed|Return code: -?\d+)[^\n]*?)[ \t]*$", re.MULTILINE)
# (the words of its record, which the advice reads: triage.analysis.advice)
DIRECT_LAUNCH_TEXT = "direct-launched the program but Open MPI was not built with"
# Open MPI's Slurm PMI-1/PMI-2 component failing in its init, without the box after it (OPAL_PMI_ERROR in
# opal/mca/pmix/s1, s2: "[host:pid] PMI_Get_clique_size [pmix_s1.c:281:s1_init]: Operation failed", the PMI call, its
# source place and the PMI library's error string): MPI's initialisation failed in that process, before it had a rank
_PMI_COMPONENT = lazy_regex(r"^[ \t]*(?:\[(?P<host>[\w.-]+):(?P<pid>\d+)\][ \t]*)?(?P<what>(?P<call>PMI2?_\w+) "
                            r"\[pmix_s[12]\.c:\d+:s[12]_init\]: [^\n]*?)[ \t]*$", re.MULTILINE)
PMI_INIT_TEXT = "Open MPI's Slurm PMI client failed in its start-up"
# MPICH's MPI_Init failed in its process manager interface (PMI) client, its stack's line of a PMI call that failed
# ("MPIR_pmi_init(105)...: PMI_Get_appnum returned -1", "MPID_Init(2144)......: PMI_Init returned -1", PMI-2's
# "PMI2_Job_GetId returned 14"): the process could not talk to the launcher that started it (no PMI connection: a
# launcher of another MPI, or none), before the PMI told it its rank (read on the record without its Abort head; with
# it, "Abort(N) on node 0 (rank 0 in comm 0)", the rank is MPICH's default then, which other readers still take)
_INIT_CALLS = ("MPI_Init", "PMPI_Init", "MPI_Init_thread", "PMPI_Init_thread", "internal_Init", "internal_Init_thread")
# (the PMI calls MPICH makes before it knows the process's rank; a later one's failure, a key-value exchange, is
# after it)
_PMI_RETURNED = lazy_regex(r"\b(?:PMI2?_(?:Init|Initialized|Get_rank|Get_size|Get_appnum|Get_universe_size|"
                           r"Job_GetId)|PMIx_Init) returned -?\d+\b")
MPICH_PMI_TEXT = "MPICH's PMI client could not talk to the launcher that started the process"
_NON_ZERO = lazy_regex(r"Primary job\s+terminated normally, but (?P<n>\d+) process(?:es)? returned\s+a non-zero "
                       r"exit code")
# mpirun could not tell which process ended the job (help-orterun.txt): a failure of no known rank
_NO_INFO = lazy_regex(r"(?:mpirun|prterun|mpiexec) noticed that the job aborted, but has no info as to the process")
_TCP_CONNECT = lazy_regex(r"Open MPI failed to TCP connect to a peer MPI process")
# (also under Hydra's -prepend-rank, "[0] [ch3:sock] rank 0 unable to connect ...", its next line prefixed alike)
_CH3_SOCK = lazy_regex(r"^[ \t]*(?:\[\d+\][ \t]*)?\[ch3:sock\] rank (?P<rank>\d+) unable to connect to rank "
                       r"(?P<peer>\d+) using business card", re.MULTILINE)
_CH3_WHY = lazy_regex(r"^(?:\[\d+\][ \t]*)?unable to connect to (?P<what>[^\n]+?)\s*$", re.MULTILINE)
# Open MPI's TCP transport's box of a peer that went away (help-mpi-btl-tcp.txt's "peer hung up"): "An MPI
# communication peer process has unexpectedly disconnected. ... the root cause of this problem is the failure of the
# peer", then "Local host: H", "Local PID: P", "Peer host: Q": the process on Q failed first (a crash, an exit without
# MPI_Finalize); the one that printed it is its collateral. (Its text says "without calling MPI_FINALIZE": MARKERS'
# "calling" gates it.)
OMPI_TCP_TEXT = "Open MPI's TCP transport"     # (its records' words: triage.analysis.advice fits its step to them)
_PEER_HUNG_UP = lazy_regex(r"An MPI communication peer process has\s+unexpectedly disconnected")
_BOX_PEER = lazy_regex(r"^\W*Peer host:\s*(?P<host>[\w.-]+)\s*$", re.MULTILINE)
_BOX_LOCAL_PID = lazy_regex(r"^\W*Local PID:\s*(?P<pid>\d+)\s*$", re.MULTILINE)
_BOX_LOCAL = lazy_regex(r"^\s*Local host:\s*(?P<host>[\w.-]+)\s*$", re.MULTILINE)
_BOX_PID = lazy_regex(r"^\s*PID:\s*(?P<pid>\d+)\s*$", re.MULTILINE)
_BOX_MESSAGE = lazy_regex(r"^\s*(?:Message|Error):\s*(?P<what>[^\n]+?)\s*$", re.MULTILINE)
_FIRST_BOX = "first process to do so"
_BLOCK = 900                 # how far after its head the error handler's block runs
# an MPI rank is a C int: a vpid past it in "reported by process [J,V]" is a number Open MPI garbled (a 64-bit print of
# its 32-bit vpid: "[2306736129,281470681743360]", 0xFFFF00000000), no rank
_MAX_RANK = 2**31 - 1
# a launcher's command line that starts one process ("$ mpirun -n 1 ./a.out", "mpiexec -np 1 python x.py"): a job
# whose only rank is 0
_ONE_PROCESS = lazy_regex(r"^[^\n]*?\b(?:mpirun|mpiexec|orterun|prterun)(?:\.[\w-]+)?\b[^\n]*?"
                          r"\s-(?:n|np|-np|c)[ =]1(?!\d)[^\n]*$", re.MULTILINE)
_LAUNCH = lazy_regex(r"^[^\n]*?\b(?:mpirun|mpiexec|orterun|prterun)(?:\.[\w-]+)?\s[^\n]*$", re.MULTILINE)


# How a rank's own MPI_Abort is told (Open MPI's "MPI_ABORT was invoked on rank N", MPICH's "application called
# MPI_Abort(...) - process N"): the way the process ended, which a failure it printed just before says the cause of
ABORT_TEXT = "called MPI_Abort on "
# an MPI_Abort with error code 0 after the run's own word that it ended well, nothing failing between: some programs
# end every process so at their end (MPI_Abort(MPI_COMM_WORLD, 0) where MPI_Finalize would do); a note of the all-clear
ABORT_AFTER_END_NOTE = ("an MPI_Abort with error code 0 after the run said it ended well (a program's way to end its "
                        "processes: it tells no failure)")
_ENDED_BEFORE = 40      # (the lines before the abort's record the run's word that it ended well is read in)


@dataclass(frozen=True)
class MpiError:
    """An MPI library's error record in a log."""
    rank: int | None             # None: the record does not say which rank
    host: str | None
    pid: int | None
    text: str                    # what failed, in one line
    offset: int                  # where the record starts in the text
    first: bool = False          # the rank itself failed (its own MPI call, its own MPI_Abort): not an echo
    ended_well: bool = False     # an MPI_Abort with code 0 after the run's word that it ended well: a note, no failure
    network: bool = False        # its reason is a link or a peer (a connection reset, a fabric's failed poll): a
    #                              network failure this rank reported, not its own


def parse_mpi_errors(text: str) -> tuple[MpiError, ...]:
    """The records above in ``text``, in text order. Never raises."""
    if not holds_any(text, MARKERS) and not holds_any(text, END_MARKERS):
        return ()
    out = [*_handler_blocks(text)]
    cray = _cray(text)
    out += cray
    for match in _ABORT.finditer(text):
        derived = _DERIVED.match(match.group("comm"))
        world = derived is None or (derived.group("how") == "DUP" and derived.group("parent") == "0")
        out.append(MpiError(int(match.group("rank")) if world else None, None, None,
                            f"{ABORT_TEXT}{match.group('comm')} with errorcode {match.group('code')} "
                            f"(Open MPI then kills every process of the job): {_line(text, match)}",
                            match.start(), first=True,
                            ended_well=_aborted_after_its_end(text, match.start(), match.group("code"))))
    seen: set[int] = {e.rank for e in cray if e.rank is not None}  # (Cray's record, with its node, said it)
    # (MPICH prints the line twice: alone, and after "[cli_N]: aborting job:")
    for match in _MPICH_ABORT.finditer(text):
        rank = int(match.group("rank"))
        if rank not in seen:
            seen.add(rank)
            out.append(MpiError(rank, None, None,
                                f"{ABORT_TEXT}{match.group('comm')} with errorcode {match.group('code')} "
                                f"(MPICH then ends the job): {_line(text, match)}", match.start(), first=True,
                                ended_well=_aborted_after_its_end(text, match.start(), match.group("code"))))
    out += _outside(text)
    out += _mpich_outside(text)
    out += _mpich_assert(text)
    out += _rte_init(text)
    out += _direct_launch(text)
    for match in _MPICH_FATAL.finditer(text):
        if match.group("code") is None and match.group("node") is None:
            continue                        # ("Abort: Fatal error in ...": no head of MPICH's)
        world = match.group("comm") in (None, "0") and match.group("node") is not None
        stack = _record_stack(text, match.end(), int(match.group("node")) if world else None)
        why = f"; innermost: {stack[-1].group('why')[:200]}" if stack else ""
        out.append(MpiError(int(match.group("node")) if world else None, None, None,
                            f"failed in {match.group('call')}: {match.group('what').strip()}{why} (MPICH's fatal "
                            f"error handler, {_abort_head(match)}): {_line(text, match)}", match.start(),
                            first=True, network=bool(stack) and _PEER_WORDS.search(stack[-1].group("why")) is not None))
    pmi = _pmi_aborts(text, seen)
    out += pmi
    out += [e for e in _mpich_rankless(text, [e.offset for e in pmi])
            if not any(c.offset <= e.offset < c.offset + 400 for c in cray)]
    for match in _MVAPICH_FATAL.finditer(text):
        stack = _record_stack(text, match.end(), int(match.group("rank")))
        why = f"; innermost: {stack[-1].group('why')[:200]}" if stack else ""
        out.append(MpiError(int(match.group("rank")), match.group("host"), None,
                            f"failed in {match.group('call')}: {match.group('what').strip()}{why} (MVAPICH2's fatal "
                            f"error handler, which then aborts the job): {_line(text, match)}", match.start(),
                            first=True, network=bool(stack) and _PEER_WORDS.search(stack[-1].group("why")) is not None))
    for match in _TRACEBACK_HANDLER.finditer(text):
        call = _MPI_CALL.search(text, match.end(), min(len(text), match.end() + 2000))
        said = f"failed in {call.group(0)}" if call else "an MPI call failed"
        out.append(MpiError(int(match.group("rank")), None, None,
                            f"{said} (the program's MPI error handler printed its traceback): {_line(text, match)}",
                            match.start(), first=True))
        break
    for match in _MPT_ABORT.finditer(text):
        rank = int(match.group("rank"))
        if rank not in seen:
            seen.add(rank)
            out.append(MpiError(rank, match.group("host"), int(match.group("pid")) if match.group("pid") else None,
                                f"aborted with error code {match.group('code')} (HPE MPT's record of this rank's own "
                                f"abort, which then ends the job): {_line(text, match)}", match.start(), first=True))
    for match in _MPICH_BARE.finditer(text):
        rank = int(match.group("node"))       # (in any communicator: "node N" is the world rank)
        if rank not in seen:
            seen.add(rank)
            out.append(MpiError(rank, None, None,
                                f"aborted{_with_code(match)} (MPICH's abort of this rank, which then ends the job): "
                                f"{_line(text, match)}", match.start(), first=True))
    out += _tcp_connect(text)
    out += _peer_hung_up(text)
    out += _ch3_sock(text)
    out += _mpi4jax(text)
    out += _plexec(text)
    ended = {error.rank for error in out if error.ended_well}
    for match in _CALLED_ABORT.finditer(text):
        out.append(MpiError(int(match.group("rank")), match.group("host"), int(match.group("pid")) or None,
                            f"called abort (MPI_Abort; the launcher then ends the job with signals): "
                            f"{_line(text, match)}", match.start(), first=True,
                            ended_well=int(match.group("rank")) in ended))     # (that abort's record, code 0)
    for match in _IMPROPER.finditer(text):
        out.append(MpiError(int(match.group("rank")), match.group("host"), int(match.group("pid")) or None,
                            f"exited without calling MPI_Finalize (mpirun: exiting improperly): "
                            f"{_line(text, match)}", match.start()))
    if not out and _FIRST_BOX not in text:
        for match in _NON_ZERO.finditer(text):
            n = match.group("n")
            out.append(MpiError(None, None, None,
                                f"mpirun: {n} process{'' if n == '1' else 'es'} returned a non-zero exit code; which, "
                                "mpirun's box after this line says ('The first process to do so was: Process name: "
                                "[[job,1],RANK]')", match.start()))
            break
    if not out and _FIRST_BOX not in text and "noticed that process rank" not in text:
        for match in _NO_INFO.finditer(text):
            out.append(MpiError(None, None, None, "mpirun: the job aborted, and mpirun has no record of which process "
                                "ended it (each rank's own output would say)", match.start()))
            break
    return tuple(sorted(_sizes(text, out), key=lambda e: e.offset))


def mpi_size_sender(text: str) -> int | None:
    """The rank that sent the message MPICH's size check (MPI_SIZE_TEXT's note in ``text``) names, if it does."""
    found = _SIZE_SENDER.search(text)
    return int(found.group("src")) if found else None


def _sizes(text: str, out: list[MpiError]) -> list[MpiError]:
    """The records whose stack says MPICH's size check, headed MPI_SIZE_TEXT; one of no rank for such a line under
    no record read (the first, where the job did not go on after it)."""
    if "truncated" not in text and "sizes do not match" not in text:
        return out
    records = sorted(out, key=lambda e: e.offset)
    offsets = [e.offset for e in records]
    done: set[int] = set()
    alone = False
    for match in _SIZES.finditer(text):
        if match.group("recv"):
            note = (f"{MPI_SIZE_TEXT} (a collective received {match.group('recv')} bytes where it expected "
                    f"{match.group('exp')}: the ranks called it with different counts or datatypes)")
        elif match.group("src"):
            note = (f"{MPI_SIZE_TEXT} (rank {match.group('src')} sent {match.group('got')} bytes, tag "
                    f"{match.group('tag')}, where the receiving rank's buffer held {match.group('size')}: their calls "
                    f"disagree on the count or the datatype)")
        else:
            note = (f"{MPI_SIZE_TEXT} (a rank received {match.group('got')} bytes where its buffer held "
                    f"{match.group('size')}: the sending and receiving calls disagree on the count or the datatype)")
        at = bisect_left(offsets, match.start()) - 1       # the last record before the line
        while at >= 0 and not records[at].first and match.start() - records[at].offset < 3000:
            at -= 1
        owner = at if at >= 0 and match.start() - records[at].offset < 3000 and records[at].first else None
        start = records[owner].offset if owner is not None else max(0, match.start() - 1500)
        if not match.group("recv") and _COLLECTIVE.search(text, start, match.end()) is None:
            continue                # a point-to-point receive's truncation: that call's own error
        if owner is not None:
            if owner not in done:
                done.add(owner)
                records[owner] = replace(records[owner], text=f"{note}: {records[owner].text}")
        elif not alone and not went_on_after(text, match.end()):
            alone = True
            records.append(MpiError(None, None, None, f"{note}: {_line(text, match)}", match.start(), first=True))
    return records


def _cray(text: str) -> list[MpiError]:
    """Cray MPICH's records of a rank's fatal error (each rank that failed prints its own), with the innermost line of
    the stack that follows one (MPICH's ``Function(line)...: why`` lines)."""
    out: list[MpiError] = []
    for match in [*_CRAY_OLD.finditer(text), *_CRAY_NEW.finditer(text)]:
        if went_on_after(text, match.end()):
            continue                # quoted in a note, or an earlier attempt's: the job went on after it
        call = match.group("call")
        said = match.groupdict().get("msg") or ""
        called = _MPICH_ABORT.search(said) if "application called MPI_Abort(" in said else None
        if call is None and (match.groupdict().get("acode") is not None or called is not None):
            # (the rank's own MPI_Abort: told as every MPI_Abort record is, ABORT_TEXT, with its code and node)
            comm, code = (called.group("comm"), called.group("code")) if called is not None else (
                match.group("comm"), match.group("acode"))
            what = f"{ABORT_TEXT}{comm} with errorcode {code} (Cray MPICH then ends the job)"
        elif call is None:
            what = (f"aborted with errorcode {match.group('code')}: {match.group('msg').strip() or 'no message'} "
                    f"(Cray MPICH's abort of this rank)")
        else:
            stack = _record_stack(text, match.end(), _int(match.group("rank")))
            inner = [m.group("why").strip() for m in stack if m.group("why").strip()]
            why = f"; innermost: {inner[-1][:200]}" if inner else ""
            what = f"failed in {call}: {match.group('what').strip()}{why} (Cray MPICH's fatal error record)"
            out.append(MpiError(_int(match.group("rank")), match.group("host"), None, f"{what}: {_line(text, match)}",
                                match.start(), first=True,
                                network=bool(inner) and _PEER_WORDS.search(inner[-1]) is not None))
            continue
        out.append(MpiError(_int(match.group("rank")), match.group("host"), None, f"{what}: {_line(text, match)}",
                            match.start(), first=True))
    return out


def _mpich_assert(text: str) -> list[MpiError]:
    """MPICH's own assertion and the MPID_Abort that follows it (_MPICH_ASSERT): the rank "internal ABORT - process N"
    names raised an MPI error, what MPICH's check found (its message line, where one follows the assertion)."""
    out: list[MpiError] = []
    if "Assertion failed in file " not in text:
        return out
    for match in _MPICH_ASSERT.finditer(text):
        abort = _INTERNAL_ABORT.search(text, match.end(), min(len(text), match.end() + _ASSERT_REACH))
        if abort is None or went_on_after(text, abort.end()):
            continue
        nxt = _ASSERT_MESSAGE.match(text, match.end() + 1) if match.end() < len(text) else None
        said = f": {nxt.group('msg')[:200]}" if nxt is not None and nxt.start() < abort.start() \
            and "[0x" not in nxt.group("msg") else ""      # (a backtrace's frame is no message)
        rank = int(abort.group("rank"))
        out.append(MpiError(rank if rank >= 0 else None, None, None,
                            f"MPICH's own check failed ({match.group('file')}:{match.group('line')}: "
                            f"{match.group('expr')[:120]}){said}; MPID_Abort ends the process (an exit, not a signal): "
                            f"{_line(text, abort)}", match.start(), first=True))
    return out


def _int(value: str | None) -> int | None:
    return int(value) if value is not None else None


# a stack line of MPICH's record under a launcher's rank head (Hydra's -prepend-rank "[0] ", srun's "0: ")
_HEADED_STACK_LINE = lazy_regex(r"(?:\[(?P<head>\d+)\][ \t]*|(?P<label>\d+): )?\w+\(\d+\)\.*: ?(?P<why>[^\n]*)$")


def _record_stack(text: str, end: int, rank: int | None = None) -> list[re.Match[str]]:
    """The stack lines of the MPICH record whose head ends at ``end``: the lines right after it, each
    ``Function(line)...: why`` (under a rank head too), down to the first that is not one (a blank line, the next
    record, a line whose rank head names another rank than the record's ``rank``: another rank's stack is not this
    one's)."""
    out: list[re.Match[str]] = []
    pos = text.find("\n", end)
    while 0 <= pos < len(text) and len(out) < 60 and pos - end < 3000:
        start = pos + 1
        stop = text.find("\n", start)
        stop = len(text) if stop < 0 else stop
        line = _HEADED_STACK_LINE.match(text, start, stop)
        if line is None or line.end() != stop:
            break
        if rank is not None and (head := line.group("head") or line.group("label")) is not None and int(head) != rank:
            break
        if line.group("why").strip():
            out.append(line)         # (a frame that says nothing, "MPIR_Allreduce_intra_auto(207)...: ", is passed)
        pos = stop
    return out


def _pmi_aborts(text: str, seen: set[int]) -> list[MpiError]:
    """MPICH's PMI client's abort of rank N (_PMI_ABORT), each rank's first, with the message on its next line (MPICH's
    fatal error, its innermost reason from the stack under it); a rank whose MPI_Abort line was read already is that
    record's. Not where the job went on after it."""
    out: list[MpiError] = []
    if "]: aborting job:" not in text:
        return out
    for match in _PMI_ABORT.finditer(text):
        rank = int(match.group("rank"))
        if rank in seen or went_on_after(text, match.end()):
            continue
        seen.add(rank)
        msg = match.group("msg")
        fatal = _PMI_FATAL.match(msg)
        if fatal is not None:
            # (MPICH's stack on the lines after it, under the same quote)
            line_re = re.compile(re.escape(match.group("lead")) + r"[ \t]*" + _STACK_AT)
            whys: list[str] = []
            for line in text[match.end() + 1:match.end() + 3000].split("\n")[:60]:
                stack = line_re.match(line.rstrip())
                if stack is None:
                    break
                if stack.group("why").strip():
                    whys.append(stack.group("why").strip())
            why = f"; innermost: {whys[-1][:200]}" if whys else ""
            said = f"failed in {fatal.group('call')}: {fatal.group('what').strip()}{why}"
        else:
            said = f"aborted: {msg[:200]}"
        out.append(MpiError(rank, None, None, f"{said} (MPICH's PMI client's abort of rank {rank}, which then ends the "
                            f"job): {_line(text, match)}", match.start(), first=True))
    return out


def _mpich_rankless(text: str, pmi: list[int] | None = None) -> list[MpiError]:
    """MPICH's fatal error record without its Abort head: one record for the first, where its stack follows it (each
    stack line ``Function(line)...: why`` under the head's own prefix) and the job did not go on after the stack; not
    one under a PMI client's abort head (``[cli_N]: aborting job:``, read at ``pmi``: rank N's)."""
    for match in _MPICH_RANKLESS.finditer(text):
        if pmi and any(at < match.start() and text.count("\n", at, match.start()) == 1 for at in pmi):
            continue                                # (the line right after a PMI client's abort head: its message)
        prefix = match.group("prefix")
        if "Abort(" in prefix or "MPIDI_CH3_Abort" in prefix:
            continue                                # (the record with its head: read above)
        # (the same prefix, its numbers as any: a container's or a launcher's timestamp differs line to line)
        same = re.sub(r"\d+", r"\\d+", re.escape(prefix.strip()))
        line_re = re.compile(r"[ \t]*" + same + r"[ \t]*" + _STACK_AT)
        pos, first_call = match.end() + 1, None
        whys: list[str] = []
        while pos < len(text) and len(whys) < 60:
            stop = text.find("\n", pos)
            stop = len(text) if stop < 0 else stop
            stack = line_re.match(text, pos, stop)
            if stack is None or stack.end() != stop:
                break
            whys.append(stack.group("why").strip())
            if first_call is None and (call := _MPI_CALL.search(stack.group("why"))) is not None:
                first_call = call.group(0)
            pos = stop + 1
        if not whys or went_on_after(text, pos):
            continue
        named = match.group("call") or first_call or "an MPI call"
        said = [why for why in whys if why]
        inner = f"; innermost: {said[-1][:200]}" if len(said) > 1 else ""
        pmi_note = f"; {MPICH_PMI_TEXT}, before it learnt its rank" if named in _INIT_CALLS and any(
            _PMI_RETURNED.search(why) for why in said) else ""
        return [MpiError(None, None, None,
                         f"failed in {named}: {match.group('what').strip()}{inner} (MPICH's fatal error record, which "
                         f"does not say the rank{pmi_note}): {_line(text, match)}", match.start(), first=True,
                         network=bool(said) and _PEER_WORDS.search(said[-1]) is not None)]
    return []


def _mpi4jax(text: str) -> list[MpiError]:
    """mpi4jax's abort line of a failed MPI call, each rank's first (every rank whose call failed prints its own): with
    its ``rN |`` head, its ``- aborting`` tail or an MPI error class in its error string, where the job did not go on
    after it."""
    out: list[MpiError] = []
    if " returned error code " not in text:
        return out
    seen: set[int | None] = set()
    for match in _MPI4JAX.finditer(text):
        # (its "rN" is the rank in the call's communicator; Open MPI's tag "[1,5]<stderr>:" says the world rank)
        said_rank = match.group("tag") or match.group("rank")
        rank = None if said_rank is None else int(said_rank)
        why = (match.group("why") or "").strip().strip("'\"")
        if why.startswith(("b'", 'b"')):
            why = why[2:]
        if rank is None and match.group("abort") is None and _MPI_ERR_CLASS.search(why) is None:
            continue
        if rank in seen or went_on_after(text, match.end()):
            continue
        seen.add(rank)
        said = f": {why[:200]}" if why else ""
        out.append(MpiError(rank, None, None,
                            f"failed in {match.group('call')} with error code {match.group('code')}{said} (mpi4jax "
                            f"then aborts the job): {_line(text, match)}", match.start(), first=True))
    return out


def _plexec(text: str) -> list[MpiError]:
    """Fujitsu MPI's plexec record of an aborted rank where that process's backtrace through MPI_Abort is in the 3000
    characters before it (the frames the library prints as the process aborts): the rank's own MPI_Abort."""
    out: list[MpiError] = []
    if "plexec" not in text:
        return out
    for match in _PLEXEC_ABORTED.finditer(text):
        if _ABORT_FRAME.search(text, max(0, match.start() - 3000), match.start()) is None:
            continue
        out.append(MpiError(int(match.group("rank")), None, None,
                            f"called MPI_Abort (its backtrace's frames; Fujitsu MPI's plexec, PLE "
                            f"{match.group('code')}, then ends the job): {_line(text, match)}", match.start(),
                            first=True))
    return out


def _tcp_connect(text: str) -> list[MpiError]:
    """Open MPI's box of a TCP connection to a peer process that failed: the first one, where the job did not go on
    after it (the box says the job "may now fail"; progress after it says it did not)."""
    for match in _TCP_CONNECT.finditer(text):
        end = min(len(text), match.end() + 600)
        if went_on_after(text, end if (stop := text.find("\n-----", match.end(), end)) < 0 else stop):
            continue
        host = _BOX_LOCAL.search(text, match.end(), end)
        pid = _BOX_PID.search(text, match.end(), end)
        what = "; ".join(m.group("what") for m in _BOX_MESSAGE.finditer(text, match.end(), end))
        return [MpiError(None, host.group("host") if host else None, int(pid.group("pid")) if pid else None,
                         f"a process could not open its TCP connection to a peer MPI process"
                         f"{f' ({what[:200]})' if what else ''} ({OMPI_TCP_TEXT}: a link between the "
                         f"processes failed, not a rank's own error): {_line(text, match)}", match.start(), first=True,
                         network=True)]
    return []


def _peer_hung_up(text: str) -> list[MpiError]:
    """Open MPI's box of a peer process that disconnected unexpectedly: the first one, where it names the peer's host
    (every process that talked to the peer may print its own; the box's own words: the peer's failure is the root
    cause). The peer's rank the box does not say: a record of no rank, on the peer's host."""
    for match in _PEER_HUNG_UP.finditer(text):
        end = min(len(text), match.end() + 900)
        peer = _BOX_PEER.search(text, match.end(), end)
        if peer is None:
            continue
        local = _BOX_LOCAL.search(text, match.end(), end)
        pid = _BOX_LOCAL_PID.search(text, match.end(), end)
        seen = f" (seen from {local.group('host')}{f', pid {pid.group(1)}' if pid else ''})" if local else ""
        return [MpiError(None, peer.group("host"), None,
                         f"the MPI process on {peer.group('host')} disconnected unexpectedly{seen}: it failed first (a "
                         f"crash, or an exit without MPI_Finalize; {OMPI_TCP_TEXT}, whose box says the peer's "
                         f"failure is the root cause): {_line(text, match)}", match.start(), first=True, network=True)]
    return []


def _ch3_sock(text: str) -> list[MpiError]:
    """MPICH ch3:sock's record of a connection to a peer rank that could not be made: the first one, where the job did
    not go on after it (every rank that tries prints its own: a link of the job, not one rank's error)."""
    for match in _CH3_SOCK.finditer(text):
        stop = text.find("\n", match.end())
        stop = len(text) if stop < 0 else stop
        why = _CH3_WHY.match(text, stop + 1) if stop < len(text) else None
        end = why.end() if why else stop
        if went_on_after(text, end):
            continue
        reason = f" ({why.group('what')[:200]})" if why else ""
        return [MpiError(None, None, None,
                         f"rank {match.group('rank')} could not connect to rank {match.group('peer')}{reason} "
                         f"(MPICH's ch3:sock channel: a link between the processes failed, not a rank's own error): "
                         f"{_line(text, match)}", match.start(), first=True, network=True)]
    return []


def _outside(text: str) -> list[MpiError]:
    """An MPI call before MPI_INIT or after MPI_FINALIZE: the process that made it aborts (one record for the
    notice and the "Local abort" line that follows it, which says the process's host and pid)."""
    out: list[MpiError] = []
    aborts = list(_LOCAL_ABORT.finditer(text))
    used: set[int] = set()
    for match in _OUTSIDE.finditer(text):
        after = next((a for a in aborts if a.start() > match.start() and a.start() - match.end() < _BLOCK
                      and a.start() not in used), None)
        if after:
            used.add(after.start())
        out.append(MpiError(None, after.group("host") if after else None, int(after.group("pid")) if after else None,
                            f"{match.group('call')}() was called {match.group('when')} was invoked, which the MPI "
                            f"standard disallows: Open MPI aborted the process (a program error in it): "
                            f"{_line(text, match)}", match.start(), first=True))
    for abort in aborts:
        if abort.start() not in used:
            out.append(MpiError(None, abort.group("host"), int(abort.group("pid")),
                                f"Open MPI aborted the process {abort.group('when')}: {_line(text, abort)}",
                                abort.start(), first=True))
    return out


def _mpich_outside(text: str) -> list[MpiError]:
    """MPICH's check of an MPI call before MPI_Init or after MPI_Finalize: the process that made it aborts (a program
    or build error of that process, no rank yet; the first one, where the job did not go on after it)."""
    for match in _MPICH_OUTSIDE.finditer(text):
        if went_on_after(text, match.end()):
            continue
        routine = f" ({match.group('routine')})" if match.group("routine") else ""
        return [MpiError(None, None, None,
                         f"an MPI routine{routine} was called {match.group('when')} {match.group('mpi')}, which the "
                         f"MPI standard disallows: {match.group('mpi')} aborted the process (a program or build error "
                         f"in it, such as a library built against another MPI): {_line(text, match)}", match.start(),
                         first=True)]
    return []


def _rte_init(text: str) -> list[MpiError]:
    """Open MPI's runtime that failed to start (``It looks like orte_init failed``): no rank of the program ran, so
    the failure is the job's start-up on that node (one record, where the job did not go on after it)."""
    for match in _RTE_INIT.finditer(text):
        if went_on_after(text, match.end()):
            continue
        step = _RTE_STEP.search(text, match.end(), min(len(text), match.end() + _BLOCK))
        logs = list(_RTE_LOG.finditer(text, max(0, match.start() - 2000), match.start()))
        where = logs[-1] if logs else None
        why = f": {step.group('step')} ({step.group('value')})" if step else ""
        return [MpiError(None, where.group("host") if where else None, int(where.group("pid")) if where else None,
                         f"Open MPI's runtime failed to start ({match.group('what')} failed{why}), before any rank "
                         f"of the program ran: {_line(text, match)}", match.start(), first=True)]
    return []


def _direct_launch(text: str) -> list[MpiError]:
    """Open MPI's box of a program direct launched by a resource manager's launcher (srun, aprun) that Open MPI was not
    built to work with (_DIRECT_LAUNCH): MPI's initialisation fails in every process, before any has a rank, for a
    build option of the installation: one record of no rank, on the host of the PMI client's line before it."""
    for match in _DIRECT_LAUNCH.finditer(text):
        if went_on_after(text, match.end()):
            continue
        launcher, what = match.group("launcher"), " ".join(match.group("what").split())
        pmi = None
        for pmi in _PMI_FAILED.finditer(text, max(0, match.start() - 2000), match.start()):
            pass
        said = f" ({pmi.group('what')})" if pmi is not None else ""
        return [MpiError(None, pmi.group("host") if pmi is not None else None,
                         int(pmi.group("pid")) if pmi is not None and pmi.group("pid") else None,
                         f"MPI initialisation failed before any rank ran{said}: {launcher} {DIRECT_LAUNCH_TEXT} "
                         f"{what} support",
                         match.start(), first=True)]
    for match in _PMI_COMPONENT.finditer(text):
        if went_on_after(text, match.end()):
            continue
        return [MpiError(None, match.group("host"), int(match.group("pid")) if match.group("pid") else None,
                         f"MPI initialisation failed before any rank ran: {PMI_INIT_TEXT} ({match.group('what')})",
                         match.start(), first=True)]
    return []


def _handler_blocks(text: str) -> list[MpiError]:
    out: list[MpiError] = []
    heads = list(_ERROR.finditer(text))
    for i, head in enumerate(heads):
        end = min(head.end() + _BLOCK, heads[i + 1].start() if i + 1 < len(heads) else len(text))
        reported = _REPORTED.search(text, head.end(), end)
        comm = _COMMUNICATOR.search(text, head.end(), end)
        if len(head.group("stars")) < 3 and reported is None and comm is None:
            continue
        code = _CODE.search(text, head.end(), end)
        what = f"{head.group('call')} failed"
        if code:
            what += f": {code.group('code')}" + (f": {code.group('what')}" if code.group("what") else "")
        if comm:
            what += f" (on communicator {comm.group('comm')})"
        if reported and len({m.group("job") or m.group("job2") for m in _REPORTED.finditer(text)}) > 1:
            what += f" in MPI job {reported.group('job') or reported.group('job2')}"
        what += "; Open MPI's error handler (MPI_ERRORS_ARE_FATAL) then aborts the processes of the communicator"
        pid = head.group("pid")
        rank = int(reported.group("rank")) if reported else None
        if reported is not None and rank is not None and rank > _MAX_RANK:
            rank = 0 if _one_process_launch(text, head.start()) else None
            what += f" (Open MPI printed the process as [{reported.group('job') or reported.group('job2')},"  \
                    f"{reported.group('rank')}], a number no rank can be" + (
                        "; the command that started the job started one process, rank 0)" if rank == 0 else ")")
        out.append(MpiError(rank, head.group("host"), int(pid) if pid else None, what, head.start(), first=True))
    return out


def _one_process_launch(text: str, before: int) -> bool:
    """The last launcher command line before offset ``before`` (in the 20 lines before it) starts one process."""
    start = before
    for _ in range(20):
        start = text.rfind("\n", 0, max(start - 1, 0)) + 1 if start > 0 else 0
        if start == 0:
            break
    launch = None
    for launch in _LAUNCH.finditer(text, start, before):
        pass
    return launch is not None and _ONE_PROCESS.fullmatch(launch.group(0)) is not None


def _aborted_after_its_end(text: str, at: int, code: str) -> bool:
    """The MPI_Abort record at offset ``at`` has error code 0 and the run's own word that it ended well is among the
    lines before it (_ENDED_BEFORE), no line between them holding a word of failure: the program's way to end its
    processes at its end, no failure (a non-zero code, or an abort after a failure line, is the rank's abort)."""
    if int(code) != 0:
        return False
    for line in reversed(text[:text.rfind("\n", 0, at) + 1].split("\n")[-_ENDED_BEFORE - 1:]):
        if not line.strip("-=*# \t"):
            continue            # (a blank line, Open MPI's rule above its box)
        if says_it_ended(line):
            return True
        if holds_failure_word(line):
            return False
    return False


def _line(text: str, match: re.Match[str]) -> str:
    head = text.rfind("\n", 0, match.start()) + 1
    tail = text.find("\n", match.end())
    return " ".join(text[head:tail if tail >= 0 else len(text)].split())[:300]


def _abort_head(match: re.Match[str]) -> str:
    """MPICH's abort head as its record says it: "Abort(N)", or "Abort" where the build printed no code."""
    return f"Abort({match.group('code')})" if match.group("code") is not None else "Abort"


def _with_code(match: re.Match[str]) -> str:
    return f" with errorcode {match.group('code')}" if match.group("code") is not None else ""
