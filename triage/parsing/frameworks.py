"""Schedulers', MPI runtimes' and serving/Ray frameworks' own records of how a job or one of its
processes ended, beyond those of :mod:`triage.parsing.launchers`:

- Slurm's ``slurmstepd: error: *** STEP 42.0 ON node07 CANCELLED AT 2026-01-02T03:04:05 DUE TO TIME
  LIMIT ***`` (also PREEMPTION, NODE FAILURE, JOB REQUEUE; ``DUE to SIGNAL Terminated`` and a bare
  ``CANCELLED AT ... ***`` of scancel): the job stopped from outside, the cause of every rank's SIGTERM
  after it; ``DUE TO TASK FAILURE``, ``FAILED (non-zero exit code ...)`` and the signal or bare forms
  after srun's record of a task that failed (srun --kill-on-bad-exit) are a consequence;
- slurmstepd's ``*** STEP 42.0 STEPD TERMINATED ON node07 AT <time> DUE TO JOB NOT ENDING WITH SIGNALS ***``:
  the step was being ended and its processes did not end with the signals (a process stuck in the kernel, on a device
  or a file system; Slurm then drains the node): after a cancellation or a task's failure in the input it is their
  consequence, alone a stop from outside whose cause is not in the input;
- PBS's job record (``qstat -f``): ``Exit_status = 271`` with the record's other attributes (``job_state = F``,
  ``resources_used.walltime = ...``): above 256 PBS ended the job with signal N-256 (271: SIGTERM, its walltime, a qdel
  or a limit it enforces; the record's ``comment`` and its walltimes say which); 1-255, the job script's own exit code,
  is not read (the script's failing line above it says more);
- Kubeflow's training operator: ``PyTorchJob train is failed because 1 Worker replica(s) failed.``;
- horovodrun: ``Terminating remaining workers after failure of Process 2.`` (rank 2 failed first);
- torchx's app status: `` *trainer[0]:FAILED (exitcode: 1)`` (then ``hostname: ...``);
- PRRTE's (Open MPI 5) "first process to do so" box with its process name ``[prterun-host-123@1,3]``
  and its ``A process exceeded memory limits`` box; Intel MPI's Hydra box ``RANK 2 PID 4451 RUNNING AT
  host`` / ``KILLED BY SIGNAL: 9 (Killed)``; Hydra's ``one of the processes terminated badly``;
- Kubernetes: a pod's ``Reason: OOMKilled`` / ``Exit Code: 137`` (``kubectl describe pod``), a pod
  listed ``OOMKilled`` or ``Error`` (``kubectl get pods``), ``Back-off restarting failed container``;
  an OOMKilled or evicted pod (``Reason: Evicted`` / ``Message: The node was low on resource: memory``)
  is a stop from outside the job (the kubelet's, the kernel's), not a failure of a rank;
- Ray: the raylet's ``Workers (tasks / actors) killed due to memory pressure (OOM) ... at node (ID: ...,
  IP: 10.0.0.9)``;
- submitit: ``Job 4242_0 (task: 3) with path ... has not produced any output (state: TIMEOUT)`` (Slurm's
  state: a time limit, preemption or node failure is a stop from outside; OUT_OF_MEMORY that task's
  kill) and ``Job (task=3) failed during processing with trace:`` (task 3, the rank, raised);
- SGLang's server: ``Child process unexpectedly failed with exitcode=9. pid=8812`` (the raw wait
  status: 9 is SIGKILL, 256 is exit code 1).
- a cloud's own word that it took the machine away under the job (a spot or preemptible VM reclaimed, a node shut
  down): AWS Batch's ``Host EC2 (instance i-0abc...) terminated.``, EC2 Spot's status codes
  (``instance-terminated-by-price``, ``instance-terminated-no-capacity``, ``marked-for-termination``, ...), the
  Taskcluster worker's ``GCP Metadata Service says termination is imminent``, and the kubelet's graceful node shutdown
  (``Pod was terminated in response to imminent node shutdown.``), and Cromwell's ``PAPI error code 14.`` (Google's
  Pipelines API: the worker VM preempted or terminated; also ``PAPI error code 10. Message: 14: VM ... stopped
  unexpectedly``): a stop from outside the job, no rank at fault.

``parse_framework_records(text)`` -> RankDeath records in text order. Never raises.
"""

from __future__ import annotations

import re

from triage.lazy_regex import lazy_regex
from triage.parsing.launchers import SLURM_MEMORY, SRUN_KILLED, RankDeath, parse_rank_deaths, signal_name
from triage.parsing.mpi_errors import MPICH_ABORT_HEAD
from triage.parsing.progress import holds_failure_word, is_progress, says_it_ended, went_on_after
from triage.parsing.regex_gate import holds_any
from triage.parsing.torchelastic import parse_launcher_failures
from triage.parsing.unread_failure import SHELL_TRACE

MARKERS = ("CANCELLED AT", "Evicted", "replica(s) failed", "after failure of Process", ":FAILED", "FAILED (non-zero",
           "Process name:", "exceeded memory limits", "BAD TERMINATION", "terminated badly", "OOMKilled",
           "has not produced any output", "failed during processing", "Back-off restarting",
           "killed due to memory pressure", "Child process unexpectedly failed", "Ray killed this worker",
           "DeadLock detected from rank", "failed due to worker errors", "lost communication with",
           "daemon has unexpectedly failed", "Received SIGTERM: ", "Node failure on", "Unable to create step",
           "JobID",
           ": Terminated",
           "Exit Code:", "exited with code", "ExitCode", "exited with a non-zero status", "considered dead",
           " reported ", "Child process with PID", "return code list",
           "exit codes:", "exit signals:", "exit signal ", "exceeded memory limit", "PBS: job killed", "amrex::Abort::",
           "job killed after reaching LSF", "memory budget", "low on resource", "hard wallclock time",
           "exceeds job hard limit", "termination (", "ATP Stack walkback", "MOAB_INFO",
           "exceeded its walltime limit", "Job was held", "put on hold by", "exceeded request_memory",
           "Error from slot", "Error from glidein", "gone over memory limit", "Job was aborted",
           "Shadow exception!", "TERM_",
           "Resource usage summary",
           "Error   ", "   Error", "Init:Error", "CrashLoopBackOff", "STEPD TERMINATED", "xit_status", "(exit code ",
           "flux-job: task(s)", "exit-timeout=", "killed by YARN", "Current usage: ",
           "to reliably start one or more daemons", "Host EC2", "instance-terminated-", "marked-for-termination",
           "termination is imminent", "imminent node shutdown", "is frozen!", " terminated.", ". Exit status: ",
           "PAPI error code 1", "BackoffLimitExceeded", "specified backoff limit", "DeadlineExceeded",
           "specified deadline", "Lost executor", "probe, will be restarted")
# the words of its records that come mid-log, not at the job's end: YARN's NodeManager log goes on after it kills a
# container (its other containers, the clean-up), "Container [pid=P,containerID=C] is running beyond physical memory
# limits. Current usage: ..." (Spark's driver's "ERROR ... Lost executor N on H: Container killed by YARN ..." is found
# by its ERROR): needles of the large-log pass (triage.parsing.whole_text), one of its few left
MID_LOG_MARKERS = ("Current usage: ",)

# slurmstepd (src/slurmd/slurmstepd/req.c): "*** %s ON %s CANCELLED AT %s DUE TO TIME LIMIT ***" with %s "JOB <id>"
# or "STEP <id>"; "DUE to SIGNAL %s" (strsignal: scancel, or srun ending the step); older Slurm: the same with no
# reason ("*** STEP 2.0 ON n1 CANCELLED AT <time> ***", also after srun --kill-on-bad-exit saw a task fail) and
# the host last ("*** JOB 830329 CANCELLED AT <time> DUE TO TIME LIMIT on n447 ***")
_SLURM_CANCEL = lazy_regex(
    r"\*\*\* (?P<what>JOB|STEP) (?P<id>\S+)(?: ON (?P<host>\S+))? CANCELLED AT (?P<when>\S+)"
    r"(?: DUE (?:TO|to) (?P<why>TIME LIMIT|PREEMPTION|NODE FAILURE|JOB REQUEUE|TASK FAILURE|SIGNAL [\w ]+?))?"
    r"(?:,[^*\n]*?)?(?: on (?P<old_host>[\w.-]+))? \*\*\*")
# slurmstepd's kill of a job or step over its memory limit (triage.parsing.launchers.SLURM_MEMORY)
_SLURM_MEMORY = SLURM_MEMORY
_SRUN_KILLED = SRUN_KILLED
# PBS (Torque's and PBS Pro's MOM) killing a job over its requested memory, in the job's output file: "=>> PBS: job
# killed: mem 38427376kb exceeded limit 33554432kb", "=>> PBS: job killed: mem job total 115343360 kb exceeded ..."
# (PBS's MOM, OpenPBS's and Torque's mom_main.c, writes the line and ends the job over a limit with SIGTERM, then
# SIGKILL after the job's kill_delay: which of them ended it, the line does not say)
_PBS_SIGNAL = "the signal that ended it is not in this input: PBS sends SIGTERM, then SIGKILL after its kill_delay"
_PBS_MEMORY = lazy_regex(r"PBS: job killed: (?P<what>v?mem)(?: job total)? (?P<used>\d+) ?kb exceeded limit "
                         r"(?P<limit>\d+) ?kb")
# YARN's NodeManager killing a container over its memory limit, as Spark's driver tells it (YarnAllocator: "Container
# killed by YARN for exceeding memory limits. 7.2 GB of 4.2 GB virtual memory used. Consider boosting
# spark.yarn.executor.memoryOverhead.", Spark 3: "... exceeding physical memory limits. 9.1 GB of 9 GB physical memory
# used."; its line "Lost executor 9 on HOST: Container killed ..." names the node) and as the NodeManager itself does
# (ContainersMonitorImpl: "Container [pid=4242,containerID=container_..._000002] is running beyond physical memory
# limits. Current usage: 2.1 GB of 2 GB physical memory used; ... Killing container.", Hadoop 3: "is running 123B beyond
# the 'PHYSICAL' memory limit.")
_YARN_MEMORY = lazy_regex(
    r"Container killed by YARN for exceeding (?:(?:physical|virtual) )?memory limits?\.\s+"
    r"(?P<used>[\d.]+ ?[KMGT]?B) of (?P<limit>[\d.]+ ?[KMGT]?B) (?P<what>physical|virtual) memory used|"
    r"Container \[pid=(?P<pid>\d+),\s*containerID=[\w-]+\] is running (?:\d+B )?beyond (?:the '?)?"
    r"(?P<kind>physical|virtual|PHYSICAL|VIRTUAL)'? memory limits?\. Current usage: (?P<usage>[^;\n]{1,80})")
# Spark going on after a lost executor (its tasks run again elsewhere): DAGScheduler's "Job 0 finished: count at
# job.py:12, took 320.1 s" (a failed job: "Job 0 failed: ..."), TaskSetManager's "Finished task 31.1 in stage 3.0 (TID
# 431) in 120 ms on n4 (executor 4) (32/400)", YARN's ApplicationMaster's "Final app status: SUCCEEDED, exitCode: 0"
_SPARK_WENT_ON = lazy_regex(r"\bJob \d+ finished: |\bFinished task \d+(?:\.\d+)? in stage \d+(?:\.\d+)? \(TID \d+\)|"
                            r"\bFinal app status: SUCCEEDED\b")
# Spark's driver's word that it lost an executor for a reason its own words do not tell (TaskSchedulerImpl: "Lost
# executor $id on $host: $reason", ERROR; the reason a SlaveLost / ExecutorProcessLost of the cluster manager's
# backend: Kubernetes' "Executor lost for unknown reasons" (the pod gone, its status not read), "Remote RPC client
# disassociated. Likely due to containers exceeding thresholds, or network issues. ...", the heartbeat receiver's
# "Executor heartbeat timed out after 123456 ms"): executor N on that host ended, why is in the cluster manager's
# record of its container (its exit code, an OOMKilled), not in the driver's log
_SPARK_LOST = lazy_regex(r"\bLost executor (?P<id>\S+) on (?P<host>[\w.-]+?)(?::\d+)?: (?P<why>Executor lost for "
                         r"unknown reasons|Remote RPC client disassociated|Executor heartbeat timed out after \d+ ms)")
SPARK_LOST = "Spark's driver lost executor"
# Spark's driver beginning its own orderly stop (core's SparkContext: "Invoking stop() from shutdown hook", Spark 3.5's
# "SparkContext is stopping with exitCode 0."; YARN's ApplicationMaster before 1.4: "Invoking sc stop from shutdown
# hook"; CoarseGrainedSchedulerBackend.stopExecutors: "Shutting down all executors") and its word that the stop ended
# ("Successfully stopped SparkContext"): an executor lost between them is one the driver shut down itself (before
# Spark 1.5 TaskSchedulerImpl logged those as errors, SPARK-8562, apache/spark#6952; a cluster manager's backend still
# tells a pod it deleted as "Executor lost for unknown reasons"), no end of the job
_SPARK_STOPPING = lazy_regex(r"\bInvoking (?:stop\(\)|sc stop) from shutdown hook\b|\bSparkContext is stopping with "
                             r"exitCode 0\b|\bShutting down all executors\b")
_SPARK_STOPPED = lazy_regex(r"\bSuccessfully stopped SparkContext\b")
_SPARK_ON_K8S = lazy_regex(r"\b[Kk]ubernetes|\bkubectl\b|\bExecutorPods\w+")
_YARN_HOST = lazy_regex(r"Lost executor \S+ on (?P<host>[\w.-]+?):|on host: (?P<on>[\w.-]+)")
# Spark's YarnAllocator telling how YARN's container of an executor ended (resource-managers/yarn YarnAllocator.scala:
# "Container marked as failed: $containerId on host: $host. Exit status: $exitStatus. [Possible causes: ...]
# Diagnostics: ...", or "Container from a bad node: ..." where YARN blames the node), in the driver's log, its "Lost
# executor N on H: ..." and its "ExecutorLostFailure (executor N exited caused by one of the running tasks) Reason:
# ..."; with YARN's diagnostics "Container killed on request. Exit code is 137", "Container exited with a non-zero
# exit code 137", "Killed by external signal": a status of 128+S is the executor's process killed by signal S
# (where the record is the reason DAGScheduler gives for aborting the job, "SparkException: Job aborted due to stage
# failure: Task 3 in stage 1.0 failed 4 times, most recent failure: Lost task 3.3 ...: ExecutorLostFailure (...)
# Reason: Container ...", the driver's exception is that kill's consequence: the kill is the first failure)
_STAGE_ABORTED = "Job aborted due to stage failure: "
_YARN_EXIT = lazy_regex(r"Container (?:marked as failed|from a bad node): (?P<id>container_\w+)(?: on host: "
                        r"(?P<host>[\w.-]+?))?\.? Exit status: (?P<code>-?\d+)\.")
YARN_STOPPED = "was stopped by YARN with SIGTERM"
# YARN's diagnostics of a container that exited non-zero, with the end of its error file (ContainerLaunch: "Container
# exited with a non-zero exit code 1. Error file: prelaunch.err.\nLast 4096 bytes of prelaunch.err :\n<its lines>",
# "Last 4096 bytes of stderr :"): the first of its lines, the executor's own words
_YARN_ERR_TAIL = lazy_regex(r"Last \d+ bytes of (?P<file>prelaunch\.err|stderr) :[ \t]*\r?\n(?:[ \t]*\r?\n)?"
                            r"(?P<what>[^\n]*\S[^\n]*)")
_SCRIPT_PATH = lazy_regex(r"^\S*/(?=[^/\s]+:)")
_SPARK_EXIT_CODES = {50: "Spark's code for an uncaught exception in the executor", 51: "Spark's code for an uncaught "
                     "exception in the executor, raised again in its handler", 52: "Spark's code for a "
                     "java.lang.OutOfMemoryError in the executor's JVM: its heap, spark.executor.memory",
                     56: "Spark's code for an executor whose heartbeats to the driver failed"}
# grep's name of the file it found a line in, before a batch system's line ("job.o52401091:=>> PBS: job killed: ...",
# "logs/lsf.4242.out:TERM_MEMLIMIT: ...", "slurm-4242.out:12:..." with -n): the line grepped from the jobs' output
# files; a name with a dot or a slash, never a word of a sentence ("error: ..."); or a viewer's line number ("[80000] ",
# which textclean takes off only in a paste of five lines or more): the job's report is the job's whatever tags its line
_GREP_FILE = r"(?:[\w~+-]*[./][\w.~/+-]*:(?:\d+:)?(?=\S)|\[\d{1,7}\][ \t]+)?"
# LSF's termination reason in the job's report (lsb.acct's TERM_* exit info, written into the job's output):
# "TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.", "TERM_THREADLIMIT: job killed after reaching LSF
# thread limit.", "TERM_RUNLIMIT: job killed after reaching LSF run time limit." (a time limit: a stop from outside, as
# Slurm's)
# (LSF writes it at a line's start: the words quoted inside a sentence are no record of this job)
_LSF_LIMIT = lazy_regex(r"^[ \t>*`]*" + _GREP_FILE + r"TERM_(?P<code>[A-Z]+): job killed after reaching LSF "
                        r"(?P<limit>[\w ]{1,40}?) limit", re.MULTILINE)
_LSF_TIME = ("RUNLIMIT", "CPULIMIT")
# how the job ended, in the report's line under its TERM_* reason: "Exited with exit code 143." (128 + the signal LSF
# sent: SIGINT, SIGTERM, then SIGKILL at a limit), "Exited with signal termination: Killed." (strsignal's word)
_LSF_EXITED = lazy_regex(r"[^\n]*\r?\n(?:[ \t]*\r?\n){0,2}[ \t>*`]*" + _GREP_FILE
                         + r"(?P<said>Exited with (?:exit code (?P<code>\d+)|signal termination: (?P<sig>[^\n.]+)))")
# LSF's terminations from outside the job (lsb.acct's TERM_*, in the job's report): "TERM_OWNER: job killed by owner.",
# "TERM_ADMIN: job killed by root or LSF administrator.", "TERM_PREEMPT: job killed after preemption.",
# "TERM_REQUEUE_OWNER: job killed and requeued by owner." (a bkill, an admin, a preemption: no rank failed), and the
# queue's or the cluster's own ends: "TERM_WINDOW: job killed after queue run window closed.", "TERM_DEADLINE: job
# killed after deadline expires.", "TERM_LOAD: job killed after load exceeds threshold.", "TERM_EXTERNAL_SIGNAL: job
# killed by a signal external to LSF.", "TERM_BUCKET_KILL: job killed with bkill -b.", "TERM_CHKPNT: job killed after
# checkpointing.", "TERM_REMOVE_HUNG_JOB: job removed from LSF."
_LSF_OUTSIDE = lazy_regex(r"^[ \t>*`]*" + _GREP_FILE + r"TERM_(?P<code>OWNER|ADMIN|PREEMPT|REQUEUE_OWNER|"
                          r"REQUEUE_ADMIN|FORCE_OWNER|FORCE_ADMIN|WINDOW|DEADLINE|LOAD|EXTERNAL_SIGNAL|BUCKET_KILL|"
                          r"CHKPNT|REMOVE_HUNG_JOB): [Jj]ob (?P<what>[^\n]{1,80})", re.MULTILINE)
# the end of LSF's job report, before its "Resource usage summary:": "Exited with exit code 2." (the job's own exit) or
# "Exited with signal termination: Segmentation fault." (its end by a signal, strsignal's word)
_LSF_END = lazy_regex(r"^[ \t>*`]*Exited with (?:exit code (?P<code>\d+)|signal termination: (?P<sig>[^\n.]+))\.?"
                      r"[ \t]*\r?\n(?:[ \t]*\r?\n){0,3}[ \t]*Resource usage summary:", re.MULTILINE)
_LSF_DONE = lazy_regex(r"^[ \t>*`]*Successfully completed\.[ \t]*\r?\n(?:[ \t]*\r?\n){0,3}[ \t]*Resource usage "
                       r"summary:", re.MULTILINE)
# PBS's MOM ending a job at one of its requested limits (Torque's and PBS Pro's mom: "=>> PBS: job killed: walltime
# 7215 exceeded limit 7200", "... cput 3601 exceeded limit 3600", "... ncpus 9.5 exceeded limit 8"): walltime is a
# time limit (a stop from outside, as Slurm's); cput and ncpus are a kill of the job for what it used
# (each at its line's start, as LSF's: after MOM's "=>> ", or after Grid Engine's "|"-separated fields of its messages
# file, "06/12/2025 10:11:12|  main|gpu-7|W|job ..."; never the words quoted inside a sentence)
# (a viewer's line number, "[80001] ", may come first: a paste too short for the text cleaner to take it off)
_BATCH_HEAD = r"^(?:\[\d+\][ \t]+)?(?:[^|\n]{0,60}\|){0,5}[ \t>*`]*" + _GREP_FILE + r"[ \t>*`=]*"
_PBS_LIMIT = lazy_regex(_BATCH_HEAD + r"PBS: job killed: (?P<what>walltime|cput|ncpus|pcput|pvmem|pmem) "
                        r"(?P<used>[\d.:]+) exceeded limit (?P<limit>[\d.:]+)", re.MULTILINE)
# the batch server's own word of a job it deleted at its wallclock limit, in the job's mail or its output: Moab's
# "MOAB_INFO:  job exceeded wallclock limit" (after Torque's "Job deleted at request of root@server") and PBS's server
# "Job exceeded its walltime limit. Job was aborted" (after "Aborted by PBS Server"): a time limit, a stop from outside
_SERVER_WALLTIME = lazy_regex(_BATCH_HEAD + r"(?:MOAB_INFO:[ \t]+job exceeded wallclock limit|"
                              r"Job exceeded its walltime limit\. Job was aborted)", re.MULTILINE)
# Torque's server's mail of a job its MOM aborted over a limit (src/server: msg_momjobovermemlimit, "Job exceeded a
# memory resource limit (vmem, pvmem, etc.). Job was aborted", msg_momjobovercputlimit, "Job exceeded its cpu time
# limit. Job was aborted"; older Torque's one msg_momjoboverlimit, "Job exceeded some resource limit (walltime, mem,
# etc.). Job was aborted"), under "Aborted by PBS Server", then "See Administrator for help" and "Exit_status=-10"
# (Torque's JOB_EXEC_OVERLIMIT_MEM; -11 walltime, -12 cput) and the job's resources_used.* lines; often quoted with
# "> " where a reporter pastes the mail
PBS_ANY_LIMIT = "PBS killed the job at one of the resource limits it requested"
_SERVER_LIMIT = lazy_regex(_BATCH_HEAD + r"Job exceeded (?:(?P<mem>a memory resource limit)|(?P<cput>its cpu time "
                           r"limit)|some resource limit)[^\n]{0,40}?\. Job was aborted", re.MULTILINE)
_PBS_USED_MEMORY = lazy_regex(r"^[ \t>]*resources_used\.(?P<what>v?mem)[ \t]*=[ \t]*(?P<n>\d+ ?[kmgt]?b)\b",
                              re.MULTILINE | re.IGNORECASE)
# PBS Pro's (OpenPBS's) own exit statuses of a job it killed at a limit (src/include/job.h: JOB_EXEC_KILL_*), in its
# job record ("Exit_status = -29") or its mail ("Exit_status=-27"): what the job went over
_PBS_PRO_KILLS = {-24: "ncpus", -25: "ncpus", -26: "vmem", -27: "mem", -28: "cput", -29: "walltime"}
# Torque's (src/include/job.h: JOB_EXEC_OVERLIMIT_*; its qstat prints the attribute "exit_status"): the same numbers
# mean other ends in PBS Pro (-10 JOB_EXEC_FAILUID, -11 JOB_EXEC_RERUN), read only in Torque's record
_TORQUE_KILLS = {-10: "mem", -11: "walltime", -12: "cput"}
# slurmstepd (src/slurmd/slurmstepd/req.c): "*** %s STEPD TERMINATED ON %s AT %s DUE TO JOB NOT ENDING WITH SIGNALS ***"
# (or "... DUE TO JOB NOT RUNNING ***"), %s "STEP 42.0", "JOB 42" or "EXTERN STEP FOR 42"
_STEPD_TERMINATED = lazy_regex(r"\*\*\* (?P<entity>(?:EXTERN |INTERACTIVE )?(?:JOB|STEP)(?: FOR)? \S+) STEPD "
                               r"TERMINATED ON (?P<host>\S+) AT (?P<when>\S+) DUE TO JOB NOT "
                               r"(?P<why>ENDING WITH SIGNALS|RUNNING) \*\*\*")
# PBS's job record (qstat -f / -xf, printed by an epilogue or pasted): "    Exit_status = 271" (Torque: "exit_status"),
# read where another of the record's attributes is within its lines ("job_state = F", "resources_used.walltime =
# 02:00:05", "Resource_List.walltime = 02:00:00", "comment = ...", "exec_host = ..."): a sentence that quotes it is
# no record
# (or the server's mail, "Exit_status=%d" (msg_job_end_stat), with "PBS Job Id: ...", "Exec host: ..." and
# "resources_used.vmem=...kb" about it, quoted with "> " where a reporter pasted it)
_PBS_EXIT = lazy_regex(r"^[ \t>]*(?P<attr>[Ee]xit_status)(?: = |=)(?P<code>-?\d+)[ \t]*\r?$", re.MULTILINE)
_PBS_ATTRIBUTE = lazy_regex(r"^[ \t>]*(?:job_state|resources_used\.\w+|Resource_List\.\w+|exec_host|Job_Name|comment|"
                            r"(?:PBS )?Job Id:|Exec host:)[ \t=]", re.MULTILINE)
_PBS_WALLTIME = lazy_regex(r"^[ \t]*(?P<which>resources_used|Resource_List)\.walltime = (?P<t>\d+:\d\d:\d\d)",
                           re.MULTILINE)
_PBS_COMMENT = lazy_regex(r"^[ \t]*comment = (?P<what>[^\n]+?)[ \t]*\r?$", re.MULTILINE)
# Grid Engine's execd (SGE, OGS, UGE; execd_ck_to_do.c): "job 4242.1 exceeded hard wallclock time - initiate terminate
# method" (h_rt: a time limit, a stop from outside) and "job 4242 exceeds job hard limit "h_vmem" of queue
# "all.q@n1" (8589934592.00000 > limit:8589934592.00000) - sending SIGKILL" (a kill for what the job used)
_SGE_WALLCLOCK = lazy_regex(_BATCH_HEAD + r"job (?P<id>\d+(?:\.\d+)?) exceeded hard wallclock time - initiate "
                            r"terminate method", re.MULTILINE)
_SGE_HARD = lazy_regex(_BATCH_HEAD + r"job (?P<id>\d+(?:\.\d+)?) exceeds job hard limit \"(?P<what>\w+)\" of queue "
                       r"\"(?P<queue>[^\"\n]+)\"[^\n]*?- sending SIG(?P<sig>[A-Z]+)", re.MULTILINE)
# HTCondor's job event log (the user log, condor_wait's and the submit file's `log`): event 005 "005 (1234.000.000)
# 2026-01-02 03:04:05 Job terminated." with "(0) Abnormal termination (signal 9)" or "(1) Normal termination (return
# value 1)" on its next line; event 012 "Job was held." with the hold reason ("Job has gone over memory limit of 2048
# megabytes.", the schedd's/startd's policy) on the next
_CONDOR_END = lazy_regex(r"^0?05 \((?P<id>\d+\.\d+\.\d+)\) [^\n]*Job terminated\.[ \t]*\r?\n[ \t]*\(\d\) "
                         r"(?:Abnormal termination \(signal (?P<num>\d+)\)|Normal termination \(return value "
                         r"(?P<code>\d+)\))", re.MULTILINE)
_CONDOR_HELD_MEMORY = lazy_regex(r"^0?12 \((?P<id>\d+\.\d+\.\d+)\) [^\n]*Job was held\.[ \t]*\r?\n[ \t]*(?P<why>[^\n]*"
                                 r"\bmemory limit\b[^\n]*)", re.MULTILINE)
# event 012's other holds, its reason on the next line and its hold reason code after it ("\tCode 34 Subcode 0",
# HTCondor's hold reason codes: 34 JobOutOfResources, the job over its memory or disk request; 1 condor_hold; 3 and
# 26 a periodic hold policy; 21 the machine's WANT_HOLD; the others a failed start or file transfer); event 009 "Job was
# aborted." (older: "Job was aborted by the user.") with "via condor_rm (by user X)"; event 007 "Shadow exception!" with
# its message
_CONDOR_HELD = lazy_regex(r"^0?12 \((?P<id>\d+\.\d+\.\d+)\) [^\n]*Job was held\.[ \t]*\r?\n[ \t]*(?P<why>[^\n]*?)[ \t]*"
                          r"\r?\n[ \t]*Code (?P<code>\d+) Subcode -?\d+", re.MULTILINE)
_CONDOR_ABORTED = lazy_regex(r"^0?09 \((?P<id>\d+\.\d+\.\d+)\) [^\n]*Job was aborted(?: by the user)?\.[ \t]*"
                             r"(?:\r?\n[ \t]+(?P<why>\S[^\n]*?))?[ \t]*$", re.MULTILINE)
_CONDOR_SHADOW = lazy_regex(r"^0?07 \((?P<id>\d+\.\d+\.\d+)\) [^\n]*Shadow exception![ \t]*\r?\n[ \t]*"
                            r"(?P<why>\S[^\n]*?)[ \t]*$", re.MULTILINE)
# condor_q -hold's rows: "ID  OWNER  HELD_SINCE  HOLD_REASON", "1050981.0   dbrown   11/7  23:48 Job in status 2 put
# on hold by SYSTEM_PERIODIC_HOLD due to memory usage 3000000." (the job's cluster.proc, its owner, the month/day and
# time it was held, its HoldReason as the schedd keeps it); not condor_history's row whose RUN_TIME is blank, its ST
# letter and COMPLETED date then ("1.0   ubuntu   11/20 13:33        C  11/20 13:33 /bin/echo ...")
_CONDOR_Q_HELD = lazy_regex(r"^[ \t]*(?P<id>\d+\.\d+)[ \t]+[\w.@-]+[ \t]+\d{1,2}/\d{1,2}[ \t]+\d{1,2}:\d\d[ \t]+"
                            r"(?![A-Z][ \t]+\d{1,2}/\d{1,2}[ \t])(?P<why>[A-Za-z][^\n]*?)[ \t]*$", re.MULTILINE)
# condor_history's row of a job that left the queue completed: "ID  OWNER  SUBMITTED  RUN_TIME  ST COMPLETED  CMD",
# "4242.0   alice   3/1  10:00   0+02:40:11 C   3/1  14:02 /home/alice/run.sh" (ST C; X is a job removed; RUN_TIME may
# be blank): a hold of that job before it was not its end (released, run to its end), as a later terminated event is
_CONDOR_HISTORY_DONE = lazy_regex(r"^[ \t]*(?P<id>\d+\.\d+)[ \t]+[\w.@-]+[ \t]+\d{1,2}/\d{1,2}[ \t]+\d{1,2}:\d\d[ \t]+"
                                  r"(?:\d+\+\d\d:\d\d:\d\d[ \t]+)?C[ \t]+\d{1,2}/\d{1,2}[ \t]+\d{1,2}:\d\d\b",
                                  re.MULTILINE)
# a hold reason of the job's memory over its request: the OSPool's periodic hold ("Job in status 2 put on hold by
# SYSTEM_PERIODIC_HOLD due to memory usage N."; the execution point's "Error from slot...: memory usage exceeded
# request_memory") and HTCondor's own ("Job has gone over memory limit of N megabytes.")
_CONDOR_MEMORY_REASON = lazy_regex(r"\bdue to memory usage ?\d+|\bmemory usage ?exceeded ?request_memory\b|"
                                   r"\bgone over ?memory limit\b")
# (a row a terminal cut at its width goes on at the next lines, which open no row: its reason's rest; the space at a
# cut, lost to the trailing-space strip, may be missing)
_CONDOR_Q_REST = 3
# (never a line a terminal's cut leaves: a shell's prompt and the command after it, "$ condor_history 4242",
# "[alice@login04 ~]$ cat err.4242.0", condor_q's own next lines, its header and its "Total for query: ..." count)
_CONDOR_Q_NOT_REST = lazy_regex(r"^[ \t]*(?:\S*[$#%] |\[[^\]\n]*\][$#%] |Total for |-- (?:Schedd|Submitter): |"
                                r"ID[ \t]+OWNER\b)")
_CONDOR_REPEATED = 2    # (shadow exceptions of one job, each got past: evicted as it starts, again and again)
_CONDOR_OUTSIDE_HOLDS = {1: "the user held it (condor_hold)", 3: "the job's periodic hold policy held it",
                         21: "the machine's policy (WANT_HOLD) held it",
                         26: "the system's periodic hold policy held it"}
# a later end of a job in the log (terminated): a hold before it was not the job's end (released, run again); a
# release or an execution again alone does not say how the job then ended
_CONDOR_ENDED_LATER = lazy_regex(r"^0?05 \(\d+\.\d+\.\d+\) ", re.MULTILINE)
# any later event of the log (an event's head: its number, 000-039 in HTCondor's ULOG codes, and the job's id: its
# cluster and proc, "101.000", then its subproc)
_CONDOR_ANY_LATER = lazy_regex(r"^0[0-3]\d \((?P<job>\d+\.\d+)\.\d+\) ", re.MULTILINE)
# the line that closes an event of the log
_CONDOR_EVENT_END = lazy_regex(r"^\.\.\.[ \t]*$", re.MULTILINE)
# HTCondor's later events of a job (its log goes on): submitted (000), executing (001), terminated (005), released (013)
_CONDOR_LATER = lazy_regex(r"^0?(?:00|01|05|13) \(\d+\.\d+\.\d+\) ", re.MULTILINE)
# Dask's nanny killing its worker over the worker's memory limit (distributed/nanny.py, distributed/worker_memory.py):
# "distributed.nanny - WARNING - Worker exceeded 95% memory budget. Restarting", "distributed.nanny.memory - WARNING -
# Worker tcp://10.0.0.5:34937 (pid=129) exceeded 95% memory budget. Restarting..."
# (a logging head before the message, "2026-01-02 03:04:05,678 - distributed.nanny - WARNING - ", may be read as the
# line's head and taken off it: the message's own words are the nanny's)
# (its second word to a worker still alive after SIGTERM, distributed/worker_memory.py: "Worker tcp://...
# (pid=129) is slow to accept SIGTERM; sending SIGKILL")
_DASK_SIGKILL = lazy_regex(r"is slow to accept SIGTERM; sending SIGKILL")
_DASK_MEMORY = lazy_regex(r"(?:distributed\.nanny(?:\.memory)? - WARNING - )?\bWorker(?: (?P<addr>[\w./:-]+))?"
                          r"(?: \(pid=(?P<pid>\d+)\))? exceeded (?P<pct>\d+)% memory budget")
# the kubelet's eviction message alone, as an event's or a pod's message (pkg/kubelet/eviction): "The node was low on
# resource: memory. Container x was using ..." (with "Reason: Evicted" before it, _K8S_EVICTED reads it)
_K8S_LOW = lazy_regex(r"The node was low on resource: (?P<resource>[\w-]+)")
# srun's record of a task that ended badly ("srun: error: n3: task 5: Exited with exit code 1", "...: Killed"):
# not "Terminated", which is what a cancellation does to every task
# (or its wait timer's "srun: StepId=12.0 task 1: exited abnormally", under srun's name or Tianhe's "yhrun", or the
# timer's own "srun: First task exited 180s ago": srun itself then terminates the step, never a stop from outside)
_SRUN_TASK_FAILED = lazy_regex(r"srun: error: (?:[\w.-]+: )?tasks? [\d,-]+: (?!Terminated)|"
                               r"(?:srun|yhrun): (?:StepId=\S+ )?tasks? [\d,-]+: exited abnormally|"
                               r"(?:srun|yhrun): First task exited \d+s ago")
# srun's own word of a node that failed under the step (src/srun/srun_job.c): "srun: error: Node failure on gpu-n11"
# (salloc's of a node of its allocation, src/salloc/salloc.c: "salloc: error: Node failure on worker-1")
_SRUN_NODE_FAILURE = lazy_regex(r"(?:srun|salloc): error: Node failure on (?P<host>[\w.\[\],-]+)")
# srun could not start the step at all: "srun: error: Unable to create step for job 99123: Memory required by task is
# not available" (no task ran)
_SRUN_NO_STEP = lazy_regex(r"srun: error: Unable to create step for job (?P<job>\S+): (?P<why>[^\n]+)")
# sacct's table of a job (its header names JobID and State): a row's State (sacct pads it to 10 columns, cutting a
# longer one with "+": "OUT_OF_ME+") and its ExitCode "code:signal" where the row holds it, "48213  train  gpu
# OUT_OF_ME+  0:125", "48213.0  python  FAILED  1:0", "48213  train  CANCELLED+  0:15", "48213  train  TIMEOUT  0:0"
# (a table whose rows the text cleaner took for one terminal-wrapped line is not read: its rows are gone)
_SACCT_HEAD = lazy_regex(r"^\s*JobID\b[^\n]*\bState\b", re.MULTILINE)
_SACCT_ROW = lazy_regex(r"^\s*(?P<id>\d+(?:_\d+)?(?:\.[\w+]+)?)\s[^\n]*?\s(?P<state>OUT_OF_ME\+|OUT_OF_MEMORY|"
                        r"TIMEOUT|DEADLINE|PREEMPTED|NODE_FAIL|BOOT_FAIL|CANCELLED(?: by \d+|\+)?|FAILED|COMPLETED)"
                        r"(?:\s+(?P<code>\d+):(?P<sig>\d+))?[ \t]*$", re.MULTILINE)
# any row of the table (its job id, array index included) and a state that says the job has not ended
_SACCT_ANY_ROW = lazy_regex(r"^\s*(?P<job>\d+(?:_\d+)?)(?:\.[\w+]+)?\s[^\n]*$", re.MULTILINE)
_SACCT_GOING = lazy_regex(r"\s(?:RUNNING|PENDING|REQUEUED|RESIZING|SUSPENDED|CONFIGURING|COMPLETING)\b")
_SACCT_OUTSIDE = {"TIMEOUT": "its time limit was reached", "DEADLINE": "its deadline was reached",
                  "PREEMPTED": "it was preempted", "NODE_FAIL": "a node failed (slurmctld's log says which and why)",
                  "BOOT_FAIL": "a node failed to boot for it"}
# seff's summary of an ended job (contribs/seff): "Job ID: 551205" ("Array Job ID: 551200_5", "Cluster: c",
# "User/Group: u/g" after it) then "State: OUT_OF_MEMORY (exit code 0)" (the exit code's high byte: a signal's end
# reads 0); a running or pending job's line has no "(exit code": no end of it in this input
_SEFF = lazy_regex(r"^[ \t]*Job ID: (?P<job>\d+(?:_\d+)?)[ \t]*\r?\n(?:[ \t]*(?:Array Job ID|Cluster|User/Group): "
                   r"[^\n]*\n){0,3}[ \t]*State: (?P<state>OUT_OF_MEMORY|TIMEOUT|DEADLINE|PREEMPTED|NODE_FAIL|BOOT_FAIL|"
                   r"CANCELLED|FAILED)(?: by \d+)? \(exit code (?P<code>\d+)\)", re.MULTILINE)
# Flux's job shell ending the job when its first task (or a node's shell) ended (src/shell/doom.c): "0.879s:
# flux-shell[1]: FATAL: python: task rank 1 on host node13 exited and exit-timeout=30s has expired" (the same words in
# the "job.exception type=exec severity=0 ..." line; older shells "doom: rank 1 on host ..."): the rank is the task's
# (flux run's global task rank), the others killed after it are its collateral
_FLUX_DOOM = lazy_regex(r"(?:flux-shell\[\d+\]:|job\.exception)[^\n]*?\b(?:(?P<who>task|shell) )?rank (?P<rank>\d+) on "
                        r"host (?P<host>[\w.-]+) exited and exit-timeout=(?P<t>[\w.]+) has expired")
# flux-job's word of the job's end (src/common/libjob/waitstatus.c): "flux-job: task(s) exited with exit code 1", or
# strsignal's words where a task ended by a signal: "flux-job: task(s) Killed", "flux-job: task(s) Segmentation fault"
_FLUX_JOB = lazy_regex(r"^[ \t]*flux-job: task\(s\) (?:exited with exit code (?P<code>\d+)|(?P<words>[A-Z][a-z]+"
                       r"(?: [a-z]+)?))[ \t]*\r?$", re.MULTILINE)
_SLURM_FAILED = lazy_regex(r"\*\*\* (?P<what>JOB|STEP) (?P<id>\S+) ON (?P<host>\S+) FAILED \(non-zero exit code")
_OPERATOR = lazy_regex(r"(?P<kind>PyTorchJob|TFJob|MPIJob|PaddleJob|XGBoostJob|JAXJob|MXJob|job) (?P<name>\S+) is "
                       r"(?:failed|failing|restarting) because (?P<n>\d+ )?\"?(?P<rtype>\w+)\"? replica\(s\) failed")
# the training operator's event of each replica's end (controller.v1/common/pod.go, reason ExitedWithCode):
# "Pod: ml-team.llm-pretrain-worker-2 exited with code 137" (namespace.pod)
_OPERATOR_POD = lazy_regex(r"\bPod: (?:[a-z0-9][\w-]*\.)?(?P<pod>[a-z0-9][\w.-]*?) exited with code (?P<code>\d+)")
_HOROVOD = lazy_regex(r"Terminating remaining workers after failure of Process (?P<rank>\d+)\.")
# torchx (specs/api.py, AppStatus.format): " *trainer[0]:FAILED (exitcode: 1)" then "timestamp: ..." "hostname: ..."
_TORCHX = lazy_regex(r"^\s[* ](?P<role>[\w-]+)\[(?P<replica>\d+)\]:FAILED(?: \(exitcode: (?P<code>-?\d+)\))?"
                     r"(?:\s+timestamp: [^\n]*\s+hostname: (?P<host>[\w.-]+))?", re.MULTILINE)
_WHY = {"TIME LIMIT": "its time limit was reached", "PREEMPTION": "it was preempted",
        "NODE FAILURE": "a node failed (slurmctld's log says which and why)", "JOB REQUEUE": "it was requeued"}
# PRRTE's process name: "[prterun-host-12345@1,3]" (namespace@jobid, rank); ORTE's "[[49023,1],3]" is in launchers
_PRTE_FIRST = lazy_regex(r"first process to do so was:\s+Process name:\s+\[[\w.-]+@\d+,(?P<rank>\d+)\]"
                         r"(?:\s+Exit code:\s+(?P<code>-?\d+))?")
_PRTE_MEMORY = lazy_regex(r"A process exceeded memory limits:\s+Process name:\s+\[(?:\[\d+,\d+\]|[\w.-]+@\d+),"
                          r"(?P<rank>\d+)\](?:\s+Node:\s+(?P<host>\S+))?")
# Open MPI's runtime lost a node's daemon (orted/prted; help-errmgr-base.txt): "ORTE has lost communication with a
# remote daemon." ... "Remote daemon: [[31744,0],2] on node gpu-a03" (PRRTE: "PRTE has lost communication ..." with
# "[prterun-host-1@0,1]"): that node (or the network to it) failed, and mpirun ends the job
_MPI_DAEMON_LOST = lazy_regex(r"(?:ORTE|PRTE|PRRTE) has lost communication with (?:a remote daemon|its communication "
                              r"partner)\.?[\s\S]{0,300}?Remote daemon:\s+\S+ on node (?P<host>[\w.-]+)")
# ... or a daemon failed at start: "An ORTE daemon has unexpectedly failed after launch and before communicating back
# to mpirun." (no node named)
_MPI_DAEMON_FAILED = lazy_regex(r"An? (?:ORTE|PRTE|PRRTE) daemon has unexpectedly failed after launch")
# ... or mpirun could not start its daemons at all (help-plm-base.txt, Open MPI 1.x-4.x "ORTE", 5.x PRRTE "PRTE"):
# "ORTE was unable to reliably start one or more daemons." under the launch agent's own line, when one is printed
# just above the box ("bash: orted: command not found", ssh's "Host key verification failed."): no rank ran
_MPI_DAEMONS_UNSTARTED = lazy_regex(r"^[ \t]*(?:ORTE|PRTE|PRRTE) was unable to reliably start one or more daemons",
                                    re.MULTILINE)
_BOX_RULE = lazy_regex(r"-{20,}")
# Realm's (Legion's) signal handler (runtime_impl.cc, realm_freeze): "Legion process received signal 6: Aborted" then
# "Process 13398 on node compute-4-25 is frozen!" (getpid(), gethostname())
_REALM_FROZEN = lazy_regex(r"\b[\w-]+ process received signal (?P<num>\d{1,2}): [^\n]*\n(?:[^\n]*\n)?"
                           r"Process (?P<pid>\d+) on node (?P<host>[\w.-]+) is frozen!")
# A cloud that took the machine away under the job: AWS Batch's job status reason "Host EC2 (instance i-0a1b2c3d)
# terminated." (a Spot instance reclaimed, a scale-in; retyped "Host EC2 Terminated"), EC2 Spot's request status codes
# ("instance-terminated-by-price", "instance-terminated-no-capacity", "instance-terminated-capacity-oversubscribed",
# "instance-terminated-launch-group-constraint", "marked-for-termination"), the Taskcluster worker's "GCP Metadata
# Service says termination is imminent" (a preemptible GCE VM), the kubelet's graceful node shutdown ("Pod was
# terminated in response to imminent node shutdown."), Cromwell's end of a task on Google's Pipelines API (its
# PipelinesApiAsyncBackendJobExecutionActor: "Task <call> failed. The job was stopped before the command finished. PAPI
# error code 14. Execution failed: worker was terminated.": gRPC's UNAVAILABLE, the worker VM preempted or taken away;
# PAPI v1's "PAPI error code 10. Message: 14: VM ggp-123 stopped unexpectedly.", the same; Cromwell retries both as
# preemptions)
_CLOUD_STOP = lazy_regex(r"\bHost EC2 (?:\(instance (?P<instance>i-[0-9a-f]+)\) )?[Tt]erminated\b|"
                         r"\b(?P<spot>instance-terminated-(?:by-price|no-capacity|capacity-oversubscribed|"
                         r"launch-group-constraint|by-service)|marked-for-termination)\b|"
                         r"\b(?P<gcp>GCP Metadata Service) says termination is imminent\b|"
                         r"\bPod was terminated in response to imminent node shutdown\b|"
                         r"(?P<papi>\bPAPI error code (?:14\.|10\.(?:[ \t]+Message:)?[ \t]+14: VM \S+ stopped "
                         r"unexpectedly))")
# Lightning's SIGTERM handler (trainer/connectors/signal_connector.py): "[rank: 1] Received SIGTERM: 15" (the
# prefix is its rank tag): the process was sent SIGTERM, by something this line does not name
_LIGHTNING_SIGTERM = lazy_regex(r"(?:^|\] )Received SIGTERM: (?P<num>\d+)\s*$", re.MULTILINE)
# Hydra's (facebookresearch/hydra, hydra/core/utils.py JobReturn.return_value) line to stderr where the task function
# raised, before it raises it again: "Error executing job with overrides: ['model=x', ...]", then the traceback (or
# "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace.") and the exception. The job failed; the
# line is read as a traceback's head (its exception line, where the input holds it, the failure)
HYDRA_JOB_ERROR = "Error executing job with overrides:"
HYDRA_JOB_ERROR_NOTE = "after Hydra's 'Error executing job with overrides': the job's function raised"


# Intel MPI's Hydra box: "=   RANK 2 PID 4451 RUNNING AT host" then "=   KILLED BY SIGNAL: 9 (Killed)"
# (also as a reporter retyped it, its "=" frame left out and a comma closing each line, and with a viewer's line
# numbers "[80001] " on a paste too short to strip them: "BAD TERMINATION OF ONE OF
# YOUR APPLICATION PROCESSES,\n   RANK 7 PID 3703 RUNNING AT host,\n   KILLED BY SIGNAL: 9 (Killed).")
_HYDRA_GAP = r"(?:[\s=]|\[\d{2,}\])*"   # (one way to match a space: no backtracking over numbered blank lines)
_HYDRA_KILLED = lazy_regex(r"BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES,?" + _HYDRA_GAP
                           + r"(?:RANK (?P<rank>\d+) )?PID (?P<pid>\d+) RUNNING AT (?P<host>[^\s,]+),?" + _HYDRA_GAP
                           + r"KILLED BY SIGNAL: (?P<num>\d+)")
# a box of a process that ended by itself: "EXIT STATUS: 1" / "EXIT CODE: 139" (Intel MPI's and MPICH's Hydra)
_HYDRA_EXITED = lazy_regex(r"BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES,?" + _HYDRA_GAP
                           + r"(?:RANK (?P<rank>\d+) )?PID (?P<pid>\d+) RUNNING AT [^\s,]+,?" + _HYDRA_GAP
                           + r"EXIT (?:CODE|STATUS): (?P<code>\d+)")
# MPICH's abort of a rank ("application called MPI_Abort(MPI_COMM_WORLD, 1) - process 3", "Abort(1) on node 3"):
# that rank ended itself
# (a build that prints no code: "Abort on node 3 (rank 3 in comm 0): ...", mpi_errors._MPICH_FATAL)
_MPICH_ABORTED = lazy_regex(r"MPI_Abort\([^()\n]*\) - process (?P<a>\d+)|" + MPICH_ABORT_HEAD
                            + r" on node (?P<b>\d+)")
_HYDRA_KILLS = ("SIGKILL", "SIGTERM", "SIGINT")
_HYDRA_BADLY = lazy_regex(r"\[mpiexec@(?P<host>[\w.-]+)\][^\n]*one of the processes terminated badly")
# kubectl describe pod: "Name:  train-worker-2" ... "Reason:  OOMKilled" ... "Exit Code:  137"
_K8S_POD_NAME = lazy_regex(r"^Name:\s+(?P<pod>[\w.-]+)\s*$", re.MULTILINE)
_K8S_REASON = lazy_regex(r"^\s+(?:Last State:\s+Terminated\s+)?Reason:\s+(?P<why>OOMKilled|Error)\s*$"
                         r"(?P<rest>(?:\n\s+[\w ]+:[^\n]*){0,4})", re.MULTILINE)
_K8S_EXIT = lazy_regex(r"Exit Code:\s+(?P<code>\d+)")
# kubectl describe pod of an evicted pod: "Status:  Failed" / "Reason:  Evicted" / "Message:  The node was low on
# resource: memory. ..."; kubectl get pods: "train-worker-1   0/1   Evicted   0   5m"
# kubectl get pods' rows, behind the NAMESPACE column that -A (--all-namespaces) puts first: "ml-team   train-worker-0
# 0/1   Completed   2 (31m ago)   40m"
_K8S_NS = r"^(?:[a-z0-9][a-z0-9-]{0,62}[ \t]+)?"
# the Job controller's and the kubelet's end of a Job or a pod at its activeDeadlineSeconds: the Job's Failed condition
# (pkg/controller/job: reason DeadlineExceeded, "Job was active longer than specified deadline"; its event "Warning
# DeadlineExceeded  2m  job-controller  Job was active longer than specified deadline"), a pod's status (the kubelet:
# "Reason: DeadlineExceeded", "Message: Pod was active on the node longer than the specified deadline") and kubectl get
# pods' "train-0   0/1   DeadlineExceeded   0   10m": a time limit, a stop from outside the job (its containers get
# SIGTERM, then SIGKILL after their grace period), as Slurm's TIMEOUT
K8S_DEADLINE = "Kubernetes stopped the job at its activeDeadlineSeconds"
_K8S_DEADLINE = lazy_regex(r"\bJob was active longer than specified deadline\b|"
                           r"\bPod was active on the node longer than the specified deadline\b|"
                           r"^[ \t-]*[\"']?[Rr]eason[\"']?:[ \t]*[\"']?DeadlineExceeded\b|"
                           r"\bWarning[ \t]+DeadlineExceeded\b|"
                           + _K8S_NS + r"(?P<pod>[a-z0-9][\w.-]*)\s+\d+/\d+\s+DeadlineExceeded\s+\d+", re.MULTILINE)
# the kubelet's kill of a container whose liveness (or startup) probe failed its threshold: its event (reason Killing)
# "Container pytorch failed liveness probe, will be restarted", the probe's failures (reason Unhealthy) before it,
# "Liveness probe failed: Get "http://10.0.0.5:8080/healthz": context deadline exceeded": the kubelet stopped the
# process from outside (SIGTERM, then SIGKILL after the grace period: exit code 143 or 137), as it evicts a pod
_K8S_PROBE_KILL = lazy_regex(r"\bContainer (?P<container>[\w.-]+) failed (?P<probe>liveness|startup) probe, will be "
                             r"restarted")
_K8S_PROBE_FAILED = lazy_regex(r"\b(?:Liveness|Startup) probe failed: (?P<why>[^\n]*?)\s*$", re.MULTILINE)
_K8S_EVICTED = lazy_regex(r"^Reason:\s+Evicted\s*$(?:\nMessage:\s+(?P<msg>[^\n]+))?", re.MULTILINE)
_K8S_EVICTED_ROW = lazy_regex(_K8S_NS + r"(?P<pod>[a-z0-9][\w.-]*)\s+\d+/\d+\s+Evicted\s+\d+", re.MULTILINE)
# a container's terminated state in Kubernetes' own fields, as a program that reads the API writes it: kubectl's YAML
# ("reason: OOMKilled" under lastState.terminated, "exitCode: 137"), its JSON ("\"reason\": \"OOMKilled\""), Airflow's
# KubernetesExecutor ("container_state: terminated, container_reason: OOMKilled, container_message: None, exit_code:
# 137")
_K8S_OOM_FIELD = lazy_regex(r"(?<![\w-])(?:container_)?reason[\"']?\s*[:=]\s*[\"']?OOMKilled\b")
_K8S_EXIT_FIELD = lazy_regex(r"(?<![\w-])exit_?[Cc]ode[\"']?\s*[:=]\s*(?P<code>\d+)")
# kubectl get pods: "train-worker-1   0/1   OOMKilled   3 (20s ago)   5m"; an init container's, "Init:OOMKilled"
# (kubectl's printPod: "Init:" and the init container's terminated or waiting reason); a row quoted without its
# RESTARTS and AGE columns ends at its STATUS; `kubectl get all` names each row with its kind ("pod/user-directory-...")
# (and a viewer's line number before a row, "[80000] ", which a paste of one row cannot show to be one)
_K8S_KIND = r"(?:pod/)?"
_K8S_ROW_HEAD = r"^(?:\[\d+\][ \t]*)?(?:[a-z0-9][a-z0-9-]{0,62}[ \t]+)?" + _K8S_KIND
_K8S_ROW_END = r"(?:\s+\d+|[ \t]*$)"
_K8S_ROW = lazy_regex(_K8S_ROW_HEAD + r"(?P<pod>[a-z0-9][\w.-]*)\s+\d+/\d+\s+(?P<why>(?:Init:)?OOMKilled)"
                      + _K8S_ROW_END, re.MULTILINE)
# kubectl get pods: "train-worker-0   0/1   Error   2 (10s ago)   12m", "...   CrashLoopBackOff   5   12m", "...
# Init:Error", "...   Init:CrashLoopBackOff"
_K8S_ERROR_ROW = lazy_regex(_K8S_ROW_HEAD + r"(?P<pod>[a-z0-9][\w.-]*)\s+\d+/\d+\s+"
                            r"(?P<why>(?:Init:)?(?:Error|CrashLoopBackOff))" + _K8S_ROW_END, re.MULTILINE)
# a pod that ended well, whatever failed in it before (a restart that succeeded: its phase Succeeded is final):
# kubectl get pods' "train-worker-0   0/1   Completed   2   35m", kubectl describe pod's "Status:  Succeeded"
_K8S_DONE_ROW = lazy_regex(_K8S_NS + _K8S_KIND + r"(?P<pod>[a-z0-9][\w.-]*)\s+\d+/\d+\s+(?:Completed|Succeeded)\s+\d+",
                           re.MULTILINE)
# a row quoted without its RESTARTS and AGE columns, ended at its STATUS (as _K8S_ROW and _K8S_ERROR_ROW read them): a
# listing's row only where one of its rows is such a failure row (_short_rows), its Completed rows then the pods' end
_K8S_SHORT_ROW = lazy_regex(_K8S_NS + _K8S_KIND + r"(?P<pod>[a-z0-9][\w.-]*)\s+\d+/\d+\s+(?P<status>[A-Z][\w:]*)"
                            r"[ \t]*$", re.MULTILINE)
# a row with its RESTARTS and AGE columns ("preprocess-7xk2p   0/1   Error   0   14m", "...   1 (3s ago)   2d3h"): a
# Job's pod is named by its Job and five characters of Kubernetes' random suffix (k8s.io/apimachinery's util/rand
# alphabet: no vowels, no 0, 1, 3), the Job controller's new pod after a failed one (backoffLimit) another suffix
_K8S_AGED_ROW = lazy_regex(_K8S_NS + _K8S_KIND + r"(?P<pod>[a-z0-9][\w.-]*)\s+\d+/\d+\s+(?P<status>[A-Z][\w:]*)\s+\d+"
                           r"(?:\s+\([^)\n]*\))?\s+(?P<age>(?:\d+[ydhms])+)[ \t]*$", re.MULTILINE)
_K8S_JOB_POD = lazy_regex(r"(?P<job>[a-z0-9][\w.-]*)-[bcdfghjklmnpqrstvwxz2456789]{5}")
# kubectl get jobs' (and get all's) row of a Job all of whose completions it asked for succeeded: "etl-job   1/1   4m
# 3h", "job.batch/etl-job   1/1   4m   3h", kubectl 1.28's "etl-job   Complete   1/1   4m   3h" (NAME, [STATUS,]
# COMPLETIONS, DURATION, AGE)
_K8S_JOB_COMPLETE_ROW = lazy_regex(_K8S_NS + r"(?:job\.batch/)?(?P<job>[a-z0-9][\w.-]*)\s+(?:Complete\s+)?"
                                   r"(?P<done>\d+)/(?P=done)\s+(?:\d+[ydhms])+\s+(?:\d+[ydhms])+[ \t]*$", re.MULTILINE)
_K8S_AGE_UNIT = {"y": 31_536_000, "d": 86_400, "h": 3_600, "m": 60, "s": 1}
_K8S_SHORT_FAILED = frozenset(f"{init}{why}" for init in ("", "Init:")
                              for why in ("OOMKilled", "Error", "CrashLoopBackOff"))
_K8S_SUCCEEDED = lazy_regex(r"^Status:\s+Succeeded\s*$", re.MULTILINE)
# The job's own word that it ended well, in Kubernetes: the training operator's "PyTorchJob default/train-job
# successfully completed." (its event's and its Succeeded condition's message, older operators' "PyTorchJob train-job
# is successfully completed."; TFJob, MPIJob, ... alike), `kubectl get
# pytorchjobs`' STATE column ("train-job   Succeeded   50m"), the Job controller's event ("Completed   job/train-job
# Job completed"; `kubectl describe job`'s "Normal  Completed  5m  job-controller  Job completed") and `kubectl get
# jobs`' row of a Job whose completions all succeeded ("train-job   Complete   1/1   6m   40m", kubectl 1.28+'s STATUS
# column; before it "train-job   1/1   6m   40m")
_K8S_JOB_DONE = lazy_regex(
    r"\b(?:PyTorch|TF|MPI|Paddle|XGBoost|JAX|MX|DeepSpeed|Deepspeed|Training)Job (?:[\w.-]+/)?[\w.-]+ (?:is )?"
    r"successfully completed\.|^[a-z0-9][\w.-]*[ \t]+Succeeded[ \t]+\d+[smhd]\w*[ \t]*\r?$"
    r"|\bCompleted[ \t]+job/[\w.-]+[ \t]+Job completed\b|\bjob-controller[ \t]+Job completed\b"
    r"|^(?:[a-z0-9][a-z0-9-]{0,62}[ \t]+)?[a-z0-9][\w.-]*[ \t]+(?:Complete[ \t]+)?(?P<done>\d+)/(?P=done)[ \t]+"
    r"\d+[smhd]\w*[ \t]+\d+[smhd]\w*[ \t]*\r?$", re.MULTILINE)
# the training operator's event of a pod's trouble ("Warning  Unschedulable  13m  pytorchjob-controller  Error pod
# train-job-master-0 condition message: 0/2 nodes are available: ...", "Error pod train-job-worker-0 container pytorch
# exitCode: 1 terminated message: ...")
_K8S_OPERATOR_ERROR = lazy_regex(r"\bError pod (?P<pod>[a-z0-9][\w.-]*) (?:condition message|container [\w.-]+ "
                                 r"(?:exitCode|waiting message))")
# ... and its word that the job failed (the operator's "is failed because N Worker replica(s) failed", a Job's
# BackoffLimitExceeded or DeadlineExceeded, a STATE or STATUS column's Failed)
_K8S_JOB_FAILED = lazy_regex(r"\bis failed because\b|\bBackoffLimitExceeded\b|\bDeadlineExceeded\b|"
                             r"\bJob has reached the specified backoff limit\b|"
                             r"^(?:[a-z0-9][a-z0-9-]{0,62}[ \t]+)?[a-z0-9][\w.-]*[ \t]+Failed[ \t]+"
                             r"(?:\d+/\d+[ \t]+)?\d+[smhd]",
                             re.MULTILINE)
# the Job controller's word that the Job failed at its backoff limit (pkg/controller/job: its condition's reason and its
# event, "Warning  BackoffLimitExceeded  2m  job-controller  Job has reached the specified backoff limit" in `kubectl
# describe job`, "reason: BackoffLimitExceeded" / "message: Job has reached the specified backoff limit" in its YAML),
# and `kubectl describe job`'s count of its pods ("Pods Statuses:  0 Active (0 Ready) / 0 Succeeded / 4 Failed"; before
# kubectl 1.27 "0 Running / 3 Succeeded / 5 Failed")
K8S_JOB_BACKOFF = "the Kubernetes Job failed at its backoff limit"
_K8S_BACKOFF_LIMIT = lazy_regex(r"\bBackoffLimitExceeded\b|\bJob has reached the specified backoff limit\b")
_K8S_PODS_FAILED = lazy_regex(r"^Pods Statuses:\s+\d+ (?:Active|Running)(?: \(\d+ Ready\))? / \d+ Succeeded / "
                              r"(?P<n>\d+) Failed", re.MULTILINE)
# any pod kubectl get pods lists, in whatever state ("train-worker-1   1/1   Running   0   5m")
_K8S_ANY_ROW = lazy_regex(_K8S_NS + _K8S_KIND + r"(?P<pod>[a-z0-9][\w.-]*)\s+\d+/\d+\s+[A-Z][\w:]*\s+\d+", re.MULTILINE)
_K8S_BACKOFF = lazy_regex(r"Back-off restarting failed container (?:(?P<container>[\w.-]+) )?in pod "
                          r"(?P<pod>[\w.-]+?)(?:_[\w.-]+)?(?:\(|\s|$)")
# Ray's raylet: "1 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed due to other
# reasons at node (ID: <id>, IP: 10.0.0.9) over the last time period."
_RAY_OOM = lazy_regex(r"(?P<n>\d+) Workers? \(tasks / actors\) killed due to memory pressure \(OOM\)[^\n]*?"
                      r"at node \(ID: \w+, IP: (?P<ip>[\w.:-]+)\)")
# submitit (core/core.py): "Job 4242_0 (task: 0) with path <result.pkl>\nhas not produced any output (state: TIMEOUT)"
# (the task is the rank: submitit's global rank is SLURM_PROCID) and "Job (task=3) failed during processing with trace:"
_SUBMITIT_NO_OUTPUT = lazy_regex(r"Job (?P<job>\S+) \(task: (?P<task>\d+)\) with path \S+\s+has not produced any "
                                 r"output \(state: (?P<state>[A-Z_]+)")
_SUBMITIT_FAILED = lazy_regex(r"Job \(task=(?P<task>\d+)\) failed during processing")
_SUBMITIT_OUTSIDE = {"TIMEOUT": "its time limit was reached", "PREEMPTED": "it was preempted",
                     "NODE_FAIL": "a node failed", "CANCELLED": "it was cancelled", "DEADLINE": "its deadline passed"}
# Ray's memory monitor (OutOfMemoryError, also in the raylet's log): "Memory on the node (IP: 10.0.0.9, ID: ...)
# where the task (task ID: ..., name=f, pid=4411, memory used=1.2GB) was running was 27.7GB / 28.8GB (0.96...),
# which exceeds the memory usage threshold of 0.95. Ray killed this worker (ID: ...) because it was the most recently
# scheduled task" ("the lease (...)" in newer Ray; "(actor ID: ..., name=A.f, pid=...)" for an actor's task)
_RAY_MEMORY = lazy_regex(r"Memory on the node \(IP: (?P<ip>[\w.:-]+)[^)]*\) where the (?:task|lease|actor) \("
                         r"[^)]*?\bpid=(?P<pid>\d+)[^)]*\)\s*was running[^\n]*?\s*[^\n]*?Ray killed this worker")
# Lightning's launcher (strategies/launchers/subprocess_script.py): a rank raised while others wait: "DeadLock
# detected from rank: 1" then that rank's traceback
# Lightning's child-process observer (fabric/strategies/launchers/subprocess_script.py), of the first child it saw end
# badly: "[rank: 3] Child process with PID 66120 terminated with code -9. Forcefully terminating all other processes to
# avoid zombies" (the rank is the child's: children are ranks 1..N-1 of the node; a negative code is Popen's signal);
# it then kills the others and the main process (the shell's "Killed" after it is that teardown)
_LIGHTNING_CHILD = lazy_regex(r"\[rank: (?P<rank>\d+)\] Child process with PID (?P<pid>\d+) terminated with code "
                              r"(?P<code>-?\d+)")
_LIGHTNING_DEADLOCK = lazy_regex(r"DeadLock detected from rank: (?P<rank>\d+)")
# Ray Train's WorkerGroupError / TrainingFailedError: "Training failed due to worker errors:" then, per group of
# ranks that raised the same error, "[Rank 2]:" (older: "[Rank 2]"; "[Rank 0, 1, 3]:" for several; also "[Rank 2
# Error Snippet]:") and the error's text
_RAY_TRAIN_HEAD = "failed due to worker errors"
_RAY_TRAIN_RANKS = lazy_regex(r"^\s*\[Rank (?P<ranks>\d+(?:, \d+)*)(?: Error Snippet)?\]:?\s*$", re.MULTILINE)
_ERROR_LINE = lazy_regex(r"^\s*(?P<what>(?:[\w.]+(?:Error|Exception|Interrupt)|Exception)\b(?:\([\w.]+\))?:[^\n]*)$",
                         re.MULTILINE)
# the SageMaker training toolkit's record of the user's command (errors.py, _CalledProcessError.__str__):
# "ExecuteUserScriptError:\nExitCode 137\nErrorMessage \"...\"\nCommand \"torchrun ...\"" (the command's exit status: a
# negative one or one above 128 is a signal's); "ErrorMessage" quotes the command's last error lines, read as lines
_SAGEMAKER = lazy_regex(r"(?P<what>ExecuteUserScriptError|InstallModuleError|InstallRequirementsError):\s*ExitCode "
                        r"(?P<code>-?\d+)")
# Vertex AI's custom job: "The replica workerpool0-0 exited with a non-zero status of 137. Termination reason:
# OOMKilled." (the replica: worker pool and index, no rank)
_VERTEX = lazy_regex(r"The replica (?P<replica>workerpool\d+-\d+) exited with a non-zero status of (?P<code>\d+)\.?"
                     r"(?: Termination reason: (?P<why>\w+))?")
# NCCL's RAS status report (ncclras, NCCL 2.24+; ras/client_support.cc), its "Errors" section: "DEAD" then "  1 job
# process is considered dead (unreachable via the RAS network)" and "  Process 48211 on node 10.20.1.7 managing GPU 5"
# (the rank it ran, from the communicator's "Rank 13 -- GPU 5 managed by process 48211 on node 10.20.1.7" line of its
# INCOMPLETE block); "#0-0 (hash) ERROR" then "  Rank 6 reported <ncclGetErrorString> -- GPU 6 managed by process 9910
# on node h06" (an asynchronous or init error the rank's communicator holds)
_RAS_DEAD_HEAD = lazy_regex(r"^\s*\d+ job process(?:es are| is) considered dead \(unreachable via the RAS network\)",
                            re.MULTILINE)
_RAS_DEAD = lazy_regex(r"^\s*Process (?P<pid>\d+) on node (?P<host>\S+) managing GPUs? (?P<gpu>[\w,() -]+?)\s*$",
                       re.MULTILINE)
_RAS_RANK = lazy_regex(r"^\s*Rank (?P<rank>\d+)(?: has status \w+| reported (?P<error>[^\n]+?))? -- GPU (?P<gpu>\S+) "
                       r"managed by process (?P<pid>\d+) on node (?P<host>\S+)\s*$", re.MULTILINE)
_RAS_REPORTED = lazy_regex(r"^\s*\d+ ranks reported (?P<error>[^\n]+?)\s*$(?P<listed>(?:\n\s*Rank \d+ -- [^\n]*)*)",
                           re.MULTILINE)
# SkyPilot's job runner: "ERROR: Job 3 failed with return code list: [137, 1] (Worker failed with return code 1,
# SkyPilot cleaned up the processes on other nodes with return code 137)": one code per node, by node rank; 137 beside
# another failure is its cleanup of the other nodes
_SKYPILOT_CODES = lazy_regex(r"Job (?P<job>\d+) failed with return code list:\s*(?:\x1b\[[\d;]*m)?\s*"
                             r"\[(?P<codes>-?\d+(?:,\s*-?\d+)*)\]")
# Cray ALPS's aprun, at the application's end: "Application 8812345 exit codes: 137" and "Application 8812345 exit
# signals: Killed" (no rank: its "PE RANK 7 exit signal Killed" line, when there, names it)
_ALPS_EXIT = lazy_regex(r"^Application (?P<app>\d+) exit (?:codes: (?P<code>\d+)|"
                        r"signals: (?P<sig>[A-Z][a-z]+(?: [a-z]+)*))", re.MULTILINE)
# AMReX's own abort (amrex::Abort, the codes built on it: Castro, WarpX, ImpactX, Nyx): "amrex::Abort::3::GPU last
# error detected in file .../AMReX_GpuLaunchFunctsG.H line 1032: out of memory !!!" then "SIGABRT" (N, the number
# after "Abort::", is the process's MPI_COMM_WORLD rank; AMReX then calls MPI_Abort): rank N's failure in its own
# words, its kind what the words say (a GPU out-of-memory, a CUDA or HIP error, or the code's own error)
_AMREX_ABORT = lazy_regex(r"\bamrex::Abort::(?P<rank>\d{1,7})::[ \t]*(?P<msg>[^\n]*?)[ \t]*(?:!!!)?[ \t]*$",
                          re.MULTILINE)
_ALPS_PE = lazy_regex(r"PE RANK (?P<rank>\d+) exit signal (?P<sig>[A-Z][a-z]+(?: [a-z]+)*)")
# Cray ATP (Abnormal Termination Processing), when the first process of an application dies: "Application 37193257 is
# crashing. ATP analysis proceeding...", "ATP Stack walkback for Rank 0 starting:", its frames, "ATP Stack walkback
# for Rank 0 done", then "Process died with signal 11: 'Segmentation fault'" (and "Forcing core dumps of ranks 0, 2,
# 3"): the rank it walked back is the one that died of that signal; aprun then ends the others (ALPS's later "PE RANK
# 355 exit signal Killed" is that cleanup). Each at its line's start, as ATP writes them (a sentence that quotes them
# is no record)
_ATP_DIED = lazy_regex(r"^[ \t>*`]*ATP Stack walkback for Rank (?P<rank>\d+) done[ \t]*\r?\n(?:[ \t]*\r?\n)?"
                       r"[ \t>*`]*Process died with signal (?P<num>\d+)(?::[ \t]*'(?P<name>[^'\n]*)')?", re.MULTILINE)
# Julia's Distributed master on a worker whose connection closed (cluster.jl): "Worker 3 terminated." on a line of its
# own; Julia shown by its own words: the master's ProcessExitedException(3), a script's "ERROR: LoadError", a worker's
# "From worker N:" line, a frame of a .jl file
_JULIA_TERMINATED = lazy_regex(r"^[ \t]*Worker (?P<id>\d+) terminated\.[ \t]*\r?$", re.MULTILINE)
# a worker's own fatal signal report above it (Julia's runtime, "signal (11): Segmentation fault", its "From worker N:"
# prefix taken off or not)
_JULIA_OWN = lazy_regex(r"^[ \t]*(?:From worker \d+:[ \t]*)?signal \(\d{1,2}\): [A-Z]", re.MULTILINE)
_JULIA_SHOWN = lazy_regex(r"ProcessExitedException\(\d+\)|\bERROR: LoadError\b|^[ \t]*From worker \d+:|\.jl:\d+",
                          re.MULTILINE)
_SGLANG_CHILD = lazy_regex(r"Child process unexpectedly failed with (?:exitcode=|an exit code )(?P<status>\d+)\. "
                           r"pid=(?P<pid>\d+)")


def parse_framework_records(text: str) -> tuple[RankDeath, ...]:
    """The records above in ``text``, in text order. Never raises."""
    if not holds_any(text, MARKERS):
        return ()
    out = [*_slurm(text), *_mpi(text), *_kubernetes(text), *_ray(text), *_submitit(text), *_launchers(text),
           *_trainers(text), *_nccl_ras(text), *_flux(text), *_cloud_stops(text),
           *_realm_frozen(text)]
    if not out and _JULIA_TERMINATED.search(text) is not None and not parse_rank_deaths(text) \
            and not parse_launcher_failures(text):
        # (a launcher's own record of how the worker's process ended, srun's "task 0: Exited with exit code 1", says
        # more than the master's word that its connection closed)
        out.extend(_julia_workers(text))
    for match in _SAGEMAKER.finditer(text):
        status = int(match.group("code"))
        sig = signal_name(str(-status)) if status < 0 else signal_name(str(status - 128)) if 128 < status < 160 \
            else None
        if status:
            said = f"SageMaker: the training command ended with exit code {status}" + (
                f" (killed by {sig})" if sig else "")
            out.append(RankDeath(None, sig, None if sig else status, None, None, f"{said} ({_line(text, match)})",
                                 offset=match.start()))
        break            # (the toolkit's record, then the SDK's and the console's copies of it)
    for match in _SKYPILOT_CODES.finditer(text):
        codes = [int(code) for code in match.group("codes").split(",")]
        cleanup = any(code not in (0, 137) for code in codes)
        for node, status in enumerate(codes):
            if status == 0 or (cleanup and status == 137):
                continue
            sig = signal_name(str(status - 128)) if 128 < status < 160 else None
            said = f"SkyPilot: node {node} of job {match.group('job')} ended with return code {status}" + (
                f" (killed by {sig})" if sig else "") + f" ({_line(text, match)})"
            out.append(RankDeath(None, sig, None if sig else status, None, None, said[:400], offset=match.start()))
        break            # (one record per job)
    seen_amrex: set[int] = set()
    for match in _AMREX_ABORT.finditer(text):
        rank = int(match.group("rank"))
        if rank in seen_amrex or not match.group("msg"):
            continue
        seen_amrex.add(rank)        # (its first abort: a backtrace file's copy repeats it)
        out.append(RankDeath(rank, None, None, None, None, match.group("msg")[:400], offset=match.start(),
                             raised=True, mpi=True))
    for match in _ATP_DIED.finditer(text):
        if went_on_after(text, match.end()):
            continue                # the words quoted in a run that went on after them: no death of this job
        sig = signal_name(match.group("num"))
        if sig:
            out.append(RankDeath(int(match.group("rank")), sig, None, None, None,
                                 f"Cray ATP: rank {match.group('rank')} died with signal {match.group('num')}"
                                 + (f" ({match.group('name')})" if match.group("name") else "")
                                 + f" ({_line(text, match)})"[:300], offset=match.start(), first=True, mpi=True))
        break                       # (ATP walks back the first process to die)
    for match in _ALPS_PE.finditer(text):
        out.append(RankDeath(int(match.group("rank")), signal_name(None, match.group("sig")), None, None, None,
                             _line(text, match), offset=match.start()))
    alps = [] if _ALPS_PE.search(text) else list(_ALPS_EXIT.finditer(text))
    said_signal = next((m for m in alps if m.group("sig")), None)
    for match in [said_signal] if said_signal else alps[:1]:
        status = int(match.group("code") or 0)
        sig = (signal_name(None, match.group("sig")) if match.group("sig")
               else signal_name(str(status - 128)) if 128 < status < 160 else None)
        if sig or status:
            out.append(RankDeath(None, sig, None if sig else status, None, None,
                                 f"aprun: application {match.group('app')} ended"
                                 + (f" by {sig}" if sig else f" with exit code {status}")
                                 + f" ({_line(text, match)})", offset=match.start()))
    for match in _VERTEX.finditer(text):
        status, why, replica = int(match.group("code")), match.group("why"), match.group("replica")
        oom = why == "OOMKilled"
        sig = "SIGKILL" if oom else signal_name(str(status - 128)) if 128 < status < 160 else None
        said = f"Vertex AI: replica {replica} exited with status {status}" + (
            " (OOMKilled: it hit its memory limit)" if oom else f" (killed by {sig})" if sig else "")
        out.append(RankDeath(None, sig, None if sig else status, replica, None, said, offset=match.start()))
    for match in _SGLANG_CHILD.finditer(text):
        status = int(match.group("status"))
        sig = signal_name(str(status & 0x7F)) if status & 0x7F else None
        code = None if sig else status >> 8
        out.append(RankDeath(None, sig, code, None, int(match.group("pid")), _line(text, match), offset=match.start()))
    return tuple(sorted(out, key=lambda d: d.offset))


def _line(text: str, match: re.Match[str]) -> str:
    head = text.rfind("\n", 0, match.start()) + 1
    tail = text.find("\n", match.end())
    return " ".join(text[head:tail if tail >= 0 else len(text)].split())[:300]


def _from_match(text: str, match: re.Match[str]) -> str:
    """A record's own words as its pattern read them (a logger's head before them and the advice after left out)."""
    return " ".join(match.group(0).split())[:300]


def spark_lost_in_its_stop(text: str, at: int) -> bool:
    """The Spark driver's line at offset ``at`` (its start, or inside it) tells an executor lost for no reason its
    words give (_SPARK_LOST) and stands inside the driver's own orderly stop: a line of the stop's start before it and
    "Successfully stopped SparkContext" after it (an executor lost there is one the driver shut down). A heartbeat
    timeout is no such executor: it was gone minutes before the stop began (HeartbeatReceiver's timeout, 120 s)."""
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    end = len(text) if end < 0 else end
    lost = _SPARK_LOST.search(text, start, end) if "Lost executor" in text[start:end] else None
    return lost is not None and not lost.group("why").startswith("Executor heartbeat") \
        and _SPARK_STOPPING.search(text, 0, start) is not None and _SPARK_STOPPED.search(text, end) is not None


SPARK_STOP_NOTE = "an executor Spark's driver lost while it stopped them itself (its orderly stop, teardown)"


def _memory_kills(text: str) -> list[RankDeath]:
    """The batch system's own kill of a job over its memory limit (slurmstepd's, PBS's, YARN's): SIGKILL, for memory."""
    out: list[RankDeath] = []
    for match in _SLURM_MEMORY.finditer(text):
        cancel = _SLURM_CANCEL.search(text, match.end())
        host = (cancel.group("host") or cancel.group("old_host")) if cancel is not None else None
        task = _srun_killed_task(text, match, host)
        host = host or (task[1] if task is not None else None)
        # (srun's record names the task: "... for exceeding its memory limit (...; task 0, as srun's record of the
        # task it killed says)")
        who = f"; task {task[0]}, as srun's record of the task it killed says" if task is not None else ""
        # (its own word says which: "Job 777 exceeded ..." a job, "Step 551.0 exceeded ..." a step of it)
        note = (f"out of memory: Slurm killed {match.group('entity').lower()} {match.group('id')}"
                f"{f' on {host}' if host else ''} for exceeding its "
                f"memory limit ({match.group('used')} > {match.group('limit')} KiB{who}): {_line(text, match)}")
        out.append(RankDeath(task[0] if task is not None else None, "SIGKILL", None, host, None, note[:400],
                             offset=match.start()))
        break                       # (the job's one kill; its steps' lines repeat it)
    for match in _PBS_MEMORY.finditer(text):
        note = (f"out of memory: PBS killed the job for exceeding its requested {match.group('what')} "
                f"({match.group('used')} kb, limit {match.group('limit')} kb; {_PBS_SIGNAL}): {_line(text, match)}")
        out.append(RankDeath(None, None, None, None, None, note[:400], offset=match.start()))
        break
    for match in _YARN_MEMORY.finditer(text) if "YARN" in text or "beyond" in text else ():
        if went_on_after(text, match.end()) or _SPARK_WENT_ON.search(text, match.end()) is not None:
            continue                # (Spark runs a lost executor's tasks again: a job that went on did not end here)
        line = _line(text, match)
        where = _YARN_HOST.search(line)
        host = (where.group("host") or where.group("on")) if where is not None else None
        # (the kill's own words, "Container killed by YARN ... X of Y virtual memory used" or "Container [pid=...] is
        # running beyond physical memory limits. Current usage: ...", which say the usage: the logger's head before
        # them, a timestamp and a Java class path of 90 characters, left the quote cut inside them)
        note = (f"out of memory: YARN killed a container{f' on {host}' if host else ''} for exceeding its memory "
                f"limit: {_from_match(text, match)}")
        pid = int(match.group("pid")) if match.group("pid") else None
        out.append(RankDeath(None, "SIGKILL", None, host, pid, note[:400], offset=match.start(),
                             first=_STAGE_ABORTED in line))
        break                       # (the driver tells the same kill on several lines)
    for match in _YARN_EXIT.finditer(text) if not out and ". Exit status: " in text else ():
        status = int(match.group("code"))
        sig = signal_name(str(status - 128)) if 128 < status < 160 else None
        if (sig is None and not 0 < status < 128) or went_on_after(text, match.end()) \
                or _SPARK_WENT_ON.search(text, match.end()) is not None:
            continue                # (Spark runs a lost executor's tasks again: a job that went on did not end here)
        host = match.group("host")
        what = f"YARN's container {match.group('id')} of a Spark executor{f' on {host}' if host else ''}"
        first = _STAGE_ABORTED in _line(text, match)
        if sig == "SIGTERM":
            # (143: YARN's SIGTERM, "Container killed on request. Exit code is 143", "Killed by external signal": the
            # NodeManager stopping it at the ResourceManager's or the application master's request, a preemption;
            # its memory check says so in words of its own, read above: _YARN_MEMORY)
            note = f"{what} {YARN_STOPPED} (exit status {status}: killed on request): {_line(text, match)}"
            out.append(RankDeath(None, sig, None, host, None, note[:400], offset=match.start(), first=first,
                                 outside=True))
        elif sig is not None:
            note = f"{what} was killed by {sig} (exit status {status}): {_line(text, match)}"
            out.append(RankDeath(None, sig, None, host, None, note[:400], offset=match.start(), first=first))
        else:
            # (the executor's JVM ended by itself: Spark's executor exit codes, core's ExecutorExitCode, say why for
            # some: 50 an uncaught exception, 52 an OutOfMemoryError, 56 its heartbeats to the driver failing)
            why = _SPARK_EXIT_CODES.get(status, "the executor's own error: YARN's diagnostics with it, the lines "
                                                "before it or its container's log, `yarn logs -applicationId ...`, "
                                                "tell which")
            tail = _YARN_ERR_TAIL.search(text, match.end(), match.end() + 3000)
            # (a script's path before its shell's message cut to its name: "launch_container.sh: line 16: ...")
            said = _SCRIPT_PATH.sub("", tail.group("what").strip()) if tail is not None else ""
            own = _SPARK_EXIT_CODES.get(status, "the executor's own error")
            note = (f"{what} exited with status {status} ({own}), its {tail.group('file')} ending: {said}"
                    if tail is not None else f"{what} exited with status {status} ({why}): {_line(text, match)}")
            out.append(RankDeath(None, None, status, host, None, note[:400], offset=match.start(), first=first))
        break                       # (the driver tells the same end on several lines)
    for match in _SPARK_LOST.finditer(text) if not out and "Lost executor" in text else ():
        if went_on_after(text, match.end()) or _SPARK_WENT_ON.search(text, match.end()) is not None:
            continue                # (Spark runs a lost executor's tasks again: a job that went on did not end here)
        if spark_lost_in_its_stop(text, match.start()):
            continue                # (the driver shutting its executors down: its own orderly stop)
        # (the cluster manager's record of the executor's container says how it ended: its pod's last state, a kill
        # for memory or an exit code, on Kubernetes)
        told = ("the executor pod's `kubectl describe pod` (its last state and exit code) and `kubectl logs "
                "--previous`" if _SPARK_ON_K8S.search(text) is not None else
                "its container's own log and end (YARN: `yarn logs -applicationId ...`; Kubernetes: `kubectl "
                "describe pod`)")
        note = (f"{SPARK_LOST} {match.group('id')} on {match.group('host')} ({match.group('why')}): how it ended is "
                f"not in this input; {told} would tell")
        out.append(RankDeath(None, None, None, match.group("host"), None, note[:400], offset=match.start()))
        break                       # (the first executor lost: the others' after it may be its consequence)
    for match in _LSF_LIMIT.finditer(text):
        if went_on_after(text, match.end()):
            continue                # the words quoted in a job that went on after them: no end of this job
        record = _line(text, match)
        if match.group("code") in _LSF_TIME:     # a time limit: the job stopped from outside
            # (the CPU time the job asked for, bsub -c, is a time limit too: said so, with a time limit's advice)
            limit = "CPU time" if match.group("code") == "CPULIMIT" else match.group("limit")
            note = f"LSF stopped the job at its {limit} limit: {record}"
            out.append(RankDeath(None, "SIGTERM", None, None, None, note[:400], offset=match.start(), outside=True))
        else:
            # (LSF sends SIGINT, SIGTERM, then SIGKILL at such a limit: the signal that ended the job is the one its
            # report gives, "Exited with exit code 137." a SIGKILL, 143 a SIGTERM; none, where it gives none)
            ended = _LSF_EXITED.match(text, match.start())
            sig = None
            if ended is not None:
                code = int(ended.group("code")) if ended.group("code") else None
                sig = (signal_name(None, ended.group("sig")) if ended.group("sig") else
                       signal_name(str(code - 128)) if code is not None and 128 < code < 160 else None)
                how = ended.group("said") + (f": {sig}" if sig and ended.group("code") else "")
            else:
                how = "how it ended, its exit code or signal, is not in this input"
            note = (f"LSF killed the job for reaching its {match.group('limit')} limit (TERM_{match.group('code')}; "
                    f"{how}): {record}")
            out.append(RankDeath(None, "SIGKILL" if sig == "SIGKILL" else None, None, None, None, note[:400],
                                 offset=match.start()))
        break
    for match in _LSF_OUTSIDE.finditer(text):
        if went_on_after(text, match.end()):
            continue
        note = f"LSF ended the job from outside (TERM_{match.group('code')}): {_line(text, match)}"
        out.append(RankDeath(None, "SIGTERM", None, None, None, note[:400], offset=match.start(), outside=True))
        break
    if not out:
        # (`bsub -o` appends each run's report to the same file: the last report is the job's end, and a later
        # "Successfully completed." says the run after it ended well)
        ends = list(_LSF_END.finditer(text)) if "Resource usage summary" in text else []
        last = ends[-1] if ends else None
        if last is not None and _LSF_DONE.search(text, last.end()) is None:
            sig = signal_name(None, last.group("sig")) if last.group("sig") else None
            code = int(last.group("code") or 0)
            if sig or code:
                note = f"LSF: the job {f'ended by {sig}' if sig else f'exited with code {code}'}: {_line(text, last)}"
                out.append(RankDeath(None, sig, None if sig else code, None, None, note[:400], offset=last.start()))
    out.extend(_batch_limits(text))
    for match in _DASK_MEMORY.finditer(text):
        if went_on_after(text, match.end()):
            continue                # the nanny restarted the worker and the job went on (Dask re-runs its tasks)
        worker = f"worker {match.group('addr')}" if match.group("addr") else "a worker"
        pid = int(match.group("pid")) if match.group("pid") else None
        # (the nanny terminates the worker's process, SIGTERM, and sends SIGKILL only where it says so: "is slow to
        # accept SIGTERM; sending SIGKILL")
        killed = _DASK_SIGKILL.search(text, match.end()) is not None
        how = ("it sent SIGKILL" if killed else
               "the signal is not in this input: the nanny sends SIGTERM, then SIGKILL where it says so")
        note = (f"out of memory: Dask's nanny restarted {worker} for exceeding {match.group('pct')}% of its memory "
                f"limit ({how}): {_line(text, match)}")
        out.append(RankDeath(None, "SIGKILL" if killed else None, None, None, pid, note[:400], offset=match.start()))
        break                       # (the nanny restarts it and says it again for each kill)
    return out


def _srun_killed_task(text: str, kill: re.Match[str], host: str | None) -> tuple[int, str | None] | None:
    """The one task srun records as Killed (or Out Of Memory) first after slurmstepd's memory kill, on the kill's node:
    the task the kill ended (a step of one task on that node; srun prints "srun: error: falkor7: task 0: Killed" after
    the step's cancellation). None where srun's records name several tasks killed (the step's memory is all of
    theirs) or another node, or where no such record follows."""
    after = _SRUN_KILLED.search(text, kill.end())
    if after is None or (host and after.group("host") and after.group("host") != host):
        return None
    tasks = after.group("tasks")
    if not tasks.isdigit() or int(tasks) > 1_000_000 or any(
            other.group("tasks") != tasks for other in _SRUN_KILLED.finditer(text, after.end())):
        return None         # (several tasks killed, on one line or on several: the step's memory is all of theirs)
    return int(tasks), after.group("host")


def _batch_limits(text: str) -> list[RankDeath]:
    """PBS's, Grid Engine's and HTCondor's own records of how the job ended: a time limit is a stop from outside; a
    limit on what it used (memory, CPU time) its kill; HTCondor's end of a job its signal or exit code."""
    out: list[RankDeath] = []
    for match in _PBS_LIMIT.finditer(text):
        if went_on_after(text, match.end()):
            continue                # the words quoted in a job that went on after them: no end of this job
        what = match.group("what")
        said = f"{what} {match.group('used')}, limit {match.group('limit')}"
        if what == "walltime":
            note = (f"PBS stopped the job at its walltime limit: its time limit was reached ({said}): "
                    f"{_line(text, match)}")
            out.append(RankDeath(None, "SIGTERM", None, None, None, note[:400], offset=match.start(), outside=True))
        else:
            note = (f"PBS killed the job for exceeding its requested {what} ({said}; {_PBS_SIGNAL}): "
                    f"{_line(text, match)}")
            out.append(RankDeath(None, None, None, None, None, note[:400], offset=match.start()))
        break                       # (the job's one kill)
    for match in _SERVER_LIMIT.finditer(text) if not out else ():
        if went_on_after(text, match.end()):
            continue                # the words quoted in a job that went on after them: no end of this job
        used = ", ".join(f"resources_used.{m.group('what')}={m.group('n')}"
                         for m in _PBS_USED_MEMORY.finditer(text, match.end(), match.end() + 1500))
        used = f"; {used}" if used else ""
        if match.group("mem"):
            note = (f"out of memory: PBS killed the job for exceeding its requested mem or vmem (Torque's server: a "
                    f"memory resource limit{used}): {_line(text, match)}")
        elif match.group("cput"):
            note = (f"PBS killed the job for exceeding its requested cput (Torque's server; {_PBS_SIGNAL}): "
                    f"{_line(text, match)}")
        else:
            note = (f"{PBS_ANY_LIMIT} (Torque's server does not say "
                    f"which: its resources_used against the job's requests, or `tracejob JOBID`, tell{used}): "
                    f"{_line(text, match)}")
        out.append(RankDeath(None, None, None, None, None, note[:400], offset=match.start()))
        break                       # (the job's one end)
    for match in _SERVER_WALLTIME.finditer(text) if not out else ():
        if went_on_after(text, match.end()):
            continue                # the words quoted in a job that went on after them: no end of this job
        note = ("the batch server stopped the job at its wallclock limit: its time limit was reached: "
                f"{_line(text, match)}")
        out.append(RankDeath(None, "SIGTERM", None, None, None, note[:400], offset=match.start(), outside=True))
        break                       # (the job's one end)
    if not out:
        out.extend(_pbs_exit(text))
    for match in _SGE_WALLCLOCK.finditer(text):
        if went_on_after(text, match.end()):
            continue                # the words quoted in a job that went on after them: no end of this job
        note = (f"Grid Engine stopped job {match.group('id')} at its hard wallclock limit (h_rt): its time limit was "
                f"reached: {_line(text, match)}")
        out.append(RankDeath(None, "SIGTERM", None, None, None, note[:400], offset=match.start(), outside=True))
        break
    for match in _SGE_HARD.finditer(text):
        if went_on_after(text, match.end()):
            continue                # the words quoted in a job that went on after them: no end of this job
        what = match.group("what")
        memory = "mem" in what
        note = (f"{'out of memory: ' if memory else ''}Grid Engine killed job {match.group('id')} for exceeding its "
                f"hard limit {what}: {_line(text, match)}")
        out.append(RankDeath(None, signal_name("SIG" + match.group("sig")), None, None, None, note[:400],
                             offset=match.start()))
        break
    for match in _CONDOR_END.finditer(text):
        num, code = match.group("num"), match.group("code")
        sig = signal_name(num) if num else None
        if (not sig and not int(code or 0)) or went_on_after(text, match.end()) \
                or _CONDOR_LATER.search(text, match.end()) is not None:
            continue                # a job that ended well, one job's end in a log whose work went on, or one a
            # later event of the log follows (a DAG's retry that was submitted, ran or ended: the last end is read)
        said = f"killed by {sig}" if sig else f"exit code {code}"
        note = f"HTCondor: job {match.group('id')} ended ({said}): {_line(text, match)}"
        out.append(RankDeath(None, sig, None if sig else int(code), None, None, note[:400],
                             offset=match.start()))
        break
    for match in _CONDOR_HELD_MEMORY.finditer(text):
        if went_on_after(text, match.end()) or _CONDOR_ENDED_LATER.search(text, match.end()) is not None:
            continue                # the words quoted in a job that went on after them, or a hold the job was
            # released from and ended after (a later terminated event): no end of this job; a release alone (the
            # paste cut before the job's next end) leaves the hold the last end told
        note = (f"out of memory: HTCondor held job {match.group('id')} over its memory limit: "
                f"{' '.join(match.group('why').split())}")
        out.append(RankDeath(None, "SIGKILL", None, None, None, note[:400], offset=match.start()))
        break
    if not any("HTCondor" in death.text for death in out) and "(" in text:
        out += _condor_other_ends(text)        # (a terminated event's or a memory hold's end told: that one)
    if not any("HTCondor" in death.text for death in out) and "/" in text:
        out += _condor_q_holds(text)
    return out


def _condor_q_holds(text: str) -> list[RankDeath]:
    """condor_q -hold's list of held jobs (_CONDOR_Q_HELD): the first job held over its memory request, a kill (crash
    SIGKILL, as the job event log's memory hold); else the first job held, with its reason. Not where the work went on
    after the list, nor a job condor_history shows completed after it (_CONDOR_HISTORY_DONE: released, run to its
    end)."""
    completed = {(match.group("id"), match.start()) for match in _CONDOR_HISTORY_DONE.finditer(text)}
    rows = [match for match in _CONDOR_Q_HELD.finditer(text) if not went_on_after(text, match.end())
            and not any(job == match.group("id") and at > match.end() for job, at in completed)]
    whys = {match.start(): _condor_q_reason(text, match) for match in rows}
    memory = [match for match in rows if _CONDOR_MEMORY_REASON.search(whys[match.start()]) is not None]
    if memory:
        match = memory[0]
        more = f" ({len(memory)} jobs held so)" if len(memory) > 1 else ""
        note = (f"out of memory: HTCondor held job {match.group('id')} over its memory request{more}: "
                f"{whys[match.start()]}")
        return [RankDeath(None, "SIGKILL", None, None, None, note[:400], offset=match.start())]
    if rows:
        match = rows[0]
        more = f" ({len(rows)} jobs held)" if len(rows) > 1 else ""
        note = f"HTCondor held job {match.group('id')}{more}: {whys[match.start()]}"
        return [RankDeath(None, None, None, None, None, note[:400], offset=match.start(), raised=True)]
    return []


def _condor_q_reason(text: str, row: re.Match[str]) -> str:
    """A held job's reason as its row says it, with the rest a terminal's cut put on the next lines (_CONDOR_Q_REST):
    where the row's line is as long as a terminal's (60 columns or more), each next line up to a blank one, the next
    row or a line no cut leaves (_CONDOR_Q_NOT_REST: a shell's prompt), while the line before it was cut at that same
    width (a column less where the cut fell on a space)."""
    why = row.group("why")
    width = row.end() - (text.rfind("\n", 0, row.start()) + 1)
    at, last = row.end(), width
    while abs(last - width) <= 1 and width >= 60 and at < len(text) and why.count("\n") < _CONDOR_Q_REST:
        end = text.find("\n", at + 1)
        line = text[at + 1:end if end >= 0 else len(text)]
        if not line.strip() or _CONDOR_Q_HELD.match(line) is not None or _CONDOR_Q_NOT_REST.match(line) is not None:
            break
        why += "\n" + line.strip()
        at, last = (end if end >= 0 else len(text)), len(line.rstrip())
    return why.replace("\n", "")


def _condor_other_ends(text: str) -> list[RankDeath]:
    """HTCondor's other events of a job's end (_CONDOR_HELD, _CONDOR_ABORTED, _CONDOR_SHADOW), the log's last one where
    no later terminated event follows it (a shadow exception: where no later event at all follows it)."""
    found: list[RankDeath] = []
    for match in _CONDOR_HELD.finditer(text):
        code, why, job = int(match.group("code")), " ".join(match.group("why").split()), match.group("id")
        if (code == 34 and "isk" not in why) or _CONDOR_MEMORY_REASON.search(why) is not None:
            # (its memory over the request: hold code 34, or a periodic hold policy's reason that says so, "put on hold
            # by SYSTEM_PERIODIC_HOLD due to memory usage N." under code 26 or 3: a kill for memory, as condor_q's
            # list of the same holds is read)
            note = f"out of memory: HTCondor held job {job} over its memory request (hold code {code}): {why}"
            found.append(RankDeath(None, "SIGKILL", None, None, None, note[:400], offset=match.start()))
        elif code in _CONDOR_OUTSIDE_HOLDS:
            note = f"HTCondor held job {job}: {_CONDOR_OUTSIDE_HOLDS[code]} (hold code {code}): {why}"
            found.append(RankDeath(None, None, None, None, None, note[:400], offset=match.start(), outside=True))
        else:
            note = f"HTCondor held job {job} (hold code {code}): {why}"
            found.append(RankDeath(None, None, None, None, None, note[:400], offset=match.start(), raised=True))
    for match in _CONDOR_ABORTED.finditer(text):
        why = f" ({match.group('why')})" if match.group("why") else ""
        note = f"HTCondor removed job {match.group('id')}{why}: a stop from outside the job"
        found.append(RankDeath(None, None, None, None, None, note[:400], offset=match.start(), outside=True))
    passed: dict[str, list[re.Match[str]]] = {}
    for match in _CONDOR_SHADOW.finditer(text):
        if not condor_event_passed(text, match.end()):
            note = f"HTCondor's shadow lost job {match.group('id')} (shadow exception): {match.group('why')}"
            found.append(RankDeath(None, None, None, None, None, note[:400], offset=match.start(), raised=True))
        else:
            passed.setdefault(match.group("id"), []).append(match)
    for job, shadows in passed.items():
        if len(shadows) >= _CONDOR_REPEATED:
            # (started again after each and lost again: HTCondor's manual, "How To Debug an Always Idle Job", calls
            # these repeated entries the problem, the job flapping between running and idle; the first says why)
            note = (f"HTCondor's shadow lost job {job} {len(shadows)} times (shadow exceptions; the job was started "
                    f"again after each and lost again): {shadows[0].group('why')}")
            found.append(RankDeath(None, None, None, None, None, note[:400], offset=shadows[0].start(), raised=True))
    found = [death for death in found if not went_on_after(text, death.offset)
             and _CONDOR_ENDED_LATER.search(text, death.offset + 1) is None]
    return [max(found, key=lambda death: death.offset)] if found else []


def condor_event_passed(text: str, at: int) -> bool:
    """The text at offset ``at`` lies in an event of HTCondor's job event log (its head at or before it, no "..."
    between) that a later event of the same job (its cluster and proc) follows: an event the job got past, no end of
    the job (a shadow exception after which the job ran again; only the job's last event in the log says how it ended).
    One home: the reader of a shadow exception's end (_condor_other_ends) and the lines of failure words of no reader
    (triage.load.logs.text)."""
    heads = [m for m in _CONDOR_ANY_LATER.finditer(text, max(0, at - 4000), at + 1) if m.start() <= at]
    if not heads or _CONDOR_EVENT_END.search(text, heads[-1].end(), at) is not None:
        return False
    # (a later event of the same job: a log of several jobs, a cluster's procs or a DAG's nodes, goes on with the
    # others' events after one job's last)
    return any(later.group("job") == heads[-1].group("job")
               for later in _CONDOR_ANY_LATER.finditer(text, heads[-1].end()))


def condor_passed_note(text: str, line: str) -> str:
    """The note of a line of an HTCondor event the job got past (condor_event_passed): with the log's own word that
    it does not show the job's end where no terminated (005) or aborted (009) event follows."""
    shown = _CONDOR_ENDED_LATER.search(text) is not None or _CONDOR_ABORTED.search(text) is not None
    return f"{CONDOR_PASSED}{'' if shown else CONDOR_NO_END}): {line[:120]}"


def _pbs_exit(text: str) -> list[RankDeath]:
    """PBS's job record's exit status: above 256 a signal PBS sent (SIGTERM: a stop from outside), else the script's
    exit code; the last record in the input whose job did not go on after it."""
    for match in reversed(list(_PBS_EXIT.finditer(text))):
        start = text.rfind("\n", 0, max(0, match.start() - 1500)) + 1
        stop = min(len(text), match.end() + 1500)
        if _PBS_ATTRIBUTE.search(text, start, stop) is None or went_on_after(text, match.end()):
            continue
        code = int(match.group("code"))
        record = _line(text, match)
        # (below 0: PBS's own end of the job, a kill at a limit where the code is one, or its failure to run it)
        limit = (_TORQUE_KILLS if match.group("attr") == "exit_status" else _PBS_PRO_KILLS).get(code)
        if limit is not None and match.group("attr") == "exit_status" and code == -10:
            return [_torque_over_limit(text, start, stop, record, match.start())]
        if limit is not None:
            return [_pbs_limit_end(limit, f"Exit_status {code}", record, match.start())]
        if code <= 0:
            return []               # (0: it ended well; else PBS's own failure to run the job, no signal)
        comment = _PBS_COMMENT.search(text, start, stop)
        said = f" (its comment: {comment.group('what')[:160]})" if comment else ""
        if code <= 256:
            return []               # (the job script's own exit code: its failing line above, if any, says more)
        sig = signal_name(str(code - 256)) or f"signal {code - 256}"
        times = {m.group("which"): m.group("t") for m in _PBS_WALLTIME.finditer(text, start, stop)}
        used, limit = times.get("resources_used"), times.get("Resource_List")
        if used and limit and _seconds(used) >= _seconds(limit):
            why = f"its walltime limit was reached (walltime {used}, limit {limit})"
        else:
            why = "its walltime, a qdel or a limit PBS enforces (the record's comment and walltimes say which)"
        note = f"PBS ended the job with {sig} (Exit_status {code} = 256 + {code - 256}): {why}{said}: {record}"
        return [RankDeath(None, sig, None, None, None, note[:400], offset=match.start(), outside=sig == "SIGTERM")]
    return []


def _torque_over_limit(text: str, start: int, stop: int, record: str, offset: int) -> RankDeath:
    """Torque's record's "exit_status = -10": newer Torque's JOB_EXEC_OVERLIMIT_MEM (its memory limit; -11 walltime,
    -12 cput), but older Torque's (4.x, src/include/pbs_job.h) one JOB_EXEC_OVERLIMIT, a kill at any of its limits:
    the record's walltimes tell a walltime end; else which limit it was, its resources_used against its Resource_List
    (or `tracejob`)."""
    times = {m.group("which"): m.group("t") for m in _PBS_WALLTIME.finditer(text, start, stop)}
    used, limit = times.get("resources_used"), times.get("Resource_List")
    if used and limit and _seconds(used) >= _seconds(limit):
        return _pbs_limit_end("walltime", f"exit_status -10, walltime {used}, limit {limit}", record, offset)
    note = (f"{PBS_ANY_LIMIT} (Torque's exit_status -10: its memory limit in newer Torque, any of its limits in "
            f"Torque 4: its resources_used against its Resource_List, or `tracejob JOBID`, tell): {record}")
    return RankDeath(None, None, None, None, None, note[:400], offset=offset)


def _pbs_limit_end(what: str, said: str, record: str, offset: int) -> RankDeath:
    """PBS's end of a job at the limit ``what`` (walltime: a stop from outside; memory, CPU: its kill)."""
    if what == "walltime":
        note = f"PBS stopped the job at its walltime limit: its time limit was reached ({said}): {record}"
        return RankDeath(None, "SIGTERM", None, None, None, note[:400], offset=offset, outside=True)
    head = "out of memory: " if "mem" in what else ""
    note = f"{head}PBS killed the job for exceeding its requested {what} ({said}; {_PBS_SIGNAL}): {record}"
    return RankDeath(None, None, None, None, None, note[:400], offset=offset)


def _seconds(hms: str) -> int:
    h, m, s = (int(x) for x in hms.split(":"))
    return h * 3600 + m * 60 + s


# a process's own failure in its words (a Python traceback, an exception line, a fatal signal, CUDA's or NCCL's error):
# with one anywhere in the input, srun's Terminated list is no stop from outside
_OWN_FAILURE = lazy_regex(r"Traceback \(most recent call last\)|\b[A-Za-z_]\w*(?:Error|Exception): "
                          r"|\bSIG(?:SEGV|ABRT|BUS|FPE|ILL|KILL)\b|Segmentation fault|CUDA error|NCCL error")
# a collective's or a watchdog's timeout (a hang the step's end then tore down)
_TIMED_OUT = lazy_regex(r"Watchdog caught collective operation timeout|\btimed out\b|\bTimeout\b|DistStoreError")
# srun's list of the tasks the step's cancellation ended: "srun: error: nid002888: tasks 0-57,59-63: Terminated"
_SRUN_TERMINATED = lazy_regex(r"srun: error: (?:(?P<host>[\w.-]+): )?tasks? (?P<tasks>[\d,-]+): Terminated")


def _spared_task(text: str, start: int) -> tuple[int, str | None] | None:
    """After a step cancelled DUE TO TASK FAILURE, the one task that srun's Terminated list leaves out between the
    tasks it names (tasks 0-57,59-63: task 58), with its node: the task that failed, which srun did not have to
    terminate. None where no single task is left out inside one list, or where there are several lists."""
    tasks: set[int] = set()
    hosts: set[str | None] = set()
    lists = list(_SRUN_TERMINATED.finditer(text, start))
    if len(lists) != 1:
        return None     # a gap between two lists (two nodes' lines, a line cut from the paste) proves nothing
    for match in lists:
        hosts.add(match.group("host"))
        for part in match.group("tasks").split(","):
            low, _, high = part.partition("-")
            if not low.isdigit() or (high and not high.isdigit()):
                return None
            tasks.update(range(int(low), int(high or low) + 1))
    if not tasks:
        return None
    missing = set(range(min(tasks), max(tasks) + 1)) - tasks
    if len(missing) != 1:
        return None
    return missing.pop(), next(iter(hosts)) if len(hosts) == 1 else None


def _slurm(text: str) -> list[RankDeath]:
    out: list[RankDeath] = _memory_kills(text)
    killed = _SLURM_MEMORY.search(text) if "memory limit" in text else None
    for match in _SLURM_CANCEL.finditer(text):
        why = match.group("why") or ""
        entity = f"{match.group('what')} {match.group('id')}"
        host = match.group("host") or match.group("old_host")
        host = host if host and host.strip(".") else None          # ("ON ..." in a redacted paste)
        said = " ".join(match.group(0).split())
        before = _SRUN_TASK_FAILED.search(text, 0, match.start())
        failed_before = before is not None
        # (srun's wait timer: its --wait time ran out after the first tasks ended, and srun ended the step)
        after_what = "after srun's wait timer ran out" if before and "First task" in before.group(0) else \
            "after a task failed"
        if killed is not None and killed.start() < match.start() and (not why or why.startswith("SIGNAL")):
            note = f"Slurm cancelled {entity}{f' on {host}' if host else ''} after killing it for memory: {said}"
            out.append(RankDeath(None, "SIGKILL", None, host, None, note[:400], offset=match.start(),
                                 consequence=True))
            continue
        if why == "TASK FAILURE" or ((not why or why.startswith("SIGNAL")) and failed_before):
            # srun's --kill-on-bad-exit (or its end of the step) after a task failed: a consequence, never the cause
            note = f"Slurm cancelled {entity}{f' on {host}' if host else ''} {after_what}: {said}"
            out.append(RankDeath(None, "SIGTERM", None, host, None, note[:400], offset=match.start(),
                                 consequence=True))
            # (srun's own record of the failed task, anywhere, names it: then it is read, not inferred)
            if why == "TASK FAILURE" and _SRUN_TASK_FAILED.search(text) is None \
                    and (spared := _spared_task(text, match.end())) is not None:
                task, on = spared
                note = (f"task {task}{f' on {on}' if on else ''} is the one srun did not terminate after Slurm "
                        f"cancelled {entity} for a task's failure (every other task of the step it lists Terminated; "
                        f"how task {task} failed is not in this input): {said}")
                out.append(RankDeath(task, None, None, on, None, note[:400], offset=match.start(), first=True))
            continue
        if not why or why.startswith("SIGNAL"):
            note = (f"Slurm cancelled {entity}{f' on {host}' if host else ''} at {match.group('when')} from outside "
                    f"the job (scancel, or a signal sent to the step; no task had failed before it in this input): "
                    f"{said}")
            out.append(RankDeath(None, "SIGTERM", None, host, None, note[:400], offset=match.start(), outside=True))
            continue
        note = (f"Slurm stopped {entity}{f' on {host}' if host else ''} at {match.group('when')}: {_WHY[why]}; the "
                f"ranks' SIGTERM after this is its consequence ({said})")
        out.append(RankDeath(None, "SIGTERM", None, host, None, note[:400], offset=match.start(), outside=True))
    for match in _STEPD_TERMINATED.finditer(text):
        entity, host, said = match.group("entity"), match.group("host"), " ".join(match.group(0).split())
        stuck = ("its processes did not end with the signals sent to end it (stuck in the kernel; Slurm drains the "
                 "node)" if match.group("why").startswith("ENDING")
                 else "its processes had not started")
        ended = [d for d in out if d.offset < match.start() and (d.outside or d.consequence)]
        # (after a cancellation, a task's failure, a process's own failure or a collective's timeout in the input,
        # the step was being torn down for it: the consequence)
        if ended or _SRUN_TASK_FAILED.search(text, 0, match.start()) is not None \
                or _OWN_FAILURE.search(text, 0, match.start()) is not None \
                or _TIMED_OUT.search(text, 0, match.start()) is not None:
            note = f"Slurm ended {entity} on {host}, after what ended it above: {stuck} ({said})"
            out.append(RankDeath(None, "SIGKILL", None, host, None, note[:400], offset=match.start(),
                                 consequence=True))
            continue
        note = (f"Slurm ended {entity} on {host} at {match.group('when')} from outside the job: {stuck}; this input "
                f"does not say what ended the step: {said}")
        out.append(RankDeath(None, "SIGKILL", None, host, None, note[:400], offset=match.start(), outside=True))
    for match in _SRUN_NODE_FAILURE.finditer(text):
        host, tool = match.group("host"), match.group(0).split(":", 1)[0]
        # (salloc's node is one of the allocation's: Slurm ends the job for it, unless salloc ran with --no-kill)
        under, what_ended = (("the job step", "which ended the step") if tool == "srun" else
                             ("the job's allocation", "which ends the job unless salloc ran with --no-kill"))
        out.append(RankDeath(None, "SIGTERM", None, host, None,
                             f"Slurm: node {host} failed under {under} ({tool}: Node failure), {what_ended}; the "
                             f"ranks' SIGTERM after this is its consequence ({_line(text, match)})"[:400],
                             offset=match.start(), outside=True))
    for match in _SRUN_NO_STEP.finditer(text):
        out.append(RankDeath(None, None, None, None, None,
                             f"srun could not start the job step (no rank ran): {match.group('why').strip()} "
                             f"({_line(text, match)})"[:400], offset=match.start(), raised=True))
        break
    out.extend(_sacct(text))
    out.extend(_seff(text))
    for match in _SLURM_FAILED.finditer(text):
        out.append(RankDeath(None, None, 1, match.group("host"), None, _line(text, match), offset=match.start(),
                             consequence=True, code_unsaid=True))
    if not out and ": Terminated" in text and _SRUN_TASK_FAILED.search(text) is None \
            and _SRUN_TERMINATED.search(text) is not None and _OWN_FAILURE.search(text) is None:
        # srun's list of tasks it terminated with no slurmstepd line, no failed task and no node failure beside it:
        # srun itself was told to end the step (scancel of the step, a signal to srun, Ctrl-C) and sent its tasks
        # SIGTERM: a stop from outside, never a failure of the tasks it lists. Not where a process failed in its own
        # words anywhere in the input (before or after the list in file order: that failure is the story), nor after
        # the run's own word that it ended well (a step ended after its work was done is no stop of the job)
        for match in _SRUN_TERMINATED.finditer(text):
            if went_on_after(text, match.end()):
                continue
            if any(says_it_ended(line) for line in text[max(0, match.start() - 20_000):match.start()].split("\n")):
                break
            host = match.group("host")
            note = (f"srun terminated task{'s' if ',' in match.group('tasks') or '-' in match.group('tasks') else ''} "
                    f"{match.group('tasks')}{f' on {host}' if host else ''}: the step was ended from outside (scancel, "
                    f"or a signal sent to srun; no task had failed before it in this input): {_line(text, match)}")
            out.append(RankDeath(None, "SIGTERM", None, host, None, note[:400], offset=match.start(), outside=True))
            break
    return out


def _sacct(text: str) -> list[RankDeath]:
    """The table's last job (the job its last row names: the one asked about; rows of older jobs above it are other
    runs): nothing while a row of it is still RUNNING/PENDING; else a step's own failure (FAILED with a code, or a
    signal other than the SIGTERM/SIGKILL a cancellation sends; OUT_OF_MEMORY) before a cancellation, which is then
    its consequence; else its first row that did not complete: a time limit, preemption, node failure or
    cancellation a stop from outside, OUT_OF_MEMORY the step's kill for memory, FAILED its exit code or signal."""
    head = _SACCT_HEAD.search(text) if "JobID" in text else None
    if head is None:
        return []
    rows = list(_SACCT_ANY_ROW.finditer(text, head.end()))
    if not rows:
        return []
    job = rows[-1].group("job")
    if any(row.group("job") == job and _SACCT_GOING.search(row.group(0)) for row in rows):
        return []                   # (the job is still running: no end of it in this input)
    ends = [m for m in _SACCT_ROW.finditer(text, head.end()) if m.group("id").split(".", 1)[0] == job
            and m.group("state") != "COMPLETED"]
    own = [m for m in ends if m.group("state").startswith("OUT_OF_ME") or (
        m.group("state") == "FAILED" and (m.group("code") is None or int(m.group("code")) or
                                          int(m.group("sig") or 0) not in (0, 9, 15)))]
    for match in ([own[0]] if own and ends[0].group("state").startswith("CANCELLED") else ends[:1]):
        state = match.group("state")
        said = f"sacct: {match.group('id')} {state}: {_line(text, match)}"
        if state in _SACCT_OUTSIDE or state.startswith("CANCELLED"):
            why = _SACCT_OUTSIDE.get(state, "it was cancelled (scancel, an admin or srun ending it)")
            return [RankDeath(None, "SIGTERM", None, None, None, f"Slurm ended job {match.group('id')}: {why} "
                              f"({said})"[:400], offset=match.start(), outside=True)]
        if state.startswith("OUT_OF_ME"):
            return [RankDeath(None, "SIGKILL", None, None, None, f"out of memory: Slurm killed {match.group('id')} "
                              f"at its memory limit ({said})"[:400], offset=match.start())]
        code, sig = int(match.group("code") or 1), int(match.group("sig") or 0)
        signal = signal_name(str(sig)) if sig else None
        return [RankDeath(None, signal, None if signal else code, None, None, said[:400], offset=match.start(),
                          code_unsaid=match.group("code") is None)]
    return []


def _seff(text: str) -> list[RankDeath]:
    """seff's State of the job it summarises: a time limit, preemption, node failure or cancellation a stop from
    outside, OUT_OF_MEMORY the job's kill for memory, FAILED its exit code (FAILED with exit code 0, a signal's end
    whose number seff does not print, is not read)."""
    for match in _SEFF.finditer(text):
        state, code = match.group("state"), int(match.group("code"))
        said = f"seff: job {match.group('job')} State: {state} (exit code {code})"
        if state in _SACCT_OUTSIDE or state == "CANCELLED":
            why = _SACCT_OUTSIDE.get(state, "it was cancelled (scancel, an admin or srun ending it)")
            return [RankDeath(None, "SIGTERM", None, None, None, f"Slurm ended job {match.group('job')}: {why} "
                              f"({said})"[:400], offset=match.start(), outside=True)]
        if state == "OUT_OF_MEMORY":
            return [RankDeath(None, "SIGKILL", None, None, None, f"out of memory: Slurm killed job "
                              f"{match.group('job')} at its memory limit ({said})"[:400], offset=match.start())]
        if code:
            return [RankDeath(None, None, code, None, None, said[:400], offset=match.start())]
    return []


def _flux(text: str) -> list[RankDeath]:
    """Flux's job shell's end of the job after its first task ended (that task rank on that host, with flux-job's exit
    code or signal where it follows: the tasks killed after it are collateral), or flux-job's end of the job alone (a
    task's exit code or signal, of no rank); a lost node's shell is that host's loss."""
    ends = [m for m in _FLUX_JOB.finditer(text) if (m.group("code") is None or int(m.group("code")))
            and not went_on_after(text, m.end())]
    end = ends[0] if ends else None
    sig = signal_name(None, end.group("words")) if end is not None and end.group("words") else None
    code = int(end.group("code")) if end is not None and end.group("code") else None
    for match in _FLUX_DOOM.finditer(text):
        if went_on_after(text, match.end()):
            continue
        rank, host = int(match.group("rank")), match.group("host")
        if match.group("who") == "shell":
            # (as srun's "Node failure on": the node's loss ended the job, the tasks' end after it its consequence)
            return [RankDeath(None, "SIGTERM", None, host, None, f"Flux lost the job shell on host {host} (shell "
                              f"rank {rank}, no task's rank): that node failed, or its shell was killed, which ended "
                              f"the job after exit-timeout={match.group('t')} ({_line(text, match)})"[:400],
                              offset=match.start(), outside=True)]
        how = f" ({_line(text, end)})" if end is not None and end.start() > match.start() else ""
        # (flux-job's status is the job's: the worst of its tasks' ends. A kill, SIGKILL or SIGTERM, is the shell's
        # end of the tasks still running after exit-timeout, not the first task's; a code or a fault is that task's.
        # Older flux-core prints a signal's end as its code, 128 + the signal: 137, 143)
        torn = sig in ("SIGKILL", "SIGTERM") or code in (137, 143)
        if how and torn and end is not None:
            told = end.group("words") or f"exit code {code}"
            said = (f"Flux: task {rank} on host {host} ended first (how, flux-job's status does not tell: its "
                    f"'{told}' is the job shell's end of the other tasks, still running after "
                    f"exit-timeout={match.group('t')}) ({_line(text, match)})")
        else:
            said = (f"Flux: task {rank} on host {host} ended first; the job shell ended the other tasks after "
                    f"exit-timeout={match.group('t')} ({_line(text, match)}){how}")
        told = bool(how) and not torn
        return [RankDeath(rank, sig if told else None, code if told else None, host, None, said[:400], first=True,
                          offset=match.start())]
    if end is not None and (sig or code):
        said = f"signal {sig}" if sig else f"exit code {code}"
        return [RankDeath(None, sig, code, None, None, f"Flux: the job's task(s) ended with {said} "
                          f"({_line(text, end)})", offset=end.start())]
    return []


def _nccl_ras(text: str) -> list[RankDeath]:
    """NCCL RAS's dead processes (with the rank each ran, where a communicator's block lists it) and the errors
    its communicators' ranks reported."""
    out: list[RankDeath] = []
    ranks = {(m.group("host"), int(m.group("pid"))): int(m.group("rank")) for m in _RAS_RANK.finditer(text)}
    for head in _RAS_DEAD_HEAD.finditer(text):
        end = text.find("\n\n", head.end())
        for match in _RAS_DEAD.finditer(text, head.end(), len(text) if end < 0 else end):
            host, pid = match.group("host"), int(match.group("pid"))
            out.append(RankDeath(ranks.get((host, pid)), None, None, host, pid,
                                 f"NCCL RAS: process {pid} on node {host} (GPU {match.group('gpu')}) is dead, "
                                 f"unreachable via the RAS network (it crashed or was killed, or its node or network "
                                 f"failed): {_line(text, match)}"[:400], offset=match.start()))
    for match in _RAS_REPORTED.finditer(text):
        # (several ranks reported the same error: NCCL lists them when they are few, else none)
        listed: list[re.Match[str] | None] = list(_RAS_RANK.finditer(match.group("listed")))
        for rank in listed or [None]:
            out.append(RankDeath(int(rank.group("rank")) if rank else None, None, None,
                                 rank.group("host") if rank else None, int(rank.group("pid")) if rank else None,
                                 f"NCCL error: {match.group('error')} (NCCL RAS: {_line(text, match)})"[:400],
                                 offset=match.start(), raised=True))
    for match in _RAS_RANK.finditer(text):
        if match.group("error"):
            out.append(RankDeath(int(match.group("rank")), None, None, match.group("host"), int(match.group("pid")),
                                 f"NCCL error: {match.group('error')} (NCCL RAS: the rank's communicator holds it; "
                                 f"{_line(text, match)})"[:400], offset=match.start(), raised=True))
    return out


def _launchers(text: str) -> list[RankDeath]:
    """Kubeflow's training operator, horovodrun and torchx."""
    out: list[RankDeath] = []
    told: set[str] = set()
    for match in _OPERATOR_POD.finditer(text):
        status, pod = int(match.group("code")), match.group("pod")
        if status == 0 or pod in told:
            continue         # (a replica that ended well; the event repeats: "(x3 over 49s)")
        told.add(pod)
        sig = signal_name(str(status - 128)) if 128 < status < 160 else None
        said = f"pod {pod} exited with code {status}" + (f" (killed by {sig})" if sig else "")
        out.append(RankDeath(None, sig, None if sig else status, pod, None, f"{said}: {_line(text, match)}"[:300],
                             offset=match.start()))
    for match in _OPERATOR.finditer(text):
        if told:
            break            # (the replica's own end, above, says which pod and how)
        out.append(RankDeath(None, None, 1, None, None, _line(text, match), offset=match.start(), code_unsaid=True))
        break            # (it says it again at each reconcile)
    for match in _HOROVOD.finditer(text):
        out.append(RankDeath(int(match.group("rank")), None, None, None, None, _line(text, match), first=True,
                             offset=match.start()))
    for match in _TORCHX.finditer(text):
        code = int(match.group("code")) if match.group("code") else None
        # (-N: a local process's signal, Python's convention; 128+N: a container's, on Kubernetes or Docker)
        sig = signal_name(str(-code)) if code is not None and code < 0 else \
            signal_name(str(code - 128)) if code is not None and 128 < code < 160 else None
        said = f"torchx: {match.group('role')}[{match.group('replica')}] FAILED" + (
            f" (exitcode: {code})" if code is not None else "")
        out.append(RankDeath(None, sig, None if sig else (code or 1), match.group("host"), None, said,
                             offset=match.start(), code_unsaid=code is None))
    return out


def _trainers(text: str) -> list[RankDeath]:
    """Lightning's and Ray Train's records of the rank that raised."""
    out: list[RankDeath] = []
    for match in _LIGHTNING_DEADLOCK.finditer(text):
        # (the rank's own traceback follows, in the exception's message: its last error line is what it raised)
        errors = list(_ERROR_LINE.finditer(text, match.end(), min(len(text), match.end() + 6000)))
        what = errors[0].group("what").strip() if errors else "an exception"
        out.append(RankDeath(int(match.group("rank")), None, None, None, None,
                             f"{what} (Lightning: {_line(text, match)})"[:300], offset=match.start(), raised=True))
    for match in _LIGHTNING_CHILD.finditer(text):
        status = int(match.group("code"))
        sig = signal_name(str(-status)) if status < 0 else None
        out.append(RankDeath(int(match.group("rank")), sig, None if sig else status, None, int(match.group("pid")),
                             _line(text, match), first=sig is not None, offset=match.start(), tears_down=True))
        break            # (it then terminates every other process: their ends are its consequence)
    for match in _LIGHTNING_SIGTERM.finditer(text):
        # (at its place in the text: a rank that failed before it stays the verdict, the SIGTERM its teardown)
        out.append(RankDeath(None, "SIGTERM", None, None, None,
                             f"a process received SIGTERM (Lightning's handler: {_line(text, match)}); who sent it, "
                             "this input does not say"[:300], offset=match.start(), outside=True))
        break
    head = text.find(_RAY_TRAIN_HEAD)
    groups = list(_RAY_TRAIN_RANKS.finditer(text, head)) if head >= 0 else []
    for i, match in enumerate(groups):
        end = groups[i + 1].start() if i + 1 < len(groups) else min(len(text), match.end() + 20000)
        errors = list(_ERROR_LINE.finditer(text, match.end(), end))
        what = errors[-1].group("what").strip() if errors else "an error (its text is not in this input)"
        for number in dict.fromkeys(match.group("ranks").split(", ")):
            out.append(RankDeath(int(number), None, None, None, None, f"{what} (Ray Train's worker errors)"[:300],
                                 offset=match.start(), raised=True))
    return out


def _submitit(text: str) -> list[RankDeath]:
    out: list[RankDeath] = []
    for match in _SUBMITIT_NO_OUTPUT.finditer(text):
        state, task = match.group("state"), int(match.group("task"))
        said = " ".join(match.group(0).split())
        if state in _SUBMITIT_OUTSIDE:      # Slurm ended the job from outside: no rank failed
            note = f"submitit: Slurm stopped job {match.group('job')}: {_SUBMITIT_OUTSIDE[state]} ({said})"
            out.append(RankDeath(None, "SIGTERM", None, None, None, note[:400], offset=match.start(), outside=True))
        elif state == "OUT_OF_MEMORY":
            out.append(RankDeath(task, "SIGKILL", None, None, None, f"out of memory (Slurm's OOM kill): {said}"[:400],
                                 offset=match.start()))
        else:
            out.append(RankDeath(task, None, 1, None, None, said[:400], offset=match.start(), code_unsaid=True))
    for match in _SUBMITIT_FAILED.finditer(text):
        out.append(RankDeath(int(match.group("task")), None, 1, None, None, _line(text, match), offset=match.start(),
                             code_unsaid=True))
    return out


# MPICH's (Intel MPI's) record of a rank's fatal error ("Abort(806995983) on node 0 (rank 0 in comm 0): Fatal error
# in PMPI_Allreduce: Other MPI error, error stack:") whose stack, down to the next record or a blank line, says the
# peer it lost ("MPIDI_CH3I_Progress(1051)........: Communication error with rank 2")
_MPICH_RECORD = lazy_regex(MPICH_ABORT_HEAD + r" on node (?P<rank>\d+)")
# (under a launcher's rank head on each line, as Hydra's -prepend-rank writes it, "[0] MPIDI_CH3I_Progress(1051)...",
# or srun's "0: ", Open MPI's "[1,2]<stderr>:")
_LOST_PEER = lazy_regex(r"^(?:\[\d+(?:,\d+)*\](?:<\w+>)?:? ?|\d+: )?\w+\(\d+\)\.*: ?Communication error with rank "
                        r"(?P<peer>\d+)", re.MULTILINE)


def _lost_peers(text: str) -> dict[int, int]:
    """rank -> the peer rank its MPICH record says it lost (the first record of each rank); nothing where a rank's own
    record names no lost peer (its own error, "Fatal error in PMPI_Send: Invalid rank": the first failure, the peer's
    kill then the launcher's cleanup after it)."""
    records = list(_MPICH_RECORD.finditer(text))
    out: dict[int, int] = {}
    for index, record in enumerate(records):
        stop = records[index + 1].start() if index + 1 < len(records) else min(len(text), record.end() + 3000)
        blank = text.find("\n\n", record.end(), stop)
        found = _LOST_PEER.search(text, record.end(), stop if blank < 0 else blank)
        if found is not None and int(found.group("peer")) != int(record.group("rank")):
            out.setdefault(int(record.group("rank")), int(found.group("peer")))
    if {int(record.group("rank")) for record in records} - set(out):
        return {}
    return out


def _mpi(text: str) -> list[RankDeath]:
    out: list[RankDeath] = []
    for match in _PRTE_FIRST.finditer(text):
        code = int(match.group("code")) if match.group("code") else None
        out.append(RankDeath(int(match.group("rank")), None, code, None, None, " ".join(match.group(0).split()),
                             first=True, offset=match.start()))
    for match in _PRTE_MEMORY.finditer(text):
        out.append(RankDeath(int(match.group("rank")), "SIGKILL", None, match.group("host"), None,
                             "out of memory: " + " ".join(match.group(0).split()), offset=match.start()))
    killed = list(_HYDRA_KILLED.finditer(text))
    # the processes that ended by themselves: a box's own exit code (not a kill's 128 + 9/15/2), a fault signal's box,
    # MPICH's abort of a rank (by rank, or by pid where the box names no rank)
    own: set[tuple[str, int]] = set()
    if killed:
        for m in _HYDRA_EXITED.finditer(text):
            if int(m.group("code")) not in (0, 9, 15, 2, 137, 143, 130):
                own.add(("rank", int(m.group("rank"))) if m.group("rank") else ("pid", int(m.group("pid"))))
        for m in killed:
            if signal_name(m.group("num")) not in _HYDRA_KILLS:
                own.add(("rank", int(m.group("rank"))) if m.group("rank") else ("pid", int(m.group("pid"))))
        own.update(("rank", int(m.group("a") or m.group("b"))) for m in _MPICH_ABORTED.finditer(text))
        # (a rank whose MPICH record says it lost a peer the boxes show killed, "Communication error with rank 2",
        # ended because that peer died: the peer's kill is the first, not the launcher's cleanup)
        dead = {int(m.group("rank")) for m in killed if m.group("rank")}
        lost = _lost_peers(text)
        named = {peer for peer in lost.values() if peer in dead}
        own -= {("rank", rank) for rank, peer in lost.items() if peer in dead}
    else:
        named = set()
    for boxes, match in enumerate(killed):
        rank = int(match.group("rank")) if match.group("rank") else None
        sig = signal_name(match.group("num"))
        me = ("rank", rank) if rank is not None else ("pid", int(match.group("pid")))
        if rank in named:
            reporters = sorted(r for r, p in lost.items() if p == rank)
            said = f"the MPI record of rank {reporters[0]} says" if len(reporters) == 1 else \
                f"the MPI records of ranks {','.join(map(str, reporters))} say"
            out.append(RankDeath(rank, sig, None, match.group("host"), int(match.group("pid")),
                                 " ".join(match.group(0).replace("=", " ").split())
                                 + f" ({said} it lost this rank, its peer)",
                                 first=True, offset=match.start()))
            continue
        # (Hydra prints a box for each process it saw end, in process order, not in time: one SIGTERMed or SIGINTed
        # after another's box, or one killed (SIGKILL, SIGTERM, SIGINT) where another process ended by itself, is its
        # cleanup of the job, the consequence, never a root of its own)
        cleanup = sig in _HYDRA_KILLS and (bool(own - {me}) or (boxes > 0 and sig != "SIGKILL") or bool(named))
        out.append(RankDeath(rank, sig, None, match.group("host"),
                             int(match.group("pid")), " ".join(match.group(0).replace("=", " ").split()),
                             first=not cleanup, offset=match.start(), consequence=cleanup))
    for match in _MPI_DAEMON_LOST.finditer(text):
        host = match.group("host")
        out.append(RankDeath(None, None, None, host, None,
                             f"Open MPI lost contact with its daemon on node {host}: that node failed, or the network "
                             f"to it did ({' '.join(match.group(0).split())})"[:400], offset=match.start()))
    for match in _MPI_DAEMON_FAILED.finditer(text):
        out.append(RankDeath(None, None, None, None, None,
                             f"an Open MPI daemon failed at start, before it reached mpirun (a node it could not "
                             f"start on or reach back from; which node, this line does not say): {_line(text, match)}"
                             [:400], offset=match.start()))
        break
    for match in _MPI_DAEMONS_UNSTARTED.finditer(text):
        if went_on_after(text, match.end()):
            continue
        above = text[max(0, match.start() - 1000):match.start()].splitlines()[-2:]
        # (the line above the box's rule, where one is: not the user's command line, typed or traced by `set -x`)
        cause = " ".join(above[0].split()) if len(above) == 2 and _BOX_RULE.fullmatch(above[1].strip()) else None
        cause = None if not cause or cause.startswith(("$", "#", ">")) or SHELL_TRACE.match(cause) else cause
        head = text.rfind("\n", 0, match.end()) + 1
        said = " ".join(text[head:match.end()].split())
        note = ("mpirun could not start its daemons on one or more nodes (no rank ran)"
                + (f": {cause}" if cause else "") + f" ({said}: the launch agent, ssh or the resource manager, could "
                "not run orted/prted there: PATH, LD_LIBRARY_PATH, ssh keys, /tmp)")
        out.append(RankDeath(None, None, None, None, None, note[:400], offset=match.start(), raised=True))
        break
    if not out and "BAD TERMINATION" not in text:
        for match in _HYDRA_BADLY.finditer(text):
            out.append(RankDeath(None, None, 1, None, None, _line(text, match), offset=match.start(),
                                 code_unsaid=True))
            break        # (each proxy says it again)
    return out


def _succeeded_pods(text: str) -> frozenset[str]:
    """The pods ``text`` shows ended well (Completed in kubectl get pods, Succeeded in kubectl describe pod): a failure
    of theirs before, a container's restart after an Error, an OOMKill or the kubelet's back-off, is one the pod got
    over (the job succeeded on a retry), no failure of the job."""
    done = {m.group("pod") for m in _K8S_DONE_ROW.finditer(text)}
    done |= {m.group("pod") for m in _short_rows(text) if m.group("status") in ("Completed", "Succeeded")}
    done |= _job_pods_retried(text)
    names = list(_K8S_POD_NAME.finditer(text))
    for name, after in zip(names, [*names[1:], None]):
        if _K8S_SUCCEEDED.search(text, name.end(), after.start() if after is not None else len(text)) is not None:
            done.add(name.group("pod"))
    return frozenset(done)


def _job_pods_retried(text: str) -> set[str]:
    """A Job's pods that failed (Error, OOMKilled, CrashLoopBackOff) where kubectl lists a pod of the same Job created
    after it (a smaller AGE) Completed: the Job controller's next pod (backoffLimit) ended well, a failure the Job got
    over; or where kubectl lists the Job itself with all its completions (_K8S_JOB_COMPLETE_ROW: the Job succeeded).
    Not a pod of another Job (a CronJob's runs are Jobs of their own names), nor one as old as the failed pod."""
    complete = {m.group("job") for m in _K8S_JOB_COMPLETE_ROW.finditer(text) if int(m.group("done"))} \
        if "/" in text else set()
    if "Completed" not in text and "Succeeded" not in text and not complete:
        return set()
    rows = [(job.group("job"), m.group("pod"), m.group("status"), _age_seconds(m.group("age")))
            for m in _K8S_AGED_ROW.finditer(text) if (job := _K8S_JOB_POD.fullmatch(m.group("pod"))) is not None]
    done = [(job, age) for job, _pod, status, age in rows if status in ("Completed", "Succeeded")]
    return {pod for job, pod, status, age in rows if status in _K8S_SHORT_FAILED
            and (job in complete or any(other == job and later < age for other, later in done))}


def _age_seconds(age: str) -> int:
    """kubectl's AGE column ("14m", "3h12m", "2d3h", "45s") in seconds."""
    return sum(int(n) * _K8S_AGE_UNIT[unit] for n, unit in re.findall(r"(\d+)([ydhms])", age))


def pods_ended_well(text: str) -> bool:
    """Every pod ``text`` shows (kubectl get pods' rows, kubectl describe pod's) ended well, and it shows one, or the
    job itself did (job_ended_well): the job's failure words beside them (the kubelet's back-off event, a container's
    last Error) are of a restart the job got over, a note, never its end."""
    if "Completed" not in text and "Succeeded" not in text and "Complete" not in text:
        return False
    if job_ended_well(text):
        return True
    shown = ({m.group("pod") for m in _K8S_ANY_ROW.finditer(text)}
             | {m.group("pod") for m in _K8S_POD_NAME.finditer(text)}
             | {m.group("pod") for m in _short_rows(text)})
    return bool(shown) and shown <= _succeeded_pods(text)


def _short_rows(text: str) -> list[re.Match[str]]:
    """kubectl get pods' rows quoted without their RESTARTS and AGE columns (_K8S_SHORT_ROW), where one of them is a
    pod's failure (OOMKilled, Error, CrashLoopBackOff, an init container's): the listing's other rows, a pod's later
    Completed among them, are rows of the same listing; else none (a line of three words is no listing of its own)."""
    if "/" not in text:
        return []
    rows = list(_K8S_SHORT_ROW.finditer(text))
    return rows if any(m.group("status") in _K8S_SHORT_FAILED for m in rows) else []


# the words of the notes a Kubernetes listing that shows the job ended well gives (triage.load.logs.text makes them,
# the verdict's all-clear tells them)
GOT_OVER = "a failure the job got over (Kubernetes shows it ended well: every pod shown Completed, or the job itself)"
ENDED_WELL = "Kubernetes says the job ended well"
# the note of an HTCondor event the job got past (condor_event_passed)
CONDOR_PASSED = "an HTCondor event the job got past (later events of its log follow it"
CONDOR_NO_END = "; the log ends before the job does: how it ended, it does not say"


def job_ended_well(text: str) -> bool:
    """Kubernetes says the job itself ended well (its operator's or its Job controller's word, _K8S_JOB_DONE), and no
    word of its failure beside it: a pod's failure before, a restart or a retry in a new pod, is one the job got
    over."""
    if "ucce" not in text and "omplete" not in text:
        return False
    return _K8S_JOB_DONE.search(text) is not None and _K8S_JOB_FAILED.search(text) is None


def job_success_line(text: str) -> str | None:
    """The line where Kubernetes says the job ended well (job_ended_well), or None."""
    if not job_ended_well(text):
        return None
    match = _K8S_JOB_DONE.search(text)
    return _line(text, match) if match is not None else None


def restarts_got_over(text: str) -> list[str]:
    """The kubelet's back-off lines ("Back-off restarting failed container ...") and kubectl get pods' rows of a pod in
    Error, CrashLoopBackOff or OOMKilled, of pods ``text`` shows ended well, where every pod it shows did or the job
    itself did (pods_ended_well): a restart or a retry the job got over, a note of its all-clear."""
    if not pods_ended_well(text):
        return []
    done = _succeeded_pods(text)
    over = job_ended_well(text)
    found = [m for pattern in (_K8S_BACKOFF, _K8S_ERROR_ROW, _K8S_ROW, _K8S_OPERATOR_ERROR)
             for m in pattern.finditer(text) if over or m.group("pod") in done]
    return [_line(text, m) for m in sorted(found, key=lambda m: m.start())]


def _probe_kill(text: str) -> RankDeath | None:
    """The kubelet's kill of a container whose liveness or startup probe failed (_K8S_PROBE_KILL), with the probe's
    failure it gives (its last "Liveness probe failed: ..." before the kill): a stop from outside, of no rank, as an
    eviction is. Not where the container's own OOMKilled is told (the kernel's kill for its memory is what ended it),
    nor where the work went on after it (an old restart in a listing)."""
    match = _K8S_PROBE_KILL.search(text)
    if match is None or "OOMKilled" in text or went_on_after(text, match.end()):
        return None
    pod = None
    for name in _K8S_POD_NAME.finditer(text, 0, match.start()):
        pod = name.group("pod")
    failed = [m.group("why") for m in _K8S_PROBE_FAILED.finditer(text, 0, match.start())]
    why = f": {failed[-1][:200]}" if failed else ""
    note = (f"the kubelet killed container {match.group('container')}{f' of pod {pod}' if pod else ''}: its "
            f"{match.group('probe')} probe failed{why} ({_line(text, match)})")
    return RankDeath(None, "SIGTERM", None, pod, None, note[:400], offset=match.start(), outside=True)


def _kubernetes(text: str) -> list[RankDeath]:
    if job_ended_well(text):
        return []           # (Kubernetes says the job ended well: what failed before, it got over)
    if "probe, will be restarted" in text and (probe := _probe_kill(text)) is not None:
        return [probe]      # (the container's exit code 137 or 143 beside it is that kill's)
    out: list[RankDeath] = []
    done = _succeeded_pods(text) if "Completed" in text or "Succeeded" in text else frozenset()
    for match in _K8S_REASON.finditer(text):
        pod = None
        for name in _K8S_POD_NAME.finditer(text, 0, match.start()):
            pod = name.group("pod")
        if pod in done:
            continue
        code_match = _K8S_EXIT.search(match.group("rest"))
        code = int(code_match.group("code")) if code_match else None
        oom = match.group("why") == "OOMKilled"
        if not oom and not code:
            continue
        sig = "SIGKILL" if oom or code == 137 else signal_name(str(code - 128)) if code and 128 < code < 160 else None
        how = "OOMKilled (the container hit its memory limit: the kernel sent SIGKILL)" if oom else "Error"
        said = f"pod {pod or '?'}: {how}" + (f", exit code {code}" if code is not None else "")
        # (OOMKilled: the container's own memory use over its limit, a crash by SIGKILL as Kubernetes' own fields,
        # Vertex AI's OOMKilled replica and YARN's and Slurm's memory kills are read; not a stop from outside)
        out.append(RankDeath(None, sig, None if sig else code, pod, None, said, offset=match.start()))
    for match in _K8S_OOM_FIELD.finditer(text) if not out else ():
        if went_on_after(text, match.end(), lines=400):
            continue                # (an old restart of a pod in a listing, the job went on)
        near = text[max(0, match.start() - 300):match.end() + 300]
        exit_field = _K8S_EXIT_FIELD.search(near)
        said = ("a container OOMKilled (Kubernetes' own words: it hit its memory limit and the kernel sent SIGKILL"
                + (f"; exit code {exit_field.group('code')}" if exit_field else "") + f"): {_line(text, match)}")
        # (the container's own memory use over its limit: a crash by SIGKILL, as Vertex AI's OOMKilled replica, YARN's
        # and Slurm's memory kills are read)
        out.append(RankDeath(None, "SIGKILL", None, None, None, said[:400], offset=match.start()))
        break                       # (one container's state; a listing repeats it)
    for match in _K8S_ROW.finditer(text):
        if match.group("pod") in done:
            continue
        out.append(RankDeath(None, "SIGKILL", None, match.group("pod"), None,
                             f"pod {match.group('pod')}: OOMKilled (the container hit its memory limit: the kernel "
                             f"sent SIGKILL): {_line(text, match)}"[:300], offset=match.start()))
    for match in _K8S_EVICTED.finditer(text):
        pod = None
        for name in _K8S_POD_NAME.finditer(text, 0, match.start()):
            pod = name.group("pod")
        why = f": {match.group('msg').strip()[:200]}" if match.group("msg") else ""
        out.append(RankDeath(None, "SIGTERM", None, pod, None, f"the kubelet Evicted pod {pod or '?'}{why}",
                             offset=match.start(), outside=True))
    if not out:
        for match in _K8S_LOW.finditer(text):
            # the kubelet evicted the pod for the node's memory (or disk): a stop from outside the job, as an evicted
            # pod's "Reason: Evicted" is; not where the job went on after it (another pod's event in a listing)
            if went_on_after(text, match.end()):
                continue
            note = f"the kubelet evicted the pod (the node was low on {match.group('resource')}): {_line(text, match)}"
            out.append(RankDeath(None, "SIGTERM", None, None, None, note[:300], offset=match.start(), outside=True))
            break
    if not out:
        for match in _K8S_ERROR_ROW.finditer(text):
            # a pod kubectl lists in Error or CrashLoopBackOff: its container ended with a non-zero exit (its code
            # is in `kubectl describe pod`, why in its own log); the first one listed, of no rank. Not where a later
            # row of the same pod says it ran again or ended well (`kubectl get pods -w`: Running, Completed), nor
            # where the job went on after the listing (another pod's old Error beside a training that runs)
            if match.group("pod") in done or went_on_after(text, match.end(), lines=400) or re.search(
                    _K8S_NS + rf"{re.escape(match.group('pod'))}\s+\d+/\d+\s+(?:Running|Completed|Succeeded)\b",
                    text[match.end():], re.MULTILINE) is not None:
                continue
            note = (f"pod {match.group('pod')}: its container ended in {match.group('why')} (a non-zero exit: "
                    f"`kubectl describe pod` gives its exit code, `kubectl logs --previous` its output): "
                    f"{_line(text, match)}")
            out.append(RankDeath(None, None, None, match.group("pod"), None, note[:300], offset=match.start(),
                                 raised=True))
            break
    for match in _K8S_EVICTED_ROW.finditer(text):
        out.append(RankDeath(None, "SIGTERM", None, match.group("pod"), None,
                             f"the kubelet Evicted pod {match.group('pod')}: {_line(text, match)}"[:300],
                             offset=match.start(), outside=True))
    if not out:
        for match in _K8S_BACKOFF.finditer(text):
            if match.group("pod") in done:
                continue     # (a restart it got over: the pod ended well after it)
            out.append(RankDeath(None, None, 1, match.group("pod"), None, _line(text, match), offset=match.start(),
                                 code_unsaid=True))
            break        # (the kubelet repeats it: the container failed; its own log says why)
    for match in _K8S_DEADLINE.finditer(text) if not out else ():
        if went_on_after(text, match.end()) or _other_jobs_event(text, match):
            continue                # (an old Job's event in a listing, the job went on; another Job's event)
        pod = match.group("pod")
        note = (f"{K8S_DEADLINE}{f' (pod {pod})' if pod else ''}: its time limit was reached: "
                f"{_line(text, match)}")
        out.append(RankDeath(None, "SIGTERM", None, pod, None, note[:400], offset=match.start(), outside=True))
        break                       # (the Job's one end; its events and conditions repeat it)
    if not out and (limit := _K8S_BACKOFF_LIMIT.search(text)) is not None:
        # the Job failed, retried to its backoff limit, and no pod's own state or output is in the input (`kubectl
        # describe job` alone): the failure, of no rank, and where its cause is
        pods = _K8S_PODS_FAILED.search(text)
        count = f" ({pods.group('n')} of its pods failed)" if pods is not None and pods.group("n") != "0" else ""
        note = f"{K8S_JOB_BACKOFF}{count}: {_line(text, limit)}"
        # (placed at the input's end: the Job fails after each of its pods did, whatever order a paste gives them;
        # a pod's own failure the input holds, `kubectl logs` pasted after `kubectl describe job`, is the first)
        out.append(RankDeath(None, None, None, None, None, note[:400], offset=max(limit.start(), len(text) - 1),
                             raised=True))
    return out


# kubectl's object column of an event ("3m  Warning  DeadlineExceeded  job/nightly-eval-28731  Job was active ...")
# and the pods in sight: kubectl get pods' rows, events' "pod/NAME" objects
_K8S_JOB_OBJECT = lazy_regex(r"\bjob(?:\.batch)?/(?P<job>[a-z0-9][\w.-]*)")
_K8S_POD_NAMES = lazy_regex(_K8S_NS + r"(?P<pod>[a-z0-9][\w.-]*)\s+\d+/\d+\s+[A-Z]\w+|\bpod/(?P<obj>[a-z0-9][\w.-]*)",
                            re.MULTILINE)


def _other_jobs_event(text: str, match: re.Match[str]) -> bool:
    """An event row of another Job than the one whose pods the input shows: its object "job/NAME" names a Job none of
    the pods in sight belongs to (a Job's pods are named "NAME-..."), as a listing of a namespace's events shows
    every Job's. Where no pod is in sight, or the line names no Job, the event is the input's own."""
    job = _K8S_JOB_OBJECT.search(_line(text, match))
    if job is None:
        return False
    pods = {m.group("pod") or m.group("obj") for m in _K8S_POD_NAMES.finditer(text)} - {"NAME"}
    return bool(pods) and not any(pod.startswith(job.group("job") + "-") for pod in pods)


def _julia_workers(text: str) -> list[RankDeath]:
    """Julia's Distributed master's word that a worker died ("Worker 3 terminated.", cluster.jl, when the worker's
    connection closes), where the input shows Julia and no worker's own fatal signal report comes before it: that
    worker's death, of no rank and no signal the input gives; the master's ProcessExitedException(3) after it is the
    consequence."""
    out: list[RankDeath] = []
    if _JULIA_SHOWN.search(text) is None:
        return out
    for match in _JULIA_TERMINATED.finditer(text):
        worker = match.group("id")
        if _JULIA_OWN.search(text, 0, match.start()) is not None:
            break                   # (a worker's own failure above it is the story: its runtime's signal report)
        note = (f"Julia's worker {worker} died: the master's Distributed said 'Worker {worker} terminated.' (its "
                "connection to the worker closed; an id Julia gives its workers, the master being 1, not a rank); how "
                f"it died is not in this input: the worker's own lines (the master's 'From worker {worker}:' lines, "
                "or its log) would tell")
        out.append(RankDeath(None, None, None, None, None, note, offset=match.start()))
        break                       # (the first worker to die; the others' ends follow from it)
    return out


def _realm_frozen(text: str) -> list[RankDeath]:
    """Realm's (Legion's) handler of a fatal signal, which names the signal, the process and its host, then freezes the
    process for a debugger (the job hangs there, REALM_FREEZE_ON_ERROR=1): that process's crash, on that host."""
    out: list[RankDeath] = []
    for match in _REALM_FROZEN.finditer(text):
        sig = signal_name(match.group("num"))
        host = match.group("host")
        note = (f"a process (pid {match.group('pid')}) on {host} was killed by {sig or 'signal ' + match.group('num')} "
                f"and frozen there by its handler (the job waits on it): {_line(text, match)}")
        out.append(RankDeath(None, sig, None, host, int(match.group("pid")), note[:400], offset=match.start()))
    return out


def _cloud_stops(text: str) -> list[RankDeath]:
    """A cloud's own word that it took the job's machine away (spot or preemptible VM reclaimed, node shut down): a
    stop from outside the job, the cause of the ranks' ends after it; not where the job went on after the line."""
    for match in _CLOUD_STOP.finditer(text):
        if went_on_after(text, match.end()):
            continue
        if match.group("gcp"):
            what = "GCP preempted the VM under the job (its metadata service announced the termination)"
        elif match.group("spot"):
            what = f"EC2 reclaimed the Spot instance under the job ({match.group('spot')})"
        elif match.group("papi"):
            what = ("Google's Pipelines API took the task's worker VM away (PAPI error code 14 or 10/14: a preemption "
                    "or the VM stopped under it, as Cromwell counts it)")
        elif match.group(0).startswith("Pod"):
            what = "the kubelet ended the pod because its node was shutting down"
        else:
            instance = f" {match.group('instance')}" if match.group("instance") else ""
            what = (f"AWS Batch: the job's host EC2 instance{instance} was terminated under it (a Spot reclaim or "
                    "scale-in)")
        note = f"{what}; no rank is at fault: {_line(text, match)}"
        return [RankDeath(None, "SIGTERM", None, None, None, note[:400], offset=match.start(), outside=True)]
    return []


# the note of a kill by Ray's memory monitor that the run went on past (ray_kills_gone_past)
RAY_RETRIED = "Ray's memory monitor killed a worker and the run went on (Ray retries its task: task_oom_retries)"


def ray_kills_gone_past(text: str) -> list[str]:
    """The lines of Ray's memory monitor's kills (the task's "Memory on the node ..." record, the raylet's "N Workers
    (tasks / actors) killed due to memory pressure (OOM)") after which the run went on: progress or its own word that
    it ended well (Ray retries a task its monitor killed): notes, not the failure (_ray reads the others)."""
    if "emory" not in text:
        return []
    # (the task's own record says more than the raylet's count of it: one note a kill)
    kills = [match for match in _RAY_MEMORY.finditer(text) if _ray_went_on(text, match.end())]
    told = {match.group("ip") for match in kills}
    kills += [match for match in _RAY_OOM.finditer(text) if match.group("n") != "0" and match.group("ip") not in told
              and _ray_went_on(text, match.end())]
    return [_line(text, match) for match in kills]


# how far after a kill by Ray's memory monitor a later failure, or the run's word that it ended well, is looked for
_RAY_AFTER_LINES = 2000
# a Ray worker's line, under the prefix Ray puts on what its workers print ("(RayTrainWorker pid=5121, ip=10.0.0.2) ",
# "(tokenize pid=9177) "): progress a worker prints after another worker's kill may be its peer's last steps before
# their collective waits for the killed one; the driver's own progress (no such prefix) is the run's
_RAY_WORKER_LINE = lazy_regex(r"^\(\w[\w.]*(?:,? pid=\d+)")


def _ray_went_on(text: str, end: int) -> bool:
    """Whether the run went on past a kill by Ray's memory monitor ending at ``end``: after it the run's own word that
    it ended well, or the driver's progress (went_on_after; a line with no Ray worker's prefix) and no line of failure
    (Ray's records of its kills aside). The other workers of a collective group (Ray Train's) step on for a while
    after one of them is killed, until their collective times out or the driver's ActorDiedError: their steps are no
    sign the run got over the kill, and a failure after the kill leaves the kill the failure, the rest its
    consequence."""
    if not went_on_after(text, end):
        return False
    start = text.find("\n", end) + 1
    if start == 0:
        return False
    stop = start
    for _ in range(_RAY_AFTER_LINES):
        stop = text.find("\n", stop) + 1
        if stop == 0:
            stop = len(text)
            break
    failed = driven = False
    for line in text[start:stop].split("\n"):
        if says_it_ended(line):
            return True
        if not failed and holds_failure_word(line) and "running low on memory" not in line \
                and "killed due to memory pressure" not in line and "Ray killed this worker" not in line:
            failed = True
        if not driven and _RAY_WORKER_LINE.match(line) is None and is_progress(line):
            driven = True
    return driven and not failed


def _ray_memory(text: str) -> list[RankDeath]:
    out: list[RankDeath] = []
    for match in _RAY_MEMORY.finditer(text):
        if _ray_went_on(text, match.end()):
            continue        # (a note: ray_kills_gone_past)
        said = " ".join(match.group(0).split())
        out.append(RankDeath(None, "SIGKILL", None, match.group("ip"), int(match.group("pid")),
                             f"out of memory: Ray's memory monitor killed the process (pid {match.group('pid')}) on "
                             f"{match.group('ip')}: {said}"[:400], offset=match.start()))
    return out


def _ray(text: str) -> list[RankDeath]:
    out = _ray_memory(text)
    told = {death.host for death in out}
    for match in _RAY_OOM.finditer(text):
        if match.group("n") == "0" or match.group("ip") in told:      # (the kill's own record says more)
            continue
        if _ray_went_on(text, match.end()):
            continue        # (the killed task retried, the run went on: a note, ray_kills_gone_past)
        out.append(RankDeath(None, "SIGKILL", None, match.group("ip"), None,
                             f"Ray killed a worker for memory pressure (OOM) on node {match.group('ip')}: "
                             f"{_line(text, match)}"[:300], offset=match.start()))
    return out
