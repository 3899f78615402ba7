"""`triage collect`: gather node bundles from every node of a job and report on them.

- ``--job J``: a SLURM job; nodes from squeue/scontrol; on each node ``srun --jobid J --overlap``.
- ``--hosts h1,h2``: SSH (paramiko, known_hosts + RejectPolicy, ~/.ssh/config).
- ``--node-side``: the part that runs on a node (started by the two modes above).
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import re
import shlex
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from triage.collectors.redact import set_redaction
from triage.config import add_arguments, options_of, settings_from
from triage.errors import RemoteError, UsageError
from triage.exitcodes import ExitCode
from triage.layout import RunPaths
from triage.options import CollectSettings
from triage.private_files import write_json_atomic
from triage.remote.fanout import NodeOutcome, fan_out
from triage.remote.gather import GatherPlan, srun_worker, ssh_worker
from triage.remote.names import parse_hosts, parse_pids, validate_job_id
from triage.remote.node_side import NodeRequest, collect_here, emit, private_out_dir
from triage.remote.slurm import JobNotCollectable, find_job
from triage.remote.ssh import SshOptions
from triage.schemas import COLLECT_SCHEMA, RUN_LAYOUT

DEFAULT_FANOUT = 32
DEFAULT_NODE_TIMEOUT_S = 120.0
# the collection settings `triage collect` takes as flags and passes to every node (triage.options)
COLLECT_OPTIONS = options_of(CollectSettings, ("strace_seconds", "collector_timeout"))


class CollectCommand:
    name = "collect"
    help = "collect node bundles from every node of a SLURM job (--job) or SSH hosts (--hosts), then report"

    def prepare_parser(self, parser: argparse.ArgumentParser) -> None:
        where = parser.add_mutually_exclusive_group()
        where.add_argument("--job", metavar="JOBID", help="a running SLURM job (srun --overlap on each node)")
        where.add_argument("--hosts", metavar="H1,H2", help="comma-separated SSH hosts ([user@]host, ~/.ssh/config)")
        parser.add_argument("--node-side", action="store_true", help=argparse.SUPPRESS)
        parser.add_argument("--run-dir", type=Path,
                            help="local directory for the bundles and the report (default ./triage-collect-...)")
        parser.add_argument("--job-run-dir", type=Path,
                            help="the job's run directory on the nodes (default: found from the ranks' environment)")
        parser.add_argument("--shared", action="store_true",
                            help="the nodes' run directory is visible here: read bundles there, do not stream")
        parser.add_argument("--pids", metavar="P1,P2", help="collect only these pids (on every node)")
        parser.add_argument("--match", metavar="REGEX", help="collect only Python ranks whose command line matches")
        parser.add_argument("--all-users", action="store_true",
                            help="(root) also collect other users' processes; by default only your own")
        parser.add_argument("--no-redact", action="store_true",
                            help="keep secret-looking values in what the collectors write (for debugging)")
        parser.add_argument("--fanout", type=int, default=DEFAULT_FANOUT,
                            help=f"nodes collected at the same time (default {DEFAULT_FANOUT})")
        parser.add_argument("--timeout", type=float, default=DEFAULT_NODE_TIMEOUT_S,
                            help=f"seconds per node, connection included (default {DEFAULT_NODE_TIMEOUT_S:.0f})")
        parser.add_argument("--remote-triage", default="triage", metavar="CMD",
                            help="how to run triage on the nodes "
                                 "(default `triage`; e.g. '/opt/venv/bin/python -m triage')")
        parser.add_argument("--ssh-config", type=Path, help="ssh client config (default ~/.ssh/config)")
        parser.add_argument("--known-hosts", type=Path, action="append", default=[],
                            help="known_hosts file (repeatable; default ~/.ssh/known_hosts, /etc/ssh/ssh_known_hosts)")
        parser.add_argument("--connect-timeout", type=float, default=10.0, help="SSH connect timeout (s)")
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")
        parser.add_argument("--no-report", action="store_true", help="gather the bundles, do not run the report")
        parser.add_argument("--format", choices=("text", "json", "html"), default="text", help="report format")
        parser.add_argument("--width", type=int, help="terminal width of the text report")
        add_arguments(parser, COLLECT_OPTIONS, config_file=False)
        parser.add_argument("--stream", action=argparse.BooleanOptionalAction, default=True, help=argparse.SUPPRESS)
        parser.add_argument("--out-dir", type=Path, help=argparse.SUPPRESS)

    def run(self, args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
        _check_numbers(args)
        if args.node_side:
            return _node_side(args)
        if not args.job and not args.hosts:
            raise UsageError("say where to collect: --job JOBID (SLURM) or --hosts h1,h2 (SSH)")
        if args.fanout < 1 or args.timeout <= 0:
            raise UsageError("--fanout must be >= 1 and --timeout > 0")
        remote = tuple(shlex.split(args.remote_triage))
        if not remote:
            raise UsageError("--remote-triage is empty")
        plan_args = _node_args(args)
        if args.job:
            job = find_job(validate_job_id(args.job))
            nodes: list[str] = list(job.nodes)
            run_dir = _run_dir(args, f"job{job.job_id}")
            plan = _plan(args, run_dir, remote, plan_args)
            _say(f"job {job.job_id} ({job.state}) on {len(nodes)} node(s): {', '.join(nodes)}")
            worker = srun_worker(plan, job.job_id)
            run_id = job.job_id
        else:
            nodes = parse_hosts(args.hosts)
            run_dir = _run_dir(args, "hosts")
            plan = _plan(args, run_dir, remote, plan_args)
            worker = ssh_worker(plan)
            run_id = run_dir.name
        started = time.monotonic()
        existed = run_dir.exists()
        outcomes = fan_out(nodes, worker, args.fanout, progress=not args.no_progress)
        elapsed = time.monotonic() - started
        if args.job and not any(o.ok for o in outcomes):
            _ended_meanwhile(args.job, run_dir, existed)
        report_dirs = _record(run_dir, run_id, outcomes, elapsed, args.shared)
        return _finish(args, outcomes, report_dirs)


def _ended_meanwhile(job_id: str, run_dir: Path, existed: bool) -> None:
    """No node answered: if the job ended (or is ending) meanwhile, say so (exit 2) and leave no
    empty directory behind."""
    try:
        find_job(job_id)
    except JobNotCollectable:
        if not existed:
            with contextlib.suppress(OSError):
                for path in sorted(run_dir.rglob("*"), key=lambda p: len(p.parts), reverse=True):
                    if path.is_dir():
                        path.rmdir()          # only empty directories: never a byte collected
                run_dir.rmdir()
        raise


def _check_numbers(args: argparse.Namespace) -> None:
    """NaN, infinities and negative durations are refused (NaN would compare False and disable a bound)."""
    for flag, value, minimum in (("--timeout", args.timeout, 0.1), ("--connect-timeout", args.connect_timeout, 0.1)):
        if not math.isfinite(value) or value < minimum:
            raise UsageError(f"{flag} {value}: must be a finite number >= {minimum:g}")
    if args.width is not None and not 20 <= args.width <= 10000:
        raise UsageError(f"--width {args.width}: must be between 20 and 10000 columns")


def _say(text: str) -> None:
    print(f"triage: {text}", file=sys.stderr, flush=True)


def _node_args(args: argparse.Namespace) -> tuple[str, ...]:
    settings = settings_from(CollectSettings, COLLECT_OPTIONS, vars(args))
    out: list[str] = ["--strace-seconds", str(settings.strace_seconds),
                      "--collector-timeout", str(settings.collector_timeout)]
    if args.job:
        out += ["--job", validate_job_id(args.job)]
    if args.job_run_dir:
        out += ["--job-run-dir", str(args.job_run_dir)]
    if args.pids:
        out += ["--pids", ",".join(str(p) for p in parse_pids(args.pids))]
    if args.all_users:
        out.append("--all-users")
    if args.no_redact:
        out.append("--no-redact")
    if args.match:
        try:
            re.compile(args.match)
        except re.error as error:
            raise UsageError(f"--match {args.match!r} is not a valid regular expression: {error}") from None
        out += ["--match", args.match]
    return tuple(out)


def _run_dir(args: argparse.Namespace, label: str) -> Path:
    if args.run_dir is not None:
        return Path(args.run_dir)
    return Path.cwd() / time.strftime(f"triage-collect-{label}-%Y%m%dT%H%M%S", time.gmtime())


def _plan(args: argparse.Namespace, run_dir: Path, remote: tuple[str, ...], node_args: tuple[str, ...]) -> GatherPlan:
    ssh = SshOptions(config_file=args.ssh_config, known_hosts=tuple(args.known_hosts),
                     connect_timeout=args.connect_timeout)
    return GatherPlan(run_dir=run_dir, remote_triage=remote, node_args=node_args, timeout_s=args.timeout,
                      shared=args.shared, ssh=ssh)


def _record(run_dir: Path, run_id: str, outcomes: Sequence[NodeOutcome], elapsed: float, shared: bool) -> list[Path]:
    """Write run.json (if new) and collect.json; return the run directories to report on."""
    run = RunPaths(run_dir)
    if not run.is_run_dir():
        write_json_atomic(run.run_json, {"layout": RUN_LAYOUT, "job_id": run_id, "created": time.time(),
                                         "hosts": [o.node for o in outcomes], "collected": True})
    nodes: dict[str, Any] = {
        o.node: {"ok": o.ok, "bundle": str(o.bundle) if o.bundle else None, "error": o.error,
                 "seconds": round(o.duration_s, 3), "bytes": o.bytes_moved}
        for o in outcomes}
    write_json_atomic(run_dir / "collect.json", {"schema": COLLECT_SCHEMA, "elapsed_s": round(elapsed, 3),
                                                 "nodes": nodes, "missing": [o.node for o in outcomes if not o.ok]})
    dirs = [run_dir]
    if shared:
        dirs = sorted({o.bundle.parent.parent.parent for o in outcomes if o.bundle is not None}) or [run_dir]
    return dirs


def _finish(args: argparse.Namespace, outcomes: Sequence[NodeOutcome], report_dirs: list[Path]) -> int:
    good = [o for o in outcomes if o.ok]
    for outcome in outcomes:
        if outcome.ok:
            _say(f"{outcome.node}: bundle {outcome.bundle} ({outcome.duration_s:.1f} s, {outcome.bytes_moved} bytes)")
        else:
            _say(f"{outcome.node}: no bundle: {outcome.error}")
    if not good:
        raise RemoteError(f"no node could be collected ({', '.join(o.node for o in outcomes)})")
    missing = [o for o in outcomes if not o.ok]
    if missing:
        # Above the report on stdout for text; on stderr for json/html so their output stays parseable.
        stream = sys.stdout if args.format == "text" else sys.stderr
        names = ", ".join(o.node for o in missing)
        print(f"triage collect: PARTIAL report: no bundle from {len(missing)} of {len(outcomes)} node(s): {names}",
              file=stream, flush=True)
        for outcome in missing:
            print(f"  missing node {outcome.node}: {outcome.error}", file=stream, flush=True)
    _say(f"bundles in {', '.join(str(d) for d in report_dirs)}")
    if args.no_report:
        return int(ExitCode.OK)
    from triage.cli import main as triage_main

    code = triage_main(["report", *_report_flags(args), *(str(d) for d in report_dirs)])
    return code


def _report_flags(args: argparse.Namespace) -> list[str]:
    flags = ["--format", args.format]
    if args.width:
        flags += ["--width", str(args.width)]
    return flags


def _node_side(args: argparse.Namespace) -> int:
    set_redaction(not args.no_redact)
    options = settings_from(CollectSettings, COLLECT_OPTIONS, vars(args))
    job = validate_job_id(args.job) if args.job else None
    if args.match:
        _node_args(args)               # checks the regular expression
    temporary = private_out_dir(job or "node") if args.out_dir is None else None
    request = NodeRequest(job_id=job, run_dir=args.job_run_dir, out_dir=args.out_dir or temporary,
                          pids=tuple(parse_pids(args.pids)) if args.pids else (), match=args.match,
                          reason="triage collect" + (f" --job {job}" if job else ""), options=options,
                          wait_s=max(10.0, args.timeout / 2), all_users=args.all_users)
    # stdout carries the bundle: while collecting, fd 1 points at stderr so nothing else lands in it.
    sys.stdout.flush()
    real_stdout = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    try:
        run_dir, bundle = collect_here(request)
        sent = False
        with contextlib.suppress(BrokenPipeError):
            emit(run_dir, bundle, args.stream, real_stdout)
            sent = True
        if temporary is not None and (run_dir != temporary or (sent and args.stream)):
            shutil.rmtree(temporary, ignore_errors=True)   # our private temporary copy: unused or streamed
    finally:
        with contextlib.suppress(BrokenPipeError):
            real_stdout.close()
    return int(ExitCode.OK)
