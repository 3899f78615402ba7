"""What would settle a verdict that names no culprit (pure): when the input cannot tell, the
summary says so and names the one thing that would."""

from __future__ import annotations

import re
from collections.abc import Mapping

from triage.analysis.ranks import rank_word
from triage.lazy_regex import lazy_regex
from triage.model.evidence import RankEvidence
from triage.parsing import oneccl
from triage.parsing.crashlog import PROXY_FAILED, REMOTE_TARGET_TEXT, size_check_sizes
from triage.parsing.launch_failure import BEFORE_EXEC_TEXT, LAUNCH_TEXT
from triage.parsing.mpi_errors import DIRECT_LAUNCH_TEXT, MPI_SIZE_TEXT, MPICH_PMI_TEXT, PMI_INIT_TEXT
from triage.parsing.peers import peer_of

# How to get every rank's output with each line tagged by its rank: torchrun's flag, unless the input shows
# that another launcher started the ranks (triage.parsing.launcher_kind); fit_launcher puts it in.
PER_RANK_OUTPUT = "torchrun --tee 3"
_PER_RANK = {
    "openmpi": "mpirun --tag-output or --output-filename DIR",
    "horovod": "horovodrun --output-filename DIR",
    "hydra": "mpiexec -prepend-rank",
    "mpi": "Open MPI's mpirun --tag-output, MPICH's or Intel MPI's -prepend-rank",
    "slurm": "srun --label",
    "deepspeed": "deepspeed --enable_each_rank_log DIR",
    "spawn": "a rank tag on each spawned process's lines, which torch.multiprocessing.spawn does not add",
    "julia": "the master's `From worker N:` lines, or each worker's log",
    "torchx": "`torchx log` of each replica",
    "ray": "each Ray worker's own log in the session's logs directory on its node",
    "yarn": "each container's own log: `yarn logs -applicationId APPLICATION_ID`",   # (its containers: SETTLE_YARN)
    "htcondor": "each node's own output and error files (the submit file's `output =` and `error =`, with $(Node) "
                "in the parallel universe)",
}
# `triage launch` goes in front of the command that starts a node's ranks, one agent per node (docs/launch.md); under
# Slurm, the sbatch wrapper does that. Ray and torchx start their workers themselves: nothing to put it in front of.
_UNDER_TRIAGE = {
    "slurm": "`slurm/triage.sbatch` (one `triage launch` per node, in front of torchrun)",
    "ray": None,
    "torchx": None,
    "julia": None,
    "yarn": None,
    "htcondor": "`triage launch -- ...` as the job's executable (its program and arguments after it in the submit "
                "file's `arguments =`)",
}
_IN_FRONT = "`triage launch -- ...` in front of the command that starts each node's ranks"


def under_triage(launcher: str | None) -> str | None:
    """How to run the job that ``launcher`` started under `triage launch`; None where triage cannot wrap its ranks."""
    if launcher in (None, "torchrun"):
        return "`triage launch -- torchrun ...`"
    return _UNDER_TRIAGE.get(launcher, _IN_FRONT)


# What would name the rank of a failure no line ties to one.
_OR_UNDER_TRIAGE = ", or the job run under `triage launch`"
SETTLE_RANK = (f"which rank: the ranks' own output with their rank prefixes ({PER_RANK_OUTPUT}{_OR_UNDER_TRIAGE}) "
               "would tell")
# What would settle a Kubernetes Job's failure at its backoff limit told without its pods' output (`kubectl describe
# job` alone: triage.parsing.frameworks.K8S_JOB_BACKOFF)
SETTLE_K8S_JOB = ("which pod and why: this input holds the Job's events only; the pods' own logs (`kubectl logs POD`, "
                  "`--previous` for a restarted container) and `kubectl describe pod` would tell which container "
                  "failed and why")
# What would settle an executor Spark's driver lost with no word of why (triage.parsing.frameworks.SPARK_LOST): the
# note names the executor and where its end is told
SETTLE_SPARK = ("Spark's executors are no ranks: the lost executor's own log and its container's end, named above, "
                "would settle it")
# A Spark (or YARN) job's failure that no line ties to an executor or a container: its jobs have no ranks
SPARK_UNKNOWN = "executor or container unknown: a Spark or YARN job has executors and containers, not ranks"
SETTLE_EXECUTOR = ("which executor: its own log (YARN: `yarn logs -applicationId APPLICATION_ID`; Kubernetes: `kubectl "
                   "logs` of the executor's pod, `--previous` for a restarted one) would tell")
# What would settle the launcher's own death by a signal (mpirun's, not a rank's): its installation on that host
SETTLE_LAUNCHER = ("`ompi_info` and `which mpirun` on that host would settle it: the launcher's own installation, "
                   "no rank's output (where its frames run through hwloc's topology load, `lstopo` run there shows "
                   "the same fault)")

# What would settle a failure told in words triage has no reader for (a library, launcher or runtime it never saw).
# (one template: who printed the line, and whose lines before it, are a rank's here and a YARN container's below)
_SETTLE_UNREAD = ("triage has no reader for these words, so it cannot tell what failed nor where; {who}, {whose} lines "
                  "before it, and the library's own documentation of the message would settle it")
SETTLE_UNREAD = _SETTLE_UNREAD.format(
    who=f"which rank printed the line (the ranks' own output with their rank prefixes: {PER_RANK_OUTPUT})",
    whose="that rank's")
# What would name the rank that failed first, when the input shows only later failures.
SETTLE_FIRST = (f"the log of the rank that failed first (every rank's output: {PER_RANK_OUTPUT}, or the job run under "
                "`triage launch`) would settle it")


def per_rank_output(launcher: str | None) -> str:
    """How the launcher that started the ranks (a name of triage.parsing.launcher_kind) tags every line with
    its rank: torchrun's flag where the input shows no other."""
    return _PER_RANK.get(launcher or "", PER_RANK_OUTPUT)


# Julia's Distributed has workers of ids (the master being 1), no ranks: what names the one that failed is its own lines
SETTLE_JULIA = ("which worker: the workers' own lines (the master's `From worker N:` lines before the failure, or each "
                "worker's log) would tell; Julia's Distributed numbers its workers, the master being 1, and has no "
                "ranks")
SETTLE_JULIA_NAMED = ("what led to it: that worker's own lines before it (the master's `From worker N:` lines, or its "
                      "log) would tell; Julia's Distributed numbers its workers, the master being 1, and has no ranks")


# YARN runs containers (Spark's executors, a MapReduce task, TensorFlowOnSpark's nodes), which have no ranks: what
# names the one that failed is its own log, which YARN keeps per container
_YARN_LOGS = "each container's own log (`yarn logs -applicationId APPLICATION_ID`)"
SETTLE_YARN = (f"which container: {_YARN_LOGS} would tell; YARN runs containers (Spark's executors, a MapReduce task), "
               "not ranks")
SETTLE_UNREAD_YARN = _SETTLE_UNREAD.format(who=f"which container printed the line ({_PER_RANK['yarn']})",
                                          whose="that container's")
_YARN_SETTLES = (
    (SETTLE_RANK, SETTLE_YARN),
    (SETTLE_EXECUTOR, SETTLE_YARN),
    (SETTLE_FIRST, f"the log of the container that failed first ({_PER_RANK['yarn']}) would settle it"),
    (SETTLE_UNREAD, SETTLE_UNREAD_YARN),
)


def fit_launcher(text: str, launcher: str | None) -> str:
    """``text`` with torchrun's per-rank output flag replaced by the launcher's own; under Julia's Distributed, the
    question of which rank is which worker's, or what led to it where the text names Julia's worker already; under
    YARN, which container's."""
    if (launcher == "julia" or "Julia's worker" in text) and SETTLE_RANK in text:
        return text.replace(SETTLE_RANK, SETTLE_JULIA_NAMED if "Julia's worker" in text else SETTLE_JULIA)
    if launcher == "yarn":
        for ranks, containers in _YARN_SETTLES:
            text = text.replace(ranks, containers)
    fitted = per_rank_output(launcher)
    if under_triage(launcher) is None:      # (Ray, torchx, YARN start their workers themselves: no `triage launch`)
        text = text.replace(_OR_UNDER_TRIAGE, "")
    return text if fitted == PER_RANK_OUTPUT else text.replace(PER_RANK_OUTPUT, fitted)
MAX_NAMED_ABSENT = 4


def settle_hang(ranks: tuple[RankEvidence, ...], timed_out: list[int], cov: Mapping[str, object]) -> str:
    """The one thing that would name the rank the waiting ranks waited for: the log of the few
    ranks the input lacks, else every rank's log or stack."""
    world = cov.get("world_size")
    shown = {r.rank for r in ranks} | set(timed_out)
    if isinstance(world, int) and 0 < world - len(shown) <= MAX_NAMED_ABSENT:
        absent = [r for r in range(world) if r not in shown]
        return f"the log of {rank_word(absent)} would settle it"
    return (f"every rank's log ({PER_RANK_OUTPUT}), or the job run under `triage launch` (each rank's stack when it "
            "hangs), would settle it")


# A set-up failure in which no rank is at fault: what would settle it is the port or the node, never a rank
_PORT_TAKEN = lazy_regex(r"EADDRINUSE|[Aa]ddress already in use|failed to listen on any local network address")
_PORT = lazy_regex(r"\bport:? (\d{2,5})\b|:(\d{2,5})\b")
_PROGRAM = lazy_regex(LAUNCH_TEXT + r": could not start (?:the module (?P<module>[\w.]+)|"
                      r"the tasks of step (?P<step>\S+) on node (?P<node>[^\s()]+)|(?!the program\b)(\S+))")
_SSH = lazy_regex(r"via ssh|ssh exited|ssh: connect to host|Permission denied \(publickey")


def settle_setup(text: str, host: str | None) -> str | None:
    """What would settle a failure of the job's set-up that no rank caused (the store's port taken, a
    node the launcher cannot ssh to, a program the launcher could not start), or None for any other failure."""
    if _PORT_TAKEN.search(text):
        found = _PORT.search(text)
        port = next((g for g in found.groups() if g), None) if found else None
        where = f"on {host}" if host else "on the node that runs the store (MASTER_ADDR)"
        what = f"port {port}" if port else "the store's port (MASTER_PORT)"
        probe = f"`ss -ltnp 'sport = :{port}'`" if port else "`ss -ltnp`"
        return (f"{probe} {where} would settle it: it names the process that holds {what} (another job, a stale "
                "run); free it or choose another MASTER_PORT (--master_port)")
    if LAUNCH_TEXT in text:
        program = _PROGRAM.search(text)
        where = host or "each node the job runs on"
        if program is not None and program.group("module"):
            module = program.group("module")
            return (f"the program never started, so no rank's log will show more: `python -c 'import {module}'` on "
                    f"{where}, from the job's working directory with the job's PYTHONPATH, would settle it (and the "
                    "job's environment, its venv, conda or module set-up and PATH, must be the same there as where it "
                    "runs)")
        if "Slurm refused it an allocation" in text:
            return ("the job never got its nodes, so no rank ran: Slurm's reason after 'error:' would settle it; it "
                    "says what Slurm refused (an account or partition the user may not use: `sacctmgr show assoc "
                    "user=$USER`; nodes that cannot meet the request: `sinfo -o '%P %G %c %m %l'` against the job's "
                    "--gres, --cpus, --mem and --time)")
        if BEFORE_EXEC_TEXT in text:
            return (f"the step's tasks never reached the program on {where}, so no rank's log will show more: the "
                    "lines before this one of what failed in the step's set-up (a SPANK plugin's: pyxis's and enroot's "
                    f"for a container) and the slurmd log on {where} (`journalctl -u slurmd`, or slurmd.log) would "
                    "settle it")
        if program is not None and program.group("step"):
            node = program.group("node")
            return (f"the step's tasks never started on {node}, so no rank's log will show more: srun's reason after "
                    f"the node's name and {node}'s slurmd log (`journalctl -u slurmd` or slurmd.log there) would "
                    "settle it "
                    "(an "
                    "expired job credential: the nodes' clocks and munge; a CPU binding refused: SLURM_CPU_BIND* "
                    "inherited from an outer srun or sbatch)")
        what = program.group(4) if program else "the program"
        return (f"the program never started, so no rank's log will show more: `ls -l` and `file` of {what} on "
                f"{where}, as the job's user, would settle it (missing, not executable, a binary of another "
                "machine; and the job's environment, its venv, conda or module set-up and PATH, must be the same "
                "there as where it runs)")
    if DIRECT_LAUNCH_TEXT in text and f"srun {DIRECT_LAUNCH_TEXT}" not in text:
        return ("no rank ran: `ompi_info` (the launchers and process-manager interfaces Open MPI was built with) would "
                "settle it; start the program with mpirun inside the allocation, or rebuild Open MPI with that "
                "launcher's support")
    if DIRECT_LAUNCH_TEXT in text or PMI_INIT_TEXT in text:
        # (Open MPI's box of a program srun or aprun started directly: a build option of the installation)
        return ("no rank ran: `srun --mpi=list` (what Slurm offers) and `ompi_info` (its PMI lines: what Open MPI was "
                "built with) would settle it; start the program with mpirun inside the allocation, or under srun with "
                "an interface both have (`srun --mpi=pmix`, or pmi2), or rebuild Open MPI with Slurm's PMI "
                "(--with-pmi=<Slurm's prefix>) or PMIx (--with-pmix)")
    if MPICH_PMI_TEXT in text:
        # (MPICH's PMI client reads its launcher's connection from the environment: PMI_FD or PMI_PORT, PMI_RANK,
        # PMI_SIZE; a launcher of another MPI, or an edited command line, gives it none or a dead one)
        return ("no rank ran: `env | grep PMI` in the process's environment (the PMI variables its launcher gave it: "
                "PMI_FD or PMI_PORT, PMI_RANK, PMI_SIZE) would settle it; start the program with the mpiexec of the "
                "MPI library it was built with (`ldd` of the program names its libmpi), or under srun with the PMI "
                "that library takes (`srun --mpi=pmi2`)")
    if _SSH.search(text):
        target = host or "NODE"
        unnamed = "" if host else (" (NODE: the node it could not reach, not in this input; the hostfile names the "
                                   "nodes)")
        return (f"`ssh -o BatchMode=yes {target} true` from the node that launches the job would settle it (keys, "
                f"known_hosts, the hostfile's names){unnamed}")
    return None


# A network failure no line ties to a rank: which rank reported it settles nothing; the link does
NETWORK_EVERY = ("NCCL_DEBUG=INFO output of every rank (which peer, address or interface failed first, and the peer's "
                 "own log) would settle it")
_STORE = lazy_regex(r"client socket has timed out|RendezvousConnectionError|C10d store|DistNetworkError|"
                    r"connect\(\) timed out|host not found|Name or service not known|[Ff]ailed to connect to|"
                    r"to any network address|client mesh master|rendezvous store|reach the store")
# gRPC's words for a peer it cannot reach (TensorFlow's and JAX's collectives and coordination service): no store's
_GRPC = lazy_regex(r"\bfailed to connect to all addresses\b|\bUNAVAILABLE: (?:Socket closed|Stream removed|"
                   r"Connection reset)\b")
# XLA's remote TPU driver that could not open its session to the TPU host ("Failed to connect to remote server at
# address: grpc://10.92.96.58:8470. Error from gRPC: ...", its log's "Failed to open the gRPC driver: 4: ..."): the
# TPU host's own state, not a store's or a peer rank's
TPU_DRIVER = lazy_regex(r"Failed to connect to remote server at address: (?:grpc://)?(?P<host>[\w.-]+):(?P<port>\d{2,5})"
                         r"|Failed to open the gRPC driver: ")
# the task gRPC's detail line named (triage.load.logs.line_events): the peer of TensorFlow's network failure
_GRPC_TASK = lazy_regex(re.escape(REMOTE_TARGET_TEXT) + r" (?P<task>/job:[\w.-]+/replica:\d+/task:(?P<n>\d+))")
# Ascend HCCL's own words (its error codes EI0006 and kin, its CANN log's "HCCL(pid,name)" head): its knobs, not NCCL's
HCCL = lazy_regex(r"\bHCCL\b|\bEI00\d\d\b|\bwait socket establish timeout\b")
HCCL_SETTLE = ("the other ranks' own logs would settle it (CANN's first step for a socket timeout: a rank with its "
               "own error, or one that never reached the link set-up, is the peer it waited for; if every rank timed "
               "out, compare their times with HCCL_CONNECT_TIMEOUT, 120 s by default; each rank's CANN log with "
               "ASCEND_GLOBAL_LOG_LEVEL=1 names the peer)")
# libfabric's own log line ("libfabric:PID:TIME::efa:cq:FUNC():LINE<warn> ..."): its knobs, not NCCL's
LIBFABRIC = lazy_regex(r"\blibfabric:\d+:")
LIBFABRIC_SETTLE = ("libfabric's own log of every rank (FI_LOG_LEVEL=warn, info for more; FI_LOG_PROV=<provider> to "
                    "keep one provider's) and the peer's own log would settle it (which peer became unreachable or "
                    "unresponsive first, and whether it died before: a peer that died shows up so on the others); "
                    "`fi_info -p <provider>` on each node checks the provider and its devices")
_STORE_ADDR = lazy_regex(r"\(([\w.:\[\]-]+), ?(\d{2,5})\)|\b((?:\d{1,3}\.){3}\d{1,3}|[a-z][\w.-]*):(\d{2,5})\b")
_NCCL = lazy_regex(r"NCCL|nccl")
_SHM = lazy_regex(r"/dev/shm|shared memory segment|posix_fallocate")  # noqa: S108 (a pattern, not a path)
_PEER = lazy_regex(r"\bpeer\b|remote process exited|Connect to |Call to (?:connect|recv|send)")
# the other end as NCCL and gloo print it: "from peer 10.0.0.5<49189>", "Connect to 10.0.0.5<21724>", "Call to recv
# from 172....<33759>", "Connection closed by peer [10.0.0.5]:43185", "Read error [10.0.0.5]:25266"
_PEER_ADDR = lazy_regex(r"(?:\bpeer|\bto|\bfrom) \[?([\w.:%-]+?)\]?(?:<\d+>|:\d+\b)|\[([\w.:%-]+)\]:\d+")


# an MPI runtime's or its fabric's own words for a failed link (MPICH's error stack "MPIDI_CH3I_Progress(1051)",
# "[ch3:sock]", Cray MPICH's "MPICH ERROR", libfabric's "OFI poll failed", "PTLTE_NOT_FOUND"): its knobs, not NCCL's
_MPI_NET = lazy_regex(r"\b(?:P?MPI|MPID\w*|MPIR|MPIC)_\w+\(|\bMPICH\b|\[ch3:sock\]|\bch3:sock\b|\bOFI\b|"
                      r"\blibfabric\b|\bfi_\w+\(|\bPTLTE_\w+")
# a launcher's session to a node that its other end dropped (ssh's "Connection to node7 closed by remote host.", MPICH
# Hydra's "connection to proxy 2 at host node7 failed"), and GASNet's undeliverable active message ("Error Code:
# ECONGESTION", "EUNREACHABLE")
_NODE_LOST = lazy_regex(r"Connection to (?P<ssh>[\w.-]+) closed by remote host|"
                        r"connection to proxy \d+ at host (?P<proxy>[\w.-]+) failed")
_GASNET_AM = lazy_regex(r"\bError Code: E(?:CONGESTION|UNREACHABLE)\b")
_MPI_PEER_RANK = lazy_regex(r"\b(?:Communication error with|connect to) rank (\d+)")


def settle_network(text: str, host: str | None) -> str:
    """What would settle a network failure that no line ties to a rank, fitted to what failed: the store's
    address a client could not reach, /dev/shm, an MPI link (its fabric's own log), the peer of a broken link, else
    every rank's NCCL_DEBUG=INFO.
    ``host``: the host the failure line names, the peer unless the line's own ``host:pid`` head names it."""
    if _SHM.search(text):
        # (a knob to do without shared memory: NCCL's where NCCL's words are, oneCCL's where its are, none else)
        without = (", or CCL_ATL_TRANSPORT=mpi or FI_PROVIDER=tcp to do without it" if oneccl.WORDS.search(text)
                   else ", or NCCL_SHM_DISABLE=1 to do without it" if _NCCL.search(text) else "")
        return ("`df -h /dev/shm` where the ranks run would settle it (a container's default is 64 MB: `docker run "
                f"--shm-size`{without})")
    if HCCL.search(text):
        return HCCL_SETTLE
    if LIBFABRIC.search(text):
        return LIBFABRIC_SETTLE
    if (driver := TPU_DRIVER.search(text)) is not None:
        host, port = driver.group("host"), driver.group("port")
        where = (f"the TPU host's driver at {host}:{port} (`nc -zv {host} {port}` from this machine)" if host
                 else "the TPU host's driver")
        return (f"whether this machine reaches {where} and the TPU's own state (`gcloud compute tpus describe`: READY "
                "and HEALTHY, not preempted, restarting or under maintenance) would settle it: the backend never "
                "opened its session to the TPU")
    if (task := _GRPC_TASK.search(text)) is not None:
        return (f"the log of task {task.group('n')} ({task.group('task')}: whether it died, was preempted or "
                "restarted before this call) would settle it: a task that went away shows up so on the others")
    if _GRPC.search(text):
        return ("the log of the process the gRPC call could not reach (TensorFlow's or JAX's task that the error's "
                "'remote target /job:.../task:N' names: whether it died or was preempted first) would settle it")
    if _STORE.search(text):
        found = _STORE_ADDR.search(text)
        name, port = (found.group(1) or found.group(3), found.group(2) or found.group(4)) if found else (None, None)
        where = f"the store at {name}:{port}" if found else "the store (MASTER_ADDR:MASTER_PORT)"
        probe = f"`nc -zv {name} {port}`" if found else "`nc -zv MASTER_ADDR MASTER_PORT`"
        return (f"{probe} from this node would settle it: whether it reaches {where} (the store runs with rank 0 on "
                "the first node: not up yet, a firewall, or a name that does not resolve)")
    if (proxy := PROXY_FAILED.search(text)) is not None:
        return (f"the NCCL_DEBUG=INFO log of rank {proxy.group('rank')} of the communicator (which connection its "
                f"{proxy.group('op')} made, to which peer, and whether that peer failed first) would settle it")
    if (lost := _NODE_LOST.search(text)) is not None:
        node = lost.group("ssh") or lost.group("proxy")
        return (f"node {node}'s own state at that time (the batch system's record of the node, its syslog and dmesg) "
                "would settle it: whether it went down, rebooted or was taken away, or whether the network to it "
                "dropped; the launcher lost its session there, and the ranks on it with it")
    if _GASNET_AM.search(text):
        return ("the destination node's own log (GASNET_BACKTRACE=1 on every node) and the network between the two "
                "nodes would settle it: GASNet could not deliver an active message (a congested or unreachable "
                "endpoint: an overloaded receiver, or packets lost on the conduit); NCCL's logs say nothing of GASNet")
    if _MPI_NET.search(text):
        lost = _MPI_PEER_RANK.search(text)
        first = (f"rank {lost.group(1)}'s own output (whether it failed first: a process that died shows up as a "
                 f"communication error on its peers) and " if lost else "")
        return (f"{first}every rank's MPI error stack with the fabric's own log would settle it "
                "(MPICH_OFI_VERBOSE=1 and FI_LOG_LEVEL=warn for libfabric under Cray MPICH or Intel MPI; Open MPI's "
                "--mca btl_base_verbose 100); NCCL's logs say nothing of an MPI link")
    if _PEER.search(text):
        found = _PEER_ADDR.search(text)
        peer = (found.group(1) or found.group(2)) if found else (
            host if host and re.search(rf"{re.escape(host)}:\d", text) is None else None)
        who = f"the peer {peer}" if peer else "the peer"
        return (f"the log of {who} (which rank ran there, and whether it failed first: a peer that died shows up as a "
                "network error on the others) would settle it")
    return NETWORK_EVERY


def mpi_size_body(reporter: str, detail: str) -> str:
    """MPICH's size check as a mismatch between ranks, found by ``reporter``'s MPI call, and what would settle which
    rank's call was wrong."""
    note = detail[detail.index(MPI_SIZE_TEXT):]
    return (f"{note}; reported by {reporter}, whose MPI call failed on it; which rank's call was wrong is not in this "
            "input: the count and datatype each rank passes at that call (the program's code there) would settle it")


def size_check_body(reporter: str, detail: str) -> str:
    """NCCL's net transport found a send larger than the receive its peer posted (``collective mismatch error,
    local size X remote size Y``): the two ranks called collectives of different sizes (or different collectives).
    The line names the reporter and the peer's address, not which of the two left the common path: what would tell
    is said."""
    sizes = size_check_sizes(detail)
    peer = peer_of(detail.rsplit("Last error:", 1)[-1]) or peer_of(detail)
    to = f"its peer {peer}" if peer else "its peer"
    told = (f"sent {sizes[0]} bytes where {to} had posted a receive of {sizes[1]} bytes" if sizes
            else f"sent more than {to} had posted a receive for")
    return (f"{reporter} {told} (NCCL's size check, `collective mismatch error`): the ranks called collectives of "
            "different sizes, or different collectives, at the same point (not a network failure); which rank left "
            "the common path is not in this input: the peer's log, or the run again with "
            "TORCH_DISTRIBUTED_DEBUG=DETAIL (each rank's call checked against the others'), would settle it")
