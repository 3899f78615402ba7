"""`triage collect`: gather node bundles from every node of a job and report on them.

- ``--job J``: a SLURM job; nodes from squeue/scontrol; on each node ``srun --jobid J --overlap``.
- ``--hosts h1,h2``: SSH (paramiko, known_hosts + RejectPolicy, ~/.ssh/config).
- ``--node-side``: the part that runs on a node (started by the two modes above).

The command parses, makes one call (:func:`triage.remote.collect.collect`, or
:func:`triage.remote.node_side.serve` on a node), then renders: the nodes' outcomes and the report.
"""

from __future__ import annotations

import argparse
import math
import re
import shlex
import sys
from pathlib import Path

from triage.cli.report import show_report
from triage.collectors.redact import set_redaction
from triage.config import add_arguments, options_of, settings_from
from triage.console import say
from triage.errors import RemoteError, UsageError
from triage.exitcodes import ExitCode
from triage.options import CollectSettings
from triage.remote.collect import Collected, CollectPlan, collect
from triage.remote.names import parse_hosts, parse_pids, validate_job_id
from triage.remote.node_side import NodeRequest, private_out_dir, serve
from triage.remote.ssh import SshOptions
from triage.report import build_report

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
        ssh = SshOptions(config_file=args.ssh_config, known_hosts=tuple(args.known_hosts),
                         connect_timeout=args.connect_timeout)
        plan = CollectPlan(job_id=validate_job_id(args.job) if args.job else None,
                           hosts=tuple(parse_hosts(args.hosts)) if not args.job else (),
                           run_dir=Path(args.run_dir) if args.run_dir is not None else None,
                           remote_triage=remote, node_args=_node_args(args), timeout_s=args.timeout,
                           shared=args.shared, ssh=ssh, fanout=args.fanout, progress=not args.no_progress)
        return _finish(args, collect(plan, say))


def _check_numbers(args: argparse.Namespace) -> None:
    """NaN, infinities and negative durations are refused (NaN would compare False and disable a bound)."""
    for flag, value, minimum in (("--timeout", args.timeout, 0.1), ("--connect-timeout", args.connect_timeout, 0.1)):
        if not math.isfinite(value) or value < minimum:
            raise UsageError(f"{flag} {value}: must be a finite number >= {minimum:g}")
    if args.width is not None and not 20 <= args.width <= 10000:
        raise UsageError(f"--width {args.width}: must be between 20 and 10000 columns")


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


def _finish(args: argparse.Namespace, collected: Collected) -> int:
    outcomes = collected.outcomes
    good = [o for o in outcomes if o.ok]
    for outcome in outcomes:
        if outcome.ok:
            say(f"{outcome.node}: bundle {outcome.bundle} ({outcome.duration_s:.1f} s, {outcome.bytes_moved} bytes)")
        else:
            say(f"{outcome.node}: no bundle: {outcome.error}")
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
    say(f"bundles in {', '.join(str(d) for d in collected.report_dirs)}")
    if args.no_report:
        return int(ExitCode.OK)
    inputs = [str(d) for d in collected.report_dirs]
    return show_report(build_report(inputs), inputs, args.format, args.width)


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
    serve(request, args.stream, temporary)
    return int(ExitCode.OK)
