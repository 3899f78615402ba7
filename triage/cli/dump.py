"""`triage dump`: collect a node bundle now, from a running `triage launch` or from any process.

The command parses, makes one call (:func:`triage.dump.run.dump`) and prints its bundles.

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
import re
from pathlib import Path

from triage.collectors.redact import set_redaction
from triage.config import add_arguments, options_of, settings_from
from triage.console import say
from triage.dump.run import DEFAULT_WAIT_S, DumpRequest, DumpResult, dump
from triage.errors import InputError, UsageError
from triage.exitcodes import ExitCode
from triage.layout import RunPaths
from triage.options import CollectSettings

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
        run_dir = args.run_dir or args.run_dir_arg
        if run_dir is None and not (args.pid or args.match) and RunPaths(Path.cwd()).is_run_dir():
            run_dir = Path.cwd()
        if run_dir is None and not (args.pid or args.match):
            raise UsageError("nothing to dump: give --run-dir DIR, --pid PID or --match REGEX",
                             hint="`triage dump --run-dir triage-runs/JOB` for a job started by `triage launch`")
        request = DumpRequest(run_dir=Path(run_dir) if run_dir is not None else None, pids=tuple(args.pid or ()),
                              match=args.match, out=args.out, reason=args.reason, wait_s=args.wait,
                              options=options, all_users=args.all_users)
        return _render(dump(request, say), args.wait)


def _render(result: DumpResult, wait_s: float) -> int:
    for bundle in result.bundles:
        print(bundle)
    if result.missing:
        say(f"no bundle from {', '.join(result.missing)} after {wait_s:.0f} s")
    if not result.bundles:
        return int(ExitCode.TOOL_FAILURE)
    say(f"next: triage report {result.report_on}")
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
