"""Failure records in plain words, from launchers and frameworks other than torchrun: Open MPI's
``mpirun noticed that process rank 1 with PID 42 on node n1 exited on signal 9 (Killed).`` (and its
"first process to do so was ... Exit code: N" box), vLLM's ``Worker proc VllmWorker-3 died
unexpectedly``, Ray's ``The actor is dead because its worker process has died`` and any line that
names a rank and says it died, was killed or crashed (``rank 5 died from signal 11``, ``rank 2 was
killed``, ``rank 3 exited with exit code 134``).

torchrun's, DeepSpeed's, srun's and mp.spawn's records are read by :mod:`triage.parsing.torchelastic`.
"""

from __future__ import annotations

import functools
import re
import signal as _signal
from bisect import bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from triage.lazy_regex import lazy_regex
from triage.parsing import windows_status
from triage.parsing.progress import is_progress, ran_to_its_end_after, says_it_ended, went_on_after
from triage.parsing.regex_gate import holds_any

# Words that must be in a text for any record here to be in it (a cheap pre-check).
MARKERS = ("noticed that process rank", "first process to do so", "died", "killed", "Killed", "crashed",
           "exited on signal", "exited with", "terminated by signal", "worker process has died", "Aborted",
           "Segmentation fault", "Bus error", "segmentation fault", "bus error", "abort", "floating point exception",
           "illegal hardware instruction", "sigquit from a child", "BAD TERMINATION", "oom-kill", "oom_kill",
           "OOM killer terminated",
           "PETSC ERROR", "interrupted by signal", "status failed cmd", "died unexpectedly", "scheduler is dead",
           "its node has died", "has been marked dead", "was aborted", "MPT ERROR", "first noticed rank",
           "error_sighandler", "aught a fatal signal", "aught a signal", "error, status=: ",
           "已杀死", "段错误", "已放弃", "总线错误", "浮点数例外", "非法指令", "Getötet",
           "Speicherzugriffsfehler", "Abgebrochen", "Processus arrêté", "Erreur de segmentation", "Abandon", "強制終了",
           "セグメンテーション違反です", *windows_status.MARKERS)


@dataclass(frozen=True)
class RankDeath:
    """A launcher's record of a rank (or a worker process) that died."""
    rank: int | None             # None: the record names a process, not a rank (a Ray worker's pid)
    signal: str | None           # "SIGKILL"
    exitcode: int | None         # a non-signal exit code
    host: str | None
    pid: int | None
    text: str                    # the record, on one line
    first: bool = False          # the launcher says this was the first process to fail
    offset: int = 0              # where the record starts in the text
    consequence: bool = False    # it says another process failed first (a parent told of a child's failure)
    outside: bool = False        # the job was stopped from outside (a scheduler's time limit): the cause of the
    #                              ranks' SIGTERM, never a teardown
    raised: bool = False         # the record tells of an exception the rank raised (``text`` says it), not an exit
    tears_down: bool = False     # the launcher says it kills every other process now: a kill of no rank after it
    #                              (the shell's "Killed") is that teardown
    code_unsaid: bool = False    # the record says the process failed, not its code (``exitcode`` 1 stands for "not
    #                              0"): the code is said to be not in the input, never 1
    mpi: bool = False            # an MPI runtime's own record: its rank is MPI_COMM_WORLD's (a launcher's task index
    #                              beside it, srun's "task 0" under HPE MPT or mpirun, is no rank)
    end: int = 0                 # where a code's own block ends (its message's lines, R's warnings to its "Execution
    #                              halted"), where it spans lines after its first: the lines inside are its own


# (the launcher under a distribution's or a wrapper's name: Debian's and the MPI operator's "mpirun.real", Hydra's
# "mpiexec.hydra", "mpirun.openmpi")
# (its words after the pid may be broken over two lines where a reporter or a terminal wrapped the record: "... with PID
# 12450 on node " / "mike041 exited on signal 11 (Segmentation fault).")
_SP = r"(?:[ \t]+|[ \t]*\n(?:\[\d{3,}\] )?[ \t]*)"   # (a viewer's line number, "[80001] ", after the break)
_MPI_SIGNAL = lazy_regex(
    r"(?P<who>mpirun|mpiexec|prterun|orterun|prte)(?:\.[\w-]+)? noticed that process rank (?P<rank>\d+) with PID"
    + _SP + r"(?P<pid>\S+)" + _SP + "on" + _SP + "node" + _SP + r"(?P<host>\S+)" + _SP
    + r"exited(?: on\s+signal (?P<num>\d+)(?: \((?P<name>[^)\n]+)\))?|[ \t]*$)", re.MULTILINE)
_MPI_FIRST = lazy_regex(r"The first process to do so was:\s+Process name:\s+\[\[\d+,\d+\],(?P<rank>\d+)\]"
                        r"(?:\s+Exit code:\s+(?P<code>-?\d+))?")
# HPE MPT's signal handler in a rank: "MPT ERROR: Rank 57(g:57) received signal SIGSEGV(11)." then "Process ID:
# 164472, Host: r8i1n28, Program: ..." (the rank is MPI_COMM_WORLD's; "g:" its number over all the jobs' worlds)
_MPT = lazy_regex(r"MPT ERROR: Rank (?P<rank>\d+)(?:\(g:\d+\))? received signal (?P<name>SIG[A-Z]+)"
                  r"(?:\((?P<num>\d+)\))?(?:[^\n]*\n\s*Process ID: (?P<pid>\d+), Host: (?P<host>[\w.-]+))?")
# MVAPICH2's signal handler in a rank: "[ray40:mpi_rank_7][error_sighandler] Caught error: Segmentation fault (signal
# 11)" (the host, then the rank, MPI_COMM_WORLD's; "Aborted (signal 6)" for an abort)
_MVAPICH = lazy_regex(r"\[(?P<host>[A-Za-z0-9][\w.-]*):mpi_rank_(?P<rank>\d+)\]\[error_sighandler\] Caught error: "
                      r"[^\n(]*\(signal (?P<num>\d+)\)")
# GASNet's signal handler in a process (gasneti_defaultSignalHandler; under Chapel, UPC++, Legion):
# "*** Caught a fatal signal (proc 3): SIGSEGV(11)" for a fault or an abort in that process (N: GASNet's node, the
# job's rank), "*** Caught a signal (proc 5): SIGTERM(15)" for a signal sent to it (the job being torn down); older
# GASNet's (gasnet_internal.c before gasneti_console_message) "*** Caught a fatal signal: SIGSEGV(11) on node 1/2",
# "*** Caught a signal: SIGTERM(15) on node 0/2" (node N of M: the same proc id), the oldest's "*** GASNet caught a
# fatal signal: ..."
_GASNET_SIGNAL = lazy_regex(r"^[ \t>*`]*\*\*\* (?:GASNet c|C)aught a (?P<fatal>fatal )?signal(?: \(proc "
                            r"(?P<rank>\d{1,7})\): (?P<name>SIG[A-Z]+)(?:\((?P<num>\d+)\))?|: (?P<oldname>SIG[A-Z]+)"
                            r"\(\d+\) on node (?P<node>\d{1,7})/\d{1,7}\b)", re.MULTILINE)
# GASNet's own fatal error's head (gasneti_fatalerror), at a line's start: "*** FATAL ERROR (proc 3): <message>"
_GASNET_FATAL = lazy_regex(r"^[ \t>*`]*\*\*\* FATAL ERROR \(proc (?P<rank>\d{1,7})\):", re.MULTILINE)
# IBM's jsrun (Summit, Sierra, LSF's CSM): "ERROR:  One or more process (first noticed rank 150) terminated with
# signal 6 (core dumped)", "... (first noticed rank 3) exited with code 1": the first rank it saw end, MPI_COMM_WORLD's
_JSRUN = lazy_regex(r"One or more process(?:es)? \(first noticed rank (?P<rank>\d+)\) (?:terminated with signal "
                    r"(?P<num>\d+)|exited with (?:exit )?code (?P<code>\d+))")
_VLLM = lazy_regex(r"Worker proc VllmWorker-(?P<rank>\d+) died unexpectedly")
# vLLM's Ray executor (v1, ray_executor_v2): "RayWorkerProc rank=[3] died unexpectedly, shutting down executor."
# (the ranks whose run ended first, as a list: "rank=[1, 5]")
# vLLM v1's engine client: "Engine core proc EngineCore_0 died unexpectedly, shutting down client." (a process of
# the engine, of no rank: its data-parallel index is no rank of the model's group)
_VLLM_ENGINE = lazy_regex(r"Engine core proc (?P<name>\w+) died unexpectedly")
_VLLM_RAY = lazy_regex(r"RayWorkerProc rank=\[(?P<ranks>\d+(?:,\s*\d+)*)\] died unexpectedly")
# SGLang's launcher, when a scheduler's pipe closed before it said it was ready: "Rank 2 scheduler is dead. Please
# check if there are relevant logs." then "Exit code: -9" (multiprocessing's exitcode: a negative one is the signal)
_SGLANG_DEAD = lazy_regex(r"Rank (?P<rank>\d+) scheduler is dead\.(?:[^\n]*\n[^\n]{0,120}?Exit code: "
                          r"(?P<code>-?\d+|None))?")
# Paddle's launcher (paddle.distributed.launch): "Container rank 0 status failed cmd ['python', '-u', 'train.py']
# code -9 log ./debug/workerlog.0" (a negative code is the signal, as Popen reports it)
_PADDLE = lazy_regex(r"Container rank (?P<rank>\d+) status failed cmd \[[^\n]*?\] code (?P<code>-?\d+)")
# Paddle 1.x's launcher (paddle.distributed.launch, launch_utils.py / utils.py): "ABORT!!! Out of all 4 trainers,
# the trainer process with rank=[0, 2] was aborted. Please check its log." (the trainers whose process ended with a
# non-zero status, in the one check that saw them end: how, the line does not say)
_PADDLE_ABORT = lazy_regex(r"Out of all \d+ trainers, the trainer process with rank=\[(?P<ranks>\d+(?:,\s*\d+)*)\] "
                           r"was aborted")
# vLLM v1's engine client when an engine core process ended before it was ready (vllm/v1/engine/utils.py,
# wait_for_engine_startup): "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s):
# {'EngineCore_DP0': -9}", each core's multiprocessing exit code: -N is death by signal N (the kernel's OOM killer's
# SIGKILL, as a rule, while it loaded the weights), N > 0 its own exit after the exception above ("{}": none had ended)
_VLLM_CORES = lazy_regex(r"Failed core proc\(s\): \{(?P<procs>[^{}\n]*)\}")
# (each core's name in quotes: a paste's curly ones too)
_VLLM_CORE = lazy_regex(r"['\"\u2018\u201c](?P<name>[\w.-]+)['\"\u2019\u201d]: (?P<code>-?\d+)")
_VLLM_PID = lazy_regex(r"Worker VllmWorkerProcess pid (?P<pid>\d+) died, exit code: (?P<code>-?\d+)")
# The shell's job-status message: "./run.sh: line 28:  8891 Killed   python3 -m sglang.launch_server ..."
_SHELL_JOB = lazy_regex(r": line \d+:\s+(?P<pid>\d+) (?P<what>Killed|Aborted|Segmentation fault|Bus error|"
                        r"Floating point exception|Illegal instruction)(?: \(core dumped\))?\s")
# The same record where bash and libc speak another language (LANG=zh_CN.UTF-8 and the like): bash translates its
# "line N" ("第 13 行：", "Zeile 13:", "ligne 13 :", "行 13:") and libc's strsignal() the signal's words
# ("./test.sh: 第 13 行： 114146 已杀死 python3 ..."): glibc's words for the signals that kill, in the locales that
# reports come in
_LOCAL_SIGNAL_WORDS = {"已杀死": "SIGKILL", "段错误": "SIGSEGV", "已放弃": "SIGABRT", "总线错误": "SIGBUS",
                       "浮点数例外": "SIGFPE", "非法指令": "SIGILL",
                       "Getötet": "SIGKILL", "Speicherzugriffsfehler": "SIGSEGV", "Abgebrochen": "SIGABRT",
                       "Processus arrêté": "SIGKILL", "Erreur de segmentation": "SIGSEGV", "Abandon": "SIGABRT",
                       "強制終了": "SIGKILL", "セグメンテーション違反です": "SIGSEGV"}
LOCAL_SIGNAL_WORDS = _LOCAL_SIGNAL_WORDS     # for crashlog: the shell's bare job message in these locales
# zsh's own report of a job a signal ended (printjob in zsh's Src/jobs.c): the signal in zsh's lowercase words (its
# sig_msg table), "(core dumped)" after it, padded, then the job's command; headed "zsh: " for the foreground job, or by
# the job's number and its mark ("[1]  + ", "[1]    ") with the process's pid where LONG_LIST_JOBS is set (oh-my-zsh
# sets it): "zsh: killed     python train.py", "[1]    9301 killed     python3 scripts/dream.py", "[1]    2964311
# abort (core dumped)  python test.py" (the message padded to two spaces at least)
_ZSH_SIGNAL_WORDS = {"killed": "SIGKILL", "segmentation fault": "SIGSEGV", "abort": "SIGABRT", "bus error": "SIGBUS",
                     "floating point exception": "SIGFPE", "illegal hardware instruction": "SIGILL"}
_ZSH_JOB = lazy_regex(r"^(?:zsh: |\[\d{1,4}\]  [ +-] )(?:(?P<pid>\d+) )? *"
                      r"(?P<what>" + "|".join(sorted(_ZSH_SIGNAL_WORDS, key=len, reverse=True)) + r")"
                      r"(?: \(core dumped\))? {2,}\S", re.MULTILINE)
_SHELL_JOB_LOCAL = lazy_regex(r"[:：]\s*(?:第\s*\d+\s*行|(?:Zeile|ligne|行)\s*\d+)\s*[:：]\s*(?P<pid>\d+)\s+"
                              r"(?P<what>" + "|".join(sorted(_LOCAL_SIGNAL_WORDS, key=len, reverse=True)) + r")"
                              r"(?=\s|\(|（|$)")
# MPICH/Intel MPI's Hydra: "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n=   PID 2671 RUNNING AT
# node0\n=   EXIT CODE: 139" (a code above 128 is 128 + the signal; Intel MPI's "RANK 2 PID ... RUNNING AT node0" and
# "EXIT STATUS: 1"), and its "EXIT STRING: Segmentation fault (signal 11)"
# (the gaps between its lines: the "=" frame, or none in a retyped box, and a viewer's line number "[80001] ")
_HYDRA_GAP = r"(?:[\s=]|\[\d{2,}\])*"   # (one way to match a space: no backtracking over numbered blank lines)
_HYDRA = lazy_regex(r"BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES,?" + _HYDRA_GAP
                    + r"(?:(?:RANK (?P<rank>\d+) )?PID (?P<pid>\d+) RUNNING AT (?P<host>[^\s,]+),?" + _HYDRA_GAP
                    + r")?EXIT (?:CODE|STATUS): (?P<code>\d+)")
# For a process a signal killed, the box's EXIT CODE is the signal's number (its exit string, when in the input,
# says so: "EXIT CODE: 9" ... "Killed (signal 9)", "EXIT CODE: 11" ... "Segmentation fault (signal 11)"): a code
# that is the number of a signal that kills (SIGILL, SIGABRT, SIGBUS, SIGFPE, SIGKILL, SIGSEGV) is read as it when the
# exit string is not in the input; 1, 2 and the other small codes are a program's own exit
_HYDRA_SIGNAL_CODES = frozenset({4, 6, 7, 8, 9, 11})
_HYDRA_STRING = lazy_regex(r"TERMINATED WITH THE EXIT STRING: [^\n(]*\(signal (?P<num>\d+)\)")
# slurmstepd's kill of a job or step over its memory limit (src/slurmd/slurmstepd/, the cgroup's accounting):
# "slurmstepd: error: Job 1171978 exceeded memory limit (18202456 > 16384000), being killed" (KiB), then its "*** JOB
# ... CANCELLED AT ... ***": the cancellation is the kill's consequence, the cause is the memory (read by
# triage.parsing.frameworks; srun's records of the step's tasks Killed after it, triage.parsing.torchelastic)
SLURM_MEMORY = lazy_regex(r"(?P<entity>Job|Step) (?P<id>\S+) exceeded (?:virtual )?memory limit "
                          r"\((?P<used>\d+) > (?P<limit>\d+)\), being killed")
# The cgroup's out-of-memory handler, as slurmstepd tells it: "Detected 2 oom-kill event(s) in step 3756240.batch
# cgroup" / "Detected 1 oom_kill event in StepId=11300781.0": processes of the step were SIGKILLed
# (newer Slurm heads it with its node: "slurmstepd-n1: error: ...")
_SLURM_OOM = lazy_regex(r"slurmstepd(?:-[\w.-]+)?: error: Detected \d+ oom[-_]kill events?(?:\(s\))? in "
                        r"(?:step |StepId=)\S+")
# Cray ALPS's (aprun's) own line of the same, per node: "[NID 00865] 2017-07-11 22:36:25 Apid 1351768: OOM killer
# terminated this process." (after its "Apid N: initiated application termination"): the kernel's OOM killer ended a
# process of the application on that node (which rank the line does not say; the node is nid00865)
_ALPS_OOM = lazy_regex(r"^[ \t]*\[NID (?P<nid>\d+)\] [^\n]*?\bApid \d+: OOM killer terminated this process",
                       re.MULTILINE)
_SRUN_TASK = lazy_regex(r"srun: error: (?:\S+: )?tasks? \d")
# slurmstepd's word at a step's end that its memory cgroup touched the limit at some point ("slurmstepd: error: Exceeded
# step memory limit at some point.", "... Exceeded job memory limit at some point."; task/cgroup's count of the times
# the cgroup hit its limit, page cache included): no process need have been killed (a kill is told by "Detected N
# oom-kill event(s)", slurmstepd's "exceeded memory limit (...), being killed", a task's Killed record, an exit code)
_SLURM_TOUCHED = lazy_regex(r"Exceeded (?:step|job) memory limit at some point")
SLURM_TOUCHED_NOTE = ("slurmstepd's word that the step's memory touched its limit at some point, after the run said it "
                      "ended well (the cgroup's count, page cache included: no kill is told)")
_ENDED_BEFORE = 40       # (the lines before slurmstepd's word the run's word that it ended well is read in)


def slurm_memory_touched_after_its_end(text: str, at: int) -> bool:
    """The line at offset ``at`` of ``text`` is slurmstepd's word that the step's memory touched its limit at some point
    (_SLURM_TOUCHED), after the run's own word, in the lines before it, that it ended well: the step's accounting at
    its end, no failure of the run (where a process was killed, the kill's own records tell it)."""
    end = text.find("\n", at)
    if _SLURM_TOUCHED.search(text, at, end if end >= 0 else len(text)) is None:
        return False
    before = text[:at].rstrip("\n").split("\n")[-_ENDED_BEFORE:]
    return any(says_it_ended(line) for line in before)


# srun's record of a task killed ("srun: error: falkor7: task 0: Killed", after slurmstepd's memory kill and the
# step's cancellation; "... task 0: Out Of Memory" where the cgroup's OOM handler killed it; a line may lack the host)
SRUN_KILLED = lazy_regex(r"srun: error: (?:(?P<host>[\w.-]+): )?tasks? (?P<tasks>[\d,-]+): (?P<what>Killed|Out Of "
                         r"Memory)\b")


# Open MPI's box of a program a resource manager's launcher started directly that Open MPI was not built for (help-ess-*
# .txt: "The application appears to have been direct launched using \"srun\",\nbut OMPI was not built with SLURM's
# PMI support ..." / "... with SLURM support"; triage.parsing.mpi_errors reads it): MPI_Init fails in every task, before
# any has a rank, and srun's records of the tasks' exit codes after it are that failure's end, no task's own
_OMPI_DIRECT_LAUNCH = lazy_regex(r"The application appears to have been direct launched using\s+\"[\w.-]+\",\s+"
                                 r"but OMPI was not built with")
# (and the line of Open MPI's Slurm PMI-1/PMI-2 component failing in its init, without the box: "[host:pid]
# PMI_Get_clique_size [pmix_s1.c:281:s1_init]: Operation failed"; mpi_errors._PMI_COMPONENT reads it: MPI_Init failed
# in that task, before it had a rank)
_OMPI_PMI_INIT = lazy_regex(r"\bPMI2?_\w+ \[pmix_s[12]\.c:\d+:s[12]_init\]: ")


def ompi_direct_launch_at(text: str) -> int:
    """Where Open MPI's direct-launch box (above) stands in ``text``, or its Slurm PMI component's failed init that
    the run did not go on past, else -1."""
    if "direct launched" in text and (match := _OMPI_DIRECT_LAUNCH.search(text)) is not None:
        return match.start()
    if "_init]: " in text:
        for pmi in _OMPI_PMI_INIT.finditer(text):
            if not went_on_after(text, pmi.end()):
                return pmi.start()
    return -1


def slurm_memory_kill_of_several(text: str) -> int:
    """Where slurmstepd's kill of the step over its memory limit (SLURM_MEMORY) or its word that the cgroup's OOM
    handler killed processes of the step (_SLURM_OOM) stands, where srun's records after it name more than one task
    Killed and none Out Of Memory: the kill ended the step's tasks, and which one's memory went over the input does not
    say (one task named: that task's; tasks Out Of Memory: those; -1 where there is no such kill)."""
    if "memory limit" not in text and "oom" not in text:
        return -1
    kill = SLURM_MEMORY.search(text) or _SLURM_OOM.search(text)
    if kill is None:
        return -1
    named: set[str] = set()
    for match in SRUN_KILLED.finditer(text, kill.end()):
        if match.group("what") != "Killed":
            return -1       # (srun's "tasks 1-3: Out Of Memory": the tasks the cgroup's OOM handler killed, named)
        named.add(match.group("tasks"))
    return kill.start() if len(named) > 1 or any(not tasks.isdigit() for tasks in named) else -1
# PETSc's handler in an MPI rank: "[0]PETSC ERROR: Caught signal number 11 SEGV: Segmentation Violation"
_PETSC = lazy_regex(r"^\[(?P<rank>\d+)\]PETSC ERROR: Caught signal number (?P<num>\d+)", re.MULTILINE)
# The rest of what PETSc's signal handler prints after that line (src/sys/error/signal.c, PetscSignalHandlerDefault:
# "Try option -start_in_debugger or -on_error_attach_debugger", ..., "to get more information on the crash."; its
# floating-point trap's "with -start_in_debugger to get more information on the crash."): printed only after catching
# a signal, so a rank whose handler's tail is in the input without its "Caught signal number" line (a paste or a
# search excerpt that began below it) caught one, which one this input does not say
_PETSC_TAIL = lazy_regex(r"^\[(?P<rank>\d+)\]PETSC ERROR: (?:Try option -start_in_debugger|"
                         r"(?:with -start_in_debugger )?to get more information on the crash\.)", re.MULTILINE)
PETSC_TAIL_NOTE = ("PETSc's signal handler ran in this rank (the advice it prints only after catching a signal; its "
                   "'Caught signal number' line, which names the signal, is not in this input)")
# ARMCI's (Global Arrays', NWChem's) signal handler, told through armci_die's "%d:%s: %d" (its process id, the MPI
# rank, then the message; signaltrap.c): "0:Segmentation Violation error, status=: 11", "3:Bus error, status=: 7",
# "Floating Point Exception error", "Illegal Instruction error" (the number after "status=" is the signal in ARMCI,
# a handler's code in older GA: the words say which signal)
_ARMCI_SIGNAL = lazy_regex(r"^[ \t]*(?P<rank>\d{1,7}):(?P<what>Segmentation Violation|Bus|Floating Point Exception|"
                           r"Illegal Instruction) error, status=: -?\d+", re.MULTILINE)
_ARMCI_SIGNALS = {"Segmentation Violation": "SIGSEGV", "Bus": "SIGBUS", "Floating Point Exception": "SIGFPE",
                  "Illegal Instruction": "SIGILL"}
# An IDE's or a shell's record of a process a signal ended: "Process finished with exit code 139 (interrupted by
# signal 11: SIGSEGV)", also cut to "139 (interrupted by signal 11:SIGSEGV)"
_INTERRUPTED = lazy_regex(r"\binterrupted by signal (?P<num>\d+):\s*(?P<name>SIG[A-Z]+)")
# SGLang's server: a child (a scheduler, a TP worker) failed and sent it SIGQUIT (its releases before 0.4.4 spell it
# "Received sigquit from a child proces.")
_SGLANG_CHILD = lazy_regex(r"Received sigquit from a child process?\b")
_RAY = lazy_regex(r"(?:The actor is dead because its worker process has died|A worker died or was killed while "
                  r"executing a task by an unexpected system error)[^\n]*?(?:Worker PID: (?P<pid>\d+))?[^\n]*?"
                  r"Worker exit type: (?P<type>SYSTEM_ERROR|USER_ERROR|NODE_OUT_OF_MEMORY)")
# The same record with its words and fields over several lines, and without an exit type (Ray before 2.0 gave none):
# "A worker died or was killed\nwhile executing a task by an unexpected system error. ..." (wrapped by the reporter or
# a terminal), then "RayTask ID: ...", "Worker ID: ...", "Node ID: ...", "Worker IP address: ...", "Worker port: ...",
# "Worker PID: 6218" each on a line of its own: read up to its Worker PID, a dozen lines at most
_RAY_WRAPPED = lazy_regex(r"(?:The\s+actor\s+is\s+dead\s+because\s+its\s+worker\s+process\s+has\s+died|"
                          r"A\s+worker\s+died\s+or\s+was\s+killed\s+while\s+executing\s+a\s+task\s+by\s+an\s+"
                          r"unexpected\s+system\s+error)"
                          r"(?:[^\n]*\n){0,12}?[^\n]*?\bWorker PID: (?P<pid>\d+)")
_RAY_EXIT_TYPE = lazy_regex(r"Worker exit type: (?P<type>SYSTEM_ERROR|USER_ERROR|NODE_OUT_OF_MEMORY)")
# Ray's GCS, of an actor whose node died (gcs_actor_manager.cc): "The actor died because its node has died. Node Id:
# <hex>" then "\tthe actor's node was terminated unexpectedly: health check failed due to missing too many heartbeats"
# ("terminated expectedly: received SIGTERM", "preempted: <drain reason>": the node was taken away from outside)
_RAY_NODE_DIED = lazy_regex(r"The actor died because its node has died\. Node Id: (?P<node>\w+)(?:\s+the actor's node "
                            r"was (?P<how>terminated expectedly|terminated unexpectedly|preempted): (?P<why>[^\n]*))?")
# Ray's driver, of a node the GCS stopped hearing from: "The node with node id: <hex> and address: 10.0.0.4 and node
# name: 10.0.0.4 has been marked dead because the detector has missed too many heartbeats from it." (its raylet
# crashed, for memory as a rule, or the node is gone or unreachable)
_RAY_NODE_DEAD = lazy_regex(r"The node with node id: \w+ and address: (?P<ip>[\w.:-]+)(?: and node name: [\w.:-]+)? "
                            r"has been marked dead because the detector has missed too many heartbeats")
# "rank 5 died from signal 11", "Rank 2 was killed", "rank=3 crashed", "rank 1 exited with exit code 134",
# "rank 4 terminated by signal SIGSEGV", HPE PALS's (mpiexec on Cray EX) "x1921c5s2b0n0: rank 3 exited with code 1"
# and "rank 12 died from signal 9 and dumped core". Not "[Rank 0] ... watchdog thread terminated" (PyTorch's own).
_PLAIN = lazy_regex(
    r"(?<![\w\[])rank[ =:#]?(?P<rank>\d+)\b(?P<mid>[^\n\[\]]{0,60}?)\b"
    r"(?P<verb>died|was killed|got killed|killed|crashed|exited|terminated)\b"
    r"(?P<tail>[^\n]{0,50}?(?:signal[ :]*(?P<sig>SIG[A-Z]+|\d+)(?: \((?P<signame>[A-Za-z ]+)\))?|"
    r"(?:(?:exit|return|error) ?|with )(?:code|status)[ :=]*(?P<code>-?\d+)))?", re.IGNORECASE)
_NOT_PLAIN = ("watchdog", "ProcessGroup", "local_rank", "heartbeat", "exitcode")
# more ranks named before the same verb: "rank 1 and rank 3 crashed", "rank 2, rank 5 and rank 6 died", "rank 4 & 7
# were killed" (one sentence: each rank it lists failed the same way, not the first alone); "or" is not a list of
# failures, and a range ("rank 0-7") is not read as one
_MORE_RANKS = lazy_regex(r"^(?:\s*(?:,|\band\b|&)\s*(?:rank[ =:#]?)?\d+\b)+\s*(?:(?:all|both|have|had|were|was|got)"
                         r"\s+)*$", re.IGNORECASE)
_RANK_NUMBER = lazy_regex(r"\d+")
# "ranks 1 and 3 crashed", "ranks 2, 5 and 6 died": the plural with a list, which the singular pattern above
# cannot start at
_PLAIN_LIST = lazy_regex(
    r"(?<![\w\[])ranks[ =:#]?(?P<ranks>\d+(?:\s*(?:,|\band\b|&)\s*\d+)+)\s+(?:(?:all|both|have|had|were|got)\s+)*"
    r"(?P<verb>died|killed|crashed)\b", re.IGNORECASE)
_SIG_NAMES = {"killed": "SIGKILL", "aborted": "SIGABRT", "segmentation fault": "SIGSEGV", "bus error": "SIGBUS",
              "terminated": "SIGTERM", "floating point exception": "SIGFPE", "illegal instruction": "SIGILL"}


_FAULTS = frozenset({"SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL"})
# Intel Fortran's runtime message of a signal, whose number is also the process's exit code: "forrtl: severe (174):
# SIGSEGV, segmentation fault occurred", "forrtl: error (78): process killed (SIGTERM)"
_FORRTL_CODE = lazy_regex(r"^forrtl: (?:severe|error) \((?P<num>\d+)\): (?:[^(\n]*\()?(?P<sig>SIG[A-Z]+)\b",
                          re.MULTILINE)


def fortran_signals(text: str) -> dict[int, str]:
    """Intel Fortran's runtime messages of a signal in ``text``, by their number (the exit code of the process that
    printed it): {174: "SIGSEGV"} for "forrtl: severe (174): SIGSEGV, segmentation fault occurred"."""
    if "forrtl: " not in text:
        return {}
    return {int(m.group("num")): m.group("sig") for m in _FORRTL_CODE.finditer(text)}


def signal_name(value: str | None, words: str | None = None) -> str | None:
    """"9" / "SIGKILL" / "Killed" as "SIGKILL"."""
    if value and value.upper().startswith("SIG"):
        return value.upper()
    if value and value.isdigit():
        try:
            return _signal.Signals(int(value)).name
        except ValueError:
            return f"signal {value}"
    return _SIG_NAMES.get((words or "").strip().lower())


def _line_of(text: str, start: int, end: int) -> str:
    head = text.rfind("\n", 0, start) + 1
    tail = text.find("\n", end)
    return " ".join(text[head:tail if tail >= 0 else len(text)].split())[:300]


def _ended_before(text: str, start: int, lines: int = 40) -> str | None:
    """The run's own word that it ended well (``Training complete``) as its last progress line before offset
    ``start`` (among the ``lines`` lines above it), or None: signals after it came while the job was exiting."""
    for line in reversed(text[max(0, start - 20_000):start].split("\n")[-lines - 1:]):
        if says_it_ended(line):
            return line.strip()
        if is_progress(line):
            return None
    return None


def _gasnet_proc(match: re.Match[str]) -> int:
    """The GASNet process (its node: the job's rank) a handler's line names, in either form."""
    return int(match.group("rank") or match.group("node"))


def parse_rank_deaths(text: str) -> tuple[RankDeath, ...]:
    """The plain-word failure records of ``text``, in text order. Never raises."""
    if not holds_any(text, MARKERS) and "Failed core proc" not in text:    # (vLLM's, on its RuntimeError's line)
        return ()
    out: list[RankDeath] = []
    for match in _MPI_SIGNAL.finditer(text):
        out.append(RankDeath(int(match.group("rank")), signal_name(match.group("num")), None, match.group("host"),
                             int(match.group("pid")) if match.group("pid").isdigit() else None,
                             " ".join(match.group(0).split()), first=True, offset=match.start(), mpi=True))
    for match in _MPI_FIRST.finditer(text):
        code = int(match.group("code")) if match.group("code") else None
        out.append(RankDeath(int(match.group("rank")), None, code, None, None, " ".join(match.group(0).split()),
                             first=True, offset=match.start(), mpi=True))
    mpt = list(_MPT.finditer(text))
    for match in mpt:
        # each rank's own handler told its fault (SIGSEGV, SIGBUS, SIGFPE, SIGILL: a signal no launcher sends), the
        # same as the first record's: each such rank is a root beside the first (ranks faulting alike share a
        # cause), as srun's records of tasks faulting alike are read
        sig = signal_name(match.group("name"))
        alike = sig in _FAULTS and sig == signal_name(mpt[0].group("name"))
        out.append(RankDeath(int(match.group("rank")), sig, None, match.group("host"),
                             int(match.group("pid")) if match.group("pid") else None,
                             _line_of(text, match.start(), match.start()), first=alike, offset=match.start(),
                             mpi=True))
    handled = list(_MVAPICH.finditer(text))
    for match in handled:
        # as MPT's: each rank whose own handler told the same fault as the first one's is a root beside it
        sig = signal_name(match.group("num"))
        alike = sig in _FAULTS and sig == signal_name(handled[0].group("num"))
        out.append(RankDeath(int(match.group("rank")), sig, None, match.group("host"), None,
                             _line_of(text, *match.span()), first=alike or match is handled[0], offset=match.start(),
                             mpi=True))
    # a fatal line (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT) is always its process's end: the handler prints it, the
    # backtrace, calls the conduit's hook that kills the job and re-raises the signal; the other processes' steps
    # after it are theirs, printed until GASNet's exit reaches them. Only a signal sent (a stop's SIGTERM, SIGINT) may
    # be a line the job went on past.
    handled_gasnet = [m for m in _GASNET_SIGNAL.finditer(text)
                      if m.group("fatal") or not went_on_after(text, m.end())]
    caught = [m for m in handled_gasnet if m.group("fatal")]
    # the first fault caught heads only where no other process's own FATAL ERROR came before it: that error is then
    # the first failure (a peer's later 'failed send' one is the fault's collateral)
    heads = bool(caught) and not any(
        m.start() < caught[0].start() and int(m.group("rank")) != _gasnet_proc(caught[0])
        for m in _GASNET_FATAL.finditer(text, 0, caught[0].start()))
    for match in handled_gasnet:
        # as MPT's: the first process whose own handler caught a fault, and those that caught the same fault, are
        # roots; a signal sent to a process (SIGTERM, SIGINT) or caught after another's fault is not. Signals sent
        # and no fault caught: the job was stopped from outside (a scheduler, a person's Ctrl-C), no process's
        # failure, unless the input shows another failure anywhere (a process's gasnet_exit signals its peers: the
        # stop is then that failure's consequence, analysis.stopped, and each process's line its teardown). A signal
        # sent that the job went on past (its progress after it) is no process's end.
        sig = signal_name(match.group("name") or match.group("oldname"))
        alike = heads and match.group("fatal") is not None and sig in _FAULTS and (
            match is caught[0] or sig == signal_name(caught[0].group("name") or caught[0].group("oldname")))
        line = _line_of(text, *match.span())
        if not caught and sig in ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT") and match is handled_gasnet[0]:
            ended = _ended_before(text, match.start())
            said = (f"the job was stopped from outside: {sig} sent to GASNet's processes, none of them faulted" if
                    ended is None else f"the job was stopped from outside after its own end ('{ended[:120]}'): "
                    f"{sig} sent to GASNet's processes while they exited, none of them faulted")
            out.append(RankDeath(None, sig, None, None, None, f"{said} ({line})"[:400], offset=match.start(),
                                 outside=True, consequence=True))
        out.append(RankDeath(_gasnet_proc(match), sig, None, None, None, line, first=alike,
                             offset=match.start()))
    for match in _JSRUN.finditer(text):
        code = int(match.group("code")) if match.group("code") else None
        out.append(RankDeath(int(match.group("rank")), signal_name(match.group("num")), code or None, None, None,
                             _line_of(text, *match.span()), first=True, offset=match.start(), mpi=True))
    for match in _VLLM.finditer(text):
        out.append(RankDeath(int(match.group("rank")), None, None, None, None, _line_of(text, *match.span()),
                             offset=match.start()))
    for match in _VLLM_ENGINE.finditer(text):
        out.append(RankDeath(None, None, None, None, None, _line_of(text, *match.span()), offset=match.start()))
    for match in _VLLM_RAY.finditer(text):
        out.extend(RankDeath(int(number), None, None, None, None, _line_of(text, *match.span()), offset=match.start())
                   for number in dict.fromkeys(_RANK_NUMBER.findall(match.group("ranks"))))
    for match in _SGLANG_DEAD.finditer(text):
        code = int(match.group("code")) if match.group("code") not in (None, "None") else None
        out.append(RankDeath(int(match.group("rank")), signal_name(str(-code)) if code is not None and code < 0
                             else None, code if code is not None and code > 0 else None, None, None,
                             " ".join(match.group(0).split())[:300], offset=match.start(),
                             consequence=_SGLANG_CHILD.search(text, 0, match.start()) is not None))
    for match in _PADDLE.finditer(text):
        code = int(match.group("code"))
        out.append(RankDeath(int(match.group("rank")), signal_name(str(-code)) if code < 0 else None,
                             code if code > 0 else None, None, None, _line_of(text, *match.span())[:300],
                             first=True, offset=match.start()))
    for match in _PADDLE_ABORT.finditer(text):
        ranks = dict.fromkeys(_RANK_NUMBER.findall(match.group("ranks")))
        out.extend(RankDeath(int(number), None, None, None, None, _line_of(text, *match.span())[:300], first=True,
                             offset=match.start()) for number in ranks)
    for match in _VLLM_CORES.finditer(text):
        for core in _VLLM_CORE.finditer(match.group("procs")):
            if int(core.group("code")) < 0 and (sig := signal_name(str(-int(core.group("code"))))) is not None:
                # (a signal only: an exit code of its own follows the core's exception, which the input shows above)
                out.append(RankDeath(None, sig, None, None, None,
                                     f"vLLM's engine core {core.group('name')} was killed by {sig} before it was "
                                     f"ready: {_line_of(text, *match.span())}"[:300], offset=match.start()))
    for match in _VLLM_PID.finditer(text):
        code = int(match.group("code"))
        out.append(RankDeath(None, signal_name(str(-code)) if code < 0 else None, code if code > 0 else None, None,
                             int(match.group("pid")), _line_of(text, *match.span()), offset=match.start()))
    for match in _RAY.finditer(text):
        fields = _ray_fields(text, match.start())
        said_pid = _RAY_PID.search(match.group(0))      # the raylet's record: "Worker PID: 3311"
        pid = match.group("pid") or (said_pid.group(1) if said_pid else None) or fields.get("pid")
        said_ip = _RAY_IP.search(match.group(0))        # the raylet's record says it: "Worker IP address: 10.0.0.5"
        ip = said_ip.group(1) if said_ip else fields.get("ip")
        ip = ip if ip and ip.strip("0.:") else None           # (0.0.0.0 / "::": bound to any address, no node)
        said = _line_of(text, *match.span())
        if match.group("type") == "NODE_OUT_OF_MEMORY":
            # (Ray's memory monitor killed it, with SIGKILL, for the node's host memory: not a GPU's)
            said = f"out of host memory: Ray's memory monitor killed the worker (exit type NODE_OUT_OF_MEMORY): {said}"
        out.append(RankDeath(None, "SIGKILL" if match.group("type") == "NODE_OUT_OF_MEMORY" else None, None, ip,
                             int(pid) if pid and pid.isdigit() else None, said[:300], offset=match.start()))
    told = {death.offset for death in out}
    for match in _RAY_WRAPPED.finditer(text):
        if match.start() in told:
            continue            # (the one-line record, read above)
        record = text[match.start():match.end() + 300]
        exit_type = _RAY_EXIT_TYPE.search(record)
        killed = exit_type is not None and exit_type.group("type") == "NODE_OUT_OF_MEMORY"
        said_ip = _RAY_IP.search(record)
        ip = said_ip.group(1) if said_ip and said_ip.group(1).strip("0.:") else None
        said = " ".join(text[match.start():match.end()].split())
        if killed:
            said = f"out of host memory: Ray's memory monitor killed the worker (exit type NODE_OUT_OF_MEMORY): {said}"
        out.append(RankDeath(None, "SIGKILL" if killed else None, None, ip, int(match.group("pid")), said[:300],
                             offset=match.start()))
    for match in _RAY_NODE_DIED.finditer(text):
        fields = _ray_fields(text, match.start())
        pid, ip = fields.get("pid"), fields.get("ip")
        ip = ip if ip and ip.strip("0.:") else None
        how, why = match.group("how") or "", (match.group("why") or "").strip()
        said = " ".join(match.group(0).split())
        if how in ("terminated expectedly", "preempted"):
            out.append(RankDeath(None, "SIGTERM", None, ip, int(pid) if pid and pid.isdigit() else None,
                                 f"Ray: the actor's node{f' ({ip})' if ip else ''} was {how} ({why}): a stop from "
                                 f"outside the job, not a failure of the actor ({said})"[:400],
                                 offset=match.start(), outside=True))
        else:
            out.append(RankDeath(None, None, None, ip, int(pid) if pid and pid.isdigit() else None,
                                 f"Ray: the actor's node{f' ({ip})' if ip else ''} died ({said})"[:400],
                                 offset=match.start()))
    for match in _RAY_NODE_DEAD.finditer(text):
        out.append(RankDeath(None, None, None, match.group("ip"), None,
                             f"Ray marked the node {match.group('ip')} dead (its raylet stopped answering: it crashed, "
                             f"often for memory, or the node or its network failed): {_line_of(text, *match.span())}"
                             [:400], offset=match.start()))
    for match in _SHELL_JOB.finditer(text):
        out.append(RankDeath(None, signal_name(None, match.group("what")), None, None, int(match.group("pid")),
                             _line_of(text, *match.span()), offset=match.start()))
    for match in _SHELL_JOB_LOCAL.finditer(text):
        out.append(RankDeath(None, _LOCAL_SIGNAL_WORDS[match.group("what")], None, None, int(match.group("pid")),
                             _line_of(text, *match.span()), offset=match.start()))
    for match in _ZSH_JOB.finditer(text):
        out.append(RankDeath(None, _ZSH_SIGNAL_WORDS[match.group("what")], None, None,
                             int(match.group("pid")) if match.group("pid") else None,
                             _line_of(text, *match.span()), offset=match.start()))
    for match in _SGLANG_CHILD.finditer(text):
        # (its handler then kills the server's whole process tree, itself by SIGKILL: the shell's "Killed" after it)
        out.append(RankDeath(None, None, None, None, None, _line_of(text, *match.span()), offset=match.start(),
                             consequence=True, tears_down=True))
    out.extend(_other_records(text, out))
    taken = _within((d.offset, d.offset + len(d.text)) for d in out)
    for match in _PLAIN.finditer(text):
        if not taken(match.start()):
            out.extend(_plain(text, match))
    for match in _PLAIN_LIST.finditer(text):
        line = _line_of(text, *match.span())
        if any(word in line for word in _NOT_PLAIN) or taken(match.start()):
            continue
        out.extend(RankDeath(int(number), None, None, None, None, line, offset=match.start())
                   for number in _RANK_NUMBER.findall(match.group("ranks")))
    return tuple(sorted(out, key=lambda d: d.offset))


def _within(spans: Iterable[tuple[int, int]]) -> Callable[[int], bool]:
    """Whether an offset lies in one of ``spans`` (``lo <= offset < hi``): the spans sorted once, then a bisect per
    question (a walk of every span per plain line made a log of many records quadratic)."""
    ordered = sorted(spans)
    starts = [lo for lo, _hi in ordered]
    reach: list[int] = []           # the furthest end of the spans that start at or before each one
    for _lo, hi in ordered:
        reach.append(max(hi, reach[-1]) if reach else hi)

    def inside(offset: int) -> bool:
        at = bisect_right(starts, offset) - 1
        return at >= 0 and reach[at] > offset

    return inside


# the ActorDiedError block above Ray's record: "\tclass_name: RayTrainWorker", "\tpid: 8823", "\tip: 10.0.0.5"
_RAY_FIELD = lazy_regex(r"^\s+(?P<key>pid|ip|actor_id|class_name): (?P<value>\S+)\s*$", re.MULTILINE)


_RAY_IP = lazy_regex(r"Worker IP address: ([\w.:-]+)")
_RAY_PID = lazy_regex(r"Worker PID: (\d+)")


def _ray_fields(text: str, start: int) -> dict[str, str]:
    """The pid and ip of the actor Ray's record tells of, from the ActorDiedError fields just above it."""
    window = text[max(0, start - 1200):start]
    head = max(window.rfind("ActorDiedError"), window.rfind("died unexpectedly before finishing"))
    if head < 0:
        return {}
    fields = {m.group("key"): m.group("value") for m in _RAY_FIELD.finditer(window, head)}
    return fields if "actor_id" in fields or "class_name" in fields else {}


def _other_records(text: str, found: list[RankDeath]) -> list[RankDeath]:
    """Hydra's termination box, PETSc's signal handler, slurmstepd's oom-kill record, an "interrupted by signal"."""
    out: list[RankDeath] = []
    for match in _HYDRA.finditer(text):
        code = int(match.group("code"))
        said = _HYDRA_STRING.search(text, match.end())
        sig = (signal_name(said.group("num")) if said else signal_name(str(code - 128)) if 128 < code < 160
               else signal_name(str(code)) if code in _HYDRA_SIGNAL_CODES else None)
        rank = int(match.group("rank")) if match.group("rank") else None
        pid = int(match.group("pid")) if match.group("pid") else None
        out.append(RankDeath(rank, sig, None if sig else code, match.group("host"), pid,
                             " ".join(match.group(0).replace("=", " ").split()), first=True, offset=match.start(),
                             mpi=rank is not None))
    for match in _PETSC.finditer(text):
        out.append(RankDeath(int(match.group("rank")), signal_name(match.group("num")), None, None, None,
                             _line_of(text, *match.span()), offset=match.start(), mpi=True))
    caught = {int(m.group("rank")) for m in _PETSC.finditer(text)} if "PETSC ERROR" in text else set()
    for match in _PETSC_TAIL.finditer(text) if "PETSC ERROR" in text else ():
        if int(match.group("rank")) not in caught:
            caught.add(int(match.group("rank")))
            out.append(RankDeath(int(match.group("rank")), None, None, None, None,
                                 f"{PETSC_TAIL_NOTE}: {_line_of(text, *match.span())}", offset=match.start(), mpi=True))
    for match in _ARMCI_SIGNAL.finditer(text):
        out.append(RankDeath(int(match.group("rank")), _ARMCI_SIGNALS[match.group("what")], None, None, None,
                             _line_of(text, *match.span()), offset=match.start(), mpi=True))
    # srun's own record of the task (read with torchrun's), or another record of the kill, says more
    # (srun's records of several tasks Killed after it: the kill's, read as of no task, triage.parsing.torchelastic)
    if not any(d.signal == "SIGKILL" for d in found) and (
            not _SRUN_TASK.search(text) or slurm_memory_kill_of_several(text) >= 0):
        for match in _SLURM_OOM.finditer(text):
            out.append(RankDeath(None, "SIGKILL", None, None, None, _line_of(text, *match.span()),
                                 offset=match.start()))
    for match in _ALPS_OOM.finditer(text):
        if not went_on_after(text, match.end()):
            out.append(RankDeath(None, "SIGKILL", None, f"nid{match.group('nid')}", None,
                                 _line_of(text, *match.span()), offset=match.start()))
            break
    for match in _INTERRUPTED.finditer(text):
        # (the number, not a name a person retyped: "signal 11: SIGSEGA")
        out.append(RankDeath(None, signal_name(match.group("num")), None, None, None, _line_of(text, *match.span()),
                             offset=match.start()))
    # an IDE's or a shell's record of a Windows process a fault ended: "Process finished with exit code -1073741819
    # (0xC0000005)" (its crash status, read as the signal of the same fault); spawn's "process N terminated with
    # exit code ..." and torchelastic's "failed (exitcode: ...)" are read with their process, not here
    for start, end, sig in windows_status.exit_status_crashes(text):
        line = _line_of(text, start, end)
        if went_on_after(text, end):
            continue     # a tool's logged status it went on after (a retried subprocess), not the job's end
        if "terminated with exit code" not in line and "exitcode" not in line and not _PLAIN.search(line):
            out.append(RankDeath(None, sig, None, None, None, line, offset=start))
    return out


@functools.lru_cache(maxsize=4)
def _shell_told(text: str) -> frozenset[str]:
    """The signals the shell's job-status records in ``text`` say killed a child (``line N: PID Segmentation fault``,
    and the same in a translated locale)."""
    told = {signal_name(None, m.group("what")) for m in _SHELL_JOB.finditer(text)}
    told |= {_LOCAL_SIGNAL_WORDS[m.group("what")] for m in _SHELL_JOB_LOCAL.finditer(text)}
    told |= {_ZSH_SIGNAL_WORDS[m.group("what")] for m in _ZSH_JOB.finditer(text)}
    return frozenset(sig for sig in told if sig)


def _plain(text: str, match: re.Match[str]) -> list[RankDeath]:
    line = _line_of(text, *match.span())
    if any(word in line for word in _NOT_PLAIN) or "noticed that process" in line:
        return []
    if ran_to_its_end_after(text, match.end()):
        return []          # the job stepped on and said it ended well after it: a sentence about a death (a FAQ's
        #                    "Rank 3 ... died with signal 11 means a segfault"), or one the job outlived, not its end
    verb = match.group("verb").lower()
    sig = signal_name(match.group("sig"), match.group("signame"))
    code = int(match.group("code")) if match.group("code") else None
    if code is not None and (windows := windows_status.crash_signal(code)) is not None:
        sig, code = windows, None           # a Windows crash status (0xC0000005 as 3221225477 or -1073741819)
    elif code is not None and code < 0:
        sig, code = signal_name(str(-code)), None
    if sig is None and code and (fortran := _FORRTL_CODE.search(text)) is not None:
        # Intel Fortran's runtime ends the process with its message's number, so a launcher's "rank 384 exited with
        # code 174" beside "forrtl: severe (174): SIGSEGV, segmentation fault occurred" is that rank's segfault
        said = {int(m.group("num")): m.group("sig") for m in _FORRTL_CODE.finditer(text, fortran.start())}
        if code in said:
            sig, code = signal_name(said[code]), None
    if sig is None and code and 128 < code < 160 and signal_name(str(code - 128)) in _shell_told(text):
        # a shell's status for a child that signal S killed (128 + S), where the shell's own record of that death is
        # in the input ("./run.sh: line 7: 169430 Segmentation fault (core dumped) python ..."): the launcher passed
        # on the status of the script it ran, so a "rank 0 exited with code 139" beside it is that rank's SIGSEGV
        sig, code = signal_name(str(code - 128)), None
    if sig is None and match.group("mid").rstrip().lower().endswith("signal"):
        sig = signal_name(None, verb)       # strsignal's word: ALPS's "PE RANK 7 exit signal Killed" (SIGKILL)
    if verb in ("exited", "terminated") and sig is None and not code:
        return []            # "rank 0 exited" / "exited with code 0": a normal end
    ranks = [int(match.group("rank"))]
    if _MORE_RANKS.match(match.group("mid")):
        ranks += [int(number) for number in _RANK_NUMBER.findall(match.group("mid"))]
    return [RankDeath(rank, sig, code, None, None, line, offset=match.start()) for rank in dict.fromkeys(ranks)]
