"""What to do next after a verdict on an excerpt (a pasted log, a job's output): there is no
bundle to open, so the steps say what to read in the log, what to run, and how to get the full
diff next time (pure)."""

from __future__ import annotations

import signal as _signal

from triage.analysis.ranks import rank_word
from triage.analysis.settle import HCCL, LIBFABRIC, TPU_DRIVER, per_rank_output, settle_setup, under_triage
from triage.analysis.stopped import what_to_do
from triage.analysis.unrecorded import END_NOT_SHOWN
from triage.lazy_regex import lazy_regex
from triage.model import DeviceFault, Ending, Memory, MismatchKind, Verdict, VerdictKind
from triage.model.evidence import GPU_WAIT, RankActivityFact
from triage.parsing import oneccl
from triage.parsing.crashlog import REMOTE_TARGET_TEXT
from triage.parsing.frameworks import K8S_JOB_BACKOFF
from triage.parsing.launch_failure import LAUNCH_TEXT, LAUNCHER_ITSELF
from triage.parsing.mpi_errors import DIRECT_LAUNCH_TEXT, OMPI_TCP_TEXT, PMI_INIT_TEXT

_SIGKILL = int(_signal.SIGKILL)
_FLIGHT_RECORDER = ("PyTorch's Flight Recorder (TORCH_NCCL_TRACE_BUFFER_SIZE=2000 TORCH_NCCL_DUMP_ON_TIMEOUT=1 "
                    "TORCH_NCCL_DEBUG_INFO_TEMP_FILE=/shared/dir/fr_) and pass the dumps to `triage report`")


# the launchers of an MPI program (Open MPI's mpirun, Hydra's mpiexec, one not said): where the input names no PyTorch,
# its ranks are an MPI program's, whose collectives no Flight Recorder records
_MPI_LAUNCHERS = ("openmpi", "hydra", "mpi")
# the launchers that start PyTorch's processes only
_TORCH_LAUNCHERS = ("torchrun", "deepspeed", "spawn", "torchx")


def flight_recorder_fits(launcher: str | None, stack: str | None = None, gpu_program: bool = False) -> bool:
    """PyTorch's Flight Recorder records a torch.distributed job's NCCL collectives: its step fits where the input
    shows PyTorch (its words, triage.parsing.stack_words, or a launcher of PyTorch's), and where it names no framework
    nor an MPI launcher: not a JAX, TensorFlow or TPU job's, nor an MPI program's (mpirun, mpiexec and no PyTorch).
    (A paste that names nothing, a traceback's last line or srun's record of a task, may be a PyTorch job's: the step
    stays; the words of a PyTorch job's paste often show no GPU.) ``gpu_program``: the input shows a GPU's software
    (CUDA's or ROCm's words) and neither PyTorch's nor NCCL's: a CUDA or HIP program of its own, whose collectives no
    Flight Recorder records."""
    if stack == "torch" or launcher in _TORCH_LAUNCHERS:
        return True
    return stack is None and launcher not in _MPI_LAUNCHERS and not gpu_program


def next_time(launcher: str | None) -> str:
    """The last step after an excerpt's verdict: how to get the full diff next time, fitted to the launcher."""
    launch = under_triage(launcher)
    if launch is None:
        return f"next time, enable {_FLIGHT_RECORDER}"
    return (f"next time, run the job under {launch} (stacks, Flight Recorder and the cross-rank diff are gathered "
            f"when it hangs), or enable {_FLIGHT_RECORDER}")


# a container's SIGKILL on Kubernetes (exit code 137): its pod's state tells why (kubectl describe pod's Last State:
# Reason OOMKilled, the container over its memory limit; Error, a kill from inside it or the kubelet's), its events
# the kubelet's own kills (a failed liveness probe, an eviction): not the node's dmesg
K8S_KILL_STEP = ("on Kubernetes, a container's SIGKILL (exit code 137) is told in its pod's state: `kubectl describe "
                 "pod POD` shows its Last State (Reason: OOMKilled is the container over its memory limit: raise "
                 "resources.limits.memory, for Spark's executors spark.executor.memory or "
                 "spark.executor.memoryOverhead, or lower the process's memory) and its Events (a failed liveness "
                 "probe, an eviction: the kubelet's own kills); `kubectl logs POD --previous` has the container's "
                 "last output")
# an HTCondor job's end in HTCondor's own words (triage.parsing.frameworks: "HTCondor's shadow lost job N",
# "HTCondor held job N", "HTCondor: job N ended", "HTCondor removed job N")
_CONDOR_SAID = lazy_regex(r"\bHTCondor(?:'s shadow lost| held| removed|:) job\b")
# PyTorch's own words of a GPU's error, which a paste of its last line holds without any other PyTorch word (c10's
# CUDA and HIP checks raised as RuntimeError, torch 2.5's AcceleratorError): no GPU program of its own
_TORCH_GPU_ERROR = lazy_regex(r"\bRuntimeError: (?:CUDA|HIP) error: |\bAcceleratorError\b")
# oneCCL's transport (its ATL over libfabric or MPI) failing: its own log and knobs
ONECCL_STEP = ("check oneCCL's transport: re-run with CCL_LOG_LEVEL=debug (oneCCL's own log) and FI_LOG_LEVEL=warn "
               "(libfabric's) to see which provider each rank tries, and `fi_info` on each node for the providers it "
               "has; CCL_ATL_TRANSPORT=ofi|mpi chooses the transport, FI_PROVIDER (tcp, shm, psm3, cxi) the provider, "
               "CCL_ZE_IPC_EXCHANGE=sockets the exchange of the GPUs' IPC handles where a container has no pidfd; "
               "a peer that died first shows up as a transport error on the others")
# gloo's own words in a failure's line (its sources' paths, "third_party/gloo/gloo/transport/tcp/pair.cc", torch's
# ProcessGroupGloo, "Gloo connectFullMesh failed"): the transport is gloo's TCP pairs, whose interface is its own knob
_GLOO = lazy_regex(r"\bgloo\b|Gloo")
GLOO_NETWORK_STEP = ("check the link or host named: gloo opens its TCP pairs on the interface of the address each "
                     "node's hostname resolves to, unless GLOO_SOCKET_IFNAME names one: set GLOO_SOCKET_IFNAME to the "
                     "interface the nodes reach each other on, on every node (`ip -br addr` lists them; `hostname -i` "
                     "shows the address gloo would take: 127.0.x.x is no address a peer reaches); a peer "
                     "that died first shows up as a closed or reset connection on the others, so look for an earlier "
                     "failure on the peer")
CONDOR_MEMORY_STEP = ("HTCondor held the job at the memory it asked for (not the host's memory running out): raise "
                      "`request_memory` in the submit file (`condor_qedit JOB RequestMemory MB` for the held job) or "
                      "lower the program's memory, then `condor_release JOB`")
CONDOR_STEP = ("read the job's HTCondor event log (the submit file's `log =`) and the `Error from slot` line of its "
               "shadow exception or its hold reason: `condor_q -hold -af HoldReason` or `condor_q -better-analyze "
               "JOB` while it is queued or held, `condor_history -l JOB` once it has left the queue (ExitCode, "
               "ExitBySignal, RemoveReason), `condor_ssh_to_job JOB` into a running one; the job's own output and "
               "error files (`output =`, `error =`) hold its program's first error")


# C++'s std::terminate for a thread object destroyed while its thread still runs: most often a process that ends
# with threads of its process groups (or its own) alive, in the interpreter's or the C++ runtime's teardown
THREAD_AT_EXIT = "terminate called without an active exception"
THREAD_AT_EXIT_STEP = (
    "`terminate called without an active exception` is C++ ending a process whose thread was still running, most "
    "often at exit: call torch.distributed.destroy_process_group() before the program ends and stop or join its own "
    "threads (loggers, prefetchers, DataLoader workers with persistent_workers); a gloo or NCCL process that exits "
    "without destroy_process_group aborts so now and then (pytorch/pytorch#190489)")
# a crash whose summary says how the process died (a signal, a fault, a CUDA error, a core); without it (a worker that
# "died unexpectedly"), the kernel's log tells an OOM kill from a GPU fault first
_HOW_IT_DIED = lazy_regex(r"SIG[A-Z]{3,6}|[Ss]ignal|CUDA|cuda|[Ii]llegal|Xid|[Ss]egmentation|core dumped|[Aa]bort|"
                          r"exit(?:ed)? (?:with )?(?:code|status)|[Ff]ault|0x[0-9A-Fa-f]{8}")
ROCM_FAULT_STEP = ("a fault on an AMD GPU (ROCm): re-run with AMD_SERIALIZE_KERNEL=3 and HIP_LAUNCH_BLOCKING=1 (ROCm's "
                   "CUDA_LAUNCH_BLOCKING: each kernel waits to end, the error comes at the kernel that faulted; "
                   "AMD_LOG_LEVEL=4 logs each launch) to find it; check `dmesg -T` on that host for the amdgpu "
                   "driver's lines (its page fault's address and process, a ring timeout or a GPU reset) and "
                   "`rocm-smi` for the GPU's state (its memory, its RAS errors)")
# a crash of a program on ROCm whose words name no GPU fault (a SIGSEGV in its runtime's frames)
ROCM_CRASH_STEP = ("a crash of a program on an AMD GPU (ROCm): re-run with AMD_SERIALIZE_KERNEL=3 and "
                   "HIP_LAUNCH_BLOCKING=1 (ROCm's CUDA_LAUNCH_BLOCKING; AMD_LOG_LEVEL=4 logs each HIP call) to tell a "
                   "GPU fault from a host one; check `dmesg -T` on that host for the amdgpu driver's lines (a page "
                   "fault, a ring timeout or a GPU reset) and `rocm-smi` for the GPU's state")
RAY_MEMORY_STEP = ("Ray's memory monitor killed it when the node's host memory passed its threshold "
                   "(RAY_memory_usage_threshold, 0.95 by default), not the kernel's OOM killer: "
                   "`ray logs raylet.out -ip NODE_IP` lists the workers it killed and their memory; run fewer tasks or "
                   "actors at once on a node (ask each for more: `memory=`, `num_cpus=` or `num_gpus=` in @ray.remote "
                   "or .options()) or make each one use less (smaller batches, shards or object copies)")
# a crash that says how it died (a signal, a fault, an exit code) in an input that shows no GPU: the faulting frame
CPU_CRASH_STEP = ("find the faulting line: allow a core (`ulimit -c unlimited` before the run) and open it with "
                  "`gdb PROGRAM CORE` (`bt`), or rebuild with debug info and the compiler's run-time checks (-g; "
                  "gfortran's -fbacktrace -fcheck=all, ifort's -traceback -check all, -fsanitize=address for C and "
                  "C++); `dmesg -T` on that host has the kernel's line of a segfault")
# a build with no code for the GPU's architecture (triage.parsing.peers.NO_BINARY_NOTE): the arch, and a build for it
NO_BINARY_STEP = ("the installed build (PyTorch, TensorFlow, the extension) has no code object for this GPU's "
                  "architecture: `rocminfo | grep gfx` (ROCm) or `nvidia-smi --query-gpu=compute_cap --format=csv` "
                  "names it; install or build for that arch (PYTORCH_ROCM_ARCH / --offload-arch=gfxNNNN, "
                  "TORCH_CUDA_ARCH_LIST), or on ROCm set HSA_OVERRIDE_GFX_VERSION to a supported arch of the same "
                  "family (10.3.0 for RDNA2's gfx103x)")
LIVE_STACKS = ("while it hangs, take the stacks of every rank: `triage collect --job JOBID` (SLURM) or "
               "`triage dump --match train.py` on each node")
# an init hang, whatever the input: who never joined, and whether the nodes reach the store
INIT_HANG_STEPS = (
    ("find the ranks or nodes that never joined: their own output (an exception before "
     "init_process_group, a node that never started) or the launcher's log on their node"),
    ("check that every node reaches MASTER_ADDR:MASTER_PORT and uses the right interface "
     "(GLOO_SOCKET_IFNAME / NCCL_SOCKET_IFNAME), and that no other job uses the same port: "
     "`triage check -- torchrun ...` tests this without the training code"),
)


def excerpt_steps(verdict: Verdict, launcher: str | None = None, gpu: bool = True,
                  stack: str | None = None, rocm: bool = False, platform: str | None = None,
                  nccl: bool = True) -> tuple[str, ...]:
    """What to do next after a verdict of pasted logs; ``launcher``: the one that started the ranks, whose
    per-rank output the steps ask for (triage.parsing.launcher_kind); ``gpu``: False where the input shows no GPU
    (triage.parsing.gpu_words): a crash's advice is then a CPU program's, not CUDA's; ``stack``: the framework the
    input names (triage.parsing.stack_words): the next time's step, `triage launch` and PyTorch's Flight Recorder, is
    a PyTorch job's only (:func:`flight_recorder_fits`); ``rocm``: the input shows ROCm as the GPU's software and none
    of CUDA's own words (triage.parsing.gpu_words.shows_rocm): a GPU program's crash gets ROCm's advice; ``platform``:
    what ran the job, as the input shows it (triage.parsing.platform_words: "kubernetes", "htcondor"): a container's
    kill is read in its pod's state, an HTCondor job's end in its event log and condor's tools, not a host's dmesg
    nor torchrun; ``nccl``: the input names NCCL (with ``gpu`` and no PyTorch word, a GPU program of its own: no
    Flight Recorder step)."""
    who = rank_word(verdict.culprit_ranks) if verdict.culprit_ranks else None
    kind = verdict.kind
    summary = verdict.summary
    steps: list[str] = []
    if kind is VerdictKind.COLLECTIVE_MISMATCH and verdict.subkind is MismatchKind.SEQ:
        steps.append("the calls agree: check whether the job really hangs with TORCH_DISTRIBUTED_DEBUG unset; if "
                     "it does, upgrade PyTorch (older versions report sequence-number-only mismatches falsely) "
                     "and look for a process group created or used on some ranks only")
    elif kind is VerdictKind.COLLECTIVE_MISMATCH:
        steps.append(f"open the code path {who or 'each rank'} took before that collective: look for a "
                     "collective called under a rank-dependent condition (if rank == ..., a data-dependent early "
                     "exit, an uneven last batch)")
        if verdict.subkind is MismatchKind.SIZE:
            steps.append("check tensor shapes per rank (uneven last batch, padding, a rank-dependent split)")
        if verdict.subkind is MismatchKind.DTYPE:
            steps.append("check autocast / .to(dtype) on that rank: every rank must pass the same dtype")
    elif kind is VerdictKind.EXCEPTION and (LAUNCH_TEXT in summary or DIRECT_LAUNCH_TEXT in summary
                                                 or PMI_INIT_TEXT in summary):
        steps.append(settle_setup(summary, verdict.culprit_host) or "")   # the program never ran: no traceback
    elif kind is VerdictKind.EXCEPTION and K8S_JOB_BACKOFF in summary:
        # (`kubectl describe job` alone: the Job's failure, none of its pods' output)
        steps.append("read the failed pods' own output: `kubectl get pods -l job-name=JOB` lists them, `kubectl logs "
                     "POD` (`--previous` for a restarted container) gives the first failure, `kubectl describe pod "
                     "POD` its exit code or OOMKilled; pass those to `triage report`")
    elif platform == "htcondor" and _CONDOR_SAID.search(summary) is not None:
        # (HTCondor's own record of the job's end: its event log and its tools, no rank's traceback)
        if "out of memory: HTCondor held" in summary:
            steps.append(CONDOR_MEMORY_STEP)
        steps.append(CONDOR_STEP)
    elif kind is VerdictKind.EXCEPTION:
        steps.append(f"read the traceback of {who or 'the failing rank'} in the log: it is the first failure; "
                     "the timeouts and errors of the other ranks followed from it")
        memory = verdict.cause.memory
        if memory is Memory.NODE_HEAP:
            steps.append("raise Node's heap limit (`node --max-old-space-size=MB`, or "
                         "NODE_OPTIONS=--max-old-space-size=MB for a tool npm or npx starts) or find what holds the "
                         "heap (`node --heapsnapshot-near-heap-limit=1`, the GC lines before it): the limit is Node's "
                         "own, not the host's memory running out")
        elif memory is Memory.NODE_PROCESS:
            steps.append("the host's (or the container's) memory ran short under Node, not its heap limit: free memory "
                         "on that host (fewer processes or workers at once) or raise the container's memory limit")
        elif memory is Memory.HOST:
            steps.append("the host's memory ran out in that process, not a GPU's: check the size it asked for against "
                         "the node's free memory (`free -g`; the job's memory request, `sacct -o MaxRSS,ReqMem`), then "
                         "ask for a node with more memory or make the allocation smaller (a sparse or chunked "
                         "array, fewer processes or workers per node)")
        elif memory is Memory.DEVICE:
            steps.append("reduce memory on that rank (batch size, sequence length, activation checkpointing); "
                         "a rank that OOMs alone often gets a longer sequence or a larger shard")
        if "unhandled cuda error" in summary or "ncclUnhandledCudaError" in summary:
            steps.append("NCCL's unhandled cuda error at its set-up is a CUDA call that failed under NCCL: re-run with "
                         "NCCL_DEBUG=INFO (its WARN line names the CUDA error); check that this PyTorch build "
                         "supports the GPU (its 'not compatible with the current PyTorch installation' warning), "
                         "the driver against the CUDA version, and that each rank's device is its own")
    elif kind is VerdictKind.CRASH and LAUNCHER_ITSELF in summary:
        # the launcher's own signal (mpirun's backtrace): its installation on that host, no rank's lines
        steps.append("the launcher died, not a rank: run it alone on that host (`mpirun -np 1 hostname`); check that "
                     "its Open MPI is the one the job was built with (`which mpirun`, `ompi_info`, LD_LIBRARY_PATH) "
                     "and, where its frames run through hwloc's topology load, what `lstopo` says there (a container "
                     "or VM that hides the machine's topology)")
    elif kind is VerdictKind.CRASH and THREAD_AT_EXIT in summary:
        steps.append(THREAD_AT_EXIT_STEP)
        steps.append(f"look at the lines of {who or 'that process'} just before it: if its own last line (training "
                     "finished, a checkpoint saved) came first, its work was done and only its exit failed")
    elif kind is VerdictKind.CRASH:
        # killed by SIGKILL, as the failure's record says (its signal; "Killed", "exit signals: Killed", "error code
        # -9" are SIGKILL too); a record that names no signal of its own but SIGKILL among its possible causes (Ray's
        # "The actor is dead because its worker process has died ... (1) The process is killed by SIGKILL by OOM
        # killer") is read in its words until its reader says so
        killed = verdict.cause.signal == _SIGKILL or (verdict.cause.signal is None and "SIGKILL" in summary)
        ending, device = verdict.cause.ending, verdict.cause.device
        if ending is Ending.NANNY_MEMORY:
            # (the nanny's own restart at distributed.worker.memory.terminate: no kernel OOM line tells it)
            steps.append("Dask's nanny restarted the worker at its memory budget (distributed.worker.memory."
                         "terminate, by default 95% of the worker's memory_limit), not the host's memory running out: "
                         "give each worker more memory (dask worker --memory-limit, LocalCluster(memory_limit=...), "
                         "dask-jobqueue's memory), fewer threads per worker, or smaller partitions or chunks")
        elif ending is Ending.RAY_MEMORY:
            # (Ray's own kill at its threshold of the node's memory: no kernel OOM line in dmesg tells it)
            steps.append(RAY_MEMORY_STEP)
        elif ending is Ending.CPU_LIMIT:
            steps.append("PBS killed it at the CPU the job asked for: cput is the CPU time of all its processes and "
                         "ncpus the cores they use at once, so threads beyond the cores asked for (OMP_NUM_THREADS, "
                         "torch.set_num_threads, DataLoader workers, BLAS threads) use them up: match the threads to "
                         "-l ncpus (or select=...:ncpus=), or raise -l cput")
        elif ending is Ending.EXECUTOR_LOST:
            # (the driver's word that an executor was lost, with no word of why: its container's end tells)
            steps.append("find how the executor's container ended: on Kubernetes, `kubectl describe pod` of the "
                         "executor's pod (a last state of OOMKilled, exit code 137, is its kill at its memory limit: "
                         "raise spark.executor.memory or spark.executor.memoryOverhead) and `kubectl logs --previous`; "
                         "on YARN, `yarn logs -applicationId APPLICATION_ID` and the NodeManager's log")
        elif ending is Ending.SOME_LIMIT:
            # (older Torque's server mail, "Job exceeded some resource limit (walltime, mem, etc.)": which limit, its
            # resources_used against the job's requests tell)
            steps.append("PBS aborted it at one of the limits the job asked for, and its mail does not say which: "
                         "compare the mail's resources_used (mem, vmem, cput, walltime) with the job's -l requests, or "
                         "run `tracejob JOBID` on the PBS server; then raise that limit or lower the job's use of it")
        elif ending is Ending.MEMORY_LIMIT:
            # the batch system's (or the container runtime's) own kill at the job's memory limit: no kernel OOM
            # line in dmesg tells it; the limit is the job's request
            steps.append("the scheduler killed it at the memory limit the job asked for (not the host's memory "
                         "running out): raise that limit or lower the process's memory (YARN: "
                         "spark.executor.memoryOverhead / spark.executor.memory, or the NodeManager's vmem check for a "
                         "virtual-memory kill; PBS: -l mem; Slurm: --mem; LSF: -M / rusage[mem]; Kubernetes: "
                         "resources.limits.memory)")
        elif killed and platform == "kubernetes":
            # (a container's SIGKILL, exit code 137: its pod's state says why, not the node's dmesg)
            steps.append(K8S_KILL_STEP)
        elif killed:
            steps.append("run `dmesg -T | grep -i -E 'killed process|out of memory'` on that host: SIGKILL is "
                         "usually the kernel OOM killer (host memory, not GPU memory)")
        elif device is DeviceFault.AI_CORE:
            # Ascend CANN's AI Core error: a kernel that faulted on the NPU
            steps.append("an operator's kernel faulted on the NPU (CANN's AI Core error): CANN's `asys analyze "
                         "-r=aicore_error` (or msaicerr) on the plog names the operator and the fault; re-run with "
                         "ASCEND_LAUNCH_BLOCKING=1 to stop at the operator that failed")
            steps.append(f"look at the lines of {who or 'that process'} just before the failure: the first "
                         "error, not the timeouts after it")
        elif device is DeviceFault.DEVICE_LOST:
            # Level Zero's device loss (Intel GPUs): the driver reset a hung or faulted device under the process
            steps.append("the GPU was lost under the process (Level Zero's DEVICE_LOST: the driver reset a device "
                         "that hung or faulted): check `dmesg -T` on that host for the GPU driver's hang and reset "
                         "lines (i915/xe) and `xpu-smi diag` for the device's health, before blaming the code")
            steps.append(f"look at the lines of {who or 'that process'} just before the failure: the first "
                         "error, not the timeouts after it")
        elif not _HOW_IT_DIED.search(summary) and gpu:
            steps.append("the input does not say how it died: `dmesg -T | grep -i -E 'killed process|out of memory|"
                         "Xid'` on that host tells a kill by the kernel's OOM killer (host memory) from a GPU fault, "
                         "and its exit code or signal (the launcher's own record of it) tells the rest")
        elif not _HOW_IT_DIED.search(summary):
            steps.append("the input does not say how it died: `dmesg -T | grep -i -E 'killed process|out of memory|"
                         "segfault'` on that host tells a kill by the kernel's OOM killer (host memory) from a fault, "
                         "and its exit code or signal (the launcher's own record of it) tells the rest")
        elif device is DeviceFault.NO_BINARY:
            steps.append(NO_BINARY_STEP)
        elif device is DeviceFault.ROCM:
            # (ROCm's runtime's own words of a GPU fault: its knobs and tools, not CUDA's)
            steps.append(ROCM_FAULT_STEP)
        elif gpu and rocm and "CUDA" not in summary:
            # (a crash of a program on ROCm, its runtime's libraries in its frames: ROCm's knobs and tools)
            steps.append(ROCM_CRASH_STEP)
        elif gpu:
            steps.append("for CUDA errors re-run with CUDA_LAUNCH_BLOCKING=1 (or under compute-sanitizer) to "
                         "get the failing kernel; check `dmesg` on that host for Xid lines")
        else:
            # (no GPU word in the input: a CPU program's crash, a Fortran or C code's SIGSEGV or SIGFPE under mpirun)
            steps.append(CPU_CRASH_STEP)
            steps.append(f"look at the lines of {who or 'that process'} just before the failure: the first "
                         "error, not the timeouts after it")
    elif kind is VerdictKind.NETWORK_ERROR and (setup := settle_setup(summary, verdict.culprit_host)) is not None:
        steps.append(setup)          # the store's port taken, a node the launcher cannot reach: no rank to look at
    elif kind is VerdictKind.NETWORK_ERROR and TPU_DRIVER.search(summary) is not None:
        # XLA's remote TPU driver never opened its session to the TPU host: the TPU's own state, not NCCL's links
        steps.append("check the TPU the backend was pointed at: `gcloud compute tpus describe NAME --zone ZONE` "
                     "(state READY, health HEALTHY: not preempted, restarting or under maintenance), that the address "
                     "it used (TPU_NAME, COLAB_TPU_ADDR or XRT_TPU_CONFIG) is the TPU's current one, and that this "
                     "machine reaches it (the same network and zone, no firewall on the driver's port)")
    elif kind is VerdictKind.NETWORK_ERROR and HCCL.search(summary) is not None:
        steps.append("check the link or host named: re-run with ASCEND_GLOBAL_LOG_LEVEL=1 (HCCL's CANN log, under "
                     "~/ascend/log) to see each rank's link set-up; a peer that died or started late shows up as a "
                     "socket timeout on the others, so look for an earlier failure on the peer; `npu-smi info` and "
                     "`hccn_tool -i DEVICE -tls -g` check the NPUs and their links, HCCL_CONNECT_TIMEOUT the wait")
        steps.append("test the nodes' links without the training code: `triage check -- torchrun ...`")
    elif kind is VerdictKind.NETWORK_ERROR and REMOTE_TARGET_TEXT in summary:
        steps.append("read the log of the task gRPC's remote target names first: a task that died, was preempted or "
                     "restarted shows up as a closed or reset connection on the others; GRPC_VERBOSITY=debug shows "
                     "gRPC's own connection events")
    elif kind is VerdictKind.NETWORK_ERROR and LIBFABRIC.search(summary) is not None:
        steps.append("check the link or host named: re-run with FI_LOG_LEVEL=warn (libfabric's own log; info for "
                     "more, FI_LOG_PROV=<provider> to keep one provider's) to see which peer each rank lost first; a "
                     "peer that died shows up as unreachable or unresponsive on the others, so look for an earlier "
                     "failure on the peer; `fi_info -p <provider>` on each node checks the provider and its devices")
        steps.append("test the nodes' links without the training code: `triage check -- torchrun ...`")
    elif kind is VerdictKind.NETWORK_ERROR and oneccl.WORDS.search(summary) is not None:
        # (oneCCL's transport, its ATL over libfabric or MPI: its own knobs and logs, not NCCL's)
        steps.append(ONECCL_STEP)
    elif kind is VerdictKind.NETWORK_ERROR and OMPI_TCP_TEXT in summary:
        # (Open MPI's TCP transport's box: a peer gone, or a connection it could not open; its own knobs, not NCCL's)
        steps.append("read the output of the process on the peer's host first: a peer that crashed or exited without "
                     "MPI_Finalize shows up as Open MPI's TCP box on the others; where the box is a connection that "
                     "could not be opened, choose the interface Open MPI uses between the nodes (`mpirun --mca "
                     "btl_tcp_if_include IFACE`, the same on every node; `ip -br addr` lists them) and check no "
                     "firewall blocks its ports")
    elif kind is VerdictKind.NETWORK_ERROR and _GLOO.search(summary) is not None:
        # (gloo's TCP pairs: its own interface knob, not NCCL's)
        steps.append(GLOO_NETWORK_STEP)
        steps.append("test the nodes' links without the training code: `triage check -- torchrun ...`")
    elif kind is VerdictKind.NETWORK_ERROR:
        steps.append("check the link or host named: re-run with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET to "
                     "see the interface and transport of each rank; a peer that died first shows up as a "
                     "network error on the others, so look for an earlier failure on the peer")
        steps.append("test the nodes' links without the training code: `triage check -- torchrun ...`")
    elif kind is VerdictKind.STUCK_OUTSIDE_COLLECTIVE:
        steps.append(f"{who or 'that rank'} was doing something else while the others waited: a rank-only "
                     "branch (checkpoint saving, evaluation, logging), a deadlock, or slow I/O; "
                     "if it is legitimately slow, raise the collective timeout (init_process_group(timeout=...))")
        steps.append(LIVE_STACKS)
    elif kind is VerdictKind.INIT_HANG:
        steps.extend(INIT_HANG_STEPS)
    elif kind is VerdictKind.STOPPED:
        # no rank failed: what stopped the job is the finding; the ranks' ends after it are its consequence
        # (read in what the stop's record said, not in the advice the summary already gives after "What to do:",
        # whose own words, "a bkill ..., a preemption", would pick another step)
        said = summary.split(" What to do: ", 1)[0]
        steps.append(what_to_do(said, verdict.culprit_host))
        if "time limit" not in said:
            return tuple(steps)
    elif kind is VerdictKind.NO_PROBLEM_FOUND and END_NOT_SHOWN in summary:
        steps.append("if the job is still running and prints nothing more, it hangs: take the stacks of every rank "
                     "(`triage collect --job JOBID` on SLURM, or `triage dump --match train.py` on each node); if it "
                     "ended, pass the rest of its output (its last lines and the launcher's)")
    elif kind in (VerdictKind.HANG, VerdictKind.FAILURE_UNLOCATED) and launcher == "yarn":
        steps.append("the culprit is a container this input does not show: gather every container's own log "
                     "(`yarn logs -applicationId APPLICATION_ID`) and run triage report on all of it")
    elif kind in (VerdictKind.HANG, VerdictKind.FAILURE_UNLOCATED):
        tagged = per_rank_output(launcher) if launcher else f"{per_rank_output(None)}, srun --label"
        steps.append("the culprit is a rank this input does not show: gather the output of every rank "
                     f"({tagged}) and run triage report on all of it")
        steps.append(LIVE_STACKS)
    if launcher in ("julia", "yarn"):
        # (Julia's workers, YARN's containers: no triage launch, no PyTorch Flight Recorder to enable; a PyTorch job
        # YARN runs shows its own launcher, torchrun's, the innermost)
        return tuple(steps)
    own_gpu_program = gpu and not nccl and _TORCH_GPU_ERROR.search(summary) is None
    if not (kind is VerdictKind.EXCEPTION and LAUNCH_TEXT in summary) and oneccl.WORDS.search(summary) is None \
            and flight_recorder_fits(launcher, stack, gpu_program=own_gpu_program):
        # (oneCCL's failure: the Flight Recorder's knobs are ProcessGroupNCCL's, no step for the ccl backend)
        steps.append(next_time(launcher))      # (a job that never ran: no stack nor Flight Recorder to gather)
    return tuple(steps)


def gpu_wait_steps(act: RankActivityFact) -> tuple[str, ...]:
    """What to do about a rank the agent found waiting on its GPU (a CUDA synchronize, ``.item()``, an
    NCCL ``work.wait()``): not "busy or blocked" on the CPU. What the GPU did then decides: a kernel still
    running (a long kernel, or one that never ends), an idle GPU (the work waited for never ran), or not
    known (no NVML reading). Empty for any other activity."""
    if act.activity != GPU_WAIT:
        return ()
    # (the agent's facts, with a run directory: a log's report leaves the GPU facts' module unloaded)
    from triage.model.gpu import GPU_BUSY_SHARE

    where = f" in {act.gpu_wait}" if act.gpu_wait else ""
    rank = f"rank {act.rank}"
    if act.gpu_util is not None and act.gpu_util >= GPU_BUSY_SHARE:
        state = (f"{rank} waits on its GPU{where} and the GPU is at {act.gpu_util * 100:.0f}%: a kernel is still "
                 "running. A long kernel may be legitimate (raise --gpu-wait-timeout); one that never ends spins "
                 "or deadlocks (a kernel polling a flag, an NCCL kernel whose peer never launched its side)")
        then = ("name the kernel: `py-spy dump --native --pid PID` and `nvidia-smi` on that host while it hangs, "
                "then re-run the step with CUDA_LAUNCH_BLOCKING=1 or under compute-sanitizer")
    elif act.gpu_util is not None:
        state = (f"{rank} waits on its GPU{where} but the GPU is idle ({act.gpu_util * 100:.0f}%): the work it "
                 "waits for is not running: a stream waiting on an event never recorded, a collective whose "
                 "peers never launched it, or a GPU that stopped (an Xid)")
        then = ("check that host's `dmesg -T | grep -i xid` and the bundle's node/gpus.json (Xid events, "
                "ECC), and what the other ranks were doing when it stopped (their stacks in the bundle)")
    else:
        state = (f"{rank} waits on its GPU{where}; the GPU's use was not read (no NVML on that host), so a "
                 "kernel still running cannot be told from an idle GPU")
        then = ("while it hangs, run `nvidia-smi` on that host: near 100% is a kernel still running (a long "
                "or never-ending kernel), 0% an idle GPU waiting for work that never comes (check `dmesg` for "
                "Xid lines); `pip install 'torch-triage[gpu]'` (nvidia-ml-py) lets triage read it next time")
    return state, then
