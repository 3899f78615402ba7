"""The verdict of a check: pure functions from what the nodes and ranks wrote to one headline.

Problems are found in the order a user should fix them: a node that cannot reach the master port,
ranks that never joined, ranks that cannot join the store, broken links between nodes, failed
collectives, ranks stopped part-way. The first problem is the headline; without problems the
headline is ``OK: N nodes, M ranks, all collectives and links fine; gloo X GB/s``.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from triage.check.results import CheckData

CLOCK_NOTE_SECONDS = 1.0


@dataclass(frozen=True)
class NodeSummary:
    label: str
    node_rank: int | None
    ranks: tuple[int, ...]
    interface: str | None
    store_seconds: float | None
    busbw_gbps: dict[str, float]
    ring_mb_per_s: float | None
    clock_offset_s: float | None


@dataclass(frozen=True)
class Verdict:
    ok: bool
    headline: str
    problems: tuple[str, ...]
    notes: tuple[str, ...]
    nodes: tuple[NodeSummary, ...]
    missing_ranks: tuple[int, ...]
    expected_ranks: int | None

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1


def rank_ranges(ranks: list[int] | tuple[int, ...]) -> str:
    """[0, 1, 2, 5] -> 'ranks 0-2, 5'."""
    values = sorted(set(ranks))
    if not values:
        return "no ranks"
    runs: list[list[int]] = [[values[0], values[0]]]
    for value in values[1:]:
        if value == runs[-1][1] + 1:
            runs[-1][1] = value
        else:
            runs.append([value, value])
    parts = [f"{a}" if a == b else f"{a}-{b}" for a, b in runs]
    return f"{'rank' if len(values) == 1 else 'ranks'} {', '.join(parts)}"


class _Names:
    """Node labels: the host name, plus the node rank when two nodes share a host name."""

    def __init__(self, data: CheckData) -> None:
        checks: dict[str, int] = defaultdict(int)           # `triage check` processes per host
        for node in data.nodes:
            checks[str(node.get("host"))] += 1
        groups: dict[str, set[object]] = defaultdict(set)   # torch node ranks per host
        for rank in data.ranks.values():
            groups[str(rank.get("host"))].add(rank.get("node_rank"))
        self.shared = {h for h, n in checks.items() if n > 1} | {h for h, g in groups.items() if len(g) > 1}

    def label(self, host: object, node_rank: object) -> str:
        name = str(host)
        return f"{name} (node {node_rank})" if name in self.shared and node_rank is not None else name


def _node_ranks(data: CheckData, node_rank: int | None) -> list[int]:
    nproc = data.expected.get("nproc_per_node")
    if node_rank is None or not isinstance(nproc, int):
        return []
    return list(range(node_rank * nproc, (node_rank + 1) * nproc))


def _expected_world(data: CheckData) -> int | None:
    nnodes, nproc = data.expected.get("nnodes"), data.expected.get("nproc_per_node")
    if isinstance(nnodes, int) and isinstance(nproc, int):
        return nnodes * nproc
    sizes = [r.get("world_size") for r in data.ranks.values() if isinstance(r.get("world_size"), int)]
    return max(sizes) if sizes else None   # type: ignore[type-var]


def _unreachable(data: CheckData, names: _Names, missing: set[int]) -> list[str]:
    problems = []
    for node in data.nodes:
        probe = node.get("probe") or {}
        if probe.get("reached") is not False or not probe.get("attempts"):
            continue
        ranks = [r for r in _node_ranks(data, node.get("node_rank")) if r in missing]
        if not ranks and any(r.get("host") == node.get("host") for r in data.ranks.values()):
            continue      # its ranks joined after all (the probe raced the store start-up)
        where = f" from {probe['interface']}" if probe.get("interface") else ""
        nproc = data.expected.get("nproc_per_node")
        count = f"its {nproc} rank{'s' if nproc != 1 else ''}" if isinstance(nproc, int) else "its ranks"
        joined = f"{rank_ranges(ranks)} never joined" if ranks else f"{count} never joined"
        problems.append(f"{names.label(node.get('host'), node.get('node_rank'))} cannot reach the master port "
                        f"{probe.get('target')} ({probe.get('error', 'no answer')}){where}: {joined}")
        missing.difference_update(ranks)
    probed = [n for n in data.nodes if (n.get("probe") or {}).get("attempts")]
    if len(problems) >= 2 and len(problems) == len(probed) - 1:
        target = next(str(n["probe"].get("target")) for n in probed if n["probe"].get("reached") is False)
        errors = sorted({str(n["probe"].get("error")) for n in probed if n["probe"].get("reached") is False})
        problems.insert(0, f"no other node can reach the master port {target} ({'; '.join(errors)}): look at the "
                           f"master node's firewall and at the address other nodes use for it")
    return problems


NEVER_JOINED = " never joined (no result from them)"
DIED = "died (killed or crashed)"


def _never_joined(data: CheckData, names: _Names, missing: set[int], explained: bool) -> list[str]:
    if not missing:
        return []
    if explained and not data.ranks:
        return [f"{rank_ranges(sorted(missing))} never started: the rendezvous waits for every node"]
    problems = []
    reported = {str(n.get("host")) for n in data.nodes} | {str(r.get("host")) for r in data.ranks.values()}
    silent = [h for h in data.expected.get("slurm_nodes") or () if h.split(".")[0] not in reported]
    if silent:
        problems.append(f"{', '.join(silent)}: never reported (no triage check ran there, or it could not "
                        f"write to the check directory)")
    nnodes = data.expected.get("nnodes")
    if not data.ranks:
        exits = [n for n in data.nodes if n.get("launcher_exit") not in (None, 0) and not n.get("launcher_stopped")]
        if exits:
            node = exits[0]
            tail = f": {node['launcher_tail']}" if node.get("launcher_tail") else ""
            problems.append(f"the launcher on {names.label(node.get('host'), node.get('node_rank'))} exited with "
                            f"code {node['launcher_exit']} before any rank started{tail}")
            return problems
        if isinstance(nnodes, int) and len(data.nodes) < nnodes:
            problems.append(f"no rank started: only {len(data.nodes)} of {nnodes} expected nodes ran the check "
                            f"({', '.join(sorted(str(n.get('host')) for n in data.nodes)) or 'none'}); "
                            f"the rendezvous waits for the others")
            return problems
        unreached = [n for n in data.nodes if (n.get("probe") or {}).get("target")
                     and (n.get("probe") or {}).get("reached") is not True]
        if unreached:       # the probe's first connection attempt may still have been waiting: no answer
            probe = unreached[0]["probe"]
            hosts = ", ".join(sorted(str(n.get("host")) for n in unreached))
            problems.append(f"no rank started: the rendezvous endpoint {probe.get('target')} could not be reached "
                            f"from {hosts} ({probe.get('error') or 'no answer'}); check the host and port given "
                            "to --rdzv-endpoint (or --master-addr/--master-port)")
            return problems
        problems.append("no rank started before the deadline (the launcher's rendezvous did not complete)")
        return problems
    problems.append(f"{rank_ranges(sorted(missing))}{NEVER_JOINED}")
    return problems


def _store_failures(data: CheckData, names: _Names) -> list[str]:
    grouped: dict[tuple[str, str], list[int]] = defaultdict(list)
    for rank, record in data.ranks.items():
        store = record.get("steps", {}).get("store") or {}
        if store.get("error"):
            where = f" from {store['interface']}" if store.get("interface") else ""
            key = (names.label(record.get("host"), record.get("node_rank")),
                   f"cannot join the store at {store.get('master')} ({store['error']}){where}")
            grouped[key].append(rank)
    return [f"{host}: {rank_ranges(ranks)} {what}" for (host, what), ranks in grouped.items()]


def _links(data: CheckData, names: _Names) -> tuple[list[str], bool]:
    """Broken node-to-node links, as pairs (or as one node that reaches no other node)."""
    label_of: dict[int, str] = {}
    leaders = [r for r in data.ranks.values() if (r.get("steps", {}).get("links") or {}).get("leader")]
    for record in leaders:
        label_of[int(record.get("node_rank", 0))] = names.label(record.get("host"), record.get("node_rank"))
    failed: dict[frozenset[str], str] = {}
    directions: dict[frozenset[str], set[tuple[str, str]]] = defaultdict(set)
    for record in leaders:
        mine = label_of[int(record.get("node_rank", 0))]
        for probe in (record.get("steps", {}).get("links") or {}).get("probes") or []:
            if not probe.get("ok"):
                peer = label_of.get(int(probe.get("node_rank", -1)), str(probe.get("host")))
                failed.setdefault(frozenset((mine, peer)), str(probe.get("error", "failed")))
                directions[frozenset((mine, peer))].add((mine, peer))
    if not failed:
        return _links_unfinished(data, names), False
    counts: dict[str, int] = defaultdict(int)
    for pair in failed:
        for label in pair:
            counts[label] += 1
    problems = []
    isolated = [label for label, count in counts.items() if count == len(label_of) - 1 and len(label_of) > 2]
    for label in isolated:
        errors = sorted({error for pair, error in failed.items() if label in pair})
        problems.append(f"{label} cannot reach any other node ({'; '.join(errors)}); it reaches the master store")
    for pair, error in sorted(failed.items(), key=lambda item: sorted(item[0])):
        if not any(label in pair for label in isolated):
            problems.append(f"link {_direction(directions[pair], pair)} fails ({error})")
    return problems, len(failed) < len(label_of) * (len(label_of) - 1) // 2


def _direction(seen: set[tuple[str, str]], pair: frozenset[str]) -> str:
    """``node1 -> node2`` when only node1's probe of node2 failed; ``node1 <-> node2`` when both did
    (or when the records do not say who probed)."""
    if len(seen) == 1:
        source, target = next(iter(seen))
        return f"{source} -> {target}"
    first, second = sorted(pair)
    return f"{first} <-> {second}"


def _links_unfinished(data: CheckData, names: _Names) -> list[str]:
    """No link failed, but the link step did not complete everywhere (a node's first rank never got there)."""
    problems = []
    absent = sorted({int(n) for r in data.ranks.values()
                     for n in (r.get("steps", {}).get("links") or {}).get("nodes_missing") or []})
    if absent:
        problems.append(f"node rank{'s' if len(absent) > 1 else ''} {', '.join(map(str, absent))} never published "
                        f"a link address (its first rank did not reach the link step)")
    late = [rank for rank, r in sorted(data.ranks.items()) if (r.get("steps", {}).get("links") or {}).get("error")]
    if late and not problems:
        problems.append(f"{rank_ranges(late)}: not every node finished its link probes before the deadline")
    return problems


def _ifname_problem(name: str, value: str, interfaces: list[str]) -> str | None:
    """Why ``NAME=value`` selects no interface of the node (None when it selects one).

    NCCL: comma-separated prefixes, ``=`` for exact names, ``^`` to exclude; GLOO: exact names."""
    nccl = name.startswith("NCCL_")
    text = value.strip()
    if nccl and text.startswith("^"):
        return None                     # an exclusion list leaves the others
    exact = not nccl or text.startswith("=")
    wanted = [w.strip() for w in text.lstrip("=").split(",") if w.strip()]
    if not wanted:
        return None
    found = [w for w in wanted if any(i == w if exact else i.startswith(w) for i in interfaces)]
    if (nccl and found) or (not nccl and len(found) == len(wanted)):
        return None
    shown = ", ".join(sorted(interfaces)[:8]) + (f" and {len(interfaces) - 8} more" if len(interfaces) > 8 else "")
    return f"{name}={value} names no interface of this node (it has {shown or 'none'})"


def _ifname_checks(data: CheckData, names: _Names) -> tuple[list[str], list[str]]:
    """(problems, notes): a *_SOCKET_IFNAME that selects no interface is a problem when its backend
    failed on that node, and a note otherwise."""
    problems: dict[str, None] = {}
    notes: dict[str, None] = {}
    for record in data.ranks.values():
        facts = record.get("steps", {}).get("facts") or {}
        interfaces = [str(i) for i in (facts.get("interfaces") or {})]
        failed = set(record.get("errors") or {})
        for name, value in sorted((facts.get("env") or {}).items()):
            if not name.endswith("_SOCKET_IFNAME") or not interfaces:
                continue
            why = _ifname_problem(name, str(value), interfaces)
            if why:
                line = f"{names.label(record.get('host'), record.get('node_rank'))}: {why}"
                backend = name.split("_", 1)[0].lower()
                (problems if backend in failed else notes)[line] = None
    return list(problems), list(notes)


def _rank_errors(data: CheckData, names: _Names) -> list[str]:
    grouped: dict[str, list[int]] = defaultdict(list)
    for rank, record in data.ranks.items():
        for backend, error in sorted((record.get("errors") or {}).items()):
            if backend != "deadline":
                grouped[str(error) if str(error).startswith(backend) else f"{backend} {error}"].append(rank)
    problems = [f"{what} on {rank_ranges(ranks)}" for what, ranks in grouped.items()]
    stopped: dict[str, list[int]] = defaultdict(list)
    for rank, record in sorted(data.ranks.items()):
        if record.get("finished"):
            continue
        host = names.label(record.get("host"), record.get("node_rank"))
        if record.get("timed_out"):
            how = "was still running at the deadline"
        elif record.get("terminated"):
            how = "was stopped by the launcher (collateral: another rank failed first)"
        else:
            how = DIED
        stopped[f"on {host} {how} in step {record.get('step')!r}"].append(rank)
    first = sorted(stopped.items(), key=lambda item: ("collateral" in item[0], "deadline" in item[0]))
    problems += [f"{rank_ranges(ranks)} {what}" for what, ranks in first]
    return problems


def _summaries(data: CheckData, names: _Names) -> list[NodeSummary]:
    by_node: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in data.ranks.values():
        by_node[names.label(record.get("host"), record.get("node_rank"))].append(record)
    summaries = []
    for label, records in sorted(by_node.items(), key=lambda item: min(r["rank"] for r in item[1])):
        steps = [r.get("steps", {}) for r in records]
        busbw: dict[str, float] = {}
        for step in steps:
            for key, value in step.items():
                if key.startswith("bandwidth/") and isinstance(value, dict):
                    backend = key.split("/", 1)[1]
                    busbw[backend] = min(busbw.get(backend, float("inf")), float(value.get("busbw_gbps", 0.0)))
        rings = [float(s["ring/gloo"]["mb_per_s"]) for s in steps if (s.get("ring/gloo") or {}).get("ok")]
        stores = [float(s["store"]["connect_s"]) for s in steps if (s.get("store") or {}).get("connect_s") is not None]
        offsets = [float(s["facts"]["clock_offset_s"]) for s in steps
                   if (s.get("facts") or {}).get("clock_offset_s") is not None]
        interfaces = [str(s["store"]["interface"]) for s in steps if (s.get("store") or {}).get("interface")]
        summaries.append(NodeSummary(
            label=label, node_rank=records[0].get("node_rank"), ranks=tuple(sorted(r["rank"] for r in records)),
            interface=interfaces[0] if interfaces else None, store_seconds=max(stores) if stores else None,
            busbw_gbps=busbw, ring_mb_per_s=min(rings) if rings else None,
            clock_offset_s=max(offsets, key=abs) if offsets else None))
    return summaries


def _joined_but_unseen(data: CheckData, world: int | None, missing: set[int]) -> list[int]:
    """Ranks without a result file that still took part in a world collective that completed
    (the check directory is not shared between the nodes): they did join."""
    completed = any((r.get("steps", {}).get("collectives/gloo") or {}).get("ok") and r.get("world_size") == world
                    for r in data.ranks.values())
    return sorted(missing) if completed else []


def decide(data: CheckData) -> Verdict:
    names = _Names(data)
    world = _expected_world(data)
    missing = set(range(world)) - set(data.ranks) if world is not None else set()
    unseen = _joined_but_unseen(data, world, missing)
    missing -= set(unseen)
    missing_all = tuple(sorted(missing))
    problems = _unreachable(data, names, missing)
    problems += _never_joined(data, names, missing, explained=bool(problems))
    rank_problems = _rank_errors(data, names)
    died = [p for p in rank_problems if DIED in p]
    unjoined = [p for p in problems if p.endswith(NEVER_JOINED)]
    if died and unjoined:
        # a rank died before the others had written their results: the launcher then stops every
        # rank, so those that had not joined yet are collateral of the death, which comes first
        problems = [p for p in problems if p not in unjoined]
        rank_problems = died + [p.removesuffix(")") + "; stopped when a rank died)" for p in unjoined] + [
            p for p in rank_problems if p not in died]
    problems += _store_failures(data, names)
    link_problems, others_fine = _links(data, names)
    problems += link_problems
    ifname_problems, ifname_notes = _ifname_checks(data, names)
    problems += ifname_problems
    problems += rank_problems
    if not problems and world is None:
        problems.append("no rank reported a result")
    nodes = tuple(_summaries(data, names))
    notes = [f"{n.label}: clock differs from rank 0's by {n.clock_offset_s:+.3f} s" for n in nodes
             if n.clock_offset_s is not None and abs(n.clock_offset_s) >= CLOCK_NOTE_SECONDS]
    notes += ifname_notes
    notes += [f"unreadable result file: {path}" for path in data.unreadable]
    if unseen:
        notes.append(f"{rank_ranges(unseen)}: no result in the check directory, but they joined every collective "
                     f"(give every node one --check-dir on a shared filesystem to see their details)")
    if problems:
        headline = problems[0]
        if link_problems and headline == link_problems[0] and others_fine:
            headline += "; all other links fine"
        return Verdict(False, headline, tuple(problems), tuple(notes), nodes, missing_all, world)
    bandwidth = _bandwidth_text(nodes)
    nnodes = data.expected.get("nnodes")
    count = nnodes if isinstance(nnodes, int) and not data.expected.get("elastic") else len(nodes)
    headline = (f"OK: {count} node{'s' if count != 1 else ''}, {world} rank{'s' if world != 1 else ''}, "
                f"all collectives and links fine{bandwidth}")
    return Verdict(True, headline, (), tuple(notes), nodes, missing_all, world)


def _bandwidth_text(nodes: tuple[NodeSummary, ...]) -> str:
    lowest: dict[str, float] = {}
    for node in nodes:
        for backend, value in node.busbw_gbps.items():
            lowest[backend] = min(lowest.get(backend, float("inf")), value)
    return "".join(f"; {backend} {gbps(value)}" for backend, value in sorted(lowest.items()))


def gbps(value: float) -> str:
    return f"{value:.3g} GB/s" if value >= 0.01 else f"{value * 1000:.3g} MB/s"


def verdict_json(verdict: Verdict) -> dict[str, Any]:
    return {
        "status": "ok" if verdict.ok else "problem", "exit_code": verdict.exit_code,
        "headline": verdict.headline, "problems": list(verdict.problems), "notes": list(verdict.notes),
        "expected_ranks": verdict.expected_ranks, "missing_ranks": list(verdict.missing_ranks),
        "nodes": [{"node": n.label, "node_rank": n.node_rank, "ranks": list(n.ranks), "interface": n.interface,
                   "store_connect_s": n.store_seconds, "busbw_gbps": n.busbw_gbps,
                   "ring_mb_per_s": n.ring_mb_per_s, "clock_offset_s": n.clock_offset_s} for n in verdict.nodes],
    }
