"""A job stopped from outside (pure): a scheduler's time limit, preemption or node failure, scancel,
a pod's kill, as a scheduler or its tools say it (triage.parsing.frameworks reads their lines; the
loader hands each on as a failure of no rank whose ``failure_kind`` is ``stopped``).

- No rank failed, hung or timed out before the stop: the stop is the verdict (``stopped``), headed
  with who stopped the job, why, on which host and when, and what to do; the ranks' SIGTERMs, exits
  and peer errors after it are its consequence.
- Something went wrong before it (a hang that ran into the time limit is the common case): that
  first failure stays the verdict and the stop is said after it, as context.
"""

from __future__ import annotations

from dataclasses import replace

from triage.analysis.failures import Failure
from triage.analysis.verdict import headline
from triage.model import Finding, Verdict, VerdictKind
from triage.model.evidence import EventKind, Evidence, ExitInfo

STOPPED = "stopped"          # the failure_kind of a stop from outside (triage.parsing.crashlog's kind)

_NODE_FAILED = ("find why the node failed: its state and reason (`sinfo -R`, `scontrol show node HOST`: State=DOWN or "
                "DRAIN and its Reason), its slurmd log and `dmesg` on it (a reboot, a hardware, kernel or network "
                "fault); then requeue from the last checkpoint (`scontrol requeue JOBID`, or sbatch --requeue), "
                "excluding it (--exclude HOST) until it is fixed")

# What to do, by what the scheduler's own line says (the words triage.parsing.frameworks puts in it)
_TO_DO = (
    # the kubelet's kill of a container whose liveness or startup probe failed (triage.parsing.frameworks._probe_kill)
    ("the kubelet killed container", (
        "the process did not answer the kubelet's probe in time (`kubectl describe pod POD`: its Liveness line gives "
        "the probe, its timeout and failure threshold): a hang, a main thread busy past the probe's timeout (a long "
        "step, a data load, a checkpoint's save), or a probe too strict for it; the container's last output (`kubectl "
        "logs POD --previous`) says where it was. Raise the probe's timeoutSeconds or failureThreshold (a startupProbe "
        "for a slow start), or answer the probe from a thread of its own")),
    # a signal to triage launch itself, passed to the launcher (triage.load.forwarded's words)
    ("received SIGINT and passed", ("Ctrl-C in the terminal of `triage launch` (or a `kill -INT` of it) stopped the "
                                    "job: if that was not meant, run it again (from its last checkpoint, if it keeps "
                                    "one)")),
    ("received SIGHUP and passed", ("the terminal or ssh session `triage launch` ran in closed: start it in tmux or "
                                    "screen, with setsid/nohup, or as a batch job (sbatch)")),
    ("received SIGTERM and passed", ("find who sent SIGTERM to `triage launch`: the scheduler's log (`sacct -j JOBID "
                                     "-o JobID,State,Reason,End` on Slurm), the pod's events (`kubectl describe pod`) "
                                     "or the supervisor's log; if it was a preemption or a time limit, checkpoint "
                                     "more often and requeue")),
    # a rank's own uncaught KeyboardInterrupt (triage.load.forwarded's words)
    ("was interrupted: an uncaught KeyboardInterrupt", (
        "find who interrupted it: Ctrl-C in a terminal the rank shares (a job started in the foreground), a "
        "`kill -INT` of it, or code that raised KeyboardInterrupt (its traceback in the rank's output says where); "
        "if that was not meant, run it again (from its last checkpoint, if it keeps one)")),
    # torchrun's agent signalled with no scheduler line (triage.load.logs.records' words)
    ("agent received SIGHUP", ("the terminal or ssh session the job was started from closed: start it in tmux or "
                               "screen, with setsid/nohup, or as a batch job (sbatch)")),
    ("agent received SIGTERM", ("find who sent it: the scheduler's log (`sacct -j JOBID -o JobID,State,Reason,End` "
                                "on Slurm), the pod's events (`kubectl describe pod`, `kubectl get events`) or the "
                                "supervisor's log; if it was a preemption or a time limit, checkpoint more often and "
                                "requeue")),
    ("agent received a signal the input does not name", (
        "the SignalException's full message ('Process N got signal: S') says which: 1 (SIGHUP) is a closed terminal or "
        "ssh session (start it in tmux or screen, or as a batch job), 15 (SIGTERM) a scheduler, a container stop or a "
        "supervisor (its log says who), 2 (SIGINT) Ctrl-C")),
    # (GASNet's processes signalled after the job's own end: triage.parsing.launchers' words; before "time limit",
    # which its own advice says)
    ("stopped from outside after its own end", (
        "the job's work ended before the signals: check that its results and last checkpoint were written whole; the "
        "signals came while it was exiting: a launcher's teardown of what was left, or a hang at exit that the "
        "scheduler ended (`sacct -j JOBID -o JobID,State,Reason,End`: a time limit or a cancel; the time between the "
        "end's line and the signals)")),
    # YARN's SIGTERM of a Spark executor's container, exit status 143 (triage.parsing.frameworks.YARN_STOPPED)
    ("stopped by YARN with SIGTERM", (
        "find who asked YARN to stop it: the ResourceManager's log and `yarn application -status APPLICATION_ID` (a "
        "preemption by the scheduler's queues, the application master releasing it, a `yarn application -kill`); "
        "the container's own log (`yarn logs -applicationId APPLICATION_ID`) says what it did last; where the "
        "NodeManager's log says it ran beyond its memory limits, raise spark.executor.memoryOverhead")),
    # (triage.parsing.frameworks.K8S_DEADLINE: a Job's or a pod's activeDeadlineSeconds; before "time limit")
    ("at its activeDeadlineSeconds", (
        "if the job needed more time, raise its deadline (the Job's spec.activeDeadlineSeconds, or the pod's) or "
        "checkpoint more often and resume from the last checkpoint; if it should have finished in time, it was slow or "
        "hung before the deadline (or its pods waited to be scheduled: the deadline counts from the Job's start): "
        "`kubectl describe job` and the pods' own logs (`kubectl logs POD`) show where the time went")),
    ("time limit", ("if the job needed more time, raise its limit (Slurm's sbatch --time, PBS's -l walltime, LSF's "
                   "bsub -W or, for CPU time, -c, Grid Engine's -l h_rt) or checkpoint more often and requeue from the "
                   "last checkpoint; if it should have finished in time, it was slow or hung before the limit: look "
                   "at its last progress lines, or run it under `triage launch`")),
    ("PBS ended the job with", ("find why PBS ended it: `qstat -xf JOBID` (its comment; resources_used.walltime "
                                "against Resource_List.walltime) or `tracejob JOBID` on the PBS server (a qdel, its "
                                "walltime, a limit it enforces)")),
    ("did not end with the signals", (
        "the node's processes did not die: look on HOST for processes stuck in the kernel (`ps -eo pid,stat,wchan,cmd`"
        ": state D; `dmesg`; a hung file system or GPU: `nvidia-smi`) and at `scontrol show node HOST` (Reason=Kill "
        "task failed); what ended the step the job's earlier lines or `sacct -j JOBID -o JobID,State,Reason,End` "
        "say")),
    ("deadline", ("start it earlier or give it less to do (Slurm's sbatch --deadline, LSF's bsub -t), and "
                  "checkpoint more often")),
    ("preempt", ("checkpoint more often and requeue (sbatch --requeue), or run in a partition or QOS that is "
                "not preempted")),
    # a node lost under the job (slurmstepd's DUE TO NODE FAILURE, sacct's and submitit's NODE_FAIL, srun's and
    # salloc's "Node failure on HOST", Flux's lost shell): the node's own state and logs say why, not sacct's who
    ("Flux lost the job shell", ("find why the node or its shell went: its state and reason (`flux resource status`, "
                                 "`flux resource drain`), the broker's log (`flux dmesg`) and `dmesg` on HOST; then "
                                 "run it again from the last checkpoint without it (--requires=-host:HOST)")),
    ("node failed", _NODE_FAILED),
    ("Node failure", _NODE_FAILED),
    ("LSF ended the job from outside", ("find who or what ended it: `bhist -l JOBID` (a bkill by its owner or an "
                                        "admin, a preemption, the queue's run window or load threshold)")),
    ("requeue", "it was requeued: the next run restarts from the last checkpoint (check that it resumes)"),
    # (a log's own OOMKilled is a crash by SIGKILL, triage.parsing.frameworks; this is the reporter's sentence that a
    # pod was killed by Kubernetes, OOMKilled: analysis.prose's stop in their words, which names no sender to find)
    ("OOMKilled", ("OOMKilled is the container's own memory over its limit (the kernel's SIGKILL), not a stop from "
                  "outside: raise the pod's resources.limits.memory, or lower the job's host memory (dataloader "
                  "workers, pinned memory, CPU copies of the model); `kubectl describe pod` shows its Last State")),
    ("Evicted", ("the node ran short of a resource: request it (resources.requests) so the pod is placed where it "
                "fits, or free the node")),
)
# the node a step names, where the input does not name it (slurmstepd's "STEP N.0 CANCELLED ... DUE TO NODE FAILURE")
UNNAMED_NODE = " (NODE: the node, not in this input; `sacct -j JOBID -o JobID,State,NodeList` names the job's nodes)"
_WHO_CANCELLED = ("find who or what cancelled it: `sacct -j JOBID -o JobID,State,Reason,End` (a user's scancel, an "
                  "admin, a dependency, a job-array limit)")


def is_stop(info: ExitInfo) -> bool:
    return info.failure_kind == STOPPED


def first_stop(evidence: Evidence) -> ExitInfo | None:
    stops = [u for u in evidence.unattributed if is_stop(u)]
    return min(stops, key=lambda u: u.order if u.order is not None else 1 << 62) if stops else None


def what_to_do(message: str, host: str | None = None) -> str:
    """The next step after a stop, by what the scheduler's line says (HOST: the host it names; where the input names
    none, NODE, said to be the node the input does not name, and where to find it)."""
    for words, step in _TO_DO:
        if words.lower() in message.lower():
            if host:
                return step.replace("HOST", host)
            return step if "HOST" not in step else step.replace("HOST", "NODE") + UNNAMED_NODE
    return _WHO_CANCELLED


def _before(order: int | None, stop: ExitInfo, when: float | None = None) -> bool:
    """Stands before the stop: by place in the input when both places are known (logs), else by time
    when both times are known (a run directory's records: a rank's exception after a signal passed
    to the job is its consequence); an item of neither counts as before it (the stop is then said
    as context, never the cause)."""
    if order is not None and stop.order is not None:
        return order < stop.order
    if when is not None and stop.time is not None:
        return when < stop.time
    return True


def went_wrong_before(evidence: Evidence, failures: tuple[Failure, ...], stop: ExitInfo) -> bool:
    """A rank failed, timed out, waited at init or disagreed before the stop; before or after it, where the stop is
    only inferred from the signals the processes caught (``collateral``: GASNet's handler lines, no scheduler's word),
    which another failure's teardown prints as well."""
    def before(order: int | None, when: float | None = None) -> bool:
        return stop.collateral or _before(order, stop, when)
    real = [f for f in failures if not f.collateral and not f.teardown]
    if any(before(f.order, f.time) for f in real):
        return True
    if any(e.kind is EventKind.WATCHDOG_TIMEOUT and before(e.order, e.time) for e in evidence.events):
        return True
    if any(before(w.order) for w in evidence.init_waits) or evidence.mismatches:
        return True
    return any(not u.collateral and not is_stop(u) and before(u.order, u.time) for u in evidence.unattributed)


def stopped_verdict(evidence: Evidence, failures: tuple[Failure, ...]) -> tuple[Verdict, Finding] | None:
    """The stop as the verdict when nothing went wrong before it."""
    stop = first_stop(evidence)
    if stop is None or went_wrong_before(evidence, failures, stop):
        return None
    said = stop.message or "the job was stopped from outside"
    where = f" on host {stop.host}" if stop.host and stop.host not in said[:200] else ""
    before = "" if "before it" in said else "; no rank failed before it"
    body = f"{said}{before}. What to do: {what_to_do(said, stop.host)}"
    verdict = headline.verdict(VerdictKind.STOPPED, body, culprit_host=stop.host,
                               qualifier=f"{where} (from outside the job)")
    return verdict, Finding(VerdictKind.STOPPED.value, (), verdict.summary, stop.evidence, root_cause=True)


def _first_clause(said: str) -> str:
    """What the stop was, without the notes after it (a parenthesis, what it did to the ranks); a
    pid in parentheses stays (``triage launch (pid N) received SIGINT``)."""
    cut = said.replace(" (pid ", "\0pid ").split(" (", 1)[0].replace("\0pid ", " (pid ")
    return cut.split("; the ranks'", 1)[0].split("; how the ranks", 1)[0]


def with_stop_context(verdict: Verdict, evidence: Evidence) -> Verdict:
    """A verdict other than the stop, followed by the stop when the input has one ("; then ...")."""
    stop = first_stop(evidence)
    if stop is None or verdict.kind is VerdictKind.STOPPED or stop.collateral:
        # (a stop inferred from the processes' signals, beside another failure: that failure's teardown)
        return verdict
    said = _first_clause(stop.message or "the job was stopped from outside")
    return replace(verdict, summary=f"{verdict.summary}; then {said[:240]}")


__all__ = ["STOPPED", "first_stop", "is_stop", "stopped_verdict", "what_to_do", "with_stop_context"]
