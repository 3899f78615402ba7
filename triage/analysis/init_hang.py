"""Stuck before the first collective: init_process_group's store-based barrier, the TCPStore
waiting for its clients, a client that cannot reach the store, a torchelastic rendezvous that
timed out (pure)."""

from __future__ import annotations

from triage.analysis.ranks import rank_word
from triage.analysis.verdict import headline
from triage.lazy_regex import lazy_regex
from triage.model import Finding, Verdict, VerdictKind
from triage.model.evidence import InitWaitRecord
from triage.parsing.rendezvous import COORDINATION_KINDS, barrier_key, connect_failure_reason

_SPECIFIC = ("coordination_barrier", "coordination_heartbeat", "coordination_register",
             "unique_id_wait", "barrier_timeout", "store_clients", "barrier_waiting", "connect_refused",
             "connect_timeout",
             "store_wait_timeout", "rendezvous_timeout", "backend_wait", "resource_wait")


# The coordination service's barriers of start-up: jax.distributed.initialize's connect ("Barrier_id:
# PjRT_Client_Connect"), the registration of every task ("[Init]Wait_for_all_tasks_to_register", "RegisterTask",
# "cluster registration failed"): the job never finished initialising, a set-up that hung, not a process lost after the
# start
_INIT_BARRIER = lazy_regex(r"PjRT_Client_Connect|\[Init\]|Wait_for_all_tasks_to_register|RegisterTask|"
                           r"cluster registration failed")


def _minutes(seconds: float | None) -> str:
    if seconds is None:
        return ""
    return f" after {seconds / 60:.0f} min" if seconds >= 120 else f" after {seconds:.0f} s"


def _joined(wait: InitWaitRecord) -> str:
    if wait.world_size is None or wait.joined is None:
        return ""
    if wait.joined > wait.world_size:
        return (f"{wait.joined} processes registered for a group of {wait.world_size}: more than it has, so "
                "another job shares this MASTER_ADDR:MASTER_PORT, or processes of an earlier attempt are still "
                "registered in the store")
    missing = wait.world_size - wait.joined
    return (f"{wait.joined} of {wait.world_size} ranks joined; the {missing} that never joined "
            f"{'is' if missing == 1 else 'are'} not in this input")


# what a resource wait's line says it asked for (vLLM's placement group's specs, Ray's autoscaler's request) and for how
# long it had waited
_ASKED = lazy_regex(r"specs=(?P<specs>\[[^\]]{1,300}\])|resource requests? (?P<request>\{[^}]{1,200}\})")
_RAY_SETTLES = "`ray status` and `ray list nodes` on the head node would tell"


def _resources(waits: tuple[InitWaitRecord, ...], timed_out: bool) -> str:
    """A start-up's wait for cluster resources that never came (triage.parsing.rendezvous, RESOURCE_WAIT): its last
    line of the kind chosen."""
    wait = max((w for w in waits if w.kind == "resource_wait" and w.timed_out == timed_out),
               key=lambda w: w.order if w.order is not None else 0)
    text = wait.text.split(". Check `ray status`", 1)[0][:200]
    asked = _ASKED.search(wait.text)
    what = f" ({asked.group('specs') or asked.group('request')})" if asked is not None else ""
    if wait.world_size is not None and wait.joined is not None:
        missing = wait.world_size - wait.joined
        return (f"the start-up was still waiting for its Ray cluster's nodes, {wait.joined} of {wait.world_size} "
                f"alive; the {missing} that never joined {'is' if missing == 1 else 'are'} not in this input (not "
                f"started, or unable to reach the head: {_RAY_SETTLES}) [{text}]")
    if "placement group" in wait.text:
        state = f"gave up{_minutes(wait.timeout_s)}" if wait.timed_out else "was still waiting"
        return (f"the start-up {state} for Ray to place the resources it asked for{what} (vLLM's placement group): "
                "the Ray cluster lacks a GPU or a node it asks for (a node that never joined, or one whose IP is not "
                f"the one the engine expects; which, is not in this input: {_RAY_SETTLES}) [{text}]")
    return (f"Ray's autoscaler has no node type that can fulfil the resources asked for{what}: the start-up waits "
            f"for resources the cluster cannot give ({_RAY_SETTLES}) [{text}]")


def _never_arrived(wait: InitWaitRecord, waits: tuple[InitWaitRecord, ...]) -> tuple[int, ...]:
    """The ranks that never reached the store-based barrier ``wait`` is of, where the input shows every rank that did:
    PyTorch's barrier (``store_based_barrier_key:N``, the form with ``worker_count=``) counts the ranks that reached
    it out of the default group's world size, whose ranks are 0 to world_size-1, and each rank that reached it logs
    its line once it has waited 10 s; where the ranks shown waiting in the input's last barrier are as many as the
    count (its highest), the others never arrived. () where the count or the world size is not said, where more ranks
    reached it than the input shows, or where a later barrier's lines show this one passed."""
    key = barrier_key(wait.text)
    if key is None or wait.world_size is None:
        return ()
    barriers = [w for w in waits if w.kind in ("barrier_timeout", "barrier_waiting")]
    last = max(barriers, key=lambda w: w.order if w.order is not None else -1)
    if barrier_key(last.text) != key:
        return ()           # (a later barrier's lines: this one passed, its last arrivals log no line of waiting)
    alike = [w for w in barriers if w.world_size == wait.world_size and barrier_key(w.text) == key]
    counts = [w.joined for w in alike if w.joined is not None]
    shown = {w.rank for w in alike if w.rank is not None}
    if not counts or max(counts) != len(shown) or not shown or max(shown) >= wait.world_size \
            or len(shown) >= wait.world_size:
        return ()
    return tuple(sorted(set(range(wait.world_size)) - shown))


def init_hang_verdict(waits: tuple[InitWaitRecord, ...]) -> tuple[Verdict, Finding] | None:
    """The most telling init wait of the input (a timeout before a wait still going on)."""
    if not waits:
        return None
    wait = min(waits, key=lambda w: (not w.timed_out, _SPECIFIC.index(w.kind) if w.kind in _SPECIFIC else 99,
                                     w.order if w.order is not None else 0))
    ranks = tuple(sorted({w.rank for w in waits if w.rank is not None}))
    who = rank_word(ranks) if ranks else "the job"
    if wait.kind in COORDINATION_KINDS:
        return _coordination(wait, waits)
    if wait.kind == "unique_id_wait" and wait.waits_for is not None:
        waiting = tuple(sorted({w.rank for w in waits if w.kind == wait.kind and w.waits_for == wait.waits_for
                                and w.rank is not None}))
        summary = (f"rank {wait.waits_for} never published the NCCL unique id that "
                   f"{rank_word(waiting)} waited for: it did not reach its first collective on that group (stuck "
                   f"before it, or dead); {rank_word(waiting)} gave up: {wait.text.rsplit('got error: ', 1)[-1][:80]}")
        verdict = headline.verdict(VerdictKind.INIT_HANG, summary, culprit_ranks=(wait.waits_for,))
        return verdict, Finding(VerdictKind.INIT_HANG.value, (wait.waits_for,), summary,
                                wait.evidence, root_cause=True)
    if wait.kind in ("barrier_timeout", "barrier_waiting"):
        still = "were still waiting" if len(ranks) > 1 else "was still waiting"
        state = f"timed out{_minutes(wait.timeout_s)}" if wait.timed_out else still
        what = f"{who} {state} in init_process_group's store-based barrier"
        if absent := _never_arrived(wait, waits):
            arrived = sorted(set(range(wait.world_size or 0)) - set(absent))
            reached = len(arrived)
            summary = (f"{rank_word(absent)} never reached init_process_group's store-based barrier (not started, "
                       f"dead or stuck before it): {reached} of {wait.world_size} ranks reached "
                       f"it, and this input shows {'them all' if reached > 1 else 'it'} ({rank_word(arrived)}) "
                       f"{f'timed out{_minutes(wait.timeout_s)}' if wait.timed_out else 'still waiting'} in it")
            # (named in words, not blamed: why it never came, the input does not say; the corpus's labels of one
            # rank waiting of two, neu-vi/ezflow#194 and uzh-rpg/RVT#18, blame none)
            verdict = headline.verdict(VerdictKind.INIT_HANG, summary)
            return verdict, Finding(VerdictKind.INIT_HANG.value, ranks, summary, wait.evidence, root_cause=True)
        joined = _joined(wait)
        summary = f"{what}: {joined}" if joined else what
    elif wait.kind == "store_clients":
        summary = (f"the rendezvous store (MASTER_ADDR:MASTER_PORT) gave up waiting for its clients"
                   f"{_minutes(wait.timeout_s)}: {_joined(wait)}")
    elif wait.kind in ("connect_timeout", "connect_refused"):
        return _unreachable_store(wait, who if ranks else "a process", ranks)
    elif wait.kind == "backend_wait":
        summary = (f"the accelerator backend was still being set up{_minutes(wait.timeout_s)}: on a pod slice it "
                   "waits until the same program runs on every host, and the hosts that never started it are not in "
                   f"this input: {wait.text[:200]}")
    elif wait.kind == "resource_wait":
        summary = _resources(waits, wait.timed_out)
    elif wait.kind == "store_wait_timeout":
        summary = (f"{who} gave up waiting for the store at {wait.address or 'MASTER_ADDR:MASTER_PORT'}"
                   f"{_minutes(wait.timeout_s)}: "
                   "the ranks it waited for never arrived (they are not in this input)")
    else:
        summary = f"torchelastic's rendezvous timed out before every node joined: {wait.text[:200]}"
    verdict = headline.verdict(VerdictKind.INIT_HANG, summary)
    return verdict, Finding(VerdictKind.INIT_HANG.value, ranks, summary, wait.evidence,
                            root_cause=True)


def _coordination(wait: InitWaitRecord, waits: tuple[InitWaitRecord, ...]) -> tuple[Verdict, Finding]:
    """JAX's or TensorFlow's coordination service named the processes (its tasks: task N is process N) that never
    reached its barrier, or that stopped sending heartbeats: those are where to look (not started, dead, or stuck
    before it); the process that reported it is one that did arrive. Where no line names them, no rank is blamed."""
    alike = [w for w in waits if w.kind == wait.kind]
    absent = tuple(sorted({task for w in alike for task in w.absent}))
    reporters = tuple(sorted({w.rank for w in alike if w.rank is not None} - set(absent)))
    said = f"; {rank_word(reporters)} reported it" if reporters else ""
    reached = next((w for w in alike if w.world_size is not None and w.joined is not None), None)
    count = f"; {reached.joined} of {reached.world_size} tasks reached it" if reached else ""
    at_init = wait.kind == "coordination_register" or \
        (wait.kind == "coordination_barrier" and any(_INIT_BARRIER.search(w.text) for w in alike))
    kind = VerdictKind.INIT_HANG if at_init else VerdictKind.MISSING_RANK
    if wait.kind == "coordination_register":
        # (the agent's own registration call that failed, RegisterTask's gRPC detail: no barrier said it)
        what = "a process could not register with the coordination service at start-up: the job never finished " \
               "initialising"
        never = "never connected to the coordination service at start-up"
        why = "not launched, dead or stuck before jax.distributed.initialize"
    elif at_init:
        what = f"the coordination service's start-up barrier timed out: the job never finished initialising{count}"
        never = "never connected to the coordination service at start-up"
        why = "not launched, dead or stuck before jax.distributed.initialize"
    elif wait.kind == "coordination_barrier":
        what, never = f"the coordination service's barrier timed out{count}", "never reached the coordination barrier"
        why = "not started, dead or stuck before it"
    else:
        what = ("the coordination service lost a process (its heartbeats stopped, or the service told of a fatal "
                "error of another task)")
        never = "stopped sending heartbeats to the coordination service"
        why = "dead, hung or cut off from the coordinator"
    if absent:
        tasks = ", ".join(str(t) for t in absent)
        summary = (f"{rank_word(absent)} {never} (coordination task{'s' if len(absent) > 1 else ''} {tasks}: task N "
                   f"is process N): {why}{said}{count}: {wait.text[:160]}")
        verdict = headline.verdict(kind, summary, culprit_ranks=absent)
        return verdict, Finding(kind.value, absent, summary, wait.evidence, root_cause=True)
    summary = (f"{what}{said}; which processes, this input does not say (the coordination service's list of task "
               f"names, or every rank's own log, would tell): {wait.text[:160]}")
    verdict = headline.verdict(kind, summary)
    return verdict, Finding(kind.value, (), summary, wait.evidence, root_cause=True)


def _unreachable_store(wait: InitWaitRecord, who: str, ranks: tuple[int, ...]) -> tuple[Verdict, Finding]:
    """A client that cannot reach the store at all is a network failure at init, not a wait: the
    store's address is the finding (a wrong MASTER_ADDR, a host that does not resolve, a firewall, a
    store that is not up or already gone)."""
    if wait.kind == "connect_refused":
        how = connect_failure_reason(wait.text)
    else:
        how = f"timed out{_minutes(wait.timeout_s)}"
    address = wait.address or "MASTER_ADDR:MASTER_PORT"
    summary = (f"{who} could not reach the rendezvous store at {address} ({how}): check that "
               "MASTER_ADDR resolves to the store's host from every node, that the port is open, and that the "
               "store (rank 0's agent or process) is up")
    host = wait.address.rsplit(":", 1)[0] if wait.address else None
    verdict = headline.verdict(VerdictKind.NETWORK_ERROR, summary, qualifier=" at init", culprit_host=host)
    return verdict, Finding(VerdictKind.NETWORK_ERROR.value, ranks, summary, wait.evidence,
                            root_cause=True)
