"""Read a run directory (layout triage.run/1) and its latest node bundles into Evidence."""

from __future__ import annotations

import signal as _signal
from dataclasses import replace
from pathlib import Path
from typing import Any

from triage.bundle import CollectorStatus, Manifest, Trigger, read_manifest
from triage.errors import InputError
from triage.layout import BundlePaths, HostPaths, RankPaths, RunPaths
from triage.load.agent_end import agent_end_event
from triage.load.agent_facts import agent_facts
from triage.load.cores import bundle_core_outputs
from triage.load.crash_records import LOG_TAIL_LINES, core_record, live_gdb_record
from triage.load.forwarded import (
    INTERRUPTED,
    caught_exit,
    forwarded_stop,
    interrupted_stop,
    launcher_end,
    launcher_exited_zero,
    read_node,
)
from triage.load.fr_files import fr_rank_evidence, read_text
from triage.load.kernel import job_kernel_events
from triage.load.logs.endings import with_log_failure
from triage.load.logs.scan import LogScan
from triage.load.logs.text import scan_log_text
from triage.load.numerics import load_numerics
from triage.load.stop_record import load_stop
from triage.load.teardown import ended_after_exit_record, launcher_exits, output_tail
from triage.model.backtrace import FAULT_SIGNALS
from triage.model.evidence import (
    MISSING_NODE_REASON,
    AgentFacts,
    ClusterCheck,
    CrashRecord,
    Event,
    EventKind,
    Evidence,
    ExitInfo,
    RankEvidence,
)
from triage.model.gpu import NodeGpus
from triage.parsing.disk_guard import disk_full_note
from triage.parsing.flight_recorder.parse import load_fr_file, parse_fr_json
from triage.parsing.nvidia_smi import parse_gpus_json
from triage.parsing.pyframes import parse_pyframes, thread_stacks
from triage.parsing.stacks import (
    ThreadStack,
    parse_faulthandler,
    parse_faulthandler_signal,
    parse_pyspy_json,
    stack_top,
    waiting_in_collective,
)
from triage.regular_files import read_json_file
from triage.schemas import CHECK_VERDICT_FORMAT

# A node counts as missing when its newest bundle is older than the newest hang bundle by this much.
NODE_BUNDLE_WINDOW_S = 60.0

_FAULT_SIGNALS = {text.lower(): _signal.Signals[name] for text, name in FAULT_SIGNALS.items()}


def looks_like_run_dir(path: Path) -> bool:
    run = RunPaths(path)
    return run.is_run_dir() or any(h.ranks_dir.is_dir() or h.bundles_dir.is_dir() or h.node.is_file()
                                   for h in run.hosts())


def _json(path: Path, skipped: list[str]) -> Any:
    if not path.is_file():
        return None
    try:
        return read_json_file(path)
    except (OSError, ValueError) as exc:
        skipped.append(f"{path}: unreadable JSON ({str(exc)[:100] or type(exc).__name__})")
        return None


def _text(path: Path, skipped: list[str]) -> str:
    """A text file, or "" with why in ``skipped``: one bad file never ends the report."""
    try:
        return read_text(path)
    except InputError as exc:
        skipped.append(exc.message)
        return ""


def _readable(ranks: list[RankEvidence], skipped: list[str]) -> bool:
    """Whether any rank file was read (a file in ``skipped`` was not)."""
    unread = {entry.split(": ", 1)[0] for entry in skipped}
    return any(path not in unread for rank in ranks for path in rank.evidence) or any(
        rank.has_trace or rank.stack_top or rank.exit is not None or rank.pid is not None for rank in ranks)


UNRECORDED_PREFIX = "unavailable:"      # a heartbeat's fr_state when the rank has no Flight Recorder


def load_run_dir(root: Path) -> Evidence:
    run = RunPaths(root)
    ranks: list[RankEvidence] = []
    events: list[Event] = []
    crashes: list[CrashRecord] = []
    skipped: list[str] = []
    extra: list[str] = []
    world: int | None = None
    node_manifests: dict[str, Manifest | None] = {}
    agents: list[AgentFacts] = []
    kernel_others = 0
    notes: set[str] = set()
    gpus: list[NodeGpus] = []
    stops: list[ExitInfo] = []          # a signal to triage launch itself, passed to the launcher
    for host in run.hosts():
        if host.root == RunPaths(root).check.root and not host.node.is_file():
            continue                    # `triage check --run-dir`'s results, not a host
        node = None
        if host.node.is_file():
            node_manifests[host.host] = None
            died = agent_end_event(host)
            if died is not None:
                events.append(died)
            node = read_node(host)
            stop = forwarded_stop(host, node)
            if stop is not None:
                stops.append(stop)
        if not (host.ranks_dir.is_dir() or host.bundles_dir.is_dir()):
            continue
        launcher = {**launcher_end(host, node if host.node.is_file() else None), **_launcher_exits(host, skipped)}
        zero = host.node.is_file() and launcher_exited_zero(node)     # every rank of this host exited 0
        bundle = _latest_bundle(host, skipped)
        manifest = _manifest(bundle, skipped) if bundle else None
        if host.host in node_manifests:
            node_manifests[host.host] = manifest
        if bundle is not None:
            extra.append(str(bundle))
            facts = agent_facts(bundle, manifest, host.host, skipped) if manifest is not None else None
            if facts is not None:
                agents.append(facts)
            kernel, others = _node_events(bundle, host, manifest, skipped)
            events.extend(kernel)
            kernel_others += others
            gpus.extend(_gpus(bundle, host.host, skipped))
        cores = _core_records(host)
        crashes.extend(cores)
        cored = {c.rank for c in cores}
        for rank in sorted(set(host.ranks()) | {r.rank for r in (manifest.ranks if manifest else ())}):
            item = _load_rank(host, rank, bundle, manifest, skipped, events, crashes, use_gdb=rank not in cored)
            if item.exit is None and rank in launcher:
                item = replace(item, exit=launcher[rank])
            elif item.exit is not None and item.exit.ok and rank in launcher:
                ended = ended_after_exit_record(item.exit, launcher[rank], output_tail(host.rank(rank).output))
                item = item if ended is item.exit else replace(item, exit=ended)
            elif item.exit is not None and item.exit.signal is None and item.exit.exit_code and zero:
                item = replace(item, exit=caught_exit(item.exit, host))
            interrupt = interrupted_stop(item.exit, rank, host.host)
            if interrupt is not None:
                stops.append(interrupt)
            ranks.append(item)
            notes.update(_recorder_note(host.rank(rank), skipped))
            if item.world_size:
                world = max(world or 0, item.world_size)
    skipped.extend(_nodes_without_hang_bundle(root, node_manifests))
    if not ranks and not any(a.init is not None for a in agents):     # torchrun's rendezvous: no rank started
        raise InputError(f"{root}: run directory holds no rank data (no <host>/ranks/<r>/ and no bundles)"
                         + _only_the_agent(run))
    unread = [entry for entry in skipped if Path(entry.split(": ", 1)[0]).is_file()]
    if unread and not (events or crashes or agents or _readable(ranks, skipped)):
        raise InputError(f"{root}: nothing in this run directory could be read ({len(unread)} file(s) skipped, "
                         f"first: {unread[0][:200]})", "check the path; a rank's files are damaged or not triage's")
    finished = all(r.exit is not None and r.exit.ok for r in ranks) and (world is None or len(ranks) >= world)
    return Evidence(ranks=tuple(ranks), events=tuple(events), world_size=world, skipped=tuple(skipped),
                    finished_cleanly=finished, extra_evidence=tuple(extra), crashes=tuple(crashes),
                    cluster_check=_cluster_check(root, skipped), agent=tuple(agents),
                    stop=load_stop(root, skipped), kernel_others=kernel_others,
                    numerics=load_numerics(root, skipped),
                    recorder_notes=tuple(sorted(notes)), gpus=tuple(gpus),
                    unattributed=tuple(sorted(stops, key=lambda s: (s.time is None, s.time or 0.0))),
                    hang_dumps=hang_dumps(run))


def hang_dumps(run: RunPaths) -> int:
    """How many times the agents dumped a hang: the most hang bundles one node wrote (each node's agent
    dumps once per hang it sees, as its end line counts them; the other nodes' bundles of the same moment
    are remote ones, or their own of the same hang). A manifest that cannot be read is not counted (the
    latest bundle's reader says why)."""
    most = 0
    for host in run.hosts():
        count = 0
        for bundle in host.bundles():
            try:
                count += read_manifest(bundle).trigger == Trigger.HANG
            except (OSError, ValueError, KeyError, TypeError):
                continue
        most = max(most, count)
    return most


def _only_the_agent(run: RunPaths) -> str:
    """What the agents' records say when they are all that is left (the ranks' files removed while
    the job ran, or no rank ever started)."""
    said = []
    for host in run.hosts():
        node = read_node(host) if host.node.is_file() else None
        if isinstance(node, dict):
            code = node.get("launcher_returncode")
            end = f"its launcher exited {code}" if isinstance(code, int) else "no launcher exit status recorded"
            said.append(f"{host.host}/{host.node.name}: {end}")
    if not said:
        return ""
    return ("; only the agents' records are there (" + "; ".join(said[:4]) + "): the rank files were removed "
            "(while the job ran?) or no rank started")


def _gpus(bundle: Path, host: str, skipped: list[str]) -> list[NodeGpus]:
    path = BundlePaths(bundle).node.gpus
    if not path.is_file():
        return []
    try:
        return [parse_gpus_json(_json(path, skipped), str(path), host)]
    except InputError as exc:
        skipped.append(exc.one_line())
        return []


def _recorder_note(paths: RankPaths, skipped: list[str]) -> list[str]:
    """Why the rank's collectives were not recorded, from its last heartbeat or its exit record
    (``fr_state`` ``unavailable: ...``: a torch without a Flight Recorder, or one turned off; a job
    shorter than a heartbeat interval has it only in exit.json)."""
    for path in (paths.heartbeat, paths.exit):
        if not path.is_file():
            continue
        record = _json(path, skipped)
        state = record.get("fr_state") if isinstance(record, dict) else None
        if isinstance(state, str) and state.startswith(UNRECORDED_PREFIX):
            return [state.removeprefix(UNRECORDED_PREFIX).strip()[:200]]
    return []




def _cluster_check(root: Path, skipped: list[str]) -> ClusterCheck | None:
    """A `triage check --run-dir` verdict in this run directory, if one is there."""
    path = RunPaths(root).check.verdict
    data = _json(path, skipped)
    if not isinstance(data, dict) or data.get("format") != CHECK_VERDICT_FORMAT or not data.get("headline"):
        return None
    try:
        when: float | None = path.stat().st_mtime
    except OSError:
        when = None
    return ClusterCheck(ok=data.get("status") == "ok", headline=str(data["headline"])[:300], path=str(path),
                        time=when)


def _nodes_without_hang_bundle(root: Path, manifests: dict[str, Manifest | None]) -> list[str]:
    """Nodes whose agent ran but left no bundle when another node collected for a hang."""
    hang_times = [m.created for m in manifests.values()
                  if m is not None and m.trigger in (Trigger.HANG, Trigger.REMOTE)]
    if not hang_times:
        return []
    since = max(hang_times) - NODE_BUNDLE_WINDOW_S
    return [f"{root / host}: {MISSING_NODE_REASON} {host} (its agent was unreachable, stopped or died); "
            "its ranks are judged from what they left in the run directory"
            for host, manifest in sorted(manifests.items()) if manifest is None or manifest.created < since]


def _launcher_exits(host: HostPaths, skipped: list[str]) -> dict[int, ExitInfo]:
    """How torchrun saw its ranks end (its "Failures:" summary in launcher.log)."""
    if not host.launcher_log.is_file():
        return {}
    return launcher_exits(host.launcher_log, _text(host.launcher_log, skipped))


def _latest_bundle(host: HostPaths, skipped: list[str]) -> Path | None:
    bundles = host.bundles()
    if host.bundles_dir.is_dir():
        # a bundle folder without its manifest.json (written first by the agent: a copy lost it): said, not read
        cut = sorted(p for p in host.bundles_dir.iterdir()
                     if not BundlePaths(p).is_bundle() and BundlePaths(p).looks_like_bundle())
        skipped.extend(f"{p}: node bundle without its manifest.json (lost in a copy?): not read"
                       for p in cut[-3:])
    return bundles[-1] if bundles else None


def _manifest(bundle: Path, skipped: list[str]) -> Manifest | None:
    try:
        return read_manifest(bundle)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        skipped.append(f"{bundle / 'manifest.json'}: unreadable manifest ({exc})")
        return None


def _node_events(bundle: Path, host: HostPaths, manifest: Manifest | None,
                 skipped: list[str]) -> tuple[list[Event], int]:
    """The kernel events of the job's own processes (see job_kernel_events); the others are counted."""
    path = BundlePaths(bundle).node.dmesg
    if not path.is_file():
        return [], 0
    pids = {r.pid: r.rank for r in (manifest.ranks if manifest else ()) if isinstance(r.pid, int)}
    for rank in host.ranks():
        worker = _json(host.rank(rank).worker, [])
        if isinstance(worker, dict) and isinstance(worker.get("pid"), int):
            pids.setdefault(worker["pid"], rank)
    node = _json(host.node, [])
    facts = _json(BundlePaths(bundle).node.facts, [])
    started = node.get("started") if isinstance(node, dict) else None
    boot = facts.get("boot_time") if isinstance(facts, dict) else None
    kept, others = job_kernel_events(_text(path, skipped), host.host, str(path), pids,
                                     float(started) if isinstance(started, (int, float)) else None,
                                     float(boot) if isinstance(boot, (int, float)) else None)
    return kept, others


def _load_rank(host: HostPaths, rank: int, bundle: Path | None, manifest: Manifest | None,
               skipped: list[str], events: list[Event], crashes: list[CrashRecord],
               use_gdb: bool = True) -> RankEvidence:
    paths = host.rank(rank)
    worker = _json(paths.worker, skipped) or {}
    evidence: list[str] = [str(p) for p in (paths.worker, paths.output, paths.faulthandler, paths.exit)
                           if p.is_file()]
    base = _trace(paths, rank, bundle, host.host, skipped, evidence)
    if base is not None and not base.collectives and _recorder_note(paths, skipped):
        base = None     # an empty dump of a Flight Recorder that was off: nothing recorded, nothing matched
    threads = _threads(paths, bundle, rank, skipped, evidence)
    unread = None if threads else _stack_unread(manifest, rank)
    exit_info = _exit(paths, skipped)
    scan = LogScan()
    tails: list[str] = []
    for log in (paths.output, paths.nccl):
        if log.is_file():
            text = _text(log, skipped)
            scan_log_text(text, str(log), scan, default_rank=rank)
            tails += text.splitlines()[-LOG_TAIL_LINES:] if log == paths.output else []
    full = disk_full_note(tails)
    if full is not None:
        events.append(Event(EventKind.DISK_FULL, full, rank=rank, host=host.host, evidence=(str(paths.output),)))
    events.extend(e for e in scan.events if e.kind is not EventKind.EXCEPTION)
    exit_info = with_log_failure(exit_info, scan, rank)      # the log path's own reading of the rank's lines
    if use_gdb and exit_info is not None and exit_info.signal is not None and bundle is not None:
        crashes.extend(_gdb_record(BundlePaths(bundle).rank(rank).gdb, rank, host.host, exit_info, "\n".join(tails),
                                   skipped))
    colls = base.collectives if base else tuple(scan.collectives.get(rank, ()))
    alive = _alive(manifest, rank)
    return RankEvidence(
        rank=rank, host=str(worker.get("host") or host.host), pid=_int(worker.get("pid")) or _pid(manifest, rank),
        world_size=_int(worker.get("world_size")) or (base.world_size if base else None) or scan.world_size,
        collectives=colls, has_trace=base is not None or bool(colls),
        trace_at_exit=base.trace_at_exit if base else False, groups=base.groups if base else (),
        stack=tuple(f"{f.filename}:{f.line} in {f.function}" for t in threads if t.is_main for f in t.frames),
        stack_top=stack_top(threads) if threads else None,
        in_collective=(waiting_in_collective(threads) is not None) if threads else None,
        stack_collective=waiting_in_collective(threads) if threads else None, alive=alive, exit=exit_info,
        evidence=tuple(sorted(evidence, key=_evidence_rank)), stack_unread=unread,
    )


_STACK_COLLECTORS = ("pyspy", "pystack", "gdb")
_UNREAD = (CollectorStatus.FAILED, CollectorStatus.TIMEOUT, CollectorStatus.DENIED, CollectorStatus.MISSING)


def _stack_unread(manifest: Manifest | None, rank: int) -> str | None:
    """Why a sampled rank has no stack: its stack collectors' failures as the bundle's manifest records them
    (None: no collector tried, so the rank was not sampled). triage's own failure to read a rank never makes
    the rank missing."""
    if manifest is None:
        return None
    tried = [c for c in manifest.collectors if c.rank == rank and c.name in _STACK_COLLECTORS]
    failed = [c for c in tried if c.status in _UNREAD]
    if not failed:
        return None
    reasons = []
    for record in failed:
        first = (record.error or "").strip().splitlines()
        said = first[0].split(" Stack backtrace:", 1)[0][:160] if first else ""   # py-spy's Rust backtrace: noise
        reasons.append(f"{record.name} {record.status.value}" + (f" ({said})" if said else ""))
    return "; ".join(reasons)


_BUNDLE_RANK, _RANK = BundlePaths(Path("b")).rank(0), RankPaths(Path("r"))   # only their file names are used
_EVIDENCE_ORDER = tuple(p.name for p in (_BUNDLE_RANK.fr_json, _BUNDLE_RANK.fr_pickle, _RANK.fr_exit, _RANK.heartbeat,
                                          _BUNDLE_RANK.pyspy_json, _BUNDLE_RANK.stacks, _BUNDLE_RANK.pystack,
                                          _RANK.faulthandler, _RANK.exit,
                                          _RANK.output, _RANK.nccl, _RANK.worker))


def _evidence_rank(path: str) -> tuple[int, str]:
    name = Path(path).name
    return (_EVIDENCE_ORDER.index(name) if name in _EVIDENCE_ORDER else len(_EVIDENCE_ORDER), path)


def _trace(paths: RankPaths, rank: int, bundle: Path | None, host: str, skipped: list[str],
           evidence: list[str]) -> RankEvidence | None:
    """The newest Flight Recorder we have: the bundle's fr.json/fr.pickle, else fr-exit.json."""
    candidates: list[tuple[Path, bool]] = []
    if bundle is not None:
        files = BundlePaths(bundle).rank(rank)
        candidates += [(files.fr_json, False), (files.fr_pickle, False)]
    candidates.append((paths.fr_exit, True))
    for path, at_exit in candidates:
        if not path.is_file():
            continue
        try:
            dump = load_fr_file(path, rank)
        except InputError as exc:
            skipped.append(exc.one_line())
            continue
        evidence.append(str(path))
        return fr_rank_evidence(dump, rank, str(path), host=host, at_exit=at_exit)
    return _heartbeat_trace(paths, rank, host, skipped, evidence)


def _heartbeat_trace(paths: RankPaths, rank: int, host: str, skipped: list[str],
                     evidence: list[str]) -> RankEvidence | None:
    """Without a dump, the last heartbeat still tells which collective the rank waits in (its
    in-flight FR entries), or that it waits in none."""
    beat = _json(paths.heartbeat, skipped)
    if not isinstance(beat, dict) or beat.get("fr_state") != "ok" or not isinstance(beat.get("fr"), dict):
        return None
    dump = parse_fr_json(beat["fr"], rank, str(paths.heartbeat))
    evidence.append(str(paths.heartbeat))
    return fr_rank_evidence(dump, rank, str(paths.heartbeat), host=host)


def _threads(paths: RankPaths, bundle: Path | None, rank: int, skipped: list[str],
             evidence: list[str]) -> tuple[ThreadStack, ...]:
    if bundle is not None:
        files = BundlePaths(bundle).rank(rank)
        data = _json(files.pyspy_json, skipped)
        if data is not None:
            evidence.append(str(files.pyspy_json))
            return parse_pyspy_json(data)
        stacks = files.stacks
        if stacks.is_file():
            evidence.append(str(stacks))
            return parse_faulthandler(_text(stacks, skipped))
        if files.pystack.is_file():            # py-spy could not read the rank; pystack did
            threads = thread_stacks(parse_pyframes(_text(files.pystack, skipped)))
            if threads:
                evidence.append(str(files.pystack))
                return threads
    return ()


def _exit(paths: RankPaths, skipped: list[str]) -> ExitInfo | None:
    data = _json(paths.exit, skipped)
    fatal = None
    if paths.faulthandler.is_file():
        fatal = parse_faulthandler_signal(_text(paths.faulthandler, skipped))
    if fatal:
        sig = _FAULT_SIGNALS.get(fatal.lower())
        # no time: faulthandler prints none, and file times do not survive copies
        return ExitInfo(signal=int(sig) if sig else None, signal_name=sig.name if sig else fatal,
                        message=f"Fatal Python error: {fatal}", evidence=(str(paths.faulthandler),))
    if not isinstance(data, dict):
        return None
    exc = data.get("exception") if isinstance(data.get("exception"), dict) else None
    message = f"{exc.get('type')}: {exc.get('message') or ''}".strip().rstrip(":") if exc else None
    code = _int(data.get("exit_code"))
    if exc and exc.get("type") == "KeyboardInterrupt" and exc.get("module") in (None, "builtins") and code == 130:
        # CPython ends a process whose KeyboardInterrupt went unhandled by SIGINT: what its parent sees
        raised = exc.get("time")
        return ExitInfo(signal=int(_signal.SIGINT), signal_name="SIGINT",
                        time=float(raised) if isinstance(raised, (int, float)) else None,
                        message=INTERRUPTED, evidence=(str(paths.exit),))
    if code is None and exc:
        code = 1
    arg = data.get("exit_arg")
    if not exc and isinstance(arg, str) and arg:
        message = f"sys.exit({arg[:200]!r})"
    elif not exc and isinstance(arg, int) and not isinstance(arg, bool):
        message = f"sys.exit({arg}): the parent sees exit code {code}"
    caught = data.get("caught") if isinstance(data.get("caught"), dict) else None
    if caught and not exc and code == 0:
        given = caught.get("exit_arg") if caught.get("exit_arg") is not None else caught.get("exit_code")
        shown = repr(given[:200]) if isinstance(given, str) else str(_int(given))
        message = f"exit code 0: the program caught its sys.exit({shown}) and went on"
    unseen = "exit_seen" in data and data.get("exit_seen") is None and not exc
    when: Any = data.get("time")
    if exc and isinstance(exc.get("time"), (int, float)):
        when = exc["time"]
    return ExitInfo(exit_code=code, time=float(when) if isinstance(when, (int, float)) else None,
                    message=message[:300] if message else None, evidence=(str(paths.exit),), code_unseen=unseen)


def _core_records(host: HostPaths) -> list[CrashRecord]:
    """Cores the core collector left in any bundle of this host (classified by analysis)."""
    out: list[CrashRecord] = []
    for bundle in host.bundles():
        for output in bundle_core_outputs(bundle):
            rank = output.info.get("rank")
            out.append(core_record(output, rank if isinstance(rank, int) else None, output.host or host.host))
    return out


def _gdb_record(gdb: Path, rank: int, host: str, info: ExitInfo, log_tail: str,
                skipped: list[str]) -> tuple[CrashRecord, ...]:
    """gdb's output on a rank that crashed (taken by the agent right after the crash), with what the
    tail of the rank's output.log says about it."""
    if not gdb.is_file():
        return ()
    return (live_gdb_record(_text(gdb, skipped), str(gdb), rank, host, signal_name=info.signal_name, time=info.time,
                            log_text=log_tail),)


def _alive(manifest: Manifest | None, rank: int) -> bool | None:
    for item in manifest.ranks if manifest else ():
        if item.rank == rank:
            return item.alive
    return None


def _pid(manifest: Manifest | None, rank: int) -> int | None:
    for item in manifest.ranks if manifest else ():
        if item.rank == rank:
            return item.pid
    return None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
