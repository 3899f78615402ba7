"""`triage dump`: collect a node bundle now, from a running `triage launch` or from any process.

- ``RUN_DIR`` / ``--run-dir DIR``: ask every running agent of that run (a request file in each
  ``<host>/dump-requests/``; agents on other nodes see it through the shared run dir), wait for
  their bundles and print them. If no agent is running but the run's ranks are alive on this
  node, collect from them directly.
- ``--pid PID...`` / ``--match REGEX``: no agent; collect standalone from those processes (or the
  Python processes whose command line matches and whose environment has RANK/SLURM_PROCID)
  into a new run-dir-shaped directory (``--out``), readable by ``triage report``.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from triage.bundle import Trigger
from triage.collectors.common import Target, may_touch, process_alive
from triage.collectors.discover import find_matching, find_ranks, foreign_pids, targets_for_pids
from triage.collectors.node_bundle import JobInfo, collect_node_bundle
from triage.collectors.redact import set_redaction
from triage.config import add_arguments, options_of, settings_from
from triage.errors import InputError, UsageError
from triage.exitcodes import ExitCode
from triage.layout import HostPaths, RunPaths, short_hostname
from triage.options import CollectSettings
from triage.private_files import check_private_dir, read_json, write_json_atomic
from triage.schemas import RUN_LAYOUT

DEFAULT_WAIT_S = 120.0
# the collection settings `triage dump` takes as flags (defaults and checks from triage.options)
COLLECT_OPTIONS = options_of(CollectSettings, ("gdb", "strace_seconds", "pyspy_native", "collector_timeout"))


class DumpCommand:
    name = "dump"
    help = "collect evidence (stacks, Flight Recorder, strace, ...) from a running job now"

    def prepare_parser(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("run_dir_arg", nargs="?", type=Path, metavar="RUN_DIR",
                            help="same as --run-dir")
        where = parser.add_mutually_exclusive_group()
        where.add_argument("--run-dir", type=Path, help="run directory of a `triage launch` (ask its agents)")
        where.add_argument("--pid", type=parse_pid, nargs="+", metavar="PID", help="collect from these processes")
        where.add_argument("--match", metavar="REGEX",
                           help="collect from Python rank processes whose command line matches")
        parser.add_argument("--out", type=Path, help="where standalone bundles go (default ./triage-dump-TIME)")
        parser.add_argument("--reason", default="", help="one line saved in the bundle manifest")
        parser.add_argument("--wait", type=float, default=DEFAULT_WAIT_S,
                            help=f"seconds to wait for the agents' bundles (default {DEFAULT_WAIT_S:.0f})")
        add_arguments(parser, COLLECT_OPTIONS, config_file=False)
        parser.add_argument("--all-users", action="store_true",
                            help="(root) also adopt other users' processes; by default only your own")
        parser.add_argument("--no-redact", action="store_true",
                            help="keep secret-looking values in what the collectors write (for debugging)")

    def run(self, args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
        check_number("--wait", args.wait, minimum=0.0)
        if args.match is not None:
            try:
                re.compile(args.match)
            except re.error as error:
                raise UsageError(f"--match {args.match!r} is not a valid regular expression: {error}") from None
        if args.out is not None and (args.out.exists() or args.out.is_symlink()) and not args.out.is_dir():
            raise InputError(f"--out {args.out}: exists and is not a directory",
                             hint="give a new directory name (or an earlier `triage dump` directory)")
        set_redaction(not args.no_redact)
        options = settings_from(CollectSettings, COLLECT_OPTIONS, vars(args))
        if args.run_dir_arg is not None and (args.pid or args.match or args.run_dir):
            raise UsageError("give the run directory either as RUN_DIR or --run-dir, and not with --pid/--match")
        if args.pid or args.match:
            return _standalone(args, options)
        run_dir = args.run_dir or args.run_dir_arg
        if run_dir is None and RunPaths(Path.cwd()).is_run_dir():
            run_dir = Path.cwd()
        if run_dir is None:
            raise UsageError("nothing to dump: give --run-dir DIR, --pid PID or --match REGEX",
                             hint="`triage dump --run-dir triage-runs/JOB` for a job started by `triage launch`")
        return _from_run_dir(Path(run_dir), args, options)


def _say(text: str) -> None:
    print(f"triage: {text}", file=sys.stderr, flush=True)


def _running_agents(run: RunPaths) -> list[HostPaths]:
    agents = []
    for host in run.hosts():
        try:
            node: Any = read_json(host.node)
        except (OSError, ValueError):
            continue
        if not isinstance(node, dict) or node.get("status") != "running":
            continue
        pid = node.get("agent_pid")
        if host.host == short_hostname() and isinstance(pid, int) and not process_alive(pid):
            continue                      # a dead local agent (killed -9): node.json is stale
        agents.append(host)
    return agents


def _from_run_dir(run_dir: Path, args: argparse.Namespace, options: CollectSettings) -> int:
    run = RunPaths(run_dir)
    if not run.is_run_dir():
        raise InputError(f"{run_dir}: not a triage run directory (no run.json)",
                         hint="give the directory `triage launch` printed as `run dir`")
    agents = _running_agents(run)
    if not agents:
        return _standalone_run_dir(run, args, options)
    request = f"{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{uuid.uuid4().hex[:8]}.json"
    reason = args.reason or f"triage dump (pid {os.getpid()})"
    for host in agents:
        write_json_atomic(host.dump_requests / request, {"reason": reason, "time": time.time(),
                                                         "requester_pid": os.getpid()})
    _say(f"asked {len(agents)} agent(s) for a bundle: {', '.join(h.host for h in agents)}")
    bundles, missing = _wait_done(agents, request, args.wait)
    for bundle in bundles:
        print(bundle)
    if missing:
        _say(f"no bundle from {', '.join(missing)} after {args.wait:.0f} s")
    if not bundles:
        return int(ExitCode.TOOL_FAILURE)
    _say(f"next: triage report {run_dir}")
    return int(ExitCode.OK)


def _wait_done(agents: list[HostPaths], request: str, wait: float) -> tuple[list[str], list[str]]:
    deadline = time.monotonic() + wait
    done: dict[str, str | None] = {}
    while len(done) < len(agents) and time.monotonic() < deadline:
        for host in agents:
            marker = host.dump_requests / f"{request}.done"
            if host.host not in done and marker.is_file():
                try:
                    info: Any = read_json(marker)
                except (OSError, ValueError):
                    continue
                done[host.host] = str(info.get("bundle")) if isinstance(info, dict) and info.get("bundle") else None
        time.sleep(0.2)
    bundles = [b for b in done.values() if b]
    missing = [h.host for h in agents if not done.get(h.host)]
    return bundles, missing


def _run_targets(host: HostPaths, all_users: bool = False) -> list[Target]:
    targets = []
    for rank in host.ranks():
        paths = host.rank(rank)
        try:
            info: Any = read_json(paths.worker)
        except (OSError, ValueError):
            continue
        pid = info.get("pid") if isinstance(info, dict) else None
        if isinstance(pid, int) and process_alive(pid) and may_touch(pid, all_users):
            targets.append(Target(rank=rank, pid=pid, local_rank=info.get("local_rank"), paths=paths))
    return targets


def _standalone_run_dir(run: RunPaths, args: argparse.Namespace, options: CollectSettings) -> int:
    host = run.host(short_hostname())
    targets = _run_targets(host, args.all_users)
    if not targets:
        raise InputError(f"{run.root}: no running agent and no live rank on this node",
                         hint=f"the job has ended: `triage report {run.root}`")
    _say(f"no running agent: collecting directly from {len(targets)} rank(s)")
    job_id = str(_read_dict(run.run_json).get("job_id", run.root.name))
    started = _read_dict(host.node).get("started")
    job = JobInfo(job_id=job_id, host=host.host, started=float(started) if started else None, run_dir=run.root)
    bundle = collect_node_bundle(job, targets, Trigger.MANUAL, args.reason or "triage dump (no agent)",
                                 options, host.bundles_dir, extra={"standalone": True})
    print(bundle)
    _say(f"next: triage report {run.root}")
    return int(ExitCode.OK)


def parse_pid(text: str) -> int:
    """A pid argument: a positive integer the kernel can have (argparse turns ValueError into exit 2)."""
    value = int(text)
    if not 0 < value < 1 << 31:           # pid_t
        raise ValueError(text)
    return value


def check_number(flag: str, value: float, minimum: float) -> None:
    if not math.isfinite(value) or value < minimum:
        raise UsageError(f"{flag} {value}: must be a finite number >= {minimum:g}")


def _read_dict(path: Path) -> dict[str, Any]:
    try:
        data: Any = read_json(path)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _standalone(args: argparse.Namespace, options: CollectSettings) -> int:
    if args.pid:
        dead = [p for p in args.pid if not process_alive(p)]
        if dead:
            raise InputError(f"no such process: {' '.join(map(str, dead))}", hint="check the pid with `ps`")
        foreign = foreign_pids(args.pid, args.all_users)
        if foreign:
            raise InputError(f"process {' '.join(map(str, foreign))} belongs to another user",
                             hint="root may collect other users' processes with --all-users")
        targets = targets_for_pids(args.pid)
    else:
        targets = (find_ranks(args.match, all_users=args.all_users)
                   or find_matching(args.match, all_users=args.all_users))
        if not targets:
            raise InputError(f"no Python process matches {args.match!r} on this node",
                             hint="check the pattern with `pgrep -af REGEX`, or give --pid")
    out = args.out or Path.cwd() / time.strftime("triage-dump-%Y%m%dT%H%M%S", time.gmtime())
    host = short_hostname()
    job_id = f"dump-{out.name}"
    run = RunPaths(out)
    if not run.is_run_dir():
        write_json_atomic(run.run_json, {"layout": RUN_LAYOUT, "job_id": job_id, "created": time.time(),
                                         "hosts": [host], "standalone": True})
    check_private_dir(out)
    _say(f"collecting from {len(targets)} process(es): "
         + ", ".join(f"rank {t.rank} pid {t.pid}" for t in targets))
    bundle = collect_node_bundle(JobInfo(job_id=job_id, host=host, run_dir=out), targets, Trigger.MANUAL,
                                 args.reason or "triage dump", options, run.host(host).bundles_dir,
                                 extra={"standalone": True})
    print(bundle)
    _say(f"next: triage report {out}")
    return int(ExitCode.OK)
