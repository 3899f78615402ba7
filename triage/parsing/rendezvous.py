"""Lines that say a job is stuck before its first collective: init_process_group's store-based
barrier, the TCPStore waiting for its clients, a client that cannot reach the store, and
torchelastic's rendezvous timeouts. Formats as PyTorch prints them (distributed_c10d.py,
TCPStore.cpp / socket.cpp, torch/distributed/elastic/rendezvous)."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from triage.lazy_regex import lazy_regex


class InitWaitKind(str, enum.Enum):
    BARRIER_WAITING = "barrier_waiting"     # "Waiting in store based barrier ... worker_count=C"
    BARRIER_TIMEOUT = "barrier_timeout"     # "Timed out initializing process group in store based barrier"
    STORE_CLIENTS = "store_clients"         # the store's server: "Timed out after N seconds waiting for clients. J/W"
    CONNECT_TIMEOUT = "connect_timeout"     # a client: "The client socket has timed out ... to (host, port)"
    CONNECT_REFUSED = "connect_refused"     # a client: "failed to connect to [host]:port (... Connection refused)"
    RENDEZVOUS_TIMEOUT = "rendezvous_timeout"   # torchelastic: RendezvousTimeoutError / "rendezvous ... timed out"
    STORE_WAIT_TIMEOUT = "store_wait_timeout"   # socket.cpp: "waitForInput: socket ... remote=[host]:port) timed out",
    # TCPStore get/wait: "Socket Timeout" (from doWait), "wait timeout after 1800000ms, keys: /k",
    # "Timed out waiting 1800000ms for key", FileStore's "Timeout waiting for key"
    UNIQUE_ID_WAIT = "unique_id_wait"       # "[1] is setting up NCCL communicator and retrieving ncclUniqueId from [0]"
    # JAX's and TensorFlow's coordination service: a barrier timed out ("DEADLINE_EXCEEDED: Barrier timed out. ...
    # Timed out task names: /job:jax_worker/replica:0/task:3"), tasks that stopped sending heartbeats
    COORDINATION_BARRIER = "coordination_barrier"
    COORDINATION_HEARTBEAT = "coordination_heartbeat"
    # the agent's own registration call that failed (RegisterTask's gRPC detail): a process that could not register
    # with the service at start-up (progress after it says it registered on a retry)
    COORDINATION_REGISTER = "coordination_register"
    # JAX's warning while its accelerator backend is still being set up ("TPU backend initialization is taking more
    # than 60.0 seconds. Did you run your code on all TPU hosts?"): on a pod slice the backend waits for the same
    # program on every host; still waiting, not a timeout (progress after it says the hosts arrived late)
    BACKEND_WAIT = "backend_wait"
    # a start-up waiting for cluster resources that never came: vLLM's Ray placement group still not created
    # ("Waiting for creating a placement group of specs for 70 seconds. specs=[...]", vllm/executor/ray_utils.py
    # _wait_until_pg_ready) or given up on ("Cannot provide a placement group of placement_group_specs=[...] within
    # 1800 seconds"), Ray's autoscaler's request no node type can fulfil ("Error: No available node types can fulfill
    # resource request {'GPU': 1.0}. Add suitable node types to this cluster to resolve this issue."), a Ray cluster's
    # count of its nodes below the count its start-up waits for ("Ray cluster status: 1/2 nodes alive.", the
    # vLLM production stack's wait_for_ray.py); what it waits for is the missing node or GPU (progress after it, or a
    # line that the resources came, says it came late: not a hang)
    RESOURCE_WAIT = "resource_wait"


@dataclass(frozen=True)
class InitWait:
    """A line of a rank waiting in (or failing) the process group's rendezvous."""
    kind: InitWaitKind
    text: str
    rank: int | None = None
    world_size: int | None = None
    joined: int | None = None              # how many ranks/clients had arrived
    address: str | None = None             # the store's host:port a client tried to reach
    timeout_s: float | None = None
    waits_for: int | None = None           # the rank that never arrived, when the line names it
    absent: tuple[int, ...] = ()           # the processes (coordination tasks) the line names as never arrived

    @property
    def is_timeout(self) -> bool:
        return self.kind not in (InitWaitKind.BARRIER_WAITING, InitWaitKind.BACKEND_WAIT) and not (
            self.kind is InitWaitKind.RESOURCE_WAIT and self.timeout_s is None)


# the words of a start-up's wait for cluster resources (RESOURCE_WAIT), each a literal of the line gate
RESOURCE_MARKERS = ("placement group", "node types can fulfill", "nodes alive")
# the store's own waits for its clients, and torchelastic's rendezvous: the words the large-log pass finds as one
# needle each group (triage.load.logs.large.ONE_NEEDLE, caseless)
STORE_WORDS = ("store based barrier", "waiting for clients", "waiting for workers")
RENDEZVOUS_WORDS = ("rendezvous",)

# How a store wait that timed out after the job's start is described as a timeout event (the loader
# writes it, the analysis reads it)
STORE_WAIT_DETAIL = "timed out waiting on the c10d store for a peer"

MARKERS = ("ncclUniqueId", *STORE_WORDS, "client socket", "ailed to connect to ",
           "waitForInput", "Socket Timeout", "for key", "wait timeout after",
           "RendezvousTimeoutError", "Rendezvous", "rendezvous", "Barrier timed out",
           "missing heartbeats", "heartbeat timeout", "eartbeat timeout", "stopped sending heartbeats",
           "service detected fatal errors", "backend initialization is taking", "CoordinationService/RegisterTask",
           *RESOURCE_MARKERS)

# The coordination service of JAX and TensorFlow (XLA's tsl/distributed_runtime/coordination) names its processes as
# tasks, "/job:jax_worker/replica:0/task:3": task N is process N (jax.process_index(), the rank). Its barrier's
# timeout lists the tasks that never reached it after "Timed out task names:" (the task that reported it did; "The
# first task at the barrier: ..." is one that arrived), its heartbeat check the tasks that stopped sending them.
_TASK = lazy_regex(r"/job:[\w-]+/replica:\d+/task:(\d+)")
# (a GitHub quote marker may stand before each line of the list: "> /job:jax_worker/replica:0/task:3")
_TASK_LINE = lazy_regex(r"^(?:\s*>)*\s*/job:[\w-]+/replica:\d+/task:(\d+)\s*$")
_COORD_BARRIER = lazy_regex(r"Barrier timed out\.(?: (?:Barrier_id|Id): (?P<id>[\w./:-]+?)\.(?=\s|$))?")
_COORD_ABSENT = lazy_regex(r"[Tt]imed out task names:|stopped sending heartbeats\):")
_COORD_REACHED = lazy_regex(r"# of tasks that reached the barrier: (?P<joined>\d+)/(?P<world>\d+)")
_COORD_HEARTBEAT = lazy_regex(r"tasks are unhealthy \(stopped sending heartbeats\)|[Tt]ask (?P<task>/job:[\w-]+/"
                              r"replica:\d+/task:\d+) heartbeat timeout|detected missing heartbeats|"
                              r"[Hh]eartbeat timeout.{0,40}?/job:[\w-]+/replica:\d+/task:\d+|"
                              # the agent's own end after the service told it of another task's death
                              r"distributed service detected fatal errors")
# the gRPC detail of the agent's registration call that failed, on its own line ("Additional GRPC error information
# from remote target unknown_target_for_coordination_leader while calling
# /tensorflow.CoordinationService/RegisterTask:", before the call's status, DEADLINE_EXCEEDED where the leader never
# answered): a process could not register with the coordination service at start-up, so the job never finished
# initialising (a viewer's line number, "[80001] ", and a quote's "> " may stand before it)
_COORD_REGISTER = lazy_regex(r"^(?:\[\d+\] )?[\s>]*Additional GRPC error information from remote target \S+ "
                             r"while calling /tensorflow\.CoordinationService/RegisterTask:?\s*$")
COORDINATION_KINDS = (InitWaitKind.COORDINATION_BARRIER.value, InitWaitKind.COORDINATION_HEARTBEAT.value,
                      InitWaitKind.COORDINATION_REGISTER.value)
MAX_TASK_LINES = 64          # the task-name lines a coordination error lists under its head, read as its own


def coordination_more(line: str) -> tuple[int | None, bool, tuple[int, int] | None] | None:
    """What a line after a coordination error's head adds to it: the task a line holding only a task's name names,
    whether it opens the list of absent tasks ("Some timed out task names:"), how many tasks reached the barrier
    ("# of tasks that reached the barrier: 2/4"); None when it is none of these."""
    if "/job:" in line and (task := _TASK_LINE.match(line)) is not None:
        return int(task.group(1)), False, None
    listed = _COORD_ABSENT.search(line) if "task names:" in line or "heartbeats):" in line else None
    reached = _COORD_REACHED.search(line) if "reached the barrier" in line else None
    if listed is None and reached is None:
        return None
    return None, listed is not None, (int(reached.group("joined")), int(reached.group("world"))) if reached else None


def _coordination(line: str, text: str) -> InitWait | None:
    """The coordination service's barrier timeout or heartbeat failure, with the tasks it names as absent."""
    barrier = _COORD_BARRIER.search(line) if "Barrier timed out" in line else None
    beat = _COORD_HEARTBEAT.search(line) if barrier is None and ("eartbeat" in line or "fatal errors" in line) \
        else None
    if barrier is None and beat is None:
        if "/RegisterTask" in line and _COORD_REGISTER.match(line) is not None:
            return InitWait(InitWaitKind.COORDINATION_REGISTER, text)
        return None
    listed = _COORD_ABSENT.search(line)
    absent: tuple[int, ...] = ()
    if listed is not None:
        # (a gRPC detail keeps the list on its one line, "...task names:\n/job:...task:3\n...": up to its end)
        tail = line[listed.end():]
        stop = tail.find('"', 0)
        absent = tuple(dict.fromkeys(int(t) for t in _TASK.findall(tail if stop < 0 else tail[:stop])))
    elif beat is not None and beat.group("task"):
        absent = (int(_TASK.search(beat.group("task")).group(1)),)  # type: ignore[union-attr]
    elif beat is not None and (named := _TASK.search(line, beat.start())) is not None and "heartbeat timeout" in line:
        absent = (int(named.group(1)),)
    reached = _COORD_REACHED.search(line)
    kind = InitWaitKind.COORDINATION_BARRIER if barrier is not None else InitWaitKind.COORDINATION_HEARTBEAT
    return InitWait(kind, text, world_size=int(reached.group("world")) if reached else None,
                    joined=int(reached.group("joined")) if reached else None, absent=absent)


_BARRIER = lazy_regex(
    r"(?P<what>Waiting in store based barrier to initialize process group for rank:|Timed out initializing "
    r"process group in store based barrier on rank:?)\s*(?P<rank>\d+),\s*(?:for )?key:\s*(?P<key>\S+?)\s*"
    r"\(world_size=(?P<world>\d+),\s*worker_count=(?P<count>\d+),\s*"
    r"timeout=(?P<timeout>[\d:.]+(?: day[s]?, [\d:.]+)?)\)")


def barrier_key(text: str) -> str | None:
    """The store key of a store-based barrier's line (``store_based_barrier_key:1``: one barrier of one group), or
    None where the text is no such line."""
    match = _BARRIER.search(text) if "store based barrier" in text else None
    return match.group("key") if match is not None else None


_CLIENTS = lazy_regex(r"Timed out after (?P<secs>\d+(?:\.\d+)?) seconds waiting for (?:clients|workers)\. "
                      r"(?P<joined>\d+)/(?P<world>\d+) (?:clients|workers) joined")
_CONNECT_TIMEOUT = lazy_regex(r"client socket has timed out after (?P<secs>\d+(?:\.\d+)?)\s*(?P<unit>m?s) while "
                              r"trying to "
                              r"connect to \(?(?P<addr>[^\s,()\]]+|\[[^\]]+\])(?:,\s*|:)(?P<port>\d+)\)?")
# a client that could not connect to the store, whatever the reason it gives ("... (errno: 111 - Connection
# refused)", "(errno: 99 - Cannot assign requested address)", "(errno: 22 - Invalid argument)", Windows' "(system error:
# 10049 - ...)"), and the store's own "Failed to connect to master:29500 after 300 seconds" (DistStoreError)
_CONNECT_REFUSED = lazy_regex(r"client socket has failed to connect to (?:\[(?P<host>[^\]\s]+)\]|"
                              r"(?P<host2>[A-Za-z0-9][\w.-]*|\d{1,3}(?:\.\d{1,3}){3})):(?P<port>\d{2,5})(?![\d.])|"
                              r"client socket has failed to connect to any network address of "
                              r"\((?P<host3>[^\s,()]+), (?P<port3>\d+)\)|"
                              # (the bare words only where the line says it is the store's: a hub's or a logger's
                              # "Failed to connect to huggingface.co:443" is no store)
                              r"(?:DistStoreError|TCPStore|c10d|[Ss]tore|[Rr]endezvous)\b.{0,120}?\b[Ff]ailed to "
                              r"connect to (?:\[(?P<host4>[^\]\s]+)\]|(?P<host5>[A-Za-z0-9][\w.-]*)):"
                              r"(?P<port4>\d{2,5})(?![\d.])|"
                              # torch_xla's XRT workers, which could not reach the mesh master of xmp.spawn
                              r"[Ff]ailed to connect to client mesh master: (?P<host6>[A-Za-z0-9][\w.-]*):"
                              r"(?P<port6>\d{2,5})(?![\d.])")
# why a client could not connect, in the words its line gives (errno's text), for the finding
_CONNECT_WHY = lazy_regex(r"\((?:errno|system error): \d+ - (?P<why>[^)]{1,80})\)|"
                          r"(?P<after>after \d+(?:\.\d+)? ?m?s(?:econds)?)")
# A barrier timeout retold without its numbers ("timed out initializing process group in store based barrier")
_BARRIER_BARE = lazy_regex(r"timed out initializing process group in store based barrier", re.IGNORECASE)
_WAIT_FOR_INPUT = lazy_regex(r"waitForInput: socket SocketImpl\(.*?remote=\[?(?P<host>[^\]\s]+?)\]?:(?P<port>\d+)\)"
                             r" timed out after (?P<ms>\d+)\s*ms")
_UNIQUE_ID = lazy_regex(r"\[(?P<rank>\d+)\] is setting up NCCL communicator and retr(?:ie|ei)ving ncclUniqueId from "
                        r"\[(?P<root>\d+)\] via c10d key-value store by key '[^']*',? but store->get\('[^']*'\) got "
                        r"error: (?P<error>.+)")
# A TCPStore/FileStore get or wait that timed out: the rank waited on the store for a key another rank
# never set (a peer that did not arrive), not a network failure.
_STORE_KEY_WAIT = lazy_regex(r"\bSocket Timeout\b|[Tt]imed? ?out waiting (?:(?P<ms>\d+)\s*ms )?for (?:the )?keys?\b|"
                             r"\bwait timeout after (?P<ms2>\d+)\s*ms,? keys?\b")
_BACKEND_WAIT = lazy_regex(r"\b(?P<backend>[A-Z]{2,5}) backend initialization is taking more than "
                           r"(?P<secs>\d+(?:\.\d+)?) seconds")
# (RESOURCE_WAIT, above) vLLM's placement group wait and its timeout, what the group's specs ask for; Ray's
# autoscaler's infeasible request; a Ray cluster's alive nodes of the count it waits for
_PLACEMENT_WAIT = lazy_regex(r"Waiting for creating a placement group of specs for (?P<secs>\d+) seconds\.?"
                             r"(?: specs=(?P<specs>\[[^\]]{1,300}\]))?")
_PLACEMENT_GIVEN_UP = lazy_regex(r"Cannot provide a placement group of (?:placement_group_specs=)?"
                                 r"(?P<specs>\[[^\]]{1,300}\]) within (?P<secs>\d+) seconds")
_INFEASIBLE = lazy_regex(r"No available node types can fulfill resource requests? (?P<specs>\{[^}]{1,200}\})")
_NODES_ALIVE = lazy_regex(r"\bRay cluster status: (?P<joined>\d+)/(?P<world>\d+) nodes alive\b")
# a line after such a wait that says the resources came: the wait's own count complete, the chart's "Cluster is
# ready.", vLLM's Ray workers' own lines (their actor's tag: the placement group was made), the engine's model loaded
# or its server started
_RESOURCES_CAME = lazy_regex(r"\bRay cluster status: (?P<joined>\d+)/(?P<world>\d+) nodes alive\b|"
                             r"^\W*(?:\[[^\]]*\] )?(?:Cluster is ready\.|Ray is ready\b)|"
                             r"\((?:RayWorkerWrapper|RayWorkerVllm|RayWorkerProc) pid=\d+|"
                             r"\bLoading model weights took |\bModel loading took |\bApplication startup complete\b|"
                             r"(?<!\S)# (?:GPU|CPU) blocks: \d+")


def resources_came(line: str) -> bool:
    """The line says a start-up's wait for cluster resources (RESOURCE_WAIT) was over: they came."""
    if ("Ray" not in line and "ready" not in line and "took" not in line and "complete" not in line
            and "blocks:" not in line):
        return False
    came = _RESOURCES_CAME.search(line)
    return came is not None and (came.group("joined") is None or int(came.group("joined")) >= int(came.group("world")))


def _resource_wait(line: str, text: str) -> InitWait | None:
    """A start-up's wait for cluster resources (RESOURCE_WAIT): vLLM's placement group, Ray's nodes."""
    if "placement group" in line:
        if (m := _PLACEMENT_GIVEN_UP.search(line)) is not None:
            return InitWait(InitWaitKind.RESOURCE_WAIT, text, timeout_s=float(m.group("secs")))
        if _PLACEMENT_WAIT.search(line) is not None:
            return InitWait(InitWaitKind.RESOURCE_WAIT, text)
    elif "node types can fulfill" in line and _INFEASIBLE.search(line) is not None:
        return InitWait(InitWaitKind.RESOURCE_WAIT, text)
    elif (m := _NODES_ALIVE.search(line)) is not None and int(m.group("joined")) < int(m.group("world")):
        return InitWait(InitWaitKind.RESOURCE_WAIT, text, world_size=int(m.group("world")),
                        joined=int(m.group("joined")))
    return None


_RENDEZVOUS = lazy_regex(r"RendezvousTimeoutError|[Rr]endezvous (?:.*?)?(?:timed out|timeout)|"
                         r"The node '[^']+' has failed to (?:join|rendezvous)|"
                         r"waiting for the rendezvous to (?:complete|close)")


def _hms(text: str) -> float | None:
    """'0:30:00' (a timedelta's str) as seconds."""
    days = 0.0
    if " day" in text:
        head, _, text = text.partition(",")
        days = float(head.split()[0]) * 86400
    try:
        parts = [float(p) for p in text.strip().split(":")]
    except ValueError:
        return None
    seconds = 0.0
    for part in parts:
        seconds = seconds * 60 + part
    return days + seconds


def parse_init_line(line: str) -> InitWait | None:
    """One log line (rank prefix and timestamp removed) as an init/rendezvous wait, or None."""
    if not any(marker in line for marker in MARKERS):
        return None
    text = line.strip()[:400]
    if (coordination := _coordination(line, text)) is not None:
        return coordination
    if (m := _UNIQUE_ID.search(line)) is not None:
        return InitWait(InitWaitKind.UNIQUE_ID_WAIT, text, rank=int(m.group("rank")), waits_for=int(m.group("root")))
    if (m := _BARRIER.search(line)) is not None:
        kind = InitWaitKind.BARRIER_WAITING if m.group("what").startswith("Waiting") else InitWaitKind.BARRIER_TIMEOUT
        return InitWait(kind, text, rank=int(m.group("rank")), world_size=int(m.group("world")),
                        joined=int(m.group("count")), timeout_s=_hms(m.group("timeout")))
    if (m := _CLIENTS.search(line)) is not None:
        return InitWait(InitWaitKind.STORE_CLIENTS, text, world_size=int(m.group("world")),
                        joined=int(m.group("joined")), timeout_s=float(m.group("secs")))
    if (m := _CONNECT_TIMEOUT.search(line)) is not None:
        return InitWait(InitWaitKind.CONNECT_TIMEOUT, text, address=f"{m.group('addr').strip('[]')}:{m.group('port')}",
                        timeout_s=float(m.group("secs")) / (1000 if m.group("unit") == "ms" else 1))
    if (m := _CONNECT_REFUSED.search(line)) is not None:
        host = (m.group("host") or m.group("host2") or m.group("host3") or m.group("host4") or m.group("host5")
                or m.group("host6"))
        port = m.group("port") or m.group("port3") or m.group("port4") or m.group("port6")
        return InitWait(InitWaitKind.CONNECT_REFUSED, text, address=f"{host}:{port}")
    if _BARRIER_BARE.search(line) is not None:
        return InitWait(InitWaitKind.BARRIER_TIMEOUT, text)
    if (m := _WAIT_FOR_INPUT.search(line)) is not None:
        return InitWait(InitWaitKind.STORE_WAIT_TIMEOUT, text, address=f"{m.group('host')}:{m.group('port')}",
                        timeout_s=int(m.group("ms")) / 1000)
    if (m := _STORE_KEY_WAIT.search(line)) is not None:
        ms = m.group("ms") or m.group("ms2")
        return InitWait(InitWaitKind.STORE_WAIT_TIMEOUT, text, timeout_s=int(ms) / 1000 if ms else None)
    if _RENDEZVOUS.search(line) is not None:
        return InitWait(InitWaitKind.RENDEZVOUS_TIMEOUT, text)
    if (m := _BACKEND_WAIT.search(line)) is not None:
        return InitWait(InitWaitKind.BACKEND_WAIT, text, timeout_s=float(m.group("secs")))
    return _resource_wait(line, text)


def connect_failure_reason(text: str) -> str:
    """Why a store client could not connect, as its line tells it ("connection refused", "cannot assign requested
    address", "timed out after 300 seconds"), or "could not connect" when the line gives no reason."""
    lowered = text.lower()
    for words in ("connection refused", "connection timed out", "no route to host", "name or service not known"):
        if words in lowered:
            return words
    if (m := _CONNECT_WHY.search(text)) is not None:
        return (m.group("why") or "").strip().lower() or f"timed out {m.group('after')}"
    return "could not connect"
