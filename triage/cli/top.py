"""`triage top RUN_DIR`: every rank of a `triage launch` job at a glance, refreshed every second.

Reads the run directory only (heartbeats, exit records, Flight Recorder dumps): it never
signals, connects to or writes anything of the job, so it runs from a login node on a shared
run directory. ``--once`` prints one snapshot (text or ``--format json``) and exits.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from triage.console import terminal_safe
from triage.errors import UsageError
from triage.exitcodes import ExitCode
from triage.top.render import snapshot_json, snapshot_table
from triage.top.snapshot import LagCache, Limits, take_snapshot


class TopCommand:
    name = "top"
    help = ("show every rank of a running job at a glance (state, step, collective, heartbeat, arrival lag), "
            "from its run directory")

    def prepare_parser(self, parser: argparse.ArgumentParser) -> None:
        parser.epilog = "exit codes: 0 shown, 2 bad input"
        parser.add_argument("run_dir", metavar="RUN_DIR", help="the --run-dir of a `triage launch`")
        parser.add_argument("--once", action="store_true", help="print one snapshot and exit")
        parser.add_argument("--format", choices=("text", "json"), default="text",
                            help="with --once: text (default) or json")
        parser.add_argument("--interval", type=float, default=1.0, help="seconds between refreshes (default 1)")
        parser.add_argument("--stuck-after", type=float, default=Limits.stuck_after,
                            help=f"seconds in one collective shown as stuck (default {Limits.stuck_after:g})")
        parser.add_argument("--stale-after", type=float, default=Limits.stale_after,
                            help=f"seconds without a heartbeat shown as no_heartbeat (default {Limits.stale_after:g})")
        parser.add_argument("--width", type=int, help="terminal width for the text view")

    def run(self, args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
        if not 0.2 <= args.interval <= 3600:
            raise UsageError(f"--interval {args.interval}: must be between 0.2 and 3600 seconds")
        if args.width is not None and not 20 <= args.width <= 10000:
            raise UsageError(f"--width {args.width}: must be between 20 and 10000 columns")
        if args.stuck_after <= 0 or args.stale_after <= 0:
            raise UsageError("--stuck-after and --stale-after must be positive")
        if args.format == "json" and not args.once:
            raise UsageError("--format json needs --once (the live view is text)")
        limits = Limits(args.stuck_after, args.stale_after)
        run_dir = Path(args.run_dir)
        from rich.console import Console

        console = Console(width=args.width) if args.width else Console()
        snapshot, cache = take_snapshot(run_dir, time.time(), limits)
        if args.once:
            if args.format == "json":
                json.dump(snapshot_json(snapshot), sys.stdout, indent=1)
                sys.stdout.write("\n")
            else:
                console.print(snapshot_table(terminal_safe(snapshot)))
            print(f"next: triage report {args.run_dir}", file=sys.stderr)
            return int(ExitCode.OK)
        return _live(run_dir, limits, args.interval, console, cache)


def _live(run_dir: Path, limits: Limits, interval: float, console: object, cache: LagCache) -> int:
    from rich.console import Console
    from rich.live import Live

    if not isinstance(console, Console):
        raise TypeError("internal error: the live view needs a rich Console")
    snapshot, cache = take_snapshot(run_dir, time.time(), limits, cache)
    try:
        with Live(snapshot_table(terminal_safe(snapshot)), console=console, refresh_per_second=4, screen=False) as live:
            while True:
                time.sleep(interval)
                snapshot, cache = take_snapshot(run_dir, time.time(), limits, cache)
                live.update(snapshot_table(terminal_safe(snapshot)))
    except KeyboardInterrupt:
        pass
    print(f"next: triage report {run_dir}", file=sys.stderr)
    return int(ExitCode.OK)
